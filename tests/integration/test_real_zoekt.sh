#!/usr/bin/env bash
# Every connector tool against the real zoekt-webserver, through the official MCP SDK client over stdio
# and Streamable HTTP (real_zoekt/tools.test.mjs): repositories made as git repositories here, indexed by
# upstream zoekt-git-index, served on loopback. Needs ../shared/zoekt (tests/support/zoekt.sh unpacks it
# into the cache); without it the suite says so and counts one skip (a failure under CI). No Kubernetes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

reason=$("$ZK_ROOT/tests/support/zoekt.sh" bin 2>&1 >/dev/null)
case $? in
0) ;;
3) skip_suite "$reason" ;;
*) fail "tests/support/zoekt.sh bin: $reason"; finish; exit 1 ;;
esac
# node's TAP summary ("# pass N", "# fail N", "# skipped N") is what tests/run.sh counts.
exec node --test --test-reporter=tap "$ZK_ROOT/tests/integration/real_zoekt/tools.test.mjs"
