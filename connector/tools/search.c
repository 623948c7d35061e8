/* search.c: the search_code tool: arguments -> Zoekt query -> /api/search -> compact text. */
#include "connector/format.h"
#include "connector/tools/args.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_MAX_FILTERS 50
#define SEARCH_MAX_ARG_LEN 1024

static const char search_def[] =
    "{\"name\":\"search_code\",\"title\":\"Search code\","
    "\"description\":\"Search source code in the indexed repositories (Zoekt trigram index: fast, exact). Returns "
    "matching lines grouped by repository and file: each file as repo/path @commit, then lines as '> 12: text' (a "
    "matching line) or '  11: text' (context), '--' between separate regions. The header says how many files and "
    "matches exist, how many are shown, and why the list is incomplete.\\n\\n"
    "query is one pattern, read as ripgrep (rg) reads it: an RE2 regular expression over file contents, spaces "
    "included (func main( finds that text; time\\\\.Sleep\\\\([0-9]+ finds calls), smart case (case-insensitive "
    "unless the pattern has an upper-case letter; case_sensitive forces it). A pattern that is not a valid regex "
    "is searched as literal text and a note says so; literal: true always searches the literal text (rg -F). "
    "syntax: \\\"zoekt\\\" reads query as Zoekt's query language instead: space-separated terms that must all "
    "match, the lower-case word or, a leading - to exclude, lang:go, case:yes, file:regex, repo:regex, "
    "\\\"quotes\\\" for spaces (a backslash inside quotes must be doubled). sym:Name matches symbol "
    "definitions in repositories indexed with ctags; find_symbol does that with kinds and scopes.\\n\\n"
    "Filter with the arguments repo, file and exclude_file: they accept plain names and globs (*.yaml, "
    "src/**/*.c, vendor/). The final Zoekt query is echoed in the result.\\n\\n"
    "Examples: {\\\"query\\\":\\\"func ParseConfig(\\\",\\\"file\\\":\\\"*.go\\\"}; "
    "{\\\"query\\\":\\\"TODO|FIXME\\\",\\\"repo\\\":[\\\"api\\\",\\\"web\\\"],\\\"exclude_file\\\":\\\"vendor/\\\"}; "
    "{\\\"query\\\":\\\"lang:go Informer -file:_test\\\",\\\"syntax\\\":\\\"zoekt\\\"}; "
    "{\\\"file\\\":\\\"**/Dockerfile\\\"} (find files by path only).\","
    "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"query\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"One RE2 pattern, as ripgrep reads it "
    "(see the tool description). Optional when file is given.\"},"
    "\"literal\":{\"type\":\"boolean\",\"description\":\"Search query as literal text, no regex (rg -F). "
    "Default false.\"},"
    "\"syntax\":{\"type\":\"string\",\"enum\":[\"regex\",\"zoekt\"],\"description\":\"regex (default): "
    "query is one pattern; zoekt: query is in Zoekt's query language (AND of terms, or, -, lang:, case:).\"},"
    "\"repo\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":50}],"
    "\"description\":\"Repository name(s): the name list_repositories shows, its last path segments (payments "
    "selects acme/payments, not acme/payments-api), a glob (acme/api-*, payments*) or a clone URL. Several are "
    "OR-ed: a file in any of them matches. A name that selects nothing gets the closest names in a note.\"},"
    "\"file\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":50}],"
    "\"description\":\"Path glob(s) a file must match; several are OR-ed. * stays within a directory, ** crosses "
    "directories, ? is one character, [ch] a class, {c,h} alternatives. A glob without / matches the file name "
    "anywhere (*.yaml); with / it matches from the repository root (src/**/*.c); a trailing / means everything "
    "below (docs/).\"},"
    "\"exclude_file\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
    "\"maxItems\":50}],\"description\":\"Path glob(s) to leave out, same syntax as file (e.g. *_test.go, vendor/).\"},"
    "\"context_lines\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10,\"description\":\"Lines of context around "
    "each match (server default: 2).\"},"
    "\"max_files\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,\"description\":\"Files to show (server default: "
    "30). The header says when more matched.\"},"
    "\"case_sensitive\":{\"type\":\"boolean\",\"description\":\"Match case exactly. Default: smart case, "
    "case-sensitive only when the query has an upper-case letter.\"},"
    "\"max_bytes\":{\"type\":\"integer\",\"minimum\":2048,\"maximum\":65536,\"description\":\"Output budget in bytes "
    "(server default: 16384). Lines are cut before files are left out.\"}}},"
    "\"outputSchema\":{\"type\":\"object\",\"required\":[\"query\",\"totalFiles\",\"totalMatches\",\"shownFiles\","
    "\"complete\",\"truncation\",\"files\"],\"properties\":{"
    "\"query\":{\"type\":\"string\",\"description\":\"The Zoekt query that ran.\"},"
    "\"totalFiles\":{\"type\":\"integer\"},\"totalMatches\":{\"type\":\"integer\"},\"shownFiles\":{\"type\":\"integer\"},"
    "\"complete\":{\"type\":\"boolean\",\"description\":\"True when nothing was left out.\"},"
    "\"truncation\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"max_files\",\"timeout\","
    "\"zoekt_limit\",\"shard_errors\",\"per_file_cap\",\"output_budget\",\"zoekt_sent_fewer\"]}},"
    "\"note\":{\"type\":\"string\"},"
    "\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"repository\",\"path\",\"matches\"],"
    "\"properties\":{\"repository\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
    "\"version\":{\"type\":\"string\",\"description\":\"The indexed commit.\"},\"language\":{\"type\":\"string\"},"
    "\"branches\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"fileNameMatch\":{\"type\":\"boolean\"},"
    "\"matchingLines\":{\"type\":\"integer\"},"
    "\"matches\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"line\",\"text\"],"
    "\"properties\":{\"line\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"}}}}}}}}},"
    "\"annotations\":{\"title\":\"Search code\",\"readOnlyHint\":true,\"destructiveHint\":false,"
    "\"idempotentHint\":true,\"openWorldHint\":false}}";

cJSON *tool_search_code_def(void)
{
    return cJSON_Parse(search_def);
}

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

/* Go's regexp parser, which Zoekt uses, starts every complaint with this. */
#define SEARCH_REGEX_ERROR "error parsing regexp: "

/* Whether Zoekt's error message msg says the pattern is not a regular expression; if so, appends the
 * note that says it was searched as a literal, with Go's reason. */
static int search_bad_regex(const char *msg, struct buf *note)
{
    const char *why = strstr(msg, SEARCH_REGEX_ERROR), *end;
    size_t n;

    if (!why)
        return 0;
    why += strlen(SEARCH_REGEX_ERROR);
    /* Go writes "<reason>: `<the part at fault>`"; the pattern is the agent's own, so the reason is
     * enough. Without that shape, the reason ends where the client's advice begins. */
    end = strstr(why, ": `");
    if (!end)
        end = strstr(why, " (fix the query");
    n = end ? (size_t)(end - why) : strlen(why);
    if (buf_printf(note, "%sThe pattern is not a valid regular expression (%.*s), so it was searched as literal "
                         "text; escape the metacharacters, or pass literal: true, to say so.",
                   note->len ? " " : "", (int)(n < 200 ? n : 200), why))
        buf_reset(note);
    return 1;
}

static const char search_no_symbols[] =
    "sym: matches symbol definitions only in repositories indexed with ctags: either there is no such "
    "definition or the repositories searched have no symbol data (find_symbol names them); search the "
    "definition's text instead (e.g. \"func Name(\" or \"type Name \").";

int tool_search_code(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    static const char *const known[] = {"query",     "repo",           "file",      "exclude_file", "context_lines",
                                        "max_files", "case_sensitive", "max_bytes", "literal",      "syntax",
                                        NULL};
    const struct connector_config *cfg = ctx->cfg;
    const char **repos = NULL, **files = NULL, **excl = NULL;
    size_t n_repos = 0, n_files = 0, n_excl = 0;
    const char *query = NULL;
    long context, max_files, max_bytes;
    int case_sensitive, literal, rc = ZK_OK;
    enum zq_syntax syntax;
    struct zk_err qerr = {0};
    struct zr_search res;
    char *zq = NULL;
    struct buf note, indexed;

    memset(&res, 0, sizeof(res));
    buf_init(&note, SEARCH_NOTE_MAX);
    buf_init(&indexed, SEARCH_NOTE_MAX);
    if (targ_check_known(args, known, r) || targ_string(args, "query", 4096, &query, r) ||
        targ_string_list(args, "repo", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &repos, &n_repos, r) ||
        targ_string_list(args, "file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &files, &n_files, r) ||
        targ_string_list(args, "exclude_file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &excl, &n_excl, r) ||
        targ_int(args, "context_lines", 0, CONNECTOR_CONTEXT_LINES_LIMIT, cfg->context_lines, &context, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &max_files, r) ||
        targ_bool(args, "case_sensitive", 0, &case_sensitive, r) ||
        targ_int(args, "max_bytes", FMT_BUDGET_MIN, CONNECTOR_OUTPUT_BUDGET_LIMIT, (long)cfg->output_budget,
                 &max_bytes, r) ||
        targ_bool(args, "literal", 0, &literal, r) || search_syntax(args, literal, &syntax, r))
        goto out;

    {
        struct zq_spec spec = {query, repos, n_repos, files, n_files, excl, n_excl, case_sensitive, syntax};
        struct zc_conn c = targ_conn(ctx, cfg->search_timeout_ms);
        /* Every match of every file: Zoekt spends a match budget across the files in rank order and
         * drops the files after it runs out, so any budget would show fewer files than max_files
         * whenever the first ones have many matches (docs/connector.md, "The request"). */
        struct zc_search_opts so = {(int)max_files, (int)context, 1, 0, 1};
        struct zr_opts ro = {cfg->mirror_prefix, (int)context, FMT_FILE_MATCH_LINES};

        if (zq_build(&spec, &zq, &qerr)) {
            rc = targ_fail(r, "invalid search arguments: %s", qerr.msg);
            goto out;
        }
        rc = zc_search(&c, zq, &so, &ro, &res, &qerr);
        /* A pattern RE2 cannot parse (an unbalanced parenthesis, a lone '[') is what the agent meant
         * literally, nearly always: it is searched as a literal, and the note says so. */
        if (rc && syntax == ZQ_SYNTAX_REGEX && search_bad_regex(qerr.msg, &note)) {
            free(zq);
            zr_search_free(&res);
            spec.syntax = ZQ_SYNTAX_LITERAL;
            if (zq_build(&spec, &zq, &qerr)) {
                rc = targ_fail(r, "invalid search arguments: %s", qerr.msg);
                goto out;
            }
            rc = zc_search(&c, zq, &so, &ro, &res, &qerr);
        }
        if (rc) {
            rc = targ_fail_code(r, rc, "search failed: %s\nQuery sent: %s", qerr.msg, zq);
            goto out;
        }
    }

    /* A note is a courtesy: when it does not fit its bound it is dropped (a failed append empties the
     * buffer). */
    if (res.n_files == 0 && n_repos)
        targ_explain_empty(ctx, repos, n_repos, &note);
    if (syntax == ZQ_SYNTAX_ZOEKT && zq_lint(query) &&
        buf_printf(&note, "%s%s", note.len ? " " : "", zq_lint(query)))
        buf_reset(&note);
    if (syntax == ZQ_SYNTAX_ZOEKT && res.n_files == 0 && zq_uses_symbols(query) &&
        buf_printf(&note, "%s%s", note.len ? " " : "", search_no_symbols))
        buf_reset(&note);

    if (res.n_files)
        targ_indexed(ctx, &res, &indexed);

    {
        struct fmt_search_opts fo = {zq, (int)max_files, (size_t)max_bytes, zc_wall_time_ns(cfg->search_timeout_ms),
                                     note.len ? note.data : NULL, indexed.len ? indexed.data : NULL};

        buf_reset(&r->text);
        rc = fmt_search(&res, &fo, &r->text, &r->structured, &qerr);
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
    free(repos);
    free(files);
    free(excl);
    return rc;
}
