#!/usr/bin/env bash
# Zoekt misbehaving behind the real search pod (issue 17, fault 9; docs/reliability.md): a corpus whose
# webserver image is the project's Zoekt image with zoekt-webserver replaced by tests/tools/zoekt-replay,
# whose magic queries answer slowly past the search timeout, with a body that is not JSON, with a
# truncated body, with 50 or 80 MiB, or with Zoekt's 500. Each is asked by an agent through the
# corpus's Service (nginx, the connector, the webserver container, as the operator renders them) with
# the official MCP SDK client. Expected of each: a short tool error that says what happened, within
# the search timeout and a margin; the connector's memory stays within its 64 MiB bound on an answer
# and is given back afterwards; no container of the pod restarts; and the next ordinary search answers.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight
NS=$(new_namespace faultszoekt) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall
REPLAY=$ZK_ROOT/build/san/tests/tools/zoekt-replay
[ -x "$REPLAY" ] || bail "zoekt-replay is built ($REPLAY)"

# ---- the fault image ---------------------------------------------------------------------------------------
# zoekt-replay and every library it loads (the machine's own, found by ldd) under /opt/fault, started
# through the bundled dynamic loader, so the image's libraries play no part. buildah's storage is this
# suite's own and goes with it.
IMG=localhost/zoekt-operator/zoekt-fault:test
fault_image() {
  local dir=$NODE_TMP/fault bh c lib
  mkdir -p "$dir/opt/lib" "$dir/opt/fixtures" || return 1
  cp "$REPLAY" "$dir/opt/zoekt-replay" && cp "$ZK_ROOT"/tests/fixtures/zoekt/* "$dir/opt/fixtures/" || return 1
  for lib in $(ldd "$REPLAY" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    cp -L "$lib" "$dir/opt/lib/" || return 1
  done
  cat >"$dir/zoekt-webserver" <<'SH'
#!/bin/sh
# Stands in for zoekt-webserver in the fault test: the flags are Zoekt's and are ignored; the replay
# server listens where the pod's connector and probes expect the webserver.
ASAN_OPTIONS=detect_leaks=0 exec /opt/fault/lib/ld-linux-x86-64.so.2 --library-path /opt/fault/lib \
  /opt/fault/zoekt-replay --fixtures /opt/fault/fixtures --port 6070
SH
  chmod 0755 "$dir/zoekt-webserver"
  bh=(buildah --root "$dir/storage" --runroot "$dir/run" --storage-driver vfs)
  c=$("${bh[@]}" from --quiet --pull-never "oci-archive:$("$ZK_ROOT/scripts/images.sh" archive zoekt amd64)") || return 1
  "${bh[@]}" copy "$c" "$dir/opt" /opt/fault >/dev/null &&
    "${bh[@]}" copy "$c" "$dir/zoekt-webserver" /usr/local/bin/zoekt-webserver >/dev/null &&
    "${bh[@]}" commit --quiet --rm "$c" "$IMG" >/dev/null &&
    "${bh[@]}" push --quiet "$IMG" "oci-archive:$dir/image.tar:$IMG" || return 1
  node_ctr images import "$dir/image.tar" >/dev/null 2>&1 || return 1
  rm -rf "$dir"
}
fault_image >"$NODE_TMP/fault-image.log" 2>&1 || bail "the fault image builds: $(tail -3 "$NODE_TMP/fault-image.log")"
ok "the fault image (zoekt-replay as zoekt-webserver) is built and in the node"
on_exit "node_ctr images rm $IMG"

operator_install
TOKEN=$(openssl rand -hex 16)
$KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
small='{requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}'
cat <<YAML | $KC apply -f - >/dev/null || bail "the corpus is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: $NS}
spec:
  repositories: [{url: "https://git.invalid/alpha.git", name: local/alpha}]
  poll: {interval: "0"}
  indexer: {resources: $small}
  webserver: {architecture: amd64, image: "$IMG", resources: $small}
  gateway: {image: "$("$ZK_ROOT/scripts/images.sh" ref gateway)", tokenSecretRef: {name: search-tokens}}
  connector: {searchTimeoutSeconds: 3}
YAML
pod_ready() {
  $KC -n "$NS" get pods -l app.kubernetes.io/component=search -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}' 2>/dev/null |
    grep -qx True
}
check "the search pod with the fault image is ready" eventually 180 pod_ready || { node_diagnostics "$NS"; bail "the search pod runs"; }
POD=$($KC -n "$NS" get pods -l app.kubernetes.io/component=search -o jsonpath='{.items[0].metadata.name}')
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"

# ask QUERY: search_code through the Service with Zoekt's own syntax (the magic words are plain
# terms); sets OUT, RC (mcp-call.mjs: 0 answer, 3 tool error, 1 no session) and SECS.
ask() {
  local t0=$SECONDS
  OUT=$(mcp "$MCP" "$TOKEN" search_code "{\"query\":\"$1\",\"syntax\":\"zoekt\"}")
  RC=$?
  SECS=$((SECONDS - t0))
  printf '# %s (exit %d, %d s): %s\n' "$1" "$RC" "$SECS" "$(printf '%s' "$OUT" | head -c 300 | tr '\n' ' ')"
}
# plain_search_answers: the fixture's answer to "needle" (src/util.c among its files) comes through.
plain_search_answers() { ask needle >/dev/null; [ "$RC" = 0 ] && grep -qF src/util.c <<<"$OUT"; }
check "an ordinary search answers through the pod" eventually 60 plain_search_answers
# The connector's process in the pod (its PID on this machine).
connector_pid() { container_pid "$NS" "$POD" connector; }
PID=$(connector_pid)
[ -n "$PID" ] || bail "the connector's process is found"
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status"; }
rss0=$(rss_kib)

ask "needle zk:hang"
check "slow past the search timeout (3 s): a tool error, within 3 s + 10 s" test "$RC" = 3 -a "$SECS" -le 13
check "slow past the search timeout: the error says it took too long and to retry" \
  bash -c 'grep -qiE "time|did not answer" <<<"$1" && grep -qi "retry\|try again" <<<"$1"' _ "$OUT"
ask "needle zk:garbage"
check "a body that is not JSON: a tool error that says the answer was unreadable" \
  bash -c '[ "$1" = 3 ] && grep -qiE "not (valid )?JSON" <<<"$2"' _ "$RC" "$OUT"
ask "needle zk:truncated"
check "a truncated body: a tool error, not a partial answer" \
  bash -c '[ "$1" = 3 ] && ! grep -qF src/util.c <<<"$2"' _ "$RC" "$OUT"
# The connector bounds one answer at 64 MiB (CONNECTOR_ZOEKT_RESPONSE_MAX): 50 MiB is read and found
# not to be Zoekt's, 80 MiB is cut off at the bound.
ask "needle zk:huge:50"
check "a 50 MiB answer that is not Zoekt's: a tool error that says so" \
  bash -c '[ "$1" = 3 ] && grep -qiE "not (valid )?JSON" <<<"$2"' _ "$RC" "$OUT"
ask "needle zk:huge:80"
check "an 80 MiB answer: a tool error that says it is larger than the bound" \
  bash -c '[ "$1" = 3 ] && grep -qiE "large|exceed|limit" <<<"$2"' _ "$RC" "$OUT"
rss1=$(rss_kib)
peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$PID/status")
echo "# connector resident memory: $rss0 KiB before the faults, $rss1 KiB after, $peak KiB at its peak"
check "the connector's peak resident memory stays within the 64 MiB bound plus 32 MiB" [ "$peak" -lt $(( (64 + 32) * 1024 )) ]
check "the connector gives the answers' memory back (resident within 16 MiB of before)" [ $((rss1 - rss0)) -lt 16384 ]
ask "needle zk:500"
check "Zoekt's 500: a tool error" [ "$RC" = 3 ]
restarts() {
  $KC -n "$NS" get pod "$POD" -o jsonpath='{range .status.containerStatuses[*]}{.restartCount}{"\n"}{end}' | awk '{s+=$1} END {print s+0}'
}
check "no container of the search pod restarted" [ "$(restarts)" = 0 ]
check "the next ordinary search answers" plain_search_answers
check "the connector process is the same one" [ "$(connector_pid)" = "$PID" ]
finish
