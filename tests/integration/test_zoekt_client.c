/* Integration tests for the Zoekt client and the connector's tools against tests/tools/zoekt-replay,
 * which replays recorded zoekt-webserver answers over real HTTP: both result generations, Zoekt's own
 * error text passed through, a server that never answers, one that is not there, and answers that are
 * not Zoekt's JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "connector/tools/tools.h"
#include <microhttpd.h>
#include "connector/zoekt/client.h"
#include "connector/zoekt/listcache.h"
#include "http.h"
#include "tests/support/fixture.h"

static pid_t replay_pid;
static struct zlc *list_cache; /* the tools' list cache, as main.c makes it */
static char replay_url[64];
static char port_file[256];

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int start_replay(void **state)
{
    char bin[1024], fixtures[1024];
    long deadline;
    FILE *f;
    unsigned port = 0;

    (void)state;
    snprintf(bin, sizeof(bin), "%s/build/san/tests/tools/zoekt-replay", fixture_root());
    snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures/zoekt", fixture_root());
    snprintf(port_file, sizeof(port_file), "/tmp/zoekt-replay-%d.port", (int)getpid());
    unlink(port_file);
    replay_pid = fork();
    if (replay_pid == 0) {
        execl(bin, bin, "--fixtures", fixtures, "--port", "0", "--port-file", port_file, (char *)NULL);
        _exit(127);
    }
    if (replay_pid < 0)
        return -1;
    for (deadline = now_ms() + 10000; now_ms() < deadline; usleep(20000)) {
        f = fopen(port_file, "r");
        if (f && fscanf(f, "%u", &port) == 1 && port) {
            fclose(f);
            break;
        }
        if (f)
            fclose(f);
    }
    if (!port) {
        fprintf(stderr, "zoekt-replay (%s) did not start\n", bin);
        kill(replay_pid, SIGKILL);
        return -1;
    }
    snprintf(replay_url, sizeof(replay_url), "http://127.0.0.1:%u", port);
    list_cache = zlc_new(NULL);
    return http_global_init() == ZK_OK ? 0 : -1;
}

static int stop_replay(void **state)
{
    int status = 0;

    (void)state;
    http_global_cleanup();
    zlc_free(list_cache);
    kill(replay_pid, SIGTERM);
    waitpid(replay_pid, &status, 0);
    unlink(port_file);
    /* The replay server runs under the sanitizers too: a leak or crash there fails the suite. */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "zoekt-replay exited with status %d\n", status);
        return -1;
    }
    return 0;
}

static struct zc_conn conn(long timeout_ms)
{
    struct zc_conn c = {replay_url, NULL, timeout_ms, NULL, NULL, NULL};

    return c;
}

static void test_chunk_generation(void **state)
{
    struct zc_conn c = conn(5000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zr_opts ro = {NULL, 2, 0};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zc_search(&c, "needle", &so, &ro, &s, &err), ZK_OK);
    assert_true(s.chunk_matches);
    assert_int_equal(s.n_files, 6);
    assert_int_equal(s.stats.match_count, 13);
    zr_search_free(&s);
}

static void test_line_generation(void **state)
{
    struct zc_conn c = conn(5000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .all_matches = 1};
    struct zr_opts ro = {NULL, 2, 0};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zc_search(&c, "needle", &so, &ro, &s, &err), ZK_OK);
    assert_false(s.chunk_matches);
    assert_int_equal(s.n_files, 6);
    assert_int_equal(s.stats.match_count, 10);
    zr_search_free(&s);
}

static void test_parse_error_passthrough(void **state)
{
    struct zc_conn c = conn(5000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    /* Go's complaint becomes a code of its own, with the reason, so that no caller reads Zoekt's prose. */
    assert_int_equal(zc_search(&c, "foo(", &so, NULL, &s, &err), ZK_EINVAL);
    assert_string_equal(err.msg, "a pattern of the query is not a valid regular expression (missing closing )); fix "
                                 "the query, retrying it unchanged will fail the same way");
    zr_search_free(&s);
}

static void test_hang_times_out(void **state)
{
    struct zc_conn c = conn(1500);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;
    long start = now_ms(), took;

    (void)state;
    assert_int_equal(zc_search(&c, "zk:hang", &so, NULL, &s, &err), ZK_ETIMEOUT);
    took = now_ms() - start;
    if (took < 1400 || took > 3000)
        fail_msg("the timeout took %ld ms, expected about 1500", took);
    assert_non_null(strstr(err.msg, "did not answer within 1500 ms"));
    assert_non_null(strstr(err.msg, "/api/search"));
    zr_search_free(&s);
}

static void test_cancel_stops_a_hang(void **state)
{
    static atomic_int cancel = 1;
    struct zc_conn c = {replay_url, NULL, 10000, &cancel, NULL, NULL};
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;
    long start = now_ms();

    (void)state;
    assert_int_equal(zc_search(&c, "zk:hang", &so, NULL, &s, &err), ZK_ECANCELLED);
    assert_true(now_ms() - start < 3000);
    zr_search_free(&s);
}

/* Cancels a search from another thread while it waits for Zoekt, as notifications/cancelled does. */
static void *cancel_soon(void *flag)
{
    struct timespec wait = {0, 200 * 1000000L};

    nanosleep(&wait, NULL);
    tools_cancel(flag);
    return NULL;
}

/* A search already waiting when its flag is set ends cancelled, woken by tools_cancel rather than at
 * its own next look at the flag. */
static void test_cancel_wakes_a_waiting_search(void **state)
{
    static atomic_int cancel;
    struct zc_conn c = {replay_url, NULL, 10000, &cancel, NULL, NULL};
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, cancel_soon, (void *)&cancel), 0);
    assert_int_equal(zc_search(&c, "zk:hang", &so, NULL, &s, &err), ZK_ECANCELLED);
    pthread_join(t, NULL);
    zr_search_free(&s);
}

static void test_connection_refused(void **state)
{
    struct zc_conn c = {"http://127.0.0.1:1", NULL, 2000, NULL, NULL, NULL};
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    assert_int_equal(zc_search(&c, "needle", &so, NULL, &s, &err), ZK_ECONNECT);
    assert_non_null(strstr(err.msg, "http://127.0.0.1:1/api/search"));
    assert_non_null(strstr(err.msg, "retry later"));
    zr_search_free(&s);
}

static void test_not_zoekt_answers(void **state)
{
    static const char *const queries[] = {"zk:garbage", "zk:truncated"};
    struct zc_conn c = conn(5000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct zk_err err = {0};
        struct zr_search s;

        assert_int_equal(zc_search(&c, queries[i], &so, NULL, &s, &err), ZK_EPARSE);
        assert_non_null(strstr(err.msg, "not valid JSON"));
        assert_non_null(strstr(err.msg, "answered, but not as Zoekt does"));
        zr_search_free(&s);
    }
}

/* Answers far larger than a search's, streamed without a Content-Length: 50 MiB is read (under the
 * 64 MiB bound) and refused as not Zoekt's JSON; 80 MiB is cut at the bound and refused as too large.
 * Either way within seconds, with a short message (at most a few bytes of the body). */
static void test_huge_answers(void **state)
{
    struct zc_conn c = conn(20000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;
    long started;

    (void)state;
    started = now_ms();
    assert_int_equal(zc_search(&c, "zk:huge:50", &so, NULL, &s, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_true(strlen(err.msg) < 600);
    zr_search_free(&s);
    assert_int_equal(zc_search(&c, "zk:huge:80", &so, NULL, &s, &err), ZK_ETOOBIG);
    assert_non_null(strstr(err.msg, "too large"));
    assert_non_null(strstr(err.msg, "narrow the query"));
    assert_non_null(strstr(err.msg, "exceeds the limit of 67108864 bytes"));
    assert_true(strlen(err.msg) < 600);
    zr_search_free(&s);
    assert_true(now_ms() - started < 15000);
}

static void test_server_error(void **state)
{
    struct zc_conn c = conn(5000);
    struct zc_search_opts so = {.max_files = 30, .context_lines = 2, .chunk_matches = 1, .all_matches = 1};
    struct zk_err err = {0};
    struct zr_search s;

    (void)state;
    /* The message's advice and the code's retryable flag (what /index-status reports) agree. */
    assert_int_equal(zc_search(&c, "zk:500", &so, NULL, &s, &err), ZK_ESERVER);
    assert_non_null(strstr(err.msg, "HTTP 500"));
    assert_non_null(strstr(err.msg, "simulated internal error"));
    assert_non_null(strstr(err.msg, "retrying may help"));
    assert_true(zk_err_retryable(err.code));
    zr_search_free(&s);

    /* A proxy's 502 page while Zoekt restarts: a short message that says so, none of the page. */
    assert_int_equal(zc_search(&c, "zk:502", &so, NULL, &s, &err), ZK_ESERVER);
    assert_non_null(strstr(err.msg, "not reachable behind its proxy (HTTP 502"));
    assert_non_null(strstr(err.msg, "retry in a few seconds"));
    assert_null(strstr(err.msg, "<"));
    assert_true(zk_err_retryable(err.code));
    zr_search_free(&s);

    assert_int_equal(zc_search(&c, "zk:deadline", &so, NULL, &s, &err), ZK_EHTTP);
    assert_false(zk_err_retryable(err.code));
    assert_non_null(strstr(err.msg, "Zoekt's time limit ended the search with HTTP 500"));
    assert_non_null(strstr(err.msg, "narrow the query"));
    zr_search_free(&s);
}

/* The replay server answers like Zoekt to anything but POST. */
static void test_get_is_rejected(void **state)
{
    struct http_request req;
    struct http_response resp;
    struct zk_err err = {0};
    char url[128];

    (void)state;
    snprintf(url, sizeof(url), "%s/api/search", replay_url);
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.url = url;
    req.timeout_ms = 5000;
    req.max_body = 4096;
    assert_int_equal(http_do(&req, &resp, &err), ZK_OK);
    assert_int_equal(resp.status, 405);
    assert_string_equal(resp.body.data, "{\"Error\":\"Only POST is supported\"}\n");
    http_response_free(&resp);
}

static void test_list(void **state)
{
    char slash_url[80];
    struct zc_conn c = conn(5000);
    struct zk_err err = {0};
    struct zr_list l;

    (void)state;
    /* A trailing slash in the configured URL is tolerated. */
    snprintf(slash_url, sizeof(slash_url), "%s/", replay_url);
    c.base_url = slash_url;
    assert_int_equal(zc_list(&c, "", NULL, &l, &err), ZK_OK);
    assert_int_equal(l.n_repos, 3);
    assert_string_equal(l.repos[1].name, "beta");
    zr_list_free(&l);
}

/* ---- the tools, end to end -------------------------------------------------------------------- */

static struct connector_config tool_cfg(void)
{
    struct connector_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.zoekt_url = replay_url;
    cfg.max_files = CONNECTOR_MAX_FILES_DEFAULT;
    cfg.context_lines = CONNECTOR_CONTEXT_LINES_DEFAULT;
    cfg.search_timeout_ms = 5000;
    cfg.list_timeout_ms = 5000;
    cfg.output_budget = CONNECTOR_OUTPUT_BUDGET_DEFAULT;
    cfg.zoekt_list_cache = list_cache;
    return cfg;
}

/* Calls tool name with args (JSON text) and returns the result (caller frees). */
static void call(const struct connector_config *cfg, const char *name, const char *args_json,
                 struct tool_result *r)
{
    struct tool_ctx ctx = {cfg, NULL};
    struct zk_err err = {0};
    cJSON *args = cJSON_Parse(args_json);

    tool_result_init(r);
    if (tools_call(&ctx, name, args, r, &err) != ZK_OK)
        fail_msg("%s: %s", name, err.msg);
    cJSON_Delete(args);
}

static void test_tool_search(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct tool_result r;

    (void)state;
    /* The fixtures record Zoekt-syntax queries: these calls ask for that syntax (the default reads the
     * query as one pattern and sends content:"needle", which no fixture answers). */
    call(&cfg, "search_code", "{\"query\":\"needle\",\"syntax\":\"zoekt\"}", &r);
    assert_false(r.is_error);
    assert_non_null(r.text.data);
    /* The header names the commit and age of each repository in the answer (the age by the wall clock). */
    assert_int_equal(strncmp(r.text.data, "Query: needle\n6 files, 13 matches. All shown.\nIndexed: alpha @00d7769e90a9 ",
                             strlen("Query: needle\n6 files, 13 matches. All shown.\nIndexed: alpha @00d7769e90a9 ")),
                     0);
    assert_non_null(strstr(r.text.data, " ago\nMore of a file: read_file with repo, path and start_line.\n\n"
                                        "alpha/README.md @00d7769e\n"));
    assert_int_equal(cJSON_GetObjectItem(r.structured, "totalFiles")->valueint, 6);
    tool_result_free(&r);

    call(&cfg, "search_code", "{\"query\":\"needle\",\"repo\":\"beta\",\"syntax\":\"zoekt\"}", &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "Query: needle repo:(^|/)beta$\n1 file, 3 matches. All shown."));
    assert_non_null(strstr(r.text.data, "> 17: \tneedle := r.URL.Query().Get(\"q\")\n"));
    tool_result_free(&r);
}

static void test_tool_repo_not_indexed_vs_no_match(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct tool_result r;

    (void)state;
    call(&cfg, "search_code", "{\"query\":\"needle\",\"repo\":[\"delta\",\"beta\"]}", &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "No matches."));
    assert_non_null(strstr(r.text.data, "\"delta\" matches no indexed repository; closest: beta."));
    assert_null(strstr(r.text.data, "\"beta\" matches"));
    tool_result_free(&r);

    call(&cfg, "search_code", "{\"query\":\"needle\",\"repo\":\"kubernetes\"}", &r);
    assert_non_null(strstr(r.text.data, "\"kubernetes\" matches no indexed repository; none has a similar name "
                                        "(3 are indexed; list_repositories shows them)."));
    tool_result_free(&r);

    call(&cfg, "search_code", "{\"query\":\"nothing-like-this\",\"repo\":\"alpha\"}", &r);
    assert_non_null(strstr(r.text.data, "the repository searched is indexed; the query matched nothing in it."));
    tool_result_free(&r);
}

static void test_tool_errors(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct tool_result r;

    (void)state;
    call(&cfg, "search_code", "{\"query\":\"foo(\",\"syntax\":\"zoekt\"}", &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "not a valid regular expression (missing closing ))"));
    assert_non_null(strstr(r.text.data, "Query sent: foo("));
    assert_int_equal(r.code, ZK_EINVAL);
    tool_result_free(&r);

    /* Another Zoekt, one that is down: the list cache holds the first one's list (a cache belongs to
     * one Zoekt, as in main.c), so this configuration has none. */
    cfg.zoekt_url = "http://127.0.0.1:1";
    cfg.zoekt_list_cache = NULL;
    call(&cfg, "search_code", "{\"query\":\"needle\"}", &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "not reachable"));
    tool_result_free(&r);
    call(&cfg, "list_repositories", "{}", &r);
    assert_true(r.is_error);
    tool_result_free(&r);
}

static void test_tool_list_repositories(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct tool_result r;

    (void)state;
    call(&cfg, "list_repositories", "{}", &r);
    assert_false(r.is_error);
    /* Each with 12 hex digits of its commit, its index time and (by the wall clock) its age. */
    assert_non_null(strstr(r.text.data, "3 repositories indexed.\n"
                                        "alpha  HEAD@00d7769e90a9  indexed 2026-11-30T00:05:35Z ("));
    assert_non_null(strstr(r.text.data, " ago)\nbeta  HEAD@855231077ead  indexed 2026-11-30T00:05:35Z ("));
    assert_non_null(strstr(r.text.data, " ago)\ngamma  HEAD@25a6d1d7e94d  indexed 2026-11-30T00:05:35Z ("));
    tool_result_free(&r);
    call(&cfg, "list_repositories", "{\"filter\":\"g*\",\"limit\":5}", &r);
    assert_non_null(strstr(r.text.data, "1 of 3 repositories match \"g*\".\n"
                                        "gamma  HEAD@25a6d1d7e94d  indexed 2026-11-30T00:05:35Z ("));
    assert_int_equal(cJSON_GetObjectItem(r.structured, "shown")->valueint, 1);
    tool_result_free(&r);
}

/* list_files end to end, over 22_derived_list_gamma_yaml: gamma's two YAML files as a tree, then a page
 * at a time. The first page's cursor starts the second after the path it showed last, and is refused
 * with other arguments (ref included) or when changed; a repository that is not indexed gets the
 * closest names. */
static void test_tool_list_files(void **state)
{
    static const char *const refused[] = {
        "\"file\":\"*.yml\"",
        "\"file\":\"*.yaml\",\"ref\":\"HEAD\"",
        "\"file\":\"*.yaml\",\"path\":\"deploy\"",
    };
    struct connector_config cfg = tool_cfg();
    struct tool_result r;
    char args[512], *cursor;

    (void)state;
    call(&cfg, "list_files", "{\"repo\":\"gamma\",\"file\":\"*.yaml\"}", &r);
    assert_false(r.is_error);
    assert_string_equal(r.text.data, "Query: repo:(^|/)gamma$ file:(^|/)[^/]*\\.yaml$\n"
                                     "2 files.\n"
                                     "\n"
                                     "gamma @25a6d1d7\n"
                                     "config/app.yaml\n"
                                     "deploy/k8s.yaml\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r.structured, "complete")));
    tool_result_free(&r);

    call(&cfg, "list_files", "{\"repo\":\"gamma\",\"file\":\"*.yaml\",\"max_files\":1}", &r);
    assert_false(r.is_error);
    cursor = strdup(cJSON_GetObjectItem(r.structured, "nextCursor")->valuestring);
    assert_non_null(cursor);
    assert_string_equal(strchr(cursor, '.'), ".gamma%01config/app.yaml%01HEAD");
    snprintf(args, sizeof(args), "2 files, showing the first 1 by path.\n"
                                 "Next page: the same arguments with \"cursor\":\"%s\"\n"
                                 "\n"
                                 "gamma @25a6d1d7\n"
                                 "config/app.yaml\n", cursor);
    assert_non_null(strstr(r.text.data, args));
    tool_result_free(&r);

    snprintf(args, sizeof(args), "{\"repo\":\"gamma\",\"file\":\"*.yaml\",\"max_files\":1,\"cursor\":\"%s\"}",
             cursor);
    call(&cfg, "list_files", args, &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "\n2 files, showing 2 to 2 by path.\n\ngamma @25a6d1d7\ndeploy/k8s.yaml\n"));
    assert_null(cJSON_GetObjectItem(r.structured, "nextCursor"));
    tool_result_free(&r);

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        snprintf(args, sizeof(args), "{\"repo\":\"gamma\",%s,\"cursor\":\"%s\"}", refused[i], cursor);
        call(&cfg, "list_files", args, &r);
        assert_true(r.is_error);
        assert_non_null(strstr(r.text.data, "argument \"cursor\" belongs to another query"));
        tool_result_free(&r);
    }
    strcpy(strchr(cursor, '.') + 1, "gamma:%zz");
    snprintf(args, sizeof(args), "{\"repo\":\"gamma\",\"file\":\"*.yaml\",\"cursor\":\"%s\"}", cursor);
    call(&cfg, "list_files", args, &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "argument \"cursor\" is damaged"));
    tool_result_free(&r);
    free(cursor);

    call(&cfg, "list_files", "{\"repo\":\"gama\"}", &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "\"gama\" matches no indexed repository; closest: gamma"));
    tool_result_free(&r);
}

static void test_tool_corpus_status_without_corpus(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct tool_result r;

    (void)state;
    call(&cfg, "corpus_status", "{}", &r);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "Corpus: not configured"));
    assert_non_null(strstr(r.text.data, ": 3 repositories, 3 shards, newest index 2026-11-30T00:05:35Z"));
    /* The oldest first (equal times by name), each with its commit and age. */
    assert_non_null(strstr(r.text.data, "\nOldest indexes (3 of 3): alpha @00d7769e90a9 "));
    assert_non_null(strstr(r.text.data, " ago, beta @855231077ead "));
    assert_non_null(cJSON_GetObjectItem(r.structured, "index"));
    tool_result_free(&r);
}

/* A configured corpus that cannot be read is reported as such, next to the webserver's view. */
static void test_tool_corpus_status_unreadable(void **state)
{
    static const char kubeconfig[] =
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\n"
        "users:\n- name: u\n  user:\n    token: abc\n"
        "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: default\n";
    struct connector_config cfg = tool_cfg();
    struct tool_result r;
    char path[256];
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "/tmp/zoekt-client-test-%d.kubeconfig", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(kubeconfig, f);
    fclose(f);
    cfg.kubeconfig = path;
    cfg.corpus_namespace = "codesearch";
    cfg.corpus_name = "org";
    call(&cfg, "corpus_status", "{}", &r);
    unlink(path);
    assert_false(r.is_error);
    assert_non_null(strstr(r.text.data, "Corpus codesearch/org: could not be read: "));
    assert_non_null(strstr(r.text.data, "127.0.0.1:1"));
    assert_non_null(strstr(r.text.data, ": 3 repositories, 3 shards"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r.structured, "corpus")));
    tool_result_free(&r);

    /* Neither source answers: now the agent must be told that nothing can be relied on. */
    cfg.zoekt_url = "http://127.0.0.1:1";
    cfg.zoekt_list_cache = NULL; /* the cache holds the other Zoekt's list */
    cfg.kubeconfig = "/nonexistent/kubeconfig";
    call(&cfg, "corpus_status", "{}", &r);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.data, "could not be read"));
    tool_result_free(&r);
}

/* A stand-in Kubernetes API server that serves one CodeSearchCorpus, to test the successful read. */
static enum MHD_Result fake_api(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                const char *version, const char *upload, size_t *upload_size, void **state)
{
    static const char corpus[] =
        "{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\","
        "\"metadata\":{\"name\":\"org\",\"namespace\":\"codesearch\"},"
        "\"status\":{\"repositoryCount\":3,\"lastIndexTime\":\"2026-11-30T00:05:35Z\","
        "\"oldestIndexTime\":\"2026-11-29T00:05:35Z\",\"endpoint\":\"http://org-search.codesearch.svc:8080\","
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Available\"},"
        "{\"type\":\"Fresh\",\"status\":\"False\",\"reason\":\"Stale\","
        "\"message\":\"oldest index is 41h old; maxAge is 36h\"}]}}";
    const char *path = "/apis/codesearch.dev/v1alpha1/namespaces/codesearch/codesearchcorpora/org";
    int found = strcmp(url, path) == 0 && strcmp(method, "GET") == 0;
    struct MHD_Response *r;
    enum MHD_Result ret;

    (void)cls, (void)version, (void)upload, (void)upload_size, (void)state;
    r = found ? MHD_create_response_from_buffer(strlen(corpus), (void *)corpus, MHD_RESPMEM_PERSISTENT)
              : MHD_create_response_from_buffer(2, (void *)"{}", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, found ? 200 : 404, r);
    MHD_destroy_response(r);
    return ret;
}

static void test_tool_corpus_status_reads_the_corpus(void **state)
{
    struct MHD_Daemon *api = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                                              NULL, NULL, fake_api, NULL, MHD_OPTION_END);
    struct connector_config cfg = tool_cfg();
    struct tool_result r;
    char path[256];
    FILE *f;

    (void)state;
    assert_non_null(api);
    snprintf(path, sizeof(path), "/tmp/zoekt-client-test-%d.kubeconfig", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
               "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:%u\n"
               "users:\n- name: u\n  user:\n    token: abc\n"
               "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n",
            MHD_get_daemon_info(api, MHD_DAEMON_INFO_BIND_PORT)->port);
    fclose(f);
    cfg.kubeconfig = path;
    cfg.corpus_namespace = "codesearch";
    cfg.corpus_name = "org";
    call(&cfg, "corpus_status", "{}", &r);
    unlink(path);
    MHD_stop_daemon(api);
    assert_false(r.is_error);
    if (!strstr(r.text.data, "Corpus codesearch/org:\n"
                             "  Ready=True (Available)\n"
                             "  Fresh=False (Stale): oldest index is 41h old; maxAge is 36h\n"
                             "  repositories 3, last index 2026-11-30T00:05:35Z, oldest index 2026-11-29T00:05:35Z, "
                             "endpoint http://org-search.codesearch.svc:8080\n"))
        fail_msg("unexpected report:\n%s", r.text.data);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r.structured, "corpus"), "status"),
                                         "repositoryCount")->valueint, 3);
    tool_result_free(&r);
}

static void test_index_status(void **state)
{
    struct connector_config cfg = tool_cfg();
    struct zk_err err = {0};
    char *json = NULL;

    (void)state;
    assert_int_equal(tools_index_status(&cfg, NULL, &json, &err), ZK_OK);
    assert_string_equal(json, "{\"repositories\":3,\"shards\":3,\"newestIndexTime\":\"2026-11-30T00:05:35Z\","
                              "\"oldestIndexTime\":\"2026-11-30T00:05:35Z\",\"zoektVersion\":\"c4d8f3537f7a\"}");
    free(json);
    cfg.zoekt_url = "http://127.0.0.1:1";
    cfg.zoekt_list_cache = NULL; /* the cache holds the other Zoekt's list */
    assert_int_equal(tools_index_status(&cfg, NULL, &json, &err), ZK_ECONNECT);
    assert_null(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_generation),
        cmocka_unit_test(test_line_generation),
        cmocka_unit_test(test_parse_error_passthrough),
        cmocka_unit_test(test_hang_times_out),
        cmocka_unit_test(test_cancel_stops_a_hang),
        cmocka_unit_test(test_cancel_wakes_a_waiting_search),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_not_zoekt_answers),
        cmocka_unit_test(test_huge_answers),
        cmocka_unit_test(test_server_error),
        cmocka_unit_test(test_get_is_rejected),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_tool_search),
        cmocka_unit_test(test_tool_repo_not_indexed_vs_no_match),
        cmocka_unit_test(test_tool_errors),
        cmocka_unit_test(test_tool_list_repositories),
        cmocka_unit_test(test_tool_list_files),
        cmocka_unit_test(test_tool_corpus_status_without_corpus),
        cmocka_unit_test(test_tool_corpus_status_unreadable),
        cmocka_unit_test(test_tool_corpus_status_reads_the_corpus),
        cmocka_unit_test(test_index_status),
    };
    return cmocka_run_group_tests(tests, start_replay, stop_replay);
}
