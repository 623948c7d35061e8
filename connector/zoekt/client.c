/* client.c: see client.h. */
#include "connector/zoekt/client.h"

#include "connector/config.h"
#include "http.h"
#include "json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long long zc_wall_time_ns(long timeout_ms)
{
    /* A tenth of the timeout (at least 200 ms) is left for Zoekt to serialise and send its answer. */
    long margin = timeout_ms / 10 > 200 ? timeout_ms / 10 : 200;
    long wall = timeout_ms > 2 * margin ? timeout_ms - margin : timeout_ms / 2;

    return (long long)(wall > 0 ? wall : 1) * 1000000LL;
}

char *zc_search_body(const char *query, const struct zc_search_opts *o, long timeout_ms)
{
    cJSON *root = cJSON_CreateObject(), *opts;
    /* Exactly the files that can be shown: Zoekt's FileCount tells whether more matched. */
    double files = (double)o->max_files;
    char *out;

    cJSON_AddStringToObject(root, "Q", query);
    opts = cJSON_AddObjectToObject(root, "Opts");
    cJSON_AddNumberToObject(opts, "MaxDocDisplayCount", files);
    if (!o->all_matches)
        cJSON_AddNumberToObject(opts, "MaxMatchDisplayCount", files * ZC_MATCHES_PER_FILE);
    cJSON_AddNumberToObject(opts, "NumContextLines", o->context_lines);
    cJSON_AddBoolToObject(opts, "ChunkMatches", o->chunk_matches);
    cJSON_AddNumberToObject(opts, "MaxWallTime", (double)zc_wall_time_ns(timeout_ms));
    cJSON_AddNumberToObject(opts, "ShardMaxMatchCount", ZC_SHARD_MAX_MATCH_COUNT);
    cJSON_AddNumberToObject(opts, "TotalMaxMatchCount",
                            o->total_max_match_count > 0 ? o->total_max_match_count : ZC_TOTAL_MAX_MATCH_COUNT);
    if (o->whole)
        cJSON_AddBoolToObject(opts, "Whole", 1);
    out = json_print(root);
    cJSON_Delete(root);
    return out;
}

/* POSTs body to base_url + path; on success *resp holds a 2xx answer. Every failure is described with
 * the URL and whether a retry can help. */
/* Go's regexp parser, which Zoekt uses, starts every complaint with this. */
#define ZC_REGEX_ERROR "error parsing regexp: "

/* Whether Zoekt's refusal detail says a pattern of the query is not a regular expression; if so, err
 * says so with Go's reason ("missing closing )"), without the pattern, which is the caller's own. This
 * is the one place that reads Zoekt's prose: callers see ZK_EINVAL. */
static int zc_bad_regex(const char *detail, struct zk_err *err)
{
    const char *why = strstr(detail, ZC_REGEX_ERROR), *end;
    size_t n;

    if (!why)
        return 0;
    why += strlen(ZC_REGEX_ERROR);
    /* Go writes "<reason>: `<the part at fault>`". */
    end = strstr(why, ": `");
    n = end ? (size_t)(end - why) : strlen(why);
    zk_err_set(err, ZK_EINVAL, "a pattern of the query is not a valid regular expression (%.*s); fix the query, "
                               "retrying it unchanged will fail the same way", (int)(n < 200 ? n : 200), why);
    return 1;
}

static int zc_post(const struct zc_conn *c, const char *path, const char *body, struct http_response *resp,
                   char *url, size_t url_size, struct zk_err *err)
{
    const char *base = c->base_url ? c->base_url : "";
    int base_len = (int)strnlen(base, 900);
    struct http_request req;
    char detail[300];
    int rc;

    /* A trailing slash in the configured URL would make "//api/search", which some proxies reject. */
    while (base_len > 0 && base[base_len - 1] == '/')
        base_len--;
    snprintf(url, url_size, "%.*s%s", base_len, base, path);
    memset(&req, 0, sizeof(req));
    req.method = "POST";
    req.url = url;
    req.content_type = "application/json";
    req.body = body;
    req.body_len = strlen(body);
    req.bearer_token = c->token;
    req.timeout_ms = c->timeout_ms;
    req.connect_timeout_ms = c->timeout_ms < 5000 ? c->timeout_ms : 5000;
    req.max_body = CONNECTOR_ZOEKT_RESPONSE_MAX;
    req.cancel = c->cancel;
    req.pool = c->pool;
    req.budget = c->budget;

    rc = http_do(&req, resp, err);
    switch (rc) {
    case ZK_OK:
        break;
    case ZK_ECONNECT:
        return zk_err_prefix(err, "Zoekt is not reachable (retry later; if it persists the search service is down)");
    case ZK_ETIMEOUT:
        return zk_err_prefix(err, "Zoekt did not answer within %ld ms (retry with a narrower query: add repo or "
                                  "file filters)", c->timeout_ms);
    case ZK_ETOOBIG:
        return zk_err_prefix(err, "Zoekt's answer is too large (narrow the query; retrying as is will not help)");
    case ZK_EBUSY:
        return zk_err_prefix(err, "the connector is holding as many large Zoekt answers as its memory bound allows "
                                  "(retry in a moment)");
    case ZK_ECANCELLED:
        return rc;
    default:
        return zk_err_prefix(err, "the connection to Zoekt failed (%s)", zk_err_retry_advice(rc));
    }
    if (resp->status >= 200 && resp->status < 300)
        return ZK_OK;
    zr_error_text(resp->body.data ? resp->body.data : "", resp->body.len, detail, sizeof(detail));
    if (resp->status >= 500 && strstr(detail, "deadline exceeded"))
        return zk_err_set(err, ZK_EHTTP, "Zoekt's time limit ended the search with HTTP %ld at POST %s: %s "
                          "(narrow the query with repo or file filters; retrying it unchanged will likely time "
                          "out again)", resp->status, url, detail);
    /* Zoekt itself never answers these: a proxy in front of it does, with a page of its own (nginx's
     * HTML), while Zoekt is down or restarting. The page says nothing an agent can use. */
    if (resp->status == 502 || resp->status == 503 || resp->status == 504)
        return zk_err_set(err, ZK_ESERVER, "Zoekt is not reachable behind its proxy (HTTP %ld at POST %s): it may be "
                          "restarting; retry in a few seconds", resp->status, url);
    if (resp->status >= 500)
        return zk_err_set(err, ZK_ESERVER, "Zoekt failed with HTTP %ld at POST %s: %s (%s)", resp->status, url,
                          detail, zk_err_retry_advice(ZK_ESERVER));
    if (resp->status == 401 || resp->status == 403)
        return zk_err_set(err, ZK_EHTTP, "Zoekt refused the connector's credentials with HTTP %ld at POST %s: %s "
                          "(a configuration problem; retrying will not help)", resp->status, url, detail);
    if (zc_bad_regex(detail, err))
        return ZK_EINVAL;
    return zk_err_set(err, ZK_EHTTP, "Zoekt rejected the request with HTTP %ld at POST %s: %s (fix the query; "
                      "retrying it unchanged will fail the same way)", resp->status, url, detail);
}

/* Passes rc through; a parse failure gets the likeliest cause in front: whatever answered at the URL is
 * not a zoekt-webserver serving the JSON API (it needs -rpc). */
static int zc_hint_not_zoekt(int rc, const char *url, struct zk_err *err)
{
    if (rc == ZK_EPARSE)
        zk_err_prefix(err, "POST %s answered, but not as Zoekt does (is the URL zoekt-webserver started with -rpc?)",
                      url);
    return rc;
}

int zc_search(const struct zc_conn *c, const char *query, const struct zc_search_opts *o,
              const struct zr_opts *ro, struct zr_search *out, struct zk_err *err)
{
    struct http_response resp;
    char url[1024];
    char *body;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&resp, 0, sizeof(resp));
    body = zc_search_body(query, o, c->timeout_ms);
    rc = zc_post(c, "/api/search", body, &resp, url, sizeof(url), err);
    if (!rc)
        rc = zc_hint_not_zoekt(zr_parse_search(resp.body.data ? resp.body.data : "", resp.body.len, ro, out, err),
                               url, err);
    http_response_free(&resp);
    free(body);
    return rc;
}

int zc_list(const struct zc_conn *c, const char *query, const struct zr_opts *ro, struct zr_list *out,
            struct zk_err *err)
{
    struct http_response resp;
    cJSON *req = cJSON_CreateObject();
    char url[1024];
    char *body;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&resp, 0, sizeof(resp));
    cJSON_AddStringToObject(req, "Q", query ? query : "");
    body = json_print(req);
    cJSON_Delete(req);
    rc = zc_post(c, "/api/list", body, &resp, url, sizeof(url), err);
    if (!rc)
        rc = zc_hint_not_zoekt(zr_parse_list(resp.body.data ? resp.body.data : "", resp.body.len, ro, out, err),
                               url, err);
    http_response_free(&resp);
    free(body);
    return rc;
}
