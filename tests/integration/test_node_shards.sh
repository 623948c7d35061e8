#!/usr/bin/env bash
# Search shards on the local node (issue 32, docs/sharding.md): a corpus of nine repositories served by
# one shard, then resharded to three and to two while an agent searches through the corpus's Service
# the whole time. Every search of that loop must answer, with every repository's file exactly once
# (none missing, none twice); each layout must answer the same query set with the same files as the
# one-shard layout did; the status must say which layout serves and what each shard holds; the old
# layout's objects must go. Then one shard is taken down (the operator stopped first, so that it does
# not bring the shard back): searches still answer, with a partial note that names the shard and its
# repositories, and one restricted to the other shard's repositories is whole. Then back to three
# shards, indexed anew, and to two with a repository the git host refuses: that move waits, with the
# reason in the ShardLayout condition, until a reindex fills the new layout. Real indexer Jobs (an Indexed Job of one pod per shard), real zoekt-webservers, nginx
# and connectors.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight
git_server_start
NS=$(new_namespace shards) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall
SHARD_OF=$ZK_ROOT/build/san/tests/tools/shard-of
[ -x "$SHARD_OF" ] || bail "tests/tools/shard-of is built ($SHARD_OF)"

# ---- nine repositories, each with one file that says "sharedword" and a marker of its own ---------------
names=()
lines=""
for i in 1 2 3 4 5 6 7 8 9; do
  git_commit "team/r$i" main "src/r$i.go" "package r$i" "// sharedword marker-r$i-end" \
    "func Handle$i() error { return nil }"
  names+=("local/r$i")
  lines+="  - {url: $GIT_URL/team/r$i.git, name: local/r$i}"$'\n'
done

operator_install
refresh_secrets
corpus() { # corpus SHARDS
  node_corpus org "${lines%$'\n'}" search-tokens "  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}
  poll: {interval: \"0\"}" &&
    $KC -n "$NS" patch csc org --type=merge -p "{\"spec\":{\"webserver\":{\"shards\":$1}}}" >/dev/null
}
corpus 1 || bail "the corpus is accepted"
exists() { $KC -n "$NS" get "$@" >/dev/null 2>&1; }
check "the one-shard layout is today's Deployment" eventually 120 exists deployment org-search
reindex "$NS" org >/dev/null || { node_diagnostics "$NS"; bail "the first reindex Job runs to its end"; }
count_is() { [ "$(csc "$NS" org .status.repositoryCount)" = "$1" ]; }
check "nine repositories are served" eventually 180 count_is 9 || node_diagnostics "$NS"
serving_is() { [ "$(csc "$NS" org .status.servingShards)" = "$1" ]; }
check "status.servingShards records the one-shard layout once it is rolled out" eventually 120 serving_is 1
check "Ready=True" eventually 60 condition_is "$NS" org Ready True
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"

# ---- the query set: what an agent asks, reduced to the files and repositories each answer names ---------
queries=('search_code {"query":"sharedword","max_files":50}'
  'search_code {"query":"func Handle","max_files":50}'
  'search_code {"query":"marker-r[1-5]-end","max_files":50}'
  'search_code {"query":"package","repo":"local/r7","max_files":50}'
  'list_repositories {}'
  'list_files {"repo":"local/r4"}')
# answers DIR: each query's answer, as the sorted names of local/* repositories and files it shows.
answers() {
  local q=0 tool args
  mkdir -p "$1"
  for entry in "${queries[@]}"; do
    tool=${entry%% *} args=${entry#* }
    mcp "$MCP" "$TOKEN" "$tool" "$args" >"$1/raw.$q" || return 1
    grep -oE 'local/r[0-9]+(/[A-Za-z0-9_./-]+)?|src/r[0-9]+\.go' "$1/raw.$q" | sort -u >"$1/q.$q"
    [ -s "$1/q.$q" ] || return 1
    q=$((q + 1))
  done
}
same_answers() { # same_answers DIR: every query names what it named in the one-shard layout
  local q
  answers "$1" || return 1
  for q in $(seq 0 $((${#queries[@]} - 1))); do
    cmp -s "$NODE_TMP/one/q.$q" "$1/q.$q" || { echo "query $q (${queries[$q]}) differs" >"$1/why"; return 1; }
  done
}
check "the one-shard layout answers the query set" answers "$NODE_TMP/one"
check "and its search names all nine repositories' files" test "$(grep -c 'src/r[0-9]\.go' "$NODE_TMP/one/q.0")" = 9

# ---- a search loop for as long as the layouts change ------------------------------------------------------
# Each round is an agent's call through the Service (a new MCP session each time). A round fails when the
# call fails, or when its answer does not name each repository's marker exactly once.
loop_dir=$NODE_TMP/loop
mkdir -p "$loop_dir"
search_loop() {
  local n=0 out k
  while [ ! -e "$loop_dir/stop" ]; do
    n=$((n + 1))
    if ! out=$(mcp "$MCP" "$TOKEN" search_code '{"query":"sharedword","max_files":50}'); then
      printf 'round %d: the call failed: %s\n' "$n" "$(head -c 300 <<<"$out")" >>"$loop_dir/failures"
    else
      for k in 1 2 3 4 5 6 7 8 9; do
        [ "$(grep -c "marker-r$k-end" <<<"$out")" = 1 ] ||
          { printf 'round %d: marker-r%d-end shown %d times\n' "$n" "$k" "$(grep -c "marker-r$k-end" <<<"$out")" \
            >>"$loop_dir/failures"; printf '%s\n' "$out" >"$loop_dir/answer.$n"; break; }
      done
    fi
    echo "$n" >"$loop_dir/rounds"
    sleep 0.2
  done
}
search_loop &
loop_pid=$!
on_exit "touch $loop_dir/stop; kill $loop_pid 2>/dev/null"

# layout_serves N: the corpus serves N shards, each Deployment of the layout is there and the status
# shows each shard's repositories, adding up to nine.
layout_serves() {
  local n=$1 total=0 k r
  serving_is "$n" || return 1
  [ "$n" = 1 ] && return 0
  for k in $(seq 0 $((n - 1))); do
    exists deployment "org-search-$n-$k" || return 1
    r=$(csc "$NS" org ".status.shards[$k].repositories")
    [ -n "$r" ] || return 1
    total=$((total + r))
  done
  [ "$total" = 9 ]
}
gone() { ! exists "$@"; }

# ---- one shard to three ------------------------------------------------------------------------------------
corpus 3 || bail "three shards are accepted"
check "the three-shard layout is built beside the serving one" eventually 120 exists deployment org-search-3-2
check "meanwhile the one-shard layout still serves" serving_is 1
check "the three-shard layout takes over once indexed and Ready" eventually 420 layout_serves 3 ||
  node_diagnostics "$NS"
check "the one-shard Deployment is deleted after the switch" eventually 120 gone deployment org-search
# layout_job_gone N: no Job that indexed the layout of N shards is left.
layout_job_gone() {
  ! $KC -n "$NS" get jobs -o jsonpath='{range .items[*]}{.metadata.annotations.codesearch\.dev/reindex-requested-at}{"\n"}{end}' |
    grep -qx "shards-$1"
}
check "the Job that indexed the three-shard layout is deleted once it serves" eventually 60 layout_job_gone 3
check "the search Service selects the three-shard layout" \
  test "$($KC -n "$NS" get service org-search -o jsonpath='{.spec.selector.codesearch\.dev/shards}')" = 3
for k in 0 1 2; do
  want=$(for r in "${names[@]}"; do "$SHARD_OF" 3 "$r"; done | awk -v k="$k" '$1 == k' | wc -l)
  check "shard $k serves the $want repositories shard_of gives it" \
    test "$(csc "$NS" org ".status.shards[$k].repositories")" = "$want"
  check "shard $k's pod is Ready" test "$(csc "$NS" org ".status.shards[$k].readyReplicas")" = 1
done
check "Ready=True with three shards" eventually 60 condition_is "$NS" org Ready True
check "three shards answer the query set as one did" same_answers "$NODE_TMP/three" ||
  cat "$NODE_TMP/three/why" 2>/dev/null

# ---- three shards to two -----------------------------------------------------------------------------------
corpus 2 || bail "two shards are accepted"
check "the two-shard layout takes over once indexed and Ready" eventually 420 layout_serves 2 ||
  node_diagnostics "$NS"
check "the three-shard Deployments are deleted" eventually 120 gone deployment org-search-3-0
check "and their Services" eventually 60 gone service org-search-3-0
check "two shards answer the query set as one did" same_answers "$NODE_TMP/two" ||
  cat "$NODE_TMP/two/why" 2>/dev/null

touch "$loop_dir/stop"
wait "$loop_pid" 2>/dev/null
rounds=$(cat "$loop_dir/rounds" 2>/dev/null || echo 0)
check "the search loop ran through both changes ($rounds rounds)" test "$rounds" -ge 20
check "no search of the loop failed or missed or repeated a file ($rounds rounds)" test ! -s "$loop_dir/failures" ||
  head -5 "$loop_dir/failures"

# ---- a shard down --------------------------------------------------------------------------------------------
# The operator would scale the shard back at once; it is stopped first, and started again after.
$KC -n zoekt-operator scale deployment zoekt-operator --replicas=0 >/dev/null
on_exit "$KC -n zoekt-operator scale deployment zoekt-operator --replicas=2 >/dev/null 2>&1"
no_operator() { [ -z "$($KC -n zoekt-operator get pods -o name 2>/dev/null)" ]; }
check "the operator is stopped" eventually 120 no_operator
$KC -n "$NS" scale deployment org-search-2-1 --replicas=0 >/dev/null
no_shard_pod() { [ -z "$($KC -n "$NS" get pods -l codesearch.dev/shards=2,codesearch.dev/shard=1 -o name 2>/dev/null)" ]; }
check "shard 1's pod is gone" eventually 120 no_shard_pod
down=$(for r in "${names[@]}"; do "$SHARD_OF" 2 "$r"; done | awk '$1 == 1 {print $2}')
up=$(for r in "${names[@]}"; do "$SHARD_OF" 2 "$r"; done | awk '$1 == 0 {print $2}')
partial() {
  mcp "$MCP" "$TOKEN" search_code '{"query":"sharedword","max_files":50}' >"$NODE_TMP/partial" &&
    grep -q 'Partial answer: shard 1 of 2 did not answer' "$NODE_TMP/partial"
}
check "a search still answers, as a partial answer naming shard 1" eventually 60 partial
first_down=$(head -n1 <<<"$down")
check "the note names a repository of shard 1 ($first_down)" grep -q "$first_down" "$NODE_TMP/partial"
for r in $up; do
  k=${r#local/r}
  check "shard 0's $r is in the answer" grep -q "marker-r$k-end" "$NODE_TMP/partial"
done
check "the answer is not a tool error" mcp "$MCP" "$TOKEN" search_code '{"query":"sharedword"}'
first_up=$(head -n1 <<<"$up")
routed() {
  mcp "$MCP" "$TOKEN" search_code "{\"query\":\"sharedword\",\"repo\":\"$first_up\"}" >"$NODE_TMP/routed" &&
    grep -q "marker-r${first_up#local/r}-end" "$NODE_TMP/routed" && ! grep -q 'Partial answer' "$NODE_TMP/routed"
}
check "a search restricted to shard 0's $first_up asks shard 0 alone: a whole answer" routed ||
  head -5 "$NODE_TMP/routed"
index_status=$(service_url "$NS" org-search 8080 /index-status)
check "/index-status still answers, with shard 1's error" \
  bash -c "curl -sf --max-time 10 '$index_status' | grep -q '\"shard\":1,\"error\"'"

$KC -n zoekt-operator scale deployment zoekt-operator --replicas=2 >/dev/null
check "the operator, back, brings shard 1 back" eventually 180 condition_is "$NS" org Ready True
check "and the status shows it Ready again" eventually 120 \
  bash -c "[ \"\$($KC -n $NS get csc org -o jsonpath='{.status.shards[1].readyReplicas}')\" = 1 ]"

# ---- back to a layout served before -------------------------------------------------------------------------
# The three-shard layout is indexed anew, not taken from the Job that indexed it the first time: a commit
# made since (which nothing indexes while the corpus polls nothing) is served once it takes over.
git_commit team/r1 main src/r1.go "package r1" "// sharedword marker-r1-end" "// aftersharding-r1"
corpus 3 || bail "three shards again are accepted"
check "the three-shard layout takes over again" eventually 420 layout_serves 3 || node_diagnostics "$NS"
check "and serves the commit made after it first served" eventually 60 search_finds "$MCP" "$TOKEN" \
  aftersharding-r1 "src/r1.go" || cat "$NODE_TMP/last-search"

check "ShardLayout is True once the layout the spec names serves" eventually 60 condition_is "$NS" org ShardLayout True

# ---- a move whose index misses a repository waits ----------------------------------------------------------
# The git host refuses r5, so the Job that indexes the two-shard layout fails it: that layout would serve
# eight of the nine repositories. The move waits, saying why, while three shards serve all nine; once r5
# is back, a reindex (of the layout the spec names) fills the new layout, and it takes over.
mv "$NODE_TMP/git/repos/team/r5.git" "$NODE_TMP/git/r5.git.hidden"
on_exit "mv '$NODE_TMP/git/r5.git.hidden' '$NODE_TMP/git/repos/team/r5.git' 2>/dev/null"
corpus 2 || bail "two shards again are accepted"
layout_reason_is() {
  [ "$(csc "$NS" org '.status.conditions[?(@.type=="ShardLayout")].reason')" = "$1" ] &&
    [ "$(csc "$NS" org '.status.conditions[?(@.type=="ShardLayout")].status')" = "$2" ]
}
check "the move to two shards waits: ShardLayout False, Verifying" eventually 420 layout_reason_is Verifying False ||
  node_diagnostics "$NS"
check "its message says the new layout holds fewer repositories than it must" \
  bash -c "$KC -n $NS get csc org -o jsonpath='{.status.conditions[?(@.type==\"ShardLayout\")].message}' |
    grep -q 'moving from 3 shards to 2: it serves 8 repositories, fewer than the 9 it must'"
check "meanwhile three shards still serve" serving_is 3
check "and r5 is still found" search_finds "$MCP" "$TOKEN" marker-r5-end "src/r5.go"
check "Ready stays True" condition_is "$NS" org Ready True
mv "$NODE_TMP/git/r5.git.hidden" "$NODE_TMP/git/repos/team/r5.git"
reindex "$NS" org >/dev/null || bail "a reindex runs to its end"
check "with r5 back and reindexed, the two-shard layout takes over" eventually 300 layout_serves 2 ||
  node_diagnostics "$NS"
check "ShardLayout is True again" eventually 60 condition_is "$NS" org ShardLayout True
check "and r5 is found" eventually 60 search_finds "$MCP" "$TOKEN" marker-r5-end "src/r5.go"

# ---- a corpus created with three shards ---------------------------------------------------------------------
# It records its layout in its first status: it never goes through one shard first.
cat <<YAML | $KC apply -f - >/dev/null || bail "a corpus of three shards is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: fresh, namespace: $NS}
spec:
  repositories:
${lines%$'\n'}
  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}
  poll: {interval: "0"}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, shards: 3, resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  gateway: {image: "$("$ZK_ROOT/scripts/images.sh" ref gateway)", tokenSecretRef: {name: search-tokens}}
YAML
fresh_records() { [ "$(csc "$NS" fresh .status.servingShards)" = 3 ]; }
check "a new corpus of three shards records them in its status" eventually 60 fresh_records
check "its three Deployments are there" eventually 60 exists deployment fresh-search-3-2
sleep 5
check "and no one-shard Deployment was ever made for it" \
  bash -c "! $KC -n $NS get events -o jsonpath='{range .items[*]}{.message}{\"\\n\"}{end}' | grep -qE 'Deployment fresh-search(,|\$| )'"

finish
