/* budget.h: a bound that many threads share on the memory their buffers hold at once, so that many
 * large bodies at the same time cannot add up past what the process may use. The connector keeps two:
 * one for Zoekt's answers (lib/http reserves as each answer's body grows) and one for the requests it
 * serves (connector/front: each body, its parse, and each response until it is sent).
 *
 * A holder (struct budget_hold) reserves what it expects to hold and gives it back in one call when
 * its buffers are freed. Thread-safe: used is an atomic, and a hold belongs to one thread at a time. */
#ifndef ZK_BUDGET_H
#define ZK_BUDGET_H

#include <stdatomic.h>
#include <stddef.h>

#define BUDGET_MUST_USE __attribute__((warn_unused_result))

struct budget {
    atomic_size_t used;
    size_t limit; /* set before the first hold; never changed while holds exist */
};

/* One holder's reservation in b. Zero it (or BUDGET_HOLD(b)) before the first budget_grow. */
struct budget_hold {
    struct budget *b;
    size_t held;
};
#define BUDGET_HOLD(budget_ptr) ((struct budget_hold){.b = (budget_ptr), .held = 0})

/* Grows h's reservation to at least want bytes. It takes an eighth more than asked, so that a body
 * growing chunk by chunk takes the shared atomic a few dozen times, not once per chunk, while holding
 * little more than it needs; the step is cut back to want when the others leave no room for the
 * eighth. Returns ZK_OK (also when h already holds want), ZK_ETOOBIG when want alone is more than the
 * limit (waiting will not help), or ZK_EBUSY when other holders have the room for now (retryable:
 * their buffers go soon); on failure h keeps what it held. A hold without a budget (h->b NULL) always
 * succeeds. */
int budget_grow(struct budget_hold *h, size_t want) BUDGET_MUST_USE;

/* Adds exactly n bytes to h's reservation, for something of known size (a parse, a reply, a copy).
 * Returns as budget_grow does. */
int budget_add(struct budget_hold *h, size_t n) BUDGET_MUST_USE;

/* Gives back everything h holds; h may be reused. */
void budget_release(struct budget_hold *h);

#endif
