/* Unit tests for connector/mcp/peerwatch: a hang-up is reported for the socket whose peer went, once;
 * pending input is not a hang-up; an ended watch reports nothing; watches beyond the room run unwatched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "connector/mcp/peerwatch.h"

static void on_hangup(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Waits up to two seconds for *n to reach want; returns its value then. */
static int wait_for(atomic_int *n, int want)
{
    struct timespec ms = {0, 1000000};

    for (int i = 0; i < 2000 && atomic_load(n) < want; i++)
        nanosleep(&ms, NULL);
    return atomic_load(n);
}

static void test_hangup_is_reported_once(void **state)
{
    struct peerwatch *w;
    struct zk_err err;
    atomic_int a = 0, b = 0;
    int sa[2], sb[2], ha, hb;

    (void)state;
    assert_int_equal(pw_new(4, &w, &err), ZK_OK);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sa), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sb), 0);
    ha = pw_watch(w, sa[0], on_hangup, &a);
    hb = pw_watch(w, sb[0], on_hangup, &b);
    assert_true(ha >= 0 && hb >= 0 && ha != hb);
    /* Input waiting to be read is no hang-up. */
    assert_int_equal(write(sa[1], "x", 1), 1);
    close(sa[1]);
    assert_int_equal(wait_for(&a, 1), 1);
    /* Only the socket whose peer went is reported, and only once. */
    struct timespec settle = {0, 50000000};
    nanosleep(&settle, NULL);
    assert_int_equal(atomic_load(&a), 1);
    assert_int_equal(atomic_load(&b), 0);
    pw_unwatch(w, ha);
    pw_unwatch(w, hb);
    close(sa[0]);
    close(sb[0]);
    close(sb[1]);
    pw_free(w);
}

static void test_ended_watch_reports_nothing(void **state)
{
    struct peerwatch *w;
    struct zk_err err;
    atomic_int a = 0, c = 0;
    int s[2], t[2], h;

    (void)state;
    assert_int_equal(pw_new(1, &w, &err), ZK_OK);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    h = pw_watch(w, s[0], on_hangup, &a);
    assert_true(h >= 0);
    pw_unwatch(w, h);
    close(s[1]);
    /* The slot is free again: a new watch on another socket gets it and is reported. */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, t), 0);
    h = pw_watch(w, t[0], on_hangup, &c);
    assert_true(h >= 0);
    close(t[1]);
    assert_int_equal(wait_for(&c, 1), 1);
    assert_int_equal(atomic_load(&a), 0);
    pw_unwatch(w, h);
    close(s[0]);
    close(t[0]);
    pw_free(w);
}

static void test_no_room_runs_unwatched(void **state)
{
    struct peerwatch *w;
    struct zk_err err;
    atomic_int a = 0;
    int s[2], h1, h2;

    (void)state;
    assert_int_equal(pw_new(1, &w, &err), ZK_OK);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    h1 = pw_watch(w, s[0], on_hangup, &a);
    assert_true(h1 >= 0);
    h2 = pw_watch(w, s[1], on_hangup, &a);
    assert_int_equal(h2, -1);
    pw_unwatch(w, h2); /* a no-op, as for any call that could not be watched */
    pw_unwatch(w, h1);
    close(s[0]);
    close(s[1]);
    pw_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hangup_is_reported_once),
        cmocka_unit_test(test_ended_watch_reports_nothing),
        cmocka_unit_test(test_no_room_runs_unwatched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
