/* catalogue.h: the repositories the index serves, as the tools see them: the only way a tool learns
 * which repositories exist (the configuration's list cache, listcache.h, or a fetch of the call's own
 * where there is none), and what the tools derive from it: whether a repository argument selects one,
 * the closest names when it does not, the "Indexed:" line of an answer, index summaries, code host
 * addresses. */
#ifndef ZK_CONNECTOR_TOOLS_CATALOGUE_H
#define ZK_CONNECTOR_TOOLS_CATALOGUE_H

#include "buf.h"
#include "connector/tools/tools.h"
#include "connector/zoekt/result.h"

#include <time.h>

/* Whether a normalised repository pattern selects at least one repository of l. */
int tcat_repo_indexed(const struct zr_list *l, const char *pattern);

/* Appends to b the sentence for a repository argument arg (normalised: pattern) that selects nothing
 * in l: "\"arg\" matches no indexed repository; closest: a, b." or, when no name is near, "...; none
 * has a similar name (N are indexed; list_repositories shows them)." Returns ZK_OK or the buffer's
 * ZK_ETOOBIG. */
int tcat_no_repo(const struct zr_list *l, const char *arg, const char *pattern, struct buf *b);

/* After an empty result with repository filters (repos, n of them, each accepted by the query
 * builder), tells "no match in the repositories" apart from "no such repository", and names the
 * closest indexed repositories for each argument that selects none. Appends to note, which a sentence
 * that does not fit empties (the note is a courtesy). Returns how many arguments select no repository,
 * or -1 when the list could not be had (the note says why). */
int tcat_explain_empty(const struct tool_ctx *ctx, const char *const *repos, size_t n, struct buf *note);

/* Fills line (empty) with what the "Indexed:" header line says of the repositories of res's files,
 * in their order (fmt_indexed): the commit of each one's first file in res, and the age of its index
 * from the configuration's list cache (listcache.h), which may fetch Zoekt's list first. A repository
 * the cache has no time for at that commit says "(index time unknown)": the line is a courtesy, and
 * the search's answer stands without it. */
void tcat_indexed(const struct tool_ctx *ctx, const struct zr_search *res, struct buf *line);

/* Zoekt's repository list for a tool call, the only way a tool learns which repositories exist: the
 * configuration's list cache's shared copy at most ZLC_FRESH_MS old (listcache.h), or, in a
 * configuration without a cache (some tests), a fetch of the call's own. Returns ZK_OK with *out, to
 * be handed back with tcat_put, or the error with err set and *out NULL. */
int tcat_get(const struct tool_ctx *ctx, const struct zr_list **out, struct zk_err *err)
    __attribute__((warn_unused_result));
void tcat_put(const struct tool_ctx *ctx, const struct zr_list *l);

/* tcat_get with a copy at most max_age_ms old, for readers to which a minute-old list is as good
 * (the code host's templates change only with a reindex that moves the repository elsewhere). */
int tcat_get_within(const struct tool_ctx *ctx, long long max_age_ms, const struct zr_list **out,
                         struct zk_err *err) __attribute__((warn_unused_result));

/* The repositories as of the last list that every search shard answered (listcache.h's zlc_complete),
 * which names the repositories of a shard that did not answer; NULL when there is none yet (or no
 * cache). Hand it back with tcat_put. */
const struct zr_list *tcat_get_complete(const struct tool_ctx *ctx);

/* The search shards a search restricted to the repository arguments repos (n of them, as the caller
 * wrote them) has to ask, for zs_search (merge.h's zm_route over the configuration's list cache: a
 * copy at most ZLC_TTL_MS old, and the last complete one); 0, every shard, for one webserver, with no
 * cache, no argument, or no list to be had. A courtesy to the shards: asking them all is never wrong. */
unsigned tcat_route(const struct tool_ctx *ctx, const char *const *repos, size_t n);

/* Sets the url of each of the n files that has none from its repository's code host templates in the
 * configuration's repository list (a copy at most ZLC_TTL_MS old): the file at its commit, at its first
 * matching line. A courtesy: no list, or no templates, leaves them NULL. */
void tcat_web_urls(const struct tool_ctx *ctx, struct zr_file *files, size_t n);

/* Newest and oldest index time over the repositories, and the first Zoekt version found. */
struct tcat_index_summary {
    time_t newest;  /* 0 when unknown */
    time_t oldest;
    const char *zoekt_version; /* points into the list; "" when unknown */
};
void tcat_summarise(const struct zr_list *l, struct tcat_index_summary *s);

/* The repositories of l, oldest index first (equal times by name; unknown index times last), as a
 * heap array of l->n_repos indices into l->repos that the caller frees; NULL when l is empty. */
size_t *tcat_oldest_first(const struct zr_list *l);

/* Whether r was indexed more than max_age seconds before now. A repository whose index time is
 * unknown is not judged (not stale), as the oldest index time ignores it too. */
int tcat_is_stale(const struct zr_repo *r, time_t now, long max_age);

#endif
