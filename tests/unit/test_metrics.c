/* Unit tests for controller/runtime/metrics: the Prometheus text carries what was recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "controller/runtime/metrics.h"

static void assert_contains(const char *text, const char *line)
{
    if (!strstr(text, line))
        fail_msg("missing \"%s\" in:\n%s", line, text);
}

static void test_reconcile_counts_and_histogram(void **state)
{
    struct metrics *m = metrics_new();
    struct buf b;

    (void)state;
    metrics_reconcile_done(m, 0.003, 1);
    metrics_reconcile_done(m, 0.2, 1);
    metrics_reconcile_done(m, 60, 0);
    buf_init(&b, 1 << 16);
    assert_int_equal(metrics_render(m, NULL, &b), ZK_OK);
    assert_contains(b.data, "zoekt_operator_reconcile_total{result=\"success\"} 2\n");
    assert_contains(b.data, "zoekt_operator_reconcile_total{result=\"error\"} 1\n");
    assert_contains(b.data, "zoekt_operator_reconcile_errors_total 1\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_bucket{le=\"0.005\"} 1\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_bucket{le=\"0.25\"} 2\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_bucket{le=\"30\"} 2\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_bucket{le=\"+Inf\"} 3\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_count 3\n");
    assert_contains(b.data, "zoekt_operator_reconcile_duration_seconds_sum 60.203000\n");
    assert_null(strstr(b.data, "workqueue"));
    buf_free(&b);
    metrics_free(m);
}

static void test_api_requests_leader_and_queue(void **state)
{
    struct metrics *m = metrics_new();
    struct queue_stats qs = {.depth = 3, .waiting = 1, .adds = 42, .retries = 5};
    struct buf b;

    (void)state;
    metrics_api_request(m, "apply", 200);
    metrics_api_request(m, "apply", 200);
    metrics_api_request(m, "apply", 409);
    metrics_api_request(m, "get", 0);
    metrics_set_leader(m, 1);
    assert_int_equal(metrics_api_count(m, "apply"), 3);
    assert_int_equal(metrics_api_count(m, "create"), 0);
    buf_init(&b, 1 << 16);
    assert_int_equal(metrics_render(m, &qs, &b), ZK_OK);
    assert_contains(b.data, "zoekt_operator_api_requests_total{verb=\"apply\",code=\"200\"} 2\n");
    assert_contains(b.data, "zoekt_operator_api_requests_total{verb=\"apply\",code=\"409\"} 1\n");
    assert_contains(b.data, "zoekt_operator_api_requests_total{verb=\"get\",code=\"0\"} 1\n");
    assert_contains(b.data, "zoekt_operator_leader 1\n");
    assert_contains(b.data, "zoekt_operator_workqueue_depth 3\n");
    assert_contains(b.data, "zoekt_operator_workqueue_waiting 1\n");
    assert_contains(b.data, "zoekt_operator_workqueue_adds_total 42\n");
    assert_contains(b.data, "zoekt_operator_workqueue_retries_total 5\n");
    buf_free(&b);
    metrics_free(m);
}

static void test_render_respects_the_buffer_bound(void **state)
{
    struct metrics *m = metrics_new();
    struct buf b;

    (void)state;
    buf_init(&b, 64);
    assert_int_equal(metrics_render(m, NULL, &b), ZK_ETOOBIG);
    assert_null(b.data);
    metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconcile_counts_and_histogram),
        cmocka_unit_test(test_api_requests_leader_and_queue),
        cmocka_unit_test(test_render_respects_the_buffer_bound),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
