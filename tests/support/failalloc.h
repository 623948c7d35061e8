/* failalloc.h: cJSON's allocator swapped for one that fails on demand, so a test can run the same
 * building code once for every allocation that could fail and check what comes out each time. */
#ifndef ZK_TESTS_FAILALLOC_H
#define ZK_TESTS_FAILALLOC_H

#include <cjson/cJSON.h>

/* From now on cJSON allocations succeed `allow` times, the next one fails, and later ones succeed. */
void failalloc_start(long allow);

/* cJSON allocates with malloc again. Usable as a cmocka teardown (state is ignored; returns 0). */
int failalloc_stop(void **state);

/* Builds a tree with build(arg) without failures, then again with each of its cJSON allocations failing
 * in turn, and fails the running test unless every attempt returns either NULL or a tree that prints
 * exactly as the first: never a tree with a member missing. Frees every tree. Returns the number of
 * attempts that returned NULL, which is the number of allocations a whole build makes. */
long failalloc_whole_or_nothing(cJSON *(*build)(void *arg), void *arg);

#endif
