/* fixture.c: see fixture.h. */
#include "tests/support/fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "buf.h"
#include "err.h"

/* Larger than any fixture; the bound only keeps a wrong path (a device, a huge file) from hurting. */
#define FIXTURE_MAX (64u << 20)

const char *fixture_root(void)
{
    const char *root = getenv("ZK_ROOT");

    return root && *root ? root : ".";
}

char *fixture_read(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    struct buf b;
    struct zk_err err;
    char *text;

    snprintf(path, sizeof(path), "%s/%s/%s", fixture_root(), dir, name);
    buf_init(&b, FIXTURE_MAX);
    if (buf_read_file(&b, path, &err) != ZK_OK)
        fail_msg("%s", err.msg);
    *len = b.len;
    text = buf_steal(&b);
    assert_non_null(text);
    return text;
}
