/* main.c: zoekt-operator's command line, signal handling and wiring.
 *
 *   zoekt-operator [flags]                        run the controller
 *   zoekt-operator render -f corpus.yaml [flags]  print the children a corpus would get; no cluster
 *
 * Running the controller: load the kubeconfig (or the in-cluster service account), check by discovery
 * that the server serves the CronJob and PodDisruptionBudget versions the children use, start an
 * informer per resource, serve /healthz /readyz /metrics, take part in leader election, and once
 * leading and synced, run --workers reconcile threads over the work queue. SIGTERM or SIGINT stops the
 * watches, lets in-flight reconciles finish, releases the Lease and exits 0; a second signal exits 1
 * at once. Losing the Lease exits 1, and the Deployment restarts the process as a fresh candidate. */
#include "controller/corpus/api.h"
#include "controller/corpus/reconcile.h"
#include "controller/corpus/render.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#define MAIN_MAX_WORKERS 64
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
    const char *log_level;
    long clock_offset;
};

static volatile sig_atomic_t main_signals;
static volatile int main_lost;

static void main_on_signal(int sig)
{
    (void)sig;
    if (main_signals++ > 0)
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
            "  --namespace NS                 watch only this namespace (default: all namespaces)\n"
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
    int opt, rc, status = 1;

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
    rc = spec_parse(corpus, &spec, &errs);
    if (rc == ZK_EINVAL) {
        fprintf(stderr, "zoekt-operator render: %s: invalid spec:\n", file);
        for (int i = 0; i < errs.count; i++)
            fprintf(stderr, "  %s: %s\n", errs.items[i].field, errs.items[i].message);
        if (errs.dropped)
            fprintf(stderr, "  and %d more\n", errs.dropped);
        goto out;
    }
    if (rc != ZK_OK) {
        fprintf(stderr, "zoekt-operator render: out of memory\n");
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

struct controller {
    struct options opt;
    struct kube_client *client;
    struct queue *queue;
    struct metrics *metrics;
    struct events *events;
    struct leader *leader;
    struct serve *serve;
    struct reconcile_ctx rctx;
    struct informer *informers[RK_COUNT + 1]; /* the children's, then the corpora's */
    int ninformers;
    struct kube_config cfg;
    char identity[256]; /* this replica's name in the Lease and in Events */
    pthread_t workers[MAIN_MAX_WORKERS];
    int nworkers;
};

static void main_enqueue(void *ud, const char *key)
{
    struct controller *c = ud;

    if (queue_add(c->queue, key) != ZK_OK)
        log_error("Could not queue a corpus: out of memory", "corpus", key, NULL);
}

static int main_synced(struct controller *c)
{
    for (int i = 0; i < c->ninformers; i++)
        if (!informer_has_synced(c->informers[i]))
            return 0;
    return 1;
}

static int main_ready(void *ud)
{
    return main_synced(ud);
}

static int main_metrics(void *ud, struct buf *out)
{
    struct controller *c = ud;
    struct queue_stats qs;

    queue_stats(c->queue, &qs);
    return metrics_render(c->metrics, &qs, out);
}

static void main_on_lost(void *ud)
{
    (void)ud;
    main_lost = 1;
}

static void *main_worker(void *arg)
{
    struct controller *c = arg;
    char *key;

    while (queue_get(c->queue, &key) == ZK_OK) {
        struct zk_err err = {0};
        double start = monotime_s(), requeue = 0;
        int rc = reconcile(&c->rctx, key, &requeue, &err);

        metrics_reconcile_done(c->metrics, monotime_s() - start, rc == ZK_OK);
        if (rc == ZK_OK) {
            queue_forget(c->queue, key);
            if (requeue > 0)
                queue_add_after(c->queue, key, requeue);
            log_debug("Reconciled", "corpus", key, NULL);
        } else {
            char failures[16];

            queue_add_rate_limited(c->queue, key);
            snprintf(failures, sizeof(failures), "%d", queue_failures(c->queue, key));
            log_error("Reconcile failed; will retry", "corpus", key, "error", err.msg, "failures", failures, NULL);
        }
        queue_done(c->queue, key);
        free(key);
    }
    return NULL;
}

/* A duration flag in whole seconds: plain seconds ("30") or with units ("5m", "1h30m"). */
static int main_seconds(const char *s, long *out)
{
    long ms;

    if (flag_duration_ms(s, LONG_MAX, &ms) != ZK_OK || ms % 1000 != 0)
        return ZK_EINVAL;
    *out = ms / 1000;
    return ZK_OK;
}

/* Parses the flags into *o. Returns MAIN_GO_ON, or the exit status when the process is done: 0 after
 * --help or --version, 2 after a bad flag (with a message on stderr). */
static int main_parse_flags(int argc, char **argv, struct options *o)
{
    enum { F_KUBECONFIG = 256, F_NAMESPACE, F_METRICS, F_LEADER, F_LEASE_NS, F_LEASE_NAME, F_LEASE_DUR, F_RENEW,
           F_RETRY, F_URL, F_PERIOD, F_RESYNC, F_WORKERS, F_LOG, F_CLOCK, F_HELP, F_VERSION };
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, F_KUBECONFIG},
        {"namespace", required_argument, NULL, F_NAMESPACE},
        {"metrics-addr", required_argument, NULL, F_METRICS},
        {"leader-elect", optional_argument, NULL, F_LEADER},
        {"lease-namespace", required_argument, NULL, F_LEASE_NS},
        {"lease-name", required_argument, NULL, F_LEASE_NAME},
        {"lease-duration", required_argument, NULL, F_LEASE_DUR},
        {"renew-deadline", required_argument, NULL, F_RENEW},
        {"retry-period", required_argument, NULL, F_RETRY},
        {"index-status-url-template", required_argument, NULL, F_URL},
        {"index-status-period", required_argument, NULL, F_PERIOD},
        {"resync-period", required_argument, NULL, F_RESYNC},
        {"workers", required_argument, NULL, F_WORKERS},
        {"log-level", required_argument, NULL, F_LOG},
        {"clock-offset", required_argument, NULL, F_CLOCK},
        {"help", no_argument, NULL, F_HELP},
        {"version", no_argument, NULL, F_VERSION},
        {NULL, 0, NULL, 0},
    };
    int opt, idx = 0;
    long v;

    while ((opt = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
        switch (opt) {
        case F_KUBECONFIG: o->kubeconfig = optarg; break;
        case F_NAMESPACE: o->namespace = optarg; break;
        case F_METRICS: o->metrics_addr = optarg; break;
        case F_LEADER:
            if (flag_bool(optarg, &o->leader_elect) != ZK_OK) {
                fprintf(stderr, "zoekt-operator: --leader-elect takes true or false\n");
                return 2;
            }
            break;
        case F_LEASE_NS: o->lease_namespace = optarg; break;
        case F_LEASE_NAME: o->lease_name = optarg; break;
        case F_LEASE_DUR:
        case F_RENEW:
        case F_RETRY: {
            double secs;

            if (flag_positive(optarg, &secs) != ZK_OK) {
                /* The option's own name: argv[optind - 1] is the value when flag and value are separate words. */
                fprintf(stderr, "zoekt-operator: --%s takes a positive number of seconds\n", longopts[idx].name);
                return 2;
            }
            if (opt == F_LEASE_DUR)
                o->lease_duration = secs;
            else if (opt == F_RENEW)
                o->renew_deadline = secs;
            else
                o->retry_period = secs;
            break;
        }
        case F_URL: o->index_url_template = optarg; break;
        case F_PERIOD:
        case F_RESYNC:
            if (main_seconds(optarg, opt == F_PERIOD ? &o->index_period : &o->resync_period) != ZK_OK) {
                fprintf(stderr, "zoekt-operator: bad duration \"%s\" (e.g. 30s, 5m, 1h)\n", optarg);
                return 2;
            }
            break;
        case F_WORKERS:
            if (flag_long(optarg, 1, MAIN_MAX_WORKERS, &v) != ZK_OK) {
                fprintf(stderr, "zoekt-operator: --workers takes 1 to %d\n", MAIN_MAX_WORKERS);
                return 2;
            }
            o->workers = (int)v;
            break;
        case F_LOG:
            if (log_level_parse(optarg) < 0) {
                fprintf(stderr, "zoekt-operator: --log-level takes debug, info, warn or error\n");
                return 2;
            }
            o->log_level = optarg;
            break;
        case F_CLOCK:
            if (flag_long(optarg, LONG_MIN, LONG_MAX, &o->clock_offset) != ZK_OK) {
                fprintf(stderr, "zoekt-operator: --clock-offset takes a number of seconds\n");
                return 2;
            }
            break;
        case F_HELP:
        case 'h': usage(stdout); return 0;
        case F_VERSION: printf("zoekt-operator %s\n", ZK_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "zoekt-operator: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    if (o->renew_deadline >= o->lease_duration || o->retry_period >= o->renew_deadline) {
        fprintf(stderr, "zoekt-operator: need retry-period < renew-deadline < lease-duration\n");
        return 2;
    }
    return MAIN_GO_ON;
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

static int main_start_informers(struct controller *c, struct zk_err *err)
{
    struct informer_opts io = {0};
    int rc;

    io.namespace = c->opt.namespace;
    io.enqueue = main_enqueue;
    io.ud = c;
    io.key_of = api_corpus_key;
    for (int k = 0; k < RK_COUNT; k++) {
        /* Only the indexer's Pods matter (their termination messages); the search pods would only
         * add traffic. */
        io.label_selector = k == RK_POD ? API_INDEXER_POD_SELECTOR : API_CHILD_SELECTOR;
        io.resource = &c->rctx.resources[k];
        io.prune = k == RK_JOB || k == RK_POD ? reconcile_prune_observed : status_prune_child;
        rc = informer_start(c->client, &io, &c->informers[c->ninformers], err);
        if (rc != ZK_OK)
            return rc;
        c->rctx.children[k] = c->informers[c->ninformers++];
    }
    io.resource = &api_corpus_resource;
    io.key_of = informer_self_key;
    io.label_selector = NULL;
    io.prune = informer_prune_server_fields;
    rc = informer_start(c->client, &io, &c->informers[c->ninformers], err);
    if (rc != ZK_OK)
        return rc;
    c->rctx.corpora = c->informers[c->ninformers++];
    return ZK_OK;
}

static void main_sleep(double secs)
{
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

    nanosleep(&ts, NULL);
}

/* Enqueues every cached corpus: the periodic resync. */
static void main_resync(struct controller *c)
{
    cJSON *keys = informer_keys(c->rctx.corpora);
    const cJSON *k;

    cJSON_ArrayForEach(k, keys) main_enqueue(c, k->valuestring);
    cJSON_Delete(keys);
}

/* Whether the server serves r. The API server may be briefly unavailable at start (a restart, a
 * rollout), so the lookup is retried for half a minute. */
static int main_served(struct controller *c, const struct kube_resource *r, int *served, struct kube_err *kerr)
{
    int rc;

    for (int i = 0;; i++) {
        rc = kube_discover(c->client, r, served, kerr);
        if (rc == ZK_OK || i >= 30 || main_signals)
            return rc;
        main_sleep(1);
    }
}

/* Connects to the API server and checks that it serves the kinds of children that older Kubernetes
 * versions lack: batch/v1 CronJobs and policy/v1 PodDisruptionBudgets (both since 1.21). The children
 * are rendered for the supported versions only, 1.33 to 1.37, so a server without them is refused
 * rather than given objects it would reject. Returns ZK_OK, or a failure already logged. */
static int main_discover(struct controller *c)
{
    static const enum reconcile_kind needed[] = {RK_CRONJOB, RK_PDB};
    const struct kube_resource *missing = NULL;
    struct zk_err err = {0};
    struct kube_err kerr;
    int served, minor, rc;
    char version[16];

    rc = kube_config_load(c->opt.kubeconfig, NULL, &c->cfg, &err);
    if (rc == ZK_OK)
        rc = kube_client_new(&c->cfg, 0, &c->client, &err);
    if (rc != ZK_OK) {
        log_error("Cannot configure the Kubernetes client", "error", err.msg, NULL);
        return rc;
    }
    if (c->cfg.insecure)
        log_warn("TLS verification of the API server is disabled by the kubeconfig (insecure-skip-tls-verify)",
                 NULL);
    reconcile_resources(c->rctx.resources);
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]) && !missing; i++) {
        rc = main_served(c, &c->rctx.resources[needed[i]], &served, &kerr);
        if (rc != ZK_OK) {
            log_error("Cannot reach the API server for discovery", "error", kerr.base.msg, NULL);
            return rc;
        }
        if (!served)
            missing = &c->rctx.resources[needed[i]];
    }
    /* Only what the server serves can refuse it. The version names the server in messages and is
     * warned about below 1.33: such a server may well work if it serves both kinds, but nobody tests
     * it. */
    if (kube_server_minor(c->client, &minor, &kerr) != ZK_OK) {
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

/* Starts everything but the workers: metrics, the queue, Events, the informers, the /healthz server
 * and leader election. Returns ZK_OK, or a failure already logged; main_stop undoes what was started. */
static int main_start(struct controller *c)
{
    struct zk_err err = {0};
    struct serve_opts so = {c->opt.metrics_addr, main_ready, main_metrics, c};
    int rc;

    if ((rc = metrics_new(&c->metrics, &err)) != ZK_OK || (rc = queue_new(NULL, &c->queue, &err)) != ZK_OK) {
        log_error("Cannot start", "error", err.msg, NULL);
        return rc;
    }
    main_identity(c->identity, sizeof(c->identity));
    if ((rc = events_new(c->client, c->metrics, "zoekt-operator", c->identity, &c->events, &err)) != ZK_OK) {
        log_error("Cannot start", "error", err.msg, NULL);
        return rc;
    }
    c->rctx.client = c->client;
    c->rctx.events = c->events;
    c->rctx.metrics = c->metrics;
    c->rctx.index_url_template = c->opt.index_url_template;
    c->rctx.index_period_seconds = c->opt.index_period;
    c->rctx.clock_offset_seconds = c->opt.clock_offset;
    if (c->opt.clock_offset)
        log_warn("The controller's clock is shifted (--clock-offset): for tests only", NULL);

    if ((rc = main_start_informers(c, &err)) != ZK_OK) {
        log_error("Cannot start the informers", "error", err.msg, NULL);
        return rc;
    }
    if ((rc = serve_start(&so, &c->serve, &err)) != ZK_OK) {
        log_error("Cannot serve metrics", "error", err.msg, NULL);
        return rc;
    }
    log_info("Serving /healthz, /readyz and /metrics", "addr", c->opt.metrics_addr, NULL);
    if (c->opt.leader_elect) {
        struct leader_opts lo = {
            .namespace = c->opt.lease_namespace ? c->opt.lease_namespace : kube_client_namespace(c->client),
            .name = c->opt.lease_name,
            .identity = c->identity,
            .lease_duration = c->opt.lease_duration,
            .renew_deadline = c->opt.renew_deadline,
            .retry_period = c->opt.retry_period,
            .on_lost = main_on_lost,
            .metrics = c->metrics,
        };

        if ((rc = leader_start(c->client, &lo, &c->leader, &err)) != ZK_OK) {
            log_error("Cannot start leader election", "error", err.msg, NULL);
            return rc;
        }
    } else {
        metrics_set_leader(c->metrics, 1);
    }
    return ZK_OK;
}

/* Waits for complete caches and the Lease, starts the workers, and resyncs every corpus each period
 * until a signal arrives or leadership is lost. Returns the exit status. */
static int main_run(struct controller *c)
{
    double next_resync, next_trim;

    /* Reconcile only as the leader and only with complete caches: a reconcile over a half-filled
     * cache would see children as missing and write them again. */
    while (!main_signals && !main_lost && (!main_synced(c) || (c->leader && !leader_is_leading(c->leader))))
        main_sleep(0.05);
    if (!main_signals && !main_lost) {
        char n[16];

        snprintf(n, sizeof(n), "%d", c->opt.workers);
        log_info("Starting workers", "workers", n, NULL);
        for (; c->nworkers < c->opt.workers; c->nworkers++)
            if (pthread_create(&c->workers[c->nworkers], NULL, main_worker, c) != 0)
                break;
    }
    next_resync = monotime_s() + (double)c->opt.resync_period;
    next_trim = monotime_s() + MAIN_TRIM_SECONDS;
    while (!main_signals && !main_lost) {
        main_sleep(0.1);
        if (monotime_s() >= next_resync) {
            main_resync(c);
            next_resync = monotime_s() + (double)c->opt.resync_period;
        }
        /* glibc returns only the top of a heap to the system by itself; what a burst of work (a
         * relist, many corpora created at once) freed below live memory stays resident until
         * trimmed. */
        if (monotime_s() >= next_trim) {
            malloc_trim(0);
            next_trim = monotime_s() + MAIN_TRIM_SECONDS;
        }
    }
    log_info(main_lost ? "Leadership lost; exiting so that a fresh candidate starts" : "Shutting down", NULL);
    return main_lost ? 1 : 0;
}

/* Stops and frees whatever main_discover and main_start started, in an order that matters: stop taking
 * work and let in-flight reconciles finish, then give the Lease up (the standby may take over at once),
 * then stop the watches. */
static void main_stop(struct controller *c)
{
    if (c->queue)
        queue_shutdown(c->queue);
    for (int i = 0; i < c->nworkers; i++)
        pthread_join(c->workers[i], NULL);
    leader_free(c->leader);
    for (int i = 0; i < c->ninformers; i++)
        informer_cancel(c->informers[i]);
    for (int i = 0; i < c->ninformers; i++)
        informer_stop(c->informers[i]);
    serve_stop(c->serve);
    for (int i = 0; i < c->ninformers; i++)
        informer_free(c->informers[i]);
    events_free(c->events);
    queue_free(c->queue);
    metrics_free(c->metrics);
    reconcile_ctx_free(&c->rctx);
    kube_client_free(c->client);
    kube_config_free(&c->cfg);
}

int main(int argc, char **argv)
{
    static struct controller c;
    int rc;

    mem_setup();
    if (argc > 1 && strcmp(argv[1], "render") == 0) {
        log_setup("zoekt-operator", LOG_WARN);
        return main_render(argc - 1, argv + 1);
    }
    c.opt = (struct options){
        .metrics_addr = ":8080",
        .leader_elect = 1,
        .lease_name = "zoekt-operator-leader",
        .lease_duration = 15,
        .renew_deadline = 10,
        .retry_period = 2,
        .index_period = 300,
        .resync_period = 600,
        .workers = 2,
        .log_level = "info",
    };
    rc = main_parse_flags(argc, argv, &c.opt);
    if (rc != MAIN_GO_ON)
        return rc;
    log_setup("zoekt-operator", (enum log_level)log_level_parse(c.opt.log_level));
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
    reconcile_ctx_init(&c.rctx);
    rc = main_discover(&c) == ZK_OK && main_start(&c) == ZK_OK ? main_run(&c) : 1;
    main_stop(&c);
    log_info("Stopped", "exit", rc ? "1" : "0", NULL);
    http_global_cleanup();
    return rc;
}
