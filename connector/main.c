/* main.c: zoekt-connector, the MCP server that gives coding agents compact Zoekt search results.
 *
 * Parses the flags into a connector_config, then serves MCP either on stdin/stdout (--stdio, for an
 * agent that starts the connector itself) or over Streamable HTTP (--listen, in the search Deployment
 * behind nginx), where the HTTP front door (connector/front) serves /auth, /index-status, /healthz and
 * /metrics and hands /mcp to the MCP transport (connector/mcp/streamable); --metrics-listen adds a second
 * front that serves /metrics alone, for Prometheus on the pod's address. SIGTERM and SIGINT end either
 * mode cleanly.
 *
 * main is four steps, as the operator's is: main_parse_flags, main_start, main_run and main_stop. */
#include "connector/auth.h"
#include "connector/config.h"
#include "connector/front.h"
#include "connector/mcp/streamable.h"
#include "connector/mcp/stdio.h"
#include "connector/metrics.h"
#include "connector/webhook.h"
#include "connector/zoekt/listcache.h"
#include "connector/zoekt/shards.h"
#include "err.h"
#include "flag.h"
#include "http.h"
#include "log.h"
#include "mem.h"
#include "sig.h"
#include "textfile.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_ZOEKT_URL "http://127.0.0.1:6070"
#define DEFAULT_LISTEN "127.0.0.1:8081"
#define TIMEOUT_MAX_MS 600000L
/* Bound on --zoekt-token-file, as on the kube client's token file: tokens from an OIDC provider or an
 * exec plugin run to kilobytes, and the file is read whole. */
#define TOKEN_FILE_MAX (64u * 1024)
/* Connections to Zoekt kept open: one per search running at once, up to the connections nginx keeps
 * open to the connector (its upstream keepalive, 64). */
#define MAIN_ZOEKT_IDLE_CONNECTIONS 64

/* main_parse_flags' answer when the flags are good and the connector should start: not an exit status. */
#define MAIN_GO_ON (-1)

/* The process: the configuration the flags give, the strings made for it, and what main_start starts.
 * main_stop frees all of it. */
struct connector {
    struct connector_config cfg;
    int use_stdio;
    const char *listen; /* HTTP only: DEFAULT_LISTEN unless --listen */
    const char *metrics_listen; /* --metrics-listen: a second front serving /metrics alone, or NULL */
    const char *zoekt_token_file;
    const char *shard_urls; /* --shard-urls as given, or NULL */
    struct zs_set shards;   /* parsed from it; cfg.zoekt_shards points here when given */
    int log_level;
    char *origins, *zoekt_url, *zoekt_token, *corpus; /* heap; cfg points into them */
    struct auth *auth;
    struct mcp_streamable *mcp;
    struct front_route routes[2]; /* /mcp, and /hooks/push when a webhook is configured */
    struct webhook_opts webhook_opts; /* --webhook-*: all three, or none */
    int webhook_discovery;            /* --webhook-discovery: the corpus has spec.sources */
    struct webhook *webhook;
    struct front *front;
    struct front *metrics_front;     /* on metrics_listen */
    struct cmetrics *metrics;        /* cfg.metrics */
    struct budget zoekt_budget;      /* cfg.zoekt_budget */
    struct budget request_budget;    /* cfg.request_budget */
    sigset_t stop_signals; /* blocked in every thread, awaited by main_run */
    int curl_ready;
};

/* Lock-free, so that the signal handler may set it (C11 7.14.1.1). */
static atomic_int stop_requested;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_requested, 1);
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: zoekt-connector [--stdio | --listen HOST:PORT] [flags]\n"
            "       zoekt-connector probe URL   (exit 0 when URL answers 2xx: the container's exec probe)\n"
            "MCP server giving coding agents compact Zoekt code search results.\n\n"
            "  --zoekt-url URL          zoekt-webserver (or nginx in front of it) (default %s)\n"
            "  --stdio                  serve MCP on stdin/stdout (one JSON-RPC message per line)\n"
            "  --listen HOST:PORT       serve Streamable HTTP on /mcp, plus /auth, /index-status, /healthz,\n"
            "                           /metrics (default %s; port 0 picks a free port)\n"
            "  --metrics-listen HOST:PORT  also serve /metrics, and nothing else, there: for Prometheus on\n"
            "                           the pod's address (with --listen; default: none)\n"
            "  --token-file FILE        accepted bearer tokens, one per line (# comments); default: none,\n"
            "                           no authentication\n"
            "  --token-dir DIR          accepted bearer tokens, one per file (a mounted Secret)\n"
            "  --zoekt-token-file FILE  bearer token sent to Zoekt (behind nginx) (default: none)\n"
            "  --shard-urls URL,URL,... a corpus served by 2 to %d search shards: each one's Zoekt (or its\n"
            "                           nginx), in shard order; every call asks all of them and merges the\n"
            "                           answers. Non-loopback shards get the first --token-file/--token-dir\n"
            "                           token as bearer (default: none, --zoekt-url alone)\n"
            "  --mirror-prefix PREFIX   stripped from repository names shown to agents (default: none)\n"
            "  --max-files N            files per search unless the caller asks (default %d, max %d)\n"
            "  --context-lines N        context lines around matches (default %d, max %d)\n"
            "  --search-timeout DUR     deadline of one search, e.g. 30s, 1500ms, 2m (default %lds)\n"
            "  --list-timeout DUR       deadline of one repository listing (default %lds)\n"
            "  --output-budget BYTES    text per tool result (default %d, max %d)\n"
            "  --kubeconfig FILE        for --corpus (default: in-cluster or the usual search)\n"
            "  --corpus NS/NAME         the CodeSearchCorpus this connector serves: corpus_status reads it,\n"
            "                           webhooks annotate it to request a discovery (default: none)\n"
            "  --allowed-origin ORIGIN  an Origin accepted on /mcp; repeatable (default: loopback only)\n"
            "  --rate-limit BURST/RATE  tool calls per Streamable HTTP session: a burst, then RATE per\n"
            "                           second; off for none (default %.0f/%.0f)\n"
            "  --stdio-rate-limit BURST/RATE  the same for the stdio session (default off: its caller\n"
            "                           is the only user of the process)\n"
            "  --webhook-secret-file F  serve POST /hooks/push: webhooks proven with the secret in F\n"
            "  --webhook-repos-file F   with it: the indexer's repository list the pushes are matched to\n"
            "  --webhook-queue-dir DIR  with it: the indexer's request folder a matched push is written to\n"
            "  --webhook-discovery      with --corpus: repository events and pushes of unlisted repositories\n"
            "                           annotate the corpus to request a discovery of its spec.sources\n"
            "  --log-level LEVEL        debug, info, warn or error (default info); logs go to stderr\n"
            "  --help                   show this help\n"
            "  --version                print the version\n",
            DEFAULT_ZOEKT_URL, DEFAULT_LISTEN, SHARD_MAX, CONNECTOR_MAX_FILES_DEFAULT, CONNECTOR_MAX_FILES_LIMIT,
            CONNECTOR_CONTEXT_LINES_DEFAULT, CONNECTOR_CONTEXT_LINES_LIMIT, CONNECTOR_SEARCH_TIMEOUT_MS / 1000L,
            CONNECTOR_LIST_TIMEOUT_MS / 1000L, CONNECTOR_OUTPUT_BUDGET_DEFAULT, CONNECTOR_OUTPUT_BUDGET_LIMIT,
            CONNECTOR_HTTP_RATE_BURST, CONNECTOR_HTTP_RATE_PER_SEC);
}

/* Parses a rate limit: "off", or "BURST/RATE" with a whole burst of 1..100000 calls and a refill
 * rate in calls per second (a number above 0, at most 100000). */
static int parse_rate(const char *s, void *dst)
{
    struct connector_rate *out = dst;
    const char *slash = strchr(s, '/');
    char burst_text[16];
    long burst;
    double rate;

    if (strcmp(s, "off") == 0) {
        out->burst = 0;
        out->per_sec = 0;
        return ZK_OK;
    }
    if (!slash || (size_t)(slash - s) >= sizeof(burst_text))
        return ZK_EINVAL;
    memcpy(burst_text, s, (size_t)(slash - s));
    burst_text[slash - s] = '\0';
    if (flag_long(burst_text, 1, 100000, &burst) != ZK_OK || flag_positive(slash + 1, &rate) != ZK_OK ||
        rate > 100000)
        return ZK_EINVAL;
    out->burst = (double)burst;
    out->per_sec = rate;
    return ZK_OK;
}

/* Reads the first non-blank, non-comment line of path into *out, a heap string the caller frees.
 * Returns ZK_OK, ZK_EINVAL when the file holds no token, or textfile_first_line's error. */
static int read_token(const char *path, char **out, struct zk_err *err)
{
    char *tok = NULL;
    int rc = textfile_first_line(path, TOKEN_FILE_MAX, &tok, err);

    if (rc == ZK_OK && !*tok)
        rc = zk_err_set(err, ZK_EINVAL, "%s holds no token", path);
    if (rc != ZK_OK) {
        free(tok);
        tok = NULL;
    }
    *out = tok;
    return rc;
}

/* Appends origin to the comma-separated heap list at dst (a char **). Returns ZK_OK, or ZK_EINVAL for an
 * empty origin or one holding a comma. A flag_parse callback, called once for each --allowed-origin. */
static int add_origin(const char *origin, void *dst)
{
    char **list = dst;
    size_t old = *list != NULL ? strlen(*list) : 0;
    char *p;

    if (*origin == '\0' || strchr(origin, ',') != NULL)
        return ZK_EINVAL;
    p = mem_realloc(*list, old + strlen(origin) + 2);
    if (old > 0)
        p[old++] = ',';
    strcpy(p + old, origin);
    *list = p;
    return ZK_OK;
}

/* Stores an http:// or https:// URL at dst (a const char **). A flag_parse callback. */
static int parse_url(const char *url, void *dst)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return ZK_EINVAL;
    *(const char **)dst = url;
    return ZK_OK;
}

/* Splits NAMESPACE/NAME into a heap copy held by the connector at dst, which the config points into.
 * A flag_parse callback. */
static int parse_corpus(const char *value, void *dst)
{
    struct connector *c = dst;
    const char *slash = strchr(value, '/');

    if (slash == NULL || slash == value || slash[1] == '\0' || strchr(slash + 1, '/') != NULL)
        return ZK_EINVAL;
    free(c->corpus);
    c->corpus = mem_strdup(value);
    c->corpus[slash - value] = '\0';
    c->cfg.corpus_namespace = c->corpus;
    c->cfg.corpus_name = c->corpus + (slash - value) + 1;
    return ZK_OK;
}

/* Parses the flags into c. Returns MAIN_GO_ON, or the exit status when the process is done: 0 after
 * --help or --version, 2 after a bad flag (with a message on stderr). */
static int main_parse_flags(int argc, char **argv, struct connector *c)
{
    static const char rate_words[] = "BURST/RATE such as 30/5 (calls, calls per second) or off";
    struct connector_config *cfg = &c->cfg;
    int help = 0, version = 0;
    const struct flag flags[] = {
        {.name = "zoekt-url", .type = FLAG_FUNC, .dst = &cfg->zoekt_url, .parse = parse_url,
         .expected = "an http:// or https:// URL"},
        {.name = "stdio", .type = FLAG_SWITCH, .dst = &c->use_stdio},
        {.name = "listen", .type = FLAG_STRING, .dst = &c->listen},
        {.name = "metrics-listen", .type = FLAG_STRING, .dst = &c->metrics_listen},
        {.name = "token-file", .type = FLAG_STRING, .dst = &cfg->token_file},
        {.name = "token-dir", .type = FLAG_STRING, .dst = &cfg->token_dir},
        {.name = "zoekt-token-file", .type = FLAG_STRING, .dst = &c->zoekt_token_file},
        {.name = "shard-urls", .type = FLAG_STRING, .dst = &c->shard_urls},
        {.name = "mirror-prefix", .type = FLAG_STRING, .dst = &cfg->mirror_prefix},
        {.name = "max-files", .type = FLAG_INT, .dst = &cfg->max_files, .lo = 1, .hi = CONNECTOR_MAX_FILES_LIMIT},
        {.name = "context-lines", .type = FLAG_INT, .dst = &cfg->context_lines, .lo = 0,
         .hi = CONNECTOR_CONTEXT_LINES_LIMIT},
        {.name = "search-timeout", .type = FLAG_DURATION_MS, .dst = &cfg->search_timeout_ms, .hi = TIMEOUT_MAX_MS},
        {.name = "list-timeout", .type = FLAG_DURATION_MS, .dst = &cfg->list_timeout_ms, .hi = TIMEOUT_MAX_MS},
        {.name = "output-budget", .type = FLAG_SIZE, .dst = &cfg->output_budget, .lo = 1024,
         .hi = CONNECTOR_OUTPUT_BUDGET_LIMIT},
        {.name = "kubeconfig", .type = FLAG_STRING, .dst = &cfg->kubeconfig},
        {.name = "corpus", .type = FLAG_FUNC, .dst = c, .parse = parse_corpus, .expected = "NAMESPACE/NAME"},
        {.name = "allowed-origin", .type = FLAG_FUNC, .dst = &c->origins, .parse = add_origin,
         .expected = "one origin such as https://example.com"},
        {.name = "log-level", .type = FLAG_FUNC, .dst = &c->log_level, .parse = log_level_flag,
         .expected = LOG_LEVEL_NAMES},
        {.name = "rate-limit", .type = FLAG_FUNC, .dst = &cfg->http_rate, .parse = parse_rate,
         .expected = rate_words},
        {.name = "stdio-rate-limit", .type = FLAG_FUNC, .dst = &cfg->stdio_rate, .parse = parse_rate,
         .expected = rate_words},
        {.name = "webhook-secret-file", .type = FLAG_STRING, .dst = &c->webhook_opts.secret_file},
        {.name = "webhook-repos-file", .type = FLAG_STRING, .dst = &c->webhook_opts.repos_file},
        {.name = "webhook-queue-dir", .type = FLAG_STRING, .dst = &c->webhook_opts.queue_dir},
        {.name = "webhook-discovery", .type = FLAG_SWITCH, .dst = &c->webhook_discovery},
        {.name = "help", .type = FLAG_SWITCH, .dst = &help},
        {.name = "version", .type = FLAG_SWITCH, .dst = &version},
    };
    struct zk_err err = {0};
    size_t n;

    if (flag_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, &err) != ZK_OK) {
        fprintf(stderr, "zoekt-connector: %s (see --help)\n", err.msg);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    if (version) {
        printf("zoekt-connector %s\n", ZK_VERSION);
        return 0;
    }
    if (c->use_stdio && c->listen != NULL) {
        fprintf(stderr, "zoekt-connector: --stdio and --listen exclude each other\n");
        return 2;
    }
    if (c->use_stdio && c->metrics_listen != NULL) {
        fprintf(stderr, "zoekt-connector: --metrics-listen goes with HTTP, not --stdio\n");
        return 2;
    }
    n = !!c->webhook_opts.secret_file + !!c->webhook_opts.repos_file + !!c->webhook_opts.queue_dir;
    if (n != 0 && (n != 3 || c->use_stdio)) {
        fprintf(stderr, "zoekt-connector: --webhook-secret-file, --webhook-repos-file and --webhook-queue-dir go "
                        "together, over HTTP\n");
        return 2;
    }
    if (c->shard_urls != NULL) {
        if (zs_parse(c->shard_urls, &c->shards, &err) != ZK_OK) {
            fprintf(stderr, "zoekt-connector: invalid --shard-urls: %s (see --help)\n", err.msg);
            return 2;
        }
        cfg->zoekt_shards = &c->shards;
    }
    cfg->allowed_origins = c->origins;
    /* The tools append paths such as /api/search, so the base carries no trailing slash. */
    c->zoekt_url = mem_strdup(cfg->zoekt_url);
    for (n = strlen(c->zoekt_url); n > 0 && c->zoekt_url[n - 1] == '/'; n--)
        c->zoekt_url[n - 1] = '\0';
    cfg->zoekt_url = c->zoekt_url;
    if (c->listen == NULL)
        c->listen = DEFAULT_LISTEN;
    return MAIN_GO_ON;
}

/* Starts Streamable HTTP: the accepted tokens, the MCP transport, and the front door with the
 * transport's route, listening. Logs why it failed. */
static int main_start_http(struct connector *c)
{
    struct mcp_streamable_opts mo = {.cfg = &c->cfg, .server_version = ZK_VERSION};
    struct front_opts fo = {.cfg = &c->cfg, .listen = c->listen, .routes = c->routes, .nroutes = 1};
    struct zk_err err;
    int rc;

    zk_err_clear(&err);
    if (!auth_enabled(c->auth))
        log_warn("No --token-file or --token-dir: /mcp and /auth accept every request", NULL);
    mo.auth = fo.auth = c->auth;
    if ((rc = mcp_streamable_new(&mo, &c->mcp, &err)) != ZK_OK) {
        log_error("Cannot set up the MCP transport", "error", err.msg, NULL);
        goto out;
    }
    c->routes[0] = mcp_streamable_route(c->mcp);
    if (c->webhook_opts.secret_file) {
        /* Only a corpus that discovers its repositories is annotated: one with an explicit list has
         * nothing to discover, and its webhooks then need no access to the API server at all. */
        if (c->webhook_discovery) {
            c->webhook_opts.corpus_namespace = c->cfg.corpus_namespace;
            c->webhook_opts.corpus_name = c->cfg.corpus_name;
            c->webhook_opts.kubeconfig = c->cfg.kubeconfig;
            if (!c->cfg.corpus_namespace)
                log_warn("--webhook-discovery without --corpus: no discovery can be requested", NULL);
        }
        if ((rc = webhook_new(&c->webhook_opts, &c->webhook, &err)) != ZK_OK) {
            log_error("Cannot set up the webhook", "error", err.msg, NULL);
            goto out;
        }
        c->routes[fo.nroutes++] = webhook_route(c->webhook);
    }
    /* Every thread started from here on inherits the blocked signals, so they reach sigwait in
     * main_run. */
    sig_stop_set(&c->stop_signals);
    pthread_sigmask(SIG_BLOCK, &c->stop_signals, NULL);
    if ((rc = front_start(&fo, &c->front, &err)) != ZK_OK) {
        log_error("Cannot serve HTTP", "error", err.msg, NULL);
        goto out;
    }
    if (c->metrics_listen) {
        struct front_opts mfo = {.cfg = &c->cfg, .listen = c->metrics_listen, .metrics_only = 1};

        if ((rc = front_start(&mfo, &c->metrics_front, &err)) != ZK_OK)
            log_error("Cannot serve /metrics on --metrics-listen", "error", err.msg, NULL);
    }
out:
    return rc;
}

/* Loads the gateway's bearer tokens: over HTTP the ones /mcp and /auth accept, and, for a sharded
 * corpus, the first of them is the one sent to the other shards' gateways (over stdio too). Logs why it
 * failed. */
static int main_load_tokens(struct connector *c)
{
    struct zk_err err;
    int rc;

    zk_err_clear(&err);
    if (c->use_stdio && !c->cfg.zoekt_shards)
        return ZK_OK;
    if ((rc = auth_new(c->cfg.token_file, c->cfg.token_dir, AUTH_RELOAD_SECONDS, &c->auth, &err)) != ZK_OK) {
        log_error("Cannot load the accepted bearer tokens", "error", err.msg, NULL);
        return rc;
    }
    if (!c->cfg.zoekt_shards || !auth_enabled(c->auth))
        return ZK_OK;
    if ((rc = auth_keep_gateway_token(c->auth, &err)) != ZK_OK) {
        log_error("Cannot load the token sent to the other search shards", "error", err.msg, NULL);
        return rc;
    }
    c->shards.gateway_token = auth_gateway_token;
    c->shards.gateway_arg = c->auth;
    return ZK_OK;
}

/* Reads the Zoekt token, initialises libcurl and, for HTTP, starts serving. Returns a ZK_ code, having
 * logged why it failed; main_stop frees whatever was started either way. The stdio transport starts
 * in main_run: it serves on the calling thread. */
static int main_start(struct connector *c)
{
    struct zk_err err;
    int rc;

    log_setup("zoekt-connector", (enum log_level)c->log_level);
    zk_err_clear(&err);
    if (c->zoekt_token_file != NULL) {
        if ((rc = read_token(c->zoekt_token_file, &c->zoekt_token, &err)) != ZK_OK) {
            log_error("Cannot read --zoekt-token-file", "error", err.msg, NULL);
            goto out;
        }
        c->cfg.zoekt_token = c->zoekt_token;
    }
    if ((rc = main_load_tokens(c)) != ZK_OK)
        goto out;
    /* A client that goes away must not kill the process through a write to a closed pipe or socket. */
    signal(SIGPIPE, SIG_IGN);
    if ((rc = http_global_init()) != ZK_OK) {
        log_error("Cannot initialise libcurl", NULL);
        goto out;
    }
    c->curl_ready = 1;
    /* Every tool call asks Zoekt: kept connections spare each one a TCP connect (and, where Zoekt is
     * reached through a server that starts a thread per connection, that thread). */
    c->cfg.zoekt_pool = http_pool_new(MAIN_ZOEKT_IDLE_CONNECTIONS);
    c->cfg.zoekt_list_cache = zlc_new(NULL);
    c->zoekt_budget.limit = CONNECTOR_ZOEKT_ANSWERS_MAX;
    c->cfg.zoekt_budget = &c->zoekt_budget;
    c->request_budget.limit = CONNECTOR_REQUESTS_MEMORY_MAX;
    c->cfg.request_budget = &c->request_budget;
    /* Counted over stdio too, though only HTTP serves them: the counting costs a few atomic adds. */
    c->metrics = cmetrics_new(c->webhook_opts.secret_file != NULL);
    c->cfg.metrics = c->metrics;
    c->webhook_opts.metrics = c->metrics;
    if (c->use_stdio) {
        if ((!c->cfg.zoekt_shards && (c->cfg.token_file != NULL || c->cfg.token_dir != NULL)) ||
            c->cfg.allowed_origins != NULL)
            log_warn("--token-file, --token-dir and --allowed-origin apply to HTTP only (the tokens also to "
                     "--shard-urls); stdio ignores them", NULL);
        sig_on_stop(on_stop_signal);
        goto out;
    }
    rc = main_start_http(c);
out:
    return rc;
}

/* Serves until the end: end of input or a signal on stdio, a signal on HTTP. Returns the exit status. */
static int main_run(struct connector *c)
{
    struct mcp_stdio_opts so = {
        .cfg = &c->cfg, .server_version = ZK_VERSION, .in_fd = 0, .out_fd = 1, .stop = &stop_requested};
    struct zk_err err;
    char port[16];
    int sig;

    zk_err_clear(&err);
    if (c->use_stdio) {
        if (mcp_stdio_run(&so, &err) != ZK_OK) {
            log_error("The stdio transport failed", "error", err.msg, NULL);
            return 1;
        }
        return 0;
    }
    snprintf(port, sizeof(port), "%d", front_port(c->front));
    log_info("Serving MCP over Streamable HTTP", "listen", c->listen, "port", port, "zoekt", c->cfg.zoekt_url,
             NULL);
    if (c->metrics_front) {
        snprintf(port, sizeof(port), "%d", front_port(c->metrics_front));
        log_info("Serving /metrics", "listen", c->metrics_listen, "port", port, NULL);
    }
    sigwait(&c->stop_signals, &sig);
    log_info("Shutting down", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
    return 0;
}

/* Stops and frees whatever main_parse_flags and main_start made, in an order that matters: the fronts
 * first (the main one cancels the tool calls in flight; both wait for their connection threads), then
 * the transport, the tokens and the metrics those threads used. */
static void main_stop(struct connector *c)
{
    front_stop(c->front);
    front_stop(c->metrics_front);
    mcp_streamable_free(c->mcp);
    webhook_free(c->webhook);
    cmetrics_free(c->metrics);
    auth_free(c->auth);
    http_pool_free(c->cfg.zoekt_pool);
    zlc_free(c->cfg.zoekt_list_cache);
    if (c->curl_ready)
        http_global_cleanup();
    free(c->origins);
    free(c->zoekt_url);
    free(c->zoekt_token);
    free(c->corpus);
    zs_free(&c->shards);
}

/* `zoekt-connector probe URL`: GETs URL and exits 0 on a 2xx answer, 1 otherwise. The pod's exec probes
 * use it because the connector listens on the pod's loopback, which the kubelet's HTTP probes (sent to
 * the pod IP) cannot reach, and because the connector's image has no other HTTP client. */
static int run_probe(const char *url)
{
    struct http_request req = {.method = "GET", .url = url, .accept = "*/*", .timeout_ms = 3000, .max_body = 4096};
    struct http_response resp;
    struct zk_err err;
    int rc;

    zk_err_clear(&err);
    if (http_global_init() != ZK_OK) {
        fprintf(stderr, "zoekt-connector probe: cannot initialise libcurl\n");
        return 1;
    }
    rc = http_do(&req, &resp, &err);
    if (rc == ZK_OK && (resp.status < 200 || resp.status > 299))
        rc = zk_err_set(&err, ZK_EHTTP, "GET %s: HTTP %ld", url, resp.status);
    http_response_free(&resp);
    http_global_cleanup();
    if (rc != ZK_OK) {
        fprintf(stderr, "zoekt-connector probe: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct connector c = {
        .cfg =
            {
                .zoekt_url = DEFAULT_ZOEKT_URL,
                .max_files = CONNECTOR_MAX_FILES_DEFAULT,
                .context_lines = CONNECTOR_CONTEXT_LINES_DEFAULT,
                .search_timeout_ms = CONNECTOR_SEARCH_TIMEOUT_MS,
                .list_timeout_ms = CONNECTOR_LIST_TIMEOUT_MS,
                .output_budget = CONNECTOR_OUTPUT_BUDGET_DEFAULT,
                .http_rate = {CONNECTOR_HTTP_RATE_BURST, CONNECTOR_HTTP_RATE_PER_SEC},
            },
        .log_level = LOG_INFO,
    };
    int rc;

    mem_setup();
    if (argc >= 2 && strcmp(argv[1], "probe") == 0) {
        if (argc != 3) {
            fprintf(stderr, "Usage: zoekt-connector probe URL\n");
            return 2;
        }
        return run_probe(argv[2]);
    }
    rc = main_parse_flags(argc, argv, &c);
    if (rc == MAIN_GO_ON)
        rc = main_start(&c) == ZK_OK ? main_run(&c) : 1;
    main_stop(&c);
    return rc;
}
