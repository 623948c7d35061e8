/* watch.c: see watch.h.
 *
 * The loop is a small state machine: "list" (when there is no usable resourceVersion) then "watch from
 * rv" until the stream ends, breaks or says the version is gone. The stream is split into lines as it
 * arrives; each line is one event, parsed and dispatched at once, so memory is bounded by the longest
 * event rather than by the length of the watch. */
#include "kube/watch.h"

#include "json.h"
#include "log.h"
#include "mem.h"
#include "monotime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCH_DEFAULT_TIMEOUT_S 300
#define WATCH_DEFAULT_MAX_LINE (16u * 1024 * 1024)
#define WATCH_DEFAULT_MAX_BACKOFF_MS 30000
#define WATCH_MIN_BACKOFF_MS 200
/* Objects per page of a list (watch_list). */
#define WATCH_LIST_PAGE 100
/* The client-side deadline of one watch request exceeds the server-side timeoutSeconds by this much,
 * so a connection that went silent (a half-open TCP session) is still abandoned eventually. */
#define WATCH_SLACK_MS 30000
/* How often a backoff sleep looks at the cancel flag. */
#define WATCH_CANCEL_POLL_MS 50
/* A watch that lasted this long was healthy: the next failure starts the backoff from the bottom. */
#define WATCH_HEALTHY_MS 10000

void watch_lines_init(struct watch_lines *w, size_t max_line, watch_line_fn *on_line, void *ud)
{
    buf_init(&w->pending, max_line);
    w->on_line = on_line;
    w->ud = ud;
}

void watch_lines_free(struct watch_lines *w)
{
    buf_free(&w->pending);
}

int watch_lines_feed(struct watch_lines *w, const char *data, size_t len)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        int rc;

        if (!nl)
            return buf_append(&w->pending, data, n); /* frees the pending bytes when the line is too long */
        if (w->pending.len == 0) {
            /* The common case, a whole line inside one chunk, needs no copy. */
            if (n > w->pending.max)
                return ZK_ETOOBIG;
            rc = n ? w->on_line(w->ud, data, n) : ZK_OK;
        } else {
            rc = buf_append(&w->pending, data, n);
            if (rc)
                return rc;
            rc = w->on_line(w->ud, w->pending.data, w->pending.len);
            buf_reset(&w->pending);
        }
        if (rc)
            return rc;
        data += n + 1;
        len -= n + 1;
    }
    return ZK_OK;
}

void watch_event_free(struct watch_event *ev)
{
    cJSON_Delete(ev->root);
    memset(ev, 0, sizeof(*ev));
}

int watch_event_parse(const char *line, size_t len, struct watch_event *ev, struct zk_err *err)
{
    static const struct {
        const char *name;
        enum watch_kind kind;
    } kinds[] = {
        {"ADDED", WATCH_KIND_ADDED},       {"MODIFIED", WATCH_KIND_MODIFIED}, {"DELETED", WATCH_KIND_DELETED},
        {"BOOKMARK", WATCH_KIND_BOOKMARK}, {"ERROR", WATCH_KIND_ERROR},
    };
    const char *type;
    int shown = len < 80 ? (int)len : 80; /* the line need not be NUL-terminated */
    size_t i;

    memset(ev, 0, sizeof(*ev));
    ev->root = json_parse(line, len);
    if (!ev->root)
        return zk_err_set(err, ZK_EPARSE, "watch event is not valid JSON: %.*s", shown, line);
    type = json_str(ev->root, "type", "");
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(type, kinds[i].name) == 0)
            break;
    ev->object = json_obj(ev->root, "object");
    if (i == sizeof(kinds) / sizeof(kinds[0]) || !ev->object) {
        watch_event_free(ev);
        return zk_err_set(err, ZK_EPARSE, "watch event has no known type and object: %.*s", shown, line);
    }
    ev->kind = kinds[i].kind;
    ev->resource_version = json_path_str(ev->object, "metadata.resourceVersion", NULL);
    return ZK_OK;
}

/* The state of one watch_run. */
struct watch_state {
    struct kube_client *c;
    const struct watch_opts *o;
    char *rv;                /* the newest resourceVersion seen, or NULL: list first */
    struct watch_lines lines;
    struct kube_err event_err; /* an ERROR event's Status, when one ended the stream */
    int saw_error_event;
    unsigned long progress;  /* events and bookmarks received by the current stream */
    struct zk_err line_err;  /* why a line was rejected */
};

/* Keeps rv as the version to watch from; a missing or empty one keeps the last. */
static void watch_set_rv(struct watch_state *st, const char *rv)
{
    if (!rv || !rv[0])
        return;
    free(st->rv);
    st->rv = mem_strdup(rv);
}

static int watch_on_line(void *ud, const char *line, size_t len)
{
    static const enum watch_event_type types[] = {WATCH_ADDED, WATCH_MODIFIED, WATCH_DELETED};
    struct watch_state *st = ud;
    struct watch_event ev;
    int rc = watch_event_parse(line, len, &ev, &st->line_err);

    if (rc)
        return rc;
    switch (ev.kind) {
    case WATCH_KIND_ADDED:
    case WATCH_KIND_MODIFIED:
    case WATCH_KIND_DELETED:
        st->o->on_event(st->o->ud, types[ev.kind], ev.object);
        st->progress++;
        watch_set_rv(st, ev.resource_version);
        break;
    case WATCH_KIND_BOOKMARK:
        st->progress++;
        watch_set_rv(st, ev.resource_version);
        break;
    case WATCH_KIND_ERROR:
        /* The server ends the stream after an ERROR; stop reading and let the loop decide. */
        kube_parse_status_json(200, ev.object, -1, "WATCH", &st->event_err);
        st->saw_error_event = 1;
        rc = ZK_EAPI;
        zk_err_set(&st->line_err, rc, "%s", st->event_err.base.msg);
        break;
    }
    watch_event_free(&ev);
    return rc;
}

static int watch_on_data(void *ud, const char *data, size_t len, struct zk_err *err)
{
    struct watch_state *st = ud;
    int rc = watch_lines_feed(&st->lines, data, len);

    if (rc == ZK_ETOOBIG)
        zk_err_set(err, rc, "a watch event is longer than the limit of %zu bytes", st->lines.pending.max);
    else if (rc)
        zk_err_set(err, rc, "%s", st->line_err.msg);
    return rc;
}

static int watch_cancelled(const struct watch_opts *o)
{
    return o->cancel && atomic_load(o->cancel);
}

/* Sleeps ms milliseconds, waking early when cancelled. */
static void watch_sleep(const struct watch_opts *o, long ms)
{
    long long end = monotime_ms() + ms;

    while (!watch_cancelled(o)) {
        long long left = end - monotime_ms();
        struct timespec ts = {0, 0};

        if (left <= 0)
            return;
        if (left > WATCH_CANCEL_POLL_MS)
            left = WATCH_CANCEL_POLL_MS;
        ts.tv_nsec = left * 1000000L;
        nanosleep(&ts, NULL);
    }
}

/* The next backoff: WATCH_MIN_BACKOFF_MS first, then doubling up to max. */
static long watch_next_backoff(long backoff, long max)
{
    if (backoff <= 0)
        return WATCH_MIN_BACKOFF_MS < max ? WATCH_MIN_BACKOFF_MS : max;
    return backoff > max / 2 ? max : backoff * 2;
}

/* Hands one listed item to on_list, or a new BEGIN when the list starts over (item NULL). */
static void watch_list_item(void *ud, const cJSON *item)
{
    const struct watch_opts *o = ud;

    o->on_list(o->ud, item ? WATCH_LIST_ITEM : WATCH_LIST_BEGIN, item);
}

/* Lists, hands the items to on_list and keeps the list's version. The pages are small, so that one
 * page of the largest objects (search Deployments with their managed fields, about 10 KB of text
 * each) stays about a megabyte. */
static int watch_list(struct watch_state *st, struct kube_err *kerr)
{
    const struct watch_opts *o = st->o;
    struct kube_list_opts lo = {.label_selector = o->label_selector, .limit = WATCH_LIST_PAGE, .cancel = o->cancel};
    char *rv = NULL;
    int rc;

    kube_err_clear(kerr);
    o->on_list(o->ud, WATCH_LIST_BEGIN, NULL);
    rc = kube_list_each(st->c, o->resource, o->namespace, &lo, watch_list_item, (void *)o, &rv, kerr);
    if (rc)
        return rc;
    o->on_list(o->ud, WATCH_LIST_END, NULL);
    watch_set_rv(st, rv);
    free(rv);
    log_debug("Listed", "resource", o->resource->plural, "resourceVersion", st->rv, NULL);
    return ZK_OK;
}

/* One watch request from st->rv, until the stream ends or fails. */
static int watch_stream(struct watch_state *st, long timeout_s, size_t max_line, struct kube_err *kerr)
{
    const struct watch_opts *o = st->o;
    char tmo[32];
    const char *query[] = {"watch", "true",
                           "resourceVersion", st->rv,
                           "allowWatchBookmarks", "true",
                           "timeoutSeconds", tmo,
                           "labelSelector", o->label_selector,
                           NULL};
    struct kube_stream s = {.on_data = watch_on_data, .ud = st, .cancel = o->cancel,
                            .timeout_ms = timeout_s * 1000 + WATCH_SLACK_MS};
    char *url;
    int rc;

    kube_err_clear(kerr);
    snprintf(tmo, sizeof(tmo), "%ld", timeout_s);
    url = kube_url(st->c, o->resource, o->namespace, NULL, NULL, query);
    if (!url)
        return zk_err_set(&kerr->base, ZK_ETOOBIG, "watch %s: the URL would pass 64 KB", o->resource->plural);
    s.url = url;
    st->saw_error_event = 0;
    st->progress = 0;
    kube_err_clear(&st->event_err);
    watch_lines_init(&st->lines, max_line, watch_on_line, st);
    rc = kube_stream_get(st->c, &s, kerr);
    watch_lines_free(&st->lines);
    free(url);
    if (st->saw_error_event && rc != ZK_ECANCELLED) {
        *kerr = st->event_err;
        rc = ZK_EAPI;
    }
    return rc;
}

int watch_run(struct kube_client *c, const struct watch_opts *o, struct zk_err *err)
{
    struct watch_state st = {.c = c, .o = o};
    struct kube_err kerr;
    long timeout_s = o->timeout_seconds > 0 ? o->timeout_seconds : WATCH_DEFAULT_TIMEOUT_S;
    long max_backoff = o->max_backoff_ms > 0 ? o->max_backoff_ms : WATCH_DEFAULT_MAX_BACKOFF_MS;
    size_t max_line = o->max_line ? o->max_line : WATCH_DEFAULT_MAX_LINE;
    long backoff = 0;
    long long started;
    unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid() ^ (unsigned int)(uintptr_t)&st;
    int first_list = 1, rc;
    const char *plural = o->resource->plural;

    watch_set_rv(&st, o->resource_version);
    for (;;) {
        if (watch_cancelled(o)) {
            rc = zk_err_set(err, ZK_ECANCELLED, "watch %s: cancelled", plural);
            goto out;
        }
        if (backoff > 0) {
            /* Jitter (a delay drawn from [d/2, d]): clients that failed together do not retry in step. */
            long d = backoff / 2 + (long)(rand_r(&seed) % (unsigned int)(backoff / 2 + 1));

            watch_sleep(o, d);
            if (watch_cancelled(o))
                continue;
        }
        if (!st.rv) {
            rc = watch_list(&st, &kerr);
            if (rc == ZK_EAPI && first_list &&
                (kerr.reason == KUBE_REASON_FORBIDDEN || kerr.reason == KUBE_REASON_UNAUTHORIZED ||
                 kerr.reason == KUBE_REASON_NOT_FOUND)) {
                rc = zk_err_set(err, rc, "watch %s: %s", plural, kerr.base.msg);
                goto out;
            }
            first_list = 0;
            if (rc) {
                if (rc != ZK_ECANCELLED)
                    log_warn("List failed; retrying", "resource", plural, "error", kerr.base.msg, NULL);
                backoff = watch_next_backoff(backoff, max_backoff);
                continue;
            }
        }
        first_list = 0;
        started = monotime_ms();
        rc = watch_stream(&st, timeout_s, max_line, &kerr);
        if (rc == ZK_ECANCELLED || watch_cancelled(o))
            continue;
        if (rc == ZK_EAPI && kerr.reason == KUBE_REASON_GONE) {
            /* The version fell out of the server's history: only a fresh list can tell what changed. */
            log_info("Watch version expired; relisting", "resource", plural, "resourceVersion", st.rv,
                     "message", kerr.message, NULL);
            free(st.rv);
            st.rv = NULL;
            /* Relist at once after a stream that made progress; after one that did not (the 410 came
             * first), wait a little, so that a server refusing even fresh versions is not hammered. */
            backoff = st.progress > 0 ? 0 : watch_next_backoff(backoff, max_backoff);
            continue;
        }
        if (rc == ZK_OK && (st.progress > 0 || monotime_ms() - started >= 1000)) {
            /* The server closed the stream at timeoutSeconds: the normal way a watch ends. (One that
             * ends at once without an event is treated as a failure below, so it cannot spin.) */
            log_debug("Watch ended; resuming", "resource", plural, "resourceVersion", st.rv, NULL);
            backoff = 0;
            continue;
        }
        log_warn("Watch failed; resuming", "resource", plural, "resourceVersion", st.rv, "error",
                 rc == ZK_OK ? "the stream ended at once without an event" : kerr.base.msg, NULL);
        if (monotime_ms() - started >= WATCH_HEALTHY_MS || st.progress > 0)
            backoff = 0;
        backoff = watch_next_backoff(backoff, max_backoff);
    }
out:
    free(st.rv);
    return rc;
}
