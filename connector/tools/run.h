/* run.h: what a tool's run shares beyond its arguments (args.h) and the repositories
 * (catalogue.h): the Zoekt connection of a call and a search whose failure is the call's answer; and
 * the run function of each tool, which tools.c's driver calls. */
#ifndef ZK_CONNECTOR_TOOLS_RUN_H
#define ZK_CONNECTOR_TOOLS_RUN_H

#include "connector/tools/tools.h"
#include "connector/zoekt/client.h"

#include <cjson/cJSON.h>

/* The Zoekt connection for a tool call, from the configuration (timeout_ms: search or list). */
struct zc_conn trun_conn(const struct tool_ctx *ctx, long timeout_ms);

/* Runs the Zoekt query zq for tool (its name, for the message) with the configured search timeout:
 * ZK_OK with *res filled (the caller frees it with zr_search_free, also after a failure), or fails r
 * with "<tool> failed: <why>\nQuery sent: <zq>" and the client's code, and returns ZK_EINVAL, as the
 * argument checks do. */
int trun_search(const struct tool_ctx *ctx, const char *tool, const char *zq, const struct zc_search_opts *so,
                const struct zr_opts *ro, struct zr_search *res, struct tool_result *r);

/* Each tool's run function, which tools.c calls after checking that args is absent or an object whose
 * members the tool's declaration names; the contract of tools_call (ZK_OK with r filled, failures the
 * agent should see as is_error). */
int tool_search_code(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_list_repositories(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r,
                           struct zk_err *err);
int tool_read_file(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_corpus_status(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_list_files(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_find_references(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_find_symbol(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);

#endif
