/* pipeline.c: the driver's query step between a tool's plan and its render; see pipeline.h. */
#include "connector/tools/pipeline.h"

#include "connector/format/partial.h"
#include "connector/tools/args.h"
#include "connector/tools/catalogue.h"
#include "connector/zoekt/shards.h"

#include <stdlib.h>
#include <string.h>

/* Bound on the notes above an answer: a sentence per repository argument, each cut to a few hundred
 * bytes, for the at most 50 of them a tool takes. A sentence that does not fit is dropped: the notes
 * are a courtesy (a failed append empties the buffer). */
#define TPIPE_NOTE_MAX 16384

/* Files a ranked query may ask for: Zoekt ranks them again for each request, so a page past this many
 * costs a search that sends them all. */
#define TPIPE_RANKED_MAX 1000

struct zc_conn tpipe_conn(const struct tool_ctx *ctx, long timeout_ms)
{
    struct zc_conn c = {ctx->cfg->zoekt_url, ctx->cfg->zoekt_token, timeout_ms, ctx->cancel, ctx->cfg->zoekt_pool,
                        ctx->cfg->zoekt_budget};

    return c;
}

/* Runs q's search into a->res (which the caller frees, whatever the result). A ranked query is asked
 * for one file more than it shows, and, while files of equal score straddle the cut
 * (zr_rank_is_prefix), for more, up to TPIPE_RANKED_MAX + 1: only then is the page the same on every
 * request. a->ties says the cut still straddles equal scores there (or a wider answer failed: the
 * narrower one stands). route: the search shards to ask (tcat_route; 0: all). */
static int tpipe_search(const struct tool_ctx *ctx, struct tool_query *q, unsigned route, struct tool_answer *a,
                        struct zk_err *err)
{
    struct zc_conn c = tpipe_conn(ctx, ctx->cfg->search_timeout_ms);
    const struct zs_set *shards = ctx->cfg->zoekt_shards;
    size_t wanted = q->skip + q->page, asked = wanted + 1;
    struct zr_search wider;
    struct zk_err werr = {0};
    int rc;

    a->ties = 0;
    if (!q->ranked)
        return zs_search(shards, route, &c, q->zq, &q->so, &q->ro, &a->res, err);
    q->so.max_files = (int)asked;
    if ((rc = zs_search(shards, route, &c, q->zq, &q->so, &q->ro, &a->res, err)))
        return rc;
    zr_rank(&a->res);
    while (!zr_rank_is_prefix(&a->res, wanted, asked)) {
        if (asked > TPIPE_RANKED_MAX) {
            a->ties = 1;
            break;
        }
        asked = asked * 4 > TPIPE_RANKED_MAX + 1 ? TPIPE_RANKED_MAX + 1 : asked * 4;
        q->so.max_files = (int)asked;
        memset(&wider, 0, sizeof(wider));
        /* A wider answer that a shard missed, which the narrower one had, would lose that shard's files:
         * it counts as failed. */
        if (zs_search(shards, route, &c, q->zq, &q->so, &q->ro, &wider, &werr) ||
            (wider.shards.failed & ~a->res.shards.failed)) {
            zr_search_free(&wider);
            a->ties = 1;
            break;
        }
        zr_search_free(&a->res);
        a->res = wider;
        zr_rank(&a->res);
    }
    return ZK_OK;
}

/* Runs q and, when q may be read literally and Zoekt refused the pattern or found nothing, the literal
 * plan's query instead (q then holds it). A pattern RE2 cannot parse (an unbalanced parenthesis, a
 * lone '[') is nearly always meant literally; one that parses but matches nothing often is too: code
 * such as f(5 * time.Second) is a valid regex that matches no code. Returns the search's code with err
 * set; a literal plan that fails leaves r failed and returns ZK_OK. */
static int tpipe_query(const struct tool_ctx *ctx, const struct tool_def *def, void *state, struct tool_query *q,
                       struct tool_answer *a, struct tool_result *r, struct zk_err *err)
{
    struct tool_query literal;
    /* The literal reading keeps the repository arguments, so one route serves both. */
    unsigned route = tcat_route(ctx, q->repos, q->n_repos);
    int rc = tpipe_search(ctx, q, route, a, err), invalid = rc == ZK_EINVAL;

    if (!q->literal_fallback || !(invalid || (rc == ZK_OK && a->res.n_files == 0)))
        return rc;
    memset(&literal, 0, sizeof(literal));
    if (def->plan(ctx, state, TOOL_READ_LITERALLY, &literal, r)) {
        free(literal.zq);
        return ZK_OK;
    }
    free(q->zq);
    *q = literal;
    zr_search_free(&a->res);
    memset(&a->res, 0, sizeof(a->res));
    memset(err, 0, sizeof(*err));
    if (buf_puts(&a->note, invalid ? "The pattern is not a valid regular expression, so it was searched as literal "
                                     "text."
                                   : "As a regular expression the pattern matched nothing; read as literal text,"))
        buf_reset(&a->note);
    rc = tpipe_search(ctx, q, route, a, err);
    if (!rc && !invalid &&
        buf_puts(&a->note, a->res.n_files ? " it matched what is shown." : " it matched nothing either."))
        buf_reset(&a->note);
    return rc;
}

/* Puts the note of a partial answer (connector/format/partial.h) above r's text, and as "partialAnswer"
 * in its structured content, when missing records a search shard that did not answer: every tool
 * alike, whatever its render made of the answers the other shards gave. The text's bound grows by the
 * note's, which is bounded on its own: the answer is not cut to make room for it. */
static void tpipe_partial(const struct tool_ctx *ctx, const struct zr_shards *missing, struct tool_result *r)
{
    const struct zr_list *catalogue;
    struct buf note, text;

    if (!missing || !missing->failed)
        return;
    catalogue = tcat_get_complete(ctx);
    buf_init(&note, FMT_PARTIAL_MAX);
    if (fmt_partial_note(missing, catalogue, &note) == ZK_OK && note.len) {
        buf_init(&text, r->text.max + note.len + 1);
        if (buf_append(&text, note.data, note.len) || buf_putc(&text, '\n') ||
            (r->text.len && buf_append(&text, r->text.data, r->text.len))) {
            buf_free(&text);
        } else {
            buf_free(&r->text);
            r->text = text;
        }
        if (cJSON_IsObject(r->structured))
            cJSON_AddStringToObject(r->structured, "partialAnswer", note.data);
    }
    buf_free(&note);
    tcat_put(ctx, catalogue);
}

int tpipe_run(const struct tool_ctx *ctx, const char *tool, const struct tool_def *def, void *state,
              struct tool_result *r, struct zk_err *err)
{
    struct tool_query q;
    struct tool_answer a;
    struct zk_err qerr = {0};
    int rc = ZK_OK;

    memset(&q, 0, sizeof(q));
    memset(&a, 0, sizeof(a));
    buf_init(&a.note, TPIPE_NOTE_MAX);
    buf_init(&a.indexed, TPIPE_NOTE_MAX);
    if (def->plan(ctx, state, TOOL_READ_AS_GIVEN, &q, r))
        goto out;
    if (q.zq) {
        int src = tpipe_query(ctx, def, state, &q, &a, r, &qerr);
        size_t skip;

        if (r->is_error)
            goto out;
        if (src) {
            (void)targ_fail_code(r, src, "%s failed: %s\nQuery sent: %s", tool, qerr.msg, q.zq);
            goto out;
        }
        a.zq = q.zq;
        /* A ranked page starts after the files the earlier pages showed. */
        skip = !q.ranked ? 0 : q.skip < a.res.n_files ? q.skip : a.res.n_files;
        a.page = a.res;
        a.page.files += skip;
        a.page.n_files -= skip;
        /* A shard that did not answer may serve the repositories: the partial answer's note says which
         * it serves, and whether they exist cannot be told. */
        if (a.res.n_files == 0 && q.n_repos && !q.skip && !a.res.shards.failed)
            a.no_repo = tcat_explain_empty(ctx, q.repos, q.n_repos, &a.note);
        if (q.linked && a.page.n_files) {
            struct zr_search linked = a.page;

            linked.n_files = q.linked < a.page.n_files ? q.linked : a.page.n_files;
            if (q.indexed)
                tcat_indexed(ctx, &linked, &a.indexed);
            tcat_web_urls(ctx, linked.files, linked.n_files);
        }
    }
    if (q.catalogue_ms && tcat_get_within(ctx, q.catalogue_ms, &a.list, &a.list_err) != ZK_OK)
        a.list = NULL;
    rc = def->render(ctx, state, &a, r, err);
    /* The search's shards decide whether the answer is partial; a tool without one answers from the
     * catalogue. */
    if (!rc)
        tpipe_partial(ctx, q.zq ? &a.res.shards : a.list ? &a.list->search_shards : NULL, r);
out:
    tcat_put(ctx, a.list);
    buf_free(&a.note);
    buf_free(&a.indexed);
    zr_search_free(&a.res);
    free(q.zq);
    return rc;
}
