#!/usr/bin/env bash
# Agents' load through a corpus's Service on the local node (issue 17, "Load"): LOAD_BENCH_CLIENTS MCP
# clients (default 50) over Streamable HTTP for LOAD_BENCH_SECONDS (default 600), together paced at
# LOAD_BENCH_RATE searches a second (default 25, half a search a second each: an agent thinks between
# calls, and the connector's per-session limit is 5 a second), each search_code LOAD_BENCH_QUERY
# (default ioutil.ReadAll), against the real zoekt-webserver serving make bench's organisation index
# (tests/bench/corpus.sh; bind-mounted read-only as the corpus's volume, so nothing is copied and no
# indexer runs). build/rel/tests/bench/bench_pod is the load generator; every LOAD_BENCH_SAMPLE seconds
# (default 30) the resident memory of the pod's connector, zoekt-webserver and nginx worker processes
# is read from /proc (they are processes of this machine: the node is local).
#
# Needs the node (scripts/cluster.sh up), the images and bench_pod; `make bench-load` brings up all
# three. Prints the load's line, then a Markdown table of the memory samples (first, lowest, highest,
# last, in MiB) and exits non-zero when the load had any error.
set -euo pipefail
export ZK_ROOT=${ZK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$ZK_ROOT/tests/integration/lib.sh"
source "$ZK_ROOT/tests/integration/node/common.sh"

clients=${LOAD_BENCH_CLIENTS:-50}
seconds=${LOAD_BENCH_SECONDS:-600}
rate=${LOAD_BENCH_RATE:-25}
query=${LOAD_BENCH_QUERY:-ioutil.ReadAll}
every=${LOAD_BENCH_SAMPLE:-30}
GEN=$ZK_ROOT/build/rel/tests/bench/bench_pod
[ -x "$GEN" ] || bail "bench_pod is built ($GEN)"
INDEX=$("$ZK_ROOT/tests/bench/corpus.sh" "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus") ||
  bail "the organisation index is built"

node_preflight
NS=$(new_namespace load-bench) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall
STATE=${ZK_CLUSTER_DIR:-$ZK_ROOT/.cluster}
VOL=$STATE/node/volumes/load-$NS
mkdir -p "$VOL/index" && mount --bind -o ro "$INDEX" "$VOL/index" || bail "the index bind-mounted at $VOL/index"
on_exit "umount -l '$VOL/index'; rmdir '$VOL/index' '$VOL'"
host_volume "load-$NS" org-index 2Gi "$VOL" || bail "the volume's PersistentVolume and claim"

operator_install >/dev/null
TOKEN=$(openssl rand -hex 16)
printf '%s' "$TOKEN" >"$NODE_TMP/token"
$KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
cat <<YAML | $KC apply -f - >/dev/null || bail "the corpus is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: $NS}
spec:
  repositories: [{url: "https://git.invalid/placeholder.git", name: placeholder}]
  poll: {interval: "0"}
  storage: {existingClaim: org-index}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, resources: {requests: {cpu: 500m, memory: 512Mi}, limits: {memory: 4Gi}}}
  gateway: {image: "$("$ZK_ROOT/scripts/images.sh" ref gateway)", tokenSecretRef: {name: search-tokens}}
YAML
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
answers() { mcp "$MCP" "$TOKEN" search_code "{\"query\":\"$query\"}" >"$NODE_TMP/first" 2>&1; }
eventually 300 answers || { node_diagnostics "$NS"; bail "search_code answers through the Service"; }
POD=$($KC -n "$NS" get pods -l app.kubernetes.io/component=search -o jsonpath='{.items[0].metadata.name}')

# pids NAME: the PIDs of the processes of the pod's container NAME (its task and every descendant).
pids() {
  local top
  top=$(container_pid "$NS" "$POD" "$1")
  [ -n "$top" ] && { echo "$top"; pgrep -P "$top" || true; }
}
# rss_mib NAME: the resident memory of container NAME's processes together, in MiB.
rss_mib() {
  local p sum=0
  for p in $(pids "$1"); do sum=$((sum + $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done
  echo $((sum / 1024))
}
sample() { echo "$(rss_mib connector) $(rss_mib zoekt-webserver) $(rss_mib nginx)" >>"$NODE_TMP/rss"; }

sample
"$GEN" --url "$MCP" --token-file "$NODE_TMP/token" --clients "$clients" --seconds "$seconds" --rate "$rate" \
  --query "$query" >"$NODE_TMP/load" 2>"$NODE_TMP/load.err" &
gen=$!
while kill -0 "$gen" 2>/dev/null; do
  sleep "$every"
  kill -0 "$gen" 2>/dev/null && sample
done
rc=0
wait "$gen" || rc=$?
sample
echo "# load: $(cat "$NODE_TMP/load") $(head -c 300 "$NODE_TMP/load.err")"
echo "# resident MiB every $every s (connector, zoekt-webserver, nginx): $(tr '\n' ',' <"$NODE_TMP/rss")"
echo "| process | resident MiB: first / lowest / highest / last | samples |"
echo "|---|---|---|"
col=1
for name in connector zoekt-webserver "nginx (master and workers)"; do
  awk -v c="$col" -v name="$name" '
    NR == 1 { first = $c; lo = $c; hi = $c }
    { if ($c < lo) lo = $c; if ($c > hi) hi = $c; last = $c }
    END { printf "| %s | %d / %d / %d / %d | %d |\n", name, first, lo, hi, last, NR }' "$NODE_TMP/rss"
  col=$((col + 1))
done
exit "$rc"
