/* Integration tests for connector/mcp/streamable: what a Streamable HTTP client sees when the server cannot
 * create its session.
 *
 * This program is linked with -Wl,--wrap=pthread_mutex_init (see the Makefile), so that a test can make
 * mcp_session_new fail the way it does when the process runs out of resources, which cannot be
 * arranged otherwise. Under LeakSanitizer, anything the failed request leaves allocated fails the
 * program at exit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "connector/front.h"
#include "connector/mcp/streamable.h"
#include "http.h"

int __real_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);

/* While set, every mutex the connector's code creates fails to initialise. */
static volatile int fail_mutex_init;

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    return fail_mutex_init ? 11 /* EAGAIN */ : __real_pthread_mutex_init(m, a);
}

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

/* POSTs an initialize to the server's /mcp and returns the HTTP status; body gets the answer's start. */
static long post_initialize(int port, char *body, size_t size)
{
    struct http_request req = {0};
    struct http_response resp;
    struct zk_err err = {0};
    char url[64];
    long status;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
    req.method = "POST";
    req.url = url;
    req.content_type = "application/json";
    req.accept = "application/json, text/event-stream";
    req.body = init_body;
    req.body_len = strlen(init_body);
    req.timeout_ms = 10000;
    req.max_body = 65536;
    if (http_do(&req, &resp, &err) != ZK_OK)
        fail_msg("POST %s: %s", url, err.msg);
    status = resp.status;
    snprintf(body, size, "%s", resp.body.data ? resp.body.data : "");
    http_response_free(&resp);
    return status;
}

static void test_session_creation_failure(void **state)
{
    struct connector_config cfg = {.zoekt_url = "http://127.0.0.1:9", .output_budget = 16384};
    struct mcp_streamable_opts o = {.cfg = &cfg, .server_version = "test"};
    struct front_opts fo = {.cfg = &cfg, .listen = "127.0.0.1:0", .nroutes = 1};
    struct front_route route;
    struct mcp_streamable *h = NULL;
    struct front *f = NULL;
    struct zk_err err = {0};
    char body[512];

    (void)state;
    assert_int_equal(http_global_init(), ZK_OK);
    assert_int_equal(mcp_streamable_new(&o, &h, &err), ZK_OK);
    route = mcp_streamable_route(h);
    fo.routes = &route;
    assert_int_equal(front_start(&fo, &f, &err), ZK_OK);

    /* The client is told the server failed; the parsed request is not kept anywhere. */
    fail_mutex_init = 1;
    assert_int_equal(post_initialize(front_port(f), body, sizeof(body)), 500);
    fail_mutex_init = 0;
    assert_non_null(strstr(body, "\"code\":-32603"));

    /* The server goes on serving: the next initialize gets a session. */
    assert_int_equal(post_initialize(front_port(f), body, sizeof(body)), 200);
    assert_non_null(strstr(body, "\"protocolVersion\":\"2025-06-18\""));

    front_stop(f);
    mcp_streamable_free(h);
    http_global_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_creation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
