/* args.h: what the tools share: checking an agent's arguments, reporting failures as tool results, and
 * the tool implementations that tools.c dispatches to.
 *
 * Argument checks never trust the JSON Schema alone (clients do not all validate): each getter accepts
 * only the declared type and range, and on failure fills the tool_result with a readable isError
 * message naming the argument, what was given and what is expected. */
#ifndef ZK_CONNECTOR_TOOLS_ARGS_H
#define ZK_CONNECTOR_TOOLS_ARGS_H

#include "connector/tools/tools.h"
#include "connector/zoekt/client.h"

#include <cjson/cJSON.h>
#include <time.h>

/* Marks r as failed, with code ZK_EINVAL (the caller's arguments, or a name that selects nothing: the
 * call must change to succeed), and sets its text to the formatted message (replacing what was there).
 * Returns ZK_OK, because a failure the agent should read is still a successful call (the message, at
 * most 2 KiB, always fits the text buffer). */
int targ_fail(struct tool_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* targ_fail for a failure of something else than the arguments: code is the lib/err.h code of what
 * failed (the Zoekt client's, the list cache's), which tool_result.code keeps for the metrics. */
int targ_fail_code(struct tool_result *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The argument checks below (targ_string to targ_repo_pattern) return ZK_OK, or fail r with a
 * message for the agent and return ZK_EINVAL. The tools answer that failure with r as it is: the agent
 * reads why its call was refused. */

/* What JSON type v has, as a message names it ("a number", "an array", ...). */
const char *targ_type(const cJSON *v);

/* A string argument: *out points into args, or stays NULL when absent (or JSON null). Fails r when it
 * has another type, is longer than max_len bytes, or holds a NUL character or bytes that are not UTF-8
 * (the message names the argument and the offset). */
int targ_string(const cJSON *args, const char *name, size_t max_len, const char **out, struct tool_result *r);

/* A string, or an array of strings, as a heap array of pointers into args (*out freed by the caller
 * with free(); NULL when absent). Fails r for other types, empty strings, more than
 * max_items items, an item longer than max_len, or one that holds a NUL or is not UTF-8. */
int targ_string_list(const cJSON *args, const char *name, size_t max_items, size_t max_len, const char ***out,
                     size_t *n, struct tool_result *r);

/* An integer argument in [min, max], *out = def when absent. Fails r otherwise. */
int targ_int(const cJSON *args, const char *name, long min, long max, long def, long *out, struct tool_result *r);

/* A boolean argument, *out = def when absent. Fails r for other types. */
int targ_bool(const cJSON *args, const char *name, int def, int *out, struct tool_result *r);

/* Normalises the repository argument arg (zn_normalize) into pattern (ZN_ARG_MAX + 1 bytes) and checks
 * a glob's syntax. Fails r, naming the argument argname, when arg is empty or a bad glob. */
int targ_repo_pattern(const char *argname, const char *arg, char *pattern, struct tool_result *r);

/* Whether a normalised repository pattern selects at least one repository of l. */
int targ_repo_indexed(const struct zr_list *l, const char *pattern);

/* Appends to b the sentence for a repository argument arg (normalised: pattern) that selects nothing
 * in l: "\"arg\" matches no indexed repository; closest: a, b." or, when no name is near, "...; none
 * has a similar name (N are indexed; list_repositories shows them)." Returns ZK_OK or the buffer's
 * ZK_ETOOBIG. */
int targ_no_repo(const struct zr_list *l, const char *arg, const char *pattern, struct buf *b);

/* After an empty result with repository filters (repos, n of them, each accepted by the query
 * builder), tells "no match in the repositories" apart from "no such repository", and names the
 * closest indexed repositories for each argument that selects none. Appends to note, which a sentence
 * that does not fit empties (the note is a courtesy). */
void targ_explain_empty(const struct tool_ctx *ctx, const char *const *repos, size_t n, struct buf *note);

/* Runs the Zoekt query zq for tool (its name, for the message) with the configured search timeout:
 * ZK_OK with *res filled (the caller frees it with zr_search_free, also after a failure), or fails r
 * with "<tool> failed: <why>\nQuery sent: <zq>" and the client's code, and returns ZK_EINVAL, as the
 * argument checks do. */
int targ_search(const struct tool_ctx *ctx, const char *tool, const char *zq, const struct zc_search_opts *so,
                const struct zr_opts *ro, struct zr_search *res, struct tool_result *r);

/* Fills line (empty) with what the "Indexed:" header line says of the repositories of res's files,
 * in their order (fmt_indexed): the commit of each one's first file in res, and the age of its index
 * from the configuration's list cache (listcache.h), which may fetch Zoekt's list first. A repository
 * the cache has no time for at that commit says "(index time unknown)": the line is a courtesy, and
 * the search's answer stands without it. */
void targ_indexed(const struct tool_ctx *ctx, const struct zr_search *res, struct buf *line);

/* Zoekt's repository list for a tool call, the only way a tool learns which repositories exist: the
 * configuration's list cache's shared copy at most ZLC_FRESH_MS old (listcache.h), or, in a
 * configuration without a cache (some tests), a fetch of the call's own. Returns ZK_OK with *out, to
 * be handed back with targ_list_put, or the error with err set and *out NULL. */
int targ_list_get(const struct tool_ctx *ctx, const struct zr_list **out, struct zk_err *err)
    __attribute__((warn_unused_result));
void targ_list_put(const struct tool_ctx *ctx, const struct zr_list *l);

/* targ_list_get with a copy at most max_age_ms old, for readers to which a minute-old list is as good
 * (the code host's templates change only with a reindex that moves the repository elsewhere). */
int targ_list_get_within(const struct tool_ctx *ctx, long long max_age_ms, const struct zr_list **out,
                         struct zk_err *err) __attribute__((warn_unused_result));

/* Sets the url of each of the n files that has none from its repository's code host templates in the
 * configuration's repository list (a copy at most ZLC_TTL_MS old): the file at its commit, at its first
 * matching line. A courtesy: no list, or no templates, leaves them NULL. */
void targ_web_urls(const struct tool_ctx *ctx, struct zr_file *files, size_t n);

/* The Zoekt connection for a tool call, from the configuration (timeout_ms: search or list). */
struct zc_conn targ_conn(const struct tool_ctx *ctx, long timeout_ms);

/* Each tool's run function, which tools.c calls after checking that args is absent or an object whose
 * members the tool's declaration names; the contract of tools_call (ZK_OK with r filled, failures the
 * agent should see as is_error). */
int tool_search_code(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_list_repositories(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r,
                           struct zk_err *err);
int tool_read_file(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_corpus_status(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_list_files(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_find_references(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);
int tool_find_symbol(const struct tool_ctx *ctx, const cJSON *args, struct tool_result *r, struct zk_err *err);

/* Newest and oldest index time over the repositories, and the first Zoekt version found. */
struct targ_index_summary {
    time_t newest;  /* 0 when unknown */
    time_t oldest;
    const char *zoekt_version; /* points into the list; "" when unknown */
};
void targ_summarise(const struct zr_list *l, struct targ_index_summary *s);

/* The repositories of l, oldest index first (equal times by name; unknown index times last), as a
 * heap array of l->n_repos indices into l->repos that the caller frees; NULL when l is empty. */
size_t *targ_oldest_first(const struct zr_list *l);

/* Whether r was indexed more than max_age seconds before now. A repository whose index time is
 * unknown is not judged (not stale), as the oldest index time ignores it too. */
int targ_is_stale(const struct zr_repo *r, time_t now, long max_age);

#endif
