/* shards.h: a corpus served by several zoekt-webservers ("search shards"), each holding a disjoint part
 * of its repositories (lib/shard.h assigns them), asked as if they were one.
 *
 * --shard-urls names them in shard order: the pod's own shard is its local zoekt-webserver, the others
 * are the nginx of another shard's pods, which proxies /api/search and /api/list. zs_search and zs_list
 * send the call to every shard at once (lib/fanout.h), or a search to those a route names, and merge
 * the answers (merge.h). A shard that fails (down, past the deadline, an HTTP error) is recorded in
 * the answer's zr_shards with its error, and the call succeeds with the others' answers; a shard not
 * asked counts as answering (nothing the query selects is there), so a routed search whose every shard
 * fails is a partial answer of no files. Only when every shard is asked and fails does the call fail,
 * with the first one's error; and whenever no shard answered and one refused the pattern as no regular
 * expression, with that refusal: it is the query's, and every shard meets it alike. Given no set, they
 * are zc_search and zc_list.
 *
 * Credentials: a shard on a loopback address is the pod's own zoekt-webserver and gets the connection's
 * token (--zoekt-token-file), as one webserver does. Any other is another shard's nginx, which checks
 * the gateway's bearer tokens, so it gets the one gateway_token gives (asked once per call, so that a
 * rotated token is sent from the next call on), or, when there is none, the connection's token.
 *
 * Memory: each shard's answer is bounded as one webserver's (CONNECTOR_ZOEKT_RESPONSE_MAX) and counted in
 * the connection's budget while it is held, so N shards at once hold no more than the process-wide
 * bound allows: past it, a shard's answer fails as busy and the call is a partial answer.
 *
 * Thread-safety: a set is read-only once zs_parse has filled it; zs_search and zs_list may run from any
 * number of threads at once (gateway_token must be safe to call so). */
#ifndef ZK_ZOEKT_SHARDS_H
#define ZK_ZOEKT_SHARDS_H

#include "connector/zoekt/client.h"
#include "shard.h"

#include <stddef.h>

/* Bound on the gateway token sent to other shards. */
#define ZS_TOKEN_MAX 4096

struct zs_set {
    int n;                  /* shards, 2..SHARD_MAX */
    char *urls[SHARD_MAX];  /* shard k's base URL (heap), no trailing slash */
    int loopback[SHARD_MAX]; /* 1: the URL's host is a loopback address (the pod's own webserver) */
    /* Writes the gateway token into out (size bytes, NUL-terminated) and returns 1, or returns 0 when
     * there is none. NULL: no gateway tokens. */
    int (*gateway_token)(void *arg, char *out, size_t size);
    void *gateway_arg;
};

/* Parses --shard-urls: 2 to SHARD_MAX http:// or https:// URLs, comma-separated, in shard order, into
 * *out (zeroed first; zs_free frees it, also after a failure). Returns ZK_OK, or ZK_EINVAL with err
 * saying what is wrong (how many URLs it takes, which one is not a URL). Pure. */
int zs_parse(const char *csv, struct zs_set *out, struct zk_err *err) __attribute__((warn_unused_result));
void zs_free(struct zs_set *s);

/* Whether url's host is a loopback address: localhost, 127.0.0.0/8 or [::1]. Pure. */
int zs_is_loopback(const char *url);

/* zc_search over the shards of set (NULL: c's webserver alone) that route names (bit k: shard k; 0:
 * every shard; merge.h's zm_route gives it for a search restricted to some repositories), with c's
 * timeout, cancel flag, pool and budget for each; out->shards records the shards that failed. A shard
 * not asked is not a failure: the query selects none of its repositories. Same codes as zc_search. */
int zs_search(const struct zs_set *set, unsigned route, const struct zc_conn *c, const char *query,
              const struct zc_search_opts *o, const struct zr_opts *ro, struct zr_search *out, struct zk_err *err);

/* zc_list over the shards of set (NULL: c's webserver alone); out->search_shards records the shards
 * that failed, and each repository its shard. Same codes as zc_list. */
int zs_list(const struct zs_set *set, const struct zc_conn *c, const char *query, const struct zr_opts *ro,
            struct zr_list *out, struct zk_err *err);

#endif
