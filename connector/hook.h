/* hook.h: the push webhooks of GitHub, GitLab and Gitea/Forgejo, as the connector's /hooks/push will
 * receive them (docs/architecture.md, "Freshness"): whether a delivery is signed with the corpus's
 * secret, which repository it is about, and the key under which that repository is listed. Pure: no
 * I/O, no state; safe from any thread.
 *
 * A delivery is accepted only when one of the hosts' proofs is present and right:
 *   X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>   GitHub (and Gitea, Forgejo)
 *   X-Gitea-Signature:   <hex HMAC-SHA256(secret, body)>          Gitea, Forgejo (X-Forgejo-Signature)
 *   X-Gitlab-Token:      <secret>                                 GitLab (sent as is, over TLS)
 * When several are present, every one of them must be right: a forged header beside a genuine one is
 * not overlooked. Comparisons take the same time whatever matched (CRYPTO_memcmp over digests). */
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

/* What a push delivery names: the repository's URLs as the host gives them, and the pushed ref. */
struct hook_push {
    char *urls[HOOK_MAX_URLS]; /* heap strings; nurls of them */
    int nurls;
    char *ref; /* "refs/heads/main", or NULL when the payload has none */
};

/* Reads a push payload of any of the three hosts. Returns ZK_OK with *out filled (hook_push_free), or
 * ZK_EINVAL when the body is not a JSON object naming a repository URL. */
int hook_parse_push(const char *body, size_t len, struct hook_push *out, struct zk_err *err)
    __attribute__((warn_unused_result));
void hook_push_free(struct hook_push *p);

/* The key a repository URL is matched by: host and path, lower case, without scheme, user, port,
 * trailing "/" and ".git", so that "https://GitHub.com/Org/Repo.git", "git@github.com:org/repo" and
 * "ssh://git@github.com:22/org/repo" are one repository. Returns 1 with the key in dst (len bytes), or
 * 0 when url has no host and path or does not fit. */
int hook_url_key(const char *url, char *dst, size_t len);

#endif
