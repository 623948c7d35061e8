/* informer.h: a cache of one kind of object, kept current by list+watch, that tells the controller
 * which object to reconcile when something changes.
 *
 * Each informer runs lib/kube/watch's reflector in its own thread. The cache maps "namespace/name" to
 * the latest object seen, kept as compact text; readers get their own parsed copies, so a reconcile
 * never races the watch thread. Every
 * change calls enqueue with the key the informer's key function gives the object: its own key
 * (informer_self_key, for the objects reconciled themselves), or the key of the object it belongs to,
 * by whatever rule the caller's domain has (the corpus package maps a child to its corpus); objects the
 * function maps to nothing are cached but enqueue nothing.
 * A relist (first list, or after the server expired our version) enqueues every object in the old and
 * the new list, so a deletion missed during a disconnect is still seen. Listed objects get the
 * apiVersion and kind a List omits from its items, so the cache looks the same however an object
 * arrived. An optional prune function drops, on arrival, what the caller never reads (managedFields
 * alone are often half of an object), so the caches hold only what the controller compares and reads. */
#ifndef ZK_RUNTIME_INFORMER_H
#define ZK_RUNTIME_INFORMER_H

#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>
#include <stdint.h>

/* Writes the key ("namespace/name") to enqueue for obj into key (len bytes); returns 1, or 0 when obj
 * maps to no key or the key does not fit. Called from the watch thread, once per object that arrives (the
 * cache keeps the answer); must be pure. */
typedef int informer_key_fn(const cJSON *obj, char *key, size_t len);

/* Removes from obj, in place, the members the caller never reads. Called from the watch thread on the
 * informer's own copy, once its apiVersion and kind are filled in, before it is cached and before the
 * key function sees it; must be pure. */
typedef void informer_prune_fn(cJSON *obj);

/* Called from the watch thread with a key ("namespace/name"), borrowed for the call. */
typedef void informer_enqueue_fn(void *ud, const char *key);

struct informer_opts {
    const struct kube_resource *resource; /* must outlive the informer */
    const char *namespace;                /* NULL: all namespaces; copied */
    /* Or several namespaces (NULL-terminated, copied; more than one entry): one list+watch per
     * namespace, as the API offers no other way to watch a set of them, behind the one informer, so
     * that a controller allowed only those namespaces (Roles, no ClusterRole) needs nothing else. */
    const char *const *namespaces;
    const char *label_selector;           /* NULL: none; copied */
    informer_key_fn *key_of;              /* required; informer_self_key for the objects themselves */
    informer_prune_fn *prune;             /* NULL: cache objects whole */
    informer_enqueue_fn *enqueue;
    void *ud;
};

struct informer;

/* Starts the watch thread. *out owned by the caller: informer_stop, then informer_free. */
int informer_start(struct kube_client *c, const struct informer_opts *o, struct informer **out, struct zk_err *err);

/* Whether the first complete list has arrived (for /readyz and before the first reconcile). */
int informer_has_synced(struct informer *inf);

/* Whether each of the n informers has. */
int informer_all_synced(struct informer *const *infs, int n);

/* A copy of the cached object (as pruned), owned by the caller (cJSON_Delete), or NULL when nothing is
 * cached under ns/name: NULL means absent and nothing else (memory runs out only by ending the process,
 * lib/mem.h), so a caller may take it for a deleted object. */
cJSON *informer_get(struct informer *inf, const char *ns, const char *name);

/* A fingerprint of the object cached under ns/name, without inflating or parsing it: equal
 * fingerprints mean the cache holds the same text (up to a 64-bit hash collision); 0 when nothing is
 * cached there. */
uint64_t informer_fingerprint(struct informer *inf, const char *ns, const char *name);

/* A new array (caller-owned) of copies of every cached object whose key (as enqueue would see it)
 * is key; empty when none, never NULL. */
cJSON *informer_list_for(struct informer *inf, const char *key);

/* Every cached object's own key, as a new array of strings (caller-owned); never NULL. */
cJSON *informer_keys(struct informer *inf);

/* Asks the watch thread to stop without waiting, so that several informers wind down in parallel. */
void informer_cancel(struct informer *inf);

/* Stops the watch thread and waits for it. Safe to call twice. */
void informer_stop(struct informer *inf);
void informer_free(struct informer *inf);

/* The object's own key, "namespace/name" (or "/name" for an object without a namespace). An
 * informer_key_fn. */
int informer_self_key(const cJSON *obj, char *key, size_t len);

/* Drops what the API server keeps for writers, never for readers: metadata.managedFields and kubectl's
 * last-applied-configuration annotation. An informer_prune_fn. */
void informer_prune_server_fields(cJSON *obj);

#endif
