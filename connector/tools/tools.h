/* tools.h: the MCP tools the connector offers, independent of the transport that carries them.
 *
 * mcp/server.c asks tools_list for the catalogue and hands every tools/call to tools_call; the tools
 * talk to Zoekt (zoekt/client.h) and the Kubernetes API, and format compact text for agents. */
#ifndef ZK_CONNECTOR_TOOLS_H
#define ZK_CONNECTOR_TOOLS_H

#include "buf.h"
#include "connector/config.h"
#include "err.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <time.h>

struct tool_ctx {
    const struct connector_config *cfg;
    const atomic_int *cancel; /* set with tools_cancel, by notifications/cancelled or a closed
                                 connection; may be NULL */
};

struct tool_result {
    struct buf text;    /* the text content block shown to the agent */
    cJSON *structured;  /* structuredContent, or NULL */
    int is_error;       /* isError: the call failed in a way the agent should read and act on */
    int code;           /* with is_error, the lib/err.h code of what failed: ZK_EINVAL for the caller's
                         * arguments, the Zoekt client's code for Zoekt's failures. The metrics count
                         * failures by it (connector/metrics.h), never by the text. */
};

/* The tools, in the order tools/list shows them. Their names are a fixed list, kept in
 * connector/tools/names.c apart from the tools themselves, so that the metrics (which use the names
 * as a label's only values) and the tests that replace the tools with fakes can both link them. */
enum tool_id {
    TOOL_SEARCH_CODE,
    TOOL_LIST_REPOSITORIES,
    TOOL_READ_FILE,
    TOOL_LIST_FILES,
    TOOL_FIND_REFERENCES,
    TOOL_FIND_SYMBOL,
    TOOL_FIND_DEPENDENTS,
    TOOL_CORPUS_STATUS,
    TOOL_COUNT
};
extern const char *const tools_names[TOOL_COUNT];

/* The id of the tool called name, or -1 when no tool has that name (or name is NULL). */
int tools_id(const char *name);

/* The tool catalogue for tools/list: a new array of Tool objects owned by the caller (cJSON_Delete). */
cJSON *tools_list(void);

/* Runs tool name with args (an object, possibly NULL). Returns ZK_OK with *out filled, including
 * failures the agent should see (bad arguments, Zoekt down, a query Zoekt rejects: is_error = 1, the
 * text says what was tried and whether a retry makes sense). Returns ZK_ENOENT only when no tool has
 * that name (a JSON-RPC -32602 error); any other code (ZK_ETOOBIG when the answer does not fit its text
 * buffer) is a fault of the connector's. out is owned by the caller: tool_result_free, also after a
 * failure. */
int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err);

/* What tools_call checks before it runs tool id (enum tool_id) for every tool alike: args is absent or
 * an object whose members the tool's declaration names. Returns ZK_OK, or fails r with a message that
 * lists what the tool takes and returns ZK_EINVAL. */
int tools_check_arguments(int id, const cJSON *args, struct tool_result *r);

/* Asks the tool call whose tool_ctx.cancel is flag to stop: sets the flag and wakes the call's Zoekt
 * request, which then ends at once with ZK_ECANCELLED. Safe from any thread. */
void tools_cancel(atomic_int *flag);

void tool_result_init(struct tool_result *r);
void tool_result_free(struct tool_result *r);

/* What a GET /index-status asks for (front.c reads it from the query string). */
struct index_status_opts {
    long max_age_seconds; /* ?maxAge=36h: judge each repository against it; 0: no judgement */
    int all;              /* ?repositories=all: list each repository with its index time and branches */
    int anonymous;        /* the caller showed no accepted bearer token where tokens are configured: no
                           * name goes out ("staleRepositories" is left out; front.c refuses all) */
};

/* Repositories named in "staleRepositories", and listed at most in "repositoryList". */
#define TOOLS_STALE_NAMES_MAX 20
#define TOOLS_REPOSITORY_LIST_MAX 1000
#define TOOLS_REPOSITORY_LIST_BYTES (1024 * 1024)

/* The body of GET /index-status: {"repositories":N,"shards":N,"newestIndexTime":"...",
 * "oldestIndexTime":"...","zoektVersion":"..."} computed from Zoekt's /api/list. No repository names or
 * contents, except: with o->max_age_seconds, "stale":N (repositories whose index time is older than
 * that) and, unless o->anonymous, "staleRepositories":[at most TOOLS_STALE_NAMES_MAX names, oldest first];
 * with o->all,
 * "repositoryList":[{"name","indexTime","branches":[{"name","commit"}]}] oldest first, at most
 * TOOLS_REPOSITORY_LIST_MAX of them in about TOOLS_REPOSITORY_LIST_BYTES, and "listed":N. o may be
 * NULL (neither). Returns ZK_OK with *json_out (heap, caller frees), or a transport/parse error in err. */
int tools_index_status(const struct connector_config *cfg, const struct index_status_opts *o, char **json_out,
                       struct zk_err *err);

struct zr_list;
/* The same body as an object (caller frees), from a repository list, judged at now: the pure part. */
cJSON *tools_index_status_json(const struct zr_list *l, const struct index_status_opts *o, time_t now);

#endif
