/* json.h: small typed accessors over cJSON, so that code reading untrusted JSON (API objects, Zoekt
 * answers, MCP requests) never dereferences a node of the wrong type.
 *
 * Every getter tolerates a NULL object, a missing key, a JSON null and a value of another type, and then
 * returns the given default. Returned strings point into the cJSON tree: valid while the tree lives. */
#ifndef ZK_JSON_H
#define ZK_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

const char *json_str(const cJSON *obj, const char *key, const char *def);
double json_num(const cJSON *obj, const char *key, double def);
/* The member as an integer (json_num_to_int over the whole range of long long), else def. */
long long json_int(const cJSON *obj, const char *key, long long def);
int json_bool(const cJSON *obj, const char *key, int def);
/* The project's one conversion of a JSON number to an integer. cJSON keeps every number as a double,
 * and casting a double outside the integer's range is undefined behaviour (2^63, or 1e400, which reads
 * as infinity), so the range is checked on the double before anything is converted. Returns 1 with *out
 * set to d cut toward zero when min <= d < max + 1 (so 2.5 gives 2 within [0, 2]); returns 0 and leaves
 * *out alone for NaN, an infinity or any other value outside. Bounds beyond 2^53 are compared as the
 * nearest doubles, which never lets a value past long long's range through. */
int json_num_to_int(double d, long long min, long long max, long long *out);
/* The member as an object or array, or NULL when it is missing or of another type. */
const cJSON *json_obj(const cJSON *obj, const char *key);
const cJSON *json_arr(const cJSON *obj, const char *key);

/* Follows a dotted path ("metadata.labels.app") through objects. Keys containing dots cannot be
 * addressed this way. Returns NULL when any step is missing. */
const cJSON *json_path(const cJSON *root, const char *path);
const char *json_path_str(const cJSON *root, const char *path, const char *def);

/* Parses exactly len bytes (the input need not be NUL-terminated). Returns a tree the caller frees with
 * cJSON_Delete, or NULL for malformed input. */
cJSON *json_parse(const char *data, size_t len);

/* Serialises compactly, exactly as cJSON_PrintUnformatted does, but faster for the large strings and
 * whole numbers of tool results. Returns a heap string the caller frees with free(), or NULL for a NULL
 * node or one cJSON cannot print. */
char *json_print(const cJSON *node);

/* json_print, except that bytes that are not part of well-formed UTF-8, in strings and keys alike,
 * become U+FFFD: the text is valid JSON whatever the tree holds. For what goes to a client that may
 * have put such bytes into the tree itself. */
char *json_print_utf8(const cJSON *node);

/* The length of the well-formed UTF-8 sequence at s (n > 0 bytes available), or 0 when s does not
 * start one: a stray continuation byte, an overlong form, a surrogate, a value past U+10FFFF or a
 * sequence cut short. The project's one UTF-8 validator. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Flags for json_escape. */
enum json_escape_flags {
    /* Bytes that are not part of well-formed UTF-8 become U+FFFD, so the output is valid JSON text
     * whatever the input holds. Without it bytes are copied as they are, as cJSON prints them. */
    JSON_ESCAPE_UTF8 = 1,
};

/* The project's one JSON string escaper (json_print and lib/log use it). Writes the first len bytes
 * of s, escaped as the inside of a JSON string literal (no quotes, no terminator), into dst, which has
 * room for cap bytes; escapes '"', '\' and the control bytes as cJSON does. Stops before the first
 * character whose escaped form does not fit whole, so the output never ends inside an escape or a
 * UTF-8 sequence. Returns the bytes written and sets *used to the bytes of s they stand for (len when
 * everything fit). Allocates nothing; async-signal-safe. */
size_t json_escape(char *dst, size_t cap, const char *s, size_t len, size_t *used, unsigned flags);

#endif
