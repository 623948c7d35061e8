/* informer.h: a cache of one kind of object, kept current by list+watch, that tells the controller
 * which corpus to reconcile when something changes.
 *
 * Each informer runs lib/kube/watch's reflector in its own thread. The cache maps "namespace/name" to
 * the latest object seen; readers get deep copies, so a reconcile never races the watch thread. Every
 * change calls enqueue with the key of the corpus the object belongs to:
 * - INFORMER_KEY_SELF: the object's own key (the corpora themselves);
 * - INFORMER_KEY_OWNER: the corpus named by the object's controller ownerReference of kind
 *   CodeSearchCorpus, or, when there is none and its app.kubernetes.io/managed-by label is
 *   zoekt-operator, by its codesearch.dev/corpus annotation, else its app.kubernetes.io/instance label.
 *   These cover objects the corpus does not own directly: a PVC kept under the Retain policy, and the
 *   Jobs a CronJob creates (owned by the CronJob, annotated and labelled through its job template). The
 *   annotation is what carries a corpus name longer than a label value's 63 characters.
 * A relist (first list, or after the server expired our version) enqueues every object in the old and
 * the new list, so a deletion missed during a disconnect is still seen. Listed objects get the
 * apiVersion and kind a List omits from its items, so the cache looks the same however an object
 * arrived. */
#ifndef ZK_RUNTIME_INFORMER_H
#define ZK_RUNTIME_INFORMER_H

#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>

enum informer_key_mode { INFORMER_KEY_SELF, INFORMER_KEY_OWNER };

/* Called from the watch thread with a corpus key ("namespace/name"), borrowed for the call. */
typedef void informer_enqueue_fn(void *ud, const char *key);

struct informer_opts {
    const struct kube_resource *resource; /* must outlive the informer */
    const char *namespace;                /* NULL: all namespaces; copied */
    const char *label_selector;           /* NULL: none; copied */
    enum informer_key_mode key_mode;
    informer_enqueue_fn *enqueue;
    void *ud;
};

struct informer;

/* Starts the watch thread. *out owned by the caller: informer_stop, then informer_free. */
int informer_start(struct kube_client *c, const struct informer_opts *o, struct informer **out, struct zk_err *err);

/* Whether the first complete list has arrived (for /readyz and before the first reconcile). */
int informer_has_synced(struct informer *inf);

/* A deep copy of the cached object, owned by the caller (cJSON_Delete), or NULL when absent or out of
 * memory. */
cJSON *informer_get(struct informer *inf, const char *ns, const char *name);

/* A new array (caller-owned) of deep copies of every cached object whose corpus key (as enqueue would
 * see it) is key; empty when none, NULL only when out of memory. */
cJSON *informer_list_for(struct informer *inf, const char *key);

/* Every cached object's own key, as a new array of strings (caller-owned); NULL when out of memory. */
cJSON *informer_keys(struct informer *inf);

/* Asks the watch thread to stop without waiting, so that several informers wind down in parallel. */
void informer_cancel(struct informer *inf);

/* Stops the watch thread and waits for it. Safe to call twice. */
void informer_stop(struct informer *inf);
void informer_free(struct informer *inf);

/* The corpus key of obj under mode, written into key (len bytes); returns 1, or 0 when obj belongs to
 * no corpus. Pure; exposed for unit tests. */
int informer_owner_key(const cJSON *obj, enum informer_key_mode mode, char *key, size_t len);

#endif
