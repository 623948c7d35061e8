/* test_render.c: the child objects of a corpus, byte for byte against golden files and field by field.
 *
 * Golden files live in tests/fixtures/render/. After an intended change to the rendering (or to
 * controller/assets/), regenerate them with `UPDATE_GOLDEN=1 build/san/tests/unit/test_render` and
 * review the diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "buf.h"
#include "controller/corpus/render.h"
#include "json.h"
#include "shard.h"
#include "tests/support/fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static char *read_file(const char *rel)
{
    char path[1024];
    struct buf b;

    snprintf(path, sizeof(path), "%s/%s", fixture_root(), rel);
    buf_init(&b, 16u << 20);
    return buf_read_file(&b, path, NULL) == ZK_OK ? buf_steal(&b) : NULL;
}

static void write_file(const char *rel, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fixture_root(), rel);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

/* Compares text with a golden file (or rewrites it under UPDATE_GOLDEN=1). */
static void golden(const char *rel, const char *text)
{
    char *want;

    if (getenv("UPDATE_GOLDEN")) {
        write_file(rel, text);
        return;
    }
    want = read_file(rel);
    if (!want)
        fail_msg("missing golden file %s (run with UPDATE_GOLDEN=1 to create it)", rel);
    if (strcmp(want, text) != 0) {
        size_t i = 0;

        while (want[i] && want[i] == text[i])
            i++;
        fail_msg("%s differs at byte %zu: want \"%.60s\", got \"%.60s\"", rel, i, want + i, text + i);
    }
    free(want);
}

struct fixture {
    cJSON *corpus;
    struct corpus_spec *spec;
    cJSON *children;
};

static cJSON *load_corpus(void)
{
    char *text = read_file("tests/fixtures/render/corpus.json");
    cJSON *c;

    assert_non_null(text);
    c = cJSON_Parse(text);
    free(text);
    assert_non_null(c);
    return c;
}

/* Parses corpus (taking ownership) and renders it. */
static void render_fx(struct fixture *fx, cJSON *corpus)
{
    struct spec_errors errs;
    struct zk_err err = {0};

    fx->corpus = corpus;
    assert_int_equal(spec_parse(corpus, NULL, &fx->spec, &errs), ZK_OK);
    assert_int_equal(render_children(corpus, fx->spec, &fx->children, &err), ZK_OK);
}

static void fx_free(struct fixture *fx)
{
    cJSON_Delete(fx->children);
    spec_free(fx->spec);
    cJSON_Delete(fx->corpus);
}

/* The child of kind called name (any name when NULL), or NULL. */
static const cJSON *named(const cJSON *children, const char *kind, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, children)
        if (strcmp(json_str(c, "kind", ""), kind) == 0 &&
            (!name || strcmp(json_path_str(c, "metadata.name", ""), name) == 0))
            return c;
    return NULL;
}

static const cJSON *child(const cJSON *children, const char *kind)
{
    return named(children, kind, NULL);
}

static const cJSON *container(const cJSON *pod_spec, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_arr(pod_spec, "containers"))
        if (strcmp(json_str(c, "name", ""), name) == 0)
            return c;
    return NULL;
}

/* The env of the CronJob's indexer container, printed, for the fixture corpus with spec.indexer.KEY
 * set to value (taken; nothing set when key is NULL). The caller frees it. */
static char *cronjob_indexer_env(const char *key, cJSON *value)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    char *text;

    if (key)
        cJSON_AddItemToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(corpus, "spec"), "indexer"), key, value);
    render_fx(&fx, corpus);
    text = json_print(json_arr(container(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.spec"),
                                         "indexer"),
                               "env"));
    fx_free(&fx);
    return text;
}

static const char *config_hash(const cJSON *children)
{
    return json_str(json_path(child(children, "Deployment"), "spec.template.metadata.annotations"),
                    API_ANN_CONFIG_HASH, NULL);
}

/* Checks that conf sends to the connector only from the locations named in want (the whole "location
 * ... {" lines, NULL-terminated), so that nothing routes /metrics, or any path but these, to it. */
static void check_connector_locations(const char *conf, const char *const *want)
{
    size_t found = 0, n = 0;

    for (const char *p = strstr(conf, "\n        location "); p; p = strstr(p + 1, "\n        location ")) {
        const char *next = strstr(p + 1, "\n        location "), *line = p + 9, *eol = strchr(line, '\n');
        const char *to = strstr(line, "proxy_pass http://connector");
        size_t i;

        if (!to || (next && to > next))
            continue;
        for (i = 0; want[i]; i++)
            if (strncmp(line, want[i], (size_t)(eol - line)) == 0 && strlen(want[i]) == (size_t)(eol - line))
                break;
        if (!want[i])
            fail_msg("unexpected location to the connector: %.*s", (int)(eol - line), line);
        found++;
    }
    while (want[n])
        n++;
    assert_int_equal(found, n);
}

static void test_golden(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    char *json, *yaml;

    (void)state;
    render_fx(&fx, load_corpus());
    json = cJSON_Print(fx.children);
    assert_non_null(json);
    golden("tests/fixtures/render/children.json", json);
    assert_int_equal(render_yaml(fx.children, &yaml, &err), ZK_OK);
    golden("tests/fixtures/render/children.yaml", yaml);
    free(json);
    free(yaml);
    fx_free(&fx);
}

/* The corpus as the API server hands it over after the controller's own status write: a new
 * resourceVersion and generation, managedFields, a status, an annotation another client set. */
static cJSON *corpus_after_a_status_write(void)
{
    cJSON *c = load_corpus(), *meta = cJSON_GetObjectItemCaseSensitive(c, "metadata"), *ann;

    cJSON_DeleteItemFromObject(meta, "resourceVersion");
    cJSON_AddStringToObject(meta, "resourceVersion", "987654");
    cJSON_DeleteItemFromObject(meta, "generation");
    cJSON_AddNumberToObject(meta, "generation", 42);
    cJSON_AddStringToObject(meta, "creationTimestamp", "2026-11-28T00:00:00Z");
    cJSON_AddItemToObject(meta, "managedFields", cJSON_Parse("[{\"manager\":\"zoekt-operator\","
                                                             "\"operation\":\"Update\",\"subresource\":\"status\"}]"));
    ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    if (!ann)
        ann = cJSON_AddObjectToObject(meta, "annotations");
    cJSON_AddStringToObject(ann, "kubectl.kubernetes.io/last-applied-configuration", "{}");
    cJSON_DeleteItemFromObject(c, "status");
    cJSON_AddItemToObject(c, "status", cJSON_Parse("{\"observedGeneration\":42,\"repositoryCount\":3}"));
    return c;
}

/* The children depend on the spec, the name, the namespace and the uid, and on nothing else: not on
 * what the server keeps about the corpus, nor on an earlier render in the same process. If they
 * depended on the resourceVersion or the status, every status write would make every child look
 * changed and be applied again, forever; if a render kept state, the second corpus a worker
 * reconciled would get some of the first one's children. */
static void test_deterministic(void **state)
{
    struct fixture a, other, b;
    char *ja, *jo, *jb;

    (void)state;
    render_fx(&a, load_corpus());
    other.corpus = load_corpus();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(other.corpus, "metadata"), "name",
                              cJSON_CreateString("another"));
    render_fx(&other, other.corpus);
    render_fx(&b, corpus_after_a_status_write());
    ja = json_print(a.children);
    jo = json_print(other.children);
    jb = json_print(b.children);
    assert_string_equal(ja, jb);
    /* Not vacuous: a corpus that differs where it matters renders differently. */
    assert_string_not_equal(ja, jo);
    free(ja);
    free(jo);
    free(jb);
    fx_free(&a);
    fx_free(&other);
    fx_free(&b);
}

static void test_order_labels_owners(void **state)
{
    static const char *const kinds[] = {"PersistentVolumeClaim", "ConfigMap", "ServiceAccount", "Role",
                                        "RoleBinding", "NetworkPolicy", "NetworkPolicy", "Service",
                                        "Deployment", "PodDisruptionBudget", "CronJob", "Deployment"};
    struct fixture fx;
    const cJSON *c;
    int i = 0;

    (void)state;
    render_fx(&fx, load_corpus());
    assert_int_equal(cJSON_GetArraySize(fx.children), 12);
    cJSON_ArrayForEach(c, fx.children) {
        const cJSON *l = json_path(c, "metadata.labels");
        const cJSON *owners = json_path(c, "metadata.ownerReferences");

        assert_string_equal(json_str(c, "kind", ""), kinds[i++]);
        assert_string_equal(json_path_str(c, "metadata.namespace", ""), "codesearch");
        assert_string_equal(json_str(l, API_LABEL_NAME, ""), "zoekt");
        assert_string_equal(json_str(l, API_LABEL_INSTANCE, ""), "org");
        assert_string_equal(json_str(l, API_LABEL_MANAGED_BY, ""), "zoekt-operator");
        assert_non_null(json_str(l, API_LABEL_COMPONENT, NULL));
        /* Retain (the default): the PVC alone has no owner, so deleting the corpus keeps it. */
        if (i == 1) {
            assert_null(owners);
            assert_string_equal(json_str(json_path(c, "metadata.annotations"), API_ANN_ON_DELETE, ""), "Retain");
            continue;
        }
        assert_int_equal(cJSON_GetArraySize(owners), 1);
        owners = cJSON_GetArrayItem(owners, 0);
        assert_string_equal(json_str(owners, "apiVersion", ""), "codesearch.dev/v1alpha1");
        assert_string_equal(json_str(owners, "kind", ""), "CodeSearchCorpus");
        assert_string_equal(json_str(owners, "name", ""), "org");
        assert_string_equal(json_str(owners, "uid", ""), "0b3c9e52-6a1f-4c55-9d2e-7f1d2a3b4c5d");
        assert_true(json_bool(owners, "controller", 0));
        assert_true(json_bool(owners, "blockOwnerDeletion", 0));
    }
    /* No Secret is ever rendered: credentials are mounted by reference. */
    assert_null(child(fx.children, "Secret"));
    fx_free(&fx);
}

static void test_pvc_delete_policy(void **state)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    const cJSON *pvc;

    (void)state;
    cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(corpus, "spec"), "storage"), "onDelete", "Delete");
    render_fx(&fx, corpus);
    pvc = child(fx.children, "PersistentVolumeClaim");
    assert_int_equal(cJSON_GetArraySize(json_path(pvc, "metadata.ownerReferences")), 1);
    assert_string_equal(json_str(json_path(pvc, "metadata.annotations"), API_ANN_ON_DELETE, ""), "Delete");
    assert_string_equal(json_path_str(pvc, "spec.storageClassName", ""), "efs-sc");
    assert_string_equal(json_path_str(pvc, "spec.resources.requests.storage", ""), "200Gi");
    assert_string_equal(cJSON_GetArrayItem(json_path(pvc, "spec.accessModes"), 0)->valuestring, "ReadWriteMany");
    fx_free(&fx);
}

static void test_existing_claim(void **state)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    const cJSON *dep, *vol;

    (void)state;
    cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(corpus, "spec"), "storage"), "existingClaim",
                            "shared-index");
    render_fx(&fx, corpus);
    assert_int_equal(cJSON_GetArraySize(fx.children), 11);
    assert_null(child(fx.children, "PersistentVolumeClaim"));
    dep = child(fx.children, "Deployment");
    vol = cJSON_GetArrayItem(json_path(dep, "spec.template.spec.volumes"), 0);
    assert_string_equal(json_path_str(vol, "persistentVolumeClaim.claimName", ""), "shared-index");
    vol = cJSON_GetArrayItem(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.spec.volumes"), 0);
    assert_string_equal(json_path_str(vol, "persistentVolumeClaim.claimName", ""), "shared-index");
    fx_free(&fx);
}

static void check_container_security(const cJSON *k)
{
    const cJSON *sc = json_obj(k, "securityContext");

    assert_false(json_bool(sc, "allowPrivilegeEscalation", 1));
    assert_true(json_bool(sc, "readOnlyRootFilesystem", 0));
    assert_string_equal(cJSON_GetArrayItem(json_path(sc, "capabilities.drop"), 0)->valuestring, "ALL");
    assert_non_null(json_path(k, "resources.requests.memory"));
    assert_non_null(json_path(k, "resources.limits.memory"));
}

static void check_pod_security(const cJSON *pod)
{
    const cJSON *sc = json_obj(pod, "securityContext");

    assert_true(json_bool(sc, "runAsNonRoot", 0));
    assert_true(json_int(sc, "runAsUser", 0) > 0);
    assert_string_equal(json_path_str(sc, "seccompProfile.type", ""), "RuntimeDefault");
    assert_string_equal(json_str(json_obj(pod, "nodeSelector"), "kubernetes.io/arch", ""), "arm64");
    assert_int_equal(cJSON_GetArraySize(json_arr(pod, "tolerations")), 1);
}

static void test_deployment(void **state)
{
    struct fixture fx;
    const cJSON *dep, *pod, *z, *n, *c, *cmd;
    char *cmdline;

    (void)state;
    render_fx(&fx, load_corpus());
    dep = child(fx.children, "Deployment");
    pod = json_path(dep, "spec.template.spec");
    check_pod_security(pod);
    assert_int_equal(cJSON_GetArraySize(json_arr(pod, "containers")), 3);
    z = container(pod, "zoekt-webserver");
    n = container(pod, "nginx");
    c = container(pod, "connector");
    assert_non_null(z);
    assert_non_null(n);
    assert_non_null(c);
    check_container_security(z);
    check_container_security(n);
    check_container_security(c);

    cmdline = json_print(json_arr(z, "command"));
    assert_string_equal(cmdline, "[\"zoekt-webserver\",\"-rpc\",\"-listen\",\"127.0.0.1:6070\",\"-index\",\"/data/index\"]");
    free(cmdline);
    assert_non_null(json_obj(z, "livenessProbe"));
    assert_null(json_arr(z, "ports"));

    /* nginx's port is the Service's target; the connector's, named for a PodMonitor, serves /metrics
     * alone on the pod's address (the kubelet puts the address in for $(POD_IP)). */
    assert_int_equal(json_int(cJSON_GetArrayItem(json_arr(n, "ports"), 0), "containerPort", 0), 8080);
    assert_int_equal(cJSON_GetArraySize(json_arr(c, "ports")), 1);
    assert_string_equal(json_str(cJSON_GetArrayItem(json_arr(c, "ports"), 0), "name", ""), "metrics");
    assert_int_equal(json_int(cJSON_GetArrayItem(json_arr(c, "ports"), 0), "containerPort", 0), 8081);
    assert_string_equal(json_str(cJSON_GetArrayItem(json_arr(c, "env"), 0), "name", ""), "POD_IP");
    assert_string_equal(json_path_str(cJSON_GetArrayItem(json_arr(c, "env"), 0), "valueFrom.fieldRef.fieldPath", ""),
                        "status.podIP");
    /* The Service carries the gateway alone: agents never reach the metrics port through it. */
    assert_int_equal(cJSON_GetArraySize(json_path(child(fx.children, "Service"), "spec.ports")), 1);
    assert_string_equal(json_path_str(n, "readinessProbe.httpGet.path", ""), "/readyz");
    assert_string_equal(json_path_str(n, "livenessProbe.httpGet.path", ""), "/healthz");

    cmd = json_arr(c, "command");
    cmdline = json_print(cmd);
    assert_non_null(strstr(cmdline, "\"--listen\",\"127.0.0.1:8081\",\"--metrics-listen\",\"$(POD_IP):8081\","
                                    "\"--zoekt-url\",\"http://127.0.0.1:6070\""));
    assert_non_null(strstr(cmdline, "\"--corpus\",\"codesearch/org\""));
    assert_non_null(strstr(cmdline, "\"--max-files\",\"30\""));
    assert_non_null(strstr(cmdline, "\"--mirror-prefix\",\"github.com/example/\""));
    assert_non_null(strstr(cmdline, "\"--token-dir\",\"/etc/codesearch/tokens\""));
    free(cmdline);

    assert_string_equal(json_path_str(pod, "serviceAccountName", ""), "org-search");
    assert_int_equal(strlen(config_hash(fx.children)), 64);
    assert_string_equal(json_path_str(child(fx.children, "Service"), "spec.type", ""), "ClusterIP");
    assert_int_equal(json_int(cJSON_GetArrayItem(json_path(child(fx.children, "Service"), "spec.ports"), 0), "port", 0),
                     8080);
    fx_free(&fx);
}

static void test_cronjob(void **state)
{
    struct fixture fx;
    const cJSON *cj, *pod, *k, *vol;
    char *text;

    (void)state;
    render_fx(&fx, load_corpus());
    cj = child(fx.children, "CronJob");
    assert_string_equal(json_str(cj, "apiVersion", ""), "batch/v1");
    assert_string_equal(json_path_str(cj, "spec.schedule", ""), "30 2 * * *");
    assert_string_equal(json_path_str(cj, "spec.timeZone", ""), "Europe/Berlin");
    assert_string_equal(json_path_str(cj, "spec.concurrencyPolicy", ""), "Forbid");
    assert_int_equal(json_int(json_obj(cj, "spec"), "successfulJobsHistoryLimit", 0), 3);
    assert_int_equal(json_int(json_path(cj, "spec.jobTemplate.spec"), "activeDeadlineSeconds", 0), 14400);
    pod = json_path(cj, "spec.jobTemplate.spec.template.spec");
    check_pod_security(pod);
    k = container(pod, "indexer");
    check_container_security(k);
    assert_string_equal(cJSON_GetArrayItem(json_arr(k, "args"), 0)->valuestring, "-submodules=false");
    /* The credentials Secret is mounted by name; no secret data ever passes through the operator. */
    vol = cJSON_GetArrayItem(json_arr(pod, "volumes"), 2);
    assert_string_equal(json_path_str(vol, "secret.secretName", ""), "git-credentials");
    text = json_print(fx.children);
    assert_null(strstr(text, "\"stringData\""));
    free(text);
    fx_free(&fx);

    /* A git CA bundle is mounted by reference into the indexer, and git is pointed at it. */
    {
        cJSON *corpus = load_corpus();

        cJSON_AddItemToObject(cJSON_GetObjectItem(corpus, "spec"), "gitCABundleRef",
                              cJSON_Parse("{\"kind\":\"Secret\",\"name\":\"corp-ca\",\"key\":\"bundle.pem\"}"));
        render_fx(&fx, corpus);
        pod = json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.spec");
        k = container(pod, "indexer");
        vol = NULL;
        for (cJSON *v = json_arr(pod, "volumes")->child; v; v = v->next)
            if (strcmp(json_str(v, "name", ""), "git-ca") == 0)
                vol = v;
        assert_non_null(vol);
        assert_string_equal(json_path_str(vol, "secret.secretName", ""), "corp-ca");
        assert_string_equal(json_str(cJSON_GetArrayItem(json_path(vol, "secret.items"), 0), "key", ""), "bundle.pem");
        text = json_print(json_arr(k, "env"));
        assert_non_null(strstr(text, "\"GIT_CA_BUNDLE\",\"value\":\"/etc/codesearch/git-ca/ca.crt\""));
        free(text);
        text = json_print(json_arr(k, "volumeMounts"));
        assert_non_null(strstr(text, "\"mountPath\":\"/etc/codesearch/git-ca\""));
        free(text);
        fx_free(&fx);
    }

    /* Symbols and the stall limit keep the indexer script's defaults unless set otherwise, so only a
     * departure adds to the CronJob (no change for corpora that existed before those fields). */
    text = cronjob_indexer_env(NULL, NULL);
    assert_null(strstr(text, "SYMBOLS"));
    assert_null(strstr(text, "GIT_HTTP_LOW_SPEED_TIME"));
    free(text);
    text = cronjob_indexer_env("symbols", cJSON_CreateFalse());
    assert_non_null(strstr(text, "{\"name\":\"SYMBOLS\",\"value\":\"false\"}"));
    free(text);
    text = cronjob_indexer_env("fetchStallSeconds", cJSON_CreateNumber(60));
    assert_null(strstr(text, "GIT_HTTP_LOW_SPEED_TIME"));
    free(text);
    text = cronjob_indexer_env("fetchStallSeconds", cJSON_CreateNumber(5));
    assert_non_null(strstr(text, "{\"name\":\"GIT_HTTP_LOW_SPEED_TIME\",\"value\":\"5\"}"));
    free(text);

    /* Without spec.timeZone the CronJob has none either: the schedule runs in the controller manager's zone. */
    {
        cJSON *corpus = load_corpus();

        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(corpus, "spec"), "timeZone");
        render_fx(&fx, corpus);
        cj = child(fx.children, "CronJob");
        assert_string_equal(json_str(cj, "apiVersion", ""), "batch/v1");
        assert_null(json_path(cj, "spec.timeZone"));
        fx_free(&fx);
    }
}

/* The refresh Deployment: the nightly Job's pod (the same image, volume, credentials, flags) running
 * the script's watch mode at spec.poll.interval, one replica, none when polling is off or the corpus is
 * suspended; and the Jobs' pods stay in the full mode, unchanged. */
static const cJSON *refresh_of(const cJSON *children)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, children)
        if (strcmp(json_str(json_path(c, "metadata.labels"), API_LABEL_COMPONENT, ""), "refresh") == 0)
            return c;
    return NULL;
}

/* The refresh Deployment's replicas and POLL_INTERVAL_SECONDS (into interval) with one spec member
 * replaced. */
static int refresh_replicas_with(const char *member, const char *json, char *interval, size_t len)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    const cJSON *r, *e;
    int replicas;

    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(corpus, "spec"), member);
    cJSON_AddItemToObject(cJSON_GetObjectItem(corpus, "spec"), member, cJSON_Parse(json));
    render_fx(&fx, corpus);
    r = refresh_of(fx.children);
    assert_non_null(r);
    replicas = json_int(json_obj(r, "spec"), "replicas", -1);
    interval[0] = '\0';
    cJSON_ArrayForEach(e, json_arr(container(json_path(r, "spec.template.spec"), "indexer"), "env"))
        if (strcmp(json_str(e, "name", ""), "POLL_INTERVAL_SECONDS") == 0)
            snprintf(interval, len, "%s", json_str(e, "value", ""));
    fx_free(&fx);
    return replicas;
}

static void test_refresh_deployment(void **state)
{
    struct fixture fx;
    const cJSON *r, *pod, *k, *jk;
    char *env, *job_env, *mounts, *job_mounts, interval[32];

    (void)state;
    render_fx(&fx, load_corpus());
    r = refresh_of(fx.children);
    assert_non_null(r);
    assert_string_equal(json_str(r, "kind", ""), "Deployment");
    assert_string_equal(json_path_str(r, "metadata.name", ""), "org-refresh");
    assert_int_equal(json_int(json_obj(r, "spec"), "replicas", -1), 1);
    assert_string_equal(json_path_str(r, "spec.strategy.type", ""), "Recreate");
    assert_string_equal(json_str(json_path(r, "spec.selector.matchLabels"), API_LABEL_COMPONENT, ""), "refresh");
    /* A new script replaces the pod, which keeps the script it started with; the Jobs need no hash. */
    assert_int_equal(strlen(json_str(json_path(r, "spec.template.metadata.annotations"), API_ANN_SCRIPT_HASH, "")), 64);
    assert_null(cJSON_GetObjectItem(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.metadata.annotations"),
                                    API_ANN_SCRIPT_HASH));
    pod = json_path(r, "spec.template.spec");
    assert_string_equal(json_str(pod, "restartPolicy", ""), "Always");
    check_pod_security(pod);
    k = container(pod, "indexer");
    check_container_security(k);
    env = json_print(json_arr(k, "env"));
    assert_non_null(strstr(env, "{\"name\":\"INDEXER_MODE\",\"value\":\"watch\"}"));
    assert_non_null(strstr(env, "{\"name\":\"POLL_INTERVAL_SECONDS\",\"value\":\"300\"}"));
    assert_string_equal(cJSON_GetArrayItem(json_arr(k, "args"), 0)->valuestring, "-submodules=false");

    /* The Job's pod is the same but for the mode: the nightly run is unchanged by the refresh. */
    jk = container(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.spec"), "indexer");
    job_env = json_print(json_arr(jk, "env"));
    assert_null(strstr(job_env, "INDEXER_MODE"));
    assert_int_equal(strncmp(env, job_env, strlen(job_env) - 1), 0);
    mounts = json_print(json_arr(k, "volumeMounts"));
    job_mounts = json_print(json_arr(jk, "volumeMounts"));
    assert_string_equal(mounts, job_mounts);
    assert_string_equal(json_str(jk, "image", ""), json_str(k, "image", "!"));
    /* It waits most of the time: a small reservation, the Job's limit. */
    assert_string_equal(json_path_str(k, "resources.requests.cpu", ""), "100m");
    assert_string_equal(json_path_str(jk, "resources.requests.cpu", ""), "1");
    assert_string_equal(json_path_str(k, "resources.limits.memory", ""), json_path_str(jk, "resources.limits.memory", "!"));
    free(env);
    free(job_env);
    free(mounts);
    free(job_mounts);
    fx_free(&fx);

    assert_int_equal(refresh_replicas_with("poll", "{\"interval\":\"90s\"}", interval, sizeof(interval)), 1);
    assert_string_equal(interval, "90");
    assert_int_equal(refresh_replicas_with("poll", "{\"interval\":\"0\"}", interval, sizeof(interval)), 0);
    assert_string_equal(interval, "0");
    /* Webhooks alone still need the pod: it serves their requests. */
    {
        cJSON *corpus = load_corpus(), *spec = cJSON_GetObjectItem(corpus, "spec");

        cJSON_AddItemToObject(spec, "poll", cJSON_Parse("{\"interval\":\"0\"}"));
        cJSON_AddItemToObject(spec, "webhook", cJSON_Parse("{\"secretRef\":{\"name\":\"hooks\"}}"));
        render_fx(&fx, corpus);
        assert_int_equal(json_int(json_obj(refresh_of(fx.children), "spec"), "replicas", -1), 1);
        fx_free(&fx);
    }
    assert_int_equal(refresh_replicas_with("suspend", "true", interval, sizeof(interval)), 0);
}

/* The operator's pod settings (--corpus-image-pull-secrets, --corpus-priority-class, --corpus-pod-labels)
 * reach every pod template (search, refresh, the CronJob's), never a selector; without them nothing is
 * rendered, which the golden files (rendered without) show. */
/* The first NetworkPolicy of kind with component label component. */
static const cJSON *policy(const cJSON *children, const char *component)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, children)
        if (strcmp(json_str(c, "kind", ""), "NetworkPolicy") == 0 &&
            strcmp(json_str(json_path(c, "metadata.labels"), API_LABEL_COMPONENT, ""), component) == 0)
            return c;
    return NULL;
}

/* Whether a NetworkPolicy's podSelector (matchLabels, and In expressions) selects a pod with labels. */
static int selects(const cJSON *np, const cJSON *labels)
{
    const cJSON *kv, *e, *v;

    cJSON_ArrayForEach(kv, json_path(np, "spec.podSelector.matchLabels"))
        if (strcmp(json_str(labels, kv->string, ""), kv->valuestring) != 0)
            return 0;
    cJSON_ArrayForEach(e, json_path(np, "spec.podSelector.matchExpressions")) {
        int in = 0;

        assert_string_equal(json_str(e, "operator", ""), "In");
        cJSON_ArrayForEach(v, json_arr(e, "values"))
            in |= strcmp(json_str(labels, json_str(e, "key", ""), ""), v->valuestring) == 0;
        if (!in)
            return 0;
    }
    return 1;
}

/* The TCP ports of one egress rule, "443,22", in order. */
static void rule_ports(const cJSON *rule, const char *protocol, char *dst, size_t len)
{
    const cJSON *p;

    dst[0] = '\0';
    cJSON_ArrayForEach(p, json_arr(rule, "ports"))
        if (strcmp(json_str(p, "protocol", ""), protocol) == 0)
            snprintf(dst + strlen(dst), len - strlen(dst), "%s%lld", dst[0] ? "," : "", (long long)json_int(p, "port", -1));
}

/* The search pods take the gateway port from their namespace and the operator's; the indexer and
 * refresh pods take nothing and reach DNS and each repository URL's port; the two select exactly
 * those pods; spec.networkPolicy.from replaces the namespace default; enabled false renders neither. */
static void test_network_policies(void **state)
{
    struct spec_defaults d = {.operator_namespace = "zoekt-system"};
    struct spec_errors errs;
    struct zk_err err = {0};
    struct fixture fx;
    const cJSON *search, *indexer, *rule, *from, *egress;
    const cJSON *search_pod, *job_pod, *refresh_pod;
    char ports[128];

    (void)state;
    fx.corpus = load_corpus();
    assert_int_equal(spec_parse(fx.corpus, &d, &fx.spec, &errs), ZK_OK);
    assert_int_equal(render_children(fx.corpus, fx.spec, &fx.children, &err), ZK_OK);
    search = policy(fx.children, "search");
    indexer = policy(fx.children, "indexer");
    assert_non_null(search);
    assert_non_null(indexer);
    search_pod = json_path(child(fx.children, "Deployment"), "spec.template.metadata.labels");
    job_pod = json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.metadata.labels");
    refresh_pod = json_path(refresh_of(fx.children), "spec.template.metadata.labels");
    assert_true(selects(search, search_pod));
    assert_false(selects(search, job_pod));
    assert_false(selects(search, refresh_pod));
    assert_true(selects(indexer, job_pod));
    assert_true(selects(indexer, refresh_pod));
    assert_false(selects(indexer, search_pod));

    assert_int_equal(cJSON_GetArraySize(json_path(search, "spec.policyTypes")), 1);
    assert_int_equal(cJSON_GetArraySize(json_path(search, "spec.ingress")), 2);
    /* The connector's metrics port: the container port named metrics, from every namespace. */
    rule = cJSON_GetArrayItem(json_path(search, "spec.ingress"), 1);
    rule_ports(rule, "TCP", ports, sizeof(ports));
    {
        const cJSON *conn = container(json_path(child(fx.children, "Deployment"), "spec.template.spec"), "connector");
        const cJSON *port = cJSON_GetArrayItem(json_arr(conn, "ports"), 0);
        char want[16];

        assert_string_equal(json_str(port, "name", ""), "metrics");
        snprintf(want, sizeof(want), "%lld", (long long)json_int(port, "containerPort", -1));
        assert_string_equal(ports, want);
    }
    from = json_arr(rule, "from");
    assert_int_equal(cJSON_GetArraySize(from), 1);
    assert_non_null(json_obj(cJSON_GetArrayItem(from, 0), "namespaceSelector"));
    assert_null(json_obj(json_obj(cJSON_GetArrayItem(from, 0), "namespaceSelector"), "matchLabels"));
    rule = cJSON_GetArrayItem(json_path(search, "spec.ingress"), 0);
    rule_ports(rule, "TCP", ports, sizeof(ports));
    assert_string_equal(ports, "8080");
    from = json_arr(rule, "from");
    assert_int_equal(cJSON_GetArraySize(from), 2);
    assert_non_null(json_obj(cJSON_GetArrayItem(from, 0), "podSelector"));
    assert_null(json_obj(cJSON_GetArrayItem(from, 0), "namespaceSelector"));
    assert_string_equal(json_str(json_path(cJSON_GetArrayItem(from, 1), "namespaceSelector.matchLabels"),
                                 "kubernetes.io/metadata.name", ""), "zoekt-system");

    assert_int_equal(cJSON_GetArraySize(json_path(indexer, "spec.policyTypes")), 2);
    assert_null(json_path(indexer, "spec.ingress"));
    egress = json_path(indexer, "spec.egress");
    assert_int_equal(cJSON_GetArraySize(egress), 2);
    for (int i = 0; i < 2; i++)
        assert_null(json_arr(cJSON_GetArrayItem(egress, i), "to")); /* git hosts have no fixed address */
    rule_ports(cJSON_GetArrayItem(egress, 0), "UDP", ports, sizeof(ports));
    assert_string_equal(ports, "53");
    rule_ports(cJSON_GetArrayItem(egress, 0), "TCP", ports, sizeof(ports));
    assert_string_equal(ports, "53");
    /* Two https://github.com URLs and one user@host:path: 443 once, then 22. */
    rule_ports(cJSON_GetArrayItem(egress, 1), "TCP", ports, sizeof(ports));
    assert_string_equal(ports, "443,22");
    fx_free(&fx);

    /* The spec's peers replace the namespace default; the operator's namespace stays. */
    fx.corpus = load_corpus();
    cJSON_AddItemToObject(cJSON_GetObjectItem(fx.corpus, "spec"), "networkPolicy",
                          cJSON_Parse("{\"from\":[{\"namespaceSelector\":{\"matchLabels\":{\"team\":\"agents\"}}},"
                                      "{\"ipBlock\":{\"cidr\":\"192.0.2.0/24\"}}],"
                                      "\"metricsFrom\":[{\"namespaceSelector\":{\"matchLabels\":{\"team\":\"obs\"}}}]}"));
    assert_int_equal(spec_parse(fx.corpus, &d, &fx.spec, &errs), ZK_OK);
    assert_int_equal(render_children(fx.corpus, fx.spec, &fx.children, &err), ZK_OK);
    from = json_arr(cJSON_GetArrayItem(json_path(policy(fx.children, "search"), "spec.ingress"), 0), "from");
    assert_int_equal(cJSON_GetArraySize(from), 3);
    assert_string_equal(json_str(json_path(cJSON_GetArrayItem(from, 0), "namespaceSelector.matchLabels"), "team", ""),
                        "agents");
    assert_string_equal(json_path_str(cJSON_GetArrayItem(from, 1), "ipBlock.cidr", ""), "192.0.2.0/24");
    assert_null(json_obj(cJSON_GetArrayItem(from, 2), "podSelector"));
    from = json_arr(cJSON_GetArrayItem(json_path(policy(fx.children, "search"), "spec.ingress"), 1), "from");
    assert_int_equal(cJSON_GetArraySize(from), 1);
    assert_string_equal(json_str(json_path(cJSON_GetArrayItem(from, 0), "namespaceSelector.matchLabels"), "team", ""),
                        "obs");
    fx_free(&fx);

    /* Off: neither is rendered (the reconciler deletes those it made). */
    fx.corpus = load_corpus();
    cJSON_AddItemToObject(cJSON_GetObjectItem(fx.corpus, "spec"), "networkPolicy", cJSON_Parse("{\"enabled\":false}"));
    render_fx(&fx, fx.corpus);
    assert_null(child(fx.children, "NetworkPolicy"));
    assert_int_equal(cJSON_GetArraySize(fx.children), 10);
    fx_free(&fx);
}

/* The port each URL form connects to, which the indexer pods' egress lists; past
 * RENDER_POLICY_PORTS_MAX distinct ports, one range of every TCP port. */
static void test_policy_ports(void **state)
{
    cJSON *corpus = load_corpus(), *repos = cJSON_CreateArray();
    struct fixture fx;
    const cJSON *egress, *p;
    char url[64], ports[128];

    (void)state;
    assert_int_equal(spec_url_port("https://git.example/a/b"), 443);
    assert_int_equal(spec_url_port("https://git.example:3000/a/b"), 3000);
    assert_int_equal(spec_url_port("ssh://git@git.example:2222/a/b"), 2222);
    assert_int_equal(spec_url_port("ssh://git.example/a/b"), 22);
    assert_int_equal(spec_url_port("git@git.example:a/b.git"), 22);
    assert_int_equal(spec_url_port("file:///srv/git/a"), 0);

    /* Only file:// repositories: DNS alone. */
    cJSON_AddItemToArray(repos, cJSON_Parse("{\"url\":\"file:///srv/git/a\"}"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(corpus, "spec"), "repositories", repos);
    render_fx(&fx, corpus);
    egress = json_path(policy(fx.children, "indexer"), "spec.egress");
    assert_int_equal(cJSON_GetArraySize(egress), 1);
    fx_free(&fx);

    /* Seventeen ports: every TCP port, and still DNS apart. */
    corpus = load_corpus();
    repos = cJSON_CreateArray();
    for (int i = 0; i < 17; i++) {
        snprintf(url, sizeof(url), "https://git.example:%d/a/r%d", 3000 + i, i);
        cJSON_AddItemToArray(repos, cJSON_CreateObject());
        cJSON_AddStringToObject(cJSON_GetArrayItem(repos, i), "url", url);
    }
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(corpus, "spec"), "repositories", repos);
    render_fx(&fx, corpus);
    egress = json_path(policy(fx.children, "indexer"), "spec.egress");
    assert_int_equal(cJSON_GetArraySize(egress), 2);
    p = cJSON_GetArrayItem(json_arr(cJSON_GetArrayItem(egress, 1), "ports"), 0);
    assert_int_equal(cJSON_GetArraySize(json_arr(cJSON_GetArrayItem(egress, 1), "ports")), 1);
    assert_int_equal(json_int(p, "port", -1), 1);
    assert_int_equal(json_int(p, "endPort", -1), 65535);
    rule_ports(cJSON_GetArrayItem(egress, 0), "UDP", ports, sizeof(ports));
    assert_string_equal(ports, "53");
    fx_free(&fx);
}

static void test_pod_settings(void **state)
{
    struct zk_err err = {0};
    char **secrets = NULL;
    cJSON *labels = NULL;
    struct spec_defaults d = {0};
    struct spec_errors errs;
    struct fixture fx;
    const char *const templates[] = {"Deployment", "refresh", "CronJob"};

    (void)state;
    assert_int_equal(spec_parse_secret_names("regcred,mirror.pull", &secrets, &err), ZK_OK);
    assert_int_equal(spec_parse_pod_labels("team=search,example.com/cost-centre=42", &labels, &err), ZK_OK);
    d.image_pull_secrets = (const char *const *)secrets;
    d.priority_class = "search-high";
    d.pod_labels = labels;
    fx.corpus = load_corpus();
    assert_int_equal(spec_parse(fx.corpus, &d, &fx.spec, &errs), ZK_OK);
    assert_int_equal(render_children(fx.corpus, fx.spec, &fx.children, &err), ZK_OK);
    for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
        const cJSON *o = strcmp(templates[i], "refresh") == 0 ? refresh_of(fx.children) : child(fx.children, templates[i]);
        const cJSON *tpl = strcmp(templates[i], "CronJob") == 0 ? json_path(o, "spec.jobTemplate.spec.template")
                                                                 : json_path(o, "spec.template");
        const cJSON *pull = json_path(tpl, "spec.imagePullSecrets");

        assert_int_equal(cJSON_GetArraySize(pull), 2);
        assert_string_equal(json_str(cJSON_GetArrayItem(pull, 0), "name", ""), "regcred");
        assert_string_equal(json_str(cJSON_GetArrayItem(pull, 1), "name", ""), "mirror.pull");
        assert_string_equal(json_path_str(tpl, "spec.priorityClassName", ""), "search-high");
        assert_string_equal(json_str(json_path(tpl, "metadata.labels"), "team", ""), "search");
        assert_string_equal(json_str(json_path(tpl, "metadata.labels"), "example.com/cost-centre", ""), "42");
        /* The object's own labels and its selector are the operator's alone. */
        assert_null(json_str(json_path(o, "metadata.labels"), "team", NULL));
        assert_null(json_str(json_path(o, "spec.selector.matchLabels"), "team", NULL));
    }
    fx_free(&fx);
    spec_strv_free(secrets);
    cJSON_Delete(labels);

    /* What the flags refuse, naming the item. */
    assert_int_equal(spec_parse_secret_names("ok,Not_A_Name", &secrets, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "\"Not_A_Name\""));
    assert_int_equal(spec_parse_secret_names("a,,b", &secrets, &err), ZK_EINVAL);
    assert_int_equal(spec_parse_pod_labels("team", &labels, &err), ZK_EINVAL);
    assert_int_equal(spec_parse_pod_labels("team=a b", &labels, &err), ZK_EINVAL);
    assert_int_equal(spec_parse_pod_labels("-x=1", &labels, &err), ZK_EINVAL);
    assert_int_equal(spec_parse_pod_labels("Bad_Prefix/x=1", &labels, &err), ZK_EINVAL);
    assert_int_equal(spec_parse_pod_labels("app.kubernetes.io/component=x", &labels, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "the operator's own"));
    /* An empty value is a label's valid value; a repeated key keeps the last. */
    assert_int_equal(spec_parse_pod_labels("tier=,tier=gold", &labels, &err), ZK_OK);
    assert_string_equal(json_str(labels, "tier", ""), "gold");
    assert_int_equal(cJSON_GetArraySize(labels), 1);
    cJSON_Delete(labels);
}

/* The connector's Role, printed: one rule, on its own corpus alone. */
static char *role_rules(const struct fixture *fx)
{
    return json_print(json_arr(child(fx->children, "Role"), "rules"));
}

#define ROLE_RULE                                                                                            \
    "[{\"apiGroups\":[\"codesearch.dev\"],\"resources\":[\"codesearchcorpora\"],\"resourceNames\":[\"org\"],"

/* spec.webhook: the connector serves /hooks/push with the Secret's key, the repository list and the
 * volume's request folder, and nginx routes it there; with spec.sources too, the connector requests
 * discoveries and its Role lets it patch its own corpus for that; without a webhook nothing of this is
 * rendered (the golden files, rendered without it, stay as they were). */
static void test_webhook(void **state)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    const cJSON *pod, *k, *v;
    char *cmd, *mounts, *rules, *conf = NULL;
    struct zk_err err = {0};
    int webhook_volume = 0;

    (void)state;
    cJSON_AddItemToObject(cJSON_GetObjectItem(corpus, "spec"), "webhook",
                          cJSON_Parse("{\"secretRef\":{\"name\":\"hook-secret\"}}"));
    render_fx(&fx, corpus);
    pod = json_path(child(fx.children, "Deployment"), "spec.template.spec");
    k = container(pod, "connector");
    cmd = json_print(json_arr(k, "command"));
    assert_non_null(strstr(cmd, "\"--webhook-secret-file\",\"/etc/codesearch/webhook/secret\""));
    assert_non_null(strstr(cmd, "\"--webhook-repos-file\",\"/etc/codesearch/config/repositories.txt\""));
    assert_non_null(strstr(cmd, "\"--webhook-queue-dir\",\"/data/queue\""));
    mounts = json_print(json_arr(k, "volumeMounts"));
    assert_non_null(strstr(mounts, "{\"name\":\"data\",\"mountPath\":\"/data\"}"));
    assert_non_null(strstr(mounts, "\"mountPath\":\"/etc/codesearch/webhook\",\"readOnly\":true"));
    cJSON_ArrayForEach(v, json_arr(pod, "volumes"))
        if (strcmp(json_path_str(v, "secret.secretName", ""), "hook-secret") == 0)
            webhook_volume++;
    assert_int_equal(webhook_volume, 1);
    assert_int_equal(render_nginx_conf(fx.spec, "/tmp", &conf, &err), ZK_OK);
    assert_non_null(strstr(conf, "location = /hooks/push {"));
    assert_true(strstr(conf, "location = /hooks/push {") < strstr(conf, "location / {"));
    {
        static const char *const to_connector[] = {"location = /index-status {", "location = /auth {",
                                                   "location /mcp {", "location = /hooks/push {", NULL};

        check_connector_locations(conf, to_connector);
    }
    assert_null(strstr(conf, "@HOOKS@"));
    assert_null(strstr(cmd, "--webhook-discovery"));
    rules = role_rules(&fx);
    assert_string_equal(rules, ROLE_RULE "\"verbs\":[\"get\",\"list\",\"watch\"]}]");
    free(rules);
    free(cmd);
    free(mounts);
    free(conf);
    fx_free(&fx);

    /* With sources, the connector may ask for discoveries. */
    corpus = load_corpus();
    cJSON_AddItemToObject(cJSON_GetObjectItem(corpus, "spec"), "webhook",
                          cJSON_Parse("{\"secretRef\":{\"name\":\"hook-secret\"}}"));
    cJSON_AddItemToObject(cJSON_GetObjectItem(corpus, "spec"), "sources",
                          cJSON_Parse("[{\"host\":\"github\",\"org\":\"acme\"}]"));
    render_fx(&fx, corpus);
    cmd = json_print(json_arr(container(json_path(child(fx.children, "Deployment"), "spec.template.spec"), "connector"),
                              "command"));
    assert_non_null(strstr(cmd, "\"--webhook-discovery\""));
    rules = role_rules(&fx);
    assert_string_equal(rules, ROLE_RULE "\"verbs\":[\"get\",\"list\",\"watch\",\"patch\"]}]");
    free(rules);
    free(cmd);
    fx_free(&fx);

    render_fx(&fx, load_corpus());
    k = container(json_path(child(fx.children, "Deployment"), "spec.template.spec"), "connector");
    cmd = json_print(json_arr(k, "command"));
    assert_null(strstr(cmd, "--webhook"));
    assert_int_equal(render_nginx_conf(fx.spec, "/tmp", &conf, &err), ZK_OK);
    assert_null(strstr(conf, "/hooks/push"));
    assert_null(strstr(conf, "@HOOKS@"));
    rules = role_rules(&fx);
    assert_string_equal(rules, ROLE_RULE "\"verbs\":[\"get\",\"list\",\"watch\"]}]");
    free(rules);
    free(cmd);
    free(conf);
    fx_free(&fx);
}

/* Renders the sample corpus with one spec member replaced, and returns its config hash (a copy). */
static char *hash_with(const char *member, const char *json)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    char *h;

    if (member) {
        cJSON *spec = cJSON_GetObjectItem(corpus, "spec");

        cJSON_ReplaceItemInObject(spec, member, cJSON_Parse(json));
    }
    render_fx(&fx, corpus);
    h = strdup(config_hash(fx.children));
    fx_free(&fx);
    return h;
}

/* The PodDisruptionBudget (policy/v1) lets one search pod go at a time and selects exactly the
 * Deployment's pods. */
static void test_pdb(void **state)
{
    struct fixture fx;
    const cJSON *pdb, *dep;

    (void)state;
    render_fx(&fx, load_corpus());
    pdb = child(fx.children, "PodDisruptionBudget");
    dep = child(fx.children, "Deployment");
    assert_non_null(pdb);
    assert_string_equal(json_str(pdb, "apiVersion", ""), "policy/v1");
    assert_string_equal(json_path_str(pdb, "metadata.name", ""), json_path_str(dep, "metadata.name", "?"));
    assert_int_equal(json_int(json_obj(pdb, "spec"), "maxUnavailable", 0), 1);
    assert_null(json_path(pdb, "spec.minAvailable"));
    {
        char *a = json_print(json_path(pdb, "spec.selector")), *b = json_print(json_path(dep, "spec.selector"));

        assert_non_null(a);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    fx_free(&fx);
}

static void test_config_hash(void **state)
{
    char *base = hash_with(NULL, NULL);
    char *more = hash_with("repositories", "[{\"url\":\"https://github.com/example/api.git\"}]");
    char *branch = hash_with("repositories", "[{\"url\":\"https://github.com/example/api.git\",\"branches\":[\"dev\"]},"
                                             "{\"url\":\"https://github.com/example/web\",\"branches\":[\"main\",\"release/2.x\"]},"
                                             "{\"url\":\"git@gitlab.example.com:platform/infra.git\",\"name\":\"infra\"}]");
    char *port = hash_with("gateway", "{\"port\":9000,\"tokenSecretRef\":{\"name\":\"codesearch-tokens\"}}");
    char *sched = hash_with("schedule", "\"0 4 * * *\"");
    char *repl = hash_with("webserver", "{\"replicas\":3}");

    (void)state;
    /* The repository list is the indexer's business: editing it must not restart the search pods. */
    assert_string_equal(base, more);       /* a repository removed */
    assert_string_equal(base, branch);     /* a branch changed */
    assert_string_not_equal(base, port);   /* nginx.conf changed */
    assert_string_equal(base, sched);      /* the schedule does not touch the pods' configuration */
    assert_string_equal(base, repl);
    free(base);
    free(more);
    free(branch);
    free(port);
    free(sched);
    free(repl);
}

static int dns1035(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 63 || s[0] < 'a' || s[0] > 'z' || s[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

static void test_names(void **state)
{
    struct render_names a, b, s;
    char long1[254], long2[254], label[RENDER_NAME_MAX];

    (void)state;
    render_child_names("org", &s);
    assert_string_equal(s.pvc, "org-index");
    assert_string_equal(s.configmap, "org-indexer");
    assert_string_equal(s.deployment, "org-search");

    memset(long1, 'a', 253);
    long1[253] = '\0';
    memcpy(long2, long1, sizeof(long1));
    long2[252] = 'b';
    render_child_names(long1, &a);
    render_child_names(long2, &b);
    assert_true(dns1035(a.pvc));
    assert_true(dns1035(a.configmap));
    assert_true(dns1035(a.deployment));
    assert_true(dns1035(a.service));
    assert_true(strlen(a.service) <= 63);
    assert_true(strlen(a.cronjob) <= 52);
    assert_string_not_equal(a.service, b.service); /* same 50-character prefix, different hashes */
    assert_non_null(strstr(a.service, "-search"));

    /* Dots and a leading digit are fine in a corpus name, not in a Service name. */
    render_child_names("team.frontend", &s);
    assert_true(dns1035(s.service));
    render_child_names("1st", &s);
    assert_true(dns1035(s.service));
    assert_int_equal(s.service[0], 'c');

    render_instance_label("org", label);
    assert_string_equal(label, "org");
    render_instance_label(long1, label);
    assert_true(strlen(label) <= 63);
}

/* render_child_list names every rendered child, by kind and name, as render_children does, once each:
 * the controller looks the children up by those names to tell, without rendering, whether any of
 * them changed. */
static void check_child_names(const struct fixture *fx, const char *corpus_name)
{
    struct render_names names;
    struct render_layouts layouts;
    struct render_child list[RENDER_CHILDREN_MAX];
    int found[RENDER_CHILDREN_MAX] = {0};
    size_t n_list, i;
    const cJSON *c;
    int n = 0;

    render_child_names(corpus_name, &names);
    render_layouts(fx->corpus, fx->spec, &layouts);
    n_list = render_child_list(&names, &layouts, list);
    cJSON_ArrayForEach(c, fx->children) {
        for (i = 0; i < n_list; i++)
            if (strcmp(list[i].kind, json_str(c, "kind", "")) == 0 &&
                strcmp(list[i].name, json_path_str(c, "metadata.name", "")) == 0)
                break;
        assert_true(i < n_list);
        assert_int_equal(found[i]++, 0);
        n++;
    }
    assert_int_equal(n, 12);
    /* And the Service of the one-shard layout's shard, made only while another layout serves. */
    assert_int_equal(n_list, 13);
    for (i = 0; i < n_list; i++) {
        assert_true(dns1035(list[i].name));
        assert_string_not_equal(list[i].kind, "Job");
        assert_string_not_equal(list[i].kind, "Pod");
    }
    assert_string_not_equal(names.refresh, names.deployment);
    assert_string_not_equal(names.indexer_policy, names.search_policy);
}

static void test_child_name(void **state)
{
    struct fixture fx;

    (void)state;
    render_fx(&fx, load_corpus());
    check_child_names(&fx, json_path_str(fx.corpus, "metadata.name", ""));
    fx_free(&fx);
}

static void test_long_name_corpus(void **state)
{
    struct fixture fx;
    cJSON *corpus = load_corpus();
    char name[254];
    const cJSON *c;

    (void)state;
    memset(name, 'x', 253);
    name[253] = '\0';
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(corpus, "metadata"), "name", cJSON_CreateString(name));
    render_fx(&fx, corpus);
    check_child_names(&fx, name);
    cJSON_ArrayForEach(c, fx.children) {
        assert_true(strlen(json_path_str(c, "metadata.name", "")) <= (strcmp(json_str(c, "kind", ""), "CronJob") ? 63 : 52));
        assert_true(strlen(json_str(json_path(c, "metadata.labels"), API_LABEL_INSTANCE, "")) <= 63);
    }
    /* The Jobs the CronJob creates, their Pods and a retained PVC carry the full name in an annotation: that is how
     * the controller maps them back (api_corpus_key), since their label had to be hashed. */
    assert_string_equal(json_str(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.metadata.annotations"),
                                 API_ANN_CORPUS, ""),
                        name);
    assert_string_equal(json_str(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec.template.metadata.annotations"),
                                 API_ANN_CORPUS, ""),
                        name);
    assert_string_equal(json_str(json_path(child(fx.children, "PersistentVolumeClaim"), "metadata.annotations"),
                                 API_ANN_CORPUS, ""),
                        name);
    /* The owner reference and the Role name the corpus by its real name. */
    c = child(fx.children, "Role");
    assert_string_equal(cJSON_GetArrayItem(json_path(cJSON_GetArrayItem(json_arr(c, "rules"), 0), "resourceNames"), 0)
                            ->valuestring,
                        name);
    fx_free(&fx);
}

static void test_reindex_job(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    cJSON *j1, *j2, *j3;
    const char *n1;

    (void)state;
    render_fx(&fx, load_corpus());
    assert_int_equal(render_reindex_job(fx.corpus, fx.spec, "2026-11-29T10:00:00Z", 0, &j1, &err), ZK_OK);
    assert_int_equal(render_reindex_job(fx.corpus, fx.spec, "2026-11-29T10:00:00Z", 0, &j2, &err), ZK_OK);
    assert_int_equal(render_reindex_job(fx.corpus, fx.spec, "2026-11-29T11:00:00Z", 0, &j3, &err), ZK_OK);
    n1 = json_path_str(j1, "metadata.name", "");
    assert_string_equal(n1, json_path_str(j2, "metadata.name", ""));
    assert_string_not_equal(n1, json_path_str(j3, "metadata.name", ""));
    assert_true(strncmp(n1, "org-reindex-", 12) == 0);
    assert_string_equal(json_str(j1, "apiVersion", ""), "batch/v1");
    assert_string_equal(json_str(json_path(j1, "metadata.annotations"), API_ANN_REINDEX, ""), "2026-11-29T10:00:00Z");
    assert_int_equal(strlen(json_str(json_path(j1, "metadata.labels"), API_LABEL_REINDEX, "")), 16);
    assert_string_equal(json_str(json_path(j1, "metadata.labels"), API_LABEL_COMPONENT, ""), "indexer");
    assert_int_equal(cJSON_GetArraySize(json_path(j1, "metadata.ownerReferences")), 1);
    /* The same pod as the nightly run. */
    {
        char *a = json_print(json_path(j1, "spec"));
        char *b = json_print(json_path(child(fx.children, "CronJob"), "spec.jobTemplate.spec"));

        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    cJSON_Delete(j2);
    /* The Job that indexes a shard layout anew: the same pod, which first retires what the layout's
     * folders hold (FRESH_INDEX). */
    assert_int_equal(render_reindex_job(fx.corpus, fx.spec, "shards-3", 1, &j2, &err), ZK_OK);
    {
        const cJSON *env = json_path(cJSON_GetArrayItem(json_path(j2, "spec.template.spec.containers"), 0), "env");
        const cJSON *last = cJSON_GetArrayItem(env, cJSON_GetArraySize(env) - 1);

        assert_string_equal(json_str(last, "name", ""), "FRESH_INDEX");
        assert_string_equal(json_str(last, "value", ""), "1");
        env = json_path(cJSON_GetArrayItem(json_path(j1, "spec.template.spec.containers"), 0), "env");
        for (int i = 0; i < cJSON_GetArraySize(env); i++)
            assert_string_not_equal(json_str(cJSON_GetArrayItem(env, i), "name", ""), "FRESH_INDEX");
    }
    cJSON_Delete(j2);
    assert_int_equal(render_reindex_job(fx.corpus, fx.spec, "", 0, &j2, &err), ZK_EINVAL);
    assert_null(j2);
    cJSON_Delete(j1);
    cJSON_Delete(j3);
    fx_free(&fx);
}

static void test_invalid_corpus(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    cJSON *out = NULL;

    (void)state;
    render_fx(&fx, load_corpus());
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(fx.corpus, "metadata"), "uid");
    assert_int_equal(render_children(fx.corpus, fx.spec, &out, &err), ZK_EINVAL);
    assert_null(out);
    assert_non_null(strstr(err.msg, "uid"));
    fx_free(&fx);
}

static void test_nginx_conf(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    char *conf;

    (void)state;
    render_fx(&fx, load_corpus());
    assert_int_equal(render_nginx_conf(fx.spec, "/run/x", &conf, &err), ZK_OK);
    assert_non_null(strstr(conf, "listen 8080;"));
    assert_non_null(strstr(conf, "pid /run/x/nginx.pid;"));
    assert_non_null(strstr(conf, "auth_request /auth;"));
    assert_null(strstr(conf, "@PORT@"));
    assert_null(strstr(conf, "@RUN_DIR@"));
    assert_null(strstr(conf, "@AUTH@"));
    {
        /* The connector's /metrics is for Prometheus on its own port: no location of the gateway reaches
         * it (a /metrics goes to zoekt-webserver, behind the bearer check, like any other path). */
        static const char *const to_connector[] = {"location = /index-status {", "location = /auth {",
                                                   "location /mcp {", NULL};

        check_connector_locations(conf, to_connector);
        assert_null(strstr(conf, "location = /metrics"));
    }
    free(conf);
    free(fx.spec->gateway.tokens_secret);
    fx.spec->gateway.tokens_secret = NULL;
    fx.spec->gateway.port = 9999;
    assert_int_equal(render_nginx_conf(fx.spec, "/tmp", &conf, &err), ZK_OK);
    assert_null(strstr(conf, "auth_request /auth;"));
    assert_non_null(strstr(conf, "listen 9999;"));
    free(conf);
    fx_free(&fx);
}

static void test_repos_list(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    char *list;

    (void)state;
    render_fx(&fx, load_corpus());
    assert_int_equal(render_repos_list(fx.spec, &list, &err), ZK_OK);
    /* github.com's kind is inferred; HEAD holds the branches' place before the code host's fields. */
    assert_non_null(strstr(list, "\ngithub.com/example/api https://github.com/example/api.git HEAD github "
                                 "https://github.com/example/api\n"));
    assert_non_null(strstr(list, "\ngithub.com/example/web https://github.com/example/web main,release/2.x github "
                                 "https://github.com/example/web\n"));
    assert_non_null(strstr(list, "\ninfra git@gitlab.example.com:platform/infra.git HEAD gitlab "
                                 "https://gitlab.example.com/platform/infra\n"));
    free(list);
    fx_free(&fx);
}

/* The YAML stream parses back into 8 documents, with strings that look like numbers kept strings. */
static void test_yaml_parses(void **state)
{
    struct fixture fx;
    struct zk_err err = {0};
    yaml_parser_t p;
    yaml_event_t ev;
    char *yaml;
    int docs = 0, done = 0, quoted_port = 0;
    char prev[64] = "";

    (void)state;
    render_fx(&fx, load_corpus());
    assert_int_equal(render_yaml(fx.children, &yaml, &err), ZK_OK);
    assert_true(strncmp(yaml, "---\napiVersion: v1\nkind: PersistentVolumeClaim\n", 47) == 0);
    assert_non_null(strstr(yaml, "- \"30\"\n")); /* --max-files 30 stays a string */
    assert_non_null(strstr(yaml, "  indexer.sh: |\n    #!/bin/sh\n"));
    assert_int_equal(yaml_parser_initialize(&p), 1);
    yaml_parser_set_input_string(&p, (const unsigned char *)yaml, strlen(yaml));
    while (!done) {
        assert_int_equal(yaml_parser_parse(&p, &ev), 1);
        if (ev.type == YAML_DOCUMENT_START_EVENT)
            docs++;
        if (ev.type == YAML_SCALAR_EVENT) {
            if (strcmp(prev, "containerPort") == 0)
                quoted_port = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
            snprintf(prev, sizeof(prev), "%s", (const char *)ev.data.scalar.value);
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    assert_int_equal(docs, 12);
    assert_false(quoted_port); /* numbers stay numbers */
    free(yaml);
    fx_free(&fx);
}

static int count_kind(const cJSON *children, const char *kind)
{
    const cJSON *c;
    int n = 0;

    cJSON_ArrayForEach(c, children)
        n += strcmp(json_str(c, "kind", ""), kind) == 0;
    return n;
}

/* The corpus fixture with spec.webserver.shards and, when serving > 0, status.servingShards. */
static cJSON *sharded_corpus(int shards, int serving)
{
    cJSON *corpus = load_corpus(), *spec = cJSON_GetObjectItem(corpus, "spec"), *ws, *st;

    ws = cJSON_GetObjectItem(spec, "webserver");
    if (!ws)
        ws = cJSON_AddObjectToObject(spec, "webserver");
    cJSON_AddNumberToObject(ws, "shards", shards);
    if (serving > 0) {
        cJSON_DeleteItemFromObject(corpus, "status");
        st = cJSON_AddObjectToObject(corpus, "status");
        cJSON_AddNumberToObject(st, "observedGeneration", 1);
        cJSON_AddNumberToObject(st, "servingShards", serving);
    }
    return corpus;
}

/* The command-line value after flag in a container, or NULL. */
static const char *flag_value(const cJSON *container, const char *flag)
{
    const cJSON *a, *cmd = cJSON_GetObjectItem(container, "command");

    cJSON_ArrayForEach(a, cmd)
        if (strcmp(a->valuestring, flag) == 0 && a->next)
            return a->next->valuestring;
    return NULL;
}

static const cJSON *container_named(const cJSON *deployment, const char *name)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, json_path(deployment, "spec.template.spec.containers"))
        if (strcmp(json_str(c, "name", ""), name) == 0)
            return c;
    return NULL;
}

/* A new corpus of three shards: three Deployments, each serving its own folder and asking the other
 * two through their Services; an Indexed Job of three pods; the assignment in the ConfigMap. */
static void test_three_shards(void **state)
{
    struct fixture fx;
    char name[64], want[256];
    const cJSON *d, *svc, *conn, *zoekt, *cron, *cm, *pdb, *env;
    const char *list;

    (void)state;
    render_fx(&fx, sharded_corpus(3, 0));
    assert_null(named(fx.children, "Deployment", "org-search"));
    assert_int_equal(count_kind(fx.children, "Deployment"), 4); /* and the refresh Deployment */
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof(name), "org-search-3-%d", k);
        d = named(fx.children, "Deployment", name);
        svc = named(fx.children, "Service", name);
        assert_non_null(d);
        assert_non_null(svc);
        snprintf(want, sizeof(want), "%d", k);
        assert_string_equal(json_str(json_path(d, "spec.selector.matchLabels"), API_LABEL_SHARD, ""), want);
        assert_string_equal(json_str(json_path(d, "spec.template.metadata.labels"), API_LABEL_SHARD, ""), want);
        assert_string_equal(json_str(json_path(d, "spec.template.metadata.labels"), API_LABEL_SHARDS, ""), "3");
        assert_string_equal(json_str(json_path(svc, "spec.selector"), API_LABEL_SHARD, ""), want);
        zoekt = container_named(d, "zoekt-webserver");
        snprintf(want, sizeof(want), "index-shards/3/%d", k);
        assert_string_equal(json_str(cJSON_GetArrayItem(json_path(zoekt, "volumeMounts"), 0), "subPath", ""), want);
        /* Its own shard on the loopback, the others through their gateways, in shard order. */
        conn = container_named(d, "connector");
        snprintf(want, sizeof(want), "%s,%s,%s",
                 k == 0 ? "http://127.0.0.1:6070" : "http://org-search-3-0.codesearch.svc:8080",
                 k == 1 ? "http://127.0.0.1:6070" : "http://org-search-3-1.codesearch.svc:8080",
                 k == 2 ? "http://127.0.0.1:6070" : "http://org-search-3-2.codesearch.svc:8080");
        assert_string_equal(flag_value(conn, "--shard-urls"), want);
    }
    /* The agents' Service: a new corpus serves its spec's layout from the start. */
    svc = named(fx.children, "Service", "org-search");
    assert_non_null(svc);
    pdb = named(fx.children, "PodDisruptionBudget", "org-search-3");
    assert_non_null(pdb);
    assert_string_equal(json_str(json_path(pdb, "spec.selector.matchLabels"), API_LABEL_SHARDS, ""), "3");
    cron = child(fx.children, "CronJob");
    assert_string_equal(json_path_str(cron, "spec.jobTemplate.spec.completionMode", ""), "Indexed");
    assert_int_equal(json_int(json_path(cron, "spec.jobTemplate.spec"), "completions", 0), 3);
    assert_int_equal(json_int(json_path(cron, "spec.jobTemplate.spec"), "parallelism", 0), 3);
    env = json_path(cJSON_GetArrayItem(json_path(cron, "spec.jobTemplate.spec.template.spec.containers"), 0), "env");
    {
        const cJSON *e;
        int shards_env = 0;

        cJSON_ArrayForEach(e, env)
            shards_env += strcmp(json_str(e, "name", ""), "SHARDS") == 0 && strcmp(json_str(e, "value", ""), "3") == 0;
        assert_int_equal(shards_env, 1);
    }
    /* Every repository once in the assignment, in the shard shard_of gives it. */
    cm = child(fx.children, "ConfigMap");
    list = json_str(json_obj(cm, "data"), RENDER_SHARDS_KEY, NULL);
    assert_non_null(list);
    for (int i = 0; i < fx.spec->nrepos; i++) {
        snprintf(want, sizeof(want), "\n%d %s\n", shard_of(fx.spec->repos[i].name, 3), fx.spec->repos[i].name);
        assert_non_null(strstr(list, want));
    }
    fx_free(&fx);
}

/* Moving from one shard to three: the old layout keeps serving (the Service selects it by label) while
 * the new one is rendered beside it; once three serve, the old one is no longer rendered. */
static void test_layout_move(void **state)
{
    struct fixture fx;
    const cJSON *svc;

    (void)state;
    render_fx(&fx, sharded_corpus(3, 1));
    assert_non_null(named(fx.children, "Deployment", "org-search"));
    assert_non_null(named(fx.children, "Deployment", "org-search-3-2"));
    assert_non_null(named(fx.children, "PodDisruptionBudget", "org-search"));
    assert_non_null(named(fx.children, "PodDisruptionBudget", "org-search-3"));
    svc = named(fx.children, "Service", "org-search");
    assert_string_equal(json_str(json_path(svc, "spec.selector"), API_LABEL_SHARDS, ""), "1");
    assert_null(named(fx.children, "Service", "org-search-1-0"));
    fx_free(&fx);

    render_fx(&fx, sharded_corpus(3, 3));
    assert_null(named(fx.children, "Deployment", "org-search"));
    assert_null(named(fx.children, "PodDisruptionBudget", "org-search"));
    svc = named(fx.children, "Service", "org-search");
    assert_string_equal(json_str(json_path(svc, "spec.selector"), API_LABEL_SHARDS, ""), "3");
    fx_free(&fx);

    /* Back to one: the one-shard layout gets a Service of its own while it is built, for its
     * /index-status. */
    render_fx(&fx, sharded_corpus(1, 3));
    assert_non_null(named(fx.children, "Deployment", "org-search"));
    assert_non_null(named(fx.children, "Service", "org-search-1-0"));
    assert_non_null(named(fx.children, "Deployment", "org-search-3-0"));
    svc = named(fx.children, "Service", "org-search");
    assert_string_equal(json_str(json_path(svc, "spec.selector"), API_LABEL_SHARDS, ""), "3");
    fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_order_labels_owners),
        cmocka_unit_test(test_pvc_delete_policy),
        cmocka_unit_test(test_existing_claim),
        cmocka_unit_test(test_deployment),
        cmocka_unit_test(test_refresh_deployment),
        cmocka_unit_test(test_pod_settings),
        cmocka_unit_test(test_network_policies),
        cmocka_unit_test(test_policy_ports),
        cmocka_unit_test(test_webhook),
        cmocka_unit_test(test_cronjob),
        cmocka_unit_test(test_pdb),
        cmocka_unit_test(test_config_hash),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_child_name),
        cmocka_unit_test(test_long_name_corpus),
        cmocka_unit_test(test_reindex_job),
        cmocka_unit_test(test_invalid_corpus),
        cmocka_unit_test(test_nginx_conf),
        cmocka_unit_test(test_repos_list),
        cmocka_unit_test(test_yaml_parses),
        cmocka_unit_test(test_three_shards),
        cmocka_unit_test(test_layout_move),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
