/* symbols.h: find_symbol's answer, the definitions a sym: search found, file by file with their kinds
 * and scopes, plus the same facts as structuredContent. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_SYMBOLS_H
#define ZK_CONNECTOR_FORMAT_SYMBOLS_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>

/* find_symbol: symbol definitions (the SymbolInfo of a sym: search), file by file sorted by repository
 * and path, each with its kind and scope, then the line:
 *
 *   Query: sym:^Grow$ case:yes
 *   1 definition in 1 file of 1 repository.
 *
 *   acme/x/a.go @0226d547
 *   5 func Grow (in struct a.Widget): func (w *Widget) Grow(n int) int {
 *
 * At most FMT_FILE_MATCH_LINES definitions per file. Only the symbols of r's files are shown (the
 * caller drops those of other kinds first). The text stays within budget: files that do not fit are
 * left out and counted in a last line. *structured gets {"query","totalFiles","totalDefinitions",
 * "shownFiles","complete","truncation","note"?,"files":[{"repository","path","version","language",
 * "definitions":[{"line","symbol","kind","parent","parentKind","text"}]}]}. Returns ZK_OK, or
 * ZK_ETOOBIG when *text has no room. */
struct fmt_symbols_opts {
    const char *query; /* the Zoekt query that ran (echoed) */
    int max_files;     /* files shown at most */
    size_t budget;     /* bytes of text at most (at least FMT_BUDGET_MIN) */
    int more;          /* Zoekt matched more files than r holds (its count is then a lower bound) */
    const char *note;  /* a "Note: " line after the header, or NULL */
};
int fmt_symbols(const struct zr_search *r, const struct fmt_symbols_opts *o, struct buf *text, cJSON **structured,
                struct zk_err *err);

#endif
