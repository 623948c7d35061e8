/* stdio.h: the MCP stdio transport: one JSON-RPC message per line on stdin, one reply per line on
 * stdout, logs on stderr only.
 *
 * The reader never waits for a tool: every tools/call runs on a worker thread, so that a
 * notifications/cancelled arriving meanwhile is read at once and aborts the search in flight. Workers
 * are started as calls need them and wait for the next call between calls; at most
 * MCP_STDIO_MAX_WORKERS tool calls run at a time, and beyond that the reader waits for one to finish.
 * The stop signals (lib/sig.h) are blocked in the transport's threads and taken only while the reader
 * waits for input, so that the signal which sets *stop always interrupts that wait. */
#ifndef ZK_MCP_STDIO_H
#define ZK_MCP_STDIO_H

#include "connector/config.h"
#include "err.h"

#include <stdatomic.h>

#define MCP_STDIO_MAX_WORKERS 8

struct mcp_stdio_opts {
    const struct connector_config *cfg;
    const char *server_version;
    int in_fd;                          /* normally 0 */
    int out_fd;                         /* normally 1 */
    const atomic_int *stop;             /* set (by a signal handler) to end the loop; may be NULL */
};

/* Serves one session until end of input or *stop. At end of input the tool calls still running are
 * finished and their replies written; on *stop (or when stdout fails) they are cancelled. Either way
 * they are waited for before returning. Returns ZK_OK, or ZK_EIO when stdin or stdout failed. A line
 * longer than CONNECTOR_MCP_REQUEST_MAX is answered with an error and skipped; it does not end the
 * session. */
int mcp_stdio_run(const struct mcp_stdio_opts *opts, struct zk_err *err);

#endif
