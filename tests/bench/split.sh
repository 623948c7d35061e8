#!/usr/bin/env bash
# split.sh INDEX N: prints a folder holding INDEX (an index folder of tests/bench/corpus.sh) as the N
# index folders of N search shards, <folder>/0 to <folder>/N-1: each index file hard-linked into the
# folder of the shard lib/shard.h's shard_of gives its repository (tests/tools/shard-of), as the
# operator's indexer would place it. The links are beside INDEX (same file system), in
# <INDEX's parent>/shards-N, and made again only when INDEX was rebuilt (its .complete changed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index=${1:?usage: split.sh INDEX N}
n=${2:?usage: split.sh INDEX N}
shard_of=$root/build/san/tests/tools/shard-of
[ -x "$shard_of" ] || { echo "split.sh: $shard_of is not built" >&2; exit 1; }
split=$(dirname "$index")/shards-$n
if [ "$(cat "$split/.complete" 2>/dev/null)" != "$(cat "$index/.complete")" ]; then
  rm -rf "$split"
  for k in $(seq 0 $((n - 1))); do mkdir -p "$split/$k"; done
  # Zoekt names a repository's files by its escaped name: "mirrors%2Fgithub.com%2Fa%2Fb_v16.00000.zoekt".
  for f in "$index"/*.zoekt; do
    repo=$(basename "$f" | sed -E 's/_v[0-9]+\.[0-9]+\.zoekt$//' |
      python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.stdin.read().strip()))')
    ln "$f" "$split/$("$shard_of" "$n" "$repo" | cut -d' ' -f1)/"
  done
  cp "$index/.complete" "$split/.complete"
fi
echo "$split"
