/* api.h: the identity of the CodeSearchCorpus API and of everything the operator writes, in one place:
 * group, version, kind and plural of the corpus resource, the field manager, the labels and
 * annotations children carry, the selectors that find them again, and the mapping from a child back to
 * its corpus. Every other file takes these names from here; the generic runtime (controller/runtime/)
 * knows none of them and is handed api_corpus_key instead. */
#ifndef ZK_CORPUS_API_H
#define ZK_CORPUS_API_H

#include "kube/client.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#define API_GROUP "codesearch.dev"
#define API_VERSION "v1alpha1"
#define API_GROUP_VERSION API_GROUP "/" API_VERSION
#define API_KIND "CodeSearchCorpus"
#define API_PLURAL "codesearchcorpora"

/* The field manager of every server-side apply, and the value of the managed-by label. */
#define API_MANAGER "zoekt-operator"

/* Labels and annotations the children carry. Every child has app.kubernetes.io/name=zoekt,
 * app.kubernetes.io/instance=<render_instance_label(corpus name)>, app.kubernetes.io/component (index for
 * the PVC, indexer for the ConfigMap, CronJob and Jobs, search for the rest) and
 * app.kubernetes.io/managed-by=zoekt-operator. */
#define API_LABEL_NAME "app.kubernetes.io/name"
#define API_LABEL_INSTANCE "app.kubernetes.io/instance"
#define API_LABEL_COMPONENT "app.kubernetes.io/component"
#define API_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define API_APP_NAME "zoekt"
/* On the Deployment's pod template: SHA-256 (hex) of the ConfigMap's data, so a change rolls the pods. */
#define API_ANN_CONFIG_HASH API_GROUP "/config-hash"
/* On the refresh Deployment's pod template: SHA-256 (hex) of indexer.sh. The pod runs the script it
 * started with for as long as it lives, so a new script (a new operator) must replace it. */
#define API_ANN_SCRIPT_HASH API_GROUP "/script-hash"
/* On objects that have no controller ownerReference to their corpus (the PVC kept under Retain, the
 * Jobs the CronJob creates): the corpus's full name. The app.kubernetes.io/instance label cannot carry a
 * name longer than 63 characters; an annotation can, so this is what maps such objects back. */
#define API_ANN_CORPUS API_GROUP "/corpus"
/* On the PVC: Retain or Delete, the policy it was rendered under (only Delete adds an ownerReference). */
#define API_ANN_ON_DELETE API_GROUP "/on-delete"
/* On a corpus: a request to reindex now; on the Job it created: the request it honours. */
#define API_ANN_REINDEX API_GROUP "/reindex-requested-at"
/* A new value lists every spec.sources entry at once (the connector sets it on a host's repository
 * webhook; anybody may, as for a reindex). */
#define API_ANN_DISCOVER API_GROUP "/discover-requested-at"
/* On a reindex Job: the first 16 hex digits of SHA-256(request value) (values may not be label-safe). */
#define API_LABEL_REINDEX API_GROUP "/reindex-request"

/* On search pods, their Services and PodDisruptionBudgets: how many shards their layout has (every
 * search pod carries it, so that the search Service can select one layout while another is built),
 * and, in a layout of more than one, the pod's shard (lib/shard.h). */
#define API_LABEL_SHARDS API_GROUP "/shards"
#define API_LABEL_SHARD API_GROUP "/shard"

/* The selector that lists every child the operator manages, and the one for the indexer's Pods only
 * (the search pods would only add watch traffic). */
#define API_CHILD_SELECTOR API_LABEL_MANAGED_BY "=" API_MANAGER

/* The corpus resource, for the kube client and the informers. */
extern const struct kube_resource api_corpus_resource;

/* The key ("namespace/name") of the corpus a child belongs to, written into key (len bytes): the corpus
 * named by the object's controller ownerReference of kind CodeSearchCorpus, or, when there is none and
 * the object is managed by the operator (its managed-by label), by its corpus annotation, else its
 * instance label. These cover objects the corpus does not own directly: a PVC kept under the Retain
 * policy, and the Jobs a CronJob creates (owned by the CronJob, annotated and labelled through its job
 * template). Returns 1, or 0 when obj belongs to no corpus or the key does not fit. Pure; the informers
 * of children take it as their key function (runtime/informer.h). */
int api_corpus_key(const cJSON *obj, char *key, size_t len);

/* The object's controller ownerReference when it is a CodeSearchCorpus of this API group, or NULL:
 * how the operator tells that a corpus owns an object (borrowed from obj). */
const cJSON *api_corpus_owner(const cJSON *obj);

#endif
