/* Unit tests for lib/buf: the bound is enforced exactly, and a failed append frees and empties. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

static void test_append_up_to_the_bound(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 8);
    assert_int_equal(buf_puts(&b, "abcd"), ZK_OK);
    assert_int_equal(buf_puts(&b, "efgh"), ZK_OK);
    assert_int_equal(b.len, 8);
    assert_string_equal(b.data, "abcdefgh");
    buf_free(&b);
}

static void test_append_past_the_bound_frees(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 8);
    assert_int_equal(buf_puts(&b, "abcdefg"), ZK_OK);
    assert_int_equal(buf_puts(&b, "hi"), ZK_ETOOBIG);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    /* Still usable with the same bound. */
    assert_int_equal(buf_puts(&b, "ok"), ZK_OK);
    assert_string_equal(b.data, "ok");
    buf_free(&b);
}

static void test_huge_length_does_not_overflow(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 16);
    assert_int_equal(buf_puts(&b, "x"), ZK_OK);
    assert_int_equal(buf_append(&b, "y", SIZE_MAX), ZK_ETOOBIG);
    buf_free(&b);
}

static void test_printf_consume_steal(void **state)
{
    struct buf b;
    char *s;

    (void)state;
    buf_init(&b, 1024);
    assert_int_equal(buf_printf(&b, "%s=%d;", "a", 42), ZK_OK);
    assert_int_equal(buf_printf(&b, "%s", "tail"), ZK_OK);
    assert_string_equal(b.data, "a=42;tail");
    buf_consume(&b, 5);
    assert_string_equal(b.data, "tail");
    s = buf_steal(&b);
    assert_string_equal(s, "tail");
    assert_null(b.data);
    free(s);
    s = buf_steal(&b);
    assert_string_equal(s, "");
    free(s);
}

static void test_printf_past_the_bound(void **state)
{
    struct buf b;

    (void)state;
    buf_init(&b, 4);
    assert_int_equal(buf_printf(&b, "%d", 123456), ZK_ETOOBIG);
    assert_null(b.data);
}

/* Text that fits the free room is written there in one pass; text that does not grows the buffer;
 * either way the bound holds to the byte. */
static void test_printf_in_the_room_and_past_it(void **state)
{
    char big[600];
    struct buf b;

    (void)state;
    buf_init(&b, 8);
    assert_int_equal(buf_puts(&b, "abc"), ZK_OK);
    assert_int_equal(buf_printf(&b, "%s", "defgh"), ZK_OK); /* exactly up to the bound */
    assert_string_equal(b.data, "abcdefgh");
    assert_int_equal(buf_printf(&b, "%c", 'x'), ZK_ETOOBIG);
    assert_null(b.data);

    buf_init(&b, 4096);
    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(buf_printf(&b, "%d:", 7), ZK_OK);
    assert_int_equal(buf_printf(&b, "%s", big), ZK_OK); /* more than the first allocation */
    assert_int_equal(buf_printf(&b, "%s", "!"), ZK_OK);
    assert_int_equal(b.len, 2 + strlen(big) + 1);
    assert_memory_equal(b.data, "7:yy", 4);
    assert_string_equal(b.data + b.len - 2, "y!");
    buf_free(&b);
}

static void test_put_int_as_printf(void **state)
{
    static const long long v[] = {0, 7, -1, 10, -10, 123456789012345LL, 9223372036854775807LL,
                                  -9223372036854775807LL - 1};
    char want[32];
    struct buf b;

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        buf_init(&b, 64);
        snprintf(want, sizeof(want), "%lld", v[i]);
        assert_int_equal(buf_put_int(&b, v[i]), ZK_OK);
        assert_string_equal(b.data, want);
        buf_free(&b);
    }
    buf_init(&b, 2);
    assert_int_equal(buf_put_int(&b, 123), ZK_ETOOBIG);
    assert_null(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_up_to_the_bound),
        cmocka_unit_test(test_append_past_the_bound_frees),
        cmocka_unit_test(test_huge_length_does_not_overflow),
        cmocka_unit_test(test_printf_consume_steal),
        cmocka_unit_test(test_printf_past_the_bound),
        cmocka_unit_test(test_printf_in_the_room_and_past_it),
        cmocka_unit_test(test_put_int_as_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
