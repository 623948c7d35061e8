/* buf.h: a growable byte buffer with a hard upper bound.
 *
 * This is the only way the project accumulates bytes that arrive from a network peer (a watch stream,
 * a Zoekt response, an MCP request), so every such path has a limit that a hostile or broken peer
 * cannot push past. Modelled on curl's dynbuf: when an append fails, the buffer is freed, so a caller
 * never has to remember to clean up after an error.
 *
 * Memory comes from lib/mem, which ends the process when it runs out (mem.h), so the only way an
 * append fails is the bound: ZK_ETOOBIG. That failure is the one a peer can cause, so ignoring it
 * would silently drop bytes; the compiler refuses code that does (warn_unused_result).
 *
 * The contents are always NUL-terminated (the terminator is not counted in len), so a buffer holding
 * text can be handed to string functions directly. Access the fields read-only; change them only
 * through these functions. */
#ifndef ZK_BUF_H
#define ZK_BUF_H

#include <stddef.h>

struct buf {
    char *data; /* NULL until the first append; then NUL-terminated */
    size_t len; /* bytes stored, excluding the terminator */
    size_t cap; /* bytes allocated */
    size_t max; /* the most bytes len may ever reach */
};

/* Prepares an empty buffer that may hold at most max bytes. Allocates nothing. */
void buf_init(struct buf *b, size_t max);

#define BUF_MUST_USE __attribute__((warn_unused_result))

/* Appends n bytes from p. Returns ZK_OK, or ZK_ETOOBIG when len would exceed max; then the buffer's
 * memory is freed and it is left empty (still usable with the same max). */
int buf_append(struct buf *b, const void *p, size_t n) BUF_MUST_USE;

/* Appends a NUL-terminated string. Same contract as buf_append. */
int buf_puts(struct buf *b, const char *s) BUF_MUST_USE;

/* Appends one byte. Same contract as buf_append. */
int buf_putc(struct buf *b, char c) BUF_MUST_USE;

/* Appends printf-style formatted text. Same contract as buf_append (a text longer than printf can
 * count, INT_MAX bytes, is ZK_ETOOBIG too). */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3))) BUF_MUST_USE;

/* Appends n in decimal, as "%lld" prints it, without printf's cost (printers of many numbers use it).
 * Same contract as buf_append. */
int buf_put_int(struct buf *b, long long n) BUF_MUST_USE;

struct zk_err;

/* Appends the whole file at path ("-" means standard input) within b's bound. Returns ZK_OK, or
 * ZK_EIO (cannot open or read) or ZK_ETOOBIG, with err naming the file; on failure the buffer is
 * freed, as after any failed append. */
int buf_read_file(struct buf *b, const char *path, struct zk_err *err) BUF_MUST_USE;

/* Empties the buffer but keeps its memory for reuse. */
void buf_reset(struct buf *b);

/* Drops the first n bytes (n <= len), moving the rest to the front. */
void buf_consume(struct buf *b, size_t n);

/* Returns the contents as a NUL-terminated heap string that the caller owns and frees with free();
 * the buffer is left empty. Never returns NULL: an empty buffer gives "" (allocated). */
char *buf_steal(struct buf *b) __attribute__((returns_nonnull));

/* Frees the memory; the buffer is empty and may be reused. */
void buf_free(struct buf *b);

#endif
