/* Unit tests for lib/shard: the assignment of repositories to search shards, which the operator, the
 * indexer's lists and the connector must compute alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "shard.h"

#define NAMES 10000

static void name_of(int i, char *dst, size_t len)
{
    snprintf(dst, len, "git.example.com/org-%d/service-%d", i % 37, i);
}

/* The published FNV-1a 64 test vectors: another implementation of the hash gives the same shards. */
static void test_hash_is_fnv1a(void **state)
{
    (void)state;
    assert_true(shard_hash("") == 0xcbf29ce484222325ULL);
    assert_true(shard_hash("a") == 0xaf63dc4c8601ec8cULL);
    assert_true(shard_hash("foobar") == 0x85944171f73967e8ULL);
}

static void test_one_shard_is_today(void **state)
{
    (void)state;
    assert_int_equal(shard_of("github.com/acme/api", 1), 0);
    assert_int_equal(shard_of("github.com/acme/api", 0), 0);
    assert_int_equal(shard_of("", 3), shard_of("", 3));
}

/* Every shard gets close to its share of 10,000 names. */
static void test_shards_are_balanced(void **state)
{
    int n, i, count[SHARD_MAX];
    char name[96];

    (void)state;
    for (n = 2; n <= SHARD_MAX; n++) {
        for (i = 0; i < n; i++)
            count[i] = 0;
        for (i = 0; i < NAMES; i++) {
            int s;

            name_of(i, name, sizeof(name));
            s = shard_of(name, n);
            assert_true(s >= 0 && s < n);
            count[s]++;
        }
        for (i = 0; i < n; i++) {
            /* Within 15% of the mean: a binomial count of 10,000/16 = 625 strays about 25. */
            assert_true(count[i] * n > NAMES * 85 / 100);
            assert_true(count[i] * n < NAMES * 115 / 100);
        }
    }
}

/* Going from n to n+1 shards moves a repository only into the new shard, and about 1/(n+1) of them. */
static void test_growing_moves_only_into_the_new_shard(void **state)
{
    int n, i;
    char name[96];

    (void)state;
    for (n = 1; n < SHARD_MAX; n++) {
        int moved = 0;

        for (i = 0; i < NAMES; i++) {
            int before, after;

            name_of(i, name, sizeof(name));
            before = shard_of(name, n);
            after = shard_of(name, n + 1);
            if (before != after) {
                assert_int_equal(after, n);
                moved++;
            }
        }
        assert_true(moved * (n + 1) > NAMES * 85 / 100);
        assert_true(moved * (n + 1) < NAMES * 115 / 100);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_is_fnv1a),
        cmocka_unit_test(test_one_shard_is_today),
        cmocka_unit_test(test_shards_are_balanced),
        cmocka_unit_test(test_growing_moves_only_into_the_new_shard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
