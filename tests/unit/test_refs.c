/* Unit tests for find_references (connector/tools/refs.c) against a fake Zoekt that answers
 * /api/search and /api/list from a small corpus of its own (tests/support/fakeapi.h), and for the key
 * positions of its cursors (connector/tools/cursor.c): ctags' definitions where a repository has symbol
 * data and keyword guesses elsewhere, or everywhere when the sym: search fails; pages that show every
 * file once; a cursor refused with other arguments before anything is searched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "connector/format/text.h"
#include "connector/tools/cursor.h"
#include "connector/tools/tools.h"
#include "http.h"
#include "tests/support/fakeapi.h"

#define VERSION "0123456789abcdef0123456789abcdef01234567"

/* One matching line of the corpus; sym: ctags found the definition of Widget on it. */
struct corpus_line {
    int number;
    const char *text;
    int sym;
};

struct corpus_file {
    const char *repo;
    const char *path;
    struct corpus_line lines[2];
    size_t n_lines;
    const char *branch;
};

/* A path long enough that its key does not fit a cursor: the page after it goes by a hash. */
static char long_path[640];

/* acme/tagged is indexed with ctags, acme/plain without: ctags found Widget on line 3 of a.c (a C
 * function, which the keywords miss) and not on line 5 of b.go (which looks like one). c.go differs on
 * branch dev, so it comes twice. Zoekt ranks, so the files come out of order. */
static const struct corpus_file corpus[] = {
    {"acme/tagged", "c.go", {{2, "\tWidget()", 0}}, 1, "HEAD"},
    {"acme/plain", "g.go", {{1, "var w = Widget()", 0}}, 1, "HEAD"},
    {"acme/tagged", "a.c", {{3, "int Widget(void) { return 0; }", 1}, {9, "\treturn Widget();", 0}}, 2, "HEAD"},
    {"acme/plain", "d.go", {{4, "func Widget() {}", 0}}, 1, "HEAD"},
    {"acme/plain", long_path, {{1, "Widget()", 0}}, 1, "HEAD"},
    {"acme/tagged", "b.go", {{5, "func Widget() {}", 0}}, 1, "HEAD"},
    {"acme/plain", "e.go", {{7, "// Widget does it", 0}}, 1, "HEAD"},
    {"acme/plain", "f.go", {{8, "\tWidget := 2", 0}}, 1, "HEAD"},
    {"acme/tagged", "c.go", {{4, "\tWidget(1)", 0}}, 1, "dev"},
    {"acme/tagged", "z.go", {{6, "return Widget{}", 0}}, 1, "HEAD"},
};
#define CORPUS_N (sizeof(corpus) / sizeof(corpus[0]))

/* What the fake Zoekt does: whether acme/plain has symbol data too, and whether sym: searches fail. */
struct fake {
    struct fakeapi *api;
    int plain_symbols;
    int sym_fails;
};

static struct fake fake;

static void base64(const char *in, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in), i = 0;
    const unsigned char *p = (const unsigned char *)in;

    for (; i + 2 < n; i += 3) {
        *out++ = abc[p[i] >> 2];
        *out++ = abc[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
        *out++ = abc[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
        *out++ = abc[p[i + 2] & 63];
    }
    if (i < n) {
        *out++ = abc[p[i] >> 2];
        *out++ = abc[((p[i] & 3) << 4) | (i + 1 < n ? p[i + 1] >> 4 : 0)];
        *out++ = i + 1 < n ? abc[(p[i + 1] & 15) << 2] : '=';
        *out++ = '=';
    }
    *out = '\0';
}

/* The fake's answers are built on its server thread, where a cmocka assertion cannot stop the test:
 * they return a buffer's code, and the handler answers a failure with 500. */

/* One chunk of one line, its match at the first "Widget", with the SymbolInfo of a sym: answer. */
static int chunk_json(struct buf *b, const struct corpus_line *l, int sym)
{
    char text[256], content[400];
    size_t at = (size_t)(strstr(l->text, "Widget") - l->text);

    snprintf(text, sizeof(text), "%s\n", l->text);
    base64(text, content);
    return buf_printf(b, "{\"Content\":\"%s\",\"ContentStart\":{\"ByteOffset\":0,\"LineNumber\":%d,\"Column\":1},"
                         "\"Ranges\":[{\"Start\":{\"ByteOffset\":%zu,\"LineNumber\":%d,\"Column\":%zu},"
                         "\"End\":{\"ByteOffset\":%zu,\"LineNumber\":%d,\"Column\":%zu}}],\"FileName\":false%s}",
                      content, l->number, at, l->number, at + 1, at + 6, l->number, at + 7,
                      sym ? ",\"SymbolInfo\":[{\"Sym\":\"Widget\",\"Kind\":\"function\",\"Parent\":\"\","
                            "\"ParentKind\":\"\"}]"
                          : "");
}

/* The answer to a search: the references, or (sym) the lines where ctags found Widget; of acme/plain
 * alone when the query names it (the fake knows no other filter). */
static int search_json(struct buf *b, int sym, int plain_only)
{
    size_t files = 0;
    int rc = buf_puts(b, "{\"Result\":{\"Files\":[");

    for (size_t i = 0; !rc && i < CORPUS_N; i++) {
        const struct corpus_file *f = &corpus[i];

        if ((sym && !f->lines[0].sym && !f->lines[1].sym) || (plain_only && strcmp(f->repo, "acme/plain") != 0))
            continue;
        rc = buf_printf(b, "%s{\"FileName\":\"%s\",\"Repository\":\"%s\",\"Version\":\"" VERSION "\","
                           "\"Language\":\"Go\",\"Branches\":[\"%s\"],\"ChunkMatches\":[",
                        files++ ? "," : "", f->path, f->repo, f->branch);
        for (size_t k = 0, chunks = 0; !rc && k < f->n_lines; k++)
            if (!sym || f->lines[k].sym)
                rc = (chunks++ ? buf_putc(b, ',') : ZK_OK) || chunk_json(b, &f->lines[k], sym);
        if (!rc)
            rc = buf_puts(b, "]}");
    }
    return rc ? rc : buf_printf(b, "],\"FileCount\":%zu,\"MatchCount\":%zu}}", files, files);
}

/* The repository list: acme/tagged has symbol data, acme/plain has it when plain_symbols says so. */
static int list_json(struct buf *b, int plain_symbols)
{
    static const char entry[] = "{\"Repository\":{\"Name\":\"%s\",\"Branches\":[{\"Name\":\"HEAD\","
                                "\"Version\":\"" VERSION "\"}],\"HasSymbols\":%s},\"IndexMetadata\":{\"IndexTime\":"
                                "\"2026-11-30T00:05:35Z\"},\"Stats\":{\"Shards\":1}}";
    int rc = buf_puts(b, "{\"List\":{\"Repos\":[");

    if (!rc)
        rc = buf_printf(b, entry, "acme/plain", plain_symbols ? "true" : "false");
    if (!rc)
        rc = buf_putc(b, ',');
    if (!rc)
        rc = buf_printf(b, entry, "acme/tagged", "true");
    return rc ? rc : buf_puts(b, "]}}");
}

static int fake_handler(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    const struct fake *f = ud;
    cJSON *body = cJSON_Parse(rq->body);
    const cJSON *q = cJSON_GetObjectItem(body, "Q");
    int sym = cJSON_IsString(q) && strstr(q->valuestring, "sym:") != NULL, status = 200, rc;
    struct buf b;

    buf_init(&b, len - 1);
    if (strcmp(rq->path, "/api/list") == 0)
        rc = list_json(&b, f->plain_symbols);
    else if (sym && f->sym_fails)
        rc = buf_puts(&b, "{\"Error\":\"a shard crashed\"}"), status = 500;
    else
        rc = search_json(&b, sym, cJSON_IsString(q) && strstr(q->valuestring, "acme/plain") != NULL);
    if (rc)
        snprintf(out, len, "{\"Error\":\"the fake's answer does not fit\"}"), status = 500;
    else
        memcpy(out, b.data, b.len + 1);
    buf_free(&b);
    cJSON_Delete(body);
    return status;
}

static int setup(void **state)
{
    (void)state;
    memcpy(long_path, "deep/", 5);
    memset(long_path + 5, 'x', sizeof(long_path) - 9);
    memcpy(long_path + sizeof(long_path) - 4, ".go", 4);
    if (http_global_init() != ZK_OK)
        return -1;
    fake.api = fakeapi_start(fake_handler, &fake);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fakeapi_stop(fake.api);
    http_global_cleanup();
    return 0;
}

static struct connector_config fake_cfg(void)
{
    struct connector_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.zoekt_url = fakeapi_url(fake.api);
    cfg.max_files = 10;
    cfg.search_timeout_ms = 5000;
    cfg.list_timeout_ms = 5000;
    cfg.output_budget = CONNECTOR_OUTPUT_BUDGET_DEFAULT;
    return cfg;
}

/* Calls find_references with args (JSON text) against the fake. */
static void call(const char *args_json, struct tool_result *r)
{
    struct connector_config cfg = fake_cfg();
    struct tool_ctx ctx = {&cfg, NULL};
    struct zk_err err = {0};
    cJSON *args = cJSON_Parse(args_json);

    assert_non_null(args);
    tool_result_init(r);
    if (tools_call(&ctx, "find_references", args, r, &err) != ZK_OK)
        fail_msg("find_references %s: %s", args_json, err.msg);
    cJSON_Delete(args);
}

/* The definitionSource of the file repo/path in r's structured content. */
static const char *source_of(const struct tool_result *r, const char *repo, const char *path)
{
    const cJSON *f;

    cJSON_ArrayForEach(f, cJSON_GetObjectItem(r->structured, "files")) {
        if (strcmp(cJSON_GetObjectItem(f, "repository")->valuestring, repo) == 0 &&
            strcmp(cJSON_GetObjectItem(f, "path")->valuestring, path) == 0)
            return cJSON_GetObjectItem(f, "definitionSource")->valuestring;
    }
    fail_msg("%s/%s is not in the answer", repo, path);
    return NULL;
}

/* In acme/tagged, D is what ctags found: the C function the keywords miss is one, the Go line that looks
 * like one is not; in acme/plain, without symbol data, the keywords decide. The sym: search has the
 * exact name, case-sensitive. */
static void test_ctags_definitions(void **state)
{
    struct tool_result r;
    char *sym;

    (void)state;
    fake.plain_symbols = 0;
    fake.sym_fails = 0;
    call("{\"symbol\":\"Widget\"}", &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "Widget is used on 11 lines in 10 files of 2 repositories (text search: whole "
                                        "word, case-sensitive; D: ctags definitions (1 repository), keyword guesses "
                                        "elsewhere).\n  acme/plain: 5 lines in 5 files\n  acme/tagged: 6 lines in 5 "
                                        "files\n"));
    assert_non_null(strstr(r.text.data, "\nacme/tagged/a.c @01234567\nD 3: int Widget(void) { return 0; }\n"
                                        "> 9: \treturn Widget();\n"));
    assert_non_null(strstr(r.text.data, "\nacme/tagged/b.go @01234567\n> 5: func Widget() {}\n"));
    assert_non_null(strstr(r.text.data, "\nacme/plain/d.go @01234567\nD 4: func Widget() {}\n"));
    assert_non_null(strstr(r.text.data, "\nacme/plain/f.go @01234567\nD 8: \tWidget := 2\n"));
    assert_null(strstr(r.text.data, "Note:"));
    assert_string_equal(source_of(&r, "acme/tagged", "a.c"), "ctags");
    assert_string_equal(source_of(&r, "acme/plain", "d.go"), "keywords");
    sym = fakeapi_last_body(fake.api, "POST", "/api/search");
    assert_non_null(strstr(sym, "\"Q\":\"sym:^Widget$ case:yes\""));
    free(sym);
    tool_result_free(&r);

    /* Both with symbol data: ctags alone decides, and f.go's short declaration is a use. */
    fake.plain_symbols = 1;
    call("{\"symbol\":\"Widget\"}", &r);
    assert_non_null(strstr(r.text.data, "case-sensitive; D: ctags definitions).\n"));
    assert_non_null(strstr(r.text.data, "\nacme/plain/f.go @01234567\n> 8: \tWidget := 2\n"));
    assert_string_equal(source_of(&r, "acme/plain", "d.go"), "ctags");
    tool_result_free(&r);
}

/* A sym: search that fails leaves the references standing, with keyword guesses and a note; where no
 * repository has symbol data, no sym: search is sent. */
static void test_ctags_unavailable(void **state)
{
    struct tool_result r;
    int before;

    (void)state;
    fake.plain_symbols = 0;
    fake.sym_fails = 1;
    call("{\"symbol\":\"Widget\"}", &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "case-sensitive; D: keyword guesses at definitions).\n"));
    assert_non_null(strstr(r.text.data, "\nNote: The ctags definitions could not be read ("));
    assert_non_null(strstr(r.text.data, "a shard crashed"));
    assert_non_null(strstr(r.text.data, "), so D marks keyword guesses.\n"));
    assert_non_null(strstr(r.text.data, "\nacme/tagged/a.c @01234567\n> 3: int Widget(void) { return 0; }\n"));
    assert_non_null(strstr(r.text.data, "\nacme/tagged/b.go @01234567\nD 5: func Widget() {}\n"));
    assert_string_equal(source_of(&r, "acme/tagged", "a.c"), "keywords");
    tool_result_free(&r);
    fake.sym_fails = 0;

    /* Only acme/plain answers: it has no symbol data, so one search is all. */
    before = fakeapi_count(fake.api, "POST", "/api/search");
    call("{\"symbol\":\"Widget\",\"repo\":\"acme/plain\"}", &r);
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_int_equal(fakeapi_count(fake.api, "POST", "/api/search"), before + 1);
}

/* Pages go through the ten files once each (each named by its first line), in the order of repository,
 * path and branch: after the file whose key is too long for a cursor, and after the second of a path's
 * two branches (max_files may change from page to page); every page counts them all. */
static void test_pages_show_each_file_once(void **state)
{
    static const char *const want[] = {"acme/plain/d.go:4", NULL, "acme/plain/e.go:7", "acme/plain/f.go:8",
                                       "acme/plain/g.go:1", "acme/tagged/a.c:3", "acme/tagged/b.go:5",
                                       "acme/tagged/c.go:2", "acme/tagged/c.go:4", "acme/tagged/z.go:6"};
    static const int page_files[] = {2, 7, 2};
    char args[FMT_CURSOR_MAX + 128], seen[CORPUS_N][sizeof(long_path) + 16], *cursor = NULL;
    size_t n_seen = 0, pages = 0, long_cursors = 0;

    (void)state;
    fake.plain_symbols = 0;
    fake.sym_fails = 0;
    do {
        struct tool_result r;
        const cJSON *f, *next;

        snprintf(args, sizeof(args), "{\"symbol\":\"Widget\",\"max_files\":%d%s%s%s}", page_files[pages],
                 cursor ? ",\"cursor\":\"" : "", cursor ? cursor : "", cursor ? "\"" : "");
        free(cursor);
        cursor = NULL;
        call(args, &r);
        assert_false(r.is_error);
        pages++;
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.structured, "repositories")), 2);
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(r.structured, "files")) {
            assert_true(n_seen < CORPUS_N);
            snprintf(seen[n_seen++], sizeof(seen[0]), "%s/%s:%d", cJSON_GetObjectItem(f, "repository")->valuestring,
                     cJSON_GetObjectItem(f, "path")->valuestring,
                     cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "matches"), 0), "line")->valueint);
        }
        next = cJSON_GetObjectItem(r.structured, "nextCursor");
        if (next) {
            assert_true(strlen(next->valuestring) <= FMT_CURSOR_MAX);
            assert_non_null(strstr(r.text.data, "\nNext page: the same arguments with \"cursor\":\""));
            long_cursors += strchr(next->valuestring, '#') != NULL;
            cursor = strdup(next->valuestring);
        }
        tool_result_free(&r);
    } while (cursor && pages < 3);
    assert_null(cursor);
    assert_int_equal(pages, 3);
    assert_int_equal(n_seen, CORPUS_N);
    assert_int_equal(long_cursors, 1);
    for (size_t i = 0; i < CORPUS_N; i++) {
        char path[sizeof(long_path) + 16];

        snprintf(path, sizeof(path), "acme/plain/%s:1", long_path);
        assert_string_equal(seen[i], want[i] ? want[i] : path);
    }
}

/* A cursor is of one query: with other arguments, from another tool or damaged, it is refused before
 * anything is searched. max_files may change from page to page. */
static void test_cursor_refused_with_other_arguments(void **state)
{
    char args[FMT_CURSOR_MAX + 128], *cursor;
    struct tool_result r;
    int before;

    (void)state;
    call("{\"symbol\":\"Widget\",\"max_files\":3}", &r);
    cursor = strdup(cJSON_GetObjectItem(r.structured, "nextCursor")->valuestring);
    tool_result_free(&r);

    before = fakeapi_count(fake.api, "POST", "/api/");
    snprintf(args, sizeof(args), "{\"symbol\":\"Widget\",\"repo\":\"acme/plain\",\"cursor\":\"%s\"}", cursor);
    call(args, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "argument \"cursor\" belongs to another query"));
    tool_result_free(&r);
    snprintf(args, sizeof(args), "{\"symbol\":\"Widgets\",\"cursor\":\"%s\"}", cursor);
    call(args, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "argument \"cursor\" belongs to another query"));
    tool_result_free(&r);
    call("{\"symbol\":\"Widget\",\"cursor\":\"s0123456789abcdef.10\"}", &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "argument \"cursor\" is not a cursor this tool returned"));
    tool_result_free(&r);
    snprintf(args, sizeof(args), "{\"symbol\":\"Widget\",\"cursor\":\"%.18s%%zz\"}", cursor);
    call(args, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "argument \"cursor\" is damaged"));
    tool_result_free(&r);
    assert_int_equal(fakeapi_count(fake.api, "POST", "/api/"), before);

    snprintf(args, sizeof(args), "{\"symbol\":\"Widget\",\"max_files\":1,\"cursor\":\"%s\"}", cursor);
    call(args, &r);
    assert_false(r.is_error);
    assert_int_equal(cJSON_GetObjectItem(r.structured, "skippedFiles")->valueint, 3);
    tool_result_free(&r);
    free(cursor);
}

/* Key positions: written as the key but for the bytes that would not copy into a JSON string or mark
 * a cut; a key too long for the cursor keeps a prefix cut between characters and the hash of the
 * whole; a page starts after the key, or after where it was when it is gone. */
static void test_key_positions(void **state)
{
    static const char *const keys[] = {"a", "b", "b2", "c"};
    char position[TCUR_POSITION_MAX + 1], long_key[801], other[801];
    const char *const cut_keys[] = {"a", long_key, other, "z"};
    struct tcur_key k;
    struct tool_result r;
    char *c;

    (void)state;
    tool_result_init(&r);
    c = tcur_make_key('r', 7, "a\x01" "b%\"\\#c\tx", 512);
    assert_string_equal(c, "r0000000000000007.a%01b%25%22%5C%23c%09x");
    assert_int_equal(tcur_read(c, 'r', 7, position, &r), ZK_OK);
    assert_int_equal(tcur_key_read(position, &k, &r), ZK_OK);
    assert_true(k.set && !k.cut);
    assert_string_equal(k.key, "a\x01" "b%\"\\#c\tx");
    free(c);

    assert_int_equal(tcur_key_read("", &k, &r), ZK_OK);
    assert_false(k.set);
    assert_int_equal(tcur_key_start(&k, keys, 4), 0);
    assert_int_equal(tcur_key_read("b", &k, &r), ZK_OK);
    assert_int_equal(tcur_key_start(&k, keys, 4), 2);
    assert_int_equal(tcur_key_read("b1", &k, &r), ZK_OK);
    assert_int_equal(tcur_key_start(&k, keys, 4), 2);
    assert_int_equal(tcur_key_read("c", &k, &r), ZK_OK);
    assert_int_equal(tcur_key_start(&k, keys, 4), 4);
    assert_int_equal(tcur_key_read("%00", &k, &r), ZK_EINVAL);
    assert_int_equal(tcur_key_read("a#12", &k, &r), ZK_EINVAL);

    /* 400 two-byte characters: the prefix ends between two, and the cursor fits its bound. */
    for (size_t i = 0; i < 400; i++)
        memcpy(long_key + 2 * i, "\xc3\xa9", 2);
    long_key[800] = '\0';
    memcpy(other, long_key, sizeof(other));
    other[799] = '\xaa';
    c = tcur_make_key('r', 7, long_key, 512);
    assert_true(strlen(c) <= 512);
    assert_int_equal(tcur_read(c, 'r', 7, position, &r), ZK_OK);
    assert_int_equal(tcur_key_read(position, &k, &r), ZK_OK);
    assert_true(k.cut);
    assert_int_equal(k.len % 2, 0);
    assert_true(k.hash == tcur_hash(TCUR_HASH_INIT, long_key));
    free(c);
    /* long_key and other share the prefix: the page goes on after long_key, and at the first of them
     * once long_key is gone (shown again rather than skipped). */
    assert_int_equal(tcur_key_start(&k, cut_keys, 4), 2);
    assert_int_equal(tcur_key_start(&k, (const char *const[]){"a", other, "z"}, 3), 1);
    tool_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctags_definitions),
        cmocka_unit_test(test_ctags_unavailable),
        cmocka_unit_test(test_pages_show_each_file_once),
        cmocka_unit_test(test_cursor_refused_with_other_arguments),
        cmocka_unit_test(test_key_positions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
