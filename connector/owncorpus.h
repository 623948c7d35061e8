/* owncorpus.h: the CodeSearchCorpus this connector serves (--corpus NS/NAME), through lib/kube. The
 * corpus_status tool reads it; the webhook annotates it to ask the operator for a discovery
 * (connector/webhook.h). The search pod's Role lets the connector get, list and watch that one object,
 * and, with webhooks and spec.sources, patch it (controller/corpus/render.c, render_role).
 *
 * Each call loads the Kubernetes configuration as kube_config_load finds it (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config, or the pod's service account) and makes a client for that call alone: both callers
 * are rare (a tool call; at most one patch per WEBHOOK_DISCOVERY_INTERVAL_MS), so a kept client would
 * save little, and every call sees the configuration as it is now. No state: safe from any thread. */
#ifndef ZK_CONNECTOR_OWNCORPUS_H
#define ZK_CONNECTOR_OWNCORPUS_H

#include "kube/client.h"

#include <cjson/cJSON.h>

/* Bound on each request to the API server. Below the webhook's discovery interval, so that one patch
 * has ended before the next may start, and below the 10 s in which GitHub.com and GitLab expect a
 * webhook's answer. Gitea waits 5 s by default (DELIVER_TIMEOUT): only an API server slower than that
 * makes it give up first, and the answer would then have been a failure anyway. */
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

/* Sets the corpus's annotation key to value: a JSON merge patch of metadata.annotations, which changes
 * no other annotation or field and needs no resourceVersion, so it never fails on a conflict. It does
 * move the object's resourceVersion, as any edit does: a /status write the operator has in flight is
 * then refused (Conflict) and recomputed from the newer copy. Returns ZK_OK or a code as owncorpus_get
 * does. */
int owncorpus_annotate(const struct owncorpus *c, const char *key, const char *value, struct kube_err *err)
    __attribute__((warn_unused_result));

#endif
