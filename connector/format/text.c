/* text.c: see text.h. */
#include "connector/format/text.h"

#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int fmt_put_prefix(struct buf *b, const char *s, size_t max)
{
    return buf_append(b, s, fmt_utf8_prefix(s, strlen(s), max));
}

/* The mark of a cut: U+2026 HORIZONTAL ELLIPSIS. */
#define FMT_ELLIPSIS "\xe2\x80\xa6"

int fmt_put_cut_n(struct buf *b, const char *s, size_t n, size_t max)
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

int fmt_put_excerpt(struct buf *b, const struct zr_line *l)
{
    size_t n = strlen(l->text), from, to;
    int rc;

    fmt_excerpt(l, n, &from, &to);
    rc = from ? buf_puts(b, FMT_ELLIPSIS) : ZK_OK;
    if (!rc)
        rc = buf_append(b, l->text + from, to - from);
    return rc || to == n ? rc : buf_puts(b, FMT_ELLIPSIS);
}

void fmt_add_line_text(struct jb *b, cJSON *m, const struct zr_line *l)
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

int fmt_put_name(struct buf *b, const struct zr_file *f)
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

int fmt_put_next_page(struct buf *b, const char *cursor)
{
    return buf_printf(b, "Next page: the same arguments with \"cursor\":\"%s\"\n", cursor);
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

long long fmt_total_files(const struct zr_search *r)
{
    return r->stats.file_count > (long long)r->n_files ? r->stats.file_count : (long long)r->n_files;
}

long long fmt_counted(const struct zr_search *r, int *lower_bound)
{
    *lower_bound = r->stats.files_skipped > 0 || r->stats.shards_skipped > 0 || r->stats.crashes > 0 ||
                   r->stats.flush_reason == 1;
    return fmt_total_files(r);
}

int fmt_fits(const struct buf *text, const struct buf *line, size_t budget)
{
    return text->len + line->len + FMT_NOTE_RESERVE * 2 <= budget;
}

cJSON *fmt_reason_array(struct jb *b, unsigned mask)
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
