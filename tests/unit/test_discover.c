/* Unit tests for controller/sources/discover: listings walked over HTTP against a small GitHub-shaped
 * server on loopback (pages of two, Link headers, ETags and 304s, a failure, the rate limit, links that
 * go round in circles), the grace period across listings, and the ConfigMap text read back. The real
 * Gitea suite (tests/integration/test_node_sources.sh) runs the same code against a real host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/sources/discover.h"
#include "err.h"
#include "http.h"

#define PAGE_SIZE 2

enum mode { SERVE, FAIL, LIMITED, LOOP };

static struct {
    struct MHD_Daemon *d;
    int port;
    atomic_int repos;   /* the organisation holds r1..rN */
    atomic_int version; /* bumped with repos, so every page's ETag changes */
    atomic_int mode;
    atomic_int requests;
    char base[64];
} srv;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
    const char *page_arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "page");
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    int page = page_arg ? atoi(page_arg) : 1, n = atomic_load(&srv.repos), status = 200;
    char etag[64], body[4096], link[256];
    size_t at = 0;
    struct MHD_Response *r;
    enum MHD_Result ret;

    (void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_len, (void)con_cls;
    atomic_fetch_add(&srv.requests, 1);
    snprintf(etag, sizeof(etag), "\"v%d-p%d\"", atomic_load(&srv.version), page);
    body[0] = '\0';
    if (atomic_load(&srv.mode) == FAIL) {
        status = 502;
        snprintf(body, sizeof(body), "{\"message\":\"bad gateway\"}");
    } else if (atomic_load(&srv.mode) == LIMITED) {
        status = 429;
        snprintf(body, sizeof(body), "{\"message\":\"slow down\"}");
    } else if (inm && strcmp(inm, etag) == 0) {
        status = 304;
    } else {
        at += (size_t)snprintf(body + at, sizeof(body) - at, "[");
        for (int i = (page - 1) * PAGE_SIZE + 1; i <= n && i <= page * PAGE_SIZE; i++)
            at += (size_t)snprintf(body + at, sizeof(body) - at,
                                   "%s{\"full_name\":\"acme/r%d\",\"clone_url\":\"https://127.0.0.1:%d/acme/r%d.git\","
                                   "\"html_url\":\"https://127.0.0.1:%d/acme/r%d\",\"default_branch\":\"main\","
                                   "\"archived\":%s,\"fork\":false,\"visibility\":\"public\"}",
                                   i > (page - 1) * PAGE_SIZE + 1 ? "," : "", i, srv.port, i, srv.port, i,
                                   i == 4 ? "true" : "false");
        snprintf(body + at, sizeof(body) - at, "]");
    }
    r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    if (status == 200 || status == 304)
        MHD_add_response_header(r, "ETag", etag);
    if (status == 429)
        MHD_add_response_header(r, "Retry-After", "7200");
    if (status == 200 && (page * PAGE_SIZE < n || atomic_load(&srv.mode) == LOOP)) {
        int next = atomic_load(&srv.mode) == LOOP ? 1 : page + 1;

        snprintf(link, sizeof(link), "<%s/orgs/acme/repos?page=%d>; rel=\"next\"", srv.base, next);
        MHD_add_response_header(r, "Link", link);
    }
    ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static int group_setup(void **state)
{
    (void)state;
    srv.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, NULL,
                             MHD_OPTION_END);
    if (!srv.d)
        return -1;
    srv.port = MHD_get_daemon_info(srv.d, MHD_DAEMON_INFO_BIND_PORT)->port;
    snprintf(srv.base, sizeof(srv.base), "http://127.0.0.1:%d/api/v3", srv.port);
    return http_global_init();
}

static int group_teardown(void **state)
{
    (void)state;
    MHD_stop_daemon(srv.d);
    http_global_cleanup();
    return 0;
}

/* One GitHub organisation on the test server; archived repositories are left out as by default. */
struct fixture {
    struct corpus_source src;
    struct corpus_spec spec;
    struct disc_corpus *d;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    f->src = (struct corpus_source){.host = SPEC_HOST_GITHUB, .api_url = srv.base, .owner = "acme"};
    f->spec.sources = &f->src;
    f->spec.nsources = 1;
    f->spec.discovery_interval_seconds = 600;
    f->spec.discovery_grace_seconds = 86400;
    f->d = disc_corpus_new();
    disc_sync(f->d, &f->spec);
    atomic_store(&srv.repos, 5);
    atomic_store(&srv.version, 1);
    atomic_store(&srv.mode, SERVE);
    atomic_store(&srv.requests, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    disc_corpus_free(f->d);
    free(f);
    return 0;
}

static const struct disc_http plain = {NULL, NULL};

static struct disc_report report(struct fixture *f)
{
    struct disc_report r;

    disc_report(f->d, 0, &r);
    return r;
}

static void test_pages_then_not_modified(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};
    struct disc_report r;

    assert_true(disc_due(f->d, 0, 1000));
    assert_int_equal(disc_list(f->d, &f->spec, 0, "t0ken", &plain, 1000, &err), ZK_OK);
    r = report(f);
    /* Five repositories on three pages; r4 is archived and filtered out. */
    assert_int_equal(r.repositories, 4);
    assert_int_equal(r.requests, 3);
    assert_int_equal(r.not_modified, 0);
    assert_null(r.error);
    assert_false(disc_due(f->d, 0, 1000 + 599));
    assert_true(disc_due(f->d, 0, 1000 + 600));

    /* Nothing changed: every page answers 304 and is read from what was kept. */
    assert_int_equal(disc_list(f->d, &f->spec, 0, "t0ken", &plain, 1600, &err), ZK_OK);
    r = report(f);
    assert_int_equal(r.repositories, 4);
    assert_int_equal(r.requests, 3);
    assert_int_equal(r.not_modified, 3);
}

static void test_failure_keeps_the_set(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};
    struct disc_report r;

    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_OK);
    atomic_store(&srv.mode, FAIL);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1600, &err), ZK_ESERVER);
    r = report(f);
    assert_int_equal(r.repositories, 4);
    assert_non_null(r.error);
    assert_non_null(strstr(r.error, "github:org:acme@"));
    assert_int_equal(r.last_success, 1000);
    assert_int_equal(r.last_attempt, 1600);
    assert_int_equal(disc_next_due(f->d), 1600 + 600);

    /* The host answers again: the error goes. */
    atomic_store(&srv.mode, SERVE);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 2200, &err), ZK_OK);
    assert_null(report(f).error);
}

static void test_rate_limit_waits(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};

    atomic_store(&srv.mode, LIMITED);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_EBUSY);
    /* Retry-After asks for two hours; no host may stall a source past one. */
    assert_int_equal(disc_next_due(f->d), 1000 + 3600);
    assert_int_equal(report(f).repositories, 0);
}

static void test_links_in_a_circle_fail(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};

    atomic_store(&srv.mode, LOOP);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "already read"));
    assert_int_equal(atomic_load(&srv.requests), 2);
}

static void test_grace_then_gone(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};
    char *text;

    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_OK);
    /* r5 is deleted on the host: it stays for the grace period, then leaves. */
    atomic_store(&srv.repos, 4);
    atomic_store(&srv.version, 2);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 5000, &err), ZK_OK);
    assert_int_equal(report(f).repositories, 4);
    text = disc_state_text(f->d);
    /* Its last sighting is written; the others', seen by this listing, are not. */
    assert_non_null(strstr(text, " 1000 https://127.0.0.1:"));
    assert_non_null(strstr(text, "/acme/r5.git https://"));
    free(text);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000 + 86400, &err), ZK_OK);
    assert_int_equal(report(f).repositories, 3);
}

static void test_state_survives_a_restart(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};
    struct disc_corpus *again = disc_corpus_new();
    char *text, *text2;

    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_OK);
    atomic_store(&srv.repos, 3);
    atomic_store(&srv.version, 2);
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 2000, &err), ZK_OK);
    text = disc_state_text(f->d);

    /* A new operator reads the text: the same set (r1 to r3 listed, r4 archived and so left out, r5 in its
     * grace period with its last sighting, so it still leaves on time); junk lines and unknown sources
     * are passed over. */
    disc_sync(again, &f->spec);
    {
        char *with_junk = malloc(strlen(text) + 200);

        sprintf(with_junk, "garbage\ngithub:org:other@https://x 0 https://x/a.git - a/b\n%s", text);
        assert_int_equal(disc_load(again, with_junk, 3000), 4);
        free(with_junk);
    }
    text2 = disc_state_text(again);
    assert_string_equal(text, text2);
    assert_true(disc_due(again, 0, 3000));
    atomic_store(&srv.mode, FAIL);
    assert_int_equal(disc_list(again, &f->spec, 0, NULL, &plain, 3000, &err), ZK_ESERVER);
    {
        struct disc_report r;

        disc_report(again, 0, &r);
        assert_int_equal(r.repositories, 4);
    }
    free(text);
    free(text2);
    disc_corpus_free(again);
}

static void test_new_filters_are_due_at_once(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};
    char *include[] = {"acme/r1", NULL};
    struct corpus_repo *repos = NULL;
    size_t dropped = 0;
    int n = 0;

    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_OK);
    assert_false(disc_due(f->d, 0, 1001));
    f->src.include = include;
    disc_sync(f->d, &f->spec);
    assert_true(disc_due(f->d, 0, 1001));
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1001, &err), ZK_OK);
    /* A repository the filters now leave out goes like a deleted one: after the grace period. */
    f->spec.discovery_grace_seconds = 0;
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1002, &err), ZK_OK);
    assert_int_equal(disc_merge(f->d, &f->spec, &repos, &n, &dropped, &err), ZK_OK);
    assert_int_equal(n, 1);
    assert_string_equal(repos[0].name, "127.0.0.1/acme/r1");
    assert_string_equal(repos[0].code_host, "github");
    rlist_repos_free(repos, n);
}

static void test_too_many_keeps_the_set(void **state)
{
    struct fixture *f = *state;
    struct zk_err err = {0};

    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1000, &err), ZK_OK);
    /* With 1,997 listed repositories, four more would pass the corpus's bound. */
    f->spec.nrepos = SPEC_MAX_REPOS - 3;
    assert_int_equal(disc_list(f->d, &f->spec, 0, NULL, &plain, 1600, &err), ZK_ETOOBIG);
    assert_non_null(strstr(err.msg, "narrow include or exclude"));
    assert_int_equal(report(f).repositories, 4);
    f->spec.nrepos = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pages_then_not_modified, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_keeps_the_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_in_a_circle_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grace_then_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_survives_a_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_filters_are_due_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_keeps_the_set, setup, teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
