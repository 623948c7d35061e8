/* reconcile.h: one reconcile of one corpus, the only place the domain meets the API server.
 *
 *   corpus from the cache -> spec_parse (errors: status + Event, stop)
 *   -> referenced Secrets exist? (missing: status + Event, apply nothing, retry later)
 *   -> render_children -> for each child, server-side apply unless the desired object is already a
 *      subset of the cached one (steady state: zero writes)
 *   -> reindex annotation -> a Job per distinct value
 *   -> /index-status (after a Job finished and every index_period) -> status_compute
 *   -> PUT /status only when it differs -> requeue after the soonest time-based change.
 * The controller never writes a corpus's spec or metadata.
 *
 * The caches are informers (runtime/informer.h) the caller starts; reconcile only reads them. The
 * pure decisions (does this child need an apply, where is /index-status, which condition transitions
 * deserve an Event, has a Job finished since the last read) are exposed for unit tests. */
#ifndef ZK_CORPUS_RECONCILE_H
#define ZK_CORPUS_RECONCILE_H

#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "controller/runtime/events.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/metrics.h"
#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <time.h>

/* Whether the per-repository judgement of an /index-status read at read_at (idx, judged against
 * judged_max_age) is out of date at now for max_age: maxAge changed since, or the oldest index turned
 * stale after the read. Then the status would say Fresh is False without naming a stale repository,
 * so the reconcile reads again at once. Always 0 for a connector that does not judge (has_stale 0). */
int reconcile_stale_outdated(const struct index_status *idx, long judged_max_age, time_t read_at, long max_age,
                             time_t now);

/* The in-cluster address of a corpus's /index-status, and the default of --index-status-url-template. */
#define RECONCILE_DEFAULT_INDEX_URL "http://{service}.{namespace}.svc:{port}"
/* How soon to look again for a referenced Secret, or a claim's storage class, that is missing (neither
 * kind is watched). */
#define RECONCILE_SECRET_RETRY_SECONDS 30

/* The kinds of children, in render's apply order, plus the Jobs the CronJob and reindex create and
 * their Pods (whose termination messages name the repositories that failed to index). */
enum reconcile_kind {
    RK_PVC,
    RK_CONFIGMAP,
    RK_SERVICEACCOUNT,
    RK_ROLE,
    RK_ROLEBINDING,
    RK_NETPOL,
    RK_SERVICE,
    RK_DEPLOYMENT,
    RK_PDB,
    RK_CRONJOB,
    RK_JOB,
    RK_POD,
    RK_COUNT
};

/* The resource of each kind. */
void reconcile_resources(struct kube_resource out[RK_COUNT]);

/* Per-corpus memory between reconciles (reconcile.c). */
struct reconcile_memo;

/* A namespace being deleted refuses every new object (NamespaceTerminating), and its corpora are
 * deleted soon with it; meanwhile the deletions of their children would start reconcile after reconcile
 * of them, each refused again (1,000 corpora left in such a namespace once made 3,329 applies in two
 * minutes and slowed healthy corpora elsewhere). Once an apply is refused so, the namespace is noted
 * here, and its corpora are passed over without a request, an Event or a status write until
 * RECONCILE_TERMINATING_RECHECK_S have passed; then the next reconcile tries once more. At most
 * RECONCILE_TERMINATING_MAX namespaces are noted at once (the one noted longest ago gives way). */
#define RECONCILE_TERMINATING_MAX 16
#define RECONCILE_TERMINATING_RECHECK_S 30.0
struct reconcile_terminating {
    char ns[64]; /* a namespace's name is a DNS label: at most 63 characters */
    double until; /* monotonic seconds; 0: the slot is free */
};

struct reconcile_ctx {
    struct kube_client *client;
    struct informer *corpora;
    struct informer *children[RK_COUNT];
    struct kube_resource resources[RK_COUNT];
    struct events *events;
    struct metrics *metrics;
    const char *index_url_template; /* NULL: RECONCILE_DEFAULT_INDEX_URL */
    long index_period_seconds;      /* 0: 300 */
    long clock_offset_seconds;      /* added to the wall clock; tests only (--clock-offset) */
    struct spec_defaults defaults; /* images for corpora that name none, pod settings for all */
    pthread_mutex_t memo_mu;        /* guards memos and terminating; reconcile_ctx_init sets it up */
    struct reconcile_memo *memos;
    struct reconcile_terminating terminating[RECONCILE_TERMINATING_MAX];
};

/* Sets up the parts of ctx that reconcile owns (the memo table); the caller fills the rest. */
void reconcile_ctx_init(struct reconcile_ctx *ctx);
void reconcile_ctx_free(struct reconcile_ctx *ctx);

/* Reconciles the corpus key ("namespace/name"). Returns ZK_OK with *requeue_after set to the seconds
 * after which it should run again by itself (0: only on a change), or an error to retry with backoff. */
int reconcile(struct reconcile_ctx *ctx, const char *key, double *requeue_after, struct zk_err *err);

/* The informers' prune function for Jobs and Pods (runtime/informer.h): reconcile reads only their
 * metadata (the key, by api_corpus_key) and their status (when they finished, the indexer's termination
 * message), never their specs, which carry a whole pod template. Also drops the server fields
 * (informer_prune_server_fields). The rendered kinds keep their specs: compare_subset reads them. */
void reconcile_prune_observed(cJSON *obj);

/* Pure helpers, exposed for unit tests. */

/* Whether desired must be applied over observed (NULL: absent): it is not a subset, or observed still
 * carries our controller ownerReference that desired dropped (a PVC switched to the Retain policy). */
int reconcile_needs_apply(const cJSON *desired, const cJSON *observed, char *diff, size_t len);

/* Whether children of this kind need another child to exist when they are applied: a RoleBinding its
 * Role (the operator may bind only rules it holds, and the API server reads them from the Role), and
 * what makes pods their ServiceAccount, ConfigMap and claim (a pod naming a ServiceAccount that does
 * not exist yet is refused, and its controller backs off). A reconcile applies these in a second wave,
 * after the others; the children of each wave are applied at the same time. */
int reconcile_needs_siblings(const char *kind);

/* The bearer token the operator shows a corpus's connector on /index-status when the gateway takes
 * tokens: the first one of the Secret spec.gateway.tokenSecretRef names (secret: the object as read),
 * in the order of its keys, read as the connector reads the Secret mounted as files (a key starting
 * with '.' is no token; surrounding white space is trimmed). A heap string the caller frees, or NULL
 * when the Secret holds no token. The connector names repositories only to a caller with a token, and
 * the status names the stale ones. */
char *reconcile_secret_token(const cJSON *secret);

/* Expands {namespace}, {name}, {service} and {port} in template into dst. Returns ZK_OK or ZK_EINVAL
 * (an unknown placeholder, or too long). */
int reconcile_index_url(const char *tmpl, const char *ns, const char *name, const char *service, int port,
                        char *dst, size_t len, struct zk_err *err);

/* The newest finish time (completionTime, or the Failed condition's time) over jobs, as an RFC 3339
 * string copied into dst, "" when none has finished. */
void reconcile_jobs_finished(const cJSON *jobs, char *dst, size_t len);

/* Calls fn for each condition of new_status worth an Event: the history the status alone does not
 * keep. That is a condition whose status changed from old_status's (True, False, Unknown), or whose
 * reason became one that asks somebody to act (status_reason_needs_user: an invalid spec, a missing
 * Secret). A new reason with the same status (the search pods went from not created to
 * not available) and a condition appearing for the first time (a new corpus) say nothing the status
 * does not, unless somebody must act: a new corpus on its way gets no Event from here. */
typedef void reconcile_transition_fn(void *ud, const cJSON *condition);
void reconcile_transitions(const cJSON *old_status, const cJSON *new_status, reconcile_transition_fn *fn, void *ud);

#endif
