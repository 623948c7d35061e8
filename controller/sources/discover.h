/* discover.h: the discovery of one corpus's repositories from its spec.sources, across reconciles.
 *
 * A corpus's discovery keeps, per source, what the last listings left: every page's ETag and
 * repositories (so that an unchanged page costs a 304 and is read from here), the source's set with the
 * last sighting of each repository (controller/sources/repolist.h: the grace period), when to list
 * again, and the last error. disc_list walks one source's pages over HTTP (lib/http); everything else
 * is pure. The sets also live in the corpus's ConfigMap (disc_state_text, disc_load), so that a
 * restarted operator, or a new leader, neither forgets a repository's last sighting nor drops a
 * failing source's repositories.
 *
 * A listing is bounded whatever the host answers: at most DISC_MAX_PAGES pages, no page asked twice in
 * one listing (a host whose next links go round in circles), each page bounded by hostapi.h. A failed
 * listing (the host down, a bad token, the rate limit, a loop, more repositories than a corpus holds)
 * keeps the source's set as it was; the next attempt comes after the interval, or when the host's
 * rate limit says.
 *
 * Not thread-safe: one corpus's discovery is used by one reconcile at a time (the queue never runs a
 * key twice at once). */
#ifndef ZK_SOURCES_DISCOVER_H
#define ZK_SOURCES_DISCOVER_H

#include "controller/corpus/spec.h"
#include "controller/sources/repolist.h"
#include "err.h"
#include "http.h"

#include <time.h>

#define DISC_MUST_USE __attribute__((warn_unused_result))

/* A listing of HAPI_MAX_REPOS repositories at Gitea's 50 a page, and one more to see the end. */
#define DISC_MAX_PAGES (HAPI_MAX_REPOS / 50 + 1)
/* One page's request, connection included. */
#define DISC_PAGE_TIMEOUT_MS 30000L

struct disc_corpus;

/* A new, empty discovery; never NULL. The caller owns it (disc_corpus_free). */
struct disc_corpus *disc_corpus_new(void);
void disc_corpus_free(struct disc_corpus *d);

/* Matches d's sources to spec's: a source whose host, API URL, owner and kind of owner are unchanged
 * keeps its state (its filters may change: they apply at the next listing, which is then due at once);
 * a new one starts empty and due; a removed one is forgotten. Call at the start of every reconcile. */
void disc_sync(struct disc_corpus *d, const struct corpus_spec *spec);

/* Restores the sets disc_state_text wrote (text, or NULL: nothing) into the sources of d that have none
 * yet, at now: a repository written as seen at the last listing counts as seen now, one that was
 * missing keeps its last sighting. Lines that do not parse, or name no current source, are skipped.
 * Returns how many repositories were restored. */
size_t disc_load(struct disc_corpus *d, const char *text, time_t now);

/* The sets as text for the ConfigMap: one line per repository, "<source id> <last seen> <clone URL>
 * <web URL or -> <full name>", sorted, with 0 as the last sighting of a repository the source's last
 * listing named, so that the text changes only when a set does. A heap string (possibly ""). */
char *disc_state_text(const struct disc_corpus *d);

/* Requests a listing of every source at the next disc_due (a webhook's repository event, or
 * codesearch.dev/discover-requested-at). */
void disc_request_all(struct disc_corpus *d);

/* Whether source i (of the spec last synced) is due at now. */
int disc_due(const struct disc_corpus *d, int i, time_t now);

/* The soonest time a source is due (0: none has a time: no sources). */
time_t disc_next_due(const struct disc_corpus *d);

/* How the listings reach the hosts. */
struct disc_http {
    const struct http_tls *tls; /* NULL: the system's CA store */
    struct http_pool *pool;     /* NULL: a connection per request */
};

/* Lists source i of spec (the one last synced) with token (NULL: none) at now, and makes what it found,
 * filtered, the source's set (with the grace period of spec.discovery.grace). Returns ZK_OK, or the
 * listing's failure with err saying which source and why (the set is then kept as it was): ZK_EBUSY for
 * the host's rate limit, ZK_EHTTP for a refusal (a bad token, an unknown owner), ZK_ESERVER,
 * ZK_ECONNECT, ZK_ETIMEOUT, ZK_EPARSE (an answer that does not read, pages that loop), ZK_ETOOBIG (more
 * than DISC_MAX_PAGES pages, or more repositories after the filters than a corpus holds). Either way
 * the source's next listing is set: the interval later, or when the host's rate limit allows. */
int disc_list(struct disc_corpus *d, const struct corpus_spec *spec, int i, const char *token,
              const struct disc_http *h, time_t now, struct zk_err *err) DISC_MUST_USE;

/* Records that source i could not be listed for a reason found before any request (its token Secret
 * is missing): like a failed listing, the set is kept and the next attempt is the interval later. */
void disc_fail(struct disc_corpus *d, const struct corpus_spec *spec, int i, time_t now, const char *why);

/* The corpus's repositories: spec.repositories and every source's set, merged (rlist_merge). *out
 * (rlist_repos_free) holds *n repositories; *dropped counts discovered names the spec would refuse. */
int disc_merge(const struct disc_corpus *d, const struct corpus_spec *spec, struct corpus_repo **out, int *n,
               size_t *dropped, struct zk_err *err) DISC_MUST_USE;

/* What the status says of one source. Strings are borrowed from d until its next change. */
struct disc_report {
    size_t repositories;  /* in its set: listed, or kept for the grace period or while it fails */
    size_t skipped;       /* entries of its last listing the host gave unusable (hostapi.h) */
    time_t last_success;  /* 0: never listed */
    time_t last_attempt;  /* 0: never tried */
    const char *error;    /* why the last attempt failed, or NULL when it succeeded */
    unsigned requests;    /* of the last attempt */
    unsigned not_modified; /* of those, pages answered 304 */
};
void disc_report(const struct disc_corpus *d, int i, struct disc_report *out);

#endif
