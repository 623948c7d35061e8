/* log.c: see log.h. */
#include "log.h"

#include "err.h"
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A record is at most PIPE_BUF bytes, newline included: a container's stderr is a pipe, and a write
 * of up to PIPE_BUF bytes to a pipe is never interleaved with another thread's or process's. */
#define LOG_RECORD_MAX PIPE_BUF

/* The most bytes one string (the message, a value, quotes included) takes in a record, so one
 * runaway value cannot push the keys after it out of the record. */
#define LOG_STRING_MAX 1024

/* What ends a string that was cut: "…", valid UTF-8 and JSON. */
#define LOG_CUT "\xe2\x80\xa6"

/* What ends a record that had to leave pairs out: the marker, the brace and the newline. Room for it
 * is kept free while the record is written, so every record closes. */
#define LOG_TAIL_CUT ",\"truncated\":true}\n"

static const char *log_program = "zoekt-operator";
static enum log_level log_min = LOG_INFO;

/* A record being written: a fixed buffer on the stack, so that logging never allocates and mem_oom
 * can log when memory is gone. */
struct log_record {
    char data[LOG_RECORD_MAX];
    size_t len;
};

/* The bytes a record may use before its tail. */
#define LOG_BODY_MAX (LOG_RECORD_MAX - (sizeof(LOG_TAIL_CUT) - 1))

void log_setup(const char *program, enum log_level min_level)
{
    log_program = program;
    log_min = min_level;
}

int log_level_parse(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error"};

    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int log_level_flag(const char *value, void *dst)
{
    int level = log_level_parse(value);

    if (level < 0)
        return ZK_EINVAL;
    *(int *)dst = level;
    return ZK_OK;
}

/* Appends the n bytes at s, which the caller has checked fit in the body. */
static void log_put(struct log_record *r, const char *s, size_t n)
{
    memcpy(r->data + r->len, s, n);
    r->len += n;
}

/* The fewest bytes a string takes: the quotes around LOG_CUT. */
#define LOG_STRING_MIN (2 + sizeof(LOG_CUT) - 1)

/* Appends s as a JSON string of at most max bytes (at least LOG_STRING_MIN, which the body must have
 * room for), quotes included, escaped by json_escape: a string that does not fit whole is cut at a
 * character and ends in LOG_CUT. */
static void log_put_string(struct log_record *r, const char *s, size_t max)
{
    /* Escaping never shortens a text, so a string longer than a record is cut whatever follows. */
    size_t len = strnlen(s, LOG_RECORD_MAX), room = LOG_BODY_MAX - r->len, used, n;

    if (max > room)
        max = room;
    r->data[r->len++] = '"';
    n = json_escape(r->data + r->len, max - 2, s, len, &used, JSON_ESCAPE_UTF8);
    if (used < len) {
        n = json_escape(r->data + r->len, max - 2 - (sizeof(LOG_CUT) - 1), s, len, &used, JSON_ESCAPE_UTF8);
        r->len += n;
        log_put(r, LOG_CUT, sizeof(LOG_CUT) - 1);
    } else {
        r->len += n;
    }
    r->data[r->len++] = '"';
}

/* Appends ,"key":value (value a string, or null when NULL), the value cut to LOG_STRING_MAX. Returns
 * 0, appending nothing, when the room left cannot hold the key and at least a cut value. */
static int log_put_pair(struct log_record *r, const char *key, const char *value)
{
    /* The colon and the shortest value: null, or "…". */
    const size_t value_min = 1 + LOG_STRING_MIN;

    /* A key is a constant of the caller's and is not cut, unless it needs escapes nobody would put
     * in a key: then it is cut to leave room for the value. */
    if (LOG_BODY_MAX - r->len < 1 + strlen(key) + LOG_STRING_MIN + value_min)
        return 0;
    r->data[r->len++] = ',';
    log_put_string(r, key, LOG_BODY_MAX - r->len - value_min);
    r->data[r->len++] = ':';
    if (value)
        log_put_string(r, value, LOG_STRING_MAX);
    else
        log_put(r, "null", 4);
    return 1;
}

/* Writes all n bytes at p to stderr: a write to a pipe of at most PIPE_BUF bytes is whole, but stderr
 * may be a file or a terminal, and a signal may interrupt. */
static void log_emit(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(STDERR_FILENO, p, n);

        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* nowhere else to report it */
        p += k;
        n -= (size_t)k;
    }
}

void log_write(enum log_level level, const char *msg, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    struct log_record r;
    struct timespec now;
    struct tm tm;
    va_list ap;
    const char *key;
    int whole = 1, saved_errno = errno;

    if (level < log_min)
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    /* The fixed part is under 100 bytes, far below the body's size. */
    r.len = (size_t)snprintf(r.data, sizeof(r.data),
                             "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\",\"logger\":",
                             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                             (int)(now.tv_nsec / 1000000), names[level]);
    log_put_string(&r, log_program, LOG_STRING_MAX);
    log_put(&r, ",\"msg\":", 7);
    log_put_string(&r, msg, LOG_STRING_MAX);
    va_start(ap, msg);
    while (whole && (key = va_arg(ap, const char *)) != NULL)
        whole = log_put_pair(&r, key, va_arg(ap, const char *));
    va_end(ap);
    if (whole)
        log_put(&r, "}\n", 2);
    else
        log_put(&r, LOG_TAIL_CUT, sizeof(LOG_TAIL_CUT) - 1);
    log_emit(r.data, r.len);
    errno = saved_errno;
}
