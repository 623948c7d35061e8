/* result.c: the tool_result container (see tools.h). It is a module of its own so that tests which
 * replace the tools with fakes (tests/unit/test_mcp_server.c, tests/fuzz/fuzz_mcp_session.c) share the
 * real container instead of redefining it. */
#include "connector/tools/tools.h"

/* Room for the largest output budget a call may ask for, plus the header and notes around it. */
#define TOOLS_TEXT_MAX (CONNECTOR_OUTPUT_BUDGET_LIMIT + 8192)

void tool_result_init(struct tool_result *r)
{
    buf_init(&r->text, TOOLS_TEXT_MAX);
    r->structured = NULL;
    r->is_error = 0;
    r->code = ZK_OK;
}

void tool_result_free(struct tool_result *r)
{
    buf_free(&r->text);
    cJSON_Delete(r->structured);
    r->structured = NULL;
    r->is_error = 0;
    r->code = ZK_OK;
}
