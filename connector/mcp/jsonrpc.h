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
/* The first of the codes JSON-RPC leaves to the server (-32000 to -32099): the server would not do
 * what was asked although the request was valid (a batch's reply already at its bound). */
#define JSONRPC_SERVER_ERROR -32000

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

/* The deepest nesting of arrays and objects one message may have. An MCP message nests six levels at
 * most (a batch, the message, params, arguments, an array argument, an object in _meta); the rest is
 * room for what a client puts in _meta. cJSON and the printer recurse once per level. */
#define JSONRPC_DEPTH_MAX 32

/* The most values one message may hold, counting each array element and object member once: the nodes
 * of the tree cJSON would build (64 bytes each), so that a 1 MiB message of [0,0,0,...] cannot make a
 * 30 MB tree. The largest legitimate message, a batch of MCP_BATCH_MAX (32) search_code calls with
 * every argument given and each array argument at its schema's maxItems of 50, holds about 5,400. */
#define JSONRPC_VALUES_MAX 16384

/* Client text quoted in an error message (jsonrpc_show) shows at most this many characters, and a
 * buffer of JSONRPC_SHOW_SIZE bytes holds any such quotation. */
#define JSONRPC_SHOW_MAX 64
#define JSONRPC_SHOW_SIZE (JSONRPC_SHOW_MAX * 4 + 4)

/* Parses one message of len bytes (need not be NUL-terminated), more strictly than json_parse, which
 * reads Zoekt's and Kubernetes' answers as cJSON does:
 * - the message is one JSON value: anything but whitespace after it is refused, where cJSON stops
 *   reading and ignores the rest;
 * - a control byte (a raw NUL among them) is refused inside a string, where RFC 8259 requires it to be
 *   escaped, and outside one, where cJSON would take it for whitespace; a raw NUL would otherwise end
 *   the C string cJSON makes of a value;
 * - nesting deeper than JSONRPC_DEPTH_MAX or more than JSONRPC_VALUES_MAX values are refused, by a
 *   scan that allocates nothing, before cJSON builds anything.
 * A \u0000 escape inside a string becomes the two bytes C0 80 (the NUL of Modified UTF-8) instead of
 * ending the string there. cJSON's strings stop at their first NUL, so "factory.go\u0000.txt" would
 * otherwise read as "factory.go"; C0 80 is never well-formed UTF-8, so the tools' argument checks see
 * it and refuse the argument, naming it, and jsonrpc_classify refuses an id holding it. Returns a tree
 * the caller frees, or NULL for text refused by any of these rules (a parse error, -32700). */
cJSON *jsonrpc_parse(const char *text, size_t len);

/* The most memory jsonrpc_parse may hold for a message of len bytes besides the text, for the
 * connector's budget of requests (connector/front.h, "Memory"): the copy it makes of a text with
 * \u0000 escapes, the strings cJSON copies out of the text (together no longer than it), and one node
 * per value, of which a message holds at most one per two bytes and JSONRPC_VALUES_MAX in all, each
 * counted at JSONRPC_NODE_COST: the node (64 bytes, an 80-byte heap chunk) and the two strings a member
 * may own (its name and a string value), each a chunk of at least 32 bytes (test_jsonrpc counts them). */
#define JSONRPC_NODE_COST 160
size_t jsonrpc_parse_cost(size_t len);

/* Classifies one message (one element of a batch). Never fails: anything malformed comes back as
 * JSONRPC_INVALID with the reason, and with id set when the message carried a usable id so that the
 * error reply can name it. out points into node, which must outlive it. */
void jsonrpc_classify(const cJSON *node, struct jsonrpc_msg *out);

/* Whether id is usable as a request id: a string of well-formed UTF-8, or a number holding an integer
 * of at most 2^53 in magnitude. Either comes back in the reply exactly as it came in. A string that is
 * not UTF-8 (raw bytes, or the C0 80 that jsonrpc_parse makes of \u0000) could not: the reply must be
 * UTF-8 JSON, so such a request is refused (-32600, id null) rather than answered under another id;
 * larger numbers would not survive the trip through a double unchanged. */
int jsonrpc_id_valid(const cJSON *id);

/* Whether two valid ids are the same id: same type and same value. */
int jsonrpc_id_equal(const cJSON *a, const cJSON *b);

/* {"jsonrpc":"2.0","id":<copy of id>,"result":result}. Takes ownership of result. Returns a new tree
 * the caller owns (cJSON_Delete). */
cJSON *jsonrpc_result(const cJSON *id, cJSON *result);

/* {"jsonrpc":"2.0","id":<copy of id, or null when id is NULL>,"error":{"code","message","data"?}}.
 * Takes ownership of data (may be NULL). Returns a new tree the caller owns. */
cJSON *jsonrpc_error(const cJSON *id, int code, const char *message, cJSON *data);

/* Writes s into dst (cap bytes, NUL-terminated) as client text is quoted in an error message: at most
 * JSONRPC_SHOW_MAX characters, then "…" when s is longer; a control character or a byte that is not
 * part of well-formed UTF-8 (the C0 80 of an escaped NUL among them) becomes U+FFFD each. The result
 * is UTF-8 that prints on one line, whatever the client sent. A dst of JSONRPC_SHOW_SIZE bytes holds
 * all of it; a smaller one cuts earlier, never inside a character. */
void jsonrpc_show(char *dst, size_t cap, const char *s);

#endif
