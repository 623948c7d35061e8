#!/bin/sh
# indexer.sh: mirrors and indexes the repositories of one CodeSearchCorpus. Runs in the indexer Job's
# pod (the zoekt image: busybox sh, git, zoekt-git-index), so it is plain POSIX sh.
#
# Input: the repository list ($REPOS_FILE), one repository per line, fields separated by spaces
# (names, URLs and branches never contain whitespace; the controller validates that):
#     <name> <url> [<branches, comma-separated; absent for the remote HEAD>]
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
# then one summary line, also written to $TERMINATION_LOG for the controller to read from the pod's
# status. Exit status: 0 when at least one repository was indexed, 1 otherwise.
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
WORK_DIR=${WORK_DIR:-${TMPDIR:-/tmp}/codesearch-indexer}
# Mirrors found on disk are compared with listed paths as strings, so the form must be canonical.
REPOS_DIR=${REPOS_DIR%/}
INDEX_DIR=${INDEX_DIR%/}
ZOEKT_GIT_INDEX=${ZOEKT_GIT_INDEX:-zoekt-git-index}
TERMINATION_LOG=${TERMINATION_LOG:-/dev/termination-log}
# Where replaced and removed shards keep a name until no webserver can still be mapping them. A
# folder inside $INDEX_DIR, so the link is on the same file system; zoekt-webserver loads only
# $INDEX_DIR/*.zoekt and never looks into subfolders.
RETIRED_DIR=$INDEX_DIR/.retired
RETIRED_GRACE_SECONDS=${RETIRED_GRACE_SECONDS:-900}
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

fail_all() {
    printf '{"summary":{"indexed":0,"failed":0,"removed":0,"error":"%s"}}\n' "$(json_str "$1")"
    exit 1
}

[ -r "$REPOS_FILE" ] || fail_all "repository list $REPOS_FILE is not readable"
case $RETIRED_GRACE_SECONDS in
'' | *[!0-9]*) fail_all "RETIRED_GRACE_SECONDS must be a number of seconds, not '$RETIRED_GRACE_SECONDS'" ;;
esac
mkdir -p "$REPOS_DIR" "$INDEX_DIR" "$RETIRED_DIR" "$WORK_DIR" ||
    fail_all "cannot create $REPOS_DIR, $INDEX_DIR, $RETIRED_DIR or $WORK_DIR"
chmod 700 "$WORK_DIR"
export HOME="$WORK_DIR"

# One run at a time per volume: a reindex Job may start while the nightly one is still running.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DATA_DIR/.indexer.lock" || fail_all "cannot open $DATA_DIR/.indexer.lock"
    flock -n 9 || fail_all "another indexer run holds $DATA_DIR/.indexer.lock"
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

# prune_retired: removes the retired names older than the grace. Files not named by retire are left.
prune_retired() {
    pruned_at=$(now)
    for f in "$RETIRED_DIR"/*; do
        [ -f "$f" ] || continue
        stamp=${f##*/}
        stamp=${stamp%%.*}
        case $stamp in '' | *[!0-9]*) continue ;; esac
        [ $((pruned_at - stamp)) -ge "$RETIRED_GRACE_SECONDS" ] && rm -f "$f"
    done
}

# Leftovers of a run that was killed (deadline, eviction): temporary shard directories and clones.
# Retired names are not leftovers: they are pruned by age only, whatever run made them.
rm -rf "$INDEX_DIR"/.tmp.* 2>/dev/null
find "$REPOS_DIR" -type d -name '*.git.tmp' -prune -exec rm -rf {} + 2>/dev/null
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

# ctags_flags: what every zoekt-git-index call gets for symbols; symbols_missing: why no repository
# can have symbols this run (no ctags), or empty.
ctags_flags=
symbols_missing=
case ${SYMBOLS:-true} in
false) ctags_flags=-disable_ctags ;;
true)
    ctags=$(find_ctags)
    if [ -n "$ctags" ]; then
        export CTAGS_COMMAND="$ctags"
    else
        # Without this flag zoekt-git-index would say nothing and index text only.
        ctags_flags=-disable_ctags
        symbols_missing="no universal-ctags found (${CTAGS_COMMAND:-universal-ctags, ctags-universal or ctags on PATH}): indexed for text search only"
    fi
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

report_failure() { # name step message started
    failed=$((failed + 1))
    printf '%s\n' "$1" >>"$failed_names"
    printf '{"repository":"%s","status":"failed","step":"%s","error":"%s","seconds":%d}\n' \
        "$(json_str "$1")" "$2" "$(json_str "$3")" $(($(now) - $4))
}

# sync_mirror DIR URL LOG: clones URL into the bare mirror DIR, or fetches when DIR exists. A clone
# goes to DIR.tmp first, so an interrupted one is never taken for a mirror.
sync_mirror() {
    if [ -d "$1" ]; then
        git --git-dir="$1" remote set-url origin "$2" >"$3" 2>&1 &&
            git --git-dir="$1" fetch --prune --quiet origin >>"$3" 2>&1
    else
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

# index_repo NAME URL BRANCHES [FLAGS...]
index_repo() {
    name=$1 url=$2 branches=${3:-HEAD}
    shift 3
    started=$(now)
    mirror="$REPOS_DIR/$name.git"
    log="$WORK_DIR/git.log"
    step=clone
    [ -d "$mirror" ] && step=fetch
    if ! sync_mirror "$mirror" "$url" "$log"; then
        rm -rf "$mirror.tmp"
        report_failure "$name" "$step" "git $step failed: $(first_lines "$log")" "$started"
        return
    fi
    # zoekt-git-index names the repository after this setting, whatever the URL looks like.
    git --git-dir="$mirror" config zoekt.name "$name"

    step=index
    missing=$(missing_branches "$mirror" "$branches")
    if [ -n "$missing" ]; then
        have=$(git --git-dir="$mirror" for-each-ref --format='%(refname:short)' refs/heads | head -n 10 | tr '\n' ' ')
        report_failure "$name" "$step" "no branch ${missing% } in the repository (its branches: ${have% })" "$started"
        return
    fi
    tmp=$(mktemp -d "$INDEX_DIR/.tmp.XXXXXX") || {
        report_failure "$name" "$step" "cannot create a temporary directory in $INDEX_DIR" "$started"
        return
    }
    # $ctags_flags is one word or none, so it is left unquoted.
    # shellcheck disable=SC2086
    if ! "$ZOEKT_GIT_INDEX" -index "$tmp" -branches "$branches" $ctags_flags "$@" "$mirror" >"$log" 2>&1; then
        rm -rf "$tmp"
        report_failure "$name" "$step" "zoekt-git-index failed: $(first_lines "$log")" "$started"
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
    indexed=$((indexed + 1))
    printf '{"repository":"%s","status":"indexed","step":"%s","shards":%d,%s"seconds":%d}\n' \
        "$(json_str "$name")" "$step" "$shards" "$(symbols_field "$name" "$log")" $(($(now) - started))
}

# symbols_field NAME LOG: the "symbols" member(s) of NAME's indexed line, from zoekt-git-index's LOG.
# It goes on after a ctags failure and only logs "ignoring $CTAGS_COMMAND error: ..." (once per shard).
symbols_field() {
    [ "${SYMBOLS:-true}" = false ] && return
    why=$symbols_missing
    if [ -z "$why" ] && grep -qF "ignoring $CTAGS_COMMAND error" "$2"; then
        why="ctags failed, so the repository is indexed for text search only: $(grep -m 1 -F "ignoring $CTAGS_COMMAND error" "$2" | cut -c 1-300)"
    fi
    if [ -z "$why" ]; then
        printf '"symbols":true,'
        return
    fi
    printf '%s\n' "$1" >>"$nosymbol_names"
    printf '"symbols":false,"symbolsError":"%s",' "$(json_str "$why")"
}

while read -r name url branches || [ -n "$name" ]; do
    case $name in "" | "#"*) continue ;; esac
    total=$((total + 1))
    shard_prefix "$name" >>"$listed"
    echo >>"$listed"
    printf '%s\n' "$REPOS_DIR/$name.git" >>"$listed_mirrors"
    # stdin is the list; keep git and the indexer from reading it.
    index_repo "$name" "$url" "$branches" "$@" </dev/null
done <"$REPOS_FILE"

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
find "$REPOS_DIR" -type d -name '*.git' -prune 2>/dev/null | while read -r m; do
    grep -Fxq -- "$m" "$listed_mirrors" || rm -rf "$m"
done

# Links retired early in a long run may already be past the grace.
prune_retired

# name_list FILE: the first 20 names in FILE as JSON strings, comma-separated.
name_list() {
    names=$(head -n 20 "$1" | while read -r n; do printf '"%s",' "$(json_str "$n")"; done)
    printf '%s' "${names%,}"
}
# The summary names at most 20 repositories per list: the termination message is cut at 4 KiB.
# "withoutSymbols" appears only when some repository was indexed without the symbols asked for.
nosymbols=
[ -s "$nosymbol_names" ] && nosymbols=",\"withoutSymbols\":[$(name_list "$nosymbol_names")]"
summary=$(printf '{"summary":{"indexed":%d,"failed":%d,"removed":%d,"failedRepositories":[%s]%s}}' \
    "$indexed" "$failed" "$removed" "$(name_list "$failed_names")" "$nosymbols")
printf '%s\n' "$summary"
if [ -w "$TERMINATION_LOG" ] || { [ ! -e "$TERMINATION_LOG" ] && [ -w "$(dirname "$TERMINATION_LOG")" ]; }; then
    printf '%s\n' "$summary" >"$TERMINATION_LOG"
fi
rm -f "$WORK_DIR/ssh-key" "$WORK_DIR/credential-helper" "$WORK_DIR/git.log" "$WORK_DIR/new-shards" "$WORK_DIR/ln.log"
[ "$indexed" -gt 0 ]
