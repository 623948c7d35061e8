/* Unit tests for controller/runtime/leader: what a candidate writes into the Lease, and a candidate
 * running against a fake Lease endpoint (tests/support/fakeapi): acquiring, renewing, releasing,
 * waiting out another holder, and losing the Lease when it cannot renew. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/runtime/leader.h"
#include "json.h"
#include "mem.h"
#include "tests/support/fakeapi.h"

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

/* ---- a candidate against a fake Lease endpoint ------------------------------------------------- */

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
#define LEASE LEASES "/lock"

/* The API server's side: one Lease (or none), its resourceVersion, and whether to fail every call. */
struct lease_server {
    pthread_mutex_t mu;
    cJSON *lease;
    int rv;
    int failing;
};

static int lease_status(char *out, size_t len, int code, const char *reason)
{
    snprintf(out, len, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\","
                       "\"reason\":\"%s\",\"code\":%d}", reason, reason, code);
    return code;
}

/* Stores obj as the Lease with the next resourceVersion and writes it into out. */
static int lease_store(struct lease_server *ls, cJSON *obj, char *out, size_t len)
{
    cJSON *meta = cJSON_GetObjectItem(obj, "metadata");
    char rv[16], *text;

    snprintf(rv, sizeof(rv), "%d", ++ls->rv);
    cJSON_DeleteItemFromObject(meta, "resourceVersion");
    cJSON_AddStringToObject(meta, "resourceVersion", rv);
    cJSON_Delete(ls->lease);
    ls->lease = obj;
    text = cJSON_PrintUnformatted(obj);
    snprintf(out, len, "%s", text);
    free(text);
    return 200;
}

static int answer_lease(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    struct lease_server *ls = ud;
    int status = 0;

    pthread_mutex_lock(&ls->mu);
    if (ls->failing) {
        status = lease_status(out, len, 500, "InternalError");
    } else if (strcmp(rq->method, "GET") == 0 && strcmp(rq->path, LEASE) == 0 && ls->lease) {
        char *text = cJSON_PrintUnformatted(ls->lease);

        snprintf(out, len, "%s", text);
        free(text);
        status = 200;
    } else if (strcmp(rq->method, "POST") == 0 && strcmp(rq->path, LEASES) == 0) {
        status = ls->lease ? lease_status(out, len, 409, "AlreadyExists")
                           : lease_store(ls, cJSON_Parse(rq->body), out, len);
    } else if (strcmp(rq->method, "PUT") == 0 && strcmp(rq->path, LEASE) == 0) {
        cJSON *obj = cJSON_Parse(rq->body);

        /* An update carries the version it read: an older one is a Conflict, as on a real server. */
        if (ls->lease && atoi(json_path_str(obj, "metadata.resourceVersion", "")) != ls->rv) {
            cJSON_Delete(obj);
            status = lease_status(out, len, 409, "Conflict");
        } else {
            status = lease_store(ls, obj, out, len);
        }
    }
    pthread_mutex_unlock(&ls->mu);
    return status;
}

/* A copy of spec.<member> of the stored Lease ("" when absent), in a static buffer. */
static const char *lease_spec(struct lease_server *ls, const char *member)
{
    static char v[128];
    char path[64];

    snprintf(path, sizeof(path), "spec.%s", member);
    pthread_mutex_lock(&ls->mu);
    snprintf(v, sizeof(v), "%s", json_path_str(ls->lease, path, ""));
    pthread_mutex_unlock(&ls->mu);
    return v;
}

struct candidate {
    struct lease_server ls;
    struct fakeapi *api;
    struct kube_client *client;
    struct leader *l;
};

static void candidate_start(struct candidate *c, const char *existing_lease)
{
    struct leader_opts o = {.namespace = "ns", .name = "lock", .identity = "me", .lease_duration = 2,
                            .renew_deadline = 1, .retry_period = 0.1};
    struct zk_err err = {0};

    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->ls.mu, NULL);
    c->ls.lease = existing_lease ? cJSON_Parse(existing_lease) : NULL;
    c->ls.rv = existing_lease ? 1 : 0;
    c->api = fakeapi_start(answer_lease, &c->ls);
    c->client = fakeapi_client(c->api);
    assert_int_equal(leader_start(c->client, &o, &c->l, &err), ZK_OK);
}

static void candidate_stop(struct candidate *c)
{
    leader_free(c->l);
    fakeapi_stop(c->api);
    kube_client_free(c->client);
    cJSON_Delete(c->ls.lease);
    pthread_mutex_destroy(&c->ls.mu);
}

static int leading(void *ud)
{
    return leader_is_leading(ud);
}

static int lost(void *ud)
{
    return leader_lost(ud);
}

/* The stored Lease has moved on from the resourceVersion in *ud. */
struct rv_watch {
    struct lease_server *ls;
    int from;
};

static int rv_moved(void *ud)
{
    struct rv_watch *w = ud;
    int rv;

    pthread_mutex_lock(&w->ls->mu);
    rv = w->ls->rv;
    pthread_mutex_unlock(&w->ls->mu);
    return rv > w->from + 1;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

    nanosleep(&ts, NULL);
}

/* No Lease: the candidate creates it, renews it every retry period, and on stop releases it so that a
 * standby need not wait for it to expire. */
static void test_acquire_renew_release(void **state)
{
    static struct candidate c;
    struct rv_watch renewals = {&c.ls, 0};

    (void)state;
    candidate_start(&c, NULL);
    assert_true(fakeapi_wait_for(leading, c.l, 5));
    assert_string_equal(lease_spec(&c.ls, "holderIdentity"), "me");
    assert_int_equal(fakeapi_count(c.api, "POST", LEASES), 1);
    renewals.from = c.ls.rv;
    assert_true(fakeapi_wait_for(rv_moved, &renewals, 5)); /* two renewals at least */
    assert_string_equal(lease_spec(&c.ls, "holderIdentity"), "me");
    leader_stop(c.l);
    assert_string_equal(lease_spec(&c.ls, "holderIdentity"), "");
    assert_false(leader_lost(c.l));
    candidate_stop(&c);
}

/* A Lease another holder stopped renewing: the candidate waits the lease duration out on its own clock,
 * then takes it over, counting a transition. */
static void test_waits_out_another_holder(void **state)
{
    static struct candidate c;

    (void)state;
    candidate_start(&c, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
                        "\"lock\",\"namespace\":\"ns\",\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":"
                        "\"other\",\"leaseDurationSeconds\":2,\"renewTime\":\"2026-11-30T00:00:00.000000Z\","
                        "\"leaseTransitions\":3}}");
    sleep_s(1);
    assert_false(leader_is_leading(c.l));
    assert_string_equal(lease_spec(&c.ls, "holderIdentity"), "other");
    assert_true(fakeapi_wait_for(leading, c.l, 5));
    assert_string_equal(lease_spec(&c.ls, "holderIdentity"), "me");
    pthread_mutex_lock(&c.ls.mu);
    assert_int_equal(json_int(json_obj(c.ls.lease, "spec"), "leaseTransitions", -1), 4);
    pthread_mutex_unlock(&c.ls.mu);
    candidate_stop(&c);
}

/* A leader whose renewals fail for the renew deadline stops leading for good: leader_lost, which the
 * operator turns into exit status 1. */
static void test_lost_when_renewals_fail(void **state)
{
    static struct candidate c;

    (void)state;
    candidate_start(&c, NULL);
    assert_true(fakeapi_wait_for(leading, c.l, 5));
    pthread_mutex_lock(&c.ls.mu);
    c.ls.failing = 1;
    pthread_mutex_unlock(&c.ls.mu);
    assert_false(leader_lost(c.l));
    assert_true(fakeapi_wait_for(lost, c.l, 5));
    assert_false(leader_is_leading(c.l));
    /* It competes no more, even once the server answers again. */
    pthread_mutex_lock(&c.ls.mu);
    c.ls.failing = 0;
    pthread_mutex_unlock(&c.ls.mu);
    sleep_s(0.5);
    assert_false(leader_is_leading(c.l));
    candidate_stop(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_micro_time_format),
        cmocka_unit_test(test_first_acquisition),
        cmocka_unit_test(test_renewal_keeps_acquire_time),
        cmocka_unit_test(test_takeover_counts_a_transition),
        cmocka_unit_test(test_acquire_renew_release),
        cmocka_unit_test(test_waits_out_another_holder),
        cmocka_unit_test(test_lost_when_renewals_fail),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
