/* controller.c: see controller.h.
 *
 * One thread (controller_main) waits for the gate, starts the workers and resyncs; it sleeps on a
 * condition variable, so controller_stop wakes it at once. The workers block in queue_get and end when
 * the queue is shut down. */
#include "controller/runtime/controller.h"

#include "log.h"
#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* How often the gate is looked at while the caches fill or the Lease is held by another. */
#define CONTROLLER_GATE_POLL_SECONDS 0.05

struct controller {
    struct controller_opts o;
    pthread_t thread;
    int started_thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stopping;    /* guarded by mu */
    int running;     /* guarded by mu: the workers were started */
    pthread_t workers[CONTROLLER_MAX_WORKERS];
    int nworkers;    /* written by the controller thread before running is set, read after it ends */
};

/* Sleeps up to secs, returning early (1) when asked to stop. */
static int controller_wait(struct controller *c, double secs)
{
    struct timespec ts;
    int stopping;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)secs;
    ts.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->mu);
    while (!c->stopping && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
        ;
    stopping = c->stopping;
    pthread_mutex_unlock(&c->mu);
    return stopping;
}

/* Whether reconciles may run: complete caches, and the Lease when there is an election. */
static int controller_gate_open(const struct controller *c)
{
    return informer_all_synced(c->o.informers, c->o.ninformers) && (!c->o.leader || leader_is_leading(c->o.leader));
}

/* One reconcile of key and what follows from its result. */
static void controller_process(struct controller *c, const char *key)
{
    struct zk_err err = {0};
    double start = monotime_s(), requeue = 0;
    int rc = c->o.reconcile(c->o.ud, key, &requeue, &err);

    if (c->o.metrics)
        metrics_reconcile_done(c->o.metrics, monotime_s() - start, rc == ZK_OK);
    if (rc == ZK_OK) {
        queue_forget(c->o.queue, key);
        if (requeue > 0)
            queue_add_after(c->o.queue, key, requeue);
        log_debug("Reconciled", c->o.key_label, key, NULL);
    } else {
        char failures[16];

        queue_add_rate_limited(c->o.queue, key);
        snprintf(failures, sizeof(failures), "%d", queue_failures(c->o.queue, key));
        log_error("Reconcile failed; will retry", c->o.key_label, key, "error", err.msg, "failures", failures, NULL);
    }
    queue_done(c->o.queue, key);
}

static void *controller_worker(void *arg)
{
    struct controller *c = arg;
    char *key;

    while (queue_get(c->o.queue, &key) == ZK_OK) {
        controller_process(c, key);
        free(key);
    }
    return NULL;
}

/* Queues every key the primary informer caches. */
static void controller_resync(struct controller *c)
{
    cJSON *keys = informer_keys(c->o.primary);
    const cJSON *k;

    cJSON_ArrayForEach(k, keys) queue_add(c->o.queue, k->valuestring);
    cJSON_Delete(keys);
}

static void controller_start_workers(struct controller *c)
{
    char n[16];

    snprintf(n, sizeof(n), "%d", c->o.workers);
    log_info("Starting workers", "workers", n, NULL);
    for (; c->nworkers < c->o.workers; c->nworkers++) {
        if (pthread_create(&c->workers[c->nworkers], NULL, controller_worker, c) != 0) {
            log_error("Cannot start a worker thread; running with fewer", NULL);
            break;
        }
    }
    pthread_mutex_lock(&c->mu);
    c->running = 1;
    pthread_mutex_unlock(&c->mu);
}

static void *controller_main(void *arg)
{
    struct controller *c = arg;
    int resync = c->o.primary && c->o.resync_period > 0;

    /* A lost Lease never comes back (leader_lost): waiting on would only hang the caller's exit. */
    while (!controller_gate_open(c))
        if ((c->o.leader && leader_lost(c->o.leader)) || controller_wait(c, CONTROLLER_GATE_POLL_SECONDS))
            return NULL;
    controller_start_workers(c);
    /* Without a resync the thread only waits to be stopped; the hour is any long sleep. */
    while (!controller_wait(c, resync ? c->o.resync_period : 3600.0))
        if (resync)
            controller_resync(c);
    return NULL;
}

int controller_start(const struct controller_opts *o, struct controller **out, struct zk_err *err)
{
    struct controller *c;

    *out = NULL;
    if (!o->reconcile || !o->queue || !o->key_label || o->workers < 1 || o->workers > CONTROLLER_MAX_WORKERS)
        return zk_err_set(err, ZK_EINVAL, "controller: a reconcile function, a queue, a key label and 1 to %d workers "
                          "are required", CONTROLLER_MAX_WORKERS);
    c = mem_calloc(1, sizeof(*c));
    c->o = *o;
    mem_mutex_init(&c->mu);
    mem_cond_init(&c->cv, 1);
    if (pthread_create(&c->thread, NULL, controller_main, c) != 0) {
        controller_free(c);
        return zk_err_set(err, ZK_EIO, "controller: cannot start its thread");
    }
    c->started_thread = 1;
    *out = c;
    return ZK_OK;
}

int controller_started(struct controller *c)
{
    int running;

    pthread_mutex_lock(&c->mu);
    running = c->running;
    pthread_mutex_unlock(&c->mu);
    return running;
}

void controller_stop(struct controller *c)
{
    if (!c || !c->started_thread)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    /* Once the controller thread has ended no worker can start; then the queue lets them go. */
    pthread_join(c->thread, NULL);
    queue_shutdown(c->o.queue);
    for (int i = 0; i < c->nworkers; i++)
        pthread_join(c->workers[i], NULL);
    c->nworkers = 0;
    c->started_thread = 0;
}

void controller_free(struct controller *c)
{
    if (!c)
        return;
    controller_stop(c);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
