/* owncorpus.h: the CodeSearchCorpus this connector serves (--corpus NS/NAME), through lib/kube, as the
 * corpus_status tool reads it. The search pod's Role lets the connector get, list and watch that one
 * object (controller/corpus/render.c, render_role).
 *
 * Each call loads the Kubernetes configuration as kube_config_load finds it (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config, or the pod's service account) and makes a client for that call alone: calls are rare
 * (one per corpus_status), so a kept client would save little, and every call sees the configuration
 * as it is now. No state: safe from any thread. */
#ifndef ZK_CONNECTOR_OWNCORPUS_H
#define ZK_CONNECTOR_OWNCORPUS_H

#include "kube/client.h"

#include <cjson/cJSON.h>

/* Bound on each request to the API server: an agent waits for corpus_status. */
#define OWNCORPUS_TIMEOUT_MS 5000

/* Which corpus, and how to reach the API server. The strings are borrowed for the call. */
struct owncorpus {
    const char *kubeconfig; /* NULL: as kube_config_load searches */
    const char *namespace;
    const char *name;
};

/* GETs the corpus. Returns ZK_OK with *out owned by the caller (cJSON_Delete), or a code with err saying
 * why: a configuration that cannot be loaded (base.msg "no Kubernetes configuration: ..."), a server
 * that cannot be reached (a transport code), or the API's refusal (ZK_EAPI; err->reason says which,
 * KUBE_REASON_NOT_FOUND for a corpus that does not exist). */
int owncorpus_get(const struct owncorpus *c, cJSON **out, struct kube_err *err) __attribute__((warn_unused_result));

#endif
