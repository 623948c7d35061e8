#!/usr/bin/env bash
# The chart's namespaced mode on the local node: `rbac.scope=namespaced` with two watched namespaces
# installs a Role and RoleBinding in each and nothing cluster-wide; the operator (its image, under the
# chart's ServiceAccount) reconciles a corpus in each of them, and a corpus in a third namespace is
# left alone, since it can neither see nor touch it; `helm uninstall` takes the Roles away.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight operator connector gateway
A=$(new_namespace watched-a) || bail "a first watched namespace"
B=$(new_namespace watched-b) || bail "a second watched namespace"
C=$(new_namespace unwatched) || bail "a namespace left unwatched"
REL=$(new_namespace zo-namespaced) || bail "the release's namespace"
on_exit "helm uninstall zo -n $REL >/dev/null 2>&1; $KC delete namespace $A $B $C $REL --wait=false"

helm install zo "$ZK_ROOT/charts/zoekt-operator" -n "$REL" --set rbac.scope=namespaced \
  --set watchNamespace="$A" --set "watchNamespaces={$B}" --set replicaCount=1 >"$NODE_TMP/helm.log" 2>&1 ||
  bail "helm install: $(tail -3 "$NODE_TMP/helm.log")"
SA=system:serviceaccount:$REL:zo-zoekt-operator
can() { [ "$($KC auth can-i "$@" --as="$SA" 2>/dev/null)" = yes ]; }
cannot() { ! can "$@"; }
check "no ClusterRole or ClusterRoleBinding of the release" \
  test -z "$($KC get clusterrole,clusterrolebinding -l app.kubernetes.io/instance=zo -o name 2>/dev/null)"
check "a Role and RoleBinding in each watched namespace" bash -c \
  "$KC -n $A get role,rolebinding zo-zoekt-operator >/dev/null && $KC -n $B get role,rolebinding zo-zoekt-operator >/dev/null"
check "the operator may apply Deployments in a watched namespace" can patch deployments.apps -n "$A"
check "but not in another" cannot patch deployments.apps -n "$C"
check "nor list corpora across the cluster" cannot list codesearchcorpora.codesearch.dev --all-namespaces
ready() { [ "$($KC -n "$REL" get deploy zo-zoekt-operator -o jsonpath='{.status.readyReplicas}' 2>/dev/null)" = 1 ]; }
check "the operator runs" eventually 180 ready || $KC -n "$REL" logs deploy/zo-zoekt-operator --tail=20 | sed 's/^/# /'

corpus() { # corpus NS: a corpus "c" of one repository nobody will index, in NS
  $KC apply -f - >/dev/null <<YAML
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: c, namespace: $1}
spec:
  suspend: true
  repositories: [{url: "https://git.invalid/acme/alpha.git"}]
  webserver: {architecture: amd64, replicas: 0}
YAML
}
for ns in "$A" "$B" "$C"; do corpus "$ns" || bail "a corpus in $ns"; done
observed() { [ "$(csc "$1" c .status.observedGeneration)" = 1 ]; }
for ns in "$A" "$B"; do
  check "the corpus in watched $ns gets its children" eventually 60 $KC -n "$ns" get deploy c-search -o name ||
    $KC -n "$REL" logs deploy/zo-zoekt-operator --tail=20 | sed 's/^/# /'
  check "and a status for its generation" eventually 60 observed "$ns"
done
sleep 5 # what the operator could have done in C, it would have done by now
check "the corpus in the unwatched namespace gets nothing" bash -c "! $KC -n $C get deploy c-search >/dev/null 2>&1"
check "and no status" test -z "$(csc "$C" c .status.observedGeneration)"
forbidden=$($KC -n "$REL" logs deploy/zo-zoekt-operator 2>/dev/null | grep -c 'Forbidden' || true)
check "the operator asked for nothing it was not allowed ($forbidden Forbidden in its log)" test "$forbidden" = 0

helm uninstall zo -n "$REL" >/dev/null 2>&1
gone() { ! $KC -n "$A" get role zo-zoekt-operator >/dev/null 2>&1 && ! $KC -n "$B" get role zo-zoekt-operator >/dev/null 2>&1; }
check "helm uninstall removes the Roles" eventually 30 gone
finish
