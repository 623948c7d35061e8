/* client.h: the Kubernetes API verbs a controller needs, over lib/http.
 *
 * Objects travel as cJSON trees. Every verb returns ZK_OK, a transport code from err.h (the server was
 * not reached or the connection broke: ZK_ECONNECT, ZK_ETIMEOUT, ZK_ETRANSPORT, ZK_ETOOBIG,
 * ZK_ECANCELLED), or ZK_EAPI when the server answered with an error; then the kube_err says which (the
 * reason parsed from the Kubernetes Status body, its message, the field causes of an Invalid, and
 * Retry-After). Callers branch on kube_err.reason, never on message text.
 *
 * Every Warning header the server sends (a deprecated API or label, an unknown field dropped) is logged
 * at warn level, once per response, as client-go does: msg "The API server sent a warning" with the
 * fields warning (its text), method and path (without the query). lib/http bounds how many a response
 * keeps and how long each may be.
 *
 * A kube_client may be used from several threads at once: each request is independent (connections
 * to the server are kept open between requests in an http_pool, so that a request rarely pays a TLS
 * handshake), and the bearer token, when it comes from a file, is re-read under a lock at most once a
 * minute (projected service-account tokens rotate). */
#ifndef ZK_KUBE_CLIENT_H
#define ZK_KUBE_CLIENT_H

#include "err.h"
#include "http.h"
#include "kube/config.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>

enum kube_reason {
    KUBE_REASON_NONE = 0,      /* success, or a transport failure (see kube_err.base.code) */
    KUBE_REASON_NOT_FOUND,     /* 404 NotFound */
    KUBE_REASON_ALREADY_EXISTS,/* 409 AlreadyExists */
    KUBE_REASON_CONFLICT,      /* 409 Conflict (stale resourceVersion, field manager conflict) */
    KUBE_REASON_INVALID,       /* 422 Invalid; causes lists the fields */
    KUBE_REASON_BAD_REQUEST,   /* 400 */
    KUBE_REASON_UNAUTHORIZED,  /* 401 */
    KUBE_REASON_FORBIDDEN,     /* 403 */
    KUBE_REASON_GONE,          /* 410 Gone or Expired: a resourceVersion or continue token is too old */
    KUBE_REASON_TOO_MANY_REQUESTS, /* 429; retry_after is set */
    KUBE_REASON_METHOD_NOT_ALLOWED,/* 405 */
    KUBE_REASON_UNSUPPORTED_MEDIA, /* 415 (e.g. apply-patch on a server without server-side apply) */
    KUBE_REASON_SERVER_TIMEOUT,    /* 504 or reason Timeout */
    KUBE_REASON_INTERNAL,          /* 500 */
    KUBE_REASON_UNAVAILABLE,       /* 503 */
    KUBE_REASON_OTHER              /* any other status */
};

struct kube_err {
    struct zk_err base;        /* code and a one-line message: "PATCH .../deployments/x: Invalid: ..." */
    long http_status;          /* the answer's status, also on success (201 when a write created the
                                * object); 0 for transport failures */
    enum kube_reason reason;
    char reason_text[64];      /* the server's reason string, e.g. "AlreadyExists" */
    char message[1024];        /* the server's message, verbatim */
    char causes[1024];         /* "field: message; field: message" for Invalid, else empty */
    int namespace_terminating; /* a cause says NamespaceTerminating: the namespace is being deleted,
                                * and nothing new may be made in it */
    long retry_after;          /* seconds, from details.retryAfterSeconds or the header; -1 if none */
};

/* Which collection a request addresses. group "" is the core group ("/api/v1"). */
struct kube_resource {
    const char *group;
    const char *version;
    const char *plural;
    const char *kind;
    int namespaced;
};

struct kube_client;

/* Creates a client. cfg is copied; the caller keeps ownership of it. timeout_ms bounds every
 * non-watch request (0: 30000). Returns ZK_OK with *out owned by the caller (kube_client_free). */
int kube_client_new(const struct kube_config *cfg, long timeout_ms, struct kube_client **out, struct zk_err *err);
void kube_client_free(struct kube_client *c);

/* The namespace from the configuration (context or pod), never NULL. */
const char *kube_client_namespace(const struct kube_client *c);

/* Builds the URL of a collection or object: server + "/apis/<g>/<v>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]"
 * with every segment escaped, and the query string from the NULL-terminated key, value pairs in query
 * (values escaped; a NULL value skips the pair). Returns a heap string the caller frees, or NULL when
 * the URL would pass 64 KB. */
char *kube_url(const struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, const char *const *query);

/* Parses an error answer (status and body) into err. Pure; exposed for unit tests. Returns ZK_EAPI. */
int kube_parse_status(long http_status, const char *body, size_t len, long retry_after_header, const char *what,
                      struct kube_err *err);

/* Same as kube_parse_status, from a Status object already parsed (a watch ERROR event carries one). st
 * may be NULL or not a Status: the message then says so. Returns ZK_EAPI. */
int kube_parse_status_json(long http_status, const cJSON *st, long retry_after_header, const char *what,
                           struct kube_err *err);

/* Resets err to success: code ZK_OK, no reason, empty texts, retry_after -1. */
void kube_err_clear(struct kube_err *err);

/* GET one object. *out: the object, owned by the caller (cJSON_Delete). */
int kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name, cJSON **out,
             struct kube_err *err);

struct kube_list_opts {
    const char *label_selector; /* NULL: none */
    const char *field_selector; /* NULL: none */
    long limit;                 /* page size; 0: the server's default (everything) */
    const atomic_int *cancel; /* NULL, or a flag that aborts the list with ZK_ECANCELLED when set */
};

/* Called with each item of a list, parsed on its own and borrowed for the call; with NULL when the list
 * starts over (below), meaning: forget the items handed in before. */
typedef void kube_item_fn(void *ud, const cJSON *item);

/* LISTs every page (following continue tokens; a 410 on a continue token restarts the list once) and
 * hands each item to on_item in order. A page is held only as its text while its items are handed over
 * one at a time, so a list of thousands of objects costs one page's text and one object's tree, not a
 * tree of every object (1,000 search Deployments as one tree took 38 MB). *resource_version (when not
 * NULL) gets the collection's version at the first page, a heap string the caller frees (NULL when the
 * server sent none). ns NULL lists across namespaces. */
int kube_list_each(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const struct kube_list_opts *o, kube_item_fn *on_item, void *ud, char **resource_version,
                   struct kube_err *err);

/* kube_list_each, collected into a List object whose "items" holds them all and whose
 * metadata.resourceVersion is the collection's version at the first page. *out owned by the caller. */
int kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *o,
              cJSON **out, struct kube_err *err);

/* POST obj into its collection. *out (may be NULL to discard) is the created object, caller-owned.
 * Unknown fields are dropped by the server with a warning (its default validation), which is logged. */
int kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns, const cJSON *obj, cJSON **out,
                struct kube_err *err);

/* DELETE with a propagation policy ("Foreground", "Background", "Orphan", or NULL for the default). */
int kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                const char *propagation, struct kube_err *err);

/* Server-side apply: PATCH application/apply-patch+yaml (JSON is valid YAML) with fieldManager, force
 * and fieldValidation=Strict, so that an unknown field or a key given twice in obj fails the apply
 * (ZK_EAPI, the message naming the field) instead of being dropped. subresource may be NULL or
 * "status". *out (may be NULL) is the object after the apply. */
int kube_apply(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, const cJSON *obj, const char *field_manager, int force, cJSON **out,
               struct kube_err *err);

/* JSON merge patch (application/merge-patch+json); subresource may be NULL or "status". As with create,
 * unknown fields are dropped by the server with a warning, which is logged. */
int kube_merge_patch(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                     const char *subresource, const cJSON *patch, cJSON **out, struct kube_err *err);

/* PUT a whole object (optimistic concurrency through metadata.resourceVersion; used for Leases and for
 * /status writes that must not race). subresource may be NULL or "status". As with merge patch,
 * unknown fields are dropped by the server with a warning, which is logged. */
int kube_replace(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                 const char *subresource, const cJSON *obj, cJSON **out, struct kube_err *err);

/* Discovery: sets *served to 1 when the server serves r (its group/version lists r->plural), else 0.
 * A group/version the server does not know is not an error: *served is 0. */
int kube_discover(struct kube_client *c, const struct kube_resource *r, int *served, struct kube_err *err);

/* The server's minor version from GET /version ("20" for 1.20; managed services append "+", which is
 * ignored). Features that discovery cannot see, such as a new field of an existing kind, are judged by
 * it. Returns ZK_OK, a transport or API error, or ZK_EPARSE when the answer has no usable version. */
int kube_server_minor(struct kube_client *c, int *minor, struct kube_err *err);

/* The minor version in a /version document, or -1 when it is not a 1.x version. Pure; for unit tests. */
int kube_parse_minor(const cJSON *version);

/* The lowest-level request, used by the verbs and by watch: method on url with an optional body;
 * on a 2xx answer *out holds the parsed body (NULL for an empty one). Non-2xx becomes ZK_EAPI. */
int kube_request(struct kube_client *c, const char *method, const char *url, const char *content_type,
                 const char *body, size_t body_len, cJSON **out, struct kube_err *err);

/* A streamed GET (a watch): the body goes to on_data as it arrives instead of being accumulated.
 * timeout_ms bounds the whole request (0: none; then cancel should be set). Returns ZK_OK when the
 * server answered 2xx and the stream ended, ZK_EAPI when it answered with an error status (err holds
 * the parsed Status; on_data may have seen that body too), a transport code, or on_data's code. */
struct kube_stream {
    const char *url;
    http_data_fn *on_data;
    void *ud;
    const atomic_int *cancel;
    long timeout_ms;
};
int kube_stream_get(struct kube_client *c, const struct kube_stream *s, struct kube_err *err);

#endif
