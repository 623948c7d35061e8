/* fuzz_jsonrpc.c: JSON-RPC classification and reply construction (connector/mcp/jsonrpc.h) on
 * arbitrary messages from an MCP client.
 *
 * Input: a message as jsonrpc_parse reads it (the server's reader, with its bounds); an array is
 * treated as a batch and each element classified. Asserted for each:
 * - the classification is consistent: a request has a valid id, a non-empty method and object or absent
 *   params; a notification has no "id" member at all; an invalid message carries -32600 or -32602, an
 *   explanation, and an id only when the message had a valid one; a response has result or error;
 * - the error reply and a result reply built for it print as JSON that parses back to an object with
 *   "jsonrpc":"2.0", exactly one of result/error, and an id of the same type and value as the
 *   request's (null when it had none), so that the client can match it;
 * - jsonrpc_id_equal is reflexive on valid ids. */
#include "tests/fuzz/fuzz.h"

#include "connector/mcp/jsonrpc.h"
#include "json.h"

#include <string.h>

/* Checks a reply tree: prints, parses back, and carries id (or null). */
static void check_reply(cJSON *reply, const cJSON *id, int is_error)
{
    char *text;
    cJSON *back;
    const cJSON *rid, *err;

    FUZZ_CHECK(reply != NULL);
    text = json_print(reply);
    FUZZ_CHECK(text != NULL);
    back = cJSON_Parse(text);
    FUZZ_CHECK(cJSON_IsObject(back));
    FUZZ_CHECK(strcmp(json_str(back, "jsonrpc", ""), "2.0") == 0);
    FUZZ_CHECK((cJSON_GetObjectItemCaseSensitive(back, "result") != NULL) != is_error);
    err = cJSON_GetObjectItemCaseSensitive(back, "error");
    FUZZ_CHECK((err != NULL) == is_error);
    if (is_error) {
        FUZZ_CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(err, "code")));
        FUZZ_CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")));
    }
    rid = cJSON_GetObjectItemCaseSensitive(back, "id");
    FUZZ_CHECK(rid != NULL);
    if (id == NULL) {
        FUZZ_CHECK(cJSON_IsNull(rid));
    } else {
        FUZZ_CHECK(jsonrpc_id_valid(rid));
        FUZZ_CHECK(cJSON_IsString(rid) == cJSON_IsString(id) && cJSON_IsNumber(rid) == cJSON_IsNumber(id));
        FUZZ_CHECK(jsonrpc_id_equal(rid, id));
    }
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(reply);
}

static void check_message(const cJSON *node)
{
    struct jsonrpc_msg m;
    const cJSON *id = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, "id") : NULL;

    jsonrpc_classify(node, &m);
    if (m.id != NULL) {
        FUZZ_CHECK(m.id == id && jsonrpc_id_valid(m.id) && jsonrpc_id_equal(m.id, m.id));
    }
    switch (m.kind) {
    case JSONRPC_REQUEST:
        FUZZ_CHECK(m.id != NULL && m.method != NULL && m.method[0] != '\0');
        FUZZ_CHECK(m.params == NULL || cJSON_IsObject(m.params));
        break;
    case JSONRPC_NOTIFICATION:
        FUZZ_CHECK(id == NULL && m.id == NULL && m.method != NULL && m.method[0] != '\0');
        FUZZ_CHECK(m.params == NULL || cJSON_IsObject(m.params));
        break;
    case JSONRPC_INVALID:
        FUZZ_CHECK(m.error_code == JSONRPC_INVALID_REQUEST || m.error_code == JSONRPC_INVALID_PARAMS);
        FUZZ_CHECK(m.error_msg != NULL && m.error_msg[0] != '\0' && m.method == NULL);
        break;
    case JSONRPC_RESPONSE:
        FUZZ_CHECK(cJSON_GetObjectItemCaseSensitive(node, "result") != NULL ||
                   cJSON_GetObjectItemCaseSensitive(node, "error") != NULL);
        FUZZ_CHECK(m.method == NULL);
        break;
    default:
        FUZZ_CHECK(!"unknown kind");
    }
    check_reply(jsonrpc_error(m.id, m.kind == JSONRPC_INVALID ? m.error_code : JSONRPC_METHOD_NOT_FOUND,
                              m.kind == JSONRPC_INVALID ? m.error_msg : "method not found",
                              m.params != NULL ? cJSON_Duplicate(m.params, 1) : NULL),
                m.id, 1);
    check_reply(jsonrpc_result(m.id, m.params != NULL ? cJSON_Duplicate(m.params, 1) : cJSON_CreateObject()),
                m.id, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = jsonrpc_parse((const char *)data, size), *node;

    if (root == NULL)
        return 0;
    if (cJSON_IsArray(root)) {
        cJSON_ArrayForEach(node, root) check_message(node);
    } else {
        check_message(root);
    }
    cJSON_Delete(root);
    return 0;
}
