/* listcache.c: see listcache.h. */
#include "connector/zoekt/listcache.h"

#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct zlc_entry {
    const char *name;     /* points into its copy's names */
    time_t index_time;
    const char *commits;  /* its branches' commits, n_commits strings one after the other in names */
    size_t n_commits;
};

/* One copy of the list: sorted by name, as zr_parse_list sorts it. */
struct zlc_copy {
    struct zlc_entry *entries;
    size_t n;
    char *names;       /* every name and commit, NUL-terminated, one after the other */
    long long made_ms; /* when its fetch started */
};

struct zlc {
    pthread_mutex_t mu;
    struct zlc_opts o;
    struct zlc_copy *copy;  /* NULL until the first fetch succeeds */
    int fetching;           /* a caller is fetching (outside the lock) */
    long long retry_at_ms;  /* no fetch before this, after a failed one */
};

struct zlc *zlc_new(const struct zlc_opts *o)
{
    struct zlc *c = mem_calloc(1, sizeof(*c));

    c->o = o ? *o : (struct zlc_opts){ZLC_TTL_MS, ZLC_BACKOFF_MS, NULL};
    if (!c->o.now_ms)
        c->o.now_ms = monotime_ms;
    mem_mutex_init(&c->mu);
    return c;
}

static void zlc_copy_free(struct zlc_copy *k)
{
    if (!k)
        return;
    free(k->entries);
    free(k->names);
    free(k);
}

void zlc_free(struct zlc *c)
{
    if (!c)
        return;
    zlc_copy_free(c->copy);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Copies s, with its NUL, to dst + *at; returns where it went. */
static const char *zlc_put(char *dst, size_t *at, const char *s)
{
    size_t len = strlen(s) + 1;
    char *to = dst + *at;

    memcpy(to, s, len);
    *at += len;
    return to;
}

/* The name, index time and branch commits of every repository of l, made at made_ms. */
static struct zlc_copy *zlc_copy_new(const struct zr_list *l, long long made_ms)
{
    struct zlc_copy *k = mem_calloc(1, sizeof(*k));
    size_t total = 0, at = 0;

    for (size_t i = 0; i < l->n_repos; i++) {
        total += strlen(l->repos[i].name) + 1;
        for (size_t b = 0; b < l->repos[i].n_branches; b++)
            total += strlen(l->repos[i].branches[b].version) + 1;
    }
    k->entries = mem_calloc(l->n_repos + 1, sizeof(*k->entries));
    k->names = mem_alloc(total + 1);
    for (size_t i = 0; i < l->n_repos; i++) {
        const struct zr_repo *r = &l->repos[i];
        struct zlc_entry *e = &k->entries[i];

        e->name = zlc_put(k->names, &at, r->name);
        e->index_time = r->index_time;
        e->commits = k->names + at;
        e->n_commits = r->n_branches;
        for (size_t b = 0; b < r->n_branches; b++)
            (void)zlc_put(k->names, &at, r->branches[b].version);
    }
    k->n = l->n_repos;
    k->made_ms = made_ms;
    return k;
}

/* Whether the caller should fetch now, with c->mu held: it then counts as the one fetching. */
static int zlc_claim_fetch(struct zlc *c, long long now)
{
    if (c->fetching || now < c->retry_at_ms || (c->copy && now - c->copy->made_ms < c->o.ttl_ms))
        return 0;
    c->fetching = 1;
    return 1;
}

/* Fetches the list and swaps it in, or starts the back-off; the caller has claimed the fetch. */
static void zlc_refresh(struct zlc *c, long long started, zlc_fetch_fn fetch, void *arg)
{
    struct zk_err err = {0};
    struct zr_list l;
    struct zlc_copy *fresh = NULL, *old = NULL;
    int rc;

    memset(&l, 0, sizeof(l));
    rc = fetch(arg, &l, &err);
    if (rc == ZK_OK)
        fresh = zlc_copy_new(&l, started);
    zr_list_free(&l);
    pthread_mutex_lock(&c->mu);
    if (fresh) {
        old = c->copy;
        c->copy = fresh;
    } else if (rc != ZK_ECANCELLED) {
        c->retry_at_ms = c->o.now_ms() + c->o.backoff_ms;
    }
    c->fetching = 0;
    pthread_mutex_unlock(&c->mu);
    zlc_copy_free(old);
}

static int zlc_entry_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct zlc_entry *)elem)->name);
}

/* Whether commit is "" or one of e's branches' commits. */
static int zlc_has_commit(const struct zlc_entry *e, const char *commit)
{
    const char *v = e->commits;

    if (!commit[0])
        return 1;
    for (size_t b = 0; b < e->n_commits; b++, v += strlen(v) + 1)
        if (strcmp(v, commit) == 0)
            return 1;
    return 0;
}

/* The index time of repository name in k, if commit is one k knows for it (0 otherwise); with the
 * cache's mutex held. Sets *moved when k holds the repository at other commits. */
static time_t zlc_time_of(const struct zlc_copy *k, const char *name, const char *commit, int *moved)
{
    const struct zlc_entry *e = k->n ? bsearch(name, k->entries, k->n, sizeof(*k->entries), zlc_entry_cmp) : NULL;

    if (!e)
        return 0;
    if (!zlc_has_commit(e, commit)) {
        *moved = 1;
        return 0;
    }
    return e->index_time;
}

int zlc_index_times(struct zlc *c, const char *const *names, const char *const *commits, size_t n, time_t *times,
                    zlc_fetch_fn fetch, void *arg)
{
    long long now = c->o.now_ms();
    int claimed, have, moved = 0;

    pthread_mutex_lock(&c->mu);
    claimed = zlc_claim_fetch(c, now);
    pthread_mutex_unlock(&c->mu);
    if (claimed)
        zlc_refresh(c, now, fetch, arg);

    pthread_mutex_lock(&c->mu);
    have = c->copy != NULL;
    for (size_t i = 0; i < n; i++)
        times[i] = have ? zlc_time_of(c->copy, names[i], commits ? commits[i] : "", &moved) : 0;
    /* The search saw a commit the copy does not know: the repository was reindexed since the copy was
     * made, so the next call fetches again, unless the copy is younger than the back-off (a list and
     * a search can disagree for a while, and that must not cost a list per call). */
    if (moved && now - c->copy->made_ms >= c->o.backoff_ms)
        c->copy->made_ms = now - c->o.ttl_ms;
    pthread_mutex_unlock(&c->mu);
    return have;
}
