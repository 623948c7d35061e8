/* gauges.h: the per-corpus gauges of the operator's /metrics, read from each corpus's status. Pure.
 *
 * What a platform engineer alerts on is what the status already says: whether the corpus is Ready
 * and Fresh, how many repositories are served, failed in the last indexer run or are older than
 * maxAge, how old the newest and oldest index are, and when the indexer last succeeded and failed.
 * Times are exported as Unix timestamps (Prometheus's convention), so a rule computes an age with
 * time() and never sees a value frozen at the last status write. The leader alone exports them
 * (main.c), so every corpus has one series per gauge whichever replica is scraped. */
#ifndef ZK_CORPUS_GAUGES_H
#define ZK_CORPUS_GAUGES_H

#include "buf.h"

#include <cjson/cJSON.h>
#include <stddef.h>

enum gauge {
    GAUGE_READY,
    GAUGE_FRESH,
    GAUGE_REPOSITORIES,
    GAUGE_REPOSITORIES_FAILED,
    GAUGE_REPOSITORIES_STALE,
    GAUGE_INDEX_NEWEST,
    GAUGE_INDEX_OLDEST,
    GAUGE_MAX_AGE,
    GAUGE_INDEXER_LAST_SUCCESS,
    GAUGE_INDEXER_LAST_FAILURE,
    GAUGE_COUNT
};

/* One corpus's gauges. A gauge whose bit is clear in present is not exported for it (a corpus not yet
 * indexed has no index time, rather than a time of 0 that would read as 56 years old). */
struct corpus_gauges {
    char ns[64];    /* a namespace is a DNS label */
    char name[254]; /* a corpus's name is a DNS subdomain */
    double value[GAUGE_COUNT];
    unsigned present; /* bit (1 << enum gauge) */
};

/* Reads a corpus (an object as the informer caches it) into *out. */
void gauges_observe(const cJSON *corpus, struct corpus_gauges *out);

/* Appends the exposition of n corpora's gauges (format 0.0.4: each family's HELP and TYPE once, then
 * its samples) to out. Returns ZK_OK or the buf error (then out is emptied, per buf.h). */
int gauges_render(const struct corpus_gauges *g, size_t n, struct buf *out) __attribute__((warn_unused_result));

#endif
