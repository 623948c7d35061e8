/* files.c: the list_files tool: the files of a repository (or a folder in it) that match a glob,
 * found with Zoekt's file-name search (a query of repo: and file: atoms only), sorted by path and shown
 * as a tree a page at a time. */
#include "connector/format/files.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
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

struct files_state {
    const char *repo, *path, *glob, *ref, *cursor;
    long max_files;
    struct tcur_files pages; /* the letter and what the pages are of: the query */
    struct tcur_key after;   /* the last file the page before showed */
};

static int files_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct files_state *st = state;
    char pattern[ZN_ARG_MAX + 1];

    (void)ctx;
    if (targ_string(args, "repo", FILES_ARG_MAX, &st->repo, r) ||
        targ_string(args, "path", FILES_ARG_MAX, &st->path, r) ||
        targ_string(args, "file", FILES_ARG_MAX, &st->glob, r) || targ_string(args, "ref", 256, &st->ref, r) ||
        targ_int(args, "max_files", 1, FILES_LIMIT, FILES_DEFAULT, &st->max_files, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &st->cursor, r))
        return ZK_EINVAL;
    if (!st->repo)
        return targ_fail(r, "list_files needs \"repo\" (e.g. {\"repo\":\"payments\",\"file\":\"deploy/*.yaml\"}); "
                            "list_repositories shows the names"), ZK_EINVAL;
    if (targ_repo_pattern("repo", st->repo, pattern, r))
        return ZK_EINVAL;
    if (st->glob && !*st->glob)
        return targ_fail(r, "argument \"file\" is empty: leave it out to list every file"), ZK_EINVAL;
    return ZK_OK;
}

static int files_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                      struct tool_result *r)
{
    struct files_state *st = state;
    char position[TCUR_POSITION_MAX + 1];
    struct zk_err err = {0};

    (void)reading;
    if (files_query(st->repo, st->path, st->glob, st->ref, &q->zq, &err))
        return targ_fail(r, "invalid list_files arguments: %s", err.msg), ZK_EINVAL;
    /* A cursor is of the query, which holds every argument but max_files. */
    st->pages = (struct tcur_files){FILES_CURSOR, tcur_hash(TCUR_HASH_INIT, q->zq)};
    if (tcur_read(st->cursor, FILES_CURSOR, st->pages.hash, position, r) || tcur_key_read(position, &st->after, r))
        return ZK_EINVAL;
    q->so = (struct zc_search_opts){.max_files = FILES_FETCH, .chunk_matches = 1};
    /* Only names are wanted: one match per file is decoded (0 would decode them all). */
    q->ro = (struct zr_opts){ctx->cfg->mirror_prefix, 0, 1};
    q->repos = &st->repo;
    q->n_repos = 1;
    return ZK_OK;
}

static int files_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                        struct zk_err *err)
{
    struct files_state *st = state;
    struct fmt_files_opts fo = {a->zq, (int)st->max_files, ctx->cfg->output_budget, 0, tcur_files_cursor,
                                &st->pages};
    struct zk_err ferr = {0};
    int rc;

    /* An empty list stands, unless the repository argument selects no repository: then the driver's
     * note names the closest ones (a note too long for its bound leaves the short form). */
    if (a->no_repo > 0)
        return a->note.len ? targ_fail(r, "%s", a->note.data)
                           : targ_fail(r, "\"%.200s\" matches no indexed repository (list_repositories shows them)",
                                       st->repo);
    fo.first = tcur_files_first(&a->res, &st->after);
    buf_reset(&r->text);
    rc = fmt_files(&a->res, &fo, &r->text, &r->structured, &ferr);
    if (rc)
        zk_err_set(err, rc, "list_files: %s", ferr.msg);
    return rc;
}

const struct tool_def tool_list_files_def = {sizeof(struct files_state), files_parse, files_plan, files_render,
                                             NULL};
