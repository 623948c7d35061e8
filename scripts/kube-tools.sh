#!/usr/bin/env bash
# Provides, in $ZK_CACHE/bin, the cluster's programs at the versions pinned in scripts/versions.sh, all
# built from their Go modules by scripts/upstream.sh: the control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler), the node (kubelet, kube-proxy, containerd with its runc
# shim and ctr, runc, and the CNI plugins in $ZK_CACHE/bin/cni), kubectl of the same Kubernetes build,
# and helm.
#
# $ZK_CACHE/bin holds links into the versioned folders of $ZK_CACHE/upstream, so KUBE_VERSION=1.33
# (any pinned minor) re-points them at that minor's build; a running cluster keeps the executables it
# started with, and scripts/cluster.sh restarts a server whose link changed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
bin=$cache/bin
mkdir -p "$bin"

"$here/upstream.sh" build etcd containerd runc cni helm kube

link() { # link FOLDER NAME...: $bin/NAME -> FOLDER/NAME, replaced atomically
  local dir=$1 n; shift
  for n in "$@"; do
    [ "$(readlink "$bin/$n" 2>/dev/null)" = "$dir/$n" ] && continue
    ln -sfn "$dir/$n" "$bin/.$n.new" && mv -Tf "$bin/.$n.new" "$bin/$n"
  done
}
link "$("$here/upstream.sh" bin kube)" kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
link "$("$here/upstream.sh" bin etcd)" etcd
link "$("$here/upstream.sh" bin containerd)" containerd containerd-shim-runc-v2 ctr
link "$("$here/upstream.sh" bin runc)" runc
link "$("$here/upstream.sh" bin helm)" helm
cni=$("$here/upstream.sh" bin cni)
[ "$(readlink "$bin/cni" 2>/dev/null)" = "$cni" ] || { ln -sfn "$cni" "$bin/.cni.new" && mv -Tf "$bin/.cni.new" "$bin/cni"; }
# What the Debian-built 1.20 plane of earlier versions left here.
rm -f "$bin/kubectl-1.20" "$bin/.kube-build-node-1"
