#!/usr/bin/env bash
# The alerts and the metrics they read, with Prometheus and promtool built from their Go module at the
# pinned version (scripts/upstream.sh): the rule file is valid and every alert in it has a promtool unit
# test that passes; the chart's PrometheusRule and manifests/monitoring/ carry exactly the file's groups;
# the sanitized connector's /metrics, after a few real tool calls and a webhook delivery, passes
# `promtool check metrics` and counts them; every query of the Grafana dashboard parses, and every
# metric the dashboard and the rules read is exported. Up to there no cluster is needed. Then the
# operator's /metrics passes `promtool check metrics`, and a real Prometheus that scrapes the sanitized
# operator on the local plane, with the same rules (their `for` shortened), fires ZoektCorpusIndexStale
# for a corpus whose index is older than its maxAge and not for a fresh one beside it.
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

# ---- the connector's /metrics, after real tool calls (no cluster) -------------------------------------
# The sanitized connector, with webhooks on and no Zoekt to reach, as Prometheus scrapes it on its
# metrics-only listener: every call that needs Zoekt fails as unavailable, which is what is counted.
CONN_PORT=$(free_port)
MET_PORT=$(free_port)
mkdir -p "$OP_TMP/queue"
printf 'hook-secret\n' >"$OP_TMP/hook-secret"
printf 'github.com/org/api https://github.com/org/api.git\n' >"$OP_TMP/repos.txt"
"$ZK_BIN/zoekt-connector" --listen "127.0.0.1:$CONN_PORT" --metrics-listen "127.0.0.1:$MET_PORT" \
  --zoekt-url http://127.0.0.1:1 --webhook-secret-file "$OP_TMP/hook-secret" \
  --webhook-repos-file "$OP_TMP/repos.txt" --webhook-queue-dir "$OP_TMP/queue" 2>"$OP_TMP/connector.log" &
CONN_PID=$!
on_exit "kill $CONN_PID"
check "the connector serves /metrics on its metrics listener" eventually 20 \
  bash -c "curl -fsS 'http://127.0.0.1:$MET_PORT/metrics' >/dev/null 2>&1"
mcp() { # mcp BODY [SESSION]: POSTs one JSON-RPC message to the connector's /mcp; prints headers and body
  curl -s -D - --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    ${2:+-H "Mcp-Session-Id: $2"} --data "$1" "http://127.0.0.1:$CONN_PORT/mcp"
}
call() { # call SESSION ID TOOL ARGUMENTS: one tools/call
  mcp '{"jsonrpc":"2.0","id":'"$2"',"method":"tools/call","params":{"name":"'"$3"'","arguments":'"$4"'}}' "$1" >/dev/null
}
sid=$(mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' |
  tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *//p')
check "an MCP session starts (${sid:-no session id})" test -n "$sid"
for i in 2 3 4; do call "$sid" "$i" search_code '{"query":"needle"}'; done
call "$sid" 5 list_repositories '{}'
call "$sid" 6 read_file '{"repo":"a","path":"b","start_line":0}'
call "$sid" 7 grep '{}'
curl -s -o /dev/null --max-time 10 -H 'Content-Type: application/json' --data '{}' "http://127.0.0.1:$CONN_PORT/hooks/push"
curl -fsS "http://127.0.0.1:$MET_PORT/metrics" >"$OP_TMP/connector-metrics.txt"
check "the connector's /metrics passes promtool check metrics" \
  bash -c "'$PROMTOOL' check metrics <'$OP_TMP/connector-metrics.txt' >'$OP_TMP/conn-lint.txt' 2>&1" ||
  sed 's/^/# /' "$OP_TMP/conn-lint.txt" | head -20
has() { grep -qxF "$1" "$OP_TMP/connector-metrics.txt"; }
check "it counts the three search_code calls" has 'zoekt_connector_tool_calls_total{tool="search_code"} 3'
check "and their failures as unavailable (no Zoekt)" \
  has 'zoekt_connector_tool_errors_total{tool="search_code",kind="unavailable"} 3'
check "the list_repositories call, failed as unavailable" \
  has 'zoekt_connector_tool_errors_total{tool="list_repositories",kind="unavailable"} 1'
check "the read_file call with a bad argument as invalid_argument" \
  has 'zoekt_connector_tool_errors_total{tool="read_file",kind="invalid_argument"} 1'
check "every call's duration in the histogram" \
  has 'zoekt_connector_tool_duration_seconds_count{tool="search_code"} 3'
check "the call to a tool that does not exist in the unknown counter alone" \
  bash -c "grep -qxF 'zoekt_connector_unknown_tool_calls_total 1' '$OP_TMP/connector-metrics.txt' && ! grep -q grep '$OP_TMP/connector-metrics.txt'"
check "the unsigned webhook delivery as refused" \
  has 'zoekt_connector_webhook_deliveries_total{scheme="none",outcome="refused_signature"} 1'
check "the connector's own listener serves the same /metrics" \
  bash -c "curl -fsS 'http://127.0.0.1:$CONN_PORT/metrics' | grep -q '^zoekt_connector_build_info'"
check "the metrics listener serves nothing else (/mcp is 404 there)" \
  test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --data '{}' "http://127.0.0.1:$MET_PORT/mcp")" = 404
kill -TERM "$CONN_PID"
wait "$CONN_PID"
conn_rc=$?
check "the connector exits 0 on SIGTERM (got $conn_rc), with no sanitizer report" \
  bash -c "[ $conn_rc = 0 ] && ! grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' '$OP_TMP/connector.log'"

# ---- the dashboard's queries, and the metrics the dashboard and the rules read (no cluster) -----------
DASHBOARD=$ZK_ROOT/charts/zoekt-operator/files/grafana-dashboard.json
# Each panel query, with Grafana's variables replaced by what they stand for, as a recording rule, so
# that promtool parses them all.
python3 - "$DASHBOARD" "$OP_TMP/dashboard-rules.yaml" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
exprs = []
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        e = t["expr"].replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$__range", "1h")
        exprs.append(re.sub(r"\$\{?[A-Za-z_]\w*\}?", ".*", e))
rules = [{"record": "dashboard:query_%d" % i, "expr": e} for i, e in enumerate(exprs)]
json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[2], "w"), indent=1)
PY
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["groups"][0]["rules"]))' "$OP_TMP/dashboard-rules.yaml")
check "promtool parses every one of the dashboard's $n queries" \
  bash -c "'$PROMTOOL' check rules '$OP_TMP/dashboard-rules.yaml' >'$OP_TMP/dash-lint.txt' 2>&1" ||
  sed 's/^/# /' "$OP_TMP/dash-lint.txt" | head -20
# The names exported: the connector's, from the exposition just read, and the operator's, from its
# sources (its /metrics needs the plane; what it renders is checked against promtool above and below).
grep -ohE '"zoekt_(operator|corpus)_[a-z_]+"' "$ZK_ROOT/controller/runtime/metrics.c" "$ZK_ROOT/controller/corpus/gauges.c" |
  tr -d '"' >"$OP_TMP/exported.txt"
sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$OP_TMP/connector-metrics.txt" >>"$OP_TMP/exported.txt"
unknown=$(python3 - "$DASHBOARD" "$RULES" "$OP_TMP/exported.txt" <<'PY'
import json, re, sys, yaml
exported = set(open(sys.argv[3]).read().split())
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "offset", "inf", "nan", "Inf", "NaN"}
def names(expr):
    """The metric names a PromQL expression selects: identifiers that are not functions, aggregations,
    keywords, label names (in matchers and grouping clauses) or durations."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    out = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue  # the exponent or unit of a number
        if e[m.end():].lstrip().startswith("(") or m.group(0) in KEYWORDS:
            continue
        out.add(m.group(0))
    return out
used = set()
d = json.load(open(sys.argv[1]))
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        used |= names(t["expr"])
for v in d["templating"]["list"]:
    q = v.get("query")
    q = q.get("query", "") if isinstance(q, dict) else ""
    m = re.match(r"\s*label_values\((.*),\s*\w+\s*\)\s*$", q)
    if m:
        used |= names(m.group(1))
for g in yaml.safe_load(open(sys.argv[2]))["groups"]:
    for r in g["rules"]:
        used |= names(r["expr"])
def known(n):
    return n in exported or re.sub(r"_(bucket|sum|count)$", "", n) in exported
print(" ".join(sorted(n for n in used if not known(n))))
print("# metrics read: " + " ".join(sorted(used)), file=sys.stderr)
PY
)
check "every metric the dashboard and the rules read is one the operator or the connector exports (unknown: ${unknown:-none})" \
  test -z "$unknown"

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
