/* streamable.c: see streamable.h. */
#include "connector/mcp/streamable.h"

#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/peerwatch.h"
#include "connector/mcp/server.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SESSION_ID_BYTES 16

struct hsession {
    char id[SESSION_ID_BYTES * 2 + 1];
    struct mcp_session *s;
    int refs;         /* one for the table while listed, one per request using it */
    double last_used; /* monotonic seconds */
    int called;       /* a tool call was admitted in it (the eviction order, streamable.h) */
    char client[FRONT_CLIENT_MAX]; /* who opened it (front_client_address) */
    struct hsession *next;
};

struct mcp_streamable {
    const struct connector_config *cfg;
    const char *server_version;
    struct auth *auth;
    pthread_mutex_t mu; /* guards the session table */
    struct hsession *sessions;
    int nsessions;
    struct peerwatch *watch; /* the client sockets of the tool calls in flight */
};

/* ---- pure helpers ---------------------------------------------------------------------------- */

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

int mcp_streamable_origin_allowed(const char *origin, const char *allowed)
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

int mcp_streamable_accept_json(const char *accept)
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

static struct hsession *session_get(struct mcp_streamable *h, const char *id)
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

/* Releases a request's reference to hs; called says whether the request had a tool call admitted. */
static void session_put(struct mcp_streamable *h, struct hsession *hs, int called)
{
    int last;

    pthread_mutex_lock(&h->mu);
    hs->called |= called;
    last = --hs->refs == 0;
    pthread_mutex_unlock(&h->mu);
    if (last) {
        mcp_session_free(hs->s);
        free(hs);
    }
}

/* Unlinks hs (h->mu held), asks its tool calls to stop and drops the table's reference; returns
 * whether that was the last one, in which case the caller frees hs after unlocking. */
static int session_unlink_locked(struct mcp_streamable *h, struct hsession **pp)
{
    struct hsession *hs = *pp;

    *pp = hs->next;
    h->nsessions--;
    mcp_session_close(hs->s);
    return --hs->refs == 0;
}

/* Ends the session named id. Returns 1 when it existed. */
static int session_remove(struct mcp_streamable *h, const char *id)
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

/* The link to the session that makes room for a new one (h->mu held), by the order streamable.h
 * states, among the sessions of client (NULL: among all), or NULL when none may go. */
static struct hsession **session_victim_locked(struct mcp_streamable *h, double now, const char *client)
{
    struct hsession **pp, **unused = NULL, **idle = NULL, *hs;

    for (pp = &h->sessions; *pp != NULL; pp = &(*pp)->next) {
        hs = *pp;
        if (hs->refs != 1) /* a request is using it */
            continue;
        if (client != NULL && strcmp(hs->client, client) != 0)
            continue;
        if (!hs->called && now - hs->last_used >= MCP_STREAMABLE_UNUSED_GRACE_S &&
            (unused == NULL || hs->last_used < (*unused)->last_used))
            unused = pp;
        if (now - hs->last_used >= MCP_STREAMABLE_SESSION_IDLE_S &&
            (idle == NULL || hs->last_used < (*idle)->last_used))
            idle = pp;
    }
    return unused != NULL ? unused : idle;
}

/* Where a new session of a client goes, or why it has none. */
enum session_refusal { SESSION_PLACED, SESSION_TABLE_FULL, SESSION_CLIENT_FULL };

/* Where a new session of client goes (h->mu held): *victim is set to the link of the session that must
 * make room for it, or NULL when there is room without. A client at its share makes room among its own
 * sessions only; otherwise a full table makes room among all. */
static enum session_refusal session_place_locked(struct mcp_streamable *h, const char *client, double now,
                                                 struct hsession ***victim)
{
    struct hsession *hs;
    int own = 0;

    *victim = NULL;
    for (hs = h->sessions; hs != NULL; hs = hs->next)
        own += strcmp(hs->client, client) == 0;
    if (own >= MCP_STREAMABLE_SESSIONS_PER_CLIENT) {
        *victim = session_victim_locked(h, now, client);
        return *victim != NULL ? SESSION_PLACED : SESSION_CLIENT_FULL;
    }
    if (h->nsessions < MCP_STREAMABLE_MAX_SESSIONS)
        return SESSION_PLACED;
    *victim = session_victim_locked(h, now, NULL);
    return *victim != NULL ? SESSION_PLACED : SESSION_TABLE_FULL;
}

/* Whether an initialize from client now would find a place (SESSION_PLACED), or why not. */
static enum session_refusal session_has_room(struct mcp_streamable *h, const char *client)
{
    struct hsession **victim;
    enum session_refusal placed;

    pthread_mutex_lock(&h->mu);
    placed = session_place_locked(h, client, monotime_s(), &victim);
    pthread_mutex_unlock(&h->mu);
    return placed;
}

/* Lists s, opened by client, under a new random id (copied to id_out), in the place
 * session_place_locked finds; when there is none, returns ZK_EBUSY with the reason in *why. Returns
 * ZK_EIO when OpenSSL's generator cannot make an id. Takes ownership of s on success only. */
static int session_add(struct mcp_streamable *h, struct mcp_session *s, const char *client, char *id_out,
                       enum session_refusal *why)
{
    unsigned char raw[SESSION_ID_BYTES];
    struct hsession *hs, **victim_link, *victim = NULL;
    enum session_refusal placed;
    double now = monotime_s();
    int i, free_victim = 0, was_called = 0, own = 0;

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return ZK_EIO;
    hs = mem_calloc(1, sizeof(*hs));
    for (i = 0; i < SESSION_ID_BYTES; i++)
        snprintf(hs->id + 2 * i, 3, "%02x", raw[i]);
    hs->s = s;
    hs->refs = 1;
    hs->last_used = now;
    snprintf(hs->client, sizeof(hs->client), "%s", client);
    pthread_mutex_lock(&h->mu);
    placed = session_place_locked(h, client, now, &victim_link);
    if (placed != SESSION_PLACED) {
        pthread_mutex_unlock(&h->mu);
        free(hs);
        *why = placed;
        return ZK_EBUSY;
    }
    if (victim_link != NULL) {
        victim = *victim_link;
        was_called = victim->called;
        own = strcmp(victim->client, client) == 0;
        free_victim = session_unlink_locked(h, victim_link);
    }
    hs->next = h->sessions;
    h->sessions = hs;
    h->nsessions++;
    pthread_mutex_unlock(&h->mu);
    if (victim != NULL)
        log_info(was_called ? "Ended the MCP session idle longest to make room for a new one"
                            : "Ended an MCP session that never made a tool call to make room for a new one",
                 "of", own ? "the same client" : "another client", "client", client, NULL);
    if (free_victim) {
        mcp_session_free(victim->s);
        free(victim);
    }
    memcpy(id_out, hs->id, sizeof(hs->id));
    return ZK_OK;
}

/* ---- responses ------------------------------------------------------------------------------ */

/* An HTTP error on /mcp with a JSON-RPC error body (id null), as the transport specification
 * suggests, plus optional extra header. */
static enum MHD_Result respond_rpc_error(struct MHD_Connection *c, unsigned status, int code, const char *msg,
                                         const char *hname, const char *hvalue)
{
    cJSON *e = jsonrpc_error(NULL, code, msg, NULL);
    char *text = json_print_utf8(e);
    enum MHD_Result ret;

    cJSON_Delete(e);
    if (hname != NULL)
        ret = front_respond(c, status, "application/json", text, hname, hvalue, NULL);
    else
        ret = front_respond(c, status, "application/json", text, NULL);
    free(text);
    return ret;
}

/* The 503 of an initialize that finds no place (session_place_locked). There is one again once a
 * never-used session has waited out its grace, which Retry-After says. */
static enum MHD_Result respond_no_place(struct MHD_Connection *c, enum session_refusal why)
{
    char retry[16], msg[128];

    snprintf(retry, sizeof(retry), "%d", MCP_STREAMABLE_UNUSED_GRACE_S);
    if (why == SESSION_CLIENT_FULL)
        snprintf(msg, sizeof(msg),
                 "too many MCP sessions from this client (it holds %d); end unused ones (DELETE) or retry later",
                 MCP_STREAMABLE_SESSIONS_PER_CLIENT);
    else
        snprintf(msg, sizeof(msg), "too many MCP sessions; retry later");
    return respond_rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, JSONRPC_INTERNAL_ERROR, msg, "Retry-After", retry);
}

/* ---- the /mcp route ------------------------------------------------------------------------- */

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
        return front_respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
    if (new_id != NULL)
        ret = front_respond(c, MHD_HTTP_OK, "application/json", reply, "Mcp-Session-Id", new_id, NULL);
    else
        ret = front_respond(c, MHD_HTTP_OK, "application/json", reply, NULL);
    free(reply);
    return ret;
}

/* A client that hangs up while its tool call runs (an agent killed mid-search, nginx closing the
 * upstream connection after its client left) cancels the call, so that its search does not run on to
 * the deadline for nobody. */
static void on_hangup(void *arg)
{
    log_info("Client disconnected; cancelling its tool call", NULL);
    mcp_call_cancel(arg);
}

/* Runs call while the transport's watch looks after the connection; without a socket or a free watch
 * it simply runs. */
static char *run_watched(struct mcp_streamable *h, struct MHD_Connection *c, struct mcp_call *call)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int watch = ci != NULL ? pw_watch(h->watch, ci->connect_fd, on_hangup, call) : -1;
    char *reply = mcp_call_run(call);

    pw_unwatch(h->watch, watch);
    return reply;
}

static enum MHD_Result serve_mcp_post(struct mcp_streamable *h, struct MHD_Connection *c, const struct front_body *r)
{
    struct mcp_session_opts so = {.cfg = h->cfg, .server_version = h->server_version, .rate = h->cfg->http_rate};
    const char *ctype = front_header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *pv = front_header(c, "MCP-Protocol-Version");
    const char *sid = front_header(c, "Mcp-Session-Id");
    char new_id[SESSION_ID_BYTES * 2 + 1], *reply = NULL, shown[JSONRPC_SHOW_SIZE];
    struct mcp_call *call = NULL;
    struct mcp_session *s;
    struct hsession *hs;
    cJSON *msg;
    int is_init, rc, called;
    enum session_refusal refused;
    char text[JSONRPC_SHOW_SIZE + 64], client[FRONT_CLIENT_MAX];

    if (r->too_big) {
        snprintf(text, sizeof(text), "the message is longer than %u bytes", CONNECTOR_MCP_REQUEST_MAX);
        return respond_rpc_error(c, MHD_HTTP_CONTENT_TOO_LARGE, JSONRPC_INVALID_REQUEST, text, NULL, NULL);
    }
    if (ctype != NULL && !media_type_is(ctype, "application/json"))
        return respond_rpc_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, JSONRPC_INVALID_REQUEST,
                                 "Content-Type must be application/json", NULL, NULL);
    if (!mcp_streamable_accept_json(front_header(c, MHD_HTTP_HEADER_ACCEPT)))
        return respond_rpc_error(c, MHD_HTTP_NOT_ACCEPTABLE, JSONRPC_INVALID_REQUEST,
                                 "this server answers with application/json; Accept must allow it", NULL, NULL);
    if (pv != NULL && !mcp_version_supported(pv)) {
        jsonrpc_show(shown, sizeof(shown), pv);
        snprintf(text, sizeof(text), "unsupported MCP-Protocol-Version: %s", shown);
        return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST, text, NULL, NULL);
    }
    msg = jsonrpc_parse(r->data != NULL ? r->data : "", r->len);
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
        /* No place refuses at once: under a flood of initialize, the refused ones then cost neither a
         * session nor a line in the log. session_add decides again, for the one that races another
         * into the last place. */
        front_client_address(c, client, sizeof(client));
        if ((refused = session_has_room(h, client)) != SESSION_PLACED) {
            cJSON_Delete(msg);
            return respond_no_place(c, refused);
        }
        s = mcp_session_new(&so);
        mcp_session_accept_json(s, msg, front_request_hold(c), &reply, &call);
        /* initialize is answered at once; call stays NULL. */
        mcp_call_free(call);
        if (!mcp_session_initialized(s)) {
            mcp_session_free(s); /* a failed initialize leaves no session behind */
            return respond_reply(c, reply, NULL);
        }
        rc = session_add(h, s, client, new_id, &refused);
        if (rc != ZK_OK) {
            mcp_session_free(s);
            free(reply);
            if (rc == ZK_EBUSY)
                return respond_no_place(c, refused);
            return respond_rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, JSONRPC_INTERNAL_ERROR,
                                     "cannot make a random session id; retry later", NULL, NULL);
        }
        return respond_reply(c, reply, new_id);
    }

    hs = session_get(h, sid);
    if (hs == NULL) {
        cJSON_Delete(msg);
        return respond_rpc_error(c, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST,
                                 "unknown or ended MCP session: initialize again", NULL, NULL);
    }
    mcp_session_accept_json(hs->s, msg, front_request_hold(c), &reply, &call);
    called = call != NULL;
    if (called) {
        reply = run_watched(h, c, call); /* accept left reply NULL when it deferred */
        mcp_call_free(call);
    }
    session_put(h, hs, called);
    return respond_reply(c, reply, NULL);
}

static enum MHD_Result serve_mcp(void *ctx, struct MHD_Connection *c, const char *method,
                                 const struct front_body *r)
{
    struct mcp_streamable *h = ctx;
    const char *sid;

    if (strcmp(method, "POST") == 0)
        return serve_mcp_post(h, c, r);
    if (strcmp(method, "DELETE") == 0) {
        sid = front_header(c, "Mcp-Session-Id");
        if (sid == NULL)
            return respond_rpc_error(c, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
                                     "Mcp-Session-Id header required", NULL, NULL);
        if (!session_remove(h, sid))
            return respond_rpc_error(c, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST, "unknown or ended MCP session",
                                     NULL, NULL);
        return front_respond(c, MHD_HTTP_NO_CONTENT, NULL, NULL, NULL);
    }
    /* GET would open a server-initiated SSE stream; this server never sends anything unasked. */
    return respond_rpc_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, JSONRPC_INVALID_REQUEST,
                             "method not allowed: use POST (or DELETE to end a session)", MHD_HTTP_HEADER_ALLOW,
                             "POST, DELETE");
}

/* Checks that apply to /mcp before any body is read: who may talk to it at all. Returns a queued
 * response's result when the request is refused, or FRONT_GO_ON. */
static int mcp_gate(void *ctx, struct MHD_Connection *c)
{
    struct mcp_streamable *h = ctx;
    const char *origin = front_header(c, "Origin");
    const char *authz = front_header(c, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *clen = front_header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);

    if (!mcp_streamable_origin_allowed(origin, h->cfg->allowed_origins)) {
        log_warn("Refused an MCP request from a foreign Origin", "origin", origin, NULL);
        return respond_rpc_error(c, MHD_HTTP_FORBIDDEN, JSONRPC_INVALID_REQUEST, "Origin not allowed", NULL,
                                 NULL);
    }
    if (!auth_check_header(h->auth, authz))
        return respond_rpc_error(c, MHD_HTTP_UNAUTHORIZED, JSONRPC_INVALID_REQUEST, "a valid bearer token is required",
                                 MHD_HTTP_HEADER_WWW_AUTHENTICATE, front_auth_challenge(authz));
    if (clen != NULL && strtoull(clen, NULL, 10) > CONNECTOR_MCP_REQUEST_MAX)
        return respond_rpc_error(c, MHD_HTTP_CONTENT_TOO_LARGE, JSONRPC_INVALID_REQUEST,
                                 "the message is too large", NULL, NULL);
    return FRONT_GO_ON;
}

/* Asks the tool calls of every session to stop: the front calls this before it waits for the
 * connection threads, so that stopping does not wait for searches to time out. */
static void mcp_cancel(void *ctx)
{
    struct mcp_streamable *h = ctx;
    struct hsession *hs;

    pthread_mutex_lock(&h->mu);
    for (hs = h->sessions; hs != NULL; hs = hs->next)
        mcp_session_close(hs->s);
    pthread_mutex_unlock(&h->mu);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

int mcp_streamable_new(const struct mcp_streamable_opts *opts, struct mcp_streamable **out, struct zk_err *err)
{
    struct mcp_streamable *h;
    int rc;

    *out = NULL;
    h = mem_calloc(1, sizeof(*h));
    if ((rc = pw_new(FRONT_MAX_CONNECTIONS, &h->watch, err)) != ZK_OK) {
        free(h);
        return rc;
    }
    mem_mutex_init(&h->mu);
    h->cfg = opts->cfg;
    h->server_version = opts->server_version;
    h->auth = opts->auth;
    *out = h;
    return ZK_OK;
}

struct front_route mcp_streamable_route(struct mcp_streamable *h)
{
    struct front_route r = {.path = "/mcp",
                            .ctx = h,
                            .gate = mcp_gate,
                            .serve = serve_mcp,
                            .parse_cost = jsonrpc_parse_cost,
                            .cancel = mcp_cancel};

    return r;
}

void mcp_streamable_free(struct mcp_streamable *h)
{
    struct hsession *hs, *next;

    if (h == NULL)
        return;
    for (hs = h->sessions; hs != NULL; hs = next) {
        next = hs->next;
        mcp_session_free(hs->s);
        free(hs);
    }
    pthread_mutex_destroy(&h->mu);
    pw_free(h->watch);
    free(h);
}
