/* The per-corpus gauges of /metrics (controller/corpus/gauges.h): read from a status as the operator
 * writes it, exported with Unix timestamps, left out where the status has no value, and grouped by
 * family as the text format requires. */
#include "controller/corpus/gauges.h"
#include "buf.h"
#include "err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const healthy =
    "{\"metadata\":{\"name\":\"org\",\"namespace\":\"codesearch\"},"
    "\"spec\":{\"freshness\":{\"maxAge\":\"12h\"}},"
    "\"status\":{\"repositoryCount\":121,\"lastIndexTime\":\"2026-11-29T03:41:10Z\","
    "\"oldestIndexTime\":\"2026-11-29T03:12:55Z\",\"freshness\":{\"stale\":2,\"staleRepositories\":[\"a\",\"b\"]},"
    "\"indexer\":{\"lastSuccessfulTime\":\"2026-11-29T03:41:12Z\",\"lastFailedTime\":\"2026-11-27T03:20:00Z\","
    "\"failedRepositories\":[{\"name\":\"x\"},{\"name\":\"y\"},{\"name\":\"z\"}]},"
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"Fresh\",\"status\":\"False\"}]}}";

static const char *const fresh_corpus =
    "{\"metadata\":{\"name\":\"new\",\"namespace\":\"team-a\"},\"spec\":{},"
    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}";

static char *render(const char *const *corpora, size_t n)
{
    struct corpus_gauges g[4];
    struct buf b;
    char *text;

    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        cJSON *c = cJSON_Parse(corpora[i]);

        assert_non_null(c);
        gauges_observe(c, &g[i]);
        cJSON_Delete(c);
    }
    buf_init(&b, 1 << 20);
    assert_int_equal(gauges_render(g, n, &b), ZK_OK);
    text = strdup(b.data);
    buf_free(&b);
    return text;
}

static void expect_line(const char *text, const char *line)
{
    char want[512];

    snprintf(want, sizeof(want), "\n%s\n", line);
    if (!strstr(text, want))
        fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_from_status(void **state)
{
    char *text = render(&healthy, 1);

    (void)state;
    expect_line(text, "zoekt_corpus_ready{namespace=\"codesearch\",name=\"org\"} 1");
    expect_line(text, "zoekt_corpus_fresh{namespace=\"codesearch\",name=\"org\"} 0");
    expect_line(text, "zoekt_corpus_repositories{namespace=\"codesearch\",name=\"org\"} 121");
    expect_line(text, "zoekt_corpus_repositories_failed{namespace=\"codesearch\",name=\"org\"} 3");
    expect_line(text, "zoekt_corpus_repositories_stale{namespace=\"codesearch\",name=\"org\"} 2");
    /* 2026-11-29T03:41:10Z and the others as Unix seconds. */
    expect_line(text, "zoekt_corpus_index_newest_timestamp_seconds{namespace=\"codesearch\",name=\"org\"} 1795923670");
    expect_line(text, "zoekt_corpus_index_oldest_timestamp_seconds{namespace=\"codesearch\",name=\"org\"} 1795921975");
    expect_line(text, "zoekt_corpus_max_age_seconds{namespace=\"codesearch\",name=\"org\"} 43200");
    expect_line(text,
                "zoekt_corpus_indexer_last_success_timestamp_seconds{namespace=\"codesearch\",name=\"org\"} 1795923672");
    expect_line(text,
                "zoekt_corpus_indexer_last_failure_timestamp_seconds{namespace=\"codesearch\",name=\"org\"} 1795749600");
    free(text);
}

/* A corpus not indexed yet has no count and no times (a time of 0 would read as 56 years old), and
 * the default maxAge; every family is still declared once, with its samples together. */
static void test_absent_values_and_families(void **state)
{
    const char *const both[] = {healthy, fresh_corpus};
    char *text = render(both, 2);
    const char *p;
    int helps = 0;

    (void)state;
    expect_line(text, "zoekt_corpus_ready{namespace=\"team-a\",name=\"new\"} 0");
    expect_line(text, "zoekt_corpus_max_age_seconds{namespace=\"team-a\",name=\"new\"} 129600");
    assert_null(strstr(text, "zoekt_corpus_repositories{namespace=\"team-a\""));
    assert_null(strstr(text, "zoekt_corpus_index_oldest_timestamp_seconds{namespace=\"team-a\""));
    assert_null(strstr(text, "zoekt_corpus_fresh{namespace=\"team-a\""));
    for (p = text; (p = strstr(p, "# HELP ")) != NULL; p++)
        helps++;
    assert_int_equal(helps, GAUGE_COUNT);
    /* Both corpora's ready samples follow the one TYPE line of their family. */
    p = strstr(text, "# TYPE zoekt_corpus_ready gauge\n");
    assert_non_null(p);
    assert_int_equal(strncmp(strchr(p, '\n') + 1, "zoekt_corpus_ready{namespace=\"codesearch\"", 40), 0);
    assert_non_null(strstr(p, "\nzoekt_corpus_ready{namespace=\"team-a\",name=\"new\"} 0\n# HELP zoekt_corpus_fresh"));
    free(text);
}

/* A bound too small for the exposition is the buffer's error, never a cut text. */
static void test_bound(void **state)
{
    struct corpus_gauges g;
    struct buf b;
    cJSON *c = cJSON_Parse(healthy);

    (void)state;
    gauges_observe(c, &g);
    cJSON_Delete(c);
    buf_init(&b, 64);
    assert_int_equal(gauges_render(&g, 1, &b), ZK_ETOOBIG);
    assert_int_equal(b.len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_status),
        cmocka_unit_test(test_absent_values_and_families),
        cmocka_unit_test(test_bound),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
