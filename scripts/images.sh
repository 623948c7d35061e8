#!/usr/bin/env bash
# Builds the project's container images with buildah, for amd64 and arm64, on a machine that cannot
# pull from any image registry:
#
#   scripts/images.sh build [ARCH...]   build what is missing (default: amd64 arm64); prints nothing new
#                                       when every image is cached, and one line instead of the Zoekt
#                                       image when there is no Zoekt here (scripts/upstream.sh)
#   scripts/images.sh archive NAME ARCH print the OCI archive of image NAME (operator, connector,
#                                       gateway, zoekt, or pause: the local node's sandbox image, for
#                                       this machine's architecture only) for ARCH, building it first
#                                       if needed
#   scripts/images.sh ref NAME          print the image reference NAME is tagged with
#   scripts/images.sh verify NAME ARCH  build NAME for ARCH once more without any cached layer (the
#                                       Debian base excepted) and compare its digest with the cached
#                                       archive's: the images are reproducible
#   scripts/images.sh run NAME ARCH [-v HOST:PATH]... -- CMD...
#                                       run CMD in a container of the image (as the image's user,
#                                       on this machine's network; arm64 under emulation), for tests
#
# The base is a Debian 12 minbase root made with mmdebstrap from the mirror in this machine's own apt
# sources (scripts/debian-mirror.sh), imported as localhost/zoekt-base:bookworm-ARCH and handed to the
# Dockerfiles as their BASE; arm64 builds run under qemu-user-static through binfmt_misc. The Zoekt
# image takes zoekt-webserver and zoekt-git-index built by scripts/upstream.sh from Zoekt's Go module at
# the commit scripts/versions.sh pins (Dockerfile.zoekt's `prebuilt` stage): the same binaries the tests
# run, cross-compiled once instead of compiled again under emulation, or unpacked from the archives
# handed in (ZK_ZOEKT_DIR: see scripts/upstream.sh).
#
# Every image is written to $ZK_CACHE/images/NAME-ARCH-KEY.tar (an OCI archive), where KEY hashes
# everything the image is built from (its Dockerfile, the sources it copies, the base recipe and the
# recipe version below), so an image is rebuilt exactly when one of those changes. buildah's own storage (vfs) lives
# in $ZK_CACHE/buildah and keeps intermediate layers (--layers), so a source change recompiles without
# reinstalling the build stage's packages. vfs copies the whole root file system for every layer, so
# each rebuild of the C images leaves gigabytes of layers nothing uses any more; after writing an
# archive the script prunes every image that is neither tagged nor the parent of one. The compiler
# stage is tagged (localhost/zoekt-toolchain) so that the prune keeps it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
out=$cache/images
# The release version, defined once in the Makefile; the operator's default images carry it as tag.
version=$(sed -n 's/^VERSION *:= *//p' "$root/Makefile")
# Bump when this script changes how an image is built, so that cached images from the old recipe go.
# r2: reproducible images (every timestamp from git, no logs or caches that record the build's time).
recipe=r2
bh=(buildah --root "$cache/buildah/storage" --runroot "$cache/buildah/run" --storage-driver vfs)
export BUILDAH_ISOLATION=chroot

log() { echo "images: $*" >&2; }

ref() {
  case $1 in
  operator)  echo "ghcr.io/zoekt-operator/zoekt-operator:$version" ;;
  connector) echo "ghcr.io/zoekt-operator/zoekt-connector:$version" ;;
  gateway)   echo "ghcr.io/zoekt-operator/zoekt-gateway:$version" ;;
  zoekt)     echo "ghcr.io/zoekt-operator/zoekt:$version" ;;
  pause)     echo "localhost/zoekt-node/pause:1" ;;
  *) log "unknown image $1"; exit 2 ;;
  esac
}

hash_files() { # hash_files PATH...: one hash over the names and contents of every file under PATHs
  (cd "$root" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

# inputs NAME: the paths of this repository an image is built from (hash_files hashes them for the key).
inputs() {
  case $1 in
  operator|connector) echo images/Dockerfile Makefile lib controller connector ;;
  gateway)            echo images/Dockerfile ;;
  pause)              echo images/pause ;;
  zoekt)              echo images/Dockerfile.zoekt scripts/versions.sh ;;
  esac
}

# epoch NAME: the one time an image records (its created date, its history, every file's mtime), so
# that the same inputs give the same image digest: the commit time of the newest commit that changed
# the image's recipe (its Dockerfile; for the base, this script), not its sources. A layer cache
# ignores the timestamp (buildah reuses a layer built with another), so the timestamp may change only
# where the cache is invalidated as well: the Dockerfiles take it as the build argument
# SOURCE_DATE_EPOCH, which keys their layers, and it changes only with them, so a source change
# rebuilds only the layers it touches. Outside a git checkout (a source archive), SOURCE_DATE_EPOCH,
# else 0. A shallow clone would see its one commit change everything: CI fetches the whole history.
epoch() {
  local t paths
  case $1 in
  operator|connector|gateway) paths=images/Dockerfile ;;
  zoekt) paths=images/Dockerfile.zoekt ;;
  pause) paths=images/pause ;;
  base)  paths="scripts/images.sh scripts/debian-mirror.sh" ;;
  esac
  # shellcheck disable=SC2086 # paths without spaces
  t=$(git -C "$root" log -1 --format=%ct -- $paths 2>/dev/null || true)
  echo "${t:-${SOURCE_DATE_EPOCH:-0}}"
}

zoekt_bins() { "$root/scripts/upstream.sh" zoekt "$1"; }

base_key() { echo "bookworm-minbase-$("$root/scripts/debian-mirror.sh" | sha256sum | cut -c1-8)"; }

key() { # key NAME ARCH
  local self=$recipe-t$(epoch "$1")
  # shellcheck disable=SC2046
  case $1 in
  operator|connector|gateway) echo "$(hash_files $(inputs "$1"))-$self-$(base_key)" ;;
  pause)              echo "$(hash_files $(inputs "$1"))-$self" ;;
  zoekt) # without the binaries there is no key: upstream.sh has said why, once
    local bins
    bins=$(zoekt_bins "$2") || return 1
    echo "$(hash_files images/Dockerfile.zoekt)-$(cat "$bins"/zoekt-* | sha256sum | cut -c1-16)-$self-$(base_key)" ;;
  esac
}

# ensure_binfmt ARCH: arm64 on an amd64 machine runs through qemu-user-static's binfmt_misc entry.
# A machine where binfmt-support runs has it already and nothing changes. Otherwise each change made
# here (the file system mounted, the entry registered, the entry switched on) is added as one word to
# binfmt_record, which `scripts/cluster.sh down` reads to undo exactly those. The record's first line
# is the kernel's boot id: binfmt_misc does not outlive a reboot, and a record from before one (/run
# is not always emptied at boot) describes nothing that is still there.
binfmt_record=/run/zoekt-operator-binfmt.changed
ensure_binfmt() {
  local entry=/proc/sys/fs/binfmt_misc/qemu-aarch64 boot
  [ "$1" = "$(dpkg --print-architecture)" ] && return 0
  boot=$(cat /proc/sys/kernel/random/boot_id)
  [ "$(head -n 1 "$binfmt_record" 2>/dev/null)" = "$boot" ] || echo "$boot" >"$binfmt_record"
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    echo mounted >>"$binfmt_record"
  fi
  if [ ! -e "$entry" ]; then
    update-binfmts --enable qemu-aarch64
    echo registered >>"$binfmt_record"
  elif ! grep -q '^enabled' "$entry"; then
    echo 1 >"$entry"
    echo enabled >>"$binfmt_record"
  fi
}

ensure_base() { # ensure_base ARCH: localhost/zoekt-base:bookworm-ARCH in buildah's storage
  local arch=$1 name=localhost/zoekt-base:bookworm-$1 stamp tar ctr mirror
  stamp=$cache/buildah/base-$arch.$(base_key)
  if [ -f "$stamp" ] && "${bh[@]}" inspect --type image "$name" >/dev/null 2>&1; then return 0; fi
  mirror=$("$root/scripts/debian-mirror.sh")
  log "making the Debian 12 base for $arch from $mirror (mmdebstrap; minutes under emulation)"
  tar=$(mktemp -d)/base.tar
  SOURCE_DATE_EPOCH=$(epoch base) mmdebstrap --quiet --variant=minbase --arch="$arch" --include=ca-certificates bookworm "$tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main"
  ctr=$("${bh[@]}" from --arch "$arch" scratch)
  "${bh[@]}" add "$ctr" "$tar" / >/dev/null
  "${bh[@]}" config --arch "$arch" --os linux "$ctr"
  "${bh[@]}" commit --quiet --rm --timestamp "$(epoch base)" "$ctr" "$name" >/dev/null
  rm -rf "$(dirname "$tar")"
  rm -f "$cache"/buildah/base-"$arch".*
  touch "$stamp"
}

build_one() { # build_one NAME ARCH: writes the archive unless it is cached; prints its path
  local name=$1 arch=$2 k file tag ctx
  k=$(key "$name" "$arch") || return 1
  file=$out/$name-$arch-$k.tar
  if [ -f "$file" ]; then echo "$file"; return 0; fi
  ensure_binfmt "$arch"
  [ "$name" = pause ] || ensure_base "$arch"
  tag=$(ref "$name")
  log "building $tag for $arch"
  local t
  t=$(epoch "$name")
  local bud=(bud --quiet --pull-never --layers "${no_cache[@]}" --arch "$arch" --os linux
             --timestamp "$t" --build-arg "SOURCE_DATE_EPOCH=$t"
             --build-arg "BASE=localhost/zoekt-base:bookworm-$arch")
  local args=("${bud[@]}" -t "$tag-$arch")
  case $name in
  pause)
    # One static binary in an empty image: nothing to install, so no Dockerfile and no base.
    [ "$arch" = "$(dpkg --print-architecture)" ] || { log "pause is built for $(dpkg --print-architecture) only"; exit 2; }
    ctx=$(mktemp -d)
    cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -static -o "$ctx/pause" "$root/images/pause/pause.c"
    local c
    c=$("${bh[@]}" from scratch)
    "${bh[@]}" copy "$c" "$ctx/pause" /pause >/dev/null
    "${bh[@]}" config --entrypoint '["/pause"]' --user 65535:65535 --arch "$arch" --os linux "$c"
    "${bh[@]}" commit --quiet --rm --timestamp "$(epoch pause)" "$c" "$tag-$arch" >/dev/null
    rm -rf "$ctx" ;;
  zoekt)
    ctx=$(mktemp -d)
    mkdir "$ctx/out"
    local bins
    bins=$(zoekt_bins "$arch")
    cp "$bins/zoekt-webserver" "$bins/zoekt-git-index" "$ctx/out/"
    "${bh[@]}" "${args[@]}" --build-arg ZOEKT_BINARIES=prebuilt -f "$root/images/Dockerfile.zoekt" "$ctx" >&2
    rm -rf "$ctx" ;;
  operator|connector)
    "${bh[@]}" "${bud[@]}" -t "localhost/zoekt-toolchain:bookworm-$arch" --target toolchain \
      -f "$root/images/Dockerfile" "$root" >/dev/null
    "${bh[@]}" "${args[@]}" --target "$name" -f "$root/images/Dockerfile" "$root" >&2 ;;
  gateway)
    "${bh[@]}" "${args[@]}" --target "$name" -f "$root/images/Dockerfile" "$root" >&2 ;;
  esac
  mkdir -p "$out"
  # Older archives of this image from this recipe are stale; another recipe's belong to another
  # checkout (a branch not yet on this recipe) that would otherwise rebuild them at once.
  rm -f "$out/$name-$arch-"*"-$recipe-"*.tar
  "${bh[@]}" push --quiet "$tag-$arch" "oci-archive:$file.tmp:$tag" >&2
  mv "$file.tmp" "$file"
  prune
  echo "$file"
}

prune() { # removes every image that is neither tagged nor a parent of one; removing an image can leave
           # its own parent in that state, so passes repeat until one removes nothing
  while [ -n "$("${bh[@]}" rmi --prune 2>/dev/null)" ]; do :; done
}

no_cache=()
case ${1:-} in
build)
  shift
  arches=("$@")
  [ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64)
  for a in "${arches[@]}"; do
    for n in operator connector gateway; do build_one "$n" "$a" >/dev/null; done
    # Without Zoekt (none handed in, none buildable here) there is no Zoekt image: the suites that
    # need it skip themselves and say why, so the build goes on without it.
    rc=0
    zoekt_bins "$a" >/dev/null 2>"$cache/images-zoekt.err" || rc=$?
    case $rc in
    0) build_one zoekt "$a" >/dev/null ;;
    3) log "no Zoekt image for $a: $(tail -n 1 "$cache/images-zoekt.err" | sed 's/^upstream: //')" ;;
    *) cat "$cache/images-zoekt.err" >&2; exit "$rc" ;;
    esac
  done ;;
archive) build_one "${2:?image name}" "${3:?architecture}" ;;
ref) ref "${2:?image name}" ;;
verify)
  name=${2:?image name} arch=${3:?architecture}
  cached=$(build_one "$name" "$arch")
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  no_cache=(--no-cache)
  again=$(build_one "$name" "$arch")
  digest() { tar -xOf "$1" index.json | sed 's/.*"digest":"\([^"]*\)".*/\1/'; }
  log "cached: $(digest "$cached") $(basename "$cached")"
  log "again:  $(digest "$again")"
  [ "$(digest "$cached")" = "$(digest "$again")" ] ;;
run)
  name=${2:?image name} arch=${3:?architecture}
  shift 3
  mounts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do mounts+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  build_one "$name" "$arch" >/dev/null
  # A cached image is not built again, but running it under emulation still needs the entry.
  ensure_binfmt "$arch"
  ctr=$("${bh[@]}" from --pull-never --quiet "$(ref "$name")-$arch" 2>/dev/null)
  # The working container is a full copy of the image under vfs: remove it however the command ends.
  trap '"${bh[@]}" rm "$ctr" >/dev/null' EXIT
  "${bh[@]}" run --isolation chroot "${mounts[@]}" "$ctr" -- "$@" ;;
*) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
