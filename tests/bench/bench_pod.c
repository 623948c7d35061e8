/* bench_pod: load on the search pod's data path, as agents make it: MCP clients talking Streamable HTTP
 * to nginx, which checks each request's bearer token with the connector (auth_request) and passes /mcp
 * to it; the connector asks Zoekt.
 *
 * Each of --clients clients keeps one HTTP/1.1 connection open (libcurl multi, one transfer per client,
 * reused), initializes an MCP session once (initialize, then notifications/initialized), then calls
 * search_code with --query (and, with --repo, that repository argument) again and again, one call at a
 * time, for --seconds. Only the calls that finish within those seconds are counted and timed; each
 * client's session is ended (DELETE) after.
 * With --rate R the clients are paced instead: together they send R searches a second, evenly spread,
 * and a search's latency counts from when it was due (a pod that falls behind shows as latency, not as
 * a slower load). Without it each client sends its next search as soon as the last one is answered.
 *
 * An error is any answer that is not the expected status (200; 202 for the notification; 204 for the
 * DELETE), a JSON-RPC error, a tool result with isError, or a failed transfer. Errors are counted, the
 * first one is printed on stderr, and the program exits 1 when there was any, so that a benchmark run
 * with errors fails rather than reporting a rate made of refusals. A client whose search failed goes on
 * with its session (the fault tests count the failures while nginx restarts).
 *
 * Each request is cut at --timeout-ms (default 30000). --log FILE writes one line per search as it
 * ends, "<start> <duration> <outcome>": seconds since the measured seconds began, seconds it took, and
 * the HTTP status (200 is a good answer), "isError" for a 200 that is a JSON-RPC error or a tool
 * error, or "ERR" for a failed transfer (refused, reset, timed out). SIGTERM or SIGINT ends the run
 * early as its end would: no new search, the sessions are ended, the line is printed.
 *
 * Usage: bench_pod --url URL [--token-file FILE] [--clients N] [--seconds S] [--rate R] [--query Q]
 *                  [--repo R] [--timeout-ms MS] [--log FILE]
 * Prints one line on stdout:
 *   clients=N paced=R searches=N seconds=S rate=R p50_ms=X p99_ms=Y errors=N cpu_s=C
 * seconds are the measured seconds (fewer when a signal ended the run); rate is searches per second;
 * cpu_s is this program's own CPU time (user + system) over the whole run, so the caller can tell how
 * much of the machine the load generator took. */
#include "buf.h"
#include "json.h"
#include "textfile.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#define POD_MAX_CLIENTS 1000
#define POD_MAX_SECONDS 600
/* Bound on the query and the repository argument together, so that a search request fits its buffer. */
#define POD_MAX_ARGS_LEN 768
/* Bound on the latencies kept: far above what one loopback pod can serve in POD_MAX_SECONDS. */
#define POD_MAX_SAMPLES (20u * 1000u * 1000u)
#define POD_ANSWER_MAX (4u << 20)
#define POD_SESSION_ID_MAX 128

enum phase { PH_INIT, PH_INITIALIZED, PH_SEARCH, PH_DELETE, PH_DONE };

struct client {
    CURL *e;
    struct curl_slist *headers;
    enum phase phase;
    char sid[POD_SESSION_ID_MAX];
    char body[POD_MAX_ARGS_LEN + 256];
    struct buf answer;
    double started; /* when the request in flight was sent (paced: was due), seconds */
    double due;     /* paced: when the next search is to be sent */
    int waiting;    /* paced: the next search waits for its time */
    long next_id;
};

struct run {
    const char *url;
    const char *authz; /* "Authorization: Bearer ..." or NULL */
    const char *query;
    const char *repo;  /* --repo, or NULL */
    double start;    /* when the measured seconds began (every client had its session) */
    double end;      /* when searches stop being sent, seconds */
    double interval; /* paced: seconds between one client's searches; 0: each as soon as the last ended */
    int stopping;
    FILE *log;       /* --log: one line per search, or NULL */
    double *lat_ms;  /* latencies of the counted searches */
    size_t nlat;
    size_t cap;
    long errors;
};

/* Set by SIGTERM and SIGINT; the event loop reads it. Lock-free, so a handler may store to it. */
static atomic_int stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_requested, 1);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p of the sorted v[0..n). */
static double percentile(const double *v, size_t n, int p)
{
    size_t k;

    if (n == 0)
        return 0;
    k = (size_t)((double)n * p / 100.0 + 0.999999);
    return v[k > 0 ? k - 1 : 0];
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct client *c = arg;

    return buf_append(&c->answer, p, size * n) == ZK_OK ? size * n : 0;
}

/* Keeps the session id the initialize answer carries. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct client *c = arg;
    size_t len = size * n, name = strlen("Mcp-Session-Id:");

    if (len > name && strncasecmp(p, "Mcp-Session-Id:", name) == 0) {
        p += name;
        len -= name;
        while (len > 0 && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
            len--;
        if (len < sizeof(c->sid)) {
            memcpy(c->sid, p, len);
            c->sid[len] = '\0';
        }
    }
    return size * n;
}

/* Sets up c's next request for its phase; returns 0, or -1 when out of memory. */
static int prepare(struct run *r, struct client *c)
{
    char line[POD_SESSION_ID_MAX + 32];
    struct curl_slist *h = NULL;

    curl_slist_free_all(c->headers);
    c->headers = NULL;
    buf_reset(&c->answer);
    h = curl_slist_append(h, "Content-Type: application/json");
    h = h ? curl_slist_append(h, "Accept: application/json, text/event-stream") : NULL;
    if (h && r->authz)
        h = curl_slist_append(h, r->authz);
    if (h && c->phase != PH_INIT) {
        snprintf(line, sizeof(line), "Mcp-Session-Id: %s", c->sid);
        h = curl_slist_append(h, line);
        h = h ? curl_slist_append(h, "MCP-Protocol-Version: 2025-06-18") : NULL;
    }
    if (!h)
        return -1;
    c->headers = h;
    switch (c->phase) {
    case PH_INIT:
        snprintf(c->body, sizeof(c->body), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"initialize\",\"params\":"
                 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench_pod\","
                 "\"version\":\"1\"}}}", c->next_id++);
        break;
    case PH_INITIALIZED:
        snprintf(c->body, sizeof(c->body), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        break;
    case PH_SEARCH:
        snprintf(c->body, sizeof(c->body), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                 "{\"name\":\"search_code\",\"arguments\":{\"query\":\"%s\"%s%s%s}}}", c->next_id++, r->query,
                 r->repo ? ",\"repo\":\"" : "", r->repo ? r->repo : "", r->repo ? "\"" : "");
        break;
    default:
        break;
    }
    curl_easy_setopt(c->e, CURLOPT_URL, r->url);
    curl_easy_setopt(c->e, CURLOPT_HTTPHEADER, c->headers);
    if (c->phase == PH_DELETE) {
        curl_easy_setopt(c->e, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c->e, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
        curl_easy_setopt(c->e, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(c->e, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(c->e, CURLOPT_POSTFIELDSIZE, (long)strlen(c->body));
    }
    c->started = now_s();
    return 0;
}

/* Whether the answer to c's request in the current phase is the one expected; describes it in why. */
static int answer_ok(const struct client *c, CURLcode cc, long status, char *why, size_t why_size)
{
    long want = c->phase == PH_INITIALIZED ? 202 : c->phase == PH_DELETE ? 204 : 200;
    cJSON *msg, *result;
    int ok;

    if (cc != CURLE_OK) {
        snprintf(why, why_size, "transfer failed: %s", curl_easy_strerror(cc));
        return 0;
    }
    if (status != want) {
        snprintf(why, why_size, "HTTP %ld (want %ld): %.200s", status, want, c->answer.data ? c->answer.data : "");
        return 0;
    }
    if (c->phase != PH_INIT && c->phase != PH_SEARCH)
        return 1;
    msg = json_parse(c->answer.data ? c->answer.data : "", c->answer.len);
    result = msg ? cJSON_GetObjectItemCaseSensitive(msg, "result") : NULL;
    ok = cJSON_IsObject(result) && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"));
    if (ok && c->phase == PH_INIT)
        ok = c->sid[0] != '\0';
    if (!ok)
        snprintf(why, why_size, "%s: %.300s", msg == NULL ? "not JSON" : "a JSON-RPC error, isError or no session",
                 c->answer.data ? c->answer.data : "");
    cJSON_Delete(msg);
    return ok;
}

/* Writes the --log line of c's search, ended at t: good says whether its answer was the one expected. */
static void log_search(const struct run *r, const struct client *c, CURLcode cc, long status, int good, double t)
{
    char outcome[24];

    if (!r->log || c->phase != PH_SEARCH)
        return;
    if (cc != CURLE_OK)
        snprintf(outcome, sizeof(outcome), "ERR");
    else if (status == 200 && !good)
        snprintf(outcome, sizeof(outcome), "isError");
    else
        snprintf(outcome, sizeof(outcome), "%ld", status);
    fprintf(r->log, "%.3f %.3f %s\n", c->started - r->start, t - c->started, outcome);
    fflush(r->log);
}

/* Records the finished request of c and moves it on; returns 1 when c has a next request to send. */
static int finish(struct run *r, struct client *c, CURLcode cc)
{
    long status = 0;
    double t = now_s();
    char why[512];
    double *grown;
    int good;

    curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &status);
    good = answer_ok(c, cc, status, why, sizeof(why));
    log_search(r, c, cc, status, good, t);
    if (!good) {
        if (r->errors++ == 0)
            fprintf(stderr, "bench_pod: first error (phase %d): %s\n", (int)c->phase, why);
        /* A client whose session failed cannot go on; one whose search failed can. */
        if (c->phase != PH_SEARCH) {
            c->phase = PH_DONE;
            return 0;
        }
    } else if (c->phase == PH_SEARCH && c->started >= r->start && t <= r->end) {
        if (r->nlat == r->cap && r->cap < POD_MAX_SAMPLES) {
            size_t cap = r->cap ? r->cap * 2 : 65536;
            grown = realloc(r->lat_ms, cap * sizeof(*grown));
            if (grown) {
                r->lat_ms = grown;
                r->cap = cap;
            }
        }
        if (r->nlat < r->cap)
            r->lat_ms[r->nlat++] = (t - c->started) * 1000.0;
    }
    switch (c->phase) {
    case PH_INIT:
        c->phase = PH_INITIALIZED;
        break;
    case PH_INITIALIZED:
        c->phase = PH_SEARCH;
        /* Paced clients start together once every session exists; see main. */
        c->waiting = r->interval > 0;
        break;
    case PH_SEARCH:
        if (t >= r->end || r->stopping)
            c->phase = PH_DELETE;
        else if (r->interval > 0) {
            c->due += r->interval;
            c->waiting = 1;
        }
        break;
    default:
        c->phase = PH_DONE;
        return 0;
    }
    if (c->waiting)
        return 0;
    if (prepare(r, c) != 0) {
        r->errors++;
        c->phase = PH_DONE;
        return 0;
    }
    return 1;
}

/* Sends the searches of paced clients whose time has come (after the end: their session's DELETE).
 * Latency counts from when a search was due, not from when it could be sent, so that a pod falling
 * behind the pace shows in the figures instead of slowing the load down. */
static void send_due(struct run *r, CURLM *m, struct client *cs, int n)
{
    double t = now_s();
    int i;

    for (i = 0; i < n; i++) {
        struct client *c = &cs[i];

        if (!c->waiting || (c->due > t && t < r->end && !r->stopping))
            continue;
        c->waiting = 0;
        if (t >= r->end || r->stopping)
            c->phase = PH_DELETE;
        if (prepare(r, c) != 0) {
            r->errors++;
            c->phase = PH_DONE;
            continue;
        }
        if (c->phase == PH_SEARCH)
            c->started = c->due;
        curl_multi_add_handle(m, c->e);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_pod --url URL [--token-file FILE] [--clients N] [--seconds S] [--rate R] "
                    "[--query Q] [--repo R] [--timeout-ms MS] [--log FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *token_file = NULL, *query = "needle", *repo = NULL, *log_file = NULL;
    long nclients = 1, seconds = 10, rate = 0, timeout_ms = 30000;
    struct run r = {0};
    struct client *cs = NULL;
    CURLM *m = NULL;
    char *token = NULL, *authz = NULL;
    double t0, measured;
    struct rusage ru;
    struct zk_err err;
    int running = 0, live = 0, i, rc = 1, started_all = 0;

    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--url") == 0)
            url = argv[i + 1];
        else if (strcmp(argv[i], "--token-file") == 0)
            token_file = argv[i + 1];
        else if (strcmp(argv[i], "--clients") == 0)
            nclients = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--rate") == 0)
            rate = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--query") == 0)
            query = argv[i + 1];
        else if (strcmp(argv[i], "--repo") == 0)
            repo = argv[i + 1];
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            timeout_ms = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--log") == 0)
            log_file = argv[i + 1];
        else
            return usage();
    }
    if (i != argc || url == NULL || nclients < 1 || nclients > POD_MAX_CLIENTS || seconds < 1 ||
        seconds > POD_MAX_SECONDS || rate < 0 || rate > 1000000 || timeout_ms < 1 || timeout_ms > 600000 ||
        strpbrk(query, "\"\\") != NULL || (repo && strpbrk(repo, "\"\\") != NULL) ||
        strlen(query) + (repo ? strlen(repo) : 0) > POD_MAX_ARGS_LEN)
        return usage();
    zk_err_clear(&err);
    if (token_file != NULL) {
        if (textfile_first_line(token_file, 4096, &token, &err) != ZK_OK) {
            fprintf(stderr, "bench_pod: %s\n", err.msg);
            return 1;
        }
        if (asprintf(&authz, "Authorization: Bearer %s", token) < 0) {
            free(token);
            return 1;
        }
    }
    if (log_file != NULL && (r.log = fopen(log_file, "w")) == NULL) {
        fprintf(stderr, "bench_pod: cannot write %s\n", log_file);
        goto out;
    }
    signal(SIGTERM, on_stop_signal);
    signal(SIGINT, on_stop_signal);
    r.url = url;
    r.authz = authz;
    r.query = query;
    r.repo = repo;
    r.start = 1e300;
    r.end = 1e300;
    r.interval = rate > 0 ? (double)nclients / (double)rate : 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    m = curl_multi_init();
    cs = calloc((size_t)nclients, sizeof(*cs));
    if (!m || !cs)
        goto out;
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, nclients + 1);
    for (i = 0; i < nclients; i++) {
        struct client *c = &cs[i];

        buf_init(&c->answer, POD_ANSWER_MAX);
        c->next_id = 1;
        if (!(c->e = curl_easy_init()))
            goto out;
        curl_easy_setopt(c->e, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c->e, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(c->e, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c->e, CURLOPT_HEADERDATA, c);
        curl_easy_setopt(c->e, CURLOPT_PRIVATE, c);
        curl_easy_setopt(c->e, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(c->e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->e, CURLOPT_TCP_NODELAY, 1L);
        if (prepare(&r, c) != 0)
            goto out;
        curl_multi_add_handle(m, c->e);
    }
    t0 = now_s();
    do {
        CURLMsg *msg;
        int left, active = 0;

        live = 0;

        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            struct client *c;

            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&c);
            curl_multi_remove_handle(m, c->e);
            if (finish(&r, c, msg->data.result))
                curl_multi_add_handle(m, c->e);
        }
        /* The measured seconds start once every client has its session. */
        for (i = 0; i < nclients; i++) {
            active += cs[i].phase == PH_SEARCH;
            live += cs[i].phase != PH_DONE;
        }
        if (!started_all && active == nclients) {
            started_all = 1;
            r.start = now_s();
            r.end = r.start + (double)seconds;
            /* Paced clients are spread evenly over one interval. */
            for (i = 0; i < nclients; i++)
                cs[i].due = r.start + r.interval * i / (double)nclients;
        }
        if (!started_all && (r.errors > 0 || now_s() - t0 > 30)) {
            /* Some client could not get a session: stop the others too. */
            r.start = r.end = now_s();
            r.stopping = 1;
            started_all = 1;
            if (r.errors == 0) {
                fprintf(stderr, "bench_pod: not every client had a session after 30 s\n");
                r.errors++;
            }
        }
        if (atomic_load(&stop_requested) && !r.stopping) {
            /* As the run's end: no new search, and the sessions are ended. */
            r.stopping = 1;
            if (!started_all) {
                r.start = now_s();
                started_all = 1;
            }
            if (r.end > now_s())
                r.end = now_s();
        }
        if (started_all)
            send_due(&r, m, cs, (int)nclients);
        if (live > 0)
            curl_multi_poll(m, NULL, 0, r.interval > 0 ? 1 : 100, NULL);
    } while (live > 0);

    qsort(r.lat_ms, r.nlat, sizeof(*r.lat_ms), cmp_double);
    getrusage(RUSAGE_SELF, &ru);
    measured = r.end > r.start ? r.end - r.start : 0;
    printf("clients=%ld paced=%ld searches=%zu seconds=%.0f rate=%.1f p50_ms=%.3f p99_ms=%.3f errors=%ld cpu_s=%.2f\n",
           nclients, rate, r.nlat, measured, measured > 0 ? (double)r.nlat / measured : 0.0,
           percentile(r.lat_ms, r.nlat, 50),
           percentile(r.lat_ms, r.nlat, 99), r.errors,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec / 1e6);
    rc = r.errors > 0 ? 1 : 0;
out:
    if (cs) {
        for (i = 0; i < nclients; i++) {
            if (cs[i].e) {
                curl_multi_remove_handle(m, cs[i].e);
                curl_easy_cleanup(cs[i].e);
            }
            curl_slist_free_all(cs[i].headers);
            buf_free(&cs[i].answer);
        }
        free(cs);
    }
    curl_multi_cleanup(m);
    curl_global_cleanup();
    if (r.log)
        fclose(r.log);
    free(r.lat_ms);
    free(authz);
    free(token);
    return rc;
}
