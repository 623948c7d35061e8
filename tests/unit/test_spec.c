/* test_spec.c: parsing, defaulting and validation of a CodeSearchCorpus spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "controller/corpus/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a corpus whose spec is the given JSON text. */
static int parse_spec(const char *spec_json, struct corpus_spec **out, struct spec_errors *errs)
{
    char doc[16384];
    cJSON *corpus;
    int rc;

    snprintf(doc, sizeof(doc), "{\"metadata\":{\"name\":\"org\",\"namespace\":\"cs\"},\"spec\":%s}", spec_json);
    corpus = cJSON_Parse(doc);
    assert_non_null(corpus);
    rc = spec_parse(corpus, NULL, out, errs);
    cJSON_Delete(corpus);
    return rc;
}

/* Asserts the spec is rejected with exactly one error on field whose message contains needle. */
static void expect_one_error(const char *spec_json, const char *field, const char *needle)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    int rc = parse_spec(spec_json, &s, &errs);

    if (rc != ZK_EINVAL || errs.count != 1)
        fail_msg("spec %s: rc %d, %d errors (first: %s: %s)", spec_json, rc, errs.count,
                 errs.count ? errs.items[0].field : "-", errs.count ? errs.items[0].message : "-");
    assert_null(s);
    assert_string_equal(errs.items[0].field, field);
    if (!strstr(errs.items[0].message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", errs.items[0].message, needle);
}

#define ONE_REPO "\"repositories\":[{\"url\":\"https://github.com/org/a\"}]"

static void test_defaults(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO "}", &s, &errs), ZK_OK);
    assert_int_equal(errs.count, 0);
    assert_int_equal(s->nrepos, 1);
    assert_string_equal(s->repos[0].name, "github.com/org/a");
    assert_null(s->repos[0].branches[0]);
    assert_null(s->credentials_secret);
    assert_string_equal(s->schedule, "0 3 * * *");
    assert_null(s->time_zone);
    assert_int_equal(s->suspend, 0);
    assert_string_equal(s->storage.storage_class, "efs-sc");
    assert_string_equal(s->storage.size, "100Gi");
    assert_null(s->storage.existing_claim);
    assert_int_equal(s->storage.on_delete, PVC_RETAIN);
    assert_string_equal(s->indexer.image, SPEC_DEFAULT_ZOEKT_IMAGE);
    assert_int_equal(s->indexer.deadline_seconds, 14400);
    assert_int_equal(s->indexer.fetch_stall_seconds, 60);
    assert_null(s->indexer.extra_flags[0]);
    assert_null(s->indexer.resources);
    assert_int_equal(s->indexer.symbols, 1);
    assert_int_equal(s->webserver.replicas, 1);
    assert_int_equal(s->webserver.shards, 1);
    assert_string_equal(s->webserver.architecture, "arm64");
    assert_int_equal(s->gateway.port, 8080);
    assert_null(s->gateway.tokens_secret);
    assert_int_equal(s->connector.max_files, 30);
    assert_int_equal(s->connector.context_lines, 2);
    assert_int_equal(s->connector.search_timeout_seconds, 30);
    assert_int_equal(s->connector.list_timeout_seconds, 10);
    assert_null(s->connector.mirror_prefix);
    assert_int_equal(s->freshness_max_age_seconds, 36 * 3600);
    assert_int_equal(s->poll_interval_seconds, 300);
    spec_free(s);
}

/* The operator's --zoekt-image, --connector-image and --gateway-image (a release's digests) fill
 * the images a corpus leaves out, and only those: an image the corpus names wins. */
static void test_default_images(void **state)
{
    static const struct spec_defaults released = {.zoekt = "reg.example/zoekt:1.2.3@sha256:aa",
                                                  .connector = "reg.example/zoekt-connector:1.2.3@sha256:bb",
                                                  .gateway = "reg.example/zoekt-gateway:1.2.3@sha256:cc"};
    static const struct spec_defaults only_zoekt = {.zoekt = "reg.example/zoekt:1.2.3@sha256:aa"};
    char doc[512];
    cJSON *corpus;
    struct corpus_spec *s = NULL;
    struct spec_errors errs;

    (void)state;
    snprintf(doc, sizeof(doc), "{\"spec\":{%s,\"webserver\":{\"image\":\"mine/zoekt:9\"}}}", ONE_REPO);
    corpus = cJSON_Parse(doc);
    assert_non_null(corpus);
    assert_int_equal(spec_parse(corpus, &released, &s, &errs), ZK_OK);
    assert_string_equal(s->indexer.image, released.zoekt);
    assert_string_equal(s->webserver.image, "mine/zoekt:9");
    assert_string_equal(s->connector.image, released.connector);
    assert_string_equal(s->gateway.image, released.gateway);
    spec_free(s);
    assert_int_equal(spec_parse(corpus, &only_zoekt, &s, &errs), ZK_OK);
    assert_string_equal(s->connector.image, SPEC_DEFAULT_CONNECTOR_IMAGE);
    assert_string_equal(s->gateway.image, SPEC_DEFAULT_NGINX_IMAGE);
    spec_free(s);
    cJSON_Delete(corpus);
}

static void test_full_spec(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    const char *json =
        "{\"repositories\":["
        "{\"url\":\"https://GitHub.com/org/a.git\",\"branches\":[\"main\",\"release/1.x\"]},"
        "{\"url\":\"git@gitlab.example.com:team/b.git\"},"
        "{\"url\":\"ssh://git@git.example.com:2222/c/d\"},"
        "{\"url\":\"file:///srv/git/e.git\",\"name\":\"local/e\"}],"
        "\"gitCredentialsSecretRef\":{\"name\":\"git-creds\"},"
        "\"schedule\":\"*/15 1-5,22 ? JAN-mar MON-FRI\",\"timeZone\":\"Europe/Berlin\",\"suspend\":true,"
        "\"storage\":{\"storageClassName\":\"gp3\",\"size\":\"2Ti\",\"onDelete\":\"Delete\"},"
        "\"indexer\":{\"image\":\"example/zoekt:1\",\"activeDeadlineSeconds\":3600,"
        "\"extraFlags\":[\"-submodules=false\",\"-parallelism=2\"],\"resources\":{\"limits\":{\"memory\":\"8Gi\"}}},"
        "\"webserver\":{\"replicas\":2,\"architecture\":\"amd64\",\"nodeSelector\":{\"pool\":\"search\"},"
        "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]},"
        "\"gateway\":{\"port\":9090,\"tokenSecretRef\":{\"name\":\"tokens\"}},"
        "\"connector\":{\"maxFiles\":50,\"contextLines\":0,\"searchTimeoutSeconds\":20,\"listTimeoutSeconds\":5,"
        "\"mirrorPrefix\":\"github.com/\"},"
        "\"freshness\":{\"maxAge\":\"1h30m\"},\"poll\":{\"interval\":\"1m30s\"}}";

    (void)state;
    assert_int_equal(parse_spec(json, &s, &errs), ZK_OK);
    assert_int_equal(s->nrepos, 4);
    assert_string_equal(s->repos[0].name, "github.com/org/a");
    assert_string_equal(s->repos[0].branches[0], "main");
    assert_string_equal(s->repos[0].branches[1], "release/1.x");
    assert_null(s->repos[0].branches[2]);
    assert_string_equal(s->repos[1].name, "gitlab.example.com/team/b");
    assert_string_equal(s->repos[2].name, "git.example.com/c/d");
    assert_string_equal(s->repos[3].name, "local/e");
    assert_string_equal(s->credentials_secret, "git-creds");
    assert_string_equal(s->time_zone, "Europe/Berlin");
    assert_int_equal(s->suspend, 1);
    assert_string_equal(s->storage.storage_class, "gp3");
    assert_string_equal(s->storage.size, "2Ti");
    assert_int_equal(s->storage.on_delete, PVC_DELETE);
    assert_string_equal(s->indexer.image, "example/zoekt:1");
    assert_int_equal(s->indexer.deadline_seconds, 3600);
    assert_string_equal(s->indexer.extra_flags[1], "-parallelism=2");
    assert_non_null(s->indexer.resources);
    assert_int_equal(s->webserver.replicas, 2);
    assert_string_equal(s->webserver.architecture, "amd64");
    assert_non_null(s->webserver.node_selector);
    assert_non_null(s->webserver.tolerations);
    assert_int_equal(s->gateway.port, 9090);
    assert_string_equal(s->gateway.tokens_secret, "tokens");
    assert_int_equal(s->connector.max_files, 50);
    assert_int_equal(s->connector.context_lines, 0);
    assert_string_equal(s->connector.mirror_prefix, "github.com/");
    assert_int_equal(s->freshness_max_age_seconds, 5400);
    assert_int_equal(s->poll_interval_seconds, 90);
    spec_free(s);
}

/* spec.poll.interval: "0" turns polling off; a duration from 30 s to a day polls. */
static void test_poll_interval(void **state)
{
    struct corpus_spec *s;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO ",\"poll\":{\"interval\":\"0\"}}", &s, &errs), ZK_OK);
    assert_int_equal(s->poll_interval_seconds, 0);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"poll\":{}}", &s, &errs), ZK_OK);
    assert_int_equal(s->poll_interval_seconds, 300);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"poll\":{\"interval\":\"30s\"}}", &s, &errs), ZK_OK);
    assert_int_equal(s->poll_interval_seconds, 30);
    spec_free(s);
    expect_one_error("{" ONE_REPO ",\"poll\":{\"interval\":\"10s\"}}", "spec.poll.interval", "30s to 1d");
    expect_one_error("{" ONE_REPO ",\"poll\":{\"interval\":\"2d\"}}", "spec.poll.interval", "30s to 1d");
    expect_one_error("{" ONE_REPO ",\"poll\":{\"interval\":\"5 minutes\"}}", "spec.poll.interval", "0 (no polling)");
    expect_one_error("{" ONE_REPO ",\"poll\":{\"interval\":\"0s\"}}", "spec.poll.interval", "0 (no polling)");
    expect_one_error("{" ONE_REPO ",\"poll\":{\"interval\":5}}", "spec.poll.interval", "string");
    expect_one_error("{" ONE_REPO ",\"poll\":\"5m\"}", "spec.poll", "object");
}

static void test_webhook_secret(void **state)
{
    struct corpus_spec *s;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO "}", &s, &errs), ZK_OK);
    assert_null(s->webhook_secret);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"webhook\":{\"secretRef\":{\"name\":\"hooks\"}}}", &s, &errs), ZK_OK);
    assert_string_equal(s->webhook_secret, "hooks");
    spec_free(s);
    expect_one_error("{" ONE_REPO ",\"webhook\":{\"secretRef\":{}}}", "spec.webhook.secretRef.name", "required");
    expect_one_error("{" ONE_REPO ",\"webhook\":{\"secretRef\":{\"name\":\"Bad_Name\"}}}",
                     "spec.webhook.secretRef.name", "Secret name");
}

static void test_missing_repositories(void **state)
{
    (void)state;
    expect_one_error("{}", "spec.repositories", "required");
    expect_one_error("{\"repositories\":[]}", "spec.repositories", "between 1 and");
    expect_one_error("{\"repositories\":{}}", "spec.repositories", "list");
    expect_one_error("{\"repositories\":[{\"name\":\"x\"}]}", "spec.repositories[0].url", "required");
}

/* spec.sources: the API base URL each host is asked at, the owner's kind, the token reference and the
 * filters; repositories may then be left out. */
static void test_sources(void **state)
{
    struct corpus_spec *s;
    struct spec_errors errs;

    (void)state;
    if (parse_spec("{\"sources\":[{\"host\":\"github\",\"org\":\"acme\"},"
                                "{\"host\":\"github\",\"url\":\"https://ghe.example.com/\",\"user\":\"octo\","
                                "\"tokenSecretRef\":{\"name\":\"gh\"},\"include\":[\"octo/*\"],\"exclude\":[\"octo/old-*\"]},"
                                "{\"host\":\"gitlab\",\"group\":\"acme/platform\",\"archived\":true,\"forks\":true},"
                                "{\"host\":\"forgejo\",\"url\":\"https://code.example.org/api/v1\",\"org\":\"acme\","
                                "\"tokenSecretRef\":{\"name\":\"fj\",\"key\":\"pat\"},\"visibility\":[\"private\",\"internal\"]}],"
                                "\"discovery\":{\"interval\":\"2m\",\"grace\":\"0\"}}",
                                &s, &errs) != ZK_OK)
        fail_msg("%d errors, first %s: %s", errs.count, errs.items[0].field, errs.items[0].message);
    assert_int_equal(s->nrepos, 0);
    assert_int_equal(s->nsources, 4);
    assert_string_equal(s->sources[0].api_url, "https://api.github.com");
    assert_true(s->sources[0].public_host);
    assert_null(s->sources[0].token_secret);
    assert_string_equal(s->sources[1].api_url, "https://ghe.example.com/api/v3");
    assert_false(s->sources[1].public_host);
    assert_true(s->sources[1].user);
    assert_string_equal(s->sources[1].token_secret, "gh");
    assert_string_equal(s->sources[1].token_key, "token");
    assert_string_equal(s->sources[1].include[0], "octo/*");
    assert_null(s->sources[1].include[1]);
    assert_string_equal(s->sources[1].exclude[0], "octo/old-*");
    assert_int_equal(s->sources[2].host, SPEC_HOST_GITLAB);
    assert_string_equal(s->sources[2].api_url, "https://gitlab.com/api/v4");
    assert_string_equal(s->sources[2].owner, "acme/platform");
    assert_true(s->sources[2].archived && s->sources[2].forks);
    assert_int_equal(s->sources[3].host, SPEC_HOST_GITEA);
    assert_string_equal(s->sources[3].api_url, "https://code.example.org/api/v1");
    assert_string_equal(s->sources[3].token_key, "pat");
    assert_int_equal(s->sources[3].visibility, SPEC_VISIBLE_PRIVATE | SPEC_VISIBLE_INTERNAL);
    assert_int_equal(s->discovery_interval_seconds, 120);
    assert_int_equal(s->discovery_grace_seconds, 0);
    spec_free(s);

    assert_int_equal(parse_spec("{" ONE_REPO "}", &s, &errs), ZK_OK);
    assert_int_equal(s->nsources, 0);
    assert_int_equal(s->discovery_interval_seconds, SPEC_DEFAULT_DISCOVERY_SECONDS);
    assert_int_equal(s->discovery_grace_seconds, SPEC_DEFAULT_GRACE_SECONDS);
    spec_free(s);

    expect_one_error("{\"sources\":[{\"host\":\"bitbucket\",\"org\":\"a\"}]}", "spec.sources[0].host", "github, gitlab");
    expect_one_error("{\"sources\":[{\"host\":\"gitea\",\"org\":\"a\"}]}", "spec.sources[0].url", "required");
    expect_one_error("{\"sources\":[{\"host\":\"gitea\",\"url\":\"http://g.example.com\",\"org\":\"a\"}]}",
                     "spec.sources[0].url", "https://");
    expect_one_error("{\"sources\":[{\"host\":\"github\",\"org\":\"a\",\"user\":\"b\"}]}", "spec.sources[0]",
                     "exactly one of org and user");
    expect_one_error("{\"sources\":[{\"host\":\"gitlab\",\"org\":\"a\"}]}", "spec.sources[0]",
                     "exactly one of group and user");
    expect_one_error("{\"sources\":[{\"host\":\"github\",\"org\":\"a/b\"}]}", "spec.sources[0]", "not a valid name");
    expect_one_error("{\"sources\":[{\"host\":\"github\",\"org\":\"a\",\"visibility\":[\"secret\"]}]}",
                     "spec.sources[0].visibility", "public, private and internal");
    expect_one_error("{\"sources\":[{\"host\":\"github\",\"org\":\"a\",\"include\":[\"a b\"]}]}",
                     "spec.sources[0].include[0]", "glob");
    expect_one_error("{\"sources\":[{\"host\":\"github\",\"org\":\"a\"}],\"discovery\":{\"interval\":\"10s\"}}",
                     "spec.discovery.interval", "from 1m to 1d");
    expect_one_error("{\"sources\":[]}", "spec.repositories", "required");
}

static void test_too_many_repositories(void **state)
{
    char *json = malloc(2100 * 40 + 64);
    size_t used;
    int i;

    (void)state;
    assert_non_null(json);
    used = (size_t)sprintf(json, "{\"repositories\":[");
    for (i = 0; i < SPEC_MAX_REPOS + 1; i++)
        used += (size_t)sprintf(json + used, "%s{\"url\":\"https://h/r%d\"}", i ? "," : "", i);
    sprintf(json + used, "]}");
    {
        char doc[128 * 1024];
        struct corpus_spec *s = NULL;
        struct spec_errors errs;
        cJSON *corpus;

        snprintf(doc, sizeof(doc), "{\"spec\":%s}", json);
        corpus = cJSON_Parse(doc);
        assert_non_null(corpus);
        assert_int_equal(spec_parse(corpus, NULL, &s, &errs), ZK_EINVAL);
        assert_string_equal(errs.items[0].field, "spec.repositories");
        cJSON_Delete(corpus);
    }
    free(json);
}

static void test_bad_urls(void **state)
{
    static const struct {
        const char *url, *needle;
    } cases[] = {
        {"http://github.com/org/a", "unsupported scheme"},
        {"ftp://h/x", "unsupported scheme"},
        {"https://github.com", "repository path"},
        {"https://user:tok@github.com/o/r", "credentials"},
        {"https://tok@github.com/o/r", "credentials"},
        {"ssh://git:pw@h/o/r", "password"},
        {"https://bad_host!/o/r", "invalid host"},
        {"https://h:99999/o/r", "invalid port"},
        {"https://h/o r", "whitespace"},
        {"-uhttps://h/o", "must not start"},
        {"file://relative", "absolute path"},
        {"justaword", "unsupported form"},
        {"https://h/a'b", "quotes"},
    };
    size_t i;
    char json[512];

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(json, sizeof(json), "{\"repositories\":[{\"url\":\"%s\",\"name\":\"n\"}]}", cases[i].url);
        expect_one_error(json, "spec.repositories[0].url", cases[i].needle);
    }
}

static void test_duplicate_names(void **state)
{
    (void)state;
    /* Two spellings of one repository derive the same name. */
    expect_one_error("{\"repositories\":[{\"url\":\"https://github.com/o/r\"},{\"url\":\"https://x/y\"},"
                     "{\"url\":\"git@GITHUB.com:o/r.git\"}]}",
                     "spec.repositories[2].name", "duplicate repository name \"github.com/o/r\" (also spec.repositories[0])");
    expect_one_error("{\"repositories\":[{\"url\":\"https://a/b\",\"name\":\"same\"},{\"url\":\"https://c/d\",\"name\":\"same\"}]}",
                     "spec.repositories[1].name", "duplicate");
    /* One URL under two names, which the CRD's CEL rule also refuses. */
    expect_one_error("{\"repositories\":[{\"url\":\"https://a/b\",\"name\":\"one\"},{\"url\":\"https://a/b\",\"name\":\"two\"}]}",
                     "spec.repositories[1].url", "duplicate repository url (also spec.repositories[0])");
}

static void test_bad_names(void **state)
{
    (void)state;
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"name\":\"a/../b\"}]}", "spec.repositories[0].name",
                     "path segments");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"name\":\"-x\"}]}", "spec.repositories[0].name",
                     "path segments");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"name\":\"a b\"}]}", "spec.repositories[0].name",
                     "path segments");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/.git\"}]}", "spec.repositories[0].name", "derived");
}

static void test_bad_branches(void **state)
{
    static const char *const bad[] = {"a..b", "-x", "a,b", "x.lock", "a b", "/x", "x/", "a~1", "a:b"};
    char json[256];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(json, sizeof(json), "{\"repositories\":[{\"url\":\"https://h/o/r\",\"branches\":[\"main\",\"%s\"]}]}", bad[i]);
        expect_one_error(json, "spec.repositories[0].branches[1]", "branch name");
    }
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"branches\":[1]}]}",
                     "spec.repositories[0].branches[0]", "branch name");
}

/* spec.indexer.symbols: true unless set to false; null is absent. */
static void test_symbols(void **state)
{
    static const struct {
        const char *indexer;
        int symbols;
    } cases[] = {{"{}", 1}, {"{\"symbols\":true}", 1}, {"{\"symbols\":false}", 0}, {"{\"symbols\":null}", 1}};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct corpus_spec *s = NULL;
        struct spec_errors errs;
        char json[256];

        snprintf(json, sizeof(json), "{" ONE_REPO ",\"indexer\":%s}", cases[i].indexer);
        assert_int_equal(parse_spec(json, &s, &errs), ZK_OK);
        assert_int_equal(s->indexer.symbols, cases[i].symbols);
        spec_free(s);
    }
}

/* spec.indexer.fetchStallSeconds: 60 unless set, within 5 to 3600. */
static void test_fetch_stall(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO ",\"indexer\":{\"fetchStallSeconds\":5}}", &s, &errs), ZK_OK);
    assert_int_equal(s->indexer.fetch_stall_seconds, 5);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"indexer\":{\"fetchStallSeconds\":3600}}", &s, &errs), ZK_OK);
    assert_int_equal(s->indexer.fetch_stall_seconds, 3600);
    spec_free(s);
}

static void test_cron(void **state)
{
    static const char *const good[] = {"0 3 * * *",   "*/5 * * * *",     "0 0 1,15 * *", "0 22 * * 1-5",
                                        "30 2 ? * SUN", "0 0 1 jan-jun *", "0 0 * * 7",    "@daily",
                                        "@hourly",     "0-30/10 * * * *", "  0   3 * * *  "};
    static const struct {
        const char *expr, *needle;
    } bad[] = {
        {"0 3 * *", "needs 5 fields"},
        {"0 3 * * * *", "more than 5"},
        {"60 3 * * *", "minute"},
        {"0 24 * * *", "hour"},
        {"0 0 0 * *", "day-of-month"},
        {"0 0 * 13 *", "month"},
        {"0 0 * * 8", "day-of-week"},
        {"0 0 * FOO *", "month"},
        {"5-1 * * * *", "range"},
        {"*/0 * * * *", "step"},
        {"1,,2 * * * *", "empty"},
        {"@often", "macro"},
        {"TZ=UTC 0 3 * * *", "timeZone"},
        {"", "needs 5 fields"},
    };
    char why[200], json[256];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!spec_cron_valid(good[i], why, sizeof(why)))
            fail_msg("\"%s\" rejected: %s", good[i], why);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(json, sizeof(json), "{" ONE_REPO ",\"schedule\":\"%s\"}", bad[i].expr);
        expect_one_error(json, "spec.schedule", bad[i].needle);
    }
}

static void test_durations(void **state)
{
    long s = 0;

    (void)state;
    assert_true(spec_duration_parse("36h", &s));
    assert_int_equal(s, 129600);
    assert_true(spec_duration_parse("90m", &s));
    assert_int_equal(s, 5400);
    assert_true(spec_duration_parse("1d12h", &s));
    assert_int_equal(s, 129600);
    assert_true(spec_duration_parse("45s", &s));
    assert_int_equal(s, 45);
    assert_false(spec_duration_parse("", &s));
    assert_false(spec_duration_parse("h", &s));
    assert_false(spec_duration_parse("10", &s));
    assert_false(spec_duration_parse("10w", &s));
    assert_false(spec_duration_parse("0h", &s));
    assert_false(spec_duration_parse("-1h", &s));
    assert_false(spec_duration_parse("99999999999999999999h", &s));
    expect_one_error("{" ONE_REPO ",\"freshness\":{\"maxAge\":\"36 hours\"}}", "spec.freshness.maxAge", "duration");
    expect_one_error("{" ONE_REPO ",\"freshness\":{\"maxAge\":\"30s\"}}", "spec.freshness.maxAge", "at least 1m");
}

static void test_field_errors(void **state)
{
    (void)state;
    expect_one_error("{" ONE_REPO ",\"timeZone\":\"Mars/../Base\"}", "spec.timeZone", "IANA");
    expect_one_error("{" ONE_REPO ",\"suspend\":\"yes\"}", "spec.suspend", "true or false");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"symbols\":\"no\"}}", "spec.indexer.symbols", "true or false");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"symbols\":0}}", "spec.indexer.symbols", "true or false");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"fetchStallSeconds\":4}}", "spec.indexer.fetchStallSeconds",
                     "between 5 and 3600");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"fetchStallSeconds\":\"10s\"}}", "spec.indexer.fetchStallSeconds",
                     "integer");
    expect_one_error("{" ONE_REPO ",\"gitCredentialsSecretRef\":{}}", "spec.gitCredentialsSecretRef.name", "required");
    expect_one_error("{" ONE_REPO ",\"gitCredentialsSecretRef\":{\"name\":\"Bad_Name\"}}",
                     "spec.gitCredentialsSecretRef.name", "Secret name");
    expect_one_error("{" ONE_REPO ",\"storage\":{\"onDelete\":\"Keep\"}}", "spec.storage.onDelete", "Retain or Delete");
    expect_one_error("{" ONE_REPO ",\"storage\":{\"size\":\"lots\"}}", "spec.storage.size", "quantity");
    expect_one_error("{" ONE_REPO ",\"storage\":{\"storageClassName\":\"EFS\"}}", "spec.storage.storageClassName", "DNS");
    expect_one_error("{" ONE_REPO ",\"storage\":{\"existingClaim\":\"a b\"}}", "spec.storage.existingClaim", "PersistentVolumeClaim");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"activeDeadlineSeconds\":10}}", "spec.indexer.activeDeadlineSeconds",
                     "between");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"extraFlags\":[\"-index=/tmp\"]}}", "spec.indexer.extraFlags[0]",
                     "cannot be overridden");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"extraFlags\":[\"rm -rf\"]}}", "spec.indexer.extraFlags[0]", "flag");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"image\":\"a b\"}}", "spec.indexer.image", "image");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"architecture\":\"s390x\"}}", "spec.webserver.architecture",
                     "arm64 or amd64");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"replicas\":1.5}}", "spec.webserver.replicas", "integer");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"replicas\":1e300}}", "spec.webserver.replicas", "between");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"shards\":0}}", "spec.webserver.shards", "between");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"shards\":17}}", "spec.webserver.shards", "between");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"replicas\":\"2\"}}", "spec.webserver.replicas", "integer");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"nodeSelector\":{\"kubernetes.io/arch\":\"amd64\"}}}",
                     "spec.webserver.nodeSelector", "architecture");
    expect_one_error("{" ONE_REPO ",\"webserver\":{\"tolerations\":[\"x\"]}}", "spec.webserver.tolerations", "objects");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"enabled\":\"no\"}}", "spec.networkPolicy.enabled",
                     "true or false");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"from\":{}}}", "spec.networkPolicy.from", "list");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"from\":[{}]}}", "spec.networkPolicy.from[0]",
                     "namespaceSelector, podSelector or ipBlock");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"from\":[{\"podSelector\":{}},{\"ports\":{}}]}}",
                     "spec.networkPolicy.from[1]", "ports: only");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"from\":[{\"ipBlock\":\"10.0.0.0/8\"}]}}",
                     "spec.networkPolicy.from[0]", "ipBlock: only");
    expect_one_error("{" ONE_REPO ",\"networkPolicy\":{\"metricsFrom\":[{\"pods\":{}}]}}",
                     "spec.networkPolicy.metricsFrom[0]", "pods: only");
    expect_one_error("{" ONE_REPO ",\"gateway\":{\"port\":80}}", "spec.gateway.port", "between");
    expect_one_error("{" ONE_REPO ",\"gateway\":{\"port\":6070}}", "spec.gateway.port", "inside the pod");
    expect_one_error("{" ONE_REPO ",\"connector\":{\"maxFiles\":0}}", "spec.connector.maxFiles", "between 1 and 200");
    expect_one_error("{" ONE_REPO ",\"connector\":{\"contextLines\":11}}", "spec.connector.contextLines", "between");
    expect_one_error("{" ONE_REPO ",\"connector\":{\"mirrorPrefix\":\"a b\"}}", "spec.connector.mirrorPrefix",
                     "whitespace");
    expect_one_error("{" ONE_REPO ",\"storage\":\"big\"}", "spec.storage", "object");
    expect_one_error("{" ONE_REPO ",\"gitCABundleRef\":{}}", "spec.gitCABundleRef.name", "required");
    expect_one_error("{" ONE_REPO ",\"gitCABundleRef\":{\"name\":\"ca\",\"kind\":\"Pod\"}}", "spec.gitCABundleRef.kind",
                     "ConfigMap or Secret");
    expect_one_error("{" ONE_REPO ",\"gitCABundleRef\":{\"name\":\"ca\",\"key\":\"a/b\"}}", "spec.gitCABundleRef.key",
                     "letters");
}

/* The git CA bundle: a ConfigMap's ca.crt unless the reference says otherwise. */
static void test_git_ca_ref(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO "}", &s, &errs), ZK_OK);
    assert_null(s->git_ca.name);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"gitCABundleRef\":{\"name\":\"corp-ca\"}}", &s, &errs), ZK_OK);
    assert_string_equal(s->git_ca.name, "corp-ca");
    assert_string_equal(s->git_ca.key, "ca.crt");
    assert_false(s->git_ca.is_secret);
    spec_free(s);
    assert_int_equal(parse_spec("{" ONE_REPO ",\"gitCABundleRef\":{\"kind\":\"Secret\",\"name\":\"corp-ca\",\"key\":\"bundle.pem\"}}",
                                &s, &errs),
                     ZK_OK);
    assert_true(s->git_ca.is_secret);
    assert_string_equal(s->git_ca.key, "bundle.pem");
    spec_free(s);
}

static void test_errors_collected_and_formatted(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    char msg[4096];
    char json[8192];
    size_t used;
    int i;

    (void)state;
    /* Every error is reported, each with its path. */
    assert_int_equal(parse_spec("{\"repositories\":[{\"url\":\"http://x/y\"}],\"schedule\":\"bad\","
                                "\"webserver\":{\"architecture\":\"x\"}}",
                                &s, &errs),
                     ZK_EINVAL);
    assert_null(s);
    assert_int_equal(errs.count, 3);
    spec_errors_format(&errs, msg, sizeof(msg));
    assert_non_null(strstr(msg, "spec.repositories[0].url: unsupported scheme"));
    assert_non_null(strstr(msg, "; spec.schedule: invalid cron schedule \"bad\""));
    assert_non_null(strstr(msg, "; spec.webserver.architecture: must be arm64 or amd64"));

    /* Past the limit, errors are counted and summarised. */
    used = (size_t)snprintf(json, sizeof(json), "{\"repositories\":[");
    for (i = 0; i < SPEC_MAX_FIELD_ERRORS + 4; i++)
        used += (size_t)snprintf(json + used, sizeof(json) - used, "%s{\"url\":\"http://h/%d\"}", i ? "," : "", i);
    snprintf(json + used, sizeof(json) - used, "]}");
    assert_int_equal(parse_spec(json, &s, &errs), ZK_EINVAL);
    assert_int_equal(errs.count, SPEC_MAX_FIELD_ERRORS);
    assert_int_equal(errs.dropped, 4);
    spec_errors_format(&errs, msg, sizeof(msg));
    assert_non_null(strstr(msg, "; and 4 more"));

    /* A small destination is cut, never overrun. */
    spec_errors_format(&errs, msg, 10);
    assert_int_equal(strlen(msg), 9);
}

static void test_not_an_object(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    cJSON *corpus = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");

    (void)state;
    assert_int_equal(spec_parse(corpus, NULL, &s, &errs), ZK_EINVAL);
    assert_string_equal(errs.items[0].field, "spec");
    cJSON_Delete(corpus);
}

static void test_name_from_url(void **state)
{
    char n[64];

    (void)state;
    assert_true(spec_name_from_url("https://github.com/sourcegraph/zoekt.git", n, sizeof(n)));
    assert_string_equal(n, "github.com/sourcegraph/zoekt");
    assert_true(spec_name_from_url("https://git.example.com:8443/a/b/", n, sizeof(n)));
    assert_string_equal(n, "git.example.com/a/b");
    assert_true(spec_name_from_url("ssh://git@Host/x/y.git", n, sizeof(n)));
    assert_string_equal(n, "host/x/y");
    assert_true(spec_name_from_url("git@host:/abs/repo.git", n, sizeof(n)));
    assert_string_equal(n, "host/abs/repo");
    assert_true(spec_name_from_url("file:///srv/git/r.git", n, sizeof(n)));
    assert_string_equal(n, "srv/git/r");
    assert_false(spec_name_from_url("https://host/", n, sizeof(n)));
    assert_false(spec_name_from_url("https://host/averyveryverylongrepositorynamethatdoesnotfit/intosixtyfour", n, 32));
}

static void test_web_url(void **state)
{
    static const struct {
        const char *url, *web;
    } cases[] = {
        {"https://github.com/sourcegraph/zoekt.git", "https://github.com/sourcegraph/zoekt"},
        {"https://Git.Example.com:8443/a/b/", "https://git.example.com:8443/a/b"},
        {"ssh://git@gitea.example.org:2222/org/repo.git", "https://gitea.example.org/org/repo"},
        {"git@gitlab.com:group/sub/repo.git", "https://gitlab.com/group/sub/repo"},
        {"host:/abs/repo", "https://host/abs/repo"},
    };
    char w[128];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (!spec_web_url(cases[i].url, w, sizeof(w)))
            fail_msg("%s: no address", cases[i].url);
        assert_string_equal(w, cases[i].web);
    }
    assert_false(spec_web_url("file:///srv/git/r.git", w, sizeof(w)));
    assert_false(spec_web_url("https://github.com/sourcegraph/zoekt", w, 20));

    assert_string_equal(spec_code_host_infer("https://github.com/o/r"), "github");
    assert_string_equal(spec_code_host_infer("https://GitLab.com/g/s/r"), "gitlab");
    assert_string_equal(spec_code_host_infer("https://bitbucket.org/w/r"), "bitbucket-cloud");
    assert_string_equal(spec_code_host_infer("https://dev.azure.com/o/p/_git/r"), "azuredevops");
    assert_string_equal(spec_code_host_infer("https://go.googlesource.com/go"), "gitiles");
    assert_string_equal(spec_code_host_infer("https://github.com:443/o/r"), "github");
    assert_null(spec_code_host_infer("https://googlesource.com/x"));
    assert_null(spec_code_host_infer("https://github.com.evil.example/o/r"));
    assert_null(spec_code_host_infer("https://gitea.example.org/o/r"));
    assert_null(spec_code_host_infer("https://ssh.dev.azure.com/v3/o/p/r"));
}

/* The address and kind each repository's line carries, from codeHost, webURL and the host. */
static void test_code_host(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;

    (void)state;
    assert_int_equal(parse_spec("{\"repositories\":["
                                "{\"url\":\"git@gitea.example.org:org/repo.git\",\"codeHost\":\"gitea\"},"
                                "{\"url\":\"https://github.com/o/r.git\"},"
                                "{\"url\":\"https://git.example.com/o/r\"},"
                                "{\"url\":\"file:///srv/r.git\"},"
                                "{\"url\":\"ssh://git@ssh.example.com/o/x\",\"codeHost\":\"bitbucket-server\","
                                "\"webURL\":\"https://bb.example.com/projects/O/repos/x/\"},"
                                "{\"url\":\"file:///srv/g.git\",\"webURL\":\"https://gitlab.com/o/g\"}]}",
                                &s, &errs),
                     ZK_OK);
    assert_string_equal(s->repos[0].web_url, "https://gitea.example.org/org/repo");
    assert_string_equal(s->repos[0].code_host, "gitea");
    assert_string_equal(s->repos[1].web_url, "https://github.com/o/r");
    assert_string_equal(s->repos[1].code_host, "github");
    /* A host whose kind is not known gives no address, as before the field existed. */
    assert_null(s->repos[2].web_url);
    assert_null(s->repos[2].code_host);
    assert_null(s->repos[3].web_url);
    assert_string_equal(s->repos[4].web_url, "https://bb.example.com/projects/O/repos/x");
    assert_string_equal(s->repos[4].code_host, "bitbucket-server");
    /* The kind is inferred from the address given. */
    assert_string_equal(s->repos[5].code_host, "gitlab");
    spec_free(s);

    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":\"GitHub\"}]}",
                     "spec.repositories[0].codeHost", "must be one of github, gitlab, gitea");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":3}]}",
                     "spec.repositories[0].codeHost", "string");
    expect_one_error("{\"repositories\":[{\"url\":\"file:///srv/r.git\",\"codeHost\":\"gitea\"}]}",
                     "spec.repositories[0].codeHost", "needs webURL");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":\"gitea\",\"webURL\":\"http://h/o/r\"}]}",
                     "spec.repositories[0].webURL", "https://");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":\"gitea\",\"webURL\":\"https://h/o/r#x\"}]}",
                     "spec.repositories[0].webURL", "fragment");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":\"gitea\",\"webURL\":\"https://u@h/o/r\"}]}",
                     "spec.repositories[0].webURL", "credentials");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"codeHost\":\"gitea\",\"webURL\":\"https://h/a b\"}]}",
                     "spec.repositories[0].webURL", "whitespace");
    expect_one_error("{\"repositories\":[{\"url\":\"https://h/o/r\",\"webURL\":\"https://h/o/r\"}]}",
                     "spec.repositories[0].webURL", "needs codeHost");
}

static void test_quantities(void **state)
{
    static const struct {
        const char *in, *want;
    } good[] = {
        {"500m", "500m"}, {"0.5", "500m"}, {"2000m", "2"}, {"1.5", "1500m"}, {"2", "2"},   {"1000", "1k"},
        {"0", "0"},       {"100Gi", "100Gi"}, {"1024Mi", "1Gi"}, {"1536Mi", "1536Mi"}, {"0.5Gi", "512Mi"},
        {"1.5Ki", "1536"}, {"4G", "4G"},  {"1000M", "1G"},     {"1Ti", "1Ti"},       {"2048Ti", "2Pi"},
    };
    static const char *const bad[] = {"", "Gi", "1.5.5", "-1", "1e3", "1 Gi", "1gi", "0.0001", "0.1Ki", "lots"};
    char out[64];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (!spec_quantity_canonical(good[i].in, out, sizeof(out)))
            fail_msg("\"%s\" rejected", good[i].in);
        if (strcmp(out, good[i].want) != 0)
            fail_msg("\"%s\": want \"%s\", got \"%s\"", good[i].in, good[i].want, out);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (spec_quantity_canonical(bad[i], out, sizeof(out)))
            fail_msg("\"%s\" accepted as \"%s\"", bad[i], out);
}

static void test_resources_canonical(void **state)
{
    struct corpus_spec *s = NULL;
    struct spec_errors errs;
    char *json;

    (void)state;
    assert_int_equal(parse_spec("{" ONE_REPO ",\"storage\":{\"size\":\"1024Gi\"},\"webserver\":{\"resources\":"
                                "{\"requests\":{\"cpu\":0.5,\"memory\":\"1024Mi\"},\"limits\":{\"cpu\":2}}}}",
                                &s, &errs),
                     ZK_OK);
    json = cJSON_PrintUnformatted(s->webserver.resources);
    assert_string_equal(json, "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"2\"}}");
    assert_string_equal(s->storage.size, "1Ti");
    free(json);
    spec_free(s);
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"resources\":{\"limits\":{\"memory\":\"lots\"}}}}",
                     "spec.indexer.resources.limits.memory", "quantity");
    expect_one_error("{" ONE_REPO ",\"indexer\":{\"resources\":{\"claims\":[]}}}", "spec.indexer.resources.claims",
                     "requests and limits");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_default_images),
        cmocka_unit_test(test_full_spec),
        cmocka_unit_test(test_poll_interval),
        cmocka_unit_test(test_webhook_secret),
        cmocka_unit_test(test_missing_repositories),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_too_many_repositories),
        cmocka_unit_test(test_bad_urls),
        cmocka_unit_test(test_duplicate_names),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_bad_branches),
        cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_fetch_stall),
        cmocka_unit_test(test_cron),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_git_ca_ref),
        cmocka_unit_test(test_errors_collected_and_formatted),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_name_from_url),
        cmocka_unit_test(test_web_url),
        cmocka_unit_test(test_code_host),
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_resources_canonical),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
