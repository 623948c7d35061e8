/* status.h: what a corpus's status should say, from what was observed. Pure: the clock is an input.
 *
 * The result is a complete status object; reconcile writes it through /status only when it differs
 * from the current one. Conditions keep their lastTransitionTime unless their status flips, so a
 * resync that changes nothing produces an identical object and no write. */
#ifndef ZK_CORPUS_STATUS_H
#define ZK_CORPUS_STATUS_H

#include "controller/corpus/spec.h"
#include "controller/sources/discover.h"
#include "err.h"
#include "shard.h"

#include <cjson/cJSON.h>
#include <time.h>

/* One search shard as a sharded connector's /index-status reports it ("searchShards"). */
struct index_shard {
    int repositories;
    long long index_bytes;
    time_t oldest_index_time; /* 0 when unknown */
    char error[256];          /* why the shard did not answer, or empty */
};

/* What the connector's /index-status reported (see the architecture's contract). */
struct index_status {
    int repositories;
    int shards;
    time_t newest_index_time; /* 0 when unknown */
    time_t oldest_index_time; /* 0 when unknown */
    char zoekt_version[64];
    int has_stale;             /* the connector judged each repository against maxAge (an older one does not) */
    int stale;                 /* repositories older than maxAge when it answered */
    cJSON *stale_repositories; /* their names, oldest first: an array of at most STATUS_MAX_STALE_REPOS
                                  strings owned here, or NULL */
    int nsearch_shards;        /* entries of search_shards: 0 from a connector of one shard */
    struct index_shard search_shards[SHARD_MAX];
};

/* Parses the /index-status body. Returns ZK_OK or ZK_EPARSE with err set; either way *out is to be
 * freed with index_status_free. Of "staleRepositories" it keeps the first STATUS_MAX_STALE_REPOS
 * names and skips any longer than STATUS_STALE_NAME_MAX bytes. */
int index_status_parse(const char *body, size_t len, struct index_status *out, struct zk_err *err);
void index_status_free(struct index_status *s);

/* A move to another number of search shards (docs/sharding.md), as reconcile found it this pass. */
struct status_layout_move {
    int target;          /* the layout being moved to; 0: no move under way */
    const char *reason;  /* STATUS_LAYOUT_INDEXING, STATUS_LAYOUT_ROLLING_OUT or STATUS_LAYOUT_VERIFYING */
    char detail[256];    /* what the move waits for, a clause ("Job org-reindex-1a2b3c4d has not finished") */
};

struct status_input {
    const cJSON *corpus;             /* the observed corpus (its current status is read from here) */
    const struct corpus_spec *spec;  /* NULL when the spec is invalid */
    const struct spec_errors *spec_errors; /* non-empty when invalid */
    const char *missing_ref;         /* a referenced Secret or ConfigMap that does not exist, or NULL */
    const char *missing_kind;        /* its kind: "Secret" (the default) or "ConfigMap" */
    const char *apply_failure;       /* the first child the API server refused, as "<kind> <name>: <the
                                        API's answer>", or NULL when every apply went through */
    const cJSON *deployment;         /* observed children, NULL when absent; with shards, the serving
                                        layout's Deployment with the fewest ready pods */
    int serving_shards;              /* status.servingShards to write (render.h), 0: keep the recorded one */
    const cJSON *shard_deployments[SHARD_MAX]; /* with serving_shards > 1, each shard's Deployment or NULL */
    struct status_layout_move layout_move;
    const cJSON *cronjob;
    const cJSON *jobs;               /* array of the corpus's indexer Jobs, or NULL */
    const cJSON *pods;               /* array of the corpus's Pods (status_prune_pod), or NULL: the
                                        newest finished indexer's termination message (the indexer
                                        script's summary line) names the repositories that failed; a
                                        search pod that cannot be scheduled or pull an image says why
                                        none is available */
    const cJSON *claim;              /* the rendered PersistentVolumeClaim as observed, or NULL (not yet
                                        created, or spec.storage.existingClaim) */
    int storage_class_missing;       /* the claim is Pending and its storage class does not exist */
    const struct index_status *index;/* NULL when not (yet) read */
    const char *index_error;         /* why /index-status could not be read, or NULL */
    const char *endpoint;            /* http://<svc>.<ns>.svc:<port> */
    const char *reindex_honoured;    /* the reindex request value last turned into a Job, or NULL */
    const struct disc_report *sources; /* one per spec.sources entry (nsources), or NULL when the pass
                                          did not get to discovery */
    int nsources;
    size_t sources_dropped;          /* discovered repositories whose names the spec would refuse */
    const char *sources_error;       /* why the discovered and listed repositories could not be merged */
    time_t now;
};

/* Computes the status: a new object owned by the caller, never NULL. *requeue_seconds is the time
 * after which the status will change by itself (freshness deadline), or 0 when nothing is time-based.
 *
 * Ready says the first thing that is wrong, in the order an operator would fix it: an invalid spec
 * (InvalidSpec), a missing Secret or ConfigMap (SecretNotFound, ConfigMapNotFound), a child the API
 * server refused (ApplyFailed: the children that did apply stay, and Indexed and Fresh are judged as
 * usual), the search Deployment not created, scaled to zero, its pods refused by the API server
 * (PodsRefused: the Deployment's ReplicaFailure condition, a quota or Pod Security rejection), a search
 * pod that cannot run (Unschedulable: no node matches; StorageClassNotFound: its claim is Pending on a
 * class that does not exist; VolumeNotBound: the claim is not bound yet, which a new corpus passes
 * through; ImagePullFailed: a container's image cannot be pulled) or the
 * pods otherwise unavailable (DeploymentUnavailable), the index unreachable or not served. */
cJSON *status_compute(const struct status_input *in, long *requeue_seconds);

/* Whether one of pods (the corpus's, as status_input.pods) is a search pod the scheduler could not
 * place: only then does status_compute read storage_class_missing, so only then is it worth a request. */
int status_search_pod_unscheduled(const cJSON *pods);

/* Condition types and the reasons status_compute sets (reconcile names them in Events). */
#define STATUS_READY "Ready"
#define STATUS_INDEXED "Indexed"
#define STATUS_FRESH "Fresh"
/* Present only with spec.sources: whether every source's last listing worked. A failing source keeps
 * its repositories, so Ready does not depend on it. */
#define STATUS_SOURCES_READY "SourcesReady"
#define STATUS_DISCOVERY_FAILED "DiscoveryFailed"
/* Present while the spec or the serving layout has more than one shard: True (STATUS_LAYOUT_SERVING)
 * when the layout the spec names serves, False while a move to it is under way (the old layout serves
 * meanwhile, so Ready does not depend on it), with the step it waits for as the reason. */
#define STATUS_SHARD_LAYOUT "ShardLayout"
#define STATUS_LAYOUT_SERVING "Serving"
#define STATUS_LAYOUT_INDEXING "Indexing"     /* the Job that indexes the new layout has not finished */
#define STATUS_LAYOUT_ROLLING_OUT "RollingOut" /* its search pods are not all rolled out and Ready */
#define STATUS_LAYOUT_VERIFYING "Verifying"   /* its index does not answer yet, or holds fewer repositories */
#define STATUS_SOURCE_ERROR_MAX 512 /* status.sources[].error */
#define STATUS_APPLY_FAILED "ApplyFailed"
#define STATUS_PODS_REFUSED "PodsRefused"
#define STATUS_INDEXER_FAILING "IndexerFailing" /* the newest indexer run could index nothing (its error) */
#define STATUS_UNSCHEDULABLE "Unschedulable"
#define STATUS_VOLUME_NOT_BOUND "VolumeNotBound"               /* on its way: the claim is being provisioned */
#define STATUS_STORAGE_CLASS_NOT_FOUND "StorageClassNotFound" /* the claim's class does not exist */
#define STATUS_IMAGE_PULL_FAILED "ImagePullFailed"
#define STATUS_MAX_FAILED_REPOS 20
#define STATUS_MAX_STALE_REPOS 20
#define STATUS_STALE_NAME_MAX 512

/* The condition of the given type in a status object, or NULL. */
const cJSON *status_condition(const cJSON *status, const char *type);

/* The condition of the given type in a Kubernetes object's status.conditions when its status is
 * "True" (a Job's Complete or Failed, a Deployment's ReplicaFailure), else NULL. */
const cJSON *status_object_condition_true(const cJSON *object, const char *type);

/* Whether reason says the corpus cannot go on until somebody acts (an invalid spec, a Secret or
 * ConfigMap it references that does not exist, pods a quota or an admission policy refuses, an indexer
 * run that could index nothing), as opposed to a state the operator moves through by itself (the
 * search pods starting, no index built yet). */
int status_reason_needs_user(const char *reason);

/* Whether reason says a condition is False only on the way to what the spec asks (a move to another
 * number of shards under way), which is news, not a warning. */
int status_reason_in_progress(const char *reason);

/* The informers' prune function for the rendered kinds (runtime/informer.h): besides the server fields
 * (informer_prune_server_fields) it drops, in place, the metadata the server sets for each object (uid,
 * resourceVersion, generation, creationTimestamp: a rendering never sets them, so compare_subset never
 * reads them, and they are what differs most between two objects of a kind, so they cost the deflated
 * cache most), and every member of status except those status_compute reads: a Deployment's
 * availableReplicas and its ReplicaFailure condition (the other conditions are dropped), a CronJob's
 * lastScheduleTime and lastSuccessfulTime, a PersistentVolumeClaim's phase. */
void status_prune_child(cJSON *obj);

/* The informer's prune function for the corpus's Pods: of a Pod it keeps its metadata (less the server
 * fields) and of its status only what status_compute reads: the PodScheduled condition while it is
 * False, and per container its name, image, why it waits and its termination (the indexer's summary
 * message). What changes while a pod merely runs (readiness, start times, restart counts, IDs) is
 * dropped, so that a running pod's updates leave the cached object unchanged. */
void status_prune_pod(cJSON *obj);

#endif
