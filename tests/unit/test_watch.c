/* Unit tests for lib/kube/watch's pure parts: the bounded incremental line splitter, fed the same
 * stream in chunks of every awkward size, and the parsing of watch event lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kube/watch.h"

/* Three events as a server streams them, one of them containing an escaped newline inside a string. */
static const char STREAM[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"12\"},"
    "\"data\":{\"k\":\"line1\\nline2\"}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"15\"}}}\n";

struct collected {
    char lines[8][512];
    size_t n;
    int stop_after; /* return an error from the line with this index, or -1 */
};

static int collect(void *ud, const char *line, size_t len)
{
    struct collected *c = ud;

    assert_true(c->n < 8);
    assert_true(len < sizeof(c->lines[0]));
    memcpy(c->lines[c->n], line, len);
    c->lines[c->n][len] = '\0';
    c->n++;
    return (int)c->n - 1 == c->stop_after ? ZK_EPARSE : ZK_OK;
}

/* Feeds STREAM in chunks of size chunk and checks that exactly its three lines come out. */
static void feed_in_chunks(size_t chunk)
{
    struct collected c = {.stop_after = -1};
    struct watch_lines w;
    size_t len = strlen(STREAM), expect_len;
    const char *p = STREAM, *nl;

    watch_lines_init(&w, 1024, collect, &c);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;

        assert_int_equal(watch_lines_feed(&w, STREAM + off, n), ZK_OK);
    }
    assert_int_equal(c.n, 3);
    for (size_t i = 0; i < 3; i++) {
        nl = strchr(p, '\n');
        expect_len = (size_t)(nl - p);
        assert_int_equal(strlen(c.lines[i]), expect_len);
        assert_memory_equal(c.lines[i], p, expect_len);
        p = nl + 1;
    }
    /* Nothing is left pending after a newline-terminated stream. */
    assert_int_equal(w.pending.len, 0);
    watch_lines_free(&w);
}

static void test_chunk_of_one_byte(void **state)
{
    (void)state;
    feed_in_chunks(1);
}

static void test_chunk_of_seven_bytes(void **state)
{
    (void)state;
    feed_in_chunks(7);
}

static void test_whole_stream_at_once(void **state)
{
    (void)state;
    feed_in_chunks(sizeof(STREAM));
}

static void test_every_chunk_size(void **state)
{
    (void)state;
    for (size_t chunk = 2; chunk < sizeof(STREAM); chunk++)
        feed_in_chunks(chunk);
}

static void test_partial_line_waits_and_empty_lines_are_skipped(void **state)
{
    struct collected c = {.stop_after = -1};
    struct watch_lines w;

    (void)state;
    watch_lines_init(&w, 64, collect, &c);
    assert_int_equal(watch_lines_feed(&w, "\n\nabc", 5), ZK_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(w.pending.len, 3);
    assert_int_equal(watch_lines_feed(&w, "def\nxy", 6), ZK_OK);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.lines[0], "abcdef");
    assert_int_equal(w.pending.len, 2);
    watch_lines_free(&w);
}

static void test_callback_error_stops(void **state)
{
    struct collected c = {.stop_after = 0};
    struct watch_lines w;

    (void)state;
    watch_lines_init(&w, 64, collect, &c);
    assert_int_equal(watch_lines_feed(&w, "one\ntwo\n", 8), ZK_EPARSE);
    assert_int_equal(c.n, 1);
    watch_lines_free(&w);
}

static void test_overlong_line_is_bounded(void **state)
{
    struct collected c = {.stop_after = -1};
    struct watch_lines w;
    char chunk[100];
    int rc = ZK_OK;
    size_t fed = 0;

    (void)state;
    memset(chunk, 'x', sizeof(chunk));
    watch_lines_init(&w, 1000, collect, &c);
    /* A line that never ends: the splitter must refuse it once it passes the bound, and its memory must
     * never exceed the bound (plus the terminator) on the way there. */
    while (rc == ZK_OK && fed < 1000000) {
        rc = watch_lines_feed(&w, chunk, sizeof(chunk));
        fed += sizeof(chunk);
        assert_true(w.pending.cap <= 1001);
    }
    assert_int_equal(rc, ZK_ETOOBIG);
    assert_int_equal(fed, 1100);
    assert_null(w.pending.data); /* freed on failure */
    assert_int_equal(c.n, 0);

    /* The same for a too-long line that arrives complete in one chunk (the no-copy path). */
    {
        char big[1500];

        memset(big, 'y', sizeof(big));
        big[sizeof(big) - 1] = '\n';
        assert_int_equal(watch_lines_feed(&w, big, sizeof(big)), ZK_ETOOBIG);
        assert_int_equal(c.n, 0);
    }
    watch_lines_free(&w);
}

static int count_len(void *ud, const char *line, size_t len)
{
    (void)line;
    *(size_t *)ud = len;
    return ZK_OK;
}

static void test_line_of_exactly_the_bound(void **state)
{
    struct watch_lines w;
    size_t got = 0;
    char exact[1001];

    (void)state;
    memset(exact, 'z', 1000);
    exact[1000] = '\n';
    watch_lines_init(&w, 1000, count_len, &got);
    assert_int_equal(watch_lines_feed(&w, exact, 300), ZK_OK);
    assert_int_equal(watch_lines_feed(&w, exact + 300, 701), ZK_OK);
    assert_int_equal(got, 1000);
    got = 0;
    assert_int_equal(watch_lines_feed(&w, exact, sizeof(exact)), ZK_OK);
    assert_int_equal(got, 1000);
    watch_lines_free(&w);
}

static void test_parse_events(void **state)
{
    static const struct {
        const char *line;
        enum watch_kind kind;
        const char *rv;
    } cases[] = {
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"}}}",
         WATCH_KIND_ADDED, "7"},
        {"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"resourceVersion\":\"8\"}}}", WATCH_KIND_MODIFIED, "8"},
        {"{\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}},\"type\":\"DELETED\"}", WATCH_KIND_DELETED, "9"},
        {"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"12345\"}}}",
         WATCH_KIND_BOOKMARK, "12345"},
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"too old resource "
         "version: 1 (99)\",\"reason\":\"Expired\",\"code\":410}}",
         WATCH_KIND_ERROR, NULL},
    };
    struct watch_event ev;
    struct zk_err err;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(watch_event_parse(cases[i].line, strlen(cases[i].line), &ev, &err), ZK_OK);
        assert_int_equal(ev.kind, cases[i].kind);
        assert_non_null(ev.object);
        if (cases[i].rv)
            assert_string_equal(ev.resource_version, cases[i].rv);
        else
            assert_null(ev.resource_version);
        watch_event_free(&ev);
        assert_null(ev.root);
    }
    /* The object of an ERROR event is a Status the client can read. */
    assert_int_equal(watch_event_parse(cases[4].line, strlen(cases[4].line), &ev, &err), ZK_OK);
    assert_string_equal(cJSON_GetObjectItem(ev.object, "reason")->valuestring, "Expired");
    watch_event_free(&ev);
}

static void test_parse_rejects(void **state)
{
    static const char *bad[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}",       /* truncated JSON */
        "{\"type\":\"RENAMED\",\"object\":{}}",                    /* unknown type */
        "{\"type\":\"ADDED\"}",                                    /* no object */
        "{\"type\":\"ADDED\",\"object\":\"text\"}",                /* object of the wrong type */
        "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\"}", /* an error answer, not an event */
        "",
    };
    struct watch_event ev;
    struct zk_err err;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        zk_err_clear(&err);
        assert_int_equal(watch_event_parse(bad[i], strlen(bad[i]), &ev, &err), ZK_EPARSE);
        assert_null(ev.root);
        assert_int_equal(err.code, ZK_EPARSE);
        assert_true(err.msg[0] != '\0');
    }
    /* Parsing honours the length: the bytes after it are not part of the event. */
    {
        const char *two = "{\"type\":\"ADDED\",\"object\":{}}GARBAGE";

        assert_int_equal(watch_event_parse(two, 29, &ev, &err), ZK_OK);
        assert_int_equal(ev.kind, WATCH_KIND_ADDED);
        watch_event_free(&ev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_of_one_byte),
        cmocka_unit_test(test_chunk_of_seven_bytes),
        cmocka_unit_test(test_whole_stream_at_once),
        cmocka_unit_test(test_every_chunk_size),
        cmocka_unit_test(test_partial_line_waits_and_empty_lines_are_skipped),
        cmocka_unit_test(test_callback_error_stops),
        cmocka_unit_test(test_overlong_line_is_bounded),
        cmocka_unit_test(test_line_of_exactly_the_bound),
        cmocka_unit_test(test_parse_events),
        cmocka_unit_test(test_parse_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
