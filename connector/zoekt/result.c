/* result.c: see result.h. */
#include "connector/zoekt/result.h"

#include "buf.h"
#include "jscan.h"
#include "json.h"
#include "mem.h"
#include "rfc3339.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* U+FFFD REPLACEMENT CHARACTER, shown in place of bytes that cannot be printed. */
#define ZR_REPLACEMENT "\xef\xbf\xbd"

/* Each base64 character's value plus one; 0 for every byte that is not one. A table, because decoding
 * Zoekt's answers is a good part of the connector's time per search. */
static const unsigned char zr_b64[256] = {
    ['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7, ['H'] = 8, ['I'] = 9,
    ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17,
    ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25,
    ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33,
    ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41,
    ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
    ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56, ['4'] = 57,
    ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64
};

unsigned char *zr_base64_decode(const char *in, size_t len, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)in;
    unsigned char *out;
    size_t o = 0, full;

    if (len % 4 != 0)
        return NULL;
    out = mem_alloc(len / 4 * 3 + 1);
    /* Every quad but the last has no padding: four table look-ups each. */
    full = len >= 4 ? len - 4 : 0;
    for (size_t i = 0; i < full; i += 4) {
        unsigned a = zr_b64[p[i]], b = zr_b64[p[i + 1]], c = zr_b64[p[i + 2]], d = zr_b64[p[i + 3]];

        if (!a || !b || !c || !d)
            goto bad;
        a--, b--, c--, d--;
        out[o++] = (unsigned char)(a << 2 | b >> 4);
        out[o++] = (unsigned char)((b & 0xf) << 4 | c >> 2);
        out[o++] = (unsigned char)((c & 0x3) << 6 | d);
    }
    if (len) {
        const unsigned char *q = p + full;
        int pad = (q[3] == '=') + (q[3] == '=' && q[2] == '=');
        unsigned a = zr_b64[q[0]], b = zr_b64[q[1]], c = pad < 2 ? zr_b64[q[2]] : 1, d = pad < 1 ? zr_b64[q[3]] : 1;

        if (!a || !b || !c || !d)
            goto bad;
        a--, b--, c--, d--;
        out[o++] = (unsigned char)(a << 2 | b >> 4);
        if (pad < 2)
            out[o++] = (unsigned char)((b & 0xf) << 4 | c >> 2);
        if (pad < 1)
            out[o++] = (unsigned char)((c & 0x3) << 6 | d);
    }
    out[o] = '\0';
    *out_len = o;
    return out;
bad:
    free(out);
    return NULL;
}

/* Length of the printable character at in (at most n bytes), or 0 when it must be replaced. */
static size_t zr_printable_len(const unsigned char *in, size_t n)
{
    size_t k = json_utf8_len(in, n);

    if (k == 1 && ((in[0] < 0x20 && in[0] != '\t') || in[0] == 0x7f))
        return 0;
    return k;
}

/* Where a match starts and ends in a text being sanitised: offsets into the input, each turned into
 * the offset into the output once sanitising reaches it. */
#define ZR_AT 2
struct zr_at {
    size_t in[ZR_AT];  /* offsets into the input, then into the output */
    int done[ZR_AT];
};

/* The input bytes [from, to) were written from output offset out on: byte for byte (copied, an ASCII
 * run), or as one character (kept whole or replaced). Each offset not yet turned that lies before to
 * becomes the output offset of its byte, or of its character's start. */
static void zr_at_move(struct zr_at *at, size_t from, size_t to, size_t out, int copied)
{
    for (int k = 0; k < ZR_AT; k++) {
        if (at->done[k] || at->in[k] >= to)
            continue;
        at->in[k] = out + (copied ? at->in[k] - from : 0);
        at->done[k] = 1;
    }
}

/* Appends in (len bytes) made safe to print, as zr_sanitize describes, without a terminator; at (may
 * be NULL) has its input offsets turned into offsets into what was appended, an offset at or past the
 * end becoming the appended length. Returns buf_append's code. */
static int zr_sanitize_into(struct buf *b, const unsigned char *in, size_t len, struct zr_at *at)
{
    size_t base = b->len;
    int rc = ZK_OK;

    if (len && in[len - 1] == '\r')
        len--;
    for (size_t i = 0; !rc && i < len;) {
        size_t run = i, k;

        /* Most lines are printable ASCII throughout: such a run is measured byte by byte and copied
         * at once. */
        while (run < len && ((in[run] >= 0x20 && in[run] < 0x7f) || in[run] == '\t'))
            run++;
        if (at)
            zr_at_move(at, i, run, b->len - base, 1);
        if (run > i && (rc = buf_append(b, in + i, run - i)))
            break;
        if ((i = run) == len)
            break;
        k = zr_printable_len(in + i, len - i);
        if (at)
            zr_at_move(at, i, i + (k ? k : 1), b->len - base, 0);
        rc = k ? buf_append(b, in + i, k) : buf_append(b, ZR_REPLACEMENT, sizeof(ZR_REPLACEMENT) - 1);
        i += k ? k : 1;
    }
    if (at)
        zr_at_move(at, 0, (size_t)-1, b->len - base, 0);
    return rc;
}

/* What sanitising can make of one byte: at most the three bytes of U+FFFD. */
#define ZR_SANITIZE_GROWTH 3

char *zr_sanitize(const unsigned char *in, size_t len)
{
    struct buf b;

    buf_init(&b, ZR_SANITIZE_GROWTH * len);
    if (zr_sanitize_into(&b, in, len, NULL))
        abort(); /* cannot happen: the bound is what sanitising can make of len bytes */
    return buf_steal(&b);
}

const char *zr_strip_prefix(const char *name, const char *mirror_prefix)
{
    size_t n;

    if (!name || !mirror_prefix || !*mirror_prefix)
        return name;
    n = strlen(mirror_prefix);
    return strncmp(name, mirror_prefix, n) == 0 && name[n] ? name + n : name;
}

/* Copies a name or other short text from Zoekt, made safe to print like file contents: a file name
 * with a newline in it must not break the line-oriented output. */
static char *zr_strdup(const char *s)
{
    return s ? zr_sanitize((const unsigned char *)s, strlen(s)) : mem_strdup("");
}

/* ---- lines ---------------------------------------------------------------------------------------- */

/* A line while a file's lines are gathered: its text is at off in the gathering's text block, and a
 * matching line's first match at [at, at_end) of that text (both 0: not known). */
struct zr_pending {
    int number, is_match, undecodable;
    size_t off, at, at_end;
};

/* The lines of one file before sorting and merging, and the block their texts are written to, each
 * NUL-terminated: one allocation for all the text of a file instead of one per line (a search decodes
 * hundreds of lines). */
struct zr_lines {
    struct zr_pending *v;
    size_t n, cap;
    struct buf text;
};

/* The most text a file's lines can hold for an answer of len bytes: what base64 decodes to is three
 * quarters of the answer at most, sanitising makes at most three bytes of one, and each line adds a
 * terminator and comes from at least one byte of the answer. */
#define ZR_TEXT_MAX(len) (4 * (len) + 1)

static void zr_lines_init(struct zr_lines *l, size_t answer_len)
{
    memset(l, 0, sizeof(*l));
    buf_init(&l->text, ZR_TEXT_MAX(answer_len));
}

static void zr_lines_free(struct zr_lines *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
    buf_free(&l->text);
}

/* The largest line number believed. No indexed file comes near it (Zoekt skips files over 2 MiB by
 * default), and the headroom below INT_MAX keeps "line + context" and "start + lines in a chunk"
 * from overflowing whatever a broken or hostile server sends. */
#define ZR_LINE_MAX 100000000

/* The LineNumber member of obj, or def when it is missing or outside 1..ZR_LINE_MAX (then callers
 * skip the line: 0 is never a content line). */
static int zr_line_clamp(long long n, int def)
{
    return n >= 1 && n <= ZR_LINE_MAX ? (int)n : (def >= 1 && def <= ZR_LINE_MAX ? def : 0);
}

static int zr_line_number(const cJSON *obj, int def)
{
    return zr_line_clamp(json_int(obj, "LineNumber", def), def);
}


/* Adds a line. at (may be NULL) is where in text, as bytes [at->in[0], at->in[1]), its first match
 * lies. */
static int zr_lines_add(struct zr_lines *l, int number, const unsigned char *text, size_t len, int is_match,
                        int undecodable, struct zr_at *at)
{
    struct zr_pending *line;
    int rc;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        l->v = mem_realloc(l->v, cap * sizeof(*l->v));
        l->cap = cap;
    }
    line = &l->v[l->n];
    line->off = l->text.len;
    if (undecodable)
        at = NULL;
    if ((!undecodable && (rc = zr_sanitize_into(&l->text, text, len, at))) || (rc = buf_putc(&l->text, '\0')))
        return rc;
    line->at = at ? at->in[0] : 0;
    line->at_end = at ? at->in[1] : 0;
    line->number = number;
    line->is_match = is_match;
    line->undecodable = undecodable;
    l->n++;
    return ZK_OK;
}

static int zr_line_cmp(const void *a, const void *b)
{
    const struct zr_pending *x = a, *y = b;

    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    /* Among duplicates the matching one sorts first, so it is the one kept. */
    return y->is_match - x->is_match;
}

/* Sorts the lines, keeps one per number (a match wins over context) and hands them and their texts to
 * f. l is freed. */
static void zr_lines_finish(struct zr_lines *l, struct zr_file *f)
{
    size_t keep = 0;
    int sorted = 1;

    /* The lines of one chunk, and chunks in the order of the file, come sorted already. glibc's qsort
     * is a stable merge sort, so leaving sorted lines as they are keeps the same ones. */
    for (size_t i = 1; sorted && i < l->n; i++)
        sorted = zr_line_cmp(&l->v[i - 1], &l->v[i]) <= 0;
    if (!sorted)
        qsort(l->v, l->n, sizeof(*l->v), zr_line_cmp);
    for (size_t i = 0; i < l->n; i++) {
        if (keep && l->v[keep - 1].number == l->v[i].number) {
            struct zr_pending *kept = &l->v[keep - 1];

            /* A line in two chunks, or matching in one and context in another: the position of the
             * match that is known wins, if it lies within the text kept. Zoekt sends one line the same
             * text each time; an answer that does not must not point past the line shown. */
            if (l->v[i].is_match && kept->at_end == 0 && l->v[i].at_end <= strlen(l->text.data + kept->off)) {
                kept->at = l->v[i].at;
                kept->at_end = l->v[i].at_end;
            }
            kept->is_match |= l->v[i].is_match;
            continue;
        }
        l->v[keep++] = l->v[i];
    }
    f->n_match_lines = 0;
    if (keep) {
        f->lines = mem_alloc(keep * sizeof(*f->lines));
        f->texts = buf_steal(&l->text);
    }
    for (size_t i = 0; i < keep; i++) {
        f->lines[i].number = l->v[i].number;
        f->lines[i].text = f->texts + l->v[i].off;
        f->lines[i].is_match = l->v[i].is_match;
        f->lines[i].undecodable = l->v[i].undecodable;
        f->lines[i].match_start = l->v[i].is_match ? l->v[i].at : 0;
        f->lines[i].match_end = l->v[i].is_match ? l->v[i].at_end : 0;
        f->n_match_lines += l->v[i].is_match ? 1 : 0;
    }
    f->n_lines = keep;
    zr_lines_free(l);
}

/* Decodes a base64 text: s is the member's string, or NULL when the member is not a string. Returns 1
 * with *data (heap; caller frees) when it decoded, 0 when the text is empty, -1 when it is not valid
 * base64 or not a string. */
static int zr_b64_text(const char *s, size_t n, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!s)
        return -1;
    if (!n)
        return 0;
    *data = zr_base64_decode(s, n, len);
    return *data ? 1 : -1;
}

/* A base64 member of a cJSON object: as zr_b64, and 0 when the member is missing or null. */
static int zr_member_b64(const cJSON *obj, const char *key, unsigned char **data, size_t *len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    *data = NULL;
    *len = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    return zr_b64_text(cJSON_IsString(v) ? v->valuestring : NULL, cJSON_IsString(v) && v->valuestring ?
                  strlen(v->valuestring) : 0, data, len);
}

/* Adds the context lines in text (Before when before is set, else After) around line `at`.
 * Two encodings exist: older Zoekt sends the lines joined by "\n" with no final newline, newer Zoekt
 * ends every line with "\n" (then the matching Line ends with one too, which is how terminated is
 * known). The count of lines is then bounded by the context the request asked for. */
static int zr_add_context(struct zr_lines *l, const unsigned char *text, size_t len, int at, int before,
                          int terminated, int ctx)
{
    size_t starts[64], lens[64], count = 0, first = 0, pos = 0;
    int rc = ZK_OK;

    if (len == 0)
        return ZK_OK;
    if (terminated && text[len - 1] == '\n')
        len--;
    for (;;) {
        const unsigned char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;

        if (count == 64) {
            /* More lines than any request may ask for: keep the ones nearest the match. */
            if (!before)
                break;
            memmove(starts, starts + 1, 63 * sizeof(*starts));
            memmove(lens, lens + 1, 63 * sizeof(*lens));
            count--;
        }
        starts[count] = pos;
        lens[count] = end - pos;
        count++;
        if (!nl)
            break;
        pos = end + 1;
    }
    if (ctx >= 0) {
        while (count > (size_t)ctx && lens[count - 1] == 0)
            count--;
        if (count > (size_t)ctx) {
            if (before)
                first = count - (size_t)ctx;
            else
                count = (size_t)ctx;
        }
    }
    if (before && count - first > (size_t)(at > 1 ? at - 1 : 0))
        first = count - (size_t)(at > 1 ? at - 1 : 0);
    for (size_t i = first; !rc && i < count; i++) {
        int number = before ? at - (int)(count - i) : at + 1 + (int)(i - first);

        rc = zr_lines_add(l, number, text + starts[i], lens[i], 0, 0, NULL);
    }
    return rc;
}

/* What is read of one LineMatch, by either reader: its line number (zr_line_number's rules), whether
 * it matched the file name, how many LineFragments it has, and, only when zr_line_wants_text says
 * so, its Line, Before and After as zr_b64_text gives them (owned here until zr_add_line_match frees them)
 * and where in Line its first fragment lies (frag_len -1: no fragment says). */
struct zr_line_match {
    int number, file_name;
    size_t frags;
    int got[3];
    unsigned char *text[3];
    size_t len[3];
    long long frag_off, frag_len;
};

/* Takes a fragment's LineOffset and MatchLength into m when it comes before the one m holds. */
static void zr_line_fragment(struct zr_line_match *m, long long off, long long len)
{
    if (off >= 0 && len >= 0 && (m->frag_len < 0 || off < m->frag_off)) {
        m->frag_off = off;
        m->frag_len = len;
    }
}

enum { ZR_LINE, ZR_BEFORE, ZR_AFTER };

/* Whether a LineMatch's text is shown, or the match only counted. */
static int zr_line_wants_text(const struct zr_line_match *m, size_t matching, int cap)
{
    return !m->file_name && m->number > 0 && !(cap > 0 && matching >= (size_t)cap);
}

/* One LineMatch: a matching line with its own context. Once the file has `cap` matching lines (0: no
 * cap), the line is only counted, into *uncounted. Frees m's texts. */
static int zr_add_line_match(struct zr_lines *l, struct zr_file *f, struct zr_line_match *m, int ctx,
                             size_t *matching, int cap, size_t *uncounted)
{
    size_t line_len = m->len[ZR_LINE];
    struct zr_at at = {{0, 0}, {0, 0}};
    int terminated, rc = ZK_OK;

    f->n_matches += m->frags > 0 ? m->frags : 1;
    if (m->file_name || m->number <= 0)
        f->name_match = 1;
    else if (cap > 0 && *matching >= (size_t)cap)
        (*uncounted)++;
    if (!zr_line_wants_text(m, *matching, cap))
        return ZK_OK;
    (*matching)++;
    terminated = m->got[ZR_LINE] == 1 && line_len && m->text[ZR_LINE][line_len - 1] == '\n';
    if (terminated)
        line_len--;
    for (int i = 0; i < 3; i++)
        if (m->got[i] < 0)
            f->undecodable = 1;
    /* A fragment past the line's end is not believed: the line is then shown from its start. */
    if (m->frag_len >= 0 && (unsigned long long)m->frag_off <= line_len) {
        at.in[0] = (size_t)m->frag_off;
        at.in[1] = (unsigned long long)m->frag_len < line_len - at.in[0] ? at.in[0] + (size_t)m->frag_len : line_len;
    }
    rc = zr_lines_add(l, m->number, m->text[ZR_LINE] ? m->text[ZR_LINE] : (const unsigned char *)"", line_len, 1,
                      m->got[ZR_LINE] < 0, m->frag_len >= 0 && at.in[1] ? &at : NULL);
    if (!rc && m->got[ZR_BEFORE] > 0)
        rc = zr_add_context(l, m->text[ZR_BEFORE], m->len[ZR_BEFORE], m->number, 1, terminated, ctx);
    if (!rc && m->got[ZR_AFTER] > 0)
        rc = zr_add_context(l, m->text[ZR_AFTER], m->len[ZR_AFTER], m->number, 0, terminated, ctx);
    for (int i = 0; i < 3; i++)
        free(m->text[i]);
    return rc;
}

/* Marks lines first..last as matching among the chunk's lines, which are l->v[chunk_first...] numbered
 * from start on, one after the other. Returns how many were not marked before. */
static size_t zr_mark(struct zr_lines *l, size_t chunk_first, int start, int first, int last)
{
    size_t marked = 0;

    if (first < start)
        first = start;
    for (long long n = first; n <= last && chunk_first + (size_t)(n - start) < l->n; n++) {
        struct zr_pending *line = &l->v[chunk_first + (size_t)(n - start)];

        marked += !line->is_match;
        line->is_match = 1;
    }
    return marked;
}

/* One element of a ChunkMatch's Ranges: Start's line, End's line (Start's when End has none), the
 * column End is at, which is exclusive: a range that ends at column 1 stops before that line, and the
 * byte offsets in the file of Start and End (-1 when not given). An element that is not an object
 * reads as zeros and no offsets. */
struct zr_range {
    int first, last;
    long long end_col, start_byte, end_byte;
};

/* The last line a range covers: one that ends at column 1 stops before its End's line. */
static int zr_range_last(const struct zr_range *r)
{
    return r->last > r->first && r->end_col == 1 ? r->last - 1 : r->last;
}

/* What is read of one ChunkMatch, by either reader: ContentStart's line and byte offset (-1 when not
 * given), whether it matched the file name, its ranges (in a buffer the reader reuses), and, only when
 * zr_chunk_wants_content says so, its Content as zr_b64_text gives it (freed by zr_add_chunk). */
struct zr_chunk {
    int start, file_name;
    long long start_byte;
    struct zr_range *ranges;
    size_t n_ranges, cap_ranges;
    int got;
    unsigned char *content;
    size_t len;
};

/* Sets c's range count to n, making room for them. */
static void zr_chunk_ranges(struct zr_chunk *c, size_t n)
{
    if (n > c->cap_ranges) {
        size_t cap = n > 2 * c->cap_ranges ? n : 2 * c->cap_ranges;

        c->ranges = mem_realloc(c->ranges, cap * sizeof(*c->ranges));
        c->cap_ranges = cap;
    }
    c->n_ranges = n;
}

static int zr_chunk_wants_content(const struct zr_chunk *c, size_t matching, int cap)
{
    return !c->file_name && c->start > 0 && !(cap > 0 && matching >= (size_t)cap);
}

/* The matching lines of a chunk that is not decoded: its ranges' lines, each counted once. */
static size_t zr_count_range_lines(const struct zr_chunk *c)
{
    size_t n = 0;
    int seen = 0;

    for (size_t i = 0; i < c->n_ranges; i++) {
        const struct zr_range *r = &c->ranges[i];
        int first = r->first, last = zr_range_last(r);

        if (first <= seen)
            first = seen + 1;
        if (first > 0 && last >= first) {
            n += (size_t)(last - first + 1);
            seen = last;
        }
    }
    return n;
}

/* Where on line `number` of chunk c (whose bytes begin at byte line_at of the file, len of them) the
 * first range that covers it lies, into at; 0 when no range does or Zoekt's offsets do not fall on the
 * line. Zoekt sends a chunk's ranges sorted by offset, so *next, the first range that may still cover
 * this line or a later one, only moves forward. */
static int zr_chunk_at(const struct zr_chunk *c, size_t *next, int number, long long line_at, size_t len,
                       struct zr_at *at)
{
    const struct zr_range *r;
    long long a, b;

    while (*next < c->n_ranges && zr_range_last(&c->ranges[*next]) < number)
        (*next)++;
    if (c->start_byte < 0 || *next == c->n_ranges || (r = &c->ranges[*next])->first > number || r->first <= 0)
        return 0;
    a = r->first == number ? r->start_byte - line_at : 0;
    b = r->last == number ? r->end_byte - line_at : (long long)len;
    if (a < 0 || a > (long long)len || b < a)
        return 0;
    memset(at, 0, sizeof(*at));
    at->in[0] = (size_t)a;
    at->in[1] = b < (long long)len ? (size_t)b : len;
    return 1;
}

/* One ChunkMatch: whole lines of content, with the matches given as ranges. Once the file has
 * `cap` matching lines (0: no cap), a chunk's matching lines are only counted, into *uncounted.
 * Frees c's content. */
static int zr_add_chunk(struct zr_lines *l, struct zr_file *f, struct zr_chunk *c, size_t *matching, int cap,
                        size_t *uncounted)
{
    size_t len = c->len, pos = 0, first_index = l->n, next = 0;
    int number, rc = ZK_OK;

    f->n_matches += c->n_ranges > 0 ? c->n_ranges : 1;
    if (c->file_name || c->start <= 0) {
        f->name_match = 1;
        return ZK_OK;
    }
    if (cap > 0 && *matching >= (size_t)cap) {
        *uncounted += zr_count_range_lines(c);
        return ZK_OK;
    }
    if (c->got < 0) {
        /* Without the content only the line numbers of the matches are known. */
        f->undecodable = 1;
        for (size_t i = 0; !rc && i < c->n_ranges; i++) {
            if (c->ranges[i].first > 0) {
                rc = zr_lines_add(l, c->ranges[i].first, NULL, 0, 1, 1, NULL);
                *matching += !rc;
            }
        }
        return rc;
    }
    if (len && c->content[len - 1] == '\n')
        len--;
    for (number = c->start; !rc && c->got > 0; number++) {
        const unsigned char *nl = memchr(c->content + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - c->content) : len;
        struct zr_at at;

        rc = zr_lines_add(l, number, c->content + pos, end - pos, 0, 0,
                          zr_chunk_at(c, &next, number, c->start_byte + (long long)pos, end - pos, &at) ? &at : NULL);
        if (!nl)
            break;
        pos = end + 1;
    }
    for (size_t i = 0; i < c->n_ranges; i++) {
        const struct zr_range *r = &c->ranges[i];

        if (r->first > 0)
            *matching += zr_mark(l, first_index, c->start, r->first, zr_range_last(r));
    }
    free(c->content);
    c->content = NULL;
    return rc;
}

/* ---- the cJSON reader ------------------------------------------------------------------------------ */

static void zr_tree_line_match(const cJSON *lm, struct zr_line_match *m, size_t matching, int cap)
{
    static const char *const keys[] = {"Line", "Before", "After"};
    const cJSON *frags = json_arr(lm, "LineFragments");

    const cJSON *frag;

    memset(m, 0, sizeof(*m));
    m->frag_len = -1;
    m->number = zr_line_number(lm, 0);
    m->file_name = json_bool(lm, "FileName", 0);
    m->frags = frags && cJSON_GetArraySize(frags) > 0 ? (size_t)cJSON_GetArraySize(frags) : 0;
    if (!zr_line_wants_text(m, matching, cap))
        return;
    for (int i = 0; i < 3; i++)
        m->got[i] = zr_member_b64(lm, keys[i], &m->text[i], &m->len[i]);
    cJSON_ArrayForEach(frag, frags)
        zr_line_fragment(m, json_int(frag, "LineOffset", -1), json_int(frag, "MatchLength", -1));
}

static void zr_tree_chunk(const cJSON *cm, struct zr_chunk *c, size_t matching, int cap)
{
    const cJSON *ranges = json_arr(cm, "Ranges"), *r;
    size_t i = 0;

    c->start = zr_line_number(json_obj(cm, "ContentStart"), 0);
    c->start_byte = json_int(json_obj(cm, "ContentStart"), "ByteOffset", -1);
    c->file_name = json_bool(cm, "FileName", 0);
    c->got = 0;
    c->content = NULL;
    c->len = 0;
    zr_chunk_ranges(c, ranges ? (size_t)cJSON_GetArraySize(ranges) : 0);
    cJSON_ArrayForEach(r, ranges) {
        const cJSON *e = json_obj(r, "End");

        c->ranges[i].first = zr_line_number(json_obj(r, "Start"), 0);
        c->ranges[i].last = zr_line_number(e, c->ranges[i].first);
        c->ranges[i].end_col = json_int(e, "Column", 0);
        c->ranges[i].start_byte = json_int(json_obj(r, "Start"), "ByteOffset", -1);
        c->ranges[i].end_byte = json_int(e, "ByteOffset", -1);
        i++;
    }
    if (zr_chunk_wants_content(c, matching, cap))
        c->got = zr_member_b64(cm, "Content", &c->content, &c->len);
}

static void zr_symbol_free(struct zr_symbol *y);

static void zr_file_free(struct zr_file *f)
{
    free(f->url);
    free(f->repo);
    free(f->path);
    free(f->version);
    free(f->language);
    for (size_t i = 0; i < f->n_branches; i++)
        free(f->branches[i]);
    free(f->branches);
    free(f->lines);
    free(f->texts);
    free(f->content);
    for (size_t i = 0; i < f->n_symbols; i++)
        zr_symbol_free(&f->symbols[i]);
    free(f->symbols);
}

static void zr_symbol_free(struct zr_symbol *y)
{
    free(y->sym);
    free(y->kind);
    free(y->parent);
    free(y->parent_kind);
}

/* Appends to f the symbol of a range starting on line, taking the four strings. */
static void zr_symbol_add(struct zr_file *f, int line, char *const fields[4])
{
    struct zr_symbol *x;

    f->symbols = mem_realloc(f->symbols, (f->n_symbols + 1) * sizeof(*f->symbols));
    x = &f->symbols[f->n_symbols++];
    x->line = line;
    x->sym = fields[0];
    x->kind = fields[1];
    x->parent = fields[2];
    x->parent_kind = fields[3];
}

static const char *const zr_symbol_names[4] = {"Sym", "Kind", "Parent", "ParentKind"};

/* The SymbolInfo array of a ChunkMatch, parallel to its Ranges (c, as zr_tree_chunk read it): each
 * object element becomes a symbol of f at its range's line. */
static void zr_tree_symbols(const cJSON *cm, const struct zr_chunk *c, struct zr_file *f)
{
    const cJSON *si = json_arr(cm, "SymbolInfo"), *e;
    size_t i = 0;

    if (c->file_name || c->start <= 0)
        return;
    for (e = si ? si->child : NULL; e && i < c->n_ranges; e = e->next, i++) {
        char *fields[4];

        if (!cJSON_IsObject(e) || c->ranges[i].first <= 0)
            continue;
        for (int k = 0; k < 4; k++)
            fields[k] = zr_strdup(json_str(e, zr_symbol_names[k], ""));
        zr_symbol_add(f, c->ranges[i].first, fields);
    }
}

/* The file's repository, path, commit, language, branches and, for Whole: true, its content. */
static void zr_file_meta(const cJSON *fm, const struct zr_opts *o, struct zr_file *f)
{
    const cJSON *branches = json_arr(fm, "Branches"), *it;
    const char *repo = json_str(fm, "Repository", json_str(fm, "Repo", "")), *content;

    f->repo = zr_strdup(zr_strip_prefix(repo, o->mirror_prefix));
    f->path = zr_strdup(json_str(fm, "FileName", ""));
    f->version = zr_strdup(json_str(fm, "Version", ""));
    f->language = zr_strdup(json_str(fm, "Language", ""));
    f->score = json_num(fm, "Score", 0);
    if (branches && cJSON_GetArraySize(branches) > 0) {
        f->branches = mem_calloc((size_t)cJSON_GetArraySize(branches), sizeof(*f->branches));
        cJSON_ArrayForEach(it, branches)
            if (cJSON_IsString(it))
                f->branches[f->n_branches++] = zr_strdup(it->valuestring);
    }
    content = json_str(fm, "Content", NULL);
    if (content) {
        f->has_content = 1;
        f->content = zr_base64_decode(content, strlen(content), &f->content_len);
        f->undecodable |= !f->content;
    }
}

/* Ends a file: on success hands it the lines the matches left, the matching lines only counted joining
 * its count; on failure (rc, a line that outgrew the text's bound, which ZR_TEXT_MAX rules out) undoes
 * the file. lines is freed either way. */
static int zr_file_finish(struct zr_lines *lines, size_t uncounted, struct zr_file *f, int rc, struct zk_err *err)
{
    if (rc) {
        zr_lines_free(lines);
        zr_file_free(f);
        memset(f, 0, sizeof(*f));
        return zk_err_set(err, rc, "a file match's text is longer than the answer allows");
    }
    zr_lines_finish(lines, f);
    f->n_match_lines += uncounted;
    return ZK_OK;
}

/* A file match of an answer of answer_len bytes, through its cJSON tree. */
static int zr_parse_file(const cJSON *fm, size_t answer_len, const struct zr_opts *o, struct zr_file *f,
                         struct zk_err *err)
{
    const cJSON *lms = json_arr(fm, "LineMatches"), *cms = json_arr(fm, "ChunkMatches"), *it;
    size_t matching = 0, uncounted = 0;
    struct zr_lines lines;
    struct zr_chunk c = {0};
    int rc;

    memset(f, 0, sizeof(*f));
    zr_lines_init(&lines, answer_len);
    zr_file_meta(fm, o, f);
    rc = ZK_OK;
    for (it = lms ? lms->child : NULL; !rc && it; it = it->next) {
        struct zr_line_match m;

        if (!cJSON_IsObject(it))
            continue;
        zr_tree_line_match(it, &m, matching, o->match_lines);
        rc = zr_add_line_match(&lines, f, &m, o->context_lines, &matching, o->match_lines, &uncounted);
    }
    for (it = cms ? cms->child : NULL; !rc && it; it = it->next) {
        if (!cJSON_IsObject(it))
            continue;
        zr_tree_chunk(it, &c, matching, o->match_lines);
        zr_tree_symbols(it, &c, f);
        rc = zr_add_chunk(&lines, f, &c, &matching, o->match_lines, &uncounted);
    }
    free(c.ranges);
    return zr_file_finish(&lines, uncounted, f, rc, err);
}

/* Describes a body that is not what was expected, quoting its start so the cause is visible. */
static int zr_bad_body(const char *body, size_t len, const char *what, struct zk_err *err)
{
    char start[120];

    zr_error_text(body, len, start, sizeof(start));
    return zk_err_set(err, ZK_EPARSE, "%s (%zu bytes, starting \"%s\")", what, len, start);
}

static const char zr_msg_not_json[] = "the search answer is not valid JSON (truncated or not from Zoekt)";
static const char zr_msg_no_result[] = "the search answer has no \"Result\" object";
static const char zr_msg_files_type[] = "the search answer's \"Files\" is neither an array nor null";
static const char zr_msg_file_type[] = "the search answer has a file entry that is not an object";

int zr_parse_search_tree(const char *body, size_t len, const struct zr_opts *o, struct zr_search *out,
                         struct zk_err *err)
{
    static const struct zr_opts defaults = {NULL, -1, 0};
    const cJSON *res, *files, *fm;
    cJSON *root;
    int rc = ZK_OK;

    memset(out, 0, sizeof(*out));
    if (!o)
        o = &defaults;
    root = json_parse(body, len);
    if (!root)
        return zr_bad_body(body, len, zr_msg_not_json, err);
    res = json_obj(root, "Result");
    if (!res && cJSON_IsObject(root) && (cJSON_HasObjectItem(root, "Files") || cJSON_HasObjectItem(root, "FileCount")))
        res = root; /* a bare SearchResult, as /healthz sends it */
    if (!res) {
        rc = zr_bad_body(body, len, zr_msg_no_result, err);
        goto out;
    }
    out->stats.file_count = json_int(res, "FileCount", 0);
    out->stats.match_count = json_int(res, "MatchCount", 0);
    out->stats.files_skipped = json_int(res, "FilesSkipped", 0);
    out->stats.shards_skipped = json_int(res, "ShardsSkipped", 0);
    out->stats.crashes = json_int(res, "Crashes", 0);
    out->stats.flush_reason = json_int(res, "FlushReason", 0);
    out->stats.duration_ns = json_int(res, "Duration", 0);
    files = json_arr(res, "Files");
    if (!files)
        files = json_arr(res, "FileMatches");
    if (!files) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, "Files");

        if (v && !cJSON_IsNull(v))
            rc = zr_bad_body(body, len, zr_msg_files_type, err);
        goto out; /* null or omitted: no files */
    }
    if (cJSON_GetArraySize(files) > 0)
        out->files = mem_calloc((size_t)cJSON_GetArraySize(files), sizeof(*out->files));
    cJSON_ArrayForEach(fm, files) {
        if (!cJSON_IsObject(fm)) {
            rc = zr_bad_body(body, len, zr_msg_file_type, err);
            goto out;
        }
        rc = zr_parse_file(fm, len, o, &out->files[out->n_files], err);
        if (rc)
            goto out;
        if (json_arr(fm, "ChunkMatches"))
            out->chunk_matches = 1;
        out->n_files++;
    }
out:
    cJSON_Delete(root);
    return rc;
}

/* ---- the search answer through the scanner --------------------------------------------------------- */

/* The members of a file match the scanner reads, in the order of zr_scan_file's found[]. */
enum {
    ZR_FILE_REPOSITORY, ZR_FILE_REPO, ZR_FILE_NAME, ZR_FILE_VERSION, ZR_FILE_LANGUAGE, ZR_FILE_BRANCHES,
    ZR_FILE_CONTENT, ZR_FILE_LINE_MATCHES, ZR_FILE_CHUNK_MATCHES, ZR_FILE_SCORE, ZR_FILE_MEMBERS
};
static const char *const zr_file_names[ZR_FILE_MEMBERS] = {
    "Repository", "Repo", "FileName", "Version", "Language", "Branches", "Content", "LineMatches",
    "ChunkMatches", "Score"};

#define ZR_N(a) (sizeof(a) / sizeof((a)[0]))

/* A string value the scanner found, as cJSON's valuestring holds it (up to a NUL, where the C string
 * ends): *s and *n point into the answer when it has no escape; one with escapes goes to cJSON to be
 * unescaped, into *owned (the caller frees it with cJSON_Delete). Returns 1, or 0 when v is not a
 * string (or one cJSON does not take, which jscan_parse has ruled out). */
static int zr_scan_text(struct jscan v, const char **s, size_t *n, cJSON **owned)
{
    const char *nul;

    *owned = NULL;
    if (jscan_type(v) != JSCAN_STRING)
        return 0;
    *s = v.p + 1;
    *n = v.len - 2;
    if (memchr(*s, '\\', *n)) {
        if (!(*owned = json_parse(v.p, v.len)))
            return 0;
        *s = (*owned)->valuestring;
        *n = strlen(*s);
    } else if ((nul = memchr(*s, '\0', *n))) {
        *n = (size_t)(nul - *s);
    }
    return 1;
}

/* zr_strdup(json_str(obj, key, "")) over a value the scanner found, with the mirror prefix stripped
 * when prefix is set (as zr_strip_prefix): a heap string the caller frees. */
static char *zr_scan_strdup(struct jscan v, const char *prefix)
{
    size_t n = 0, skip = prefix ? strlen(prefix) : 0;
    const char *s = "";
    cJSON *owned;
    char *out;

    if (!zr_scan_text(v, &s, &n, &owned)) {
        s = "";
        n = 0;
    }
    if (skip && n > skip && memcmp(s, prefix, skip) == 0) {
        s += skip;
        n -= skip;
    }
    out = zr_sanitize((const unsigned char *)s, n);
    cJSON_Delete(owned);
    return out;
}

/* zr_file_meta over the members the scanner found: the same fields, by the same rules. */
static void zr_scan_meta(const struct jscan_doc *d, const struct jscan *found, const struct zr_opts *o,
                         struct zr_file *f)
{
    struct jscan repo = jscan_type(found[ZR_FILE_REPOSITORY]) == JSCAN_STRING ? found[ZR_FILE_REPOSITORY]
                                                                             : found[ZR_FILE_REPO];
    struct jscan branches = jscan_arr(found[ZR_FILE_BRANCHES]), b;
    size_t n_branches = jscan_count(d, branches), n;
    struct jscan_iter it;
    const char *content;
    cJSON *owned;

    f->repo = zr_scan_strdup(repo, o->mirror_prefix);
    f->path = zr_scan_strdup(found[ZR_FILE_NAME], NULL);
    f->version = zr_scan_strdup(found[ZR_FILE_VERSION], NULL);
    f->language = zr_scan_strdup(found[ZR_FILE_LANGUAGE], NULL);
    f->score = jscan_num(found[ZR_FILE_SCORE], 0);
    if (n_branches > 0) {
        f->branches = mem_calloc(n_branches, sizeof(*f->branches));
        jscan_iter_init(&it, d, branches);
        while (jscan_next(&it, NULL, &b))
            if (jscan_type(b) == JSCAN_STRING)
                f->branches[f->n_branches++] = zr_scan_strdup(b, NULL);
    }
    if (zr_scan_text(found[ZR_FILE_CONTENT], &content, &n, &owned)) {
        f->has_content = 1;
        f->content = zr_base64_decode(content, n, &f->content_len);
        f->undecodable |= !f->content;
    }
    cJSON_Delete(owned);
}

/* zr_member_b64 over a value the scanner found. */
static int zr_scan_b64(struct jscan v, unsigned char **data, size_t *len)
{
    enum jscan_type t = jscan_type(v);
    const char *s;
    cJSON *owned;
    size_t n;
    int got;

    *data = NULL;
    *len = 0;
    if (t == JSCAN_NONE || t == JSCAN_NULL)
        return 0;
    if (zr_scan_text(v, &s, &n, &owned) != 1)
        return -1;
    got = zr_b64_text(s, n, data, len);
    cJSON_Delete(owned);
    return got;
}

/* zr_line_number over a position the scanner found; *column gets its Column and *byte its ByteOffset
 * (-1 when not given), each only when not NULL: the members not asked for are not looked for, since
 * every range of every chunk goes through here. */
static int zr_scan_line_number(const struct jscan_doc *d, struct jscan pos, int def, long long *column,
                               long long *byte)
{
    const char *names[3] = {"LineNumber"};
    size_t n = 1, col_at = 0, byte_at = 0;
    struct jscan v[3];

    if (column)
        names[col_at = n++] = "Column";
    if (byte)
        names[byte_at = n++] = "ByteOffset";
    jscan_find(d, jscan_obj(pos), names, n, v);
    if (column)
        *column = jscan_int(v[col_at], 0);
    if (byte)
        *byte = jscan_int(v[byte_at], -1);
    return zr_line_clamp(jscan_int(v[0], def), def);
}

static void zr_scan_line_match(const struct jscan_doc *d, struct jscan lm, struct zr_line_match *m,
                               size_t matching, int cap)
{
    static const char *const names[] = {"Line", "Before", "After", "LineNumber", "FileName", "LineFragments"},
                             *const frag_names[] = {"LineOffset", "MatchLength"};
    struct jscan v[6], frag, fv[2];
    struct jscan_iter it;

    memset(m, 0, sizeof(*m));
    m->frag_len = -1;
    jscan_find(d, lm, names, 6, v);
    m->number = zr_line_clamp(jscan_int(v[3], 0), 0);
    m->file_name = jscan_bool(v[4], 0);
    m->frags = jscan_count(d, v[5]);
    if (!zr_line_wants_text(m, matching, cap))
        return;
    for (int i = 0; i < 3; i++)
        m->got[i] = zr_scan_b64(v[i], &m->text[i], &m->len[i]);
    jscan_iter_init(&it, d, jscan_arr(v[5]));
    while (jscan_next(&it, NULL, &frag)) {
        jscan_find(d, jscan_obj(frag), frag_names, 2, fv);
        zr_line_fragment(m, jscan_int(fv[0], -1), jscan_int(fv[1], -1));
    }
}

static void zr_scan_chunk(const struct jscan_doc *d, struct jscan cm, struct zr_chunk *c, size_t matching,
                          int cap, struct zr_file *f)
{
    static const char *const names[] = {"ContentStart", "FileName", "Ranges", "Content", "SymbolInfo"},
                             *const ends[] = {"Start", "End"};
    struct jscan v[5], r, se[2];
    struct jscan_iter it;
    size_t n = 0;
    int wants;

    jscan_find(d, cm, names, 5, v);
    c->start = zr_scan_line_number(d, v[0], 0, NULL, &c->start_byte);
    c->file_name = jscan_bool(v[1], 0);
    c->got = 0;
    c->content = NULL;
    c->len = 0;
    c->n_ranges = 0;
    /* A chunk only counted needs no byte offsets: they place a match on a line shown. */
    wants = zr_chunk_wants_content(c, matching, cap);
    jscan_iter_init(&it, d, jscan_arr(v[2]));
    while (jscan_next(&it, NULL, &r)) {
        struct zr_range *x;

        zr_chunk_ranges(c, n + 1);
        x = &c->ranges[n++];
        x->start_byte = x->end_byte = -1;
        jscan_find(d, r, ends, 2, se);
        x->first = zr_scan_line_number(d, se[0], 0, NULL, wants ? &x->start_byte : NULL);
        x->last = zr_scan_line_number(d, se[1], x->first, &x->end_col, wants ? &x->end_byte : NULL);
    }
    if (wants)
        c->got = zr_scan_b64(v[3], &c->content, &c->len);
    /* zr_tree_symbols over the scanner. */
    if (c->file_name || c->start <= 0)
        return;
    n = 0;
    jscan_iter_init(&it, d, jscan_arr(v[4]));
    while (n < c->n_ranges && jscan_next(&it, NULL, &r)) {
        struct jscan sv[4];
        char *fields[4];

        if (jscan_type(r) != JSCAN_OBJECT || c->ranges[n].first <= 0) {
            n++;
            continue;
        }
        jscan_find(d, r, zr_symbol_names, 4, sv);
        for (int k = 0; k < 4; k++)
            fields[k] = zr_scan_strdup(sv[k], NULL);
        zr_symbol_add(f, c->ranges[n++].first, fields);
    }
}

/* zr_parse_file over the scanner: the file's names and content as zr_scan_meta reads them, and its
 * matches, of which the text of those past the file's cap is not even looked at. *chunks is set when
 * the file has a ChunkMatches array. */
static int zr_scan_file(const struct jscan_doc *d, struct jscan fm, const struct zr_opts *o, struct zr_file *f,
                        int *chunks, struct zk_err *err)
{
    struct jscan found[ZR_FILE_MEMBERS], m;
    size_t matching = 0, uncounted = 0;
    struct zr_lines lines;
    struct zr_chunk c = {0};
    struct jscan_iter it;
    int rc;

    memset(f, 0, sizeof(*f));
    zr_lines_init(&lines, d->len);
    jscan_find(d, fm, zr_file_names, ZR_FILE_MEMBERS, found);
    zr_scan_meta(d, found, o, f);
    rc = ZK_OK;
    jscan_iter_init(&it, d, jscan_arr(found[ZR_FILE_LINE_MATCHES]));
    while (!rc && jscan_next(&it, NULL, &m)) {
        struct zr_line_match lm;

        if (jscan_type(m) != JSCAN_OBJECT)
            continue;
        zr_scan_line_match(d, m, &lm, matching, o->match_lines);
        rc = zr_add_line_match(&lines, f, &lm, o->context_lines, &matching, o->match_lines, &uncounted);
    }
    *chunks = jscan_arr(found[ZR_FILE_CHUNK_MATCHES]).p != NULL;
    jscan_iter_init(&it, d, jscan_arr(found[ZR_FILE_CHUNK_MATCHES]));
    while (!rc && jscan_next(&it, NULL, &m)) {
        if (jscan_type(m) != JSCAN_OBJECT)
            continue;
        zr_scan_chunk(d, m, &c, matching, o->match_lines, f);
        rc = zr_add_chunk(&lines, f, &c, &matching, o->match_lines, &uncounted);
    }
    free(c.ranges);
    return zr_file_finish(&lines, uncounted, f, rc, err);
}

/* jscan_parse of a Zoekt answer with its failures described for the agent: text that is not JSON gets
 * not_json and the start of the body, text too long for the parser names what the answer is. d is to
 * be freed with jscan_doc_free in every case. */
static int zr_scan_answer(struct jscan_doc *d, const char *body, size_t len, const char *what, const char *not_json,
                          struct jscan *root, struct zk_err *err)
{
    int rc = jscan_parse(d, body, len, root);

    if (rc == ZK_EPARSE)
        return zr_bad_body(body, len, not_json, err);
    if (rc)
        return zk_err_set(err, rc, "%s is longer than the parser takes", what);
    return ZK_OK;
}

/* cJSON_HasObjectItem: whether obj has a member whose key is name, ignoring ASCII case. */
static int zr_scan_has(const struct jscan_doc *d, struct jscan obj, const char *name)
{
    struct jscan key, val;
    struct jscan_iter it;

    jscan_iter_init(&it, d, obj);
    while (jscan_next(&it, &key, &val))
        if (jscan_key_is(key, name, 1))
            return 1;
    return 0;
}

/* The members of a search result read, in the order of zr_scan_result's v[]. */
static const char *const zr_result_names[] = {"FileCount", "MatchCount", "FilesSkipped", "ShardsSkipped",
                                              "Crashes",   "FlushReason", "Duration",    "Files",
                                              "FileMatches"};

static int zr_scan_result(const struct jscan_doc *d, struct jscan res, const char *body, size_t len,
                          const struct zr_opts *o, struct zr_search *out, struct zk_err *err)
{
    struct jscan v[ZR_N(zr_result_names)], files, fm;
    struct jscan_iter it;
    size_t n;
    int rc = ZK_OK, chunks = 0;

    jscan_find(d, res, zr_result_names, ZR_N(zr_result_names), v);
    out->stats.file_count = jscan_int(v[0], 0);
    out->stats.match_count = jscan_int(v[1], 0);
    out->stats.files_skipped = jscan_int(v[2], 0);
    out->stats.shards_skipped = jscan_int(v[3], 0);
    out->stats.crashes = jscan_int(v[4], 0);
    out->stats.flush_reason = jscan_int(v[5], 0);
    out->stats.duration_ns = jscan_int(v[6], 0);
    files = jscan_arr(v[7]);
    if (!files.p)
        files = jscan_arr(v[8]);
    if (!files.p)
        return jscan_type(v[7]) != JSCAN_NONE && jscan_type(v[7]) != JSCAN_NULL
                   ? zr_bad_body(body, len, zr_msg_files_type, err)
                   : ZK_OK;
    if ((n = jscan_count(d, files)) > 0)
        out->files = mem_calloc(n, sizeof(*out->files));
    jscan_iter_init(&it, d, files);
    while (!rc && jscan_next(&it, NULL, &fm)) {
        if (jscan_type(fm) != JSCAN_OBJECT) {
            rc = zr_bad_body(body, len, zr_msg_file_type, err);
            break;
        }
        rc = zr_scan_file(d, fm, o, &out->files[out->n_files], &chunks, err);
        if (!rc) {
            out->chunk_matches |= chunks;
            out->n_files++;
        }
    }
    return rc;
}

int zr_parse_search(const char *body, size_t len, const struct zr_opts *o, struct zr_search *out,
                    struct zk_err *err)
{
    static const struct zr_opts defaults = {NULL, -1, 0};
    static const char *const zr_result_key[] = {"Result"};
    struct jscan_doc d;
    struct jscan root, res;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = zr_scan_answer(&d, body, len, "the search answer", zr_msg_not_json, &root, err)))
        goto out;
    jscan_find(&d, root, zr_result_key, 1, &res);
    res = jscan_obj(res);
    if (!res.p && jscan_type(root) == JSCAN_OBJECT && (zr_scan_has(&d, root, "Files") || zr_scan_has(&d, root, "FileCount")))
        res = root; /* a bare SearchResult, as /healthz sends it */
    if (!res.p)
        rc = zr_bad_body(body, len, zr_msg_no_result, err);
    else
        rc = zr_scan_result(&d, res, body, len, o ? o : &defaults, out, err);
out:
    jscan_doc_free(&d);
    return rc;
}

void zr_search_keep_symbols(struct zr_search *s, int (*keep)(const struct zr_symbol *, void *), void *arg)
{
    size_t kept_files = 0;

    for (size_t i = 0; i < s->n_files; i++) {
        struct zr_file *f = &s->files[i];
        size_t kept = 0;

        for (size_t k = 0; k < f->n_symbols; k++) {
            if (keep(&f->symbols[k], arg))
                f->symbols[kept++] = f->symbols[k];
            else
                zr_symbol_free(&f->symbols[k]);
        }
        f->n_symbols = kept;
        if (kept)
            s->files[kept_files++] = *f;
        else
            zr_file_free(f);
    }
    s->n_files = kept_files;
}

static int zr_rank_cmp(const void *a, const void *b)
{
    const struct zr_file *x = a, *y = b;
    int c;

    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if ((c = strcmp(x->repo, y->repo)) || (c = strcmp(x->path, y->path)))
        return c;
    return strcmp(zr_file_branch(x), zr_file_branch(y));
}

void zr_rank(struct zr_search *s)
{
    if (s->n_files > 1)
        qsort(s->files, s->n_files, sizeof(*s->files), zr_rank_cmp);
}

int zr_rank_is_prefix(const struct zr_search *s, size_t n, size_t asked)
{
    if (s->n_files < asked || n >= s->n_files)
        return 1;
    return n == 0 || s->files[n - 1].score > s->files[s->n_files - 1].score;
}

void zr_search_truncate(struct zr_search *s, size_t n)
{
    while (s->n_files > n)
        zr_file_free(&s->files[--s->n_files]);
}

const char *zr_file_branch(const struct zr_file *f)
{
    return f->n_branches ? f->branches[0] : "";
}

void zr_shards_free(struct zr_shards *s)
{
    for (int k = 0; k < SHARD_MAX; k++)
        free(s->why[k]);
    memset(s, 0, sizeof(*s));
}

void zr_search_free(struct zr_search *s)
{
    for (size_t i = 0; i < s->n_files; i++)
        zr_file_free(&s->files[i]);
    free(s->files);
    zr_shards_free(&s->shards);
    memset(s, 0, sizeof(*s));
}

/* ---- /api/list ------------------------------------------------------------------------------------ */

void zr_repo_free(struct zr_repo *r)
{
    free(r->name);
    free(r->full_name);
    for (size_t i = 0; i < r->n_branches; i++) {
        free(r->branches[i].name);
        free(r->branches[i].version);
    }
    free(r->branches);
    free(r->latest_commit);
    free(r->zoekt_version);
    free(r->file_url_template);
    free(r->line_fragment_template);
}

/* A repository's branches, from the array v ("no value" or another type: none). */
static void zr_scan_branches(const struct jscan_doc *d, struct jscan v, struct zr_repo *r)
{
    static const char *const names[] = {"Name", "Version"};
    size_t n = jscan_count(d, jscan_arr(v));
    struct jscan_iter it;
    struct jscan b, bv[2];

    if (!n)
        return;
    r->branches = mem_calloc(n, sizeof(*r->branches));
    jscan_iter_init(&it, d, jscan_arr(v));
    while (jscan_next(&it, NULL, &b)) {
        if (jscan_type(b) != JSCAN_OBJECT)
            continue;
        jscan_find(d, b, names, 2, bv);
        r->branches[r->n_branches].name = zr_scan_strdup(bv[0], NULL);
        r->branches[r->n_branches].version = zr_scan_strdup(bv[1], NULL);
        r->n_branches++;
    }
}

/* The elements of an array or the members of an object. */
static size_t zr_scan_size(const struct jscan_doc *d, struct jscan v)
{
    struct jscan_iter it;
    struct jscan key, val;
    size_t n = 0;

    jscan_iter_init(&it, d, v);
    while (jscan_next(&it, &key, &val))
        n++;
    return n;
}

static int zr_repo_cmp(const void *a, const void *b)
{
    return strcmp(((const struct zr_repo *)a)->name, ((const struct zr_repo *)b)->name);
}

static int zr_repo_named(const void *key, const void *elem)
{
    return strcmp(key, ((const struct zr_repo *)elem)->name);
}

const struct zr_repo *zr_list_find(const struct zr_list *l, const char *name)
{
    return l->n_repos ? bsearch(name, l->repos, l->n_repos, sizeof(*l->repos), zr_repo_named) : NULL;
}

/* One element of List.Repos into r; returns 0 when it has no Repository object (and is skipped). */
static int zr_scan_list_entry(const struct jscan_doc *d, struct jscan e, const struct zr_opts *o, struct zr_repo *r)
{
    static const char *const entry_names[] = {"Repository", "IndexMetadata", "Stats"};
    static const char *const repo_names[] = {"Name",       "LatestCommitDate", "Branches",
                                             "HasSymbols", "FileURLTemplate",  "LineFragmentTemplate"};
    static const char *const meta_names[] = {"ZoektVersion", "IndexTime"};
    static const char *const stats_names[] = {"Shards", "Documents", "ContentBytes", "IndexBytes"};
    struct jscan ev[3], rv[6], mv[2], sv[4];
    char *index_time;

    jscan_find(d, jscan_obj(e), entry_names, 3, ev);
    if (!jscan_obj(ev[0]).p)
        return 0;
    jscan_find(d, jscan_obj(ev[0]), repo_names, 6, rv);
    jscan_find(d, jscan_obj(ev[1]), meta_names, 2, mv);
    jscan_find(d, jscan_obj(ev[2]), stats_names, 4, sv);
    r->full_name = zr_scan_strdup(rv[0], NULL);
    r->name = zr_scan_strdup(rv[0], o->mirror_prefix);
    r->latest_commit = zr_scan_strdup(rv[1], NULL);
    r->zoekt_version = zr_scan_strdup(mv[0], NULL);
    zr_scan_branches(d, rv[2], r);
    index_time = zr_scan_strdup(mv[1], NULL);
    if (!rfc3339_parse(index_time, &r->index_time))
        r->index_time = 0;
    free(index_time);
    r->shards = jscan_int(sv[0], 0);
    r->documents = jscan_int(sv[1], 0);
    r->content_bytes = jscan_int(sv[2], 0);
    r->index_bytes = jscan_int(sv[3], 0);
    r->has_symbols = jscan_bool(rv[3], 0);
    if (jscan_type(rv[4]) == JSCAN_STRING && rv[4].len > 2)
        r->file_url_template = zr_scan_strdup(rv[4], NULL);
    if (jscan_type(rv[5]) == JSCAN_STRING && rv[5].len > 2)
        r->line_fragment_template = zr_scan_strdup(rv[5], NULL);
    return 1;
}

/* One member of List.ReposMap (key: its repository id) into r; returns 0 when it is not an object. */
static int zr_scan_map_entry(const struct jscan_doc *d, struct jscan key, struct jscan e, struct zr_repo *r)
{
    static const char *const names[] = {"Branches", "IndexTimeUnix", "HasSymbols"};
    struct jscan v[3];
    char *id, name[64];

    if (jscan_type(e) != JSCAN_OBJECT)
        return 0;
    jscan_find(d, e, names, 3, v);
    /* The key is the server's text like any name, and is shown to agents: sanitised the same way. */
    id = zr_scan_strdup(key, NULL);
    snprintf(name, sizeof(name), "#%s", id);
    free(id);
    /* Sanitised again: the cut at sizeof(name) may fall inside a character. */
    r->name = zr_strdup(name);
    r->full_name = zr_strdup(name);
    r->latest_commit = mem_strdup("");
    r->zoekt_version = mem_strdup("");
    zr_scan_branches(d, v[0], r);
    r->index_time = jscan_int(v[1], 0);
    r->has_symbols = jscan_bool(v[2], 0);
    return 1;
}

int zr_parse_list(const char *body, size_t len, const struct zr_opts *o, struct zr_list *out, struct zk_err *err)
{
    static const struct zr_opts defaults = {NULL, -1, 0};
    static const char *const root_names[] = {"List"};
    static const char *const list_names[] = {"Repos", "ReposMap", "Stats", "Crashes"};
    static const char *const stats_names[] = {"Shards"};
    struct jscan_doc d;
    struct jscan root, list, lv[4], shards, key, e;
    struct jscan_iter it;
    long long shard_sum = 0;
    size_t cap;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!o)
        o = &defaults;
    if ((rc = zr_scan_answer(&d, body, len, "the repository list",
                             "the repository list is not valid JSON (truncated or not from Zoekt)", &root, err)))
        goto out;
    jscan_find(&d, root, root_names, 1, &list);
    list = jscan_obj(list);
    if (!list.p) {
        rc = zr_bad_body(body, len, "the repository list has no \"List\" object", err);
        goto out;
    }
    jscan_find(&d, list, list_names, 4, lv);
    lv[0] = jscan_arr(lv[0]);
    lv[1] = jscan_obj(lv[1]);
    cap = zr_scan_size(&d, lv[0]) + zr_scan_size(&d, lv[1]);
    if (cap)
        out->repos = mem_calloc(cap, sizeof(*out->repos));
    jscan_iter_init(&it, &d, lv[0]);
    while (jscan_next(&it, NULL, &e))
        if (zr_scan_list_entry(&d, e, o, &out->repos[out->n_repos]))
            shard_sum += out->repos[out->n_repos++].shards;
    jscan_iter_init(&it, &d, lv[1]);
    while (jscan_next(&it, &key, &e))
        if (zr_scan_map_entry(&d, key, e, &out->repos[out->n_repos]))
            out->n_repos++;
    if (out->n_repos > 1)
        qsort(out->repos, out->n_repos, sizeof(*out->repos), zr_repo_cmp);
    jscan_find(&d, jscan_obj(lv[2]), stats_names, 1, &shards);
    out->shards = jscan_int(shards, 0);
    if (out->shards == 0)
        out->shards = shard_sum;
    out->crashes = jscan_int(lv[3], 0);
out:
    jscan_doc_free(&d);
    return rc;
}

void zr_list_free(struct zr_list *l)
{
    for (size_t i = 0; i < l->n_repos; i++)
        zr_repo_free(&l->repos[i]);
    free(l->repos);
    zr_shards_free(&l->search_shards);
    memset(l, 0, sizeof(*l));
}

void zr_error_text(const char *body, size_t len, char *out, size_t n)
{
    cJSON *root = json_parse(body, len);
    const char *msg = json_str(root, "Error", NULL);
    size_t i, o = 0;

    if (msg && n) {
        /* Zoekt's text goes into messages the agent reads: made printable like file contents (control
         * bytes, line breaks and invalid UTF-8 become U+FFFD) and cut where a character ends. Every
         * input byte makes at least one output byte, so the first n bytes of it fill out. */
        char *clean = zr_sanitize((const unsigned char *)msg, strnlen(msg, n));
        size_t k;

        for (k = strlen(clean); o < k;) {
            size_t c = json_utf8_len((const unsigned char *)clean + o, k - o);

            if (!c || o + c >= n)
                break;
            o += c;
        }
        memcpy(out, clean, o);
        out[o] = '\0';
        free(clean);
        cJSON_Delete(root);
        return;
    }
    cJSON_Delete(root);
    /* Not Zoekt's error object: show the start of the body, printable ASCII only. */
    for (i = 0; i < len && o + 1 < n; i++) {
        unsigned char c = (unsigned char)body[i];

        out[o++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
    }
    if (n)
        out[o] = '\0';
}
