/* main.c: zoekt-operator's command line, signal handling and wiring.
 *
 *   zoekt-operator [flags]                        run the controller
 *   zoekt-operator render -f corpus.yaml [flags]  print the children a corpus would get; no cluster
 *
 * Running the controller: load the kubeconfig (or the in-cluster service account), check by discovery
 * that the server serves the CronJob and PodDisruptionBudget versions the children use, start an
 * informer per resource, serve /healthz /readyz /metrics, take part in leader election, and hand the
 * corpus reconciler to controller/runtime/controller, which runs --workers reconcile threads over the
 * work queue once this replica leads and its caches are complete. SIGTERM or SIGINT stops the
 * watches, lets in-flight reconciles finish, releases the Lease and exits 0; a second signal exits 1
 * at once. Losing the Lease exits 1, and the Deployment restarts the process as a fresh candidate. */
#include "controller/corpus/api.h"
#include "controller/corpus/gauges.h"
#include "controller/corpus/reconcile.h"
#include "controller/corpus/render.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "controller/runtime/controller.h"
#include "controller/runtime/events.h"
#include "controller/runtime/informer.h"
#include "controller/runtime/leader.h"
#include "controller/runtime/metrics.h"
#include "controller/runtime/queue.h"
#include "controller/runtime/serve.h"
#include "buf.h"
#include "flag.h"
#include "http.h"
#include "json.h"
#include "kube/client.h"
#include "kube/config.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"
#include "sig.h"
#include "yamljson.h"

#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* main_parse_flags' answer when the flags are good and the controller should start: not an exit status. */
#define MAIN_GO_ON (-1)
#define MAIN_RENDER_MAX_FILE (4 * 1024 * 1024)
/* Allocations from this size up get their own mapping (see main's mallopt). */
#define MAIN_MMAP_THRESHOLD (128 * 1024)
/* How often freed heap memory is handed back to the system. */
#define MAIN_TRIM_SECONDS 10.0

struct options {
    const char *kubeconfig;
    const char *namespace;
    const char *metrics_addr;
    int leader_elect;
    const char *lease_namespace;
    const char *lease_name;
    double lease_duration, renew_deadline, retry_period;
    const char *index_url_template;
    long index_period;
    long resync_period;
    int workers;
    int log_level;
    long clock_offset;
    struct spec_defaults defaults;
    const char *pull_secrets_flag, *pod_labels_flag; /* as given; parsed into defaults */
    char **pull_secrets;                             /* owned: defaults.image_pull_secrets */
    char **namespaces;                               /* owned: --namespace, split; NULL: all */
    cJSON *pod_labels;                               /* owned: defaults.pod_labels */
};

/* How many stop signals arrived: set by the handler, read by the main thread. A lock-free atomic, so
 * the handler may touch it whichever thread it interrupts. */
static atomic_int main_signals;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may only touch a lock-free atomic");

static void main_on_signal(int sig)
{
    (void)sig;
    if (atomic_fetch_add(&main_signals, 1) > 0)
        _exit(1); /* a second signal: the user does not want to wait for the drain */
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: zoekt-operator [flags]\n"
            "       zoekt-operator render -f CORPUS.yaml\n"
            "\n"
            "Reconciles " API_KIND " resources (" API_GROUP_VERSION ") into a PVC, an indexer CronJob,\n"
            "a search Deployment, its PodDisruptionBudget and Service. `render` prints the children of one corpus without a cluster.\n"
            "\n"
            "Flags:\n"
            "  --kubeconfig PATH              kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, then\n"
            "                                 the in-cluster service account)\n"
            "  --namespace NS[,NS...]         watch only these namespaces, one watch per kind in each, so\n"
            "                                 that Roles in them are all the RBAC it needs (default: all)\n"
            "  --metrics-addr HOST:PORT       serve /healthz, /readyz and /metrics here (default :8080)\n"
            "  --leader-elect[=true|false]    take part in Lease leader election (default true)\n"
            "  --lease-namespace NS           namespace of the Lease (default: the pod's or context's namespace)\n"
            "  --lease-name NAME              name of the Lease (default zoekt-operator-leader)\n"
            "  --lease-duration SECONDS       how long a Lease is valid without renewal (default 15)\n"
            "  --renew-deadline SECONDS       give leadership up after failing to renew this long (default 10)\n"
            "  --retry-period SECONDS         how often to try to acquire or renew the Lease (default 2)\n"
            "  --index-status-url-template T  where to read a corpus's /index-status; placeholders {namespace}\n"
            "                                 {name} {service} {port} (default %s)\n"
            "  --index-status-period DURATION re-read /index-status this often (default 5m)\n"
            "  --resync-period DURATION       reconcile every corpus this often even without a change\n"
            "                                 (default 10m)\n"
            "  --workers N                    concurrent reconciles (default 2)\n"
            "  --log-level LEVEL              debug, info, warn or error (default info)\n"
            "  --zoekt-image REF              the indexer's and webserver's image where a corpus names none\n"
            "                                 (default " SPEC_DEFAULT_ZOEKT_IMAGE ")\n"
            "  --connector-image REF          the connector's image where a corpus names none\n"
            "                                 (default " SPEC_DEFAULT_CONNECTOR_IMAGE ")\n"
            "  --gateway-image REF            the gateway's image where a corpus names none\n"
            "                                 (default " SPEC_DEFAULT_NGINX_IMAGE ")\n"
            "  --corpus-image-pull-secrets S  comma-separated Secrets every corpus pod pulls with (each must\n"
            "                                 exist in the corpus's namespace)\n"
            "  --corpus-priority-class NAME   the PriorityClass of every corpus pod\n"
            "  --corpus-pod-labels K=V,...    labels added to every corpus pod (not app.kubernetes.io/)\n"
            "  --clock-offset SECONDS         shift the controller's clock; for tests only\n"
            "  --help                         show this help\n"
            "  --version                      print the version\n"
            "\n"
            "render flags:\n"
            "  -f, --file PATH                the CodeSearchCorpus YAML (or JSON) file; - for stdin\n",
            RECONCILE_DEFAULT_INDEX_URL);
}

static int main_render(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"file", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *file = NULL;
    struct spec_errors errs = {0};
    struct corpus_spec *spec = NULL;
    struct zk_err err = {0};
    struct buf text;
    cJSON *corpus = NULL, *children = NULL;
    char *yaml = NULL;
    int opt, status = 1;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f': file = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "zoekt-operator render: -f FILE is required\n");
        return 2;
    }
    buf_init(&text, MAIN_RENDER_MAX_FILE);
    if (buf_read_file(&text, file, &err) != ZK_OK) {
        fprintf(stderr, "zoekt-operator render: %s\n", err.msg);
        goto out;
    }
    if (yamljson_parse(text.data ? text.data : "", text.len, &corpus, &err) != ZK_OK) {
        fprintf(stderr, "zoekt-operator render: %s: %s\n", file, err.msg);
        goto out;
    }
    if (spec_parse(corpus, NULL, &spec, &errs) != ZK_OK) {
        fprintf(stderr, "zoekt-operator render: %s: invalid spec:\n", file);
        for (int i = 0; i < errs.count; i++)
            fprintf(stderr, "  %s: %s\n", errs.items[i].field, errs.items[i].message);
        if (errs.dropped)
            fprintf(stderr, "  and %d more\n", errs.dropped);
        goto out;
    }
    /* A corpus file in Git has no uid; the ownerReferences then name a placeholder one. */
    if (!json_path(corpus, "metadata.uid")) {
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(corpus, "metadata");

        if (!cJSON_IsObject(meta)) {
            fprintf(stderr, "zoekt-operator render: %s: metadata.name is required\n", file);
            goto out;
        }
        cJSON_AddStringToObject(meta, "uid", "00000000-0000-0000-0000-000000000000");
    }
    if (!json_path(corpus, "metadata.namespace")) {
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(corpus, "metadata");

        cJSON_AddStringToObject(meta, "namespace", "default");
    }
    if (render_children(corpus, spec, &children, &err) != ZK_OK ||
        render_yaml(children, &yaml, &err) != ZK_OK) {
        fprintf(stderr, "zoekt-operator render: %s\n", err.msg);
        goto out;
    }
    fputs(yaml, stdout);
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    buf_free(&text);
    free(yaml);
    cJSON_Delete(children);
    cJSON_Delete(corpus);
    spec_free(spec);
    return status;
}

/* ---- the controller ------------------------------------------------------------------------------ */

/* Everything the running operator holds; the generic loop is controller/runtime/controller's, this
 * file only wires the corpus reconciler into it. */
struct operator {
    struct options opt;
    struct kube_client *client;
    struct queue *queue;
    struct metrics *metrics;
    struct events *events;
    struct leader *leader;
    struct controller *controller;
    struct serve *serve;
    struct reconcile_ctx rctx;
    struct informer *informers[RK_COUNT + 1]; /* the children's, then the corpora's */
    int ninformers;
    struct kube_config cfg;
    char identity[256]; /* this replica's name in the Lease and in Events */
};

/* An informer_enqueue_fn: a change to a corpus queues it, at once even while it fails (a fix is taken
 * without waiting for the backoff). */
static void main_enqueue(void *ud, const char *key)
{
    queue_add(ud, key);
}

/* An informer_enqueue_fn: a change to one of a corpus's children queues the corpus, unless it is failing
 * and waiting for its retry (queue_add_unless_retrying). */
static void main_enqueue_owner(void *ud, const char *key)
{
    queue_add_unless_retrying(ud, key);
}

/* A controller_reconcile_fn: one reconcile of one corpus. */
static int main_reconcile(void *ud, const char *key, double *requeue_after, struct zk_err *err)
{
    return reconcile(ud, key, requeue_after, err);
}

static int main_ready(void *ud)
{
    struct operator *op = ud;

    return informer_all_synced(op->informers, op->ninformers);
}

/* The per-corpus gauges (gauges.h), from the corpora's cached statuses. */
static int main_corpus_gauges(struct operator *op, struct buf *out)
{
    cJSON *keys = informer_keys(op->rctx.corpora);
    const cJSON *key;
    size_t n = 0;
    struct corpus_gauges *g = mem_calloc((size_t)cJSON_GetArraySize(keys) + 1, sizeof(*g));
    int rc;

    cJSON_ArrayForEach(key, keys) {
        const char *slash = strchr(key->valuestring, '/');
        char ns[256];
        cJSON *corpus;

        if (!slash || (size_t)(slash - key->valuestring) >= sizeof(ns))
            continue;
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key->valuestring), key->valuestring);
        if ((corpus = informer_get(op->rctx.corpora, ns, slash + 1)) != NULL)
            gauges_observe(corpus, &g[n++]);
        cJSON_Delete(corpus);
    }
    rc = gauges_render(g, n, out);
    free(g);
    cJSON_Delete(keys);
    return rc;
}

/* /metrics: the controller's own metrics, and the corpora's gauges from the leader only, so that each
 * corpus has one series per gauge whichever replica is scraped. */
static int main_metrics(void *ud, struct buf *out)
{
    struct operator *op = ud;
    struct queue_stats qs;
    int rc;

    queue_stats(op->queue, &qs);
    rc = metrics_render(op->metrics, &qs, out);
    if (rc == ZK_OK && op->rctx.corpora && metrics_is_leader(op->metrics))
        rc = main_corpus_gauges(op, out);
    return rc;
}

/* The corpus pods' settings (--corpus-*): parsed once here, so that a bad one stops the operator at
 * start, and every corpus borrows them from o->defaults. An empty flag means none, as the chart passes
 * its empty defaults. Returns MAIN_GO_ON, or 2 after a message on stderr. */
static int main_parse_pod_settings(struct options *o)
{
    struct zk_err err = {0};

    if (o->defaults.priority_class && !*o->defaults.priority_class)
        o->defaults.priority_class = NULL;
    if (o->defaults.priority_class && !spec_dns_subdomain(o->defaults.priority_class)) {
        fprintf(stderr, "zoekt-operator: --corpus-priority-class \"%s\" is not a valid PriorityClass name\n",
                o->defaults.priority_class);
        return 2;
    }
    if ((o->namespace && *o->namespace && spec_parse_namespaces(o->namespace, &o->namespaces, &err) != ZK_OK) ||
        (o->pull_secrets_flag && *o->pull_secrets_flag &&
         spec_parse_secret_names(o->pull_secrets_flag, &o->pull_secrets, &err) != ZK_OK) ||
        (o->pod_labels_flag && *o->pod_labels_flag &&
         spec_parse_pod_labels(o->pod_labels_flag, &o->pod_labels, &err) != ZK_OK)) {
        fprintf(stderr, "zoekt-operator: %s\n", err.msg);
        return 2;
    }
    o->defaults.image_pull_secrets = (const char *const *)o->pull_secrets;
    o->defaults.pod_labels = o->pod_labels;
    return MAIN_GO_ON;
}

/* Parses the flags into *o. Returns MAIN_GO_ON, or the exit status when the process is done: 0 after
 * --help or --version, 2 after a bad flag (with a message on stderr). */
static int main_parse_flags(int argc, char **argv, struct options *o)
{
    int help = 0, version = 0;
    const struct flag flags[] = {
        {.name = "kubeconfig", .type = FLAG_STRING, .dst = &o->kubeconfig},
        {.name = "namespace", .type = FLAG_STRING, .dst = &o->namespace},
        {.name = "metrics-addr", .type = FLAG_STRING, .dst = &o->metrics_addr},
        {.name = "leader-elect", .type = FLAG_BOOL, .dst = &o->leader_elect},
        {.name = "lease-namespace", .type = FLAG_STRING, .dst = &o->lease_namespace},
        {.name = "lease-name", .type = FLAG_STRING, .dst = &o->lease_name},
        {.name = "lease-duration", .type = FLAG_SECONDS, .dst = &o->lease_duration},
        {.name = "renew-deadline", .type = FLAG_SECONDS, .dst = &o->renew_deadline},
        {.name = "retry-period", .type = FLAG_SECONDS, .dst = &o->retry_period},
        {.name = "index-status-url-template", .type = FLAG_STRING, .dst = &o->index_url_template},
        {.name = "index-status-period", .type = FLAG_DURATION_S, .dst = &o->index_period},
        {.name = "resync-period", .type = FLAG_DURATION_S, .dst = &o->resync_period},
        {.name = "workers", .type = FLAG_INT, .dst = &o->workers, .lo = 1, .hi = CONTROLLER_MAX_WORKERS},
        {.name = "log-level", .type = FLAG_FUNC, .dst = &o->log_level, .parse = log_level_flag,
         .expected = LOG_LEVEL_NAMES},
        {.name = "zoekt-image", .type = FLAG_STRING, .dst = &o->defaults.zoekt},
        {.name = "connector-image", .type = FLAG_STRING, .dst = &o->defaults.connector},
        {.name = "gateway-image", .type = FLAG_STRING, .dst = &o->defaults.gateway},
        {.name = "corpus-image-pull-secrets", .type = FLAG_STRING, .dst = &o->pull_secrets_flag},
        {.name = "corpus-priority-class", .type = FLAG_STRING, .dst = &o->defaults.priority_class},
        {.name = "corpus-pod-labels", .type = FLAG_STRING, .dst = &o->pod_labels_flag},
        {.name = "clock-offset", .type = FLAG_LONG, .dst = &o->clock_offset, .lo = LONG_MIN, .hi = LONG_MAX,
         .expected = "a whole number of seconds"},
        {.name = "help", .type = FLAG_SWITCH, .dst = &help},
        {.name = "version", .type = FLAG_SWITCH, .dst = &version},
    };
    struct zk_err err = {0};

    if (flag_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, &err) != ZK_OK) {
        fprintf(stderr, "zoekt-operator: %s (see --help)\n", err.msg);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    if (version) {
        printf("zoekt-operator %s\n", ZK_VERSION);
        return 0;
    }
    const char *images[] = {o->defaults.zoekt, o->defaults.connector, o->defaults.gateway};
    for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
        if (images[i] && !*images[i]) {
            fprintf(stderr, "zoekt-operator: an image flag needs an image reference\n");
            return 2;
        }
    }
    if (o->renew_deadline >= o->lease_duration || o->retry_period >= o->renew_deadline) {
        fprintf(stderr, "zoekt-operator: need retry-period < renew-deadline < lease-duration\n");
        return 2;
    }
    return main_parse_pod_settings(o);
}

/* This replica's name in the Lease: the pod name, else host name and process id, so that two
 * processes on one machine (the tests) are distinct candidates. */
static void main_identity(char *dst, size_t len)
{
    const char *pod = getenv("POD_NAME");
    char host[128] = "localhost";

    if (pod && *pod) {
        snprintf(dst, len, "%s", pod);
        return;
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(dst, len, "%s_%ld", host, (long)getpid());
}

static int main_start_informers(struct operator *op, struct zk_err *err)
{
    struct informer_opts io = {0};
    int rc;

    io.namespaces = (const char *const *)op->opt.namespaces;
    io.enqueue = main_enqueue_owner;
    io.ud = op->queue;
    io.key_of = api_corpus_key;
    for (int k = 0; k < RK_COUNT; k++) {
        /* Pods: the indexer's termination messages, and why a search pod does not run. Their prune
         * keeps only that, so a running pod's readiness and restarts change nothing cached. */
        io.label_selector = API_CHILD_SELECTOR;
        io.resource = &op->rctx.resources[k];
        io.prune = k == RK_POD ? status_prune_pod : k == RK_JOB ? reconcile_prune_observed : status_prune_child;
        rc = informer_start(op->client, &io, &op->informers[op->ninformers], err);
        if (rc != ZK_OK)
            return rc;
        op->rctx.children[k] = op->informers[op->ninformers++];
    }
    io.resource = &api_corpus_resource;
    io.enqueue = main_enqueue;
    io.key_of = informer_self_key;
    io.label_selector = NULL;
    io.prune = informer_prune_server_fields;
    rc = informer_start(op->client, &io, &op->informers[op->ninformers], err);
    if (rc != ZK_OK)
        return rc;
    op->rctx.corpora = op->informers[op->ninformers++];
    return ZK_OK;
}

static void main_sleep(double secs)
{
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

    nanosleep(&ts, NULL);
}

/* Whether the server serves r. The API server may be briefly unavailable at start (a restart, a
 * rollout), so the lookup is retried for half a minute. */
static int main_served(struct operator *op, const struct kube_resource *r, int *served, struct kube_err *kerr)
{
    int rc;

    for (int i = 0;; i++) {
        rc = kube_discover(op->client, r, served, kerr);
        if (rc == ZK_OK || i >= 30 || atomic_load(&main_signals))
            return rc;
        main_sleep(1);
    }
}

/* Connects to the API server and checks that it serves the kinds of children that older Kubernetes
 * versions lack: batch/v1 CronJobs and policy/v1 PodDisruptionBudgets (both since 1.21). The children
 * are rendered for the supported versions only, 1.33 to 1.37, so a server without them is refused
 * rather than given objects it would reject. Returns ZK_OK, or a failure already logged. */
static int main_discover(struct operator *op)
{
    static const enum reconcile_kind needed[] = {RK_CRONJOB, RK_PDB};
    const struct kube_resource *missing = NULL;
    struct zk_err err = {0};
    struct kube_err kerr;
    int served, minor, rc;
    char version[16];

    rc = kube_config_load(op->opt.kubeconfig, NULL, &op->cfg, &err);
    if (rc == ZK_OK)
        rc = kube_client_new(&op->cfg, 0, &op->client, &err);
    if (rc != ZK_OK) {
        log_error("Cannot configure the Kubernetes client", "error", err.msg, NULL);
        return rc;
    }
    if (op->cfg.insecure)
        log_warn("TLS verification of the API server is disabled by the kubeconfig (insecure-skip-tls-verify)",
                 NULL);
    reconcile_resources(op->rctx.resources);
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]) && !missing; i++) {
        rc = main_served(op, &op->rctx.resources[needed[i]], &served, &kerr);
        if (rc != ZK_OK) {
            log_error("Cannot reach the API server for discovery", "error", kerr.base.msg, NULL);
            return rc;
        }
        if (!served)
            missing = &op->rctx.resources[needed[i]];
    }
    /* Only what the server serves can refuse it. The version names the server in messages and is
     * warned about below 1.33: such a server may well work if it serves both kinds, but nobody tests
     * it. */
    if (kube_server_minor(op->client, &minor, &kerr) != ZK_OK) {
        log_warn("Cannot read the API server's version; not checking the supported range", "error",
                 kerr.base.msg, NULL);
        minor = -1;
    }
    if (missing) {
        char server[32] = "";

        if (minor >= 0)
            snprintf(server, sizeof(server), " (Kubernetes 1.%d)", minor);
        rc = zk_err_set(&err, ZK_EINVAL,
                        "the API server%s does not serve %s/%s %ss; zoekt-operator needs Kubernetes 1.33 or later",
                        server, missing->group, missing->version, missing->kind);
        log_error("Unsupported Kubernetes version", "error", err.msg, NULL);
        return rc;
    }
    snprintf(version, sizeof(version), "%d", minor);
    if (minor >= 0 && minor < 33)
        log_warn("The API server's Kubernetes version is outside the supported range 1.33 to 1.37", "minor",
                 version, NULL);
    log_info("Discovered the API server", "minor", version, NULL);
    return ZK_OK;
}

/* Starts metrics, the queue, Events, the informers, the /healthz server, leader election and the
 * controller loop, which starts the workers once the caches are complete and this replica leads.
 * Returns ZK_OK, or a failure already logged; main_stop undoes what was started. */
static int main_start(struct operator *op)
{
    struct zk_err err = {0};
    struct serve_opts so = {op->opt.metrics_addr, main_ready, main_metrics, op};
    struct controller_opts co = {
        .reconcile = main_reconcile,
        .ud = &op->rctx,
        .key_label = "corpus",
        .workers = op->opt.workers,
        .resync_period = (double)op->opt.resync_period,
    };
    int rc;

    op->metrics = metrics_new();
    op->queue = queue_new(NULL);
    main_identity(op->identity, sizeof(op->identity));
    op->events = events_new(op->client, op->metrics, "zoekt-operator", op->identity);
    op->rctx.client = op->client;
    op->rctx.events = op->events;
    op->rctx.metrics = op->metrics;
    op->rctx.index_url_template = op->opt.index_url_template;
    op->rctx.index_period_seconds = op->opt.index_period;
    op->rctx.clock_offset_seconds = op->opt.clock_offset;
    op->rctx.defaults = op->opt.defaults;
    /* Its pod's namespace (or its kubeconfig context's): the corpora's NetworkPolicies let it in from
     * there to read /index-status. */
    op->rctx.defaults.operator_namespace = kube_client_namespace(op->client);
    if (op->opt.clock_offset)
        log_warn("The controller's clock is shifted (--clock-offset): for tests only", NULL);

    if ((rc = main_start_informers(op, &err)) != ZK_OK) {
        log_error("Cannot start the informers", "error", err.msg, NULL);
        return rc;
    }
    if ((rc = serve_start(&so, &op->serve, &err)) != ZK_OK) {
        log_error("Cannot serve metrics", "error", err.msg, NULL);
        return rc;
    }
    log_info("Serving /healthz, /readyz and /metrics", "addr", op->opt.metrics_addr, NULL);
    if (op->opt.leader_elect) {
        struct leader_opts lo = {
            .namespace = op->opt.lease_namespace ? op->opt.lease_namespace : kube_client_namespace(op->client),
            .name = op->opt.lease_name,
            .identity = op->identity,
            .lease_duration = op->opt.lease_duration,
            .renew_deadline = op->opt.renew_deadline,
            .retry_period = op->opt.retry_period,
            .metrics = op->metrics,
        };

        if ((rc = leader_start(op->client, &lo, &op->leader, &err)) != ZK_OK) {
            log_error("Cannot start leader election", "error", err.msg, NULL);
            return rc;
        }
    } else {
        metrics_set_leader(op->metrics, 1);
    }
    co.queue = op->queue;
    co.informers = op->informers;
    co.ninformers = op->ninformers;
    co.primary = op->rctx.corpora;
    co.leader = op->leader;
    co.metrics = op->metrics;
    if ((rc = controller_start(&co, &op->controller, &err)) != ZK_OK) {
        log_error("Cannot start the controller", "error", err.msg, NULL);
        return rc;
    }
    return ZK_OK;
}

/* Runs until a signal arrives or leadership is lost, handing freed memory back now and then. Returns
 * the exit status. */
static int main_run(struct operator *op)
{
    double next_trim = monotime_s() + MAIN_TRIM_SECONDS;
    int lost = 0;

    while (!atomic_load(&main_signals) && !(lost = op->leader && leader_lost(op->leader))) {
        main_sleep(0.1);
        /* glibc returns only the top of a heap to the system by itself; what a burst of work (a
         * relist, many corpora created at once) freed below live memory stays resident until
         * trimmed. */
        if (monotime_s() >= next_trim) {
            malloc_trim(0);
            next_trim = monotime_s() + MAIN_TRIM_SECONDS;
        }
    }
    log_info(lost ? "Leadership lost; exiting so that a fresh candidate starts" : "Shutting down", NULL);
    return lost ? 1 : 0;
}

static void main_free_options(struct options *o)
{
    spec_strv_free(o->pull_secrets);
    spec_strv_free(o->namespaces);
    cJSON_Delete(o->pod_labels);
}

/* Stops and frees whatever main_discover and main_start started, in an order that matters: stop taking
 * work and let in-flight reconciles finish, then give the Lease up (the standby may take over at once),
 * then stop the watches. */
static void main_stop(struct operator *op)
{
    controller_free(op->controller);
    leader_free(op->leader);
    for (int i = 0; i < op->ninformers; i++)
        informer_cancel(op->informers[i]);
    for (int i = 0; i < op->ninformers; i++)
        informer_stop(op->informers[i]);
    serve_stop(op->serve);
    for (int i = 0; i < op->ninformers; i++)
        informer_free(op->informers[i]);
    events_free(op->events);
    queue_free(op->queue);
    metrics_free(op->metrics);
    reconcile_ctx_free(&op->rctx);
    kube_client_free(op->client);
    kube_config_free(&op->cfg);
}

int main(int argc, char **argv)
{
    static struct operator op;
    int rc;

    mem_setup();
    if (argc > 1 && strcmp(argv[1], "render") == 0) {
        log_setup("zoekt-operator", LOG_WARN);
        return main_render(argc - 1, argv + 1);
    }
    op.opt = (struct options){
        .metrics_addr = ":8080",
        .leader_elect = 1,
        .lease_name = "zoekt-operator-leader",
        .lease_duration = 15,
        .renew_deadline = 10,
        .retry_period = 2,
        .index_period = 300,
        .resync_period = 600,
        .workers = 2,
        .log_level = LOG_INFO,
    };
    rc = main_parse_flags(argc, argv, &op.opt);
    if (rc != MAIN_GO_ON) {
        main_free_options(&op.opt);
        return rc;
    }
    log_setup("zoekt-operator", (enum log_level)op.opt.log_level);
    if (http_global_init() != ZK_OK) {
        log_error("Cannot initialise libcurl", NULL);
        return 1;
    }
    log_info("Starting", "version", ZK_VERSION, NULL);
    /* glibc gives each allocating thread an arena of its own (up to eight per core), each keeping its
     * own freed memory; the fifteen threads here allocate little and seldom at the same time, so two
     * arenas cost no speed and save most of a megabyte. A fixed mmap threshold keeps the large
     * transient buffers (a List's body and tree, megabytes with many corpora) out of the heap, so they
     * go back to the system when freed: glibc would otherwise raise the threshold after the first
     * such free and keep the next ones in the heap. */
    mallopt(M_ARENA_MAX, 2);
    mallopt(M_MMAP_THRESHOLD, MAIN_MMAP_THRESHOLD);
    sig_on_stop(main_on_signal);
    /* A closed connection must not kill the process through a write to it. */
    signal(SIGPIPE, SIG_IGN);
    reconcile_ctx_init(&op.rctx);
    rc = main_discover(&op) == ZK_OK && main_start(&op) == ZK_OK ? main_run(&op) : 1;
    main_stop(&op);
    main_free_options(&op.opt);
    log_info("Stopped", "exit", rc ? "1" : "0", NULL);
    http_global_cleanup();
    return rc;
}
