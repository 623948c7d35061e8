/* tmpdir.c: see tmpdir.h. */
#include "tests/support/tmpdir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tmpdir_make(const char *prefix, char dir[TMPDIR_MAX])
{
    if (snprintf(dir, TMPDIR_MAX, "/tmp/%s.XXXXXX", prefix) >= TMPDIR_MAX)
        return -1;
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int tmpdir_remove(const char *dir)
{
    /* Depth first, so that each folder is empty when its turn comes; links are removed, not followed. */
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int tmpdir_setup(void **state)
{
    struct tmpdir *t = calloc(1, sizeof(*t));

    if (!t || tmpdir_make("zk-test", t->dir) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int tmpdir_teardown(void **state)
{
    struct tmpdir *t = *state;
    int rc = tmpdir_remove(t->dir);

    free(t);
    return rc;
}

const char *tmpdir_write(const char *dir, const char *name, const char *text, mode_t mode)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    if (fputs(text, f) < 0 || fclose(f) != 0)
        fail_msg("cannot write %s", path);
    if (chmod(path, mode) != 0)
        fail_msg("cannot chmod %s", path);
    return path;
}
