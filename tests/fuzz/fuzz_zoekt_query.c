/* fuzz_zoekt_query.c: glob translation and repository regexes (connector/zoekt/query.h), whose input
 * is whatever an agent passes as a file or repository filter.
 *
 * Input: byte 0 chooses the anchoring (bit 0: path or full); the rest, up to a NUL, is the glob or repository name. The RE2 text is rewritten into POSIX ERE by a
 * small reader of exactly the syntax the translator may emit ("\xHH", "\c", classes with escapes,
 * groups, alternation, ".", "*", "?", "^", "$"); anything else it meets is itself a failure. Asserted:
 * - the regex contains no blank, quote or control byte (Zoekt's lexer would split or unquote it);
 * - it is anchored: it starts with "^" (or "(^|/)" for a path glob without a slash) and ends with an
 *   unescaped "$";
 * - its POSIX translation compiles with regcomp(REG_EXTENDED), so no class range is reversed and no
 *   group is unbalanced;
 * - for a glob made only of literals, "*", "**" and "?", the regex matches the obvious witness (stars
 *   removed, "?" as "x"), and for a purely literal glob it does not match the witness with a character
 *   appended (the "$" anchors it);
 * - a repository argument's regex starts "(^|/)", a plain name's matches the name itself, and the regex
 *   and zn_matches (reponame.h) agree on the name and on it with text before or after it; zn_suggest
 *   picks distinct names within its cap;
 * - zq_build with only that glob as a file filter gives exactly "file:<regex>", and fails exactly when
 *   the translation does. */
#include "tests/fuzz/fuzz.h"

#include "buf.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <regex.h>
#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads one escaped or plain character at *p (inside or outside a class) into *c. */
static void read_char(const char **p, unsigned char *c)
{
    const char *s = *p;

    if (s[0] == '\\' && s[1] == 'x') {
        FUZZ_CHECK(hexval(s[2]) >= 0 && hexval(s[3]) >= 0);
        *c = (unsigned char)(hexval(s[2]) * 16 + hexval(s[3]));
        FUZZ_CHECK(*c != 0);
        *p = s + 4;
    } else if (s[0] == '\\') {
        FUZZ_CHECK(s[1] != '\0');
        *c = (unsigned char)s[1];
        *p = s + 2;
    } else {
        *c = (unsigned char)s[0];
        *p = s + 1;
    }
}

/* Appends c as a POSIX ERE literal. */
static void put_literal(struct buf *b, unsigned char c)
{
    if (c == '^')
        FUZZ_CHECK(buf_puts(b, "\\^") == ZK_OK);
    else if (c == ']')
        FUZZ_CHECK(buf_puts(b, "[]]") == ZK_OK);
    else if (strchr("\\.+*?()|[{}$", c) != NULL)
        FUZZ_CHECK(buf_printf(b, "[%c]", c) == ZK_OK);
    else
        FUZZ_CHECK(buf_putc(b, (char)c) == ZK_OK);
}

/* Translates the class at *p ("[" ... "]") into a POSIX bracket expression listing its members. */
static void put_class(struct buf *b, const char **p)
{
    unsigned char set[256] = {0}, lo, hi;
    const char *s = *p + 1;
    int negate = 0, others = 0;

    if (*s == '^') {
        negate = 1;
        s++;
    }
    FUZZ_CHECK(*s != ']'); /* RE2 has no empty class; the translator escapes a leading ']' */
    while (*s != ']') {
        FUZZ_CHECK(*s != '\0');
        read_char(&s, &lo);
        hi = lo;
        if (s[0] == '-' && s[1] != ']' && s[1] != '\0') {
            s++;
            read_char(&s, &hi);
            FUZZ_CHECK(lo <= hi); /* RE2 rejects a reversed range */
        }
        for (unsigned c = lo; c <= hi; c++)
            set[c] = 1;
    }
    *p = s + 1;
    for (unsigned c = 1; c < 256; c++)
        others += set[c] && c != ']' && c != '-' && c != '^';
    /* POSIX gives ']' meaning by position (first), '-' (last) and '^' (anywhere but first). */
    if (!negate && !set[']'] && others == 0 && set['^']) {
        FUZZ_CHECK(buf_puts(b, set['-'] ? "[-^]" : "\\^") == ZK_OK);
        return;
    }
    FUZZ_CHECK(buf_puts(b, negate ? "[^" : "[") == ZK_OK);
    if (set[']'])
        FUZZ_CHECK(buf_putc(b, ']') == ZK_OK);
    for (unsigned c = 1; c < 256; c++)
        if (set[c] && c != ']' && c != '-' && c != '^' && c != '[')
            FUZZ_CHECK(buf_putc(b, (char)c) == ZK_OK);
    /* '[' goes last among them, so that it is never followed by ':', '.' or '='. */
    if (set['['])
        FUZZ_CHECK(buf_putc(b, '[') == ZK_OK);
    if (set['^'])
        FUZZ_CHECK(buf_putc(b, '^') == ZK_OK);
    if (set['-'])
        FUZZ_CHECK(buf_putc(b, '-') == ZK_OK);
    FUZZ_CHECK(buf_putc(b, ']') == ZK_OK);
}

/* Rewrites the translator's RE2 into POSIX ERE; *anchored_end says whether it ends with a real "$". */
static char *to_posix(const char *re, int *anchored_end)
{
    struct buf b;
    const char *p = re;
    unsigned char c;

    buf_init(&b, 1 << 20);
    *anchored_end = 0;
    while (*p) {
        c = (unsigned char)*p;
        FUZZ_CHECK(c > 0x20 && c != '"' && c != 0x7f);
        *anchored_end = 0;
        if (c == '[') {
            put_class(&b, &p);
        } else if (c == '\\') {
            read_char(&p, &c);
            put_literal(&b, c);
        } else {
            /* '{', '}', '+' and ']' are always escaped by the translator. */
            FUZZ_CHECK(strchr("{}+]", c) == NULL);
            *anchored_end = c == '$';
            FUZZ_CHECK(buf_putc(&b, (char)c) == ZK_OK);
            p++;
        }
    }
    return buf_steal(&b);
}

/* Compiles re (RE2 text) after translation; the caller frees *rx. */
static void compile(const char *re, regex_t *rx)
{
    int anchored_end, rc;
    char *posix = to_posix(re, &anchored_end);

    FUZZ_CHECK(posix != NULL && anchored_end);
    rc = regcomp(rx, posix, REG_EXTENDED | REG_NOSUB);
    if (rc != 0)
        fprintf(stderr, "regcomp(\"%s\") from \"%s\": %d\n", posix, re, rc);
    FUZZ_CHECK(rc == 0);
    free(posix);
}

static int matches(const regex_t *rx, const char *s)
{
    return regexec(rx, s, 0, NULL, 0) == 0;
}

/* The witness of a glob of literals, stars and question marks; NULL for other globs. *literal says
 * whether the glob had no wildcard at all. */
static char *witness(const char *g, int *literal)
{
    char *w;
    size_t o = 0;

    if (strpbrk(g, "[]{}\\") != NULL)
        return NULL;
    *literal = strpbrk(g, "*?") == NULL;
    w = malloc(strlen(g) + 1);
    FUZZ_CHECK(w != NULL);
    for (; *g; g++)
        if (*g != '*')
            w[o++] = *g == '?' ? 'x' : *g;
    w[o] = '\0';
    return w;
}

static void check_glob(const char *glob, enum zq_anchor anchor)
{
    struct zk_err err;
    struct zq_spec spec = {0};
    const char *files[1] = {glob}, *g = glob;
    char *re = NULL, *built = NULL, *w, *longer;
    regex_t rx;
    int rc, literal = 0;

    rc = zq_glob_to_regex(glob, anchor, &re, &err);
    spec.files = files;
    spec.n_files = 1;
    if (anchor == ZQ_ANCHOR_PATH) {
        FUZZ_CHECK((zq_build(&spec, &built, &err) == ZK_OK) == (rc == ZK_OK));
        FUZZ_CHECK(rc != ZK_OK || (strncmp(built, "file:", 5) == 0 && strcmp(built + 5, re) == 0));
        free(built);
    }
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc == ZK_EINVAL && re == NULL && err.code == rc);
        return;
    }
    FUZZ_CHECK(re[0] == '^' || (anchor == ZQ_ANCHOR_PATH && strncmp(re, "(^|/)", 5) == 0));
    compile(re, &rx);

    if (anchor == ZQ_ANCHOR_PATH && g[0] == '/' && g[1])
        g++; /* as the translator does: paths are relative */
    w = witness(g, &literal);
    if (w != NULL) {
        FUZZ_CHECK(matches(&rx, w));
        if (literal && w[0] && w[strlen(w) - 1] != '/') {
            longer = malloc(strlen(w) + 2);
            FUZZ_CHECK(longer != NULL);
            snprintf(longer, strlen(w) + 2, "%sx", w);
            FUZZ_CHECK(!matches(&rx, longer));
            free(longer);
        }
        free(w);
    }
    regfree(&rx);
    free(re);
}

static int has_non_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return 1;
    return 0;
}

/* Suggestions for any pattern stay within the names given and the cap, nearest first by construction. */
static void check_suggest(const char *pattern)
{
    static const char *const names[] = {"acme/payments", "acme/bulk", "acme/bulkhead", "x/y/z/w", ""};
    size_t pick[ZN_SUGGEST_MAX], n = zn_suggest(pattern, names, 5, pick, ZN_SUGGEST_MAX);

    FUZZ_CHECK(n <= ZN_SUGGEST_MAX);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(pick[i] < 5);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(pick[i] != pick[j]);
    }
}

/* The Zoekt regex for a repository argument and zn_matches, which list_repositories and the notes use,
 * must agree on every name, or an agent would see a repository listed that a search does not select. */
static void check_repo(const char *arg)
{
    static const char *const around[][2] = {{"", ""}, {"org/", ""}, {"x", ""}, {"", "x"}, {"a/b/", ""}};
    char pattern[ZN_ARG_MAX + 1], *re = NULL, name[3 * ZN_ARG_MAX];
    struct zk_err err;
    regex_t rx;

    if (zq_repo_regex(arg, &re, &err) != ZK_OK) {
        FUZZ_CHECK(re == NULL && err.code < 0);
        return;
    }
    FUZZ_CHECK(strncmp(re, "(^|/)", 5) == 0);
    FUZZ_CHECK(zn_normalize(arg, pattern, sizeof(pattern), &err) == ZK_OK);
    compile(re, &rx);
    if (!zn_is_glob(pattern))
        FUZZ_CHECK(matches(&rx, pattern) && zn_matches(pattern, pattern));
    /* POSIX regexec in the C locale reads bytes where RE2 and zn_matches read UTF-8 characters, so the
     * oracle holds for ASCII names only. */
    for (size_t i = 0; i < sizeof(around) / sizeof(around[0]) && !has_non_ascii(pattern); i++) {
        int c_side;

        snprintf(name, sizeof(name), "%s%s%s", around[i][0], pattern, around[i][1]);
        c_side = zn_matches_bounded(pattern, name);
        /* A glob written to be slow may exhaust the matcher's step bound: nothing to compare then. */
        FUZZ_CHECK(c_side < 0 || matches(&rx, name) == c_side);
    }
    regfree(&rx);
    free(re);
    check_suggest(pattern);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    if (size < 1)
        return 0;
    text = strndup((const char *)data + 1, size - 1);
    FUZZ_CHECK(text != NULL);
    check_glob(text, data[0] & 1 ? ZQ_ANCHOR_FULL : ZQ_ANCHOR_PATH);
    check_repo(text);
    free(text);
    return 0;
}
