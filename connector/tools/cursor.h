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
#include "connector/zoekt/result.h"

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

/* The position of a list sorted by a key string (strcmp order, each key once): the key of the last
 * item shown, so that the next page starts strictly after it however the list changed meanwhile.
 *
 * The key is written as it is but for '%', '"', '\', '#' and control bytes, which become %XX, so that
 * the cursor prints on one line and copies into a JSON string unchanged. A key too long for the cursor
 * keeps the longest prefix that fits (cut between characters), then '#' and the 16 hex digits of
 * tcur_hash over the whole key: the page then starts after the item with that key among those that
 * share the prefix, or, when none has it any more, at the first of them (an item shown again rather
 * than one skipped). */

/* The cursor for tool letter kind and hash whose page starts after key: a heap string the caller frees,
 * at most max bytes long (at least 64: a tool's declared maxLength of its cursor argument). */
char *tcur_make_key(char kind, uint64_t hash, const char *key, size_t max);

/* A key position as read back. */
struct tcur_key {
    int set;                           /* 0: the first page (no position) */
    char key[TCUR_POSITION_MAX + 1];   /* the key, or the prefix of it the position kept */
    size_t len;                        /* strlen(key) */
    int cut;                           /* key is a prefix; hash identifies the whole key */
    uint64_t hash;
};

/* Reads a position tcur_read gave as a key position (k->set 0 for the first page); fails r, returning
 * ZK_EINVAL, when it is not one tcur_make_key wrote. */
int tcur_key_read(const char *position, struct tcur_key *k, struct tool_result *r);

/* Where the page after k starts among keys (n of them, sorted by strcmp, each once): the index of the
 * first key after it (0 for the first page, n when none is). */
size_t tcur_key_start(const struct tcur_key *k, const char *const *keys, size_t n);

/* The pages of a file list in fmt_sorted's order (list_files, find_references): a file's key is its
 * repository, path and first branch, joined by a byte below any they hold, so that strcmp orders keys
 * as fmt_sorted orders files. */
struct tcur_files {
    char kind;     /* the tool's letter */
    uint64_t hash; /* what the pages are of */
};

/* The cursor of the page after file last: an fmt_cursor_fn, with arg a struct tcur_files. */
char *tcur_files_cursor(const struct zr_file *last, void *arg);

/* How many files of res, in fmt_sorted's order, earlier pages showed: those up to after's key. */
size_t tcur_files_first(const struct zr_search *res, const struct tcur_key *after);

#endif
