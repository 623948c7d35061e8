#!/usr/bin/env bash
# One shard against three on the local node (issue 32): make bench's organisation index
# (tests/bench/corpus.sh, about 200 repositories, 957 MB) served by a corpus of one shard and by a corpus
# of three, in one run, on the same node. The three-shard corpus's folders hold hard links to the same
# index files, split by lib/shard.h's shard_of (tests/tools/shard-of), and every folder is bind-mounted
# read-only as the corpora's volumes: nothing is copied and no indexer runs. For each corpus in turn, and
# each query of the set, build/rel/tests/bench/bench_pod runs SHARDS_BENCH_CLIENTS MCP clients (default
# 4) for SHARDS_BENCH_SECONDS (default 20), together paced at SHARDS_BENCH_RATE searches a second
# (default 16), through the corpus's Service and reports p50 and p99; the CPU
# time of the corpus's connectors (all of its pods: with shards, the one that answers asks the others)
# over those calls gives the connector CPU per call; after the calls, the resident memory of each search
# pod's zoekt-webserver and connector is read from /proc (the node is local). Writes the section
# "## Search shards: one against three, on the local node" of docs/benchmarks.md.
#
# Needs the node, the images and bench_pod (`make bench` brings them up).
set -euo pipefail
export ZK_ROOT=${ZK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$ZK_ROOT/tests/integration/lib.sh"
source "$ZK_ROOT/tests/integration/node/common.sh"

clients=${SHARDS_BENCH_CLIENTS:-4}
seconds=${SHARDS_BENCH_SECONDS:-20}
# Together, paced below the connector's per-session limit (5 calls a second each).
rate=${SHARDS_BENCH_RATE:-16}
# "QUERY|REPO": the search restricted to that repository, which a sharded corpus asks of its shard alone.
queries=("ioutil.ReadAll" "func main" "TODO" "err" "err|go-git/go-git")
GEN=$ZK_ROOT/build/rel/tests/bench/bench_pod
SHARD_OF=$ZK_ROOT/build/san/tests/tools/shard-of
for f in "$GEN" "$SHARD_OF"; do [ -x "$f" ] || bail "$f is built"; done
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
INDEX=$("$ZK_ROOT/tests/bench/corpus.sh" "$cache/bench-corpus") || bail "the organisation index is built"

# The three shards' folders: hard links to the same index files, split by shard_of.
split=$("$ZK_ROOT/tests/bench/split.sh" "$INDEX" 3) || bail "the index is split into three shards' folders"

node_preflight
NS=$(new_namespace shards-bench) || bail "a namespace for the corpora"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall
state=${ZK_CLUSTER_DIR:-$ZK_ROOT/.cluster}
# bind DIR TARGET: DIR read-only at TARGET until the run ends.
bind() {
  mkdir -p "$2" && mount --bind -o ro "$1" "$2" || bail "$1 bind-mounted at $2"
  on_exit "umount -l '$2'"
}
vol1=$state/node/volumes/shards-bench-1-$NS
vol3=$state/node/volumes/shards-bench-3-$NS
on_exit "rm -rf '$vol1' '$vol3'"
bind "$INDEX" "$vol1/index"
for k in 0 1 2; do bind "$split/$k" "$vol3/index-shards/3/$k"; done
host_volume "shards-bench-1-$NS" one-index 2Gi "$vol1" || bail "the one-shard corpus's volume"
host_volume "shards-bench-3-$NS" three-index 2Gi "$vol3" || bail "the three-shard corpus's volume"

operator_install >/dev/null
TOKEN=$(openssl rand -hex 16)
printf '%s' "$TOKEN" >"$NODE_TMP/token"
$KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
for corpus in one:1 three:3; do
  cat <<YAML | $KC apply -f - >/dev/null || bail "corpus ${corpus%:*} is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: ${corpus%:*}, namespace: $NS}
spec:
  repositories: [{url: "https://git.invalid/placeholder.git", name: placeholder}]
  poll: {interval: "0"}
  storage: {existingClaim: ${corpus%:*}-index}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, shards: ${corpus#*:}, resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 4Gi}}}
  gateway: {image: "$("$ZK_ROOT/scripts/images.sh" ref gateway)", tokenSecretRef: {name: search-tokens}}
YAML
done

# pods CORPUS: its search pods.
pods() { $KC -n "$NS" get pods -l "app.kubernetes.io/instance=$1,app.kubernetes.io/component=search" -o name | cut -d/ -f2; }
# answers CORPUS: search_code answers through its Service, with every shard counted.
answers() {
  local out
  out=$(mcp "$(service_url "$NS" "$1-search" 8080 /mcp)" "$TOKEN" search_code '{"query":"ioutil.ReadAll"}') &&
    ! grep -q 'Partial answer' <<<"$out"
}
for c in one three; do
  eventually 300 answers "$c" || { node_diagnostics "$NS"; bail "corpus $c answers through its Service"; }
done

hz=$(getconf CLK_TCK)
# cpu_ticks CORPUS: user + system ticks of its connectors' processes, summed over its pods.
cpu_ticks() {
  local pod p sum=0
  for pod in $(pods "$1"); do
    p=$(container_pid "$NS" "$pod" connector)
    [ -n "$p" ] && sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$sum"
}
# rss CORPUS CONTAINER: each pod's container resident MiB, space-separated.
rss() {
  local pod p out=""
  for pod in $(pods "$1"); do
    p=$(container_pid "$NS" "$pod" "$2")
    out+="$(( $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status") / 1024 )) "
  done
  echo "${out% }"
}

# val KEY: a value of bench_pod's line.
val() { sed -nE "s/.*\b$1=([^ ]+).*/\1/p" <<<"$line"; }
rows=""
for c in one three; do
  url=$(service_url "$NS" "$c-search" 8080 /mcp)
  before=$(cpu_ticks "$c")
  calls=0
  for q in "${queries[@]}"; do
    restrict=()
    label=$q
    if [[ $q == *"|"* ]]; then
      restrict=(--repo "${q#*|}")
      label="${q%%|*} in repo ${q#*|}"
      q=${q%%|*}
    fi
    line=$("$GEN" --url "$url" --token-file "$NODE_TMP/token" --clients "$clients" --seconds "$seconds" --rate "$rate" \
      --query "$q" "${restrict[@]}") ||
      bail "bench_pod on $c, query $label: $line"
    calls=$((calls + $(val searches)))
    rows+="$c|$label|$(val p50_ms)|$(val p99_ms)|$(val rate)|$(val errors)"$'\n'
  done
  after=$(cpu_ticks "$c")
  eval "cpu_$c=\$(awk -v t=$((after - before)) -v hz=$hz -v n=$calls 'BEGIN { printf \"%.2f\", 1000 * t / hz / n }')"
  eval "zoekt_rss_$c=\"$(rss "$c" zoekt-webserver)\""
  eval "conn_rss_$c=\"$(rss "$c" connector)\""
done

table=$(awk -F'|' '
  NF > 1 { key = $2; p50[$1, key] = $3; p99[$1, key] = $4; rate[$1, key] = $5; err[$1, key] = $6; if (!(key in seen)) { seen[key] = 1; order[n++] = key } }
  END { for (i = 0; i < n; i++) { k = order[i]
          printf "| %s | %s / %s ms | %s / %s ms | %s / %s | %s / %s |\n", k, p50["one", k], p99["one", k],
                 p50["three", k], p99["three", k], rate["one", k], rate["three", k], err["one", k], err["three", k] } }' <<<"$rows")
section=$(cat <<EOF
## Search shards: one against three, on the local node

Generated by tests/bench/shards.sh on $(date -u +%FT%TZ), $(nproc) CPU(s), load average $(cut -d" " -f1-3 /proc/loadavg)
at the end. make bench's organisation index ($(ls "$INDEX"/*.zoekt | wc -l) repositories, $(du -sh "$INDEX" | cut -f1)) served by a corpus of
one shard (the baseline) and by a corpus of three (the same index files, split by shard_of), one after
the other on the same node, each search pod a zoekt-webserver, nginx and a connector. Each query runs
for $seconds s from $clients MCP clients, together $rate searches a second, through the corpus's Service
(build/rel/tests/bench/bench_pod; latency from when a search was due to the tool's answer). With three shards the connector that answers asks the other two
shards through their Services, and the answers merge; a search restricted to one repository ("in repo")
asks only the shard that serves it.

Goal (issue 32): a search of a sharded corpus costs about what it costs unsharded, while each search
pod maps only its shard.

| Query | One shard: p50 / p99 | Three shards: p50 / p99 | Searches per second (one / three) | Errors (one / three) |
|---|---:|---:|---:|---:|
$table

| | One shard | Three shards |
|---|---:|---:|
| Connector CPU per call, all the corpus's connectors | $cpu_one ms | $cpu_three ms |
| zoekt-webserver resident MiB, per search pod | $zoekt_rss_one | $zoekt_rss_three |
| Connector resident MiB, per search pod | $conn_rss_one | $conn_rss_three |
EOF
)
printf '%s\n' "$section" | python3 "$ZK_ROOT/tests/bench/section.py" "$ZK_ROOT/docs/benchmarks.md"
printf '%s\n' "$section"
