/* Unit tests for connector/metrics: the exposition (every tool's series present from the start, no
 * series for a name that is no tool's, webhooks only when served), the kinds of every lib/err.h code,
 * the bound on the text, and counting from many threads while scrapes run (this suite is also built
 * under ThreadSanitizer: TSAN_UNIT in the Makefile). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/metrics.h"
#include "connector/tools/tools.h"
#include "err.h"

#define ERRORS "zoekt_connector_tool_errors_total"
#define DURATION "zoekt_connector_tool_duration_seconds"
#define DELIVERIES "zoekt_connector_webhook_deliveries_total"

static void assert_contains(const char *text, const char *line)
{
    if (!strstr(text, line))
        fail_msg("missing \"%s\" in:\n%s", line, text);
}

/* The exposition of m, as a heap string. */
static char *render(struct cmetrics *m)
{
    struct buf b;

    buf_init(&b, CMETRICS_TEXT_MAX);
    assert_int_equal(cmetrics_render(m, &b), ZK_OK);
    return buf_steal(&b);
}

/* Reads the value of the sample line that starts with series (its name and labels, then a space) into
 * *v. Returns 0 when there is none. Safe from any thread. */
static int find_sample(const char *text, const char *series, unsigned long long *v)
{
    char key[256];
    const char *p;

    snprintf(key, sizeof(key), "\n%s ", series);
    p = strstr(text, key);
    if (!p)
        return 0;
    *v = strtoull(p + strlen(key), NULL, 10);
    return 1;
}

/* find_sample for the test's own thread, failing the test when the sample is missing. */
static unsigned long long sample(const char *text, const char *series)
{
    unsigned long long v = 0;

    if (!find_sample(text, series, &v))
        fail_msg("no sample %s in:\n%s", series, text);
    return v;
}

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);

    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, len) == 0;
    return n;
}

static void test_fresh_exposition(void **state)
{
    struct cmetrics *m = cmetrics_new(0);
    char *text = render(m);

    (void)state;
    assert_contains(text, "# TYPE zoekt_connector_build_info gauge\nzoekt_connector_build_info{version=\"" ZK_VERSION
                          "\"} 1\n");
    /* Every tool and kind from the start, so that rate() sees the first failure. */
    assert_int_equal(count_lines(text, "zoekt_connector_tool_calls_total{"), TOOL_COUNT);
    assert_int_equal(count_lines(text, ERRORS "{"), TOOL_COUNT * CMETRICS_KINDS);
    assert_int_equal(count_lines(text, DURATION "_bucket{"), TOOL_COUNT * 15);
    assert_contains(text, ERRORS "{tool=\"corpus_status\",kind=\"internal\"} 0\n");
    assert_contains(text, DURATION "_bucket{tool=\"find_symbol\",le=\"0.001\"} 0\n");
    assert_contains(text, DURATION "_bucket{tool=\"find_symbol\",le=\"30\"} 0\n");
    assert_contains(text, "zoekt_connector_unknown_tool_calls_total 0\n");
    assert_null(strstr(text, "webhook"));
    /* Each family is announced once, before its samples. */
    assert_int_equal(count_lines(text, "# TYPE "), 7);
    assert_int_equal(count_lines(text, "# HELP "), 7);
    free(text);
    cmetrics_free(m);

    m = cmetrics_new(1);
    text = render(m);
    assert_int_equal(count_lines(text, DELIVERIES "{"), CMETRICS_SCHEMES * CMETRICS_OUTCOMES);
    assert_contains(text, DELIVERIES "{scheme=\"none\",outcome=\"refused_signature\"} 0\n");
    assert_contains(text, DELIVERIES "{scheme=\"gitea\",outcome=\"discovery_failed\"} 0\n");
    free(text);
    cmetrics_free(m);
}

static void test_recorded_calls(void **state)
{
    struct cmetrics *m = cmetrics_new(1);
    char *text;

    (void)state;
    cmetrics_tool_call(m, "search_code", CMETRICS_NO_ERROR, 0.003, 1200);
    cmetrics_tool_call(m, "search_code", CMETRICS_UNAVAILABLE, 0.2, 180);
    cmetrics_tool_call(m, "search_code", CMETRICS_TIMEOUT, 31, 150);
    cmetrics_tool_call(m, "read_file", CMETRICS_INVALID_ARGUMENT, 0.0001, 60);
    cmetrics_tool_call(m, "read_file", CMETRICS_NO_ERROR, -1, 0); /* a clock step back counts as no time */
    cmetrics_tool_rate_limited(m, "search_code");
    /* Names that are no tool's: one counter, no series of their own. */
    cmetrics_tool_call(m, "grep", CMETRICS_INVALID_ARGUMENT, 0.001, 10);
    cmetrics_tool_call(m, "search_code\"} 1\nfake_metric{a=\"", CMETRICS_NO_ERROR, 0.001, 10);
    cmetrics_tool_call(m, NULL, CMETRICS_INTERNAL, 0.001, 10);
    cmetrics_tool_rate_limited(m, "grep");
    cmetrics_webhook(m, CMETRICS_GITHUB, CMETRICS_ACCEPTED);
    cmetrics_webhook(m, CMETRICS_GITHUB, CMETRICS_ACCEPTED);
    cmetrics_webhook(m, CMETRICS_NO_PROOF, CMETRICS_REFUSED_SIGNATURE);
    cmetrics_webhook(m, CMETRICS_SCHEMES, CMETRICS_ACCEPTED); /* out of range: ignored */
    cmetrics_tool_call(NULL, "search_code", CMETRICS_NO_ERROR, 1, 1);  /* no metrics kept: nothing */
    text = render(m);

    assert_int_equal(sample(text, "zoekt_connector_tool_calls_total{tool=\"search_code\"}"), 3);
    assert_int_equal(sample(text, "zoekt_connector_tool_calls_total{tool=\"read_file\"}"), 2);
    assert_int_equal(sample(text, "zoekt_connector_tool_calls_total{tool=\"list_files\"}"), 0);
    assert_int_equal(sample(text, ERRORS "{tool=\"search_code\",kind=\"unavailable\"}"), 1);
    assert_int_equal(sample(text, ERRORS "{tool=\"search_code\",kind=\"timeout\"}"), 1);
    assert_int_equal(sample(text, ERRORS "{tool=\"search_code\",kind=\"internal\"}"), 0);
    assert_int_equal(sample(text, ERRORS "{tool=\"read_file\",kind=\"invalid_argument\"}"), 1);
    assert_int_equal(sample(text, "zoekt_connector_tool_output_bytes_total{tool=\"search_code\"}"), 1530);
    assert_int_equal(sample(text, "zoekt_connector_tool_rate_limited_total{tool=\"search_code\"}"), 1);
    assert_int_equal(sample(text, "zoekt_connector_unknown_tool_calls_total"), 4);
    assert_null(strstr(text, "grep"));
    assert_null(strstr(text, "fake_metric"));
    /* 3 ms, 200 ms and 31 s: the last above every bound. */
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"search_code\",le=\"0.0025\"}"), 0);
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"search_code\",le=\"0.005\"}"), 1);
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"search_code\",le=\"0.25\"}"), 2);
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"search_code\",le=\"30\"}"), 2);
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"search_code\",le=\"+Inf\"}"), 3);
    assert_contains(text, DURATION "_sum{tool=\"search_code\"} 31.203000\n");
    assert_contains(text, DURATION "_count{tool=\"search_code\"} 3\n");
    assert_contains(text, DURATION "_sum{tool=\"read_file\"} 0.000100\n");
    assert_int_equal(sample(text, DURATION "_bucket{tool=\"read_file\",le=\"0.001\"}"), 2);
    assert_int_equal(sample(text, DELIVERIES "{scheme=\"github\",outcome=\"accepted\"}"), 2);
    assert_int_equal(sample(text, DELIVERIES "{scheme=\"none\",outcome=\"refused_signature\"}"), 1);
    assert_int_equal(sample(text, DELIVERIES "{scheme=\"gitlab\",outcome=\"accepted\"}"), 0);
    free(text);
    cmetrics_free(m);
}

static void test_kinds_of_codes(void **state)
{
    static const struct {
        int code;
        const char *kind;
    } cases[] = {
        {ZK_EINVAL, "invalid_argument"}, {ZK_ETOOBIG, "invalid_argument"}, {ZK_EHTTP, "rejected"},
        {ZK_ECONNECT, "unavailable"},    {ZK_ETRANSPORT, "unavailable"},   {ZK_ESERVER, "unavailable"},
        {ZK_EBUSY, "unavailable"},       {ZK_ETIMEOUT, "timeout"},         {ZK_ECANCELLED, "cancelled"},
        {ZK_EPARSE, "internal"},         {ZK_EIO, "internal"},             {ZK_EAPI, "internal"},
        {ZK_OK, "internal"},             {-99, "internal"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(cmetrics_kind_name(cmetrics_kind_of(cases[i].code)), cases[i].kind);
    assert_string_equal(cmetrics_kind_name(CMETRICS_NO_ERROR), "none");
}

/* The largest exposition: every counter at 20 digits and every sum far from zero still fits the bound
 * the front serves it in. A fresh one, whose values are all one digit, says how many values there are. */
static void test_bound(void **state)
{
    struct cmetrics *m = cmetrics_new(1);
    char *text = render(m);
    size_t values = count_lines(text, "zoekt_connector_"), worst = strlen(text) + values * 26;
    struct buf b;

    (void)state;
    print_message("exposition: %zu bytes fresh, at most %zu, bound %u\n", strlen(text), worst, CMETRICS_TEXT_MAX);
    assert_true(worst < CMETRICS_TEXT_MAX);
    free(text);
    buf_init(&b, 1024);
    assert_int_equal(cmetrics_render(m, &b), ZK_ETOOBIG);
    assert_null(b.data);
    cmetrics_free(m);
}

/* ---- many threads ---------------------------------------------------------------------------- */

#define WORKERS 8
#define CALLS 4000

struct shared {
    struct cmetrics *m;
    atomic_int done;
    char bad[256]; /* the scraper's complaint (cmocka's checks work on the test's thread only) */
    unsigned long long scrapes;
};

static void *worker(void *arg)
{
    struct shared *sh = arg;

    for (int i = 0; i < CALLS; i++) {
        int tool = i % TOOL_COUNT;

        cmetrics_tool_call(sh->m, tools_names[tool], i % 4 == 0 ? CMETRICS_UNAVAILABLE : CMETRICS_NO_ERROR,
                           (double)(i % 50) / 1000.0, 10);
        if (i % 10 == 0)
            cmetrics_webhook(sh->m, CMETRICS_GITLAB, CMETRICS_ACCEPTED);
    }
    atomic_fetch_add(&sh->done, 1);
    return NULL;
}

/* Scrapes while the workers count: every scrape's counts only grow, and a histogram's count always
 * equals its +Inf bucket. */
static void *scraper(void *arg)
{
    struct shared *sh = arg;
    unsigned long long last = 0, calls = 0, count = 0, inf = 0;
    struct buf b;

    while (atomic_load(&sh->done) < WORKERS && !sh->bad[0]) {
        buf_init(&b, CMETRICS_TEXT_MAX);
        if (cmetrics_render(sh->m, &b) != ZK_OK)
            snprintf(sh->bad, sizeof(sh->bad), "render failed under load");
        else if (!find_sample(b.data, "zoekt_connector_tool_calls_total{tool=\"search_code\"}", &calls) ||
                 !find_sample(b.data, "zoekt_connector_tool_duration_seconds_count{tool=\"search_code\"}", &count) ||
                 !find_sample(b.data, "zoekt_connector_tool_duration_seconds_bucket{tool=\"search_code\",le=\"+Inf\"}",
                              &inf))
            snprintf(sh->bad, sizeof(sh->bad), "a sample is missing");
        else if (calls < last || count != inf)
            snprintf(sh->bad, sizeof(sh->bad), "calls %llu after %llu, count %llu, +Inf %llu", calls, last, count,
                     inf);
        last = calls;
        sh->scrapes++;
        buf_free(&b);
    }
    return NULL;
}

static void test_concurrent_counting(void **state)
{
    struct shared sh = {.m = cmetrics_new(1)};
    pthread_t w[WORKERS], s;
    unsigned long long calls = 0, errors = 0, per_tool;
    char series[128], *text;

    (void)state;
    assert_int_equal(pthread_create(&s, NULL, scraper, &sh), 0);
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, worker, &sh), 0);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    pthread_join(s, NULL);
    if (sh.bad[0])
        fail_msg("scrape %llu: %s", sh.scrapes, sh.bad);
    print_message("%llu scrapes while counting\n", sh.scrapes);
    text = render(sh.m);
    for (int t = 0; t < TOOL_COUNT; t++) {
        snprintf(series, sizeof(series), "zoekt_connector_tool_calls_total{tool=\"%s\"}", tools_names[t]);
        per_tool = sample(text, series);
        calls += per_tool;
        snprintf(series, sizeof(series), "zoekt_connector_tool_duration_seconds_count{tool=\"%s\"}", tools_names[t]);
        assert_int_equal(sample(text, series), per_tool);
        snprintf(series, sizeof(series), "zoekt_connector_tool_errors_total{tool=\"%s\",kind=\"unavailable\"}",
                 tools_names[t]);
        errors += sample(text, series);
    }
    /* Nothing lost: every call of every thread is counted once. */
    assert_int_equal(calls, (unsigned long long)WORKERS * CALLS);
    assert_int_equal(errors, (unsigned long long)WORKERS * (CALLS / 4));
    assert_int_equal(sample(text, "zoekt_connector_tool_output_bytes_total{tool=\"search_code\"}"),
                     10 * sample(text, "zoekt_connector_tool_calls_total{tool=\"search_code\"}"));
    assert_int_equal(sample(text, DELIVERIES "{scheme=\"gitlab\",outcome=\"accepted\"}"),
                     (unsigned long long)WORKERS * (CALLS / 10));
    free(text);
    cmetrics_free(sh.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_exposition), cmocka_unit_test(test_recorded_calls),
        cmocka_unit_test(test_kinds_of_codes),   cmocka_unit_test(test_bound),
        cmocka_unit_test(test_concurrent_counting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
