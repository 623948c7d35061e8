/* compare.c: see compare.h. */
#include "controller/corpus/compare.h"

#include "mem.h"

#include <ctype.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int compare_quantity_parse(const char *s, long double *out)
{
    static const struct {
        const char *suffix;
        long double factor;
    } suffixes[] = {
        {"Ki", 1024.0L}, {"Mi", 1048576.0L}, {"Gi", 1073741824.0L}, {"Ti", 1099511627776.0L},
        {"Pi", 1125899906842624.0L}, {"Ei", 1152921504606846976.0L},
        {"n", 1e-9L}, {"u", 1e-6L}, {"m", 1e-3L}, {"k", 1e3L}, {"M", 1e6L}, {"G", 1e9L},
        {"T", 1e12L}, {"P", 1e15L}, {"E", 1e18L},
    };
    const char *p = s;
    char *end;
    long double v;

    if (!s || !*s)
        return 0;
    /* strtold would accept hex, infinity and leading spaces, none of which is a quantity. */
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return 0;
    for (const char *q = p; *q; q++)
        if (*q == 'x' || *q == 'X')
            return 0;
    v = strtold(s, &end);
    if (end == s)
        return 0;
    if (*end == '\0') {
        *out = v;
        return 1;
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(end, suffixes[i].suffix) == 0) {
            *out = v * suffixes[i].factor;
            return 1;
        }
    }
    return 0;
}

/* Whether a desired value is one the API server omits when serialising (Go's omitempty). */
static int compare_is_zero(const cJSON *v)
{
    if (cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 1;
    if (cJSON_IsNumber(v))
        return v->valuedouble == 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] == '\0';
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child == NULL;
    return 0;
}

static int compare_quantities(const cJSON *d, const cJSON *o)
{
    long double a, b;
    char bufd[64], bufo[64];
    const char *sd = bufd, *so = bufo;

    /* A quantity may be written as a JSON number ("cpu": 1) and come back as a string ("1"). */
    if (cJSON_IsString(d))
        sd = d->valuestring;
    else if (cJSON_IsNumber(d))
        snprintf(bufd, sizeof(bufd), "%.17g", d->valuedouble);
    else
        return 0;
    if (cJSON_IsString(o))
        so = o->valuestring;
    else if (cJSON_IsNumber(o))
        snprintf(bufo, sizeof(bufo), "%.17g", o->valuedouble);
    else
        return 0;
    if (strcmp(sd, so) == 0)
        return 1;
    if (!compare_quantity_parse(sd, &a) || !compare_quantity_parse(so, &b))
        return 0;
    if (a == b)
        return 1;
    return fabsl(a - b) <= fabsl(a) * 1e-12L;
}

/* Copies s to dst + *n, cutting at len - 1 bytes; a cut path is still useful in a log. */
static void compare_append(char *dst, size_t len, size_t *n, const char *s)
{
    size_t k = strlen(s);

    if (*n + k >= len)
        k = len - 1 - *n;
    memcpy(dst + *n, s, k);
    *n += k;
    dst[*n] = '\0';
}

/* Writes prefix plus one path step (".key" or "[index]") into diff. */
static void compare_path(char *diff, size_t len, const char *prefix, const char *key, int index)
{
    char step[16];
    size_t n = 0;

    if (!diff || len == 0)
        return;
    diff[0] = '\0';
    compare_append(diff, len, &n, prefix);
    if (key) {
        if (prefix[0])
            compare_append(diff, len, &n, ".");
        compare_append(diff, len, &n, key);
    } else {
        snprintf(step, sizeof(step), "[%d]", index);
        compare_append(diff, len, &n, step);
    }
}

static int compare_node(const cJSON *d, const cJSON *o, int quantities, char *path, size_t len);

static int compare_object(const cJSON *d, const cJSON *o, char *path, size_t len)
{
    const cJSON *m;
    char here[512];

    if (!cJSON_IsObject(o))
        return 0;
    snprintf(here, sizeof(here), "%s", path ? path : "");
    cJSON_ArrayForEach(m, d) {
        const cJSON *om = cJSON_GetObjectItemCaseSensitive(o, m->string);
        int quantities;

        if (path)
            compare_path(path, len, here, m->string, 0);
        if (!om) {
            if (compare_is_zero(m))
                continue;
            return 0;
        }
        quantities = strcmp(m->string, "requests") == 0 || strcmp(m->string, "limits") == 0;
        if (!compare_node(m, om, quantities, path, len))
            return 0;
    }
    if (path)
        snprintf(path, len, "%s", here);
    return 1;
}

/* The length of a digest string: the mark, 64 hex digits, the NUL. */
#define COMPARE_DIGEST_SIZE (sizeof(COMPARE_DIGEST_MARK) - 1 + 64 + 1)

/* Writes the digest string of s (COMPARE_DIGEST_SIZE bytes) into out. */
static void compare_digest(const char *s, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;
    size_t at = sizeof(COMPARE_DIGEST_MARK) - 1;

    /* SHA-256 from the default provider cannot fail but for want of memory, which lib/mem's policy
     * ends the process for. */
    if (EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) != 1 || n != 32)
        mem_oom(strlen(s));
    memcpy(out, COMPARE_DIGEST_MARK, at);
    for (i = 0; i < n; i++, at += 2)
        snprintf(out + at, 3, "%02x", md[i]);
}

/* Whether observed string o is the digest of desired string d (compare.h). */
static int compare_digest_of(const cJSON *o, const cJSON *d)
{
    char digest[COMPARE_DIGEST_SIZE];

    if (strncmp(o->valuestring, COMPARE_DIGEST_MARK, sizeof(COMPARE_DIGEST_MARK) - 1) != 0 ||
        strlen(d->valuestring) < COMPARE_DIGEST_MIN)
        return 0;
    compare_digest(d->valuestring, digest);
    return strcmp(digest, o->valuestring) == 0;
}

void compare_digest_strings(cJSON *obj)
{
    char digest[COMPARE_DIGEST_SIZE];
    cJSON *m;

    if (cJSON_IsString(obj) && strlen(obj->valuestring) >= COMPARE_DIGEST_MIN) {
        compare_digest(obj->valuestring, digest);
        /* Shorter than the string it replaces, so it fits where that one was. */
        memcpy(obj->valuestring, digest, sizeof(digest));
        return;
    }
    cJSON_ArrayForEach(m, obj) compare_digest_strings(m);
}

static int compare_array(const cJSON *d, const cJSON *o, char *path, size_t len)
{
    const cJSON *de, *oe;
    char here[512];
    int i = 0;

    if (!cJSON_IsArray(o) || cJSON_GetArraySize(d) != cJSON_GetArraySize(o))
        return 0;
    snprintf(here, sizeof(here), "%s", path ? path : "");
    for (de = d->child, oe = o->child; de && oe; de = de->next, oe = oe->next, i++) {
        if (path)
            compare_path(path, len, here, NULL, i);
        if (!compare_node(de, oe, 0, path, len))
            return 0;
    }
    if (path)
        snprintf(path, len, "%s", here);
    return 1;
}

/* quantities: d is a requests/limits map, whose members compare as resource quantities. */
static int compare_node(const cJSON *d, const cJSON *o, int quantities, char *path, size_t len)
{
    if (quantities && cJSON_IsObject(d)) {
        const cJSON *m;
        char here[512];

        if (!cJSON_IsObject(o))
            return 0;
        snprintf(here, sizeof(here), "%s", path ? path : "");
        cJSON_ArrayForEach(m, d) {
            const cJSON *om = cJSON_GetObjectItemCaseSensitive(o, m->string);

            if (path)
                compare_path(path, len, here, m->string, 0);
            if (!om || !compare_quantities(m, om))
                return 0;
        }
        if (path)
            snprintf(path, len, "%s", here);
        return 1;
    }
    if (cJSON_IsObject(d))
        return compare_object(d, o, path, len);
    if (cJSON_IsArray(d))
        return compare_array(d, o, path, len);
    if (cJSON_IsNull(d))
        return o == NULL || cJSON_IsNull(o);
    if (cJSON_IsBool(d))
        return cJSON_IsBool(o) && cJSON_IsTrue(d) == cJSON_IsTrue(o);
    if (cJSON_IsNumber(d))
        return cJSON_IsNumber(o) && d->valuedouble == o->valuedouble;
    if (cJSON_IsString(d))
        return cJSON_IsString(o) && (strcmp(d->valuestring, o->valuestring) == 0 || compare_digest_of(o, d));
    return 0;
}

int compare_subset(const cJSON *desired, const cJSON *observed, char *diff, size_t len)
{
    char path[512] = "";
    int same;

    if (!observed)
        same = compare_is_zero(desired);
    else
        same = compare_node(desired, observed, 0, path, sizeof(path));
    if (!same && diff && len > 0)
        snprintf(diff, len, "%s", path[0] ? path : "(whole object)");
    return same;
}
