/* files.c: see files.h. */
#include "connector/format/files.h"

#include <stdlib.h>
#include <string.h>

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

/* list_files' tree (files.h). A folder with one entry shares its line with the entry, so that a chain
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
         * fit (files.h says why that always fits). */
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
