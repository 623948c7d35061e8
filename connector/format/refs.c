/* refs.c: see refs.h. */
#include "connector/format/refs.h"

#include <stdlib.h>
#include <string.h>

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
           fmt_reason_array(&b, ((long long)(first + want) < total ? FMT_R_MAX_FILES : 0u) |
                                    (lower ? FMT_R_ZOEKT_LIMIT : 0u) | (budget_hit ? FMT_R_BUDGET : 0u)));
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
