/* args.c: see args.h. */
#include "connector/tools/args.h"

#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "json.h"
#include "mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* targ_fail and targ_fail_code: r failed with code, and the message fmt with ap. */
__attribute__((format(printf, 3, 0))) static int targ_vfail(struct tool_result *r, int code, const char *fmt,
                                                            va_list ap)
{
    char msg[2048];
    size_t n;
    int rc = ZK_OK;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    buf_reset(&r->text);
    cJSON_Delete(r->structured);
    r->structured = NULL;
    r->is_error = 1;
    r->code = code;
    /* A precision such as %.200s, or the message's own bound, can cut a character of an argument in
     * two: such bytes are dropped, so that the reply stays UTF-8. An argument echoed in the message
     * (an unknown name, a query) may hold control bytes: all but line breaks and tabs, which messages
     * use themselves, become U+FFFD. The message, at most three times 2 KiB, is far below the text
     * buffer's bound, so this cannot fail for size. */
    n = strlen(msg);
    for (size_t i = 0, k; !rc && i < n; i += k ? k : 1) {
        unsigned char c = (unsigned char)msg[i];

        k = json_utf8_len((const unsigned char *)msg + i, n - i);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            rc = buf_puts(&r->text, "\xef\xbf\xbd"); /* U+FFFD */
        else if (k)
            rc = buf_append(&r->text, msg + i, k);
    }
    return rc;
}

int targ_fail(struct tool_result *r, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = targ_vfail(r, ZK_EINVAL, fmt, ap);
    va_end(ap);
    return rc;
}

int targ_fail_code(struct tool_result *r, int code, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = targ_vfail(r, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* A short description of a JSON value's type, for messages. */
const char *targ_type(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "null";
}

/* Fails r when s, the value of argument name (item: its 1-based place in a list, or 0), holds a NUL
 * character (mcp/jsonrpc.c turns \u0000 into C0 80) or bytes that are not UTF-8: either would be cut
 * short or echoed raw into the JSON reply. */
static int targ_check_text(const char *name, size_t item, const char *s, struct tool_result *r)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), k;
    char where[48] = "";

    for (size_t i = 0; i < n; i += k) {
        if ((k = json_utf8_len(p + i, n - i)))
            continue;
        if (item)
            snprintf(where, sizeof(where), ", item %zu,", item);
        if (p[i] == 0xc0 && i + 1 < n && p[i + 1] == 0x80)
            targ_fail(r, "argument \"%s\"%s contains a NUL character (\\u0000) at byte %zu; remove it", name,
                      where, i);
        else
            targ_fail(r, "argument \"%s\"%s is not valid UTF-8 (byte 0x%02x at offset %zu); send text as UTF-8",
                      name, where, p[i], i);
        return ZK_EINVAL;
    }
    return ZK_OK;
}

static const cJSON *targ_get(const cJSON *args, const char *name)
{
    const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;

    return v && !cJSON_IsNull(v) ? v : NULL;
}

int targ_string(const cJSON *args, const char *name, size_t max_len, const char **out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);

    *out = NULL;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsString(v) || !v->valuestring) {
        targ_fail(r, "argument \"%s\" must be a string, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    if (strlen(v->valuestring) > max_len) {
        targ_fail(r, "argument \"%s\" is longer than %zu bytes", name, max_len);
        return ZK_EINVAL;
    }
    if (targ_check_text(name, 0, v->valuestring, r))
        return ZK_EINVAL;
    *out = v->valuestring;
    return ZK_OK;
}

int targ_string_list(const cJSON *args, const char *name, size_t max_items, size_t max_len, const char ***out,
                     size_t *n, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name), *it;
    const char **list;

    *out = NULL;
    *n = 0;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsString(v) && !cJSON_IsArray(v)) {
        targ_fail(r, "argument \"%s\" must be a string or an array of strings, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    if (cJSON_IsArray(v) && (size_t)cJSON_GetArraySize(v) > max_items) {
        targ_fail(r, "argument \"%s\" has %d items; at most %zu are allowed", name, cJSON_GetArraySize(v),
                  max_items);
        return ZK_EINVAL;
    }
    list = mem_calloc(cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) + 1 : 2, sizeof(*list));
    if (cJSON_IsString(v)) {
        list[(*n)++] = v->valuestring;
    } else {
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it) || !it->valuestring) {
                targ_fail(r, "argument \"%s\": item %zu must be a string, got %s", name, *n + 1, targ_type(it));
                free(list);
                *n = 0;
                return ZK_EINVAL;
            }
            list[(*n)++] = it->valuestring;
        }
    }
    for (size_t i = 0; i < *n; i++) {
        if (!list[i][0] || strlen(list[i]) > max_len) {
            if (list[i][0])
                targ_fail(r, "argument \"%s\": item %zu is longer than %zu bytes", name, i + 1, max_len);
            else
                targ_fail(r, "argument \"%s\": empty strings are not allowed", name);
            free(list);
            *n = 0;
            return ZK_EINVAL;
        }
        if (targ_check_text(name, cJSON_IsArray(v) ? i + 1 : 0, list[i], r)) {
            free(list);
            *n = 0;
            return ZK_EINVAL;
        }
    }
    *out = list;
    return ZK_OK;
}

int targ_int(const cJSON *args, const char *name, long min, long max, long def, long *out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);
    long long n;

    *out = def;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsNumber(v)) {
        targ_fail(r, "argument \"%s\" must be an integer between %ld and %ld, got %s", name, min, max,
                  targ_type(v));
        return ZK_EINVAL;
    }
    /* The range first: converting a number outside it (2^63, or 1e400, which cJSON reads as infinity)
     * would be undefined behaviour. */
    if (!json_num_to_int(v->valuedouble, min, max, &n)) {
        if (isfinite(v->valuedouble))
            targ_fail(r, "argument \"%s\" must be between %ld and %ld, got %.15g", name, min, max, v->valuedouble);
        else
            targ_fail(r, "argument \"%s\" must be between %ld and %ld, got a number too large to represent", name,
                      min, max);
        return ZK_EINVAL;
    }
    if ((double)n != v->valuedouble) {
        targ_fail(r, "argument \"%s\" must be an integer between %ld and %ld, got a fraction", name, min, max);
        return ZK_EINVAL;
    }
    *out = (long)n;
    return ZK_OK;
}

int targ_bool(const cJSON *args, const char *name, int def, int *out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);

    *out = def;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsBool(v)) {
        targ_fail(r, "argument \"%s\" must be true or false, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    *out = cJSON_IsTrue(v);
    return ZK_OK;
}

int targ_repo_pattern(const char *argname, const char *arg, char *pattern, struct tool_result *r)
{
    struct zk_err err = {0};
    char *re = NULL;
    int rc = zn_normalize(arg, pattern, ZN_ARG_MAX + 1, &err);

    if (rc == ZK_OK && zn_is_glob(pattern))
        rc = zq_glob_to_regex(pattern, ZQ_ANCHOR_FULL, &re, &err);
    if (rc != ZK_OK)
        targ_fail(r, "argument \"%s\": %s", argname, err.msg);
    free(re);
    return rc;
}

