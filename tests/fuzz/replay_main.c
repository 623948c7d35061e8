/* replay_main.c: runs a fuzz target over its seed corpus without libFuzzer, for `make test`.
 *
 * Usage: fuzz_<name> [file-or-directory ...]. Without arguments it replays every file of
 * $ZK_ROOT/tests/fuzz/seeds/<name>/ (ZK_ROOT defaults to the current directory), <name> being taken
 * from the program's own name. All inputs run in this one process, which keeps the replay fast (a
 * process per input would pay LeakSanitizer's exit check each time); a broken property or a sanitizer
 * report aborts it, which tests/run.sh counts as a failure, and LeakSanitizer checks everything at exit.
 * Each input is copied into a buffer of exactly its size, as libFuzzer does, so that AddressSanitizer
 * sees any read past its end. Prints TAP ("ok" per input, then "# pass N" and "# fail N"), which
 * tests/run.sh counts, and exits non-zero when an input could not be read or no input was found. */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static int n_pass, n_fail;

/* Reads path whole into a heap buffer of exactly its size (at least one byte allocated). */
static unsigned char *read_input(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc(n > 0 ? (size_t)n : 1);
        if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return data;
}

/* Runs one input and reports it. An input that breaks a property aborts the whole program, so the
 * name of each input is printed before it runs: the log then ends with the culprit. */
static void replay_file(const char *path)
{
    size_t size = 0;
    unsigned char *data;

    printf("# %s\n", path);
    fflush(stdout);
    data = read_input(path, &size);
    if (data == NULL) {
        n_fail++;
        printf("not ok %d - %s: cannot read: %s\n", n_pass + n_fail, path, strerror(errno));
        return;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    n_pass++;
    printf("ok %d - %s\n", n_pass + n_fail, path);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays path: a file, or every regular file of a directory in name order. */
static void replay_path(const char *path)
{
    struct dirent **names = NULL;
    struct stat st;
    char child[4096];
    int n, i;

    if (stat(path, &st) != 0) {
        n_fail++;
        printf("not ok %d - %s: %s\n", n_pass + n_fail, path, strerror(errno));
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        replay_file(path);
        return;
    }
    n = scandir(path, &names, NULL, by_name);
    for (i = 0; i < n; i++) {
        snprintf(child, sizeof(child), "%s/%s", path, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(child, &st) == 0 && S_ISREG(st.st_mode))
            replay_file(child);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    const char *root = getenv("ZK_ROOT"), *base = strrchr(argv[0], '/');
    char dir[4096];
    int i;

    base = base != NULL ? base + 1 : argv[0];
    if (strncmp(base, "fuzz_", 5) == 0)
        base += 5;
    if (argc > 1) {
        for (i = 1; i < argc; i++)
            replay_path(argv[i]);
    } else {
        snprintf(dir, sizeof(dir), "%s/tests/fuzz/seeds/%s", root != NULL && root[0] ? root : ".", base);
        replay_path(dir);
    }
    if (n_pass + n_fail == 0) {
        n_fail++;
        printf("not ok 1 - no input found\n");
    }
    printf("1..%d\n# pass %d\n# fail %d\n", n_pass + n_fail, n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
