/* flag.c: see flag.h. */
#include "flag.h"

#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
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
