/* Unit tests for lib/jb: a tree built without a check per member is returned whole, or not at all when
 * a value was missing, and nothing leaks on the way (the leak checker runs at exit). Allocation never
 * fails here (lib/mem.h); test_mem shows what happens when it does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "jb.h"
#include "json.h"

/* A Lease as the leader module writes it: every member matters (without holderIdentity any replica
 * would take the Lease). */
static cJSON *build_lease(struct jb *b)
{
    cJSON *o = jb_object(b), *md, *spec, *arr;

    jb_add_str(b, o, "apiVersion", "coordination.k8s.io/v1");
    jb_add_str(b, o, "kind", "Lease");
    md = jb_add_obj(b, o, "metadata");
    jb_add_str(b, md, "name", "zoekt-operator");
    jb_add_str(b, md, "namespace", "codesearch");
    spec = jb_object(b);
    jb_add_str(b, spec, "holderIdentity", "replica-a");
    jb_add_num(b, spec, "leaseDurationSeconds", 15);
    jb_add_bool(b, spec, "preferred", 1);
    jb_set(b, spec, "leaseDurationSeconds", jb_number(b, 30));
    jb_set(b, spec, "renewTime", jb_string(b, "2026-01-01T00:00:00.000000Z"));
    /* From here on spec belongs to o (or is freed, when it could not be added). */
    jb_add(b, o, "spec", spec);
    arr = jb_add_arr(b, o, "owners");
    jb_push(b, arr, jb_string(b, "one"));
    jb_push(b, arr, jb_string(b, "two"));
    return jb_finish(b, o);
}

static void expect_whole_lease(const cJSON *o)
{
    char *text = json_print(o);

    assert_non_null(text);
    assert_string_equal(text, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
                              "\"zoekt-operator\",\"namespace\":\"codesearch\"},\"spec\":{\"holderIdentity\":"
                              "\"replica-a\",\"leaseDurationSeconds\":30,\"preferred\":true,\"renewTime\":"
                              "\"2026-01-01T00:00:00.000000Z\"},\"owners\":[\"one\",\"two\"]}");
    free(text);
}

static void test_builds_the_whole_tree(void **state)
{
    struct jb b = {0};
    cJSON *o = build_lease(&b);

    (void)state;
    assert_non_null(o);
    assert_false(b.failed);
    expect_whole_lease(o);
    cJSON_Delete(o);
}

/* A NULL parent (an earlier failure) or a NULL string keeps the flag set; the flag is sticky. */
static void test_null_inputs_fail_and_stick(void **state)
{
    struct jb b = {0};
    cJSON *o;

    (void)state;
    assert_null(jb_add_str(&b, NULL, "k", "v"));
    assert_true(b.failed);
    o = jb_object(&b);
    jb_add_str(&b, o, "k", "v");
    assert_null(jb_finish(&b, o)); /* frees o */

    b.failed = 0;
    o = jb_object(&b);
    assert_null(jb_add_str(&b, o, "k", NULL));
    assert_true(b.failed);
    jb_push(&b, NULL, jb_string(&b, "freed, not leaked"));
    jb_add(&b, NULL, "k", jb_object(&b));
    jb_set(&b, NULL, "k", jb_object(&b));
    assert_null(jb_finish(&b, o));
    assert_null(jb_finish(&b, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builds_the_whole_tree),
        cmocka_unit_test(test_null_inputs_fail_and_stick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
