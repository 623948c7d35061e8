/* fuzz_hostapi.c: one answer of a code host's repository listing (controller/sources/hostapi.h) and
 * what controller/sources/repolist.h makes of it, since every byte comes from the host (or whoever
 * answers in its name).
 *
 * Input: byte 0 chooses the host (mod 3) and the status (byte / 3 mod 6: 200, 304, 403, 429, 404, 503);
 * then header lines separated by '\n' up to the first empty line, then the body. Asserted:
 * - every header kept is NUL-terminated within its buffer, without control bytes; the counts are -1
 *   or a number of at most 18 digits; hapi_link_next agrees with the meta on a single Link header;
 * - hapi_page_read gives ZK_OK or one of the codes hapi.h lists; on failure the listing is as it was
 *   and no next URL is given; on success at most HAPI_MAX_PAGE_REPOS repositories, each with a name of
 *   1..HAPI_MAX_NAME bytes, an https clone URL the spec accepts, one visibility bit, and a next URL,
 *   when there is one, that starts with the base URL followed by '/' or '?';
 * - hapi_wait_until is 0 or within (now, now + HAPI_MAX_WAIT_SECONDS];
 * - the grace set of the page is sorted by key without repeats, and its merge with one explicit
 *   repository holds distinct names the spec accepts, sorted, the explicit one among them, each with
 *   an https address and a code host kind or neither. */
#include "tests/fuzz/fuzz.h"

#include "controller/sources/hostapi.h"
#include "controller/sources/repolist.h"

#include <string.h>

static const struct hapi_source sources[] = {
    {HAPI_GITHUB, NULL, "acme", 0, 0},
    {HAPI_GITLAB, "https://gitlab.example.com/api/v4", "acme", 0, 0},
    {HAPI_GITEA, "https://git.example.org/api/v1", "acme", 1, 0},
};
static const char *const bases[] = {"https://api.github.com", "https://gitlab.example.com/api/v4",
                                    "https://git.example.org/api/v1"};
static const long statuses[] = {200, 304, 403, 429, 404, 503};

static int clean(const char *s, size_t size)
{
    size_t n = strnlen(s, size);

    if (n == size)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

static void check_set_and_merge(const struct hapi_repos *acc)
{
    static char *none[] = {NULL};
    const struct corpus_repo explicit_repo = {"https://github.com/acme/listed.git", "github.com/acme/listed", none,
                                              NULL, NULL};
    struct rlist_set s;
    const struct rlist_set *sets[] = {&s};
    struct corpus_repo *out = NULL;
    struct zk_err err = {0};
    size_t dropped = 0;
    int n = 0, seen = 0;
    char a[HAPI_MAX_URL + 1], b[HAPI_MAX_URL + 1];

    rlist_grace(NULL, acc, 1000, 60, &s);
    FUZZ_CHECK(s.n <= acc->n);
    for (size_t i = 1; i < s.n; i++) {
        FUZZ_CHECK(rlist_key(s.items[i - 1].repo.clone_url, a, sizeof(a)));
        FUZZ_CHECK(rlist_key(s.items[i].repo.clone_url, b, sizeof(b)));
        FUZZ_CHECK(strcmp(a, b) < 0);
    }
    FUZZ_CHECK(rlist_merge(&explicit_repo, 1, sets, 1, &out, &n, &dropped, &err) == ZK_OK);
    FUZZ_CHECK((size_t)n + dropped <= s.n + 1);
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(spec_repo_name_ok(out[i].name) || strcmp(out[i].name, explicit_repo.name) == 0);
        FUZZ_CHECK(i == 0 || strcmp(out[i - 1].name, out[i].name) < 0);
        FUZZ_CHECK(!out[i].web_url == !out[i].code_host);
        FUZZ_CHECK(!out[i].web_url || strncmp(out[i].web_url, "https://", 8) == 0);
        seen |= strcmp(out[i].url, explicit_repo.url) == 0;
    }
    FUZZ_CHECK(seen);
    rlist_repos_free(out, n);
    rlist_set_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *end, *line, *body;
    const struct hapi_source *src;
    const char *base;
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL, link[HAPI_MAX_URL + 1];
    int rc, links = 0, link_rc = ZK_OK;
    long status;
    time_t until, now = 1796300000;

    if (size < 1)
        return 0;
    src = &sources[data[0] % 3];
    base = bases[data[0] % 3];
    status = statuses[(data[0] / 3) % 6];
    text++;
    end = (const char *)data + size;
    hapi_meta_init(&m);
    link[0] = '\0';
    for (line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = (size_t)((nl ? nl : end) - line);

        if (n == 0) {
            line = nl + 1;
            break;
        }
        hapi_meta_header(&m, line, n);
        if (n > 5 && strncasecmp(line, "link:", 5) == 0) {
            links++;
            link_rc = hapi_link_next(line + 5, n - 5, link, sizeof(link));
        }
        line = nl ? nl + 1 : end;
    }
    body = line < end ? line : end;

    FUZZ_CHECK(clean(m.next, sizeof(m.next)) && !strchr(m.next, ' '));
    FUZZ_CHECK(clean(m.etag, sizeof(m.etag)));
    FUZZ_CHECK(clean(m.retry_after, sizeof(m.retry_after)));
    FUZZ_CHECK(m.remaining >= -1 && m.remaining <= 999999999999999999LL);
    FUZZ_CHECK(m.reset >= -1 && m.reset <= 999999999999999999LL);
    /* With one Link header, the meta holds exactly what hapi_link_next reads from it (trailing blanks
     * and the line's end are the meta's to trim, and hapi_link_next skips them as blank list items
     * when they are spaces: only a clean line compares). */
    if (links == 1 && !memchr(text, '\r', (size_t)(body - text)))
        FUZZ_CHECK(m.link_bad == (link_rc != ZK_OK) && (m.link_bad || strcmp(m.next, link) == 0));

    rc = hapi_page_read(src, status, &m, body, (size_t)(end - body), &acc, &outcome, &next, &err);
    FUZZ_CHECK(rc == ZK_OK || rc == ZK_EBUSY || rc == ZK_EHTTP || rc == ZK_ESERVER || rc == ZK_EPARSE ||
               rc == ZK_ETOOBIG);
    if (rc != ZK_OK) {
        FUZZ_CHECK(acc.n == 0 && acc.skipped == 0 && next == NULL && err.msg[0]);
    } else {
        FUZZ_CHECK(acc.n <= HAPI_MAX_PAGE_REPOS);
        FUZZ_CHECK((outcome == HAPI_MORE) == (next != NULL));
        if (next) {
            size_t bl = strlen(base);

            FUZZ_CHECK(strncmp(next, base, bl) == 0 && (next[bl] == '/' || next[bl] == '?'));
        }
        for (size_t i = 0; i < acc.n; i++) {
            const struct hapi_repo *r = &acc.items[i];
            size_t nl = strlen(r->full_name);

            FUZZ_CHECK(nl >= 1 && nl <= HAPI_MAX_NAME);
            FUZZ_CHECK(strncmp(r->clone_url, "https://", 8) == 0 && spec_url_problem(r->clone_url) == NULL);
            FUZZ_CHECK(r->visibility == HAPI_PUBLIC || r->visibility == HAPI_PRIVATE ||
                       r->visibility == HAPI_INTERNAL);
            FUZZ_CHECK(strlen(r->web_url) <= HAPI_MAX_URL && strlen(r->default_branch) <= HAPI_MAX_BRANCH);
        }
        check_set_and_merge(&acc);
    }
    until = hapi_wait_until(&m, status, now);
    FUZZ_CHECK(until == 0 || (until > now && until <= now + HAPI_MAX_WAIT_SECONDS));
    free(next);
    hapi_repos_free(&acc);
    return 0;
}
