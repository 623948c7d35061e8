/* Unit tests for lib/err: the one table of codes gives every code its own message and one answer to
 * "does retrying help", and the message helpers keep the code and cut long text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "err.h"

static const int all_codes[] = {
#define CODE(name, value, message, retryable) ZK_##name,
    ZK_ERRNO_MAP(CODE)
#undef CODE
};
#define NCODES (sizeof(all_codes) / sizeof(all_codes[0]))

static void test_every_code_has_its_own_value_and_message(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCODES; i++) {
        assert_true(all_codes[i] < 0);
        assert_string_not_equal(zk_strerror(all_codes[i]), "unknown error");
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(all_codes[i], all_codes[j]);
            assert_string_not_equal(zk_strerror(all_codes[i]), zk_strerror(all_codes[j]));
        }
    }
    assert_string_equal(zk_strerror(ZK_OK), "ok");
    assert_string_equal(zk_strerror(-999), "unknown error");
}

/* The Kubernetes client's code is in the table too, so its failures are named in messages. */
static void test_the_api_code_is_known(void **state)
{
    (void)state;
    assert_string_equal(zk_strerror(ZK_EAPI), "Kubernetes API error");
}

/* A server that was unreachable, slow, cut the connection or failed on its own (5xx) may do better
 * later; bad input, a refusal, a malformed answer or a full buffer will not change by waiting. */
static void test_retryable_codes(void **state)
{
    (void)state;
    assert_true(zk_err_retryable(ZK_ECONNECT));
    assert_true(zk_err_retryable(ZK_ETIMEOUT));
    assert_true(zk_err_retryable(ZK_ETRANSPORT));
    assert_true(zk_err_retryable(ZK_ESERVER));
    assert_false(zk_err_retryable(ZK_OK));
    assert_false(zk_err_retryable(ZK_EINVAL));
    assert_false(zk_err_retryable(ZK_ETOOBIG));
    assert_false(zk_err_retryable(ZK_EHTTP));
    assert_false(zk_err_retryable(ZK_EPARSE));
    assert_false(zk_err_retryable(ZK_ECANCELLED));
    assert_false(zk_err_retryable(ZK_EAPI));
    assert_false(zk_err_retryable(-999));
    for (size_t i = 0; i < NCODES; i++)
        assert_string_equal(zk_err_retry_advice(all_codes[i]),
                            zk_err_retryable(all_codes[i]) ? "retrying may help" : "retrying will not help");
}

static void test_set_and_prefix_keep_the_code(void **state)
{
    struct zk_err err;
    char long_text[2 * ZK_ERR_MSG_MAX];

    (void)state;
    assert_int_equal(zk_err_set(&err, ZK_EIO, "open %s", "/x"), ZK_EIO);
    assert_int_equal(zk_err_prefix(&err, "reading the token"), ZK_EIO);
    assert_string_equal(err.msg, "reading the token: open /x");
    memset(long_text, 'a', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    zk_err_set(&err, ZK_EINVAL, "%s", long_text);
    assert_int_equal(strlen(err.msg), ZK_ERR_MSG_MAX - 1);
    zk_err_clear(&err);
    assert_int_equal(err.code, ZK_OK);
    assert_string_equal(err.msg, "");
    assert_int_equal(zk_err_set(NULL, ZK_ETIMEOUT, "x"), ZK_ETIMEOUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_its_own_value_and_message),
        cmocka_unit_test(test_the_api_code_is_known),
        cmocka_unit_test(test_retryable_codes),
        cmocka_unit_test(test_set_and_prefix_keep_the_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
