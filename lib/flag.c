/* flag.c: see flag.h. */
#include "flag.h"

#include "err.h"
#include "mem.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int flag_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return ZK_EINVAL;
    *out = v;
    return ZK_OK;
}

int flag_bool(const char *s, int *out)
{
    if (!s || strcmp(s, "true") == 0 || strcmp(s, "1") == 0) {
        *out = 1;
        return ZK_OK;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0) {
        *out = 0;
        return ZK_OK;
    }
    return ZK_EINVAL;
}

int flag_positive(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end != '\0' || !(v > 0))
        return ZK_EINVAL;
    *out = v;
    return ZK_OK;
}

/* The milliseconds in one of unit (the letters at s), and its length in *n; 0 for no unit. */
static long flag_unit_ms(const char *s, size_t *n)
{
    static const struct {
        const char *name;
        long ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        *n = strlen(units[i].name);
        if (strncmp(s, units[i].name, *n) == 0 && !isalpha((unsigned char)s[*n]))
            return units[i].ms;
    }
    return 0;
}

int flag_duration_ms(const char *s, long max_ms, long *out)
{
    long total = 0, v, unit;
    size_t n;

    if (flag_long(s, 1, max_ms / 1000, &v) == ZK_OK) {
        *out = v * 1000;
        return ZK_OK;
    }
    while (*s) {
        if (!isdigit((unsigned char)*s))
            return ZK_EINVAL;
        for (v = 0; isdigit((unsigned char)*s); s++) {
            if (v > (LONG_MAX - 9) / 10)
                return ZK_EINVAL;
            v = v * 10 + (*s - '0');
        }
        unit = flag_unit_ms(s, &n);
        if (!unit || v > (max_ms - total) / unit)
            return ZK_EINVAL;
        total += v * unit;
        s += n;
    }
    if (total <= 0)
        return ZK_EINVAL;
    *out = total;
    return ZK_OK;
}

/* Writes "NUNIT" for the largest unit that divides ms exactly, so that limits read as they were set. */
static void flag_format_ms(long ms, char *dst, size_t len)
{
    static const struct {
        const char *name;
        long ms;
    } units[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (ms % units[i].ms == 0) {
            snprintf(dst, len, "%ld%s", ms / units[i].ms, units[i].name);
            return;
        }
    snprintf(dst, len, "%ldms", ms);
}

/* The words after "expected" when a flag's table entry does not give its own. */
static void flag_expected(const struct flag *f, char *dst, size_t len)
{
    char max[32];

    if (f->expected) {
        snprintf(dst, len, "%s", f->expected);
        return;
    }
    switch (f->type) {
    case FLAG_BOOL: snprintf(dst, len, "true or false"); break;
    case FLAG_INT:
    case FLAG_LONG:
    case FLAG_SIZE:
        if (f->lo == LONG_MIN && f->hi == LONG_MAX)
            snprintf(dst, len, "a whole number");
        else
            snprintf(dst, len, "a whole number from %ld to %ld", f->lo, f->hi);
        break;
    case FLAG_SECONDS: snprintf(dst, len, "a positive number of seconds"); break;
    case FLAG_DURATION_MS:
        flag_format_ms(f->hi, max, sizeof(max));
        snprintf(dst, len, "a duration such as 30s, 1500ms or 2m, at most %s", max);
        break;
    case FLAG_DURATION_S: snprintf(dst, len, "a duration in whole seconds such as 30s, 5m or 1h"); break;
    default: snprintf(dst, len, "a value"); break;
    }
}

/* Stores value (NULL for a flag given without one) in f's destination. ZK_OK or ZK_EINVAL. */
static int flag_store(const struct flag *f, const char *value)
{
    long v, ms;

    switch (f->type) {
    case FLAG_STRING: *(const char **)f->dst = value; return ZK_OK;
    case FLAG_SWITCH: *(int *)f->dst = 1; return ZK_OK;
    case FLAG_BOOL: return flag_bool(value, f->dst);
    case FLAG_INT:
        if (flag_long(value, f->lo, f->hi, &v) != ZK_OK || v < INT_MIN || v > INT_MAX)
            return ZK_EINVAL;
        *(int *)f->dst = (int)v;
        return ZK_OK;
    case FLAG_LONG: return flag_long(value, f->lo, f->hi, f->dst);
    case FLAG_SIZE:
        if (f->lo < 0 || flag_long(value, f->lo, f->hi, &v) != ZK_OK)
            return ZK_EINVAL;
        *(size_t *)f->dst = (size_t)v;
        return ZK_OK;
    case FLAG_SECONDS: return flag_positive(value, f->dst);
    case FLAG_DURATION_MS: return flag_duration_ms(value, f->hi, f->dst);
    case FLAG_DURATION_S:
        if (flag_duration_ms(value, LONG_MAX, &ms) != ZK_OK || ms % 1000 != 0)
            return ZK_EINVAL;
        *(long *)f->dst = ms / 1000;
        return ZK_OK;
    case FLAG_FUNC: return f->parse(value, f->dst);
    }
    return ZK_EINVAL;
}

/* getopt_long's view of the table: option i returns FLAG_OPT_BASE + i. */
#define FLAG_OPT_BASE 256

int flag_parse(const struct flag *flags, size_t n, int argc, char **argv, struct zk_err *err)
{
    struct option *opts = mem_calloc(n + 1, sizeof(*opts));
    char expected[160];
    int opt, rc = ZK_OK;

    for (size_t i = 0; i < n; i++) {
        opts[i].name = flags[i].name;
        opts[i].has_arg = flags[i].type == FLAG_SWITCH ? no_argument
                          : flags[i].type == FLAG_BOOL ? optional_argument
                                                       : required_argument;
        opts[i].val = FLAG_OPT_BASE + (int)i;
    }
    opterr = 0; /* the messages are ours */
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        const struct flag *f = opt >= FLAG_OPT_BASE ? &flags[opt - FLAG_OPT_BASE] : NULL;

        if (f == NULL) {
            /* For a long option getopt leaves the offending word at argv[optind - 1]. */
            const char *word = argv[optind - 1];

            if (opt == ':')
                rc = zk_err_set(err, ZK_EINVAL, "%s needs a value", word);
            else if (strncmp(word, "--", 2) == 0 && strchr(word, '=') && optopt != 0)
                rc = zk_err_set(err, ZK_EINVAL, "%.*s takes no value", (int)(strchr(word, '=') - word), word);
            else
                rc = zk_err_set(err, ZK_EINVAL, "unknown flag %s", word);
            goto out;
        }
        if (flag_store(f, optarg) != ZK_OK) {
            flag_expected(f, expected, sizeof(expected));
            rc = zk_err_set(err, ZK_EINVAL, "invalid --%s %s: expected %s", f->name, optarg ? optarg : "", expected);
            goto out;
        }
    }
    if (optind < argc)
        rc = zk_err_set(err, ZK_EINVAL, "unexpected argument %s", argv[optind]);
out:
    free(opts);
    return rc;
}
