/* Unit tests for lib/kube/exec: the ExecCredential parser on a table of outputs, and real plugins
 * (small shell scripts written by the test) run the way the Kubernetes client runs them: a token with
 * an expiry, the environment they are given, and every way a plugin can fail. */
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
#include "kube/exec.h"
#include "tests/support/tmpdir.h"

#define V1 "client.authentication.k8s.io/v1"

struct parse_case {
    const char *output;
    int code;            /* expected result */
    const char *token;   /* on success */
    time_t expiry;       /* on success */
    const char *message; /* a word of the message on failure */
};

static void test_parse_table(void **state)
{
    static const struct parse_case cases[] = {
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"token\":\"k8s-aws-v1.abc\"}}", ZK_OK,
         "k8s-aws-v1.abc", 0, NULL},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"token\":\"t\","
         "\"expirationTimestamp\":\"2026-11-30T05:00:00Z\"}}",
         ZK_OK, "t", 1796014800, NULL},
        {"not json", ZK_EPARSE, NULL, 0, "not a JSON object"},
        {"[]", ZK_EPARSE, NULL, 0, "not a JSON object"},
        {"{\"kind\":\"Status\",\"apiVersion\":\"" V1 "\"}", ZK_EPARSE, NULL, 0, "kind \"Status\""},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
         "\"status\":{\"token\":\"t\"}}",
         ZK_EPARSE, NULL, 0, "apiVersion \"client.authentication.k8s.io/v1beta1\""},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\"}", ZK_EPARSE, NULL, 0, "no status.token"},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"token\":\"\"}}", ZK_EPARSE, NULL, 0,
         "no status.token"},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"clientCertificateData\":\"PEM\","
         "\"clientKeyData\":\"PEM\"}}",
         ZK_EPARSE, NULL, 0, "client certificate"},
        {"{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\",\"status\":{\"token\":\"t\","
         "\"expirationTimestamp\":\"tomorrow\"}}",
         ZK_EPARSE, NULL, 0, "\"tomorrow\" is not an RFC 3339 time"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct parse_case *c = &cases[i];
        struct kube_exec_cred cred;
        struct zk_err err;
        int rc;

        zk_err_clear(&err);
        rc = kube_exec_parse(c->output, strlen(c->output), V1, &cred, &err);
        if (rc != c->code)
            fail_msg("case %zu: got %d (%s), want %d", i, rc, err.msg, c->code);
        if (rc == ZK_OK) {
            assert_string_equal(cred.token, c->token);
            assert_int_equal(cred.expiry, c->expiry);
        } else {
            assert_null(cred.token);
            if (!strstr(err.msg, c->message))
                fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.msg, c->message);
        }
        kube_exec_cred_free(&cred);
    }
}

/* Writes an executable shell script dir/name with body and returns its path in a static buffer. */
static const char *write_plugin(const char *dir, const char *name, const char *body)
{
    char script[2048];

    snprintf(script, sizeof(script), "#!/bin/sh\n%s", body);
    return tmpdir_write(dir, name, script, 0755);
}

/* Runs the plugin at path with args and env; returns the result code and fills cred and err. */
static int run(const char *path, char **extra_args, char **env, long timeout_ms, struct kube_exec_cred *cred,
               struct zk_err *err)
{
    char *argv[8] = {(char *)path};
    struct kube_exec x = {.argv = argv, .env = env, .api_version = V1, .install_hint = "see the runbook"};

    for (int i = 0; extra_args && extra_args[i] && i < 6; i++)
        argv[i + 1] = extra_args[i];
    zk_err_clear(err);
    return kube_exec_run(&x, timeout_ms, cred, err);
}

/* The plugin sees its args, the kubeconfig's env and KUBERNETES_EXEC_INFO, and not a terminal: its
 * token here is made of what it saw. */
static void test_run_passes_args_env_and_exec_info(void **state)
{
    struct tmpdir *t = *state;
    struct kube_exec_cred cred;
    struct zk_err err;
    char *args[] = {"--cluster-name", "org", NULL}, *env[] = {"AWS_PROFILE=platform", NULL};
    const char *p = write_plugin(t->dir, "plugin",
                                 "interactive=$(echo \"$KUBERNETES_EXEC_INFO\" | grep -c '\"interactive\":false')\n"
                                 "read line && stdin=tty || stdin=null\n"
                                 "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1 "\","
                                 "\"status\":{\"token\":\"%s-%s-%s-%s-%s\",\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}'"
                                 " \"$1\" \"$2\" \"$AWS_PROFILE\" \"$interactive\" \"$stdin\"\n");

    assert_int_equal(run(p, args, env, 10000, &cred, &err), ZK_OK);
    assert_string_equal(cred.token, "--cluster-name-org-platform-1-null");
    assert_int_equal(cred.expiry, 1893456000);
    kube_exec_cred_free(&cred);
    assert_null(cred.token);
}

static void test_run_failures_say_what_happened(void **state)
{
    struct tmpdir *t = *state;
    struct kube_exec_cred cred;
    struct zk_err err;
    char missing[600];
    const char *p;

    snprintf(missing, sizeof(missing), "%s/no-such-plugin", t->dir);
    assert_int_equal(run(missing, NULL, NULL, 10000, &cred, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "could not be started"));
    assert_non_null(strstr(err.msg, "see the runbook")); /* the install hint */

    p = write_plugin(t->dir, "denied", "echo 'error: SSO session expired' >&2\necho 'run aws sso login' >&2\nexit 3\n");
    assert_int_equal(run(p, NULL, NULL, 10000, &cred, &err), ZK_EIO);
    assert_non_null(strstr(err.msg, "exited with status 3: error: SSO session expired run aws sso login"));

    p = write_plugin(t->dir, "garbage", "echo 'Enter MFA code:'\n");
    assert_int_equal(run(p, NULL, NULL, 10000, &cred, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "garbage: its output is not a JSON object"));

    /* A plugin that waits for ever (a prompt nobody answers) is killed at the deadline: the run ends
     * after 300 ms, not after the 30 s sleep. */
    p = write_plugin(t->dir, "stuck", "exec sleep 30\n");
    assert_int_equal(run(p, NULL, NULL, 300, &cred, &err), ZK_ETIMEOUT);
    assert_non_null(strstr(err.msg, "stuck: it did not finish in time"));

    p = write_plugin(t->dir, "chatty", "yes '{}' | head -c 2000000\n");
    assert_int_equal(run(p, NULL, NULL, 10000, &cred, &err), ZK_ETOOBIG);
    assert_null(cred.token);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test_setup_teardown(test_run_passes_args_env_and_exec_info, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_run_failures_say_what_happened, tmpdir_setup, tmpdir_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
