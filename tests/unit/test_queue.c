/* Unit tests for controller/runtime/queue: deduplication, exclusion of a key being processed, backoff,
 * the token bucket, delayed adds and shutdown. Time is a fake clock the tests move by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/runtime/queue.h"
#include "err.h"

static double fake_now;

static double fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static struct queue *new_queue(double qps, double burst)
{
    struct queue_opts o = {.base_delay = 0.005, .max_delay = 1.0, .qps = qps, .burst = burst,
                           .clock = fake_clock};
    fake_now = 1000;
    return queue_new(&o);
}

/* Takes one key and checks it; frees it after marking it done only when done is set. */
static char *take(struct queue *q, const char *want)
{
    char *key = NULL;

    assert_int_equal(queue_try_get(q, &key), ZK_OK);
    assert_string_equal(key, want);
    return key;
}

static void assert_empty(struct queue *q)
{
    char *key = NULL;

    assert_int_equal(queue_try_get(q, &key), ZK_ETIMEOUT);
    assert_null(key);
}

static void test_dedup_and_fifo(void **state)
{
    struct queue *q = new_queue(10, 100);
    struct queue_stats st;
    char *k;

    (void)state;
    queue_add(q, "ns/a");
    queue_add(q, "ns/b");
    queue_add(q, "ns/a");
    queue_stats(q, &st);
    assert_int_equal(st.depth, 2);
    assert_int_equal(st.adds, 3);
    k = take(q, "ns/a");
    queue_done(q, k);
    free(k);
    k = take(q, "ns/b");
    queue_done(q, k);
    free(k);
    assert_empty(q);
    queue_free(q);
}

static void test_added_while_processing_comes_back_after_done(void **state)
{
    struct queue *q = new_queue(10, 100);
    char *k;

    (void)state;
    queue_add(q, "ns/a");
    k = take(q, "ns/a");
    /* Two adds while a worker holds the key: not handed to a second worker, and processed once more. */
    queue_add(q, "ns/a");
    queue_add(q, "ns/a");
    assert_empty(q);
    queue_done(q, k);
    free(k);
    k = take(q, "ns/a");
    queue_done(q, k);
    free(k);
    assert_empty(q);
    queue_free(q);
}

static void test_add_after_waits_for_the_clock(void **state)
{
    struct queue *q = new_queue(10, 100);
    struct queue_stats st;
    char *k;

    (void)state;
    queue_add_after(q, "ns/a", 5);
    queue_add_after(q, "ns/a", 30); /* later deadline: the earlier one stays */
    assert_empty(q);
    queue_stats(q, &st);
    assert_int_equal(st.waiting, 1);
    fake_now += 4.9;
    assert_empty(q);
    fake_now += 0.2;
    k = take(q, "ns/a");
    queue_done(q, k);
    free(k);
    fake_now += 60;
    assert_empty(q);
    queue_free(q);
}

static void test_backoff_doubles_and_is_capped(void **state)
{
    struct queue *q = new_queue(1000, 1000);
    double expect = 0.005;
    char *k;

    (void)state;
    for (int i = 0; i < 12; i++) {
        queue_add_rate_limited(q, "ns/a");
        assert_int_equal(queue_failures(q, "ns/a"), i + 1);
        fake_now += expect * 0.9;
        assert_empty(q);
        fake_now += expect * 0.2;
        k = take(q, "ns/a");
        queue_done(q, k);
        free(k);
        expect = expect * 2 > 1.0 ? 1.0 : expect * 2;
    }
    /* After 12 failures, 5 ms * 2^11 is past the 1 s cap: the last waits were exactly the cap. */
    assert_true(expect == 1.0);
    queue_forget(q, "ns/a");
    assert_int_equal(queue_failures(q, "ns/a"), 0);
    queue_add_rate_limited(q, "ns/a");
    fake_now += 0.006;
    k = take(q, "ns/a");
    queue_done(q, k);
    free(k);
    queue_free(q);
}

/* A failing key waits out its backoff however many of its children change meanwhile
 * (queue_add_unless_retrying); a change to the key itself (queue_add) still brings it forward, and a
 * key that is not failing is added at once either way. */
static void test_children_changes_do_not_undo_the_backoff(void **state)
{
    struct queue *q = new_queue(1000, 1000);
    char *k;

    (void)state;
    for (int i = 0; i < 4; i++) { /* four failures: the fifth retry comes 5 ms * 2^4 = 80 ms later */
        queue_add_rate_limited(q, "ns/failing");
        fake_now += 1.0;
        k = take(q, "ns/failing");
        queue_done(q, k);
        free(k);
    }
    queue_add_rate_limited(q, "ns/failing");
    for (int i = 0; i < 100; i++)
        queue_add_unless_retrying(q, "ns/failing");
    queue_add_unless_retrying(q, "ns/healthy");
    k = take(q, "ns/healthy");
    queue_done(q, k);
    free(k);
    fake_now += 0.079;
    assert_empty(q);
    fake_now += 0.002;
    k = take(q, "ns/failing");
    /* While it is processed, a change is remembered, as with queue_add. */
    queue_add_unless_retrying(q, "ns/failing");
    queue_done(q, k);
    free(k);
    k = take(q, "ns/failing");
    queue_add_rate_limited(q, "ns/failing");
    queue_done(q, k);
    free(k);
    assert_empty(q);
    /* The corpus itself changed (a user's fix): at once, backoff or not. */
    queue_add(q, "ns/failing");
    k = take(q, "ns/failing");
    queue_done(q, k);
    free(k);
    queue_free(q);
}

static void test_token_bucket_limits_many_keys(void **state)
{
    /* Burst 2 at 1 qps: the first two failing keys wait only their backoff, the third a second. */
    struct queue *q = new_queue(1, 2);
    struct queue_stats st;
    char *k;

    (void)state;
    queue_add_rate_limited(q, "ns/a");
    queue_add_rate_limited(q, "ns/b");
    queue_add_rate_limited(q, "ns/c");
    fake_now += 0.01;
    k = take(q, "ns/a");
    queue_done(q, k);
    free(k);
    k = take(q, "ns/b");
    queue_done(q, k);
    free(k);
    assert_empty(q);
    fake_now += 0.99;
    k = take(q, "ns/c");
    queue_done(q, k);
    free(k);
    queue_stats(q, &st);
    assert_int_equal(st.retries, 3);
    queue_free(q);
}

struct waiter {
    struct queue *q;
    int rc;
    char *key;
};

static void *wait_for_key(void *arg)
{
    struct waiter *w = arg;

    w->rc = queue_get(w->q, &w->key);
    return NULL;
}

static void test_blocking_get_wakes_on_add_and_shutdown(void **state)
{
    struct queue *q = NULL;
    struct waiter w1 = {0}, w2 = {0};
    pthread_t t1, t2;

    (void)state;
    q = queue_new(NULL);
    w1.q = q;
    pthread_create(&t1, NULL, wait_for_key, &w1);
    usleep(20000);
    queue_add_after(q, "ns/late", 0.05);
    pthread_join(t1, NULL);
    assert_int_equal(w1.rc, ZK_OK);
    assert_string_equal(w1.key, "ns/late");
    queue_done(q, w1.key);
    free(w1.key);

    w2.q = q;
    pthread_create(&t2, NULL, wait_for_key, &w2);
    usleep(20000);
    queue_shutdown(q);
    pthread_join(t2, NULL);
    assert_int_equal(w2.rc, ZK_ECANCELLED);
    assert_null(w2.key);
    /* Adds after shutdown are ignored. */
    queue_add(q, "ns/x");
    assert_int_equal(queue_try_get(q, &w2.key), ZK_ECANCELLED);
    queue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup_and_fifo),
        cmocka_unit_test(test_added_while_processing_comes_back_after_done),
        cmocka_unit_test(test_add_after_waits_for_the_clock),
        cmocka_unit_test(test_children_changes_do_not_undo_the_backoff),
        cmocka_unit_test(test_backoff_doubles_and_is_capped),
        cmocka_unit_test(test_token_bucket_limits_many_keys),
        cmocka_unit_test(test_blocking_get_wakes_on_add_and_shutdown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
