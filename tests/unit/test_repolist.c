/* Unit tests for controller/sources/repolist: a source's filters, the grace period that keeps a
 * vanished repository for a while and a failing source's listing whole, and the merge with
 * spec.repositories (explicit entries win, duplicates by key go, the order is by name). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/sources/repolist.h"
#include "mem.h"

/* Appends a repository to a listing, as hapi_page_read would. */
static void add_from(struct hapi_repos *l, enum hapi_kind kind, const char *full, const char *clone, int archived,
                     int fork, enum hapi_visibility vis)
{
    l->items = mem_realloc(l->items, (l->n + 1) * sizeof(*l->items));
    l->items[l->n++] = (struct hapi_repo){mem_strdup(full), mem_strdup(clone), mem_strdup(""), mem_strdup("main"),
                                          archived, fork, vis, kind};
}

/* The same, listed by GitHub's API. */
static void add(struct hapi_repos *l, const char *full, const char *clone, int archived, int fork,
                enum hapi_visibility vis)
{
    add_from(l, HAPI_GITHUB, full, clone, archived, fork, vis);
}

static void test_filter(void **state)
{
    const char *const inc[] = {"acme/platform/*", "ACME/payments", NULL};
    const char *const exc[] = {"*-archive", "acme/platform/runtime/*", NULL};
    struct rlist_filter all = {0};
    struct rlist_filter f = {inc, exc, 0, 0, HAPI_PUBLIC | HAPI_INTERNAL};
    struct hapi_repos l = {0};

    (void)state;
    add(&l, "acme/payments", "https://g/acme/payments.git", 0, 0, HAPI_INTERNAL);
    add(&l, "acme/platform/api", "https://g/acme/platform/api.git", 0, 0, HAPI_PUBLIC);
    add(&l, "acme/platform/deep/er/svc", "https://g/acme/platform/deep/er/svc.git", 0, 0, HAPI_PUBLIC);
    add(&l, "acme/platform/runtime/sched", "https://g/acme/platform/runtime/sched.git", 0, 0, HAPI_PUBLIC);
    add(&l, "acme/platform/logs-archive", "https://g/acme/platform/logs-archive.git", 0, 0, HAPI_PUBLIC);
    add(&l, "acme/platform/old", "https://g/acme/platform/old.git", 1, 0, HAPI_PUBLIC);
    add(&l, "acme/platform/nginx", "https://g/acme/platform/nginx.git", 0, 1, HAPI_PUBLIC);
    add(&l, "acme/platform/secret", "https://g/acme/platform/secret.git", 0, 0, HAPI_PRIVATE);
    add(&l, "acme/website", "https://g/acme/website.git", 0, 0, HAPI_PUBLIC);

    /* No filter keeps every repository that is neither archived nor a fork. */
    assert_int_equal(rlist_keep(&all, &l.items[0]), 1);
    assert_int_equal(rlist_keep(&all, &l.items[5]), 0);
    assert_int_equal(rlist_keep(&all, &l.items[6]), 0);
    all.archived = all.forks = 1;
    assert_int_equal(rlist_keep(&all, &l.items[5]), 1);
    assert_int_equal(rlist_keep(&all, &l.items[6]), 1);

    rlist_filter(&f, &l);
    assert_int_equal(l.n, 3);
    /* Globs ignore case, and '*' crosses '/'; the order is kept. */
    assert_string_equal(l.items[0].full_name, "acme/payments");
    assert_string_equal(l.items[1].full_name, "acme/platform/api");
    assert_string_equal(l.items[2].full_name, "acme/platform/deep/er/svc");
    hapi_repos_free(&l);
}

static void test_key(void **state)
{
    static const struct {
        const char *url, *key;
    } cases[] = {
        {"https://GitHub.com/Acme/Pay.git", "github.com/acme/pay"},
        {"https://github.com/acme/pay/", "github.com/acme/pay"},
        {"git@github.com:acme/pay.git", "github.com/acme/pay"},
        {"ssh://git@github.com:22/acme/pay.git", "github.com/acme/pay"},
        {"https://gitlab.example.com:8443/acme/platform/api.git", "gitlab.example.com/acme/platform/api"},
    };
    char key[64];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(rlist_key(cases[i].url, key, sizeof(key)), 1);
        assert_string_equal(key, cases[i].key);
    }
    assert_int_equal(rlist_key("https://github.com/", key, sizeof(key)), 0);
    assert_int_equal(rlist_key("https://github.com/acme/a-name-longer-than-the-buffer-given-here-for-it", key, 16), 0);
}

/* The full names of s, joined with spaces, in a static buffer. */
static const char *names_of(const struct rlist_set *s)
{
    static char out[512];
    size_t n = 0;

    out[0] = '\0';
    for (size_t i = 0; i < s->n; i++)
        n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", i ? " " : "", s->items[i].repo.full_name);
    return out;
}

static void test_grace(void **state)
{
    const long grace = 3600;
    struct hapi_repos first = {0}, second = {0}, third = {0};
    struct rlist_set s1, s2, s3, s4, s5;

    (void)state;
    add(&first, "acme/b", "https://g/acme/b.git", 0, 0, HAPI_PUBLIC);
    add(&first, "acme/a", "https://g/acme/a.git", 0, 0, HAPI_PUBLIC);
    add(&first, "acme/A", "https://g/acme/A", 0, 0, HAPI_PUBLIC); /* the same repository again */
    rlist_grace(NULL, &first, 1000, grace, &s1);
    assert_string_equal(names_of(&s1), "acme/a acme/b");
    assert_int_equal(s1.items[0].last_seen, 1000);

    /* acme/a vanished: it stays within the grace period, with its old sighting; acme/c arrives. */
    add(&second, "acme/b", "https://g/acme/b.git", 0, 0, HAPI_PUBLIC);
    add(&second, "acme/c", "https://g/acme/c.git", 0, 0, HAPI_PUBLIC);
    rlist_grace(&s1, &second, 2000, grace, &s2);
    assert_string_equal(names_of(&s2), "acme/a acme/b acme/c");
    assert_int_equal(s2.items[0].last_seen, 1000);
    assert_int_equal(s2.items[1].last_seen, 2000);

    /* The source fails for longer than the grace period: nothing expires, nothing changes. */
    rlist_grace(&s2, NULL, 1000 + 10 * grace, grace, &s3);
    assert_string_equal(names_of(&s3), "acme/a acme/b acme/c");
    assert_int_equal(s3.items[0].last_seen, 1000);

    /* It answers again without acme/a, whose last sighting is now grace old: it leaves. */
    rlist_grace(&s3, &second, 1000 + grace, grace, &s4);
    assert_string_equal(names_of(&s4), "acme/b acme/c");

    /* A repository that comes back is seen now again. */
    add(&third, "acme/a", "https://g/acme/a.git", 0, 0, HAPI_PUBLIC);
    rlist_grace(&s4, &third, 9000, grace, &s5);
    assert_string_equal(names_of(&s5), "acme/a");
    assert_int_equal(s5.items[0].last_seen, 9000);

    rlist_set_free(&s1);
    rlist_set_free(&s2);
    rlist_set_free(&s3);
    rlist_set_free(&s4);
    rlist_set_free(&s5);
    hapi_repos_free(&first);
    hapi_repos_free(&second);
    hapi_repos_free(&third);
}

/* A set holding the listing l, seen at time 1. */
static void set_of(const struct hapi_repos *l, struct rlist_set *s)
{
    rlist_grace(NULL, l, 1, 60, s);
}

static void test_merge(void **state)
{
    char *main_only[] = {"main", "release", NULL};
    char *none[] = {NULL};
    const struct corpus_repo explicit_repos[] = {
        {"git@github.com:acme/Payments.git", "github.com/acme/Payments", main_only, "https://github.com/acme/Payments",
         "github"},
        {"https://git.internal/tools/lint.git", "lint", none, NULL, NULL},
    };
    struct hapi_repos gh = {0}, gl = {0};
    struct rlist_set sgh, sgl;
    const struct rlist_set *sets[] = {&sgh, &sgl};
    struct corpus_repo *out = NULL;
    struct zk_err err = {0};
    size_t dropped;
    int n;

    (void)state;
    add(&gh, "acme/payments", "https://github.com/acme/payments.git", 0, 0, HAPI_PUBLIC);
    add(&gh, "acme/web", "https://github.com/acme/web.git", 0, 0, HAPI_PUBLIC);
    add(&gh, "acme/zeta", "https://github.com/acme/zeta.git", 0, 0, HAPI_PUBLIC);
    add_from(&gl, HAPI_GITLAB, "tools/lint", "https://git.internal/tools/Lint", 0, 0, HAPI_PUBLIC); /* explicit's key */
    add_from(&gl, HAPI_GITLAB, "acme/web", "https://GITHUB.com/acme/web/", 0, 0, HAPI_PUBLIC); /* as GitHub's */
    add_from(&gl, HAPI_GITLAB, "bad/-name", "https://git.internal/bad/-name.git", 0, 0, HAPI_PUBLIC);
    add_from(&gl, HAPI_GITLAB, "infra/dns", "https://git.internal:8443/infra/dns.git", 0, 0, HAPI_PUBLIC);
    set_of(&gh, &sgh);
    set_of(&gl, &sgl);

    assert_int_equal(rlist_merge(explicit_repos, 2, sets, 2, &out, &n, &dropped, &err), ZK_OK);
    assert_int_equal(n, 5);
    assert_int_equal(dropped, 1);
    /* Sorted by name; the explicit entries keep their URL, name, branches and address. */
    assert_string_equal(out[0].name, "git.internal/infra/dns");
    assert_string_equal(out[0].web_url, "https://git.internal:8443/infra/dns");
    assert_string_equal(out[0].code_host, "gitlab");
    assert_string_equal(out[1].name, "github.com/acme/Payments");
    assert_string_equal(out[1].url, "git@github.com:acme/Payments.git");
    assert_string_equal(out[1].branches[0], "main");
    assert_string_equal(out[1].branches[1], "release");
    assert_null(out[1].branches[2]);
    assert_string_equal(out[1].web_url, "https://github.com/acme/Payments");
    /* A discovered repository: the derived name and address, its host's kind, the remote's HEAD. */
    assert_string_equal(out[2].name, "github.com/acme/web");
    assert_string_equal(out[2].url, "https://github.com/acme/web.git");
    assert_null(out[2].branches[0]);
    assert_string_equal(out[2].web_url, "https://github.com/acme/web");
    assert_string_equal(out[2].code_host, "github");
    assert_string_equal(out[3].name, "github.com/acme/zeta");
    assert_string_equal(out[4].name, "lint");
    assert_string_equal(out[4].url, "https://git.internal/tools/lint.git");
    assert_null(out[4].web_url);
    assert_null(out[4].code_host);
    rlist_repos_free(out, n);

    /* A discovered repository whose derived name an explicit entry took by hand gives way. */
    {
        const struct corpus_repo named[] = {{"https://other.example/x.git", "github.com/acme/zeta", none, NULL, NULL}};

        assert_int_equal(rlist_merge(named, 1, sets, 1, &out, &n, &dropped, &err), ZK_OK);
        assert_int_equal(n, 3);
        assert_string_equal(out[2].name, "github.com/acme/zeta");
        assert_string_equal(out[2].url, "https://other.example/x.git");
        rlist_repos_free(out, n);
    }

    /* The merge of nothing is empty. */
    assert_int_equal(rlist_merge(NULL, 0, NULL, 0, &out, &n, &dropped, &err), ZK_OK);
    assert_int_equal(n, 0);
    rlist_repos_free(out, n);

    rlist_set_free(&sgh);
    rlist_set_free(&sgl);
    hapi_repos_free(&gh);
    hapi_repos_free(&gl);
}

static void test_merge_bound(void **state)
{
    struct hapi_repos l = {0};
    struct rlist_set s;
    const struct rlist_set *sets[] = {&s};
    struct corpus_repo *out = NULL;
    struct zk_err err = {0};
    size_t dropped;
    int n;

    (void)state;
    for (int i = 0; i <= SPEC_MAX_REPOS; i++) {
        char name[32], url[64];

        snprintf(name, sizeof(name), "acme/r%04d", i);
        snprintf(url, sizeof(url), "https://g/acme/r%04d.git", i);
        add(&l, name, url, 0, 0, HAPI_PUBLIC);
    }
    set_of(&l, &s);
    assert_int_equal(rlist_merge(NULL, 0, sets, 1, &out, &n, &dropped, &err), ZK_ETOOBIG);
    assert_null(out);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.msg, "2001 repositories"));
    /* One fewer fits. */
    rlist_set_free(&s);
    hapi_repo_free(&l.items[--l.n]);
    set_of(&l, &s);
    assert_int_equal(rlist_merge(NULL, 0, sets, 1, &out, &n, &dropped, &err), ZK_OK);
    assert_int_equal(n, SPEC_MAX_REPOS);
    assert_string_equal(out[0].name, "g/acme/r0000");
    rlist_repos_free(out, n);
    rlist_set_free(&s);
    hapi_repos_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),   cmocka_unit_test(test_key),   cmocka_unit_test(test_grace),
        cmocka_unit_test(test_merge),    cmocka_unit_test(test_merge_bound),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
