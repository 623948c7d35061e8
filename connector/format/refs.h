/* refs.h: find_references' answer, the uses of one identifier counted per repository and shown file by
 * file with its definitions marked, plus the same facts as structuredContent; and the keyword heuristic
 * that marks definitions in repositories without symbol data. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_REFS_H
#define ZK_CONNECTOR_FORMAT_REFS_H

#include "buf.h"
#include "connector/format/text.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>

/* find_references: uses of one identifier, first counted per repository, then file by file (sorted as
 * fmt_sorted sorts them) with up to FMT_FILE_MATCH_LINES lines each:
 *
 *   Query: content:"\bBulk\b" case:yes
 *   Bulk is used on 3 lines in 2 files of 1 repository (text search: ...; D: ctags definitions).
 *     acme/bulk: 3 lines in 2 files
 *
 *   acme/bulk/bulk.go @0226d547
 *   D 4: func Bulk() {}
 *
 * "D" marks a definition, ">" any other use. In a repository that has symbol data (o->list says so) and
 * when the sym: answer came (o->defs), a definition is a line where ctags found the symbol, and only
 * that; elsewhere it is a line fmt_is_definition takes for one. The header says which applies. Counts
 * cover every file Zoekt returned, on every page (the text says when it counted more); the lines shown
 * are those of the page, the files from o->first on. The text stays within budget: files that do not
 * fit are left out and counted in a last line, and when files Zoekt returned remain after the last one
 * shown, o->cursor makes the cursor of the next page, which a last line hands on as search_code's does.
 * *structured gets {"query","symbol","totalFiles","totalMatchingLines","shownFiles","complete",
 * "truncation","note"?,"skippedFiles"?,"nextCursor"?,"repositories":[{"repository","files",
 * "matchingLines"}],"files":[{"repository","path","version","matchingLines","definitionSource":
 * "ctags"|"keywords","matches":[{"line","text","definition"}]}]}. Returns ZK_OK, or ZK_ETOOBIG when
 * *text has no room. */
struct fmt_refs_opts {
    const char *query;  /* the Zoekt query that ran (echoed) */
    const char *symbol; /* the identifier searched */
    int max_files;      /* files whose lines are shown at most */
    size_t budget;      /* bytes of text at most (at least FMT_BUDGET_MIN) */
    const char *note;   /* a "Note: " line after the header (a repository that is not indexed), or NULL */
    const struct zr_search *defs; /* the answer of a sym: search for symbol with the same filters, whose
                                   * SymbolInfo lines are the definitions; NULL: none came */
    const struct zr_list *list;   /* the repositories, which tell which have symbol data; NULL: unknown */
    size_t first;                 /* files of fmt_sorted's order that earlier pages showed */
    fmt_cursor_fn *cursor;        /* makes the next page's cursor; NULL: no paging */
    void *cursor_arg;
};
int fmt_refs(const struct zr_search *r, const struct fmt_refs_opts *o, struct buf *text, cJSON **structured,
             struct zk_err *err);

/* Whether line looks like the definition of ident, by a small per-language heuristic (for repositories
 * without symbol data): ident after one of the keywords func, type, class, def, struct, interface,
 * enum, trait, fn, union, function, #define, var, const, let, module, impl (at the start of the line or
 * after a blank, so "export const", "pub fn", "async def" count; pointer stars between are skipped;
 * after struct, union and enum only where a body, "(", "<", ":" or the end of the line follows); a Go
 * method "func (r T) ident("; "ident :=" and a shell function "ident() {" at the start of the line. C
 * and Java functions declared by their return type ("int ident(") are not recognised. */
int fmt_is_definition(const char *line, const char *ident);

#endif
