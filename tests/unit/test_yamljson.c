/* Unit tests for lib/yamljson: scalars resolve as Kubernetes' decoder resolves them, only the first
 * document counts, and malformed text is refused with a reason. (What allocation failures do is
 * tests/unit/test_mem.c's to show.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mem.h"
#include "yamljson.h"

static const char corpus[] = "apiVersion: codesearch.dev/v1alpha1\n"
                             "metadata: {name: org}\n"
                             "spec:\n"
                             "  schedule: \"0 3 * * *\"\n"
                             "  size: 1Gi\n"
                             "  replicas: 3\n"
                             "  quoted: \"3\"\n"
                             "  ratio: -1.5e2\n"
                             "  suspend: False\n"
                             "  on: true\n"
                             "  nothing: ~\n"
                             "  empty:\n"
                             "  hex: 0x10\n"
                             "  list: [a, {b: [x, 'y']}]\n"
                             "---\n"
                             "second: ignored\n";

static void test_scalars_resolve_as_kubernetes_does(void **state)
{
    struct zk_err err;
    cJSON *tree;
    char *text;

    (void)state;
    assert_int_equal(yamljson_parse(corpus, strlen(corpus), &tree, &err), ZK_OK);
    text = json_print(tree);
    assert_string_equal(text, "{\"apiVersion\":\"codesearch.dev/v1alpha1\",\"metadata\":{\"name\":\"org\"},\"spec\":{"
                              "\"schedule\":\"0 3 * * *\",\"size\":\"1Gi\",\"replicas\":3,\"quoted\":\"3\","
                              "\"ratio\":-150,\"suspend\":false,\"on\":true,\"nothing\":null,\"empty\":null,"
                              "\"hex\":\"0x10\",\"list\":[\"a\",{\"b\":[\"x\",\"y\"]}]}}");
    free(text);
    cJSON_Delete(tree);
}

static void expect_refused(const char *text, const char *why)
{
    struct zk_err err;
    cJSON *tree = (cJSON *)1;

    assert_int_equal(yamljson_parse(text, strlen(text), &tree, &err), ZK_EINVAL);
    assert_null(tree);
    assert_int_equal(err.code, ZK_EINVAL);
    if (!strstr(err.msg, why))
        fail_msg("\"%s\" does not say \"%s\"", err.msg, why);
}

static void test_malformed_text_is_refused_with_a_reason(void **state)
{
    char deep[2 * 100 + 1];

    (void)state;
    expect_refused("spec: [unclosed\n", "line ");
    expect_refused("a: 1\n? [complex, key]\n: value\n", "line 1: mapping keys must be scalars");
    expect_refused("", "holds no document");
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[200] = '\0';
    expect_refused(deep, "nested too deeply");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars_resolve_as_kubernetes_does),
        cmocka_unit_test(test_malformed_text_is_refused_with_a_reason),
    };
    mem_setup(); /* as the operator's main does; tests/unit/test_mem.c runs the parser out of memory */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
