/* Unit tests for connector/zoekt/listcache: the copy read without a fetch within the TTL and fetched
 * again after it (an injected clock), one fetch in flight while other callers read the old copy or go
 * without, a failed fetch keeping the old copy and not retried before the back-off, a cancelled
 * one retried at once, a commit the copy does not know withholding the time and expiring the copy;
 * and zlc_get's shared copies, which outlive their replacement while held, its waiting for the fetch
 * in flight, and its answering a failure without fetching during the back-off. The fetch is a function of the test; no server. Built under ThreadSanitizer too
 * (Makefile TSAN_UNIT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connector/zoekt/listcache.h"
#include "mem.h"

static atomic_llong clock_ms;

static long long fake_now(void)
{
    return atomic_load(&clock_ms);
}

/* What the fake fetch answers, and how often it was asked. */
struct fake {
    atomic_int calls;
    int rc;             /* returned; ZK_OK: the list below */
    time_t base;        /* index time of the first repository; the others follow a second apart */
    pthread_mutex_t mu; /* with cv: a fetch that holds until released (gate) */
    pthread_cond_t cv;
    int gate;           /* 1: a fetch waits until released is set */
    int inside;         /* a fetch is waiting at the gate */
    int released;
    int partial;        /* 1: search shard 1 of 2 did not answer the list */
};

static const char *const repos[] = {"acme/bulk", "acme/payments", "other/legacy"};

static int fake_fetch(void *arg, struct zr_list *out, struct zk_err *err)
{
    struct fake *f = arg;

    atomic_fetch_add(&f->calls, 1);
    /* Only one fetch waits at the gate: a second one at the same time (which the cache must never
     * start) goes through, so that the test fails instead of hanging. */
    pthread_mutex_lock(&f->mu);
    if (!f->inside) {
        f->inside = 1;
        pthread_cond_broadcast(&f->cv);
        while (f->gate && !f->released)
            pthread_cond_wait(&f->cv, &f->mu);
        f->inside = 0;
    }
    pthread_mutex_unlock(&f->mu);
    if (f->rc != ZK_OK)
        return zk_err_set(err, f->rc, "zoekt is down");
    if (f->partial) {
        out->search_shards.n = 2;
        out->search_shards.failed = 2;
        out->search_shards.why[1] = mem_strdup("shard 1 is down");
    }
    out->n_repos = 3;
    out->repos = mem_calloc(3, sizeof(*out->repos));
    for (size_t i = 0; i < 3; i++) {
        out->repos[i].name = mem_strdup(repos[i]);
        out->repos[i].index_time = f->base + (time_t)i;
        /* One branch, at the commit named after the index time. */
        out->repos[i].n_branches = 1;
        out->repos[i].branches = mem_calloc(1, sizeof(*out->repos[i].branches));
        out->repos[i].branches[0].name = mem_strdup("main");
        out->repos[i].branches[0].version = mem_printf("%lld", (long long)out->repos[i].index_time);
    }
    return ZK_OK;
}

static struct zlc *cache_new(void)
{
    struct zlc_opts o = {60000, 5000, fake_now};

    atomic_store(&clock_ms, 1000000);
    return zlc_new(&o);
}

static void fake_init(struct fake *f, time_t base)
{
    memset(f, 0, sizeof(*f));
    f->base = base;
    mem_mutex_init(&f->mu);
    mem_cond_init(&f->cv, 0);
}

static void fake_destroy(struct fake *f)
{
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
}

/* Each test's cache and fake Zoekt, made by setup and freed by teardown. */
struct world {
    struct zlc *c;
    struct fake f;
};

static int setup(void **state)
{
    struct world *w = mem_calloc(1, sizeof(*w));

    w->c = cache_new();
    fake_init(&w->f, 1700000000);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    struct world *w = *state;

    zlc_free(w->c);
    fake_destroy(&w->f);
    free(w);
    return 0;
}

/* The index times of the three names and one the list does not hold; returns zlc_index_times'. */
static int lookup(struct zlc *c, struct fake *f, time_t t[4])
{
    const char *names[] = {"other/legacy", "acme/bulk", "acme/nothere", "acme/payments"};

    return zlc_index_times(c, names, NULL, 4, t, fake_fetch, f);
}

/* A lookup that reads a copy in which acme/bulk's index time is bulk, after the fake has been asked
 * for the list calls times in all. */
static void expect_read(struct world *w, time_t bulk, int calls)
{
    time_t t[4];

    assert_int_equal(lookup(w->c, &w->f, t), 1);
    assert_int_equal(t[1], bulk);
    assert_int_equal(atomic_load(&w->f.calls), calls);
}

static void test_within_ttl_one_fetch(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    time_t t[4];

    assert_int_equal(lookup(c, f, t), 1);
    assert_int_equal(t[0], 1700000002);
    assert_int_equal(t[1], 1700000000);
    assert_int_equal(t[2], 0);
    assert_int_equal(t[3], 1700000001);
    /* Ten more calls within the minute read the copy. */
    for (int i = 0; i < 10; i++) {
        atomic_fetch_add(&clock_ms, 5000);
        assert_int_equal(lookup(c, f, t), 1);
    }
    assert_int_equal(atomic_load(&f->calls), 1);
}

static void test_after_ttl_fetched_again(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    time_t t[4];

    assert_int_equal(lookup(c, f, t), 1);
    atomic_fetch_add(&clock_ms, 59999);
    f->base = 1700003600; /* reindexed since */
    expect_read(w, 1700000000, 1);
    atomic_fetch_add(&clock_ms, 1);
    expect_read(w, 1700003600, 2);
}

static void test_failure_keeps_copy_and_backs_off(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    time_t t[4];

    assert_int_equal(lookup(c, f, t), 1);
    atomic_fetch_add(&clock_ms, 60000);
    f->rc = ZK_ECONNECT;
    f->base = 1700003600;
    expect_read(w, 1700000000, 2); /* the old copy */
    /* Zoekt is up again, but within the back-off no call waits for another fetch. */
    f->rc = ZK_OK;
    atomic_fetch_add(&clock_ms, 4999);
    expect_read(w, 1700000000, 2);
    atomic_fetch_add(&clock_ms, 1);
    expect_read(w, 1700003600, 3);
}

/* A list a search shard missed is the current copy, but the last complete one stays to name that
 * shard's repositories, until a complete list replaces it. */
static void test_complete_copy_outlives_partial_ones(void **state)
{
    struct world *w = *state;
    const struct zr_list *l = NULL, *complete;
    struct zk_err err = {0};

    assert_null(zlc_complete(w->c));
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_OK);
    zlc_put(w->c, l);
    atomic_fetch_add(&clock_ms, 60000);
    w->f.partial = 1;
    w->f.base = 1700003600;
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_OK);
    assert_int_equal(l->search_shards.failed, 2);
    complete = zlc_complete(w->c);
    assert_non_null(complete);
    assert_int_equal(complete->search_shards.failed, 0);
    assert_int_equal(complete->repos[0].index_time, 1700000000);
    zlc_put(w->c, l);
    /* A complete list replaces it; the copy held meanwhile stays valid until put. */
    atomic_fetch_add(&clock_ms, 60000);
    w->f.partial = 0;
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_OK);
    zlc_put(w->c, l);
    assert_int_equal(complete->repos[0].index_time, 1700000000);
    zlc_put(w->c, complete);
    complete = zlc_complete(w->c);
    assert_int_equal(complete->repos[0].index_time, 1700003600);
    zlc_put(w->c, complete);
}

static void test_no_copy_yet_no_times(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    time_t t[4];

    f->rc = ZK_ETIMEOUT;
    assert_int_equal(lookup(c, f, t), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(t[i], 0);
    assert_int_equal(lookup(c, f, t), 0);
    assert_int_equal(atomic_load(&f->calls), 1);
}

static void test_cancelled_fetch_starts_no_backoff(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    time_t t[4];

    f->rc = ZK_ECANCELLED;
    assert_int_equal(lookup(c, f, t), 0);
    f->rc = ZK_OK;
    expect_read(w, 1700000000, 2);
}

/* A search that saw a commit the copy does not know gets no time for that repository (the copy's
 * would be the old index's), and the next call fetches again; but not within the back-off of the
 * last fetch, so a list and a search that disagree do not cost a list per call. */
static void test_unknown_commit_no_time_and_fetched_again(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    const char *names[] = {"acme/bulk", "acme/payments"};
    const char *old[] = {"1700000000", "1700000001"}, *moved[] = {"1700003600", "1700000001"};
    time_t t[2];

    assert_int_equal(zlc_index_times(c, names, old, 2, t, fake_fetch, f), 1);
    assert_int_equal(t[0], 1700000000);
    assert_int_equal(t[1], 1700000001);
    /* acme/bulk is reindexed: only its own time is withheld, and within the back-off no fetch. */
    f->base = 1700003600;
    atomic_fetch_add(&clock_ms, 4999);
    assert_int_equal(zlc_index_times(c, names, moved, 2, t, fake_fetch, f), 1);
    assert_int_equal(t[0], 0);
    assert_int_equal(t[1], 1700000001);
    assert_int_equal(zlc_index_times(c, names, moved, 2, t, fake_fetch, f), 1);
    assert_int_equal(atomic_load(&f->calls), 1);
    /* Past it, the mismatch expires the copy: the next call fetches and knows the new commit. */
    atomic_fetch_add(&clock_ms, 1);
    assert_int_equal(zlc_index_times(c, names, moved, 2, t, fake_fetch, f), 1);
    assert_int_equal(t[0], 0);
    assert_int_equal(atomic_load(&f->calls), 1);
    assert_int_equal(zlc_index_times(c, names, moved, 2, t, fake_fetch, f), 1);
    assert_int_equal(atomic_load(&f->calls), 2);
    assert_int_equal(t[0], 1700003600);
}

struct caller {
    struct zlc *c;
    struct fake *f;
    time_t t[4];
    int have;
};

static void *call_lookup(void *arg)
{
    struct caller *k = arg;

    k->have = lookup(k->c, k->f, k->t);
    return NULL;
}

/* Waits (up to 5 s) until a fetch waits at the gate. */
static void wait_inside(struct fake *f)
{
    struct timespec deadline;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&f->mu);
    while (!f->inside)
        if (pthread_cond_timedwait(&f->cv, &f->mu, &deadline) == ETIMEDOUT)
            break;
    assert_true(f->inside);
    pthread_mutex_unlock(&f->mu);
}

static void release(struct fake *f)
{
    pthread_mutex_lock(&f->mu);
    f->released = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* While one caller's fetch is under way, the others neither fetch nor wait: before the first copy
 * they get no times, after it they read the old copy. */
static void test_one_fetch_in_flight(void **state)
{
    struct world *w = *state;
    struct zlc *c = w->c;
    struct fake *f = &w->f;
    struct caller first = {0}, others[4];
    pthread_t th, oth[4];

    f->gate = 1;
    first.c = c;
    first.f = f;
    assert_int_equal(pthread_create(&th, NULL, call_lookup, &first), 0);
    wait_inside(f);
    for (int i = 0; i < 4; i++) {
        others[i] = (struct caller){c, f, {0}, -1};
        assert_int_equal(pthread_create(&oth[i], NULL, call_lookup, &others[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(oth[i], NULL);
        assert_int_equal(others[i].have, 0);
        assert_int_equal(others[i].t[1], 0);
    }
    release(f);
    pthread_join(th, NULL);
    assert_int_equal(first.have, 1);
    assert_int_equal(first.t[1], 1700000000);
    assert_int_equal(atomic_load(&f->calls), 1);

    /* Stale now: one caller fetches again, held at the gate; the others read the old copy. */
    atomic_fetch_add(&clock_ms, 60000);
    pthread_mutex_lock(&f->mu);
    f->released = 0;
    f->base = 1700003600;
    pthread_mutex_unlock(&f->mu);
    assert_int_equal(pthread_create(&th, NULL, call_lookup, &first), 0);
    wait_inside(f);
    for (int i = 0; i < 4; i++) {
        others[i] = (struct caller){c, f, {0}, -1};
        assert_int_equal(pthread_create(&oth[i], NULL, call_lookup, &others[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(oth[i], NULL);
        assert_int_equal(others[i].have, 1);
        assert_int_equal(others[i].t[1], 1700000000);
    }
    release(f);
    pthread_join(th, NULL);
    assert_int_equal(first.t[1], 1700003600);
    assert_int_equal(atomic_load(&f->calls), 2);
}

/* zlc_get shares one copy among readers within its age, and fetches again after it; a copy a reader
 * holds stays whole while a newer one replaces it (AddressSanitizer would see a reader's copy freed
 * under it). */
static void test_get_shares_and_keeps_held_copies(void **state)
{
    struct world *w = *state;
    const struct zr_list *a = NULL, *b = NULL, *n = NULL;
    struct zk_err err = {0};

    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &a, &err), ZK_OK);
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &b, &err), ZK_OK);
    assert_ptr_equal(a, b);
    assert_int_equal(atomic_load(&w->f.calls), 1);
    atomic_fetch_add(&clock_ms, ZLC_FRESH_MS);
    w->f.base = 1700003600;
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &n, &err), ZK_OK);
    assert_int_equal(atomic_load(&w->f.calls), 2);
    assert_ptr_not_equal(a, n);
    assert_int_equal(n->repos[0].index_time, 1700003600);
    zlc_put(w->c, a);
    /* b is the same old copy, still held: whole until its last reader puts it. */
    assert_string_equal(b->repos[2].name, "other/legacy");
    assert_int_equal(b->repos[0].index_time, 1700000000);
    zlc_put(w->c, b);
    zlc_put(w->c, n);
    zlc_put(w->c, NULL);
}

/* A failed fetch is every reader's answer until its back-off has passed, without another fetch:
 * a flood of readers while Zoekt is down costs Zoekt nothing. */
static void test_get_failure_is_answered_during_backoff(void **state)
{
    struct world *w = *state;
    const struct zr_list *l = NULL;
    struct zk_err err = {0};

    w->f.rc = ZK_ECONNECT;
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_ECONNECT);
    assert_null(l);
    assert_string_equal(err.msg, "zoekt is down");
    w->f.rc = ZK_OK;
    for (int i = 0; i < 100; i++) {
        zk_err_clear(&err);
        assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_ECONNECT);
        assert_string_equal(err.msg, "zoekt is down");
    }
    assert_int_equal(atomic_load(&w->f.calls), 1);
    atomic_fetch_add(&clock_ms, 5000);
    assert_int_equal(zlc_get(w->c, ZLC_FRESH_MS, fake_fetch, &w->f, &l, &err), ZK_OK);
    assert_int_equal(atomic_load(&w->f.calls), 2);
    zlc_put(w->c, l);
}

struct getter {
    struct zlc *c;
    struct fake *f;
    const struct zr_list *l;
    int rc;
};

static void *call_get(void *arg)
{
    struct getter *g = arg;
    struct zk_err err = {0};

    g->rc = zlc_get(g->c, ZLC_FRESH_MS, fake_fetch, g->f, &g->l, &err);
    return NULL;
}

/* Readers that come while a fetch is under way wait for it and share its copy: sixteen readers, one
 * fetch. */
static void test_get_waits_for_the_fetch_in_flight(void **state)
{
    struct world *w = *state;
    struct getter g[16];
    pthread_t th[16];

    w->f.gate = 1;
    for (int i = 0; i < 16; i++) {
        g[i] = (struct getter){w->c, &w->f, NULL, -1};
        assert_int_equal(pthread_create(&th[i], NULL, call_get, &g[i]), 0);
        if (i == 0)
            wait_inside(&w->f);
    }
    release(&w->f);
    for (int i = 0; i < 16; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(g[i].rc, ZK_OK);
        assert_ptr_equal(g[i].l, g[0].l);
    }
    assert_int_equal(atomic_load(&w->f.calls), 1);
    for (int i = 0; i < 16; i++)
        zlc_put(w->c, g[i].l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_within_ttl_one_fetch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_ttl_fetched_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_keeps_copy_and_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_copy_yet_no_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancelled_fetch_starts_no_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_commit_no_time_and_fetched_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_fetch_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_shares_and_keeps_held_copies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_complete_copy_outlives_partial_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_failure_is_answered_during_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_waits_for_the_fetch_in_flight, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
