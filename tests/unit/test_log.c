/* Unit tests for lib/log: whatever the strings hold and however long they are, a record is one line of
 * valid JSON of at most PIPE_BUF bytes, with the keys after a long value still in it. Each test reads
 * what log_write put on stderr through a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "log.h"

/* What one capture read: every record written while it ran. */
struct capture {
    char text[64 * 1024];
    size_t len;
    int pipe_fd[2];
    int saved_stderr;
};

static void capture_start(struct capture *c)
{
    assert_int_equal(pipe(c->pipe_fd), 0);
    c->saved_stderr = dup(STDERR_FILENO);
    assert_true(c->saved_stderr >= 0);
    assert_true(dup2(c->pipe_fd[1], STDERR_FILENO) >= 0);
    close(c->pipe_fd[1]);
}

/* Restores stderr and reads what was written (the pipe holds 64 KB, more than a test writes). */
static void capture_stop(struct capture *c)
{
    ssize_t n;

    assert_true(dup2(c->saved_stderr, STDERR_FILENO) >= 0);
    close(c->saved_stderr);
    c->len = 0;
    while ((n = read(c->pipe_fd[0], c->text + c->len, sizeof(c->text) - 1 - c->len)) > 0)
        c->len += (size_t)n;
    close(c->pipe_fd[0]);
    c->text[c->len] = '\0';
}

/* The one record captured: checks that it is a single line of at most PIPE_BUF bytes that parses as a
 * JSON object with the fixed members, and returns it parsed (the caller frees it). */
static cJSON *only_record(const struct capture *c)
{
    cJSON *rec;

    assert_true(c->len > 0);
    assert_true(c->len <= PIPE_BUF);
    assert_int_equal(c->text[c->len - 1], '\n');
    assert_ptr_equal(memchr(c->text, '\n', c->len), c->text + c->len - 1);
    rec = cJSON_ParseWithLength(c->text, c->len - 1);
    if (!rec)
        fail_msg("not JSON: %s", c->text);
    assert_true(cJSON_IsObject(rec));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "ts")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "level")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "logger")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rec, "msg")));
    return rec;
}

static const char *member(const cJSON *rec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, key);

    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* A 9 KB value used to push the record past the old 8 KB buffer, which then started again empty and
 * printed `xxxx…","k3":"tail"}`: not JSON, and the record's start lost. */
static void test_a_long_value_is_cut_and_the_record_stays_json(void **state)
{
    static char big[9 * 1024 + 1];
    struct capture c;
    const char *v;
    cJSON *rec;

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    capture_start(&c);
    log_info("Applied object", "k1", "first", "k2", big, "k3", "tail", NULL);
    capture_stop(&c);
    rec = only_record(&c);
    assert_string_equal(member(rec, "level"), "info");
    assert_string_equal(member(rec, "msg"), "Applied object");
    assert_string_equal(member(rec, "k1"), "first");
    assert_string_equal(member(rec, "k3"), "tail");
    v = member(rec, "k2");
    /* Cut, marked as cut, and what is kept is the value's start. */
    assert_true(strlen(v) > 512 && strlen(v) < 1024);
    assert_string_equal(v + strlen(v) - 3, "\xe2\x80\xa6");
    assert_int_equal(strspn(v, "x"), strlen(v) - 3);
    cJSON_Delete(rec);
}

/* Quotes, backslashes and control characters are escaped; bytes that are not UTF-8 become U+FFFD, so
 * the line is valid JSON text; well-formed UTF-8 is kept as it is. */
static void test_strings_are_escaped_and_made_valid_utf8(void **state)
{
    struct capture c;
    cJSON *rec;

    (void)state;
    capture_start(&c);
    log_warn("say \"hi\"\n", "path", "C:\\dir\ttab\x01\x1f end", "bytes", "ok \xff\xfe caf\xc3\xa9 cut \xc3", NULL);
    capture_stop(&c);
    assert_non_null(strstr(c.text, "\\u0001"));
    assert_non_null(strstr(c.text, "\\\"hi\\\"\\n"));
    assert_null(memchr(c.text, '\xff', c.len));
    rec = only_record(&c);
    assert_string_equal(member(rec, "level"), "warn");
    assert_string_equal(member(rec, "msg"), "say \"hi\"\n");
    assert_string_equal(member(rec, "path"), "C:\\dir\ttab\x01\x1f end");
    assert_string_equal(member(rec, "bytes"), "ok \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9 cut \xef\xbf\xbd");
    cJSON_Delete(rec);
}

/* However many long pairs a record is given, it ends within PIPE_BUF, so that a write to a pipe stays
 * whole; the pairs left out are marked, and those kept come first. */
static void test_a_record_never_passes_pipe_buf(void **state)
{
    static char kb[1500], quotes[3000];
    struct capture c;
    cJSON *rec;

    (void)state;
    memset(kb, 'y', sizeof(kb) - 1);
    memset(quotes, '"', sizeof(quotes) - 1); /* each escapes to two bytes */
    capture_start(&c);
    log_error(quotes, "a", kb, "b", kb, "c", kb, "d", kb, "e", kb, "f", kb, NULL);
    capture_stop(&c);
    rec = only_record(&c);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(rec, "a"));
    assert_null(cJSON_GetObjectItemCaseSensitive(rec, "f"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "truncated")));
    assert_string_equal(member(rec, "msg") + strlen(member(rec, "msg")) - 3, "\xe2\x80\xa6");
    cJSON_Delete(rec);
}

static void test_a_null_value_is_json_null(void **state)
{
    struct capture c;
    cJSON *rec;

    (void)state;
    capture_start(&c);
    log_info("m", "gone", NULL, NULL);
    capture_stop(&c);
    rec = only_record(&c);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(rec, "gone")));
    assert_null(cJSON_GetObjectItemCaseSensitive(rec, "truncated"));
    cJSON_Delete(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_long_value_is_cut_and_the_record_stays_json),
        cmocka_unit_test(test_strings_are_escaped_and_made_valid_utf8),
        cmocka_unit_test(test_a_record_never_passes_pipe_buf),
        cmocka_unit_test(test_a_null_value_is_json_null),
    };
    log_setup("test_log", LOG_DEBUG);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
