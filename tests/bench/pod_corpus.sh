# tests/bench/pod_corpus.sh, sourced by the benchmarks that load a corpus's search pod on the local node
# (load.sh, hostile.sh) after tests/integration/lib.sh and node/common.sh. pod_corpus PREFIX QUERY
# installs the operator and a corpus named org in a new namespace PREFIX-*, its volume make bench's
# organisation index (tests/bench/corpus.sh) bind-mounted read-only, so that nothing is copied and no
# indexer runs; its gateway takes the token in $NODE_TMP/token. It returns once search_code QUERY
# answers through the Service, with NS, POD, MCP (the Service's /mcp URL) and TOKEN set; what it made
# goes at exit. rss_mib CONTAINER then reads the resident memory of one of the pod's containers.

pod_corpus() {
  local query=$2
  INDEX=$("$ZK_ROOT/tests/bench/corpus.sh" "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus") ||
    bail "the organisation index is built"
  node_preflight
  NS=$(new_namespace "$1") || bail "a namespace for the corpus"
  on_exit "$KC delete namespace $NS --wait=false"
  on_exit operator_uninstall
  local state=${ZK_CLUSTER_DIR:-$ZK_ROOT/.cluster}
  local vol=$state/node/volumes/$1-$NS
  mkdir -p "$vol/index" && mount --bind -o ro "$INDEX" "$vol/index" || bail "the index bind-mounted at $vol/index"
  on_exit "umount -l '$vol/index'; rmdir '$vol/index' '$vol'"
  host_volume "$1-$NS" org-index 2Gi "$vol" || bail "the volume's PersistentVolume and claim"

  operator_install >/dev/null
  TOKEN=$(openssl rand -hex 16)
  printf '%s' "$TOKEN" >"$NODE_TMP/token"
  $KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
  cat <<YAML | $KC apply -f - >/dev/null || bail "the corpus is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: $NS}
spec:
  repositories: [{url: "https://git.invalid/placeholder.git", name: placeholder}]
  poll: {interval: "0"}
  storage: {existingClaim: org-index}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, resources: {requests: {cpu: 500m, memory: 512Mi}, limits: {memory: 4Gi}}}
  gateway: {image: "$("$ZK_ROOT/scripts/images.sh" ref gateway)", tokenSecretRef: {name: search-tokens}}
YAML
  MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
  answers() { mcp "$MCP" "$TOKEN" search_code "{\"query\":\"$query\"}" >"$NODE_TMP/first" 2>&1; }
  eventually 300 answers || { node_diagnostics "$NS"; bail "search_code answers through the Service"; }
  POD=$($KC -n "$NS" get pods -l app.kubernetes.io/component=search -o jsonpath='{.items[0].metadata.name}')
}

# pids NAME: the PIDs of the processes of the pod's container NAME (its task and every descendant).
pids() {
  local top
  top=$(container_pid "$NS" "$POD" "$1")
  [ -n "$top" ] && { echo "$top"; pgrep -P "$top" || true; }
}
# rss_mib NAME: the resident memory of container NAME's processes together, in MiB.
rss_mib() {
  local p sum=0
  for p in $(pids "$1"); do sum=$((sum + $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done
  echo $((sum / 1024))
}
