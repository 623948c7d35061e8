/* repolist.h: from the repositories the hosts list to the repositories a corpus indexes. Pure: no I/O.
 *
 * Three steps, each its own function so that each rule is tested alone: the filter of one source
 * (include and exclude globs over full names, archived, forks, visibility); the grace period, which
 * keeps a repository that vanished from a listing for a while and keeps a failing source's last good
 * listing whole; and the merge of every source's repositories with the explicit spec.repositories,
 * which removes duplicates and sorts.
 *
 * Two URLs name the same repository when their keys are equal (rlist_key): the repository name the
 * spec derives from a URL (controller/corpus/spec.h: host and path, the host lowercased, without
 * ".git" or a trailing slash), lowercased whole, since all three hosts take owner and repository names
 * without regard to case. So https://GitHub.com/Acme/Pay.git, https://github.com/acme/pay and
 * git@github.com:acme/pay.git are one repository, and the spec's rule that names are unique holds for
 * the merged list too. */
#ifndef ZK_SOURCES_REPOLIST_H
#define ZK_SOURCES_REPOLIST_H

#include "controller/corpus/spec.h"
#include "controller/sources/hostapi.h"
#include "err.h"

#include <stddef.h>
#include <time.h>

#define RLIST_MUST_USE __attribute__((warn_unused_result))

/* What one source keeps of its listing. Globs are borrowed. */
struct rlist_filter {
    /* fnmatch(3) globs over full names ("acme/ *", without the space, or "acme/platform/ *-service"),
     * compared without case. '*' matches '/' too, so "acme/ *" covers every subgroup of a GitLab group,
     * and "*" alone every repository. A repository is kept
     * when it matches an include glob (or include is NULL or empty) and no exclude glob. Both
     * NULL-terminated, or NULL. */
    const char *const *include;
    const char *const *exclude;
    int archived;        /* keep archived repositories */
    int forks;           /* keep forks */
    unsigned visibility; /* a set of enum hapi_visibility bits; 0 keeps every visibility */
};

/* Whether f keeps r. */
int rlist_keep(const struct rlist_filter *f, const struct hapi_repo *r);

/* Removes from repos (in place, keeping the order) every repository f does not keep. */
void rlist_filter(const struct rlist_filter *f, struct hapi_repos *repos);

/* The key of a clone URL, as above, in dst (size bytes). Returns 1, or 0 when the URL yields no name
 * or the key does not fit. */
int rlist_key(const char *url, char *dst, size_t size);

/* A source's discovered repositories, each with the last time a listing named it, sorted by key. */
struct rlist_entry {
    struct hapi_repo repo;
    time_t last_seen;
};
struct rlist_set {
    struct rlist_entry *items;
    size_t n;
};

/* The set a source holds after a listing at now. fresh is the listing, already filtered (NULL when the
 * listing failed). With a listing: every repository in it, seen now, and every repository of prev it
 * no longer names whose last sighting is less than grace_seconds old, so that a repository leaves only
 * after it has been missing for the grace period (a host's hiccup, a rename in progress, a token that
 * briefly saw less). Without one: prev as it was, since a source that cannot be listed says nothing
 * about its repositories; a failing source's repositories are kept until it answers again. A
 * repository in fresh twice (two URLs with one key) is kept once. *out (rlist_set_free) is sorted by
 * key; a repository whose URL has no key is left out. */
void rlist_grace(const struct rlist_set *prev, const struct hapi_repos *fresh, time_t now, long grace_seconds,
                 struct rlist_set *out);

void rlist_set_free(struct rlist_set *s);

/* The corpus's repositories: the explicit ones (from spec.repositories, as spec_parse gave them) and
 * those of every source's set, without duplicates, sorted by name. An explicit repository wins over a
 * discovered one with its key or its name, so a listed repository keeps its branches, name and address;
 * a discovered repository gets what spec_parse would give a listed repository with its clone URL and
 * its host's codeHost (github, gitlab, gitea): the derived name and address, and no branches (the
 * remote's HEAD, its default branch). A discovered repository whose derived name spec_parse would
 * refuse is left out and counted in *dropped. *out (rlist_repos_free) holds *n repositories. Returns
 * ZK_OK, or ZK_ETOOBIG when the result would hold more than SPEC_MAX_REPOS (then *out is NULL and err
 * says how many, so that the corpus's status can ask for narrower filters). */
int rlist_merge(const struct corpus_repo *explicit_repos, int nexplicit, const struct rlist_set *const *sets,
                size_t nsets, struct corpus_repo **out, int *n, size_t *dropped, struct zk_err *err) RLIST_MUST_USE;

void rlist_repos_free(struct corpus_repo *repos, int n);

#endif
