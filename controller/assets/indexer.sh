#!/bin/sh
# indexer.sh: mirrors and indexes the repositories of one CodeSearchCorpus. Runs in the indexer Job's
# pod (the zoekt image: busybox sh, git, zoekt-git-index), so it is plain POSIX sh.
#
# Input: the repository list ($REPOS_FILE), one repository per line, fields separated by spaces
# (names, URLs and branches never contain whitespace; the controller validates that):
#     <name> <url> [<branches, comma-separated; absent or HEAD for the remote HEAD> [<kind> <web-url>]]
# kind and web-url are the repository's code host (spec.repositories[].codeHost and webURL, or what the
# controller inferred), written to the mirror's zoekt.web-url-type and zoekt.web-url before each index:
# zoekt-git-index makes every file's address on the code host from them.
# Lines that are empty or start with '#' are ignored. Arguments to this script are passed on to every
# zoekt-git-index call (spec.indexer.extraFlags).
#
# For each repository: `git clone --mirror` the first time, `git fetch --prune` after, into
# $REPOS_DIR/<name>.git; then zoekt-git-index into a fresh temporary directory inside $INDEX_DIR and,
# only when that succeeded, rename the new shards into $INDEX_DIR (rename within one file system is
# atomic, so the webserver never sees half a shard, and a run killed at its deadline leaves the
# previous shards serving). Shards and mirrors of repositories no longer listed are removed.
#
# Every shard this script replaces or removes is first hard-linked into $INDEX_DIR/.retired, and the
# link is kept for $RETIRED_GRACE_SECONDS (default 900) before a later run prunes it. zoekt-webserver
# maps shards and closes them; on NFS (EFS) the server frees an inode once its last name is gone, and
# the webserver's mapping of a shard renamed over by another client then faults (upstream Zoekt
# #1109). The link keeps the inode until the webserver has long stopped using it (docs/indexer.md).
#
# Output: one JSON object per line on stdout for each repository ("indexed", "failed" or "removed"),
# then one summary line (with "noSpace":true when the volume was full), also written to
# $TERMINATION_LOG for the controller to read from the pod's status. Exit status: 0 when at least one
# repository was indexed (or the run had none of its own to index and nothing failed), 1 otherwise.
#
# Search shards (spec.webserver.shards, issue 32): with $SHARDS = N > 1, the corpus is served by N
# webservers, and $SHARDS_FILE ("<k> <name>" lines, written by the operator) says which shard k serves
# each repository. Shard k's index is the folder $DATA_DIR/index-shards/N/k, a complete index folder of
# its own (its .retired, its temporary directories), in place of $INDEX_DIR, which stays the folder of
# the one-shard layout. A full run indexes the repositories of one shard, $SHARD (else $JOB_COMPLETION_INDEX: the
# nightly CronJob is then an Indexed Job of N pods), and prunes only its folder; the N runs go side by
# side. A refresh or watch run indexes each repository into its shard's folder. Mirrors, locks, records
# and the queue are shared by every layout. No run touches the folders of another N, which keep serving
# while the operator moves a corpus from one N to another. Without $SHARDS, or with 1, nothing of this.
# With $FRESH_INDEX = 1 (the Job that indexes a layout the corpus moves to), a full run first retires
# and removes every shard its folder holds: what an earlier use of the same layout left there is not
# served again (a repository that fails now would otherwise come back at that old index).
#
# Modes ($INDEXER_MODE), all sharing the per-repository lock $DATA_DIR/locks/<shard prefix>.lock, so
# that two runs never index one repository at once (docs/indexer.md, "Freshness"):
#     full (default)  the nightly run above: every listed repository, then the removal of unlisted ones
#     refresh         one pass: enqueues $INDEXER_REPOSITORIES (names, space-separated), polls every
#                     remote's branch heads when $POLL_INTERVAL_SECONDS is not 0, then indexes only the
#                     repositories with a request in $DATA_DIR/queue (one file per repository, so any
#                     number of requests for one repository give one run)
#     watch           refresh passes forever: the queue every $QUEUE_CHECK_SECONDS (default 5), the
#                     poll every $POLL_INTERVAL_SECONDS (default 300; 0: requests only)
# Every successful index records the commit of each indexed branch in $DATA_DIR/state/<prefix>.heads,
# which is what a poll compares the remote's heads with.
#
# Symbols: unless $SYMBOLS is false (spec.indexer.symbols), zoekt-git-index runs universal-ctags on
# every file, so that find_symbol and Zoekt's sym: find definitions. A ctags failure does not fail the
# repository (no -require_ctags): it is indexed for text search only, and its line says "symbols":false
# with the reason; the summary names such repositories in "withoutSymbols".
#
# $GIT_CA_BUNDLE, when set, is a PEM file of CA certificates git trusts for https (a private CA).
# Credentials ($CREDENTIALS_DIR, the mounted Secret) are read from files when git asks for them and
# never appear in arguments, the environment, the output or the mirrors' configuration:
#     ssh-privatekey (+ optional known_hosts)      for ssh:// and user@host:path URLs
#     password or token (+ optional username)      for https:// URLs (username default x-access-token)
set -u

REPOS_FILE=${REPOS_FILE:-/etc/codesearch/config/repositories.txt}
DATA_DIR=${DATA_DIR:-/data}
REPOS_DIR=${REPOS_DIR:-$DATA_DIR/repos}
INDEX_DIR=${INDEX_DIR:-$DATA_DIR/index}
CREDENTIALS_DIR=${CREDENTIALS_DIR:-/etc/codesearch/git-credentials}
INDEXER_MODE=${INDEXER_MODE:-full}
SHARDS=${SHARDS:-1}
SHARDS_FILE=${SHARDS_FILE:-/etc/codesearch/config/shards.txt}
SHARD=${SHARD:-${JOB_COMPLETION_INDEX:-}}
WORK_DIR=${WORK_DIR:-${TMPDIR:-/tmp}/codesearch-$INDEXER_MODE}
# Mirrors found on disk are compared with listed paths as strings, so the form must be canonical.
REPOS_DIR=${REPOS_DIR%/}
INDEX_DIR=${INDEX_DIR%/}
# The folders of the N shards' indexes, one layout per N (see the header).
SHARDS_ROOT=$DATA_DIR/index-shards/$SHARDS
ZOEKT_GIT_INDEX=${ZOEKT_GIT_INDEX:-zoekt-git-index}
TERMINATION_LOG=${TERMINATION_LOG:-/dev/termination-log}
# Where replaced and removed shards keep a name until no webserver can still be mapping them. A
# folder inside $INDEX_DIR, so the link is on the same file system; zoekt-webserver loads only
# $INDEX_DIR/*.zoekt and never looks into subfolders.
RETIRED_DIR=$INDEX_DIR/.retired
RETIRED_GRACE_SECONDS=${RETIRED_GRACE_SECONDS:-900}
# Freshness: requests (one empty file per repository, named by its shard prefix), the indexed heads
# of each repository, and the per-repository locks, all on the shared volume.
QUEUE_DIR=$DATA_DIR/queue
STATE_DIR=$DATA_DIR/state
LOCK_DIR=$DATA_DIR/locks
POLL_INTERVAL_SECONDS=${POLL_INTERVAL_SECONDS:-300}
QUEUE_CHECK_SECONDS=${QUEUE_CHECK_SECONDS:-5}
POLL_PARALLEL=${POLL_PARALLEL:-4}
# Each mode's temporary shard directories have their own prefix, so that the cleanup of one mode's
# leftovers never removes the directory another mode's run is writing.
case $INDEXER_MODE in
full) TMP_PREFIX=.tmp. ;;
refresh | watch) TMP_PREFIX=.tmp-refresh. ;;
*) printf '{"summary":{"indexed":0,"failed":0,"removed":0,"error":"INDEXER_MODE must be full, refresh or watch"}}\n'; exit 1 ;;
esac
# A transfer slower than 1 KB/s for a minute is abandoned rather than left to eat the Job's deadline.
export GIT_HTTP_LOW_SPEED_LIMIT="${GIT_HTTP_LOW_SPEED_LIMIT:-1000}"
export GIT_HTTP_LOW_SPEED_TIME="${GIT_HTTP_LOW_SPEED_TIME:-60}"
# Never wait for a password on a terminal that is not there.
export GIT_TERMINAL_PROMPT=0

# json_str VALUE: VALUE as the inside of a JSON string (control characters dropped).
json_str() {
    printf '%s' "$1" | tr '\t\r\n' '   ' | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}

# shard_prefix NAME: the file name prefix zoekt gives the shards of repository NAME (Go's
# url.QueryEscape; repository names are restricted to [A-Za-z0-9._/-], so only '/' needs escaping).
shard_prefix() {
    printf '%s' "$1" | sed -e 's|/|%2F|g'
}

# shard_owner SHARD: the prefix of the repository SHARD belongs to (its name without _v<n>.<n>.zoekt).
shard_owner() {
    basename "$1" | sed -e 's/_v[0-9]*\.[0-9]*\.zoekt$//'
}

# first_lines FILE: the first three non-empty lines of FILE on one line, cut to 300 characters, for
# error messages (git puts the cause first and generic advice after it).
first_lines() {
    grep -v '^[[:space:]]*$' "$1" 2>/dev/null | head -n 3 | tr '\n' ' ' | cut -c 1-300 | sed -e 's/ *$//'
}

now() { date +%s; }

# failure STEP LOG: the error message for a step (git clone/fetch, zoekt-git-index) that failed with
# its output in LOG. A full volume is said first and plainly: the tools' own words for it ("write
# <long temporary path>: no space left on device") can come after other lines and be cut away.
failure() {
    nospace=$(grep -i -m 1 'no space left on device' "$2" 2>/dev/null | cut -c 1-300)
    if [ -n "$nospace" ]; then
        free=$(df -Pk "$DATA_DIR" 2>/dev/null | awk 'NR == 2 { print $4 }')
        printf 'no space left on the volume (%s KiB free at %s once the partial output is removed); the previous shards keep serving: %s failed: %s' \
            "${free:-?}" "$DATA_DIR" "$1" "$nospace"
    else
        printf '%s failed: %s' "$1" "$(first_lines "$2")"
    fi
}

# find_ctags: prints the universal-ctags command zoekt-git-index should run, or nothing. $CTAGS_COMMAND
# is taken as it is when set. Otherwise the first Universal Ctags on PATH, through a wrapper
# ($WORK_DIR/bin/universal-ctags) for two reasons. zoekt-git-index looks only for a command named
# universal-ctags, and runs ctags in its JSON mode (kinds by name, "function", and parents) only when
# the command's name holds "universal-ctags"; Debian names the binary ctags-universal (and ctags). And
# it asks for languages older ctags lack (Debian 12's 5.9 has no Thrift), which makes ctags refuse to
# start at all, so the wrapper drops from --languages what the binary does not know.
find_ctags() {
    if [ -n "${CTAGS_COMMAND:-}" ]; then
        command -v "$CTAGS_COMMAND" 2>/dev/null
        return
    fi
    for c in universal-ctags ctags-universal ctags; do
        path=$(command -v "$c" 2>/dev/null) || continue
        "$path" --version 2>/dev/null | grep -q 'Universal Ctags' || continue
        mkdir -p "$WORK_DIR/bin" && rm -f "$WORK_DIR/bin/universal-ctags" &&
            ctags_wrapper "$path" >"$WORK_DIR/bin/universal-ctags" &&
            chmod 755 "$WORK_DIR/bin/universal-ctags" && printf '%s\n' "$WORK_DIR/bin/universal-ctags"
        return
    done
}

# ctags_wrapper CTAGS: a script that runs CTAGS with zoekt's arguments, keeping in --languages only the
# languages CTAGS knows or the arguments define (--langdef=NAME).
ctags_wrapper() {
    cat <<EOF
#!/bin/sh
real='$1'
known=\$("\$real" --list-languages 2>/dev/null | sed -e 's/ .*//')
for a; do
    shift
    case \$a in
    --langdef=*) known="\$known
\${a#--langdef=}" ;;
    --languages=*)
        keep=
        old_ifs=\$IFS
        IFS=,
        for l in \${a#--languages=}; do
            printf '%s\\n' "\$known" | grep -qixF -- "\$l" && keep="\$keep,\$l"
        done
        IFS=\$old_ifs
        a="--languages=\${keep#,}" ;;
    esac
    set -- "\$@" "\$a"
done
exec "\$real" "\$@"
EOF
}

# report_summary SUMMARY: prints the run's summary line and leaves it as the pod's termination message,
# where the controller reads it (status.indexer, the Indexed condition).
report_summary() {
    printf '%s\n' "$1"
    if [ -w "$TERMINATION_LOG" ] || { [ ! -e "$TERMINATION_LOG" ] && [ -w "$(dirname "$TERMINATION_LOG")" ]; }; then
        printf '%s\n' "$1" >"$TERMINATION_LOG"
    fi
}

# error_summary MESSAGE: the summary line of a run that stopped before indexing anything.
error_summary() {
    printf '{"summary":{"indexed":0,"failed":0,"removed":0,"error":"%s"}}' "$(json_str "$1")"
}

# fail_all MESSAGE: the run cannot index anything (a setting, the volume, the image); nothing was
# changed, the previous index keeps serving, and MESSAGE reaches the corpus's Indexed condition.
fail_all() {
    report_summary "$(error_summary "$1")"
    exit 1
}

[ -r "$REPOS_FILE" ] || fail_all "repository list $REPOS_FILE is not readable"
for v in RETIRED_GRACE_SECONDS POLL_INTERVAL_SECONDS QUEUE_CHECK_SECONDS; do
    eval "val=\$$v"
    case $val in
    '' | *[!0-9]*) fail_all "$v must be a number of seconds, not '$val'" ;;
    esac
done
case $POLL_PARALLEL in
'' | 0 | *[!0-9]*) fail_all "POLL_PARALLEL must be a number of remotes asked at once (at least 1), not '$POLL_PARALLEL'" ;;
esac

# use_index DIR: the index folder the next repository is indexed into, with its .retired.
use_index() {
    INDEX_DIR=$1
    RETIRED_DIR=$INDEX_DIR/.retired
}

# shard_list_problem: why $SHARDS_FILE cannot say which shard serves a repository, or nothing. Its
# first line names the N it was written for: a pod whose SHARDS is another N (its ConfigMap updated
# before the operator replaced it) would otherwise index into another layout's folders.
shard_list_problem() {
    if [ ! -r "$SHARDS_FILE" ]; then
        printf 'SHARDS is %s, but the shard list %s is not readable' "$SHARDS" "$SHARDS_FILE"
        return
    fi
    written_for=$(sed -n -e 's/^# shards: \([0-9][0-9]*\).*/\1/p' "$SHARDS_FILE" | head -n 1)
    [ -z "$written_for" ] || [ "$written_for" = "$SHARDS" ] ||
        printf 'the shard list %s is for %s shards, but SHARDS is %s' "$SHARDS_FILE" "$written_for" "$SHARDS"
}

# SHARD is the shard of a full run only; one refresh run serves every shard. With one shard, shard 0's
# folder is $INDEX_DIR, as it always was.
case $SHARDS in
[1-9] | 1[0-6]) ;;
*) fail_all "SHARDS must be a number of search shards from 1 to 16, not '$SHARDS'" ;;
esac
if [ "$SHARDS" = 1 ]; then
    SHARD=0
else
    problem=$(shard_list_problem)
    [ -z "$problem" ] || fail_all "$problem; nothing was indexed and the previous index keeps serving"
    if [ "$INDEXER_MODE" = full ]; then
        case $SHARD in
        '') fail_all "SHARDS is $SHARDS, but neither SHARD nor JOB_COMPLETION_INDEX says which shard this run indexes (the CronJob must be an Indexed Job)" ;;
        0 | [1-9] | 1[0-5]) [ "$SHARD" -lt "$SHARDS" ] || fail_all "SHARD must be a shard from 0 to $((SHARDS - 1)), not '$SHARD'" ;;
        *) fail_all "SHARD must be a shard from 0 to $((SHARDS - 1)), not '$SHARD'" ;;
        esac
        use_index "$SHARDS_ROOT/$SHARD"
    else
        use_index "$SHARDS_ROOT/0"
    fi
fi

# index_dirs: the index folders this run writes, one a line: $INDEX_DIR, or in a refresh run with
# SHARDS > 1, the folder of every shard.
index_dirs() {
    if [ "$SHARDS" -gt 1 ] && [ "$INDEXER_MODE" != full ]; then
        k=0
        while [ "$k" -lt "$SHARDS" ]; do
            printf '%s\n' "$SHARDS_ROOT/$k"
            k=$((k + 1))
        done
    else
        printf '%s\n' "$INDEX_DIR"
    fi
}

mkdir -p "$REPOS_DIR" "$INDEX_DIR" "$RETIRED_DIR" "$WORK_DIR" "$QUEUE_DIR" "$STATE_DIR" "$LOCK_DIR" ||
    fail_all "cannot create $REPOS_DIR, $INDEX_DIR, $RETIRED_DIR, $WORK_DIR or the queue, state and lock folders in $DATA_DIR"
index_dirs | while read -r d; do mkdir -p "$d/.retired" || exit 1; done ||
    fail_all "cannot create the index folders of the $SHARDS shards in $SHARDS_ROOT"
chmod 700 "$WORK_DIR"
export HOME="$WORK_DIR"

# One run of each kind at a time per volume: a reindex Job may start while the nightly one is still
# running, and a refresh Deployment's pod may overlap its successor during a rollout. A full run and a
# refresh run may run side by side: they meet only at repositories, each under its own lock. So may
# the full runs of different shards, which write different folders and index different repositories.
have_flock=0
command -v flock >/dev/null 2>&1 && have_flock=1
run_lock=$DATA_DIR/.indexer.lock
[ "$SHARDS" -gt 1 ] && run_lock=$DATA_DIR/.indexer.$SHARDS.$SHARD.lock
[ "$INDEXER_MODE" = full ] || run_lock=$DATA_DIR/.refresh.lock
if [ "$have_flock" = 1 ]; then
    exec 9>"$run_lock" || fail_all "cannot open $run_lock"
    # Not fail_all: another run of the same kind is doing the work (a reindex Job started during the
    # nightly run), which is nothing for anybody to fix, so the termination message stays empty.
    if ! flock -n 9; then
        printf '%s\n' "$(error_summary "another indexer run holds $run_lock")"
        exit 1
    fi
fi

# retire SHARD: gives SHARD a second name in $RETIRED_DIR, before its name in $INDEX_DIR is renamed
# over or removed, so that there is no instant at which its inode has no name. The retired name starts
# with the time of retirement (a hard link shares the shard's mtime, which is when it was written).
# On failure, ln's message is in $WORK_DIR/ln.log.
retired=0
retire() {
    [ -e "$1" ] || return 0
    retired=$((retired + 1))
    ln "$1" "$RETIRED_DIR/$(now).$$.$retired.$(basename "$1")" 2>"$WORK_DIR/ln.log"
}

# prune_retired: removes the retired names older than the grace, in every folder this run writes.
# Files not named by retire are left.
prune_retired() {
    pruned_at=$(now)
    index_dirs | while read -r d; do
        for f in "$d/.retired"/*; do
            [ -f "$f" ] || continue
            stamp=${f##*/}
            stamp=${stamp%%.*}
            case $stamp in '' | *[!0-9]*) continue ;; esac
            [ $((pruned_at - stamp)) -ge "$RETIRED_GRACE_SECONDS" ] && rm -f "$f"
        done
    done
}

# Leftovers of a run of this mode that was killed (deadline, eviction): temporary shard directories.
# Half clones are removed under their repository's lock (sync_mirror) or with their unlisted
# repository. Retired names are not leftovers: they are pruned by age only, whatever run made them.
index_dirs | while read -r d; do rm -rf "$d/$TMP_PREFIX"* 2>/dev/null; done
prune_retired

# Git configuration for this process only (GIT_CONFIG_COUNT, git >= 2.31): mirrors on a shared volume
# may be owned by another uid than this pod's, which git otherwise refuses.
cfg=0
git_config() {
    export "GIT_CONFIG_KEY_$cfg=$1" "GIT_CONFIG_VALUE_$cfg=$2"
    cfg=$((cfg + 1))
    export GIT_CONFIG_COUNT=$cfg
}
git_config safe.directory '*'
# A private CA (GitHub Enterprise, GitLab): spec.gitCABundleRef, mounted as one PEM file. Trusted in
# addition to the image's store, so public hosts keep working beside the private one.
if [ -n "${GIT_CA_BUNDLE:-}" ]; then
    [ -r "$GIT_CA_BUNDLE" ] || fail_all "the CA bundle $GIT_CA_BUNDLE is not readable"
    git_config http.sslCAInfo "$GIT_CA_BUNDLE"
fi

if [ -f "$CREDENTIALS_DIR/ssh-privatekey" ]; then
    # ssh refuses a key that others can read; the Secret's files are shared with the pod's group.
    (umask 077 && cp "$CREDENTIALS_DIR/ssh-privatekey" "$WORK_DIR/ssh-key") || fail_all "cannot copy the SSH key"
    if [ -f "$CREDENTIALS_DIR/known_hosts" ]; then
        ssh_hosts="-o UserKnownHostsFile=$CREDENTIALS_DIR/known_hosts -o StrictHostKeyChecking=yes"
    else
        ssh_hosts="-o UserKnownHostsFile=$WORK_DIR/known_hosts -o StrictHostKeyChecking=accept-new"
    fi
    export GIT_SSH_COMMAND="ssh -i $WORK_DIR/ssh-key -o IdentitiesOnly=yes -o BatchMode=yes $ssh_hosts"
fi
if [ -f "$CREDENTIALS_DIR/password" ] || [ -f "$CREDENTIALS_DIR/token" ]; then
    # A credential helper that reads the Secret's files when git asks, so the token is never part of
    # a URL, an argument or a mirror's config.
    cat >"$WORK_DIR/credential-helper" <<EOF
[ "\$1" = get ] || exit 0
d='$CREDENTIALS_DIR'
user=x-access-token
[ -f "\$d/username" ] && user=\$(cat "\$d/username")
if [ -f "\$d/password" ]; then pass=\$(cat "\$d/password"); else pass=\$(cat "\$d/token"); fi
printf 'username=%s\\npassword=%s\\n' "\$user" "\$pass"
EOF
    git_config credential.helper "!sh $WORK_DIR/credential-helper"
fi

# ctags_flags: what every zoekt-git-index call gets for symbols.
ctags_flags=
case ${SYMBOLS:-true} in
false) ctags_flags=-disable_ctags ;;
true)
    # Without a ctags, zoekt-git-index would index text only and say nothing, and find_symbol would
    # quietly find nothing: symbols were asked for, so the run stops before it changes anything.
    ctags=$(find_ctags)
    [ -n "$ctags" ] || fail_all "symbols are on (spec.indexer.symbols), but the indexer image has no Universal Ctags (${CTAGS_COMMAND:+CTAGS_COMMAND=$CTAGS_COMMAND is not one; }looked for universal-ctags, ctags-universal and ctags on PATH): use an image with universal-ctags, such as the project's Zoekt image, or set spec.indexer.symbols: false to index for text search only; nothing was indexed and the previous index keeps serving"
    export CTAGS_COMMAND="$ctags"
    ;;
*) fail_all "SYMBOLS must be true or false, not '$SYMBOLS'" ;;
esac

listed="$WORK_DIR/listed-prefixes"
listed_mirrors="$WORK_DIR/listed-mirrors"
failed_names="$WORK_DIR/failed-names"
nosymbol_names="$WORK_DIR/nosymbol-names"
: >"$nosymbol_names"
: >"$listed"
: >"$listed_mirrors"
: >"$failed_names"
indexed=0
failed=0
removed=0
total=0

no_space=
report_failure() { # name step message started
    failed=$((failed + 1))
    case $3 in "no space left on the volume"*) no_space=',"noSpace":true' ;; esac
    printf '%s\n' "$1" >>"$failed_names"
    printf '{"repository":"%s","status":"failed","step":"%s","error":"%s","seconds":%d}\n' \
        "$(json_str "$1")" "$2" "$(json_str "$3")" $(($(now) - $4))
}

# web_config MIRROR KIND WEB_URL: the code host zoekt-git-index makes file addresses from, in the
# mirror's config; without WEB_URL, neither key, so that a repository whose code host was removed from
# the spec loses its addresses at its next index instead of keeping the ones an earlier run wrote.
web_config() {
    if [ -n "$3" ]; then
        git --git-dir="$1" config zoekt.web-url "$3" && git --git-dir="$1" config zoekt.web-url-type "$2"
        return
    fi
    for key in zoekt.web-url zoekt.web-url-type; do
        # Status 5: the key was not set, which is the usual case.
        git --git-dir="$1" config --unset-all "$key" || [ $? -eq 5 ] || return 1
    done
}

# sync_mirror DIR URL LOG: clones URL into the bare mirror DIR, or fetches when DIR exists. A clone
# goes to DIR.tmp first, so an interrupted one is never taken for a mirror.
sync_mirror() {
    if [ -d "$1" ]; then
        git --git-dir="$1" remote set-url origin "$2" >"$3" 2>&1 &&
            git --git-dir="$1" fetch --prune --quiet origin >>"$3" 2>&1
    else
        rm -rf "$1.tmp"
        mkdir -p "$(dirname "$1")" &&
            git clone --mirror --quiet -- "$2" "$1.tmp" >"$3" 2>&1 &&
            mv "$1.tmp" "$1"
    fi
}

# missing_branches MIRROR BRANCHES: the listed branches (comma-separated; HEAD for the remote's
# default) that the mirror lacks, space-separated. zoekt-git-index only says "reference not found".
missing_branches() {
    old_ifs=$IFS
    IFS=,
    for b in $2; do
        if [ "$b" = HEAD ]; then
            # A detached HEAD resolves by itself; a symbolic one must name a branch that exists.
            ref=$(git --git-dir="$1" symbolic-ref -q HEAD 2>/dev/null) || continue
            git --git-dir="$1" rev-parse -q --verify "$ref" >/dev/null ||
                printf '%s ' "${ref#refs/heads/} (the remote's default branch)"
        else
            git --git-dir="$1" rev-parse -q --verify "refs/heads/$b" >/dev/null || printf '%s ' "$b"
        fi
    done
    IFS=$old_ifs
}

# mirror_heads MIRROR BRANCHES: one "<branch> <commit>" line per listed branch (HEAD for the remote's
# default), as the mirror has them: what an index of it holds.
mirror_heads() {
    old_ifs=$IFS
    IFS=,
    for b in $2; do
        ref=refs/heads/$b
        [ "$b" = HEAD ] && ref=HEAD
        printf '%s %s\n' "$b" "$(git --git-dir="$1" rev-parse -q --verify "$ref^{commit}" 2>/dev/null)"
    done
    IFS=$old_ifs
}

# remote_heads URL BRANCHES SLOT: the same lines as mirror_heads, asked of the remote with one
# `git ls-remote` (a single round trip that sends the ref advertisement, no objects). Fails when the
# remote cannot be asked, with git's message in $WORK_DIR/git.log.SLOT (SLOT: the poll's job).
remote_heads() {
    patterns=$(printf '%s' "$2" | tr ',' '\n' | sed -e '/^HEAD$/!s|^|refs/heads/|')
    # shellcheck disable=SC2086 # one pattern a word: branch names hold no whitespace
    git ls-remote -- "$1" $patterns >"$WORK_DIR/ls-remote.$3" 2>"$WORK_DIR/git.log.$3" || return 1
    old_ifs=$IFS
    IFS=,
    for b in $2; do
        ref=refs/heads/$b
        [ "$b" = HEAD ] && ref=HEAD
        printf '%s %s\n' "$b" "$(awk -v r="$ref" '$2 == r { print $1; exit }' "$WORK_DIR/ls-remote.$3")"
    done
    IFS=$old_ifs
}

# record_heads PREFIX HEADS: what was just indexed, for the next poll to compare with. Written to a
# temporary name and renamed, so a reader sees the old record or the new one.
record_heads() {
    printf '%s\n' "$2" >"$STATE_DIR/$1.heads.tmp" && mv -f "$STATE_DIR/$1.heads.tmp" "$STATE_DIR/$1.heads"
}

# lock_repo PREFIX WAIT: takes repository PREFIX's lock on descriptor 8; WAIT is 1 to wait for it, 0
# to fail at once when another run holds it. Every mode indexes a repository only under its lock.
lock_repo() {
    [ "$have_flock" = 1 ] || return 0
    exec 8>"$LOCK_DIR/$1.lock" || return 1
    if [ "$2" = 1 ]; then flock 8; else flock -n 8; fi
}
unlock_repo() { exec 8>&-; }

# A full run holds $FULL_RUN_LOCK from start to end, so that a poll can tell a repository that was never
# indexed because the first full run has not reached it yet (leave it to that run) from one added since.
# Shared: the full runs of the shards hold it side by side, and a poll asks only whether any does.
FULL_RUN_LOCK=$DATA_DIR/full-run.lock
hold_full_run() {
    [ "$have_flock" = 1 ] || return 0
    exec 7>"$FULL_RUN_LOCK" && flock -s 7
}
full_run_active() {
    [ "$have_flock" = 1 ] || return 1
    exec 7>"$FULL_RUN_LOCK" || return 1
    if flock -n 7; then
        exec 7>&-
        return 1
    fi
    exec 7>&-
}

# index_repo NAME URL BRANCHES KIND WEB_URL [FLAGS...]: under the repository's lock (lock_repo).
index_repo() {
    name=$1 url=$2 branches=${3:-HEAD} web_kind=$4 web_url=$5
    shift 5
    started=$(now)
    mirror="$REPOS_DIR/$name.git"
    log="$WORK_DIR/git.log"
    step=clone
    [ -d "$mirror" ] && step=fetch
    if ! sync_mirror "$mirror" "$url" "$log"; then
        rm -rf "$mirror.tmp"
        report_failure "$name" "$step" "$(failure "git $step" "$log")" "$started"
        return
    fi
    step=index
    missing=$(missing_branches "$mirror" "$branches")
    if [ -n "$missing" ]; then
        have=$(git --git-dir="$mirror" for-each-ref --format='%(refname:short)' refs/heads | head -n 10 | tr '\n' ' ')
        report_failure "$name" "$step" "no branch ${missing% } in the repository (its branches: ${have% })" "$started"
        return
    fi
    if ! web_config "$mirror" "$web_kind" "$web_url" >"$log" 2>&1; then
        report_failure "$name" "$step" "$(failure "git config" "$log")" "$started"
        return
    fi
    heads=$(mirror_heads "$mirror" "$branches")
    tmp=$(mktemp -d "$INDEX_DIR/${TMP_PREFIX}XXXXXX") || {
        report_failure "$name" "$step" "cannot create a temporary directory in $INDEX_DIR" "$started"
        return
    }
    # zoekt-git-index names a repository after its path below -repo_cache (without .git), and that
    # name wins over any zoekt.name in the mirror's config; the mirrors are laid out by full name, so
    # the index names each repository as the spec does. Without the flag it would take the folder's
    # last segment ("alpha" for git.example/acme/alpha). $ctags_flags is one word or none, so it is
    # left unquoted.
    # shellcheck disable=SC2086
    if ! "$ZOEKT_GIT_INDEX" -index "$tmp" -repo_cache "$REPOS_DIR" -branches "$branches" $ctags_flags "$@" "$mirror" \
        >"$log" 2>&1; then
        rm -rf "$tmp"
        report_failure "$name" "$step" "$(failure zoekt-git-index "$log")" "$started"
        return
    fi
    prefix=$(shard_prefix "$name")
    shards=0
    for f in "$tmp/$prefix"_v*.zoekt; do
        [ -f "$f" ] && shards=$((shards + 1))
    done
    if [ "$shards" -eq 0 ]; then
        rm -rf "$tmp"
        report_failure "$name" "$step" "zoekt-git-index wrote no shard for $prefix" "$started"
        return
    fi
    # Retire every current shard of this repository first, so that a failure leaves them all in place
    # and serving. A shard that cannot be retired is not replaced: a stale repository until the next
    # run is better than a webserver faulting on a freed inode (docs/indexer.md).
    for f in "$INDEX_DIR/$prefix"_v*.zoekt; do
        [ -f "$f" ] && [ "$(shard_owner "$f")" = "$prefix" ] || continue
        retire "$f" || {
            rm -rf "$tmp"
            report_failure "$name" "$step" "cannot keep a name for the shard $(basename "$f") in $RETIRED_DIR, so the previous shards keep serving: $(first_lines "$WORK_DIR/ln.log")" "$started"
            return
        }
    done
    # Install the new shards, then drop older shards of this repository that the new set no longer
    # has (a repository that shrank from two shards to one).
    new="$WORK_DIR/new-shards"
    : >"$new"
    for f in "$tmp/$prefix"_v*.zoekt; do
        basename "$f" >>"$new"
        mv -f "$f" "$INDEX_DIR/" || {
            rm -rf "$tmp"
            report_failure "$name" "$step" "cannot move $(basename "$f") into $INDEX_DIR" "$started"
            return
        }
    done
    for f in "$INDEX_DIR/$prefix"_v*.zoekt; do
        [ -f "$f" ] && [ "$(shard_owner "$f")" = "$prefix" ] || continue
        grep -Fxq -- "$(basename "$f")" "$new" || rm -f "$f" "$f.meta"
    done
    rm -rf "$tmp"
    record_heads "$prefix" "$heads"
    indexed=$((indexed + 1))
    printf '{"repository":"%s","status":"indexed","step":"%s","shards":%d,%s"seconds":%d}\n' \
        "$(json_str "$name")" "$step" "$shards" "$(symbols_field "$name" "$log")" $(($(now) - started))
}

# symbols_field NAME LOG: the "symbols" member(s) of NAME's indexed line, from zoekt-git-index's LOG.
# It goes on after a ctags failure and only logs "ignoring universal:$CTAGS_COMMAND or scip:<path>
# error: ..." (once per shard; Zoekt 51a31b62 wrote "ignoring $CTAGS_COMMAND error").
symbols_field() {
    [ "${SYMBOLS:-true}" = false ] && return
    failure=$(grep -m 1 -F "ignoring universal:$CTAGS_COMMAND or scip:" "$2" | cut -c 1-300)
    if [ -z "$failure" ]; then
        printf '"symbols":true,'
        return
    fi
    printf '%s\n' "$1" >>"$nosymbol_names"
    printf '"symbols":false,"symbolsError":"%s",' \
        "$(json_str "ctags failed, so the repository is indexed for text search only: $failure")"
}

# with_search_shards LIST: the repositories of LIST (a repository list file, or - for stdin), each line
# after the shard that serves it: 0 with one shard, else the one $SHARDS_FILE gives, or - when it gives
# none from 0 to SHARDS-1 or was written for another number of shards (shard_list_problem).
with_search_shards() {
    map=/dev/null
    [ "$SHARDS" -gt 1 ] && map=$SHARDS_FILE
    awk -v n="$SHARDS" '
        FILENAME == ARGV[1] {
            if ($0 ~ /^# shards: / && !header++ && $3 + 0 != n) other_n = 1
            if ($1 ~ /^[0-9]+$/ && $1 + 0 < n && NF >= 2) shard[$2] = $1 + 0
            next
        }
        $1 == "" || $1 ~ /^#/ { next }
        {
            k = "-"
            if (n == 1) k = 0
            else if (!other_n && ($1 in shard)) k = shard[$1]
            print k, $0
        }' "$map" "$1"
}

# unassigned NAME: the error of a listed repository that no shard serves. It is not indexed at all
# rather than into a folder no webserver or the wrong one serves.
unassigned() {
    problem=$(shard_list_problem)
    [ -n "$problem" ] || problem="the shard list $SHARDS_FILE names no shard from 0 to $((SHARDS - 1)) for it"
    printf '%s, so it is not indexed into any of the %s shards (the operator writes both lists together)' \
        "$problem" "$SHARDS"
}

# clear_index: retires and removes every shard in $INDEX_DIR, for a run that indexes its layout anew
# ($FRESH_INDEX). A shard that cannot keep a retired name stops the run before anything is indexed: a
# webserver may still be mapping it.
clear_index() {
    for f in "$INDEX_DIR"/*.zoekt; do
        [ -f "$f" ] || continue
        retire "$f" || fail_all "cannot keep a name for $f in $RETIRED_DIR, so the layout cannot be indexed anew: $(first_lines "$WORK_DIR/ln.log")"
        rm -f "$f" "$f.meta"
    done
}

# run_full [FLAGS...]: the nightly run: every listed repository of this run's shard, then what is no
# longer listed. A repository no shard serves is reported once, by shard 0's run.
run_full() {
    hold_full_run
    [ "${FRESH_INDEX:-0}" = 1 ] && clear_index
    own=0
    with_search_shards "$REPOS_FILE" >"$WORK_DIR/repositories"
    while read -r owner name url branches web_kind web_url; do
        total=$((total + 1))
        printf '%s\n' "$REPOS_DIR/$name.git" >>"$listed_mirrors"
        if [ "$owner" != "$SHARD" ]; then
            [ "$owner" = - ] && [ "$SHARD" = 0 ] && report_failure "$name" assign "$(unassigned "$name")" "$(now)"
            continue
        fi
        own=$((own + 1))
        shard_prefix "$name" >>"$listed"
        echo >>"$listed"
        # stdin is the list; keep git and the indexer from reading it. A refresh run indexing this
        # repository now is waited for: it holds the lock for one repository's fetch and index.
        if lock_repo "$(shard_prefix "$name")" 1; then
            index_repo "$name" "$url" "$branches" "$web_kind" "$web_url" "$@" </dev/null
        else
            report_failure "$name" fetch "cannot take the lock $LOCK_DIR/$(shard_prefix "$name").lock" "$(now)"
        fi
        unlock_repo
    done <"$WORK_DIR/repositories"

    [ "$total" -gt 0 ] || fail_all "repository list $REPOS_FILE lists no repository"

    # Remove what is no longer listed. Compound shards (compound-*) are only made by zoekt's merge tool,
    # which this operator does not run, so every shard here belongs to one repository.
    for f in "$INDEX_DIR"/*.zoekt; do
        [ -f "$f" ] || continue
        prefix=$(shard_owner "$f")
        grep -Fxq -- "$prefix" "$listed" && continue
        repo_name=$(printf '%s' "$prefix" | sed -e 's|%2F|/|g')
        if ! retire "$f"; then
            # Kept serving rather than freed under the webserver; reported, and retried by the next run.
            failed=$((failed + 1))
            printf '%s\n' "$repo_name" >>"$failed_names"
            printf '{"repository":"%s","status":"failed","step":"remove","shard":"%s","error":"%s"}\n' \
                "$(json_str "$repo_name")" "$(json_str "$(basename "$f")")" \
                "$(json_str "cannot keep a name for the shard in $RETIRED_DIR, so it is not removed: $(first_lines "$WORK_DIR/ln.log")")"
            continue
        fi
        rm -f "$f" "$f.meta"
        removed=$((removed + 1))
        printf '{"repository":"%s","status":"removed","shard":"%s"}\n' \
            "$(json_str "$repo_name")" "$(json_str "$(basename "$f")")"
    done
    # Mirrors, and half clones (*.git.tmp) of a killed run, of repositories no longer listed. The
    # mirrors are shared: with shards, shard 0's run removes them, rather than N runs at once.
    [ "$SHARD" = 0 ] && find "$REPOS_DIR" -type d \( -name '*.git' -o -name '*.git.tmp' \) -prune 2>/dev/null | while read -r m; do
        grep -Fxq -- "${m%.tmp}" "$listed_mirrors" && continue
        rm -rf "$m"
        m=${m%.tmp}
        m=${m%.git}
        rm -f "$STATE_DIR/$(shard_prefix "${m#"$REPOS_DIR"/}").heads"
    done

    # Links retired early in a long run may already be past the grace.
    prune_retired
    shard_members=
    [ "$SHARDS" -gt 1 ] && shard_members=$(printf ',"searchShard":%d,"searchShards":%d' "$SHARD" "$SHARDS")
    report_summary "$(summary_line "$shard_members")"
    # A shard may serve none of the repositories (fewer repositories than shards): nothing to do is no
    # failure for its Job.
    [ "$indexed" -gt 0 ] || { [ "$own" -eq 0 ] && [ "$failed" -eq 0 ]; }
}

# summary_line [EXTRA]: the run's figures as one JSON object; EXTRA is more members, each with a
# leading comma. The summary names at most 20 repositories per list: the termination message is cut at
# 4 KiB.
summary_line() {
    # "withoutSymbols" appears only when some repository was indexed without the symbols asked for.
    nosymbols=
    [ -s "$nosymbol_names" ] && nosymbols=",\"withoutSymbols\":[$(name_list "$nosymbol_names")]"
    printf '{"summary":{"indexed":%d,"failed":%d,"removed":%d%s,"failedRepositories":[%s]%s%s}}' \
        "$indexed" "$failed" "$removed" "${1:-}" "$(name_list "$failed_names")" "$nosymbols" "$no_space"
}

# name_list FILE: the first 20 names in FILE as JSON strings, comma-separated.
name_list() {
    names=$(head -n 20 "$1" | while read -r n; do printf '"%s",' "$(json_str "$n")"; done)
    printf '%s' "${names%,}"
}

# listed_line PREFIX: the repository list's line for the repository whose shard prefix is PREFIX, or
# nothing when none is listed so.
listed_line() {
    awk -v p="$1" '$1 != "" && $1 !~ /^#/ { n = $1; gsub("/", "%2F", n); if (n == p) { print; exit } }' "$REPOS_FILE"
}

# has_shards PREFIX DIR: whether index folder DIR holds a shard of the repository with shard prefix PREFIX.
has_shards() {
    for f in "$2/$1"_v*.zoekt; do
        [ -f "$f" ] && [ "$(shard_owner "$f")" = "$1" ] && return 0
    done
    return 1
}

# search_shard_dir SHARD: the index folder of search shard SHARD (from with_search_shards; - for none:
# nothing).
search_shard_dir() {
    if [ "$1" = - ]; then
        return
    elif [ "$SHARDS" -gt 1 ]; then
        printf '%s\n' "$SHARDS_ROOT/$1"
    else
        printf '%s\n' "$INDEX_DIR"
    fi
}

# poll_one NAME URL BRANCHES SLOT INDEX: asks one remote for its branch heads and requests a run when
# they differ from the ones last indexed. A repository without a record but with shards in its index
# folder INDEX (empty when no search shard serves it) and a mirror was indexed by a run that predates
# the records: its mirror is what that run fetched, so it seeds the record, instead of the whole corpus
# being reindexed after an upgrade. Runs as a background job, so it reports through files:
# $WORK_DIR/poll-changed and poll-failed get one name a line.
poll_one() {
    prefix=$(shard_prefix "$1")
    [ -f "$QUEUE_DIR/$prefix" ] && return 0
    if ! remote=$(remote_heads "$2" "$3" "$4"); then
        printf '%s\n' "$1" >>"$WORK_DIR/poll-failed"
        printf '{"repository":"%s","status":"failed","step":"poll","error":"%s"}\n' \
            "$(json_str "$1")" "$(json_str "git ls-remote failed: $(first_lines "$WORK_DIR/git.log.$4")")"
        return 0
    fi
    state=$STATE_DIR/$prefix.heads
    if [ ! -f "$state" ] && [ -d "$REPOS_DIR/$1.git" ] && [ -n "$5" ] && has_shards "$prefix" "$5"; then
        record_heads "$prefix" "$(mirror_heads "$REPOS_DIR/$1.git" "$3")"
    fi
    [ -f "$state" ] && [ "$(cat "$state")" = "$remote" ] && return 0
    # Never indexed, while a full run is under way: that run indexes it, so a request would index it twice.
    [ ! -f "$state" ] && full_run_active && return 0
    : >"$QUEUE_DIR/$prefix"
    printf '%s\n' "$1" >>"$WORK_DIR/poll-changed"
}

# poll_remotes: poll_one for every listed repository, POLL_PARALLEL at a time: a poll is mostly waiting
# for the git host (TLS, two round trips), so a few at once divide its time without loading the host.
poll_remotes() {
    : >"$WORK_DIR/poll-changed"
    : >"$WORK_DIR/poll-failed"
    slot=0
    # The code host's fields are read only to keep them out of $branches: a poll does not need them.
    with_search_shards "$REPOS_FILE" >"$WORK_DIR/repositories"
    while read -r owner name url branches web_kind web_url; do
        polled=$((polled + 1))
        poll_one "$name" "$url" "${branches:-HEAD}" "$slot" "$(search_shard_dir "$owner")" </dev/null &
        slot=$((slot + 1))
        if [ "$slot" -ge "$POLL_PARALLEL" ]; then
            wait
            slot=0
        fi
    done <"$WORK_DIR/repositories"
    wait
    changed=$(($(wc -l <"$WORK_DIR/poll-changed")))
    failed=$((failed + $(wc -l <"$WORK_DIR/poll-failed")))
    cat "$WORK_DIR/poll-failed" >>"$failed_names"
}

# drain_queue [FLAGS...]: indexes each repository with a request, one at a time. The request is
# removed before the index starts, so a request made during the run asks for one more run after it,
# and any number made before it are served by this one. A repository whose lock another run holds
# keeps its request for the next pass; a request for a repository the list does not name is dropped,
# and one for a repository no shard serves is dropped and reported failed (the next poll asks again).
drain_queue() {
    for req in "$QUEUE_DIR"/*; do
        [ -f "$req" ] || continue
        prefix=${req##*/}
        line=$(listed_line "$prefix")
        if [ -z "$line" ]; then
            rm -f "$req"
            printf '{"request":"%s","status":"ignored","reason":"not listed"}\n' "$(json_str "$prefix")"
            continue
        fi
        read -r owner name url branches web_kind web_url <<LINE
$(printf '%s\n' "$line" | with_search_shards -)
LINE
        if [ "$owner" = - ]; then
            rm -f "$req"
            report_failure "$name" assign "$(unassigned "$name")" "$(now)"
            continue
        fi
        if ! lock_repo "$prefix" 0; then
            unlock_repo
            busy=$((busy + 1))
            continue
        fi
        rm -f "$req"
        requests=$((requests + 1))
        use_index "$(search_shard_dir "$owner")"
        index_repo "$name" "$url" "$branches" "$web_kind" "$web_url" "$@" </dev/null
        unlock_repo
    done
}

# refresh_pass POLL [FLAGS...]: one refresh pass (a poll of the remotes first when POLL is 1); prints
# its summary when it did anything. Returns 1 when a repository failed.
refresh_pass() {
    do_poll=$1
    shift
    indexed=0 failed=0 removed=0 polled=0 changed=0 requests=0 busy=0 no_space=
    : >"$failed_names"
    : >"$nosymbol_names"
    pass_started=$(now)
    if [ "$do_poll" = 1 ]; then
        poll_remotes
        prune_retired
    fi
    drain_queue "$@"
    if [ "$polled" -gt 0 ] || [ "$requests" -gt 0 ] || [ "$failed" -gt 0 ] || [ "$busy" -gt 0 ]; then
        summary_line "$(printf ',"mode":"refresh","polled":%d,"changed":%d,"requests":%d,"busy":%d,"seconds":%d' \
            "$polled" "$changed" "$requests" "$busy" $(($(now) - pass_started)))"
        echo
    fi
    [ "$failed" -eq 0 ]
}

case $INDEXER_MODE in
full)
    run_full "$@"
    rc=$?
    ;;
refresh)
    for n in ${INDEXER_REPOSITORIES:-}; do
        : >"$QUEUE_DIR/$(shard_prefix "$n")"
    done
    do_poll=0
    [ "$POLL_INTERVAL_SECONDS" -gt 0 ] && do_poll=1
    refresh_pass "$do_poll" "$@"
    rc=$?
    ;;
watch)
    # The poll every POLL_INTERVAL_SECONDS, counted from the start of the last one; the queue
    # (webhooks, reindex requests) every QUEUE_CHECK_SECONDS. Never returns.
    next_poll=0
    while :; do
        do_poll=0
        if [ "$POLL_INTERVAL_SECONDS" -gt 0 ] && [ "$(now)" -ge "$next_poll" ]; then
            do_poll=1
            next_poll=$(($(now) + POLL_INTERVAL_SECONDS))
        fi
        refresh_pass "$do_poll" "$@"
        sleep "$QUEUE_CHECK_SECONDS"
    done
    ;;
esac
rm -f "$WORK_DIR/ssh-key" "$WORK_DIR/credential-helper" "$WORK_DIR/git.log" "$WORK_DIR/new-shards" \
    "$WORK_DIR/ln.log" "$WORK_DIR"/ls-remote.* "$WORK_DIR"/git.log.* "$WORK_DIR/poll-changed" "$WORK_DIR/poll-failed" \
    "$WORK_DIR/repositories"
exit "$rc"
