#!/usr/bin/env bash
# Freshness (issue 20) without a cluster: controller/assets/indexer.sh in its refresh and watch modes
# under dash, against the machine's HTTPS git server (scripts/git-server.sh) with the real
# zoekt-git-index and zoekt-webserver (tests/support/zoekt.sh). A commit pushed to one repository is
# seen by the poll and becomes searchable; only that repository's shards change; a storm of requests
# gives one index run; a repository's lock keeps two runs from indexing it at once.
#
# The connector (ZK_BIN) serves /hooks/push: a signed push is queued, a forged one refused.
# REFRESH_MEASURE=1 also measures push-to-searchable latency over 10 pushes with a 2 s poll and by
# webhook, and the cost of an idle poll over 200 repositories (docs/benchmarks.md).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

need_zoekt
bin=$ZOEKT_BIN

T=$(mktemp -d)
# nginx's workers (www-data) reach the git server's socket through it.
chmod 711 "$T"
on_exit "'$ZK_ROOT/scripts/git-server.sh' stop '$T/git'; [ -n \"${KEEP:-}\" ] || rm -rf '$T'"
SCRIPT=$ZK_ROOT/controller/assets/indexer.sh
DATA=$T/data
INDEX=$DATA/index
export GIT_CONFIG_NOSYSTEM=1 HOME=$T
# The git server's CA reaches git as the pod's does (GIT_CA_BUNDLE, http.sslCAInfo), which an
# inherited GIT_SSL_CAINFO would override.
unset GIT_SSL_CAINFO
vars=$("$ZK_ROOT/scripts/git-server.sh" start "$T/git") && eval "$vars" || { fail "the git server starts"; finish; exit 1; }

# The stand-in counts zoekt-git-index's runs per repository and hands over to the real one.
mkdir -p "$T/bin"
cat >"$T/bin/zoekt-git-index" <<EOF
#!/bin/sh
for last; do :; done
echo "\$last" >>"$T/index-calls"
exec "$bin/zoekt-git-index" "\$@"
EOF
chmod +x "$T/bin/zoekt-git-index"
calls() { grep -c "/$1.git\$" "$T/index-calls" 2>/dev/null || true; }

# make_repo NAME: a repository on the git server holding one file with NAME's word.
make_repo() {
  "$ZK_ROOT/scripts/git-server.sh" repo "$T/git" "$1"
  mkdir -p "$T/src/$1"
  printf 'int %sword(void) { return 0; }\n' "$1" >"$T/src/$1/main.c"
  "$ZK_ROOT/tests/support/zoekt.sh" repo "$T/src" "$1"
  git -C "$T/src/$1" push -q "$T/git/repos/$1.git" main
}
# push NAME WORD: a commit adding WORD to NAME, pushed to the server.
push() {
  printf 'int %s(void) { return 1; }\n' "$2" >>"$T/src/$1/main.c"
  git -C "$T/src/$1" -c user.name=t -c user.email=t@example.invalid commit -q -am "$2" &&
    git -C "$T/src/$1" push -q "$T/git/repos/$1.git" main
}
for r in alpha beta gamma; do make_repo "$r"; done
list_repos() { for r in "$@"; do echo "local/$r $GIT_URL/$r.git"; done >"$T/repos.txt"; }
list_repos alpha beta gamma

# indexer MODE [VAR=VALUE...]: one run of the script in MODE; its output in $T/out.
indexer() {
  local mode=$1
  shift
  env REPOS_FILE="$T/repos.txt" DATA_DIR="$DATA" WORK_DIR="$T/work-$mode" CREDENTIALS_DIR="$T/creds" \
    TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" GIT_CA_BUNDLE="$GIT_CA" \
    INDEXER_MODE="$mode" "$@" dash "$SCRIPT" -disable_ctags >"$T/out" 2>"$T/err"
}
summary() { grep '"summary"' "$T/out"; }
inode() { stat -c %i "$INDEX/local%2F$1_v16.00000.zoekt"; }
head_of() { git -C "$T/src/$1" rev-parse HEAD; }

indexer full
check "the full run indexes the three repositories" grep -q '"indexed":3,' "$T/out"
check "and records the indexed commit of alpha's default branch" \
  grep -qx "HEAD $(head_of alpha)" "$DATA/state/local%2Falpha.heads"

port=$("$ZK_ROOT/scripts/free-port.sh")
url=http://127.0.0.1:$port
"$bin/zoekt-webserver" -index "$INDEX" -listen "127.0.0.1:$port" -rpc >"$T/webserver.log" 2>&1 &
ws=$!
on_exit "kill $ws"
search() {
  curl -s -m 5 -X POST "$url/api/search" -d "{\"Q\":\"$1\",\"Opts\":{\"MaxDocDisplayCount\":10}}"
}
serves() { search "$1" | grep -qF "\"Repository\":\"local/$2\""; }
check "the webserver serves alpha" eventually 20 serves alphaword alpha

# ---- an idle poll asks each remote once and indexes nothing ---------------------------------------
requests_before=$(wc -l <"$T/git/access.log")
indexer refresh
check "an idle poll polls the three remotes" grep -q '"polled":3,"changed":0,"requests":0' "$T/out"
check "and indexes nothing" grep -q '"indexed":0,' "$T/out"
requests=$(($(wc -l <"$T/git/access.log") - requests_before))
# Smart HTTP with protocol v2: the ref advertisement (GET info/refs) and one ls-refs command (POST).
check "with two requests to the git server per repository ($requests)" test "$requests" -eq 6

# ---- a push to alpha: the poll reindexes alpha alone ----------------------------------------------
beta_inode=$(inode beta) gamma_inode=$(inode gamma) alpha_inode=$(inode alpha)
beta_calls=$(calls beta)
push alpha alphapushed
indexer refresh
check "the poll finds alpha moved" grep -q '"polled":3,"changed":1,"requests":1' "$T/out"
check "and indexes alpha" grep -q '"repository":"local/alpha","status":"indexed"' "$T/out"
check "alpha's pushed commit is searchable" eventually 20 serves alphapushed alpha
check "alpha's shard is new" test "$(inode alpha)" != "$alpha_inode"
check "beta's shard is the same inode" test "$(inode beta)" = "$beta_inode"
check "gamma's shard is the same inode" test "$(inode gamma)" = "$gamma_inode"
check "beta was not indexed again" test "$(calls beta)" = "$beta_calls"
check "alpha's record names the pushed commit" grep -qx "HEAD $(head_of alpha)" "$DATA/state/local%2Falpha.heads"
check "alpha's replaced shard keeps a retired name" \
  test -n "$(find "$INDEX/.retired" -name '*local%2Falpha_v16.00000.zoekt')"

# ---- a storm of requests coalesces ------------------------------------------------------------------
push beta betastorm
before=$(calls beta)
for _ in $(seq 10); do : >"$DATA/queue/local%2Fbeta"; done
indexer refresh POLL_INTERVAL_SECONDS=0 INDEXER_REPOSITORIES="local/beta local/beta local/beta"
check "thirteen requests for beta give one request served" grep -q '"requests":1,' "$T/out"
check "and one zoekt-git-index run" test "$(calls beta)" -eq $((before + 1))
check "beta's pushed commit is searchable" eventually 20 serves betastorm beta
indexer refresh POLL_INTERVAL_SECONDS=0 INDEXER_REPOSITORIES=local/nosuch
check "a request for an unlisted repository is ignored" grep -q '"request":"local%2Fnosuch","status":"ignored"' "$T/out"
check "and dropped" test ! -e "$DATA/queue/local%2Fnosuch"

# ---- the lock: no two runs index one repository at once ---------------------------------------------
push gamma gammalocked
flock "$DATA/locks/local%2Fgamma.lock" sleep 4 &
holder=$!
sleep 0.5
before=$(calls gamma)
indexer refresh POLL_INTERVAL_SECONDS=0 INDEXER_REPOSITORIES=local/gamma
check "a refresh run leaves a locked repository alone" grep -q '"requests":0,"busy":1' "$T/out"
check "and keeps its request" test -e "$DATA/queue/local%2Fgamma"
check "zoekt-git-index did not run for it" test "$(calls gamma)" = "$before"
started=$(date +%s)
indexer full
waited=$(($(date +%s) - started))
wait "$holder"
check "a full run waits for the lock (${waited} s)" test "$waited" -ge 2
check "then indexes gamma" grep -q '"repository":"local/gamma","status":"indexed"' "$T/out"
indexer refresh POLL_INTERVAL_SECONDS=0
check "the kept request is served after the lock is free" grep -q '"requests":1,' "$T/out"
check "the full run left the refresh run's request queue empty" test -z "$(ls "$DATA/queue")"

# ---- a full run and a refresh run side by side ---------------------------------------------------
mkdir -p "$INDEX/.tmp-refresh.inflight"
indexer full
check "a full run leaves a refresh run's temporary directory" test -d "$INDEX/.tmp-refresh.inflight"
rm -rf "$INDEX/.tmp-refresh.inflight"

# ---- a repository never indexed is left to a full run under way -------------------------------------
# A corpus's first reindex Job and its refresh pod start together: polling a repository the Job has not
# reached yet would index it twice.
make_repo delta
list_repos alpha beta gamma delta
flock "$DATA/full-run.lock" sleep 3 &
holder=$!
sleep 0.5
indexer refresh
check "while a full run is under way, a poll leaves a repository never indexed to it" \
  grep -q '"polled":4,"changed":0,"requests":0' "$T/out"
wait "$holder"
indexer refresh
check "once no full run is under way, the poll requests it and indexes it" \
  grep -q '"repository":"local/delta","status":"indexed"' "$T/out"
list_repos alpha beta gamma
indexer full

# ---- watch mode: a push becomes searchable within the poll interval plus an index run ---------------
env REPOS_FILE="$T/repos.txt" DATA_DIR="$DATA" WORK_DIR="$T/work-watch" CREDENTIALS_DIR="$T/creds" \
  TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" GIT_CA_BUNDLE="$GIT_CA" \
  INDEXER_MODE=watch POLL_INTERVAL_SECONDS=2 QUEUE_CHECK_SECONDS=1 \
  setsid dash "$SCRIPT" -disable_ctags >"$T/watch.out" 2>"$T/watch.err" &
watcher=$!
on_exit "kill -- -$watcher"
pushes=3
[ "${REFRESH_MEASURE:-0}" = 1 ] && pushes=10
: >"$T/latency"
for i in $(seq "$pushes"); do
  push alpha "watchtoken$i"
  t0=$(date +%s.%N)
  if eventually 30 serves "watchtoken$i" alpha; then
    echo "$(date +%s.%N) - $t0" | bc >>"$T/latency"
  fi
done
check "every push in watch mode became searchable ($(wc -l <"$T/latency") of $pushes)" \
  test "$(wc -l <"$T/latency")" -eq "$pushes"
sort -n "$T/latency" | awk '{ v[NR] = $1 } END {
  printf "# push to searchable, %d pushes, poll 2 s: p50 %.1f s, p95 %.1f s, max %.1f s\n",
    NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR] }'
kill -- "-$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null

# ---- webhooks: the connector's /hooks/push writes the request the watch mode serves -------------------
if [ -x "${ZK_BIN:-}/zoekt-connector" ]; then
  printf 'hook-secret\n' >"$T/hook-secret"
  cport=$("$ZK_ROOT/scripts/free-port.sh")
  "$ZK_BIN/zoekt-connector" --listen "127.0.0.1:$cport" --zoekt-url "$url" --webhook-secret-file "$T/hook-secret" \
    --webhook-repos-file "$T/repos.txt" --webhook-queue-dir "$DATA/queue" >"$T/connector.log" 2>&1 &
  connector=$!
  on_exit "kill $connector"
  # hook REPO [SIGNATURE]: a GitHub push delivery for REPO, signed with the secret unless SIGNATURE is
  # given; prints the status and the body.
  hook() {
    local body sig
    body="{\"ref\":\"refs/heads/main\",\"repository\":{\"clone_url\":\"$GIT_URL/$1.git\"}}"
    sig=${2:-sha256=$(printf '%s' "$body" | openssl dgst -sha256 -hmac hook-secret -r | cut -d' ' -f1)}
    curl -s -m 5 -w ' %{http_code}' -X POST "http://127.0.0.1:$cport/hooks/push" \
      -H 'X-GitHub-Event: push' -H "X-Hub-Signature-256: $sig" -d "$body"
  }
  eventually 10 curl -sf -o /dev/null "http://127.0.0.1:$cport/healthz"
  check "a delivery with a wrong signature is refused with 401" \
    grep -q ' 401$' <<<"$(hook beta sha256=0000000000000000000000000000000000000000000000000000000000000000)"
  check "and requests nothing" test -z "$(ls "$DATA/queue")"
  check "a delivery for an unlisted repository is answered 202 and ignored" grep -q 'ignored.* 202$' <<<"$(hook nosuch)"
  check "and requests nothing either" test -z "$(ls "$DATA/queue")"
  push beta betahooked
  check "a signed push of beta is queued" grep -q '"queued":"local/beta"} 202$' <<<"$(hook beta)"
  indexer refresh POLL_INTERVAL_SECONDS=0
  check "the refresh indexes beta from the webhook's request" grep -q '"repository":"local/beta","status":"indexed"' "$T/out"
  check "beta's hooked commit is searchable" eventually 20 serves betahooked beta

  env REPOS_FILE="$T/repos.txt" DATA_DIR="$DATA" WORK_DIR="$T/work-watch" CREDENTIALS_DIR="$T/creds" \
    TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" GIT_CA_BUNDLE="$GIT_CA" \
    INDEXER_MODE=watch POLL_INTERVAL_SECONDS=0 QUEUE_CHECK_SECONDS=1 \
    setsid dash "$SCRIPT" -disable_ctags >"$T/watch.out" 2>"$T/watch.err" &
  watcher=$!
  on_exit "kill -- -$watcher"
  : >"$T/latency"
  for i in $(seq "$pushes"); do
    push gamma "hooktoken$i"
    t0=$(date +%s.%N)
    hook gamma >/dev/null
    if eventually 30 serves "hooktoken$i" gamma; then
      echo "$(date +%s.%N) - $t0" | bc >>"$T/latency"
    fi
  done
  check "every webhook push in watch mode became searchable ($(wc -l <"$T/latency") of $pushes)" \
    test "$(wc -l <"$T/latency")" -eq "$pushes"
  sort -n "$T/latency" | awk '{ v[NR] = $1 } END {
    printf "# webhook push to searchable, %d pushes, queue checked every 1 s: p50 %.1f s, p95 %.1f s, max %.1f s\n",
      NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR] }'
  kill -- "-$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
else
  skip "webhooks: no zoekt-connector in ZK_BIN"
fi

# ---- search shards: the refresh pod indexes each repository into its shard's folder ------------------
# Three shards, one repository each (tests/tools/shard-of, the operator's assignment), on a volume of
# their own; each shard folder indexed by its full run, then a webhook's request and a poll.
SHARD_OF=$ZK_ROOT/build/san/tests/tools/shard-of
if [ -x "$SHARD_OF" ]; then
  SDATA=$T/sharded
  { echo "# shards: 3. Written by the test, as the operator does."; "$SHARD_OF" 3 <"$T/repos.txt"; } >"$T/shards.txt"
  shard_of() { awk -v n="local/$1" '$2 == n { print $1 }' "$T/shards.txt"; }
  sharded() { indexer "$@" DATA_DIR="$SDATA" SHARDS=3 SHARDS_FILE="$T/shards.txt"; }
  for k in 0 1 2; do sharded full SHARD="$k" WORK_DIR="$T/work-shard$k"; done
  check "shards: the three repositories are in three shard folders" \
    test "$(find "$SDATA/index-shards/3" -maxdepth 2 -name '*.zoekt' | wc -l)" -eq 3
  sport=$("$ZK_ROOT/scripts/free-port.sh")
  "$bin/zoekt-webserver" -index "$SDATA/index-shards/3/$(shard_of alpha)" -listen "127.0.0.1:$sport" -rpc \
    >"$T/webserver-shard.log" 2>&1 &
  sws=$!
  on_exit "kill $sws"
  shard_serves() { curl -s -m 5 -X POST "http://127.0.0.1:$sport/api/search" -d "{\"Q\":\"$1\"}" | grep -qF '"Repository":"local/alpha"'; }
  others=$(find "$SDATA/index-shards/3" -name '*.zoekt' ! -name 'local%2Falpha_*' -not -path '*/.retired/*' -printf '%p %i\n' | sort)
  push alpha shardedtoken
  : >"$SDATA/queue/local%2Falpha"
  sharded refresh POLL_INTERVAL_SECONDS=0
  check "shards: a refresh run indexes the requested repository" grep -q '"repository":"local/alpha","status":"indexed"' "$T/out"
  check "shards: alpha's shard webserver serves the pushed commit" eventually 20 shard_serves shardedtoken
  check "shards: alpha's shard is in its shard's folder alone" \
    test "$(find "$SDATA" -name 'local%2Falpha_*.zoekt' -not -path '*/.retired/*')" = "$SDATA/index-shards/3/$(shard_of alpha)/local%2Falpha_v16.00000.zoekt"
  check "shards: the other shards' folders are untouched" \
    test "$(find "$SDATA/index-shards/3" -name '*.zoekt' ! -name 'local%2Falpha_*' -not -path '*/.retired/*' -printf '%p %i\n' | sort)" = "$others"
  push alpha shardpolled
  sharded refresh
  check "shards: a poll finds alpha moved and indexes it into its shard's folder" eventually 20 shard_serves shardpolled
  check "shards: the one-shard layout does not have it" bash -c "! grep -rqs shardpolled '$INDEX'"
else
  fail "shards: tests/tools/shard-of is built ($SHARD_OF)"
fi

# ---- the cost of an idle poll over 200 repositories ---------------------------------------------------
if [ "${REFRESH_MEASURE:-0}" = 1 ]; then
  for i in $(seq 200); do
    "$ZK_ROOT/scripts/git-server.sh" repo "$T/git" "many/r$i"
    git -C "$T/src/alpha" push -q "$T/git/repos/many/r$i.git" main
    echo "local/many/r$i $GIT_URL/many/r$i.git"
  done >"$T/repos.txt"
  indexer full
  check "the 200 repositories are indexed" grep -q '"indexed":200,' "$T/out"
  requests_before=$(wc -l <"$T/git/access.log")
  /usr/bin/time -f '%e %U %S' -o "$T/time" env REPOS_FILE="$T/repos.txt" DATA_DIR="$DATA" \
    WORK_DIR="$T/work-refresh" CREDENTIALS_DIR="$T/creds" GIT_CA_BUNDLE="$GIT_CA" INDEXER_MODE=refresh \
    dash "$SCRIPT" >"$T/out" 2>"$T/err"
  check "an idle poll of 200 repositories changes none" grep -q '"polled":200,"changed":0,' "$T/out"
  read -r wall user sys <"$T/time"
  echo "# idle poll of 200 repositories: ${wall} s wall, ${user} s user + ${sys} s system CPU," \
    "$(($(wc -l <"$T/git/access.log") - requests_before)) requests to the git server"
fi

finish
