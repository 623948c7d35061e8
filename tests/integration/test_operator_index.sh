#!/usr/bin/env bash
# Issue 4 against the real control plane: the controller publishes what the webserver serves
# (/index-status, here nginx serving a file on loopback) as repositoryCount, lastIndexTime and the Indexed
# and Fresh conditions; Fresh flips to Stale when time passes maxAge (by itself, through the requeue at
# the freshness deadline, and with the injected clock); the reindex annotation creates exactly one Job
# per value; a completed Job triggers a refresh; an unreachable index service gives a condition with a
# reason and keeps the counts. The operator runs under the shipped RBAC.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

wait_api || { fail "API server not ready"; finish; exit 1; }
install_crd || { fail "CRD install"; finish; exit 1; }
NS=$(new_namespace opidx)
on_exit "drop_namespace $NS"
KC=$(operator_identity "$NS") || { fail "operator identity"; finish; exit 1; }

# ---- end to end: zoekt-replay (recorded /api/list answers) -> the real connector's /index-status ----
REPLAY=$ZK_ROOT/build/san/tests/tools/zoekt-replay
"$REPLAY" --fixtures "$ZK_ROOT/tests/fixtures/zoekt" --port-file "$OP_TMP/replay.port" 2>"$OP_TMP/replay.log" &
on_exit "kill $!"
eventually 10 test -s "$OP_TMP/replay.port"
CONN_PORT=$(free_port)
"$ZK_BIN/zoekt-connector" --listen "127.0.0.1:$CONN_PORT" --zoekt-url "http://127.0.0.1:$(cat "$OP_TMP/replay.port")" \
  2>"$OP_TMP/connector.log" &
on_exit "kill $!"
check "the connector serves /index-status from the replayed Zoekt" eventually 30 \
  curl -fsS "http://127.0.0.1:$CONN_PORT/index-status" -o "$OP_TMP/connector-index.json" 2>/dev/null
WANT=$(grep -o '"repositories":[0-9]*' "$OP_TMP/connector-index.json" | cut -d: -f2)
op_start r "$KC" "$NS" --index-status-url-template "http://127.0.0.1:$CONN_PORT" --index-status-period 1h
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: replayed, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/alpha.git"}]
YAML
check "the controller publishes the connector's repository count ($WANT)" eventually 30 bash -c \
  "[ -n '$WANT' ] && [ \"\$(kubectl -n $NS get csc replayed -o jsonpath='{.status.repositoryCount}')\" = '$WANT' ]"
check "and the replayed index times" bash -c \
  "[ -n \"\$(kubectl -n $NS get csc replayed -o jsonpath='{.status.lastIndexTime}')\" ]"
# The recorded index is from 2026-11-30, older than the default maxAge (36h) ever since: the connector,
# asked with ?maxAge=129600s, names every repository, oldest first (equal times by name).
check "the connector's stale repositories reach status.freshness" bash -c \
  "[ \"\$(kubectl -n $NS get csc replayed -o jsonpath='{.status.freshness.stale} {.status.freshness.staleRepositories[0]}')\" = '$WANT alpha' ]"
check "and Fresh names them" bash -c \
  "kubectl -n $NS get csc replayed -o jsonpath='{.status.conditions[?(@.type==\"Fresh\")].message}' | grep -q '^$WANT repositories are older than maxAge 36h: alpha, beta'"
check "operator r stops cleanly" op_stop r
[ "$_t_fail" -eq 0 ] || { sed 's/^/#   /' "$OP_TMP/replay.log" "$OP_TMP/connector.log" | tail -20; }
kubectl -n "$NS" delete csc replayed --wait=false >/dev/null

iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
index_json() { # index_json REPOS OLDEST_AGE_SECONDS
  local now; now=$(date +%s)
  printf '{"repositories":%d,"shards":%d,"newestIndexTime":"%s","oldestIndexTime":"%s","zoektVersion":"test"}\n' \
    "$1" $(( $1 + 1 )) "$(iso $((now - 5)))" "$(iso $((now - $2)))" >"$OP_TMP/index.json"
}
IDX_PORT=$(free_port)
index_json 3 50
index_server_start "$IDX_PORT" "$OP_TMP/index.json"

URL="http://127.0.0.1:$IDX_PORT"
op_start a "$KC" "$NS" --index-status-url-template "$URL" --index-status-period 1h

cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: fresh, namespace: $NS}
spec:
  repositories:
    - url: https://github.com/example/alpha.git
    - url: https://github.com/example/beta.git
    - url: https://github.com/example/gamma.git
  freshness: {maxAge: 1m}
YAML
st() { kubectl -n "$NS" get csc fresh -o jsonpath="$1" 2>/dev/null; }
check "repositoryCount comes from /index-status" eventually 30 bash -c \
  "[ \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.repositoryCount}')\" = 3 ]"
check "lastIndexTime and oldestIndexTime are published" bash -c \
  "[ -n \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.lastIndexTime}')\" ] && [ -n \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.oldestIndexTime}')\" ]"
check "Indexed is True (IndexServed)" cond_is "$NS" fresh Indexed True/IndexServed
check "kubectl wait --for=condition=Fresh works" bash -c "kubectl -n $NS wait --for=condition=Fresh --timeout=10s csc/fresh >/dev/null"
check "kubectl get csc shows the figures" bash -c "kubectl -n $NS get csc fresh | grep -q ' 3 '"
# The oldest shard is 50 s old and maxAge is 1 m: without any new read, the requeue at the freshness
# deadline flips Fresh.
check "Fresh flips to Stale when maxAge passes (time-based requeue)" eventually 30 cond_is "$NS" fresh Fresh False/Stale
check "a Stale transition is reported with a Warning Event" eventually 10 bash -c \
  "kubectl -n $NS get events --field-selector involvedObject.name=fresh,reason=Stale -o name | grep -q ."

# ---- reindex on demand: one Job per distinct value ----
jobs() { kubectl -n "$NS" get jobs -l codesearch.dev/reindex-request -o name 2>/dev/null | wc -l; }
kubectl -n "$NS" annotate csc fresh codesearch.dev/reindex-requested-at=2026-11-30T01:00:00Z >/dev/null
check "the reindex annotation creates a Job" eventually 20 bash -c "[ \$(kubectl -n $NS get jobs -l codesearch.dev/reindex-request -o name | wc -l) = 1 ]"
check "status reports the honoured request" eventually 10 bash -c \
  "[ \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.lastReindexRequest}')\" = 2026-11-30T01:00:00Z ]"
kubectl -n "$NS" annotate csc fresh example.com/touch=1 >/dev/null # a change that makes the controller look again
sleep 3
check "the same value does not create a second Job" [ "$(jobs)" = 1 ]
kubectl -n "$NS" annotate --overwrite csc fresh codesearch.dev/reindex-requested-at=2026-11-30T02:00:00Z >/dev/null
check "a new value creates exactly one more Job" eventually 20 bash -c "[ \$(kubectl -n $NS get jobs -l codesearch.dev/reindex-request -o name | wc -l) = 2 ]"
check "a ReindexStarted Event is recorded" eventually 10 bash -c \
  "kubectl -n $NS get events --field-selector involvedObject.name=fresh,reason=ReindexStarted -o name | grep -q ."

# ---- a completed Job triggers a refresh (the period is 1 h, so only the Job can explain a new read) ----
index_json 5 5
JOB=$(kubectl -n "$NS" get jobs -l codesearch.dev/reindex-request -o name | tail -n 1)
NOW=$(iso "$(date +%s)")
# The API server validates a Job's status as the Job controller writes it (since 1.31): Complete only
# after SuccessCriteriaMet, no active pods in a finished Job, and the controller's startTime kept.
kubectl -n "$NS" patch "$JOB" --subresource=status --type=merge -p \
  "{\"status\":{\"active\":0,\"ready\":0,\"completionTime\":\"$NOW\",\"succeeded\":1,\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\",\"lastProbeTime\":\"$NOW\",\"lastTransitionTime\":\"$NOW\"},{\"type\":\"Complete\",\"status\":\"True\",\"lastProbeTime\":\"$NOW\",\"lastTransitionTime\":\"$NOW\"}]}}" >/dev/null
check "a completed Job makes the controller read /index-status again" eventually 30 bash -c \
  "[ \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.repositoryCount}')\" = 5 ]"
check "the fresh index makes Fresh True again" eventually 10 cond_is "$NS" fresh Fresh True/WithinMaxAge
check "the indexer's last success time is published" eventually 10 bash -c \
  "[ -n \"\$(kubectl -n $NS get csc fresh -o jsonpath='{.status.indexer.lastSuccessfulTime}')\" ]"

# ---- the same figures as Prometheus gauges on the leader's /metrics ----
G="{namespace=\"$NS\",name=\"fresh\"}"
check "/metrics exports the corpus's repository count" eventually 10 bash -c \
  "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | awk -v m='zoekt_corpus_repositories$G' 'index(\$0, m \" \") == 1 {print \$2}')\" = 5 ]"
check "and Ready and Fresh as 1 or 0, like the conditions" bash -c \
  "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | grep -c '^zoekt_corpus_\(ready\|fresh\)$G [01]$')\" = 2 ]"
last_success=$(date -d "$(st '{.status.indexer.lastSuccessfulTime}')" +%s)
check "the indexer's last success as the status's time in Unix seconds ($last_success)" bash -c \
  "curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | grep -qx 'zoekt_corpus_indexer_last_success_timestamp_seconds$G $last_success'"
check "the maxAge of 1m as 60 seconds" bash -c \
  "curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | grep -qx 'zoekt_corpus_max_age_seconds$G 60'"
check "and the operator's build" bash -c \
  "curl -fsS http://127.0.0.1:${OP_PORT[a]}/metrics | grep -q '^zoekt_operator_build_info{version=\"[0-9.]*\"} 1$'"

# ---- the injected clock: an operator whose clock is an hour ahead sees the same index as stale ----
check "operator a stops cleanly" op_stop a
op_start b "$KC" "$NS" --index-status-url-template "$URL" --index-status-period 1h --clock-offset 3600
check "with the clock an hour ahead, Fresh is False/Stale" eventually 30 cond_is "$NS" fresh Fresh False/Stale
check "operator b stops cleanly" op_stop b

# ---- the index service down: a condition with a reason; counts kept (a fresh operator has no cached
# answer, so this is the status it starts from) ----
index_server_stop
op_start c "$KC" "$NS" --index-status-url-template "$URL" --index-status-period 1s
check "an unreachable index service gives Indexed=Unknown with reason IndexStatusUnavailable" eventually 30 \
  cond_is "$NS" fresh Indexed Unknown/IndexStatusUnavailable
check "the condition says why" bash -c \
  "kubectl -n $NS get csc fresh -o jsonpath='{.status.conditions[?(@.type==\"Indexed\")].message}' | grep -q index-status"
check "the counts are kept while the index service is down" [ "$(st '{.status.repositoryCount}')" = 5 ]
index_json 5 5
index_server_start "$IDX_PORT" "$OP_TMP/index.json"
check "when the index service is back, Indexed recovers" eventually 30 cond_is "$NS" fresh Indexed True/IndexServed
check "operator c stops cleanly" op_stop c
[ "$_t_fail" -eq 0 ] || { op_log a 20; op_log c 20; }
finish
