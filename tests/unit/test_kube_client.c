/* Unit tests for lib/kube/client's pure parts: URL building and escaping, and the parsing of error
 * answers (Kubernetes Status bodies and anything else a server or proxy may send). No server needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "kube/client.h"

static const struct kube_resource CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", 1};
static const struct kube_resource DEPLOYMENTS = {"apps", "v1", "deployments", "Deployment", 1};
static const struct kube_resource CRDS = {"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                          "CustomResourceDefinition", 0};

static int client_setup(void **state)
{
    struct kube_config cfg = {0};
    struct kube_client *c = NULL;
    struct zk_err err;

    cfg.server = "https://127.0.0.1:6443";
    cfg.namespace = "team-a";
    if (kube_client_new(&cfg, 0, &c, &err) != ZK_OK)
        return -1;
    *state = c;
    return 0;
}

static int client_teardown(void **state)
{
    kube_client_free(*state);
    return 0;
}

/* Checks kube_url's result and frees it. */
static void expect_url(char *url, const char *want)
{
    assert_non_null(url);
    assert_string_equal(url, want);
    free(url);
}

static void test_paths(void **state)
{
    struct kube_client *c = *state;

    assert_string_equal(kube_client_namespace(c), "team-a");
    expect_url(kube_url(c, &CONFIGMAPS, "ns", "cm", NULL, NULL),
               "https://127.0.0.1:6443/api/v1/namespaces/ns/configmaps/cm");
    expect_url(kube_url(c, &DEPLOYMENTS, "ns", "web", "status", NULL),
               "https://127.0.0.1:6443/apis/apps/v1/namespaces/ns/deployments/web/status");
    /* A NULL namespace addresses every namespace. */
    expect_url(kube_url(c, &DEPLOYMENTS, NULL, NULL, NULL, NULL), "https://127.0.0.1:6443/apis/apps/v1/deployments");
    /* A cluster-scoped resource ignores a namespace. */
    expect_url(kube_url(c, &CRDS, "ns", "x.example.com", NULL, NULL),
               "https://127.0.0.1:6443/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com");
    /* A subresource needs an object. */
    expect_url(kube_url(c, &CONFIGMAPS, "ns", NULL, "status", NULL),
               "https://127.0.0.1:6443/api/v1/namespaces/ns/configmaps");
}

static void test_segments_are_escaped(void **state)
{
    struct kube_client *c = *state;

    /* Names cannot contain these on a real server, but a URL must never be built from raw input. */
    expect_url(kube_url(c, &CONFIGMAPS, "a b", "x/../y?z#", NULL, NULL),
               "https://127.0.0.1:6443/api/v1/namespaces/a%20b/configmaps/x%2F..%2Fy%3Fz%23");
}

static void test_query_values_are_escaped(void **state)
{
    struct kube_client *c = *state;
    const char *query[] = {"labelSelector", "app in (a,b),tier!=web,env=prod",
                           "fieldSelector", NULL, /* skipped */
                           "continue", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==",
                           "limit", "2",
                           NULL};

    expect_url(kube_url(c, &CONFIGMAPS, "ns", NULL, NULL, query),
               "https://127.0.0.1:6443/api/v1/namespaces/ns/configmaps"
               "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dweb%2Cenv%3Dprod"
               "&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ%3D%3D&limit=2");
    {
        const char *only_null[] = {"fieldSelector", NULL, NULL};

        expect_url(kube_url(c, &CONFIGMAPS, "ns", NULL, NULL, only_null),
                   "https://127.0.0.1:6443/api/v1/namespaces/ns/configmaps");
    }
}

static void test_server_without_trailing_slash_and_token_file(void **state)
{
    struct kube_config cfg = {0};
    struct kube_client *c = NULL;
    struct zk_err err;
    char path[] = "/tmp/test_kube_client.XXXXXX";
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "tok\n", 4), 4);
    close(fd);
    cfg.server = "https://[fd00::1]:443";
    cfg.token_file = path;
    assert_int_equal(kube_client_new(&cfg, 1000, &c, &err), ZK_OK);
    /* Without a namespace in the configuration, "default". */
    assert_string_equal(kube_client_namespace(c), "default");
    expect_url(kube_url(c, &CONFIGMAPS, "ns", NULL, NULL, NULL),
               "https://[fd00::1]:443/api/v1/namespaces/ns/configmaps");
    kube_client_free(c);

    /* An unreadable token file is reported when the client is made, not on first use. */
    unlink(path);
    assert_int_not_equal(kube_client_new(&cfg, 1000, &c, &err), ZK_OK);
    assert_null(c);
    assert_non_null(strstr(err.msg, path));

    cfg.server = NULL;
    assert_int_equal(kube_client_new(&cfg, 1000, &c, &err), ZK_EINVAL);
}

/* Parses body as the answer to "GET /x" with the given status. */
static int parse(long status, const char *body, long retry_header, struct kube_err *err)
{
    return kube_parse_status(status, body, strlen(body), retry_header, "GET /x", err);
}

static void test_status_reasons(void **state)
{
    static const struct {
        long status;
        const char *reason;
        enum kube_reason want;
    } cases[] = {
        {404, "NotFound", KUBE_REASON_NOT_FOUND},
        {409, "AlreadyExists", KUBE_REASON_ALREADY_EXISTS},
        {409, "Conflict", KUBE_REASON_CONFLICT},
        {400, "BadRequest", KUBE_REASON_BAD_REQUEST},
        {401, "Unauthorized", KUBE_REASON_UNAUTHORIZED},
        {403, "Forbidden", KUBE_REASON_FORBIDDEN},
        {410, "Gone", KUBE_REASON_GONE},
        {410, "Expired", KUBE_REASON_GONE},
        {405, "MethodNotAllowed", KUBE_REASON_METHOD_NOT_ALLOWED},
        {415, "UnsupportedMediaType", KUBE_REASON_UNSUPPORTED_MEDIA},
        {504, "Timeout", KUBE_REASON_SERVER_TIMEOUT},
        {500, "InternalError", KUBE_REASON_INTERNAL},
        {503, "ServiceUnavailable", KUBE_REASON_UNAVAILABLE},
        /* An unknown reason falls back to the HTTP status; an unknown status is OTHER. */
        {409, "SomethingNew", KUBE_REASON_CONFLICT},
        {418, "Teapot", KUBE_REASON_OTHER},
    };
    char body[512];
    struct kube_err err;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(body, sizeof(body),
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                 "\"message\":\"msg %zu\",\"reason\":\"%s\",\"code\":%ld}\n",
                 i, cases[i].reason, cases[i].status);
        assert_int_equal(parse(cases[i].status, body, -1, &err), ZK_EAPI);
        assert_int_equal(err.base.code, ZK_EAPI);
        assert_int_equal(err.reason, cases[i].want);
        assert_int_equal(err.http_status, cases[i].status);
        assert_string_equal(err.reason_text, cases[i].reason);
        snprintf(body, sizeof(body), "msg %zu", i);
        assert_string_equal(err.message, body);
        assert_int_equal(err.retry_after, -1);
        /* The one-line message names the request, the reason and the server's words. */
        assert_non_null(strstr(err.base.msg, "GET /x"));
        assert_non_null(strstr(err.base.msg, cases[i].reason));
        assert_non_null(strstr(err.base.msg, body));
    }
}

static void test_invalid_with_causes(void **state)
{
    /* What a 1.20 server answers for a ConfigMap named "Bad_Name". */
    const char *body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"ConfigMap \\\"Bad_Name\\\" is invalid: metadata.name: Invalid value: \\\"Bad_Name\\\": "
        "a lowercase RFC 1123 subdomain must consist of ...\",\"reason\":\"Invalid\","
        "\"details\":{\"name\":\"Bad_Name\",\"kind\":\"ConfigMap\",\"causes\":["
        "{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"Bad_Name\\\": bad\","
        "\"field\":\"metadata.name\"},"
        "{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\",\"field\":\"data.x\"}]},"
        "\"code\":422}";
    struct kube_err err;

    (void)state;
    assert_int_equal(parse(422, body, -1, &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_INVALID);
    assert_string_equal(err.causes, "metadata.name: Invalid value: \"Bad_Name\": bad; data.x: Required value");
    assert_non_null(strstr(err.message, "is invalid"));
}

static void test_retry_after(void **state)
{
    const char *with_details = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"slow down\","
                               "\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":7},\"code\":429}";
    const char *without = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"slow down\","
                          "\"reason\":\"TooManyRequests\",\"code\":429}";
    struct kube_err err;

    (void)state;
    assert_int_equal(parse(429, with_details, 3, &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_TOO_MANY_REQUESTS);
    assert_int_equal(err.retry_after, 7);
    assert_int_equal(parse(429, without, 3, &err), ZK_EAPI);
    assert_int_equal(err.retry_after, 3);
    assert_int_equal(parse(429, without, -1, &err), ZK_EAPI);
    assert_int_equal(err.retry_after, -1);
}

static void test_non_status_bodies(void **state)
{
    struct kube_err err;

    (void)state;
    /* A proxy's HTML page: the reason comes from the status, the message from the cleaned-up text. */
    assert_int_equal(parse(502, "<html>\r\n<body>\n\tBad   Gateway</body></html>\n", 9, &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_OTHER);
    assert_int_equal(err.http_status, 502);
    assert_string_equal(err.message, "<html> <body> Bad Gateway</body></html>");
    assert_int_equal(err.retry_after, 9);
    assert_null(strchr(err.base.msg, '\n'));

    /* Plain text, as some aggregated API servers send. */
    assert_int_equal(parse(503, "service unavailable\n", -1, &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_UNAVAILABLE);
    assert_string_equal(err.message, "service unavailable");

    /* JSON that is not a Status, and an empty body. */
    assert_int_equal(parse(404, "{\"error\":\"no\"}", -1, &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_NOT_FOUND);
    assert_string_equal(err.message, "{\"error\":\"no\"}");
    assert_int_equal(kube_parse_status(403, NULL, 0, -1, "GET /x", &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_FORBIDDEN);
    assert_string_equal(err.message, "HTTP 403 with an empty body");

    /* A very long message is cut in the one-line form but kept whole (up to its field) in message. */
    {
        char body[2048];
        size_t n = (size_t)snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"");

        memset(body + n, 'm', 900);
        snprintf(body + n + 900, sizeof(body) - n - 900, "\",\"code\":403}");
        assert_int_equal(parse(403, body, -1, &err), ZK_EAPI);
        assert_int_equal(strlen(err.message), 900);
        assert_true(strlen(err.base.msg) < sizeof(err.base.msg));
    }
}

static void test_watch_error_event_status(void **state)
{
    /* An ERROR event arrives inside a 200 stream; the Status's own code decides. */
    cJSON *st = cJSON_Parse("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                            "\"message\":\"too old resource version: 5 (120)\",\"reason\":\"Expired\",\"code\":410}");
    struct kube_err err;

    (void)state;
    assert_non_null(st);
    assert_int_equal(kube_parse_status_json(200, st, -1, "WATCH", &err), ZK_EAPI);
    assert_int_equal(err.http_status, 410);
    assert_int_equal(err.reason, KUBE_REASON_GONE);
    assert_string_equal(err.message, "too old resource version: 5 (120)");
    cJSON_Delete(st);

    /* A missing Status still yields an error with a message. */
    assert_int_equal(kube_parse_status_json(500, NULL, -1, "WATCH", &err), ZK_EAPI);
    assert_int_equal(err.reason, KUBE_REASON_INTERNAL);
    assert_true(err.message[0] != '\0');

    kube_err_clear(&err);
    assert_int_equal(err.base.code, ZK_OK);
    assert_int_equal(err.reason, KUBE_REASON_NONE);
    assert_int_equal(err.retry_after, -1);
}

/* /version as servers answer it: plain, with the "+" managed services append, and what is not 1.x. */
static void test_version_minor(void **state)
{
    static const struct {
        const char *json;
        int minor;
    } cases[] = {
        {"{\"major\":\"1\",\"minor\":\"20\",\"gitVersion\":\"v1.20.2\"}", 20},
        {"{\"major\":\"1\",\"minor\":\"29+\",\"gitVersion\":\"v1.29.10-eks-7f9249a\"}", 29},
        {"{\"major\":\"2\",\"minor\":\"0\"}", -1},
        {"{\"major\":\"1\",\"minor\":\"\"}", -1},
        {"{\"major\":\"1\",\"minor\":\"+\"}", -1},
        {"{\"major\":\"1\"}", -1},
        {"{}", -1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *v = cJSON_Parse(cases[i].json);

        assert_non_null(v);
        if (kube_parse_minor(v) != cases[i].minor)
            fail_msg("%s: got %d, want %d", cases[i].json, kube_parse_minor(v), cases[i].minor);
        cJSON_Delete(v);
    }
    assert_int_equal(kube_parse_minor(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_paths, client_setup, client_teardown),
        cmocka_unit_test_setup_teardown(test_segments_are_escaped, client_setup, client_teardown),
        cmocka_unit_test_setup_teardown(test_query_values_are_escaped, client_setup, client_teardown),
        cmocka_unit_test(test_server_without_trailing_slash_and_token_file),
        cmocka_unit_test(test_status_reasons),
        cmocka_unit_test(test_invalid_with_causes),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_non_status_bodies),
        cmocka_unit_test(test_watch_error_event_status),
        cmocka_unit_test(test_version_minor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
