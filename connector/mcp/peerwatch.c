/* peerwatch.c: see peerwatch.h. */
#include "connector/mcp/peerwatch.h"

#include "mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The epoll data of the eventfd that tells the thread to stop; watches carry slot | generation << 32,
 * and no slot index reaches UINT32_MAX. */
#define PW_STOP UINT64_MAX

struct pw_slot {
    int fd;
    uint32_t gen;   /* changes with every watch, so a late event for an ended watch is recognised */
    int in_use;     /* between pw_watch and pw_unwatch */
    int armed;      /* still registered with epoll (a hang-up disarms it) */
    pw_hangup_fn *fn;
    void *arg;
};

struct peerwatch {
    pthread_mutex_t mu; /* guards slots; held while fn runs, which is what makes pw_unwatch final */
    int ep;
    int stop;           /* eventfd */
    pthread_t th;
    size_t n;
    struct pw_slot *slots;
};

static void *pw_loop(void *arg)
{
    struct peerwatch *w = arg;
    struct epoll_event ev[16];
    int i, n;

    for (;;) {
        n = epoll_wait(w->ep, ev, (int)(sizeof(ev) / sizeof(ev[0])), -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return NULL;
        for (i = 0; i < n; i++) {
            uint64_t d = ev[i].data.u64;
            struct pw_slot *s;

            if (d == PW_STOP)
                return NULL;
            pthread_mutex_lock(&w->mu);
            s = &w->slots[(uint32_t)d];
            if (s->armed && s->gen == (uint32_t)(d >> 32)) {
                /* Level-triggered: the registration goes, or the hang-up would be reported again. */
                epoll_ctl(w->ep, EPOLL_CTL_DEL, s->fd, NULL);
                s->armed = 0;
                s->fn(s->arg);
            }
            pthread_mutex_unlock(&w->mu);
        }
    }
}

int pw_new(size_t max_watches, struct peerwatch **out, struct zk_err *err)
{
    struct peerwatch *w = mem_calloc(1, sizeof(*w));
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = PW_STOP};
    int rc;

    *out = NULL;
    w->slots = mem_calloc(max_watches, sizeof(*w->slots));
    w->n = max_watches;
    mem_mutex_init(&w->mu);
    w->ep = epoll_create1(EPOLL_CLOEXEC);
    w->stop = eventfd(0, EFD_CLOEXEC);
    if (w->ep < 0 || w->stop < 0 || epoll_ctl(w->ep, EPOLL_CTL_ADD, w->stop, &ev) != 0) {
        rc = zk_err_set(err, ZK_EIO, "cannot create the epoll set that watches clients: %s", strerror(errno));
        goto fail;
    }
    if ((rc = pthread_create(&w->th, NULL, pw_loop, w)) != 0) {
        rc = zk_err_set(err, ZK_EIO, "cannot start the thread that watches clients: %s", strerror(rc));
        goto fail;
    }
    *out = w;
    return ZK_OK;
fail:
    pthread_mutex_destroy(&w->mu);
    if (w->ep >= 0)
        close(w->ep);
    if (w->stop >= 0)
        close(w->stop);
    free(w->slots);
    free(w);
    return rc;
}

void pw_free(struct peerwatch *w)
{
    uint64_t one = 1;

    if (w == NULL)
        return;
    /* Adding 1 to a fresh eventfd cannot overflow it; only a signal can interrupt the write. */
    while (write(w->stop, &one, sizeof(one)) < 0 && errno == EINTR)
        ;
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    close(w->ep);
    close(w->stop);
    free(w->slots);
    free(w);
}

int pw_watch(struct peerwatch *w, int fd, pw_hangup_fn *fn, void *arg)
{
    struct epoll_event ev = {.events = EPOLLRDHUP};
    struct pw_slot *s = NULL;
    size_t i;
    int handle = -1;

    pthread_mutex_lock(&w->mu);
    for (i = 0; i < w->n && s == NULL; i++)
        if (!w->slots[i].in_use)
            s = &w->slots[i];
    if (s != NULL) {
        s->gen++;
        ev.data.u64 = (uint64_t)(s - w->slots) | (uint64_t)s->gen << 32;
        if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) == 0) {
            s->fd = fd;
            s->fn = fn;
            s->arg = arg;
            s->in_use = s->armed = 1;
            handle = (int)(s - w->slots);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return handle;
}

void pw_unwatch(struct peerwatch *w, int handle)
{
    struct pw_slot *s;

    if (handle < 0)
        return;
    pthread_mutex_lock(&w->mu);
    s = &w->slots[handle];
    if (s->armed)
        epoll_ctl(w->ep, EPOLL_CTL_DEL, s->fd, NULL);
    s->armed = s->in_use = 0;
    pthread_mutex_unlock(&w->mu);
}
