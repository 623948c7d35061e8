/* render.h: the desired child objects of one corpus. Pure: a function of (corpus, spec).
 *
 * Every child carries the app.kubernetes.io/{name,instance,component,managed-by} labels (api.h) and a
 * controller ownerReference to the corpus, has a name within Kubernetes' length limits for any corpus
 * name, and contains only the fields the operator owns, so that server-side apply and the subset
 * comparison in reconcile see exactly our intent. */
#ifndef ZK_CORPUS_RENDER_H
#define ZK_CORPUS_RENDER_H

#include "controller/corpus/api.h"
#include "controller/corpus/spec.h"
#include "err.h"
#include "shard.h"

#include <cjson/cJSON.h>

/* Paths inside the pods (the indexer script's environment and the nginx template use them). */
#define RENDER_CONFIG_DIR "/etc/codesearch/config"
#define RENDER_CREDENTIALS_DIR "/etc/codesearch/git-credentials"
#define RENDER_GIT_CA_DIR "/etc/codesearch/git-ca"
#define RENDER_GIT_CA_FILE "ca.crt"
#define RENDER_TOKENS_DIR "/etc/codesearch/tokens"
#define RENDER_WEBHOOK_DIR "/etc/codesearch/webhook"
#define RENDER_WEBHOOK_KEY "secret" /* the key of spec.webhook.secretRef's Secret */
#define RENDER_REPOS_KEY "repositories.txt"
/* The repositories discovered from spec.sources, with their last sightings (controller/sources/discover.h):
 * kept in the ConfigMap so that a restarted operator knows them. Nothing mounts it. */
#define RENDER_DISCOVERED_KEY "discovered"

/* Names of the children of corpus `name` (each at most 63 characters, the CronJob's at most 52 since
 * its Jobs add a suffix; shortened with a hash when needed). Writes into caller-provided buffers of RENDER_NAME_MAX bytes. */
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
    char pdb[RENDER_NAME_MAX];        /* <name>-search */
    char refresh[RENDER_NAME_MAX];    /* <name>-refresh: the Deployment that polls and drains the queue */
    char search_policy[RENDER_NAME_MAX];  /* <name>-search: the NetworkPolicy of the search pods */
    char indexer_policy[RENDER_NAME_MAX]; /* <name>-indexer: the NetworkPolicy of the indexer and refresh pods */
};
void render_child_names(const char *corpus_name, struct render_names *names);

/* Shard layouts (docs/sharding.md). A layout of n shards is n Deployments of search pods, each
 * serving the repositories shard_of (lib/shard.h) gives it from a folder of its own, and a
 * PodDisruptionBudget; a layout of one is today's Deployment <name>-search over /data/index. The search
 * Service sends requests to the serving layout. While spec.webserver.shards names another, both are
 * rendered: the new one is indexed and started beside the old, and the reconciler makes it the serving
 * one (status.servingShards) once it is complete and Ready; the next render drops the old one.
 *
 * The serving layout is status.servingShards; a corpus without it is either new (it serves the spec's
 * layout from the start) or older than sharding (it serves one shard), and the target layout is only
 * rendered once status.servingShards is written: until then, the search Service keeps the selector it
 * had, which a new layout's pods would also match. */
#define RENDER_SHARDS_KEY "shards.txt"  /* the ConfigMap's "<shard> <name>" lines of the target layout */
struct render_layouts {
    int serving;    /* the serving layout's number of shards */
    int target;     /* spec.webserver.shards */
    int recorded;   /* status.servingShards is set: the Service selects the serving layout by label */
    int n;          /* layouts rendered: 1, or 2 while the target one is built */
    int shards[2];  /* their numbers of shards, the serving layout's first */
    /* The Deployment of shard k of layout i (for a layout of one, names.deployment), which is also the
     * name of its own Service (rendered for every layout of more than one, and for a layout of one while
     * it is not serving, so that the reconciler can read that layout's /index-status). */
    char shard[2][SHARD_MAX][RENDER_NAME_MAX];
    char pdb[2][RENDER_NAME_MAX]; /* each layout's PodDisruptionBudget (a layout of one: names.pdb) */
};
void render_layouts(const cJSON *corpus, const struct corpus_spec *spec, struct render_layouts *out);

/* Every child render_children can make, as its kind (a Kubernetes kind, e.g. "Deployment") and its
 * name, a string in names or layouts: the controller looks each up in its cache to tell, without rendering,
 * whether any of them changed. Writes them into out (RENDER_CHILDREN_MAX entries) and returns how many. */
#define RENDER_CHILDREN_MAX (12 + 2 * (2 * SHARD_MAX + 1))
struct render_child {
    const char *kind;
    const char *name;
};
size_t render_child_list(const struct render_names *names, const struct render_layouts *layouts,
                         struct render_child out[RENDER_CHILDREN_MAX]);

/* The app.kubernetes.io/instance label value for a corpus: its name when that is a valid label value
 * (at most 63 characters), else a prefix of it with a hash suffix. dst holds RENDER_NAME_MAX bytes. */
void render_instance_label(const char *corpus_name, char *dst);

/* The nginx configuration the gateway runs: controller/assets/nginx.conf with the port from the spec,
 * the given writable run directory ("/tmp" in the pod) and auth_request on every route but /healthz,
 * /readyz and /index-status when the spec names a token Secret. *conf is a heap string the caller
 * frees. Returns ZK_OK, or ZK_ETOOBIG when the result outgrows its bound. */
int render_nginx_conf(const struct corpus_spec *spec, const char *run_dir, char **conf, struct zk_err *err);

/* The repository list file the indexer reads: one "name url [branches [kind web-url]]" line per
 * repository, branches comma-separated (absent, or HEAD before the code host's fields, for the remote
 * HEAD), kind and web-url what the indexer writes to zoekt.web-url-type and zoekt.web-url (absent: no
 * addresses). *list is a heap string the caller frees. */
int render_repos_list(const struct corpus_spec *spec, char **list, struct zk_err *err);

/* Renders every child, in apply order (PVC, ConfigMap, ServiceAccount, Role, RoleBinding, the two
 * NetworkPolicies, Service, Deployment, PodDisruptionBudget, CronJob, then the refresh Deployment: one
 * replica, or none when the corpus is suspended or neither polls (spec.poll.interval 0) nor takes
 * webhooks, so that turning them off needs no delete). *children is a new cJSON array owned by the
 * caller. The PVC is omitted when spec->storage.existing_claim is set, the NetworkPolicies when
 * spec->network_policy.enabled is 0 (the reconciler then deletes those it made). Returns ZK_OK, or
 * ZK_EINVAL for an unusable corpus object (no name/uid). */
int render_children(const cJSON *corpus, const struct corpus_spec *spec, cJSON **children, struct zk_err *err);

/* A Job created from the CronJob's job template, for the reindex annotation: named deterministically
 * from the request value (so creating it twice is AlreadyExists, never a second Job), labelled with the
 * request value, owned by the corpus. With fresh, the Job indexes a shard layout anew
 * (FRESH_INDEX=1: the script first retires whatever that layout's folders hold, which an earlier use
 * of the same layout left). *job owned by the caller. */
int render_reindex_job(const cJSON *corpus, const struct corpus_spec *spec, const char *request_value, int fresh,
                       cJSON **job, struct zk_err *err);

/* The object as `zoekt-operator render` prints it: a multi-document YAML stream of all children.
 * Returns a heap string the caller frees. */
int render_yaml(const cJSON *children, char **yaml, struct zk_err *err);

#endif
