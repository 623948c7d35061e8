#!/usr/bin/env bash
# Cross-compiles both programs for linux/arm64 (the architecture the search Deployment targets by
# default) and runs them under qemu-user, checking that the arm64 build behaves like the native one:
# `zoekt-operator render` must print byte-identical objects, and both programs must answer --help.
# Installs the cross toolchain and the arm64 -dev packages from Debian when they are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

pkgs=(gcc-aarch64-linux-gnu qemu-user libc6-dev-arm64-cross libcurl4-openssl-dev:arm64 libcjson-dev:arm64
      libyaml-dev:arm64 libssl-dev:arm64 libmicrohttpd-dev:arm64 zlib1g-dev:arm64)
missing=()
dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64; apt-get update -qq; }
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "arm64: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

make --no-print-directory all
# pkg-config reads its settings from the environment (make variables given on the command line are
# not exported to the $(shell pkg-config ...) calls), so that it finds the arm64 libraries.
PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig \
  make --no-print-directory CC=aarch64-linux-gnu-gcc BUILD_DIR=build/arm64 BIN_DIR=build/arm64/out all

run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"; }
file build/arm64/out/zoekt-operator | grep -q 'ARM aarch64' || { echo "arm64: not an aarch64 binary" >&2; exit 1; }
run build/arm64/out/zoekt-connector --help >/dev/null
run build/arm64/out/zoekt-operator --help >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in examples/corpus-*.yaml; do
  bin/zoekt-operator render -f "$f" >"$tmp/amd64.yaml"
  run build/arm64/out/zoekt-operator render -f "$f" >"$tmp/arm64.yaml"
  if ! cmp -s "$tmp/amd64.yaml" "$tmp/arm64.yaml"; then
    echo "arm64: render of $f differs between amd64 and arm64" >&2; exit 1
  fi
done
echo "arm64: both programs built for aarch64; --help and render of examples/ match the native build"
