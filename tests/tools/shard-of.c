/* shard-of: the search shard of repositories among N, by lib/shard.h's shard_of, one "<shard> <name>"
 * line each (the body of the shards.txt the operator writes), so that the tests split a corpus where
 * the operator would.
 *
 * Usage: shard-of N NAME...      the shard of each name given;
 *        shard-of N <LIST        of each repository of a repository list (the indexer's format: the
 *                                name is a line's first field; empty lines and '#' lines are skipped).
 * Exits 2 on a bad N. */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    char line[4096];
    char *end = NULL;
    long n = argc > 1 ? strtol(argv[1], &end, 10) : 0;

    if (argc < 2 || *end || n < 1 || n > SHARD_MAX) {
        fprintf(stderr, "usage: shard-of N [NAME...]   (N from 1 to %d; without names, a list on stdin)\n", SHARD_MAX);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        printf("%d %s\n", shard_of(argv[i], (int)n), argv[i]);
    while (argc == 2 && fgets(line, sizeof line, stdin)) {
        size_t skip = strspn(line, " \t");
        size_t len = strcspn(line + skip, " \t\r\n");

        if (len == 0 || line[skip] == '#')
            continue;
        line[skip + len] = '\0';
        printf("%d %s\n", shard_of(line + skip, (int)n), line + skip);
    }
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
