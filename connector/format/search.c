/* search.c: see search.h. */
#include "connector/format/search.h"

#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
