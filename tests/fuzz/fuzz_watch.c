/* fuzz_watch.c: the watch stream's line splitter and event parser (lib/kube/watch.h) on arbitrary
 * bytes from the API server.
 *
 * Input: byte 0 picks the line bound (1..64 bytes, or 4096 so that whole events get through), byte 1
 * seeds how the stream is cut into chunks, the rest is the stream. Asserted:
 * - watch_lines_feed yields the same lines and the same result whether the stream arrives whole, byte
 *   by byte or in arbitrary chunks, and they are exactly what a plain reference splitter expects: every
 *   non-empty newline-terminated line in order, ZK_ETOOBIG as soon as a line (complete or not) exceeds
 *   the bound, and the callback's own error (returned here for a line "STOP") passed through unchanged;
 * - between calls the pending buffer never holds more than the bound, and holds exactly the bytes
 *   after the last newline;
 * - watch_event_parse either fails with ZK_EPARSE, a NUL-terminated message and nothing to free, or
 *   gives a known kind, an object, and the object's metadata.resourceVersion; an ERROR event's Status
 *   always becomes ZK_EAPI with NUL-terminated texts. */
#include "tests/fuzz/fuzz.h"

#include "buf.h"
#include "err.h"
#include "json.h"
#include "kube/client.h"
#include "kube/watch.h"

#include <string.h>

#define STOP_RC ZK_EINVAL

/* The lines one feeding received, each followed by '\n' (lines never contain one). */
struct record {
    struct buf lines;
    int rc;
};

static int nul_terminated(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

static void check_event(const char *line, size_t len)
{
    struct watch_event ev;
    struct zk_err err;
    struct kube_err kerr;
    int rc;

    zk_err_clear(&err);
    rc = watch_event_parse(line, len, &ev, &err);
    if (rc != ZK_OK) {
        FUZZ_CHECK(rc == ZK_EPARSE && err.code == ZK_EPARSE);
        FUZZ_CHECK(nul_terminated(err.msg, sizeof(err.msg)) && err.msg[0] != '\0');
        FUZZ_CHECK(ev.root == NULL && ev.object == NULL);
        return;
    }
    FUZZ_CHECK(ev.root != NULL && cJSON_IsObject(ev.object));
    FUZZ_CHECK(ev.kind >= WATCH_KIND_ADDED && ev.kind <= WATCH_KIND_ERROR);
    FUZZ_CHECK(ev.resource_version == json_path_str(ev.object, "metadata.resourceVersion", NULL));
    if (ev.kind == WATCH_KIND_ERROR) {
        FUZZ_CHECK(kube_parse_status_json(200, ev.object, -1, "WATCH", &kerr) == ZK_EAPI);
        FUZZ_CHECK(kerr.base.code == ZK_EAPI);
        FUZZ_CHECK(nul_terminated(kerr.base.msg, sizeof(kerr.base.msg)));
        FUZZ_CHECK(nul_terminated(kerr.message, sizeof(kerr.message)));
        FUZZ_CHECK(nul_terminated(kerr.reason_text, sizeof(kerr.reason_text)));
        FUZZ_CHECK(nul_terminated(kerr.causes, sizeof(kerr.causes)));
    }
    watch_event_free(&ev);
    FUZZ_CHECK(ev.root == NULL);
}

static int on_line(void *ud, const char *line, size_t len)
{
    struct record *r = ud;

    FUZZ_CHECK(len > 0 && memchr(line, '\n', len) == NULL);
    FUZZ_CHECK(buf_append(&r->lines, line, len) == ZK_OK && buf_putc(&r->lines, '\n') == ZK_OK);
    return len == 4 && memcmp(line, "STOP", 4) == 0 ? STOP_RC : ZK_OK;
}

/* What the splitter must produce, computed the obvious way. */
static void reference(const char *s, size_t n, size_t max, struct record *r)
{
    size_t start = 0, i;

    r->rc = ZK_OK;
    for (i = 0; i < n; i++) {
        if (s[i] != '\n')
            continue;
        if (i - start > max) {
            r->rc = ZK_ETOOBIG;
            return;
        }
        if (i > start && on_line(r, s + start, i - start) != ZK_OK) {
            r->rc = STOP_RC;
            return;
        }
        start = i + 1;
    }
    if (n - start > max)
        r->rc = ZK_ETOOBIG;
}

/* Feeds s in chunks: chunk 0 means whole, 1 byte by byte, anything else pseudo-random sizes. */
static void feed(const char *s, size_t n, size_t max, unsigned chunk, struct record *r)
{
    struct watch_lines w;
    size_t off = 0, k, last_nl = 0;
    unsigned state = chunk * 2654435761u + 1;

    watch_lines_init(&w, max, on_line, r);
    r->rc = ZK_OK;
    while (off < n) {
        if (chunk == 0) {
            k = n - off;
        } else if (chunk == 1) {
            k = 1;
        } else {
            state = state * 1103515245u + 12345u;
            k = 1 + (state >> 16) % 9;
            if (k > n - off)
                k = n - off;
        }
        r->rc = watch_lines_feed(&w, s + off, k);
        for (size_t j = off; j < off + k; j++)
            if (s[j] == '\n')
                last_nl = j + 1;
        off += k;
        if (r->rc != ZK_OK)
            break;
        FUZZ_CHECK(w.pending.len <= max);
        FUZZ_CHECK(w.pending.len == off - last_nl);
        FUZZ_CHECK(w.pending.len == 0 || memcmp(w.pending.data, s + last_nl, w.pending.len) == 0);
    }
    watch_lines_free(&w);
}

static void check_same(const struct record *a, const struct record *b)
{
    FUZZ_CHECK(a->rc == b->rc);
    FUZZ_CHECK(a->lines.len == b->lines.len);
    FUZZ_CHECK(a->lines.len == 0 || memcmp(a->lines.data, b->lines.data, a->lines.len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct record ref, got;
    const char *s;
    size_t n, max, i, start;
    unsigned chunk;

    if (size < 2)
        return 0;
    max = data[0] < 192 ? 1 + data[0] % 64u : 4096;
    chunk = 2 + data[1];
    s = (const char *)data + 2;
    n = size - 2;

    buf_init(&ref.lines, 1 << 20);
    reference(s, n, max, &ref);
    for (unsigned mode = 0; mode < 3; mode++) {
        buf_init(&got.lines, 1 << 20);
        feed(s, n, max, mode < 2 ? mode : chunk, &got);
        check_same(&ref, &got);
        buf_free(&got.lines);
    }

    /* Every line the splitter handed on goes through the event parser, as watch_run does. */
    for (i = 0, start = 0; i < ref.lines.len; i++)
        if (ref.lines.data[i] == '\n') {
            check_event(ref.lines.data + start, i - start);
            start = i + 1;
        }
    buf_free(&ref.lines);
    return 0;
}
