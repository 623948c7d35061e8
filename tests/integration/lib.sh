# Shared helpers for shell integration tests. Source it, call `check DESC CMD...` or `ok`/`fail`, and
# end with `finish`, which prints TAP counts ("# pass N", "# fail N") that tests/run.sh adds up.
# Each test script gets its own namespace on the shared control plane (see new_namespace).

ZK_ROOT=${ZK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ZK_BIN=${ZK_BIN:-$ZK_ROOT/build/san/bin}
export PATH=${ZK_CACHE:-/var/cache/zoekt-operator}/bin:$PATH
export KUBECONFIG=${KUBECONFIG:-$ZK_ROOT/.cluster/kubeconfig}
_t_n=0
_t_pass=0
_t_fail=0
_t_skip=0
_t_cleanup=()

ok()   { _t_n=$((_t_n + 1)); _t_pass=$((_t_pass + 1)); echo "ok $_t_n - $*"; }
fail() { _t_n=$((_t_n + 1)); _t_fail=$((_t_fail + 1)); echo "not ok $_t_n - $*"; }
skip() { _t_n=$((_t_n + 1)); _t_skip=$((_t_skip + 1)); echo "ok $_t_n - $* # SKIP"; }

# skip_suite REASON: the whole suite cannot run here (a missing input such as ../shared/zoekt). It says
# why in one line and counts one skip, never a pass. Under CI (CI set) nothing may be missing, so there
# it counts as a failure instead.
skip_suite() {
  if [ -n "${CI:-}" ]; then fail "cannot run under CI: $*"; else skip "$*"; fi
  finish
  exit $?
}

# check DESC CMD...: passes when CMD exits 0.
check() {
  local desc=$1; shift
  if "$@"; then ok "$desc"; else fail "$desc"; fi
}

# eventually SECONDS CMD...: retries CMD every 0.2 s until it succeeds or time runs out.
eventually() {
  local secs=$1; shift
  local end=$(( $(date +%s) + secs ))
  while :; do
    "$@" && return 0
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.2
  done
}

on_exit() { _t_cleanup+=("$*"); }
_t_run_cleanup() { local c; for c in "${_t_cleanup[@]}"; do eval "$c" >/dev/null 2>&1 || true; done; }
trap _t_run_cleanup EXIT

# new_namespace PREFIX: creates a fresh namespace and prints its name. Pod Security Admission enforces
# `restricted` there, as a hardened cluster does for workloads: every pod the operator or a test
# creates must pass it.
new_namespace() {
  local ns="$1-$(date +%s%N | tail -c 7)$RANDOM"
  kubectl create namespace "$ns" >/dev/null &&
    kubectl label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null && echo "$ns"
}

finish() {
  echo "1..$_t_n"
  echo "# pass $_t_pass"
  echo "# fail $_t_fail"
  echo "# skipped $_t_skip"
  [ "$_t_fail" -eq 0 ]
}
