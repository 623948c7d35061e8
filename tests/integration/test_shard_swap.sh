#!/usr/bin/env bash
# A reindex replaces and removes shards under a running zoekt-webserver: the hazard of upstream Zoekt
# #1109 on EFS. The webserver maps each shard and closes it; on NFS the server frees an inode once its
# last name is gone, and the webserver's mapping of it then faults. This machine has no NFS, so the
# suite checks the invariant that makes NFS safe: while a replaced or removed shard may still be mapped
# (until the grace, RETIRED_GRACE_SECONDS), no inode the webserver maps from the volume has link count 0.
#
# Real zoekt-git-index and zoekt-webserver (tests/support/zoekt.sh), controller/assets/indexer.sh under
# dash, three local git repositories, a search loop on loopback throughout. No Kubernetes.
#
# SHARD_SWAP_INDEXER=FILE runs another indexer script (an older one, to see the suite fail on it).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

need_zoekt
bin=$ZOEKT_BIN

T=$(mktemp -d)
on_exit "rm -rf '$T'"
SCRIPT=${SHARD_SWAP_INDEXER:-$ZK_ROOT/controller/assets/indexer.sh}
DATA=$T/data
INDEX=$DATA/index
export GIT_CONFIG_NOSYSTEM=1 HOME=$T

# make_repo NAME WORD: a git repository with one file holding WORD and the word every search asks for.
make_repo() {
  mkdir -p "$T/src/$1"
  printf 'int %s(void) { return 0; } /* shardswap */\n' "$2" >"$T/src/$1/main.c"
  "$ZK_ROOT/tests/support/zoekt.sh" repo "$T/src" "$1"
}
make_repo alpha alphaword
make_repo beta betaword
make_repo gamma gammaword
list_repos() { for r in "$@"; do echo "local/$r file://$T/src/$r"; done >"$T/repos.txt"; }

# run_indexer: one indexer run over $T/repos.txt; its output in $T/out.
run_indexer() {
  env REPOS_FILE="$T/repos.txt" DATA_DIR="$DATA" WORK_DIR="$T/work" CREDENTIALS_DIR="$T/creds" \
    TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$bin/zoekt-git-index" \
    dash "$SCRIPT" -disable_ctags >"$T/out" 2>"$T/err"
}

list_repos alpha beta gamma
run_indexer
check "the first run indexes three repositories" grep -q '"indexed":3,' "$T/out"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
# GOGC=off: Zoekt unmaps a replaced shard from a finalizer, when the garbage collector next runs. On a
# large production heap that can be minutes; off, the old mappings stay for the whole suite, so the
# check below sees each of them rather than racing the collector.
GOGC=off "$bin/zoekt-webserver" -index "$INDEX" -listen "127.0.0.1:$port" -rpc >"$T/webserver.log" 2>&1 &
ws=$!
on_exit "kill $ws"

# search QUERY: the webserver's JSON answer to QUERY; fails on anything but a 200 without "Error".
# The body is kept in $T/answer.<pid of the calling shell>, for the loop's error lines.
search() {
  local code answer=$T/answer.$BASHPID
  code=$(curl -s -m 5 -o "$answer" -w '%{http_code}' -X POST "$url/api/search" \
    -d "{\"Q\":\"$1\",\"Opts\":{\"MaxDocDisplayCount\":10}}") || return 1
  [ "$code" = 200 ] && ! grep -q '"Error"' "$answer" && cat "$answer"
}
serves() { search "$1" | grep -qF "\"Repository\":\"local/$2\""; }
serves_all() { serves alphaword alpha && serves betaword beta && serves gammaword gamma; }
check "the webserver serves the three repositories" eventually 20 serves_all

# The search loop: every answer is one line in $T/searches, "ok" or the failure.
search_loop() {
  local answer
  while [ ! -e "$T/stop" ]; do
    if answer=$(search shardswap); then
      grep -q '"Repository":"local/' <<<"$answer" && echo ok || echo "no match: ${answer:0:200}"
    else
      echo "error: $(head -c 200 "$T/answer.$BASHPID" 2>/dev/null || echo no answer)"
    fi
  done >>"$T/searches"
}

# The mapping watch: every 50 ms, each mapping of a file under the index directory, with the link
# count of the inode it maps, as "<links> <inode> <path>" in $T/mapped. The kernel marks a mapped path
# "(deleted)" once that name is gone, whatever other names the inode still has, hence the count.
# /proc/PID/map_files gives the count directly (root or CAP_CHECKPOINT_RESTORE); otherwise it is the
# number of names with the mapped inode number on the volume.
link_count() { # RANGE INODE
  stat -L -c %h "/proc/$ws/map_files/$1" 2>/dev/null && return
  grep -q "^$1 " "/proc/$ws/maps" || return 1 # unmapped meanwhile
  find "$DATA" -inum "$2" 2>/dev/null | wc -l
}
watch_maps() {
  local range ino path links
  while [ ! -e "$T/stop" ]; do
    while read -r range _ _ _ ino path; do
      case $path in "$INDEX"/*) ;; *) continue ;; esac
      links=$(link_count "$range" "$ino") || continue
      echo "$links $ino $path"
    done <"/proc/$ws/maps" >>"$T/mapped"
    sleep 0.05
  done
}

search_loop &
loop=$!
watch_maps &
watcher=$!
on_exit "touch '$T/stop'; kill $loop $watcher"
eventually 10 test -s "$T/searches"

# ---- a reindex replaces every shard; alpha has new content ---------------------------------------
printf 'int alphanew(void) { return 1; } /* shardswap */\n' >"$T/src/alpha/main.c"
git -C "$T/src/alpha" -c user.name=t -c user.email=t@example.invalid commit -q -am change
run_indexer
check "the reindex indexes three repositories" grep -q '"indexed":3,' "$T/out"
check "the webserver serves alpha's new content" eventually 20 serves alphanew alpha

# ---- gamma is no longer listed: its shard is removed ----------------------------------------------
list_repos alpha beta
run_indexer
check "the next run removes gamma's shard" grep -q '"status":"removed","shard":"local%2Fgamma_v16.00000.zoekt"' "$T/out"
gone() { ! serves gammaword gamma; }
check "the webserver stops serving gamma" eventually 20 gone
serves_rest() { serves alphanew alpha && serves betaword beta; }
check "and still serves alpha and beta" serves_rest

sleep 0.5 # a few more looks at the mappings and searches after the last change
touch "$T/stop"
wait $loop $watcher

mapped_shards=$(awk '{print $2}' "$T/mapped" | sort -u | wc -l)
replaced=$(grep -c ' (deleted)$' "$T/mapped")
check "the webserver mapped old and new shards from the volume ($mapped_shards inodes)" test "$mapped_shards" -ge 6
check "it still mapped replaced or removed shards after the runs (the hazard was there)" test "$replaced" -gt 0
unlinked=$(awk '$1 == 0' "$T/mapped" | sort -u)
check "no shard the webserver mapped ever had link count 0 during the grace ($(grep -c . <<<"$unlinked") had)" \
  test -z "$unlinked"
[ -z "$unlinked" ] || sed -e "s|^|#   mapped with no link: |" <<<"$unlinked" | head -n 5
searches=$(wc -l <"$T/searches")
errors=$(grep -vc '^ok$' "$T/searches")
check "the search loop got $searches answers across the runs" test "$searches" -ge 20
check "none of them an error or a miss ($errors)" test "$errors" -eq 0
[ "$errors" -eq 0 ] || grep -v '^ok$' "$T/searches" | sort | uniq -c | head -n 5 | sed 's/^/#   /'
check "the webserver is still running" kill -0 $ws

# ---- after the grace, the next run prunes the retired names -------------------------------------
retired_before=$(find "$INDEX/.retired" -type f 2>/dev/null | sort)
check "the replaced and removed shards have retired names" test "$(grep -c . <<<"$retired_before")" -ge 4
sleep 1
RETIRED_GRACE_SECONDS=1 run_indexer
still=$(comm -12 <(printf '%s\n' "$retired_before") <(find "$INDEX/.retired" -type f 2>/dev/null | sort))
check "a run after the grace prunes them" test -z "$still"
check "and serves on" serves alphanew alpha

finish
