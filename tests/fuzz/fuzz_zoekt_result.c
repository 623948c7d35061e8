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
 * - zr_error_text always NUL-terminates within the size it is given;
 * - a time that rfc3339_parse accepts survives rfc3339_format and rfc3339_parse unchanged. */
#include "tests/fuzz/fuzz.h"

#include "connector/zoekt/result.h"
#include "json.h"
#include "rfc3339.h"

#include <string.h>

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
    }
}

static void check_time(const char *body, size_t len)
{
    char *s = strndup(body, len), text[64];
    time_t t, t2;

    FUZZ_CHECK(s != NULL);
    if (rfc3339_parse(s, &t) && t > -62135596800LL && t < 253402300800LL) {
        rfc3339_format(t, text, sizeof(text));
        FUZZ_CHECK(rfc3339_parse(text, &t2) && t2 == t);
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct zr_opts o;
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
