/* client.h: the connector's two calls to zoekt-webserver, POST /api/search and POST /api/list.
 *
 * Thin I/O over lib/http: builds the JSON request, bounds the answer (CONNECTOR_ZOEKT_RESPONSE_MAX),
 * and turns every failure into one message that names the URL tried and says whether retrying makes
 * sense: connection failed, timed out, Zoekt rejected the request (its {"Error":...} text passed
 * through, e.g. a regex parse error with HTTP 400), or an answer that is not Zoekt's JSON. Parsing is in
 * result.h, so it can be tested without a server. */
#ifndef ZK_ZOEKT_CLIENT_H
#define ZK_ZOEKT_CLIENT_H

#include "connector/zoekt/result.h"
#include "err.h"

#include <stdatomic.h>
#include <stddef.h>

struct http_pool;

/* Explicit match limits, so Zoekt never falls back to its estimate-based defaults and a broad query
 * cannot make it collect millions of matches. */
#define ZC_SHARD_MAX_MATCH_COUNT 10000
#define ZC_TOTAL_MAX_MATCH_COUNT 100000
/* Matches returned per file requested, bounding the answer's size for files with very many matches
 * (unless all_matches asks for every one). Zoekt spends this as one budget across the files in rank
 * order and drops the files after it runs out, so it bounds the files returned too. */
#define ZC_MATCHES_PER_FILE 50

struct zc_conn {
    const char *base_url;        /* zoekt-webserver (or nginx in front of it), no trailing slash */
    const char *token;           /* bearer token, or NULL */
    long timeout_ms;             /* whole request */
    const atomic_int *cancel;    /* may be NULL */
    struct http_pool *pool;      /* keeps connections to Zoekt open between requests; may be NULL */
    struct budget *budget;       /* bounds the answers held at once over the process; may be NULL */
};

struct zc_search_opts {
    int max_files;       /* files the caller will show, all Zoekt is asked for */
    int context_lines;
    int chunk_matches;   /* 1: ask for ChunkMatches (the default); 0: LineMatches */
    int whole;           /* 1: ask for every file's whole content (Whole: true), for read_file */
    int all_matches;     /* 1: no MaxMatchDisplayCount, so that Zoekt returns max_files files whenever
                          * that many match, each with every match */
    int total_max_match_count; /* Zoekt's TotalMaxMatchCount for this webserver; 0: ZC_TOTAL_MAX_MATCH_COUNT.
                                * Search shards (shards.h) each take their part of it, so a corpus in N
                                * shards stops a broad query after as much work as one webserver would. */
};

/* MaxWallTime for a request whose HTTP timeout is timeout_ms, in nanoseconds: a little below it, so
 * that Zoekt answers with what it found before the connector gives up on the connection. */
long long zc_wall_time_ns(long timeout_ms);

/* The JSON body of a search request. Heap string the caller frees. */
char *zc_search_body(const char *query, const struct zc_search_opts *o, long timeout_ms);

/* Runs a search and parses the answer (result.h); *out is owned by the caller (zr_search_free, also
 * after a failure). Returns ZK_OK, ZK_ECONNECT, ZK_ETIMEOUT, ZK_ETRANSPORT, ZK_ECANCELLED, ZK_ETOOBIG,
 * ZK_ESERVER (Zoekt failed with a 5xx), ZK_EHTTP (any other non-2xx, and a 5xx from Zoekt's own time
 * limit, which retrying unchanged will meet again; Zoekt's error text is in the message), ZK_EINVAL
 * (Zoekt refused a pattern of the query as no regular expression; the message gives the parser's
 * reason, e.g. "missing closing )") or ZK_EPARSE. */
int zc_search(const struct zc_conn *c, const char *query, const struct zc_search_opts *o,
              const struct zr_opts *ro, struct zr_search *out, struct zk_err *err);

/* Lists the indexed repositories (query "" means all). Same contract; free with zr_list_free. */
int zc_list(const struct zc_conn *c, const char *query, const struct zr_opts *ro, struct zr_list *out,
            struct zk_err *err);

#endif
