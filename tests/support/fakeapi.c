/* fakeapi.c: see fakeapi.h. libmicrohttpd with a thread per connection, so that a watch stream can
 * block in its reader until the test pushes an event. */
#include "tests/support/fakeapi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "kube/config.h"
#include "mem.h"

#define FAKEAPI_BODY_MAX (256 * 1024)

struct fakeapi_line {
    char *path;
    char *text; /* with its newline */
};

struct fakeapi_seen {
    char *request; /* "METHOD /path" */
    char *body;
};

struct fakeapi {
    struct MHD_Daemon *d;
    char url[64];
    fakeapi_handler_fn *handler;
    void *ud;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stopping;
    struct fakeapi_line *lines;
    size_t nlines;
    struct fakeapi_seen *seen;
    size_t nseen;
};

/* One watch stream: the next pushed line it has not sent, and what is left of the one it is sending. */
struct fakeapi_stream {
    struct fakeapi *f;
    char *path;
    size_t next;
    const char *pending;
    size_t left;
};

/* The body of one request as it arrives. */
struct fakeapi_upload {
    char *data;
    size_t len;
};

static ssize_t fakeapi_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct fakeapi_stream *s = cls;
    struct fakeapi *f = s->f;
    ssize_t n = 0;

    (void)pos;
    pthread_mutex_lock(&f->mu);
    while (!s->left) {
        while (s->next < f->nlines && strcmp(f->lines[s->next].path, s->path) != 0)
            s->next++;
        if (s->next < f->nlines) {
            s->pending = f->lines[s->next].text;
            s->left = strlen(s->pending);
            s->next++;
        } else if (f->stopping) {
            pthread_mutex_unlock(&f->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        } else {
            pthread_cond_wait(&f->cv, &f->mu);
        }
    }
    n = (ssize_t)(s->left < max ? s->left : max);
    memcpy(buf, s->pending, (size_t)n);
    s->pending += n;
    s->left -= (size_t)n;
    pthread_mutex_unlock(&f->mu);
    return n;
}

static void fakeapi_stream_free(void *cls)
{
    struct fakeapi_stream *s = cls;

    free(s->path);
    free(s);
}

static void fakeapi_record(struct fakeapi *f, const char *method, const char *path, const char *body)
{
    pthread_mutex_lock(&f->mu);
    f->seen = mem_realloc(f->seen, (f->nseen + 1) * sizeof(*f->seen));
    f->seen[f->nseen].request = mem_printf("%s %s", method, path);
    f->seen[f->nseen].body = mem_strdup(body);
    f->nseen++;
    pthread_mutex_unlock(&f->mu);
}

static enum MHD_Result fakeapi_queue(struct MHD_Connection *conn, int status, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, (unsigned int)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* An MHD_KeyValueIterator: appends "key=value" to the query text in cls (1 KiB). */
static enum MHD_Result fakeapi_query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    char *query = cls;
    size_t used = strlen(query);

    (void)kind;
    snprintf(query + used, 1024 - used, "%s%s=%s", used ? "&" : "", key, value ? value : "");
    return MHD_YES;
}

static enum MHD_Result fakeapi_watch(struct fakeapi *f, struct MHD_Connection *conn, const char *path)
{
    struct fakeapi_stream *s = mem_calloc(1, sizeof(*s));
    struct MHD_Response *r;
    enum MHD_Result ret;

    s->f = f;
    s->path = mem_strdup(path);
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, fakeapi_stream_read, s, fakeapi_stream_free);
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result fakeapi_handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    struct fakeapi *f = cls;
    struct fakeapi_upload *up = *con_cls;
    const char *watch = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
    static char out[FAKEAPI_BODY_MAX];
    static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
    enum MHD_Result ret;
    int status = 0;

    (void)version;
    if (!up) {
        *con_cls = mem_calloc(1, sizeof(*up));
        return MHD_YES;
    }
    if (*upload_data_size) {
        up->data = mem_realloc(up->data, up->len + *upload_data_size + 1);
        memcpy(up->data + up->len, upload_data, *upload_data_size);
        up->len += *upload_data_size;
        up->data[up->len] = '\0';
        *upload_data_size = 0;
        return MHD_YES;
    }
    fakeapi_record(f, method, url, up->data ? up->data : "");
    if (watch && strcmp(watch, "0") != 0 && strcmp(watch, "false") != 0)
        return fakeapi_watch(f, conn, url);
    pthread_mutex_lock(&out_mu);
    out[0] = '\0';
    if (f->handler) {
        char query[1024] = "";
        struct fakeapi_request rq = {method, url, up->data ? up->data : "", query};

        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, fakeapi_query_arg, query);
        status = f->handler(f->ud, &rq, out, sizeof(out));
    }
    if (!status) {
        status = 404;
        snprintf(out, sizeof(out), "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                                   "\"message\":\"%s not found\",\"reason\":\"NotFound\",\"code\":404}", url);
    }
    ret = fakeapi_queue(conn, status, out);
    pthread_mutex_unlock(&out_mu);
    return ret;
}

static void fakeapi_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    struct fakeapi_upload *up = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (up) {
        free(up->data);
        free(up);
        *con_cls = NULL;
    }
}

struct fakeapi *fakeapi_start(fakeapi_handler_fn *handler, void *ud)
{
    struct fakeapi *f = mem_calloc(1, sizeof(*f));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    const union MHD_DaemonInfo *info;

    f->handler = handler;
    f->ud = ud;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                            fakeapi_handle, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_NOTIFY_COMPLETED, fakeapi_completed, NULL, MHD_OPTION_END);
    assert_non_null(f->d);
    info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", (unsigned int)info->port);
    return f;
}

struct kube_client *fakeapi_client(struct fakeapi *f)
{
    struct kube_config cfg = {0};
    struct kube_client *c = NULL;
    struct zk_err err;

    cfg.server = f->url;
    cfg.namespace = "default";
    if (kube_client_new(&cfg, 5000, &c, &err) != ZK_OK)
        fail_msg("kube_client_new: %s", err.msg);
    return c;
}

const char *fakeapi_url(const struct fakeapi *f)
{
    return f->url;
}

void fakeapi_push(struct fakeapi *f, const char *path, const char *line)
{
    pthread_mutex_lock(&f->mu);
    f->lines = mem_realloc(f->lines, (f->nlines + 1) * sizeof(*f->lines));
    f->lines[f->nlines].path = mem_strdup(path);
    f->lines[f->nlines].text = mem_printf("%s\n", line);
    f->nlines++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Whether seen request i is method on a path starting with prefix. Called with mu held. */
static int fakeapi_matches(const struct fakeapi *f, size_t i, const char *method, const char *prefix)
{
    const char *r = f->seen[i].request;
    size_t m = strlen(method);

    return strncmp(r, method, m) == 0 && r[m] == ' ' && strncmp(r + m + 1, prefix, strlen(prefix)) == 0;
}

int fakeapi_count(struct fakeapi *f, const char *method, const char *prefix)
{
    int n = 0;

    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->nseen; i++)
        n += fakeapi_matches(f, i, method, prefix);
    pthread_mutex_unlock(&f->mu);
    return n;
}

char *fakeapi_last_body(struct fakeapi *f, const char *method, const char *prefix)
{
    char *body = NULL;

    pthread_mutex_lock(&f->mu);
    for (size_t i = f->nseen; i-- > 0 && !body;)
        if (fakeapi_matches(f, i, method, prefix))
            body = mem_strdup(f->seen[i].body);
    pthread_mutex_unlock(&f->mu);
    return body;
}

void fakeapi_stop(struct fakeapi *f)
{
    pthread_mutex_lock(&f->mu);
    f->stopping = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    MHD_stop_daemon(f->d);
    for (size_t i = 0; i < f->nlines; i++) {
        free(f->lines[i].path);
        free(f->lines[i].text);
    }
    for (size_t i = 0; i < f->nseen; i++) {
        free(f->seen[i].request);
        free(f->seen[i].body);
    }
    free(f->lines);
    free(f->seen);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

int fakeapi_wait_for(int (*cond)(void *ud), void *ud, double secs)
{
    struct timespec ts = {0, 10 * 1000 * 1000};

    for (double waited = 0; waited < secs; waited += 0.01) {
        if (cond(ud))
            return 1;
        nanosleep(&ts, NULL);
    }
    return cond(ud);
}
