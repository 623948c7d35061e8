/* fuzz_zoekt_result.c: Zoekt's /api/search and /api/list answers (connector/zoekt/result.h), parsed
 * from arbitrary bodies: the connector must survive any Zoekt version, a proxy's error page or a
 * truncated answer.
 *
 * Input: byte 0 chooses what to parse (bits 0-1: search, list, error text, time), the context lines
 * the request asked for (bits 2-5, -1..14) and whether a mirror prefix is set (bit 6); the rest is the
 * body. Asserted:
 * - parsing returns ZK_OK or ZK_EPARSE (with the code in err and a NUL-terminated message), and the
 *   result can be freed either way;
 * - every text a result carries (repository, path, version, language, branch and repository names, line
 *   text) is valid UTF-8 without control characters other than tab, so it can be printed as is;
 * - a file's lines are sorted by number, each number once and at least 1, n_match_lines counts the
 *   matching ones, an undecodable line has empty text and marks its file;
 * - the text of every line comes from the decoded base64 content of the answer (a line of one of its
 *   Line, Before, After or Content fields, sanitised), never from anywhere else;
 * - the repository list is sorted by name;
 * - zr_error_text always NUL-terminates within the size it is given, and its text is printable;
 * - a time that rfc3339_parse accepts survives rfc3339_format and rfc3339_parse unchanged;
 * - zr_parse_search (the scanner, lib/jscan.h) and zr_parse_search_tree (one cJSON tree of the body)
 *   agree on every body, with the per-file cap off and at 1, 3 and 10 matching lines: the same code,
 *   the same message, and every field of every file and line equal;
 * - jscan_parse accepts exactly the bodies cJSON_ParseWithLength accepts, and walking the accepted
 *   document finds what the cJSON tree holds: the same types, element counts, keys (jscan_key_is
 *   agrees with the key cJSON decoded, ignoring case too), first-member look-ups (jscan_find), numbers
 *   (jscan_int against json_int) and strings without escapes. */
#include "tests/fuzz/fuzz.h"

#include "connector/zoekt/result.h"
#include "jscan.h"
#include "json.h"
#include "rfc3339.h"

#include <string.h>
#include <strings.h>

/* Whether s is valid UTF-8 with no control character but tab: what zr_sanitize promises. */
static int printable(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        unsigned int cp;
        size_t need, i;

        if (*p < 0x80) {
            if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
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

/* The texts a line may legitimately carry: each line of each decoded content field, sanitised, and
 * each whole field (a LineMatch's Line is taken whole). */
struct texts {
    char **v;
    size_t n, cap;
};

static void texts_add(struct texts *t, const unsigned char *p, size_t len)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->v = realloc(t->v, t->cap * sizeof(*t->v));
        FUZZ_CHECK(t->v != NULL);
    }
    t->v[t->n] = zr_sanitize(p, len);
    FUZZ_CHECK(t->v[t->n] != NULL);
    t->n++;
}

static void collect(const cJSON *node, struct texts *t)
{
    static const char *const keys[] = {"Line", "Before", "After", "Content"};
    const cJSON *c;

    cJSON_ArrayForEach(c, node) {
        if (cJSON_IsString(c) && c->string != NULL) {
            for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                size_t len = 0, start = 0;
                unsigned char *d;

                if (strcmp(c->string, keys[k]) != 0)
                    continue;
                d = zr_base64_decode(c->valuestring, strlen(c->valuestring), &len);
                if (d == NULL)
                    continue;
                texts_add(t, d, len);
                if (len > 0 && d[len - 1] == '\n')
                    texts_add(t, d, len - 1);
                for (size_t i = 0; i <= len; i++)
                    if (i == len || d[i] == '\n') {
                        texts_add(t, d + start, i - start);
                        start = i + 1;
                    }
                free(d);
            }
        }
        collect(c, t);
    }
}

static int known_text(const struct texts *t, const char *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i], s) == 0)
            return 1;
    return 0;
}

static void check_file(const struct zr_file *f, const struct texts *t)
{
    size_t i, matches = 0;

    FUZZ_CHECK(printable(f->repo) && printable(f->path) && printable(f->version) && printable(f->language));
    for (i = 0; i < f->n_branches; i++)
        FUZZ_CHECK(printable(f->branches[i]));
    FUZZ_CHECK((f->n_lines == 0) == (f->lines == NULL));
    for (i = 0; i < f->n_lines; i++) {
        const struct zr_line *l = &f->lines[i];

        FUZZ_CHECK(l->number >= 1);
        FUZZ_CHECK(i == 0 || f->lines[i - 1].number < l->number);
        FUZZ_CHECK(l->text != NULL && printable(l->text));
        FUZZ_CHECK(!l->undecodable || (l->text[0] == '\0' && f->undecodable));
        FUZZ_CHECK(l->text[0] == '\0' || known_text(t, l->text));
        /* A match's position lies within its line's text; a context line has none. */
        FUZZ_CHECK(l->match_start <= l->match_end && l->match_end <= strlen(l->text));
        FUZZ_CHECK(l->is_match || (l->match_start == 0 && l->match_end == 0));
        matches += l->is_match ? 1 : 0;
    }
    FUZZ_CHECK(matches == f->n_match_lines);
}

static void check_search(const char *body, size_t len, const struct zr_opts *o)
{
    struct zr_search s;
    struct zk_err err;
    struct texts t = {0};
    cJSON *root;
    int rc;

    zk_err_clear(&err);
    rc = zr_parse_search(body, len, o, &s, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc == ZK_EPARSE && err.code == rc && memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
        zr_search_free(&s);
        return;
    }
    root = json_parse(body, len);
    FUZZ_CHECK(root != NULL);
    collect(root, &t);
    for (size_t i = 0; i < s.n_files; i++)
        check_file(&s.files[i], &t);
    for (size_t i = 0; i < t.n; i++)
        free(t.v[i]);
    free(t.v);
    cJSON_Delete(root);
    zr_search_free(&s);
}

static int same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The scanner's result equals the tree's, field by field. */
static void check_same_search(const char *body, size_t len, const struct zr_opts *o)
{
    struct zr_search a, b;
    struct zk_err ea, eb;
    int ra, rb;

    zk_err_clear(&ea);
    zk_err_clear(&eb);
    ra = zr_parse_search(body, len, o, &a, &ea);
    rb = zr_parse_search_tree(body, len, o, &b, &eb);
    FUZZ_CHECK(ra == rb && ea.code == eb.code && strcmp(ea.msg, eb.msg) == 0);
    FUZZ_CHECK(memcmp(&a.stats, &b.stats, sizeof(a.stats)) == 0);
    FUZZ_CHECK(a.n_files == b.n_files && a.chunk_matches == b.chunk_matches);
    for (size_t i = 0; i < a.n_files; i++) {
        const struct zr_file *x = &a.files[i], *y = &b.files[i];

        FUZZ_CHECK(same_text(x->repo, y->repo) && same_text(x->path, y->path));
        FUZZ_CHECK(same_text(x->version, y->version) && same_text(x->language, y->language));
        FUZZ_CHECK(x->n_branches == y->n_branches);
        for (size_t k = 0; k < x->n_branches; k++)
            FUZZ_CHECK(same_text(x->branches[k], y->branches[k]));
        FUZZ_CHECK(x->n_lines == y->n_lines && x->n_match_lines == y->n_match_lines);
        FUZZ_CHECK(x->n_matches == y->n_matches && x->name_match == y->name_match);
        FUZZ_CHECK(x->undecodable == y->undecodable && x->has_content == y->has_content);
        FUZZ_CHECK(x->content_len == y->content_len && (x->content == NULL) == (y->content == NULL));
        FUZZ_CHECK(x->content == NULL || memcmp(x->content, y->content, x->content_len) == 0);
        for (size_t k = 0; k < x->n_lines; k++) {
            const struct zr_line *l = &x->lines[k], *m = &y->lines[k];

            FUZZ_CHECK(l->number == m->number && l->is_match == m->is_match);
            FUZZ_CHECK(l->undecodable == m->undecodable && same_text(l->text, m->text));
            FUZZ_CHECK(l->match_start == m->match_start && l->match_end == m->match_end);
        }
        FUZZ_CHECK(x->n_symbols == y->n_symbols);
        for (size_t k = 0; k < x->n_symbols; k++) {
            const struct zr_symbol *l = &x->symbols[k], *m = &y->symbols[k];

            FUZZ_CHECK(l->line == m->line && same_text(l->sym, m->sym) && same_text(l->kind, m->kind));
            FUZZ_CHECK(same_text(l->parent, m->parent) && same_text(l->parent_kind, m->parent_kind));
        }
    }
    zr_search_free(&a);
    zr_search_free(&b);
}

/* What the scanner finds in v is what cJSON built for it in node. */
static void check_scan_node(const struct jscan_doc *d, struct jscan v, const cJSON *node)
{
    static const char *const probes[] = {"Files", "FileName", "Ranges", "LineNumber", "Content"};
    enum jscan_type t = jscan_type(v);
    struct jscan key, val, found[5];
    struct jscan_iter it;
    const cJSON *c;
    size_t n = 0;

    switch (t) {
    case JSCAN_NULL: FUZZ_CHECK(cJSON_IsNull(node)); return;
    case JSCAN_TRUE: FUZZ_CHECK(cJSON_IsTrue(node)); return;
    case JSCAN_FALSE: FUZZ_CHECK(cJSON_IsFalse(node)); return;
    case JSCAN_NUMBER: {
        double x = node->valuedouble;

        FUZZ_CHECK(cJSON_IsNumber(node));
        FUZZ_CHECK(jscan_int(v, -7) == (x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (long long)x : -7));
        return;
    }
    case JSCAN_STRING:
        FUZZ_CHECK(cJSON_IsString(node));
        if (!memchr(v.p + 1, '\\', v.len - 2) && !memchr(v.p + 1, '\0', v.len - 2))
            FUZZ_CHECK(strlen(node->valuestring) == v.len - 2 && memcmp(v.p + 1, node->valuestring, v.len - 2) == 0);
        return;
    case JSCAN_ARRAY:
    case JSCAN_OBJECT:
        FUZZ_CHECK(t == JSCAN_ARRAY ? cJSON_IsArray(node) : cJSON_IsObject(node));
        break;
    default:
        FUZZ_CHECK(0);
    }
    c = node->child;
    jscan_iter_init(&it, d, v);
    while (jscan_next(&it, &key, &val)) {
        FUZZ_CHECK(c != NULL);
        if (t == JSCAN_OBJECT) {
            char upper[64];
            size_t k;

            FUZZ_CHECK(c->string != NULL && jscan_key_is(key, c->string, 0));
            for (k = 0; c->string[k] && k + 1 < sizeof(upper); k++)
                upper[k] = (char)(c->string[k] >= 'a' && c->string[k] <= 'z' ? c->string[k] - 32 : c->string[k]);
            upper[k] = '\0';
            if (!c->string[k])
                FUZZ_CHECK(jscan_key_is(key, upper, 1));
        }
        check_scan_node(d, val, c);
        c = c->next;
        n++;
    }
    FUZZ_CHECK(c == NULL && (t != JSCAN_ARRAY || n == jscan_count(d, v)));
    if (t != JSCAN_OBJECT)
        return;
    jscan_find(d, v, probes, 5, found);
    for (size_t i = 0; i < 5; i++) {
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(node, probes[i]);

        FUZZ_CHECK((found[i].p == NULL) == (want == NULL));
        if (want)
            check_scan_node(d, found[i], want);
    }
}

static void check_scan(const char *body, size_t len)
{
    cJSON *root = json_parse(body, len);
    struct jscan_doc d;
    struct jscan v;
    int rc = jscan_parse(&d, body, len, &v);

    FUZZ_CHECK((rc == ZK_OK) == (root != NULL));
    FUZZ_CHECK(rc == ZK_OK || rc == ZK_EPARSE);
    if (root)
        check_scan_node(&d, v, root);
    jscan_doc_free(&d);
    cJSON_Delete(root);
}

static void check_list(const char *body, size_t len, const struct zr_opts *o)
{
    struct zr_list l;
    struct zk_err err;
    int rc;

    zk_err_clear(&err);
    rc = zr_parse_list(body, len, o, &l, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc == ZK_EPARSE && err.code == rc && memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
        zr_list_free(&l);
        return;
    }
    for (size_t i = 0; i < l.n_repos; i++) {
        const struct zr_repo *r = &l.repos[i];

        FUZZ_CHECK(r->name != NULL && printable(r->name));
        FUZZ_CHECK(i == 0 || strcmp(l.repos[i - 1].name, r->name) <= 0);
        FUZZ_CHECK(printable(r->latest_commit) && printable(r->zoekt_version));
        for (size_t b = 0; b < r->n_branches; b++)
            FUZZ_CHECK(printable(r->branches[b].name) && printable(r->branches[b].version));
    }
    zr_list_free(&l);
}

static void check_error_text(const char *body, size_t len)
{
    char out[64];

    for (size_t n = 1; n <= sizeof(out); n *= 4) {
        memset(out, 'x', sizeof(out));
        zr_error_text(body, len, out, n);
        FUZZ_CHECK(memchr(out, '\0', n) != NULL);
        FUZZ_CHECK(printable(out));
    }
}

static void check_time(const char *body, size_t len)
{
    char *s = strndup(body, len), text[64];
    time_t t, t2;

    FUZZ_CHECK(s != NULL);
    /* Every time of the years 0000 to 9999, the ones RFC 3339 can write. */
    if (rfc3339_parse(s, &t) && t >= -62167219200LL && t < 253402300800LL) {
        rfc3339_format(t, text, sizeof(text));
        FUZZ_CHECK(rfc3339_parse(text, &t2) && t2 == t);
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct zr_opts o = {NULL, -1, 0};
    const char *body;
    size_t len;

    if (size < 1)
        return 0;
    o.context_lines = (int)((data[0] >> 2) & 0xf) - 1;
    o.mirror_prefix = data[0] & 0x40 ? "github.com/" : NULL;
    body = (const char *)data + 1;
    len = size - 1;
    switch (data[0] & 3) {
    case 0:
        check_search(body, len, &o);
        check_scan(body, len);
        for (int cap = 0; cap <= 10; cap += cap < 3 ? (cap ? 2 : 1) : 7) {
            o.match_lines = cap;
            check_same_search(body, len, &o);
        }
        break;
    case 1:
        check_list(body, len, &o);
        break;
    case 2:
        check_error_text(body, len);
        break;
    default:
        check_time(body, len);
    }
    return 0;
}
