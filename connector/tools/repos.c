/* repos.c: the list_repositories tool: /api/list -> names, branches, index times. */
#include "connector/format/repos.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/run.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

#define REPOS_LIMIT_DEFAULT 100
#define REPOS_LIMIT_MAX 1000

/* The letter of list_repositories' cursors (cursor.h). */
#define REPOS_CURSOR 'l'

/* The cursor of the page after the repository named last, for the filter whose hash arg points to. */
static char *repos_cursor(const char *last, void *arg)
{
    return tcur_make_key(REPOS_CURSOR, *(const uint64_t *)arg, last, FMT_CURSOR_MAX);
}

int tool_list_repositories(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r,
                           struct zk_err *err)
{
    struct zk_err lerr = {0};
    const char *filter = NULL, *cursor = NULL;
    char pattern[ZN_ARG_MAX + 1], position[TCUR_POSITION_MAX + 1];
    const struct zr_list *l = NULL;
    struct tcur_key after;
    uint64_t hash;
    long limit;
    int rc;

    if (targ_string(args, "filter", 200, &filter, r) ||
        targ_int(args, "limit", 1, REPOS_LIMIT_MAX, REPOS_LIMIT_DEFAULT, &limit, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &cursor, r))
        return ZK_OK;
    if (filter && *filter && targ_repo_pattern("filter", filter, pattern, r))
        return ZK_OK;
    /* Pages are of the names the filter selects, in the list's order (by name). */
    hash = tcur_hash(TCUR_HASH_INIT, filter && *filter ? pattern : "");
    if (tcur_read(cursor, REPOS_CURSOR, hash, position, r) || tcur_key_read(position, &after, r))
        return ZK_OK;
    rc = tcat_get(ctx, &l, &lerr);
    if (rc) {
        rc = targ_fail_code(r, rc, "listing repositories failed: %s", lerr.msg);
        goto out;
    }
    buf_reset(&r->text);
    {
        const char **names = mem_calloc(l->n_repos + 1, sizeof(*names));
        struct fmt_repos_opts fo = {filter && *filter ? pattern : NULL, (int)limit, ctx->cfg->output_budget,
                                    time(NULL), 0, repos_cursor, &hash};

        for (size_t i = 0; i < l->n_repos; i++)
            names[i] = l->repos[i].name;
        fo.first = tcur_key_start(&after, names, l->n_repos);
        free(names);
        rc = fmt_repos(l, &fo, &r->text, &r->structured, &lerr);
    }
    if (rc)
        zk_err_set(err, rc, "list_repositories: %s", lerr.msg);
out:
    tcat_put(ctx, l);
    return rc;
}
