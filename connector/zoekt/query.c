/* query.c: see query.h. */
#include "connector/zoekt/query.h"

#include "buf.h"
#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A query is typed by an agent; nothing legitimate comes near this, and it keeps every buffer bounded. */
#define ZQ_MAX 65536

/* The characters RE2 reads as more than themselves. */
#define ZQ_METACHARS "\\.+*?()|[]{}^$"

int zq_has_metachar(const char *s)
{
    return s && strpbrk(s, ZQ_METACHARS) != NULL;
}

/* Appends c so that it matches itself in RE2 and cannot end or alter a Zoekt token. */
static int zq_put_literal(struct buf *b, unsigned char c)
{
    if (strchr(ZQ_METACHARS, c) && c != '\0') {
        char esc[2] = {'\\', (char)c};
        return buf_append(b, esc, 2);
    }
    /* Zoekt's lexer splits tokens at spaces, tabs and newlines and reads '"' as the start of a quoted
     * string, so these (and any control byte) are written as hex escapes, which RE2 understands. */
    if (c <= 0x20 || c == '"' || c == 0x7f)
        return buf_printf(b, "\\x%02x", c);
    return buf_putc(b, (char)c);
}

char *zq_regex_quote(const char *s)
{
    struct buf b;

    buf_init(&b, ZQ_MAX);
    for (; *s; s++)
        if (zq_put_literal(&b, (unsigned char)*s))
            return NULL;
    return buf_steal(&b);
}

int zq_is_glob(const char *s)
{
    return strpbrk(s, "*?[{") != NULL;
}

/* Copies a character class starting at glob[*i] == '[' and advances *i past the closing ']'. */
static int zq_put_class(struct buf *b, const char *glob, size_t *i, const char *orig, struct zk_err *err)
{
    size_t j = *i + 1;
    int prev = -1, range_from = -1;
    int rc;

    rc = buf_putc(b, '[');
    if (!rc && (glob[j] == '!' || glob[j] == '^')) {
        rc = buf_putc(b, '^');
        j++;
    }
    /* A ']' right after the opening (or after the negation) is a member, as in POSIX globs. */
    if (!rc && glob[j] == ']') {
        rc = buf_puts(b, "\\]");
        j++;
    }
    /* prev is the last member (unescaped), or -1 when there is none or it ended a range; range_from is
     * the start of the range being written, or -1. Zoekt's regex parser rejects a range whose end comes
     * before its start, so such a glob is refused here, where the message can name the glob. */
    for (; !rc && glob[j] && glob[j] != ']'; j++) {
        unsigned char c = (unsigned char)glob[j];
        int escaped = c == '\\' && glob[j + 1];

        if (!escaped && c == '-' && prev >= 0 && range_from < 0 && glob[j + 1] && glob[j + 1] != ']') {
            range_from = prev;
            rc = buf_putc(b, '-');
            continue;
        }
        if (escaped)
            c = (unsigned char)glob[++j];
        if (range_from >= 0) {
            if (range_from >= 0x80 || c >= 0x80) {
                buf_free(b);
                return zk_err_set(err, ZK_EINVAL, "glob \"%s\": ranges of non-ASCII characters are not supported",
                                  orig);
            }
            if (c < range_from) {
                buf_free(b);
                return zk_err_set(err, ZK_EINVAL, "glob \"%s\": the range %c-%c is reversed", orig, range_from,
                                  c);
            }
            range_from = -1;
            prev = -1;
        } else {
            prev = c;
        }
        if (c == '-') {
            /* A '-' that is a member, not a range, is escaped: written bare after a member (or after
             * the leading ']') it would make a range in RE2. */
            rc = buf_puts(b, "\\-");
        } else if (escaped || c == '[' || c == '\\' || c == '"' || c == '(' || c == ')' || c <= 0x20 || c == 0x7f) {
            /* '[' would open a POSIX class such as [:alpha:] in RE2. Zoekt's lexer counts parentheses
             * inside a term, class or not: a bare ')' here would end the atom and close a group. */
            rc = zq_put_literal(b, c);
        } else {
            rc = buf_putc(b, (char)c);
        }
    }
    if (rc)
        return rc;
    if (glob[j] != ']') {
        buf_free(b);
        return zk_err_set(err, ZK_EINVAL, "glob \"%s\": the '[' at position %zu has no closing ']'", orig,
                          *i + 1);
    }
    *i = j;
    return buf_putc(b, ']');
}

int zq_glob_to_regex(const char *glob, enum zq_anchor anchor, char **out, struct zk_err *err)
{
    const char *g = glob;
    size_t n, i;
    int depth = 0, rc = ZK_OK;
    struct buf b;

    *out = NULL;
    if (!glob || !*glob)
        return zk_err_set(err, ZK_EINVAL, "empty glob: give a pattern such as \"*.go\" or \"src/**\"");
    if (strlen(glob) > 1024)
        return zk_err_set(err, ZK_EINVAL, "glob longer than 1024 bytes");
    if (anchor == ZQ_ANCHOR_PATH && g[0] == '/' && g[1])
        g++; /* Zoekt paths are relative to the repository root. */
    n = strlen(g);

    buf_init(&b, ZQ_MAX);
    if (anchor == ZQ_ANCHOR_FULL)
        rc = buf_putc(&b, '^');
    else
        rc = buf_puts(&b, strchr(g, '/') ? "^" : "(^|/)");

    for (i = 0; !rc && i < n; i++) {
        unsigned char c = (unsigned char)g[i];

        switch (c) {
        case '*':
            if (g[i + 1] == '*') {
                i++;
                if (g[i + 1] == '/') {
                    i++;
                    rc = buf_puts(&b, "(.*/)?");
                } else {
                    rc = buf_puts(&b, ".*");
                }
            } else {
                rc = buf_puts(&b, "[^/]*");
            }
            break;
        case '?':
            rc = buf_puts(&b, "[^/]");
            break;
        case '[':
            rc = zq_put_class(&b, g, &i, glob, err);
            if (rc) {
                *out = NULL;
                return rc;
            }
            break;
        case '{':
            depth++;
            rc = buf_putc(&b, '(');
            break;
        case '}':
            if (depth == 0) {
                buf_free(&b);
                return zk_err_set(err, ZK_EINVAL, "glob \"%s\": '}' at position %zu has no opening '{'", glob,
                                  i + 1 + (size_t)(g - glob));
            }
            depth--;
            rc = buf_putc(&b, ')');
            break;
        case ',':
            rc = depth > 0 ? buf_putc(&b, '|') : buf_putc(&b, ',');
            break;
        case '\\':
            if (!g[i + 1]) {
                buf_free(&b);
                return zk_err_set(err, ZK_EINVAL, "glob \"%s\" ends with a lone '\\'", glob);
            }
            i++;
            rc = zq_put_literal(&b, (unsigned char)g[i]);
            break;
        case '/':
            /* A trailing slash names a directory: match everything below it. */
            rc = buf_puts(&b, i + 1 == n && anchor == ZQ_ANCHOR_PATH ? "/.*" : "/");
            break;
        default:
            rc = zq_put_literal(&b, c);
        }
    }
    if (!rc && depth > 0) {
        buf_free(&b);
        return zk_err_set(err, ZK_EINVAL, "glob \"%s\": a '{' has no closing '}'", glob);
    }
    if (!rc)
        rc = buf_putc(&b, '$');
    if (rc)
        return zk_err_set(err, rc, "glob \"%s\": its pattern is longer than %d bytes", glob, ZQ_MAX);
    *out = buf_steal(&b);
    return ZK_OK;
}

int zq_repo_regex(const char *repo, char **out, struct zk_err *err)
{
    char name[ZN_ARG_MAX + 1], *body = NULL;
    struct buf b;
    int rc;

    *out = NULL;
    rc = zn_normalize(repo, name, sizeof(name), err);
    if (rc)
        return rc;
    if (zn_is_glob(name)) {
        rc = zq_glob_to_regex(name, ZQ_ANCHOR_FULL, &body, err);
        if (rc)
            return rc;
    } else if (!(body = zq_regex_quote(name))) {
        return zk_err_set(err, ZK_ETOOBIG, "repository \"%s\": name too long", repo);
    }
    /* The glob's own "^" is dropped: like a plain name, it may also match after any slash of the name
     * (zn_matches), and the end is anchored by the glob's "$" or the one added here. */
    buf_init(&b, ZQ_MAX);
    if (buf_printf(&b, "(^|/)%s%s", body + (body[0] == '^'), zn_is_glob(name) ? "" : "$")) {
        rc = zk_err_set(err, ZK_ETOOBIG, "repository \"%s\": name too long", repo);
        goto out;
    }
    *out = buf_steal(&b);
out:
    free(body);
    return rc;
}

int zq_check_branch(const char *branch, struct zk_err *err)
{
    size_t n = branch ? strlen(branch) : 0;

    if (n == 0 || n > 256)
        return zk_err_set(err, ZK_EINVAL, "a branch name has 1 to 256 bytes");
    /* Zoekt's lexer ends a term at a blank and reads quotes and parentheses itself: a name with one
     * would not reach branch: whole. Git refuses blanks and control characters in ref names too. */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)branch[i] <= ' ' || strchr("\"'()\\", branch[i]) || branch[i] == 0x7f)
            return zk_err_set(err, ZK_EINVAL, "branch \"%.100s\": a branch name has no blank, quote, "
                                              "parenthesis, backslash or control character", branch);
    return ZK_OK;
}

int zq_file_query(const char *repo, const char *path, const char *branch, char **out, struct zk_err *err)
{
    char *repo_re = NULL, *path_re = NULL;
    struct buf b;
    int rc;

    *out = NULL;
    while (path && *path == '/')
        path++;
    if (!path || !*path)
        return zk_err_set(err, ZK_EINVAL, "path: empty file path");
    if (branch && (rc = zq_check_branch(branch, err))) {
        zk_err_prefix(err, "ref");
        return rc;
    }
    if ((rc = zq_repo_regex(repo, &repo_re, err))) {
        zk_err_prefix(err, "repo");
        return rc;
    }
    path_re = zq_regex_quote(path);
    buf_init(&b, ZQ_MAX);
    if (!path_re || (rc = buf_printf(&b, "repo:%s file:^%s$%s%s", repo_re, path_re, branch ? " branch:" : "",
                                     branch ? branch : "")))
        rc = zk_err_set(err, ZK_ETOOBIG, "the repository and path are longer than %d bytes", ZQ_MAX);
    else
        *out = buf_steal(&b);
    free(repo_re);
    free(path_re);
    return rc;
}

/* Whether the query has more than one token at the top level, i.e. whitespace outside quotes. */
static int zq_has_several_tokens(const char *q)
{
    int quoted = 0;

    for (; *q; q++) {
        if (*q == '\\' && q[1]) {
            q++;
        } else if (*q == '"') {
            quoted = !quoted;
        } else if (!quoted && (*q == ' ' || *q == '\t' || *q == '\n')) {
            return 1;
        }
    }
    return 0;
}

/* ---- parentheses, as Zoekt's lexer reads them -------------------------------------------------------
 *
 * A query in Zoekt's syntax goes to Zoekt as the agent wrote it, inside the parentheses that keep the
 * connector's filters outside it. Should the query close more parentheses than it opens, the filters
 * would join a group of their own ("x) or (e" reads (x) or (e repo:...), which selects every
 * repository), so its parentheses are counted exactly as Zoekt's lexer reads them (query/parse.go at
 * the pinned commit, scripts/versions.sh; counted here without its code):
 *
 * - a token that starts with '-' is the negation, one byte;
 * - any other token runs to a blank (space, tab or line break) or to a ')' that closes nothing opened
 *   inside the token itself; a token that would start with such a ')' is that ')' alone;
 * - inside a token, '(' and ')' are counted (also inside [...]), a backslash takes the next byte as it
 *   is, and "..." is a quoted string in which a backslash takes the next byte; the quotes are not part
 *   of the token's text;
 * - a token whose text begins with '(' and which reached a blank with a '(' still open is that first
 *   byte alone, and lexing goes on after it;
 * - a token whose text is exactly "(" opens a group, exactly ")" closes one; anything else is a term
 *   (so "foo\(", "[(]x)" and content:"a)" are terms, while "(" written as the string "(" opens);
 * - a token without text (an empty "", or a line break where a token would start) ends what Zoekt
 *   reads: the rest of the query is then an error. */

/* What one token is, as far as groups go. */
enum zq_tok_kind {
    ZQ_TOK_END,   /* no token: the end, or a place where Zoekt stops reading */
    ZQ_TOK_OPEN,  /* opens a group */
    ZQ_TOK_CLOSE, /* closes a group */
    ZQ_TOK_NOT,   /* the negation, '-' */
    ZQ_TOK_OTHER  /* a term, or "or" */
};

struct zq_tok {
    enum zq_tok_kind kind;
    size_t len;       /* bytes of the query the token takes */
    int open;         /* ZQ_TOK_OTHER: the '(' it leaves open inside itself */
    int starts_open;  /* ZQ_TOK_OTHER: whether its text begins with '(' */
};

/* Reads the token at the start of q (n bytes; blanks before it already skipped) into t. Returns ZK_OK,
 * or ZK_EINVAL for a quoted string without its closing quote or a backslash with nothing after it, at
 * offset at of the whole query. */
static int zq_lex(const char *q, size_t n, size_t at, struct zq_tok *t, struct zk_err *err)
{
    size_t i = 0, text = 0;
    int depth = 0, blank = 0;
    char first = 0;

    memset(t, 0, sizeof(*t));
    if (n == 0)
        return ZK_OK;
    if (q[0] == '-') {
        t->kind = ZQ_TOK_NOT;
        t->len = 1;
        return ZK_OK;
    }
    while (i < n) {
        char c = q[i];

        if (c == ' ' || c == '\t' || c == '\n') {
            blank = depth > 0;
            break;
        }
        if (c == ')' && depth == 0) {
            if (text == 0) {
                first = ')';
                text = 1;
                i++;
            }
            break;
        }
        if (c == '"') {
            size_t quote = i++;

            for (; i < n && q[i] != '"'; i++) {
                if (q[i] == '\\' && ++i == n)
                    break;
                if (text++ == 0)
                    first = q[i];
            }
            if (i >= n)
                return zk_err_set(err, ZK_EINVAL, "the '\"' at position %zu has no closing '\"'", at + quote + 1);
            i++;
            continue;
        }
        if (c == '\\') {
            if (i + 1 == n)
                return zk_err_set(err, ZK_EINVAL, "it ends with a lone '\\'");
            if (text == 0)
                first = c;
            text += 2;
            i += 2;
            continue;
        }
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (text++ == 0)
            first = c;
        i++;
    }
    if (text == 0)
        return ZK_OK;
    t->len = blank && first == '(' ? 1 : i;
    if ((blank || text == 1) && first == '(') {
        t->kind = ZQ_TOK_OPEN;
    } else if (text == 1 && first == ')') {
        t->kind = ZQ_TOK_CLOSE;
    } else {
        t->kind = ZQ_TOK_OTHER;
        t->open = depth;
        t->starts_open = first == '(';
    }
    return ZK_OK;
}

int zq_check_parens(const char *q, size_t n, struct zq_parens *p, struct zk_err *err)
{
    size_t i = 0, outer = 0, negation = 0;
    int depth = 0, first_opens = 0, rc;
    struct zq_tok t = {0};

    memset(p, 0, sizeof(*p));
    for (;;) {
        while (i < n && (q[i] == ' ' || q[i] == '\t'))
            i++;
        negation = t.kind == ZQ_TOK_NOT ? p->last_start + 1 : 0;
        if ((rc = zq_lex(q + i, n - i, i, &t, err)))
            return rc;
        /* A '-' with nothing to negate is an error to Zoekt, and the last token of a query that is not
         * wrapped: the filters after it would be what it negates. */
        if (negation && (t.kind == ZQ_TOK_END || t.kind == ZQ_TOK_CLOSE))
            return zk_err_set(err, ZK_EINVAL, "the '-' at position %zu negates nothing", negation);
        if (t.kind == ZQ_TOK_END)
            break;
        if (t.kind == ZQ_TOK_OPEN && depth++ == 0)
            outer = i;
        if (t.kind == ZQ_TOK_CLOSE && depth-- == 0)
            return zk_err_set(err, ZK_EINVAL, "the ')' at position %zu closes no '(' (a literal one is written \\))",
                              i + 1);
        if (p->tokens == 0)
            first_opens = t.kind == ZQ_TOK_OPEN;
        if (t.kind == ZQ_TOK_CLOSE && depth == 0 && first_opens && !p->first_group_end)
            p->first_group_end = i + t.len;
        p->tokens++;
        p->last_start = i;
        p->last_open = t.open;
        p->last_starts_open = t.starts_open;
        i += t.len;
    }
    if (i < n)
        return zk_err_set(err, ZK_EINVAL, "Zoekt stops reading it at position %zu (%s)", i + 1,
                          q[i] == '\n' ? "a line break between terms" : "an empty \"\"");
    if (depth > 0)
        return zk_err_set(err, ZK_EINVAL, "the '(' at position %zu is not closed (a literal one is written \\()",
                          outer + 1);
    return ZK_OK;
}

/* Finds the last unquoted "<atom><value>" token in q (atom such as "case:") with a value shorter than n
 * bytes and copies the value into out. */
static int zq_find_atom(const char *q, const char *atom, char *out, size_t n)
{
    size_t atom_len = strlen(atom);
    int found = 0, quoted = 0, at_start = 1;

    for (; *q; q++) {
        if (*q == '"') {
            quoted = !quoted;
        } else if (!quoted && at_start && strncmp(q, atom, atom_len) == 0) {
            size_t len = strcspn(q + atom_len, " \t\n)");

            if (len > 0 && len < n) {
                memcpy(out, q + atom_len, len);
                out[len] = '\0';
                found = 1;
            }
        }
        at_start = !quoted && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '(' || *q == '-');
    }
    return found;
}

/* Appends the pattern p (n bytes) as one quoted content: atom. Inside Zoekt's quotes a backslash
 * escapes the next character, so the pattern's backslashes and quotes are escaped once more; Zoekt
 * then hands RE2 the pattern as it was written. A literal is first escaped for RE2 (zq_put_literal). */
static int zq_put_pattern(struct buf *b, const char *p, size_t n, enum zq_syntax syntax)
{
    struct buf lit;
    int rc;

    buf_init(&lit, ZQ_MAX);
    if (syntax == ZQ_SYNTAX_LITERAL) {
        for (size_t i = 0; i < n; i++)
            if ((rc = zq_put_literal(&lit, (unsigned char)p[i])))
                return rc;
        p = lit.data ? lit.data : "";
        n = lit.len;
    }
    rc = buf_puts(b, "content:\"");
    for (size_t i = 0; !rc && i < n; i++)
        rc = p[i] == '\\' || p[i] == '"' ? buf_append(b, (const char[]){'\\', p[i]}, 2) : buf_putc(b, p[i]);
    buf_free(&lit);
    return rc ? rc : buf_putc(b, '"');
}

/* Whether pattern p (n bytes) has an upper-case letter of its own, as ripgrep's smart case reads it: a
 * letter that stands for itself, not one naming an escape or a class (\S, \W, \pL, \p{Greek},
 * [[:upper:]]) or a group ((?P<Name>)). */
static int zq_pattern_has_upper(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n) {
            i++;
            /* \p{...}: the braces hold a name, not letters to match. */
            if ((p[i] == 'p' || p[i] == 'P') && i + 1 < n && p[i + 1] == '{')
                while (i < n && p[i] != '}')
                    i++;
            else if ((p[i] == 'p' || p[i] == 'P') && i + 1 < n)
                i++;
        } else if (p[i] == '(' && i + 2 < n && p[i + 1] == '?' && (p[i + 2] == 'P' || p[i + 2] == '<')) {
            while (i < n && p[i] != '>')
                i++;
        } else if (p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
            while (i < n && p[i] != ']')
                i++;
        } else if (p[i] >= 'A' && p[i] <= 'Z') {
            return 1;
        }
    }
    return 0;
}

/* Whether Zoekt's case:auto could read pattern p (n bytes, a regex) as case-sensitive although it has no
 * upper-case letter of its own. Zoekt decides on Go's printed form of the parsed regex, in which \w,
 * \W and the POSIX classes become ranges with A-Z, and the literals of a (?i) group become upper case
 * (so Zoekt's trigram filter looks for FIXME only and misses fixme): measured with Zoekt 51a31b62,
 * \w+error\( matched 44 files where git grep -i finds 1,688. An escape, a flag group or a class is
 * enough to say case:no outright; a plain lower-case pattern keeps Zoekt's default and its short echo. */
static int zq_pattern_needs_case_no(const char *p, size_t n)
{
    if (zq_pattern_has_upper(p, n))
        return 0;
    for (size_t i = 0; i + 1 < n; i++)
        if ((p[i] == '\\' && ((p[i + 1] >= 'a' && p[i + 1] <= 'z') || (p[i + 1] >= 'A' && p[i + 1] <= 'Z'))) ||
            (p[i] == '(' && p[i + 1] == '?') || (p[i] == '[' && p[i + 1] == ':'))
            return 1;
    return 0;
}

/* Appends " <atom>:(r1|r2...)" (or without the group for one regex). */
static int zq_put_alternatives(struct buf *b, const char *atom, char **regexes, size_t n)
{
    int rc = buf_printf(b, "%s%s:%s", b->len ? " " : "", atom, n > 1 ? "(" : "");

    for (size_t i = 0; !rc && i < n; i++)
        rc = buf_printf(b, "%s%s", i ? "|" : "", regexes[i]);
    if (!rc && n > 1)
        rc = buf_putc(b, ')');
    return rc;
}

static void zq_free_list(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

/* Appends q, whose parentheses balance (zq_check_parens), in parentheses for the filters to follow: in
 * the first of four forms that Zoekt's lexer reads as q in a group of its own, which is checked here as
 * zq_check_parens reads it (the group the wrapper opens ends where the wrapper does). "(q)" nearly
 * always is. A first term that ends at a ')' would take the wrapper's '(' in ("(" quoted is a group:
 * ("(") x reads ("(") as one term), a last term that leaves a '(' open inside itself its ')' ("a [(]");
 * a blank after the '(' or before the ')' keeps them apart. Returns ZK_OK, ZK_ETOOBIG, or ZK_EINVAL
 * with a message in err when no form is read so. */
static int zq_wrap(struct buf *b, const char *q, struct zk_err *err)
{
    static const char *const forms[][2] = {{"(", ")"}, {"(", " )"}, {"( ", ")"}, {"( ", " )"}};
    struct zq_parens p;
    struct zk_err ignored;
    struct buf w;
    int rc = ZK_OK, kept = 0;

    for (size_t i = 0; !rc && !kept && i < sizeof(forms) / sizeof(forms[0]); i++) {
        buf_init(&w, ZQ_MAX);
        rc = buf_printf(&w, "%s%s%s", forms[i][0], q, forms[i][1]);
        if (!rc && zq_check_parens(w.data, w.len, &p, &ignored) == ZK_OK && p.first_group_end == w.len) {
            rc = buf_append(b, w.data, w.len);
            kept = 1;
        }
        buf_free(&w);
    }
    if (!rc && !kept)
        rc = zk_err_set(err, ZK_EINVAL, "Zoekt would not read it as one group before the filters (write a "
                                        "literal parenthesis as \\( or \\))");
    return rc;
}

/* Whether the byte q[at] follows an odd run of backslashes, which makes it the last one's escaped byte
 * (pairs of backslashes take each other, inside quotes and out). */
static int zq_escaped(const char *q, size_t at)
{
    size_t run = 0;

    while (run < at && q[at - run - 1] == '\\')
        run++;
    return run % 2;
}

int zq_build(const struct zq_spec *s, char **out, struct zk_err *err)
{
    char **repos = NULL, **files = NULL, **excl = NULL;
    char user_case[16];
    const char *q = s->query ? s->query : "", *trimmed;
    size_t qlen;
    int filters, rc = ZK_OK;
    struct buf b;

    *out = NULL;
    buf_init(&b, ZQ_MAX);
    /* A query in Zoekt's syntax is trimmed. A pattern keeps its blanks, as ripgrep does (" nil)" is not
     * "nil)"); only line breaks at its ends go, since a line-by-line search never matches one, and a
     * pattern of blanks alone is no pattern. */
    qlen = strlen(q);
    trimmed = s->syntax == ZQ_SYNTAX_ZOEKT || strspn(q, " \t\r\n") == qlen ? " \t\r\n" : "\r\n";
    q += strspn(q, trimmed);
    qlen = strlen(q);
    /* A blank after an odd run of backslashes is escaped: Zoekt reads it as part of a term. */
    while (qlen && strchr(trimmed, q[qlen - 1]) && !(s->syntax == ZQ_SYNTAX_ZOEKT && zq_escaped(q, qlen - 1)))
        qlen--;
    if (qlen == 0 && s->n_files == 0)
        return zk_err_set(err, ZK_EINVAL, "nothing to search: give a query, a file glob, or both");
    if (qlen > 4096)
        return zk_err_set(err, ZK_EINVAL, "query longer than 4096 bytes");

    if (s->branch && (rc = zq_check_branch(s->branch, err))) {
        zk_err_prefix(err, "ref");
        return rc;
    }
    repos = mem_calloc(s->n_repos + 1, sizeof(*repos));
    files = mem_calloc(s->n_files + 1, sizeof(*files));
    excl = mem_calloc(s->n_exclude_files + 1, sizeof(*excl));
    for (size_t i = 0; i < s->n_repos; i++)
        if ((rc = zq_repo_regex(s->repos[i], &repos[i], err)))
            goto fail_arg;
    for (size_t i = 0; i < s->n_files; i++)
        if ((rc = zq_glob_to_regex(s->files[i], ZQ_ANCHOR_PATH, &files[i], err))) {
            zk_err_prefix(err, "file");
            goto out;
        }
    for (size_t i = 0; i < s->n_exclude_files; i++)
        if ((rc = zq_glob_to_regex(s->exclude_files[i], ZQ_ANCHOR_PATH, &excl[i], err))) {
            zk_err_prefix(err, "exclude_file");
            goto out;
        }

    filters = s->n_repos || s->n_files || s->n_exclude_files || s->case_sensitive || s->branch;
    if (qlen && s->syntax != ZQ_SYNTAX_ZOEKT) {
        rc = zq_put_pattern(&b, q, qlen, s->syntax);
    } else if (qlen) {
        char *uq = mem_strndup(q, qlen);
        int wrap = filters && zq_has_several_tokens(uq);
        struct zq_parens pa;
        struct zk_err why = {0};

        rc = zq_check_parens(uq, qlen, &pa, &why);
        /* A term that leaves a '(' open inside itself takes in what follows it up to a ')': a blank
         * after it ends it, unless its text begins with '(', which then opens a group instead. */
        if (!rc && filters && pa.last_open > 0 && pa.last_starts_open)
            rc = zk_err_set(&why, ZK_EINVAL, "its last term, at position %zu, leaves a '(' open inside "
                                             "itself, which would take in the filters (write a literal "
                                             "parenthesis as \\( or \\))", pa.last_start + 1);
        if (!rc)
            rc = wrap ? zq_wrap(&b, uq, &why) : buf_puts(&b, uq);
        if (rc == ZK_EINVAL) {
            zk_err_set(err, rc, "query \"%.120s\": %s; it was not sent (fix the query; %s while it is unchanged)",
                       uq, why.msg, zk_err_retry_advice(rc));
            free(uq);
            goto out;
        }
        /* Zoekt applies the outermost case: to everything inside parentheses, so a case: the user
         * wrote would be overridden by the (implicit) top-level default unless it is repeated there.
         * Only one of Zoekt's three values is: anything else (case:yes"a) is an error to Zoekt, which
         * says so, and repeated outside its quotes it would be one of another kind. */
        if (!rc && wrap && !s->case_sensitive && zq_find_atom(uq, "case:", user_case, sizeof(user_case)) &&
            (!strcmp(user_case, "yes") || !strcmp(user_case, "no") || !strcmp(user_case, "auto")))
            rc = buf_printf(&b, " case:%s", user_case);
        free(uq);
    }
    if (!rc && s->n_repos)
        rc = zq_put_alternatives(&b, "repo", repos, s->n_repos);
    if (!rc && s->n_files)
        rc = zq_put_alternatives(&b, "file", files, s->n_files);
    for (size_t i = 0; !rc && i < s->n_exclude_files; i++)
        rc = buf_printf(&b, " -file:%s", excl[i]);
    if (!rc && s->branch)
        rc = buf_printf(&b, " branch:%s", s->branch);
    if (!rc && s->case_sensitive)
        rc = buf_puts(&b, " case:yes");
    else if (!rc && qlen && s->syntax == ZQ_SYNTAX_REGEX && zq_pattern_needs_case_no(q, qlen))
        rc = buf_puts(&b, " case:no");
    if (rc) {
        zk_err_set(err, rc, "the query with its filters is longer than %d bytes", ZQ_MAX);
        goto out;
    }
    *out = buf_steal(&b);
    goto out;

fail_arg:
    zk_err_prefix(err, "repo");
out:
    buf_free(&b);
    zq_free_list(repos, s->n_repos);
    zq_free_list(files, s->n_files);
    zq_free_list(excl, s->n_exclude_files);
    return rc;
}

int zq_uses_symbols(const char *query)
{
    char value[4097]; /* a query is at most 4096 bytes */

    return query && zq_find_atom(query, "sym:", value, sizeof(value));
}

const char *zq_lint(const char *query)
{
    static const struct {
        const char *token;
        const char *hint;
    } bad[] = {
        {"AND", "Zoekt has no AND operator: terms separated by spaces must all match; \"AND\" was searched as text."},
        {"and", "Zoekt has no \"and\" operator: terms separated by spaces must all match; \"and\" was searched as text."},
        {"&&", "Zoekt has no \"&&\" operator: terms separated by spaces must all match."},
        {"OR", "Zoekt's OR is lower-case \"or\"; upper-case \"OR\" was searched as text."},
        {"||", "Zoekt's OR is the lower-case word \"or\", not \"||\"."},
        {"NOT", "Zoekt negates with a leading '-' (e.g. -file:test), not NOT; \"NOT\" was searched as text."},
    };
    const char *p = query;
    int quoted = 0;

    if (!query)
        return NULL;
    while (*p) {
        const char *start;
        size_t len;

        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        start = p;
        while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                quoted = !quoted;
            p++;
        }
        len = (size_t)(p - start);
        for (size_t i = 0; len && i < sizeof(bad) / sizeof(bad[0]); i++)
            if (strlen(bad[i].token) == len && strncmp(start, bad[i].token, len) == 0)
                return bad[i].hint;
    }
    return NULL;
}
