#!/usr/bin/env bash
# Hostile clients against a corpus's search pod on the local node, while honest agents search (issue 28,
# docs/security.md "Hostile clients"). For HOSTILE_BENCH_SECONDS (default 180), through the corpus's
# Service and the real nginx:
#   tests/bench/hostile.py  600 connections trickling a request header, 60 trickling a body to /mcp,
#                           4 workers sending initialize as fast as answered, 2 sending batches of 32
#                           tools/list (and of 33, over the bound);
#   bench_pod               HOSTILE_BENCH_AGENTS honest MCP clients (default 10) searching
#                           HOSTILE_BENCH_QUERY, paced at HOSTILE_BENCH_RATE searches a second (default 5),
#                           from 10 s before the attack (which lasts 20 s less) to its end: agents at work
#                           have their sessions when a flood begins.
# All of them come from this machine, so from one address: the slow bodies stay below the gateway's 128
# connections per address, which would otherwise refuse the honest agents too (nginx.conf).
# Every 5 s the resident memory of the connector and of nginx is read; at the end the container's
# memory cgroup high-water mark, and the pod's restarts and OOM kills.
#
# Prints the honest agents' line (searches, p50, p99, errors), the attackers' JSON, and a Markdown table;
# exits non-zero when a container restarted or was OOM-killed, or when more than 1% of the honest
# searches failed. `make bench-hostile` brings up the node, the images and bench_pod first.
set -euo pipefail
export ZK_ROOT=${ZK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$ZK_ROOT/tests/integration/lib.sh"
source "$ZK_ROOT/tests/integration/node/common.sh"
source "$ZK_ROOT/tests/bench/pod_corpus.sh"

seconds=${HOSTILE_BENCH_SECONDS:-180}
agents=${HOSTILE_BENCH_AGENTS:-10}
rate=${HOSTILE_BENCH_RATE:-5}
query=${HOSTILE_BENCH_QUERY:-ioutil.ReadAll}
GEN=$ZK_ROOT/build/rel/tests/bench/bench_pod
[ -x "$GEN" ] || bail "bench_pod is built ($GEN)"
pod_corpus hostile-bench "$query"

# cgroup_peak_mib NAME: the high-water mark of container NAME's memory cgroup (v1 or v2), in MiB.
cgroup_peak_mib() {
  local pid path f
  pid=$(container_pid "$NS" "$POD" "$1") || { echo "?"; return; }
  # cgroup v1 names the memory controller's path on a line of its own; v2 has one line, "0::PATH".
  path=$(awk -F: '$2 == "memory" {print $3; exit}' "/proc/$pid/cgroup")
  f=/sys/fs/cgroup/memory$path/memory.max_usage_in_bytes
  if [ -z "$path" ]; then
    path=$(awk -F: '$1 == "0" {print $3; exit}' "/proc/$pid/cgroup")
    f=/sys/fs/cgroup$path/memory.peak
  fi
  [ -r "$f" ] && { echo $(($(cat "$f") / 1048576)); return; }
  echo "?"
}
restarts() {
  $KC -n "$NS" get pod "$POD" -o jsonpath='{range .status.containerStatuses[*]}{.name}={.restartCount}{" "}{.lastState.terminated.reason}{";"}{end}'
}

echo "$(rss_mib connector) $(rss_mib nginx)" >"$NODE_TMP/rss"
"$GEN" --url "$MCP" --token-file "$NODE_TMP/token" --clients "$agents" --seconds "$seconds" --rate "$rate" \
  --query "$query" >"$NODE_TMP/load" 2>"$NODE_TMP/load.err" &
gen=$!
sleep 10 # the agents have their sessions, as agents at work do, when the attack starts
python3 "$ZK_ROOT/tests/bench/hostile.py" --url "$MCP" --token-file "$NODE_TMP/token" --seconds "$((seconds - 20))" \
  >"$NODE_TMP/attack.json" 2>"$NODE_TMP/attack.err" &
attack=$!
while kill -0 "$gen" 2>/dev/null; do
  sleep 5
  echo "$(rss_mib connector) $(rss_mib nginx)" >>"$NODE_TMP/rss"
done
wait "$gen" || true
wait "$attack" || true
echo "# agents: $(cat "$NODE_TMP/load") $(head -c 300 "$NODE_TMP/load.err")"
echo "# attackers: $(cat "$NODE_TMP/attack.json") $(head -c 300 "$NODE_TMP/attack.err")"
echo "# restarts: $(restarts)"
echo "| container | resident MiB: first / highest / last (every 5 s) | cgroup high-water MiB | limit |"
echo "|---|---|---|---|"
col=1
for name in connector nginx; do
  awk -v c="$col" -v name="$name" -v peak="$(cgroup_peak_mib "$name")" \
    -v limit="$($KC -n "$NS" get pod "$POD" -o jsonpath="{.spec.containers[?(@.name==\"$name\")].resources.limits.memory}")" '
    NR == 1 { first = $c; hi = $c }
    { if ($c > hi) hi = $c; last = $c }
    END { printf "| %s | %d / %d / %d | %s | %s |\n", name, first, hi, last, peak, limit }' "$NODE_TMP/rss"
  col=$((col + 1))
done
searches=$(sed -n 's/.* searches=\([0-9]*\).*/\1/p' "$NODE_TMP/load")
errors=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' "$NODE_TMP/load")
[ -n "$searches" ] && [ "$searches" -gt 0 ] || bail "the honest agents searched: $(cat "$NODE_TMP/load.err")"
rc=0
if restarts | grep -qE '=[1-9]|OOMKilled'; then echo "# a container restarted: $(restarts)"; rc=1; fi
if [ $((errors * 100)) -gt "$searches" ]; then echo "# $errors of $searches honest searches failed"; rc=1; fi
exit "$rc"
