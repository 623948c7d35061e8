/* shards.c: see shards.h. */
#include "connector/zoekt/shards.h"

#include "connector/zoekt/merge.h"
#include "fanout.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int zs_is_loopback(const char *url)
{
    const char *host = strstr(url, "://");
    size_t n;

    if (!host)
        return 0;
    host += 3;
    if (strncmp(host, "[::1]", 5) == 0)
        return host[5] == '\0' || host[5] == ':' || host[5] == '/';
    n = strcspn(host, ":/?#");
    return (n == 9 && strncasecmp(host, "localhost", 9) == 0) || (n > 4 && strncmp(host, "127.", 4) == 0);
}

/* Checks and stores the URL of shard k, the n bytes at s. */
static int zs_add(struct zs_set *set, const char *s, size_t n, struct zk_err *err)
{
    int k = set->n;
    const char *host;
    char *url;

    if (n == 0)
        return zk_err_set(err, ZK_EINVAL, "URL %d is empty (two commas in a row, or one at an end)", k);
    url = mem_strndup(s, n);
    host = strncmp(url, "http://", 7) == 0 ? url + 7 : strncmp(url, "https://", 8) == 0 ? url + 8 : NULL;
    if (!host || !*host || *host == '/') {
        zk_err_set(err, ZK_EINVAL, "URL %d (\"%.200s\") is not an http:// or https:// URL with a host", k, url);
        free(url);
        return ZK_EINVAL;
    }
    /* The client appends /api/search: a trailing slash would make "//api/search". */
    while (n > 0 && url[n - 1] == '/')
        url[--n] = '\0';
    set->urls[k] = url;
    set->loopback[k] = zs_is_loopback(url);
    set->n++;
    return ZK_OK;
}

int zs_parse(const char *csv, struct zs_set *out, struct zk_err *err)
{
    size_t count = 1;
    const char *p;
    int rc = ZK_OK;

    memset(out, 0, sizeof(*out));
    for (p = csv; *p; p++)
        count += *p == ',';
    if (count < 2 || count > SHARD_MAX)
        return zk_err_set(err, ZK_EINVAL, "%zu URL%s given; it takes 2 to %d, one per shard in shard order (a "
                          "corpus has at most %d shards; one shard is served with --zoekt-url alone)",
                          count, count == 1 ? "" : "s", SHARD_MAX, SHARD_MAX);
    for (p = csv; !rc; p++) {
        size_t n = strcspn(p, ",");

        rc = zs_add(out, p, n, err);
        p += n;
        if (!*p)
            break;
    }
    return rc;
}

void zs_free(struct zs_set *s)
{
    for (int k = 0; k < SHARD_MAX; k++)
        free(s->urls[k]);
    memset(s, 0, sizeof(*s));
}

/* One call to the shards asked: what each is asked (a search when so is set, else a list), and its
 * answer. Each fan-out thread writes only its own shard's members. */
struct zs_call {
    const struct zs_set *set;
    int asked[SHARD_MAX];           /* the shards asked, in shard order */
    int n_asked;
    const struct zc_conn *c;
    const char *gateway;            /* the token for shards not on loopback, or NULL */
    const char *query;
    const struct zc_search_opts *so;
    const struct zr_opts *ro;
    struct zr_search searches[SHARD_MAX];
    struct zr_list lists[SHARD_MAX];
    int rc[SHARD_MAX];
    struct zk_err err[SHARD_MAX];
    char token[ZS_TOKEN_MAX];
};

static void zs_call_shard(void *ud, size_t i)
{
    struct zs_call *call = ud;
    struct zc_conn conn = *call->c;
    int k = call->asked[i];

    conn.base_url = call->set->urls[k];
    if (!call->set->loopback[k] && call->gateway)
        conn.token = call->gateway;
    if (call->so) {
        call->rc[k] = zc_search(&conn, call->query, call->so, call->ro, &call->searches[k], &call->err[k]);
        if (call->rc[k])
            zr_search_free(&call->searches[k]);
    } else {
        call->rc[k] = zc_list(&conn, call->query, call->ro, &call->lists[k], &call->err[k]);
        if (call->rc[k])
            zr_list_free(&call->lists[k]);
    }
}

/* Asks the shards at once and records in *failed those that did not answer. Returns ZK_OK when one
 * answered at least; else the chosen shard's code with its message in err (see shards.h). */
static int zs_call_run(struct zs_call *call, struct zr_shards *failed, struct zk_err *err)
{
    const struct zs_set *set = call->set;
    int answered = 0, pick = -1;

    if (set->gateway_token && set->gateway_token(set->gateway_arg, call->token, sizeof(call->token)))
        call->gateway = call->token;
    fanout_run((size_t)call->n_asked, (size_t)call->n_asked, zs_call_shard, call);
    memset(failed, 0, sizeof(*failed));
    failed->n = set->n;
    for (int i = 0; i < call->n_asked; i++) {
        int k = call->asked[i];

        if (call->rc[k] == ZK_OK) {
            answered++;
            continue;
        }
        failed->failed |= 1u << k;
        failed->why[k] = mem_strdup(call->err[k].msg[0] ? call->err[k].msg : zk_strerror(call->rc[k]));
        if (pick < 0 && call->rc[k] == ZK_EINVAL)
            pick = k;
    }
    /* A routed call none of whose shards answered is a partial answer of no files (the shards not
     * asked hold nothing it selects), unless a shard refused the pattern: that is the query's fault,
     * which every shard meets alike, and the caller retries it read literally. */
    if (answered || (pick < 0 && call->n_asked < set->n))
        return ZK_OK;
    zr_shards_free(failed);
    pick = pick < 0 ? call->asked[0] : pick;
    if (err)
        *err = call->err[pick];
    return call->rc[pick];
}

/* A call to the shards of set that route names (0: all of them). */
static struct zs_call *zs_call_new(const struct zs_set *set, unsigned route, const struct zc_conn *c,
                                   const char *query, const struct zc_search_opts *so, const struct zr_opts *ro)
{
    struct zs_call *call = mem_calloc(1, sizeof(*call));

    route &= (1u << set->n) - 1;
    for (int k = 0; k < set->n; k++)
        if (!route || (route & (1u << k)))
            call->asked[call->n_asked++] = k;
    call->set = set;
    call->c = c;
    call->query = query;
    call->so = so;
    call->ro = ro;
    return call;
}

/* Frees the call with whatever answers are left in it (a merge takes those it uses). */
static void zs_call_free(struct zs_call *call)
{
    for (int k = 0; k < call->set->n; k++) {
        zr_search_free(&call->searches[k]);
        zr_list_free(&call->lists[k]);
    }
    free(call);
}

int zs_search(const struct zs_set *set, unsigned route, const struct zc_conn *c, const char *query,
              const struct zc_search_opts *o, const struct zr_opts *ro, struct zr_search *out, struct zk_err *err)
{
    struct zs_call *call;
    struct zr_shards failed;
    struct zc_search_opts each;
    int rc;

    if (!set)
        return zc_search(c, query, o, ro, out, err);
    memset(out, 0, sizeof(*out));
    /* Each shard asked is asked for the whole page (the global top max_files may all be in one shard)
     * but only for its part of the matches to collect: a broad query ("err") that one webserver stops
     * at the total would otherwise cost N times the work (measured: p50 56 ms on one shard, 6 s on
     * three sharing the same two cores). */
    each = *o;
    call = zs_call_new(set, route, c, query, &each, ro);
    each.total_max_match_count =
        (o->total_max_match_count > 0 ? o->total_max_match_count : ZC_TOTAL_MAX_MATCH_COUNT) / call->n_asked;
    if ((rc = zs_call_run(call, &failed, err)) == ZK_OK) {
        zm_search(call->searches, set->n, o->max_files > 0 ? (size_t)o->max_files : 0, out);
        out->shards = failed;
    }
    zs_call_free(call);
    return rc;
}

int zs_list(const struct zs_set *set, const struct zc_conn *c, const char *query, const struct zr_opts *ro,
            struct zr_list *out, struct zk_err *err)
{
    struct zs_call *call;
    struct zr_shards failed;
    int rc;

    if (!set)
        return zc_list(c, query, ro, out, err);
    memset(out, 0, sizeof(*out));
    call = zs_call_new(set, 0, c, query, NULL, ro);
    if ((rc = zs_call_run(call, &failed, err)) == ZK_OK) {
        zm_list(call->lists, set->n, out);
        out->search_shards = failed;
    }
    zs_call_free(call);
    return rc;
}
