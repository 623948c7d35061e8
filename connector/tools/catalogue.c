/* catalogue.c: see catalogue.h. */
#include "connector/tools/catalogue.h"

#include "connector/format/text.h"
#include "connector/tools/pipeline.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/merge.h"
#include "connector/zoekt/reponame.h"
#include "connector/zoekt/shards.h"
#include "connector/zoekt/weburl.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tcat_repo_indexed(const struct zr_list *l, const char *pattern)
{
    for (size_t i = 0; i < l->n_repos; i++)
        if (zn_matches(pattern, l->repos[i].full_name))
            return 1;
    return 0;
}

int tcat_no_repo(const struct zr_list *l, const char *arg, const char *pattern, struct buf *b)
{
    size_t closest;
    int rc = buf_putc(b, '"');

    if (!rc)
        rc = fmt_put_cut(b, arg, 200);
    if (!rc)
        rc = buf_puts(b, "\" matches no indexed repository; ");

    if (!rc)
        rc = fmt_closest(l, pattern, b, &closest);
    if (!rc)
        rc = closest ? buf_putc(b, '.')
                     : buf_printf(b, "none has a similar name (%zu are indexed; list_repositories shows them).",
                                  l->n_repos);
    return rc;
}

void tcat_summarise(const struct zr_list *l, struct tcat_index_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->zoekt_version = "";
    for (size_t i = 0; i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[i];

        if (r->index_time && (!s->newest || r->index_time > s->newest))
            s->newest = r->index_time;
        if (r->index_time && (!s->oldest || r->index_time < s->oldest))
            s->oldest = r->index_time;
        if (!s->zoekt_version[0] && r->zoekt_version[0])
            s->zoekt_version = r->zoekt_version;
    }
}

/* A repository with its place in the list: qsort has no context argument, so each element carries
 * what the comparison reads. */
struct tcat_order {
    const struct zr_repo *repo;
    size_t index;
};

static int tcat_older(const void *a, const void *b)
{
    const struct zr_repo *x = ((const struct tcat_order *)a)->repo, *y = ((const struct tcat_order *)b)->repo;

    if (x->index_time != y->index_time) {
        if (!x->index_time || !y->index_time)
            return x->index_time ? -1 : 1;
        return x->index_time < y->index_time ? -1 : 1;
    }
    return strcmp(x->name, y->name);
}

size_t *tcat_oldest_first(const struct zr_list *l)
{
    struct tcat_order *tmp;
    size_t *order;

    if (!l->n_repos)
        return NULL;
    tmp = mem_calloc(l->n_repos, sizeof(*tmp));
    for (size_t i = 0; i < l->n_repos; i++)
        tmp[i] = (struct tcat_order){&l->repos[i], i};
    qsort(tmp, l->n_repos, sizeof(*tmp), tcat_older);
    order = mem_calloc(l->n_repos, sizeof(*order));
    for (size_t i = 0; i < l->n_repos; i++)
        order[i] = tmp[i].index;
    free(tmp);
    return order;
}

int tcat_is_stale(const struct zr_repo *r, time_t now, long max_age)
{
    return r->index_time > 0 && now - r->index_time > max_age;
}

int tcat_explain_empty(const struct tool_ctx *ctx, const char *const *repos, size_t n, struct buf *note)
{
    struct zk_err err = {0};
    char pattern[ZN_ARG_MAX + 1];
    int missing = 0, rc = ZK_OK;
    const struct zr_list *l = NULL;

    if (tcat_get(ctx, &l, &err)) {
        /* A sentence that does not fit empties the note (buf.h): the note is a courtesy. */
        rc = buf_printf(note, "could not check whether the repositories are indexed: %s", err.msg);
        missing = -1;
        goto out;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        /* The query was built from every argument, so each one normalises. */
        if (zn_normalize(repos[i], pattern, sizeof(pattern), &err) || tcat_repo_indexed(l, pattern))
            continue;
        rc = missing++ ? buf_putc(note, ' ') : ZK_OK;
        if (!rc)
            rc = tcat_no_repo(l, repos[i], pattern, note);
    }
    if (!rc && !missing)
        rc = buf_printf(note, "the repositor%s searched %s indexed; the query matched nothing in %s.",
                        n == 1 ? "y" : "ies", n == 1 ? "is" : "are", n == 1 ? "it" : "them");
out:
    tcat_put(ctx, l);
    return missing;
}

/* The first file of each repository of res, in the order the repositories first appear: a heap array
 * of pointers into res (*n of them) that the caller frees. */
static const struct zr_file **tcat_answer_repos(const struct zr_search *res, size_t *n)
{
    const struct zr_file **first = mem_calloc(res->n_files + 1, sizeof(*first));

    *n = 0;
    for (size_t i = 0; i < res->n_files; i++) {
        size_t j = 0;

        while (j < *n && strcmp(first[j]->repo, res->files[i].repo) != 0)
            j++;
        if (j == *n)
            first[(*n)++] = &res->files[i];
    }
    return first;
}

/* The list cache's fetch: a list request with the tool call's connection and cancel flag. */
static int tcat_fetch_list(void *arg, struct zr_list *out, struct zk_err *err)
{
    const struct tool_ctx *ctx = arg;
    struct zc_conn c = tpipe_conn(ctx, ctx->cfg->list_timeout_ms);
    struct zr_opts ro = {ctx->cfg->mirror_prefix, -1, 0};

    return zs_list(ctx->cfg->zoekt_shards, &c, "", &ro, out, err);
}

int tcat_get(const struct tool_ctx *ctx, const struct zr_list **out, struct zk_err *err)
{
    return tcat_get_within(ctx, ZLC_FRESH_MS, out, err);
}

int tcat_get_within(const struct tool_ctx *ctx, long long max_age_ms, const struct zr_list **out,
                         struct zk_err *err)
{
    struct zr_list *own;
    int rc;

    if (ctx->cfg->zoekt_list_cache)
        return zlc_get(ctx->cfg->zoekt_list_cache, max_age_ms, tcat_fetch_list, (void *)ctx, out, err);
    own = mem_calloc(1, sizeof(*own));
    rc = tcat_fetch_list((void *)ctx, own, err);
    if (rc) {
        zr_list_free(own);
        free(own);
        own = NULL;
    }
    *out = own;
    return rc;
}

const struct zr_list *tcat_get_complete(const struct tool_ctx *ctx)
{
    return ctx->cfg->zoekt_list_cache ? zlc_complete(ctx->cfg->zoekt_list_cache) : NULL;
}

unsigned tcat_route(const struct tool_ctx *ctx, const char *const *repos, size_t n)
{
    const struct zs_set *shards = ctx->cfg->zoekt_shards;
    const struct zr_list *current = NULL, *complete = NULL;
    char(*patterns)[ZN_ARG_MAX + 1] = NULL;
    const char **pointers = NULL;
    struct zk_err err = {0};
    unsigned route = 0;

    if (!shards || !ctx->cfg->zoekt_list_cache || n == 0)
        return 0;
    patterns = mem_calloc(n, sizeof(*patterns));
    pointers = mem_calloc(n, sizeof(*pointers));
    for (size_t i = 0; i < n; i++) {
        /* An argument the query builder would refuse never gets here; one that did would route nothing. */
        if (zn_normalize(repos[i], patterns[i], sizeof(patterns[i]), &err) != ZK_OK)
            goto out;
        pointers[i] = patterns[i];
    }
    if (tcat_get_within(ctx, ZLC_TTL_MS, &current, &err) != ZK_OK)
        goto out;
    complete = tcat_get_complete(ctx);
    route = zm_route(current, complete, shards->n, pointers, n);
out:
    tcat_put(ctx, current);
    tcat_put(ctx, complete);
    free(pointers);
    free(patterns);
    return route;
}

void tcat_put(const struct tool_ctx *ctx, const struct zr_list *l)
{
    if (ctx->cfg->zoekt_list_cache) {
        zlc_put(ctx->cfg->zoekt_list_cache, l);
    } else if (l) {
        zr_list_free((struct zr_list *)l);
        free((struct zr_list *)l);
    }
}

void tcat_indexed(const struct tool_ctx *ctx, const struct zr_search *res, struct buf *line)
{
    size_t n;
    const struct zr_file **first = tcat_answer_repos(res, &n);
    const char **names = mem_calloc(n + 1, sizeof(*names)), **commits = mem_calloc(n + 1, sizeof(*commits));
    time_t *times = mem_calloc(n + 1, sizeof(*times));
    struct fmt_indexed_repo *repos = mem_calloc(n + 1, sizeof(*repos));

    for (size_t i = 0; i < n; i++) {
        names[i] = first[i]->repo;
        commits[i] = first[i]->version;
    }
    if (ctx->cfg->zoekt_list_cache)
        (void)zlc_index_times(ctx->cfg->zoekt_list_cache, names, commits, n, times, tcat_fetch_list, (void *)ctx);
    /* The commit is the one the repository's first file in the answer came from (FileMatch.Version),
     * so the header names the commit the lines shown are from; the age is the cache's. */
    for (size_t i = 0; i < n; i++)
        repos[i] = (struct fmt_indexed_repo){names[i], commits[i], times[i]};
    if (fmt_indexed(repos, n, time(NULL), line))
        buf_reset(line);
    free(repos);
    free(times);
    free(commits);
    free(names);
    free(first);
}

void tcat_web_urls(const struct tool_ctx *ctx, struct zr_file *files, size_t n)
{
    const struct zr_list *l = NULL;
    struct zk_err err = {0};

    if (n == 0 || tcat_get_within(ctx, ZLC_TTL_MS, &l, &err) != ZK_OK) {
        tcat_put(ctx, l);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct zr_repo *repo = zr_list_find(l, files[i].repo);
        long line = 0;

        /* The first matching line, which is where an agent's citation points. */
        for (size_t k = 0; k < files[i].n_lines && !line; k++)
            if (files[i].lines[k].is_match)
                line = files[i].lines[k].number;
        if (repo && !files[i].url)
            files[i].url = zw_file_url(repo->file_url_template, repo->line_fragment_template, files[i].version,
                                       files[i].path, line);
    }
    tcat_put(ctx, l);
}

