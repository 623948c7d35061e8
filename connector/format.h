/* format.h: parsed Zoekt answers -> compact text for agents, plus the same facts as structuredContent.
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
#ifndef ZK_CONNECTOR_FORMAT_H
#define ZK_CONNECTOR_FORMAT_H

#include "buf.h"
#include "connector/zoekt/result.h"
#include "err.h"

#include <cjson/cJSON.h>
#include <time.h>

#define FMT_LINE_MAX 300            /* bytes of one line shown, before its marks "…" */
#define FMT_FILE_MATCH_LINES 10     /* matching lines shown per file */
#define FMT_BUDGET_MIN 2048         /* the smallest output budget a caller may ask for */
#define FMT_COMMIT_LEN 12           /* hex digits of an indexed commit in repository lines */
#define FMT_INDEXED_MAX 10          /* repositories an "Indexed:" line names */

/* Why a result is incomplete; several can hold at once. */
enum fmt_reason {
    FMT_R_MAX_FILES = 1 << 0,   /* more files matched than max_files */
    FMT_R_TIMEOUT = 1 << 1,     /* Zoekt's time limit ended the search */
    FMT_R_ZOEKT_LIMIT = 1 << 2, /* Zoekt's match limits skipped shards or files */
    FMT_R_SHARD_ERRORS = 1 << 3,/* shards failed or were still loading */
    FMT_R_FILE_CAP = 1 << 4,    /* some files had more matching lines than shown */
    FMT_R_BUDGET = 1 << 5,      /* the output budget cut lines or files */
    FMT_R_ZOEKT_FEWER = 1 << 6  /* Zoekt sent fewer files than max_files although more matched */
};

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
 * "shard_errors", "per_file_cap", "output_budget", "zoekt_sent_fewer"],"totalFiles","totalMatches","shownFiles","complete",
 * "note"?,"skippedFiles"?,"nextCursor"?,"files":[{"repository","path","version","language","branches","fileNameMatch",
 * "matchingLines","matches":[{"line","text"}]}]}, listing exactly the matching lines the text shows.
 * Returns ZK_OK, or ZK_ETOOBIG when *text has no room for the text. */
int fmt_search(const struct zr_search *r, const struct fmt_search_opts *o, struct buf *text, cJSON **structured,
               struct zk_err *err);

/* Writes at most max bytes of s to b, cut at a UTF-8 character boundary; a cut line ends with "…".
 * Returns ZK_OK or the buffer's ZK_ETOOBIG. */
int fmt_put_cut(struct buf *b, const char *s, size_t max);

/* An age for agents: "45s", "12m", "5h", "3d" (the largest whole unit); "0s" for a time in the future. */
void fmt_age(time_t then, time_t now, char *dst, size_t len);

/* One repository of an "Indexed:" line: its name, the commit it was indexed at ("" or NULL: none
 * known) and when (0: unknown). The caller owns the strings. */
struct fmt_indexed_repo {
    const char *name;
    const char *commit;
    time_t index_time;
};

/* Appends to b, for repos (n of them, in that order), "acme/bulk @0226d547abcd 3h ago" (at most 200
 * bytes of the name, as fmt_put_cut cuts; the commit's first FMT_COMMIT_LEN hex digits, left out when
 * there is none; the age of the index at now, or "(index time unknown)") with ", " between, at most
 * FMT_INDEXED_MAX of them, then " and N more". Returns ZK_OK or the buffer's ZK_ETOOBIG. */
int fmt_indexed(const struct fmt_indexed_repo *repos, size_t n, time_t now, struct buf *b);

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

/* Appends "closest: a, b" to b: the names of at most ZN_SUGGEST_MAX repositories of l nearest to
 * pattern (zn_suggest), or nothing when none is near; *n_shown says how many. Returns ZK_OK or the buffer's
 * ZK_ETOOBIG. */
int fmt_closest(const struct zr_list *l, const char *pattern, struct buf *b, size_t *n_shown);

/* The files of r in the order list_files and find_references show them: by repository, then path,
 * then first branch (zr_file_branch). A heap array of r->n_files indices the caller frees. */
size_t *fmt_sorted(const struct zr_search *r);

/* The longest cursor a text carries: the maxLength the tools declare for their cursor argument. */
#define FMT_CURSOR_MAX 512

/* Makes the cursor of the page that starts after file last (a heap string of at most FMT_CURSOR_MAX
 * bytes, freed by the caller). */
typedef char *fmt_cursor_fn(const struct zr_file *last, void *arg);

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

/* Whether line looks like the definition of ident, by a small per-language heuristic (for repositories
 * without symbol data): ident after one of the keywords func, type, class, def, struct, interface,
 * enum, trait, fn, union, function, #define, var, const, let, module, impl (at the start of the line or
 * after a blank, so "export const", "pub fn", "async def" count; pointer stars between are skipped;
 * after struct, union and enum only where a body, "(", "<", ":" or the end of the line follows); a Go
 * method "func (r T) ident("; "ident :=" and a shell function "ident() {" at the start of the line. C
 * and Java functions declared by their return type ("int ident(") are not recognised. */
int fmt_is_definition(const char *line, const char *ident);

#endif
