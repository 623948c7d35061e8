/* dependents.c: the find_dependents tool: which repositories declare a dependency on a package, read
 * from their manifests, one line per manifest with the line that asks for it (and so its version). An
 * agent about to change a module's API needs its consumers, and the manifests name them exactly where a
 * text search for the package's name also finds documentation, vendored copies and the package itself.
 *
 * One Zoekt query ORs a (manifest file, requirement line) pair per ecosystem; the pairs are in
 * dep_manifests. Everything else, the call, an empty answer explained and the code host addresses,
 * is the driver's (pipeline.h). */
#include "connector/format/text.h"
#include "connector/tools/args.h"
#include "connector/tools/pipeline.h"
#include "connector/zoekt/query.h"
#include "jb.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEP_PACKAGE_MAX 256
#define DEP_MAX_FILTERS 50
#define DEP_ARG_MAX 1024
#define DEP_DEFAULT 100
#define DEP_LIMIT 1000
/* Bytes of a requirement line shown: a name and a version, nearly always far shorter. */
#define DEP_LINE_MAX 160

/* A manifest and the regular expression of a line in it that requires the package: before, the
 * package's name quoted for RE2, then after. Zoekt reads ^ and $ at line ends, but \s would match a
 * line break too, and a match starting on an earlier blank line would show that line: blanks are
 * [ \t]. Names are matched as written (case-sensitive), as the registries of Go, npm and crates.io
 * keep them. */
static const struct {
    const char *glob, *before, *after;
} dep_manifests[] = {
    /* "require example.org/m v1.2.3" or, in a require block, "example.org/m/v2 v2.0.1". */
    {"go.mod", "^[ \\t]*(require[ \\t]+)?", "(/v[0-9]+)?[ \\t]+v[0-9]"},
    /* A key of dependencies, devDependencies or peerDependencies: "name": "^1.2.0". */
    {"package.json", "\"", "\"[ \\t]*:[ \\t]*\""},
    /* "name==1.2", "name>=1.2; python_version...", "name[extra]", or the name alone. */
    {"requirements*.txt", "^", "[ \\t]*([=<>~!;\\[]|$)"},
    /* PEP 621's dependencies = ["name>=1.2"]. */
    {"pyproject.toml", "[\"']", "[ \\t]*([=<>~!;\\[\"'])"},
    /* name = "1.2" or name = { version = "1.2" } under [dependencies]. */
    {"Cargo.toml", "^", "[ \\t]*="},
};

struct dep_state {
    const char *package;
    const char **repos; /* heap array of pointers into the arguments */
    size_t n_repos;
    long max_files;
};

/* Whether s can be a package name of one of the ecosystems: letters, digits and . _ - / @ ~ +. */
static int dep_is_name(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._-/@~+", *s)))
            return 0;
    return 1;
}

static int dep_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct dep_state *st = state;

    (void)ctx;
    if (targ_string(args, "package", DEP_PACKAGE_MAX, &st->package, r) ||
        targ_string_list(args, "repo", DEP_MAX_FILTERS, DEP_ARG_MAX, &st->repos, &st->n_repos, r) ||
        targ_int(args, "max_files", 1, DEP_LIMIT, DEP_DEFAULT, &st->max_files, r))
        return ZK_EINVAL;
    if (!st->package || !*st->package)
        return targ_fail(r, "find_dependents needs \"package\": a Go module path, or an npm, PyPI or crates.io "
                            "name (e.g. {\"package\":\"github.com/acme/bulk\"})"), ZK_EINVAL;
    if (!dep_is_name(st->package))
        return targ_fail(r, "argument \"package\" must be a package name (letters, digits and . _ - / @ ~ +), got "
                            "\"%.100s\"; search_code takes any pattern", st->package), ZK_EINVAL;
    return ZK_OK;
}

/* "(file:<manifest> content:<line> case:yes) or ..." over every manifest, within the repositories. */
static int dep_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                    struct tool_result *r)
{
    struct dep_state *st = state;
    char *name = zq_regex_quote(st->package), *any = mem_strdup(""), *line = NULL, *one = NULL;
    struct zk_err err = {0};
    /* A name of at most DEP_PACKAGE_MAX bytes always quotes within a query's bound. */
    int rc = name ? ZK_OK : zk_err_set(&err, ZK_ETOOBIG, "package: too long for a query");

    (void)reading;
    for (size_t i = 0; !rc && i < sizeof(dep_manifests) / sizeof(dep_manifests[0]); i++) {
        struct zq_spec spec = {NULL, NULL, 0, &dep_manifests[i].glob, 1, NULL, 0, 1, ZQ_SYNTAX_REGEX, NULL};
        char *joined;

        free(line);
        free(one);
        one = NULL;
        line = mem_printf("%s%s%s", dep_manifests[i].before, name, dep_manifests[i].after);
        spec.query = line;
        rc = zq_build(&spec, &one, &err);
        if (rc)
            break;
        joined = mem_printf("%s%s(%s)", any, i ? " or " : "", one);
        free(any);
        any = joined;
    }
    if (!rc) {
        struct zq_spec spec = {any, st->repos, st->n_repos, NULL, 0, NULL, 0, 0, ZQ_SYNTAX_ZOEKT, NULL};

        rc = zq_build(&spec, &q->zq, &err);
    }
    free(line);
    free(one);
    free(any);
    free(name);
    if (rc)
        return targ_fail(r, "invalid find_dependents arguments: %s", err.msg), ZK_EINVAL;
    /* One line per manifest: its first requirement line is all that is shown. */
    q->so = (struct zc_search_opts){.max_files = (int)st->max_files, .chunk_matches = 1};
    q->ro = (struct zr_opts){ctx->cfg->mirror_prefix, 0, 1};
    q->linked = (size_t)st->max_files;
    q->repos = st->repos;
    q->n_repos = st->n_repos;
    return ZK_OK;
}

/* The first matching line of f, or NULL. */
static const struct zr_line *dep_line(const struct zr_file *f)
{
    for (size_t k = 0; k < f->n_lines; k++)
        if (f->lines[k].is_match)
            return &f->lines[k];
    return NULL;
}

/* Appends "repo  path:12  <the requirement line, trimmed>\n". */
static int dep_put(struct buf *b, const struct zr_file *f)
{
    const struct zr_line *l = dep_line(f);
    const char *text = l ? l->text : "";
    int rc;

    while (*text == ' ' || *text == '\t')
        text++;
    rc = fmt_put_cut(b, f->repo, FMT_REPO_NAME_MAX);
    if (!rc)
        rc = buf_puts(b, "  ");
    if (!rc)
        rc = fmt_put_cut(b, f->path, FMT_LINE_MAX);
    if (!rc)
        rc = buf_printf(b, ":%d  ", l ? l->number : 0);
    if (!rc)
        rc = fmt_put_cut(b, text, DEP_LINE_MAX);
    return rc ? rc : buf_putc(b, '\n');
}

static int dep_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                      struct zk_err *err)
{
    struct dep_state *st = state;
    const struct zr_search *res = &a->res;
    size_t *order = fmt_sorted(res), shown = 0, repos = 0;
    int lower = 0, rc;
    long long total = fmt_counted(res, &lower);
    struct buf lines, line;
    struct jb b = {0};
    cJSON *root = jb_object(&b), *list = jb_add_arr(&b, root, "dependents");

    buf_init(&lines, ctx->cfg->output_budget);
    buf_init(&line, FMT_REPO_NAME_MAX + FMT_LINE_MAX + DEP_LINE_MAX + 64);
    for (size_t k = 0; k < res->n_files; k++)
        repos += k == 0 || strcmp(res->files[order[k]].repo, res->files[order[k - 1]].repo) != 0;
    for (size_t k = 0; k < res->n_files; k++) {
        const struct zr_file *f = &res->files[order[k]];
        const struct zr_line *l = dep_line(f);
        cJSON *o;

        buf_reset(&line);
        if (dep_put(&line, f) || !fmt_fits(&lines, &line, ctx->cfg->output_budget) ||
            buf_append(&lines, line.data, line.len))
            break;
        shown++;
        o = jb_object(&b);
        jb_add_str(&b, o, "repository", f->repo);
        jb_add_str(&b, o, "path", f->path);
        jb_add_num(&b, o, "line", l ? l->number : 0);
        jb_add_str(&b, o, "text", l ? l->text : "");
        if (f->url)
            jb_add_str(&b, o, "url", f->url);
        jb_push(&b, list, o);
    }
    buf_reset(&r->text);
    rc = buf_printf(&r->text, "Query: %s\n%s is required by %lld%s manifest%s", a->zq, st->package, total,
                    lower ? "+" : "", total == 1 && !lower ? "" : "s");
    if (!rc && total)
        rc = buf_printf(&r->text, " in %zu%s repositor%s (%zu shown, by repository)", repos,
                        total > (long long)res->n_files || lower ? "+" : "", repos == 1 ? "y" : "ies", shown);
    if (!rc)
        rc = buf_puts(&r->text, total > (long long)shown ? ": narrow with repo, or raise max_files.\n"
                                                         : total ? ".\n"
                                                                 : ". Searched go.mod, package.json, "
                                                                   "requirements*.txt, pyproject.toml and "
                                                                   "Cargo.toml by the name as written.\n");
    if (!rc && a->note.len)
        rc = buf_printf(&r->text, "Note: %s\n", a->note.data);
    if (!rc && lines.len)
        rc = buf_append(&r->text, lines.data, lines.len);
    jb_add_str(&b, root, "package", st->package);
    jb_add_str(&b, root, "query", a->zq);
    jb_add_num(&b, root, "totalManifests", (double)total);
    jb_add_num(&b, root, "repositories", (double)repos);
    jb_add_num(&b, root, "shownManifests", (double)shown);
    jb_add_bool(&b, root, "complete", total == (long long)shown && !lower);
    r->structured = jb_finish(&b, root);
    if (rc)
        zk_err_set(err, rc, "find_dependents: the answer exceeds the output buffer");
    buf_free(&line);
    buf_free(&lines);
    free(order);
    return rc;
}

static void dep_release(void *state)
{
    free(((struct dep_state *)state)->repos);
}

const struct tool_def tool_find_dependents_def = {sizeof(struct dep_state), dep_parse, dep_plan, dep_render,
                                                  dep_release};
