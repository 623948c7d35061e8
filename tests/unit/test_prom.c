/* Unit tests for lib/prom: the exposition lines byte for byte (families, escaping, values, histograms)
 * and the buffer bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "err.h"
#include "prom.h"

static void test_family_escapes_help(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 4096);
    assert_int_equal(prom_family(&b, "x_total", "counter", "Calls \"made\", per C:\\tools\nsecond line."), ZK_OK);
    /* HELP escapes backslash and line feed; a quote stands for itself there. */
    assert_string_equal(b.data, "# HELP x_total Calls \"made\", per C:\\\\tools\\nsecond line.\n"
                                "# TYPE x_total counter\n");
    buf_free(&b);
}

static void test_samples_and_label_escaping(void **state)
{
    const struct prom_label one = {"tool", "search_code"};
    const struct prom_label odd[] = {{"a", "say \"hi\""}, {"b", "back\\slash"}, {"c", "two\nlines"}};
    struct buf b;

    (void)state;
    buf_init(&b, 4096);
    assert_int_equal(prom_counter(&b, "x_total", NULL, 0, 18446744073709551615ULL), ZK_OK);
    assert_int_equal(prom_counter(&b, "x_total", &one, 1, 3), ZK_OK);
    assert_int_equal(prom_gauge(&b, "g", odd, 3, 0.1), ZK_OK);
    assert_string_equal(b.data, "x_total 18446744073709551615\n"
                                "x_total{tool=\"search_code\"} 3\n"
                                "g{a=\"say \\\"hi\\\"\",b=\"back\\\\slash\",c=\"two\\nlines\"} 0.10000000000000001\n");
    buf_free(&b);
}

static void test_gauge_special_values(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 4096);
    assert_int_equal(prom_gauge(&b, "g", NULL, 0, NAN), ZK_OK);
    assert_int_equal(prom_gauge(&b, "g", NULL, 0, INFINITY), ZK_OK);
    assert_int_equal(prom_gauge(&b, "g", NULL, 0, -INFINITY), ZK_OK);
    assert_int_equal(prom_gauge(&b, "g", NULL, 0, 1764547200), ZK_OK);
    assert_int_equal(prom_gauge(&b, "g", NULL, 0, 0), ZK_OK);
    assert_string_equal(b.data, "g NaN\ng +Inf\ng -Inf\ng 1764547200\ng 0\n");
    buf_free(&b);
}

static void test_bucket_index(void **state)
{
    static const double bounds[] = {0.001, 0.01, 0.1, 1};

    (void)state;
    assert_int_equal(prom_bucket(bounds, 4, 0), 0);
    assert_int_equal(prom_bucket(bounds, 4, 0.001), 0); /* an upper bound is inclusive */
    assert_int_equal(prom_bucket(bounds, 4, 0.0011), 1);
    assert_int_equal(prom_bucket(bounds, 4, 1), 3);
    assert_int_equal(prom_bucket(bounds, 4, 1.5), 4);
    assert_int_equal(prom_bucket(bounds, 4, NAN), 4); /* compares with nothing: counted above every bound */
}

static void test_histogram_is_cumulative(void **state)
{
    static const double bounds[] = {0.005, 0.25, 30};
    const unsigned long long counts[] = {1, 1, 0, 1};
    const struct prom_label tool = {"tool", "read_file"};
    struct buf b;

    (void)state;
    buf_init(&b, 4096);
    assert_int_equal(prom_histogram(&b, "d_seconds", &tool, 1, bounds, 3, counts, 60.203), ZK_OK);
    assert_string_equal(b.data, "d_seconds_bucket{tool=\"read_file\",le=\"0.005\"} 1\n"
                                "d_seconds_bucket{tool=\"read_file\",le=\"0.25\"} 2\n"
                                "d_seconds_bucket{tool=\"read_file\",le=\"30\"} 2\n"
                                "d_seconds_bucket{tool=\"read_file\",le=\"+Inf\"} 3\n"
                                "d_seconds_sum{tool=\"read_file\"} 60.203000\n"
                                "d_seconds_count{tool=\"read_file\"} 3\n");
    buf_reset(&b);
    assert_int_equal(prom_histogram(&b, "d_seconds", NULL, 0, bounds, 3, counts, 0), ZK_OK);
    assert_non_null(strstr(b.data, "d_seconds_bucket{le=\"+Inf\"} 3\nd_seconds_sum 0.000000\nd_seconds_count 3\n"));
    buf_free(&b);
}

static void test_bound_empties_the_buffer(void **state)
{
    static const double bounds[] = {1, 2, 3};
    const unsigned long long counts[] = {0, 0, 0, 0};
    struct buf b;

    (void)state;
    buf_init(&b, 64);
    assert_int_equal(prom_histogram(&b, "d_seconds", NULL, 0, bounds, 3, counts, 0), ZK_ETOOBIG);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(prom_family(&b, "n", "gauge", "Fits."), ZK_OK);
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_escapes_help),
        cmocka_unit_test(test_samples_and_label_escaping),
        cmocka_unit_test(test_gauge_special_values),
        cmocka_unit_test(test_bucket_index),
        cmocka_unit_test(test_histogram_is_cumulative),
        cmocka_unit_test(test_bound_empties_the_buffer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
