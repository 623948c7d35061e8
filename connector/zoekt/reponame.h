/* reponame.h: repository names as people write them, matched against the names Zoekt serves.
 *
 * Pure: no I/O. Agents name a repository the way people do: "payments", "acme/payments", "payments*",
 * the full mirror name "mirrors/github.com/acme/payments", or the URL they cloned,
 * "https://github.com/acme/payments.git". The rules, shared by search_code's repo argument (as a Zoekt
 * regex, built by query.c), list_repositories' filter and the notes that explain an empty result:
 *
 *   URL            scheme://[user@]host[:port]/path and user@host:path become host/path, without a
 *                  final ".git"
 *   plain name     matches the whole name or its trailing path segments: "bulk" matches "acme/bulk"
 *                  and "mirrors/x.org/acme/bulk", never "acme/bulkhead"
 *   glob           (* ? [ {) the same anchoring: it matches the whole name or trailing segments; "*"
 *                  stays within one segment, "**" crosses them (query.h has the glob syntax)
 *
 * When nothing matches, zn_suggest names the closest indexed repositories, so that an agent can correct
 * a typo instead of being told the repository does not exist. */
#ifndef ZK_ZOEKT_REPONAME_H
#define ZK_ZOEKT_REPONAME_H

#include "err.h"

#include <stddef.h>

/* Longest repository argument accepted, in bytes. */
#define ZN_ARG_MAX 1024
/* Most repositories zn_suggest names. */
#define ZN_SUGGEST_MAX 5

/* Writes the normal form of a repository argument into out (size bytes, at least ZN_ARG_MAX + 1):
 * spaces around it dropped, a clone URL reduced to host/path, leading and trailing slashes dropped.
 * Returns ZK_OK, or ZK_EINVAL with a message when nothing is left or arg is longer than ZN_ARG_MAX. */
int zn_normalize(const char *arg, char *out, size_t size, struct zk_err *err);

/* Whether a normalised argument (zn_normalize) is a glob: it has * ? [ or {. */
int zn_is_glob(const char *pattern);

/* Whether name, as Zoekt serves it, is selected by the normalised pattern: the pattern matches the
 * whole name or the part after one of its slashes. An unclosed "[" or "{" in a glob matches nothing
 * (query.c rejects such globs with a message before they get here). */
int zn_matches(const char *pattern, const char *name);

/* zn_matches, saying when it gave up: 1 (matches), 0 (does not) or -1 when deciding would take more
 * than a bounded number of steps (a glob with many stars and braces against a long name, which
 * zn_matches then treats as no match). */
int zn_matches_bounded(const char *pattern, const char *name);

/* Picks the names closest to pattern (a normalised argument, which matched none of them): by the edit
 * distance, ignoring case, between the pattern and the name or its trailing segments (names that end
 * in the pattern's last segment first, whatever their host or owner), among names
 * within two edits (or a third of the pattern's length) of it, containing it, or sharing a path
 * segment with it. Writes the indexes of at most max (<= ZN_SUGGEST_MAX) names into out, nearest
 * first, and returns how many. */
size_t zn_suggest(const char *pattern, const char *const *names, size_t n, size_t *out, size_t max);

#endif
