# A real Prometheus for the suites that watch the operator with it (test_monitoring.sh,
# test_node_helm.sh): built from its Go module at the pinned version (scripts/upstream.sh), run on
# loopback with the shipped alert rules, their `for` cut to 0s so that an alert fires on the first
# evaluation that finds its condition. Source after tests/integration/lib.sh; it sets PROMETHEUS and
# PROMTOOL, or skips the suite with the reason when Prometheus cannot be built.

PROM_RULES=$ZK_ROOT/charts/zoekt-operator/files/prometheus-rules.yaml
PROM_TMP=$(mktemp -d /tmp/zk-prometheus.XXXXXX)
on_exit "rm -rf $PROM_TMP"
_prom_dir=$("$ZK_ROOT/scripts/upstream.sh" bin prometheus 2>"$PROM_TMP/build.log") ||
  skip_suite "Prometheus cannot be built from its Go module: $(tail -1 "$PROM_TMP/build.log")"
PROMTOOL=$_prom_dir/promtool
PROMETHEUS=$_prom_dir/prometheus

# prom_start SCRAPE_CONFIGS: starts Prometheus scraping every second with SCRAPE_CONFIGS (the YAML list
# items under scrape_configs:, indented by two) and the rules; sets PROM_PORT. Stopped when the suite ends.
prom_start() {
  prom_cut_for <"$PROM_RULES" >"$PROM_TMP/rules.yaml"
  printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [%s]\nscrape_configs:\n%s\n' \
    "$PROM_TMP/rules.yaml" "$1" >"$PROM_TMP/prometheus.yml"
  prom_run "$PROM_TMP/prometheus.yml"
}

# prom_cut_for: a rule file on stdin with every `for` cut to 0s, on stdout.
prom_cut_for() { sed -E 's/^( *)for: .*/\1for: 0s/'; }

# prom_run CONFIG: starts Prometheus with the configuration file CONFIG; sets PROM_PORT.
prom_run() {
  PROM_PORT=$("$ZK_ROOT/scripts/free-port.sh")
  "$PROMETHEUS" --config.file="$1" --storage.tsdb.path="$PROM_TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$PROM_TMP/prometheus.log" 2>&1 &
  on_exit "kill $!"
}

# prom_up [JOB_NAME [N]]: every target Prometheus has found (for the scrape config JOB_NAME) is scraped
# successfully, and there are at least N of them (default 1).
prom_up() {
  curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/targets" 2>/dev/null | python3 -c '
import json, sys
t = [x for x in json.load(sys.stdin)["data"]["activeTargets"] if not sys.argv[1] or x["scrapePool"] == sys.argv[1]]
sys.exit(len(t) < int(sys.argv[2]) or any(x["health"] != "up" for x in t))' "${1:-}" "${2:-1}"
}
# prom_log [N]: the last N lines of Prometheus's log, and each target it found with its health and last
# error, as TAP comments.
prom_log() {
  tail -n "${1:-5}" "$PROM_TMP/prometheus.log" | sed 's/^/# /'
  curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/targets" 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print("# target", t["scrapePool"], t["scrapeUrl"], t["health"], t.get("lastError", ""))' || true
}

# prom_firing ALERT NS NAME: Prometheus has ALERT firing for corpus NS/NAME.
prom_firing() {
  curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(not any(a["labels"].get("alertname") == sys.argv[1] and a["labels"].get("namespace") == sys.argv[2]
                 and a["labels"].get("name") == sys.argv[3] and a["state"] == "firing" for a in alerts))' "$1" "$2" "$3"
}
