/* err.h: the project's one error vocabulary.
 *
 * Every fallible function returns an int: ZK_OK (0) on success or one of the negative codes below, and,
 * when the caller passes a struct zk_err, leaves a message there that can be shown to a user as is.
 * The message says what was tried ("POST http://zoekt:6070/api/search: ..."), so callers rarely need to
 * add context of their own. */
#ifndef ZK_ERR_H
#define ZK_ERR_H

#include <stddef.h>

/* The table of codes, in the style of libuv's UV_ERRNO_MAP: XX(name, value, message, retryable) for
 * each, so that the enum, zk_strerror and zk_err_retryable cannot disagree. The message is a short
 * constant phrase; retryable says whether trying the same operation again later can reasonably succeed
 * (the peer was unreachable, slow or failed on its own) as opposed to failures that need the input or
 * the configuration changed. */
#define ZK_ERRNO_MAP(XX)                                                                                   \
    XX(EINVAL, -2, "invalid input", 0)          /* bad input: a malformed file, flag, spec or argument */  \
    XX(ETOOBIG, -3, "too large", 0)             /* a bounded buffer would have grown past its limit */     \
    XX(ECONNECT, -4, "connection failed", 1)    /* could not reach the server (DNS, refused, TLS) */       \
    XX(ETIMEOUT, -5, "timed out", 1)            /* the operation ran past its deadline */                  \
    XX(EHTTP, -6, "HTTP error", 0)              /* the server answered with a status the caller cannot     \
                                                   accept and retrying will meet again (a refusal) */      \
    XX(EPARSE, -7, "unexpected response", 0)    /* the server's answer was not in the expected shape */    \
    XX(ECANCELLED, -8, "cancelled", 0)          /* the caller asked the operation to stop */               \
    XX(EIO, -9, "I/O error", 0)                 /* a local file or socket operation failed */              \
    XX(ETRANSPORT, -10, "transport error", 1)   /* the connection failed after it was made (reset,         \
                                                   truncated body) */                                      \
    XX(ESERVER, -11, "server error", 1)         /* the server failed on its own (an HTTP 5xx) */           \
    XX(EBUSY, -12, "busy", 1)                   /* a bound the process shares is taken by other work for   \
                                                   now (lib/budget.h) */                                  \
    XX(ENOENT, -13, "not found", 0)             /* the caller named something that does not exist (a       \
                                                   tool) */                                               \
    XX(EAPI, -20, "Kubernetes API error", 0)    /* the Kubernetes API answered with an error Status;       \
                                                   kube_err's reason says more, and whether to retry */

enum zk_code {
    ZK_OK = 0,
#define ZK_ERR_ENUM(name, value, message, retryable) ZK_##name = (value),
    ZK_ERRNO_MAP(ZK_ERR_ENUM)
#undef ZK_ERR_ENUM
};

#define ZK_ERR_MSG_MAX 512

struct zk_err {
    int code;
    char msg[ZK_ERR_MSG_MAX];
};

/* Records code and a printf-style message in err (which may be NULL) and returns code, so that a
 * failing path can read `return zk_err_set(err, ZK_EINVAL, "...");`. A message longer than the buffer
 * is cut. */
int zk_err_set(struct zk_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to the message already in err, keeping its code; returns the code. Used where a
 * caller can say what it was doing when a callee failed. */
int zk_err_prefix(struct zk_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Resets err to ZK_OK with an empty message. err may be NULL. */
void zk_err_clear(struct zk_err *err);

/* The table's message for a code ("timed out", "connection failed", ...); "ok" for ZK_OK and "unknown
 * error" for a value outside the table. Never NULL. */
const char *zk_strerror(int code);

/* The table's retryable column: whether retrying the same operation later can reasonably succeed
 * (timeouts, unreachable servers, 5xx answers) as opposed to failures that need the input changed. */
int zk_err_retryable(int code);

/* The advice a message gives for code, from the same column: "retrying may help" or "retrying will not
 * help". Lets a message's words and a report's retryable flag come from one decision. */
const char *zk_err_retry_advice(int code);

#endif
