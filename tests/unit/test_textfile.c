/* Unit tests for lib/textfile: which lines of a small file are values, and reading the first one from
 * a file (written into a fresh folder under /tmp), however long it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/tmpdir.h"
#include "textfile.h"

static void test_value_lines(void **state)
{
    static const char text[] = "# tokens for the gateway\n\n  alpha  \r\n\t# indented comment\nbeta gamma\n   \ndelta";
    static const char *const want[] = {"alpha", "beta gamma", "delta"};
    const char *line;
    size_t pos = 0, n, i = 0;

    (void)state;
    while (textfile_next_line(text, strlen(text), &pos, &line, &n)) {
        assert_true(i < 3);
        assert_int_equal(n, strlen(want[i]));
        assert_memory_equal(line, want[i], n);
        i++;
    }
    assert_int_equal(i, 3);
    assert_int_equal(pos, strlen(text));
    assert_false(textfile_next_line("", 0, &pos, &line, &n));
}

static void test_first_line_of_a_file(void **state)
{
    const struct tmpdir *t = *state;
    size_t n = 40000;
    char *big = malloc(n + 3), *out;
    struct zk_err err;

    assert_non_null(big);
    assert_int_equal(textfile_first_line(tmpdir_write(t->dir, "ns", "\n  team-a \n", 0600), 64, &out, &err), ZK_OK);
    assert_string_equal(out, "team-a");
    free(out);
    assert_int_equal(textfile_first_line(tmpdir_write(t->dir, "blank", "# nothing\n\n", 0600), 64, &out, &err), ZK_OK);
    assert_string_equal(out, "");
    free(out);
    /* A token longer than any line buffer comes back whole. */
    memset(big, 'x', n);
    strcpy(big + n, "\n\n");
    assert_int_equal(textfile_first_line(tmpdir_write(t->dir, "big", big, 0600), 64 * 1024, &out, &err), ZK_OK);
    assert_int_equal(strlen(out), n);
    free(out);
    assert_int_equal(textfile_first_line(tmpdir_write(t->dir, "big", big, 0600), 1024, &out, &err), ZK_ETOOBIG);
    assert_null(out);
    assert_int_equal(textfile_first_line("/nonexistent/token", 1024, &out, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/token"));
    assert_null(out);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_lines),
        cmocka_unit_test_setup_teardown(test_first_line_of_a_file, tmpdir_setup, tmpdir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
