/* events.h: Kubernetes Events (core v1) about corpora, for `kubectl describe` and event exporters.
 *
 * Events are best effort: a failure to record one is logged and never fails a reconcile. Repeats of
 * the same event (same object, type, reason and message) within EVENTS_AGGREGATE_SECONDS update the
 * existing Event's count and lastTimestamp instead of creating another object, as client-go's event
 * correlator does; callers still emit only on notable transitions (a spec becoming invalid, a Secret
 * going missing, children repaired, a reindex Job started), never on every reconcile. Thread-safe. */
#ifndef ZK_RUNTIME_EVENTS_H
#define ZK_RUNTIME_EVENTS_H

#include "controller/runtime/metrics.h"
#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>
#include <time.h>

#define EVENTS_AGGREGATE_SECONDS 600

struct events;

/* component names the reporter ("zoekt-operator"); instance the replica (the pod name). Both copied.
 * m (may be NULL) counts the API requests. The result is owned by the caller (events_free). */
struct events *events_new(struct kube_client *c, struct metrics *m, const char *component, const char *instance);
void events_free(struct events *ev);

/* Records an Event about obj (a full object with apiVersion, kind and metadata; borrowed). type is
 * "Normal" or "Warning"; reason one CamelCase word; the message is formatted printf-style. */
void events_emit(struct events *ev, const cJSON *obj, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Builds the Event object for a first occurrence (pure; exposed for unit tests). now is the event
 * time; name_suffix makes the Event's name unique. Returns a new object owned by the caller, or NULL
 * when obj lacks a name. */
cJSON *events_build(const cJSON *obj, const char *component, const char *instance, const char *type,
                    const char *reason, const char *message, time_t now, unsigned long long name_suffix);

#endif
