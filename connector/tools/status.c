/* status.c: the corpus_status tool and the /index-status body: what the CodeSearchCorpus resource says
 * about the index (conditions, counts, times) and what the webserver actually serves (/api/list). */
#include "connector/format/repos.h"
#include "connector/format/text.h"
#include "connector/owncorpus.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/tools/pipeline.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/reponame.h"
#include "connector/zoekt/shards.h"
#include "json.h"
#include "rfc3339.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Repositories listed for the repo argument. */
#define STATUS_REPOS_MAX 20
/* Repositories named in the "Oldest indexes" line. */
#define STATUS_OLDEST_SHOWN 5
/* Longest condition message shown; the operator's own are far shorter. */
#define STATUS_MESSAGE_MAX 300

/* What one search shard serves, summed over its repositories in a list. */
struct status_shard {
    size_t repos;
    long long index_bytes;
    time_t newest, oldest; /* 0 when unknown */
};

/* The sums of each shard of l (l->search_shards.n of them) into sums. */
static void status_shard_sums(const struct zr_list *l, struct status_shard sums[SHARD_MAX])
{
    memset(sums, 0, SHARD_MAX * sizeof(*sums));
    for (size_t i = 0; i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[i];
        struct status_shard *s;

        if (r->shard < 0 || r->shard >= SHARD_MAX)
            continue;
        s = &sums[r->shard];
        s->repos++;
        s->index_bytes += r->index_bytes;
        if (r->index_time && (!s->newest || r->index_time > s->newest))
            s->newest = r->index_time;
        if (r->index_time && (!s->oldest || r->index_time < s->oldest))
            s->oldest = r->index_time;
    }
}

/* Adds name: the time as RFC 3339, or null when unknown (0). */
static void status_add_time(cJSON *o, const char *name, time_t t)
{
    char ts[32];

    if (t) {
        rfc3339_format(t, ts, sizeof(ts));
        cJSON_AddStringToObject(o, name, ts);
    } else {
        cJSON_AddNullToObject(o, name);
    }
}

/* "searchShards": one entry per search shard, in shard order: what it serves, or why it did not
 * answer, so that the operator can publish each shard's state. */
static cJSON *status_shards_json(const struct zr_list *l)
{
    const struct zr_shards *ss = &l->search_shards;
    struct status_shard sums[SHARD_MAX];
    cJSON *arr = cJSON_CreateArray();

    status_shard_sums(l, sums);
    for (int k = 0; k < ss->n && k < SHARD_MAX; k++) {
        cJSON *e = cJSON_CreateObject();

        cJSON_AddNumberToObject(e, "shard", k);
        if (ss->failed & (1u << k)) {
            cJSON_AddStringToObject(e, "error", ss->why[k] ? ss->why[k] : "no answer");
        } else {
            cJSON_AddNumberToObject(e, "repositories", (double)sums[k].repos);
            cJSON_AddNumberToObject(e, "indexBytes", (double)sums[k].index_bytes);
            status_add_time(e, "oldestIndexTime", sums[k].oldest);
            status_add_time(e, "newestIndexTime", sums[k].newest);
        }
        cJSON_AddItemToArray(arr, e);
    }
    return arr;
}

/* {"repositories","shards","newestIndexTime","oldestIndexTime","zoektVersion"} for a repository list,
 * and "searchShards" for a corpus served by several. */
static cJSON *status_index_json(const struct zr_list *l)
{
    struct tcat_index_summary s;
    cJSON *o = cJSON_CreateObject();

    tcat_summarise(l, &s);
    cJSON_AddNumberToObject(o, "repositories", (double)l->n_repos);
    cJSON_AddNumberToObject(o, "shards", (double)l->shards);
    status_add_time(o, "newestIndexTime", s.newest);
    status_add_time(o, "oldestIndexTime", s.oldest);
    cJSON_AddStringToObject(o, "zoektVersion", s.zoekt_version);
    if (l->search_shards.n)
        cJSON_AddItemToObject(o, "searchShards", status_shards_json(l));
    return o;
}

/* Adds "stale" and, with names, "staleRepositories" to o: the repositories of l (in order, oldest
 * first) indexed more than max_age seconds before now. */
static void status_add_stale(cJSON *o, const struct zr_list *l, const size_t *order, time_t now, long max_age,
                             int with_names)
{
    cJSON *names = with_names ? cJSON_CreateArray() : NULL;
    size_t stale = 0;

    for (size_t i = 0; i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[order[i]];

        if (!tcat_is_stale(r, now, max_age))
            continue;
        if (stale++ < TOOLS_STALE_NAMES_MAX && names)
            cJSON_AddItemToArray(names, cJSON_CreateString(r->name));
    }
    cJSON_AddNumberToObject(o, "stale", (double)stale);
    if (names)
        cJSON_AddItemToObject(o, "staleRepositories", names);
}

/* The bytes a repository takes in "repositoryList", near enough to bound the body. */
static size_t status_list_entry_bytes(const struct zr_repo *r)
{
    size_t n = strlen(r->name) + 64;

    for (size_t b = 0; b < r->n_branches; b++)
        n += strlen(r->branches[b].name) + strlen(r->branches[b].version) + 32;
    return n;
}

/* Adds "repositoryList" (oldest first, at most TOOLS_REPOSITORY_LIST_MAX entries and about
 * TOOLS_REPOSITORY_LIST_BYTES) and "listed", how many it holds, to o. */
static void status_add_list(cJSON *o, const struct zr_list *l, const size_t *order)
{
    cJSON *list = cJSON_CreateArray();
    size_t n, bytes = 0;

    for (n = 0; n < l->n_repos && n < TOOLS_REPOSITORY_LIST_MAX; n++) {
        const struct zr_repo *r = &l->repos[order[n]];
        cJSON *e, *branches;

        bytes += status_list_entry_bytes(r);
        if (bytes > TOOLS_REPOSITORY_LIST_BYTES)
            break;
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", r->name);
        status_add_time(e, "indexTime", r->index_time);
        branches = cJSON_AddArrayToObject(e, "branches");
        for (size_t b = 0; b < r->n_branches; b++) {
            cJSON *br = cJSON_CreateObject();

            cJSON_AddStringToObject(br, "name", r->branches[b].name);
            cJSON_AddStringToObject(br, "commit", r->branches[b].version);
            cJSON_AddItemToArray(branches, br);
        }
        cJSON_AddItemToArray(list, e);
    }
    cJSON_AddNumberToObject(o, "listed", (double)n);
    cJSON_AddItemToObject(o, "repositoryList", list);
}

cJSON *tools_index_status_json(const struct zr_list *l, const struct index_status_opts *opts, time_t now)
{
    cJSON *o = status_index_json(l);
    int stale = opts && opts->max_age_seconds > 0, all = opts && opts->all;
    /* Sorted only when a part asks for it: a plain read (an older operator's) needs no order. */
    size_t *order = stale || all ? tcat_oldest_first(l) : NULL;

    if (stale)
        status_add_stale(o, l, order, now, opts->max_age_seconds, !opts->anonymous);
    if (all && !opts->anonymous)
        status_add_list(o, l, order);
    free(order);
    return o;
}

int tools_index_status(const struct connector_config *cfg, const struct index_status_opts *opts, char **json_out,
                       struct zk_err *err)
{
    const struct tool_ctx ctx = {cfg, NULL};
    const struct zr_list *l = NULL;
    cJSON *o;
    int rc;

    *json_out = NULL;
    rc = tcat_get(&ctx, &l, err);
    if (!rc) {
        o = tools_index_status_json(l, opts, time(NULL));
        *json_out = json_print(o);
        cJSON_Delete(o);
    }
    tcat_put(&ctx, l);
    return rc;
}

/* What the webserver's lines of corpus_status call the index: the one webserver by its URL, or the
 * search shards. */
static void status_where(const struct connector_config *cfg, char *out, size_t size)
{
    if (cfg->zoekt_shards)
        snprintf(out, size, "Search shards (%d)", cfg->zoekt_shards->n);
    else
        snprintf(out, size, "Search webserver %s", cfg->zoekt_url);
}

/* Appends a line per search shard of l: what it serves, or why it did not answer. */
static int status_shards_text(const struct zr_list *l, struct buf *text)
{
    const struct zr_shards *ss = &l->search_shards;
    struct status_shard sums[SHARD_MAX];
    char newest[32], oldest[32];
    int rc = ZK_OK;

    status_shard_sums(l, sums);
    for (int k = 0; !rc && k < ss->n && k < SHARD_MAX; k++) {
        if (ss->failed & (1u << k)) {
            rc = buf_printf(text, "  shard %d: did not answer: ", k);
            if (!rc)
                rc = fmt_put_cut(text, ss->why[k] ? ss->why[k] : "no reason given", STATUS_MESSAGE_MAX);
            if (!rc)
                rc = buf_putc(text, '\n');
            continue;
        }
        rfc3339_format(sums[k].newest, newest, sizeof(newest));
        rfc3339_format(sums[k].oldest, oldest, sizeof(oldest));
        rc = buf_printf(text, "  shard %d: %zu repositories, %lld index bytes, newest index %s, oldest index %s\n", k,
                        sums[k].repos, sums[k].index_bytes, sums[k].newest ? newest : "(none)",
                        sums[k].oldest ? oldest : "(none)");
    }
    return rc;
}

/* Reads the configured CodeSearchCorpus. Returns ZK_OK with *out (caller frees), or an error in msg. */
static int status_read_corpus(const struct connector_config *cfg, cJSON **out, char *msg, size_t size)
{
    const struct owncorpus corpus = {cfg->kubeconfig, cfg->corpus_namespace, cfg->corpus_name};
    struct kube_err kerr;
    int rc = owncorpus_get(&corpus, out, &kerr);

    if (rc)
        snprintf(msg, size, "%s%s", kerr.base.msg,
                 kerr.reason == KUBE_REASON_NOT_FOUND ? " (the corpus does not exist)" : "");
    return rc;
}

/* Appends the corpus part of the report to r->text and the structured object. */
static int status_corpus_part(const struct connector_config *cfg, struct tool_result *r, cJSON *root, int *failed)
{
    const cJSON *st, *conds, *c;
    cJSON *corpus = NULL, *summary;
    char msg[ZK_ERR_MSG_MAX + 64];
    int rc;

    if (!cfg->corpus_namespace || !cfg->corpus_name) {
        *failed = 1;
        cJSON_AddNullToObject(root, "corpus");
        cJSON_AddStringToObject(root, "corpusError", "no corpus configured");
        return buf_puts(&r->text, "Corpus: not configured (the connector was started without --corpus "
                                  "namespace/name), so only the webserver's view is reported.\n");
    }
    if (status_read_corpus(cfg, &corpus, msg, sizeof(msg))) {
        *failed = 1;
        cJSON_AddNullToObject(root, "corpus");
        cJSON_AddStringToObject(root, "corpusError", msg);
        return buf_printf(&r->text, "Corpus %s/%s: could not be read: %s\n", cfg->corpus_namespace,
                          cfg->corpus_name, msg);
    }
    st = json_obj(corpus, "status");
    conds = json_arr(st, "conditions");
    rc = buf_printf(&r->text, "Corpus %s/%s:\n", cfg->corpus_namespace, cfg->corpus_name);
    if (!rc && !st)
        rc = buf_puts(&r->text, "  no status yet (the operator has not reconciled it)\n");
    cJSON_ArrayForEach(c, conds) {
        const char *m = json_str(c, "message", "");

        if (!rc)
            rc = buf_printf(&r->text, "  %s=%s (%s)%s", json_str(c, "type", "?"), json_str(c, "status", "?"),
                            json_str(c, "reason", ""), m[0] ? ": " : "");
        /* Cut at a character boundary: a byte-precise cut could hand the agent invalid UTF-8. */
        if (!rc)
            rc = fmt_put_cut(&r->text, m, STATUS_MESSAGE_MAX);
        if (!rc)
            rc = buf_putc(&r->text, '\n');
    }
    if (!rc && st)
        rc = buf_printf(&r->text, "  repositories %lld, last index %s, oldest index %s, endpoint %s\n",
                        json_int(st, "repositoryCount", 0), json_str(st, "lastIndexTime", "(none)"),
                        json_str(st, "oldestIndexTime", "(none)"), json_str(st, "endpoint", "(none)"));
    summary = cJSON_AddObjectToObject(root, "corpus");
    cJSON_AddStringToObject(summary, "namespace", cfg->corpus_namespace);
    cJSON_AddStringToObject(summary, "name", cfg->corpus_name);
    cJSON_AddItemToObject(summary, "status", st ? cJSON_Duplicate(st, 1) : cJSON_CreateObject());
    cJSON_Delete(corpus);
    return rc;
}

/* Appends "Oldest indexes (5 of 121): a @0226d547abcd 41h ago, ...": the commit and age of the
 * STATUS_OLDEST_SHOWN repositories indexed longest ago, the first to go stale. */
static int status_oldest(const struct zr_list *l, struct buf *text)
{
    size_t *order = tcat_oldest_first(l), n = l->n_repos < STATUS_OLDEST_SHOWN ? l->n_repos : STATUS_OLDEST_SHOWN;
    struct fmt_indexed_repo oldest[STATUS_OLDEST_SHOWN];
    int rc;

    for (size_t i = 0; i < n; i++) {
        const struct zr_repo *r = &l->repos[order[i]];

        oldest[i] = (struct fmt_indexed_repo){r->name, r->n_branches ? r->branches[0].version : NULL, r->index_time};
    }
    rc = buf_printf(text, "Oldest indexes (%zu of %zu): ", n, l->n_repos);
    if (!rc)
        rc = fmt_indexed(oldest, n, time(NULL), text);
    if (!rc)
        rc = buf_putc(text, '\n');
    free(order);
    return rc;
}

struct status_state {
    const char *repo;
    char pattern[ZN_ARG_MAX + 1]; /* repo, normalised */
};

static int status_parse(const struct tool_ctx *ctx, const cJSON *args, void *state, struct tool_result *r)
{
    struct status_state *st = state;

    (void)ctx;
    if (targ_string(args, "repo", ZN_ARG_MAX, &st->repo, r) ||
        (st->repo && targ_repo_pattern("repo", st->repo, st->pattern, r)))
        return ZK_EINVAL;
    return ZK_OK;
}

/* No search: the webserver's side of the answer is the catalogue, shown as it is now. */
static int status_plan(const struct tool_ctx *ctx, void *state, enum tool_reading reading, struct tool_query *q,
                       struct tool_result *r)
{
    (void)ctx;
    (void)state;
    (void)reading;
    (void)r;
    q->catalogue_ms = ZLC_FRESH_MS;
    return ZK_OK;
}

/* The corpus's side comes from the Kubernetes API, read here: it is the one tool that asks it. */
static int status_render(const struct tool_ctx *ctx, void *state, struct tool_answer *a, struct tool_result *r,
                         struct zk_err *err)
{
    const struct connector_config *cfg = ctx->cfg;
    struct status_state *st = state;
    const struct zr_list *l = a->list;
    struct tcat_index_summary s;
    cJSON *root = cJSON_CreateObject(), *repos = NULL;
    struct zk_err ferr = {0};
    int corpus_failed = 0, rc;
    char newest[32], oldest[32], where[1100];

    buf_reset(&r->text);
    status_where(cfg, where, sizeof(where));
    if ((rc = status_corpus_part(cfg, r, root, &corpus_failed)))
        goto out;
    if (!l) {
        cJSON_AddNullToObject(root, "index");
        cJSON_AddStringToObject(root, "indexError", a->list_err.msg);
        /* Neither source answered: the agent cannot rely on the index at all. The webserver's failure is
         * the one counted: it is what every other tool depends on. */
        r->is_error = corpus_failed;
        r->code = corpus_failed ? a->list_err.code : ZK_OK;
        rc = buf_printf(&r->text, "%s: could not be read: %s\n", where, a->list_err.msg);
        goto done;
    }
    tcat_summarise(l, &s);
    rfc3339_format(s.newest, newest, sizeof(newest));
    rfc3339_format(s.oldest, oldest, sizeof(oldest));
    rc = buf_printf(&r->text, "%s: %zu repositories, %lld shards, newest index %s, oldest index %s%s%s%s\n",
                    where, l->n_repos, l->shards, s.newest ? newest : "(none)", s.oldest ? oldest : "(none)",
                    s.zoekt_version[0] ? ", Zoekt " : "", s.zoekt_version, l->crashes ? " (some shards failed to load)" : "");
    if (!rc && l->search_shards.n)
        rc = status_shards_text(l, &r->text);
    cJSON_AddItemToObject(root, "index", status_index_json(l));
    if (!rc && !st->repo && l->n_repos)
        rc = status_oldest(l, &r->text);
    /* The repositories asked about, selected by the same rules as search_code's repo. */
    if (!rc && st->repo) {
        struct fmt_repos_opts fo = {st->pattern, STATUS_REPOS_MAX, cfg->output_budget, time(NULL), 0, NULL, NULL};

        if (!(rc = fmt_repos(l, &fo, &r->text, &repos, &ferr)))
            cJSON_AddItemToObject(root, "repositories", repos);
    }
done:
    if (rc)
        goto out;
    r->structured = root;
    root = NULL;
out:
    if (rc)
        zk_err_set(err, rc, "corpus_status: the report exceeds the output buffer");
    cJSON_Delete(root);
    return rc;
}

const struct tool_def tool_corpus_status_def = {sizeof(struct status_state), status_parse, status_plan,
                                                status_render, NULL};
