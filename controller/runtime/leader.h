/* leader.h: leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection does.
 *
 * Two operator replicas run; only the one holding the Lease reconciles. A candidate polls the Lease
 * every retry period. It takes the Lease when it is absent, released (empty holderIdentity) or
 * expired; the holder renews it every retry period. Expiry is judged on the candidate's own monotonic
 * clock (lease duration after it last saw the Lease record change), never by comparing the holder's
 * renewTime with the local wall clock, so clock skew between nodes cannot cause two leaders. Every
 * write is a PUT carrying the resourceVersion that was read, so two candidates racing for an expired
 * Lease cannot both win: the loser gets a Conflict.
 *
 * A leader that cannot renew for the renew deadline stops leading for good (leader_lost); the operator
 * then exits and lets its Deployment restart it as a fresh candidate (simpler and safer than trying to
 * stop in-flight work and resume). The state is read with leader_is_leading and leader_lost from any
 * thread. On leader_stop a leader releases the Lease (empty holderIdentity,
 * 1 s duration), so the standby takes over at its next poll instead of waiting for expiry. */
#ifndef ZK_RUNTIME_LEADER_H
#define ZK_RUNTIME_LEADER_H

#include "controller/runtime/metrics.h"
#include "err.h"
#include "kube/client.h"

#include <cjson/cJSON.h>

struct leader_opts {
    const char *namespace; /* copied */
    const char *name;      /* copied */
    const char *identity;  /* this replica, e.g. the pod name; copied */
    double lease_duration; /* seconds; 0: 15 */
    double renew_deadline; /* seconds; 0: 10 */
    double retry_period;   /* seconds; 0: 2 */
    struct metrics *metrics; /* may be NULL */
};

struct leader;

/* Starts the election thread. *out owned by the caller (leader_stop, then leader_free). */
int leader_start(struct kube_client *c, const struct leader_opts *o, struct leader **out, struct zk_err *err);

int leader_is_leading(struct leader *l);

/* Whether this candidate led and could not renew within the renew deadline. It then stays lost: it
 * neither leads nor competes again. leader_stop is not a loss. */
int leader_lost(struct leader *l);

/* Stops the election thread and, when leading, releases the Lease. */
void leader_stop(struct leader *l);
void leader_free(struct leader *l);

/* The Lease spec this candidate writes when it takes or renews lease (the current object, or NULL when
 * there is none): holderIdentity, leaseDurationSeconds, renewTime, and acquireTime and
 * leaseTransitions updated only when the holder changes. Pure; exposed for unit tests. now_us is the
 * wall-clock time in microseconds. Returns a new spec object owned by the caller, or NULL. */
cJSON *leader_claim_spec(const cJSON *lease, const char *identity, int duration_seconds, long long now_us);

/* The MicroTime format Leases use: "2006-01-02T15:04:05.000000Z". len must be at least 28. */
void leader_format_micro(long long us, char *dst, size_t len);

#endif
