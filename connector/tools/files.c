/* files.c: the list_files tool: the files of a repository (or a folder in it) that match a glob,
 * found with Zoekt's file-name search (a query of repo: and file: atoms only), sorted by path and shown
 * as a tree a page at a time. */
#include "connector/format/files.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/run.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILES_ARG_MAX 1024
#define FILES_DEFAULT 100
#define FILES_LIMIT 1000
/* Files asked of Zoekt, which returns them in rank order, not by path: the list is sorted among these,
 * and the answer says so when more matched. Every page asks for them again and starts after the last
 * file the cursor names, so the pages cover the files Zoekt returns, the best ranked: when more match,
 * the others are never listed, even where their paths fall between those of a page (Zoekt's query
 * language has no "path after" to fetch them by), and only a narrower path or file reaches them. */
#define FILES_FETCH 5000
/* The tool letter of list_files' cursors (cursor.h). */
#define FILES_CURSOR 'f'

/* The query: repo:<regex> file:<glob regex> [branch:<ref>] [file:^<folder>/]. Zoekt ANDs the atoms, and
 * a query of such atoms alone matches file names. path has its slashes at either end trimmed; an empty
 * folder selects the whole repository. */
static int files_query(const char *repo, const char *path, const char *glob, const char *ref, char **out,
                       struct zk_err *err)
{
    const char *const repos[] = {repo}, *const globs[] = {glob ? glob : "*"};
    struct zq_spec spec = {NULL, repos, 1, globs, 1, NULL, 0, 0, ZQ_SYNTAX_ZOEKT, ref};
    char *query = NULL, *folder = NULL, *quoted = NULL;
    size_t n = 0;
    int rc;

    while (path && *path == '/')
        path++;
    for (n = path ? strlen(path) : 0; n && path[n - 1] == '/';)
        n--;
    rc = zq_build(&spec, &query, err);
    if (rc || n == 0)
        goto out;
    folder = mem_strndup(path, n);
    quoted = zq_regex_quote(folder);
    if (!quoted) {
        rc = zk_err_set(err, ZK_ETOOBIG, "path: the folder is longer than a query may be");
        goto out;
    }
    {
        char *both = mem_printf("%s file:^%s/", query, quoted);

        free(query);
        query = both;
    }
out:
    free(folder);
    free(quoted);
    if (rc) {
        free(query);
        query = NULL;
    }
    *out = query;
    return rc;
}

/* Fails r for an empty answer when the repository argument selects no repository, naming the closest
 * ones; returns 1 then, 0 when the repository is indexed (or the list cannot be had: the empty list
 * stands). */
static int files_no_repo(const struct tool_ctx *ctx, const char *repo, const char *pattern, struct tool_result *r)
{
    struct zk_err err = {0};
    int missing = 0;
    const struct zr_list *l = NULL;
    struct buf msg;

    buf_init(&msg, 8192);
    if (tcat_get(ctx, &l, &err) == ZK_OK && !tcat_repo_indexed(l, pattern)) {
        missing = 1;
        /* A sentence that does not fit its 8 KiB leaves the short form. */
        if (tcat_no_repo(l, repo, pattern, &msg))
            (void)targ_fail(r, "\"%.200s\" matches no indexed repository (list_repositories shows them)", repo);
        else
            (void)targ_fail(r, "%s", msg.data);
    }
    buf_free(&msg);
    tcat_put(ctx, l);
    return missing;
}

int tool_list_files(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    const char *repo = NULL, *path = NULL, *glob = NULL, *ref = NULL, *cursor = NULL;
    char pattern[ZN_ARG_MAX + 1], position[TCUR_POSITION_MAX + 1];
    struct tcur_files pages = {FILES_CURSOR, 0};
    struct zk_err qerr = {0};
    struct tcur_key after;
    struct zr_search res;
    long max_files;
    char *zq = NULL;
    int rc = ZK_OK;

    memset(&res, 0, sizeof(res));
    if (targ_string(args, "repo", FILES_ARG_MAX, &repo, r) ||
        targ_string(args, "path", FILES_ARG_MAX, &path, r) || targ_string(args, "file", FILES_ARG_MAX, &glob, r) ||
        targ_string(args, "ref", 256, &ref, r) ||
        targ_int(args, "max_files", 1, FILES_LIMIT, FILES_DEFAULT, &max_files, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &cursor, r))
        goto out;
    if (!repo) {
        rc = targ_fail(r, "list_files needs \"repo\" (e.g. {\"repo\":\"payments\",\"file\":\"deploy/*.yaml\"}); "
                          "list_repositories shows the names");
        goto out;
    }
    if (targ_repo_pattern("repo", repo, pattern, r))
        goto out;
    if (glob && !*glob) {
        rc = targ_fail(r, "argument \"file\" is empty: leave it out to list every file");
        goto out;
    }
    if (files_query(repo, path, glob, ref, &zq, &qerr)) {
        rc = targ_fail(r, "invalid list_files arguments: %s", qerr.msg);
        goto out;
    }
    /* A cursor is of the query, which holds every argument but max_files. */
    pages.hash = tcur_hash(TCUR_HASH_INIT, zq);
    if (tcur_read(cursor, FILES_CURSOR, pages.hash, position, r) || tcur_key_read(position, &after, r))
        goto out;
    {
        struct zc_search_opts so = {FILES_FETCH, 0, 1, 0, 0};
        /* Only names are wanted: one match per file is decoded (0 would decode them all). */
        struct zr_opts ro = {cfg->mirror_prefix, 0, 1};
        struct fmt_files_opts fo = {zq, (int)max_files, cfg->output_budget, 0, tcur_files_cursor, &pages};

        if (trun_search(ctx, "list_files", zq, &so, &ro, &res, r))
            goto out;
        if (res.n_files == 0 && files_no_repo(ctx, repo, pattern, r))
            goto out;
        fo.first = tcur_files_first(&res, &after);
        buf_reset(&r->text);
        rc = fmt_files(&res, &fo, &r->text, &r->structured, &qerr);
        if (rc)
            goto fail;
    }
    goto out;

fail:
    zk_err_set(err, rc, "list_files: %s", qerr.msg);
out:
    zr_search_free(&res);
    free(zq);
    return rc;
}
