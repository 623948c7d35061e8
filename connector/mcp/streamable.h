/* streamable.h: the MCP Streamable HTTP transport, served on /mcp as a route of the connector's HTTP front door
 * (connector/front.h, which owns the daemon and the other endpoints).
 *
 *   POST   /mcp  one JSON-RPC message (or a 2025-03-26 batch); requests are answered with 200
 *                application/json, notifications and responses with 202 and no body
 *   GET    /mcp  405: this server offers no server-initiated stream
 *   DELETE /mcp  ends the session named by Mcp-Session-Id (204)
 *
 * Sessions: initialize without Mcp-Session-Id creates one and its reply carries the new id (32 hex
 * digits from RAND_bytes); every later request must carry it (400 without, 404 when unknown or ended).
 * Other checks on /mcp, in order: Origin (403 unless absent or allowed), bearer token (401 with
 * WWW-Authenticate when tokens are configured), body size (413), Content-Type (415), Accept (406),
 * MCP-Protocol-Version (400 when present and unsupported). The first three run in the route's gate,
 * before the front reads the body.
 *
 * While a tool call runs, the transport's watching thread (connector/mcp/peerwatch.h) looks after the
 * client's socket and cancels the call when the client hangs up. */
#ifndef ZK_MCP_STREAMABLE_H
#define ZK_MCP_STREAMABLE_H

#include "connector/auth.h"
#include "connector/config.h"
#include "connector/front.h"
#include "err.h"

/* The session table and who makes room in it. Each session belongs to the client that opened it, by
 * address (front_client_address: the agent's as the gateway's nginx saw it), and a client holds at
 * most MCP_STREAMABLE_SESSIONS_PER_CLIENT of the table's MCP_STREAMABLE_MAX_SESSIONS, so that one
 * client, token or not, cannot take the places of all the others: filling the table takes four
 * addresses. An initialize from a client at its share makes room among that client's own sessions only;
 * one arriving when the table is full makes room among all. Either way the session that goes is one no
 * request is using at that moment, in this order:
 * 1. a session that has never had a tool call admitted and has seen no request for
 *    MCP_STREAMABLE_UNUSED_GRACE_S, the one idle longest: initialize costs a client nothing, so a
 *    flood of them (245 in 0.2 s once filled the table) may only ever push out sessions like itself,
 *    and an agent's handshake (initialize, notifications/initialized, tools/list, its first call)
 *    has that long between its steps before it is exposed;
 * 2. else a session idle for MCP_STREAMABLE_SESSION_IDLE_S, the one idle longest, however it was used.
 * A session ended so gets 404 on its next request, and its client starts a new one, as the
 * specification requires. When neither kind exists the initialize gets 503 with Retry-After, saying
 * which bound it met. An agent that has made a tool call therefore keeps its session for an hour of
 * silence, whatever a flood of initialize does; agents behind the same address as a flood (one NAT,
 * one machine) share that address's 64 places with it. Behind an Ingress, nginx sees the ingress
 * controller's address for every agent (docs/security.md says what that means). */
#define MCP_STREAMABLE_SESSIONS_PER_CLIENT 64
#define MCP_STREAMABLE_MAX_SESSIONS 256
#define MCP_STREAMABLE_UNUSED_GRACE_S 5
#define MCP_STREAMABLE_SESSION_IDLE_S 3600

struct mcp_streamable_opts {
    const struct connector_config *cfg; /* must outlive the transport */
    const char *server_version;
    struct auth *auth; /* NULL: no bearer check; must outlive the transport */
};

struct mcp_streamable;

/* Creates the transport with an empty session table. *out is owned by the caller (mcp_streamable_free).
 * Returns ZK_OK, or ZK_EIO when the thread that watches clients cannot be started. */
int mcp_streamable_new(const struct mcp_streamable_opts *opts, struct mcp_streamable **out, struct zk_err *err);

/* The /mcp route to hand to front_start; h must outlive the front it is handed to. */
struct front_route mcp_streamable_route(struct mcp_streamable *h);

/* Ends every session and frees h. Call it after front_stop, which has cancelled the tool calls in
 * flight and waited for the connection threads. h may be NULL. */
void mcp_streamable_free(struct mcp_streamable *h);

/* Whether a request with this Origin header (NULL when absent) may use /mcp. allowed is a
 * comma-separated list of exact origins, or NULL for loopback origins only (http or https, any port,
 * host localhost, 127.0.0.1 or [::1]). An absent Origin is allowed: it comes from a non-browser client. */
int mcp_streamable_origin_allowed(const char *origin, const char *allowed);

/* Whether an Accept header (NULL when absent) admits a JSON answer: absent, or listing
 * application/json, application/ * or * / * (spaces added here only to keep this comment closed). */
int mcp_streamable_accept_json(const char *accept);

#endif
