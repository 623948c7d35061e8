/* read.c: the read_file tool: lines of one indexed file, served from the index, so that an agent can
 * read the function around a match without a clone. Zoekt returns a file's whole content for a query
 * that names its repository and exact path with Whole: true. */
#include "connector/format/read.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_PATH_MAX 4096
#define READ_LINE_LIMIT 10000000L
/* Files asked of Zoekt: one is wanted; more tell that the repository argument names several. */
#define READ_MAX_FILES 5

/* Whether every file of res is in the same repository (the same path, as the query asked). */
static int read_one_repository(const struct zr_search *res)
{
    for (size_t i = 1; i < res->n_files; i++)
        if (strcmp(res->files[i].repo, res->files[0].repo) != 0)
            return 0;
    return 1;
}

/* The index of the first file of res on branch, or n_files when none is. */
static size_t read_on_branch(const struct zr_search *res, const char *branch)
{
    for (size_t i = 0; i < res->n_files; i++)
        for (size_t b = 0; b < res->files[i].n_branches; b++)
            if (strcmp(res->files[i].branches[b], branch) == 0)
                return i;
    return res->n_files;
}

/* The version of the file on the repository's default branch: HEAD, as zoekt-git-index names the
 * remote's default; else the first branch the repository was indexed on (the catalogue l keeps the
 * index's order: a corpus names its main branch first); else the first version Zoekt sent. */
static size_t read_default_branch(const struct zr_list *l, const struct zr_search *res)
{
    size_t pick = read_on_branch(res, "HEAD");
    const struct zr_repo *repo = l && pick == res->n_files ? zr_list_find(l, res->files[0].repo) : NULL;

    if (repo && repo->n_branches)
        pick = read_on_branch(res, repo->branches[0].name);
    return pick < res->n_files ? pick : 0;
}

/* Appends the line that names the branches of the versions not shown. */
static int read_other_branches(const struct zr_search *res, size_t shown, struct buf *text)
{
    int rc = buf_puts(text, "\nOther versions of this file, on branches:");

    for (size_t i = 0; !rc && i < res->n_files; i++)
        for (size_t b = 0; !rc && i != shown && b < res->files[i].n_branches; b++)
            rc = buf_printf(text, " %s", res->files[i].branches[b]);
    return rc ? rc : buf_puts(text, " (pass ref to read one).");
}

struct read_state {
    const char *repo, *path, *ref;
    char pattern[ZN_ARG_MAX + 1]; /* repo, normalised */
    long start, end;
};

static int read_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct read_state *st = state;

    (void)ctx;
    if (targ_string(args, "repo", ZN_ARG_MAX, &st->repo, r) ||
        targ_string(args, "path", READ_PATH_MAX, &st->path, r) || targ_string(args, "ref", 256, &st->ref, r) ||
        targ_int(args, "start_line", 1, READ_LINE_LIMIT, 1, &st->start, r) ||
        targ_int(args, "end_line", 1, READ_LINE_LIMIT, 0, &st->end, r))
        return ZK_EINVAL;
    if (!st->repo || !st->path)
        return targ_fail(r, "read_file needs both \"repo\" and \"path\" (e.g. {\"repo\":\"payments\",\"path\":"
                            "\"src/pay.go\"})"), ZK_EINVAL;
    if (st->end && st->end < st->start)
        return targ_fail(r, "argument \"end_line\" (%ld) is before \"start_line\" (%ld)", st->end, st->start),
               ZK_EINVAL;
    return targ_repo_pattern("repo", st->repo, st->pattern, r);
}

/* The file's whole content, in every repository the argument selects and on every branch; the
 * catalogue to pick the default branch among several. */
static int read_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                     struct tool_result *r)
{
    struct read_state *st = state;
    struct zk_err err = {0};

    (void)reading;
    if (zq_file_query(st->repo, st->path, st->ref, &q->zq, &err))
        return targ_fail(r, "invalid read_file arguments: %s", err.msg), ZK_EINVAL;
    q->so = (struct zc_search_opts){.max_files = READ_MAX_FILES - 1, .chunk_matches = 1, .whole = 1};
    q->ro = (struct zr_opts){ctx->cfg->mirror_prefix, 0, 0};
    q->linked = READ_MAX_FILES;
    q->repos = &st->repo;
    q->n_repos = 1;
    /* The branches' order changes only with a reindex: a minute-old copy serves. */
    q->catalogue_ms = ZLC_TTL_MS;
    return ZK_OK;
}

/* Fails r for an answer with several repositories that have the path. */
static int read_ambiguous(const struct read_state *st, const struct zr_search *res, struct tool_result *r)
{
    long long total = res->stats.file_count > (long long)res->n_files ? res->stats.file_count : (long long)res->n_files;
    char names[1024] = "", more[64] = "";

    for (size_t i = 0; i < res->n_files; i++)
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", res->files[i].repo);
    if (total > (long long)res->n_files)
        snprintf(more, sizeof(more), " and %lld more", total - (long long)res->n_files);
    return targ_fail(r, "\"%.200s\" selects %lld repositories that have \"%.300s\": %s%s. Give one name as repo "
                        "(list_repositories or search_code with file \"%.200s\" shows them all).",
                     st->repo, total, st->path, names, more, st->path);
}

static int read_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                       struct zk_err *err)
{
    struct read_state *st = state;
    const struct zr_search *res = &a->res;
    struct fmt_file_opts fo = {st->start, st->end, ctx->cfg->output_budget};
    struct zk_err ferr = {0};
    const struct zr_file *f;
    size_t pick = 0;
    long total;
    int rc;

    /* The driver's note names the closest repositories when the argument selects none. */
    if (res->n_files == 0 && a->no_repo > 0 && a->note.len)
        return targ_fail(r, "%s", a->note.data);
    if (res->n_files == 0)
        return targ_fail(r, "no file \"%.300s\" in the repository \"%.200s\" selects (the path must be exact and "
                            "relative to the repository root; search_code with file \"%.200s\" finds it by name).%s%s",
                         st->path, st->repo, strrchr(st->path, '/') ? strrchr(st->path, '/') + 1 : st->path,
                         a->no_repo < 0 && a->note.len ? " " : "", a->no_repo < 0 && a->note.len ? a->note.data : "");
    /* One repository may hold the path on several branches with different contents: Zoekt then has a
     * document per version. The default branch is what an agent reads unless it names another; the
     * answer says which others there are. */
    if (res->n_files > 1 && !read_one_repository(res))
        return read_ambiguous(st, res, r);
    if (res->n_files > 1)
        pick = read_default_branch(a->list, res);
    f = &res->files[pick];
    if (!f->content)
        /* Zoekt's answer is not in the shape asked for ("Whole": true): ZK_EPARSE, as the client says. */
        return targ_fail_code(r, ZK_EPARSE, "Zoekt found %s/%s but sent %s its content (retrying will not help)",
                              f->repo, f->path, f->has_content ? "an undecodable copy of" : "none of");
    total = fmt_count_lines(f->content, f->content_len);
    if (st->start > total && !(st->start == 1 && total == 0))
        return targ_fail(r, "%s/%s has %ld lines; start_line %ld is past its end", f->repo, f->path, total,
                         st->start);
    buf_reset(&r->text);
    rc = fmt_file(f, &fo, &r->text, &r->structured, &ferr);
    if (!rc && res->n_files > 1)
        rc = read_other_branches(res, pick, &r->text);
    if (rc)
        zk_err_set(err, rc, "read_file: %s", ferr.msg[0] ? ferr.msg : "the answer exceeds the output buffer");
    return rc;
}

const struct tool_def tool_read_file_def = {sizeof(struct read_state), read_parse, read_plan, read_render, NULL};
