/* fuzz_tool_args.c: the argument checks every tool reads its arguments with (connector/tools/args.h),
 * fed an agent's arguments object as the MCP parser gives it (connector/mcp/jsonrpc.h: \u0000 becomes
 * C0 80), then search_code's query translation (connector/zoekt/query.h) of what they accepted.
 *
 * Input: byte 0 chooses the syntax of "query" (bits 0-1: 0 and 3 Zoekt's, 1 a regex, 2 a literal);
 * the rest is the arguments object, as JSON. Asserted:
 * - each check returns ZK_OK or ZK_EINVAL, and the result is an error exactly when it returned
 *   ZK_EINVAL; its text is then non-empty, valid UTF-8, with no control byte but line break and tab,
 *   and names the argument;
 * - tools_check_arguments accepts exactly an object (or nothing) whose members search_code's
 *   declaration names;
 * - an accepted string is within its bound, valid UTF-8 and has no NUL (no C0 80);
 * - an accepted list has at most its bound of items, each non-empty, within its bound and valid UTF-8;
 * - an accepted integer lies in its range and equals the number given (or the default when absent),
 *   and the refusal of a number outside the range states the range;
 * - an accepted boolean is 0 or 1;
 * - a repository argument that targ_repo_pattern accepts also passes zq_repo_regex;
 * - zq_build of the accepted arguments succeeds or fails with ZK_EINVAL or ZK_ETOOBIG and a message;
 *   its query is at most 64 KiB; with Zoekt's syntax its parentheses balance as Zoekt reads them
 *   (zq_check_parens), the query lexes the same before the filters as alone, and when it is wrapped,
 *   the group the wrapper opens ends exactly where the filters begin: the filters are the same text
 *   as with the one-token query "x", at the top level (after the case: that the query's own may
 *   repeat there). */
#include "tests/fuzz/fuzz.h"

#include "connector/mcp/jsonrpc.h"
#include "connector/tools/args.h"
#include "connector/tools/tools.h"
#include "connector/zoekt/query.h"
#include "connector/zoekt/reponame.h"
#include "json.h"

#include <limits.h>
#include <string.h>

/* search_code's bounds (connector/tools/search.c). */
#define QUERY_MAX 4096
#define LIST_MAX_ITEMS 50
#define LIST_MAX_LEN 1024

/* Valid UTF-8 with no control byte other than a line break or a tab. */
static int printable(const char *s)
{
    size_t n = strlen(s), k;

    for (size_t i = 0; i < n; i += k) {
        unsigned char c = (unsigned char)s[i];

        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            return 0;
        if (!(k = json_utf8_len((const unsigned char *)s + i, n - i)))
            return 0;
    }
    return 1;
}

/* Valid UTF-8 without C0 80 (the parser's NUL), control bytes allowed: what an accepted string is. */
static int utf8(const char *s)
{
    size_t n = strlen(s), k;

    for (size_t i = 0; i < n; i += k)
        if (!(k = json_utf8_len((const unsigned char *)s + i, n - i)))
            return 0;
    return 1;
}

/* After a check: r says what rc says, and an error's text is one an agent can read, naming name. */
static void check_outcome(int rc, const struct tool_result *r, const char *name)
{
    FUZZ_CHECK(rc == ZK_OK || rc == ZK_EINVAL);
    FUZZ_CHECK(r->is_error == (rc == ZK_EINVAL));
    /* An argument that fails a check is the caller's fault, and is counted so (connector/metrics.h). */
    FUZZ_CHECK(r->code == (rc == ZK_EINVAL ? ZK_EINVAL : ZK_OK));
    if (rc == ZK_OK)
        return;
    FUZZ_CHECK(r->text.data != NULL && r->text.len > 0 && strlen(r->text.data) == r->text.len);
    FUZZ_CHECK(printable(r->text.data));
    FUZZ_CHECK(name == NULL || strstr(r->text.data, name) != NULL);
}

/* Makes r a fresh result for the next check. */
static void reset(struct tool_result *r)
{
    buf_reset(&r->text);
    r->is_error = 0;
    r->code = ZK_OK;
}

/* Whether search_code's declaration names the argument. */
static int is_known(const char *name)
{
    cJSON *list = tools_list();
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, TOOL_SEARCH_CODE), "inputSchema"), "properties");
    int known = cJSON_GetObjectItemCaseSensitive(props, name) != NULL;

    cJSON_Delete(list);
    return known;
}

static void check_known(const cJSON *args, struct tool_result *r)
{
    int rc = tools_check_arguments(TOOL_SEARCH_CODE, args, r), want = 1;
    const cJSON *m;

    if (args && !cJSON_IsNull(args)) {
        if (!cJSON_IsObject(args))
            want = 0;
        else
            cJSON_ArrayForEach(m, args) want &= m->string != NULL && is_known(m->string);
    }
    FUZZ_CHECK((rc == ZK_OK) == want);
    check_outcome(rc, r, NULL);
    reset(r);
}

static const char *check_string(const cJSON *args, const char *name, size_t max_len, struct tool_result *r)
{
    const char *s = NULL;
    int rc = targ_string(args, name, max_len, &s, r);

    check_outcome(rc, r, name);
    reset(r);
    FUZZ_CHECK(rc == ZK_OK || s == NULL);
    FUZZ_CHECK(s == NULL || (strlen(s) <= max_len && utf8(s)));
    return s;
}

/* The list, heap (free it), or NULL. */
static const char **check_list(const cJSON *args, const char *name, size_t *n, struct tool_result *r)
{
    const char **list = NULL;
    int rc = targ_string_list(args, name, LIST_MAX_ITEMS, LIST_MAX_LEN, &list, n, r);

    check_outcome(rc, r, name);
    reset(r);
    FUZZ_CHECK(rc == ZK_OK || (list == NULL && *n == 0));
    FUZZ_CHECK(*n <= LIST_MAX_ITEMS && (list != NULL || *n == 0));
    for (size_t i = 0; i < *n; i++)
        FUZZ_CHECK(list[i][0] && strlen(list[i]) <= LIST_MAX_LEN && utf8(list[i]));
    return list;
}

static long check_int(const cJSON *args, const char *name, long min, long max, struct tool_result *r)
{
    const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, name) : NULL;
    long out = 12345;
    char range[96];
    int rc = targ_int(args, name, min, max, min, &out, r);

    check_outcome(rc, r, name);
    if (rc == ZK_OK) {
        FUZZ_CHECK(out >= min && out <= max);
        FUZZ_CHECK(v == NULL || cJSON_IsNull(v) ? out == min : (double)out == v->valuedouble);
    } else if (cJSON_IsNumber(v) && (!(v->valuedouble >= (double)min) || v->valuedouble > (double)max)) {
        /* A fraction past the range ("10.5" for 0..10) may be refused as a fraction: either way the
         * message gives the range. */
        snprintf(range, sizeof(range), "between %ld and %ld, got ", min, max);
        FUZZ_CHECK(strstr(r->text.data, range) != NULL);
    }
    reset(r);
    return out;
}

static int check_bool(const cJSON *args, const char *name, struct tool_result *r)
{
    int out = 7, rc = targ_bool(args, name, 0, &out, r);

    check_outcome(rc, r, name);
    reset(r);
    FUZZ_CHECK(out == 0 || out == 1);
    return out;
}

static void check_repos(const char *const *repos, size_t n, struct tool_result *r)
{
    char pattern[ZN_ARG_MAX + 1], *re = NULL;
    struct zk_err err;

    for (size_t i = 0; i < n; i++) {
        int rc = targ_repo_pattern("repo", repos[i], pattern, r);

        check_outcome(rc, r, "repo");
        reset(r);
        if (rc != ZK_OK)
            continue;
        rc = zq_repo_regex(repos[i], &re, &err);
        FUZZ_CHECK(rc == ZK_OK || rc == ZK_ETOOBIG);
        free(re);
        re = NULL;
    }
}

/* The filters of a zq_build are the same text whatever the query: after a wrapped query (and the case:
 * it may repeat), or after a one-token query, they come last and at the top level. */
static void check_filters_outside(const char *out, const struct zq_spec *spec)
{
    struct zq_spec one = *spec;
    struct zq_parens whole, head_p, tail_p;
    struct zk_err err;
    char *ref = NULL, *head;
    const char *tail, *blank;
    size_t n = strlen(out), head_len;

    FUZZ_CHECK(zq_check_parens(out, n, &whole, &err) == ZK_OK);
    if (!(spec->n_repos || spec->n_files || spec->n_exclude_files || spec->case_sensitive) ||
        strspn(spec->query, " \t\r\n") == strlen(spec->query))
        return;
    one.query = "x";
    FUZZ_CHECK(zq_build(&one, &ref, &err) == ZK_OK && ref[0] == 'x');
    tail = ref + 1;
    FUZZ_CHECK(n >= strlen(tail) && strcmp(out + n - strlen(tail), tail) == 0);
    head_len = n - strlen(tail);
    head = strndup(out, head_len);
    FUZZ_CHECK(head != NULL);
    /* The case: repeated after the wrapper: " case:" and a value without ')' after the wrapper's ')'. */
    blank = strrchr(head, ' ');
    if (!spec->case_sensitive && blank && blank > head && blank[-1] == ')' && strncmp(blank, " case:", 6) == 0 &&
        !strchr(blank, ')'))
        head[blank - head] = '\0';
    head_len = strlen(head);
    FUZZ_CHECK(zq_check_parens(head, head_len, &head_p, &err) == ZK_OK);
    FUZZ_CHECK(zq_check_parens(tail, strlen(tail), &tail_p, &err) == ZK_OK);
    /* The query lexes on its own as it does before the filters: no token of it takes in theirs. */
    FUZZ_CHECK(whole.tokens == head_p.tokens + tail_p.tokens + (head_len < n - strlen(tail)));
    /* A wrapped query (head is not the query as given): the group the wrapper opens ends where the
     * wrapper does. A query without blanks is not wrapped, and may well start with a group of its own
     * ("(")x). */
    if (strncmp(head, spec->query + strspn(spec->query, " \t\r\n"), head_len) != 0)
        FUZZ_CHECK(head_p.first_group_end == head_len);
    free(head);
    free(ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum zq_syntax syntaxes[] = {ZQ_SYNTAX_ZOEKT, ZQ_SYNTAX_REGEX, ZQ_SYNTAX_LITERAL, ZQ_SYNTAX_ZOEKT};
    struct tool_result r;
    struct zq_spec spec = {0};
    struct zk_err err = {0};
    const char **repos, **files, **excl;
    char *out = NULL;
    cJSON *args;
    int rc;

    if (size < 1)
        return 0;
    args = jsonrpc_parse((const char *)data + 1, size - 1);
    tool_result_init(&r);
    check_known(args, &r);
    spec.query = check_string(args, "query", QUERY_MAX, &r);
    repos = check_list(args, "repo", &spec.n_repos, &r);
    files = check_list(args, "file", &spec.n_files, &r);
    excl = check_list(args, "exclude_file", &spec.n_exclude_files, &r);
    check_int(args, "context_lines", 0, 10, &r);
    check_int(args, "max_files", 1, 200, &r);
    check_int(args, "max_bytes", 2048, 65536, &r);
    check_int(args, "limit", LONG_MIN, LONG_MAX, &r);
    spec.case_sensitive = check_bool(args, "case_sensitive", &r);
    check_bool(args, "literal", &r);
    check_repos(repos, spec.n_repos, &r);

    spec.repos = repos;
    spec.files = files;
    spec.exclude_files = excl;
    spec.syntax = syntaxes[data[0] & 3];
    rc = zq_build(&spec, &out, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK((rc == ZK_EINVAL || rc == ZK_ETOOBIG) && out == NULL && err.code == rc && err.msg[0]);
    } else {
        FUZZ_CHECK(strlen(out) <= 65536);
        if (spec.syntax == ZQ_SYNTAX_ZOEKT && spec.query)
            check_filters_outside(out, &spec);
    }
    free(out);
    free(repos);
    free(files);
    free(excl);
    tool_result_free(&r);
    cJSON_Delete(args);
    return 0;
}
