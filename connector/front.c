/* front.c: see front.h. */
#include "connector/front.h"

#include "buf.h"
#include "connector/tools/tools.h"
#include "flag.h"
#include "json.h"
#include "log.h"
#include "mem.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct front {
    struct MHD_Daemon *d;
    const struct connector_config *cfg;
    struct auth *auth;
    int port;
    struct front_route *routes;
    size_t nroutes;
};

/* One HTTP request's state across libmicrohttpd's calls. */
struct req {
    struct buf body;
    int too_big;
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

enum MHD_Result front_respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body, ...)
{
    size_t len = body != NULL ? strlen(body) : 0;
    struct MHD_Response *r;
    enum MHD_Result ret;
    const char *name, *value;
    va_list ap;

    /* With a known size and MUST_COPY, a copy of the body that cannot be allocated is the one way to
     * fail: the out-of-memory policy (lib/mem.h). */
    r = MHD_create_response_from_buffer(len, (void *)(body != NULL ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        mem_oom(len);
    if (ctype != NULL)
        front_add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    va_start(ap, body);
    while ((name = va_arg(ap, const char *)) != NULL) {
        value = va_arg(ap, const char *);
        front_add_header(r, name, value);
    }
    va_end(ap);
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
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
    struct index_status_opts o;
    struct zk_err err;
    char *json = NULL, *body;
    cJSON *e;
    enum MHD_Result ret;
    int rc;

    if (index_status_query(c, &o, &ret))
        return ret;
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
};

/* ---- libmicrohttpd callbacks ---------------------------------------------------------------- */

static const struct front_route *find_route(const struct front *f, const char *url)
{
    size_t i;

    for (i = 0; i < f->nroutes; i++)
        if (strcmp(url, f->routes[i].path) == 0)
            return &f->routes[i];
    return NULL;
}

static enum MHD_Result serve(struct front *f, struct MHD_Connection *c, const char *url, const char *method,
                             const struct req *r)
{
    const struct front_route *route = find_route(f, url);
    struct front_body body = {.data = r->body.data, .len = r->body.len, .too_big = r->too_big};
    size_t i;

    if (route != NULL)
        return route->serve(route->ctx, c, method, &body);
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
    if (*upload_size > 0) {
        if (!r->too_big && buf_append(&r->body, upload, *upload_size) != ZK_OK)
            r->too_big = 1; /* the buffer has freed itself; the rest of the body is dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    return serve(f, c, url, method, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode tc)
{
    struct req *r = *con_cls;

    (void)cls;
    (void)c;
    (void)tc;
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
    f->routes = mem_calloc(opts->nroutes, sizeof(*f->routes));
    if (opts->nroutes > 0)
        memcpy(f->routes, opts->routes, opts->nroutes * sizeof(*f->routes));
    f->nroutes = opts->nroutes;
    f->cfg = opts->cfg;
    f->auth = opts->auth;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* libmicrohttpd wants the logger first, so that problems with the later options go through it. */
    f->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, f, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, f, MHD_OPTION_CONNECTION_LIMIT, (unsigned)FRONT_MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (f->d == NULL) {
        rc = zk_err_set(err, ZK_EIO, "listen on %s failed (address in use or not available?)", opts->listen);
        goto out;
    }
    info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    f->port = info != NULL ? info->port : 0;
    *out = f;
    f = NULL;
    rc = ZK_OK;
out:
    if (f != NULL) {
        free(f->routes);
        free(f);
    }
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
    MHD_stop_daemon(f->d);
    free(f->routes);
    free(f);
}
