/* peerwatch.h: one thread that watches the client sockets of the tool calls in flight and says when a
 * client hangs up, so that its call can be cancelled instead of running on to its deadline for nobody.
 *
 * One thread for every call, rather than one per call: starting and joining a thread for each search
 * cost more than the rest of the connector's own work on a small answer. A watch is an epoll
 * registration for hang-up conditions only (pending input never wakes the thread). */
#ifndef ZK_MCP_PEERWATCH_H
#define ZK_MCP_PEERWATCH_H

#include "err.h"

#include <stddef.h>

struct peerwatch;

/* Called on the watching thread when the watched socket's peer has hung up, at most once per watch,
 * never after pw_unwatch for that watch has returned. Must not call back into the peerwatch. */
typedef void pw_hangup_fn(void *arg);

/* Starts the watching thread with room for max_watches at once. *out is owned by the caller
 * (pw_free). Returns ZK_OK, or ZK_EIO when the epoll set or the thread cannot be made. */
int pw_new(size_t max_watches, struct peerwatch **out, struct zk_err *err);

/* Stops the thread and frees w; no watch may be left. NULL is ignored. */
void pw_free(struct peerwatch *w);

/* Watches fd until pw_unwatch: on hang-up, fn(arg). Returns a handle for pw_unwatch, or -1 when fd
 * cannot be watched (every slot taken, or epoll refused it); the caller then goes on unwatched. fd and
 * arg stay the caller's, and must stay valid until pw_unwatch returns. */
int pw_watch(struct peerwatch *w, int fd, pw_hangup_fn *fn, void *arg);

/* Ends the watch; once this returns, fn is neither running nor called for it. */
void pw_unwatch(struct peerwatch *w, int handle);

#endif
