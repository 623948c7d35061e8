/* stdio.c: see stdio.h. */
#include "connector/mcp/stdio.h"

#include "buf.h"
#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/server.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "sig.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* How often the end of the session looks at the stop flag while it waits for the calls in flight. */
#define POLL_MS 200
#define READ_CHUNK 65536

/* A worker thread is started when a call finds no idle one (at most MCP_STDIO_MAX_WORKERS), then
 * serves call after call: IDLE (waiting on its condition) -> BUSY (running one) -> IDLE, until the
 * session ends and it returns (starting a thread per call cost about 5 % of a small search's CPU).
 * Workers are joined, never detached: a detached thread can still be running its thread-exit handlers
 * (OpenSSL frees its per-thread state there) while the process exits, which makes LeakSanitizer report
 * leaks at random and can deadlock its exit-time check. */
enum worker_state { WORKER_UNSTARTED, WORKER_IDLE, WORKER_BUSY };

struct worker {
    struct stdio_ctx *ctx;
    struct mcp_call *call; /* the call to run, handed over by dispatch; NULL while idle */
    pthread_t thread;
    pthread_cond_t cv; /* signalled when a call is handed over or the session ends */
    enum worker_state state;
};

struct stdio_ctx {
    int out_fd;
    int wake_fd; /* an eventfd the reader also waits on: a worker whose write failed wakes it */
    struct mcp_session *session;
    pthread_mutex_t mu; /* guards out_fd writes, the workers' state and call, running, quit and write_failed */
    pthread_cond_t cv;  /* signalled when a worker finishes a call */
    struct worker slots[MCP_STDIO_MAX_WORKERS];
    int running; /* calls handed to workers and not finished */
    int quit;    /* the session has ended: idle workers return */
    int write_failed;
};

/* Writes text and a newline as one message; a reply never contains a raw newline because JSON escapes
 * it. Serialised so that concurrent replies never interleave. */
static void send_line(struct stdio_ctx *ctx, const char *text)
{
    size_t len = strlen(text), off = 0;
    ssize_t n;
    char *line = mem_alloc(len + 1);

    memcpy(line, text, len);
    line[len++] = '\n';
    pthread_mutex_lock(&ctx->mu);
    while (off < len && !ctx->write_failed) {
        n = write(ctx->out_fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            uint64_t one = 1;

            log_error("Writing to stdout failed; ending the session", "error", strerror(errno), NULL);
            ctx->write_failed = 1;
            if (write(ctx->wake_fd, &one, sizeof(one)) < 0)
                log_error("Cannot wake the stdio reader", "error", strerror(errno), NULL);
            break;
        }
        off += (size_t)n;
    }
    pthread_mutex_unlock(&ctx->mu);
    free(line);
}

/* Runs call, taking ownership, and writes its reply. */
static void run_call(struct stdio_ctx *ctx, struct mcp_call *call)
{
    char *reply = mcp_call_run(call);

    mcp_call_free(call);
    if (reply != NULL)
        send_line(ctx, reply);
    free(reply);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct stdio_ctx *ctx = w->ctx;

    pthread_mutex_lock(&ctx->mu);
    for (;;) {
        struct mcp_call *call;

        while (w->call == NULL && !ctx->quit)
            pthread_cond_wait(&w->cv, &ctx->mu);
        if (w->call == NULL)
            break;
        call = w->call;
        pthread_mutex_unlock(&ctx->mu);
        run_call(ctx, call);
        pthread_mutex_lock(&ctx->mu);
        w->call = NULL;
        w->state = WORKER_IDLE;
        ctx->running--;
        pthread_cond_broadcast(&ctx->cv);
    }
    pthread_mutex_unlock(&ctx->mu);
    return NULL;
}

/* Hands call (taking ownership) to an idle worker, or to a new one, waiting first while
 * MCP_STDIO_MAX_WORKERS are busy. When no thread can be made the call runs right here instead: slower,
 * but nothing is lost. */
static void dispatch(struct stdio_ctx *ctx, struct mcp_call *call)
{
    struct worker *w = NULL;

    pthread_mutex_lock(&ctx->mu);
    while (w == NULL) {
        /* The lowest idle worker first, so that a client calling one tool at a time keeps one thread. */
        for (int i = 0; i < MCP_STDIO_MAX_WORKERS && w == NULL; i++)
            if (ctx->slots[i].state == WORKER_IDLE)
                w = &ctx->slots[i];
        for (int i = 0; i < MCP_STDIO_MAX_WORKERS && w == NULL; i++)
            if (ctx->slots[i].state == WORKER_UNSTARTED)
                w = &ctx->slots[i];
        if (w == NULL)
            pthread_cond_wait(&ctx->cv, &ctx->mu);
    }
    if (w->state == WORKER_UNSTARTED) {
        w->ctx = ctx;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            pthread_mutex_unlock(&ctx->mu);
            run_call(ctx, call);
            return;
        }
    }
    w->state = WORKER_BUSY;
    w->call = call;
    ctx->running++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&ctx->mu);
}

/* Tells the idle workers that the session has ended and joins every worker started. No call may be
 * running. */
static void stop_workers(struct stdio_ctx *ctx)
{
    pthread_mutex_lock(&ctx->mu);
    ctx->quit = 1;
    for (int i = 0; i < MCP_STDIO_MAX_WORKERS; i++)
        pthread_cond_signal(&ctx->slots[i].cv);
    pthread_mutex_unlock(&ctx->mu);
    for (int i = 0; i < MCP_STDIO_MAX_WORKERS; i++)
        if (ctx->slots[i].state != WORKER_UNSTARTED)
            pthread_join(ctx->slots[i].thread, NULL);
}

static void handle_line(struct stdio_ctx *ctx, char *line, size_t len)
{
    struct mcp_call *call = NULL;
    char *reply = NULL;

    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    if (len == 0)
        return;
    mcp_session_accept(ctx->session, line, len, &reply, &call);
    if (reply != NULL)
        send_line(ctx, reply);
    free(reply);
    if (call != NULL)
        dispatch(ctx, call);
}

static void reply_too_big(struct stdio_ctx *ctx)
{
    char msg[96];
    cJSON *e;
    char *text;

    snprintf(msg, sizeof(msg), "the message is longer than %u bytes", CONNECTOR_MCP_REQUEST_MAX);
    e = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, msg, NULL);
    text = json_print(e);
    send_line(ctx, text);
    free(text);
    cJSON_Delete(e);
    log_warn("Skipped an MCP message over the size limit", NULL);
}

/* The message being assembled from stdin: lines arrive in chunks of up to READ_CHUNK bytes. */
struct stdio_reader {
    struct buf line;
    char *chunk;
    int discarding; /* the current line passed the size limit: skip to its newline */
};

/* Splits the n bytes in rd->chunk into lines, handling each whole one as a message. */
static void feed(struct stdio_ctx *ctx, struct stdio_reader *rd, size_t n)
{
    size_t off, seg;
    char *nl;

    for (off = 0; off < n; off += seg + 1) {
        nl = memchr(rd->chunk + off, '\n', n - off);
        seg = nl != NULL ? (size_t)(nl - (rd->chunk + off)) : n - off;
        if (!rd->discarding && buf_append(&rd->line, rd->chunk + off, seg) != ZK_OK)
            rd->discarding = 1; /* the buffer has freed itself; skip to the next newline */
        if (nl == NULL)
            break;
        if (rd->discarding)
            reply_too_big(ctx);
        else if (rd->line.len > 0)
            handle_line(ctx, rd->line.data, rd->line.len);
        rd->discarding = 0;
        buf_reset(&rd->line);
    }
}

/* Reads and handles messages until end of input (*eof set), a stop signal or a failed write. waiting
 * is the signal mask ppoll waits with, the one that lets the stop signals in. Returns ZK_OK, or ZK_EIO
 * when stdin or stdout failed. */
static int read_messages(struct stdio_ctx *ctx, const struct mcp_stdio_opts *opts, const sigset_t *waiting,
                         int *eof, struct zk_err *err)
{
    struct pollfd pfd[2] = {{.fd = opts->in_fd, .events = POLLIN}, {.fd = ctx->wake_fd, .events = POLLIN}};
    struct stdio_reader rd = {.chunk = mem_alloc(READ_CHUNK)};
    int rc = ZK_OK;
    ssize_t n;

    buf_init(&rd.line, CONNECTOR_MCP_REQUEST_MAX);
    while (!(opts->stop != NULL && atomic_load(opts->stop))) {
        pthread_mutex_lock(&ctx->mu);
        if (ctx->write_failed)
            rc = zk_err_set(err, ZK_EIO, "write to stdout failed");
        pthread_mutex_unlock(&ctx->mu);
        if (rc != ZK_OK)
            break;
        if (ppoll(pfd, 2, NULL, waiting) <= 0 || pfd[0].revents == 0)
            continue;
        n = read(opts->in_fd, rd.chunk, READ_CHUNK);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            rc = zk_err_set(err, ZK_EIO, "read stdin: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            *eof = 1;
            /* A last message without its newline is still a message. */
            if (!rd.discarding && rd.line.len > 0)
                handle_line(ctx, rd.line.data, rd.line.len);
            break;
        }
        feed(ctx, &rd, (size_t)n);
    }
    buf_free(&rd.line);
    free(rd.chunk);
    return rc;
}

/* Waits for the calls in flight. At end of input the replies still owed are finished and written: the
 * client may still read stdout (it closes stdin first when shutting down, then signals). A signal or a
 * failed stdout means nobody will read them: what runs is cancelled. The stop flag is read every
 * POLL_MS, since the signals reach this thread again by now. */
static void finish_calls(struct stdio_ctx *ctx, const struct mcp_stdio_opts *opts, int eof)
{
    if (!eof)
        mcp_session_close(ctx->session);
    pthread_mutex_lock(&ctx->mu);
    while (ctx->running > 0) {
        struct timespec until;

        if ((opts->stop != NULL && atomic_load(opts->stop)) || ctx->write_failed) {
            pthread_mutex_unlock(&ctx->mu);
            mcp_session_close(ctx->session);
            pthread_mutex_lock(&ctx->mu);
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ctx->cv, &ctx->mu, &until);
    }
    pthread_mutex_unlock(&ctx->mu);
    stop_workers(ctx);
}

int mcp_stdio_run(const struct mcp_stdio_opts *opts, struct zk_err *err)
{
    struct mcp_session_opts so = {.cfg = opts->cfg, .server_version = opts->server_version, .rate = opts->cfg->stdio_rate};
    struct stdio_ctx ctx = {.out_fd = opts->out_fd};
    sigset_t stop_signals, waiting;
    int rc, eof = 0;

    ctx.wake_fd = eventfd(0, EFD_CLOEXEC);
    if (ctx.wake_fd < 0)
        return zk_err_set(err, ZK_EIO, "eventfd: %s", strerror(errno));
    ctx.session = mcp_session_new(&so);
    mem_mutex_init(&ctx.mu);
    mem_cond_init(&ctx.cv, 0);
    for (int i = 0; i < MCP_STDIO_MAX_WORKERS; i++)
        mem_cond_init(&ctx.slots[i].cv, 0);
    /* The stop signals are blocked here, and so in every worker and libcurl thread started from here,
     * and taken only inside ppoll, which waits with the caller's mask: a signal then always interrupts
     * the wait for input, which can therefore wait without a timeout (a reader waking up every so
     * often to look at the flag cost more CPU between calls than a small call takes). */
    sig_stop_set(&stop_signals);
    pthread_sigmask(SIG_BLOCK, &stop_signals, &waiting);
    log_info("Serving MCP on stdio", NULL);
    rc = read_messages(&ctx, opts, &waiting, &eof, err);
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
    log_info(eof ? "stdin closed; finishing the calls in flight" : "Ending the MCP session", NULL);
    finish_calls(&ctx, opts, eof);
    mcp_session_free(ctx.session);
    for (int i = 0; i < MCP_STDIO_MAX_WORKERS; i++)
        pthread_cond_destroy(&ctx.slots[i].cv);
    pthread_cond_destroy(&ctx.cv);
    pthread_mutex_destroy(&ctx.mu);
    close(ctx.wake_fd);
    return rc;
}
