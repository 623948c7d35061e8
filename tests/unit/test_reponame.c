/* Unit tests for connector/zoekt/reponame: repository names as people write them select the repository
 * Zoekt serves, and a name that selects nothing gets the closest real names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "connector/zoekt/reponame.h"

static void test_normalize(void **state)
{
    static const struct {
        const char *arg, *want;
    } cases[] = {
        {"payments", "payments"},
        {"  acme/payments/ ", "acme/payments"},
        {"/acme/payments", "acme/payments"},
        {"https://github.com/acme/payments.git", "github.com/acme/payments"},
        {"https://github.com/acme/payments", "github.com/acme/payments"},
        {"https://github.com/acme/payments/", "github.com/acme/payments"},
        {"ssh://git@github.com:22/acme/payments.git", "github.com/acme/payments"},
        {"https://user:secret@git.example.org/acme/payments.git", "git.example.org/acme/payments"},
        {"git@github.com:acme/payments.git", "github.com/acme/payments"},
        {"mirrors/github.com/acme/payments", "mirrors/github.com/acme/payments"},
        {"payments*", "payments*"},
        /* Only a URL loses ".git": a plain name may really end with it. */
        {"acme/dotfiles.git", "acme/dotfiles.git"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[ZN_ARG_MAX + 1];
        struct zk_err err = {0};

        assert_int_equal(zn_normalize(cases[i].arg, out, sizeof(out), &err), ZK_OK);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].arg, out, cases[i].want);
    }
}

static void test_normalize_errors(void **state)
{
    char out[ZN_ARG_MAX + 1], longer[ZN_ARG_MAX + 2];
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(zn_normalize("", out, sizeof(out), &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "empty repository name"));
    assert_int_equal(zn_normalize(" / ", out, sizeof(out), &err), ZK_EINVAL);
    assert_int_equal(zn_normalize("https://github.com/", out, sizeof(out), &err), ZK_OK);
    assert_string_equal(out, "github.com");
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(zn_normalize(longer, out, sizeof(out), &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
}

static void test_matches(void **state)
{
    static const struct {
        const char *pattern, *name;
        int want;
    } cases[] = {
        /* A plain name: the whole name or trailing segments, never part of a segment. */
        {"bulk", "acme/bulk", 1},
        {"bulk", "acme/bulkhead", 0},
        {"bulk", "bulk", 1},
        {"payments", "mirrors/github.com/acme/payments", 1},
        {"acme/payments", "mirrors/github.com/acme/payments", 1},
        {"github.com/acme/payments", "mirrors/github.com/acme/payments", 1},
        {"mirrors/github.com/acme/payments", "mirrors/github.com/acme/payments", 1},
        {"cme/payments", "mirrors/github.com/acme/payments", 0},
        {"acme", "mirrors/github.com/acme/payments", 0},
        {"Payments", "acme/payments", 0},
        /* Globs: the same anchoring; '*' stays within a segment, '**' crosses them. */
        {"payments*", "acme/payments", 1},
        {"payments*", "acme/payments-api", 1},
        {"payments*", "acme/old-payments", 0},
        {"acme/*", "mirrors/x.org/acme/web", 1},
        {"acme/*", "mirrors/x.org/acme/web/sub", 0},
        {"acme/**", "mirrors/x.org/acme/web/sub", 1},
        {"**/web", "mirrors/x.org/acme/web", 1},
        {"pay?ents", "acme/payments", 1},
        {"pay?ents", "acme/pay/ents", 0},
        {"api-[0-9]", "acme/api-7", 1},
        {"api-[!0-9]", "acme/api-7", 0},
        {"{web,api}", "acme/api", 1},
        {"{web,api}", "acme/db", 0},
        {"x/{a,b{c,d}}z", "x/bdz", 1},
        {"a\\*", "acme/a*", 1},
        {"a\\*", "acme/ab", 0},
        {"[unclosed", "acme/[unclosed", 0},
        {"{unclosed", "acme/{unclosed", 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (zn_matches(cases[i].pattern, cases[i].name) != cases[i].want)
            fail_msg("pattern %s, name %s: want %d", cases[i].pattern, cases[i].name, cases[i].want);
}

/* A glob written to backtrack a great deal still answers (no match) instead of running for minutes. */
static void test_matches_is_bounded(void **state)
{
    char name[300];

    (void)state;
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    assert_false(zn_matches("*a*a*a*a*a*a*a*a*a*a*a*a*b", name));
    assert_int_equal(zn_matches_bounded("*a*a*a*a*a*a*a*a*a*a*a*a*b", name), -1);
    assert_int_equal(zn_matches_bounded("*a*b", name), 0);
}

static void test_suggest(void **state)
{
    static const char *const names[] = {"acme/api-gateway", "acme/bulk",     "acme/bulkhead", "acme/payments",
                                        "acme/web",         "tools/linter", "zeta/payments-legacy"};
    const size_t n = sizeof(names) / sizeof(names[0]);
    size_t pick[ZN_SUGGEST_MAX], k;

    (void)state;
    /* A typo finds the name it was meant to be, nearest first. */
    k = zn_suggest("paymnets", names, n, pick, ZN_SUGGEST_MAX);
    assert_true(k >= 1);
    assert_string_equal(names[pick[0]], "acme/payments");
    k = zn_suggest("acme/bulkk", names, n, pick, ZN_SUGGEST_MAX);
    assert_int_equal(k >= 2, 1);
    assert_string_equal(names[pick[0]], "acme/bulk");
    assert_string_equal(names[pick[1]], "acme/bulkhead");
    /* Case does not matter for suggestions. */
    k = zn_suggest("WEB", names, n, pick, ZN_SUGGEST_MAX);
    assert_int_equal(k, 1);
    assert_string_equal(names[pick[0]], "acme/web");
    /* A shared segment makes a candidate: every acme repository, at most the cap. */
    k = zn_suggest("acme/zzzzzzzzzz", names, n, pick, ZN_SUGGEST_MAX);
    assert_int_equal(k, ZN_SUGGEST_MAX);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(strncmp(names[pick[i]], "acme/", 5), 0);
    /* A glob is compared without its wildcards. */
    k = zn_suggest("linterr*", names, n, pick, 2);
    assert_int_equal(k, 1);
    assert_string_equal(names[pick[0]], "tools/linter");
    /* Nothing alike: no suggestion. */
    assert_int_equal(zn_suggest("kubernetes", names, n, pick, ZN_SUGGEST_MAX), 0);
    assert_int_equal(zn_suggest("anything", names, 0, pick, ZN_SUGGEST_MAX), 0);
}

/* A clone URL from another host (normalised to github.com/kubernetes/client-go) names the project its
 * last segment names: k8s.io/client-go comes first, ahead of the repositories that share the host and
 * the owner and are fewer edits away. */
static void test_suggest_same_last_segment(void **state)
{
    static const char *const names[] = {"github.com/kubernetes/api",     "github.com/kubernetes/apimachinery",
                                        "github.com/kubernetes/client",  "github.com/kubernetes/kubectl",
                                        "github.com/kubernetes/kubelet", "github.com/kubernetes/klog",
                                        "k8s.io/client-go"};
    char pattern[ZN_ARG_MAX + 1];
    struct zk_err err = {0};
    size_t pick[ZN_SUGGEST_MAX], k;

    (void)state;
    assert_int_equal(zn_normalize("https://github.com/kubernetes/client-go.git", pattern, sizeof(pattern), &err),
                     ZK_OK);
    k = zn_suggest(pattern, names, sizeof(names) / sizeof(names[0]), pick, ZN_SUGGEST_MAX);
    assert_true(k >= 1);
    assert_string_equal(names[pick[0]], "k8s.io/client-go");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),          cmocka_unit_test(test_normalize_errors),
        cmocka_unit_test(test_matches),            cmocka_unit_test(test_matches_is_bounded),
        cmocka_unit_test(test_suggest), cmocka_unit_test(test_suggest_same_last_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
