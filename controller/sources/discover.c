/* discover.c: see discover.h. */
#include "controller/sources/discover.h"

#include "controller/sources/hostapi.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spec's visibility bits are the host module's, so a filter takes them as they are. */
_Static_assert(SPEC_VISIBLE_PUBLIC == HAPI_PUBLIC && SPEC_VISIBLE_PRIVATE == HAPI_PRIVATE &&
                   SPEC_VISIBLE_INTERNAL == HAPI_INTERNAL,
               "spec.h and hostapi.h number visibilities alike");

/* One page as the host last gave it: asked again with its ETag, and read from here on a 304 (its
 * repositories are kept only when it has an ETag). */
struct disc_page {
    char *url;
    char *etag; /* NULL: the host sent none (Gitea), so the page is always read whole */
    char *next; /* the next page's URL, or NULL on the last */
    struct hapi_repos repos;
};

struct disc_source {
    enum spec_source_host host;
    /* "<host>:<org|user>:<owner>@<API URL>": which source this state is of, in memory and in the
     * ConfigMap. No spaces: owners and URLs are checked for them. */
    char *ident;
    char *filters; /* the filters the set was made with; another value makes the source due */
    struct disc_page *pages;
    size_t npages;
    struct rlist_set set;
    int have_set;    /* listed or restored at least once */
    time_t listed_at; /* the last successful listing: its repositories are written as seen "now" */
    time_t next_at;   /* 0: due at once */
    time_t last_attempt, last_success;
    char *error;
    size_t skipped;
    unsigned requests, not_modified;
};

struct disc_corpus {
    struct disc_source *src;
    int n;
};

/* ---- state ----------------------------------------------------------------------------------- */

static void pages_free(struct disc_page *pages, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(pages[i].url);
        free(pages[i].etag);
        free(pages[i].next);
        hapi_repos_free(&pages[i].repos);
    }
    free(pages);
}

static void source_free(struct disc_source *s)
{
    free(s->ident);
    free(s->filters);
    pages_free(s->pages, s->npages);
    rlist_set_free(&s->set);
    free(s->error);
}

struct disc_corpus *disc_corpus_new(void)
{
    return mem_calloc(1, sizeof(struct disc_corpus));
}

void disc_corpus_free(struct disc_corpus *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++)
        source_free(&d->src[i]);
    free(d->src);
    free(d);
}

static char *source_ident(const struct corpus_source *cs)
{
    return mem_printf("%s:%s:%s@%s", spec_source_host_name(cs->host), spec_source_owner_kind(cs),
                      cs->owner ? cs->owner : "", cs->api_url ? cs->api_url : "");
}

static int append_globs(struct buf *b, const char *what, char *const *globs)
{
    int rc = ZK_OK;

    for (char *const *g = globs; rc == ZK_OK && g && *g; g++)
        rc = buf_printf(b, " %s=%s", what, *g);
    return rc;
}

/* The filters as one string, to notice when they change. Their bound (SPEC_MAX_SOURCE_GLOBS globs of at
 * most 255 bytes each, twice) fits the buffer's. */
static char *source_filters(const struct corpus_source *cs)
{
    struct buf b;
    char *out;
    int rc;

    buf_init(&b, 1u << 16);
    rc = append_globs(&b, "include", cs->include);
    if (rc == ZK_OK)
        rc = append_globs(&b, "exclude", cs->exclude);
    if (rc == ZK_OK)
        rc = buf_printf(&b, " archived=%d forks=%d visibility=%u", cs->archived, cs->forks, cs->visibility);
    out = mem_strdup(rc == ZK_OK && b.data ? b.data : "");
    buf_free(&b);
    return out;
}

void disc_sync(struct disc_corpus *d, const struct corpus_spec *spec)
{
    struct disc_source *next = mem_calloc((size_t)spec->nsources + 1, sizeof(*next));

    for (int i = 0; i < spec->nsources; i++) {
        char *ident = source_ident(&spec->sources[i]), *filters = source_filters(&spec->sources[i]);
        int j;

        for (j = 0; j < d->n && (!d->src[j].ident || strcmp(d->src[j].ident, ident) != 0); j++)
            ;
        if (j < d->n) {
            next[i] = d->src[j];
            memset(&d->src[j], 0, sizeof(d->src[j]));
            free(ident);
        } else {
            next[i].ident = ident;
        }
        next[i].host = spec->sources[i].host;
        if (!next[i].filters || strcmp(next[i].filters, filters) != 0)
            next[i].next_at = 0;
        free(next[i].filters);
        next[i].filters = filters;
    }
    for (int j = 0; j < d->n; j++)
        source_free(&d->src[j]);
    free(d->src);
    d->src = next;
    d->n = spec->nsources;
}

/* ---- the ConfigMap's text ------------------------------------------------------------------------ */

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int has_space(const char *s)
{
    return strpbrk(s, " \t\r\n") != NULL;
}

char *disc_state_text(const struct disc_corpus *d)
{
    struct buf b;
    char *out;

    /* A ConfigMap holds at most 1 MiB; a corpus's 2,000 repositories take about 400 KB here. */
    buf_init(&b, 1u << 20);
    for (int i = 0; i < d->n; i++) {
        const struct disc_source *s = &d->src[i];

        for (size_t k = 0; k < s->set.n; k++) {
            const struct rlist_entry *e = &s->set.items[k];
            const char *web = *e->repo.web_url ? e->repo.web_url : "-";

            if (has_space(e->repo.clone_url) || has_space(web) || has_space(e->repo.full_name) || !*e->repo.full_name)
                continue;
            if (buf_printf(&b, "%s %lld %s %s %s\n", s->ident, e->last_seen == s->listed_at ? 0LL : (long long)e->last_seen,
                           e->repo.clone_url, web, e->repo.full_name) != ZK_OK)
                break;
        }
    }
    out = mem_strdup(b.data ? b.data : "");
    buf_free(&b);
    return out;
}

size_t disc_load(struct disc_corpus *d, const char *text, time_t now)
{
    /* Which sources take what the text holds: those with no set yet (the others' are newer). */
    size_t *cap = mem_calloc((size_t)d->n + 1, sizeof(*cap)), restored = 0;
    int *open = mem_calloc((size_t)d->n + 1, sizeof(*open));
    const char *line = text;

    for (int i = 0; i < d->n; i++)
        open[i] = !d->src[i].have_set;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        char *copy = mem_printf("%.*s", (int)(end ? (size_t)(end - line) : strlen(line)), line);
        char *field[5], *save = NULL, *stop = NULL;
        struct disc_source *s;
        long long ts;
        int i, nf = 0;

        line = end ? end + 1 : NULL;
        for (char *f = strtok_r(copy, " ", &save); f && nf < 5; f = strtok_r(NULL, " ", &save))
            field[nf++] = f;
        ts = nf == 5 ? strtoll(field[1], &stop, 10) : -1;
        if (nf != 5 || strtok_r(NULL, " ", &save) || *stop || ts < 0 || strlen(field[2]) > SPEC_MAX_URL ||
            strlen(field[3]) > SPEC_MAX_URL || strlen(field[4]) > HAPI_MAX_NAME) {
            free(copy);
            continue;
        }
        for (i = 0; i < d->n && strcmp(d->src[i].ident, field[0]) != 0; i++)
            ;
        /* The text is the operator's own, but anybody who may edit ConfigMaps in the namespace can
         * change it: it is held to what a listing could have given. */
        if (i == d->n || !open[i] || d->src[i].set.n >= SPEC_MAX_REPOS || spec_url_problem(field[2]) ||
            strncmp(field[2], "https://", 8) != 0 || has_ctl(field[3]) || has_ctl(field[4]) ||
            (strcmp(field[3], "-") != 0 && strncmp(field[3], "https://", 8) != 0)) {
            free(copy);
            continue;
        }
        s = &d->src[i];
        if (s->set.n == cap[i]) {
            cap[i] = cap[i] ? cap[i] * 2 : 64;
            s->set.items = mem_realloc(s->set.items, cap[i] * sizeof(*s->set.items));
        }
        {
            struct hapi_repo r = {.full_name = field[4],
                                  .clone_url = field[2],
                                  .web_url = strcmp(field[3], "-") == 0 ? "" : field[3],
                                  .default_branch = "",
                                  .visibility = HAPI_PUBLIC,
                                  .kind = (enum hapi_kind)s->host};

            hapi_repo_copy(&s->set.items[s->set.n].repo, &r);
        }
        /* A repository the last listing named counts as seen now: its sighting was not written, so that
         * the text changes only when a set does. */
        s->set.items[s->set.n++].last_seen = ts == 0 ? now : (time_t)ts;
        free(copy);
        s->have_set = 1;
        s->listed_at = now;
        restored++;
    }
    free(cap);
    free(open);
    return restored;
}

/* ---- listing --------------------------------------------------------------------------------- */

void disc_request_all(struct disc_corpus *d)
{
    for (int i = 0; i < d->n; i++)
        d->src[i].next_at = 0;
}

int disc_due(const struct disc_corpus *d, int i, time_t now)
{
    return i >= 0 && i < d->n && d->src[i].next_at <= now;
}

time_t disc_next_due(const struct disc_corpus *d)
{
    time_t soonest = 0;

    for (int i = 0; i < d->n; i++)
        if (i == 0 || d->src[i].next_at < soonest)
            soonest = d->src[i].next_at;
    return soonest;
}

static void on_header(void *ud, const char *line, size_t len)
{
    hapi_meta_header(ud, line, len);
}

/* The page of s that was asked at url the last time, or NULL. */
static const struct disc_page *cached_page(const struct disc_source *s, const char *url)
{
    for (size_t i = 0; i < s->npages; i++)
        if (strcmp(s->pages[i].url, url) == 0)
            return &s->pages[i];
    return NULL;
}

/* Asks for one page (url NULL: the first) and appends its repositories to acc; fills *page with what to
 * keep of it and *wait with the time the host's rate limit allows the next request. On failure *page is
 * left as it was (empty) and acc as hapi_page_read leaves it. */
static int fetch_page(struct disc_source *s, const struct hapi_source *hs, const char *url, const char *token,
                      const struct disc_http *h, time_t now, struct hapi_repos *acc, struct disc_page *page,
                      time_t *wait, struct zk_err *err)
{
    struct hapi_request req = {0};
    struct http_response resp = {0};
    struct hapi_meta meta;
    const struct disc_page *old;
    enum hapi_outcome outcome;
    char *next = NULL;
    size_t before = acc->n;
    time_t until;
    int rc;

    /* The page's URL is known only once the request is made; its stored ETag is then looked up by it. */
    rc = hapi_request_page(hs, url, token, NULL, &req, err);
    if (rc != ZK_OK)
        return rc;
    old = cached_page(s, req.url);
    if (old && old->etag) {
        hapi_request_free(&req);
        rc = hapi_request_page(hs, url, token, old->etag, &req, err);
        if (rc != ZK_OK)
            return rc;
    }
    hapi_meta_init(&meta);
    {
        struct http_request hr = {.method = "GET",
                                  .url = req.url,
                                  .accept = req.accept,
                                  .headers = (const char *const *)req.headers,
                                  .tls = h->tls,
                                  .pool = h->pool,
                                  .timeout_ms = DISC_PAGE_TIMEOUT_MS,
                                  .max_body = req.max_body,
                                  .on_header = on_header,
                                  .header_ud = &meta};

        s->requests++;
        rc = http_do(&hr, &resp, err);
    }
    if (rc != ZK_OK)
        goto out;
    rc = hapi_page_read(hs, resp.status, &meta, resp.body.data ? resp.body.data : "", resp.body.len, acc, &outcome,
                        &next, err);
    until = hapi_wait_until(&meta, resp.status, now);
    if (until > *wait)
        *wait = until;
    if (rc != ZK_OK)
        goto out;
    if (outcome == HAPI_UNCHANGED) {
        if (!old) {
            rc = zk_err_set(err, ZK_EPARSE, "GET %s: 304 Not Modified to a request without an ETag", req.url);
            goto out;
        }
        s->not_modified++;
        for (size_t i = 0; i < old->repos.n; i++)
            hapi_repos_add_copy(acc, &old->repos.items[i]);
        page->etag = mem_strdup(old->etag);
        page->next = old->next ? mem_strdup(old->next) : NULL;
    } else {
        page->etag = meta.etag[0] ? mem_strdup(meta.etag) : NULL;
        page->next = next;
        next = NULL;
    }
    /* Only a page with an ETag can be answered 304 and read from here; keeping the others (Gitea sends
     * none) would double the memory of a listing for nothing. */
    for (size_t i = before; page->etag && i < acc->n; i++)
        hapi_repos_add_copy(&page->repos, &acc->items[i]);
    page->url = req.url;
    req.url = NULL;
out:
    free(next);
    http_response_free(&resp);
    hapi_request_free(&req);
    return rc;
}

/* Walks every page of source i into acc, the pages kept in *pages. */
static int walk(struct disc_source *s, const struct hapi_source *hs, const char *token, const struct disc_http *h,
                time_t now, struct hapi_repos *acc, struct disc_page **pages, size_t *npages, time_t *wait,
                struct zk_err *err)
{
    const char *url = NULL;

    *pages = mem_calloc(DISC_MAX_PAGES, sizeof(**pages));
    *npages = 0;
    for (;;) {
        struct disc_page *page;
        int rc;

        if (*npages == DISC_MAX_PAGES)
            return zk_err_set(err, ZK_ETOOBIG, "more than %d pages", DISC_MAX_PAGES);
        page = &(*pages)[*npages];
        rc = fetch_page(s, hs, url, token, h, now, acc, page, wait, err);
        if (rc != ZK_OK)
            return rc;
        (*npages)++;
        if (!page->next)
            return ZK_OK;
        /* A host whose next links come back to a page already read would be walked for ever. */
        for (size_t i = 0; i < *npages; i++)
            if (strcmp((*pages)[i].url, page->next) == 0)
                return zk_err_set(err, ZK_EPARSE, "the next page %.200s was already read in this listing",
                                  page->next);
        url = page->next;
    }
}

/* How many repositories the corpus would hold with source i's set replaced by one of n: an upper
 * bound, since duplicates across sources and spec.repositories are merged away. */
static size_t total_with(const struct disc_corpus *d, const struct corpus_spec *spec, int i, size_t n)
{
    size_t total = (size_t)spec->nrepos + n;

    for (int j = 0; j < d->n; j++)
        if (j != i)
            total += d->src[j].set.n;
    return total;
}

static void set_error(struct disc_source *s, const char *msg)
{
    free(s->error);
    s->error = msg ? mem_strdup(msg) : NULL;
}

int disc_list(struct disc_corpus *d, const struct corpus_spec *spec, int i, const char *token,
              const struct disc_http *h, time_t now, struct zk_err *err)
{
    struct disc_source *s = &d->src[i];
    const struct corpus_source *cs = &spec->sources[i];
    const struct hapi_source hs = {(enum hapi_kind)cs->host, cs->api_url, cs->owner, cs->user, cs->archived};
    const struct rlist_filter filter = {(const char *const *)cs->include, (const char *const *)cs->exclude,
                                        cs->archived, cs->forks, cs->visibility};
    struct hapi_repos acc = {0};
    struct disc_page *pages = NULL;
    size_t npages = 0;
    time_t wait = 0;
    int rc;

    s->last_attempt = now;
    s->requests = s->not_modified = 0;
    rc = walk(s, &hs, token, h, now, &acc, &pages, &npages, &wait, err);
    if (rc == ZK_OK) {
        rlist_filter(&filter, &acc);
        if (total_with(d, spec, i, acc.n) > SPEC_MAX_REPOS)
            rc = zk_err_set(err, ZK_ETOOBIG,
                            "%zu repositories after the filters would take the corpus past %d: narrow include or "
                            "exclude",
                            acc.n, SPEC_MAX_REPOS);
    }
    if (rc == ZK_OK) {
        struct rlist_set next;

        rlist_grace(s->have_set ? &s->set : NULL, &acc, now, spec->discovery_grace_seconds, &next);
        rlist_set_free(&s->set);
        s->set = next;
        s->have_set = 1;
        s->listed_at = now;
        s->last_success = now;
        s->skipped = acc.skipped;
        pages_free(s->pages, s->npages);
        s->pages = pages;
        s->npages = npages;
        pages = NULL;
        set_error(s, NULL);
    } else {
        zk_err_prefix(err, "%s", s->ident);
        set_error(s, err->msg);
        pages_free(pages, npages);
    }
    hapi_repos_free(&acc);
    s->next_at = now + spec->discovery_interval_seconds;
    if (wait > s->next_at)
        s->next_at = wait;
    return rc;
}

void disc_fail(struct disc_corpus *d, const struct corpus_spec *spec, int i, time_t now, const char *why)
{
    struct disc_source *s = &d->src[i];

    s->last_attempt = now;
    s->requests = s->not_modified = 0;
    set_error(s, why);
    s->next_at = now + spec->discovery_interval_seconds;
}

int disc_merge(const struct disc_corpus *d, const struct corpus_spec *spec, struct corpus_repo **out, int *n,
               size_t *dropped, struct zk_err *err)
{
    const struct rlist_set **sets = mem_calloc((size_t)d->n + 1, sizeof(*sets));
    int rc;

    for (int i = 0; i < d->n; i++)
        sets[i] = &d->src[i].set;
    rc = rlist_merge(spec->repos, spec->nrepos, sets, (size_t)d->n, out, n, dropped, err);
    free(sets);
    return rc;
}

void disc_report(const struct disc_corpus *d, int i, struct disc_report *out)
{
    const struct disc_source *s = &d->src[i];

    out->repositories = s->set.n;
    out->skipped = s->skipped;
    out->last_success = s->last_success;
    out->last_attempt = s->last_attempt;
    out->error = s->error;
    out->requests = s->requests;
    out->not_modified = s->not_modified;
}
