/* read.h: read_file's answer, a range of lines of one file as compact text for agents, plus the same
 * facts as structuredContent. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_READ_H
#define ZK_CONNECTOR_FORMAT_READ_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>

/* read_file: lines shown when the caller names no end, the most one call shows, and the bytes of one
 * line shown before it is cut (longer than search results': the agent asked for this text). */
#define FMT_READ_DEFAULT_LINES 200
#define FMT_READ_MAX_LINES 500
#define FMT_READ_LINE_MAX 1000

struct fmt_file_opts {
    long start_line; /* the first line wanted, 1-based */
    long end_line;   /* the last line wanted; 0: FMT_READ_DEFAULT_LINES lines. At most
                      * FMT_READ_MAX_LINES lines are shown whatever it says. */
    size_t budget;   /* bytes of text at most (at least FMT_BUDGET_MIN) */
};

/* The number of lines of a file's content: a final line without a newline counts, an empty file has
 * none. */
long fmt_count_lines(const unsigned char *content, size_t len);

/* Formats lines of a whole file (f->content, which must be set) for read_file:
 *
 *   acme/bulk/bulk.go @e99c1c0c (branch HEAD), lines 1-4 of 4
 *   1: package bulk
 *   2:
 *
 * Lines are sanitised like search results and cut at FMT_READ_LINE_MAX bytes; when the range, the
 * line cap or the budget leaves lines of the file out, a last line says which and how to read on:
 * "(lines 201-301 not shown: call read_file with start_line 201)". o->start_line must be at most the
 * file's line count (or 1 for an empty file). Appends to *text; *structured gets a new object the
 * caller owns, {"repository","path","version","branches","startLine","endLine","totalLines",
 * "complete"}. Returns ZK_OK, or ZK_ETOOBIG when *text has no room for the text. */
int fmt_file(const struct zr_file *f, const struct fmt_file_opts *o, struct buf *text, cJSON **structured,
             struct zk_err *err);

#endif
