# Shared by the suites that run what the operator creates on the local node (test_node_*.sh): the
# project's images imported into the node, a git server over HTTPS with a private CA and a private
# repository, corpora applied through the API, and an agent's MCP calls through a corpus's Service.
# Source after tests/integration/lib.sh.

NODE_HERE=$ZK_ROOT/tests/integration/node
KC=kubectl
NODE_TMP=$(mktemp -d /tmp/zk-node-test.XXXXXX)
chmod 755 "$NODE_TMP"
# The git server first: its PID files live in NODE_TMP.
node_cleanup() {
  [ -d "$NODE_TMP/git" ] && "$ZK_ROOT/scripts/git-server.sh" stop "$NODE_TMP/git"
  rm -rf "$NODE_TMP"
}
on_exit node_cleanup

# node_preflight [IMAGE...]: the suite needs the node and the images it names (default: operator,
# connector, gateway and zoekt), loaded into the node. Without the node it is skipped (a failure under
# CI, where the node must run); one that needs the Zoekt image, without Zoekt, as need_zoekt says.
node_preflight() {
  local images=("$@")
  [ ${#images[@]} -gt 0 ] || images=(operator connector gateway zoekt)
  "$ZK_ROOT/scripts/cluster.sh" status >/dev/null 2>&1 ||
    skip_suite "the local node is not running (scripts/cluster.sh up without ZK_NODE=0)"
  case " ${images[*]} " in *" zoekt "*) need_zoekt amd64 ;; esac
  "$ZK_ROOT/scripts/cluster.sh" load "${images[@]}" >"$NODE_TMP/load.log" 2>&1 ||
    { fail "the images load into the node: $(tail -3 "$NODE_TMP/load.log")"; finish; exit 1; }
}


# git_server_start: sets GIT_URL, GIT_CA, GIT_USER, GIT_PASSWORD.
git_server_start() {
  local vars
  vars=$("$ZK_ROOT/scripts/git-server.sh" start "$NODE_TMP/git") || bail "the git server starts"
  eval "$vars"
}

# git_commit REPO BRANCH FILE LINE...: commits FILE holding LINEs on BRANCH of the served repository
# REPO (created on first use) and pushes it, as a developer's push would.
git_commit() {
  local repo=$1 branch=$2 file=$3 work=$NODE_TMP/work/$1
  shift 3
  [ -d "$NODE_TMP/git/repos/$repo.git" ] || "$ZK_ROOT/scripts/git-server.sh" repo "$NODE_TMP/git" "$repo"
  if [ ! -d "$work" ]; then
    mkdir -p "$work"
    git -C "$work" init -q -b "$branch"
  fi
  git -C "$work" checkout -q -B "$branch"
  mkdir -p "$work/$(dirname "$file")"
  printf '%s\n' "$@" >"$work/$file"
  git -C "$work" add "$file"
  git -C "$work" -c user.name=dev -c user.email=dev@example.invalid commit -q -m "$file on $branch"
  git -C "$work" push -q -f "$NODE_TMP/git/repos/$repo.git" "$branch"
}

# node_corpus NAME REPOSITORY_LINES [TOKEN_SECRET] [EXTRA_SPEC_LINES] [EXTRA_INDEXER_FIELDS]: applies
# corpus NAME in $NS, sized for the one small amd64 node and served by the locally built gateway image
# (open unless TOKEN_SECRET names the gateway's token Secret). EXTRA_INDEXER_FIELDS go into
# spec.indexer beside its resources ("fetchStallSeconds: 5").
node_corpus() {
  local small='{requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}'
  local gateway
  gateway="image: $("$ZK_ROOT/scripts/images.sh" ref gateway)${3:+, tokenSecretRef: {name: $3\}}"
  cat <<YAML | $KC apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: $1, namespace: $NS}
spec:
  repositories:
$2
  indexer: {resources: $small${5:+, $5}}
  webserver: {architecture: amd64, resources: $small}
  gateway: {$gateway}
${4:-}
YAML
}

# refresh_secrets: in $NS, what a corpus that reads the git server privately, has a gateway token and
# takes webhooks names: git-credentials and git-ca for the git server, search-tokens (agent=$TOKEN)
# and hooks (secret=$HOOK_SECRET). Sets TOKEN and HOOK_SECRET, both new.
refresh_secrets() {
  TOKEN=$(openssl rand -hex 16)
  HOOK_SECRET=$(openssl rand -hex 16)
  $KC -n "$NS" create secret generic git-credentials --from-literal=username="$GIT_USER" \
    --from-literal=password="$GIT_PASSWORD" >/dev/null &&
    $KC -n "$NS" create configmap git-ca --from-file=ca.crt="$GIT_CA" >/dev/null &&
    $KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null &&
    $KC -n "$NS" create secret generic hooks --from-literal=secret="$HOOK_SECRET" >/dev/null
}

# push_hook URL REPO [SIGNATURE]: a GitHub push delivery for the git server's repository REPO to URL (a
# corpus's /hooks/push), signed with $HOOK_SECRET unless SIGNATURE is given; prints the HTTP status.
push_hook() {
  local body sig
  body="{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"$GIT_URL/$2.git\"}}"
  sig=${3:-sha256=$(printf '%s' "$body" | openssl dgst -sha256 -hmac "$HOOK_SECRET" -r | cut -d' ' -f1)}
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST "$1" -H 'X-GitHub-Event: push' \
    -H "X-Hub-Signature-256: $sig" -H 'Content-Type: application/json' -d "$body"
}

# host_volume PV CLAIM SIZE DIR: a ReadWriteMany PersistentVolume PV over the node's folder DIR, bound
# to the claim CLAIM in $NS (SIZE such as 24Mi), for a corpus's `storage.existingClaim`; the
# PersistentVolume is deleted when the suite ends.
host_volume() {
  on_exit "$KC delete pv $1 --wait=false"
  cat <<YAML | $KC apply -f - >/dev/null
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: $3}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: $NS, name: $2}
  hostPath: {path: "$4", type: Directory}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $2, namespace: $NS}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: $1
  resources: {requests: {storage: $3}}
YAML
}

# csc NS NAME JSONPATH: one field of a corpus.
csc() { $KC -n "$1" get csc "$2" -o jsonpath="{$3}" 2>/dev/null; }

# condition_is NS NAME TYPE STATUS
condition_is() { [ "$(csc "$1" "$2" ".status.conditions[?(@.type==\"$3\")].status")" = "$4" ]; }

# reindex NS NAME: asks for an index now, as a user does, and waits for the Job it starts to finish.
# Prints the Job's name.
reindex() {
  local job
  job=$(reindex_start "$1" "$2") || return 1
  eventually 240 job_done "$1" "$job" || return 1
  echo "$job"
}
# reindex_start NS NAME: asks for an index now and prints the name of the Job it starts, without
# waiting for it (a fault test acts on the running Job).
reindex_start() {
  local ns=$1 name=$2 at before
  before=$($KC -n "$ns" get jobs -o name 2>/dev/null | sort)
  # A new value each time (the annotation is honoured once per value).
  at=$(date -u +%FT%T.%NZ)
  $KC -n "$ns" annotate csc "$name" --overwrite "codesearch.dev/reindex-requested-at=$at" >/dev/null || return 1
  eventually 60 new_job "$ns" "$before" || return 1
  cat "$NODE_TMP/new-job"
}
new_job() {
  local j
  j=$(comm -13 <(printf '%s\n' "$2") <($KC -n "$1" get jobs -o name 2>/dev/null | sort) | head -n1)
  [ -n "$j" ] && echo "${j#job.batch/}" >"$NODE_TMP/new-job"
}
# job_done NS JOB: the Job has finished, Complete or Failed (after its retries, so no pod of it can
# still hold the volume's indexer lock when the next one starts).
job_done() {
  $KC -n "$1" get job "$2" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' 2>/dev/null |
    grep -qE '^(Complete|Failed)$'
}

# service_url NS SERVICE PORT PATH: the Service's address as a client on this machine reaches it.
service_url() {
  local ip
  ip=$($KC -n "$1" get service "$2" -o jsonpath='{.spec.clusterIP}' 2>/dev/null) || return 1
  echo "http://$ip:$3$4"
}

# mcp URL TOKEN TOOL [ARGS_JSON]: the tool's text (see node/mcp-call.mjs for exit codes).
mcp() { node "$NODE_HERE/mcp-call.mjs" "$@" 2>&1; }

# search_finds URL TOKEN QUERY NEEDLE: search_code answers QUERY with text containing NEEDLE.
search_finds() {
  local out
  out=$(mcp "$1" "$2" search_code "{\"query\":\"$3\"}") || return 1
  printf '%s\n' "$out" >"$NODE_TMP/last-search"
  printf '%s' "$out" | grep -qF -- "$4"
}

# operator_install: installs the operator with manifests/ as a platform engineer would (after removing
# what a killed run may have left) and waits until one of its pods holds the Lease.
operator_install() {
  operator_uninstall
  kubectl apply -k "$ZK_ROOT/manifests" >"$NODE_TMP/install.log" 2>&1 ||
    bail "kubectl apply -k manifests/: $(tail -3 "$NODE_TMP/install.log")"
  check "the operator runs in its pods and one holds the Lease" eventually 180 operator_ready
}

# node_ctr ARGS...: ctr against the node's containerd, in the namespace the kubelet uses (its
# deprecation notices dropped).
node_ctr() {
  ctr --address "${ZK_CLUSTER_DIR:-$ZK_ROOT/.cluster}/node/containerd.sock" --namespace k8s.io "$@" \
    2> >(grep -v DEPRECATION >&2)
}

# container_id NS POD CONTAINER: containerd's ID of the pod's container (the kubelet's containerID
# without its scheme); fails when the pod names none.
container_id() {
  local id
  id=$($KC -n "$1" get pod "$2" -o jsonpath="{.status.containerStatuses[?(@.name==\"$3\")].containerID}" 2>/dev/null)
  [ -n "$id" ] && echo "${id#containerd://}"
}

# container_pid NS POD CONTAINER: the PID on this machine of the container's first process.
container_pid() {
  local id
  id=$(container_id "$@") || return 1
  node_ctr tasks ls 2>/dev/null | awk -v id="$id" '$1 == id {print $2}'
}

# container_kill NS POD CONTAINER: SIGKILLs the container's first process through the node's
# containerd, as the kernel's OOM killer or a crash would end it; its PID namespace goes with it, so
# every process of the container dies at once. The kubelet sees the container exit with 137.
container_kill() {
  local id
  id=$(container_id "$@") || return 1
  node_ctr tasks kill --signal SIGKILL "$id"
}

# operator_uninstall: removes an in-cluster operator (the namespace and the cluster-wide RBAC, never
# the CRD, whose deletion would delete every corpus) and waits until its pods are gone, so that no
# later suite shares corpora with it.
operator_uninstall() {
  $KC delete namespace zoekt-operator --ignore-not-found --wait=false >/dev/null 2>&1
  $KC delete clusterrole zoekt-operator --ignore-not-found >/dev/null 2>&1
  $KC delete clusterrolebinding zoekt-operator --ignore-not-found >/dev/null 2>&1
  eventually 120 bash -c "! $KC get namespace zoekt-operator >/dev/null 2>&1"
}

# operator_ready [NS]: the in-cluster operator's Deployment in NS (default zoekt-operator) is available
# and one replica holds the Lease there.
operator_ready() {
  local ns=${1:-zoekt-operator}
  [ "$($KC -n "$ns" get deployment -o jsonpath='{.items[0].status.availableReplicas}' 2>/dev/null)" -ge 1 ] 2>/dev/null &&
    [ -n "$($KC -n "$ns" get lease zoekt-operator-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" ]
}

# node_diagnostics NS: what a failure needs to be understood, written to the suite's log.
node_diagnostics() {
  echo "# ---- diagnostics for $1"
  $KC -n "$1" get csc -o yaml 2>&1 | sed -n '/^  status:/,$p' | sed 's/^/# /' | head -60
  $KC -n "$1" get pods,jobs,pvc -o wide 2>&1 | sed 's/^/# /'
  $KC -n "$1" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/# /'
  $KC -n zoekt-operator logs deploy/zoekt-operator --tail=20 2>&1 | sed 's/^/# operator: /'
}
