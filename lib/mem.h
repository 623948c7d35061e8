/* mem.h: the project's one out-of-memory policy: an allocation that fails ends the process.
 *
 * Both programs run in pods with a memory limit on Linux, which overcommits: a process that grows past
 * its limit is killed by the kernel long before malloc returns NULL, and the Deployment restarts it.
 * A NULL from malloc is therefore rare, and code that tries to recover from it is code that never runs
 * and that mistakes the failure for something else (an absent object, an undecodable answer). Redis's
 * zmalloc took the same decision. So every allocation goes through these functions, which never return
 * NULL: on failure they write one log record ("out of memory", with the size asked for) and abort, and
 * the restart policy does the rest. lib/err.h has no out-of-memory code; nothing has to handle one.
 *
 * mem_setup makes cJSON, libcurl and OpenSSL allocate through the same functions, so their failures
 * end the process the same way instead of coming back as an error code. Libraries that cannot be given
 * an allocator (libyaml, libmicrohttpd) report an allocation failure with their own return code; their
 * callers pass that to mem_oom.
 *
 * Thread-safe, as malloc is. */
#ifndef ZK_MEM_H
#define ZK_MEM_H

#include <pthread.h>
#include <stddef.h>

/* Call once at the top of main, before any other library is used (OpenSSL accepts an allocator only
 * before its first allocation). */
void mem_setup(void);

/* malloc, calloc, realloc, strdup and strndup that never return NULL. mem_alloc(0) returns a unique
 * pointer, as malloc(1) would; mem_realloc(p, 0) keeps a one-byte block rather than freeing p. */
void *mem_alloc(size_t n) __attribute__((malloc, returns_nonnull, alloc_size(1)));
void *mem_calloc(size_t count, size_t size) __attribute__((malloc, returns_nonnull, alloc_size(1, 2)));
void *mem_realloc(void *p, size_t n) __attribute__((returns_nonnull, alloc_size(2)));
char *mem_strdup(const char *s) __attribute__((malloc, returns_nonnull));
char *mem_strndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));

/* A heap string formatted as printf would; never NULL. */
char *mem_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2), malloc, returns_nonnull));

/* A default mutex, and a condition variable whose timed waits count on CLOCK_MONOTONIC (so that a
 * deadline neither stretches nor shrinks with the wall clock) or, with monotonic 0, on the default
 * clock. Linux fails these only for want of resources (ENOMEM, EAGAIN), so they end the process as a
 * failed allocation does. */
void mem_mutex_init(pthread_mutex_t *mu);
void mem_cond_init(pthread_cond_t *cv, int monotonic);

/* Ends the process as a failed allocation of n bytes does: one "out of memory" record, then abort().
 * For the callers of libraries that report an allocation failure by return code. */
_Noreturn void mem_oom(size_t n);

#endif
