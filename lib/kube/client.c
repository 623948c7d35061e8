/* client.c: see client.h.
 *
 * Every verb comes down to kcli_do, which adds the bearer token, performs one lib/http request and turns
 * a non-2xx answer into a kube_err. The token is the only mutable state shared between threads. */
#include "kube/client.h"

#include "buf.h"
#include "jscan.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "textfile.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KCLI_DEFAULT_TIMEOUT_MS 30000
/* Connections kept open for the next request: the controller's steady state (two workers, the leader
 * elector; each watch holds its own while it runs). A reconcile that applies a new corpus's children
 * all at once opens more, which are closed after use rather than kept for the rare next burst. */
#define KCLI_IDLE_CONNECTIONS 4
/* A response (one page of a list) larger than this is refused rather than buffered. */
#define KCLI_MAX_BODY (64u * 1024 * 1024)
/* How much of a streamed body is kept to explain an error status. */
#define KCLI_STREAM_HEAD (64u * 1024)
/* The longest request URL built: far past any the API needs, short of what a server accepts. */
#define KCLI_URL_MAX (64u * 1024)
#define KCLI_MAX_TOKEN (64u * 1024)
/* client-go re-reads a token file every minute: projected tokens are refreshed at 80% of their life. */
#define KCLI_TOKEN_PERIOD_S 60
/* An exec plugin's token is renewed this long before it expires, so a request never carries a token
 * that expires on its way. */
#define KCLI_EXEC_MARGIN_S 30
/* A plugin that takes longer is killed (aws eks get-token takes about a second). */
#define KCLI_EXEC_TIMEOUT_MS 60000

struct kube_client {
    struct kube_config cfg;
    struct http_tls tls;
    struct http_pool *pool; /* connections kept open between requests; used by every thread */
    long timeout_ms;
    pthread_mutex_t token_lock;
    char *token;         /* the bearer token in use, or NULL; guarded by token_lock */
    time_t token_read;   /* when token_file was last read; guarded by token_lock */
    time_t token_expiry; /* when the exec plugin's token expires, 0 if never; guarded by token_lock */
};

void kube_err_clear(struct kube_err *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof(*err));
    err->retry_after = -1;
}

/* Records a transport failure (already described in z) in err. */
static int kcli_transport(struct kube_err *err, int code, const struct zk_err *z)
{
    if (!err)
        return code;
    kube_err_clear(err);
    err->base.code = code;
    snprintf(err->base.msg, sizeof(err->base.msg), "%s", z->msg);
    return code;
}

/* Records a local failure as "what: detail". */
static int kcli_fail(struct kube_err *err, int code, const char *what, const char *detail)
{
    struct zk_err z;

    zk_err_set(&z, code, "%s: %s", what, detail);
    return kcli_transport(err, code, &z);
}

/* Reads the token file (its first line, trimmed) into a heap string. */
static int kcli_read_token(const char *path, char **out, struct zk_err *err)
{
    int rc = textfile_first_line(path, KCLI_MAX_TOKEN, out, err);

    if (rc != ZK_OK)
        return zk_err_prefix(err, "bearer token file");
    if (!**out) {
        free(*out);
        *out = NULL;
        return zk_err_set(err, ZK_EINVAL, "bearer token file %s is empty", path);
    }
    return ZK_OK;
}

/* Whether the token in use must be replaced before the next request. Called with token_lock held. */
static int kcli_token_stale(const struct kube_client *c, time_t now)
{
    if (!c->token)
        return 1;
    if (c->cfg.exec)
        return c->token_expiry != 0 && now >= c->token_expiry - KCLI_EXEC_MARGIN_S;
    return c->cfg.token_file && now - c->token_read >= KCLI_TOKEN_PERIOD_S;
}

/* Gets a fresh token from the exec plugin or the token file into *fresh (and *expiry). */
static int kcli_token_fetch(const struct kube_client *c, char **fresh, time_t *expiry, struct zk_err *err)
{
    struct kube_exec_cred cred;
    int rc;

    *expiry = 0;
    if (!c->cfg.exec)
        return kcli_read_token(c->cfg.token_file, fresh, err);
    rc = kube_exec_run(c->cfg.exec, KCLI_EXEC_TIMEOUT_MS, &cred, err);
    if (rc)
        return rc;
    *fresh = cred.token;
    *expiry = cred.expiry;
    return ZK_OK;
}

/* Gives the caller its own copy of the current token (NULL when none is configured), renewing it when
 * it is stale (a token file older than a minute, an exec plugin's token near its expiry) or when force
 * is set (after a 401). *changed tells whether a forced renewal produced a different token, which is
 * what makes retrying a 401 worthwhile. */
static int kcli_token(struct kube_client *c, int force, char **out, int *changed, struct zk_err *err)
{
    time_t now = time(NULL), expiry = 0;
    char *fresh = NULL;
    int rc = ZK_OK;

    *out = NULL;
    *changed = 0;
    pthread_mutex_lock(&c->token_lock);
    if ((c->cfg.token_file || c->cfg.exec) && (force || kcli_token_stale(c, now))) {
        rc = kcli_token_fetch(c, &fresh, &expiry, err);
        if (rc && c->token && !force && (!c->token_expiry || now < c->token_expiry)) {
            /* Keep using the token we have while it is valid: the file may be mid-rotation, the
             * plugin's identity provider briefly unreachable. */
            log_warn("Kept the previous bearer token", "source", c->cfg.exec ? c->cfg.exec->argv[0] : c->cfg.token_file,
                     "error", err->msg, NULL);
            rc = ZK_OK;
        } else if (!rc) {
            *changed = !c->token || strcmp(c->token, fresh) != 0;
            if (c->token)
                memset(c->token, 0, strlen(c->token));
            free(c->token);
            c->token = fresh;
            c->token_read = now;
            c->token_expiry = expiry;
        }
    }
    if (!rc && c->token)
        *out = mem_strdup(c->token);
    pthread_mutex_unlock(&c->token_lock);
    return rc;
}

int kube_client_new(const struct kube_config *cfg, long timeout_ms, struct kube_client **out, struct zk_err *err)
{
    struct kube_client *c;
    char *tok = NULL;
    int changed, rc;

    *out = NULL;
    if (!cfg->server || !cfg->server[0])
        return zk_err_set(err, ZK_EINVAL, "Kubernetes client: the configuration has no server");
    c = mem_calloc(1, sizeof(*c));
    kube_config_copy(cfg, &c->cfg);
    mem_mutex_init(&c->token_lock);
    c->pool = http_pool_new(KCLI_IDLE_CONNECTIONS);
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : KCLI_DEFAULT_TIMEOUT_MS;
    c->tls = (struct http_tls){
        .ca_file = c->cfg.ca_file,
        .ca_pem = c->cfg.ca_pem,
        .ca_pem_len = c->cfg.ca_pem_len,
        .cert_file = c->cfg.cert_file,
        .cert_pem = c->cfg.cert_pem,
        .cert_pem_len = c->cfg.cert_pem_len,
        .key_file = c->cfg.key_file,
        .key_pem = c->cfg.key_pem,
        .key_pem_len = c->cfg.key_pem_len,
        .insecure = c->cfg.insecure,
    };
    if (c->cfg.token)
        c->token = mem_strdup(c->cfg.token);
    /* Read a token file or run the exec plugin now, so that a missing file or a plugin that fails is
     * reported at startup rather than on first use. */
    rc = kcli_token(c, 0, &tok, &changed, err);
    free(tok);
    if (rc) {
        kube_client_free(c);
        return rc;
    }
    *out = c;
    return ZK_OK;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    if (c->token)
        memset(c->token, 0, strlen(c->token));
    free(c->token);
    pthread_mutex_destroy(&c->token_lock);
    http_pool_free(c->pool);
    kube_config_free(&c->cfg);
    free(c);
}

const char *kube_client_namespace(const struct kube_client *c)
{
    return c->cfg.namespace ? c->cfg.namespace : "default";
}

/* Appends "/" and the escaped segment s. */
static int kcli_put_segment(struct buf *b, const char *s)
{
    char *e = http_escape(s);
    int rc = buf_putc(b, '/');

    if (!rc)
        rc = buf_puts(b, e);
    free(e);
    return rc;
}

char *kube_url(const struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, const char *const *query)
{
    struct buf b;
    char sep = '?';
    int rc;

    buf_init(&b, KCLI_URL_MAX);
    rc = buf_puts(&b, c->cfg.server);
    if (!rc)
        rc = buf_puts(&b, r->group && r->group[0] ? "/apis" : "/api");
    if (!rc && r->group && r->group[0])
        rc = kcli_put_segment(&b, r->group);
    if (!rc)
        rc = kcli_put_segment(&b, r->version);
    if (!rc && r->namespaced && ns) {
        rc = buf_puts(&b, "/namespaces");
        if (!rc)
            rc = kcli_put_segment(&b, ns);
    }
    if (!rc && r->plural)
        rc = kcli_put_segment(&b, r->plural);
    if (!rc && name)
        rc = kcli_put_segment(&b, name);
    if (!rc && name && subresource)
        rc = kcli_put_segment(&b, subresource);
    for (size_t i = 0; !rc && query && query[i]; i += 2) {
        char *e;

        if (!query[i + 1])
            continue;
        e = http_escape(query[i + 1]);
        rc = buf_printf(&b, "%c%s=%s", sep, query[i], e);
        free(e);
        sep = '&';
    }
    if (rc) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

/* Maps the Status reason string, or else the HTTP status, to a kube_reason. */
static enum kube_reason kcli_reason(long status, const char *reason)
{
    static const struct {
        const char *name;
        enum kube_reason reason;
    } names[] = {
        {"NotFound", KUBE_REASON_NOT_FOUND},
        {"AlreadyExists", KUBE_REASON_ALREADY_EXISTS},
        {"Conflict", KUBE_REASON_CONFLICT},
        {"Invalid", KUBE_REASON_INVALID},
        {"BadRequest", KUBE_REASON_BAD_REQUEST},
        {"Unauthorized", KUBE_REASON_UNAUTHORIZED},
        {"Forbidden", KUBE_REASON_FORBIDDEN},
        {"Gone", KUBE_REASON_GONE},
        {"Expired", KUBE_REASON_GONE},
        {"TooManyRequests", KUBE_REASON_TOO_MANY_REQUESTS},
        {"MethodNotAllowed", KUBE_REASON_METHOD_NOT_ALLOWED},
        {"UnsupportedMediaType", KUBE_REASON_UNSUPPORTED_MEDIA},
        {"Timeout", KUBE_REASON_SERVER_TIMEOUT},
        {"ServerTimeout", KUBE_REASON_SERVER_TIMEOUT},
        {"InternalError", KUBE_REASON_INTERNAL},
        {"ServiceUnavailable", KUBE_REASON_UNAVAILABLE},
    };

    for (size_t i = 0; reason && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(reason, names[i].name) == 0)
            return names[i].reason;
    switch (status) {
    case 400: return KUBE_REASON_BAD_REQUEST;
    case 401: return KUBE_REASON_UNAUTHORIZED;
    case 403: return KUBE_REASON_FORBIDDEN;
    case 404: return KUBE_REASON_NOT_FOUND;
    case 405: return KUBE_REASON_METHOD_NOT_ALLOWED;
    case 409: return KUBE_REASON_CONFLICT;
    case 410: return KUBE_REASON_GONE;
    case 415: return KUBE_REASON_UNSUPPORTED_MEDIA;
    case 422: return KUBE_REASON_INVALID;
    case 429: return KUBE_REASON_TOO_MANY_REQUESTS;
    case 500: return KUBE_REASON_INTERNAL;
    case 503: return KUBE_REASON_UNAVAILABLE;
    case 504: return KUBE_REASON_SERVER_TIMEOUT;
    default: return KUBE_REASON_OTHER;
    }
}

/* Writes "field: message; field: message" from details.causes into err->causes, and notes a cause
 * that says the namespace is being deleted. */
static void kcli_causes(const cJSON *details, struct kube_err *err)
{
    const cJSON *causes = json_arr(details, "causes"), *cause;
    char *out = err->causes;
    size_t used = 0, size = sizeof(err->causes);

    out[0] = '\0';
    cJSON_ArrayForEach(cause, causes) {
        const char *field = json_str(cause, "field", ""), *msg = json_str(cause, "message", "");
        int n;

        if (strcmp(json_str(cause, "reason", ""), "NamespaceTerminating") == 0)
            err->namespace_terminating = 1;
        if (used >= size)
            break;
        n = snprintf(out + used, size - used, "%s%s%s%s", used ? "; " : "", field, field[0] ? ": " : "", msg);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Finishes err from its filled fields: the code and the one-line message. */
static int kcli_finish_status(const char *what, struct kube_err *err)
{
    err->base.code = ZK_EAPI;
    /* The message is cut so that the whole line fits; message keeps the full text. */
    snprintf(err->base.msg, sizeof(err->base.msg), "%.200s: %.60s (HTTP %ld): %.220s", what,
             err->reason_text[0] ? err->reason_text : "error", err->http_status, err->message);
    return ZK_EAPI;
}

int kube_parse_status_json(long http_status, const cJSON *st, long retry_after_header, const char *what,
                           struct kube_err *err)
{
    const char *reason = json_str(st, "reason", NULL);
    const cJSON *details = json_obj(st, "details");
    long retry;

    kube_err_clear(err);
    /* An ERROR event arrives with HTTP 200; its own code is the one that matters. */
    if (http_status < 300)
        http_status = (long)json_int(st, "code", http_status);
    err->http_status = http_status;
    err->reason = kcli_reason(http_status, reason);
    snprintf(err->reason_text, sizeof(err->reason_text), "%s", reason ? reason : "");
    snprintf(err->message, sizeof(err->message), "%s",
             json_str(st, "message", st ? "the server's Status carries no message" : "no Status in the answer"));
    kcli_causes(details, err);
    retry = (long)json_int(details, "retryAfterSeconds", -1);
    err->retry_after = retry >= 0 ? retry : retry_after_header;
    return kcli_finish_status(what, err);
}

int kube_parse_status(long http_status, const char *body, size_t len, long retry_after_header, const char *what,
                      struct kube_err *err)
{
    cJSON *st = len ? json_parse(body, len) : NULL;
    size_t o = 0;
    int rc;

    if (st && strcmp(json_str(st, "kind", ""), "Status") == 0) {
        rc = kube_parse_status_json(http_status, st, retry_after_header, what, err);
        cJSON_Delete(st);
        return rc;
    }
    cJSON_Delete(st);
    /* Not a Status (a proxy's HTML page, a plain-text 503): keep a cleaned-up start of the body so the
     * message still says something useful. */
    kube_err_clear(err);
    err->http_status = http_status;
    err->reason = kcli_reason(http_status, NULL);
    err->retry_after = retry_after_header;
    for (size_t i = 0; i < len && o < 200; i++) {
        unsigned char ch = (unsigned char)body[i];

        if (isspace(ch)) {
            if (o > 0 && err->message[o - 1] != ' ')
                err->message[o++] = ' ';
        } else if (ch >= 0x20 && ch < 0x7f) {
            err->message[o++] = (char)ch;
        }
    }
    while (o > 0 && err->message[o - 1] == ' ')
        o--;
    err->message[o] = '\0';
    if (o == 0)
        snprintf(err->message, sizeof(err->message), "HTTP %ld with an empty body", http_status);
    return kcli_finish_status(what, err);
}

/* The part of url after the server, for shorter messages. */
static const char *kcli_path(const struct kube_client *c, const char *url)
{
    size_t n = strlen(c->cfg.server);

    return strncmp(url, c->cfg.server, n) == 0 && url[n] ? url + n : url;
}

/* Keeps the first KCLI_STREAM_HEAD bytes of an error status's body, to explain it, and passes every
 * body on. A successful stream keeps nothing: a watch lives for minutes, and a copy of its first
 * events per watch would only take memory. */
struct kcli_stream_ctx {
    const struct kube_stream *s;
    const struct http_response *resp;
    struct buf head;
};

static int kcli_stream_data(void *ud, const char *data, size_t len, struct zk_err *err)
{
    struct kcli_stream_ctx *x = ud;
    size_t room = KCLI_STREAM_HEAD - x->head.len;

    /* Only the head of an error answer is kept, within the buffer's bound: the append cannot fail. */
    if (x->resp->status >= 300 && room > 0 && buf_append(&x->head, data, len < room ? len : room))
        return zk_err_set(err, ZK_ETOOBIG, "reading a stream: the error answer passes %u bytes", KCLI_STREAM_HEAD);
    return x->s->on_data(x->s->ud, data, len, err);
}

/* Logs each warning the server sent with resp, as client-go does: a warning is how the API server says
 * that it accepted something it would rather not have (a deprecated API or label, a field it dropped),
 * and nothing else would ever show it. path is the request's, without the query. A stream's warnings
 * are logged when it ends, with the rest of its response. */
static void kcli_log_warnings(const char *method, const char *path, const struct http_response *resp)
{
    for (int i = 0; i < resp->nwarnings; i++)
        log_warn("The API server sent a warning", "warning", resp->warnings[i], "method", method, "path", path,
                 NULL);
}

/* One request with the token and the 401 retry. When s is set the body streams to it. */
/* One request. The answer's body goes to *out parsed (when out is set), or to *raw as it came (when raw
 * is set: the caller frees it with buf_free), or to s's callback (a stream). */
static int kcli_do(struct kube_client *c, const char *method, const char *url, const char *content_type,
                   const char *body, size_t body_len, const atomic_int *cancel, const struct kube_stream *s,
                   cJSON **out, struct buf *raw, struct kube_err *err)
{
    struct http_response resp = {0};
    struct kcli_stream_ctx sx = {s, &resp, {0}};
    struct zk_err z = {0};
    const char *path = kcli_path(c, url);
    char what[512], bare[512];
    char *tok = NULL;
    int rc, changed, attempt;

    if (out)
        *out = NULL;
    kube_err_clear(err);
    snprintf(what, sizeof(what), "%s %s", method, path);
    snprintf(bare, sizeof(bare), "%.*s", (int)strcspn(path, "?"), path);
    buf_init(&sx.head, KCLI_STREAM_HEAD);
    for (attempt = 0;; attempt++) {
        struct http_request req = {
            .method = method,
            .url = url,
            .content_type = content_type,
            .body = body,
            .body_len = body_len,
            .tls = &c->tls,
            .pool = c->pool,
            .timeout_ms = s ? s->timeout_ms : c->timeout_ms,
            .max_body = KCLI_MAX_BODY,
            .on_data = s ? kcli_stream_data : NULL,
            .ud = &sx,
            .cancel = s ? s->cancel : cancel,
        };

        rc = kcli_token(c, 0, &tok, &changed, &z);
        if (rc) {
            rc = kcli_transport(err, rc, &z);
            goto out;
        }
        req.bearer_token = tok;
        buf_reset(&sx.head);
        http_response_free(&resp);
        rc = http_do(&req, &resp, &z);
        free(tok);
        tok = NULL;
        kcli_log_warnings(method, bare, &resp);
        /* A rotated or revoked token shows up as 401: renew it once, and retry only if it changed. */
        if (resp.status == 401 && attempt == 0 && (c->cfg.token_file || c->cfg.exec)) {
            char *fresh = NULL;

            if (kcli_token(c, 1, &fresh, &changed, &z) == ZK_OK && changed) {
                free(fresh);
                log_info("Retrying after 401 with a renewed bearer token", "url", what, NULL);
                continue;
            }
            free(fresh);
        }
        break;
    }
    if (resp.status >= 300) {
        const struct buf *eb = s ? &sx.head : &resp.body;

        rc = kube_parse_status(resp.status, eb->data ? eb->data : "", eb->len, resp.retry_after, what, err);
        goto out;
    }
    if (rc) {
        rc = kcli_transport(err, rc, &z);
        goto out;
    }
    err->http_status = resp.status;
    if (raw) {
        *raw = resp.body;
        buf_init(&resp.body, resp.body.max);
    } else if (out && resp.body.len > 0) {
        *out = json_parse(resp.body.data, resp.body.len);
        if (!*out)
            rc = kcli_fail(err, ZK_EPARSE, what, "the answer is not valid JSON");
    }
out:
    buf_free(&sx.head);
    http_response_free(&resp);
    return rc;
}

int kube_request(struct kube_client *c, const char *method, const char *url, const char *content_type,
                 const char *body, size_t body_len, cJSON **out, struct kube_err *err)
{
    return kcli_do(c, method, url, content_type, body, body_len, NULL, NULL, out, NULL, err);
}

int kube_stream_get(struct kube_client *c, const struct kube_stream *s, struct kube_err *err)
{
    return kcli_do(c, "GET", s->url, NULL, NULL, 0, NULL, s, NULL, NULL, err);
}

/* Serialises obj and sends it with method to url. */
static int kcli_send(struct kube_client *c, const char *method, const char *url, const char *content_type,
                     const cJSON *obj, cJSON **out, struct kube_err *err)
{
    char *body = json_print(obj);
    int rc;

    if (!body)
        return kcli_fail(err, ZK_EINVAL, url, "the body holds a value JSON cannot express");
    rc = kube_request(c, method, url, content_type, body, strlen(body), out, err);
    free(body);
    return rc;
}

/* kube_url's one failure. */
static int kcli_url_too_long(struct kube_err *err)
{
    return kcli_fail(err, ZK_ETOOBIG, "building a request URL", "longer than 64 KB");
}

int kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name, cJSON **out,
             struct kube_err *err)
{
    char *url = kube_url(c, r, ns, name, NULL, NULL);
    int rc;

    *out = NULL;
    if (!url)
        return kcli_url_too_long(err);
    rc = kube_request(c, "GET", url, NULL, NULL, 0, out, err);
    free(url);
    return rc;
}

/* One page of a list, as the server sent it (*page, freed by the caller with buf_free). cont may be
 * NULL (the first page). */
static int kcli_list_page(struct kube_client *c, const struct kube_resource *r, const char *ns,
                          const struct kube_list_opts *o, const char *cont, struct buf *page, struct kube_err *err)
{
    char limit[32];
    const char *query[] = {"labelSelector", o ? o->label_selector : NULL,
                           "fieldSelector", o ? o->field_selector : NULL,
                           "limit", NULL,
                           "continue", cont,
                           NULL};
    char *url;
    int rc;

    if (o && o->limit > 0) {
        snprintf(limit, sizeof(limit), "%ld", o->limit);
        query[5] = limit;
    }
    url = kube_url(c, r, ns, NULL, NULL, query);
    if (!url)
        return kcli_url_too_long(err);
    rc = kcli_do(c, "GET", url, NULL, NULL, 0, o ? o->cancel : NULL, NULL, NULL, page, err);
    free(url);
    return rc;
}

/* A string member of a page's metadata (the continue token, the collection's version), decoded, as a
 * heap string; NULL when absent or empty. */
static char *kcli_page_string(const struct jscan_doc *d, struct jscan meta, const char *name)
{
    const char *names[] = {name};
    struct jscan v;
    cJSON *s;
    char *out = NULL;

    jscan_find(d, meta, names, 1, &v);
    if (jscan_type(v) != JSCAN_STRING)
        return NULL;
    s = cJSON_ParseWithLength(v.p, v.len);
    if (cJSON_IsString(s) && s->valuestring[0] != '\0')
        out = mem_strdup(s->valuestring);
    cJSON_Delete(s);
    return out;
}

/* Hands each item of one page (text, len bytes) to on_item, each parsed on its own, and sets *cont to
 * the page's continue token (NULL on the last page) and, when rv is set and still NULL, *rv to the
 * collection's version. */
static int kcli_page_items(const char *what, const char *text, size_t len, kube_item_fn *on_item, void *ud,
                           char **cont, char **rv, struct kube_err *err)
{
    static const char *const top[] = {"items", "metadata"};
    struct jscan_doc d;
    struct jscan root, members[2], item;
    struct jscan_iter it;
    cJSON *obj;
    int rc;

    *cont = NULL;
    rc = jscan_parse(&d, text, len, &root);
    if (rc != ZK_OK) {
        jscan_doc_free(&d);
        return kcli_fail(err, ZK_EPARSE, what, "the answer is not valid JSON");
    }
    jscan_find(&d, root, top, 2, members);
    if (jscan_type(members[0]) != JSCAN_ARRAY) {
        jscan_doc_free(&d);
        return kcli_fail(err, ZK_EPARSE, what, "the list answer has no items array");
    }
    *cont = kcli_page_string(&d, members[1], "continue");
    if (rv && !*rv)
        *rv = kcli_page_string(&d, members[1], "resourceVersion");
    jscan_iter_init(&it, &d, members[0]);
    while (jscan_next(&it, NULL, &item)) {
        /* jscan accepted the page as cJSON would, so each item parses. */
        obj = cJSON_ParseWithLength(item.p, item.len);
        on_item(ud, obj);
        cJSON_Delete(obj);
    }
    jscan_doc_free(&d);
    return ZK_OK;
}

int kube_list_each(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const struct kube_list_opts *o, kube_item_fn *on_item, void *ud, char **resource_version,
                   struct kube_err *err)
{
    struct buf page = {0};
    char *cont = NULL, *next = NULL, *rv = NULL;
    int rc, restarted = 0;

    if (resource_version)
        *resource_version = NULL;
    for (;;) {
        rc = kcli_list_page(c, r, ns, o, cont, &page, err);
        if (rc == ZK_EAPI && err->reason == KUBE_REASON_GONE && cont && !restarted) {
            /* The continue token outlived the server's history: start over, once, from a fresh snapshot. */
            log_info("Restarting a paged list after 410", "resource", r->plural, "message", err->message, NULL);
            restarted = 1;
            on_item(ud, NULL);
            free(cont);
            cont = NULL;
            free(rv);
            rv = NULL;
            continue;
        }
        if (rc)
            goto out;
        rc = kcli_page_items(r->plural, page.data ? page.data : "", page.len, on_item, ud, &next, &rv, err);
        buf_free(&page);
        if (rc)
            goto out;
        free(cont);
        cont = next;
        next = NULL;
        if (!cont)
            break;
    }
    if (resource_version) {
        *resource_version = rv;
        rv = NULL;
    }
out:
    buf_free(&page);
    free(cont);
    free(rv);
    return rc;
}

/* kube_list's collector: each item copied into the List it builds. */
static void kcli_collect(void *ud, const cJSON *item)
{
    cJSON *items = ud;

    if (!item) { /* the list started over */
        while (cJSON_GetArraySize(items) > 0)
            cJSON_DeleteItemFromArray(items, 0);
        return;
    }
    cJSON_AddItemToArray(items, cJSON_Duplicate(item, 1));
}

int kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *o,
              cJSON **out, struct kube_err *err)
{
    cJSON *list = cJSON_CreateObject(), *items = cJSON_CreateArray(), *meta = cJSON_CreateObject();
    char *rv = NULL;
    int rc;

    *out = NULL;
    cJSON_AddItemToObject(list, "items", items);
    cJSON_AddItemToObject(list, "metadata", meta);
    rc = kube_list_each(c, r, ns, o, kcli_collect, items, &rv, err);
    if (rc) {
        cJSON_Delete(list);
        return rc;
    }
    if (rv)
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    free(rv);
    *out = list;
    return ZK_OK;
}

int kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns, const cJSON *obj, cJSON **out,
                struct kube_err *err)
{
    char *url = kube_url(c, r, ns, NULL, NULL, NULL);
    cJSON *res = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (!url)
        return kcli_url_too_long(err);
    rc = kcli_send(c, "POST", url, "application/json", obj, &res, err);
    free(url);
    if (out)
        *out = res;
    else
        cJSON_Delete(res);
    return rc;
}

int kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                const char *propagation, struct kube_err *err)
{
    const char *query[] = {"propagationPolicy", propagation, NULL};
    char *url = kube_url(c, r, ns, name, NULL, query);
    int rc;

    if (!url)
        return kcli_url_too_long(err);
    rc = kube_request(c, "DELETE", url, NULL, NULL, 0, NULL, err);
    free(url);
    return rc;
}

/* The shared body of apply, merge patch and replace. */
static int kcli_write(struct kube_client *c, const char *method, const char *content_type,
                      const struct kube_resource *r, const char *ns, const char *name, const char *subresource,
                      const char *const *query, const cJSON *obj, cJSON **out, struct kube_err *err)
{
    char *url = kube_url(c, r, ns, name, subresource, query);
    cJSON *res = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (!url)
        return kcli_url_too_long(err);
    rc = kcli_send(c, method, url, content_type, obj, &res, err);
    free(url);
    if (out)
        *out = res;
    else
        cJSON_Delete(res);
    return rc;
}

int kube_apply(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, const cJSON *obj, const char *field_manager, int force, cJSON **out,
               struct kube_err *err)
{
    /* Strict: what the operator applies is its whole intent for the object, so a field the server
     * does not know or a key given twice (cJSON will print both) is a bug to fail on, not something
     * to drop with a warning and leave a child other than rendered. Create, merge patch and replace
     * keep the server's default (Warn, client-go's for controllers): they write back objects read
     * from the server (the corpus for its status), the Lease and Events, where failing over a field
     * the server would drop, such as a status field a CRD not yet upgraded lacks, would stall status,
     * leader election or the record of events; the one rendered object created, the reindex Job, has
     * the CronJob's job spec, which is applied strictly. Their warnings are logged. */
    const char *query[] = {"fieldManager", field_manager, "force", force ? "true" : NULL,
                           "fieldValidation", "Strict", NULL};

    return kcli_write(c, "PATCH", "application/apply-patch+yaml", r, ns, name, subresource, query, obj, out, err);
}

int kube_merge_patch(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                     const char *subresource, const cJSON *patch, cJSON **out, struct kube_err *err)
{
    return kcli_write(c, "PATCH", "application/merge-patch+json", r, ns, name, subresource, NULL, patch, out, err);
}

int kube_replace(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                 const char *subresource, const cJSON *obj, cJSON **out, struct kube_err *err)
{
    return kcli_write(c, "PUT", "application/json", r, ns, name, subresource, NULL, obj, out, err);
}

int kube_discover(struct kube_client *c, const struct kube_resource *r, int *served, struct kube_err *err)
{
    /* The group/version document is the URL of a collection without a plural. */
    struct kube_resource gv = {r->group, r->version, NULL, NULL, 0};
    char *url = kube_url(c, &gv, NULL, NULL, NULL, NULL);
    cJSON *doc = NULL;
    const cJSON *res;
    int rc;

    *served = 0;
    if (!url)
        return kcli_url_too_long(err);
    rc = kube_request(c, "GET", url, NULL, NULL, 0, &doc, err);
    free(url);
    if (rc == ZK_EAPI && err->reason == KUBE_REASON_NOT_FOUND) {
        kube_err_clear(err);
        return ZK_OK;
    }
    if (rc)
        return rc;
    cJSON_ArrayForEach(res, json_arr(doc, "resources")) {
        if (strcmp(json_str(res, "name", ""), r->plural) == 0) {
            *served = 1;
            break;
        }
    }
    cJSON_Delete(doc);
    return ZK_OK;
}

int kube_parse_minor(const cJSON *version)
{
    const char *major = json_str(version, "major", ""), *minor = json_str(version, "minor", "");
    char *end;
    long m;

    if (strcmp(major, "1") != 0 || !isdigit((unsigned char)minor[0]))
        return -1;
    m = strtol(minor, &end, 10);
    return m >= 0 && m < 1000 ? (int)m : -1;
}

int kube_server_minor(struct kube_client *c, int *minor, struct kube_err *err)
{
    char *url = mem_printf("%s/version", c->cfg.server);
    cJSON *doc = NULL;
    int rc;

    *minor = -1;
    rc = kube_request(c, "GET", url, NULL, NULL, 0, &doc, err);
    free(url);
    if (rc)
        return rc;
    *minor = kube_parse_minor(doc);
    cJSON_Delete(doc);
    if (*minor < 0) {
        struct zk_err z;

        zk_err_set(&z, ZK_EPARSE, "GET /version: the answer names no Kubernetes 1.x version");
        return kcli_transport(err, ZK_EPARSE, &z);
    }
    return ZK_OK;
}
