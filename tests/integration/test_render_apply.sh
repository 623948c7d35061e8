#!/usr/bin/env bash
# What `zoekt-operator render` prints is accepted by a real API server: every child of a corpus passes
# a server-side dry run (schema, defaulting, validation of Deployments, CronJobs, RBAC...). Every
# supported version (1.33 to 1.37) takes the same children, so render needs no version.
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
sed 's/^spec:$/spec:\n  timeZone: Europe\/Berlin/' "$tmp/private.yaml" >"$tmp/tz.yaml"

for c in minimal private tz; do
  check "$c: render succeeds" bash -c "'$OP' render -f '$tmp/$c.yaml' >'$tmp/$c.out'"
  check "$c: every child passes a server-side dry run" \
    kubectl apply --validate=false --dry-run=server -f "$tmp/$c.out"
  check "$c: the kinds, in apply order" bash -c \
    "grep '^kind:' '$tmp/$c.out' | tr '\n' ' ' | grep -q 'ConfigMap kind: ServiceAccount kind: Role kind: RoleBinding kind: NetworkPolicy kind: NetworkPolicy kind: Service kind: Deployment kind: PodDisruptionBudget kind: CronJob'"
done
check "existingClaim: no PVC rendered" bash -c "! grep -q '^kind: PersistentVolumeClaim' '$tmp/private.out'"
check "names stay within 63 characters" bash -c \
  "! grep -E '^  name: .{64,}' '$tmp/private.out'"
# A spec.timeZone goes into the CronJob (GA since Kubernetes 1.27), and the dry run above took it.
check "tz: the CronJob carries spec.timeZone" \
  awk '/^---$/ { cj = 0 } /^kind: CronJob$/ { cj = 1 } cj && /^  timeZone: Europe\/Berlin$/ { found = 1 } END { exit !found }' \
  "$tmp/tz.out"

# spec.c renders quantities in canonical form so that applied objects compare equal to stored ones (a
# resync then writes nothing); these are the forms its unit test expects (tests/unit/test_spec.c).
canonical() { # canonical QUANTITY: what the API server stores for it
  # The namespace enforces the restricted Pod Security Standard, so the probe pod meets it too.
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"%s"},"spec":{"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"c","image":"x","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},"resources":{"requests":{"cpu":"%s"}}}]}}' "$ns" "$1" >"$tmp/pod.json"
  kubectl create --dry-run=server -f "$tmp/pod.json" -o jsonpath='{.spec.containers[0].resources.requests.cpu}'
}
for pair in 0.5=500m 2000m=2 1000=1k 1024Mi=1Gi 1536Mi=1536Mi 0.5Gi=512Mi 1.5Ki=1536 1000M=1G 2048Ti=2Pi 1.5=1500m 0=0; do
  check "the server stores ${pair%%=*} as ${pair#*=}" test "$(canonical "${pair%%=*}")" = "${pair#*=}"
done

finish
