/* test_status.c: the corpus status and its conditions, with an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "controller/corpus/status.h"
#include "json.h"
#include "rfc3339.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1795824000L /* 2026-11-28T00:00:00Z */
#define HOUR 3600L
#define ENDPOINT "http://org-search.cs.svc:8080"

static time_t ts(const char *s)
{
    time_t t = 0;

    assert_true(rfc3339_parse(s, &t));
    return t;
}

/* A test world: the corpus (with a status that the previous computation left), its spec and the
 * observed children. */
struct world {
    cJSON *corpus;
    struct corpus_spec *spec;
    cJSON *deployment, *cronjob, *jobs, *pods;
    struct index_status index;
    struct status_input in;
};

static void world_init(struct world *w)
{
    struct spec_errors errs;

    memset(w, 0, sizeof(*w));
    w->corpus = cJSON_Parse("{\"metadata\":{\"name\":\"org\",\"namespace\":\"cs\",\"generation\":4},"
                            "\"spec\":{\"repositories\":[{\"url\":\"https://github.com/o/a\"}]}}");
    assert_non_null(w->corpus);
    assert_int_equal(spec_parse(w->corpus, NULL, &w->spec, &errs), ZK_OK);
    w->deployment = cJSON_Parse("{\"status\":{\"replicas\":1,\"availableReplicas\":1}}");
    w->index.repositories = 121;
    w->index.shards = 130;
    w->index.newest_index_time = T0 - 4 * HOUR;
    w->index.oldest_index_time = T0 - 5 * HOUR;
    w->in.corpus = w->corpus;
    w->in.spec = w->spec;
    w->in.deployment = w->deployment;
    w->in.index = &w->index;
    w->in.endpoint = ENDPOINT;
    w->in.now = T0;
}

static void world_free(struct world *w)
{
    cJSON_Delete(w->corpus);
    spec_free(w->spec);
    cJSON_Delete(w->deployment);
    cJSON_Delete(w->cronjob);
    cJSON_Delete(w->jobs);
    cJSON_Delete(w->pods);
    index_status_free(&w->index);
}

/* Computes the status and stores it in the corpus, as reconcile's write through /status would. */
static cJSON *step(struct world *w, long *requeue)
{
    long rq = -1;
    cJSON *st = status_compute(&w->in, &rq);

    assert_non_null(st);
    cJSON_DeleteItemFromObject(w->corpus, "status");
    cJSON_AddItemToObject(w->corpus, "status", st);
    if (requeue)
        *requeue = rq;
    return st;
}

static void expect_cond(const cJSON *st, const char *type, const char *status, const char *reason)
{
    const cJSON *c = status_condition(st, type);

    assert_non_null(c);
    if (strcmp(json_str(c, "status", ""), status) || strcmp(json_str(c, "reason", ""), reason))
        fail_msg("%s: want %s/%s, got %s/%s (%s)", type, status, reason, json_str(c, "status", ""),
                 json_str(c, "reason", ""), json_str(c, "message", ""));
    assert_int_equal(json_int(c, "observedGeneration", -1), 4);
}

static const char *cond_msg(const cJSON *st, const char *type)
{
    return json_str(status_condition(st, type), "message", "");
}

static const char *cond_time(const cJSON *st, const char *type)
{
    return json_str(status_condition(st, type), "lastTransitionTime", "");
}

static void test_time(void **state)
{
    char buf[32];
    time_t t = 0;

    (void)state;
    assert_int_equal(ts("2026-11-28T00:00:00Z"), T0);
    assert_int_equal(ts("2026-11-28T01:30:00+01:30"), T0);
    assert_int_equal(ts("2026-11-27T22:00:00-02:00"), T0);
    assert_int_equal(ts("2026-11-28T00:00:00.123456789Z"), T0);
    rfc3339_format(T0 + 41, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-28T00:00:41Z");
    assert_false(rfc3339_parse("2026-11-28 00:00:00Z", &t));
    assert_false(rfc3339_parse("2026-13-28T00:00:00Z", &t));
    assert_false(rfc3339_parse("2026-11-28T00:00:00", &t));
    assert_false(rfc3339_parse("2026-11-28T00:00:00Zjunk", &t));
    assert_false(rfc3339_parse("", &t));
    assert_false(rfc3339_parse(NULL, &t));
}

static void test_index_status_parse(void **state)
{
    static const char good[] = "{\"repositories\":121,\"shards\":130,\"newestIndexTime\":\"2026-11-29T03:41:10Z\","
                               "\"oldestIndexTime\":\"2026-11-29T03:12:55Z\",\"zoektVersion\":\"v3.7\"}";
    static const char *const bad[] = {"[]", "{", "{\"shards\":1}", "{\"repositories\":-1}",
                                      "{\"repositories\":\"many\"}", "{\"repositories\":1,\"shards\":\"x\"}",
                                      "{\"repositories\":1,\"oldestIndexTime\":\"yesterday\"}"};
    struct index_status is;
    struct zk_err err = {0};
    size_t i;

    (void)state;
    assert_int_equal(index_status_parse(good, strlen(good), &is, &err), ZK_OK);
    assert_int_equal(is.repositories, 121);
    assert_int_equal(is.shards, 130);
    assert_int_equal(is.newest_index_time, ts("2026-11-29T03:41:10Z"));
    assert_int_equal(is.oldest_index_time, ts("2026-11-29T03:12:55Z"));
    assert_string_equal(is.zoekt_version, "v3.7");
    /* An empty index has no times. */
    assert_int_equal(index_status_parse("{\"repositories\":0,\"shards\":0}", 30, &is, &err), ZK_OK);
    assert_int_equal(is.oldest_index_time, 0);
    {
        static const char nulls[] = "{\"repositories\":0,\"shards\":0,\"newestIndexTime\":null,"
                                    "\"oldestIndexTime\":null,\"zoektVersion\":null}";

        assert_int_equal(index_status_parse(nulls, strlen(nulls), &is, &err), ZK_OK);
        assert_int_equal(is.newest_index_time, 0);
        assert_string_equal(is.zoekt_version, "");
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        zk_err_clear(&err);
        assert_int_equal(index_status_parse(bad[i], strlen(bad[i]), &is, &err), ZK_EPARSE);
        assert_non_null(strstr(err.msg, "/index-status"));
    }
}

static void test_healthy(void **state)
{
    struct world w;
    const cJSON *st;
    long rq;

    (void)state;
    world_init(&w);
    st = step(&w, &rq);
    assert_int_equal(json_int(st, "observedGeneration", 0), 4);
    assert_int_equal(json_int(st, "repositoryCount", 0), 121);
    assert_string_equal(json_str(st, "lastIndexTime", ""), "2026-11-27T20:00:00Z");
    assert_string_equal(json_str(st, "oldestIndexTime", ""), "2026-11-27T19:00:00Z");
    assert_string_equal(json_str(st, "endpoint", ""), ENDPOINT);
    assert_int_equal(cJSON_GetArraySize(json_path(st, "indexer.failedRepositories")), 0);
    expect_cond(st, STATUS_READY, "True", "Available");
    expect_cond(st, STATUS_INDEXED, "True", "IndexServed");
    expect_cond(st, STATUS_FRESH, "True", "WithinMaxAge");
    assert_string_equal(cond_msg(st, STATUS_FRESH),
                        "oldest index is from 2026-11-27T19:00:00Z; fresh until 2026-11-29T07:00:00Z (maxAge is 36h)");
    assert_string_equal(cond_time(st, STATUS_READY), "2026-11-28T00:00:00Z");
    /* Fresh turns stale when the oldest index passes 36h: 31 hours (and a second) from now. */
    assert_int_equal(rq, 31 * HOUR + 1);
    world_free(&w);
}

static void test_flip_to_stale(void **state)
{
    struct world w;
    const cJSON *st;
    long rq;

    (void)state;
    world_init(&w);
    step(&w, &rq);
    /* Just before the deadline nothing changes, not even a transition time. */
    w.in.now = T0 + 31 * HOUR;
    st = step(&w, &rq);
    expect_cond(st, STATUS_FRESH, "True", "WithinMaxAge");
    assert_string_equal(cond_time(st, STATUS_FRESH), "2026-11-28T00:00:00Z");
    assert_int_equal(rq, 1);
    /* The clock passes maxAge with the same index. */
    w.in.now = T0 + 36 * HOUR + 30 * 60;
    st = step(&w, &rq);
    expect_cond(st, STATUS_FRESH, "False", "Stale");
    assert_string_equal(cond_msg(st, STATUS_FRESH), "oldest index is 41h old; maxAge is 36h");
    assert_string_equal(cond_time(st, STATUS_FRESH), "2026-11-29T12:30:00Z");
    /* Ready and Indexed did not flip: their transition times stay. */
    expect_cond(st, STATUS_READY, "True", "Available");
    assert_string_equal(cond_time(st, STATUS_READY), "2026-11-28T00:00:00Z");
    assert_string_equal(cond_time(st, STATUS_INDEXED), "2026-11-28T00:00:00Z");
    assert_int_equal(rq, 0);
    /* A new index makes it fresh again. */
    w.index.oldest_index_time = w.in.now - HOUR;
    w.index.newest_index_time = w.in.now - 60;
    w.in.now += 60;
    st = step(&w, &rq);
    expect_cond(st, STATUS_FRESH, "True", "WithinMaxAge");
    assert_string_equal(cond_time(st, STATUS_FRESH), "2026-11-29T12:31:00Z");
    assert_string_equal(cond_msg(st, STATUS_FRESH),
                        "oldest index is from 2026-11-29T11:30:00Z; fresh until 2026-11-30T23:30:00Z (maxAge is 36h)");
    world_free(&w);
}

static void test_no_churn(void **state)
{
    struct world w;
    char *a, *b;

    (void)state;
    world_init(&w);
    w.cronjob = cJSON_Parse("{\"status\":{\"lastScheduleTime\":\"2026-11-27T03:00:00Z\"}}");
    w.in.cronjob = w.cronjob;
    w.in.reindex_honoured = "2026-11-27T10:00:00Z";
    a = json_print(step(&w, NULL));
    w.in.now += 600; /* a resync ten minutes later with nothing changed */
    b = json_print(step(&w, NULL));
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* While stale, the message moves at most once an hour. */
    w.in.now = T0 + 40 * HOUR + 60;
    a = json_print(step(&w, NULL));
    w.in.now += 50 * 60;
    b = json_print(step(&w, NULL));
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "oldest index is 45h old; maxAge is 36h"));
    free(a);
    free(b);
    world_free(&w);
}

static void test_index_unreachable(void **state)
{
    struct world w;
    const cJSON *st;
    long rq;

    (void)state;
    world_init(&w);
    step(&w, NULL);
    w.in.index = NULL;
    w.in.index_error = "GET http://org-search.cs.svc:8080/index-status: connection refused";
    w.in.now = T0 + HOUR;
    st = step(&w, &rq);
    /* The counts and times are kept, not cleared. */
    assert_int_equal(json_int(st, "repositoryCount", 0), 121);
    assert_string_equal(json_str(st, "oldestIndexTime", ""), "2026-11-27T19:00:00Z");
    expect_cond(st, STATUS_INDEXED, "Unknown", "IndexStatusUnavailable");
    assert_non_null(strstr(cond_msg(st, STATUS_INDEXED), "connection refused"));
    expect_cond(st, STATUS_READY, "False", "IndexUnreachable");
    assert_string_equal(cond_time(st, STATUS_READY), "2026-11-28T01:00:00Z");
    /* Freshness is still judged on the last known times. */
    expect_cond(st, STATUS_FRESH, "True", "WithinMaxAge");
    assert_int_equal(rq, 30 * HOUR + 1);
    world_free(&w);
}

static void test_invalid_spec(void **state)
{
    struct world w;
    struct spec_errors errs;
    struct corpus_spec *bad = NULL;
    cJSON *corpus = cJSON_Parse("{\"spec\":{\"repositories\":[{\"url\":\"https://h/a\"}],\"schedule\":\"61 * * * *\"}}");
    const cJSON *st;

    (void)state;
    world_init(&w);
    step(&w, NULL);
    assert_int_equal(spec_parse(corpus, NULL, &bad, &errs), ZK_EINVAL);
    w.in.spec = NULL;
    w.in.spec_errors = &errs;
    w.in.now = T0 + 60;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "InvalidSpec");
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "spec.schedule: invalid cron schedule"));
    expect_cond(st, STATUS_FRESH, "Unknown", "InvalidSpec");
    /* What is served is still reported. */
    assert_int_equal(json_int(st, "repositoryCount", 0), 121);
    cJSON_Delete(corpus);
    world_free(&w);
}

static void test_missing_secret_and_deployment(void **state)
{
    struct world w;
    const cJSON *st;

    (void)state;
    world_init(&w);
    w.in.missing_ref = "git-credentials";
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "SecretNotFound");
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "Secret \"git-credentials\""));
    w.in.missing_ref = "corp-ca";
    w.in.missing_kind = "ConfigMap";
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "ConfigMapNotFound");
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "ConfigMap \"corp-ca\""));
    w.in.missing_ref = NULL;
    w.in.missing_kind = NULL;
    w.in.deployment = NULL;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "Progressing");
    cJSON_Delete(w.deployment);
    w.deployment = cJSON_Parse("{\"status\":{\"replicas\":1,\"availableReplicas\":0}}");
    w.in.deployment = w.deployment;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "DeploymentUnavailable");
    assert_string_equal(cond_msg(st, STATUS_READY), "0 of 1 search pods are available");
    world_free(&w);
}

/* Issue 17: a child the API server refuses (the Service IP range is full, a field is invalid) shows in
 * Ready, naming the child and the server's answer, with observedGeneration set; what could be observed
 * (the served index, the indexer) is still reported, and the next good pass clears it. */
static void test_apply_failed(void **state)
{
    static const char *refusal = "Service org-search: Service \"org-search\" is invalid: spec.clusterIPs: "
                                 "Internal error: failed to allocate a serviceIP: range is full";
    struct world w;
    const cJSON *st;
    char want[512];

    (void)state;
    world_init(&w);
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "True", "Available");
    w.in.apply_failure = refusal;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_APPLY_FAILED);
    snprintf(want, sizeof(want), "could not apply %s", refusal);
    assert_string_equal(cond_msg(st, STATUS_READY), want);
    assert_int_equal(json_int(st, "observedGeneration", -1), 4);
    expect_cond(st, STATUS_INDEXED, "True", "IndexServed");
    assert_int_equal(json_int(st, "repositoryCount", -1), 121);
    assert_string_equal(json_str(st, "endpoint", ""), ENDPOINT);
    /* A refusal is not something the status hides behind a less urgent reason... */
    w.in.deployment = NULL;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_APPLY_FAILED);
    /* ...but an invalid spec or a missing Secret comes first: nothing is applied then. */
    w.in.missing_ref = "git-credentials";
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "SecretNotFound");
    w.in.missing_ref = NULL;
    w.in.apply_failure = NULL;
    w.in.deployment = w.deployment;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "True", "Available");
    world_free(&w);
}

/* Issue 17: pods the API server refuses later (a ResourceQuota, Pod Security) show only in the
 * Deployment's ReplicaFailure condition, copied from its ReplicaSet; Ready says so, with that message,
 * while no search pod is available, and the informer's prune keeps that condition. */
static void test_pods_refused(void **state)
{
    static const char *refused =
        "{\"kind\":\"Deployment\",\"status\":{\"replicas\":0,\"availableReplicas\":0,\"conditions\":["
        "{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"NewReplicaSetCreated\"},"
        "{\"type\":\"Available\",\"status\":\"False\",\"reason\":\"MinimumReplicasUnavailable\"},"
        "{\"type\":\"ReplicaFailure\",\"status\":\"True\",\"reason\":\"FailedCreate\",\"message\":"
        "\"pods \\\"org-search-5d8f-x2\\\" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, "
        "limited: pods=0\"}]}}";
    struct world w;
    const cJSON *st, *conds;

    (void)state;
    world_init(&w);
    cJSON_Delete(w.deployment);
    w.deployment = cJSON_Parse(refused);
    assert_non_null(w.deployment);
    status_prune_child(w.deployment);
    conds = json_path(w.deployment, "status.conditions");
    assert_int_equal(cJSON_GetArraySize(conds), 1);
    assert_string_equal(json_str(cJSON_GetArrayItem(conds, 0), "type", ""), "ReplicaFailure");
    w.in.deployment = w.deployment;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_PODS_REFUSED);
    assert_string_equal(cond_msg(st, STATUS_READY),
                        "the search pods are refused: pods \"org-search-5d8f-x2\" is forbidden: exceeded quota: "
                        "no-pods, requested: pods=1, used: pods=0, limited: pods=0");
    /* The quota lifted: the condition goes False before a pod is available, which is only unavailable. */
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(conds, 0), "status", cJSON_CreateString("False"));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "DeploymentUnavailable");
    /* A refusal while a pod serves (a second replica refused) does not take the corpus out of service. */
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(conds, 0), "status", cJSON_CreateString("True"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(w.deployment, "status"), "availableReplicas", cJSON_CreateNumber(1));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "True", "Available");
    world_free(&w);
}

/* A search pod as the API server sends it, with the parts a running pod changes (readiness, start
 * times, IDs) that the prune must drop, and the status given. */
static cJSON *search_pod(const char *status_json)
{
    char buf[4096];
    cJSON *pod;

    snprintf(buf, sizeof(buf),
             "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"org-search-7c4b-d7x49\",\"namespace\":\"cs\","
             "\"resourceVersion\":\"81\",\"labels\":{\"app.kubernetes.io/component\":\"search\","
             "\"app.kubernetes.io/instance\":\"org\"}},\"spec\":{\"containers\":[{\"name\":\"nginx\"}]},"
             "\"status\":%s}",
             status_json);
    pod = cJSON_Parse(buf);
    assert_non_null(pod);
    status_prune_pod(pod);
    return pod;
}

/* The PodScheduled condition of a pod the scheduler cannot place, with the scheduler's message. */
#define UNSCHEDULED(msg)                                                                                         \
    "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"      \
    "\"Unschedulable\",\"lastTransitionTime\":\"2026-12-02T20:03:53Z\",\"observedGeneration\":1,\"message\":\"" \
    msg "\"}]}"

static void world_pod(struct world *w, cJSON *pod)
{
    cJSON_Delete(w->pods);
    w->pods = cJSON_CreateArray();
    cJSON_AddItemToArray(w->pods, pod);
    w->in.pods = w->pods;
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(w->deployment, "status"), "availableReplicas",
                              cJSON_CreateNumber(0));
}

/* No node of the corpus's architecture (the default arm64 on an amd64 cluster): Ready names the
 * architecture and the field that sets it, with the scheduler's words, instead of "0 of 1 available". */
static void test_unschedulable_architecture(void **state)
{
    struct world w;
    const cJSON *st;

    (void)state;
    world_init(&w);
    world_pod(&w, search_pod(UNSCHEDULED("0/1 nodes are available: 1 node(s) didn't match Pod's node "
                                         "affinity/selector. preemption: 0/1 nodes are available: 1 Preemption "
                                         "is not helpful for scheduling.")));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_UNSCHEDULABLE);
    /* What makes reconcile look the claim's storage class up (only then is the answer read). */
    assert_true(status_search_pod_unscheduled(w.pods));
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "kubernetes.io/arch=arm64 from spec.webserver.architecture"));
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "didn't match Pod's node affinity/selector"));
    assert_true(status_reason_needs_user(STATUS_UNSCHEDULABLE));
    /* Another reason to be unschedulable is reported in the scheduler's words. */
    world_pod(&w, search_pod(UNSCHEDULED("0/1 nodes are available: 1 Insufficient memory.")));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_UNSCHEDULABLE);
    assert_string_equal(cond_msg(st, STATUS_READY),
                        "the search pods cannot be scheduled: 0/1 nodes are available: 1 Insufficient memory.");
    world_free(&w);
}

/* A claim of a storage class that does not exist stays Pending, and the scheduler only says "not
 * found": Ready names the claim, the class and the field. A class that exists but has not provided a
 * volume is said differently. */
static void test_volume_not_bound(void **state)
{
    cJSON *claim = cJSON_Parse("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"org-index\","
                               "\"uid\":\"u\",\"resourceVersion\":\"9\"},\"spec\":{\"storageClassName\":\"efs-sc\"},"
                               "\"status\":{\"phase\":\"Pending\",\"accessModes\":[\"ReadWriteMany\"]}}");
    struct world w;
    const cJSON *st;

    (void)state;
    assert_non_null(claim);
    status_prune_child(claim);
    assert_string_equal(json_path_str(claim, "status.phase", ""), "Pending");
    assert_null(json_path(claim, "status.accessModes"));
    world_init(&w);
    world_pod(&w, search_pod(UNSCHEDULED("0/1 nodes are available: pod has unbound immediate "
                                         "PersistentVolumeClaims. not found")));
    w.in.claim = claim;
    w.in.storage_class_missing = 1;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_STORAGE_CLASS_NOT_FOUND);
    assert_true(status_reason_needs_user(STATUS_STORAGE_CLASS_NOT_FOUND));
    assert_string_equal(cond_msg(st, STATUS_READY),
                        "the volume claim org-index is Pending: storage class \"efs-sc\" does not exist (create "
                        "it, or name another in spec.storage.storageClassName)");
    /* A class that exists and has not provided a volume yet is the way of a new corpus: no Warning. */
    w.in.storage_class_missing = 0;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_VOLUME_NOT_BOUND);
    assert_false(status_reason_needs_user(STATUS_VOLUME_NOT_BOUND));
    assert_string_equal(cond_msg(st, STATUS_READY),
                        "the volume claim org-index is Pending: storage class \"efs-sc\" has not provided a volume");
    /* Before the cached claim says Pending, the scheduler's word for it is the same state. */
    w.in.claim = NULL;
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_VOLUME_NOT_BOUND);
    world_free(&w);
    cJSON_Delete(claim);
}

/* An image that cannot be pulled: Ready names the container, the image, the field that sets it and
 * the kubelet's reason; the back-off form and the bare error give one message, so the status is not
 * rewritten at every retry. */
static void test_image_pull_failed(void **state)
{
#define PULL_STATUS(reason, msg)                                                                                  \
    "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":"        \
    "\"Ready\",\"status\":\"False\",\"lastTransitionTime\":\"2026-12-02T20:03:53Z\"}],\"containerStatuses\":[" \
    "{\"name\":\"zoekt-webserver\",\"image\":\"z:1\",\"imageID\":\"sha256:1\",\"ready\":false,\"restartCount\":" \
    "3,\"state\":{\"running\":{\"startedAt\":\"2026-12-02T20:04:00Z\"}}},{\"name\":\"nginx\",\"image\":"     \
    "\"localhost/nosuch/image:1\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":{\"waiting\":" \
    "{\"reason\":\"" reason "\",\"message\":\"" msg "\"}}}]}"
    static const char *const detail =
        "failed to pull and unpack image \\\"localhost/nosuch/image:1\\\": failed to resolve image: connection refused";
    char backoff[1024], bare[1024];
    struct world w;
    const cJSON *st;
    char first[1024];
    cJSON *pod;

    (void)state;
    snprintf(backoff, sizeof(backoff),
             PULL_STATUS("ImagePullBackOff", "Back-off pulling image \\\"localhost/nosuch/image:1\\\": ErrImagePull: %s"),
             detail);
    snprintf(bare, sizeof(bare), PULL_STATUS("ErrImagePull", "rpc error: code = NotFound desc = %s"), detail);
    world_init(&w);
    pod = search_pod(backoff);
    /* The prune keeps why a container waits, and none of what a running container changes. */
    assert_null(json_path(pod, "spec"));
    assert_null(json_path(pod, "status.conditions"));
    assert_null(json_path(cJSON_GetArrayItem(json_path(pod, "status.containerStatuses"), 0), "restartCount"));
    assert_null(json_path(cJSON_GetArrayItem(json_path(pod, "status.containerStatuses"), 0), "state.running"));
    world_pod(&w, pod);
    assert_false(status_search_pod_unscheduled(w.pods));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", STATUS_IMAGE_PULL_FAILED);
    assert_string_equal(cond_msg(st, STATUS_READY),
                        "container nginx cannot get its image \"localhost/nosuch/image:1\" (spec.gateway.image): "
                        "failed to pull and unpack image \"localhost/nosuch/image:1\": failed to resolve image: "
                        "connection refused");
    snprintf(first, sizeof(first), "%s", cond_msg(st, STATUS_READY));
    world_pod(&w, search_pod(bare));
    st = step(&w, NULL);
    assert_string_equal(cond_msg(st, STATUS_READY), first);
    /* An indexer pod's troubles are not the search pods': only a search pod is judged. */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(w.pods, 0), "metadata"), "labels"),
                              "app.kubernetes.io/component", cJSON_CreateString("indexer"));
    st = step(&w, NULL);
    expect_cond(st, STATUS_READY, "False", "DeploymentUnavailable");
    world_free(&w);
#undef PULL_STATUS
}

/* Two updates of a running pod that differ only in what the prune drops leave the same object, which
 * is what lets the informer skip them. */
static void test_prune_pod_running(void **state)
{
    cJSON *a = search_pod("{\"phase\":\"Running\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
                          "{\"type\":\"Ready\",\"status\":\"True\"}],\"containerStatuses\":[{\"name\":\"nginx\","
                          "\"image\":\"g:1\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{"
                          "\"startedAt\":\"2026-12-02T20:04:00Z\"}}}]}");
    cJSON *b = search_pod("{\"phase\":\"Running\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
                          "{\"type\":\"Ready\",\"status\":\"False\"}],\"containerStatuses\":[{\"name\":\"nginx\","
                          "\"image\":\"g:1\",\"ready\":false,\"restartCount\":4,\"lastState\":{\"terminated\":{"
                          "\"exitCode\":137}},\"state\":{\"running\":{\"startedAt\":\"2026-12-02T20:09:00Z\"}}}]}");
    char *ja, *jb_;

    (void)state;
    ja = cJSON_PrintUnformatted(a);
    jb_ = cJSON_PrintUnformatted(b);
    assert_string_equal(ja, jb_);
    free(ja);
    free(jb_);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_empty_index(void **state)
{
    struct world w;
    const cJSON *st;
    long rq;

    (void)state;
    world_init(&w);
    w.index.repositories = 0;
    w.index.shards = 0;
    w.index.newest_index_time = 0;
    w.index.oldest_index_time = 0;
    st = step(&w, &rq);
    assert_int_equal(json_int(st, "repositoryCount", -1), 0);
    assert_null(json_str(st, "lastIndexTime", NULL));
    expect_cond(st, STATUS_INDEXED, "False", "NoIndex");
    expect_cond(st, STATUS_FRESH, "False", "NoIndex");
    expect_cond(st, STATUS_READY, "False", "NoIndex");
    assert_int_equal(rq, 0);

    /* Before anything was read there is no count at all. */
    cJSON_DeleteItemFromObject(w.corpus, "status");
    w.in.index = NULL;
    st = step(&w, NULL);
    assert_null(cJSON_GetObjectItem(st, "repositoryCount"));
    expect_cond(st, STATUS_INDEXED, "Unknown", "Pending");
    world_free(&w);
}

static void test_indexer_times(void **state)
{
    struct world w;
    const cJSON *st;

    (void)state;
    world_init(&w);
    w.cronjob = cJSON_Parse("{\"status\":{\"lastScheduleTime\":\"2026-11-27T03:00:00Z\","
                            "\"lastSuccessfulTime\":\"2026-11-26T03:40:00Z\"}}");
    w.jobs = cJSON_Parse("[{\"status\":{\"startTime\":\"2026-11-27T03:00:05Z\",\"completionTime\":\"2026-11-27T03:41:10Z\","
                         "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\"2026-11-27T03:41:10Z\"}]}},"
                         "{\"status\":{\"startTime\":\"2026-11-27T10:00:01Z\","
                         "\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"lastTransitionTime\":\"2026-11-27T10:20:00Z\"}]}},"
                         "{\"status\":{\"active\":1}}]");
    w.in.cronjob = w.cronjob;
    w.in.jobs = w.jobs;
    st = step(&w, NULL);
    assert_string_equal(json_path_str(st, "indexer.lastScheduleTime", ""), "2026-11-27T10:00:01Z");
    assert_string_equal(json_path_str(st, "indexer.lastSuccessfulTime", ""), "2026-11-27T03:41:10Z");
    assert_string_equal(json_path_str(st, "indexer.lastFailedTime", ""), "2026-11-27T10:20:00Z");

    /* The CronJob's history limit prunes the Jobs: the times stay. */
    w.in.jobs = NULL;
    st = step(&w, NULL);
    assert_string_equal(json_path_str(st, "indexer.lastSuccessfulTime", ""), "2026-11-27T03:41:10Z");
    assert_string_equal(json_path_str(st, "indexer.lastFailedTime", ""), "2026-11-27T10:20:00Z");
    world_free(&w);
}

static void test_failed_repositories(void **state)
{
    struct world w;
    const cJSON *st, *list;
    char pods[8192], names[4096];
    size_t used = 0;
    int i;

    (void)state;
    world_init(&w);
    for (i = 0; i < 30; i++)
        used += (size_t)snprintf(names + used, sizeof(names) - used, "%s\\\"github.com/o/r%d\\\"", i ? "," : "", i);
    snprintf(pods, sizeof(pods),
             "[{\"status\":{\"containerStatuses\":[{\"name\":\"indexer\",\"state\":{\"terminated\":{"
             "\"finishedAt\":\"2026-11-27T03:41:10Z\",\"message\":\"{\\\"summary\\\":{\\\"indexed\\\":1,"
             "\\\"failed\\\":1,\\\"failedRepositories\\\":[\\\"github.com/o/old\\\"]}}\"}}}]}},"
             "{\"status\":{\"containerStatuses\":[{\"name\":\"indexer\",\"state\":{\"terminated\":{"
             "\"finishedAt\":\"2026-11-28T03:41:10Z\",\"message\":\"{\\\"summary\\\":{\\\"indexed\\\":91,"
             "\\\"failed\\\":30,\\\"failedRepositories\\\":[%s]}}\"}}}]}}]",
             names);
    w.pods = cJSON_Parse(pods);
    assert_non_null(w.pods);
    w.in.pods = w.pods;
    st = step(&w, NULL);
    list = json_path(st, "indexer.failedRepositories");
    /* The newest run's names, bounded. */
    assert_int_equal(cJSON_GetArraySize(list), STATUS_MAX_FAILED_REPOS);
    assert_string_equal(cJSON_GetArrayItem(list, 0)->valuestring, "github.com/o/r0");
    expect_cond(st, STATUS_INDEXED, "True", "PartiallyIndexed");
    expect_cond(st, STATUS_READY, "True", "Available");
    /* When the pods are gone, the list stays. */
    w.in.pods = NULL;
    st = step(&w, NULL);
    assert_int_equal(cJSON_GetArraySize(json_path(st, "indexer.failedRepositories")), STATUS_MAX_FAILED_REPOS);
    world_free(&w);
}

/* A run that failed for lack of space says so in Indexed's message, not only in the Job's log: every
 * repository fails that way until somebody grows the volume. */
static void test_volume_full(void **state)
{
    struct world w;
    const cJSON *st;

    (void)state;
    world_init(&w);
    w.pods = cJSON_Parse("[{\"status\":{\"containerStatuses\":[{\"name\":\"indexer\",\"state\":{\"terminated\":{"
                         "\"finishedAt\":\"2026-11-28T03:41:10Z\",\"message\":\"{\\\"summary\\\":{\\\"indexed\\\":0,"
                         "\\\"failed\\\":1,\\\"removed\\\":0,\\\"failedRepositories\\\":[\\\"local/grow\\\"],"
                         "\\\"noSpace\\\":true}}\"}}}]}}]");
    assert_non_null(w.pods);
    w.in.pods = w.pods;
    st = step(&w, NULL);
    expect_cond(st, STATUS_INDEXED, "True", "PartiallyIndexed");
    assert_non_null(strstr(cond_msg(st, STATUS_INDEXED), "no space left on the volume"));
    expect_cond(st, STATUS_READY, "True", "Available");
    /* The same run without noSpace: a plain failure, no word of space. */
    cJSON_Delete(w.pods);
    w.pods = cJSON_Parse("[{\"status\":{\"containerStatuses\":[{\"name\":\"indexer\",\"state\":{\"terminated\":{"
                         "\"finishedAt\":\"2026-11-28T03:41:10Z\",\"message\":\"{\\\"summary\\\":{\\\"indexed\\\":0,"
                         "\\\"failed\\\":1,\\\"removed\\\":0,\\\"failedRepositories\\\":[\\\"local/grow\\\"]}}\"}}}]}}]");
    w.in.pods = w.pods;
    st = step(&w, NULL);
    assert_null(strstr(cond_msg(st, STATUS_INDEXED), "no space"));
    world_free(&w);
}

/* w's indexer Jobs: one that completed at complete_at and one that failed at failed_at. */
static void set_jobs_done(struct world *w, const char *complete_at, const char *failed_at)
{
    char jobs[512];

    snprintf(jobs, sizeof(jobs),
             "[{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\"%s\"}]}},"
             "{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"lastTransitionTime\":\"%s\"}]}}]",
             complete_at, failed_at);
    cJSON_Delete(w->jobs);
    w->jobs = cJSON_Parse(jobs);
    assert_non_null(w->jobs);
    w->in.jobs = w->jobs;
}

/* A run that could index nothing (the summary's "error": an image without ctags while symbols are on,
 * an unreadable repository list) is named in Indexed with a reason that asks somebody to act, whether
 * or not an older index is served, until a later run succeeds. */
static void test_run_error(void **state)
{
    static const char failed_pod[] =
        "[{\"status\":{\"containerStatuses\":[{\"name\":\"indexer\",\"state\":{\"terminated\":{"
        "\"finishedAt\":\"2026-11-28T03:00:10Z\",\"message\":\"{\\\"summary\\\":{\\\"indexed\\\":0,"
        "\\\"failed\\\":0,\\\"removed\\\":0,\\\"error\\\":\\\"symbols are on, but the indexer image has no "
        "Universal Ctags\\\"}}\"}}}]}}]";
    struct world w;
    const cJSON *st;

    (void)state;
    world_init(&w);
    w.pods = cJSON_Parse(failed_pod);
    assert_non_null(w.pods);
    w.in.pods = w.pods;
    set_jobs_done(&w, "2026-11-27T03:41:10Z", "2026-11-28T03:00:12Z");
    st = step(&w, NULL);
    expect_cond(st, STATUS_INDEXED, "True", STATUS_INDEXER_FAILING);
    assert_string_equal(cond_msg(st, STATUS_INDEXED), "121 repositories served from the previous index; the last "
                                                      "indexer run failed: symbols are on, but the indexer image has "
                                                      "no Universal Ctags");
    assert_true(status_reason_needs_user(STATUS_INDEXER_FAILING));
    /* The index is still served: search is available. */
    expect_cond(st, STATUS_READY, "True", "Available");

    /* Nothing served yet: Indexed and Ready say why. */
    w.index.repositories = 0;
    st = step(&w, NULL);
    expect_cond(st, STATUS_INDEXED, "False", STATUS_INDEXER_FAILING);
    expect_cond(st, STATUS_READY, "False", STATUS_INDEXER_FAILING);
    assert_non_null(strstr(cond_msg(st, STATUS_READY), "the last indexer run failed: symbols are on"));

    /* A later run that succeeded ends it. */
    w.index.repositories = 121;
    set_jobs_done(&w, "2026-11-28T04:00:00Z", "2026-11-28T03:00:12Z");
    st = step(&w, NULL);
    expect_cond(st, STATUS_INDEXED, "True", "IndexServed");
    world_free(&w);
}

static void test_reindex_and_custom_max_age(void **state)
{
    struct world w;
    const cJSON *st;
    long rq;

    (void)state;
    world_init(&w);
    w.spec->freshness_max_age_seconds = 90 * 60;
    w.index.oldest_index_time = T0 - 60 * 60;
    w.in.reindex_honoured = "2026-11-27T10:00:00Z";
    st = step(&w, &rq);
    assert_string_equal(json_str(st, "lastReindexRequest", ""), "2026-11-27T10:00:00Z");
    assert_non_null(strstr(cond_msg(st, STATUS_FRESH), "(maxAge is 1h30m)"));
    assert_int_equal(rq, 30 * 60 + 1);
    w.in.reindex_honoured = NULL;
    st = step(&w, NULL);
    assert_string_equal(json_str(st, "lastReindexRequest", ""), "2026-11-27T10:00:00Z");
    world_free(&w);
}

static void test_index_status_parse_stale(void **state)
{
    static const char judged[] = "{\"repositories\":30,\"stale\":25,\"staleRepositories\":[\"o/a\",7,\"o/b\",\"o/c\","
                                 "\"o/d\",\"o/e\",\"o/f\",\"o/g\",\"o/h\",\"o/i\",\"o/j\",\"o/k\",\"o/l\",\"o/m\",\"o/n\","
                                 "\"o/o\",\"o/p\",\"o/q\",\"o/r\",\"o/s\",\"o/t\",\"o/u\",\"o/v\"]}";
    struct index_status is;
    struct zk_err err = {0};
    char body[700];

    (void)state;
    /* An older connector says nothing per repository. */
    assert_int_equal(index_status_parse("{\"repositories\":3}", 18, &is, &err), ZK_OK);
    assert_false(is.has_stale);
    assert_null(is.stale_repositories);
    index_status_free(&is);
    /* The names are kept to 20, and what is not a name is skipped. */
    assert_int_equal(index_status_parse(judged, strlen(judged), &is, &err), ZK_OK);
    assert_true(is.has_stale);
    assert_int_equal(is.stale, 25);
    assert_int_equal(cJSON_GetArraySize(is.stale_repositories), STATUS_MAX_STALE_REPOS);
    assert_string_equal(cJSON_GetArrayItem(is.stale_repositories, 1)->valuestring, "o/b");
    assert_string_equal(cJSON_GetArrayItem(is.stale_repositories, 19)->valuestring, "o/t");
    index_status_free(&is);
    /* A name longer than a status may hold is left out. */
    snprintf(body, sizeof(body), "{\"repositories\":2,\"stale\":2,\"staleRepositories\":[\"%0600d\",\"o/a\"]}", 0);
    assert_int_equal(index_status_parse(body, strlen(body), &is, &err), ZK_OK);
    assert_int_equal(cJSON_GetArraySize(is.stale_repositories), 1);
    index_status_free(&is);
    assert_int_equal(index_status_parse("{\"repositories\":3,\"stale\":-2}", 30, &is, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "\"stale\" is not a count"));
    index_status_free(&is);
}

/* Sets what the connector judged: stale of the repositories, named by the first n of names. */
static void world_stale(struct world *w, int stale, const char *const *names, int n)
{
    index_status_free(&w->index);
    w->index.has_stale = 1;
    w->index.stale = stale;
    w->index.stale_repositories = cJSON_CreateStringArray(names, n);
}

static void test_stale_repositories(void **state)
{
    static const char *const names[] = {"acme/very-old", "acme/old", "acme/older-than-max-age"};
    struct world w;
    const cJSON *st, *fr;
    char *a, *b;
    long rq;

    (void)state;
    world_init(&w);
    /* The connector judged every repository fresh: Fresh as before, and the count in the status. */
    world_stale(&w, 0, names, 0);
    st = step(&w, &rq);
    expect_cond(st, STATUS_FRESH, "True", "WithinMaxAge");
    fr = json_obj(st, "freshness");
    assert_int_equal(json_int(fr, "stale", -1), 0);
    assert_int_equal(cJSON_GetArraySize(json_arr(fr, "staleRepositories")), 0);

    /* Some are older than maxAge: Fresh is False, naming the count and the oldest ones. */
    w.index.oldest_index_time = T0 - 40 * HOUR;
    world_stale(&w, 3, names, 3);
    st = step(&w, &rq);
    expect_cond(st, STATUS_FRESH, "False", "Stale");
    assert_string_equal(cond_msg(st, STATUS_FRESH),
                        "3 repositories are older than maxAge 36h: acme/very-old, acme/old, acme/older-than-max-age; "
                        "oldest index is 40h old");
    fr = json_obj(st, "freshness");
    assert_int_equal(json_int(fr, "stale", -1), 3);
    assert_string_equal(cJSON_GetArrayItem(json_arr(fr, "staleRepositories"), 0)->valuestring, "acme/very-old");
    assert_int_equal(rq, 0);

    /* More stale than named: the message says how many more. */
    world_stale(&w, 250, names, 2);
    st = step(&w, NULL);
    assert_string_equal(cond_msg(st, STATUS_FRESH),
                        "250 repositories are older than maxAge 36h: acme/very-old, acme/old and 248 more; "
                        "oldest index is 40h old");

    /* No churn: a resync with the same answer writes the same status. */
    a = json_print(step(&w, NULL));
    w.in.now += 10 * 60;
    b = json_print(step(&w, NULL));
    assert_string_equal(a, b);
    free(a);
    free(b);

    /* The index service unreachable: the last judgement stays. */
    w.in.index = NULL;
    w.in.index_error = "connection refused";
    st = step(&w, NULL);
    assert_int_equal(json_int(json_obj(st, "freshness"), "stale", -1), 250);
    assert_non_null(strstr(cond_msg(st, STATUS_FRESH), "250 repositories are older than maxAge 36h: acme/very-old"));
    world_free(&w);
}

static void test_stale_without_judgement(void **state)
{
    struct world w;
    const cJSON *st;

    (void)state;
    /* An older connector: no freshness member, Fresh judged on the oldest index time alone. */
    world_init(&w);
    w.index.oldest_index_time = T0 - 40 * HOUR;
    st = step(&w, NULL);
    assert_null(json_obj(st, "freshness"));
    expect_cond(st, STATUS_FRESH, "False", "Stale");
    assert_string_equal(cond_msg(st, STATUS_FRESH), "oldest index is 40h old; maxAge is 36h");
    world_free(&w);
}

/* With spec.sources: per source what it holds and when it was listed, and SourcesReady, which a failing
 * source turns False without touching Ready (its repositories stay). */
static void test_sources_ready(void **state)
{
    struct world w;
    struct corpus_spec *spec;
    struct spec_errors errs;
    struct disc_report r[2] = {{.repositories = 120, .last_success = T0 - 60, .last_attempt = T0 - 60},
                               {.repositories = 0}};
    cJSON *corpus = cJSON_Parse("{\"spec\":{\"sources\":[{\"host\":\"github\",\"org\":\"acme\"},"
                                "{\"host\":\"gitea\",\"url\":\"https://git.example.org\",\"user\":\"ops\"}]}}");
    const cJSON *st, *src;
    char ready_time[32];

    (void)state;
    assert_int_equal(spec_parse(corpus, NULL, &spec, &errs), ZK_OK);
    world_init(&w);
    w.in.spec = spec;
    w.in.sources = r;
    w.in.nsources = 2;
    st = step(&w, NULL);
    expect_cond(st, STATUS_SOURCES_READY, "Unknown", "NotListedYet");
    expect_cond(st, STATUS_READY, "True", "Available");
    snprintf(ready_time, sizeof(ready_time), "%s", cond_time(st, STATUS_READY));

    r[1] = (struct disc_report){.repositories = 7, .last_success = T0 - 30, .last_attempt = T0 - 30};
    st = step(&w, NULL);
    expect_cond(st, STATUS_SOURCES_READY, "True", "Listed");
    assert_string_equal(cond_msg(st, STATUS_SOURCES_READY), "2 sources hold 127 repositories");
    src = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "sources"), 1);
    assert_string_equal(json_str(src, "host", ""), "gitea");
    assert_string_equal(json_str(src, "user", ""), "ops");
    assert_int_equal(json_int(src, "repositories", -1), 7);
    assert_string_equal(json_str(src, "lastSuccessTime", ""), "2026-11-27T23:59:30Z");

    /* The host goes down: its seven repositories stay, and only SourcesReady says so. */
    w.in.now = T0 + 600;
    r[1].last_attempt = T0 + 600;
    r[1].error = "gitea:user:ops@https://git.example.org/api/v1: GET ...: connection refused";
    st = step(&w, NULL);
    expect_cond(st, STATUS_SOURCES_READY, "False", STATUS_DISCOVERY_FAILED);
    assert_non_null(strstr(cond_msg(st, STATUS_SOURCES_READY), "1 of 2 sources could not be listed"));
    assert_non_null(strstr(cond_msg(st, STATUS_SOURCES_READY), "gitea ops: gitea:user:ops@"));
    src = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "sources"), 1);
    assert_int_equal(json_int(src, "repositories", -1), 7);
    assert_non_null(strstr(json_str(src, "error", ""), "connection refused"));
    assert_string_equal(json_str(src, "lastFailureTime", ""), "2026-11-28T00:10:00Z");
    expect_cond(st, STATUS_READY, "True", "Available");
    assert_string_equal(cond_time(st, STATUS_READY), ready_time);

    /* Without sources there is neither a list nor a condition. */
    w.in.spec = w.spec;
    w.in.sources = NULL;
    w.in.nsources = 0;
    st = step(&w, NULL);
    assert_null(cJSON_GetObjectItemCaseSensitive(st, "sources"));
    assert_null(status_condition(st, STATUS_SOURCES_READY));
    world_free(&w);
    spec_free(spec);
    cJSON_Delete(corpus);
}

/* With three shards the status says which layout serves and each shard's figures, from the connector's
 * searchShards and each shard's Deployment; a shard that did not answer shows why. A pass that decides
 * nothing of the layout (an invalid spec) keeps the serving layout recorded. */
static void test_shards(void **state)
{
    static const char body[] =
        "{\"repositories\":9,\"shards\":9,\"searchShards\":["
        "{\"shard\":0,\"repositories\":4,\"indexBytes\":4096,\"oldestIndexTime\":\"2026-11-27T19:00:00Z\"},"
        "{\"shard\":1,\"repositories\":5,\"indexBytes\":5120,\"oldestIndexTime\":\"2026-11-27T18:00:00Z\"},"
        "{\"shard\":2,\"error\":\"Zoekt is not reachable\"}]}";
    struct world w;
    struct zk_err err = {0};
    cJSON *d1 = cJSON_Parse("{\"status\":{\"readyReplicas\":2}}");
    const cJSON *st, *sh;

    (void)state;
    world_init(&w);
    index_status_free(&w.index);
    assert_int_equal(index_status_parse(body, strlen(body), &w.index, &err), ZK_OK);
    assert_int_equal(w.index.nsearch_shards, 3);
    w.in.serving_shards = 3;
    w.in.shard_deployments[0] = w.deployment;
    w.in.shard_deployments[1] = d1;
    st = step(&w, NULL);
    assert_int_equal(json_int(st, "servingShards", 0), 3);
    assert_int_equal(cJSON_GetArraySize(json_arr(st, "shards")), 3);
    sh = cJSON_GetArrayItem(json_arr(st, "shards"), 1);
    assert_int_equal(json_int(sh, "shard", -1), 1);
    assert_int_equal(json_int(sh, "repositories", 0), 5);
    assert_int_equal(json_int(sh, "indexBytes", 0), 5120);
    assert_int_equal(json_int(sh, "readyReplicas", 0), 2);
    assert_string_equal(json_str(sh, "oldestIndexTime", ""), "2026-11-27T18:00:00Z");
    sh = cJSON_GetArrayItem(json_arr(st, "shards"), 2);
    assert_string_equal(json_str(sh, "error", ""), "Zoekt is not reachable");
    assert_int_equal(json_int(sh, "readyReplicas", -1), 0);

    w.in.serving_shards = 0;
    st = step(&w, NULL);
    assert_int_equal(json_int(st, "servingShards", 0), 3);
    cJSON_Delete(d1);
    world_free(&w);
}

/* ShardLayout: absent for a corpus of one shard; False, with the step it waits for and the layout that
 * serves meanwhile, while a move is under way, Ready staying True; True once the spec's layout serves;
 * Unknown with an invalid spec. The steps of a move are news, not warnings. */
static void test_shard_layout_condition(void **state)
{
    struct world w;
    const cJSON *st;
    struct corpus_spec *spec;

    (void)state;
    world_init(&w);
    w.in.serving_shards = 1;
    st = step(&w, NULL);
    assert_null(status_condition(st, STATUS_SHARD_LAYOUT));

    spec = w.spec;
    spec->webserver.shards = 3;
    w.in.layout_move.target = 3;
    w.in.layout_move.reason = STATUS_LAYOUT_INDEXING;
    snprintf(w.in.layout_move.detail, sizeof(w.in.layout_move.detail), "the Job is indexing it");
    w.in.now = T0 + 60;
    st = step(&w, NULL);
    expect_cond(st, STATUS_SHARD_LAYOUT, "False", STATUS_LAYOUT_INDEXING);
    assert_string_equal(cond_msg(st, STATUS_SHARD_LAYOUT),
                        "moving from 1 shard to 3: the Job is indexing it; the layout of 1 serves meanwhile");
    expect_cond(st, STATUS_READY, "True", "Available");
    assert_int_equal(json_int(st, "servingShards", 0), 1);

    memset(&w.in.layout_move, 0, sizeof(w.in.layout_move));
    w.in.serving_shards = 3;
    w.in.now = T0 + 120;
    st = step(&w, NULL);
    expect_cond(st, STATUS_SHARD_LAYOUT, "True", STATUS_LAYOUT_SERVING);
    assert_string_equal(cond_msg(st, STATUS_SHARD_LAYOUT), "the layout of 3 shards the spec names serves");
    assert_string_equal(cond_time(st, STATUS_SHARD_LAYOUT), "2026-11-28T00:02:00Z");

    w.in.spec = NULL;
    w.in.serving_shards = 0;
    st = step(&w, NULL);
    expect_cond(st, STATUS_SHARD_LAYOUT, "Unknown", "InvalidSpec");
    assert_int_equal(json_int(st, "servingShards", 0), 3);

    assert_true(status_reason_in_progress(STATUS_LAYOUT_VERIFYING));
    assert_true(status_reason_in_progress(STATUS_LAYOUT_ROLLING_OUT));
    assert_false(status_reason_in_progress(STATUS_INDEXER_FAILING));
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shards),
        cmocka_unit_test(test_shard_layout_condition),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_index_status_parse),
        cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_sources_ready),
        cmocka_unit_test(test_flip_to_stale),
        cmocka_unit_test(test_no_churn),
        cmocka_unit_test(test_index_unreachable),
        cmocka_unit_test(test_invalid_spec),
        cmocka_unit_test(test_missing_secret_and_deployment),
        cmocka_unit_test(test_pods_refused),
        cmocka_unit_test(test_unschedulable_architecture),
        cmocka_unit_test(test_volume_not_bound),
        cmocka_unit_test(test_image_pull_failed),
        cmocka_unit_test(test_prune_pod_running),
        cmocka_unit_test(test_apply_failed),
        cmocka_unit_test(test_empty_index),
        cmocka_unit_test(test_indexer_times),
        cmocka_unit_test(test_failed_repositories),
        cmocka_unit_test(test_volume_full),
        cmocka_unit_test(test_run_error),
        cmocka_unit_test(test_reindex_and_custom_max_age),
        cmocka_unit_test(test_index_status_parse_stale),
        cmocka_unit_test(test_stale_repositories),
        cmocka_unit_test(test_stale_without_judgement),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
