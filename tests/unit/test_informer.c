/* Unit tests for the key functions informers are given: informer_self_key (an object's own key) and
 * controller/corpus/api's api_corpus_key (which corpus a changed child belongs to). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "controller/corpus/api.h"
#include "controller/runtime/informer.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_key),
        cmocka_unit_test(test_controller_owner_reference),
        cmocka_unit_test(test_instance_label_fallback),
        cmocka_unit_test(test_corpus_annotation_for_long_names),
        cmocka_unit_test(test_key_that_does_not_fit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
