#!/usr/bin/env bash
# Real Zoekt for the tests and the benchmark: upstream zoekt-git-index and zoekt-webserver at the
# commit scripts/versions.sh pins, from scripts/upstream.sh (the same binaries the Zoekt image holds).
#
#   tests/support/zoekt.sh bin                   prints the folder holding zoekt-git-index and
#                                                zoekt-webserver for this machine, unpacking or building
#                                                them first; exits 3 with the reason on stderr when
#                                                there is no Zoekt here (the suite then skips itself)
#   tests/support/zoekt.sh repo ROOT NAME        makes ROOT/NAME (already holding files) a git
#                                                repository with one commit on main
#   tests/support/zoekt.sh index INDEX ROOT NAME [FLAG...]
#                                                indexes the repository ROOT/NAME into the folder INDEX
#                                                as repository NAME, as controller/assets/indexer.sh
#                                                names a mirror: zoekt-git-index takes the name from the
#                                                path below -repo_cache ROOT
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { echo "usage: zoekt.sh bin | repo ROOT NAME | index INDEX ROOT NAME [FLAG...]" >&2; exit 2; }

case ${1:-} in
bin)
  exec "$root/scripts/upstream.sh" zoekt "$(dpkg --print-architecture 2>/dev/null || uname -m)" ;;
repo)
  [ $# -eq 3 ] || usage
  dir=$2/$3
  git -C "$dir" init -q -b main
  git -C "$dir" add -A
  git -C "$dir" -c user.name=zoekt-operator-tests -c user.email=tests@zoekt-operator.invalid \
    commit -q -m "test corpus" ;;
index)
  [ $# -ge 4 ] || usage
  index=$2 cache=$3 name=$4
  shift 4
  bin=$("$0" bin)
  "$bin/zoekt-git-index" -index "$index" -repo_cache "$cache" "$@" "$cache/$name" ;;
*) usage ;;
esac
