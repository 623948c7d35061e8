/* metrics.c: see metrics.h. */
#include "connector/metrics.h"

#include "connector/tools/tools.h"
#include "err.h"
#include "mem.h"
#include "prom.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Recording must never take a lock: a counter that fell back to one would make every tool call wait
 * on every other. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the connector's counters are lock-free atomics");

/* Upper bounds of the tool latency histogram, in seconds: from a cached list_repositories (about a
 * millisecond) to the search deadline (30 s by default); a call beyond it lands in +Inf. */
static const double cmetrics_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                          0.25,  0.5,    1,     2.5,  5,     10,   30};
#define CMETRICS_NBUCKETS (sizeof(cmetrics_buckets) / sizeof(cmetrics_buckets[0]))

static const char *const cmetrics_kinds[CMETRICS_KINDS] = {
    [CMETRICS_INVALID_ARGUMENT] = "invalid_argument",
    [CMETRICS_REJECTED] = "rejected",
    [CMETRICS_UNAVAILABLE] = "unavailable",
    [CMETRICS_TIMEOUT] = "timeout",
    [CMETRICS_CANCELLED] = "cancelled",
    [CMETRICS_INTERNAL] = "internal",
};

static const char *const cmetrics_schemes[CMETRICS_SCHEMES] = {
    [CMETRICS_GITHUB] = "github",
    [CMETRICS_GITLAB] = "gitlab",
    [CMETRICS_GITEA] = "gitea",
    [CMETRICS_NO_PROOF] = "none",
};

static const char *const cmetrics_outcomes[CMETRICS_OUTCOMES] = {
    [CMETRICS_ACCEPTED] = "accepted",
    [CMETRICS_IGNORED] = "ignored",
    [CMETRICS_REFUSED_SIGNATURE] = "refused_signature",
    [CMETRICS_BAD_REQUEST] = "bad_request",
    [CMETRICS_TOO_LARGE] = "too_large",
    [CMETRICS_FAILED] = "failed",
    [CMETRICS_DISCOVERY_FAILED] = "discovery_failed",
};

/* One tool's counters. */
struct cmetrics_tool {
    atomic_ullong calls;
    atomic_ullong errors[CMETRICS_KINDS];
    atomic_ullong bucket[CMETRICS_NBUCKETS + 1]; /* per bucket, the last above every bound (prom.h) */
    atomic_ullong micros;                       /* the durations' sum, in whole microseconds */
    atomic_ullong bytes;
    atomic_ullong rate_limited;
};

struct cmetrics {
    struct cmetrics_tool tool[TOOL_COUNT];
    atomic_ullong unknown_tool;
    int webhooks;
    atomic_ullong webhook[CMETRICS_SCHEMES][CMETRICS_OUTCOMES];
};

struct cmetrics *cmetrics_new(int webhooks)
{
    /* All-zero bytes are a zero for the lock-free atomics of every target the project builds for (GCC
     * on x86-64 and arm64), so calloc initialises them all. */
    struct cmetrics *m = mem_calloc(1, sizeof(*m));

    m->webhooks = webhooks;
    return m;
}

void cmetrics_free(struct cmetrics *m)
{
    free(m);
}

enum cmetrics_kind cmetrics_kind_of(int code)
{
    switch (code) {
    case ZK_EINVAL:
    case ZK_ETOOBIG:
        return CMETRICS_INVALID_ARGUMENT;
    case ZK_EHTTP:
        return CMETRICS_REJECTED;
    case ZK_ECONNECT:
    case ZK_ETRANSPORT:
    case ZK_ESERVER:
    case ZK_EBUSY:
        return CMETRICS_UNAVAILABLE;
    case ZK_ETIMEOUT:
        return CMETRICS_TIMEOUT;
    case ZK_ECANCELLED:
        return CMETRICS_CANCELLED;
    default:
        return CMETRICS_INTERNAL;
    }
}

const char *cmetrics_kind_name(enum cmetrics_kind kind)
{
    return (unsigned)kind < CMETRICS_KINDS ? cmetrics_kinds[kind] : "none";
}

static void cmetrics_add(atomic_ullong *c, unsigned long long n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

void cmetrics_tool_call(struct cmetrics *m, const char *tool, enum cmetrics_kind kind, double seconds, size_t bytes)
{
    int id = tools_id(tool);
    struct cmetrics_tool *t;

    if (!m)
        return;
    if (id < 0) {
        cmetrics_add(&m->unknown_tool, 1);
        return;
    }
    t = &m->tool[id];
    /* A clock that stepped back would give a negative duration: it counts as none. */
    if (!(seconds >= 0))
        seconds = 0;
    cmetrics_add(&t->calls, 1);
    if ((unsigned)kind < CMETRICS_KINDS)
        cmetrics_add(&t->errors[kind], 1);
    cmetrics_add(&t->bucket[prom_bucket(cmetrics_buckets, CMETRICS_NBUCKETS, seconds)], 1);
    cmetrics_add(&t->micros, (unsigned long long)(seconds * 1e6 + 0.5));
    cmetrics_add(&t->bytes, bytes);
}

void cmetrics_tool_rate_limited(struct cmetrics *m, const char *tool)
{
    int id = tools_id(tool);

    if (!m)
        return;
    cmetrics_add(id >= 0 ? &m->tool[id].rate_limited : &m->unknown_tool, 1);
}

void cmetrics_webhook(struct cmetrics *m, enum cmetrics_scheme scheme, enum cmetrics_outcome outcome)
{
    if (!m || (unsigned)scheme >= CMETRICS_SCHEMES || (unsigned)outcome >= CMETRICS_OUTCOMES)
        return;
    cmetrics_add(&m->webhook[scheme][outcome], 1);
}

static unsigned long long cmetrics_get(atomic_ullong *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* A counter family with one sample per tool: its name, its help and where each tool keeps its count. */
struct cmetrics_tool_family {
    const char *name;
    const char *help;
    atomic_ullong *(*counter)(struct cmetrics_tool *t);
};

static atomic_ullong *cmetrics_calls(struct cmetrics_tool *t)
{
    return &t->calls;
}

static atomic_ullong *cmetrics_bytes(struct cmetrics_tool *t)
{
    return &t->bytes;
}

static atomic_ullong *cmetrics_rate_limited(struct cmetrics_tool *t)
{
    return &t->rate_limited;
}

static const struct cmetrics_tool_family cmetrics_tool_families[] = {
    {"zoekt_connector_tool_calls_total", "Tool calls run, by tool (a call the rate limit refused did not run).",
     cmetrics_calls},
    {"zoekt_connector_tool_output_bytes_total", "Bytes of text the tool results showed the agents.",
     cmetrics_bytes},
    {"zoekt_connector_tool_rate_limited_total", "Tool calls a session's rate limit refused before they ran.",
     cmetrics_rate_limited},
};

/* The tool families: calls, bytes and refusals, errors by kind, then the latency histogram. */
static int cmetrics_render_tools(struct cmetrics *m, struct buf *b)
{
    struct prom_label l[2] = {{"tool", NULL}, {"kind", NULL}};
    unsigned long long counts[CMETRICS_NBUCKETS + 1];
    int rc = ZK_OK;

    for (size_t f = 0; rc == ZK_OK && f < sizeof(cmetrics_tool_families) / sizeof(cmetrics_tool_families[0]); f++) {
        const struct cmetrics_tool_family *fam = &cmetrics_tool_families[f];

        rc = prom_family(b, fam->name, "counter", fam->help);
        for (int t = 0; rc == ZK_OK && t < TOOL_COUNT; t++) {
            l[0].value = tools_names[t];
            rc = prom_counter(b, fam->name, l, 1, cmetrics_get(fam->counter(&m->tool[t])));
        }
    }
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_connector_tool_errors_total", "counter",
                         "Tool calls that failed, by tool and kind (from the error's code: invalid_argument is the "
                         "caller's, cancelled the client's doing).");
    for (int t = 0; rc == ZK_OK && t < TOOL_COUNT; t++)
        for (int k = 0; rc == ZK_OK && k < CMETRICS_KINDS; k++) {
            l[0].value = tools_names[t];
            l[1].value = cmetrics_kinds[k];
            rc = prom_counter(b, "zoekt_connector_tool_errors_total", l, 2, cmetrics_get(&m->tool[t].errors[k]));
        }
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_connector_tool_duration_seconds", "histogram",
                         "Time from a tool call's start to its answer, by tool.");
    for (int t = 0; rc == ZK_OK && t < TOOL_COUNT; t++) {
        for (size_t i = 0; i <= CMETRICS_NBUCKETS; i++)
            counts[i] = cmetrics_get(&m->tool[t].bucket[i]);
        l[0].value = tools_names[t];
        rc = prom_histogram(b, "zoekt_connector_tool_duration_seconds", l, 1, cmetrics_buckets, CMETRICS_NBUCKETS,
                            counts, (double)cmetrics_get(&m->tool[t].micros) / 1e6);
    }
    return rc;
}

int cmetrics_render(struct cmetrics *m, struct buf *b)
{
    const struct prom_label version = {"version", ZK_VERSION};
    struct prom_label l[2] = {{"scheme", NULL}, {"outcome", NULL}};
    int rc;

    rc = prom_family(b, "zoekt_connector_build_info", "gauge", "The connector's version; always 1.");
    if (rc == ZK_OK)
        rc = prom_gauge(b, "zoekt_connector_build_info", &version, 1, 1);
    if (rc == ZK_OK)
        rc = cmetrics_render_tools(m, b);
    if (rc == ZK_OK)
        rc = prom_family(b, "zoekt_connector_unknown_tool_calls_total", "counter",
                         "Tool calls naming no tool the connector has (answered with a JSON-RPC error).");
    if (rc == ZK_OK)
        rc = prom_counter(b, "zoekt_connector_unknown_tool_calls_total", NULL, 0, cmetrics_get(&m->unknown_tool));
    if (rc == ZK_OK && m->webhooks)
        rc = prom_family(b, "zoekt_connector_webhook_deliveries_total", "counter",
                         "Webhook deliveries on /hooks/push, by the proof they carried and what became of them.");
    for (int s = 0; rc == ZK_OK && m->webhooks && s < CMETRICS_SCHEMES; s++)
        for (int o = 0; rc == ZK_OK && o < CMETRICS_OUTCOMES; o++) {
            l[0].value = cmetrics_schemes[s];
            l[1].value = cmetrics_outcomes[o];
            rc = prom_counter(b, "zoekt_connector_webhook_deliveries_total", l, 2, cmetrics_get(&m->webhook[s][o]));
        }
    return rc;
}
