/* search.c: the search_code tool: arguments -> Zoekt query -> /api/search -> compact text. */
#include "connector/format/search.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/run.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_MAX_FILTERS 50
#define SEARCH_MAX_ARG_LEN 1024

/* Bound on the note above an answer: a sentence per repository argument, each cut to a few hundred
 * bytes, for at most SEARCH_MAX_FILTERS of them. */
#define SEARCH_NOTE_MAX 16384

/* Reads the syntax argument ("regex", the default, or "zoekt") and the literal flag, which only a
 * pattern takes. Fails r for another value or for literal with the Zoekt syntax. */
static int search_syntax(const cJSON *args, int literal, enum zq_syntax *out, struct tool_result *r)
{
    const char *name = NULL;

    if (targ_string(args, "syntax", 16, &name, r))
        return ZK_EINVAL;
    if (name && strcmp(name, "zoekt") == 0 && literal)
        return targ_fail(r, "arguments \"literal\" and \"syntax\": \"zoekt\" do not go together: a literal is "
                            "one string, Zoekt's syntax a query language; drop one"), ZK_EINVAL;
    if (name && strcmp(name, "zoekt") != 0 && strcmp(name, "regex") != 0)
        return targ_fail(r, "argument \"syntax\" must be \"regex\" (the default: one RE2 pattern, as ripgrep "
                            "reads it) or \"zoekt\" (Zoekt's query language), got \"%.16s\"", name), ZK_EINVAL;
    *out = name && strcmp(name, "zoekt") == 0 ? ZQ_SYNTAX_ZOEKT : literal ? ZQ_SYNTAX_LITERAL : ZQ_SYNTAX_REGEX;
    return ZK_OK;
}

static const char search_no_symbols[] =
    "sym: matches symbol definitions only in repositories indexed with ctags: either there is no such "
    "definition or the repositories searched have no symbol data (find_symbol names them); search the "
    "definition's text instead (e.g. \"func Name(\" or \"type Name \").";

/* Files a cursor may page through: Zoekt ranks them again for each page, so a page past this many
 * costs a search that sends them all. */
#define SEARCH_PAGE_MAX 1000

/* Runs zq for the first wanted files of the ranked order (zr_rank), which a page of them can trust not
 * to change between requests: Zoekt is asked for one file more than wanted, and, while files of equal
 * score straddle the cut (zr_rank_is_prefix), for more, up to SEARCH_PAGE_MAX + 1. *ties says the cut
 * still straddles files of equal score there (or a wider answer failed: the narrower one stands). res
 * is the caller's to free, whatever the result. */
static int search_ranked(const struct zc_conn *c, const char *zq, struct zc_search_opts *so, const struct zr_opts *ro,
                         size_t wanted, struct zr_search *res, int *ties, struct zk_err *err)
{
    size_t asked = wanted + 1;
    struct zr_search wider;
    struct zk_err werr = {0};
    int rc;

    *ties = 0;
    so->max_files = (int)asked;
    if ((rc = zc_search(c, zq, so, ro, res, err)))
        return rc;
    zr_rank(res);
    while (!zr_rank_is_prefix(res, wanted, asked)) {
        if (asked > SEARCH_PAGE_MAX) {
            *ties = 1;
            break;
        }
        asked = asked * 4 > SEARCH_PAGE_MAX + 1 ? SEARCH_PAGE_MAX + 1 : asked * 4;
        so->max_files = (int)asked;
        memset(&wider, 0, sizeof(wider));
        if (zc_search(c, zq, so, ro, &wider, &werr)) {
            zr_search_free(&wider);
            *ties = 1;
            break;
        }
        zr_search_free(res);
        *res = wider;
        zr_rank(res);
    }
    return ZK_OK;
}

/* The readings a cursor names: the regex, or the literal text the regex fell back to. */
#define SEARCH_READ_REGEX 'r'
#define SEARCH_READ_LITERAL 'l'

/* Builds the query for spec, read as syntax, and what a cursor of it is of (the query and the reading). */
static int search_build(struct zq_spec *spec, enum zq_syntax syntax, char **zq, uint64_t *hash, struct zk_err *err)
{
    char reading[2] = {syntax == ZQ_SYNTAX_LITERAL ? SEARCH_READ_LITERAL : SEARCH_READ_REGEX, 0};

    free(*zq);
    *zq = NULL;
    spec->syntax = syntax;
    if (zq_build(spec, zq, err))
        return ZK_EINVAL;
    *hash = tcur_hash(tcur_hash(TCUR_HASH_INIT, reading), *zq);
    return ZK_OK;
}

int tool_search_code(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    const char **repos = NULL, **files = NULL, **excl = NULL;
    size_t n_repos = 0, n_files = 0, n_excl = 0, skip = 0;
    const char *query = NULL, *ref = NULL, *cursor = NULL;
    long context, max_files, max_bytes;
    int case_sensitive, literal, ties = 0, rc = ZK_OK;
    enum zq_syntax syntax;
    struct zk_err qerr = {0};
    struct zr_search res;
    char *zq = NULL, *next = NULL, position[TCUR_POSITION_MAX + 1];
    uint64_t hash = 0;
    struct buf note, indexed;

    memset(&res, 0, sizeof(res));
    buf_init(&note, SEARCH_NOTE_MAX);
    buf_init(&indexed, SEARCH_NOTE_MAX);
    if (targ_string(args, "query", 4096, &query, r) ||
        targ_string_list(args, "repo", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &repos, &n_repos, r) ||
        targ_string_list(args, "file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &files, &n_files, r) ||
        targ_string_list(args, "exclude_file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &excl, &n_excl, r) ||
        targ_string(args, "ref", 256, &ref, r) ||
        targ_int(args, "context_lines", 0, CONNECTOR_CONTEXT_LINES_LIMIT, cfg->context_lines, &context, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &max_files, r) ||
        targ_bool(args, "case_sensitive", 0, &case_sensitive, r) ||
        targ_int(args, "max_bytes", FMT_BUDGET_MIN, CONNECTOR_OUTPUT_BUDGET_LIMIT, (long)cfg->output_budget,
                 &max_bytes, r) ||
        targ_bool(args, "literal", 0, &literal, r) || search_syntax(args, literal, &syntax, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &cursor, r))
        goto out;

    {
        struct zq_spec spec = {query, repos, n_repos, files, n_files, excl, n_excl, case_sensitive, syntax, ref};
        struct zc_conn c = trun_conn(ctx, cfg->search_timeout_ms);
        struct zc_search_opts so = {0, (int)context, 1, 0, 1};
        struct zr_opts ro = {cfg->mirror_prefix, (int)context, FMT_FILE_MATCH_LINES};

        if (search_build(&spec, syntax, &zq, &hash, &qerr)) {
            rc = targ_fail(r, "invalid search arguments: %s", qerr.msg);
            goto out;
        }
        /* A page after the first continues the reading the first page settled on. */
        if (cursor && syntax == ZQ_SYNTAX_REGEX && !tcur_matches(cursor, 's', hash)) {
            uint64_t lhash;
            char *lzq = NULL;

            if (!search_build(&spec, ZQ_SYNTAX_LITERAL, &lzq, &lhash, &qerr) && tcur_matches(cursor, 's', lhash)) {
                free(zq);
                zq = lzq;
                hash = lhash;
            } else {
                free(lzq);
                spec.syntax = ZQ_SYNTAX_REGEX;
            }
        }
        if (tcur_read(cursor, 's', hash, position, r) || tcur_offset(position, SEARCH_PAGE_MAX, &skip, r))
            goto out;
        /* Every match of every file: Zoekt spends a match budget across the files in rank order and
         * drops the files after it runs out, so any budget would show fewer files than max_files
         * whenever the first ones have many matches (docs/connector.md, "The request"). */
        rc = search_ranked(&c, zq, &so, &ro, skip + (size_t)max_files, &res, &ties, &qerr);
        /* A pattern RE2 cannot parse (an unbalanced parenthesis, a lone '[') is what the agent meant
         * literally, nearly always; one that parses but matches nothing often is too (code such as
         * f(5 * time.Second) is a valid regex that matches no code). Either is searched as a literal,
         * and the note says which reading found what. */
        if (spec.syntax == ZQ_SYNTAX_REGEX && !skip && zq_has_metachar(query) &&
            ((rc == ZK_EINVAL) || (rc == ZK_OK && res.n_files == 0))) {
            int invalid = rc == ZK_EINVAL;

            if (buf_puts(&note, invalid ? "The pattern is not a valid regular expression, so it was searched as "
                                          "literal text."
                                        : "As a regular expression the pattern matched nothing; read as literal "
                                          "text,"))
                buf_reset(&note);
            zr_search_free(&res);
            memset(&res, 0, sizeof(res));
            if (search_build(&spec, ZQ_SYNTAX_LITERAL, &zq, &hash, &qerr)) {
                rc = targ_fail(r, "invalid search arguments: %s", qerr.msg);
                goto out;
            }
            rc = search_ranked(&c, zq, &so, &ro, skip + (size_t)max_files, &res, &ties, &qerr);
            if (!rc && !invalid &&
                buf_puts(&note, res.n_files ? " it matched what is shown." : " it matched nothing either."))
                buf_reset(&note);
        }
        if (rc) {
            rc = targ_fail_code(r, rc, "search failed: %s\nQuery sent: %s", qerr.msg, zq);
            goto out;
        }
    }

    /* A note is a courtesy: when it does not fit its bound it is dropped (a failed append empties the
     * buffer). */
    if (res.n_files == 0 && n_repos && !skip)
        tcat_explain_empty(ctx, repos, n_repos, &note);
    if (syntax == ZQ_SYNTAX_ZOEKT && zq_lint(query) &&
        buf_printf(&note, "%s%s", note.len ? " " : "", zq_lint(query)))
        buf_reset(&note);
    if (syntax == ZQ_SYNTAX_ZOEKT && res.n_files == 0 && zq_uses_symbols(query) &&
        buf_printf(&note, "%s%s", note.len ? " " : "", search_no_symbols))
        buf_reset(&note);
    if (ties && buf_printf(&note, "%sMore than %d files rank equally around the end of this page: a later page "
                                  "may repeat or miss some of them.", note.len ? " " : "", SEARCH_PAGE_MAX))
        buf_reset(&note);

    {
        /* The page: the files after those the earlier pages showed, in the ranked order. */
        struct zr_search page = res;
        size_t dropped = skip < res.n_files ? skip : res.n_files, shown;
        struct fmt_search_opts fo = {zq, (int)max_files, (size_t)max_bytes, zc_wall_time_ns(cfg->search_timeout_ms),
                                     NULL, NULL, skip, NULL};
        char at[32];

        page.files += dropped;
        page.n_files -= dropped;
        shown = page.n_files < (size_t)max_files ? page.n_files : (size_t)max_files;
        if (page.n_files) {
            tcat_indexed(ctx, &page, &indexed);
            tcat_web_urls(ctx, page.files, shown);
        }
        if ((res.n_files > skip + shown || res.stats.file_count > (long long)(skip + shown)) &&
            skip + shown < SEARCH_PAGE_MAX) {
            snprintf(at, sizeof(at), "%zu", skip + shown);
            next = tcur_make('s', hash, at);
        }
        fo.note = note.len ? note.data : NULL;
        fo.indexed = indexed.len ? indexed.data : NULL;
        fo.next_cursor = next;
        buf_reset(&r->text);
        rc = fmt_search(&page, &fo, &r->text, &r->structured, &qerr);
        if (rc)
            goto fail;
    }
    goto out;

fail:
    zk_err_set(err, rc, "search_code: %s", qerr.msg);
out:
    buf_free(&note);
    buf_free(&indexed);
    zr_search_free(&res);
    free(zq);
    free(next);
    free(repos);
    free(files);
    free(excl);
    return rc;
}
