/* names.c: the tools' names (tools.h), a module of their own so that the metrics and the tests that
 * replace the tools with fakes (tests/unit/test_mcp_server.c) link them without the tools. */
#include "connector/tools/tools.h"

#include <string.h>

const char *const tools_names[TOOL_COUNT] = {
    [TOOL_SEARCH_CODE] = "search_code",
    [TOOL_LIST_REPOSITORIES] = "list_repositories",
    [TOOL_READ_FILE] = "read_file",
    [TOOL_LIST_FILES] = "list_files",
    [TOOL_FIND_REFERENCES] = "find_references",
    [TOOL_FIND_SYMBOL] = "find_symbol",
    [TOOL_FIND_DEPENDENTS] = "find_dependents",
    [TOOL_CORPUS_STATUS] = "corpus_status",
};

int tools_id(const char *name)
{
    for (int i = 0; name && i < TOOL_COUNT; i++)
        if (strcmp(name, tools_names[i]) == 0)
            return i;
    return -1;
}
