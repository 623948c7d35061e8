#!/usr/bin/env bash
# Runs the connector benchmark and writes docs/benchmarks.md. Builds nothing: `make bench` builds
# build/rel/tests/bench/bench_connector, bench_org, bench_pod, build/san/tests/tools/zoekt-replay and
# build/rel/tests/tools/zoekt-replay first. The search pod section is tests/bench/search_pod.sh (its
# header says what it measures; SEARCH_POD_BENCH_RUNS and SEARCH_POD_BENCH_SECONDS set its runs).
#
# The end-to-end row goes through real HTTP to zoekt-replay (which runs under the sanitizers, so the
# figure is an upper bound of the connector's share); the per-answer figures are in-process, release
# build. The organisation-scale section runs the real zoekt-webserver over the corpus that
# tests/bench/corpus.sh builds (its install step: Debian's golang-*-dev sources, downloaded into the
# cache) and the release connector over stdio and HTTP; BENCH_ORG_ITERATIONS sets the runs per query
# and round (default 50), BENCH_ORG_ROUNDS the rounds whose median is reported (default 3). It runs
# the Zoekt scripts/versions.sh pins, as tests/support/zoekt.sh bin finds it (the archives handed in
# through ZK_ZOEKT_DIR, or built by scripts/upstream.sh); without it that section says why it is missing.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# BENCH_BIN overrides the benchmark binary (e.g. one built by hand while another part does not build).
bench=${BENCH_BIN:-build/rel/tests/bench/bench_connector}
replay=build/san/tests/tools/zoekt-replay
fixtures=tests/fixtures/zoekt
out=docs/benchmarks.md

for f in "$bench" "$replay"; do
  [ -x "$f" ] || { echo "run.sh: $f is missing; run 'make bench'" >&2; exit 1; }
done

tmp=$(mktemp -d)
replay_pid=
zoekt_pid=
conn_pid=
cleanup() {
  for pid in $replay_pid $zoekt_pid $conn_pid; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

"$replay" --fixtures "$fixtures" --port 0 --port-file "$tmp/port" 2>"$tmp/replay.log" &
replay_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "run.sh: zoekt-replay did not start" >&2; cat "$tmp/replay.log" >&2; exit 1; }

"$bench" --fixtures "$fixtures" --url "http://127.0.0.1:$(cat "$tmp/port")" >"$tmp/rows"

# ---- the search pod's data path: nginx, connector and release zoekt-replay under 1 and 50 clients ----
pod_load=$(cut -d" " -f1-3 /proc/loadavg)
tests/bench/search_pod.sh >"$tmp/pod" || { echo "run.sh: the search pod benchmark failed" >&2; exit 1; }

# ---- organisation scale: real zoekt-webserver, release connector ----
# wait_http URL: until URL answers (a POST for Zoekt's /api/list, a GET otherwise), at most 60 s.
wait_http() {
  for _ in $(seq 600); do
    curl -sf -o /dev/null ${2:+-d "$2"} "$1" && return 0
    sleep 0.1
  done
  return 1
}
org_skip=
if zbin=$(tests/support/zoekt.sh bin 2>"$tmp/zoekt.err"); then
  index=$(tests/bench/corpus.sh "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus")
  zport=$(scripts/free-port.sh)
  "$zbin/zoekt-webserver" -index "$index" -listen "127.0.0.1:$zport" -rpc 2>"$tmp/zoekt.log" &
  zoekt_pid=$!
  wait_http "http://127.0.0.1:$zport/api/list" '{"Q":""}' || { echo "run.sh: zoekt-webserver did not start" >&2; exit 1; }
  # The webserver answers before it has loaded every shard: wait until it serves every module.
  modules=$(wc -l <"${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/modules")
  for _ in $(seq 600); do
    repos=$(curl -sf -d '{"Q":""}' "http://127.0.0.1:$zport/api/list" |
      python3 -c 'import json,sys; print(len(json.load(sys.stdin)["List"]["Repos"] or []))')
    [ "$repos" -ge "$modules" ] && break
    sleep 0.1
  done
  files=$(find "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/src" -name '*.go' | wc -l)
  cport=$(scripts/free-port.sh)
  bin/zoekt-connector --listen "127.0.0.1:$cport" --zoekt-url "http://127.0.0.1:$zport" --mirror-prefix mirrors/ \
    --rate-limit off --log-level warn 2>"$tmp/connector.log" &
  conn_pid=$!
  wait_http "http://127.0.0.1:$cport/healthz" || { echo "run.sh: the connector did not start" >&2; exit 1; }
  org_load_start=$(cut -d" " -f1-3 /proc/loadavg)
  build/rel/tests/bench/bench_org --zoekt "http://127.0.0.1:$zport" --connector bin/zoekt-connector \
    --http "http://127.0.0.1:$cport" --http-pid "$conn_pid" --mirror-prefix mirrors/ \
    --iterations "${BENCH_ORG_ITERATIONS:-50}" \
    --rounds "${BENCH_ORG_ROUNDS:-3}" >"$tmp/org"
  org_load_end=$(cut -d" " -f1-3 /proc/loadavg)
  # Agent-written patterns through search_code against git grep over the same mirrors (its header says how).
  tests/bench/patterns.py --connector bin/zoekt-connector --zoekt "http://127.0.0.1:$zport" \
    --src "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/src/usr/share/gocode/src" \
    --modules "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/modules" >"$tmp/patterns" 2>"$tmp/patterns.diff" ||
    { echo "run.sh: the pattern check failed" >&2; cat "$tmp/patterns.diff" >&2; exit 1; }
  # Twenty-one agent tasks, right first time and the cost of finishing (tasks.py's header says how); beside
  # an older connector when BENCH_BASELINE_CONNECTOR names one (the figures before a change).
  tests/bench/tasks.py --connector bin/zoekt-connector ${BENCH_BASELINE_CONNECTOR:+--baseline "$BENCH_BASELINE_CONNECTOR"} \
    --zoekt "http://127.0.0.1:$zport" --src "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/src/usr/share/gocode/src" \
    --modules "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus/modules" >"$tmp/tasks" 2>"$tmp/tasks.err" ||
    { echo "run.sh: the task set failed" >&2; cat "$tmp/tasks.err" >&2; exit 1; }
  # find_symbol against universal-ctags' tags, over the corpus indexed with ctags (it serves that itself).
  corpus=${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus
  tests/bench/corpus.sh "$corpus" ctags >/dev/null
  symbols_load=$(cut -d" " -f1-3 /proc/loadavg)
  tests/bench/symbols.py --connector bin/zoekt-connector --zoekt-bin "$zbin" --corpus "$corpus" >"$tmp/symbols" \
    2>"$tmp/symbols.diff" || { echo "run.sh: the symbols check failed" >&2; cat "$tmp/symbols.diff" >&2; exit 1; }
else
  org_skip=$(cat "$tmp/zoekt.err")
fi

# tasks_section ROWS NOTES: the agent tasks section, from tests/bench/tasks.py's output.
tasks_section() {
  local baseline=${BENCH_BASELINE_CONNECTOR:-}
  echo "## Agent tasks: right first time, and what finishing costs"
  echo
  echo "tests/bench/tasks.py: twenty-one tasks an agent working on these Go services has, each with the call an"
  echo "agent writes first (code pasted as it is, a short repository name, a glob) and its truth from git over"
  echo "the same mirrors (\`git grep\` with ripgrep's reading, \`git ls-tree\`, the module list). Right first time:"
  echo "the first answer shows all of the truth. Otherwise the agent asks for the largest page: the next one with"
  echo "the answer's cursor, or, from a connector without cursors, the same call again (which resends what was"
  echo "shown), at most 10 calls. Each cell: right first time, calls, bytes of text read until done; \"no such"
  echo "tool\" where the connector has no tool for the task (it counts as not done, with no call)."
  [ -z "$baseline" ] || echo "Before: the connector \`$baseline\` (BENCH_BASELINE_CONNECTOR), on the same Zoekt in the same run."
  echo
  echo "The catalogue every session reads first (\`tools/list\`): $(sed -n 's/^CATALOGUE \([0-9]*\).*/\1/p' "$1") bytes$(sed -n 's/^CATALOGUE [0-9]* \([0-9]*\)$/ (before: \1 bytes)/p' "$1")."
  echo
  if [ -n "$baseline" ]; then
    echo "| task | what the agent wants | first call | truth | before | after |"
    echo "|---|---|---|---:|---|---|"
  else
    echo "| task | what the agent wants | first call | truth | result |"
    echo "|---|---|---|---:|---|"
  fi
  grep '^|' "$1"
  [ ! -s "$2" ] || { echo; echo "Not finished: $(sed 's/^tasks.py: not finished within the calls allowed: //' "$2")"; }
}

# symbols_section CORPUS ROWS DIFF LOAD: the Symbols section, from tests/bench/symbols.py's output.
symbols_section() {
  local stats=$1/index-ctags.stats
  read -r full names hits right want worst < <(sed -n 's/^SYMBOLS //p' "$2")
  echo "## Symbols (find_symbol), against the real zoekt-webserver"
  echo
  echo "The organisation corpus above indexed again by tests/bench/corpus.sh DIR ctags (tests/bench/corpus-ctags.sh):"
  echo "the same Go modules, and the Python modules of Debian's $(grep python3 "$1/extra-modules" | sort | tr '\n' ' ' | sed 's/ $//; s/ /, /g')"
  echo "and the C examples of libcurl4-doc, each a repository \`debian/<package>\`, by zoekt-git-index with Debian 12's"
  echo "universal-ctags $(ctags --version | sed -n '1s/^Universal Ctags \([0-9.]*\).*/\1/p') through the wrapper controller/assets/indexer.sh writes. tests/bench/symbols.py"
  echo "runs \`ctags --output-format=json\` over each repository's indexed files and takes 20 names of functions,"
  echo "types and methods from its tags (at least 6 characters, defined in at most 4 places; 14 Go, 3 Python,"
  echo "3 C, spread over the sorted names), each asked as \`{\"name\": N, \"max_files\": 200}\` through the release"
  echo "connector over stdio (load average $4). A hit is a (repository, path, line); \"ctags\" counts every tag"
  echo "of that name, whatever its kind."
  echo
  echo "Goal (issue 19): every definition ctags finds, at most one unrelated hit per answer. Found: every"
  echo "definition for $full of the $names names; $right of ctags' $want definitions (recall"
  echo "$(echo "scale=2; $right / $want" | bc | sed 's/^\./0./')), $right of the $hits hits (precision $(echo "scale=2; $right / $hits" | bc | sed 's/^\./0./')); at most $worst unrelated hit(s) in one answer."
  echo
  echo "| name | language | ctags kinds | ctags definitions | find_symbol hits | of them ctags' | unrelated | bytes of text | ms |"
  echo "|---|---|---|---|---|---|---|---|---|"
  grep '^|' "$2"
  if [ -s "$3" ]; then
    echo
    echo "Differences, one per line:"
    echo
    sed 's/^/- /' "$3"
  fi
  echo
  echo "Indexing the Go modules (two zoekt-git-index at a time, as corpus.sh does), without and with ctags,"
  echo "one after the other on this machine (CPU time, zoekt-git-index's and ctags', is the steadier figure:"
  echo "wall time grows with whatever else runs)."
  echo
  echo "| | wall s | CPU s (user + system) | index bytes |"
  echo "|---|---|---|---|"
  awk '{ printf "| %s ctags | %.1f | %.1f | %d |\n", $1, $2, $3 + $4, $5 }' "$stats"
}

mkdir -p docs
# tests/bench/scale.sh writes the last section; it stays as that script last wrote it.
scale_section=
[ -f "$out" ] && scale_section=$(sed -n '/^## Operator at scale/,$p' "$out")
{
  echo "# Benchmarks"
  echo
  echo "Generated by \`make bench\` (tests/bench/run.sh) on $(date -u +%Y-%m-%dT%H:%M:%SZ):"
  echo "$(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || echo unknown CPU),"
  echo "$(cc --version | head -n1), release build (-O2). Load average when the run started: $(cut -d" " -f1-3 /proc/loadavg)."
  echo
  echo "## Connector overhead per search"
  echo
  echo "For each Zoekt answer: the time to parse it (connector/zoekt/result.c: JSON, base64, merging"
  echo "context lines) and to format it (connector/format/search.c: compact text and structuredContent), with the"
  echo "defaults an agent gets (30 files, 2 context lines, 10 matching lines decoded per file, 16 KB output"
  echo "budget); then the bytes the agent receives against the bytes Zoekt sent. Recorded answers come"
  echo "from tests/fixtures/zoekt; the synthetic one is 30 files with 30 ChunkMatches each (about 600 KB,"
  echo "the size of a broad query over a few hundred repositories), generated by the benchmark itself."
  echo "Times are medians over repeated runs (at least 0.3 s per answer); on a busy machine they vary by a"
  echo "factor of two or more."
  echo
  grep '^|' "$tmp/rows"
  echo
  echo "## End to end"
  echo
  grep '^END_TO_END' "$tmp/rows" | sed 's/^END_TO_END /- /'
  echo
  echo "The end-to-end figure includes building the request, a loopback HTTP round trip to"
  echo "tests/tools/zoekt-replay (a sanitizer build replaying the 6-file recorded answer), parsing and"
  echo "formatting. A real zoekt-webserver adds its own search time, typically milliseconds to seconds."
  echo
  echo "## Search pod data path"
  echo
  echo "The search pod as \`zoekt-operator render\` prints it for examples/corpus-org.yaml (gateway token"
  echo "Secret), run by tests/bench/search_pod.sh with its rendered commands and nginx.conf as"
  echo "tests/integration/test_search_pod.sh runs it, in private network and PID namespaces: Debian's nginx,"
  echo "the release connector and a release tests/tools/zoekt-replay answering on Zoekt's address with the"
  echo "6-file recorded answer to \`needle\`. One change to the rendered commands: the connector runs with"
  echo "\`--rate-limit off\`, since its per-session limit would otherwise be what is measured. The load"
  echo "generator (build/rel/tests/bench/bench_pod) is MCP clients on kept HTTP/1.1 connections to nginx,"
  echo "each with a bearer token and its own session (initialize and notifications/initialized once), then"
  echo "tools/call search_code for ${SEARCH_POD_BENCH_SECONDS:-10} s; any non-200 answer, JSON-RPC error or"
  echo "tool error fails the run. \"As fast as answered\": each client sends its next search when the last is"
  echo "answered (the most the pod serves; with 50 such clients latency is queueing, 50 / rate on average)."
  echo "\"Paced\": the 50 clients together send the goal's rate, evenly spread, and latency counts from when a"
  echo "search was due. Each figure is the median of ${SEARCH_POD_BENCH_RUNS:-5} runs; everything, the load"
  echo "generator included, shares this machine's $(nproc) cores with other work (load average $pod_load"
  echo "when this section started), so CPU time per search is the steadier figure: the pod's own cost."
  echo
  echo "Goal (issue 10): at least 2,000 searches/s on 2 cores with the replay backend, p99 at most 5 ms."
  echo
  echo "| clients | searches/s | p50 ms | p99 ms | errors | connector RSS MB | nginx RSS MB | CPU % of a core: connector / nginx / replay / load generator | CPU us per search: connector / nginx / replay | run-queue wait per search us | CPU pressure % | load average | searches/s, range |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  grep '^|' "$tmp/pod"
  echo
  sed -n 's/^GOAL /Goal, on the medians: /p' "$tmp/pod"
  echo
  echo "RSS is the peak resident size sampled every 0.2 s during the run. Run-queue wait is the time the"
  echo "pod's threads were ready to run but had no CPU (their schedstat), summed and divided by the searches;"
  echo "CPU pressure is the kernel's share of time in which some task on the machine waited for a CPU. When"
  echo "they are high the tail latency is the machine's, not the pod's: see docs/search-pod.md for a profile"
  echo "of where the pod's CPU time goes."
  echo
  echo "## Organisation scale, against the real zoekt-webserver"
  echo
  if [ -n "$org_skip" ]; then
    echo "Not measured: $org_skip."
  else
    echo "$repos repositories of real Go code ($files .go files): the sources of Debian's golang-*-dev packages"
    echo "listed in tests/bench/corpus.sh and of every golang-*-dev package they need, each module its own git"
    echo "repository named \`mirrors/<host>/<path>\`, indexed by upstream zoekt-git-index and served by"
    echo "zoekt-webserver at the pinned commit $(. scripts/versions.sh; echo "$zoekt_commit") (scripts/versions.sh; handed in as archives through"
    echo "ZK_ZOEKT_DIR or built by scripts/upstream.sh). Each query runs ${BENCH_ORG_ITERATIONS:-50} times in each"
    echo "of ${BENCH_ORG_ROUNDS:-3} rounds (every query once per round), round robin: the connector's own Zoekt request"
    echo "sent straight to Zoekt (raw, the baseline), search_code through the release connector over stdio,"
    echo "and over Streamable HTTP. Every figure is the median over the rounds of that round's figure."
    echo "Overhead is connector p50 minus raw p50; on a machine shared with other work it moves by"
    echo "milliseconds from run to run (load average $org_load_start when the section started, $org_load_end"
    echo "when it ended, on $(nproc) CPUs), so two columns give what the connector itself costs: \"connector"
    echo "CPU per call\" is the CPU time each connector process (stdio, HTTP) used per search_code call, idle"
    echo "time between calls included (all threads, from the kernel's clock of the process's CPU time, which"
    echo "waiting for a CPU does not inflate), and \"parse + format\" the time to parse and"
    echo "format the same answer in-process (median): with lib/jscan as search_code parses, and in brackets"
    echo "through one cJSON tree of the whole answer, as it parsed before. Bytes from Zoekt are the"
    echo "answer to the connector's request; bytes shown are the text the agent reads (default budget 16384"
    echo "bytes, 30 files, 2 context lines), and files named the files the answer lists (\`max_files\` 30): the request"
    echo "sets no MaxMatchDisplayCount, so Zoekt sends every match of the 30 best files (docs/connector.md, \"The"
    echo "request\")."
    echo
    echo "Goals (issue 9): p50 overhead at most 1 ms for every query; bytes from Zoekt at most 4x the bytes shown."
    echo "The overhead goal counts as met only when both connectors' CPU per call is at most 1 ms too: a"
    echo "wall-clock difference can be small, or below zero, by noise alone."
    echo
    sed -n '1,/^$/p' "$tmp/org" | grep '^|'
    echo
    echo "What exact totals cost: the connector sends explicit match limits (ShardMaxMatchCount 10000,"
    echo "TotalMaxMatchCount 100000), so Zoekt counts every matching file; without them Zoekt sets its own limits"
    echo "from an estimate, stops counting early and reports fewer files, with nothing saying the count is"
    echo "short."
    echo
    sed -n '/^EXACT$/,$p' "$tmp/org" | grep '^|'
    echo
    echo "## Patterns as agents write them, against git grep"
    echo
    echo "tests/bench/patterns.py: each pattern sent to search_code as an agent sends it (the default syntax:"
    echo "one pattern as ripgrep reads it; \"literal\" marks \`literal: true\`) through the release connector over"
    echo "stdio, \`max_files\` 200, and given to \`git grep\` over every mirror's indexed branch with the flags"
    echo "shown (\`-E\`; \`-F\` where the pattern is its own text, or not a valid regex, which search_code then searches as a literal;"
    echo "\`-P\` for Perl escapes ERE lacks; \`-i\` where ripgrep's smart case makes it case-insensitive: no"
    echo "upper-case letter of its own). Files, matching lines and matches are git grep's (lines \`-c\`, matches"
    echo "\`-o\`) and search_code's (\`totalFiles\`, each file's \`matchingLines\`, \`totalMatches\`); where more"
    echo "than 200 files match, the files and their lines are those Zoekt matches for the query search_code"
    echo "sent, asked for directly. git grep skips binary files (\`-I\`), as Zoekt does; other files Zoekt does"
    echo "not index (larger than 2 MiB, more than 20,000 distinct trigrams: the name stays searchable, the text"
    echo "not) are left out of git grep's figures and said in the notes. $(sed -n 's/^PATTERNS \([0-9]*\) \([0-9]*\)$/\1 of the \2/p' "$tmp/patterns") patterns give the same files and counts."
    echo
    echo "| pattern | git grep | git grep: files / lines / matches | search_code: files / lines / matches | same files | same counts | notes |"
    echo "|---|---|---|---|---|---|---|"
    grep '^|' "$tmp/patterns"
    echo
    tasks_section "$tmp/tasks" "$tmp/tasks.err"
    echo
    symbols_section "$corpus" "$tmp/symbols" "$tmp/symbols.diff" "$symbols_load"
  fi
  if [ -n "$scale_section" ]; then
    echo
    echo "$scale_section"
  fi
} >"$out"
echo "run.sh: wrote $out"
