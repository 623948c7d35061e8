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

int tcur_read(const char *cursor, char kind, uint64_t hash, char *position, struct tool_result *r)
{
    size_t n;

    position[0] = '\0';
    if (!cursor)
        return ZK_OK;
    if (strlen(cursor) < 18 || cursor[0] != kind || cursor[17] != '.')
        return targ_fail(r, "argument \"cursor\" is not a cursor this tool returned; leave it out for the "
                            "first page"),
               ZK_EINVAL;
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
