/* fuzz_format.c: what an agent finally reads. A Zoekt answer (untrusted, through
 * connector/zoekt/result.h) is formatted by connector/format/ into compact text and structuredContent.
 *
 * Input: byte 0 picks search (even) or repository list (odd); byte 1 the output budget (2048 plus up to
 * 255 * 64 bytes) and max_files (1..40) or the list's limit; the rest is the Zoekt body. Asserted, for
 * every body the result parser accepts:
 * - formatting succeeds; the text never exceeds the budget (search, list_files, find_references) and
 *   always fits the buffer;
 * - the text is valid UTF-8 whose only control characters are tab and newline, so it prints as is;
 * - structuredContent is an object that prints as JSON and parses back;
 * - fmt_put_cut writes at most its limit of bytes from s (then an ellipsis when cut) and keeps valid
 *   UTF-8 valid. */
#include "tests/fuzz/fuzz.h"

#include "buf.h"
#include "connector/format/files.h"
#include "connector/format/refs.h"
#include "connector/format/repos.h"
#include "connector/format/search.h"
#include "connector/format/symbols.h"
#include "connector/format/text.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/result.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* list_repositories' cursors as repos.c makes them. */
static char *fuzz_repos_cursor(const char *last, void *arg)
{
    (void)arg;
    return tcur_make_key('l', 0, last, FMT_CURSOR_MAX);
}

/* list_files' pages as files.c makes them, with cursors from names the answer holds. */
static struct tcur_files files_pages = {'f', 0};

/* The clock the ages are judged by: fixed, so that a crash replays. */
#define FUZZ_NOW 1800000000

/* Valid UTF-8 with no control characters but tab and newline. */
static int readable(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;

    while (p < end) {
        unsigned int cp;
        size_t need, i;

        if (*p < 0x80) {
            if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
                return 0;
            p++;
            continue;
        }
        if (*p >= 0xc2 && *p <= 0xdf)
            need = 1, cp = *p & 0x1fu;
        else if (*p >= 0xe0 && *p <= 0xef)
            need = 2, cp = *p & 0x0fu;
        else if (*p >= 0xf0 && *p <= 0xf4)
            need = 3, cp = *p & 0x07u;
        else
            return 0;
        if ((size_t)(end - p) <= need)
            return 0;
        for (i = 1; i <= need; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i] & 0x3fu);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += need + 1;
    }
    return 1;
}

static void check_structured(cJSON *st)
{
    char *printed;
    cJSON *back;

    FUZZ_CHECK(cJSON_IsObject(st));
    printed = json_print(st);
    FUZZ_CHECK(printed != NULL);
    back = cJSON_Parse(printed);
    FUZZ_CHECK(cJSON_IsObject(back));
    cJSON_Delete(back);
    free(printed);
    cJSON_Delete(st);
}

static void check_search(const char *body, size_t len, size_t budget, int max_files)
{
    struct zr_opts zo = {"github.com/", 2, 0};
    struct fmt_search_opts fo = {"needle file:\\.c$", max_files, budget, 30000000000LL, NULL, NULL, 0, NULL};
    struct zr_search r;
    struct zk_err err;
    struct buf text;
    cJSON *st = NULL;

    if (zr_parse_search(body, len, &zo, &r, &err) != ZK_OK) {
        zr_search_free(&r);
        return;
    }
    buf_init(&text, budget + 1);
    FUZZ_CHECK(fmt_search(&r, &fo, &text, &st, &err) == ZK_OK);
    FUZZ_CHECK(text.len <= budget && text.data != NULL);
    FUZZ_CHECK(readable(text.data, text.len));
    check_structured(st);
    /* list_files and find_references format the same answers, sorted, within the same budget. */
    buf_reset(&text);
    FUZZ_CHECK(fmt_files(&r,
                         &(struct fmt_files_opts){"file:x", max_files * 25, budget, 0, tcur_files_cursor,
                                                  &files_pages},
                         &text, &st, &err) == ZK_OK);
    FUZZ_CHECK(text.len <= budget && readable(text.data, text.len));
    check_structured(st);
    buf_reset(&text);
    FUZZ_CHECK(fmt_refs(&r, &(struct fmt_refs_opts){"content:x", "needle", max_files, budget, NULL, NULL, NULL, 0, NULL,
                                                     NULL},
                        &text, &st, &err) == ZK_OK);
    FUZZ_CHECK(text.len <= budget && readable(text.data, text.len));
    check_structured(st);
    /* find_symbol too, with the symbols the answer carries (a sym: answer's SymbolInfo). */
    buf_reset(&text);
    FUZZ_CHECK(fmt_symbols(&r, &(struct fmt_symbols_opts){"sym:x", max_files, budget, 1, "a note"}, &text, &st,
                           &err) == ZK_OK);
    FUZZ_CHECK(text.len <= budget && readable(text.data, text.len));
    check_structured(st);
    buf_free(&text);
    zr_search_free(&r);
}

static void check_list(const char *body, size_t len, int limit)
{
    struct zr_opts zo = {NULL, -1, 0};
    struct zr_list l;
    struct zk_err err;
    struct buf text;
    cJSON *st = NULL;

    if (zr_parse_list(body, len, &zo, &l, &err) != ZK_OK) {
        zr_list_free(&l);
        return;
    }
    buf_init(&text, 1 << 16);
    FUZZ_CHECK(fmt_repos(&l,
                         &(struct fmt_repos_opts){limit % 3 == 0 ? NULL : limit % 3 == 1 ? "a" : "*/b*", limit,
                                                  1 << 16, FUZZ_NOW, (size_t)limit % (l.n_repos + 1), fuzz_repos_cursor, NULL},
                         &text, &st, &err) == ZK_OK);
    FUZZ_CHECK(text.data != NULL && readable(text.data, text.len));
    check_structured(st);
    /* The "Indexed:" line of every repository listed: readable, whatever the names and commits. */
    {
        struct fmt_indexed_repo *repos = calloc(l.n_repos + 1, sizeof(*repos));

        for (size_t i = 0; i < l.n_repos; i++)
            repos[i] = (struct fmt_indexed_repo){l.repos[i].name,
                                                 l.repos[i].n_branches ? l.repos[i].branches[0].version : NULL,
                                                 l.repos[i].index_time};
        buf_reset(&text);
        FUZZ_CHECK(fmt_indexed(repos, l.n_repos, FUZZ_NOW, &text) == ZK_OK);
        FUZZ_CHECK(readable(text.data ? text.data : "", text.len));
        free(repos);
    }
    buf_free(&text);
    zr_list_free(&l);
}

static void check_cut(const char *body, size_t len, size_t max)
{
    char *s = strndup(body, len);
    struct buf b;

    FUZZ_CHECK(s != NULL);
    buf_init(&b, 1 << 16);
    FUZZ_CHECK(fmt_put_cut(&b, s, max) == ZK_OK);
    FUZZ_CHECK(b.len <= max + strlen("\xe2\x80\xa6")); /* the bytes of s, then the ellipsis */
    FUZZ_CHECK(!readable(s, strlen(s)) || readable(b.data != NULL ? b.data : "", b.len));
    buf_free(&b);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body;
    size_t len;

    if (size < 2)
        return 0;
    body = (const char *)data + 2;
    len = size - 2;
    if (data[0] & 1)
        check_list(body, len, 1 + data[1] % 50);
    else
        check_search(body, len, FMT_BUDGET_MIN + (size_t)data[1] * 64, 1 + data[1] % 40);
    check_cut(body, len, data[1]);
    return 0;
}
