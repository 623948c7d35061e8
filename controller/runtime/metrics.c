/* metrics.c: see metrics.h. */
#include "controller/runtime/metrics.h"

#include "mem.h"
#include "prom.h"

#include <pthread.h>
#include <stdio.h>
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
    unsigned long long bucket[METRICS_NBUCKETS + 1]; /* per bucket, the last above every bound (prom.h) */
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
    m->bucket[prom_bucket(metrics_buckets, METRICS_NBUCKETS, seconds)]++;
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

/* The reconcile and leader families, read under m->mu. */
static int metrics_render_locked(struct metrics *m, struct buf *b)
{
    const struct prom_label version = {"version", ZK_VERSION};
    struct prom_label result = {"result", "success"}, api[2] = {{"verb", NULL}, {"code", NULL}};
    char code[24];
    int rc;

    rc = prom_family(b, "zoekt_operator_build_info", "gauge", "The operator's version; always 1.");
    if (rc == ZK_OK)
        rc = prom_gauge(b, "zoekt_operator_build_info", &version, 1, 1);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_operator_reconcile_total", "counter", "Reconciles finished, by result.");
    if (rc == ZK_OK)
        rc = prom_counter(b, "zoekt_operator_reconcile_total", &result, 1, m->reconcile_ok);
    result.value = "error";
    if (rc == ZK_OK)
        rc = prom_counter(b, "zoekt_operator_reconcile_total", &result, 1, m->reconcile_err);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_operator_reconcile_errors_total", "counter",
                         "Reconciles that failed and were retried.");
    if (rc == ZK_OK)
        rc = prom_counter(b, "zoekt_operator_reconcile_errors_total", NULL, 0, m->reconcile_err);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_operator_reconcile_duration_seconds", "histogram", "Time spent in one reconcile.");
    if (rc == ZK_OK)
        rc = prom_histogram(b, "zoekt_operator_reconcile_duration_seconds", NULL, 0, metrics_buckets,
                            METRICS_NBUCKETS, m->bucket, m->sum);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_operator_leader", "gauge", "Whether this replica holds the leader lease.");
    if (rc == ZK_OK)
        rc = prom_gauge(b, "zoekt_operator_leader", NULL, 0, m->leader);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_operator_api_requests_total", "counter",
                         "API requests made by the controller, by verb and HTTP status (0: no answer).");
    for (size_t i = 0; rc == ZK_OK && i < m->napi; i++) {
        snprintf(code, sizeof(code), "%ld", m->api[i].code);
        api[0].value = m->api[i].verb;
        api[1].value = code;
        rc = prom_counter(b, "zoekt_operator_api_requests_total", api, 2, m->api[i].n);
    }
    if (rc == ZK_OK && m->api_overflow) {
        api[0].value = "other";
        api[1].value = "0";
        rc = prom_counter(b, "zoekt_operator_api_requests_total", api, 2, m->api_overflow);
    }
    return rc;
}

int metrics_render(struct metrics *m, const struct queue_stats *qs, struct buf *b)
{
    int rc;

    pthread_mutex_lock(&m->mu);
    rc = metrics_render_locked(m, b);
    pthread_mutex_unlock(&m->mu);
    if (rc == ZK_OK && qs)
        rc = prom_family(b, "zoekt_operator_workqueue_depth", "gauge", "Keys ready to be reconciled now.");
    if (rc == ZK_OK && qs)
        rc = prom_gauge(b, "zoekt_operator_workqueue_depth", NULL, 0, (double)qs->depth);
    if (rc == ZK_OK && qs)
        rc = prom_family(b, "zoekt_operator_workqueue_waiting", "gauge", "Keys waiting for a delayed requeue.");
    if (rc == ZK_OK && qs)
        rc = prom_gauge(b, "zoekt_operator_workqueue_waiting", NULL, 0, (double)qs->waiting);
    if (rc == ZK_OK && qs)
        rc = prom_family(b, "zoekt_operator_workqueue_adds_total", "counter", "Keys added to the work queue.");
    if (rc == ZK_OK && qs)
        rc = prom_counter(b, "zoekt_operator_workqueue_adds_total", NULL, 0, qs->adds);
    if (rc == ZK_OK && qs)
        rc = prom_family(b, "zoekt_operator_workqueue_retries_total", "counter",
                         "Keys re-added after a failed reconcile.");
    if (rc == ZK_OK && qs)
        rc = prom_counter(b, "zoekt_operator_workqueue_retries_total", NULL, 0, qs->retries);
    return rc;
}
