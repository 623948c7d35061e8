/* webhook.h: POST /hooks/push, a route of the front (connector/front.h): a push webhook of GitHub,
 * GitLab or Gitea/Forgejo, proven with the corpus's webhook secret (connector/hook.h), becomes a
 * request for the refresh indexer: an empty file <queue dir>/<shard prefix> on the shared volume, the
 * same request a poll writes (docs/indexer.md, "Freshness"). So any number of deliveries for one
 * repository before its index run give one run.
 *
 *   401  a missing or wrong proof: nothing is read beyond the body, nothing is written
 *   413  a body over FRONT_BODY_MAX (the poll still finds the push)
 *   400  a proven body that is not a JSON object, or a push that names no repository URL
 *   202  {"queued":"<name>"}, or {"ignored":"<why>"} for a repository the corpus does not list, a
 *        ref that is not a branch, or an event that is not a push (hook.h says how events are told
 *        apart)
 *   503  the secret, the repository list or the queue cannot be read or written (logged)
 *   405  another method than POST
 *
 * The secret and the repository list are read on every delivery (both small, both mounted from the
 * API and updated in place), so a rotated secret or an edited list takes effect without a restart.
 * Every delivery is counted by the proof it carried and what became of it (connector/metrics.h). Safe
 * from several threads: a webhook holds only paths, and the metrics are atomic. */
#ifndef ZK_CONNECTOR_WEBHOOK_H
#define ZK_CONNECTOR_WEBHOOK_H

#include "connector/front.h"
#include "connector/hook.h"
#include "connector/metrics.h"
#include "err.h"

#define WEBHOOK_PATH "/hooks/push"
#define WEBHOOK_SECRET_MAX 4096u
#define WEBHOOK_LIST_MAX (1u << 20) /* a ConfigMap holds at most 1 MiB */

struct webhook_opts {
    const char *secret_file; /* the Secret's key, mounted */
    const char *repos_file;  /* the indexer's repository list: "name url [branches [kind web-url]]" lines */
    const char *queue_dir;   /* the indexer's request folder on the shared volume */
    struct cmetrics *metrics; /* where each delivery is counted; NULL: nowhere. Must outlive the webhook */
};

struct webhook;

/* *out is owned by the caller (webhook_free); the paths are copied. */
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
 * proof and event headers, writing the request file when it is proven and is a push of a listed
 * repository. */
void webhook_handle(struct webhook *w, const struct hook_proof *proof, const struct hook_event_headers *events,
                    const char *body, size_t len, int too_big, struct webhook_answer *answer);

/* The route the front serves WEBHOOK_PATH with; w must outlive the front. */
struct front_route webhook_route(struct webhook *w);

#endif
