#!/usr/bin/env bash
# Builds every fuzz target with clang and libFuzzer and runs each for FUZZ_SECONDS (default 60) from
# its seed corpus; `make fuzz` calls this. Not part of `make test`, which only replays the seeds.
#
# New interesting inputs go to build/fuzz/corpus/<name>/ (kept between runs, never committed); a crash
# is written to build/fuzz/artifacts/<name>/ and fails the run. To keep a crashing input: minimize it
#   build/fuzz/bin/fuzz_<name> -minimize_crash=1 -runs=20000 <crash-file>
# keep it under tests/fuzz/crashes/<name>/ while the bug is open, and move it to tests/fuzz/seeds/<name>/
# with the fix, so that `make test` replays it from then on.
#
# Usage: tests/fuzz/run.sh [name ...]   (default: every tests/fuzz/fuzz_*.c)
# Environment: FUZZ_SECONDS (per target), FUZZ_JOBS (parallel targets, default 1), FUZZ_ARGS (extra
# libFuzzer flags), FUZZ_UBSAN_SUPP (a UBSan suppressions file, to look past a finding already
# reported, e.g. a line "float-cast-overflow:json_int").
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}

# libFuzzer ships in clang's runtime package; installed here rather than in scripts/deps.sh so that
# `make test` does not pay for it.
rt_ok() {
  command -v clang >/dev/null 2>&1 &&
    [ -f "$(clang -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a" ]
}
if ! rt_ok; then
  echo "fuzz: installing clang and its runtime (libFuzzer)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null ||
    { echo "fuzz: could not install clang" >&2; exit 2; }
fi

# UBSan is built recoverable (see the Makefile) and made fatal here, so that only what FUZZ_UBSAN_SUPP
# names is let through.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${FUZZ_UBSAN_SUPP:+:suppressions=$FUZZ_UBSAN_SUPP}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    n=$(basename "$f" .c); names+=("${n#fuzz_}")
  done
fi

bins=()
for n in "${names[@]}"; do bins+=("build/fuzz/bin/fuzz_$n"); done
make --no-print-directory -j"$(nproc)" "${bins[@]}" || { echo "fuzz: build failed" >&2; exit 2; }

# One target: fuzz for $seconds, then report the run's last stats line and any crash.
fuzz_one() {
  local n=$1 corpus=build/fuzz/corpus/$1 art=build/fuzz/artifacts/$1/ log=build/fuzz/logs/$1.log
  local dict=() rc
  mkdir -p "$corpus" "$art" build/fuzz/logs
  [ -f "tests/fuzz/$n.dict" ] && dict=(-dict="tests/fuzz/$n.dict")
  "build/fuzz/bin/fuzz_$n" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$art" \
    -timeout=10 -rss_limit_mb=2048 "${dict[@]}" ${FUZZ_ARGS:-} "$corpus" "tests/fuzz/seeds/$n" >"$log" 2>&1
  rc=$?
  local runs execs cov
  # -print_final_stats reports these; fork mode (FUZZ_ARGS=-fork=N) only has its progress lines.
  runs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  execs=$(grep -a 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
  [ -n "$runs" ] || runs=$(grep -aoE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
  [ -n "$execs" ] || execs=$(grep -aoE 'exec/s:? [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$')
  cov=$(grep -aE '^#[0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
  if [ $rc -eq 0 ]; then
    printf 'fuzz %-12s ok      %10s runs %7s/s  %s  corpus %s\n' "$n" "${runs:-?}" "${execs:-?}" "$cov" \
      "$(ls "$corpus" | wc -l)"
  else
    printf 'fuzz %-12s FAILED  (exit %d) see %s; crash inputs in %s\n' "$n" "$rc" "$log" "$art"
    grep -aE 'ERROR: |property violated|runtime error|SUMMARY' "$log" | head -n 5 | sed 's/^/    /'
  fi
  return $rc
}

failed=0
running=0
pids=()
for n in "${names[@]}"; do
  fuzz_one "$n" &
  pids+=($!)
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done

echo "fuzz: ${#names[@]} targets, $failed failed"
[ "$failed" -eq 0 ]
