/* cursor.c: page cursors; see cursor.h. */
#include "connector/tools/cursor.h"

#include "connector/format/text.h"
#include "connector/tools/args.h"
#include "mem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "<kind><16 hex digits>.": what every cursor starts with. */
#define TCUR_HEAD_LEN 18
/* "#<16 hex digits>": what ends the position of a key cut to fit. */
#define TCUR_CUT_LEN 17

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
    return strncmp(cursor, head, TCUR_HEAD_LEN) == 0;
}

int tcur_read(const char *cursor, char kind, uint64_t hash, char *position, struct tool_result *r)
{
    size_t n;

    position[0] = '\0';
    if (!cursor)
        return ZK_OK;
    if (strlen(cursor) < TCUR_HEAD_LEN || cursor[0] != kind || cursor[TCUR_HEAD_LEN - 1] != '.')
        return targ_fail(r, "argument \"cursor\" is not a cursor this tool returned; leave it out for the "
                            "first page"),
               ZK_EINVAL;
    if (!tcur_matches(cursor, kind, hash))
        return targ_fail(r, "argument \"cursor\" belongs to another query: give it with the same arguments as "
                            "the call that returned it, or leave it out for the first page"),
               ZK_EINVAL;
    n = strlen(cursor + TCUR_HEAD_LEN);
    if (n > TCUR_POSITION_MAX)
        return targ_fail(r, "argument \"cursor\" is longer than any this tool returns"), ZK_EINVAL;
    memcpy(position, cursor + TCUR_HEAD_LEN, n + 1);
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

/* Whether a key position writes byte c as %XX. */
static int tcur_escaped(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == '%' || c == '"' || c == '\\' || c == '#';
}

char *tcur_make_key(char kind, uint64_t hash, const char *key, size_t max)
{
    size_t room = max - TCUR_HEAD_LEN < TCUR_POSITION_MAX ? max - TCUR_HEAD_LEN : TCUR_POSITION_MAX;
    size_t n = strlen(key), whole = 0, cut = 0, used = 0;
    char position[TCUR_POSITION_MAX + 1], *p = position;

    for (size_t i = 0; i < n; i++)
        whole += tcur_escaped((unsigned char)key[i]) ? 3 : 1;
    if (whole <= room) {
        cut = n;
    } else {
        for (; cut < n && used + (tcur_escaped((unsigned char)key[cut]) ? 3 : 1) <= room - TCUR_CUT_LEN; cut++)
            used += tcur_escaped((unsigned char)key[cut]) ? 3 : 1;
        /* The cursor must stay UTF-8: the cut falls before the character it would split. */
        while (cut > 0 && ((unsigned char)key[cut] & 0xc0) == 0x80)
            cut--;
    }
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char)key[i];

        if (tcur_escaped(c))
            p += snprintf(p, 4, "%%%02X", c);
        else
            *p++ = (char)c;
    }
    if (cut < n)
        p += snprintf(p, TCUR_CUT_LEN + 1, "#%016" PRIx64, tcur_hash(TCUR_HASH_INIT, key));
    *p = '\0';
    return tcur_make(kind, hash, position);
}

/* The value of hex digit c, or -1. */
static int tcur_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Fills k from a key position; returns 0 when position is not one tcur_make_key writes (a %XX that is
 * no byte or is NUL, a hash that is not 16 hex digits). */
static int tcur_key_parse(const char *position, struct tcur_key *k)
{
    const char *s = position;

    for (; *s && *s != '#'; s++) {
        int hi, lo;

        if (*s != '%') {
            k->key[k->len++] = *s;
            continue;
        }
        /* s[2] is read only when s[1] is a digit, so never past the end. */
        hi = tcur_hex(s[1]);
        lo = hi < 0 ? -1 : tcur_hex(s[2]);
        if (lo < 0 || hi + lo == 0)
            return 0;
        k->key[k->len++] = (char)(hi * 16 + lo);
        s += 2;
    }
    k->key[k->len] = '\0';
    if (*s == '#') {
        if (strlen(s + 1) != TCUR_CUT_LEN - 1)
            return 0;
        for (size_t i = 1; i < TCUR_CUT_LEN; i++) {
            if (tcur_hex(s[i]) < 0)
                return 0;
            k->hash = k->hash * 16 + (uint64_t)tcur_hex(s[i]);
        }
        k->cut = 1;
    }
    return 1;
}

int tcur_key_read(const char *position, struct tcur_key *k, struct tool_result *r)
{
    memset(k, 0, sizeof(*k));
    if (!position[0])
        return ZK_OK;
    if (!tcur_key_parse(position, k))
        return targ_fail(r, "argument \"cursor\" is damaged: give it as the call that returned it did, or leave "
                            "it out for the first page"),
               ZK_EINVAL;
    k->set = 1;
    return ZK_OK;
}

size_t tcur_key_start(const struct tcur_key *k, const char *const *keys, size_t n)
{
    size_t i, shared = n;

    if (!k->set)
        return 0;
    for (i = 0; i < n; i++) {
        int c = strncmp(keys[i], k->key, k->len);

        if (c < 0)
            continue;
        if (c > 0)
            break;
        /* keys[i] starts with the position's key: a whole key is either it or, longer, after it. */
        if (!k->cut)
            return keys[i][k->len] ? i : i + 1;
        if (tcur_hash(TCUR_HASH_INIT, keys[i]) == k->hash)
            return i + 1;
        if (shared == n)
            shared = i;
    }
    return shared < n ? shared : i;
}

/* A file's key among the pages; a heap string the caller frees. The parser leaves no control byte in
 * names but tab, so \x01 sorts below every byte they hold. */
static char *tcur_file_key(const struct zr_file *f)
{
    return mem_printf("%s\x01%s\x01%s", f->repo, f->path, zr_file_branch(f));
}

char *tcur_files_cursor(const struct zr_file *last, void *arg)
{
    const struct tcur_files *t = arg;
    char *key = tcur_file_key(last), *cursor = tcur_make_key(t->kind, t->hash, key, FMT_CURSOR_MAX);

    free(key);
    return cursor;
}

size_t tcur_files_first(const struct zr_search *res, const struct tcur_key *after)
{
    size_t *order = fmt_sorted(res), first;
    char **keys = mem_calloc(res->n_files + 1, sizeof(*keys));

    for (size_t i = 0; i < res->n_files; i++)
        keys[i] = tcur_file_key(&res->files[order[i]]);
    first = tcur_key_start(after, (const char *const *)keys, res->n_files);
    for (size_t i = 0; i < res->n_files; i++)
        free(keys[i]);
    free(keys);
    free(order);
    return first;
}
