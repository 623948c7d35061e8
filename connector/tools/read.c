/* read.c: the read_file tool: lines of one indexed file, served from the index, so that an agent can
 * read the function around a match without a clone. Zoekt returns a file's whole content for a query
 * that names its repository and exact path with Whole: true. */
#include "connector/format/read.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/run.h"
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

/* Fails r for a search that found no such file: names the closest repositories when the repository
 * argument selects none, else says the file is not in the repositories it selects. */
static int read_not_found(const struct tool_ctx *ctx, const char *repo, const char *pattern, const char *path,
                          struct tool_result *r, struct zk_err *err)
{
    struct zk_err lerr = {0};
    const struct zr_list *l = NULL;
    struct buf msg;
    int rc;

    buf_init(&msg, 8192);
    rc = tcat_get(ctx, &l, &lerr);
    if (rc)
        rc = targ_fail_code(r, rc, "no file \"%.300s\" in a repository \"%.200s\" selects; listing the "
                               "repositories to tell which is missing failed: %s", path, repo, lerr.msg);
    else if (!tcat_repo_indexed(l, pattern) && (rc = tcat_no_repo(l, repo, pattern, &msg)) == ZK_OK)
        rc = targ_fail(r, "%s", msg.data);
    else if (rc == ZK_OK)
        rc = targ_fail(r, "no file \"%.300s\" in the repository \"%.200s\" selects (the path must be exact and "
                          "relative to the repository root; search_code with file \"%.200s\" finds it by name).",
                       path, repo, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (rc)
        zk_err_set(err, rc, "read_file: the answer exceeds the output buffer");
    buf_free(&msg);
    tcat_put(ctx, l);
    return rc;
}

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
 * remote's default; else the first branch the repository was indexed on (the list keeps the index's
 * order: a corpus names its main branch first); else the first version Zoekt sent. */
static size_t read_default_branch(const struct tool_ctx *ctx, const struct zr_search *res)
{
    const struct zr_list *l = NULL;
    struct zk_err lerr = {0};
    size_t pick = read_on_branch(res, "HEAD");

    if (pick < res->n_files)
        return pick;
    /* The branches' order changes only with a reindex: the minute-old copy tcat_web_urls reads serves. */
    if (tcat_get_within(ctx, ZLC_TTL_MS, &l, &lerr) == ZK_OK) {
        const struct zr_repo *repo = zr_list_find(l, res->files[0].repo);

        if (repo && repo->n_branches)
            pick = read_on_branch(res, repo->branches[0].name);
    }
    tcat_put(ctx, l);
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

int tool_read_file(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    const char *repo = NULL, *path = NULL, *ref = NULL;
    char pattern[ZN_ARG_MAX + 1];
    size_t pick = 0;
    struct zk_err qerr = {0};
    struct zr_search res;
    long start, end;
    char *zq = NULL;
    int rc = ZK_OK;

    memset(&res, 0, sizeof(res));
    if (targ_string(args, "repo", ZN_ARG_MAX, &repo, r) ||
        targ_string(args, "path", READ_PATH_MAX, &path, r) || targ_string(args, "ref", 256, &ref, r) ||
        targ_int(args, "start_line", 1, READ_LINE_LIMIT, 1, &start, r) ||
        targ_int(args, "end_line", 1, READ_LINE_LIMIT, 0, &end, r))
        goto out;
    if (!repo || !path) {
        rc = targ_fail(r, "read_file needs both \"repo\" and \"path\" (e.g. {\"repo\":\"payments\",\"path\":"
                          "\"src/pay.go\"})");
        goto out;
    }
    if (end && end < start) {
        rc = targ_fail(r, "argument \"end_line\" (%ld) is before \"start_line\" (%ld)", end, start);
        goto out;
    }
    if (targ_repo_pattern("repo", repo, pattern, r))
        goto out;
    if (zq_file_query(repo, path, ref, &zq, &qerr)) {
        rc = targ_fail(r, "invalid read_file arguments: %s", qerr.msg);
        goto out;
    }

    {
        struct zc_search_opts so = {READ_MAX_FILES - 1, 0, 1, 1, 0};
        struct zr_opts ro = {cfg->mirror_prefix, 0, 0};

        if (trun_search(ctx, "read_file", zq, &so, &ro, &res, r))
            goto out;
    }
    if (res.n_files == 0) {
        rc = read_not_found(ctx, repo, pattern, path, r, err);
        goto out;
    }
    /* One repository may hold the path on several branches with different contents: Zoekt then has a
     * document per version. The default branch is what an agent reads unless it names another; the
     * answer says which others there are. */
    if (res.n_files > 1 && read_one_repository(&res)) {
        pick = read_default_branch(ctx, &res);
    } else if (res.n_files > 1) {
        long long total = res.stats.file_count > (long long)res.n_files ? res.stats.file_count : (long long)res.n_files;
        char names[1024] = "", more[64] = "";

        for (size_t i = 0; i < res.n_files; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                     res.files[i].repo);
        if (total > (long long)res.n_files)
            snprintf(more, sizeof(more), " and %lld more", total - (long long)res.n_files);
        rc = targ_fail(r, "\"%.200s\" selects %lld repositories that have \"%.300s\": %s%s. Give one name as "
                          "repo (list_repositories or search_code with file \"%.200s\" shows them all).",
                       repo, total, path, names, more, path);
        goto out;
    }
    tcat_web_urls(ctx, &res.files[pick], 1);
    if (!res.files[pick].content) {
        /* Zoekt's answer is not in the shape asked for ("Whole": true): ZK_EPARSE, as the client says. */
        rc = targ_fail_code(r, ZK_EPARSE, "Zoekt found %s/%s but sent %s its content (retrying will not help)",
                            res.files[pick].repo, res.files[pick].path,
                            res.files[pick].has_content ? "an undecodable copy of" : "none of");
        goto out;
    }
    {
        long total = fmt_count_lines(res.files[pick].content, res.files[pick].content_len);
        struct fmt_file_opts fo = {start, end, cfg->output_budget};

        if (start > total && !(start == 1 && total == 0)) {
            rc = targ_fail(r, "%s/%s has %ld lines; start_line %ld is past its end", res.files[pick].repo,
                           res.files[pick].path, total, start);
            goto out;
        }
        buf_reset(&r->text);
        rc = fmt_file(&res.files[pick], &fo, &r->text, &r->structured, &qerr);
        if (!rc && res.n_files > 1)
            rc = read_other_branches(&res, pick, &r->text);
        if (rc)
            goto fail;
    }
    goto out;

fail:
    zk_err_set(err, rc, "read_file: %s", qerr.msg);
out:
    zr_search_free(&res);
    free(zq);
    return rc;
}
