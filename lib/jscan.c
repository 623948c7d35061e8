/* jscan.c: see jscan.h. The validator follows cJSON's parse functions step by step (their quirks
 * are named where they matter); the walkers after it trust a validated document. */
#include "jscan.h"

#include "err.h"
#include "json.h"
#include "mem.h"

#include <ctype.h>
#include <limits.h>
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

/* How far js_string looks itself before calling memchr: most strings are short keys, for which a
 * call costs more than the look. */
#define JS_STRING_QUICK 32

/* Eight bytes of s from i on, the first in the lowest byte, whatever the machine's byte order
 * (compilers make this one load where the order is little-endian). */
static uint64_t js_load8(const unsigned char *s, size_t i)
{
    s += i;
    return (uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 | (uint64_t)s[3] << 24 |
           (uint64_t)s[4] << 32 | (uint64_t)s[5] << 40 | (uint64_t)s[6] << 48 | (uint64_t)s[7] << 56;
}

/* The first index in [j, end) that holds a quote or a backslash, or end: eight bytes at a time while
 * eight are left. A byte equal to c makes w ^ (c in every byte) zero there, and (x - 0x01..) & ~x &
 * 0x80.. marks a zero byte's high bit; marks may also appear above a real one (a borrow), never
 * below, so the lowest mark is the first hit. */
static size_t js_quote_or_escape(const unsigned char *s, size_t j, size_t end)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;

    for (; end - j >= 8; j += 8) {
        uint64_t w = js_load8(s, j), q = w ^ ('"' * ones), b = w ^ ('\\' * ones);
        uint64_t hit = ((q - ones) & ~q) | ((b - ones) & ~b);

        if (hit & highs)
            return j + (size_t)__builtin_ctzll(hit & highs) / 8;
    }
    while (j < end && s[j] != '"' && s[j] != '\\')
        j++;
    return j;
}

/* Validates the string opening at i; returns the index after it, or 0. *escaped gets JSCAN_ESCAPED
 * when it holds a backslash, else 0. The closing quote is the first one not taken by a backslash, each
 * backslash taking the byte after it. */
static size_t js_string(const struct jscan_doc *d, size_t i, uint32_t *escaped)
{
    const unsigned char *s = (const unsigned char *)d->s;
    size_t j = i + 1;

    *escaped = 0;
    j = js_quote_or_escape(s, j, d->len - j < JS_STRING_QUICK ? d->len : j + JS_STRING_QUICK);
    if (j < d->len && s[j] == '"')
        return j + 1;
    /* A long string, or one with an escape: nothing before j is a quote or a backslash. */
    for (;;) {
        const unsigned char *q = j < d->len ? memchr(s + j, '"', d->len - j) : NULL, *b;

        if (!q)
            return 0;
        b = memchr(s + j, '\\', (size_t)(q - (s + j)));
        if (!b) {
            j = (size_t)(q - s);
            break;
        }
        *escaped = JSCAN_ESCAPED;
        j = (size_t)(b - s) + 2;
        if (j > d->len)
            return 0;
    }
    return !*escaped || js_escapes(s, i + 1, j) ? j + 1 : 0;
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
    size_t run = s[0] == '-';

    /* Most numbers are whole: digits up to a byte that no number has, which is all strtod reads. */
    while (run < n && s[run] >= '0' && s[run] <= '9')
        run++;
    if (run == n || !js_number_char(s[run]))
        return run > (size_t)(s[0] == '-') ? run : 0;
    while (run < n && js_number_char(s[run]))
        run++;
    return js_strtod_len(s, run);
}

/* Makes room in d's tape for one more entry; 0 when it cannot. Each entry stands for a different byte
 * of the text (a key's or value's first byte, a closing bracket), so the tape never needs more entries
 * than the text has bytes, and its capacity stops there: a text that seemed to need more is refused
 * as malformed. */
static int js_grow(struct jscan_doc *d)
{
    size_t cap = d->cap_tape ? d->cap_tape * 2 : d->len / 8 + 64;

    if (cap > d->len)
        cap = d->len;
    /* Only a broken count could want more than the text's length: refuse rather than overrun. */
    if (cap <= d->cap_tape)
        return 0;
    d->tape = mem_realloc(d->tape, cap * sizeof(*d->tape));
    d->cap_tape = cap;
    return 1;
}

static inline int js_push(struct jscan_doc *d, size_t off, uint32_t aux)
{
    if (d->n_tape == d->cap_tape && !js_grow(d))
        return 0;
    d->tape[d->n_tape].off = (uint32_t)off;
    d->tape[d->n_tape].aux = aux;
    d->n_tape++;
    return 1;
}

/* The length of the scalar value at i (a literal, string or number), 0 when cJSON rejects it; a
 * string's *escaped is set as js_string sets it. */
static size_t js_scalar(const struct jscan_doc *d, size_t i, uint32_t *escaped)
{
    size_t left = d->len - i, n;
    const unsigned char *p = (const unsigned char *)d->s + i;

    *escaped = 0;
    switch (p[0]) {
    case 'n':
        return left >= 4 && memcmp(p, "null", 4) == 0 ? 4 : 0;
    case 'f':
        return left >= 5 && memcmp(p, "false", 5) == 0 ? 5 : 0;
    case 't':
        return left >= 4 && memcmp(p, "true", 4) == 0 ? 4 : 0;
    case '"':
        n = js_string(d, i, escaped);
        return n ? n - i : 0;
    default:
        if (p[0] != '-' && !(p[0] >= '0' && p[0] <= '9'))
            return 0;
        return js_number_len(p, left);
    }
}

/* What the validator looks at next: a value, an object member's key, or what follows a value (a
 * comma, the closing bracket of the container it is in, or the end of the root). */
enum js_expect { JS_VALUE, JS_KEY, JS_AFTER };

/* An open container on the validator's stack: its opening bracket's entry, and whether it is an
 * object. */
#define JS_OPEN(entry, object) ((uint32_t)(entry) << 1 | (uint32_t)(object))
#define JS_OPEN_ENTRY(open) ((open) >> 1)
#define JS_OPEN_OBJECT(open) ((open) & 1u)

/* Closes the container on top of the stack with the bracket at i: the two brackets' entries point at
 * each other. Returns 0 when the tape cannot grow. */
static int js_close(struct jscan_doc *d, uint32_t open, size_t i)
{
    if (!js_push(d, i, JS_OPEN_ENTRY(open)))
        return 0;
    d->tape[JS_OPEN_ENTRY(open)].aux = JSCAN_OPENS | (uint32_t)(d->n_tape - 1);
    return 1;
}

/* Validates the value at i as cJSON's parse_value, parse_array and parse_object do, writing the tape
 * as it goes: in one loop, with the containers still open on a stack, because a call per value costs
 * more than the value takes to check. Returns the index after the value, or 0. */
static size_t js_validate(struct jscan_doc *d, size_t i)
{
    const unsigned char *s = (const unsigned char *)d->s;
    uint32_t stack[JSCAN_NESTING_LIMIT], escaped;
    enum js_expect expect = JS_VALUE;
    size_t depth = 0, n;

    for (;;) {
        switch (expect) {
        case JS_KEY:
            if (i >= d->len || s[i] != '"' || !(n = js_string(d, i, &escaped)))
                return 0;
            if (!js_push(d, i, (uint32_t)(n - i) | escaped))
                return 0;
            i = js_ws(d, n);
            if (i >= d->len || s[i] != ':')
                return 0;
            i = js_ws(d, i + 1);
            expect = JS_VALUE;
            break;
        case JS_VALUE:
            if (i >= d->len)
                return 0;
            if (s[i] == '[' || s[i] == '{') {
                int object = s[i] == '{';

                if (depth >= JSCAN_NESTING_LIMIT)
                    return 0;
                stack[depth++] = JS_OPEN(d->n_tape, object);
                if (!js_push(d, i, 0))
                    return 0;
                i = js_ws(d, i + 1);
                if (i < d->len && s[i] == (object ? '}' : ']')) {
                    if (!js_close(d, stack[--depth], i))
                        return 0;
                    i++;
                    expect = JS_AFTER;
                } else {
                    expect = object ? JS_KEY : JS_VALUE;
                }
                break;
            }
            if (!(n = js_scalar(d, i, &escaped)))
                return 0;
            if (!js_push(d, i, (uint32_t)n | escaped))
                return 0;
            i += n;
            expect = JS_AFTER;
            break;
        case JS_AFTER:
            if (!depth)
                return i;
            i = js_ws(d, i);
            if (i < d->len && s[i] == ',') {
                i = js_ws(d, i + 1);
                expect = JS_OPEN_OBJECT(stack[depth - 1]) ? JS_KEY : JS_VALUE;
            } else if (i < d->len && s[i] == (JS_OPEN_OBJECT(stack[depth - 1]) ? '}' : ']')) {
                if (!js_close(d, stack[--depth], i))
                    return 0;
                i++;
            } else {
                return 0;
            }
            break;
        }
    }
}

int jscan_parse(struct jscan_doc *d, const char *text, size_t len, struct jscan *root)
{
    size_t start = 0, end;

    memset(d, 0, sizeof(*d));
    d->s = text;
    d->len = len;
    memset(root, 0, sizeof(*root));
    if (!text || !len)
        return ZK_EPARSE;
    if (len > JSCAN_TEXT_MAX)
        return ZK_ETOOBIG;
    /* cJSON skips a byte order mark only when it can see a fifth byte. */
    if (len > 4 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        start = 3;
    start = js_ws(d, start);
    if (!(end = js_validate(d, start)))
        return ZK_EPARSE;
    /* The root's entry is the first one written: a container's opening bracket, or the one value. */
    root->p = text + start;
    root->len = end - start;
    root->at = 0;
    return ZK_OK;
}

void jscan_doc_free(struct jscan_doc *d)
{
    free(d->tape);
    memset(d, 0, sizeof(*d));
}

/* ---- walking a validated document ------------------------------------------------------------------ */

/* The key or value whose entry is at. */
static struct jscan js_at(const struct jscan_doc *d, size_t at)
{
    const struct jscan_entry *e = &d->tape[at];
    struct jscan v;

    v.p = d->s + e->off;
    v.len = e->aux & JSCAN_OPENS ? d->tape[e->aux & ~JSCAN_OPENS].off + 1 - e->off : e->aux & ~JSCAN_ESCAPED;
    v.at = at;
    return v;
}

/* The entry after the value at `at` and everything it holds. */
static size_t js_after(const struct jscan_doc *d, size_t at)
{
    uint32_t aux = d->tape[at].aux;

    return aux & JSCAN_OPENS ? (aux & ~JSCAN_OPENS) + 1 : at + 1;
}

void jscan_iter_init(struct jscan_iter *it, const struct jscan_doc *d, struct jscan container)
{
    enum jscan_type t = jscan_type(container);

    it->d = d;
    it->at = it->end = 0;
    it->object = t == JSCAN_OBJECT;
    if (t != JSCAN_ARRAY && t != JSCAN_OBJECT)
        return;
    it->at = container.at + 1;
    it->end = d->tape[container.at].aux & ~JSCAN_OPENS;
}

int jscan_next(struct jscan_iter *it, struct jscan *key, struct jscan *val)
{
    if (it->at >= it->end)
        return 0;
    if (it->object) {
        if (key)
            *key = js_at(it->d, it->at);
        it->at++;
    } else if (key) {
        memset(key, 0, sizeof(*key));
    }
    *val = js_at(it->d, it->at);
    it->at = js_after(it->d, it->at);
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

/* Whether the member key at its entry in d decodes to name, as jscan_key_is (case-sensitive). A key
 * without a backslash, as keys almost always are, is its own bytes up to a NUL if it has one: compared
 * here byte by byte, stopping at the first difference, which is nearly always the first byte. */
static int js_key_is(const struct jscan_doc *d, const struct jscan *key, const char *name)
{
    const char *k = key->p + 1;
    size_t n = key->len - 2;

    if (d->tape[key->at].aux & JSCAN_ESCAPED)
        return jscan_key_is(*key, name, 0);
    for (size_t i = 0; i < n; i++) {
        if (k[i] != name[i])
            return 0;
        if (!k[i])
            return 1;
    }
    return name[n] == '\0';
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
            if (!vals[i].p && js_key_is(d, &key, names[i])) {
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

/* Digits a whole number may have for jscan_int to read it itself: any such number is a double
 * exactly, so the value is the one strtod would give. */
#define JS_INT_DIGITS 15

double jscan_num(struct jscan v, double def)
{
    char small[64], *s;
    double d;

    if (jscan_type(v) != JSCAN_NUMBER)
        return def;
    s = v.len < sizeof(small) ? small : mem_alloc(v.len + 1);
    memcpy(s, v.p, v.len);
    s[v.len] = '\0';
    d = strtod(s, NULL);
    if (s != small)
        free(s);
    return d;
}

long long jscan_int(struct jscan v, long long def)
{
    size_t i, neg;
    long long n = 0;

    if (jscan_type(v) != JSCAN_NUMBER)
        return def;
    neg = v.p[0] == '-';
    for (i = neg; i < v.len && i - neg < JS_INT_DIGITS && v.p[i] >= '0' && v.p[i] <= '9'; i++)
        n = n * 10 + (v.p[i] - '0');
    if (i == v.len)
        return neg ? -n : n;
    /* As json_int: a value outside long long's range (or NaN) cannot be converted. */
    return json_num_to_int(jscan_num(v, 0), LLONG_MIN, LLONG_MAX, &n) ? n : def;
}

int jscan_bool(struct jscan v, int def)
{
    enum jscan_type t = jscan_type(v);

    return t == JSCAN_TRUE ? 1 : t == JSCAN_FALSE ? 0 : def;
}

struct jscan jscan_obj(struct jscan v)
{
    struct jscan none = {NULL, 0, 0};

    return jscan_type(v) == JSCAN_OBJECT ? v : none;
}

struct jscan jscan_arr(struct jscan v)
{
    struct jscan none = {NULL, 0, 0};

    return jscan_type(v) == JSCAN_ARRAY ? v : none;
}
