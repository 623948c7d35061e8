/* render.h: the desired child objects of one corpus. Pure: a function of (corpus, spec, environment).
 *
 * Every child carries the app.kubernetes.io/{name,instance,component,managed-by} labels and a
 * controller ownerReference to the corpus, has a name within Kubernetes' length limits for any corpus
 * name, and contains only the fields the operator owns, so that server-side apply and the subset
 * comparison in reconcile see exactly our intent. */
#ifndef ZK_CORPUS_RENDER_H
#define ZK_CORPUS_RENDER_H

#include "controller/corpus/spec.h"
#include "err.h"

#include <cjson/cJSON.h>

struct render_env {
    const char *cronjob_api_version; /* "batch/v1" or "batch/v1beta1", from discovery */
};

/* Names of the children of corpus `name` (each at most 63 characters, shortened with a hash suffix
 * when needed). Writes into caller-provided buffers of RENDER_NAME_MAX bytes. */
#define RENDER_NAME_MAX 64
struct render_names {
    char pvc[RENDER_NAME_MAX];       /* <name>-index */
    char configmap[RENDER_NAME_MAX]; /* <name>-indexer */
    char cronjob[RENDER_NAME_MAX];   /* <name>-indexer */
    char deployment[RENDER_NAME_MAX];/* <name>-search */
    char service[RENDER_NAME_MAX];   /* <name>-search */
    char serviceaccount[RENDER_NAME_MAX]; /* <name>-search */
    char role[RENDER_NAME_MAX];      /* <name>-search */
    char rolebinding[RENDER_NAME_MAX];/* <name>-search */
};
void render_child_names(const char *corpus_name, struct render_names *names);

/* Renders every child, in apply order (PVC, ConfigMap, ServiceAccount, Role, RoleBinding, Service,
 * Deployment, CronJob). *children is a new cJSON array owned by the caller. The PVC is omitted when
 * spec->storage.existing_claim is set. Returns ZK_OK, ZK_ENOMEM, or ZK_EINVAL for an unusable corpus
 * object (no name/uid). */
int render_children(const cJSON *corpus, const struct corpus_spec *spec, const struct render_env *env,
                    cJSON **children, struct zk_err *err);

/* A Job created from the CronJob's job template, for the reindex annotation: named deterministically
 * from the request value (so creating it twice is AlreadyExists, never a second Job), labelled with the
 * request value, owned by the corpus. *job owned by the caller. */
int render_reindex_job(const cJSON *corpus, const struct corpus_spec *spec, const char *request_value,
                       cJSON **job, struct zk_err *err);

/* The object as `zoekt-operator render` prints it: a multi-document YAML stream of all children.
 * Returns a heap string the caller frees. */
int render_yaml(const cJSON *children, char **yaml, struct zk_err *err);

#endif
