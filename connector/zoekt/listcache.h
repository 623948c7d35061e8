/* listcache.h: the connector's one copy of Zoekt's repository list, shared by every reader: the tools
 * that need to know which repositories exist (list_repositories, corpus_status, the repo checks of
 * list_files, read_file and find_symbol, the explanation of an empty search, the "Indexed:" line) and
 * the unauthenticated /index-status endpoint.
 *
 * Why one copy: the list is the largest answer Zoekt gives (several kilobytes per repository, 54 MiB
 * for 10,000 repositories), and a reader per request that fetches and parses it on its own multiplies
 * that by the number of clients, which anybody who can reach /index-status controls. Here at most one
 * fetch is in flight for the whole process, every reader in the meantime waits for it or reads the
 * copy it has, and the copy held (names, branches, times and counts, a couple of hundred bytes per
 * repository) is shared, not duplicated per reader.
 *
 * Two ways to read:
 *   zlc_get          a copy no older than max_age_ms, waiting for a fetch when the copy is older (or
 *                    for the fetch already in flight). For readers that show the list itself.
 *   zlc_index_times  the index times of a few repositories from the copy that is there; fetches only
 *                    when the copy is older than the TTL and no one else is fetching, and otherwise
 *                    never waits. For the "Indexed:" line of every search, a courtesy.
 *
 * The copy also holds each repository's branch commits: when a search answer's commit for a
 * repository is not among them, the repository was reindexed after the copy was made, and its old
 * index time would be wrong with the new commit, so zlc_index_times gives no time for it and marks the
 * copy for a fetch (unless the copy is younger than the back-off).
 *
 * Pure: no I/O of its own. The caller hands each read the function that fetches the list (zc_list
 * with that call's connection and cancel flag). After a failed fetch, no fetch starts before the
 * back-off has passed: readers in that window get the failure's error at once (zlc_get) or the old
 * copy (zlc_index_times). A cancelled fetch (ZK_ECANCELLED: the fetching caller went away) starts no
 * back-off, and a reader that was waiting for it fetches itself.
 *
 * Thread-safety: every function but zlc_free may be called from any thread at once. One mutex guards
 * the copy and the refresh state; it is held only to decide, to look names up and to swap in a new
 * copy, never during a fetch. A copy handed out by zlc_get stays valid and unchanged until zlc_put,
 * even when a newer one replaces it meanwhile. zlc_free must not race with a reader and no copy may be
 * held then (main.c frees the cache after the HTTP front has stopped its threads).
 *
 * For a corpus served by several search shards (shards.h), a list some shard did not answer is a copy
 * like any other (its search_shards say which shard is missing), but the cache also keeps the last copy
 * every shard answered, the catalogue that names the repositories a missing shard serves
 * (zlc_complete).
 *
 * Memory: one copy is current (and, while the current one is partial, the last complete one), and a
 * replaced one lives until its last reader puts it. The list being
 * fetched is bounded like every Zoekt answer and parsed without a tree (zr_parse_list), so a fetch
 * costs about twice the list's size while it runs, once for the whole process. */
#ifndef ZK_ZOEKT_LISTCACHE_H
#define ZK_ZOEKT_LISTCACHE_H

#include "connector/zoekt/result.h"
#include "err.h"

#include <stddef.h>
#include <time.h>

/* Ages are shown to the minute or the hour, and index runs (the refresh pod's passes, the nightly
 * Job) are minutes apart: a list a minute old shows the same age, while a search a second costs one
 * list request a minute instead of one per search. */
#define ZLC_TTL_MS 60000
/* Readers that show the list itself (list_repositories, corpus_status, /index-status) take a copy at
 * most this old: fresh enough that a reindex shows at once to a person or an agent asking again, while
 * a flood of requests costs Zoekt one list every couple of seconds, not one per request. */
#define ZLC_FRESH_MS 2000
/* After a failed fetch (Zoekt down or slow), the calls of the next few seconds do not each wait for
 * another one: they show what the old copy says, or no age. */
#define ZLC_BACKOFF_MS 5000

struct zlc_opts {
    long long ttl_ms;           /* a copy older than this is fetched again */
    long long backoff_ms;       /* no fetch sooner than this after a failed one */
    long long (*now_ms)(void);  /* the clock (milliseconds, monotonic); NULL: lib/monotime.h */
};

/* Fetches Zoekt's whole repository list into *out (freed by the cache with zr_list_free, also after a
 * failure). Returns ZK_OK or an error code with err set. */
typedef int (*zlc_fetch_fn)(void *arg, struct zr_list *out, struct zk_err *err);

struct zlc;

/* A new, empty cache; o NULL means ZLC_TTL_MS, ZLC_BACKOFF_MS and the monotonic clock. */
struct zlc *zlc_new(const struct zlc_opts *o);
void zlc_free(struct zlc *c);

/* Sets *out to a copy of the list made no longer than max_age_ms ago, or by a fetch that started
 * after this call did (a reader that waited for a slow fetch takes its answer, however old). Fetches
 * with fetch(arg, ...) when needed and no one else is; waits for the one who is. Returns ZK_OK (the
 * caller hands *out back with zlc_put), or the error of the fetch this call made or waited for, or of
 * the last failed one while its back-off lasts, with err set and *out NULL. */
int zlc_get(struct zlc *c, long long max_age_ms, zlc_fetch_fn fetch, void *arg, const struct zr_list **out,
            struct zk_err *err) __attribute__((warn_unused_result));

/* Hands back a copy zlc_get gave; l may be NULL. */
void zlc_put(struct zlc *c, const struct zr_list *l);

/* The newest copy that no search shard was missing from (all of them, for one webserver), however
 * old, without fetching: the caller hands it back with zlc_put. NULL when there is none yet. */
const struct zr_list *zlc_complete(struct zlc *c);

/* Sets times[i] to the index time of the repository named names[i] (as zr_repo.name: the mirror
 * prefix stripped) as of commits[i] (a branch's commit; "" or commits NULL: any), 0 when the copy does
 * not hold the repository, holds no time for it or holds it at other commits, after refreshing the
 * copy first with fetch(arg, ...) when it is older than the TTL and nobody is fetching or backing off.
 * Returns 1 when a copy was read, 0 when there is none yet (every time 0). */
int zlc_index_times(struct zlc *c, const char *const *names, const char *const *commits, size_t n, time_t *times,
                    zlc_fetch_fn fetch, void *arg);

#endif
