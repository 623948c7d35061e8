/* args.h: checking an agent's arguments, and reporting any failure the agent should read as a tool
 * result.
 *
 * Argument checks never trust the JSON Schema alone (clients do not all validate): each getter accepts
 * only the declared type and range, and on failure fills the tool_result with a readable isError
 * message naming the argument, what was given and what is expected. */
#ifndef ZK_CONNECTOR_TOOLS_ARGS_H
#define ZK_CONNECTOR_TOOLS_ARGS_H

#include "connector/tools/tools.h"

#include <cjson/cJSON.h>

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

#endif
