/* Unit tests for the pure decisions inside controller/corpus/reconcile: which children need an apply,
 * where /index-status is, when a Job finished, which condition changes deserve an Event, and that what
 * the informers prune from cached objects is nothing reconcile compares or reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "controller/corpus/api.h"
#include "controller/corpus/reconcile.h"
#include "controller/corpus/render.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "json.h"
#include "tests/support/fixture.h"

#include <stdlib.h>

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    assert_non_null(j);
    return j;
}

static void test_needs_apply(void **state)
{
    cJSON *desired = parse("{\"metadata\":{\"name\":\"x-index\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":1}}");
    cJSON *same = parse("{\"metadata\":{\"name\":\"x-index\",\"uid\":\"u\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":1,\"y\":2}}");
    cJSON *owned = parse("{\"metadata\":{\"name\":\"x-index\",\"labels\":{\"a\":\"b\"},\"ownerReferences\":[{\"kind\":"
                         "\"CodeSearchCorpus\",\"name\":\"x\",\"controller\":true}]},\"spec\":{\"x\":1}}");
    cJSON *other_owner = parse("{\"metadata\":{\"name\":\"x-index\",\"labels\":{\"a\":\"b\"},\"ownerReferences\":[{\"kind\":"
                               "\"StatefulSet\",\"name\":\"s\",\"controller\":true}]},\"spec\":{\"x\":1}}");
    char diff[128];

    (void)state;
    assert_false(reconcile_needs_apply(desired, same, diff, sizeof(diff)));
    assert_true(reconcile_needs_apply(desired, NULL, diff, sizeof(diff)));
    /* Retain policy: the desired PVC has no ownerReference, the observed one still has ours. */
    assert_true(reconcile_needs_apply(desired, owned, diff, sizeof(diff)));
    assert_string_equal(diff, "metadata.ownerReferences");
    assert_false(reconcile_needs_apply(desired, other_owner, diff, sizeof(diff)));
    cJSON_Delete(desired);
    cJSON_Delete(same);
    cJSON_Delete(owned);
    cJSON_Delete(other_owner);
}

static void test_index_url(void **state)
{
    char url[128];
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(reconcile_index_url(RECONCILE_DEFAULT_INDEX_URL, "team", "org", "org-search", 8080, url,
                                         sizeof(url), &err),
                     ZK_OK);
    assert_string_equal(url, "http://org-search.team.svc:8080");
    assert_int_equal(reconcile_index_url("http://127.0.0.1:9000/{namespace}/{name}", "team", "org", "s", 1, url,
                                         sizeof(url), &err),
                     ZK_OK);
    assert_string_equal(url, "http://127.0.0.1:9000/team/org");
    assert_int_equal(reconcile_index_url("http://{host}", "a", "b", "c", 1, url, sizeof(url), &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "{host}"));
    assert_int_equal(reconcile_index_url("http://{name", "a", "b", "c", 1, url, sizeof(url), &err), ZK_EINVAL);
    assert_int_equal(reconcile_index_url("http://{namespace}.{namespace}", "a-long-namespace", "b", "c", 1, url, 20,
                                         &err),
                     ZK_EINVAL);
}

static void test_stale_outdated(void **state)
{
    struct index_status idx = {.repositories = 2, .oldest_index_time = 1000000, .has_stale = 1};
    long max_age = 36 * 3600;
    time_t deadline = 1000000 + max_age;

    (void)state;
    /* Read before the oldest index turned stale: out of date once it has, and only until the next read. */
    assert_false(reconcile_stale_outdated(&idx, max_age, deadline - 60, max_age, deadline));
    assert_true(reconcile_stale_outdated(&idx, max_age, deadline - 60, max_age, deadline + 1));
    assert_false(reconcile_stale_outdated(&idx, max_age, deadline + 1, max_age, deadline + 300));
    /* A new maxAge asks for a new judgement. */
    assert_true(reconcile_stale_outdated(&idx, max_age, deadline - 60, 48 * 3600, deadline - 30));
    /* An older connector judges nothing: nothing to bring up to date. */
    idx.has_stale = 0;
    assert_false(reconcile_stale_outdated(&idx, max_age, deadline - 60, max_age, deadline + 1));
    assert_false(reconcile_stale_outdated(&idx, max_age, deadline - 60, 48 * 3600, deadline - 30));
}

static void test_jobs_finished(void **state)
{
    cJSON *jobs = parse("[{\"status\":{\"completionTime\":\"2026-11-29T03:41:10Z\"}},"
                        "{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
                        "\"lastTransitionTime\":\"2026-11-29T05:00:00Z\"}]}},"
                        "{\"status\":{\"active\":1}}]");
    cJSON *none = parse("[{\"status\":{\"active\":1}}]");
    char t[40];

    (void)state;
    reconcile_jobs_finished(jobs, t, sizeof(t));
    assert_string_equal(t, "2026-11-29T05:00:00Z");
    reconcile_jobs_finished(none, t, sizeof(t));
    assert_string_equal(t, "");
    reconcile_jobs_finished(NULL, t, sizeof(t));
    assert_string_equal(t, "");
    cJSON_Delete(jobs);
    cJSON_Delete(none);
}

struct seen {
    char types[8][32];
    int n;
};

static void record(void *ud, const cJSON *c)
{
    struct seen *s = ud;

    assert_true(s->n < 8);
    snprintf(s->types[s->n++], sizeof(s->types[0]), "%s", cJSON_GetObjectItem(c, "type")->valuestring);
}

static void test_transitions(void **state)
{
    cJSON *old = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Available\"},"
                       "{\"type\":\"Fresh\",\"status\":\"True\",\"reason\":\"Fresh\"},"
                       "{\"type\":\"Indexed\",\"status\":\"True\",\"reason\":\"IndexServed\"}]}");
    cJSON *neu = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Available\"},"
                       "{\"type\":\"Fresh\",\"status\":\"False\",\"reason\":\"Stale\"},"
                       "{\"type\":\"Indexed\",\"status\":\"True\",\"reason\":\"PartiallyIndexed\"},"
                       "{\"type\":\"Degraded\",\"status\":\"Unknown\",\"reason\":\"Pending\"}]}");
    cJSON *stuck = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"SecretNotFound\"},"
                         "{\"type\":\"Fresh\",\"status\":\"False\",\"reason\":\"NoIndex\"},"
                         "{\"type\":\"Indexed\",\"status\":\"True\",\"reason\":\"PartiallyIndexed\"}]}");
    struct seen s = {0};

    (void)state;
    /* Fresh stopped being True; Indexed only changed its reason. */
    reconcile_transitions(old, neu, record, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.types[0], "Fresh");
    /* Ready stopped being True for a reason that asks for a Secret; Fresh only changed its reason. */
    memset(&s, 0, sizeof(s));
    reconcile_transitions(neu, stuck, record, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.types[0], "Ready");
    cJSON_Delete(stuck);
    memset(&s, 0, sizeof(s));
    reconcile_transitions(neu, neu, record, &s);
    assert_int_equal(s.n, 0);
    cJSON_Delete(old);
    cJSON_Delete(neu);
}

/* A new corpus's first status repeats itself in no Event while the corpus is on its way; one that cannot
 * go on until somebody acts says so in one. */
static void test_first_status(void **state)
{
    cJSON *on_its_way = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"DeploymentUnavailable\"},"
                              "{\"type\":\"Fresh\",\"status\":\"False\",\"reason\":\"NoIndex\"},"
                              "{\"type\":\"Indexed\",\"status\":\"Unknown\",\"reason\":\"Pending\"}]}");
    cJSON *stuck = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"SecretNotFound\"},"
                         "{\"type\":\"Fresh\",\"status\":\"Unknown\",\"reason\":\"InvalidSpec\"}]}");
    struct seen s = {0};

    (void)state;
    reconcile_transitions(NULL, on_its_way, record, &s);
    assert_int_equal(s.n, 0);
    reconcile_transitions(NULL, stuck, record, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.types[0], "Ready");
    /* On its way, then stuck: Ready is still False, but now for a missing Secret. */
    memset(&s, 0, sizeof(s));
    reconcile_transitions(on_its_way, stuck, record, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.types[0], "Ready");
    assert_string_equal(s.types[1], "Fresh");
    cJSON_Delete(stuck);
    /* On its way, then its pods refused (a quota): Ready is still False, but now somebody must act. */
    stuck = parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"PodsRefused\"},"
                  "{\"type\":\"Fresh\",\"status\":\"False\",\"reason\":\"NoIndex\"},"
                  "{\"type\":\"Indexed\",\"status\":\"Unknown\",\"reason\":\"Pending\"}]}");
    memset(&s, 0, sizeof(s));
    reconcile_transitions(on_its_way, stuck, record, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.types[0], "Ready");
    cJSON_Delete(on_its_way);
    cJSON_Delete(stuck);
}

/* Every child another one needs goes in the first wave, and what needs it in the second. */
static void test_second_wave_needs_the_first(void **state)
{
    static const char *const first[] = {"PersistentVolumeClaim", "ConfigMap", "ServiceAccount", "Role", "Service",
                                        "PodDisruptionBudget"};
    static const char *const second[] = {"RoleBinding", "Deployment", "CronJob", "Job"};

    (void)state;
    for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
        assert_false(reconcile_needs_siblings(first[i]));
    for (size_t i = 0; i < sizeof(second) / sizeof(second[0]); i++)
        assert_true(reconcile_needs_siblings(second[i]));
}

/* The resources are the ones render writes: CronJobs as batch/v1, PodDisruptionBudgets as policy/v1. */
static void test_resources(void **state)
{
    struct kube_resource r[RK_COUNT];

    (void)state;
    reconcile_resources(r);
    assert_string_equal(r[RK_CRONJOB].group, "batch");
    assert_string_equal(r[RK_CRONJOB].version, "v1");
    assert_string_equal(r[RK_JOB].version, "v1");
    assert_string_equal(r[RK_PDB].version, "v1");
    assert_string_equal(r[RK_PDB].group, "policy");
    assert_string_equal(r[RK_DEPLOYMENT].group, "apps");
}

/* What the API server adds to an object for writers: a managedFields entry and, for objects once
 * written with client-side `kubectl apply`, the last-applied annotation. */
static void add_server_fields(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");

    if (!ann)
        ann = cJSON_AddObjectToObject(meta, "annotations");
    cJSON_AddStringToObject(ann, "kubectl.kubernetes.io/last-applied-configuration", "{\"spec\":{}}");
    cJSON_AddItemToObject(meta, "managedFields",
                          parse("[{\"manager\":\"zoekt-operator\",\"operation\":\"Apply\",\"fieldsV1\":"
                                "{\"f:spec\":{\"f:replicas\":{}}}}]"));
}

/* What the API server sets on every object it stores, and a status of its own. */
static void add_server_metadata(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    cJSON_AddStringToObject(meta, "uid", "8f2c1d7e-5b3a-4c6e-9d0f-1a2b3c4d5e6f");
    cJSON_AddStringToObject(meta, "resourceVersion", "48213");
    cJSON_AddNumberToObject(meta, "generation", 3);
    cJSON_AddStringToObject(meta, "creationTimestamp", "2026-11-29T03:41:10Z");
    cJSON_AddItemToObject(obj, "status", parse("{\"observedGeneration\":3,\"conditions\":[{\"type\":\"Available\","
                                               "\"lastTransitionTime\":\"2026-11-29T03:41:12Z\"}]}"));
}

/* Every rendered child, as the server returns it and the informer prunes it, is still a match for
 * what was rendered (so a steady state writes nothing), maps to the same corpus, and lost the server
 * fields, the server's metadata and a status that status_compute does not read. */
static void test_prune_keeps_what_is_compared(void **state)
{
    size_t len;
    char *text = fixture_read("tests/fixtures/render", "corpus.json", &len);
    cJSON *corpus = parse(text), *children = NULL;
    struct corpus_spec *spec = NULL;
    struct spec_errors errs = {0};
    struct zk_err err = {0};
    const cJSON *child;

    (void)state;
    free(text);
    assert_int_equal(spec_parse(corpus, NULL, &spec, &errs), ZK_OK);
    assert_int_equal(render_children(corpus, spec, &children, &err), ZK_OK);
    assert_true(cJSON_GetArraySize(children) >= 8);
    cJSON_ArrayForEach(child, children) {
        cJSON *observed = cJSON_Duplicate(child, 1);
        char want[128], got[128], diff[256];
        int had_key;

        assert_non_null(observed);
        had_key = api_corpus_key(observed, want, sizeof(want));
        add_server_fields(observed);
        add_server_metadata(observed);
        status_prune_child(observed);
        assert_null(json_path(observed, "metadata.managedFields"));
        assert_null(json_path(observed, "metadata.uid"));
        assert_null(json_path(observed, "metadata.resourceVersion"));
        /* Of the server's status a Deployment keeps its rollout's generation (a shard layout is rolled
         * out when it is current), every other kind nothing. */
        if (strcmp(json_str(observed, "kind", ""), "Deployment") == 0)
            assert_int_equal(json_int(json_obj(observed, "status"), "observedGeneration", 0), 3);
        else
            assert_null(json_path(observed, "status"));
        assert_null(json_str(json_path(observed, "metadata.annotations"),
                             "kubectl.kubernetes.io/last-applied-configuration", NULL));
        assert_false(reconcile_needs_apply(child, observed, diff, sizeof(diff)));
        assert_int_equal(api_corpus_key(observed, got, sizeof(got)), had_key);
        if (had_key)
            assert_string_equal(got, want);
        cJSON_Delete(observed);
    }
    cJSON_Delete(children);
    spec_free(spec);
    cJSON_Delete(corpus);
}

/* The status members status_compute and the shard layouts read survive the prune, whole: a
 * Deployment's generation and replica counts (a layout is rolled out when every pod runs its last
 * change and is ready), a CronJob's schedule times. */
static void test_prune_child_keeps_what_status_reads(void **state)
{
    cJSON *deployment = parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"org-search\","
                              "\"generation\":2,\"uid\":\"u\"},\"status\":{\"observedGeneration\":2,\"replicas\":2,"
                              "\"availableReplicas\":2,\"readyReplicas\":2,\"updatedReplicas\":2}}");
    cJSON *cronjob = parse("{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"org-indexer\"},"
                           "\"status\":{\"active\":[{\"name\":\"org-indexer-1\"}],\"lastScheduleTime\":"
                           "\"2026-11-29T03:00:00Z\",\"lastSuccessfulTime\":\"2026-11-28T03:41:10Z\"}}");
    cJSON *want_d = parse("{\"availableReplicas\":2,\"readyReplicas\":2,\"updatedReplicas\":2,\"observedGeneration\":2}");
    cJSON *want_c = parse("{\"lastScheduleTime\":\"2026-11-29T03:00:00Z\",\"lastSuccessfulTime\":"
                          "\"2026-11-28T03:41:10Z\"}");

    (void)state;
    status_prune_child(deployment);
    status_prune_child(cronjob);
    assert_true(cJSON_Compare(json_obj(deployment, "status"), want_d, 1));
    assert_int_equal(json_int(json_obj(deployment, "metadata"), "generation", 0), 2);
    assert_null(json_path(deployment, "metadata.uid"));
    assert_true(cJSON_Compare(json_obj(cronjob, "status"), want_c, 1));
    cJSON_Delete(deployment);
    cJSON_Delete(cronjob);
    cJSON_Delete(want_d);
    cJSON_Delete(want_c);
}

/* Jobs and Pods lose their specs (a whole pod template) but keep what reconcile reads: the corpus
 * they belong to, when a Job finished, the indexer's termination message. */
static void test_prune_observed_keeps_status(void **state)
{
    cJSON *job = parse("{\"metadata\":{\"namespace\":\"team\",\"name\":\"org-indexer-1\",\"labels\":{"
                       "\"app.kubernetes.io/managed-by\":\"zoekt-operator\",\"app.kubernetes.io/instance\":\"org\"}},"
                       "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"indexer\"}]}}},"
                       "\"status\":{\"completionTime\":\"2026-11-29T03:41:10Z\",\"containerStatuses\":[{\"name\":"
                       "\"indexer\",\"state\":{\"terminated\":{\"message\":\"{}\"}}}]}}");
    cJSON *jobs = cJSON_CreateArray();
    char before[40], after[40], key[64];

    (void)state;
    add_server_fields(job);
    cJSON_AddItemReferenceToArray(jobs, job);
    reconcile_jobs_finished(jobs, before, sizeof(before));
    reconcile_prune_observed(job);
    assert_null(json_obj(job, "spec"));
    assert_null(json_path(job, "metadata.managedFields"));
    reconcile_jobs_finished(jobs, after, sizeof(after));
    assert_string_equal(after, before);
    assert_non_null(json_path(job, "status.containerStatuses"));
    assert_true(api_corpus_key(job, key, sizeof(key)));
    assert_string_equal(key, "team/org");
    cJSON_Delete(jobs);
    cJSON_Delete(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needs_apply),
        cmocka_unit_test(test_index_url),
        cmocka_unit_test(test_jobs_finished),
        cmocka_unit_test(test_stale_outdated),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_first_status),
        cmocka_unit_test(test_second_wave_needs_the_first),
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_prune_keeps_what_is_compared),
        cmocka_unit_test(test_prune_observed_keeps_status),
        cmocka_unit_test(test_prune_child_keeps_what_status_reads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
