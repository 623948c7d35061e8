#!/usr/bin/env bash
# One full MCP session through the official Python SDK (`mcp`, pinned in tests/mcp_python/requirements.txt),
# over stdio and over Streamable HTTP with bearer auth, against the real zoekt-webserver
# (tests/mcp_python/session.py). The SDK lives in the virtualenv tests/mcp_python/venv.sh makes (and
# scripts/deps.sh makes ahead); when it cannot be made here the suite says so and counts one skip (a
# failure under CI), and without Zoekt it is skipped as need_zoekt says (tests/integration/lib.sh). No
# Kubernetes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

err=$(mktemp)
on_exit rm -f "$err"

# needed CMD...: runs a helper that prints a folder, or exits 3 with the reason it cannot be had here.
# Sets $got to the folder; skips the suite on 3 and fails it on any other error.
needed() {
  got=$("$@" 2>"$err")
  case $? in
  0) return 0 ;;
  3) skip_suite "$(tail -n 1 "$err")" ;;
  *) fail "$*: $(tr '\n' ' ' <"$err")"; finish; exit 1 ;;
  esac
}
needed "$ZK_ROOT/tests/mcp_python/venv.sh" make
venv=$got
need_zoekt
zoekt_bin=$ZOEKT_BIN

# session.py prints its own TAP summary ("# pass N", "# fail N", "# skipped N") for tests/run.sh.
"$venv/bin/python" "$ZK_ROOT/tests/mcp_python/session.py" "$ZK_BIN/zoekt-connector" "$zoekt_bin"
