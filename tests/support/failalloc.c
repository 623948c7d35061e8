/* failalloc.c: see failalloc.h. */
#include "tests/support/failalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

/* Allocations left before the one that fails; negative while no failure is planned. */
static long failalloc_left = -1;

static void *failalloc_malloc(size_t n)
{
    if (failalloc_left >= 0 && failalloc_left-- == 0)
        return NULL;
    return malloc(n);
}

void failalloc_start(long allow)
{
    cJSON_Hooks hooks = {failalloc_malloc, free};

    failalloc_left = allow;
    cJSON_InitHooks(&hooks);
}

int failalloc_stop(void **state)
{
    (void)state;
    failalloc_left = -1;
    cJSON_InitHooks(NULL);
    return 0;
}

long failalloc_whole_or_nothing(cJSON *(*build)(void *arg), void *arg)
{
    cJSON *tree = build(arg);
    char *want = tree ? cJSON_PrintUnformatted(tree) : NULL, *got;
    long allow, nothing = 0;

    cJSON_Delete(tree);
    assert_non_null(want);
    /* Once allow reaches the number of allocations the build makes, none fails, the build succeeds
     * whole and the loop ends; every earlier attempt had exactly one allocation fail, as when memory is
     * short for a moment, so code that checks only its last step is caught. */
    for (allow = 0; allow < 100000; allow++) {
        failalloc_start(allow);
        tree = build(arg);
        failalloc_stop(NULL);
        if (!tree) {
            nothing++;
            continue;
        }
        got = cJSON_PrintUnformatted(tree);
        cJSON_Delete(tree);
        assert_non_null(got);
        if (strcmp(got, want) != 0)
            fail_msg("with allocation %ld failing, the tree came out partial: %s", allow, got);
        free(got);
        break;
    }
    assert_true(allow > 0);
    free(want);
    return nothing;
}
