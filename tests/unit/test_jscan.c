/* Unit tests for lib/jscan: it accepts exactly what cJSON accepts (each of cJSON's quirks named, and
 * strings whose quote or escape falls at every offset the fast scan treats differently, up to the last
 * byte given), finds members as cJSON does (escaped keys, first of equal keys, keys cut at "\u0000",
 * case folded for look-ups that ignore case), reads numbers as cJSON stores them, and walks nested
 * containers by its tape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jscan.h"
#include "json.h"

/* Whether jscan and cJSON agree on accepting text (len bytes), and which of them it is. */
static int accepted(const char *text, size_t len)
{
    cJSON *tree = json_parse(text, len);
    struct jscan_doc d;
    struct jscan root;
    int rc = jscan_parse(&d, text, len, &root);

    jscan_doc_free(&d);
    cJSON_Delete(tree);
    assert_int_equal(rc == ZK_OK, tree != NULL);
    return tree != NULL;
}

static void test_grammar_as_cjson(void **state)
{
    static const char *const yes[] = {
        "[01]", "[-.5]", "[1.]", "[1e5]", "\"\\uZZZZ\"", "[1] trailing", " \x01\x1f[true]", "{\"a\":null}",
        "[\"\\ud83d\\ude00\"]", "\"raw\x01control\"", "[1234567890123456789012345678901234567890123456789012345678901234567890]",
        "\xef\xbb\xbf[1]"};
    static const char *const no[] = {
        "[.5]", "[1e]", "[-]", "[1,]", "{\"a\":1,}", "[+1]", "\"\\x\"", "\"\\udc00\"", "\"\\ud800x\"", "{1:2}",
        "[nul]", "", "   ", "\xef\xbb\xbf" "1", "[\"abc", "\"abc\\"};
    char deep[2 * JSCAN_NESTING_LIMIT + 4];

    (void)state;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(accepted(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(accepted(no[i], strlen(no[i])));
    /* NUL is white space to cJSON, and the length given is what counts. */
    assert_true(accepted("[1,\0 2]", 7));
    assert_false(accepted("[1,2]", 4));
    /* 1000 nested arrays are accepted, 1001 are not. */
    for (int n = JSCAN_NESTING_LIMIT; n <= JSCAN_NESTING_LIMIT + 1; n++) {
        memset(deep, '[', (size_t)n);
        memset(deep + n, ']', (size_t)n);
        assert_int_equal(accepted(deep, 2 * (size_t)n), n == JSCAN_NESTING_LIMIT);
    }
}

/* The text as a heap block of exactly len bytes, so that AddressSanitizer catches a read past its end. */
static char *exact_copy(const char *text, size_t len)
{
    char *p = malloc(len);

    assert_non_null(p);
    memcpy(p, text, len);
    return p;
}

/* Strings whose closing quote, escape or end of text falls at each offset from 0 to 40: the scan
 * looks at eight bytes at a time for the first 32, then calls memchr. Each is accepted exactly when
 * cJSON accepts it, and an accepted one is the string cJSON decodes (for those without escapes, its
 * own bytes). */
static void test_strings_at_every_offset(void **state)
{
    static const char *const tails[] = {"\"", "\\\"\"", "\\\\\"", "\\u0041\"", "\\x\"", "\\", "", "\\\"",
                                        "\\ud83d\\ude00\"", "\\ud83d\""};
    char text[128];

    (void)state;
    for (size_t k = 0; k <= 40; k++) {
        for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
            size_t len;
            char *copy;
            struct jscan_doc d;
            struct jscan root;
            cJSON *tree;
            int rc;

            text[0] = '"';
            memset(text + 1, 'a', k);
            len = 1 + k + (size_t)snprintf(text + 1 + k, sizeof(text) - 1 - k, "%s", tails[t]);
            copy = exact_copy(text, len);
            tree = json_parse(copy, len);
            rc = jscan_parse(&d, copy, len, &root);
            assert_int_equal(rc == ZK_OK, tree != NULL);
            if (tree) {
                assert_int_equal(jscan_type(root), JSCAN_STRING);
                assert_int_equal(root.len, len);
                if (!strchr(tails[t], '\\'))
                    assert_memory_equal(root.p + 1, tree->valuestring, len - 2);
            }
            jscan_doc_free(&d);
            cJSON_Delete(tree);
            free(copy);
        }
    }
}

/* Whole numbers are read without strtod up to 15 digits: the same values as cJSON's, at the limit,
 * past it and for the forms only strtod reads. */
static void test_numbers_as_cjson(void **state)
{
    static const char *const numbers[] = {"0", "-0", "7", "007", "-42", "123456789012345", "-999999999999999",
                                          "1234567890123456", "9007199254740993", "9223372036854775807",
                                          "9223372036854775808", "-9223372036854775809", "1e3", "2.5", "-1.5e2",
                                          "1E400", "12.", "0.000001"};

    (void)state;
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
        char text[64];
        struct jscan_doc d;
        struct jscan root;
        cJSON *tree;

        snprintf(text, sizeof(text), "{\"n\":%s}", numbers[i]);
        tree = json_parse(text, strlen(text));
        assert_non_null(tree);
        assert_int_equal(jscan_parse(&d, text, strlen(text), &root), ZK_OK);
        {
            static const char *const name[] = {"n"};
            struct jscan v;

            jscan_find(&d, root, name, 1, &v);
            assert_int_equal(jscan_int(v, -7), json_int(tree, "n", -7));
        }
        jscan_doc_free(&d);
        cJSON_Delete(tree);
    }
}

/* Skipping a value steps over everything it holds, however deep: each element of the outer array is
 * found where it is, with its own bytes. */
static void test_walks_nested_containers(void **state)
{
    static const char text[] = " [ [1,[2,3]] , {\"a\":{\"b\":[]},\"c\":\"]\"} ,\"x\",[],{}, -4.5e1 ,null]";
    static const char *const want[] = {"[1,[2,3]]", "{\"a\":{\"b\":[]},\"c\":\"]\"}", "\"x\"", "[]", "{}", "-4.5e1",
                                       "null"};
    static const char *const names[] = {"c", "a"};
    struct jscan_doc d;
    struct jscan root, v, key, found[2];
    struct jscan_iter it;
    size_t i = 0;

    (void)state;
    assert_int_equal(jscan_parse(&d, text, strlen(text), &root), ZK_OK);
    assert_int_equal(jscan_count(&d, root), 7);
    jscan_iter_init(&it, &d, root);
    while (jscan_next(&it, &key, &v)) {
        assert_null(key.p);
        assert_true(i < 7);
        assert_int_equal(v.len, strlen(want[i]));
        assert_memory_equal(v.p, want[i], v.len);
        if (i == 1) {
            jscan_find(&d, v, names, 2, found);
            assert_memory_equal(found[0].p, "\"]\"", 3);
            assert_int_equal(jscan_count(&d, jscan_obj(found[1])), 0);
        }
        i++;
    }
    assert_int_equal(i, 7);
    jscan_doc_free(&d);
}

static void test_members_as_cjson(void **state)
{
    static const char text[] = "{\"File\\u004eame\":\"first\",\"FileName\":\"second\",\"Ranges\\u0000x\":[1,{\"a\":[2]},3],"
                               "\"n\":2.5e2,\"big\":1e400,\"t\":true,\"pad\":\"0123456789012345678901234567890123456789\"}";
    static const char *const names[] = {"FileName", "Ranges", "n", "big", "t", "missing"};
    struct jscan_doc d;
    struct jscan root, v[6], key, val;
    struct jscan_iter it;
    int saw_ranges = 0;

    (void)state;
    assert_int_equal(jscan_parse(&d, text, strlen(text), &root), ZK_OK);
    jscan_find(&d, root, names, 6, v);
    assert_int_equal(jscan_type(v[0]), JSCAN_STRING);
    assert_memory_equal(v[0].p, "\"first\"", v[0].len);
    assert_int_equal(jscan_count(&d, v[1]), 3);
    assert_int_equal(jscan_int(v[2], -1), 250);
    assert_int_equal(jscan_int(v[3], -1), -1); /* beyond long long: the default, as json_int */
    assert_int_equal(jscan_bool(v[4], 0), 1);
    assert_null(v[5].p);
    assert_null(jscan_arr(v[2]).p);
    jscan_iter_init(&it, &d, root);
    while (jscan_next(&it, &key, &val)) {
        saw_ranges |= jscan_key_is(key, "ranges", 1);
        assert_false(jscan_key_is(key, "ranges", 0));
    }
    assert_true(saw_ranges);
    jscan_doc_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar_as_cjson),
        cmocka_unit_test(test_strings_at_every_offset),
        cmocka_unit_test(test_numbers_as_cjson),
        cmocka_unit_test(test_walks_nested_containers),
        cmocka_unit_test(test_members_as_cjson),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
