#!/usr/bin/env bash
# Where Zoekt comes from (scripts/upstream.sh zoekt, docs/cluster.md): the archives a user hands in are
# taken only when they are the pinned commit's, with a message naming both commits otherwise; without
# Zoekt, `zoekt` exits 3 saying what to provide, and a suite that needs it (need_zoekt in lib.sh) is
# skipped with that reason, under CI too, while any other skip still fails under CI. Stand-in
# binaries, a cache of the suite's own and GOPROXY=off: no Zoekt, no network, no cluster.
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
on_exit "rm -rf '$T'"
pin=$(. "$ZK_ROOT/scripts/versions.sh"; echo "$zoekt_commit")
arch=$(dpkg --print-architecture)
# The module build must fail at once and offline, as on a machine whose proxy refuses Zoekt.
export ZK_CACHE=$T/cache GOPROXY=off GOFLAGS=-mod=mod

# archive DIR COMMIT STAMP [FILES...]: DIR/zoekt-COMMIT-linux-$arch.tar.xz holding FILES (default both
# binaries), each a script that prints STAMP, the commit its build would carry.
archive() {
  local dir=$1 commit=$2 stamp=$3 f
  shift 3
  [ $# -gt 0 ] || set -- zoekt-webserver zoekt-git-index
  rm -rf "$T/stage" && mkdir -p "$T/stage" "$dir"
  for f in "$@"; do printf '#!/bin/sh\necho "%s version %s"\n' "$f" "$stamp" >"$T/stage/$f"; done
  tar -C "$T/stage" -cJf "$dir/zoekt-$commit-linux-$arch.tar.xz" "$@"
}
# zoekt_from DIR: runs upstream.sh zoekt with ZK_ZOEKT_DIR=DIR; stdout in $T/out, stderr in $T/err.
zoekt_from() { ZK_ZOEKT_DIR=$1 "$ZK_ROOT/scripts/upstream.sh" zoekt "$arch" >"$T/out" 2>"$T/err"; }

archive "$T/good" "$pin" "$pin"
zoekt_from "$T/good"
check "an archive of the pinned commit is taken" test $? -eq 0
dir=$(cat "$T/out")
check "its binaries are unpacked into the cache, runnable" \
  bash -c "[ '${dir#"$ZK_CACHE"/}' != '$dir' ] && '$dir/zoekt-webserver' | grep -q '$pin' && [ -x '$dir/zoekt-git-index' ]"
check "and the log says where they came from" grep -q "Zoekt $pin for $arch unpacked from $T/good/" "$T/err"
zoekt_from "$T/good"
check "a second call takes the unpacked copy, quietly" bash -c "[ \"\$(cat '$T/out')\" = '$dir' ] && [ ! -s '$T/err' ]"
archive "$T/good" "$pin" "$pin-rebuilt"
zoekt_from "$T/good"
check "an archive replaced under the same name is unpacked again" \
  bash -c "'$(cat "$T/out")/zoekt-webserver' | grep -q '$pin-rebuilt' && [ ! -e '$dir' ]"

archive "$T/full" "${pin}0123456789abcdef0123456789ab" "$pin"
zoekt_from "$T/full"
check "an archive named by the commit's 40 digits is taken too" test $? -eq 0

archive "$T/old" 51a31b622e7b 51a31b622e7b
zoekt_from "$T/old"
check "an archive of another commit is refused (exit 3)" test $? -eq 3
check "naming both commits and the archive to provide" \
  grep -q "holds Zoekt 51a31b622e7b for $arch, but scripts/versions.sh pins $pin: put zoekt-$pin-linux-$arch.tar.xz there" "$T/err"

archive "$T/misnamed" "$pin" 51a31b622e7b
zoekt_from "$T/misnamed"
check "binaries of another commit under the pinned name are refused (exit 3)" test $? -eq 3
check "saying which binary does not carry the pin" grep -q "its zoekt-webserver does not carry the pinned commit $pin" "$T/err"

archive "$T/half" "$pin" "$pin" zoekt-webserver
zoekt_from "$T/half"
check "an archive without zoekt-git-index is refused (exit 3), saying so" \
  bash -c "[ $? -eq 3 ] && grep -q 'does not hold zoekt-webserver and zoekt-git-index at its top' '$T/err'"

zoekt_from "$T/nothing-here"
check "no archive and no module: exit 3" test $? -eq 3
check "the last line says what to provide, and where" \
  bash -c "tail -n 1 '$T/err' | grep -q 'put zoekt-$pin-linux-$arch.tar.xz .* into /opt/zoekt-operator/zoekt or a folder named by ZK_ZOEKT_DIR, or point GOPROXY at a module proxy that serves github.com/sourcegraph/zoekt'"

# A suite that needs Zoekt, and one that skips for another reason, under CI.
cat >"$T/needs-zoekt.sh" <<SUITE
source "$ZK_ROOT/tests/integration/lib.sh"
need_zoekt
ok "ran with Zoekt at \$ZOEKT_BIN"
finish
SUITE
cat >"$T/skips.sh" <<SUITE
source "$ZK_ROOT/tests/integration/lib.sh"
skip_suite "no local node"
SUITE
CI=true ZK_ZOEKT_DIR=$T/nothing-here bash "$T/needs-zoekt.sh" >"$T/suite.out" 2>&1
check "without Zoekt, under CI, a suite that needs it exits 0" test $? -eq 0
check "counting one skip that gives the reason, and nothing else" \
  bash -c "grep -q '^ok 1 - no Zoekt for $arch, so this suite cannot run: to go on, either put zoekt-$pin' '$T/suite.out' &&
    grep -qx '# skipped 1' '$T/suite.out' && grep -qx '# pass 0' '$T/suite.out' && grep -qx '# fail 0' '$T/suite.out'"
CI=true ZK_ZOEKT_DIR=$T/good bash "$T/needs-zoekt.sh" >"$T/suite.out" 2>&1
check "with Zoekt handed in, the suite runs" bash -c "grep -q '^ok 1 - ran with Zoekt at $ZK_CACHE/' '$T/suite.out'"
CI=true bash "$T/skips.sh" >"$T/suite.out" 2>&1
check "under CI any other skip is a failure" bash -c "grep -qx '# fail 1' '$T/suite.out' && grep -q 'cannot run under CI: no local node' '$T/suite.out'"
finish
