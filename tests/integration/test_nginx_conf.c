/* test_nginx_conf.c: the gateway's rendered nginx.conf against the real nginx. The configuration must
 * pass `nginx -t`, and nginx must run from it as an unprivileged user whose only writable directory is
 * the run directory (as in the pod: non-root, read-only root file system, an emptyDir for /tmp), and
 * answer /healthz itself, and close a client that trickles its request header at the header
 * timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "controller/corpus/render.h"
#include "tests/support/cmd.h"
#include "tests/support/fixture.h"
#include "tests/support/tmpdir.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct nx {
    char dir[TMPDIR_MAX];
    char conf[128];
    int port;
    uid_t uid; /* the user nginx runs as: nobody when the test runs as root */
    gid_t gid;
};

/* A port for nginx from scripts/free-port.sh, which the shell tests use too: a port the kernel hands
 * out for a bind to port 0 lies in the ephemeral range, where an outgoing connection can take it
 * before nginx binds. */
static int free_port(void)
{
    char cmd[600], line[32];

    snprintf(cmd, sizeof(cmd), "%s/scripts/free-port.sh", fixture_root());
    cmd_first_line(cmd, line, sizeof(line));
    assert_true(atoi(line) > 0);
    return atoi(line);
}

/* Renders nginx.conf for a corpus with or without a token Secret into a fresh run directory. */
static void setup_conf(struct nx *n, int with_tokens)
{
    char json[512];
    struct spec_errors errs;
    struct corpus_spec *spec = NULL;
    struct zk_err err = {0};
    struct passwd *pw = getuid() == 0 ? getpwnam("nobody") : NULL;
    cJSON *corpus;
    char *conf = NULL;
    FILE *f;

    n->port = free_port();
    n->uid = pw ? pw->pw_uid : getuid();
    n->gid = pw ? pw->pw_gid : getgid();
    assert_int_equal(tmpdir_make("zk-nginx", n->dir), 0);
    assert_int_equal(chown(n->dir, n->uid, n->gid), 0);
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"t\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{\"repositories\":"
             "[{\"url\":\"https://h/r\"}],\"gateway\":{\"port\":%d%s}}}",
             n->port, with_tokens ? ",\"tokenSecretRef\":{\"name\":\"tokens\"}" : "");
    corpus = cJSON_Parse(json);
    assert_int_equal(spec_parse(corpus, NULL, &spec, &errs), ZK_OK);
    assert_int_equal(render_nginx_conf(spec, n->dir, &conf, &err), ZK_OK);
    snprintf(n->conf, sizeof(n->conf), "%s/nginx.conf", n->dir);
    f = fopen(n->conf, "w");
    assert_non_null(f);
    fputs(conf, f);
    fclose(f);
    free(conf);
    spec_free(spec);
    cJSON_Delete(corpus);
}

static void cleanup_conf(struct nx *n)
{
    assert_int_equal(tmpdir_remove(n->dir), 0);
}

/* Runs nginx with the given arguments as the unprivileged user; returns the child's pid. */
static pid_t spawn_nginx(const struct nx *n, const char *const *extra)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[16] = {"nginx", "-e", "stderr", "-c", n->conf};
        int i = 5;

        for (; extra && *extra && i < 15; extra++)
            argv[i++] = *extra;
        argv[i] = NULL;
        char out[160];
        int fd;

        /* In the pod, nginx's stdout is the container runtime's pipe, which the container's user may
         * reopen as /dev/stdout (access_log); here it is a file that user owns. */
        snprintf(out, sizeof(out), "%s/stdout.log", n->dir);
        fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd < 0 || fchown(fd, n->uid, n->gid) != 0 || dup2(fd, 1) < 0)
            _exit(125);
        close(fd);
        if (getuid() == 0 && (setgroups(0, NULL) != 0 || setgid(n->gid) != 0 || setuid(n->uid) != 0))
            _exit(126);
        execvp("nginx", (char *const *)argv);
        execv("/usr/sbin/nginx", (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int wait_status(pid_t pid)
{
    int st = 0;

    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* GET path from 127.0.0.1:port; returns the HTTP status (0 when nothing answers) and the body. */
static int http_get(int port, const char *path, char *body, size_t len)
{
    struct sockaddr_in a;
    char req[256], resp[4096];
    size_t got = 0;
    ssize_t r;
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
    char *p;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
    if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
        close(fd);
        return 0;
    }
    while (got < sizeof(resp) - 1 && (r = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
        got += (size_t)r;
    resp[got] = '\0';
    close(fd);
    sscanf(resp, "HTTP/1.%*d %d", &status);
    p = strstr(resp, "\r\n\r\n");
    snprintf(body, len, "%s", p ? p + 4 : "");
    return status;
}

/* Starts nginx from n's configuration and waits (up to 5 s) until /healthz answers 200, whose body goes
 * to body. Returns nginx's pid. */
static pid_t start_nginx(const struct nx *n, char *body, size_t len)
{
    struct timespec pause = {0, 100 * 1000 * 1000};
    pid_t pid = spawn_nginx(n, NULL);
    int status = 0;

    for (int i = 0; i < 50 && status == 0; i++) {
        nanosleep(&pause, NULL);
        status = http_get(n->port, "/healthz", body, len);
    }
    assert_int_equal(status, 200);
    return pid;
}

static void test_config_passes_nginx_t(void **state)
{
    static const char *const test_flags[] = {"-t", "-q", NULL};
    struct nx n;
    int with_tokens;

    (void)state;
    for (with_tokens = 0; with_tokens <= 1; with_tokens++) {
        setup_conf(&n, with_tokens);
        assert_int_equal(wait_status(spawn_nginx(&n, test_flags)), 0);
        cleanup_conf(&n);
    }
}

static void test_nginx_serves_healthz(void **state)
{
    struct nx n;
    char body[256], pidfile[160];
    int status;
    pid_t pid;

    (void)state;
    setup_conf(&n, 1);
    pid = start_nginx(&n, body, sizeof(body));
    assert_string_equal(body, "ok\n");
    /* Everything else is proxied (behind auth_request): with no connector or webserver on the pod's
     * loopback ports here, nginx answers with an upstream error, never a page of its own. */
    status = http_get(n.port, "/api/list", body, sizeof(body));
    assert_true(status == 500 || status == 502);
    {
        char log[160], cmd[200];

        snprintf(log, sizeof(log), "%s/stdout.log", n.dir);
        snprintf(cmd, sizeof(cmd), "grep -q 'GET /api/list' '%s'", log);
        assert_int_equal(system(cmd), 0); /* the access log goes to stdout */
    }
    /* The pid file went to the run directory, which the unprivileged user owns. */
    snprintf(pidfile, sizeof(pidfile), "%s/nginx.pid", n.dir);
    assert_int_equal(access(pidfile, F_OK), 0);
    assert_int_equal(kill(pid, SIGQUIT), 0);
    assert_int_equal(wait_status(pid), 0);
    cleanup_conf(&n);
}

/* A client that sends its request header a byte a second is closed once the header timeout (10 s)
 * has passed, however steadily it sends, and other clients are answered meanwhile. With nginx's
 * default (60 s), 600 such clients kept a gateway of 512 connections refusing everyone else. */
static void test_slow_header_closed(void **state)
{
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    struct timespec start, now;
    struct sockaddr_in a;
    char body[64], c;
    struct nx n;
    size_t sent = 0;
    int fd, closed = 0;
    double secs = 0;
    pid_t pid;

    (void)state;
    setup_conf(&n, 0);
    pid = start_nginx(&n, body, sizeof(body));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)n.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!closed && secs < 20 && sent < sizeof(head) - 1) {
        if (send(fd, head + sent++, 1, MSG_NOSIGNAL) != 1)
            closed = 1;
        /* A closed connection reads as end of file (or a reset) at once; an open one times out. */
        struct timeval tv = {1, 0};
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
        if (!closed && recv(fd, &c, 1, 0) >= 0)
            closed = 1;
        else if (!closed && errno != EAGAIN && errno != EWOULDBLOCK)
            closed = 1;
        assert_int_equal(http_get(n.port, "/healthz", body, sizeof(body)), 200);
        clock_gettime(CLOCK_MONOTONIC, &now);
        secs = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
    }
    close(fd);
    assert_true(closed);
    assert_true(secs >= 9 && secs < 14);
    assert_int_equal(kill(pid, SIGQUIT), 0);
    assert_int_equal(wait_status(pid), 0);
    cleanup_conf(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_passes_nginx_t),
        cmocka_unit_test(test_nginx_serves_healthz),
        cmocka_unit_test(test_slow_header_closed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
