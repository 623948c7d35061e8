#!/usr/bin/env bash
# Leader election between two operator processes over a coordination.k8s.io/v1 Lease: exactly one
# reconciles; after `kill -9` of the leader the standby takes over within the lease duration (plus one
# retry period); SIGTERM releases the Lease so a standby takes over at its next poll; /readyz is 200 on
# both. Short lease timings keep the test fast; the algorithm is the same at the default 15/10/2 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

wait_api || { fail "API server not ready"; finish; exit 1; }
install_crd || { fail "CRD install"; finish; exit 1; }
NS=$(new_namespace opleader)
on_exit "drop_namespace $NS"
KC=$(operator_identity "$NS") || { fail "operator identity"; finish; exit 1; }
LEASE="zoekt-operator-$NS"
TIMING=(--lease-duration 4 --renew-deadline 3 --retry-period 1 --index-status-url-template http://127.0.0.1:1)

op_start a "$KC" "$NS" "${TIMING[@]}"
check "the first operator becomes leader" eventually 20 bash -c "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | awk '/^zoekt_operator_leader /{print \$2}')\" = 1 ]"
op_start b "$KC" "$NS" "${TIMING[@]}"
check "the standby is ready too" eventually 20 curl -fsS "http://127.0.0.1:${OP_PORT[b]}/readyz" -o /dev/null
sleep 2
check "the standby does not lead" [ "$(op_metric b zoekt_operator_leader)" = 0 ]
check "the Lease names the leader" bash -c \
  "kubectl -n $NS get lease $LEASE -o jsonpath='{.spec.holderIdentity}' | grep -q _${OP_PID[a]}\$"

corpus() {
  cat <<YAML
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: $1, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/$1.git"}]
YAML
}
corpus one | kubectl apply -f - >/dev/null
check "the leader reconciles" eventually 30 exists "$NS" deployment one-search
check "the standby reconciled nothing" [ "$(op_metric b 'zoekt_operator_reconcile_total{result="success"}')" = 0 ]
check "the standby wrote nothing" [ "$(op_api_count b apply)" = 0 ]
G="zoekt_corpus_ready{namespace=\"$NS\",name=\"one\"}"
check "the leader exports the corpus's gauges" eventually 10 bash -c \
  "curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | grep -q '^$G '"
check "the standby exports none, so each corpus has one series" bash -c \
  "! curl -fsS http://127.0.0.1:${OP_PORT[b]}/metrics | grep -q '^zoekt_corpus_'"

# ---- failover after kill -9 ----
T0=$(date +%s.%N)
kill -9 "${OP_PID[a]}"
check "the standby takes over after the leader is killed" eventually 20 bash -c \
  "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[b]}/metrics | awk '/^zoekt_operator_leader /{print \$2}')\" = 1 ]"
T1=$(date +%s.%N)
check "the new leader exports the gauges" eventually 10 bash -c \
  "curl -fsS http://127.0.0.1:${OP_PORT[b]}/metrics | grep -q '^$G '"
SECS=$(awk "BEGIN{print $T1 - $T0}")
echo "# measured: failover took $SECS s (lease duration 4 s, retry period 1 s)"
check "failover within the lease duration plus two retry periods (+1 s test polling)" \
  awk "BEGIN{exit !($SECS <= 7)}"
corpus two | kubectl apply -f - >/dev/null
check "the new leader reconciles" eventually 30 exists "$NS" deployment two-search
check "the Lease counts a transition" bash -c \
  "[ \"\$(kubectl -n $NS get lease $LEASE -o jsonpath='{.spec.leaseTransitions}')\" -ge 1 ]"

# ---- SIGTERM releases the Lease: the next standby takes over at once ----
op_start c "$KC" "$NS" "${TIMING[@]}"
check "a third operator stands by" eventually 20 curl -fsS "http://127.0.0.1:${OP_PORT[c]}/readyz" -o /dev/null
check "the leader stops cleanly on SIGTERM with no sanitizer report" op_stop b
T0=$(date +%s.%N)
check "the standby takes over after the release" eventually 10 bash -c \
  "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[c]}/metrics | awk '/^zoekt_operator_leader /{print \$2}')\" = 1 ]"
SECS=$(awk "BEGIN{print $(date +%s.%N) - $T0}")
echo "# measured: handover $SECS s after the released leader exited"
# Without the release the standby would wait for expiry: at least 3 s after the exit (the last renewal
# was at most one retry period before it). With it, the standby's next poll (1 s) takes over.
check "the released Lease is taken over at the standby's next poll, before expiry" awk "BEGIN{exit !($SECS < 2.5)}"
check "the last operator stops cleanly" op_stop c
check "a stopped leader leaves the Lease released" bash -c \
  "[ -z \"\$(kubectl -n $NS get lease $LEASE -o jsonpath='{.spec.holderIdentity}')\" ]"

# ---- a leader that cannot renew gives up and exits 1 (its Deployment restarts it) ----
op_start d "$KC" "$NS" "${TIMING[@]}"
check "a fourth operator becomes leader" eventually 20 bash -c "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[d]}/metrics | awk '/^zoekt_operator_leader /{print \$2}')\" = 1 ]"
kubectl -n "$NS" delete rolebinding zoekt-operator-leader-election >/dev/null # renewals are now Forbidden
lost() { ! kill -0 "${OP_PID[d]}" 2>/dev/null; }
check "losing the Lease stops the operator within the renew deadline" eventually 15 lost
wait "${OP_PID[d]}"; RC=$?
check "and it exits with status 1" [ "$RC" -eq 1 ]
check "its log says why" grep -q "Lost the leader Lease" "$OP_TMP/d.log"
check "with no sanitizer report" bash -c "! grep -qE 'Sanitizer|runtime error:' '$OP_TMP/d.log'"

# ---- a second signal does not wait for the drain ----
kubectl -n "$NS" create rolebinding zoekt-operator-leader-election --role=zoekt-operator-leader-election \
  --user=zoekt-operator >/dev/null
# The drain has to be under way when the second signal comes, and a drain with nothing in flight is
# over in milliseconds. So the corpus's /index-status read goes to a port that takes the connection
# and never answers: the reconcile making it holds the drain for the read's 5 s timeout.
HANG_PORT=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
c, _ = s.accept(); open(sys.argv[2], "w").close(); time.sleep(600)' "$HANG_PORT" "$OP_TMP/index-read" &
on_exit "kill $!"
op_start e "$KC" "$NS" "${TIMING[@]}" --index-status-url-template "http://127.0.0.1:$HANG_PORT/{namespace}/{name}"
check "the operator's reconcile is waiting for /index-status" eventually 20 test -e "$OP_TMP/index-read"
kill -TERM "${OP_PID[e]}"; sleep 0.05; kill -TERM "${OP_PID[e]}" # two signals sent at once could merge into one
wait "${OP_PID[e]}"; RC=$?
check "a second SIGTERM exits at once with status 1 (a finished drain exits 0)" [ "$RC" -eq 1 ]
[ "$_t_fail" -eq 0 ] || { op_log a 15; op_log b 15; op_log c 15; }
finish
