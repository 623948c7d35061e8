#!/usr/bin/env bash
# The virtualenv holding the official Python MCP SDK pinned in tests/mcp_python/requirements.txt, cached
# under the project's cache and keyed by the SDK version and the lock file's digest, so a new pin gets a
# new folder and an unchanged one is never touched again.
#
#   tests/mcp_python/venv.sh path   prints the folder (made or not)
#   tests/mcp_python/venv.sh make   makes it when missing (scripts/deps.sh does this) and prints it;
#                                   exits 3 with the reason on stderr when it cannot be made here
#
# Debian's own /usr/bin/python3 (3.11 on Debian 12, venv from python3-venv) rather than whatever python3
# comes first on PATH, so every machine builds the same environment the lock file was written for.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req=$here/requirements.txt
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
python=/usr/bin/python3
version=$(sed -n 's/^mcp==\([^ ]*\).*/\1/p' "$req")
digest=$(sha256sum "$req" | cut -c1-12)
dir=$cache/python/mcp-$version-$digest

case ${1:-} in
path) echo "$dir"; exit 0 ;;
make) ;;
*) echo "usage: venv.sh path | make" >&2; exit 2 ;;
esac

# The last step writes .complete: a folder without it is a half-made one, removed and made again.
[ -f "$dir/.complete" ] && { echo "$dir"; exit 0; }
[ -x "$python" ] || { echo "no $python (Debian's python3)" >&2; exit 3; }
"$python" -c 'import ensurepip, venv' 2>/dev/null || { echo "$python has no venv module (package python3-venv)" >&2; exit 3; }

mkdir -p "$cache/python"
exec 9>"$cache/python/.lock"
flock 9 # another run making the same folder finishes first
[ -f "$dir/.complete" ] && { echo "$dir"; exit 0; }
rm -rf "$dir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "venv: installing mcp $version into $dir" >&2
if ! { "$python" -m venv "$dir" &&
       "$dir/bin/python" -m pip install --quiet --require-hashes --only-binary=:all: --no-deps -r "$req" &&
       "$dir/bin/python" -m pip check &&
       "$dir/bin/python" -c 'import mcp.client.stdio, mcp.client.streamable_http'; } >"$log" 2>&1; then
  rm -rf "$dir"
  echo "cannot install mcp $version into a virtualenv: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
  exit 3
fi
touch "$dir/.complete"
echo "$dir"
