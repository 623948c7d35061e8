/* jsonrpc.c: see jsonrpc.h. */
#include "connector/mcp/jsonrpc.h"

#include "json.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2^53: the largest magnitude up to which every integer has an exact double. */
#define JSONRPC_ID_MAX 9007199254740992.0

/* Whether text holds a \u0000 escape inside a string (a quick test first: most messages have none). */
static int jsonrpc_has_nul_escape(const char *text, size_t len)
{
    static const char esc[] = "\\u0000";

    return len >= sizeof(esc) - 1 && memmem(text, len, esc, sizeof(esc) - 1) != NULL;
}

cJSON *jsonrpc_parse(const char *text, size_t len)
{
    char *copy;
    size_t out = 0;
    int in_string = 0;
    cJSON *root;

    if (!jsonrpc_has_nul_escape(text, len))
        return json_parse(text, len);
    /* Strings are followed from quote to quote, escapes two bytes at a time, so that "\\u0000" (a
     * backslash, then the text u0000) is left alone. The copy only shrinks. */
    copy = mem_alloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        if (!in_string) {
            in_string = text[i] == '"';
            copy[out++] = text[i];
        } else if (text[i] == '"') {
            in_string = 0;
            copy[out++] = text[i];
        } else if (text[i] == '\\' && i + 5 < len && memcmp(text + i + 1, "u0000", 5) == 0) {
            copy[out++] = (char)0xc0;
            copy[out++] = (char)0x80;
            i += 5;
        } else if (text[i] == '\\' && i + 1 < len) {
            copy[out++] = text[i++];
            copy[out++] = text[i];
        } else {
            copy[out++] = text[i];
        }
    }
    root = json_parse(copy, out);
    free(copy);
    return root;
}

int jsonrpc_id_valid(const cJSON *id)
{
    if (cJSON_IsString(id))
        return id->valuestring != NULL;
    if (cJSON_IsNumber(id)) {
        double d = id->valuedouble;
        /* Comparisons with NaN are false, so NaN is rejected here too; the range check comes first so
         * that the cast is defined. */
        return d >= -JSONRPC_ID_MAX && d <= JSONRPC_ID_MAX && d == (double)(long long)d;
    }
    return 0;
}

int jsonrpc_id_equal(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    return 0;
}

static void classify_invalid(struct jsonrpc_msg *out, int code, const char *msg)
{
    out->kind = JSONRPC_INVALID;
    out->error_code = code;
    out->error_msg = msg;
}

void jsonrpc_classify(const cJSON *node, struct jsonrpc_msg *out)
{
    const cJSON *version, *id, *method, *params;
    int has_id;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(node)) {
        classify_invalid(out, JSONRPC_INVALID_REQUEST, "a JSON-RPC message must be an object");
        return;
    }
    id = cJSON_GetObjectItemCaseSensitive(node, "id");
    has_id = id != NULL;
    /* The id is remembered before anything else is judged, so that even a malformed request gets an
     * error its sender can match. */
    if (jsonrpc_id_valid(id))
        out->id = id;
    version = cJSON_GetObjectItemCaseSensitive(node, "jsonrpc");
    if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
        classify_invalid(out, JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
        return;
    }
    method = cJSON_GetObjectItemCaseSensitive(node, "method");
    if (method == NULL) {
        if (cJSON_GetObjectItemCaseSensitive(node, "result") == NULL &&
            cJSON_GetObjectItemCaseSensitive(node, "error") == NULL) {
            classify_invalid(out, JSONRPC_INVALID_REQUEST, "a message needs \"method\", \"result\" or \"error\"");
            return;
        }
        out->kind = JSONRPC_RESPONSE;
        return;
    }
    if (!cJSON_IsString(method) || method->valuestring[0] == '\0') {
        classify_invalid(out, JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");
        return;
    }
    if (has_id && out->id == NULL) {
        classify_invalid(out, JSONRPC_INVALID_REQUEST, "\"id\" must be a string or an integer");
        return;
    }
    params = cJSON_GetObjectItemCaseSensitive(node, "params");
    if (params != NULL && !cJSON_IsObject(params)) {
        /* JSON-RPC also allows positional (array) params, but no MCP method takes them. */
        classify_invalid(out, JSONRPC_INVALID_PARAMS, "\"params\" must be an object");
        return;
    }
    out->method = method->valuestring;
    out->params = params;
    out->kind = has_id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
}

/* A new {"jsonrpc":"2.0","id":...} envelope. */
static cJSON *envelope(const cJSON *id)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON *idc;
    char num[32];

    if (id == NULL) {
        idc = cJSON_CreateNull();
    } else if (cJSON_IsNumber(id)) {
        /* cJSON prints large numbers with 15 significant digits when that comes close enough to the
         * value, which would change an id such as 9007199254740991; integers are printed exactly. */
        snprintf(num, sizeof(num), "%lld", (long long)id->valuedouble);
        idc = cJSON_CreateRaw(num);
    } else {
        idc = cJSON_Duplicate(id, 1);
    }
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    cJSON_AddItemToObject(msg, "id", idc);
    return msg;
}

cJSON *jsonrpc_result(const cJSON *id, cJSON *result)
{
    cJSON *msg = envelope(id);

    cJSON_AddItemToObject(msg, "result", result);
    return msg;
}

cJSON *jsonrpc_error(const cJSON *id, int code, const char *message, cJSON *data)
{
    cJSON *msg = envelope(id);
    cJSON *error = cJSON_AddObjectToObject(msg, "error");

    cJSON_AddNumberToObject(error, "code", code);
    cJSON_AddStringToObject(error, "message", message);
    if (data != NULL)
        cJSON_AddItemToObject(error, "data", data);
    return msg;
}
