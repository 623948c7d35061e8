/* read.c: the read_file tool: lines of one indexed file, served from the index, so that an agent can
 * read the function around a match without a clone. Zoekt returns a file's whole content for a query
 * that names its repository and exact path with Whole: true. */
#include "connector/format.h"
#include "connector/tools/args.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_PATH_MAX 4096
#define READ_LINE_LIMIT 10000000L
/* Files asked of Zoekt: one is wanted; more tell that the repository argument names several. */
#define READ_MAX_FILES 5

static const char read_def[] =
    "{\"name\":\"read_file\",\"title\":\"Read a file\","
    "\"description\":\"Reads lines of one file from the search index, with line numbers, the indexed branch "
    "and commit: use it after search_code to see the function or block around a match. repo is written as "
    "for search_code (a name such as payments or acme/payments, or a clone URL) and must select one "
    "repository; path is the file's path in it, as search_code shows it after the repository name. "
    "Without start_line and end_line the first 200 lines are shown; one call shows at most 500 lines and "
    "stays within the output budget, and the answer says how to read on.\","
    "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"repo\",\"path\"],"
    "\"properties\":{"
    "\"repo\":{\"type\":\"string\",\"maxLength\":1024,\"description\":\"The repository (name, trailing segments "
    "or clone URL).\"},"
    "\"path\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"The file's path within the "
    "repository, e.g. src/server/handler.go.\"},"
    "\"start_line\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"First line to show (default 1).\"},"
    "\"end_line\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Last line to show (default: start_line "
    "+ 199; at most start_line + 499).\"}}},"
    "\"annotations\":{\"title\":\"Read a file\",\"readOnlyHint\":true,\"destructiveHint\":false,"
    "\"idempotentHint\":true,\"openWorldHint\":false}}";

cJSON *tool_read_file_def(void)
{
    return cJSON_Parse(read_def);
}

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
    rc = targ_list_get(ctx, &l, &lerr);
    if (rc)
        rc = targ_fail_code(r, rc, "no file \"%.300s\" in a repository \"%.200s\" selects; listing the "
                               "repositories to tell which is missing failed: %s", path, repo, lerr.msg);
    else if (!targ_repo_indexed(l, pattern) && (rc = targ_no_repo(l, repo, pattern, &msg)) == ZK_OK)
        rc = targ_fail(r, "%s", msg.data);
    else if (rc == ZK_OK)
        rc = targ_fail(r, "no file \"%.300s\" in the repository \"%.200s\" selects (the path must be exact and "
                          "relative to the repository root; search_code with file \"%.200s\" finds it by name).",
                       path, repo, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (rc)
        zk_err_set(err, rc, "read_file: the answer exceeds the output buffer");
    buf_free(&msg);
    targ_list_put(ctx, l);
    return rc;
}

int tool_read_file(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    static const char *const known[] = {"repo", "path", "start_line", "end_line", NULL};
    const struct connector_config *cfg = ctx->cfg;
    const char *repo = NULL, *path = NULL;
    char pattern[ZN_ARG_MAX + 1];
    struct zk_err qerr = {0};
    struct zr_search res;
    long start, end;
    char *zq = NULL;
    int rc = ZK_OK;

    memset(&res, 0, sizeof(res));
    if (targ_check_known(args, known, r) || targ_string(args, "repo", ZN_ARG_MAX, &repo, r) ||
        targ_string(args, "path", READ_PATH_MAX, &path, r) ||
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
    if (zq_file_query(repo, path, &zq, &qerr)) {
        rc = targ_fail(r, "invalid read_file arguments: %s", qerr.msg);
        goto out;
    }

    {
        struct zc_search_opts so = {READ_MAX_FILES - 1, 0, 1, 1, 0};
        struct zr_opts ro = {cfg->mirror_prefix, 0, 0};

        if (targ_search(ctx, "read_file", zq, &so, &ro, &res, r))
            goto out;
    }
    if (res.n_files == 0) {
        rc = read_not_found(ctx, repo, pattern, path, r, err);
        goto out;
    }
    if (res.n_files > 1) {
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
    if (!res.files[0].content) {
        /* Zoekt's answer is not in the shape asked for ("Whole": true): ZK_EPARSE, as the client says. */
        rc = targ_fail_code(r, ZK_EPARSE, "Zoekt found %s/%s but sent %s its content (retrying will not help)",
                            res.files[0].repo, res.files[0].path,
                            res.files[0].has_content ? "an undecodable copy of" : "none of");
        goto out;
    }
    {
        long total = fmt_count_lines(res.files[0].content, res.files[0].content_len);
        struct fmt_file_opts fo = {start, end, cfg->output_budget};

        if (start > total && !(start == 1 && total == 0)) {
            rc = targ_fail(r, "%s/%s has %ld lines; start_line %ld is past its end", res.files[0].repo,
                           res.files[0].path, total, start);
            goto out;
        }
        buf_reset(&r->text);
        rc = fmt_file(&res.files[0], &fo, &r->text, &r->structured, &qerr);
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
