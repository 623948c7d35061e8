#!/usr/bin/env bash
# Rewrites tests/mcp_python/requirements.txt: the official Python MCP SDK at the version given (default:
# the one pinned now) with its whole dependency closure, each wheel pinned by sha256 for both
# architectures the project builds for (amd64 and arm64), for Debian 12's CPython 3.11. pip resolves
# the closure itself (--dry-run --report), from whatever index its own settings name.
#
#   tests/mcp_python/lock.sh [VERSION]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements.txt
version=${1:-$(sed -n 's/^mcp==\([^ ]*\).*/\1/p' "$req")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 -m venv "$tmp/venv"
pip=("$tmp/venv/bin/pip" install -q --dry-run --ignore-installed --only-binary=:all:)
"${pip[@]}" --report "$tmp/amd64.json" --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --python-version 3.11 --implementation cp --abi cp311 --target "$tmp/t" "mcp==$version"
"${pip[@]}" --report "$tmp/arm64.json" --platform manylinux_2_34_aarch64 --platform manylinux_2_28_aarch64 \
  --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
  --python-version 3.11 --implementation cp --abi cp311 --target "$tmp/t" "mcp==$version"

/usr/bin/python3 - "$tmp/amd64.json" "$tmp/arm64.json" "$version" >"$req.new" <<'PY'
import json, sys

pins = {}  # name -> (version, set of sha256)
for report in sys.argv[1:3]:
    for item in json.load(open(report))["install"]:
        name, version = item["metadata"]["name"].lower(), item["metadata"]["version"]
        digest = item["download_info"]["archive_info"]["hashes"]["sha256"]
        prior = pins.setdefault(name, (version, set()))
        if prior[0] != version:
            sys.exit(f"{name} resolves to {prior[0]} on one architecture and {version} on the other")
        prior[1].add(digest)
print(f"# The official Python MCP SDK, mcp {sys.argv[3]}, and its dependency closure for CPython 3.11")
print("# (Debian 12) on amd64 and arm64, every wheel pinned by sha256. Written by tests/mcp_python/lock.sh;")
print("# installed with --require-hashes by tests/mcp_python/venv.sh. Do not edit by hand.")
for name in sorted(pins, key=lambda n: (n != "mcp", n)):
    version, digests = pins[name]
    print(f"{name}=={version} " + " ".join(f"\\\n    --hash=sha256:{d}" for d in sorted(digests)))
PY
mv "$req.new" "$req"
echo "lock: $req pins mcp $version and $(grep -c '^[a-z]' "$req") packages in all" >&2
