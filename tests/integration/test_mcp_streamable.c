/* Integration tests for connector/mcp/streamable: what a Streamable HTTP client sees when the server
 * cannot create its session.
 *
 * This program is linked with -Wl,--wrap=pthread_mutex_init (see the Makefile), so that a test can make
 * mcp_session_new's mutex fail the way it does when the process runs out of resources, which cannot be
 * arranged otherwise. The connector's policy for that is lib/mem.h's: the process ends with one "out of
 * memory" record, and its Deployment restarts it, rather than limping on. The server therefore runs in
 * a child process, and the test reads its fate from the outside, as a client and as the kubelet would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "connector/front.h"
#include "connector/mcp/streamable.h"
#include "http.h"
#include "mem.h"

int __real_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);

/* While set, every mutex the connector's code creates fails to initialise. Set by the server child's
 * main thread, read by its connection threads. */
static atomic_int fail_mutex_init;

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    return atomic_load(&fail_mutex_init) ? 11 /* EAGAIN */ : __real_pthread_mutex_init(m, a);
}

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

/* POSTs an initialize to the server's /mcp. Returns http_do's result; *status gets the HTTP status (0
 * when none came) and body the answer's start. */
static int post_initialize(int port, long *status, char *body, size_t size)
{
    struct http_request req = {0};
    struct http_response resp;
    struct zk_err err = {0};
    char url[64];
    int rc;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/mcp", port);
    req.method = "POST";
    req.url = url;
    req.content_type = "application/json";
    req.accept = "application/json, text/event-stream";
    req.body = init_body;
    req.body_len = strlen(init_body);
    req.timeout_ms = 10000;
    req.max_body = 65536;
    rc = http_do(&req, &resp, &err);
    *status = resp.status;
    snprintf(body, size, "%s", resp.body.data ? resp.body.data : "");
    http_response_free(&resp);
    return rc;
}

/* The server child: serves /mcp, reports its port on to_parent, and makes mutex creation fail once the
 * parent writes a byte on from_parent (acknowledged with a byte back). Never returns. */
static _Noreturn void serve_child(int to_parent, int from_parent, int log_fd)
{
    struct connector_config cfg = {.zoekt_url = "http://127.0.0.1:9", .output_budget = 16384};
    struct mcp_streamable_opts o = {.cfg = &cfg, .server_version = "test"};
    struct front_opts fo = {.cfg = &cfg, .listen = "127.0.0.1:0", .nroutes = 1};
    struct front_route route;
    struct mcp_streamable *h = NULL;
    struct front *f = NULL;
    struct zk_err err = {0};
    int port;
    char go;

    mem_setup();
    dup2(log_fd, STDERR_FILENO);
    if (mcp_streamable_new(&o, &h, &err) != ZK_OK)
        _exit(10);
    route = mcp_streamable_route(h);
    fo.routes = &route;
    if (front_start(&fo, &f, &err) != ZK_OK)
        _exit(11);
    port = front_port(f);
    if (write(to_parent, &port, sizeof(port)) != (ssize_t)sizeof(port) || read(from_parent, &go, 1) != 1)
        _exit(12);
    atomic_store(&fail_mutex_init, 1);
    if (write(to_parent, &go, 1) != 1)
        _exit(13);
    for (;;)
        pause();
}

static void test_session_creation_failure_ends_the_process(void **state)
{
    int up[2], down[2], logs[2], port = 0, wstatus;
    char body[512], log_text[4096] = "", go = 1;
    ssize_t n, got = 0;
    long status;
    pid_t pid;

    (void)state;
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    assert_int_equal(pipe(logs), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        serve_child(up[1], down[0], logs[1]);
    close(up[1]);
    close(down[0]);
    close(logs[1]);
    assert_int_equal(read(up[0], &port, sizeof(port)), sizeof(port));
    assert_int_equal(http_global_init(), ZK_OK);

    /* Before the failure the server works: the failure below is what ends it. */
    assert_int_equal(post_initialize(port, &status, body, sizeof(body)), ZK_OK);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "\"protocolVersion\":\"2025-06-18\""));

    /* The next session's mutex cannot be made: the client gets no answer, not a half-made session. */
    assert_int_equal(write(down[1], &go, 1), 1);
    assert_int_equal(read(up[0], &go, 1), 1);
    assert_int_not_equal(post_initialize(port, &status, body, sizeof(body)), ZK_OK);
    assert_int_equal(status, 0);

    /* The process ended as lib/mem.h says, with the one record that tells why. */
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFSIGNALED(wstatus));
    assert_int_equal(WTERMSIG(wstatus), SIGABRT);
    while (got < (ssize_t)sizeof(log_text) - 1 && (n = read(logs[0], log_text + got, sizeof(log_text) - 1 - got)) > 0)
        got += n;
    log_text[got] = '\0';
    if (!strstr(log_text, "\"msg\":\"out of memory\""))
        fail_msg("no out-of-memory record in the server's log:\n%s", log_text);

    close(up[0]);
    close(down[1]);
    close(logs[0]);
    http_global_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_creation_failure_ends_the_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
