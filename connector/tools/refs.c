/* refs.c: the find_references tool: the uses of one identifier, found with a word-bounded,
 * case-sensitive regular expression (\bIDENT\b, case:yes), counted per repository, then shown file by
 * file, a page at a time, with the definitions marked. In a repository indexed with ctags a definition
 * is where ctags found the identifier (a sym: search with the same filters says where); in one without
 * symbol data, a line that looks like one (fmt_is_definition). */
#include "connector/format/refs.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/merge.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "connector/zoekt/shards.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFS_SYMBOL_MAX 256
#define REFS_MAX_FILTERS 50
#define REFS_ARG_MAX 1024
/* Files asked of Zoekt: the counts per repository cover these, and the pages go through them. */
#define REFS_FETCH 500
/* Bound on the note for repository arguments that select nothing: as search_code's. */
#define REFS_NOTE_MAX 16384
/* The letter of find_references' cursors (cursor.h). */
#define REFS_CURSOR_KIND 'r'

/* Whether s is an identifier: a letter or _, then letters, digits and _ (ASCII, as \b reads words). */
static int refs_is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* Whether a file of res is in a repository that l says has symbol data. */
static int refs_any_symbols(const struct zr_list *l, const struct zr_search *res)
{
    for (size_t i = 0; i < res->n_files; i++) {
        const struct zr_repo *x = zr_list_find(l, res->files[i].repo);

        if (x && x->has_symbols)
            return 1;
    }
    return 0;
}

/* Where ctags found symbol in the files the references' query searches: the sym: search for the exact
 * name, case-sensitive, with the same repository and file filters, into *defs (which the caller frees,
 * also after a failure). A second search of the tool's own, run by its render: it is wanted only when
 * the first found files in repositories with symbol data. Returns ZK_OK or the failure's code with err
 * set. */
static int refs_definitions(const struct tool_ctx *ctx, const char *const *repos, size_t n_repos,
                            const char *const *files, size_t n_files, const char *symbol, struct zr_search *defs,
                            struct zk_err *err)
{
    struct zq_spec spec = {NULL, repos, n_repos, files, n_files, NULL, 0, 1, ZQ_SYNTAX_ZOEKT, NULL};
    struct zc_conn c = tpipe_conn(ctx, ctx->cfg->search_timeout_ms);
    struct zc_search_opts so = {.max_files = REFS_FETCH, .chunk_matches = 1};
    struct zr_opts ro = {ctx->cfg->mirror_prefix, 0, 0};
    char *sym = mem_printf("sym:^%s$", symbol), *zq = NULL;
    int rc;

    spec.query = sym;
    rc = zq_build(&spec, &zq, err);
    if (rc)
        goto out;
    rc = zs_search(ctx->cfg->zoekt_shards, tcat_route(ctx, repos, n_repos), &c, zq, &so, &ro, defs, err);
out:
    free(zq);
    free(sym);
    return rc;
}

struct refs_state {
    const char *symbol, *cursor;
    const char **repos, **files; /* heap arrays of pointers into the arguments */
    size_t n_repos, n_files;
    long max_files;
    char *pattern;               /* \bsymbol\b (heap) */
    struct tcur_files pages;     /* the letter and what the pages are of: the query */
    struct tcur_key after;       /* the last file the page before showed */
};

static int refs_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct refs_state *st = state;

    if (targ_string(args, "symbol", REFS_SYMBOL_MAX, &st->symbol, r) ||
        targ_string_list(args, "repo", REFS_MAX_FILTERS, REFS_ARG_MAX, &st->repos, &st->n_repos, r) ||
        targ_string_list(args, "file", REFS_MAX_FILTERS, REFS_ARG_MAX, &st->files, &st->n_files, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, ctx->cfg->max_files, &st->max_files, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &st->cursor, r))
        return ZK_EINVAL;
    if (!st->symbol)
        return targ_fail(r, "find_references needs \"symbol\", an identifier (e.g. {\"symbol\":\"ParseConfig\"})"),
               ZK_EINVAL;
    if (!refs_is_identifier(st->symbol))
        return targ_fail(r, "argument \"symbol\" must be an identifier (a letter or _, then letters, digits and _), "
                            "got \"%.100s\"; search_code takes any pattern", st->symbol), ZK_EINVAL;
    st->pattern = mem_printf("\\b%s\\b", st->symbol);
    return ZK_OK;
}

static int refs_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                     struct tool_result *r)
{
    struct refs_state *st = state;
    struct zq_spec spec = {st->pattern, st->repos, st->n_repos, st->files, st->n_files, NULL, 0, 1,
                           ZQ_SYNTAX_REGEX, NULL};
    char position[TCUR_POSITION_MAX + 1];
    struct zk_err err = {0};

    (void)reading;
    if (zq_build(&spec, &q->zq, &err))
        return targ_fail(r, "invalid find_references arguments: %s", err.msg), ZK_EINVAL;
    /* The pages are of one query: a cursor given with other arguments is refused before any search. */
    st->pages = (struct tcur_files){REFS_CURSOR_KIND, tcur_hash(TCUR_HASH_INIT, q->zq)};
    if (tcur_read(st->cursor, REFS_CURSOR_KIND, st->pages.hash, position, r) ||
        tcur_key_read(position, &st->after, r))
        return ZK_EINVAL;
    q->so = (struct zc_search_opts){.max_files = REFS_FETCH, .chunk_matches = 1};
    q->ro = (struct zr_opts){ctx->cfg->mirror_prefix, 0, FMT_FILE_MATCH_LINES};
    q->repos = st->repos;
    q->n_repos = st->n_repos;
    /* Which repositories have symbol data, and the default branch of each: a minute-old copy serves. */
    q->catalogue_ms = ZLC_TTL_MS;
    return ZK_OK;
}

static int refs_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                       struct zk_err *err)
{
    struct refs_state *st = state;
    struct fmt_refs_opts fo = {a->zq, st->symbol, (int)st->max_files, ctx->cfg->output_budget, NULL, NULL, a->list,
                               0, tcur_files_cursor, &st->pages};
    struct zk_err ferr = {0};
    struct zr_search defs;
    int have_defs = 0, rc;

    memset(&defs, 0, sizeof(defs));
    /* Definitions come from ctags where a repository has symbol data. Without the list or the sym:
     * answer, the references stand with keyword guesses, and the note says why (a sentence that does
     * not fit empties the note: it is a courtesy). */
    if (a->res.n_files && !a->list) {
        if (buf_printf(&a->note, "Could not check which repositories have symbol data (%s), so D marks keyword "
                                 "guesses.", a->list_err.msg))
            buf_reset(&a->note);
    } else if (a->res.n_files && refs_any_symbols(a->list, &a->res)) {
        have_defs = refs_definitions(ctx, st->repos, st->n_repos, st->files, st->n_files, st->symbol, &defs,
                                     &ferr) == ZK_OK;
        /* A shard that missed the definitions' search makes the answer partial too: the driver's note
         * names it. */
        zm_failures_add(&a->res.shards, &defs.shards);
        if (!have_defs && buf_printf(&a->note, "The ctags definitions could not be read (%s), so D marks keyword "
                                               "guesses.", ferr.msg))
            buf_reset(&a->note);
    }
    fo.note = a->note.len ? a->note.data : NULL;
    fo.defs = have_defs ? &defs : NULL;
    fo.first = tcur_files_first(&a->res, &st->after);
    buf_reset(&r->text);
    rc = fmt_refs(&a->res, &fo, &r->text, &r->structured, &ferr);
    if (rc)
        zk_err_set(err, rc, "find_references: %s", ferr.msg);
    zr_search_free(&defs);
    return rc;
}

static void refs_release(void *state)
{
    struct refs_state *st = state;

    free(st->repos);
    free(st->files);
    free(st->pattern);
}

const struct tool_def tool_find_references_def = {sizeof(struct refs_state), refs_parse, refs_plan, refs_render,
                                                  refs_release};
