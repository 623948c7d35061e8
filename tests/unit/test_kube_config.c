/* Unit tests for lib/kube/config: kubeconfig parsing (contexts, inline data, paths, every error the
 * loader reports) and the in-cluster configuration, all from text and temporary files in the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "kube/config.h"
#include "tests/support/tmpdir.h"

/* Two clusters, two users, three contexts: enough to tell which one was picked. */
static const char KUBECONFIG[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: admin@prod\n"
    "clusters:\n"
    "- name: prod\n"
    "  cluster:\n"
    "    server: https://prod.example:6443/\n"
    "    certificate-authority-data: |\n"
    "      LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0t\n"
    "      RU5EIENFUlRJRklDQVRFLS0tLS0K\n"
    "- name: dev\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:7443\n"
    "    certificate-authority: pki/ca.crt\n"
    "    insecure-skip-tls-verify: true\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: Q0xJRU5ULUNFUlQ=\n"
    "    client-key-data: Q0xJRU5ULUtFWQAB\n"
    "- name: robot\n"
    "  user:\n"
    "    token: s3cret\n"
    "    tokenFile: /var/run/token\n"
    "- name: filer\n"
    "  user:\n"
    "    client-certificate: certs/me.crt\n"
    "    client-key: /abs/me.key\n"
    "contexts:\n"
    "- name: admin@prod\n"
    "  context: {cluster: prod, user: admin}\n"
    "- name: robot@dev\n"
    "  context: {cluster: dev, user: robot, namespace: team-a}\n"
    "- name: filer@dev\n"
    "  context: {cluster: dev, user: filer}\n";

/* A cluster and a context for user u, whose definition the test appends. */
#define EXEC_PREFIX                                                                                              \
    "current-context: c\n"                                                                                       \
    "clusters:\n- {name: k, cluster: {server: 'https://x'}}\n"                                                   \
    "contexts:\n- {name: c, context: {cluster: k, user: u}}\n"                                                   \
    "users:\n- name: u\n"

static int parse(const char *text, const char *context, struct kube_config *cfg, struct zk_err *err)
{
    return kube_config_from_yaml(text, strlen(text), "test.yaml", context, cfg, err);
}

static void test_current_context_with_inline_data(void **state)
{
    struct kube_config cfg;
    struct zk_err err;

    (void)state;
    assert_int_equal(parse(KUBECONFIG, NULL, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://prod.example:6443");
    /* The wrapped base64 value decodes to the exact PEM text, kept in memory with its length. */
    assert_int_equal(cfg.ca_pem_len, strlen("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"));
    assert_memory_equal(cfg.ca_pem, "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n", cfg.ca_pem_len);
    assert_int_equal(cfg.cert_pem_len, 11);
    assert_memory_equal(cfg.cert_pem, "CLIENT-CERT", 11);
    /* Binary bytes survive decoding. */
    assert_int_equal(cfg.key_pem_len, 12);
    assert_memory_equal(cfg.key_pem, "CLIENT-KEY\0\1", 12);
    assert_null(cfg.ca_file);
    assert_null(cfg.token);
    assert_null(cfg.token_file);
    assert_string_equal(cfg.namespace, "default");
    assert_int_equal(cfg.insecure, 0);
    kube_config_free(&cfg);
    assert_null(cfg.server);
}

static void test_named_context_token_and_namespace(void **state)
{
    struct kube_config cfg;
    struct zk_err err;

    (void)state;
    assert_int_equal(parse(KUBECONFIG, "robot@dev", &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://127.0.0.1:7443");
    assert_string_equal(cfg.token, "s3cret");
    assert_string_equal(cfg.token_file, "/var/run/token");
    assert_string_equal(cfg.namespace, "team-a");
    assert_int_equal(cfg.insecure, 1);
    /* Without a file to be relative to, a relative path is kept as written. */
    assert_string_equal(cfg.ca_file, "pki/ca.crt");
    assert_null(cfg.ca_pem);
    assert_null(cfg.cert_pem);
    kube_config_free(&cfg);
}

static void test_copy_is_deep(void **state)
{
    struct kube_config cfg, copy;
    struct zk_err err;

    (void)state;
    assert_int_equal(parse(KUBECONFIG, NULL, &cfg, &err), ZK_OK);
    kube_config_copy(&cfg, &copy);
    assert_ptr_not_equal(copy.key_pem, cfg.key_pem);
    assert_int_equal(copy.key_pem_len, cfg.key_pem_len);
    assert_memory_equal(copy.key_pem, cfg.key_pem, cfg.key_pem_len);
    assert_string_equal(copy.server, cfg.server);
    kube_config_free(&cfg);
    assert_string_equal(copy.server, "https://prod.example:6443");
    kube_config_free(&copy);
}

/* Expects parsing to fail with ZK_EINVAL and a message containing every one of the given words. */
static void expect_error(const char *text, const char *context, const char *word1, const char *word2)
{
    struct kube_config cfg;
    struct zk_err err;

    zk_err_clear(&err);
    assert_int_equal(parse(text, context, &cfg, &err), ZK_EINVAL);
    assert_int_equal(err.code, ZK_EINVAL);
    assert_non_null(strstr(err.msg, "test.yaml"));
    if (!strstr(err.msg, word1) || (word2 && !strstr(err.msg, word2)))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", err.msg, word1, word2 ? word2 : "");
    /* A failed load leaves nothing to free. */
    assert_null(cfg.server);
    assert_null(cfg.ca_pem);
    assert_null(cfg.namespace);
}

static void test_errors_name_the_field(void **state)
{
    (void)state;
    expect_error("clusters: [\n  - {name: a\n", NULL, "invalid YAML", "line");
    expect_error("- just\n- a list\n", NULL, "not a YAML mapping", NULL);
    expect_error("clusters: []\nusers: []\ncontexts: []\n", NULL, "current-context", NULL);
    expect_error(KUBECONFIG, "nope", "context \"nope\"", "contexts");
    expect_error("current-context: c\ncontexts:\n- {name: c, context: {cluster: gone, user: u}}\n", NULL,
                 "cluster \"gone\"", "clusters");
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: 'https://x'}}\n"
                 "contexts:\n- {name: c, context: {cluster: k, user: ghost}}\n",
                 NULL, "user \"ghost\"", "users");
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {certificate-authority: /ca}}\n"
                 "contexts:\n- {name: c, context: {cluster: k}}\n",
                 NULL, "clusters[k].cluster.server", NULL);
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: 'https://x', certificate-authority-data: 'a$b='}}\n"
                 "contexts:\n- {name: c, context: {cluster: k}}\n",
                 NULL, "clusters[k].cluster.certificate-authority-data", "base64");
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: 'https://x'}}\n"
                 "users:\n- {name: u, user: {client-key-data: 'QQ=A'}}\n"
                 "contexts:\n- {name: c, context: {cluster: k, user: u}}\n",
                 NULL, "users[u].user.client-key-data", "base64");
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: 'https://x', insecure-skip-tls-verify: maybe}}\n"
                 "contexts:\n- {name: c, context: {cluster: k}}\n",
                 NULL, "insecure-skip-tls-verify", "maybe");
    expect_error("current-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: 'https://x'}}\n"
                 "users:\n- {name: u, user: {client-certificate: /c.crt}}\n"
                 "contexts:\n- {name: c, context: {cluster: k, user: u}}\n",
                 NULL, "users[u].user", "client key");
    expect_error(EXEC_PREFIX "  user: {auth-provider: {name: gcp}}\n", NULL, "users[u].user.auth-provider (gcp)",
                 "exec credential plugin");
    expect_error(EXEC_PREFIX "  user: {exec: {apiVersion: client.authentication.k8s.io/v1}}\n", NULL,
                 "users[u].user.exec.command", NULL);
    expect_error(EXEC_PREFIX "  user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1alpha1}}\n", NULL,
                 "users[u].user.exec.apiVersion", "v1alpha1");
    expect_error(EXEC_PREFIX "  user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1,"
                 " interactiveMode: Always}}\n", NULL, "interactiveMode is Always", "terminal");
    expect_error(EXEC_PREFIX "  user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1, args: x}}\n",
                 NULL, "users[u].user.exec.args must be a list", NULL);
    expect_error(EXEC_PREFIX "  user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1,"
                 " env: [{value: v}]}}\n", NULL, "users[u].user.exec.env[0]", "name");
}

/* An exec plugin as `aws eks update-kubeconfig` writes it. */
static void test_exec_plugin(void **state)
{
    struct kube_config cfg, copy;
    struct zk_err err;

    (void)state;
    assert_int_equal(parse(EXEC_PREFIX "  user:\n"
                           "    exec:\n"
                           "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                           "      command: aws\n"
                           "      args: [--region, eu-west-1, eks, get-token, --cluster-name, org]\n"
                           "      env:\n"
                           "      - {name: AWS_PROFILE, value: platform}\n"
                           "      - {name: EMPTY}\n"
                           "      installHint: install the AWS CLI\n"
                           "      interactiveMode: IfAvailable\n",
                           NULL, &cfg, &err),
                     ZK_OK);
    assert_non_null(cfg.exec);
    assert_string_equal(cfg.exec->argv[0], "aws"); /* a bare name: looked up in PATH when it runs */
    assert_string_equal(cfg.exec->argv[1], "--region");
    assert_string_equal(cfg.exec->argv[6], "org");
    assert_null(cfg.exec->argv[7]);
    assert_string_equal(cfg.exec->env[0], "AWS_PROFILE=platform");
    assert_string_equal(cfg.exec->env[1], "EMPTY=");
    assert_null(cfg.exec->env[2]);
    assert_string_equal(cfg.exec->api_version, "client.authentication.k8s.io/v1beta1");
    assert_string_equal(cfg.exec->install_hint, "install the AWS CLI");
    kube_config_copy(&cfg, &copy);
    kube_config_free(&cfg);
    assert_string_equal(copy.exec->argv[6], "org");
    assert_string_equal(copy.exec->env[0], "AWS_PROFILE=platform");
    kube_config_free(&copy);
}

/* Each test that touches files gets a folder of its own (a struct tmpdir in *state); the environment
 * variables the tests set go with it. */
static int config_teardown(void **state)
{
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    return tmpdir_teardown(state);
}

/* Writes text to dir/name (mode 0644) and returns the path in a static buffer. */
static const char *write_file(const char *dir, const char *name, const char *text)
{
    return tmpdir_write(dir, name, text, 0644);
}

static void test_file_paths_are_relative_to_the_file(void **state)
{
    struct tmpdir *t = *state;
    struct kube_config cfg;
    struct zk_err err;
    char want[512];
    const char *path = write_file(t->dir, "config", KUBECONFIG);

    assert_int_equal(kube_config_from_file(path, "filer@dev", &cfg, &err), ZK_OK);
    snprintf(want, sizeof(want), "%s/pki/ca.crt", t->dir);
    assert_string_equal(cfg.ca_file, want);
    snprintf(want, sizeof(want), "%s/certs/me.crt", t->dir);
    assert_string_equal(cfg.cert_file, want);
    assert_string_equal(cfg.key_file, "/abs/me.key");
    kube_config_free(&cfg);

    /* An exec command with a '/' is relative to the file too; kubectl does the same. */
    path = write_file(t->dir, "exec-config",
                      EXEC_PREFIX "  user: {exec: {command: bin/get-token, apiVersion: client.authentication.k8s.io/v1}}\n");
    assert_int_equal(kube_config_from_file(path, NULL, &cfg, &err), ZK_OK);
    snprintf(want, sizeof(want), "%s/bin/get-token", t->dir);
    assert_string_equal(cfg.exec->argv[0], want);
    assert_null(cfg.exec->argv[1]);
    kube_config_free(&cfg);
}

static void test_load_order(void **state)
{
    struct tmpdir *t = *state;
    struct kube_config cfg;
    struct zk_err err;
    char env[600], home[600];
    const char *path = write_file(t->dir, "explicit", KUBECONFIG);
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

    /* An explicit path wins over $KUBECONFIG. */
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    assert_int_equal(kube_config_load(path, NULL, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://prod.example:6443");
    kube_config_free(&cfg);

    /* $KUBECONFIG: missing files are skipped, as kubectl skips them; none at all is an error naming
     * the list. */
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "KUBECONFIG=\"/nonexistent/kubeconfig\" names no file that exists"));
    snprintf(env, sizeof(env), "/nonexistent/first:%s:/nonexistent/second", path);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, "robot@dev", &cfg, &err), ZK_OK);
    assert_string_equal(cfg.namespace, "team-a");
    kube_config_free(&cfg);

    /* Without $KUBECONFIG: ~/.kube/config. */
    unsetenv("KUBECONFIG");
    snprintf(home, sizeof(home), "%s/.kube", t->dir);
    assert_int_equal(mkdir(home, 0700), 0);
    write_file(home, "config", KUBECONFIG);
    setenv("HOME", t->dir, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://prod.example:6443");
    kube_config_free(&cfg);

    /* Nothing at all: a message saying what was looked for. */
    snprintf(home, sizeof(home), "%s/empty-home", t->dir);
    setenv("HOME", home, 1);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_HOST"));
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);
}

/* A $KUBECONFIG list is merged as kubectl merges it: the first file that sets current-context decides
 * it, the first file with an entry of a name provides it, and relative paths resolve against the
 * folder of the file the entry came from. */
static void test_kubeconfig_list_is_merged(void **state)
{
    struct tmpdir *t = *state;
    struct kube_config cfg;
    struct zk_err err;
    char env[1400], sub[600], want[700], first[600];

    snprintf(sub, sizeof(sub), "%s/eks", t->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(first, sizeof(first), "%s", write_file(t->dir, "personal",
                                                    "current-context: work\n"
                                                    "contexts:\n- {name: work, context: {cluster: eks, user: me, namespace: search}}\n"
                                                    "users:\n- {name: me, user: {client-certificate: me.crt, client-key: me.key}}\n"));
    write_file(sub, "config",
               "current-context: other\n"
               "clusters:\n- {name: eks, cluster: {server: 'https://eks.example', certificate-authority: ca.crt}}\n"
               "users:\n- {name: me, user: {token: not-this-one}}\n"
               "contexts:\n- {name: other, context: {cluster: eks}}\n");
    snprintf(env, sizeof(env), "%s:/nonexistent:%s/config", first, sub);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://eks.example");
    assert_string_equal(cfg.namespace, "search");
    snprintf(want, sizeof(want), "%s/ca.crt", sub);
    assert_string_equal(cfg.ca_file, want);
    snprintf(want, sizeof(want), "%s/me.crt", t->dir);
    assert_string_equal(cfg.cert_file, want);
    assert_null(cfg.token); /* the first "me" wins, whole: the second file's token is not mixed in */
    kube_config_free(&cfg);

    /* A context that is in no file: the message names the whole list. */
    assert_int_equal(kube_config_load(NULL, "nowhere", &cfg, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, env));
    assert_non_null(strstr(err.msg, "context \"nowhere\""));
}

static void test_in_cluster(void **state)
{
    struct tmpdir *t = *state;
    struct kube_config cfg;
    struct zk_err err;
    char want[512];

    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_in_cluster(t->dir, &cfg, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_HOST"));

    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    /* No ca.crt yet: the message names the file. */
    assert_int_equal(kube_config_in_cluster(t->dir, &cfg, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "ca.crt"));
    write_file(t->dir, "ca.crt", "PEM");
    assert_int_equal(kube_config_in_cluster(t->dir, &cfg, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "token"));
    write_file(t->dir, "token", "tok\n");

    /* No namespace file: "default". */
    assert_int_equal(kube_config_in_cluster(t->dir, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://10.0.0.1:443");
    snprintf(want, sizeof(want), "%s/ca.crt", t->dir);
    assert_string_equal(cfg.ca_file, want);
    snprintf(want, sizeof(want), "%s/token", t->dir);
    assert_string_equal(cfg.token_file, want);
    assert_null(cfg.token); /* kept as a file so that rotation is seen */
    assert_string_equal(cfg.namespace, "default");
    assert_int_equal(cfg.insecure, 0);
    kube_config_free(&cfg);

    /* IPv6 hosts are bracketed; the namespace file is trimmed. */
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10::1", 1);
    write_file(t->dir, "namespace", "  codesearch\n");
    assert_int_equal(kube_config_in_cluster(t->dir, &cfg, &err), ZK_OK);
    assert_string_equal(cfg.server, "https://[fd00:10::1]:443");
    assert_string_equal(cfg.namespace, "codesearch");
    kube_config_free(&cfg);

    /* kube_config_load falls back to in-cluster when no kubeconfig exists. */
    {
        char home[600], *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

        snprintf(home, sizeof(home), "%s/nohome", t->dir);
        setenv("HOME", home, 1);
        unsetenv("KUBECONFIG");
        /* The default service-account directory does not exist here, so the error names it. */
        assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), ZK_EIO);
        assert_non_null(strstr(err.msg, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"));
        if (saved_home)
            setenv("HOME", saved_home, 1);
        free(saved_home);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context_with_inline_data),
        cmocka_unit_test(test_named_context_token_and_namespace),
        cmocka_unit_test(test_copy_is_deep),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_exec_plugin),
        cmocka_unit_test_setup_teardown(test_file_paths_are_relative_to_the_file, tmpdir_setup, config_teardown),
        cmocka_unit_test_setup_teardown(test_load_order, tmpdir_setup, config_teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_list_is_merged, tmpdir_setup, config_teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, tmpdir_setup, config_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
