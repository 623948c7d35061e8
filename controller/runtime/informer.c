/* informer.c: see informer.h.
 *
 * The cache is a hash table of entries, each the object's own key, the key its key function gave it
 * (computed once, on arrival) and the pruned object as compact JSON text, deflated against a preset
 * dictionary: the first object the informer cached. Text, because a cJSON tree takes four to six times
 * the memory of its text (a node and its strings per member, each a separate allocation), and a
 * thousand corpora are ten thousand cached objects; deflated against another object of the same kind,
 * because the objects of one kind share most of their text (a ConfigMap carries the same 15 KB
 * indexer script for every corpus), which the dictionary turns into back-references. A reader inflates
 * and parses its own copy, a few tens of microseconds. Storing the owner key lets informer_list_for scan
 * the table without inflating anything. */
#include "controller/runtime/informer.h"

#include "http.h"
#include "jb.h"
#include "json.h"
#include "kube/watch.h"
#include "log.h"
#include "mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define INFORMER_KEY_MAX 320
/* The table's first size; it doubles whenever it holds more entries than buckets. */
#define INFORMER_BUCKETS_MIN 64
/* Deflate looks back at most 32 KB, so a longer dictionary would be wasted. */
#define INFORMER_DICT_MAX 32768
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
    atomic_int cancel;
    pthread_mutex_t mu;
    struct informer_table *cache; /* guarded by mu; replaced whole by a relist */
    struct informer_table *listing; /* the next cache while a list arrives; the watch thread's alone */
    int synced;
    /* The preset dictionary of every entry: set by the watch thread before the first entry is made,
     * never changed after, so readers of entries may read it. */
    unsigned char *dict;
    size_t dict_len;
    /* With informer_opts.namespaces: one informer per namespace, which do all of the above, and this
     * one only hands each call to the part of the namespace it names. */
    struct informer **parts;
    int nparts;
};

/* One allocation: with the keys and the deflated text in allocations of their own, malloc's headers
 * and rounding took more than the deflated text. data holds the object's own key ("namespace/name")
 * and its NUL, then, when key_of gave one, the owner key and its NUL, then zlen bytes: the pruned
 * object as compact JSON (len bytes), deflated (raw) against the dictionary. Keys are shorter than
 * INFORMER_KEY_MAX and objects arrive in responses bounded far below 4 GB, so the lengths fit. */
struct informer_entry {
    struct informer_entry *next;
    uint32_t zlen;
    uint32_t len;
    uint16_t key_len;   /* without the NUL */
    uint16_t owner_len; /* with the NUL; 0 when there is no owner key */
    char data[];
};

struct informer_table {
    struct informer_entry **buckets;
    size_t nbuckets;
    size_t count;
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

/* ---- the table ------------------------------------------------------------------------------------ */

#define INFORMER_FNV_OFFSET 14695981039346656037u

/* FNV-1a of n bytes at p, continuing from h (INFORMER_FNV_OFFSET to start). */
static uint64_t informer_fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static size_t informer_hash(const char *key)
{
    return (size_t)informer_fnv1a(INFORMER_FNV_OFFSET, (const unsigned char *)key, strlen(key));
}

static const char *informer_entry_key(const struct informer_entry *e)
{
    return e->data;
}

/* What key_of gave for the entry's object, or NULL. */
static const char *informer_entry_owner(const struct informer_entry *e)
{
    return e->owner_len ? e->data + e->key_len + 1 : NULL;
}

static const unsigned char *informer_entry_z(const struct informer_entry *e)
{
    return (const unsigned char *)e->data + e->key_len + 1 + e->owner_len;
}

static void informer_entry_free(struct informer_entry *e)
{
    free(e);
}

static struct informer_table *informer_table_new(void)
{
    struct informer_table *t = mem_calloc(1, sizeof(*t));

    t->nbuckets = INFORMER_BUCKETS_MIN;
    t->buckets = mem_calloc(t->nbuckets, sizeof(*t->buckets));
    return t;
}

static void informer_table_free(struct informer_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct informer_entry *e = t->buckets[i], *next;

        for (; e; e = next) {
            next = e->next;
            informer_entry_free(e);
        }
    }
    free(t->buckets);
    free(t);
}

/* The entry of key, or NULL. */
static struct informer_entry *informer_table_find(const struct informer_table *t, const char *key)
{
    struct informer_entry *e = t->buckets[informer_hash(key) % t->nbuckets];

    while (e && strcmp(informer_entry_key(e), key) != 0)
        e = e->next;
    return e;
}

/* Removes and returns the entry of key, or NULL. */
static struct informer_entry *informer_table_detach(struct informer_table *t, const char *key)
{
    struct informer_entry **pp = &t->buckets[informer_hash(key) % t->nbuckets], *e;

    for (; (e = *pp) != NULL; pp = &e->next) {
        if (strcmp(informer_entry_key(e), key) == 0) {
            *pp = e->next;
            e->next = NULL;
            t->count--;
            return e;
        }
    }
    return NULL;
}

/* Adds e (taken over), whose key is not in t. */
static void informer_table_add(struct informer_table *t, struct informer_entry *e)
{
    size_t b;

    if (t->count >= t->nbuckets) {
        size_t n = t->nbuckets * 2;
        struct informer_entry **grown = mem_calloc(n, sizeof(*grown));

        for (size_t i = 0; i < t->nbuckets; i++) {
            struct informer_entry *x = t->buckets[i], *next;

            for (; x; x = next) {
                next = x->next;
                b = informer_hash(informer_entry_key(x)) % n;
                x->next = grown[b];
                grown[b] = x;
            }
        }
        free(t->buckets);
        t->buckets = grown;
        t->nbuckets = n;
    }
    b = informer_hash(informer_entry_key(e)) % t->nbuckets;
    e->next = t->buckets[b];
    t->buckets[b] = e;
    t->count++;
}

/* Runs the statement that follows once for each entry e of t (e must not be removed meanwhile). */
#define INFORMER_TABLE_EACH(t, e)                                                                              \
    for (size_t informer_b_ = 0; informer_b_ < (t)->nbuckets; informer_b_++)                                  \
        for (struct informer_entry *e = (t)->buckets[informer_b_]; e; e = e->next)

/* ---- objects in and out --------------------------------------------------------------------------- */

static void informer_notify_key(struct informer *inf, const char *owner)
{
    if (owner)
        inf->enqueue(inf->ud, owner);
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

/* zlib's allocator: lib/mem's, so that zlib never reports a failed allocation either. */
static voidpf informer_zalloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return mem_calloc(items, size);
}

static void informer_zfree(voidpf opaque, voidpf p)
{
    (void)opaque;
    free(p);
}

/* zlib fails, with its allocations taken care of, only when called wrongly or handed a corrupt
 * stream; the entries are this informer's own output, so either is a bug here. */
static _Noreturn void informer_zlib_bug(const char *what, int zrc)
{
    char code[16];

    snprintf(code, sizeof(code), "%d", zrc);
    log_error("Informer cache: zlib failed", "call", what, "code", code, NULL);
    abort();
}

/* A new entry (caller-owned, informer_entry_free) holding key, owner (NULL: none) and text (len
 * bytes) deflated against the informer's dictionary, which the first text becomes. */
static struct informer_entry *informer_pack(struct informer *inf, const char *key, const char *owner,
                                            const char *text, size_t len)
{
    size_t key_len = strlen(key), owner_len = owner ? strlen(owner) + 1 : 0;
    struct informer_entry *e;
    z_stream zs = {.zalloc = informer_zalloc, .zfree = informer_zfree};
    unsigned char *z;
    uLong cap;
    int zrc;

    if (!inf->dict) {
        inf->dict_len = len < INFORMER_DICT_MAX ? len : INFORMER_DICT_MAX;
        inf->dict = mem_alloc(inf->dict_len);
        memcpy(inf->dict, text + len - inf->dict_len, inf->dict_len);
    }
    if ((zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) != Z_OK)
        informer_zlib_bug("deflateInit2", zrc);
    /* Deflated into a scratch buffer of the worst case first, so the entry is allocated to fit. */
    cap = deflateBound(&zs, (uLong)len);
    z = mem_alloc(cap);
    if ((zrc = deflateSetDictionary(&zs, inf->dict, (uInt)inf->dict_len)) != Z_OK)
        informer_zlib_bug("deflateSetDictionary", zrc);
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)len;
    zs.next_out = z;
    zs.avail_out = (uInt)cap;
    if ((zrc = deflate(&zs, Z_FINISH)) != Z_STREAM_END)
        informer_zlib_bug("deflate", zrc);
    deflateEnd(&zs);
    e = mem_alloc(sizeof(*e) + key_len + 1 + owner_len + zs.total_out);
    e->next = NULL;
    e->zlen = (uint32_t)zs.total_out;
    e->len = (uint32_t)len;
    e->key_len = (uint16_t)key_len;
    e->owner_len = (uint16_t)owner_len;
    memcpy(e->data, key, key_len + 1);
    if (owner)
        memcpy(e->data + key_len + 1, owner, owner_len);
    memcpy(e->data + key_len + 1 + owner_len, z, e->zlen);
    free(z);
    return e;
}

/* The object e holds, parsed (caller-owned). */
static cJSON *informer_unpack(const struct informer *inf, const struct informer_entry *e)
{
    z_stream zs = {.zalloc = informer_zalloc, .zfree = informer_zfree};
    char *text = mem_alloc(e->len + 1);
    cJSON *obj;
    int zrc;

    if ((zrc = inflateInit2(&zs, -15)) != Z_OK)
        informer_zlib_bug("inflateInit2", zrc);
    if ((zrc = inflateSetDictionary(&zs, inf->dict, (uInt)inf->dict_len)) != Z_OK)
        informer_zlib_bug("inflateSetDictionary", zrc);
    zs.next_in = (Bytef *)informer_entry_z(e);
    zs.avail_in = (uInt)e->zlen;
    zs.next_out = (Bytef *)text;
    zs.avail_out = (uInt)e->len;
    if ((zrc = inflate(&zs, Z_FINISH)) != Z_STREAM_END || zs.total_out != e->len)
        informer_zlib_bug("inflate", zrc);
    inflateEnd(&zs);
    text[e->len] = '\0';
    /* The text is what cJSON printed, so it parses. */
    obj = cJSON_ParseWithLength(text, e->len);
    free(text);
    return obj;
}

/* The entry for obj as the cache keeps it: pruned, with its type, as text, with its owner key. NULL
 * when obj has no name. */
static struct informer_entry *informer_entry_new(struct informer *inf, const cJSON *obj)
{
    char key[INFORMER_KEY_MAX], owner[INFORMER_KEY_MAX];
    struct informer_entry *e;
    struct jb b = {0};
    char *text;
    cJSON *copy;

    if (!informer_self_key(obj, key, sizeof(key)))
        return NULL;
    copy = cJSON_Duplicate(obj, 1);
    informer_type_meta(&b, inf->resource, copy);
    /* After the type is filled in: a prune function may go by the kind. */
    if (inf->prune)
        inf->prune(copy);
    text = cJSON_PrintUnformatted(copy);
    e = informer_pack(inf, key, inf->key_of(copy, owner, sizeof(owner)) ? owner : NULL, text, strlen(text));
    cJSON_Delete(copy);
    free(text);
    return e;
}

/* Builds the cache's next contents as a list arrives, one object at a time, and puts them in place
 * when it is complete (watch.h). Only the informer's thread touches inf->listing. */
static void informer_on_list(void *ud, enum watch_list_step step, const cJSON *item)
{
    struct informer *inf = ud;
    struct informer_table *fresh, *old;
    struct informer_entry *listed;

    switch (step) {
    case WATCH_LIST_BEGIN:
        informer_table_free(inf->listing);
        inf->listing = informer_table_new();
        return;
    case WATCH_LIST_ITEM:
        if ((listed = informer_entry_new(inf, item)) != NULL) {
            /* A List names each object once; a duplicate would only replace itself. */
            informer_entry_free(informer_table_detach(inf->listing, informer_entry_key(listed)));
            informer_table_add(inf->listing, listed);
        }
        return;
    case WATCH_LIST_END:
        break;
    }
    fresh = inf->listing;
    inf->listing = NULL;
    pthread_mutex_lock(&inf->mu);
    old = inf->cache;
    inf->cache = fresh;
    inf->synced = 1;
    pthread_mutex_unlock(&inf->mu);
    /* fresh is only replaced by this thread, so reading it unlocked here is safe. */
    INFORMER_TABLE_EACH(old, e) informer_notify_key(inf, informer_entry_owner(e));
    INFORMER_TABLE_EACH(fresh, e) informer_notify_key(inf, informer_entry_owner(e));
    informer_table_free(old);
    log_debug("Informer listed", "resource", inf->resource->plural, NULL);
}

/* Whether two entries hold the same key, owner and pruned object: deflate gives the same bytes for the
 * same input and dictionary, so equal bytes mean an update that changed nothing the prune kept. */
static int informer_entry_same(const struct informer_entry *a, const struct informer_entry *b)
{
    return a->len == b->len && a->zlen == b->zlen && a->key_len == b->key_len && a->owner_len == b->owner_len &&
           memcmp(a->data, b->data, (size_t)a->key_len + 1 + a->owner_len + a->zlen) == 0;
}

static void informer_on_event(void *ud, enum watch_event_type type, const cJSON *obj)
{
    struct informer *inf = ud;
    char key[INFORMER_KEY_MAX], owner[INFORMER_KEY_MAX];
    struct informer_entry *e = NULL, *previous;

    if (!informer_self_key(obj, key, sizeof(key)))
        return;
    if (type != WATCH_DELETED)
        e = informer_entry_new(inf, obj);
    pthread_mutex_lock(&inf->mu);
    previous = informer_table_detach(inf->cache, key);
    if (e)
        informer_table_add(inf->cache, e);
    pthread_mutex_unlock(&inf->mu);
    /* An update to what the prune drops (a pod's readiness, a Deployment's rollout counters) tells
     * nobody: the owner would find nothing new. */
    if (previous && e && informer_entry_same(previous, e)) {
        informer_entry_free(previous);
        return;
    }
    /* An object whose owner changed belongs to two corpora for a moment: tell both. */
    if (previous)
        informer_notify_key(inf, informer_entry_owner(previous));
    if (e)
        informer_notify_key(inf, informer_entry_owner(e));
    else if (inf->key_of(obj, owner, sizeof(owner)))
        inf->enqueue(inf->ud, owner);
    informer_entry_free(previous);
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

    while (!atomic_load(&inf->cancel)) {
        struct zk_err err = {0};
        int rc = watch_run(inf->client, &o, &err);

        if (rc == ZK_ECANCELLED || atomic_load(&inf->cancel))
            break;
        log_error("Watch failed; retrying", "resource", inf->resource->plural, "error", err.msg, NULL);
        for (int i = 0; i < INFORMER_RETRY_SECONDS * 10 && !atomic_load(&inf->cancel); i++) {
            struct timespec ts = {0, 100 * 1000 * 1000};

            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* The part watching ns, or NULL. */
static struct informer *informer_part(struct informer *inf, const char *ns, size_t ns_len)
{
    for (int i = 0; i < inf->nparts; i++)
        if (strlen(inf->parts[i]->namespace) == ns_len && memcmp(inf->parts[i]->namespace, ns, ns_len) == 0)
            return inf->parts[i];
    return NULL;
}

/* An informer of several namespaces: a part for each, started in turn; on a failure the parts
 * started so far are stopped and freed with the whole. */
static int informer_start_parts(struct kube_client *c, const struct informer_opts *o, struct informer **out,
                                struct zk_err *err)
{
    struct informer *inf = mem_calloc(1, sizeof(*inf));
    struct informer_opts one = *o;
    int n = 0, rc = ZK_OK;

    while (o->namespaces[n])
        n++;
    inf->resource = o->resource;
    mem_mutex_init(&inf->mu);
    inf->parts = mem_calloc((size_t)n, sizeof(*inf->parts));
    one.namespaces = NULL;
    for (int i = 0; i < n && rc == ZK_OK; i++) {
        one.namespace = o->namespaces[i];
        rc = informer_start(c, &one, &inf->parts[i], err);
        if (rc == ZK_OK)
            inf->nparts++;
    }
    if (rc != ZK_OK) {
        informer_free(inf);
        return rc;
    }
    inf->started = 1;
    *out = inf;
    return ZK_OK;
}

int informer_start(struct kube_client *c, const struct informer_opts *o, struct informer **out, struct zk_err *err)
{
    struct informer *inf;

    *out = NULL;
    if (o->namespaces && o->namespaces[0] && o->namespaces[1])
        return informer_start_parts(c, o, out, err);
    inf = mem_calloc(1, sizeof(*inf));
    inf->client = c;
    inf->resource = o->resource;
    inf->key_of = o->key_of;
    inf->prune = o->prune;
    inf->enqueue = o->enqueue;
    inf->ud = o->ud;
    mem_mutex_init(&inf->mu);
    inf->cache = informer_table_new();
    if (o->namespaces && o->namespaces[0])
        inf->namespace = mem_strdup(o->namespaces[0]);
    else
        inf->namespace = o->namespace ? mem_strdup(o->namespace) : NULL;
    inf->label_selector = o->label_selector ? mem_strdup(o->label_selector) : NULL;
    if (pthread_create(&inf->thread, NULL, informer_main, inf) != 0) {
        informer_free(inf);
        return zk_err_set(err, ZK_EIO, "informer %s: cannot start its thread", o->resource->plural);
    }
    inf->started = 1;
    *out = inf;
    return ZK_OK;
}

int informer_has_synced(struct informer *inf)
{
    int s;

    if (inf->nparts)
        return informer_all_synced(inf->parts, inf->nparts);
    pthread_mutex_lock(&inf->mu);
    s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

int informer_all_synced(struct informer *const *infs, int n)
{
    for (int i = 0; i < n; i++)
        if (!informer_has_synced(infs[i]))
            return 0;
    return 1;
}

cJSON *informer_get(struct informer *inf, const char *ns, const char *name)
{
    char key[INFORMER_KEY_MAX];
    const struct informer_entry *hit;
    cJSON *copy = NULL;

    if (inf->nparts) {
        struct informer *part = ns ? informer_part(inf, ns, strlen(ns)) : NULL;

        return part ? informer_get(part, ns, name) : NULL;
    }
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    pthread_mutex_lock(&inf->mu);
    hit = informer_table_find(inf->cache, key);
    if (hit)
        copy = informer_unpack(inf, hit);
    pthread_mutex_unlock(&inf->mu);
    return copy;
}

uint64_t informer_fingerprint(struct informer *inf, const char *ns, const char *name)
{
    char key[INFORMER_KEY_MAX];
    const struct informer_entry *hit;
    uint64_t h = 0;

    if (inf->nparts) {
        struct informer *part = ns ? informer_part(inf, ns, strlen(ns)) : NULL;

        return part ? informer_fingerprint(part, ns, name) : 0;
    }
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    pthread_mutex_lock(&inf->mu);
    hit = informer_table_find(inf->cache, key);
    if (hit) {
        /* The deflated text stands for the text: deflate is deterministic for one dictionary. */
        h = informer_fnv1a(INFORMER_FNV_OFFSET ^ hit->len, informer_entry_z(hit), hit->zlen);
        h = h ? h : 1;
    }
    pthread_mutex_unlock(&inf->mu);
    return h;
}

cJSON *informer_list_for(struct informer *inf, const char *key)
{
    struct jb b = {0};
    cJSON *arr;

    if (inf->nparts) {
        /* Owner keys are "namespace/name", and an owner lives in the namespace of what it owns. */
        const char *slash = strchr(key, '/');
        struct informer *part = slash ? informer_part(inf, key, (size_t)(slash - key)) : NULL;

        return part ? informer_list_for(part, key) : cJSON_CreateArray();
    }
    arr = jb_array(&b);
    pthread_mutex_lock(&inf->mu);
    INFORMER_TABLE_EACH(inf->cache, e) {
        if (informer_entry_owner(e) && strcmp(informer_entry_owner(e), key) == 0)
            jb_push(&b, arr, informer_unpack(inf, e));
    }
    pthread_mutex_unlock(&inf->mu);
    return jb_finish(&b, arr);
}

cJSON *informer_keys(struct informer *inf)
{
    struct jb b = {0};
    cJSON *arr = jb_array(&b), *part_keys, *k;

    for (int i = 0; i < inf->nparts; i++) {
        part_keys = informer_keys(inf->parts[i]);
        while ((k = cJSON_DetachItemFromArray(part_keys, 0)) != NULL)
            jb_push(&b, arr, k);
        cJSON_Delete(part_keys);
    }
    if (inf->nparts)
        return jb_finish(&b, arr);
    pthread_mutex_lock(&inf->mu);
    INFORMER_TABLE_EACH(inf->cache, e) jb_push(&b, arr, jb_string(&b, informer_entry_key(e)));
    pthread_mutex_unlock(&inf->mu);
    return jb_finish(&b, arr);
}

void informer_cancel(struct informer *inf)
{
    if (!inf)
        return;
    for (int i = 0; i < inf->nparts; i++)
        informer_cancel(inf->parts[i]);
    http_cancel(&inf->cancel);
}

void informer_stop(struct informer *inf)
{
    if (!inf || !inf->started)
        return;
    informer_cancel(inf);
    for (int i = 0; i < inf->nparts; i++)
        informer_stop(inf->parts[i]);
    if (!inf->nparts)
        pthread_join(inf->thread, NULL);
    inf->started = 0;
}

void informer_free(struct informer *inf)
{
    if (!inf)
        return;
    informer_stop(inf);
    for (int i = 0; i < inf->nparts; i++)
        informer_free(inf->parts[i]);
    free(inf->parts);
    informer_table_free(inf->cache);
    informer_table_free(inf->listing);
    free(inf->dict);
    free(inf->namespace);
    free(inf->label_selector);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}
