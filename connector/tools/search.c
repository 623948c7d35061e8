/* search.c: the search_code tool: arguments -> Zoekt query -> /api/search -> compact text. */
#include "connector/format/search.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/tools/cursor.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_MAX_FILTERS 50
#define SEARCH_MAX_ARG_LEN 1024

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

/* Files a cursor may page through: a page past them costs a search that sends them all (pipeline.c
 * asks for no more than this many, plus one). */
#define SEARCH_PAGE_MAX 1000

/* The readings a cursor names: the regex, or the literal text the regex fell back to. */
#define SEARCH_READ_REGEX 'r'
#define SEARCH_READ_LITERAL 'l'

struct search_state {
    const char *query, *ref, *cursor;
    const char **repos, **files, **excl; /* heap arrays of pointers into the arguments */
    size_t n_repos, n_files, n_excl;
    long context, max_files, max_bytes;
    int case_sensitive;
    enum zq_syntax syntax;
    size_t skip;   /* the files the pages before the cursor's showed */
    uint64_t hash; /* what the pages are of: the reading and the query last planned */
};

static int search_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    const struct connector_config *cfg = ctx->cfg;
    struct search_state *st = state;
    int literal;

    if (targ_string(args, "query", 4096, &st->query, r) ||
        targ_string_list(args, "repo", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &st->repos, &st->n_repos, r) ||
        targ_string_list(args, "file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &st->files, &st->n_files, r) ||
        targ_string_list(args, "exclude_file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &st->excl, &st->n_excl, r) ||
        targ_string(args, "ref", 256, &st->ref, r) ||
        targ_int(args, "context_lines", 0, CONNECTOR_CONTEXT_LINES_LIMIT, cfg->context_lines, &st->context, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &st->max_files, r) ||
        targ_bool(args, "case_sensitive", 0, &st->case_sensitive, r) ||
        targ_int(args, "max_bytes", FMT_BUDGET_MIN, CONNECTOR_OUTPUT_BUDGET_LIMIT, (long)cfg->output_budget,
                 &st->max_bytes, r) ||
        targ_bool(args, "literal", 0, &literal, r) || search_syntax(args, literal, &st->syntax, r) ||
        targ_string(args, "cursor", FMT_CURSOR_MAX, &st->cursor, r))
        return ZK_EINVAL;
    return ZK_OK;
}

/* Builds the query for the state's arguments read as syntax into *zq, and what a cursor of it is of
 * (the query and the reading) into *hash. Fails r. */
static int search_build(const struct search_state *st, enum zq_syntax syntax, char **zq, uint64_t *hash,
                        struct tool_result *r)
{
    struct zq_spec spec = {st->query, st->repos, st->n_repos, st->files, st->n_files, st->excl, st->n_excl,
                           st->case_sensitive, syntax, st->ref};
    char reading[2] = {syntax == ZQ_SYNTAX_LITERAL ? SEARCH_READ_LITERAL : SEARCH_READ_REGEX, 0};
    struct zk_err err = {0};

    if (zq_build(&spec, zq, &err))
        return targ_fail(r, "invalid search arguments: %s", err.msg), ZK_EINVAL;
    *hash = tcur_hash(tcur_hash(TCUR_HASH_INIT, reading), *zq);
    return ZK_OK;
}

static int search_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                       struct tool_result *r)
{
    const struct connector_config *cfg = ctx->cfg;
    struct search_state *st = state;
    enum zq_syntax syntax = reading == TOOL_READ_LITERALLY ? ZQ_SYNTAX_LITERAL : st->syntax;
    char position[TCUR_POSITION_MAX + 1];

    if (search_build(st, syntax, &q->zq, &st->hash, r))
        return ZK_EINVAL;
    /* A page after the first continues the reading the first page settled on. */
    if (st->cursor && syntax == ZQ_SYNTAX_REGEX && !tcur_matches(st->cursor, 's', st->hash)) {
        char *literal = NULL;
        uint64_t hash;

        if (search_build(st, ZQ_SYNTAX_LITERAL, &literal, &hash, r) == ZK_OK && tcur_matches(st->cursor, 's', hash)) {
            free(q->zq);
            q->zq = literal;
            st->hash = hash;
            syntax = ZQ_SYNTAX_LITERAL;
        } else {
            free(literal);
        }
    }
    if (reading == TOOL_READ_AS_GIVEN &&
        (tcur_read(st->cursor, 's', st->hash, position, r) || tcur_offset(position, SEARCH_PAGE_MAX, &st->skip, r)))
        return ZK_EINVAL;
    /* Every match of every file: Zoekt spends a match budget across the files in rank order and drops
     * the files after it runs out, so any budget would show fewer files than max_files whenever the
     * first ones have many matches (docs/connector.md, "The request"). */
    q->so = (struct zc_search_opts){.context_lines = (int)st->context, .chunk_matches = 1, .all_matches = 1};
    q->ro = (struct zr_opts){cfg->mirror_prefix, (int)st->context, FMT_FILE_MATCH_LINES};
    q->literal_fallback = syntax == ZQ_SYNTAX_REGEX && !st->skip && zq_has_metachar(st->query);
    q->ranked = 1;
    q->skip = st->skip;
    q->page = (size_t)st->max_files;
    q->linked = (size_t)st->max_files;
    q->indexed = 1;
    q->repos = st->repos;
    q->n_repos = st->n_repos;
    return ZK_OK;
}

static int search_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                         struct zk_err *err)
{
    struct search_state *st = state;
    const char *lint = st->syntax == ZQ_SYNTAX_ZOEKT ? zq_lint(st->query) : NULL;
    size_t shown = a->page.n_files < (size_t)st->max_files ? a->page.n_files : (size_t)st->max_files;
    struct fmt_search_opts fo = {a->zq, (int)st->max_files, (size_t)st->max_bytes,
                                 zc_wall_time_ns(ctx->cfg->search_timeout_ms), NULL, NULL, st->skip, NULL};
    struct zk_err ferr = {0};
    char *next = NULL;
    int rc;

    /* A sentence that does not fit the note empties it (buf.h): the note is a courtesy. */
    if (lint && buf_printf(&a->note, "%s%s", a->note.len ? " " : "", lint))
        buf_reset(&a->note);
    if (st->syntax == ZQ_SYNTAX_ZOEKT && a->res.n_files == 0 && zq_uses_symbols(st->query) &&
        buf_printf(&a->note, "%s%s", a->note.len ? " " : "", search_no_symbols))
        buf_reset(&a->note);
    if (a->ties && buf_printf(&a->note, "%sMore than %d files rank equally around the end of this page: a later "
                                        "page may repeat or miss some of them.", a->note.len ? " " : "",
                              SEARCH_PAGE_MAX))
        buf_reset(&a->note);
    if ((a->res.n_files > st->skip + shown || a->res.stats.file_count > (long long)(st->skip + shown)) &&
        st->skip + shown < SEARCH_PAGE_MAX) {
        char at[32];

        snprintf(at, sizeof(at), "%zu", st->skip + shown);
        next = tcur_make('s', st->hash, at);
    }
    fo.note = a->note.len ? a->note.data : NULL;
    fo.indexed = a->indexed.len ? a->indexed.data : NULL;
    fo.next_cursor = next;
    buf_reset(&r->text);
    rc = fmt_search(&a->page, &fo, &r->text, &r->structured, &ferr);
    if (rc)
        zk_err_set(err, rc, "search_code: %s", ferr.msg);
    free(next);
    return rc;
}

static void search_release(void *state)
{
    struct search_state *st = state;

    free(st->repos);
    free(st->files);
    free(st->excl);
}

const struct tool_def tool_search_code_def = {sizeof(struct search_state), search_parse, search_plan,
                                              search_render, search_release};
