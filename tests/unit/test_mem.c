/* Unit tests for the out-of-memory policy (lib/mem.h), in the manner of curl's torture tests: each
 * operation runs again and again in a child process with its Nth allocation failing, N = 1, 2, ...,
 * until it completes without reaching the failure. Every time, the child must either produce the
 * correct result or end by SIGABRT after writing one JSON "out of memory" record to stderr: never a
 * wrong result, an error code, or a crash of another kind.
 *
 * This program is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (see the Makefile), so
 * every allocation the project's own objects make goes through the wrappers below; mem_setup routes
 * cJSON's through lib/mem as in the programs. (Shared libraries such as libyaml call malloc directly and
 * are not reached: their failures come back by return code, which the callers pass to mem_oom.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "jb.h"
#include "jscan.h"
#include "json.h"
#include "kube/config.h"
#include "mem.h"
#include "yamljson.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t n);

/* Allocations counted since the child armed the failure, and which one fails (0: none). */
static long alloc_count;
static long alloc_fail_at;

static int alloc_fails(void)
{
    return alloc_fail_at > 0 && ++alloc_count == alloc_fail_at;
}

void *__wrap_malloc(size_t n)
{
    return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t count, size_t size)
{
    return alloc_fails() ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return alloc_fails() ? NULL : __real_realloc(p, n);
}

/* One operation: it returns its result as a heap string, which must be the same every time. */
typedef char *operation_fn(void);

static char *grow_a_buf(void)
{
    struct buf b;
    char line[64];

    buf_init(&b, 1 << 20);
    for (int i = 0; i < 2000; i++) {
        snprintf(line, sizeof(line), "line %d\n", i);
        if (buf_puts(&b, line) != ZK_OK || buf_printf(&b, "%d;", i * 7) != ZK_OK)
            return mem_strdup("append failed"); /* a wrong result: appends fail only past the bound */
    }
    return buf_steal(&b);
}

static char *build_and_print_a_tree(void)
{
    struct jb b = {0};
    cJSON *o = jb_object(&b), *md, *arr;
    char *text;

    jb_add_str(&b, o, "apiVersion", "coordination.k8s.io/v1");
    jb_add_str(&b, o, "kind", "Lease");
    md = jb_add_obj(&b, o, "metadata");
    jb_add_str(&b, md, "name", "zoekt-operator");
    jb_add_num(&b, md, "generation", 7);
    jb_set(&b, md, "name", jb_string(&b, "renamed"));
    arr = jb_add_arr(&b, o, "owners");
    for (int i = 0; i < 20; i++)
        jb_push(&b, arr, jb_number(&b, i));
    o = jb_finish(&b, o);
    if (!o)
        return mem_strdup("no tree");
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text ? text : mem_strdup("no text");
}

static char *convert_yaml(void)
{
    static const char doc[] = "apiVersion: codesearch.dev/v1alpha1\n"
                              "kind: Corpus\n"
                              "metadata: {name: org, labels: {team: search}}\n"
                              "spec:\n"
                              "  schedule: \"0 3 * * *\"\n"
                              "  replicas: 3\n"
                              "  repositories:\n"
                              "    - url: https://github.com/a/b\n"
                              "    - url: https://github.com/c/d\n"
                              "      branches: [main, dev]\n";
    struct zk_err err;
    cJSON *tree;
    char *text;

    if (yamljson_parse(doc, sizeof(doc) - 1, &tree, &err) != ZK_OK)
        return mem_printf("error: %s", err.msg);
    text = json_print(tree);
    cJSON_Delete(tree);
    return text ? text : mem_strdup("no text");
}

static char *load_a_kubeconfig(void)
{
    static const char yaml[] = "apiVersion: v1\n"
                               "current-context: dev\n"
                               "contexts: [{name: dev, context: {cluster: c, user: u, namespace: team}}]\n"
                               "clusters: [{name: c, cluster: {server: 'https://api.example:6443/',\n"
                               "            certificate-authority-data: aGVsbG8=}}]\n"
                               "users: [{name: u, user: {token: s3cret,\n"
                               "         exec: {command: ./plugin, args: [a, b], apiVersion: client.authentication.k8s.io/v1,\n"
                               "                env: [{name: K, value: v}]}}}]\n";
    struct kube_config cfg, copy;
    struct zk_err err;
    char *text;

    if (kube_config_from_yaml(yaml, sizeof(yaml) - 1, "test", NULL, &cfg, &err) != ZK_OK)
        return mem_printf("error: %s", err.msg);
    kube_config_copy(&cfg, &copy);
    text = mem_printf("%s %s %s %s %s %s", copy.server, copy.ca_pem, copy.token, copy.namespace, copy.exec->argv[0],
                      copy.exec->env[0]);
    kube_config_free(&cfg);
    kube_config_free(&copy);
    return text;
}

static char *scan_json(void)
{
    struct buf text;
    struct jscan_doc d;
    struct jscan root;
    char *out;
    int rc = ZK_OK;

    buf_init(&text, 1 << 20);
    for (int i = 0; i < 500 && rc == ZK_OK; i++)
        rc = buf_printf(&text, "%s{\"k\":%d}", i ? "," : "[", i);
    if (rc != ZK_OK || buf_putc(&text, ']') != ZK_OK)
        return mem_strdup("append failed");
    rc = jscan_parse(&d, text.data, text.len, &root);
    out = mem_printf("%d %zu", rc, root.len);
    jscan_doc_free(&d);
    buf_free(&text);
    return out;
}

static char *duplicate_strings(void)
{
    char *a = mem_strdup("zoekt"), *b = mem_strndup("operator-and-more", 8), *c = mem_printf("%s-%s", a, b);

    free(a);
    free(b);
    return c;
}

/* Runs op in a child with allocation n failing. Returns 1 when the child completed without reaching
 * allocation n, 0 when it reached it and died as the policy says (or completed correctly anyway);
 * fails the test otherwise. */
static int run_with_failure(operation_fn *op, const char *want, long n)
{
    int err_pipe[2], status;
    char log[8192];
    ssize_t got = 0, k;
    pid_t pid;

    assert_int_equal(pipe(err_pipe), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *result;
        int right, reached;

        dup2(err_pipe[1], STDERR_FILENO);
        close(err_pipe[0]);
        alloc_count = 0;
        alloc_fail_at = n;
        result = op();
        reached = alloc_count >= n;
        alloc_fail_at = 0;
        right = result != NULL && strcmp(result, want) == 0;
        if (!right)
            fprintf(stderr, "wrong result: %s\n", result ? result : "(null)");
        _exit(!right ? 1 : reached ? 2 : 0);
    }
    close(err_pipe[1]);
    while ((k = read(err_pipe[0], log + got, sizeof(log) - 1 - (size_t)got)) > 0)
        got += k;
    close(err_pipe[0]);
    log[got] = '\0';
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        cJSON *rec = cJSON_Parse(log);

        if (WTERMSIG(status) != SIGABRT || !rec)
            fail_msg("allocation %ld: killed by signal %d, stderr: %s", n, WTERMSIG(status), log);
        assert_string_equal(json_str(rec, "msg", ""), "out of memory");
        assert_string_equal(json_str(rec, "level", ""), "error");
        cJSON_Delete(rec);
        return 0;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 1)
        fail_msg("allocation %ld failing: %s", n, log);
    return WEXITSTATUS(status) == 0;
}

/* The torture loop over one operation; returns how many allocations it makes. */
static long torture(operation_fn *op)
{
    char *want = op();
    long n;

    assert_non_null(want);
    for (n = 1; n < 100000 && !run_with_failure(op, want, n); n++)
        ;
    free(want);
    assert_true(n > 1); /* the operation allocates, so at least one run died */
    return n - 1;
}

static void test_a_growing_buf(void **state)
{
    (void)state;
    torture(grow_a_buf);
}

static void test_a_jb_tree_printed_by_cjson(void **state)
{
    (void)state;
    assert_true(torture(build_and_print_a_tree) > 20);
}

static void test_yamljson_converting_a_document(void **state)
{
    (void)state;
    assert_true(torture(convert_yaml) > 20);
}

static void test_a_kubeconfig_loaded_and_copied(void **state)
{
    (void)state;
    assert_true(torture(load_a_kubeconfig) > 10);
}

static void test_jscan_growing_its_tape(void **state)
{
    (void)state;
    torture(scan_json);
}

static void test_string_copies(void **state)
{
    (void)state;
    assert_int_equal(torture(duplicate_strings), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_growing_buf),
        cmocka_unit_test(test_a_jb_tree_printed_by_cjson),
        cmocka_unit_test(test_yamljson_converting_a_document),
        cmocka_unit_test(test_a_kubeconfig_loaded_and_copied),
        cmocka_unit_test(test_jscan_growing_its_tape),
        cmocka_unit_test(test_string_copies),
    };
    mem_setup();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
