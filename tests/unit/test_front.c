/* Unit tests for connector/front: the routing of the connector's HTTP front door, over loopback.
 *
 * tools_index_status is replaced by a fake defined here (the linker takes it and never pulls the real
 * one from libconn.a), so /index-status needs no Zoekt; a route handed in stands for the MCP transport
 * and records what the front gave it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/front.h"
#include "connector/metrics.h"
#include "connector/tools/tools.h"
#include "http.h"
#include "mem.h"
#include "monotime.h"
#include "tests/support/tmpdir.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- fakes --------------------------------------------------------------------------------- */

/* What the fake tools_index_status answers: ZK_OK with a small document, or this error code. */
static int index_status_rc;
/* What the last call was asked. */
static struct index_status_opts index_status_asked;

int tools_index_status(const struct connector_config *cfg, const struct index_status_opts *o, char **json_out,
                       struct zk_err *err)
{
    (void)cfg;
    index_status_asked = *o;
    *json_out = NULL;
    if (index_status_rc != ZK_OK)
        return zk_err_set(err, index_status_rc, "fake index status failure");
    *json_out = mem_strdup("{\"repositories\":3}");
    return ZK_OK;
}

/* The route handed to the front, standing in for /mcp. */
struct fake_route {
    int gated;  /* how many requests reached the gate */
    int served; /* how many reached serve */
    size_t len; /* the last body's length */
    int too_big;
    int cancelled;
    size_t answer_len; /* 0: serve answers with the method; else with this many bytes */
    int answer_client; /* serve answers with front_client_address instead */
};

static int fake_gate(void *ctx, struct MHD_Connection *c)
{
    struct fake_route *fr = ctx;

    fr->gated++;
    if (front_header(c, MHD_HTTP_HEADER_AUTHORIZATION) != NULL)
        return front_respond(c, MHD_HTTP_FORBIDDEN, "text/plain", "gated\n", NULL);
    return FRONT_GO_ON;
}

static enum MHD_Result fake_serve(void *ctx, struct MHD_Connection *c, const char *method,
                                  const struct front_body *body)
{
    struct fake_route *fr = ctx;

    fr->served++;
    fr->len = body->len;
    fr->too_big = body->too_big;
    if (fr->answer_client) {
        char client[FRONT_CLIENT_MAX];

        front_client_address(c, client, sizeof(client));
        return front_respond(c, MHD_HTTP_OK, "text/plain", client, NULL);
    }
    if (fr->answer_len > 0) {
        char *answer = malloc(fr->answer_len + 1);
        enum MHD_Result ret;

        assert_non_null(answer);
        memset(answer, 'x', fr->answer_len);
        answer[fr->answer_len] = '\0';
        ret = front_respond(c, MHD_HTTP_OK, "text/plain", answer, NULL);
        free(answer);
        return ret;
    }
    return front_respond(c, MHD_HTTP_OK, "text/plain", method, NULL);
}

/* The route's parse of a body costs a quarter of it more. */
static size_t fake_parse_cost(size_t len)
{
    return len / 4;
}

static void fake_cancel(void *ctx)
{
    ((struct fake_route *)ctx)->cancelled++;
}

/* ---- helpers ------------------------------------------------------------------------------- */

struct fx {
    char dir[TMPDIR_MAX];
    struct connector_config cfg;
    struct auth *auth;
    struct fake_route fr;
    struct budget budget; /* cfg.request_budget */
    struct front *f;
};

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));
    struct front_route route = {
        .path = "/r", .gate = fake_gate, .serve = fake_serve, .parse_cost = fake_parse_cost, .cancel = fake_cancel};
    struct front_opts o = {.listen = "127.0.0.1:0", .routes = &route, .nroutes = 1, .request_deadline_s = 2};
    struct zk_err err = {0};

    if (fx == NULL || tmpdir_make("test_front", fx->dir) != 0 || http_global_init() != ZK_OK)
        return -1;
    if (auth_new(tmpdir_write(fx->dir, "tokens", "secret\n", 0600), NULL, AUTH_RELOAD_SECONDS, &fx->auth, &err) !=
        ZK_OK)
        return -1;
    route.ctx = &fx->fr;
    fx->budget.limit = 64u << 20;
    fx->cfg.request_budget = &fx->budget;
    o.cfg = &fx->cfg;
    o.auth = fx->auth;
    if (front_start(&o, &fx->f, &err) != ZK_OK)
        return -1;
    index_status_rc = ZK_OK;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    int rc;

    front_stop(fx->f);
    auth_free(fx->auth);
    http_global_cleanup();
    rc = tmpdir_remove(fx->dir);
    free(fx);
    return rc;
}

/* Sends METHOD path to the front f with an optional bearer token and body; returns the status and
 * copies the start of the answer's body into out. */
static long call_front(struct front *f, const char *method, const char *path, const char *token, const char *body,
                       size_t body_len, char *out, size_t size)
{
    struct http_request req = {0};
    struct http_response resp;
    struct zk_err err = {0};
    char url[96];
    long status;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", front_port(f), path);
    req.method = method;
    req.url = url;
    req.accept = "*/*";
    req.bearer_token = token;
    req.body = body;
    req.body_len = body_len;
    req.content_type = body != NULL ? "text/plain" : NULL;
    req.timeout_ms = 10000;
    req.max_body = 65536;
    if (http_do(&req, &resp, &err) != ZK_OK)
        fail_msg("%s %s: %s", method, url, err.msg);
    status = resp.status;
    snprintf(out, size, "%s", resp.body.data ? resp.body.data : "");
    http_response_free(&resp);
    return status;
}

/* call_front to the fixture's front. */
static long call(struct fx *fx, const char *method, const char *path, const char *token, const char *body,
                 size_t body_len, char *out, size_t size)
{
    return call_front(fx->f, method, path, token, body, body_len, out, size);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_auth_endpoint(void **state)
{
    struct fx *fx = *state;
    char body[256];

    /* Empty answers: nginx keeps the connection of an auth_request check only when it has no body. */
    assert_int_equal(call(fx, "GET", "/auth", "secret", NULL, 0, body, sizeof(body)), 200);
    assert_string_equal(body, "");
    assert_int_equal(call(fx, "GET", "/auth", NULL, NULL, 0, body, sizeof(body)), 401);
    assert_string_equal(body, "");
    assert_int_equal(call(fx, "GET", "/auth", "wrong", NULL, 0, body, sizeof(body)), 401);
    assert_string_equal(body, "");
    /* nginx's subrequest carries the guarded request's method, so /auth answers any. */
    assert_int_equal(call(fx, "POST", "/auth", "secret", "x", 1, body, sizeof(body)), 200);
}

static void test_index_status(void **state)
{
    struct fx *fx = *state;
    char body[256];

    assert_int_equal(call(fx, "GET", "/index-status", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_string_equal(body, "{\"repositories\":3}");
    assert_int_equal(index_status_asked.max_age_seconds, 0);
    assert_int_equal(index_status_asked.all, 0);

    /* The operator passes the corpus's maxAge, and its token: names go only to a caller with one,
     * since tokens are configured here. Without, the judgement is made and only counted. */
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=36h", "secret", NULL, 0, body, sizeof(body)), 200);
    assert_int_equal(index_status_asked.max_age_seconds, 36 * 3600);
    assert_int_equal(index_status_asked.anonymous, 0);
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=36h", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_int_equal(index_status_asked.anonymous, 1);
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=36h", "guess", NULL, 0, body, sizeof(body)), 200);
    assert_int_equal(index_status_asked.anonymous, 1);
    /* repositories=all asks for every name: refused without a token, before Zoekt is asked. */
    memset(&index_status_asked, 0, sizeof(index_status_asked));
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=129600s&repositories=all", NULL, NULL, 0, body,
                          sizeof(body)), 401);
    assert_non_null(strstr(body, "needs a valid bearer token"));
    assert_int_equal(index_status_asked.max_age_seconds, 0);
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=129600s&repositories=all", "secret", NULL, 0, body,
                          sizeof(body)), 200);
    assert_int_equal(index_status_asked.max_age_seconds, 129600);
    assert_int_equal(index_status_asked.all, 1);
    assert_int_equal(index_status_asked.anonymous, 0);
    /* A bad value is refused, saying what is expected, and asks Zoekt nothing. */
    memset(&index_status_asked, 0, sizeof(index_status_asked));
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=soon", NULL, NULL, 0, body, sizeof(body)), 400);
    assert_non_null(strstr(body, "maxAge must be a duration"));
    assert_int_equal(call(fx, "GET", "/index-status?maxAge=1500ms", NULL, NULL, 0, body, sizeof(body)), 400);
    assert_int_equal(call(fx, "GET", "/index-status?repositories=stale", NULL, NULL, 0, body, sizeof(body)), 400);
    assert_non_null(strstr(body, "repositories takes one value: all"));
    assert_int_equal(index_status_asked.max_age_seconds, 0);

    /* Zoekt out of reach: unavailable for now, and worth retrying. */
    index_status_rc = ZK_ECONNECT;
    assert_int_equal(call(fx, "GET", "/index-status", NULL, NULL, 0, body, sizeof(body)), 503);
    assert_non_null(strstr(body, "\"error\":\"fake index status failure\""));
    assert_non_null(strstr(body, "\"retryable\":true"));

    /* A broken answer from Zoekt: a bad gateway, not worth retrying. */
    index_status_rc = ZK_EPARSE;
    assert_int_equal(call(fx, "GET", "/index-status", NULL, NULL, 0, body, sizeof(body)), 502);
    assert_non_null(strstr(body, "\"retryable\":false"));
}

static void test_healthz_unknown_and_methods(void **state)
{
    struct fx *fx = *state;
    char body[256];

    assert_int_equal(call(fx, "GET", "/healthz", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_string_equal(body, "ok\n");
    assert_int_equal(call(fx, "GET", "/nowhere", NULL, NULL, 0, body, sizeof(body)), 404);
    assert_int_equal(call(fx, "POST", "/healthz", NULL, "x", 1, body, sizeof(body)), 405);
    assert_int_equal(call(fx, "DELETE", "/index-status", NULL, NULL, 0, body, sizeof(body)), 405);
    assert_int_equal(call(fx, "POST", "/nowhere", NULL, "x", 1, body, sizeof(body)), 405);
    assert_int_equal(fx->fr.gated + fx->fr.served, 0);
}

/* /metrics on the front agents use, and a metrics_only front (--metrics-listen) that serves nothing
 * else: no route, none of the front's other paths. */
static void test_metrics(void **state)
{
    struct fx *fx = *state;
    struct front_route route = {.path = "/r", .ctx = &fx->fr, .gate = fake_gate, .serve = fake_serve};
    struct front_opts o = {.cfg = &fx->cfg, .auth = fx->auth, .listen = "127.0.0.1:0", .routes = &route,
                           .nroutes = 1, .metrics_only = 1};
    struct front *mf = NULL;
    struct zk_err err = {0};
    char body[4096];

    assert_int_equal(call(fx, "GET", "/metrics", NULL, NULL, 0, body, sizeof(body)), 404);
    assert_string_equal(body, "no metrics are kept\n");
    fx->cfg.metrics = cmetrics_new(0);
    assert_int_equal(call(fx, "GET", "/metrics", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_non_null(strstr(body, "# TYPE zoekt_connector_build_info gauge\n"));
    assert_int_equal(call(fx, "POST", "/metrics", NULL, "x", 1, body, sizeof(body)), 405);

    assert_int_equal(front_start(&o, &mf, &err), ZK_OK);
    assert_int_equal(call_front(mf, "GET", "/metrics", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_non_null(strstr(body, "zoekt_connector_tool_calls_total{tool=\"search_code\"} 0\n"));
    assert_int_equal(call_front(mf, "GET", "/r", "secret", NULL, 0, body, sizeof(body)), 404);
    assert_int_equal(call_front(mf, "POST", "/r", "secret", "{}", 2, body, sizeof(body)), 404);
    assert_int_equal(call_front(mf, "GET", "/auth", "secret", NULL, 0, body, sizeof(body)), 404);
    assert_int_equal(call_front(mf, "GET", "/index-status", NULL, NULL, 0, body, sizeof(body)), 404);
    assert_int_equal(call_front(mf, "GET", "/healthz", NULL, NULL, 0, body, sizeof(body)), 404);
    assert_int_equal(fx->fr.gated + fx->fr.served, 0);
    front_stop(mf);
    assert_int_equal(fx->fr.cancelled, 0); /* it had no route to cancel */
    cmetrics_free(fx->cfg.metrics);
    fx->cfg.metrics = NULL;
}

static void test_route_gets_method_and_body(void **state)
{
    struct fx *fx = *state;
    char body[256];

    assert_int_equal(call(fx, "POST", "/r", NULL, "hello", 5, body, sizeof(body)), 200);
    assert_string_equal(body, "POST");
    assert_int_equal(fx->fr.len, 5);
    assert_false(fx->fr.too_big);
    /* Every method reaches a handed-in route. */
    assert_int_equal(call(fx, "DELETE", "/r", NULL, NULL, 0, body, sizeof(body)), 200);
    assert_string_equal(body, "DELETE");
    assert_int_equal(fx->fr.gated, 2);
    assert_int_equal(fx->fr.served, 2);
}

static void test_route_gate_refuses_before_serve(void **state)
{
    struct fx *fx = *state;
    char body[256];

    assert_int_equal(call(fx, "POST", "/r", "anything", "hello", 5, body, sizeof(body)), 403);
    assert_string_equal(body, "gated\n");
    assert_int_equal(fx->fr.gated, 1);
    assert_int_equal(fx->fr.served, 0);
}

static void test_route_body_bounded(void **state)
{
    struct fx *fx = *state;
    size_t n = FRONT_BODY_MAX + 1;
    char *big = malloc(n), body[256];

    assert_non_null(big);
    memset(big, 'a', n);
    assert_int_equal(call(fx, "POST", "/r", NULL, big, n, body, sizeof(body)), 200);
    assert_true(fx->fr.too_big);
    assert_int_equal(fx->fr.len, 0);
    free(big);
}

static void test_stop_cancels_routes(void **state)
{
    struct fx *fx = *state;

    front_stop(fx->f);
    fx->f = NULL;
    assert_int_equal(fx->fr.cancelled, 1);
}

static void test_start_refuses_bad_listen(void **state)
{
    struct connector_config cfg = {0};
    struct front_opts o = {.cfg = &cfg, .listen = "8081"};
    struct front *f = (struct front *)&cfg;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(front_start(&o, &f, &err), ZK_EINVAL);
    assert_null(f);
    assert_non_null(strstr(err.msg, "expected host:port"));
}

/* A connected TCP socket to the front. */
static int raw_connect(struct fx *fx)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)front_port(fx->f))};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* A client that sends its headers a byte at a time, never quite silent, is closed once the deadline
 * for a complete request (2 s here) has passed, while other clients are served meanwhile: the slot it
 * held is free again. Before, only silence counted, and such a client kept its slot for ever. */
static void test_slow_client_closed_at_deadline(void **state)
{
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    struct fx *fx = *state;
    char body[64], buf[256];
    double start = monotime_s();
    size_t sent = 0;
    int fd = raw_connect(fx), closed = 0;

    while (!closed && monotime_s() - start < 8 && sent < sizeof(head) - 1) {
        if (send(fd, head + sent, 1, MSG_NOSIGNAL) != 1) {
            closed = 1;
            break;
        }
        sent++;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) == 1 && recv(fd, buf, sizeof(buf), 0) <= 0)
            closed = 1;
        assert_int_equal(call(fx, "GET", "/healthz", NULL, NULL, 0, body, sizeof(body)), 200);
    }
    assert_true(closed);
    /* Closed at the deadline: after 2 s, well before the 8 s the test would wait. */
    assert_true(monotime_s() - start >= 1.9);
    assert_true(monotime_s() - start < 5);
    close(fd);
}

/* HTTP/1.1 without Host is refused, as RFC 9112 asks; with it, served. */
static void test_host_required(void **state)
{
    static const char bare[] = "GET /healthz HTTP/1.1\r\n\r\n", hosted[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    struct fx *fx = *state;
    char buf[512] = {0};
    int fd = raw_connect(fx);
    ssize_t n;

    assert_int_equal(send(fd, bare, sizeof(bare) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(bare) - 1);
    n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n > 12);
    assert_memory_equal(buf, "HTTP/1.1 400", 12);
    close(fd);
    fd = raw_connect(fx);
    memset(buf, 0, sizeof(buf));
    assert_int_equal(send(fd, hosted, sizeof(hosted) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(hosted) - 1);
    n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n > 12);
    assert_memory_equal(buf, "HTTP/1.1 200", 12);
    close(fd);
}

/* Waits up to 5 s for the budget's count to satisfy at_least (1: >= n, 0: == n). */
static void wait_budget(struct fx *fx, size_t n, int at_least)
{
    double end = monotime_s() + 5;
    size_t used;

    while ((used = atomic_load(&fx->budget.used), at_least ? used < n : used != n) && monotime_s() < end)
        usleep(10000);
    if (at_least ? used < n : used != n)
        fail_msg("the budget holds %zu bytes; expected %s %zu", used, at_least ? "at least" : "exactly", n);
}

/* Reads from fd until the peer closes it or the answer's headers and len bytes of body are in. */
static void read_answer(int fd, size_t len)
{
    static char buf[1 << 16];
    size_t got = 0, head = 0;
    ssize_t n;
    char *end;

    while ((n = recv(fd, buf + (head == 0 ? got : 0), head == 0 ? sizeof(buf) - 1 - got : sizeof(buf), 0)) > 0) {
        got += (size_t)n;
        if (head == 0) {
            buf[got] = '\0';
            if ((end = strstr(buf, "\r\n\r\n")) == NULL)
                continue;
            assert_memory_equal(buf, "HTTP/1.1 200", 12);
            head = (size_t)(end + 4 - buf);
        }
        if (got - head >= len)
            return;
    }
    fail_msg("the connection ended after %zu bytes", got);
}

/* Bodies being read count in the process's budget: while one client holds most of it with a body still
 * arriving, another's body that does not fit beside it gets 503 with Retry-After at once and never
 * reaches the route; once the first is answered, the same request fits, and everything held is given
 * back. Before, nothing bounded what 128 connections' bodies held together. */
static void test_bodies_held_at_once_are_bounded(void **state)
{
    static char body[40000];
    struct fx *fx = *state;
    char head[128], out[256];
    int fd = raw_connect(fx), served, n;
    size_t first;

    fx->budget.limit = 120000;
    memset(body, 'b', sizeof(body));
    n = snprintf(head, sizeof(head), "POST /r HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", sizeof(body));
    assert_int_equal(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
    assert_int_equal(send(fd, body, 30000, MSG_NOSIGNAL), 30000);
    wait_budget(fx, 60000, 1); /* twice what has arrived, and a little slack */
    first = atomic_load(&fx->budget.used);
    served = fx->fr.served;
    assert_int_equal(call(fx, "POST", "/r", NULL, body, sizeof(body), out, sizeof(out)), 503);
    assert_non_null(strstr(out, "retry in a second"));
    assert_int_equal(fx->fr.served, served);
    /* What the refused request held goes once its answer is sent, which may be just after the client
     * has it. */
    wait_budget(fx, first, 0);
    /* The first body completes and is answered; what it held goes once the answer is sent. */
    assert_int_equal(send(fd, body + 30000, sizeof(body) - 30000, MSG_NOSIGNAL), (ssize_t)(sizeof(body) - 30000));
    read_answer(fd, 4);
    assert_int_equal(fx->fr.len, sizeof(body));
    wait_budget(fx, 0, 0);
    /* Alone, the second fits: 90,000 for its body (twice its length and an eighth), 10,000 for its
     * parse, 4 for the answer. */
    assert_int_equal(call(fx, "POST", "/r", NULL, body, sizeof(body), out, sizeof(out)), 200);
    wait_budget(fx, 0, 0);
    close(fd);
}

/* An answer counts until the client has read it: a client that asks for 6 MiB and does not read holds
 * them, and another's answer that does not fit beside it is a 503 instead; once the first has read its
 * answer, the budget is empty again. */
static void test_answer_counts_until_read(void **state)
{
    static const char get[] = "GET /r HTTP/1.1\r\nHost: x\r\n\r\n";
    struct fx *fx = *state;
    char out[256];
    int fd = raw_connect(fx);

    fx->budget.limit = 8u << 20;
    fx->fr.answer_len = 6u << 20;
    assert_int_equal(send(fd, get, sizeof(get) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(get) - 1);
    wait_budget(fx, 6u << 20, 1);
    assert_int_equal(call(fx, "GET", "/r", NULL, NULL, 0, out, sizeof(out)), 503);
    read_answer(fd, 6u << 20);
    close(fd);
    wait_budget(fx, 0, 0);
    fx->fr.answer_len = 1000;
    assert_int_equal(call(fx, "GET", "/r", NULL, NULL, 0, out, sizeof(out)), 200);
}

/* Sends GET /r with the given X-Forwarded-For header (NULL: none) and returns the address the route
 * was told the client has. */
static const char *client_seen(struct fx *fx, const char *forwarded)
{
    static char out[256];
    char req[512], *body;
    int fd = raw_connect(fx), n;
    ssize_t got = 0, k;

    n = snprintf(req, sizeof(req), "GET /r HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s%s%s\r\n",
                 forwarded ? "X-Forwarded-For: " : "", forwarded ? forwarded : "", forwarded ? "\r\n" : "");
    assert_int_equal(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    while ((k = recv(fd, out + got, sizeof(out) - 1 - (size_t)got, 0)) > 0)
        got += k;
    close(fd);
    out[got] = '\0';
    body = strstr(out, "\r\n\r\n");
    assert_non_null(body);
    return body + 4;
}

/* The client of a request is the peer, or, from the loopback (the gateway's nginx), the last address
 * nginx appended to X-Forwarded-For; what a client wrote before it, and anything that is not an
 * address, is not believed. */
static void test_client_address(void **state)
{
    struct fx *fx = *state;

    fx->fr.answer_client = 1;
    assert_string_equal(client_seen(fx, NULL), "127.0.0.1");
    assert_string_equal(client_seen(fx, "198.51.100.7"), "198.51.100.7");
    assert_string_equal(client_seen(fx, "10.0.0.1, 198.51.100.7"), "198.51.100.7");
    assert_string_equal(client_seen(fx, "10.0.0.1,2001:db8::1 "), "2001:db8::1");
    assert_string_equal(client_seen(fx, "198.51.100.7, <script>"), "127.0.0.1");
    assert_string_equal(client_seen(fx, "198.51.100.7, "), "127.0.0.1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_auth_endpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_healthz_unknown_and_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_route_gets_method_and_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_route_gate_refuses_before_serve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_route_body_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_cancels_routes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_client_closed_at_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_required, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bodies_held_at_once_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_counts_until_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_address, setup, teardown),
        cmocka_unit_test(test_start_refuses_bad_listen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
