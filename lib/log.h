/* log.h: structured logging, one JSON object per line on stderr.
 *
 * stderr is the only stream logs may use: over MCP's stdio transport stdout belongs to the protocol.
 * A record is {"ts":"...","level":"info","logger":"<program>","msg":"...", <key>: <value>...}; keys
 * and values are strings passed as NULL-terminated pairs, so a call site reads
 *     log_info("Applied object", "kind", "Deployment", "name", name, NULL);
 * Safe to call from several threads and processes sharing stderr: each record is at most PIPE_BUF
 * (4096) bytes and written with one write(2), which a pipe never interleaves with another. A record is
 * valid JSON whatever its strings hold: invalid UTF-8 becomes U+FFFD, a string longer than 1 KB is
 * cut and ends in "…", and pairs that no longer fit are left out and the record ends in
 * "truncated":true. Logging never allocates, so it works when memory has run out (lib/mem). */
#ifndef ZK_LOG_H
#define ZK_LOG_H

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

/* Names the program in every record and sets the lowest level written (default: info). */
void log_setup(const char *program, enum log_level min_level);

/* Parses "debug", "info", "warn" or "error"; returns -1 for anything else. */
int log_level_parse(const char *s);

/* The words a refusal of a level uses. */
#define LOG_LEVEL_NAMES "debug, info, warn or error"

/* log_level_parse as a flag_parse callback (lib/flag.h's FLAG_FUNC): stores the level in the int at
 * dst and returns ZK_OK, or returns ZK_EINVAL. */
int log_level_flag(const char *value, void *dst);

/* Writes one record. The variadic part is key, value, key, value, ..., NULL; a NULL value is
 * written as JSON null. No argument is retained. */
void log_write(enum log_level level, const char *msg, ...) __attribute__((sentinel));

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)

#endif
