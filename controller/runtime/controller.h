/* controller.h: the generic controller loop, as controller-runtime's Controller and Manager run it.
 *
 * A reconciler is one function, reconcile(key) -> requeue-after or an error; everything around it is
 * here and knows nothing of what the keys name:
 * - Gating: no reconcile runs before every informer has listed (a reconcile over a half-filled cache
 *   would see objects as missing and write them again) and, with leader election, before this replica
 *   holds the Lease. Then `workers` threads start.
 * - The loop of each worker: take a key from the queue, reconcile it, then on success forget its
 *   failures and, when the reconciler asked, requeue it after that many seconds; on failure requeue it
 *   rate-limited (per-key backoff and the queue's token bucket); mark it done either way.
 * - The periodic resync: every resync period, every key the primary informer caches is queued, so
 *   drift nobody was told about (a missed event, time passing) is still seen.
 * - Metrics: each reconcile's duration and outcome.
 *
 * The caller owns the queue, the informers (which feed the queue), the leader and the metrics, and
 * decides what a lost Lease means (leader_lost): the operator exits. controller_stop shuts the queue
 * down, lets in-flight reconciles finish and joins every thread; keys still queued are left for the
 * next leader. Thread-safe as far as the functions below say. */
#ifndef ZK_RUNTIME_CONTROLLER_H
#define ZK_RUNTIME_CONTROLLER_H

#include "controller/runtime/informer.h"
#include "controller/runtime/leader.h"
#include "controller/runtime/metrics.h"
#include "controller/runtime/queue.h"
#include "err.h"

/* Reconciles key. Returns ZK_OK with *requeue_after set to the seconds after which key should run
 * again by itself (0: only on a change), or an error (message in err) to retry with backoff. Called
 * from a worker thread; the queue never hands one key to two workers at once. */
typedef int controller_reconcile_fn(void *ud, const char *key, double *requeue_after, struct zk_err *err);

struct controller_opts {
    controller_reconcile_fn *reconcile;
    void *ud;
    const char *key_label;               /* the log field that names a key, e.g. "corpus" */
    struct queue *queue;                 /* borrowed */
    struct informer *const *informers;   /* borrowed; all must have listed before the first reconcile */
    int ninformers;
    struct informer *primary;            /* borrowed; the resync queues every key it caches */
    double resync_period;                /* seconds; <= 0: no resync */
    int workers;                         /* 1 to CONTROLLER_MAX_WORKERS */
    struct leader *leader;               /* borrowed; NULL: reconcile without election */
    struct metrics *metrics;             /* borrowed; NULL: not counted */
};

#define CONTROLLER_MAX_WORKERS 64

struct controller;

/* Starts the thread that gates, starts the workers and resyncs. Returns ZK_OK with *out owned by the
 * caller (controller_stop, then controller_free), or ZK_EINVAL (bad options) or ZK_EIO (no thread). */
int controller_start(const struct controller_opts *o, struct controller **out, struct zk_err *err);

/* Whether the workers run: the caches are complete and this replica leads. */
int controller_started(struct controller *c);

/* Stops handing out keys, waits for in-flight reconciles to finish and joins every thread. Safe to
 * call twice; the queue is shut down for good. */
void controller_stop(struct controller *c);
void controller_free(struct controller *c);

#endif
