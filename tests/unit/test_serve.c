/* Unit tests for controller/runtime/serve: listen addresses, and the three endpoints over loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "controller/runtime/serve.h"
#include "http.h"

static void test_parse_addr(void **state)
{
    struct sockaddr_in sa;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(serve_parse_addr(":8080", &sa, &err), ZK_OK);
    assert_int_equal(ntohs(sa.sin_port), 8080);
    assert_int_equal(ntohl(sa.sin_addr.s_addr), INADDR_ANY);
    assert_int_equal(serve_parse_addr("127.0.0.1:0", &sa, &err), ZK_OK);
    assert_int_equal(ntohl(sa.sin_addr.s_addr), INADDR_LOOPBACK);
    assert_int_equal(serve_parse_addr("localhost:9", &sa, &err), ZK_OK);
    assert_int_equal(ntohl(sa.sin_addr.s_addr), INADDR_LOOPBACK);
    assert_int_equal(serve_parse_addr("8080", &sa, &err), ZK_EINVAL);
    assert_int_equal(serve_parse_addr(":", &sa, &err), ZK_EINVAL);
    assert_int_equal(serve_parse_addr(":70000", &sa, &err), ZK_EINVAL);
    assert_int_equal(serve_parse_addr("example.com:80", &sa, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "example.com"));
}

static int ready_flag;

static int ready(void *ud)
{
    (void)ud;
    return ready_flag;
}

static int metrics(void *ud, struct buf *out)
{
    (void)ud;
    return buf_puts(out, "zoekt_operator_leader 1\n");
}

static long get(int port, const char *path, char *body, size_t len)
{
    char url[64];
    struct http_request req = {.method = "GET", .url = url, .timeout_ms = 5000, .max_body = 4096};
    struct http_response resp = {0};
    long status;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    assert_int_equal(http_do(&req, &resp, NULL), ZK_OK);
    status = resp.status;
    snprintf(body, len, "%s", resp.body.data ? resp.body.data : "");
    http_response_free(&resp);
    return status;
}

static void test_endpoints(void **state)
{
    struct serve_opts o = {"127.0.0.1:0", ready, metrics, NULL};
    struct serve *s = NULL;
    char body[256];
    int port;

    (void)state;
    assert_int_equal(http_global_init(), ZK_OK);
    assert_int_equal(serve_start(&o, &s, NULL), ZK_OK);
    port = serve_port(s);
    assert_true(port > 0);
    assert_int_equal(get(port, "/healthz", body, sizeof(body)), 200);
    ready_flag = 0;
    assert_int_equal(get(port, "/readyz", body, sizeof(body)), 503);
    ready_flag = 1;
    assert_int_equal(get(port, "/readyz", body, sizeof(body)), 200);
    assert_int_equal(get(port, "/metrics", body, sizeof(body)), 200);
    assert_string_equal(body, "zoekt_operator_leader 1\n");
    assert_int_equal(get(port, "/nope", body, sizeof(body)), 404);
    serve_stop(s);
    http_global_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_addr),
        cmocka_unit_test(test_endpoints),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
