/* merge.c: see merge.h. */
#include "connector/zoekt/merge.h"

#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void zm_search(struct zr_search *parts, int n, size_t max_files, struct zr_search *out)
{
    size_t total = 0, at = 0;

    memset(out, 0, sizeof(*out));
    for (int k = 0; k < n; k++)
        total += parts[k].n_files;
    if (total)
        out->files = mem_calloc(total, sizeof(*out->files));
    for (int k = 0; k < n; k++) {
        const struct zr_stats *s = &parts[k].stats;

        if (parts[k].n_files)
            memcpy(out->files + at, parts[k].files, parts[k].n_files * sizeof(*out->files));
        at += parts[k].n_files;
        free(parts[k].files);
        parts[k].files = NULL;
        parts[k].n_files = 0;
        out->stats.file_count += s->file_count;
        out->stats.match_count += s->match_count;
        out->stats.files_skipped += s->files_skipped;
        out->stats.shards_skipped += s->shards_skipped;
        out->stats.crashes += s->crashes;
        out->stats.flush_reason |= s->flush_reason;
        if (s->duration_ns > out->stats.duration_ns)
            out->stats.duration_ns = s->duration_ns;
        out->chunk_matches |= parts[k].chunk_matches;
    }
    out->n_files = total;
    zr_rank(out);
    if (max_files)
        zr_search_truncate(out, max_files);
}

/* By name, then by shard, so that of a name two shards list the lower shard's comes first. */
static int zm_repo_cmp(const void *a, const void *b)
{
    const struct zr_repo *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    return c ? c : (x->shard > y->shard) - (x->shard < y->shard);
}

void zm_list(struct zr_list *parts, int n, struct zr_list *out)
{
    size_t total = 0, kept = 0;

    memset(out, 0, sizeof(*out));
    for (int k = 0; k < n; k++)
        total += parts[k].n_repos;
    if (total)
        out->repos = mem_calloc(total, sizeof(*out->repos));
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < parts[k].n_repos; i++) {
            out->repos[out->n_repos] = parts[k].repos[i];
            out->repos[out->n_repos++].shard = k;
        }
        free(parts[k].repos);
        parts[k].repos = NULL;
        parts[k].n_repos = 0;
        out->shards += parts[k].shards;
        out->crashes += parts[k].crashes;
    }
    if (out->n_repos > 1)
        qsort(out->repos, out->n_repos, sizeof(*out->repos), zm_repo_cmp);
    for (size_t i = 0; i < out->n_repos; i++) {
        if (kept && strcmp(out->repos[kept - 1].name, out->repos[i].name) == 0)
            zr_repo_free(&out->repos[i]);
        else
            out->repos[kept++] = out->repos[i];
    }
    out->n_repos = kept;
}

void zm_failures_add(struct zr_shards *into, struct zr_shards *from)
{
    if (!into->n)
        into->n = from->n;
    for (int k = 0; k < SHARD_MAX; k++) {
        if (!(from->failed & (1u << k)) || (into->failed & (1u << k)))
            continue;
        into->failed |= 1u << k;
        into->why[k] = from->why[k];
        from->why[k] = NULL;
    }
    zr_shards_free(from);
}

size_t zm_shard_repos(const struct zr_list *catalogue, int k, int n, size_t *idx, size_t max)
{
    size_t found = 0;

    for (size_t i = 0; catalogue && i < catalogue->n_repos; i++) {
        if (shard_of(catalogue->repos[i].full_name, n) != k)
            continue;
        if (found < max)
            idx[found] = i;
        found++;
    }
    return found;
}

/* Adds to *mask the shard of each repository of l, among the shards in from, that a pattern selects. */
static void zm_route_list(const struct zr_list *l, unsigned from, const char *const *patterns, size_t n,
                          unsigned *mask)
{
    for (size_t i = 0; l && i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[i];
        unsigned bit;

        if (r->shard < 0 || r->shard >= SHARD_MAX)
            continue;
        bit = 1u << r->shard;
        if (!(from & bit) || (*mask & bit))
            continue;
        for (size_t j = 0; j < n; j++)
            if (zn_matches_bounded(patterns[j], r->full_name) != 0) {
                *mask |= bit;
                break;
            }
    }
}

unsigned zm_route(const struct zr_list *current, const struct zr_list *complete, int n_shards,
                  const char *const *patterns, size_t n)
{
    unsigned all = n_shards >= 32 ? ~0u : (1u << n_shards) - 1, lacking, selected = 0;

    if (!current || n == 0 || n_shards < 2)
        return 0;
    lacking = current->search_shards.failed & all;
    zm_route_list(current, all & ~lacking, patterns, n, &selected);
    /* The shards the current list lacks are decided by the last complete one, or asked. */
    if (lacking && complete && !complete->search_shards.failed) {
        zm_route_list(complete, lacking, patterns, n, &selected);
        lacking = 0;
    }
    return selected ? selected | lacking : 0;
}
