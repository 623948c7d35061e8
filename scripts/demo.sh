#!/usr/bin/env bash
# `make demo`: the whole product on the local cluster (control plane and node), in a few minutes.
#
# Builds the images (amd64, cached by the hash of their inputs), imports them into the node, installs
# the operator with manifests/ (kustomize) so that it runs in its own pods, serves three repositories
# from a git server on this machine over HTTPS (a private CA; one repository needs credentials), and
# applies a CodeSearchCorpus for them. A reindex Job mirrors and indexes them with zoekt-git-index onto
# the shared efs-sc volume, the search pod serves the index, `kubectl get csc` shows the real counts,
# and an agent's search goes through the connector run locally over stdio, as README.md describes.
# Everything stays up for exploring; the last lines say how to stop it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=${ZK_CACHE:-/var/cache/zoekt-operator}/bin:$PATH
export KUBECONFIG=${KUBECONFIG:-$root/.cluster/kubeconfig}
ns=zoekt-demo
# Outside the checkout: nginx's workers must read it, and a checkout under /root is closed to them.
git_dir=/var/tmp/zoekt-operator-demo-git
kc=kubectl

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
wait_for() { # wait_for SECONDS WHAT CMD...
  local end=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { echo "demo: timed out waiting for $what" >&2; return 1; }
    sleep 1
  done
}

# `scripts/demo.sh uninstall`: removes what the demo installed in the cluster (its corpus and the
# operator), and nothing when the demo never ran. `make test` calls it first: its suites run operators of
# their own, and the demo's, which watches every namespace, would reconcile their corpora too.
if [ "${1:-}" = uninstall ]; then
  if $kc get namespace zoekt-operator >/dev/null 2>&1 || $kc get namespace "$ns" >/dev/null 2>&1; then
    echo "demo: removing the demo's corpus and operator from the cluster" >&2
    $kc delete namespace "$ns" zoekt-operator --ignore-not-found --wait=false >/dev/null
    $kc delete clusterrolebinding zoekt-operator --ignore-not-found >/dev/null
    $kc delete clusterrole zoekt-operator --ignore-not-found >/dev/null
    wait_for 180 "the demo's namespaces to go" sh -c "! $kc get namespace zoekt-operator >/dev/null 2>&1 && ! $kc get namespace $ns >/dev/null 2>&1"
  fi
  exit 0
fi

step "Images for this machine (scripts/images.sh; built once, then taken from the cache)"
"$root/scripts/images.sh" build "$(dpkg --print-architecture)"
"$root/scripts/cluster.sh" load operator connector gateway zoekt
$kc get nodes -o wide

step "The operator, installed as a platform engineer would: kubectl apply -k manifests/"
kubectl apply -k "$root/manifests"
wait_for 180 "the operator's pods" sh -c "$kc -n zoekt-operator get lease zoekt-operator-leader -o jsonpath='{.spec.holderIdentity}' | grep -q ."
$kc -n zoekt-operator get pods -o wide
echo "leader: $($kc -n zoekt-operator get lease zoekt-operator-leader -o jsonpath='{.spec.holderIdentity}')"

step "An organisation's git server on this machine (HTTPS, private CA; private/ needs credentials)"
"$root/scripts/git-server.sh" stop "$git_dir"
eval "$("$root/scripts/git-server.sh" start "$git_dir")"
seed() { # seed NAME SOURCE: serves a copy of the git repository SOURCE as NAME
  rm -rf "$git_dir/repos/$1.git"
  "$root/scripts/git-server.sh" repo "$git_dir" "$1"
  git -C "$2" push -q "$git_dir/repos/$1.git" "HEAD:refs/heads/main"
}
seed platform/zoekt-operator "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$work" init -q -b main payments
printf 'package payments\n\n// ChargeCard bills a card once; retries are the caller'"'"'s job.\nfunc ChargeCard(amount int) error {\n\treturn nil\n}\n' >"$work/payments/charge.go"
git -C "$work/payments" add . && git -C "$work/payments" -c user.name=demo -c user.email=demo@example.invalid commit -q -m init
seed acme/payments "$work/payments"
git -C "$work" init -q -b main secrets
printf 'rotation: every 90 days\nowner: platform-security\n' >"$work/secrets/policy.yaml"
git -C "$work/secrets" add . && git -C "$work/secrets" -c user.name=demo -c user.email=demo@example.invalid commit -q -m init
seed private/security-policy "$work/secrets"
echo "serving $GIT_URL: platform/zoekt-operator (this checkout), acme/payments, private/security-policy"

step "A corpus of those repositories, with its Secrets and the CA bundle"
$kc create namespace "$ns" --dry-run=client -o yaml | $kc apply -f - >/dev/null
# The corpus's pods pass the restricted Pod Security Standard; the namespace enforces it.
$kc label --overwrite namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
# A second run keeps the first run's token: the search pod sees a changed Secret only after the
# kubelet's next sync, up to a minute later.
token=$($kc -n "$ns" get secret search-tokens -o jsonpath='{.data.demo-agent}' 2>/dev/null | base64 -d || true)
[ -n "$token" ] || token=$(openssl rand -hex 16)
$kc -n "$ns" create secret generic git-credentials --from-literal=username="$GIT_USER" \
  --from-literal=password="$GIT_PASSWORD" --dry-run=client -o yaml | $kc apply -f - >/dev/null
$kc -n "$ns" create configmap git-ca --from-file=ca.crt="$GIT_CA" --dry-run=client -o yaml | $kc apply -f - >/dev/null
$kc -n "$ns" create secret generic search-tokens --from-literal=demo-agent="$token" --dry-run=client -o yaml |
  $kc apply -f - >/dev/null
cat <<YAML | tee "$work/corpus.yaml"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: demo, namespace: $ns}
spec:
  repositories:
  - {url: $GIT_URL/platform/zoekt-operator.git, name: platform/zoekt-operator}
  - {url: $GIT_URL/acme/payments.git, name: acme/payments}
  - {url: $GIT_URL/private/security-policy.git, name: private/security-policy}
  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}
  indexer: {resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: $(dpkg --print-architecture), resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 1Gi}}}
  gateway: {image: $("$root/scripts/images.sh" ref gateway), tokenSecretRef: {name: search-tokens}}
YAML
$kc apply -f "$work/corpus.yaml"
wait_for 120 "the children" $kc -n "$ns" get deployment demo-search
$kc -n "$ns" get pvc,configmap,cronjob,deployment,service -l app.kubernetes.io/instance=demo

step "Index now: kubectl annotate csc/demo codesearch.dev/reindex-requested-at=..."
before=$($kc -n "$ns" get jobs -o name)
$kc -n "$ns" annotate csc demo --overwrite "codesearch.dev/reindex-requested-at=$(date -u +%FT%TZ)"
# The Job this request starts, not one an earlier run left.
new_job() { $kc -n "$ns" get jobs -o name | grep reindex | grep -vxF -- "$before" | head -n1; }
new_job_started() { [ -n "$(new_job)" ]; }
wait_for 60 "the reindex Job" new_job_started
job=$(new_job)
wait_for 300 "$job to finish" sh -c "$kc -n $ns get $job -o jsonpath='{.status.succeeded}' | grep -q 1"
$kc -n "$ns" logs "$job"

step "kubectl get csc (the counts are read from the search pod's /index-status)"
wait_for 180 "Ready=True" sh -c "$kc -n $ns get csc demo -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True"
wait_for 60 "Fresh=True" sh -c "$kc -n $ns get csc demo -o jsonpath='{.status.conditions[?(@.type==\"Fresh\")].status}' | grep -q True"
$kc -n "$ns" get csc -o wide

step "An agent searches: the connector over stdio, against the corpus's Service with a bearer token"
ip=$($kc -n "$ns" get service demo-search -o jsonpath='{.spec.clusterIP}')
printf '%s\n' "$token" >"$work/token"
echo "bin/zoekt-connector --stdio --zoekt-url http://$ip:8080 --zoekt-token-file TOKEN   (search_code: ChargeCard)"
MCP_STDIO_COMMAND="[\"$root/bin/zoekt-connector\",\"--stdio\",\"--zoekt-url\",\"http://$ip:8080\",\"--zoekt-token-file\",\"$work/token\"]" \
  node "$root/tests/integration/node/mcp-call.mjs" stdio "" search_code '{"query":"ChargeCard"}'

"$root/scripts/git-server.sh" stop "$git_dir"
cat <<EOF

The operator keeps running in namespace zoekt-operator and the corpus in $ns:
  kubectl -n $ns get csc,pods             (KUBECONFIG=$KUBECONFIG, PATH=\$PATH:${PATH%%:*})
The git server is stopped, so the nightly run will report every repository as failed until it serves
again: scripts/git-server.sh start $git_dir
Stop everything (pods, node, control plane): make cluster-down
EOF
