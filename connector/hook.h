/* hook.h: the webhooks of GitHub, GitLab and Gitea/Forgejo, as the connector's /hooks/push receives
 * them (docs/architecture.md, "Freshness"): whether a delivery is signed with the corpus's secret, what
 * kind of event it is, which repository a push is about, and the key under which that repository is
 * listed. Pure: no I/O, no state; safe from any thread.
 *
 * A delivery is accepted only when one of the hosts' proofs is present and right:
 *   X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>   GitHub (and Gitea, Forgejo)
 *   X-Gitea-Signature:   <hex HMAC-SHA256(secret, body)>          Gitea, Forgejo (X-Forgejo-Signature)
 *   X-Gitlab-Token:      <secret>                                 GitLab (sent as is, over TLS)
 * When several are present, every one of them must be right: a forged header beside a genuine one is
 * not overlooked. Comparisons take the same time whatever matched (CRYPTO_memcmp over digests).
 *
 * The kind of a proven delivery comes from its event header and, where the header leaves it open, the
 * payload (hook_parse_event):
 *   push        X-GitHub-Event, X-Gitea-Event or X-Forgejo-Event "push"; GitLab's event_name "push",
 *               "tag_push" (a project or group hook's "Push Hook", or a system hook) or
 *               "repository_update" (a system hook's push of tags or several branches); a delivery
 *               with no event header at all, as every delivery was read before events were told apart
 *   repository  "repository" with action created, deleted, renamed, transferred, archived,
 *               unarchived, publicized or privatized (GitHub; Gitea and Forgejo send created and
 *               deleted); GitLab's event_name project_create, project_destroy, project_rename or
 *               project_transfer (a system hook, or a group hook's project events)
 *   other       anything else: ping, issues, a repository "edited", GitLab's project_update, ... */
#ifndef ZK_CONNECTOR_HOOK_H
#define ZK_CONNECTOR_HOOK_H

#include "err.h"

#include <stddef.h>

#define HOOK_MAX_URLS 6   /* clone, ssh and web URLs of GitHub's, GitLab's and Gitea's payloads */
#define HOOK_KEY_MAX 512  /* bound on a repository key (host and path) */

/* The proof headers of one delivery; each NULL when absent. */
struct hook_proof {
    const char *hub_signature_256; /* X-Hub-Signature-256 */
    const char *gitea_signature;   /* X-Gitea-Signature or X-Forgejo-Signature */
    const char *gitlab_token;      /* X-Gitlab-Token */
};

/* Whether the delivery body[0..len) is proven to come from a sender that knows secret (secret_len
 * bytes, at least 1). Returns 1 or 0; 0 also when no proof is present. */
int hook_verify(const struct hook_proof *proof, const char *secret, size_t secret_len, const char *body,
                size_t len);

/* The event headers of one delivery; each NULL when absent. Gitea and Forgejo send X-GitHub-Event beside
 * their own, with the same value. */
struct hook_event_headers {
    const char *github; /* X-GitHub-Event */
    const char *gitea;  /* X-Gitea-Event or X-Forgejo-Event */
    const char *gitlab; /* X-Gitlab-Event: GitLab names the hook ("Push Hook", "System Hook"), and the
                         * payload says the event */
};

enum hook_kind {
    HOOK_PUSH,       /* commits or tags pushed: the refresh indexer's business */
    HOOK_REPOSITORY, /* a repository appeared, went or changed its name, owner, archival or visibility:
                      * the operator's discovery's business */
    HOOK_OTHER,      /* nothing the connector acts on */
};

#define HOOK_ACTION_MAX 32 /* the longest action or event_name kept, with its NUL */

/* What a delivery is about. */
struct hook_event {
    enum hook_kind kind;
    char action[HOOK_ACTION_MAX]; /* repository: the action or event_name ("created", "project_destroy") */
    char *repository;  /* repository: its full name as the host gives it (for the log), or NULL */
    char *urls[HOOK_MAX_URLS]; /* push: the repository's URLs as the host gives them, heap strings */
    int nurls;
    char *ref; /* push: "refs/heads/main", or NULL when the payload has none */
};

/* Reads a delivery of any of the three hosts, given its event headers (see the top of this file).
 * Returns ZK_OK with *out filled (hook_event_free), or ZK_EINVAL when the body is not a JSON object, or
 * is a push that names no repository URL. */
int hook_parse_event(const struct hook_event_headers *headers, const char *body, size_t len, struct hook_event *out,
                     struct zk_err *err) __attribute__((warn_unused_result));
void hook_event_free(struct hook_event *e);

/* The key a repository URL is matched by: host and path, lower case, without scheme, user, port,
 * trailing "/" and ".git", so that "https://GitHub.com/Org/Repo.git", "git@github.com:org/repo" and
 * "ssh://git@github.com:22/org/repo" are one repository. Returns 1 with the key in dst (len bytes), or
 * 0 when url has no host and path or does not fit. */
int hook_url_key(const char *url, char *dst, size_t len);

#endif
