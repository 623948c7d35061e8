/* symbols.c: see symbols.h. */
#include "connector/format/symbols.h"

#include <stdlib.h>
#include <string.h>

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
    jb_add(&b, root, "truncation",
           fmt_reason_array(&b, (want < r->n_files ? FMT_R_MAX_FILES : 0u) | (lower ? FMT_R_ZOEKT_LIMIT : 0u) |
                                    (budget_hit ? FMT_R_BUDGET : 0u)));
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
