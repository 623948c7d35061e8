#!/usr/bin/env bash
# Runs a Quick start command (`make test` by default, or `make demo`) in a clean clone inside a
# minimal Debian 12 chroot (debootstrap's minbase variant plus make), to prove that the project's own
# files install everything it needs: nothing from this machine's caches or hand-installed packages is
# visible there. Slow (the chroot builds the Kubernetes servers too): run it by hand after changing
# dependencies, not in CI.
#
#   scripts/fresh-machine.sh [MAKE_TARGET]      (as root; ZK_FRESH_DIR picks the chroot folder)
#
# The chroot shares this machine's network, so the local control plane of the work tree must be
# stopped first (`make cluster-down`): both use the same loopback ports.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-test}
dir=${ZK_FRESH_DIR:-/var/tmp/zoekt-operator-fresh}

if ss -ltn 2>/dev/null | grep -q ':6443 '; then
  echo "fresh-machine: port 6443 is in use; stop the local control plane first (make cluster-down)" >&2
  exit 1
fi
command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap >/dev/null; }
if [ ! -x "$dir/usr/bin/make" ]; then
  rm -rf "$dir"
  # The machine's own mirror (its apt sources), so that no host is written here.
  debootstrap --variant=minbase bookworm "$dir" "$("$root/scripts/debian-mirror.sh")" >/dev/null
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  # As in any Debian chroot: package scripts must not start services (nginx, etcd) here.
  printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
  chmod +x "$dir/usr/sbin/policy-rc.d"
  chroot "$dir" apt-get install -y -qq make >/dev/null
fi

mounts=(proc sys dev dev/pts)
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "$dir/${mounts[i]}" 2>/dev/null || true; done
  umount -l "$dir" 2>/dev/null || true
}
trap cleanup EXIT
# The chroot's / must be a mount point, as a machine's is: buildah remounts it private when it
# applies an image layer, which fails on a plain folder.
mount --bind "$dir" "$dir"
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --rbind /dev "$dir/dev"
mount -t devpts devpts "$dir/dev/pts" 2>/dev/null || true

# The machines of this workplace trust its egress CAs (registry traffic goes through them); a chroot
# does not inherit that, so copy them in as part of the machine, not of the project.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  mkdir -p "$dir/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
  if [ -x "$dir/usr/sbin/update-ca-certificates" ]; then chroot "$dir" update-ca-certificates >/dev/null 2>&1 || true; fi
fi

rm -rf "$dir/root/zoekt-operator" "$dir/root/shared" "$dir/root/zoekt-archives"
git clone -q "$root" "$dir/root/zoekt-operator"
# A newcomer has no ../shared. Only where this machine's module proxy refuses Zoekt does the caller's
# ZK_ZOEKT_DIR (prebuilt archives) go in, as the README says.
zoekt_env=()
if [ -n "${ZK_ZOEKT_DIR:-}" ]; then
  cp -r "$ZK_ZOEKT_DIR" "$dir/root/zoekt-archives"
  zoekt_env=(ZK_ZOEKT_DIR=/root/zoekt-archives)
fi
rc=0
chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb CI=true "${zoekt_env[@]}" bash -c "cd /root/zoekt-operator && make $target" || rc=$?
chroot "$dir" bash -c "cd /root/zoekt-operator && scripts/cluster.sh down" >/dev/null 2>&1 || true
exit $rc
