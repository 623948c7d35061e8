/* tools.c: the tool catalogue and the driver every call goes through; see tools.h. Each tool is a
 * declaration (connector/tools/schema/<name>.json, embedded by schemas.S) and a def (pipeline.h) in its
 * own file (search.c, repos.c, read.c, files.c, refs.c, symbols.c, status.c). The driver owns what
 * the declarations say for every tool alike: the arguments must be an object whose members the
 * declaration names, so that a tool's parser and its published schema cannot drift apart. Then it runs
 * the tool's steps (pipeline.c). */
#include "connector/tools/tools.h"

#include "connector/tools/args.h"
#include "connector/tools/pipeline.h"
#include "connector/tools/schema/schemas.h"
#include "http.h"
#include "log.h"
#include "mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct tool_entry {
    const char *json;        /* the embedded declaration, not NUL-terminated */
    const size_t *json_len;
    const struct tool_def *def;
};

/* Indexed by enum tool_id, whose names are tools_names (names.c). */
static const struct tool_entry tools_decls[TOOL_COUNT] = {
    [TOOL_SEARCH_CODE] = {schema_search_code_start, &schema_search_code_len, &tool_search_code_def},
    [TOOL_LIST_REPOSITORIES] = {schema_list_repositories_start, &schema_list_repositories_len,
                                &tool_list_repositories_def},
    [TOOL_READ_FILE] = {schema_read_file_start, &schema_read_file_len, &tool_read_file_def},
    [TOOL_LIST_FILES] = {schema_list_files_start, &schema_list_files_len, &tool_list_files_def},
    [TOOL_FIND_REFERENCES] = {schema_find_references_start, &schema_find_references_len, &tool_find_references_def},
    [TOOL_FIND_SYMBOL] = {schema_find_symbol_start, &schema_find_symbol_len, &tool_find_symbol_def},
    [TOOL_FIND_DEPENDENTS] = {schema_find_dependents_start, &schema_find_dependents_len, &tool_find_dependents_def},
    [TOOL_CORPUS_STATUS] = {schema_corpus_status_start, &schema_corpus_status_len, &tool_corpus_status_def},
};

/* The parsed declarations, made once and read-only after: every thread may read them. */
static cJSON *tools_parsed[TOOL_COUNT];
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

static void tools_parse(void)
{
    for (int i = 0; i < TOOL_COUNT; i++) {
        tools_parsed[i] = cJSON_ParseWithLength(tools_decls[i].json, *tools_decls[i].json_len);
        /* The files are part of the build, and the unit tests parse each: a declaration that does not
         * parse, or names another tool, is a broken build, not a condition to serve around. */
        if (!tools_parsed[i] || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(tools_parsed[i], "name")) ||
            strcmp(cJSON_GetObjectItemCaseSensitive(tools_parsed[i], "name")->valuestring, tools_names[i]) != 0) {
            log_error("tool declaration does not parse or names another tool", "tool", tools_names[i], NULL);
            abort();
        }
    }
}

static const cJSON *tools_decl(int id)
{
    pthread_once(&tools_once, tools_parse);
    return tools_parsed[id];
}

cJSON *tools_list(void)
{
    cJSON *arr = cJSON_CreateArray();

    for (int i = 0; i < TOOL_COUNT; i++)
        cJSON_AddItemToArray(arr, cJSON_Duplicate(tools_decl(i), 1));
    return arr;
}

int tools_check_arguments(int id, const cJSON *args, struct tool_result *r)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(tools_decl(id), "inputSchema"), "properties");
    const cJSON *m, *p;

    if (!args || cJSON_IsNull(args))
        return ZK_OK;
    if (!cJSON_IsObject(args))
        return targ_fail(r, "arguments must be an object, got %s", targ_type(args)), ZK_EINVAL;
    cJSON_ArrayForEach(m, args) {
        char list[512] = "";

        if (m->string && cJSON_GetObjectItemCaseSensitive(props, m->string))
            continue;
        cJSON_ArrayForEach(p, props) {
            strncat(list, list[0] ? ", " : "", sizeof(list) - strlen(list) - 1);
            strncat(list, p->string, sizeof(list) - strlen(list) - 1);
        }
        return targ_fail(r, "unknown argument \"%.100s\"; this tool takes: %s", m->string ? m->string : "?",
                         list[0] ? list : "no arguments"),
               ZK_EINVAL;
    }
    return ZK_OK;
}

int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err)
{
    int id = tools_id(name), rc = ZK_OK;
    const struct tool_def *def;
    void *state;

    if (id < 0)
        return zk_err_set(err, ZK_ENOENT, "Unknown tool: %.200s", name ? name : "(none)");
    if (tools_check_arguments(id, args, out))
        return ZK_OK;
    def = tools_decls[id].def;
    state = mem_calloc(1, def->state_size);
    if (def->parse(ctx, args, state, out) == ZK_OK)
        rc = tpipe_run(ctx, name, def, state, out, err);
    if (def->release)
        def->release(state);
    free(state);
    return rc;
}

void tools_cancel(atomic_int *flag)
{
    http_cancel(flag);
}
