/* listcache.h: a small copy of Zoekt's repository list, each repository's name and index time, so
 * that search_code's "Indexed:" header can say how old each answer's index is without asking Zoekt's
 * /api/list on every call.
 *
 * The copy also holds each repository's branch commits: when a search answer's commit for a
 * repository is not among them, the repository was reindexed after the copy was made, and its old
 * index time would be wrong with the new commit, so the lookup gives no time for it and the next call
 * fetches the list again (unless the copy is younger than the back-off).
 *
 * Pure: no I/O of its own. The caller hands each lookup the function that fetches the list (zc_list
 * with that call's connection and cancel flag) and the cache decides whether to call it: only when the
 * copy is older than the TTL, when the last failure is more than the back-off ago, and when no other
 * caller is fetching already (one refresh in flight at most). The caller that fetches waits for its
 * fetch and reads the new copy; the others read the old copy meanwhile, or, before the first copy,
 * get no index times. A failed fetch keeps the old copy.
 *
 * Thread-safety: every function but zlc_free may be called from any thread at once. One mutex guards
 * the copy and the refresh state; it is held only to decide, to look names up and to swap in a new
 * copy, never during a fetch. zlc_free must not race with a lookup (main.c frees the cache after the
 * HTTP front has stopped its threads).
 *
 * Memory: the copy holds a name, a time and the branch commits per repository (the strings in one
 * block), about a hundred bytes each, not the shards, sizes and metadata of the list it was made from. The list being fetched is
 * the same one list_repositories reads, bounded like every Zoekt answer. */
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
/* After a failed fetch (Zoekt down or slow), the calls of the next few seconds do not each wait for
 * another one: they show what the old copy says, or no age. */
#define ZLC_BACKOFF_MS 5000

struct zlc_opts {
    long long ttl_ms;           /* a copy older than this is fetched again */
    long long backoff_ms;       /* no fetch sooner than this after a failed one */
    long long (*now_ms)(void);  /* the clock (milliseconds, monotonic); NULL: lib/monotime.h */
};

/* Fetches Zoekt's whole repository list into *out (freed by the cache with zr_list_free, also after a
 * failure). Returns ZK_OK or an error code; ZK_ECANCELLED (the caller's call was cancelled) starts
 * no back-off, since Zoekt did not fail. */
typedef int (*zlc_fetch_fn)(void *arg, struct zr_list *out, struct zk_err *err);

struct zlc;

/* A new, empty cache; o NULL means ZLC_TTL_MS, ZLC_BACKOFF_MS and the monotonic clock. */
struct zlc *zlc_new(const struct zlc_opts *o);
void zlc_free(struct zlc *c);

/* Sets times[i] to the index time of the repository named names[i] (as zr_repo.name: the mirror
 * prefix stripped) as of commits[i] (a branch's commit; "" or commits NULL: any), 0 when the copy does
 * not hold the repository, holds no time for it or holds it at other commits, after refreshing the
 * copy first with fetch(arg, ...) when the rules above say this caller should. Returns 1 when a copy
 * was read, 0 when there is none yet (every time 0). */
int zlc_index_times(struct zlc *c, const char *const *names, const char *const *commits, size_t n, time_t *times,
                    zlc_fetch_fn fetch, void *arg);

#endif
