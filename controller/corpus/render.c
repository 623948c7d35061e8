/* render.c: see render.h.
 *
 * Objects are built with cJSON in a fixed member order, so the same input always prints to the same
 * bytes. They are built through lib/jb, which records a member that could not be added (a value the
 * spec left NULL) rather than having it checked after every member: the builders stay readable as the
 * manifests they describe, and the entry points turn such a failure into ZK_EINVAL. A partially built
 * object is never returned, since applying it would remove the missing fields. Memory runs out only by
 * ending the process (lib/mem.h). */
#include "controller/corpus/render.h"

#include "buf.h"
#include "controller/assets/assets.h"
#include "jb.h"
#include "json.h"
#include "mem.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define POD_UID 65532          /* the conventional "nonroot" uid; no image here needs a fixed one */
#define ZOEKT_LISTEN "127.0.0.1:6070"
#define CONNECTOR_LISTEN "127.0.0.1:8081"
/* The connector's /metrics on the pod's address, for Prometheus (a PodMonitor selects the port by its
 * name): the front agents use listens on the loopback, which nothing outside the pod reaches, and nginx
 * routes no /metrics to it. The port is the loopback front's own, on another address, so no port is
 * taken that spec.gateway.port could want (6070 and 8081 are refused there already). The kubelet
 * expands $(POD_IP) in the command from the connector's env. */
#define CONNECTOR_METRICS_PORT 8081
#define CONNECTOR_METRICS_LISTEN "$(POD_IP):8081"
#define CONFIG_MAX (1u << 20)  /* a ConfigMap holds at most 1 MiB */
#define WEBHOOK_PATH_TEXT "/hooks/push" /* the connector's route (connector/webhook.h) */

/* ---- names and labels ----------------------------------------------------------------------- */

static void sha256_hex(const void *data, size_t len, char *hex, size_t hexlen)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0, i;

    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    for (i = 0; i < mdlen && 2 * i + 2 < hexlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* <corpus><suffix> when that is a DNS-1035 label of at most max characters (a Service name must be a
 * DNS-1035 label, the strictest rule of the children's; a CronJob name at most 52 characters, since its
 * Jobs append 11); else a cut-down, dot-free prefix, "-", 8 hex digits of SHA-256(corpus name), then
 * the suffix, so distinct corpora never collide. */
static void child_name(const char *corpus, const char *suffix, size_t max, char *dst)
{
    size_t n = strlen(corpus), sl = strlen(suffix), i = 0, k, keep;
    int plain = n + sl <= max && corpus[0] >= 'a' && corpus[0] <= 'z' && !strchr(corpus, '.');
    char hash[65];

    if (plain) {
        memcpy(dst, corpus, n);
        memcpy(dst + n, suffix, sl + 1);
        return;
    }
    sha256_hex(corpus, n, hash, sizeof(hash));
    keep = max - sl - 9;
    if (keep > n)
        keep = n;
    if (!(corpus[0] >= 'a' && corpus[0] <= 'z'))
        dst[i++] = 'c';
    for (k = 0; k < keep && i < keep; k++)
        dst[i++] = corpus[k] == '.' ? '-' : corpus[k];
    while (i > 0 && dst[i - 1] == '-')
        i--;
    snprintf(dst + i, RENDER_NAME_MAX - i, "%s%.8s%s", i ? "-" : "", hash, suffix);
}

#define NAME_MAX_LABEL 63
#define NAME_MAX_CRONJOB 52

void render_child_names(const char *corpus_name, struct render_names *names)
{
    child_name(corpus_name, "-index", NAME_MAX_LABEL, names->pvc);
    child_name(corpus_name, "-indexer", NAME_MAX_LABEL, names->configmap);
    child_name(corpus_name, "-indexer", NAME_MAX_CRONJOB, names->cronjob);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->deployment);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->service);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->serviceaccount);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->role);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->rolebinding);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->pdb);
    child_name(corpus_name, "-refresh", NAME_MAX_LABEL, names->refresh);
    child_name(corpus_name, "-search", NAME_MAX_LABEL, names->search_policy);
    child_name(corpus_name, "-indexer", NAME_MAX_LABEL, names->indexer_policy);
}

/* The shard layout the search Service serves (render.h): status.servingShards; else the spec's for a
 * corpus that has never had a status (it is new), and one shard for one that has (it predates sharding). */
static int serving_shards(const cJSON *corpus, const struct corpus_spec *spec, int *recorded)
{
    const cJSON *status = json_obj(corpus, "status");
    long long v = json_int(status, "servingShards", 0);

    *recorded = v >= 1 && v <= SHARD_MAX;
    if (*recorded)
        return (int)v;
    return cJSON_GetObjectItemCaseSensitive(status, "observedGeneration") ? 1 : spec->webserver.shards;
}

void render_layouts(const cJSON *corpus, const struct corpus_spec *spec, struct render_layouts *out)
{
    const char *name = json_path_str(corpus, "metadata.name", "");
    struct render_names names;
    char suffix[32];

    memset(out, 0, sizeof(*out));
    render_child_names(name, &names);
    out->serving = serving_shards(corpus, spec, &out->recorded);
    out->target = spec->webserver.shards;
    out->shards[out->n++] = out->serving;
    if (out->recorded && out->target != out->serving)
        out->shards[out->n++] = out->target;
    for (int i = 0; i < out->n; i++) {
        int n = out->shards[i];

        for (int k = 0; k < n; k++) {
            snprintf(suffix, sizeof(suffix), "-search-%d-%d", n, k);
            child_name(name, suffix, NAME_MAX_LABEL, out->shard[i][k]);
        }
        snprintf(suffix, sizeof(suffix), "-search-%d", n);
        if (n == 1)
            memcpy(out->pdb[i], names.pdb, sizeof(out->pdb[i]));
        else
            child_name(name, suffix, NAME_MAX_LABEL, out->pdb[i]);
    }
}

size_t render_child_list(const struct render_names *names, const struct render_layouts *layouts,
                         struct render_child out[RENDER_CHILDREN_MAX])
{
    size_t n = 0;
    const struct render_child children[] = {
        {"PersistentVolumeClaim", names->pvc}, {"ConfigMap", names->configmap},
        {"ServiceAccount", names->serviceaccount}, {"Role", names->role},
        {"RoleBinding", names->rolebinding}, {"NetworkPolicy", names->search_policy},
        {"NetworkPolicy", names->indexer_policy}, {"Service", names->service},
        {"Deployment", names->deployment}, {"PodDisruptionBudget", names->pdb},
        {"CronJob", names->cronjob}, {"Deployment", names->refresh},
    };
    _Static_assert(sizeof(children) / sizeof(children[0]) == 12, "one entry per child of every corpus");

    memcpy(out, children, sizeof(children));
    n = sizeof(children) / sizeof(children[0]);
    /* A layout's Deployments, the Services of their shards and its budget, beyond the one-shard
     * layout's above (render.h says which exist; naming one that does not costs only a cache lookup). */
    for (int i = 0; i < layouts->n; i++) {
        int shards = layouts->shards[i];

        for (int k = 0; k < shards; k++) {
            if (shards > 1)
                out[n++] = (struct render_child){"Deployment", layouts->shard[i][k]};
            out[n++] = (struct render_child){"Service", layouts->shard[i][k]};
        }
        if (shards > 1)
            out[n++] = (struct render_child){"PodDisruptionBudget", layouts->pdb[i]};
    }
    return n;
}

void render_instance_label(const char *corpus_name, char *dst)
{
    char hash[65];
    size_t n = strlen(corpus_name);

    /* Corpus names are DNS subdomains, which are valid label values up to 63 characters. */
    if (n <= 63) {
        snprintf(dst, RENDER_NAME_MAX, "%s", corpus_name);
        return;
    }
    sha256_hex(corpus_name, n, hash, sizeof(hash));
    n = 54;
    while (n > 0 && (corpus_name[n - 1] == '-' || corpus_name[n - 1] == '.'))
        n--;
    snprintf(dst, RENDER_NAME_MAX, "%.*s-%.8s", (int)n, corpus_name, hash);
}

/* ---- building blocks ------------------------------------------------------------------------ */

struct rctx {
    const char *name, *ns, *uid;
    char instance[RENDER_NAME_MAX];
    struct render_names names;
    struct render_layouts layouts;
    const struct corpus_spec *spec;
    struct jb *b; /* the builder of the current render */
};

/* One search shard: shard k of layout i of c->layouts. */
struct shard_ref {
    int layout, k;
};

static cJSON *labels(const struct rctx *c, const char *component)
{
    cJSON *l = jb_object(c->b);

    jb_add_str(c->b, l, API_LABEL_NAME, API_APP_NAME);
    jb_add_str(c->b, l, API_LABEL_INSTANCE, c->instance);
    jb_add_str(c->b, l, API_LABEL_COMPONENT, component);
    jb_add_str(c->b, l, API_LABEL_MANAGED_BY, API_MANAGER);
    return l;
}

/* A pod template's labels: the object's, and the operator's --corpus-pod-labels (which never name the
 * app.kubernetes.io/ keys, so they cannot change what a selector matches). */
static cJSON *pod_labels(const struct rctx *c, const char *component)
{
    cJSON *l = labels(c, component);
    const cJSON *kv;

    cJSON_ArrayForEach(kv, c->spec->pods.labels)
        jb_add_str(c->b, l, kv->string, kv->valuestring);
    return l;
}

/* The labels a selector matches: managed-by is left out so a selector never depends on who manages. */
static cJSON *selector_labels(const struct rctx *c, const char *component)
{
    cJSON *l = jb_object(c->b);

    jb_add_str(c->b, l, API_LABEL_NAME, API_APP_NAME);
    jb_add_str(c->b, l, API_LABEL_INSTANCE, c->instance);
    jb_add_str(c->b, l, API_LABEL_COMPONENT, component);
    return l;
}

/* The labels that select the search pods of a layout of n shards, and of its shard k when k >= 0 (only
 * in a layout of more than one, whose pods carry their shard). */
static cJSON *layout_labels(const struct rctx *c, int n, int k)
{
    cJSON *l = selector_labels(c, "search");
    char v[16];

    snprintf(v, sizeof(v), "%d", n);
    jb_add_str(c->b, l, API_LABEL_SHARDS, v);
    if (n > 1 && k >= 0) {
        snprintf(v, sizeof(v), "%d", k);
        jb_add_str(c->b, l, API_LABEL_SHARD, v);
    }
    return l;
}

static cJSON *owner_refs(const struct rctx *c)
{
    cJSON *arr = jb_array(c->b), *o = jb_object(c->b);

    jb_add_str(c->b, o, "apiVersion", API_GROUP_VERSION);
    jb_add_str(c->b, o, "kind", API_KIND);
    jb_add_str(c->b, o, "name", c->name);
    jb_add_str(c->b, o, "uid", c->uid);
    jb_add_bool(c->b, o, "controller", 1);
    jb_add_bool(c->b, o, "blockOwnerDeletion", 1);
    jb_push(c->b, arr, o);
    return arr;
}

/* A new object {apiVersion, kind, metadata{name, namespace, labels, ownerReferences}}. */
static cJSON *new_object(const struct rctx *c, const char *api, const char *kind, const char *name,
                         const char *component, int owned)
{
    cJSON *o = jb_object(c->b), *md;

    jb_add_str(c->b, o, "apiVersion", api);
    jb_add_str(c->b, o, "kind", kind);
    md = jb_add_obj(c->b, o, "metadata");
    jb_add_str(c->b, md, "name", name);
    jb_add_str(c->b, md, "namespace", c->ns);
    jb_add(c->b, md, "labels", labels(c, component));
    if (owned)
        jb_add(c->b, md, "ownerReferences", owner_refs(c));
    return o;
}

static cJSON *strv(struct jb *b, const char *const *v)
{
    cJSON *arr = jb_array(b);

    for (; v && *v; v++)
        jb_push(b, arr, jb_string(b, *v));
    return arr;
}

static cJSON *resources(struct jb *b, const cJSON *given, const char *req_cpu, const char *req_mem, const char *lim_mem)
{
    cJSON *r, *req, *lim;

    if (given)
        return cJSON_Duplicate(given, 1);
    r = jb_object(b);
    req = jb_add_obj(b, r, "requests");
    jb_add_str(b, req, "cpu", req_cpu);
    jb_add_str(b, req, "memory", req_mem);
    lim = jb_add_obj(b, r, "limits");
    jb_add_str(b, lim, "memory", lim_mem);
    return r;
}

static cJSON *container_security(struct jb *b)
{
    cJSON *s = jb_object(b), *caps;
    static const char *const drop[] = {"ALL", NULL};

    jb_add_bool(b, s, "allowPrivilegeEscalation", 0);
    jb_add_bool(b, s, "readOnlyRootFilesystem", 1);
    caps = jb_add_obj(b, s, "capabilities");
    jb_add(b, caps, "drop", strv(b, drop));
    return s;
}

static cJSON *pod_security(struct jb *b)
{
    cJSON *s = jb_object(b), *sec;

    jb_add_bool(b, s, "runAsNonRoot", 1);
    jb_add_num(b, s, "runAsUser", POD_UID);
    jb_add_num(b, s, "runAsGroup", POD_UID);
    /* The group owns what the pods write on the shared volume, so the indexer and the webserver can
     * both use it. OnRootMismatch keeps a large volume from being walked at every start. */
    jb_add_num(b, s, "fsGroup", POD_UID);
    jb_add_str(b, s, "fsGroupChangePolicy", "OnRootMismatch");
    sec = jb_add_obj(b, s, "seccompProfile");
    jb_add_str(b, sec, "type", "RuntimeDefault");
    return s;
}

static cJSON *mount(struct jb *b, const char *volume, const char *path, const char *sub_path, int read_only)
{
    cJSON *m = jb_object(b);

    jb_add_str(b, m, "name", volume);
    jb_add_str(b, m, "mountPath", path);
    if (sub_path)
        jb_add_str(b, m, "subPath", sub_path);
    if (read_only)
        jb_add_bool(b, m, "readOnly", 1);
    return m;
}

static cJSON *env_var(struct jb *b, const char *name, const char *value)
{
    cJSON *e = jb_object(b);

    jb_add_str(b, e, "name", name);
    jb_add_str(b, e, "value", value);
    return e;
}

static const char *claim_name(const struct rctx *c)
{
    return c->spec->storage.existing_claim ? c->spec->storage.existing_claim : c->names.pvc;
}

static cJSON *volume_pvc(const struct rctx *c)
{
    cJSON *v = jb_object(c->b), *p;

    jb_add_str(c->b, v, "name", "data");
    p = jb_add_obj(c->b, v, "persistentVolumeClaim");
    jb_add_str(c->b, p, "claimName", claim_name(c));
    return v;
}

/* A ConfigMap volume projecting only the given keys. */
static cJSON *volume_config(const struct rctx *c, const char *const *keys)
{
    cJSON *v = jb_object(c->b), *cm, *items;

    jb_add_str(c->b, v, "name", "config");
    cm = jb_add_obj(c->b, v, "configMap");
    jb_add_str(c->b, cm, "name", c->names.configmap);
    items = jb_add_arr(c->b, cm, "items");
    for (; *keys; keys++) {
        cJSON *it = jb_object(c->b);

        jb_add_str(c->b, it, "key", *keys);
        jb_add_str(c->b, it, "path", *keys);
        jb_push(c->b, items, it);
    }
    return v;
}

/* A Secret volume, mounted by reference: the operator never reads or copies the Secret. */
static cJSON *volume_secret(struct jb *b, const char *volume, const char *secret)
{
    cJSON *v = jb_object(b), *s;

    jb_add_str(b, v, "name", volume);
    s = jb_add_obj(b, v, "secret");
    jb_add_str(b, s, "secretName", secret);
    jb_add_num(b, s, "defaultMode", 0440);
    return v;
}

/* The git CA bundle: one key of a ConfigMap or Secret, always at the same path in the pod. */
static cJSON *volume_git_ca(struct jb *b, const struct corpus_spec *s)
{
    cJSON *v = jb_object(b), *src, *it;

    jb_add_str(b, v, "name", "git-ca");
    src = jb_add_obj(b, v, s->git_ca.is_secret ? "secret" : "configMap");
    jb_add_str(b, src, s->git_ca.is_secret ? "secretName" : "name", s->git_ca.name);
    it = jb_object(b);
    jb_add_str(b, it, "key", s->git_ca.key);
    jb_add_str(b, it, "path", RENDER_GIT_CA_FILE);
    jb_push(b, jb_add_arr(b, src, "items"), it);
    jb_add_num(b, src, "defaultMode", 0444);
    return v;
}

static cJSON *volume_empty(struct jb *b, const char *volume)
{
    cJSON *v = jb_object(b);

    jb_add_str(b, v, "name", volume);
    jb_add_obj(b, v, "emptyDir");
    return v;
}

/* Node placement shared by the search pods and the indexer pods: both run the zoekt image, so both
 * need the architecture it was built for. */
/* What every corpus pod needs on this cluster, from the operator's flags: the Secrets its images are
 * pulled with and its PriorityClass. Nothing is rendered without them, so corpora keep the pods they had. */
static void add_pod_settings(const struct rctx *c, cJSON *pod)
{
    const char *const *secret = c->spec->pods.image_pull_secrets;

    if (secret && *secret) {
        cJSON *list = jb_add_arr(c->b, pod, "imagePullSecrets");

        for (; *secret; secret++) {
            cJSON *ref = jb_object(c->b);

            jb_add_str(c->b, ref, "name", *secret);
            jb_push(c->b, list, ref);
        }
    }
    if (c->spec->pods.priority_class)
        jb_add_str(c->b, pod, "priorityClassName", c->spec->pods.priority_class);
}

static void add_placement(const struct rctx *c, cJSON *pod)
{
    cJSON *sel = jb_add_obj(c->b, pod, "nodeSelector");
    const cJSON *kv;

    jb_add_str(c->b, sel, "kubernetes.io/arch", c->spec->webserver.architecture);
    cJSON_ArrayForEach(kv, c->spec->webserver.node_selector)
        jb_add_str(c->b, sel, kv->string, kv->valuestring);
    if (c->spec->webserver.tolerations)
        jb_add(c->b, pod, "tolerations", cJSON_Duplicate(c->spec->webserver.tolerations, 1));
}

/* ---- configuration files -------------------------------------------------------------------- */

int render_repos_list(const struct corpus_spec *spec, char **list, struct zk_err *err)
{
    struct buf b;
    int i, rc;

    buf_init(&b, CONFIG_MAX);
    rc = buf_puts(&b, "# name url [branches, comma-separated, or HEAD for the remote HEAD [code-host-kind web-url]]. "
                      "Written by zoekt-operator.\n");
    for (i = 0; rc == ZK_OK && i < spec->nrepos; i++) {
        const struct corpus_repo *r = &spec->repos[i];
        char **br;

        rc = buf_printf(&b, "%s %s", r->name, r->url);
        for (br = r->branches; rc == ZK_OK && br && *br; br++)
            rc = buf_printf(&b, "%c%s", br == r->branches ? ' ' : ',', *br);
        /* The fields are positional: HEAD, which the indexer reads as the remote HEAD whether written
         * or left out, keeps the code host's two in their place. */
        if (rc == ZK_OK && r->web_url)
            rc = buf_printf(&b, "%s %s %s", r->branches && *r->branches ? "" : " HEAD", r->code_host, r->web_url);
        if (rc == ZK_OK)
            rc = buf_putc(&b, '\n');
    }
    if (rc != ZK_OK)
        return zk_err_set(err, rc, "rendering the repository list: %s", zk_strerror(rc));
    *list = buf_steal(&b);
    return ZK_OK;
}

/* The target layout's assignment for indexer.sh (RENDER_SHARDS_KEY): "<shard> <name>" per repository,
 * so that the script, which cannot compute shard_of, indexes each where its shard serves it. */
static int render_shards_list(const struct corpus_spec *spec, char **list, struct zk_err *err)
{
    int n = spec->webserver.shards, rc;
    struct buf b;

    buf_init(&b, CONFIG_MAX);
    rc = buf_printf(&b, "# shards: %d. Written by zoekt-operator: the search shard of each repository of %s.\n", n,
                    RENDER_REPOS_KEY);
    for (int i = 0; rc == ZK_OK && i < spec->nrepos; i++)
        rc = buf_printf(&b, "%d %s\n", shard_of(spec->repos[i].name, n), spec->repos[i].name);
    if (rc != ZK_OK)
        return zk_err_set(err, rc, "rendering the shard list: %s", zk_strerror(rc));
    *list = buf_steal(&b);
    return ZK_OK;
}

int render_nginx_conf(const struct corpus_spec *spec, const char *run_dir, char **conf, struct zk_err *err)
{
    const char *p = ASSETS_NGINX_CONF, *end = p + ASSETS_NGINX_CONF_LEN;
    char port[16];
    const char *auth = spec->gateway.tokens_secret
                           ? "auth_request /auth;"
                           : "# open: spec.gateway.tokenSecretRef is unset, so no bearer token is required";
    /* With spec.webhook, /hooks/push goes to the connector without the bearer check: the deliveries
     * carry the host's proof instead, which the connector checks. Without it the placeholder expands
     * to nothing, so a corpus without webhooks keeps its nginx.conf byte for byte (and its search pods,
     * whose template hashes it). */
    const char *hooks = spec->webhook_secret
                            ? "location = " WEBHOOK_PATH_TEXT " {\n"
                              "            limit_except POST { deny all; }\n"
                              "            client_max_body_size 1m;\n"
                              "            proxy_pass http://connector;\n"
                              "        }\n\n        "
                            : "";
    struct buf b;
    int rc = ZK_OK;

    snprintf(port, sizeof(port), "%d", spec->gateway.port);
    buf_init(&b, CONFIG_MAX);
    while (rc == ZK_OK && p < end) {
        const char *at = memchr(p, '@', (size_t)(end - p));
        const char *val = NULL;
        size_t skip = 0;

        if (!at) {
            rc = buf_append(&b, p, (size_t)(end - p));
            break;
        }
        rc = buf_append(&b, p, (size_t)(at - p));
        if (rc != ZK_OK)
            break;
        if ((size_t)(end - at) >= 6 && memcmp(at, "@PORT@", 6) == 0)
            val = port, skip = 6;
        else if ((size_t)(end - at) >= 9 && memcmp(at, "@RUN_DIR@", 9) == 0)
            val = run_dir, skip = 9;
        else if ((size_t)(end - at) >= 6 && memcmp(at, "@AUTH@", 6) == 0)
            val = auth, skip = 6;
        else if ((size_t)(end - at) >= 7 && memcmp(at, "@HOOKS@", 7) == 0)
            val = hooks, skip = 7;
        else
            val = "@", skip = 1;
        rc = buf_puts(&b, val);
        p = at + skip;
    }
    if (rc != ZK_OK)
        return zk_err_set(err, rc, "rendering nginx.conf: %s", zk_strerror(rc));
    *conf = buf_steal(&b);
    return ZK_OK;
}

/* ---- the children --------------------------------------------------------------------------- */

static cJSON *render_pvc(const struct rctx *c)
{
    int del = c->spec->storage.on_delete == PVC_DELETE;
    cJSON *o = new_object(c, "v1", "PersistentVolumeClaim", c->names.pvc, "index", del);
    cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata"), *ann, *spec, *req;
    static const char *const rwx[] = {"ReadWriteMany", NULL};

    /* With Retain the claim has no ownerReference, so deleting the corpus leaves it (and the index)
     * for a corpus of the same name to pick up again. */
    ann = jb_add_obj(c->b, md, "annotations");
    jb_add_str(c->b, ann, API_ANN_CORPUS, c->name);
    jb_add_str(c->b, ann, API_ANN_ON_DELETE, del ? "Delete" : "Retain");
    spec = jb_add_obj(c->b, o, "spec");
    jb_add(c->b, spec, "accessModes", strv(c->b, rwx));
    jb_add_str(c->b, spec, "storageClassName", c->spec->storage.storage_class);
    jb_add_str(c->b, spec, "volumeMode", "Filesystem");
    req = jb_add_obj(c->b, jb_add_obj(c->b, spec, "resources"), "requests");
    jb_add_str(c->b, req, "storage", c->spec->storage.size);
    return o;
}

/* The ConfigMap, and in *hash_out (a heap string) the SHA-256 of the part the search pods mount. */
static int render_configmap(const struct rctx *c, cJSON **cm, char **hash_out, struct zk_err *err)
{
    cJSON *o = NULL, *data;
    char *list = NULL, *nginx = NULL, *script = NULL, *shards = NULL;
    char hash[65];
    int rc;

    *cm = NULL;
    *hash_out = NULL;
    rc = render_repos_list(c->spec, &list, err);
    if (rc == ZK_OK)
        rc = render_nginx_conf(c->spec, "/tmp", &nginx, err);
    if (rc == ZK_OK && c->spec->webserver.shards > 1)
        rc = render_shards_list(c->spec, &shards, err);
    if (rc != ZK_OK)
        goto out;
    script = mem_strndup(ASSETS_INDEXER_SH, ASSETS_INDEXER_SH_LEN);

    o = new_object(c, "v1", "ConfigMap", c->names.configmap, "indexer", 1);
    data = jb_add_obj(c->b, o, "data");
    jb_add_str(c->b, data, "indexer.sh", script);
    jb_add_str(c->b, data, "nginx.conf", nginx);
    jb_add_str(c->b, data, RENDER_REPOS_KEY, list);
    if (shards)
        jb_add_str(c->b, data, RENDER_SHARDS_KEY, shards);
    if (c->spec->discovered)
        jb_add_str(c->b, data, RENDER_DISCOVERED_KEY, c->spec->discovered);

    /* The hash covers what the search pods mount from this ConfigMap, nginx.conf, and nothing else: a
     * change to the repository list or the indexer script concerns the next indexer run only, and must
     * not restart every search pod (with hundreds of repositories, the list changes often). Changes to
     * the pods' own arguments roll them anyway, because they change the pod template itself. */
    sha256_hex(nginx, strlen(nginx), hash, sizeof(hash));
    *hash_out = mem_strdup(hash);
    *cm = o;
    o = NULL;
out:
    cJSON_Delete(o);
    free(list);
    free(nginx);
    free(script);
    free(shards);
    return rc;
}

static cJSON *render_serviceaccount(const struct rctx *c)
{
    return new_object(c, "v1", "ServiceAccount", c->names.serviceaccount, "search", 1);
}

static cJSON *render_role(const struct rctx *c)
{
    cJSON *o = new_object(c, "rbac.authorization.k8s.io/v1", "Role", c->names.role, "search", 1);
    cJSON *rules = jb_add_arr(c->b, o, "rules"), *r = jb_object(c->b);
    static const char *const groups[] = {API_GROUP, NULL};
    static const char *const res[] = {API_PLURAL, NULL};
    static const char *const verbs[] = {"get", "list", "watch", NULL};
    static const char *const webhook_verbs[] = {"get", "list", "watch", "patch", NULL};
    const char *names[] = {c->name, NULL};

    /* The connector reads its own corpus (the corpus_status tool) and nothing else. With webhooks and
     * spec.sources it also patches it, to set the annotation that asks for a discovery (connector/webhook.h): the
     * operator reads no spec from annotations, and resourceNames keeps every other object out of
     * reach (docs/security.md). */
    jb_add(c->b, r, "apiGroups", strv(c->b, groups));
    jb_add(c->b, r, "resources", strv(c->b, res));
    jb_add(c->b, r, "resourceNames", strv(c->b, names));
    jb_add(c->b, r, "verbs", strv(c->b, c->spec->webhook_secret && c->spec->nsources > 0 ? webhook_verbs : verbs));
    jb_push(c->b, rules, r);
    return o;
}

static cJSON *render_rolebinding(const struct rctx *c)
{
    cJSON *o = new_object(c, "rbac.authorization.k8s.io/v1", "RoleBinding", c->names.rolebinding, "search", 1);
    cJSON *ref = jb_add_obj(c->b, o, "roleRef"), *subs, *s;

    jb_add_str(c->b, ref, "apiGroup", "rbac.authorization.k8s.io");
    jb_add_str(c->b, ref, "kind", "Role");
    jb_add_str(c->b, ref, "name", c->names.role);
    subs = jb_add_arr(c->b, o, "subjects");
    s = jb_object(c->b);
    jb_add_str(c->b, s, "kind", "ServiceAccount");
    jb_add_str(c->b, s, "name", c->names.serviceaccount);
    jb_add_str(c->b, s, "namespace", c->ns);
    jb_push(c->b, subs, s);
    return o;
}

/* The search Service agents use (shard NULL), which selects the serving layout, or the Service of one
 * shard, which the connectors of its layout's other shards and the reconciler call. */
static cJSON *render_service(const struct rctx *c, const struct shard_ref *shard)
{
    const struct render_layouts *l = &c->layouts;
    cJSON *o = new_object(c, "v1", "Service", shard ? l->shard[shard->layout][shard->k] : c->names.service,
                          "search", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *ports, *p;

    jb_add_str(c->b, spec, "type", "ClusterIP");
    /* An agent's MCP session lives in the one connector that created it: with two or more replicas,
     * a request of the session that reached another pod would be answered 404 and the client would
     * start over. The Service keeps each client on one pod (three hours without traffic, the
     * default, outlasts any session). */
    if (!shard)
        jb_add_str(c->b, spec, "sessionAffinity", "ClientIP");
    if (shard)
        jb_add(c->b, spec, "selector", layout_labels(c, l->shards[shard->layout], shard->k));
    else if (l->recorded)
        jb_add(c->b, spec, "selector", layout_labels(c, l->serving, -1));
    else
        jb_add(c->b, spec, "selector", selector_labels(c, "search"));
    ports = jb_add_arr(c->b, spec, "ports");
    p = jb_object(c->b);
    jb_add_str(c->b, p, "name", "http");
    jb_add_str(c->b, p, "protocol", "TCP");
    jb_add_num(c->b, p, "port", c->spec->gateway.port);
    jb_add_str(c->b, p, "targetPort", "http");
    jb_push(c->b, ports, p);
    return o;
}

/* ---- NetworkPolicies ------------------------------------------------------------------------ */

/* The most git ports listed one by one; more open every TCP port (still nothing but TCP and DNS). */
#define RENDER_POLICY_PORTS_MAX 16

static cJSON *policy_port(struct jb *b, const char *protocol, int port)
{
    cJSON *p = jb_object(b);

    jb_add_str(b, p, "protocol", protocol);
    jb_add_num(b, p, "port", port);
    return p;
}

/* A peer that selects every pod of one namespace, by the label the API server sets on each. */
static cJSON *namespace_peer(struct jb *b, const char *ns)
{
    cJSON *peer = jb_object(b), *sel = jb_add_obj(b, peer, "namespaceSelector");

    jb_add_str(b, jb_add_obj(b, sel, "matchLabels"), "kubernetes.io/metadata.name", ns);
    return peer;
}

/* An ingress rule: TCP to port, from the spec's peers (copied), or when it names none from the one
 * peer that is an empty selector of kind default_selector ("podSelector": every pod of the policy's
 * namespace; "namespaceSelector": every namespace). */
static cJSON *ingress_rule(struct jb *b, int port, const cJSON *peers, const char *default_selector)
{
    cJSON *rule = jb_object(b), *from, *any;
    const cJSON *peer;

    jb_push(b, jb_add_arr(b, rule, "ports"), policy_port(b, "TCP", port));
    from = jb_add_arr(b, rule, "from");
    cJSON_ArrayForEach(peer, peers)
        jb_push(b, from, cJSON_Duplicate(peer, 1));
    if (!peers) {
        any = jb_object(b);
        jb_add_obj(b, any, default_selector);
        jb_push(b, from, any);
    }
    return rule;
}

/* Who may reach the search pods: the gateway's port, from the peers in spec.networkPolicy.from (the
 * pods of the corpus's own namespace when it names none) and from the operator's namespace, which
 * reads /index-status through the Service for the corpus's status; and the connector's metrics port,
 * from spec.networkPolicy.metricsFrom (every namespace when it names none). The webserver and the
 * connector's own front listen on the pod's loopback, so there is nothing else to allow. */
static cJSON *render_search_policy(const struct rctx *c)
{
    const struct corpus_spec *s = c->spec;
    cJSON *o = new_object(c, "networking.k8s.io/v1", "NetworkPolicy", c->names.search_policy, "search", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *types, *ingress, *gateway;

    jb_add(c->b, jb_add_obj(c->b, spec, "podSelector"), "matchLabels", selector_labels(c, "search"));
    types = jb_add_arr(c->b, spec, "policyTypes");
    jb_push(c->b, types, jb_string(c->b, "Ingress"));
    ingress = jb_add_arr(c->b, spec, "ingress");
    /* The gateway: by default every pod of the corpus's namespace (an empty podSelector). */
    gateway = ingress_rule(c->b, s->gateway.port, s->network_policy.from, "podSelector");
    if (s->operator_namespace && *s->operator_namespace)
        jb_push(c->b, cJSON_GetObjectItemCaseSensitive(gateway, "from"), namespace_peer(c->b, s->operator_namespace));
    /* With shards, each search pod's connector asks the other shards through their gateways, whoever
     * else spec.networkPolicy.from lets in. */
    if (c->layouts.shards[c->layouts.n - 1] > 1 || c->layouts.serving > 1) {
        cJSON *peer = jb_object(c->b);

        jb_add(c->b, jb_add_obj(c->b, peer, "podSelector"), "matchLabels", selector_labels(c, "search"));
        jb_push(c->b, cJSON_GetObjectItemCaseSensitive(gateway, "from"), peer);
    }
    jb_push(c->b, ingress, gateway);
    /* The connector's /metrics, for Prometheus wherever it runs (by default every namespace: an empty
     * namespaceSelector): counts by tool, error kind and webhook outcome, which name no repository,
     * query or token. */
    jb_push(c->b, ingress,
            ingress_rule(c->b, CONNECTOR_METRICS_PORT, s->network_policy.metrics_from, "namespaceSelector"));
    return o;
}

/* What the indexer and refresh pods may do on the network: nothing reaches them, and they reach DNS
 * and the git hosts' ports (each repository URL's, so a host on a port of its own works); NetworkPolicy
 * names no host, so any address on those ports. Anything else (the Kubernetes API, other pods) is
 * refused: a compromised fetch cannot go further than a git server could already make it go. */
static cJSON *render_indexer_policy(const struct rctx *c)
{
    const struct corpus_spec *s = c->spec;
    cJSON *o = new_object(c, "networking.k8s.io/v1", "NetworkPolicy", c->names.indexer_policy, "indexer", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *sel, *ml, *expr, *types, *egress, *dns, *git, *ports;
    static const char *const components[] = {"indexer", "refresh", NULL};
    int seen[RENDER_POLICY_PORTS_MAX] = {0}, nseen = 0;

    sel = jb_add_obj(c->b, spec, "podSelector");
    ml = jb_add_obj(c->b, sel, "matchLabels");
    jb_add_str(c->b, ml, API_LABEL_NAME, API_APP_NAME);
    jb_add_str(c->b, ml, API_LABEL_INSTANCE, c->instance);
    expr = jb_object(c->b);
    jb_add_str(c->b, expr, "key", API_LABEL_COMPONENT);
    jb_add_str(c->b, expr, "operator", "In");
    jb_add(c->b, expr, "values", strv(c->b, components));
    jb_push(c->b, jb_add_arr(c->b, sel, "matchExpressions"), expr);
    types = jb_add_arr(c->b, spec, "policyTypes");
    jb_push(c->b, types, jb_string(c->b, "Ingress"));
    jb_push(c->b, types, jb_string(c->b, "Egress"));
    /* No ingress rule: nothing may connect to them. (An empty list would read back as absent, and the
     * comparison would then apply it on every pass.) */
    egress = jb_add_arr(c->b, spec, "egress");
    dns = jb_object(c->b);
    ports = jb_add_arr(c->b, dns, "ports");
    jb_push(c->b, ports, policy_port(c->b, "UDP", 53));
    jb_push(c->b, ports, policy_port(c->b, "TCP", 53));
    jb_push(c->b, egress, dns);
    for (int i = 0; i < s->nrepos && nseen <= RENDER_POLICY_PORTS_MAX; i++) {
        int port = spec_url_port(s->repos[i].url), k = 0;

        while (k < nseen && seen[k] != port)
            k++;
        if (port == 0 || k < nseen)
            continue;
        if (nseen < RENDER_POLICY_PORTS_MAX)
            seen[nseen] = port;
        nseen++;
    }
    if (nseen == 0) /* every repository is a file:// path */
        return o;
    git = jb_object(c->b);
    ports = jb_add_arr(c->b, git, "ports");
    if (nseen > RENDER_POLICY_PORTS_MAX) {
        /* So many git ports that listing them says little: every TCP port, and still nothing else. */
        cJSON *all = policy_port(c->b, "TCP", 1);

        jb_add_num(c->b, all, "endPort", 65535);
        jb_push(c->b, ports, all);
    } else {
        for (int k = 0; k < nseen; k++)
            jb_push(c->b, ports, policy_port(c->b, "TCP", seen[k]));
    }
    jb_push(c->b, egress, git);
    return o;
}

/* At most one search pod down at a time through voluntary disruptions (node drains, cluster
 * upgrades): with two or more replicas the corpus stays searchable during a drain. It allows evicting a
 * single replica, so a one-replica corpus never blocks a drain. */
static cJSON *render_pdb(const struct rctx *c, int layout)
{
    const struct render_layouts *l = &c->layouts;
    int n = l->shards[layout];
    cJSON *o = new_object(c, "policy/v1", "PodDisruptionBudget", l->pdb[layout], "search", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec");

    jb_add_num(c->b, spec, "maxUnavailable", 1);
    /* The budget of a layout counts that layout's pods only once the Service tells layouts apart; a
     * corpus that predates sharding keeps its budget over every search pod until then. */
    jb_add(c->b, jb_add_obj(c->b, spec, "selector"), "matchLabels",
           l->recorded || n > 1 ? layout_labels(c, n, -1) : selector_labels(c, "search"));
    return o;
}

static cJSON *probe_http(struct jb *b, const char *path, int period, int failures)
{
    cJSON *p = jb_object(b), *g;

    g = jb_add_obj(b, p, "httpGet");
    jb_add_str(b, g, "path", path);
    jb_add_str(b, g, "port", "http");
    jb_add_num(b, p, "periodSeconds", period);
    jb_add_num(b, p, "timeoutSeconds", 5);
    jb_add_num(b, p, "failureThreshold", failures);
    return p;
}

/* A probe that runs cmd in the container: the way to check a process that listens on the pod's
 * loopback only, which the kubelet's HTTP probes (sent to the pod IP) cannot reach. */
static cJSON *probe_exec(struct jb *b, const char *const *cmd, int initial_delay, int period, int failures)
{
    cJSON *p = jb_object(b);

    jb_add(b, jb_add_obj(b, p, "exec"), "command", strv(b, cmd));
    if (initial_delay)
        jb_add_num(b, p, "initialDelaySeconds", initial_delay);
    jb_add_num(b, p, "periodSeconds", period);
    jb_add_num(b, p, "timeoutSeconds", 5);
    jb_add_num(b, p, "failureThreshold", failures);
    return p;
}

static cJSON *container_zoekt(const struct rctx *c, const struct shard_ref *shard)
{
    cJSON *k = jb_object(c->b), *mounts;
    int n = c->layouts.shards[shard->layout];
    char folder[64];
    static const char *const cmd[] = {"zoekt-webserver", "-rpc", "-listen", ZOEKT_LISTEN, "-index", "/data/index",
                                      NULL};
    /* zoekt-webserver listens on the loopback only, which the kubelet's HTTP probes cannot reach;
     * the zoekt image ships wget. */
    static const char *const probe[] = {"wget", "-q", "-O", "/dev/null", "http://" ZOEKT_LISTEN "/healthz", NULL};

    jb_add_str(c->b, k, "name", "zoekt-webserver");
    jb_add_str(c->b, k, "image", c->spec->webserver.image);
    jb_add(c->b, k, "command", strv(c->b, cmd));
    jb_add(c->b, k, "resources", resources(c->b, c->spec->webserver.resources, "500m", "1Gi", "4Gi"));
    jb_add(c->b, k, "livenessProbe", probe_exec(c->b, probe, 30, 30, 5));
    jb_add(c->b, k, "securityContext", container_security(c->b));
    mounts = jb_add_arr(c->b, k, "volumeMounts");
    /* Read-only, and through subPath so the kubelet creates the folder before the first indexer run.
     * A shard of a layout of more than one serves a folder of its own, where indexer.sh writes it. */
    if (n > 1)
        snprintf(folder, sizeof(folder), "index-shards/%d/%d", n, shard->k);
    else
        snprintf(folder, sizeof(folder), "index");
    jb_push(c->b, mounts, mount(c->b, "data", "/data/index", folder, 1));
    jb_push(c->b, mounts, mount(c->b, "tmp", "/tmp", "zoekt", 0));
    return k;
}

static cJSON *container_nginx(const struct rctx *c)
{
    cJSON *k = jb_object(c->b), *ports, *p, *mounts;
    static const char *const cmd[] = {"nginx", "-c", RENDER_CONFIG_DIR "/nginx.conf", "-e", "stderr", NULL};

    jb_add_str(c->b, k, "name", "nginx");
    jb_add_str(c->b, k, "image", c->spec->gateway.image);
    jb_add(c->b, k, "command", strv(c->b, cmd));
    /* Stopping pods (a rolling update, the old layout after a reshard) leave the Service's endpoints a
     * moment after they are told to stop: nginx keeps answering until every proxy has seen that. */
    jb_add_num(c->b, jb_add_obj(c->b, jb_add_obj(c->b, jb_add_obj(c->b, k, "lifecycle"), "preStop"), "sleep"),
               "seconds", 5);
    ports = jb_add_arr(c->b, k, "ports");
    p = jb_object(c->b);
    jb_add_str(c->b, p, "name", "http");
    jb_add_num(c->b, p, "containerPort", c->spec->gateway.port);
    jb_add_str(c->b, p, "protocol", "TCP");
    jb_push(c->b, ports, p);
    jb_add(c->b, k, "resources", resources(c->b, NULL, "50m", "32Mi", "128Mi"));
    jb_add(c->b, k, "readinessProbe", probe_http(c->b, "/readyz", 10, 3));
    jb_add(c->b, k, "livenessProbe", probe_http(c->b, "/healthz", 20, 3));
    jb_add(c->b, k, "securityContext", container_security(c->b));
    mounts = jb_add_arr(c->b, k, "volumeMounts");
    jb_push(c->b, mounts, mount(c->b, "config", RENDER_CONFIG_DIR, NULL, 1));
    jb_push(c->b, mounts, mount(c->b, "tmp", "/tmp", "nginx", 0));
    return k;
}

/* The --shard-urls of a connector in shard self of a layout of more than one: its own webserver on
 * the loopback, and every other shard's gateway through that shard's Service. */
static char *shard_urls(const struct rctx *c, const struct shard_ref *self)
{
    const struct render_layouts *l = &c->layouts;
    struct buf b;
    int rc = ZK_OK;

    buf_init(&b, 4096);
    for (int k = 0; k < l->shards[self->layout] && rc == ZK_OK; k++) {
        if (k == self->k)
            rc = buf_printf(&b, "%shttp://%s", k ? "," : "", ZOEKT_LISTEN);
        else
            rc = buf_printf(&b, "%shttp://%s.%s.svc:%d", k ? "," : "", l->shard[self->layout][k], c->ns,
                            c->spec->gateway.port);
    }
    return rc == ZK_OK ? buf_steal(&b) : NULL;
}

static cJSON *container_connector(const struct rctx *c, const struct shard_ref *shard)
{
    const struct corpus_spec *s = c->spec;
    cJSON *k = jb_object(c->b), *cmd, *mounts, *env, *e, *from, *ports, *p;
    static const char *const probe[] = {"zoekt-connector", "probe", "http://" CONNECTOR_LISTEN "/healthz", NULL};
    char corpus[320], num[32];

    snprintf(corpus, sizeof(corpus), "%s/%s", c->ns, c->name);
    jb_add_str(c->b, k, "name", "connector");
    jb_add_str(c->b, k, "image", s->connector.image);
    cmd = jb_add_arr(c->b, k, "command");
    jb_push(c->b, cmd, jb_string(c->b, "zoekt-connector"));
    jb_push(c->b, cmd, jb_string(c->b, "--listen"));
    jb_push(c->b, cmd, jb_string(c->b, CONNECTOR_LISTEN));
    jb_push(c->b, cmd, jb_string(c->b, "--metrics-listen"));
    jb_push(c->b, cmd, jb_string(c->b, CONNECTOR_METRICS_LISTEN));
    jb_push(c->b, cmd, jb_string(c->b, "--zoekt-url"));
    jb_push(c->b, cmd, jb_string(c->b, "http://" ZOEKT_LISTEN));
    jb_push(c->b, cmd, jb_string(c->b, "--corpus"));
    jb_push(c->b, cmd, jb_string(c->b, corpus));
    if (c->layouts.shards[shard->layout] > 1) {
        char *urls = shard_urls(c, shard);

        jb_push(c->b, cmd, jb_string(c->b, "--shard-urls"));
        jb_push(c->b, cmd, jb_string(c->b, urls));
        free(urls);
    }
#define ADD_NUM_FLAG(flag, fmt, v)                                                                         \
    do {                                                                                                   \
        snprintf(num, sizeof(num), fmt, (v));                                                              \
        jb_push(c->b, cmd, jb_string(c->b, flag));                                                         \
        jb_push(c->b, cmd, jb_string(c->b, num));                                                          \
    } while (0)
    ADD_NUM_FLAG("--max-files", "%d", s->connector.max_files);
    ADD_NUM_FLAG("--context-lines", "%d", s->connector.context_lines);
    ADD_NUM_FLAG("--search-timeout", "%ds", s->connector.search_timeout_seconds);
    ADD_NUM_FLAG("--list-timeout", "%ds", s->connector.list_timeout_seconds);
#undef ADD_NUM_FLAG
    if (s->connector.mirror_prefix) {
        jb_push(c->b, cmd, jb_string(c->b, "--mirror-prefix"));
        jb_push(c->b, cmd, jb_string(c->b, s->connector.mirror_prefix));
    }
    if (s->gateway.tokens_secret) {
        jb_push(c->b, cmd, jb_string(c->b, "--token-dir"));
        jb_push(c->b, cmd, jb_string(c->b, RENDER_TOKENS_DIR));
    }
    if (s->webhook_secret) {
        static const char *const hook_flags[] = {
            "--webhook-secret-file", RENDER_WEBHOOK_DIR "/" RENDER_WEBHOOK_KEY,
            "--webhook-repos-file", RENDER_CONFIG_DIR "/" RENDER_REPOS_KEY,
            "--webhook-queue-dir", "/data/queue", NULL};

        for (const char *const *f = hook_flags; *f; f++)
            jb_push(c->b, cmd, jb_string(c->b, *f));
        if (s->nsources > 0)
            jb_push(c->b, cmd, jb_string(c->b, "--webhook-discovery"));
    }
    env = jb_add_arr(c->b, k, "env");
    e = jb_object(c->b);
    jb_add_str(c->b, e, "name", "POD_IP");
    from = jb_add_obj(c->b, jb_add_obj(c->b, e, "valueFrom"), "fieldRef");
    jb_add_str(c->b, from, "apiVersion", "v1");
    jb_add_str(c->b, from, "fieldPath", "status.podIP");
    jb_push(c->b, env, e);
    ports = jb_add_arr(c->b, k, "ports");
    p = jb_object(c->b);
    jb_add_str(c->b, p, "name", "metrics");
    jb_add_num(c->b, p, "containerPort", CONNECTOR_METRICS_PORT);
    jb_add_str(c->b, p, "protocol", "TCP");
    jb_push(c->b, ports, p);
    jb_add(c->b, k, "resources", resources(c->b, NULL, "50m", "64Mi", "256Mi"));
    /* /mcp depends on the connector, so the pod is Ready only while the connector answers; the connector
     * checks itself with its own binary, so its image needs no HTTP client. */
    jb_add(c->b, k, "readinessProbe", probe_exec(c->b, probe, 0, 10, 3));
    jb_add(c->b, k, "livenessProbe", probe_exec(c->b, probe, 0, 20, 3));
    jb_add(c->b, k, "securityContext", container_security(c->b));
    mounts = jb_add_arr(c->b, k, "volumeMounts");
    if (s->gateway.tokens_secret)
        jb_push(c->b, mounts, mount(c->b, "tokens", RENDER_TOKENS_DIR, NULL, 1));
    if (s->webhook_secret) {
        /* The request folder is written beside the index, as the refresh indexer reads it: the whole
         * volume, since a subPath the kubelet creates would be root's and unwritable for the indexer. */
        jb_push(c->b, mounts, mount(c->b, "data", "/data", NULL, 0));
        jb_push(c->b, mounts, mount(c->b, "config", RENDER_CONFIG_DIR, NULL, 1));
        jb_push(c->b, mounts, mount(c->b, "webhook", RENDER_WEBHOOK_DIR, NULL, 1));
    }
    jb_push(c->b, mounts, mount(c->b, "tmp", "/tmp", "connector", 0));
    return k;
}

/* The search pods of one shard. A layout of one is today's Deployment, whose selector (immutable) does
 * not name the layout; its pods carry it all the same, for the Service. */
static cJSON *render_deployment(const struct rctx *c, const char *config_hash, const struct shard_ref *shard)
{
    int n = c->layouts.shards[shard->layout];
    cJSON *o = new_object(c, "apps/v1", "Deployment",
                          n > 1 ? c->layouts.shard[shard->layout][shard->k] : c->names.deployment, "search", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *sel, *strat, *ru, *tpl, *md, *ann, *pod, *ctrs, *vols, *pl;
    static const char *const nginx_keys[] = {"nginx.conf", NULL};
    static const char *const hook_keys[] = {"nginx.conf", RENDER_REPOS_KEY, NULL};
    char v[16];

    jb_add_num(c->b, spec, "replicas", c->spec->webserver.replicas);
    jb_add_num(c->b, spec, "revisionHistoryLimit", 3);
    sel = jb_add_obj(c->b, spec, "selector");
    jb_add(c->b, sel, "matchLabels", n > 1 ? layout_labels(c, n, shard->k) : selector_labels(c, "search"));
    /* Start the new pod before stopping the old one: with one replica there is never a gap. */
    strat = jb_add_obj(c->b, spec, "strategy");
    jb_add_str(c->b, strat, "type", "RollingUpdate");
    ru = jb_add_obj(c->b, strat, "rollingUpdate");
    jb_add_num(c->b, ru, "maxSurge", 1);
    jb_add_num(c->b, ru, "maxUnavailable", 0);
    tpl = jb_add_obj(c->b, spec, "template");
    md = jb_add_obj(c->b, tpl, "metadata");
    pl = pod_labels(c, "search");
    snprintf(v, sizeof(v), "%d", n);
    jb_add_str(c->b, pl, API_LABEL_SHARDS, v);
    if (n > 1) {
        snprintf(v, sizeof(v), "%d", shard->k);
        jb_add_str(c->b, pl, API_LABEL_SHARD, v);
    }
    jb_add(c->b, md, "labels", pl);
    ann = jb_add_obj(c->b, md, "annotations");
    jb_add_str(c->b, ann, API_ANN_CONFIG_HASH, config_hash);
    pod = jb_add_obj(c->b, tpl, "spec");
    jb_add_str(c->b, pod, "serviceAccountName", c->names.serviceaccount);
    jb_add_bool(c->b, pod, "enableServiceLinks", 0);
    jb_add(c->b, pod, "securityContext", pod_security(c->b));
    add_placement(c, pod);
    add_pod_settings(c, pod);
    ctrs = jb_add_arr(c->b, pod, "containers");
    jb_push(c->b, ctrs, container_zoekt(c, shard));
    jb_push(c->b, ctrs, container_nginx(c));
    jb_push(c->b, ctrs, container_connector(c, shard));
    vols = jb_add_arr(c->b, pod, "volumes");
    jb_push(c->b, vols, volume_pvc(c));
    jb_push(c->b, vols, volume_config(c, c->spec->webhook_secret ? hook_keys : nginx_keys));
    if (c->spec->gateway.tokens_secret)
        jb_push(c->b, vols, volume_secret(c->b, "tokens", c->spec->gateway.tokens_secret));
    if (c->spec->webhook_secret)
        jb_push(c->b, vols, volume_secret(c->b, "webhook", c->spec->webhook_secret));
    jb_push(c->b, vols, volume_empty(c->b, "tmp"));
    return o;
}

/* The pod that runs indexer.sh: the Jobs' (restart "Never", poll_seconds NULL: the script's default
 * full mode) and the refresh Deployment's (restart "Always", its watch mode polling every
 * poll_seconds). */
static cJSON *indexer_pod(const struct rctx *c, const char *restart, const char *poll_seconds)
{
    const struct corpus_spec *s = c->spec;
    cJSON *pod = jb_object(c->b), *ctrs, *k, *env, *mounts, *vols;
    static const char *const cmd[] = {"/bin/sh", RENDER_CONFIG_DIR "/indexer.sh", NULL};
    static const char *const keys[] = {RENDER_REPOS_KEY, "indexer.sh", NULL};
    static const char *const shard_keys[] = {RENDER_REPOS_KEY, "indexer.sh", RENDER_SHARDS_KEY, NULL};
    int shards = s->webserver.shards;

    jb_add_str(c->b, pod, "restartPolicy", restart);
    /* The indexer talks to git servers, never to the Kubernetes API. */
    jb_add_bool(c->b, pod, "automountServiceAccountToken", 0);
    jb_add_bool(c->b, pod, "enableServiceLinks", 0);
    jb_add(c->b, pod, "securityContext", pod_security(c->b));
    add_placement(c, pod);
    add_pod_settings(c, pod);
    ctrs = jb_add_arr(c->b, pod, "containers");
    k = jb_object(c->b);
    jb_add_str(c->b, k, "name", "indexer");
    jb_add_str(c->b, k, "image", s->indexer.image);
    jb_add(c->b, k, "command", strv(c->b, cmd));
    if (s->indexer.extra_flags && s->indexer.extra_flags[0])
        jb_add(c->b, k, "args", strv(c->b, (const char *const *)s->indexer.extra_flags));
    env = jb_add_arr(c->b, k, "env");
    jb_push(c->b, env, env_var(c->b, "REPOS_FILE", RENDER_CONFIG_DIR "/" RENDER_REPOS_KEY));
    jb_push(c->b, env, env_var(c->b, "DATA_DIR", "/data"));
    jb_push(c->b, env, env_var(c->b, "CREDENTIALS_DIR", RENDER_CREDENTIALS_DIR));
    jb_push(c->b, env, env_var(c->b, "TMPDIR", "/tmp"));
    if (s->git_ca.name)
        jb_push(c->b, env, env_var(c->b, "GIT_CA_BUNDLE", RENDER_GIT_CA_DIR "/" RENDER_GIT_CA_FILE));
    /* With more than one shard, each repository is indexed into its shard's folder (the Jobs' pod k
     * indexes shard k's repositories, the refresh pod each where the list puts it). */
    if (shards > 1) {
        char num[16];

        snprintf(num, sizeof(num), "%d", shards);
        jb_push(c->b, env, env_var(c->b, "SHARDS", num));
        jb_push(c->b, env, env_var(c->b, "SHARDS_FILE", RENDER_CONFIG_DIR "/" RENDER_SHARDS_KEY));
    }
    if (poll_seconds) {
        jb_push(c->b, env, env_var(c->b, "INDEXER_MODE", "watch"));
        jb_push(c->b, env, env_var(c->b, "POLL_INTERVAL_SECONDS", poll_seconds));
    }
    /* Only departures from indexer.sh's defaults are rendered, so corpora that keep the defaults (symbols
     * indexed, a fetch abandoned after 60 s under 1 KB/s) keep the CronJob they had before the fields
     * existed. */
    if (!s->indexer.symbols)
        jb_push(c->b, env, env_var(c->b, "SYMBOLS", "false"));
    if (s->indexer.fetch_stall_seconds != SPEC_DEFAULT_FETCH_STALL_SECONDS) {
        char stall[24];

        snprintf(stall, sizeof(stall), "%ld", s->indexer.fetch_stall_seconds);
        jb_push(c->b, env, env_var(c->b, "GIT_HTTP_LOW_SPEED_TIME", stall));
    }
    /* The refresh pod waits most of the time and indexes one repository at a time: it reserves a tenth
     * of a Job's default, with the same limit for the repository it indexes. */
    if (poll_seconds)
        jb_add(c->b, k, "resources", resources(c->b, s->indexer.resources, "100m", "256Mi", "4Gi"));
    else
        jb_add(c->b, k, "resources", resources(c->b, s->indexer.resources, "1", "2Gi", "4Gi"));
    jb_add(c->b, k, "securityContext", container_security(c->b));
    mounts = jb_add_arr(c->b, k, "volumeMounts");
    jb_push(c->b, mounts, mount(c->b, "data", "/data", NULL, 0));
    jb_push(c->b, mounts, mount(c->b, "config", RENDER_CONFIG_DIR, NULL, 1));
    if (s->credentials_secret)
        jb_push(c->b, mounts, mount(c->b, "git-credentials", RENDER_CREDENTIALS_DIR, NULL, 1));
    if (s->git_ca.name)
        jb_push(c->b, mounts, mount(c->b, "git-ca", RENDER_GIT_CA_DIR, NULL, 1));
    jb_push(c->b, mounts, mount(c->b, "tmp", "/tmp", NULL, 0));
    jb_push(c->b, ctrs, k);
    vols = jb_add_arr(c->b, pod, "volumes");
    jb_push(c->b, vols, volume_pvc(c));
    jb_push(c->b, vols, volume_config(c, shards > 1 ? shard_keys : keys));
    if (s->credentials_secret)
        jb_push(c->b, vols, volume_secret(c->b, "git-credentials", s->credentials_secret));
    if (s->git_ca.name)
        jb_push(c->b, vols, volume_git_ca(c->b, s));
    jb_push(c->b, vols, volume_empty(c->b, "tmp"));
    return pod;
}

/* The pod template of an indexer pod (the Jobs' or the refresh Deployment's): its component's labels,
 * the corpus annotation, the script's hash when the pod keeps running the script (script_hash, or
 * NULL), and indexer_pod's spec. */
static cJSON *indexer_template(const struct rctx *c, const char *component, const char *restart,
                               const char *poll_seconds, const char *script_hash)
{
    cJSON *tpl = jb_object(c->b), *md = jb_add_obj(c->b, tpl, "metadata"), *ann;

    jb_add(c->b, md, "labels", pod_labels(c, component));
    ann = jb_add_obj(c->b, md, "annotations");
    jb_add_str(c->b, ann, API_ANN_CORPUS, c->name);
    if (script_hash)
        jb_add_str(c->b, ann, API_ANN_SCRIPT_HASH, script_hash);
    jb_add(c->b, tpl, "spec", indexer_pod(c, restart, poll_seconds));
    return tpl;
}

/* The Job spec shared by the CronJob's template and reindex Jobs. */
static cJSON *job_spec(const struct rctx *c)
{
    cJSON *js = jb_object(c->b);
    int shards = c->spec->webserver.shards;

    /* One retry: the script fails only when no repository could be indexed at all. With more than one
     * shard, pod k of an Indexed Job indexes shard k (indexer.sh reads JOB_COMPLETION_INDEX), all at
     * once, each with its retry. */
    jb_add_num(c->b, js, "backoffLimit", shards);
    if (shards > 1) {
        jb_add_str(c->b, js, "completionMode", "Indexed");
        jb_add_num(c->b, js, "completions", shards);
        jb_add_num(c->b, js, "parallelism", shards);
    }
    jb_add_num(c->b, js, "activeDeadlineSeconds", (double)c->spec->indexer.deadline_seconds);
    jb_add(c->b, js, "template", indexer_template(c, "indexer", "Never", NULL, NULL));
    return js;
}

/* The refresh Deployment: indexer.sh in its watch mode, polling the remotes every
 * spec.poll.interval and indexing the repositories with a request in the volume's queue, beside the
 * nightly CronJob (docs/architecture.md, "Freshness"). Recreate, not a rolling update: the script
 * allows one refresh run per volume, so a surge pod would only fail until the old one stopped.
 *
 * The watch loop keeps the script it started with, but reads the repository list anew on every pass,
 * so a new script must replace the pod: an old one would misread a list in a newer format (the code
 * host's fields after the branches), and the pod's image may stay the same across operator releases
 * (a corpus that pins indexer.image). The template carries the script's hash for that; the Jobs start
 * with the ConfigMap of the moment and need none. */
static cJSON *render_refresh(const struct rctx *c)
{
    const struct corpus_spec *s = c->spec;
    cJSON *o = new_object(c, "apps/v1", "Deployment", c->names.refresh, "refresh", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *sel;
    char interval[32], hash[65];

    snprintf(interval, sizeof(interval), "%ld", s->poll_interval_seconds);
    /* Webhook requests need the pod as much as polling does; with neither it has nothing to do. */
    jb_add_num(c->b, spec, "replicas", (s->poll_interval_seconds > 0 || s->webhook_secret) && !s->suspend ? 1 : 0);
    jb_add_num(c->b, spec, "revisionHistoryLimit", 3);
    sel = jb_add_obj(c->b, spec, "selector");
    jb_add(c->b, sel, "matchLabels", selector_labels(c, "refresh"));
    jb_add_str(c->b, jb_add_obj(c->b, spec, "strategy"), "type", "Recreate");
    sha256_hex(ASSETS_INDEXER_SH, ASSETS_INDEXER_SH_LEN, hash, sizeof(hash));
    jb_add(c->b, spec, "template", indexer_template(c, "refresh", "Always", interval, hash));
    return o;
}

static cJSON *render_cronjob(const struct rctx *c)
{
    const struct corpus_spec *s = c->spec;
    cJSON *o = new_object(c, "batch/v1", "CronJob", c->names.cronjob, "indexer", 1);
    cJSON *spec = jb_add_obj(c->b, o, "spec"), *jt, *md;

    jb_add_str(c->b, spec, "schedule", s->schedule);
    if (s->time_zone)
        jb_add_str(c->b, spec, "timeZone", s->time_zone);
    jb_add_bool(c->b, spec, "suspend", s->suspend);
    jb_add_str(c->b, spec, "concurrencyPolicy", "Forbid");
    /* A run missed by more than an hour (controller down) is skipped rather than started late. */
    jb_add_num(c->b, spec, "startingDeadlineSeconds", 3600);
    jb_add_num(c->b, spec, "successfulJobsHistoryLimit", 3);
    jb_add_num(c->b, spec, "failedJobsHistoryLimit", 3);
    jt = jb_add_obj(c->b, spec, "jobTemplate");
    md = jb_add_obj(c->b, jt, "metadata");
    jb_add(c->b, md, "labels", labels(c, "indexer"));
    jb_add_str(c->b, jb_add_obj(c->b, md, "annotations"), API_ANN_CORPUS, c->name);
    jb_add(c->b, jt, "spec", job_spec(c));
    return o;
}

static int ctx_init(struct rctx *c, struct jb *b, const cJSON *corpus, const struct corpus_spec *spec,
                    struct zk_err *err)
{
    memset(c, 0, sizeof(*c));
    c->b = b;
    c->name = json_path_str(corpus, "metadata.name", NULL);
    c->ns = json_path_str(corpus, "metadata.namespace", NULL);
    c->uid = json_path_str(corpus, "metadata.uid", NULL);
    if (!c->name || !*c->name || !c->ns || !*c->ns || !c->uid || !*c->uid)
        return zk_err_set(err, ZK_EINVAL, "rendering corpus %s/%s: metadata.name, namespace and uid are required",
                          c->ns ? c->ns : "?", c->name ? c->name : "?");
    c->spec = spec;
    render_instance_label(c->name, c->instance);
    render_child_names(c->name, &c->names);
    render_layouts(corpus, spec, &c->layouts);
    return ZK_OK;
}

int render_children(const cJSON *corpus, const struct corpus_spec *spec, cJSON **children, struct zk_err *err)
{
    struct jb b = {0};
    struct rctx c;
    cJSON *arr, *cm;
    char *hash = NULL;
    int rc;

    *children = NULL;
    rc = ctx_init(&c, &b, corpus, spec, err);
    if (rc != ZK_OK)
        return rc;
    arr = jb_array(&b);
    if (!spec->storage.existing_claim)
        jb_push(&b, arr, render_pvc(&c));
    rc = render_configmap(&c, &cm, &hash, err);
    if (rc != ZK_OK) {
        cJSON_Delete(arr);
        return rc;
    }
    jb_push(&b, arr, cm);
    jb_push(&b, arr, render_serviceaccount(&c));
    jb_push(&b, arr, render_role(&c));
    jb_push(&b, arr, render_rolebinding(&c));
    if (spec->network_policy.enabled) {
        jb_push(&b, arr, render_search_policy(&c));
        jb_push(&b, arr, render_indexer_policy(&c));
    }
    jb_push(&b, arr, render_service(&c, NULL));
    for (int i = 0; i < c.layouts.n; i++) {
        int n = c.layouts.shards[i];

        for (int k = 0; k < n; k++) {
            struct shard_ref shard = {i, k};

            if (n > 1 || i > 0)
                jb_push(&b, arr, render_service(&c, &shard));
            jb_push(&b, arr, render_deployment(&c, hash, &shard));
        }
        jb_push(&b, arr, render_pdb(&c, i));
    }
    jb_push(&b, arr, render_cronjob(&c));
    jb_push(&b, arr, render_refresh(&c));
    free(hash);
    *children = jb_finish(&b, arr);
    if (!*children)
        return zk_err_set(err, ZK_EINVAL, "rendering %s/%s: a member of a child had no value", c.ns, c.name);
    return ZK_OK;
}

int render_reindex_job(const cJSON *corpus, const struct corpus_spec *spec, const char *request_value, int fresh,
                       cJSON **job, struct zk_err *err)
{
    struct jb b = {0};
    struct rctx c;
    char hash[65], suffix[32], name[RENDER_NAME_MAX];
    cJSON *o, *md, *ann, *js;
    int rc;

    *job = NULL;
    rc = ctx_init(&c, &b, corpus, spec, err);
    if (rc != ZK_OK)
        return rc;
    if (!request_value || !*request_value)
        return zk_err_set(err, ZK_EINVAL, "rendering a reindex Job for %s/%s: empty request value", c.ns, c.name);
    sha256_hex(request_value, strlen(request_value), hash, sizeof(hash));
    snprintf(suffix, sizeof(suffix), "-reindex-%.8s", hash);
    child_name(c.name, suffix, NAME_MAX_LABEL, name);
    o = new_object(&c, "batch/v1", "Job", name, "indexer", 1);
    md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    hash[16] = '\0';
    jb_add_str(&b, cJSON_GetObjectItemCaseSensitive(md, "labels"), API_LABEL_REINDEX, hash);
    ann = jb_add_obj(&b, md, "annotations");
    jb_add_str(&b, ann, API_ANN_REINDEX, request_value);
    js = job_spec(&c);
    if (fresh) {
        cJSON *pod = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(js, "template"), "spec");
        cJSON *indexer = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pod, "containers"), 0);

        jb_push(&b, cJSON_GetObjectItemCaseSensitive(indexer, "env"), env_var(&b, "FRESH_INDEX", "1"));
    }
    jb_add(&b, o, "spec", js);
    *job = jb_finish(&b, o);
    if (!*job)
        return zk_err_set(err, ZK_EINVAL, "rendering a reindex Job for %s/%s: a member had no value", c.ns, c.name);
    return ZK_OK;
}

/* ---- YAML ----------------------------------------------------------------------------------- */

/* Whether a string would be read back as something else (a number, a boolean, null) if written
 * plain, so it must be quoted. libyaml's emitter knows YAML's syntax but not its type resolution. */
static int yaml_needs_quotes(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", NULL};
    const char *const *w;
    char *end;

    if (!*s)
        return 1;
    for (w = words; *w; w++)
        if (strcasecmp(s, *w) == 0)
            return 1;
    strtod(s, &end);
    if (*end == '\0')
        return 1;
    /* Octal, hexadecimal, sexagesimal and infinity forms that strtod may not take. */
    return strspn(s, "0123456789:._+-eExXoOabcdefABCDEF") == strlen(s) && strpbrk(s, "0123456789");
}

static int emit_node(yaml_emitter_t *em, const cJSON *node);

static int emit_scalar(yaml_emitter_t *em, const char *value, yaml_scalar_style_t style)
{
    yaml_event_t ev;

    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)value, (int)strlen(value), 1, 1, style))
        return 0;
    return yaml_emitter_emit(em, &ev);
}

static int emit_node(yaml_emitter_t *em, const cJSON *node)
{
    yaml_event_t ev;
    const cJSON *ch;
    char num[64];

    if (cJSON_IsObject(node)) {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return 0;
        for (ch = node->child; ch; ch = ch->next)
            if (!emit_scalar(em, ch->string, yaml_needs_quotes(ch->string) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                                           : YAML_ANY_SCALAR_STYLE) ||
                !emit_node(em, ch))
                return 0;
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    }
    if (cJSON_IsArray(node)) {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return 0;
        for (ch = node->child; ch; ch = ch->next)
            if (!emit_node(em, ch))
                return 0;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    }
    if (cJSON_IsString(node)) {
        const char *s = node->valuestring;

        if (strchr(s, '\n'))
            return emit_scalar(em, s, YAML_LITERAL_SCALAR_STYLE);
        return emit_scalar(em, s, yaml_needs_quotes(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    }
    if (cJSON_IsBool(node))
        return emit_scalar(em, cJSON_IsTrue(node) ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
    if (cJSON_IsNumber(node)) {
        if (node->valuedouble == (double)(long long)node->valuedouble)
            snprintf(num, sizeof(num), "%lld", (long long)node->valuedouble);
        else
            snprintf(num, sizeof(num), "%.17g", node->valuedouble);
        return emit_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
    }
    return emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
}

static int yaml_write(void *data, unsigned char *buffer, size_t size)
{
    return buf_append(data, buffer, size) == ZK_OK;
}

int render_yaml(const cJSON *children, char **yaml, struct zk_err *err)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    struct buf b;
    const cJSON *doc;
    int ok;

    *yaml = NULL;
    buf_init(&b, 64u << 20);
    /* libyaml cannot be given an allocator: it reports a failed allocation by return code. */
    if (!yaml_emitter_initialize(&em))
        mem_oom(sizeof(em));
    yaml_emitter_set_output(&em, yaml_write, &b);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&em, &ev);
    cJSON_ArrayForEach(doc, children) {
        if (!ok)
            break;
        /* Explicit "---" starts: every document is separated, as `kubectl apply -f` expects. */
        ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) && yaml_emitter_emit(&em, &ev) &&
             emit_node(&em, doc) && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev);
    }
    ok = ok && yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
    if (!ok && em.error == YAML_MEMORY_ERROR)
        mem_oom(0);
    if (!ok) {
        /* A writer error: the stream outgrew the buffer's bound. */
        int rc = em.error == YAML_WRITER_ERROR ? ZK_ETOOBIG : ZK_EINVAL;

        zk_err_set(err, rc, "emitting YAML: %s", em.problem ? em.problem : zk_strerror(rc));
        yaml_emitter_delete(&em);
        buf_free(&b);
        return rc;
    }
    yaml_emitter_delete(&em);
    *yaml = buf_steal(&b);
    return ZK_OK;
}
