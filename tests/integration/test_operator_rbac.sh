#!/usr/bin/env bash
# The shipped RBAC is minimal: the identity the other operator tests run under (bound to exactly
# manifests/clusterrole.yaml and manifests/role.yaml) may do what the controller does and nothing of
# what it never needs. Sufficiency is what test_operator*.sh prove by passing under that identity.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

wait_api || { fail "API server not ready"; finish; exit 1; }
install_crd || { fail "CRD install"; finish; exit 1; }
NS=$(new_namespace oprbac)
OTHER=$(new_namespace oprbac-other)
on_exit "drop_namespace $NS $OTHER"
KC=$(operator_identity "$NS") || { fail "operator identity"; finish; exit 1; }

can() { [ "$(kubectl --kubeconfig "$KC" auth can-i "$@" 2>/dev/null)" = yes ]; }
cannot() { ! can "$@"; }

# What the controller does.
check "may watch corpora in any namespace" can watch codesearchcorpora.codesearch.dev -n "$OTHER"
check "may update corpus status" can update codesearchcorpora.codesearch.dev --subresource=status -n "$OTHER"
# Not used by the controller: held so that it may grant the connector's Role the same (a webhook's
# discovery request), which RBAC refuses to whoever does not hold it.
check "may patch corpora" can patch codesearchcorpora.codesearch.dev -n "$OTHER"
for r in deployments.apps poddisruptionbudgets.policy cronjobs.batch configmaps services serviceaccounts persistentvolumeclaims \
  roles.rbac.authorization.k8s.io rolebindings.rbac.authorization.k8s.io networkpolicies.networking.k8s.io; do
  check "may patch (server-side apply) $r" can patch "$r" -n "$OTHER"
done
check "may create Jobs (reindex)" can create jobs.batch -n "$OTHER"
check "may delete Jobs (one that indexed a shard layout)" can delete jobs.batch -n "$OTHER"
check "may delete NetworkPolicies (spec.networkPolicy.enabled false)" can delete networkpolicies.networking.k8s.io -n "$OTHER"
for r in deployments.apps services poddisruptionbudgets.policy; do
  check "may delete $r (a shard layout that no longer serves)" can delete "$r" -n "$OTHER"
done
check "may create Events" can create events -n "$OTHER"
check "may check that a Secret exists" can get secrets -n "$OTHER"
check "may take the Lease in its own namespace" can update leases.coordination.k8s.io -n "$NS"

# What it never needs.
check "may not replace a corpus (update)" cannot update codesearchcorpora.codesearch.dev -n "$OTHER"
check "may not delete corpora" cannot delete codesearchcorpora.codesearch.dev -n "$OTHER"
check "may not delete CronJobs (the garbage collector does)" cannot delete cronjobs.batch -n "$OTHER"
check "may not delete PVCs" cannot delete persistentvolumeclaims -n "$OTHER"
check "may not list Secrets" cannot list secrets -n "$OTHER"
check "may not watch Secrets" cannot watch secrets -n "$OTHER"
check "may not touch Leases outside its namespace" cannot update leases.coordination.k8s.io -n "$OTHER"
check "may not exec into pods" cannot create pods/exec -n "$OTHER"
check "may not create pods directly" cannot create pods -n "$OTHER"
check "may not escalate through ClusterRoles" cannot create clusterroles.rbac.authorization.k8s.io
check "may not bind ClusterRoles" cannot create clusterrolebindings.rbac.authorization.k8s.io
check "may not edit the CRD" cannot update customresourcedefinitions.apiextensions.k8s.io
check "may not delete namespaces" cannot delete namespaces

# The shipped artefacts are valid objects for this API server (server-side dry run: validated and
# admitted, nothing stored). The namespace is rewritten to the test's, and the CRD is already installed.
check "manifests/ passes a server-side dry run" bash -c \
  "kubectl kustomize '$ZK_ROOT/manifests' | sed 's/namespace: zoekt-operator\$/namespace: $NS/' |
   kubectl apply --dry-run=server -f - >/dev/null"
check "the Helm chart's objects pass a server-side dry run" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --namespace $NS | kubectl -n $NS apply --dry-run=server -f - >/dev/null"
finish
