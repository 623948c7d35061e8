#!/usr/bin/env bash
# Installs every build and test dependency of zoekt-operator on Debian 12, as root.
# Idempotent and quiet when everything is present: `make test` and `make demo` call it first.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}

apt_pkgs=(build-essential pkg-config git openssl curl ca-certificates
          libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libcmocka-dev libmicrohttpd-dev zlib1g-dev
          nginx etcd-server unzip procps iproute2 python3 python3-yaml util-linux wget busybox
          fcgiwrap xz-utils
          # the local node (scripts/node.sh) and the images it runs (scripts/images.sh)
          containerd runc containernetworking-plugins iptables conntrack dnsmasq-base
          buildah mmdebstrap arch-test qemu-user-static binfmt-support uidmap)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian enables etcd, nginx and containerd as services; scripts/cluster.sh starts its own.
  systemctl disable --now etcd nginx containerd >/dev/null 2>&1 || true
fi

# The MCP client used by the integration tests (real SDK from npm), pinned in tests/mcp/package.json.
if [ ! -d "$here/tests/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "deps: npm install in tests/mcp" >&2
  (cd "$here/tests/mcp" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

# kubectl, helm, kube-apiserver and kube-controller-manager, cached outside the clone.
"$here/scripts/kube-tools.sh" >&2
