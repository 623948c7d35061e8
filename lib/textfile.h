/* textfile.h: the small text files both programs read: bearer tokens, token lists, a namespace.
 *
 * Such a file holds one value per line; blank lines and lines starting with '#' are not values, and
 * whitespace around a value (the newline an editor adds, a stray space) is not part of it. */
#ifndef ZK_TEXTFILE_H
#define ZK_TEXTFILE_H

#include "err.h"

#include <stddef.h>

/* Finds the next value line in text[*pos, len): sets *line and *n to it without surrounding whitespace
 * (pointing into text) and moves *pos past it. Returns 1, or 0 when no value line is left. Pure. */
int textfile_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n);

/* Reads the file at path (at most max bytes; "-" is standard input) and puts its first value line in
 * *out, a heap string the caller frees: "" when the file holds none. Returns ZK_OK, or ZK_EIO or
 * ZK_ETOOBIG with err naming the file; *out is NULL on failure. */
int textfile_first_line(const char *path, size_t max, char **out, struct zk_err *err);

#endif
