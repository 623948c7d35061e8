/* exec.h: exec credential plugins, the way kubectl authenticates to EKS (`aws eks get-token`), GKE
 * (`gke-gcloud-auth-plugin`) and OIDC providers (`kubelogin`).
 *
 * A kubeconfig user with an `exec` section names a command. The client runs it with the environment
 * variable KUBERNETES_EXEC_INFO describing the request, reads an ExecCredential object from its standard
 * output and sends status.token as the bearer token until status.expirationTimestamp (or until the
 * server answers 401). Only tokens are supported: a plugin that answers with a client certificate gets a
 * clear error. Plugins run non-interactively (standard input is /dev/null), because neither program has
 * a terminal to ask from. */
#ifndef ZK_KUBE_EXEC_H
#define ZK_KUBE_EXEC_H

#include "err.h"

#include <stddef.h>
#include <time.h>

/* Standard output larger than this is not an ExecCredential. */
#define KUBE_EXEC_MAX_OUTPUT (1024u * 1024)

/* users[].user.exec of a kubeconfig. Owned by struct kube_config (kube_config_free frees it). */
struct kube_exec {
    char **argv;        /* command then its args, NULL-terminated; argv[0] holds a '/' or is looked up in PATH */
    char **env;         /* extra "NAME=value" entries for the command, NULL-terminated, or NULL */
    char *api_version;  /* client.authentication.k8s.io/v1 or /v1beta1 */
    char *install_hint; /* what to tell a user whose machine lacks the command, or NULL */
};

/* What a plugin returned. */
struct kube_exec_cred {
    char *token;   /* heap string, never NULL after success */
    time_t expiry; /* 0 when the plugin gave no expiration */
};

/* Parses a plugin's standard output: an ExecCredential of api_version carrying status.token. On success
 * *out holds a token the caller frees with kube_exec_cred_free; on failure *out is empty and err says
 * what was wrong with the output. */
int kube_exec_parse(const char *output, size_t len, const char *api_version, struct kube_exec_cred *out,
                    struct zk_err *err);

/* Runs the plugin, waits at most timeout_ms for it (then kills it) and parses what it printed. Its
 * standard error is kept (the first 2 KiB) for the message when it fails. Same ownership as
 * kube_exec_parse. Errors: ZK_EIO when the command cannot be started (with the install hint) or exits
 * non-zero (with its status and stderr), ZK_ETIMEOUT when it outlives timeout_ms, ZK_EPARSE for output
 * that is not a token-bearing ExecCredential, ZK_ETOOBIG past KUBE_EXEC_MAX_OUTPUT. */
int kube_exec_run(const struct kube_exec *x, long timeout_ms, struct kube_exec_cred *out, struct zk_err *err);

/* Scrubs and frees the token; leaves *c empty. Safe on an empty credential. */
void kube_exec_cred_free(struct kube_exec_cred *c);

/* A deep copy of src (NULL gives NULL), freed with kube_exec_free. */
struct kube_exec *kube_exec_copy(const struct kube_exec *src);

/* Frees x and everything in it. Safe on NULL. */
void kube_exec_free(struct kube_exec *x);

#endif
