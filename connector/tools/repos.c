/* repos.c: the list_repositories tool: /api/list -> names, branches, index times. */
#include "connector/format/repos.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/listcache.h"
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

struct repos_state {
    const char *filter, *cursor;
    char pattern[ZN_ARG_MAX + 1]; /* the filter, normalised; "" for every repository */
    long limit;
    uint64_t hash;                /* what the pages are of: the filter */
    struct tcur_key after;        /* the last name the page before showed */
};

static int repos_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct repos_state *st = state;

    (void)ctx;
    if (targ_string(args, "filter", 200, &st->filter, r) ||
        targ_int(args, "limit", 1, REPOS_LIMIT_MAX, REPOS_LIMIT_DEFAULT, &st->limit, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &st->cursor, r) ||
        (st->filter && *st->filter && targ_repo_pattern("filter", st->filter, st->pattern, r)))
        return ZK_EINVAL;
    return ZK_OK;
}

/* No search: the answer is the catalogue. Pages are of the names the filter selects, in the list's
 * order (by name). */
static int repos_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                      struct tool_result *r)
{
    struct repos_state *st = state;
    char position[TCUR_POSITION_MAX + 1];

    (void)ctx;
    (void)reading;
    st->hash = tcur_hash(TCUR_HASH_INIT, st->pattern);
    if (tcur_read(st->cursor, REPOS_CURSOR, st->hash, position, r) || tcur_key_read(position, &st->after, r))
        return ZK_EINVAL;
    q->catalogue_ms = ZLC_FRESH_MS;
    return ZK_OK;
}

static int repos_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                        struct zk_err *err)
{
    struct repos_state *st = state;
    const struct zr_list *l = a->list;
    struct fmt_repos_opts fo = {st->pattern[0] ? st->pattern : NULL, (int)st->limit, ctx->cfg->output_budget,
                                time(NULL), 0, repos_cursor, &st->hash};
    struct zk_err ferr = {0};
    const char **names;
    int rc;

    if (!l)
        return targ_fail_code(r, a->list_err.code, "listing repositories failed: %s", a->list_err.msg);
    names = mem_calloc(l->n_repos + 1, sizeof(*names));
    for (size_t i = 0; i < l->n_repos; i++)
        names[i] = l->repos[i].name;
    fo.first = tcur_key_start(&st->after, names, l->n_repos);
    free(names);
    buf_reset(&r->text);
    rc = fmt_repos(l, &fo, &r->text, &r->structured, &ferr);
    if (rc)
        zk_err_set(err, rc, "list_repositories: %s", ferr.msg);
    return rc;
}

const struct tool_def tool_list_repositories_def = {sizeof(struct repos_state), repos_parse, repos_plan,
                                                    repos_render, NULL};
