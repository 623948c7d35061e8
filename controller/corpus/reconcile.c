/* reconcile.c: see reconcile.h. */
#include "controller/corpus/reconcile.h"

#include "controller/corpus/api.h"
#include "controller/corpus/compare.h"
#include "controller/corpus/render.h"
#include "controller/corpus/spec.h"
#include "controller/corpus/status.h"
#include "controller/sources/discover.h"
#include "fanout.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"
#include "rfc3339.h"

#include <openssl/evp.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECONCILE_DEFAULT_INDEX_PERIOD 300
/* After a failed /index-status read, look again this soon (or at the period, if shorter). */
#define RECONCILE_INDEX_RETRY_SECONDS 30
#define RECONCILE_INDEX_TIMEOUT_MS 5000
#define RECONCILE_INDEX_MAX_BODY (64 * 1024)
/* The longest bearer token taken from a Secret; real ones are a few dozen bytes. */
#define RECONCILE_TOKEN_MAX 4096
#define RECONCILE_URL_MAX 512
/* A corpus has nine children; all of one wave go out at once. */
#define RECONCILE_APPLY_THREADS 8

static const struct kube_resource reconcile_secret = {"", "v1", "secrets", "Secret", 1};
static const struct kube_resource reconcile_configmap = {"", "v1", "configmaps", "ConfigMap", 1};
static const struct kube_resource reconcile_storageclass = {"storage.k8s.io", "v1", "storageclasses", "StorageClass",
                                                            0};

/* What a corpus's reconciles remember between them: the last /index-status read, and the
 * fingerprint under which every child was last found as desired. */
struct reconcile_memo {
    char *key;
    time_t last_read;       /* wall time of the last attempt, 0: never */
    int have_index;         /* index holds the last good answer */
    struct index_status index;
    long max_age;           /* the maxAge the last good answer was judged by */
    char *error;            /* why the last attempt failed (heap), NULL when it worked */
    char jobs_finished[40]; /* reconcile_jobs_finished at the last attempt */
    int read_layout;        /* the serving shard layout at the last attempt (render.h) */
    uint64_t settled;       /* reconcile_fingerprint when no child needed an apply; 0: not known */
    /* The corpus's resourceVersion that the last status write replaced. While the cache still shows
     * it, the cache has not seen that write yet: a status computed from it would only be refused as a
     * Conflict (each new corpus met one), and the write's own watch event reconciles again. */
    char status_written_over[32];
    /* The discovery of spec.sources (NULL without sources), and the codesearch.dev/discover-requested-at
     * value it last honoured. */
    struct disc_corpus *disc;
    char discover_honoured[64];
    struct reconcile_memo *next;
};

void reconcile_resources(struct kube_resource out[RK_COUNT])
{
    static const struct kube_resource fixed[RK_COUNT] = {
        [RK_PVC] = {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", 1},
        [RK_CONFIGMAP] = {"", "v1", "configmaps", "ConfigMap", 1},
        [RK_SERVICEACCOUNT] = {"", "v1", "serviceaccounts", "ServiceAccount", 1},
        [RK_ROLE] = {"rbac.authorization.k8s.io", "v1", "roles", "Role", 1},
        [RK_ROLEBINDING] = {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", 1},
        [RK_NETPOL] = {"networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", 1},
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
    mem_mutex_init(&ctx->memo_mu);
    ctx->memos = NULL;
}

/* Records why the last /index-status read failed, or with msg NULL that it worked. The message
 * is a heap copy: a fixed buffer in every corpus's memo cost half a kilobyte per corpus. */
static void reconcile_memo_set_error(struct reconcile_memo *m, const char *msg)
{
    free(m->error);
    m->error = msg ? mem_strdup(msg) : NULL;
}

static void reconcile_memo_free(struct reconcile_memo *m)
{
    reconcile_memo_set_error(m, NULL);
    index_status_free(&m->index);
    disc_corpus_free(m->disc);
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

/* The memo of key, created on first use. A memo is only touched by the worker reconciling its key
 * (the queue never runs a key twice at once), so only the list itself needs the lock. */
static struct reconcile_memo *reconcile_memo_get(struct reconcile_ctx *ctx, const char *key)
{
    struct reconcile_memo *m;

    pthread_mutex_lock(&ctx->memo_mu);
    for (m = ctx->memos; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            break;
    if (!m) {
        m = mem_calloc(1, sizeof(*m));
        m->key = mem_strdup(key);
        m->next = ctx->memos;
        ctx->memos = m;
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

/* Whether ns was noted as being deleted less than RECONCILE_TERMINATING_RECHECK_S ago (reconcile.h). */
static int reconcile_ns_terminating(struct reconcile_ctx *ctx, const char *ns, double now)
{
    int found = 0;

    pthread_mutex_lock(&ctx->memo_mu);
    for (size_t i = 0; i < RECONCILE_TERMINATING_MAX && !found; i++)
        found = ctx->terminating[i].until > now && strcmp(ctx->terminating[i].ns, ns) == 0;
    pthread_mutex_unlock(&ctx->memo_mu);
    return found;
}

/* Notes ns as being deleted, from now until RECONCILE_TERMINATING_RECHECK_S later, in its own slot, a
 * free or lapsed one, or the one that lapses first. */
static void reconcile_note_terminating(struct reconcile_ctx *ctx, const char *ns, double now)
{
    struct reconcile_terminating *slot = &ctx->terminating[0];
    size_t len = strlen(ns);

    if (len >= sizeof(slot->ns)) /* not a namespace's name */
        return;
    pthread_mutex_lock(&ctx->memo_mu);
    for (size_t i = 0; i < RECONCILE_TERMINATING_MAX; i++) {
        struct reconcile_terminating *t = &ctx->terminating[i];

        if (strcmp(t->ns, ns) == 0) {
            slot = t;
            break;
        }
        if (t->until < slot->until)
            slot = t;
    }
    memcpy(slot->ns, ns, len + 1);
    slot->until = now + RECONCILE_TERMINATING_RECHECK_S;
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
    const cJSON *job, *failed;
    time_t best = 0, t;

    cJSON_ArrayForEach(job, jobs) {
        if (rfc3339_parse(json_path_str(job, "status.completionTime", ""), &t) && t > best)
            best = t;
        failed = status_object_condition_true(job, "Failed");
        if (failed && rfc3339_parse(json_str(failed, "lastTransitionTime", ""), &t) && t > best)
            best = t;
    }
    if (best)
        rfc3339_format(best, dst, len);
    else if (len)
        dst[0] = '\0';
}

int reconcile_stale_outdated(const struct index_status *idx, long judged_max_age, time_t read_at, long max_age,
                             time_t now)
{
    time_t deadline = idx->oldest_index_time + max_age;

    if (!idx->has_stale)
        return 0;
    return judged_max_age != max_age || (idx->oldest_index_time > 0 && read_at <= deadline && now > deadline);
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
    /* A condition that is True but asks somebody to act (an index served while the indexer fails) is a
     * warning all the same. */
    const char *reason = json_str(c, "reason", "");
    int good = (strcmp(json_str(c, "status", ""), "True") == 0 && !status_reason_needs_user(reason)) ||
               status_reason_in_progress(reason);

    events_emit(run->ctx->events, run->corpus, good ? "Normal" : "Warning", reason[0] ? reason : "Changed",
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

/* The text of a Secret's base64 value b64 when it decodes to at most max bytes without a NUL, with the
 * white space around it trimmed, as a heap string; NULL otherwise (or when nothing remains). */
static char *reconcile_decode(const char *b64, size_t max)
{
    size_t len = strlen(b64), at, end;
    unsigned char *raw;
    int n;

    if (len == 0 || len % 4 != 0 || len > max * 4 / 3 + 4)
        return NULL;
    raw = mem_alloc(len / 4 * 3 + 1);
    n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len);
    if (n < 0) {
        free(raw);
        return NULL;
    }
    /* EVP_DecodeBlock counts the bytes the padding stands for as zeros: drop them. */
    end = (size_t)n - (len >= 1 && b64[len - 1] == '=') - (len >= 2 && b64[len - 2] == '=');
    for (at = 0; at < end && isspace(raw[at]); at++)
        ;
    while (end > at && isspace(raw[end - 1]))
        end--;
    if (end > at && !memchr(raw + at, '\0', end - at)) {
        memmove(raw, raw + at, end - at);
        raw[end - at] = '\0';
        return (char *)raw;
    }
    free(raw);
    return NULL;
}

char *reconcile_secret_token(const cJSON *secret)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, json_obj(secret, "data")) {
        char *token;

        if (!cJSON_IsString(v) || !v->string || v->string[0] == '.' || !v->valuestring)
            continue;
        token = reconcile_decode(v->valuestring, RECONCILE_TOKEN_MAX);
        if (token)
            return token;
    }
    return NULL;
}

/* The token for reading a corpus's /index-status, or NULL when its gateway takes none or the Secret
 * cannot be read (the read then goes without, and the connector answers counts without names). */
static char *reconcile_index_token(struct reconcile_ctx *ctx, const char *ns, const char *secret)
{
    struct kube_err kerr;
    cJSON *obj = NULL;
    char *token = NULL;
    int rc;

    if (!secret)
        return NULL;
    rc = kube_get(ctx->client, &reconcile_secret, ns, secret, &obj, &kerr);
    metrics_api_result(ctx->metrics, "get", rc, kerr.http_status);
    if (rc == ZK_OK)
        token = reconcile_secret_token(obj);
    cJSON_Delete(obj);
    return token;
}

/* Reads /index-status into memo (keeping the last good answer when the read fails), asking the
 * connector to judge each repository against max_age. The connector judges by its own clock, so the
 * test clock's offset is taken off max_age: the judgement is the one this clock would make. */
static void reconcile_read_index(struct reconcile_ctx *ctx, struct reconcile_memo *memo, const char *ns,
                                 const char *name, const char *service, const struct corpus_spec *spec,
                                 time_t now)
{
    int port = spec->gateway.port;
    long max_age = spec->freshness_max_age_seconds;
    char *token = NULL;
    char base[RECONCILE_URL_MAX], url[RECONCILE_URL_MAX + 64];
    long judged_age = max_age - ctx->clock_offset_seconds;
    struct http_request req = {0};
    struct http_response resp = {0};
    struct index_status idx = {0}; /* freed on every failure, also before a parse filled it */
    struct zk_err err = {0};
    int rc;

    memo->last_read = now;
    rc = reconcile_index_url(ctx->index_url_template ? ctx->index_url_template : RECONCILE_DEFAULT_INDEX_URL, ns,
                             name, service, port, base, sizeof(base), &err);
    if (rc != ZK_OK) {
        reconcile_memo_set_error(memo, err.msg);
        return;
    }
    snprintf(url, sizeof(url), "%s/index-status?maxAge=%lds", base, judged_age > 0 ? judged_age : 1);
    req.method = "GET";
    req.url = url;
    req.timeout_ms = RECONCILE_INDEX_TIMEOUT_MS;
    req.connect_timeout_ms = RECONCILE_INDEX_TIMEOUT_MS;
    req.max_body = RECONCILE_INDEX_MAX_BODY;
    req.bearer_token = token = reconcile_index_token(ctx, ns, spec->gateway.tokens_secret);
    rc = http_do(&req, &resp, &err);
    if (token)
        OPENSSL_cleanse(token, strlen(token));
    free(token);
    if (rc == ZK_OK && resp.status != 200)
        rc = zk_err_set(&err, ZK_EHTTP, "GET %s: HTTP %ld", url, resp.status);
    if (rc == ZK_OK)
        rc = index_status_parse(resp.body.data ? resp.body.data : "", resp.body.len, &idx, &err);
    http_response_free(&resp);
    if (rc != ZK_OK) {
        index_status_free(&idx);
        reconcile_memo_set_error(memo, err.msg);
        log_warn("Could not read the index status", "corpus", memo->key, "error", err.msg, NULL);
        return;
    }
    index_status_free(&memo->index);
    memo->index = idx;
    memo->max_age = max_age;
    memo->have_index = 1;
    reconcile_memo_set_error(memo, NULL);
}

/* One child to apply, and how its apply went. */
struct reconcile_apply {
    struct reconcile_ctx *ctx;
    const char *ns;
    const cJSON *child;
    const struct kube_resource *res;
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

/* What one reconcile of a corpus found, gathered for the one status computation at its end. */
struct reconcile_pass {
    struct reconcile_ctx *ctx;
    const char *key;
    char ns[256];
    const char *name;
    uint64_t corpus_fp; /* taken before the corpus was read: reconcile_fingerprint */
    cJSON *corpus;
    struct corpus_spec *spec;
    struct spec_errors errs;
    struct render_names names;
    struct render_layouts layouts;
    char endpoint[RECONCILE_URL_MAX];
    cJSON *children, *cronjob, *jobs, *pods, *claim;
    cJSON *deployments[2][SHARD_MAX]; /* each layout's shard Deployments as cached, NULL when absent */
    struct reconcile_memo *memo; /* the corpus's, looked up once per pass */
    struct zk_err apply_err; /* the first child the API server refused; code ZK_OK when none */
    int ns_terminating;      /* a child was refused because the namespace is being deleted */
    double retry_after;      /* seconds: the next look at a missing Secret, 0 when none is missing */
    double discover_after;   /* seconds: the next listing of a source, 0 without sources */
    uint64_t sources_fp;     /* of the discovered repositories, for the fingerprint of settled children */
    struct disc_report sources[SPEC_MAX_SOURCES];
    char merge_error[sizeof(((struct zk_err *)0)->msg)];
    struct status_input in;
};

static void reconcile_pass_free(struct reconcile_pass *p)
{
    spec_free(p->spec);
    cJSON_Delete(p->corpus);
    cJSON_Delete(p->children);
    cJSON_Delete(p->cronjob);
    cJSON_Delete(p->jobs);
    cJSON_Delete(p->pods);
    cJSON_Delete(p->claim);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < SHARD_MAX; k++)
            cJSON_Delete(p->deployments[i][k]);
}

/* The index (an enum reconcile_kind) of the children of kind that the controller watches, or -1. */
static int reconcile_kind_index(const struct reconcile_ctx *ctx, const char *kind)
{
    for (int k = 0; k < RK_COUNT; k++)
        if (strcmp(ctx->resources[k].kind, kind) == 0 && ctx->children[k])
            return k;
    return -1;
}

/* Reports how the applies of both waves went: an Event for each refusal and one listing what was
 * created or updated; the first refusal is kept in p->apply_err for the status. */
static void reconcile_report_applies(struct reconcile_pass *p, struct reconcile_apply waves[2][RK_COUNT],
                                     const size_t n[2])
{
    char changed[512] = "";

    for (int w = 0; w < 2; w++) {
        for (size_t i = 0; i < n[w]; i++) {
            const struct reconcile_apply *a = &waves[w][i];
            const char *kind = a->res->kind, *name = json_path_str(a->child, "metadata.name", "");

            if (a->rc != ZK_OK && a->kerr.namespace_terminating) {
                /* No Event: the namespace refuses those too, and the corpus goes with it. */
                p->ns_terminating = 1;
            } else if (a->rc != ZK_OK) {
                events_emit(p->ctx->events, p->corpus, "Warning", "ApplyFailed", "Could not apply %s %s: %s", kind,
                            name, a->kerr.base.msg);
                /* The status gets the server's own words; the request line is for logs and Events. */
                if (p->apply_err.code == ZK_OK)
                    zk_err_set(&p->apply_err, a->rc, "%s %s: %s", kind, name,
                               a->kerr.message[0] ? a->kerr.message : a->kerr.base.msg);
            } else {
                size_t used = strlen(changed);

                /* The server says whether the apply created the object (201): the cache may not
                 * have seen a child created a moment ago, and a second "created" would be false. */
                snprintf(changed + used, sizeof(changed) - used, "%s%s %s %s", used ? ", " : "",
                         a->kerr.http_status == 201 ? "created" : "updated", kind, name);
            }
        }
    }
    if (changed[0])
        events_emit(p->ctx->events, p->corpus, "Normal", "Applied", "Applied children: %s", changed);
}

/* Applies every rendered child that is not already as desired, in two waves (reconcile_needs_siblings),
 * the children of one wave at the same time; *applied is how many it sent. A child the API server
 * refuses does not stop the others, nor the status that says so: it is recorded in p->apply_err.
 * Returns ZK_OK, or ZK_EINVAL when render gave a child of a kind the controller does not watch. */
static int reconcile_apply_children(struct reconcile_pass *p, size_t *applied, struct zk_err *err)
{
    struct reconcile_apply waves[2][RK_COUNT];
    size_t n[2] = {0, 0};
    const cJSON *child;

    cJSON_ArrayForEach(child, p->children) {
        const char *kind = json_str(child, "kind", ""), *name = json_path_str(child, "metadata.name", "");
        int k = reconcile_kind_index(p->ctx, kind), w = reconcile_needs_siblings(kind);
        cJSON *observed;
        char diff[256];

        if (k < 0 || n[w] == RK_COUNT)
            return zk_err_set(err, ZK_EINVAL, "rendered a child of unknown kind \"%s\" (or too many)", kind);
        observed = informer_get(p->ctx->children[k], p->ns, name);
        if (reconcile_needs_apply(child, observed, diff, sizeof(diff))) {
            log_info("Applying child", "corpus", p->name, "kind", kind, "name", name, "reason",
                     observed ? diff : "absent", NULL);
            waves[w][n[w]++] = (struct reconcile_apply){.ctx = p->ctx, .ns = p->ns, .child = child,
                                                        .res = &p->ctx->resources[k]};
        }
        cJSON_Delete(observed);
    }
    *applied = n[0] + n[1];
    fanout_run(n[0], RECONCILE_APPLY_THREADS, reconcile_apply_one, waves[0]);
    fanout_run(n[1], RECONCILE_APPLY_THREADS, reconcile_apply_one, waves[1]);
    reconcile_report_applies(p, waves, n);
    return ZK_OK;
}

/* Whether render made a child of kind called name in this pass. */
static int reconcile_rendered(const struct reconcile_pass *p, const char *kind, const char *name)
{
    const cJSON *child;

    cJSON_ArrayForEach(child, p->children)
        if (strcmp(json_str(child, "kind", ""), kind) == 0 &&
            strcmp(json_path_str(child, "metadata.name", ""), name) == 0)
            return 1;
    return 0;
}

/* Deletes what the corpus owns of the kinds render may leave out and render left out this pass: its
 * NetworkPolicies once spec.networkPolicy.enabled is false, and the Deployments, Services and
 * PodDisruptionBudget of a shard layout that no longer serves (render.h); an apply never removes an
 * object. An object another owner holds is left alone. *deleted counts the requests sent, so the pass
 * is not taken as settled until the cache has seen them go. */
static void reconcile_prune(struct reconcile_pass *p, size_t *deleted)
{
    static const enum reconcile_kind kinds[] = {RK_NETPOL, RK_SERVICE, RK_DEPLOYMENT, RK_PDB};
    const char *uid = json_path_str(p->corpus, "metadata.uid", "");

    *deleted = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const struct kube_resource *res = &p->ctx->resources[kinds[i]];
        const char *why = kinds[i] == RK_NETPOL ? "spec.networkPolicy.enabled is false"
                                                : "its shard layout no longer serves";
        cJSON *owned, *obj;

        if (!p->ctx->children[kinds[i]])
            continue;
        owned = informer_list_for(p->ctx->children[kinds[i]], p->key);
        cJSON_ArrayForEach(obj, owned) {
            const cJSON *owner = api_corpus_owner(obj);
            const char *name = json_path_str(obj, "metadata.name", "");
            struct kube_err kerr;
            int rc;

            if (!owner || strcmp(json_str(owner, "uid", ""), uid) != 0 || reconcile_rendered(p, res->kind, name))
                continue;
            rc = kube_delete(p->ctx->client, res, p->ns, name, NULL, &kerr);
            metrics_api_result(p->ctx->metrics, "delete", rc, kerr.http_status);
            (*deleted)++;
            if (rc == ZK_OK || kerr.reason == KUBE_REASON_NOT_FOUND) {
                events_emit(p->ctx->events, p->corpus, "Normal", "Deleted", "Deleted %s %s: %s", res->kind, name, why);
            } else {
                events_emit(p->ctx->events, p->corpus, "Warning", "DeleteFailed", "Could not delete %s %s: %s",
                            res->kind, name, kerr.base.msg);
                if (p->apply_err.code == ZK_OK)
                    zk_err_set(&p->apply_err, rc, "%s %s: %s", res->kind, name,
                               kerr.message[0] ? kerr.message : kerr.base.msg);
            }
        }
        cJSON_Delete(owned);
    }
}

/* A fingerprint of what decides whether a child needs an apply: the cached corpus (corpus_fp) and
 * the cached object under every name a child of it could have (render_child_list), present or not.
 * The rendered children depend on the corpus alone, so while this is unchanged they and the observed
 * ones are unchanged too. It must be taken before the objects are read: a change that arrives in
 * between then leaves a fingerprint that no longer matches (one needless full pass), never a
 * current-looking fingerprint over a stale comparison. */
static uint64_t reconcile_fingerprint(struct reconcile_ctx *ctx, uint64_t corpus_fp, const char *ns,
                                      const struct render_names *names, const struct render_layouts *layouts)
{
    struct render_child children[RENDER_CHILDREN_MAX];
    size_t n = render_child_list(names, layouts, children);
    uint64_t h = corpus_fp;

    for (size_t i = 0; i < n; i++) {
        int k = reconcile_kind_index(ctx, children[i].kind);

        if (k >= 0)
            h = (h ^ informer_fingerprint(ctx->children[k], ns, children[i].name)) * 0x100000001b3u;
    }
    return h ? h : 1;
}

/* Creates the reindex Job of request value `value` (render_reindex_job, fresh as it takes it) and says
 * so in an Event whose message ends with `purpose`. A Job that already exists counts as started: its
 * name comes from the value, so it was made for this same request by an earlier pass. */
static int reconcile_start_reindex(struct reconcile_ctx *ctx, const cJSON *corpus, const struct corpus_spec *spec,
                                   const char *value, int fresh, const char *purpose, struct zk_err *err)
{
    struct kube_err kerr;
    cJSON *job = NULL;
    int rc;

    rc = render_reindex_job(corpus, spec, value, fresh, &job, err);
    if (rc != ZK_OK)
        return rc;
    rc = kube_create(ctx->client, &ctx->resources[RK_JOB], json_path_str(corpus, "metadata.namespace", ""), job,
                     NULL, &kerr);
    metrics_api_result(ctx->metrics, "create", rc, kerr.http_status);
    if (rc == ZK_OK)
        events_emit(ctx->events, corpus, "Normal", "ReindexStarted", "Started Job %s %s",
                    json_path_str(job, "metadata.name", ""), purpose);
    else if (kerr.reason == KUBE_REASON_ALREADY_EXISTS)
        rc = ZK_OK;
    else
        zk_err_set(err, rc, "%s", kerr.base.msg);
    cJSON_Delete(job);
    return rc;
}

/* Starts the reindex Job for a new annotation value. *honoured is set to the request now served (the
 * new value, or the one recorded in status). */
static int reconcile_reindex(struct reconcile_ctx *ctx, const cJSON *corpus, const struct corpus_spec *spec,
                             const char **honoured, struct zk_err *err)
{
    const char *want = json_str(json_path(corpus, "metadata.annotations"), API_ANN_REINDEX, NULL);
    const char *done = json_path_str(corpus, "status.lastReindexRequest", NULL);
    char purpose[320];
    int rc;

    *honoured = done;
    if (!want || !*want || (done && strcmp(want, done) == 0))
        return ZK_OK;
    snprintf(purpose, sizeof(purpose), "for reindex request %s", want);
    rc = reconcile_start_reindex(ctx, corpus, spec, want, 0, purpose, err);
    if (rc == ZK_OK)
        *honoured = want;
    return rc;
}

/* Writes status through /status when it differs from the cached one, and an Event for each condition
 * transition worth one; nothing while the cache has not yet seen the last write (memo). */
static int reconcile_write_status(struct reconcile_ctx *ctx, struct reconcile_memo *memo, const cJSON *corpus,
                                  cJSON *status, struct zk_err *err)
{
    const cJSON *old = json_obj(corpus, "status");
    const char *rv = json_path_str(corpus, "metadata.resourceVersion", "");
    struct reconcile_run run = {ctx, corpus};
    struct kube_err kerr;
    cJSON *obj;
    int rc;

    if (old && cJSON_Compare(old, status, 1))
        return ZK_OK;
    if (rv[0] && strcmp(memo->status_written_over, rv) == 0)
        return ZK_OK;
    obj = cJSON_Duplicate(corpus, 1);
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
    if (strlen(rv) < sizeof(memo->status_written_over))
        memcpy(memo->status_written_over, rv, strlen(rv) + 1);
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

/* Checks the Secrets and the ConfigMap the spec names: a child that mounts a missing one would never
 * start, so the pass applies nothing until it exists and looks again after
 * RECONCILE_SECRET_RETRY_SECONDS (Secrets are not watched). */
static int reconcile_check_refs(struct reconcile_pass *p, struct zk_err *err)
{
    const struct corpus_spec *spec = p->spec;
    const char *refs[] = {spec->credentials_secret, spec->gateway.tokens_secret, spec->git_ca.name,
                          spec->webhook_secret};
    const struct kube_resource *kinds[] = {&reconcile_secret, &reconcile_secret,
                                           spec->git_ca.is_secret ? &reconcile_secret : &reconcile_configmap,
                                           &reconcile_secret};

    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        int absent, rc;

        if (!refs[i])
            continue;
        rc = reconcile_ref_exists(p->ctx, kinds[i], p->ns, refs[i], &absent, err);
        if (rc != ZK_OK)
            return rc;
        if (absent) {
            p->in.missing_ref = refs[i];
            p->in.missing_kind = kinds[i]->kind;
            p->retry_after = RECONCILE_SECRET_RETRY_SECONDS;
            return ZK_OK;
        }
    }
    return ZK_OK;
}

/* Brings the children to their desired form, unless a resync finds the corpus settled: while the
 * fingerprint of the corpus and of every cached child is the one under which no child needed an
 * apply, rendering and comparing would find nothing to do (that was most of a resync's CPU). */
static int reconcile_children(struct reconcile_pass *p, struct reconcile_memo *memo, struct zk_err *err)
{
    uint64_t fp = reconcile_fingerprint(p->ctx, p->corpus_fp ^ p->sources_fp, p->ns, &p->names, &p->layouts);
    size_t applied = 0, deleted = 0;
    int rc;

    if (fp == memo->settled)
        return ZK_OK;
    memo->settled = 0;
    rc = render_children(p->corpus, p->spec, &p->children, err);
    if (rc == ZK_OK)
        rc = reconcile_apply_children(p, &applied, err);
    if (rc == ZK_OK)
        reconcile_prune(p, &deleted);
    if (rc == ZK_OK && applied == 0 && deleted == 0)
        memo->settled = fp;
    return rc;
}

/* Reads /index-status when it was never read, after an indexer Job finished since the last read,
 * every index period, RECONCILE_INDEX_RETRY_SECONDS after a failed read, and when the connector's
 * count of stale repositories is out of date: maxAge changed, or the oldest index turned stale after
 * the read (the status then names it at once, rather than an index period later). */
static void reconcile_index(struct reconcile_pass *p, struct reconcile_memo *memo, long period)
{
    time_t now = p->in.now;
    long max_age = p->spec->freshness_max_age_seconds;
    char finished[40];
    int stale_outdated = memo->have_index &&
                         reconcile_stale_outdated(&memo->index, memo->max_age, memo->last_read, max_age, now);

    reconcile_jobs_finished(p->jobs, finished, sizeof(finished));
    /* A new serving layout is another set of webservers: its figures (and its shards') are read at once. */
    if (memo->last_read == 0 || now - memo->last_read >= period || strcmp(finished, memo->jobs_finished) != 0 ||
        (memo->error && now - memo->last_read >= RECONCILE_INDEX_RETRY_SECONDS) || stale_outdated ||
        memo->read_layout != p->layouts.serving) {
        snprintf(memo->jobs_finished, sizeof(memo->jobs_finished), "%s", finished);
        memo->read_layout = p->layouts.serving;
        /* With shards, through the first shard's own Service: right after a switch the search Service
         * may still send to the old layout for a moment, and any connector of a layout answers for it. */
        reconcile_read_index(p->ctx, memo, p->ns, p->name,
                             p->layouts.serving > 1 ? p->layouts.shard[0][0] : p->names.service, p->spec, now);
    }
    p->in.index = memo->have_index ? &memo->index : NULL;
    p->in.index_error = memo->error;
    {
        long next_read = (memo->error && RECONCILE_INDEX_RETRY_SECONDS < period ? RECONCILE_INDEX_RETRY_SECONDS
                                                                                 : period) -
                         (long)(now - memo->last_read);

        p->retry_after = next_read > 0 ? (double)next_read : 1;
    }
}

/* Whether the storage class of the corpus's Pending claim exists: a claim of a class nobody created
 * stays Pending for ever, and the scheduler's word for it is only "not found". Asked only while the
 * claim is Pending and a search pod waits unscheduled (the one case the status reads the answer), so
 * a settled corpus, or a claim merely being provisioned, costs no request (a GET per pass per corpus
 * before: 3,486 while 1,000 corpora were created on a plane without a provisioner); while the class
 * is missing the pass comes back after RECONCILE_SECRET_RETRY_SECONDS, since its creation changes
 * nothing the corpus watches. An error leaves the question open (0) and is logged: the status then
 * says the claim waits for its class, which is still true. */
static void reconcile_check_storage_class(struct reconcile_pass *p)
{
    const char *class = json_path_str(p->claim, "spec.storageClassName", NULL);
    struct zk_err err = {0};
    int missing = 0;

    if (!class || strcmp(json_path_str(p->claim, "status.phase", ""), "Pending") != 0 ||
        !status_search_pod_unscheduled(p->pods))
        return;
    if (reconcile_ref_exists(p->ctx, &reconcile_storageclass, NULL, class, &missing, &err) != ZK_OK)
        log_warn("Could not look up the volume claim's storage class", "corpus", p->key, "storageClass", class,
                 "error", err.msg, NULL);
    p->in.storage_class_missing = missing;
    if (missing)
        p->retry_after = RECONCILE_SECRET_RETRY_SECONDS;
}

/* How soon a pass comes back, while a new shard layout is being built, to read its /index-status. */
#define RECONCILE_LAYOUT_RECHECK_SECONDS 10
/* The reindex request value of the Job that indexes a new layout, before its number of shards. */
#define RECONCILE_LAYOUT_REQUEST "shards-"

/* Whether every Deployment of layout i is rolled out and Ready: it exists, its controller has seen its
 * last change, and all its pods run that change and are ready. */
static int reconcile_layout_ready(const struct reconcile_pass *p, int i)
{
    int want = p->spec->webserver.replicas;

    for (int k = 0; k < p->layouts.shards[i]; k++) {
        const cJSON *d = p->deployments[i][k], *st = json_obj(d, "status");

        if (!d || json_int(st, "observedGeneration", 0) < json_int(json_obj(d, "metadata"), "generation", 1) ||
            json_int(st, "updatedReplicas", 0) < want || json_int(st, "readyReplicas", 0) < want)
            return 0;
    }
    return 1;
}

/* Starts, once, the Job that indexes the target layout anew (the fresh reindex Job of request value
 * "shards-<N>", rendered from the spec, which names the target), and says whether it has finished,
 * whether or not every repository could be indexed: the status tells those apart as for any indexer
 * run. A Job that cannot be started is a Warning Event, and the next pass tries again. */
static int reconcile_layout_indexed(struct reconcile_pass *p)
{
    char value[32], purpose[64];
    const cJSON *j;
    struct zk_err err = {0};

    snprintf(value, sizeof(value), RECONCILE_LAYOUT_REQUEST "%d", p->layouts.target);
    cJSON_ArrayForEach(j, p->jobs) {
        if (strcmp(json_str(json_path(j, "metadata.annotations"), API_ANN_REINDEX, ""), value) == 0)
            return status_object_condition_true(j, "Complete") || status_object_condition_true(j, "Failed");
    }
    snprintf(purpose, sizeof(purpose), "to index the new layout of %d shards", p->layouts.target);
    if (reconcile_start_reindex(p->ctx, p->corpus, p->spec, value, 1, purpose, &err) != ZK_OK)
        events_emit(p->ctx->events, p->corpus, "Warning", "ReindexFailed",
                    "Could not start the Job to index the new layout of %d shards: %s", p->layouts.target, err.msg);
    return 0;
}

/* Deletes the Jobs that indexed a layout (reconcile_layout_indexed) other than the one the corpus is
 * moving to: one whose layout took over, or one whose move was given up (the spec changed again). Its
 * name comes from the layout alone, so if it were kept a later move to the same layout would find it
 * finished and serve the index it wrote then, missing every change since. Its pods go with it
 * (Background: a Job's own default orphans them). */
static void reconcile_layout_jobs_prune(struct reconcile_pass *p)
{
    const size_t prefix = strlen(RECONCILE_LAYOUT_REQUEST);
    const cJSON *j;

    cJSON_ArrayForEach(j, p->jobs) {
        const char *value = json_str(json_path(j, "metadata.annotations"), API_ANN_REINDEX, "");
        const char *name = json_path_str(j, "metadata.name", "");
        struct kube_err kerr;
        char *end;
        long shards;
        int rc;

        if (strncmp(value, RECONCILE_LAYOUT_REQUEST, prefix) != 0)
            continue;
        shards = strtol(value + prefix, &end, 10);
        if (*end == '\0' && p->layouts.n > 1 && shards == p->layouts.target)
            continue;
        rc = kube_delete(p->ctx->client, &p->ctx->resources[RK_JOB], p->ns, name, "Background", &kerr);
        metrics_api_result(p->ctx->metrics, "delete", rc, kerr.http_status);
        if (rc == ZK_OK)
            events_emit(p->ctx->events, p->corpus, "Normal", "Deleted",
                        "Deleted Job %s: the layout of %ld shards it indexed is no longer being moved to", name,
                        shards);
        else if (kerr.reason != KUBE_REASON_NOT_FOUND)
            events_emit(p->ctx->events, p->corpus, "Warning", "DeleteFailed", "Could not delete Job %s: %s", name,
                        kerr.base.msg);
    }
}

/* Whether the target layout serves its whole index: its /index-status, read through its first shard's
 * Service (any of its connectors asks all of its shards), answers with no shard in error and counts at
 * least as many repositories as the serving layout, or as are listed when fewer (some were dropped
 * from the list since). A Job that indexed only part of the list (a full volume, a host down) so
 * leaves the move waiting until a later run fills the new layout, and the old one serves everything
 * meanwhile. Otherwise writes what it waits for into detail. */
static int reconcile_layout_serves(struct reconcile_pass *p, char *detail, size_t len)
{
    struct reconcile_memo probe = {.key = (char *)p->key};
    const struct index_status *serving = p->in.index;
    int want = p->spec->nrepos, ok = 0;

    if (serving && serving->repositories < want)
        want = serving->repositories;
    reconcile_read_index(p->ctx, &probe, p->ns, p->name, p->layouts.shard[1][0], p->spec, p->in.now);
    if (!probe.have_index) {
        snprintf(detail, len, "its index status cannot be read yet: %s", probe.error ? probe.error : "no answer");
        goto out;
    }
    for (int k = 0; k < probe.index.nsearch_shards; k++)
        if (probe.index.search_shards[k].error[0]) {
            snprintf(detail, len, "its shard %d does not answer: %s", k, probe.index.search_shards[k].error);
            goto out;
        }
    if (probe.index.repositories < want) {
        snprintf(detail, len, "it serves %d repositories, fewer than the %d it must (a later indexer run adds them)",
                 probe.index.repositories, want);
        goto out;
    }
    ok = 1;
out:
    index_status_free(&probe.index);
    free(probe.error);
    return ok;
}

/* Decides status.servingShards (render.h): the serving layout is recorded once its pods are rolled out
 * (they carry the layout label the search Service will select from then on), and the target layout
 * takes over once indexed, rolled out and answering. The next pass renders the Service for it and
 * deletes the old layout. While it waits, status_input.layout_move says for what. */
static void reconcile_layout(struct reconcile_pass *p)
{
    const struct render_layouts *l = &p->layouts;
    struct status_layout_move *move = &p->in.layout_move;

    reconcile_layout_jobs_prune(p);
    /* A new corpus (no status of its own yet) records its layout at once: no older pod lacks the
     * label. One older than sharding waits for its pods to carry it; a Deployment's progress enqueues
     * its corpus (a watched child), so that needs no timed look. */
    if (!l->recorded || l->n < 2) {
        if (l->recorded || !json_path(p->corpus, "status.observedGeneration") || reconcile_layout_ready(p, 0))
            p->in.serving_shards = l->serving;
        return;
    }
    /* The new layout's /index-status is read, not watched: a pass comes back for it. */
    p->in.serving_shards = l->serving;
    p->retry_after = reconcile_min_requeue(p->retry_after, RECONCILE_LAYOUT_RECHECK_SECONDS);
    move->target = l->target;
    if (!reconcile_layout_indexed(p)) {
        move->reason = STATUS_LAYOUT_INDEXING;
        snprintf(move->detail, sizeof(move->detail), "the Job of reindex request \"%s%d\" is indexing it",
                 RECONCILE_LAYOUT_REQUEST, l->target);
        return;
    }
    if (!reconcile_layout_ready(p, 1)) {
        move->reason = STATUS_LAYOUT_ROLLING_OUT;
        snprintf(move->detail, sizeof(move->detail), "its search pods are not all rolled out and Ready");
        return;
    }
    if (!reconcile_layout_serves(p, move->detail, sizeof(move->detail))) {
        move->reason = STATUS_LAYOUT_VERIFYING;
        return;
    }
    memset(move, 0, sizeof(*move));
    p->in.serving_shards = l->target;
    events_emit(p->ctx->events, p->corpus, "Normal", "LayoutServing",
                "The search Service now sends requests to the layout of %d shards (was %d)", l->target, l->serving);
}

/* Reads each layout's Deployments from the cache, and hands the status the serving layout's: with
 * shards, the one with the fewest ready pods stands for the layout, so Ready names a shard that is
 * down. */
static void reconcile_observe_layouts(struct reconcile_pass *p)
{
    const struct render_layouts *l = &p->layouts;
    long long fewest = -1;

    for (int i = 0; i < l->n; i++)
        for (int k = 0; k < l->shards[i]; k++)
            p->deployments[i][k] = informer_get(p->ctx->children[RK_DEPLOYMENT], p->ns,
                                                l->shards[i] == 1 ? p->names.deployment : l->shard[i][k]);
    for (int k = 0; k < l->serving; k++) {
        const cJSON *d = p->deployments[0][k];
        long long ready = json_int(json_obj(d, "status"), "readyReplicas", 0);

        p->in.shard_deployments[k] = d;
        if (fewest < 0 || ready < fewest || !d) {
            p->in.deployment = d;
            fewest = d ? ready : 0;
        }
        if (!d)
            break;
    }
}

/* Everything a status needs of a corpus with a valid spec whose references exist: applies what
 * differs, starts a requested reindex, and observes the children and the index. */
static int reconcile_observe(struct reconcile_pass *p, struct zk_err *err)
{
    struct reconcile_ctx *ctx = p->ctx;
    long period = ctx->index_period_seconds > 0 ? ctx->index_period_seconds : RECONCILE_DEFAULT_INDEX_PERIOD;
    int rc;

    rc = reconcile_children(p, p->memo, err);
    if (rc == ZK_OK)
        rc = reconcile_reindex(ctx, p->corpus, p->spec, &p->in.reindex_honoured, err);
    if (rc != ZK_OK)
        return rc;
    reconcile_observe_layouts(p);
    p->cronjob = informer_get(ctx->children[RK_CRONJOB], p->ns, p->names.cronjob);
    p->jobs = informer_list_for(ctx->children[RK_JOB], p->key);
    p->pods = informer_list_for(ctx->children[RK_POD], p->key);
    if (!p->spec->storage.existing_claim)
        p->claim = informer_get(ctx->children[RK_PVC], p->ns, p->names.pvc);
    reconcile_check_storage_class(p);
    p->in.claim = p->claim;
    p->in.cronjob = p->cronjob;
    p->in.jobs = p->jobs;
    p->in.pods = p->pods;
    if (p->apply_err.code != ZK_OK)
        p->in.apply_failure = p->apply_err.msg;
    reconcile_index(p, p->memo, period);
    reconcile_layout(p);
    return ZK_OK;
}

/* ---- discovery of spec.sources --------------------------------------------------------------------- */

/* The text of key in a ConfigMap's data, or decoded from a Secret's, as a heap string of at most max
 * bytes; NULL when absent, too long or not text. */
static char *reconcile_object_value(const cJSON *obj, int is_secret, const char *key, size_t max)
{
    const char *v = json_str(json_obj(obj, "data"), key, NULL);

    if (!v)
        return NULL;
    if (is_secret)
        return reconcile_decode(v, max);
    return strlen(v) <= max ? mem_strdup(v) : NULL;
}

/* Reads key of the Secret or ConfigMap name into *value. Returns NULL, or why it could not (a heap
 * string). */
static char *reconcile_read_value(struct reconcile_pass *p, int is_secret, const char *name, const char *key,
                                  size_t max, char **value)
{
    struct kube_err kerr;
    cJSON *obj = NULL;
    const char *kind = is_secret ? "Secret" : "ConfigMap";
    int rc = kube_get(p->ctx->client, is_secret ? &reconcile_secret : &reconcile_configmap, p->ns, name, &obj, &kerr);

    metrics_api_result(p->ctx->metrics, "get", rc, kerr.http_status);
    *value = rc == ZK_OK ? reconcile_object_value(obj, is_secret, key, max) : NULL;
    cJSON_Delete(obj);
    if (rc != ZK_OK)
        return kerr.reason == KUBE_REASON_NOT_FOUND ? mem_printf("the %s %s does not exist", kind, name)
                                                     : mem_printf("the %s %s cannot be read: %s", kind, name, kerr.base.msg);
    if (!*value)
        return mem_printf("the %s %s has no key %s holding text of at most %zu bytes", kind, name, key, max);
    return NULL;
}

/* The longest CA bundle taken for a code host's API (a bundle of every public root is about 220 KB). */
#define RECONCILE_CA_MAX (1u << 20)

/* Lists source i, reading its token and, for a host of the organisation's own, the corpus's CA bundle
 * (*ca, read once per pass and kept for the next source; *ca_why says why it could not be). */
static void reconcile_list_source(struct reconcile_pass *p, int i, struct http_pool *pool, char **ca, char **ca_why,
                                  int *ca_read)
{
    const struct corpus_spec *spec = p->spec;
    const struct corpus_source *cs = &spec->sources[i];
    struct reconcile_memo *memo = p->memo;
    struct http_tls tls = {0};
    struct disc_http h = {NULL, pool};
    struct zk_err err = {0};
    struct disc_report r;
    char *token = NULL, *why = NULL, ms[32];
    double started = monotime_s();
    int rc;

    if (cs->token_secret)
        why = reconcile_read_value(p, 1, cs->token_secret, cs->token_key, RECONCILE_TOKEN_MAX, &token);
    if (!why && !cs->public_host && spec->git_ca.name) {
        if (!*ca_read) {
            *ca_why = reconcile_read_value(p, spec->git_ca.is_secret, spec->git_ca.name, spec->git_ca.key,
                                           RECONCILE_CA_MAX, ca);
            *ca_read = 1;
        }
        if (*ca_why)
            why = mem_strdup(*ca_why);
        tls.ca_pem = *ca;
        tls.ca_pem_len = *ca ? strlen(*ca) : 0;
        h.tls = &tls;
    }
    if (why) {
        disc_fail(memo->disc, spec, i, p->in.now, why);
        log_warn("Could not list a repository source", "corpus", p->key, "source", cs->owner, "error", why, NULL);
    } else {
        rc = disc_list(memo->disc, spec, i, token, &h, p->in.now, &err);
        disc_report(memo->disc, i, &r);
        snprintf(ms, sizeof(ms), "%.0f", (monotime_s() - started) * 1000);
        if (rc == ZK_OK) {
            char n[32], req[32], nm[32];

            snprintf(n, sizeof(n), "%zu", r.repositories);
            snprintf(req, sizeof(req), "%u", r.requests);
            snprintf(nm, sizeof(nm), "%u", r.not_modified);
            log_info("Listed a repository source", "corpus", p->key, "source", cs->owner, "repositories", n,
                     "requests", req, "notModified", nm, "ms", ms, NULL);
        } else {
            log_warn("Could not list a repository source", "corpus", p->key, "source", cs->owner, "error", err.msg,
                     "ms", ms, NULL);
        }
    }
    free(why);
    if (token) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
}

/* FNV-1a over s: the fingerprint of the discovered repositories' text. */
static uint64_t reconcile_text_fp(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

/* Discovers what is due of spec.sources and makes the spec's repositories the merge of the listed and
 * the discovered ones, before anything is rendered. A source that fails keeps its last good set, so a
 * host that is down changes nothing the indexer sees; the status says which source fails and why. */
static void reconcile_sources(struct reconcile_pass *p)
{
    struct reconcile_memo *memo = p->memo;
    struct corpus_spec *spec = p->spec;
    const char *asked = json_str(json_path(p->corpus, "metadata.annotations"), API_ANN_DISCOVER, NULL);
    char *ca = NULL, *ca_why = NULL;
    struct http_pool *pool = NULL;
    struct corpus_repo *merged = NULL;
    struct zk_err err = {0};
    size_t dropped = 0;
    time_t next;
    int ca_read = 0, n = 0;

    if (spec->nsources == 0) {
        disc_corpus_free(memo->disc);
        memo->disc = NULL;
        return;
    }
    if (!memo->disc) {
        /* A new operator, or a new leader: what the last one discovered is in the ConfigMap. */
        cJSON *cm = informer_get(p->ctx->children[RK_CONFIGMAP], p->ns, p->names.configmap);

        memo->disc = disc_corpus_new();
        disc_sync(memo->disc, spec);
        (void)disc_load(memo->disc, json_str(json_obj(cm, "data"), RENDER_DISCOVERED_KEY, NULL), p->in.now);
        cJSON_Delete(cm);
    } else {
        disc_sync(memo->disc, spec);
    }
    if (asked && strcmp(asked, memo->discover_honoured) != 0) {
        disc_request_all(memo->disc);
        snprintf(memo->discover_honoured, sizeof(memo->discover_honoured), "%s", asked);
    }
    for (int i = 0; i < spec->nsources; i++) {
        if (!disc_due(memo->disc, i, p->in.now))
            continue;
        if (!pool)
            pool = http_pool_new(1);
        reconcile_list_source(p, i, pool, &ca, &ca_why, &ca_read);
    }
    if (pool)
        http_pool_free(pool);
    free(ca);
    free(ca_why);
    for (int i = 0; i < spec->nsources; i++)
        disc_report(memo->disc, i, &p->sources[i]);
    p->in.sources = p->sources;
    p->in.nsources = spec->nsources;
    if (disc_merge(memo->disc, spec, &merged, &n, &dropped, &err) == ZK_OK) {
        rlist_repos_free(spec->repos, spec->nrepos);
        spec->repos = merged;
        spec->nrepos = n;
        p->in.sources_dropped = dropped;
    } else {
        snprintf(p->merge_error, sizeof(p->merge_error), "%s", err.msg);
        p->in.sources_error = p->merge_error;
    }
    spec->discovered = disc_state_text(memo->disc);
    p->sources_fp = reconcile_text_fp(spec->discovered);
    next = disc_next_due(memo->disc);
    p->discover_after = next > p->in.now ? (double)(next - p->in.now) : 1;
}

/* Fills p->in as far as the corpus gets: an invalid spec or a missing reference stops the pass early,
 * with the status saying why; otherwise reconcile_observe. Returns a failure that leaves nothing to
 * report in the status (an API error reading a Secret, a failed reindex). */
static int reconcile_gather(struct reconcile_pass *p, struct zk_err *err)
{
    int rc;

    if (spec_parse(p->corpus, &p->ctx->defaults, &p->spec, &p->errs) != ZK_OK) {
        p->in.spec_errors = &p->errs;
        return ZK_OK;
    }
    render_child_names(p->name, &p->names);
    render_layouts(p->corpus, p->spec, &p->layouts);
    snprintf(p->endpoint, sizeof(p->endpoint), "http://%s.%s.svc:%d", p->names.service, p->ns,
             p->spec->gateway.port);
    p->in.spec = p->spec;
    p->in.endpoint = p->endpoint;
    rc = reconcile_check_refs(p, err);
    if (rc != ZK_OK || p->in.missing_ref)
        return rc;
    reconcile_sources(p);
    return reconcile_observe(p, err);
}

/* The one status computation and write of a pass, and when to come back: the soonest of the status's
 * own deadline (freshness) and the pass's (the next /index-status read, a missing Secret). */
static int reconcile_publish(struct reconcile_pass *p, double *requeue_after, struct zk_err *err)
{
    long status_requeue;
    cJSON *status = status_compute(&p->in, &status_requeue);
    int rc = reconcile_write_status(p->ctx, p->memo, p->corpus, status, err);

    cJSON_Delete(status);
    if (rc == ZK_OK)
        *requeue_after = reconcile_min_requeue(reconcile_min_requeue((double)status_requeue, p->retry_after),
                                               p->discover_after);
    return rc;
}

int reconcile(struct reconcile_ctx *ctx, const char *key, double *requeue_after, struct zk_err *err)
{
    const char *slash = strchr(key, '/');
    struct reconcile_pass p = {.ctx = ctx, .key = key};
    int rc = ZK_OK;

    *requeue_after = 0;
    if (!slash || (size_t)(slash - key) >= sizeof(p.ns))
        return zk_err_set(err, ZK_EINVAL, "bad key \"%s\"", key);
    memcpy(p.ns, key, (size_t)(slash - key));
    p.ns[slash - key] = '\0';
    p.name = slash + 1;

    p.corpus_fp = informer_fingerprint(ctx->corpora, p.ns, p.name);
    p.corpus = informer_get(ctx->corpora, p.ns, p.name);
    if (!p.corpus) {
        /* Deleted: the garbage collector removes the children through their ownerReferences. */
        reconcile_memo_drop(ctx, key);
        return ZK_OK;
    }
    /* Being deleted: the same, once the finalizers of others are done. In a namespace being deleted
     * nothing can be made, and the corpus goes with the namespace (reconcile.h). */
    if (!json_path(p.corpus, "metadata.deletionTimestamp") && !reconcile_ns_terminating(ctx, p.ns, monotime_s())) {
        p.memo = reconcile_memo_get(ctx, key);
        p.in.corpus = p.corpus;
        p.in.now = reconcile_now(ctx);
        rc = reconcile_gather(&p, err);
        if (rc == ZK_OK && p.ns_terminating) {
            reconcile_note_terminating(ctx, p.ns, monotime_s());
            log_warn("The namespace is being deleted; its corpora are left alone until it is gone", "namespace",
                     p.ns, "corpus", p.name, NULL);
            reconcile_pass_free(&p);
            return ZK_OK;
        }
        if (rc == ZK_OK)
            rc = reconcile_publish(&p, requeue_after, err);
        /* A refused child is in the status now, and is retried with backoff like any failure. */
        if (rc == ZK_OK && p.apply_err.code != ZK_OK) {
            *requeue_after = 0;
            rc = zk_err_set(err, p.apply_err.code, "applying %s", p.apply_err.msg);
        }
        if (rc != ZK_OK)
            zk_err_prefix(err, "reconcile %s", key);
    }
    reconcile_pass_free(&p);
    return rc;
}
