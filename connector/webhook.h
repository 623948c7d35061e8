/* webhook.h: POST /hooks/push, a route of the front (connector/front.h): a webhook of GitHub, GitLab
 * or Gitea/Forgejo, proven with the corpus's webhook secret (connector/hook.h), becomes one of two
 * requests.
 *
 * A push of a listed repository becomes a request for the refresh indexer: an empty file
 * <queue dir>/<shard prefix> on the shared volume, the same request a poll writes (docs/indexer.md,
 * "Freshness"). So any number of deliveries for one repository before its index run give one run.
 *
 * A repository event (created, deleted, renamed, transferred, archived, ...; hook.h lists them), and a
 * push of a repository the corpus does not list, which is how a new repository's first push looks,
 * become a request for the operator to discover the corpus's repositories from its spec.sources now
 * rather than at its next interval: the annotation WEBHOOK_DISCOVER_ANNOTATION set to the current time
 * on the connector's own corpus (connector/owncorpus.h), as a person sets reindex-requested-at to ask
 * for a reindex. The API server is asked at most once per WEBHOOK_DISCOVERY_INTERVAL_MS by the whole
 * process: a burst of deliveries (an organisation's repositories created by a script, the pushes that
 * follow) gives one patch, and one discovery finds every change of the burst so far.
 *
 *   401  a missing or wrong proof: nothing is read beyond the body, nothing is written or asked
 *   413  a body over FRONT_BODY_MAX (the poll still finds the push)
 *   400  a proven body that is not a JSON object, or a push that names no repository URL
 *   202  {"queued":"<name>"}: a push of a listed repository, its request file written
 *   202  {"discovery":"requested"}: the corpus annotated
 *   202  {"discovery":"already requested"}: a discovery was requested, or is being requested, less than
 *        WEBHOOK_DISCOVERY_INTERVAL_MS ago; the discovery it starts finds this change too (should a
 *        request still in flight fail, the deliveries it covered were answered so all the same)
 *   202  {"ignored":"<why>"}: a tag push; an event that is neither a push nor a repository event; a
 *        repository event or an unlisted repository's push when the connector requests no
 *        discoveries (no --webhook-discovery, given only for a corpus with spec.sources, or no --corpus)
 *   503  {"error":...}: the secret, the repository list or the queue cannot be read or written; or the
 *        corpus cannot be annotated (the API server unreachable, the Role refusing), and for the rest
 *        of that interval the deliveries that would have requested a discovery (logged once, counted
 *        as discovery_failed). The operator's own interval still discovers what the host reported.
 *   405  another method than POST
 *
 * The secret and the repository list are read on every delivery (both small, both mounted from the
 * API and updated in place), so a rotated secret or an edited list takes effect without a restart.
 * Every delivery is counted by the proof it carried and what became of it (connector/metrics.h). Safe
 * from several threads: a webhook holds only paths and names, the time of the last discovery request
 * in one atomic word, and the metrics, which are atomic. */
#ifndef ZK_CONNECTOR_WEBHOOK_H
#define ZK_CONNECTOR_WEBHOOK_H

#include "connector/front.h"
#include "connector/hook.h"
#include "connector/metrics.h"
#include "err.h"

#define WEBHOOK_PATH "/hooks/push"
#define WEBHOOK_SECRET_MAX 4096u
#define WEBHOOK_LIST_MAX (1u << 20) /* a ConfigMap holds at most 1 MiB */
/* The annotation that asks the operator for a discovery, its value an RFC 3339 UTC time: each new value
 * asks once. The operator's controller/corpus/api.h names it too; the two programs share no code
 * (docs/architecture.md, "Layers"). */
#define WEBHOOK_DISCOVER_ANNOTATION "codesearch.dev/discover-requested-at"
/* At most one discovery request per this many milliseconds, for the whole process. The annotation's
 * value is the wall clock to the second, so requests this far apart always set a new value (unless the
 * clock is set back by more than the interval). */
#define WEBHOOK_DISCOVERY_INTERVAL_MS 10000LL

struct webhook_opts {
    const char *secret_file; /* the Secret's key, mounted */
    const char *repos_file;  /* the indexer's repository list: "name url [branches [kind web-url]]" lines */
    const char *queue_dir;   /* the indexer's request folder on the shared volume */
    struct cmetrics *metrics; /* where each delivery is counted; NULL: nowhere. Must outlive the webhook */
    /* The corpus a discovery is requested for (--corpus, when --webhook-discovery) and how to reach the
     * API server (--kubeconfig, NULL: as lib/kube/config.h searches). With no corpus, no discovery is
     * requested. */
    const char *corpus_namespace, *corpus_name;
    const char *kubeconfig;
    long long (*now_ms)(void); /* the clock of the discovery interval (monotonic); NULL: lib/monotime.h */
};

struct webhook;

/* *out is owned by the caller (webhook_free); the strings are copied. */
int webhook_new(const struct webhook_opts *opts, struct webhook **out, struct zk_err *err)
    __attribute__((warn_unused_result));
void webhook_free(struct webhook *w);

/* The answer to one delivery: an HTTP status, a small JSON body, and the outcome the metrics count. */
struct webhook_answer {
    unsigned status;
    char body[384];
    enum cmetrics_outcome outcome;
};

/* Handles one delivery of body[0..len) (too_big: it was longer than the front's bound) with the given
 * proof and event headers, writing the request file or requesting a discovery as the top of this file
 * says. */
void webhook_handle(struct webhook *w, const struct hook_proof *proof, const struct hook_event_headers *events,
                    const char *body, size_t len, int too_big, struct webhook_answer *answer);

/* The route the front serves WEBHOOK_PATH with; w must outlive the front. */
struct front_route webhook_route(struct webhook *w);

#endif
