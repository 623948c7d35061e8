/* config.h: the connector's settings, filled from flags by main.c and read by everything else.
 * Strings point into argv or into memory main.c owns for the life of the process. */
#ifndef ZK_CONNECTOR_CONFIG_H
#define ZK_CONNECTOR_CONFIG_H

#include <stddef.h>

struct budget;
struct cmetrics;
struct http_pool;
struct zlc;
struct zs_set;

/* Defaults and hard bounds of what a caller may ask for per call. */
#define CONNECTOR_MAX_FILES_DEFAULT 30
#define CONNECTOR_MAX_FILES_LIMIT 200
#define CONNECTOR_CONTEXT_LINES_DEFAULT 2
#define CONNECTOR_CONTEXT_LINES_LIMIT 10
#define CONNECTOR_SEARCH_TIMEOUT_MS 30000
#define CONNECTOR_LIST_TIMEOUT_MS 10000
#define CONNECTOR_OUTPUT_BUDGET_DEFAULT 16384
#define CONNECTOR_OUTPUT_BUDGET_LIMIT 65536
/* Bounds on Zoekt's answers: one answer, and all those the process holds at once, counted at twice
 * their length (lib/budget.h, lib/http.h: the buffer and the parser's tape). 64 MiB holds the
 * repository list of about 25,000 repositories (26 MB for 10,000); 128 MiB is half the connector
 * container's memory limit, so many large answers at once get a retryable "busy" rather than an OOM
 * kill that would end every agent's session. */
#define CONNECTOR_ZOEKT_RESPONSE_MAX (64u << 20)
#define CONNECTOR_ZOEKT_ANSWERS_MAX (128u << 20)
#define CONNECTOR_MCP_REQUEST_MAX (1u << 20)     /* bound on one MCP message */
/* Bound on what the requests being served hold at once over the process (lib/budget.h): their bodies,
 * parses, batch replies and answers not yet sent (connector/front.h, "Memory"). The largest request
 * holds about 13 MiB: 2.25 for a 1 MiB body, 4.5 for its parse at the values' limit, 4 for 2 MiB of
 * batch replies and the array joining them, 2 for the answer's copy. A 1 KiB tool call holds about
 * 84 KiB and twice its reply. With Zoekt's answers (128 MiB) and the process's own 16 MiB, 64 MiB
 * stays below the container's 256 MiB limit, and a flood past it gets 503s, not an OOM kill. */
#define CONNECTOR_REQUESTS_MEMORY_MAX (64u << 20)
/* Default limit on tools/call per Streamable HTTP session: a burst of this many calls, refilled at
 * this many per second. Generous for an agent (which waits for each answer), tight enough that a
 * runaway loop among the clients sharing a server cannot keep Zoekt busy. stdio is not limited by
 * default: its caller is the only user of its own process. */
#define CONNECTOR_HTTP_RATE_BURST 30.0
#define CONNECTOR_HTTP_RATE_PER_SEC 5.0

/* A limit on tools/call per session; burst 0 means no limit. */
struct connector_rate {
    double burst;
    double per_sec;
};

struct connector_config {
    const char *zoekt_url;      /* base URL of zoekt-webserver (or nginx in front of it), no trailing slash */
    const char *zoekt_token;    /* bearer token for zoekt behind nginx, or NULL */
    const struct zs_set *zoekt_shards; /* --shard-urls: the corpus's search shards, every Zoekt call asked
                                        * of all of them (connector/zoekt/shards.h); NULL: zoekt_url alone */
    const char *mirror_prefix;  /* stripped from repository names shown to agents, or NULL */
    int max_files;              /* default files per search */
    int context_lines;          /* default context lines */
    long search_timeout_ms;
    long list_timeout_ms;
    size_t output_budget;       /* default bytes of text per call */
    const char *token_file;     /* accepted bearer tokens for /mcp and /auth, one per line, or NULL */
    const char *token_dir;      /* a mounted Secret: every file holds one accepted token, or NULL */
    const char *kubeconfig;     /* for corpus_status; NULL: in-cluster or the usual kubeconfig search */
    const char *corpus_namespace; /* the CodeSearchCorpus corpus_status reads, or NULL (tool reports it) */
    const char *corpus_name;
    const char *allowed_origins; /* comma-separated Origin values accepted over HTTP, or NULL: loopback only */
    struct connector_rate http_rate;  /* per Streamable HTTP session */
    struct connector_rate stdio_rate; /* for the stdio session */
    struct http_pool *zoekt_pool;     /* open connections to Zoekt, shared by every tool call; may be NULL */
    struct budget *zoekt_budget;      /* CONNECTOR_ZOEKT_ANSWERS_MAX over every call's answer; may be NULL */
    struct budget *request_budget;    /* CONNECTOR_REQUESTS_MEMORY_MAX over the requests served; may be NULL */
    struct zlc *zoekt_list_cache;     /* Zoekt's repository list as search_code's "Indexed:" line reads it
                                       * (connector/zoekt/listcache.h); NULL: that line shows no ages */
    struct cmetrics *metrics;         /* what /metrics shows (connector/metrics.h); NULL: nothing is counted */
};

#endif
