/* Unit tests for controller/corpus/compare: the subset test that keeps steady state write-free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "controller/corpus/compare.h"

static int subset(const char *desired, const char *observed, char *diff, size_t len)
{
    cJSON *d = cJSON_Parse(desired), *o = observed ? cJSON_Parse(observed) : NULL;
    int r;

    assert_non_null(d);
    if (observed)
        assert_non_null(o);
    r = compare_subset(d, o, diff, len);
    cJSON_Delete(d);
    cJSON_Delete(o);
    return r;
}

static void test_server_defaulted_fields_are_ignored(void **state)
{
    (void)state;
    assert_true(subset("{\"spec\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}}}",
                       "{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"replicas\":1,\"revisionHistoryLimit\":10,"
                       "\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\","
                       "\"terminationMessagePath\":\"/dev/termination-log\"}]}}},\"status\":{}}",
                       NULL, 0));
}

static void test_a_changed_value_is_found_with_its_path(void **state)
{
    char diff[128];

    (void)state;
    assert_false(subset("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"y:2\"}]}}}}",
                        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"y:1\"}]}}}}",
                        diff, sizeof(diff)));
    assert_string_equal(diff, "spec.template.spec.containers[1].image");
    assert_false(subset("{\"spec\":{\"replicas\":2}}", "{\"spec\":{\"replicas\":3}}", diff, sizeof(diff)));
    assert_string_equal(diff, "spec.replicas");
}

static void test_arrays_must_have_the_same_length(void **state)
{
    char diff[128];

    (void)state;
    assert_false(subset("{\"a\":[1,2]}", "{\"a\":[1,2,3]}", diff, sizeof(diff)));
    assert_string_equal(diff, "a");
    assert_false(subset("{\"a\":[1,2,3]}", "{\"a\":[1,2]}", NULL, 0));
    assert_true(subset("{\"a\":[1,2]}", "{\"a\":[1,2]}", NULL, 0));
    assert_false(subset("{\"a\":[2,1]}", "{\"a\":[1,2]}", NULL, 0));
}

static void test_missing_member_and_absent_object(void **state)
{
    char diff[128];

    (void)state;
    assert_false(subset("{\"data\":{\"repos\":\"a\"}}", "{\"data\":{}}", diff, sizeof(diff)));
    assert_string_equal(diff, "data.repos");
    assert_false(subset("{\"kind\":\"ConfigMap\"}", NULL, diff, sizeof(diff)));
    assert_string_equal(diff, "(whole object)");
}

static void test_zero_values_match_omitted_fields(void **state)
{
    (void)state;
    assert_true(subset("{\"readOnly\":false,\"n\":0,\"s\":\"\",\"l\":[],\"o\":{},\"z\":null}", "{}", NULL, 0));
    assert_false(subset("{\"readOnly\":true}", "{}", NULL, 0));
    assert_false(subset("{\"readOnly\":false}", "{\"readOnly\":true}", NULL, 0));
}

static void test_types_must_match_outside_quantities(void **state)
{
    (void)state;
    assert_false(subset("{\"port\":8080}", "{\"port\":\"8080\"}", NULL, 0));
    assert_false(subset("{\"size\":\"1Gi\"}", "{\"size\":\"1024Mi\"}", NULL, 0));
    assert_true(subset("{\"size\":\"1Gi\"}", "{\"size\":\"1Gi\"}", NULL, 0));
    assert_false(subset("{\"b\":true}", "{\"b\":\"true\"}", NULL, 0));
}

static void test_quantities_compare_by_amount(void **state)
{
    char diff[128];

    (void)state;
    assert_true(subset("{\"resources\":{\"requests\":{\"cpu\":\"1000m\",\"memory\":\"0.5Gi\"},\"limits\":{\"cpu\":2}}}",
                       "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"512Mi\"},\"limits\":{\"cpu\":\"2\"}}}",
                       NULL, 0));
    assert_false(subset("{\"resources\":{\"requests\":{\"storage\":\"100Gi\"}}}",
                        "{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}}", diff, sizeof(diff)));
    assert_string_equal(diff, "resources.requests.storage");
    assert_false(subset("{\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}", "{\"resources\":{}}", NULL, 0));
}

static void test_quantity_parse(void **state)
{
    long double v;

    (void)state;
    assert_true(compare_quantity_parse("250m", &v));
    assert_true(v > 0.2499L && v < 0.2501L);
    assert_true(compare_quantity_parse("1Gi", &v));
    assert_true(v == 1073741824.0L);
    assert_true(compare_quantity_parse("1e3", &v));
    assert_true(v == 1000.0L);
    assert_true(compare_quantity_parse("2k", &v));
    assert_true(v == 2000.0L);
    assert_false(compare_quantity_parse("", &v));
    assert_false(compare_quantity_parse("Gi", &v));
    assert_false(compare_quantity_parse("1GB", &v));
    assert_false(compare_quantity_parse("0x10", &v));
    assert_false(compare_quantity_parse(" 1", &v));
    assert_false(compare_quantity_parse("inf", &v));
}

/* A ConfigMap as the cache keeps it: its long values as digests, its short ones as they are. The
 * digest matches the text it was made of and nothing else, so a steady state still writes nothing
 * and an edited script is still found. */
static void test_long_strings_compare_by_digest(void **state)
{
    char script[4096], edited[4096], diff[128];
    cJSON *desired, *observed, *changed;

    (void)state;
    memset(script, 'a', sizeof(script) - 1);
    script[sizeof(script) - 1] = '\0';
    memcpy(edited, script, sizeof(script));
    edited[2000] = 'b';
    desired = cJSON_CreateObject();
    cJSON_AddItemToObject(desired, "data", cJSON_CreateObject());
    cJSON_AddStringToObject(cJSON_GetObjectItem(desired, "data"), "indexer.sh", script);
    cJSON_AddStringToObject(cJSON_GetObjectItem(desired, "data"), "repositories.txt", "https://x/r.git\n");
    observed = cJSON_Duplicate(desired, 1);
    compare_digest_strings(observed);
    /* The long value became its digest, the short one stayed. */
    assert_int_equal(strncmp(cJSON_GetObjectItem(cJSON_GetObjectItem(observed, "data"), "indexer.sh")->valuestring,
                             COMPARE_DIGEST_MARK, strlen(COMPARE_DIGEST_MARK)), 0);
    assert_true(strlen(cJSON_GetObjectItem(cJSON_GetObjectItem(observed, "data"), "indexer.sh")->valuestring) < 80);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(observed, "data"), "repositories.txt")->valuestring,
                        "https://x/r.git\n");
    assert_true(compare_subset(desired, observed, diff, sizeof(diff)));
    /* Another text against that digest: a difference, named by its path. */
    changed = cJSON_Duplicate(desired, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(changed, "data"), "indexer.sh", cJSON_CreateString(edited));
    assert_false(compare_subset(changed, observed, diff, sizeof(diff)));
    assert_string_equal(diff, "data.indexer.sh");
    /* A short desired string never matches a digest, even one of itself. */
    assert_false(subset("{\"a\":\"x\"}", "{\"a\":\"\\u0001sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\"}",
                        diff, sizeof(diff)));
    cJSON_Delete(desired);
    cJSON_Delete(observed);
    cJSON_Delete(changed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_defaulted_fields_are_ignored),
        cmocka_unit_test(test_a_changed_value_is_found_with_its_path),
        cmocka_unit_test(test_arrays_must_have_the_same_length),
        cmocka_unit_test(test_missing_member_and_absent_object),
        cmocka_unit_test(test_zero_values_match_omitted_fields),
        cmocka_unit_test(test_types_must_match_outside_quantities),
        cmocka_unit_test(test_quantities_compare_by_amount),
        cmocka_unit_test(test_quantity_parse),
        cmocka_unit_test(test_long_strings_compare_by_digest),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
