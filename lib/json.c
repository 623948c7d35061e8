/* json.c: see json.h. */
#include "json.h"

#include "buf.h"
#include "err.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *json_str(const cJSON *obj, const char *key, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

double json_num(const cJSON *obj, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int json_num_to_int(double d, long long min, long long max, long long *out)
{
    /* (double)max + 1 rounds to at most 2^63, and (double)min is at least -2^63: whatever passes both
     * comparisons converts. NaN fails every comparison. */
    if (!(d >= (double)min && d < (double)max + 1.0))
        return 0;
    *out = (long long)d;
    return 1;
}

long long json_int(const cJSON *obj, const char *key, long long def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    long long n;

    /* Values beyond 2^53 lose precision, which no field we read has; hostile input such as 3e113 gets
     * the default. */
    return cJSON_IsNumber(v) && json_num_to_int(v->valuedouble, LLONG_MIN, LLONG_MAX, &n) ? n : def;
}

int json_bool(const cJSON *obj, const char *key, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

const cJSON *json_obj(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *json_arr(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsArray(v) ? v : NULL;
}

const cJSON *json_path(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    char key[256];

    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);

        if (n >= sizeof(key) || !cJSON_IsObject(cur))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

const char *json_path_str(const cJSON *root, const char *path, const char *def)
{
    const cJSON *v = json_path(root, path);

    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

cJSON *json_parse(const char *data, size_t len)
{
    return cJSON_ParseWithLength(data, len);
}

size_t json_utf8_len(const unsigned char *s, size_t n)
{
    size_t need, i;
    unsigned lo = 0x80, hi = 0xbf; /* the range the second byte must be in */

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        need = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        need = 3, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        need = 4, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < need; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return need;
}

/* U+FFFD REPLACEMENT CHARACTER, written for bytes that are not UTF-8 under JSON_ESCAPE_UTF8. */
#define JSON_REPLACEMENT "\xef\xbf\xbd"

size_t json_escape(char *dst, size_t cap, const char *s, size_t len, size_t *used, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    size_t out = 0;

    while (p < end) {
        const unsigned char *run = p;
        char esc[6] = {'\\', 0, '0', '0', 0, 0};
        const char *piece = esc;
        size_t n = 2, k = 1;

        /* Runs of plain bytes are copied at once: a tool's answer is kilobytes of text with a newline
         * every line. Under JSON_ESCAPE_UTF8 only ASCII counts as plain. */
        while (p < end && *p >= 32 && *p != '"' && *p != '\\' && (*p < 0x80 || !(flags & JSON_ESCAPE_UTF8)))
            p++;
        if ((size_t)(p - run) > cap - out)
            p = run + (cap - out);
        memcpy(dst + out, run, (size_t)(p - run));
        out += (size_t)(p - run);
        if (p == end || out == cap)
            break;
        switch (*p) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            if (*p >= 0x80) { /* only under JSON_ESCAPE_UTF8 */
                k = json_utf8_len(p, (size_t)(end - p));
                piece = k ? (const char *)p : JSON_REPLACEMENT;
                n = k ? k : sizeof(JSON_REPLACEMENT) - 1;
                k = k ? k : 1;
                break;
            }
            esc[1] = 'u';
            esc[4] = hex[*p >> 4];
            esc[5] = hex[*p & 15];
            n = 6;
        }
        if (n > cap - out)
            break;
        memcpy(dst + out, piece, n);
        out += n;
        p += k;
    }
    *used = (size_t)(p - (const unsigned char *)s);
    return out;
}

/* Appends s as cJSON prints a string: quoted, escaped by json_escape with flags, a piece at a time. */
static int json_put_string(struct buf *b, const char *s, unsigned flags)
{
    char piece[4096];
    size_t left = s ? strlen(s) : 0, used, n;
    int rc = buf_putc(b, '"');

    while (!rc && left) {
        n = json_escape(piece, sizeof(piece), s, left, &used, flags);
        rc = buf_append(b, piece, n);
        s += used;
        left -= used;
    }
    return rc ? rc : buf_putc(b, '"');
}

/* Whole numbers below 10^15 in magnitude print as their digits (cJSON's "%1.15g" gives exactly those),
 * without printf and the sscanf cJSON checks each number with; -0 and the rest go to cJSON. */
#define JSON_PLAIN_INT_MAX 1e15

/* The type of a node, as cJSON's cJSON_Is* functions read it (inline here: the printer asks it of
 * every node, and those are calls into the library). */
#define JSON_TYPE(v) ((v)->type & 0xff)

static int json_put_value(struct buf *b, const cJSON *v, unsigned flags)
{
    const cJSON *c;
    char *text;
    int rc;

    switch (JSON_TYPE(v)) {
    case cJSON_String:
        return json_put_string(b, v->valuestring, flags);
    case cJSON_Array:
    case cJSON_Object:
        rc = buf_putc(b, JSON_TYPE(v) == cJSON_Array ? '[' : '{');
        for (c = v->child; !rc && c; c = c->next) {
            if (c != v->child)
                rc = buf_putc(b, ',');
            if (!rc && JSON_TYPE(v) == cJSON_Object && !(rc = json_put_string(b, c->string, flags)))
                rc = buf_putc(b, ':');
            if (!rc)
                rc = json_put_value(b, c, flags);
        }
        return rc ? rc : buf_putc(b, JSON_TYPE(v) == cJSON_Array ? ']' : '}');
    case cJSON_NULL:
        return buf_append(b, "null", 4);
    case cJSON_True:
        return buf_append(b, "true", 4);
    case cJSON_False:
        return buf_append(b, "false", 5);
    case cJSON_Number:
        if (v->valuedouble > -JSON_PLAIN_INT_MAX && v->valuedouble < JSON_PLAIN_INT_MAX &&
            v->valuedouble == (double)(long long)v->valuedouble && !(v->valuedouble == 0 && signbit(v->valuedouble)))
            return buf_put_int(b, (long long)v->valuedouble);
        break;
    }
    /* Other numbers and raw text: exactly cJSON's own output for the value. */
    text = cJSON_PrintUnformatted(v);
    rc = text ? buf_puts(b, text) : ZK_EINVAL; /* a node of no type cJSON knows */
    cJSON_free(text);
    return rc;
}

static char *json_print_flags(const cJSON *node, unsigned flags)
{
    struct buf b;

    buf_init(&b, SIZE_MAX / 2);
    if (!node || json_put_value(&b, node, flags)) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

char *json_print(const cJSON *node)
{
    return json_print_flags(node, 0);
}

char *json_print_utf8(const cJSON *node)
{
    return json_print_flags(node, JSON_ESCAPE_UTF8);
}
