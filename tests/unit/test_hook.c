/* Unit tests for connector/hook: the three hosts' proofs (right, wrong, missing, a forged one beside a
 * right one), the push payloads of GitHub, GitLab and Gitea, and the repository keys URLs match by;
 * and for connector/webhook: what a delivery answers and which request file it writes, in a fresh
 * temporary folder standing for the mounted Secret, the repository list and the volume's queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "connector/front.h"
#include "connector/hook.h"
#include "connector/metrics.h"
#include "connector/webhook.h"
#include "err.h"
#include "json.h"
#include "mem.h"
#include "rfc3339.h"
#include "tests/support/fakeapi.h"
#include "tests/support/fixture.h"
#include "tests/support/tmpdir.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* GitHub's documented example: this secret and body give this signature. */
#define SECRET "It's a Secret to Everybody"
#define BODY "Hello, World!"
#define SIG "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

static int verify(const char *hub, const char *gitea, const char *gitlab, const char *body)
{
    struct hook_proof p = {hub, gitea, gitlab};

    return hook_verify(&p, SECRET, strlen(SECRET), body, strlen(body));
}

static void test_github_signature(void **state)
{
    (void)state;
    assert_true(verify("sha256=" SIG, NULL, NULL, BODY));
    assert_false(verify("sha256=" SIG, NULL, NULL, BODY " ")); /* another body */
    assert_false(verify(SIG, NULL, NULL, BODY));               /* without its prefix */
    assert_false(verify("sha1=" SIG, NULL, NULL, BODY));
    assert_false(verify("sha256=" "857107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", NULL, NULL, BODY));
    assert_false(verify("sha256=" "757107ea", NULL, NULL, BODY)); /* cut short */
    assert_false(verify("sha256=" "zz7107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", NULL, NULL, BODY));
    assert_true(verify("sha256=" "757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17", NULL, NULL, BODY));
}

static void test_gitea_and_gitlab(void **state)
{
    (void)state;
    assert_true(verify(NULL, SIG, NULL, BODY));
    assert_false(verify(NULL, "sha256=" SIG, NULL, BODY));
    assert_true(verify(NULL, NULL, SECRET, BODY));
    assert_false(verify(NULL, NULL, "It's a Secret to Everybody ", BODY));
    assert_false(verify(NULL, NULL, "", BODY));
    /* Gitea sends both signatures: both must be right. */
    assert_true(verify("sha256=" SIG, SIG, NULL, BODY));
    assert_false(verify("sha256=" SIG, NULL, "wrong", BODY));
    assert_false(verify("sha256=" "0000000000000000000000000000000000000000000000000000000000000000", SIG, NULL, BODY));
}

static void test_no_proof_or_secret(void **state)
{
    struct hook_proof none = {0}, right = {"sha256=" SIG, NULL, NULL};

    (void)state;
    assert_false(hook_verify(&none, SECRET, strlen(SECRET), BODY, strlen(BODY)));
    assert_false(hook_verify(&right, "", 0, BODY, strlen(BODY)));
    assert_false(hook_verify(&right, NULL, 0, BODY, strlen(BODY)));
}

/* Event headers: none, and those each host sends with a push. */
static const struct hook_event_headers no_event = {NULL, NULL, NULL};
static const struct hook_event_headers github_push = {"push", NULL, NULL};
static const struct hook_event_headers gitlab_push = {NULL, NULL, "Push Hook"};
static const struct hook_event_headers gitea_push = {"push", "push", NULL};

static void test_push_payloads(void **state)
{
    static const char github[] =
        "{\"ref\":\"refs/heads/main\",\"repository\":{\"full_name\":\"org/api\","
        "\"clone_url\":\"https://github.com/org/api.git\",\"ssh_url\":\"git@github.com:org/api.git\","
        "\"html_url\":\"https://github.com/org/api\"}}";
    static const char gitlab[] =
        "{\"object_kind\":\"push\",\"event_name\":\"push\",\"ref\":\"refs/heads/dev\",\"project\":{"
        "\"path_with_namespace\":\"g/p\",\"git_http_url\":\"https://gitlab.example.com/g/p.git\","
        "\"git_ssh_url\":\"git@gitlab.example.com:g/p.git\",\"web_url\":\"https://gitlab.example.com/g/p\"}}";
    static const char gitea[] =
        "{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"https://gitea.example.com/o/r.git\"}}";
    struct hook_event e;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(hook_parse_event(&github_push, github, strlen(github), &e, &err), ZK_OK);
    assert_int_equal(e.kind, HOOK_PUSH);
    assert_int_equal(e.nurls, 3);
    assert_string_equal(e.urls[0], "https://github.com/org/api.git");
    assert_string_equal(e.urls[1], "git@github.com:org/api.git");
    assert_string_equal(e.ref, "refs/heads/main");
    hook_event_free(&e);
    assert_int_equal(hook_parse_event(&gitlab_push, gitlab, strlen(gitlab), &e, &err), ZK_OK);
    assert_int_equal(e.kind, HOOK_PUSH);
    assert_int_equal(e.nurls, 3);
    assert_string_equal(e.urls[0], "https://gitlab.example.com/g/p.git");
    assert_string_equal(e.ref, "refs/heads/dev");
    hook_event_free(&e);
    assert_int_equal(hook_parse_event(&gitea_push, gitea, strlen(gitea), &e, &err), ZK_OK);
    assert_int_equal(e.nurls, 1);
    hook_event_free(&e);
    /* A delivery that names no event is read as a push, as every delivery was before events were told
     * apart. */
    assert_int_equal(hook_parse_event(&no_event, github, strlen(github), &e, &err), ZK_OK);
    assert_int_equal(e.kind, HOOK_PUSH);
    hook_event_free(&e);

    assert_int_equal(hook_parse_event(&github_push, "[1]", 3, &e, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "not a JSON object"));
    assert_int_equal(hook_parse_event(&no_event, "{\"zen\":\"ping\"}", 14, &e, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "no repository URL"));
    assert_int_equal(e.nurls, 0);
    assert_int_equal(hook_parse_event(&github_push, "{\"repository\":", 14, &e, &err), ZK_EINVAL);
    assert_int_equal(hook_parse_event(&github_push, NULL, 0, &e, &err), ZK_EINVAL);
    /* Only the given bytes are read: a body cut at its bound is not read past its end. */
    assert_int_equal(hook_parse_event(&github_push, github, 20, &e, &err), ZK_EINVAL);
}

/* The kind of every event the table in hook.h names, and of its near misses, from headers and a small
 * payload. */
static void test_event_kinds(void **state)
{
    static const struct {
        struct hook_event_headers h;
        const char *body;
        enum hook_kind kind;
        const char *action; /* repository events: what the event records */
    } cases[] = {
        {{"repository", NULL, NULL}, "{\"action\":\"created\",\"repository\":{}}", HOOK_REPOSITORY, "created"},
        {{"repository", NULL, NULL}, "{\"action\":\"deleted\"}", HOOK_REPOSITORY, "deleted"},
        {{"repository", NULL, NULL}, "{\"action\":\"renamed\"}", HOOK_REPOSITORY, "renamed"},
        {{"repository", NULL, NULL}, "{\"action\":\"transferred\"}", HOOK_REPOSITORY, "transferred"},
        {{"repository", NULL, NULL}, "{\"action\":\"archived\"}", HOOK_REPOSITORY, "archived"},
        {{"repository", NULL, NULL}, "{\"action\":\"unarchived\"}", HOOK_REPOSITORY, "unarchived"},
        {{"repository", NULL, NULL}, "{\"action\":\"publicized\"}", HOOK_REPOSITORY, "publicized"},
        {{"repository", NULL, NULL}, "{\"action\":\"privatized\"}", HOOK_REPOSITORY, "privatized"},
        {{"repository", NULL, NULL}, "{\"action\":\"edited\"}", HOOK_OTHER, NULL},
        {{"repository", NULL, NULL}, "{\"action\":\"Created\"}", HOOK_OTHER, NULL},
        {{"repository", NULL, NULL}, "{\"action\":7}", HOOK_OTHER, NULL},
        {{"repository", NULL, NULL}, "{}", HOOK_OTHER, NULL},
        {{"issues", NULL, NULL}, "{\"action\":\"deleted\"}", HOOK_OTHER, NULL},
        {{"ping", NULL, NULL}, "{\"zen\":\"z\"}", HOOK_OTHER, NULL},
        {{"create", NULL, NULL}, "{\"ref\":\"main\",\"ref_type\":\"branch\"}", HOOK_OTHER, NULL},
        /* Gitea and Forgejo: their own header decides, GitHub's comes along. */
        {{"repository", "repository", NULL}, "{\"action\":\"created\"}", HOOK_REPOSITORY, "created"},
        {{NULL, "repository", NULL}, "{\"action\":\"deleted\"}", HOOK_REPOSITORY, "deleted"},
        {{"push", "issues", NULL}, "{\"action\":\"opened\"}", HOOK_OTHER, NULL},
        /* GitLab: the payload decides, whatever the hook is called. */
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"project_create\"}", HOOK_REPOSITORY, "project_create"},
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"project_destroy\"}", HOOK_REPOSITORY, "project_destroy"},
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"project_rename\"}", HOOK_REPOSITORY, "project_rename"},
        {{NULL, NULL, "Project Hook"}, "{\"event_name\":\"project_transfer\"}", HOOK_REPOSITORY, "project_transfer"},
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"project_update\"}", HOOK_OTHER, NULL},
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"user_create\"}", HOOK_OTHER, NULL},
        {{NULL, NULL, "Issue Hook"}, "{\"object_kind\":\"issue\"}", HOOK_OTHER, NULL},
        {{NULL, NULL, "Push Hook"}, "{\"object_kind\":\"push\",\"project\":{\"web_url\":\"https://g/a/b\"}}",
         HOOK_PUSH, NULL},
        {{NULL, NULL, "System Hook"}, "{\"event_name\":\"push\",\"project\":{\"web_url\":\"https://g/a/b\"}}",
         HOOK_PUSH, NULL},
        {{NULL, NULL, "Tag Push Hook"},
         "{\"object_kind\":\"tag_push\",\"event_name\":\"tag_push\",\"project\":{\"web_url\":\"https://g/a/b\"}}",
         HOOK_PUSH, NULL},
        {{NULL, NULL, "System Hook"},
         "{\"event_name\":\"repository_update\",\"project\":{\"web_url\":\"https://g/a/b\"}}", HOOK_PUSH, NULL},
        /* A project event named only by a GitLab-style payload, without GitLab's header, is not one. */
        {{"repository", NULL, NULL}, "{\"event_name\":\"project_create\"}", HOOK_OTHER, NULL},
    };
    struct hook_event e;
    struct zk_err err = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("case %zu: %s\n", i, cases[i].body);
        assert_int_equal(hook_parse_event(&cases[i].h, cases[i].body, strlen(cases[i].body), &e, &err), ZK_OK);
        assert_int_equal(e.kind, cases[i].kind);
        assert_string_equal(e.action, cases[i].action ? cases[i].action : "");
        assert_int_equal(e.nurls, cases[i].kind == HOOK_PUSH);
        hook_event_free(&e);
    }
}

/* The fixtures (tests/fixtures/hooks/README.md), shaped as the hosts document them, with the headers
 * the hosts send with them. */
static void test_event_fixtures(void **state)
{
    static const struct {
        const char *file;
        struct hook_event_headers h;
        enum hook_kind kind;
        const char *action, *repository;
    } cases[] = {
        {"github_repository_created.json", {"repository", NULL, NULL}, HOOK_REPOSITORY, "created", "acme/new-service"},
        {"github_repository_renamed.json", {"repository", NULL, NULL}, HOOK_REPOSITORY, "renamed", "acme/billing"},
        {"github_issues_opened.json", {"issues", NULL, NULL}, HOOK_OTHER, "", NULL},
        {"github_ping.json", {"ping", NULL, NULL}, HOOK_OTHER, "", NULL},
        {"gitea_repository_deleted.json", {"repository", "repository", NULL}, HOOK_REPOSITORY, "deleted",
         "acme/old-tool"},
        {"gitlab_project_create.json", {NULL, NULL, "System Hook"}, HOOK_REPOSITORY, "project_create",
         "acme/platform/new-service"},
        {"gitlab_project_transfer.json", {NULL, NULL, "System Hook"}, HOOK_REPOSITORY, "project_transfer",
         "acme/payments/billing"},
        {"gitlab_project_update.json", {NULL, NULL, "System Hook"}, HOOK_OTHER, "", NULL},
        {"gitlab_issue.json", {NULL, NULL, "Issue Hook"}, HOOK_OTHER, "", NULL},
    };
    struct hook_event e;
    struct zk_err err = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len;
        char *body = fixture_read("tests/fixtures/hooks", cases[i].file, &len);

        print_message("%s\n", cases[i].file);
        assert_int_equal(hook_parse_event(&cases[i].h, body, len, &e, &err), ZK_OK);
        assert_int_equal(e.kind, cases[i].kind);
        assert_string_equal(e.action, cases[i].action);
        if (cases[i].repository)
            assert_string_equal(e.repository, cases[i].repository);
        else
            assert_null(e.repository);
        /* Only pushes keep URLs: an issue's repository is not read as a push's. */
        assert_int_equal(e.nurls, 0);
        hook_event_free(&e);
        free(body);
    }
}

static void test_url_keys(void **state)
{
    static const char *const same[] = {
        "https://GitHub.com/Org/Repo.git", "https://github.com/org/repo", "https://github.com/org/repo/",
        "git@github.com:org/repo.git", "ssh://git@github.com:22/org/repo.git", "http://user@github.com:443/org/repo",
    };
    char key[HOOK_KEY_MAX], small[8];

    (void)state;
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        assert_true(hook_url_key(same[i], key, sizeof(key)));
        assert_string_equal(key, "github.com/org/repo");
    }
    assert_true(hook_url_key("https://gitlab.example.com/group/sub/p.git", key, sizeof(key)));
    assert_string_equal(key, "gitlab.example.com/group/sub/p");
    assert_false(hook_url_key("https://github.com", key, sizeof(key)));
    assert_false(hook_url_key("https://github.com/", key, sizeof(key)));
    assert_false(hook_url_key("not a url", key, sizeof(key)));
    assert_false(hook_url_key("https://github.com/org/repo", small, sizeof(small)));
}

/* ---- connector/webhook ---------------------------------------------------------------------- */

/* A GitHub push of org/api to main, and the signature SECRET gives it. */
static const char push_api[] =
    "{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"https://github.com/Org/api.git\"}}";

static void sign(const char *body, char hex[80])
{
    /* The signature is the one hook_verify checks: computed here by OpenSSL's command-free API. */
    unsigned char md[32];
    unsigned int n = 0;

    assert_non_null(HMAC(EVP_sha256(), SECRET, (int)strlen(SECRET), (const unsigned char *)body, strlen(body), md, &n));
    strcpy(hex, "sha256=");
    for (unsigned i = 0; i < n; i++)
        sprintf(hex + 7 + 2 * i, "%02x", md[i]);
}

/* The names in the queue folder, space-separated, into out. */
static const char *queued(const char *dir, char *out, size_t len)
{
    char q[128];
    DIR *d;
    struct dirent *e;

    snprintf(q, sizeof(q), "%s/queue", dir);
    out[0] = '\0';
    d = opendir(q);
    assert_non_null(d);
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "", e->d_name);
    closedir(d);
    return out;
}

/* The repository list most tests match pushes to. */
static const char listed[] = "# listed\ngithub.com/org/web https://github.com/org/web\n"
                             "github.com/org/api git@github.com:org/api.git main,dev github https://github.com/org/api\n";

/* The corpus the discovery requests annotate, as the fake API server serves it. */
#define CORPUS_PATH "/apis/codesearch.dev/v1alpha1/namespaces/search/codesearchcorpora/org"

/* The monotonic clock the webhooks of these tests read, which the tests move. */
static atomic_llong fake_now;

static long long fake_clock(void)
{
    return atomic_load(&fake_now);
}

/* A webhook on dir's files with the repository list list_text, counting in metrics (may be NULL), and
 * requesting discoveries of the corpus search/org from the API server at server (NULL: no corpus). */
static struct webhook *new_listing_webhook(const char *dir, const char *list_text, struct cmetrics *metrics,
                                           const char *server)
{
    char secret[128], list[128], queue[128], kubeconfig[128], yaml[512];
    struct webhook_opts o = {secret, list, queue, metrics, NULL, NULL, NULL, fake_clock};
    struct webhook *w;
    struct zk_err err = {0};

    snprintf(secret, sizeof(secret), "%s", tmpdir_write(dir, "secret", SECRET "\n", 0600));
    snprintf(list, sizeof(list), "%s", tmpdir_write(dir, "repositories.txt", list_text, 0644));
    snprintf(queue, sizeof(queue), "%s/queue", dir);
    assert_int_equal(mkdir(queue, 0755), 0);
    if (server) {
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                 "clusters:\n- {name: k, cluster: {server: '%s'}}\n"
                 "users:\n- {name: u, user: {token: connector-token}}\n"
                 "contexts:\n- {name: c, context: {cluster: k, user: u, namespace: search}}\n",
                 server);
        snprintf(kubeconfig, sizeof(kubeconfig), "%s", tmpdir_write(dir, "kubeconfig", yaml, 0600));
        o.corpus_namespace = "search";
        o.corpus_name = "org";
        o.kubeconfig = kubeconfig;
    }
    assert_int_equal(webhook_new(&o, &w, &err), ZK_OK);
    return w;
}

static struct webhook *new_webhook(const char *dir)
{
    return new_listing_webhook(dir, listed, NULL, NULL);
}

/* Delivers body with the proof headers given (each NULL when absent) and no event header. */
static void deliver(struct webhook *w, const char *hub, const char *gitlab, const char *body, struct webhook_answer *a)
{
    struct hook_proof p = {hub, NULL, gitlab};

    webhook_handle(w, &p, &no_event, body, strlen(body), 0, a);
}

/* Delivers body with the event headers h and the right proof of the host that sends them: GitLab's
 * token, Gitea's and Forgejo's signature beside GitHub's, or GitHub's. */
static void deliver_proven(struct webhook *w, const struct hook_event_headers *h, const char *body,
                           struct webhook_answer *a)
{
    struct hook_proof p = {NULL, NULL, NULL};
    char sig[80];

    sign(body, sig);
    if (h->gitlab) {
        p.gitlab_token = SECRET;
    } else {
        p.hub_signature_256 = sig;
        p.gitea_signature = h->gitea ? sig + 7 : NULL;
    }
    webhook_handle(w, &p, h, body, strlen(body), 0, a);
}

static void test_webhook_queues_a_listed_push(void **state)
{
    const struct tmpdir *t = *state;
    struct webhook *w = new_webhook(t->dir);
    struct webhook_answer a;
    char sig[80], names[256];

    sign(push_api, sig);
    deliver(w, sig, NULL, push_api, &a);
    assert_int_equal(a.status, 202);
    assert_int_equal(a.outcome, CMETRICS_ACCEPTED);
    assert_string_equal(a.body, "{\"queued\":\"github.com/org/api\"}");
    assert_string_equal(queued(t->dir, names, sizeof(names)), "github.com%2Forg%2Fapi");
    /* Ten more deliveries leave one request: the indexer runs once. */
    for (int i = 0; i < 10; i++)
        deliver(w, sig, NULL, push_api, &a);
    assert_string_equal(queued(t->dir, names, sizeof(names)), "github.com%2Forg%2Fapi");
    /* GitLab's token (the secret file's trailing newline is not part of the secret). */
    deliver(w, NULL, SECRET, push_api, &a);
    assert_int_equal(a.status, 202);
    webhook_free(w);
}

/* A list line longer than any name and URL (many branches, then the code host's fields) is matched
 * by its name and URL, as the indexer reads it. */
static void test_webhook_long_list_line(void **state)
{
    const struct tmpdir *t = *state;
    char line[4096], sig[80], names[256];
    size_t n = (size_t)snprintf(line, sizeof(line), "github.com/org/api git@github.com:org/api.git main");
    struct webhook *w;
    struct webhook_answer a;

    while (n < 3000)
        n += (size_t)snprintf(line + n, sizeof(line) - n, ",release/%zu", n);
    snprintf(line + n, sizeof(line) - n, " github https://github.com/org/api\n");
    w = new_listing_webhook(t->dir, line, NULL, NULL);
    sign(push_api, sig);
    deliver(w, sig, NULL, push_api, &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, "{\"queued\":\"github.com/org/api\"}");
    assert_string_equal(queued(t->dir, names, sizeof(names)), "github.com%2Forg%2Fapi");
    webhook_free(w);
}

static void test_webhook_refuses_and_ignores(void **state)
{
    const struct tmpdir *t = *state;
    struct webhook *w = new_webhook(t->dir);
    struct webhook_answer a;
    char sig[80], names[256];
    static const char other[] =
        "{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"https://github.com/org/other.git\"}}";
    static const char tag[] =
        "{\"ref\":\"refs/tags/v1\",\"repository\":{\"clone_url\":\"https://github.com/org/api.git\"}}";

    sign(push_api, sig);
    deliver(w, NULL, NULL, push_api, &a);
    assert_int_equal(a.status, 401);
    assert_int_equal(a.outcome, CMETRICS_REFUSED_SIGNATURE);
    deliver(w, sig, NULL, other, &a); /* a signature of another body */
    assert_int_equal(a.status, 401);
    deliver(w, NULL, "wrong", push_api, &a);
    assert_int_equal(a.status, 401);
    assert_string_equal(queued(t->dir, names, sizeof(names)), "");

    sign(other, sig);
    deliver(w, sig, NULL, other, &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, "{\"ignored\":\"the corpus does not list this repository\"}");
    sign(tag, sig);
    deliver(w, sig, NULL, tag, &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, "{\"ignored\":\"not a branch\"}");
    assert_int_equal(a.outcome, CMETRICS_IGNORED);
    sign("not json", sig);
    deliver(w, sig, NULL, "not json", &a);
    assert_int_equal(a.status, 400);
    assert_int_equal(a.outcome, CMETRICS_BAD_REQUEST);
    {
        struct hook_proof p = {sig, NULL, NULL};

        webhook_handle(w, &p, &no_event, NULL, 0, 1, &a);
        assert_int_equal(a.status, 413);
        assert_int_equal(a.outcome, CMETRICS_TOO_LARGE);
    }
    assert_string_equal(queued(t->dir, names, sizeof(names)), "");
    webhook_free(w);
}

/* ---- discovery requests: the corpus annotated through a fake API server --------------------------- */

/* The API server the discovery requests reach: it answers a PATCH of the corpus, or refuses it as RBAC
 * refuses a verb the Role does not grant. */
struct fake_cluster {
    struct fakeapi *api;
    atomic_int refuse;
};

static int fake_cluster_handler(void *ud, const struct fakeapi_request *rq, char *out, size_t len)
{
    struct fake_cluster *c = ud;

    if (strcmp(rq->method, "PATCH") != 0 || strcmp(rq->path, CORPUS_PATH) != 0)
        return 0;
    if (atomic_load(&c->refuse)) {
        snprintf(out, len,
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"codesearchcorpora."
                 "codesearch.dev \\\"org\\\" is forbidden: User \\\"system:serviceaccount:search:org-search\\\" "
                 "cannot patch resource \\\"codesearchcorpora\\\"\",\"reason\":\"Forbidden\",\"code\":403}");
        return 403;
    }
    snprintf(out, len, "{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"kind\":\"CodeSearchCorpus\","
                       "\"metadata\":{\"name\":\"org\",\"namespace\":\"search\"}}");
    return 200;
}

static void fake_cluster_start(struct fake_cluster *c)
{
    atomic_init(&c->refuse, 0);
    c->api = fakeapi_start(fake_cluster_handler, c);
    atomic_store(&fake_now, 1000000);
}

static int patches(struct fake_cluster *c)
{
    return fakeapi_count(c->api, "PATCH", CORPUS_PATH);
}

/* Checks that the last patch sets the annotation, and nothing else, to a time between from and to. */
static void assert_last_patch(struct fake_cluster *c, time_t from, time_t to)
{
    char *text = fakeapi_last_body(c->api, "PATCH", CORPUS_PATH);
    cJSON *patch = json_parse(text, strlen(text));
    const cJSON *annotations = json_path(patch, "metadata.annotations");
    time_t at = 0;

    assert_int_equal(cJSON_GetArraySize(patch), 1);
    assert_int_equal(cJSON_GetArraySize(json_obj(patch, "metadata")), 1);
    assert_int_equal(cJSON_GetArraySize(annotations), 1);
    assert_true(rfc3339_parse(json_str(annotations, WEBHOOK_DISCOVER_ANNOTATION, ""), &at));
    assert_true(at >= from && at <= to);
    assert_non_null(strstr(json_str(annotations, WEBHOOK_DISCOVER_ANNOTATION, ""), "Z"));
    cJSON_Delete(patch);
    free(text);
}

/* Delivers the fixture file with event headers h and its host's proof. */
static void deliver_fixture(struct webhook *w, const struct hook_event_headers *h, const char *file,
                            struct webhook_answer *a)
{
    size_t len;
    char *body = fixture_read("tests/fixtures/hooks", file, &len);

    deliver_proven(w, h, body, a);
    free(body);
}

static const struct hook_event_headers github_repository = {"repository", NULL, NULL};
static const struct hook_event_headers gitea_repository = {"repository", "repository", NULL};
static const struct hook_event_headers gitlab_system = {NULL, NULL, "System Hook"};

#define REQUESTED "{\"discovery\":\"requested\"}"
#define ALREADY "{\"discovery\":\"already requested\"}"
#define OTHER_EVENT "{\"ignored\":\"neither a push nor a repository event\"}"
#define CANNOT "{\"error\":\"the corpus cannot be annotated to request a discovery now; the connector's log says why\"}"

/* A proven repository event of each host requests a discovery; those within the interval after it are
 * answered without another request, and the first after it makes one. */
static void test_webhook_repository_events_request_discovery(void **state)
{
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct webhook *w;
    struct webhook_answer a;
    char names[256];
    time_t from = time(NULL);

    fake_cluster_start(&c);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    deliver_fixture(w, &github_repository, "github_repository_created.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, REQUESTED);
    assert_int_equal(a.outcome, CMETRICS_ACCEPTED);
    assert_int_equal(patches(&c), 1);
    assert_last_patch(&c, from, time(NULL));

    atomic_fetch_add(&fake_now, 1000);
    deliver_fixture(w, &gitea_repository, "gitea_repository_deleted.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, ALREADY);
    assert_int_equal(a.outcome, CMETRICS_ACCEPTED);
    atomic_fetch_add(&fake_now, WEBHOOK_DISCOVERY_INTERVAL_MS - 1001);
    deliver_fixture(w, &gitlab_system, "gitlab_project_create.json", &a);
    assert_string_equal(a.body, ALREADY);
    assert_int_equal(patches(&c), 1);

    atomic_fetch_add(&fake_now, 1);
    deliver_fixture(w, &gitlab_system, "gitlab_project_transfer.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, REQUESTED);
    assert_int_equal(patches(&c), 2);
    atomic_fetch_add(&fake_now, WEBHOOK_DISCOVERY_INTERVAL_MS);
    deliver_fixture(w, &github_repository, "github_repository_renamed.json", &a);
    assert_string_equal(a.body, REQUESTED);
    assert_int_equal(patches(&c), 3);
    /* A discovery asks nothing of the indexer. */
    assert_string_equal(queued(t->dir, names, sizeof(names)), "");
    webhook_free(w);
    fakeapi_stop(c.api);
}

/* Without a right proof a repository event is refused before anything is asked of the API server. */
static void test_webhook_unproven_events_request_nothing(void **state)
{
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct webhook *w;
    struct webhook_answer a;
    size_t len;
    char *body = fixture_read("tests/fixtures/hooks", "github_repository_created.json", &len);
    char sig[80];
    struct hook_proof none = {NULL, NULL, NULL}, forged = {sig, NULL, NULL}, token = {NULL, NULL, "wrong"};
    struct hook_proof gitea_only = {NULL, "0000000000000000000000000000000000000000000000000000000000000000", NULL};

    fake_cluster_start(&c);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    sign(push_api, sig); /* a signature of another body */
    webhook_handle(w, &none, &github_repository, body, len, 0, &a);
    assert_int_equal(a.status, 401);
    assert_int_equal(a.outcome, CMETRICS_REFUSED_SIGNATURE);
    webhook_handle(w, &forged, &github_repository, body, len, 0, &a);
    assert_int_equal(a.status, 401);
    webhook_handle(w, &token, &gitlab_system, body, len, 0, &a);
    assert_int_equal(a.status, 401);
    webhook_handle(w, &gitea_only, &gitea_repository, body, len, 0, &a);
    assert_int_equal(a.status, 401);
    assert_string_equal(a.body, "{\"error\":\"missing or wrong signature\"}");
    assert_int_equal(fakeapi_count(c.api, "PATCH", "/"), 0);
    assert_int_equal(fakeapi_count(c.api, "GET", "/"), 0);
    free(body);
    webhook_free(w);
    fakeapi_stop(c.api);
}

/* Proven events that are neither pushes nor repository events are answered and ignored: an issue in a
 * listed repository queues no reindex, as it did when every delivery was read as a push. */
static void test_webhook_ignores_other_events(void **state)
{
    static const struct hook_event_headers issues = {"issues", NULL, NULL}, ping = {"ping", NULL, NULL};
    static const struct hook_event_headers gitlab_issue = {NULL, NULL, "Issue Hook"};
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct webhook *w;
    struct webhook_answer a;
    char names[256];

    fake_cluster_start(&c);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    deliver_fixture(w, &issues, "github_issues_opened.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, OTHER_EVENT);
    assert_int_equal(a.outcome, CMETRICS_IGNORED);
    deliver_fixture(w, &ping, "github_ping.json", &a);
    assert_string_equal(a.body, OTHER_EVENT);
    deliver_proven(w, &github_repository, "{\"action\":\"edited\",\"repository\":{\"full_name\":\"acme/x\"}}", &a);
    assert_string_equal(a.body, OTHER_EVENT);
    deliver_fixture(w, &gitlab_system, "gitlab_project_update.json", &a);
    assert_string_equal(a.body, OTHER_EVENT);
    deliver_fixture(w, &gitlab_issue, "gitlab_issue.json", &a);
    assert_string_equal(a.body, OTHER_EVENT);
    assert_int_equal(a.status, 202);
    assert_string_equal(queued(t->dir, names, sizeof(names)), "");
    assert_int_equal(patches(&c), 0);
    webhook_free(w);
    fakeapi_stop(c.api);
}

/* A branch pushed to a repository the corpus does not list is how a new repository's first push looks:
 * it requests a discovery, within the same interval as the repository events. A listed repository's
 * push is queued as before, and a tag is not a branch either way. */
static void test_webhook_unlisted_push_requests_discovery(void **state)
{
    static const char unlisted[] =
        "{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"https://github.com/org/brand-new.git\"}}";
    static const char unlisted_tag[] =
        "{\"ref\":\"refs/tags/v1\",\"repository\":{\"clone_url\":\"https://github.com/org/brand-new.git\"}}";
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct webhook *w;
    struct webhook_answer a;
    char names[256];
    time_t from = time(NULL);

    fake_cluster_start(&c);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    deliver_proven(w, &github_push, unlisted_tag, &a);
    assert_string_equal(a.body, "{\"ignored\":\"not a branch\"}");
    assert_int_equal(patches(&c), 0);
    deliver_proven(w, &github_push, unlisted, &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, REQUESTED);
    assert_int_equal(a.outcome, CMETRICS_ACCEPTED);
    assert_int_equal(patches(&c), 1);
    assert_last_patch(&c, from, time(NULL));
    deliver_proven(w, &github_push, push_api, &a);
    assert_string_equal(a.body, "{\"queued\":\"github.com/org/api\"}");
    assert_string_equal(queued(t->dir, names, sizeof(names)), "github.com%2Forg%2Fapi");
    deliver_proven(w, &github_repository, "{\"action\":\"created\"}", &a);
    assert_string_equal(a.body, ALREADY);
    deliver_proven(w, &github_push, unlisted, &a);
    assert_string_equal(a.body, ALREADY);
    assert_int_equal(patches(&c), 1);
    webhook_free(w);
    fakeapi_stop(c.api);
}

/* A patch the API server refuses (RBAC) or that cannot reach it is a 503 counted as discovery_failed;
 * the deliveries of the rest of that interval get the same answer without asking again, and the first
 * after it asks again. */
static void test_webhook_discovery_failures(void **state)
{
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct webhook *w;
    struct webhook_answer a;
    char dir[TMPDIR_MAX + 8];

    fake_cluster_start(&c);
    atomic_store(&c.refuse, 1);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    deliver_fixture(w, &github_repository, "github_repository_created.json", &a);
    assert_int_equal(a.status, 503);
    assert_string_equal(a.body, CANNOT);
    assert_int_equal(a.outcome, CMETRICS_DISCOVERY_FAILED);
    assert_int_equal(patches(&c), 1);
    atomic_fetch_add(&fake_now, WEBHOOK_DISCOVERY_INTERVAL_MS - 1);
    deliver_fixture(w, &gitlab_system, "gitlab_project_create.json", &a);
    assert_int_equal(a.status, 503);
    assert_int_equal(a.outcome, CMETRICS_DISCOVERY_FAILED);
    assert_int_equal(patches(&c), 1);
    atomic_store(&c.refuse, 0);
    atomic_fetch_add(&fake_now, 1);
    deliver_fixture(w, &gitlab_system, "gitlab_project_create.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, REQUESTED);
    assert_int_equal(patches(&c), 2);
    webhook_free(w);
    fakeapi_stop(c.api);

    /* An API server nobody answers for: nothing listens on port 1 of the loopback. */
    snprintf(dir, sizeof(dir), "%s/down", t->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    w = new_listing_webhook(dir, listed, NULL, "http://127.0.0.1:1");
    deliver_fixture(w, &gitea_repository, "gitea_repository_deleted.json", &a);
    assert_int_equal(a.status, 503);
    assert_string_equal(a.body, CANNOT);
    assert_int_equal(a.outcome, CMETRICS_DISCOVERY_FAILED);
    webhook_free(w);
}

/* Without --corpus there is nothing to annotate: repository events are ignored, and an unlisted
 * repository's push is answered as before discoveries existed. */
static void test_webhook_without_corpus(void **state)
{
    const struct tmpdir *t = *state;
    struct webhook *w = new_webhook(t->dir);
    struct webhook_answer a;
    static const char unlisted[] =
        "{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"https://github.com/org/brand-new.git\"}}";

    deliver_fixture(w, &github_repository, "github_repository_created.json", &a);
    assert_int_equal(a.status, 202);
    assert_string_equal(a.body, "{\"ignored\":\"the corpus discovers no repositories (no --webhook-discovery and --corpus)\"}");
    assert_int_equal(a.outcome, CMETRICS_IGNORED);
    deliver_proven(w, &github_push, unlisted, &a);
    assert_string_equal(a.body, "{\"ignored\":\"the corpus does not list this repository\"}");
    webhook_free(w);
}

#define DELIVERY_THREADS 8
#define DELIVERIES_PER_THREAD 25

struct delivery_thread {
    struct webhook *w;
    const char *body;
    int requested, already; /* the answers this thread got */
};

static void *deliver_repeatedly(void *arg)
{
    struct delivery_thread *d = arg;
    struct webhook_answer a;

    for (int i = 0; i < DELIVERIES_PER_THREAD; i++) {
        deliver_proven(d->w, &github_repository, d->body, &a);
        d->requested += strcmp(a.body, REQUESTED) == 0;
        d->already += strcmp(a.body, ALREADY) == 0;
    }
    return NULL;
}

/* Deliveries on several threads at once, as the front's connection threads make them, request one
 * discovery in all (also under ThreadSanitizer). */
static void test_webhook_discovery_once_across_threads(void **state)
{
    const struct tmpdir *t = *state;
    struct fake_cluster c;
    struct delivery_thread d[DELIVERY_THREADS];
    pthread_t th[DELIVERY_THREADS];
    int requested = 0, already = 0;
    size_t len;
    char *body = fixture_read("tests/fixtures/hooks", "github_repository_created.json", &len);
    struct webhook *w;

    fake_cluster_start(&c);
    w = new_listing_webhook(t->dir, listed, NULL, fakeapi_url(c.api));
    for (int i = 0; i < DELIVERY_THREADS; i++) {
        d[i] = (struct delivery_thread){w, body, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, deliver_repeatedly, &d[i]), 0);
    }
    for (int i = 0; i < DELIVERY_THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        requested += d[i].requested;
        already += d[i].already;
    }
    assert_int_equal(requested, 1);
    assert_int_equal(already, DELIVERY_THREADS * DELIVERIES_PER_THREAD - 1);
    assert_int_equal(patches(&c), 1);
    free(body);
    webhook_free(w);
    fakeapi_stop(c.api);
}

/* Sends request (a whole HTTP/1.1 request, which asks to close the connection) to 127.0.0.1:port and
 * returns the answer's status, its body into body (size bytes) unless that is NULL. */
static int http_answer(int port, const char *request, char *body, size_t size)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    char answer[1024];
    const char *start;
    size_t got = 0;
    ssize_t n;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    while (got < sizeof(answer) - 1 && (n = read(fd, answer + got, sizeof(answer) - 1 - got)) > 0)
        got += (size_t)n;
    answer[got] = '\0';
    close(fd);
    assert_int_equal(strncmp(answer, "HTTP/1.1 ", 9), 0);
    start = strstr(answer, "\r\n\r\n");
    assert_non_null(start);
    if (body)
        snprintf(body, size, "%s", start + 4);
    return atoi(answer + 9);
}

static int http_status(int port, const char *request)
{
    return http_answer(port, request, NULL, 0);
}

/* A POST of body to /hooks/push with the headers given (each a "Name: value\r\n" line, or ""), as a
 * whole request. */
static const char *delivery_request(char *out, size_t size, const char *headers, const char *body)
{
    snprintf(out, size,
             "POST " WEBHOOK_PATH " HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n%s\r\n%s",
             strlen(body), headers, body);
    return out;
}

static const char *push_request(char *out, size_t size, const char *headers)
{
    return delivery_request(out, size, headers, push_api);
}

#define DELIVERIES "zoekt_connector_webhook_deliveries_total"

/* Through the front, each delivery is counted by the proof it carried (Gitea's header wins over the
 * GitHub header Gitea also sends) and by what became of it. */
static void test_webhook_counts_deliveries(void **state)
{
    const struct tmpdir *t = *state;
    struct cmetrics *m = cmetrics_new(1);
    struct webhook *w = new_listing_webhook(t->dir, listed, m, NULL);
    struct front_route route = webhook_route(w);
    struct front_opts o = {.listen = "127.0.0.1:0", .routes = &route, .nroutes = 1};
    struct front *f = NULL;
    struct zk_err err = {0};
    struct buf b;
    char sig[80], headers[256], req[1024];

    assert_int_equal(front_start(&o, &f, &err), ZK_OK);
    sign(push_api, sig);
    assert_int_equal(http_status(front_port(f), push_request(req, sizeof(req), "X-Gitlab-Token: " SECRET "\r\n")),
                     202);
    snprintf(headers, sizeof(headers), "X-Hub-Signature-256: %s\r\nX-Gitea-Signature: %s\r\n", sig, sig + 7);
    assert_int_equal(http_status(front_port(f), push_request(req, sizeof(req), headers)), 202);
    snprintf(headers, sizeof(headers), "X-Hub-Signature-256: %s\r\n", sig);
    assert_int_equal(http_status(front_port(f), push_request(req, sizeof(req), headers)), 202);
    assert_int_equal(http_status(front_port(f), push_request(req, sizeof(req), "")), 401);
    assert_int_equal(http_status(front_port(f), push_request(req, sizeof(req), "X-Gitlab-Token: no\r\n")), 401);
    assert_int_equal(
        http_status(front_port(f), "GET " WEBHOOK_PATH " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"), 405);
    front_stop(f);

    buf_init(&b, CMETRICS_TEXT_MAX);
    assert_int_equal(cmetrics_render(m, &b), ZK_OK);
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitlab\",outcome=\"accepted\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitea\",outcome=\"accepted\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"github\",outcome=\"accepted\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"none\",outcome=\"refused_signature\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitlab\",outcome=\"refused_signature\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"none\",outcome=\"bad_request\"} 1\n"));
    buf_free(&b);
    webhook_free(w);
    cmetrics_free(m);
}

/* Through the front, the event headers each host sends reach the webhook: Forgejo's and Gitea's own
 * (over the GitHub header they send too), GitHub's and GitLab's; and a discovery that fails is counted
 * as discovery_failed by the proof the delivery carried. */
static void test_webhook_event_headers_through_front(void **state)
{
    const struct tmpdir *t = *state;
    struct cmetrics *m = cmetrics_new(1);
    struct fake_cluster c;
    struct webhook *w;
    struct front_route route;
    struct front_opts o = {.listen = "127.0.0.1:0", .routes = &route, .nroutes = 1};
    struct front *f = NULL;
    struct zk_err err = {0};
    struct buf b;
    size_t len;
    char *deleted = fixture_read("tests/fixtures/hooks", "gitea_repository_deleted.json", &len);
    char *issue = fixture_read("tests/fixtures/hooks", "github_issues_opened.json", &len);
    char *created = fixture_read("tests/fixtures/hooks", "gitlab_project_create.json", &len);
    char sig[80], headers[512], req[4096], answer[512], names[256];

    fake_cluster_start(&c);
    atomic_store(&c.refuse, 1);
    w = new_listing_webhook(t->dir, listed, m, fakeapi_url(c.api));
    route = webhook_route(w);
    assert_int_equal(front_start(&o, &f, &err), ZK_OK);

    sign(deleted, sig);
    snprintf(headers, sizeof(headers),
             "X-GitHub-Event: push\r\nX-Forgejo-Event: repository\r\nX-Hub-Signature-256: %s\r\n"
             "X-Forgejo-Signature: %s\r\n",
             sig, sig + 7);
    assert_int_equal(http_answer(front_port(f), delivery_request(req, sizeof(req), headers, deleted), answer,
                                 sizeof(answer)),
                     503);
    assert_string_equal(answer, CANNOT);
    sign(issue, sig);
    snprintf(headers, sizeof(headers), "X-GitHub-Event: issues\r\nX-Hub-Signature-256: %s\r\n", sig);
    assert_int_equal(
        http_answer(front_port(f), delivery_request(req, sizeof(req), headers, issue), answer, sizeof(answer)), 202);
    assert_string_equal(answer, OTHER_EVENT);
    assert_int_equal(http_status(front_port(f), delivery_request(req, sizeof(req),
                                                                 "X-Gitlab-Event: System Hook\r\n"
                                                                 "X-Gitlab-Token: " SECRET "\r\n",
                                                                 created)),
                     503);
    atomic_store(&c.refuse, 0);
    atomic_fetch_add(&fake_now, WEBHOOK_DISCOVERY_INTERVAL_MS);
    sign(deleted, sig);
    snprintf(headers, sizeof(headers),
             "X-GitHub-Event: repository\r\nX-Gitea-Event: repository\r\nX-Hub-Signature-256: %s\r\n"
             "X-Gitea-Signature: %s\r\n",
             sig, sig + 7);
    assert_int_equal(http_answer(front_port(f), delivery_request(req, sizeof(req), headers, deleted), answer,
                                 sizeof(answer)),
                     202);
    assert_string_equal(answer, REQUESTED);
    front_stop(f);
    assert_string_equal(queued(t->dir, names, sizeof(names)), "");
    assert_int_equal(patches(&c), 2);

    buf_init(&b, CMETRICS_TEXT_MAX);
    assert_int_equal(cmetrics_render(m, &b), ZK_OK);
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitea\",outcome=\"discovery_failed\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitlab\",outcome=\"discovery_failed\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"github\",outcome=\"ignored\"} 1\n"));
    assert_non_null(strstr(b.data, DELIVERIES "{scheme=\"gitea\",outcome=\"accepted\"} 1\n"));
    buf_free(&b);
    free(deleted);
    free(issue);
    free(created);
    webhook_free(w);
    fakeapi_stop(c.api);
    cmetrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_github_signature), cmocka_unit_test(test_gitea_and_gitlab),
        cmocka_unit_test(test_no_proof_or_secret), cmocka_unit_test(test_push_payloads),
        cmocka_unit_test(test_event_kinds), cmocka_unit_test(test_event_fixtures), cmocka_unit_test(test_url_keys),
        cmocka_unit_test_setup_teardown(test_webhook_queues_a_listed_push, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_long_list_line, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_refuses_and_ignores, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_counts_deliveries, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_repository_events_request_discovery, tmpdir_setup,
                                        tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_unproven_events_request_nothing, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_ignores_other_events, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_unlisted_push_requests_discovery, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_discovery_failures, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_without_corpus, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_discovery_once_across_threads, tmpdir_setup, tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_event_headers_through_front, tmpdir_setup, tmpdir_teardown),
    };

    mem_setup();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
