/* Unit tests for lib/rfc3339: formatting with the year in four digits, years RFC 3339 cannot write,
 * buffers too small, and the round trip through rfc3339_parse over the whole range it can write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rfc3339.h"

/* Seconds since the epoch of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define FIRST_WRITABLE (-62167219200LL)
#define LAST_WRITABLE 253402300799LL

/* A year before 1000 is written with zeros in front: strftime's %Y wrote "985-...", which
 * rfc3339_parse refuses. */
static void test_four_digit_year(void **state)
{
    static const struct {
        long long t;
        const char *want;
    } cases[] = {
        {0, "1970-01-01T00:00:00Z"},
        {1796083535, "2026-12-01T00:05:35Z"},
        {-30763843200LL, "0995-02-18T00:00:00Z"},
        {-61851600000LL, "0010-01-01T00:00:00Z"},
        {-62135596800LL, "0001-01-01T00:00:00Z"},
        {FIRST_WRITABLE, "0000-01-01T00:00:00Z"},
        {LAST_WRITABLE, "9999-12-31T23:59:59Z"},
    };
    char buf[32];
    time_t back;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rfc3339_format((time_t)cases[i].t, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].want);
        assert_true(rfc3339_parse(buf, &back));
        assert_true((long long)back == cases[i].t);
    }
}

/* A year before 0 or after 9999 has no RFC 3339 form (four digits, no sign): the empty string, as
 * for a buffer too small, rather than a text that no reader takes. */
static void test_unwritable(void **state)
{
    char buf[32];

    (void)state;
    memset(buf, 'x', sizeof(buf));
    rfc3339_format((time_t)(FIRST_WRITABLE - 1), buf, sizeof(buf));
    assert_string_equal(buf, "");
    memset(buf, 'x', sizeof(buf));
    rfc3339_format((time_t)(LAST_WRITABLE + 1), buf, sizeof(buf));
    assert_string_equal(buf, "");
    memset(buf, 'x', sizeof(buf));
    rfc3339_format((time_t)INT64_MAX, buf, sizeof(buf));
    assert_string_equal(buf, "");
    /* 20 characters and the terminator: 21 bytes suffice, 20 do not. */
    rfc3339_format(0, buf, 21);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    memset(buf, 'x', sizeof(buf));
    rfc3339_format(0, buf, 20);
    assert_string_equal(buf, "");
    buf[0] = 'x';
    rfc3339_format(0, buf, 0);
    assert_int_equal(buf[0], 'x');
}

/* Every day of the range, at a time of day that changes with it, survives format and parse. */
static void test_round_trip(void **state)
{
    char buf[32];
    time_t back = 0;

    (void)state;
    for (long long t = FIRST_WRITABLE; t <= LAST_WRITABLE; t += 86400 + 3607) {
        rfc3339_format((time_t)t, buf, sizeof(buf));
        if (!rfc3339_parse(buf, &back) || (long long)back != t)
            fail_msg("%lld: formatted \"%s\", read back %lld", t, buf, (long long)back);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_digit_year),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
