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
source "$ZK_ROOT/tests/bench/pod_corpus.sh"
pod_corpus load-bench "$query"

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
