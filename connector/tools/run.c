/* run.c: see run.h. */
#include "connector/tools/run.h"

#include "connector/tools/args.h"

struct zc_conn trun_conn(const struct tool_ctx *ctx, long timeout_ms)
{
    struct zc_conn c = {ctx->cfg->zoekt_url, ctx->cfg->zoekt_token, timeout_ms, ctx->cancel, ctx->cfg->zoekt_pool,
                        ctx->cfg->zoekt_budget};

    return c;
}

int trun_search(const struct tool_ctx *ctx, const char *tool, const char *zq, const struct zc_search_opts *so,
                const struct zr_opts *ro, struct zr_search *res, struct tool_result *r)
{
    struct zc_conn c = trun_conn(ctx, ctx->cfg->search_timeout_ms);
    struct zk_err err = {0};
    int rc = zc_search(&c, zq, so, ro, res, &err);

    if (rc == ZK_OK)
        return ZK_OK;
    (void)targ_fail_code(r, rc, "%s failed: %s\nQuery sent: %s", tool, err.msg, zq);
    return ZK_EINVAL;
}
