/* rfc3339.c: see rfc3339.h. */
#include "rfc3339.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int digits(const char *s, int n, int *out)
{
    int v = 0, i;

    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

int rfc3339_parse(const char *s, time_t *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
    const char *p;
    time_t t;

    if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
        !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p == '-' ? -1 : 1;
        if (strlen(p) < 6 || p[3] != ':' || !digits(p + 1, 2, &oh) || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return 0;
        p += 6;
    } else {
        return 0;
    }
    if (*p)
        return 0;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    t = timegm(&tm);
    if (t == (time_t)-1)
        return 0;
    *out = t - sign * (oh * 3600 + om * 60);
    return 1;
}

void rfc3339_format(time_t t, char *dst, size_t len)
{
    struct tm tm;
    int n;

    if (len == 0)
        return;
    /* strftime's %Y does not pad (year 985 came out as "985-..."), and RFC 3339 has four digits for the
     * year and no sign: a year it cannot write gives the empty string, as a buffer too small does. */
    if (!gmtime_r(&t, &tm) || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900) {
        dst[0] = '\0';
        return;
    }
    n = snprintf(dst, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (n < 0 || (size_t)n >= len)
        dst[0] = '\0';
}

