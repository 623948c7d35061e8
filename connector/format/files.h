/* files.h: list_files' answer, one page of the files of a file-name search as a tree, plus the same
 * facts as structuredContent. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_FILES_H
#define ZK_CONNECTOR_FORMAT_FILES_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>

/* list_files: one page of the files of a file-name search, sorted by repository and path, as a tree:
 *
 *   Query: repo:(^|/)bulk$ file:(^|/)[^/]*$
 *   9 files, showing the first 3 by path.
 *   Next page: the same arguments with "cursor":"f4a1c...e07.acme/bulk:deploy/overlays/prod/kustomization.yaml:HEAD"
 *
 *   acme/bulk @0226d547
 *   deploy/
 *     base/
 *       kustomization.yaml
 *       service.yaml
 *     overlays/prod/kustomization.yaml
 *
 * Folders end in '/', and their entries are indented two spaces a level below them. A folder with one
 * entry shares its line with it ("overlays/prod/kustomization.yaml": prod alone in overlays, the file
 * alone in prod), and from FMT_TREE_DEPTH levels down the rest of a path is one line. Each page reads
 * alone: it begins with the repository line and the folders above its first file. When the same path
 * has different versions in the branches indexed, each of its lines names its branches.
 *
 * The page is the max_files files after o->after in the sorted order (the key of the last file of the
 * page before, as o->cursor was given it; NULL for the first page), or fewer when the text would exceed
 * the budget; its first file is always
 * shown (alone on one line when its folders do not fit) as long as the cursor is at most
 * FMT_CURSOR_MAX bytes. The second line counts what Zoekt counted ("N+ files" when its limits
 * stopped the count) and says which of them the page shows when it does not show them all, adding "of
 * those Zoekt returned" when Zoekt sent fewer than it counted: the sort covers those only. When files
 * follow the page's last, o->cursor makes the cursor of the next page, which the header offers. Appends
 * to *text; *structured gets a new object the caller owns, {"query","totalFiles","shownFiles",
 * "complete","truncation":[reason names, as fmt_search's],"skippedFiles"?,"nextCursor"?,
 * "files":[{"repository","path"}]}. Returns ZK_OK, or ZK_ETOOBIG when *text has no room. */
#define FMT_TREE_DEPTH 8        /* folder levels the tree indents; deeper paths are one line from there */
struct fmt_files_opts {
    const char *query;        /* the Zoekt query that ran (echoed) */
    int max_files;            /* files to show at most */
    size_t budget;            /* bytes of text at most (at least FMT_BUDGET_MIN) */
    size_t first;             /* files of fmt_sorted's order that earlier pages showed */
    fmt_cursor_fn *cursor;    /* makes the next page's cursor; NULL: no paging */
    void *cursor_arg;
};
int fmt_files(const struct zr_search *r, const struct fmt_files_opts *o, struct buf *text, cJSON **structured,
              struct zk_err *err);

#endif
