/* fixture.h: the files of the source tree that tests read (fixtures, scripts, built tools).
 *
 * The tree is $ZK_ROOT when it is set and not empty, else the working directory, as tests/run.sh and
 * the Makefile run the tests from the tree's root. */
#ifndef ZK_TESTS_FIXTURE_H
#define ZK_TESTS_FIXTURE_H

#include <stddef.h>

/* The tree's root; never NULL. */
const char *fixture_root(void);

/* Reads <root>/<dir>/<name> whole into a NUL-terminated heap string the caller frees, its length in
 * *len. Fails the running test when the file cannot be read. */
char *fixture_read(const char *dir, const char *name, size_t *len);

#endif
