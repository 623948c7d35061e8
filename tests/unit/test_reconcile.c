/* Unit tests for controller/corpus/reconcile's I/O path, against a fake API server
 * (tests/support/fakeapi) that serves the corpus and empty lists of children, accepts applies,
 * Events and status writes, and refuses the Service, as a server whose Service IP range is full does
 * (issue 17). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/corpus/api.h"
#include "controller/corpus/reconcile.h"
#include "controller/corpus/status.h"
#include "json.h"
#include "rfc3339.h"
#include "tests/support/fakeapi.h"

#define CORPORA "/apis/codesearch.dev/v1alpha1/namespaces/ns/codesearchcorpora"
#define REFUSAL "Service \\\"org-search\\\" is invalid: spec.clusterIPs: Internal error: failed to allocate a serviceIP: range is full"

static const char CORPUS[] =
    "{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\",\"metadata\":{\"name\":\"org\","
    "\"namespace\":\"ns\",\"uid\":\"11111111-2222-3333-4444-555555555555\",\"generation\":3,"
    "\"resourceVersion\":\"7\"},\"spec\":{\"repositories\":[{\"url\":\"https://github.com/o/a\"}]}}";

/* Whether path names a collection in namespace ns ("/.../namespaces/ns/<plural>"). */
static int is_collection(const char *path)
{
    const char *p = strstr(path, "/namespaces/ns/");

    return p && !strchr(p + strlen("/namespaces/ns/"), '/');
}

/* What the fake's /index-status answers (404 when NULL), and the query of the last request to it. */
static const char *index_answer;
static char index_query[256];

/* Set: namespace ns is being deleted, and every apply in it is refused as the API server refuses it. */
static int ns_terminating;

static int answer(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    (void)ud;
    if (ns_terminating && strcmp(rq->method, "PATCH") == 0 && strstr(rq->path, "/namespaces/ns/")) {
        snprintf(out, len, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                           "\"message\":\"configmaps \\\"org-indexer\\\" is forbidden: unable to create new content in "
                           "namespace ns because it is being terminated\",\"reason\":\"Forbidden\",\"details\":{"
                           "\"name\":\"org-indexer\",\"kind\":\"configmaps\",\"causes\":[{\"reason\":"
                           "\"NamespaceTerminating\",\"message\":\"namespace ns is being terminated\",\"field\":"
                           "\"metadata.namespace\"}]},\"code\":403}");
        return 403;
    }
    if (strcmp(rq->method, "GET") == 0 && strcmp(rq->path, "/index-status") == 0 && index_answer) {
        snprintf(index_query, sizeof(index_query), "%s", rq->query);
        snprintf(out, len, "%s", index_answer);
        return 200;
    }
    if (strcmp(rq->method, "GET") == 0 && strcmp(rq->path, CORPORA) == 0) {
        snprintf(out, len, "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[%s]}", CORPUS);
        return 200;
    }
    if (strcmp(rq->method, "GET") == 0 && is_collection(rq->path)) {
        snprintf(out, len, "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}");
        return 200;
    }
    if (strcmp(rq->method, "PATCH") == 0 && strcmp(rq->path, "/api/v1/namespaces/ns/services/org-search") == 0) {
        snprintf(out, len, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\","
                           "\"reason\":\"Invalid\",\"code\":422}", REFUSAL);
        return 422;
    }
    /* The ConfigMap exists already although the (empty) cache has not seen it, as after a creation a
     * moment ago: its apply answers 200 where the others create their object (201). */
    if (strcmp(rq->method, "PATCH") == 0 && strstr(rq->path, "/namespaces/ns/") && !strstr(rq->path, "/configmaps/")) {
        snprintf(out, len, "{}");
        return 201;
    }
    if (strcmp(rq->method, "PATCH") == 0 || strcmp(rq->method, "PUT") == 0 || strcmp(rq->method, "POST") == 0) {
        snprintf(out, len, "{}");
        return strcmp(rq->method, "POST") == 0 ? 201 : 200;
    }
    return 0;
}

struct world {
    struct fakeapi *api;
    struct reconcile_ctx ctx;
    struct informer *informers[RK_COUNT + 1];
    int n;
};

static void ignore(void *ud, const char *key)
{
    (void)ud;
    (void)key;
}

static int synced(void *ud)
{
    struct world *w = ud;

    return informer_all_synced(w->informers, w->n);
}

static void world_start(struct world *w)
{
    struct informer_opts io = {.namespace = "ns", .key_of = api_corpus_key, .enqueue = ignore};
    struct zk_err err = {0};

    memset(w, 0, sizeof(*w));
    w->api = fakeapi_start(answer, NULL);
    reconcile_ctx_init(&w->ctx);
    reconcile_resources(w->ctx.resources);
    w->ctx.client = fakeapi_client(w->api);
    w->ctx.metrics = metrics_new();
    w->ctx.events = events_new(w->ctx.client, w->ctx.metrics, "zoekt-operator", "test");
    /* /index-status from the fake too: a 404, so the read fails at once instead of resolving a name. */
    w->ctx.index_url_template = fakeapi_url(w->api);
    for (int k = 0; k < RK_COUNT; k++) {
        io.resource = &w->ctx.resources[k];
        io.prune = k == RK_JOB || k == RK_POD ? reconcile_prune_observed : status_prune_child;
        assert_int_equal(informer_start(w->ctx.client, &io, &w->informers[w->n], &err), ZK_OK);
        w->ctx.children[k] = w->informers[w->n++];
    }
    io.resource = &api_corpus_resource;
    io.key_of = informer_self_key;
    io.prune = informer_prune_server_fields;
    assert_int_equal(informer_start(w->ctx.client, &io, &w->informers[w->n], &err), ZK_OK);
    w->ctx.corpora = w->informers[w->n++];
    assert_true(fakeapi_wait_for(synced, w, 10));
}

static void world_stop(struct world *w)
{
    for (int i = 0; i < w->n; i++)
        informer_cancel(w->informers[i]);
    for (int i = 0; i < w->n; i++)
        informer_stop(w->informers[i]);
    fakeapi_stop(w->api);
    for (int i = 0; i < w->n; i++)
        informer_free(w->informers[i]);
    events_free(w->ctx.events);
    metrics_free(w->ctx.metrics);
    kube_client_free(w->ctx.client);
    reconcile_ctx_free(&w->ctx);
}

/* The API server refuses the Service: the other eleven children are still applied, the status says
 * Ready=False/ApplyFailed naming the Service and the server's answer, with observedGeneration, and the
 * reconcile fails so that it is retried with backoff. */
static void test_refused_child_is_in_the_status(void **state)
{
    static struct world w;
    struct zk_err err = {0};
    double requeue = -1;
    const cJSON *ready;
    cJSON *put;
    char *body;

    (void)state;
    world_start(&w);
    assert_int_not_equal(reconcile(&w.ctx, "ns/org", &requeue, &err), ZK_OK);
    assert_non_null(strstr(err.msg, "Service org-search"));
    assert_non_null(strstr(err.msg, "range is full"));
    assert_int_equal(fakeapi_count(w.api, "PATCH", "/"), 12);

    assert_int_equal(fakeapi_count(w.api, "PUT", CORPORA "/org/status"), 1);
    body = fakeapi_last_body(w.api, "PUT", CORPORA "/org/status");
    put = cJSON_Parse(body);
    free(body);
    assert_non_null(put);
    assert_int_equal(json_int(json_obj(put, "status"), "observedGeneration", -1), 3);
    ready = status_condition(json_obj(put, "status"), STATUS_READY);
    assert_string_equal(json_str(ready, "status", ""), "False");
    assert_string_equal(json_str(ready, "reason", ""), STATUS_APPLY_FAILED);
    /* In the API server's words, without the request line. */
    assert_string_equal(json_str(ready, "message", ""),
                        "could not apply Service org-search: Service \"org-search\" is invalid: spec.clusterIPs: "
                        "Internal error: failed to allocate a serviceIP: range is full");
    /* The status carries what a pass observes whatever the children did. */
    assert_string_equal(json_path_str(put, "status.endpoint", ""), "http://org-search.ns.svc:8080");
    /* The ApplyFailed Event, and the Applied one for the eight that went through. It says what the
     * server did, not what the cache suggested: the ConfigMap was there already. */
    assert_int_equal(fakeapi_count(w.api, "POST", "/api/v1/namespaces/ns/events"), 2);
    body = fakeapi_last_body(w.api, "POST", "/api/v1/namespaces/ns/events");
    assert_non_null(strstr(body, "updated ConfigMap org-indexer"));
    assert_non_null(strstr(body, "created Deployment org-search"));
    assert_null(strstr(body, "created ConfigMap"));
    free(body);
    cJSON_Delete(put);
    /* The cache has not seen that status write (the fake's corpus stays at resourceVersion 7): another
     * pass does not write over it again, which the API server would refuse as a Conflict. */
    assert_int_not_equal(reconcile(&w.ctx, "ns/org", &requeue, &err), ZK_OK);
    assert_int_equal(fakeapi_count(w.api, "PUT", CORPORA "/org/status"), 1);
    world_stop(&w);
}

/* The writes the fake has seen: applies, status updates, Events. */
static int writes(struct world *w)
{
    return fakeapi_count(w->api, "PATCH", "/") + fakeapi_count(w->api, "PUT", "/") + fakeapi_count(w->api, "POST", "/");
}

/* In a namespace being deleted every apply is refused (NamespaceTerminating): the reconcile succeeds
 * without a status write or an Event, and the corpus's next reconciles, which the deletions of its
 * children would start one after another, send nothing at all. Before, each failed, wrote its Events
 * and was retried, over and over for every corpus of the namespace. */
static void test_namespace_being_deleted_is_left_alone(void **state)
{
    static struct world w;
    struct zk_err err = {0};
    double requeue = -1;
    int before;

    (void)state;
    world_start(&w);
    ns_terminating = 1;
    assert_int_equal(reconcile(&w.ctx, "ns/org", &requeue, &err), ZK_OK);
    assert_true(requeue == 0);
    assert_int_equal(fakeapi_count(w.api, "PATCH", "/"), 12);
    assert_int_equal(fakeapi_count(w.api, "PUT", CORPORA "/org/status"), 0);
    before = writes(&w);
    for (int i = 0; i < 5; i++)
        assert_int_equal(reconcile(&w.ctx, "ns/org", &requeue, &err), ZK_OK);
    assert_int_equal(writes(&w), before);
    assert_int_equal(fakeapi_count(w.api, "POST", "/api/v1/namespaces/ns/events"), 0);
    ns_terminating = 0;
    world_stop(&w);
}

/* The connector judged each repository against the maxAge the operator passed (the corpus's default,
 * 36h): the status carries its count and names, and Fresh names them. */
static void test_stale_repositories_reach_the_status(void **state)
{
    static struct world w;
    struct zk_err err = {0};
    double requeue = -1;
    const cJSON *st;
    cJSON *put;
    char *body, old[32], answer_body[512];

    (void)state;
    rfc3339_format(time(NULL) - 40 * 3600, old, sizeof(old));
    snprintf(answer_body, sizeof(answer_body),
             "{\"repositories\":3,\"shards\":3,\"newestIndexTime\":\"%s\",\"oldestIndexTime\":\"%s\","
             "\"zoektVersion\":\"v3\",\"stale\":2,\"staleRepositories\":[\"o/a\",\"o/b\"]}", old, old);
    index_answer = answer_body;
    world_start(&w);
    (void)reconcile(&w.ctx, "ns/org", &requeue, &err);
    assert_string_equal(index_query, "maxAge=129600s");
    body = fakeapi_last_body(w.api, "PUT", CORPORA "/org/status");
    put = cJSON_Parse(body);
    free(body);
    st = json_obj(put, "status");
    assert_int_equal(json_int(json_obj(st, "freshness"), "stale", -1), 2);
    assert_string_equal(cJSON_GetArrayItem(json_arr(json_obj(st, "freshness"), "staleRepositories"), 1)->valuestring,
                        "o/b");
    assert_string_equal(json_str(status_condition(st, STATUS_FRESH), "message", ""),
                        "2 repositories are older than maxAge 36h: o/a, o/b; oldest index is 40h old");
    cJSON_Delete(put);
    world_stop(&w);
    index_answer = NULL;
}

/* The operator's token for /index-status is the Secret's first token as the connector reads the
 * mounted files: keys in order, none starting with '.', white space trimmed, padding handled. */
static void test_secret_token(void **state)
{
    /* ".hidden" = "x"; "a" = "  tok-1\n"; "b" = "tok-2"; "bad" is not base64. */
    cJSON *s = cJSON_Parse("{\"data\":{\".hidden\":\"eA==\",\"bad\":\"%%%%\",\"a\":\"ICB0b2stMQo=\","
                           "\"b\":\"dG9rLTI=\"}}");
    char *t;

    (void)state;
    t = reconcile_secret_token(s);
    assert_string_equal(t, "tok-1");
    free(t);
    cJSON_Delete(s);
    /* Only white space, or nothing: no token. */
    s = cJSON_Parse("{\"data\":{\"a\":\"ICAK\"}}");
    assert_null(reconcile_secret_token(s));
    cJSON_Delete(s);
    s = cJSON_Parse("{\"metadata\":{}}");
    assert_null(reconcile_secret_token(s));
    cJSON_Delete(s);
    /* One byte of padding: "ab" encodes as "YWI=". */
    s = cJSON_Parse("{\"data\":{\"t\":\"YWI=\"}}");
    t = reconcile_secret_token(s);
    assert_string_equal(t, "ab");
    free(t);
    cJSON_Delete(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_child_is_in_the_status),
        cmocka_unit_test(test_namespace_being_deleted_is_left_alone),
        cmocka_unit_test(test_stale_repositories_reach_the_status),
        cmocka_unit_test(test_secret_token),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
