/* repos.c: the list_repositories tool: /api/list -> names, branches, index times. */
#include "connector/format.h"
#include "connector/tools/args.h"
#include "connector/zoekt/reponame.h"

#include <string.h>

#define REPOS_LIMIT_DEFAULT 100
#define REPOS_LIMIT_MAX 1000

static const char repos_def[] =
    "{\"name\":\"list_repositories\",\"title\":\"List indexed repositories\","
    "\"description\":\"Lists the repositories the search index serves, with their indexed branches "
    "(branch@commit) and when each was last indexed (UTC). Use the names as the repo argument of "
    "search_code. filter narrows the list, written as search_code's repo: a name or its last path segments "
    "(payments, acme/payments), a glob (payments*, acme/*) or a clone URL; when no name matches that way, a "
    "plain filter matches as a case-insensitive substring (api finds acme/api-gateway), and when nothing "
    "matches at all the answer names the closest repositories.\","
    "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"filter\":{\"type\":\"string\",\"maxLength\":200,\"description\":\"Repository name, trailing path segments, glob, URL or substring.\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"Repositories to show "
    "(default 100).\"}}},"
    "\"annotations\":{\"title\":\"List indexed repositories\",\"readOnlyHint\":true,\"destructiveHint\":false,"
    "\"idempotentHint\":true,\"openWorldHint\":false}}";

cJSON *tool_list_repositories_def(void)
{
    return cJSON_Parse(repos_def);
}

int tool_list_repositories(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r,
                           struct zk_err *err)
{
    static const char *const known[] = {"filter", "limit", NULL};
    struct zk_err lerr = {0};
    const char *filter = NULL;
    char pattern[ZN_ARG_MAX + 1];
    const struct zr_list *l = NULL;
    long limit;
    int rc;

    if (targ_check_known(args, known, r) || targ_string(args, "filter", 200, &filter, r) ||
        targ_int(args, "limit", 1, REPOS_LIMIT_MAX, REPOS_LIMIT_DEFAULT, &limit, r))
        return ZK_OK;
    if (filter && *filter && targ_repo_pattern("filter", filter, pattern, r))
        return ZK_OK;
    rc = targ_list_get(ctx, &l, &lerr);
    if (rc) {
        rc = targ_fail_code(r, rc, "listing repositories failed: %s", lerr.msg);
        goto out;
    }
    buf_reset(&r->text);
    rc = fmt_repos(l, filter && *filter ? pattern : NULL, (int)limit, ctx->cfg->output_budget, time(NULL), &r->text,
                   &r->structured, &lerr);
    if (rc)
        zk_err_set(err, rc, "list_repositories: %s", lerr.msg);
out:
    targ_list_put(ctx, l);
    return rc;
}
