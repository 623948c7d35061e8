/* shard-of: prints, for each repository name given, the search shard that serves it among N
 * (lib/shard.h), one "SHARD NAME" line each, so that the tests can split a corpus as the operator
 * does. Usage: shard-of N NAME...; exits 2 on a bad N. */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char *end;
    long n = argc > 1 ? strtol(argv[1], &end, 10) : 0;

    if (argc < 2 || *end || n < 1 || n > SHARD_MAX) {
        fprintf(stderr, "usage: shard-of N NAME...   (N from 1 to %d)\n", SHARD_MAX);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        printf("%d %s\n", shard_of(argv[i], (int)n), argv[i]);
    return 0;
}
