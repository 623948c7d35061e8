/* config.h: where the Kubernetes API server is and how to authenticate to it.
 *
 * Two sources, as client-go has them: a kubeconfig file (its current context, or a named one) and the
 * in-cluster service account. Inline certificate data stays in memory (it is handed to libcurl as a
 * blob), so a controller with a read-only root filesystem never needs to write a temporary file. */
#ifndef ZK_KUBE_CONFIG_H
#define ZK_KUBE_CONFIG_H

#include "err.h"
#include "kube/exec.h"

#include <stddef.h>
#include <time.h>

struct kube_config {
    char *server;     /* "https://host:port", no trailing slash */
    char *ca_file;    /* certificate-authority, or NULL */
    char *ca_pem;     /* decoded certificate-authority-data, or NULL */
    size_t ca_pem_len;
    char *cert_file;  /* client-certificate, or NULL */
    char *cert_pem;   /* decoded client-certificate-data, or NULL */
    size_t cert_pem_len;
    char *key_file;   /* client-key, or NULL */
    char *key_pem;    /* decoded client-key-data, or NULL */
    size_t key_pem_len;
    char *token;      /* a bearer token given inline, or NULL */
    char *token_file; /* a file to (re-)read the bearer token from, or NULL */
    struct kube_exec *exec; /* an exec credential plugin that supplies the token (kube/exec.h), or NULL */
    char *namespace;  /* the context's namespace, the pod's namespace in cluster, or "default" */
    int insecure;     /* insecure-skip-tls-verify: honoured, and logged loudly by the programs */
};

/* Loads the configuration the way kubectl finds it: explicit_path if not NULL, else $KUBECONFIG (a
 * colon-separated list of files, merged as kubectl merges them: missing files are skipped, the first
 * file that sets current-context decides it, the first file with a context, cluster or user of a name
 * provides it, at most 16 files), else ~/.kube/config, else in-cluster when KUBERNETES_SERVICE_HOST
 * is set. context may be NULL (the current context). On success *cfg is filled and owned by the caller
 * (kube_config_free); on failure it is left empty and err says which file and which field was wrong. */
int kube_config_load(const char *explicit_path, const char *context, struct kube_config *cfg, struct zk_err *err);

/* Reads one kubeconfig file. Same contract as kube_config_load. */
int kube_config_from_file(const char *path, const char *context, struct kube_config *cfg, struct zk_err *err);

/* Parses kubeconfig YAML held in memory; source names it in error messages. Same contract. */
int kube_config_from_yaml(const char *yaml, size_t len, const char *source, const char *context,
                          struct kube_config *cfg, struct zk_err *err);

/* In-cluster configuration from KUBERNETES_SERVICE_HOST/PORT and the files under sa_dir (NULL means
 * /var/run/secrets/kubernetes.io/serviceaccount): ca.crt, token (kept as token_file, because projected
 * tokens rotate and must be re-read), namespace. Same contract. */
int kube_config_in_cluster(const char *sa_dir, struct kube_config *cfg, struct zk_err *err);

/* Deep-copies src into *dst, which the caller then owns (kube_config_free). */
void kube_config_copy(const struct kube_config *src, struct kube_config *dst);

/* Frees every member and leaves *cfg empty (all NULL). Safe on an empty or zeroed config. */
void kube_config_free(struct kube_config *cfg);

#endif
