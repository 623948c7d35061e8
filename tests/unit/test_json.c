/* Unit tests for lib/json's printer: json_print writes, byte for byte, what cJSON_PrintUnformatted
 * writes (golden files, the operator's applies and every MCP reply depend on it), for every string
 * byte, for the numbers it prints itself and those it leaves to cJSON, and for nested containers. And
 * json_num_to_int, the one conversion of a JSON number to an integer, at and past every bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Checks that json_print and cJSON print tree alike; frees tree. */
static void expect_as_cjson(cJSON *tree)
{
    char *want, *got;

    assert_non_null(tree);
    want = cJSON_PrintUnformatted(tree);
    got = json_print(tree);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got, want);
    cJSON_free(want);
    free(got);
    cJSON_Delete(tree);
}

static void test_every_string_byte(void **state)
{
    char all[256], key[] = "k\"\\\x01\x1f/\x7f\xc3\xa9";
    cJSON *o = cJSON_CreateObject();

    (void)state;
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = '\0';
    cJSON_AddStringToObject(o, "all", all);
    cJSON_AddStringToObject(o, key, "line one\nline two\r\n\ttabbed \"quoted\" back\\slash");
    cJSON_AddStringToObject(o, "", "");
    expect_as_cjson(o);
    /* A string alone, as the root. */
    expect_as_cjson(cJSON_CreateString("\b\f\x0b plain"));
}

static void test_numbers(void **state)
{
    static const double v[] = {0.0, 1.0, -1.0, 42.0, 2147483648.0, -2147483649.0, 1e12, 999999999999999.0,
                               -999999999999999.0, 1e15, -1e15, 1e16, 9007199254740993.0, 0.5, -2.25, 1e300,
                               -1e-300, 123456.789};
    cJSON *a = cJSON_CreateArray();

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    /* -0, infinity and NaN are cJSON's to print ("-0", "null", "null"). */
    cJSON_AddItemToArray(a, cJSON_CreateNumber(-0.0));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(INFINITY));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
    expect_as_cjson(a);
    expect_as_cjson(cJSON_CreateNumber(7));
}

static void test_containers_and_literals(void **state)
{
    static const char text[] = "{\"a\":[],\"b\":{},\"c\":[[1,[2,{\"d\":null}]],true,false],\"e\":{\"f\":{\"g\":\"h\"}},"
                               "\"\\u00e9\":\"\\ud83d\\ude00\",\"dup\":1,\"dup\":2}";
    cJSON *raw = cJSON_CreateObject();

    (void)state;
    expect_as_cjson(json_parse(text, strlen(text)));
    expect_as_cjson(cJSON_CreateArray());
    expect_as_cjson(cJSON_CreateNull());
    expect_as_cjson(cJSON_CreateTrue());
    cJSON_AddRawToObject(raw, "raw", "[1, 2 ,3]");
    expect_as_cjson(raw);
    assert_null(json_print(NULL));
}

static void test_print_utf8(void **state)
{
    cJSON *tree = cJSON_CreateObject();
    char *text;

    (void)state;
    cJSON_AddStringToObject(tree, "k\xc0\x80", "a\xff" "b\xc3\xa9\n");
    cJSON_AddNumberToObject(tree, "n", 7);
    /* json_print copies the bytes as cJSON does; json_print_utf8 makes the text UTF-8, keys included. */
    text = json_print(tree);
    assert_string_equal(text, "{\"k\xc0\x80\":\"a\xff" "b\xc3\xa9\\n\",\"n\":7}");
    free(text);
    text = json_print_utf8(tree);
    assert_string_equal(text, "{\"k\xef\xbf\xbd\xef\xbf\xbd\":\"a\xef\xbf\xbd" "b\xc3\xa9\\n\",\"n\":7}");
    free(text);
    cJSON_Delete(tree);
}

/* Every value outside the range is refused before a conversion (which the sanitized build, with
 * float-cast-overflow, would abort on), and every value inside converts, cut toward zero. */
static void test_num_to_int(void **state)
{
    long long n = 42;

    (void)state;
    assert_false(json_num_to_int(9223372036854775808.0, LLONG_MIN, LLONG_MAX, &n));
    assert_false(json_num_to_int(-9223372036854777856.0, LLONG_MIN, LLONG_MAX, &n));
    assert_false(json_num_to_int(INFINITY, LLONG_MIN, LLONG_MAX, &n));
    assert_false(json_num_to_int(-INFINITY, LLONG_MIN, LLONG_MAX, &n));
    assert_false(json_num_to_int(NAN, LLONG_MIN, LLONG_MAX, &n));
    assert_false(json_num_to_int(1e300, 1, 200, &n));
    assert_false(json_num_to_int(201, 1, 200, &n));
    assert_false(json_num_to_int(0.5, 1, 200, &n));
    assert_int_equal(n, 42); /* untouched by a refusal */
    assert_true(json_num_to_int(-9223372036854775808.0, LLONG_MIN, LLONG_MAX, &n));
    assert_true(n == LLONG_MIN);
    assert_true(json_num_to_int(9223372036854774784.0, LLONG_MIN, LLONG_MAX, &n));
    assert_true(n == 9223372036854774784LL);
    assert_true(json_num_to_int(200, 1, 200, &n));
    assert_int_equal(n, 200);
    assert_true(json_num_to_int(200.5, 1, 200, &n));
    assert_int_equal(n, 200);
    assert_true(json_num_to_int(-2.5, -3, 0, &n));
    assert_int_equal(n, -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_string_byte),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_containers_and_literals),
        cmocka_unit_test(test_print_utf8),
        cmocka_unit_test(test_num_to_int),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
