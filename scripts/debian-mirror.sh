#!/usr/bin/env bash
# Prints the Debian archive URI this machine's own apt sources use (deb822 `.sources` files first, then
# one-line `.list` files), so that nothing in the project names a mirror host: whatever mirror the
# machine is set up with is the one the project's source packages and image roots come from.
#
#   scripts/debian-mirror.sh        e.g. http://mirror.example/debian
set -euo pipefail

uri=
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  # The first stanza whose suite is bookworm (not -security, not -updates) and whose URI ends in /debian.
  uri=$(awk '
    /^[[:space:]]*$/ { if (u != "" && s ~ /(^| )bookworm( |$)/) { print u; exit } u = ""; s = "" }
    /^URIs:/ { u = $2 }
    /^Suites:/ { $1 = ""; s = $0 " " }
    END { if (u != "" && s ~ /(^| )bookworm( |$)/) print u }' "$f" | head -n1)
  [ -n "$uri" ] && break
done
if [ -z "$uri" ]; then
  # One-line sources (debootstrap writes /etc/apt/sources.list); files that do not exist are skipped.
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -E '^deb[[:space:]]' |
        sed -E 's/\[[^]]*\][[:space:]]*//' | awk '$3 == "bookworm" { print $2; exit }' || true)
fi
[ -n "$uri" ] || { echo "debian-mirror: no bookworm entry in /etc/apt/sources*" >&2; exit 1; }
echo "${uri%/}"
