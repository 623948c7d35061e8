#!/usr/bin/env bash
# Fails when an #include points up a layer (docs/architecture.md, "Layers"). The layers, lowest first:
#   lib/                                  shared by both programs; includes nothing of theirs
#   controller/runtime/                   a generic controller runtime; includes only lib/
#   controller/corpus/spec.*              the parsed spec; includes only lib/
#   controller/sources/                   discovery from code hosts; of the domain only the spec
#   controller/corpus/, controller/main.c the domain and the program
#   connector/zoekt/, connector/format/   Zoekt and its rendering; know nothing of MCP
#   connector/tools/, connector/front.*,  the tools, the HTTP front door that serves routes handed to
#   connector/metrics.*                   it, and the metrics; know nothing of MCP
#   connector/mcp/, connector/main.c      the protocol and the program, which plugs /mcp into the front
# and neither program includes the other's code. Includes are written from the tree's root
# ("controller/corpus/api.h") or, for lib/, by their lib-relative name ("json.h"), so a prefix names
# the layer. Usage: scripts/check-layers.sh [ROOT] (default: the tree this script is in).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# check FILES... -- FORBIDDEN WHY: prints every include in FILES whose path starts with FORBIDDEN (an
# extended regular expression).
check() {
  local files=() f hit
  while [ "$1" != "--" ]; do files+=("$1"); shift; done
  shift
  for f in "${files[@]}"; do
    grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($1)" "$f" | while IFS= read -r hit; do
      echo "$f:${hit%%:*}: ${hit#*:}  ($2)"
    done || true # grep finds nothing in a file that keeps to its layer
  done
}

report=$(
  shopt -s nullglob globstar
  check lib/**/*.[ch] -- 'controller/|connector/' "lib/ is shared by both programs and includes neither"
  check controller/runtime/*.[ch] -- 'controller/corpus/|controller/assets/|connector/' \
    "controller/runtime/ is generic: it includes only lib/ (hand it functions instead)"
  check controller/**/*.[ch] -- 'connector/' "the operator does not include the connector"
  check controller/corpus/spec.[ch] -- 'controller/(runtime|assets|sources)/|controller/corpus/(api|compare|gauges|reconcile|render|status)\.' "controller/corpus/spec is the domain's lowest part: it includes only lib/"
  check controller/sources/*.[ch] -- 'controller/(runtime|assets)/|controller/corpus/(api|compare|gauges|reconcile|render|status)\.' \
    "controller/sources/ knows of the domain only the spec; reconcile hands it what it needs"
  check connector/**/*.[ch] -- 'controller/' "the connector does not include the operator"
  check connector/zoekt/*.[ch] connector/format/*.[ch] -- 'connector/mcp/' \
    "connector/zoekt/ and connector/format/ know nothing of the MCP transport"
  check connector/zoekt/*.[ch] connector/format/*.[ch] -- 'connector/tools/' \
    "connector/zoekt/ and connector/format/ render and parse; the tools above them use them, not the reverse"
  check connector/front.[ch] -- 'connector/mcp/' \
    "connector/front serves the routes handed to it and knows nothing of the MCP transport"
  check connector/metrics.[ch] -- 'connector/mcp/' \
    "connector/metrics counts what the transports report and knows nothing of them"
)
[ -z "$report" ] && exit 0
echo "$report"
echo "check-layers: $(printf '%s\n' "$report" | wc -l) include(s) point up a layer (see docs/architecture.md)" >&2
exit 1
