/* metrics.h: the operator's Prometheus metrics, kept in memory and rendered as text for /metrics.
 *
 * The set is fixed (no general registry): reconcile counts, errors and a duration histogram; the work
 * queue's depth, adds and retries (sampled from the queue at scrape time); whether this replica leads;
 * and the API requests the controller itself makes, by verb and HTTP status. The last one is how tests
 * and operators see that a steady-state resync issues no write. Thread-safe. */
#ifndef ZK_RUNTIME_METRICS_H
#define ZK_RUNTIME_METRICS_H

#include "buf.h"
#include "controller/runtime/queue.h"
#include "err.h"

struct metrics;

/* A new set of metrics, all zero, owned by the caller (metrics_free). */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* Records one finished reconcile that took seconds; ok is 0 for a failed one. */
void metrics_reconcile_done(struct metrics *m, double seconds, int ok);

/* Records one API request: verb is a short constant ("get", "apply", "create", "status", ...) that is
 * not copied and must be a string literal; code is the HTTP status, or 0 when no answer came. */
void metrics_api_request(struct metrics *m, const char *verb, long code);

/* Records the outcome of a call that returned rc, with the kube_err's http_status: success counts as
 * code 200 whatever the exact 2xx status was. */
void metrics_api_result(struct metrics *m, const char *verb, int rc, long http_status);

/* The number of requests recorded for verb with any status (for tests and logs). */
unsigned long long metrics_api_count(struct metrics *m, const char *verb);

void metrics_set_leader(struct metrics *m, int leading);

/* Whether this replica leads, as last set (always, without leader election): what the operator
 * exports only while leading is decided by it. */
int metrics_is_leader(struct metrics *m);

/* Appends the Prometheus text exposition (format 0.0.4, written through lib/prom.h) to out, with
 * zoekt_operator_build_info; qs may be NULL when no queue runs.
 * Returns ZK_OK or the buf error (then out is emptied, per buf.h). */
int metrics_render(struct metrics *m, const struct queue_stats *qs, struct buf *out) __attribute__((warn_unused_result));

#endif
