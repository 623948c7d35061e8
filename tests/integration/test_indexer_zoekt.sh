#!/usr/bin/env bash
# The indexer script (controller/assets/indexer.sh) with the pinned zoekt-git-index itself, for what
# only the real tool shows (docs/zoekt.md): the repository's name in the index is the corpus's full
# name, symbols come from the host's universal-ctags, a ctags that fails is reported in Zoekt's own
# words, and symbols without a ctags stop the run before anything changes. zoekt-webserver answers
# for the index, with the file addresses zoekt-git-index made from the code host the list names.
# Needs Zoekt (need_zoekt) and universal-ctags; no cluster.
set -u
source "$(dirname "$0")/lib.sh"
need_zoekt

T=$(mktemp -d)
on_exit "rm -rf '$T'"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.com GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$T
git init -q -b main "$T/src"
printf 'package alpha\n\n// Frobnicate turns the crank.\nfunc Frobnicate() int { return 42 }\n' >"$T/src/alpha.go"
git -C "$T/src" add . && git -C "$T/src" commit -q -m init
echo "git.example/acme/alpha file://$T/src HEAD gitea https://gitea.example.org/acme/alpha" >"$T/repos.txt"
run_indexer() {
  env REPOS_FILE="$T/repos.txt" DATA_DIR="$T/data" WORK_DIR="$T/work" CREDENTIALS_DIR="$T/creds" \
    TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$ZOEKT_BIN/zoekt-git-index" "$@" \
    dash "$ZK_ROOT/controller/assets/indexer.sh" >"$T/out" 2>"$T/err"
}

run_indexer
check "the repository is indexed with symbols" \
  grep -q '^{"repository":"git.example/acme/alpha","status":"indexed","step":"index","shards":1,"symbols":true,' "$T/out"
check "its shard is named after the full name" test -f "$T/data/index/git.example%2Facme%2Falpha_v16.00000.zoekt"
port=$("$ZK_ROOT/scripts/free-port.sh")
"$ZOEKT_BIN/zoekt-webserver" -index "$T/data/index" -listen "127.0.0.1:$port" -rpc 2>"$T/webserver.log" &
web=$!
on_exit "kill $web"
check "zoekt-webserver is ready once it has loaded the shard (/readyz)" \
  eventually 20 curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"
list=$(curl -s -d '{"Q":""}' "http://127.0.0.1:$port/api/list")
check "it lists the repository by its full name, with symbols" \
  python3 -c 'import json,sys; r = json.loads(sys.argv[1])["List"]["Repos"][0]; sys.exit(not (r["Repository"]["Name"] == "git.example/acme/alpha" and r["Repository"]["HasSymbols"]))' "$list"
# Gitea's templates, as the pinned zoekt-git-index writes them for zoekt.web-url-type gitea: the
# connector renders exactly these (tests/unit/test_weburl.c).
check "the code host in the list gives Gitea's file and line templates" \
  python3 -c 'import json,sys; r = json.loads(sys.argv[1])["List"]["Repos"][0]["Repository"]; sys.exit(not (r["FileURLTemplate"] == sys.argv[2] and r["LineFragmentTemplate"] == "#L{{.LineNumber}}"))' \
  "$list" '{{URLJoinPath "https://gitea.example.org/acme/alpha" "src/commit" .Version .Path}}?display=source'
sym=$(curl -s -d '{"Q":"sym:Frobnicate"}' "http://127.0.0.1:$port/api/search")
check "sym: finds the definition ctags found" grep -q '"Sym":"Frobnicate"' <<<"$sym"

# A ctags that answers Zoekt's checks but fails on every file.
printf '#!/bin/sh\ncase $1 in --help) echo "+interactive" ;; --version) echo "Universal Ctags 5.9.0" ;; *) echo "ctags crashed" >&2; exit 3 ;; esac\n' >"$T/broken-ctags"
chmod +x "$T/broken-ctags"
echo "// changed" >>"$T/src/alpha.go" && git -C "$T/src" commit -q -am change
run_indexer CTAGS_COMMAND="$T/broken-ctags"
check "a ctags that fails: the repository is still indexed, for text search, saying so in Zoekt's words" \
  grep -q '"status":"indexed".*"symbols":false,"symbolsError":"ctags failed, so the repository is indexed for text search only: .*ignoring universal:'"$T"'/broken-ctags or scip:' "$T/out"
check "and the summary names it" grep -q '"withoutSymbols":\["git.example/acme/alpha"\]' "$T/out"

shard=$(stat -c '%i' "$T/data/index/git.example%2Facme%2Falpha_v16.00000.zoekt")
run_indexer CTAGS_COMMAND="$T/no-such-ctags"
check "symbols without a ctags: the run fails, saying what to do" \
  grep -q '"error":"symbols are on (spec.indexer.symbols), but the indexer image has no Universal Ctags' "$T/termination-log"
check "and the shard that serves is the one before" \
  test "$(stat -c '%i' "$T/data/index/git.example%2Facme%2Falpha_v16.00000.zoekt")" = "$shard"

# ---- search shards: each shard's run, two of them side by side, writes a folder its webserver serves ----
# The assignment is the operator's (lib/shard.h, through tests/tools/shard-of), written as the operator
# writes shards.txt; five repositories land on all three shards.
SHARD_OF=$ZK_ROOT/build/san/tests/tools/shard-of
[ -x "$SHARD_OF" ] || bail "tests/tools/shard-of is built ($SHARD_OF)"
echo "git.example/acme/alpha file://$T/src" >"$T/srepos.txt"
for r in beta gamma delta epsilon; do
  git init -q -b main "$T/src-$r"
  printf 'package %s\n\nfunc Only%s() int { return 7 }\n' "$r" "$r" >"$T/src-$r/$r.go"
  git -C "$T/src-$r" add . && git -C "$T/src-$r" commit -q -m init
  echo "git.example/acme/$r file://$T/src-$r" >>"$T/srepos.txt"
done
{ echo "# shards: 3. Written by hand for the test: the search shard of each repository."; "$SHARD_OF" 3 <"$T/srepos.txt"; } >"$T/shards.txt"
layout1=$(find "$T/data/index" -maxdepth 1 -name '*.zoekt' -printf '%f %i\n')
# run_shard K: shard K's full run, in its own work folder; output in $T/shard-K.out.
run_shard() {
  env REPOS_FILE="$T/srepos.txt" SHARDS_FILE="$T/shards.txt" SHARDS=3 JOB_COMPLETION_INDEX="$1" DATA_DIR="$T/data" \
    WORK_DIR="$T/work-$1" CREDENTIALS_DIR="$T/creds" TERMINATION_LOG="$T/shard-$1.term" \
    ZOEKT_GIT_INDEX="$ZOEKT_BIN/zoekt-git-index" dash "$ZK_ROOT/controller/assets/indexer.sh" >"$T/shard-$1.out" 2>"$T/shard-$1.err"
}
run_shard 0 &
first=$!
run_shard 1
rc1=$?
wait "$first"
rc0=$?
run_shard 2
rc2=$?
check "shards: the three shards' runs (0 and 1 side by side) each succeed ($rc0 $rc1 $rc2)" test "$rc0$rc1$rc2" = 000
check "shards: each indexes its own repositories, and says which shard it is" \
  bash -c 'for k in 0 1 2; do grep -qx "{\"summary\":{\"indexed\":$(grep -c "^$k " "$1"),\"failed\":0,\"removed\":0,\"searchShard\":$k,\"searchShards\":3,\"failedRepositories\":\[\]}}" "$2/shard-$k.term" || exit 1; done' _ "$T/shards.txt" "$T"
# served K: the repositories zoekt-webserver lists from shard K's folder, by name, sorted.
served() {
  local port web
  port=$("$ZK_ROOT/scripts/free-port.sh")
  "$ZOEKT_BIN/zoekt-webserver" -index "$T/data/index-shards/3/$1" -listen "127.0.0.1:$port" -rpc 2>"$T/webserver-$1.log" &
  web=$!
  eventually 20 curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" &&
    curl -s -d '{"Q":""}' "http://127.0.0.1:$port/api/list" |
    python3 -c 'import json,sys; print(" ".join(sorted(r["Repository"]["Name"] for r in json.load(sys.stdin)["List"]["Repos"] or [])))'
  kill "$web"
  wait "$web" 2>/dev/null
}
for k in 0 1 2; do
  want=$(awk -v k="$k" '$1 == k { print $2 }' "$T/shards.txt" | sort | tr '\n' ' ')
  got=$(served "$k")
  check "shards: shard $k's webserver serves exactly its repositories (${want% })" test "$got" = "${want% }"
done
check "shards: the one-shard layout's folder is as it was" \
  test "$(find "$T/data/index" -maxdepth 1 -name '*.zoekt' -printf '%f %i\n')" = "$layout1"
finish
