/* tools.c: the tool catalogue and dispatch; see tools.h. The tools live in search.c, repos.c, read.c,
 * files.c, refs.c, symbols.c and status.c; the argument checks they share in args.c; the result container in result.c. */
#include "connector/tools/tools.h"

#include "connector/tools/args.h"
#include "http.h"

#include <string.h>

struct tools_entry {
    const char *name;
    cJSON *(*def)(void);
    int (*call)(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
};

static const struct tools_entry tools_table[] = {
    {"search_code", tool_search_code_def, tool_search_code},
    {"list_repositories", tool_list_repositories_def, tool_list_repositories},
    {"read_file", tool_read_file_def, tool_read_file},
    {"list_files", tool_list_files_def, tool_list_files},
    {"find_references", tool_find_references_def, tool_find_references},
    {"find_symbol", tool_find_symbol_def, tool_find_symbol},
    {"corpus_status", tool_corpus_status_def, tool_corpus_status},
};

#define TOOLS_COUNT (sizeof(tools_table) / sizeof(tools_table[0]))

cJSON *tools_list(void)
{
    cJSON *arr = cJSON_CreateArray();

    /* Each definition is a constant the unit tests parse: only a lack of memory, which ends the
     * process, could make one NULL. */
    for (size_t i = 0; i < TOOLS_COUNT; i++)
        cJSON_AddItemToArray(arr, tools_table[i].def());
    return arr;
}

int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err)
{
    for (size_t i = 0; name && i < TOOLS_COUNT; i++)
        if (strcmp(name, tools_table[i].name) == 0)
            return tools_table[i].call(ctx, args, out, err);
    return zk_err_set(err, ZK_EINVAL, "Unknown tool: %.200s", name ? name : "(none)");
}

void tools_cancel(atomic_int *flag)
{
    http_cancel(flag);
}
