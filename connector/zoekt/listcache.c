/* listcache.c: see listcache.h. */
#include "connector/zoekt/listcache.h"

#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One copy of the list, shared by its readers. */
struct zlc_copy {
    struct zr_list list; /* first member: a reader's const struct zr_list * is the copy's address */
    long long made_ms;   /* when its fetch started */
    int refs;            /* the cache's own while current, another while the last complete one, and one
                          * per reader */
};

struct zlc {
    pthread_mutex_t mu;
    pthread_cond_t fetched; /* broadcast when a fetch ends, whatever its outcome */
    struct zlc_opts o;
    struct zlc_copy *copy;  /* NULL until the first fetch succeeds */
    struct zlc_copy *complete; /* the newest copy no search shard was missing from, or NULL; the cache
                                * holds a reference of its own on it */
    int fetching;           /* a caller is fetching (outside the lock) */
    unsigned long fetches;  /* fetches ended so far, so that a waiter knows one ended */
    int last_rc;            /* the outcome of the last fetch that ended */
    struct zk_err last_err; /* its error, for the readers of its back-off */
    long long retry_at_ms;  /* no fetch before this, after a failed one */
};

struct zlc *zlc_new(const struct zlc_opts *o)
{
    struct zlc *c = mem_calloc(1, sizeof(*c));

    c->o = o ? *o : (struct zlc_opts){ZLC_TTL_MS, ZLC_BACKOFF_MS, NULL};
    if (!c->o.now_ms)
        c->o.now_ms = monotime_ms;
    mem_mutex_init(&c->mu);
    mem_cond_init(&c->fetched, 0);
    return c;
}

static void zlc_copy_free(struct zlc_copy *k)
{
    if (!k)
        return;
    zr_list_free(&k->list);
    free(k);
}

/* Drops one reference to k with c->mu held; returns k when that was the last one (the caller frees it
 * after unlocking), else NULL. */
static struct zlc_copy *zlc_unref_locked(struct zlc_copy *k)
{
    return k && --k->refs == 0 ? k : NULL;
}

void zlc_free(struct zlc *c)
{
    if (!c)
        return;
    zlc_copy_free(zlc_unref_locked(c->copy));
    zlc_copy_free(zlc_unref_locked(c->complete));
    pthread_cond_destroy(&c->fetched);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Fetches the list and swaps it in, or starts the back-off, then wakes the waiters. The caller has
 * claimed the fetch and holds c->mu, which is released during the fetch and held again on return.
 * Returns the fetch's outcome. */
static int zlc_refresh_locked(struct zlc *c, long long started, zlc_fetch_fn fetch, void *arg)
{
    struct zlc_copy *fresh = mem_calloc(1, sizeof(*fresh)), *old = NULL, *old_complete = NULL;
    struct zk_err err = {0};
    int rc;

    pthread_mutex_unlock(&c->mu);
    rc = fetch(arg, &fresh->list, &err);
    if (rc != ZK_OK) {
        zlc_copy_free(fresh);
        fresh = NULL;
    }
    pthread_mutex_lock(&c->mu);
    if (fresh) {
        fresh->made_ms = started;
        fresh->refs = 1;
        old = zlc_unref_locked(c->copy);
        c->copy = fresh;
        if (!fresh->list.search_shards.failed) {
            fresh->refs++;
            old_complete = zlc_unref_locked(c->complete);
            c->complete = fresh;
        }
    } else if (rc != ZK_ECANCELLED) {
        c->retry_at_ms = c->o.now_ms() + c->o.backoff_ms;
    }
    c->last_rc = rc;
    c->last_err = err;
    c->fetching = 0;
    c->fetches++;
    pthread_cond_broadcast(&c->fetched);
    if (old || old_complete) {
        /* Nobody reads the old copies any more: free them without holding up the waiters. */
        pthread_mutex_unlock(&c->mu);
        zlc_copy_free(old);
        zlc_copy_free(old_complete);
        pthread_mutex_lock(&c->mu);
    }
    return rc;
}

/* Hands the current copy to a reader, with c->mu held. */
static const struct zr_list *zlc_share_locked(struct zlc *c)
{
    c->copy->refs++;
    return &c->copy->list;
}

int zlc_get(struct zlc *c, long long max_age_ms, zlc_fetch_fn fetch, void *arg, const struct zr_list **out,
            struct zk_err *err)
{
    unsigned long seen;
    long long now;
    int rc;

    *out = NULL;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        now = c->o.now_ms();
        if (c->copy && now - c->copy->made_ms < max_age_ms) {
            rc = ZK_OK;
            break;
        }
        if (c->fetching) {
            /* Someone is fetching already: that fetch started after the copy we would refuse, so its
             * outcome is the answer, unless it was cancelled with its caller. */
            seen = c->fetches;
            while (c->fetches == seen)
                pthread_cond_wait(&c->fetched, &c->mu);
            if (c->last_rc == ZK_ECANCELLED)
                continue;
            rc = c->last_rc;
            if (rc != ZK_OK)
                *err = c->last_err;
            break;
        }
        if (now < c->retry_at_ms) {
            rc = c->last_rc;
            *err = c->last_err;
            break;
        }
        c->fetching = 1;
        rc = zlc_refresh_locked(c, now, fetch, arg);
        if (rc != ZK_OK)
            *err = c->last_err;
        break;
    }
    if (rc == ZK_OK)
        *out = zlc_share_locked(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void zlc_put(struct zlc *c, const struct zr_list *l)
{
    struct zlc_copy *last;

    if (!l)
        return;
    pthread_mutex_lock(&c->mu);
    /* list is the copy's first member, so the reader's pointer is the copy's. */
    last = zlc_unref_locked((struct zlc_copy *)(void *)l);
    pthread_mutex_unlock(&c->mu);
    zlc_copy_free(last);
}

const struct zr_list *zlc_complete(struct zlc *c)
{
    const struct zr_list *l = NULL;

    pthread_mutex_lock(&c->mu);
    if (c->complete) {
        c->complete->refs++;
        l = &c->complete->list;
    }
    pthread_mutex_unlock(&c->mu);
    return l;
}

/* Whether commit is "" or one of r's branches' commits. */
static int zlc_has_commit(const struct zr_repo *r, const char *commit)
{
    if (!commit[0])
        return 1;
    for (size_t b = 0; b < r->n_branches; b++)
        if (strcmp(r->branches[b].version, commit) == 0)
            return 1;
    return 0;
}

/* The index time of repository name in l (sorted by name, as zr_parse_list sorts it), if commit is
 * one l knows for it (0 otherwise). Sets *moved when l holds the repository at other commits. */
static time_t zlc_time_of(const struct zr_list *l, const char *name, const char *commit, int *moved)
{
    const struct zr_repo *r = zr_list_find(l, name);

    if (!r)
        return 0;
    if (!zlc_has_commit(r, commit)) {
        *moved = 1;
        return 0;
    }
    return r->index_time;
}

int zlc_index_times(struct zlc *c, const char *const *names, const char *const *commits, size_t n, time_t *times,
                    zlc_fetch_fn fetch, void *arg)
{
    long long now = c->o.now_ms();
    int have, moved = 0;

    pthread_mutex_lock(&c->mu);
    if (!c->fetching && now >= c->retry_at_ms && (!c->copy || now - c->copy->made_ms >= c->o.ttl_ms)) {
        c->fetching = 1;
        (void)zlc_refresh_locked(c, now, fetch, arg);
    }
    have = c->copy != NULL;
    for (size_t i = 0; i < n; i++)
        times[i] = have ? zlc_time_of(&c->copy->list, names[i], commits ? commits[i] : "", &moved) : 0;
    /* The search saw a commit the copy does not know: the repository was reindexed since the copy was
     * made, so the next call fetches again, unless the copy is younger than the back-off (a list and
     * a search can disagree for a while, and that must not cost a list per call). */
    if (moved && now - c->copy->made_ms >= c->o.backoff_ms)
        c->copy->made_ms = now - c->o.ttl_ms;
    pthread_mutex_unlock(&c->mu);
    return have;
}
