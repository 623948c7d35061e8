/* cursor.h: the page cursors of the tools that list (search_code, find_references, list_files,
 * list_repositories).
 *
 * A cursor is opaque to the agent and stateless here: it carries where the next page starts and a hash
 * of what the pages are of (the tool's Zoekt query, or its normalised arguments), so that a cursor
 * given with other arguments is refused rather than paging through another list. Where the next page
 * starts is a position in a sorted list (the last key shown: a path, a repository name) where the list
 * has a stable order, so that a page never repeats what an earlier one showed even when the index
 * changed in between; or a count of files in Zoekt's ranked order, where there is no other order.
 *
 * Text form: "<tool letter><16 hex digits of the hash>.<position>"; a position is at most
 * TCUR_POSITION_MAX bytes. Pure. */
#ifndef ZK_CONNECTOR_TOOLS_CURSOR_H
#define ZK_CONNECTOR_TOOLS_CURSOR_H

#include "connector/tools/tools.h"

#include <stddef.h>
#include <stdint.h>

#define TCUR_POSITION_MAX 1024

/* A 64-bit FNV-1a hash of s, continuing from h (start with TCUR_HASH_INIT): what a cursor is of. */
#define TCUR_HASH_INIT 0xcbf29ce484222325ULL
uint64_t tcur_hash(uint64_t h, const char *s);

/* The cursor for tool letter kind, what it is of (hash) and where the next page starts: a heap string
 * the caller frees. */
char *tcur_make(char kind, uint64_t hash, const char *position);

/* Reads cursor (an argument, NULL: the first page) for tool letter kind and hash: ZK_OK with position
 * (TCUR_POSITION_MAX + 1 bytes) holding where the page starts ("" for the first page), or fails r with
 * a message that says the cursor is not from this tool or not for these arguments, and returns
 * ZK_EINVAL. */
int tcur_read(const char *cursor, char kind, uint64_t hash, char *position, struct tool_result *r);

/* Whether cursor (not NULL) is one of tool letter kind for hash: the pure test under tcur_read. */
int tcur_matches(const char *cursor, char kind, uint64_t hash);

/* The position of a ranked list: the count of items shown before the page, from a position
 * tcur_read gave (0 for the first page); fails r, returning ZK_EINVAL, when it is not a count at most
 * max. */
int tcur_offset(const char *position, size_t max, size_t *offset, struct tool_result *r);

/* A key position, for a list sorted by a key of several strings (list_files: repository, path, first
 * branch): the parts joined by ':', each with '%', ':', '"', '\' and control characters written as
 * %XX, so that the cursor needs no escaping between JSON quotes and a text can show it as the agent is
 * to send it back. Returns the cursor for kind, hash and that position, at most max bytes (more than
 * the 18 before the position): a longer position is cut at the end of a character or an escape. A cut
 * key is a prefix of the key it stands for and sorts at or before it, so that a page after it may show
 * that file again but never skips one. Heap string the caller frees. */
char *tcur_make_key(char kind, uint64_t hash, const char *const *parts, size_t n, size_t max);

/* Splits a key position from tcur_read (not empty) in place into n parts: parts[i] points into
 * position, "" for the parts a cut left out. Fails r, returning ZK_EINVAL, for an escape that is not
 * two hex digits (or is %00) and for more than n parts. */
int tcur_key_read(char *position, const char **parts, size_t n, struct tool_result *r);

#endif
