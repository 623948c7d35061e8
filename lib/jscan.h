/* jscan.h: walks JSON text without building a tree.
 *
 * Pure: no I/O; allocates only its tape (below; and a copy of a number longer than 63 bytes). Made
 * for answers that are mostly thrown away (Zoekt sends every match of every file; the connector shows
 * a few): a reader validates the document once with jscan_parse, then looks up only the members it
 * needs, skipping the rest without copying it; a string it keeps is its own bytes when it has no
 * escape (cJSON unescapes the others).
 *
 * jscan_parse accepts exactly what Debian's cJSON 1.7.15 (cJSON_ParseWithLength) accepts, quirks
 * included, so that a reader built on it agrees with one built on a cJSON tree for any input: bytes
 * 0..32 (NUL too) are white space, a UTF-8 byte order mark is skipped only when at least five bytes
 * are given, numbers are what strtod reads from the run of [0-9+-eE.] (leading zeros allowed, no
 * length limit), "\u" with a bad hex digit is U+0000, raw control bytes may appear in strings,
 * nesting deeper than 1000 containers is rejected, and bytes after the root value are ignored.
 * tests/fuzz/fuzz_zoekt_result.c checks this against the library on every input.
 *
 * Lookups follow cJSON's: a member is found by its decoded key compared as a C string (a key with
 * "\u0000" in it ends there), the first of several equal keys wins. */
#ifndef ZK_JSCAN_H
#define ZK_JSCAN_H

#include <stddef.h>
#include <stdint.h>

/* One entry of a document's tape: where a value, a member's key or a container's closing bracket
 * starts (off), and aux: for a key or a scalar value its length in bytes, with JSCAN_ESCAPED set when
 * a string holds a backslash; for an opening bracket JSCAN_OPENS and the index of its closing
 * bracket's entry; for a closing bracket the index of its opening one. */
struct jscan_entry {
    uint32_t off, aux;
};

#define JSCAN_ESCAPED 0x80000000u
#define JSCAN_OPENS 0x40000000u

/* The longest text jscan_parse takes, so that every offset, length and entry index fits beside the
 * flags. */
#define JSCAN_TEXT_MAX 0x3fffffffu

/* A document jscan_parse accepted, with its tape: one entry per key, value and closing bracket in
 * the order of the text, written while validating. Readers descend a few levels into the same
 * bytes, and each level skips over the next one; with the tape, skipping a value, finding the next
 * member or measuring a container is a step through the entries, and no text is read twice. Each
 * entry stands for a different byte of the text, so the tape has at most as many entries as the text
 * has bytes (8 bytes of tape per byte of text at worst, as "[[[]]]"; a Zoekt answer needs less than
 * one). */
struct jscan_doc {
    const char *s;
    size_t len;
    struct jscan_entry *tape;
    size_t n_tape, cap_tape;
};

/* A value's bytes inside a document, and its entry in the document's tape; p is NULL for "no value".
 * Points into the document. */
struct jscan {
    const char *p;
    size_t len;
    size_t at;
};

enum jscan_type {
    JSCAN_NONE,
    JSCAN_NULL,
    JSCAN_FALSE,
    JSCAN_TRUE,
    JSCAN_NUMBER,
    JSCAN_STRING,
    JSCAN_ARRAY,
    JSCAN_OBJECT
};

/* The nesting cJSON allows (CJSON_NESTING_LIMIT). */
#define JSCAN_NESTING_LIMIT 1000

/* Validates text (len bytes, not necessarily NUL-terminated; it must outlive d) as
 * cJSON_ParseWithLength would, and writes d's tape (which d owns). Returns ZK_OK with *root set to the
 * root value, ZK_EPARSE when cJSON would reject the text, ZK_ETOOBIG for a text longer than
 * JSCAN_TEXT_MAX. d is freed with jscan_doc_free in every case. */
int jscan_parse(struct jscan_doc *d, const char *text, size_t len, struct jscan *root);
void jscan_doc_free(struct jscan_doc *d);

/* A value's type, from its first byte. Inline: readers ask it of nearly every value they look at. */
static inline enum jscan_type jscan_type(struct jscan v)
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

/* Iterates the members of an object or the elements of an array (nothing for other values). */
struct jscan_iter {
    const struct jscan_doc *d;
    size_t at, end; /* the next entry to read, and the closing bracket's */
    int object;
};

void jscan_iter_init(struct jscan_iter *it, const struct jscan_doc *d, struct jscan container);

/* The next member (key: the quoted key's bytes, quotes included) or element (key may be NULL).
 * Returns 1, or 0 after the last one. */
int jscan_next(struct jscan_iter *it, struct jscan *key, struct jscan *val);

/* Whether a member's key (from jscan_next) decodes to name, compared as cJSON_GetObjectItemCaseSensitive
 * does, or ignoring ASCII case as cJSON_GetObjectItem does when nocase is set. */
int jscan_key_is(struct jscan key, const char *name, int nocase);

/* In one pass over obj: vals[i] gets the first member named names[i] (case-sensitive), or a value
 * with p NULL when there is none or obj is not an object. */
void jscan_find(const struct jscan_doc *d, struct jscan obj, const char *const *names, size_t n,
                struct jscan *vals);

/* The elements of an array (0 for anything else), as cJSON_GetArraySize counts them. */
size_t jscan_count(const struct jscan_doc *d, struct jscan arr);

/* The typed getters of lib/json.h over a value (one that jscan_find found): same defaults, same
 * conversions (jscan_num as json_num). jscan_int reads a number as cJSON stores it (strtod) and gives def for one outside
 * long long's range; jscan_obj and jscan_arr give "no value" for a value of another type. */
long long jscan_int(struct jscan v, long long def);
double jscan_num(struct jscan v, double def);
int jscan_bool(struct jscan v, int def);
struct jscan jscan_obj(struct jscan v);
struct jscan jscan_arr(struct jscan v);

#endif
