#!/usr/bin/env bash
# Runs every test suite and ends with one line "N passed, N failed, N skipped" summed over all of them.
# Exits non-zero when any test failed or any suite crashed.
#
# A suite is an executable whose output carries its own counts, in one of two forms:
#   cmocka:  "[  PASSED  ] N test(s).", "[  FAILED  ] N test(s)" and "[  SKIPPED ] N test(s)"
#   TAP:     "# pass N", "# fail N" and "# skipped N" (node --test with the tap reporter, and
#            tests/integration/lib.sh)
# A suite that exits non-zero without reporting a failure (a crash, a sanitizer report, a leak) counts
# as one failed test, and so does a suite that reports no test at all, so nothing can fail silently.
# A skip is never a pass: it is counted and shown on its own.
#
# Each suite has a deadline, ZK_SUITE_TIMEOUT seconds (default 600; the slowest suite takes under a
# minute here). A suite still running then is killed with everything it started, its processes are
# listed in its log first, and it counts as failed, so one hang costs ten minutes and a readable
# failure, not the whole CI run.
#
# Usage: tests/run.sh [unit|fuzz|integration|mcp ...]   (default: all groups)
# The fuzz group replays each fuzz target's seed corpus (tests/fuzz/); `make fuzz` does the fuzzing.
# The unit and integration groups also run the ThreadSanitizer builds of the suites that start threads
# (build/tsan/, see TSAN_UNIT and TSAN_INTEG in the Makefile), as tsan/<suite>.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs=build/test-logs
mkdir -p "$logs"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# A data race fails its suite at once (TSan's own exit code, 66), with both stacks in the log.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
export ZK_ROOT=$root
export ZK_BIN=$root/build/san/bin
export KUBECONFIG=${KUBECONFIG:-$root/.cluster/kubeconfig}
export PATH=${ZK_CACHE:-/var/cache/zoekt-operator}/bin:$PATH
suite_timeout=${ZK_SUITE_TIMEOUT:-600}

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(unit fuzz integration mcp)

total_pass=0
total_fail=0
total_skip=0

run_suite() {
  local name=$1; shift
  local log="$logs/${name//\//_}.log" start rc pass fail skip secs
  start=$(date +%s)
  # timeout(1) puts the suite in a process group of its own and signals the whole group. The
  # watchdog lists that group (state, kernel wait channel) just before, which is what tells a deadlock
  # from a slow server afterwards.
  timeout -k 20 "$suite_timeout" "$@" >"$log" 2>&1 &
  local pid=$!
  (
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    sleep $((suite_timeout - 2)) & nap=$!
    wait $nap
    echo "run.sh: $name is still running after $((suite_timeout - 2)) s; its processes:"
    ps -eo pgid=,pid=,ppid=,stat=,etimes=,wchan:24=,args= | awk -v g="$pid" '$1 == g'
  ) >>"$log" 2>&1 </dev/null &
  local dog=$!
  wait $pid
  rc=$?
  kill $dog 2>/dev/null
  wait $dog 2>/dev/null
  pass=$(grep -aE '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  fail=$(grep -aE '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  pass=$((pass + $(grep -aE '^# pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  fail=$((fail + $(grep -aE '^# fail [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  skip=$(grep -aE '^\[  SKIPPED \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  skip=$((skip + $(grep -aE '^# skipped [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    fail=$((fail + 1))
    echo "run.sh: $name was killed after $suite_timeout s (ZK_SUITE_TIMEOUT): it hung" >>"$log"
  elif [ $rc -ne 0 ] && [ "$fail" -eq 0 ]; then
    fail=1
    echo "run.sh: $name exited with status $rc without reporting a failed test (crash or sanitizer report)" >>"$log"
  elif [ $((pass + fail + skip)) -eq 0 ]; then
    fail=1
    echo "run.sh: $name reported no test at all" >>"$log"
  fi
  secs=$(( $(date +%s) - start ))
  printf '%-44s %4d passed %4d failed %3d skipped %5ds\n' "$name" "$pass" "$fail" "$skip" "$secs"
  if [ "$fail" -gt 0 ]; then
    echo "---- $log (last 40 lines) ----"
    tail -n 40 "$log"
    echo "----"
  fi
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  total_skip=$((total_skip + skip))
}

for g in "${groups[@]}"; do
  case $g in
  unit)
    for t in build/san/tests/unit/test_*; do
      [ -x "$t" ] && run_suite "unit/$(basename "$t")" "$t"
    done
    for t in build/tsan/tests/unit/test_*; do
      [ -x "$t" ] && run_suite "tsan/unit/$(basename "$t")" "$t"
    done ;;
  fuzz)
    for t in build/san/tests/fuzz/fuzz_*; do
      [ -x "$t" ] && run_suite "fuzz/$(basename "$t")" "$t"
    done ;;
  integration)
    for t in build/san/tests/integration/test_*; do
      [ -x "$t" ] && run_suite "integration/$(basename "$t")" "$t"
    done
    for t in build/tsan/tests/integration/test_*; do
      [ -x "$t" ] && run_suite "tsan/integration/$(basename "$t")" "$t"
    done
    for t in tests/integration/test_*.sh; do
      [ -f "$t" ] && run_suite "integration/$(basename "$t")" bash "$t"
    done ;;
  mcp)
    for t in tests/mcp/*.test.mjs; do
      [ -f "$t" ] && run_suite "mcp/$(basename "$t")" node --test --test-reporter=tap "$t"
    done ;;
  *) echo "run.sh: unknown group $g" >&2; exit 2 ;;
  esac
done

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
