#!/usr/bin/env bash
# scripts/check-layers.sh, no cluster needed: the tree keeps to its layers, and an include that points
# up a layer, planted in a copy of the tree, is caught and named, for every rule the script states.
source "$(dirname "$0")/lib.sh"
CHECK=$ZK_ROOT/scripts/check-layers.sh
TMP=$(mktemp -d); on_exit "rm -rf '$TMP'"

check "the tree keeps to its layers" "$CHECK" "$ZK_ROOT"

# planted FILE INCLUDE: a copy of the tree in which FILE also includes INCLUDE fails the check, naming FILE.
planted() {
  local copy=$TMP/tree.$RANDOM
  mkdir -p "$copy"
  cp -r "$ZK_ROOT/lib" "$ZK_ROOT/controller" "$ZK_ROOT/connector" "$copy/"
  mkdir -p "$(dirname "$copy/$1")"
  printf '#include "%s"\n' "$2" >>"$copy/$1"
  ! "$CHECK" "$copy" >"$copy.out" 2>&1 && grep -q "^$1:" "$copy.out"
}
check "lib/ including the operator is caught" planted lib/json.c controller/corpus/api.h
check "lib/kube/ including the connector is caught" planted lib/kube/watch.h connector/config.h
check "controller/runtime/ including controller/corpus/ is caught" planted controller/runtime/informer.c \
  controller/corpus/render.h
check "the operator including the connector is caught" planted controller/corpus/spec.c connector/auth.h
check "the connector including the operator is caught" planted connector/tools/search.c controller/corpus/api.h
check "connector/zoekt/ including connector/mcp/ is caught" planted connector/zoekt/query.c connector/mcp/server.h
check "connector/format/ including connector/mcp/ is caught" planted connector/format/text.h connector/mcp/jsonrpc.h
check "connector/front including connector/mcp/ is caught" planted connector/front.c connector/mcp/streamable.h
check "connector/metrics including connector/mcp/ is caught" planted connector/metrics.c connector/mcp/server.h
check "an include within the layer passes" bash -c \
  "cp -r '$ZK_ROOT/lib' '$ZK_ROOT/controller' '$ZK_ROOT/connector' '$TMP/' &&
   printf '#include \"controller/runtime/queue.h\"\n' >>'$TMP/controller/corpus/status.c' && '$CHECK' '$TMP'"
finish
