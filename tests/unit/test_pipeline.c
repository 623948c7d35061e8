/* Unit tests for the tools' steps (connector/tools/pipeline.h) without a server: what parse accepts and
 * plan asks the driver to run, for the literal reading and the repository checks every tool shares,
 * and find_dependents from its arguments to its answer (plan's query, render's lines and
 * structuredContent in the shape tests/fixtures/structured/find_dependents.json states). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/tools/pipeline.h"
#include "connector/zoekt/listcache.h"
#include "tests/support/shape.h"

static const struct connector_config test_cfg = {.zoekt_url = "http://127.0.0.1:1", .max_files = 30,
                                                 .context_lines = 2, .search_timeout_ms = 1000,
                                                 .list_timeout_ms = 1000, .output_budget = 16384};
static const struct tool_ctx test_ctx = {&test_cfg, NULL};

/* A tool's state and plan for args (JSON text): parse and plan as the driver runs them, with r and q
 * for the test to read. Returns what parse or plan returned (ZK_OK when both accepted). */
struct planned {
    void *state;
    struct tool_query q;
    struct tool_result r;
    cJSON *args;
    const struct tool_def *def;
};

static int plan(struct planned *p, const struct tool_def *def, const char *args, enum tool_reading reading)
{
    int rc;

    memset(p, 0, sizeof(*p));
    p->def = def;
    p->args = cJSON_Parse(args);
    assert_non_null(p->args);
    p->state = calloc(1, def->state_size);
    tool_result_init(&p->r);
    rc = def->parse(&test_ctx, p->args, p->state, &p->r);
    return rc ? rc : def->plan(&test_ctx, p->state, reading, &p->q, &p->r);
}

static void planned_free(struct planned *p)
{
    if (p->def->release)
        p->def->release(p->state);
    free(p->state);
    free(p->q.zq);
    tool_result_free(&p->r);
    cJSON_Delete(p->args);
}

/* search_code: a pattern with metacharacters may be read literally, and the literal plan is the
 * escaped text; a plain word has one reading only; a page after the first never switches readings. */
static void test_search_code_readings(void **state)
{
    struct planned p;

    (void)state;
    assert_int_equal(plan(&p, &tool_search_code_def, "{\"query\":\"f(5 * time.Second)\",\"repo\":\"acme\"}",
                          TOOL_READ_AS_GIVEN), ZK_OK);
    assert_true(p.q.literal_fallback);
    assert_true(p.q.ranked);
    assert_int_equal(p.q.page, 30);
    assert_int_equal(p.q.n_repos, 1);
    assert_string_equal(p.q.repos[0], "acme");
    assert_non_null(strstr(p.q.zq, "content:\"f(5 * time.Second)\""));
    planned_free(&p);

    assert_int_equal(plan(&p, &tool_search_code_def, "{\"query\":\"f(5 * time.Second)\"}", TOOL_READ_LITERALLY),
                     ZK_OK);
    assert_false(p.q.literal_fallback);
    assert_string_equal(p.q.zq, "content:\"f\\\\(5\\\\x20\\\\*\\\\x20time\\\\.Second\\\\)\"");
    planned_free(&p);

    assert_int_equal(plan(&p, &tool_search_code_def, "{\"query\":\"ParseConfig\"}", TOOL_READ_AS_GIVEN), ZK_OK);
    assert_false(p.q.literal_fallback);
    planned_free(&p);

    /* A cursor of another query is refused by plan, before any search. */
    assert_int_equal(plan(&p, &tool_search_code_def, "{\"query\":\"a\",\"cursor\":\"s0000000000000000.30\"}",
                          TOOL_READ_AS_GIVEN), ZK_EINVAL);
    assert_true(p.r.is_error);
    assert_non_null(strstr(p.r.text.data, "cursor"));
    planned_free(&p);
}

/* The tools that show the catalogue take it fresh; lookups take a minute-old copy; read_file and
 * list_files hand the driver their repository so that an empty answer can say it selects none. */
static void test_catalogue_and_repositories(void **state)
{
    struct planned p;

    (void)state;
    assert_int_equal(plan(&p, &tool_list_repositories_def, "{}", TOOL_READ_AS_GIVEN), ZK_OK);
    assert_null(p.q.zq);
    assert_int_equal(p.q.catalogue_ms, ZLC_FRESH_MS);
    planned_free(&p);

    assert_int_equal(plan(&p, &tool_read_file_def, "{\"repo\":\"bulk\",\"path\":\"main.go\"}", TOOL_READ_AS_GIVEN),
                     ZK_OK);
    assert_int_equal(p.q.catalogue_ms, ZLC_TTL_MS);
    assert_int_equal(p.q.n_repos, 1);
    assert_true(p.q.so.whole);
    planned_free(&p);

    assert_int_equal(plan(&p, &tool_list_files_def, "{\"file\":\"*.go\"}", TOOL_READ_AS_GIVEN), ZK_EINVAL);
    assert_non_null(strstr(p.r.text.data, "list_files needs \"repo\""));
    planned_free(&p);
}

static void test_find_dependents_plan(void **state)
{
    struct planned p;

    (void)state;
    assert_int_equal(plan(&p, &tool_find_dependents_def, "{\"package\":\"github.com/acme/bulk\",\"repo\":\"pay*\"}",
                          TOOL_READ_AS_GIVEN), ZK_OK);
    /* One pair per manifest, each case-sensitive, the name escaped, within the repositories. */
    assert_non_null(strstr(p.q.zq, "file:(^|/)go\\.mod$"));
    assert_non_null(strstr(p.q.zq, "file:(^|/)package\\.json$"));
    assert_non_null(strstr(p.q.zq, "file:(^|/)Cargo\\.toml$"));
    assert_non_null(strstr(p.q.zq, "github\\\\.com/acme/bulk"));
    assert_non_null(strstr(p.q.zq, "repo:"));
    assert_false(p.q.literal_fallback);
    assert_int_equal(p.q.so.max_files, 100);
    planned_free(&p);

    assert_int_equal(plan(&p, &tool_find_dependents_def, "{\"package\":\"a b\"}", TOOL_READ_AS_GIVEN), ZK_EINVAL);
    assert_non_null(strstr(p.r.text.data, "argument \"package\" must be a package name"));
    planned_free(&p);
    assert_int_equal(plan(&p, &tool_find_dependents_def, "{}", TOOL_READ_AS_GIVEN), ZK_EINVAL);
    assert_non_null(strstr(p.r.text.data, "find_dependents needs \"package\""));
    planned_free(&p);
}

/* render: one line per manifest, sorted by repository, with the requirement line trimmed; the count
 * of repositories; structuredContent in the stated shape. */
static void test_find_dependents_render(void **state)
{
    struct zr_line l1 = {7, (char *)"\tgithub.com/acme/bulk v1.2.0 // indirect", 1, 0, 0, 0};
    struct zr_line l2 = {3, (char *)"require github.com/acme/bulk v1.4.1", 1, 0, 0, 0};
    struct zr_line l3 = {12, (char *)"    \"@acme/bulk\": \"^2.0.0\",", 1, 0, 0, 0};
    struct zr_file files[3] = {
        {.repo = (char *)"acme/web", .path = (char *)"package.json", .version = (char *)"v", .lines = &l3,
         .n_lines = 1},
        {.repo = (char *)"acme/pay", .path = (char *)"go.mod", .version = (char *)"v", .lines = &l1, .n_lines = 1},
        {.repo = (char *)"acme/api", .path = (char *)"go.mod", .version = (char *)"v", .lines = &l2, .n_lines = 1},
    };
    struct tool_answer a;
    struct zk_err err = {0};
    struct planned p;
    char *text;

    (void)state;
    assert_int_equal(plan(&p, &tool_find_dependents_def, "{\"package\":\"github.com/acme/bulk\"}", TOOL_READ_AS_GIVEN),
                     ZK_OK);
    memset(&a, 0, sizeof(a));
    a.zq = p.q.zq;
    a.res.files = files;
    a.res.n_files = 3;
    a.res.stats.file_count = 3;
    a.page = a.res;
    buf_init(&a.note, 1024);
    buf_init(&a.indexed, 1024);
    assert_int_equal(tool_find_dependents_def.render(&test_ctx, p.state, &a, &p.r, &err), ZK_OK);
    text = p.r.text.data;
    assert_false(p.r.is_error);
    assert_non_null(strstr(text, "github.com/acme/bulk is required by 3 manifests in 3 repositories (3 shown"));
    assert_non_null(strstr(text, "\nacme/api  go.mod:3  require github.com/acme/bulk v1.4.1\n"
                                 "acme/pay  go.mod:7  github.com/acme/bulk v1.2.0 // indirect\n"
                                 "acme/web  package.json:12  \"@acme/bulk\": \"^2.0.0\",\n"));
    shape_check(p.r.structured, "find_dependents", "find_dependents");
    assert_int_equal(cJSON_GetObjectItem(p.r.structured, "repositories")->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p.r.structured, "complete")));
    buf_free(&a.note);
    buf_free(&a.indexed);
    planned_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_code_readings),
        cmocka_unit_test(test_catalogue_and_repositories),
        cmocka_unit_test(test_find_dependents_plan),
        cmocka_unit_test(test_find_dependents_render),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
