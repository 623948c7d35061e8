#!/usr/bin/env bash
# Real Zoekt for the tests and the benchmark: upstream zoekt-git-index and zoekt-webserver, from the
# archives in ../shared/zoekt (see its README), unpacked once into a cache keyed by the archive's name.
#
#   tests/support/zoekt.sh bin              prints the folder holding zoekt-git-index and zoekt-webserver,
#                                           unpacking the archive for this machine first when needed;
#                                           exits 3 with the reason on stderr when there is no archive
#   tests/support/zoekt.sh repo DIR NAME    makes DIR (already holding files) a git repository with one
#                                           commit on main, named NAME for zoekt-git-index (zoekt.name)
#
# ZK_SHARED (default: the checkout's ../shared) and ZK_CACHE (default /var/cache/zoekt-operator) move
# the two folders.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${ZK_SHARED:-$root/../shared}
cache=${ZK_CACHE:-/var/cache/zoekt-operator}/zoekt

case ${1:-} in
bin)
  arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
  archive=$(ls "$shared"/zoekt/zoekt-*-linux-"$arch".tar.xz 2>/dev/null | head -n 1 || true)
  if [ -z "$archive" ]; then
    echo "no Zoekt archive for linux-$arch in $shared/zoekt" >&2
    exit 3
  fi
  dir=$cache/$(basename "$archive" .tar.xz)
  if [ ! -x "$dir/zoekt-webserver" ] || [ ! -x "$dir/zoekt-git-index" ]; then
    # Unpacked beside its final place and renamed, so that a concurrent run never sees half a folder.
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
    tar -C "$tmp" -xJf "$archive"
    chmod 755 "$tmp"
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  echo "$dir" ;;
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
