/* server.c: see server.h. */
#include "connector/mcp/server.h"

#include "connector/mcp/jsonrpc.h"
#include "connector/metrics.h"
#include "connector/tools/tools.h"
#include "budget.h"
#include "buf.h"
#include "err.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Newest first; MCP_PROTOCOL_LATEST must be the first entry. */
static const char *const supported_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
#define N_VERSIONS (sizeof(supported_versions) / sizeof(supported_versions[0]))

/* structuredContent exists from this revision on. */
#define STRUCTURED_SINCE "2025-06-18"

/* A tools/call that has been accepted and not yet answered. */
struct inflight {
    cJSON *id; /* a copy of the request id */
    atomic_int cancel;
    struct inflight *next;
};

struct mcp_session {
    pthread_mutex_t mu;
    const struct connector_config *cfg;
    const char *server_version;
    const char *version; /* negotiated, static; NULL before initialize */
    int closed;
    int limited; /* whether bucket applies */
    struct mcp_bucket bucket;
    unsigned long refused; /* tool calls the bucket refused since it last admitted one (server.h) */
    struct inflight *inflight;
};

struct job {
    const cJSON *request; /* points into call->root */
    struct inflight *fl;  /* registered until the job has run; NULL after (changed under s->mu) */
};

/* Why a call answers its remaining messages with a short error instead of their replies. */
enum call_stop {
    CALL_GOES_ON,
    CALL_REPLY_FULL, /* a batch's reply reached MCP_BATCH_REPLY_MAX */
    CALL_NO_MEMORY,  /* the request's budget had no room for the next reply */
};

struct mcp_call {
    struct mcp_session *s;
    cJSON *root;  /* the message, kept alive for the jobs' requests */
    int batch;    /* the replies go out as an array */
    char **texts; /* the replies made so far, printed: room for one per message */
    size_t ntexts;
    size_t bytes; /* their length together */
    enum call_stop stop; /* why later replies are the short error instead */
    struct budget_hold *hold; /* the request's, which the replies are added to; may be NULL */
    struct job *jobs;
    size_t njobs;
};

int mcp_version_supported(const char *v)
{
    size_t i;

    if (v == NULL)
        return 0;
    for (i = 0; i < N_VERSIONS; i++)
        if (strcmp(v, supported_versions[i]) == 0)
            return 1;
    return 0;
}

const char *mcp_version_negotiate(const char *requested)
{
    size_t i;

    if (requested != NULL)
        for (i = 0; i < N_VERSIONS; i++)
            if (strcmp(requested, supported_versions[i]) == 0)
                return supported_versions[i];
    return MCP_PROTOCOL_LATEST;
}

void mcp_bucket_init(struct mcp_bucket *b, double burst, double rate_per_sec, double now)
{
    b->tokens = burst;
    b->burst = burst;
    b->rate = rate_per_sec;
    b->last = now;
}

int mcp_bucket_take(struct mcp_bucket *b, double now, double *wait_s)
{
    if (now > b->last) {
        b->tokens += (now - b->last) * b->rate;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last = now;
    }
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        return 1;
    }
    if (wait_s != NULL)
        *wait_s = b->rate > 0 ? (1.0 - b->tokens) / b->rate : -1;
    return 0;
}

/* The metrics the session's calls are counted in, or NULL. */
static struct cmetrics *session_metrics(const struct mcp_session *s)
{
    return s->cfg != NULL ? s->cfg->metrics : NULL;
}

struct mcp_session *mcp_session_new(const struct mcp_session_opts *opts)
{
    struct mcp_session *s = mem_calloc(1, sizeof(*s));

    mem_mutex_init(&s->mu);
    s->cfg = opts->cfg;
    s->server_version = opts->server_version;
    s->limited = opts->rate.burst > 0;
    mcp_bucket_init(&s->bucket, opts->rate.burst, opts->rate.per_sec, monotime_s());
    return s;
}

/* The line that ends a run of refusals (server.h): how many there were. */
static void log_refused(unsigned long refused)
{
    char n[32];

    snprintf(n, sizeof(n), "%lu", refused);
    log_warn("Tool calls refused by the rate limit", "refused", n, NULL);
}

void mcp_session_free(struct mcp_session *s)
{
    if (s == NULL)
        return;
    /* A run of refusals of more than one that no admitted call ended is counted here, or never. */
    if (s->refused > 1)
        log_refused(s->refused);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void mcp_session_close(struct mcp_session *s)
{
    struct inflight *f;

    pthread_mutex_lock(&s->mu);
    s->closed = 1;
    for (f = s->inflight; f != NULL; f = f->next)
        tools_cancel(&f->cancel);
    pthread_mutex_unlock(&s->mu);
}

int mcp_session_initialized(struct mcp_session *s)
{
    int v;

    pthread_mutex_lock(&s->mu);
    v = s->version != NULL;
    pthread_mutex_unlock(&s->mu);
    return v;
}

const char *mcp_session_version(struct mcp_session *s)
{
    const char *v;

    pthread_mutex_lock(&s->mu);
    v = s->version;
    pthread_mutex_unlock(&s->mu);
    return v;
}

/* The instructions of the initialize result: what the corpus is and how to query it well. Returns a
 * heap string, or NULL when the text would pass the 4 KB bound, which a Kubernetes name (at most 253
 * characters) cannot make it do; the result then goes without instructions rather than failing. */
static char *instructions(const struct connector_config *cfg)
{
    struct buf b;

    buf_init(&b, 4096);
    if (buf_puts(&b, "Read-only code search over Git repositories") != ZK_OK)
        return NULL;
    if (cfg != NULL && cfg->corpus_name != NULL &&
        buf_printf(&b, " (corpus %s/%s)", cfg->corpus_namespace != NULL ? cfg->corpus_namespace : "default",
                   cfg->corpus_name) != ZK_OK)
        return NULL;
    if (buf_puts(&b,
             ", indexed by Zoekt; the index can lag the remotes (corpus_status says by how much).\n"
             "- search_code: one pattern, read as ripgrep reads it (a regex; code with metacharacters is "
             "also tried literally). Narrow with repo and file globs; page with the cursor it returns.\n"
             "- find_symbol: where a name is defined (ctags); find_references: every use, per repository;\n"
             "  find_dependents: the repositories whose manifests require a package.\n"
             "- read_file: the lines around a match; list_files: a repository's tree; list_repositories: "
             "the names repo accepts.") != ZK_OK)
        return NULL; /* a failed append has already freed the buffer */
    return buf_steal(&b);
}

static cJSON *handle_initialize(struct mcp_session *s, const struct jsonrpc_msg *m)
{
    const char *requested = json_str(m->params, "protocolVersion", NULL);
    const char *version;
    cJSON *result, *caps, *info;
    char *text;

    if (requested == NULL)
        return jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS, "initialize needs params.protocolVersion", NULL);
    pthread_mutex_lock(&s->mu);
    if (s->version != NULL) {
        pthread_mutex_unlock(&s->mu);
        return jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST, "the session is already initialized", NULL);
    }
    version = mcp_version_negotiate(requested);
    s->version = version;
    pthread_mutex_unlock(&s->mu);

    result = cJSON_CreateObject();
    text = instructions(s->cfg);
    cJSON_AddStringToObject(result, "protocolVersion", version);
    caps = cJSON_AddObjectToObject(result, "capabilities");
    cJSON_AddFalseToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged");
    info = cJSON_AddObjectToObject(result, "serverInfo");
    cJSON_AddStringToObject(info, "name", MCP_SERVER_NAME);
    cJSON_AddStringToObject(info, "version", s->server_version ? s->server_version : "0");
    cJSON_AddStringToObject(result, "instructions", text);
    free(text);
    log_info("MCP session initialized", "protocolVersion", version, "requested", requested, "client",
             json_path_str(m->params, "clientInfo.name", NULL), NULL);
    return jsonrpc_result(m->id, result);
}

static cJSON *handle_tools_list(const struct jsonrpc_msg *m)
{
    cJSON *result = cJSON_CreateObject();

    cJSON_AddItemToObject(result, "tools", tools_list());
    return jsonrpc_result(m->id, result);
}

/* A tools/call result with one text block. Takes ownership of structured (may be NULL). */
static cJSON *tool_result_json(const char *text, cJSON *structured, int is_error)
{
    cJSON *result = cJSON_CreateObject(), *block = cJSON_CreateObject();

    cJSON_AddItemToArray(cJSON_AddArrayToObject(result, "content"), block);
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", text);
    if (structured != NULL)
        cJSON_AddItemToObject(result, "structuredContent", structured);
    cJSON_AddBoolToObject(result, "isError", is_error);
    return result;
}

static struct inflight *inflight_find(struct mcp_session *s, const cJSON *id)
{
    struct inflight *f;

    for (f = s->inflight; f != NULL; f = f->next)
        if (jsonrpc_id_equal(f->id, id))
            return f;
    return NULL;
}

/* Unlinks the in-flight entry *slot from the session and frees it, leaving *slot NULL (nothing happens
 * when it is NULL already). The slot is cleared under the session lock so that mcp_call_cancel, which
 * reads it under the same lock, never touches a freed entry. Returns whether it had been cancelled. */
static int inflight_remove(struct mcp_session *s, struct inflight **slot)
{
    struct inflight **pp, *f;
    int cancelled;

    pthread_mutex_lock(&s->mu);
    f = *slot;
    if (f == NULL) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    for (pp = &s->inflight; *pp != NULL; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    *slot = NULL;
    cancelled = atomic_load(&f->cancel);
    pthread_mutex_unlock(&s->mu);
    cJSON_Delete(f->id);
    free(f);
    return cancelled;
}

/* Checks a tools/call before it runs. Returns a reply to send at once (an error, or the rate-limit
 * result), or NULL with *fl set to the registered in-flight entry. */
static cJSON *admit_tool_call(struct mcp_session *s, const struct jsonrpc_msg *m, struct inflight **fl)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
    struct inflight *f;
    double wait_s = 0;
    unsigned long refused;
    char text[200];
    int first;

    *fl = NULL;
    if (!cJSON_IsString(name))
        return jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS, "tools/call needs params.name (a string)", NULL);
    if (args != NULL && !cJSON_IsObject(args) && !cJSON_IsNull(args))
        return jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS, "params.arguments must be an object", NULL);
    f = mem_calloc(1, sizeof(*f));
    f->id = cJSON_Duplicate(m->id, 1);
    pthread_mutex_lock(&s->mu);
    if (s->closed) {
        pthread_mutex_unlock(&s->mu);
        cJSON_Delete(f->id);
        free(f);
        return jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST, "the session is closing", NULL);
    }
    if (inflight_find(s, m->id) != NULL) {
        pthread_mutex_unlock(&s->mu);
        cJSON_Delete(f->id);
        free(f);
        return jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST, "a request with this id is still running", NULL);
    }
    if (s->limited && !mcp_bucket_take(&s->bucket, monotime_s(), &wait_s)) {
        first = s->refused++ == 0;
        pthread_mutex_unlock(&s->mu);
        cJSON_Delete(f->id);
        free(f);
        snprintf(text, sizeof(text),
                 "Rate limit reached: a session may make %.0f tool calls in a burst, then %.1f per second. "
                 "Retry in %.1f s.",
                 s->bucket.burst, s->bucket.rate, wait_s);
        if (first)
            log_warn("Tool call rate-limited; the refusals that follow are counted until a call is admitted",
                     "tool", name->valuestring, NULL);
        cmetrics_tool_rate_limited(session_metrics(s), name->valuestring);
        return jsonrpc_result(m->id, tool_result_json(text, NULL, 1));
    }
    refused = s->refused;
    s->refused = 0;
    f->next = s->inflight;
    s->inflight = f;
    pthread_mutex_unlock(&s->mu);
    /* The first refusal of the run was logged when it happened. */
    if (refused > 1)
        log_refused(refused);
    *fl = f;
    return NULL;
}

static void handle_cancelled(struct mcp_session *s, const struct jsonrpc_msg *m)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->params, "requestId");
    struct inflight *f;

    /* Cancellation is best effort by specification: an unknown or finished id is ignored, and
     * initialize never registers, so it cannot be cancelled. */
    if (!jsonrpc_id_valid(id))
        return;
    pthread_mutex_lock(&s->mu);
    f = inflight_find(s, id);
    if (f != NULL)
        tools_cancel(&f->cancel);
    pthread_mutex_unlock(&s->mu);
    if (f != NULL)
        log_info("Tool call cancelled by the client", "reason", json_str(m->params, "reason", NULL), NULL);
}

/* Handles one message of a batch or a single message. Sets *reply (NULL: nothing to say) or registers
 * a tools/call in *fl for later. */
static void handle_one(struct mcp_session *s, const cJSON *node, int in_batch, cJSON **reply,
                      struct inflight **fl)
{
    struct jsonrpc_msg m;

    *reply = NULL;
    *fl = NULL;
    jsonrpc_classify(node, &m);
    switch (m.kind) {
    case JSONRPC_INVALID:
        *reply = jsonrpc_error(m.id, m.error_code, m.error_msg, NULL);
        return;
    case JSONRPC_RESPONSE:
        return; /* this server sends no requests, so there is nothing to match a response to */
    case JSONRPC_NOTIFICATION:
        if (strcmp(m.method, "notifications/cancelled") == 0)
            handle_cancelled(s, &m);
        return; /* notifications/initialized and unknown notifications need nothing */
    case JSONRPC_REQUEST:
        break;
    }
    if (strcmp(m.method, "initialize") == 0) {
        if (in_batch)
            *reply = jsonrpc_error(m.id, JSONRPC_INVALID_REQUEST, "initialize must not be part of a batch", NULL);
        else
            *reply = handle_initialize(s, &m);
    } else if (strcmp(m.method, "ping") == 0) {
        *reply = jsonrpc_result(m.id, cJSON_CreateObject());
    } else if (!mcp_session_initialized(s)) {
        *reply = jsonrpc_error(m.id, JSONRPC_INVALID_REQUEST, "the session is not initialized: send initialize first",
                               NULL);
    } else if (strcmp(m.method, "tools/list") == 0) {
        *reply = handle_tools_list(&m);
    } else if (strcmp(m.method, "tools/call") == 0) {
        *reply = admit_tool_call(s, &m, fl);
    } else {
        *reply = jsonrpc_error(m.id, JSONRPC_METHOD_NOT_FOUND, "method not found", NULL);
    }
}

/* The short error that answers a message once its call has stopped for why (server.h). */
static cJSON *reply_stopped_error(enum call_stop why, const cJSON *id)
{
    char msg[160];

    if (why == CALL_NO_MEMORY)
        return jsonrpc_error(id, JSONRPC_SERVER_ERROR,
                             "the server holds as many requests as its memory allows; send this request again in "
                             "a second", NULL);
    snprintf(msg, sizeof(msg),
             "the reply to this batch reached its bound of %u bytes; send this request again on its own",
             MCP_BATCH_REPLY_MAX);
    return jsonrpc_error(id, JSONRPC_SERVER_ERROR, msg, NULL);
}

/* Adds reply r (may be NULL: nothing to add) to call's replies, printed as UTF-8 JSON whatever a
 * client put into it, and counted in the request's budget (twice in a batch: the reply, and its copy in
 * the array that joins them). A reply that would take a batch's replies past MCP_BATCH_REPLY_MAX, or
 * finds no room in the budget, is replaced by the short error, and so is every reply after it. Frees
 * r. */
static void call_reply(struct mcp_call *call, cJSON *r)
{
    char *text;
    cJSON *e;

    if (r == NULL)
        return;
    text = call->stop != CALL_GOES_ON ? NULL : json_print_utf8(r);
    if (text != NULL && call->batch && call->bytes + strlen(text) + 2 > MCP_BATCH_REPLY_MAX)
        call->stop = CALL_REPLY_FULL;
    else if (text != NULL && call->hold != NULL &&
             budget_add(call->hold, strlen(text) * (call->batch ? 2 : 1)) != ZK_OK)
        call->stop = CALL_NO_MEMORY;
    if (call->stop != CALL_GOES_ON) {
        free(text);
        e = reply_stopped_error(call->stop, cJSON_GetObjectItemCaseSensitive(r, "id"));
        text = json_print_utf8(e);
        cJSON_Delete(e);
    }
    cJSON_Delete(r);
    call->bytes += strlen(text);
    call->texts[call->ntexts++] = text;
}

/* The replies as the transport should send them: NULL for none, the single reply alone unless batch,
 * else a JSON array of them. Leaves call without replies. */
static char *print_replies(struct mcp_call *call)
{
    char *out = NULL, *p;
    size_t i, n;

    if (call->ntexts == 0)
        return NULL;
    if (!call->batch) {
        out = call->texts[0];
        call->texts[0] = NULL;
        call->ntexts = 0;
        return out;
    }
    p = out = mem_alloc(call->bytes + call->ntexts + 2);
    *p++ = '[';
    for (i = 0; i < call->ntexts; i++) {
        if (i > 0)
            *p++ = ',';
        n = strlen(call->texts[i]);
        memcpy(p, call->texts[i], n);
        p += n;
        free(call->texts[i]);
    }
    *p++ = ']';
    *p = '\0';
    call->ntexts = 0;
    return out;
}

void mcp_call_free(struct mcp_call *call)
{
    size_t i;

    if (call == NULL)
        return;
    for (i = 0; i < call->njobs; i++)
        inflight_remove(call->s, &call->jobs[i].fl);
    for (i = 0; i < call->ntexts; i++)
        free(call->texts[i]);
    free(call->texts);
    free(call->jobs);
    cJSON_Delete(call->root);
    free(call);
}

/* Why the batch msg is refused as a whole (a static string, or one written into text, size bytes), or
 * NULL when it is not. */
static const char *batch_refusal(struct mcp_session *s, const cJSON *msg, char *text, size_t size)
{
    const char *version = mcp_session_version(s);
    int n = cJSON_GetArraySize(msg);

    if (version == NULL || strcmp(version, MCP_PROTOCOL_BATCH) != 0)
        return "batches are only accepted under protocol version 2025-03-26";
    if (n == 0)
        return "an empty batch is invalid";
    if (n > MCP_BATCH_MAX) {
        snprintf(text, size, "a batch may hold at most %d messages; this one holds %d: send it in parts",
                 MCP_BATCH_MAX, n);
        return text;
    }
    return NULL;
}

void mcp_session_accept_json(struct mcp_session *s, cJSON *msg, struct budget_hold *hold, char **reply,
                             struct mcp_call **out)
{
    struct mcp_call *call = mem_calloc(1, sizeof(*call));
    const char *refusal = NULL;
    struct inflight *fl;
    cJSON *node, *r;
    char text[128];
    size_t n = 1;

    *reply = NULL;
    *out = NULL;
    call->s = s;
    call->root = msg;
    call->hold = hold;
    if (cJSON_IsArray(msg)) {
        refusal = batch_refusal(s, msg, text, sizeof(text));
        call->batch = refusal == NULL;
        n = call->batch ? (size_t)cJSON_GetArraySize(msg) : 1;
    }
    call->texts = mem_calloc(n, sizeof(*call->texts));
    call->jobs = mem_calloc(n, sizeof(*call->jobs));
    if (refusal != NULL) {
        call_reply(call, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, refusal, NULL));
    } else if (call->batch) {
        cJSON_ArrayForEach(node, msg) {
            handle_one(s, node, 1, &r, &fl);
            call_reply(call, r);
            if (fl != NULL)
                call->jobs[call->njobs++] = (struct job){node, fl};
        }
    } else {
        handle_one(s, msg, 0, &r, &fl);
        call_reply(call, r);
        if (fl != NULL)
            call->jobs[call->njobs++] = (struct job){msg, fl};
    }
    if (call->njobs > 0) {
        *out = call;
        return;
    }
    *reply = print_replies(call);
    mcp_call_free(call);
}

void mcp_session_accept(struct mcp_session *s, const char *text, size_t len, char **reply,
                        struct mcp_call **call)
{
    cJSON *msg = jsonrpc_parse(text, len);
    cJSON *err;

    if (msg != NULL) {
        mcp_session_accept_json(s, msg, NULL, reply, call);
        return;
    }
    *call = NULL;
    err = jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "parse error: the message is not valid JSON", NULL);
    *reply = json_print(err);
    cJSON_Delete(err);
}

/* Runs one registered tools/call and returns its reply, or NULL when it was cancelled (then nothing may
 * be sent). Unregisters the call. */
static cJSON *run_job(struct mcp_session *s, struct job *job)
{
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(job->request, "params");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(job->request, "id");
    const char *name = json_str(params, "name", "");
    const cJSON *args = json_obj(params, "arguments");
    const char *version = mcp_session_version(s);
    struct tool_ctx ctx = {.cfg = s->cfg, .cancel = &job->fl->cancel};
    struct tool_result res;
    struct zk_err err;
    cJSON *reply = NULL;
    double t0 = monotime_s(), seconds;
    enum cmetrics_kind kind = CMETRICS_NO_ERROR;
    size_t text_bytes = 0;
    char ms[32];
    int rc, cancelled, unknown;

    zk_err_clear(&err);
    tool_result_init(&res);
    rc = tools_call(&ctx, name, args, &res, &err);
    /* A name no tool has is the caller's mistake (a -32602); any other code is the connector's fault. */
    unknown = rc == ZK_ENOENT;
    cancelled = inflight_remove(s, &job->fl);
    seconds = monotime_s() - t0;
    snprintf(ms, sizeof(ms), "%.0f", seconds * 1000);
    if (cancelled) {
        kind = CMETRICS_CANCELLED;
        log_info("Tool call ended after cancellation; no reply sent", "tool", name, "ms", ms, NULL);
    } else if (unknown) {
        char shown[JSONRPC_SHOW_SIZE], msg[JSONRPC_SHOW_SIZE + 32];

        /* The metrics count it apart, under no tool's label. */
        kind = CMETRICS_INVALID_ARGUMENT;
        jsonrpc_show(shown, sizeof(shown), name);
        snprintf(msg, sizeof(msg), "Unknown tool: %s", shown);
        reply = jsonrpc_error(id, JSONRPC_INVALID_PARAMS, msg, NULL);
    } else if (rc != ZK_OK) {
        /* The tool could not answer at all (a -32603): whatever the code, a fault of the connector's. */
        kind = CMETRICS_INTERNAL;
        log_error("Tool call failed", "tool", name, "error", err.msg, NULL);
        reply = jsonrpc_error(id, JSONRPC_INTERNAL_ERROR, err.msg[0] ? err.msg : zk_strerror(rc), NULL);
    } else {
        cJSON *structured = res.structured;

        res.structured = NULL;
        if (structured != NULL && strcmp(version, STRUCTURED_SINCE) < 0) {
            cJSON_Delete(structured);
            structured = NULL;
        }
        text_bytes = res.text.len;
        if (res.is_error) {
            kind = cmetrics_kind_of(res.code);
            log_info("Tool call", "tool", name, "ms", ms, "isError", "true", "kind", cmetrics_kind_name(kind), NULL);
        } else {
            log_info("Tool call", "tool", name, "ms", ms, "isError", "false", NULL);
        }
        reply = jsonrpc_result(id, tool_result_json(res.text.data ? res.text.data : "", structured,
                                                    res.is_error));
    }
    cmetrics_tool_call(session_metrics(s), name, kind, seconds, text_bytes);
    tool_result_free(&res);
    return reply;
}

char *mcp_call_run(struct mcp_call *call)
{
    struct job *job;
    size_t i;

    for (i = 0; i < call->njobs; i++) {
        job = &call->jobs[i];
        if (call->stop == CALL_GOES_ON) {
            call_reply(call, run_job(call->s, job));
            continue;
        }
        /* The call has stopped: this tool call does not run, and is answered as one that ran would be
         * unless it was cancelled meanwhile. */
        if (!inflight_remove(call->s, &job->fl))
            call_reply(call, reply_stopped_error(call->stop, cJSON_GetObjectItemCaseSensitive(job->request, "id")));
    }
    return print_replies(call);
}

void mcp_call_cancel(struct mcp_call *call)
{
    size_t i;

    pthread_mutex_lock(&call->s->mu);
    for (i = 0; i < call->njobs; i++)
        if (call->jobs[i].fl != NULL)
            tools_cancel(&call->jobs[i].fl->cancel);
    pthread_mutex_unlock(&call->s->mu);
}

void mcp_session_handle(struct mcp_session *s, const char *text, size_t len, char **reply)
{
    struct mcp_call *call;

    mcp_session_accept(s, text, len, reply, &call);
    if (call != NULL) {
        *reply = mcp_call_run(call);
        mcp_call_free(call);
    }
}
