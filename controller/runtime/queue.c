/* queue.c: see queue.h.
 *
 * A controller has at most a few hundred keys, so the bookkeeping is a flat array of per-key records
 * searched linearly, plus a FIFO of ready keys; that is simpler than hash tables and fast enough. A
 * record lives while the key is queued, processing, waiting for a delay or has failures to remember. */
#include "controller/runtime/queue.h"
#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct queue_item {
    char *key;
    int dirty;       /* must be processed (again): in the FIFO, or re-queued on done */
    int processing;  /* handed to a worker, not yet done */
    double ready_at; /* > 0: becomes dirty at this time */
    int failures;
};

struct queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct queue_opts o;
    struct queue_item *items;
    size_t nitems, capitems;
    char **fifo; /* ready keys, pointing at items' key strings: no separate ownership */
    size_t fifo_head, fifo_len, fifo_cap;
    double tokens, tokens_at;
    int shutting_down;
    unsigned long long adds, retries;
};

static double queue_monotonic(void *ud)
{
    (void)ud;
    return monotime_s();
}

static double queue_now(struct queue *q)
{
    return q->o.clock(q->o.clock_ud);
}

struct queue *queue_new(const struct queue_opts *opts)
{
    struct queue *q = mem_calloc(1, sizeof(*q));

    if (opts)
        q->o = *opts;
    if (q->o.base_delay <= 0)
        q->o.base_delay = 0.005;
    if (q->o.max_delay <= 0)
        q->o.max_delay = 300;
    if (q->o.qps <= 0)
        q->o.qps = 10;
    if (q->o.burst <= 0)
        q->o.burst = 100;
    if (!q->o.clock)
        q->o.clock = queue_monotonic;
    q->tokens = q->o.burst;
    q->tokens_at = queue_now(q);
    mem_mutex_init(&q->mu);
    mem_cond_init(&q->cv, 1);
    return q;
}

void queue_free(struct queue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->nitems; i++)
        free(q->items[i].key);
    free(q->items);
    free(q->fifo);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static struct queue_item *queue_find(struct queue *q, const char *key)
{
    for (size_t i = 0; i < q->nitems; i++)
        if (strcmp(q->items[i].key, key) == 0)
            return &q->items[i];
    return NULL;
}

/* Finds or creates key's record. Creating may move the array, so pointers to records are only valid
 * until the next call. */
static struct queue_item *queue_item_get(struct queue *q, const char *key)
{
    struct queue_item *it = queue_find(q, key);

    if (it)
        return it;
    if (q->nitems == q->capitems) {
        size_t ncap = q->capitems ? q->capitems * 2 : 16;
        q->items = mem_realloc(q->items, ncap * sizeof(*q->items));
        q->capitems = ncap;
    }
    it = &q->items[q->nitems];
    memset(it, 0, sizeof(*it));
    it->key = mem_strdup(key);
    q->nitems++;
    return it;
}

/* Drops a record that no longer carries any state. The FIFO points at key strings, so only records
 * that are not in it (not dirty) are dropped. */
static void queue_item_gc(struct queue *q, struct queue_item *it)
{
    size_t i = (size_t)(it - q->items);

    if (it->dirty || it->processing || it->ready_at > 0 || it->failures > 0)
        return;
    free(it->key);
    q->items[i] = q->items[--q->nitems];
}

static void queue_fifo_push(struct queue *q, char *key)
{
    if (q->fifo_len == q->fifo_cap) {
        size_t ncap = q->fifo_cap ? q->fifo_cap * 2 : 16;
        char **n = mem_alloc(ncap * sizeof(*n));

        for (size_t i = 0; i < q->fifo_len; i++)
            n[i] = q->fifo[(q->fifo_head + i) % q->fifo_cap];
        free(q->fifo);
        q->fifo = n;
        q->fifo_cap = ncap;
        q->fifo_head = 0;
    }
    q->fifo[(q->fifo_head + q->fifo_len) % q->fifo_cap] = key;
    q->fifo_len++;
}

/* Marks a record dirty and, unless a worker holds it, makes it ready. */
static void queue_make_dirty(struct queue *q, struct queue_item *it)
{
    if (it->dirty)
        return;
    it->dirty = 1;
    if (it->processing)
        return;
    queue_fifo_push(q, it->key);
    pthread_cond_signal(&q->cv);
}

/* Adds under the lock; delay <= 0 means now. */
static void queue_add_locked(struct queue *q, const char *key, double delay)
{
    struct queue_item *it;
    double at;

    if (q->shutting_down)
        return;
    q->adds++;
    it = queue_item_get(q, key);
    if (delay <= 0) {
        queue_make_dirty(q, it);
        return;
    }
    at = queue_now(q) + delay;
    if (it->ready_at <= 0 || at < it->ready_at) {
        it->ready_at = at;
        /* A waiter may be sleeping until a later deadline; let it recompute. */
        pthread_cond_broadcast(&q->cv);
    }
}

void queue_add(struct queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    queue_add_locked(q, key, 0);
    pthread_mutex_unlock(&q->mu);
}

void queue_add_after(struct queue *q, const char *key, double delay)
{
    pthread_mutex_lock(&q->mu);
    queue_add_locked(q, key, delay);
    pthread_mutex_unlock(&q->mu);
}

void queue_add_unless_retrying(struct queue *q, const char *key)
{
    struct queue_item *it;

    pthread_mutex_lock(&q->mu);
    it = queue_find(q, key);
    if (!it || it->failures == 0 || it->processing || (it->ready_at <= 0 && !it->dirty))
        queue_add_locked(q, key, 0);
    pthread_mutex_unlock(&q->mu);
}

/* The token bucket's delay for one more event, reserving a token (which may go negative: the debt is
 * what later callers wait for), as golang.org/x/time/rate's Reserve does. */
static double queue_bucket_delay(struct queue *q)
{
    double now = queue_now(q);

    q->tokens += (now - q->tokens_at) * q->o.qps;
    if (q->tokens > q->o.burst)
        q->tokens = q->o.burst;
    q->tokens_at = now;
    q->tokens -= 1;
    return q->tokens >= 0 ? 0 : -q->tokens / q->o.qps;
}

void queue_add_rate_limited(struct queue *q, const char *key)
{
    struct queue_item *it;
    double backoff, bucket;

    pthread_mutex_lock(&q->mu);
    if (q->shutting_down) {
        pthread_mutex_unlock(&q->mu);
        return;
    }
    it = queue_item_get(q, key);
    backoff = q->o.base_delay;
    for (int i = 0; i < it->failures && backoff < q->o.max_delay; i++)
        backoff *= 2;
    if (backoff > q->o.max_delay)
        backoff = q->o.max_delay;
    it->failures++;
    q->retries++;
    bucket = queue_bucket_delay(q);
    queue_add_locked(q, key, backoff > bucket ? backoff : bucket);
    pthread_mutex_unlock(&q->mu);
}

void queue_forget(struct queue *q, const char *key)
{
    struct queue_item *it;

    pthread_mutex_lock(&q->mu);
    it = queue_find(q, key);
    if (it) {
        it->failures = 0;
        queue_item_gc(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

int queue_failures(struct queue *q, const char *key)
{
    struct queue_item *it;
    int n;

    pthread_mutex_lock(&q->mu);
    it = queue_find(q, key);
    n = it ? it->failures : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Makes every record whose delay has passed dirty; returns the soonest remaining deadline, or 0. */
static double queue_promote_due(struct queue *q)
{
    double now = queue_now(q), soonest = 0;

    for (size_t i = 0; i < q->nitems; i++) {
        struct queue_item *it = &q->items[i];

        if (it->ready_at <= 0)
            continue;
        if (it->ready_at <= now) {
            it->ready_at = 0;
            queue_make_dirty(q, it);
        } else if (soonest == 0 || it->ready_at < soonest) {
            soonest = it->ready_at;
        }
    }
    return soonest;
}

/* Takes the FIFO's head under the lock. Returns ZK_OK, ZK_ETIMEOUT (nothing ready; *soonest says when
 * something will be, or 0) or ZK_ECANCELLED. */
static int queue_take_locked(struct queue *q, char **key, double *soonest)
{
    struct queue_item *it;
    char *head;

    *key = NULL;
    if (q->shutting_down)
        return ZK_ECANCELLED;
    *soonest = queue_promote_due(q);
    if (q->fifo_len == 0)
        return ZK_ETIMEOUT;
    head = q->fifo[q->fifo_head];
    *key = mem_strdup(head);
    q->fifo_head = (q->fifo_head + 1) % q->fifo_cap;
    q->fifo_len--;
    it = queue_find(q, head);
    it->dirty = 0;
    it->processing = 1;
    return ZK_OK;
}

int queue_try_get(struct queue *q, char **key)
{
    double soonest;
    int rc;

    pthread_mutex_lock(&q->mu);
    rc = queue_take_locked(q, key, &soonest);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int queue_get(struct queue *q, char **key)
{
    double soonest;
    int rc;

    pthread_mutex_lock(&q->mu);
    while ((rc = queue_take_locked(q, key, &soonest)) == ZK_ETIMEOUT) {
        if (soonest == 0) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else {
            /* Deadlines are in the queue's clock; the wait is on the real monotonic clock, which
             * is the same clock unless a test injected another (tests use queue_try_get). */
            double wait = soonest - queue_now(q);
            struct timespec ts;

            clock_gettime(CLOCK_MONOTONIC, &ts);
            if (wait < 0)
                wait = 0;
            ts.tv_sec += (time_t)wait;
            ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void queue_done(struct queue *q, const char *key)
{
    struct queue_item *it;

    pthread_mutex_lock(&q->mu);
    it = queue_find(q, key);
    if (it) {
        it->processing = 0;
        if (it->dirty && !q->shutting_down) {
            /* Added while processing: ready again now that no worker holds it. */
            queue_fifo_push(q, it->key);
            pthread_cond_signal(&q->cv);
        }
        if (!it->dirty || q->shutting_down) {
            it->dirty = 0;
            queue_item_gc(q, it);
        }
    }
    pthread_mutex_unlock(&q->mu);
}

void queue_shutdown(struct queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutting_down = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void queue_stats(struct queue *q, struct queue_stats *out)
{
    pthread_mutex_lock(&q->mu);
    out->depth = q->fifo_len;
    out->waiting = 0;
    for (size_t i = 0; i < q->nitems; i++)
        if (q->items[i].ready_at > 0)
            out->waiting++;
    out->adds = q->adds;
    out->retries = q->retries;
    pthread_mutex_unlock(&q->mu);
}
