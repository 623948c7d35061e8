#!/usr/bin/env bash
# What `zoekt-operator render` prints is accepted by a real API server: every child of a corpus passes
# a server-side dry run (schema, defaulting, validation of Deployments, CronJobs, RBAC...). The control
# plane is Kubernetes 1.20, so the CronJob is rendered as batch/v1beta1, as discovery would choose.
set -u
source "$(dirname "$0")/lib.sh"

OP=$ZK_BIN/zoekt-operator
eventually 30 kubectl get --raw /readyz >/dev/null 2>&1
ns=$(new_namespace render)
on_exit "kubectl delete namespace $ns --wait=false"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

cat >"$tmp/private.yaml" <<EOF
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata:
  name: a-very-long-corpus-name-that-needs-shortening-for-every-child.team
  namespace: $ns
spec:
  repositories:
  - url: https://github.com/example-org/api.git
    branches: [main, release/2.x]
  - url: git@gitlab.example.com:platform/infra.git
  gitCredentialsSecretRef: {name: git-credentials}
  storage: {existingClaim: shared-index}
  indexer: {extraFlags: ["-submodules=false"]}
  webserver:
    nodeSelector: {pool: search}
    tolerations: [{key: dedicated, operator: Equal, value: search, effect: NoSchedule}]
  gateway: {tokenSecretRef: {name: search-tokens}}
  connector: {mirrorPrefix: github.com/example-org/}
EOF
sed "s/namespace: codesearch/namespace: $ns/" "$ZK_ROOT/examples/corpus-minimal.yaml" >"$tmp/minimal.yaml"

for c in minimal private; do
  check "$c: render succeeds" bash -c "'$OP' render -f '$tmp/$c.yaml' --kube-version 1.20 >'$tmp/$c.out'"
  check "$c: every child passes a server-side dry run" \
    kubectl apply --validate=false --dry-run=server -f "$tmp/$c.out"
  check "$c: the kinds, in apply order" bash -c \
    "grep '^kind:' '$tmp/$c.out' | tr '\n' ' ' | grep -q 'ConfigMap kind: ServiceAccount kind: Role kind: RoleBinding kind: Service kind: Deployment kind: PodDisruptionBudget kind: CronJob'"
done
check "existingClaim: no PVC rendered" bash -c "! grep -q '^kind: PersistentVolumeClaim' '$tmp/private.out'"
check "names stay within 63 characters" bash -c \
  "! grep -E '^  name: .{64,}' '$tmp/private.out'"
# A time zone is not something a 1.20 server can honour: render says so, naming the field.
sed 's/^spec:$/spec:\n  timeZone: Europe\/Berlin/' "$tmp/private.yaml" >"$tmp/tz.yaml"
check "a timeZone cannot be rendered for 1.20, and render names the field" bash -c \
  "! '$OP' render -f '$tmp/tz.yaml' --kube-version 1.20 >/dev/null 2>'$tmp/tz.err' && grep -q 'spec.timeZone: needs Kubernetes 1.25' '$tmp/tz.err'"

# spec.c renders quantities in canonical form so that applied objects compare equal to stored ones (a
# resync then writes nothing); these are the forms its unit test expects (tests/unit/test_spec.c).
canonical() { # canonical QUANTITY: what the API server stores for it
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"%s"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"%s"}}}]}}' "$ns" "$1" >"$tmp/pod.json"
  kubectl create --dry-run=server -f "$tmp/pod.json" -o jsonpath='{.spec.containers[0].resources.requests.cpu}'
}
for pair in 0.5=500m 2000m=2 1000=1k 1024Mi=1Gi 1536Mi=1536Mi 0.5Gi=512Mi 1.5Ki=1536 1000M=1G 2048Ti=2Pi 1.5=1500m 0=0; do
  check "the server stores ${pair%%=*} as ${pair#*=}" test "$(canonical "${pair%%=*}")" = "${pair#*=}"
done

finish
