/* repos.h: list_repositories' answer, the indexed repositories a filter selects, one line each, a page
 * at a time, plus the same facts as structuredContent. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_REPOS_H
#define ZK_CONNECTOR_FORMAT_REPOS_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>
#include <time.h>

struct fmt_repos_opts {
    const char *filter;      /* a repository argument normalised by zn_normalize, or NULL */
    int limit;               /* lines at most */
    size_t budget;           /* bytes of text at most (at least FMT_BUDGET_MIN) */
    time_t now;              /* for the ages; 0: none shown */
    size_t first;            /* repositories of l (sorted by name) before the page: earlier pages' */
    /* Makes the cursor of the page after the repository named last (a heap string of at most
     * FMT_CURSOR_MAX bytes, freed by fmt_repos); NULL: no paging. */
    char *(*cursor)(const char *last, void *arg);
    void *cursor_arg;
};

/* Formats a repository list: a header ("3 repositories indexed." or "1 of 3 repositories match "x".")
 * then one line per repository: "name  HEAD@0226d547abcd  indexed 2026-11-30T00:05:35Z (3h ago)" (the
 * age at now; without it when now is 0). filter selects names by reponame.h's rules; when none matches
 * them, a plain filter selects the names that contain it, ignoring case; when nothing is selected, the
 * header names the closest repositories (fmt_closest). limit caps the lines, and so does budget:
 * *text, with what it held before, stays within budget bytes, and a last line says how many were not
 * listed, or gives the next page's cursor. Appends to *text; *structured gets a new object the caller
 * owns, {"total","matching","shown","repositories":[{"name","branches":[{"name","version"}],
 * "indexTime","shards"}],"nextCursor"?}. Returns ZK_OK, or ZK_ETOOBIG when *text has no room for the
 * header. */
int fmt_repos(const struct zr_list *l, const struct fmt_repos_opts *o, struct buf *text, cJSON **structured,
              struct zk_err *err);

#endif
