/* Unit tests for connector/auth: token file and Secret-directory formats, header parsing, reloading
 * after a change, and refusing to start with no usable token. Works in a fresh temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connector/auth.h"
#include "err.h"
#include "tests/support/tmpdir.h"

struct fixture {
    char dir[TMPDIR_MAX];
    char file[128];
    char secret[128];
};

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));

    if (!fx || tmpdir_make("test_auth", fx->dir) != 0) {
        free(fx);
        return -1;
    }
    snprintf(fx->file, sizeof(fx->file), "%s/tokens", fx->dir);
    snprintf(fx->secret, sizeof(fx->secret), "%s/secret", fx->dir);
    mkdir(fx->secret, 0700);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    int rc = tmpdir_remove(fx->dir);

    free(fx);
    return rc;
}

static void test_bearer_parsing(void **state)
{
    size_t len = 0;
    const char *t;

    (void)state;
    t = auth_bearer_token("Bearer abc", &len);
    assert_non_null(t);
    assert_int_equal(len, 3);
    assert_memory_equal(t, "abc", 3);
    t = auth_bearer_token("  bearer   xyz  ", &len);
    assert_non_null(t);
    assert_int_equal(len, 3);
    assert_memory_equal(t, "xyz", 3);
    assert_null(auth_bearer_token("Basic abc", &len));
    assert_null(auth_bearer_token("Bearer", &len));
    assert_null(auth_bearer_token("Bearer   ", &len));
    assert_null(auth_bearer_token("Bearerabc", &len));
    assert_null(auth_bearer_token(NULL, &len));
}

static void test_disabled_accepts_everything(void **state)
{
    struct auth *a = (void *)1;
    struct zk_err err;

    (void)state;
    assert_int_equal(auth_new(NULL, NULL, 0, &a, &err), ZK_OK);
    assert_null(a);
    assert_false(auth_enabled(a));
    assert_true(auth_check_header(a, NULL));
}

static void test_token_file(void **state)
{
    struct fixture *fx = *state;
    struct auth *a = NULL;
    struct zk_err err;

    write_file(fx->file, "# comment\n\n  first-token  \r\nsecond\n#not-a-token\n");
    assert_int_equal(auth_new(fx->file, NULL, 1000, &a, &err), ZK_OK);
    assert_true(auth_enabled(a));
    assert_true(auth_check_header(a, "Bearer first-token"));
    assert_true(auth_check_header(a, "Bearer second"));
    assert_false(auth_check_header(a, "Bearer #not-a-token"));
    assert_false(auth_check_header(a, "Bearer first"));
    assert_false(auth_check_header(a, "Bearer first-token-x"));
    assert_false(auth_check_header(a, NULL));
    assert_false(auth_check_header(a, "Basic Zmlyc3QtdG9rZW4="));
    auth_free(a);
}

static void test_secret_directory(void **state)
{
    struct fixture *fx = *state;
    char path[256];
    struct auth *a = NULL;
    struct zk_err err;

    snprintf(path, sizeof(path), "%s/token", fx->secret);
    write_file(path, "dir-token\n");
    snprintf(path, sizeof(path), "%s/..data", fx->secret);
    write_file(path, "hidden-token\n"); /* a Secret volume's bookkeeping, never a token */
    assert_int_equal(auth_new(NULL, fx->secret, 1000, &a, &err), ZK_OK);
    assert_true(auth_check_header(a, "Bearer dir-token"));
    assert_false(auth_check_header(a, "Bearer hidden-token"));
    auth_free(a);
}

static void test_reload_after_change(void **state)
{
    struct fixture *fx = *state;
    struct auth *a = NULL;
    struct zk_err err;

    write_file(fx->file, "old\n");
    assert_int_equal(auth_new(fx->file, NULL, 0, &a, &err), ZK_OK);
    assert_true(auth_check_header(a, "Bearer old"));
    /* A different size is a change even if the modification time has the same tick. */
    write_file(fx->file, "rotated\n");
    assert_true(auth_check_header(a, "Bearer rotated"));
    assert_false(auth_check_header(a, "Bearer old"));
    /* A source that breaks keeps the tokens already loaded. */
    unlink(fx->file);
    assert_true(auth_check_header(a, "Bearer rotated"));
    auth_free(a);
}

/* The first token, kept only when asked for, follows a rotation; one past the buffer is not handed out. */
static void test_gateway_token(void **state)
{
    struct fixture *fx = *state;
    struct auth *a = NULL;
    struct zk_err err;
    char tok[16];

    write_file(fx->file, "# gateway\nfirst\nsecond\n");
    assert_int_equal(auth_new(fx->file, NULL, 0, &a, &err), ZK_OK);
    assert_int_equal(auth_gateway_token(a, tok, sizeof(tok)), 0);
    assert_int_equal(auth_keep_gateway_token(a, &err), ZK_OK);
    assert_int_equal(auth_gateway_token(a, tok, sizeof(tok)), 1);
    assert_string_equal(tok, "first");
    write_file(fx->file, "rotated-first\nsecond\n");
    assert_int_equal(auth_gateway_token(a, tok, sizeof(tok)), 1);
    assert_string_equal(tok, "rotated-first");
    assert_true(auth_check_header(a, "Bearer second"));
    write_file(fx->file, "a-token-longer-than-sixteen\n");
    assert_int_equal(auth_gateway_token(a, tok, sizeof(tok)), 0);
    assert_int_equal(auth_gateway_token(NULL, tok, sizeof(tok)), 0);
    auth_free(a);
}

static void test_no_token_is_an_error(void **state)
{
    struct fixture *fx = *state;
    struct auth *a = NULL;
    struct zk_err err;
    char missing[200];

    write_file(fx->file, "# only comments\n\n");
    assert_int_equal(auth_new(fx->file, NULL, 0, &a, &err), ZK_EINVAL);
    assert_null(a);
    assert_non_null(strstr(err.msg, fx->file));
    snprintf(missing, sizeof(missing), "%s/absent", fx->dir);
    assert_int_equal(auth_new(missing, NULL, 0, &a, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "absent"));
    assert_int_equal(auth_new(NULL, fx->secret, 0, &a, &err), ZK_EINVAL); /* empty directory */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bearer_parsing),
        cmocka_unit_test(test_disabled_accepts_everything),
        cmocka_unit_test_setup_teardown(test_token_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gateway_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_after_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_token_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
