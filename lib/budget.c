/* budget.c: see budget.h. */
#include "budget.h"

#include "err.h"

/* Adds more to the shared count unless that passes the limit. */
static int budget_take(struct budget *b, size_t more)
{
    size_t before = atomic_fetch_add(&b->used, more);

    if (before + more <= b->limit)
        return 1;
    atomic_fetch_sub(&b->used, more);
    return 0;
}

int budget_grow(struct budget_hold *h, size_t want)
{
    size_t step;

    if (h->b == NULL || want <= h->held)
        return ZK_OK;
    if (want > h->b->limit)
        return ZK_ETOOBIG;
    /* An eighth more than asked first; when the others leave no room for it, what was asked is enough. */
    step = want + want / 8 <= h->b->limit ? want + want / 8 : want;
    if (!budget_take(h->b, step - h->held)) {
        if (step == want || !budget_take(h->b, want - h->held))
            return ZK_EBUSY;
        step = want;
    }
    h->held = step;
    return ZK_OK;
}

int budget_add(struct budget_hold *h, size_t n)
{
    if (h->b == NULL || n == 0)
        return ZK_OK;
    if (n > h->b->limit - h->held)
        return ZK_ETOOBIG;
    if (!budget_take(h->b, n))
        return ZK_EBUSY;
    h->held += n;
    return ZK_OK;
}

void budget_release(struct budget_hold *h)
{
    if (h->b != NULL && h->held > 0)
        atomic_fetch_sub(&h->b->used, h->held);
    h->held = 0;
}
