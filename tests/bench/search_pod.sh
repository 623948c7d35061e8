#!/usr/bin/env bash
# The search pod's data path under load: the pod that `zoekt-operator render` prints for
# examples/corpus-org.yaml (gateway token Secret), started with its rendered commands and nginx.conf as
# tests/integration/test_search_pod.sh starts it (tests/integration/search_pod/pod.sh), but with the
# release connector (bin/zoekt-connector) and a release zoekt-replay in place of zoekt-webserver.
# build/rel/tests/bench/bench_pod drives it through nginx with 1 and then 50 MCP clients.
#
# One change to the rendered commands: the connector gets `--rate-limit off`, since its per-session
# limit (a burst, then a few calls a second) would otherwise be what is measured.
#
# The pod's ports are fixed by its rendered config, so the script re-runs itself in private network
# and PID namespaces (unshare, as root): nothing clashes with the host, and nothing outlives it.
#
# Environment: SEARCH_POD_BENCH_RUNS (runs of each load, default 5), SEARCH_POD_BENCH_SECONDS (seconds
# each run, default 10), SEARCH_POD_BENCH_PACE (the paced load's searches a second, default 2000),
# SEARCH_POD_BENCH_PROFILE=DIR (record DIR/perf.data, a whole-machine perf profile with DWARF call
# graphs, during the first run of 50 unpaced clients; read it with `perf report -i`).
#
# Prints one Markdown table row per load, each figure the median of the runs: searches a second, p50
# and p99 latency, errors (summed), the peak resident size of the connector and of nginx's worker, the
# CPU each process used in percent of one core (connector, nginx, replay server, load generator), the
# same as CPU microseconds per search for the pod's three processes, the run-queue wait of the pod's
# threads per search (microseconds they were runnable but had no CPU), the machine's CPU pressure
# (kernel PSI "some" avg10, percent) and 1-minute load average at the end of the run, and the range of
# the searches a second. Exits non-zero when any run had an error (bench_pod counts any non-200 answer,
# JSON-RPC error or tool error).
set -euo pipefail

if [ -z "${SEARCH_POD_BENCH_NS:-}" ]; then
  unshare --net --pid --fork --mount-proc true 2>/dev/null ||
    { echo "search_pod.sh: needs unshare --net --pid (run as root): the pod's ports are fixed" >&2; exit 1; }
  SEARCH_POD_BENCH_NS=private exec unshare --net --pid --fork --kill-child --mount-proc bash "$0" "$@"
fi

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
RUNS=${SEARCH_POD_BENCH_RUNS:-5}
SECONDS_PER_RUN=${SEARCH_POD_BENCH_SECONDS:-10}
# CLIENTS:RATE, RATE 0 for clients that send each search as soon as the last is answered (the most the
# pod serves), else the searches a second the clients send together (the latency at that load).
LOADS="1:0 50:0 50:${SEARCH_POD_BENCH_PACE:-2000}"
CORPUS=$root/examples/corpus-org.yaml
GEN=$root/build/rel/tests/bench/bench_pod
for f in bin/zoekt-operator bin/zoekt-connector build/rel/tests/tools/zoekt-replay "$GEN" /usr/sbin/nginx; do
  [ -x "$f" ] || { echo "search_pod.sh: $f is missing; run 'make bench'" >&2; exit 1; }
done

W=$(mktemp -d)
chmod 755 "$W"   # the containers' non-root users must reach the volumes below it
mkdir -p "$W/log" "$W/run" "$W/img"
chmod 1777 "$W/run"
declare -A PID=()
source "$root/tests/integration/search_pod/pod.sh"
cleanup() {
  local n
  for n in "${!PID[@]}"; do kill -TERM "${PID[$n]}" 2>/dev/null || true; done
  sleep 0.5
  rm -rf "$W"
}
trap cleanup EXIT
die() { echo "search_pod.sh: $*" >&2; exit 1; }

ip link set lo up
# The containers' users may not reach this tree (it may sit under /root): they get copies, as an image.
install -m 0755 bin/zoekt-connector build/rel/tests/tools/zoekt-replay "$W/img/"
cp -r tests/fixtures/zoekt "$W/img/fixtures" && chmod -R a+rX "$W/img"

bin/zoekt-operator render -f "$CORPUS" >"$W/children.yaml"
yaml2json "$W/children.yaml" >"$W/children.json"
pod_secrets "$W/children.json" examples/secrets.yaml >"$W/secrets.json"
node tests/integration/search_pod/pod.mjs "$W/children.json" "$W/secrets.json" "$W" >"$W/plan.json"
yaml2json "$CORPUS" >"$W/corpus.json"
gw_secret=$(q "$W/corpus.json" 'd[0].spec.gateway?.tokenSecretRef?.name ?? ""')
[ -n "$gw_secret" ] || die "the rendered Deployment of $(basename "$CORPUS") mounts no gateway token Secret"
q "$W/secrets.json" "Object.values(d['$gw_secret'])[0]" >"$W/token"
zoekt_addr=$(q "$W/plan.json" "(a => a[a.indexOf('-listen') + 1])(d.containers.find(c => c.name === 'zoekt-webserver').renderedArgv)")
http_port=$(q "$W/plan.json" "String(d.containers.find(c => c.name === 'nginx').ports.http)")
conn_addr=$(q "$W/plan.json" "(a => a[a.indexOf('--listen') + 1])(d.containers.find(c => c.name === 'connector').renderedArgv)")

run_container zoekt-webserver "$W/img/zoekt-replay" --fixtures "$W/img/fixtures" --port "${zoekt_addr##*:}" \
  --port-file "$W/run/zoekt.port"
readarray -d '' cargs < <(argv_of connector)
run_container connector "$W/img/zoekt-connector" "${cargs[@]}" --rate-limit off
readarray -d '' nargs < <(argv_of nginx)
run_container nginx /usr/sbin/nginx "${nargs[@]}"
up() { curl -sf -o /dev/null --max-time 2 "$@"; }
for _ in $(seq 100); do
  up "http://127.0.0.1:$http_port/healthz" && up "http://$conn_addr/healthz" && up -d '{}' "http://$zoekt_addr/api/list" && break
  sleep 0.1
done
up "http://127.0.0.1:$http_port/healthz" || die "nginx did not start: $(tail -n 5 "$W/log/nginx.log")"
up "http://$conn_addr/healthz" || die "the connector did not start: $(tail -n 5 "$W/log/connector.log")"

# CPU seconds (user + system) a process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }
nginx_worker=$(cat "/proc/${PID[nginx]}/task/${PID[nginx]}/children" | awk '{print $1}')
[ -n "$nginx_worker" ] || die "nginx has no worker process"
# The peak resident size (MB) of each process named, sampled every 0.2 s until the file $W/stop exists.
sample_rss() {
  local peak_c=0 peak_n=0 r
  while [ ! -e "$W/stop" ]; do
    r=$(awk '/^VmRSS/ {print $2}' "/proc/${PID[connector]}/status"); [ "$r" -gt "$peak_c" ] && peak_c=$r
    r=$(awk '/^VmRSS/ {print $2}' "/proc/$nginx_worker/status"); [ "$r" -gt "$peak_n" ] && peak_n=$r
    sleep 0.2
  done
  echo "$((peak_c / 1024)).$(( (peak_c % 1024) * 10 / 1024 )) $((peak_n / 1024)).$(( (peak_n % 1024) * 10 / 1024 ))"
}

# The kernel's 10-second average of the share of time in which some runnable task on the machine
# waited for a CPU (pressure stall information), in percent; nan where the kernel does not keep it.
psi_avg10() { awk '/^some/ { sub(/.*avg10=/, ""); sub(/ .*/, ""); print; exit }' /proc/pressure/cpu 2>/dev/null || echo nan; }
# For each thread of the pod's processes: its schedstat file and the nanoseconds it has waited on a run
# queue so far.
run_waits() {
  local f
  for f in "/proc/${PID[connector]}"/task/*/schedstat "/proc/$nginx_worker"/task/*/schedstat \
    "/proc/${PID[zoekt-webserver]}"/task/*/schedstat; do
    echo "$f $(cut -d' ' -f2 "$f" 2>/dev/null)"
  done
}
# Nanoseconds waited between two run_waits lists: threads that ended in between are missing (their waits
# are lost, so this is a lower bound); threads that started count from zero.
waited_ns() { awk 'NR == FNR { a[$1] = $2; next } $2 != "" { d += $2 - a[$1] } END { printf "%.0f", d }' "$1" "$2"; }

url=http://127.0.0.1:$http_port/mcp
# A short warm-up, not counted: first connections, first allocations.
"$GEN" --url "$url" --token-file "$W/token" --clients 50 --seconds 2 >/dev/null ||
  die "the warm-up run failed: $(tail -n 3 "$W/log/connector.log")"
failed=0
: >"$W/results"
for run in $(seq "$RUNS"); do
  for load in $LOADS; do
    clients=${load%:*} pace=${load#*:}
    rm -f "$W/stop"
    sample_rss >"$W/rss" &
    sampler=$!
    c0=$(cpu_s "${PID[connector]}") n0=$(cpu_s "$nginx_worker") z0=$(cpu_s "${PID[zoekt-webserver]}")
    perf_pid=
    if [ -n "${SEARCH_POD_BENCH_PROFILE:-}" ] && [ "$run" = 1 ] && [ "$load" = 50:0 ]; then
      mkdir -p "$SEARCH_POD_BENCH_PROFILE"
      perf record -q -F 299 --call-graph dwarf,16384 -a \
        -o "$SEARCH_POD_BENCH_PROFILE/perf.data" -- sleep "$SECONDS_PER_RUN" 2>"$SEARCH_POD_BENCH_PROFILE/perf.log" &
      perf_pid=$!
    fi
    run_waits >"$W/waits0"
    t0=$(date +%s.%N)
    if ! line=$("$GEN" --url "$url" --token-file "$W/token" --clients "$clients" --rate "$pace" \
                 --seconds "$SECONDS_PER_RUN"); then
      failed=1
      echo "search_pod.sh: run $run with $clients clients (paced: $pace/s) had errors: $line" >&2
    fi
    t1=$(date +%s.%N)
    psi=$(psi_avg10); run_waits >"$W/waits1"
    c1=$(cpu_s "${PID[connector]}") n1=$(cpu_s "$nginx_worker") z1=$(cpu_s "${PID[zoekt-webserver]}")
    touch "$W/stop"
    [ -z "$perf_pid" ] || wait "$perf_pid" || true
    wait "$sampler"
    read -r rss_c rss_n <"$W/rss"
    # CPU shares in percent of one core over the whole run (sessions, searches, ends).
    w=$(awk "BEGIN { print $t1 - $t0 }")
    pct() { awk -v used="$1" -v w="$w" 'BEGIN { printf "%.0f", 100 * used / w }'; }
    echo "$line conn_rss=$rss_c nginx_rss=$rss_n conn_cpu=$(pct "$(awk "BEGIN { print $c1 - $c0 }")")" \
      "nginx_cpu=$(pct "$(awk "BEGIN { print $n1 - $n0 }")") zoekt_cpu=$(pct "$(awk "BEGIN { print $z1 - $z0 }")")" \
      "gen_cpu=$(pct "${line##*cpu_s=}") psi=$psi" \
      "$(awk -v n="$(sed 's/.*searches=\([0-9]*\).*/\1/' <<<"$line")" -v c="$(awk "BEGIN { print $c1 - $c0 }")" \
        -v g="$(awk "BEGIN { print $n1 - $n0 }")" -v z="$(awk "BEGIN { print $z1 - $z0 }")" \
        'BEGIN { n = n > 0 ? n : 1; printf "conn_us=%.0f nginx_us=%.0f zoekt_us=%.0f", c * 1e6 / n, g * 1e6 / n, z * 1e6 / n }')" \
      "wait_us=$(awk -v q="$(waited_ns "$W/waits0" "$W/waits1")" -v n="$(sed 's/.*searches=\([0-9]*\).*/\1/' <<<"$line")" \
        'BEGIN { printf "%.0f", (n > 0 ? q / 1000 / n : 0) }')" \
      "load=$(cut -d' ' -f1 /proc/loadavg)" >>"$W/results"
    echo "search_pod.sh: run $run: $(tail -n 1 "$W/results")" >&2
  done
done

# One row per load, each figure the median of the runs, then the goal's verdict.
python3 - "$W/results" "$LOADS" <<'EOF'
import statistics, sys
runs = [dict(kv.split("=", 1) for kv in line.split()) for line in open(sys.argv[1]) if line.strip()]
for load in sys.argv[2].split():
    clients, pace = load.split(":")
    rs = [r for r in runs if r["clients"] == clients and r["paced"] == pace]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    label = f"{clients}, as fast as answered" if pace == "0" else f"{clients}, paced at {pace}/s together"
    print(f"| {label} | {med('rate'):.0f} | {med('p50_ms'):.2f} | {med('p99_ms'):.2f} | "
          f"{sum(int(r['errors']) for r in rs)} | {med('conn_rss'):.1f} | {med('nginx_rss'):.1f} | "
          f"{med('conn_cpu'):.0f} / {med('nginx_cpu'):.0f} / {med('zoekt_cpu'):.0f} / {med('gen_cpu'):.0f} | "
          f"{med('conn_us'):.0f} / {med('nginx_us'):.0f} / {med('zoekt_us'):.0f} | "
          f"{med('wait_us'):.0f} | {med('psi'):.0f} | {med('load'):.1f} | "
          f"{min(float(r['rate']) for r in rs):.0f}-{max(float(r['rate']) for r in rs):.0f} |")
# The goal of issue 10, judged on the medians: the most 50 clients get, and p99 at the paced load.
most = statistics.median(float(r["rate"]) for r in runs if r["clients"] == "50" and r["paced"] == "0")
paced = [r for r in runs if r["paced"] != "0"]
p99 = statistics.median(float(r["p99_ms"]) for r in paced)
print(f"GOAL searches/s {most:.0f} (goal >= 2000: {'met' if most >= 2000 else 'missed'}); "
      f"p99 at {paced[0]['paced']}/s {p99:.2f} ms (goal <= 5 ms: {'met' if p99 <= 5 else 'missed'})")
EOF
exit "$failed"
