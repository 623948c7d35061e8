/* jsonrpc.c: see jsonrpc.h. */
#include "connector/mcp/jsonrpc.h"

#include "json.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2^53: the largest magnitude up to which every integer has an exact double. */
#define JSONRPC_ID_MAX 9007199254740992.0

/* U+FFFD REPLACEMENT CHARACTER and U+2026 HORIZONTAL ELLIPSIS, for jsonrpc_show. */
#define JSONRPC_REPLACEMENT "\xef\xbf\xbd"
#define JSONRPC_ELLIPSIS "\xe2\x80\xa6"

/* Checks the bytes of a message that cJSON is lenient about (jsonrpc.h, jsonrpc_parse): no control
 * byte inside a string, none outside one but JSON's four whitespace bytes, nesting and values within
 * their bounds. Strings are followed from quote to quote, escapes two bytes at a time, so that brackets
 * and commas inside them do not count. Sets *nul_escape when a string holds a \u0000 escape. Returns
 * whether the text may go to cJSON; what else is malformed, cJSON finds. */
static int jsonrpc_scan(const char *text, size_t len, int *nul_escape)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i, values = 1;
    unsigned char prev = 0; /* the last byte outside whitespace, a string's bytes counting as '"' */
    int depth = 0, in_string = 0;

    *nul_escape = 0;
    for (i = 0; i < len; i++) {
        if (in_string) {
            if (p[i] < 0x20)
                return 0;
            if (p[i] == '"') {
                in_string = 0;
            } else if (p[i] == '\\' && i + 1 < len) {
                if (p[i + 1] < 0x20)
                    return 0;
                if (i + 5 < len && memcmp(p + i + 1, "u0000", 5) == 0)
                    *nul_escape = 1;
                i++;
            }
            continue;
        }
        switch (p[i]) {
        case ' ':
        case '\t':
        case '\n':
        case '\r':
            continue;
        case '"':
            in_string = 1;
            break;
        case '[':
        case '{':
            if (++depth > JSONRPC_DEPTH_MAX)
                return 0;
            values++; /* its first member; an empty one takes it back below */
            break;
        case ']':
        case '}':
            depth--;
            if (prev == '[' || prev == '{')
                values--;
            break;
        case ',':
            values++;
            break;
        default:
            if (p[i] < 0x20)
                return 0;
        }
        prev = p[i];
    }
    /* The count is checked once at the end, where it is exact: while a container is open, its first
     * member is counted before it is known to exist. */
    return values <= JSONRPC_VALUES_MAX;
}

/* A copy of text in which every \u0000 escape inside a string is the two bytes C0 80; *out_len gets
 * its length. The copy only shrinks. */
static char *jsonrpc_nul_escapes(const char *text, size_t len, size_t *out_len)
{
    char *copy = mem_alloc(len + 1);
    size_t out = 0;
    int in_string = 0;

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
    *out_len = out;
    return copy;
}

cJSON *jsonrpc_parse(const char *text, size_t len)
{
    const char *end = NULL, *stop;
    char *copy = NULL;
    cJSON *root = NULL;
    int nul_escape;

    if (!jsonrpc_scan(text, len, &nul_escape))
        goto out;
    if (nul_escape) {
        copy = jsonrpc_nul_escapes(text, len, &len);
        text = copy;
    }
    /* cJSON itself, not json_parse: only cJSON tells where the value ended, and json_parse keeps
     * cJSON's leniency for the answers of Zoekt and Kubernetes, which lib/jscan mirrors. */
    root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root == NULL)
        goto out;
    for (stop = text + len; end < stop && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'); end++)
        ;
    if (end != stop) {
        cJSON_Delete(root);
        root = NULL;
    }
out:
    free(copy);
    return root;
}

size_t jsonrpc_parse_cost(size_t len)
{
    size_t nodes = len / 2 + 1;

    if (nodes > JSONRPC_VALUES_MAX)
        nodes = JSONRPC_VALUES_MAX;
    return 2 * len + nodes * JSONRPC_NODE_COST;
}

/* Whether s is well-formed UTF-8 throughout. */
static int jsonrpc_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s), k;

    for (; left > 0; p += k, left -= k)
        if ((k = json_utf8_len(p, left)) == 0)
            return 0;
    return 1;
}

void jsonrpc_show(char *dst, size_t cap, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s), out = 0, shown = 0, k, n;
    const char *piece;

    if (cap == 0)
        return;
    while (left > 0) {
        k = json_utf8_len(p, left);
        if (k == 0 || *p < 0x20 || *p == 0x7f) {
            piece = JSONRPC_REPLACEMENT;
            n = sizeof(JSONRPC_REPLACEMENT) - 1;
            k = k ? k : 1;
        } else {
            piece = (const char *)p;
            n = k;
        }
        /* Room is kept for the ellipsis and the terminator. */
        if (shown == JSONRPC_SHOW_MAX || out + n + sizeof(JSONRPC_ELLIPSIS) > cap)
            break;
        memcpy(dst + out, piece, n);
        out += n;
        p += k;
        left -= k;
        shown++;
    }
    if (left > 0 && out + sizeof(JSONRPC_ELLIPSIS) <= cap) {
        memcpy(dst + out, JSONRPC_ELLIPSIS, sizeof(JSONRPC_ELLIPSIS) - 1);
        out += sizeof(JSONRPC_ELLIPSIS) - 1;
    }
    dst[out] = '\0';
}

int jsonrpc_id_valid(const cJSON *id)
{
    if (cJSON_IsString(id))
        return id->valuestring != NULL && jsonrpc_utf8(id->valuestring);
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
        classify_invalid(out, JSONRPC_INVALID_REQUEST,
                         cJSON_IsString(id) ? "\"id\" must be valid UTF-8 without NUL (\\u0000), so that the "
                                              "reply can carry it back unchanged"
                                            : "\"id\" must be a string or an integer");
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
