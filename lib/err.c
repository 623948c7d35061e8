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
#define ZK_ERR_MESSAGE(name, value, message, retryable) case ZK_##name: return message;
    ZK_ERRNO_MAP(ZK_ERR_MESSAGE)
#undef ZK_ERR_MESSAGE
    default: return "unknown error";
    }
}

int zk_err_retryable(int code)
{
    switch (code) {
#define ZK_ERR_RETRYABLE(name, value, message, retryable) case ZK_##name: return retryable;
    ZK_ERRNO_MAP(ZK_ERR_RETRYABLE)
#undef ZK_ERR_RETRYABLE
    default: return 0;
    }
}

const char *zk_err_retry_advice(int code)
{
    return zk_err_retryable(code) ? "retrying may help" : "retrying will not help";
}
