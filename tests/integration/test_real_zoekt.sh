#!/usr/bin/env bash
# Every connector tool against the real zoekt-webserver, through the official MCP SDK client over stdio
# and Streamable HTTP (real_zoekt/tools.test.mjs), and pages, literal readings and branches
# (real_zoekt/paging.test.mjs): repositories made as git repositories here, indexed by upstream
# zoekt-git-index, served on loopback. Needs the pinned Zoekt; without it the suite says so and
# counts one skip (need_zoekt, tests/integration/lib.sh). No Kubernetes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

need_zoekt
# node's TAP summary ("# pass N", "# fail N", "# skipped N") is what tests/run.sh counts.
exec node --test --test-reporter=tap "$ZK_ROOT/tests/integration/real_zoekt/tools.test.mjs" \
  "$ZK_ROOT/tests/integration/real_zoekt/paging.test.mjs"
