/* hostapi.c: see hostapi.h. */
#include "controller/sources/hostapi.h"

#include "controller/corpus/spec.h"
#include "http.h"
#include "json.h"
#include "mem.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HAPI_GITHUB_API "https://api.github.com"
/* GitHub's REST API version this module reads; GitHub answers an unversioned request with its oldest
 * supported version, which may change shape before this one does. */
#define HAPI_GITHUB_API_VERSION "2022-11-28"

/* ---- strings ------------------------------------------------------------------------------------ */

/* Whether the n bytes at s hold a control character, which would end or split a header line. */
static int has_ctl(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 1;
    return 0;
}

/* The length of url's origin ("https://host:port"), or 0 when url is not an http(s) URL with a host. */
static size_t origin_len(const char *url)
{
    size_t skip;

    if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else
        return 0;
    return url[skip] && url[skip] != '/' ? skip + strcspn(url + skip, "/?#") : 0;
}

/* The host and port of an http(s) URL without user information: *n bytes at the result, or NULL. */
static const char *authority(const char *url, size_t *n)
{
    size_t end = origin_len(url);
    const char *a, *at;

    if (!end)
        return NULL;
    a = strstr(url, "://") + 3;
    at = memchr(a, '@', (size_t)(url + end - a));
    if (at)
        a = at + 1;
    *n = (size_t)(url + end - a);
    return a;
}

/* "GitHub organisation acme": what error messages call src. */
static void src_what(const struct hapi_source *src, char *dst, size_t size)
{
    static const char *const hosts[] = {"GitHub", "GitLab", "Gitea"};
    const char *whose = src->user ? "user" : src->kind == HAPI_GITLAB ? "group" : "organisation";

    snprintf(dst, size, "%s %s %.200s", hosts[src->kind], whose, src->owner ? src->owner : "");
}

/* src's API base URL, GitHub.com's when a GitHub source names none; NULL when another host's is missing. */
static const char *base_of(const struct hapi_source *src)
{
    return src->base_url ? src->base_url : src->kind == HAPI_GITHUB ? HAPI_GITHUB_API : NULL;
}

/* ---- requests ----------------------------------------------------------------------------------- */

/* The first page's path and query after the base URL, for owner already escaped. GitHub and GitLab
 * are asked for the oldest repositories first, so that a new repository lands on the last page and the
 * earlier pages keep their ETags. A GitHub user's listing keeps to the repositories the user owns
 * (type=owner), whose full names start with the user's; type=all would add other owners' repositories
 * the user only collaborates on. GitLab leaves out projects other groups share into the group
 * (with_shared=false), which belong to those groups' listings. */
static char *first_path(const struct hapi_source *src, const char *owner)
{
    switch (src->kind) {
    case HAPI_GITHUB:
        return mem_printf("/%s/%s/repos?type=%s&sort=created&direction=asc&per_page=100", src->user ? "users" : "orgs",
                          owner, src->user ? "owner" : "all");
    case HAPI_GITLAB:
        return mem_printf("/%s/%s/projects?%sper_page=100&order_by=id&sort=asc%s", src->user ? "users" : "groups",
                          owner, src->user ? "" : "include_subgroups=true&with_shared=false&",
                          src->archived ? "" : "&archived=false");
    case HAPI_GITEA:
        break;
    }
    return mem_printf("/%s/%s/repos?limit=50&page=1", src->user ? "users" : "orgs", owner);
}

int hapi_request_page(const struct hapi_source *src, const char *url, const char *token, const char *etag,
                      struct hapi_request *out, struct zk_err *err)
{
    const char *base = base_of(src);
    char what[300];
    size_t blen;
    int h = 0;

    memset(out, 0, sizeof(*out));
    src_what(src, what, sizeof(what));
    if (!base || !origin_len(base))
        return zk_err_set(err, ZK_EINVAL, "%s: the API's base URL must be an http(s) URL with a host", what);
    if (!src->owner || !*src->owner)
        return zk_err_set(err, ZK_EINVAL, "%s: no owner to list", what);
    if (token && (strlen(token) > HAPI_MAX_TOKEN || has_ctl(token, strlen(token))))
        return zk_err_set(err, ZK_EINVAL, "%s: the token is longer than %d bytes or holds control characters",
                          what, HAPI_MAX_TOKEN);
    if (etag && (strlen(etag) > HAPI_MAX_ETAG || has_ctl(etag, strlen(etag))))
        return zk_err_set(err, ZK_EINVAL, "%s: the stored ETag is longer than %d bytes or holds control characters",
                          what, HAPI_MAX_ETAG);
    blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    if (url) {
        size_t o = origin_len(base);

        if (origin_len(url) != o || strncasecmp(url, base, o) != 0 || has_ctl(url, strlen(url)))
            return zk_err_set(err, ZK_EINVAL, "%s: the page URL %.200s is not on the API's origin %.*s", what, url,
                              (int)o, base);
        out->url = mem_strdup(url);
    } else {
        char *owner = http_escape(src->owner);
        char *path = first_path(src, owner);

        out->url = mem_printf("%.*s%s", (int)blen, base, path);
        free(path);
        free(owner);
    }
    switch (src->kind) {
    case HAPI_GITHUB:
        out->accept = "application/vnd.github+json";
        out->headers[h++] = mem_strdup("X-GitHub-Api-Version: " HAPI_GITHUB_API_VERSION);
        if (token && *token)
            out->headers[h++] = mem_printf("Authorization: Bearer %s", token);
        break;
    case HAPI_GITLAB:
        out->accept = "application/json";
        if (token && *token)
            out->headers[h++] = mem_printf("PRIVATE-TOKEN: %s", token);
        break;
    case HAPI_GITEA:
        out->accept = "application/json";
        if (token && *token)
            out->headers[h++] = mem_printf("Authorization: token %s", token);
        break;
    }
    if (etag && *etag)
        out->headers[h++] = mem_printf("If-None-Match: %s", etag);
    out->max_body = HAPI_MAX_BODY;
    return ZK_OK;
}

void hapi_request_free(struct hapi_request *r)
{
    free(r->url);
    for (int i = 0; r->headers[i]; i++)
        free(r->headers[i]);
    memset(r, 0, sizeof(*r));
}

/* ---- headers ------------------------------------------------------------------------------------ */

void hapi_meta_init(struct hapi_meta *m)
{
    memset(m, 0, sizeof(*m));
    m->remaining = -1;
    m->reset = -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* A header's decimal value: 1 to 18 digits (so that it fits a long long), else -1. */
static long long header_number(const char *v, size_t n)
{
    long long x = 0;

    if (n == 0 || n > 18)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

/* Copies n bytes of v into dst (size bytes) when they fit and hold no control character; else leaves
 * dst empty, so that a value that cannot be kept whole is not kept at all. */
static void keep(char *dst, size_t size, const char *v, size_t n)
{
    dst[0] = '\0';
    if (n < size && !has_ctl(v, n)) {
        memcpy(dst, v, n);
        dst[n] = '\0';
    }
}

static int name_is(const char *name, size_t n, const char *want)
{
    return n == strlen(want) && strncasecmp(name, want, n) == 0;
}

void hapi_meta_header(struct hapi_meta *m, const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    size_t n, vn;
    const char *v;

    if (!colon)
        return;
    n = (size_t)(colon - line);
    v = colon + 1;
    vn = len - n - 1;
    while (vn > 0 && is_space(*v))
        v++, vn--;
    while (vn > 0 && (is_space(v[vn - 1]) || v[vn - 1] == '\r' || v[vn - 1] == '\n'))
        vn--;
    if (name_is(line, n, "link")) {
        char next[HAPI_MAX_URL + 1];

        if (hapi_link_next(v, vn, next, sizeof(next)) != ZK_OK || (next[0] && m->next[0] && strcmp(next, m->next)))
            m->link_bad = 1;
        else if (next[0])
            memcpy(m->next, next, strlen(next) + 1);
    } else if (name_is(line, n, "etag")) {
        keep(m->etag, sizeof(m->etag), v, vn);
    } else if (name_is(line, n, "retry-after")) {
        keep(m->retry_after, sizeof(m->retry_after), v, vn);
    } else if (name_is(line, n, "x-ratelimit-remaining") || name_is(line, n, "ratelimit-remaining")) {
        m->remaining = header_number(v, vn);
    } else if (name_is(line, n, "x-ratelimit-reset") || name_is(line, n, "ratelimit-reset")) {
        m->reset = header_number(v, vn);
    }
}

/* RFC 9110's token characters, which parameter names and unquoted values are made of. */
static int is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Whether the relation types of a rel value (space-separated, n bytes at v) include "next". */
static int rel_has_next(const char *v, size_t n)
{
    size_t i = 0;

    while (i < n) {
        size_t start;

        while (i < n && v[i] == ' ')
            i++;
        start = i;
        while (i < n && v[i] != ' ')
            i++;
        if (i - start == 4 && strncasecmp(v + start, "next", 4) == 0)
            return 1;
    }
    return 0;
}

int hapi_link_next(const char *v, size_t len, char *out, size_t size)
{
    size_t i = 0;

    out[0] = '\0';
    for (;;) {
        const char *target;
        size_t tlen;
        int next = 0;

        /* The list may hold empty elements (RFC 9110's #rule): stray commas are not errors. */
        while (i < len && (is_space(v[i]) || v[i] == ','))
            i++;
        if (i == len)
            return ZK_OK;
        if (v[i] != '<')
            return ZK_EPARSE;
        target = v + i + 1;
        while (i < len && v[i] != '>')
            i++;
        if (i == len)
            return ZK_EPARSE;
        tlen = (size_t)(v + i - target);
        i++;
        for (;;) {
            size_t name, nlen, val, vlen;

            while (i < len && is_space(v[i]))
                i++;
            if (i == len || v[i] == ',')
                break;
            if (v[i] != ';')
                return ZK_EPARSE;
            i++;
            while (i < len && is_space(v[i]))
                i++;
            for (name = i; i < len && is_tchar(v[i]); i++)
                ;
            nlen = i - name;
            if (nlen == 0)
                return ZK_EPARSE;
            while (i < len && is_space(v[i]))
                i++;
            val = vlen = 0;
            if (i < len && v[i] == '=') {
                i++;
                while (i < len && is_space(v[i]))
                    i++;
                if (i < len && v[i] == '"') {
                    /* A quoted value; a backslash escapes the next byte, so the value ends at the
                     * first quote that is not escaped. Relation types hold no backslash. */
                    val = ++i;
                    while (i < len && v[i] != '"')
                        i += v[i] == '\\' ? 2 : 1;
                    if (i >= len)
                        return ZK_EPARSE;
                    vlen = i++ - val;
                } else {
                    for (val = i; i < len && is_tchar(v[i]); i++)
                        ;
                    vlen = i - val;
                    if (vlen == 0)
                        return ZK_EPARSE;
                }
            }
            if (nlen == 3 && strncasecmp(v + name, "rel", 3) == 0 && rel_has_next(v + val, vlen))
                next = 1;
        }
        if (!next)
            continue;
        if (tlen == 0 || tlen >= size || has_ctl(target, tlen) || memchr(target, ' ', tlen))
            return ZK_EPARSE;
        if (out[0] && (strlen(out) != tlen || memcmp(out, target, tlen) != 0))
            return ZK_EPARSE; /* two different next pages: the listing cannot be trusted */
        memcpy(out, target, tlen);
        out[tlen] = '\0';
    }
}

/* The next page's URL on base's origin: the link's path and query (an absolute link loses its origin,
 * a link that is only a path keeps it all), provided the path lies under base's path. NULL otherwise. */
static char *next_on_base(const char *base, const char *link)
{
    size_t bo = origin_len(base), blen = strlen(base), lo = origin_len(link);
    const char *path = link + lo;

    while (blen > bo && base[blen - 1] == '/')
        blen--;
    if (path[0] != '/' || strncmp(path, base + bo, blen - bo) != 0 ||
        (path[blen - bo] != '/' && path[blen - bo] != '?') || strstr(path, "/../") || strstr(path, "/./"))
        return NULL;
    return mem_printf("%.*s%s", (int)bo, base, path);
}

/* ---- pages -------------------------------------------------------------------------------------- */

static void repos_push(struct hapi_repos *acc, const struct hapi_repo *r)
{
    if (acc->n == acc->cap) {
        acc->cap = acc->cap ? acc->cap * 2 : 64;
        acc->items = mem_realloc(acc->items, acc->cap * sizeof(*acc->items));
    }
    acc->items[acc->n++] = *r;
}

/* A string member no longer than max and free of control characters, else NULL. */
static const char *bounded(const cJSON *o, const char *key, size_t max)
{
    const char *s = json_str(o, key, NULL);

    return s && strlen(s) <= max && !has_ctl(s, strlen(s)) ? s : NULL;
}

static enum hapi_visibility visibility_named(const char *s)
{
    /* An unknown word is taken as the most restrictive, so that a filter for public repositories never
     * admits one the host did not call public. */
    if (s && strcmp(s, "public") == 0)
        return HAPI_PUBLIC;
    if (s && strcmp(s, "internal") == 0)
        return HAPI_INTERNAL;
    return HAPI_PRIVATE;
}

/* Whether clone (an https URL) is on the API's host: the same host and port, or the API's host
 * without a leading "api." label (api.github.com serves github.com's repositories). */
static int clone_on_host(const char *base, const char *clone)
{
    size_t an, cn;
    const char *a = authority(base, &an), *c = authority(clone, &cn);

    if (!a || !c)
        return 0;
    if (an > 4 && strncasecmp(a, "api.", 4) == 0 && cn == an - 4 && strncasecmp(a + 4, c, cn) == 0)
        return 1;
    return cn == an && strncasecmp(a, c, cn) == 0;
}

/* Reads one listed repository into r (heap copies). Returns 1, or 0 when it is to be skipped. */
static int read_entry(const struct hapi_source *src, const char *base, const cJSON *o, struct hapi_repo *r)
{
    int gitlab = src->kind == HAPI_GITLAB;
    const char *name = bounded(o, gitlab ? "path_with_namespace" : "full_name", HAPI_MAX_NAME);
    const char *clone = bounded(o, gitlab ? "http_url_to_repo" : "clone_url", HAPI_MAX_URL);
    const char *web = bounded(o, gitlab ? "web_url" : "html_url", HAPI_MAX_URL);
    const char *branch = bounded(o, "default_branch", HAPI_MAX_BRANCH);

    if (!cJSON_IsObject(o) || !name || !*name || !clone || strncmp(clone, "https://", 8) != 0 ||
        spec_url_problem(clone) || !clone_on_host(base, clone))
        return 0;
    memset(r, 0, sizeof(*r));
    r->full_name = mem_strdup(name);
    r->clone_url = mem_strdup(clone);
    r->web_url = mem_strdup(web ? web : "");
    r->default_branch = mem_strdup(branch ? branch : "");
    r->archived = json_bool(o, "archived", 0);
    r->kind = src->kind;
    switch (src->kind) {
    case HAPI_GITLAB:
        /* GitLab has no fork flag: a fork carries its source project, when the token may see it. */
        r->fork = json_obj(o, "forked_from_project") != NULL;
        r->visibility = visibility_named(json_str(o, "visibility", NULL));
        break;
    case HAPI_GITHUB: {
        const char *vis = json_str(o, "visibility", NULL);

        r->fork = json_bool(o, "fork", 0);
        /* visibility came later than private, and older GitHub Enterprise Server versions lack it. */
        r->visibility = vis ? visibility_named(vis) : json_bool(o, "private", 1) ? HAPI_PRIVATE : HAPI_PUBLIC;
        break;
    }
    case HAPI_GITEA:
        r->fork = json_bool(o, "fork", 0);
        r->visibility = json_bool(o, "private", 1)    ? HAPI_PRIVATE
                        : json_bool(o, "internal", 0) ? HAPI_INTERNAL
                                                      : HAPI_PUBLIC;
        break;
    }
    return 1;
}

int hapi_page_read(const struct hapi_source *src, long status, const struct hapi_meta *meta, const char *body,
                   size_t len, struct hapi_repos *acc, enum hapi_outcome *outcome, char **next,
                   struct zk_err *err)
{
    const char *base = base_of(src) ? base_of(src) : "";
    cJSON *page = NULL;
    const cJSON *item;
    char what[300];
    int rc = ZK_OK, count;

    *outcome = HAPI_LAST;
    *next = NULL;
    src_what(src, what, sizeof(what));
    if (status == 304) {
        *outcome = HAPI_UNCHANGED;
        return ZK_OK;
    }
    /* GitHub refuses a spent primary limit with 403 and x-ratelimit-remaining: 0, and a secondary limit
     * with 403 or 429 and Retry-After; any other 403 is a permission problem that waiting will not fix. */
    if (status == 429 || (status == 403 && (meta->remaining == 0 || meta->retry_after[0])))
        return zk_err_set(err, ZK_EBUSY, "%s: the host's rate limit is spent (HTTP %ld)", what, status);
    if (status >= 500)
        return zk_err_set(err, ZK_ESERVER, "%s: the host failed (HTTP %ld)", what, status);
    if (status < 200 || status >= 300)
        return zk_err_set(err, ZK_EHTTP, "%s: HTTP %ld%s", what, status,
                          status == 401 ? " (the token was refused)"
                          : status == 403 ? " (the token may not list these repositories)"
                          : status == 404 ? " (no such owner, or the token may not see it)"
                                          : "");
    if (meta->link_bad)
        return zk_err_set(err, ZK_EPARSE, "%s: a Link header could not be read", what);
    page = json_parse(body ? body : "", body ? len : 0);
    if (!cJSON_IsArray(page)) {
        rc = zk_err_set(err, ZK_EPARSE, "%s: the answer is not a JSON array of repositories", what);
        goto out;
    }
    count = cJSON_GetArraySize(page);
    if (count > HAPI_MAX_PAGE_REPOS) {
        rc = zk_err_set(err, ZK_EPARSE, "%s: a page lists %d repositories, more than the %d asked for", what, count,
                        HAPI_MAX_PAGE_REPOS);
        goto out;
    }
    if (acc->n + (size_t)count > HAPI_MAX_REPOS) {
        rc = zk_err_set(err, ZK_ETOOBIG, "%s: more than %d repositories", what, HAPI_MAX_REPOS);
        goto out;
    }
    if (meta->next[0] && !(*next = next_on_base(base, meta->next))) {
        rc = zk_err_set(err, ZK_EPARSE, "%s: the next page's link %.200s is not under the API's URL %s", what,
                        meta->next, base);
        goto out;
    }
    cJSON_ArrayForEach(item, page) {
        struct hapi_repo r;

        if (read_entry(src, base, item, &r))
            repos_push(acc, &r);
        else
            acc->skipped++;
    }
    *outcome = *next ? HAPI_MORE : HAPI_LAST;
out:
    cJSON_Delete(page);
    return rc;
}

void hapi_repo_copy(struct hapi_repo *dst, const struct hapi_repo *src)
{
    *dst = *src;
    dst->full_name = mem_strdup(src->full_name);
    dst->clone_url = mem_strdup(src->clone_url);
    dst->web_url = mem_strdup(src->web_url);
    dst->default_branch = mem_strdup(src->default_branch);
}

void hapi_repos_add_copy(struct hapi_repos *acc, const struct hapi_repo *r)
{
    struct hapi_repo copy;

    hapi_repo_copy(&copy, r);
    repos_push(acc, &copy);
}

void hapi_repo_free(struct hapi_repo *r)
{
    free(r->full_name);
    free(r->clone_url);
    free(r->web_url);
    free(r->default_branch);
    memset(r, 0, sizeof(*r));
}

void hapi_repos_free(struct hapi_repos *r)
{
    for (size_t i = 0; i < r->n; i++)
        hapi_repo_free(&r->items[i]);
    free(r->items);
    memset(r, 0, sizeof(*r));
}

/* ---- rate limits -------------------------------------------------------------------------------- */

time_t hapi_wait_until(const struct hapi_meta *meta, long status, time_t now)
{
    time_t until = 0, cap = now + HAPI_MAX_WAIT_SECONDS;
    int told = 0;

    if (meta->retry_after[0]) {
        long long secs = header_number(meta->retry_after, strlen(meta->retry_after));
        time_t at = secs >= 0 ? (secs > HAPI_MAX_WAIT_SECONDS ? cap : now + (time_t)secs)
                              : curl_getdate(meta->retry_after, NULL);

        if (at > 0) {
            until = at;
            told = 1;
        }
    }
    if (meta->remaining == 0 && meta->reset >= 0) {
        time_t reset = meta->reset > (long long)cap ? cap : (time_t)meta->reset;

        until = reset > until ? reset : until;
        told = 1;
    }
    if (status == 429 && !told)
        until = now + HAPI_DEFAULT_WAIT_SECONDS;
    if (until > cap)
        until = cap;
    return until > now ? until : 0;
}
