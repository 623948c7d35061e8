#!/usr/bin/env bash
# Real Zoekt for the tests and the benchmark: upstream zoekt-git-index and zoekt-webserver at the
# commit scripts/versions.sh pins, built by scripts/upstream.sh (the same binaries the Zoekt image holds).
#
#   tests/support/zoekt.sh bin              prints the folder holding zoekt-git-index and zoekt-webserver
#                                           for this machine, building them first when needed; exits 3
#                                           with the reason on stderr when they cannot be had
#   tests/support/zoekt.sh repo DIR NAME    makes DIR (already holding files) a git repository with one
#                                           commit on main, named NAME for zoekt-git-index (zoekt.name)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

case ${1:-} in
bin)
  exec "$root/scripts/upstream.sh" zoekt "$(dpkg --print-architecture 2>/dev/null || uname -m)" ;;
repo)
  [ $# -eq 3 ] || { echo "usage: zoekt.sh repo DIR NAME" >&2; exit 2; }
  git -C "$2" init -q -b main
  git -C "$2" config zoekt.name "$3"
  git -C "$2" add -A
  git -C "$2" -c user.name=zoekt-operator-tests -c user.email=tests@zoekt-operator.invalid \
    commit -q -m "test corpus" ;;
*)
  echo "usage: zoekt.sh bin | repo DIR NAME" >&2
  exit 2 ;;
esac
