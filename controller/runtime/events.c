/* events.c: see events.h. */
#include "controller/runtime/events.h"

#include "jb.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "rfc3339.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Recent events remembered for aggregation; the oldest slot is reused when full. */
#define EVENTS_SLOTS 128
#define EVENTS_MESSAGE_MAX 1024

static const struct kube_resource events_resource = {"", "v1", "events", "Event", 1};

struct events_slot {
    char uid[64];
    char type[16];
    char reason[64];
    char message[EVENTS_MESSAGE_MAX];
    char ns[64];
    char name[256]; /* the Event object's name */
    long count;
    time_t last;
};

struct events {
    struct kube_client *client;
    struct metrics *metrics;
    char *component;
    char *instance;
    pthread_mutex_t mu;
    struct events_slot slots[EVENTS_SLOTS];
    unsigned long long serial;
};

struct events *events_new(struct kube_client *c, struct metrics *m, const char *component, const char *instance)
{
    struct events *ev = mem_calloc(1, sizeof(*ev));

    ev->client = c;
    ev->metrics = m;
    ev->component = mem_strdup(component);
    ev->instance = mem_strdup(instance);
    mem_mutex_init(&ev->mu);
    return ev;
}

void events_free(struct events *ev)
{
    if (!ev)
        return;
    pthread_mutex_destroy(&ev->mu);
    free(ev->component);
    free(ev->instance);
    free(ev);
}

cJSON *events_build(const cJSON *obj, const char *component, const char *instance, const char *type,
                    const char *reason, const char *message, time_t now, unsigned long long name_suffix)
{
    const char *name = json_path_str(obj, "metadata.name", NULL);
    const char *ns = json_path_str(obj, "metadata.namespace", "default");
    char ename[256], ts[40];
    struct jb b = {0};
    cJSON *e, *io, *meta, *src;

    if (!name)
        return NULL;
    /* The object's name, cut so that the suffix always fits the 253-character limit. */
    snprintf(ename, sizeof(ename), "%.200s.%llx", name, name_suffix);
    rfc3339_format(now, ts, sizeof(ts));
    e = jb_object(&b);
    jb_add_str(&b, e, "apiVersion", "v1");
    jb_add_str(&b, e, "kind", "Event");
    meta = jb_add_obj(&b, e, "metadata");
    jb_add_str(&b, meta, "name", ename);
    jb_add_str(&b, meta, "namespace", ns);
    io = jb_add_obj(&b, e, "involvedObject");
    jb_add_str(&b, io, "apiVersion", json_str(obj, "apiVersion", ""));
    jb_add_str(&b, io, "kind", json_str(obj, "kind", ""));
    jb_add_str(&b, io, "name", name);
    jb_add_str(&b, io, "namespace", ns);
    jb_add_str(&b, io, "uid", json_path_str(obj, "metadata.uid", ""));
    jb_add_str(&b, io, "resourceVersion", json_path_str(obj, "metadata.resourceVersion", ""));
    jb_add_str(&b, e, "type", type);
    jb_add_str(&b, e, "reason", reason);
    jb_add_str(&b, e, "message", message);
    src = jb_add_obj(&b, e, "source");
    jb_add_str(&b, src, "component", component);
    jb_add_str(&b, e, "reportingComponent", component);
    jb_add_str(&b, e, "reportingInstance", instance);
    jb_add_str(&b, e, "firstTimestamp", ts);
    jb_add_str(&b, e, "lastTimestamp", ts);
    jb_add_num(&b, e, "count", 1);
    return jb_finish(&b, e);
}

/* Finds the slot of a recent identical event, or NULL. */
static struct events_slot *events_find(struct events *ev, const char *uid, const char *type, const char *reason,
                                       const char *message, time_t now)
{
    for (int i = 0; i < EVENTS_SLOTS; i++) {
        struct events_slot *s = &ev->slots[i];

        if (s->count > 0 && now - s->last < EVENTS_AGGREGATE_SECONDS && strcmp(s->uid, uid) == 0 &&
            strcmp(s->type, type) == 0 && strcmp(s->reason, reason) == 0 && strcmp(s->message, message) == 0)
            return s;
    }
    return NULL;
}

static struct events_slot *events_oldest(struct events *ev)
{
    struct events_slot *best = &ev->slots[0];

    for (int i = 1; i < EVENTS_SLOTS; i++)
        if (ev->slots[i].last < best->last)
            best = &ev->slots[i];
    return best;
}

/* Raises the count of an existing Event. Returns the call's result. */
static int events_bump(struct events *ev, const struct events_slot *s, time_t now)
{
    struct kube_err kerr;
    char ts[40];
    struct jb b = {0};
    cJSON *patch = jb_object(&b);
    int rc;

    rfc3339_format(now, ts, sizeof(ts));
    jb_add_num(&b, patch, "count", (double)s->count);
    jb_add_str(&b, patch, "lastTimestamp", ts);
    patch = jb_finish(&b, patch);
    rc = kube_merge_patch(ev->client, &events_resource, s->ns, s->name, NULL, patch, NULL, &kerr);
    if (ev->metrics)
        metrics_api_result(ev->metrics, "event", rc, kerr.http_status);
    if (rc != ZK_OK)
        log_warn("Could not update an Event", "event", s->name, "error", kerr.base.msg, NULL);
    cJSON_Delete(patch);
    return rc;
}

void events_emit(struct events *ev, const cJSON *obj, const char *type, const char *reason, const char *fmt, ...)
{
    char message[EVENTS_MESSAGE_MAX];
    const char *uid = json_path_str(obj, "metadata.uid", "");
    time_t now = time(NULL);
    struct events_slot *s;
    struct kube_err kerr;
    struct timespec ts;
    cJSON *e;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    log_info("Event", "type", type, "reason", reason, "object", json_path_str(obj, "metadata.name", ""),
             "message", message, NULL);

    /* The lock is held across the request so that two workers cannot create the same Event twice;
     * Events are rare, so serialising them costs nothing. */
    pthread_mutex_lock(&ev->mu);
    s = events_find(ev, uid, type, reason, message, now);
    if (s) {
        s->count++;
        s->last = now;
        if (events_bump(ev, s, now) == ZK_OK) {
            pthread_mutex_unlock(&ev->mu);
            return;
        }
        /* The Event may have been deleted (they expire after an hour): create a new one. */
        s->count = 0;
    }
    /* Nanoseconds plus a serial keep names unique across replicas and within one. */
    clock_gettime(CLOCK_REALTIME, &ts);
    e = events_build(obj, ev->component, ev->instance, type, reason, message, now,
                     (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec + ++ev->serial);
    if (!e) {
        pthread_mutex_unlock(&ev->mu);
        log_warn("Could not build an Event: the object has no name", "reason", reason, NULL);
        return;
    }
    rc = kube_create(ev->client, &events_resource, json_path_str(e, "metadata.namespace", ""), e, NULL, &kerr);
    if (ev->metrics)
        metrics_api_result(ev->metrics, "event", rc, kerr.http_status);
    if (rc != ZK_OK) {
        log_warn("Could not record an Event", "reason", reason, "error", kerr.base.msg, NULL);
    } else {
        s = events_oldest(ev);
        snprintf(s->uid, sizeof(s->uid), "%s", uid);
        snprintf(s->type, sizeof(s->type), "%s", type);
        snprintf(s->reason, sizeof(s->reason), "%s", reason);
        snprintf(s->message, sizeof(s->message), "%s", message);
        snprintf(s->ns, sizeof(s->ns), "%s", json_path_str(e, "metadata.namespace", ""));
        snprintf(s->name, sizeof(s->name), "%s", json_path_str(e, "metadata.name", ""));
        s->count = 1;
        s->last = now;
    }
    cJSON_Delete(e);
    pthread_mutex_unlock(&ev->mu);
}
