#!/usr/bin/env bash
# The indexer script (controller/assets/indexer.sh) with real git against local bare repositories and
# a stand-in zoekt-git-index (tests/fixtures/indexer/zoekt-git-index-stand-in.sh) that records its arguments and
# writes fake shards. The script runs under dash, a strict POSIX shell like the image's busybox sh.
# Needs no cluster.
set -u
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
on_exit "rm -rf '$T'"
SCRIPT=$ZK_ROOT/controller/assets/indexer.sh
mkdir -p "$T/bin" "$T/remotes" "$T/creds"
cp "$ZK_ROOT/tests/fixtures/indexer/zoekt-git-index-stand-in.sh" "$T/bin/zoekt-git-index"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.com GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$T

# make_remote NAME BRANCH...: a bare repository with one commit on each branch.
make_remote() {
  local name=$1 b; shift
  git init -q --bare -b "$1" "$T/remotes/$name.git"
  git init -q -b "$1" "$T/work-$name"
  echo "hello from $name" >"$T/work-$name/README"
  git -C "$T/work-$name" add README
  git -C "$T/work-$name" commit -q -m init
  for b in "${@:2}"; do git -C "$T/work-$name" branch "$b"; done
  git -C "$T/work-$name" push -q "$T/remotes/$name.git" "$@"
}
make_remote alpha main
make_remote beta main dev

# run_indexer [FLAGS...]: runs the script with every path in $T; stdout in $T/out, stderr in $T/err.
run_indexer() {
  env REPOS_FILE="$T/repos.txt" DATA_DIR="$T/data" WORK_DIR="$T/work" CREDENTIALS_DIR="$T/creds" \
    TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" FAKE_CALLS="$T/calls" \
    PATH="$T/bin:$PATH" dash "$SCRIPT" "$@" >"$T/out" 2>"$T/err"
}

# line_for NAME: the JSON line reported for repository NAME.
line_for() { grep -F "\"repository\":\"$1\"" "$T/out"; }
all_json() { python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out"; }
shard() { echo "$T/data/index/$(printf '%s' "$1" | sed 's|/|%2F|g')_v16.00000.zoekt"; }
rev_of() { git --git-dir="$T/remotes/$1.git" rev-parse "$2"; }
# retired SHARD_FILE_NAME: the retired names of that shard, one a line.
retired() { find "$T/data/index/.retired" -type f -name "*.$1" | sort; }
# retired_holding SHARD_FILE_NAME TEXT: some retired name of that shard holds TEXT (a revision).
retired_holding() { local f; for f in $(retired "$1"); do grep -qF -- "$2" "$f" && return 0; done; return 1; }

cat >"$T/repos.txt" <<EOF
# name url branches
local/alpha file://$T/remotes/alpha.git
local/beta file://$T/remotes/beta.git main,dev
local/broken file://$T/remotes/missing.git
EOF

# ---- first run: two new repositories and one that cannot be cloned ----------------------------
run_indexer -submodules=false
rc=$?
check "first run exits 0 when some repositories were indexed" test "$rc" -eq 0
check "every output line is JSON" all_json
check "alpha cloned and indexed" grep -q '"status":"indexed","step":"index","shards":1' <(line_for local/alpha)
check "beta indexed" grep -q '"status":"indexed"' <(line_for local/beta)
check "the broken repository is reported as a failed clone" \
  grep -q '"status":"failed","step":"clone","error":"git clone failed: ' <(line_for local/broken)
check "the summary counts 2 indexed and 1 failed, naming it" \
  grep -qx '{"summary":{"indexed":2,"failed":1,"removed":0,"failedRepositories":\["local/broken"\]}}' "$T/out"
check "the summary is the termination message" cmp -s <(tail -n 1 "$T/out") "$T/termination-log"
check "mirrors are bare mirror clones" test "$(git --git-dir="$T/data/repos/local/alpha.git" config remote.origin.mirror)" = true
check "the shards carry the full name (zoekt-git-index is given the mirrors' folder as -repo_cache)" \
  test -f "$(shard local/beta)" -a -z "$(find "$T/data/index" -name 'beta_*')"
check "alpha's shard holds its HEAD" grep -q "$(rev_of alpha main)" "$(shard local/alpha)"
check "beta's shard holds its first listed branch" grep -q "$(rev_of beta main)" "$(shard local/beta)"
check "the indexer got the branches, the extra flag and the mirror" \
  grep -qE "^-index $T/data/index/\.tmp\.[A-Za-z0-9]+ -repo_cache $T/data/repos -branches main,dev -submodules=false $T/data/repos/local/beta.git\$" "$T/calls"
check "HEAD when no branch is listed" grep -qE -- "-branches HEAD -submodules=false $T/data/repos/local/alpha.git\$" "$T/calls"
check "no temporary directory is left in the index" test -z "$(find "$T/data/index" -name '.tmp.*')"
check "no half clone is left" test -z "$(find "$T/data/repos" -name '*.tmp')"

# ---- second run: alpha has a new commit -------------------------------------------------------
old_alpha=$(rev_of alpha main)
echo change >>"$T/work-alpha/README"
git -C "$T/work-alpha" commit -q -am update
git -C "$T/work-alpha" push -q "$T/remotes/alpha.git" main
: >"$T/calls"
run_indexer
check "second run fetches alpha" grep -q '"status":"indexed","step":"index"' <(line_for local/alpha)
check "the mirror has the new commit" test "$(git --git-dir="$T/data/repos/local/alpha.git" rev-parse main)" = "$(rev_of alpha main)"
check "alpha's shard was replaced" grep -q "$(rev_of alpha main)" "$(shard local/alpha)"
check "the new shard is not the old one" test "$(rev_of alpha main)" != "$old_alpha"
check "the replaced shard keeps a name in .retired (the webserver may still map it)" \
  retired_holding local%2Falpha_v16.00000.zoekt "$old_alpha"
check "beta, replaced too, is retired as well" test "$(retired local%2Fbeta_v16.00000.zoekt | wc -l)" -eq 1

# ---- a repository shrinks from two shards to one ----------------------------------------------
FAKE_SHARDS=2 run_indexer
check "two shards installed" test -f "$T/data/index/local%2Falpha_v16.00001.zoekt"
run_indexer
check "the stale second shard is removed" test ! -e "$T/data/index/local%2Falpha_v16.00001.zoekt"
check "the stale second shard keeps a name in .retired" test -n "$(retired local%2Falpha_v16.00001.zoekt)"
check "the first shard stays" test -f "$(shard local/alpha)"

# ---- a failing index keeps the previous shard --------------------------------------------------
before=$(cat "$(shard local/alpha)")
FAKE_FAIL=local/alpha run_indexer
rc=$?
check "a failing repository does not fail the run" test "$rc" -eq 0
check "it is reported with the indexer's error" \
  grep -q '"step":"index","error":"zoekt-git-index failed: fake failure indexing local/alpha"' <(line_for local/alpha)
check "its previous shard keeps serving" test "$(cat "$(shard local/alpha)")" = "$before"

# ---- a full volume: said plainly, the previous shard kept, nothing half-written left -----------
FAKE_NOSPACE=local/alpha run_indexer
check "a full volume is reported as such, first" \
  grep -q '"step":"index","error":"no space left on the volume ([0-9]* KiB free at ' <(line_for local/alpha)
check "with the tool's own write error, not cut away by its earlier lines" \
  grep -q 'zoekt-git-index failed: .*write .*: no space left on device"' <(line_for local/alpha)
check "the summary says the volume was full (noSpace), for the corpus's status" \
  grep -q '"failedRepositories":\[[^]]*"local/alpha"[^]]*\],"noSpace":true}}$' <(tail -n 1 "$T/out")
check "the previous shard keeps serving through a full volume" test "$(cat "$(shard local/alpha)")" = "$before"
check "the partial shard is removed with its temporary directory" \
  test -z "$(find "$T/data/index" -name '*.tmp' -o -name '.tmp.*')"

# ---- a run killed mid-index (the Job's deadline) leaves no half shard -------------------------
retired_before=$(find "$T/data/index/.retired" -type f | sort)
( FAKE_HANG=local/beta setsid env REPOS_FILE="$T/repos.txt" DATA_DIR="$T/data" WORK_DIR="$T/work" \
    CREDENTIALS_DIR="$T/creds" TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" \
    FAKE_CALLS="$T/calls" dash "$SCRIPT" >/dev/null 2>&1 & echo $! >"$T/hang.pid"; wait ) &
partial() { grep -rqs partial "$T/data/index" --exclude-dir=.retired; }
check "the hanging run wrote a partial shard in its temporary directory" eventually 10 partial
kill -- -"$(cat "$T/hang.pid")" 2>/dev/null
wait
check "the partial shard never reached the index" test -z "$(grep -ls partial "$T/data/index"/*.zoekt)"
check "beta's previous shard is intact" grep -q "$(rev_of beta main)" "$(shard local/beta)"
run_indexer
check "the next run clears the leftovers" test -z "$(find "$T/data/index" -name '.tmp.*')"
all_exist() { local f; [ $# -gt 0 ] || return 1; for f in "$@"; do [ -e "$f" ] || return 1; done; }
# shellcheck disable=SC2086 # one path a word: $T has no spaces (mktemp)
check "but leaves every retired name younger than the grace" all_exist $retired_before

# ---- retired names are pruned once older than the grace (RETIRED_GRACE_SECONDS, default 900) ------
aged=$(retired local%2Falpha_v16.00001.zoekt | head -n 1)
old_name="$T/data/index/.retired/$(( $(date +%s) - 901 )).${aged#*/.retired/*.}"
mv "$aged" "$old_name"
young=$(retired local%2Fbeta_v16.00000.zoekt | head -n 1)
run_indexer
check "a retired name older than the grace is pruned by the next run" test ! -e "$old_name"
check "a younger one is kept" test -e "$young"
RETIRED_GRACE_SECONDS=0 run_indexer
check "with a grace of 0 every retired name is pruned by the run" test -z "$(find "$T/data/index/.retired" -type f)"
RETIRED_GRACE_SECONDS=15m run_indexer
rc=$?
check "a grace that is not a number of seconds fails the run" \
  bash -c "test $rc -ne 0 && grep -q 'RETIRED_GRACE_SECONDS must be a number of seconds' '$T/out'"

# ---- a shard that cannot be retired is neither replaced nor removed ------------------------------
cat >"$T/bin/ln" <<'EOF2'
#!/bin/sh
echo "ln: failed to create hard link: Operation not permitted" >&2
exit 1
EOF2
chmod +x "$T/bin/ln"
before=$(cat "$(shard local/alpha)")
echo change2 >>"$T/work-alpha/README"
git -C "$T/work-alpha" commit -q -am update2
git -C "$T/work-alpha" push -q "$T/remotes/alpha.git" main
run_indexer
check "a replacement whose retirement fails is reported with ln's reason" \
  grep -q '"status":"failed","step":"index","error":"cannot keep a name for the shard local%2Falpha_v16.00000.zoekt in .*Operation not permitted"' <(line_for local/alpha)
check "and the previous shard keeps serving" test "$(cat "$(shard local/alpha)")" = "$before"
check "and no temporary directory is left" test -z "$(find "$T/data/index" -name '.tmp.*')"
cp "$T/repos.txt" "$T/repos.keep"
grep -v alpha "$T/repos.keep" >"$T/repos.txt"
run_indexer
check "a removal whose retirement fails is reported as failed, not removed" \
  grep -q '"status":"failed","step":"remove","shard":"local%2Falpha_v16.00000.zoekt","error":"cannot keep a name' <(line_for local/alpha)
check "and the shard stays" test "$(cat "$(shard local/alpha)")" = "$before"
check "the summary names it" grep -q '"failedRepositories":\[.*"local/alpha"' "$T/out"
rm -f "$T/bin/ln"
mv "$T/repos.keep" "$T/repos.txt"
run_indexer
check "with hard links back, the replacement goes through" grep -q "$(rev_of alpha main)" "$(shard local/alpha)"

# ---- a repository whose name extends another's (alpha, alpha_v1) keeps its shard ---------------
make_remote alpha_v1 main
echo "local/alpha_v1 file://$T/remotes/alpha_v1.git" >>"$T/repos.txt"
run_indexer
FAKE_FAIL=local/alpha_v1 run_indexer
check "indexing local/alpha leaves local/alpha_v1's shard alone (its own failed index keeps it serving)" \
  test -f "$(shard local/alpha_v1)"
grep -v alpha_v1 "$T/repos.txt" >"$T/repos.new" && mv "$T/repos.new" "$T/repos.txt"
run_indexer

# ---- beta is no longer listed ------------------------------------------------------------------
grep -v beta "$T/repos.txt" >"$T/repos.new" && mv "$T/repos.new" "$T/repos.txt"
run_indexer
check "beta's removal is reported" grep -q '"status":"removed","shard":"local%2Fbeta_v16.00000.zoekt"' <(line_for local/beta)
check "beta's shard is gone" test ! -e "$(shard local/beta)"
check "beta's removed shard keeps a name in .retired" test -n "$(retired local%2Fbeta_v16.00000.zoekt)"
check "beta's mirror is gone" test ! -e "$T/data/repos/local/beta.git"
check "alpha stays" test -f "$(shard local/alpha)"

# ---- nothing indexable: non-zero exit ----------------------------------------------------------
FAKE_FAIL=local/alpha run_indexer
rc=$?
check "a run with no repository indexed exits non-zero" test "$rc" -ne 0
check "alpha's shard still serves after a failed run" test -f "$(shard local/alpha)"
: >"$T/empty.txt"
env REPOS_FILE="$T/empty.txt" DATA_DIR="$T/data" WORK_DIR="$T/work" dash "$SCRIPT" >"$T/out" 2>&1
rc=$?
check "an empty list fails without removing anything" test "$rc" -ne 0 -a -f "$(shard local/alpha)"

# ---- credentials: an https token through the credential helper, never printed ------------------
TOKEN=s3cr3t-t0ken-$RANDOM
printf '%s' "$TOKEN" >"$T/creds/token"
printf '%s' robot >"$T/creds/username"
python3 "$ZK_ROOT/tests/fixtures/indexer/auth-server.py" "$T/port" "$T/auth-headers" &
server=$!
on_exit "kill $server"
eventually 10 test -s "$T/port"
echo "private/repo http://127.0.0.1:$(cat "$T/port")/repo.git" >"$T/repos.txt"
run_indexer
check "the private repository fails (the server rejects every login)" grep -q '"status":"failed"' <(line_for private/repo)
expected="Basic $(printf 'robot:%s' "$TOKEN" | base64)"
check "git sent the Secret's username and token" grep -qxF "$expected" "$T/auth-headers"
check "the token is not in the output" bash -c "! grep -rqF '$TOKEN' '$T/out' '$T/err' '$T/termination-log' '$T/calls'"
check "the token is not in any mirror's config" bash -c "! grep -rqsF '$TOKEN' '$T/data'"
check "the helper is removed after the run" test ! -e "$T/work/credential-helper"
kill "$server" 2>/dev/null

# ---- credentials: an SSH key through GIT_SSH_COMMAND, never printed ----------------------------
rm -f "$T/creds/token" "$T/creds/username"
KEY="-----FAKE KEY $RANDOM-----"
printf '%s\n' "$KEY" >"$T/creds/ssh-privatekey"
cat >"$T/bin/ssh" <<EOF
#!/bin/sh
# Records how git called ssh and whether the key it was given is the Secret's, then fails.
echo "\$*" >>"$T/ssh-calls"
for a in "\$@"; do case \$a in $T/work/ssh-key) cmp -s "\$a" "$T/creds/ssh-privatekey" && echo same-key >>"$T/ssh-calls"; stat -c %a "\$a" >>"$T/ssh-calls";; esac; done
echo "fake ssh: connection refused" >&2
exit 255
EOF
chmod +x "$T/bin/ssh"
echo "example/ssh ssh://git@git.example.com/org/repo.git" >"$T/repos.txt"
run_indexer
check "git ran ssh with the copied key and strict options" \
  grep -qF -- "-i $T/work/ssh-key -o IdentitiesOnly=yes -o BatchMode=yes" "$T/ssh-calls"
check "the copy is the Secret's key, readable only by its owner" \
  bash -c "grep -qx same-key '$T/ssh-calls' && grep -qx 600 '$T/ssh-calls'"
check "the ssh failure is reported" grep -q 'fake ssh: connection refused' <(line_for example/ssh)
check "the key is not in the output" bash -c "! grep -qF -- '$KEY' '$T/out' '$T/err'"
check "the key copy is removed after the run" test ! -e "$T/work/ssh-key"

# ---- branches that do not exist: named, instead of zoekt-git-index's "reference not found" --------
# A bare repository whose HEAD names a branch nobody pushed (git init's default is not main here).
git init -q --bare -b trunk "$T/remotes/headless.git"
git -C "$T/work-alpha" push -q "$T/remotes/headless.git" main
printf 'local/headless file://%s/remotes/headless.git\nlocal/beta file://%s/remotes/beta.git main,relase\n' "$T" "$T" >"$T/repos.txt"
run_indexer
check "a remote HEAD naming a missing branch is reported by name" \
  grep -q '"status":"failed","step":"index","error":"no branch trunk (the remote'"'"'s default branch) in the repository (its branches: main)"' <(line_for local/headless)
check "a misspelled branch is reported by name" \
  grep -q '"error":"no branch relase in the repository (its branches: dev main)"' <(line_for local/beta)
check "neither reached zoekt-git-index" bash -c "! grep -q 'headless.git\$' '$T/calls'"

# ---- the code host: zoekt.web-url and zoekt.web-url-type in each mirror, for zoekt-git-index --------
printf 'local/alpha file://%s/remotes/alpha.git HEAD gitea https://gitea.example.org/org/alpha\nlocal/beta file://%s/remotes/beta.git main,dev\n' \
  "$T" "$T" >"$T/repos.txt"
: >"$T/calls"
run_indexer
zoekt_keys() { git --git-dir="$T/data/repos/$1.git" config --get-regexp '^zoekt\.web-url' | sort; }
check "code host: alpha, listed with gitea, is indexed" grep -q '"status":"indexed"' <(line_for local/alpha)
check "code host: alpha's mirror has zoekt.web-url and zoekt.web-url-type gitea" \
  test "$(zoekt_keys local/alpha)" = "$(printf 'zoekt.web-url https://gitea.example.org/org/alpha\nzoekt.web-url-type gitea')"
check "code host: zoekt-git-index found them there (its shard records them)" \
  grep -qx "local/alpha $(rev_of alpha main) gitea https://gitea.example.org/org/alpha" "$(shard local/alpha)"
check "code host: HEAD before them is the remote HEAD" grep -qE -- "-branches HEAD $T/data/repos/local/alpha.git\$" "$T/calls"
check "code host: beta, listed without one, has neither key" test -z "$(zoekt_keys local/beta)"
check "code host: and its shard no address" grep -qx "local/beta $(rev_of beta main) - -" "$(shard local/beta)"
printf 'local/alpha file://%s/remotes/alpha.git\nlocal/beta file://%s/remotes/beta.git main,dev gitlab https://gitlab.example.org/org/beta\n' \
  "$T" "$T" >"$T/repos.txt"
INDEXER_MODE=refresh INDEXER_REPOSITORIES="local/alpha local/beta" POLL_INTERVAL_SECONDS=0 run_indexer
check "code host: a refresh run indexes both" test "$(grep -c '"status":"indexed"' "$T/out")" -eq 2
check "code host: a code host no longer listed is unset at the next index" test -z "$(zoekt_keys local/alpha)"
check "code host: and alpha's new shard has no address" grep -qx "local/alpha $(rev_of alpha main) - -" "$(shard local/alpha)"
check "code host: beta's, listed after its branches, is set" \
  test "$(zoekt_keys local/beta)" = "$(printf 'zoekt.web-url https://gitlab.example.org/org/beta\nzoekt.web-url-type gitlab')"
check "code host: beta is indexed on both of its branches" grep -qE -- "-branches main,dev $T/data/repos/local/beta.git\$" "$T/calls"

# ---- symbols: universal-ctags by default, a ctags failure degrades one repository, SYMBOLS=false ----
printf 'local/alpha file://%s/remotes/alpha.git\nlocal/beta file://%s/remotes/beta.git main,dev\n' "$T" "$T" >"$T/repos.txt"
# A Universal Ctags under Debian's name, which zoekt-git-index would not find by itself, knowing two
# languages; run otherwise, it prints its arguments one a line.
cat >"$T/bin/ctags-universal" <<'EOF'
#!/bin/sh
case $1 in
--version) echo "Universal Ctags 5.9.0, Copyright (C) 2015 Universal Ctags Team" ;;
--list-languages) printf 'Go\nC [disabled]\n' ;;
*) printf '%s\n' "$@" ;;
esac
EOF
chmod +x "$T/bin/ctags-universal"
: >"$T/calls"
rm -f "$T/calls.ctags"
FAKE_CTAGS_FAIL=local/beta run_indexer
check "symbols: the run succeeds" test $? -eq 0
check "symbols: every line is JSON" all_json
check "symbols: zoekt-git-index gets ctags through a wrapper named universal-ctags (its JSON mode)" \
  test "$(sort -u "$T/calls.ctags")" = "$T/work/bin/universal-ctags"
check "symbols: the wrapper keeps the languages ctags knows or the arguments define, and every other argument" \
  test "$("$T/work/bin/universal-ctags" '--regex-x=/a b/' --langdef=tsx --languages=go,Thrift,C,tsx --fields=\*)" = \
  "$(printf '%s\n' '--regex-x=/a b/' --langdef=tsx --languages=go,C,tsx '--fields=*')"
check "symbols: -disable_ctags is not passed" bash -c "! grep -q -- -disable_ctags '$T/calls'"
check "symbols: alpha is indexed with symbols" grep -q '"shards":1,"symbols":true,' <(line_for local/alpha)
check "symbols: beta, whose ctags run failed, is indexed for text search and says why" \
  grep -q '"status":"indexed".*"symbols":false,"symbolsError":"ctags failed, so the repository is indexed for text search only: .*fake ctags crash"' <(line_for local/beta)
check "symbols: the summary names the repository without symbols" \
  grep -qx '{"summary":{"indexed":2,"failed":0,"removed":0,"failedRepositories":\[\],"withoutSymbols":\["local/beta"\]}}' "$T/out"
: >"$T/calls"
alpha_shard=$(stat -c '%i %Y' "$(shard local/alpha)")
CTAGS_COMMAND=$T/bin/no-such-ctags run_indexer
check "symbols without a ctags: the run fails" test $? -eq 1
check "symbols without a ctags: zoekt-git-index never runs" test ! -s "$T/calls"
check "symbols without a ctags: the summary says why and what to do" \
  grep -q '^{"summary":{"indexed":0,"failed":0,"removed":0,"error":"symbols are on (spec.indexer.symbols), but the indexer image has no Universal Ctags (CTAGS_COMMAND='"$T"'/bin/no-such-ctags is not one; .*set spec.indexer.symbols: false to index for text search only; nothing was indexed and the previous index keeps serving"}}$' "$T/out"
check "symbols without a ctags: the summary is the termination message" cmp -s "$T/out" "$T/termination-log"
check "symbols without a ctags: the previous shards stay as they were" test "$(stat -c '%i %Y' "$(shard local/alpha)")" = "$alpha_shard"
: >"$T/calls"
SYMBOLS=false run_indexer
check "SYMBOLS=false: -disable_ctags before the extra flags" grep -qE -- "-branches main,dev -disable_ctags $T/data/repos/local/beta.git\$" "$T/calls"
check "SYMBOLS=false: no symbols member, no withoutSymbols" bash -c "! grep -q symbols '$T/out'"
SYMBOLS=no run_indexer
check "SYMBOLS=no is refused" grep -q "SYMBOLS must be true or false, not 'no'" "$T/out"
rm -f "$T/bin/ctags-universal"

# ---- search shards (SHARDS=3): one full run per shard, each into its own folder, side by side -------
# A volume of its own, first indexed in the one-shard layout, which must stay as it is: the operator
# keeps serving it from /data/index until the three shards' folders are complete.
make_remote gamma main
make_remote delta main
make_remote epsilon main
S=$T/sharded
cat >"$T/srepos.txt" <<EOF
local/alpha file://$T/remotes/alpha.git
local/beta file://$T/remotes/beta.git main,dev
local/gamma file://$T/remotes/gamma.git
local/delta file://$T/remotes/delta.git
EOF
# The operator's assignment, written by hand (the script never computes one): shard 1 serves two.
cat >"$T/shards.txt" <<EOF
# shards: 3. Written by zoekt-operator: the search shard of each repository of repositories.txt.
0 local/alpha
1 local/beta
1 local/gamma
2 local/delta
EOF
# run_sharded RUN [VAR=VALUE...]: the script on the sharded volume, with its own work folder and
# termination message ($T/RUN.term), so that runs can go side by side; output in $T/RUN.out.
run_sharded() {
  local run=$1
  shift
  env REPOS_FILE="$T/srepos.txt" SHARDS_FILE="$T/shards.txt" DATA_DIR="$S" WORK_DIR="$T/work-$run" \
    CREDENTIALS_DIR="$T/creds" TERMINATION_LOG="$T/$run.term" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" \
    FAKE_CALLS="$T/calls" PATH="$T/bin:$PATH" "$@" dash "$SCRIPT" >"$T/$run.out" 2>"$T/$run.err"
}
# zoekt_files DIR: the shard files in index folder DIR, by name, on one line.
zoekt_files() { (cd "$1" 2>/dev/null && ls -- *.zoekt 2>/dev/null) | tr '\n' ' '; }
# tree DIR: every file and folder below DIR with its inode and modification time, for "untouched".
tree() { find "$1" -printf '%P %i %T@\n' | sort; }
run_sharded one
check "shards: the one-shard layout indexes the four repositories into $S/index" \
  test "$(zoekt_files "$S/index")" = "local%2Falpha_v16.00000.zoekt local%2Fbeta_v16.00000.zoekt local%2Fdelta_v16.00000.zoekt local%2Fgamma_v16.00000.zoekt "
layout1=$(tree "$S/index")
volume=$(tree "$S")

# Refusals: each says why in the summary, the termination message, and writes nothing on the volume.
run_sharded bad SHARDS=3
rc=$?
check "shards: a full run without SHARD or JOB_COMPLETION_INDEX fails" test "$rc" -eq 1
check "shards: saying which shard is missing, in the summary the controller reads" \
  grep -qx '{"summary":{"indexed":0,"failed":0,"removed":0,"error":"SHARDS is 3, but neither SHARD nor JOB_COMPLETION_INDEX says which shard this run indexes (the CronJob must be an Indexed Job)"}}' "$T/bad.term"
run_sharded bad SHARDS=3 JOB_COMPLETION_INDEX=3
check "shards: a shard out of range is refused" grep -q '"error":"SHARD must be a shard from 0 to 2, not '"'"'3'"'"'"' "$T/bad.term"
run_sharded bad SHARDS=3 SHARD=0 SHARDS_FILE="$T/no-such-shards.txt"
check "shards: a missing shard list is refused, named" \
  grep -q '"error":"SHARDS is 3, but the shard list '"$T"'/no-such-shards.txt is not readable; nothing was indexed and the previous index keeps serving"' "$T/bad.term"
sed '1s/3/4/' "$T/shards.txt" >"$T/shards4.txt"
run_sharded bad SHARDS=3 SHARD=0 SHARDS_FILE="$T/shards4.txt"
check "shards: a shard list written for another number of shards is refused" \
  grep -q '"error":"the shard list '"$T"'/shards4.txt is for 4 shards, but SHARDS is 3; ' "$T/bad.term"
run_sharded bad SHARDS=17 SHARD=0
check "shards: more than 16 shards are refused" grep -q '"error":"SHARDS must be a number of search shards from 1 to 16, not '"'"'17'"'"'"' "$T/bad.term"
check "shards: the refused runs wrote nothing on the volume" test "$(tree "$S")" = "$volume"

# Shard 1's run is held in its first zoekt-git-index until $T/gate exists; shard 0's (told by
# JOB_COMPLETION_INDEX, as in an Indexed Job's pod) must finish meanwhile.
rm -f "$T/gate"
run_sharded s1 SHARDS=3 SHARD=1 FAKE_WAIT="$T/gate" &
held=$!
holding() { compgen -G "$S/index-shards/3/1/.tmp.*" >/dev/null; }
eventually 10 holding
started=$(date +%s)
run_sharded s0 SHARDS=3 JOB_COMPLETION_INDEX=0
rc=$?
check "shards: shard 0's run finishes while shard 1's is still indexing (no run-wide lock between them)" \
  test "$rc" -eq 0 -a ! -e "$T/gate" -a "$(($(date +%s) - started))" -lt 10
check "shards: shard 1's run was indeed still running" kill -0 "$held"
touch "$T/gate"
wait "$held"
check "shards: shard 1's run ends well once let go" test $? -eq 0
run_sharded s2 SHARDS=3 SHARD=2
check "shards: shard 2's run ends well" test $? -eq 0
check "shards: folder 0 holds exactly alpha's shard" test "$(zoekt_files "$S/index-shards/3/0")" = "local%2Falpha_v16.00000.zoekt "
check "shards: folder 1 holds exactly beta's and gamma's" \
  test "$(zoekt_files "$S/index-shards/3/1")" = "local%2Fbeta_v16.00000.zoekt local%2Fgamma_v16.00000.zoekt "
check "shards: folder 2 holds exactly delta's" test "$(zoekt_files "$S/index-shards/3/2")" = "local%2Fdelta_v16.00000.zoekt "
check "shards: the shards hold the listed branch's commit" grep -q "$(rev_of beta main)" "$S/index-shards/3/1/local%2Fbeta_v16.00000.zoekt"
check "shards: the one-shard layout's folder is untouched" test "$(tree "$S/index")" = "$layout1"
check "shards: shard 1's summary, in today's format, names its shard" \
  grep -qx '{"summary":{"indexed":2,"failed":0,"removed":0,"searchShard":1,"searchShards":3,"failedRepositories":\[\][^}]*}}' "$T/s1.term"
check "shards: and is its termination message" cmp -s <(tail -n 1 "$T/s1.out") "$T/s1.term"
check "shards: each run used its own temporary folder in its shard's folder" \
  grep -qE "^-index $S/index-shards/3/1/\.tmp\.[A-Za-z0-9]+ -repo_cache $S/repos -branches main,dev .*$S/repos/local/beta.git\$" "$T/calls"
check "shards: no temporary folder is left" test -z "$(find "$S" -name '.tmp.*')"
exec 5>"$S/.indexer.3.1.lock"
flock 5
run_sharded s1 SHARDS=3 SHARD=1
check "shards: a second run of one shard is turned away by that shard's lock" \
  grep -q '"error":"another indexer run holds '"$S"'/.indexer.3.1.lock"' "$T/s1.out"
run_sharded s0 SHARDS=3 SHARD=0
check "shards: which another shard's run does not wait for" grep -q '"indexed":1,' "$T/s0.out"
exec 5>&-

# A repository the shard list does not name: not indexed anywhere, reported once (by shard 0's run).
echo "local/epsilon file://$T/remotes/epsilon.git" >>"$T/srepos.txt"
run_sharded s1 SHARDS=3 SHARD=1
check "shards: shard 1's run says nothing of a repository no shard serves" bash -c "! grep -q epsilon '$T/s1.out'"
run_sharded s0 SHARDS=3 SHARD=0
check "shards: shard 0's run reports it failed, saying why" \
  grep -q '"status":"failed","step":"assign","error":"the shard list '"$T"'/shards.txt names no shard from 0 to 2 for it, so it is not indexed into any of the 3 shards' \
  <(grep -F '"repository":"local/epsilon"' "$T/s0.out")
check "shards: in failedRepositories, while its own repository is indexed" \
  grep -q '"indexed":1,"failed":1,.*"failedRepositories":\["local/epsilon"\]' "$T/s0.term"
check "shards: it has no shard anywhere" test -z "$(find "$S" -name 'local%2Fepsilon_*')"

# Delta leaves the lists: shard 2's run removes it from its folder alone, and, with nothing of its own
# left to index, succeeds; the shared mirror is shard 0's to remove.
grep -v delta "$T/srepos.txt" >"$T/srepos.new" && mv "$T/srepos.new" "$T/srepos.txt"
grep -v delta "$T/shards.txt" >"$T/shards.new" && mv "$T/shards.new" "$T/shards.txt"
run_sharded s2 SHARDS=3 SHARD=2
rc=$?
check "shards: shard 2 removes delta's shard from its folder" \
  grep -q '"repository":"local/delta","status":"removed","shard":"local%2Fdelta_v16.00000.zoekt"' "$T/s2.out"
check "shards: keeping a retired name in its own .retired" test -n "$(find "$S/index-shards/3/2/.retired" -name '*local%2Fdelta_v16.00000.zoekt')"
check "shards: a shard with no repository left succeeds (exit $rc)" test "$rc" -eq 0
check "shards: folder 2 is empty" test -z "$(zoekt_files "$S/index-shards/3/2")"
check "shards: delta's mirror stays for shard 0's run" test -d "$S/repos/local/delta.git"
run_sharded s0 SHARDS=3 SHARD=0
check "shards: which removes it" test ! -e "$S/repos/local/delta.git"
check "shards: the one-shard layout still serves delta, untouched" test "$(tree "$S/index")" = "$layout1"

# The refresh pod serves every shard: a request is indexed into its repository's shard's folder.
echo more >>"$T/work-gamma/README"
git -C "$T/work-gamma" commit -q -am more
git -C "$T/work-gamma" push -q "$T/remotes/gamma.git" main
other_folders=$(tree "$S/index-shards/3/0")
run_sharded r SHARDS=3 INDEXER_MODE=refresh POLL_INTERVAL_SECONDS=0 INDEXER_REPOSITORIES="local/gamma local/epsilon"
check "shards: a refresh run indexes a requested repository" grep -q '"repository":"local/gamma","status":"indexed"' "$T/r.out"
check "shards: into its shard's folder" grep -q "$(rev_of gamma main)" "$S/index-shards/3/1/local%2Fgamma_v16.00000.zoekt"
check "shards: and nowhere else" test -z "$(find "$S/index-shards/3/0" "$S/index-shards/3/2" -name 'local%2Fgamma_*')"
check "shards: another shard's folder is untouched" test "$(tree "$S/index-shards/3/0")" = "$other_folders"
check "shards: the one-shard layout keeps its own gamma" test "$(tree "$S/index")" = "$layout1"
check "shards: a request for a repository no shard serves fails, saying why" \
  grep -q '"status":"failed","step":"assign","error":"the shard list .* names no shard from 0 to 2 for it' \
  <(grep -F '"repository":"local/epsilon"' "$T/r.out")
check "shards: and is dropped, indexed nowhere" test ! -e "$S/queue/local%2Fepsilon" -a -z "$(find "$S" -name 'local%2Fepsilon_*')"
echo more >>"$T/work-beta/README"
git -C "$T/work-beta" commit -q -am more
git -C "$T/work-beta" push -q "$T/remotes/beta.git" main
run_sharded r SHARDS=3 INDEXER_MODE=refresh
check "shards: a poll finds beta moved and indexes it into its shard's folder" \
  grep -q "$(rev_of beta main)" "$S/index-shards/3/1/local%2Fbeta_v16.00000.zoekt"
check "shards: the poll's pass reports the repository no shard serves too" grep -q '"failedRepositories":\["local/epsilon"\]' "$T/r.out"
run_sharded r SHARDS=3 INDEXER_MODE=refresh SHARDS_FILE="$T/no-such-shards.txt"
check "shards: a refresh run without its shard list refuses to start" \
  grep -q '"error":"SHARDS is 3, but the shard list .*no-such-shards.txt is not readable' "$T/r.term"

# A layout indexed anew (FRESH_INDEX, the Job of a move to this layout): what an earlier use left is not
# served again. With gamma's host gone, a plain run keeps gamma's old shard (the previous index serves);
# a fresh one retires it, so the layout holds only what this run indexed.
mv "$T/remotes/gamma.git" "$T/remotes/gamma.git.gone"
run_sharded s1 SHARDS=3 SHARD=1
check "shards: a plain run keeps the shard of a repository whose host is gone" \
  test "$(zoekt_files "$S/index-shards/3/1")" = "local%2Fbeta_v16.00000.zoekt local%2Fgamma_v16.00000.zoekt "
other_folders=$(tree "$S/index-shards/3/0")
run_sharded s1 SHARDS=3 SHARD=1 FRESH_INDEX=1
check "shards: a fresh run indexes what it can" grep -q '"repository":"local/beta","status":"indexed"' "$T/s1.out"
check "shards: and fails gamma at its fetch" grep -q '"repository":"local/gamma","status":"failed","step":"fetch"' "$T/s1.out"
check "shards: its folder then holds beta's shard alone" \
  test "$(zoekt_files "$S/index-shards/3/1")" = "local%2Fbeta_v16.00000.zoekt "
check "shards: gamma's old shard kept a retired name" \
  test -n "$(find "$S/index-shards/3/1/.retired" -name '*local%2Fgamma_v16.00000.zoekt')"
check "shards: another shard's folder is untouched by it" test "$(tree "$S/index-shards/3/0")" = "$other_folders"
mv "$T/remotes/gamma.git.gone" "$T/remotes/gamma.git"

# ---- busybox: upstream's zoekt image is Alpine, whose sh and tools are busybox applets ----------
if command -v busybox >/dev/null 2>&1; then
  mkdir -p "$T/busybox"
  for a in sh awk cat chmod cp cut date dirname basename find grep head ln mkdir mktemp mv rm sed tail tr; do
    ln -sf "$(command -v busybox)" "$T/busybox/$a"
  done
  printf 'local/alpha file://%s/remotes/alpha.git\nlocal/broken file://%s/remotes/missing.git\n' "$T" "$T" >"$T/repos.txt"
  rm -rf "${T:?}/data"
  rm -f "${T:?}"/creds/*
  bb_run() {
    env REPOS_FILE="$T/repos.txt" DATA_DIR="$T/data" WORK_DIR="$T/work" CREDENTIALS_DIR="$T/creds" \
      TERMINATION_LOG="$T/termination-log" ZOEKT_GIT_INDEX="$T/bin/zoekt-git-index" FAKE_CALLS="$T/calls" \
      PATH="$T/busybox:$T/bin:$PATH" busybox sh "$SCRIPT" >"$T/out" 2>"$T/err"
  }
  bb_run
  check "busybox: alpha indexed" grep -q '"status":"indexed"' <(line_for local/alpha)
  check "busybox: the broken repository reported" grep -q '"status":"failed","step":"clone"' <(line_for local/broken)
  check "busybox: every line is JSON" all_json
  check "busybox: nothing on stderr" test ! -s "$T/err"
  printf 'local/broken file://%s/remotes/missing.git\n' "$T" >"$T/repos.txt"
  bb_run
  check "busybox: an unlisted repository's removal is reported" grep -q '"status":"removed"' <(line_for local/alpha)
  check "busybox: its shard is gone" test ! -e "$(shard local/alpha)"
  printf 'local/alpha file://%s/remotes/alpha.git\nlocal/broken file://%s/remotes/missing.git\n' "$T" "$T" >"$T/repos.txt"
  printf '# shards: 2. By hand.\n1 local/alpha\n0 local/broken\n' >"$T/shards-bb.txt"
  SHARDS=2 SHARD=1 SHARDS_FILE="$T/shards-bb.txt" bb_run
  check "busybox: shard 1 of 2 indexes its repository into its folder" \
    test -f "$T/data/index-shards/2/1/local%2Falpha_v16.00000.zoekt" -a ! -e "$(shard local/alpha)"
  check "busybox: and leaves the other shard's repository alone" \
    grep -qx '{"summary":{"indexed":1,"failed":0,"removed":0,"searchShard":1,"searchShards":2,"failedRepositories":\[\][^}]*}}' "$T/out"
else
  skip "busybox pass: busybox is not installed (scripts/deps.sh installs it)"
fi

finish
