/* spec.h: a CodeSearchCorpus spec, parsed, defaulted and validated. Pure: no I/O.
 *
 * The CRD's schema already rejects most bad input at admission, but the controller validates again
 * (cron syntax, duplicate repository names, URLs) because schemas differ across Kubernetes versions and
 * because objects may predate a schema change. Validation never stops at the first problem: every
 * field error is collected so one status condition can name them all. */
#ifndef ZK_CORPUS_SPEC_H
#define ZK_CORPUS_SPEC_H

#include "err.h"

#include <cjson/cJSON.h>

#define SPEC_MAX_FIELD_ERRORS 16

/* Bounds shared with the CRD's schema (crds/codesearch.dev_codesearchcorpora.yaml). */
#define SPEC_MAX_REPOS 2000
#define SPEC_MAX_BRANCHES 64
#define SPEC_MAX_EXTRA_FLAGS 32
#define SPEC_MAX_REPO_NAME 200
#define SPEC_MAX_URL 2048
#define SPEC_MAX_POLICY_PEERS 32 /* spec.networkPolicy.from */

/* Defaults for what the CRD leaves unset. Images are not defaulted by the CRD on purpose: a new
 * operator release can then move every corpus that did not pin an image. The zoekt image is the
 * project's own multi-architecture build (images/Dockerfile.zoekt): upstream's ghcr.io/sourcegraph/zoekt
 * is published for amd64 only, and the search pods run on arm64 nodes by default. Every default is
 * pinned to a version, never a moving tag, so a pod restart cannot silently change what runs. */
#define SPEC_DEFAULT_SCHEDULE "0 3 * * *"
#define SPEC_DEFAULT_STORAGE_CLASS "efs-sc"
#define SPEC_DEFAULT_SIZE "100Gi"
/* The project's own images are tagged with its version (ZK_VERSION, from the Makefile). */
#define SPEC_DEFAULT_ZOEKT_IMAGE "ghcr.io/zoekt-operator/zoekt:" ZK_VERSION
#define SPEC_DEFAULT_NGINX_IMAGE "docker.io/nginxinc/nginx-unprivileged:1.27-alpine"
#define SPEC_DEFAULT_CONNECTOR_IMAGE "ghcr.io/zoekt-operator/zoekt-connector:" ZK_VERSION
#define SPEC_DEFAULT_DEADLINE_SECONDS 14400L
/* indexer.sh's own default for GIT_HTTP_LOW_SPEED_TIME: a corpus that keeps it renders no variable. */
#define SPEC_DEFAULT_FETCH_STALL_SECONDS 60L
#define SPEC_DEFAULT_ARCHITECTURE "arm64"
#define SPEC_DEFAULT_PORT 8080
#define SPEC_DEFAULT_MAX_AGE_SECONDS (36L * 3600L)
/* A poll asks each remote for its heads (git ls-remote: two small HTTP requests); every 5 minutes
 * over 1,000 repositories is about 7 requests a second, well within any git host's limits, and a
 * push waits at most that long without a webhook. Shorter than 30 s would spend the git host's rate
 * limit on nothing. */
#define SPEC_DEFAULT_POLL_SECONDS 300L
#define SPEC_MIN_POLL_SECONDS 30L

struct spec_field_error {
    char field[160];   /* JSON path, e.g. "spec.repositories[3].url" */
    char message[256]; /* what is wrong and what is expected */
};

struct spec_errors {
    struct spec_field_error items[SPEC_MAX_FIELD_ERRORS];
    int count;   /* errors stored */
    int dropped; /* errors beyond SPEC_MAX_FIELD_ERRORS, counted only */
};

struct corpus_repo {
    char *url;
    char *name;      /* given, or derived from the URL ("github.com/org/repo") */
    char **branches; /* NULL-terminated; empty means the remote HEAD */
    char *web_url;   /* its address on the code host, from which Zoekt makes each file's (zoekt.web-url),
                      * or NULL: no addresses */
    const char *code_host; /* the kind of that host (zoekt.web-url-type), static; NULL when web_url is */
};

enum pvc_policy { PVC_RETAIN = 0, PVC_DELETE = 1 };

/* spec.sources: where a corpus's repositories are discovered instead of listed (docs/sources.md). The
 * hosts are in the order of controller/sources/hostapi.h's kinds, which the discovery maps them to. */
enum spec_source_host { SPEC_HOST_GITHUB, SPEC_HOST_GITLAB, SPEC_HOST_GITEA };
#define SPEC_MAX_SOURCES 16
#define SPEC_MAX_SOURCE_GLOBS 64
/* Visibility filter bits, spec.sources[].visibility; 0 keeps every visibility. */
#define SPEC_VISIBLE_PUBLIC 1u
#define SPEC_VISIBLE_PRIVATE 2u
#define SPEC_VISIBLE_INTERNAL 4u
#define SPEC_DEFAULT_DISCOVERY_SECONDS 600L
#define SPEC_MIN_DISCOVERY_SECONDS 60L
#define SPEC_DEFAULT_GRACE_SECONDS 86400L

/* What a source's host and owner are called in the spec, in the status and in the discovery's state:
 * "github", "gitlab" or "gitea" (Forgejo is "gitea"), and "org", "group" or "user". Static strings. */
struct corpus_source;
const char *spec_source_host_name(enum spec_source_host host);
const char *spec_source_owner_kind(const struct corpus_source *src);

struct corpus_source {
    enum spec_source_host host;
    char *api_url;      /* the API's base URL, derived from spec.sources[].url and the host */
    char *owner;        /* org, user or (GitLab) group */
    int user;           /* owner is a user */
    char *token_secret; /* tokenSecretRef.name, or NULL: anonymous (public repositories only) */
    char *token_key;    /* tokenSecretRef.key, default "token" */
    char **include;     /* NULL-terminated globs over full names, or NULL: every repository */
    char **exclude;     /* NULL-terminated, or NULL */
    int archived, forks;
    unsigned visibility; /* SPEC_VISIBLE_* bits; 0: all */
    int public_host;     /* GitHub.com or GitLab.com: trusted by the system's CA store, not gitCABundleRef */
};

struct corpus_spec {
    struct corpus_repo *repos; /* spec.repositories; reconcile adds the discovered ones before render */
    int nrepos;
    struct corpus_source *sources; /* spec.sources, nsources of them */
    int nsources;
    long discovery_interval_seconds; /* spec.discovery.interval: default 10m */
    long discovery_grace_seconds;    /* spec.discovery.grace: default 24h */
    char *discovered; /* set by reconcile, not spec_parse: the discovered sets as the ConfigMap keeps them
                       * (controller/sources/discover.h), or NULL without sources */
    char *credentials_secret; /* gitCredentialsSecretRef.name, or NULL */
    struct {
        int is_secret;        /* the object is a Secret (else a ConfigMap) */
        char *name;           /* NULL: git trusts the image's CA store only */
        char *key;            /* default "ca.crt" */
    } git_ca;                 /* gitCABundleRef */
    char *schedule;           /* cron, default "0 3 * * *" */
    char *time_zone;          /* or NULL */
    int suspend;
    struct {
        char *storage_class;  /* default "efs-sc" */
        char *size;           /* default "100Gi" */
        char *existing_claim; /* or NULL: then no PVC is rendered */
        enum pvc_policy on_delete;
    } storage;
    struct {
        char *image;
        cJSON *resources;     /* owned copy, or NULL for defaults */
        long deadline_seconds;
        long fetch_stall_seconds; /* an HTTP(S) fetch under 1 KB/s for this long is abandoned (default 60) */
        char **extra_flags;   /* NULL-terminated */
        int symbols;          /* index ctags symbols (default 1); 0 passes -disable_ctags */
    } indexer;
    struct {
        char *image;
        int replicas;         /* search pods per shard */
        int shards;           /* search shards (1..SHARD_MAX, default 1): each serves the repositories
                               * lib/shard.h assigns it, from a folder of its own */
        cJSON *resources;
        char *architecture;   /* default "arm64" */
        cJSON *node_selector; /* owned copy or NULL */
        cJSON *tolerations;   /* owned copy or NULL */
    } webserver;
    struct {
        char *image;
        int port;             /* default 8080 */
        char *tokens_secret;  /* Secret with accepted bearer tokens, or NULL */
    } gateway;
    struct {
        char *image;
        int max_files, context_lines, search_timeout_seconds, list_timeout_seconds;
        char *mirror_prefix;
    } connector;
    long freshness_max_age_seconds; /* default 36h */
    long poll_interval_seconds;     /* spec.poll.interval: default 5m; 0 ("0") turns polling off */
    char *webhook_secret;           /* spec.webhook.secretRef.name (key "secret"), or NULL: no /hooks/push */
    struct {
        int enabled;                /* spec.networkPolicy.enabled, default 1 */
        cJSON *from;                /* spec.networkPolicy.from: NetworkPolicy peers (owned copy), or NULL:
                                     * the pods of the corpus's own namespace */
        cJSON *metrics_from;        /* spec.networkPolicy.metricsFrom: the same, or NULL: every namespace */
    } network_policy;
    struct {                        /* for every pod, borrowed from the spec_defaults parsed with */
        const char *const *image_pull_secrets;
        const char *priority_class;
        const cJSON *labels;
    } pods;
    const char *operator_namespace; /* borrowed from the spec_defaults, or NULL */
};

/* What the operator gives every corpus. The images are those a corpus gets where its spec names none:
 * a release's chart sets them (the operator's --zoekt-image, --connector-image and --gateway-image
 * flags) to that release's images pinned by digest; a NULL member means the built-in SPEC_DEFAULT_*
 * reference. The pod settings are what every corpus pod needs on the cluster it runs in
 * (--corpus-image-pull-secrets, --corpus-priority-class, --corpus-pod-labels); NULL means none. A
 * parsed spec borrows them, so they must outlive every spec parsed with them (the operator's are set
 * once, at start). */
struct spec_defaults {
    const char *zoekt;
    const char *connector;
    const char *gateway;
    const char *const *image_pull_secrets; /* NULL-terminated Secret names in the corpus's namespace */
    const char *priority_class;            /* a PriorityClass name */
    const cJSON *pod_labels;               /* an object of string values, added to every pod's labels */
    const char *operator_namespace;        /* where the operator runs: its NetworkPolicies let it read
                                            * /index-status from there; NULL when not known */
};

/* Parses corpus (the whole CodeSearchCorpus object) into *out, owned by the caller (spec_free), with
 * the defaults given (NULL: the built-in images and no pod settings). Returns ZK_OK, or ZK_EINVAL with errs
 * filled (then *out is NULL). */
int spec_parse(const cJSON *corpus, const struct spec_defaults *defaults, struct corpus_spec **out,
               struct spec_errors *errs);

void spec_free(struct corpus_spec *spec);

/* The operator's pod settings from its flags. spec_parse_secret_names: csv is comma-separated Secret
 * names (DNS subdomains); *names is a NULL-terminated heap array (spec_strv_free). spec_parse_pod_labels:
 * csv is comma-separated key=value labels, keys with an optional DNS prefix, none under
 * app.kubernetes.io/ (the operator's own, which selectors match); *labels is a new object. Both give
 * ZK_EINVAL with err naming the item that is not valid, and set nothing then. */
int spec_parse_secret_names(const char *csv, char ***names, struct zk_err *err) __attribute__((warn_unused_result));
int spec_parse_pod_labels(const char *csv, cJSON **labels, struct zk_err *err) __attribute__((warn_unused_result));
/* The namespaces of --namespace: comma-separated namespace names (DNS labels), as
 * spec_parse_secret_names gives Secret names. */
int spec_parse_namespaces(const char *csv, char ***names, struct zk_err *err) __attribute__((warn_unused_result));
void spec_strv_free(char **v);

/* Whether s is a DNS subdomain, the form of Secret and PriorityClass names: at most 253 lowercase
 * letters, digits, '-' and '.', alphanumeric at both ends. */
int spec_dns_subdomain(const char *s);

/* "field: message; field: message" (with "and N more" when dropped), for conditions and Events.
 * Writes at most len bytes including the terminator. */
void spec_errors_format(const struct spec_errors *errs, char *dst, size_t len);

/* Checks a cron schedule as Kubernetes' CronJob controller accepts it: five fields (minute, hour,
 * day of month, month, day of week) of lists, ranges, steps, "*", "?" and month/day names, or one of
 * @yearly @annually @monthly @weekly @daily @midnight @hourly. Returns 1 when valid; otherwise 0 and a
 * reason in why (len bytes). */
int spec_cron_valid(const char *expr, char *why, size_t len);

/* Parses a duration such as "36h", "90m", "1h30m", "2d" or "45s" into seconds. Returns 1 on success
 * (a positive total that fits a long), 0 otherwise. */
int spec_duration_parse(const char *s, long *seconds);

/* Writes the canonical form Kubernetes gives resource quantity s ("0.5" -> "500m", "1024Mi" -> "1Gi",
 * "2000m" -> "2") into dst (len bytes). Returns 1, or 0 when s is not a plain decimal with one of the
 * suffixes m k M G T P E Ki Mi Gi Ti Pi Ei, or needs more precision than thousandths (or whole bytes
 * for binary suffixes). Exponent forms ("1e3") are not accepted. */
int spec_quantity_canonical(const char *s, char *dst, size_t len);

/* Checks a clone URL against the forms the indexer supports (https://, ssh://, user@host:path and
 * file:///path, without credentials, quotes or control characters). Returns NULL when it is fine, else
 * a phrase saying why not. Discovered repositories (controller/sources) meet the same check as listed
 * ones. */
const char *spec_url_problem(const char *url);

/* Whether s is a valid repository name: '/'-separated segments of letters, digits, '.', '_' and '-',
 * none empty, "." or "..", none starting with '-', at most SPEC_MAX_REPO_NAME bytes in all. */
int spec_repo_name_ok(const char *s);

/* Derives a repository name from a clone URL ("https://github.com/org/repo.git" -> "github.com/org/repo").
 * Returns 1 and writes at most len bytes into dst, or 0 when the URL has no usable path. */
int spec_name_from_url(const char *url, char *dst, size_t len);

/* The address of a repository's pages on its code host, derived from its clone URL (one that spec_url_problem
 * accepts): https://host/path without ".git". An https URL keeps its port, since the same server shows the
 * pages; an ssh URL's port is the ssh server's, so it is dropped. Returns 1 and writes at most len bytes
 * into dst, or 0 for a file:// URL (on no code host) or when dst is too small. */
int spec_web_url(const char *url, char *dst, size_t len);

/* The kind of code host (a spec.repositories[].codeHost value) at web_url, an https:// address, when its
 * host is one of the public ones whose kind is known: github.com, gitlab.com, bitbucket.org,
 * dev.azure.com and *.googlesource.com. NULL for any other host, whose kind only the spec can say. */
const char *spec_code_host_infer(const char *web_url);

/* The TCP port git connects to for a URL that spec_url_problem accepts: the one written in it, else 443 for
 * https://, 22 for ssh:// and user@host:path; 0 for file:// (no network). */
int spec_url_port(const char *url);

#endif
