/* metrics.h: the connector's Prometheus metrics: tool calls, their failures by kind, their latency and
 * the text they showed, and webhook deliveries. The front serves them as text on GET /metrics
 * (connector/front.h), on its own listener and, with --metrics-listen, on one that Prometheus reaches
 * on the pod's address.
 *
 * The set is fixed and so is the memory: one struct of counters, allocated once. Every label value
 * comes from a fixed list (the tools' names of connector/tools/tools.h, the kinds, schemes and outcomes
 * below), never from a client: a call naming a tool that does not exist is counted in one counter
 * without labels, so nothing a client sends can add a series or a byte.
 *
 * Error kinds are decided by lib/err.h codes (cmetrics_kind_of), never by message text:
 *
 *   invalid_argument  ZK_EINVAL, ZK_ETOOBIG: the call must change (a bad argument, a name that selects
 *                     nothing, an answer too large for what was asked): the caller's doing
 *   rejected          ZK_EHTTP: Zoekt or the proxy in front of it refused the request (a query it
 *                     cannot parse, the connector's credentials, its own time limit)
 *   unavailable       ZK_ECONNECT, ZK_ETRANSPORT, ZK_ESERVER, ZK_EBUSY: Zoekt unreachable, failing, or
 *                     the connector's memory bound on its answers taken
 *   timeout           ZK_ETIMEOUT: no answer within the search or list deadline
 *   cancelled         the client cancelled the call or hung up; no answer was sent
 *   internal          anything else: an answer not in Zoekt's shape (ZK_EPARSE), a local I/O or API
 *                     error, a tool whose answer did not fit its buffer (a JSON-RPC -32603)
 *
 * Thread-safety: every counter is a C11 atomic (lock-free, checked at compile time), updated with a
 * relaxed fetch-add, so recording from libmicrohttpd's connection threads and the stdio workers never
 * takes a lock and never allocates. A scrape reads each counter once: it sees every update finished
 * before it, and maybe part of one in flight (a call counted whose duration is not yet); counters stay
 * monotonic, and a histogram's _count is the sum of its own buckets, so it always equals +Inf. */
#ifndef ZK_CONNECTOR_METRICS_H
#define ZK_CONNECTOR_METRICS_H

#include "buf.h"

#include <stddef.h>

/* Bound on the exposition: 19 KB fresh, at most 26 KB with every counter at 20 digits (test_cmetrics
 * measures it). */
#define CMETRICS_TEXT_MAX (64u * 1024)

/* Why a tool call failed; CMETRICS_NO_ERROR for one that succeeded. */
enum cmetrics_kind {
    CMETRICS_INVALID_ARGUMENT,
    CMETRICS_REJECTED,
    CMETRICS_UNAVAILABLE,
    CMETRICS_TIMEOUT,
    CMETRICS_CANCELLED,
    CMETRICS_INTERNAL,
    CMETRICS_KINDS,
    CMETRICS_NO_ERROR = CMETRICS_KINDS
};

/* Which host's proof a webhook delivery carried: GitLab's token, Gitea's or Forgejo's signature (Gitea
 * also sends GitHub's header, so its own header decides), GitHub's signature, or none of them. */
enum cmetrics_scheme { CMETRICS_GITHUB, CMETRICS_GITLAB, CMETRICS_GITEA, CMETRICS_NO_PROOF, CMETRICS_SCHEMES };

/* What became of a webhook delivery (connector/webhook.h lists the answers). */
enum cmetrics_outcome {
    CMETRICS_ACCEPTED,          /* 202: the indexer's request file is written, or a discovery is requested
                                 * (or was already, moments before) */
    CMETRICS_IGNORED,           /* 202: proven, but not a branch, not an event the connector acts on, or
                                 * an unlisted repository with no corpus to discover for */
    CMETRICS_REFUSED_SIGNATURE, /* 401: a missing or wrong proof */
    CMETRICS_BAD_REQUEST,       /* 400 (no payload) or 405 (not a POST) */
    CMETRICS_TOO_LARGE,         /* 413 */
    CMETRICS_FAILED,            /* 503: the secret, the list or the queue could not be read or written */
    CMETRICS_DISCOVERY_FAILED,  /* 503: the corpus could not be annotated to request a discovery (the
                                 * API server unreachable, the Role refusing): apart from failed, since
                                 * its cause is in the cluster, not on the volume */
    CMETRICS_OUTCOMES
};

struct cmetrics;

/* A new set, all zero. With webhooks, the webhook deliveries are exported too (all zero until the
 * first), so that a connector without webhooks adds no series for them. Owned by the caller
 * (cmetrics_free). */
struct cmetrics *cmetrics_new(int webhooks);
void cmetrics_free(struct cmetrics *m);

/* The kind of a failure that lib/err.h code caused (see the table above); ZK_OK, a failure whose code
 * nobody set, is internal. */
enum cmetrics_kind cmetrics_kind_of(int code);

/* The label value of a kind ("invalid_argument", ...). */
const char *cmetrics_kind_name(enum cmetrics_kind kind);

/* Records one tool call that ran: tool is the name the client sent, kind how it ended, seconds how long
 * it took, and bytes the length of the text it showed the agent. A name that is no tool's is counted
 * in zoekt_connector_unknown_tool_calls_total alone. m may be NULL: nothing is recorded. */
void cmetrics_tool_call(struct cmetrics *m, const char *tool, enum cmetrics_kind kind, double seconds, size_t bytes);

/* Records a tool call the session's rate limit refused before it ran. m may be NULL. */
void cmetrics_tool_rate_limited(struct cmetrics *m, const char *tool);

/* Records one webhook delivery. m may be NULL. */
void cmetrics_webhook(struct cmetrics *m, enum cmetrics_scheme scheme, enum cmetrics_outcome outcome);

/* Appends the exposition (format 0.0.4, through lib/prom.h) to out, whose bound should be at least
 * CMETRICS_TEXT_MAX. Returns ZK_OK or the buffer's ZK_ETOOBIG (then out is emptied, per buf.h). Safe
 * while other threads record. */
int cmetrics_render(struct cmetrics *m, struct buf *out) __attribute__((warn_unused_result));

#endif
