/* tools.c: the tool catalogue and dispatch; see tools.h. The tools live in search.c, repos.c, read.c,
 * files.c, refs.c, symbols.c and status.c; the argument checks they share in args.c; the result container
 * in result.c; their names in names.c. */
#include "connector/tools/tools.h"

#include "connector/tools/args.h"
#include "http.h"

struct tools_entry {
    cJSON *(*def)(void);
    int (*call)(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
};

/* Indexed by enum tool_id, whose names are tools_names (names.c). */
static const struct tools_entry tools_table[TOOL_COUNT] = {
    [TOOL_SEARCH_CODE] = {tool_search_code_def, tool_search_code},
    [TOOL_LIST_REPOSITORIES] = {tool_list_repositories_def, tool_list_repositories},
    [TOOL_READ_FILE] = {tool_read_file_def, tool_read_file},
    [TOOL_LIST_FILES] = {tool_list_files_def, tool_list_files},
    [TOOL_FIND_REFERENCES] = {tool_find_references_def, tool_find_references},
    [TOOL_FIND_SYMBOL] = {tool_find_symbol_def, tool_find_symbol},
    [TOOL_CORPUS_STATUS] = {tool_corpus_status_def, tool_corpus_status},
};

cJSON *tools_list(void)
{
    cJSON *arr = cJSON_CreateArray();

    /* Each definition is a constant the unit tests parse: only a lack of memory, which ends the
     * process, could make one NULL. */
    for (size_t i = 0; i < TOOL_COUNT; i++)
        cJSON_AddItemToArray(arr, tools_table[i].def());
    return arr;
}

int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err)
{
    int id = tools_id(name);

    if (id >= 0)
        return tools_table[id].call(ctx, args, out, err);
    return zk_err_set(err, ZK_EINVAL, "Unknown tool: %.200s", name ? name : "(none)");
}

void tools_cancel(atomic_int *flag)
{
    http_cancel(flag);
}
