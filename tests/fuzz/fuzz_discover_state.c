/* fuzz_discover_state.c: the discovered repositories as the corpus's ConfigMap keeps them
 * (controller/sources/discover.h, disc_load), which the operator wrote but anybody allowed to edit
 * ConfigMaps in the namespace may change before a restarted operator reads it back.
 *
 * Input: the text of the ConfigMap's key. Asserted, for a corpus with two sources:
 * - at most SPEC_MAX_REPOS repositories are restored per source, each with an https clone URL the spec
 *   accepts (disc_merge then names them as it would listed ones, or says why not);
 * - the text the restored state writes reads back into the same state: a second load gives the same
 *   count and the same text, so an operator that restarts twice changes nothing. */
#include "tests/fuzz/fuzz.h"

#include "controller/sources/discover.h"

#include <string.h>


static void two_sources(struct corpus_spec *spec, struct corpus_source src[2])
{
    memset(spec, 0, sizeof(*spec));
    memset(src, 0, 2 * sizeof(*src));
    src[0] = (struct corpus_source){.host = SPEC_HOST_GITHUB, .api_url = "https://api.github.com", .owner = "acme"};
    src[1] = (struct corpus_source){.host = SPEC_HOST_GITEA, .api_url = "https://git.example.org/api/v1",
                                    .owner = "ops", .user = 1};
    spec->sources = src;
    spec->nsources = 2;
    spec->discovery_interval_seconds = 600;
    spec->discovery_grace_seconds = 86400;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corpus_spec spec;
    struct corpus_source src[2];
    struct disc_corpus *d = disc_corpus_new(), *again = disc_corpus_new();
    char *text = malloc(size + 1), *once, *twice;
    struct corpus_repo *repos = NULL;
    struct zk_err err = {0};
    size_t restored, dropped = 0;
    int n = 0, rc;

    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    two_sources(&spec, src);
    disc_sync(d, &spec);
    restored = disc_load(d, text, 1000);
    FUZZ_CHECK(restored <= 2 * SPEC_MAX_REPOS);
    for (int i = 0; i < 2; i++) {
        struct disc_report r;

        disc_report(d, i, &r);
        FUZZ_CHECK(r.repositories <= SPEC_MAX_REPOS);
    }
    rc = disc_merge(d, &spec, &repos, &n, &dropped, &err);
    FUZZ_CHECK(rc == ZK_OK || rc == ZK_ETOOBIG);
    for (int i = 0; rc == ZK_OK && i < n; i++) {
        FUZZ_CHECK(strncmp(repos[i].url, "https://", 8) == 0 && spec_url_problem(repos[i].url) == NULL);
        FUZZ_CHECK(spec_repo_name_ok(repos[i].name));
    }
    if (rc == ZK_OK)
        rlist_repos_free(repos, n);

    once = disc_state_text(d);
    disc_sync(again, &spec);
    FUZZ_CHECK(disc_load(again, once, 2000) == restored);
    twice = disc_state_text(again);
    FUZZ_CHECK(strcmp(once, twice) == 0);
    free(once);
    free(twice);
    free(text);
    disc_corpus_free(d);
    disc_corpus_free(again);
    return 0;
}
