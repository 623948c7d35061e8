/* fanout.h: the same call for each of n items, on several threads at once.
 *
 * For work that waits on the network rather than on the CPU, such as the writes of one reconcile: nine
 * requests in flight together take about as long as one, where one after the other they take nine
 * round trips. */
#ifndef ZK_FANOUT_H
#define ZK_FANOUT_H

#include <stddef.h>

/* Called once for each index; calls for different indexes may run at the same time, so fn must only
 * touch what belongs to its index, or guard what it shares. */
typedef void fanout_fn(void *ud, size_t index);

/* Calls fn(ud, i) once for every i in [0, n), on up to max_threads threads at once (the caller's own
 * among them), and returns when every call has returned. When a thread cannot be started, the calls run
 * on the threads already there (at worst the caller's alone), so every index is still served. */
void fanout_run(size_t n, size_t max_threads, fanout_fn *fn, void *ud);

#endif
