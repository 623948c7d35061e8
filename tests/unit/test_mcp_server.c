/* Unit tests for connector/mcp/server (lifecycle, dispatch, batches, cancellation, rate limit) and the
 * pure helpers of connector/mcp/streamable (Origin, Accept) and connector/front (listen address).
 *
 * The tools are replaced by fakes defined here, so these tests need no Zoekt: the linker takes these
 * definitions and never pulls the real tools from libconn.a. The fakes echo, fail, and wait for their
 * cancel flag, which is what the server's behaviour depends on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "connector/front.h"
#include "connector/mcp/streamable.h"
#include "connector/mcp/jsonrpc.h"
#include "connector/mcp/server.h"
#include "connector/metrics.h"
#include "connector/tools/tools.h"
#include "json.h"

/* ---- fake tools ---------------------------------------------------------------------------- */

static atomic_int wait_started;
/* How many times the fake "big" tool ran. */
static atomic_int big_calls;

cJSON *tools_list(void)
{
    return cJSON_Parse("[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
                       "{\"name\":\"wait\",\"inputSchema\":{\"type\":\"object\"}}]");
}

int tools_call(const struct tool_ctx *ctx, const char *name, const cJSON *args, struct tool_result *out,
               struct zk_err *err)
{
    struct timespec ms = {0, 1000000};
    long long i;

    (void)err;
    if (strcmp(name, "echo") == 0) {
        if (buf_puts(&out->text, json_str(args, "text", "")) != ZK_OK)
            return ZK_ETOOBIG;
        out->structured = cJSON_CreateObject();
        cJSON_AddStringToObject(out->structured, "echo", json_str(args, "text", ""));
        return ZK_OK;
    }
    if (strcmp(name, "fail") == 0) {
        out->is_error = 1;
        return buf_puts(&out->text, "boom");
    }
    /* Real tools' names, for the metrics, which count only those: one that finds Zoekt down, one that
     * answers, one whose answer does not fit (a -32603). */
    if (strcmp(name, "search_code") == 0) {
        out->is_error = 1;
        out->code = ZK_ECONNECT;
        return buf_puts(&out->text, "Zoekt is not reachable");
    }
    if (strcmp(name, "read_file") == 0)
        return buf_puts(&out->text, "12345");
    if (strcmp(name, "list_files") == 0)
        return zk_err_set(err, ZK_ETOOBIG, "the answer does not fit");
    if (strcmp(name, "big") == 0) {
        /* A text of arguments.bytes letters (at most the largest output budget and its notes), for the
         * bound on a batch's reply. */
        atomic_fetch_add(&big_calls, 1);
        for (i = 0; i < json_int(args, "bytes", 0); i++)
            if (buf_putc(&out->text, 'x') != ZK_OK)
                return ZK_ETOOBIG;
        return ZK_OK;
    }
    if (strcmp(name, "wait") == 0) {
        atomic_store(&wait_started, 1);
        /* Waits for the cancel flag, at most 5 s so that a broken cancellation fails the test. */
        for (i = 0; i < 5000 && !(ctx->cancel != NULL && atomic_load(ctx->cancel)); i++)
            nanosleep(&ms, NULL);
        return buf_puts(&out->text, ctx->cancel != NULL && atomic_load(ctx->cancel) ? "cancelled" : "not cancelled");
    }
    return ZK_ENOENT;
}

int tools_index_status(const struct connector_config *cfg, const struct index_status_opts *o, char **json_out,
                       struct zk_err *err)
{
    (void)cfg;
    (void)o;
    (void)err;
    *json_out = strdup("{}");
    return ZK_OK;
}

/* The fake calls make no request to wake: setting the flag is all. */
void tools_cancel(atomic_int *flag)
{
    atomic_store(flag, 1);
}

/* ---- helpers ------------------------------------------------------------------------------- */

static const struct connector_config test_cfg = {.corpus_namespace = "code", .corpus_name = "org"};

static struct mcp_session *new_session(double burst)
{
    struct mcp_session_opts o = {.cfg = &test_cfg, .server_version = "9.9", .rate = {burst, 0.001}};
    struct mcp_session *s = mcp_session_new(&o);

    assert_non_null(s);
    return s;
}

/* Sends text and returns the parsed reply, or NULL when there was none. */
static cJSON *send_msg(struct mcp_session *s, const char *text)
{
    char *reply = NULL;
    cJSON *r;

    mcp_session_handle(s, text, strlen(text), &reply);
    if (reply == NULL)
        return NULL;
    r = cJSON_Parse(reply);
    assert_non_null(r);
    free(reply);
    return r;
}

/* Sends text and returns the reply text as the transport would send it (heap), or NULL. */
static char *send_raw(struct mcp_session *s, const char *text)
{
    char *reply = NULL;

    mcp_session_handle(s, text, strlen(text), &reply);
    return reply;
}

static void assert_utf8(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t left = strlen(text), k;

    for (; left > 0; p += k, left -= k) {
        k = json_utf8_len(p, left);
        if (k == 0)
            fail_msg("not UTF-8 at byte %zu of %s", (size_t)(p - (const unsigned char *)text), text);
    }
}

static void assert_error(cJSON *r, int code)
{
    assert_non_null(r);
    assert_int_equal(json_path(r, "error.code") ? (int)json_path(r, "error.code")->valuedouble : 0, code);
    cJSON_Delete(r);
}

/* A session past initialize with this protocol version, rate-limited to a burst of burst tool calls
 * (0: not limited). */
static struct mcp_session *initialized_limited(const char *version, double burst)
{
    struct mcp_session *s = new_session(burst);
    char text[256];
    cJSON *r;

    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
             "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
             version);
    r = send_msg(s, text);
    assert_string_equal(json_path_str(r, "result.protocolVersion", ""), version);
    cJSON_Delete(r);
    assert_null(send_msg(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
    return s;
}

static struct mcp_session *initialized(const char *version)
{
    return initialized_limited(version, 0);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_version_negotiation(void **state)
{
    (void)state;
    assert_string_equal(mcp_version_negotiate("2025-06-18"), "2025-06-18");
    assert_string_equal(mcp_version_negotiate("2024-11-05"), "2024-11-05");
    assert_string_equal(mcp_version_negotiate("2099-01-01"), MCP_PROTOCOL_LATEST);
    assert_string_equal(mcp_version_negotiate(NULL), MCP_PROTOCOL_LATEST);
    assert_true(mcp_version_supported("2025-11-25"));
    assert_true(mcp_version_supported("2025-03-26"));
    assert_false(mcp_version_supported("2024-10-07"));
    assert_false(mcp_version_supported(NULL));
}

static void test_initialize_result(void **state)
{
    struct mcp_session *s = new_session(0);
    cJSON *r;

    (void)state;
    assert_false(mcp_session_initialized(s));
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":"
                    "{\"protocolVersion\":\"2030-01-01\",\"capabilities\":{}}}");
    assert_string_equal(json_str(r, "id", ""), "init");
    assert_string_equal(json_path_str(r, "result.protocolVersion", ""), MCP_PROTOCOL_LATEST);
    assert_string_equal(json_path_str(r, "result.serverInfo.name", ""), "zoekt-connector");
    assert_string_equal(json_path_str(r, "result.serverInfo.version", ""), "9.9");
    assert_true(cJSON_IsFalse(json_path(r, "result.capabilities.tools.listChanged")));
    assert_non_null(strstr(json_path_str(r, "result.instructions", ""), "code/org"));
    assert_non_null(strstr(json_path_str(r, "result.instructions", ""), "search_code"));
    cJSON_Delete(r);
    assert_true(mcp_session_initialized(s));
    assert_string_equal(mcp_session_version(s), MCP_PROTOCOL_LATEST);
    /* A second initialize is refused and changes nothing. */
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                             "{\"protocolVersion\":\"2024-11-05\"}}"),
                 JSONRPC_INVALID_REQUEST);
    assert_string_equal(mcp_session_version(s), MCP_PROTOCOL_LATEST);
    mcp_session_free(s);
}

static void test_lifecycle_errors(void **state)
{
    struct mcp_session *s = new_session(0);
    cJSON *r;

    (void)state;
    /* ping works before initialize; other requests do not. */
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
    assert_non_null(json_obj(r, "result"));
    assert_int_equal(json_int(r, "id", -1), 5);
    cJSON_Delete(r);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}"), JSONRPC_INVALID_REQUEST);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{}}"),
                 JSONRPC_INVALID_PARAMS);
    assert_false(mcp_session_initialized(s));
    /* Not JSON: -32700 with a null id. */
    r = send_msg(s, "{\"jsonrpc\":");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_error(r, JSONRPC_PARSE_ERROR);
    /* Notifications and responses never get a reply, known or not. */
    assert_null(send_msg(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}"));
    assert_null(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"));
    mcp_session_free(s);

    s = initialized("2025-06-18");
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"resources/list\"}");
    assert_string_equal(json_str(r, "id", ""), "m");
    assert_error(r, JSONRPC_METHOD_NOT_FOUND);
    mcp_session_free(s);
}

/* tools/list is the catalogue as the tools declare it, the same for every revision: it has no
 * outputSchema for an older client to stumble on (structuredContent is what varies, below). */
static void test_tools_list_same_for_every_version(void **state)
{
    static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
    cJSON *want = tools_list();

    (void)state;
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        struct mcp_session *s = initialized(versions[i]);
        cJSON *r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");

        assert_true(cJSON_Compare(json_path(r, "result.tools"), want, 1));
        cJSON_Delete(r);
        mcp_session_free(s);
    }
    cJSON_Delete(want);
}

static void test_tools_call_results(void **state)
{
    struct mcp_session *s = initialized("2025-11-25");
    const cJSON *block;
    cJSON *r;

    (void)state;
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    "\"arguments\":{\"text\":\"hi\"}}}");
    block = cJSON_GetArrayItem(json_path(r, "result.content"), 0);
    assert_string_equal(json_str(block, "type", ""), "text");
    assert_string_equal(json_str(block, "text", ""), "hi");
    assert_string_equal(json_path_str(r, "result.structuredContent.echo", ""), "hi");
    assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
    cJSON_Delete(r);

    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"fail\"}}");
    assert_true(cJSON_IsTrue(json_path(r, "result.isError")));
    assert_string_equal(json_str(cJSON_GetArrayItem(json_path(r, "result.content"), 0), "text", ""), "boom");
    cJSON_Delete(r);

    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}");
    assert_non_null(strstr(json_path_str(r, "error.message", ""), "nope"));
    assert_error(r, JSONRPC_INVALID_PARAMS);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}"),
                 JSONRPC_INVALID_PARAMS);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
                             "{\"name\":\"echo\",\"arguments\":[1]}}"),
                 JSONRPC_INVALID_PARAMS);
    mcp_session_free(s);

    /* Before structured content existed, only the text goes out. */
    s = initialized("2025-03-26");
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                    "\"arguments\":{\"text\":\"hi\"}}}");
    assert_null(json_path(r, "result.structuredContent"));
    assert_non_null(json_path(r, "result.content"));
    cJSON_Delete(r);
    mcp_session_free(s);
}

static void test_batches(void **state)
{
    const char *batch = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                        "\"arguments\":{\"text\":\"b\"}}}]";
    struct mcp_session *s = initialized("2025-06-18");
    cJSON *r;

    (void)state;
    assert_error(send_msg(s, batch), JSONRPC_INVALID_REQUEST);
    mcp_session_free(s);

    s = initialized("2025-03-26");
    r = send_msg(s, batch);
    assert_true(cJSON_IsArray(r));
    assert_int_equal(cJSON_GetArraySize(r), 2); /* the notification gets no entry */
    assert_int_equal(json_int(cJSON_GetArrayItem(r, 0), "id", -1), 1);
    assert_int_equal(json_int(cJSON_GetArrayItem(r, 1), "id", -1), 2);
    assert_string_equal(
        json_str(cJSON_GetArrayItem(json_path(cJSON_GetArrayItem(r, 1), "result.content"), 0), "text", ""), "b");
    cJSON_Delete(r);
    assert_error(send_msg(s, "[]"), JSONRPC_INVALID_REQUEST);
    assert_null(send_msg(s, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]"));
    r = send_msg(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                    "{\"protocolVersion\":\"2025-03-26\"}}]");
    assert_error(cJSON_DetachItemFromArray(r, 0), JSONRPC_INVALID_REQUEST);
    cJSON_Delete(r);
    mcp_session_free(s);
}

/* Writes into text a batch of MCP_BATCH_MAX calls of the fake tool "big", each asking for a 70 KB answer,
 * and resets the count of its runs. */
static void big_batch(char *text, size_t size)
{
    int i;

    strcpy(text, "[");
    for (i = 0; i < MCP_BATCH_MAX; i++)
        snprintf(text + strlen(text), size - strlen(text),
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"big\","
                 "\"arguments\":{\"bytes\":70000}}},",
                 i);
    text[strlen(text) - 1] = ']';
    atomic_store(&big_calls, 0);
}

/* Counts the results of a batch's reply (parsed: all), which must come first, in the order sent, and
 * the short errors after them, whose message must hold why. Frees all. */
static void count_batch_replies(cJSON *all, const char *why, int *ok, int *errors)
{
    const cJSON *r;

    *ok = *errors = 0;
    assert_int_equal(cJSON_GetArraySize(all), MCP_BATCH_MAX);
    cJSON_ArrayForEach(r, all) {
        assert_int_equal(json_int(r, "id", -1), *ok + *errors);
        if (json_obj(r, "result") != NULL) {
            assert_int_equal(*errors, 0);
            (*ok)++;
        } else {
            assert_int_equal(json_int(json_obj(r, "error"), "code", 0), JSONRPC_SERVER_ERROR);
            assert_non_null(strstr(json_path_str(r, "error.message", ""), why));
            (*errors)++;
        }
    }
    cJSON_Delete(all);
}

static void test_batch_bounds(void **state)
{
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},";
    struct mcp_session *s = initialized("2025-03-26");
    char text[8192], *reply;
    cJSON *all;
    int i, ok, errors;

    (void)state;
    /* One entry more than the bound: the batch is refused as a whole, with the limit named. */
    strcpy(text, "[");
    for (i = 0; i <= MCP_BATCH_MAX; i++)
        strcat(text, ping);
    text[strlen(text) - 1] = ']';
    all = send_msg(s, text);
    assert_true(cJSON_IsObject(all));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(all, "id")));
    assert_non_null(strstr(json_path_str(all, "error.message", ""), "at most 32"));
    assert_error(all, JSONRPC_INVALID_REQUEST);
    /* At the bound every entry is answered. */
    strcpy(text, "[");
    for (i = 0; i < MCP_BATCH_MAX; i++)
        strcat(text, ping);
    text[strlen(text) - 1] = ']';
    all = send_msg(s, text);
    assert_int_equal(cJSON_GetArraySize(all), MCP_BATCH_MAX);
    cJSON_Delete(all);

    /* 32 answers of 70 KB would make a reply of 2.2 MB: those past MCP_BATCH_REPLY_MAX get a short
     * error under their own id instead, and do not run. */
    big_batch(text, sizeof(text));
    reply = send_raw(s, text);
    assert_non_null(reply);
    assert_true(strlen(reply) <= MCP_BATCH_REPLY_MAX + MCP_BATCH_MAX * 200);
    all = cJSON_Parse(reply);
    free(reply);
    count_batch_replies(all, "on its own", &ok, &errors);
    assert_true(ok >= 10 && ok < MCP_BATCH_MAX);
    assert_int_equal(atomic_load(&big_calls), ok + 1); /* the one that did not fit ran; none after it */
    mcp_session_free(s);
}

/* The replies of a batch count in the request's budget (twice: the replies and the array joining
 * them). With room for two answers of 70 KB, the third finds none: it and every later entry get the
 * short error asking to send again, and the calls after it do not run; what the replies took stays held
 * until the request's answer is sent, and no more than the budget's limit. */
static void test_batch_replies_count_in_the_budget(void **state)
{
    struct mcp_session *s = initialized("2025-03-26");
    struct budget b = {.limit = 300000};
    struct budget_hold hold = BUDGET_HOLD(&b);
    struct mcp_call *call = NULL;
    char text[8192], *reply = NULL;
    cJSON *all;
    int ok, errors;

    (void)state;
    big_batch(text, sizeof(text));
    mcp_session_accept_json(s, jsonrpc_parse(text, strlen(text)), &hold, &reply, &call);
    assert_null(reply);
    assert_non_null(call);
    reply = mcp_call_run(call);
    mcp_call_free(call);
    assert_non_null(reply);
    all = cJSON_Parse(reply);
    free(reply);
    count_batch_replies(all, "memory allows", &ok, &errors);
    assert_int_equal(ok, 2);
    assert_int_equal(atomic_load(&big_calls), 3); /* the one that found no room ran; none after it */
    assert_true(hold.held >= 2 * 2 * 70000 && hold.held <= b.limit);
    assert_int_equal(atomic_load(&b.used), hold.held);
    budget_release(&hold);
    assert_int_equal(atomic_load(&b.used), 0);
    mcp_session_free(s);
}

static void test_replies_are_utf8_with_the_id_sent(void **state)
{
    struct mcp_session *s = initialized("2025-06-18");
    char text[1024], *reply;
    const char *msg;
    cJSON *r;

    (void)state;
    /* An unknown tool's name is quoted safely: no raw bytes, no control characters, at most 64
     * characters. */
    snprintf(text, sizeof(text),
             "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
             "{\"name\":\"\xff\\u0001\\u0000%0300d\"}}",
             0);
    reply = send_raw(s, text);
    assert_utf8(reply);
    r = cJSON_Parse(reply);
    free(reply);
    msg = json_path_str(r, "error.message", "");
    assert_true(strncmp(msg, "Unknown tool: \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "000", 29) == 0);
    assert_true(strlen(msg) < 14 + 64 * 3 + 3 + 1);
    assert_error(r, JSONRPC_INVALID_PARAMS);

    /* An id that could not come back unchanged is refused, id null, saying why. */
    reply = send_raw(s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"ping\"}");
    assert_utf8(reply);
    r = cJSON_Parse(reply);
    free(reply);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_non_null(strstr(json_path_str(r, "error.message", ""), "UTF-8"));
    assert_error(r, JSONRPC_INVALID_REQUEST);
    reply = send_raw(s, "{\"jsonrpc\":\"2.0\",\"id\":\"\xfe\",\"method\":\"tools/list\"}");
    assert_utf8(reply);
    r = cJSON_Parse(reply);
    free(reply);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_error(r, JSONRPC_INVALID_REQUEST);

    /* A tool's own text that is not UTF-8 goes out as U+FFFD. */
    reply = send_raw(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                        "\"arguments\":{\"text\":\"a\xffz\"}}}");
    assert_utf8(reply);
    assert_non_null(strstr(reply, "a\xef\xbf\xbdz"));
    free(reply);
    mcp_session_free(s);
}

/* Runs n tool calls over the rate limit on a session whose burst is spent, and returns what the
 * session logged meanwhile and when it ended (heap). */
static char *log_of_refusals(int n)
{
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
    struct mcp_session *s = initialized_limited("2025-06-18", 1);
    FILE *f = tmpfile();
    int saved, i;
    char *text;
    long len;
    cJSON *r;

    assert_non_null(f);
    r = send_msg(s, call);
    assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
    cJSON_Delete(r);
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    assert_true(saved >= 0 && dup2(fileno(f), STDERR_FILENO) >= 0);
    for (i = 0; i < n; i++) {
        r = send_msg(s, call);
        assert_true(cJSON_IsTrue(json_path(r, "result.isError")));
        cJSON_Delete(r);
    }
    mcp_session_free(s);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    len = ftell(f);
    text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

static void test_rate_limit_logs_bounded(void **state)
{
    char *log = log_of_refusals(1000), *p;
    int lines = 0;

    (void)state;
    /* 1000 refusals in a row: the first is logged as it happens, the rest counted in one more line. */
    for (p = log; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 2);
    assert_non_null(strstr(log, "\"tool\":\"echo\""));
    assert_non_null(strstr(log, "\"refused\":\"1000\""));
    free(log);
}

struct runner {
    struct mcp_call *call;
    char *reply;
};

static void *run_call(void *arg)
{
    struct runner *rn = arg;

    rn->reply = mcp_call_run(rn->call);
    mcp_call_free(rn->call);
    return NULL;
}

static void test_cancellation(void **state)
{
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"tools/call\",\"params\":{\"name\":\"wait\"}}";
    struct mcp_session *s = initialized("2025-06-18");
    struct runner rn = {0};
    struct timespec ms = {0, 1000000};
    char *reply = NULL;
    pthread_t th;
    cJSON *r;

    (void)state;
    atomic_store(&wait_started, 0);
    mcp_session_accept(s, req, strlen(req), &reply, &rn.call);
    assert_null(reply);
    assert_non_null(rn.call);
    assert_int_equal(pthread_create(&th, NULL, run_call, &rn), 0);
    while (!atomic_load(&wait_started))
        nanosleep(&ms, NULL);
    /* The same id again while it runs is refused. */
    assert_error(send_msg(s, req), JSONRPC_INVALID_REQUEST);
    /* A cancellation for another id, or of another type, changes nothing; the right one stops it. */
    assert_null(send_msg(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}"));
    assert_null(send_msg(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                            "{\"requestId\":\"w1\",\"reason\":\"test\"}}"));
    pthread_join(th, NULL);
    assert_null(rn.reply); /* a cancelled request gets no response */
    /* The session goes on, and the id is free again. */
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"ping\"}");
    assert_non_null(json_obj(r, "result"));
    cJSON_Delete(r);
    mcp_session_free(s);
}

static void test_call_cancel_from_another_thread(void **state)
{
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"wait\"}}";
    struct mcp_session *s = initialized("2025-06-18");
    struct runner rn = {0};
    struct timespec ms = {0, 1000000};
    char *reply = NULL;
    pthread_t th;
    cJSON *r;

    (void)state;
    atomic_store(&wait_started, 0);
    mcp_session_accept(s, req, strlen(req), &reply, &rn.call);
    assert_int_equal(pthread_create(&th, NULL, run_call, &rn), 0);
    while (!atomic_load(&wait_started))
        nanosleep(&ms, NULL);
    /* What a transport does when its peer hangs up. */
    mcp_call_cancel(rn.call);
    pthread_join(th, NULL);
    assert_null(rn.reply);
    /* Only that call was stopped: the session takes new ones. */
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}");
    assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
    cJSON_Delete(r);
    mcp_session_free(s);
}

static void test_close_cancels_and_refuses(void **state)
{
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"wait\"}}";
    struct mcp_session *s = initialized("2025-06-18");
    struct runner rn = {0};
    struct timespec ms = {0, 1000000};
    char *reply = NULL;
    pthread_t th;

    (void)state;
    atomic_store(&wait_started, 0);
    mcp_session_accept(s, req, strlen(req), &reply, &rn.call);
    assert_int_equal(pthread_create(&th, NULL, run_call, &rn), 0);
    while (!atomic_load(&wait_started))
        nanosleep(&ms, NULL);
    mcp_session_close(s);
    pthread_join(th, NULL);
    assert_null(rn.reply);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}"),
                 JSONRPC_INVALID_REQUEST);
    mcp_session_free(s);
}

/* Each call that ran is counted under its tool with how it ended, its time and the text it showed; a
 * name that is no tool's only in the unknown counter; a refused call only as rate-limited. */
static void test_calls_counted(void **state)
{
    struct connector_config cfg = test_cfg;
    struct mcp_session_opts o = {.cfg = &cfg, .server_version = "9.9", .rate = {3, 0.001}};
    struct mcp_session *s;
    struct buf b;
    cJSON *r;

    (void)state;
    cfg.metrics = cmetrics_new(0);
    s = mcp_session_new(&o);
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                    "\"2025-06-18\"}}");
    cJSON_Delete(r);
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_code\"}}");
    assert_true(cJSON_IsTrue(json_path(r, "result.isError")));
    cJSON_Delete(r);
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\"}}");
    assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
    cJSON_Delete(r);
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                             "\"list_files\"}}"),
                 JSONRPC_INTERNAL_ERROR);
    r = send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\"}}");
    assert_non_null(strstr(json_str(cJSON_GetArrayItem(json_path(r, "result.content"), 0), "text", ""), "Rate limit"));
    cJSON_Delete(r);
    mcp_session_free(s);
    o.rate.burst = 0;
    s = mcp_session_new(&o);
    cJSON_Delete(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                             "\"protocolVersion\":\"2025-06-18\"}}"));
    assert_error(send_msg(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}"),
                 JSONRPC_INVALID_PARAMS);
    mcp_session_free(s);

    buf_init(&b, CMETRICS_TEXT_MAX);
    assert_int_equal(cmetrics_render(cfg.metrics, &b), ZK_OK);
    assert_non_null(strstr(b.data, "zoekt_connector_tool_calls_total{tool=\"search_code\"} 1\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_errors_total{tool=\"search_code\",kind=\"unavailable\"} 1\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_output_bytes_total{tool=\"search_code\"} 22\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_calls_total{tool=\"read_file\"} 1\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_output_bytes_total{tool=\"read_file\"} 5\n"));
    assert_non_null(
        strstr(b.data, "zoekt_connector_tool_errors_total{tool=\"read_file\",kind=\"invalid_argument\"} 0\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_rate_limited_total{tool=\"read_file\"} 1\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_errors_total{tool=\"list_files\",kind=\"internal\"} 1\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_tool_output_bytes_total{tool=\"list_files\"} 0\n"));
    assert_non_null(strstr(b.data, "zoekt_connector_unknown_tool_calls_total 1\n"));
    assert_null(strstr(b.data, "nope"));
    buf_free(&b);
    cmetrics_free(cfg.metrics);
}

static void test_rate_limit(void **state)
{
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}";
    struct mcp_session *s = initialized_limited("2025-06-18", 2);
    struct mcp_bucket b;
    double wait = 0;
    cJSON *r;
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        r = send_msg(s, call);
        assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
        cJSON_Delete(r);
    }
    r = send_msg(s, call);
    assert_true(cJSON_IsTrue(json_path(r, "result.isError")));
    assert_non_null(strstr(json_str(cJSON_GetArrayItem(json_path(r, "result.content"), 0), "text", ""), "Rate limit"));
    cJSON_Delete(r);
    mcp_session_free(s);

    /* Without a limit (stdio's default) a fan-out of many calls at once is served in full. */
    s = initialized("2025-06-18");
    for (i = 0; i < 100; i++) {
        r = send_msg(s, call);
        assert_true(cJSON_IsFalse(json_path(r, "result.isError")));
        cJSON_Delete(r);
    }
    mcp_session_free(s);

    /* The bucket itself: a burst, then one token per 1/rate seconds, never more than the burst. */
    mcp_bucket_init(&b, 3, 2, 100.0);
    for (i = 0; i < 3; i++)
        assert_true(mcp_bucket_take(&b, 100.0, NULL));
    assert_false(mcp_bucket_take(&b, 100.0, &wait));
    assert_true(wait > 0.49 && wait < 0.51);
    assert_false(mcp_bucket_take(&b, 100.4, NULL));
    assert_true(mcp_bucket_take(&b, 100.5, NULL));
    for (i = 0; i < 3; i++)
        assert_true(mcp_bucket_take(&b, 1000.0, NULL));
    assert_false(mcp_bucket_take(&b, 1000.0, NULL));
}

static void test_http_origin_accept_listen(void **state)
{
    struct sockaddr_storage addr;
    socklen_t len;
    struct zk_err err;

    (void)state;
    assert_true(mcp_streamable_origin_allowed(NULL, NULL));
    assert_true(mcp_streamable_origin_allowed("http://localhost:3000", NULL));
    assert_true(mcp_streamable_origin_allowed("https://127.0.0.1", NULL));
    assert_true(mcp_streamable_origin_allowed("http://[::1]:8080", NULL));
    assert_false(mcp_streamable_origin_allowed("http://localhost.evil.com", NULL));
    assert_false(mcp_streamable_origin_allowed("http://127.0.0.1:80x", NULL));
    assert_false(mcp_streamable_origin_allowed("https://evil.example", NULL));
    assert_false(mcp_streamable_origin_allowed("null", NULL));
    assert_true(mcp_streamable_origin_allowed("https://a.example", "https://b.example, https://A.example"));
    assert_false(mcp_streamable_origin_allowed("https://a.example.org", "https://a.example"));
    assert_false(mcp_streamable_origin_allowed("http://localhost", "https://a.example"));

    assert_true(mcp_streamable_accept_json(NULL));
    assert_true(mcp_streamable_accept_json("application/json, text/event-stream"));
    assert_true(mcp_streamable_accept_json("text/event-stream;q=0.9, */*;q=0.1"));
    assert_false(mcp_streamable_accept_json("text/event-stream"));
    assert_false(mcp_streamable_accept_json("application/jsonx"));

    assert_int_equal(front_parse_listen("127.0.0.1:8081", &addr, &len, &err), ZK_OK);
    assert_int_equal(addr.ss_family, AF_INET);
    assert_int_equal(front_parse_listen("[::1]:0", &addr, &len, &err), ZK_OK);
    assert_int_equal(addr.ss_family, AF_INET6);
    assert_int_equal(front_parse_listen(":9000", &addr, &len, &err), ZK_OK);
    assert_int_equal(addr.ss_family, AF_INET);
    assert_int_equal(front_parse_listen("8081", &addr, &len, &err), ZK_EINVAL);
    assert_int_equal(front_parse_listen("127.0.0.1:http", &addr, &len, &err), ZK_EINVAL);
}

/* ---- the Streamable HTTP session table, over loopback ---------------------------------------- */

/* The client a request comes from in mcp_post: NULL for this machine's loopback address itself, else the
 * address a gateway on the loopback would name in X-Forwarded-For. */
static const char *post_from;

/* POSTs body to /mcp on port, with the session id sid when not NULL, over a connection of its own, as
 * post_from. Returns the HTTP status and copies the answer's Mcp-Session-Id into sid_out (when not
 * NULL; "" when none came) and the start of its body into body (when not NULL; bsize bytes). */
static int mcp_post(int port, const char *sid, const char *body, char *sid_out, char *out, size_t osize)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    char req[2048], resp[16384];
    const char *h, *b;
    size_t got = 0;
    ssize_t n;
    int fd, status = 0;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    n = snprintf(req, sizeof(req),
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 "Accept: application/json, text/event-stream\r\nConnection: close\r\n%s%s%s%s%s%s"
                 "Content-Length: %zu\r\n\r\n%s",
                 sid ? "Mcp-Session-Id: " : "", sid ? sid : "", sid ? "\r\n" : "",
                 post_from ? "X-Forwarded-For: 203.0.113.250, " : "", post_from ? post_from : "",
                 post_from ? "\r\n" : "", strlen(body), body);
    assert_int_equal(write(fd, req, (size_t)n), n);
    while (got < sizeof(resp) - 1 && (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    resp[got] = '\0';
    assert_int_equal(sscanf(resp, "HTTP/1.1 %d", &status), 1);
    if (sid_out != NULL) {
        sid_out[0] = '\0';
        h = strcasestr(resp, "\r\nMcp-Session-Id: ");
        if (h != NULL)
            sscanf(h + 18, "%32[0-9a-f]", sid_out);
    }
    if (out != NULL) {
        b = strstr(resp, "\r\n\r\n");
        snprintf(out, osize, "%s", b != NULL ? b + 4 : "");
    }
    return status;
}

/* The session table's tests: an initialize, a tool call, and the transport on a front over loopback. */
static const char http_init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}";
static const char http_call[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                                "{\"name\":\"echo\",\"arguments\":{\"text\":\"alive\"}}}";

/* Long enough for a never-used session to have waited out its grace. */
static const struct timespec past_grace = {MCP_STREAMABLE_UNUSED_GRACE_S, 500000000};

struct http_fx {
    struct mcp_streamable *h;
    struct front_route route;
    struct front *f;
    int port;
};

static void http_fx_start(struct http_fx *x)
{
    struct mcp_streamable_opts o = {.cfg = &test_cfg, .server_version = "9.9"};
    struct front_opts fo = {.cfg = &test_cfg, .listen = "127.0.0.1:0", .nroutes = 1};
    struct zk_err err = {0};

    assert_int_equal(mcp_streamable_new(&o, &x->h, &err), ZK_OK);
    x->route = mcp_streamable_route(x->h);
    fo.routes = &x->route;
    assert_int_equal(front_start(&fo, &x->f, &err), ZK_OK);
    x->port = front_port(x->f);
}

static void http_fx_stop(struct http_fx *x)
{
    front_stop(x->f);
    mcp_streamable_free(x->h);
    post_from = NULL;
}

static void test_http_session_flood(void **state)
{
    char agent[40], sid[40], body[4096], flooder[32];
    struct http_fx x;
    int i;

    (void)state;
    http_fx_start(&x);

    /* An agent that works, then a flood of sessions that never make a call fills the table. */
    assert_int_equal(mcp_post(x.port, NULL, http_init, agent, NULL, 0), 200);
    assert_int_equal(strlen(agent), 32);
    assert_int_equal(mcp_post(x.port, agent, http_call, NULL, body, sizeof(body)), 200);
    assert_non_null(strstr(body, "alive"));
    for (i = 1; i < MCP_STREAMABLE_MAX_SESSIONS; i++) {
        snprintf(flooder, sizeof(flooder), "192.0.2.%d", i / MCP_STREAMABLE_SESSIONS_PER_CLIENT);
        post_from = flooder;
        assert_int_equal(mcp_post(x.port, NULL, http_init, NULL, NULL, 0), 200);
    }
    post_from = "192.0.2.100"; /* a client with no session yet */
    /* Within their grace the flood's sessions stay, so the table is full for now: refused at once,
     * and without a line in the log each (a flood once wrote 4,700 lines a second). */
    {
        FILE *logged = tmpfile();
        int saved;

        assert_non_null(logged);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(saved >= 0 && dup2(fileno(logged), STDERR_FILENO) >= 0);
        for (i = 0; i < 100; i++)
            assert_int_equal(mcp_post(x.port, NULL, http_init, NULL, body, sizeof(body)), 503);
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        assert_int_equal(ftell(logged), 0);
        fclose(logged);
    }
    assert_non_null(strstr(body, "too many MCP sessions"));

    /* Past it, a new agent gets in, pushing out one of the flood's sessions, not the working one. */
    nanosleep(&past_grace, NULL);
    post_from = "198.51.100.7";
    assert_int_equal(mcp_post(x.port, NULL, http_init, sid, NULL, 0), 200);
    assert_int_equal(strlen(sid), 32);
    assert_int_equal(mcp_post(x.port, sid, http_call, NULL, body, sizeof(body)), 200);
    post_from = NULL;
    assert_int_equal(mcp_post(x.port, agent, http_call, NULL, body, sizeof(body)), 200);
    assert_non_null(strstr(body, "alive"));
    http_fx_stop(&x);
}

/* One client holds at most MCP_STREAMABLE_SESSIONS_PER_CLIENT sessions, so that a flood from one
 * address (with a valid token, as here none is needed) cannot keep other agents out: past its share it
 * is refused, saying so, while another client still gets in; after the grace it may replace only its
 * own never-used sessions, and its session that made a call stays. Before, one client could fill the
 * whole table, and then win every place that came free. */
static void test_http_session_share(void **state)
{
    char worker[40], first[40], sid[40], body[4096];
    struct http_fx x;
    int i;

    (void)state;
    http_fx_start(&x);

    post_from = "192.0.2.1";
    assert_int_equal(mcp_post(x.port, NULL, http_init, worker, NULL, 0), 200);
    assert_int_equal(mcp_post(x.port, worker, http_call, NULL, body, sizeof(body)), 200);
    assert_int_equal(mcp_post(x.port, NULL, http_init, first, NULL, 0), 200);
    for (i = 2; i < MCP_STREAMABLE_SESSIONS_PER_CLIENT; i++)
        assert_int_equal(mcp_post(x.port, NULL, http_init, NULL, NULL, 0), 200);
    assert_int_equal(mcp_post(x.port, NULL, http_init, NULL, body, sizeof(body)), 503);
    assert_non_null(strstr(body, "too many MCP sessions from this client"));
    /* The table is far from full: another client is served. */
    post_from = "192.0.2.2";
    assert_int_equal(mcp_post(x.port, NULL, http_init, sid, NULL, 0), 200);
    assert_int_equal(mcp_post(x.port, sid, http_call, NULL, body, sizeof(body)), 200);
    /* After the grace the first client replaces its own never-used sessions, the oldest first, and
     * keeps the one that works; it still never holds more than its share. */
    nanosleep(&past_grace, NULL);
    post_from = "192.0.2.1";
    assert_int_equal(mcp_post(x.port, NULL, http_init, NULL, NULL, 0), 200);
    assert_int_equal(mcp_post(x.port, first, http_call, NULL, body, sizeof(body)), 404);
    assert_int_equal(mcp_post(x.port, worker, http_call, NULL, body, sizeof(body)), 200);
    assert_non_null(strstr(body, "alive"));
    post_from = "192.0.2.2";
    assert_int_equal(mcp_post(x.port, sid, http_call, NULL, body, sizeof(body)), 200);
    http_fx_stop(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_negotiation),
        cmocka_unit_test(test_initialize_result),
        cmocka_unit_test(test_lifecycle_errors),
        cmocka_unit_test(test_tools_list_same_for_every_version),
        cmocka_unit_test(test_tools_call_results),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_batch_bounds),
        cmocka_unit_test(test_batch_replies_count_in_the_budget),
        cmocka_unit_test(test_replies_are_utf8_with_the_id_sent),
        cmocka_unit_test(test_rate_limit_logs_bounded),
        cmocka_unit_test(test_cancellation),
        cmocka_unit_test(test_call_cancel_from_another_thread),
        cmocka_unit_test(test_close_cancels_and_refuses),
        cmocka_unit_test(test_rate_limit),
        cmocka_unit_test(test_calls_counted),
        cmocka_unit_test(test_http_origin_accept_listen),
        cmocka_unit_test(test_http_session_flood),
        cmocka_unit_test(test_http_session_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
