/* Unit tests for connector/mcp/jsonrpc: classification of every message shape and the exact bytes of
 * the replies, ids kept with their JSON type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "connector/mcp/jsonrpc.h"
#include "json.h"

/* Classifies text; the tree is returned for the caller to free after using out. */
static cJSON *classify(const char *text, struct jsonrpc_msg *out)
{
    cJSON *node = json_parse(text, strlen(text));

    assert_non_null(node);
    jsonrpc_classify(node, out);
    return node;
}

static void assert_printed(cJSON *msg, const char *want)
{
    char *got;

    assert_non_null(msg);
    got = json_print(msg);
    assert_string_equal(got, want);
    free(got);
    cJSON_Delete(msg);
}

static void test_request_with_string_and_number_ids(void **state)
{
    struct jsonrpc_msg m;
    cJSON *n;

    (void)state;
    n = classify("{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"method\":\"tools/list\",\"params\":{}}", &m);
    assert_int_equal(m.kind, JSONRPC_REQUEST);
    assert_string_equal(m.method, "tools/list");
    assert_true(cJSON_IsString(m.id));
    assert_non_null(m.params);
    assert_printed(jsonrpc_result(m.id, cJSON_CreateObject()), "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"result\":{}}");
    cJSON_Delete(n);

    n = classify("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m);
    assert_int_equal(m.kind, JSONRPC_REQUEST);
    assert_null(m.params);
    assert_printed(jsonrpc_result(m.id, cJSON_CreateObject()), "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
    cJSON_Delete(n);

    /* A large integer id survives unchanged. */
    n = classify("{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"ping\"}", &m);
    assert_int_equal(m.kind, JSONRPC_REQUEST);
    assert_printed(jsonrpc_result(m.id, cJSON_CreateObject()),
                   "{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"result\":{}}");
    cJSON_Delete(n);
}

static void test_notification_and_response(void **state)
{
    struct jsonrpc_msg m;
    cJSON *n;

    (void)state;
    n = classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &m);
    assert_int_equal(m.kind, JSONRPC_NOTIFICATION);
    assert_null(m.id);
    cJSON_Delete(n);
    n = classify("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", &m);
    assert_int_equal(m.kind, JSONRPC_RESPONSE);
    cJSON_Delete(n);
    n = classify("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"x\"}}", &m);
    assert_int_equal(m.kind, JSONRPC_RESPONSE);
    cJSON_Delete(n);
}

static void test_invalid_messages(void **state)
{
    static const struct {
        const char *text;
        int code;
        int has_id;
    } cases[] = {
        {"[]", JSONRPC_INVALID_REQUEST, 0},
        {"42", JSONRPC_INVALID_REQUEST, 0},
        {"{\"id\":1,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", JSONRPC_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", JSONRPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", JSONRPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", JSONRPC_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", JSONRPC_INVALID_PARAMS, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", JSONRPC_INVALID_PARAMS, 1},
    };
    struct jsonrpc_msg m;
    size_t i;
    cJSON *n;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = classify(cases[i].text, &m);
        assert_int_equal(m.kind, JSONRPC_INVALID);
        assert_int_equal(m.error_code, cases[i].code);
        assert_non_null(m.error_msg);
        assert_int_equal(m.id != NULL, cases[i].has_id);
        cJSON_Delete(n);
    }
}

static void test_error_replies(void **state)
{
    cJSON *id = cJSON_CreateString("x");

    (void)state;
    assert_printed(jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "parse error", NULL),
                   "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}");
    assert_printed(jsonrpc_error(id, JSONRPC_INVALID_PARAMS, "bad", cJSON_CreateString("d")),
                   "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32602,\"message\":\"bad\",\"data\":\"d\"}}");
    assert_printed(jsonrpc_result(id, cJSON_CreateObject()), "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}");
    cJSON_Delete(id);
}

static void test_id_equality(void **state)
{
    cJSON *a = cJSON_CreateString("1"), *b = cJSON_CreateNumber(1), *c = cJSON_CreateNumber(1),
          *d = cJSON_CreateString("1");

    (void)state;
    assert_false(jsonrpc_id_equal(a, b)); /* "1" and 1 are different ids */
    assert_true(jsonrpc_id_equal(b, c));
    assert_true(jsonrpc_id_equal(a, d));
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_with_string_and_number_ids),
        cmocka_unit_test(test_notification_and_response),
        cmocka_unit_test(test_invalid_messages),
        cmocka_unit_test(test_error_replies),
        cmocka_unit_test(test_id_equality),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
