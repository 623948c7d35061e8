/* zoekt-replay: a loopback HTTP server that answers like zoekt-webserver, from recorded fixtures.
 *
 * Usage: zoekt-replay --fixtures DIR [--port N] [--port-file FILE]
 *   Binds 127.0.0.1:N (N = 0, the default, picks a free port), writes the bound port to FILE once it
 *   listens (written to FILE.tmp and renamed, so a reader never sees a partial number), and serves
 *   until SIGTERM or SIGINT.
 *
 * Fixtures: DIR/NAME.response.json is a body to replay, with DIR/NAME.status.txt its HTTP status
 * (200 when absent) and DIR/NAME.request.json the request it answers (optional). A fixture whose
 * response has a top-level "List" member answers /api/list; every other one answers /api/search.
 *
 * Matching rule for POST /api/search: the request body's "Q" must equal the fixture request's "Q"
 * exactly, and Opts.ChunkMatches (false when absent) must be equal too. Among several such fixtures the
 * one whose Opts.NumContextLines equals the request's wins, then the first by name. A search that
 * matches no fixture gets the fixture whose name contains "no_results" (Zoekt's answer for no match).
 * POST /api/list replays the first list fixture by name, whatever the request.
 *
 * Magic queries, for failure tests (matched anywhere inside "Q", checked before fixtures):
 *   zk:hang       sends headers, then one space every 100 ms and never completes (until the client
 *                 disconnects or the server stops): a server that does not answer in time
 *   zk:garbage    200 with a body that is not JSON
 *   zk:truncated  200 with the first half of the largest search fixture
 *   zk:huge:N     200 with N MiB of a body that is not JSON, sent chunked (no Content-Length tells the
 *                 client the size in advance): an answer far larger than any search's
 *   zk:500        500 {"Error":"..."}
 *   zk:deadline   500 {"Error":"context deadline exceeded"}, as Zoekt answers when MaxWallTime ran out
 * Anything but POST on a path under /api/ gets 405 {"Error":"Only POST is supported"}, as Zoekt answers.
 * /healthz (any method) answers 200 with a bare SearchResult, as zoekt-webserver does once its shards are
 * loaded (the zoekt-webserver container's liveness probe asks it), and /readyz 200 with an empty body, as
 * zoekt-webserver does once the shards present at its start are loaded (the pod's readiness, through
 * nginx). Other paths get 404. */
#include "buf.h"
#include "json.h"
#include "mem.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPLAY_REQUEST_MAX (1u << 20)
#define REPLAY_FIXTURE_MAX (64u << 20)
/* zoekt-webserver's /healthz body: the result of a match-all search limited to one file, which matches
 * by its name, without the {"Result":...} wrapper (shape from tests/fixtures/zoekt/upstream_healthz.json). */
#define REPLAY_HEALTHZ "{\"Crashes\":0,\"FileCount\":1,\"MatchCount\":1,\"ShardsScanned\":1,\"FlushReason\":0," \
                       "\"Files\":[{\"FileName\":\"README.md\",\"Repository\":\"alpha\",\"LineMatches\":[{\"Line\":" \
                       "\"UkVBRE1FLm1k\",\"LineNumber\":0,\"FileName\":true}],\"Score\":10}]}\n"

struct fixture {
    char *name;
    char *response;
    size_t response_len;
    unsigned status;
    int is_list;
    int has_request;
    char *q;            /* the request's Q, or NULL */
    int chunk_matches;
    long context_lines;
};

struct replay {
    struct fixture *f;
    size_t n;
    volatile sig_atomic_t stopping;
};

static struct replay replay;

static char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    struct buf b;
    char chunk[65536];
    size_t n;

    if (!fp)
        return NULL;
    buf_init(&b, REPLAY_FIXTURE_MAX);
    if (buf_append(&b, "", 0)) {
        fclose(fp);
        return NULL;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
        if (buf_append(&b, chunk, n)) {
            fclose(fp);
            return NULL;
        }
    fclose(fp);
    *len = b.len;
    return buf_steal(&b);
}

static int fixture_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fixture *)a)->name, ((const struct fixture *)b)->name);
}

static int load_fixtures(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t cap = 0;

    if (!d) {
        fprintf(stderr, "zoekt-replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        const char *suffix = ".response.json";
        size_t len = strlen(de->d_name), slen = strlen(suffix), n;
        char path[4096];
        struct fixture *f;
        cJSON *root;
        char *text;

        if (len <= slen || strcmp(de->d_name + len - slen, suffix) != 0)
            continue;
        if (replay.n == cap) {
            struct fixture *v = realloc(replay.f, (cap ? cap * 2 : 32) * sizeof(*v));

            if (!v)
                goto fail;
            replay.f = v;
            cap = cap ? cap * 2 : 32;
        }
        f = &replay.f[replay.n];
        memset(f, 0, sizeof(*f));
        f->name = strndup(de->d_name, len - slen);
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        f->response = read_file(path, &f->response_len);
        if (!f->name || !f->response) {
            fprintf(stderr, "zoekt-replay: cannot read %s\n", path);
            free(f->name);
            free(f->response);
            goto fail;
        }
        replay.n++;
        f->status = 200;
        snprintf(path, sizeof(path), "%s/%s.status.txt", dir, f->name);
        if ((text = read_file(path, &n))) {
            f->status = (unsigned)strtoul(text, NULL, 10);
            free(text);
        }
        root = json_parse(f->response, f->response_len);
        f->is_list = json_obj(root, "List") != NULL;
        cJSON_Delete(root);
        snprintf(path, sizeof(path), "%s/%s.request.json", dir, f->name);
        if ((text = read_file(path, &n))) {
            root = json_parse(text, n);
            f->has_request = root != NULL;
            if (json_str(root, "Q", NULL))
                f->q = strdup(json_str(root, "Q", NULL));
            f->chunk_matches = json_bool(json_obj(root, "Opts"), "ChunkMatches", 0);
            f->context_lines = (long)json_int(json_obj(root, "Opts"), "NumContextLines", 0);
            cJSON_Delete(root);
            free(text);
        }
    }
    closedir(d);
    if (replay.n > 1)
        qsort(replay.f, replay.n, sizeof(*replay.f), fixture_cmp);
    return 0;
fail:
    closedir(d);
    return -1;
}

static void free_fixtures(void)
{
    for (size_t i = 0; i < replay.n; i++) {
        free(replay.f[i].name);
        free(replay.f[i].response);
        free(replay.f[i].q);
    }
    free(replay.f);
}

static const struct fixture *find_search(const char *q, int chunk, long ctx)
{
    const struct fixture *best = NULL;

    for (size_t i = 0; i < replay.n; i++) {
        const struct fixture *f = &replay.f[i];

        if (f->is_list || !f->q || strcmp(f->q, q) != 0 || f->chunk_matches != chunk)
            continue;
        if (f->context_lines == ctx)
            return f;
        if (!best)
            best = f;
    }
    if (best)
        return best;
    for (size_t i = 0; i < replay.n; i++)
        if (strstr(replay.f[i].name, "no_results"))
            return &replay.f[i];
    return NULL;
}

static const struct fixture *find_list(void)
{
    for (size_t i = 0; i < replay.n; i++)
        if (replay.f[i].is_list)
            return &replay.f[i];
    return NULL;
}

static const struct fixture *largest_search(void)
{
    const struct fixture *best = NULL;

    for (size_t i = 0; i < replay.n; i++)
        if (!replay.f[i].is_list && replay.f[i].status == 200 &&
            (!best || replay.f[i].response_len > best->response_len))
            best = &replay.f[i];
    return best;
}

static enum MHD_Result send_bytes(struct MHD_Connection *c, unsigned status, const char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *body)
{
    return send_bytes(c, status, body, strlen(body));
}

/* The body of a request that never completes: a space every 100 ms until the server stops. */
static ssize_t hang_reader(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)cls, (void)pos, (void)max;
    usleep(100 * 1000);
    if (replay.stopping)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    out[0] = ' ';
    return 1;
}

/* The body of zk:huge:N: cls points to the bytes still to send; 'x' up to 64 KiB a call. */
static ssize_t huge_reader(void *cls, uint64_t pos, char *out, size_t max)
{
    unsigned long long *left = cls;
    size_t n = max < 65536 ? max : 65536;

    (void)pos;
    if (*left == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n > *left)
        n = (size_t)*left;
    memset(out, 'x', n);
    *left -= n;
    return (ssize_t)n;
}

static enum MHD_Result send_huge(struct MHD_Connection *c, unsigned long long mib)
{
    unsigned long long *left = mem_alloc(sizeof(*left));
    struct MHD_Response *r;
    enum MHD_Result ret;

    *left = mib << 20;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, huge_reader, left, free);
    if (!r) {
        free(left);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer_search(struct MHD_Connection *c, const struct buf *body)
{
    cJSON *req = json_parse(body->data ? body->data : "", body->len);
    const char *q = json_str(req, "Q", NULL);
    const struct fixture *f;
    enum MHD_Result ret;

    if (!req) {
        cJSON_Delete(req);
        return send_text(c, 400, "{\"Error\":\"EOF\"}\n");
    }
    if (!q || !*q) {
        cJSON_Delete(req);
        return send_text(c, 400, "{\"Error\":\"missing query\"}\n");
    }
    if (strstr(q, "zk:hang")) {
        struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1, hang_reader, NULL, NULL);

        cJSON_Delete(req);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Content-Type", "application/json");
        ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (strstr(q, "zk:garbage")) {
        cJSON_Delete(req);
        return send_text(c, 200, "<html><body>502 Bad Gateway (not Zoekt)</body></html>\n");
    }
    if (strstr(q, "zk:huge:")) {
        unsigned long long mib = strtoull(strstr(q, "zk:huge:") + 8, NULL, 10);

        cJSON_Delete(req);
        return send_huge(c, mib);
    }
    if (strstr(q, "zk:truncated")) {
        cJSON_Delete(req);
        f = largest_search();
        return f ? send_bytes(c, 200, f->response, f->response_len / 2) : send_text(c, 200, "{\"Result\":{");
    }
    if (strstr(q, "zk:deadline")) {
        cJSON_Delete(req);
        return send_text(c, 500, "{\"Error\":\"context deadline exceeded\"}\n");
    }
    if (strstr(q, "zk:502")) { /* what nginx in front of a stopped Zoekt answers */
        cJSON_Delete(req);
        return send_text(c, 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 "
                                 "Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n");
    }
    if (strstr(q, "zk:500")) {
        cJSON_Delete(req);
        return send_text(c, 500, "{\"Error\":\"replay: simulated internal error\"}\n");
    }
    f = find_search(q, json_bool(json_obj(req, "Opts"), "ChunkMatches", 0),
                    (long)json_int(json_obj(req, "Opts"), "NumContextLines", 0));
    cJSON_Delete(req);
    if (!f)
        return send_text(c, 500, "{\"Error\":\"replay: no fixture matches and there is no no_results fixture\"}\n");
    return send_bytes(c, f->status, f->response, f->response_len);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size, void **state)
{
    struct buf *body = *state;
    const struct fixture *f;

    (void)cls, (void)version;
    if (!body) {
        body = calloc(1, sizeof(*body));
        if (!body)
            return MHD_NO;
        buf_init(body, REPLAY_REQUEST_MAX);
        *state = body;
        return MHD_YES;
    }
    if (*upload_size) {
        if (buf_append(body, upload_data, *upload_size))
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/healthz") == 0)
        return send_text(c, 200, REPLAY_HEALTHZ);
    if (strcmp(url, "/readyz") == 0)
        return send_text(c, 200, "");
    if (strncmp(url, "/api/", 5) != 0)
        return send_text(c, 404, "{\"Error\":\"not found\"}\n");
    if (strcmp(method, "POST") != 0)
        return send_text(c, 405, "{\"Error\":\"Only POST is supported\"}\n");
    if (strcmp(url, "/api/search") == 0)
        return answer_search(c, body);
    if (strcmp(url, "/api/list") == 0) {
        f = find_list();
        return f ? send_bytes(c, f->status, f->response, f->response_len)
                 : send_text(c, 500, "{\"Error\":\"replay: no list fixture\"}\n");
    }
    return send_text(c, 404, "{\"Error\":\"not found\"}\n");
}

static void request_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode code)
{
    struct buf *body = *state;

    (void)cls, (void)c, (void)code;
    if (body) {
        buf_free(body);
        free(body);
        *state = NULL;
    }
}

static int write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    FILE *fp;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fp = fopen(tmp, "w");
    if (!fp || fprintf(fp, "%u\n", port) < 0 || fclose(fp) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "zoekt-replay: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: zoekt-replay --fixtures DIR [--port N] [--port-file FILE]\n");
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *port_file = NULL;
    const union MHD_DaemonInfo *info;
    struct sockaddr_in addr;
    struct MHD_Daemon *d;
    unsigned long port = 0;
    sigset_t set;
    int sig, rc = 1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fixtures") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--port-file") == 0 && i + 1 < argc)
            port_file = argv[++i];
        else {
            usage();
            return 2;
        }
    }
    if (!dir || port > 65535) {
        usage();
        return 2;
    }
    if (load_fixtures(dir))
        goto out;

    /* Threads inherit the mask: only the main thread receives SIGTERM and SIGINT, through sigwait. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
                         (uint16_t)port, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &addr,
                         MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "zoekt-replay: cannot listen on 127.0.0.1:%lu\n", port);
        goto out;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = info ? info->port : port;
    fprintf(stderr, "zoekt-replay: %zu fixtures from %s, listening on 127.0.0.1:%lu\n", replay.n, dir, port);
    if (port_file && write_port_file(port_file, (unsigned)port)) {
        MHD_stop_daemon(d);
        goto out;
    }
    while (sigwait(&set, &sig) != 0)
        ;
    replay.stopping = 1;
    MHD_stop_daemon(d);
    rc = 0;
out:
    free_fixtures();
    return rc;
}
