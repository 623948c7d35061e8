# The upstream programs the project builds from their Go modules, each at one pinned version. Sourced by
# scripts/upstream.sh, scripts/images.sh and the Makefile's helpers; nothing else names a version.
#
# KUBE_VERSION may be given as a minor ("1.33") to pick the pinned patch of that minor below, or as a
# full version ("1.37.2"). The supported range is the range of this table.

kube_pinned_patches="1.33.13 1.34.4 1.35.4 1.36.3 1.37.2"
kube_default=1.37.2

etcd_version=3.6.16
containerd_version=2.4.2
runc_version=1.4.4
cni_plugins_version=1.9.1
helm_version=3.22.0
# Checks .github/workflows/ in `make test` (tests/integration/test_release_workflow.sh).
actionlint_version=1.7.12
# Prometheus and promtool (the Go module's v0.X.Y is Prometheus 3.X.Y): they scrape the operator and
# test its alerts in `make test` (tests/integration/test_monitoring.sh).
prometheus_version=0.316.0
# kube-router's NetworkPolicy controller (iptables and ipsets) enforces the corpora's NetworkPolicies on
# the local node in tests/integration/test_node_netpol.sh. kube-network-policies, the reference
# implementation, needs the kernel's nft_queue, which this workplace's kernel lacks (CONFIG_NFT_QUEUE
# is not set); kube-router needs only xt_set and ipsets. v2.1.0 is the one version the module proxy
# here serves; it runs only on the test node, on this machine's own traffic.
kube_router_version=2.1.0
# The Prometheus Operator (its Go module's v0.88.0, the newest the module proxy here serves): it turns
# the chart's ServiceMonitor, PodMonitor and PrometheusRule into a Prometheus configuration in
# tests/integration/test_prometheus_operator.sh, which a real Prometheus then runs.
prometheus_operator_version=0.88.0
# Gitea, the code host the repository-discovery tests and benchmarks list organisations from and get
# webhooks from (scripts/gitea.sh runs it on this machine); Forgejo serves the same API.
gitea_version=1.27.3
# Zoekt has no release tags: a commit of github.com/sourcegraph/zoekt, resolved by the go command.
zoekt_commit=c4d8f3537f7a

# kube_version: the full version KUBE_VERSION names (default: the newest pinned).
kube_version() {
  local want=${KUBE_VERSION:-$kube_default} v
  want=${want#v}
  for v in $kube_pinned_patches; do
    [ "$v" = "$want" ] && { echo "$v"; return 0; }
    [ "${v%.*}" = "$want" ] && { echo "$v"; return 0; }
  done
  echo "versions: KUBE_VERSION=$want is not one of the pinned versions ($kube_pinned_patches)" >&2
  return 1
}
