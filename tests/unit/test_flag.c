/* Unit tests for lib/flag: the values both programs' flags accept and refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <string.h>

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

/* The destinations a table fills, and the table, as a program declares them. */
struct opts {
    const char *name;
    int help, elect, workers;
    long offset, timeout_ms, period_s;
    size_t budget;
    double lease;
    int odd;
};

static int parse_odd(const char *value, void *dst)
{
    long v;

    if (flag_long(value, LONG_MIN, LONG_MAX, &v) != ZK_OK || v % 2 == 0)
        return ZK_EINVAL;
    *(int *)dst = (int)v;
    return ZK_OK;
}

static int parse(struct opts *o, struct zk_err *err, int argc, char **argv)
{
    const struct flag flags[] = {
        {"name", FLAG_STRING, &o->name, 0, 0, NULL, NULL},
        {"help", FLAG_SWITCH, &o->help, 0, 0, NULL, NULL},
        {"leader-elect", FLAG_BOOL, &o->elect, 0, 0, NULL, NULL},
        {"workers", FLAG_INT, &o->workers, 1, 64, NULL, NULL},
        {"offset", FLAG_LONG, &o->offset, LONG_MIN, LONG_MAX, NULL, NULL},
        {"budget", FLAG_SIZE, &o->budget, 1024, 65536, NULL, NULL},
        {"lease", FLAG_SECONDS, &o->lease, 0, 0, NULL, NULL},
        {"timeout", FLAG_DURATION_MS, &o->timeout_ms, 0, 600000, NULL, NULL},
        {"period", FLAG_DURATION_S, &o->period_s, 0, 0, NULL, NULL},
        {"odd", FLAG_FUNC, &o->odd, 0, 0, parse_odd, "an odd number"},
    };

    memset(o, 0, sizeof(*o));
    o->elect = -1;
    return flag_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, err);
}

#define ARGV(...) ((char *[]){"prog", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"prog", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, err, ...) parse(o, err, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_parse_fills_every_type(void **state)
{
    struct zk_err err = {0};
    struct opts o;

    (void)state;
    assert_int_equal(PARSE(&o, &err, "--name", "a b", "--help", "--leader-elect=false", "--workers=8", "--offset",
                           "-5", "--budget", "2048", "--lease=2.5", "--timeout", "1m30s", "--period", "5m", "--odd",
                           "7"),
                     ZK_OK);
    assert_string_equal(o.name, "a b");
    assert_int_equal(o.help, 1);
    assert_int_equal(o.elect, 0);
    assert_int_equal(o.workers, 8);
    assert_int_equal(o.offset, -5);
    assert_int_equal(o.budget, 2048);
    assert_true(o.lease == 2.5);
    assert_int_equal(o.timeout_ms, 90000);
    assert_int_equal(o.period_s, 300);
    assert_int_equal(o.odd, 7);
    /* A bare boolean flag means true, and a flag given twice keeps the last value. */
    assert_int_equal(PARSE(&o, &err, "--leader-elect", "--workers", "2", "--workers", "3"), ZK_OK);
    assert_int_equal(o.elect, 1);
    assert_int_equal(o.workers, 3);
}

/* Each refusal names the argument and says what was expected, in one wording for every flag. */
static void test_parse_refusals_say_what_was_expected(void **state)
{
    const struct {
        int argc;
        char **argv;
        const char *msg;
    } cases[] = {
        {ARGC("--workers", "0"), ARGV("--workers", "0"), "invalid --workers 0: expected a whole number from 1 to 64"},
        {ARGC("--offset=x"), ARGV("--offset=x"), "invalid --offset x: expected a whole number"},
        {ARGC("--budget", "10"), ARGV("--budget", "10"), "invalid --budget 10: expected a whole number from 1024 to 65536"},
        {ARGC("--lease", "5x"), ARGV("--lease", "5x"), "invalid --lease 5x: expected a positive number of seconds"},
        {ARGC("--timeout=11m"), ARGV("--timeout=11m"),
         "invalid --timeout 11m: expected a duration such as 30s, 1500ms or 2m, at most 10m"},
        {ARGC("--period", "1500ms"), ARGV("--period", "1500ms"),
         "invalid --period 1500ms: expected a duration in whole seconds such as 30s, 5m or 1h"},
        {ARGC("--leader-elect=yes"), ARGV("--leader-elect=yes"), "invalid --leader-elect yes: expected true or false"},
        {ARGC("--odd", "4"), ARGV("--odd", "4"), "invalid --odd 4: expected an odd number"},
        {ARGC("--no-such"), ARGV("--no-such"), "unknown flag --no-such"},
        {ARGC("-x"), ARGV("-x"), "unknown flag -x"},
        {ARGC("--workers"), ARGV("--workers"), "--workers needs a value"},
        {ARGC("--help=1"), ARGV("--help=1"), "--help takes no value"},
        {ARGC("--help", "extra"), ARGV("--help", "extra"), "unexpected argument extra"},
    };
    struct zk_err err;
    struct opts o;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(parse(&o, &err, cases[i].argc, cases[i].argv), ZK_EINVAL);
        assert_string_equal(err.msg, cases[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_positive),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_parse_fills_every_type),
        cmocka_unit_test(test_parse_refusals_say_what_was_expected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
