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

#define MCP_STREAMABLE_MAX_SESSIONS 256
#define MCP_STREAMABLE_SESSION_IDLE_S 3600  /* a session unused this long may be dropped for a new one */

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
