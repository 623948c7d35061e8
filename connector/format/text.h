/* text.h: what every renderer of connector/format/ shares.
 *
 * connector/format/ turns parsed Zoekt answers (connector/zoekt/result.h) into compact text for agents,
 * plus the same facts as structuredContent, one module per kind of answer: search.h (search_code),
 * repos.h (list_repositories), read.h (read_file), files.h (list_files), refs.h (find_references) and
 * symbols.h (find_symbol). All of it is pure: no I/O.
 *
 * This module holds what more than one of them needs, so that every answer cuts, names, orders and
 * counts the same way: the limits of the text, cutting text at UTF-8 boundaries, the line that names a
 * file and the part of a long line that is shown, ages and the "Indexed:" line, the closest repository
 * names, the order of files that pages follow, how many files Zoekt counted, why a list is incomplete,
 * and the line that hands on the next page's cursor. The first part below is used by the tools too; the
 * second only by the renderers. */
#ifndef ZK_CONNECTOR_FORMAT_TEXT_H
#define ZK_CONNECTOR_FORMAT_TEXT_H

#include "buf.h"
#include "connector/zoekt/result.h"
#include "jb.h"

#include <cjson/cJSON.h>
#include <time.h>

#define FMT_LINE_MAX 300            /* bytes of one line shown, before its marks "…" */
#define FMT_FILE_MATCH_LINES 10     /* matching lines shown per file */
#define FMT_BUDGET_MIN 2048         /* the smallest output budget a caller may ask for */
#define FMT_COMMIT_LEN 12           /* hex digits of an indexed commit in repository lines */
#define FMT_INDEXED_MAX 10          /* repositories an "Indexed:" line names */

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

/* ---- for the renderers ----------------------------------------------------------------------------- */

/* Room kept for the one "not shown" note of the file where the budget ran out. */
#define FMT_NOTE_RESERVE 64
/* Bytes of a commit shown next to each file: enough to identify it. */
#define FMT_VERSION_LEN 8
/* Longest repository and branch names listed in full; longer ones are cut with an ellipsis. */
#define FMT_REPO_NAME_MAX 200
#define FMT_BRANCH_NAME_MAX 64

/* Appends at most max bytes of s, cut at a character boundary, with no mark: for fixed-width fields
 * such as the short commit shown beside a file. */
int fmt_put_prefix(struct buf *b, const char *s, size_t max);

/* fmt_put_cut for the n bytes at s, which need not end there. */
int fmt_put_cut_n(struct buf *b, const char *s, size_t n, size_t max);

/* Appends the part of l's text fmt_excerpt (text.c) shows, at most FMT_LINE_MAX bytes, with "…" on
 * each side that was cut. */
int fmt_put_excerpt(struct buf *b, const struct zr_line *l);

/* The text of a matching line as structuredContent lists it: cut as the text cuts it. Adds it to m as
 * "text". */
void fmt_add_line_text(struct jb *b, cJSON *m, const struct zr_line *l);

/* The line that names a file: "repo/path @0226d547", with a note for a file-name match. */
int fmt_put_name(struct buf *b, const struct zr_file *f);

/* The line that hands on the cursor of the next page. The cursor is whole or useless: it is never cut,
 * and bounded by its tool (cursor.h). */
int fmt_put_next_page(struct buf *b, const char *cursor);

/* The bytes fmt_put_next_page writes at most. */
#define FMT_NEXT_PAGE_MAX (sizeof("Next page: the same arguments with \"cursor\":\"\"\n") - 1 + FMT_CURSOR_MAX)

/* The files a search matched as far as is known: Zoekt's FileCount, or the files it returned when they
 * are more. */
long long fmt_total_files(const struct zr_search *r);

/* Files Zoekt counted for a list, and whether the count is only a lower bound (its limits stopped it). */
long long fmt_counted(const struct zr_search *r, int *lower_bound);

/* Whether line fits after text within budget, beside the reserve for the last note. */
int fmt_fits(const struct buf *text, const struct buf *line, size_t budget);

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

/* The reasons in mask as the names structuredContent uses. */
cJSON *fmt_reason_array(struct jb *b, unsigned mask);

#endif
