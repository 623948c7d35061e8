/* fuzz_auth.c: bearer-token files and Authorization headers (connector/auth.h), both of which an
 * operator or a client controls.
 *
 * Input: a token file's content (so it holds no NUL), a NUL byte, then an Authorization header value (without the NUL, the
 * whole input is the file and the header is empty). The file is written to a temporary path and loaded
 * with auth_new; a plain reference reading of the same text (lines, trimmed, blank and '#' lines
 * skipped) says which tokens must be accepted. Asserted:
 * - auth_new succeeds exactly when the reference finds between 1 and AUTH_TOKENS_MAX tokens, and
 *   otherwise fails with ZK_EINVAL (none) or ZK_ETOOBIG (too many), a message, and no checker;
 * - auth_bearer_token finds the same token as the reference parser of the header (scheme "Bearer" in
 *   any case, then blanks, trimmed), pointing into the header;
 * - auth_check_header accepts the header exactly when its token is one of the file's tokens, and
 *   accepts "Bearer <t>" and "bearer\t<t>  " for every token t of the file. */
#include "tests/fuzz/fuzz.h"

#include "connector/auth.h"
#include "err.h"

#include <string.h>
#include <strings.h>
#include <unistd.h>

struct tok {
    const char *p;
    size_t n;
};

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* The tokens of a token file, the obvious way. Returns how many were found (at most max stored). */
static size_t ref_tokens(const char *s, size_t n, struct tok *out, size_t max)
{
    size_t i = 0, count = 0, a, b;

    while (i < n) {
        a = i;
        while (i < n && s[i] != '\n')
            i++;
        b = i++;
        while (a < b && blank(s[a]))
            a++;
        while (b > a && blank(s[b - 1]))
            b--;
        if (a == b || s[a] == '#')
            continue;
        if (count < max)
            out[count] = (struct tok){s + a, b - a};
        count++;
    }
    return count;
}

/* The bearer token of a header, the obvious way; p NULL when there is none. */
static struct tok ref_bearer(const char *h)
{
    struct tok t = {NULL, 0};
    size_t n;

    h += strspn(h, " \t");
    if (strncasecmp(h, "bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
        return t;
    h += 6;
    h += strspn(h, " \t");
    n = strlen(h);
    while (n > 0 && blank(h[n - 1]))
        n--;
    if (n > 0)
        t = (struct tok){h, n};
    return t;
}

static int listed(const struct tok *toks, size_t n, const char *p, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (toks[i].n == len && memcmp(toks[i].p, p, len) == 0)
            return 1;
    return 0;
}

/* Whether "<scheme><t><tail>" is accepted, t given as pointer and length. */
static int accepts(struct auth *a, const char *scheme, const struct tok *t, const char *tail)
{
    size_t n = strlen(scheme) + t->n + strlen(tail) + 1;
    char *h = malloc(n);
    int ok;

    FUZZ_CHECK(h != NULL);
    snprintf(h, n, "%s%.*s%s", scheme, (int)t->n, t->p, tail);
    ok = auth_check_header(a, h);
    free(h);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tok toks[AUTH_TOKENS_MAX + 1];
    const char *text = (const char *)data, *nul = memchr(data, '\0', size);
    size_t text_len = nul != NULL ? (size_t)(nul - text) : size, n, i, len = 0;
    char path[64], *header;
    struct auth *a = NULL;
    struct zk_err err;
    struct tok want;
    const char *got;
    FILE *f;
    int rc;

    header = nul != NULL ? strndup(nul + 1, size - text_len - 1) : strdup("");
    FUZZ_CHECK(header != NULL);

    /* The header alone. */
    want = ref_bearer(header);
    got = auth_bearer_token(header, &len);
    FUZZ_CHECK(got == want.p && (got == NULL || len == want.n));
    FUZZ_CHECK(auth_check_header(NULL, header) == 1);

    /* The token file, through the file system as the connector reads it. */
    snprintf(path, sizeof(path), "/tmp/fuzz_auth.%ld", (long)getpid());
    f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL && fwrite(text, 1, text_len, f) == text_len && fclose(f) == 0);
    zk_err_clear(&err);
    rc = auth_new(path, NULL, 1e9, &a, &err);
    unlink(path);
    n = ref_tokens(text, text_len, toks, AUTH_TOKENS_MAX + 1);
    if (n == 0 || n > AUTH_TOKENS_MAX) {
        FUZZ_CHECK(rc == (n == 0 ? ZK_EINVAL : ZK_ETOOBIG) && a == NULL && err.msg[0] != '\0');
        free(header);
        return 0;
    }
    FUZZ_CHECK(rc == ZK_OK && a != NULL && auth_enabled(a));
    FUZZ_CHECK(auth_check_header(a, header) == (want.p != NULL && listed(toks, n, want.p, want.n)));
    for (i = 0; i < n && i < 32; i++) {
        FUZZ_CHECK(accepts(a, "Bearer ", &toks[i], ""));
        FUZZ_CHECK(accepts(a, " bearer\t", &toks[i], " \r\n"));
    }
    auth_free(a);
    free(header);
    return 0;
}
