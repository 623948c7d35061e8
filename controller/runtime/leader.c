/* leader.c: see leader.h. */
#include "controller/runtime/leader.h"

#include "jb.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct kube_resource leader_lease = {"coordination.k8s.io", "v1", "leases", "Lease", 1};

struct leader {
    struct kube_client *client;
    struct leader_opts o;
    char *ns, *name, *identity;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    int leading;
    int lost; /* leadership was lost: the thread has ended and will not run again */
    /* What this candidate last saw of the Lease, and when (monotonic), for the expiry judgement. */
    char *observed_record;
    double observed_at;
    double last_renew; /* monotonic time of the last successful write while leading */
};

static long long leader_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void leader_format_micro(long long us, char *dst, size_t len)
{
    time_t secs = (time_t)(us / 1000000LL);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(dst, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1000000LL);
}

cJSON *leader_claim_spec(const cJSON *lease, const char *identity, int duration_seconds, long long now_us)
{
    const cJSON *old = json_obj(lease, "spec");
    const char *holder = json_str(old, "holderIdentity", "");
    const char *acquired = json_str(old, "acquireTime", NULL);
    long long transitions = json_int(old, "leaseTransitions", 0);
    char now[40];
    struct jb b = {0};
    cJSON *spec = jb_object(&b);

    leader_format_micro(now_us, now, sizeof(now));
    jb_add_str(&b, spec, "holderIdentity", identity);
    jb_add_num(&b, spec, "leaseDurationSeconds", duration_seconds);
    if (strcmp(holder, identity) == 0 && acquired) {
        jb_add_str(&b, spec, "acquireTime", acquired);
    } else {
        jb_add_str(&b, spec, "acquireTime", now);
        /* A takeover from another holder is a transition; the very first acquisition is not. */
        if (lease && holder[0])
            transitions++;
    }
    jb_add_str(&b, spec, "renewTime", now);
    jb_add_num(&b, spec, "leaseTransitions", (double)transitions);
    return jb_finish(&b, spec);
}

static void leader_count(struct leader *l, const char *verb, int rc, const struct kube_err *e)
{
    if (l->o.metrics)
        metrics_api_result(l->o.metrics, verb, rc, e->http_status);
}

/* Remembers the record (holder and renew time) and when it last changed. */
static void leader_observe(struct leader *l, const cJSON *lease, double now)
{
    char rec[512];

    snprintf(rec, sizeof(rec), "%s|%s|%s", json_path_str(lease, "spec.holderIdentity", ""),
             json_path_str(lease, "spec.renewTime", ""), json_path_str(lease, "metadata.resourceVersion", ""));
    if (!l->observed_record || strcmp(rec, l->observed_record) != 0) {
        free(l->observed_record);
        l->observed_record = mem_strdup(rec);
        l->observed_at = now;
    }
}

/* One round: returns 1 when this candidate holds the Lease afterwards, 0 when another does or the
 * attempt failed. */
static int leader_try(struct leader *l)
{
    struct kube_err kerr;
    cJSON *lease = NULL, *spec = NULL, *obj = NULL;
    double now = monotime_s();
    const char *holder;
    int rc, won = 0;

    rc = kube_get(l->client, &leader_lease, l->ns, l->name, &lease, &kerr);
    leader_count(l, "lease", rc, &kerr);
    if (rc != ZK_OK && kerr.reason != KUBE_REASON_NOT_FOUND) {
        log_warn("Could not read the leader Lease", "error", kerr.base.msg, NULL);
        goto out;
    }
    if (lease) {
        leader_observe(l, lease, now);
        holder = json_path_str(lease, "spec.holderIdentity", "");
        if (holder[0] && strcmp(holder, l->identity) != 0) {
            long long secs = json_int(json_obj(lease, "spec"), "leaseDurationSeconds", (long long)l->o.lease_duration);

            if (now - l->observed_at < (double)secs)
                goto out; /* held by another and not expired */
        }
    }
    spec = leader_claim_spec(lease, l->identity, (int)l->o.lease_duration, leader_wall_us());
    if (lease) {
        obj = lease;
        lease = NULL;
        cJSON_ReplaceItemInObjectCaseSensitive(obj, "spec", spec);
        spec = NULL;
        rc = kube_replace(l->client, &leader_lease, l->ns, l->name, NULL, obj, NULL, &kerr);
        leader_count(l, "lease", rc, &kerr);
    } else {
        struct jb b = {0};
        cJSON *meta;

        obj = jb_object(&b);
        jb_add_str(&b, obj, "apiVersion", "coordination.k8s.io/v1");
        jb_add_str(&b, obj, "kind", "Lease");
        meta = jb_add_obj(&b, obj, "metadata");
        jb_add_str(&b, meta, "name", l->name);
        jb_add_str(&b, meta, "namespace", l->ns);
        jb_add(&b, obj, "spec", spec);
        spec = NULL;
        obj = jb_finish(&b, obj);
        rc = kube_create(l->client, &leader_lease, l->ns, obj, NULL, &kerr);
        leader_count(l, "lease", rc, &kerr);
    }
    if (rc == ZK_OK) {
        won = 1;
        l->last_renew = monotime_s();
    } else if (kerr.reason != KUBE_REASON_CONFLICT && kerr.reason != KUBE_REASON_ALREADY_EXISTS) {
        log_warn("Could not write the leader Lease", "error", kerr.base.msg, NULL);
    }
out:
    cJSON_Delete(lease);
    cJSON_Delete(spec);
    cJSON_Delete(obj);
    return won;
}

/* Gives the Lease up so that the standby need not wait for it to expire. */
static void leader_release(struct leader *l)
{
    struct jb b = {0};
    struct kube_err kerr;
    cJSON *lease = NULL;
    cJSON *spec;
    char now[40];
    int rc;

    rc = kube_get(l->client, &leader_lease, l->ns, l->name, &lease, &kerr);
    leader_count(l, "lease", rc, &kerr);
    if (rc != ZK_OK || strcmp(json_path_str(lease, "spec.holderIdentity", ""), l->identity) != 0) {
        cJSON_Delete(lease);
        return;
    }
    spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    leader_format_micro(leader_wall_us(), now, sizeof(now));
    jb_set(&b, spec, "holderIdentity", jb_string(&b, ""));
    jb_set(&b, spec, "leaseDurationSeconds", jb_number(&b, 1));
    jb_set(&b, spec, "renewTime", jb_string(&b, now));
    /* A Lease without a spec cannot be released (and no candidate wrote it): half a release would
     * renew the Lease for this replica instead, and the standby would wait it out. */
    lease = jb_finish(&b, lease);
    if (!lease)
        return;
    rc = kube_replace(l->client, &leader_lease, l->ns, l->name, NULL, lease, NULL, &kerr);
    leader_count(l, "lease", rc, &kerr);
    if (rc == ZK_OK)
        log_info("Released the leader Lease", "lease", l->name, NULL);
    else
        log_warn("Could not release the leader Lease", "error", kerr.base.msg, NULL);
    cJSON_Delete(lease);
}

/* Sleeps up to secs, returning early (1) when asked to stop. */
static int leader_wait(struct leader *l, double secs)
{
    struct timespec ts;
    int stop;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)secs;
    ts.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->mu);
    while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &ts) == 0)
        ;
    stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

static void *leader_main(void *arg)
{
    struct leader *l = arg;

    log_info("Leader election started", "lease", l->name, "namespace", l->ns, "identity", l->identity, NULL);
    while (!leader_wait(l, 0)) {
        int won = leader_try(l);
        int was;

        pthread_mutex_lock(&l->mu);
        was = l->leading;
        if (won && !was)
            l->leading = 1;
        pthread_mutex_unlock(&l->mu);
        if (won && !was) {
            log_info("Became the leader", "lease", l->name, "identity", l->identity, NULL);
            if (l->o.metrics)
                metrics_set_leader(l->o.metrics, 1);
        } else if (!won && was && monotime_s() - l->last_renew >= l->o.renew_deadline) {
            log_error("Lost the leader Lease: could not renew it within the renew deadline", "lease", l->name,
                      NULL);
            if (l->o.metrics)
                metrics_set_leader(l->o.metrics, 0);
            pthread_mutex_lock(&l->mu);
            l->leading = 0;
            l->lost = 1;
            pthread_mutex_unlock(&l->mu);
            break;
        }
        if (leader_wait(l, l->o.retry_period))
            break;
    }
    if (leader_is_leading(l))
        leader_release(l);
    return NULL;
}

int leader_start(struct kube_client *c, const struct leader_opts *o, struct leader **out, struct zk_err *err)
{
    struct leader *l = mem_calloc(1, sizeof(*l));

    *out = NULL;
    l->client = c;
    l->o = *o;
    if (l->o.lease_duration <= 0)
        l->o.lease_duration = 15;
    if (l->o.renew_deadline <= 0)
        l->o.renew_deadline = 10;
    if (l->o.retry_period <= 0)
        l->o.retry_period = 2;
    l->ns = mem_strdup(o->namespace);
    l->name = mem_strdup(o->name);
    l->identity = mem_strdup(o->identity);
    mem_mutex_init(&l->mu);
    mem_cond_init(&l->cv, 1);
    if (pthread_create(&l->thread, NULL, leader_main, l) != 0) {
        leader_free(l);
        return zk_err_set(err, ZK_EIO, "leader election: cannot start its thread");
    }
    l->started = 1;
    *out = l;
    return ZK_OK;
}

int leader_is_leading(struct leader *l)
{
    int v;

    pthread_mutex_lock(&l->mu);
    v = l->leading;
    pthread_mutex_unlock(&l->mu);
    return v;
}

int leader_lost(struct leader *l)
{
    int v;

    pthread_mutex_lock(&l->mu);
    v = l->lost;
    pthread_mutex_unlock(&l->mu);
    return v;
}

void leader_stop(struct leader *l)
{
    if (!l || !l->started)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    l->started = 0;
}

void leader_free(struct leader *l)
{
    if (!l)
        return;
    leader_stop(l);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l->observed_record);
    free(l);
}
