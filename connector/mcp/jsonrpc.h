/* jsonrpc.h: JSON-RPC 2.0 message classification and reply construction for the MCP server.
 *
 * Pure functions over cJSON trees, no I/O: the transports parse the bytes they receive, mcp/server.c
 * classifies each message here and builds its replies here, and the transports print them. An id is kept
 * exactly as the peer sent it (a string or an integer) because the peer matches replies by value and
 * type; a request id is never null. */
#ifndef ZK_MCP_JSONRPC_H
#define ZK_MCP_JSONRPC_H

#include <cjson/cJSON.h>

#define JSONRPC_PARSE_ERROR -32700
#define JSONRPC_INVALID_REQUEST -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602
#define JSONRPC_INTERNAL_ERROR -32603

enum jsonrpc_kind {
    JSONRPC_INVALID,      /* not a JSON-RPC 2.0 message: answer error_code with id (which may be NULL) */
    JSONRPC_REQUEST,      /* method and id: must be answered */
    JSONRPC_NOTIFICATION, /* method, no id: must never be answered */
    JSONRPC_RESPONSE      /* result or error with an id: a reply to a request of ours */
};

struct jsonrpc_msg {
    enum jsonrpc_kind kind;
    const cJSON *id;        /* points into the classified tree; NULL for notifications and when absent */
    const char *method;     /* points into the tree; NULL unless a request or notification */
    const cJSON *params;    /* the params object, or NULL when absent */
    int error_code;         /* JSONRPC_INVALID_REQUEST or JSONRPC_INVALID_PARAMS when kind is INVALID */
    const char *error_msg;  /* a static explanation when kind is INVALID */
};

/* Parses a message of len bytes (need not be NUL-terminated) as json_parse does, except that a \u0000
 * escape inside a string becomes the two bytes C0 80 (the NUL of Modified UTF-8) instead of ending the
 * string there. cJSON's strings stop at their first NUL, so "factory.go\u0000.txt" would otherwise
 * read as "factory.go"; C0 80 is never well-formed UTF-8, so the tools' argument checks see it and
 * refuse the argument, naming it. Returns a tree the caller frees, or NULL for malformed JSON. */
cJSON *jsonrpc_parse(const char *text, size_t len);

/* Classifies one message (one element of a batch). Never fails: anything malformed comes back as
 * JSONRPC_INVALID with the reason, and with id set when the message carried a usable id so that the
 * error reply can name it. out points into node, which must outlive it. */
void jsonrpc_classify(const cJSON *node, struct jsonrpc_msg *out);

/* Whether id is usable as a request id: a string, or a number holding an integer of at most 2^53 in
 * magnitude (larger ones would not survive the trip through a double unchanged). */
int jsonrpc_id_valid(const cJSON *id);

/* Whether two valid ids are the same id: same type and same value. */
int jsonrpc_id_equal(const cJSON *a, const cJSON *b);

/* {"jsonrpc":"2.0","id":<copy of id>,"result":result}. Takes ownership of result. Returns a new tree
 * the caller owns (cJSON_Delete). */
cJSON *jsonrpc_result(const cJSON *id, cJSON *result);

/* {"jsonrpc":"2.0","id":<copy of id, or null when id is NULL>,"error":{"code","message","data"?}}.
 * Takes ownership of data (may be NULL). Returns a new tree the caller owns. */
cJSON *jsonrpc_error(const cJSON *id, int code, const char *message, cJSON *data);

#endif
