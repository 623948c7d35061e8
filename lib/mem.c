/* mem.c: see mem.h. */
#include "mem.h"

#include "log.h"

#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Noreturn void mem_oom(size_t n)
{
    char bytes[24];

    snprintf(bytes, sizeof(bytes), "%zu", n);
    log_error("out of memory", "bytes", bytes, NULL);
    abort();
}

void *mem_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        mem_oom(n);
    return p;
}

void *mem_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);

    if (!p)
        mem_oom(size && count > SIZE_MAX / size ? SIZE_MAX : count * size);
    return p;
}

void *mem_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q)
        mem_oom(n);
    return q;
}

char *mem_strdup(const char *s)
{
    return mem_strndup(s, strlen(s));
}

char *mem_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *copy = mem_alloc(len + 1);

    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

char *mem_printf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort(); /* only an invalid format does this, and the format attribute rules that out */
    s = mem_alloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void mem_mutex_init(pthread_mutex_t *mu)
{
    if (pthread_mutex_init(mu, NULL) != 0)
        mem_oom(sizeof(*mu));
}

void mem_cond_init(pthread_cond_t *cv, int monotonic)
{
    pthread_condattr_t ca;

    if (pthread_condattr_init(&ca) != 0 || (monotonic && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0) ||
        pthread_cond_init(cv, &ca) != 0)
        mem_oom(sizeof(*cv));
    pthread_condattr_destroy(&ca);
}

/* OpenSSL's allocator signature carries the caller's file and line, which the policy has no use for. */
static void *mem_ossl_alloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return mem_alloc(n);
}

static void *mem_ossl_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return mem_realloc(p, n);
}

static void mem_ossl_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    free(p);
}

static void *mem_cjson_alloc(size_t n)
{
    return mem_alloc(n);
}

void mem_setup(void)
{
    cJSON_Hooks hooks = {.malloc_fn = mem_cjson_alloc, .free_fn = free};

    cJSON_InitHooks(&hooks);
    /* Fails only when OpenSSL has allocated already, which main's first line rules out; if a library
     * constructor got there first, OpenSSL keeps malloc, and only its own rare NULL is left unpolicied. */
    (void)CRYPTO_set_mem_functions(mem_ossl_alloc, mem_ossl_realloc, mem_ossl_free);
}
