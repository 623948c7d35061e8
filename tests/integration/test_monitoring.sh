#!/usr/bin/env bash
# The alerts and the metrics they read, with Prometheus and promtool built from their Go module at the
# pinned version (scripts/upstream.sh): the rule file is valid and every alert in it has a promtool unit
# test that passes; the chart's PrometheusRule and manifests/monitoring/ carry exactly the file's groups;
# the operator's /metrics passes `promtool check metrics`; and a real Prometheus that scrapes the
# sanitized operator on the local plane, with the same rules (their `for` shortened), fires
# ZoektCorpusIndexStale for a corpus whose index is older than its maxAge and not for a fresh one beside
# it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

source "$(dirname "$0")/monitoring/prometheus.sh"
RULES=$PROM_RULES
quiet() { "$@" >/dev/null 2>&1; }

# ---- the rule file, its copies and its unit tests ----------------------------------------------------
check "promtool check rules accepts the rule file" quiet "$PROMTOOL" check rules "$RULES"
groups_of() { # groups_of FILE [KIND]: the rule groups of a rule file, or of the KIND object in a stream
  python3 - "$@" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
if len(sys.argv) > 2:
    docs = [d["spec"] for d in docs if d.get("kind") == sys.argv[2]]
print(json.dumps(docs[0]["groups"], sort_keys=True))
PY
}
want=$(groups_of "$RULES")
check "manifests/monitoring's PrometheusRule has exactly the file's groups" \
  test "$(groups_of "$ZK_ROOT/manifests/monitoring/prometheusrule.yaml" PrometheusRule)" = "$want"
helm template zo "$ZK_ROOT/charts/zoekt-operator" --set monitoring.prometheusRule.enabled=true \
  --set monitoring.serviceMonitor.enabled=true >"$OP_TMP/chart.yaml"
check "the chart's PrometheusRule has exactly the file's groups" \
  test "$(groups_of "$OP_TMP/chart.yaml" PrometheusRule)" = "$want"
check "the chart's ServiceMonitor scrapes the metrics Service's port" \
  bash -c "grep -A20 '^kind: ServiceMonitor' '$OP_TMP/chart.yaml' | grep -q 'port: metrics'"
check "promtool test rules passes" quiet "$PROMTOOL" test rules "$ZK_ROOT/tests/monitoring/rules_test.yaml"
untested=$(for a in $(sed -n 's/^ *- alert: //p' "$RULES"); do
  grep -q "alertname: $a\$" "$ZK_ROOT/tests/monitoring/rules_test.yaml" || echo "$a"; done)
check "every alert has a promtool test (untested: ${untested:-none})" test -z "$untested"
runbooks=$(for a in $(sed -n 's/^ *- alert: //p' "$RULES"); do
  grep -qi "^### $a\$" "$ZK_ROOT/docs/operations.md" || echo "$a"; done)
check "every alert has a runbook section in docs/operations.md (missing: ${runbooks:-none})" test -z "$runbooks"

# ---- a real Prometheus scraping the operator ---------------------------------------------------------
wait_api || bail "the API server is ready"
install_crd || bail "the CRD is served"
NS=$(new_namespace monitoring) || bail "a namespace"
on_exit "drop_namespace $NS"
KCFG=$(operator_identity "$NS") || bail "the operator's identity"
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# /index-status for both corpora: 3 repositories, the oldest indexed 10 minutes ago.
now=$(date +%s)
printf '{"repositories":3,"shards":3,"newestIndexTime":"%s","oldestIndexTime":"%s","zoektVersion":"test"}\n' \
  "$(iso $((now - 60)))" "$(iso $((now - 600)))" >"$OP_TMP/index.json"
IDX_PORT=$(free_port)
index_server_start "$IDX_PORT" "$OP_TMP/index.json"
op_start mon "$KCFG" "$NS" --index-status-url-template "http://127.0.0.1:$IDX_PORT" || bail "the operator starts"
for c in stale:5m fresh:1h; do
  cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: ${c%:*}, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/alpha.git"}]
  freshness: {maxAge: ${c#*:}}
YAML
done
judged() { cond_is "$NS" stale Fresh False/Stale && cond_is "$NS" fresh Fresh True/WithinMaxAge; }
check "the operator judges one corpus stale and the other fresh" eventually 60 judged

gauges() { curl -fsS "http://127.0.0.1:${OP_PORT[mon]}/metrics" >"$OP_TMP/metrics.txt" &&
  grep -q "^zoekt_corpus_fresh{namespace=\"$NS\",name=\"fresh\"} 1$" "$OP_TMP/metrics.txt"; }
check "the leader's /metrics has the corpora's gauges" eventually 30 gauges
check "which pass promtool check metrics, with the operator's own" \
  bash -c "'$PROMTOOL' check metrics <'$OP_TMP/metrics.txt' >'$OP_TMP/lint.txt' 2>&1" ||
  sed 's/^/# /' "$OP_TMP/lint.txt" | head -20

prom_start "  - job_name: zoekt-operator
    static_configs: [{targets: [\"127.0.0.1:${OP_PORT[mon]}\"]}]"
check "Prometheus starts and scrapes the operator" eventually 60 prom_up || prom_log
check "ZoektCorpusIndexStale fires for the corpus whose index is past its maxAge" \
  eventually 60 prom_firing ZoektCorpusIndexStale "$NS" stale
quiet_for_fresh() { ! prom_firing ZoektCorpusIndexStale "$NS" fresh; }
check "and not for the fresh corpus beside it" quiet_for_fresh
check "ZoektOperatorNoLeader stays quiet while the operator leads" bash -c \
  "! curl -fsS 'http://127.0.0.1:$PROM_PORT/api/v1/alerts' | grep -q ZoektOperatorNoLeader"
check "the operator stops cleanly" op_stop mon
finish
