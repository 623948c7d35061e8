/* merge.h: one answer from the answers of a corpus's search shards (shards.h), as if one webserver
 * had given it.
 *
 * Each shard serves a disjoint part of the repositories (lib/shard.h assigns them), so the files of a
 * search and the repositories of a list are unions, and Zoekt's statistics are sums. Every shard is
 * asked for the files the caller wants, and the union is ranked again and cut to that many: a file
 * among the global first max_files is among its own shard's first max_files, so the cut is exact.
 *
 * Also the look-ups of the catalogue (the repository list): which repositories a shard serves, for the
 * note of a partial answer, and which shards serve the repositories a call's repository arguments
 * select, so that the call asks only those.
 *
 * Pure: no I/O, no locks; the functions take what the parts own and leave the parts empty. */
#ifndef ZK_ZOEKT_MERGE_H
#define ZK_ZOEKT_MERGE_H

#include "connector/zoekt/result.h"

#include <stddef.h>

/* Merges the answers of n shards (parts[k] is shard k's, all zero when it did not answer) into *out
 * (zeroed first): every file, ranked as zr_rank ranks them (score, then repository, path and branch),
 * the first max_files kept (0: all) and the rest freed; FileCount, MatchCount, FilesSkipped,
 * ShardsSkipped and Crashes summed, the flush reasons joined, the longest duration kept. out->shards
 * is left zero for the caller. The parts' files move to out: the parts are left without files, and
 * zr_search_free on them frees what else they hold. */
void zm_search(struct zr_search *parts, int n, size_t max_files, struct zr_search *out);

/* Merges the repository lists of n shards (parts[k] is shard k's, or all zero) into *out (zeroed
 * first): every repository once, sorted by name, with its shard set to k; a name two shards both list
 * (which shard_of's assignment rules out, but a stale index left behind by a change of shard count
 * could do) is kept from the lower shard. Shards and Crashes are summed; out->search_shards is left
 * zero for the caller. The parts' repositories move to out, as in zm_search. */
void zm_list(struct zr_list *parts, int n, struct zr_list *out);

/* Moves the failures recorded in from that into does not have yet into it, messages and all; the
 * rest of from is freed (from is left zero). into->n becomes from's when into has none. */
void zm_failures_add(struct zr_shards *into, struct zr_shards *from);

/* The repositories of catalogue that shard k of n serves, by shard_of over their full names (Zoekt's,
 * before a mirror prefix is stripped): the first max of their indexes into catalogue->repos, in the
 * catalogue's order, go to idx. Returns how many there are in all. */
size_t zm_shard_repos(const struct zr_list *catalogue, int k, int n, size_t *idx, size_t max);

/* The shards a search restricted to the repositories that the n normalised repository arguments
 * (reponame.h) select has to ask, as a mask (bit k: shard k of n_shards), or 0 for every shard.
 * current is the newest repository list; a shard it lacks (its search_shards.failed) is looked up in
 * complete, the last list every shard answered (NULL: none, and such a shard is always asked, since
 * what it serves is unknown). When no repository of either selects anything, every shard is asked:
 * the arguments may name a repository indexed after the lists were taken, which only a search of all
 * finds. A repository indexed since then in another shard than the others an argument selects is
 * missed until the list is taken again (listcache.h: at most a minute). An argument too costly to
 * match (zn_matches_bounded) counts as selecting the repository. */
unsigned zm_route(const struct zr_list *current, const struct zr_list *complete, int n_shards,
                  const char *const *patterns, size_t n);

#endif
