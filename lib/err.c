/* err.c: see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int zk_err_set(struct zk_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

int zk_err_prefix(struct zk_err *err, const char *fmt, ...)
{
    char prefix[ZK_ERR_MSG_MAX];
    char joined[2 * ZK_ERR_MSG_MAX + 2];
    va_list ap;

    if (!err)
        return ZK_OK;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    snprintf(joined, sizeof(joined), "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, sizeof(err->msg) - 1);
    err->msg[sizeof(err->msg) - 1] = '\0';
    return err->code;
}

void zk_err_clear(struct zk_err *err)
{
    if (!err)
        return;
    err->code = ZK_OK;
    err->msg[0] = '\0';
}

const char *zk_strerror(int code)
{
    switch (code) {
    case ZK_OK: return "ok";
    case ZK_ENOMEM: return "out of memory";
    case ZK_EINVAL: return "invalid input";
    case ZK_ETOOBIG: return "too large";
    case ZK_ECONNECT: return "connection failed";
    case ZK_ETIMEOUT: return "timed out";
    case ZK_EHTTP: return "HTTP error";
    case ZK_EPARSE: return "unexpected response";
    case ZK_ECANCELLED: return "cancelled";
    case ZK_EIO: return "I/O error";
    case ZK_ETRANSPORT: return "transport error";
    default: return "unknown error";
    }
}

int zk_err_retryable(int code)
{
    return code == ZK_ECONNECT || code == ZK_ETIMEOUT || code == ZK_ETRANSPORT;
}
