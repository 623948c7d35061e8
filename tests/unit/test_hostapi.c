/* Unit tests for controller/sources/hostapi: the requests for each host's repository listing, the
 * recorded pages of tests/fixtures/sources read into repositories, Link headers (hostile ones too),
 * 304 and the errors, and the wait a host's rate-limit headers impose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/sources/hostapi.h"
#include "tests/support/fixture.h"

#define FIXTURES "tests/fixtures/sources"

static const struct hapi_source github_org = {HAPI_GITHUB, NULL, "acme", 0, 0};
static const struct hapi_source gitlab_group = {HAPI_GITLAB, "https://gitlab.example.com/api/v4", "acme", 0, 0};
static const struct hapi_source gitea_org = {HAPI_GITEA, "https://git.example.org/api/v1", "acme", 0, 0};

/* Asserts that r's headers are exactly want (NULL-terminated). */
static void expect_headers(const struct hapi_request *r, const char *const *want)
{
    int i = 0;

    for (; want[i]; i++) {
        if (!r->headers[i])
            fail_msg("header %d missing, want %s", i, want[i]);
        assert_string_equal(r->headers[i], want[i]);
    }
    assert_null(r->headers[i]);
}

static void test_request_github(void **state)
{
    struct hapi_source user = {HAPI_GITHUB, "https://ghe.example.com/api/v3/", "octo cat", 1, 0};
    struct hapi_request r;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(hapi_request_page(&github_org, NULL, "ghp_abc", "W/\"e1\"", &r, &err), ZK_OK);
    assert_string_equal(r.url,
                        "https://api.github.com/orgs/acme/repos?type=all&sort=created&direction=asc&per_page=100");
    expect_headers(&r, (const char *const[]){"X-GitHub-Api-Version: 2022-11-28",
                                             "Authorization: Bearer ghp_abc", "If-None-Match: W/\"e1\"", NULL});
    assert_string_equal(r.accept, "application/vnd.github+json");
    assert_int_equal(r.max_body, HAPI_MAX_BODY);
    hapi_request_free(&r);

    /* GitHub Enterprise Server: the base's trailing slash goes, the owner is escaped, a user's listing
     * keeps to what the user owns, and no token sends no Authorization. */
    assert_int_equal(hapi_request_page(&user, NULL, NULL, NULL, &r, &err), ZK_OK);
    assert_string_equal(
        r.url, "https://ghe.example.com/api/v3/users/octo%20cat/repos?type=owner&sort=created&direction=asc&per_page=100");
    expect_headers(&r, (const char *const[]){"X-GitHub-Api-Version: 2022-11-28",
                                             NULL});
    hapi_request_free(&r);

    /* A next page is asked as given, on the same origin. */
    assert_int_equal(hapi_request_page(&github_org, "https://API.github.com/organizations/9919/repos?page=2", "", "",
                                       &r, &err),
                     ZK_OK);
    assert_string_equal(r.url, "https://API.github.com/organizations/9919/repos?page=2");
    hapi_request_free(&r);
}

static void test_request_gitlab_gitea(void **state)
{
    struct hapi_source sub = {HAPI_GITLAB, "https://gitlab.example.com/api/v4", "acme/platform", 0, 1};
    struct hapi_source gluser = {HAPI_GITLAB, "https://gitlab.example.com/api/v4", "jdoe", 1, 0};
    struct hapi_source gtuser = {HAPI_GITEA, "http://gitea:3000/api/v1", "jdoe", 1, 0};
    struct hapi_request r;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(hapi_request_page(&gitlab_group, NULL, "glpat-x", NULL, &r, &err), ZK_OK);
    assert_string_equal(r.url, "https://gitlab.example.com/api/v4/groups/acme/projects?include_subgroups=true&"
                               "with_shared=false&per_page=100&order_by=id&sort=asc&archived=false");
    expect_headers(&r, (const char *const[]){"PRIVATE-TOKEN: glpat-x", NULL});
    hapi_request_free(&r);

    /* A subgroup's path is one escaped segment; archived projects wanted: no archived parameter. */
    assert_int_equal(hapi_request_page(&sub, NULL, NULL, "\"abc\"", &r, &err), ZK_OK);
    assert_string_equal(r.url, "https://gitlab.example.com/api/v4/groups/acme%2Fplatform/projects?include_subgroups="
                               "true&with_shared=false&per_page=100&order_by=id&sort=asc");
    expect_headers(&r, (const char *const[]){"If-None-Match: \"abc\"", NULL});
    hapi_request_free(&r);

    assert_int_equal(hapi_request_page(&gluser, NULL, NULL, NULL, &r, &err), ZK_OK);
    assert_string_equal(r.url, "https://gitlab.example.com/api/v4/users/jdoe/projects?per_page=100&order_by=id&sort=asc&"
                               "archived=false");
    hapi_request_free(&r);

    assert_int_equal(hapi_request_page(&gitea_org, NULL, "t0k", NULL, &r, &err), ZK_OK);
    assert_string_equal(r.url, "https://git.example.org/api/v1/orgs/acme/repos?limit=50&page=1");
    expect_headers(&r, (const char *const[]){"Authorization: token t0k", NULL});
    hapi_request_free(&r);

    assert_int_equal(hapi_request_page(&gtuser, NULL, NULL, NULL, &r, &err), ZK_OK);
    assert_string_equal(r.url, "http://gitea:3000/api/v1/users/jdoe/repos?limit=50&page=1");
    hapi_request_free(&r);
}

static void test_request_refused(void **state)
{
    struct hapi_source nobase = {HAPI_GITLAB, NULL, "acme", 0, 0};
    struct hapi_source ftp = {HAPI_GITEA, "ftp://git.example.org/api/v1", "acme", 0, 0};
    struct hapi_source noowner = {HAPI_GITHUB, NULL, "", 0, 0};
    char longtok[HAPI_MAX_TOKEN + 2];
    struct hapi_request r;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(hapi_request_page(&nobase, NULL, NULL, NULL, &r, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "GitLab group acme"));
    assert_int_equal(hapi_request_page(&ftp, NULL, NULL, NULL, &r, &err), ZK_EINVAL);
    assert_int_equal(hapi_request_page(&noowner, NULL, NULL, NULL, &r, &err), ZK_EINVAL);
    /* A token or ETag that would end the header line and start another. */
    assert_int_equal(hapi_request_page(&github_org, NULL, "abc\r\nX-Evil: 1", NULL, &r, &err), ZK_EINVAL);
    assert_int_equal(hapi_request_page(&github_org, NULL, NULL, "\"e\"\nX-Evil: 1", &r, &err), ZK_EINVAL);
    memset(longtok, 'a', sizeof(longtok) - 1);
    longtok[sizeof(longtok) - 1] = '\0';
    assert_int_equal(hapi_request_page(&github_org, NULL, longtok, NULL, &r, &err), ZK_EINVAL);
    /* A page URL on another origin would carry the token there. */
    assert_int_equal(hapi_request_page(&github_org, "https://api.github.com.evil.example/orgs/acme/repos", "t", NULL,
                                       &r, &err),
                     ZK_EINVAL);
    assert_non_null(strstr(err.msg, "not on the API's origin"));
    assert_int_equal(hapi_request_page(&github_org, "http://api.github.com/orgs/acme/repos", "t", NULL, &r, &err),
                     ZK_EINVAL);
}

/* Feeds each header line to a fresh meta, as libcurl hands them over. */
static void meta_from(struct hapi_meta *m, const char *const *lines)
{
    hapi_meta_init(m);
    for (int i = 0; lines[i]; i++)
        hapi_meta_header(m, lines[i], strlen(lines[i]));
}

/* Reads a fixture page; returns the code and leaves the repositories in acc. */
static int read_fixture(const struct hapi_source *src, const char *name, const struct hapi_meta *m,
                        struct hapi_repos *acc, enum hapi_outcome *outcome, char **next, struct zk_err *err)
{
    size_t len;
    char *body = fixture_read(FIXTURES, name, &len);
    int rc = hapi_page_read(src, 200, m, body, len, acc, outcome, next, err);

    free(body);
    return rc;
}

static void expect_repo(const struct hapi_repo *r, const char *full, const char *clone, const char *web,
                        const char *branch, int archived, int fork, enum hapi_visibility vis)
{
    assert_string_equal(r->full_name, full);
    assert_string_equal(r->clone_url, clone);
    assert_string_equal(r->web_url, web);
    assert_string_equal(r->default_branch, branch);
    assert_int_equal(r->archived, archived);
    assert_int_equal(r->fork, fork);
    assert_int_equal(r->visibility, vis);
}

static void test_page_github(void **state)
{
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;

    (void)state;
    meta_from(&m, (const char *const[]){
                      "HTTP/2 200\r\n",
                      "etag: W/\"6b1c0d\"\r\n",
                      "x-ratelimit-remaining: 4987\r\n",
                      "x-ratelimit-reset: 1796300000\r\n",
                      "link: <https://api.github.com/organizations/9919/repos?type=all&per_page=100&page=2>; "
                      "rel=\"next\", <https://api.github.com/organizations/9919/repos?type=all&per_page=100&page=7>; "
                      "rel=\"last\"\r\n",
                      "\r\n",
                      NULL,
                  });
    assert_string_equal(m.etag, "W/\"6b1c0d\"");
    assert_int_equal(m.remaining, 4987);
    assert_int_equal(m.reset, 1796300000LL);
    assert_int_equal(read_fixture(&github_org, "github_orgs_acme_repos_page1.json", &m, &acc, &outcome, &next, &err),
                     ZK_OK);
    assert_int_equal(outcome, HAPI_MORE);
    assert_string_equal(next, "https://api.github.com/organizations/9919/repos?type=all&per_page=100&page=2");
    /* Six entries: one clones from another host and one has no clone URL. */
    assert_int_equal(acc.n, 4);
    assert_int_equal(acc.skipped, 2);
    expect_repo(&acc.items[0], "acme/payments", "https://github.com/acme/payments.git",
                "https://github.com/acme/payments", "main", 0, 0, HAPI_PUBLIC);
    expect_repo(&acc.items[1], "acme/ledger", "https://github.com/acme/ledger.git", "https://github.com/acme/ledger",
                "trunk", 0, 1, HAPI_PRIVATE);
    expect_repo(&acc.items[2], "acme/legacy-billing", "https://github.com/acme/legacy-billing.git",
                "https://github.com/acme/legacy-billing", "master", 1, 0, HAPI_INTERNAL);
    /* Without "visibility" (older GitHub Enterprise Server), "private" decides. */
    expect_repo(&acc.items[3], "acme/Web-Frontend", "https://github.com/acme/Web-Frontend.git",
                "https://github.com/acme/Web-Frontend", "main", 0, 0, HAPI_PUBLIC);
    free(next);
    hapi_repos_free(&acc);
}

static void test_page_gitlab(void **state)
{
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;

    (void)state;
    meta_from(&m, (const char *const[]){
                      "Link: <https://gitlab.example.com/api/v4/groups/acme/projects?id=acme&include_subgroups=true"
                      "&order_by=id&page=1&per_page=100&sort=asc>; rel=\"first\", "
                      "<https://gitlab.example.com/api/v4/groups/acme/projects?id=acme&include_subgroups=true"
                      "&order_by=id&page=2&per_page=100&sort=asc>; rel=\"next\"\r\n",
                      "X-Next-Page: 2\r\n",
                      "RateLimit-Remaining: 1999\r\n",
                      "RateLimit-Reset: 1796300060\r\n",
                      NULL,
                  });
    assert_int_equal(read_fixture(&gitlab_group, "gitlab_groups_acme_projects_page1.json", &m, &acc, &outcome, &next,
                                  &err),
                     ZK_OK);
    assert_int_equal(outcome, HAPI_MORE);
    assert_string_equal(next, "https://gitlab.example.com/api/v4/groups/acme/projects?id=acme&include_subgroups=true"
                              "&order_by=id&page=2&per_page=100&sort=asc");
    assert_int_equal(m.remaining, 1999);
    assert_int_equal(acc.n, 5);
    assert_int_equal(acc.skipped, 0);
    assert_int_equal(acc.items[0].kind, HAPI_GITLAB);
    expect_repo(&acc.items[0], "acme/payments", "https://gitlab.example.com/acme/payments.git",
                "https://gitlab.example.com/acme/payments", "main", 0, 0, HAPI_INTERNAL);
    expect_repo(&acc.items[1], "acme/platform/api-gateway", "https://gitlab.example.com/acme/platform/api-gateway.git",
                "https://gitlab.example.com/acme/platform/api-gateway", "main", 0, 0, HAPI_PUBLIC);
    expect_repo(&acc.items[2], "acme/platform/runtime/scheduler",
                "https://gitlab.example.com/acme/platform/runtime/scheduler.git",
                "https://gitlab.example.com/acme/platform/runtime/scheduler", "main", 1, 0, HAPI_PRIVATE);
    /* A fork is a project with forked_from_project. */
    expect_repo(&acc.items[3], "acme/platform/nginx", "https://gitlab.example.com/acme/platform/nginx.git",
                "https://gitlab.example.com/acme/platform/nginx", "main", 0, 1, HAPI_PUBLIC);
    /* An empty project has a null default branch. */
    expect_repo(&acc.items[4], "acme/sandbox", "https://gitlab.example.com/acme/sandbox.git",
                "https://gitlab.example.com/acme/sandbox", "", 0, 0, HAPI_PRIVATE);
    free(next);
    hapi_repos_free(&acc);
}

static void test_page_gitea(void **state)
{
    /* Gitea writes its links from ROOT_URL; here the operator reaches it at another address, and the
     * next request still goes to that address. */
    struct hapi_source internal = {HAPI_GITEA, "https://gitea.tools.svc:3000/api/v1", "acme", 0, 0};
    struct hapi_source direct = {HAPI_GITEA, "https://git.example.org/api/v1", "acme", 0, 0};
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;

    (void)state;
    meta_from(&m, (const char *const[]){
                      "Link: <https://git.example.org/api/v1/orgs/acme/repos?limit=50&page=2>; rel=\"next\",<https://"
                      "git.example.org/api/v1/orgs/acme/repos?limit=50&page=3>; rel=\"last\"\r\n",
                      "X-Total-Count: 123\r\n",
                      NULL,
                  });
    assert_int_equal(read_fixture(&internal, "gitea_orgs_acme_repos_page1.json", &m, &acc, &outcome, &next, &err),
                     ZK_OK);
    assert_int_equal(outcome, HAPI_MORE);
    assert_string_equal(next, "https://gitea.tools.svc:3000/api/v1/orgs/acme/repos?limit=50&page=2");
    free(next);
    /* ... but its clone URLs name ROOT_URL's host, which is not the API's: every one is skipped. */
    assert_int_equal(acc.n, 0);
    assert_int_equal(acc.skipped, 5);
    hapi_repos_free(&acc);

    meta_from(&m, (const char *const[]){NULL});
    assert_int_equal(read_fixture(&direct, "gitea_orgs_acme_repos_page1.json", &m, &acc, &outcome, &next, &err), ZK_OK);
    assert_int_equal(outcome, HAPI_LAST);
    assert_null(next);
    assert_int_equal(acc.n, 5);
    expect_repo(&acc.items[0], "acme/payments", "https://git.example.org/acme/payments.git",
                "https://git.example.org/acme/payments", "main", 0, 0, HAPI_PUBLIC);
    expect_repo(&acc.items[1], "acme/ledger", "https://git.example.org/acme/ledger.git",
                "https://git.example.org/acme/ledger", "develop", 0, 0, HAPI_PRIVATE);
    expect_repo(&acc.items[2], "acme/tools", "https://git.example.org/acme/tools.git",
                "https://git.example.org/acme/tools", "main", 0, 0, HAPI_INTERNAL);
    expect_repo(&acc.items[3], "acme/forked-lib", "https://git.example.org/acme/forked-lib.git",
                "https://git.example.org/acme/forked-lib", "main", 0, 1, HAPI_PUBLIC);
    expect_repo(&acc.items[4], "acme/old-site", "https://git.example.org/acme/old-site.git",
                "https://git.example.org/acme/old-site", "master", 1, 0, HAPI_PUBLIC);
    hapi_repos_free(&acc);
}

static void test_link_header(void **state)
{
    static const struct {
        const char *value, *want; /* want NULL: ZK_EPARSE */
    } cases[] = {
        {"<https://h/a?page=2>; rel=\"next\"", "https://h/a?page=2"},
        {"<https://h/a?page=2>; rel=next", "https://h/a?page=2"},
        {"<https://h/a?page=1>; rel=\"prev\", <https://h/a?page=3>; rel=\"next\"", "https://h/a?page=3"},
        /* Parameters in any order, several relation types, any case, stray commas and spaces. */
        {" , <https://h/a?p=2> ;title=\"x, y; z\" ; REL=\"last Next\" ,, ", "https://h/a?p=2"},
        /* A comma inside the target is part of it. */
        {"<https://h/a?q=a,b&page=2>; rel=\"next\"", "https://h/a?q=a,b&page=2"},
        {"<https://h/a?page=9>; rel=\"last\"", ""},
        {"<https://h/a?page=2>; rel=\"nextpage\"", ""},
        {"", ""},
        {"<https://h/a?page=2>; rel=\"next\", <https://h/a?page=2>; rel=\"next\"", "https://h/a?page=2"},
        /* Malformed: each must be refused, not read as "the last page". */
        {"https://h/a?page=2; rel=\"next\"", NULL},
        {"<https://h/a?page=2; rel=\"next\"", NULL},
        {"<https://h/a?page=2>; rel=\"next", NULL},
        {"<https://h/a?page=2> rel=\"next\"", NULL},
        {"<https://h/a?page=2>; =next", NULL},
        {"<https://h/a?page=2>; rel=", NULL},
        {"<>; rel=\"next\"", NULL},
        {"<https://h/a b>; rel=\"next\"", NULL},
        {"<https://h/a?page=2>; rel=\"next\", <https://h/a?page=3>; rel=\"next\"", NULL},
        {"<https://h/a?page=2>; rel=\"next\\\"", NULL},
    };
    char out[64];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = hapi_link_next(cases[i].value, strlen(cases[i].value), out, sizeof(out));

        if (!cases[i].want) {
            if (rc != ZK_EPARSE)
                fail_msg("%s: read as \"%s\", want a refusal", cases[i].value, out);
            continue;
        }
        if (rc != ZK_OK || strcmp(out, cases[i].want) != 0)
            fail_msg("%s: rc %d \"%s\", want \"%s\"", cases[i].value, rc, out, cases[i].want);
    }
}

static void test_link_hostile(void **state)
{
    size_t n = 3 * HAPI_MAX_URL;
    char *v = malloc(n + 32), out[HAPI_MAX_URL + 1];
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;

    (void)state;
    /* A target longer than the buffer is refused, and so is a header cut off inside one. */
    v[0] = '<';
    memset(v + 1, 'a', n);
    strcpy(v + 1 + n, ">; rel=\"next\"");
    assert_int_equal(hapi_link_next(v, strlen(v), out, sizeof(out)), ZK_EPARSE);
    assert_int_equal(hapi_link_next(v, n / 2, out, sizeof(out)), ZK_EPARSE);
    /* A NUL byte inside the value ends nothing early and is not a token character. */
    assert_int_equal(hapi_link_next("<https://h/x>; r\0l=next", 23, out, sizeof(out)), ZK_EPARSE);
    free(v);

    /* A page whose Link header cannot be read fails, so the source keeps its last good listing. */
    meta_from(&m, (const char *const[]){"Link: <https://api.github.com/x?page=2; rel=\"next\"\r\n", NULL});
    assert_int_equal(m.link_bad, 1);
    assert_int_equal(hapi_page_read(&github_org, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "Link header"));
    /* Two Link headers naming different next pages: likewise. */
    meta_from(&m, (const char *const[]){"Link: <https://api.github.com/x?page=2>; rel=next\r\n",
                                        "Link: <https://api.github.com/x?page=5>; rel=next\r\n", NULL});
    assert_int_equal(m.link_bad, 1);
    /* A next link on another host keeps only its path, which must lie under the API's. */
    meta_from(&m, (const char *const[]){"Link: <https://evil.example/orgs/acme/repos?page=2>; rel=next\r\n", NULL});
    assert_int_equal(hapi_page_read(&github_org, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_OK);
    assert_string_equal(next, "https://api.github.com/orgs/acme/repos?page=2");
    free(next);
    meta_from(&m, (const char *const[]){"Link: <https://evil.example/other/api/v4/x?page=2>; rel=next\r\n", NULL});
    assert_int_equal(hapi_page_read(&gitlab_group, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_EPARSE);
    assert_null(next);
    meta_from(&m, (const char *const[]){"Link: </api/v4/../v3/x?page=2>; rel=next\r\n", NULL});
    assert_int_equal(hapi_page_read(&gitlab_group, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_EPARSE);
    meta_from(&m, (const char *const[]){"Link: </api/v4x?page=2>; rel=next\r\n", NULL});
    assert_int_equal(hapi_page_read(&gitlab_group, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_EPARSE);
    /* A relative link is a path on the API's origin. */
    meta_from(&m, (const char *const[]){"Link: </api/v4/groups/acme/projects?page=2>; rel=next\r\n", NULL});
    assert_int_equal(hapi_page_read(&gitlab_group, 200, &m, "[]", 2, &acc, &outcome, &next, &err), ZK_OK);
    assert_string_equal(next, "https://gitlab.example.com/api/v4/groups/acme/projects?page=2");
    free(next);
    assert_int_equal(acc.n, 0);
    hapi_repos_free(&acc);
}

static void test_headers_bounded(void **state)
{
    char line[600];
    struct hapi_meta m;

    (void)state;
    hapi_meta_init(&m);
    /* An ETag too long to keep is not kept at all (a cut one would never match). */
    snprintf(line, sizeof(line), "ETag: \"%0*d\"\r\n", HAPI_MAX_ETAG, 7);
    hapi_meta_header(&m, line, strlen(line));
    assert_string_equal(m.etag, "");
    hapi_meta_header(&m, "etag:   \"v1\"  \r\n", 16);
    assert_string_equal(m.etag, "\"v1\"");
    /* Numbers that are not numbers, or too long for one, are unknown. */
    hapi_meta_header(&m, "X-RateLimit-Remaining: -1\r\n", 27);
    assert_int_equal(m.remaining, -1);
    hapi_meta_header(&m, "X-RateLimit-Reset: 99999999999999999999\r\n", 41);
    assert_int_equal(m.reset, -1);
    hapi_meta_header(&m, "ratelimit-remaining: 0\r\n", 24);
    assert_int_equal(m.remaining, 0);
    /* Lines without a colon, and headers of no interest, change nothing. */
    hapi_meta_header(&m, "HTTP/1.1 200 OK\r\n", 17);
    hapi_meta_header(&m, "X-Total: 5\r\n", 12);
    hapi_meta_header(&m, "Retry-After: 30", 15);
    assert_string_equal(m.retry_after, "30");
    assert_string_equal(m.next, "");
}

static void test_page_status(void **state)
{
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;
    static const char odd[] =
        "[1, null, {\"full_name\":\"acme/x\"},"
        " {\"full_name\":\"acme/y\",\"clone_url\":\"ssh://git.example.org/acme/y.git\"},"
        " {\"full_name\":\"\",\"clone_url\":\"https://git.example.org/acme/z.git\"},"
        " {\"full_name\":\"acme/q\",\"clone_url\":\"https://git.example.org/acme/q'.git\"}]";
    char *big;
    size_t len = 0;

    (void)state;
    hapi_meta_init(&m);
    assert_int_equal(hapi_page_read(&github_org, 304, &m, NULL, 0, &acc, &outcome, &next, &err), ZK_OK);
    assert_int_equal(outcome, HAPI_UNCHANGED);
    assert_int_equal(hapi_page_read(&github_org, 401, &m, "{}", 2, &acc, &outcome, &next, &err), ZK_EHTTP);
    assert_non_null(strstr(err.msg, "GitHub organisation acme: HTTP 401 (the token was refused)"));
    assert_int_equal(hapi_page_read(&gitlab_group, 404, &m, "{}", 2, &acc, &outcome, &next, &err), ZK_EHTTP);
    assert_non_null(strstr(err.msg, "GitLab group acme: HTTP 404"));
    /* A plain 403 is a permission problem; one with the limit spent is the rate limit. */
    assert_int_equal(hapi_page_read(&github_org, 403, &m, "{}", 2, &acc, &outcome, &next, &err), ZK_EHTTP);
    m.remaining = 0;
    assert_int_equal(hapi_page_read(&github_org, 403, &m, "{}", 2, &acc, &outcome, &next, &err), ZK_EBUSY);
    hapi_meta_init(&m);
    assert_int_equal(hapi_page_read(&gitea_org, 429, &m, "", 0, &acc, &outcome, &next, &err), ZK_EBUSY);
    assert_int_equal(hapi_page_read(&gitea_org, 502, &m, "", 0, &acc, &outcome, &next, &err), ZK_ESERVER);
    /* Bodies that are not a list of repositories. */
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, "{\"message\":\"x\"}", 15, &acc, &outcome, &next, &err),
                     ZK_EPARSE);
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, "[{\"full_name\":", 14, &acc, &outcome, &next, &err),
                     ZK_EPARSE);
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, NULL, 0, &acc, &outcome, &next, &err), ZK_EPARSE);
    /* Entries that are not objects, or lack what a repository needs, are skipped: no clone URL, one
     * that is not https, an empty name, a clone URL the indexer would refuse (a quote). */
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, odd, strlen(odd), &acc, &outcome, &next, &err), ZK_OK);
    assert_int_equal(acc.n, 0);
    assert_int_equal(acc.skipped, 6);
    /* A page of more repositories than any host sends is refused whole. */
    big = malloc(16 * (HAPI_MAX_PAGE_REPOS + 2));
    big[len++] = '[';
    for (int i = 0; i <= HAPI_MAX_PAGE_REPOS; i++)
        len += (size_t)sprintf(big + len, "%s{}", i ? "," : "");
    big[len++] = ']';
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, big, len, &acc, &outcome, &next, &err), ZK_EPARSE);
    assert_non_null(strstr(err.msg, "101 repositories"));
    free(big);
    hapi_repos_free(&acc);
}

static void test_listing_bound(void **state)
{
    struct hapi_meta m;
    struct hapi_repos acc = {0};
    enum hapi_outcome outcome;
    struct zk_err err = {0};
    char *next = NULL;
    char page[160];
    int len;

    (void)state;
    hapi_meta_init(&m);
    /* A listing stops at HAPI_MAX_REPOS; the page that would pass it adds nothing. */
    len = snprintf(page, sizeof(page), "[{\"full_name\":\"acme/a\",\"clone_url\":\"https://git.example.org/acme/a.git\"}]");
    for (int i = 0; i < HAPI_MAX_REPOS; i++)
        assert_int_equal(hapi_page_read(&gitea_org, 200, &m, page, (size_t)len, &acc, &outcome, &next, &err), ZK_OK);
    assert_int_equal(acc.n, HAPI_MAX_REPOS);
    assert_int_equal(hapi_page_read(&gitea_org, 200, &m, page, (size_t)len, &acc, &outcome, &next, &err), ZK_ETOOBIG);
    assert_int_equal(acc.n, HAPI_MAX_REPOS);
    hapi_repos_free(&acc);
}

static void test_wait(void **state)
{
    const time_t now = 1796300000;
    struct hapi_meta m;

    (void)state;
    /* Nothing said, a 200: ask again at once. */
    meta_from(&m, (const char *const[]){"x-ratelimit-remaining: 12\r\n", "x-ratelimit-reset: 1796303600\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 200, now), 0);
    /* GitHub, limit spent: until the reset, even on a 200 (the next request would be refused). */
    meta_from(&m, (const char *const[]){"x-ratelimit-remaining: 0\r\n", "x-ratelimit-reset: 1796301234\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 200, now), 1796301234);
    assert_int_equal(hapi_wait_until(&m, 403, now), 1796301234);
    /* A reset already past: at once. */
    meta_from(&m, (const char *const[]){"x-ratelimit-remaining: 0\r\n", "x-ratelimit-reset: 1796299000\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 403, now), 0);
    /* GitLab's names. */
    meta_from(&m, (const char *const[]){"RateLimit-Remaining: 0\r\n", "RateLimit-Reset: 1796300060\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + 60);
    /* Retry-After in seconds, and as an HTTP date (Gitea, Forgejo, secondary limits, proxies). */
    meta_from(&m, (const char *const[]){"Retry-After: 120\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + 120);
    meta_from(&m, (const char *const[]){"Retry-After: Thu, 03 Dec 2026 10:05:00 GMT\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 503, 1796292000), 1796292300);
    /* The later of the two when both are given. */
    meta_from(&m, (const char *const[]){"Retry-After: 30\r\n", "RateLimit-Remaining: 0\r\n",
                                        "RateLimit-Reset: 1796300100\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + 100);
    /* A 429 that says nothing: the default. A date that is no date: likewise. */
    meta_from(&m, (const char *const[]){NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + HAPI_DEFAULT_WAIT_SECONDS);
    meta_from(&m, (const char *const[]){"Retry-After: soon\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + HAPI_DEFAULT_WAIT_SECONDS);
    /* A hostile wait is cut to the cap. */
    meta_from(&m, (const char *const[]){"Retry-After: 999999999999\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 429, now), now + HAPI_MAX_WAIT_SECONDS);
    meta_from(&m, (const char *const[]){"x-ratelimit-remaining: 0\r\n", "x-ratelimit-reset: 999999999999999999\r\n",
                                        NULL});
    assert_int_equal(hapi_wait_until(&m, 403, now), now + HAPI_MAX_WAIT_SECONDS);
    meta_from(&m, (const char *const[]){"Retry-After: Fri, 31 Dec 2100 23:59:59 GMT\r\n", NULL});
    assert_int_equal(hapi_wait_until(&m, 503, now), now + HAPI_MAX_WAIT_SECONDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_github),
        cmocka_unit_test(test_request_gitlab_gitea),
        cmocka_unit_test(test_request_refused),
        cmocka_unit_test(test_page_github),
        cmocka_unit_test(test_page_gitlab),
        cmocka_unit_test(test_page_gitea),
        cmocka_unit_test(test_link_header),
        cmocka_unit_test(test_link_hostile),
        cmocka_unit_test(test_headers_bounded),
        cmocka_unit_test(test_page_status),
        cmocka_unit_test(test_listing_bound),
        cmocka_unit_test(test_wait),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
