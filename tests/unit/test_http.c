/* Unit tests for lib/http: the error taxonomy and message of a refused connection (loopback port 1,
 * where nothing listens), the request checks made before any I/O, and the headers sent, as a one-shot
 * loopback server in a thread receives them, and that a pool keeps its connection; the text of a
 * Warning header, and how many of them a response keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "http.h"

static int setup(void **state)
{
    (void)state;
    /* As both programs do: a test server answering a client that has hung up gets EPIPE, not a signal
     * that ends the test. */
    signal(SIGPIPE, SIG_IGN);
    return http_global_init();
}

static int teardown(void **state)
{
    (void)state;
    http_global_cleanup();
    return 0;
}

static void refused(struct zk_err *err)
{
    struct http_request req = {.method = "GET", .url = "http://127.0.0.1:1/index-status", .timeout_ms = 2000,
                               .max_body = 1024};
    struct http_response resp;

    zk_err_clear(err);
    assert_int_equal(http_do(&req, &resp, err), ZK_ECONNECT);
    http_response_free(&resp);
}

static void test_refused_connection_message_is_stable(void **state)
{
    struct zk_err a, b;

    (void)state;
    refused(&a);
    refused(&b);
    /* The message names what was tried... */
    assert_non_null(strstr(a.msg, "GET http://127.0.0.1:1/index-status: "));
    /* ...and carries nothing that changes between attempts (curl's elapsed time), because such messages
     * end up in status conditions, where they must not cause a write on every resync. */
    assert_null(strstr(a.msg, " ms"));
    assert_string_equal(a.msg, b.msg);
}

static void test_a_body_bound_is_required(void **state)
{
    struct http_request req = {.method = "GET", .url = "http://127.0.0.1:1/", .timeout_ms = 1000};
    struct http_response resp;
    struct zk_err err;

    (void)state;
    assert_int_equal(http_do(&req, &resp, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "no response size limit"));
    http_response_free(&resp);
}

/* A server for one request on a loopback port: it answers with the bearer token it received, so a test
 * sees exactly what went over the wire. */
struct echo_server {
    int fd;
    int port;
    pthread_t thread;
};

static void *echo_token(void *arg)
{
    static char request[256 * 1024];
    struct echo_server *s = arg;
    const char *token = "", *end;
    char head[128];
    size_t len = 0;
    ssize_t n;
    int conn = accept(s->fd, NULL, NULL);

    if (conn < 0)
        return NULL;
    while (len < sizeof(request) - 1 && (n = read(conn, request + len, sizeof(request) - 1 - len)) > 0) {
        len += (size_t)n;
        request[len] = '\0';
        if (strstr(request, "\r\n\r\n"))
            break;
    }
    if ((token = strstr(request, "\r\nAuthorization: Bearer ")) != NULL) {
        token += strlen("\r\nAuthorization: Bearer ");
        end = strstr(token, "\r\n");
        len = end ? (size_t)(end - token) : strlen(token);
    } else {
        token = "";
        len = 0;
    }
    snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", len);
    if (write(conn, head, strlen(head)) < 0 || write(conn, token, len) < 0)
        fprintf(stderr, "echo server: write failed\n");
    close(conn);
    return NULL;
}

static void echo_start_with(struct echo_server *s, void *(*serve)(void *))
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);

    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->fd, 1), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void echo_stop(struct echo_server *s)
{
    pthread_join(s->thread, NULL);
    close(s->fd);
}

/* Bearer tokens from OIDC providers (group claims) and exec plugins can be tens of kilobytes; the kube
 * client accepts 64 KiB. Such a token must reach the server whole, not cut to some header buffer. */
static void test_a_long_bearer_token_is_sent_whole(void **state)
{
    size_t n = 40000;
    char *token = malloc(n + 1), url[64];
    struct echo_server s;
    struct http_request req = {.method = "GET", .timeout_ms = 5000, .max_body = 2 * n};
    struct http_response resp;
    struct zk_err err;

    (void)state;
    assert_non_null(token);
    for (size_t i = 0; i < n; i++)
        token[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i % 36];
    token[n] = '\0';
    echo_start_with(&s, echo_token);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
    req.url = url;
    req.bearer_token = token;
    assert_int_equal(http_do(&req, &resp, &err), ZK_OK);
    echo_stop(&s);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.body.len, n);
    assert_memory_equal(resp.body.data, token, n);
    http_response_free(&resp);
    free(token);
}

/* Reads a request's head (up to its blank line, or 4 KiB) from conn, for servers that answer whatever
 * was asked. */
static void read_request_head(int conn)
{
    char request[4096];
    size_t len = 0;
    ssize_t n;

    request[0] = '\0';
    while (!strstr(request, "\r\n\r\n") && len < sizeof(request) - 1 &&
           (n = read(conn, request + len, sizeof(request) - 1 - len)) > 0) {
        len += (size_t)n;
        request[len] = '\0';
    }
}

/* A server that accepts one connection only and answers three requests on it, each with its ordinal:
 * a client that opened a second connection would get no answer. */
static void *keepalive_three(void *arg)
{
    struct echo_server *s = arg;
    char head[128];
    int conn = accept(s->fd, NULL, NULL);

    if (conn < 0)
        return NULL;
    for (int i = 1; i <= 3; i++) {
        read_request_head(conn);
        snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n%d", i);
        if (write(conn, head, strlen(head)) < 0)
            break;
    }
    close(conn);
    return NULL;
}

/* Requests through a pool share one connection, from one request to the next. */
static void test_a_pool_reuses_its_connection(void **state)
{
    struct echo_server s;
    struct http_pool *pool = NULL;
    struct http_request req = {.method = "GET", .timeout_ms = 5000, .max_body = 64};
    struct http_response resp;
    struct zk_err err;
    char url[64], want[2];

    (void)state;
    pool = http_pool_new(4);
    echo_start_with(&s, keepalive_three);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
    req.url = url;
    req.pool = pool;
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(http_do(&req, &resp, &err), ZK_OK);
        assert_int_equal(resp.status, 200);
        snprintf(want, sizeof(want), "%d", i);
        assert_int_equal(resp.body.len, 1);
        assert_memory_equal(resp.body.data, want, 1);
        http_response_free(&resp);
    }
    echo_stop(&s);
    http_pool_free(pool);
}

/* A pool asked to keep no idle connection closes each one after its request: the second request needs
 * a new connection, which the one-connection server never accepts. */
static void test_a_pool_keeps_at_most_max_idle(void **state)
{
    struct echo_server s;
    struct http_pool *pool = NULL;
    struct http_request req = {.method = "GET", .timeout_ms = 5000, .max_body = 64};
    struct http_response resp;
    struct zk_err err;
    char url[64];

    (void)state;
    pool = http_pool_new(0);
    echo_start_with(&s, keepalive_three);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
    req.url = url;
    req.pool = pool;
    assert_int_equal(http_do(&req, &resp, &err), ZK_OK);
    assert_int_equal(resp.status, 200);
    http_response_free(&resp);
    req.timeout_ms = 300;
    assert_int_not_equal(http_do(&req, &resp, &err), ZK_OK);
    http_response_free(&resp);
    echo_stop(&s);
    http_pool_free(pool);
}

/* The text of a Warning header value, NUL-terminated for the test, into a buffer of size bytes. */
static int warning(const char *value, char *out, size_t size)
{
    return http_warning_text(value, strlen(value), out, size);
}

/* What the API server sends: 299, agent "-", the text quoted with backslash escapes. */
static void test_warning_text_of_the_api_server(void **state)
{
    char out[HTTP_WARNING_MAX + 1];

    (void)state;
    assert_int_equal(warning("299 - \"unknown field \\\"spec.foo\\\"\"", out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "unknown field \"spec.foo\"");
    /* As lib/http sees the value: after the header's colon, with its line end. */
    assert_int_equal(warning(" 299 - \"spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14\"\r\n",
                             out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14");
    /* A warn-date after the text, another agent, and a backslash escaping itself. */
    assert_int_equal(warning("199 proxy.example:8080 \"a\\\\b\" \"Sat, 01 Jan 2000 00:00:00 GMT\"", out, sizeof(out)),
                     ZK_OK);
    assert_string_equal(out, "a\\b");
    /* An unterminated quote keeps what there is. */
    assert_int_equal(warning("299 - \"cut short", out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "cut short");
}

/* A value not in RFC 7234's form was still meant to be read: it is its own text. */
static void test_warning_text_without_quotes(void **state)
{
    char out[HTTP_WARNING_MAX + 1];

    (void)state;
    assert_int_equal(warning(" 299 - deprecated API in use\r\n", out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "299 - deprecated API in use");
    assert_int_equal(warning("plain words", out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "plain words");
}

/* An over-long text is cut at the bound, never inside a UTF-8 sequence. */
static void test_warning_text_is_bounded(void **state)
{
    char value[3 * HTTP_WARNING_MAX], out[HTTP_WARNING_MAX + 1];
    size_t n = (size_t)snprintf(value, sizeof(value), "299 - \"");

    (void)state;
    memset(value + n, 'w', 2 * HTTP_WARNING_MAX);
    snprintf(value + n + 2 * HTTP_WARNING_MAX, sizeof(value) - n - 2 * HTTP_WARNING_MAX, "\"");
    assert_int_equal(warning(value, out, sizeof(out)), ZK_OK);
    assert_int_equal(strlen(out), HTTP_WARNING_MAX);
    assert_int_equal(strspn(out, "w"), HTTP_WARNING_MAX);

    /* "ab" then "é" (two bytes) in a buffer with room for three: the "é" goes whole. */
    assert_int_equal(warning("299 - \"ab\xc3\xa9\"", out, 4), ZK_OK);
    assert_string_equal(out, "ab");
    assert_int_equal(warning("299 - \"ab\xc3\xa9\"", out, 5), ZK_OK);
    assert_string_equal(out, "ab\xc3\xa9");
}

/* Garbage yields no text, or a text without control characters. */
static void test_warning_text_of_garbage(void **state)
{
    char out[HTTP_WARNING_MAX + 1];

    (void)state;
    assert_int_equal(warning("", out, sizeof(out)), ZK_EPARSE);
    assert_string_equal(out, "");
    assert_int_equal(warning(" \t\r\n", out, sizeof(out)), ZK_EPARSE);
    assert_int_equal(warning("\x01\x02\x7f", out, sizeof(out)), ZK_EPARSE);
    assert_int_equal(warning("299 - \"\"", out, sizeof(out)), ZK_EPARSE);
    assert_int_equal(warning("299 - \"  \"", out, sizeof(out)), ZK_EPARSE);
    assert_int_equal(warning("299 - \"a\nb\x1b[31mc\"", out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "a b [31mc");
    /* Not the form (a code of two digits): the whole value, a NUL in it made a space. */
    assert_int_equal(http_warning_text("29 - \"x\"\0y", 10, out, sizeof(out)), ZK_OK);
    assert_string_equal(out, "29 - \"x\" y");
}

/* A server that answers one request with a Warning header per line of warnings_sent. */
static const char *const warnings_sent[] = {
    "299 - \"first\"", "299 - \"first\"", "299 - \"second\"", "not in the form", "299 - \"\"",
    "299 - \"3\"", "299 - \"4\"", "299 - \"5\"", "299 - \"6\"", "299 - \"7\"", "299 - \"8\"", "299 - \"9\"",
};

static void *answer_with_warnings(void *arg)
{
    struct echo_server *s = arg;
    char head[2048];
    size_t used;
    int conn = accept(s->fd, NULL, NULL);

    if (conn < 0)
        return NULL;
    read_request_head(conn);
    used = (size_t)snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n");
    for (size_t i = 0; i < sizeof(warnings_sent) / sizeof(warnings_sent[0]); i++)
        used += (size_t)snprintf(head + used, sizeof(head) - used, "%s: %s\r\n", i % 2 ? "warning" : "Warning",
                                 warnings_sent[i]);
    snprintf(head + used, sizeof(head) - used, "\r\n{}");
    if (write(conn, head, strlen(head)) < 0)
        fprintf(stderr, "warning server: write failed\n");
    close(conn);
    return NULL;
}

/* A response keeps the texts of its Warning headers (any case), each once, the first HTTP_MAX_WARNINGS
 * of them only, and gives them back on http_response_free. */
static void test_warnings_are_kept_within_the_bound(void **state)
{
    static const char *const want[] = {"first", "second", "not in the form", "3", "4", "5", "6", "7"};
    struct echo_server s;
    struct http_request req = {.method = "GET", .timeout_ms = 5000, .max_body = 64};
    struct http_response resp;
    struct zk_err err;
    char url[64];

    (void)state;
    assert_int_equal(HTTP_MAX_WARNINGS, sizeof(want) / sizeof(want[0]));
    echo_start_with(&s, answer_with_warnings);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
    req.url = url;
    assert_int_equal(http_do(&req, &resp, &err), ZK_OK);
    echo_stop(&s);
    assert_int_equal(resp.status, 200);
    assert_int_equal(resp.nwarnings, HTTP_MAX_WARNINGS);
    for (int i = 0; i < HTTP_MAX_WARNINGS; i++)
        assert_string_equal(resp.warnings[i], want[i]);
    http_response_free(&resp);
    assert_int_equal(resp.nwarnings, 0);
    assert_null(resp.warnings[0]);
}

static void test_escape(void **state)
{
    char *e = http_escape("app=zoekt,tier!=web x/y");

    (void)state;
    assert_string_equal(e, "app%3Dzoekt%2Ctier%21%3Dweb%20x%2Fy");
    free(e);
}

/* A server that answers each of three requests on its connections with a body of 4000 bytes. */
static void *answer_4000(void *arg)
{
    struct echo_server *s = arg;
    static char body[4000];
    char head[128];

    memset(body, 'x', sizeof(body));
    snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", sizeof(body));
    for (int i = 0; i < 3; i++) {
        int conn = accept(s->fd, NULL, NULL);

        if (conn < 0)
            return NULL;
        read_request_head(conn);
        if (write(conn, head, strlen(head)) < 0 || write(conn, body, sizeof(body)) < 0)
            fprintf(stderr, "answer_4000: write failed\n");
        close(conn);
    }
    return NULL;
}

/* A shared budget: a body that fits is held against it until http_response_free; one that needs more
 * than the whole budget is too large (not worth retrying); one that fits alone but not beside what
 * others hold is ZK_EBUSY, worth retrying, and nothing it took stays reserved. */
static void test_a_budget_bounds_the_bodies_held_at_once(void **state)
{
    struct budget budget = {.limit = 4000 * HTTP_BUDGET_FACTOR + 100};
    struct http_request req = {.method = "GET", .timeout_ms = 5000, .max_body = 1 << 20, .budget = &budget};
    struct http_response held, resp;
    struct echo_server s;
    struct zk_err err;
    char url[64];

    (void)state;
    echo_start_with(&s, answer_4000);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
    req.url = url;
    assert_int_equal(http_do(&req, &held, &err), ZK_OK);
    assert_int_equal(held.body.len, 4000);
    assert_true(atomic_load(&budget.used) >= 4000 * HTTP_BUDGET_FACTOR);
    /* The second body finds the budget taken by the first. */
    assert_int_equal(http_do(&req, &resp, &err), ZK_EBUSY);
    assert_non_null(strstr(err.msg, "for now"));
    http_response_free(&resp);
    http_response_free(&held);
    assert_int_equal(atomic_load(&budget.used), 0);
    /* A budget smaller than one body: that body can never be had. */
    budget.limit = 4000;
    assert_int_equal(http_do(&req, &resp, &err), ZK_ETOOBIG);
    http_response_free(&resp);
    assert_int_equal(atomic_load(&budget.used), 0);
    echo_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_connection_message_is_stable),
        cmocka_unit_test(test_a_body_bound_is_required),
        cmocka_unit_test(test_a_long_bearer_token_is_sent_whole),
        cmocka_unit_test(test_a_pool_reuses_its_connection),
        cmocka_unit_test(test_a_pool_keeps_at_most_max_idle),
        cmocka_unit_test(test_warning_text_of_the_api_server),
        cmocka_unit_test(test_warning_text_without_quotes),
        cmocka_unit_test(test_warning_text_is_bounded),
        cmocka_unit_test(test_warning_text_of_garbage),
        cmocka_unit_test(test_warnings_are_kept_within_the_bound),
        cmocka_unit_test(test_a_budget_bounds_the_bodies_held_at_once),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
