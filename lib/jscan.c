/* jscan.c: see jscan.h. The validator follows cJSON's parse functions step by step (their quirks
 * are named where they matter); the walkers after it trust a validated document. */
#include "jscan.h"

#include "err.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- validation ------------------------------------------------------------------------------------ */

static size_t js_ws(const struct jscan_doc *d, size_t i)
{
    const unsigned char *s = (const unsigned char *)d->s;

    while (i < d->len && s[i] <= 32)
        i++;
    return i;
}

static int js_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* cJSON's parse_hex4: a bad digit makes the whole code 0. */
static unsigned js_hex4(const unsigned char *p)
{
    unsigned h = 0;

    for (int i = 0; i < 4; i++) {
        if (!js_hex(p[i]))
            return 0;
        h = h << 4 | (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
    }
    return h;
}

/* The length of a "\u" sequence at p (6 or 12) as cJSON decodes it, or 0 when cJSON rejects it;
 * left bytes remain before the closing quote. */
static size_t js_utf16_len(const unsigned char *p, size_t left)
{
    unsigned first, second;

    if (left < 6)
        return 0;
    first = js_hex4(p + 2);
    if (first >= 0xdc00 && first <= 0xdfff)
        return 0;
    if (first < 0xd800 || first > 0xdbff)
        return 6;
    if (left - 6 < 6 || p[6] != '\\' || p[7] != 'u')
        return 0;
    second = js_hex4(p + 8);
    return second >= 0xdc00 && second <= 0xdfff ? 12 : 0;
}

/* Checks the escapes of a string's bytes [j, end) (end: the closing quote) in a second pass, as cJSON
 * does: a "\u" takes six bytes whatever they are, so this pass may pair bytes differently from the
 * search for the closing quote. */
static int js_escapes(const unsigned char *s, size_t j, size_t end)
{
    while (j < end) {
        const unsigned char *p = memchr(s + j, '\\', end - j);
        size_t k;

        if (!p)
            return 1;
        j = (size_t)(p - s);
        switch (p[1]) {
        case 'b': case 'f': case 'n': case 'r': case 't': case '"': case '\\': case '/':
            j += 2;
            break;
        case 'u':
            if (!(k = js_utf16_len(p, end - j)))
                return 0;
            j += k;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* Validates the string opening at i; returns the index after it, or 0. The closing quote is the
 * first one not taken by a backslash, each backslash taking the byte after it. */
static size_t js_string(const struct jscan_doc *d, size_t i)
{
    const unsigned char *s = (const unsigned char *)d->s;
    size_t j = i + 1, escapes = 0;

    for (;;) {
        const unsigned char *q = j < d->len ? memchr(s + j, '"', d->len - j) : NULL, *b;

        if (!q)
            return 0;
        b = memchr(s + j, '\\', (size_t)(q - (s + j)));
        if (!b) {
            j = (size_t)(q - s);
            break;
        }
        escapes = 1;
        j = (size_t)(b - s) + 2;
        if (j > d->len)
            return 0;
    }
    return !escapes || js_escapes(s, i + 1, j) ? j + 1 : 0;
}

static int js_number_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* How many bytes of s (n bytes, all number characters) strtod reads in the C locale; 0: none. */
static size_t js_strtod_len(const unsigned char *s, size_t n)
{
    size_t i = 0, digits = 0;

    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;

        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < n && s[j] >= '0' && s[j] <= '9') {
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            i = j;
        }
    }
    return i;
}

/* The bytes of the number at s (at most n): the part strtod reads of the run of number characters,
 * which cJSON copies whole. */
static size_t js_number_len(const unsigned char *s, size_t n)
{
    size_t run = 0;

    while (run < n && js_number_char(s[run]))
        run++;
    return js_strtod_len(s, run);
}

static size_t js_value(struct jscan_doc *d, size_t i, size_t depth, int *nomem);

/* Validates the array or object opening at i; returns the index after it, or 0. A container of at
 * least JSCAN_INDEX_MIN bytes stays in the index. Its slot is taken when it opens, so the index is
 * ordered by offset; a smaller one gives its slot back when it closes, and it is then the last one,
 * since everything inside it is smaller still. */
static size_t js_container(struct jscan_doc *d, size_t i, size_t depth, int object, int *nomem)
{
    const char close = object ? '}' : ']';
    size_t slot = d->n_index, open = i;

    if (depth >= JSCAN_NESTING_LIMIT)
        return 0;
    if (d->n_index == d->cap_index) {
        size_t cap = d->cap_index ? d->cap_index * 2 : 64;
        size_t(*v)[2] = realloc(d->index, cap * sizeof(*v));

        if (!v) {
            *nomem = 1;
            return 0;
        }
        d->index = v;
        d->cap_index = cap;
    }
    d->index[d->n_index][0] = open;
    d->n_index++;
    i = js_ws(d, i + 1);
    if (!(i < d->len && d->s[i] == close)) {
        for (;;) {
            i = js_ws(d, i);
            if (object) {
                if (i >= d->len || d->s[i] != '"' || !(i = js_string(d, i)))
                    return 0;
                i = js_ws(d, i);
                if (i >= d->len || d->s[i] != ':')
                    return 0;
                i = js_ws(d, i + 1);
            }
            if (!(i = js_value(d, i, depth + 1, nomem)))
                return 0;
            i = js_ws(d, i);
            if (i < d->len && d->s[i] == ',') {
                i++;
                continue;
            }
            if (!(i < d->len && d->s[i] == close))
                return 0;
            break;
        }
    }
    i++;
    if (i - open < JSCAN_INDEX_MIN)
        d->n_index = slot;
    else
        d->index[slot][1] = i;
    return i;
}

/* Validates the value at i; returns the index after it, or 0 (with *nomem set when the index could
 * not grow). */
static size_t js_value(struct jscan_doc *d, size_t i, size_t depth, int *nomem)
{
    size_t left = i < d->len ? d->len - i : 0, n;
    const unsigned char *p = (const unsigned char *)d->s + i;

    if (!left)
        return 0;
    switch (p[0]) {
    case 'n':
        return left >= 4 && memcmp(p, "null", 4) == 0 ? i + 4 : 0;
    case 'f':
        return left >= 5 && memcmp(p, "false", 5) == 0 ? i + 5 : 0;
    case 't':
        return left >= 4 && memcmp(p, "true", 4) == 0 ? i + 4 : 0;
    case '"':
        return js_string(d, i);
    case '[':
        return js_container(d, i, depth, 0, nomem);
    case '{':
        return js_container(d, i, depth, 1, nomem);
    default:
        if (p[0] != '-' && !(p[0] >= '0' && p[0] <= '9'))
            return 0;
        n = js_number_len(p, left);
        return n ? i + n : 0;
    }
}

int jscan_parse(struct jscan_doc *d, const char *text, size_t len, struct jscan *root)
{
    size_t start = 0, end;
    int nomem = 0;

    memset(d, 0, sizeof(*d));
    d->s = text;
    d->len = len;
    root->p = NULL;
    root->len = 0;
    if (!text || !len)
        return ZK_EPARSE;
    /* cJSON skips a byte order mark only when it can see a fifth byte. */
    if (len > 4 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        start = 3;
    start = js_ws(d, start);
    if (!(end = js_value(d, start, 0, &nomem)))
        return nomem ? ZK_ENOMEM : ZK_EPARSE;
    root->p = text + start;
    root->len = end - start;
    return ZK_OK;
}

void jscan_doc_free(struct jscan_doc *d)
{
    free(d->index);
    memset(d, 0, sizeof(*d));
}

/* ---- walking a validated document ------------------------------------------------------------------ */

enum jscan_type jscan_type(struct jscan v)
{
    if (!v.p || !v.len)
        return JSCAN_NONE;
    switch (v.p[0]) {
    case 'n': return JSCAN_NULL;
    case 'f': return JSCAN_FALSE;
    case 't': return JSCAN_TRUE;
    case '"': return JSCAN_STRING;
    case '[': return JSCAN_ARRAY;
    case '{': return JSCAN_OBJECT;
    default: return JSCAN_NUMBER;
    }
}

/* The end of the valid string opening at p (end: the end of the document): the first quote not
 * taken by an odd run of backslashes. */
static const char *js_skip_string(const char *p, const char *end)
{
    const char *q = p + 1;

    for (;;) {
        const char *b;

        /* Most strings skipped are short keys: a few bytes are looked at before calling memchr. */
        for (int i = 0; i < 16 && *q != '"'; i++)
            q++;
        if (*q != '"')
            q = memchr(q, '"', (size_t)(end - q));
        for (b = q; b[-1] == '\\'; b--)
            ;
        if ((q - b) % 2 == 0)
            return q + 1;
        q++;
    }
}

/* Bytes that matter when skipping a container: quotes and brackets. */
static const unsigned char js_structural[256] = {['"'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1};

/* The end of the valid array or object opening at p: from the index when it is large, else by
 * counting brackets outside strings. */
static const char *js_skip_container(const struct jscan_doc *d, const char *p)
{
    size_t off = (size_t)(p - d->s), lo = 0, hi = d->n_index, depth = 0;
    const char *end = d->s + d->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (d->index[mid][0] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->n_index && d->index[lo][0] == off)
        return d->s + d->index[lo][1];
    for (;;) {
        while (!js_structural[(unsigned char)*p])
            p++;
        if (*p == '"') {
            p = js_skip_string(p, end);
            continue;
        }
        if (*p == '[' || *p == '{')
            depth++;
        else if (--depth == 0)
            return p + 1;
        p++;
    }
}

/* The end of the valid value starting at p. */
static const char *js_skip(const struct jscan_doc *d, const char *p)
{
    switch (*p) {
    case 'n': case 't': return p + 4;
    case 'f': return p + 5;
    case '"': return js_skip_string(p, d->s + d->len);
    case '[': case '{': return js_skip_container(d, p);
    default: return p + js_number_len((const unsigned char *)p, (size_t)(d->s + d->len - p));
    }
}

static const char *js_skip_ws(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= 32)
        p++;
    return p;
}

void jscan_iter_init(struct jscan_iter *it, const struct jscan_doc *d, struct jscan container)
{
    enum jscan_type t = jscan_type(container);

    it->d = d;
    it->p = it->end = NULL;
    if (t != JSCAN_ARRAY && t != JSCAN_OBJECT)
        return;
    it->p = container.p + 1;
    it->end = container.p + container.len - 1; /* the closing bracket */
}

int jscan_next(struct jscan_iter *it, struct jscan *key, struct jscan *val)
{
    const char *p;

    if (!it->p)
        return 0;
    p = js_skip_ws(it->p, it->end);
    if (*p == ',')
        p = js_skip_ws(p + 1, it->end);
    if (p >= it->end) {
        it->p = NULL;
        return 0;
    }
    if (*it->end == '}') {
        const char *k = js_skip_string(p, it->end);

        if (key) {
            key->p = p;
            key->len = (size_t)(k - p);
        }
        p = js_skip_ws(js_skip_ws(k, it->end) + 1, it->end); /* past the ':' */
    } else if (key) {
        key->p = NULL;
        key->len = 0;
    }
    val->p = p;
    val->len = (size_t)(js_skip(it->d, p) - p);
    it->p = p + val->len;
    return 1;
}

/* Decodes the escape at p (a backslash of a validated string) into out (up to 4 bytes); returns the
 * bytes it takes in the input and sets *n to the bytes written, as cJSON's parse_string does. */
static size_t js_unescape(const unsigned char *p, unsigned char *out, size_t *n)
{
    static const char from[] = "bfnrt\"\\/", to[] = "\b\f\n\r\t\"\\/";
    unsigned long cp;
    unsigned first;
    size_t len = 6;

    if (p[1] != 'u') {
        out[0] = (unsigned char)to[strchr(from, p[1]) - from];
        *n = 1;
        return 2;
    }
    first = js_hex4(p + 2);
    cp = first;
    if (first >= 0xd800 && first <= 0xdbff) {
        cp = 0x10000 + (((first & 0x3ffu) << 10) | (js_hex4(p + 8) & 0x3ffu));
        len = 12;
    }
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        *n = 1;
    } else if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        *n = 2;
    } else if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        *n = 3;
    } else {
        out[0] = (unsigned char)(0xf0 | cp >> 18);
        out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (unsigned char)(0x80 | (cp & 0x3f));
        *n = 4;
    }
    return len;
}

int jscan_key_is(struct jscan key, const char *name, int nocase)
{
    const unsigned char *p = (const unsigned char *)key.p + 1, *end = (const unsigned char *)key.p + key.len - 1;
    const unsigned char *want = (const unsigned char *)name;
    size_t i;

    /* Up to its first escape or NUL byte, a key is its own bytes: most keys are compared here. */
    for (i = 0; p + i < end && p[i] != '\\' && p[i] != '\0'; i++)
        if (!want[i] || (nocase ? tolower(p[i]) != tolower(want[i]) : p[i] != want[i]))
            return 0;
    if (p + i == end)
        return want[i] == '\0';
    p += i;
    want += i;
    /* The rest byte by byte through the decoded key, which ends at its first NUL as a C string does. */
    while (p < end) {
        unsigned char dec[4];
        size_t n = 1;

        if (*p == '\\')
            p += js_unescape(p, dec, &n);
        else
            dec[0] = *p++;
        for (size_t k = 0; k < n; k++) {
            if (dec[k] == '\0')
                return *want == '\0';
            if (nocase ? tolower(dec[k]) != tolower(*want) : dec[k] != *want)
                return 0;
            want++;
        }
    }
    return *want == '\0';
}

void jscan_find(const struct jscan_doc *d, struct jscan obj, const char *const *names, size_t n,
                struct jscan *vals)
{
    struct jscan key, val;
    struct jscan_iter it;
    size_t left = n;

    memset(vals, 0, n * sizeof(*vals));
    if (jscan_type(obj) != JSCAN_OBJECT)
        return;
    jscan_iter_init(&it, d, obj);
    while (left && jscan_next(&it, &key, &val))
        for (size_t i = 0; i < n; i++)
            if (!vals[i].p && jscan_key_is(key, names[i], 0)) {
                vals[i] = val;
                left--;
                break;
            }
}

size_t jscan_count(const struct jscan_doc *d, struct jscan arr)
{
    struct jscan_iter it;
    struct jscan val;
    size_t n = 0;

    if (jscan_type(arr) != JSCAN_ARRAY)
        return 0;
    jscan_iter_init(&it, d, arr);
    while (jscan_next(&it, NULL, &val))
        n++;
    return n;
}

long long jscan_int(struct jscan v, long long def)
{
    char small[64], *s;
    double d;

    if (jscan_type(v) != JSCAN_NUMBER)
        return def;
    s = v.len < sizeof(small) ? small : malloc(v.len + 1);
    if (!s)
        return def; /* out of memory for a number of more than 63 bytes, which no field read has */
    memcpy(s, v.p, v.len);
    s[v.len] = '\0';
    d = strtod(s, NULL);
    if (s != small)
        free(s);
    /* As json_int: a value outside long long's range (or NaN) cannot be converted. */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return def;
    return (long long)d;
}

int jscan_bool(struct jscan v, int def)
{
    enum jscan_type t = jscan_type(v);

    return t == JSCAN_TRUE ? 1 : t == JSCAN_FALSE ? 0 : def;
}

struct jscan jscan_obj(struct jscan v)
{
    struct jscan none = {NULL, 0};

    return jscan_type(v) == JSCAN_OBJECT ? v : none;
}

struct jscan jscan_arr(struct jscan v)
{
    struct jscan none = {NULL, 0};

    return jscan_type(v) == JSCAN_ARRAY ? v : none;
}

/* Appends an array of as many 0 as arr has elements. */
static int js_put_count(const struct jscan_doc *d, struct jscan arr, struct buf *out)
{
    size_t count = jscan_count(d, arr);
    int rc = buf_putc(out, '[');

    for (size_t i = 0; !rc && i < count; i++)
        rc = buf_append(out, i ? ",0" : "0", i ? 2 : 1);
    return rc ? rc : buf_putc(out, ']');
}

int jscan_filter(const struct jscan_doc *d, struct jscan obj, const struct jscan_keep *keep, size_t n,
                 struct buf *out, struct jscan *found)
{
    struct jscan key, val;
    struct jscan_iter it;
    int rc, first = 1;

    if (found)
        memset(found, 0, n * sizeof(*found));
    if ((rc = buf_putc(out, '{')))
        return rc;
    jscan_iter_init(&it, d, obj);
    while (jscan_type(obj) == JSCAN_OBJECT && jscan_next(&it, &key, &val)) {
        size_t k = 0;

        while (k < n && !jscan_key_is(key, keep[k].key, 0))
            k++;
        if (k == n)
            continue;
        if (found && !found[k].p)
            found[k] = val;
        if (keep[k].mode == JSCAN_FIND)
            continue;
        if ((!first && (rc = buf_putc(out, ','))) || (rc = buf_append(out, key.p, key.len)) ||
            (rc = buf_putc(out, ':')))
            return rc;
        first = 0;
        if (keep[k].mode == JSCAN_COPY_COUNT && jscan_type(val) == JSCAN_ARRAY)
            rc = js_put_count(d, val, out);
        else
            rc = buf_append(out, val.p, val.len);
        if (rc)
            return rc;
    }
    return buf_putc(out, '}');
}
