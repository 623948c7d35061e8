/* shard-of: the search shard of each repository of a repository list, by lib/shard.h's shard_of.
 *
 * Usage: shard-of N <repositories.txt
 *   Reads a repository list (the indexer's format: the name is a line's first field; empty lines and
 *   lines starting with '#' are skipped) and prints one "<shard> <name>" line per repository, the body
 *   of the shards.txt the operator writes for N search shards. The indexer tests make their shard lists
 *   with it, so that they put each repository where the operator would. */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    char line[4096];
    char *end = NULL;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;

    if (argc != 2 || *end || n < 1 || n > SHARD_MAX) {
        fprintf(stderr, "usage: shard-of N <repositories.txt   (N from 1 to %d)\n", SHARD_MAX);
        return 2;
    }
    while (fgets(line, sizeof line, stdin)) {
        size_t skip = strspn(line, " \t");
        size_t len = strcspn(line + skip, " \t\r\n");

        if (len == 0 || line[skip] == '#')
            continue;
        line[skip + len] = '\0';
        printf("%d %s\n", shard_of(line + skip, (int)n), line + skip);
    }
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
