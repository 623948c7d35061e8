/* Unit tests for connector/tools without a server: the catalogue (schemas, annotations, descriptions
 * that teach correct Zoekt syntax), argument validation (every bad argument is an isError result that
 * names it, and no request is sent), the search request body, and agreement between the output schema
 * and what format produces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/format/files.h"
#include "connector/format/refs.h"
#include "connector/format/search.h"
#include "connector/mcp/jsonrpc.h"
#include "connector/tools/cursor.h"
#include "connector/tools/tools.h"
#include "connector/zoekt/client.h"
#include "tests/support/shape.h"

static const cJSON *find_tool(const cJSON *list, const char *name)
{
    const cJSON *t;

    cJSON_ArrayForEach(t, list) {
        if (strcmp(cJSON_GetObjectItem(t, "name")->valuestring, name) == 0)
            return t;
    }
    return NULL;
}

/* The catalogue an agent reads in every session: each tool declared with a closed object schema and
 * read-only annotations, descriptions that teach what the tools really do, and all of it within 6 KB
 * (peers' catalogues are 2.8 to 5.2 KB; ours was 16 KB). */
static void test_catalogue(void **state)
{
    static const char *const paged[] = {"search_code", "list_repositories", "list_files", "find_references"};
    cJSON *list = tools_list(), *wrapper = cJSON_CreateObject();
    const cJSON *t, *desc;
    char *printed;

    (void)state;
    assert_non_null(list);
    assert_int_equal(cJSON_GetArraySize(list), TOOL_COUNT);
    assert_int_equal(TOOL_COUNT, 8);
    for (int i = 0; i < TOOL_COUNT; i++) {
        const cJSON *ann, *schema;

        t = cJSON_GetArrayItem(list, i);
        /* The names the metrics label calls with are the catalogue's, in its order. */
        assert_string_equal(cJSON_GetObjectItem(t, "name")->valuestring, tools_names[i]);
        assert_int_equal(tools_id(tools_names[i]), i);
        schema = cJSON_GetObjectItem(t, "inputSchema");
        assert_string_equal(cJSON_GetObjectItem(schema, "type")->valuestring, "object");
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(schema, "additionalProperties")));
        ann = cJSON_GetObjectItem(t, "annotations");
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ann, "readOnlyHint")));
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(ann, "openWorldHint")));
        /* Not promised: structuredContent has no schema in the catalogue (tests/fixtures/structured/
         * states its shape instead), which would cost a third of the catalogue. */
        assert_null(cJSON_GetObjectItem(t, "outputSchema"));
        assert_true(strlen(cJSON_GetObjectItem(t, "description")->valuestring) > 100);
    }
    cJSON_AddItemReferenceToObject(wrapper, "tools", list);
    printed = cJSON_PrintUnformatted(wrapper);
    if (strlen(printed) > 6144)
        fail_msg("tools/list is %zu bytes, more than 6144", strlen(printed));
    free(printed);
    cJSON_Delete(wrapper);

    t = find_tool(list, "search_code");
    desc = cJSON_GetObjectItem(t, "description");
    /* The default is one pattern as ripgrep reads it, with the literal reading when it cannot be a
     * regex or finds nothing; Zoekt's language is one argument away; sym: needs ctags. */
    assert_non_null(strstr(desc->valuestring, "query is one RE2 pattern as ripgrep reads it"));
    assert_non_null(strstr(desc->valuestring, "is also searched literally, and a note says which reading found what"));
    assert_non_null(strstr(desc->valuestring, "literal: true"));
    assert_non_null(strstr(desc->valuestring, "syntax: \"zoekt\""));
    assert_non_null(strstr(desc->valuestring, "sym:Name for ctags definitions"));
    {
        static const char *const props[] = {"query",     "repo",          "file",      "exclude_file",
                                            "literal",   "syntax",        "ref",       "context_lines",
                                            "max_files", "case_sensitive", "max_bytes", "cursor"};
        const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "properties");

        assert_int_equal(cJSON_GetArraySize(p), 12);
        for (size_t i = 0; i < 12; i++)
            assert_string_equal(cJSON_GetArrayItem(p, (int)i)->string, props[i]);
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "max_bytes"), "maximum")->valueint,
                         CONNECTOR_OUTPUT_BUDGET_LIMIT);
        assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "max_files"), "maximum")->valueint,
                         CONNECTOR_MAX_FILES_LIMIT);
    }
    /* Every tool that lists pages, and says so. */
    for (size_t i = 0; i < sizeof(paged) / sizeof(paged[0]); i++) {
        t = find_tool(list, paged[i]);
        assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "properties"),
                                            "cursor"));
        assert_non_null(strstr(cJSON_GetObjectItem(t, "description")->valuestring, "Page with the cursor"));
    }
    /* find_references must not pass for a semantic search: it says what it is, and where its
     * definitions come from. */
    desc = cJSON_GetObjectItem(find_tool(list, "find_references"), "description");
    assert_non_null(strstr(desc->valuestring, "text search, so comments and strings count"));
    assert_non_null(strstr(desc->valuestring, "from ctags symbols where the repository has them, else by keywords"));
    desc = cJSON_GetObjectItem(find_tool(list, "list_files"), "description");
    assert_non_null(strstr(desc->valuestring, "as a tree"));
    /* find_dependents names the manifests it reads, so that an empty answer is not taken for "none". */
    desc = cJSON_GetObjectItem(find_tool(list, "find_dependents"), "description");
    assert_non_null(strstr(desc->valuestring, "(go.mod, package.json, requirements*.txt, pyproject.toml, Cargo.toml)"));
    assert_int_equal(tools_id("grep"), -1);
    assert_int_equal(tools_id("search_cod"), -1);
    assert_int_equal(tools_id(NULL), -1);
    cJSON_Delete(list);
}

static struct connector_config unreachable_cfg(void)
{
    struct connector_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    /* Validation must fail before any request; should one be sent, it fails fast and visibly. */
    cfg.zoekt_url = "http://127.0.0.1:1";
    cfg.max_files = CONNECTOR_MAX_FILES_DEFAULT;
    cfg.context_lines = CONNECTOR_CONTEXT_LINES_DEFAULT;
    cfg.search_timeout_ms = 1000;
    cfg.list_timeout_ms = 1000;
    cfg.output_budget = CONNECTOR_OUTPUT_BUDGET_DEFAULT;
    return cfg;
}

/* Calls tool with args (JSON text, as the MCP parser reads it) against a Zoekt that cannot be reached,
 * into r (initialised here; the caller frees it). The call itself always succeeds: what failed is in r. */
static void call_unreachable(const char *tool, const char *args, struct tool_result *r)
{
    struct connector_config cfg = unreachable_cfg();
    struct tool_ctx ctx = {&cfg, NULL};
    struct zk_err err = {0};
    cJSON *parsed = jsonrpc_parse(args, strlen(args));

    tool_result_init(r);
    assert_int_equal(tools_call(&ctx, tool, parsed, r, &err), ZK_OK);
    cJSON_Delete(parsed);
}

static void test_bad_arguments(void **state)
{
    static const struct {
        const char *tool;
        const char *args;
        const char *msg;
    } cases[] = {
        {"search_code", "{\"query\":5}", "argument \"query\" must be a string, got a number"},
        {"search_code", "{\"query\":\"x\",\"context_lines\":11}", "\"context_lines\" must be between 0 and 10, got 11"},
        {"search_code", "{\"query\":\"x\",\"context_lines\":1.5}", "must be an integer between 0 and 10, got a fraction"},
        {"search_code", "{\"query\":\"x\",\"max_files\":0}", "\"max_files\" must be between 1 and 200, got 0"},
        /* Out of range is said before anything is converted: a cast of 2^63 or of 1e400 (infinity to
         * cJSON) to an integer would be undefined behaviour. */
        {"search_code", "{\"query\":\"x\",\"max_files\":9223372036854775808}",
         "argument \"max_files\" must be between 1 and 200, got 9.22337203685478e+18"},
        {"search_code", "{\"query\":\"x\",\"max_files\":-9223372036854775809}",
         "argument \"max_files\" must be between 1 and 200, got -9.22337203685478e+18"},
        {"search_code", "{\"query\":\"x\",\"context_lines\":1e400}",
         "argument \"context_lines\" must be between 0 and 10, got a number too large to represent"},
        {"search_code", "{\"query\":\"x\",\"max_bytes\":-1e400}",
         "argument \"max_bytes\" must be between 2048 and 65536, got a number too large to represent"},
        {"list_repositories", "{\"limit\":1e300}", "argument \"limit\" must be between 1 and 1000, got 1e+300"},
        {"read_file", "{\"repo\":\"a\",\"path\":\"b\",\"start_line\":4.5}", "got a fraction"},
        {"search_code", "{\"query\":\"x\",\"max_bytes\":100}", "\"max_bytes\" must be between 2048 and 65536"},
        {"search_code", "{\"query\":\"x\",\"repo\":[1]}", "argument \"repo\": item 1 must be a string, got a number"},
        {"search_code", "{\"query\":\"x\",\"repo\":{}}", "\"repo\" must be a string or an array of strings"},
        {"search_code", "{\"query\":\"x\",\"file\":\"\"}", "empty strings are not allowed"},
        {"search_code", "{\"query\":\"x\",\"case_sensitive\":\"yes\"}", "must be true or false, got a string"},
        {"search_code", "{\"query\":\"x\",\"lang\":\"go\"}", "unknown argument \"lang\"; this tool takes: query, repo"},
        {"search_code", "{\"query\":\"x\",\"ref\":\"a b\"}",
         "invalid search arguments: ref: branch \"a b\": a branch name has no blank"},
        {"search_code", "{\"query\":\"x\",\"ref\":\"\"}", "invalid search arguments: ref: a branch name has 1 to 256"},
        {"search_code", "{\"query\":\"x\",\"cursor\":\"next\"}", "argument \"cursor\" is not a cursor this tool returned"},
        /* A cursor of another query (another pattern, filter or reading) would page through another list. */
        {"search_code", "{\"query\":\"x\",\"cursor\":\"s0123456789abcdef.30\"}",
         "argument \"cursor\" belongs to another query"},
        {"list_repositories", "{\"cursor\":\"s0123456789abcdef.30\"}", "is not a cursor this tool returned"},
        {"list_repositories", "{\"cursor\":\"l0123456789abcdef.acme\"}", "belongs to another query"},
        {"read_file", "{\"repo\":\"a\",\"path\":\"b\",\"ref\":\"x\\\"y\"}", "invalid read_file arguments: ref: branch"},
        /* An argument echoed in a message has its control bytes replaced (line breaks and tabs stay). */
        {"search_code", "{\"\\u001b[2Jbell\\u0007\":1}",
         "unknown argument \"\xef\xbf\xbd[2Jbell\xef\xbf\xbd\"; this tool"},
        {"search_code", "{\"query\":\"x\",\"file\":\"src/[x\"}", "invalid search arguments: file: glob \"src/[x\""},
        {"search_code", "{\"query\":\"  \"}", "nothing to search"},
        {"search_code", "[1]", "arguments must be an object, got an array"},
        {"search_code", "{\"query\":\"x\",\"syntax\":\"pcre\"}", "argument \"syntax\" must be \"regex\""},
        {"search_code", "{\"query\":\"x\",\"syntax\":\"zoekt\",\"literal\":true}", "do not go together"},
        {"search_code", "{\"query\":\"x\",\"literal\":1}", "argument \"literal\" must be true or false"},
        /* A query in Zoekt's syntax that closes more parentheses than it opens would have put the
         * repository filter in a group of its own and searched every repository. */
        {"search_code", "{\"query\":\"x) or (e\",\"syntax\":\"zoekt\",\"repo\":\"alpha\"}",
         "invalid search arguments: query \"x) or (e\": the ')' at position 2 closes no '('"},
        {"search_code", "{\"query\":\"(a b\",\"syntax\":\"zoekt\",\"file\":\"*.go\"}",
         "the '(' at position 1 is not closed (a literal one is written \\(); it was not sent (fix the query; "
         "retrying will not help while it is unchanged)"},
        {"find_symbol", "{\"name\":\"a)|(b\",\"regex\":true,\"repo\":\"alpha\"}",
         "invalid find_symbol arguments: query \"sym:a)|(b\": the ')' at position 6 closes no '('"},
        {"list_repositories", "{\"limit\":0}", "\"limit\" must be between 1 and 1000"},
        {"list_repositories", "{\"filter\":3}", "\"filter\" must be a string"},
        {"list_repositories", "{\"filter\":\"api-[\"}", "argument \"filter\": glob \"api-[\""},
        {"corpus_status", "{\"x\":1}", "unknown argument \"x\"; this tool takes: repo"},
        {"corpus_status", "{\"repo\":\" / \"}", "argument \"repo\": empty repository name"},
        {"read_file", "{\"repo\":\"a\"}", "read_file needs both \"repo\" and \"path\""},
        {"read_file", "{\"repo\":\"a\",\"path\":\"b\",\"start_line\":5,\"end_line\":4}",
         "argument \"end_line\" (4) is before \"start_line\" (5)"},
        {"read_file", "{\"repo\":\"a\",\"path\":\"b\",\"start_line\":0}", "\"start_line\" must be between 1 and"},
        {"read_file", "{\"repo\":\"a{\",\"path\":\"b\"}", "argument \"repo\": glob \"a{\": a '{' has no closing '}'"},
        {"read_file", "{\"repo\":\"a\",\"path\":\"/\"}", "invalid read_file arguments: path: empty file path"},
        /* A NUL would silently cut the argument short, bytes that are not UTF-8 would be echoed raw into
         * the reply: both are refused, naming the argument. */
        {"read_file", "{\"repo\":\"a\",\"path\":\"factory.go\\u0000.txt\"}",
         "argument \"path\" contains a NUL character (\\u0000) at byte 10; remove it"},
        {"search_code", "{\"query\":\"\\u0000\"}", "argument \"query\" contains a NUL character"},
        {"search_code", "{\"query\":\"x\",\"repo\":[\"a\",\"b\\u0000\"]}",
         "argument \"repo\", item 2, contains a NUL character (\\u0000) at byte 1"},
        {"search_code", "{\"query\":\"caf\xc3\"}", "argument \"query\" is not valid UTF-8 (byte 0xc3 at offset 3)"},
        {"search_code", "{\"query\":\"x\",\"file\":\"\xff.go\"}", "argument \"file\" is not valid UTF-8 (byte 0xff"},
        {"read_file", "{\"repo\":\"a\xed\xa0\x80\",\"path\":\"b\"}", "argument \"repo\" is not valid UTF-8"},
        {"list_repositories", "{\"filter\":\"api\xc0\xaf\"}", "argument \"filter\" is not valid UTF-8"},
        {"list_files", "{}", "list_files needs \"repo\""},
        {"list_files", "{\"repo\":\"a\",\"max_files\":1001}", "\"max_files\" must be between 1 and 1000"},
        {"list_files", "{\"repo\":\"a\",\"file\":\"deploy/[x\"}", "invalid list_files arguments: file: glob"},
        {"list_files", "{\"repo\":\"a\",\"file\":\"\"}", "argument \"file\" is empty"},
        {"list_files", "{\"repo\":\"a\",\"glob\":\"*.go\"}", "unknown argument \"glob\"; this tool takes: repo"},
        {"list_files", "{\"repo\":\"a\",\"path\":\"de\\u0000ploy\"}", "argument \"path\" contains a NUL"},
        {"list_files", "{\"repo\":\"a\",\"path\":\"d\xff\"}", "argument \"path\" is not valid UTF-8"},
        {"find_references", "{}", "find_references needs \"symbol\""},
        {"find_references", "{\"symbol\":\"foo(\"}", "argument \"symbol\" must be an identifier"},
        {"find_references", "{\"symbol\":\"9lives\"}", "argument \"symbol\" must be an identifier"},
        {"find_references", "{\"symbol\":\"a b\"}", "must be an identifier (a letter or _, then letters"},
        {"find_references", "{\"symbol\":\"\"}", "argument \"symbol\" must be an identifier"},
        {"find_references", "{\"symbol\":\"caf\xc3\xa9\"}", "argument \"symbol\" must be an identifier"},
        {"find_references", "{\"symbol\":\"x\\u0000\"}", "argument \"symbol\" contains a NUL"},
        {"find_references", "{\"symbol\":\"x\",\"max_files\":0}", "\"max_files\" must be between 1 and 200"},
        {"find_references", "{\"symbol\":\"x\",\"file\":\"{a\"}", "invalid find_references arguments"},
        {"find_references", "{\"symbol\":\"x\",\"query\":\"y\"}", "unknown argument \"query\"; this tool takes: symbol"},
        {"find_dependents", "{}", "find_dependents needs \"package\""},
        {"find_dependents", "{\"package\":\"a b\"}", "argument \"package\" must be a package name"},
        {"find_dependents", "{\"package\":\"x\",\"max_files\":1001}", "\"max_files\" must be between 1 and 1000"},
        {"find_dependents", "{\"package\":\"x\",\"file\":\"go.mod\"}", "unknown argument \"file\"; this tool takes: package"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tool_result r;

        call_unreachable(cases[i].tool, cases[i].args, &r);
        if (!r.is_error || !r.text.data || !strstr(r.text.data, cases[i].msg))
            fail_msg("%s %s: got \"%s\", want \"%s\"", cases[i].tool, cases[i].args,
                     r.text.data ? r.text.data : "", cases[i].msg);
        /* The caller's fault, whatever the argument: the metrics count it as invalid_argument. */
        assert_int_equal(r.code, ZK_EINVAL);
        assert_null(r.structured);
        tool_result_free(&r);
    }
}

/* list_files refuses a cursor of another tool or of other arguments, and a ref that is no branch name,
 * before it asks Zoekt anything. */
static void test_list_files_cursor_and_ref(void **state)
{
    static const struct {
        const char *args;
        const char *msg;
    } cases[] = {
        {"{\"repo\":\"a\",\"cursor\":\"s0123456789abcdef.100\"}",
         "argument \"cursor\" is not a cursor this tool returned; leave it out for the first page"},
        {"{\"repo\":\"a\",\"cursor\":\"f0000000000000000.a:b:HEAD\"}",
         "argument \"cursor\" belongs to another query: give it with the same arguments"},
        {"{\"repo\":\"a\",\"cursor\":\"f0000000000000000\"}", "argument \"cursor\" is not a cursor this tool"},
        {"{\"repo\":\"a\",\"ref\":\"a b\"}",
         "invalid list_files arguments: ref: branch \"a b\": a branch name has no blank"},
        {"{\"repo\":\"a\",\"ref\":\"\"}", "invalid list_files arguments: ref: a branch name has 1 to 256 bytes"},
        {"{\"repo\":\"a\",\"ref\":7}", "argument \"ref\" must be a string"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tool_result r;

        call_unreachable("list_files", cases[i].args, &r);
        if (!r.is_error || r.code != ZK_EINVAL || !strstr(r.text.data, cases[i].msg))
            fail_msg("%s: got \"%s\", want \"%s\"", cases[i].args, r.text.data ? r.text.data : "", cases[i].msg);
        tool_result_free(&r);
    }
}

/* The MCP parser keeps a string's bytes after a \u0000 escape (as C0 80, which the argument checks
 * refuse) and leaves an escaped backslash followed by the text u0000 alone. */
static void test_parse_keeps_nul(void **state)
{
    static const char text[] = "{\"a\":\"x\\\\u0000y\",\"b\":\"p\\u0000q\",\"c\":\"\\\"\\u0000\"}";
    cJSON *root = jsonrpc_parse(text, strlen(text));

    (void)state;
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "a")->valuestring, "x\\u0000y");
    assert_string_equal(cJSON_GetObjectItem(root, "b")->valuestring, "p\xc0\x80q");
    assert_string_equal(cJSON_GetObjectItem(root, "c")->valuestring, "\"\xc0\x80");
    cJSON_Delete(root);
    assert_null(jsonrpc_parse("{\"a\":\"\\u0000", 11));
}

/* A Zoekt that cannot be reached fails the call for the agent with the client's code, which the metrics
 * count as unavailable rather than as the caller's fault. */
static void test_unreachable_zoekt_code(void **state)
{
    static const struct {
        const char *tool;
        const char *args;
    } cases[] = {
        {"search_code", "{\"query\":\"x\"}"},
        {"list_repositories", "{}"},
        {"read_file", "{\"repo\":\"a\",\"path\":\"b\"}"},
        {"list_files", "{\"repo\":\"a\"}"},
        {"find_references", "{\"symbol\":\"x\"}"},
        {"find_symbol", "{\"name\":\"X\"}"},
        {"find_dependents", "{\"package\":\"github.com/acme/bulk\"}"},
        /* No corpus configured and no webserver: neither source answers. */
        {"corpus_status", "{}"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tool_result r;

        call_unreachable(cases[i].tool, cases[i].args, &r);
        if (!r.is_error || r.code != ZK_ECONNECT)
            fail_msg("%s: is_error %d, code %d (%s), text \"%s\"", cases[i].tool, r.is_error, r.code,
                     zk_strerror(r.code), r.text.data ? r.text.data : "");
        tool_result_free(&r);
    }
}

static void test_unknown_tool(void **state)
{
    struct connector_config cfg = unreachable_cfg();
    struct tool_ctx ctx = {&cfg, NULL};
    struct zk_err err = {0};
    struct tool_result r;

    (void)state;
    tool_result_init(&r);
    assert_int_equal(tools_call(&ctx, "grep", NULL, &r, &err), ZK_ENOENT);
    assert_string_equal(err.msg, "Unknown tool: grep");
    tool_result_free(&r);
}

static void test_search_body(void **state)
{
    struct zc_search_opts o = {.max_files = 30, .context_lines = 2, .chunk_matches = 1};
    char *body;

    (void)state;
    body = zc_search_body("needle", &o, 30000);
    assert_string_equal(body, "{\"Q\":\"needle\",\"Opts\":{\"MaxDocDisplayCount\":30,\"MaxMatchDisplayCount\":1500,"
                              "\"NumContextLines\":2,\"ChunkMatches\":true,\"MaxWallTime\":27000000000,"
                              "\"ShardMaxMatchCount\":10000,\"TotalMaxMatchCount\":100000}}");
    free(body);
    /* search_code's request (all_matches): no match budget, which Zoekt would spend on the first files. */
    o.all_matches = 1;
    body = zc_search_body("needle", &o, 30000);
    assert_string_equal(body, "{\"Q\":\"needle\",\"Opts\":{\"MaxDocDisplayCount\":30,"
                              "\"NumContextLines\":2,\"ChunkMatches\":true,\"MaxWallTime\":27000000000,"
                              "\"ShardMaxMatchCount\":10000,\"TotalMaxMatchCount\":100000}}");
    free(body);
    /* One of three search shards collects a third of the matches (shards.h). */
    o.total_max_match_count = ZC_TOTAL_MAX_MATCH_COUNT / 3;
    body = zc_search_body("needle", &o, 30000);
    assert_non_null(strstr(body, "\"TotalMaxMatchCount\":33333}"));
    free(body);
    assert_int_equal(zc_wall_time_ns(30000), 27000000000LL);
    assert_int_equal(zc_wall_time_ns(1000), 800000000LL);
    assert_int_equal(zc_wall_time_ns(300), 150000000LL);
}

/* What format puts into structuredContent is the shape tests/fixtures/structured/ states, for a first
 * page and for a later one with a cursor, nested objects included. */
static void test_structured_shapes(void **state)
{
    struct zr_line line = {3, (char *)"func Bulk() {}", 1, 0, 0, 0};
    char *branches[] = {(char *)"HEAD"};
    struct zr_file file = {(char *)"r", (char *)"p", (char *)"v", (char *)"Go", branches, 1, &line, 1, line.text,
                           1, 1, 0, 0, NULL, 0, 0, NULL, 0, 0, NULL};
    struct zr_search res = {.files = &file, .n_files = 1, .stats = {1, 1, 0, 0, 0, 0, 0}, .chunk_matches = 1};
    struct fmt_search_opts so = {"q", 30, 16384, 0, "a note", NULL, 0, NULL};
    struct fmt_search_opts later = {"q", 30, 16384, 0, NULL, NULL, 30, "s0123456789abcdef.31"};
    struct fmt_files_opts fo = {"q", 10, 16384, 0, NULL, NULL};
    struct fmt_refs_opts ro = {"q", "Bulk", 10, 16384, "a note", NULL, NULL, 0, NULL, NULL};
    struct zk_err err = {0};
    cJSON *json = NULL;
    struct buf text;

    (void)state;
    buf_init(&text, 16385);
    assert_int_equal(fmt_search(&res, &so, &text, &json, &err), ZK_OK);
    shape_check(json, "search_code", "search_code");
    cJSON_Delete(json);
    buf_reset(&text);
    assert_int_equal(fmt_search(&res, &later, &text, &json, &err), ZK_OK);
    shape_check(json, "search_code", "search_code, a later page");
    assert_string_equal(cJSON_GetObjectItem(json, "nextCursor")->valuestring, "s0123456789abcdef.31");
    assert_int_equal(cJSON_GetObjectItem(json, "skippedFiles")->valueint, 30);
    cJSON_Delete(json);

    buf_reset(&text);
    assert_int_equal(fmt_files(&res, &fo, &text, &json, &err), ZK_OK);
    shape_check(json, "list_files", "list_files");
    cJSON_Delete(json);

    buf_reset(&text);
    assert_int_equal(fmt_refs(&res, &ro, &text, &json, &err), ZK_OK);
    shape_check(json, "find_references", "find_references");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(json, "files"), 0), "matches"), 0),
        "definition")));
    cJSON_Delete(json);
    buf_free(&text);
}

/* A repository list of n made here: repository i is "r<i>" (two digits), indexed age(i) seconds
 * before now (0: unknown), with one branch HEAD at a commit of 40 hex digits. */
struct made_list {
    struct zr_list l;
    struct zr_repo *repos;
    struct zr_branch *branches;
    char (*names)[16];
};

static void make_list(struct made_list *m, size_t n, time_t now, long (*age)(size_t))
{
    static char head[] = "HEAD", commit[] = "0123456789abcdef0123456789abcdef01234567", empty[] = "";

    m->repos = calloc(n, sizeof(*m->repos));
    m->branches = calloc(n, sizeof(*m->branches));
    m->names = calloc(n, sizeof(*m->names));
    for (size_t i = 0; i < n; i++) {
        snprintf(m->names[i], sizeof(m->names[i]), "r%02zu", i);
        m->branches[i] = (struct zr_branch){head, commit};
        m->repos[i] = (struct zr_repo){.name = m->names[i], .full_name = m->names[i], .branches = &m->branches[i],
                                       .n_branches = 1, .index_time = age(i) ? now - age(i) : 0,
                                       .latest_commit = empty, .zoekt_version = empty, .shards = 1};
    }
    m->l = (struct zr_list){.repos = m->repos, .n_repos = n, .shards = (long long)n};
}

static void free_list(struct made_list *m)
{
    free(m->repos);
    free(m->branches);
    free(m->names);
}

/* r00 unknown; r01..r24 from 100 s to 2400 s old, the higher the older; r25 as old as r24. */
static long age_by_index(size_t i)
{
    return i == 0 ? 0 : i == 25 ? 2400 : (long)i * 100;
}

static const char *name_at(const cJSON *arr, int i)
{
    return cJSON_GetArrayItem(arr, i)->valuestring;
}

static void test_index_status_stale(void **state)
{
    time_t now = 1800000000;
    struct index_status_opts plain = {0, 0, 0}, judged = {1000, 0, 0}, none_stale = {100000, 0, 0};
    struct made_list m;
    const cJSON *names;
    char *text;
    cJSON *o;

    (void)state;
    make_list(&m, 26, now, age_by_index);
    /* Without maxAge the body stays the small one an older operator reads. */
    o = tools_index_status_json(&m.l, &plain, now);
    assert_null(cJSON_GetObjectItem(o, "stale"));
    assert_null(cJSON_GetObjectItem(o, "repositoryList"));
    cJSON_Delete(o);

    /* Older than 1000 s: r11..r25 (15 of them; r10 is exactly 1000 s old, which is within maxAge, and
     * r00's time is unknown), oldest first, the tie r24/r25 by name. */
    o = tools_index_status_json(&m.l, &judged, now);
    assert_int_equal(cJSON_GetObjectItem(o, "stale")->valueint, 15);
    names = cJSON_GetObjectItem(o, "staleRepositories");
    assert_int_equal(cJSON_GetArraySize(names), 15);
    assert_string_equal(name_at(names, 0), "r24");
    assert_string_equal(name_at(names, 1), "r25");
    assert_string_equal(name_at(names, 2), "r23");
    assert_string_equal(name_at(names, 14), "r11");
    cJSON_Delete(o);

    /* Every one stale: the count is all 25 judged, the names stop at 20. */
    judged.max_age_seconds = 1;
    o = tools_index_status_json(&m.l, &judged, now);
    assert_int_equal(cJSON_GetObjectItem(o, "stale")->valueint, 25);
    names = cJSON_GetObjectItem(o, "staleRepositories");
    assert_int_equal(cJSON_GetArraySize(names), TOOLS_STALE_NAMES_MAX);
    assert_string_equal(name_at(names, 19), "r06");
    cJSON_Delete(o);

    o = tools_index_status_json(&m.l, &none_stale, now);
    assert_int_equal(cJSON_GetObjectItem(o, "stale")->valueint, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "staleRepositories")), 0);
    cJSON_Delete(o);

    /* A caller without a token where tokens are configured: the count, no name, and no list even if
     * asked for (front.c refuses that request before it gets here). */
    judged.anonymous = 1;
    judged.all = 1;
    o = tools_index_status_json(&m.l, &judged, now);
    assert_int_equal(cJSON_GetObjectItem(o, "stale")->valueint, 25);
    assert_null(cJSON_GetObjectItem(o, "staleRepositories"));
    assert_null(cJSON_GetObjectItem(o, "repositoryList"));
    text = cJSON_PrintUnformatted(o);
    /* The names are r00 to r25. */
    assert_null(strstr(text, "\"r0"));
    assert_null(strstr(text, "\"r1"));
    assert_null(strstr(text, "\"r2"));
    free(text);
    cJSON_Delete(o);
    free_list(&m);
}

static long age_thousand_plus(size_t i)
{
    return 60 + (long)i;
}

static void test_index_status_list(void **state)
{
    time_t now = 1800000000;
    struct index_status_opts all = {0, 1, 0};
    const cJSON *list, *e;
    struct made_list m;
    cJSON *o;

    (void)state;
    make_list(&m, 26, now, age_by_index);
    o = tools_index_status_json(&m.l, &all, now);
    assert_null(cJSON_GetObjectItem(o, "stale"));
    assert_int_equal(cJSON_GetObjectItem(o, "listed")->valueint, 26);
    list = cJSON_GetObjectItem(o, "repositoryList");
    e = cJSON_GetArrayItem(list, 0);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "r24");
    assert_string_equal(cJSON_GetObjectItem(e, "indexTime")->valuestring, "2027-01-15T07:20:00Z");
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "branches"), 0);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "HEAD");
    assert_string_equal(cJSON_GetObjectItem(e, "commit")->valuestring, "0123456789abcdef0123456789abcdef01234567");
    /* The repository whose index time is unknown comes last, with a null time. */
    e = cJSON_GetArrayItem(list, 25);
    assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "r00");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "indexTime")));
    cJSON_Delete(o);
    free_list(&m);

    /* 1,500 repositories: the list stops at 1,000, the oldest; the count says how many there are. */
    make_list(&m, 1500, now, age_thousand_plus);
    o = tools_index_status_json(&m.l, &all, now);
    assert_int_equal(cJSON_GetObjectItem(o, "repositories")->valueint, 1500);
    assert_int_equal(cJSON_GetObjectItem(o, "listed")->valueint, TOOLS_REPOSITORY_LIST_MAX);
    list = cJSON_GetObjectItem(o, "repositoryList");
    assert_int_equal(cJSON_GetArraySize(list), TOOLS_REPOSITORY_LIST_MAX);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "name")->valuestring, "r1499");
    cJSON_Delete(o);
    free_list(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),    cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_unknown_tool), cmocka_unit_test(test_search_body),
        cmocka_unit_test(test_unreachable_zoekt_code),
        cmocka_unit_test(test_parse_keeps_nul),
        cmocka_unit_test(test_structured_shapes),
        cmocka_unit_test(test_list_files_cursor_and_ref),
        cmocka_unit_test(test_index_status_stale),
        cmocka_unit_test(test_index_status_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
