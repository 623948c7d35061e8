/* cursor.c: page cursors; see cursor.h. */
#include "connector/tools/cursor.h"

#include "connector/tools/args.h"
#include "mem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t tcur_hash(uint64_t h, const char *s)
{
    /* The terminator is hashed too, so that ("ab", "c") and ("a", "bc") differ. */
    do {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    } while (*s++);
    return h;
}

char *tcur_make(char kind, uint64_t hash, const char *position)
{
    return mem_printf("%c%016" PRIx64 ".%s", kind, hash, position);
}

int tcur_matches(const char *cursor, char kind, uint64_t hash)
{
    char head[20];

    snprintf(head, sizeof(head), "%c%016" PRIx64 ".", kind, hash);
    return strncmp(cursor, head, 18) == 0;
}

/* The answer to a cursor this module did not make. */
static int tcur_foreign(struct tool_result *r)
{
    (void)targ_fail(r, "argument \"cursor\" is not a cursor this tool returned; leave it out for the first page");
    return ZK_EINVAL;
}

int tcur_read(const char *cursor, char kind, uint64_t hash, char *position, struct tool_result *r)
{
    size_t n;

    position[0] = '\0';
    if (!cursor)
        return ZK_OK;
    if (strlen(cursor) < 18 || cursor[0] != kind || cursor[17] != '.')
        return tcur_foreign(r);
    if (!tcur_matches(cursor, kind, hash))
        return targ_fail(r, "argument \"cursor\" belongs to another query: give it with the same arguments as "
                            "the call that returned it, or leave it out for the first page"),
               ZK_EINVAL;
    n = strlen(cursor + 18);
    if (n > TCUR_POSITION_MAX)
        return targ_fail(r, "argument \"cursor\" is longer than any this tool returns"), ZK_EINVAL;
    memcpy(position, cursor + 18, n + 1);
    return ZK_OK;
}

int tcur_offset(const char *position, size_t max, size_t *offset, struct tool_result *r)
{
    unsigned long long v;
    char *end;

    *offset = 0;
    if (!position[0])
        return ZK_OK;
    errno = 0;
    v = strtoull(position, &end, 10);
    if (errno || *end || position[0] < '0' || position[0] > '9' || v > max)
        return targ_fail(r, "argument \"cursor\" does not hold a page this tool can serve (at most %zu items are "
                            "paged through; narrow the query past that)", max),
               ZK_EINVAL;
    *offset = (size_t)v;
    return ZK_OK;
}

/* Whether a key part's byte c is written as an escape: what JSON would escape, the separator, and the
 * escape's own mark. */
static int tcur_escaped(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == '%' || c == ':' || c == '"' || c == '\\';
}

/* Writes part, escaped, at out + *len, as far as it fits in max bytes; returns whether all of it did. */
static int tcur_put_part(char *out, size_t *len, size_t max, const unsigned char *part)
{
    static const char hex[] = "0123456789ABCDEF";

    while (*part) {
        /* One unit: an escape, or a character with the continuation bytes after its lead. */
        int esc = tcur_escaped(*part);
        size_t unit = esc ? 3 : 1;

        while (!esc && (part[unit] & 0xc0) == 0x80)
            unit++;
        if (*len + unit > max)
            return 0;
        if (esc) {
            out[(*len)++] = '%';
            out[(*len)++] = hex[*part >> 4];
            out[(*len)++] = hex[*part & 15];
        } else {
            memcpy(out + *len, part, unit);
            *len += unit;
        }
        part += esc ? 1 : unit;
    }
    return 1;
}

char *tcur_make_key(char kind, uint64_t hash, const char *const *parts, size_t n, size_t max)
{
    char *out = mem_realloc(tcur_make(kind, hash, ""), max + 1);
    size_t len = strlen(out);
    int whole = 1;

    for (size_t i = 0; whole && i < n; i++) {
        if (i && (whole = len < max))
            out[len++] = ':';
        if (whole)
            whole = tcur_put_part(out, &len, max, (const unsigned char *)parts[i]);
    }
    out[len] = '\0';
    return out;
}

/* The value of hex digit c, or -1. */
static int tcur_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int tcur_key_read(char *position, const char **parts, size_t n, struct tool_result *r)
{
    const char *in = position;
    char *out = position;
    size_t part = 0;

    for (size_t i = 0; i < n; i++)
        parts[i] = "";
    parts[0] = position;
    /* Decoded text is never longer than its escapes, so it is written over them. */
    for (; *in; in++) {
        if (*in == ':') {
            *out++ = '\0';
            if (++part == n)
                return tcur_foreign(r);
            parts[part] = out;
        } else if (*in == '%') {
            int hi = tcur_hex(in[1]), lo = hi < 0 ? -1 : tcur_hex(in[2]);

            if (lo < 0 || (hi | lo) == 0)
                return tcur_foreign(r);
            *out++ = (char)(hi << 4 | lo);
            in += 2;
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
    return ZK_OK;
}
