/* Unit tests for controller/runtime/informer: the key functions informers are given (informer_self_key,
 * an object's own key, and controller/corpus/api's api_corpus_key, which corpus a changed child belongs
 * to), and an informer running against a fake API server (tests/support/fakeapi): the first list, watch
 * events, reads, owner lookups, fingerprints and what the compressed cache gives back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/corpus/api.h"
#include "controller/runtime/informer.h"
#include "json.h"
#include "mem.h"
#include "tests/support/fakeapi.h"

static int key_of(const char *json, informer_key_fn *fn, char *key, size_t len)
{
    cJSON *obj = cJSON_Parse(json);
    int r;

    assert_non_null(obj);
    r = fn(obj, key, len);
    cJSON_Delete(obj);
    return r;
}

static void test_self_key(void **state)
{
    char key[64];

    (void)state;
    assert_true(key_of("{\"metadata\":{\"namespace\":\"team\",\"name\":\"org\"}}", informer_self_key, key, sizeof(key)));
    assert_string_equal(key, "team/org");
    assert_false(key_of("{\"metadata\":{}}", informer_self_key, key, sizeof(key)));
}

static void test_controller_owner_reference(void **state)
{
    char key[64];

    (void)state;
    assert_true(key_of("{\"metadata\":{\"namespace\":\"team\",\"name\":\"org-search\",\"ownerReferences\":["
                       "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"x\",\"controller\":false},"
                       "{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\",\"name\":\"org\","
                       "\"controller\":true}]}}",
                       api_corpus_key, key, sizeof(key)));
    assert_string_equal(key, "team/org");
    /* A non-controller reference, or one of another group, is not ours. */
    assert_false(key_of("{\"metadata\":{\"namespace\":\"team\",\"ownerReferences\":[{\"apiVersion\":"
                        "\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\",\"name\":\"org\"}]}}",
                        api_corpus_key, key, sizeof(key)));
    assert_false(key_of("{\"metadata\":{\"namespace\":\"team\",\"ownerReferences\":[{\"apiVersion\":"
                        "\"example.com/v1\",\"kind\":\"CodeSearchCorpus\",\"name\":\"org\",\"controller\":true}]}}",
                        api_corpus_key, key, sizeof(key)));
}

static void test_instance_label_fallback(void **state)
{
    char key[64];

    (void)state;
    /* A retained PVC, or a Job owned by the CronJob: mapped by label when we manage it. */
    assert_true(key_of("{\"metadata\":{\"namespace\":\"team\",\"name\":\"org-indexer-123\",\"labels\":{"
                       "\"app.kubernetes.io/managed-by\":\"zoekt-operator\",\"app.kubernetes.io/instance\":\"org\"},"
                       "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"name\":"
                       "\"org-indexer\",\"controller\":true}]}}",
                       api_corpus_key, key, sizeof(key)));
    assert_string_equal(key, "team/org");
    assert_false(key_of("{\"metadata\":{\"namespace\":\"team\",\"labels\":{\"app.kubernetes.io/managed-by\":\"helm\","
                        "\"app.kubernetes.io/instance\":\"org\"}}}",
                        api_corpus_key, key, sizeof(key)));
}

/* A corpus name longer than 63 characters gets a hashed instance label; the annotation still names
 * it, and wins over the label. */
static void test_corpus_annotation_for_long_names(void **state)
{
    char key[160];
    const char *name = "platform-engineering-organisation-wide-code-search-corpus-for-agents";

    (void)state;
    assert_true(strlen(name) > 63);
    {
        char json[1024];

        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"namespace\":\"team\",\"name\":\"x-indexer-29400000\",\"labels\":{"
                 "\"app.kubernetes.io/managed-by\":\"zoekt-operator\",\"app.kubernetes.io/instance\":"
                 "\"platform-engineering-organisation-wide-code-search-corpus-f-1a2b3c4d\"},"
                 "\"annotations\":{\"codesearch.dev/corpus\":\"%s\"},"
                 "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"x-indexer\","
                 "\"controller\":true}]}}",
                 name);
        assert_true(key_of(json, api_corpus_key, key, sizeof(key)));
    }
    assert_string_equal(key, "team/platform-engineering-organisation-wide-code-search-corpus-for-agents");
    /* Objects we do not manage are not mapped, whatever they are annotated with. */
    assert_false(key_of("{\"metadata\":{\"namespace\":\"team\",\"annotations\":{\"codesearch.dev/corpus\":\"org\"}}}",
                        api_corpus_key, key, sizeof(key)));
}

static void test_key_that_does_not_fit(void **state)
{
    char key[8];

    (void)state;
    assert_false(key_of("{\"metadata\":{\"namespace\":\"team\",\"name\":\"a-long-name\"}}", informer_self_key, key,
                        sizeof(key)));
}


/* ---- an informer against a fake API server ------------------------------------------------------ */

static const struct kube_resource CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", 1};
#define CM_PATH "/api/v1/namespaces/ns/configmaps"
#define BIG 20000

/* A ConfigMap as a List item (no apiVersion or kind), labelled with the key of its owner or not,
 * carrying managedFields (which the prune drops) and a script of pad bytes, the same text in every
 * ConfigMap, as the indexer script is. Heap string. */
static char *cm_item(const char *name, const char *owner, const char *value, size_t pad)
{
    char *script = mem_alloc(pad + 1), *item;

    for (size_t i = 0; i < pad; i++)
        script[i] = "set -eu; git fetch; "[i % 20];
    script[pad] = '\0';
    item = mem_printf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":\"5\"%s%s%s,"
                      "\"managedFields\":[{\"manager\":\"kubectl\"}]},\"data\":{\"k\":\"%s\",\"script\":\"%s\"}}",
                      name, owner ? ",\"labels\":{\"owner\":\"" : "", owner ? owner : "", owner ? "\"}" : "", value,
                      script);
    free(script);
    return item;
}

struct world {
    struct fakeapi *api;
    struct kube_client *client;
    struct informer *inf;
    pthread_mutex_t mu;
    char enqueued[4096]; /* every key enqueue saw, each followed by ';' */
    char list[3 * BIG];
};

/* The fake's answer: the List of CM_PATH, with resourceVersion 10. */
static int answer_list(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    struct world *w = ud;

    if (strcmp(rq->method, "GET") != 0 || strcmp(rq->path, CM_PATH) != 0)
        return 0;
    snprintf(out, len, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"10\"},"
                       "\"items\":[%s]}", w->list);
    return 200;
}

/* Maps a ConfigMap to "ns/<its owner label>". */
static int owner_key(const cJSON *obj, char *key, size_t len)
{
    const char *owner = json_str(json_path(obj, "metadata.labels"), "owner", NULL);

    return owner && (size_t)snprintf(key, len, "ns/%s", owner) < len;
}

static void record_key(void *ud, const char *key)
{
    struct world *w = ud;
    size_t used;

    pthread_mutex_lock(&w->mu);
    used = strlen(w->enqueued);
    snprintf(w->enqueued + used, sizeof(w->enqueued) - used, "%s;", key);
    pthread_mutex_unlock(&w->mu);
}

/* How often key was enqueued. */
static int enqueued(struct world *w, const char *key)
{
    char want[128];
    int n = 0;

    snprintf(want, sizeof(want), "%s;", key);
    pthread_mutex_lock(&w->mu);
    for (const char *p = w->enqueued; (p = strstr(p, want)) != NULL; p += strlen(want))
        n += p == w->enqueued || p[-1] == ';';
    pthread_mutex_unlock(&w->mu);
    return n;
}

static int synced(void *ud)
{
    return informer_has_synced(((struct world *)ud)->inf);
}

static void world_start(struct world *w)
{
    struct informer_opts o = {.resource = &CONFIGMAPS, .namespace = "ns", .key_of = owner_key,
                              .prune = informer_prune_server_fields, .enqueue = record_key, .ud = w};
    char *a = cm_item("a", "x", "v", BIG), *b = cm_item("b", "x", "v", BIG), *c = cm_item("c", NULL, "v", 10);
    struct zk_err err = {0};

    pthread_mutex_init(&w->mu, NULL);
    snprintf(w->list, sizeof(w->list), "%s,%s,%s", a, b, c);
    free(a);
    free(b);
    free(c);
    w->api = fakeapi_start(answer_list, w);
    w->client = fakeapi_client(w->api);
    assert_int_equal(informer_start(w->client, &o, &w->inf, &err), ZK_OK);
    assert_true(fakeapi_wait_for(synced, w, 10));
}

static void world_stop(struct world *w)
{
    informer_cancel(w->inf);
    informer_stop(w->inf);
    fakeapi_stop(w->api);
    informer_free(w->inf);
    kube_client_free(w->client);
    pthread_mutex_destroy(&w->mu);
}

/* The first list: every object cached as it would arrive by a watch event (apiVersion and kind filled
 * in), pruned, whole after the round trip through the deflated cache, and each owner told. */
static void test_first_list(void **state)
{
    static struct world w;
    cJSON *a, *want, *none, *all, *keys;
    char *text;

    (void)state;
    memset(&w, 0, sizeof(w));
    world_start(&w);
    a = informer_get(w.inf, "ns", "a");
    assert_non_null(a);
    text = cm_item("a", "x", "v", BIG);
    want = cJSON_Parse(text);
    free(text);
    cJSON_AddStringToObject(want, "apiVersion", "v1");
    cJSON_AddStringToObject(want, "kind", "ConfigMap");
    informer_prune_server_fields(want);
    /* The 20 KB script survives deflate and inflate against the dictionary byte for byte. */
    assert_true(cJSON_Compare(a, want, 1));
    assert_null(json_path(a, "metadata.managedFields"));
    assert_null(informer_get(w.inf, "ns", "absent"));
    assert_null(informer_get(w.inf, "other", "a"));

    all = informer_list_for(w.inf, "ns/x");
    assert_int_equal(cJSON_GetArraySize(all), 2);
    none = informer_list_for(w.inf, "ns/nobody");
    assert_non_null(none);
    assert_int_equal(cJSON_GetArraySize(none), 0);
    keys = informer_keys(w.inf);
    assert_int_equal(cJSON_GetArraySize(keys), 3);
    /* Each owned object tells its owner; c has none and tells nobody. */
    assert_int_equal(enqueued(&w, "ns/x"), 2);
    assert_int_equal(enqueued(&w, "ns/c"), 0);
    cJSON_Delete(a);
    cJSON_Delete(want);
    cJSON_Delete(all);
    cJSON_Delete(none);
    cJSON_Delete(keys);
    world_stop(&w);
}

struct expect {
    struct world *w;
    const char *name;
    const char *k; /* the data.k wanted, or NULL for absent */
};

static int has_k(void *ud)
{
    struct expect *e = ud;
    cJSON *obj = informer_get(e->w->inf, "ns", e->name);
    int ok = e->k ? obj && strcmp(json_path_str(obj, "data.k", ""), e->k) == 0 : obj == NULL;

    cJSON_Delete(obj);
    return ok;
}

/* Watch events replace and remove cached objects, tell the owners, and move the fingerprints, which
 * stay put while nothing changes. */
static void test_watch_events_and_fingerprints(void **state)
{
    static struct world w;
    struct expect modified = {&w, "a", "w"}, deleted = {&w, "b", NULL};
    uint64_t fa, fb;
    char line[3 * BIG], *item;

    (void)state;
    memset(&w, 0, sizeof(w));
    world_start(&w);
    fa = informer_fingerprint(w.inf, "ns", "a");
    fb = informer_fingerprint(w.inf, "ns", "b");
    assert_true(fa != 0 && fb != 0);
    assert_true(fa == informer_fingerprint(w.inf, "ns", "a"));
    /* a and b differ only in their names: the fingerprint tells them apart. */
    assert_true(fa != fb);
    assert_true(informer_fingerprint(w.inf, "ns", "absent") == 0);

    item = cm_item("a", "x", "w", BIG);
    snprintf(line, sizeof(line), "{\"type\":\"MODIFIED\",\"object\":%s}", item);
    free(item);
    fakeapi_push(w.api, CM_PATH, line);
    assert_true(fakeapi_wait_for(has_k, &modified, 10));
    assert_true(informer_fingerprint(w.inf, "ns", "a") != fa);
    assert_true(informer_fingerprint(w.inf, "ns", "b") == fb);

    item = cm_item("b", "x", "v", 10);
    snprintf(line, sizeof(line), "{\"type\":\"DELETED\",\"object\":%s}", item);
    free(item);
    fakeapi_push(w.api, CM_PATH, line);
    assert_true(fakeapi_wait_for(has_k, &deleted, 10));
    assert_true(informer_fingerprint(w.inf, "ns", "b") == 0);
    /* Two from the list; each event tells the owner of the object before and after it (x both times). */
    assert_int_equal(enqueued(&w, "ns/x"), 6);
    world_stop(&w);
}

/* An update that changes only what the prune drops (here the managedFields) tells nobody, as the
 * owner would find nothing new; the next real change does. */
/* Two namespaces' Lists: "a" and "b" in ns (both owned by x), "a" in ns2 (owned by y). */
static int answer_two_namespaces(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    static const char *const item = "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"resourceVersion\":\"5\","
                                    "\"labels\":{\"owner\":\"%s\"}},\"data\":{\"k\":\"%s\"}}";
    char a[256], b[256];

    (void)ud;
    if (strcmp(rq->method, "GET") != 0)
        return 0;
    if (strcmp(rq->path, CM_PATH) == 0) {
        snprintf(a, sizeof(a), item, "a", "ns", "x", "ns-a");
        snprintf(b, sizeof(b), item, "b", "ns", "x", "ns-b");
    } else if (strcmp(rq->path, "/api/v1/namespaces/ns2/configmaps") == 0) {
        snprintf(a, sizeof(a), item, "a", "ns2", "y", "ns2-a");
        b[0] = '\0';
    } else {
        return 0;
    }
    snprintf(out, len, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"10\"},"
                       "\"items\":[%s%s%s]}", a, b[0] ? "," : "", b);
    return 200;
}

/* Maps a ConfigMap to "<its namespace>/<its owner label>", as a child maps to its corpus. */
static int ns_owner_key(const cJSON *obj, char *key, size_t len)
{
    const char *owner = json_str(json_path(obj, "metadata.labels"), "owner", NULL);

    return owner && (size_t)snprintf(key, len, "%s/%s", json_path_str(obj, "metadata.namespace", ""), owner) < len;
}

/* An informer of a list of namespaces (the operator's --namespace a,b): one watch in each, no request
 * for all namespaces (which Roles in them would not allow), and each lookup answered from the part of
 * the namespace it names. */
static void test_several_namespaces(void **state)
{
    static const char *const namespaces[] = {"ns", "ns2", NULL};
    static struct world w;
    struct informer_opts o = {.resource = &CONFIGMAPS, .namespaces = namespaces, .key_of = ns_owner_key,
                              .enqueue = record_key, .ud = &w};
    struct zk_err err = {0};
    cJSON *got, *list, *keys;

    (void)state;
    memset(&w, 0, sizeof(w));
    pthread_mutex_init(&w.mu, NULL);
    w.api = fakeapi_start(answer_two_namespaces, &w);
    w.client = fakeapi_client(w.api);
    assert_int_equal(informer_start(w.client, &o, &w.inf, &err), ZK_OK);
    assert_true(fakeapi_wait_for(synced, &w, 10));
    assert_int_equal(fakeapi_count(w.api, "GET", "/api/v1/configmaps"), 0);

    got = informer_get(w.inf, "ns", "a");
    assert_string_equal(json_path_str(got, "data.k", ""), "ns-a");
    cJSON_Delete(got);
    got = informer_get(w.inf, "ns2", "a");
    assert_string_equal(json_path_str(got, "data.k", ""), "ns2-a");
    cJSON_Delete(got);
    assert_null(informer_get(w.inf, "ns2", "b"));
    assert_null(informer_get(w.inf, "ns3", "a"));
    assert_int_not_equal(informer_fingerprint(w.inf, "ns2", "a"), 0);
    assert_int_not_equal(informer_fingerprint(w.inf, "ns", "a"), informer_fingerprint(w.inf, "ns2", "a"));
    assert_int_equal(informer_fingerprint(w.inf, "ns3", "a"), 0);

    list = informer_list_for(w.inf, "ns/x");
    assert_int_equal(cJSON_GetArraySize(list), 2);
    cJSON_Delete(list);
    list = informer_list_for(w.inf, "ns2/y");
    assert_int_equal(cJSON_GetArraySize(list), 1);
    cJSON_Delete(list);
    list = informer_list_for(w.inf, "ns3/x");
    assert_int_equal(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
    keys = informer_keys(w.inf);
    assert_int_equal(cJSON_GetArraySize(keys), 3);
    cJSON_Delete(keys);
    assert_int_equal(enqueued(&w, "ns/x"), 2);
    assert_int_equal(enqueued(&w, "ns2/y"), 1);
    world_stop(&w);
}

static void test_update_that_prunes_to_the_same(void **state)
{
    static struct world w;
    struct expect changed = {&w, "a", "u"};
    char line[3 * BIG], *item, *manager;

    (void)state;
    memset(&w, 0, sizeof(w));
    world_start(&w);
    item = cm_item("a", "x", "v", BIG);
    manager = strstr(item, "\"kubectl\"");
    assert_non_null(manager);
    memcpy(manager, "\"kubelet\"", 9);
    snprintf(line, sizeof(line), "{\"type\":\"MODIFIED\",\"object\":%s}", item);
    free(item);
    fakeapi_push(w.api, CM_PATH, line);
    item = cm_item("a", "x", "u", BIG);
    snprintf(line, sizeof(line), "{\"type\":\"MODIFIED\",\"object\":%s}", item);
    free(item);
    fakeapi_push(w.api, CM_PATH, line);
    assert_true(fakeapi_wait_for(has_k, &changed, 10));
    /* Two from the list and two from the real change: none from the first update. */
    assert_int_equal(enqueued(&w, "ns/x"), 4);
    world_stop(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_key),
        cmocka_unit_test(test_controller_owner_reference),
        cmocka_unit_test(test_instance_label_fallback),
        cmocka_unit_test(test_corpus_annotation_for_long_names),
        cmocka_unit_test(test_key_that_does_not_fit),
        cmocka_unit_test(test_first_list),
        cmocka_unit_test(test_watch_events_and_fingerprints),
        cmocka_unit_test(test_update_that_prunes_to_the_same),
        cmocka_unit_test(test_several_namespaces),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
