/* stdio.c: see stdio.h. */
#include "connector/mcp/stdio.h"

#include "buf.h"
#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/server.h"
#include "json.h"
#include "log.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often the reader wakes up to look at the stop flag when no input arrives. */
#define POLL_MS 200
#define READ_CHUNK 65536

/* A worker slot's life: FREE -> RUNNING (dispatch) -> DONE (the worker's last act) -> FREE (joined by
 * the reader). Workers are joined, never detached: a detached thread can still be running its
 * thread-exit handlers (OpenSSL frees its per-thread state there) while the process exits, which makes
 * LeakSanitizer report leaks at random and can deadlock its exit-time check. */
enum slot_state { SLOT_FREE, SLOT_RUNNING, SLOT_DONE };

struct worker {
    struct stdio_ctx *ctx;
    struct mcp_call *call;
    pthread_t thread;
    enum slot_state state;
};

struct stdio_ctx {
    int out_fd;
    struct mcp_session *session;
    pthread_mutex_t mu; /* guards out_fd writes, slots' state, running and write_failed */
    pthread_cond_t cv;  /* signalled when a worker ends */
    struct worker slots[MCP_STDIO_MAX_WORKERS];
    int running;
    int write_failed;
};

/* Writes text and a newline as one message; a reply never contains a raw newline because JSON escapes
 * it. Serialised so that concurrent replies never interleave. */
static void send_line(struct stdio_ctx *ctx, const char *text)
{
    size_t len = strlen(text), off = 0;
    ssize_t n;
    char *line = malloc(len + 1);

    if (line == NULL) {
        log_error("Out of memory writing an MCP reply", NULL);
        return;
    }
    memcpy(line, text, len);
    line[len++] = '\n';
    pthread_mutex_lock(&ctx->mu);
    while (off < len && !ctx->write_failed) {
        n = write(ctx->out_fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            log_error("Writing to stdout failed; ending the session", "error", strerror(errno), NULL);
            ctx->write_failed = 1;
            break;
        }
        off += (size_t)n;
    }
    pthread_mutex_unlock(&ctx->mu);
    free(line);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct stdio_ctx *ctx = w->ctx;
    char *reply = mcp_call_run(w->call);

    mcp_call_free(w->call);
    w->call = NULL;
    if (reply != NULL)
        send_line(ctx, reply);
    free(reply);
    pthread_mutex_lock(&ctx->mu);
    w->state = SLOT_DONE;
    ctx->running--;
    pthread_cond_broadcast(&ctx->cv);
    pthread_mutex_unlock(&ctx->mu);
    return NULL;
}

/* Joins every worker that has finished, making its slot free. Called with ctx->mu held; a DONE worker
 * no longer takes the lock, so joining it here cannot deadlock. */
static void reap_workers(struct stdio_ctx *ctx)
{
    for (int i = 0; i < MCP_STDIO_MAX_WORKERS; i++) {
        if (ctx->slots[i].state == SLOT_DONE) {
            pthread_join(ctx->slots[i].thread, NULL);
            ctx->slots[i].state = SLOT_FREE;
        }
    }
}

/* Runs call (taking ownership) on a worker thread, waiting first while MCP_STDIO_MAX_WORKERS are busy.
 * When no thread can be made the call runs right here instead: slower, but nothing is lost. */
static void dispatch(struct stdio_ctx *ctx, struct mcp_call *call)
{
    struct worker *w = NULL;

    pthread_mutex_lock(&ctx->mu);
    for (;;) {
        reap_workers(ctx);
        for (int i = 0; i < MCP_STDIO_MAX_WORKERS && w == NULL; i++)
            if (ctx->slots[i].state == SLOT_FREE)
                w = &ctx->slots[i];
        if (w != NULL)
            break;
        pthread_cond_wait(&ctx->cv, &ctx->mu);
    }
    w->ctx = ctx;
    w->call = call;
    w->state = SLOT_RUNNING;
    ctx->running++;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        pthread_mutex_unlock(&ctx->mu);
        worker_main(w);
        pthread_mutex_lock(&ctx->mu);
        w->state = SLOT_FREE; /* no thread to join */
    }
    pthread_mutex_unlock(&ctx->mu);
}

static void handle_line(struct stdio_ctx *ctx, char *line, size_t len)
{
    struct mcp_call *call = NULL;
    char *reply = NULL;

    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    if (len == 0)
        return;
    if (mcp_session_accept(ctx->session, line, len, &reply, &call) != ZK_OK) {
        log_error("Out of memory handling an MCP message", NULL);
        return;
    }
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
    text = e != NULL ? json_print(e) : NULL;
    if (text != NULL)
        send_line(ctx, text);
    free(text);
    cJSON_Delete(e);
    log_warn("Skipped an MCP message over the size limit", NULL);
}

int mcp_stdio_run(const struct mcp_stdio_opts *opts, struct zk_err *err)
{
    struct mcp_session_opts so = {.cfg = opts->cfg, .server_version = opts->server_version, .rate = opts->cfg->stdio_rate};
    struct stdio_ctx ctx = {.out_fd = opts->out_fd};
    struct buf line;
    char *chunk = malloc(READ_CHUNK), *nl;
    struct pollfd pfd = {.fd = opts->in_fd, .events = POLLIN};
    int discarding = 0, rc = ZK_OK, eof = 0;
    ssize_t n;
    size_t off, seg;

    buf_init(&line, CONNECTOR_MCP_REQUEST_MAX);
    ctx.session = mcp_session_new(&so);
    if (chunk == NULL || ctx.session == NULL) {
        free(chunk);
        mcp_session_free(ctx.session);
        return zk_err_set(err, ZK_ENOMEM, "out of memory starting the stdio transport");
    }
    pthread_mutex_init(&ctx.mu, NULL);
    pthread_cond_init(&ctx.cv, NULL);
    log_info("Serving MCP on stdio", NULL);

    while (!eof && !(opts->stop != NULL && *opts->stop)) {
        pthread_mutex_lock(&ctx.mu);
        if (ctx.write_failed)
            rc = zk_err_set(err, ZK_EIO, "write to stdout failed");
        pthread_mutex_unlock(&ctx.mu);
        if (rc != ZK_OK)
            break;
        /* poll with a timeout rather than a blocking read, so that a signal delivered to any thread
         * (a worker, libcurl's resolver) still ends the loop promptly through the stop flag. */
        if (poll(&pfd, 1, POLL_MS) <= 0)
            continue;
        n = read(opts->in_fd, chunk, READ_CHUNK);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            rc = zk_err_set(err, ZK_EIO, "read stdin: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            eof = 1;
            /* A last message without its newline is still a message. */
            if (!discarding && line.len > 0)
                handle_line(&ctx, line.data, line.len);
            break;
        }
        for (off = 0; off < (size_t)n; off += seg + 1) {
            nl = memchr(chunk + off, '\n', (size_t)n - off);
            seg = nl != NULL ? (size_t)(nl - (chunk + off)) : (size_t)n - off;
            if (!discarding && buf_append(&line, chunk + off, seg) != ZK_OK)
                discarding = 1; /* the buffer has freed itself; skip to the next newline */
            if (nl == NULL)
                break;
            if (discarding)
                reply_too_big(&ctx);
            else if (line.len > 0)
                handle_line(&ctx, line.data, line.len);
            discarding = 0;
            buf_reset(&line);
        }
    }
    /* At end of input the replies still owed are finished and written: the client may still read
     * stdout (it closes stdin first when shutting down, then signals). A signal or a failed stdout
     * means nobody will read them: cancel what runs. Either way the workers, which use the session,
     * are waited for. */
    log_info(eof ? "stdin closed; finishing the calls in flight" : "Ending the MCP session", NULL);
    if (!eof)
        mcp_session_close(ctx.session);
    pthread_mutex_lock(&ctx.mu);
    while (ctx.running > 0) {
        struct timespec until;

        if ((opts->stop != NULL && *opts->stop) || ctx.write_failed) {
            pthread_mutex_unlock(&ctx.mu);
            mcp_session_close(ctx.session);
            pthread_mutex_lock(&ctx.mu);
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ctx.cv, &ctx.mu, &until);
    }
    reap_workers(&ctx);
    pthread_mutex_unlock(&ctx.mu);
    mcp_session_free(ctx.session);
    pthread_cond_destroy(&ctx.cv);
    pthread_mutex_destroy(&ctx.mu);
    buf_free(&line);
    free(chunk);
    return rc;
}
