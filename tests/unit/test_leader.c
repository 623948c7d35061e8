/* Unit tests for the pure parts of controller/runtime/leader: what a candidate writes into the Lease. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "controller/runtime/leader.h"
#include "json.h"
#include "tests/support/failalloc.h"

/* 2026-11-30T01:02:03.456789Z */
#define T0 1796000523456789LL

static void test_micro_time_format(void **state)
{
    char buf[40];

    (void)state;
    leader_format_micro(T0, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-30T01:02:03.456789Z");
}

static void test_first_acquisition(void **state)
{
    cJSON *spec = leader_claim_spec(NULL, "me", 15, T0);

    (void)state;
    assert_non_null(spec);
    assert_string_equal(json_str(spec, "holderIdentity", ""), "me");
    assert_int_equal(json_int(spec, "leaseDurationSeconds", 0), 15);
    assert_string_equal(json_str(spec, "acquireTime", ""), "2026-11-30T01:02:03.456789Z");
    assert_string_equal(json_str(spec, "renewTime", ""), "2026-11-30T01:02:03.456789Z");
    assert_int_equal(json_int(spec, "leaseTransitions", -1), 0);
    cJSON_Delete(spec);
}

static void test_renewal_keeps_acquire_time(void **state)
{
    cJSON *lease = cJSON_Parse("{\"spec\":{\"holderIdentity\":\"me\",\"acquireTime\":\"2026-11-30T00:00:00.000000Z\","
                               "\"renewTime\":\"2026-11-30T00:59:00.000000Z\",\"leaseTransitions\":3}}");
    cJSON *spec = leader_claim_spec(lease, "me", 15, T0);

    (void)state;
    assert_string_equal(json_str(spec, "acquireTime", ""), "2026-11-30T00:00:00.000000Z");
    assert_string_equal(json_str(spec, "renewTime", ""), "2026-11-30T01:02:03.456789Z");
    assert_int_equal(json_int(spec, "leaseTransitions", -1), 3);
    cJSON_Delete(spec);
    cJSON_Delete(lease);
}

static void test_takeover_counts_a_transition(void **state)
{
    cJSON *lease = cJSON_Parse("{\"spec\":{\"holderIdentity\":\"other\",\"acquireTime\":\"2026-11-30T00:00:00.000000Z\","
                               "\"leaseTransitions\":3}}");
    cJSON *released = cJSON_Parse("{\"spec\":{\"holderIdentity\":\"\",\"leaseTransitions\":4}}");
    cJSON *spec = leader_claim_spec(lease, "me", 4, T0);
    cJSON *spec2 = leader_claim_spec(released, "me", 4, T0);

    (void)state;
    assert_string_equal(json_str(spec, "holderIdentity", ""), "me");
    assert_string_equal(json_str(spec, "acquireTime", ""), "2026-11-30T01:02:03.456789Z");
    assert_int_equal(json_int(spec, "leaseTransitions", -1), 4);
    /* Taking a released Lease is not a transition away from a live holder. */
    assert_int_equal(json_int(spec2, "leaseTransitions", -1), 4);
    cJSON_Delete(spec);
    cJSON_Delete(spec2);
    cJSON_Delete(lease);
    cJSON_Delete(released);
}

static cJSON *claim(void *lease)
{
    return leader_claim_spec(lease, "me", 15, T0);
}

/* Out of memory, a candidate writes a whole Lease spec or none: a spec without holderIdentity would let
 * any replica take the Lease. */
static void test_claim_is_whole_or_nothing(void **state)
{
    cJSON *lease = cJSON_Parse("{\"spec\":{\"holderIdentity\":\"other\",\"leaseTransitions\":3}}");

    (void)state;
    failalloc_whole_or_nothing(claim, NULL);
    failalloc_whole_or_nothing(claim, lease);
    cJSON_Delete(lease);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_micro_time_format),
        cmocka_unit_test(test_first_acquisition),
        cmocka_unit_test(test_renewal_keeps_acquire_time),
        cmocka_unit_test(test_takeover_counts_a_transition),
        cmocka_unit_test(test_claim_is_whole_or_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
