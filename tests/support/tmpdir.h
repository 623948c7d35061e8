/* tmpdir.h: a fresh folder under /tmp for one test, and the files a test writes into it.
 *
 * For cmocka tests only (tmpdir_write fails the running test on error). The folder and everything in
 * it go with tmpdir_remove, which walks the tree itself rather than asking a shell to. */
#ifndef ZK_TESTS_TMPDIR_H
#define ZK_TESTS_TMPDIR_H

#include <sys/types.h>

#define TMPDIR_MAX 64

/* Creates /tmp/PREFIX.XXXXXX and writes its path into dir (TMPDIR_MAX bytes). Returns 0, or -1 with
 * errno set. */
int tmpdir_make(const char *prefix, char dir[TMPDIR_MAX]);

/* Removes dir and everything below it. Returns 0, or -1 when something could not be removed. */
int tmpdir_remove(const char *dir);

/* A test's folder, as the cmocka fixtures below keep it in *state. */
struct tmpdir {
    char dir[TMPDIR_MAX];
};

/* cmocka setup: makes /tmp/zk-test.XXXXXX and puts a heap struct tmpdir in *state. */
int tmpdir_setup(void **state);

/* cmocka teardown: removes the folder and frees the struct tmpdir in *state. */
int tmpdir_teardown(void **state);

/* Writes text to dir/name with the given mode and returns the file's path in a static buffer, which the
 * next call overwrites. Fails the running test when the file cannot be written. */
const char *tmpdir_write(const char *dir, const char *name, const char *text, mode_t mode);

#endif
