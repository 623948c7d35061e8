/* reconcile.c: see reconcile.h. */
#include "controller/corpus/reconcile.h"

#include "controller/corpus/api.h"
#include "controller/corpus/compare.h"
#include "controller/corpus/render.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "fanout.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "rfc3339.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECONCILE_DEFAULT_INDEX_PERIOD 300
/* After a failed /index-status read, look again this soon (or at the period, if shorter). */
#define RECONCILE_INDEX_RETRY_SECONDS 30
#define RECONCILE_INDEX_TIMEOUT_MS 5000
#define RECONCILE_INDEX_MAX_BODY (64 * 1024)
#define RECONCILE_URL_MAX 512
/* A corpus has nine children; all of one wave go out at once. */
#define RECONCILE_APPLY_THREADS 8

static const struct kube_resource reconcile_secret = {"", "v1", "secrets", "Secret", 1};
static const struct kube_resource reconcile_configmap = {"", "v1", "configmaps", "ConfigMap", 1};

/* What a corpus's reconciles remember between them: the last /index-status read, and the
 * fingerprint under which every child was last found as desired. */
struct reconcile_memo {
    char *key;
    time_t last_read;       /* wall time of the last attempt, 0: never */
    int have_index;         /* index holds the last good answer */
    struct index_status index;
    char *error;            /* why the last attempt failed (heap, or reconcile_oom), NULL when it worked */
    char jobs_finished[40]; /* reconcile_jobs_finished at the last attempt */
    uint64_t settled;       /* reconcile_fingerprint when no child needed an apply; 0: not known */
    struct reconcile_memo *next;
};

/* The failure recorded when even its message could not be kept. */
static char reconcile_oom[] = "out of memory";

void reconcile_resources(struct kube_resource out[RK_COUNT])
{
    static const struct kube_resource fixed[RK_COUNT] = {
        [RK_PVC] = {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", 1},
        [RK_CONFIGMAP] = {"", "v1", "configmaps", "ConfigMap", 1},
        [RK_SERVICEACCOUNT] = {"", "v1", "serviceaccounts", "ServiceAccount", 1},
        [RK_ROLE] = {"rbac.authorization.k8s.io", "v1", "roles", "Role", 1},
        [RK_ROLEBINDING] = {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", 1},
        [RK_SERVICE] = {"", "v1", "services", "Service", 1},
        [RK_DEPLOYMENT] = {"apps", "v1", "deployments", "Deployment", 1},
        [RK_PDB] = {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", 1},
        [RK_CRONJOB] = {"batch", "v1", "cronjobs", "CronJob", 1},
        [RK_JOB] = {"batch", "v1", "jobs", "Job", 1},
        [RK_POD] = {"", "v1", "pods", "Pod", 1},
    };

    memcpy(out, fixed, sizeof(fixed));
}

void reconcile_ctx_init(struct reconcile_ctx *ctx)
{
    pthread_mutex_init(&ctx->memo_mu, NULL);
    ctx->memos = NULL;
}

/* Records why the last /index-status read failed, or with msg NULL that it worked. The message
 * is a heap copy: a fixed buffer in every corpus's memo cost half a kilobyte per corpus. */
static void reconcile_memo_set_error(struct reconcile_memo *m, const char *msg)
{
    if (m->error != reconcile_oom)
        free(m->error);
    m->error = msg ? strdup(msg) : NULL;
    if (msg && !m->error)
        m->error = reconcile_oom;
}

static void reconcile_memo_free(struct reconcile_memo *m)
{
    reconcile_memo_set_error(m, NULL);
    free(m->key);
    free(m);
}

void reconcile_ctx_free(struct reconcile_ctx *ctx)
{
    struct reconcile_memo *m = ctx->memos, *next;

    for (; m; m = next) {
        next = m->next;
        reconcile_memo_free(m);
    }
    ctx->memos = NULL;
    pthread_mutex_destroy(&ctx->memo_mu);
}

/* The memo of key, created when create is set; NULL when absent or out of memory. A memo is only
 * touched by the worker reconciling its key (the queue never runs a key twice at once), so only the
 * list itself needs the lock. */
static struct reconcile_memo *reconcile_memo_find(struct reconcile_ctx *ctx, const char *key, int create)
{
    struct reconcile_memo *m;

    pthread_mutex_lock(&ctx->memo_mu);
    for (m = ctx->memos; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            break;
    if (!m && create) {
        m = calloc(1, sizeof(*m));
        if (m) {
            m->key = strdup(key);
            if (!m->key) {
                free(m);
                m = NULL;
            } else {
                m->next = ctx->memos;
                ctx->memos = m;
            }
        }
    }
    pthread_mutex_unlock(&ctx->memo_mu);
    return m;
}

static void reconcile_memo_drop(struct reconcile_ctx *ctx, const char *key)
{
    struct reconcile_memo **pp, *m;

    pthread_mutex_lock(&ctx->memo_mu);
    for (pp = &ctx->memos; (m = *pp) != NULL; pp = &m->next) {
        if (strcmp(m->key, key) == 0) {
            *pp = m->next;
            reconcile_memo_free(m);
            break;
        }
    }
    pthread_mutex_unlock(&ctx->memo_mu);
}

void reconcile_prune_observed(cJSON *obj)
{
    informer_prune_server_fields(obj);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
}

int reconcile_needs_apply(const cJSON *desired, const cJSON *observed, char *diff, size_t len)
{
    const cJSON *ref;

    if (!compare_subset(desired, observed, diff, len))
        return 1;
    if (json_path(desired, "metadata.ownerReferences"))
        return 0;
    cJSON_ArrayForEach(ref, json_path(observed, "metadata.ownerReferences")) {
        if (json_bool(ref, "controller", 0) && strcmp(json_str(ref, "kind", ""), API_KIND) == 0) {
            if (diff && len)
                snprintf(diff, len, "metadata.ownerReferences");
            return 1;
        }
    }
    return 0;
}

int reconcile_index_url(const char *tmpl, const char *ns, const char *name, const char *service, int port,
                        char *dst, size_t len, struct zk_err *err)
{
    size_t n = 0;
    const char *p = tmpl;
    char portbuf[16];

    snprintf(portbuf, sizeof(portbuf), "%d", port);
    while (*p) {
        const char *val = NULL;
        size_t vlen, skip = 1;

        if (*p == '{') {
            const char *close = strchr(p, '}');
            size_t klen = close ? (size_t)(close - p - 1) : 0;

            if (!close)
                return zk_err_set(err, ZK_EINVAL, "index status URL template \"%s\": unclosed {", tmpl);
            if (klen == 9 && strncmp(p + 1, "namespace", 9) == 0)
                val = ns;
            else if (klen == 4 && strncmp(p + 1, "name", 4) == 0)
                val = name;
            else if (klen == 7 && strncmp(p + 1, "service", 7) == 0)
                val = service;
            else if (klen == 4 && strncmp(p + 1, "port", 4) == 0)
                val = portbuf;
            else
                return zk_err_set(err, ZK_EINVAL,
                                  "index status URL template \"%s\": unknown placeholder {%.*s} (known: "
                                  "{namespace} {name} {service} {port})",
                                  tmpl, (int)klen, p + 1);
            skip = klen + 2;
        }
        vlen = val ? strlen(val) : 1;
        if (n + vlen + 1 > len)
            return zk_err_set(err, ZK_EINVAL, "index status URL template \"%s\": result too long", tmpl);
        memcpy(dst + n, val ? val : p, vlen);
        n += vlen;
        p += skip;
    }
    dst[n] = '\0';
    return ZK_OK;
}

void reconcile_jobs_finished(const cJSON *jobs, char *dst, size_t len)
{
    const cJSON *job, *c;
    time_t best = 0, t;

    cJSON_ArrayForEach(job, jobs) {
        if (rfc3339_parse(json_path_str(job, "status.completionTime", ""), &t) && t > best)
            best = t;
        cJSON_ArrayForEach(c, json_path(job, "status.conditions")) {
            if (strcmp(json_str(c, "type", ""), "Failed") == 0 && strcmp(json_str(c, "status", ""), "True") == 0 &&
                rfc3339_parse(json_str(c, "lastTransitionTime", ""), &t) && t > best)
                best = t;
        }
    }
    if (best)
        rfc3339_format(best, dst, len);
    else if (len)
        dst[0] = '\0';
}

void reconcile_transitions(const cJSON *old_status, const cJSON *new_status, reconcile_transition_fn *fn, void *ud)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_arr(new_status, "conditions")) {
        const cJSON *was = status_condition(old_status, json_str(c, "type", ""));
        const char *st = json_str(c, "status", "");

        if (!was) {
            if (strcmp(st, "Unknown") != 0 && status_reason_needs_user(json_str(c, "reason", "")))
                fn(ud, c);
            continue;
        }
        if (strcmp(st, json_str(was, "status", "")) != 0 ||
            (status_reason_needs_user(json_str(c, "reason", "")) &&
             strcmp(json_str(c, "reason", ""), json_str(was, "reason", "")) != 0))
            fn(ud, c);
    }
}

/* ---- the I/O part ---------------------------------------------------------------------------------- */

struct reconcile_run {
    struct reconcile_ctx *ctx;
    const cJSON *corpus;
};

static void reconcile_condition_event(void *ud, const cJSON *c)
{
    struct reconcile_run *run = ud;
    int good = strcmp(json_str(c, "status", ""), "True") == 0;

    events_emit(run->ctx->events, run->corpus, good ? "Normal" : "Warning", json_str(c, "reason", "Changed"),
                "%s is %s: %s", json_str(c, "type", "?"), json_str(c, "status", "?"), json_str(c, "message", ""));
}

static time_t reconcile_now(const struct reconcile_ctx *ctx)
{
    return time(NULL) + ctx->clock_offset_seconds;
}

/* Checks that a Secret or ConfigMap the pods mount exists. *missing is set when it does not; other
 * failures are returned. */
static int reconcile_ref_exists(struct reconcile_ctx *ctx, const struct kube_resource *res, const char *ns,
                                const char *name, int *missing, struct zk_err *err)
{
    struct kube_err kerr;
    cJSON *obj = NULL;
    int rc;

    *missing = 0;
    rc = kube_get(ctx->client, res, ns, name, &obj, &kerr);
    metrics_api_result(ctx->metrics, "get", rc, kerr.http_status);
    cJSON_Delete(obj); /* only existence matters; the contents are dropped at once */
    if (rc == ZK_OK)
        return ZK_OK;
    if (kerr.reason == KUBE_REASON_NOT_FOUND) {
        *missing = 1;
        return ZK_OK;
    }
    return zk_err_set(err, rc, "%s", kerr.base.msg);
}

/* Reads /index-status into memo (keeping the last good answer when the read fails). */
static void reconcile_read_index(struct reconcile_ctx *ctx, struct reconcile_memo *memo, const char *ns,
                                 const char *name, const char *service, int port, time_t now)
{
    char base[RECONCILE_URL_MAX], url[RECONCILE_URL_MAX + 16];
    struct http_request req = {0};
    struct http_response resp = {0};
    struct index_status idx;
    struct zk_err err = {0};
    int rc;

    memo->last_read = now;
    rc = reconcile_index_url(ctx->index_url_template ? ctx->index_url_template : RECONCILE_DEFAULT_INDEX_URL, ns,
                             name, service, port, base, sizeof(base), &err);
    if (rc != ZK_OK) {
        reconcile_memo_set_error(memo, err.msg);
        return;
    }
    snprintf(url, sizeof(url), "%s/index-status", base);
    req.method = "GET";
    req.url = url;
    req.timeout_ms = RECONCILE_INDEX_TIMEOUT_MS;
    req.connect_timeout_ms = RECONCILE_INDEX_TIMEOUT_MS;
    req.max_body = RECONCILE_INDEX_MAX_BODY;
    rc = http_do(&req, &resp, &err);
    if (rc == ZK_OK && resp.status != 200)
        rc = zk_err_set(&err, ZK_EHTTP, "GET %s: HTTP %ld", url, resp.status);
    if (rc == ZK_OK)
        rc = index_status_parse(resp.body.data ? resp.body.data : "", resp.body.len, &idx, &err);
    http_response_free(&resp);
    if (rc != ZK_OK) {
        reconcile_memo_set_error(memo, err.msg);
        log_warn("Could not read the index status", "corpus", memo->key, "error", err.msg, NULL);
        return;
    }
    memo->index = idx;
    memo->have_index = 1;
    reconcile_memo_set_error(memo, NULL);
}

/* One child to apply, and how its apply went. */
struct reconcile_apply {
    struct reconcile_ctx *ctx;
    const char *ns;
    const cJSON *child;
    const struct kube_resource *res;
    int existed; /* the cache had it: an update rather than a creation */
    int rc;
    struct kube_err kerr;
};

/* A fanout_fn: applies one child. Runs beside the applies of the corpus's other children. */
static void reconcile_apply_one(void *ud, size_t i)
{
    struct reconcile_apply *a = &((struct reconcile_apply *)ud)[i];

    a->rc = kube_apply(a->ctx->client, a->res, a->ns, json_path_str(a->child, "metadata.name", ""), NULL, a->child,
                       API_MANAGER, 1, NULL, &a->kerr);
    metrics_api_result(a->ctx->metrics, "apply", a->rc, a->kerr.http_status);
}

int reconcile_needs_siblings(const char *kind)
{
    static const char *const second[] = {"RoleBinding", "Deployment", "CronJob", "Job"};

    for (size_t i = 0; i < sizeof(second) / sizeof(second[0]); i++)
        if (strcmp(kind, second[i]) == 0)
            return 1;
    return 0;
}

/* Applies every child that is not already as desired, in two waves (reconcile_needs_siblings), the
 * children of one wave at the same time; *applied is how many it sent. Returns the first failure,
 * after trying all. */
static int reconcile_apply_children(struct reconcile_ctx *ctx, const cJSON *corpus, const cJSON *children,
                                    size_t *applied, struct zk_err *err)
{
    const char *ns = json_path_str(corpus, "metadata.namespace", "");
    struct reconcile_apply waves[2][RK_COUNT];
    size_t n[2] = {0, 0};
    char changed[512] = "";
    const cJSON *child;
    int first = ZK_OK;

    cJSON_ArrayForEach(child, children) {
        const char *kind = json_str(child, "kind", "");
        const char *name = json_path_str(child, "metadata.name", "");
        const struct kube_resource *res = NULL;
        struct informer *cache = NULL;
        int w = reconcile_needs_siblings(kind);
        cJSON *observed;
        char diff[256];

        for (int k = 0; k < RK_COUNT; k++) {
            if (strcmp(ctx->resources[k].kind, kind) == 0) {
                res = &ctx->resources[k];
                cache = ctx->children[k];
            }
        }
        if (!res || !cache || n[w] == RK_COUNT) {
            if (first == ZK_OK)
                first = zk_err_set(err, ZK_EINVAL, "rendered a child of unknown kind \"%s\" (or too many)", kind);
            continue;
        }
        observed = informer_get(cache, ns, name);
        if (reconcile_needs_apply(child, observed, diff, sizeof(diff))) {
            log_info("Applying child", "corpus", json_path_str(corpus, "metadata.name", ""), "kind", kind, "name",
                     name, "reason", observed ? diff : "absent", NULL);
            waves[w][n[w]++] = (struct reconcile_apply){.ctx = ctx, .ns = ns, .child = child, .res = res,
                                                        .existed = observed != NULL};
        }
        cJSON_Delete(observed);
    }
    *applied = n[0] + n[1];
    fanout_run(n[0], RECONCILE_APPLY_THREADS, reconcile_apply_one, waves[0]);
    fanout_run(n[1], RECONCILE_APPLY_THREADS, reconcile_apply_one, waves[1]);

    for (int w = 0; w < 2; w++) {
        for (size_t i = 0; i < n[w]; i++) {
            const struct reconcile_apply *a = &waves[w][i];
            const char *kind = a->res->kind, *name = json_path_str(a->child, "metadata.name", "");

            if (a->rc != ZK_OK) {
                events_emit(ctx->events, corpus, "Warning", "ApplyFailed", "Could not apply %s %s: %s", kind, name,
                            a->kerr.base.msg);
                if (first == ZK_OK)
                    first = zk_err_set(err, a->rc, "%s", a->kerr.base.msg);
            } else {
                size_t used = strlen(changed);

                snprintf(changed + used, sizeof(changed) - used, "%s%s %s %s", used ? ", " : "",
                         a->existed ? "updated" : "created", kind, name);
            }
        }
    }
    if (changed[0])
        events_emit(ctx->events, corpus, "Normal", "Applied", "Applied children: %s", changed);
    return first;
}

/* A fingerprint of what decides whether a child needs an apply: the cached corpus (corpus_fp) and
 * the cached object under every name a child of it could have (render_child_name), present or not.
 * The rendered children depend on the corpus alone, so while this is unchanged they and the observed
 * ones are unchanged too. It must be taken before the objects are read: a change that arrives in
 * between then leaves a fingerprint that no longer matches (one needless full pass), never a
 * current-looking fingerprint over a stale comparison. */
static uint64_t reconcile_fingerprint(struct reconcile_ctx *ctx, uint64_t corpus_fp, const char *ns,
                                      const struct render_names *names)
{
    uint64_t h = corpus_fp;

    for (int k = 0; k < RK_COUNT; k++) {
        const char *child = render_child_name(names, ctx->resources[k].kind);

        if (child && ctx->children[k])
            h = (h ^ informer_fingerprint(ctx->children[k], ns, child)) * 0x100000001b3u;
    }
    return h ? h : 1;
}

/* Starts the reindex Job for a new annotation value. *honoured is set to the request now served (the
 * new value, or the one recorded in status). */
static int reconcile_reindex(struct reconcile_ctx *ctx, const cJSON *corpus, const struct corpus_spec *spec,
                             const char **honoured, struct zk_err *err)
{
    const char *want = json_str(json_path(corpus, "metadata.annotations"), API_ANN_REINDEX, NULL);
    const char *done = json_path_str(corpus, "status.lastReindexRequest", NULL);
    const char *ns = json_path_str(corpus, "metadata.namespace", "");
    struct kube_err kerr;
    cJSON *job = NULL;
    int rc;

    *honoured = done;
    if (!want || !*want || (done && strcmp(want, done) == 0))
        return ZK_OK;
    rc = render_reindex_job(corpus, spec, want, &job, err);
    if (rc != ZK_OK)
        return rc;
    rc = kube_create(ctx->client, &ctx->resources[RK_JOB], ns, job, NULL, &kerr);
    metrics_api_result(ctx->metrics, "create", rc, kerr.http_status);
    if (rc == ZK_OK) {
        events_emit(ctx->events, corpus, "Normal", "ReindexStarted", "Started Job %s for reindex request %s",
                    json_path_str(job, "metadata.name", ""), want);
    } else if (kerr.reason != KUBE_REASON_ALREADY_EXISTS) {
        /* Already existing means this request was turned into a Job before: it is honoured. */
        cJSON_Delete(job);
        return zk_err_set(err, rc, "%s", kerr.base.msg);
    }
    cJSON_Delete(job);
    *honoured = want;
    return ZK_OK;
}

/* Writes status through /status when it differs from the cached one. */
static int reconcile_write_status(struct reconcile_ctx *ctx, const cJSON *corpus, cJSON *status, struct zk_err *err)
{
    const cJSON *old = json_obj(corpus, "status");
    struct reconcile_run run = {ctx, corpus};
    struct kube_err kerr;
    cJSON *obj;
    int rc;

    if (old && cJSON_Compare(old, status, 1))
        return ZK_OK;
    obj = cJSON_Duplicate(corpus, 1);
    if (!obj)
        return zk_err_set(err, ZK_ENOMEM, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    cJSON_AddItemReferenceToObject(obj, "status", status);
    /* PUT with the cached resourceVersion: a status computed from a stale corpus is refused (Conflict)
     * and recomputed, never written over a newer one. */
    rc = kube_replace(ctx->client, &api_corpus_resource, json_path_str(corpus, "metadata.namespace", ""),
                      json_path_str(corpus, "metadata.name", ""), "status", obj, NULL, &kerr);
    metrics_api_result(ctx->metrics, "status", rc, kerr.http_status);
    cJSON_Delete(obj);
    if (rc != ZK_OK)
        return zk_err_set(err, rc, "%s", kerr.base.msg);
    reconcile_transitions(old, status, reconcile_condition_event, &run);
    return ZK_OK;
}

static double reconcile_min_requeue(double a, double b)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

int reconcile(struct reconcile_ctx *ctx, const char *key, double *requeue_after, struct zk_err *err)
{
    const char *slash = strchr(key, '/');
    char ns[256], endpoint[RECONCILE_URL_MAX], finished[40];
    struct corpus_spec *spec = NULL;
    struct spec_errors errs = {0};
    struct render_names names;
    struct status_input in = {0};
    struct reconcile_memo *memo;
    uint64_t corpus_fp, fp;
    size_t applied;
    cJSON *corpus = NULL, *children = NULL, *status = NULL, *deployment = NULL, *cronjob = NULL, *jobs = NULL;
    cJSON *pods = NULL;
    const char *missing = NULL, *name;
    long period = ctx->index_period_seconds > 0 ? ctx->index_period_seconds : RECONCILE_DEFAULT_INDEX_PERIOD;
    long status_requeue = 0;
    time_t now = reconcile_now(ctx);
    int rc;

    *requeue_after = 0;
    if (!slash || (size_t)(slash - key) >= sizeof(ns))
        return zk_err_set(err, ZK_EINVAL, "bad key \"%s\"", key);
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    name = slash + 1;

    corpus_fp = informer_fingerprint(ctx->corpora, ns, name); /* before the read: reconcile_fingerprint */
    corpus = informer_get(ctx->corpora, ns, name);
    if (!corpus) {
        /* Deleted: the garbage collector removes the children through their ownerReferences. */
        reconcile_memo_drop(ctx, key);
        return ZK_OK;
    }
    if (json_path(corpus, "metadata.deletionTimestamp")) {
        rc = ZK_OK;
        goto out;
    }
    in.corpus = corpus;
    in.now = now;
    rc = spec_parse(corpus, &spec, &errs);
    if (rc == ZK_EINVAL) {
        in.spec_errors = &errs;
        rc = status_compute(&in, &status, &status_requeue, err);
        if (rc == ZK_OK)
            rc = reconcile_write_status(ctx, corpus, status, err);
        goto out;
    }
    if (rc != ZK_OK) {
        rc = zk_err_set(err, rc, "parsing the spec: out of memory");
        goto out;
    }

    render_child_names(name, &names);
    snprintf(endpoint, sizeof(endpoint), "http://%s.%s.svc:%d", names.service, ns, spec->gateway.port);
    in.spec = spec;
    in.endpoint = endpoint;

    /* A child that mounts a missing Secret or ConfigMap would never start: apply nothing until it
     * exists. */
    {
        const char *refs[3] = {spec->credentials_secret, spec->gateway.tokens_secret, spec->git_ca.name};
        const struct kube_resource *kinds[3] = {&reconcile_secret, &reconcile_secret,
                                                spec->git_ca.is_secret ? &reconcile_secret : &reconcile_configmap};

        for (int i = 0; i < 3 && !missing; i++) {
            int absent;

            if (!refs[i])
                continue;
            rc = reconcile_ref_exists(ctx, kinds[i], ns, refs[i], &absent, err);
            if (rc != ZK_OK)
                goto out;
            if (absent) {
                missing = refs[i];
                in.missing_kind = kinds[i]->kind;
            }
        }
    }
    if (missing) {
        in.missing_ref = missing;
        rc = status_compute(&in, &status, &status_requeue, err);
        if (rc == ZK_OK)
            rc = reconcile_write_status(ctx, corpus, status, err);
        *requeue_after = RECONCILE_SECRET_RETRY_SECONDS;
        goto out;
    }

    memo = reconcile_memo_find(ctx, key, 1);
    if (!memo) {
        rc = zk_err_set(err, ZK_ENOMEM, "out of memory");
        goto out;
    }
    /* A resync of a settled corpus renders and compares nothing: that was most of its CPU. */
    fp = reconcile_fingerprint(ctx, corpus_fp, ns, &names);
    if (fp != memo->settled) {
        memo->settled = 0;
        rc = render_children(corpus, spec, &children, err);
        if (rc != ZK_OK)
            goto out;
        rc = reconcile_apply_children(ctx, corpus, children, &applied, err);
        if (rc != ZK_OK)
            goto out;
        if (applied == 0)
            memo->settled = fp;
    }
    rc = reconcile_reindex(ctx, corpus, spec, &in.reindex_honoured, err);
    if (rc != ZK_OK)
        goto out;

    deployment = informer_get(ctx->children[RK_DEPLOYMENT], ns, names.deployment);
    cronjob = informer_get(ctx->children[RK_CRONJOB], ns, names.cronjob);
    jobs = informer_list_for(ctx->children[RK_JOB], key);
    pods = informer_list_for(ctx->children[RK_POD], key);
    in.deployment = deployment;
    in.cronjob = cronjob;
    in.jobs = jobs;
    in.pods = pods;

    reconcile_jobs_finished(jobs, finished, sizeof(finished));
    if (memo->last_read == 0 || now - memo->last_read >= period || strcmp(finished, memo->jobs_finished) != 0 ||
        (memo->error && now - memo->last_read >= RECONCILE_INDEX_RETRY_SECONDS)) {
        snprintf(memo->jobs_finished, sizeof(memo->jobs_finished), "%s", finished);
        reconcile_read_index(ctx, memo, ns, name, names.service, spec->gateway.port, now);
    }
    in.index = memo->have_index ? &memo->index : NULL;
    in.index_error = memo->error;

    rc = status_compute(&in, &status, &status_requeue, err);
    if (rc == ZK_OK)
        rc = reconcile_write_status(ctx, corpus, status, err);
    if (rc == ZK_OK) {
        long next_read = (memo->error && RECONCILE_INDEX_RETRY_SECONDS < period ? RECONCILE_INDEX_RETRY_SECONDS
                                                                                      : period) -
                         (long)(now - memo->last_read);

        *requeue_after = reconcile_min_requeue((double)status_requeue, next_read > 0 ? (double)next_read : 1);
    }
out:
    if (rc != ZK_OK)
        zk_err_prefix(err, "reconcile %s", key);
    spec_free(spec);
    cJSON_Delete(corpus);
    cJSON_Delete(children);
    cJSON_Delete(status);
    cJSON_Delete(deployment);
    cJSON_Delete(cronjob);
    cJSON_Delete(jobs);
    cJSON_Delete(pods);
    return rc;
}
