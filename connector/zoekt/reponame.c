/* reponame.c: see reponame.h. */
#include "connector/zoekt/reponame.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Matching steps one zn_matches call may take. A glob with many stars can backtrack a great deal; the
 * bound keeps one call cheap whatever an agent sends, and is far above what real names need. */
#define ZN_GLOB_STEPS 200000
/* Bytes of a name or pattern compared for suggestions; the distance table grows with their product. */
#define ZN_DIST_MAX 128

int zn_is_glob(const char *pattern)
{
    return strpbrk(pattern, "*?[{") != NULL;
}

/* Whether s looks like "user@host:path", the form git uses for SSH remotes. */
static int zn_is_scp_like(const char *s)
{
    size_t at = strcspn(s, "@/:");

    if (s[at] != '@' || at == 0)
        return 0;
    s += at + 1;
    at = strcspn(s, "/:");
    return at > 0 && s[at] == ':';
}

int zn_normalize(const char *arg, char *out, size_t size, struct zk_err *err)
{
    const char *s = arg ? arg : "", *scheme;
    size_t len, host_len;
    int is_url = 0;

    while (isspace((unsigned char)*s))
        s++;
    len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len > ZN_ARG_MAX || len >= size)
        return zk_err_set(err, ZK_EINVAL, "repository name longer than %d bytes", ZN_ARG_MAX);
    memcpy(out, s, len);
    out[len] = '\0';

    scheme = strstr(out, "://");
    if (scheme && scheme > out && strcspn(out, "/") == (size_t)(scheme - out) + 1) {
        /* scheme://[user@]host[:port]/path: keep host and path. */
        const char *h = scheme + 3, *path;

        if (strcspn(h, "@/") < strcspn(h, "/"))
            h += strcspn(h, "@") + 1;
        path = h + strcspn(h, "/");
        host_len = strcspn(h, ":/");
        memmove(out, h, host_len);
        memmove(out + host_len, path, strlen(path) + 1);
        is_url = 1;
    } else if (zn_is_scp_like(out)) {
        /* user@host:path: the host, a slash, the path. */
        char *h = out + strcspn(out, "@") + 1;

        host_len = strcspn(h, ":");
        memmove(out, h, host_len);
        out[host_len] = '/';
        memmove(out + host_len + 1, h + host_len + 1, strlen(h + host_len + 1) + 1);
        is_url = 1;
    }
    len = strlen(out);
    while (len && out[len - 1] == '/')
        out[--len] = '\0';
    if (is_url && len > 4 && strcmp(out + len - 4, ".git") == 0)
        out[len -= 4] = '\0';
    while (len && out[len - 1] == '/')
        out[--len] = '\0';
    len = strspn(out, "/");
    memmove(out, out + len, strlen(out + len) + 1);
    if (!out[0])
        return zk_err_set(err, ZK_EINVAL, "empty repository name \"%.100s\"", arg ? arg : "");
    return ZK_OK;
}

/* Length of the UTF-8 character starting at s (1 for a byte that does not start a valid sequence), so
 * that "?" consumes one character as the regex it becomes does. */
static size_t zn_char_len(const char *s)
{
    unsigned char c = (unsigned char)*s;
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

    for (size_t i = 1; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            return 1;
    return n;
}

/* Matches the class starting at g ('[') against the byte c. Returns the class's length in the glob, or
 * 0 when it is not closed; *hit says whether c is a member. The syntax is query.c's. */
static size_t zn_class(const char *g, unsigned char c, int *hit)
{
    size_t j = 1;
    int negate = 0, in = 0;

    if (g[j] == '!' || g[j] == '^') {
        negate = 1;
        j++;
    }
    if (g[j] == ']') {
        in |= c == ']';
        j++;
    }
    while (g[j] && g[j] != ']') {
        unsigned char lo = (unsigned char)g[j];

        if (lo == '\\' && g[j + 1])
            lo = (unsigned char)g[++j];
        j++;
        if (g[j] == '-' && g[j + 1] && g[j + 1] != ']') {
            unsigned char hi = (unsigned char)g[j + 1];

            j += 2;
            if (hi == '\\' && g[j])
                hi = (unsigned char)g[j++];
            in |= c >= lo && c <= hi;
        } else {
            in |= c == lo;
        }
    }
    if (g[j] != ']')
        return 0;
    *hit = in != negate;
    return j + 1;
}

/* The length of the class starting at g ('['), or 0 when it is not closed. */
static size_t zn_class_len(const char *g)
{
    int hit;

    return zn_class(g, 0, &hit);
}

static int zn_glob(const char *g, const char *ge, const char *s, const char *se, long *steps);

/* Matches "{a,b}rest" at g (up to ge) against s..se: an alternative against a first part of the text,
 * the rest of the glob against what follows it. They are matched apart, never pasted together, because
 * "{x*,y}*" is two runs within a segment, not "**". */
static int zn_braces(const char *g, const char *ge, const char *s, const char *se, long *steps)
{
    const char *start = g + 1, *p, *end;
    int depth = 0;

    /* Find the closing brace first: the rest of the glob follows it. A class is one member whatever
     * it holds ("{[,}],x}" has two alternatives), as in query.c. */
    for (end = start; end < ge && !(*end == '}' && depth == 0); end++) {
        if (*end == '\\' && end + 1 < ge)
            end++;
        else if (*end == '[')
            end += zn_class_len(end) ? zn_class_len(end) - 1 : 0;
        else if (*end == '{')
            depth++;
        else if (*end == '}')
            depth--;
    }
    if (end >= ge)
        return 0;
    for (p = start;; p++) {
        if (*p == '\\' && p + 1 < end) {
            p++;
        } else if (*p == '[') {
            p += zn_class_len(p) ? zn_class_len(p) - 1 : 0;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && depth > 0) {
            depth--;
        } else if ((*p == ',' && depth == 0) || p == end) {
            for (const char *cut = s; cut <= se; cut++)
                if (zn_glob(start, p, s, cut, steps) && zn_glob(end + 1, ge, cut, se, steps))
                    return 1;
            if (p == end)
                return 0;
            start = p + 1;
        }
    }
}

/* Whether the glob g..ge matches all of s..se. */
static int zn_glob(const char *g, const char *ge, const char *s, const char *se, long *steps)
{
    for (;;) {
        if (++*steps > ZN_GLOB_STEPS)
            return 0;
        if (g == ge)
            return s == se;
        switch (*g) {
        case '*': {
            const char *rest;
            size_t k = 1;

            while (g + k < ge && g[k] == '*')
                k++;
            if (k == 2 && g + 2 < ge && g[2] == '/') {
                /* "**" + "/": zero or more whole directories. */
                if (zn_glob(g + 3, ge, s, se, steps))
                    return 1;
                for (const char *p = s; p < se; p++)
                    if (*p == '/' && zn_glob(g + 3, ge, p + 1, se, steps))
                        return 1;
                return 0;
            }
            if (k == 1) {
                for (const char *p = s;; p++) {
                    if (zn_glob(g + 1, ge, p, se, steps))
                        return 1;
                    if (p == se || *p == '/')
                        return 0;
                }
            }
            /* A run of stars reads as pairs ("**", any text) and maybe a last single star, as query.c
             * translates it; after one "**" the others add nothing, so the run is one "**". Only an
             * even number after the first pair, then "/", swallows that "/" into "(.*\/)?". */
            rest = g + k;
            if (k >= 4 && k % 2 == 0 && rest < ge && *rest == '/')
                rest++;
            for (const char *p = s;; p++) {
                if (zn_glob(rest, ge, p, se, steps))
                    return 1;
                if (p == se)
                    return 0;
            }
        }
        case '?':
            if (s == se || *s == '/')
                return 0;
            s += zn_char_len(s);
            if (s > se)
                return 0;
            g++;
            break;
        case '[': {
            int hit = 0;
            size_t n = s < se ? zn_class(g, (unsigned char)*s, &hit) : 0;

            if (!n || !hit || g + n > ge)
                return 0;
            g += n;
            s++;
            break;
        }
        case '{':
            return zn_braces(g, ge, s, se, steps);
        default:
            /* A backslash makes the next character literal. */
            if (*g == '\\' && g + 1 < ge)
                g++;
            if (s == se || *g != *s)
                return 0;
            g++;
            s++;
        }
    }
}

int zn_matches_bounded(const char *pattern, const char *name)
{
    int glob = zn_is_glob(pattern);
    long steps = 0;

    for (const char *s = name; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL) {
        if (glob ? zn_glob(pattern, pattern + strlen(pattern), s, s + strlen(s), &steps)
                 : strcmp(pattern, s) == 0)
            return 1;
    }
    return steps > ZN_GLOB_STEPS ? -1 : 0;
}

int zn_matches(const char *pattern, const char *name)
{
    return zn_matches_bounded(pattern, name) == 1;
}

/* Copies at most ZN_DIST_MAX bytes of s, lower-cased and without glob characters, into out. */
static size_t zn_fold(const char *s, char *out)
{
    size_t n = 0;

    for (; *s && n < ZN_DIST_MAX; s++)
        if (!strchr("*?[]{}", *s))
            out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
    return n;
}

/* The Levenshtein distance between a (la bytes) and b (lb bytes), both at most ZN_DIST_MAX. */
static size_t zn_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t row[ZN_DIST_MAX + 1];

    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];

        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Whether the folded strings a and b have a path segment in common. */
static int zn_share_segment(const char *a, const char *b)
{
    for (const char *p = a; *p; p += strcspn(p, "/"), p += *p == '/') {
        size_t n = strcspn(p, "/");

        for (const char *q = b; *q; q += strcspn(q, "/"), q += *q == '/')
            if (n && strcspn(q, "/") == n && strncmp(p, q, n) == 0)
                return 1;
    }
    return 0;
}

/* The last path segment of s. */
static const char *zn_last_segment(const char *s)
{
    const char *slash = strrchr(s, '/');

    return slash ? slash + 1 : s;
}

/* How far name is from the folded pattern p (lp bytes): 0 when both end in the same segment (a clone
 * URL from another host names the same project: github.com/kubernetes/client-go is k8s.io/client-go),
 * else the smallest distance to the name or one of its trailing segments, or (size_t)-1 when it is no
 * candidate at all. */
static size_t zn_score(const char *p, size_t lp, const char *name)
{
    char n[ZN_DIST_MAX + 1];
    size_t ln = zn_fold(name, n), best = (size_t)-1;

    if (*zn_last_segment(p) && strcmp(zn_last_segment(p), zn_last_segment(n)) == 0)
        return 0;

    for (const char *s = n; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL) {
        size_t d = zn_distance(p, lp, s, ln - (size_t)(s - n));

        if (d < best)
            best = d;
    }
    if (best <= (lp / 3 > 2 ? lp / 3 : 2) || strstr(n, p) || zn_share_segment(p, n))
        return best;
    return (size_t)-1;
}

size_t zn_suggest(const char *pattern, const char *const *names, size_t n, size_t *out, size_t max)
{
    char p[ZN_DIST_MAX + 1];
    size_t lp = zn_fold(pattern, p), score[ZN_SUGGEST_MAX], k = 0;

    if (max > ZN_SUGGEST_MAX)
        max = ZN_SUGGEST_MAX;
    if (!lp)
        return 0;
    /* Insertion into a short sorted list: n is at most a few thousand and max is 5. */
    for (size_t i = 0; i < n; i++) {
        size_t s = zn_score(p, lp, names[i]), j;

        if (s == (size_t)-1 || (k == max && s >= score[k - 1]))
            continue;
        j = k < max ? k++ : k - 1;
        while (j > 0 && score[j - 1] > s) {
            score[j] = score[j - 1];
            out[j] = out[j - 1];
            j--;
        }
        score[j] = s;
        out[j] = i;
    }
    return k;
}
