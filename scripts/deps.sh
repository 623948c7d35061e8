#!/usr/bin/env bash
# Installs every build and test dependency of zoekt-operator on Debian 12, as root.
# Idempotent and quiet when everything is present: `make test` and `make demo` call it first.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}

apt_pkgs=(build-essential pkg-config git openssl curl ca-certificates
          libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libcmocka-dev libmicrohttpd-dev zlib1g-dev
          nginx unzip procps iproute2 python3 python3-yaml python3-venv util-linux wget busybox
          fcgiwrap xz-utils jq
          # the indexer script's symbols outside the Zoekt image (test_real_zoekt, the benchmark)
          universal-ctags
          # runc's seccomp support (scripts/upstream.sh builds runc with cgo)
          libseccomp-dev
          # the local node (scripts/node.sh) and the images it runs (scripts/images.sh)
          iptables conntrack dnsmasq-base
          # kube-router's NetworkPolicy enforcement on the test node (test_node_netpol.sh)
          ipset
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
  # Debian starts nginx as a service when it installs it; the project runs nginx processes of its own.
  # A host that already had nginx keeps its service as it was.
  had_nginx=$(dpkg-query -W -f='${Status}' nginx 2>/dev/null | grep -c "install ok installed" || true)
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ "$had_nginx" != 0 ] || systemctl disable --now nginx >/dev/null 2>&1 || true
fi

# Go, for the upstream programs built from their modules (scripts/upstream.sh). A machine whose Go is
# missing or older than 1.21 (which cannot fetch toolchains) gets Debian's golang-go, which then
# downloads the toolchain module golang.org/toolchain from the module proxy it is set up with, the way
# the go command itself does; it lands in $cache/go and is linked as $cache/go/bin/go.
go_toolchain=go1.26.8
go_ok() { # go_ok GO: exit 0 when GO runs and is 1.21 or newer
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  [ "${v%%.*}" -gt 1 ] || [ "$(echo "$v" | cut -d. -f2)" -ge 21 ]
}
if ! { go_ok go || go_ok /usr/local/go/bin/go || go_ok "$cache/go/bin/go"; }; then
  echo "deps: installing Go $go_toolchain from the module proxy" >&2
  command -v go >/dev/null 2>&1 || { apt-get update -qq; apt-get install -y -qq --no-install-recommends golang-go >/dev/null; }
  mod=golang.org/toolchain@v0.0.1-$go_toolchain.linux-$(dpkg --print-architecture)
  dir=$(GOMODCACHE=$cache/go/mod GOFLAGS=-mod=mod go mod download -json "$mod" | sed -n 's/.*"Dir": *"\([^"]*\)".*/\1/p')
  [ -f "$dir/bin/go" ] || { echo "deps: could not fetch $mod" >&2; exit 1; }
  # Module archives keep no file modes; the go command marks a toolchain's programs executable the
  # same way when it switches toolchains.
  chmod a+x "$dir"/bin/* "$dir"/pkg/tool/*/*
  mkdir -p "$cache/go/bin"
  ln -sfn "$dir/bin/go" "$cache/go/bin/go"
fi

# The MCP client used by the integration tests (real SDK from npm), pinned in tests/mcp/package.json.
if [ ! -d "$here/tests/mcp/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "deps: npm install in tests/mcp" >&2
  (cd "$here/tests/mcp" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

# The official Python MCP SDK for tests/integration/test_python_sdk.sh, hash-pinned in
# tests/mcp_python/requirements.txt, in a virtualenv under $cache/python keyed by that pin; a no-op
# once made.
ZK_CACHE=$cache "$here/tests/mcp_python/venv.sh" make >/dev/null

# The cluster's programs, kubectl and helm, built from their Go modules and cached outside the clone.
"$here/scripts/kube-tools.sh" >&2
