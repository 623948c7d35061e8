/* Unit tests for lib/flag: the values both programs' flags accept and refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>

#include "err.h"
#include "flag.h"

static void test_long(void **state)
{
    long v = 7;

    (void)state;
    assert_int_equal(flag_long("64", 1, 64, &v), ZK_OK);
    assert_int_equal(v, 64);
    assert_int_equal(flag_long("-3", LONG_MIN, LONG_MAX, &v), ZK_OK);
    assert_int_equal(v, -3);
    assert_int_equal(flag_long("65", 1, 64, &v), ZK_EINVAL);
    assert_int_equal(flag_long("0", 1, 64, &v), ZK_EINVAL);
    assert_int_equal(flag_long("", 1, 64, &v), ZK_EINVAL);
    assert_int_equal(flag_long("5x", 1, 64, &v), ZK_EINVAL);
    assert_int_equal(flag_long("99999999999999999999", LONG_MIN, LONG_MAX, &v), ZK_EINVAL);
    assert_int_equal(v, -3); /* untouched by a refusal */
}

static void test_bool(void **state)
{
    int b = -1;

    (void)state;
    assert_int_equal(flag_bool(NULL, &b), ZK_OK);
    assert_int_equal(b, 1);
    assert_int_equal(flag_bool("false", &b), ZK_OK);
    assert_int_equal(b, 0);
    assert_int_equal(flag_bool("1", &b), ZK_OK);
    assert_int_equal(b, 1);
    assert_int_equal(flag_bool("0", &b), ZK_OK);
    assert_int_equal(b, 0);
    assert_int_equal(flag_bool("yes", &b), ZK_EINVAL);
    assert_int_equal(flag_bool("", &b), ZK_EINVAL);
}

static void test_positive(void **state)
{
    double d = 0;

    (void)state;
    assert_int_equal(flag_positive("2.5", &d), ZK_OK);
    assert_true(d == 2.5);
    assert_int_equal(flag_positive("0", &d), ZK_EINVAL);
    assert_int_equal(flag_positive("-1", &d), ZK_EINVAL);
    assert_int_equal(flag_positive("5x", &d), ZK_EINVAL);
    assert_int_equal(flag_positive("", &d), ZK_EINVAL);
    assert_int_equal(flag_positive("nan", &d), ZK_EINVAL);
}

static void test_duration(void **state)
{
    static const struct {
        const char *s;
        long ms; /* 0: refused */
    } cases[] = {
        {"30", 30000},       {"1500ms", 1500}, {"30s", 30000},   {"2m", 120000},  {"1h", 0},
        {"1d", 0},           {"1m30s", 90000}, {"10m", 600000},  {"0", 0},        {"0s", 0},
        {"", 0},             {"-5s", 0},       {"5", 5000},      {"5 s", 0},      {"5min", 0},
        {"s", 0},            {"1.5s", 0},      {"11m", 0},       {"601", 0},      {"99999999999999999999s", 0},
    };
    long ms;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = flag_duration_ms(cases[i].s, 600000, &ms);

        if (cases[i].ms == 0 && rc != ZK_EINVAL)
            fail_msg("\"%s\" was accepted as %ld ms", cases[i].s, ms);
        if (cases[i].ms != 0 && (rc != ZK_OK || ms != cases[i].ms))
            fail_msg("\"%s\": rc %d, %ld ms, want %ld", cases[i].s, rc, ms, cases[i].ms);
    }
    /* Hours and days, where the bound allows them (10 minutes, above, does not). */
    assert_int_equal(flag_duration_ms("1h30m", LONG_MAX, &ms), ZK_OK);
    assert_int_equal(ms, 5400000);
    assert_int_equal(flag_duration_ms("3d", LONG_MAX, &ms), ZK_OK);
    assert_int_equal(ms, 3L * 86400000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_positive),
        cmocka_unit_test(test_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
