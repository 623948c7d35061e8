/* informer.c: see informer.h.
 *
 * The cache is a cJSON object whose member names are object keys: a few hundred members at most per
 * resource, so cJSON's linear member lookup is cheap and the structure needs no code of its own. */
#include "controller/runtime/informer.h"

#include "jb.h"
#include "json.h"
#include "kube/watch.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INFORMER_KEY_MAX 320
/* How long to wait before watching again when the first list failed for a reason the watch does not
 * retry by itself (Forbidden: an RBAC binding may appear later). */
#define INFORMER_RETRY_SECONDS 5

struct informer {
    struct kube_client *client;
    const struct kube_resource *resource;
    char *namespace;
    char *label_selector;
    informer_key_fn *key_of;
    informer_prune_fn *prune;
    informer_enqueue_fn *enqueue;
    void *ud;
    pthread_t thread;
    int started;
    volatile int cancel;
    pthread_mutex_t mu;
    cJSON *cache; /* object: key -> object */
    int synced;
};

int informer_self_key(const cJSON *obj, char *key, size_t len)
{
    const char *ns = json_path_str(obj, "metadata.namespace", "");
    const char *name = json_path_str(obj, "metadata.name", NULL);
    int n;

    if (!name)
        return 0;
    n = snprintf(key, len, "%s/%s", ns, name);
    return n > 0 && (size_t)n < len;
}

void informer_prune_server_fields(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "annotations"),
                                            "kubectl.kubernetes.io/last-applied-configuration");
}

static void informer_notify(struct informer *inf, const cJSON *obj)
{
    char key[INFORMER_KEY_MAX];

    if (inf->key_of(obj, key, sizeof(key)))
        inf->enqueue(inf->ud, key);
}

/* Gives a listed item the apiVersion and kind that a List leaves out of its items (watch events
 * carry them), so that cached objects compare equal to rendered ones whichever way they arrived. */
static void informer_type_meta(struct jb *b, const struct kube_resource *r, cJSON *obj)
{
    char api[128];

    if (!cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")) {
        if (r->group && r->group[0])
            snprintf(api, sizeof(api), "%s/%s", r->group, r->version);
        else
            snprintf(api, sizeof(api), "%s", r->version);
        jb_add_str(b, obj, "apiVersion", api);
    }
    if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
        jb_add_str(b, obj, "kind", r->kind);
}

/* A copy of obj as the cache keeps it: pruned, with its type. NULL when out of memory. */
static cJSON *informer_copy(const struct informer *inf, const cJSON *obj)
{
    struct jb b = {0};
    cJSON *copy = cJSON_Duplicate(obj, 1);

    if (!copy)
        return NULL;
    if (inf->prune)
        inf->prune(copy);
    informer_type_meta(&b, inf->resource, copy);
    return jb_finish(&b, copy);
}

/* Builds a cache object from a list's items. NULL when out of memory. */
static cJSON *informer_build(const struct informer *inf, const cJSON *items)
{
    struct jb b = {0};
    cJSON *cache = jb_object(&b);
    const cJSON *it;
    char key[INFORMER_KEY_MAX];

    cJSON_ArrayForEach(it, items) {
        cJSON *copy;

        if (b.failed || !informer_self_key(it, key, sizeof(key)))
            continue;
        copy = informer_copy(inf, it);
        b.failed |= !copy;
        jb_add(&b, cache, key, copy);
    }
    return jb_finish(&b, cache);
}

static void informer_on_list(void *ud, const cJSON *items)
{
    struct informer *inf = ud;
    cJSON *fresh = informer_build(inf, items), *old;
    const cJSON *it;

    if (!fresh) {
        /* The old cache stays; the next relist or event brings it up to date. */
        log_error("Informer cache rebuild failed: out of memory", "resource", inf->resource->plural, NULL);
        return;
    }
    pthread_mutex_lock(&inf->mu);
    old = inf->cache;
    inf->cache = fresh;
    inf->synced = 1;
    pthread_mutex_unlock(&inf->mu);
    /* fresh is only replaced by this thread, so reading it unlocked here is safe. */
    cJSON_ArrayForEach(it, old) informer_notify(inf, it);
    cJSON_ArrayForEach(it, fresh) informer_notify(inf, it);
    cJSON_Delete(old);
    log_debug("Informer listed", "resource", inf->resource->plural, NULL);
}

static void informer_on_event(void *ud, enum watch_event_type type, const cJSON *obj)
{
    struct informer *inf = ud;
    char key[INFORMER_KEY_MAX];
    cJSON *copy = NULL, *previous = NULL;

    if (!informer_self_key(obj, key, sizeof(key)))
        return;
    if (type != WATCH_DELETED) {
        copy = informer_copy(inf, obj);
        if (!copy) {
            log_error("Informer update failed: out of memory", "resource", inf->resource->plural, "key", key,
                      NULL);
            return;
        }
    }
    pthread_mutex_lock(&inf->mu);
    previous = cJSON_DetachItemFromObjectCaseSensitive(inf->cache, key);
    if (copy)
        cJSON_AddItemToObject(inf->cache, key, copy);
    pthread_mutex_unlock(&inf->mu);
    /* An object whose owner changed belongs to two corpora for a moment: tell both. */
    if (previous)
        informer_notify(inf, previous);
    informer_notify(inf, obj);
    cJSON_Delete(previous);
}

static void *informer_main(void *arg)
{
    struct informer *inf = arg;
    struct watch_opts o = {
        .resource = inf->resource,
        .namespace = inf->namespace,
        .label_selector = inf->label_selector,
        .on_list = informer_on_list,
        .on_event = informer_on_event,
        .ud = inf,
        .cancel = &inf->cancel,
    };

    while (!inf->cancel) {
        struct zk_err err = {0};
        int rc = watch_run(inf->client, &o, &err);

        if (rc == ZK_ECANCELLED || inf->cancel)
            break;
        log_error("Watch failed; retrying", "resource", inf->resource->plural, "error", err.msg, NULL);
        for (int i = 0; i < INFORMER_RETRY_SECONDS * 10 && !inf->cancel; i++) {
            struct timespec ts = {0, 100 * 1000 * 1000};

            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

int informer_start(struct kube_client *c, const struct informer_opts *o, struct informer **out, struct zk_err *err)
{
    struct informer *inf = calloc(1, sizeof(*inf));
    int rc;

    *out = NULL;
    if (!inf)
        return zk_err_set(err, ZK_ENOMEM, "informer %s: out of memory", o->resource->plural);
    inf->client = c;
    inf->resource = o->resource;
    inf->key_of = o->key_of;
    inf->prune = o->prune;
    inf->enqueue = o->enqueue;
    inf->ud = o->ud;
    pthread_mutex_init(&inf->mu, NULL);
    inf->cache = cJSON_CreateObject();
    inf->namespace = o->namespace ? strdup(o->namespace) : NULL;
    inf->label_selector = o->label_selector ? strdup(o->label_selector) : NULL;
    if (!inf->cache || (o->namespace && !inf->namespace) || (o->label_selector && !inf->label_selector)) {
        rc = zk_err_set(err, ZK_ENOMEM, "informer %s: out of memory", o->resource->plural);
        goto out;
    }
    if (pthread_create(&inf->thread, NULL, informer_main, inf) != 0) {
        rc = zk_err_set(err, ZK_ENOMEM, "informer %s: cannot start its thread", o->resource->plural);
        goto out;
    }
    inf->started = 1;
    *out = inf;
    return ZK_OK;
out:
    informer_free(inf);
    return rc;
}

int informer_has_synced(struct informer *inf)
{
    int s;

    pthread_mutex_lock(&inf->mu);
    s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

cJSON *informer_get(struct informer *inf, const char *ns, const char *name)
{
    char key[INFORMER_KEY_MAX];
    cJSON *copy = NULL;
    const cJSON *hit;

    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    pthread_mutex_lock(&inf->mu);
    hit = cJSON_GetObjectItemCaseSensitive(inf->cache, key);
    if (hit)
        copy = cJSON_Duplicate(hit, 1);
    pthread_mutex_unlock(&inf->mu);
    return copy;
}

cJSON *informer_list_for(struct informer *inf, const char *key)
{
    struct jb b = {0};
    cJSON *arr = jb_array(&b);
    const cJSON *it;
    char owner[INFORMER_KEY_MAX];

    pthread_mutex_lock(&inf->mu);
    cJSON_ArrayForEach(it, inf->cache) {
        if (!b.failed && inf->key_of(it, owner, sizeof(owner)) && strcmp(owner, key) == 0)
            jb_push(&b, arr, cJSON_Duplicate(it, 1));
    }
    pthread_mutex_unlock(&inf->mu);
    return jb_finish(&b, arr);
}

cJSON *informer_keys(struct informer *inf)
{
    struct jb b = {0};
    cJSON *arr = jb_array(&b);
    const cJSON *it;

    pthread_mutex_lock(&inf->mu);
    cJSON_ArrayForEach(it, inf->cache) {
        if (!b.failed)
            jb_push(&b, arr, jb_string(&b, it->string));
    }
    pthread_mutex_unlock(&inf->mu);
    return jb_finish(&b, arr);
}

void informer_cancel(struct informer *inf)
{
    if (inf)
        inf->cancel = 1;
}

void informer_stop(struct informer *inf)
{
    if (!inf || !inf->started)
        return;
    inf->cancel = 1;
    pthread_join(inf->thread, NULL);
    inf->started = 0;
}

void informer_free(struct informer *inf)
{
    if (!inf)
        return;
    informer_stop(inf);
    cJSON_Delete(inf->cache);
    free(inf->namespace);
    free(inf->label_selector);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}
