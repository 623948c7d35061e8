/* fuzz_mcp_session.c: a whole MCP session (connector/mcp/server.h) fed arbitrary messages.
 *
 * The tools are fakes defined here (as in tests/unit/test_mcp_server.c), so the linker never pulls the
 * real ones: "echo" answers with its text argument and structured content, "fail" answers with
 * isError, any other name is unknown. Input: byte 0 chooses whether the session starts initialized and
 * with which protocol revision (so that batches and tool calls are reached quickly); the rest is split
 * at newlines, each line one message handed to mcp_session_handle. The harness reads each message
 * with the server's own reader, jsonrpc_parse, so that both see the same tree (a \u0000 escape is
 * C0 80 to both). Asserted, per message:
 * - every reply is UTF-8 JSON with "jsonrpc":"2.0" and exactly one of result and error, an
 *   error having an integer code and a string message;
 * - text that jsonrpc_parse refuses gets -32700 with a null id;
 * - a single object gets exactly one reply when it is a request or invalid, carrying the request's id
 *   (same type and value) or null, and no reply when it is a notification or a response;
 * - a batch outside revision 2025-03-26, an empty one or one of more than MCP_BATCH_MAX messages gets
 *   one error with a null id; otherwise the
 *   reply is an array in which every request finds its id (a tools/call may go unanswered only when
 *   the same batch cancels it afterwards) and no reply carries an id the batch did not send;
 * - after a successful initialize the session reports the answered revision, one this server speaks;
 *   structuredContent appears only from revision 2025-06-18 on, and tools/list is the catalogue as the
 *   tools give it. */
#include "tests/fuzz/fuzz.h"

#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/server.h"
#include "mem.h"
#include "connector/tools/tools.h"
#include "json.h"
#include "log.h"

#include <string.h>

/* ---- fake tools ------------------------------------------------------------------------------ */

cJSON *tools_list(void)
{
    return cJSON_Parse("[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
                       "{\"name\":\"fail\",\"inputSchema\":{}}]");
}

int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err)
{
    (void)ctx;
    (void)err;
    if (strcmp(name, "echo") == 0) {
        if (buf_puts(&out->text, json_str(args, "text", "")) != ZK_OK)
            return ZK_ETOOBIG;
        out->structured = cJSON_CreateObject();
        cJSON_AddStringToObject(out->structured, "echo", json_str(args, "text", ""));
        return ZK_OK;
    }
    if (strcmp(name, "fail") == 0) {
        out->is_error = 1;
        return buf_puts(&out->text, "boom");
    }
    return ZK_ENOENT;
}

int tools_index_status(const struct connector_config *cfg, const struct index_status_opts *o, char **json_out,
                       struct zk_err *err)
{
    (void)cfg;
    (void)o;
    (void)err;
    *json_out = mem_strdup("{}");
    return ZK_OK;
}

/* The fake calls make no request to wake: setting the flag is all. */
void tools_cancel(atomic_int *flag)
{
    atomic_store(flag, 1);
}

/* ---- checks ---------------------------------------------------------------------------------- */

static const struct connector_config cfg = {.corpus_namespace = "code", .corpus_name = "org"};

/* Checks the envelope of one reply object and returns its id member. */
static const cJSON *check_envelope(const cJSON *r)
{
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "id");

    FUZZ_CHECK(cJSON_IsObject(r));
    FUZZ_CHECK(strcmp(json_str(r, "jsonrpc", ""), "2.0") == 0);
    FUZZ_CHECK((cJSON_GetObjectItemCaseSensitive(r, "result") != NULL) != (err != NULL));
    if (err != NULL) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");

        FUZZ_CHECK(cJSON_IsNumber(code) && code->valuedouble == (double)(int)code->valuedouble);
        FUZZ_CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")));
    }
    FUZZ_CHECK(cJSON_IsNull(id) || jsonrpc_id_valid(id));
    return id;
}

/* Checks what the reply to request m says about the session. */
static void check_result(struct mcp_session *s, const struct jsonrpc_msg *m, const cJSON *r)
{
    const cJSON *result = json_obj(r, "result");
    const char *version = mcp_session_version(s);

    if (result == NULL)
        return;
    if (strcmp(m->method, "initialize") == 0) {
        FUZZ_CHECK(version != NULL && mcp_version_supported(version));
        FUZZ_CHECK(strcmp(json_str(result, "protocolVersion", ""), version) == 0);
    } else if (strcmp(m->method, "tools/list") == 0) {
        cJSON *want = tools_list();

        FUZZ_CHECK(version != NULL && cJSON_Compare(json_arr(result, "tools"), want, 1));
        cJSON_Delete(want);
    } else if (strcmp(m->method, "tools/call") == 0) {
        FUZZ_CHECK(version != NULL && json_arr(result, "content") != NULL);
        FUZZ_CHECK(strcmp(version, "2025-06-18") >= 0 || json_obj(result, "structuredContent") == NULL);
    }
}

static int same_id(const cJSON *reply_id, const struct jsonrpc_msg *m)
{
    return m->id == NULL ? cJSON_IsNull(reply_id) : jsonrpc_id_equal(reply_id, m->id);
}

/* Whether a notifications/cancelled for id follows element i of the batch. */
static int cancelled_later(const cJSON *batch, int i, const cJSON *id)
{
    int n = cJSON_GetArraySize(batch);
    struct jsonrpc_msg m;

    for (i = i + 1; i < n; i++) {
        jsonrpc_classify(cJSON_GetArrayItem(batch, i), &m);
        if (m.kind == JSONRPC_NOTIFICATION && strcmp(m.method, "notifications/cancelled") == 0 &&
            jsonrpc_id_equal(cJSON_GetObjectItemCaseSensitive(m.params, "requestId"), id))
            return 1;
    }
    return 0;
}

/* Whether exactly one request or invalid message of the batch carries id. */
static int id_unique(const cJSON *batch, const cJSON *id)
{
    struct jsonrpc_msg m;
    const cJSON *node;
    int count = 0;

    cJSON_ArrayForEach(node, batch) {
        jsonrpc_classify(node, &m);
        count += (m.kind == JSONRPC_REQUEST || m.kind == JSONRPC_INVALID) && m.id != NULL && jsonrpc_id_equal(m.id, id);
    }
    return count == 1;
}

static void check_batch(struct mcp_session *s, const cJSON *batch, const char *version, const cJSON *reply)
{
    struct jsonrpc_msg m;
    const cJSON *r;
    int i, n = cJSON_GetArraySize(batch), found, known;

    if (version == NULL || strcmp(version, MCP_PROTOCOL_BATCH) != 0 || n == 0 || n > MCP_BATCH_MAX) {
        FUZZ_CHECK(reply != NULL && cJSON_IsNull(check_envelope(reply)) && json_obj(reply, "error") != NULL);
        return;
    }
    FUZZ_CHECK(reply == NULL || (cJSON_IsArray(reply) && cJSON_GetArraySize(reply) > 0));
    for (i = 0; i < n; i++) {
        jsonrpc_classify(cJSON_GetArrayItem(batch, i), &m);
        if (m.kind != JSONRPC_REQUEST && m.kind != JSONRPC_INVALID)
            continue;
        found = 0;
        cJSON_ArrayForEach(r, reply) if (same_id(check_envelope(r), &m)) {
            found++;
            /* A reply can be told apart by its id only when no other message of the batch has it. */
            if (m.kind == JSONRPC_REQUEST && id_unique(batch, m.id))
                check_result(s, &m, r);
        }
        FUZZ_CHECK(found > 0 || (m.kind == JSONRPC_REQUEST && strcmp(m.method, "tools/call") == 0 &&
                                 cancelled_later(batch, i, m.id)));
    }
    cJSON_ArrayForEach(r, reply) {
        known = 0;
        for (i = 0; i < n && !known; i++) {
            jsonrpc_classify(cJSON_GetArrayItem(batch, i), &m);
            known = (m.kind == JSONRPC_REQUEST || m.kind == JSONRPC_INVALID) && same_id(check_envelope(r), &m);
        }
        FUZZ_CHECK(known);
    }
}

/* Whether text is well-formed UTF-8 throughout. */
static int utf8_valid(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t left = strlen(text), k;

    for (; left > 0; p += k, left -= k)
        if ((k = json_utf8_len(p, left)) == 0)
            return 0;
    return 1;
}

static void check_one(struct mcp_session *s, const char *text, size_t len)
{
    const char *version = mcp_session_version(s);
    cJSON *msg = jsonrpc_parse(text, len), *reply = NULL;
    char *out = NULL;
    struct jsonrpc_msg m;

    mcp_session_handle(s, text, len, &out);
    if (out != NULL) {
        FUZZ_CHECK(utf8_valid(out));
        reply = cJSON_Parse(out);
        FUZZ_CHECK(reply != NULL);
        free(out);
    }
    if (msg == NULL) {
        FUZZ_CHECK(reply != NULL && cJSON_IsNull(check_envelope(reply)));
        FUZZ_CHECK(json_path(reply, "error.code")->valuedouble == JSONRPC_PARSE_ERROR);
    } else if (cJSON_IsArray(msg)) {
        check_batch(s, msg, version, reply);
    } else {
        jsonrpc_classify(msg, &m);
        if (m.kind == JSONRPC_REQUEST || m.kind == JSONRPC_INVALID) {
            FUZZ_CHECK(reply != NULL && same_id(check_envelope(reply), &m));
            if (m.kind == JSONRPC_REQUEST)
                check_result(s, &m, reply);
        } else {
            FUZZ_CHECK(reply == NULL);
        }
    }
    /* Once answered, the revision never changes. */
    FUZZ_CHECK(version == NULL || mcp_session_version(s) == version);
    cJSON_Delete(reply);
    cJSON_Delete(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const start[] = {NULL, "2025-03-26", "2025-06-18", "2024-11-05", "2025-11-25"};
    struct mcp_session_opts o = {.cfg = &cfg, .server_version = "fuzz", .rate = {1e9, 1}};
    struct mcp_session *s;
    const char *p, *end, *nl;
    char init[200];

    if (size < 1)
        return 0;
    log_setup("fuzz", LOG_ERROR);
    s = mcp_session_new(&o);
    FUZZ_CHECK(s != NULL);
    if (start[data[0] % 5] != NULL) {
        snprintf(init, sizeof(init),
                 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\"}}",
                 start[data[0] % 5]);
        check_one(s, init, strlen(init));
        FUZZ_CHECK(strcmp(mcp_session_version(s), start[data[0] % 5]) == 0);
    }
    p = (const char *)data + 1;
    end = (const char *)data + size;
    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            nl = end;
        if (nl > p)
            check_one(s, p, (size_t)(nl - p));
        p = nl + 1;
    }
    mcp_session_close(s);
    mcp_session_free(s);
    return 0;
}
