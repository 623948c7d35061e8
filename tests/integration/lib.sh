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

# skip_suite REASON: the whole suite cannot run here (no local node, a tool that cannot be built). It
# says why in one line and counts one skip, never a pass. Under CI (CI set) nothing but Zoekt may be
# missing (need_zoekt), so there it counts as a failure instead.
skip_suite() {
  if [ -n "${CI:-}" ]; then fail "cannot run under CI: $*"; else skip "$*"; fi
  finish
  exit $?
}

# need_zoekt [ARCH...]: the suite needs the pinned Zoekt for each ARCH (default: this machine's), from
# scripts/upstream.sh. Sets ZOEKT_BIN to the folder of the first ARCH's binaries. Where there is none
# (no archive handed in, and its Go module cannot be built here) the suite counts one skip that gives
# upstream.sh's reason, under CI too: a fresh machine has no Zoekt, and the project may not fetch it
# from anywhere else (docs/testing.md). Any other failure of upstream.sh fails the suite.
need_zoekt() {
  local arch err rc dir
  [ $# -gt 0 ] || set -- "$(dpkg --print-architecture 2>/dev/null || uname -m)"
  err=$(mktemp)
  ZOEKT_BIN=
  for arch in "$@"; do
    dir=$("$ZK_ROOT/scripts/upstream.sh" zoekt "$arch" 2>"$err")
    rc=$?
    case $rc in
    0) [ -n "$ZOEKT_BIN" ] || ZOEKT_BIN=$dir ;;
    3)
      skip "no Zoekt for $arch, so this suite cannot run: $(tail -n 1 "$err" | sed 's/^upstream: //')"
      rm -f "$err"
      finish
      exit $? ;;
    *)
      fail "scripts/upstream.sh zoekt $arch exits $rc: $(tail -n 3 "$err" | tr '\n' ' ')"
      rm -f "$err"
      finish
      exit 1 ;;
    esac
  done
  rm -f "$err"
}

# bail MESSAGE: a step that everything after it depends on failed; report it and stop.
bail() { fail "$*"; finish; exit 1; }

# check DESC CMD...: passes when CMD exits 0. Returns CMD's verdict, so that `check ... || diagnose`
# says more when it fails.
check() {
  local desc=$1; shift
  if "$@"; then ok "$desc"; else fail "$desc"; return 1; fi
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
