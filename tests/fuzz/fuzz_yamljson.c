/* fuzz_yamljson.c: yamljson_parse (lib/yamljson.h) on arbitrary text, which `zoekt-operator render -f`
 * reads from a user's file.
 *
 * Asserted:
 * - on failure the result is ZK_EINVAL and equals err.code, the message is NUL-terminated
 *   and not empty, and no tree is returned;
 * - on success a tree is returned, it prints, and it nests no deeper than YAMLJSON_MAX_DEPTH. */
#include "tests/fuzz/fuzz.h"

#include "err.h"
#include "yamljson.h"

#include <string.h>

static int depth(const cJSON *node)
{
    const cJSON *c;
    int most = 0, d;

    cJSON_ArrayForEach(c, node) {
        d = depth(c);
        if (d > most)
            most = d;
    }
    return (cJSON_IsArray(node) || cJSON_IsObject(node)) + most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct zk_err err;
    cJSON *tree = (cJSON *)1;
    char *text;
    int rc;

    rc = yamljson_parse((const char *)data, size, &tree, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc == ZK_EINVAL && err.code == rc);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL && err.msg[0] != '\0');
        FUZZ_CHECK(tree == NULL);
        return 0;
    }
    FUZZ_CHECK(tree != NULL);
    FUZZ_CHECK(depth(tree) <= YAMLJSON_MAX_DEPTH + 1);
    text = cJSON_PrintUnformatted(tree);
    FUZZ_CHECK(text != NULL);
    free(text);
    cJSON_Delete(tree);
    return 0;
}
