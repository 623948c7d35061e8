/* partial.h: the note above an answer that some search shards did not give (connector/zoekt/shards.h):
 * which shards, why, and which repositories the answer therefore leaves out, so that an agent neither
 * takes "no match" for an answer over the whole corpus nor retries what cannot help. Pure: no I/O. */
#ifndef ZK_CONNECTOR_FORMAT_PARTIAL_H
#define ZK_CONNECTOR_FORMAT_PARTIAL_H

#include "buf.h"
#include "connector/zoekt/result.h"

/* Repositories the note names per failed shard; the rest are counted. */
#define FMT_PARTIAL_NAMES 5
/* Bytes of a failed shard's error shown, and of each name. */
#define FMT_PARTIAL_WHY_MAX 200
#define FMT_PARTIAL_NAME_MAX 100
/* Bound on the whole note: every shard failing but one, each with its sentence at the bounds above. */
#define FMT_PARTIAL_MAX 16384

/* Appends, when s records a failed shard, one sentence per failed shard after "Partial answer: ":
 * "shard 2 of 3 did not answer (why); its 12 repositories are missing from this answer: a, b, c, d, e
 * (and 7 more)." The repositories are those of catalogue (the last list every shard answered, names
 * as shown) that shard_of assigns to the shard; when catalogue is NULL they are said to be unknown.
 * Appends nothing when no shard failed. Returns ZK_OK or the buffer's ZK_ETOOBIG. */
int fmt_partial_note(const struct zr_shards *s, const struct zr_list *catalogue, struct buf *b)
    __attribute__((warn_unused_result));

#endif
