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
    "\"description\":\"Search source code in the indexed repositories (Zoekt trigram index: fast, exact, "
    "regex-capable). Returns matching lines grouped by repository and file: each file as repo/path @commit, "
    "then lines as '> 12: text' (a matching line) or '  11: text' (context), '--' between separate regions. "
    "The header says how many files and matches exist, how many are shown, and why the list is incomplete.\\n\\n"
    "Query syntax (Zoekt): terms separated by spaces must ALL match (there is no AND/and operator); the "
    "lower-case word or between terms gives alternatives (foo or bar); a leading - excludes (-test); "
    "parentheses group; \\\"double quotes\\\" keep spaces in one term. Terms are RE2 regular expressions: "
    "escape . ( ) [ ] { } * + ? | ^ $ with a backslash to match them literally (foo\\\\(\\\\) finds foo()). "
    "Atoms usable in the query: lang:go, sym:Name (symbol definitions), content:text (file contents only), "
    "case:yes, branch:main, and regex filters file:\\\\.go$ and repo:^api$.\\n\\n"
    "Prefer the arguments repo, file and exclude_file to filters typed into the query: they accept plain names "
    "and globs (*.yaml, src/**/*.c, vendor/) and are converted to correctly anchored regexes. The final "
    "Zoekt query is echoed in the result.\\n\\n"
    "Examples: {\\\"query\\\":\\\"func ParseConfig\\\",\\\"file\\\":\\\"*.go\\\"}; "
    "{\\\"query\\\":\\\"TODO or FIXME\\\",\\\"repo\\\":[\\\"api\\\",\\\"web\\\"],\\\"exclude_file\\\":\\\"vendor/\\\"}; "
    "{\\\"query\\\":\\\"sym:HandleSearch\\\"}; {\\\"file\\\":\\\"**/Dockerfile\\\"} (find files by path only).\","
    "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"query\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"Zoekt query or plain text (see the tool "
    "description). Optional when file is given.\"},"
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
    "\"case_sensitive\":{\"type\":\"boolean\",\"description\":\"Match case exactly. Default: Zoekt's case:auto, "
    "case-sensitive only when the query has an upper-case letter.\"},"
    "\"max_bytes\":{\"type\":\"integer\",\"minimum\":2048,\"maximum\":65536,\"description\":\"Output budget in bytes "
    "(server default: 16384). Lines are cut before files are left out.\"}}},"
    "\"outputSchema\":{\"type\":\"object\",\"required\":[\"query\",\"totalFiles\",\"totalMatches\",\"shownFiles\","
    "\"complete\",\"truncation\",\"files\"],\"properties\":{"
    "\"query\":{\"type\":\"string\",\"description\":\"The Zoekt query that ran.\"},"
    "\"totalFiles\":{\"type\":\"integer\"},\"totalMatches\":{\"type\":\"integer\"},\"shownFiles\":{\"type\":\"integer\"},"
    "\"complete\":{\"type\":\"boolean\",\"description\":\"True when nothing was left out.\"},"
    "\"truncation\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"max_files\",\"timeout\","
    "\"zoekt_limit\",\"shard_errors\",\"per_file_cap\",\"output_budget\"]}},"
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

/* After an empty result with repository filters, tells "no match in the repositories" apart from
 * "no such repository", and names the closest indexed repositories for each argument that selects
 * none. Appends to note, which a sentence that does not fit empties (the note is a courtesy). */
static void search_explain_empty(const struct tool_ctx *ctx, const char *const *repos, size_t n, struct buf *note)
{
    struct zc_conn c = targ_conn(ctx, ctx->cfg->list_timeout_ms);
    struct zr_opts ro = {ctx->cfg->mirror_prefix, -1, 0};
    struct zk_err err = {0};
    char pattern[ZN_ARG_MAX + 1];
    size_t missing = 0;
    struct zr_list l;
    int rc;

    rc = zc_list(&c, "", &ro, &l, &err);
    if (rc) {
        rc = buf_printf(note, "could not check whether the repositories are indexed: %s", err.msg);
        goto out;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        /* zq_build accepted every argument, so each one normalises. */
        if (zn_normalize(repos[i], pattern, sizeof(pattern), &err) || targ_repo_indexed(&l, pattern))
            continue;
        rc = missing++ ? buf_putc(note, ' ') : ZK_OK;
        if (!rc)
            rc = targ_no_repo(&l, repos[i], pattern, note);
    }
    if (!rc && !missing)
        rc = buf_printf(note, "the repositor%s searched %s indexed; the query matched nothing in %s.",
                        n == 1 ? "y" : "ies", n == 1 ? "is" : "are", n == 1 ? "it" : "them");
out:
    zr_list_free(&l);
}

int tool_search_code(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err)
{
    static const char *const known[] = {"query",   "repo",           "file",      "exclude_file", "context_lines",
                                        "max_files", "case_sensitive", "max_bytes", NULL};
    const struct connector_config *cfg = ctx->cfg;
    const char **repos = NULL, **files = NULL, **excl = NULL;
    size_t n_repos = 0, n_files = 0, n_excl = 0;
    const char *query = NULL;
    long context, max_files, max_bytes;
    int case_sensitive, rc = ZK_OK;
    struct zk_err qerr = {0};
    struct zr_search res;
    char *zq = NULL;
    struct buf note;

    memset(&res, 0, sizeof(res));
    buf_init(&note, SEARCH_NOTE_MAX);
    if (targ_check_known(args, known, r) || targ_string(args, "query", 4096, &query, r) ||
        targ_string_list(args, "repo", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &repos, &n_repos, r) ||
        targ_string_list(args, "file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &files, &n_files, r) ||
        targ_string_list(args, "exclude_file", SEARCH_MAX_FILTERS, SEARCH_MAX_ARG_LEN, &excl, &n_excl, r) ||
        targ_int(args, "context_lines", 0, CONNECTOR_CONTEXT_LINES_LIMIT, cfg->context_lines, &context, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, cfg->max_files, &max_files, r) ||
        targ_bool(args, "case_sensitive", 0, &case_sensitive, r) ||
        targ_int(args, "max_bytes", FMT_BUDGET_MIN, CONNECTOR_OUTPUT_BUDGET_LIMIT, (long)cfg->output_budget,
                 &max_bytes, r))
        goto out;

    {
        struct zq_spec spec = {query, repos, n_repos, files, n_files, excl, n_excl, case_sensitive};

        if (zq_build(&spec, &zq, &qerr)) {
            rc = targ_fail(r, "invalid search arguments: %s", qerr.msg);
            goto out;
        }
    }

    {
        struct zc_conn c = targ_conn(ctx, cfg->search_timeout_ms);
        struct zc_search_opts so = {(int)max_files, (int)context, 1, 0};
        struct zr_opts ro = {cfg->mirror_prefix, (int)context, FMT_FILE_MATCH_LINES};

        rc = zc_search(&c, zq, &so, &ro, &res, &qerr);
        if (rc) {
            rc = targ_fail(r, "search failed: %s\nQuery sent: %s", qerr.msg, zq);
            goto out;
        }
    }

    /* A note is a courtesy: when it does not fit its bound it is dropped (a failed append empties the
     * buffer). */
    if (res.n_files == 0 && n_repos)
        search_explain_empty(ctx, repos, n_repos, &note);
    if (zq_lint(query) && buf_printf(&note, "%s%s", note.len ? " " : "", zq_lint(query)))
        buf_reset(&note);

    {
        struct fmt_search_opts fo = {zq, (int)max_files, (size_t)max_bytes, zc_wall_time_ns(cfg->search_timeout_ms),
                                     note.len ? note.data : NULL};

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
    zr_search_free(&res);
    free(zq);
    free(repos);
    free(files);
    free(excl);
    return rc;
}
