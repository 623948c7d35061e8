/* symbols.c: the find_symbol tool: where symbols are defined, by name, glob or regular expression,
 * through Zoekt's sym: query over the symbols universal-ctags found at index time, each shown with the
 * kind and scope ctags gave it. Repositories indexed without ctags have no symbol data; the answer
 * names them and says how to search their text instead. */
#include "connector/format/symbols.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SYMS_NAME_MAX 256
#define SYMS_MAX_FILTERS 50
#define SYMS_ARG_MAX 1024
#define SYMS_KIND_MAX 64
/* Files asked of Zoekt; a kind filter is applied to what comes back. */
#define SYMS_FETCH 500
#define SYMS_NOTE_MAX 16384
/* Repositories without symbol data named in the note; the rest are counted. */
#define SYMS_NAMED_MAX 5

static int syms_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The regular expression for name (an identifier, or a glob over one) anchored to the whole symbol,
 * or NULL when name holds other characters. Heap string the caller frees. */
static char *syms_name_regex(const char *name)
{
    char *out = mem_alloc(16 * strlen(name) + 3), *p = out;

    *p++ = '^';
    for (const char *s = name; *s; s++) {
        if (*s == '*') {
            p = stpcpy(p, "[A-Za-z0-9_]*");
        } else if (*s == '?') {
            p = stpcpy(p, "[A-Za-z0-9_]");
        } else if (syms_word_char(*s)) {
            *p++ = *s;
        } else {
            free(out);
            return NULL;
        }
    }
    *p++ = '$';
    *p = '\0';
    return out;
}

/* Whether a regular expression can go after sym: unquoted: no blank, quote or control character. */
static int syms_plain_regex(const char *re)
{
    for (const unsigned char *s = (const unsigned char *)re; *s; s++)
        if (*s <= ' ' || *s == '"' || *s == '\'' || *s == 0x7f)
            return 0;
    return 1;
}

static int syms_in(const char *kind, const char *const *set)
{
    for (; *set; set++)
        if (strcasecmp(kind, *set) == 0)
            return 1;
    return 0;
}

static const char *const syms_callables[] = {"function", "func", "method", "procedure", "subroutine",
                                             "constructor", "singletonMethod", NULL};
static const char *const syms_types[] = {"type",  "typedef", "struct", "class", "interface", "enum", "union",
                                         "trait", "alias",   "record", "protocol", "talias", NULL};

/* Whether symbol y is of the kind an agent asked for (see the tool's description). */
static int syms_kind_matches(const char *want, const struct zr_symbol *y)
{
    if (strcasecmp(want, y->kind) == 0)
        return 1;
    if (strcasecmp(want, "function") == 0)
        return syms_in(y->kind, syms_callables);
    if (strcasecmp(want, "method") == 0)
        return syms_in(y->kind, syms_callables) && syms_in(y->parent_kind, syms_types);
    if (strcasecmp(want, "type") == 0)
        return syms_in(y->kind, syms_types);
    return 0;
}

struct syms_kinds {
    const char **want;
    size_t n;
};

static int syms_keep(const struct zr_symbol *y, void *arg)
{
    const struct syms_kinds *k = arg;

    for (size_t i = 0; i < k->n; i++)
        if (syms_kind_matches(k->want[i], y))
            return 1;
    return k->n == 0;
}

/* Whether the repository full_name is one the repo arguments select (every one when there are none). */
static int syms_selects(const char *const *repos, size_t n_repos, const char *full_name)
{
    char pattern[ZN_ARG_MAX + 1];
    struct zk_err err;

    if (n_repos == 0)
        return 1;
    for (size_t k = 0; k < n_repos; k++)
        if (zn_normalize(repos[k], pattern, sizeof(pattern), &err) == ZK_OK && zn_matches(pattern, full_name))
            return 1;
    return 0;
}

/* Appends to note which of the repositories the repo arguments select (all when none) have no symbol
 * data in the catalogue a (naming a few) and how to search them; nothing when all have symbols. A list
 * failure is said, since it leaves the answer's silence unexplained. */
static void syms_note_unsymbolled(const struct tool_answer *a, const char *const *repos, size_t n_repos,
                                  const char *name, struct buf *note)
{
    size_t selected = 0, without = 0;
    const struct zr_list *l = a->list;
    int rc;

    if (!l) {
        if (buf_printf(note, "%scould not check which repositories have symbol data: %s", note->len ? " " : "",
                       a->list_err.msg))
            buf_reset(note);
        return;
    }
    for (size_t i = 0; i < l->n_repos; i++) {
        int sel = syms_selects(repos, n_repos, l->repos[i].full_name);

        selected += (size_t)sel;
        without += (size_t)(sel && !l->repos[i].has_symbols);
    }
    if (!without)
        return;
    if (selected == 1)
        rc = buf_printf(note, "%sThe repository searched has no symbol data", note->len ? " " : "");
    else if (without == selected)
        rc = buf_printf(note, "%sNone of the %zu repositories searched has symbol data", note->len ? " " : "",
                        selected);
    else
        rc = buf_printf(note, "%s%zu of the %zu repositories searched ha%s no symbol data", note->len ? " " : "",
                        without, selected, without == 1 ? "s" : "ve");
    if (!rc)
        rc = buf_puts(note, " (indexed without ctags), so definitions there are not found here: ");
    for (size_t i = 0, named = 0; !rc && i < l->n_repos && named < SYMS_NAMED_MAX; i++) {
        if (syms_selects(repos, n_repos, l->repos[i].full_name) && !l->repos[i].has_symbols)
            rc = buf_printf(note, "%s%s", named++ ? ", " : "", l->repos[i].name);
    }
    if (!rc && without > SYMS_NAMED_MAX)
        rc = buf_printf(note, " and %zu more", without - SYMS_NAMED_MAX);
    if (!rc)
        rc = buf_printf(note, ". Search their text with find_references {\"symbol\":\"%s\"} or search_code.",
                        syms_plain_regex(name) && strlen(name) < 100 ? name : "...");
    if (rc)
        buf_reset(note);
}

struct syms_state {
    const char *name;
    const char **repos, **files; /* heap arrays of pointers into the arguments */
    size_t n_repos, n_files;
    struct syms_kinds kinds;
    long max_files;
    char *re;                    /* the regular expression after sym: (heap) */
};

static int syms_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct syms_state *st = state;
    int regex;

    if (targ_string(args, "name", SYMS_NAME_MAX, &st->name, r) || targ_bool(args, "regex", 0, &regex, r) ||
        targ_string_list(args, "kind", SYMS_MAX_FILTERS, SYMS_KIND_MAX, &st->kinds.want, &st->kinds.n, r) ||
        targ_string_list(args, "repo", SYMS_MAX_FILTERS, SYMS_ARG_MAX, &st->repos, &st->n_repos, r) ||
        targ_string_list(args, "file", SYMS_MAX_FILTERS, SYMS_ARG_MAX, &st->files, &st->n_files, r) ||
        targ_int(args, "max_files", 1, CONNECTOR_MAX_FILES_LIMIT, ctx->cfg->max_files, &st->max_files, r))
        return ZK_EINVAL;
    if (!st->name || !st->name[0])
        return targ_fail(r, "find_symbol needs \"name\", a symbol name, glob or (with regex: true) regular "
                            "expression (e.g. {\"name\":\"ParseConfig\"})"), ZK_EINVAL;
    if (regex && !syms_plain_regex(st->name))
        return targ_fail(r, "argument \"name\" (a regular expression) cannot hold blanks or quotes: symbol names "
                            "have none; got \"%.100s\"", st->name), ZK_EINVAL;
    st->re = regex ? mem_strdup(st->name) : syms_name_regex(st->name);
    if (!st->re)
        return targ_fail(r, "argument \"name\" must be an identifier or a glob over one (letters, digits, _, * "
                            "and ?), got \"%.100s\"; pass regex: true for a regular expression", st->name), ZK_EINVAL;
    return ZK_OK;
}

static int syms_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                     struct tool_result *r)
{
    struct syms_state *st = state;
    char *sym = mem_printf("sym:%s", st->re);
    struct zq_spec spec = {sym, st->repos, st->n_repos, st->files, st->n_files, NULL, 0, 1, ZQ_SYNTAX_ZOEKT, NULL};
    struct zk_err err = {0};
    int rc;

    (void)reading;
    rc = zq_build(&spec, &q->zq, &err);
    free(sym);
    if (rc)
        return targ_fail(r, "invalid find_symbol arguments: %s", err.msg), ZK_EINVAL;
    q->so = (struct zc_search_opts){.max_files = SYMS_FETCH, .chunk_matches = 1};
    q->ro = (struct zr_opts){ctx->cfg->mirror_prefix, 0, 0};
    q->repos = st->repos;
    q->n_repos = st->n_repos;
    /* Which repositories have symbol data, shown as the index has it now. */
    q->catalogue_ms = ZLC_FRESH_MS;
    return ZK_OK;
}

static int syms_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                       struct zk_err *err)
{
    struct syms_state *st = state;
    struct fmt_symbols_opts fo = {a->zq, (int)st->max_files, ctx->cfg->output_budget,
                                  a->res.stats.file_count > (long long)a->res.n_files, NULL};
    struct zk_err ferr = {0};
    int rc;

    zr_search_keep_symbols(&a->res, syms_keep, &st->kinds);
    syms_note_unsymbolled(a, st->repos, st->n_repos, st->name, &a->note);
    fo.note = a->note.len ? a->note.data : NULL;
    buf_reset(&r->text);
    rc = fmt_symbols(&a->res, &fo, &r->text, &r->structured, &ferr);
    if (rc)
        zk_err_set(err, rc, "find_symbol: %s", ferr.msg);
    return rc;
}

static void syms_release(void *state)
{
    struct syms_state *st = state;

    free(st->kinds.want);
    free(st->repos);
    free(st->files);
    free(st->re);
}

const struct tool_def tool_find_symbol_def = {sizeof(struct syms_state), syms_parse, syms_plan, syms_render,
                                              syms_release};
