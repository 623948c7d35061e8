/* format.c: see format.h. */
#include "connector/format.h"

#include "connector/zoekt/reponame.h"
#include "jb.h"
#include "mem.h"
#include "rfc3339.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room kept for the one "not shown" note of the file where the budget ran out. */
#define FMT_NOTE_RESERVE 64
/* Bytes of a commit shown next to each file: enough to identify it. */
#define FMT_VERSION_LEN 8
/* Longest repository and branch names listed in full; longer ones are cut with an ellipsis. */
#define FMT_REPO_NAME_MAX 200
#define FMT_BRANCH_NAME_MAX 64
/* Room kept for the line that says how many repositories a list left out for the budget. */
#define FMT_REPOS_NOTE_RESERVE 96

/* The length of the longest prefix of s (n bytes) that fits in max bytes without splitting a UTF-8
 * character: a cut in the middle of one would hand agents invalid UTF-8. */
static size_t fmt_utf8_prefix(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    return max;
}

/* Appends at most max bytes of s, cut at a character boundary, with no mark: for fixed-width fields
 * such as the short commit shown beside a file. */
static int fmt_put_prefix(struct buf *b, const char *s, size_t max)
{
    return buf_append(b, s, fmt_utf8_prefix(s, strlen(s), max));
}

/* The mark of a cut: U+2026 HORIZONTAL ELLIPSIS. */
#define FMT_ELLIPSIS "\xe2\x80\xa6"

/* fmt_put_cut for the n bytes at s, which need not end there. */
static int fmt_put_cut_n(struct buf *b, const char *s, size_t n, size_t max)
{
    size_t keep = fmt_utf8_prefix(s, n, max);
    int rc = buf_append(b, s, keep);

    return rc || keep == n ? rc : buf_puts(b, FMT_ELLIPSIS);
}

int fmt_put_cut(struct buf *b, const char *s, size_t max)
{
    return fmt_put_cut_n(b, s, strlen(s), max);
}

/* The part of a line of n bytes that is shown, [*from, *to): at most FMT_LINE_MAX bytes, cut at
 * character boundaries. A line is shown from its start when its first match ends within those bytes
 * (or Zoekt did not say where it is); otherwise the bytes shown centre the match, or begin with it when
 * it is longer than they are, so that a match far into a long line (minified code) is shown. */
static void fmt_excerpt(const struct zr_line *l, size_t n, size_t *from, size_t *to)
{
    size_t at = l->match_start, end = l->match_end < n ? l->match_end : n, start = 0, lead;

    if (n > FMT_LINE_MAX && end > FMT_LINE_MAX && at < end) {
        lead = end - at < FMT_LINE_MAX ? (FMT_LINE_MAX - (end - at)) / 2 : 0;
        start = at > lead ? at - lead : 0;
        if (start > n - FMT_LINE_MAX)
            start = n - FMT_LINE_MAX;
        while (start < at && ((unsigned char)l->text[start] & 0xc0) == 0x80)
            start++;
    }
    *from = start;
    *to = start + fmt_utf8_prefix(l->text + start, n - start, FMT_LINE_MAX);
}

/* Appends the part of l's text fmt_excerpt shows, with "…" on each side that was cut. */
static int fmt_put_excerpt(struct buf *b, const struct zr_line *l)
{
    size_t n = strlen(l->text), from, to;
    int rc;

    fmt_excerpt(l, n, &from, &to);
    rc = from ? buf_puts(b, FMT_ELLIPSIS) : ZK_OK;
    if (!rc)
        rc = buf_append(b, l->text + from, to - from);
    return rc || to == n ? rc : buf_puts(b, FMT_ELLIPSIS);
}

/* The line that names a file: "repo/path @0226d547", with a note for a file-name match. */
static int fmt_put_name(struct buf *b, const struct zr_file *f)
{
    int rc = buf_puts(b, f->repo);

    if (!rc)
        rc = buf_putc(b, '/');
    if (!rc)
        rc = buf_puts(b, f->path);
    if (!rc && f->version[0]) {
        rc = buf_puts(b, " @");
        if (!rc)
            rc = fmt_put_prefix(b, f->version, FMT_VERSION_LEN);
    }
    if (!rc && f->name_match)
        rc = buf_puts(b, " (file name matches)");
    if (!rc && f->undecodable)
        rc = buf_puts(b, " (some text could not be decoded)");
    return rc ? rc : buf_putc(b, '\n');
}

/* One content line: "> 12: text" for a match, "  11: text" for context. */
static int fmt_put_line(struct buf *b, const struct zr_line *l)
{
    int rc = buf_append(b, l->is_match ? "> " : "  ", 2);

    if (!rc)
        rc = buf_put_int(b, l->number);
    if (!rc)
        rc = buf_putc(b, ':');
    if (!rc && l->undecodable)
        rc = buf_puts(b, " [not decodable]");
    else if (!rc && l->text[0]) {
        rc = buf_putc(b, ' ');
        if (!rc)
            rc = fmt_put_excerpt(b, l);
    }
    return rc ? rc : buf_putc(b, '\n');
}

/* The lines of f that the per-file cap lets through: up to and including the FMT_FILE_MATCH_LINES-th
 * matching line, plus the context that follows it up to the next matching line. */
static size_t fmt_capped_lines(const struct zr_file *f)
{
    size_t matches = 0;

    for (size_t i = 0; i < f->n_lines; i++) {
        if (!f->lines[i].is_match)
            continue;
        if (matches == FMT_FILE_MATCH_LINES)
            return i;
        matches++;
    }
    return f->n_lines;
}

/* Files a search shows, all returned ones (Zoekt's FileCount may be larger), whichever is fewer. */
static long long fmt_total_files(const struct zr_search *r)
{
    return r->stats.file_count > (long long)r->n_files ? r->stats.file_count : (long long)r->n_files;
}

/* A search result is formatted in three parts that know little of each other:
 *
 * - the budget (struct fmt_budget): the bytes of text left for the body, below the header at its
 *   longest; everything the body holds is charged before it is written;
 * - the layout (struct fmt_layout): which files are shown, in what order, which of them are named in
 *   the text and how many of each one's lines the text shows; it writes the body as it decides;
 * - the JSON (fmt_search_json): structuredContent, built from the layout alone with lib/jb.h, so that
 *   it lists exactly the matching lines the text shows. */

/* The bytes left for the body. FMT_NOTE_RESERVE of them are always kept back, for the one note that
 * says where the budget ran out. */
struct fmt_budget {
    size_t left;
};

/* Charges cost and returns 1 when it fits beside the reserve; returns 0, charging nothing, otherwise. */
static int fmt_budget_take(struct fmt_budget *b, size_t cost)
{
    if (cost + FMT_NOTE_RESERVE > b->left)
        return 0;
    b->left -= cost;
    return 1;
}

/* What the limits left out, as the header counts it. */
struct fmt_cuts {
    size_t lines_cut;      /* matching lines left out for the budget */
    size_t files_nameonly; /* files named without their lines for the budget */
    size_t files_capped;   /* files that had more matching lines than the per-file cap */
};

struct fmt_layout {
    size_t *order;       /* indices into the result's files, shown of them, in the order shown */
    size_t *lines_shown; /* for each position in order: how many of the file's lines the text shows */
    size_t shown;        /* files shown: the returned ones, at most max_files */
    size_t listed;       /* files named in the text: the first ones in order */
    int budget_hit;      /* once set, later files are only named */
    unsigned reasons;    /* enum fmt_reason bits */
    struct fmt_cuts cuts;
};

/* Why the list is incomplete before any text is written: Zoekt's statistics and max_files. */
static unsigned fmt_stop_reasons(const struct zr_search *r, const struct fmt_search_opts *o, size_t shown)
{
    unsigned reasons = 0;

    /* max_files is the reason only when it is what stopped the list: Zoekt may send fewer files than
     * asked for while more matched (a match budget spent on the first files drops the rest). */
    if (r->n_files > shown ||
        (shown == (size_t)o->max_files && r->stats.file_count > (long long)(o->skipped + shown)))
        reasons |= FMT_R_MAX_FILES;
    else if (r->stats.file_count > (long long)(o->skipped + shown))
        reasons |= FMT_R_ZOEKT_FEWER;
    if (r->stats.flush_reason == 1 || (o->wall_ns > 0 && r->stats.duration_ns >= o->wall_ns / 100 * 95))
        reasons |= FMT_R_TIMEOUT;
    if (r->stats.shards_skipped > 0 || r->stats.files_skipped > 0)
        reasons |= FMT_R_ZOEKT_LIMIT;
    if (r->stats.crashes > 0)
        reasons |= FMT_R_SHARD_ERRORS;
    return reasons;
}

/* Order of files: grouped by repository in the order repositories first appear, Zoekt's ranking kept
 * within each group. Fills order[0..n). */
static void fmt_order(const struct zr_search *r, size_t n, size_t *order)
{
    char *taken = mem_calloc(n, 1);
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && strcmp(r->files[j].repo, r->files[i].repo) == 0) {
                taken[j] = 1;
                order[k++] = j;
            }
    }
    free(taken);
}

/* The summary line: how many files and matches, and how many are shown. */
static int fmt_put_summary(struct buf *h, const struct zr_search *r, const struct fmt_search_opts *o,
                           const struct fmt_layout *lay)
{
    long long total_files = fmt_total_files(r), total_matches = r->stats.match_count;
    const char *lower_bound = lay->reasons & (FMT_R_TIMEOUT | FMT_R_ZOEKT_LIMIT | FMT_R_SHARD_ERRORS) ? "+" : "";

    if (o->skipped) {
        if (total_files < (long long)(o->skipped + lay->shown))
            total_files = (long long)(o->skipped + lay->shown);
        if (lay->shown == 0)
            return buf_printf(h, "No files after the %zu of earlier pages (%lld%s files matched).", o->skipped,
                              total_files, lower_bound);
        return buf_printf(h, "Files %zu to %zu of %lld%s (%lld%s matches).", o->skipped + 1, o->skipped + lay->shown,
                          total_files, lower_bound, total_matches, lower_bound);
    }
    if (r->n_files == 0)
        return buf_printf(h, "No matches%s.", lay->reasons ? " found before the search stopped" : "");
    if (!lay->reasons)
        return buf_printf(h, "%lld file%s, %lld match%s. All shown.", total_files, total_files == 1 ? "" : "s",
                          total_matches, total_matches == 1 ? "" : "es");
    return buf_printf(h, "Showing %zu of %lld%s files (%lld%s matches).", lay->shown, total_files, lower_bound,
                      total_matches, lower_bound);
}

/* " Incomplete: ...; ...." naming every reason, each clause ending in ';' (the last becomes '.'). */
static int fmt_put_incomplete(struct buf *h, const struct zr_search *r, const struct fmt_search_opts *o,
                              const struct fmt_layout *lay)
{
    const struct fmt_cuts *c = &lay->cuts;
    unsigned reasons = lay->reasons;
    int rc = buf_puts(h, " Incomplete:");

    if (!rc && (reasons & FMT_R_MAX_FILES))
        rc = buf_printf(h, " more files matched than max_files=%d;", o->max_files);
    if (!rc && (reasons & FMT_R_ZOEKT_FEWER))
        rc = buf_printf(h, " Zoekt sent %zu of the %d files asked for, although more matched;", lay->shown,
                        o->max_files);
    if (!rc && (reasons & FMT_R_TIMEOUT))
        rc = buf_puts(h, " Zoekt's time limit ended the search;");
    if (!rc && (reasons & FMT_R_ZOEKT_LIMIT))
        rc = buf_printf(h, " Zoekt stopped at its match limit (%lld shards, %lld files skipped);",
                        r->stats.shards_skipped, r->stats.files_skipped);
    if (!rc && (reasons & FMT_R_SHARD_ERRORS))
        rc = buf_printf(h, " %lld index shard%s failed or %s still loading;", r->stats.crashes,
                        r->stats.crashes == 1 ? "" : "s", r->stats.crashes == 1 ? "was" : "were");
    if (!rc && (reasons & FMT_R_FILE_CAP))
        rc = buf_printf(h, " %zu file%s had more than %d matching lines (the rest are counted, not shown);",
                        c->files_capped, c->files_capped == 1 ? "" : "s", FMT_FILE_MATCH_LINES);
    if (!rc && (reasons & FMT_R_BUDGET)) {
        rc = buf_printf(h, " the output budget of %zu bytes cut %zu matching line%s", o->budget, c->lines_cut,
                        c->lines_cut == 1 ? "" : "s");
        if (!rc && c->files_nameonly)
            rc = buf_printf(h, " (%zu files named without lines)", c->files_nameonly);
        if (!rc && lay->listed < lay->shown)
            rc = buf_printf(h, " and left out %zu files", lay->shown - lay->listed);
        if (!rc)
            rc = buf_putc(h, ';');
    }
    if (rc)
        return rc;
    h->data[h->len - 1] = '.';
    rc = buf_puts(h, "\nTo narrow: add repo, file or exclude_file, or make the query more specific");
    if (!rc && (reasons & (FMT_R_MAX_FILES | FMT_R_BUDGET)))
        rc = buf_puts(h, "; or raise max_files / max_bytes");
    return rc ? rc : buf_putc(h, '.');
}

/* The output budget a search is formatted for: the caller's, raised to FMT_BUDGET_MIN. */
static size_t fmt_search_budget(const struct fmt_search_opts *o)
{
    return o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget;
}

/* The line that hands on the cursor of the next page. The cursor is whole or useless: it is never cut,
 * and bounded by its tool (cursor.h). */
static int fmt_put_next_page(struct buf *b, const char *cursor)
{
    return buf_printf(b, "Next page: the same arguments with \"cursor\":\"%s\"\n", cursor);
}

/* The bytes fmt_put_next_page writes at most. */
#define FMT_NEXT_PAGE_MAX (sizeof("Next page: the same arguments with \"cursor\":\"\"\n") - 1 + FMT_CURSOR_MAX)

/* The header: the query, the summary and the reasons the list is incomplete, and what to do next. The
 * query echo and the note are each cut to a quarter of the budget (structuredContent has them whole),
 * so that a long query (a pattern plus fifty repository regexes) or a long note always leaves the body
 * room to name files. */
static int fmt_header(struct buf *h, const struct zr_search *r, const struct fmt_search_opts *o,
                      const struct fmt_layout *lay)
{
    size_t share = fmt_search_budget(o) / 4;
    int rc = buf_puts(h, "Query: ");

    if (!rc)
        rc = fmt_put_cut(h, o->query ? o->query : "", share);
    if (!rc)
        rc = buf_putc(h, '\n');

    if (!rc)
        rc = fmt_put_summary(h, r, o, lay);
    if (!rc && lay->reasons)
        rc = fmt_put_incomplete(h, r, o, lay);
    if (!rc)
        rc = buf_putc(h, '\n');
    /* Which commit each repository was searched at, and how old that index is: an eighth of the
     * budget, so the query, the note and this leave the body more than a third. */
    if (!rc && o->indexed && !(rc = buf_puts(h, "Indexed: ")) && !(rc = fmt_put_cut(h, o->indexed, share / 2)))
        rc = buf_putc(h, '\n');
    /* An agent that sees a match usually wants the code around it next. */
    if (!rc && r->n_files)
        rc = buf_puts(h, "More of a file: read_file with repo, path and start_line.\n");
    if (!rc && o->note && !(rc = buf_puts(h, "Note: ")) && !(rc = fmt_put_cut(h, o->note, share)))
        rc = buf_putc(h, '\n');
    if (!rc && o->next_cursor)
        rc = fmt_put_next_page(h, o->next_cursor);
    return rc;
}

/* The budget of the body: what is left of the whole once the header is counted at its longest, every
 * reason set and every count at its widest, since the header is written last but must fit first. */
static int fmt_body_budget(const struct zr_search *r, const struct fmt_search_opts *o, const struct fmt_layout *lay,
                           size_t budget, struct buf *scratch, struct fmt_budget *out)
{
    struct fmt_layout worst = *lay;
    size_t reserve;
    int rc;

    worst.listed = 0;
    worst.reasons |= FMT_R_FILE_CAP | FMT_R_BUDGET;
    worst.cuts = (struct fmt_cuts){.lines_cut = 999999, .files_nameonly = 999999, .files_capped = 999999};
    buf_reset(scratch);
    if ((rc = fmt_header(scratch, r, o, &worst)))
        return rc;
    /* The header's shares of the budget leave more than a third of it (more than FMT_NOTE_RESERVE) here. */
    reserve = scratch->len + 2;
    buf_reset(scratch);
    out->left = budget > reserve ? budget - reserve : 0;
    return ZK_OK;
}

/* The last line of a list the budget cut: how many files it left out (n bytes at most, with the
 * terminator). Returns its length. */
static size_t fmt_unlisted_note(char *out, size_t n, size_t unlisted)
{
    return (size_t)snprintf(out, n, "\n(+%zu more files not listed: output budget)\n", unlisted);
}

/* Decides how many files are named: every shown file if the names fit at all, since a name tells more
 * than a line. When they do not, the note that says so is charged too, so that it always fits. */
static int fmt_layout_names(const struct zr_search *r, struct fmt_layout *lay, struct fmt_budget *bud,
                            struct buf *scratch)
{
    char note[96];
    int rc;

    for (lay->listed = 0; lay->listed < lay->shown; lay->listed++) {
        buf_reset(scratch);
        if ((rc = fmt_put_name(scratch, &r->files[lay->order[lay->listed]])))
            return rc;
        if (!fmt_budget_take(bud, scratch->len + 1))
            break;
    }
    if (lay->listed < lay->shown) {
        size_t cost = fmt_unlisted_note(note, sizeof(note), lay->shown - lay->listed);

        lay->reasons |= FMT_R_BUDGET;
        bud->left -= cost < bud->left ? cost : bud->left;
    }
    return ZK_OK;
}

/* Writes the notes after f's lines: what the budget cut from them, then what the per-file cap left
 * out. shown_matches is the number of f's matching lines written. */
static int fmt_layout_file_notes(struct fmt_layout *lay, struct fmt_budget *bud, struct buf *body,
                                 const struct zr_file *f, size_t shown_matches)
{
    size_t capped = f->n_match_lines > FMT_FILE_MATCH_LINES ? f->n_match_lines - FMT_FILE_MATCH_LINES : 0;
    size_t showable = f->n_match_lines - capped, cut = showable > shown_matches ? showable - shown_matches : 0;
    char note[96];
    size_t n;

    if (lay->budget_hit && cut > 0) {
        lay->cuts.lines_cut += cut;
        if (shown_matches == 0)
            lay->cuts.files_nameonly++;
        else if (buf_printf(body, "(%zu matching line%s not shown: output budget)\n", cut, cut == 1 ? "" : "s"))
            return ZK_ETOOBIG;
    }
    /* The parser may have decoded only the matching lines that can be shown (zr_opts.match_lines), so
     * the count, not the lines at hand, tells whether the file had more. */
    if (!capped)
        return ZK_OK;
    lay->cuts.files_capped++;
    if (lay->budget_hit)
        return ZK_OK;
    n = (size_t)snprintf(note, sizeof(note), "(+%zu more matching line%s in this file)\n", capped,
                         capped == 1 ? "" : "s");
    if (!fmt_budget_take(bud, n)) {
        lay->budget_hit = 1;
        return ZK_OK;
    }
    return buf_append(body, note, n);
}

/* Writes f's lines while the budget lasts: up to the per-file cap, "--" between the regions of the file,
 * then its notes. Sets *n_shown to the number of f's lines written. */
static int fmt_layout_file_lines(struct fmt_layout *lay, struct fmt_budget *bud, struct buf *body,
                                 const struct zr_file *f, size_t *n_shown)
{
    size_t upto = fmt_capped_lines(f), shown_matches = 0, i;
    struct buf line;
    int rc = ZK_OK;

    buf_init(&line, FMT_LINE_MAX + 64);
    for (i = 0; i < upto && !lay->budget_hit; i++) {
        const struct zr_line *l = &f->lines[i];
        int gap = i > 0 && l->number != f->lines[i - 1].number + 1;

        buf_reset(&line);
        if ((rc = fmt_put_line(&line, l)))
            break;
        if (!fmt_budget_take(bud, line.len + (gap ? 3 : 0))) {
            lay->budget_hit = 1;
            break;
        }
        if ((gap && (rc = buf_puts(body, "--\n"))) || (rc = buf_append(body, line.data, line.len)))
            break;
        shown_matches += l->is_match;
    }
    buf_free(&line);
    *n_shown = i;
    return rc ? rc : fmt_layout_file_notes(lay, bud, body, f, shown_matches);
}

/* Lays the shown files out and writes the body: names first, so that every file is named if the names
 * fit; then, file after file, the lines the budget leaves room for. */
static int fmt_layout(const struct zr_search *r, struct fmt_layout *lay, struct fmt_budget *bud, struct buf *body,
                      struct buf *scratch)
{
    char note[96];
    int rc;

    fmt_order(r, lay->shown, lay->order);
    if ((rc = fmt_layout_names(r, lay, bud, scratch)))
        return rc;
    for (size_t pos = 0; pos < lay->listed; pos++) {
        const struct zr_file *f = &r->files[lay->order[pos]];

        if ((pos > 0 && (rc = buf_putc(body, '\n'))) || (rc = fmt_put_name(body, f)) ||
            (rc = fmt_layout_file_lines(lay, bud, body, f, &lay->lines_shown[pos])))
            return rc;
    }
    if (lay->listed < lay->shown &&
        (rc = buf_append(body, note, fmt_unlisted_note(note, sizeof(note), lay->shown - lay->listed))))
        return rc;
    if (lay->cuts.lines_cut || lay->cuts.files_nameonly)
        lay->reasons |= FMT_R_BUDGET;
    if (lay->cuts.files_capped)
        lay->reasons |= FMT_R_FILE_CAP;
    return ZK_OK;
}

/* The reasons in mask as the names structuredContent uses. */
static cJSON *fmt_reason_array(struct jb *b, unsigned mask)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {FMT_R_MAX_FILES, "max_files"},       {FMT_R_TIMEOUT, "timeout"},
        {FMT_R_ZOEKT_LIMIT, "zoekt_limit"},   {FMT_R_SHARD_ERRORS, "shard_errors"},
        {FMT_R_FILE_CAP, "per_file_cap"},     {FMT_R_BUDGET, "output_budget"},
        {FMT_R_ZOEKT_FEWER, "zoekt_sent_fewer"},
    };
    cJSON *a = jb_array(b);

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (mask & names[i].bit)
            jb_push(b, a, jb_string(b, names[i].name));
    return a;
}

/* The text of a matching line as structuredContent lists it: cut as the text cuts it. */
static void fmt_add_line_text(struct jb *b, cJSON *m, const struct zr_line *l)
{
    struct buf cut;

    if (strlen(l->text) <= FMT_LINE_MAX) {
        jb_add_str(b, m, "text", l->text);
        return;
    }
    buf_init(&cut, FMT_LINE_MAX + 2 * sizeof(FMT_ELLIPSIS));
    if (fmt_put_excerpt(&cut, l))
        abort(); /* cannot happen: the bound is the excerpt and its two marks */
    jb_add_str(b, m, "text", cut.data);
    buf_free(&cut);
}

/* One matching line as structuredContent lists it. */
static cJSON *fmt_match_json(struct jb *b, const struct zr_line *l)
{
    cJSON *m = jb_object(b);

    jb_add_num(b, m, "line", l->number);
    fmt_add_line_text(b, m, l);
    return m;
}

/* One shown file, with the matching lines among the first n_lines of its lines (those the text shows). */
static cJSON *fmt_search_file_json(struct jb *b, const struct zr_file *f, size_t n_lines)
{
    cJSON *o = jb_object(b), *branches, *matches;

    jb_add_str(b, o, "repository", f->repo);
    jb_add_str(b, o, "path", f->path);
    jb_add_str(b, o, "version", f->version);
    jb_add_str(b, o, "language", f->language);
    branches = jb_add_arr(b, o, "branches");
    for (size_t i = 0; i < f->n_branches; i++)
        jb_push(b, branches, jb_string(b, f->branches[i]));
    jb_add_bool(b, o, "fileNameMatch", f->name_match);
    jb_add_num(b, o, "matchingLines", (double)f->n_match_lines);
    if (f->url)
        jb_add_str(b, o, "url", f->url);
    matches = jb_add_arr(b, o, "matches");
    for (size_t i = 0; i < n_lines; i++)
        if (f->lines[i].is_match)
            jb_push(b, matches, fmt_match_json(b, &f->lines[i]));
    return o;
}

/* structuredContent of a laid-out search. */
static cJSON *fmt_search_json(const struct zr_search *r, const struct fmt_search_opts *o,
                              const struct fmt_layout *lay)
{
    struct jb b = {0};
    cJSON *root = jb_object(&b), *files;

    jb_add_str(&b, root, "query", o->query ? o->query : "");
    jb_add(&b, root, "truncation", fmt_reason_array(&b, lay->reasons));
    jb_add_num(&b, root, "totalFiles", (double)fmt_total_files(r));
    jb_add_num(&b, root, "totalMatches", (double)r->stats.match_count);
    jb_add_num(&b, root, "shownFiles", (double)lay->shown);
    jb_add_bool(&b, root, "complete", lay->reasons == 0);
    if (o->note)
        jb_add_str(&b, root, "note", o->note);
    if (o->skipped)
        jb_add_num(&b, root, "skippedFiles", (double)o->skipped);
    if (o->next_cursor)
        jb_add_str(&b, root, "nextCursor", o->next_cursor);
    files = jb_add_arr(&b, root, "files");
    for (size_t pos = 0; pos < lay->shown; pos++)
        jb_push(&b, files, fmt_search_file_json(&b, &r->files[lay->order[pos]], lay->lines_shown[pos]));
    return jb_finish(&b, root);
}

int fmt_search(const struct zr_search *r, const struct fmt_search_opts *o, struct buf *text, cJSON **structured,
               struct zk_err *err)
{
    size_t max_files = (size_t)(o->max_files > 0 ? o->max_files : 0);
    size_t budget = fmt_search_budget(o);
    struct fmt_layout lay = {0};
    struct fmt_budget bud;
    struct buf head, body, scratch;
    int rc;

    *structured = NULL;
    lay.shown = r->n_files < max_files ? r->n_files : max_files;
    lay.reasons = fmt_stop_reasons(r, o, lay.shown);
    lay.order = mem_calloc(lay.shown, sizeof(*lay.order));
    lay.lines_shown = mem_calloc(lay.shown, sizeof(*lay.lines_shown));
    buf_init(&head, budget + 1);
    buf_init(&body, budget + 1);
    buf_init(&scratch, budget + 4096 + FMT_LINE_MAX);

    rc = fmt_body_budget(r, o, &lay, budget, &scratch, &bud);
    if (!rc)
        rc = fmt_layout(r, &lay, &bud, &body, &scratch);
    if (!rc)
        rc = fmt_header(&head, r, o, &lay);
    if (!rc)
        rc = buf_append(text, head.data, head.len);
    if (!rc && body.len && !(rc = buf_putc(text, '\n')))
        rc = buf_append(text, body.data, body.len);
    if (rc)
        zk_err_set(err, rc, "formatted result exceeds the output buffer");
    else
        *structured = fmt_search_json(r, o, &lay);
    free(lay.order);
    free(lay.lines_shown);
    buf_free(&head);
    buf_free(&body);
    buf_free(&scratch);
    return rc;
}

int fmt_closest(const struct zr_list *l, const char *pattern, struct buf *b, size_t *n_shown)
{
    const char **names = mem_calloc(l->n_repos, sizeof(*names));
    size_t pick[ZN_SUGGEST_MAX], n;
    int rc = ZK_OK;

    for (size_t i = 0; i < l->n_repos; i++)
        names[i] = l->repos[i].name;
    n = zn_suggest(pattern, names, l->n_repos, pick, ZN_SUGGEST_MAX);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = buf_puts(b, i ? ", " : "closest: ");
        if (!rc)
            rc = fmt_put_cut(b, names[pick[i]], FMT_REPO_NAME_MAX);
    }
    free(names);
    *n_shown = n;
    return rc;
}

long fmt_count_lines(const unsigned char *content, size_t len)
{
    long n = 0;

    for (size_t i = 0; i < len; i++)
        n += content[i] == '\n';
    return n + (len > 0 && content[len - 1] != '\n');
}

/* Bytes kept free below the budget for the line that says what was not shown. */
#define FMT_READ_FOOTER_MAX 120
/* The longest path read_file's header shows in full (structuredContent has it whole): with a
 * repository name and eight branch names cut to their maxima, the header and the footer then fit in
 * FMT_BUDGET_MIN. */
#define FMT_READ_PATH_MAX 800

/* The line that names the file read: "repo/path @0226d547 (branch main), lines 1-200 of 301". */
static int fmt_file_head(struct buf *b, const struct zr_file *f, long first, long last, long total)
{
    int rc = fmt_put_cut(b, f->repo, FMT_REPO_NAME_MAX);

    if (!rc)
        rc = buf_putc(b, '/');
    if (!rc)
        rc = fmt_put_cut(b, f->path, FMT_READ_PATH_MAX);

    if (!rc && f->version[0]) {
        rc = buf_puts(b, " @");
        if (!rc)
            rc = fmt_put_prefix(b, f->version, FMT_VERSION_LEN);
    }
    for (size_t i = 0; !rc && i < f->n_branches && i < 8; i++) {
        rc = buf_puts(b, i ? ", " : " (branch ");
        if (!rc)
            rc = fmt_put_cut(b, f->branches[i], FMT_BRANCH_NAME_MAX);
        if (!rc && (i + 1 == f->n_branches || i == 7))
            rc = buf_putc(b, ')');
    }
    if (rc)
        return rc;
    /* The code host's page, for the agent to cite; bounded as weburl.h bounds it. */
    if (f->url && ((rc = buf_puts(b, ", on the code host ")) || (rc = fmt_put_cut(b, f->url, 4096))))
        return rc;
    if (!total)
        return buf_puts(b, ": the file is empty\n");
    return last >= first ? buf_printf(b, ", lines %ld-%ld of %ld\n", first, last, total)
                         : buf_printf(b, ", %ld lines\n", total);
}

/* The range of lines read_file shows: from first to *last, within the default, the cap and the file. */
static long fmt_read_last(long first, long last, long total)
{
    if (last <= 0)
        last = first + FMT_READ_DEFAULT_LINES - 1;
    if (last > first + FMT_READ_MAX_LINES - 1)
        last = first + FMT_READ_MAX_LINES - 1;
    return last > total ? total : last;
}

/* Writes lines first..last of the file's content to body, each as "N: text", while they fit in budget
 * beside the header (head_len bytes) and the footer. Returns the number of the first line not written. */
static int fmt_read_lines(const struct zr_file *f, long first, long last, size_t head_len, size_t budget,
                          struct buf *body, long *next)
{
    const unsigned char *p = f->content, *end = f->content + f->content_len;
    struct buf line;
    int rc = ZK_OK;
    long n;

    buf_init(&line, FMT_READ_LINE_MAX + 64);
    for (n = 1; n < first && p < end; n++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));

        p = nl ? nl + 1 : end;
    }
    for (; !rc && n <= last && p < end; n++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        char *clean = zr_sanitize(p, (size_t)((nl ? nl : end) - p));

        buf_reset(&line);
        rc = buf_printf(&line, "%ld:%s", n, clean[0] ? " " : "");
        if (!rc)
            rc = fmt_put_cut(&line, clean, FMT_READ_LINE_MAX);
        if (!rc)
            rc = buf_putc(&line, '\n');
        free(clean);
        if (rc || head_len + body->len + line.len + FMT_READ_FOOTER_MAX > budget)
            break;
        rc = buf_append(body, line.data, line.len);
        p = nl ? nl + 1 : end;
    }
    buf_free(&line);
    *next = n;
    return rc;
}

/* structuredContent of read_file: the file and the lines shown, first to next - 1. */
static cJSON *fmt_read_json(const struct zr_file *f, long first, long next, long total)
{
    struct jb b = {0};
    cJSON *root = jb_object(&b), *branches;

    jb_add_str(&b, root, "repository", f->repo);
    jb_add_str(&b, root, "path", f->path);
    jb_add_str(&b, root, "version", f->version);
    branches = jb_add_arr(&b, root, "branches");
    for (size_t i = 0; i < f->n_branches; i++)
        jb_push(&b, branches, jb_string(&b, f->branches[i]));
    if (f->url)
        jb_add_str(&b, root, "url", f->url);
    jb_add_num(&b, root, "startLine", (double)first);
    jb_add_num(&b, root, "endLine", (double)(next - 1));
    jb_add_num(&b, root, "totalLines", (double)total);
    jb_add_bool(&b, root, "complete", first == 1 && next > total);
    return jb_finish(&b, root);
}

int fmt_file(const struct zr_file *f, const struct fmt_file_opts *o, struct buf *text, cJSON **structured,
             struct zk_err *err)
{
    long total = fmt_count_lines(f->content, f->content_len), first = o->start_line, next = first;
    long last = fmt_read_last(first, o->end_line, total);
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget;
    struct buf head, body;
    int rc;

    *structured = NULL;
    /* The header holds the repository and path, each bounded by read_file's arguments and Zoekt's names. */
    buf_init(&head, 16384);
    buf_init(&body, budget);
    /* The header is sized for the range asked for; the lines then get what the budget leaves. */
    rc = fmt_file_head(&head, f, first, last, total);
    if (!rc)
        rc = fmt_read_lines(f, first, last, head.len, budget, &body, &next);
    if (!rc && next <= last) {
        /* The budget ended the range early: the header names the lines that are there. */
        buf_reset(&head);
        rc = fmt_file_head(&head, f, first, next - 1, total);
    }
    if (!rc)
        rc = buf_append(text, head.data, head.len);
    if (!rc && body.len)
        rc = buf_append(text, body.data, body.len);
    if (!rc && next <= total)
        rc = buf_printf(text, "(lines %ld-%ld not shown%s: call read_file with start_line %ld)\n", next, total,
                        next <= last ? " within the output budget" : "", next);
    if (rc)
        zk_err_set(err, rc, "the file's text exceeds the output buffer");
    else
        *structured = fmt_read_json(f, first, next, total);
    buf_free(&head);
    buf_free(&body);
    return rc;
}

/* What a list_repositories filter selects: by reponame.h's rules (pattern, normalised) when some name
 * matches them; otherwise, for a plain filter, the names shown that contain it, ignoring case, so that
 * "api" still finds "acme/api-gateway". */
struct fmt_filter {
    const char *pattern; /* NULL: everything */
    int by_rules;
};

static int fmt_selects(const struct fmt_filter *f, const struct zr_repo *r)
{
    if (!f->pattern)
        return 1;
    if (f->by_rules)
        return zn_matches(f->pattern, r->full_name);
    return !zn_is_glob(f->pattern) && strcasestr(r->name, f->pattern) != NULL;
}

/* The repository list's first line: how many repositories there are and how many the filter selects,
 * with the closest names when it selects none. */
static int fmt_repos_header(const struct zr_list *l, const struct fmt_filter *f, const char *filter,
                            size_t matching, int limit, struct buf *text)
{
    size_t closest = 0;
    int rc;

    if (f->pattern)
        rc = buf_printf(text, "%zu of %zu repositories match \"%s\"", matching, l->n_repos, filter);
    else
        rc = buf_printf(text, "%zu repositories indexed", l->n_repos);
    if (!rc && f->pattern && !matching) {
        rc = buf_puts(text, "; ");
        if (!rc)
            rc = fmt_closest(l, f->pattern, text, &closest);
        if (!rc && !closest)
            rc = buf_puts(text, "none has a similar name");
    }
    return rc ? rc
              : buf_printf(text, "%s.\n", matching > (size_t)limit ? " (list cut at limit; use filter to narrow)" : "");
}

/* One repository's line: "name  HEAD@0226d547abcd  indexed 2026-11-30T00:05:35Z (3h ago)" (when: its
 * index time; the age at now, unless now is 0). */
static int fmt_repo_line(struct buf *line, const struct zr_repo *r, const char *when, time_t now)
{
    char age[32];
    int rc = fmt_put_cut(line, r->name, FMT_REPO_NAME_MAX);

    for (size_t b = 0; !rc && b < r->n_branches && b < 8; b++) {
        rc = buf_puts(line, b ? "," : "  ");
        if (!rc)
            rc = fmt_put_cut(line, r->branches[b].name, FMT_BRANCH_NAME_MAX);
        if (!rc)
            rc = buf_putc(line, '@');
        if (!rc)
            rc = fmt_put_prefix(line, r->branches[b].version, FMT_COMMIT_LEN);
    }
    if (rc || !when[0] || !now)
        return rc ? rc : buf_printf(line, "  indexed %s\n", when[0] ? when : "(unknown)");
    fmt_age(r->index_time, now, age, sizeof(age));
    return buf_printf(line, "  indexed %s (%s ago)\n", when, age);
}

/* One repository as structuredContent lists it. */
static cJSON *fmt_repo_json(struct jb *b, const struct zr_repo *r, const char *when)
{
    cJSON *o = jb_object(b), *branches;

    jb_add_str(b, o, "name", r->name);
    branches = jb_add_arr(b, o, "branches");
    for (size_t i = 0; i < r->n_branches; i++) {
        cJSON *br = jb_object(b);

        jb_add_str(b, br, "name", r->branches[i].name);
        jb_add_str(b, br, "version", r->branches[i].version);
        jb_push(b, branches, br);
    }
    if (when[0])
        jb_add_str(b, o, "indexTime", when);
    else
        jb_add(b, o, "indexTime", cJSON_CreateNull());
    jb_add_num(b, o, "shards", (double)r->shards);
    return o;
}

void fmt_age(time_t then, time_t now, char *dst, size_t len)
{
    long long age = now > then ? (long long)(now - then) : 0;

    if (age >= 86400)
        snprintf(dst, len, "%lldd", age / 86400);
    else if (age >= 3600)
        snprintf(dst, len, "%lldh", age / 3600);
    else if (age >= 60)
        snprintf(dst, len, "%lldm", age / 60);
    else
        snprintf(dst, len, "%llds", age);
}

int fmt_indexed(const struct fmt_indexed_repo *repos, size_t n, time_t now, struct buf *b)
{
    size_t shown = n < FMT_INDEXED_MAX ? n : FMT_INDEXED_MAX;
    char age[32];
    int rc = ZK_OK;

    for (size_t i = 0; !rc && i < shown; i++) {
        const struct fmt_indexed_repo *r = &repos[i];

        rc = i ? buf_puts(b, ", ") : ZK_OK;
        if (!rc)
            rc = fmt_put_cut(b, r->name, FMT_REPO_NAME_MAX);
        if (!rc && r->commit && r->commit[0] && !(rc = buf_puts(b, " @")))
            rc = fmt_put_prefix(b, r->commit, FMT_COMMIT_LEN);
        fmt_age(r->index_time, now, age, sizeof(age));
        if (!rc)
            rc = r->index_time ? buf_printf(b, " %s ago", age) : buf_puts(b, " (index time unknown)");
    }
    if (!rc && n > shown)
        rc = buf_printf(b, " and %zu more", n - shown);
    return rc;
}

/* The bytes the last line of a repository list may take: the note on what was not listed, or the next
 * page's line. */
static size_t fmt_repos_reserve(const struct fmt_repos_opts *o)
{
    return FMT_REPOS_NOTE_RESERVE + (o->cursor ? FMT_NEXT_PAGE_MAX + 16 : 0);
}

int fmt_repos(const struct zr_list *l, const struct fmt_repos_opts *o, struct buf *text, cJSON **structured,
              struct zk_err *err)
{
    struct fmt_filter f = {o->filter && *o->filter ? o->filter : NULL, 0};
    size_t matching = 0, shown = 0, before = 0;
    int rc, out_of_room = 0;
    struct jb b = {0};
    cJSON *root = jb_object(&b), *arr = jb_array(&b);
    const char *last = NULL;
    struct buf line;
    char when[32];

    *structured = NULL;
    buf_init(&line, 1024);
    for (size_t i = 0; f.pattern && !f.by_rules && i < l->n_repos; i++)
        f.by_rules = zn_matches(f.pattern, l->repos[i].full_name);
    for (size_t i = 0; i < l->n_repos; i++)
        if (fmt_selects(&f, &l->repos[i])) {
            matching++;
            before += i < o->first;
        }
    rc = fmt_repos_header(l, &f, o->filter, matching, o->limit, text);
    if (!rc && before)
        rc = buf_printf(text, "After the %zu of earlier pages:\n", before);
    for (size_t i = 0; !rc && i < l->n_repos && shown < (size_t)o->limit; i++) {
        const struct zr_repo *r = &l->repos[i];

        if (i < o->first || !fmt_selects(&f, r))
            continue;
        when[0] = '\0';
        if (r->index_time)
            rfc3339_format(r->index_time, when, sizeof(when));
        buf_reset(&line);
        if ((rc = fmt_repo_line(&line, r, when, o->now)))
            break;
        /* The text must stay within the budget: stop listing (and say so, or give the cursor, in the
         * reserve) before it would not. */
        if (text->len + line.len + fmt_repos_reserve(o) > o->budget) {
            out_of_room = 1;
            break;
        }
        if ((rc = buf_append(text, line.data, line.len)))
            break;
        shown++;
        last = r->name;
        jb_push(&b, arr, fmt_repo_json(&b, r, when));
    }
    if (!rc && before + shown < matching && o->cursor && last) {
        char *cursor = o->cursor(last, o->cursor_arg);

        rc = buf_printf(text, "(%zu more) ", matching - before - shown);
        if (!rc)
            rc = fmt_put_next_page(text, cursor);
        jb_add_str(&b, root, "nextCursor", cursor);
        free(cursor);
    } else if (!rc && out_of_room) {
        rc = buf_printf(text, "(%zu more not listed: output limit; use filter)\n", matching - before - shown);
    }
    jb_add_num(&b, root, "total", (double)l->n_repos);
    jb_add_num(&b, root, "matching", (double)matching);
    jb_add_num(&b, root, "shown", (double)shown);
    jb_add(&b, root, "repositories", arr);
    if (rc) {
        zk_err_set(err, rc, "the repository list exceeds the output buffer");
        cJSON_Delete(root);
    } else {
        *structured = jb_finish(&b, root);
    }
    buf_free(&line);
    return rc;
}

/* The result fmt_sorted is sorting: qsort takes no context argument in C11, and tool calls run on
 * several threads at once, so it is thread-local. */
static _Thread_local const struct zr_search *fmt_sort_result;

static int fmt_by_repo_path(const void *a, const void *b)
{
    const struct zr_file *x = &fmt_sort_result->files[*(const size_t *)a];
    const struct zr_file *y = &fmt_sort_result->files[*(const size_t *)b];
    int c = strcmp(x->repo, y->repo);

    if (!c)
        c = strcmp(x->path, y->path);
    /* The branch settles the order of one path's contents on several branches, so that the order is the
     * same on every page find_references and list_files page through; unlike the commit, it stays when
     * the repository is indexed again between two pages. */
    return c ? c : strcmp(zr_file_branch(x), zr_file_branch(y));
}

size_t *fmt_sorted(const struct zr_search *r)
{
    size_t *order = mem_alloc((r->n_files ? r->n_files : 1) * sizeof(*order));

    for (size_t i = 0; i < r->n_files; i++)
        order[i] = i;
    fmt_sort_result = r;
    qsort(order, r->n_files, sizeof(*order), fmt_by_repo_path);
    return order;
}

/* Files Zoekt counted for a list, and whether the count is only a lower bound (its limits stopped it). */
static long long fmt_counted(const struct zr_search *r, int *lower_bound)
{
    *lower_bound = r->stats.files_skipped > 0 || r->stats.shards_skipped > 0 || r->stats.crashes > 0 ||
                   r->stats.flush_reason == 1;
    return fmt_total_files(r);
}

/* Appends line to text when it fits within budget beside the reserve for the last note. */
static int fmt_fits(const struct buf *text, const struct buf *line, size_t budget)
{
    return text->len + line->len + FMT_NOTE_RESERVE * 2 <= budget;
}

static cJSON *fmt_reasons_json(struct jb *b, int max_files, int zoekt_limit, int budget)
{
    cJSON *arr = jb_array(b);

    if (max_files)
        jb_push(b, arr, jb_string(b, "max_files"));
    if (zoekt_limit)
        jb_push(b, arr, jb_string(b, "zoekt_limit"));
    if (budget)
        jb_push(b, arr, jb_string(b, "output_budget"));
    return arr;
}

/* "\nacme/bulk @0226d547\n": the repository a run of list_files' paths belongs to. */
static int fmt_put_repo_head(struct buf *b, const struct zr_file *f)
{
    int rc = buf_putc(b, '\n');

    if (!rc)
        rc = fmt_put_cut(b, f->repo, FMT_REPO_NAME_MAX);
    if (!rc && f->version[0]) {
        rc = buf_puts(b, " @");
        if (!rc)
            rc = fmt_put_prefix(b, f->version, FMT_VERSION_LEN);
    }
    return rc ? rc : buf_putc(b, '\n');
}

/* list_files' tree (format.h). A folder with one entry shares its line with the entry, so that a chain
 * of folders alone in their parents (src/main/java/com/acme/) costs one line, and FMT_TREE_DEPTH bounds
 * the indentation, which would otherwise grow with the square of a path's depth. */

/* The folders the lines so far left open: the first depth folder lines above the last file shown, line
 * i ending ends[i] bytes into its path (just past a '/'). */
struct fmt_tree {
    const char *repo; /* the repository of the last head line; NULL before the first */
    const char *path; /* the path of the last file shown */
    size_t depth;
    size_t ends[FMT_TREE_DEPTH];
};

/* Branches a file's line names at most. */
#define FMT_TREE_BRANCHES 3
/* Bytes of one entry at most: a repository head, a line per level (indentation, FMT_LINE_MAX bytes and
 * an ellipsis, "/\n"), and the file's branches (fmt_put_branches). */
#define FMT_TREE_ENTRY_MAX                                                                                           \
    (FMT_REPO_NAME_MAX + 64 + (FMT_TREE_DEPTH + 1) * (2 * FMT_TREE_DEPTH + FMT_LINE_MAX + 8) +                     \
     (FMT_TREE_BRANCHES + 1) * (FMT_BRANCH_NAME_MAX + 8))

/* Whether g is below the folder that the first plen bytes of f's path name. */
static int fmt_tree_below(const struct zr_file *g, const struct zr_file *f, size_t plen)
{
    return strcmp(g->repo, f->repo) == 0 && strncmp(g->path, f->path, plen) == 0;
}

/* Whether the folder that the first plen bytes of file k's path name (ending in '/') has one entry: a
 * file, or a folder. The files below a folder are neighbours in the sorted list (every string between
 * two that share a prefix shares it), so they are the run around k; it has one entry when it is k alone
 * or when its first and last files are in the same folder of it. */
static int fmt_tree_single(const struct zr_search *r, const size_t *order, size_t n, size_t k, size_t plen)
{
    const struct zr_file *f = &r->files[order[k]];
    size_t first = k, last = k, len;
    const char *a, *b;

    while (first > 0 && fmt_tree_below(&r->files[order[first - 1]], f, plen))
        first--;
    while (last + 1 < n && fmt_tree_below(&r->files[order[last + 1]], f, plen))
        last++;
    if (first == last)
        return 1;
    a = r->files[order[first]].path + plen;
    b = r->files[order[last]].path + plen;
    len = strcspn(a, "/");
    return a[len] == '/' && strncmp(a, b, len + 1) == 0;
}

/* " (branch main)", " (branches dev, main and 2 more)": which version of a path a line shows, where the
 * branches indexed hold different ones. */
static int fmt_put_branches(struct buf *b, const struct zr_file *f)
{
    int rc = buf_puts(b, f->n_branches == 1 ? " (branch " : " (branches ");

    for (size_t i = 0; !rc && i < f->n_branches && i < FMT_TREE_BRANCHES; i++) {
        if (i)
            rc = buf_puts(b, ", ");
        if (!rc)
            rc = fmt_put_cut(b, f->branches[i], FMT_BRANCH_NAME_MAX);
    }
    if (!rc && f->n_branches > FMT_TREE_BRANCHES)
        rc = buf_printf(b, " and %zu more", f->n_branches - FMT_TREE_BRANCHES);
    return rc ? rc : buf_putc(b, ')');
}

/* One line of the tree, without its end: the indentation of depth, then the n bytes at s, cut. */
static int fmt_tree_line(struct buf *b, size_t depth, const char *s, size_t n)
{
    int rc = ZK_OK;

    for (size_t i = 0; !rc && i < depth; i++)
        rc = buf_append(b, "  ", 2);
    return rc ? rc : fmt_put_cut_n(b, s, n, FMT_LINE_MAX);
}

/* Whether the sorted files k and k + 1 have the same repository and path. */
static int fmt_same_path(const struct zr_search *r, const size_t *order, size_t n, size_t k)
{
    const struct zr_file *f = &r->files[order[k]], *g;

    if (k + 1 >= n)
        return 0;
    g = &r->files[order[k + 1]];
    return strcmp(f->repo, g->repo) == 0 && strcmp(f->path, g->path) == 0;
}

/* Appends the lines that show file k of the sorted list (order, n of them) below what t holds open: a
 * repository head when the repository changes, the folders above the file that are not open yet, and
 * the file's own line; updates t. From max_depth levels down the rest of the path is one line:
 * FMT_TREE_DEPTH, or 0 for the whole path on one line. */
static int fmt_tree_entry(struct buf *b, struct fmt_tree *t, const struct zr_search *r, const size_t *order,
                          size_t n, size_t k, size_t max_depth)
{
    const struct zr_file *f = &r->files[order[k]];
    const char *p = f->path, *slash;
    size_t start;
    int rc = ZK_OK;

    if (!t->repo || strcmp(t->repo, f->repo) != 0) {
        rc = fmt_put_repo_head(b, f);
        t->repo = f->repo;
        t->depth = 0;
    }
    while (t->depth && strncmp(p, t->path, t->ends[t->depth - 1]) != 0)
        t->depth--;
    t->path = p;
    start = t->depth ? t->ends[t->depth - 1] : 0;
    while (!rc) {
        slash = t->depth < max_depth ? strchr(p + start, '/') : NULL;
        /* A folder alone in its parent joins the parent's line, and a file alone in its folder the
         * folder's. */
        while (slash && fmt_tree_single(r, order, n, k, (size_t)(slash + 1 - p)))
            slash = strchr(slash + 1, '/');
        if (!slash)
            break;
        rc = fmt_tree_line(b, t->depth, p + start, (size_t)(slash - p) - start);
        if (!rc)
            rc = buf_append(b, "/\n", 2);
        start = (size_t)(slash + 1 - p);
        t->ends[t->depth++] = start;
    }
    if (!rc)
        rc = fmt_tree_line(b, t->depth, p + start, strlen(p + start));
    if (!rc && f->n_branches &&
        ((k > 0 && fmt_same_path(r, order, n, k - 1)) || fmt_same_path(r, order, n, k)))
        rc = fmt_put_branches(b, f);
    return rc ? rc : buf_putc(b, '\n');
}

/* What a page of list_files shows. */
struct fmt_files_page {
    size_t skipped;   /* files of the sorted list at or before the key the page starts after */
    size_t shown;
    long long total;  /* what Zoekt counted (fmt_counted) */
    int lower;        /* the count is a lower bound */
    unsigned reasons; /* enum fmt_reason bits: FMT_R_MAX_FILES or FMT_R_BUDGET when files follow the page,
                       * FMT_R_ZOEKT_FEWER, FMT_R_ZOEKT_LIMIT */
};

/* list_files' header: the query (cut to an eighth of the budget: it is made of the arguments, which the
 * agent has; a quarter would leave the smallest budget no room for a page's first file and its
 * cursor), what the page shows of how many, and how to ask for the next page. */
static int fmt_files_header(struct buf *h, const struct fmt_files_opts *o, const struct fmt_files_page *p,
                            const char *cursor)
{
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget;
    int rc = buf_puts(h, "Query: ");

    if (!rc)
        rc = fmt_put_cut(h, o->query, budget / 8);
    if (!rc)
        rc = buf_printf(h, "\n%lld%s file%s", p->total, p->lower ? "+" : "", p->total == 1 && !p->lower ? "" : "s");
    if (!rc && (p->skipped || (p->reasons & (FMT_R_MAX_FILES | FMT_R_BUDGET | FMT_R_ZOEKT_FEWER)))) {
        if (!p->shown && p->skipped)
            rc = buf_puts(h, ", none after those of the earlier pages");
        else if (!p->skipped)
            rc = buf_printf(h, ", showing the first %zu by path", p->shown);
        else
            rc = buf_printf(h, ", showing %zu to %zu by path", p->skipped + 1, p->skipped + p->shown);
        if (!rc && (p->reasons & FMT_R_ZOEKT_FEWER))
            rc = buf_puts(h, " of those Zoekt returned (it ranks, not sorts: narrow with path or file to see the "
                             "rest)");
    }
    if (!rc)
        rc = buf_puts(h, p->total ? "." : ". Check path, file and ref (file: *.yaml matches a name anywhere, "
                                          "deploy/*.yaml from the repository root; list_repositories shows the "
                                          "branches indexed).");
    if (!rc && (p->reasons & FMT_R_BUDGET))
        rc = buf_puts(h, " The output budget cut the page short.");
    if (!rc)
        rc = buf_putc(h, '\n');
    if (!rc && p->lower)
        rc = buf_puts(h, "Zoekt's limits stopped the count: there are more files than listed.\n");
    if (!rc && cursor)
        rc = fmt_put_next_page(h, cursor);
    return rc;
}

/* structuredContent of a page of list_files. */
static cJSON *fmt_files_json(const struct zr_search *r, const size_t *order, const struct fmt_files_opts *o,
                             const struct fmt_files_page *p, const char *cursor)
{
    struct jb b = {0};
    cJSON *root = jb_object(&b), *files;

    jb_add_str(&b, root, "query", o->query);
    jb_add_num(&b, root, "totalFiles", (double)p->total);
    jb_add_num(&b, root, "shownFiles", (double)p->shown);
    jb_add_bool(&b, root, "complete", !p->skipped && !p->reasons);
    jb_add(&b, root, "truncation", fmt_reason_array(&b, p->reasons));
    if (p->skipped)
        jb_add_num(&b, root, "skippedFiles", (double)p->skipped);
    if (cursor)
        jb_add_str(&b, root, "nextCursor", cursor);
    files = jb_add_arr(&b, root, "files");
    for (size_t k = p->skipped; k < p->skipped + p->shown; k++) {
        cJSON *file = jb_object(&b);

        jb_add_str(&b, file, "repository", r->files[order[k]].repo);
        jb_add_str(&b, file, "path", r->files[order[k]].path);
        jb_push(&b, files, file);
    }
    return jb_finish(&b, root);
}

/* Lays out the page of the files after the first p->skipped: appends to body the entries of at most want
 * files, as long as they and the line of the cursor after the last of them fit in room bytes. Sets
 * p->shown, *cursor (that cursor; NULL when no file follows the last shown) and *budget_hit (room
 * ended the page). */
static int fmt_files_layout(const struct zr_search *r, const size_t *order, const struct fmt_files_opts *o,
                            size_t want, size_t room, struct fmt_files_page *p, struct buf *body, char **cursor,
                            int *budget_hit)
{
    struct fmt_tree tree = {0};
    struct buf entry, next;
    int rc = ZK_OK;

    buf_init(&entry, FMT_TREE_ENTRY_MAX);
    buf_init(&next, FMT_NEXT_PAGE_MAX + 1);
    for (size_t k = p->skipped; !rc && !*budget_hit && p->shown < want; k++) {
        struct fmt_tree t = tree;
        char *c = NULL;

        buf_reset(&entry);
        buf_reset(&next);
        if (k + 1 < r->n_files && o->cursor) {
            c = o->cursor(&r->files[order[k]], o->cursor_arg);
            rc = fmt_put_next_page(&next, c);
        }
        if (!rc)
            rc = fmt_tree_entry(&entry, &t, r, order, r->n_files, k, FMT_TREE_DEPTH);
        /* A page's first file is shown whatever its folders cost: alone on one line when they do not
         * fit (format.h says why that always fits). */
        if (!rc && !p->shown && entry.len + next.len > room) {
            t = tree;
            buf_reset(&entry);
            rc = fmt_tree_entry(&entry, &t, r, order, r->n_files, k, 0);
        }
        if (!rc && body->len + entry.len + next.len > room)
            *budget_hit = 1;
        else if (!rc)
            rc = buf_append(body, entry.data, entry.len);
        if (rc || *budget_hit) {
            free(c);
            continue;
        }
        tree = t;
        free(*cursor);
        *cursor = c;
        p->shown++;
    }
    buf_free(&entry);
    buf_free(&next);
    return rc;
}

int fmt_files(const struct zr_search *r, const struct fmt_files_opts *o, struct buf *text, cJSON **structured,
              struct zk_err *err)
{
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget, want;
    size_t *order = fmt_sorted(r);
    struct fmt_files_page p = {0}, widest;
    struct buf head, body;
    char *cursor = NULL;
    int budget_hit = 0, rc;

    *structured = NULL;
    p.total = fmt_counted(r, &p.lower);
    p.skipped = o->first < r->n_files ? o->first : r->n_files;
    want = r->n_files - p.skipped < (size_t)o->max_files ? r->n_files - p.skipped : (size_t)o->max_files;
    buf_init(&head, budget);
    buf_init(&body, budget);
    /* The header is written last, when the page is known, but its room is kept first: at its longest,
     * every clause in and every count at its widest; the layout keeps the room of the cursor's line. */
    widest = p;
    widest.shown = want;
    widest.reasons = FMT_R_BUDGET | FMT_R_ZOEKT_FEWER;
    rc = fmt_files_header(&head, o, &widest, NULL);
    if (!rc)
        rc = fmt_files_layout(r, order, o, want, budget - head.len, &p, &body, &cursor, &budget_hit);
    if (p.skipped + p.shown < r->n_files)
        p.reasons |= budget_hit ? FMT_R_BUDGET : FMT_R_MAX_FILES;
    if ((long long)r->n_files < p.total)
        p.reasons |= FMT_R_ZOEKT_FEWER;
    if (p.lower)
        p.reasons |= FMT_R_ZOEKT_LIMIT;
    buf_reset(&head);
    if (!rc)
        rc = fmt_files_header(&head, o, &p, cursor);
    if (!rc)
        rc = buf_append(text, head.data, head.len);
    if (!rc)
        rc = buf_append(text, body.data ? body.data : "", body.len);
    if (rc)
        zk_err_set(err, rc, "the file list exceeds the output buffer");
    else
        *structured = fmt_files_json(r, order, o, &p, cursor);
    buf_free(&head);
    buf_free(&body);
    free(cursor);
    free(order);
    return rc;
}

/* Whether c can be part of an identifier (what \b and git grep -w take as a word character). */
static int fmt_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether s starts with ident as a whole word. */
static int fmt_word_at(const char *s, const char *ident, size_t n)
{
    return strncmp(s, ident, n) == 0 && !fmt_word_char(s[n]);
}

/* C's struct, union and enum name a type where it is used too (struct node *next;): there, only a
 * body, a Rust tuple struct or generics, a C++ base list or the end of the line make a definition. */
static int fmt_tag_keyword(const char *kw)
{
    return strcmp(kw, "struct ") == 0 || strcmp(kw, "union ") == 0 || strcmp(kw, "enum ") == 0;
}

static int fmt_tag_defined(const char *after)
{
    while (*after == ' ')
        after++;
    return *after == '\0' || *after == '{' || *after == '(' || *after == '<' || *after == ':';
}

int fmt_is_definition(const char *line, const char *ident)
{
    /* A keyword that introduces a definition when ident follows it: Go, C, C++, Java, JavaScript,
     * TypeScript, Python, Rust, shell. */
    static const char *const keywords[] = {"func ",   "type ",  "class ",     "def ",  "struct ", "interface ",
                                           "enum ",   "trait ", "fn ",        "union ", "function ", "#define ",
                                           "var ",    "const ", "let ",       "module ", "impl ", NULL};
    size_t n = strlen(ident);
    const char *s = line, *p;

    while (*s == ' ' || *s == '\t')
        s++;
    /* Go's short declaration (IDENT := ...) and a shell function (IDENT() {) at the start of a line. */
    if (fmt_word_at(s, ident, n)) {
        p = s + n;
        while (*p == ' ')
            p++;
        if (strncmp(p, ":=", 2) == 0 || strncmp(p, "() {", 4) == 0 || strncmp(p, "(){", 3) == 0)
            return 1;
    }
    /* A Go method: func (recv T) IDENT( */
    if (strncmp(s, "func (", 6) == 0 && (p = strchr(s + 6, ')')) != NULL) {
        while (*++p == ' ')
            ;
        if (fmt_word_at(p, ident, n) && p[n] == '(')
            return 1;
    }
    for (size_t k = 0; keywords[k]; k++) {
        size_t kl = strlen(keywords[k]);

        /* The keyword starts the line or follows a blank (export, pub, async, static before it). */
        for (p = strstr(s, keywords[k]); p; p = strstr(p + 1, keywords[k])) {
            const char *q = p + kl;

            if (p != s && p[-1] != ' ' && p[-1] != '\t')
                continue;
            while (*q == ' ' || *q == '*')
                q++;
            if (fmt_word_at(q, ident, n) && (!fmt_tag_keyword(keywords[k]) || fmt_tag_defined(q + n)))
                return 1;
        }
    }
    return 0;
}

/* Per repository of a find_references answer: the files and matching lines it has. */
static int fmt_refs_counts(const struct zr_search *r, const size_t *order, size_t budget, struct buf *text,
                           struct jb *b, cJSON *arr, int *budget_hit)
{
    struct buf line;
    int rc = ZK_OK;

    buf_init(&line, FMT_REPO_NAME_MAX + 96);
    for (size_t k = 0; !rc && k < r->n_files;) {
        const char *repo = r->files[order[k]].repo;
        size_t files = 0, lines = 0;
        cJSON *o;

        for (; k < r->n_files && strcmp(r->files[order[k]].repo, repo) == 0; k++, files++)
            lines += r->files[order[k]].n_match_lines;
        buf_reset(&line);
        rc = buf_puts(&line, "  ");
        if (!rc)
            rc = fmt_put_cut(&line, repo, FMT_REPO_NAME_MAX);
        if (!rc)
            rc = buf_printf(&line, ": %zu line%s in %zu file%s\n", lines, lines == 1 ? "" : "s", files,
                            files == 1 ? "" : "s");
        if (rc)
            break;
        if (!fmt_fits(text, &line, budget)) {
            *budget_hit = 1;
            break;
        }
        rc = buf_append(text, line.data, line.len);
        o = jb_object(b);
        jb_add_str(b, o, "repository", repo);
        jb_add_num(b, o, "files", (double)files);
        jb_add_num(b, o, "matchingLines", (double)lines);
        jb_push(b, arr, o);
    }
    buf_free(&line);
    return rc;
}

/* Whether the definitions in repository repo come from ctags: the sym: answer came, and the repository
 * has symbol data (where it has none, the answer holds none of its definitions either). */
static int fmt_refs_ctags(const struct fmt_refs_opts *o, const char *repo)
{
    const struct zr_repo *x = o->defs && o->list ? zr_list_find(o->list, repo) : NULL;

    return x && x->has_symbols;
}

/* The file of the sym: answer defs that is f (the same repository, path and first branch), or NULL. */
static const struct zr_file *fmt_defs_of(const struct zr_search *defs, const struct zr_file *f)
{
    for (size_t i = 0; i < defs->n_files; i++) {
        const struct zr_file *d = &defs->files[i];

        if (strcmp(d->repo, f->repo) == 0 && strcmp(d->path, f->path) == 0 &&
            strcmp(zr_file_branch(d), zr_file_branch(f)) == 0)
            return d;
    }
    return NULL;
}

/* Whether ctags found a definition of symbol on line of d (a file of the sym: answer, or NULL). */
static int fmt_ctags_defines(const struct zr_file *d, int line, const char *symbol)
{
    for (size_t i = 0; d && i < d->n_symbols; i++)
        if (d->symbols[i].line == line && strcmp(d->symbols[i].sym, symbol) == 0)
            return 1;
    return 0;
}

/* One file of a find_references answer: its name, then its matching lines, "D" marking the definitions
 * of o->symbol. Sets *fitted when the whole block fit the budget. */
static int fmt_refs_file(const struct zr_file *f, const struct fmt_refs_opts *o, size_t budget, struct buf *text,
                         struct jb *b, cJSON *files, int *fitted)
{
    cJSON *of = jb_object(b), *matches = jb_array(b);
    int ctags = fmt_refs_ctags(o, f->repo);
    const struct zr_file *d = ctags ? fmt_defs_of(o->defs, f) : NULL;
    size_t shown = 0;
    struct buf block;
    int rc;

    *fitted = 0;
    /* The name is written in full, as search results write it (a path can be a few KiB long). */
    buf_init(&block, (FMT_FILE_MATCH_LINES + 2) * (FMT_LINE_MAX + 32) + 65536);
    rc = buf_putc(&block, '\n');
    if (!rc)
        rc = fmt_put_name(&block, f);
    for (size_t i = 0; !rc && i < f->n_lines && shown < FMT_FILE_MATCH_LINES; i++) {
        const struct zr_line *l = &f->lines[i];
        int def;
        cJSON *m;

        if (!l->is_match)
            continue;
        def = ctags ? fmt_ctags_defines(d, l->number, o->symbol) : fmt_is_definition(l->text, o->symbol);
        rc = buf_printf(&block, "%c %d: ", def ? 'D' : '>', l->number);
        if (!rc)
            rc = fmt_put_excerpt(&block, l);
        if (!rc)
            rc = buf_putc(&block, '\n');
        m = jb_object(b);
        jb_add_num(b, m, "line", l->number);
        fmt_add_line_text(b, m, l);
        jb_add_bool(b, m, "definition", def);
        jb_push(b, matches, m);
        shown++;
    }
    if (!rc && f->n_match_lines > shown)
        rc = buf_printf(&block, "(+%zu more matching lines in this file)\n", f->n_match_lines - shown);
    if (!rc && fmt_fits(text, &block, budget)) {
        rc = buf_append(text, block.data, block.len);
        *fitted = 1;
        jb_add_str(b, of, "repository", f->repo);
        jb_add_str(b, of, "path", f->path);
        jb_add_str(b, of, "version", f->version);
        jb_add_num(b, of, "matchingLines", (double)f->n_match_lines);
        jb_add_str(b, of, "definitionSource", ctags ? "ctags" : "keywords");
        jb_add(b, of, "matches", matches);
        jb_push(b, files, of);
    } else {
        cJSON_Delete(of);
        cJSON_Delete(matches);
    }
    buf_free(&block);
    return rc;
}

/* What "D" marks, for the header: ctags' definitions in the n_ctags of the n repositories where they
 * apply, keyword guesses in the others. */
static int fmt_put_definition_source(struct buf *b, size_t n_ctags, size_t n)
{
    if (n_ctags == 0)
        return buf_puts(b, "D: keyword guesses at definitions");
    if (n_ctags == n)
        return buf_puts(b, "D: ctags definitions");
    return buf_printf(b, "D: ctags definitions (%zu repositor%s), keyword guesses elsewhere", n_ctags,
                      n_ctags == 1 ? "y" : "ies");
}

int fmt_refs(const struct zr_search *r, const struct fmt_refs_opts *o, struct buf *text, cJSON **structured,
             struct zk_err *err)
{
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget, shown = 0, lines = 0, repos = 0;
    size_t first = o->first < r->n_files ? o->first : r->n_files, left = r->n_files - first, n_ctags = 0;
    size_t want = left < (size_t)o->max_files ? left : (size_t)o->max_files;
    /* Room for the next page's cursor is kept whenever the page can end before the files do. */
    size_t room = o->cursor && left > 1 ? budget - FMT_NEXT_PAGE_MAX : budget;
    size_t *order = fmt_sorted(r);
    int lower, budget_hit = 0, fitted = 1, rc;
    long long total = fmt_counted(r, &lower), unshown;
    const struct zr_file *last = NULL;
    char *next = NULL;
    struct jb b = {0};
    cJSON *root = jb_object(&b), *counts = jb_array(&b), *files = jb_array(&b);

    *structured = NULL;
    for (size_t k = 0; k < r->n_files; k++) {
        const char *repo = r->files[order[k]].repo;

        lines += r->files[order[k]].n_match_lines;
        if (k == 0 || strcmp(repo, r->files[order[k - 1]].repo) != 0) {
            repos++;
            n_ctags += (size_t)fmt_refs_ctags(o, repo);
        }
    }
    rc = buf_puts(text, "Query: ");
    if (!rc)
        rc = fmt_put_cut(text, o->query, budget / 4);
    if (!rc)
        rc = buf_printf(text, "\n%s is used on %zu line%s in %lld%s file%s of %zu repositor%s (text search: "
                              "whole word, case-sensitive; ",
                        o->symbol, lines, lines == 1 ? "" : "s", total, lower ? "+" : "", total == 1 ? "" : "s",
                        repos, repos == 1 ? "y" : "ies");
    if (!rc)
        rc = fmt_put_definition_source(text, n_ctags, repos);
    if (!rc)
        rc = buf_puts(text, ").\n");
    if (!rc && r->n_files < (size_t)total)
        rc = buf_printf(text, "Counts cover the %zu files Zoekt returned of %lld: narrow with repo or file.\n",
                        r->n_files, total);
    if (!rc && lower)
        rc = buf_puts(text, "Zoekt's limits stopped the count: there are more uses than counted.\n");
    if (!rc && o->note && !(rc = buf_puts(text, "Note: ")) && !(rc = fmt_put_cut(text, o->note, budget / 4)))
        rc = buf_putc(text, '\n');
    if (!rc && first)
        rc = buf_printf(text, "Earlier pages showed %zu file%s (by repository and path); this one goes on from "
                              "there.\n", first, first == 1 ? "" : "s");
    if (!rc && r->n_files)
        rc = fmt_refs_counts(r, order, room, text, &b, counts, &budget_hit);
    for (size_t k = first; !rc && !budget_hit && k < first + want; k++) {
        rc = fmt_refs_file(&r->files[order[k]], o, room, text, &b, files, &fitted);
        budget_hit = !fitted;
        if (fitted) {
            shown++;
            last = &r->files[order[k]];
        }
    }
    /* The next page starts after the last file shown, so that none is skipped; a page that showed none
     * hands on no cursor, which would lead back to the same page. */
    if (!rc && o->cursor && last && first + shown < r->n_files)
        next = o->cursor(last, o->cursor_arg);
    unshown = total - (long long)(first + shown);
    if (!rc && unshown > 0)
        rc = buf_printf(text, "\n(%lld more file%s not shown%s: %s)\n", unshown, unshown == 1 ? "" : "s",
                        budget_hit ? " within the output budget" : "",
                        next ? "see the next page, or narrow with repo or file"
                             : "raise max_files, or narrow with repo or file");
    if (!rc && next)
        rc = fmt_put_next_page(text, next);
    jb_add_str(&b, root, "query", o->query);
    jb_add_str(&b, root, "symbol", o->symbol);
    jb_add_num(&b, root, "totalFiles", (double)total);
    jb_add_num(&b, root, "totalMatchingLines", (double)lines);
    jb_add_num(&b, root, "shownFiles", (double)shown);
    jb_add_bool(&b, root, "complete", unshown == 0 && !lower);
    jb_add(&b, root, "truncation",
           fmt_reasons_json(&b, (long long)(first + want) < total, lower, budget_hit));
    if (o->note)
        jb_add_str(&b, root, "note", o->note);
    if (first)
        jb_add_num(&b, root, "skippedFiles", (double)first);
    if (next)
        jb_add_str(&b, root, "nextCursor", next);
    jb_add(&b, root, "repositories", counts);
    jb_add(&b, root, "files", files);
    if (rc) {
        zk_err_set(err, rc, "the references exceed the output buffer");
        cJSON_Delete(root);
    } else {
        *structured = jb_finish(&b, root);
    }
    free(next);
    free(order);
    return rc;
}

/* ---- find_symbol --------------------------------------------------------------------------------- */

/* The text of line number of f, or "" when Zoekt sent no such line. */
static const char *fmt_line_text(const struct zr_file *f, int number)
{
    for (size_t i = 0; i < f->n_lines; i++)
        if (f->lines[i].number == number)
            return f->lines[i].text;
    return "";
}

/* One file's definitions as a block, appended to text when it fits within budget (*fitted). */
static int fmt_symbols_file(const struct zr_file *f, size_t budget, struct buf *text, struct jb *b, cJSON *files,
                            int *fitted)
{
    cJSON *of = jb_object(b), *defs = jb_array(b);
    size_t shown = 0;
    struct buf block;
    int rc;

    *fitted = 0;
    buf_init(&block, (FMT_FILE_MATCH_LINES + 2) * (3 * FMT_LINE_MAX + 64) + 65536);
    rc = buf_putc(&block, '\n');
    if (!rc)
        rc = fmt_put_name(&block, f);
    for (size_t i = 0; !rc && i < f->n_symbols && shown < FMT_FILE_MATCH_LINES; i++) {
        const struct zr_symbol *y = &f->symbols[i];
        const char *line = fmt_line_text(f, y->line);
        cJSON *d;

        rc = buf_printf(&block, "%d ", y->line);
        if (!rc && y->kind[0] && !(rc = fmt_put_cut(&block, y->kind, 64)))
            rc = buf_putc(&block, ' ');
        if (!rc)
            rc = fmt_put_cut(&block, y->sym, FMT_LINE_MAX);
        if (!rc && y->parent[0]) {
            rc = buf_puts(&block, " (in ");
            if (!rc && y->parent_kind[0] && !(rc = fmt_put_cut(&block, y->parent_kind, 64)))
                rc = buf_putc(&block, ' ');
            if (!rc)
                rc = fmt_put_cut(&block, y->parent, FMT_LINE_MAX);
            if (!rc)
                rc = buf_putc(&block, ')');
        }
        if (!rc)
            rc = buf_puts(&block, ": ");
        if (!rc)
            rc = fmt_put_cut(&block, line, FMT_LINE_MAX);
        if (!rc)
            rc = buf_putc(&block, '\n');
        d = jb_object(b);
        jb_add_num(b, d, "line", y->line);
        jb_add_str(b, d, "symbol", y->sym);
        jb_add_str(b, d, "kind", y->kind);
        jb_add_str(b, d, "parent", y->parent);
        jb_add_str(b, d, "parentKind", y->parent_kind);
        jb_add_str(b, d, "text", line);
        jb_push(b, defs, d);
        shown++;
    }
    if (!rc && f->n_symbols > shown)
        rc = buf_printf(&block, "(+%zu more definitions in this file)\n", f->n_symbols - shown);
    if (!rc && fmt_fits(text, &block, budget)) {
        rc = buf_append(text, block.data, block.len);
        *fitted = 1;
        jb_add_str(b, of, "repository", f->repo);
        jb_add_str(b, of, "path", f->path);
        jb_add_str(b, of, "version", f->version);
        jb_add_str(b, of, "language", f->language);
        jb_add(b, of, "definitions", defs);
        jb_push(b, files, of);
    } else {
        cJSON_Delete(of);
        cJSON_Delete(defs);
    }
    buf_free(&block);
    return rc;
}

int fmt_symbols(const struct zr_search *r, const struct fmt_symbols_opts *o, struct buf *text, cJSON **structured,
                struct zk_err *err)
{
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget, shown = 0, defs = 0, repos = 0;
    size_t *order = fmt_sorted(r);
    size_t want = r->n_files < (size_t)o->max_files ? r->n_files : (size_t)o->max_files;
    int lower, budget_hit = 0, fitted = 1, rc;
    struct jb b = {0};
    cJSON *root = jb_object(&b), *files = jb_array(&b);

    *structured = NULL;
    (void)fmt_counted(r, &lower);
    lower |= o->more;
    for (size_t k = 0; k < r->n_files; k++) {
        defs += r->files[order[k]].n_symbols;
        repos += k == 0 || strcmp(r->files[order[k]].repo, r->files[order[k - 1]].repo) != 0;
    }
    rc = buf_puts(text, "Query: ");
    if (!rc)
        rc = fmt_put_cut(text, o->query, budget / 4);
    if (!rc)
        rc = buf_printf(text, "\n%zu%s definition%s in %zu file%s of %zu repositor%s.\n", defs, lower ? "+" : "",
                        defs == 1 ? "" : "s", r->n_files, r->n_files == 1 ? "" : "s", repos,
                        repos == 1 ? "y" : "ies");
    if (!rc && lower)
        rc = buf_puts(text, "Zoekt's limits stopped the search: there are more; narrow with repo, file or kind.\n");
    if (!rc && o->note && !(rc = buf_puts(text, "Note: ")) && !(rc = fmt_put_cut(text, o->note, budget / 4)))
        rc = buf_putc(text, '\n');
    for (size_t k = 0; !rc && !budget_hit && k < want; k++) {
        rc = fmt_symbols_file(&r->files[order[k]], budget, text, &b, files, &fitted);
        budget_hit = !fitted;
        shown += (size_t)fitted;
    }
    if (!rc && shown < r->n_files)
        rc = buf_printf(text, "\n(%zu more file%s not shown%s: raise max_files, or narrow with repo, file or kind)\n",
                        r->n_files - shown, r->n_files - shown == 1 ? "" : "s",
                        budget_hit ? " within the output budget" : "");
    jb_add_str(&b, root, "query", o->query);
    jb_add_num(&b, root, "totalFiles", (double)r->n_files);
    jb_add_num(&b, root, "totalDefinitions", (double)defs);
    jb_add_num(&b, root, "shownFiles", (double)shown);
    jb_add_bool(&b, root, "complete", shown == r->n_files && !lower);
    jb_add(&b, root, "truncation", fmt_reasons_json(&b, want < r->n_files, lower, budget_hit));
    if (o->note)
        jb_add_str(&b, root, "note", o->note);
    jb_add(&b, root, "files", files);
    if (rc) {
        zk_err_set(err, rc, "the definitions exceed the output buffer");
        cJSON_Delete(root);
    } else {
        *structured = jb_finish(&b, root);
    }
    free(order);
    return rc;
}
