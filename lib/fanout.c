/* fanout.c: see fanout.h. */
#include "fanout.h"

#include <pthread.h>
#include <stdatomic.h>

/* More would only queue at the server; fanout is for a handful of requests. */
#define FANOUT_MAX_THREADS 16

struct fanout {
    atomic_size_t next;
    size_t n;
    fanout_fn *fn;
    void *ud;
};

/* Takes the next unserved index until none is left, so a thread that started late or a call that
 * returned early simply serves more of them. */
static void *fanout_serve(void *arg)
{
    struct fanout *f = arg;
    size_t i;

    while ((i = atomic_fetch_add(&f->next, 1)) < f->n)
        f->fn(f->ud, i);
    return NULL;
}

void fanout_run(size_t n, size_t max_threads, fanout_fn *fn, void *ud)
{
    struct fanout f = {.n = n, .fn = fn, .ud = ud};
    pthread_t threads[FANOUT_MAX_THREADS - 1];
    size_t want, started = 0;

    atomic_init(&f.next, 0);
    want = max_threads < n ? max_threads : n;
    if (want > FANOUT_MAX_THREADS)
        want = FANOUT_MAX_THREADS;
    while (started + 1 < want && pthread_create(&threads[started], NULL, fanout_serve, &f) == 0)
        started++;
    fanout_serve(&f);
    while (started > 0)
        pthread_join(threads[--started], NULL);
}
