/* Unit tests for connector/mcp/jsonrpc: classification of every message shape and the exact bytes of
 * the replies, ids kept with their JSON type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
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

/* Parses exactly len bytes of text with the message reader. */
static cJSON *parse_n(const char *text, size_t len)
{
    return jsonrpc_parse(text, len);
}

/* Parses a NUL-terminated text with the message reader. */
static cJSON *parse_s(const char *text)
{
    return jsonrpc_parse(text, strlen(text));
}

/* A string of n copies of unit between head and tail, on the heap. */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), i;
    char *s = malloc(hl + n * ul + tl + 1), *p = s;

    assert_non_null(s);
    memcpy(p, head, hl);
    p += hl;
    for (i = 0; i < n; i++, p += ul)
        memcpy(p, unit, ul);
    memcpy(p, tail, tl + 1);
    return s;
}

static void test_parse_refuses_nul_and_trailing_bytes(void **state)
{
    static const char nul_after[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0";
    static const char nul_inside[] = "{\"jsonrpc\":\"2.0\",\"id\":\"a\0b\",\"method\":\"ping\"}";
    static const char nul_between[] = "{\"jsonrpc\":\"2.0\",\0\"id\":1,\"method\":\"ping\"}";
    cJSON *n;

    (void)state;
    /* A raw NUL is no JSON whitespace and may not stand in a string: cJSON would skip the first, and end
     * the string at the second. */
    assert_null(parse_n(nul_after, sizeof(nul_after) - 1));
    assert_null(parse_n(nul_inside, sizeof(nul_inside) - 1));
    assert_null(parse_n(nul_between, sizeof(nul_between) - 1));
    /* Other control bytes inside a string must be escaped too (RFC 8259, section 7). */
    assert_null(parse_s("{\"a\":\"x\ty\"}"));
    /* One value fills the message: whatever follows it other than whitespace is refused. */
    assert_null(parse_s("{\"a\":1} x"));
    assert_null(parse_s("{\"a\":1}{\"a\":2}"));
    assert_null(parse_s("1 2"));
    assert_null(parse_s("[1]]"));
    n = parse_s(" {\"a\":1}\r\n\t ");
    assert_non_null(n);
    cJSON_Delete(n);
    /* The escape is still read as before, and "\\u0000" (a backslash, then text) is left alone. */
    n = parse_s("{\"a\":\"x\\u0000y\",\"b\":\"\\\\u0000\"}");
    assert_non_null(n);
    assert_string_equal(json_str(n, "a", ""), "x\xc0\x80y");
    assert_string_equal(json_str(n, "b", ""), "\\u0000");
    cJSON_Delete(n);
}

static void test_parse_bounds_depth_and_values(void **state)
{
    char *text;
    cJSON *n;
    size_t len;

    (void)state;
    /* Nesting up to the limit parses, one more level does not. */
    text = repeat("", "[", JSONRPC_DEPTH_MAX, "");
    len = strlen(text);
    text = realloc(text, 2 * len + 1);
    assert_non_null(text);
    memset(text + len, ']', len);
    text[2 * len] = '\0';
    n = parse_s(text);
    assert_non_null(n);
    cJSON_Delete(n);
    free(text);
    text = repeat("", "[", JSONRPC_DEPTH_MAX + 1, "");
    len = strlen(text);
    text = realloc(text, 2 * len + 1);
    assert_non_null(text);
    memset(text + len, ']', len);
    text[2 * len] = '\0';
    assert_null(parse_s(text));
    free(text);

    /* 1 MiB of [0,0,0,...] would make a tree of half a million nodes; it is refused before cJSON
     * builds one. */
    text = repeat("[", "0,", 500000, "0]");
    assert_null(parse_s(text));
    free(text);
    text = repeat("[", "0,", JSONRPC_VALUES_MAX - 2, "0]"); /* the array and its elements: exactly the bound */
    n = parse_s(text);
    assert_non_null(n);
    cJSON_Delete(n);
    free(text);
    text = repeat("[", "0,", JSONRPC_VALUES_MAX - 1, "0]");
    assert_null(parse_s(text));
    free(text);

    /* The largest legitimate message fits: a batch of 32 search_code calls, each with 50 repositories,
     * 50 file globs and 50 excluded ones (the schemas' maxItems) and every other argument. */
    text = repeat("[", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                       "\"search_code\",\"_meta\":{\"progressToken\":1},\"arguments\":{\"query\":\"x\","
                       "\"literal\":true,\"syntax\":\"regex\",\"context_lines\":3,\"max_files\":20,"
                       "\"case_sensitive\":false,\"max_bytes\":4096,"
                       "\"repo\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"],"
                       "\"file\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"],"
                       "\"exclude_file\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}}},",
                  32, "]");
    text[strlen(text) - 2] = ' '; /* the comma after the last message */
    n = parse_s(text);
    assert_non_null(n);
    assert_int_equal(cJSON_GetArraySize(n), 32);
    cJSON_Delete(n);
    free(text);
}

static void test_ids_not_utf8_are_refused(void **state)
{
    static const char *const texts[] = {
        /* \u0000 reads as C0 80 (jsonrpc_parse), which could not go back out as the id that came in. */
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"ping\"}",
        /* Raw bytes that are not UTF-8 could not go out in a JSON text at all. */
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"ping\"}",
    };
    struct jsonrpc_msg m;
    const char *text;
    size_t i;
    cJSON *n;

    (void)state;
    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        n = jsonrpc_parse(texts[i], strlen(texts[i]));
        assert_non_null(n);
        jsonrpc_classify(n, &m);
        assert_int_equal(m.kind, JSONRPC_INVALID);
        assert_int_equal(m.error_code, JSONRPC_INVALID_REQUEST);
        assert_null(m.id);
        assert_non_null(strstr(m.error_msg, "UTF-8"));
        cJSON_Delete(n);
    }
    /* Any other text, escaped or not, is an id and comes back exactly. */
    text = "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\\u00e9\\n\",\"method\":\"ping\"}";
    n = jsonrpc_parse(text, strlen(text));
    assert_non_null(n);
    jsonrpc_classify(n, &m);
    assert_int_equal(m.kind, JSONRPC_REQUEST);
    assert_printed(jsonrpc_result(m.id, cJSON_CreateObject()),
                   "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\xc3\xa9\\n\",\"result\":{}}");
    cJSON_Delete(n);
}

static void test_client_text_is_shown_safely(void **state)
{
    char out[JSONRPC_SHOW_MAX * 4 + 8], *longname;

    (void)state;
    jsonrpc_show(out, sizeof(out), "search_code");
    assert_string_equal(out, "search_code");
    /* Control characters, bytes that are not UTF-8 and the C0 80 of an escaped NUL become U+FFFD. */
    jsonrpc_show(out, sizeof(out), "a\x01" "b\xff" "c\xc0\x80" "d\xc3\xa9");
    assert_string_equal(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd" "d\xc3\xa9");
    /* A long text is cut after JSONRPC_SHOW_MAX characters and says so. */
    longname = repeat("", "\xc3\xa9", 300, "");
    jsonrpc_show(out, sizeof(out), longname);
    assert_int_equal(strlen(out), JSONRPC_SHOW_MAX * 2 + 3);
    assert_string_equal(out + JSONRPC_SHOW_MAX * 2, "\xe2\x80\xa6");
    free(longname);
}

/* What cJSON allocated while the counting hooks were in, in glibc's heap chunks (the request and its
 * 8-byte header, rounded up to 16, at least 32 bytes). */
static size_t cjson_heap;

static size_t heap_chunk(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;

    return c < 32 ? 32 : c;
}

static void *counting_malloc(size_t n)
{
    cjson_heap += heap_chunk(n);
    return malloc(n);
}

/* The heap jsonrpc_parse uses for text, counted: cJSON's allocations, and the copy a text with \u0000
 * escapes gets. Fails the test when the text is refused. */
static size_t parse_heap(const char *text, size_t len)
{
    cJSON_Hooks counting = {.malloc_fn = counting_malloc, .free_fn = free}, plain = {0};
    cJSON *root;

    cjson_heap = 0;
    cJSON_InitHooks(&counting);
    root = jsonrpc_parse(text, len);
    cJSON_InitHooks(&plain);
    assert_non_null(root);
    cJSON_Delete(root);
    return cjson_heap + (memmem(text, len, "\\u0000", 6) != NULL ? heap_chunk(len) : 0);
}

/* Writes count copies of item, separated by commas, between open and close; returns the length. */
static size_t join_copies(char *dst, const char *open, const char *item, size_t count, const char *close)
{
    size_t n = strlen(open), k = strlen(item), i;

    memcpy(dst, open, n);
    for (i = 0; i < count; i++) {
        if (i > 0)
            dst[n++] = ',';
        memcpy(dst + n, item, k);
        n += k;
    }
    memcpy(dst + n, close, strlen(close) + 1);
    return n + strlen(close);
}

/* jsonrpc_parse_cost, which the connector reserves in its budget before a message is parsed, is at
 * least what parsing takes, for the shapes that cost most per byte of text: dense values, members
 * owning two strings, long strings, \u0000 escapes, deep nesting; at the values' limit and below. */
static void test_parse_cost_bounds_the_heap(void **state)
{
    static const struct {
        const char *open, *item, *close;
        size_t values; /* in one item */
    } shapes[] = {
        {"[", "0", "]", 1},
        {"[", "\"\"", "]", 1},
        {"{", "\"\":\"\"", "}", 1},
        {"{", "\"k\":{\"a\":[\"x\",1]}", "}", 4},
        {"[", "\"\\u0000\"", "]", 1},
        {"[", "\"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789\"", "]", 1},
    };
    static const size_t counts[] = {1, 100, 2000, 0}; /* 0: as many as the values' limit allows */
    char *text = malloc(2 << 20); /* the longest shape: 16,383 strings of 76 bytes */
    size_t i, j, len, used, worst = 0;

    (void)state;
    assert_non_null(text);
    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        for (j = 0; j < sizeof(counts) / sizeof(counts[0]); j++) {
            len = join_copies(text, shapes[i].open, shapes[i].item,
                              counts[j] ? counts[j] : (JSONRPC_VALUES_MAX - 1) / shapes[i].values, shapes[i].close);
            used = parse_heap(text, len);
            assert_true(used <= jsonrpc_parse_cost(len));
            if (used * 100 / jsonrpc_parse_cost(len) > worst)
                worst = used * 100 / jsonrpc_parse_cost(len);
        }
    /* The members owning two empty strings, at the values' limit, come close to the bound: it is not
     * loose by much either. */
    assert_true(worst >= 70);
    /* One long string, most of a megabyte: its copy out of the text. */
    text[0] = '"';
    memset(text + 1, 'a', (1 << 20) - 3);
    text[(1 << 20) - 2] = '"';
    assert_true(parse_heap(text, (1 << 20) - 1) <= jsonrpc_parse_cost((1 << 20) - 1));
    /* Thirty-one levels of nesting. */
    len = 0;
    for (i = 0; i < 31; i++)
        len += (size_t)sprintf(text + len, "{\"a\":");
    len += (size_t)sprintf(text + len, "0");
    for (i = 0; i < 31; i++)
        text[len++] = '}';
    assert_true(parse_heap(text, len) <= jsonrpc_parse_cost(len));
    free(text);
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
        cmocka_unit_test(test_parse_refuses_nul_and_trailing_bytes),
        cmocka_unit_test(test_parse_bounds_depth_and_values),
        cmocka_unit_test(test_ids_not_utf8_are_refused),
        cmocka_unit_test(test_client_text_is_shown_safely),
        cmocka_unit_test(test_parse_cost_bounds_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
