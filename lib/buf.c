/* buf.c: see buf.h. */
#include "buf.h"

#include "err.h"
#include "mem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_MIN_CAP 256

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

/* Makes room for n more bytes plus the terminator. Frees the buffer when that is past the bound (see
 * buf.h). */
static int buf_reserve(struct buf *b, size_t n)
{
    size_t need, cap;

    if (n > b->max || b->len > b->max - n) {
        buf_free(b);
        return ZK_ETOOBIG;
    }
    need = b->len + n + 1;
    if (need <= b->cap)
        return ZK_OK;
    cap = b->cap ? b->cap : BUF_MIN_CAP;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    /* Never allocate much beyond what the bound allows. */
    if (cap > b->max + 1)
        cap = b->max + 1;
    if (cap < need)
        cap = need;
    b->data = mem_realloc(b->data, cap);
    b->cap = cap;
    return ZK_OK;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    int rc;

    /* With room for the bytes and the terminator there is nothing to check: the capacity never
     * exceeds max + 1. Printers append a few bytes at a time, so this is the common case. */
    if (n >= b->cap - b->len && (rc = buf_reserve(b, n)))
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return ZK_OK;
}

int buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
    return buf_append(b, &c, 1);
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    size_t room = b->cap - b->len;
    va_list ap;
    int n, rc;

    /* Formatted straight into the free room first, which is nearly always enough; only a text that
     * does not fit is formatted a second time, after the buffer has grown. Since the capacity never
     * exceeds max + 1, what fits is within the bound. */
    va_start(ap, fmt);
    n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    /* The format attribute rules out a bad format, so only a text past INT_MAX bytes fails here. */
    if (n < 0) {
        buf_free(b);
        return ZK_ETOOBIG;
    }
    if ((size_t)n < room) {
        b->len += (size_t)n;
        return ZK_OK;
    }
    rc = buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return ZK_OK;
}

int buf_put_int(struct buf *b, long long n)
{
    char digits[24], *p = digits + sizeof(digits);
    unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;

    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (n < 0)
        *--p = '-';
    return buf_append(b, p, (size_t)(digits + sizeof(digits) - p));
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *buf_steal(struct buf *b)
{
    char *s = b->data;

    if (!s)
        s = mem_strdup("");
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return s;
}

int buf_read_file(struct buf *b, const char *path, struct zk_err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char chunk[8192];
    size_t n;
    int rc = ZK_OK;

    if (!f) {
        rc = zk_err_set(err, ZK_EIO, "%s: cannot open: %s", path, strerror(errno));
        buf_free(b);
        return rc;
    }
    while (rc == ZK_OK && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rc = buf_append(b, chunk, n);
    if (rc != ZK_OK)
        zk_err_set(err, rc, "%s: larger than %zu bytes", path, b->max);
    else if (ferror(f))
        rc = zk_err_set(err, ZK_EIO, "%s: read failed", path);
    if (f != stdin)
        fclose(f);
    if (rc != ZK_OK)
        buf_free(b);
    return rc;
}
