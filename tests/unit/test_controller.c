/* Unit tests for controller/runtime/controller, the generic loop around a reconciler: one reconcile per
 * queued key, a requested requeue honoured, a failure requeued with backoff and its count forgotten
 * after a success, no reconcile before the informers have listed, the periodic resync, and a stop that
 * lets the reconcile in flight finish. The reconciler is a script; the one informer runs against a fake
 * API server (tests/support/fakeapi). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "controller/runtime/controller.h"
#include "monotime.h"
#include "tests/support/fakeapi.h"

#define MAX_CALLS 64

/* What the reconciler does and what it saw. */
struct script {
    pthread_mutex_t mu;
    struct queue *queue;
    int fail_first;       /* the first this many calls fail */
    double requeue_after; /* what a successful call asks for */
    double busy_seconds;  /* how long each call takes */
    int calls;
    int finished;         /* calls that returned */
    char keys[MAX_CALLS][32];
    double at[MAX_CALLS];
    int failures_seen[MAX_CALLS]; /* queue_failures of the key when the call began */
};

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

    nanosleep(&ts, NULL);
}

static int scripted(void *ud, const char *key, double *requeue_after, struct zk_err *err)
{
    struct script *s = ud;
    int n;

    pthread_mutex_lock(&s->mu);
    n = s->calls++;
    if (n < MAX_CALLS) {
        snprintf(s->keys[n], sizeof(s->keys[n]), "%s", key);
        s->at[n] = monotime_s();
        s->failures_seen[n] = queue_failures(s->queue, key);
    }
    pthread_mutex_unlock(&s->mu);
    if (s->busy_seconds > 0)
        sleep_s(s->busy_seconds);
    pthread_mutex_lock(&s->mu);
    s->finished++;
    pthread_mutex_unlock(&s->mu);
    if (n < s->fail_first)
        return zk_err_set(err, ZK_ESERVER, "scripted failure %d", n);
    *requeue_after = s->requeue_after;
    return ZK_OK;
}

static int calls_of(struct script *s, const char *key)
{
    int n = 0;

    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->calls && i < MAX_CALLS; i++)
        n += strcmp(s->keys[i], key) == 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

struct want {
    struct script *s;
    const char *key;
    int calls;
};

static int has_calls(void *ud)
{
    struct want *w = ud;

    return calls_of(w->s, w->key) >= w->calls;
}

struct loop {
    struct script s;
    struct queue *queue;
    struct metrics *metrics;
    struct controller *c;
};

/* The queue, the metrics and the script of a loop, before it runs. */
static void loop_init(struct loop *l)
{
    struct queue_opts qo = {.base_delay = 0.05, .max_delay = 1};

    memset(l, 0, sizeof(*l));
    l->queue = queue_new(&qo);
    l->metrics = metrics_new();
    l->s.queue = l->queue;
    pthread_mutex_init(&l->s.mu, NULL);
}

/* Starts the loop over the informers (the first the primary), with the given resync period. */
static void loop_run(struct loop *l, struct informer *const *informers, int ninformers, double resync)
{
    struct controller_opts o = {.reconcile = scripted, .ud = &l->s, .key_label = "key", .workers = 2,
                                .queue = l->queue, .informers = informers, .ninformers = ninformers,
                                .primary = ninformers ? informers[0] : NULL, .resync_period = resync,
                                .metrics = l->metrics};
    struct zk_err err = {0};

    assert_int_equal(controller_start(&o, &l->c, &err), ZK_OK);
}

static void loop_stop(struct loop *l)
{
    controller_free(l->c);
    queue_free(l->queue);
    metrics_free(l->metrics);
    pthread_mutex_destroy(&l->s.mu);
}

static int started(void *ud)
{
    return controller_started(ud);
}

/* Each queued key is reconciled once; a success clears nothing that was not there and asks for nothing
 * more, so there is no second call. */
static void test_one_reconcile_per_key(void **state)
{
    static struct loop l;
    struct want c = {&l.s, "ns/c", 1};

    (void)state;
    loop_init(&l);
    loop_run(&l, NULL, 0, 0);
    assert_true(fakeapi_wait_for(started, l.c, 5));
    queue_add(l.queue, "ns/a");
    queue_add(l.queue, "ns/b");
    queue_add(l.queue, "ns/c");
    assert_true(fakeapi_wait_for(has_calls, &c, 5));
    sleep_s(0.2);
    assert_int_equal(calls_of(&l.s, "ns/a"), 1);
    assert_int_equal(calls_of(&l.s, "ns/b"), 1);
    assert_int_equal(calls_of(&l.s, "ns/c"), 1);
    loop_stop(&l);
}

/* A reconcile that asks to run again after 0.2 s does, and not sooner. */
static void test_requeue_after_is_honoured(void **state)
{
    static struct loop l;
    struct want three = {&l.s, "ns/a", 3};

    (void)state;
    loop_init(&l);
    l.s.requeue_after = 0.2;
    loop_run(&l, NULL, 0, 0);
    queue_add(l.queue, "ns/a");
    assert_true(fakeapi_wait_for(has_calls, &three, 5));
    pthread_mutex_lock(&l.s.mu);
    assert_true(l.s.at[1] - l.s.at[0] >= 0.19);
    assert_true(l.s.at[2] - l.s.at[1] >= 0.19);
    pthread_mutex_unlock(&l.s.mu);
    loop_stop(&l);
}

/* Failures are retried with a growing backoff, counted per key, and forgotten after a success; the
 * metrics count both outcomes. */
static void test_failures_back_off_and_are_forgotten(void **state)
{
    static struct loop l;
    struct want three = {&l.s, "ns/a", 3};
    struct buf text;

    (void)state;
    loop_init(&l);
    l.s.fail_first = 2;
    loop_run(&l, NULL, 0, 0);
    queue_add(l.queue, "ns/a");
    assert_true(fakeapi_wait_for(has_calls, &three, 5));
    sleep_s(0.1);
    pthread_mutex_lock(&l.s.mu);
    assert_int_equal(l.s.calls, 3);
    assert_int_equal(l.s.failures_seen[0], 0);
    assert_int_equal(l.s.failures_seen[1], 1);
    assert_int_equal(l.s.failures_seen[2], 2);
    /* base_delay 0.05, then twice that. */
    assert_true(l.s.at[1] - l.s.at[0] >= 0.045);
    assert_true(l.s.at[2] - l.s.at[1] >= 0.095);
    pthread_mutex_unlock(&l.s.mu);
    assert_int_equal(queue_failures(l.queue, "ns/a"), 0);
    buf_init(&text, 1 << 16);
    assert_int_equal(metrics_render(l.metrics, NULL, &text), ZK_OK);
    assert_non_null(strstr(text.data, "zoekt_operator_reconcile_total{result=\"success\"} 1\n"));
    assert_non_null(strstr(text.data, "zoekt_operator_reconcile_total{result=\"error\"} 2\n"));
    buf_free(&text);
    loop_stop(&l);
}

/* controller_stop returns only after the reconcile in flight has finished, and nothing queued is
 * reconciled after it. */
static void test_stop_drains(void **state)
{
    static struct loop l;
    struct want one = {&l.s, "ns/a", 1};

    (void)state;
    loop_init(&l);
    l.s.busy_seconds = 0.3;
    loop_run(&l, NULL, 0, 0);
    queue_add(l.queue, "ns/a");
    assert_true(fakeapi_wait_for(has_calls, &one, 5));
    controller_stop(l.c);
    pthread_mutex_lock(&l.s.mu);
    assert_int_equal(l.s.finished, 1);
    pthread_mutex_unlock(&l.s.mu);
    queue_add(l.queue, "ns/b");
    sleep_s(0.1);
    assert_int_equal(calls_of(&l.s, "ns/b"), 0);
    loop_stop(&l);
}

/* ---- gating on the informers, and the resync -------------------------------------------------- */

static const struct kube_resource CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", 1};

struct lister {
    pthread_mutex_t mu;
    int ready; /* 0: the list fails, as an API server still starting would */
};

static int answer_list(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    struct lister *ls = ud;
    int ready;

    if (strcmp(rq->method, "GET") != 0 || strcmp(rq->path, "/api/v1/namespaces/ns/configmaps") != 0)
        return 0;
    pthread_mutex_lock(&ls->mu);
    ready = ls->ready;
    pthread_mutex_unlock(&ls->mu);
    if (!ready) {
        snprintf(out, len, "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"InternalError\",\"code\":500}");
        return 500;
    }
    snprintf(out, len, "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":["
                       "{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"}},"
                       "{\"metadata\":{\"name\":\"y\",\"namespace\":\"ns\"}}]}");
    return 200;
}

static void enqueue(void *ud, const char *key)
{
    queue_add(ud, key);
}

/* Nothing is reconciled while the informer has not listed, although a key is queued; once it has, the
 * workers start, and every resync period each cached key is reconciled again. */
static void test_gate_and_resync(void **state)
{
    static struct loop l;
    static struct lister ls;
    struct fakeapi *api;
    struct kube_client *client;
    struct informer *inf;
    struct informer_opts io = {.resource = &CONFIGMAPS, .namespace = "ns", .key_of = informer_self_key,
                               .enqueue = enqueue};
    struct want x = {&l.s, "ns/x", 3}, y = {&l.s, "ns/y", 3};
    struct zk_err err = {0};

    (void)state;
    loop_init(&l);
    pthread_mutex_init(&ls.mu, NULL);
    api = fakeapi_start(answer_list, &ls);
    client = fakeapi_client(api);
    io.ud = l.queue;
    assert_int_equal(informer_start(client, &io, &inf, &err), ZK_OK);
    loop_run(&l, &inf, 1, 0.3);
    queue_add(l.queue, "ns/early");
    sleep_s(0.5);
    assert_false(controller_started(l.c));
    assert_int_equal(calls_of(&l.s, "ns/early"), 0);
    pthread_mutex_lock(&ls.mu);
    ls.ready = 1;
    pthread_mutex_unlock(&ls.mu);
    assert_true(fakeapi_wait_for(started, l.c, 10));
    /* Once by the list, then by each resync. */
    assert_true(fakeapi_wait_for(has_calls, &x, 5));
    assert_true(fakeapi_wait_for(has_calls, &y, 5));
    assert_int_equal(calls_of(&l.s, "ns/early"), 1);
    controller_stop(l.c);
    informer_cancel(inf);
    informer_stop(inf);
    fakeapi_stop(api);
    informer_free(inf);
    kube_client_free(client);
    loop_stop(&l);
    pthread_mutex_destroy(&ls.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_reconcile_per_key),
        cmocka_unit_test(test_requeue_after_is_honoured),
        cmocka_unit_test(test_failures_back_off_and_are_forgotten),
        cmocka_unit_test(test_stop_drains),
        cmocka_unit_test(test_gate_and_resync),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
