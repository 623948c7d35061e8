/* shard.c: see shard.h. */
#include "shard.h"

uint64_t shard_hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL; /* the FNV-1a offset basis */

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL; /* the FNV prime */
    }
    return h;
}

int shard_of(const char *name, int n)
{
    uint64_t key = shard_hash(name);
    int64_t b = -1, j = 0;

    if (n <= 1)
        return 0;
    /* Jump consistent hashing: a pseudo-random walk that lands in bucket j with probability 1/n and,
     * as n grows, only ever jumps forward into the new buckets. */
    while (j < n) {
        b = j;
        key = key * 2862933555777941757ULL + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return (int)b;
}
