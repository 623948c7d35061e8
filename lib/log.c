/* log.c: see log.h. */
#include "log.h"

#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One record is cut at this size so a runaway value cannot flood the log. */
#define LOG_RECORD_MAX 8192

static const char *log_program = "zoekt-operator";
static enum log_level log_min = LOG_INFO;

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

/* Appends s as a JSON string literal. Errors are ignored: the record is then cut short, which is
 * better than losing it. */
static void log_quote(struct buf *b, const char *s)
{
    buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '\t': buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20)
                buf_printf(b, "\\u%04x", *p);
            else
                buf_putc(b, (char)*p);
        }
    }
    buf_putc(b, '"');
}

void log_write(enum log_level level, const char *msg, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    char ts[40];
    struct timespec now;
    struct tm tm;
    struct buf b;
    va_list ap;
    const char *key;
    size_t n;

    if (level < log_min)
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof(ts) - n, ".%03dZ", (int)(now.tv_nsec / 1000000));

    buf_init(&b, LOG_RECORD_MAX);
    buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"logger\":", ts, names[level]);
    log_quote(&b, log_program);
    buf_puts(&b, ",\"msg\":");
    log_quote(&b, msg);
    va_start(ap, msg);
    while ((key = va_arg(ap, const char *)) != NULL) {
        const char *value = va_arg(ap, const char *);

        buf_putc(&b, ',');
        log_quote(&b, key);
        buf_putc(&b, ':');
        if (value)
            log_quote(&b, value);
        else
            buf_puts(&b, "null");
    }
    va_end(ap);
    buf_puts(&b, "}\n");
    if (b.data) {
        ssize_t ignored = write(STDERR_FILENO, b.data, b.len);
        (void)ignored;
    }
    buf_free(&b);
}
