/* spec.c: see spec.h.
 *
 * Parsing is one pass over the spec with a small context that records field errors: a field error lets
 * parsing continue, so every problem is reported at once. Allocations go through lib/mem, which ends
 * the process when memory runs out, so parsing has no failure of its own besides field errors. */
#include "controller/corpus/spec.h"

#include "jb.h"
#include "json.h"
#include "mem.h"
#include "shard.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pctx {
    struct spec_errors *errs;
    struct spec_defaults images; /* every image set: the caller's defaults, else the built-in ones */
};

static void field_error(struct pctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void field_error(struct pctx *c, const char *field, const char *fmt, ...)
{
    struct spec_field_error *e;
    va_list ap;

    if (c->errs->count >= SPEC_MAX_FIELD_ERRORS) {
        c->errs->dropped++;
        return;
    }
    e = &c->errs->items[c->errs->count++];
    snprintf(e->field, sizeof(e->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

/* A heap copy of s, or NULL when s is NULL (an optional field left out). */
static char *dup_opt(const char *s)
{
    return s ? mem_strdup(s) : NULL;
}

/* ---- small validators ----------------------------------------------------------------------- */

static int has_space_or_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return 1;
    return 0;
}

/* RFC 1123 subdomain: what Secret, PVC and StorageClass names must be. */
static int dns_subdomain(const char *s)
{
    size_t n = strlen(s), i;

    if (n == 0 || n > 253)
        return 0;
    for (i = 0; i < n; i++) {
        char ch = s[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

        if (!alnum && ch != '-' && ch != '.')
            return 0;
        if ((i == 0 || i == n - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* A repository name: path segments of [A-Za-z0-9._-], none empty, "." or "..", not starting with
 * '-' (the name becomes a directory under /data/repos and an argument to git). */
/* The index of the first of repos[0..n) whose url (by_url) or name is value, or -1 (also for NULL). */
static int repo_index(const struct corpus_repo *repos, int n, const char *value, int by_url)
{
    for (int j = 0; value && j < n; j++) {
        const char *v = by_url ? repos[j].url : repos[j].name;

        if (v && strcmp(v, value) == 0)
            return j;
    }
    return -1;
}

int spec_repo_name_ok(const char *s)
{
    const char *seg = s;
    size_t n = strlen(s);

    if (n == 0 || n > SPEC_MAX_REPO_NAME)
        return 0;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t len = end ? (size_t)(end - seg) : strlen(seg);
        size_t i;

        if (len == 0 || seg[0] == '-' || (len == 1 && seg[0] == '.') ||
            (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return 0;
        for (i = 0; i < len; i++) {
            char ch = seg[i];

            if (!isalnum((unsigned char)ch) && ch != '.' && ch != '_' && ch != '-')
                return 0;
        }
        if (!end)
            return 1;
        seg = end + 1;
    }
}

/* A branch name under refs/heads/: git's check-ref-format rules that matter here, plus no comma
 * (branches are joined with commas for zoekt-git-index -branches). */
static int branch_ok(const char *s)
{
    size_t n = strlen(s), i;

    if (n == 0 || n > 200 || s[0] == '-' || s[0] == '/' || s[0] == '.' || s[n - 1] == '/' ||
        s[n - 1] == '.' || strstr(s, "..") || strstr(s, "//") || strstr(s, "@{") ||
        (n >= 5 && strcmp(s + n - 5, ".lock") == 0) || strcmp(s, "@") == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch <= ' ' || ch == 0x7f || strchr("~^:?*[\\,", ch))
            return 0;
    }
    return 1;
}

static int host_ok(const char *h, size_t n)
{
    size_t i;

    if (n == 0 || n > 253 || h[0] == '-' || h[0] == '.')
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '.')
            return 0;
    return 1;
}

static int port_ok(const char *p, size_t n)
{
    size_t i;
    long v = 0;

    if (n == 0 || n > 5)
        return 0;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)p[i]))
            return 0;
        v = v * 10 + (p[i] - '0');
    }
    return v >= 1 && v <= 65535;
}

const char *spec_url_problem(const char *url)
{
    const char *rest, *slash, *at, *colon;

    if (strlen(url) > SPEC_MAX_URL)
        return "longer than 2048 characters";
    if (has_space_or_ctl(url) || strpbrk(url, "'\"`\\"))
        return "contains whitespace, quotes or control characters";
    if (url[0] == '-')
        return "must not start with '-'";
    if (strncmp(url, "https://", 8) == 0 || strncmp(url, "ssh://", 6) == 0) {
        int https = url[0] == 'h';
        const char *hostport;

        rest = url + (https ? 8 : 6);
        slash = strchr(rest, '/');
        if (!slash || !slash[1])
            return "needs a repository path after the host";
        at = memchr(rest, '@', (size_t)(slash - rest));
        if (at && https)
            return "must not carry credentials (user@ in an https URL); use gitCredentialsSecretRef";
        if (at && memchr(rest, ':', (size_t)(at - rest)))
            return "must not carry a password; use gitCredentialsSecretRef";
        hostport = at ? at + 1 : rest;
        colon = memchr(hostport, ':', (size_t)(slash - hostport));
        if (!host_ok(hostport, (size_t)((colon ? colon : slash) - hostport)))
            return "has an invalid host";
        if (colon && !port_ok(colon + 1, (size_t)(slash - colon - 1)))
            return "has an invalid port";
        return NULL;
    }
    if (strncmp(url, "file://", 7) == 0)
        return url[7] == '/' && url[8] ? NULL : "file URLs need an absolute path (file:///path)";
    if (strstr(url, "://"))
        return "unsupported scheme: use https://, ssh://, user@host:path or file:///path";
    /* scp-like: [user@]host:path, where the host has no slash before the colon. */
    colon = strchr(url, ':');
    slash = strchr(url, '/');
    if (!colon || (slash && slash < colon) || !colon[1])
        return "unsupported form: use https://, ssh://, user@host:path or file:///path";
    at = memchr(url, '@', (size_t)(colon - url));
    rest = at ? at + 1 : url;
    if (!host_ok(rest, (size_t)(colon - rest)))
        return "has an invalid host";
    return NULL;
}

int spec_url_port(const char *url)
{
    const char *auth, *end, *at, *colon;
    int https = strncmp(url, "https://", 8) == 0;
    long port = 0;

    if (strncmp(url, "file://", 7) == 0)
        return 0;
    if (!https && strncmp(url, "ssh://", 6) != 0)
        return 22; /* user@host:path, where what follows the colon is a path, never a port */
    auth = url + (https ? 8 : 6);
    end = strchr(auth, '/');
    if (!end)
        end = auth + strlen(auth);
    at = memchr(auth, '@', (size_t)(end - auth));
    if (at)
        auth = at + 1;
    colon = memchr(auth, ':', (size_t)(end - auth));
    for (const char *d = colon ? colon + 1 : end; d < end && port <= 65535; d++)
        port = port * 10 + (*d - '0'); /* spec_url_problem has checked the digits */
    if (port >= 1 && port <= 65535)
        return (int)port;
    return https ? 443 : 22;
}

int spec_name_from_url(const char *url, char *dst, size_t len)
{
    char tmp[SPEC_MAX_URL + 1];
    const char *host = NULL, *path;
    size_t hostlen = 0, n;
    const char *p;

    if (len == 0)
        return 0;
    if (strncmp(url, "file://", 7) == 0) {
        path = url + 7;
    } else {
        const char *s = strstr(url, "://");
        const char *end;

        if (s) {
            s += 3;
            end = strchr(s, '/');
            if (!end)
                return 0;
            path = end;
        } else {
            end = strchr(url, ':');
            if (!end)
                return 0;
            s = url;
            path = end + 1;
        }
        p = memchr(s, '@', (size_t)(end - s));
        if (p)
            s = p + 1;
        host = s;
        p = memchr(s, ':', (size_t)(end - s));
        hostlen = (size_t)((p ? p : end) - s);
    }
    while (*path == '/')
        path++;
    n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    if (n >= 4 && strncmp(path + n - 4, ".git", 4) == 0)
        n -= 4;
    if (n == 0)
        return 0;
    if (host)
        snprintf(tmp, sizeof(tmp), "%.*s/%.*s", (int)hostlen, host, (int)n, path);
    else
        snprintf(tmp, sizeof(tmp), "%.*s", (int)n, path);
    if (strlen(tmp) >= len)
        return 0;
    /* Host names are case-insensitive; lower-casing them keeps two spellings from becoming two
     * repositories. Paths keep their case (servers differ on whether it matters). */
    for (n = 0; host && n < hostlen; n++)
        tmp[n] = (char)tolower((unsigned char)tmp[n]);
    memcpy(dst, tmp, strlen(tmp) + 1);
    return 1;
}

int spec_web_url(const char *url, char *dst, size_t len)
{
    char name[SPEC_MAX_URL + 1];
    const char *port = "";
    int portlen = 0, hostlen, n;

    if (strncmp(url, "file://", 7) == 0 || !spec_name_from_url(url, name, sizeof(name)))
        return 0;
    if (strncmp(url, "https://", 8) == 0) {
        const char *auth = url + 8, *end = auth + strcspn(auth, "/"), *colon;

        colon = memchr(auth, ':', (size_t)(end - auth));
        if (colon) {
            port = colon;
            portlen = (int)(end - colon);
        }
    }
    /* The name is host/path: the host lower-cased, the path without ".git" and outer slashes. */
    hostlen = (int)strcspn(name, "/");
    n = snprintf(dst, len, "https://%.*s%.*s%s", hostlen, name, portlen, port, name + hostlen);
    return n > 0 && (size_t)n < len;
}

const char *spec_code_host_infer(const char *web_url)
{
    static const struct {
        const char *host, *kind;
    } hosts[] = {
        {"github.com", "github"},
        {"gitlab.com", "gitlab"},
        {"bitbucket.org", "bitbucket-cloud"},
        {"dev.azure.com", "azuredevops"},
    };
    /* Google's Gerrit hosting: go.googlesource.com, chromium.googlesource.com and so on. */
    static const char gitiles[] = ".googlesource.com";
    const size_t glen = sizeof(gitiles) - 1;
    const char *host;
    size_t n;

    if (strncmp(web_url, "https://", 8) != 0)
        return NULL;
    host = web_url + 8;
    n = strcspn(host, ":/");
    for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
        if (strlen(hosts[i].host) == n && strncasecmp(host, hosts[i].host, n) == 0)
            return hosts[i].kind;
    if (n > glen && strncasecmp(host + n - glen, gitiles, glen) == 0)
        return "gitiles";
    return NULL;
}

/* ---- cron ----------------------------------------------------------------------------------- */

static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

struct cron_field {
    const char *name;
    int lo, hi;
    const char *const *names; /* names[i] means lo_names + i */
    int nnames, names_base;
};

/* Parses one value (a number or a name) of length n. Returns -1 when invalid. */
static int cron_value(const struct cron_field *f, const char *s, size_t n)
{
    int v = 0, i;
    size_t k;

    if (n == 0)
        return -1;
    if (isalpha((unsigned char)s[0])) {
        if (n != 3 || !f->names)
            return -1;
        for (i = 0; i < f->nnames; i++)
            if (strncasecmp(s, f->names[i], 3) == 0)
                return f->names_base + i;
        return -1;
    }
    if (n > 2)
        return -1;
    for (k = 0; k < n; k++) {
        if (!isdigit((unsigned char)s[k]))
            return -1;
        v = v * 10 + (s[k] - '0');
    }
    return v < f->lo || v > f->hi ? -1 : v;
}

static int cron_field_ok(const struct cron_field *f, const char *s, size_t n, char *why, size_t len)
{
    const char *item = s, *end = s + n;

    while (item < end) {
        const char *comma = memchr(item, ',', (size_t)(end - item));
        const char *iend = comma ? comma : end;
        const char *slash = memchr(item, '/', (size_t)(iend - item));
        const char *rend = slash ? slash : iend;
        const char *dash = memchr(item, '-', (size_t)(rend - item));

        if (iend == item) {
            snprintf(why, len, "%s field has an empty list item", f->name);
            return 0;
        }
        if (slash) {
            size_t k, sl = (size_t)(iend - slash - 1);
            int step = 0;

            for (k = 0; k < sl && k < 3; k++) {
                if (!isdigit((unsigned char)slash[1 + k]))
                    break;
                step = step * 10 + (slash[1 + k] - '0');
            }
            if (sl == 0 || k != sl || step < 1 || step > f->hi) {
                snprintf(why, len, "%s field has an invalid step", f->name);
                return 0;
            }
        }
        if (rend - item == 1 && (item[0] == '*' || item[0] == '?')) {
            /* any value */
        } else if (dash) {
            int a = cron_value(f, item, (size_t)(dash - item));
            int b = cron_value(f, dash + 1, (size_t)(rend - dash - 1));

            if (a < 0 || b < 0 || a > b) {
                snprintf(why, len, "%s field has an invalid range (allowed %d-%d)", f->name, f->lo, f->hi);
                return 0;
            }
        } else if (cron_value(f, item, (size_t)(rend - item)) < 0) {
            snprintf(why, len, "%s field value out of range (allowed %d-%d)", f->name, f->lo, f->hi);
            return 0;
        }
        item = comma ? comma + 1 : end;
        if (comma && item == end) {
            snprintf(why, len, "%s field ends with a comma", f->name);
            return 0;
        }
    }
    return 1;
}

int spec_cron_valid(const char *expr, char *why, size_t len)
{
    static const char *const macros[] = {"@yearly", "@annually", "@monthly", "@weekly",
                                         "@daily",  "@midnight", "@hourly"};
    const struct cron_field fields[5] = {
        {"minute", 0, 59, NULL, 0, 0},
        {"hour", 0, 23, NULL, 0, 0},
        {"day-of-month", 1, 31, NULL, 0, 0},
        {"month", 1, 12, months, 12, 1},
        {"day-of-week", 0, 7, days, 7, 0},
    };
    const char *p = expr;
    size_t i;
    int nf = 0;

    if (expr[0] == '@') {
        for (i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
            if (strcmp(expr, macros[i]) == 0)
                return 1;
        snprintf(why, len, "unknown macro; use @yearly, @monthly, @weekly, @daily or @hourly");
        return 0;
    }
    if (strncmp(expr, "TZ=", 3) == 0 || strncmp(expr, "CRON_TZ=", 8) == 0) {
        snprintf(why, len, "time zones go in spec.timeZone, not in the schedule");
        return 0;
    }
    while (*p) {
        const char *start;

        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (nf >= 5) {
            snprintf(why, len, "has more than 5 fields");
            return 0;
        }
        if (!cron_field_ok(&fields[nf], start, (size_t)(p - start), why, len))
            return 0;
        nf++;
    }
    if (nf != 5) {
        snprintf(why, len, "needs 5 fields (minute hour day-of-month month day-of-week), got %d", nf);
        return 0;
    }
    return 1;
}

int spec_duration_parse(const char *s, long *seconds)
{
    long total = 0;

    if (!s || !*s)
        return 0;
    while (*s) {
        long v = 0, unit;
        int digits = 0;

        while (isdigit((unsigned char)*s)) {
            if (v > LONG_MAX / 10 - 10)
                return 0;
            v = v * 10 + (*s++ - '0');
            digits++;
        }
        if (!digits)
            return 0;
        switch (*s++) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: return 0;
        }
        if (v > (LONG_MAX - total) / unit)
            return 0;
        total += v * unit;
    }
    if (total <= 0)
        return 0;
    *seconds = total;
    return 1;
}

/* ---- quantities ----------------------------------------------------------------------------- */

/* Kubernetes stores a resource quantity in a canonical form ("0.5" becomes "500m", "1024Mi" becomes
 * "1Gi", the number 2 becomes "2"). The controller renders the canonical form itself, so that the
 * object it applies compares equal to the one the server returns and a resync writes nothing. */
int spec_quantity_canonical(const char *s, char *dst, size_t len)
{
    static const struct {
        const char *suffix;
        int binary; /* power of two for binary suffixes, else 0 */
        int exp10;  /* power of ten for decimal suffixes */
    } suffixes[] = {
        {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0}, {"Ei", 60, 0},
        {"m", 0, -3}, {"", 0, 0}, {"k", 0, 3}, {"M", 0, 6}, {"G", 0, 9}, {"T", 0, 12}, {"P", 0, 15}, {"E", 0, 18},
    };
    static const char *const dec_names[] = {"m", "", "k", "M", "G", "T", "P", "E"};
    static const char *const bin_names[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    unsigned long long mant = 0, v, p10 = 1;
    int frac = 0, digits = 0, in_frac = 0, i, k;
    const char *p = s;
    size_t si;

    for (; isdigit((unsigned char)*p) || (*p == '.' && !in_frac); p++) {
        if (*p == '.') {
            in_frac = 1;
            continue;
        }
        if (++digits > 18)
            return 0;
        mant = mant * 10 + (unsigned long long)(*p - '0');
        frac += in_frac;
    }
    if (digits == 0)
        return 0;
    for (si = 0; si < sizeof(suffixes) / sizeof(suffixes[0]); si++)
        if (strcmp(p, suffixes[si].suffix) == 0)
            break;
    if (si == sizeof(suffixes) / sizeof(suffixes[0]))
        return 0;
    for (i = 0; i < frac; i++)
        p10 *= 10;
    if (suffixes[si].binary) {
        /* Bytes must come out whole; the largest binary suffix that divides them is used. */
        if (__builtin_mul_overflow(mant, 1ULL << suffixes[si].binary, &v) || v % p10 != 0)
            return 0;
        v /= p10;
        for (k = 6; k > 0 && (v == 0 || v % (1ULL << (10 * k)) != 0); k--)
            ;
        if (v == 0)
            k = 0;
        snprintf(dst, len, "%llu%s", v >> (10 * k), bin_names[k]);
        return 1;
    }
    /* Decimal: the value in thousandths must be whole; the largest decimal suffix that divides it. */
    k = suffixes[si].exp10 + 3 - frac;
    if (k < 0)
        return 0;
    v = mant;
    for (i = 0; i < k; i++)
        if (__builtin_mul_overflow(v, 10ULL, &v))
            return 0;
    if (v == 0) {
        snprintf(dst, len, "0");
        return 1;
    }
    for (k = 0; v % 1000 == 0 && k < 7; k++)
        v /= 1000;
    snprintf(dst, len, "%llu%s", v, dec_names[k]);
    return 1;
}

/* ---- typed field access with errors --------------------------------------------------------- */

/* Returns the member as a string, NULL when absent (or null), and reports a wrong type. */
static const char *opt_str(struct pctx *c, const cJSON *obj, const char *key, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsString(v) || !v->valuestring) {
        field_error(c, path, "must be a string");
        return NULL;
    }
    return v->valuestring;
}

/* Returns the member as an integer in [lo, hi], def when absent, and reports errors. */
static long opt_int(struct pctx *c, const cJSON *obj, const char *key, const char *path, long def, long lo,
                    long hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v || cJSON_IsNull(v))
        return def;
    if (!cJSON_IsNumber(v)) {
        field_error(c, path, "must be an integer");
        return def;
    }
    /* The range is checked on the double first: converting an out-of-range double is undefined. */
    if (v->valuedouble < (double)lo || v->valuedouble > (double)hi) {
        field_error(c, path, "must be between %ld and %ld", lo, hi);
        return def;
    }
    if (v->valuedouble != (double)(long)v->valuedouble) {
        field_error(c, path, "must be an integer");
        return def;
    }
    return (long)v->valuedouble;
}

/* Returns the member as a boolean, def when absent (or null), and reports a wrong type. */
static int opt_bool(struct pctx *c, const cJSON *obj, const char *key, const char *path, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v || cJSON_IsNull(v))
        return def;
    if (!cJSON_IsBool(v)) {
        field_error(c, path, "must be true or false");
        return def;
    }
    return cJSON_IsTrue(v);
}

static const cJSON *opt_obj(struct pctx *c, const cJSON *obj, const char *key, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        field_error(c, path, "must be an object");
        return NULL;
    }
    return v;
}

static const cJSON *opt_arr(struct pctx *c, const cJSON *obj, const char *key, const char *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsArray(v)) {
        field_error(c, path, "must be a list");
        return NULL;
    }
    return v;
}

static cJSON *dup_json(const cJSON *v)
{
    return v ? cJSON_Duplicate(v, 1) : NULL;
}

/* A {name: ...} reference to a Secret in the corpus's namespace. */
static char *secret_ref(struct pctx *c, const cJSON *obj, const char *key, const char *path)
{
    char sub[192];
    const cJSON *ref = opt_obj(c, obj, key, path);
    const char *name;

    if (!ref)
        return NULL;
    snprintf(sub, sizeof(sub), "%s.name", path);
    name = opt_str(c, ref, "name", sub);
    if (!name) {
        field_error(c, sub, "is required");
        return NULL;
    }
    if (!dns_subdomain(name)) {
        field_error(c, sub, "must be a valid Secret name (lower-case DNS subdomain)");
        return NULL;
    }
    return dup_opt(name);
}

/* Whether key can name a value of a ConfigMap or Secret: the API server's own rule for data keys. */
static int data_key_ok(const char *key)
{
    size_t n = strlen(key);

    return n > 0 && n <= 253 &&
           strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n &&
           strcmp(key, ".") != 0 && strcmp(key, "..") != 0;
}

/* gitCABundleRef: {kind: ConfigMap|Secret, name, key}. Organisations serve git behind a private CA
 * (GitHub Enterprise, GitLab); the bundle is what the indexer's git trusts in addition to the image's
 * own store. */
static void git_ca_ref(struct pctx *c, const cJSON *spec, struct corpus_spec *s)
{
    const cJSON *ref = opt_obj(c, spec, "gitCABundleRef", "spec.gitCABundleRef");
    const char *kind, *name, *key;

    if (!ref)
        return;
    kind = opt_str(c, ref, "kind", "spec.gitCABundleRef.kind");
    if (kind && strcmp(kind, "ConfigMap") != 0 && strcmp(kind, "Secret") != 0)
        field_error(c, "spec.gitCABundleRef.kind", "must be ConfigMap or Secret");
    s->git_ca.is_secret = kind && strcmp(kind, "Secret") == 0;
    name = opt_str(c, ref, "name", "spec.gitCABundleRef.name");
    if (!name)
        field_error(c, "spec.gitCABundleRef.name", "is required");
    else if (!dns_subdomain(name))
        field_error(c, "spec.gitCABundleRef.name", "must be a valid object name (lower-case DNS subdomain)");
    else
        s->git_ca.name = dup_opt(name);
    key = opt_str(c, ref, "key", "spec.gitCABundleRef.key");
    if (key && !data_key_ok(key))
        field_error(c, "spec.gitCABundleRef.key", "must consist of letters, digits, '-', '_' or '.'");
    else
        s->git_ca.key = dup_opt(key ? key : "ca.crt");
}

static char *image_field(struct pctx *c, const cJSON *obj, const char *path, const char *def)
{
    char sub[192];
    const char *v;

    snprintf(sub, sizeof(sub), "%s.image", path);
    v = opt_str(c, obj, "image", sub);
    if (v && (v[0] == '\0' || strlen(v) > 512 || has_space_or_ctl(v))) {
        field_error(c, sub, "must be a container image reference without whitespace");
        v = NULL;
    }
    return dup_opt(v ? v : def);
}

/* {requests: {name: quantity}, limits: {...}} with every quantity in canonical form, as a new object. */
static cJSON *resources_field(struct pctx *c, const cJSON *obj, const char *path)
{
    char sub[192], field[256], q[64], num[64];
    const cJSON *res, *group, *v;
    struct jb b = {0};
    cJSON *out;

    snprintf(sub, sizeof(sub), "%s.resources", path);
    res = opt_obj(c, obj, "resources", sub);
    if (!res)
        return NULL;
    out = jb_object(&b);
    cJSON_ArrayForEach(group, res) {
        cJSON *g;

        snprintf(field, sizeof(field), "%s.%s", sub, group->string);
        if ((strcmp(group->string, "requests") && strcmp(group->string, "limits")) || !cJSON_IsObject(group)) {
            field_error(c, field, "only requests and limits, each a map of quantities, are supported");
            continue;
        }
        g = jb_add_obj(&b, out, group->string);
        cJSON_ArrayForEach(v, group) {
            const char *text = cJSON_IsString(v) ? v->valuestring : NULL;

            snprintf(field, sizeof(field), "%s.%s.%s", sub, group->string, v->string);
            if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15) {
                snprintf(num, sizeof(num), "%.3f", v->valuedouble);
                text = num;
            }
            if (!text || !spec_quantity_canonical(text, q, sizeof(q))) {
                field_error(c, field, "must be a quantity such as 500m, 2, 512Mi or 4Gi");
                continue;
            }
            jb_add_str(&b, g, v->string, q);
        }
    }
    return jb_finish(&b, out);
}

/* ---- sections ------------------------------------------------------------------------------- */

/* spec.repositories[i].codeHost and webURL: the address and kind of code host zoekt-git-index makes each
 * file's address from. url is the repository's clone URL, or NULL when it is not valid (and reported). A
 * repository gets an address when its kind is given or inferred from the host, and none otherwise; a
 * webURL whose kind is neither is an error rather than ignored, since whoever wrote it wants links. */
static void parse_code_host(struct pctx *c, const cJSON *item, int i, const char *url, struct corpus_repo *r)
{
    /* The kinds zoekt-git-index knows (zoekt.web-url-type), as the CRD's enum lists them. */
    static const char *const kinds[] = {"github", "gitlab", "gitea", "gitiles", "cgit", "gitweb", "bitbucket-server",
                                        "bitbucket-cloud", "azuredevops", "source.bazel.build"};
    /* A derived address is at most "https://" longer than the URL it comes from. */
    char host_path[96], web_path[96], web[SPEC_MAX_URL + 16];
    const char *given, *kind = NULL, *web_given, *why = NULL;
    size_t k, n;

    snprintf(host_path, sizeof(host_path), "spec.repositories[%d].codeHost", i);
    snprintf(web_path, sizeof(web_path), "spec.repositories[%d].webURL", i);
    given = opt_str(c, item, "codeHost", host_path);
    for (k = 0; given && !kind && k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (strcmp(given, kinds[k]) == 0)
            kind = kinds[k];
    if (given && !kind) {
        field_error(c, host_path, "must be one of github, gitlab, gitea, gitiles, cgit, gitweb, bitbucket-server, "
                                  "bitbucket-cloud, azuredevops or source.bazel.build");
        return;
    }
    web_given = opt_str(c, item, "webURL", web_path);
    if (web_given) {
        /* The address goes to git config and into Zoekt's templates, which append to it: a fragment
         * would end every link early. */
        if (strncmp(web_given, "https://", 8) != 0)
            why = "must be an https:// address";
        else if (!(why = spec_url_problem(web_given)) && strchr(web_given, '#'))
            why = "must not have a #fragment";
        if (why) {
            field_error(c, web_path, "%s", why);
            return;
        }
        snprintf(web, sizeof(web), "%s", web_given);
    } else if (!url || !spec_web_url(url, web, sizeof(web))) {
        if (kind && url)
            field_error(c, host_path, "needs webURL: the url gives no address on a code host (a file:// url never does)");
        return;
    }
    for (n = strlen(web); n > 8 && web[n - 1] == '/'; n--)
        web[n - 1] = '\0';
    if (!kind)
        kind = spec_code_host_infer(web);
    if (!kind) {
        if (web_given)
            field_error(c, web_path, "needs codeHost: the kind of code host is inferred for github.com, gitlab.com, "
                                     "bitbucket.org, dev.azure.com and *.googlesource.com only");
        return;
    }
    r->code_host = kind;
    r->web_url = mem_strdup(web);
}

static void parse_repos(struct pctx *c, const cJSON *spec, struct corpus_spec *out)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "repositories");
    const cJSON *item;
    int n, i = 0;

    /* With spec.sources, the explicit list may be absent or empty: the corpus's repositories are then
     * the discovered ones. */
    const cJSON *sources = cJSON_GetObjectItemCaseSensitive(spec, "sources");
    int min = cJSON_IsArray(sources) && cJSON_GetArraySize(sources) > 0 ? 0 : 1;

    if (!list && min == 0)
        return;
    if (!cJSON_IsArray(list)) {
        field_error(c, "spec.repositories", list ? "must be a list" : "is required (or give spec.sources)");
        return;
    }
    n = cJSON_GetArraySize(list);
    if (n < min || n > SPEC_MAX_REPOS) {
        field_error(c, "spec.repositories", "must hold between 1 and %d repositories, has %d", SPEC_MAX_REPOS, n);
        return;
    }
    if (n == 0)
        return;
    out->repos = mem_calloc((size_t)n, sizeof(*out->repos));
    out->nrepos = n;
    cJSON_ArrayForEach(item, list) {
        struct corpus_repo *r = &out->repos[i];
        char path[160], derived[SPEC_MAX_REPO_NAME + 1];
        const char *url, *name, *why;
        const cJSON *br;
        int j;

        snprintf(path, sizeof(path), "spec.repositories[%d]", i);
        if (!cJSON_IsObject(item)) {
            field_error(c, path, "must be an object with a url");
            i++;
            continue;
        }
        snprintf(path, sizeof(path), "spec.repositories[%d].url", i);
        url = opt_str(c, item, "url", path);
        if (!url) {
            if (!cJSON_GetObjectItemCaseSensitive(item, "url"))
                field_error(c, path, "is required");
        } else if ((why = spec_url_problem(url)) != NULL) {
            field_error(c, path, "%s", why);
            url = NULL;
        }
        r->url = dup_opt(url);

        snprintf(path, sizeof(path), "spec.repositories[%d].name", i);
        name = opt_str(c, item, "name", path);
        if (name && !spec_repo_name_ok(name)) {
            field_error(c, path, "must be path segments of letters, digits, '.', '_' and '-' (at most %d characters)",
                        SPEC_MAX_REPO_NAME);
            name = NULL;
        } else if (!name && url) {
            if (spec_name_from_url(url, derived, sizeof(derived)) && spec_repo_name_ok(derived))
                name = derived;
            else
                field_error(c, path, "cannot be derived from the URL; set it explicitly");
        }
        r->name = dup_opt(name);
        parse_code_host(c, item, i, url, r);

        /* The CRD's CEL rules refuse both duplicates at admission; a CRD installed without them (or a
         * corpus stored before them) still reaches the controller. */
        if ((j = repo_index(out->repos, i, url, 1)) >= 0) {
            snprintf(path, sizeof(path), "spec.repositories[%d].url", i);
            field_error(c, path, "duplicate repository url (also spec.repositories[%d]); list all its branches on one entry", j);
        }
        if ((j = repo_index(out->repos, i, name, 0)) >= 0) {
            snprintf(path, sizeof(path), "spec.repositories[%d].name", i);
            field_error(c, path, "duplicate repository name \"%s\" (also spec.repositories[%d])", name, j);
        }

        snprintf(path, sizeof(path), "spec.repositories[%d].branches", i);
        br = opt_arr(c, item, "branches", path);
        if (br && cJSON_GetArraySize(br) > SPEC_MAX_BRANCHES) {
            field_error(c, path, "must hold at most %d branches", SPEC_MAX_BRANCHES);
            br = NULL;
        }
        r->branches = mem_calloc((size_t)(br ? cJSON_GetArraySize(br) : 0) + 1, sizeof(char *));
        if (br) {
            const cJSON *b;
            int k = 0, idx = 0;

            cJSON_ArrayForEach(b, br) {
                char bpath[192];

                snprintf(bpath, sizeof(bpath), "spec.repositories[%d].branches[%d]", i, idx++);
                if (!cJSON_IsString(b) || !branch_ok(b->valuestring)) {
                    field_error(c, bpath, "must be a branch name (no spaces, '..', ',', '~', '^', ':', '?', '*', '[')");
                    continue;
                }
                r->branches[k] = dup_opt(b->valuestring);
                if (r->branches[k])
                    k++;
            }
        }
        i++;
    }
}

static void parse_storage(struct pctx *c, const cJSON *spec, struct corpus_spec *out)
{
    const cJSON *st = opt_obj(c, spec, "storage", "spec.storage");
    const char *cls = opt_str(c, st, "storageClassName", "spec.storage.storageClassName");
    const char *size = opt_str(c, st, "size", "spec.storage.size");
    const char *claim = opt_str(c, st, "existingClaim", "spec.storage.existingClaim");
    const char *pol = opt_str(c, st, "onDelete", "spec.storage.onDelete");
    char canonical_size[64];

    if (cls && !dns_subdomain(cls)) {
        field_error(c, "spec.storage.storageClassName", "must be a lower-case DNS subdomain");
        cls = NULL;
    }
    if (size && !spec_quantity_canonical(size, canonical_size, sizeof(canonical_size))) {
        field_error(c, "spec.storage.size", "must be a quantity such as 100Gi or 1Ti");
        size = NULL;
    } else if (size) {
        size = canonical_size;
    }
    if (claim && !dns_subdomain(claim)) {
        field_error(c, "spec.storage.existingClaim", "must be a PersistentVolumeClaim name");
        claim = NULL;
    }
    out->storage.on_delete = PVC_RETAIN;
    if (pol && strcmp(pol, "Delete") == 0)
        out->storage.on_delete = PVC_DELETE;
    else if (pol && strcmp(pol, "Retain") != 0)
        field_error(c, "spec.storage.onDelete", "must be Retain or Delete");
    out->storage.storage_class = dup_opt(cls ? cls : SPEC_DEFAULT_STORAGE_CLASS);
    out->storage.size = dup_opt(size ? size : SPEC_DEFAULT_SIZE);
    out->storage.existing_claim = dup_opt(claim);
}

static void parse_indexer(struct pctx *c, const cJSON *spec, struct corpus_spec *out)
{
    const cJSON *ix = opt_obj(c, spec, "indexer", "spec.indexer");
    const cJSON *flags = opt_arr(c, ix, "extraFlags", "spec.indexer.extraFlags");
    const cJSON *f;
    int n = flags ? cJSON_GetArraySize(flags) : 0, k = 0, idx = 0;

    out->indexer.image = image_field(c, ix, "spec.indexer", c->images.zoekt);
    out->indexer.resources = resources_field(c, ix, "spec.indexer");
    out->indexer.deadline_seconds = opt_int(c, ix, "activeDeadlineSeconds", "spec.indexer.activeDeadlineSeconds",
                                            SPEC_DEFAULT_DEADLINE_SECONDS, 60, 7 * 86400);
    out->indexer.fetch_stall_seconds = opt_int(c, ix, "fetchStallSeconds", "spec.indexer.fetchStallSeconds",
                                               SPEC_DEFAULT_FETCH_STALL_SECONDS, 5, 3600);
    out->indexer.symbols = opt_bool(c, ix, "symbols", "spec.indexer.symbols", 1);
    if (n > SPEC_MAX_EXTRA_FLAGS) {
        field_error(c, "spec.indexer.extraFlags", "must hold at most %d flags", SPEC_MAX_EXTRA_FLAGS);
        n = 0;
        flags = NULL;
    }
    out->indexer.extra_flags = mem_calloc((size_t)n + 1, sizeof(char *));
    cJSON_ArrayForEach(f, flags) {
        char path[160];
        const char *s = cJSON_IsString(f) ? f->valuestring : NULL;

        snprintf(path, sizeof(path), "spec.indexer.extraFlags[%d]", idx++);
        /* The indexer owns -index (it writes to a temporary directory and renames) and -branches
         * (per repository), so those cannot be overridden. */
        if (!s || s[0] != '-' || strlen(s) > 256 || has_space_or_ctl(s)) {
            field_error(c, path, "must be one zoekt-git-index flag starting with '-', without whitespace");
            continue;
        }
        if (strncmp(s, "-index", 6) == 0 || strncmp(s, "--index", 7) == 0 || strncmp(s, "-branches", 9) == 0 ||
            strncmp(s, "--branches", 10) == 0) {
            field_error(c, path, "-index and -branches are set by the indexer and cannot be overridden");
            continue;
        }
        out->indexer.extra_flags[k] = dup_opt(s);
        if (out->indexer.extra_flags[k])
            k++;
    }
}

static void parse_webserver(struct pctx *c, const cJSON *spec, struct corpus_spec *out)
{
    const cJSON *ws = opt_obj(c, spec, "webserver", "spec.webserver");
    const char *arch = opt_str(c, ws, "architecture", "spec.webserver.architecture");
    const cJSON *sel = opt_obj(c, ws, "nodeSelector", "spec.webserver.nodeSelector");
    const cJSON *tol = opt_arr(c, ws, "tolerations", "spec.webserver.tolerations");
    const cJSON *v;

    out->webserver.image = image_field(c, ws, "spec.webserver", c->images.zoekt);
    out->webserver.replicas = (int)opt_int(c, ws, "replicas", "spec.webserver.replicas", 1, 0, 20);
    out->webserver.shards = (int)opt_int(c, ws, "shards", "spec.webserver.shards", 1, 1, SHARD_MAX);
    out->webserver.resources = resources_field(c, ws, "spec.webserver");
    if (arch && strcmp(arch, "arm64") && strcmp(arch, "amd64")) {
        field_error(c, "spec.webserver.architecture", "must be arm64 or amd64");
        arch = NULL;
    }
    out->webserver.architecture = dup_opt(arch ? arch : SPEC_DEFAULT_ARCHITECTURE);
    cJSON_ArrayForEach(v, sel) {
        if (!cJSON_IsString(v)) {
            field_error(c, "spec.webserver.nodeSelector", "values must be strings");
            sel = NULL;
            break;
        }
        if (strcmp(v->string, "kubernetes.io/arch") == 0) {
            field_error(c, "spec.webserver.nodeSelector", "kubernetes.io/arch is set from spec.webserver.architecture");
            sel = NULL;
            break;
        }
    }
    cJSON_ArrayForEach(v, tol) {
        if (!cJSON_IsObject(v)) {
            field_error(c, "spec.webserver.tolerations", "items must be objects");
            tol = NULL;
            break;
        }
    }
    out->webserver.node_selector = dup_json(sel);
    out->webserver.tolerations = dup_json(tol);
}

static void parse_gateway_connector(struct pctx *c, const cJSON *spec, struct corpus_spec *out)
{
    const cJSON *gw = opt_obj(c, spec, "gateway", "spec.gateway");
    const cJSON *cn = opt_obj(c, spec, "connector", "spec.connector");
    const char *prefix = opt_str(c, cn, "mirrorPrefix", "spec.connector.mirrorPrefix");

    out->gateway.image = image_field(c, gw, "spec.gateway", c->images.gateway);
    /* 6070 and 8081 are taken by the webserver and the connector on the pod's loopback. */
    out->gateway.port = (int)opt_int(c, gw, "port", "spec.gateway.port", SPEC_DEFAULT_PORT, 1024, 65535);
    if (out->gateway.port == 6070 || out->gateway.port == 8081) {
        field_error(c, "spec.gateway.port", "6070 and 8081 are used inside the pod; choose another port");
        out->gateway.port = SPEC_DEFAULT_PORT;
    }
    out->gateway.tokens_secret = secret_ref(c, gw, "tokenSecretRef", "spec.gateway.tokenSecretRef");

    out->connector.image = image_field(c, cn, "spec.connector", c->images.connector);
    out->connector.max_files = (int)opt_int(c, cn, "maxFiles", "spec.connector.maxFiles", 30, 1, 200);
    out->connector.context_lines = (int)opt_int(c, cn, "contextLines", "spec.connector.contextLines", 2, 0, 10);
    out->connector.search_timeout_seconds =
        (int)opt_int(c, cn, "searchTimeoutSeconds", "spec.connector.searchTimeoutSeconds", 30, 1, 300);
    out->connector.list_timeout_seconds =
        (int)opt_int(c, cn, "listTimeoutSeconds", "spec.connector.listTimeoutSeconds", 10, 1, 300);
    if (prefix && (strlen(prefix) > 253 || has_space_or_ctl(prefix))) {
        field_error(c, "spec.connector.mirrorPrefix", "must not contain whitespace (at most 253 characters)");
        prefix = NULL;
    }
    out->connector.mirror_prefix = dup_opt(prefix && *prefix ? prefix : NULL);
}

const char *spec_source_host_name(enum spec_source_host host)
{
    static const char *const names[] = {[SPEC_HOST_GITHUB] = "github", [SPEC_HOST_GITLAB] = "gitlab",
                                        [SPEC_HOST_GITEA] = "gitea"};

    return names[host];
}

const char *spec_source_owner_kind(const struct corpus_source *src)
{
    return src->user ? "user" : src->host == SPEC_HOST_GITLAB ? "group" : "org";
}

/* A duration field at key of obj: "0" when zero_ok (a feature turned off), else a duration of lo to hi
 * seconds; def when absent or wrong, with the error saying it must be expect. */
static long duration_field(struct pctx *c, const cJSON *obj, const char *key, const char *path, long def, long lo,
                           long hi, int zero_ok, const char *expect)
{
    const char *v = opt_str(c, obj, key, path);
    long secs;

    if (!v)
        return def;
    if (zero_ok && strcmp(v, "0") == 0)
        return 0;
    if (!spec_duration_parse(v, &secs) || secs < lo || secs > hi) {
        field_error(c, path, "must be %s", expect);
        return def;
    }
    return secs;
}

/* spec.poll.interval: "0" turns polling off; otherwise a duration of at least SPEC_MIN_POLL_SECONDS. */
static void parse_poll(struct pctx *c, const cJSON *spec, struct corpus_spec *s)
{
    s->poll_interval_seconds =
        duration_field(c, opt_obj(c, spec, "poll", "spec.poll"), "interval", "spec.poll.interval",
                       SPEC_DEFAULT_POLL_SECONDS, SPEC_MIN_POLL_SECONDS, 86400, 1,
                       "0 (no polling) or a duration from 30s to 1d such as 5m");
}

/* A list of at most max strings of at most 255 bytes at key, NULL-terminated, or NULL when absent or
 * empty. */
static char **string_list(struct pctx *c, const cJSON *obj, const char *key, const char *path, int max)
{
    const cJSON *list = opt_arr(c, obj, key, path), *item;
    char **out;
    int n, i = 0;

    n = list ? cJSON_GetArraySize(list) : 0;
    if (n == 0)
        return NULL;
    if (n > max) {
        field_error(c, path, "must hold at most %d items, has %d", max, n);
        return NULL;
    }
    out = mem_calloc((size_t)n + 1, sizeof(*out));
    cJSON_ArrayForEach(item, list) {
        if (!cJSON_IsString(item) || !*item->valuestring || strlen(item->valuestring) > 255 ||
            has_space_or_ctl(item->valuestring)) {
            char sub[192];

            snprintf(sub, sizeof(sub), "%s[%d]", path, i);
            field_error(c, sub, "must be a glob of 1 to 255 characters without spaces");
            continue;
        }
        out[i++] = mem_strdup(item->valuestring);
    }
    return out;
}

/* The API base URL of a source: what users write is the host's own address (https://github.example.com,
 * https://gitlab.example.com/, https://gitea.example.com), and each host serves its API under a path of
 * its own; GitHub.com's is a host of its own. An address that already ends in the API's path is kept. */
static char *source_api_url(enum spec_source_host host, const char *url)
{
    static const char *const paths[] = {"/api/v3", "/api/v4", "/api/v1"};
    size_t n, plen = strlen(paths[host]);

    if (!url)
        return mem_strdup(host == SPEC_HOST_GITHUB ? "https://api.github.com" : "https://gitlab.com/api/v4");
    n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (host == SPEC_HOST_GITHUB && (strncasecmp(url, "https://github.com", n) == 0 && n == 18))
        return mem_strdup("https://api.github.com");
    if (n >= plen && strncmp(url + n - plen, paths[host], plen) == 0)
        return mem_printf("%.*s", (int)n, url);
    return mem_printf("%.*s%s", (int)n, url, paths[host]);
}

static void parse_source(struct pctx *c, const cJSON *item, int i, struct corpus_source *src)
{
    static const char *const hosts[] = {"github", "gitlab", "gitea", "forgejo"};
    static const char *const owner_keys[][2] = {{"org", "user"}, {"group", "user"}, {"org", "user"}};
    char path[160], sub[192];
    const char *host, *url, *owners[2];
    const cJSON *ref, *vis, *v;
    int h;

    snprintf(path, sizeof(path), "spec.sources[%d]", i);
    if (!cJSON_IsObject(item)) {
        field_error(c, path, "must be an object with a host");
        return;
    }
    snprintf(sub, sizeof(sub), "%s.host", path);
    host = opt_str(c, item, "host", sub);
    for (h = 0; host && h < 4 && strcmp(host, hosts[h]) != 0; h++)
        ;
    if (!host || h == 4) {
        field_error(c, sub, "must be github, gitlab, gitea or forgejo");
        return;
    }
    src->host = h == 3 ? SPEC_HOST_GITEA : (enum spec_source_host)h;
    snprintf(sub, sizeof(sub), "%s.url", path);
    url = opt_str(c, item, "url", sub);
    /* The host's address, not a repository's: an https origin with an optional path, without
     * credentials (the token is sent as a header) or characters that a URL would have to escape. */
    if (url && (strncmp(url, "https://", 8) != 0 || strlen(url) > 1024 || has_space_or_ctl(url) ||
                strpbrk(url, "@\"'\\?#") || url[8] == '/' || url[8] == '\0'))
        field_error(c, sub, "must be the host's https:// address (the token goes to it)");
    else if (!url && src->host == SPEC_HOST_GITEA)
        field_error(c, sub, "is required for a Gitea or Forgejo host");
    else
        src->api_url = source_api_url(src->host, url);
    src->public_host = src->api_url && (strcmp(src->api_url, "https://api.github.com") == 0 ||
                                        strcmp(src->api_url, "https://gitlab.com/api/v4") == 0);
    for (int k = 0; k < 2; k++) {
        snprintf(sub, sizeof(sub), "%s.%s", path, owner_keys[src->host][k]);
        owners[k] = opt_str(c, item, owner_keys[src->host][k], sub);
    }
    if (!owners[0] == !owners[1]) {
        field_error(c, path, "needs exactly one of %s and user", owner_keys[src->host][0]);
    } else {
        const char *o = owners[0] ? owners[0] : owners[1];

        /* GitLab groups nest ("acme/platform"); organisations and users are one segment. */
        if (!spec_repo_name_ok(o) || strlen(o) > 255 || (strchr(o, '/') && !(owners[0] && src->host == SPEC_HOST_GITLAB)))
            field_error(c, path, "the %s \"%.80s\" is not a valid name", owners[0] ? owner_keys[src->host][0] : "user", o);
        else
            src->owner = mem_strdup(o);
        src->user = owners[1] != NULL;
    }
    snprintf(sub, sizeof(sub), "%s.tokenSecretRef", path);
    src->token_secret = secret_ref(c, item, "tokenSecretRef", sub);
    ref = cJSON_GetObjectItemCaseSensitive(item, "tokenSecretRef");
    snprintf(sub, sizeof(sub), "%s.tokenSecretRef.key", path);
    v = cJSON_IsObject(ref) ? cJSON_GetObjectItemCaseSensitive(ref, "key") : NULL;
    if (v && (!cJSON_IsString(v) || !data_key_ok(v->valuestring)))
        field_error(c, sub, "must consist of letters, digits, '-', '_' or '.'");
    if (src->token_secret)
        src->token_key = mem_strdup(v && cJSON_IsString(v) ? v->valuestring : "token");
    snprintf(sub, sizeof(sub), "%s.include", path);
    src->include = string_list(c, item, "include", sub, SPEC_MAX_SOURCE_GLOBS);
    snprintf(sub, sizeof(sub), "%s.exclude", path);
    src->exclude = string_list(c, item, "exclude", sub, SPEC_MAX_SOURCE_GLOBS);
    snprintf(sub, sizeof(sub), "%s.archived", path);
    src->archived = opt_bool(c, item, "archived", sub, 0);
    snprintf(sub, sizeof(sub), "%s.forks", path);
    src->forks = opt_bool(c, item, "forks", sub, 0);
    snprintf(sub, sizeof(sub), "%s.visibility", path);
    vis = opt_arr(c, item, "visibility", sub);
    cJSON_ArrayForEach(v, vis) {
        const char *s = cJSON_IsString(v) ? v->valuestring : "";

        if (strcmp(s, "public") == 0)
            src->visibility |= SPEC_VISIBLE_PUBLIC;
        else if (strcmp(s, "private") == 0)
            src->visibility |= SPEC_VISIBLE_PRIVATE;
        else if (strcmp(s, "internal") == 0)
            src->visibility |= SPEC_VISIBLE_INTERNAL;
        else
            field_error(c, sub, "may hold only public, private and internal");
    }
}

/* spec.sources and spec.discovery. */
static void parse_sources(struct pctx *c, const cJSON *spec, struct corpus_spec *s)
{
    const cJSON *list = opt_arr(c, spec, "sources", "spec.sources"), *item;
    const cJSON *d = opt_obj(c, spec, "discovery", "spec.discovery");
    int n = list ? cJSON_GetArraySize(list) : 0, i = 0;

    s->discovery_interval_seconds = duration_field(c, d, "interval", "spec.discovery.interval",
                                                   SPEC_DEFAULT_DISCOVERY_SECONDS, SPEC_MIN_DISCOVERY_SECONDS, 86400, 0,
                                                   "a duration from 1m to 1d such as 10m");
    s->discovery_grace_seconds = duration_field(c, d, "grace", "spec.discovery.grace", SPEC_DEFAULT_GRACE_SECONDS, 1,
                                                30L * 86400, 1, "\"0\" or a duration up to 30d such as 24h");
    if (n == 0)
        return;
    if (n > SPEC_MAX_SOURCES) {
        field_error(c, "spec.sources", "must hold at most %d sources, has %d", SPEC_MAX_SOURCES, n);
        return;
    }
    s->sources = mem_calloc((size_t)n, sizeof(*s->sources));
    s->nsources = n;
    cJSON_ArrayForEach(item, list) {
        parse_source(c, item, i, &s->sources[i]);
        i++;
    }
}

/* spec.networkPolicy: whether the operator restricts the corpus's pods, and the peers (NetworkPolicy
 * peers, checked here for shape only; the API server checks the selectors when the policy is applied,
 * and a refusal shows in the status like any child's) that may reach the gateway. */
/* A list of NetworkPolicy peers at key of spec.networkPolicy, checked for shape only: the API server
 * checks the selectors when the policy is applied, and a refusal shows in the status like any
 * child's. An owned copy, or NULL when absent, empty or wrong. */
static cJSON *policy_peers(struct pctx *c, const cJSON *np, const char *key)
{
    static const char *const peer_keys[] = {"namespaceSelector", "podSelector", "ipBlock"};
    const size_t nkeys = sizeof(peer_keys) / sizeof(peer_keys[0]);
    const cJSON *list, *peer, *member;
    char path[80];
    int i = 0;

    snprintf(path, sizeof(path), "spec.networkPolicy.%s", key);
    list = opt_arr(c, np, key, path);
    if (cJSON_GetArraySize(list) > SPEC_MAX_POLICY_PEERS) {
        field_error(c, path, "must hold at most %d peers", SPEC_MAX_POLICY_PEERS);
        return NULL;
    }
    cJSON_ArrayForEach(peer, list) {
        snprintf(path, sizeof(path), "spec.networkPolicy.%s[%d]", key, i++);
        if (!cJSON_IsObject(peer) || !peer->child) {
            field_error(c, path, "must be an object with namespaceSelector, podSelector or ipBlock");
            return NULL;
        }
        cJSON_ArrayForEach(member, peer) {
            size_t k = 0;

            while (k < nkeys && strcmp(member->string, peer_keys[k]) != 0)
                k++;
            if (k == nkeys || !cJSON_IsObject(member)) {
                field_error(c, path, "%s: only namespaceSelector, podSelector and ipBlock objects are allowed",
                            member->string);
                return NULL;
            }
        }
    }
    return list && list->child ? cJSON_Duplicate(list, 1) : NULL;
}

/* spec.networkPolicy: whether the operator restricts the corpus's pods, and who may reach the gateway
 * and the connector's metrics. */
static void parse_network_policy(struct pctx *c, const cJSON *spec, struct corpus_spec *s)
{
    const cJSON *np = opt_obj(c, spec, "networkPolicy", "spec.networkPolicy");

    s->network_policy.enabled = opt_bool(c, np, "enabled", "spec.networkPolicy.enabled", 1);
    s->network_policy.from = policy_peers(c, np, "from");
    s->network_policy.metrics_from = policy_peers(c, np, "metricsFrom");
}

int spec_parse(const cJSON *corpus, const struct spec_defaults *defaults, struct corpus_spec **out,
               struct spec_errors *errs)
{
    struct pctx c = {.errs = errs,
                     .images = {.zoekt = SPEC_DEFAULT_ZOEKT_IMAGE,
                                .connector = SPEC_DEFAULT_CONNECTOR_IMAGE,
                                .gateway = SPEC_DEFAULT_NGINX_IMAGE}};
    struct corpus_spec *s;
    const cJSON *spec, *fr;
    const char *v;
    char why[200];

    memset(errs, 0, sizeof(*errs));
    *out = NULL;
    if (defaults && defaults->zoekt)
        c.images.zoekt = defaults->zoekt;
    if (defaults && defaults->connector)
        c.images.connector = defaults->connector;
    if (defaults && defaults->gateway)
        c.images.gateway = defaults->gateway;
    s = mem_calloc(1, sizeof(*s));
    if (defaults) {
        s->pods.image_pull_secrets = defaults->image_pull_secrets;
        s->pods.priority_class = defaults->priority_class;
        s->pods.labels = defaults->pod_labels;
        s->operator_namespace = defaults->operator_namespace;
    }
    spec = cJSON_GetObjectItemCaseSensitive(corpus, "spec");
    if (!cJSON_IsObject(spec)) {
        field_error(&c, "spec", "is required and must be an object");
        spec = NULL;
    }
    if (spec) {
        parse_repos(&c, spec, s);
        s->credentials_secret = secret_ref(&c, spec, "gitCredentialsSecretRef", "spec.gitCredentialsSecretRef");
        git_ca_ref(&c, spec, s);

        v = opt_str(&c, spec, "schedule", "spec.schedule");
        if (v && !spec_cron_valid(v, why, sizeof(why))) {
            field_error(&c, "spec.schedule", "invalid cron schedule \"%.60s\": %s", v, why);
            v = NULL;
        }
        s->schedule = dup_opt(v ? v : SPEC_DEFAULT_SCHEDULE);

        v = opt_str(&c, spec, "timeZone", "spec.timeZone");
        if (v && !*v)
            v = NULL;
        if (v) {
            size_t i, n = strlen(v);
            int ok = n <= 64 && isalpha((unsigned char)v[0]) && !strstr(v, "..");

            for (i = 0; ok && i < n; i++)
                ok = isalnum((unsigned char)v[i]) || strchr("/_+-", v[i]);
            if (!ok) {
                field_error(&c, "spec.timeZone", "must be an IANA time zone name such as Europe/Berlin or UTC");
                v = NULL;
            }
        }
        s->time_zone = dup_opt(v);

        s->suspend = opt_bool(&c, spec, "suspend", "spec.suspend", 0);

        parse_storage(&c, spec, s);
        parse_indexer(&c, spec, s);
        parse_webserver(&c, spec, s);
        parse_gateway_connector(&c, spec, s);

        fr = opt_obj(&c, spec, "freshness", "spec.freshness");
        s->freshness_max_age_seconds = duration_field(&c, fr, "maxAge", "spec.freshness.maxAge",
                                                      SPEC_DEFAULT_MAX_AGE_SECONDS, 60, LONG_MAX, 0,
                                                      "a duration of at least 1m such as 36h, 90m or 2d");
        parse_poll(&c, spec, s);
        s->webhook_secret = secret_ref(&c, opt_obj(&c, spec, "webhook", "spec.webhook"), "secretRef",
                                       "spec.webhook.secretRef");
        parse_network_policy(&c, spec, s);
        parse_sources(&c, spec, s);
    }
    if (errs->count > 0) {
        spec_free(s);
        return ZK_EINVAL;
    }
    *out = s;
    return ZK_OK;
}

static void free_strv(char **v)
{
    char **p;

    for (p = v; p && *p; p++)
        free(*p);
    free(v);
}

void spec_free(struct corpus_spec *spec)
{
    int i;

    if (!spec)
        return;
    for (i = 0; i < spec->nrepos; i++) {
        free(spec->repos[i].url);
        free(spec->repos[i].name);
        free_strv(spec->repos[i].branches);
        free(spec->repos[i].web_url);
    }
    free(spec->repos);
    for (i = 0; i < spec->nsources; i++) {
        free(spec->sources[i].api_url);
        free(spec->sources[i].owner);
        free(spec->sources[i].token_secret);
        free(spec->sources[i].token_key);
        free_strv(spec->sources[i].include);
        free_strv(spec->sources[i].exclude);
    }
    free(spec->sources);
    free(spec->discovered);
    free(spec->credentials_secret);
    free(spec->git_ca.name);
    free(spec->git_ca.key);
    free(spec->schedule);
    free(spec->time_zone);
    free(spec->storage.storage_class);
    free(spec->storage.size);
    free(spec->storage.existing_claim);
    free(spec->indexer.image);
    cJSON_Delete(spec->indexer.resources);
    free_strv(spec->indexer.extra_flags);
    free(spec->webserver.image);
    cJSON_Delete(spec->webserver.resources);
    free(spec->webserver.architecture);
    cJSON_Delete(spec->webserver.node_selector);
    cJSON_Delete(spec->webserver.tolerations);
    cJSON_Delete(spec->network_policy.from);
    cJSON_Delete(spec->network_policy.metrics_from);
    free(spec->gateway.image);
    free(spec->gateway.tokens_secret);
    free(spec->webhook_secret);
    free(spec->connector.image);
    free(spec->connector.mirror_prefix);
    free(spec);
}

void spec_errors_format(const struct spec_errors *errs, char *dst, size_t len)
{
    size_t used = 0;
    int i, n;

    if (len == 0)
        return;
    dst[0] = '\0';
    for (i = 0; i < errs->count && used < len; i++) {
        n = snprintf(dst + used, len - used, "%s%s: %s", i ? "; " : "", errs->items[i].field, errs->items[i].message);
        if (n < 0)
            return;
        used += (size_t)n;
    }
    if (errs->dropped > 0 && used < len)
        snprintf(dst + used, len - used, "; and %d more", errs->dropped);
}

/* ---- the operator's pod settings -------------------------------------------------------------- */

static int dns_subdomain_n(const char *s, size_t n)
{
    if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' || s[i] == '.'))
            return 0;
    return 1;
}

int spec_dns_subdomain(const char *s)
{
    return dns_subdomain_n(s, strlen(s));
}

/* Whether s (n bytes) is a label's name or value: at most 63 of letters, digits, '-', '_' and '.',
 * alphanumeric at both ends; only a value may be empty. */
static int label_part(const char *s, size_t n, int value)
{
    if (n == 0)
        return value;
    if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return 0;
    return 1;
}

void spec_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A namespace's name: a DNS label, at most 63 of lowercase letters, digits and '-', alphanumeric at
 * both ends. */
static int dns_label_n(const char *s, size_t n)
{
    return n <= 63 && dns_subdomain_n(s, n) && !memchr(s, '.', n);
}

/* Splits csv at commas into a NULL-terminated heap array of names that valid accepts; what names
 * them in the error ("image pull Secret", "namespace"). */
static int parse_name_list(const char *csv, int (*valid)(const char *, size_t), const char *what, char ***names,
                           struct zk_err *err)
{
    size_t n = 1, k = 0;
    char **v;

    for (const char *p = csv; *p; p++)
        n += *p == ',';
    v = mem_calloc(n + 1, sizeof(*v));
    for (const char *p = csv;; p++) {
        size_t len = strcspn(p, ",");

        if (!valid(p, len)) {
            spec_strv_free(v);
            return zk_err_set(err, ZK_EINVAL, "%s \"%.*s\" is not a valid name", what, (int)len, p);
        }
        v[k++] = mem_strndup(p, len);
        p += len;
        if (!*p)
            break;
    }
    *names = v;
    return ZK_OK;
}

int spec_parse_secret_names(const char *csv, char ***names, struct zk_err *err)
{
    return parse_name_list(csv, dns_subdomain_n, "image pull Secret", names, err);
}

int spec_parse_namespaces(const char *csv, char ***names, struct zk_err *err)
{
    return parse_name_list(csv, dns_label_n, "namespace", names, err);
}

/* Whether the n bytes at key are a label key: a name, or a DNS-subdomain prefix, '/' and a name. */
static int label_key(const char *key, size_t n)
{
    const char *slash = memchr(key, '/', n);

    if (!slash)
        return label_part(key, n, 0);
    return dns_subdomain_n(key, (size_t)(slash - key)) && label_part(slash + 1, n - (size_t)(slash - key) - 1, 0);
}

int spec_parse_pod_labels(const char *csv, cJSON **labels, struct zk_err *err)
{
    struct jb b = {0};
    cJSON *out = jb_object(&b);

    for (const char *p = csv;; p++) {
        size_t len = strcspn(p, ","), klen = strcspn(p, "=,");
        char *key, *value;

        if (klen >= len || !label_key(p, klen) || !label_part(p + klen + 1, len - klen - 1, 1)) {
            cJSON_Delete(out);
            return zk_err_set(err, ZK_EINVAL, "pod label \"%.*s\" is not key=value with a valid label key and value",
                              (int)len, p);
        }
        if (strncmp(p, "app.kubernetes.io/", 18) == 0) {
            cJSON_Delete(out);
            return zk_err_set(err, ZK_EINVAL,
                              "pod label \"%.*s\": the app.kubernetes.io/ labels are the operator's own (its "
                              "selectors match them)",
                              (int)len, p);
        }
        key = mem_strndup(p, klen);
        value = mem_strndup(p + klen + 1, len - klen - 1);
        /* A key given twice keeps its last value, as kubectl label --overwrite does. */
        cJSON_DeleteItemFromObjectCaseSensitive(out, key);
        jb_add_str(&b, out, key, value);
        free(key);
        free(value);
        p += len;
        if (!*p)
            break;
    }
    *labels = jb_finish(&b, out);
    return ZK_OK;
}
