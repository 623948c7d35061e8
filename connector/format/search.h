/* search.h: search_code's answer, a search result as compact text for agents plus the same facts as
 * structuredContent.
 *
 * Pure: no I/O. The search text looks like this (docs/connector.md has the rules):
 *
 *   Query: needle repo:(^|/)alpha$
 *   2 files, 5 matches. All shown.
 *   Indexed: alpha @0226d547cbd2 3h ago
 *
 *   alpha/README.md @0226d547
 *   > 3: A small C project. Say hello to the needle.
 *
 *   alpha/src/util.c @0226d547
 *     11:
 *   > 12: int needle_count(const char *haystack, char needle) {
 *   --
 *   > 16:         if (*haystack == needle) n++;
 *   (+2 more matching lines in this file)
 *
 * "> N:" marks a matching line, "  N:" a context line, "--" a gap between regions of one file. Lines
 * longer than FMT_LINE_MAX bytes are cut, marked "…" where cut: from their start, or around their
 * match when it lies further in (minified code). The header names every reason the list is
 * incomplete and how to narrow the search. The text never exceeds the output budget: the query echo and
 * the note are cut to a quarter of it each, every returned file is named if the names fit, and lines are
 * cut before any file is left out. */
#ifndef ZK_CONNECTOR_FORMAT_SEARCH_H
#define ZK_CONNECTOR_FORMAT_SEARCH_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>

struct fmt_search_opts {
    const char *query;     /* the Zoekt query that ran (echoed) */
    int max_files;         /* files to show; Zoekt's FileCount tells whether more matched */
    size_t budget;         /* bytes of text at most (at least FMT_BUDGET_MIN) */
    long long wall_ns;     /* MaxWallTime sent to Zoekt, to recognise a timed-out search; 0: unknown */
    const char *note;      /* an extra header line (a lint hint, "repository not indexed"), or NULL */
    const char *indexed;   /* what "Indexed: " says, the repositories of the answer (fmt_indexed), or NULL */
    size_t skipped;        /* files earlier pages showed: r starts after them, its counts cover them too */
    const char *next_cursor; /* the cursor of the next page, or NULL when this is the last */
};

/* Formats a search result. On success appends the text to *text (a buffer the caller initialised with
 * a bound of at least budget + 1) and sets *structured to a new object owned by the caller
 * (cJSON_Delete): {"query","truncation":[reason names: "max_files", "timeout", "zoekt_limit",
 * "shard_errors", "per_file_cap", "output_budget", "zoekt_sent_fewer"],"totalFiles","totalMatches",
 * "shownFiles","complete","note"?,"skippedFiles"?,"nextCursor"?,"files":[{"repository","path","version",
 * "language","branches","fileNameMatch","matchingLines","matches":[{"line","text"}]}]}, listing exactly
 * the matching lines the text shows.
 * Returns ZK_OK, or ZK_ETOOBIG when *text has no room for the text. */
int fmt_search(const struct zr_search *r, const struct fmt_search_opts *o, struct buf *text, cJSON **structured,
               struct zk_err *err);

#endif
