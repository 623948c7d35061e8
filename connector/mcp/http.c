/* http.c: see http.h. */
#include "connector/mcp/http.h"

#include "buf.h"
#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/server.h"
#include "connector/tools/tools.h"
#include "json.h"
#include "log.h"
#include "monotime.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SESSION_ID_BYTES 16

struct hsession {
    char id[SESSION_ID_BYTES * 2 + 1];
    struct mcp_session *s;
    int refs;         /* one for the table while listed, one per request using it */
    double last_used; /* monotonic seconds */
    struct hsession *next;
};

struct mcp_http {
    struct MHD_Daemon *d;
    const struct connector_config *cfg;
    const char *server_version;
    struct auth *auth;
    int port;
    pthread_mutex_t mu; /* guards the session table */
    struct hsession *sessions;
    int nsessions;
};

/* One HTTP request's state across libmicrohttpd's calls. */
struct req {
    struct buf body;
    int too_big;
};

/* ---- pure helpers ---------------------------------------------------------------------------- */

int mcp_http_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *len,
                          struct zk_err *err)
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

/* Whether origin is http(s)://<loopback host>[:port]. */
static int origin_is_loopback(const char *origin)
{
    static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
    const char *rest;
    size_t i, n;

    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    else
        return 0;
    for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        n = strlen(hosts[i]);
        if (strncasecmp(rest, hosts[i], n) != 0)
            continue;
        rest += n;
        if (*rest == '\0')
            return 1;
        if (*rest != ':' || rest[1] == '\0')
            return 0;
        for (rest++; *rest != '\0'; rest++)
            if (*rest < '0' || *rest > '9')
                return 0;
        return 1;
    }
    return 0;
}

int mcp_http_origin_allowed(const char *origin, const char *allowed)
{
    const char *p, *end;
    size_t n = origin != NULL ? strlen(origin) : 0;

    if (origin == NULL)
        return 1;
    if (allowed == NULL)
        return origin_is_loopback(origin);
    for (p = allowed; *p != '\0'; p = *end ? end + 1 : end) {
        while (*p == ' ')
            p++;
        end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        /* Origins are compared without regard to case: scheme and host are case-insensitive. */
        if ((size_t)(end - p) == n && strncasecmp(p, origin, n) == 0)
            return 1;
    }
    return 0;
}

int mcp_http_accept_json(const char *accept)
{
    static const char *const ok[] = {"application/json", "application/*", "*/*"};
    const char *p, *end;
    size_t i, n;

    if (accept == NULL)
        return 1;
    for (p = accept; *p != '\0'; p = *end ? end + 1 : end) {
        while (*p == ' ' || *p == '\t')
            p++;
        end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        n = strcspn(p, ";, \t");
        for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
            if (n == strlen(ok[i]) && strncasecmp(p, ok[i], n) == 0)
                return 1;
    }
    return 0;
}

/* ---- sessions ------------------------------------------------------------------------------- */

/* Session ids work like bearer tokens, so they are compared in constant time. */
static int session_id_equal(const struct hsession *hs, const char *id)
{
    return strlen(id) == SESSION_ID_BYTES * 2 && CRYPTO_memcmp(hs->id, id, SESSION_ID_BYTES * 2) == 0;
}

static struct hsession *session_get(struct mcp_http *h, const char *id)
{
    struct hsession *hs;

    pthread_mutex_lock(&h->mu);
    for (hs = h->sessions; hs != NULL; hs = hs->next)
        if (session_id_equal(hs, id)) {
            hs->refs++;
            hs->last_used = monotime_s();
            break;
        }
    pthread_mutex_unlock(&h->mu);
    return hs;
}

static void session_put(struct mcp_http *h, struct hsession *hs)
{
    int last;

    pthread_mutex_lock(&h->mu);
    last = --hs->refs == 0;
    pthread_mutex_unlock(&h->mu);
    if (last) {
        mcp_session_free(hs->s);
        free(hs);
    }
}

/* Unlinks hs (h->mu held), asks its tool calls to stop and drops the table's reference; returns
 * whether that was the last one, in which case the caller frees hs after unlocking. */
static int session_unlink_locked(struct mcp_http *h, struct hsession **pp)
{
    struct hsession *hs = *pp;

    *pp = hs->next;
    h->nsessions--;
    mcp_session_close(hs->s);
    return --hs->refs == 0;
}

/* Ends the session named id. Returns 1 when it existed. */
static int session_remove(struct mcp_http *h, const char *id)
{
    struct hsession **pp, *hs = NULL;
    int last = 0;

    pthread_mutex_lock(&h->mu);
    for (pp = &h->sessions; *pp != NULL; pp = &(*pp)->next)
        if (session_id_equal(*pp, id)) {
            hs = *pp;
            last = session_unlink_locked(h, pp);
            break;
        }
    pthread_mutex_unlock(&h->mu);
    if (last) {
        mcp_session_free(hs->s);
        free(hs);
    }
    return hs != NULL;
}

/* Lists s under a new random id (copied to id_out). When the table is full, the session idle longest
 * makes room if it has been idle for MCP_HTTP_SESSION_IDLE_S; otherwise returns ZK_ETOOBIG. Takes
 * ownership of s on success only. */
static int session_add(struct mcp_http *h, struct mcp_session *s, char *id_out)
{
    unsigned char raw[SESSION_ID_BYTES];
    struct hsession *hs = calloc(1, sizeof(*hs)), **pp, **oldest = NULL, *victim = NULL;
    double now = monotime_s();
    int i, free_victim = 0;

    if (hs == NULL)
        return ZK_ENOMEM;
    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        free(hs);
        return ZK_ENOMEM;
    }
    for (i = 0; i < SESSION_ID_BYTES; i++)
        snprintf(hs->id + 2 * i, 3, "%02x", raw[i]);
    hs->s = s;
    hs->refs = 1;
    hs->last_used = now;
    pthread_mutex_lock(&h->mu);
    if (h->nsessions >= MCP_HTTP_MAX_SESSIONS) {
        for (pp = &h->sessions; *pp != NULL; pp = &(*pp)->next)
            if ((*pp)->refs == 1 && (oldest == NULL || (*pp)->last_used < (*oldest)->last_used))
                oldest = pp;
        if (oldest == NULL || now - (*oldest)->last_used < MCP_HTTP_SESSION_IDLE_S) {
            pthread_mutex_unlock(&h->mu);
            free(hs);
            return ZK_ETOOBIG;
        }
        victim = *oldest;
        free_victim = session_unlink_locked(h, oldest);
    }
    hs->next = h->sessions;
    h->sessions = hs;
    h->nsessions++;
    pthread_mutex_unlock(&h->mu);
    if (free_victim) {
        log_info("Dropped the longest idle MCP session to make room", NULL);
        mcp_session_free(victim->s);
        free(victim);
    }
    memcpy(id_out, hs->id, sizeof(hs->id));
    return ZK_OK;
}

/* ---- responses ------------------------------------------------------------------------------ */

/* Queues a response with body (may be NULL) and extra headers given as name, value pairs ending with
 * NULL. */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body,
                               ...)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    const char *name, *value;
    va_list ap;

    r = MHD_create_response_from_buffer(body != NULL ? strlen(body) : 0, (void *)(body != NULL ? body : ""),
                                        MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    if (ctype != NULL)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    va_start(ap, body);
    while ((name = va_arg(ap, const char *)) != NULL) {
        value = va_arg(ap, const char *);
        MHD_add_response_header(r, name, value);
    }
    va_end(ap);
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* An HTTP error on /mcp with a JSON-RPC error body (id null), as the transport specification
 * suggests, plus optional extra header. */
static enum MHD_Result respond_rpc_error(struct MHD_Connection *c, unsigned status, int code, const char *msg,
                                         const char *hname, const char *hvalue)
{
    cJSON *e = jsonrpc_error(NULL, code, msg, NULL);
    char *text = e != NULL ? json_print(e) : NULL;
    enum MHD_Result ret;

    cJSON_Delete(e);
    if (hname != NULL)
        ret = respond(c, status, "application/json", text, hname, hvalue, NULL);
    else
        ret = respond(c, status, "application/json", text, NULL);
    free(text);
    return ret;
}

static enum MHD_Result respond_unauthorized(struct MHD_Connection *c, const char *authz, int rpc)
{
    const char *challenge = authz != NULL ? "Bearer realm=\"zoekt-connector\", error=\"invalid_token\""
                                          : "Bearer realm=\"zoekt-connector\"";

    if (rpc)
        return respond_rpc_error(c, MHD_HTTP_UNAUTHORIZED, JSONRPC_INVALID_REQUEST,
                                 "a valid bearer token is required", MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge);
    return respond(c, MHD_HTTP_UNAUTHORIZED, "text/plain", "unauthorized\n", MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                   challenge, NULL);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* ---- endpoints ------------------------------------------------------------------------------ */

static enum MHD_Result serve_index_status(struct mcp_http *h, struct MHD_Connection *c)
{
    struct zk_err err;
    char *json = NULL, *body;
    cJSON *e;
    enum MHD_Result ret;
    int rc;

    zk_err_clear(&err);
    rc = tools_index_status(h->cfg, &json, &err);
    if (rc == ZK_OK) {
        ret = respond(c, MHD_HTTP_OK, "application/json", json, NULL);
        free(json);
        return ret;
    }
    log_warn("index-status failed", "error", err.msg, NULL);
    e = cJSON_CreateObject();
    if (e != NULL) {
        cJSON_AddStringToObject(e, "error", err.msg[0] ? err.msg : zk_strerror(rc));
        cJSON_AddBoolToObject(e, "retryable", zk_err_retryable(rc));
    }
    body = e != NULL ? json_print(e) : NULL;
    cJSON_Delete(e);
    /* Unreachable or slow: the service is unavailable for now. A broken answer: a bad gateway. */
    ret = respond(c, rc == ZK_ECONNECT || rc == ZK_ETIMEOUT ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_GATEWAY,
                  "application/json", body != NULL ? body : "{\"error\":\"out of memory\"}", NULL);
    free(body);
    return ret;
}

/* The media type of a header value without its parameters equals want. */
static int media_type_is(const char *value, const char *want)
{
    size_t n = strlen(want);

    while (*value == ' ')
        value++;
    return strncasecmp(value, want, n) == 0 && (value[n] == '\0' || value[n] == ';' || value[n] == ' ');
}

static enum MHD_Result respond_reply(struct MHD_Connection *c, char *reply, const char *new_id)
{
    enum MHD_Result ret;

    if (reply == NULL) /* notifications, responses, and requests cancelled meanwhile */
        return respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
    if (new_id != NULL)
        ret = respond(c, MHD_HTTP_OK, "application/json", reply, "Mcp-Session-Id", new_id, NULL);
    else
        ret = respond(c, MHD_HTTP_OK, "application/json", reply, NULL);
    free(reply);
    return ret;
}

/* While a tool call runs, this thread watches the client's socket: a client that hangs up (an agent
 * killed mid-search, nginx closing the upstream connection after its client left) cancels the call, so
 * that its search does not run on to the deadline for nobody. */
struct peer_watch {
    struct mcp_call *call;
    int fd;   /* the client's socket */
    int wake; /* an eventfd written when the call has ended */
};

static void *watch_peer(void *arg)
{
    struct peer_watch *w = arg;
    struct pollfd p[2] = {{.fd = w->fd, .events = POLLRDHUP}, {.fd = w->wake, .events = POLLIN}};

    /* Only hang-up conditions are asked of the socket, so pending input never makes this spin. */
    while (poll(p, 2, -1) >= 0 || errno == EINTR) {
        if (p[1].revents != 0)
            break;
        if ((p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
            log_info("Client disconnected; cancelling its tool call", NULL);
            mcp_call_cancel(w->call);
            break;
        }
    }
    return NULL;
}

/* Runs call while watching the connection; without a socket or a thread it simply runs. */
static char *run_watched(struct MHD_Connection *c, struct mcp_call *call)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct peer_watch w = {.call = call, .fd = ci != NULL ? ci->connect_fd : -1, .wake = -1};
    uint64_t one = 1;
    pthread_t th;
    char *reply;
    int watching = 0;

    if (w.fd >= 0 && (w.wake = eventfd(0, EFD_CLOEXEC)) >= 0)
        watching = pthread_create(&th, NULL, watch_peer, &w) == 0;
    reply = mcp_call_run(call);
    if (watching) {
        /* Adding 1 to a fresh eventfd cannot overflow it; only a signal can interrupt the write. */
        while (write(w.wake, &one, sizeof(one)) < 0 && errno == EINTR)
            ;
        pthread_join(th, NULL);
    }
    if (w.wake >= 0)
        close(w.wake);
    return reply;
}

static enum MHD_Result serve_mcp_post(struct mcp_http *h, struct MHD_Connection *c, struct req *r)
{
    struct mcp_session_opts so = {.cfg = h->cfg, .server_version = h->server_version, .rate = h->cfg->http_rate};
    const char *ctype = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *pv = header(c, "MCP-Protocol-Version");
    const char *sid = header(c, "Mcp-Session-Id");
    char new_id[SESSION_ID_BYTES * 2 + 1], *reply = NULL;
    struct mcp_call *call = NULL;
    struct mcp_session *s;
    struct hsession *hs;
    cJSON *msg;
    int is_init, rc;
    char text[128];

    if (r->too_big) {
        snprintf(text, sizeof(text), "the message is longer than %u bytes", CONNECTOR_MCP_REQUEST_MAX);
        return respond_rpc_error(c, MHD_HTTP_CONTENT_TOO_LARGE, JSONRPC_INVALID_REQUEST, text, NULL, NULL);
    }
    if (ctype != NULL && !media_type_is(ctype, "application/json"))
        return respond_rpc_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, JSONRPC_INVALID_REQUEST,
                                 "Content-Type must be application/json", NULL, NULL);
    if (!mcp_http_accept_json(header(c, MHD_HTTP_HEADER_ACCEPT)))
        return respond_rpc_error(c, MHD_HTTP_NOT_ACCEPTABLE, JSONRPC_INVALID_REQUEST,
                                 "this server answers with application/json; Accept must allow it", NULL, NULL);
    if (pv != NULL && !mcp_version_supported(pv)) {
        snprintf(text, sizeof(text), "unsupported MCP-Protocol-Version: %.40s", pv);
        return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST, text, NULL, NULL);
    }
    msg = json_parse(r->body.data != NULL ? r->body.data : "", r->body.len);
    if (msg == NULL)
        return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_PARSE_ERROR,
                                 "parse error: the body is not valid JSON", NULL, NULL);
    is_init = cJSON_IsObject(msg) && strcmp(json_str(msg, "method", ""), "initialize") == 0;

    if (sid == NULL) {
        if (!is_init) {
            cJSON_Delete(msg);
            return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
                                     "Mcp-Session-Id header required: send initialize first", NULL, NULL);
        }
        s = mcp_session_new(&so);
        if (s == NULL)
            cJSON_Delete(msg); /* accept_json, which would own it, is never called */
        if (s == NULL || mcp_session_accept_json(s, msg, &reply, &call) != ZK_OK) {
            mcp_session_free(s);
            return respond_rpc_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, JSONRPC_INTERNAL_ERROR, "out of memory",
                                     NULL, NULL);
        }
        /* initialize is answered at once; call stays NULL. */
        mcp_call_free(call);
        if (!mcp_session_initialized(s)) {
            mcp_session_free(s); /* a failed initialize leaves no session behind */
            return respond_reply(c, reply, NULL);
        }
        rc = session_add(h, s, new_id);
        if (rc != ZK_OK) {
            mcp_session_free(s);
            free(reply);
            return respond_rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, JSONRPC_INTERNAL_ERROR,
                                     rc == ZK_ETOOBIG ? "too many MCP sessions; retry later" : "out of memory",
                                     NULL, NULL);
        }
        return respond_reply(c, reply, new_id);
    }

    hs = session_get(h, sid);
    if (hs == NULL) {
        cJSON_Delete(msg);
        return respond_rpc_error(c, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST,
                                 "unknown or ended MCP session: initialize again", NULL, NULL);
    }
    rc = mcp_session_accept_json(hs->s, msg, &reply, &call);
    if (rc == ZK_OK && call != NULL) {
        reply = run_watched(c, call); /* accept left reply NULL when it deferred */
        mcp_call_free(call);
    }
    session_put(h, hs);
    if (rc != ZK_OK)
        return respond_rpc_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, JSONRPC_INTERNAL_ERROR, "out of memory", NULL,
                                 NULL);
    return respond_reply(c, reply, NULL);
}

static enum MHD_Result serve_mcp(struct mcp_http *h, struct MHD_Connection *c, const char *method, struct req *r)
{
    const char *sid;

    if (strcmp(method, "POST") == 0)
        return serve_mcp_post(h, c, r);
    if (strcmp(method, "DELETE") == 0) {
        sid = header(c, "Mcp-Session-Id");
        if (sid == NULL)
            return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
                                     "Mcp-Session-Id header required", NULL, NULL);
        if (!session_remove(h, sid))
            return respond_rpc_error(c, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST, "unknown or ended MCP session",
                                     NULL, NULL);
        return respond(c, MHD_HTTP_NO_CONTENT, NULL, NULL, NULL);
    }
    /* GET would open a server-initiated SSE stream; this server never sends anything unasked. */
    return respond_rpc_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, JSONRPC_INVALID_REQUEST,
                             "method not allowed: use POST (or DELETE to end a session)", MHD_HTTP_HEADER_ALLOW,
                             "POST, DELETE");
}

/* Checks that apply to /mcp before any body is read: who may talk to it at all. Returns a queued
 * response's result when the request is refused, or -1 to go on. */
static int mcp_gate(struct mcp_http *h, struct MHD_Connection *c)
{
    const char *origin = header(c, "Origin");
    const char *authz = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *clen = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);

    if (!mcp_http_origin_allowed(origin, h->cfg->allowed_origins)) {
        log_warn("Refused an MCP request from a foreign Origin", "origin", origin, NULL);
        return respond_rpc_error(c, MHD_HTTP_FORBIDDEN, JSONRPC_INVALID_REQUEST, "Origin not allowed", NULL,
                                 NULL);
    }
    if (!auth_check_header(h->auth, authz))
        return respond_unauthorized(c, authz, 1);
    if (clen != NULL && strtoull(clen, NULL, 10) > CONNECTOR_MCP_REQUEST_MAX)
        return respond_rpc_error(c, MHD_HTTP_CONTENT_TOO_LARGE, JSONRPC_INVALID_REQUEST,
                                 "the message is too large", NULL, NULL);
    return -1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct mcp_http *h = cls;
    struct req *r = *con_cls;
    int gate;

    (void)version;
    if (r == NULL) {
        r = calloc(1, sizeof(*r));
        if (r == NULL)
            return MHD_NO;
        buf_init(&r->body, CONNECTOR_MCP_REQUEST_MAX);
        *con_cls = r;
        /* Refusing before the body arrives means an unauthorised client cannot make us read it. */
        if (strcmp(url, "/mcp") == 0 && (gate = mcp_gate(h, c)) >= 0)
            return (enum MHD_Result)gate;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (!r->too_big && buf_append(&r->body, upload, *upload_size) != ZK_OK)
            r->too_big = 1; /* the buffer has freed itself; the rest of the body is dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/mcp") == 0)
        return serve_mcp(h, c, method, r);
    if (strcmp(url, "/auth") == 0) {
        const char *authz = header(c, MHD_HTTP_HEADER_AUTHORIZATION);

        if (auth_check_header(h->auth, authz))
            return respond(c, MHD_HTTP_OK, "text/plain", "ok\n", NULL);
        return respond_unauthorized(c, authz, 0);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n", MHD_HTTP_HEADER_ALLOW,
                       "GET", NULL);
    if (strcmp(url, "/index-status") == 0)
        return serve_index_status(h, c);
    if (strcmp(url, "/healthz") == 0)
        return respond(c, MHD_HTTP_OK, "text/plain", "ok\n", NULL);
    return respond(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", NULL);
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

int mcp_http_start(const struct mcp_http_opts *opts, struct mcp_http **out, struct zk_err *err)
{
    struct sockaddr_storage addr;
    socklen_t alen;
    struct mcp_http *h;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    int rc;

    *out = NULL;
    if ((rc = mcp_http_parse_listen(opts->listen, &addr, &alen, err)) != ZK_OK)
        return rc;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return zk_err_set(err, ZK_ENOMEM, "out of memory");
    pthread_mutex_init(&h->mu, NULL);
    h->cfg = opts->cfg;
    h->server_version = opts->server_version;
    h->auth = opts->auth;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* libmicrohttpd wants the logger first, so that problems with the later options go through it. */
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MCP_HTTP_MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (h->d == NULL) {
        pthread_mutex_destroy(&h->mu);
        free(h);
        return zk_err_set(err, ZK_EIO, "listen on %s failed (address in use or not available?)", opts->listen);
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info != NULL ? info->port : 0;
    *out = h;
    return ZK_OK;
}

int mcp_http_port(const struct mcp_http *h)
{
    return h->port;
}

void mcp_http_stop(struct mcp_http *h)
{
    struct hsession *hs, *next;

    if (h == NULL)
        return;
    /* Cancel what runs first, so that stopping the daemon, which joins every connection thread, does
     * not wait for searches to time out. */
    pthread_mutex_lock(&h->mu);
    for (hs = h->sessions; hs != NULL; hs = hs->next)
        mcp_session_close(hs->s);
    pthread_mutex_unlock(&h->mu);
    MHD_stop_daemon(h->d);
    for (hs = h->sessions; hs != NULL; hs = next) {
        next = hs->next;
        mcp_session_free(hs->s);
        free(hs);
    }
    pthread_mutex_destroy(&h->mu);
    free(h);
}
