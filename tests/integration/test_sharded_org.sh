#!/usr/bin/env bash
# The organisation corpus in three search shards against one webserver (issue 32): make bench's corpus
# (tests/bench/corpus.sh: about 200 repositories of real Go code, 957 MB of index) served by one
# zoekt-webserver over the whole index and by three over the shards' folders (tests/bench/split.sh, the
# same index files as shard_of places them), each asked through the connector over stdio. For every
# query of the bench's set (tests/bench/shards.sh) that Zoekt completes, the three shards show exactly
# the files one webserver shows (set equality at max_files 50) and count the same files and matches. A
# query that matches nearly every file (err) stops at Zoekt's match limit, which each shard applies to
# its part of the index, so the two answers are different samples: both must say they stopped there
# ("zoekt_limit"), so that an agent knows it holds a sample. Needs the pinned Zoekt (need_zoekt) and
# builds the corpus when it is not cached. No Kubernetes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

need_zoekt
[ -x "$ZK_ROOT/build/san/tests/tools/shard-of" ] || bail "tests/tools/shard-of is built"
INDEX=$("$ZK_ROOT/tests/bench/corpus.sh" "${ZK_CACHE:-/var/cache/zoekt-operator}/bench-corpus") ||
  bail "the organisation index is built"
SPLIT=$("$ZK_ROOT/tests/bench/split.sh" "$INDEX" 3) || bail "the index is split into three shards' folders"
T=$(mktemp -d)
on_exit "rm -rf '$T'"

# serve NAME DIR: a zoekt-webserver over DIR, ready; its URL in $T/NAME.url.
serve() {
  local port
  port=$("$ZK_ROOT/scripts/free-port.sh")
  "$ZOEKT_BIN/zoekt-webserver" -index "$2" -listen "127.0.0.1:$port" -rpc 2>"$T/$1.log" &
  on_exit "kill $!"
  echo "http://127.0.0.1:$port" >"$T/$1.url"
  eventually 120 curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" || bail "zoekt-webserver $1 serves $2"
}
serve one "$INDEX"
for k in 0 1 2; do serve "shard$k" "$SPLIT/$k"; done
shard_urls=$(cat "$T/shard0.url"),$(cat "$T/shard1.url"),$(cat "$T/shard2.url")

# ask OUT CONNECTOR_ARGS...: every query below through one stdio session; OUT gets one JSON line per
# query: its label, the files shown, the counts and the truncation reasons.
cat >"$T/ask.py" <<'PY'
import json, subprocess, sys
QUERIES = [("ioutil.ReadAll", {}), ("func main", {}), ("TODO", {}), ("err", {}),
           ("err", {"repo": "go-git/go-git"})]
out, args = sys.argv[1], sys.argv[2:]
lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "org", "version": "0"}}}),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
for i, (q, extra) in enumerate(QUERIES):
    lines.append(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
        "name": "search_code", "arguments": {"query": q, "max_files": 50, **extra}}}))
r = subprocess.run([*args, "--stdio", "--mirror-prefix", "mirrors/"], input="\n".join(lines) + "\n",
                   capture_output=True, text=True, check=True)
by_id = {m.get("id"): m for m in map(json.loads, r.stdout.splitlines())}
with open(out, "w") as f:
    for i, (q, extra) in enumerate(QUERIES):
        res = by_id[i + 1]["result"]
        sc = res.get("structuredContent") or {}
        label = q + (" in " + extra["repo"] if extra else "")
        f.write(json.dumps({"label": label, "error": res.get("isError", False),
                            "files": sorted(x["repository"] + "/" + x["path"] for x in sc.get("files", [])),
                            "totalFiles": sc.get("totalFiles"), "totalMatches": sc.get("totalMatches"),
                            "truncation": sc.get("truncation", []),
                            "partial": "partialAnswer" in sc}) + "\n")
PY
CONNECTOR=$ZK_ROOT/build/san/bin/zoekt-connector
python3 "$T/ask.py" "$T/one.jsonl" "$CONNECTOR" --zoekt-url "$(cat "$T/one.url")" ||
  bail "the connector over one webserver answers the query set"
python3 "$T/ask.py" "$T/three.jsonl" "$CONNECTOR" --zoekt-url "$(cat "$T/shard0.url")" --shard-urls "$shard_urls" ||
  bail "the connector over three shards answers the query set"

# answer FILE LABEL KEY: one member of a query's answer, as JSON.
answer() {
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    a = json.loads(line)
    if a["label"] == sys.argv[2]:
        print(json.dumps(a[sys.argv[3]]))' "$1" "$2" "$3"
}
same() { [ "$(answer "$T/one.jsonl" "$1" "$2")" = "$(answer "$T/three.jsonl" "$1" "$2")" ]; }
same_counts() { same "$1" totalFiles && same "$1" totalMatches; }
limited() { answer "$T/$1.jsonl" "$2" truncation | grep -q '"zoekt_limit"'; }
completed() { ! limited one "$1" && ! limited three "$1"; }
whole() { [ "$(answer "$T/one.jsonl" "$1" error)$(answer "$T/three.jsonl" "$1" error)$(answer "$T/three.jsonl" "$1" partial)" = falsefalsefalse ]; }
shown() { answer "$T/$1.jsonl" "$2" files | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }

for label in "ioutil.ReadAll" "func main" "TODO"; do
  check "$label: both answer, whole (no shard missing), without a tool error" whole "$label"
  check "$label: Zoekt completed it on one webserver and on three shards" completed "$label"
  check "$label: three shards show the same $(shown one "$label") files as one webserver" same "$label" files
  check "$label: and count the same files and matches" same_counts "$label"
done
# Restricted to one repository, the search goes to the one shard that serves it, with Zoekt's whole match
# limit: the same answer as one webserver's, even where that limit cuts it.
label="err in go-git/go-git"
check "$label: both answer, whole, without a tool error" whole "$label"
check "$label: three shards show the same $(shown one "$label") files as one webserver" same "$label" files
check "$label: count the same files and matches" same_counts "$label"
check "$label: and stop where one webserver stops" same "$label" truncation
check "err: one webserver says it stopped at Zoekt's match limit" limited one err
check "err: so do three shards (each at its part of the limit): both answers say they are samples" limited three err
check "err: three shards still show 50 files" test "$(shown three err)" = 50
finish
