/* queue.h: the controller's work queue of object keys ("namespace/name").
 *
 * It has the semantics of client-go's rate-limited delaying work queue, which every controller relies
 * on without thinking about it:
 * - Deduplication: a key added many times before a worker takes it is processed once.
 * - Exclusion: a key is never handed to two workers at once. A key added while it is being processed
 *   is remembered and handed out again after queue_done, so the change is not lost.
 * - Per-key exponential backoff for failures (queue_add_rate_limited): base_delay * 2^failures, capped
 *   at max_delay; queue_forget resets it after a success. queue_add brings a failing key forward (a
 *   user's fix is taken at once); queue_add_unless_retrying does not.
 * - An overall token bucket (qps, burst) on the rate-limited path, so that many failing keys cannot
 *   make the controller hammer the API server.
 * - Time-based requeues (queue_add_after) for changes that happen by themselves, such as an index
 *   going stale.
 * - queue_shutdown wakes every waiting worker; queue_get then returns ZK_ECANCELLED.
 *
 * The clock is injectable so that unit tests control time; the blocking queue_get waits on the real
 * monotonic clock, tests use queue_try_get. Thread-safe. */
#ifndef ZK_RUNTIME_QUEUE_H
#define ZK_RUNTIME_QUEUE_H

#include "err.h"

#include <stddef.h>

/* Monotonic seconds. */
typedef double queue_clock_fn(void *ud);

struct queue_opts {
    double base_delay; /* first retry delay in seconds; 0: 0.005 */
    double max_delay;  /* retry delay cap in seconds; 0: 300 */
    double qps;        /* token bucket refill rate; 0: 10 */
    double burst;      /* token bucket size; 0: 100 */
    queue_clock_fn *clock; /* NULL: CLOCK_MONOTONIC */
    void *clock_ud;
};

/* Counters for /metrics, read with queue_stats. */
struct queue_stats {
    size_t depth;            /* keys ready to be processed now */
    size_t waiting;          /* keys waiting for a delay to pass */
    unsigned long long adds; /* every add, add_after and add_rate_limited call */
    unsigned long long retries; /* add_rate_limited calls */
};

struct queue;

/* Creates a queue, owned by the caller (queue_free); opts may be NULL for the defaults. */
struct queue *queue_new(const struct queue_opts *opts);

/* Frees the queue. No thread may be using it any more. */
void queue_free(struct queue *q);

/* Adds key (copied) for processing as soon as possible. Ignored after shutdown. */
void queue_add(struct queue *q, const char *key);

/* Adds key after delay seconds (at once when delay <= 0). An earlier pending delay for the same key
 * wins over a later one, so a requeue can only be brought forward. */
void queue_add_after(struct queue *q, const char *key, double delay);

/* Adds key as queue_add does, unless it is failing and waiting for its retry: then the retry its
 * backoff set stands. For changes the key's reconcile only reacts to (its children's), so that a storm
 * of them (a namespace's worth of deletions) cannot undo the backoff of a key that keeps failing; a
 * key being processed is marked as queue_add would, so that no change it raced is lost. */
void queue_add_unless_retrying(struct queue *q, const char *key);

/* Adds key after max(its exponential backoff, the token bucket's delay) and counts one more failure
 * for it. */
void queue_add_rate_limited(struct queue *q, const char *key);

/* Clears key's failure count (call after a successful reconcile). */
void queue_forget(struct queue *q, const char *key);

/* The number of failures recorded for key since the last queue_forget. */
int queue_failures(struct queue *q, const char *key);

/* Takes the next ready key, blocking until there is one. *key is a heap string the caller owns and
 * frees, after passing it to queue_done. Returns ZK_OK, or ZK_ECANCELLED once the queue is shut down
 * (keys still queued then are left for the next leader). */
int queue_get(struct queue *q, char **key);

/* Like queue_get but never blocks: returns ZK_OK with a key, ZK_ETIMEOUT when no key is ready now, or
 * ZK_ECANCELLED after shutdown. */
int queue_try_get(struct queue *q, char **key);

/* Marks key as no longer being processed; if it was added meanwhile it becomes ready again. */
void queue_done(struct queue *q, const char *key);

/* Stops the queue and wakes every waiter. */
void queue_shutdown(struct queue *q);

void queue_stats(struct queue *q, struct queue_stats *out);

#endif
