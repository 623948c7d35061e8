/* Unit tests for controller/runtime/events: the Event object a first occurrence creates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "controller/runtime/events.h"
#include "json.h"

static void test_event_names_the_object(void **state)
{
    cJSON *corpus = cJSON_Parse("{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\","
                                "\"metadata\":{\"name\":\"org\",\"namespace\":\"team\",\"uid\":\"u-1\","
                                "\"resourceVersion\":\"42\"}}");
    cJSON *e;

    (void)state;
    e = events_build(corpus, "zoekt-operator", "pod-1", "Warning", "InvalidSpec", "spec.schedule: bad cron",
                     1796000523, 0xabcULL);
    assert_non_null(e);
    assert_string_equal(json_str(e, "apiVersion", ""), "v1");
    assert_string_equal(json_str(e, "kind", ""), "Event");
    assert_string_equal(json_path_str(e, "metadata.name", ""), "org.abc");
    assert_string_equal(json_path_str(e, "metadata.namespace", ""), "team");
    assert_string_equal(json_path_str(e, "involvedObject.kind", ""), "CodeSearchCorpus");
    assert_string_equal(json_path_str(e, "involvedObject.apiVersion", ""), "codesearch.dev/v1alpha1");
    assert_string_equal(json_path_str(e, "involvedObject.uid", ""), "u-1");
    assert_string_equal(json_path_str(e, "involvedObject.namespace", ""), "team");
    assert_string_equal(json_str(e, "type", ""), "Warning");
    assert_string_equal(json_str(e, "reason", ""), "InvalidSpec");
    assert_string_equal(json_str(e, "message", ""), "spec.schedule: bad cron");
    assert_string_equal(json_path_str(e, "source.component", ""), "zoekt-operator");
    assert_string_equal(json_str(e, "reportingInstance", ""), "pod-1");
    assert_string_equal(json_str(e, "firstTimestamp", ""), "2026-11-30T01:02:03Z");
    assert_string_equal(json_str(e, "lastTimestamp", ""), "2026-11-30T01:02:03Z");
    assert_int_equal(json_int(e, "count", 0), 1);
    cJSON_Delete(e);
    cJSON_Delete(corpus);
}

static void test_long_names_are_cut_to_fit(void **state)
{
    char json[600], name[301];
    cJSON *obj, *e;

    (void)state;
    memset(name, 'a', 300);
    name[300] = '\0';
    snprintf(json, sizeof(json), "{\"kind\":\"CodeSearchCorpus\",\"metadata\":{\"name\":\"%s\"}}", name);
    obj = cJSON_Parse(json);
    e = events_build(obj, "c", "i", "Normal", "Applied", "m", 0, 0xffffffffffffffffULL);
    assert_non_null(e);
    assert_true(strlen(json_path_str(e, "metadata.name", "")) <= 253);
    assert_string_equal(json_path_str(e, "metadata.namespace", ""), "default");
    cJSON_Delete(e);
    cJSON_Delete(obj);
    obj = cJSON_Parse("{\"metadata\":{}}");
    assert_null(events_build(obj, "c", "i", "Normal", "Applied", "m", 0, 1));
    cJSON_Delete(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_names_the_object),
        cmocka_unit_test(test_long_names_are_cut_to_fit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
