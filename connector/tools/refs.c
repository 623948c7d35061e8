/* refs.c: the find_references tool: the uses of one identifier, found with a word-bounded,
 * case-sensitive regular expression (\bIDENT\b, case:yes), counted per repository, then shown file by
 * file with the lines that look like definitions marked. A text search: the index holds no symbols. */
#include "connector/format.h"
#include "connector/tools/args.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFS_SYMBOL_MAX 256
#define REFS_MAX_FILTERS 50
#define REFS_ARG_MAX 1024
/* Files asked of Zoekt: the counts per repository cover these, the lines max_files of them. */
#define REFS_FETCH 500
/* Bound on the note for repository arguments that select nothing: as search_code's. */
#define REFS_NOTE_MAX 16384

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

int tool_find_references(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    const char **repos = NULL, **files = NULL, *symbol = NULL;
    size_t n_repos = 0, n_files = 0;
    struct zk_err qerr = {0};
    struct zr_search res;
    char *zq = NULL, *pattern = NULL;
    long max_files;
    struct buf note;
    int rc = ZK_OK;

    memset(&res, 0, sizeof(res));
    buf_init(&note, REFS_NOTE_MAX);
    if (targ_string(args, "symbol", REFS_SYMBOL_MAX, &symbol, r) ||
        targ_string_list(args, "repo", REFS_MAX_FILTERS, REFS_ARG_MAX, &repos, &n_repos, r) ||
        targ_string_list(args, "file", REFS_MAX_FILTERS, REFS_ARG_MAX, &files, &n_files, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &max_files, r))
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
        struct fmt_refs_opts fo = {NULL, symbol, (int)max_files, cfg->output_budget, NULL};

        if (zq_build(&spec, &zq, &qerr)) {
            rc = targ_fail(r, "invalid find_references arguments: %s", qerr.msg);
            goto out;
        }
        if (targ_search(ctx, "find_references", zq, &so, &ro, &res, r))
            goto out;
        if (res.n_files == 0 && n_repos)
            targ_explain_empty(ctx, repos, n_repos, &note);
        fo.query = zq;
        fo.note = note.len ? note.data : NULL;
        buf_reset(&r->text);
        rc = fmt_refs(&res, &fo, &r->text, &r->structured, &qerr);
        if (rc)
            zk_err_set(err, rc, "find_references: %s", qerr.msg);
    }
out:
    buf_free(&note);
    zr_search_free(&res);
    free(pattern);
    free(zq);
    free(repos);
    free(files);
    return rc;
}
