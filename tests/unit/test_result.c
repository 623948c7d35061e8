/* Unit tests for connector/zoekt/result: every recorded and upstream-shaped Zoekt answer parses into the
 * same structure, with the scanner as with the whole-tree reference, both result generations agree
 * line for line, and malformed input fails cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "connector/zoekt/result.h"
#include "rfc3339.h"
#include "tests/support/fixture.h"

static const struct zr_file *find_file(const struct zr_search *s, const char *repo, const char *path)
{
    for (size_t i = 0; i < s->n_files; i++)
        if (strcmp(s->files[i].repo, repo) == 0 && strcmp(s->files[i].path, path) == 0)
            return &s->files[i];
    return NULL;
}

static void parse_search_fixture(const char *name, int ctx, struct zr_search *s)
{
    struct zr_opts o = {NULL, ctx, 0};
    struct zk_err err = {0};
    size_t len;
    char *body = fixture_read("tests/fixtures/zoekt", name, &len);

    if (zr_parse_search(body, len, &o, s, &err) != ZK_OK)
        fail_msg("%s: %s", name, err.msg);
    free(body);
}

/* The scanner's parse and the whole-tree reference read body the same, with per-file caps of none, 1
 * and 10 matching lines: what the agent is shown (files, lines, counts) is equal. */
static void assert_parsers_agree(const char *name, const char *body, size_t len)
{
    static const int caps[] = {0, 1, 10};

    for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
        struct zr_opts o = {"github.com/", 2, caps[c]};
        struct zk_err ea = {0}, eb = {0};
        struct zr_search a, b;

        assert_int_equal(zr_parse_search(body, len, &o, &a, &ea), zr_parse_search_tree(body, len, &o, &b, &eb));
        assert_string_equal(ea.msg, eb.msg);
        if (a.n_files != b.n_files || a.stats.file_count != b.stats.file_count)
            fail_msg("%s: %zu files against %zu", name, a.n_files, b.n_files);
        for (size_t i = 0; i < a.n_files; i++) {
            const struct zr_file *x = &a.files[i], *y = &b.files[i];

            assert_string_equal(x->repo, y->repo);
            assert_string_equal(x->path, y->path);
            assert_int_equal(x->n_lines, y->n_lines);
            assert_int_equal(x->n_match_lines, y->n_match_lines);
            assert_int_equal(x->n_matches, y->n_matches);
            for (size_t k = 0; k < x->n_lines; k++) {
                assert_int_equal(x->lines[k].number, y->lines[k].number);
                assert_int_equal(x->lines[k].is_match, y->lines[k].is_match);
                assert_string_equal(x->lines[k].text, y->lines[k].text);
                assert_int_equal(x->lines[k].match_start, y->lines[k].match_start);
                assert_int_equal(x->lines[k].match_end, y->lines[k].match_end);
            }
            assert_int_equal(x->n_symbols, y->n_symbols);
            for (size_t k = 0; k < x->n_symbols; k++) {
                assert_int_equal(x->symbols[k].line, y->symbols[k].line);
                assert_string_equal(x->symbols[k].sym, y->symbols[k].sym);
                assert_string_equal(x->symbols[k].kind, y->symbols[k].kind);
                assert_string_equal(x->symbols[k].parent, y->symbols[k].parent);
                assert_string_equal(x->symbols[k].parent_kind, y->symbols[k].parent_kind);
            }
        }
        zr_search_free(&a);
        zr_search_free(&b);
    }
}

/* Every fixture parses with the parser that fits it, and error bodies yield Zoekt's message. */
static void test_every_fixture(void **state)
{
    char dir[1024];
    struct dirent *de;
    DIR *d;
    int seen = 0;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/tests/fixtures/zoekt", fixture_root());
    d = opendir(dir);
    assert_non_null(d);
    while ((de = readdir(d))) {
        struct zk_err err = {0};
        struct zr_search s;
        struct zr_list l;
        size_t len;
        char *body;
        char msg[256];

        if (!strstr(de->d_name, ".json") || strstr(de->d_name, "request") || strstr(de->d_name, "options_zero"))
            continue;
        body = fixture_read("tests/fixtures/zoekt", de->d_name, &len);
        seen++;
        if (strstr(body, "\"List\"")) {
            if (zr_parse_list(body, len, NULL, &l, &err) != ZK_OK)
                fail_msg("%s: %s", de->d_name, err.msg);
            assert_true(l.n_repos > 0);
            zr_list_free(&l);
        } else if (strstr(body, "\"Error\"")) {
            assert_int_equal(zr_parse_search(body, len, NULL, &s, &err), ZK_EPARSE);
            zr_search_free(&s);
            zr_error_text(body, len, msg, sizeof(msg));
            assert_null(strchr(msg, '{'));
            assert_true(strlen(msg) > 5);
        } else {
            if (zr_parse_search(body, len, NULL, &s, &err) != ZK_OK)
                fail_msg("%s: %s", de->d_name, err.msg);
            assert_int_equal(s.n_files > 0, s.stats.file_count > 0);
            zr_search_free(&s);
            assert_parsers_agree(de->d_name, body, len);
        }
        free(body);
    }
    closedir(d);
    assert_true(seen >= 15);
}

/* LineMatches with Before/After and ChunkMatches (the answers of one query with ChunkMatches false and
 * true) describe the same lines. */
static void assert_generations_agree(const char *line_matches, const char *chunk_matches)
{
    struct zr_search lines, chunks;

    parse_search_fixture(line_matches, 2, &lines);
    parse_search_fixture(chunk_matches, 2, &chunks);
    assert_false(lines.chunk_matches);
    assert_true(chunks.chunk_matches);
    assert_int_equal(lines.n_files, chunks.n_files);
    for (size_t i = 0; i < lines.n_files; i++) {
        const struct zr_file *a = &lines.files[i];
        const struct zr_file *b = find_file(&chunks, a->repo, a->path);

        assert_non_null(b);
        if (a->n_lines != b->n_lines)
            fail_msg("%s/%s: %zu lines vs %zu", a->repo, a->path, a->n_lines, b->n_lines);
        for (size_t j = 0; j < a->n_lines; j++) {
            assert_int_equal(a->lines[j].number, b->lines[j].number);
            assert_string_equal(a->lines[j].text, b->lines[j].text);
            assert_int_equal(a->lines[j].is_match, b->lines[j].is_match);
        }
    }
    zr_search_free(&lines);
    zr_search_free(&chunks);
}

/* In both context encodings: c4d8f35 ends every line with a newline, 51a31b62 joined them without a
 * final one. */
static void test_generations_agree(void **state)
{
    (void)state;
    assert_generations_agree("05_context2_chunks_false.response.json", "04_context2_chunks_true.response.json");
    assert_generations_agree("51a31b62_context2_chunks_false.json", "51a31b62_context2_chunks_true.json");
}

/* The LineMatches answer to needle with 2 context lines, alpha's commit being version: the same lines
 * whichever context encoding the recording's Zoekt used. */
static void assert_line_details(const char *fixture, const char *version)
{
    struct zr_search s;
    const struct zr_file *f;

    parse_search_fixture(fixture, 2, &s);
    assert_int_equal(s.stats.file_count, 6);
    assert_int_equal(s.stats.match_count, 10);
    f = find_file(&s, "alpha", "README.md");
    assert_non_null(f);
    assert_int_equal(f->n_lines, 3);
    assert_int_equal(f->lines[0].number, 1);
    assert_string_equal(f->lines[0].text, "# alpha");
    assert_string_equal(f->lines[1].text, "");
    assert_int_equal(f->lines[2].is_match, 1);
    assert_string_equal(f->lines[2].text, "A small C project. Say hello to the needle.");
    assert_string_equal(f->version, version);
    assert_string_equal(f->language, "Markdown");
    assert_int_equal(f->n_branches, 1);
    assert_string_equal(f->branches[0], "HEAD");

    /* Overlapping contexts of lines 12, 13 and 16 merge into one run 10..18. */
    f = find_file(&s, "alpha", "src/util.c");
    assert_non_null(f);
    assert_int_equal(f->n_lines, 9);
    assert_int_equal(f->lines[0].number, 10);
    assert_int_equal(f->lines[8].number, 18);
    assert_int_equal(f->n_match_lines, 3);
    assert_int_equal(f->n_matches, 5);
    zr_search_free(&s);
}

static void test_line_details(void **state)
{
    (void)state;
    assert_line_details("05_context2_chunks_false.response.json", "00d7769e90a90552ca59d6224052ad8b4fd7fac6");
    assert_line_details("51a31b62_context2_chunks_false.json", "0226d547cbd2be5f96c987829617482bb8da4d96");
}

static void test_upstream_generations(void **state)
{
    struct zr_search a, b;

    (void)state;
    parse_search_fixture("upstream_search_linematches.json", 1, &a);
    parse_search_fixture("upstream_search_chunkmatches.json", 1, &b);
    assert_int_equal(a.n_files, 1);
    assert_int_equal(b.n_files, 1);
    for (int k = 0; k < 2; k++) {
        const struct zr_file *f = k ? &b.files[0] : &a.files[0];

        assert_int_equal(f->n_lines, 3);
        assert_int_equal(f->lines[0].number, 514);
        assert_string_equal(f->lines[0].text, "// SearchResult contains search matches and extra data");
        assert_int_equal(f->lines[1].is_match, 1);
        assert_string_equal(f->lines[1].text, "type SearchResult struct {");
        assert_int_equal(f->lines[2].number, 516);
        assert_string_equal(f->lines[2].text, "\tStats");
    }
    zr_search_free(&a);
    zr_search_free(&b);
}

/* The SymbolInfo of a sym: answer from the real webserver over an index built with universal-ctags
 * (tests/integration/real_zoekt makes such indexes): each symbol at its range's line, with kind and
 * parent, by both readers. */
static void test_symbols(void **state)
{
    struct zr_search s;
    const struct zr_file *go, *c;
    size_t len;
    char *body = fixture_read("tests/fixtures/zoekt", "real_symbols_chunks.json", &len);

    (void)state;
    assert_parsers_agree("real_symbols_chunks.json", body, len);
    free(body);
    parse_search_fixture("real_symbols_chunks.json", 1, &s);
    go = find_file(&s, "test/sym", "a.go");
    c = find_file(&s, "test/sym", "b.c");
    assert_non_null(go);
    assert_non_null(c);
    assert_int_equal(go->n_symbols, 2);
    for (size_t i = 0; i < go->n_symbols; i++) {
        const struct zr_symbol *y = &go->symbols[i];

        if (y->line == 3) {
            assert_string_equal(y->sym, "Widget");
            assert_string_equal(y->kind, "struct");
            assert_string_equal(y->parent, "a");
            assert_string_equal(y->parent_kind, "package");
        } else {
            assert_int_equal(y->line, 5);
            assert_string_equal(y->sym, "Grow");
            assert_string_equal(y->kind, "func");
            assert_string_equal(y->parent, "a.Widget");
            assert_string_equal(y->parent_kind, "struct");
        }
    }
    assert_int_equal(c->n_symbols, 1);
    assert_int_equal(c->symbols[0].line, 2);
    assert_string_equal(c->symbols[0].sym, "add_points");
    assert_string_equal(c->symbols[0].kind, "function");
    assert_string_equal(c->symbols[0].parent, "");
    zr_search_free(&s);
}

static void test_name_match_and_empty(void **state)
{
    struct zr_search s;

    (void)state;
    parse_search_fixture("15_file_only_query.response.json", -1, &s);
    assert_int_equal(s.n_files, 2);
    assert_true(s.files[0].name_match);
    assert_int_equal(s.files[0].n_lines, 0);
    zr_search_free(&s);
    parse_search_fixture("06_no_results.response.json", -1, &s);
    assert_int_equal(s.n_files, 0);
    assert_null(s.files);
    zr_search_free(&s);
    parse_search_fixture("upstream_search_empty.json", -1, &s);
    assert_int_equal(s.n_files, 0);
    zr_search_free(&s);
    /* /healthz: a match-all search, whose one file matched by its name. */
    parse_search_fixture("upstream_healthz.json", -1, &s);
    assert_int_equal(s.n_files, 1);
    assert_true(s.files[0].name_match);
    assert_int_equal(s.files[0].n_lines, 0);
    zr_search_free(&s);
}

static void test_list(void **state)
{
    struct zr_opts o = {"github.com/", -1, 0};
    struct zk_err err = {0};
    struct zr_list l;
    size_t len;
    char *body;
    char when[32];

    (void)state;
    body = fixture_read("tests/fixtures/zoekt", "07_list_all.response.json", &len);
    assert_int_equal(zr_parse_list(body, len, NULL, &l, &err), ZK_OK);
    assert_int_equal(l.n_repos, 3);
    assert_string_equal(l.repos[0].name, "alpha");
    assert_string_equal(l.repos[2].name, "gamma");
    assert_int_equal(l.shards, 3);
    rfc3339_format(l.repos[0].index_time, when, sizeof(when));
    assert_string_equal(when, "2026-11-30T00:05:35Z");
    assert_string_equal(l.repos[1].branches[0].version, "855231077eadf76b40f0b757769d655e314c8dd4");
    assert_string_equal(l.repos[0].zoekt_version, "c4d8f3537f7a");
    zr_list_free(&l);
    free(body);

    body = fixture_read("tests/fixtures/zoekt", "upstream_list_repos.json", &len);
    assert_int_equal(zr_parse_list(body, len, &o, &l, &err), ZK_OK);
    assert_string_equal(l.repos[0].name, "sourcegraph/zoekt");
    assert_string_equal(l.repos[0].latest_commit, "2026-08-07T14:42:53+02:00");
    rfc3339_format(l.repos[0].index_time, when, sizeof(when));
    assert_string_equal(when, "2026-08-07T12:30:05Z");
    zr_list_free(&l);
    free(body);

    body = fixture_read("tests/fixtures/zoekt", "upstream_list_reposmap.json", &len);
    assert_int_equal(zr_parse_list(body, len, NULL, &l, &err), ZK_OK);
    assert_int_equal(l.n_repos, 1);
    assert_string_equal(l.repos[0].name, "#1234");
    assert_int_equal(l.repos[0].index_time, 1786105805);
    assert_int_equal(l.shards, 1);
    zr_list_free(&l);
    free(body);
}

static void test_malformed(void **state)
{
    static const struct {
        const char *body;
        int rc;
        const char *msg_part;
    } cases[] = {
        {"<html>502 Bad Gateway</html>", ZK_EPARSE, "not valid JSON"},
        {"", ZK_EPARSE, "not valid JSON"},
        {"[1,2]", ZK_EPARSE, "no \"Result\""},
        {"{\"Result\":{\"Files\":5}}", ZK_EPARSE, "neither an array nor null"},
        {"{\"Result\":{\"Files\":[5]}}", ZK_EPARSE, "not an object"},
        {"{\"Result\":{\"FileCount\":\"x\",\"Files\":[{\"FileName\":7,\"LineMatches\":[{\"Line\":3,"
         "\"LineNumber\":\"2\"}],\"ChunkMatches\":{}}]}}",
         ZK_OK, NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zk_err err = {0};
        struct zr_search s;
        int rc = zr_parse_search(cases[i].body, strlen(cases[i].body), NULL, &s, &err);

        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d (%s)", i, rc, err.msg);
        if (cases[i].msg_part && !strstr(err.msg, cases[i].msg_part))
            fail_msg("case %zu: message %s", i, err.msg);
        zr_search_free(&s);
    }
}

static void test_truncated_fixture(void **state)
{
    struct zk_err err = {0};
    struct zr_search s;
    struct zr_list l;
    size_t len;
    char *body = fixture_read("tests/fixtures/zoekt", "04_context2_chunks_true.response.json", &len);

    (void)state;
    for (size_t cut = 0; cut < len; cut += len / 13 + 1) {
        assert_int_equal(zr_parse_search(body, cut, NULL, &s, &err), ZK_EPARSE);
        zr_search_free(&s);
    }
    free(body);
    body = fixture_read("tests/fixtures/zoekt", "07_list_all.response.json", &len);
    assert_int_equal(zr_parse_list(body, len / 2, NULL, &l, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    zr_list_free(&l);
    free(body);
}

static void test_bad_base64_is_flagged(void **state)
{
    static const char body[] =
        "{\"Result\":{\"FileCount\":1,\"Files\":[{\"FileName\":\"a.c\",\"Repository\":\"r\",\"LineMatches\":"
        "[{\"Line\":\"!!!not base64\",\"LineNumber\":4,\"Before\":\"bm9wZQ\",\"After\":null,"
        "\"LineFragments\":[]}]},{\"FileName\":\"b.c\",\"Repository\":\"r\",\"ChunkMatches\":"
        "[{\"Content\":\"%%%%\",\"ContentStart\":{\"LineNumber\":9},\"Ranges\":[{\"Start\":{\"LineNumber\":9},"
        "\"End\":{\"LineNumber\":9,\"Column\":4}}]}]}]}}";
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zr_parse_search(body, strlen(body), NULL, &s, &err), ZK_OK);
    assert_int_equal(s.n_files, 2);
    assert_true(s.files[0].undecodable);
    assert_int_equal(s.files[0].n_lines, 1);
    assert_true(s.files[0].lines[0].undecodable);
    assert_string_equal(s.files[0].lines[0].text, "");
    assert_true(s.files[1].undecodable);
    assert_int_equal(s.files[1].lines[0].number, 9);
    assert_true(s.files[1].lines[0].is_match);
    zr_search_free(&s);
}

static void test_names_are_sanitised(void **state)
{
    static const char body[] = "{\"Result\":{\"Files\":[{\"FileName\":\"evil\\nname.c\",\"Repository\":\"r\\u0007\","
                               "\"Branches\":[\"ma\\tin\",\"x\\r\\ny\"]}]}}";
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zr_parse_search(body, strlen(body), NULL, &s, &err), ZK_OK);
    assert_string_equal(s.files[0].path, "evil\xef\xbf\xbdname.c");
    assert_string_equal(s.files[0].repo, "r\xef\xbf\xbd");
    assert_string_equal(s.files[0].branches[0], "ma\tin");
    assert_string_equal(s.files[0].branches[1], "x\xef\xbf\xbd\xef\xbf\xbdy");
    zr_search_free(&s);
}

static void test_base64_and_sanitize(void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } ok[] = {{"", ""}, {"YQ==", "a"}, {"YWI=", "ab"}, {"YWJj", "abc"}, {"aGVsbG8gd29ybGQ=", "hello world"}};
    static const char *const bad[] = {"YQ=", "Y===", "YQ==YQ==", "a b=", "YW*j"};
    unsigned char *d;
    size_t n;
    char *s;

    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        d = zr_base64_decode(ok[i].in, strlen(ok[i].in), &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(ok[i].out));
        assert_memory_equal(d, ok[i].out, n);
        free(d);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_null(zr_base64_decode(bad[i], strlen(bad[i]), &n));

    s = zr_sanitize((const unsigned char *)"ok\t\xc3\xa9\r", 6);
    assert_string_equal(s, "ok\t\xc3\xa9");
    free(s);
    s = zr_sanitize((const unsigned char *)"a\x01" "b\xff" "c\xc3", 6);
    assert_string_equal(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd");
    free(s);
    s = zr_sanitize((const unsigned char *)"\xed\xa0\x80", 3); /* an encoded surrogate */
    assert_string_equal(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(s);
}

static void error_text(const char *body, char *out, size_t n)
{
    zr_error_text(body, strlen(body), out, n);
}

/* Zoekt's error text goes into messages the agent reads: no control byte (an escape sequence, a line
 * break), no invalid UTF-8, and no more than the buffer, cut where a character ends. */
static void test_error_text_printable(void **state)
{
    static const char body[] = "{\"Error\":\"bad \\u001b[31mred\\nline\\u0007 caf\xc3\xa9 \xff\xc3 \\u00e9t\xc3\xa9\"}";
    char out[64];

    (void)state;
    zr_error_text(body, sizeof(body) - 1, out, sizeof(out));
    assert_string_equal(out, "bad \xef\xbf\xbd[31mred\xef\xbf\xbdline\xef\xbf\xbd caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd "
                             "\xc3\xa9t\xc3\xa9");
    /* "caf\xc3\xa9" cut at 5 bytes (4 and the terminator): the "\xc3" alone is not written. */
    error_text("{\"Error\":\"caf\xc3\xa9\"}", out, 5);
    assert_string_equal(out, "caf");
    error_text("{\"Error\":\"caf\xc3\xa9\"}", out, 6);
    assert_string_equal(out, "caf\xc3\xa9");
    /* A replacement character that does not fit whole is left out too. */
    error_text("{\"Error\":\"ab\\n\"}", out, 5);
    assert_string_equal(out, "ab");
    error_text("{\"Error\":\"x\"}", out, 1);
    assert_string_equal(out, "");
    out[0] = 'x';
    error_text("{\"Error\":\"x\"}", out, 0);
    assert_int_equal(out[0], 'x');
}

static void test_time_and_prefix(void **state)
{
    time_t t;
    char buf[32];

    (void)state;
    assert_true(rfc3339_parse("2026-11-30T00:05:35.52975705Z", &t));
    rfc3339_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-30T00:05:35Z");
    assert_true(rfc3339_parse("2026-08-07T14:42:53+02:00", &t));
    rfc3339_format(t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-08-07T12:42:53Z");
    assert_false(rfc3339_parse("2026-08-07", &t));
    assert_false(rfc3339_parse("2026-08-07T14:42:53", &t));
    assert_false(rfc3339_parse("2026-08-07T14:42:53Zjunk", &t));
    assert_string_equal(zr_strip_prefix("github.com/a/b", "github.com/"), "a/b");
    assert_string_equal(zr_strip_prefix("github.com/", "github.com/"), "github.com/");
    assert_string_equal(zr_strip_prefix("gitlab.com/a", "github.com/"), "gitlab.com/a");
    assert_string_equal(zr_strip_prefix("x", NULL), "x");
}

/* With a cap on decoded matching lines, the parser decodes only the first matches in Zoekt's order and
 * counts the rest, so the count (and "+N more" after it) stays exact while the work shrinks. */
static void test_match_line_cap(void **state)
{
    /* Four chunks of one line each ("needle N", base64), matching lines 10, 20, 30 and 40 of a.c, and
     * the same as LineMatches. */
    static const char chunks[] =
        "{\"Result\":{\"FileCount\":1,\"MatchCount\":4,\"Files\":[{\"FileName\":\"a.c\",\"Repository\":\"r\","
        "\"ChunkMatches\":["
        "{\"Content\":\"bmVlZGxlIDE=\",\"ContentStart\":{\"LineNumber\":10},\"Ranges\":[{\"Start\":{\"LineNumber\":10,"
        "\"Column\":1},\"End\":{\"LineNumber\":10,\"Column\":7}}]},"
        "{\"Content\":\"bmVlZGxlIDI=\",\"ContentStart\":{\"LineNumber\":20},\"Ranges\":[{\"Start\":{\"LineNumber\":20,"
        "\"Column\":1},\"End\":{\"LineNumber\":20,\"Column\":7}}]},"
        "{\"Content\":\"bmVlZGxlIDM=\",\"ContentStart\":{\"LineNumber\":30},\"Ranges\":[{\"Start\":{\"LineNumber\":30,"
        "\"Column\":1},\"End\":{\"LineNumber\":30,\"Column\":7}},{\"Start\":{\"LineNumber\":30,\"Column\":9},"
        "\"End\":{\"LineNumber\":30,\"Column\":10}}]},"
        "{\"Content\":\"bmVlZGxlIDQ=\",\"ContentStart\":{\"LineNumber\":40},\"Ranges\":[{\"Start\":{\"LineNumber\":40,"
        "\"Column\":1},\"End\":{\"LineNumber\":40,\"Column\":7}}]}]}]}}";
    static const char lines[] =
        "{\"Result\":{\"Files\":[{\"FileName\":\"a.c\",\"Repository\":\"r\",\"LineMatches\":["
        "{\"Line\":\"bmVlZGxlIDE=\",\"LineNumber\":10},{\"Line\":\"bmVlZGxlIDI=\",\"LineNumber\":20},"
        "{\"Line\":\"bmVlZGxlIDM=\",\"LineNumber\":30}]}]}}";
    struct zr_opts capped = {NULL, 0, 2}, all = {NULL, 0, 0};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zr_parse_search(chunks, strlen(chunks), &capped, &s, &err), ZK_OK);
    assert_int_equal(s.files[0].n_lines, 2);
    assert_string_equal(s.files[0].lines[1].text, "needle 2");
    assert_int_equal(s.files[0].n_match_lines, 4);
    assert_int_equal(s.files[0].n_matches, 5);
    zr_search_free(&s);
    assert_int_equal(zr_parse_search(chunks, strlen(chunks), &all, &s, &err), ZK_OK);
    assert_int_equal(s.files[0].n_lines, 4);
    assert_int_equal(s.files[0].n_match_lines, 4);
    zr_search_free(&s);
    assert_int_equal(zr_parse_search(lines, strlen(lines), &capped, &s, &err), ZK_OK);
    assert_int_equal(s.files[0].n_lines, 2);
    assert_int_equal(s.files[0].n_match_lines, 3);
    zr_search_free(&s);
}

/* Where a matching line's first match lies, in bytes of its sanitised text: from a chunk's ranges (byte
 * offsets in the file, the chunk's lines starting at ContentStart's), a range over two lines covering
 * the second from its start, and from a LineMatch's first fragment. Offsets that are missing or do not
 * fall on the line leave the position unknown (0, 0). */
static void test_match_positions(void **state)
{
    /* "ab\nx\xffyneedle z\nc" from byte 100: "needle" at 106..112 (line 2, after an invalid byte that
     * becomes U+FFFD), "z\nc" at 113..116 (lines 2 and 3). Then "needle 1" without offsets and
     * "needle 2" with a range before its line. */
    static const char chunks[] =
        "{\"Result\":{\"Files\":[{\"FileName\":\"a.c\",\"Repository\":\"r\",\"ChunkMatches\":["
        "{\"Content\":\"YWIKeP95bmVlZGxlIHoKYw==\",\"ContentStart\":{\"ByteOffset\":100,\"LineNumber\":1},"
        "\"Ranges\":[{\"Start\":{\"ByteOffset\":106,\"LineNumber\":2,\"Column\":4},\"End\":{\"ByteOffset\":112,"
        "\"LineNumber\":2,\"Column\":10}},{\"Start\":{\"ByteOffset\":113,\"LineNumber\":2,\"Column\":11},"
        "\"End\":{\"ByteOffset\":116,\"LineNumber\":3,\"Column\":2}}]},"
        "{\"Content\":\"bmVlZGxlIDE=\",\"ContentStart\":{\"LineNumber\":10},\"Ranges\":[{\"Start\":{\"LineNumber\":10,"
        "\"Column\":1},\"End\":{\"LineNumber\":10,\"Column\":7}}]},"
        "{\"Content\":\"bmVlZGxlIDI=\",\"ContentStart\":{\"ByteOffset\":500,\"LineNumber\":20},\"Ranges\":[{\"Start\":"
        "{\"ByteOffset\":400,\"LineNumber\":20},\"End\":{\"ByteOffset\":406,\"LineNumber\":20}}]}]}]}}";
    /* "  foo needle", fragments at 6 and 2 (the first in the line wins), then one past the line. */
    static const char lines[] =
        "{\"Result\":{\"Files\":[{\"FileName\":\"a.c\",\"Repository\":\"r\",\"LineMatches\":["
        "{\"Line\":\"ICBmb28gbmVlZGxl\",\"LineNumber\":4,\"LineFragments\":[{\"LineOffset\":6,\"MatchLength\":6},"
        "{\"LineOffset\":2,\"MatchLength\":3}]},"
        "{\"Line\":\"ICBmb28gbmVlZGxl\",\"LineNumber\":9,\"LineFragments\":[{\"LineOffset\":60,\"MatchLength\":6}]}]}]}}";
    struct zk_err err = {0};
    struct zr_search s;
    const struct zr_line *l;

    (void)state;
    assert_int_equal(zr_parse_search(chunks, strlen(chunks), NULL, &s, &err), ZK_OK);
    l = s.files[0].lines;
    assert_int_equal(s.files[0].n_lines, 5);
    assert_false(l[0].is_match);
    assert_int_equal(l[0].match_end, 0);
    assert_string_equal(l[1].text, "x\xef\xbf\xbdyneedle z");
    assert_int_equal(l[1].match_start, 5);
    assert_int_equal(l[1].match_end, 11);
    assert_string_equal(l[2].text, "c");
    assert_int_equal(l[2].match_start, 0);
    assert_int_equal(l[2].match_end, 1);
    assert_int_equal(l[3].number, 10);
    assert_int_equal(l[3].match_end, 0);
    assert_int_equal(l[4].number, 20);
    assert_true(l[4].is_match);
    assert_int_equal(l[4].match_end, 0);
    zr_search_free(&s);
    assert_parsers_agree("match positions, chunks", chunks, strlen(chunks));

    assert_int_equal(zr_parse_search(lines, strlen(lines), NULL, &s, &err), ZK_OK);
    l = s.files[0].lines;
    assert_int_equal(l[0].match_start, 2);
    assert_int_equal(l[0].match_end, 5);
    assert_int_equal(l[1].match_end, 0);
    zr_search_free(&s);
    assert_parsers_agree("match positions, lines", lines, strlen(lines));
}

/* Pages of a ranked list need one order: files of equal score, which Zoekt sends in whatever order its
 * shards finished, are put by repository and path; and a cut is trusted only where it cannot have
 * chosen among files of equal score. */
static void test_rank(void **state)
{
    struct zr_file files[4] = {
        {.repo = (char *)"b", .path = (char *)"x", .score = 5},
        {.repo = (char *)"a", .path = (char *)"y", .score = 5},
        {.repo = (char *)"c", .path = (char *)"z", .score = 9},
        {.repo = (char *)"a", .path = (char *)"x", .score = 1},
    };
    struct zr_search s = {.files = files, .n_files = 4, .chunk_matches = 1};

    (void)state;
    zr_rank(&s);
    assert_string_equal(files[0].repo, "c");
    assert_string_equal(files[1].repo, "a");
    assert_string_equal(files[1].path, "y");
    assert_string_equal(files[2].repo, "b");
    assert_true(files[3].score == 1);
    /* Fewer files than asked: Zoekt had no more, any cut is the true one. */
    assert_true(zr_rank_is_prefix(&s, 2, 5));
    /* Four asked and sent: the second file (score 5) scores above the last sent (1): nothing of score
     * 5 can have been left out. */
    assert_true(zr_rank_is_prefix(&s, 2, 4));
    assert_true(zr_rank_is_prefix(&s, 3, 4));
    /* Three asked (the last sent scores 5): a fourth of score 5 may have been cut instead of one sent. */
    s.n_files = 3;
    assert_false(zr_rank_is_prefix(&s, 2, 3));
    assert_true(zr_rank_is_prefix(&s, 1, 3));
    assert_true(zr_rank_is_prefix(&s, 0, 3));
}

/* A path whose contents differ between branches comes as one file per content, with the same score
 * when the match is the same: the first branch orders them, so that pages cut them the same way on
 * every request. */
static void test_rank_branches(void **state)
{
    char *main_branch[] = {(char *)"main"}, *dev[] = {(char *)"dev", (char *)"release"};
    struct zr_file files[3] = {
        {.repo = (char *)"a", .path = (char *)"x", .branches = main_branch, .n_branches = 1, .score = 5},
        {.repo = (char *)"a", .path = (char *)"x", .branches = dev, .n_branches = 2, .score = 5},
        {.repo = (char *)"a", .path = (char *)"x", .score = 5},
    };
    struct zr_search s = {.files = files, .n_files = 3, .chunk_matches = 1};

    (void)state;
    zr_rank(&s);
    assert_string_equal(zr_file_branch(&files[0]), "");
    assert_string_equal(zr_file_branch(&files[1]), "dev");
    assert_string_equal(zr_file_branch(&files[2]), "main");
}

/* A repository's code host templates come with the list; zr_list_find finds a repository by name. */
static void test_list_templates(void **state)
{
    static const char body[] =
        "{\"List\":{\"Repos\":["
        "{\"Repository\":{\"Name\":\"mirrors/acme/b\",\"FileURLTemplate\":\"{{URLJoinPath \\\"https://github.com/acme/b\\\" "
        "\\\"blob\\\" .Version .Path}}\",\"LineFragmentTemplate\":\"#L{{.LineNumber}}\"}},"
        "{\"Repository\":{\"Name\":\"mirrors/acme/a\",\"FileURLTemplate\":\"\"}}],\"Stats\":{}}}";
    struct zr_opts o = {"mirrors/", -1, 0};
    struct zr_list l;
    struct zk_err err = {0};
    const struct zr_repo *r;

    (void)state;
    assert_int_equal(zr_parse_list(body, strlen(body), &o, &l, &err), ZK_OK);
    r = zr_list_find(&l, "acme/b");
    assert_non_null(r);
    assert_string_equal(r->file_url_template, "{{URLJoinPath \"https://github.com/acme/b\" \"blob\" .Version .Path}}");
    assert_string_equal(r->line_fragment_template, "#L{{.LineNumber}}");
    r = zr_list_find(&l, "acme/a");
    assert_non_null(r);
    assert_null(r->file_url_template);
    assert_null(r->line_fragment_template);
    assert_null(zr_list_find(&l, "acme/c"));
    zr_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),        cmocka_unit_test(test_generations_agree),
        cmocka_unit_test(test_line_details),         cmocka_unit_test(test_upstream_generations),
        cmocka_unit_test(test_name_match_and_empty), cmocka_unit_test(test_list),
        cmocka_unit_test(test_malformed),            cmocka_unit_test(test_truncated_fixture),
        cmocka_unit_test(test_bad_base64_is_flagged), cmocka_unit_test(test_base64_and_sanitize),
        cmocka_unit_test(test_names_are_sanitised),  cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_time_and_prefix),      cmocka_unit_test(test_match_line_cap),
        cmocka_unit_test(test_match_positions),      cmocka_unit_test(test_error_text_printable),
        cmocka_unit_test(test_rank),                 cmocka_unit_test(test_rank_branches),
        cmocka_unit_test(test_list_templates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
