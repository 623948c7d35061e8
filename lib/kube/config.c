/* config.c: see config.h.
 *
 * The kubeconfig is read with libyaml's document API: the whole file becomes a node tree, and the few
 * paths we need (current-context, contexts[name].context, clusters[name].cluster, users[name].user) are
 * looked up in it. Every error names the source and the YAML path of the offending field. */
#include "kube/config.h"

#include "buf.h"
#include "mem.h"
#include "textfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

/* A kubeconfig or a service-account file larger than this is certainly not one. */
#define KCFG_MAX_FILE (4u * 1024 * 1024)
#define KCFG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* At most this many files in a $KUBECONFIG list are merged. */
#define KCFG_MAX_FILES 16

void kube_config_free(struct kube_config *cfg)
{
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_pem);
    free(cfg->cert_file);
    free(cfg->cert_pem);
    free(cfg->key_file);
    /* The key is a secret: scrub it before the memory goes back to the allocator. */
    if (cfg->key_pem)
        memset(cfg->key_pem, 0, cfg->key_pem_len);
    free(cfg->key_pem);
    if (cfg->token)
        memset(cfg->token, 0, strlen(cfg->token));
    free(cfg->token);
    free(cfg->token_file);
    kube_exec_free(cfg->exec);
    free(cfg->namespace);
    memset(cfg, 0, sizeof(*cfg));
}

/* Reads a whole file into a heap string (NUL-terminated) that the caller frees. */
static int kcfg_read_file(const char *path, char **out, size_t *len, struct zk_err *err)
{
    struct buf b;
    int rc;

    *out = NULL;
    buf_init(&b, KCFG_MAX_FILE);
    if ((rc = buf_read_file(&b, path, err)) != ZK_OK)
        return rc;
    *len = b.len;
    *out = buf_steal(&b);
    return ZK_OK;
}

/* Decodes standard base64, ignoring whitespace (kubeconfigs sometimes wrap long values). The result is
 * a heap buffer the caller frees, NUL-terminated for convenience (not counted in *len). Returns ZK_EINVAL
 * for any other character or a bad length. */
static int kcfg_base64_decode(const char *s, char **out, size_t *len)
{
    size_t n = strlen(s), o = 0, q = 0, pad = 0;
    unsigned int acc = 0;
    char *p = mem_alloc(n / 4 * 3 + 4);

    *out = NULL;
    for (const char *c = s; *c; c++) {
        int v;

        if (isspace((unsigned char)*c))
            continue;
        if (*c == '=') {
            pad++;
            v = 0;
        } else if (pad) {
            goto bad; /* data after padding */
        } else if (*c >= 'A' && *c <= 'Z') {
            v = *c - 'A';
        } else if (*c >= 'a' && *c <= 'z') {
            v = *c - 'a' + 26;
        } else if (*c >= '0' && *c <= '9') {
            v = *c - '0' + 52;
        } else if (*c == '+') {
            v = 62;
        } else if (*c == '/') {
            v = 63;
        } else {
            goto bad;
        }
        acc = acc << 6 | (unsigned int)v;
        if (++q == 4) {
            p[o++] = (char)(acc >> 16 & 0xff);
            p[o++] = (char)(acc >> 8 & 0xff);
            p[o++] = (char)(acc & 0xff);
            acc = 0;
            q = 0;
        }
    }
    if (q != 0 || pad > 2 || o < pad)
        goto bad;
    o -= pad;
    p[o] = '\0';
    *out = p;
    *len = o;
    return ZK_OK;
bad:
    free(p);
    return ZK_EINVAL;
}

/* The value of key in a mapping node, or NULL when node is not a mapping or lacks the key. */
static yaml_node_t *kcfg_get(yaml_document_t *doc, yaml_node_t *node, const char *key)
{
    if (!node || node->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);

        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

/* The scalar value of key, or NULL when missing, not a scalar, or empty. */
static const char *kcfg_str(yaml_document_t *doc, yaml_node_t *node, const char *key)
{
    yaml_node_t *v = kcfg_get(doc, node, key);

    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return NULL;
    return (const char *)v->data.scalar.value;
}

/* Finds, in the sequence list_key of the root, the entry whose name is name, and returns its member
 * inner_key (the "cluster", "user" or "context" mapping). Returns NULL when there is no such entry. An
 * entry whose inner mapping is missing yields an empty mapping's stand-in: the caller then reports the
 * missing field itself. */
static yaml_node_t *kcfg_find_named(yaml_document_t *doc, yaml_node_t *root, const char *list_key, const char *name,
                                    const char *inner_key, int *found)
{
    yaml_node_t *seq = kcfg_get(doc, root, list_key);

    *found = 0;
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return NULL;
    for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
        yaml_node_t *entry = yaml_document_get_node(doc, *i);
        const char *n = kcfg_str(doc, entry, "name");

        if (n && strcmp(n, name) == 0) {
            *found = 1;
            return kcfg_get(doc, entry, inner_key);
        }
    }
    return NULL;
}

/* A copy of s (NULL stays NULL). Relative paths are resolved against base_dir when one is given, as
 * kubectl resolves paths relative to the kubeconfig file that names them. */
static char *kcfg_dup_path(const char *s, const char *base_dir)
{
    if (!s)
        return NULL;
    return s[0] == '/' || !base_dir ? mem_strdup(s) : mem_printf("%s/%s", base_dir, s);
}

/* Decodes the base64 member key of node (if present) into *dst and *dst_len. what names the field in
 * error messages. */
static int kcfg_data(yaml_document_t *doc, yaml_node_t *node, const char *key, const char *source, const char *what,
                     char **dst, size_t *dst_len, struct zk_err *err)
{
    const char *v = kcfg_str(doc, node, key);
    int rc;

    if (!v)
        return ZK_OK;
    rc = kcfg_base64_decode(v, dst, dst_len);
    if (rc)
        return zk_err_set(err, rc, "kubeconfig %s: %s.%s is not valid base64", source, what, key);
    return ZK_OK;
}

/* The strings of a sequence of scalars as a NULL-terminated array (prefix, if not NULL, first), into
 * *out. what names the field for the error message. */
static int kcfg_strv(yaml_document_t *doc, yaml_node_t *seq, const char *prefix, const char *source,
                     const char *what, char ***out, struct zk_err *err)
{
    size_t n = 0, k = 0;
    char **v;
    int rc = ZK_OK;

    *out = NULL;
    if (seq && seq->type != YAML_SEQUENCE_NODE)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s must be a list", source, what);
    if (seq)
        n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    v = mem_calloc(n + 2, sizeof(*v));
    if (prefix)
        v[k++] = mem_strdup(prefix);
    for (size_t i = 0; i < n && rc == ZK_OK; i++) {
        yaml_node_t *item = yaml_document_get_node(doc, seq->data.sequence.items.start[i]);

        if (!item || item->type != YAML_SCALAR_NODE)
            rc = zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s[%zu] must be a string", source, what, i);
        else
            v[k++] = mem_strdup((const char *)item->data.scalar.value);
    }
    if (rc != ZK_OK) {
        for (char **p = v; *p; p++)
            free(*p);
        free(v);
        return rc;
    }
    *out = v;
    return ZK_OK;
}

/* users[].user.exec: command, args, env ({name, value} pairs), apiVersion, installHint. A command
 * with a '/' in it is relative to the kubeconfig's folder, as kubectl has it; a bare name is looked up
 * in PATH when the plugin runs. */
static int kcfg_exec(yaml_document_t *doc, yaml_node_t *node, const char *source, const char *base_dir,
                     const char *what, struct kube_exec **out, struct zk_err *err)
{
    const char *command = kcfg_str(doc, node, "command"), *api = kcfg_str(doc, node, "apiVersion");
    const char *mode = kcfg_str(doc, node, "interactiveMode"), *hint = kcfg_str(doc, node, "installHint");
    yaml_node_t *env = kcfg_get(doc, node, "env");
    struct kube_exec *x = NULL;
    char *path = NULL;
    size_t n = 0;
    int rc;

    *out = NULL;
    if (!command)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.exec.command is not set", source, what);
    if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
                 strcmp(api, "client.authentication.k8s.io/v1beta1") != 0))
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.exec.apiVersion must be client.authentication.k8s.io/v1 "
                          "or client.authentication.k8s.io/v1beta1, not \"%s\"", source, what, api ? api : "");
    if (mode && strcmp(mode, "Always") == 0)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.exec.interactiveMode is Always, but this program has no "
                          "terminal to ask from: use a plugin that runs unattended", source, what);
    if (env && env->type != YAML_SEQUENCE_NODE)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.exec.env must be a list of {name, value}", source, what);
    x = mem_calloc(1, sizeof(*x));
    path = kcfg_dup_path(command, strchr(command, '/') ? base_dir : NULL);
    {
        char field[320];

        snprintf(field, sizeof(field), "%.300s.exec.args", what);
        rc = kcfg_strv(doc, kcfg_get(doc, node, "args"), path, source, field, &x->argv, err);
        if (rc)
            goto out;
    }
    if (env)
        n = (size_t)(env->data.sequence.items.top - env->data.sequence.items.start);
    x->env = mem_calloc(n + 1, sizeof(*x->env));
    x->api_version = mem_strdup(api);
    x->install_hint = hint ? mem_strdup(hint) : NULL;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *e = yaml_document_get_node(doc, env->data.sequence.items.start[i]);
        const char *name = kcfg_str(doc, e, "name"), *value = kcfg_str(doc, e, "value");

        if (!name || strchr(name, '=')) {
            rc = zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.exec.env[%zu] needs a name without '='", source, what, i);
            goto out;
        }
        x->env[i] = mem_printf("%s=%s", name, value ? value : "");
    }
    *out = x;
    x = NULL;
    rc = ZK_OK;
out:
    free(path);
    kube_exec_free(x);
    return rc;
}

/* One parsed kubeconfig file. Several make up a $KUBECONFIG list, merged the way kubectl merges them:
 * the first file that sets current-context decides it, and a context, cluster or user is taken from
 * the first file that has one of that name, with its relative paths resolved against that file's
 * folder. */
struct kcfg_src {
    yaml_document_t doc;
    const char *source;   /* the file's path (or the caller's name for in-memory YAML) */
    const char *base_dir; /* relative paths resolve here; NULL: not at all */
};

/* kcfg_find_named over srcs in order: the first file with an entry of that name wins. *where is the
 * file it came from, NULL when none has one. */
static yaml_node_t *kcfg_find_in(struct kcfg_src *srcs, size_t n, const char *list_key, const char *name,
                                 const char *inner_key, struct kcfg_src **where)
{
    int found;

    *where = NULL;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *root = yaml_document_get_root_node(&srcs[i].doc);
        yaml_node_t *node = kcfg_find_named(&srcs[i].doc, root, list_key, name, inner_key, &found);

        if (found) {
            *where = &srcs[i];
            return node;
        }
    }
    return NULL;
}

/* Fills cfg from the files in srcs; label names them all in messages that concern none in particular. */
static int kcfg_from_documents(struct kcfg_src *srcs, size_t n, const char *label, const char *context,
                               struct kube_config *cfg, struct zk_err *err)
{
    struct kcfg_src *xs = NULL, *cs = NULL, *us = NULL;
    yaml_node_t *ctx, *cluster, *user, *provider, *exec;
    const char *ctx_name = context, *cluster_name, *user_name, *server, *ns, *insecure, *provider_name;
    char what[300];
    size_t len;
    int rc;

    for (size_t i = 0; i < n; i++) {
        yaml_node_t *root = yaml_document_get_root_node(&srcs[i].doc);

        if (!root || root->type != YAML_MAPPING_NODE)
            return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: not a YAML mapping", srcs[i].source);
        if (!ctx_name)
            ctx_name = kcfg_str(&srcs[i].doc, root, "current-context");
    }
    if (!ctx_name)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: current-context is not set and no context was named",
                          label);
    ctx = kcfg_find_in(srcs, n, "contexts", ctx_name, "context", &xs);
    if (!xs)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: context \"%s\" is not in contexts", label, ctx_name);
    cluster_name = kcfg_str(&xs->doc, ctx, "cluster");
    if (!cluster_name)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: contexts[%s].context.cluster is not set", xs->source,
                          ctx_name);
    user_name = kcfg_str(&xs->doc, ctx, "user");
    cluster = kcfg_find_in(srcs, n, "clusters", cluster_name, "cluster", &cs);
    if (!cs)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: context \"%s\" names cluster \"%s\", which is not in clusters",
                          label, ctx_name, cluster_name);
    user = NULL;
    us = xs; /* no user: nothing is read from it, but the pointer stays valid */
    if (user_name) {
        user = kcfg_find_in(srcs, n, "users", user_name, "user", &us);
        if (!us)
            return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: context \"%s\" names user \"%s\", which is not in users",
                              label, ctx_name, user_name);
    }

    server = kcfg_str(&cs->doc, cluster, "server");
    if (!server)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: clusters[%s].cluster.server is not set", cs->source,
                          cluster_name);
    cfg->server = mem_strdup(server);
    len = strlen(cfg->server);
    while (len > 0 && cfg->server[len - 1] == '/')
        cfg->server[--len] = '\0';

    snprintf(what, sizeof(what), "clusters[%s].cluster", cluster_name);
    rc = kcfg_data(&cs->doc, cluster, "certificate-authority-data", cs->source, what, &cfg->ca_pem, &cfg->ca_pem_len,
                   err);
    if (rc)
        return rc;
    cfg->ca_file = kcfg_dup_path(kcfg_str(&cs->doc, cluster, "certificate-authority"), cs->base_dir);
    insecure = kcfg_str(&cs->doc, cluster, "insecure-skip-tls-verify");
    if (insecure && strcmp(insecure, "true") != 0 && strcmp(insecure, "false") != 0)
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.insecure-skip-tls-verify must be true or false, not \"%s\"",
                          cs->source, what, insecure);
    cfg->insecure = insecure && strcmp(insecure, "true") == 0;

    snprintf(what, sizeof(what), "users[%s].user", user_name ? user_name : "");
    rc = kcfg_data(&us->doc, user, "client-certificate-data", us->source, what, &cfg->cert_pem, &cfg->cert_pem_len,
                   err);
    if (!rc)
        rc = kcfg_data(&us->doc, user, "client-key-data", us->source, what, &cfg->key_pem, &cfg->key_pem_len, err);
    if (rc)
        return rc;
    cfg->cert_file = kcfg_dup_path(kcfg_str(&us->doc, user, "client-certificate"), us->base_dir);
    cfg->key_file = kcfg_dup_path(kcfg_str(&us->doc, user, "client-key"), us->base_dir);
    cfg->token_file = kcfg_dup_path(kcfg_str(&us->doc, user, "tokenFile"), us->base_dir);
    cfg->token = kcfg_dup_path(kcfg_str(&us->doc, user, "token"), NULL);
    /* Auth providers (gcp, azure, oidc) were removed from kubectl in favour of exec plugins. Ignoring
     * one would send unauthenticated requests and report a puzzling 401 or 403 later. */
    provider = kcfg_get(&us->doc, user, "auth-provider");
    if (provider) {
        provider_name = kcfg_str(&us->doc, provider, "name");
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s.auth-provider (%s) is not supported: use an exec credential "
                          "plugin, which replaced auth providers in kubectl", us->source, what,
                          provider_name ? provider_name : "unnamed");
    }
    exec = kcfg_get(&us->doc, user, "exec");
    if (exec && (rc = kcfg_exec(&us->doc, exec, us->source, us->base_dir, what, &cfg->exec, err)) != ZK_OK)
        return rc;
    if ((cfg->cert_pem || cfg->cert_file) != (cfg->key_pem || cfg->key_file))
        return zk_err_set(err, ZK_EINVAL, "kubeconfig %s: %s has a client certificate without a client key or the "
                          "reverse", us->source, what);

    ns = kcfg_str(&xs->doc, ctx, "namespace");
    cfg->namespace = mem_strdup(ns ? ns : "default");
    return ZK_OK;
}

/* Parses yaml into src (which keeps source and base_dir, borrowed). On failure src holds nothing. */
static int kcfg_load_doc(const char *yaml, size_t len, const char *source, const char *base_dir,
                         struct kcfg_src *src, struct zk_err *err)
{
    yaml_parser_t parser;
    int rc = ZK_OK;

    memset(src, 0, sizeof(*src));
    /* libyaml cannot be given lib/mem's allocator and reports a failed allocation by return code. */
    if (!yaml_parser_initialize(&parser))
        mem_oom(sizeof(parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&parser, &src->doc)) {
        if (parser.error == YAML_MEMORY_ERROR)
            mem_oom(0);
        rc = zk_err_set(err, ZK_EINVAL, "kubeconfig %s: invalid YAML at line %zu: %s", source,
                        parser.problem_mark.line + 1, parser.problem ? parser.problem : "parse error");
    }
    yaml_parser_delete(&parser);
    src->source = source;
    src->base_dir = base_dir;
    return rc;
}

int kube_config_from_yaml(const char *yaml, size_t len, const char *source, const char *context,
                          struct kube_config *cfg, struct zk_err *err)
{
    struct kcfg_src src;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    rc = kcfg_load_doc(yaml, len, source, NULL, &src, err);
    if (rc)
        return rc;
    rc = kcfg_from_documents(&src, 1, source, context, cfg, err);
    yaml_document_delete(&src.doc);
    if (rc)
        kube_config_free(cfg);
    return rc;
}

/* The folder of path, for relative paths in it: a heap string. */
static char *kcfg_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return mem_strdup(".");
    if (slash == path)
        return mem_strdup("/");
    return mem_strndup(path, (size_t)(slash - path));
}

/* Reads, parses and merges the n files in paths (see struct kcfg_src); label names them together. */
static int kcfg_load_files(char *const *paths, size_t n, const char *label, const char *context,
                           struct kube_config *cfg, struct zk_err *err)
{
    struct kcfg_src srcs[KCFG_MAX_FILES];
    char *texts[KCFG_MAX_FILES] = {0}, *dirs[KCFG_MAX_FILES] = {0};
    size_t loaded = 0, len;
    int rc = ZK_OK;

    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < n && rc == ZK_OK; i++) {
        rc = kcfg_read_file(paths[i], &texts[i], &len, err);
        if (rc) {
            zk_err_prefix(err, "kubeconfig");
            break;
        }
        dirs[i] = kcfg_dir_of(paths[i]);
        rc = kcfg_load_doc(texts[i], len, paths[i], dirs[i], &srcs[i], err);
        if (rc == ZK_OK)
            loaded++;
    }
    if (rc == ZK_OK)
        rc = kcfg_from_documents(srcs, n, label, context, cfg, err);
    for (size_t i = 0; i < loaded; i++)
        yaml_document_delete(&srcs[i].doc);
    for (size_t i = 0; i < n; i++) {
        free(texts[i]);
        free(dirs[i]);
    }
    if (rc)
        kube_config_free(cfg);
    return rc;
}

int kube_config_from_file(const char *path, const char *context, struct kube_config *cfg, struct zk_err *err)
{
    char *paths[1] = {(char *)path};

    return kcfg_load_files(paths, 1, path, context, cfg, err);
}

/* A $KUBECONFIG list: its files that exist, merged; kubectl skips the missing ones too. */
static int kcfg_load_list(const char *list, const char *context, struct kube_config *cfg, struct zk_err *err)
{
    char *copy = mem_strdup(list), *paths[KCFG_MAX_FILES], *save = NULL, *p;
    size_t n = 0;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        if (access(p, F_OK) != 0)
            continue;
        if (n == KCFG_MAX_FILES) {
            free(copy);
            return zk_err_set(err, ZK_EINVAL, "KUBECONFIG=\"%s\" lists more than %d existing files", list,
                              KCFG_MAX_FILES);
        }
        paths[n++] = p;
    }
    rc = n ? kcfg_load_files(paths, n, list, context, cfg, err)
           : zk_err_set(err, ZK_EINVAL, "KUBECONFIG=\"%s\" names no file that exists", list);
    free(copy);
    return rc;
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config *cfg, struct zk_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    char path[4096];
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if (!sa_dir)
        sa_dir = KCFG_SA_DIR;
    if (!host || !*host || !port || !*port)
        return zk_err_set(err, ZK_EINVAL, "in-cluster configuration: KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must both be set");
    /* An IPv6 literal needs brackets in a URL, or its colons would be read as the port separator. */
    cfg->server = strchr(host, ':') ? mem_printf("https://[%s]:%s", host, port) : mem_printf("https://%s:%s", host, port);

    snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
    if (access(path, R_OK) != 0) {
        rc = zk_err_set(err, ZK_EIO, "in-cluster configuration: %s: %s", path, strerror(errno));
        goto out;
    }
    cfg->ca_file = mem_strdup(path);
    snprintf(path, sizeof(path), "%s/token", sa_dir);
    if (access(path, R_OK) != 0) {
        rc = zk_err_set(err, ZK_EIO, "in-cluster configuration: %s: %s", path, strerror(errno));
        goto out;
    }
    cfg->token_file = mem_strdup(path);
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    if (access(path, F_OK) == 0) {
        rc = textfile_first_line(path, KCFG_MAX_FILE, &cfg->namespace, err);
        if (rc) {
            zk_err_prefix(err, "in-cluster configuration");
            goto out;
        }
    }
    if (!cfg->namespace || !cfg->namespace[0]) {
        free(cfg->namespace);
        cfg->namespace = mem_strdup("default");
    }
    rc = ZK_OK;
out:
    if (rc)
        kube_config_free(cfg);
    return rc;
}

int kube_config_load(const char *explicit_path, const char *context, struct kube_config *cfg, struct zk_err *err)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    char path[4096];

    memset(cfg, 0, sizeof(*cfg));
    if (explicit_path && *explicit_path)
        return kube_config_from_file(explicit_path, context, cfg, err);
    if (env && *env)
        return kcfg_load_list(env, context, cfg, err);
    if (home && *home) {
        snprintf(path, sizeof(path), "%s/.kube/config", home);
        if (access(path, F_OK) == 0)
            return kube_config_from_file(path, context, cfg, err);
    }
    if (getenv("KUBERNETES_SERVICE_HOST"))
        return kube_config_in_cluster(NULL, cfg, err);
    return zk_err_set(err, ZK_EINVAL, "no Kubernetes configuration: no --kubeconfig, no KUBECONFIG, no %s/.kube/config "
                      "and not running in a cluster (KUBERNETES_SERVICE_HOST is unset)", home ? home : "$HOME");
}

/* A copy of the n bytes at s plus a terminator; NULL stays NULL. Decoded certificate data may hold
 * NUL bytes, so this copies by length, not as a string. */
static char *kcfg_dup_mem(const char *s, size_t n)
{
    char *d;

    if (!s)
        return NULL;
    d = mem_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* A copy of the string s; NULL stays NULL. */
static char *kcfg_dup_str(const char *s)
{
    return s ? mem_strdup(s) : NULL;
}

void kube_config_copy(const struct kube_config *src, struct kube_config *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->server = kcfg_dup_str(src->server);
    dst->ca_file = kcfg_dup_str(src->ca_file);
    dst->ca_pem = kcfg_dup_mem(src->ca_pem, src->ca_pem_len);
    dst->cert_file = kcfg_dup_str(src->cert_file);
    dst->cert_pem = kcfg_dup_mem(src->cert_pem, src->cert_pem_len);
    dst->key_file = kcfg_dup_str(src->key_file);
    dst->key_pem = kcfg_dup_mem(src->key_pem, src->key_pem_len);
    dst->token = kcfg_dup_str(src->token);
    dst->token_file = kcfg_dup_str(src->token_file);
    dst->namespace = kcfg_dup_str(src->namespace);
    dst->exec = kube_exec_copy(src->exec);
    dst->ca_pem_len = src->ca_pem_len;
    dst->cert_pem_len = src->cert_pem_len;
    dst->key_pem_len = src->key_pem_len;
    dst->insecure = src->insecure;
}
