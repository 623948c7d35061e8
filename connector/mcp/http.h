/* http.h: the MCP Streamable HTTP transport and the connector's other HTTP endpoints, on
 * libmicrohttpd.
 *
 *   POST   /mcp           one JSON-RPC message (or a 2025-03-26 batch); requests are answered with
 *                         200 application/json, notifications and responses with 202 and no body
 *   GET    /mcp           405: this server offers no server-initiated stream
 *   DELETE /mcp           ends the session named by Mcp-Session-Id (204)
 *   GET    /auth          200 when the Authorization bearer token is accepted, else 401 (nginx
 *                         auth_request; any method is answered the same way)
 *   GET    /index-status  counts and times of the index (tools_index_status), no authentication
 *   GET    /healthz       200 while the process serves
 *
 * Sessions: initialize without Mcp-Session-Id creates one and its reply carries the new id (32 hex
 * digits from RAND_bytes); every later request must carry it (400 without, 404 when unknown or ended).
 * Other checks on /mcp, in order: Origin (403 unless absent or allowed), bearer token (401 with
 * WWW-Authenticate when tokens are configured), body size (413), Content-Type (415), Accept (406),
 * MCP-Protocol-Version (400 when present and unsupported).
 *
 * Each connection has its own thread, so a slow search never holds up other clients; while a tool call
 * runs, a second thread watches the socket and cancels the call when the client hangs up. */
#ifndef ZK_MCP_HTTP_H
#define ZK_MCP_HTTP_H

#include "connector/auth.h"
#include "connector/config.h"
#include "err.h"

#include <sys/socket.h>

#define MCP_HTTP_MAX_SESSIONS 256
#define MCP_HTTP_SESSION_IDLE_S 3600  /* a session unused this long may be dropped for a new one */
#define MCP_HTTP_MAX_CONNECTIONS 128

struct mcp_http_opts {
    const struct connector_config *cfg; /* must outlive the server */
    const char *server_version;
    struct auth *auth; /* NULL: no bearer check; must outlive the server */
    const char *listen; /* "host:port", "[v6]:port" or ":port" (loopback); port 0 picks a free one */
};

struct mcp_http;

/* Starts serving on background threads. *out is owned by the caller (mcp_http_stop). */
int mcp_http_start(const struct mcp_http_opts *opts, struct mcp_http **out, struct zk_err *err);

/* The port actually bound (useful with port 0). */
int mcp_http_port(const struct mcp_http *h);

/* Stops accepting, cancels tool calls in flight, waits for the connection threads and frees h. */
void mcp_http_stop(struct mcp_http *h);

/* Parses a listen address into addr (AF_INET or AF_INET6). ":port" and an empty host mean 127.0.0.1. */
int mcp_http_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *len,
                          struct zk_err *err);

/* Whether a request with this Origin header (NULL when absent) may use /mcp. allowed is a
 * comma-separated list of exact origins, or NULL for loopback origins only (http or https, any port,
 * host localhost, 127.0.0.1 or [::1]). An absent Origin is allowed: it comes from a non-browser client. */
int mcp_http_origin_allowed(const char *origin, const char *allowed);

/* Whether an Accept header (NULL when absent) admits a JSON answer: absent, or listing
 * application/json, application/ * or * / * (spaces added here only to keep this comment closed). */
int mcp_http_accept_json(const char *accept);

#endif
