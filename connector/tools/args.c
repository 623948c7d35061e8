/* args.c: see args.h. */
#include "connector/tools/args.h"

#include "connector/format.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "connector/zoekt/weburl.h"
#include "json.h"
#include "mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* targ_fail and targ_fail_code: r failed with code, and the message fmt with ap. */
__attribute__((format(printf, 3, 0))) static int targ_vfail(struct tool_result *r, int code, const char *fmt,
                                                            va_list ap)
{
    char msg[2048];
    size_t n;
    int rc = ZK_OK;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    buf_reset(&r->text);
    cJSON_Delete(r->structured);
    r->structured = NULL;
    r->is_error = 1;
    r->code = code;
    /* A precision such as %.200s, or the message's own bound, can cut a character of an argument in
     * two: such bytes are dropped, so that the reply stays UTF-8. An argument echoed in the message
     * (an unknown name, a query) may hold control bytes: all but line breaks and tabs, which messages
     * use themselves, become U+FFFD. The message, at most three times 2 KiB, is far below the text
     * buffer's bound, so this cannot fail for size. */
    n = strlen(msg);
    for (size_t i = 0, k; !rc && i < n; i += k ? k : 1) {
        unsigned char c = (unsigned char)msg[i];

        k = json_utf8_len((const unsigned char *)msg + i, n - i);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            rc = buf_puts(&r->text, "\xef\xbf\xbd"); /* U+FFFD */
        else if (k)
            rc = buf_append(&r->text, msg + i, k);
    }
    return rc;
}

int targ_fail(struct tool_result *r, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = targ_vfail(r, ZK_EINVAL, fmt, ap);
    va_end(ap);
    return rc;
}

int targ_fail_code(struct tool_result *r, int code, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = targ_vfail(r, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* A short description of a JSON value's type, for messages. */
const char *targ_type(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "null";
}

/* Fails r when s, the value of argument name (item: its 1-based place in a list, or 0), holds a NUL
 * character (mcp/jsonrpc.c turns \u0000 into C0 80) or bytes that are not UTF-8: either would be cut
 * short or echoed raw into the JSON reply. */
static int targ_check_text(const char *name, size_t item, const char *s, struct tool_result *r)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), k;
    char where[48] = "";

    for (size_t i = 0; i < n; i += k) {
        if ((k = json_utf8_len(p + i, n - i)))
            continue;
        if (item)
            snprintf(where, sizeof(where), ", item %zu,", item);
        if (p[i] == 0xc0 && i + 1 < n && p[i + 1] == 0x80)
            targ_fail(r, "argument \"%s\"%s contains a NUL character (\\u0000) at byte %zu; remove it", name,
                      where, i);
        else
            targ_fail(r, "argument \"%s\"%s is not valid UTF-8 (byte 0x%02x at offset %zu); send text as UTF-8",
                      name, where, p[i], i);
        return ZK_EINVAL;
    }
    return ZK_OK;
}

static const cJSON *targ_get(const cJSON *args, const char *name)
{
    const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;

    return v && !cJSON_IsNull(v) ? v : NULL;
}

int targ_string(const cJSON *args, const char *name, size_t max_len, const char **out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);

    *out = NULL;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsString(v) || !v->valuestring) {
        targ_fail(r, "argument \"%s\" must be a string, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    if (strlen(v->valuestring) > max_len) {
        targ_fail(r, "argument \"%s\" is longer than %zu bytes", name, max_len);
        return ZK_EINVAL;
    }
    if (targ_check_text(name, 0, v->valuestring, r))
        return ZK_EINVAL;
    *out = v->valuestring;
    return ZK_OK;
}

int targ_string_list(const cJSON *args, const char *name, size_t max_items, size_t max_len, const char ***out,
                     size_t *n, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name), *it;
    const char **list;

    *out = NULL;
    *n = 0;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsString(v) && !cJSON_IsArray(v)) {
        targ_fail(r, "argument \"%s\" must be a string or an array of strings, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    if (cJSON_IsArray(v) && (size_t)cJSON_GetArraySize(v) > max_items) {
        targ_fail(r, "argument \"%s\" has %d items; at most %zu are allowed", name, cJSON_GetArraySize(v),
                  max_items);
        return ZK_EINVAL;
    }
    list = mem_calloc(cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) + 1 : 2, sizeof(*list));
    if (cJSON_IsString(v)) {
        list[(*n)++] = v->valuestring;
    } else {
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it) || !it->valuestring) {
                targ_fail(r, "argument \"%s\": item %zu must be a string, got %s", name, *n + 1, targ_type(it));
                free(list);
                *n = 0;
                return ZK_EINVAL;
            }
            list[(*n)++] = it->valuestring;
        }
    }
    for (size_t i = 0; i < *n; i++) {
        if (!list[i][0] || strlen(list[i]) > max_len) {
            if (list[i][0])
                targ_fail(r, "argument \"%s\": item %zu is longer than %zu bytes", name, i + 1, max_len);
            else
                targ_fail(r, "argument \"%s\": empty strings are not allowed", name);
            free(list);
            *n = 0;
            return ZK_EINVAL;
        }
        if (targ_check_text(name, cJSON_IsArray(v) ? i + 1 : 0, list[i], r)) {
            free(list);
            *n = 0;
            return ZK_EINVAL;
        }
    }
    *out = list;
    return ZK_OK;
}

int targ_int(const cJSON *args, const char *name, long min, long max, long def, long *out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);
    long long n;

    *out = def;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsNumber(v)) {
        targ_fail(r, "argument \"%s\" must be an integer between %ld and %ld, got %s", name, min, max,
                  targ_type(v));
        return ZK_EINVAL;
    }
    /* The range first: converting a number outside it (2^63, or 1e400, which cJSON reads as infinity)
     * would be undefined behaviour. */
    if (!json_num_to_int(v->valuedouble, min, max, &n)) {
        if (isfinite(v->valuedouble))
            targ_fail(r, "argument \"%s\" must be between %ld and %ld, got %.15g", name, min, max, v->valuedouble);
        else
            targ_fail(r, "argument \"%s\" must be between %ld and %ld, got a number too large to represent", name,
                      min, max);
        return ZK_EINVAL;
    }
    if ((double)n != v->valuedouble) {
        targ_fail(r, "argument \"%s\" must be an integer between %ld and %ld, got a fraction", name, min, max);
        return ZK_EINVAL;
    }
    *out = (long)n;
    return ZK_OK;
}

int targ_bool(const cJSON *args, const char *name, int def, int *out, struct tool_result *r)
{
    const cJSON *v = targ_get(args, name);

    *out = def;
    if (!v)
        return ZK_OK;
    if (!cJSON_IsBool(v)) {
        targ_fail(r, "argument \"%s\" must be true or false, got %s", name, targ_type(v));
        return ZK_EINVAL;
    }
    *out = cJSON_IsTrue(v);
    return ZK_OK;
}

int targ_repo_pattern(const char *argname, const char *arg, char *pattern, struct tool_result *r)
{
    struct zk_err err = {0};
    char *re = NULL;
    int rc = zn_normalize(arg, pattern, ZN_ARG_MAX + 1, &err);

    if (rc == ZK_OK && zn_is_glob(pattern))
        rc = zq_glob_to_regex(pattern, ZQ_ANCHOR_FULL, &re, &err);
    if (rc != ZK_OK)
        targ_fail(r, "argument \"%s\": %s", argname, err.msg);
    free(re);
    return rc;
}

int targ_repo_indexed(const struct zr_list *l, const char *pattern)
{
    for (size_t i = 0; i < l->n_repos; i++)
        if (zn_matches(pattern, l->repos[i].full_name))
            return 1;
    return 0;
}

int targ_no_repo(const struct zr_list *l, const char *arg, const char *pattern, struct buf *b)
{
    size_t closest;
    int rc = buf_putc(b, '"');

    if (!rc)
        rc = fmt_put_cut(b, arg, 200);
    if (!rc)
        rc = buf_puts(b, "\" matches no indexed repository; ");

    if (!rc)
        rc = fmt_closest(l, pattern, b, &closest);
    if (!rc)
        rc = closest ? buf_putc(b, '.')
                     : buf_printf(b, "none has a similar name (%zu are indexed; list_repositories shows them).",
                                  l->n_repos);
    return rc;
}

struct zc_conn targ_conn(const struct tool_ctx *ctx, long timeout_ms)
{
    struct zc_conn c = {ctx->cfg->zoekt_url, ctx->cfg->zoekt_token, timeout_ms, ctx->cancel, ctx->cfg->zoekt_pool,
                        ctx->cfg->zoekt_budget};

    return c;
}

void targ_summarise(const struct zr_list *l, struct targ_index_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->zoekt_version = "";
    for (size_t i = 0; i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[i];

        if (r->index_time && (!s->newest || r->index_time > s->newest))
            s->newest = r->index_time;
        if (r->index_time && (!s->oldest || r->index_time < s->oldest))
            s->oldest = r->index_time;
        if (!s->zoekt_version[0] && r->zoekt_version[0])
            s->zoekt_version = r->zoekt_version;
    }
}

/* A repository with its place in the list: qsort has no context argument, so each element carries
 * what the comparison reads. */
struct targ_order {
    const struct zr_repo *repo;
    size_t index;
};

static int targ_older(const void *a, const void *b)
{
    const struct zr_repo *x = ((const struct targ_order *)a)->repo, *y = ((const struct targ_order *)b)->repo;

    if (x->index_time != y->index_time) {
        if (!x->index_time || !y->index_time)
            return x->index_time ? -1 : 1;
        return x->index_time < y->index_time ? -1 : 1;
    }
    return strcmp(x->name, y->name);
}

size_t *targ_oldest_first(const struct zr_list *l)
{
    struct targ_order *tmp;
    size_t *order;

    if (!l->n_repos)
        return NULL;
    tmp = mem_calloc(l->n_repos, sizeof(*tmp));
    for (size_t i = 0; i < l->n_repos; i++)
        tmp[i] = (struct targ_order){&l->repos[i], i};
    qsort(tmp, l->n_repos, sizeof(*tmp), targ_older);
    order = mem_calloc(l->n_repos, sizeof(*order));
    for (size_t i = 0; i < l->n_repos; i++)
        order[i] = tmp[i].index;
    free(tmp);
    return order;
}

int targ_is_stale(const struct zr_repo *r, time_t now, long max_age)
{
    return r->index_time > 0 && now - r->index_time > max_age;
}

void targ_explain_empty(const struct tool_ctx *ctx, const char *const *repos, size_t n, struct buf *note)
{
    struct zk_err err = {0};
    char pattern[ZN_ARG_MAX + 1];
    size_t missing = 0;
    const struct zr_list *l = NULL;
    int rc;

    rc = targ_list_get(ctx, &l, &err);
    if (rc) {
        rc = buf_printf(note, "could not check whether the repositories are indexed: %s", err.msg);
        goto out;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        /* The query was built from every argument, so each one normalises. */
        if (zn_normalize(repos[i], pattern, sizeof(pattern), &err) || targ_repo_indexed(l, pattern))
            continue;
        rc = missing++ ? buf_putc(note, ' ') : ZK_OK;
        if (!rc)
            rc = targ_no_repo(l, repos[i], pattern, note);
    }
    if (!rc && !missing)
        rc = buf_printf(note, "the repositor%s searched %s indexed; the query matched nothing in %s.",
                        n == 1 ? "y" : "ies", n == 1 ? "is" : "are", n == 1 ? "it" : "them");
out:
    targ_list_put(ctx, l);
}

/* The first file of each repository of res, in the order the repositories first appear: a heap array
 * of pointers into res (*n of them) that the caller frees. */
static const struct zr_file **targ_answer_repos(const struct zr_search *res, size_t *n)
{
    const struct zr_file **first = mem_calloc(res->n_files + 1, sizeof(*first));

    *n = 0;
    for (size_t i = 0; i < res->n_files; i++) {
        size_t j = 0;

        while (j < *n && strcmp(first[j]->repo, res->files[i].repo) != 0)
            j++;
        if (j == *n)
            first[(*n)++] = &res->files[i];
    }
    return first;
}

/* The list cache's fetch: a list request with the tool call's connection and cancel flag. */
static int targ_fetch_list(void *arg, struct zr_list *out, struct zk_err *err)
{
    const struct tool_ctx *ctx = arg;
    struct zc_conn c = targ_conn(ctx, ctx->cfg->list_timeout_ms);
    struct zr_opts ro = {ctx->cfg->mirror_prefix, -1, 0};

    return zc_list(&c, "", &ro, out, err);
}

int targ_list_get(const struct tool_ctx *ctx, const struct zr_list **out, struct zk_err *err)
{
    return targ_list_get_within(ctx, ZLC_FRESH_MS, out, err);
}

int targ_list_get_within(const struct tool_ctx *ctx, long long max_age_ms, const struct zr_list **out,
                         struct zk_err *err)
{
    struct zr_list *own;
    int rc;

    if (ctx->cfg->zoekt_list_cache)
        return zlc_get(ctx->cfg->zoekt_list_cache, max_age_ms, targ_fetch_list, (void *)ctx, out, err);
    own = mem_calloc(1, sizeof(*own));
    rc = targ_fetch_list((void *)ctx, own, err);
    if (rc) {
        zr_list_free(own);
        free(own);
        own = NULL;
    }
    *out = own;
    return rc;
}

void targ_list_put(const struct tool_ctx *ctx, const struct zr_list *l)
{
    if (ctx->cfg->zoekt_list_cache) {
        zlc_put(ctx->cfg->zoekt_list_cache, l);
    } else if (l) {
        zr_list_free((struct zr_list *)l);
        free((struct zr_list *)l);
    }
}

void targ_indexed(const struct tool_ctx *ctx, const struct zr_search *res, struct buf *line)
{
    size_t n;
    const struct zr_file **first = targ_answer_repos(res, &n);
    const char **names = mem_calloc(n + 1, sizeof(*names)), **commits = mem_calloc(n + 1, sizeof(*commits));
    time_t *times = mem_calloc(n + 1, sizeof(*times));
    struct fmt_indexed_repo *repos = mem_calloc(n + 1, sizeof(*repos));

    for (size_t i = 0; i < n; i++) {
        names[i] = first[i]->repo;
        commits[i] = first[i]->version;
    }
    if (ctx->cfg->zoekt_list_cache)
        (void)zlc_index_times(ctx->cfg->zoekt_list_cache, names, commits, n, times, targ_fetch_list, (void *)ctx);
    /* The commit is the one the repository's first file in the answer came from (FileMatch.Version),
     * so the header names the commit the lines shown are from; the age is the cache's. */
    for (size_t i = 0; i < n; i++)
        repos[i] = (struct fmt_indexed_repo){names[i], commits[i], times[i]};
    if (fmt_indexed(repos, n, time(NULL), line))
        buf_reset(line);
    free(repos);
    free(times);
    free(commits);
    free(names);
    free(first);
}

void targ_web_urls(const struct tool_ctx *ctx, struct zr_file *files, size_t n)
{
    const struct zr_list *l = NULL;
    struct zk_err err = {0};

    if (n == 0 || targ_list_get_within(ctx, ZLC_TTL_MS, &l, &err) != ZK_OK) {
        targ_list_put(ctx, l);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct zr_repo *repo = zr_list_find(l, files[i].repo);
        long line = 0;

        /* The first matching line, which is where an agent's citation points. */
        for (size_t k = 0; k < files[i].n_lines && !line; k++)
            if (files[i].lines[k].is_match)
                line = files[i].lines[k].number;
        if (repo && !files[i].url)
            files[i].url = zw_file_url(repo->file_url_template, repo->line_fragment_template, files[i].version,
                                       files[i].path, line);
    }
    targ_list_put(ctx, l);
}

int targ_search(const struct tool_ctx *ctx, const char *tool, const char *zq, const struct zc_search_opts *so,
                const struct zr_opts *ro, struct zr_search *res, struct tool_result *r)
{
    struct zc_conn c = targ_conn(ctx, ctx->cfg->search_timeout_ms);
    struct zk_err err = {0};
    int rc = zc_search(&c, zq, so, ro, res, &err);

    if (rc == ZK_OK)
        return ZK_OK;
    (void)targ_fail_code(r, rc, "%s failed: %s\nQuery sent: %s", tool, err.msg, zq);
    return ZK_EINVAL;
}
