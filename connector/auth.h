/* auth.h: the bearer tokens the connector accepts on /mcp and answers for on /auth.
 *
 * Tokens come from a file (one per line; blank lines and lines starting with '#' are ignored) and/or a
 * directory such as a mounted Kubernetes Secret (every regular file whose name does not start with '.'
 * holds one token; surrounding whitespace is trimmed). When either source changes on disk (its files'
 * modification times, sizes or names), the tokens are read again, checked at most once per reload
 * interval, so a rotated Secret takes effect without a restart. A reload that fails keeps the tokens
 * already loaded.
 *
 * Only SHA-256 digests of the tokens are kept, and a presented token is compared with every one of them
 * with CRYPTO_memcmp: the time a check takes says nothing about how much of a token was right, nor about
 * its length. The one exception is asked for: a connector of a sharded corpus sends the first token to
 * the other shards' gateways (connector/zoekt/shards.h), so it keeps that one in plaintext
 * (auth_keep_gateway_token). Safe to use from several threads. */
#ifndef ZK_CONNECTOR_AUTH_H
#define ZK_CONNECTOR_AUTH_H

#include "err.h"

#include <stddef.h>

#define AUTH_RELOAD_SECONDS 5.0
#define AUTH_FILE_MAX (1u << 20)   /* bound on one token file */
#define AUTH_TOKENS_MAX 4096       /* bound on the number of accepted tokens */

struct auth;

/* Loads the tokens of token_file and token_dir (either or both may be NULL). With both NULL the
 * checker is disabled and accepts every request (auth_enabled returns 0). A source that cannot be read
 * or holds no token is an error: a server meant to be protected must not start open. reload_s is the
 * least time between two checks for changes (AUTH_RELOAD_SECONDS in production). *out is owned by the
 * caller (auth_free). */
int auth_new(const char *token_file, const char *token_dir, double reload_s, struct auth **out,
             struct zk_err *err);
void auth_free(struct auth *a);

/* Whether tokens are configured at all. a may be NULL (disabled). */
int auth_enabled(const struct auth *a);

/* Whether the value of an Authorization header (may be NULL) carries an accepted bearer token. Always 1
 * when the checker is disabled. */
int auth_check_header(struct auth *a, const char *authorization);

/* From now on keeps the first token (the token file's first line, else the first file of the directory
 * by name) in plaintext as well, read again with the others when they change, for auth_gateway_token.
 * Reads the sources now. Returns ZK_OK, or the error of that read (the tokens loaded stay). a must not
 * be NULL. */
int auth_keep_gateway_token(struct auth *a, struct zk_err *err) __attribute__((warn_unused_result));

/* Copies the kept first token into out (size bytes, NUL-terminated) and returns 1, after checking the
 * sources for changes as auth_check_header does; returns 0 when none is kept or it does not fit. a is a
 * struct auth * (the signature is shards.h's gateway_token). Safe from any thread. */
int auth_gateway_token(void *a, char *out, size_t size);

/* The token of an Authorization header value: the part after "Bearer " (scheme matched without regard
 * to case), trimmed. Returns a pointer into header and sets *len, or NULL when there is no bearer
 * token. */
const char *auth_bearer_token(const char *header, size_t *len);

#endif
