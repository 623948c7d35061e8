/* err.h: the project's one error vocabulary.
 *
 * Every fallible function returns an int: ZK_OK (0) on success or one of the negative codes below, and,
 * when the caller passes a struct zk_err, leaves a message there that can be shown to a user as is.
 * The message says what was tried ("POST http://zoekt:6070/api/search: ..."), so callers rarely need to
 * add context of their own. */
#ifndef ZK_ERR_H
#define ZK_ERR_H

#include <stddef.h>

enum zk_code {
    ZK_OK = 0,
    ZK_ENOMEM = -1,     /* an allocation failed */
    ZK_EINVAL = -2,     /* bad input: a malformed file, flag, spec or argument */
    ZK_ETOOBIG = -3,    /* a bounded buffer would have grown past its limit */
    ZK_ECONNECT = -4,   /* could not reach the server (DNS, refused, TLS handshake) */
    ZK_ETIMEOUT = -5,   /* the operation ran past its deadline */
    ZK_EHTTP = -6,      /* the server answered with a status the caller cannot accept */
    ZK_EPARSE = -7,     /* the server's answer was not in the expected shape */
    ZK_ECANCELLED = -8, /* the caller asked the operation to stop */
    ZK_EIO = -9,        /* a local file or socket operation failed */
    ZK_ETRANSPORT = -10 /* the connection failed after it was made (reset, truncated body) */
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

/* A short constant name for a code ("timeout", "connection failed", ...). Never NULL. */
const char *zk_strerror(int code);

/* Whether retrying the same operation later can reasonably succeed (timeouts, unreachable servers,
 * 5xx answers) as opposed to failures that need the input changed. */
int zk_err_retryable(int code);

#endif
