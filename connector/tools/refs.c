/* refs.c: the find_references tool: the uses of one identifier, found with a word-bounded,
 * case-sensitive regular expression (\bIDENT\b, case:yes), counted per repository, then shown file by
 * file, a page at a time, with the definitions marked. In a repository indexed with ctags a definition
 * is where ctags found the identifier (a sym: search with the same filters says where); in one without
 * symbol data, a line that looks like one (fmt_is_definition). */
#include "connector/format/refs.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/run.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
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

/* Where ctags found symbol in the files the references' query spec searches: the sym: search for the
 * exact name, case-sensitive, with the same repository and file filters, into *defs (which the caller
 * frees, also after a failure). Returns ZK_OK or the failure's code with err set. */
static int refs_definitions(const struct tool_ctx *ctx, const struct zq_spec *refs, const char *symbol,
                            struct zr_search *defs, struct zk_err *err)
{
    struct zq_spec spec = *refs;
    struct zc_conn c = trun_conn(ctx, ctx->cfg->search_timeout_ms);
    struct zc_search_opts so = {REFS_FETCH, 0, 1, 0, 0};
    struct zr_opts ro = {ctx->cfg->mirror_prefix, 0, 0};
    char *sym = mem_printf("sym:^%s$", symbol), *zq = NULL;
    int rc;

    spec.query = sym;
    spec.syntax = ZQ_SYNTAX_ZOEKT;
    rc = zq_build(&spec, &zq, err);
    if (rc)
        goto out;
    rc = zc_search(&c, zq, &so, &ro, defs, err);
out:
    free(zq);
    free(sym);
    return rc;
}

int tool_find_references(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    const char **repos = NULL, **files = NULL, *symbol = NULL, *cursor = NULL;
    size_t n_repos = 0, n_files = 0;
    struct zk_err qerr = {0};
    struct zr_search res, defs;
    const struct zr_list *l = NULL;
    char *zq = NULL, *pattern = NULL, position[TCUR_POSITION_MAX + 1];
    struct tcur_key after;
    long max_files;
    struct buf note;
    int have_defs = 0, rc = ZK_OK;

    memset(&res, 0, sizeof(res));
    memset(&defs, 0, sizeof(defs));
    buf_init(&note, REFS_NOTE_MAX);
    if (targ_string(args, "symbol", REFS_SYMBOL_MAX, &symbol, r) ||
        targ_string_list(args, "repo", REFS_MAX_FILTERS, REFS_ARG_MAX, &repos, &n_repos, r) ||
        targ_string_list(args, "file", REFS_MAX_FILTERS, REFS_ARG_MAX, &files, &n_files, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &max_files, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &cursor, r))
        goto out;
    if (!symbol) {
        rc = targ_fail(r, "find_references needs \"symbol\", an identifier (e.g. {\"symbol\":\"ParseConfig\"})");
        goto out;
    }
    if (!refs_is_identifier(symbol)) {
        rc = targ_fail(r, "argument \"symbol\" must be an identifier (a letter or _, then letters, digits and _), "
                          "got \"%.100s\"; search_code takes any pattern", symbol);
        goto out;
    }
    pattern = mem_printf("\\b%s\\b", symbol);
    {
        struct zq_spec spec = {pattern, repos, n_repos, files, n_files, NULL, 0, 1, ZQ_SYNTAX_REGEX, NULL};
        struct zc_search_opts so = {REFS_FETCH, 0, 1, 0, 0};
        struct zr_opts ro = {cfg->mirror_prefix, 0, FMT_FILE_MATCH_LINES};
        struct tcur_files pages = {REFS_CURSOR_KIND, 0};
        struct fmt_refs_opts fo = {NULL, symbol, (int)max_files, cfg->output_budget, NULL, NULL, NULL, 0,
                                   tcur_files_cursor, &pages};

        if (zq_build(&spec, &zq, &qerr)) {
            rc = targ_fail(r, "invalid find_references arguments: %s", qerr.msg);
            goto out;
        }
        /* The pages are of one query: a cursor given with other arguments is refused before any search. */
        pages.hash = tcur_hash(TCUR_HASH_INIT, zq);
        if (tcur_read(cursor, REFS_CURSOR_KIND, pages.hash, position, r) || tcur_key_read(position, &after, r))
            goto out;
        if (trun_search(ctx, "find_references", zq, &so, &ro, &res, r))
            goto out;
        if (res.n_files == 0 && n_repos)
            tcat_explain_empty(ctx, repos, n_repos, &note);
        /* Definitions come from ctags where a repository has symbol data. Without the list or the sym:
         * answer, the references stand with keyword guesses, and the note says why (a note that does
         * not fit its bound is dropped: it is a courtesy). */
        if (res.n_files && tcat_get_within(ctx, ZLC_TTL_MS, &l, &qerr) != ZK_OK) {
            if (buf_printf(&note, "Could not check which repositories have symbol data (%s), so D marks keyword "
                                  "guesses.", qerr.msg))
                buf_reset(&note);
        } else if (res.n_files && refs_any_symbols(l, &res)) {
            have_defs = refs_definitions(ctx, &spec, symbol, &defs, &qerr) == ZK_OK;
            if (!have_defs && buf_printf(&note, "The ctags definitions could not be read (%s), so D marks "
                                                "keyword guesses.", qerr.msg))
                buf_reset(&note);
        }
        fo.query = zq;
        fo.note = note.len ? note.data : NULL;
        fo.defs = have_defs ? &defs : NULL;
        fo.list = l;
        fo.first = tcur_files_first(&res, &after);
        buf_reset(&r->text);
        rc = fmt_refs(&res, &fo, &r->text, &r->structured, &qerr);
        if (rc)
            zk_err_set(err, rc, "find_references: %s", qerr.msg);
    }
out:
    tcat_put(ctx, l);
    buf_free(&note);
    zr_search_free(&defs);
    zr_search_free(&res);
    free(pattern);
    free(zq);
    free(repos);
    free(files);
    return rc;
}
