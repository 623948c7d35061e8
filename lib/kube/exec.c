/* exec.c: see exec.h.
 *
 * The plugin is started with posix_spawn, not fork: both programs are multi-threaded, and a forked
 * child of a threaded process may only call async-signal-safe functions before exec. Its output is read
 * through pipes with poll, so that a plugin that hangs (a login prompt nobody can answer, a network
 * call that never returns) is killed at the deadline instead of blocking every API request. */
#include "kube/exec.h"

#include "buf.h"
#include "json.h"
#include "mem.h"
#include "rfc3339.h"
#include "monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* How much of the plugin's stderr is kept for an error message. */
#define KEXEC_STDERR_KEEP 2048

void kube_exec_cred_free(struct kube_exec_cred *c)
{
    if (c->token)
        memset(c->token, 0, strlen(c->token));
    free(c->token);
    memset(c, 0, sizeof(*c));
}

static void strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* A deep copy of the NULL-terminated v (NULL gives NULL). */
static char **strv_dup(char *const *v)
{
    size_t n = 0;
    char **d;

    if (!v)
        return NULL;
    while (v[n])
        n++;
    d = mem_calloc(n + 1, sizeof(*d));
    for (size_t i = 0; i < n; i++)
        d[i] = mem_strdup(v[i]);
    return d;
}

void kube_exec_free(struct kube_exec *x)
{
    if (!x)
        return;
    strv_free(x->argv);
    strv_free(x->env);
    free(x->api_version);
    free(x->install_hint);
    free(x);
}

struct kube_exec *kube_exec_copy(const struct kube_exec *src)
{
    struct kube_exec *x;

    if (!src)
        return NULL;
    x = mem_calloc(1, sizeof(*x));
    x->argv = strv_dup(src->argv);
    x->env = strv_dup(src->env);
    x->api_version = src->api_version ? mem_strdup(src->api_version) : NULL;
    x->install_hint = src->install_hint ? mem_strdup(src->install_hint) : NULL;
    return x;
}

int kube_exec_parse(const char *output, size_t len, const char *api_version, struct kube_exec_cred *out,
                    struct zk_err *err)
{
    cJSON *doc = json_parse(output, len);
    const cJSON *status;
    const char *kind, *version, *token, *expiry;
    int rc = ZK_OK;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(doc)) {
        rc = zk_err_set(err, ZK_EPARSE, "its output is not a JSON object (an ExecCredential was expected)");
        goto out;
    }
    kind = json_str(doc, "kind", "");
    version = json_str(doc, "apiVersion", "");
    if (strcmp(kind, "ExecCredential") != 0) {
        rc = zk_err_set(err, ZK_EPARSE, "its output has kind \"%s\", not ExecCredential", kind);
        goto out;
    }
    /* kubectl refuses a version other than the one it asked for; so do we, since the two versions
     * differ in what they may contain. */
    if (strcmp(version, api_version) != 0) {
        rc = zk_err_set(err, ZK_EPARSE, "it answered with apiVersion \"%s\" where the kubeconfig asks for \"%s\"",
                        version, api_version);
        goto out;
    }
    status = json_obj(doc, "status");
    token = json_str(status, "token", NULL);
    if (!token || !token[0]) {
        rc = json_str(status, "clientCertificateData", NULL)
                 ? zk_err_set(err, ZK_EPARSE, "it returned a client certificate; only bearer tokens are supported")
                 : zk_err_set(err, ZK_EPARSE, "its ExecCredential has no status.token");
        goto out;
    }
    expiry = json_str(status, "expirationTimestamp", NULL);
    if (expiry && !rfc3339_parse(expiry, &out->expiry)) {
        rc = zk_err_set(err, ZK_EPARSE, "status.expirationTimestamp \"%s\" is not an RFC 3339 time", expiry);
        goto out;
    }
    out->token = mem_strdup(token);
out:
    if (rc)
        out->expiry = 0;
    cJSON_Delete(doc);
    return rc;
}

/* environ plus the kubeconfig's env entries and KUBERNETES_EXEC_INFO, as a new array whose strings
 * belong to environ, x and info (only the array is the caller's to free; posix_spawn copies them).
 * Never NULL. */
static char **kexec_envp(const struct kube_exec *x, char *info)
{
    size_t n = 0, m = 0, k = 0;
    char **envp;

    while (environ && environ[n])
        n++;
    while (x->env && x->env[m])
        m++;
    envp = mem_calloc(n + m + 2, sizeof(*envp));
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0)
            envp[k++] = environ[i];
    for (size_t i = 0; i < m; i++)
        envp[k++] = x->env[i];
    envp[k] = info;
    return envp;
}

/* Reads the plugin's stdout (into out, bounded) and stderr (the first KEXEC_STDERR_KEEP bytes kept)
 * until both close or the deadline passes. */
static int kexec_collect(int out_fd, int err_fd, struct buf *out, struct buf *errs, long long deadline,
                         struct zk_err *err)
{
    struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    char chunk[4096];

    while (p[0].fd >= 0 || p[1].fd >= 0) {
        long long left = deadline - monotime_ms();
        int r;

        if (left <= 0)
            return zk_err_set(err, ZK_ETIMEOUT, "it did not finish in time");
        r = poll(p, 2, (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR)
            return zk_err_set(err, ZK_EIO, "poll: %s", strerror(errno));
        for (int i = 0; r > 0 && i < 2; i++) {
            ssize_t n;

            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            n = read(p[i].fd, chunk, sizeof(chunk));
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                p[i].fd = -1;
                continue;
            }
            if (i == 0 && buf_append(out, chunk, (size_t)n))
                return zk_err_set(err, ZK_ETOOBIG, "it printed more than %u bytes", KUBE_EXEC_MAX_OUTPUT);
            if (i == 1 && errs->len < KEXEC_STDERR_KEEP) {
                size_t room = KEXEC_STDERR_KEEP - errs->len;

                /* Cut to what is kept, which is within the buffer's bound: cannot fail. */
                if (buf_append(errs, chunk, (size_t)n < room ? (size_t)n : room))
                    return zk_err_set(err, ZK_ETOOBIG, "it printed more than %d bytes to stderr", KEXEC_STDERR_KEEP);
            }
        }
    }
    return ZK_OK;
}

/* The kept stderr on one line, for a message: line breaks become spaces, trailing space goes. */
static void kexec_flatten(struct buf *b)
{
    if (buf_putc(b, '\0'))
        return;
    b->len--;
    while (b->len > 0 && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == ' ' || b->data[b->len - 1] == '\r'))
        b->data[--b->len] = '\0';
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] == '\n' || b->data[i] == '\r')
            b->data[i] = ' ';
}

int kube_exec_run(const struct kube_exec *x, long timeout_ms, struct kube_exec_cred *out, struct zk_err *err)
{
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, rc, status = 0, have_actions = 0;
    posix_spawn_file_actions_t fa;
    struct buf stdout_buf, stderr_buf;
    char info[256], version[128], **envp;
    const char *cmd = x->argv[0];
    size_t used;
    pid_t pid = -1;

    memset(out, 0, sizeof(*out));
    buf_init(&stdout_buf, KUBE_EXEC_MAX_OUTPUT);
    buf_init(&stderr_buf, KEXEC_STDERR_KEEP + 1);
    /* The version comes from the kubeconfig: escaped, so that the plugin reads JSON whatever it holds
     * (kube_exec_parse refuses an answer in another version, so a cut one fails there, visibly). */
    version[json_escape(version, sizeof(version) - 1, x->api_version, strlen(x->api_version), &used,
                        JSON_ESCAPE_UTF8)] = '\0';
    snprintf(info, sizeof(info),
             "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}",
             version);
    envp = kexec_envp(x, info);
    if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
        rc = zk_err_set(err, ZK_EIO, "exec credential plugin %s: pipe: %s", cmd, strerror(errno));
        goto out;
    }
    /* Fails only for want of memory (POSIX), which lib/mem's policy ends the process for. */
    if (posix_spawn_file_actions_init(&fa) != 0)
        mem_oom(sizeof(fa));
    have_actions = 1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
    rc = strchr(cmd, '/') ? posix_spawn(&pid, cmd, &fa, NULL, x->argv, envp)
                          : posix_spawnp(&pid, cmd, &fa, NULL, x->argv, envp);
    if (rc != 0) {
        rc = zk_err_set(err, ZK_EIO, "exec credential plugin %s could not be started: %s%s%s", cmd, strerror(rc),
                        x->install_hint ? ". " : "", x->install_hint ? x->install_hint : "");
        goto out;
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_pipe[1] = err_pipe[1] = -1;
    rc = kexec_collect(out_pipe[0], err_pipe[0], &stdout_buf, &stderr_buf,
                       monotime_ms() + (timeout_ms > 0 ? timeout_ms : 1), err);
    if (rc) {
        kill(pid, SIGKILL);
        zk_err_prefix(err, "exec credential plugin %s", cmd);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc)
        goto out;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        kexec_flatten(&stderr_buf);
        rc = zk_err_set(err, ZK_EIO, "exec credential plugin %s %s %d%s%s", cmd,
                        WIFEXITED(status) ? "exited with status" : "was killed by signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), stderr_buf.len ? ": " : "",
                        stderr_buf.len ? stderr_buf.data : "");
        goto out;
    }
    rc = kube_exec_parse(stdout_buf.data ? stdout_buf.data : "", stdout_buf.len, x->api_version, out, err);
    if (rc)
        zk_err_prefix(err, "exec credential plugin %s", cmd);
out:
    if (have_actions)
        posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++) {
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
        if (err_pipe[i] >= 0)
            close(err_pipe[i]);
    }
    if (stdout_buf.data)
        memset(stdout_buf.data, 0, stdout_buf.len); /* it held the token */
    buf_free(&stdout_buf);
    buf_free(&stderr_buf);
    free(envp);
    return rc;
}
