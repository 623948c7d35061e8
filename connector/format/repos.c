/* repos.c: see repos.h. */
#include "connector/format/repos.h"

#include "connector/zoekt/reponame.h"
#include "rfc3339.h"

#include <stdlib.h>
#include <string.h>

/* Room kept for the line that says how many repositories a list left out for the budget. */
#define FMT_REPOS_NOTE_RESERVE 96

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
