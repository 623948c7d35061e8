/* server.h: one MCP session, independent of the transport that carries its messages.
 *
 * stdio and Streamable HTTP both hand every message they receive to a session and send back whatever
 * reply it produces. The session owns the lifecycle (initialize and version negotiation, then ping,
 * tools/list, tools/call), the in-flight tool calls that notifications/cancelled can stop, and a token
 * bucket that bounds how fast one client may call tools.
 *
 * Handling is split in two so that a transport can keep reading while a tool runs:
 * mcp_session_accept answers everything that is quick at once and registers each tools/call as in
 * flight (so a cancellation that arrives a moment later finds it), returning the slow remainder as an
 * mcp_call; mcp_call_run executes that remainder, on any thread, and mcp_call_free releases it.
 * mcp_session_handle does all of it in one go.
 *
 * A session may be used from several threads at once; its state is guarded by an internal mutex that is
 * never held while a tool runs. */
#ifndef ZK_MCP_SERVER_H
#define ZK_MCP_SERVER_H

#include "budget.h"
#include "connector/config.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#define MCP_SERVER_NAME "zoekt-connector"

/* The newest protocol revision, answered to a client asking for one this server does not know. */
#define MCP_PROTOCOL_LATEST "2025-11-25"
/* The revision a Streamable HTTP server assumes when a request carries no MCP-Protocol-Version. */
#define MCP_PROTOCOL_HTTP_DEFAULT "2025-03-26"
/* The only revision that allows JSON-RPC batches (2025-06-18 removed them again). */
#define MCP_PROTOCOL_BATCH "2025-03-26"

/* The most messages one batch may hold; a longer batch is refused as a whole (-32600, id null) with
 * the limit in the message. Batches cost little to send and much to answer (a 1 MiB batch of 19,000
 * tools/list asked for 224 MiB of reply), and no client needs many entries: the SDKs send none, and
 * 32 covers an agent's fan-out and the HTTP rate limit's default burst of 30 tool calls. */
#define MCP_BATCH_MAX 32

/* The most bytes of the replies to one batch before the rest are turned away. Each entry is printed as
 * it is made; the first that would take the reply past this, and every one after it, is answered
 * instead with a short error (JSONRPC_SERVER_ERROR, under its own id, about 120 bytes) asking to send
 * it on its own, and a tools/call answered so does not run. 2 MiB, twice the largest message a client
 * may send, holds 32 tool results at the default output budget several times over, and about 28 at
 * the largest (65536 bytes of text and the notes around it). A single message's reply is bounded by
 * the tools' output budget instead. */
#define MCP_BATCH_REPLY_MAX (2u << 20)

/* Whether v names a protocol revision this server speaks. v may be NULL (not supported). */
int mcp_version_supported(const char *v);

/* The revision to answer an initialize asking for requested (may be NULL): requested itself when
 * supported, else MCP_PROTOCOL_LATEST. Returns a static string. */
const char *mcp_version_negotiate(const char *requested);

/* A token bucket; pure, the caller passes the time in seconds on a monotonic clock. */
struct mcp_bucket {
    double tokens;
    double burst;
    double rate;
    double last;
};

void mcp_bucket_init(struct mcp_bucket *b, double burst, double rate_per_sec, double now);

/* Takes one token. Returns 1 when one was available; 0 when not, with *wait_s (may be NULL) set to the
 * seconds until one will be. */
int mcp_bucket_take(struct mcp_bucket *b, double now, double *wait_s);

struct mcp_session_opts {
    const struct connector_config *cfg; /* must outlive the session */
    const char *server_version;         /* serverInfo.version; must outlive the session */
    struct connector_rate rate;         /* burst 0: tool calls are not limited */
};

/* A session's tool calls refused by its rate limit are logged one line per run of refusals: the
 * first as it happens, then, when a call is admitted again or the session ends, one line with how many
 * were refused in all; never a line per refusal, which a client could ask for 10,000 times a second. */
struct mcp_session;
struct mcp_call;

/* A new session owned by the caller (mcp_session_free). */
struct mcp_session *mcp_session_new(const struct mcp_session_opts *opts);

/* Frees the session. No mcp_call of it may exist any more (run or freed). */
void mcp_session_free(struct mcp_session *s);

/* Asks every tool call in flight to stop and refuses new ones: used when the session ends (stdin
 * closed, SIGTERM, HTTP DELETE) while calls are still running. */
void mcp_session_close(struct mcp_session *s);

/* Whether initialize has been answered successfully. */
int mcp_session_initialized(struct mcp_session *s);

/* The negotiated protocol revision (a static string), or NULL before initialize. */
const char *mcp_session_version(struct mcp_session *s);

/* Handles a parsed message (an object, or an array for a batch). Takes ownership of msg. Sets *reply to
 * the text to send now (heap, caller frees) or NULL, and *call to the deferred tool calls (caller runs
 * or frees it) or NULL; both NULL means nothing is to be sent. hold is the request's reservation in a
 * shared budget (lib/budget.h; connector/front.h, "Memory"), which the replies are added to as they are
 * made, twice in a batch (the replies and the array joining them); a reply that finds no room is a
 * short -32000 error under its id asking to send it again, as is every later one of the batch, and a
 * tools/call answered so does not run. hold may be NULL (nothing counted); it must stay valid until
 * the call is run and its reply sent. */
void mcp_session_accept_json(struct mcp_session *s, cJSON *msg, struct budget_hold *hold, char **reply,
                             struct mcp_call **call);

/* The same for message text (len bytes, need not be NUL-terminated), counted in no budget; text that
 * is not JSON gets a -32700 reply. */
void mcp_session_accept(struct mcp_session *s, const char *text, size_t len, char **reply,
                        struct mcp_call **call);

/* Runs the deferred tool calls, once. Returns the reply text (heap, caller frees), or NULL when nothing
 * is to be sent: every call in it was cancelled. The caller still frees call afterwards. */
char *mcp_call_run(struct mcp_call *call);

/* Asks the tool calls of call to stop, as notifications/cancelled would; their replies are then not
 * sent. Safe from another thread while mcp_call_run runs, up to mcp_call_free: a transport uses it when
 * its peer has gone. */
void mcp_call_cancel(struct mcp_call *call);

/* Frees call; a call not run yet is discarded (its requests get no reply). call may be NULL. */
void mcp_call_free(struct mcp_call *call);

/* mcp_session_accept, mcp_call_run and mcp_call_free: *reply gets the text to send or NULL. */
void mcp_session_handle(struct mcp_session *s, const char *text, size_t len, char **reply);

#endif
