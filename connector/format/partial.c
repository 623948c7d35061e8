/* partial.c: see partial.h. */
#include "connector/format/partial.h"

#include "connector/format/text.h"
#include "connector/zoekt/merge.h"

/* Appends what shard k's failure leaves out: its repositories in catalogue, named up to
 * FMT_PARTIAL_NAMES. */
static int fmt_partial_repos(const struct zr_shards *s, int k, const struct zr_list *catalogue, struct buf *b)
{
    size_t idx[FMT_PARTIAL_NAMES], n, shown;
    int rc;

    if (!catalogue)
        return buf_puts(b, "; which repositories it serves is unknown (the connector has not yet listed every "
                           "shard).");
    n = zm_shard_repos(catalogue, k, s->n, idx, FMT_PARTIAL_NAMES);
    if (n == 0)
        return buf_puts(b, "; it served none of the repositories when every shard last answered.");
    shown = n < FMT_PARTIAL_NAMES ? n : FMT_PARTIAL_NAMES;
    rc = buf_printf(b, "; its %zu repositor%s %s missing from this answer: ", n, n == 1 ? "y" : "ies",
                    n == 1 ? "is" : "are");
    for (size_t i = 0; !rc && i < shown; i++) {
        if (i)
            rc = buf_puts(b, ", ");
        if (!rc)
            rc = fmt_put_cut(b, catalogue->repos[idx[i]].name, FMT_PARTIAL_NAME_MAX);
    }
    if (!rc && n > shown)
        rc = buf_printf(b, " (and %zu more)", n - shown);
    return rc ? rc : buf_putc(b, '.');
}

int fmt_partial_note(const struct zr_shards *s, const struct zr_list *catalogue, struct buf *b)
{
    int rc = ZK_OK, first = 1;

    for (int k = 0; !rc && k < s->n && k < SHARD_MAX; k++) {
        if (!(s->failed & (1u << k)))
            continue;
        rc = buf_printf(b, "%s %d of %d did not answer (", first ? "Partial answer: shard" : " Shard", k, s->n);
        if (!rc)
            rc = fmt_put_cut(b, s->why[k] ? s->why[k] : "no reason given", FMT_PARTIAL_WHY_MAX);
        if (!rc)
            rc = buf_putc(b, ')');
        if (!rc)
            rc = fmt_partial_repos(s, k, catalogue, b);
        first = 0;
    }
    return rc;
}
