/* front.c: see front.h. */
#include "connector/front.h"

#include "budget.h"
#include "buf.h"
#include "connector/metrics.h"
#include "connector/tools/tools.h"
#include "flag.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"
#include "prom.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One open connection, as the reaper sees it (see front.h, "Slow clients"). */
struct front_conn {
    int fd;
    double mark;   /* monotonic seconds: when it opened, or when its last answer was done */
    int serving;   /* its request is read and being answered: no deadline runs */
    int reaped;    /* shut down by the reaper already */
    /* What its request holds in the front's budget (front.h, "Memory"): the body, its parse and the
     * answer, until the answer is sent. Touched only on the connection's own thread. */
    struct budget_hold hold;
    struct front_conn *prev, *next;
};

struct front {
    struct MHD_Daemon *d;
    const struct connector_config *cfg;
    struct auth *auth;
    int port;
    struct front_route *routes;
    size_t nroutes;
    pthread_mutex_t conns_mu; /* guards conns and each one's fields, and stopping */
    pthread_cond_t stop_cv;
    struct front_conn *conns;
    int stopping;
    int reaper_started;
    pthread_t reaper;
    unsigned deadline_s; /* FRONT_REQUEST_DEADLINE_S, or the test's */
    int metrics_only;    /* front_opts.metrics_only */
};

/* One HTTP request's state across libmicrohttpd's calls. */
struct req {
    struct buf body;
    int too_big;
    int busy; /* the budget had no room for the body: the rest was dropped, the answer is 503 */
};

/* ---- helpers for routes --------------------------------------------------------------------- */

int front_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *len, struct zk_err *err)
{
    char host[256];
    const char *colon, *port, *h = listen;
    size_t hlen;
    struct addrinfo hints = {0}, *res = NULL;
    int rc;

    if (listen == NULL)
        return zk_err_set(err, ZK_EINVAL, "no listen address");
    colon = strrchr(listen, ':');
    if (colon == NULL || colon[1] == '\0')
        return zk_err_set(err, ZK_EINVAL, "listen address %s: expected host:port", listen);
    port = colon + 1;
    hlen = (size_t)(colon - listen);
    if (hlen >= 2 && listen[0] == '[' && listen[hlen - 1] == ']') {
        h = listen + 1;
        hlen -= 2;
    }
    if (hlen >= sizeof(host))
        return zk_err_set(err, ZK_EINVAL, "listen address %s: host too long", listen);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(hlen > 0 ? host : "127.0.0.1", port, &hints, &res);
    if (rc != 0)
        return zk_err_set(err, ZK_EINVAL, "listen address %s: %s", listen, gai_strerror(rc));
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return ZK_OK;
}

const char *front_header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Adds a header the connector wrote itself: the name and value are valid, so only an allocation can
 * fail, and that ends the process (lib/mem.h). */
static void front_add_header(struct MHD_Response *r, const char *name, const char *value)
{
    if (MHD_add_response_header(r, name, value) != MHD_YES)
        mem_oom(strlen(name) + strlen(value));
}

/* The connection's record (NULL for a connection the front did not see open). */
static struct front_conn *front_conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci != NULL ? ci->socket_context : NULL;
}

/* Copies the last comma-separated element of list, without spaces, into out; 0 when it is empty or too
 * long, or holds a character no address has. */
static int last_list_element(const char *list, char *out, size_t size)
{
    const char *start = strrchr(list, ','), *end;
    size_t n, i;

    start = start != NULL ? start + 1 : list;
    while (*start == ' ' || *start == '\t')
        start++;
    for (end = start + strlen(start); end > start && (end[-1] == ' ' || end[-1] == '\t'); end--)
        ;
    n = (size_t)(end - start);
    if (n == 0 || n >= size)
        return 0;
    for (i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF.:[]", start[i]))
            return 0;
    memcpy(out, start, n);
    out[n] = '\0';
    return 1;
}

void front_client_address(struct MHD_Connection *c, char *out, size_t size)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;
    const char *forwarded = front_header(c, "X-Forwarded-For");
    char peer[INET6_ADDRSTRLEN] = "";
    int loopback = 0;

    if (sa != NULL && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        inet_ntop(AF_INET, &in->sin_addr, peer, sizeof(peer));
        loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (sa != NULL && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        inet_ntop(AF_INET6, &in6->sin6_addr, peer, sizeof(peer));
        loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    if (loopback && forwarded != NULL && last_list_element(forwarded, out, size))
        return;
    snprintf(out, size, "%s", peer[0] != '\0' ? peer : "unknown");
}

struct budget_hold *front_request_hold(struct MHD_Connection *c)
{
    struct front_conn *fc = front_conn_of(c);

    return fc != NULL ? &fc->hold : NULL;
}

/* Queues a response whose body is copied, the headers given as name, value pairs ending with NULL. */
static enum MHD_Result front_queue(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body,
                                   size_t len, va_list ap)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    const char *name, *value;

    /* With a known size and MUST_COPY, a copy of the body that cannot be allocated is the one way to
     * fail: the out-of-memory policy (lib/mem.h). */
    r = MHD_create_response_from_buffer(len, (void *)(body != NULL ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        mem_oom(len);
    if (ctype != NULL)
        front_add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    while ((name = va_arg(ap, const char *)) != NULL) {
        value = va_arg(ap, const char *);
        front_add_header(r, name, value);
    }
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* front_queue with the headers given here, outside any budget. */
static enum MHD_Result front_queue_unbudgeted(struct MHD_Connection *c, unsigned status, const char *ctype,
                                              const char *body, ...)
{
    enum MHD_Result ret;
    va_list ap;

    va_start(ap, body);
    ret = front_queue(c, status, ctype, body, strlen(body), ap);
    va_end(ap);
    return ret;
}

/* The 503 of a full budget (front.h, "Memory"). Its text is a constant, so it needs no room. */
static enum MHD_Result front_respond_busy(struct MHD_Connection *c)
{
    return front_queue_unbudgeted(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                                  "the connector is holding as many requests as its memory allows; retry in a "
                                  "second\n", "Retry-After", "1", NULL);
}

enum MHD_Result front_respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body, ...)
{
    size_t len = body != NULL ? strlen(body) : 0;
    struct front_conn *fc = front_conn_of(c);
    enum MHD_Result ret;
    va_list ap;

    /* The copy stays until the client has read it, so it counts in the budget until then; a copy
     * with no room is replaced by the short 503 (counted in no budget: it is a constant). */
    if (fc != NULL && budget_add(&fc->hold, len) != ZK_OK)
        return front_respond_busy(c);
    va_start(ap, body);
    ret = front_queue(c, status, ctype, body, len, ap);
    va_end(ap);
    return ret;
}

const char *front_auth_challenge(const char *authz)
{
    return authz != NULL ? "Bearer realm=\"zoekt-connector\", error=\"invalid_token\""
                         : "Bearer realm=\"zoekt-connector\"";
}

/* ---- the front's own endpoints -------------------------------------------------------------- */

/* The answers have no body: nginx's auth_request reads only the status and headers of a check, and
 * keeps the connection for the next check only when no unread body is left on it; with a body it
 * closes the connection, and every checked request would cost a new connection and a thread start. */
static enum MHD_Result serve_auth(struct front *f, struct MHD_Connection *c)
{
    const char *authz = front_header(c, MHD_HTTP_HEADER_AUTHORIZATION);

    if (auth_check_header(f->auth, authz))
        return front_respond(c, MHD_HTTP_OK, NULL, NULL, NULL);
    return front_respond(c, MHD_HTTP_UNAUTHORIZED, NULL, NULL, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                         front_auth_challenge(authz), NULL);
}

/* Longest maxAge taken: ten years, in milliseconds (flag_duration_ms counts in them). */
#define FRONT_MAX_AGE_MAX_MS (10L * 366 * 86400 * 1000)

/* Reads /index-status's query: maxAge (a duration, "36h" or "129600s") and repositories ("all").
 * Returns 0, or 1 after answering 400 with what is wrong in *ret. */
static int index_status_query(struct MHD_Connection *c, struct index_status_opts *o, enum MHD_Result *ret)
{
    const char *max_age = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "maxAge");
    const char *repos = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "repositories");
    long ms;

    memset(o, 0, sizeof(*o));
    if (max_age && (flag_duration_ms(max_age, FRONT_MAX_AGE_MAX_MS, &ms) != ZK_OK || ms % 1000 != 0)) {
        *ret = front_respond(c, MHD_HTTP_BAD_REQUEST, "text/plain",
                             "maxAge must be a duration in whole seconds, such as 36h, 90m or 129600s\n", NULL);
        return 1;
    }
    if (repos && strcmp(repos, "all") != 0) {
        *ret = front_respond(c, MHD_HTTP_BAD_REQUEST, "text/plain", "repositories takes one value: all\n", NULL);
        return 1;
    }
    o->max_age_seconds = max_age ? ms / 1000 : 0;
    o->all = repos != NULL;
    return 0;
}

static enum MHD_Result serve_index_status(struct front *f, struct MHD_Connection *c)
{
    const char *authz = front_header(c, MHD_HTTP_HEADER_AUTHORIZATION);
    struct index_status_opts o;
    struct zk_err err;
    char *json = NULL, *body;
    cJSON *e;
    enum MHD_Result ret;
    int rc;

    if (index_status_query(c, &o, &ret))
        return ret;
    /* The endpoint is open so that probes and dashboards can read counts and times; the names of
     * repositories, branches and commits are for callers with a token, where tokens are configured. */
    o.anonymous = !auth_check_header(f->auth, authz);
    if (o.anonymous && o.all)
        return front_respond(c, MHD_HTTP_UNAUTHORIZED, "text/plain",
                             "repositories=all names every repository: it needs a valid bearer token\n",
                             MHD_HTTP_HEADER_WWW_AUTHENTICATE, front_auth_challenge(authz), NULL);
    zk_err_clear(&err);
    rc = tools_index_status(f->cfg, &o, &json, &err);
    if (rc == ZK_OK) {
        ret = front_respond(c, MHD_HTTP_OK, "application/json", json, NULL);
        free(json);
        return ret;
    }
    log_warn("index-status failed", "error", err.msg, NULL);
    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "error", err.msg[0] ? err.msg : zk_strerror(rc));
    cJSON_AddBoolToObject(e, "retryable", zk_err_retryable(rc));
    body = json_print(e);
    cJSON_Delete(e);
    /* Unreachable or slow: the service is unavailable for now. A broken answer: a bad gateway. */
    ret = front_respond(c,
                        rc == ZK_ECONNECT || rc == ZK_ETIMEOUT ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_GATEWAY,
                        "application/json", body, NULL);
    free(body);
    return ret;
}

static enum MHD_Result serve_healthz(struct front *f, struct MHD_Connection *c)
{
    (void)f;
    return front_respond(c, MHD_HTTP_OK, "text/plain", "ok\n", NULL);
}

/* Renders the metrics at each scrape: they are counters read in place, so a scrape costs the text and
 * nothing else. */
static enum MHD_Result serve_metrics(struct front *f, struct MHD_Connection *c)
{
    struct buf b;
    enum MHD_Result ret;

    if (f->cfg == NULL || f->cfg->metrics == NULL)
        return front_respond(c, MHD_HTTP_NOT_FOUND, "text/plain", "no metrics are kept\n", NULL);
    buf_init(&b, CMETRICS_TEXT_MAX);
    if (cmetrics_render(f->cfg->metrics, &b) != ZK_OK) {
        /* The bound is above the largest exposition (test_cmetrics): only a change that outgrew it. */
        log_error("The metrics do not fit their bound", NULL);
        return front_respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "metrics unavailable\n", NULL);
    }
    ret = front_respond(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, b.data, NULL);
    buf_free(&b);
    return ret;
}

/* The front's own paths. /auth answers any method because nginx's auth_request subrequest carries the
 * method of the request it guards. */
static const struct {
    const char *path;
    int any_method; /* else GET and HEAD only */
    enum MHD_Result (*serve)(struct front *f, struct MHD_Connection *c);
} own_routes[] = {
    {"/auth", 1, serve_auth},
    {"/index-status", 0, serve_index_status},
    {"/healthz", 0, serve_healthz},
    {"/metrics", 0, serve_metrics},
};

/* ---- libmicrohttpd callbacks ---------------------------------------------------------------- */

/* ---- slow clients ---------------------------------------------------------------------------- */

/* Marks c's connection as answering (serving 1: its request is read) or as waiting for its next
 * request (0: its answer is done, and the deadline starts again now). */
static void front_conn_mark(struct front *f, struct MHD_Connection *c, int serving)
{
    struct front_conn *fc = front_conn_of(c);

    if (fc == NULL)
        return;
    pthread_mutex_lock(&f->conns_mu);
    fc->serving = serving;
    fc->mark = monotime_s();
    pthread_mutex_unlock(&f->conns_mu);
}

/* Lists each connection as it opens and unlists it as it closes. libmicrohttpd calls this on the
 * connection's own thread; the socket stays open until after the "closed" call, so the reaper, which
 * only touches listed connections under the same mutex, never shuts down a descriptor reused by
 * another connection. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct front *f = cls;
    struct front_conn *fc = *socket_context;
    const union MHD_ConnectionInfo *ci;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        fc = mem_calloc(1, sizeof(*fc));
        fc->fd = ci != NULL ? ci->connect_fd : -1;
        fc->mark = monotime_s();
        fc->hold = BUDGET_HOLD(f->cfg != NULL ? f->cfg->request_budget : NULL);
        pthread_mutex_lock(&f->conns_mu);
        fc->next = f->conns;
        if (f->conns)
            f->conns->prev = fc;
        f->conns = fc;
        pthread_mutex_unlock(&f->conns_mu);
        *socket_context = fc;
        return;
    }
    if (fc == NULL)
        return;
    pthread_mutex_lock(&f->conns_mu);
    if (fc->prev)
        fc->prev->next = fc->next;
    else
        f->conns = fc->next;
    if (fc->next)
        fc->next->prev = fc->prev;
    pthread_mutex_unlock(&f->conns_mu);
    free(fc);
    *socket_context = NULL;
}

/* Once a second, shuts down every connection that has been waiting longer than
 * FRONT_REQUEST_DEADLINE_S for a complete request. libmicrohttpd's own timeout counts only silence, so
 * a client sending a byte now and then could hold a connection slot (of FRONT_MAX_CONNECTIONS) for
 * ever; here the whole request, headers and body, must arrive within the deadline. The connection's
 * thread sees the shutdown as the peer gone and closes it. One log line per sweep, however many. */
static void *front_reap(void *arg)
{
    struct front *f = arg;
    struct timespec next;
    struct front_conn *fc;
    double now;
    int reaped;
    char count[16];

    pthread_mutex_lock(&f->conns_mu);
    while (!f->stopping) {
        clock_gettime(CLOCK_MONOTONIC, &next); /* stop_cv waits on the monotonic clock */
        next.tv_sec += 1;
        (void)pthread_cond_timedwait(&f->stop_cv, &f->conns_mu, &next);
        now = monotime_s();
        reaped = 0;
        for (fc = f->conns; fc != NULL; fc = fc->next)
            if (!fc->serving && !fc->reaped && fc->fd >= 0 && now - fc->mark > f->deadline_s) {
                (void)shutdown(fc->fd, SHUT_RDWR);
                fc->reaped = 1;
                reaped++;
            }
        if (reaped) {
            snprintf(count, sizeof(count), "%d", reaped);
            log_warn("Closed connections that sent no complete request in time", "connections", count, NULL);
        }
    }
    pthread_mutex_unlock(&f->conns_mu);
    return NULL;
}

static const struct front_route *find_route(const struct front *f, const char *url)
{
    size_t i;

    for (i = 0; i < f->nroutes; i++)
        if (strcmp(url, f->routes[i].path) == 0)
            return &f->routes[i];
    return NULL;
}

/* Answers a complete request: route is find_route's for url (NULL: one of the front's own paths). */
static enum MHD_Result serve(struct front *f, struct MHD_Connection *c, const struct front_route *route,
                             const char *url, const char *method, const struct req *r)
{
    struct front_body body = {.data = r->body.data, .len = r->body.len, .too_big = r->too_big};
    size_t i;

    if (route != NULL)
        return route->serve(route->ctx, c, method, &body);
    if (f->metrics_only && strcmp(url, "/metrics") != 0)
        return front_respond(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", NULL);
    for (i = 0; i < sizeof(own_routes) / sizeof(own_routes[0]); i++)
        if (own_routes[i].any_method && strcmp(url, own_routes[i].path) == 0)
            return own_routes[i].serve(f, c);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return front_respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n",
                             MHD_HTTP_HEADER_ALLOW, "GET", NULL);
    for (i = 0; i < sizeof(own_routes) / sizeof(own_routes[0]); i++)
        if (strcmp(url, own_routes[i].path) == 0)
            return own_routes[i].serve(f, c);
    return front_respond(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct front *f = cls;
    struct req *r = *con_cls;
    const struct front_route *route;
    struct front_conn *fc;
    int gate;

    (void)version;
    if (r == NULL) {
        r = mem_calloc(1, sizeof(*r));
        buf_init(&r->body, FRONT_BODY_MAX);
        *con_cls = r;
        /* Refusing before the body arrives means an unauthorised client cannot make us read it. */
        route = find_route(f, url);
        if (route != NULL && route->gate != NULL && (gate = route->gate(route->ctx, c)) != FRONT_GO_ON)
            return (enum MHD_Result)gate;
        return MHD_YES;
    }
    fc = front_conn_of(c);
    if (*upload_size > 0) {
        /* A body past FRONT_BODY_MAX is refused by buf_append below, naming that bound, whatever the
         * budget holds; one that fits it but finds no room in the budget is dropped for a 503. */
        if (!r->too_big && !r->busy && fc != NULL && r->body.len + *upload_size <= FRONT_BODY_MAX &&
            budget_grow(&fc->hold, (r->body.len + *upload_size) * FRONT_BODY_FACTOR) != ZK_OK) {
            r->busy = 1;
            buf_free(&r->body);
        }
        if (!r->too_big && !r->busy && buf_append(&r->body, upload, *upload_size) != ZK_OK)
            r->too_big = 1; /* the buffer has freed itself; the rest of the body is dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    front_conn_mark(f, c, 1);
    route = find_route(f, url);
    if (!r->busy && !r->too_big && fc != NULL && route != NULL && route->parse_cost != NULL &&
        budget_add(&fc->hold, route->parse_cost(r->body.len)) != ZK_OK)
        r->busy = 1;
    if (r->busy)
        return front_respond_busy(c);
    return serve(f, c, route, url, method, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode tc)
{
    struct req *r = *con_cls;

    struct front_conn *fc = front_conn_of(c);

    (void)tc;
    front_conn_mark(cls, c, 0);
    if (fc != NULL) /* the answer is sent, or the connection gone: what it held goes */
        budget_release(&fc->hold);
    if (r != NULL) {
        buf_free(&r->body);
        free(r);
        *con_cls = NULL;
    }
}

__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    (void)cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    log_warn("libmicrohttpd", "detail", msg, NULL);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Stops the reaper and the daemon (which waits for every connection thread) and frees f, started or
 * half started. f may be NULL. */
static void front_free(struct front *f)
{
    if (f == NULL)
        return;
    if (f->reaper_started) {
        pthread_mutex_lock(&f->conns_mu);
        f->stopping = 1;
        pthread_cond_signal(&f->stop_cv);
        pthread_mutex_unlock(&f->conns_mu);
        pthread_join(f->reaper, NULL);
    }
    if (f->d != NULL)
        MHD_stop_daemon(f->d);
    pthread_mutex_destroy(&f->conns_mu);
    pthread_cond_destroy(&f->stop_cv);
    free(f->routes);
    free(f);
}

int front_start(const struct front_opts *opts, struct front **out, struct zk_err *err)
{
    struct sockaddr_storage addr;
    socklen_t alen;
    struct front *f = NULL;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    int rc;

    *out = NULL;
    if ((rc = front_parse_listen(opts->listen, &addr, &alen, err)) != ZK_OK)
        goto out;
    f = mem_calloc(1, sizeof(*f));
    mem_mutex_init(&f->conns_mu);
    mem_cond_init(&f->stop_cv, 1);
    /* A metrics_only front takes no routes: it serves /metrics and nothing an agent uses. */
    f->nroutes = opts->metrics_only ? 0 : opts->nroutes;
    f->routes = mem_calloc(f->nroutes, sizeof(*f->routes));
    if (f->nroutes > 0)
        memcpy(f->routes, opts->routes, f->nroutes * sizeof(*f->routes));
    f->metrics_only = opts->metrics_only;
    f->cfg = opts->cfg;
    f->auth = opts->auth;
    f->deadline_s = opts->request_deadline_s ? opts->request_deadline_s : FRONT_REQUEST_DEADLINE_S;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* libmicrohttpd wants the logger first, so that problems with the later options go through it. */
    /* Strict for clients: an HTTP/1.1 request without Host is refused (400), as RFC 9112 asks. */
    f->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, f, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, f, MHD_OPTION_NOTIFY_CONNECTION, on_connection, f,
                            MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)(f->metrics_only ? FRONT_METRICS_CONNECTIONS : FRONT_MAX_CONNECTIONS),
                            MHD_OPTION_CONNECTION_TIMEOUT, f->deadline_s,
                            MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_END);
    if (f->d == NULL) {
        rc = zk_err_set(err, ZK_EIO, "listen on %s failed (address in use or not available?)", opts->listen);
        goto out;
    }
    if (pthread_create(&f->reaper, NULL, front_reap, f) != 0) {
        rc = zk_err_set(err, ZK_EIO, "cannot start the thread that closes slow connections");
        goto out;
    }
    f->reaper_started = 1;
    info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    f->port = info != NULL ? info->port : 0;
    *out = f;
    f = NULL;
    rc = ZK_OK;
out:
    front_free(f);
    return rc;
}

int front_port(const struct front *f)
{
    return f->port;
}

void front_stop(struct front *f)
{
    size_t i;

    if (f == NULL)
        return;
    for (i = 0; i < f->nroutes; i++)
        if (f->routes[i].cancel != NULL)
            f->routes[i].cancel(f->routes[i].ctx);
    front_free(f);
}
