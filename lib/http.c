/* http.c: see http.h. */
#include "http.h"

#include "mem.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTTP_DEFAULT_CONNECT_TIMEOUT_MS 5000
/* How often a cancellable transfer looks at its cancel flag on its own while the connection is idle,
 * for a flag set without http_cancel. Each look wakes the thread up, which costs about as much
 * CPU as receiving 100 KB, so it is rare; http_cancel makes cancelling prompt. */
#define HTTP_CANCEL_POLL_MS 1000
/* The most idle transfers a pool may keep (http_pool_new's max_idle is capped to it). */
#define HTTP_POOL_MAX 64
/* Connections each pooled transfer keeps open: one per server is all a client here talks to. */
#define HTTP_POOL_CONNS 2L
/* libcurl copies a request into an upload buffer before sending it over TLS, 64 KB by default and kept
 * as long as the transfer; the smallest it accepts is plenty for the API's requests (a bigger body
 * goes out in several pieces). An operator holds a transfer per watch, so this is paid a dozen times. */
#define HTTP_UPLOAD_BUFFER 16384L

/* A transfer and, once it has been cancellable, the multi handle that drove it. The pair is pooled
 * together because a connection opened through a multi handle stays in that handle's cache: a fresh
 * multi handle per request would open (and close) a connection per request, pool or not. */
struct http_slot {
    CURL *easy;
    CURLM *multi; /* NULL until a cancellable request needs it */
};

struct http_pool {
    pthread_mutex_t mu;
    struct http_slot idle[HTTP_POOL_MAX];
    int n;
    int max_idle;
};

/* A cancellable transfer in progress, and the multi handle to wake when its flag is set. */
struct http_waiting {
    const atomic_int *cancel;
    CURLM *multi;
    struct http_waiting *next;
};

/* Every cancellable transfer in progress, for http_cancel. */
static pthread_mutex_t http_waiting_mu = PTHREAD_MUTEX_INITIALIZER;
static struct http_waiting *http_waiting_list;

struct http_xfer {
    CURL *curl;
    const struct http_request *req;
    struct http_response *resp;
    struct zk_err *err;
    int cb_rc; /* why a callback stopped the transfer, if one did */
};

int http_global_init(void)
{
    /* curl allocates through mem.h too, so its allocation failures end the process as ours do. */
    return curl_global_init_mem(CURL_GLOBAL_DEFAULT, mem_alloc, free, mem_realloc, mem_strdup, mem_calloc) == CURLE_OK
               ? ZK_OK
               : ZK_EIO;
}

void http_global_cleanup(void)
{
    curl_global_cleanup();
}

struct http_pool *http_pool_new(int max_idle)
{
    struct http_pool *pool = mem_calloc(1, sizeof(*pool));

    pool->max_idle = max_idle < 0 ? 0 : max_idle > HTTP_POOL_MAX ? HTTP_POOL_MAX : max_idle;
    mem_mutex_init(&pool->mu);
    return pool;
}

/* libcurl allocates through lib/mem once http_global_init has run, but reports a failure by returning
 * NULL, and a program that never called http_global_init (a test) gets curl's own malloc: either way
 * a NULL from these constructors means memory ran out. */
static void *http_curl_made(void *p)
{
    if (!p)
        mem_oom(0);
    return p;
}

void http_pool_free(struct http_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->n; i++) {
        curl_easy_cleanup(pool->idle[i].easy);
        curl_multi_cleanup(pool->idle[i].multi);
    }
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

/* An idle slot from pool, or a new transfer without a multi handle. */
static void http_pool_take(struct http_pool *pool, struct http_slot *s)
{
    s->easy = NULL;
    s->multi = NULL;
    if (pool) {
        pthread_mutex_lock(&pool->mu);
        if (pool->n > 0)
            *s = pool->idle[--pool->n];
        pthread_mutex_unlock(&pool->mu);
    }
    if (!s->easy)
        s->easy = http_curl_made(curl_easy_init());
}

/* Returns the slot to pool for reuse, or cleans it up when there is no pool or the pool is full. The
 * transfer's options are reset (its connections stay), so that an idle transfer keeps no pointer into
 * a finished request's stack, headers or body. */
static void http_pool_give(struct http_pool *pool, struct http_slot *s)
{
    if (pool) {
        curl_easy_reset(s->easy);
        pthread_mutex_lock(&pool->mu);
        if (pool->n < pool->max_idle) {
            pool->idle[pool->n++] = *s;
            s->easy = NULL;
            s->multi = NULL;
        }
        pthread_mutex_unlock(&pool->mu);
    }
    curl_easy_cleanup(s->easy);
    curl_multi_cleanup(s->multi);
}

void http_response_free(struct http_response *resp)
{
    budget_release(&resp->hold);
    buf_free(&resp->body);
    for (int i = 0; i < resp->nwarnings; i++) {
        free(resp->warnings[i]);
        resp->warnings[i] = NULL;
    }
    resp->nwarnings = 0;
}

/* Whether p (before end) starts RFC 7234's `warn-code SP warn-agent SP "`; then *text is where the
 * quoted text begins. The agent is anything without a space or a quote (the API server sends "-"). */
static int http_warning_form(const char *p, const char *end, const char **text)
{
    if (end - p < 4 || !isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]) ||
        !isdigit((unsigned char)p[2]) || p[3] != ' ')
        return 0;
    for (p += 4; p < end && *p != ' ' && *p != '"'; p++)
        ;
    if (end - p < 2 || p[0] != ' ' || p[1] != '"')
        return 0;
    *text = p + 2;
    return 1;
}

int http_warning_text(const char *value, size_t len, char *out, size_t size)
{
    const char *p = value, *end = value + len;
    size_t o = 0;
    int quoted;

    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    quoted = http_warning_form(p, end, &p);
    for (; p < end; p++) {
        unsigned char ch = (unsigned char)*p;

        if (quoted && ch == '"')
            break;
        if (quoted && ch == '\\' && p + 1 < end)
            ch = (unsigned char)*++p;
        if (ch < 0x20 || ch == 0x7f)
            ch = ' ';
        if (ch == ' ' && o == 0)
            continue;
        if (o + 1 >= size) {
            /* Cut here; a UTF-8 sequence this would split is dropped whole, so that the text stays
             * valid UTF-8 in a JSON log record. */
            if ((ch & 0xc0) == 0x80) {
                while (o > 0 && ((unsigned char)out[o - 1] & 0xc0) == 0x80)
                    o--;
                if (o > 0 && (unsigned char)out[o - 1] >= 0xc0)
                    o--;
            }
            break;
        }
        out[o++] = (char)ch;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    return o > 0 ? ZK_OK : ZK_EPARSE;
}

/* Keeps the text of one Warning header's value in resp, within the bound http.h states. */
static void http_keep_warning(struct http_response *resp, const char *value, size_t len)
{
    char text[HTTP_WARNING_MAX + 1];

    if (resp->nwarnings >= HTTP_MAX_WARNINGS || http_warning_text(value, len, text, sizeof(text)) != ZK_OK)
        return;
    for (int i = 0; i < resp->nwarnings; i++)
        if (strcmp(resp->warnings[i], text) == 0)
            return;
    resp->warnings[resp->nwarnings++] = mem_strdup(text);
}

/* Reserves in the request's budget what the body will hold once n more bytes are in (http.h). */
static int http_budget_take(struct http_xfer *x, size_t n)
{
    struct http_response *resp = x->resp;
    int rc;

    /* Past max_body, buf_append refuses the bytes and says so, naming that bound. */
    if (resp->body.len + n > resp->body.max)
        return ZK_OK;
    rc = budget_grow(&resp->hold, (resp->body.len + n) * HTTP_BUDGET_FACTOR);
    if (rc == ZK_ETOOBIG)
        return zk_err_set(x->err, rc, "%s %s: the response body needs more memory than the %zu bytes this "
                          "process allows for such bodies", x->req->method, x->req->url, x->req->budget->limit);
    if (rc != ZK_OK)
        return zk_err_set(x->err, rc, "%s %s: other responses hold the memory this process allows for such "
                          "bodies (%zu bytes) for now", x->req->method, x->req->url, x->req->budget->limit);
    return ZK_OK;
}

static size_t http_on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct http_xfer *x = ud;
    size_t n = size * nmemb;
    int rc;

    if (x->req->on_data) {
        if (x->resp->status == 0)
            curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &x->resp->status);
        rc = x->req->on_data(x->req->ud, data, n, x->err);
        if (rc) {
            x->cb_rc = rc;
            return 0;
        }
        return n;
    }
    if (x->req->budget && (rc = http_budget_take(x, n)) != ZK_OK) {
        x->cb_rc = rc;
        return 0;
    }
    rc = buf_append(&x->resp->body, data, n);
    if (rc) {
        x->cb_rc = zk_err_set(x->err, rc, "%s %s: response body exceeds the limit of %zu bytes", x->req->method,
                              x->req->url, x->resp->body.max);
        return 0;
    }
    return n;
}

static size_t http_on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct http_xfer *x = ud;
    size_t n = size * nmemb;

    if (n > 12 && strncasecmp(data, "Retry-After:", 12) == 0)
        x->resp->retry_after = strtol(data + 12, NULL, 10);
    else if (n > 8 && strncasecmp(data, "Warning:", 8) == 0)
        http_keep_warning(x->resp, data + 8, n - 8);
    if (x->req->on_header)
        x->req->on_header(x->req->header_ud, data, n);
    return n;
}

static int http_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    struct http_xfer *x = ud;

    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    if (x->req->cancel && atomic_load(x->req->cancel)) {
        x->cb_rc = ZK_ECANCELLED;
        return 1;
    }
    return 0;
}

static int http_set_tls(CURL *c, const struct http_tls *tls)
{
    struct curl_blob blob;
    CURLcode cc = CURLE_OK;

    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, tls && tls->insecure ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, tls && tls->insecure ? 0L : 2L);
    if (!tls)
        return ZK_OK;
    if (tls->ca_pem) {
        blob = (struct curl_blob){(void *)tls->ca_pem, tls->ca_pem_len, CURL_BLOB_COPY};
        cc = curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    } else if (tls->ca_file) {
        cc = curl_easy_setopt(c, CURLOPT_CAINFO, tls->ca_file);
    }
    if (cc == CURLE_OK && tls->cert_pem) {
        blob = (struct curl_blob){(void *)tls->cert_pem, tls->cert_pem_len, CURL_BLOB_COPY};
        cc = curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
        if (cc == CURLE_OK)
            cc = curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (cc == CURLE_OK && tls->cert_file) {
        cc = curl_easy_setopt(c, CURLOPT_SSLCERT, tls->cert_file);
    }
    if (cc == CURLE_OK && tls->key_pem) {
        blob = (struct curl_blob){(void *)tls->key_pem, tls->key_pem_len, CURL_BLOB_COPY};
        cc = curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
        if (cc == CURLE_OK)
            cc = curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (cc == CURLE_OK && tls->key_file) {
        cc = curl_easy_setopt(c, CURLOPT_SSLKEY, tls->key_file);
    }
    return cc == CURLE_OK ? ZK_OK : ZK_EINVAL;
}

void http_cancel(atomic_int *cancel)
{
    atomic_store(cancel, 1);
    pthread_mutex_lock(&http_waiting_mu);
    for (struct http_waiting *w = http_waiting_list; w; w = w->next)
        if (w->cancel == cancel)
            curl_multi_wakeup(w->multi);
    pthread_mutex_unlock(&http_waiting_mu);
}

/* Removes w from the transfers http_cancel may wake. */
static void http_waiting_remove(struct http_waiting *w)
{
    pthread_mutex_lock(&http_waiting_mu);
    for (struct http_waiting **pp = &http_waiting_list; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&http_waiting_mu);
}

/* Runs the transfer of slot s. A cancellable one is driven through a multi handle, which
 * http_cancel wakes when it sets the flag (a wakeup sent before the poll is kept for it), and
 * which looks at the flag on its own every HTTP_CANCEL_POLL_MS: curl_easy_perform calls the progress
 * callback only about once a second on an idle connection (a quiet watch), and not at all when woken.
 * The multi handle is made on first need and stays in the slot, keeping the connection for the
 * slot's next request. */
static CURLcode http_perform(struct http_slot *s, const struct http_request *req, struct http_xfer *x)
{
    struct http_waiting waiting;
    CURLcode cc = CURLE_OK;
    CURLMsg *msg;
    CURL *c = s->easy;
    CURLM *m;
    int running = 1, left;

    if (!req->cancel)
        return curl_easy_perform(c);
    if (!s->multi) {
        s->multi = http_curl_made(curl_multi_init());
        curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, HTTP_POOL_CONNS);
    }
    m = s->multi;
    /* Fails only for a handle that is already added somewhere, which a slot's transfer never is. */
    if (curl_multi_add_handle(m, c) != CURLM_OK)
        return CURLE_FAILED_INIT;
    waiting.cancel = req->cancel;
    waiting.multi = m;
    pthread_mutex_lock(&http_waiting_mu);
    waiting.next = http_waiting_list;
    http_waiting_list = &waiting;
    pthread_mutex_unlock(&http_waiting_mu);
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            cc = CURLE_SEND_ERROR;
            break;
        }
        if (!running)
            break;
        if (atomic_load(req->cancel)) {
            x->cb_rc = ZK_ECANCELLED;
            cc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_poll(m, NULL, 0, HTTP_CANCEL_POLL_MS, NULL) != CURLM_OK) {
            cc = CURLE_RECV_ERROR;
            break;
        }
    }
    http_waiting_remove(&waiting);
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE)
            cc = msg->data.result;
    curl_multi_remove_handle(m, c);
    return cc;
}

/* Removes curl's " after N ms" from a message in place. The elapsed time differs from one attempt to
 * the next, and these messages end up in status conditions, where text that changes without cause
 * would make every resync write the status again. */
static void http_strip_elapsed(char *msg)
{
    char *p = msg;

    while ((p = strstr(p, " after ")) != NULL) {
        char *q = p + 7;

        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p + 7 && strncmp(q, " ms", 3) == 0) {
            memmove(p, q + 3, strlen(q + 3) + 1);
            continue;
        }
        p += 7;
    }
}

/* Maps a curl failure to a project code and a message naming what was tried. */
static int http_curl_error(const struct http_request *req, CURLcode cc, char *detail, struct zk_err *err)
{
    int code;

    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
        return zk_err_set(err, ZK_ETIMEOUT, "%s %s: no complete answer within %ld ms", req->method, req->url,
                          req->timeout_ms);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
        code = ZK_ECONNECT;
        break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        code = ZK_EINVAL;
        break;
    default:
        code = ZK_ETRANSPORT;
    }
    http_strip_elapsed(detail);
    return zk_err_set(err, code, "%s %s: %s", req->method, req->url, detail[0] ? detail : curl_easy_strerror(cc));
}

/* Appends the header "name: prefix value" (prefix may be "") to list, allocated to fit: a header has no
 * length limit here, because bearer tokens (OIDC tokens with group claims, exec plugins) run to tens of
 * kilobytes. Returns the new list. */
static struct curl_slist *http_header_append(struct curl_slist *list, const char *name, const char *prefix,
                                             const char *value)
{
    char *line = mem_printf("%s: %s%s", name, prefix, value);

    list = http_curl_made(curl_slist_append(list, line));
    free(line);
    return list;
}

int http_do(const struct http_request *req, struct http_response *resp, struct zk_err *err)
{
    struct http_xfer x = {NULL, req, resp, err, 0};
    struct curl_slist *headers;
    char errbuf[CURL_ERROR_SIZE] = "";
    char *ct = NULL;
    struct http_slot slot = {NULL, NULL};
    CURL *c;
    CURLcode cc;
    int rc = ZK_OK;

    memset(resp, 0, sizeof(*resp));
    resp->hold = BUDGET_HOLD(req->budget);
    buf_init(&resp->body, req->max_body);
    resp->retry_after = -1;
    if (!req->on_data && req->max_body == 0)
        return zk_err_set(err, ZK_EINVAL, "%s %s: no response size limit set", req->method, req->url);

    http_pool_take(req->pool, &slot);
    c = slot.easy;
    x.curl = c;
    headers = http_header_append(NULL, "Accept", "", req->accept ? req->accept : "application/json");
    if (req->content_type)
        headers = http_header_append(headers, "Content-Type", "", req->content_type);
    if (req->bearer_token)
        headers = http_header_append(headers, "Authorization", "Bearer ", req->bearer_token);
    for (const char *const *h = req->headers; h && *h; h++)
        headers = http_curl_made(curl_slist_append(headers, *h));
    /* curl would send "Expect: 100-continue" for large bodies and wait for it; no server here needs that. */
    headers = http_curl_made(curl_slist_append(headers, "Expect:"));

    curl_easy_setopt(c, CURLOPT_URL, req->url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_MAXCONNECTS, HTTP_POOL_CONNS);
    /* HTTP/2 would multiplex only the requests of one transfer, which sends one at a time, and costs
     * an HTTP/2 session (tens of kilobytes) per connection. */
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, HTTP_UPLOAD_BUFFER);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     req->connect_timeout_ms ? req->connect_timeout_ms : HTTP_DEFAULT_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
    if (req->cancel) {
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &x);
    }
    if (req->body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    if (http_set_tls(c, req->tls)) {
        rc = zk_err_set(err, ZK_EINVAL, "%s %s: the TLS settings were rejected", req->method, req->url);
        goto out;
    }

    cc = http_perform(&slot, req, &x);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(resp->content_type, sizeof(resp->content_type), "%s", ct);
    if (cc == CURLE_OK)
        goto out;
    if (x.cb_rc == ZK_ECANCELLED) {
        rc = zk_err_set(err, ZK_ECANCELLED, "%s %s: cancelled", req->method, req->url);
    } else if (x.cb_rc) {
        rc = x.cb_rc; /* the callback already described it */
    } else {
        rc = http_curl_error(req, cc, errbuf, err);
    }

out:
    curl_slist_free_all(headers);
    http_pool_give(req->pool, &slot);
    return rc;
}

char *http_escape(const char *s)
{
    char *e = http_curl_made(curl_easy_escape(NULL, s, 0));
    char *copy = mem_strdup(e);

    curl_free(e);
    return copy;
}
