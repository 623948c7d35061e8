/* metrics.c: see metrics.h. */
#include "controller/runtime/metrics.h"

#include "mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds of the reconcile duration histogram, in seconds: a reconcile is a handful of cached
 * comparisons and occasionally a few API calls or an /index-status read. */
static const double metrics_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define METRICS_NBUCKETS (sizeof(metrics_buckets) / sizeof(metrics_buckets[0]))

/* Distinct (verb, status) pairs kept; a controller uses a dozen verbs and a few statuses each. Pairs
 * beyond the table are counted under verb "other" so nothing is silently lost. */
#define METRICS_MAX_API 96

struct metrics_api {
    const char *verb;
    long code;
    unsigned long long n;
};

struct metrics {
    pthread_mutex_t mu;
    unsigned long long reconcile_ok, reconcile_err;
    unsigned long long bucket[METRICS_NBUCKETS];
    unsigned long long count;
    double sum;
    int leader;
    struct metrics_api api[METRICS_MAX_API];
    size_t napi;
    unsigned long long api_overflow;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = mem_calloc(1, sizeof(*m));

    mem_mutex_init(&m->mu);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void metrics_reconcile_done(struct metrics *m, double seconds, int ok)
{
    pthread_mutex_lock(&m->mu);
    if (ok)
        m->reconcile_ok++;
    else
        m->reconcile_err++;
    for (size_t i = 0; i < METRICS_NBUCKETS; i++)
        if (seconds <= metrics_buckets[i])
            m->bucket[i]++;
    m->count++;
    m->sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

void metrics_api_request(struct metrics *m, const char *verb, long code)
{
    size_t i;

    pthread_mutex_lock(&m->mu);
    for (i = 0; i < m->napi; i++)
        if (m->api[i].code == code && strcmp(m->api[i].verb, verb) == 0)
            break;
    if (i == m->napi) {
        if (m->napi == METRICS_MAX_API) {
            m->api_overflow++;
            pthread_mutex_unlock(&m->mu);
            return;
        }
        m->api[i].verb = verb;
        m->api[i].code = code;
        m->napi++;
    }
    m->api[i].n++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_api_result(struct metrics *m, const char *verb, int rc, long http_status)
{
    metrics_api_request(m, verb, rc == ZK_OK ? 200 : http_status);
}

unsigned long long metrics_api_count(struct metrics *m, const char *verb)
{
    unsigned long long n = 0;

    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->napi; i++)
        if (strcmp(m->api[i].verb, verb) == 0)
            n += m->api[i].n;
    pthread_mutex_unlock(&m->mu);
    return n;
}

void metrics_set_leader(struct metrics *m, int leading)
{
    pthread_mutex_lock(&m->mu);
    m->leader = leading ? 1 : 0;
    pthread_mutex_unlock(&m->mu);
}

int metrics_is_leader(struct metrics *m)
{
    int leading;

    pthread_mutex_lock(&m->mu);
    leading = m->leader;
    pthread_mutex_unlock(&m->mu);
    return leading;
}

int metrics_render(struct metrics *m, const struct queue_stats *qs, struct buf *b)
{
    int rc = ZK_OK;

    pthread_mutex_lock(&m->mu);
    rc = buf_printf(b,
                    "# HELP zoekt_operator_build_info The operator's version; always 1.\n"
                    "# TYPE zoekt_operator_build_info gauge\n"
                    "zoekt_operator_build_info{version=\"%s\"} 1\n"
                    "# HELP zoekt_operator_reconcile_total Reconciles finished, by result.\n"
                    "# TYPE zoekt_operator_reconcile_total counter\n"
                    "zoekt_operator_reconcile_total{result=\"success\"} %llu\n"
                    "zoekt_operator_reconcile_total{result=\"error\"} %llu\n"
                    "# HELP zoekt_operator_reconcile_errors_total Reconciles that failed and were retried.\n"
                    "# TYPE zoekt_operator_reconcile_errors_total counter\n"
                    "zoekt_operator_reconcile_errors_total %llu\n"
                    "# HELP zoekt_operator_reconcile_duration_seconds Time spent in one reconcile.\n"
                    "# TYPE zoekt_operator_reconcile_duration_seconds histogram\n",
                    ZK_VERSION, m->reconcile_ok, m->reconcile_err, m->reconcile_err);
    for (size_t i = 0; rc == ZK_OK && i < METRICS_NBUCKETS; i++)
        rc = buf_printf(b, "zoekt_operator_reconcile_duration_seconds_bucket{le=\"%g\"} %llu\n",
                        metrics_buckets[i], m->bucket[i]);
    if (rc == ZK_OK)
        rc = buf_printf(b,
                        "zoekt_operator_reconcile_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                        "zoekt_operator_reconcile_duration_seconds_sum %.6f\n"
                        "zoekt_operator_reconcile_duration_seconds_count %llu\n"
                        "# HELP zoekt_operator_leader Whether this replica holds the leader lease.\n"
                        "# TYPE zoekt_operator_leader gauge\n"
                        "zoekt_operator_leader %d\n"
                        "# HELP zoekt_operator_api_requests_total API requests made by the controller, by verb and "
                        "HTTP status (0: no answer).\n"
                        "# TYPE zoekt_operator_api_requests_total counter\n",
                        m->count, m->sum, m->count, m->leader);
    for (size_t i = 0; rc == ZK_OK && i < m->napi; i++)
        rc = buf_printf(b, "zoekt_operator_api_requests_total{verb=\"%s\",code=\"%ld\"} %llu\n", m->api[i].verb,
                        m->api[i].code, m->api[i].n);
    if (rc == ZK_OK && m->api_overflow)
        rc = buf_printf(b, "zoekt_operator_api_requests_total{verb=\"other\",code=\"0\"} %llu\n", m->api_overflow);
    pthread_mutex_unlock(&m->mu);
    if (rc == ZK_OK && qs)
        rc = buf_printf(b,
                        "# HELP zoekt_operator_workqueue_depth Keys ready to be reconciled now.\n"
                        "# TYPE zoekt_operator_workqueue_depth gauge\n"
                        "zoekt_operator_workqueue_depth %zu\n"
                        "# HELP zoekt_operator_workqueue_waiting Keys waiting for a delayed requeue.\n"
                        "# TYPE zoekt_operator_workqueue_waiting gauge\n"
                        "zoekt_operator_workqueue_waiting %zu\n"
                        "# HELP zoekt_operator_workqueue_adds_total Keys added to the work queue.\n"
                        "# TYPE zoekt_operator_workqueue_adds_total counter\n"
                        "zoekt_operator_workqueue_adds_total %llu\n"
                        "# HELP zoekt_operator_workqueue_retries_total Keys re-added after a failed reconcile.\n"
                        "# TYPE zoekt_operator_workqueue_retries_total counter\n"
                        "zoekt_operator_workqueue_retries_total %llu\n",
                        qs->depth, qs->waiting, qs->adds, qs->retries);
    return rc;
}
