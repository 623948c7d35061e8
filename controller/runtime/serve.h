/* serve.h: the operator's small HTTP endpoint: /healthz, /readyz and /metrics (libmicrohttpd).
 *
 * /healthz answers 200 while the process runs (the liveness probe). /readyz answers 200 once the
 * caches are synced, whether this replica leads or stands by: a standby is healthy and ready, it just
 * does not reconcile. /metrics is the Prometheus text from metrics.h. Anything else is 404; any method
 * but GET and HEAD is 405. */
#ifndef ZK_RUNTIME_SERVE_H
#define ZK_RUNTIME_SERVE_H

#include "buf.h"
#include "err.h"

#include <netinet/in.h>

/* Returns 1 when ready; called from the server's thread. */
typedef int serve_ready_fn(void *ud);
/* Appends the metrics text to out; returns ZK_OK or a buf error. Called from the server's thread. */
typedef int serve_metrics_fn(void *ud, struct buf *out);

struct serve_opts {
    const char *addr; /* "host:port" or ":port" (all interfaces); port 0 picks a free one */
    serve_ready_fn *ready;
    serve_metrics_fn *metrics;
    void *ud;
};

struct serve;

/* Starts listening. *out owned by the caller (serve_stop). */
int serve_start(const struct serve_opts *o, struct serve **out, struct zk_err *err);

/* The port actually bound (useful with port 0). */
int serve_port(const struct serve *s);

/* Stops the server and frees it. NULL is fine. */
void serve_stop(struct serve *s);

/* Parses "host:port" or ":port" (an IPv4 address or "localhost"). Pure. Returns ZK_OK or ZK_EINVAL. */
int serve_parse_addr(const char *addr, struct sockaddr_in *out, struct zk_err *err);

#endif
