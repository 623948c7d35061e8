/* fuzz_kube_config.c: kube_config_from_yaml (lib/kube/config.h) on arbitrary kubeconfig text, which a
 * user or a mounted Secret supplies.
 *
 * Input: byte 0 chooses the context (odd: the named context "dev"; even: current-context), the rest is
 * the YAML. Asserted:
 * - on failure the result is a negative code equal to err.code, the message is NUL-terminated, names
 *   the source, and the config is left empty (every pointer NULL);
 * - on success the server is set and has no trailing slash, the namespace is a non-empty string,
 *   insecure is 0 or 1, decoded certificate data is NUL-terminated at its length, a client certificate
 *   comes with a client key and the reverse, an exec plugin has a command and a known apiVersion, and
 *   kube_config_copy reproduces every field. */
#include "tests/fuzz/fuzz.h"

#include "err.h"
#include "kube/config.h"

#include <string.h>

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same_mem(const char *a, const char *b, size_t n)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && memcmp(a, b, n) == 0);
}

static void check_pem(const char *pem, size_t len)
{
    FUZZ_CHECK(pem != NULL || len == 0);
    FUZZ_CHECK(pem == NULL || pem[len] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_config cfg, copy, empty;
    struct zk_err err;
    size_t n;
    int rc;

    if (size < 1)
        return 0;
    memset(&empty, 0, sizeof(empty));
    zk_err_clear(&err);
    rc = kube_config_from_yaml((const char *)data + 1, size - 1, "fuzz", data[0] & 1 ? "dev" : NULL, &cfg, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc < 0 && err.code == rc);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL && strstr(err.msg, "fuzz") != NULL);
        FUZZ_CHECK(memcmp(&cfg, &empty, sizeof(cfg)) == 0);
        return 0;
    }
    FUZZ_CHECK(cfg.server != NULL);
    n = strlen(cfg.server);
    FUZZ_CHECK(n == 0 || cfg.server[n - 1] != '/');
    FUZZ_CHECK(cfg.namespace != NULL && cfg.namespace[0] != '\0');
    FUZZ_CHECK(cfg.insecure == 0 || cfg.insecure == 1);
    check_pem(cfg.ca_pem, cfg.ca_pem_len);
    check_pem(cfg.cert_pem, cfg.cert_pem_len);
    check_pem(cfg.key_pem, cfg.key_pem_len);
    FUZZ_CHECK((cfg.cert_pem != NULL || cfg.cert_file != NULL) == (cfg.key_pem != NULL || cfg.key_file != NULL));

    kube_config_copy(&cfg, &copy);
    FUZZ_CHECK(same_str(cfg.server, copy.server) && same_str(cfg.namespace, copy.namespace));
    FUZZ_CHECK(same_str(cfg.ca_file, copy.ca_file) && same_str(cfg.cert_file, copy.cert_file));
    FUZZ_CHECK(same_str(cfg.key_file, copy.key_file) && same_str(cfg.token, copy.token));
    FUZZ_CHECK(same_str(cfg.token_file, copy.token_file) && cfg.insecure == copy.insecure);
    FUZZ_CHECK(cfg.ca_pem_len == copy.ca_pem_len && same_mem(cfg.ca_pem, copy.ca_pem, cfg.ca_pem_len));
    FUZZ_CHECK(cfg.cert_pem_len == copy.cert_pem_len && same_mem(cfg.cert_pem, copy.cert_pem, cfg.cert_pem_len));
    FUZZ_CHECK(cfg.key_pem_len == copy.key_pem_len && same_mem(cfg.key_pem, copy.key_pem, cfg.key_pem_len));
    FUZZ_CHECK((cfg.exec == NULL) == (copy.exec == NULL));
    if (cfg.exec) {
        size_t i;

        /* A parsed plugin always has a command, a known apiVersion and an env array. */
        FUZZ_CHECK(cfg.exec->argv && cfg.exec->argv[0] && cfg.exec->argv[0][0] && cfg.exec->env);
        FUZZ_CHECK(strcmp(cfg.exec->api_version, "client.authentication.k8s.io/v1") == 0 ||
                   strcmp(cfg.exec->api_version, "client.authentication.k8s.io/v1beta1") == 0);
        for (i = 0; cfg.exec->argv[i]; i++)
            FUZZ_CHECK(same_str(cfg.exec->argv[i], copy.exec->argv[i]));
        FUZZ_CHECK(copy.exec->argv[i] == NULL);
        for (i = 0; cfg.exec->env[i]; i++)
            FUZZ_CHECK(strchr(cfg.exec->env[i], '=') && same_str(cfg.exec->env[i], copy.exec->env[i]));
        FUZZ_CHECK(copy.exec->env[i] == NULL);
        FUZZ_CHECK(same_str(cfg.exec->install_hint, copy.exec->install_hint));
    }
    kube_config_free(&copy);
    kube_config_free(&cfg);
    FUZZ_CHECK(memcmp(&cfg, &empty, sizeof(cfg)) == 0);
    return 0;
}
