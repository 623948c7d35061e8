/* Unit tests for lib/http: the error taxonomy and message of a refused connection (loopback port 1,
 * where nothing listens: no server is needed), and the request checks made before any I/O. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "http.h"

static int setup(void **state)
{
    (void)state;
    return http_global_init();
}

static int teardown(void **state)
{
    (void)state;
    http_global_cleanup();
    return 0;
}

static void refused(struct zk_err *err)
{
    struct http_request req = {.method = "GET", .url = "http://127.0.0.1:1/index-status", .timeout_ms = 2000,
                               .max_body = 1024};
    struct http_response resp;

    zk_err_clear(err);
    assert_int_equal(http_do(&req, &resp, err), ZK_ECONNECT);
    http_response_free(&resp);
}

static void test_refused_connection_message_is_stable(void **state)
{
    struct zk_err a, b;

    (void)state;
    refused(&a);
    refused(&b);
    /* The message names what was tried... */
    assert_non_null(strstr(a.msg, "GET http://127.0.0.1:1/index-status: "));
    /* ...and carries nothing that changes between attempts (curl's elapsed time), because such messages
     * end up in status conditions, where they must not cause a write on every resync. */
    assert_null(strstr(a.msg, " ms"));
    assert_string_equal(a.msg, b.msg);
}

static void test_a_body_bound_is_required(void **state)
{
    struct http_request req = {.method = "GET", .url = "http://127.0.0.1:1/", .timeout_ms = 1000};
    struct http_response resp;
    struct zk_err err;

    (void)state;
    assert_int_equal(http_do(&req, &resp, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "no response size limit"));
    http_response_free(&resp);
}

static void test_escape(void **state)
{
    char *e = http_escape("app=zoekt,tier!=web x/y");

    (void)state;
    assert_string_equal(e, "app%3Dzoekt%2Ctier%21%3Dweb%20x%2Fy");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_connection_message_is_stable),
        cmocka_unit_test(test_a_body_bound_is_required),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
