/* Unit tests for lib/budget: holds add up to the limit and never past it, a refusal says whether
 * waiting can help, and every byte taken is given back, also when threads race for the last room. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "budget.h"
#include "err.h"

static void test_holds_add_up_to_the_limit(void **state)
{
    struct budget b = {.limit = 1000};
    struct budget_hold one = BUDGET_HOLD(&b), two = BUDGET_HOLD(&b);

    (void)state;
    assert_int_equal(budget_add(&one, 600), ZK_OK);
    assert_int_equal(budget_add(&two, 300), ZK_OK);
    /* 600 + 300 + 200 passes 1,000: the second holder must wait, and keeps the 300 it had. */
    assert_int_equal(budget_grow(&two, 500), ZK_EBUSY);
    assert_int_equal(budget_add(&two, 200), ZK_EBUSY);
    assert_int_equal(two.held, 300);
    assert_int_equal(atomic_load(&b.used), 900);
    budget_release(&one);
    assert_int_equal(budget_grow(&two, 500), ZK_OK);
    budget_release(&two);
    assert_int_equal(atomic_load(&b.used), 0);
}

/* A want larger than the whole budget can never be had; the caller is told so, not to wait. */
static void test_more_than_the_limit_is_too_big(void **state)
{
    struct budget b = {.limit = 1000};
    struct budget_hold h = BUDGET_HOLD(&b);

    (void)state;
    assert_int_equal(budget_grow(&h, 1001), ZK_ETOOBIG);
    assert_int_equal(atomic_load(&b.used), 0);
    assert_int_equal(h.held, 0);
}

/* Growing in small steps takes an eighth more than asked, so a body arriving chunk by chunk touches
 * the shared count rarely; near the limit the step is what was asked. */
static void test_growth_takes_a_little_slack_until_the_limit(void **state)
{
    struct budget b = {.limit = 1000};
    struct budget_hold h = BUDGET_HOLD(&b), other = BUDGET_HOLD(&b);

    (void)state;
    assert_int_equal(budget_grow(&h, 200), ZK_OK);
    assert_int_equal(h.held, 225);
    assert_int_equal(budget_grow(&h, 220), ZK_OK); /* already held */
    assert_int_equal(h.held, 225);
    /* 776 (690 and an eighth) beside 225 would pass 1,000: the 690 asked for is taken. */
    assert_int_equal(budget_grow(&other, 690), ZK_OK);
    assert_int_equal(other.held, 690);
    /* Likewise 337 beside 690 would; 300 fits. */
    assert_int_equal(budget_grow(&h, 300), ZK_OK);
    assert_int_equal(h.held, 300);
    assert_int_equal(atomic_load(&b.used), 990);
    budget_release(&h);
    budget_release(&other);
    assert_int_equal(atomic_load(&b.used), 0);
}

/* An exact addition takes no slack: a reply added to a body's reservation costs its own size. */
static void test_add_is_exact(void **state)
{
    struct budget b = {.limit = 1000};
    struct budget_hold h = BUDGET_HOLD(&b);

    (void)state;
    assert_int_equal(budget_grow(&h, 200), ZK_OK); /* 225 with its slack */
    assert_int_equal(budget_add(&h, 10), ZK_OK);
    assert_int_equal(h.held, 235);
    assert_int_equal(atomic_load(&b.used), 235);
    assert_int_equal(budget_add(&h, 766), ZK_ETOOBIG); /* 1,001 in this hold alone */
    assert_int_equal(budget_add(&h, 765), ZK_OK);
    budget_release(&h);
    assert_int_equal(atomic_load(&b.used), 0);
}

static void test_no_budget_always_fits(void **state)
{
    struct budget_hold h = BUDGET_HOLD(NULL);

    (void)state;
    assert_int_equal(budget_grow(&h, (size_t)1 << 40), ZK_OK);
    budget_release(&h);
}

#define RACERS 8
#define ROUNDS 20000

/* What the racers hold at once by their own count, apart from the budget's, which a refused take
 * raises for an instant. */
static atomic_size_t held_by_racers;
static atomic_size_t held_peak;

static void *race(void *arg)
{
    struct budget *b = arg;
    struct budget_hold h;
    size_t now, peak;
    int i;

    for (i = 0; i < ROUNDS; i++) {
        h = BUDGET_HOLD(b);
        if (budget_grow(&h, 100 + (size_t)(i % 7) * 50) == ZK_OK) {
            now = atomic_fetch_add(&held_by_racers, h.held) + h.held;
            peak = atomic_load(&held_peak);
            while (now > peak && !atomic_compare_exchange_weak(&held_peak, &peak, now))
                ;
            atomic_fetch_sub(&held_by_racers, h.held);
        }
        budget_release(&h);
    }
    return NULL;
}

/* Threads racing for room never hold more than the limit together, and leave the count at 0. */
static void test_racing_holders_stay_within_the_limit(void **state)
{
    struct budget b = {.limit = 1000};
    pthread_t t[RACERS];
    int i;

    (void)state;
    for (i = 0; i < RACERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race, &b), 0);
    for (i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    assert_true(atomic_load(&held_peak) <= b.limit);
    assert_true(atomic_load(&held_peak) >= 400); /* they did hold at the same time */
    assert_int_equal(atomic_load(&b.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holds_add_up_to_the_limit),
        cmocka_unit_test(test_more_than_the_limit_is_too_big),
        cmocka_unit_test(test_growth_takes_a_little_slack_until_the_limit),
        cmocka_unit_test(test_add_is_exact),
        cmocka_unit_test(test_no_budget_always_fits),
        cmocka_unit_test(test_racing_holders_stay_within_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
