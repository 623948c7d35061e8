/* Unit tests for connector/zoekt/query: globs become anchored RE2 regexes, filters become Zoekt atoms,
 * and bad input gets a clear error instead of a query Zoekt would reject or misread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "connector/zoekt/query.h"

struct glob_case {
    const char *glob;
    enum zq_anchor anchor;
    const char *regex;
};

static void test_glob_table(void **state)
{
    static const struct glob_case cases[] = {
        {"*.yaml", ZQ_ANCHOR_PATH, "(^|/)[^/]*\\.yaml$"},
        {"**/*.go", ZQ_ANCHOR_PATH, "^(.*/)?[^/]*\\.go$"},
        {"src/**/*.c", ZQ_ANCHOR_PATH, "^src/(.*/)?[^/]*\\.c$"},
        {"src/**", ZQ_ANCHOR_PATH, "^src/.*$"},
        {"a?b", ZQ_ANCHOR_PATH, "(^|/)a[^/]b$"},
        {"*.[ch]", ZQ_ANCHOR_PATH, "(^|/)[^/]*\\.[ch]$"},
        {"v[0-9a-f-].txt", ZQ_ANCHOR_PATH, "(^|/)v[0-9a-f\\-]\\.txt$"},
        {"[]-/]x", ZQ_ANCHOR_PATH, "^[\\]\\-/]x$"},
        {"[!_]*.go", ZQ_ANCHOR_PATH, "(^|/)[^_][^/]*\\.go$"},
        {"[]x].c", ZQ_ANCHOR_PATH, "(^|/)[\\]x]\\.c$"},
        /* An escaped '-' stays a member: written bare it would make a range of its neighbours. */
        {"[\\]\\-x].c", ZQ_ANCHOR_PATH, "(^|/)[\\]\\-x]\\.c$"},
        /* Parentheses in a class are escaped: Zoekt's lexer counts them inside an atom, and a bare ')'
         * would end it and close a group. */
        {"*[)(]*", ZQ_ANCHOR_PATH, "(^|/)[^/]*[\\)\\(][^/]*$"},
        {"Makefile", ZQ_ANCHOR_PATH, "(^|/)Makefile$"},
        {"a.b+c(d)|e^f$g", ZQ_ANCHOR_PATH, "(^|/)a\\.b\\+c\\(d\\)\\|e\\^f\\$g$"},
        {"/docs/*.md", ZQ_ANCHOR_PATH, "^docs/[^/]*\\.md$"},
        {"vendor/", ZQ_ANCHOR_PATH, "^vendor/.*$"},
        {"*.{c,h}", ZQ_ANCHOR_PATH, "(^|/)[^/]*\\.(c|h)$"},
        {"my file.txt", ZQ_ANCHOR_PATH, "(^|/)my\\x20file\\.txt$"},
        {"say\"hi\".txt", ZQ_ANCHOR_PATH, "(^|/)say\\x22hi\\x22\\.txt$"},
        {"a\\*b", ZQ_ANCHOR_PATH, "(^|/)a\\*b$"},
        {"api-*", ZQ_ANCHOR_FULL, "^api-[^/]*$"},
        {"org/*", ZQ_ANCHOR_FULL, "^org/[^/]*$"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zk_err err = {0};
        char *re = NULL;

        assert_int_equal(zq_glob_to_regex(cases[i].glob, cases[i].anchor, &re, &err), ZK_OK);
        if (strcmp(re, cases[i].regex) != 0)
            fail_msg("glob %s: got %s, want %s", cases[i].glob, re, cases[i].regex);
        free(re);
    }
}

static void test_glob_errors(void **state)
{
    static const struct {
        const char *glob;
        const char *msg_part;
    } cases[] = {
        {"", "empty glob"},
        {"src/[ab", "has no closing ']'"},
        {"[z-a].c", "the range z-a is reversed"},
        {"[a--]", "the range a-- is reversed"},
        {"[a-[-z]", "the range a-[ is reversed"},
        {"[\xc3\xa9-z]", "ranges of non-ASCII characters"},
        {"*.{c,h", "has no closing '}'"},
        {"a}b", "has no opening '{'"},
        {"trailing\\", "lone '\\'"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zk_err err = {0};
        char *re = (char *)"untouched";

        assert_int_equal(zq_glob_to_regex(cases[i].glob, ZQ_ANCHOR_PATH, &re, &err), ZK_EINVAL);
        assert_null(re);
        if (!strstr(err.msg, cases[i].msg_part))
            fail_msg("glob %s: message %s lacks %s", cases[i].glob, err.msg, cases[i].msg_part);
    }
}

static void test_repo_regex(void **state)
{
    static const struct {
        const char *arg, *regex;
    } cases[] = {
        /* A plain name matches the whole name or its trailing segments. */
        {"alpha", "(^|/)alpha$"},
        {"org/my.repo", "(^|/)org/my\\.repo$"},
        /* A clone URL is reduced to host/path first. */
        {"https://github.com/org/x.git", "(^|/)github\\.com/org/x$"},
        {"git@github.com:org/x.git", "(^|/)github\\.com/org/x$"},
        /* A glob keeps its end anchor and '*' stays within one segment. */
        {"org/api-*", "(^|/)org/api-[^/]*$"},
        {"payments*", "(^|/)payments[^/]*$"},
    };
    struct zk_err err = {0};
    char *re = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(zq_repo_regex(cases[i].arg, &re, &err), ZK_OK);
        if (strcmp(re, cases[i].regex) != 0)
            fail_msg("repo %s: got %s, want %s", cases[i].arg, re, cases[i].regex);
        free(re);
    }
    assert_int_equal(zq_repo_regex("", &re, &err), ZK_EINVAL);
    assert_null(re);
    assert_int_equal(zq_repo_regex("api-[", &re, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "no closing ']'"));

    /* read_file's query: the repository as above, the path exact and relative. */
    assert_int_equal(zq_file_query("acme/bulk", "/src/a+b.go", NULL, &re, &err), ZK_OK);
    assert_string_equal(re, "repo:(^|/)acme/bulk$ file:^src/a\\+b\\.go$");
    free(re);
    assert_int_equal(zq_file_query("acme/bulk", "/", NULL, &re, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "empty file path"));
    assert_int_equal(zq_file_query("", "a.go", NULL, &re, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "repo: empty repository name"));
}

struct build_case {
    const char *name;
    struct zq_spec spec;
    const char *want;
};

static void test_build_table(void **state)
{
    static const char *const two_repos[] = {"alpha", "beta"};
    static const char *const one_repo[] = {"beta"};
    static const char *const yaml[] = {"*.yaml"};
    static const char *const c_and_h[] = {"*.c", "*.h"};
    static const char *const tests[] = {"*_test.go", "vendor/"};
    static const struct build_case cases[] = {
        {"plain query alone is untouched", {.query = "needle"}, "needle"},
        {"whitespace trimmed", {.query = "  needle  "}, "needle"},
        {"single token is not wrapped", {.query = "needle", .repos = one_repo, .n_repos = 1}, "needle repo:(^|/)beta$"},
        {"several tokens are wrapped",
         {.query = "foo or bar", .repos = one_repo, .n_repos = 1},
         "(foo or bar) repo:(^|/)beta$"},
        {"repos are OR-ed",
         {.query = "needle", .repos = two_repos, .n_repos = 2},
         "needle repo:((^|/)alpha$|(^|/)beta$)"},
        {"file only", {.files = yaml, .n_files = 1}, "file:(^|/)[^/]*\\.yaml$"},
        {"files are OR-ed", {.query = "x", .files = c_and_h, .n_files = 2}, "x file:((^|/)[^/]*\\.c$|(^|/)[^/]*\\.h$)"},
        {"excludes each negate",
         {.query = "x", .exclude_files = tests, .n_exclude_files = 2},
         "x -file:(^|/)[^/]*_test\\.go$ -file:^vendor/.*$"},
        {"case sensitive", {.query = "Needle", .case_sensitive = 1}, "Needle case:yes"},
        {"user case repeated at top level",
         {.query = "case:yes Foo bar", .repos = one_repo, .n_repos = 1},
         "(case:yes Foo bar) case:yes repo:(^|/)beta$"},
        {"zoekt syntax kept intact",
         {.query = "lang:go func\\s+Main", .files = yaml, .n_files = 1},
         "(lang:go func\\s+Main) file:(^|/)[^/]*\\.yaml$"},
        /* A pattern is one quoted content: atom; inside Zoekt's quotes its backslashes and quotes are
         * doubled, so that RE2 gets the pattern as written, spaces and all. */
        {"pattern quoted whole",
         {.query = "time\\.Sleep\\([0-9]+ \\* time\\.Second\\)", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"time\\\\.Sleep\\\\([0-9]+ \\\\* time\\\\.Second\\\\)\""},
        {"pattern with or and a quote is one atom, not wrapped",
         {.query = "a or \"b\"", .repos = one_repo, .n_repos = 1, .syntax = ZQ_SYNTAX_REGEX},
         "content:\"a or \\\"b\\\"\" repo:(^|/)beta$"},
        {"literal escapes metacharacters",
         {.query = "func New(", .syntax = ZQ_SYNTAX_LITERAL, .case_sensitive = 1},
         "content:\"func\\\\x20New\\\\(\" case:yes"},
        /* A pattern keeps its blanks, as ripgrep does: " nil)" is not "nil)", "^\tdefer " not "^\tdefer"
         * (which also finds "deferred"); line breaks at the ends go. */
        {"pattern keeps leading and trailing blanks",
         {.query = " nil)", .syntax = ZQ_SYNTAX_LITERAL},
         "content:\"\\\\x20nil\\\\)\""},
        {"pattern keeps a trailing blank, drops a trailing line break",
         {.query = "^\\tdefer \n", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"^\\\\tdefer \" case:no"},
        /* Smart case is ripgrep's: case-insensitive unless the pattern has an upper-case letter of its
         * own. Zoekt's case:auto reads \w, (?i) and POSIX classes as upper case, so case:no is said
         * outright for patterns that have them; a plain one keeps Zoekt's default. */
        {"\\w without an upper-case letter is case-insensitive",
         {.query = "\\w+error\\(", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"\\\\w+error\\\\(\" case:no"},
        {"a (?i) group is case-insensitive", {.query = "(?i)fixme", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"(?i)fixme\" case:no"},
        {"a POSIX class is no upper-case letter", {.query = "[[:upper:]]+_max", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"[[:upper:]]+_max\" case:no"},
        {"escapes and named groups name no letter",
         {.query = "\\pL\\p{Greek}(?P<Name>x)\\S", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"\\\\pL\\\\p{Greek}(?P<Name>x)\\\\S\" case:no"},
        {"an upper-case letter of its own keeps Zoekt's case:auto",
         {.query = "\\w+Error", .syntax = ZQ_SYNTAX_REGEX}, "content:\"\\\\w+Error\""},
        {"a plain lower-case pattern keeps the short form", {.query = "needle", .syntax = ZQ_SYNTAX_REGEX},
         "content:\"needle\""},
        {"case_sensitive wins over smart case",
         {.query = "\\w+error", .syntax = ZQ_SYNTAX_REGEX, .case_sensitive = 1},
         "content:\"\\\\w+error\" case:yes"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zk_err err = {0};
        char *q = NULL;

        if (zq_build(&cases[i].spec, &q, &err) != ZK_OK)
            fail_msg("%s: %s", cases[i].name, err.msg);
        if (strcmp(q, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].name, q, cases[i].want);
        free(q);
    }
}

static void test_build_errors(void **state)
{
    static const char *const bad_glob[] = {"src/[x"};
    static const char *const empty_repo[] = {""};
    struct zk_err err = {0};
    struct zq_spec spec = {0};
    char *q = NULL;

    (void)state;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "nothing to search"));
    spec.query = "   ";
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    spec.syntax = ZQ_SYNTAX_REGEX;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    spec.syntax = ZQ_SYNTAX_ZOEKT;

    spec.query = "x";
    spec.files = bad_glob;
    spec.n_files = 1;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "file: glob \"src/[x\""));
    assert_null(q);

    spec.n_files = 0;
    spec.exclude_files = bad_glob;
    spec.n_exclude_files = 1;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "exclude_file:"));

    spec.n_exclude_files = 0;
    spec.repos = empty_repo;
    spec.n_repos = 1;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_EINVAL);
    assert_non_null(strstr(err.msg, "repo: empty repository name"));
}

/* A query in Zoekt's syntax goes inside the parentheses that keep the filters out of it, so a query
 * whose parentheses do not balance as Zoekt reads them is refused before anything is sent: "x) or (e"
 * would have read (x) or (e repo:...) and searched every repository. */
static void test_build_parens_refused(void **state)
{
    static const char *const alpha[] = {"alpha"};
    static const struct {
        const char *query;
        const char *msg;
    } cases[] = {
        {"x) or (e", "the ')' at position 2 closes no '(' (a literal one is written \\))"},
        {"x ) or ( e", "the ')' at position 3 closes no '('"},
        {"x)or(e", "the ')' at position 2 closes no '('"},
        {"(a or b)) or (c", "the ')' at position 9 closes no '('"},
        /* Zoekt reads a token whose text is ")" as a parenthesis, quoted or not. */
        {"\")\" or (e", "the ')' at position 1 closes no '('"},
        {"a \"\\)\" or (e", "the ')' at position 3 closes no '('"},
        {"-) a", "the '-' at position 1 negates nothing"},
        {"(a b", "the '(' at position 1 is not closed"},
        {"a ((b) c", "the '(' at position 3 is not closed"},
        {"a \"b c", "the '\"' at position 3 has no closing '\"'"},
        {"a \"b\\\"", "the '\"' at position 3 has no closing '\"'"},
        {"a b\\", "it ends with a lone '\\'"},
        {"a\nb", "Zoekt stops reading it at position 2 (a line break between terms)"},
        {"a \"\" b", "Zoekt stops reading it at position 3 (an empty \"\")"},
        /* "([(])" is a term that leaves a '(' open: a blank after it would open a group instead. */
        {"a ([(])", "its last term, at position 3, leaves a '(' open inside itself"},
        /* A '-' that negates nothing would negate the filters that follow it: "- repo:..." searches
         * every other repository. */
        {"-", "the '-' at position 1 negates nothing"},
        {" --", "the '-' at position 2 negates nothing"},
        {"a -", "the '-' at position 3 negates nothing"},
        {"(a -) b", "the '-' at position 4 negates nothing"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zq_spec spec = {.query = cases[i].query, .repos = alpha, .n_repos = 1};
        struct zk_err err = {0};
        char *q = NULL;

        if (zq_build(&spec, &q, &err) != ZK_EINVAL || q)
            fail_msg("%s: accepted as %s", cases[i].query, q ? q : "(null)");
        if (!strstr(err.msg, cases[i].msg) || !strstr(err.msg, "it was not sent (fix the query; retrying will "
                                                                "not help while it is unchanged)"))
            fail_msg("%s: got \"%s\", want \"%s\"", cases[i].query, err.msg, cases[i].msg);
    }
}

/* Parentheses that Zoekt reads as part of a term (escaped, quoted, inside the term) are no groups, and
 * balanced groups are kept as they are: such queries are accepted and wrapped whole. */
static void test_build_parens_accepted(void **state)
{
    static const char *const alpha[] = {"alpha"};
    static const struct {
        const char *query;
        const char *want;
    } cases[] = {
        {"foo\\( bar", "(foo\\( bar) repo:(^|/)alpha$"},
        {"x\\) or \\(e", "(x\\) or \\(e) repo:(^|/)alpha$"},
        {"content:\"a)\" b", "(content:\"a)\" b) repo:(^|/)alpha$"},
        {"\"x) or (e\" b", "(\"x) or (e\" b) repo:(^|/)alpha$"},
        {"\"a\\\"b)\" c", "(\"a\\\"b)\" c) repo:(^|/)alpha$"},
        {"(a or b) c", "((a or b) c) repo:(^|/)alpha$"},
        {"f(x) or g(y)", "(f(x) or g(y)) repo:(^|/)alpha$"},
        {"(a)b c", "((a)b c) repo:(^|/)alpha$"},
        {"-(a b) c", "(-(a b) c) repo:(^|/)alpha$"},
        {"\"(\" a \")\" b", "(\"(\" a \")\" b) repo:(^|/)alpha$"},
        /* A last term with a '(' open inside it would take the wrapper's ')' in: a blank ends it. */
        {"a [(]", "(a [(] ) repo:(^|/)alpha$"},
        /* A first token that ends at a ')' would take the wrapper's '(' in: a blank after it. */
        {"\"(\") b", "( \"(\") b) repo:(^|/)alpha$"},
        {"-\"(\") b", "( -\"(\") b) repo:(^|/)alpha$"},
        {"x\\)", "x\\) repo:(^|/)alpha$"},
        /* A blank after a backslash is part of the term: it is not trimmed. */
        {"x\\ ", "x\\  repo:(^|/)alpha$"},
        {"a x\\\\ ", "(a x\\\\) repo:(^|/)alpha$"},
        {"a -b", "(a -b) repo:(^|/)alpha$"},
        /* Only a case: of Zoekt's three values is repeated after the wrapper. */
        {"case:no a b", "(case:no a b) case:no repo:(^|/)alpha$"},
        {"a case:yes\"b)\"", "(a case:yes\"b)\") repo:(^|/)alpha$"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct zq_spec spec = {.query = cases[i].query, .repos = alpha, .n_repos = 1};
        struct zk_err err = {0};
        char *q = NULL;

        if (zq_build(&spec, &q, &err) != ZK_OK)
            fail_msg("%s: %s", cases[i].query, err.msg);
        if (strcmp(q, cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].query, q, cases[i].want);
        free(q);
    }
}

/* What zq_check_parens reports besides the verdict: the tokens, where the first group ends, and what
 * the last term leaves open. */
static void test_check_parens(void **state)
{
    struct zq_parens p;
    struct zk_err err = {0};

    (void)state;
    assert_int_equal(zq_check_parens("(a b) c", 7, &p, &err), ZK_OK);
    assert_int_equal(p.tokens, 5);
    assert_int_equal(p.first_group_end, 5);
    assert_int_equal(p.last_start, 6);
    assert_int_equal(p.last_open, 0);
    assert_int_equal(zq_check_parens("((a) b) c", 9, &p, &err), ZK_OK);
    assert_int_equal(p.first_group_end, 7);
    assert_int_equal(zq_check_parens("a (b)", 5, &p, &err), ZK_OK);
    assert_int_equal(p.first_group_end, 0);
    assert_int_equal(zq_check_parens("x [(]", 5, &p, &err), ZK_OK);
    assert_int_equal(p.last_open, 1);
    assert_false(p.last_starts_open);
    assert_int_equal(zq_check_parens("x ([(])", 7, &p, &err), ZK_OK);
    assert_int_equal(p.last_open, 1);
    assert_true(p.last_starts_open);
    /* Only the n bytes given are read. */
    assert_int_equal(zq_check_parens("a) b", 1, &p, &err), ZK_OK);
    assert_int_equal(p.tokens, 1);
    assert_int_equal(zq_check_parens("", 0, &p, &err), ZK_OK);
    assert_int_equal(p.tokens, 0);
}

/* The filters balance too: a parenthesis in a glob's class, which Zoekt's lexer would count, is
 * escaped, so the query built stays balanced as Zoekt reads it. */
static void test_filters_balance(void **state)
{
    static const char *const globs[] = {"x[)]", "[(]*"};
    static const char *const repos[] = {"acme/[)]*"};
    struct zq_spec spec = {.query = "a b", .files = globs, .n_files = 2, .exclude_files = globs,
                           .n_exclude_files = 2, .repos = repos, .n_repos = 1};
    struct zq_parens p;
    struct zk_err err = {0};
    char *q = NULL;

    (void)state;
    assert_int_equal(zq_build(&spec, &q, &err), ZK_OK);
    assert_string_equal(q, "(a b) repo:(^|/)acme/[\\)][^/]*$ file:((^|/)x[\\)]$|(^|/)[\\(][^/]*$) "
                           "-file:(^|/)x[\\)]$ -file:(^|/)[\\(][^/]*$");
    assert_int_equal(zq_check_parens(q, strlen(q), &p, &err), ZK_OK);
    assert_int_equal(p.first_group_end, 5);
    assert_int_equal(p.tokens, 10);
    free(q);
}

static void test_lint(void **state)
{
    (void)state;
    assert_true(zq_uses_symbols("sym:Informer"));
    assert_true(zq_uses_symbols("lang:go (sym:New or x)"));
    assert_false(zq_uses_symbols("\"sym:x\" foo"));
    assert_false(zq_uses_symbols("mysym:x"));
    assert_null(zq_lint("foo or bar"));
    assert_null(zq_lint("\"a AND b\""));
    assert_null(zq_lint("ANDROID"));
    assert_non_null(strstr(zq_lint("foo AND bar"), "no AND operator"));
    assert_non_null(strstr(zq_lint("foo and bar"), "no \"and\" operator"));
    assert_non_null(strstr(zq_lint("foo OR bar"), "lower-case"));
    assert_non_null(strstr(zq_lint("NOT test"), "leading '-'"));
}

static void test_quote(void **state)
{
    char *s;

    (void)state;
    s = zq_regex_quote("a.b*c");
    assert_string_equal(s, "a\\.b\\*c");
    free(s);
    assert_true(zq_is_glob("a*"));
    assert_true(zq_is_glob("a[b]"));
    assert_false(zq_is_glob("a.b/c"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_table),   cmocka_unit_test(test_glob_errors),
        cmocka_unit_test(test_repo_regex),   cmocka_unit_test(test_build_table),
        cmocka_unit_test(test_build_errors), cmocka_unit_test(test_build_parens_refused),
        cmocka_unit_test(test_build_parens_accepted), cmocka_unit_test(test_check_parens),
        cmocka_unit_test(test_filters_balance),
        cmocka_unit_test(test_lint),         cmocka_unit_test(test_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
