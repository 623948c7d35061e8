/* status.c: see status.h.
 *
 * Everything time-based is judged against in->now, so tests control the clock. Values that come from
 * outside and may disappear (Jobs pruned by the CronJob's history limits, an index service that is
 * briefly unreachable) are carried over from the corpus's current status, so the status never goes
 * backwards or blank because an observation is missing. */
#include "controller/corpus/status.h"
#include "controller/corpus/api.h"

#include "controller/corpus/compare.h"
#include "controller/runtime/informer.h"
#include "jb.h"
#include "json.h"
#include "rfc3339.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- time ----------------------------------------------------------------------------------- */

/* A time member of obj, or 0 when absent or malformed. */
static time_t time_member(const cJSON *obj, const char *key)
{
    time_t t = 0;

    return rfc3339_parse(json_str(obj, key, NULL), &t) ? t : 0;
}

static time_t later(time_t a, time_t b)
{
    return a > b ? a : b;
}

/* "36h", "1h30m", "45m", "30s": a configured duration, exactly, for messages. */
static void human_duration(long secs, char *dst, size_t len)
{
    if (secs >= 3600 && secs % 3600 == 0)
        snprintf(dst, len, "%ldh", secs / 3600);
    else if (secs >= 3600 && secs % 60 == 0)
        snprintf(dst, len, "%ldh%ldm", secs / 3600, secs % 3600 / 60);
    else if (secs >= 60 && secs % 60 == 0)
        snprintf(dst, len, "%ldm", secs / 60);
    else
        snprintf(dst, len, "%lds", secs);
}

/* ---- /index-status -------------------------------------------------------------------------- */

/* "stale" and "staleRepositories", which a connector sends when it was given maxAge. */
static int index_status_parse_stale(const cJSON *root, struct index_status *out, struct zk_err *err)
{
    const cJSON *stale = cJSON_GetObjectItemCaseSensitive(root, "stale");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "staleRepositories"), *name;
    int n = 0;

    if (!stale)
        return ZK_OK;
    if (!cJSON_IsNumber(stale) || stale->valuedouble < 0 || stale->valuedouble > 1e9)
        return zk_err_set(err, ZK_EPARSE, "parsing /index-status: \"stale\" is not a count");
    out->has_stale = 1;
    out->stale = (int)stale->valuedouble;
    out->stale_repositories = cJSON_CreateArray();
    cJSON_ArrayForEach(name, (cJSON_IsArray(names) ? names : NULL)) {
        if (n >= STATUS_MAX_STALE_REPOS)
            break;
        if (!cJSON_IsString(name) || strlen(name->valuestring) > STATUS_STALE_NAME_MAX)
            continue;
        cJSON_AddItemToArray(out->stale_repositories, cJSON_CreateString(name->valuestring));
        n++;
    }
    return ZK_OK;
}

/* "searchShards": what a sharded connector found of each shard. An entry it cannot read is shown as
 * an error of that shard rather than failing the whole answer, which still counts every repository. */
static void index_status_parse_shards(const cJSON *root, struct index_status *out)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, json_arr(root, "searchShards")) {
        struct index_shard *sh;
        const char *oldest = json_str(e, "oldestIndexTime", "");

        if (out->nsearch_shards == SHARD_MAX)
            break;
        sh = &out->search_shards[out->nsearch_shards++];
        sh->repositories = (int)json_int(e, "repositories", 0);
        sh->index_bytes = json_int(e, "indexBytes", 0);
        if (*oldest && !rfc3339_parse(oldest, &sh->oldest_index_time))
            snprintf(sh->error, sizeof(sh->error), "its oldest index time is not RFC 3339");
        snprintf(sh->error, sizeof(sh->error), "%s", json_str(e, "error", sh->error));
    }
}

int index_status_parse(const char *body, size_t len, struct index_status *out, struct zk_err *err)
{
    cJSON *root = json_parse(body, len);
    const cJSON *repos, *shards;
    const char *newest, *oldest;
    int rc = ZK_OK;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(root)) {
        rc = zk_err_set(err, ZK_EPARSE, "parsing /index-status: not a JSON object");
        goto out;
    }
    repos = cJSON_GetObjectItemCaseSensitive(root, "repositories");
    shards = cJSON_GetObjectItemCaseSensitive(root, "shards");
    if (!cJSON_IsNumber(repos) || repos->valuedouble < 0 || repos->valuedouble > 1e9) {
        rc = zk_err_set(err, ZK_EPARSE, "parsing /index-status: \"repositories\" is not a count");
        goto out;
    }
    out->repositories = (int)repos->valuedouble;
    if (shards && (!cJSON_IsNumber(shards) || shards->valuedouble < 0 || shards->valuedouble > 1e9)) {
        rc = zk_err_set(err, ZK_EPARSE, "parsing /index-status: \"shards\" is not a count");
        goto out;
    }
    out->shards = shards ? (int)shards->valuedouble : 0;
    newest = json_str(root, "newestIndexTime", "");
    oldest = json_str(root, "oldestIndexTime", "");
    if ((*newest && !rfc3339_parse(newest, &out->newest_index_time)) ||
        (*oldest && !rfc3339_parse(oldest, &out->oldest_index_time))) {
        rc = zk_err_set(err, ZK_EPARSE, "parsing /index-status: an index time is not RFC 3339");
        goto out;
    }
    snprintf(out->zoekt_version, sizeof(out->zoekt_version), "%s", json_str(root, "zoektVersion", ""));
    rc = index_status_parse_stale(root, out, err);
    if (rc == ZK_OK)
        index_status_parse_shards(root, out);
out:
    cJSON_Delete(root);
    return rc;
}

void index_status_free(struct index_status *s)
{
    cJSON_Delete(s->stale_repositories);
    s->stale_repositories = NULL;
}

/* ---- conditions ----------------------------------------------------------------------------- */

const cJSON *status_condition(const cJSON *status, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_arr(status, "conditions"))
        if (strcmp(json_str(c, "type", ""), type) == 0)
            return c;
    return NULL;
}

const cJSON *status_object_condition_true(const cJSON *object, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_path(object, "status.conditions"))
        if (strcmp(json_str(c, "type", ""), type) == 0 && strcmp(json_str(c, "status", ""), "True") == 0)
            return c;
    return NULL;
}

int status_reason_in_progress(const char *reason)
{
    return strcmp(reason, STATUS_LAYOUT_INDEXING) == 0 || strcmp(reason, STATUS_LAYOUT_ROLLING_OUT) == 0 ||
           strcmp(reason, STATUS_LAYOUT_VERIFYING) == 0;
}

int status_reason_needs_user(const char *reason)
{
    static const char *const blocking[] = {
        "InvalidSpec",        "SecretNotFound",       "ConfigMapNotFound",     STATUS_PODS_REFUSED,
        STATUS_INDEXER_FAILING, STATUS_UNSCHEDULABLE, STATUS_STORAGE_CLASS_NOT_FOUND, STATUS_IMAGE_PULL_FAILED,
    };

    for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++)
        if (strcmp(reason, blocking[i]) == 0)
            return 1;
    return 0;
}

struct cond {
    const char *status; /* "True", "False", "Unknown" */
    char reason[64];
    char message[1024];
};

static void cond_set(struct cond *c, const char *status, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void cond_set(struct cond *c, const char *status, const char *reason, const char *fmt, ...)
{
    va_list ap;

    c->status = status;
    snprintf(c->reason, sizeof(c->reason), "%s", reason);
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof(c->message), fmt, ap);
    va_end(ap);
}

/* Appends a metav1.Condition; lastTransitionTime is kept from the previous condition of the same type
 * unless the status flipped. */
static void add_condition(struct jb *b, cJSON *arr, const cJSON *prev_status, const char *type,
                          const struct cond *c, long long generation, time_t now)
{
    const cJSON *prev = status_condition(prev_status, type);
    const char *prev_time = json_str(prev, "lastTransitionTime", NULL);
    char ts[32];
    cJSON *o = jb_object(b);

    if (prev && prev_time && strcmp(json_str(prev, "status", ""), c->status) == 0)
        snprintf(ts, sizeof(ts), "%s", prev_time);
    else
        rfc3339_format(now, ts, sizeof(ts));
    jb_add_str(b, o, "type", type);
    jb_add_str(b, o, "status", c->status);
    jb_add_num(b, o, "observedGeneration", (double)generation);
    jb_add_str(b, o, "lastTransitionTime", ts);
    jb_add_str(b, o, "reason", c->reason);
    jb_add_str(b, o, "message", c->message);
    jb_push(b, arr, o);
}

/* ---- observations --------------------------------------------------------------------------- */

struct indexer_times {
    time_t last_schedule, last_success, last_failure;
};

static void observe_indexer(const struct status_input *in, const cJSON *prev, struct indexer_times *t)
{
    const cJSON *cj_status = json_obj(in->cronjob, "status");
    const cJSON *prev_ix = json_obj(prev, "indexer");
    const cJSON *job;

    t->last_schedule = later(time_member(prev_ix, "lastScheduleTime"), time_member(cj_status, "lastScheduleTime"));
    t->last_success = later(time_member(prev_ix, "lastSuccessfulTime"), time_member(cj_status, "lastSuccessfulTime"));
    t->last_failure = time_member(prev_ix, "lastFailedTime");
    cJSON_ArrayForEach(job, in->jobs) {
        const cJSON *st = json_obj(job, "status");
        const cJSON *done = status_object_condition_true(job, "Complete");
        const cJSON *failed = status_object_condition_true(job, "Failed");

        t->last_schedule = later(t->last_schedule, time_member(st, "startTime"));
        if (done)
            t->last_success = later(t->last_success, later(time_member(st, "completionTime"),
                                                           time_member(done, "lastTransitionTime")));
        if (failed)
            t->last_failure = later(t->last_failure, time_member(failed, "lastTransitionTime"));
    }
}

/* The failed repositories named by the newest finished indexer pod's summary, as a new array; or a
 * copy of the previous list when no finished pod says anything. *no_space: that summary says the
 * volume was full (noSpace), which fails every repository until somebody grows it. run_error gets the
 * summary's "error", why that run could index nothing at all (a setting, the volume, an image without
 * ctags), or "" (len bytes at most, cut). */
static cJSON *observe_failed_repos(const struct status_input *in, const cJSON *prev_status, int *no_space,
                                   char *run_error, size_t len)
{
    const cJSON *pod, *best = NULL, *list, *name;
    time_t best_at = 0;
    cJSON *summary, *out;

    cJSON_ArrayForEach(pod, in->pods) {
        const cJSON *cs;

        cJSON_ArrayForEach(cs, json_path(pod, "status.containerStatuses")) {
            const cJSON *term = json_path(cs, "state.terminated");
            time_t at = time_member(term, "finishedAt");

            if (strcmp(json_str(cs, "name", ""), "indexer") == 0 && json_str(term, "message", NULL) && at > best_at) {
                best = term;
                best_at = at;
            }
        }
    }
    *no_space = 0;
    run_error[0] = '\0';
    if (best) {
        const char *msg = json_str(best, "message", "");

        summary = json_parse(msg, strlen(msg));
        *no_space = json_bool(json_obj(summary, "summary"), "noSpace", 0);
        snprintf(run_error, len, "%s", json_str(json_obj(summary, "summary"), "error", ""));
        list = json_arr(json_obj(summary, "summary"), "failedRepositories");
        if (list) {
            struct jb b = {0};
            int n = 0;

            out = jb_array(&b);
            cJSON_ArrayForEach(name, list) {
                if (!cJSON_IsString(name) || n >= STATUS_MAX_FAILED_REPOS || strlen(name->valuestring) > 253)
                    continue;
                jb_push(&b, out, jb_string(&b, name->valuestring));
                n++;
            }
            cJSON_Delete(summary);
            return jb_finish(&b, out);
        }
        cJSON_Delete(summary);
    }
    list = json_arr(json_obj(prev_status, "indexer"), "failedRepositories");
    return list ? cJSON_Duplicate(list, 1) : cJSON_CreateArray();
}

/* Adds key: t in RFC 3339 when t is known. */
static void add_time(struct jb *b, cJSON *obj, const char *key, time_t t)
{
    char ts[32];

    if (t <= 0)
        return;
    rfc3339_format(t, ts, sizeof(ts));
    jb_add_str(b, obj, key, ts);
}

/* ---- the status ----------------------------------------------------------------------------- */

/* What the webserver serves: this observation, else what the status said before. */
struct served {
    long long repo_count; /* -1: never known */
    time_t newest, oldest;
};

static void observe_served(const struct status_input *in, const cJSON *prev, struct served *out)
{
    if (in->index) {
        out->repo_count = in->index->repositories;
        out->newest = in->index->newest_index_time;
        out->oldest = in->index->oldest_index_time;
    } else {
        out->repo_count = json_int(prev, "repositoryCount", -1);
        out->newest = time_member(prev, "lastIndexTime");
        out->oldest = time_member(prev, "oldestIndexTime");
    }
}

/* The per-repository judgement: this observation's, else what the status said before. Only a
 * connector that judged each repository (it was given maxAge) reports one. */
struct stale_repos {
    int known;
    long long count;
    const cJSON *names; /* an array of strings, or NULL */
};

static void observe_stale(const struct status_input *in, const cJSON *prev, struct stale_repos *out)
{
    const cJSON *fr = json_obj(prev, "freshness");

    if (in->index) {
        out->known = in->index->has_stale;
        out->count = in->index->stale;
        out->names = in->index->stale_repositories;
    } else {
        out->known = json_int(fr, "stale", -1) >= 0;
        out->count = json_int(fr, "stale", 0);
        out->names = json_arr(fr, "staleRepositories");
    }
}

/* Writes "N repositories are older than maxAge M: a, b, c and K more" into dst: as many names as fit
 * in STATUS_STALE_MESSAGE_NAMES bytes, the first (the oldest) always. */
#define STATUS_STALE_MESSAGE_NAMES 400
static void stale_message(const struct stale_repos *st, const char *max_age, char *dst, size_t len)
{
    const cJSON *name;
    size_t used, names = 0;
    long long shown = 0;

    snprintf(dst, len, "%lld repositor%s older than maxAge %s", st->count, st->count == 1 ? "y is" : "ies are",
             max_age);
    cJSON_ArrayForEach(name, st->names) {
        const char *n = cJSON_IsString(name) ? name->valuestring : "";

        if (shown && names + strlen(n) + 2 > STATUS_STALE_MESSAGE_NAMES)
            break;
        used = strlen(dst);
        snprintf(dst + used, len - used, "%s%s", shown ? ", " : ": ", n);
        names += strlen(n) + 2;
        shown++;
    }
    used = strlen(dst);
    if (shown && st->count > shown)
        snprintf(dst + used, len - used, " and %lld more", st->count - shown);
}

/* Indexed: at least one good index is served. A newest run that could index nothing (run_error) is
 * named whatever is served, with a reason of its own, since nothing gets better until somebody acts. */
static void judge_indexed(const struct status_input *in, const struct indexer_times *times, int nfailed,
                          int no_space, const char *run_error, struct cond *c)
{
    const char *full = no_space ? "; no space left on the volume: grow it, the previous shards keep serving" : "";

    if (run_error[0] && times->last_failure >= times->last_success && in->index && in->index->repositories > 0)
        cond_set(c, "True", STATUS_INDEXER_FAILING,
                 "%d repositories served from the previous index; the last indexer run failed: %s",
                 in->index->repositories, run_error);
    else if (run_error[0] && times->last_failure >= times->last_success && in->index)
        cond_set(c, "False", STATUS_INDEXER_FAILING, "the webserver serves no repository yet; the last indexer run failed: %s",
                 run_error);
    else if (in->index && in->index->repositories > 0 && nfailed > 0)
        cond_set(c, "True", "PartiallyIndexed",
                 "%d repositories served; the last indexer run failed for %d (see status.indexer.failedRepositories)%s",
                 in->index->repositories, nfailed, full);
    else if (in->index && in->index->repositories > 0)
        cond_set(c, "True", "IndexServed", "%d repositories served from %d shards", in->index->repositories,
                 in->index->shards);
    else if (in->index)
        cond_set(c, "False", "NoIndex", "the webserver serves no repository yet%s%s",
                 times->last_failure > times->last_success ? "; the last indexer run failed" : "", full);
    else if (in->index_error)
        cond_set(c, "Unknown", "IndexStatusUnavailable", "cannot read /index-status: %s", in->index_error);
    else
        cond_set(c, "Unknown", "Pending", "the index status has not been read yet");
}

/* Fresh: every repository's index is within maxAge. The oldest index time says whether one is not,
 * also between reads of /index-status (time passes either way), and is judged on the last known times
 * even when the index service is unreachable right now; the connector's per-repository judgement, when
 * it made one, names them. Sets *requeue_seconds to when a fresh index turns stale. */
static void judge_fresh(const struct status_input *in, const struct served *sv, const struct stale_repos *st,
                        struct cond *c, long *requeue_seconds)
{
    long max_age, age;
    char m[32], built[32], until[32], names[900], old[48] = "";

    if (!in->spec) {
        cond_set(c, "Unknown", "InvalidSpec", "freshness cannot be judged while the spec is invalid");
        return;
    }
    if (sv->oldest <= 0 || sv->repo_count == 0) {
        cond_set(c, "False", "NoIndex", "no index has been built yet");
        return;
    }
    max_age = in->spec->freshness_max_age_seconds;
    age = (long)(in->now - sv->oldest);
    /* The messages change only when the condition does, when /index-status says something new, or
     * (while stale) once an hour: a resync with nothing new must produce the same status, or every
     * resync would write. */
    human_duration(max_age, m, sizeof(m));
    if (age > max_age)
        snprintf(old, sizeof(old), age >= 3600 ? "oldest index is %ldh old" : "oldest index is %ldm old",
                 age >= 3600 ? age / 3600 : age / 60);
    if (st->known && st->count > 0) {
        stale_message(st, m, names, sizeof(names));
        cond_set(c, "False", "Stale", "%s%s%s", names, old[0] ? "; " : "", old);
    } else if (age <= max_age) {
        rfc3339_format(sv->oldest, built, sizeof(built));
        rfc3339_format(sv->oldest + max_age, until, sizeof(until));
        cond_set(c, "True", "WithinMaxAge", "oldest index is from %s; fresh until %s (maxAge is %s)", built, until,
                 m);
        *requeue_seconds = max_age - age + 1;
    } else {
        cond_set(c, "False", "Stale", "%s; maxAge is %s", old, m);
    }
}

/* The message of the Deployment's ReplicaFailure condition when it is True, else NULL. The Deployment
 * copies it from its ReplicaSet, whose pods the API server refused (a quota, Pod Security): that is the
 * only place such a refusal shows, as no pod exists to carry it. */
static const char *deployment_pods_refused(const cJSON *deployment)
{
    const cJSON *c = status_object_condition_true(deployment, "ReplicaFailure");

    return c ? json_str(c, "message", "the ReplicaSet could not create a pod") : NULL;
}

static int is_search_pod(const cJSON *pod)
{
    return strcmp(json_str(json_path(pod, "metadata.labels"), API_LABEL_COMPONENT, ""), "search") == 0;
}

/* The search pod's PodScheduled condition when it is False (the scheduler could not place it), else NULL. */
static const cJSON *search_pod_unscheduled(const cJSON *pod)
{
    const cJSON *scheduled = status_condition(json_obj(pod, "status"), "PodScheduled");

    if (!is_search_pod(pod) || !scheduled || strcmp(json_str(scheduled, "status", ""), "False") != 0)
        return NULL;
    return scheduled;
}

int status_search_pod_unscheduled(const cJSON *pods)
{
    const cJSON *pod;

    cJSON_ArrayForEach(pod, pods)
        if (search_pod_unscheduled(pod))
            return 1;
    return 0;
}

/* The spec field that names a search pod container's image, for a message that says what to change. */
static const char *image_field(const char *container)
{
    if (strcmp(container, "nginx") == 0)
        return "spec.gateway.image";
    if (strcmp(container, "connector") == 0)
        return "spec.connector.image";
    return "spec.webserver.image";
}

/* The kubelet's words on an image it could not pull, without the parts that change from one attempt to
 * the next (ImagePullBackOff's "Back-off pulling image ...: ErrImagePull:" wrapper alternates with the
 * bare error), so that the status says the same thing across back-off cycles and is written once. */
static const char *pull_error(const char *msg)
{
    static const char *const wrappers[] = {"ErrImagePull: ", "rpc error: code = "};
    const char *p = msg;

    if (strncmp(p, "Back-off pulling image \"", 24) == 0) {
        const char *end = strstr(p + 24, "\": ");

        p = end ? end + 3 : p;
    }
    for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
        if (strncmp(p, wrappers[i], strlen(wrappers[i])) == 0) {
            const char *desc;

            p += strlen(wrappers[i]);
            if (i == 1 && (desc = strstr(p, " desc = ")) != NULL)
                p = desc + 8;
        }
    return p;
}

/* Why the search pods do not run, when one of them says so: a pod the scheduler cannot place (no node
 * of the corpus's architecture, or its volume claim not bound, with the claim's storage class checked
 * by reconcile) or a container whose image cannot be pulled. Sets c and returns 1, or returns 0 when
 * no search pod names a cause (they are starting, or none exists yet). */
static int judge_search_pods(const struct status_input *in, struct cond *c)
{
    const cJSON *pod, *cs;

    cJSON_ArrayForEach(pod, in->pods) {
        const cJSON *scheduled = search_pod_unscheduled(pod);
        const char *said = json_str(scheduled, "message", "");

        if (!is_search_pod(pod))
            continue;
        if (scheduled) {
            const char *claim = json_path_str(in->claim, "metadata.name", "");
            const char *class = json_path_str(in->claim, "spec.storageClassName", "");

            /* A claim being provisioned is the way of a new corpus; only a class that does not exist
             * needs somebody (status_reason_needs_user). */
            if (in->claim && strcmp(json_path_str(in->claim, "status.phase", ""), "Pending") == 0) {
                if (in->storage_class_missing)
                    cond_set(c, "False", STATUS_STORAGE_CLASS_NOT_FOUND,
                             "the volume claim %s is Pending: storage class \"%s\" does not exist (create it, "
                             "or name another in spec.storage.storageClassName)",
                             claim, class);
                else
                    cond_set(c, "False", STATUS_VOLUME_NOT_BOUND,
                             "the volume claim %s is Pending: storage class \"%s\" has not provided a volume",
                             claim, class);
            } else if (strstr(said, "unbound immediate PersistentVolumeClaims")) {
                /* The scheduler saw the claim unbound before the cached claim says Pending or Bound. */
                cond_set(c, "False", STATUS_VOLUME_NOT_BOUND, "the search pods wait for their volume claim: %.800s",
                         said);
            } else if (strstr(said, "node affinity/selector")) {
                cond_set(c, "False", STATUS_UNSCHEDULABLE,
                         "no node matches the search pods' node selector (kubernetes.io/arch=%s from "
                         "spec.webserver.architecture%s); the scheduler says: %.600s",
                         in->spec->webserver.architecture,
                         in->spec->webserver.node_selector ? ", and spec.webserver.nodeSelector" : "", said);
            } else {
                cond_set(c, "False", STATUS_UNSCHEDULABLE, "the search pods cannot be scheduled: %.800s",
                         said[0] ? said : json_str(scheduled, "reason", "no reason given"));
            }
            return 1;
        }
        cJSON_ArrayForEach(cs, json_path(pod, "status.containerStatuses")) {
            static const char *const pull_reasons[] = {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull",
                                                       "InvalidImageName"};
            const char *why = json_path_str(cs, "state.waiting.reason", "");
            const char *name = json_str(cs, "name", "");

            for (size_t i = 0; i < sizeof(pull_reasons) / sizeof(pull_reasons[0]); i++)
                if (strcmp(why, pull_reasons[i]) == 0) {
                    cond_set(c, "False", STATUS_IMAGE_PULL_FAILED,
                             "container %s cannot get its image \"%.300s\" (%s): %.500s", name,
                             json_str(cs, "image", ""), image_field(name),
                             pull_error(json_path_str(cs, "state.waiting.message", why)));
                    return 1;
                }
        }
    }
    return 0;
}

/* Ready when no search pod is available: the API server refused them, one of them says why it does
 * not run, or they are on their way. */
static void judge_unavailable(const struct status_input *in, struct cond *c)
{
    if (deployment_pods_refused(in->deployment))
        cond_set(c, "False", STATUS_PODS_REFUSED, "the search pods are refused: %.900s",
                 deployment_pods_refused(in->deployment));
    else if (!judge_search_pods(in, c))
        cond_set(c, "False", "DeploymentUnavailable", "0 of %d search pods are available",
                 in->spec->webserver.replicas);
}

/* Ready: the first thing that is wrong, in the order an operator would fix it. */
static void judge_ready(const struct status_input *in, const struct cond *indexed, struct cond *c)
{
    if (!in->spec) {
        char msg[900];

        msg[0] = '\0';
        if (in->spec_errors)
            spec_errors_format(in->spec_errors, msg, sizeof(msg));
        cond_set(c, "False", "InvalidSpec", "%s", msg[0] ? msg : "the spec is invalid");
    } else if (in->missing_ref) {
        const char *kind = in->missing_kind ? in->missing_kind : "Secret";

        cond_set(c, "False", strcmp(kind, "ConfigMap") == 0 ? "ConfigMapNotFound" : "SecretNotFound",
                 "%s \"%.200s\" referenced by the spec does not exist", kind, in->missing_ref);
    } else if (in->apply_failure) {
        cond_set(c, "False", STATUS_APPLY_FAILED, "could not apply %s", in->apply_failure);
    } else if (!in->deployment) {
        cond_set(c, "False", "Progressing", "the search Deployment has not been created yet");
    } else if (in->spec->webserver.replicas == 0) {
        cond_set(c, "False", "ScaledToZero", "spec.webserver.replicas is 0");
    } else if (json_int(json_obj(in->deployment, "status"), "availableReplicas", 0) < 1) {
        judge_unavailable(in, c);
    } else if (!in->index && in->index_error) {
        cond_set(c, "False", "IndexUnreachable", "cannot read /index-status: %s", in->index_error);
    } else if (strcmp(indexed->status, "True") != 0) {
        cond_set(c, "False", indexed->reason, "%s", indexed->message);
    } else {
        cond_set(c, "True", "Available", "search is available at %s", in->endpoint ? in->endpoint : "the Service");
    }
}

/* status.sources and SourcesReady: per source what its set holds and when it was last listed, and
 * whether every listing works. */
static void judge_sources(const struct status_input *in, struct jb *b, cJSON *st, struct cond *c)
{
    cJSON *arr = jb_add_arr(b, st, "sources");
    size_t total = 0;
    int failing = 0, pending = 0;
    char first[700] = "";

    for (int i = 0; i < in->nsources; i++) {
        const struct corpus_source *cs = &in->spec->sources[i];
        const struct disc_report *r = &in->sources[i];
        cJSON *o = jb_object(b);

        jb_add_str(b, o, "host", spec_source_host_name(cs->host));
        jb_add_str(b, o, spec_source_owner_kind(cs), cs->owner);
        jb_add_num(b, o, "repositories", (double)r->repositories);
        if (r->skipped)
            jb_add_num(b, o, "skipped", (double)r->skipped);
        add_time(b, o, "lastSuccessTime", r->last_success);
        if (r->error) {
            char msg[STATUS_SOURCE_ERROR_MAX + 1];

            snprintf(msg, sizeof(msg), "%s", r->error);
            jb_add_str(b, o, "error", msg);
            add_time(b, o, "lastFailureTime", r->last_attempt);
            if (!failing++)
                snprintf(first, sizeof(first), "%s %s: %s", spec_source_host_name(cs->host), cs->owner, msg);
        } else if (!r->last_attempt) {
            pending++;
        }
        total += r->repositories;
        jb_push(b, arr, o);
    }
    if (in->sources_error)
        cond_set(c, "False", "TooManyRepositories", "%s", in->sources_error);
    else if (failing)
        cond_set(c, "False", STATUS_DISCOVERY_FAILED,
                 "%d of %d sources could not be listed; their last listed repositories stay until they answer. %s",
                 failing, in->nsources, first);
    else if (pending)
        cond_set(c, "Unknown", "NotListedYet", "%d of %d sources not listed yet", pending, in->nsources);
    else
        cond_set(c, "True", "Listed", "%d sources hold %zu repositories%s", in->nsources, total,
                 in->sources_dropped ? " (some with names the spec refuses were left out)" : "");
}

/* servingShards (kept from the last status when this pass did not decide it, e.g. an invalid spec: the
 * serving layout must not be forgotten) and, with more than one shard, each one's figures. */
static void add_shards(const struct status_input *in, const cJSON *prev, struct jb *b, cJSON *st)
{
    int serving = in->serving_shards ? in->serving_shards : (int)json_int(prev, "servingShards", 0);
    const struct index_status *idx = in->index;
    cJSON *arr;

    if (serving <= 0)
        return;
    jb_add_num(b, st, "servingShards", serving);
    if (serving < 2 || !in->serving_shards)
        return;
    arr = jb_add_arr(b, st, "shards");
    for (int k = 0; k < serving; k++) {
        cJSON *e = jb_object(b);
        const struct index_shard *sh = idx && k < idx->nsearch_shards ? &idx->search_shards[k] : NULL;

        jb_add_num(b, e, "shard", k);
        if (sh && !sh->error[0]) {
            jb_add_num(b, e, "repositories", sh->repositories);
            jb_add_num(b, e, "indexBytes", (double)sh->index_bytes);
        }
        jb_add_num(b, e, "readyReplicas",
                   (double)json_int(json_obj(in->shard_deployments[k], "status"), "readyReplicas", 0));
        if (sh && !sh->error[0])
            add_time(b, e, "oldestIndexTime", sh->oldest_index_time);
        if (sh && sh->error[0])
            jb_add_str(b, e, "error", sh->error);
        else if (!sh)
            jb_add_str(b, e, "error", in->index_error ? in->index_error : "its index status has not been read yet");
        jb_push(b, arr, e);
    }
}

/* ShardLayout (STATUS_SHARD_LAYOUT): whether the layout the spec names serves. Returns 0 when the
 * corpus has no condition of that type: one shard in the spec and in service. With an invalid spec the
 * serving layout stays (nothing is rendered anew), and a condition there was says so. */
static int judge_layout(const struct status_input *in, const cJSON *prev, struct cond *c)
{
    int serving = in->serving_shards ? in->serving_shards : (int)json_int(prev, "servingShards", 1);
    const struct status_layout_move *m = &in->layout_move;
    int want;

    if (!in->spec) {
        if (!status_condition(prev, STATUS_SHARD_LAYOUT))
            return 0;
        cond_set(c, "Unknown", "InvalidSpec", "the spec is invalid; the layout of %d shard%s serves as before",
                 serving, serving == 1 ? "" : "s");
        return 1;
    }
    want = in->spec->webserver.shards;
    if (want < 2 && serving < 2 && !m->target)
        return 0;
    if (m->target)
        cond_set(c, "False", m->reason, "moving from %d shard%s to %d: %s; the layout of %d serves meanwhile",
                 serving, serving == 1 ? "" : "s", m->target, m->detail, serving);
    else if (serving != want)
        cond_set(c, "False", STATUS_LAYOUT_ROLLING_OUT,
                 "the search pods are rolled out with their layout's label before the move to %d shards", want);
    else
        cond_set(c, "True", STATUS_LAYOUT_SERVING, "the layout of %d shard%s the spec names serves", serving,
                 serving == 1 ? "" : "s");
    return 1;
}

cJSON *status_compute(const struct status_input *in, long *requeue_seconds)
{
    const cJSON *prev = json_obj(in->corpus, "status");
    long long generation = json_int(json_obj(in->corpus, "metadata"), "generation", 0);
    const char *reindex = in->reindex_honoured ? in->reindex_honoured : json_str(prev, "lastReindexRequest", NULL);
    struct indexer_times times;
    struct cond ready, indexed, fresh, layout;
    struct served sv;
    struct stale_repos stale;
    struct jb b = {0};
    cJSON *st, *ix, *failed, *conds;
    int no_space;
    char run_error[600];

    *requeue_seconds = 0;
    observe_served(in, prev, &sv);
    observe_stale(in, prev, &stale);
    observe_indexer(in, prev, &times);
    failed = observe_failed_repos(in, prev, &no_space, run_error, sizeof(run_error));
    judge_indexed(in, &times, cJSON_GetArraySize(failed), no_space, run_error, &indexed);
    judge_fresh(in, &sv, &stale, &fresh, requeue_seconds);
    judge_ready(in, &indexed, &ready);

    st = jb_object(&b);
    jb_add_num(&b, st, "observedGeneration", (double)generation);
    if (sv.repo_count >= 0)
        jb_add_num(&b, st, "repositoryCount", (double)sv.repo_count);
    add_time(&b, st, "lastIndexTime", sv.newest);
    add_time(&b, st, "oldestIndexTime", sv.oldest);
    if (stale.known) {
        cJSON *fr = jb_add_obj(&b, st, "freshness");

        jb_add_num(&b, fr, "stale", (double)stale.count);
        jb_add(&b, fr, "staleRepositories", stale.names ? cJSON_Duplicate(stale.names, 1) : cJSON_CreateArray());
    }
    ix = jb_add_obj(&b, st, "indexer");
    add_time(&b, ix, "lastScheduleTime", times.last_schedule);
    add_time(&b, ix, "lastSuccessfulTime", times.last_success);
    add_time(&b, ix, "lastFailedTime", times.last_failure);
    jb_add(&b, ix, "failedRepositories", failed);
    if (reindex)
        jb_add_str(&b, st, "lastReindexRequest", reindex);
    if (in->endpoint)
        jb_add_str(&b, st, "endpoint", in->endpoint);
    add_shards(in, prev, &b, st);
    conds = jb_add_arr(&b, st, "conditions");
    add_condition(&b, conds, prev, STATUS_READY, &ready, generation, in->now);
    add_condition(&b, conds, prev, STATUS_INDEXED, &indexed, generation, in->now);
    add_condition(&b, conds, prev, STATUS_FRESH, &fresh, generation, in->now);
    if (judge_layout(in, prev, &layout))
        add_condition(&b, conds, prev, STATUS_SHARD_LAYOUT, &layout, generation, in->now);
    if (in->sources && in->nsources > 0 && in->spec) {
        struct cond sources;

        judge_sources(in, &b, st, &sources);
        add_condition(&b, conds, prev, STATUS_SOURCES_READY, &sources, generation, in->now);
    }
    return jb_finish(&b, st);
}

/* Keeps, of the conditions array in st, only the entry of the given type. */
static void keep_only_condition(cJSON *st, const char *type)
{
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions"), *c, *next;

    for (c = conds ? conds->child : NULL; c; c = next) {
        next = c->next;
        if (strcmp(json_str(c, "type", ""), type) != 0)
            cJSON_Delete(cJSON_DetachItemViaPointer(conds, c));
    }
    if (conds && !conds->child)
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
}

/* Deletes every member of obj (an object, or NULL) not named in keep (NULL-terminated); deletes obj's
 * members altogether when keep is NULL. */
static void keep_members(cJSON *obj, const char *const *keep)
{
    cJSON *m, *next;

    for (m = obj ? obj->child : NULL; m; m = next) {
        size_t k = 0;

        next = m->next;
        while (keep && keep[k] && strcmp(keep[k], m->string) != 0)
            k++;
        if (!keep || !keep[k])
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, m));
    }
}

void status_prune_child(cJSON *obj)
{
    /* The status members status_compute and the shard layouts (reconcile.c) read, by kind; a kind not
     * named keeps no status. A Deployment's generation and rollout counts tell whether a layout's pods
     * all run its last change. */
    static const struct {
        const char *kind;
        const char *keep[6];
    } read[] = {
        {"Deployment", {"availableReplicas", "readyReplicas", "updatedReplicas", "observedGeneration", "conditions", NULL}},
        {"CronJob", {"lastScheduleTime", "lastSuccessfulTime", NULL}},
        {"PersistentVolumeClaim", {"phase", NULL}},
    };
    static const char *const server_meta[] = {"uid", "resourceVersion", "generation", "creationTimestamp"};
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const char *kind = json_str(obj, "kind", "");
    const char *const *keep = NULL;

    informer_prune_server_fields(obj);
    for (size_t i = 0; i < sizeof(server_meta) / sizeof(server_meta[0]); i++)
        if (strcmp(server_meta[i], "generation") != 0 || strcmp(kind, "Deployment") != 0)
            cJSON_DeleteItemFromObjectCaseSensitive(meta, server_meta[i]);
    for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++)
        if (strcmp(kind, read[i].kind) == 0)
            keep = read[i].keep;
    keep_members(st, keep);
    /* Available and Progressing change with every rollout step and are not read. */
    if (strcmp(kind, "Deployment") == 0)
        keep_only_condition(st, "ReplicaFailure");
    if (st && !st->child)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    /* Nothing reads a child's long texts but the comparison with what was applied (compare.h). */
    compare_digest_strings(obj);
}

void status_prune_pod(cJSON *obj)
{
    static const char *const status_keep[] = {"conditions", "containerStatuses", NULL};
    static const char *const container_keep[] = {"name", "image", "state", NULL};
    static const char *const state_keep[] = {"waiting", "terminated", NULL};
    static const char *const terminated_keep[] = {"message", "finishedAt", NULL};
    static const char *const condition_keep[] = {"type", "status", "reason", "message", NULL};
    cJSON *st, *cs;
    const cJSON *scheduled;

    informer_prune_server_fields(obj);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
    st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    keep_members(st, status_keep);
    keep_only_condition(st, "PodScheduled");
    scheduled = status_condition(st, "PodScheduled");
    if (scheduled && strcmp(json_str(scheduled, "status", ""), "False") != 0)
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
    else if (scheduled)
        keep_members(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "conditions"), 0), condition_keep);
    cJSON_ArrayForEach(cs, cJSON_GetObjectItemCaseSensitive(st, "containerStatuses")) {
        cJSON *state = cJSON_GetObjectItemCaseSensitive(cs, "state");

        keep_members(cs, container_keep);
        keep_members(state, state_keep);
        keep_members(cJSON_GetObjectItemCaseSensitive(state, "terminated"), terminated_keep);
    }
    if (st && !st->child)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
}
