/* format.c: see format.h. */
#include "connector/format.h"

#include "connector/zoekt/reponame.h"
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

int fmt_put_cut(struct buf *b, const char *s, size_t max)
{
    size_t n = strlen(s), keep = fmt_utf8_prefix(s, n, max);

    if (buf_append(b, s, keep))
        return ZK_ENOMEM;
    return keep == n ? ZK_OK : buf_puts(b, "\xe2\x80\xa6");
}

cJSON *fmt_reason_array(unsigned mask)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {FMT_R_MAX_FILES, "max_files"},       {FMT_R_TIMEOUT, "timeout"},
        {FMT_R_ZOEKT_LIMIT, "zoekt_limit"},   {FMT_R_SHARD_ERRORS, "shard_errors"},
        {FMT_R_FILE_CAP, "per_file_cap"},     {FMT_R_BUDGET, "output_budget"},
    };
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; a && i < sizeof(names) / sizeof(names[0]); i++)
        if ((mask & names[i].bit) && !cJSON_AddItemToArray(a, cJSON_CreateString(names[i].name))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
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
            rc = fmt_put_cut(b, l->text, FMT_LINE_MAX);
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

struct fmt_run {
    struct buf body;
    size_t remaining;        /* body bytes still free */
    int budget_hit;          /* once set, later files are only named */
    size_t lines_cut;        /* matching lines left out for the budget */
    size_t files_nameonly;   /* files named without their lines for the budget */
    size_t files_capped;     /* files that had more matching lines than the per-file cap */
};

/* Adds item to o under key, a string constant that the tree points to instead of copying: a search
 * answer has hundreds of members, and a copy of each key was a fifth of formatting it. Takes ownership
 * of item, also when it fails; returns 1, or 0 when out of memory (item NULL, or not added). */
static int fmt_add(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObjectCS(o, key, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

static cJSON *fmt_file_json(const struct zr_file *f)
{
    cJSON *o = cJSON_CreateObject(), *br = cJSON_CreateArray();
    int added;

    if (!o || !br)
        goto fail;
    for (size_t i = 0; i < f->n_branches; i++)
        if (!cJSON_AddItemToArray(br, cJSON_CreateString(f->branches[i])))
            goto fail;
    if (!fmt_add(o, "repository", cJSON_CreateString(f->repo)) || !fmt_add(o, "path", cJSON_CreateString(f->path)) ||
        !fmt_add(o, "version", cJSON_CreateString(f->version)) ||
        !fmt_add(o, "language", cJSON_CreateString(f->language)))
        goto fail;
    added = fmt_add(o, "branches", br);
    br = NULL;
    if (!added || !fmt_add(o, "fileNameMatch", cJSON_CreateBool(f->name_match)) ||
        !fmt_add(o, "matchingLines", cJSON_CreateNumber((double)f->n_match_lines)) ||
        !fmt_add(o, "matches", cJSON_CreateArray()))
        goto fail;
    return o;
fail:
    cJSON_Delete(br);
    cJSON_Delete(o);
    return NULL;
}

/* Renders the lines of one file into run->body within the budget, and the matches into jmatches. */
static int fmt_file_lines(struct fmt_run *run, const struct zr_file *f, cJSON *jmatches)
{
    size_t upto = fmt_capped_lines(f), shown_matches = 0;
    struct buf line;
    int rc = ZK_OK;

    buf_init(&line, FMT_LINE_MAX + 64);
    for (size_t i = 0; i < upto && !run->budget_hit; i++) {
        const struct zr_line *l = &f->lines[i];
        int gap = i > 0 && l->number != f->lines[i - 1].number + 1;
        size_t cost;

        buf_reset(&line);
        if ((rc = fmt_put_line(&line, l)))
            goto out;
        cost = line.len + (gap ? 3 : 0);
        if (cost + FMT_NOTE_RESERVE > run->remaining) {
            run->budget_hit = 1;
            break;
        }
        if ((gap && (rc = buf_puts(&run->body, "--\n"))) || (rc = buf_append(&run->body, line.data, line.len)))
            goto out;
        run->remaining -= cost;
        if (l->is_match) {
            cJSON *m = cJSON_CreateObject();
            struct buf cut;

            if (!m || !cJSON_AddItemToArray(jmatches, m)) {
                cJSON_Delete(m);
                rc = ZK_ENOMEM;
                goto out;
            }
            /* Most lines are shorter than the cut: only a longer one is copied to be cut. */
            buf_init(&cut, FMT_LINE_MAX + 8);
            rc = strlen(l->text) > FMT_LINE_MAX ? fmt_put_cut(&cut, l->text, FMT_LINE_MAX) : ZK_OK;
            if (rc || !fmt_add(m, "line", cJSON_CreateNumber(l->number)) ||
                !fmt_add(m, "text", cJSON_CreateString(cut.data ? cut.data : l->text))) {
                buf_free(&cut);
                rc = ZK_ENOMEM;
                goto out;
            }
            buf_free(&cut);
            shown_matches++;
        }
    }
    if (run->budget_hit && shown_matches < f->n_match_lines) {
        size_t cut = (f->n_match_lines > FMT_FILE_MATCH_LINES ? FMT_FILE_MATCH_LINES : f->n_match_lines) -
                     shown_matches;

        run->lines_cut += cut;
        if (shown_matches == 0 && cut > 0)
            run->files_nameonly++;
        else if (cut > 0 && (rc = buf_printf(&run->body, "(%zu matching line%s not shown: output budget)\n", cut,
                                                 cut == 1 ? "" : "s")))
            goto out;
    }
    /* The parser may have decoded only the matching lines that can be shown (zr_opts.match_lines), so
     * the count, not the lines at hand, tells whether the file had more. */
    if (f->n_match_lines > FMT_FILE_MATCH_LINES) {
        run->files_capped++;
        if (!run->budget_hit &&
            (rc = buf_printf(&run->body, "(+%zu more matching line%s in this file)\n",
                             f->n_match_lines - FMT_FILE_MATCH_LINES,
                             f->n_match_lines - FMT_FILE_MATCH_LINES == 1 ? "" : "s")))
            goto out;
    }
out:
    buf_free(&line);
    return rc;
}

/* Order of files: grouped by repository in the order repositories first appear, Zoekt's ranking kept
 * within each group. Returns a heap array of n indices. */
static size_t *fmt_order(const struct zr_search *r, size_t n)
{
    size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), k = 0;
    char *taken = calloc(n ? n : 1, 1);

    if (!idx || !taken) {
        free(idx);
        free(taken);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && strcmp(r->files[j].repo, r->files[i].repo) == 0) {
                taken[j] = 1;
                idx[k++] = j;
            }
    }
    free(taken);
    return idx;
}

/* The summary and the reasons the list is incomplete. */
static int fmt_header(struct buf *h, const struct zr_search *r, const struct fmt_search_opts *o, size_t shown,
                      size_t listed, unsigned reasons, const struct fmt_run *run)
{
    long long total_files = r->stats.file_count > (long long)r->n_files ? r->stats.file_count : (long long)r->n_files;
    long long total_matches = r->stats.match_count;
    const char *lower_bound = reasons & (FMT_R_TIMEOUT | FMT_R_ZOEKT_LIMIT | FMT_R_SHARD_ERRORS) ? "+" : "";
    const char *sep = " ";
    int rc;

    rc = buf_printf(h, "Query: %s\n", o->query ? o->query : "");
    if (rc)
        return rc;
    if (r->n_files == 0)
        rc = buf_printf(h, "No matches%s.", reasons ? " found before the search stopped" : "");
    else if (!reasons)
        rc = buf_printf(h, "%lld file%s, %lld match%s. All shown.", total_files, total_files == 1 ? "" : "s",
                        total_matches, total_matches == 1 ? "" : "es");
    else
        rc = buf_printf(h, "Showing %zu of %lld%s files (%lld%s matches).", shown, total_files, lower_bound,
                        total_matches, lower_bound);
    if (!rc && reasons)
        rc = buf_puts(h, " Incomplete:");
    if (!rc && (reasons & FMT_R_MAX_FILES))
        rc = buf_printf(h, "%smore files matched than max_files=%d;", sep, o->max_files);
    if (!rc && (reasons & FMT_R_TIMEOUT))
        rc = buf_printf(h, "%sZoekt's time limit ended the search;", sep);
    if (!rc && (reasons & FMT_R_ZOEKT_LIMIT))
        rc = buf_printf(h, "%sZoekt stopped at its match limit (%lld shards, %lld files skipped);", sep,
                        r->stats.shards_skipped, r->stats.files_skipped);
    if (!rc && (reasons & FMT_R_SHARD_ERRORS))
        rc = buf_printf(h, "%s%lld index shard%s failed or %s still loading;", sep, r->stats.crashes,
                        r->stats.crashes == 1 ? "" : "s", r->stats.crashes == 1 ? "was" : "were");
    if (!rc && (reasons & FMT_R_FILE_CAP))
        rc = buf_printf(h, "%s%zu file%s had more than %d matching lines (the rest are counted, not shown);", sep,
                        run->files_capped, run->files_capped == 1 ? "" : "s", FMT_FILE_MATCH_LINES);
    if (!rc && (reasons & FMT_R_BUDGET)) {
        rc = buf_printf(h, "%sthe output budget of %zu bytes cut %zu matching line%s", sep, o->budget,
                        run->lines_cut, run->lines_cut == 1 ? "" : "s");
        if (!rc && run->files_nameonly)
            rc = buf_printf(h, " (%zu files named without lines)", run->files_nameonly);
        if (!rc && listed < shown)
            rc = buf_printf(h, " and left out %zu files", shown - listed);
        if (!rc)
            rc = buf_putc(h, ';');
    }
    if (!rc && reasons) {
        /* Replace the last ';' with '.'. */
        h->data[h->len - 1] = '.';
        rc = buf_puts(h, "\nTo narrow: add repo, file or exclude_file, or make the query more specific");
        if (!rc && (reasons & (FMT_R_MAX_FILES | FMT_R_BUDGET)))
            rc = buf_puts(h, "; or raise max_files / max_bytes");
        if (!rc)
            rc = buf_putc(h, '.');
    }
    if (!rc)
        rc = buf_putc(h, '\n');
    /* An agent that sees a match usually wants the code around it next. */
    if (!rc && r->n_files)
        rc = buf_puts(h, "More of a file: read_file with repo, path and start_line.\n");
    if (!rc && o->note)
        rc = buf_printf(h, "Note: %s\n", o->note);
    return rc;
}

int fmt_search(const struct zr_search *r, const struct fmt_search_opts *o, struct buf *text, cJSON **structured,
               struct zk_err *err)
{
    size_t shown = r->n_files < (size_t)(o->max_files > 0 ? o->max_files : 0) ? r->n_files : (size_t)o->max_files;
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget;
    size_t reserve, body_budget;
    size_t names = 0, listed = 0, *order = NULL;
    struct fmt_run run;
    struct buf head, name;
    unsigned reasons = 0;
    cJSON *root = NULL, *jfiles = NULL;
    int rc = ZK_OK;

    *structured = NULL;
    memset(&run, 0, sizeof(run));
    buf_init(&run.body, budget + 1);
    buf_init(&head, budget + 1);
    buf_init(&name, 4096 + FMT_LINE_MAX);

    if (r->n_files > shown || r->stats.file_count > (long long)shown)
        reasons |= FMT_R_MAX_FILES;
    if (r->stats.flush_reason == 1 || (o->wall_ns > 0 && r->stats.duration_ns >= o->wall_ns / 100 * 95))
        reasons |= FMT_R_TIMEOUT;
    if (r->stats.shards_skipped > 0 || r->stats.files_skipped > 0)
        reasons |= FMT_R_ZOEKT_LIMIT;
    if (r->stats.crashes > 0)
        reasons |= FMT_R_SHARD_ERRORS;

    /* The header is written last but counted first: size it for the worst case, every reason set. */
    {
        struct fmt_run worst = {.lines_cut = 999999, .files_nameonly = 999999, .files_capped = 999999};

        if ((rc = fmt_header(&head, r, o, shown, 0, reasons | FMT_R_FILE_CAP | FMT_R_BUDGET, &worst)))
            goto out;
        reserve = head.len + 2;
        buf_reset(&head);
    }
    body_budget = budget > reserve + 256 ? budget - reserve : 256;
    order = fmt_order(r, shown);
    root = cJSON_CreateObject();
    if (!order || !root || !cJSON_AddStringToObject(root, "query", o->query ? o->query : "") ||
        !(jfiles = cJSON_CreateArray())) {
        rc = ZK_ENOMEM;
        goto out;
    }

    /* First the names: every returned file is named if the names fit at all; only then lines. */
    for (listed = 0; listed < shown; listed++) {
        buf_reset(&name);
        if ((rc = fmt_put_name(&name, &r->files[order[listed]])))
            goto out_json;
        if (names + name.len + 1 + FMT_NOTE_RESERVE > body_budget)
            break;
        names += name.len + 1;
    }
    run.remaining = body_budget - names;
    if (listed < shown)
        reasons |= FMT_R_BUDGET;

    for (size_t i = 0; i < shown; i++) {
        const struct zr_file *f = &r->files[order[i]];
        cJSON *jf = fmt_file_json(f);

        if (!jf || !cJSON_AddItemToArray(jfiles, jf)) {
            cJSON_Delete(jf);
            rc = ZK_ENOMEM;
            goto out_json;
        }
        if (i >= listed)
            continue;
        if ((i > 0 && (rc = buf_putc(&run.body, '\n'))) || (rc = fmt_put_name(&run.body, f)))
            goto out_json;
        if ((rc = fmt_file_lines(&run, f, cJSON_GetObjectItemCaseSensitive(jf, "matches"))))
            goto out_json;
    }
    if (listed < shown && (rc = buf_printf(&run.body, "\n(+%zu more files not listed: output budget)\n",
                                           shown - listed)))
        goto out_json;
    if (run.lines_cut || run.files_nameonly)
        reasons |= FMT_R_BUDGET;
    if (run.files_capped)
        reasons |= FMT_R_FILE_CAP;

    if ((rc = fmt_header(&head, r, o, shown, listed, reasons, &run)))
        goto out_json;
    if ((rc = buf_append(text, head.data, head.len)))
        goto out_json;
    if (run.body.len && ((rc = buf_putc(text, '\n')) || (rc = buf_append(text, run.body.data, run.body.len))))
        goto out_json;

    {
        long long total_files =
            r->stats.file_count > (long long)r->n_files ? r->stats.file_count : (long long)r->n_files;
        cJSON *reasons_json = fmt_reason_array(reasons);

        if (!reasons_json || !cJSON_AddItemToObject(root, "truncation", reasons_json) ||
            !cJSON_AddNumberToObject(root, "totalFiles", (double)total_files) ||
            !cJSON_AddNumberToObject(root, "totalMatches", (double)r->stats.match_count) ||
            !cJSON_AddNumberToObject(root, "shownFiles", (double)shown) ||
            !cJSON_AddBoolToObject(root, "complete", reasons == 0) ||
            (o->note && !cJSON_AddStringToObject(root, "note", o->note))) {
            if (reasons_json && !cJSON_GetObjectItemCaseSensitive(root, "truncation"))
                cJSON_Delete(reasons_json);
            rc = ZK_ENOMEM;
            goto out_json;
        }
    }
    if (!cJSON_AddItemToObject(root, "files", jfiles)) {
        rc = ZK_ENOMEM;
        goto out_json;
    }
    jfiles = NULL;
    *structured = root;
    root = NULL;
    goto out;

out_json:
    cJSON_Delete(jfiles);
out:
    if (rc)
        zk_err_set(err, rc, rc == ZK_ETOOBIG ? "formatted result exceeds the output buffer"
                                             : "out of memory formatting the result");
    cJSON_Delete(root);
    free(order);
    buf_free(&run.body);
    buf_free(&head);
    buf_free(&name);
    return rc;
}

int fmt_closest(const struct zr_list *l, const char *pattern, struct buf *b, size_t *n_shown)
{
    const char **names = l->n_repos ? malloc(l->n_repos * sizeof(*names)) : NULL;
    size_t pick[ZN_SUGGEST_MAX], n;
    int rc = ZK_OK;

    *n_shown = 0;
    if (l->n_repos && !names)
        return ZK_ENOMEM;
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

/* The line that names the file read: "repo/path @0226d547 (branch main), lines 1-200 of 301". */
static int fmt_file_head(struct buf *b, const struct zr_file *f, long first, long last, long total)
{
    int rc = buf_printf(b, "%s/%s", f->repo, f->path);

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
    if (!total)
        return buf_puts(b, ": the file is empty\n");
    return last >= first ? buf_printf(b, ", lines %ld-%ld of %ld\n", first, last, total)
                         : buf_printf(b, ", %ld lines\n", total);
}

int fmt_file(const struct zr_file *f, const struct fmt_file_opts *o, struct buf *text, cJSON **structured,
             struct zk_err *err)
{
    const unsigned char *p = f->content, *end = f->content + f->content_len;
    long total = fmt_count_lines(f->content, f->content_len), first = o->start_line, last = o->end_line, n;
    size_t budget = o->budget < FMT_BUDGET_MIN ? FMT_BUDGET_MIN : o->budget;
    cJSON *root = NULL, *branches;
    struct buf head, body, line;
    int rc;

    *structured = NULL;
    /* The header holds the repository and path, each bounded by read_file's arguments and Zoekt's names. */
    buf_init(&head, 16384);
    buf_init(&body, budget);
    buf_init(&line, FMT_READ_LINE_MAX + 64);
    if (last <= 0)
        last = first + FMT_READ_DEFAULT_LINES - 1;
    if (last > first + FMT_READ_MAX_LINES - 1)
        last = first + FMT_READ_MAX_LINES - 1;
    if (last > total)
        last = total;

    /* The header is sized for the range asked for; the lines then get what the budget leaves. */
    rc = fmt_file_head(&head, f, first, last, total);
    for (n = 1; n < first && p < end; n++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));

        p = nl ? nl + 1 : end;
    }
    for (; !rc && n <= last && p < end; n++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        char *clean = zr_sanitize(p, (size_t)((nl ? nl : end) - p));

        if (!clean) {
            rc = ZK_ENOMEM;
            break;
        }
        buf_reset(&line);
        rc = buf_printf(&line, "%ld:%s", n, clean[0] ? " " : "");
        if (!rc)
            rc = fmt_put_cut(&line, clean, FMT_READ_LINE_MAX);
        if (!rc)
            rc = buf_putc(&line, '\n');
        free(clean);
        if (rc || head.len + body.len + line.len + FMT_READ_FOOTER_MAX > budget)
            break;
        rc = buf_append(&body, line.data, line.len);
        p = nl ? nl + 1 : end;
    }
    if (!rc && n <= last) {
        /* The budget ended the range early: the header names the lines that are there. */
        buf_reset(&head);
        rc = fmt_file_head(&head, f, first, n - 1, total);
    }
    if (!rc)
        rc = buf_append(text, head.data, head.len);
    if (!rc && body.len)
        rc = buf_append(text, body.data, body.len);
    if (!rc && n <= total)
        rc = buf_printf(text, "(lines %ld-%ld not shown%s: call read_file with start_line %ld)\n", n, total,
                        n <= last ? " within the output budget" : "", n);
    if (rc)
        goto out;
    root = cJSON_CreateObject();
    if (!root || !cJSON_AddStringToObject(root, "repository", f->repo) ||
        !cJSON_AddStringToObject(root, "path", f->path) || !cJSON_AddStringToObject(root, "version", f->version) ||
        !(branches = cJSON_AddArrayToObject(root, "branches")))
        goto nomem;
    for (size_t b = 0; b < f->n_branches; b++)
        if (!cJSON_AddItemToArray(branches, cJSON_CreateString(f->branches[b])))
            goto nomem;
    if (!cJSON_AddNumberToObject(root, "startLine", (double)first) ||
        !cJSON_AddNumberToObject(root, "endLine", (double)(n - 1)) ||
        !cJSON_AddNumberToObject(root, "totalLines", (double)total) ||
        !cJSON_AddBoolToObject(root, "complete", first == 1 && n > total))
        goto nomem;
    *structured = root;
    root = NULL;
    goto out;
nomem:
    rc = ZK_ENOMEM;
out:
    if (rc)
        zk_err_set(err, rc, "out of memory formatting a file");
    cJSON_Delete(root);
    buf_free(&head);
    buf_free(&body);
    buf_free(&line);
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

int fmt_repos(const struct zr_list *l, const char *filter, int limit, struct buf *text, cJSON **structured,
              struct zk_err *err)
{
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    struct fmt_filter f = {filter && *filter ? filter : NULL, 0};
    size_t matching = 0, shown = 0, closest = 0;
    int rc = ZK_OK, out_of_room = 0;
    struct buf line;
    char when[32];

    *structured = NULL;
    buf_init(&line, 1024);
    if (!root || !arr) {
        rc = ZK_ENOMEM;
        goto out;
    }
    for (size_t i = 0; f.pattern && !f.by_rules && i < l->n_repos; i++)
        f.by_rules = zn_matches(f.pattern, l->repos[i].full_name);
    for (size_t i = 0; i < l->n_repos; i++)
        matching += fmt_selects(&f, &l->repos[i]);
    if (f.pattern)
        rc = buf_printf(text, "%zu of %zu repositories match \"%s\"", matching, l->n_repos, filter);
    else
        rc = buf_printf(text, "%zu repositories indexed", l->n_repos);
    if (!rc && f.pattern && !matching) {
        rc = buf_puts(text, "; ");
        if (!rc)
            rc = fmt_closest(l, f.pattern, text, &closest);
        if (!rc && !closest)
            rc = buf_puts(text, "none has a similar name");
    }
    if (!rc)
        rc = buf_printf(text, "%s.\n", matching > (size_t)limit ? " (list cut at limit; use filter to narrow)" : "");
    for (size_t i = 0; !rc && i < l->n_repos && shown < (size_t)limit; i++) {
        const struct zr_repo *r = &l->repos[i];
        cJSON *jr, *jb;

        if (!fmt_selects(&f, r))
            continue;
        buf_reset(&line);
        rc = fmt_put_cut(&line, r->name, FMT_REPO_NAME_MAX);
        for (size_t b = 0; !rc && b < r->n_branches && b < 8; b++) {
            rc = buf_puts(&line, b ? "," : "  ");
            if (!rc)
                rc = fmt_put_cut(&line, r->branches[b].name, FMT_BRANCH_NAME_MAX);
            if (!rc)
                rc = buf_putc(&line, '@');
            if (!rc)
                rc = fmt_put_prefix(&line, r->branches[b].version, FMT_VERSION_LEN);
        }
        when[0] = '\0';
        if (r->index_time)
            rfc3339_format(r->index_time, when, sizeof(when));
        if (!rc)
            rc = buf_printf(&line, "  indexed %s\n", when[0] ? when : "(unknown)");
        if (rc)
            break;
        /* The text must stay within its buffer's bound: stop listing (and say so) before it would not. */
        if (text->len + line.len + 128 > text->max) {
            out_of_room = 1;
            break;
        }
        if ((rc = buf_append(text, line.data, line.len)))
            break;
        shown++;

        jr = cJSON_CreateObject();
        if (rc || !jr || !cJSON_AddItemToArray(arr, jr)) {
            cJSON_Delete(jr);
            rc = ZK_ENOMEM;
            break;
        }
        if (!cJSON_AddStringToObject(jr, "name", r->name)) {
            rc = ZK_ENOMEM;
            break;
        }
        jb = cJSON_CreateArray();
        if (!jb || !cJSON_AddItemToObject(jr, "branches", jb)) {
            cJSON_Delete(jb);
            rc = ZK_ENOMEM;
            break;
        }
        for (size_t b = 0; b < r->n_branches; b++) {
            cJSON *o = cJSON_CreateObject();

            if (!o || !cJSON_AddItemToArray(jb, o)) {
                cJSON_Delete(o);
                rc = ZK_ENOMEM;
                break;
            }
            if (!cJSON_AddStringToObject(o, "name", r->branches[b].name) ||
                !cJSON_AddStringToObject(o, "version", r->branches[b].version)) {
                rc = ZK_ENOMEM;
                break;
            }
        }
        if (!rc && (!(when[0] ? cJSON_AddStringToObject(jr, "indexTime", when) : cJSON_AddNullToObject(jr, "indexTime")) ||
                    !cJSON_AddNumberToObject(jr, "shards", (double)r->shards)))
            rc = ZK_ENOMEM;
    }
    if (rc)
        goto out;
    if (out_of_room && (rc = buf_printf(text, "(%zu more not listed: output limit; use filter)\n", matching - shown)))
        goto out;
    if (!cJSON_AddNumberToObject(root, "total", (double)l->n_repos) ||
        !cJSON_AddNumberToObject(root, "matching", (double)matching) ||
        !cJSON_AddNumberToObject(root, "shown", (double)shown) || !cJSON_AddItemToObject(root, "repositories", arr)) {
        rc = ZK_ENOMEM;
        goto out;
    }
    arr = NULL;
    *structured = root;
    root = NULL;
out:
    if (rc)
        zk_err_set(err, rc, "out of memory or output limit formatting the repository list");
    buf_free(&line);
    cJSON_Delete(arr);
    cJSON_Delete(root);
    return rc;
}
