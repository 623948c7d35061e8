/* Unit tests for a corpus served by several search shards without a server: the merge of their answers
 * (connector/zoekt/merge.h), the note of a partial answer (connector/format/partial.h), --shard-urls
 * (connector/zoekt/shards.h), what a call makes of shards that all fail, and /index-status's
 * searchShards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/format/partial.h"
#include "connector/tools/tools.h"
#include "connector/zoekt/merge.h"
#include "connector/zoekt/shards.h"
#include "json.h"
#include "mem.h"

/* A search answer of files "repo|path|score", as Zoekt sends one. */
static void search_of(struct zr_search *s, const char *const *files, size_t n, long long file_count)
{
    char body[4096];
    struct zk_err err = {0};
    size_t len = (size_t)snprintf(body, sizeof(body), "{\"Result\":{\"FileCount\":%lld,\"MatchCount\":%lld,"
                                                      "\"FilesSkipped\":1,\"Duration\":%lld,\"Files\":[",
                                  file_count, 2 * file_count, file_count * 10);

    for (size_t i = 0; i < n; i++) {
        char repo[64], path[64];
        double score;

        assert_int_equal(sscanf(files[i], "%63[^|]|%63[^|]|%lf", repo, path, &score), 3);
        len += (size_t)snprintf(body + len, sizeof(body) - len,
                                "%s{\"Repository\":\"%s\",\"FileName\":\"%s\",\"Score\":%g}", i ? "," : "", repo,
                                path, score);
    }
    len += (size_t)snprintf(body + len, sizeof(body) - len, "]}}");
    assert_int_equal(zr_parse_search(body, len, NULL, s, &err), ZK_OK);
}

/* A repository list of the names given (their full names as Zoekt serves them). */
static void list_of(struct zr_list *l, const char *const *names, size_t n, const char *prefix)
{
    char body[8192];
    struct zr_opts o = {prefix, -1, 0};
    struct zk_err err = {0};
    size_t len = (size_t)snprintf(body, sizeof(body), "{\"List\":{\"Repos\":[");

    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(body + len, sizeof(body) - len,
                                "%s{\"Repository\":{\"Name\":\"%s\"},\"IndexMetadata\":{\"IndexTime\":"
                                "\"2026-11-%02zuT00:00:00Z\"},\"Stats\":{\"Shards\":1,\"IndexBytes\":100}}",
                                i ? "," : "", names[i], i % 28 + 1);
    len += (size_t)snprintf(body + len, sizeof(body) - len, "]}}");
    assert_int_equal(zr_parse_list(body, len, &o, l, &err), ZK_OK);
}

/* The files of three shards interleave by score; equal scores fall back to repository and path; the
 * global first max_files are kept and the statistics summed. */
static void test_merge_search_ranks_across_shards(void **state)
{
    static const char *const s0[] = {"a/x|one.go|9", "a/x|two.go|5", "a/x|three.go|1"};
    static const char *const s1[] = {"b/y|one.go|8", "b/y|two.go|5"};
    static const char *const s2[] = {"c/z|one.go|10"};
    struct zr_search parts[3], out;

    (void)state;
    search_of(&parts[0], s0, 3, 7);
    search_of(&parts[1], s1, 2, 2);
    search_of(&parts[2], s2, 1, 1);
    zm_search(parts, 3, 4, &out);
    assert_int_equal(out.n_files, 4);
    assert_string_equal(out.files[0].repo, "c/z");
    assert_string_equal(out.files[1].repo, "a/x");
    assert_string_equal(out.files[1].path, "one.go");
    assert_string_equal(out.files[2].repo, "b/y");
    /* Two files of score 5: a/x's before b/y's, whichever shard answered first. */
    assert_string_equal(out.files[3].repo, "a/x");
    assert_string_equal(out.files[3].path, "two.go");
    assert_int_equal(out.stats.file_count, 10);
    assert_int_equal(out.stats.match_count, 20);
    assert_int_equal(out.stats.files_skipped, 3);
    assert_int_equal(out.stats.duration_ns, 70);
    assert_int_equal(out.shards.failed, 0);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(parts[k].n_files, 0);
        zr_search_free(&parts[k]);
    }
    zr_search_free(&out);
}

/* A shard that did not answer is an empty part; no cut keeps every file. */
static void test_merge_search_missing_part(void **state)
{
    static const char *const s1[] = {"b/y|one.go|3", "b/y|two.go|4"};
    struct zr_search parts[2], out;

    (void)state;
    memset(&parts[0], 0, sizeof(parts[0]));
    search_of(&parts[1], s1, 2, 2);
    zm_search(parts, 2, 0, &out);
    assert_int_equal(out.n_files, 2);
    assert_string_equal(out.files[0].path, "two.go");
    assert_int_equal(out.stats.file_count, 2);
    zr_search_free(&parts[0]);
    zr_search_free(&parts[1]);
    zr_search_free(&out);
}

/* The union of the lists, sorted by name, each repository marked with its shard; a name two shards
 * list is kept once, from the lower shard; Zoekt's shard counts summed. */
static void test_merge_list_union(void **state)
{
    static const char *const l0[] = {"m/b", "m/d"};
    static const char *const l1[] = {"m/a", "m/c", "m/d"};
    struct zr_list parts[2], out;

    (void)state;
    list_of(&parts[0], l0, 2, "m/");
    list_of(&parts[1], l1, 3, "m/");
    zm_list(parts, 2, &out);
    assert_int_equal(out.n_repos, 4);
    assert_string_equal(out.repos[0].name, "a");
    assert_int_equal(out.repos[0].shard, 1);
    assert_string_equal(out.repos[1].name, "b");
    assert_int_equal(out.repos[1].shard, 0);
    assert_string_equal(out.repos[3].name, "d");
    assert_int_equal(out.repos[3].shard, 0);
    assert_string_equal(out.repos[3].full_name, "m/d");
    assert_int_equal(out.shards, 5);
    assert_int_equal(out.repos[0].index_bytes, 100);
    assert_non_null(zr_list_find(&out, "c"));
    zr_list_free(&parts[0]);
    zr_list_free(&parts[1]);
    zr_list_free(&out);
}

/* Names "mirrors/r-<i>" of which shard_of assigns some to each of 3 shards. */
#define CATALOGUE_N 40
static void catalogue_of(struct zr_list *l, char names[CATALOGUE_N][32])
{
    const char *ptrs[CATALOGUE_N];

    for (int i = 0; i < CATALOGUE_N; i++) {
        snprintf(names[i], 32, "mirrors/r-%02d", i);
        ptrs[i] = names[i];
    }
    list_of(l, ptrs, CATALOGUE_N, "mirrors/");
}

/* The note names the failed shard's repositories by shard_of over the full names (the displayed
 * names have the prefix stripped), at most FMT_PARTIAL_NAMES of them, and counts the rest. */
static void test_partial_note_names_the_shard(void **state)
{
    char names[CATALOGUE_N][32], want[64];
    struct zr_list cat;
    struct zr_shards s = {3, 1u << 2, {NULL, NULL, NULL}};
    struct buf b;
    size_t idx[CATALOGUE_N], n;

    (void)state;
    catalogue_of(&cat, names);
    s.why[2] = mem_strdup("Zoekt is not reachable");
    n = zm_shard_repos(&cat, 2, 3, idx, CATALOGUE_N);
    assert_true(n > FMT_PARTIAL_NAMES && n < CATALOGUE_N);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(shard_of(cat.repos[idx[i]].full_name, 3), 2);
    buf_init(&b, FMT_PARTIAL_MAX);
    assert_int_equal(fmt_partial_note(&s, &cat, &b), ZK_OK);
    assert_non_null(strstr(b.data, "Partial answer: shard 2 of 3 did not answer (Zoekt is not reachable)"));
    snprintf(want, sizeof(want), "its %zu repositories are missing from this answer: %s, ", n,
             cat.repos[idx[0]].name);
    assert_non_null(strstr(b.data, want));
    assert_null(strstr(b.data, "mirrors/"));
    snprintf(want, sizeof(want), "(and %zu more).", n - FMT_PARTIAL_NAMES);
    assert_non_null(strstr(b.data, want));
    /* A repository of another shard is not named. */
    for (size_t i = 0; i < cat.n_repos; i++)
        if (shard_of(cat.repos[i].full_name, 3) != 2)
            assert_null(strstr(b.data, cat.repos[i].name));
    buf_free(&b);
    zr_shards_free(&s);
    zr_list_free(&cat);
}

/* Without a catalogue the repositories are unknown; several failed shards get a sentence each; a
 * message past the bound is cut; no failure, no note. */
static void test_partial_note_unknown_and_bounded(void **state)
{
    struct zr_shards s = {16, 0, {NULL}};
    struct buf b;
    char *long_why = mem_calloc(1, 5000);

    (void)state;
    memset(long_why, 'x', 4999);
    buf_init(&b, FMT_PARTIAL_MAX);
    assert_int_equal(fmt_partial_note(&s, NULL, &b), ZK_OK);
    assert_int_equal(b.len, 0);
    for (int k = 1; k < 16; k++) {
        s.failed |= 1u << k;
        s.why[k] = mem_strdup(long_why);
    }
    assert_int_equal(fmt_partial_note(&s, NULL, &b), ZK_OK);
    assert_non_null(strstr(b.data, "Partial answer: shard 1 of 16 did not answer ("));
    assert_non_null(strstr(b.data, " Shard 15 of 16 did not answer ("));
    assert_non_null(strstr(b.data, "which repositories it serves is unknown"));
    assert_true(b.len < 15 * (FMT_PARTIAL_WHY_MAX + 200));
    buf_free(&b);
    free(long_why);
    zr_shards_free(&s);
}

/* zm_failures_add moves the failures that are new, message and all. */
static void test_failures_add(void **state)
{
    struct zr_shards into = {3, 1u, {NULL}}, from = {3, 1u | 4u, {NULL}};

    (void)state;
    into.why[0] = mem_strdup("first");
    from.why[0] = mem_strdup("again");
    from.why[2] = mem_strdup("third");
    zm_failures_add(&into, &from);
    assert_int_equal(into.failed, 5);
    assert_string_equal(into.why[0], "first");
    assert_string_equal(into.why[2], "third");
    assert_int_equal(from.failed, 0);
    zr_shards_free(&into);
}

static void test_parse_urls(void **state)
{
    struct zs_set s;
    struct zk_err err = {0};
    char many[2048];
    size_t len = 0;

    (void)state;
    assert_int_equal(zs_parse("http://127.0.0.1:6070/,http://c-search-3-1.ns.svc:8080,https://[::1]:9", &s, &err),
                     ZK_OK);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.urls[0], "http://127.0.0.1:6070");
    assert_int_equal(s.loopback[0], 1);
    assert_int_equal(s.loopback[1], 0);
    assert_int_equal(s.loopback[2], 1);
    zs_free(&s);

    assert_int_equal(zs_parse("http://127.0.0.1:6070", &s, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "1 URL given; it takes 2 to 16"));
    zs_free(&s);
    for (int k = 0; k < 17; k++)
        len += (size_t)snprintf(many + len, sizeof(many) - len, "%shttp://h%d:8080", k ? "," : "", k);
    assert_int_equal(zs_parse(many, &s, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "17 URLs given"));
    assert_non_null(strstr(err.msg, "at most 16 shards"));
    zs_free(&s);
    assert_int_equal(zs_parse("http://a,,http://b", &s, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "URL 1 is empty"));
    zs_free(&s);
    assert_int_equal(zs_parse("http://a,http://b,", &s, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "URL 2 is empty"));
    zs_free(&s);
    assert_int_equal(zs_parse("http://a,zoekt:6070", &s, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "URL 1 (\"zoekt:6070\") is not an http:// or https:// URL"));
    zs_free(&s);
    assert_int_equal(zs_parse("http://a,http://", &s, &err), ZK_EINVAL);
    zs_free(&s);
}

static void test_loopback(void **state)
{
    (void)state;
    assert_true(zs_is_loopback("http://127.0.0.1:6070"));
    assert_true(zs_is_loopback("http://127.1.2.3"));
    assert_true(zs_is_loopback("http://LOCALHOST:1/x"));
    assert_true(zs_is_loopback("http://[::1]:8080"));
    assert_false(zs_is_loopback("http://localhost.example.com"));
    assert_false(zs_is_loopback("http://127example.com"));
    assert_false(zs_is_loopback("http://c-search-3-0.ns.svc:8080"));
    assert_false(zs_is_loopback("http://[::1234]:8080"));
}

/* Every shard refusing the connection: the call fails with shard 0's error, as one webserver's. */
static void test_all_shards_failing_is_shard_zeros_error(void **state)
{
    struct zs_set s;
    struct zk_err err = {0};
    struct zc_conn c = {NULL, NULL, 2000, NULL, NULL, NULL};
    struct zc_search_opts so = {.max_files = 10, .chunk_matches = 1};
    struct zr_search out;
    struct zr_list l;

    (void)state;
    assert_int_equal(zs_parse("http://127.0.0.1:1,http://127.0.0.1:2", &s, &err), ZK_OK);
    assert_int_equal(zs_search(&s, 0, &c, "needle", &so, NULL, &out, &err), ZK_ECONNECT);
    assert_non_null(strstr(err.msg, "127.0.0.1:1/api/search"));
    assert_int_equal(out.n_files, 0);
    zr_search_free(&out);
    assert_int_equal(zs_list(&s, &c, "", NULL, &l, &err), ZK_ECONNECT);
    assert_non_null(strstr(err.msg, "127.0.0.1:1/api/list"));
    zr_list_free(&l);
    zs_free(&s);
}

/* The merged list of three shards' repositories (shard k lists names[k]), as the list cache holds it;
 * failed: bit k says shard k did not answer (and lists nothing). */
static void routed_list(struct zr_list *out, unsigned failed)
{
    static const char *const names[3][2] = {{"m/github.com/acme/payments", "m/github.com/acme/ledger"},
                                            {"m/github.com/acme/billing", NULL},
                                            {"m/github.com/other/payments", NULL}};
    struct zr_list parts[3];

    memset(parts, 0, sizeof(parts));
    for (int k = 0; k < 3; k++)
        if (!(failed & (1u << k)))
            list_of(&parts[k], names[k], names[k][1] ? 2 : 1, "m/");
    zm_list(parts, 3, out);
    out->search_shards.n = 3;
    out->search_shards.failed = failed;
    for (int k = 0; k < 3; k++)
        zr_list_free(&parts[k]);
}

/* A search restricted to some repositories asks only the shards that serve them; one whose arguments
 * select nothing asks every shard (the repository may be new); a shard the current list lacks is
 * decided by the last complete list, or asked when there is none. */
static void test_route_by_repository_arguments(void **state)
{
    static const char *const payments[] = {"payments"}, *const acme[] = {"acme/*"}, *const both[] = {"ledger",
                                                                                                     "billing"};
    static const char *const billing[] = {"billing"}, *const acme_payments[] = {"acme/payments"};
    static const char *const nothing[] = {"no-such-repo"}, *const starry[] = {"**/p*"};
    struct zr_list all, lacking;

    (void)state;
    routed_list(&all, 0);
    routed_list(&lacking, 2u);
    assert_int_equal(zm_route(&all, NULL, 3, payments, 1), 1u | 4u);
    assert_int_equal(zm_route(&all, NULL, 3, acme, 1), 1u | 2u);
    assert_int_equal(zm_route(&all, NULL, 3, both, 2), 1u | 2u);
    assert_int_equal(zm_route(&all, NULL, 3, starry, 1), 1u | 4u);
    assert_int_equal(zm_route(&all, NULL, 3, nothing, 1), 0u);
    assert_int_equal(zm_route(&all, NULL, 3, payments, 0), 0u);
    assert_int_equal(zm_route(&all, NULL, 1, payments, 1), 0u);
    assert_int_equal(zm_route(NULL, NULL, 3, payments, 1), 0u);
    /* Shard 1 did not answer the current list: the complete one says what it serves. */
    assert_int_equal(zm_route(&lacking, &all, 3, acme_payments, 1), 1u);
    assert_int_equal(zm_route(&lacking, &all, 3, billing, 1), 2u);
    /* With no complete list, shard 1 might serve anything: asked with the shards that match. */
    assert_int_equal(zm_route(&lacking, NULL, 3, acme_payments, 1), 1u | 2u);
    assert_int_equal(zm_route(&lacking, NULL, 3, billing, 1), 0u);
    zr_list_free(&all);
    zr_list_free(&lacking);
}

/* A routed search asks only its shards, and when they all fail it is a partial answer of no files that
 * names them (the shard not asked holds nothing the query selects), not an error. */
static void test_routed_search_asks_only_its_shards(void **state)
{
    struct zs_set s;
    struct zk_err err = {0};
    struct zc_conn c = {NULL, NULL, 2000, NULL, NULL, NULL};
    struct zc_search_opts so = {.max_files = 10, .chunk_matches = 1};
    struct zr_search out;

    (void)state;
    assert_int_equal(zs_parse("http://127.0.0.1:1,http://127.0.0.1:2,http://127.0.0.1:3", &s, &err), ZK_OK);
    assert_int_equal(zs_search(&s, 2u | 4u, &c, "needle", &so, NULL, &out, &err), ZK_OK);
    assert_int_equal(out.n_files, 0);
    assert_int_equal(out.shards.n, 3);
    assert_int_equal(out.shards.failed, 2u | 4u);
    assert_null(out.shards.why[0]);
    assert_non_null(strstr(out.shards.why[1], "127.0.0.1:2/api/search"));
    assert_non_null(strstr(out.shards.why[2], "127.0.0.1:3/api/search"));
    zr_search_free(&out);
    zs_free(&s);
}

/* /index-status of a sharded list: the sums over every shard, and searchShards with each shard's own
 * and the failed one's error. */
static void test_index_status_search_shards(void **state)
{
    static const char *const l0[] = {"a", "b"};
    static const char *const l1[] = {"c"};
    struct zr_list parts[3], l;
    cJSON *o, *arr, *e;

    (void)state;
    list_of(&parts[0], l0, 2, NULL);
    memset(&parts[1], 0, sizeof(parts[1]));
    list_of(&parts[2], l1, 1, NULL);
    zm_list(parts, 3, &l);
    l.search_shards.n = 3;
    l.search_shards.failed = 2;
    l.search_shards.why[1] = mem_strdup("Zoekt is not reachable");
    o = tools_index_status_json(&l, NULL, 0);
    assert_int_equal(json_int(o, "repositories", -1), 3);
    assert_int_equal(json_int(o, "shards", -1), 3);
    assert_string_equal(json_str(o, "newestIndexTime", ""), "2026-11-02T00:00:00Z");
    assert_string_equal(json_str(o, "oldestIndexTime", ""), "2026-11-01T00:00:00Z");
    arr = cJSON_GetObjectItemCaseSensitive(o, "searchShards");
    assert_int_equal(cJSON_GetArraySize(arr), 3);
    e = cJSON_GetArrayItem(arr, 0);
    assert_int_equal(json_int(e, "shard", -1), 0);
    assert_int_equal(json_int(e, "repositories", -1), 2);
    assert_int_equal(json_int(e, "indexBytes", -1), 200);
    assert_string_equal(json_str(e, "newestIndexTime", ""), "2026-11-02T00:00:00Z");
    e = cJSON_GetArrayItem(arr, 1);
    assert_string_equal(json_str(e, "error", ""), "Zoekt is not reachable");
    assert_null(cJSON_GetObjectItemCaseSensitive(e, "repositories"));
    e = cJSON_GetArrayItem(arr, 2);
    assert_int_equal(json_int(e, "repositories", -1), 1);
    cJSON_Delete(o);
    /* One webserver: no searchShards. */
    zr_shards_free(&l.search_shards);
    o = tools_index_status_json(&l, NULL, 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(o, "searchShards"));
    cJSON_Delete(o);
    for (int k = 0; k < 3; k++)
        zr_list_free(&parts[k]);
    zr_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_search_ranks_across_shards),
        cmocka_unit_test(test_merge_search_missing_part),
        cmocka_unit_test(test_merge_list_union),
        cmocka_unit_test(test_partial_note_names_the_shard),
        cmocka_unit_test(test_partial_note_unknown_and_bounded),
        cmocka_unit_test(test_failures_add),
        cmocka_unit_test(test_parse_urls),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_all_shards_failing_is_shard_zeros_error),
        cmocka_unit_test(test_index_status_search_shards),
        cmocka_unit_test(test_route_by_repository_arguments),
        cmocka_unit_test(test_routed_search_asks_only_its_shards),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
