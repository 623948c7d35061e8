/* read.c: see read.h. */
#include "connector/format/read.h"

#include <stdlib.h>
#include <string.h>

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
