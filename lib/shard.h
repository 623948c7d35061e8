/* shard.h: which of N search shards serves a repository.
 *
 * The operator (which renders each shard's repository list and its indexer), the indexer script's list
 * and the connector (which names the repositories of a shard that did not answer) must agree on the
 * assignment, so it is this one pure function of the repository's name and N, with no table to share:
 * - by name, so adding or removing a repository moves no other one;
 * - by jump consistent hashing (Lamping and Veach, 2014) of the name's 64-bit FNV-1a hash, so that going
 *   from N to N+1 shards moves only about 1/(N+1) of the repositories, each to the new shard, and the
 *   shards stay within a few percent of equal size.
 * The name is the repository's name as Zoekt knows it (spec.repositories[].name, or a discovered
 * repository's full name), before any prefix the connector strips for display. */
#ifndef ZK_SHARD_H
#define ZK_SHARD_H

#include <stdint.h>

/* The most shards a corpus may have (the CRD's bound): also the connector's fan-out width. */
#define SHARD_MAX 16

/* The 64-bit FNV-1a hash of the NUL-terminated s. */
uint64_t shard_hash(const char *s);

/* The shard, in [0, n), that serves the repository called name; 0 when n <= 1. */
int shard_of(const char *name, int n);

#endif
