/* Unit tests for connector/format: byte-exact text for recorded answers, and the rules that keep the
 * output useful under limits: per-file cap, line cut, output budget (files named before lines), and a
 * header that says why the list is incomplete. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "connector/format/files.h"
#include "connector/format/read.h"
#include "connector/format/refs.h"
#include "connector/format/repos.h"
#include "connector/format/search.h"
#include "connector/format/text.h"
#include "connector/tools/cursor.h"
#include "tests/support/fixture.h"

static void parse(const char *fixture, int ctx, struct zr_search *s)
{
    struct zr_opts o = {NULL, ctx, 0};
    struct zk_err err = {0};
    size_t len;
    char *body = fixture_read("tests/fixtures/zoekt", fixture, &len);

    if (zr_parse_search(body, len, &o, s, &err))
        fail_msg("%s: %s", fixture, err.msg);
    free(body);
}

/* Formats r and returns the text (caller frees); *json gets the structured content. */
static char *format(const struct zr_search *r, const char *query, int max_files, size_t budget, long long wall_ns,
                    cJSON **json)
{
    struct fmt_search_opts o = {query, max_files, budget, wall_ns, NULL, NULL, 0, NULL};
    struct zk_err err = {0};
    struct buf text;

    buf_init(&text, budget + 1);
    if (fmt_search(r, &o, &text, json, &err))
        fail_msg("fmt_search: %s", err.msg);
    if (text.len > budget)
        fail_msg("text of %zu bytes exceeds the budget of %zu", text.len, budget);
    return buf_steal(&text);
}

static void test_chunks_all_shown(void **state)
{
    static const char want[] =
        "Query: needle\n"
        "6 files, 13 matches. All shown.\n"
        "More of a file: read_file with repo, path and start_line.\n"
        "\n"
        "alpha/README.md @00d7769e\n"
        "  1: # alpha\n"
        "  2:\n"
        "> 3: A small C project. Say hello to the needle.\n"
        "\n"
        "alpha/src/util.c @00d7769e\n"
        "  10: }\n"
        "  11:\n"
        "> 12: /* needle_count counts occurrences of a needle character. */\n"
        "> 13: int needle_count(const char *haystack, char needle) {\n"
        "  14:     int n = 0;\n"
        "  15:     for (; *haystack; haystack++) {\n"
        "> 16:         if (*haystack == needle) n++;\n"
        "  17:     }\n"
        "  18:     return n;\n"
        "\n"
        "alpha/include/util.h @00d7769e\n"
        "  3:\n"
        "  4: int parse_number(const char *s);\n"
        "> 5: int needle_count(const char *haystack, char needle);\n"
        "  6:\n"
        "  7: #endif\n"
        "\n"
        "gamma/config/app.yaml @25a6d1d7\n"
        "  5:   port: 8080\n"
        "  6: search:\n"
        "> 7:   needle: zoekt\n"
        "  8:   max_results: 50\n"
        "  9:   timeout_ms: 1500\n"
        "\n"
        "gamma/deploy/k8s.yaml @25a6d1d7\n"
        "  12:         - name: gamma\n"
        "  13:           image: example.com/gamma:1.0.0\n"
        "> 14:           args: [\"--needle\", \"haystack\"]\n"
        "\n"
        "beta/server/handler.go @85523107\n"
        "  13: }\n"
        "  14:\n"
        "> 15: // HandleSearch finds the needle in a fixed haystack.\n"
        "  16: func HandleSearch(w http.ResponseWriter, r *http.Request) {\n"
        "> 17: \tneedle := r.URL.Query().Get(\"q\")\n"
        "  18: \thaystack := []string{\"alpha\", \"beta\", \"gamma\"}\n"
        "  19: \tvar results []Result\n"
        "  20: \tfor i, h := range haystack {\n"
        "> 21: \t\tif strings.Contains(h, needle) {\n"
        "  22: \t\t\tresults = append(results, Result{Name: h, Score: i})\n"
        "  23: \t\t}\n";
    struct zr_search s;
    cJSON *json, *util;
    char *text;

    (void)state;
    parse("04_context2_chunks_true.response.json", 2, &s);
    text = format(&s, "needle", 30, 16384, 0, &json);
    assert_string_equal(text, want);

    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "truncation")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")), 6);
    util = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 1);
    assert_string_equal(cJSON_GetObjectItem(util, "path")->valuestring, "src/util.c");
    assert_string_equal(cJSON_GetObjectItem(util, "version")->valuestring, "00d7769e90a90552ca59d6224052ad8b4fd7fac6");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(util, "matches")), 3);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(util, "matches"), 2)->child->valueint, 16);
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_max_files(void **state)
{
    static const char want[] =
        "Query: needle\n"
        "Showing 2 of 6 files (10 matches). Incomplete: more files matched than max_files=2.\n"
        "To narrow: add repo, file or exclude_file, or make the query more specific; or raise max_files / "
        "max_bytes.\n"
        "More of a file: read_file with repo, path and start_line.\n"
        "\n"
        "alpha/README.md @00d7769e\n"
        "  1: # alpha\n"
        "  2:\n"
        "> 3: A small C project. Say hello to the needle.\n"
        "\n"
        "gamma/config/app.yaml @25a6d1d7\n"
        "  5:   port: 8080\n"
        "  6: search:\n"
        "> 7:   needle: zoekt\n"
        "  8:   max_results: 50\n"
        "  9:   timeout_ms: 1500\n";
    struct zr_search s;
    cJSON *json;
    char *text;

    (void)state;
    parse("05_context2_chunks_false.response.json", 2, &s);
    text = format(&s, "needle", 2, 16384, 0, &json);
    assert_string_equal(text, want);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")));
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "truncation"), 0)->valuestring, "max_files");
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_name_match_and_none(void **state)
{
    struct zr_search s;
    cJSON *json;
    char *text;

    (void)state;
    parse("15_file_only_query.response.json", -1, &s);
    text = format(&s, "file:\\.yaml$", 30, 16384, 0, &json);
    assert_string_equal(text, "Query: file:\\.yaml$\n"
                              "2 files, 2 matches. All shown.\n"
                              "More of a file: read_file with repo, path and start_line.\n"
                              "\n"
                              "gamma/config/app.yaml @25a6d1d7 (file name matches)\n"
                              "\n"
                              "gamma/deploy/k8s.yaml @25a6d1d7 (file name matches)\n");
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);

    parse("06_no_results.response.json", -1, &s);
    text = format(&s, "nothing", 30, 16384, 0, &json);
    assert_string_equal(text, "Query: nothing\nNo matches.\n");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")), 0);
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

/* A synthetic result: n_files files of one repository, each with n_lines matching lines of width bytes. */
static void synth(struct zr_search *s, size_t n_files, size_t n_lines, size_t width)
{
    memset(s, 0, sizeof(*s));
    s->files = calloc(n_files, sizeof(*s->files));
    assert_non_null(s->files);
    s->n_files = n_files;
    s->stats.file_count = (long long)n_files;
    s->stats.match_count = (long long)(n_files * n_lines);
    for (size_t i = 0; i < n_files; i++) {
        struct zr_file *f = &s->files[i];
        char path[64];

        snprintf(path, sizeof(path), "dir/file%03zu.c", i);
        f->repo = strdup("repo");
        f->path = strdup(path);
        f->version = strdup("abcdef0123456789");
        f->language = strdup("C");
        f->lines = calloc(n_lines, sizeof(*f->lines));
        f->texts = malloc(n_lines * (width + 1) + 1);
        assert_non_null(f->lines);
        assert_non_null(f->texts);
        f->n_lines = f->n_match_lines = f->n_matches = n_lines;
        for (size_t j = 0; j < n_lines; j++) {
            f->lines[j].number = (int)(j * 3 + 1); /* never adjacent: "--" between all */
            f->lines[j].is_match = 1;
            f->lines[j].text = f->texts + j * (width + 1); /* the lines' texts share one block, as parsed */
            memset(f->lines[j].text, 'x', width);
            f->lines[j].text[width] = '\0';
        }
    }
}

static void test_per_file_cap(void **state)
{
    struct zr_search s;
    cJSON *json;
    char *text;

    (void)state;
    synth(&s, 1, 15, 3);
    text = format(&s, "x", 30, 16384, 0, &json);
    assert_string_equal(text, "Query: x\n"
                              "Showing 1 of 1 files (15 matches). Incomplete: 1 file had more than 10 matching "
                              "lines (the rest are counted, not shown).\n"
                              "To narrow: add repo, file or exclude_file, or make the query more specific.\n"
                              "More of a file: read_file with repo, path and start_line.\n"
                              "\n"
                              "repo/dir/file000.c @abcdef01\n"
                              "> 1: xxx\n--\n> 4: xxx\n--\n> 7: xxx\n--\n> 10: xxx\n--\n> 13: xxx\n--\n"
                              "> 16: xxx\n--\n> 19: xxx\n--\n> 22: xxx\n--\n> 25: xxx\n--\n> 28: xxx\n"
                              "(+5 more matching lines in this file)\n");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "truncation"), 0)->valuestring,
                        "per_file_cap");
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);

    /* The parser decoded only the lines that can be shown and counted the others: the same answer. */
    synth(&s, 1, 10, 3);
    s.files[0].n_match_lines = 15;
    text = format(&s, "x", 30, 16384, 0, &json);
    assert_non_null(strstr(text, "1 file had more than 10 matching lines"));
    assert_non_null(strstr(text, "> 28: xxx\n(+5 more matching lines in this file)\n"));
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_long_lines_cut(void **state)
{
    struct zr_search s;
    cJSON *json;
    char *text, *line, want[400];

    (void)state;
    synth(&s, 1, 1, 400);
    /* Put a 3-byte character across the cut point: the cut must not split it. */
    memcpy(s.files[0].lines[0].text + 299, "\xe2\x82\xac", 3);
    text = format(&s, "x", 30, 16384, 0, &json);
    line = strstr(text, "> 1: ");
    assert_non_null(line);
    memset(want, 'x', 299);
    strcpy(want + 299, "\xe2\x80\xa6\n");
    assert_string_equal(line + 5, want);
    {
        cJSON *file = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0);
        cJSON *match = cJSON_GetArrayItem(cJSON_GetObjectItem(file, "matches"), 0);

        assert_int_equal(strlen(cJSON_GetObjectItem(match, "text")->valuestring), 299 + 3);
    }
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

/* Standard base64 of n bytes of in, for answers built here: a heap string the caller frees. */
static char *b64(const unsigned char *in, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

    assert_non_null(out);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);

        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* A search answer with one file of one line, line, whose match is bytes [at, at + len): as Zoekt sends
 * it with ChunkMatches (chunks set) or LineMatches. Heap string the caller frees. */
static char *one_line_answer(const char *line, size_t at, size_t len, int chunks)
{
    char *text = b64((const unsigned char *)line, strlen(line)), *out;
    size_t n = strlen(text) + 1024;

    out = malloc(n);
    assert_non_null(out);
    if (chunks)
        snprintf(out, n, "{\"Result\":{\"FileCount\":1,\"MatchCount\":1,\"Files\":[{\"FileName\":\"min.js\","
                 "\"Repository\":\"r\",\"ChunkMatches\":[{\"Content\":\"%s\",\"ContentStart\":{\"ByteOffset\":0,"
                 "\"LineNumber\":1,\"Column\":1},\"Ranges\":[{\"Start\":{\"ByteOffset\":%zu,\"LineNumber\":1},"
                 "\"End\":{\"ByteOffset\":%zu,\"LineNumber\":1}}]}]}]}}", text, at, at + len);
    else
        snprintf(out, n, "{\"Result\":{\"FileCount\":1,\"MatchCount\":1,\"Files\":[{\"FileName\":\"min.js\","
                 "\"Repository\":\"r\",\"LineMatches\":[{\"Line\":\"%s\",\"LineNumber\":1,\"LineFragments\":["
                 "{\"LineOffset\":%zu,\"MatchLength\":%zu}]}]}]}}", text, at, len);
    free(text);
    return out;
}

/* A match far into a long line (minified code) is shown: a window of the line around it, marked "…" on
 * each side that was cut, never splitting a character; the same in structuredContent. Through the
 * parser, from both kinds of answer. */
static void test_long_line_shows_match(void **state)
{
    /* 1000 two-byte characters, the match, then 2000 ASCII bytes: the window's start falls inside a
     * character and must move past it. */
    size_t n = 2000 + 6 + 2000;
    char *line = malloc(n + 1);

    (void)state;
    assert_non_null(line);
    for (size_t i = 0; i < 2000; i += 2)
        memcpy(line + i, "\xc3\xa9", 2);
    memcpy(line + 2000, "NEEDLE", 6);
    memset(line + 2006, 'b', 2000);
    line[n] = '\0';
    for (int chunks = 0; chunks < 2; chunks++) {
        char *answer = one_line_answer(line, 2000, 6, chunks), *text, *shown, *end;
        struct zk_err err = {0};
        struct zr_search s;
        cJSON *json;

        if (zr_parse_search(answer, strlen(answer), NULL, &s, &err))
            fail_msg("%s", err.msg);
        text = format(&s, "x", 30, 16384, 0, &json);
        shown = strstr(text, "> 1: ");
        assert_non_null(shown);
        shown += 5;
        end = strchr(shown, '\n');
        assert_non_null(end);
        *end = '\0';
        /* "…" + 300 bytes at most + "…", starting on a whole character, the match inside. */
        assert_true(strncmp(shown, "\xe2\x80\xa6\xc3\xa9", 5) == 0);
        assert_true(strlen(shown) <= FMT_LINE_MAX + 6);
        assert_non_null(strstr(shown, "\xc3\xa9NEEDLEbbb"));
        assert_true(strcmp(shown + strlen(shown) - 4, "b\xe2\x80\xa6") == 0);
        {
            cJSON *file = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0);
            cJSON *match = cJSON_GetArrayItem(cJSON_GetObjectItem(file, "matches"), 0);

            assert_string_equal(cJSON_GetObjectItem(match, "text")->valuestring, shown);
        }
        free(text);
        free(answer);
        cJSON_Delete(json);
        zr_search_free(&s);
    }
    /* A match at the very end: the window is the line's last bytes, cut on the left only. */
    memcpy(line + n - 6, "NEEDLE", 6);
    {
        char *answer = one_line_answer(line, n - 6, 6, 1), *text;
        struct zk_err err = {0};
        struct zr_search s;
        cJSON *json;

        assert_int_equal(zr_parse_search(answer, strlen(answer), NULL, &s, &err), ZK_OK);
        text = format(&s, "x", 30, 16384, 0, &json);
        assert_non_null(strstr(text, "bbNEEDLE\n"));
        assert_non_null(strstr(text, "> 1: \xe2\x80\xa6" "b"));
        free(text);
        free(answer);
        cJSON_Delete(json);
        zr_search_free(&s);
    }
    free(line);
}

/* When Zoekt sends fewer files than max_files although more matched (a match budget spent on the first
 * files drops the rest), the header says so and does not blame max_files. */
static void test_zoekt_sent_fewer(void **state)
{
    struct zr_search s;
    cJSON *json, *reasons;
    char *text;

    (void)state;
    synth(&s, 14, 1, 5);
    s.stats.file_count = 2946;
    text = format(&s, "x", 30, 16384, 0, &json);
    assert_non_null(strstr(text, "Showing 14 of 2946 files (14 matches). Incomplete: Zoekt sent 14 of the 30 files "
                                 "asked for, although more matched.\n"));
    assert_null(strstr(text, "max_files"));
    reasons = cJSON_GetObjectItem(json, "truncation");
    assert_int_equal(cJSON_GetArraySize(reasons), 1);
    assert_string_equal(cJSON_GetArrayItem(reasons, 0)->valuestring, "zoekt_sent_fewer");
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);

    /* max_files files shown and more matched: max_files is the reason, as before. */
    synth(&s, 30, 1, 5);
    s.stats.file_count = 2946;
    text = format(&s, "x", 30, 16384, 0, &json);
    assert_non_null(strstr(text, "Incomplete: more files matched than max_files=30.\n"));
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_budget_names_every_file(void **state)
{
    struct zr_search s;
    cJSON *json;
    char *text, name[64];

    (void)state;
    synth(&s, 30, 12, 200);
    text = format(&s, "x", 30, 4096, 0, &json);
    for (size_t i = 0; i < 30; i++) {
        snprintf(name, sizeof(name), "repo/dir/file%03zu.c @abcdef01\n", i);
        if (!strstr(text, name))
            fail_msg("file %zu is not named:\n%s", i, text);
    }
    assert_non_null(strstr(text, "the output budget of 4096 bytes cut "));
    assert_non_null(strstr(text, "files named without lines"));
    assert_non_null(strstr(text, "> 1: xxx")); /* some lines were still shown */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")), 30);
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_budget_drops_files_last(void **state)
{
    struct zr_search s;
    cJSON *json;
    char *text;

    (void)state;
    synth(&s, 200, 1, 10);
    text = format(&s, "x", 200, 2048, 0, &json);
    assert_non_null(strstr(text, "more files not listed: output budget)"));
    assert_non_null(strstr(text, "and left out "));
    assert_non_null(strstr(text, "repo/dir/file000.c"));
    assert_null(strstr(text, "repo/dir/file199.c"));
    /* Structured content still names every returned file. */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")), 200);
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

/* The notes that say a file had more matching lines than the cap are part of the text, and the budget
 * counts them: however many capped files fill it, the search formats within the budget instead of
 * failing. */
static void test_budget_counts_cap_notes(void **state)
{
    int budget_cut = 0;

    (void)state;
    for (size_t budget = FMT_BUDGET_MIN; budget <= 16384; budget += 256) {
        struct zr_search s;
        cJSON *json;
        char *text;

        synth(&s, 20, 14, 10);
        text = format(&s, "x", 20, budget, 0, &json);
        assert_non_null(strstr(text, "files had more than 10 matching lines"));
        assert_non_null(strstr(text, "(+4 more matching lines in this file)\n"));
        budget_cut += strstr(text, "the output budget of") != NULL;
        free(text);
        cJSON_Delete(json);
        zr_search_free(&s);
    }
    assert_true(budget_cut > 10); /* most budgets ran out: the notes competed with lines for room */
}

static void test_stop_reasons(void **state)
{
    struct zr_search s;
    cJSON *json, *reasons;
    char *text;

    (void)state;
    synth(&s, 2, 1, 5);
    s.stats.duration_ns = 9000000000LL;
    s.stats.shards_skipped = 3;
    s.stats.crashes = 1;
    s.stats.file_count = 40;
    text = format(&s, "x", 2, 16384, 9000000000LL, &json);
    assert_non_null(strstr(text, "Showing 2 of 40+ files (2+ matches). Incomplete: more files matched than "
                                 "max_files=2; Zoekt's time limit ended the search; Zoekt stopped at its match "
                                 "limit (3 shards, 0 files skipped); 1 index shard failed or was still loading.\n"));
    reasons = cJSON_GetObjectItem(json, "truncation");
    assert_int_equal(cJSON_GetArraySize(reasons), 4);
    assert_string_equal(cJSON_GetArrayItem(reasons, 3)->valuestring, "shard_errors");
    free(text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

static void test_undecodable_and_note(void **state)
{
    struct fmt_search_opts o = {"q", 30, 16384, 0, "something to know", NULL, 0, NULL};
    struct zk_err err = {0};
    struct zr_search s;
    struct buf text;
    cJSON *json;

    (void)state;
    synth(&s, 1, 1, 1);
    s.files[0].lines[0].undecodable = 1;
    s.files[0].undecodable = 1;
    buf_init(&text, 16385);
    assert_int_equal(fmt_search(&s, &o, &text, &json, &err), ZK_OK);
    assert_string_equal(text.data, "Query: q\n1 file, 1 match. All shown.\nMore of a file: read_file with repo, path and start_line.\nNote: something to know\n\n"
                                   "repo/dir/file000.c @abcdef01 (some text could not be decoded)\n"
                                   "> 1: [not decodable]\n");
    assert_string_equal(cJSON_GetObjectItem(json, "note")->valuestring, "something to know");
    buf_free(&text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

/* The header names the commit and age of each repository searched, before the advice and the note. */
static void test_indexed_header(void **state)
{
    struct fmt_search_opts o = {"q", 30, 16384, 0, "something to know", "repo @abcdef012345 3h ago", 0, NULL};
    struct zk_err err = {0};
    struct zr_search s;
    struct buf text;
    cJSON *json;

    (void)state;
    synth(&s, 1, 1, 1);
    buf_init(&text, 16385);
    assert_int_equal(fmt_search(&s, &o, &text, &json, &err), ZK_OK);
    assert_string_equal(text.data, "Query: q\n1 file, 1 match. All shown.\nIndexed: repo @abcdef012345 3h ago\n"
                                   "More of a file: read_file with repo, path and start_line.\nNote: something to know\n\n"
                                   "repo/dir/file000.c @abcdef01\n"
                                   "> 1: x\n");
    buf_free(&text);
    cJSON_Delete(json);
    zr_search_free(&s);
}

/* The three repositories of the recorded /api/list answer, indexed at this time. */
#define LIST_INDEX_TIME 1795997135 /* 2026-11-30T00:05:35Z */
static void parse_list_fixture(struct zr_list *l)
{
    struct zk_err err = {0};
    size_t len;
    char *body = fixture_read("tests/fixtures/zoekt", "07_list_all.response.json", &len);

    assert_int_equal(zr_parse_list(body, len, NULL, l, &err), ZK_OK);
    free(body);
}

static void test_repos_and_filter(void **state)
{
    struct zk_err err = {0};
    struct zr_list l;
    struct buf text;
    cJSON *json;

    (void)state;
    parse_list_fixture(&l);
    buf_init(&text, 65536);
    assert_int_equal(fmt_repos(&l, &(struct fmt_repos_opts){"ET", 1, 65536, 0, 0, NULL, NULL}, &text, &json, &err),
                     ZK_OK);
    assert_string_equal(text.data, "1 of 3 repositories match \"ET\".\n"
                                   "beta  HEAD@855231077ead  indexed 2026-11-30T00:05:35Z\n");
    cJSON_Delete(json);
    buf_reset(&text);
    /* With the time now, each line says how old its index is. */
    assert_int_equal(fmt_repos(&l,
                               &(struct fmt_repos_opts){NULL, 2, 65536, LIST_INDEX_TIME + 3 * 3600 + 59, 0, NULL,
                                                        NULL},
                               &text, &json, &err), ZK_OK);
    assert_string_equal(text.data, "3 repositories indexed (list cut at limit; use filter to narrow).\n"
                                   "alpha  HEAD@00d7769e90a9  indexed 2026-11-30T00:05:35Z (3h ago)\n"
                                   "beta  HEAD@855231077ead  indexed 2026-11-30T00:05:35Z (3h ago)\n");
    assert_int_equal(cJSON_GetObjectItem(json, "shown")->valueint, 2);
    cJSON_Delete(json);
    buf_free(&text);
    zr_list_free(&l);
}

static void test_age_and_indexed(void **state)
{
    /* Not in name order, so a sorted or looked-up line would show it. */
    static const struct fmt_indexed_repo repos[] = {
        {"gamma", "5ea941e9396e7ed8b4a0f7a0e3a5c2e4d1b0a9f8", LIST_INDEX_TIME},
        {"alpha", "0226d547cbd2", LIST_INDEX_TIME - 3 * 86400},
        {"beta", "", LIST_INDEX_TIME},
        {"delta", NULL, 0},
    };
    char age[32];
    struct buf text;

    (void)state;
    fmt_age(1000, 1000 + 59, age, sizeof(age));
    assert_string_equal(age, "59s");
    fmt_age(1000, 1000 + 3599, age, sizeof(age));
    assert_string_equal(age, "59m");
    fmt_age(1000, 1000 + 86399, age, sizeof(age));
    assert_string_equal(age, "23h");
    fmt_age(1000, 1000 + 3 * 86400 + 5, age, sizeof(age));
    assert_string_equal(age, "3d");
    fmt_age(1000, 900, age, sizeof(age));
    assert_string_equal(age, "0s");

    /* In the order given, each with 12 hex digits of its commit and its age; a repository without a
     * commit has no "@", one without an index time says so. */
    buf_init(&text, 4096);
    assert_int_equal(fmt_indexed(repos, 4, LIST_INDEX_TIME + 2 * 86400, &text), ZK_OK);
    assert_string_equal(text.data, "gamma @5ea941e9396e 2d ago, alpha @0226d547cbd2 5d ago, beta 2d ago, "
                                   "delta (index time unknown)");
    buf_free(&text);
}

static void test_indexed_names_at_most_ten(void **state)
{
    static const char *const names[] = {"r00", "r01", "r02", "r03", "r04", "r05",
                                        "r06", "r07", "r08", "r09", "r10", "r11"};
    struct fmt_indexed_repo repos[12];
    struct buf text;

    (void)state;
    for (size_t i = 0; i < 12; i++)
        repos[i] = (struct fmt_indexed_repo){names[i], "0123456789abcdef0123", i ? 1000 : 0};
    buf_init(&text, 4096);
    assert_int_equal(fmt_indexed(repos, 12, 1000 + 7200, &text), ZK_OK);
    assert_string_equal(text.data, "r00 @0123456789ab (index time unknown), r01 @0123456789ab 2h ago, "
                                   "r02 @0123456789ab 2h ago, r03 @0123456789ab 2h ago, r04 @0123456789ab 2h ago, "
                                   "r05 @0123456789ab 2h ago, r06 @0123456789ab 2h ago, r07 @0123456789ab 2h ago, "
                                   "r08 @0123456789ab 2h ago, r09 @0123456789ab 2h ago and 2 more");
    buf_free(&text);
}

/* list_repositories' filter: the repository rules first, a substring only when they select nothing,
 * and the closest names when nothing is selected at all. */
static void test_repos_filter_rules(void **state)
{
    static const struct {
        const char *filter, *header;
    } cases[] = {
        {"alpha", "1 of 3 repositories match \"alpha\".\n"},
        {"a*", "1 of 3 repositories match \"a*\".\n"},
        /* "a" is no whole name, so it selects as a substring: all three contain it. */
        {"a", "3 of 3 repositories match \"a\".\n"},
        {"alpah", "0 of 3 repositories match \"alpah\"; closest: alpha.\n"},
        {"kubernetes", "0 of 3 repositories match \"kubernetes\"; none has a similar name.\n"},
    };
    struct zk_err err = {0};
    struct zr_list l;
    struct buf text;
    cJSON *json;

    (void)state;
    parse_list_fixture(&l);
    buf_init(&text, 65536);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        buf_reset(&text);
        assert_int_equal(
            fmt_repos(&l, &(struct fmt_repos_opts){cases[i].filter, 100, 65536, 0, 0, NULL, NULL}, &text, &json, &err),
            ZK_OK);
        if (strncmp(text.data, cases[i].header, strlen(cases[i].header)) != 0)
            fail_msg("filter %s: got %s", cases[i].filter, text.data);
        cJSON_Delete(json);
    }
    buf_free(&text);
    zr_list_free(&l);
}

/* A file of n lines "line <i>" (the last without a newline when open_end), for read_file. */
static void file_of(struct zr_file *f, int n, int open_end)
{
    static char *branches[] = {(char *)"main"};
    struct buf b;

    memset(f, 0, sizeof(*f));
    f->repo = (char *)"acme/bulk";
    f->path = (char *)"src/a.go";
    f->version = (char *)"e99c1c0cc02eb4011bc3";
    f->language = (char *)"Go";
    f->branches = branches;
    f->n_branches = 1;
    buf_init(&b, 1 << 20);
    for (int i = 1; i <= n; i++)
        assert_int_equal(buf_printf(&b, "line %d%s", i, i < n || !open_end ? "\n" : ""), ZK_OK);
    f->content_len = b.len;
    f->content = (unsigned char *)(b.data ? buf_steal(&b) : strdup(""));
    assert_non_null(f->content);
}

static char *read_lines(const struct zr_file *f, long start, long end, size_t budget, cJSON **json)
{
    struct fmt_file_opts o = {start, end, budget};
    struct zk_err err = {0};
    struct buf text;

    buf_init(&text, budget + 1);
    assert_int_equal(fmt_file(f, &o, &text, json, &err), ZK_OK);
    assert_true(text.len <= budget);
    return buf_steal(&text);
}

static void test_read_file(void **state)
{
    struct zr_file f;
    cJSON *json;
    char *t;

    (void)state;
    /* Default: the first 200 lines, and how to read on. */
    file_of(&f, 301, 0);
    assert_int_equal(fmt_count_lines(f.content, f.content_len), 301);
    t = read_lines(&f, 1, 0, 65536, &json);
    assert_int_equal(strncmp(t, "acme/bulk/src/a.go @e99c1c0c (branch main), lines 1-200 of 301\n1: line 1\n2: line 2\n",
                             strlen("acme/bulk/src/a.go @e99c1c0c (branch main), lines 1-200 of 301\n1: line 1\n")),
                     0);
    assert_non_null(strstr(t, "\n200: line 200\n(lines 201-301 not shown: call read_file with start_line 201)\n"));
    assert_null(strstr(t, "201: "));
    assert_int_equal(cJSON_GetObjectItem(json, "endLine")->valueint, 200);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(json, "complete")));
    free(t);
    cJSON_Delete(json);

    /* A range to the end of the file: nothing more to say. */
    t = read_lines(&f, 299, 400, 65536, &json);
    assert_string_equal(t, "acme/bulk/src/a.go @e99c1c0c (branch main), lines 299-301 of 301\n"
                           "299: line 299\n300: line 300\n301: line 301\n");
    free(t);
    cJSON_Delete(json);

    /* At most 500 lines, whatever end_line says. */
    free(f.content);
    file_of(&f, 800, 1);
    t = read_lines(&f, 1, 800, 65536, &json);
    assert_non_null(strstr(t, "lines 1-500 of 800\n"));
    assert_non_null(strstr(t, "\n500: line 500\n(lines 501-800 not shown: call read_file with start_line 501)\n"));
    free(t);
    cJSON_Delete(json);

    /* The budget ends the range early; the header names only the lines shown. */
    t = read_lines(&f, 1, 200, 2048, &json);
    assert_null(strstr(t, "lines 1-200"));
    assert_non_null(strstr(t, " not shown within the output budget: call read_file with start_line "));
    assert_true(cJSON_GetObjectItem(json, "endLine")->valueint < 200);
    free(t);
    cJSON_Delete(json);

    /* The last line without a newline counts; the whole file shown is complete. */
    free(f.content);
    file_of(&f, 2, 1);
    t = read_lines(&f, 1, 0, 65536, &json);
    assert_string_equal(t, "acme/bulk/src/a.go @e99c1c0c (branch main), lines 1-2 of 2\n1: line 1\n2: line 2\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")));
    free(t);
    cJSON_Delete(json);

    free(f.content);
    file_of(&f, 0, 0);
    t = read_lines(&f, 1, 0, 65536, &json);
    assert_string_equal(t, "acme/bulk/src/a.go @e99c1c0c (branch main): the file is empty\n");
    free(t);
    cJSON_Delete(json);
    free(f.content);
}

/* What an agent relies on in any formatted search: the text starts with the query and stays within
 * the budget (format checks that); structuredContent parses back, lists every shown file with at most
 * the per-file cap of matches, says it is complete exactly when the text does, and every truncation
 * reason it names is explained in the text's header. */
static void check_formatted(const struct zr_search *s, const char *text, cJSON *json, int max_files)
{
    static const struct {
        const char *reason, *phrase;
    } explained[] = {
        {"max_files", "more files matched than max_files="},
        {"timeout", "Zoekt's time limit ended the search"},
        {"zoekt_limit", "Zoekt stopped at its match limit"},
        {"shard_errors", "still loading"},
        {"per_file_cap", "matching lines (the rest are counted, not shown)"},
        {"output_budget", "the output budget of 2048 bytes cut"},
        {"zoekt_sent_fewer", "files asked for, although more matched"},
    };
    size_t shown = s->n_files < (size_t)max_files ? s->n_files : (size_t)max_files;
    cJSON *files = cJSON_GetObjectItem(json, "files"), *truncation = cJSON_GetObjectItem(json, "truncation");
    cJSON *file, *reason;
    char *printed = cJSON_PrintUnformatted(json);
    cJSON *back = cJSON_Parse(printed);

    assert_true(cJSON_IsObject(back));
    cJSON_Delete(back);
    free(printed);
    assert_true(strncmp(text, "Query: q\n", 9) == 0);
    assert_int_equal(cJSON_GetArraySize(files), shown);
    assert_int_equal(cJSON_GetObjectItem(json, "shownFiles")->valuedouble, shown);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")), cJSON_GetArraySize(truncation) == 0);
    assert_int_equal(strstr(text, " Incomplete: ") == NULL, cJSON_GetArraySize(truncation) == 0);
    cJSON_ArrayForEach(file, files)
        assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(file, "matches")) <= FMT_FILE_MATCH_LINES);
    cJSON_ArrayForEach(reason, truncation) {
        size_t i = 0;

        while (i < sizeof(explained) / sizeof(explained[0]) && strcmp(explained[i].reason, reason->valuestring))
            i++;
        if (i == sizeof(explained) / sizeof(explained[0]))
            fail_msg("unknown truncation reason %s", reason->valuestring);
        if (!strstr(text, explained[i].phrase))
            fail_msg("truncation %s is not explained in:\n%s", reason->valuestring, text);
    }
}

/* Mutated Zoekt answers (bytes replaced by JSON-significant characters, deterministic) either parse or
 * fail with ZK_EPARSE, and whatever parses formats as check_formatted says, under a tight budget. */
static void test_mutated_answers_format_within_limits(void **state)
{
    static const char *const fixtures[] = {"04_context2_chunks_true.response.json",
                                           "05_context2_chunks_false.response.json",
                                           "upstream_search_linematches.json"};
    static const char alphabet[] = "{}[]\",:0123456789-.eEtrufalsn \\/=A+\xc3\xff";
    unsigned long seed = 12345;
    int parsed = 0;

    (void)state;
    for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
        size_t len;
        char *orig = fixture_read("tests/fixtures/zoekt", fixtures[f], &len);

        for (int round = 0; round < 400; round++) {
            char *body = malloc(len + 1);
            struct zk_err err = {0};
            struct zr_opts o = {NULL, 2, 0};
            struct zr_search s;
            int rc;

            memcpy(body, orig, len + 1);
            for (int k = 0; k < 1 + round % 4; k++) {
                seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                body[(seed >> 33) % len] = alphabet[(seed >> 13) % (sizeof(alphabet) - 1)];
            }
            rc = zr_parse_search(body, len, &o, &s, &err);
            if (rc != ZK_OK && rc != ZK_EPARSE)
                fail_msg("%s round %d: rc %d", fixtures[f], round, rc);
            if (rc == ZK_OK) {
                cJSON *json = NULL;
                char *text = format(&s, "q", 3, 2048, 0, &json);

                check_formatted(&s, text, json, 3);
                parsed++;
                free(text);
                cJSON_Delete(json);
            }
            zr_search_free(&s);
            free(body);
        }
        free(orig);
    }
    /* Most single-byte changes in base64 or numbers keep the JSON valid: both paths ran. */
    assert_true(parsed > 100);
}

/* A deterministic generator for the budget property tests. */
static unsigned long prop_next(unsigned long *seed)
{
    *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
    return *seed >> 33;
}

/* A string of n bytes: ASCII with a few multi-byte characters, as names and lines from Zoekt can be. */
static char *prop_text(unsigned long *seed, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        if (i + 2 < n && prop_next(seed) % 16 == 0) {
            memcpy(s + i, "\xc3\xa9", 2);
            i++;
        } else {
            s[i] = (char)('a' + prop_next(seed) % 26);
        }
    }
    s[n] = '\0';
    return s;
}

/* A random search answer: up to 250 files in a few repositories, names and lines of any length up to
 * what Zoekt sends, matching and context lines, files over the per-file cap, every stop reason. */
static void prop_answer(unsigned long *seed, struct zr_search *s)
{
    size_t n_files = prop_next(seed) % 4 == 0 ? prop_next(seed) % 251 : prop_next(seed) % 40;

    memset(s, 0, sizeof(*s));
    s->files = calloc(n_files ? n_files : 1, sizeof(*s->files));
    assert_non_null(s->files);
    s->n_files = n_files;
    s->stats.file_count = (long long)(n_files + prop_next(seed) % 3 * 1000);
    s->stats.match_count = (long long)(prop_next(seed) % 100000);
    s->stats.files_skipped = prop_next(seed) % 5 == 0 ? 123456789 : 0;
    s->stats.shards_skipped = prop_next(seed) % 5 == 0 ? 987654321 : 0;
    s->stats.crashes = prop_next(seed) % 5 == 0 ? 12345 : 0;
    s->stats.flush_reason = prop_next(seed) % 5 == 0;
    for (size_t i = 0; i < n_files; i++) {
        struct zr_file *f = &s->files[i];
        size_t n_lines = prop_next(seed) % 3 == 0 ? prop_next(seed) % 40 : prop_next(seed) % 6, off = 0;
        size_t widths[40], total = 0;
        char repo[16];

        snprintf(repo, sizeof(repo), "r%lu/", prop_next(seed) % 5);
        f->repo = prop_text(seed, prop_next(seed) % 8 == 0 ? 300 : 3 + prop_next(seed) % 40);
        memcpy(f->repo, repo, strlen(repo) < strlen(f->repo) ? strlen(repo) : 0);
        f->path = prop_text(seed, prop_next(seed) % 8 == 0 ? 1000 + prop_next(seed) % 3000 : 1 + prop_next(seed) % 80);
        f->version = strdup("0123456789abcdef0123456789abcdef01234567");
        f->language = strdup("Go");
        f->name_match = prop_next(seed) % 7 == 0;
        f->undecodable = prop_next(seed) % 11 == 0;
        for (size_t j = 0; j < n_lines; j++)
            total += widths[j] = prop_next(seed) % 4 == 0 ? prop_next(seed) % 2000 : prop_next(seed) % 120;
        f->lines = calloc(n_lines ? n_lines : 1, sizeof(*f->lines));
        f->texts = calloc(total + n_lines + 1, 1);
        assert_non_null(f->lines);
        assert_non_null(f->texts);
        f->n_lines = n_lines;
        for (size_t j = 0, number = 1; j < n_lines; j++) {
            char *t = prop_text(seed, widths[j]);

            number += 1 + prop_next(seed) % 3;
            f->lines[j].number = (int)number;
            f->lines[j].is_match = prop_next(seed) % 3 != 0;
            f->lines[j].undecodable = prop_next(seed) % 50 == 0;
            f->lines[j].text = f->texts + off;
            memcpy(f->texts + off, f->lines[j].undecodable ? "" : t, f->lines[j].undecodable ? 1 : widths[j] + 1);
            off += widths[j] + 1;
            f->n_match_lines += f->lines[j].is_match;
            free(t);
        }
        if (prop_next(seed) % 4 == 0)
            f->n_match_lines += prop_next(seed) % 500;
        f->n_matches = f->n_match_lines;
    }
}

/* For many random answers, budgets, max_files, queries and notes of any length the tools allow (a
 * query echo can be a 4 KiB pattern plus fifty repository regexes): a result always comes back and its
 * text never exceeds the budget. */
static void test_search_never_exceeds_budget(void **state)
{
    unsigned long seed = 19;

    (void)state;
    for (int round = 0; round < 3000; round++) {
        size_t budget = FMT_BUDGET_MIN + prop_next(&seed) % (65536 - FMT_BUDGET_MIN + 1);
        char *query = prop_text(&seed, prop_next(&seed) % 4 == 0 ? prop_next(&seed) % 60000 : prop_next(&seed) % 200);
        char *note = prop_next(&seed) % 3 == 0 ? prop_text(&seed, prop_next(&seed) % 16000) : NULL;
        char *indexed = prop_next(&seed) % 2 == 0 ? prop_text(&seed, prop_next(&seed) % 16000) : NULL;
        struct fmt_search_opts o = {query, 1 + (int)(prop_next(&seed) % 200), budget,
                                    prop_next(&seed) % 2 ? 10000000000LL : 0, note, indexed, 0, NULL};
        struct zk_err err = {0};
        struct zr_search s;
        struct buf text;
        cJSON *json = NULL;
        int rc;

        prop_answer(&seed, &s);
        if (round % 50 == 0)
            o.budget = budget = FMT_BUDGET_MIN;
        buf_init(&text, 65536 + 8192);
        rc = fmt_search(&s, &o, &text, &json, &err);
        if (rc != ZK_OK)
            fail_msg("round %d: %zu files, budget %zu, query %zu bytes: %s", round, s.n_files, budget,
                     strlen(query), err.msg);
        if (text.len > budget)
            fail_msg("round %d: %zu files, budget %zu, query %zu bytes, note %zu bytes: %zu bytes of text", round,
                     s.n_files, budget, strlen(query), note ? strlen(note) : 0, text.len);
        assert_non_null(json);
        cJSON_Delete(json);
        buf_free(&text);
        zr_search_free(&s);
        free(query);
        free(note);
        free(indexed);
    }
}

/* list_repositories over hundreds of repositories, with long names and many branches, never exceeds
 * its budget, and says how many it did not list. */
static void test_repos_never_exceed_budget(void **state)
{
    unsigned long seed = 233;

    (void)state;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + prop_next(&seed) % 1200, budget = FMT_BUDGET_MIN + prop_next(&seed) % 30000;
        struct zr_list l = {0};
        struct zk_err err = {0};
        struct buf text;
        cJSON *json = NULL;

        l.repos = calloc(n, sizeof(*l.repos));
        assert_non_null(l.repos);
        l.n_repos = n;
        for (size_t i = 0; i < n; i++) {
            struct zr_repo *r = &l.repos[i];

            r->name = prop_text(&seed, prop_next(&seed) % 10 == 0 ? 400 : 5 + prop_next(&seed) % 40);
            r->full_name = strdup(r->name);
            r->latest_commit = strdup("");
            r->zoekt_version = strdup("");
            r->index_time = 1764460000;
            r->n_branches = prop_next(&seed) % 12;
            r->branches = calloc(r->n_branches ? r->n_branches : 1, sizeof(*r->branches));
            for (size_t b = 0; b < r->n_branches; b++) {
                r->branches[b].name = prop_text(&seed, 1 + prop_next(&seed) % 100);
                r->branches[b].version = strdup("0123456789abcdef");
            }
        }
        buf_init(&text, 65536 + 8192);
        if (fmt_repos(&l,
                      &(struct fmt_repos_opts){round % 3 ? NULL : "a*", 1000, budget, 1764460000 + 86400, 0, NULL,
                                               NULL},
                      &text, &json, &err) != ZK_OK)
            fail_msg("round %d: %s", round, err.msg);
        if (text.len > budget)
            fail_msg("round %d: %zu repositories, budget %zu: %zu bytes of text", round, n, budget, text.len);
        if (cJSON_GetObjectItem(json, "shown")->valuedouble < cJSON_GetObjectItem(json, "matching")->valuedouble)
            assert_non_null(strstr(text.data, " more not listed"));
        cJSON_Delete(json);
        buf_free(&text);
        zr_list_free(&l);
    }
}

/* read_file of lines of any length, with long repository names, paths and many branches, never
 * exceeds its budget. */
static void test_read_never_exceeds_budget(void **state)
{
    static char *branches[12];
    unsigned long seed = 7;

    (void)state;
    for (size_t b = 0; b < 12; b++)
        branches[b] = prop_text(&seed, 64 + b * 10);
    for (int round = 0; round < 300; round++) {
        size_t budget = FMT_BUDGET_MIN + (round % 10 ? prop_next(&seed) % 30000 : 0), len = prop_next(&seed) % 200000;
        struct fmt_file_opts o = {1 + (long)(prop_next(&seed) % 20), (long)(prop_next(&seed) % 900), budget};
        struct zr_file f = {0};
        struct zk_err err = {0};
        struct buf text;
        cJSON *json = NULL;

        f.repo = prop_text(&seed, prop_next(&seed) % 2 ? 1024 : 20);
        f.path = prop_text(&seed, prop_next(&seed) % 2 ? 4096 : 30);
        f.version = (char *)"e99c1c0cc02eb4011bc3";
        f.language = (char *)"Go";
        f.branches = branches;
        f.n_branches = prop_next(&seed) % 13;
        f.content = (unsigned char *)prop_text(&seed, len);
        for (size_t i = 0; i < len; i++)
            if (prop_next(&seed) % (round % 2 ? 5 : 3000) == 0)
                f.content[i] = '\n';
        f.content_len = len;
        if (o.start_line > fmt_count_lines(f.content, len))
            o.start_line = 1;
        if (o.end_line && o.end_line < o.start_line)
            o.end_line = 0;
        buf_init(&text, 65536 + 8192);
        if (fmt_file(&f, &o, &text, &json, &err) != ZK_OK)
            fail_msg("round %d: %s", round, err.msg);
        if (text.len > budget)
            fail_msg("round %d: budget %zu: %zu bytes of text", round, budget, text.len);
        cJSON_Delete(json);
        buf_free(&text);
        free(f.repo);
        free(f.path);
        free(f.content);
    }
    for (size_t b = 0; b < 12; b++)
        free(branches[b]);
}

/* A small answer for list_files and find_references: three files of two repositories, out of order. */
static void refs_answer(struct zr_search *s, struct zr_file *files, struct zr_line *lines)
{
    static char *branches[] = {(char *)"HEAD"};

    memset(s, 0, sizeof(*s));
    memset(files, 0, 3 * sizeof(*files));
    lines[0] = (struct zr_line){4, (char *)"func Bulk() {}", 1, 0, 0, 0};
    lines[1] = (struct zr_line){9, (char *)"\tx := Bulk()", 1, 0, 0, 0};
    lines[2] = (struct zr_line){2, (char *)"type Bulk int // old", 1, 0, 0, 0};
    lines[3] = (struct zr_line){7, (char *)"Bulk := 3", 1, 0, 0, 0};
    files[0] = (struct zr_file){(char *)"acme/z", (char *)"old.go", (char *)"abcdef0123", (char *)"Go", branches, 1,
                                &lines[2], 1, NULL, 1, 1, 0, 0, NULL, 0, 0, NULL, 0, 0, NULL};
    files[1] = (struct zr_file){(char *)"acme/a", (char *)"x/use.go", (char *)"0226d547aa", (char *)"Go", branches, 1,
                                &lines[3], 1, NULL, 3, 3, 0, 0, NULL, 0, 0, NULL, 0, 0, NULL};
    files[2] = (struct zr_file){(char *)"acme/a", (char *)"bulk.go", (char *)"0226d547aa", (char *)"Go", branches, 1,
                                &lines[0], 2, NULL, 2, 2, 0, 0, NULL, 0, 0, NULL, 0, 0, NULL};
    s->files = files;
    s->n_files = 3;
    s->stats.file_count = 3;
}

/* list_files' pages as files.c makes them: cursors of tool letter 'f', of the query hash 0. */
static struct tcur_files files_pages = {'f', 0};

/* Formats the page of list_files after the key after (NULL: the first): the text (caller frees), within
 * the budget, and *json, its structured content. */
static char *files_page(const struct zr_search *s, const char *query, int max_files, size_t budget,
                        const struct tcur_key *after, cJSON **json)
{
    struct fmt_files_opts o = {query, max_files, budget, after ? tcur_files_first(s, after) : 0, tcur_files_cursor,
                               &files_pages};
    struct zk_err err = {0};
    struct buf text;

    buf_init(&text, budget + 1);
    if (fmt_files(s, &o, &text, json, &err))
        fail_msg("fmt_files: %s", err.msg);
    if (text.len > budget)
        fail_msg("list_files: %zu bytes of text exceed the budget of %zu", text.len, budget);
    return buf_steal(&text);
}

/* The key a page's nextCursor starts after, read back as files.c reads it. Returns 0 when the page has
 * no cursor. */
static int files_next(const cJSON *json, struct tcur_key *k)
{
    const cJSON *c = cJSON_GetObjectItem(json, "nextCursor");
    char position[TCUR_POSITION_MAX + 1];
    struct tool_result r;
    int rc;

    if (!c)
        return 0;
    tool_result_init(&r);
    rc = tcur_read(c->valuestring, 'f', 0, position, &r) || tcur_key_read(position, k, &r);
    if (rc)
        fail_msg("cursor %s: %s", c->valuestring, r.text.data);
    tool_result_free(&r);
    return 1;
}

/* Part i (0 repository, 1 path, 2 branch) of a file's key, into out (n bytes). */
static const char *key_part(const struct tcur_key *k, int i, char *out, size_t n)
{
    const char *p = k->key, *end;

    while (i-- > 0 && (p = strchr(p, '\x01')))
        p++;
    if (!p)
        return "";
    end = strchr(p, '\x01');
    snprintf(out, n, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
    return out;
}

static void test_list_files(void **state)
{
    static const char want[] =
        "Query: file:(^|/)[^/]*$ repo:(^|/)acme/.*$\n"
        "3 files, showing the first 2 by path.\n"
        "Next page: the same arguments with \"cursor\":\"f0000000000000000.acme/a%01x/use.go%01HEAD\"\n"
        "\n"
        "acme/a @0226d547\n"
        "bulk.go\n"
        "x/use.go\n";
    static const char want2[] =
        "Query: file:(^|/)[^/]*$ repo:(^|/)acme/.*$\n"
        "3 files, showing 3 to 3 by path.\n"
        "\n"
        "acme/z @abcdef01\n"
        "old.go\n";
    const char *query = "file:(^|/)[^/]*$ repo:(^|/)acme/.*$";
    struct tcur_key after;
    char *text;
    struct zr_file files[3];
    struct zr_line lines[4];
    struct zr_search s;
    cJSON *json = NULL, *first;

    (void)state;
    refs_answer(&s, files, lines);
    text = files_page(&s, query, 2, 4096, NULL, &json);
    assert_string_equal(text, want);
    assert_int_equal(cJSON_GetObjectItem(json, "totalFiles")->valueint, 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")), 2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(json, "complete")));
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "truncation"), 0)->valuestring, "max_files");
    assert_true(files_next(json, &after));
    free(text);
    cJSON_Delete(json);
    /* The next page starts after the last file shown. */
    text = files_page(&s, query, 2, 4096, &after, &json);
    assert_string_equal(text, want2);
    assert_null(cJSON_GetObjectItem(json, "nextCursor"));
    assert_int_equal(cJSON_GetObjectItem(json, "skippedFiles")->valueint, 2);
    first = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0);
    assert_string_equal(cJSON_GetObjectItem(first, "path")->valuestring, "old.go");
    free(text);
    cJSON_Delete(json);
    /* Zoekt ranks: when it counted more than it returned, the sort covers what came back, and says so. */
    s.stats.file_count = 7000;
    s.stats.files_skipped = 1;
    text = files_page(&s, query, 2, 4096, NULL, &json);
    assert_non_null(strstr(text, "7000+ files, showing the first 2 by path of those Zoekt returned"));
    assert_non_null(strstr(text, "Zoekt's limits stopped the count"));
    free(text);
    cJSON_Delete(json);
    /* The last page of those Zoekt returned offers no next one: another would be empty. */
    text = files_page(&s, query, 2, 4096, &after, &json);
    assert_non_null(strstr(text, "7000+ files, showing 3 to 3 by path of those Zoekt returned"));
    assert_null(cJSON_GetObjectItem(json, "nextCursor"));
    free(text);
    cJSON_Delete(json);
}

/* An answer of one repository and one branch with the given paths, in this (unsorted) order. */
static void files_answer(struct zr_search *s, const char *const *paths, size_t n)
{
    static char *branches[] = {(char *)"HEAD"};

    memset(s, 0, sizeof(*s));
    s->files = calloc(n, sizeof(*s->files));
    assert_non_null(s->files);
    s->n_files = n;
    s->stats.file_count = (long long)n;
    for (size_t i = 0; i < n; i++)
        s->files[i] = (struct zr_file){(char *)"acme/p", (char *)paths[i], (char *)"0226d547aa", (char *)"", branches,
                                       1, NULL, 0, NULL, 0, 1, 1, 0, NULL, 0, 0, NULL, 0, 0, NULL};
}

/* Folders on lines of their own, their entries indented below; a folder with one entry shares its line
 * with it; a page that starts inside a folder repeats the folders above its first file. */
static void test_list_files_tree(void **state)
{
    static const char *const paths[] = {
        "src/main.go",          "deploy/overlays/prod/kustomization.yaml", "deploy/base/service.yaml",
        "README.md",            "deploy/base/kustomization.yaml",          "java/src/main/com/acme/B.java",
        "java/src/main/com/acme/A.java",
    };
    static const char tree[] =
        "\n"
        "acme/p @0226d547\n"
        "README.md\n"
        "deploy/\n"
        "  base/\n"
        "    kustomization.yaml\n"
        "    service.yaml\n"
        "  overlays/prod/kustomization.yaml\n"
        "java/src/main/com/acme/\n"
        "  A.java\n"
        "  B.java\n"
        "src/main.go\n";
    static const char page2[] =
        "\n"
        "acme/p @0226d547\n"
        "deploy/\n"
        "  base/\n"
        "    service.yaml\n"
        "  overlays/prod/kustomization.yaml\n";
    struct tcur_key after;
    char part[256], *text;
    struct zr_search s;
    cJSON *json = NULL;

    (void)state;
    files_answer(&s, paths, 7);
    text = files_page(&s, "q", 100, 4096, NULL, &json);
    assert_string_equal(strstr(text, "\n\n") + 1, tree);
    assert_non_null(strstr(text, "\n7 files.\n"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")));
    free(text);
    cJSON_Delete(json);
    text = files_page(&s, "q", 2, 4096, NULL, &json);
    assert_true(files_next(json, &after));
    assert_string_equal(key_part(&after, 1, part, sizeof(part)), "deploy/base/kustomization.yaml");
    free(text);
    cJSON_Delete(json);
    text = files_page(&s, "q", 2, 4096, &after, &json);
    assert_string_equal(strstr(text, "\n\n") + 1, page2);
    assert_non_null(strstr(text, "\n7 files, showing 3 to 4 by path.\nNext page: "));
    free(text);
    cJSON_Delete(json);
    free(s.files);
}

/* Below FMT_TREE_DEPTH levels the rest of a path is one line; one path in two branches' versions is
 * listed once per version, each naming its branches, and a page can end between them. */
static void test_list_files_depth_and_branches(void **state)
{
    static const char *const paths[] = {
        "a/x", "a/b/x", "a/b/c/x", "a/b/c/d/x", "a/b/c/d/e/x", "a/b/c/d/e/f/x", "a/b/c/d/e/f/g/x",
        "a/b/c/d/e/f/g/h/x", "a/b/c/d/e/f/g/h/i/x", "a/b/c/d/e/f/g/h/i/j/x", "a/b/c/d/e/f/g/h/i/j/y", "m.go", "m.go",
    };
    static char *dev[] = {(char *)"dev"}, *rel[] = {(char *)"main", (char *)"release-1", (char *)"release-2",
                                                     (char *)"release-3"};
    struct tcur_key after;
    char part[256], *text;
    struct zr_search s;
    cJSON *json = NULL;

    (void)state;
    files_answer(&s, paths, 13);
    s.files[11].branches = rel;
    s.files[11].n_branches = 4;
    s.files[12].branches = dev;
    text = files_page(&s, "q", 100, 8192, NULL, &json);
    assert_string_equal(strstr(text, "\n\n") + 1,
                        "\n"
                        "acme/p @0226d547\n"
                        "a/\n"
                        "  b/\n"
                        "    c/\n"
                        "      d/\n"
                        "        e/\n"
                        "          f/\n"
                        "            g/\n"
                        "              h/\n"
                        "                i/j/x\n"
                        "                i/j/y\n"
                        "                i/x\n"
                        "                x\n"
                        "              x\n"
                        "            x\n"
                        "          x\n"
                        "        x\n"
                        "      x\n"
                        "    x\n"
                        "  x\n"
                        "m.go (branch dev)\n"
                        "m.go (branches main, release-1, release-2 and 1 more)\n");
    free(text);
    cJSON_Delete(json);
    text = files_page(&s, "q", 12, 8192, NULL, &json);
    assert_true(files_next(json, &after));
    assert_string_equal(key_part(&after, 2, part, sizeof(part)), "dev");
    free(text);
    cJSON_Delete(json);
    text = files_page(&s, "q", 12, 8192, &after, &json);
    assert_string_equal(strstr(text, "\n\n") + 1,
                        "\nacme/p @0226d547\nm.go (branches main, release-1, release-2 and 1 more)\n");
    free(text);
    cJSON_Delete(json);
    free(s.files);
}

/* When the budget ends a page, the cursor starts after the last file the text shows. */
static void test_list_files_budget_cursor(void **state)
{
    const char *paths[300];
    struct tcur_key after;
    char names[300][32], line[40], part[256], *text, *last;
    struct zr_search s;
    cJSON *json = NULL, *files;

    (void)state;
    for (size_t i = 0; i < 300; i++) {
        snprintf(names[i], sizeof(names[i]), "dir/file%03zu.txt", i);
        paths[i] = names[i];
    }
    files_answer(&s, paths, 300);
    text = files_page(&s, "q", 1000, 2048, NULL, &json);
    assert_non_null(strstr(text, "300 files, showing the first "));
    assert_non_null(strstr(text, " The output budget cut the page short.\n"));
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "truncation"), 0)->valuestring,
                        "output_budget");
    files = cJSON_GetObjectItem(json, "files");
    assert_true(cJSON_GetArraySize(files) > 10);
    assert_int_equal(cJSON_GetObjectItem(json, "shownFiles")->valueint, cJSON_GetArraySize(files));
    assert_true(files_next(json, &after));
    /* The text's last line is the last file of structuredContent, which the cursor names. */
    last = cJSON_GetObjectItem(cJSON_GetArrayItem(files, cJSON_GetArraySize(files) - 1), "path")->valuestring;
    assert_string_equal(key_part(&after, 1, part, sizeof(part)), last);
    snprintf(line, sizeof(line), "  %s\n", last + strlen("dir/"));
    assert_string_equal(text + strlen(text) - strlen(line), line);
    free(text);
    cJSON_Delete(json);
    free(s.files);
}

static void test_find_references(void **state)
{
    static const char want[] =
        "Query: content:\"\\\\bBulk\\\\b\" case:yes\n"
        "Bulk is used on 6 lines in 3 files of 2 repositories (text search: whole word, case-sensitive; D: keyword "
        "guesses at definitions).\n"
        "  acme/a: 5 lines in 2 files\n"
        "  acme/z: 1 line in 1 file\n"
        "\n"
        "acme/a/bulk.go @0226d547\n"
        "D 4: func Bulk() {}\n"
        "> 9: \tx := Bulk()\n"
        "\n"
        "acme/a/x/use.go @0226d547\n"
        "D 7: Bulk := 3\n"
        "(+2 more matching lines in this file)\n"
        "\n"
        "(1 more file not shown: raise max_files, or narrow with repo or file)\n";
    struct fmt_refs_opts o = {"content:\"\\\\bBulk\\\\b\" case:yes", "Bulk", 2, 4096, NULL, NULL, NULL, 0, NULL, NULL};
    struct zr_file files[3];
    struct zr_line lines[4];
    struct zk_err err = {0};
    struct zr_search s;
    struct buf text;
    cJSON *json = NULL, *first;

    (void)state;
    refs_answer(&s, files, lines);
    buf_init(&text, 4097);
    assert_int_equal(fmt_refs(&s, &o, &text, &json, &err), ZK_OK);
    assert_string_equal(text.data, want);
    first = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "repositories"), 0);
    assert_string_equal(cJSON_GetObjectItem(first, "repository")->valuestring, "acme/a");
    assert_int_equal(cJSON_GetObjectItem(first, "matchingLines")->valueint, 5);
    first = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0),
                                                   "matches"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "definition")));
    cJSON_Delete(json);
    buf_free(&text);
}

/* The repositories of refs_answer: acme/a was indexed with ctags, acme/z without. */
static void refs_list(struct zr_list *l, struct zr_repo *repos, int z_has_symbols)
{
    memset(repos, 0, 2 * sizeof(*repos));
    repos[0] = (struct zr_repo){.name = (char *)"acme/a", .full_name = (char *)"acme/a", .has_symbols = 1};
    repos[1] = (struct zr_repo){.name = (char *)"acme/z", .full_name = (char *)"acme/z", .has_symbols = z_has_symbols};
    *l = (struct zr_list){.repos = repos, .n_repos = 2, .shards = 2};
}

/* The text of refs_answer with ctags' definitions of Bulk in acme/a (defs: Bulk on line 9 of
 * bulk.go, and another name on line 4), formatted with list l; *json gets the structured content. */
static char *refs_ctags_text(const struct zr_list *l, const struct zr_search *defs, cJSON **json)
{
    struct fmt_refs_opts o = {"q", "Bulk", 3, 4096, NULL, defs, l, 0, NULL, NULL};
    struct zr_file files[3];
    struct zr_line lines[4];
    struct zk_err err = {0};
    struct zr_search s;
    struct buf text;

    refs_answer(&s, files, lines);
    buf_init(&text, 4097);
    if (fmt_refs(&s, &o, &text, json, &err))
        fail_msg("fmt_refs: %s", err.msg);
    return buf_steal(&text);
}

/* Where a repository has symbol data, D is what ctags found, and only that: a use the keywords miss is
 * marked, a line that looks like a definition is not; the keywords still decide in the repository
 * without symbols, and everywhere when the sym: answer did not come. */
static void test_find_references_ctags(void **state)
{
    static const char want[] =
        "Query: q\n"
        "Bulk is used on 6 lines in 3 files of 2 repositories (text search: whole word, case-sensitive; D: ctags "
        "definitions (1 repository), keyword guesses elsewhere).\n"
        "  acme/a: 5 lines in 2 files\n"
        "  acme/z: 1 line in 1 file\n"
        "\n"
        "acme/a/bulk.go @0226d547\n"
        "> 4: func Bulk() {}\n"
        "D 9: \tx := Bulk()\n"
        "\n"
        "acme/a/x/use.go @0226d547\n"
        "> 7: Bulk := 3\n"
        "(+2 more matching lines in this file)\n"
        "\n"
        "acme/z/old.go @abcdef01\n"
        "D 2: type Bulk int // old\n";
    static char *branches[] = {(char *)"HEAD"};
    struct zr_symbol syms[2] = {{4, (char *)"BulkOld", (char *)"func", (char *)"", (char *)""},
                                {9, (char *)"Bulk", (char *)"func", (char *)"", (char *)""}};
    struct zr_file def = {(char *)"acme/a", (char *)"bulk.go", (char *)"0226d547aa", (char *)"Go", branches, 1,
                          NULL, 0, NULL, 2, 2, 0, 0, NULL, 0, 0, syms, 2, 0, NULL};
    struct zr_search defs = {.files = &def, .n_files = 1, .stats = {1, 2, 0, 0, 0, 0, 0}, .chunk_matches = 1};
    struct zr_repo repos[2];
    struct zr_list l;
    cJSON *json = NULL, *f;
    char *text;

    (void)state;
    refs_list(&l, repos, 0);
    text = refs_ctags_text(&l, &defs, &json);
    assert_string_equal(text, want);
    f = cJSON_GetObjectItem(json, "files");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 0), "definitionSource")->valuestring, "ctags");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 2), "definitionSource")->valuestring, "keywords");
    f = cJSON_GetObjectItem(cJSON_GetArrayItem(f, 0), "matches");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 0), "definition")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 1), "definition")));
    cJSON_Delete(json);
    free(text);

    /* Both repositories with symbols: the header says ctags alone, and old.go's keyword line is a use. */
    refs_list(&l, repos, 1);
    text = refs_ctags_text(&l, &defs, &json);
    assert_non_null(strstr(text, "case-sensitive; D: ctags definitions).\n"));
    assert_non_null(strstr(text, "\nacme/z/old.go @abcdef01\n> 2: type Bulk int // old\n"));
    cJSON_Delete(json);
    free(text);

    /* The sym: answer did not come: keywords everywhere, as for repositories without symbols. */
    text = refs_ctags_text(&l, NULL, &json);
    assert_non_null(strstr(text, "case-sensitive; D: keyword guesses at definitions).\n"));
    assert_non_null(strstr(text, "\nD 4: func Bulk() {}\n> 9: \tx := Bulk()\n"));
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0), "definitionSource")->valuestring,
        "keywords");
    cJSON_Delete(json);
    free(text);
}

/* A cursor for tests: "next after <repo>/<path>", padded to FMT_CURSOR_MAX bytes as the longest a tool
 * makes; arg counts the calls. */
static char *refs_test_cursor(const struct zr_file *last, void *arg)
{
    char *c = malloc(FMT_CURSOR_MAX + 1);

    assert_non_null(c);
    ++*(int *)arg;
    snprintf(c, FMT_CURSOR_MAX + 1, "next after %s/%s", last->repo, last->path);
    memset(c + strlen(c), '.', FMT_CURSOR_MAX - strlen(c));
    c[FMT_CURSOR_MAX] = '\0';
    return c;
}

/* A page: the lines of the files from o.first on, the counts of all; the cursor follows the last file
 * shown, also when the budget cut the page, and no cursor follows a page that showed none. */
static void test_find_references_pages(void **state)
{
    struct zr_file files[3];
    struct zr_line lines[4];
    struct zk_err err = {0};
    struct zr_search s;
    struct buf text;
    cJSON *json = NULL;
    int calls = 0;
    struct fmt_refs_opts o = {"q", "Bulk", 1, 4096, NULL, NULL, NULL, 1, refs_test_cursor, &calls};
    char *want, query[451], long_lines[3][FMT_LINE_MAX + 1], long_path[1200];

    (void)state;
    refs_answer(&s, files, lines);
    buf_init(&text, 4097);
    assert_int_equal(fmt_refs(&s, &o, &text, &json, &err), ZK_OK);
    assert_non_null(strstr(text.data, "\nEarlier pages showed 1 file (by repository and path); this one goes on from "
                                      "there.\n  acme/a: 5 lines in 2 files\n  acme/z: 1 line in 1 file\n\n"
                                      "acme/a/x/use.go @0226d547\n"));
    assert_null(strstr(text.data, "acme/a/bulk.go"));
    assert_int_equal(calls, 1);
    want = refs_test_cursor(&files[1], &calls);
    assert_non_null(strstr(text.data, "\n(1 more file not shown: see the next page, or narrow with repo or file)\n"));
    assert_non_null(strstr(text.data, "\nNext page: the same arguments with \"cursor\":\"next after acme/a/x/use.go."));
    assert_string_equal(cJSON_GetObjectItem(json, "nextCursor")->valuestring, want);
    assert_int_equal(cJSON_GetObjectItem(json, "skippedFiles")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(json, "repositories")), 2);
    free(want);
    cJSON_Delete(json);

    /* The last page: no cursor. */
    calls = 0;
    o.first = 2;
    buf_reset(&text);
    assert_int_equal(fmt_refs(&s, &o, &text, &json, &err), ZK_OK);
    assert_non_null(strstr(text.data, "\nacme/z/old.go @abcdef01\n"));
    assert_null(strstr(text.data, "Next page"));
    assert_int_equal(calls, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "complete")));
    cJSON_Delete(json);

    /* A budget that fits the first of the three files (a long query, lines of FMT_LINE_MAX bytes): the
     * cursor follows it, and the files cut are on the next page. */
    memset(query, 'q', sizeof(query) - 1);
    query[sizeof(query) - 1] = '\0';
    for (size_t i = 0; i < 3; i++) {
        memset(long_lines[i], ' ', FMT_LINE_MAX);
        memcpy(long_lines[i], "Bulk", 4);
        long_lines[i][FMT_LINE_MAX] = '\0';
    }
    lines[0].text = long_lines[0];
    lines[1].text = long_lines[1];
    lines[3].text = long_lines[2];
    o.query = query;
    o.first = 0;
    o.max_files = 3;
    o.budget = FMT_BUDGET_MIN;
    buf_reset(&text);
    assert_int_equal(fmt_refs(&s, &o, &text, &json, &err), ZK_OK);
    assert_true(text.len <= FMT_BUDGET_MIN);
    assert_int_equal(cJSON_GetObjectItem(json, "shownFiles")->valueint, 1);
    assert_non_null(strstr(text.data, "\nNext page: the same arguments with \"cursor\":\"next after acme/a/bulk.go."));
    cJSON_Delete(json);

    /* The first file alone does not fit (its name is longer than the budget left): no file, and no
     * cursor, which would lead back to this page. */
    memset(long_path, 'p', sizeof(long_path) - 1);
    long_path[sizeof(long_path) - 1] = '\0';
    files[2].path = long_path;
    calls = 0;
    buf_reset(&text);
    assert_int_equal(fmt_refs(&s, &o, &text, &json, &err), ZK_OK);
    assert_true(text.len <= FMT_BUDGET_MIN);
    assert_int_equal(cJSON_GetObjectItem(json, "shownFiles")->valueint, 0);
    assert_int_equal(calls, 0);
    assert_non_null(strstr(text.data, "\n(3 more files not shown within the output budget: raise max_files, or "
                                      "narrow with repo or file)\n"));
    assert_null(cJSON_GetObjectItem(json, "nextCursor"));
    cJSON_Delete(json);
    buf_free(&text);
}

static void test_definition_heuristic(void **state)
{
    static const struct {
        const char *line;
        int def;
    } cases[] = {
        {"func Bulk(x int) {", 1},          {"func (s *Server) Bulk(ctx context.Context) error {", 1},
        {"type Bulk struct {", 1},          {"\tBulk := newBulk()", 1},
        {"class Bulk(Base):", 1},           {"    def Bulk(self):", 1},
        {"async def Bulk():", 1},           {"pub fn Bulk() -> u32 {", 1},
        {"export const Bulk = 3;", 1},      {"struct Bulk {", 1},
        {"#define Bulk 1", 1},              {"Bulk() {", 1},
        {"export function Bulk(a) {", 1},   {"interface Bulk {", 1},
        {"x := Bulk()", 0},                 {"return Bulk(x)", 0},
        {"// see func BulkLoad(", 0},       {"func (s *Server) BulkLoad() {", 0},
        {"typed Bulk", 0},                  {"var x = Bulk", 0},
        {"Bulk = 4", 0},                    {"BulkX := 2", 0},
        {"\tstruct Bulk *next;", 0},        {"enum Bulk mode = 2;", 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (fmt_is_definition(cases[i].line, "Bulk") != cases[i].def)
            fail_msg("\"%s\": want %s", cases[i].line, cases[i].def ? "a definition" : "a use");
}

/* list_files and find_references over random answers: a result always comes back within the budget,
 * and list_files' shows a file when there is one. */
static void test_files_and_refs_never_exceed_budget(void **state)
{
    unsigned long seed = 1919;

    (void)state;
    for (int round = 0; round < 1500; round++) {
        size_t budget = prop_next(&seed) % 4 == 0 ? FMT_BUDGET_MIN
                                                  : FMT_BUDGET_MIN + prop_next(&seed) % (65536 - FMT_BUDGET_MIN + 1);
        char *query = prop_text(&seed, prop_next(&seed) % 4 == 0 ? prop_next(&seed) % 60000 : prop_next(&seed) % 200);
        char *symbol = prop_text(&seed, 1 + prop_next(&seed) % 256);
        struct fmt_files_opts fo = {query, 1 + (int)(prop_next(&seed) % 1000), budget, 0, tcur_files_cursor,
                                    &files_pages};
        char *note = prop_next(&seed) % 3 == 0 ? prop_text(&seed, prop_next(&seed) % 16000) : NULL;
        int calls = 0;
        struct fmt_refs_opts ro = {query, symbol, 1 + (int)(prop_next(&seed) % 200), budget, note, NULL, NULL,
                                   prop_next(&seed) % 10, prop_next(&seed) % 2 ? refs_test_cursor : NULL, &calls};
        struct zk_err err = {0};
        struct zr_search s;
        struct buf text;
        cJSON *json = NULL;

        prop_answer(&seed, &s);
        buf_init(&text, 65536 + 8192);
        if (fmt_files(&s, &fo, &text, &json, &err) != ZK_OK || text.len > budget)
            fail_msg("list_files round %d: %zu files, budget %zu: %zu bytes (%s)", round, s.n_files, budget,
                     text.len, err.msg);
        /* A page's first file always fits, however long its names and the query. */
        if (s.n_files && cJSON_GetObjectItem(json, "shownFiles")->valueint < 1)
            fail_msg("list_files round %d: %zu files, budget %zu: none shown", round, s.n_files, budget);
        cJSON_Delete(json);
        buf_reset(&text);
        if (fmt_refs(&s, &ro, &text, &json, &err) != ZK_OK || text.len > budget)
            fail_msg("find_references round %d: %zu files, budget %zu: %zu bytes (%s)", round, s.n_files, budget,
                     text.len, err.msg);
        assert_non_null(json);
        cJSON_Delete(json);
        buf_free(&text);
        zr_search_free(&s);
        free(query);
        free(symbol);
        free(note);
    }
}

/* A random list_files answer: up to 300 files in two repositories, at most 12 folders deep, the folders
 * named from three names (so that some hold one entry, some several), each file named after its
 * index, so that no two have the same key. Every string is on the heap, for zr_search_free. */
static void tree_answer(unsigned long *seed, struct zr_search *s)
{
    size_t n = prop_next(seed) % 300;

    memset(s, 0, sizeof(*s));
    s->files = calloc(n ? n : 1, sizeof(*s->files));
    assert_non_null(s->files);
    s->n_files = n;
    s->stats.file_count = (long long)n;
    for (size_t i = 0; i < n; i++) {
        struct zr_file *f = &s->files[i];
        size_t depth = prop_next(seed) % 13, len = 0;

        f->repo = strdup(prop_next(seed) % 2 ? "acme/a" : "acme/b");
        f->path = calloc(1, 4 * depth + 16);
        assert_non_null(f->path);
        for (size_t d = 0; d < depth; d++)
            len += (size_t)sprintf(f->path + len, "d%lu/", prop_next(seed) % 3);
        sprintf(f->path + len, "f%zu", i);
        f->version = strdup("0226d547aa");
        f->language = strdup("");
        f->branches = calloc(1, sizeof(*f->branches));
        assert_non_null(f->branches);
        f->branches[0] = strdup("HEAD");
        f->n_branches = 1;
    }
}

/* Reads a page's tree back as an agent would and checks it against the files of structuredContent: an
 * empty line, then a repository's line; a line ending in '/' is a folder at its depth; any other line a
 * file below the folders last opened above its depth. */
static void tree_check(const char *text, const cJSON *files)
{
    static char folders[FMT_TREE_DEPTH + 1][512];
    const char *p = strstr(text, "\n\n");
    char repo[64] = "", path[4096];
    int shown = 0, head = 0;

    for (p = p ? p + 1 : ""; *p; p = strchr(p, '\n') + 1) {
        size_t len = strcspn(p, "\n"), indent = strspn(p, " "), depth = indent / 2;
        const cJSON *f;

        if (len == 0) {
            head = 1;
        } else if (head) {
            snprintf(repo, sizeof(repo), "%.*s", (int)strcspn(p, " "), p);
            head = 0;
        } else if (p[len - 1] == '/') {
            assert_true(depth < FMT_TREE_DEPTH);
            snprintf(folders[depth], sizeof(folders[depth]), "%.*s", (int)(len - indent), p + indent);
        } else {
            path[0] = '\0';
            for (size_t d = 0; d < depth; d++)
                strcat(path, folders[d]);
            strncat(path, p + indent, len - indent);
            f = cJSON_GetArrayItem(files, shown++);
            if (!f || strcmp(cJSON_GetObjectItem(f, "repository")->valuestring, repo) != 0 ||
                strcmp(cJSON_GetObjectItem(f, "path")->valuestring, path) != 0)
                fail_msg("the tree shows %s %s where structuredContent has %s", repo, path,
                         f ? cJSON_GetObjectItem(f, "path")->valuestring : "nothing");
        }
    }
    assert_int_equal(shown, cJSON_GetArraySize(files));
}

/* Paging through random answers at random budgets and page sizes shows every file once, in order: each
 * page starts after the last file the one before showed, reads alone as a tree that names exactly the
 * files of its structuredContent, and shows at least one file. */
static void test_list_files_pages_cover_all(void **state)
{
    unsigned long seed = 4242;

    (void)state;
    for (int round = 0; round < 300; round++) {
        size_t budget = FMT_BUDGET_MIN + prop_next(&seed) % 4000, seen = 0;
        int max_files = 1 + (int)(prop_next(&seed) % 40);
        struct tcur_key after;
        const struct tcur_key *at = NULL;
        char prev[4200] = "";
        struct zr_search s;

        tree_answer(&seed, &s);
        for (size_t page = 0;; page++) {
            cJSON *json = NULL, *f;
            char *text = files_page(&s, "q", max_files, budget, at, &json), key[4200];

            if (page > s.n_files)
                fail_msg("round %d: more pages than files", round);
            tree_check(text, cJSON_GetObjectItem(json, "files"));
            if (seen < s.n_files && cJSON_GetObjectItem(json, "shownFiles")->valueint < 1)
                fail_msg("round %d: a page with no file, %zu of %zu seen", round, seen, s.n_files);
            cJSON_ArrayForEach(f, cJSON_GetObjectItem(json, "files")) {
                snprintf(key, sizeof(key), "%s:%s", cJSON_GetObjectItem(f, "repository")->valuestring,
                         cJSON_GetObjectItem(f, "path")->valuestring);
                if (strcmp(prev, key) >= 0)
                    fail_msg("round %d: %s after %s", round, key, prev);
                memcpy(prev, key, sizeof(prev));
                seen++;
            }
            at = files_next(json, &after) ? &after : NULL;
            free(text);
            cJSON_Delete(json);
            if (!at)
                break;
        }
        assert_int_equal(seen, s.n_files);
        zr_search_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunks_all_shown),       cmocka_unit_test(test_max_files),
        cmocka_unit_test(test_name_match_and_none),    cmocka_unit_test(test_per_file_cap),
        cmocka_unit_test(test_long_line_shows_match),  cmocka_unit_test(test_zoekt_sent_fewer),
        cmocka_unit_test(test_long_lines_cut),         cmocka_unit_test(test_budget_names_every_file),
        cmocka_unit_test(test_budget_drops_files_last), cmocka_unit_test(test_budget_counts_cap_notes),
        cmocka_unit_test(test_stop_reasons),
        cmocka_unit_test(test_undecodable_and_note),   cmocka_unit_test(test_repos_and_filter),
        cmocka_unit_test(test_indexed_header),         cmocka_unit_test(test_age_and_indexed),
        cmocka_unit_test(test_indexed_names_at_most_ten),
        cmocka_unit_test(test_repos_filter_rules),     cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_mutated_answers_format_within_limits),
        cmocka_unit_test(test_search_never_exceeds_budget), cmocka_unit_test(test_repos_never_exceed_budget),
        cmocka_unit_test(test_read_never_exceeds_budget),
        cmocka_unit_test(test_list_files),             cmocka_unit_test(test_list_files_tree),
        cmocka_unit_test(test_list_files_depth_and_branches), cmocka_unit_test(test_list_files_budget_cursor),
        cmocka_unit_test(test_list_files_pages_cover_all), cmocka_unit_test(test_find_references),
        cmocka_unit_test(test_find_references_ctags),  cmocka_unit_test(test_find_references_pages),
        cmocka_unit_test(test_definition_heuristic),
        cmocka_unit_test(test_files_and_refs_never_exceed_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
