#!/usr/bin/env bash
# A corpus served by three search shards (issue 32): the connector with --shard-urls against three real
# zoekt-webservers, each serving the repositories shard_of assigns it, must answer as the connector
# with --zoekt-url against one webserver over all of them, and answer partially, never with a tool
# error, while one shard is down (real_zoekt/shards.test.mjs). Needs the pinned Zoekt; without it the
# suite says so and counts one skip (need_zoekt, tests/integration/lib.sh). No Kubernetes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

need_zoekt
# node's TAP summary ("# pass N", "# fail N", "# skipped N") is what tests/run.sh counts.
exec node --test --test-reporter=tap "$ZK_ROOT/tests/integration/real_zoekt/shards.test.mjs"
