/* Unit tests for lib/fanout: every index served exactly once, calls really overlapping, and the limit on
 * threads kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "fanout.h"

struct tally {
    atomic_int calls[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int inside;      /* calls running now */
    int most_inside; /* the most that ever ran at once */
    int wait_for;    /* each call waits (up to 5 s) until this many run at once; 0: no wait */
};

static void count(void *ud, size_t i)
{
    struct tally *t = ud;
    struct timespec deadline;

    atomic_fetch_add(&t->calls[i], 1);
    pthread_mutex_lock(&t->mu);
    t->inside++;
    if (t->inside > t->most_inside)
        t->most_inside = t->inside;
    pthread_cond_broadcast(&t->cv);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    while (t->wait_for && t->most_inside < t->wait_for)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &deadline) == ETIMEDOUT)
            break;
    t->inside--;
    pthread_mutex_unlock(&t->mu);
}

static int setup(void **state)
{
    static struct tally t;

    memset(&t, 0, sizeof(t));
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    *state = &t;
    return 0;
}

static int teardown(void **state)
{
    struct tally *t = *state;

    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    return 0;
}

static void test_each_index_once(void **state)
{
    struct tally *t = *state;

    fanout_run(200, 4, count, t);
    for (int i = 0; i < 200; i++)
        assert_int_equal(atomic_load(&t->calls[i]), 1);
    assert_int_equal(atomic_load(&t->calls[200]), 0);
    assert_true(t->most_inside <= 4);
}

static void test_nothing_to_do(void **state)
{
    struct tally *t = *state;

    fanout_run(0, 8, count, t);
    assert_int_equal(t->most_inside, 0);
    assert_int_equal(atomic_load(&t->calls[0]), 0);
}

/* Four calls that each wait until four are running can only all return if they run at once. */
static void test_calls_overlap(void **state)
{
    struct tally *t = *state;

    t->wait_for = 4;
    fanout_run(4, 8, count, t);
    assert_int_equal(t->most_inside, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(atomic_load(&t->calls[i]), 1);
}

static void test_one_thread_runs_in_turn(void **state)
{
    struct tally *t = *state;

    fanout_run(10, 1, count, t);
    assert_int_equal(t->most_inside, 1);
    for (int i = 0; i < 10; i++)
        assert_int_equal(atomic_load(&t->calls[i]), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_index_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_do, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_thread_runs_in_turn, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
