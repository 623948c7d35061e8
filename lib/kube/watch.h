/* watch.h: list+watch, the reflector every informer stands on.
 *
 * watch_run LISTs a collection, handing its objects to on_list one at a time between a BEGIN and an END
 * (so a cache can build its new contents and replace the old ones at the END), then WATCHes from the
 * list's resourceVersion with bookmarks, handing each ADDED, MODIFIED and DELETED object to on_event.
 * It keeps the last resourceVersion seen (from events and bookmarks) and, when the stream ends or
 * breaks, watches again from there after a backoff (capped, with jitter); when the server says that
 * version is gone (410, or an ERROR event with reason Expired/Gone) it lists again, the same way. No
 * event is lost: what happened between the old version and the relist is visible in the new list.
 * The list is read a page at a time and each object parsed on its own (kube_list_each), so listing
 * thousands of objects never holds them all as one tree.
 *
 * Events are parsed incrementally from the chunked stream through a bounded line buffer: a line longer
 * than max_line is an error (the watch restarts), never unbounded memory. */
#ifndef ZK_KUBE_WATCH_H
#define ZK_KUBE_WATCH_H

#include "buf.h"
#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>

enum watch_event_type { WATCH_ADDED, WATCH_MODIFIED, WATCH_DELETED };

/* How a list reaches on_list: BEGIN (item NULL) when a list starts, and again when it starts over, so
 * that what came since the last BEGIN is forgotten; ITEM for each object, borrowed for the call; END
 * (item NULL) once the list is complete. A list that fails part way ends without END; the next attempt
 * begins with BEGIN. */
enum watch_list_step { WATCH_LIST_BEGIN, WATCH_LIST_ITEM, WATCH_LIST_END };
typedef void watch_list_fn(void *ud, enum watch_list_step step, const cJSON *item);
/* obj is borrowed for the call; copy what must outlive it. */
typedef void watch_event_fn(void *ud, enum watch_event_type type, const cJSON *obj);

struct watch_opts {
    const struct kube_resource *resource;
    const char *namespace;      /* NULL: all namespaces */
    const char *label_selector; /* NULL: none */
    long timeout_seconds;       /* server-side duration of one watch request; 0: 300 */
    size_t max_line;            /* bound on one event line; 0: 16 MiB */
    watch_list_fn *on_list;
    watch_event_fn *on_event;
    void *ud;
    const atomic_int *cancel; /* set non-zero (from any thread) to make watch_run return promptly */
    /* NULL: start with a LIST. Otherwise watch from this version without listing first, as an informer
     * resuming from a version it kept would; on_list is then called only if the server says the version
     * is gone. Copied: it need not outlive the call. */
    const char *resource_version;
    long max_backoff_ms;        /* cap of the reconnect backoff; 0: 30000 */
};

/* Runs until *cancel becomes non-zero; returns ZK_ECANCELLED then. Transport failures and API errors
 * are retried with backoff and logged, never returned, except ZK_EAPI with Forbidden/Unauthorized/
 * NotFound on the very first list, which is returned (nothing will fix it by waiting). */
int watch_run(struct kube_client *c, const struct watch_opts *o, struct zk_err *err);

/* One parsed line of a watch stream. Pure; exposed for unit tests. */
enum watch_kind { WATCH_KIND_ADDED, WATCH_KIND_MODIFIED, WATCH_KIND_DELETED, WATCH_KIND_BOOKMARK, WATCH_KIND_ERROR };
struct watch_event {
    cJSON *root;                  /* the parsed line, owned (watch_event_free) */
    enum watch_kind kind;
    const cJSON *object;          /* points into root */
    const char *resource_version; /* object's metadata.resourceVersion, or NULL (points into root) */
};
/* Parses one line {"type":...,"object":{...}}. Returns ZK_OK with *ev filled (the caller frees it with
 * watch_event_free), or ZK_EPARSE (not JSON, unknown type, no object) with nothing to free. */
int watch_event_parse(const char *line, size_t len, struct watch_event *ev, struct zk_err *err);
void watch_event_free(struct watch_event *ev);

/* The incremental line splitter, exposed for unit tests: feed it arbitrary chunks; it calls on_line
 * for each complete newline-terminated line (without the newline). Returns ZK_OK, ZK_ETOOBIG when a
 * line exceeds the bound, or whatever on_line returns when non-zero. */
typedef int watch_line_fn(void *ud, const char *line, size_t len);
struct watch_lines {
    struct buf pending;
    watch_line_fn *on_line;
    void *ud;
};
void watch_lines_init(struct watch_lines *w, size_t max_line, watch_line_fn *on_line, void *ud);
int watch_lines_feed(struct watch_lines *w, const char *data, size_t len);
void watch_lines_free(struct watch_lines *w);

#endif
