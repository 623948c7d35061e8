/* http.h: one HTTP request over libcurl, with a deadline, a bounded body and one error taxonomy.
 *
 * Both programs talk HTTP only through this module: the controller to the Kubernetes API server and to
 * the connector's /index-status, the connector to zoekt-webserver. Every request has a timeout; every
 * response body is either accumulated into a bounded buffer or streamed to a callback; every failure is
 * reported as a zk_err whose message names the method and URL that were tried.
 *
 * A non-2xx answer is not an error here: the status and body are returned so that the caller, which
 * knows the server's error format (a Kubernetes Status, Zoekt's {"Error":...}), can interpret them. */
#ifndef ZK_HTTP_H
#define ZK_HTTP_H

#include "budget.h"
#include "buf.h"
#include "err.h"

#include <stdatomic.h>
#include <stddef.h>

/* TLS settings. Certificates and keys can be given as files or as in-memory PEM (so that inline
 * kubeconfig data never needs a writable filesystem); data wins over a file when both are set. Peer
 * and host verification are always on unless insecure is set explicitly. Nothing is copied: the
 * strings must outlive the request. */
struct http_tls {
    const char *ca_file;
    const char *ca_pem;
    size_t ca_pem_len;
    const char *cert_file;
    const char *cert_pem;
    size_t cert_pem_len;
    const char *key_file;
    const char *key_pem;
    size_t key_pem_len;
    int insecure;
};

/* Called with each piece of the body as it arrives, when a request streams; the response's status is
 * set by then. Return 0 to go on, or a
 * negative zk_code to stop the transfer; that code then becomes http_do's result (the callback should
 * also fill *err, which http_do passes through untouched). */
typedef int http_data_fn(void *ud, const char *data, size_t len, struct zk_err *err);

/* A pool of idle transfers, each keeping its open connection (and TLS session) for the next request
 * to the same server: without it every request pays a TCP connect and a full TLS handshake, which
 * costs more than a small API request itself. A transfer is used by one request at a time, so
 * requests from any number of threads may share a pool (libcurl's shared connection cache is not
 * safe across threads). */
struct http_pool;

/* A pool that keeps at most max_idle idle transfers (at most 64): more requests at once than that open
 * connections that are closed after use. Each kept connection holds a TLS session and buffers (tens
 * of kilobytes), so max_idle is what the client's steady state runs at once, not its busiest burst.
 * The pool is owned by the caller (http_pool_free, after every request using it has returned). */
struct http_pool *http_pool_new(int max_idle) __attribute__((returns_nonnull));
void http_pool_free(struct http_pool *pool);

/* A request may name a budget (lib/budget.h) that bounds, with other transfers', the memory accumulated
 * bodies hold at once. A transfer reserves HTTP_BUDGET_FACTOR times its body's length as the body
 * grows (the buffer, which doubles, and what the caller builds from it, such as lib/jscan's tape, less
 * than the text for a Zoekt answer), and http_response_free gives the reservation back. A body past
 * the request's max_body fails as before. A body that alone would need more than the limit fails with
 * ZK_ETOOBIG; one that would take the sum past it while others hold their share fails with ZK_EBUSY
 * (retryable: their bodies go soon). */
#define HTTP_BUDGET_FACTOR 2

struct http_request {
    const char *method;       /* "GET", "POST", "PATCH", ... */
    const char *url;          /* complete and already escaped */
    const char *content_type; /* for a body; NULL sends none */
    const char *accept;       /* NULL: application/json */
    const char *body;         /* may be NULL */
    size_t body_len;
    const char *bearer_token; /* NULL: no Authorization header */
    const struct http_tls *tls;
    struct http_pool *pool;  /* NULL: a fresh connection, closed after the request */
    long timeout_ms;         /* whole request; 0 means none (only for streams that can be cancelled) */
    long connect_timeout_ms; /* 0: 5000 */
    size_t max_body;         /* bound on the accumulated body; required unless on_data is set */
    http_data_fn *on_data;   /* when set, the body is streamed here instead of accumulated */
    void *ud;
    /* When set, a non-zero value aborts the transfer with ZK_ECANCELLED: at once when it is set with
     * http_cancel, else within a second. Lets another thread stop a watch or a search, which is why
     * it is an atomic: the transfer's thread reads it while the cancelling thread writes it. */
    const atomic_int *cancel;
    struct budget *budget;      /* NULL: the body is bounded by max_body alone */
    /* More "Name: value" lines to send, NULL-terminated, or NULL: a code host's token and version
     * headers (controller/sources/hostapi.h). */
    const char *const *headers;
    /* When set, called with every header line of the answer as libcurl hands it over ("Name: value\r\n",
     * len bytes, not NUL-terminated), for the headers a caller reads itself (a code host's Link, ETag
     * and rate-limit counts). Called on the request's thread. */
    void (*on_header)(void *ud, const char *line, size_t len);
    void *header_ud;
};

/* The bound on what a response's Warning headers may cost: the texts of the first HTTP_MAX_WARNINGS
 * distinct ones are kept, each cut to HTTP_WARNING_MAX bytes, and later ones are dropped, so that a
 * server or proxy that sends thousands cannot make a response hold more than about 4 KB of them. The
 * Kubernetes API server sends each of its warnings once, in a header of its own, and cuts each to 256
 * characters once they add up to more than 4096. */
#define HTTP_MAX_WARNINGS 8
#define HTTP_WARNING_MAX 512

struct http_response {
    long status;       /* HTTP status, 0 if none was received */
    struct buf body;   /* the accumulated body (empty when streamed) */
    long retry_after;  /* seconds from a Retry-After header, or -1 */
    char content_type[128];
    /* The texts of the Warning headers (http_warning_text), in the order received, each a heap string
     * of at most HTTP_WARNING_MAX bytes; the same text twice is kept once. */
    char *warnings[HTTP_MAX_WARNINGS];
    int nwarnings;
    struct budget_hold hold; /* the body's reservation in the request's budget */
};

/* Initialises the library; call once from main before any thread starts. */
int http_global_init(void);
void http_global_cleanup(void);

/* Performs req and fills *resp, which the caller owns and releases with http_response_free (also after
 * a failure). Returns ZK_OK when an HTTP response was received, whatever its status, or: ZK_ECONNECT
 * (DNS, refused, TLS), ZK_ETIMEOUT, ZK_ETOOBIG (body beyond max_body), ZK_ECANCELLED, ZK_ETRANSPORT
 * (anything else on the wire), ZK_EINVAL (a bad request), or a code returned by on_data. */
int http_do(const struct http_request *req, struct http_response *resp, struct zk_err *err);

/* Releases the body and the warnings; resp may then be freed again or passed to http_do. */
void http_response_free(struct http_response *resp);

/* The text of one Warning header's value (value, len bytes, not NUL-terminated). In the form RFC 7234
 * section 5.5 gives it, `299 - "text"` optionally followed by a quoted date, the text is the quoted
 * part with its backslash escapes undone; only the first warning of a header is read, because the
 * Kubernetes API server sends each in a header of its own. A value in no such form, as a
 * nonconforming server or proxy may send, is its own text, since it was still meant to be read.
 * Control characters become spaces, the text is trimmed and cut to size - 1 bytes (never inside a
 * UTF-8 sequence) and written to out (size > 0). Returns ZK_OK, or ZK_EPARSE with out empty when
 * no text remains. Pure; exposed for unit tests. */
int http_warning_text(const char *value, size_t len, char *out, size_t size);

/* Sets *cancel to 1 and wakes every transfer in progress whose request's cancel is this flag, so
 * that it stops at once; a transfer that has not started waiting yet sees the flag when it does. The
 * one way to cancel: setting the flag alone is seen only within a second. Safe from any thread. */
void http_cancel(atomic_int *cancel);

/* Percent-encodes s (shorter than curl's input limit, 8 MB) for use as a query value or path segment.
 * Returns a heap string the caller frees; never NULL. */
char *http_escape(const char *s);

#endif
