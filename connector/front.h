/* front.h: the connector's HTTP front door, on libmicrohttpd. It owns the listening daemon, the body of
 * each request (bounded) and the route table; the MCP transport (connector/mcp/streamable) plugs in as one
 * route, and the front serves the other endpoints itself:
 *
 *   POST, GET, DELETE /mcp  the route handed in by main: the MCP Streamable HTTP transport
 *   GET    /auth            200 when the Authorization bearer token is accepted, else 401 (nginx
 *                           auth_request; any method is answered the same way)
 *   GET    /index-status    counts and times of the index (tools_index_status), no authentication; 503
 *                           when Zoekt cannot be reached in time, 502 when it answers wrongly;
 *                           ?maxAge=36h adds the stale repositories, ?repositories=all the list of
 *                           every one (400 for another value)
 *   GET    /healthz         200 while the process serves
 *   GET    /metrics         the connector's metrics (connector/metrics.h) as Prometheus text; 404 when
 *                           none are kept
 *
 * Other paths answer 404, and other methods than GET and HEAD on the front's own paths (and on unknown
 * ones) answer 405.
 *
 * A front started with metrics_only serves GET /metrics alone (404 for every other path): the listener
 * on the pod's address that Prometheus scrapes (--metrics-listen), while the front that serves agents
 * stays on the loopback behind nginx, which routes no /metrics to it.
 *
 * Each connection has its own thread, so a slow search never holds up other clients. The front knows
 * nothing of MCP: a route is a path and a few functions, so that the layers stay apart
 * (scripts/check-layers.sh). */
#ifndef ZK_CONNECTOR_FRONT_H
#define ZK_CONNECTOR_FRONT_H

#include "budget.h"
#include "connector/auth.h"
#include "connector/config.h"
#include "err.h"

#include <microhttpd.h>
#include <stddef.h>
#include <sys/socket.h>

#define FRONT_MAX_CONNECTIONS 128
/* A metrics_only front has one client, Prometheus, which scrapes over one connection at a time: a few
 * connections are enough, and a peer on the network that opens more cannot hold more threads. */
#define FRONT_METRICS_CONNECTIONS 8
/* Slow clients: a connection has this long, from its opening or from its last answer, to deliver a
 * complete request (headers and body); then it is shut down, whatever trickles in. Also the idle
 * timeout between two requests; nginx in the search pod closes its idle connections to the connector
 * sooner (controller/assets/nginx.conf, keepalive_timeout), so that it never sends on one the
 * connector is closing. HTTP/1.1 requests without Host are refused (400). */
#define FRONT_REQUEST_DEADLINE_S 30
#define FRONT_BODY_MAX CONNECTOR_MCP_REQUEST_MAX /* bound on the body of any request */
/* Memory: every request holds in cfg->request_budget (CONNECTOR_REQUESTS_MEMORY_MAX for the whole
 * process) what it costs until its answer is sent: FRONT_BODY_FACTOR times its body as the body
 * arrives (the buffer, which doubles), its route's parse_cost once the body is in, and the copy of its
 * answer, which stays until the client has read it, however slowly. A request that finds no room gets
 * 503 with Retry-After: 1 and costs nothing more; its body is dropped unread. What a route builds on the
 * way (a batch's replies) it holds in the same budget itself. Without a budget (cfg NULL or no
 * request_budget) only the per-request bounds apply. */
#define FRONT_BODY_FACTOR 2

/* A route's gate answers this when the request may go on to its body. */
#define FRONT_GO_ON (-1)

/* A request's body as the front read it. data is NULL when the body was empty; too_big is set when it
 * was longer than FRONT_BODY_MAX, in which case the rest was dropped and data is NULL. */
struct front_body {
    const char *data;
    size_t len;
    int too_big;
};

/* A path served by someone other than the front. The functions are called on the connection's thread;
 * ctx is theirs and must outlive the front. */
struct front_route {
    const char *path; /* matched exactly */
    void *ctx;
    /* Called once the headers are in, before any body is read, so that a refused client cannot make the
     * server read its body. Returns FRONT_GO_ON, or the result of the response it queued. May be NULL. */
    int (*gate)(void *ctx, struct MHD_Connection *c);
    /* Answers the request: queues a response and returns its result. Any method reaches it. */
    enum MHD_Result (*serve)(void *ctx, struct MHD_Connection *c, const char *method, const struct front_body *body);
    /* What parsing a body of len bytes may hold beyond the body itself, reserved in the budget before
     * serve is called (see "Memory" above). May be NULL: nothing. */
    size_t (*parse_cost)(size_t len);
    /* Called by front_stop before the daemon stops (and waits for every connection thread), so that
     * requests in flight end at once rather than at their deadlines. May be NULL. */
    void (*cancel)(void *ctx);
};

struct front_opts {
    const struct connector_config *cfg; /* must outlive the front */
    struct auth *auth;                  /* NULL: no bearer check on /auth; must outlive the front */
    const char *listen; /* "host:port", "[v6]:port" or ":port" (loopback); port 0 picks a free one */
    const struct front_route *routes; /* copied; what they point to must outlive the front */
    size_t nroutes;
    unsigned request_deadline_s; /* 0: FRONT_REQUEST_DEADLINE_S (tests use less) */
    int metrics_only; /* serve GET /metrics alone, on at most FRONT_METRICS_CONNECTIONS; no routes */
};

struct front;

/* Starts serving on background threads. *out is owned by the caller (front_stop). */
int front_start(const struct front_opts *opts, struct front **out, struct zk_err *err);

/* The port actually bound (useful with port 0). */
int front_port(const struct front *f);

/* Cancels the routes' requests in flight, stops accepting, waits for the connection threads and frees
 * f. f may be NULL. */
void front_stop(struct front *f);

/* Parses a listen address into addr (AF_INET or AF_INET6). ":port" and an empty host mean 127.0.0.1. */
int front_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *len, struct zk_err *err);

/* ---- for routes: the one place responses are built ------------------------------------------- */

/* The value of request header name, or NULL when absent. */
const char *front_header(struct MHD_Connection *c, const char *name);

/* Queues a response with body (may be NULL; copied) and extra headers given as name, value pairs ending
 * with NULL. The copy counts in the request's budget until it is sent; without room for it the answer
 * is a 503 with Retry-After instead (see "Memory" above). */
enum MHD_Result front_respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body, ...);

/* What the request on c holds in the front's budget, for a route that builds large things on the way
 * (see "Memory" above); NULL for a connection the front did not see open. Only for the connection's
 * own thread, until the answer is queued. */
struct budget_hold *front_request_hold(struct MHD_Connection *c);

/* Who sent the request on c, as an address in text (at most FRONT_CLIENT_MAX bytes with its NUL): the
 * peer's address, or, when the peer is on the loopback (the gateway's nginx in the same pod, which
 * appends the address it saw to X-Forwarded-For), the last address of that header. The connector
 * listens on the loopback in the search pod, so only nginx, or a process of the pod, can name an
 * address there. "unknown" when neither can be read. */
#define FRONT_CLIENT_MAX 64
void front_client_address(struct MHD_Connection *c, char *out, size_t size);

/* The WWW-Authenticate challenge of a 401, for a request whose Authorization header was authz (NULL
 * when absent): a presented token that was refused is named an invalid one. */
const char *front_auth_challenge(const char *authz);

#endif
