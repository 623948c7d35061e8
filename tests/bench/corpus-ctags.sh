#!/usr/bin/env bash
# The symbols variant of the benchmark corpus (tests/bench/corpus.sh DIR ctags runs it): the Go modules of
# DIR/modules indexed again, with universal-ctags as the indexer runs it, into DIR/index-ctags, and a few
# non-Go sources from Debian's archive (Python packages' modules, curl's C examples; downloaded with
# apt-get, nothing installed) as repositories mirrors/debian/<package>, listed in DIR/extra-modules.
# DIR/index-ctags.stats gets, for indexing the Go modules without and with ctags, a line "without|with
# WALL USER SYSTEM BYTES" (seconds, and the index's size). Prints DIR/index-ctags.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: corpus-ctags.sh DIR}
index=$dir/index-ctags

"$root/tests/bench/corpus.sh" "$dir" >/dev/null
zoekt_commit=$(. "$root/scripts/versions.sh"; echo "$zoekt_commit")
if [ "$(cat "$index/.complete" 2>/dev/null)" = "$zoekt_commit" ]; then
  echo "$index"
  exit 0
fi
bin=$("$root/tests/support/zoekt.sh" bin)
rm -rf "$dir/extra-debs" "$dir/extra-src" "$dir/names-debian" "$index" "$dir/ctags-bin"
mkdir -p "$dir/extra-debs" "$dir/extra-src" "$index" "$dir/ctags-bin"

# Non-Go sources: package -> the folder of its files that becomes one repository.
declare -A extra=(
  [python3-requests]=usr/lib/python3/dist-packages/requests
  [python3-urllib3]=usr/lib/python3/dist-packages/urllib3
  [python3-click]=usr/lib/python3/dist-packages/click
  [libcurl4-doc]=usr/share/doc/libcurl4/examples
)
(cd "$dir/extra-debs" && apt-get download -qq "${!extra[@]}" 2>/dev/null)
: >"$dir/extra-modules"
for pkg in "${!extra[@]}"; do
  dpkg-deb -x "$dir"/extra-debs/"${pkg}"_*.deb "$dir/extra-debs/$pkg"
  mkdir -p "$dir/extra-src/$pkg"
  cp -r "$dir/extra-debs/$pkg/${extra[$pkg]}/." "$dir/extra-src/$pkg/"
  "$root/tests/support/zoekt.sh" repo "$dir/extra-src" "$pkg"
  echo "$pkg" >>"$dir/extra-modules"
done

# universal-ctags as controller/assets/indexer.sh hands it to zoekt-git-index: through the wrapper it
# writes (named universal-ctags, languages this ctags lacks dropped), taken from the script itself.
ctags=$(command -v ctags-universal || command -v ctags)
eval "$(sed -n '/^ctags_wrapper() {$/,/^}$/p' "$root/controller/assets/indexer.sh")"
ctags_wrapper "$ctags" >"$dir/ctags-bin/universal-ctags"
chmod 755 "$dir/ctags-bin/universal-ctags"
export CTAGS_COMMAND=$dir/ctags-bin/universal-ctags

# index_go OUT [FLAG]: indexes the Go modules into OUT, two at a time as corpus.sh does; prints the wall,
# user and system seconds. Both variants are timed here, one after the other, so that they meet the
# same machine.
# Named as corpus.sh names them: mirrors/<path> from their path below -repo_cache names/ (names/mirrors
# is the Go source folder); the Debian sources become mirrors/debian/<package> the same way.
mkdir -p "$dir/names-debian/mirrors"
ln -sfn "$dir/extra-src" "$dir/names-debian/mirrors/debian"
export dir bin
index_go() {
  local TIMEFORMAT='%R %U %S'
  export out=$1 flag=${2:-}
  { time xargs -P 2 -I{} bash -c \
      '"$bin/zoekt-git-index" -index "$out" -repo_cache "$dir/names" $flag "$dir/names/mirrors/{}" >/dev/null 2>&1' \
      <"$dir/modules"; } 2>&1
}
mkdir -p "$dir/index-plain"
echo "without $(index_go "$dir/index-plain" -disable_ctags) $(du -sb "$dir/index-plain" | cut -f1)" >"$dir/index-ctags.stats"
rm -rf "$dir/index-plain"
echo "with $(index_go "$index") $(du -sb "$index" | cut -f1)" >>"$dir/index-ctags.stats"
while read -r pkg; do
  "$bin/zoekt-git-index" -index "$index" -repo_cache "$dir/names-debian" "$dir/names-debian/mirrors/debian/$pkg" \
    >/dev/null 2>&1
done <"$dir/extra-modules"
echo "$zoekt_commit" >"$index/.complete"
echo "$index"
