#!/usr/bin/env bash
# The arm64 images, whose programs the amd64 node cannot run: each is started from inside its own
# image under qemu-user-static (scripts/images.sh run). The indexer script indexes a repository with
# the arm64 zoekt-git-index and universal-ctags, the arm64 zoekt-webserver serves a symbol search over it, the arm64 connector answers an agent's MCP call
# (the official SDK client over stdio) against that webserver, and the arm64 operator and nginx start.
source "$(dirname "$0")/lib.sh"

IMG=$ZK_ROOT/scripts/images.sh
T=$(mktemp -d /tmp/zk-arm64-test.XXXXXX)
chmod 755 "$T"
on_exit "rm -rf '$T'"
need_zoekt arm64
run() { "$IMG" run "$1" arm64 -v "$T:/work" -- "${@:2}"; }

check "the Zoekt image is arm64" test "$(run zoekt uname -m 2>/dev/null)" = aarch64

# The indexer as the CronJob runs it: controller/assets/indexer.sh under the image's sh, its git and
# its universal-ctags, mirroring a repository and indexing it with the arm64 zoekt-git-index.
git init -q -b main "$T/src"
mkdir -p "$T/src/pkg"
printf 'package pkg\n\n// Frobnicate is what the arm64 test looks for.\nfunc Frobnicate() string {\n\treturn "arm64-marker-3d9e"\n}\n' >"$T/src/pkg/frob.go"
git -C "$T/src" add . && git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -q -m init
cp "$ZK_ROOT/controller/assets/indexer.sh" "$T/indexer.sh"
echo "mirrors/example.org/arm/demo file:///work/src" >"$T/repositories.txt"
chmod -R a+rwX "$T"
# The image's user owns the source repository, as a git server's files are its own: git refuses to
# read a repository another user owns (safe.directory).
chown -R 65532:65532 "$T/src"
run zoekt env REPOS_FILE=/work/repositories.txt DATA_DIR=/work/data INDEX_DIR=/work/index \
  CREDENTIALS_DIR=/work/no-credentials TERMINATION_LOG=/work/termination-log sh /work/indexer.sh >"$T/indexer.out" 2>&1
check "the arm64 indexer indexes the repository with symbols" \
  grep -q '"repository":"mirrors/example.org/arm/demo","status":"indexed","step":"index","shards":1,"symbols":true' "$T/indexer.out"
check "its shard carries the repository's full name" bash -c "ls '$T/index' | grep -q '^mirrors%2Fexample.org%2Farm%2Fdemo_v16\..*\.zoekt$'"

port=$("$ZK_ROOT/scripts/free-port.sh")
setsid "$IMG" run zoekt arm64 -v "$T:/work" -- zoekt-webserver -index /work/index -listen "127.0.0.1:$port" -rpc \
  >"$T/webserver.log" 2>&1 &
web=$!
on_exit "kill -- -$web"
check "the arm64 zoekt-webserver answers" eventually 60 curl -sf -o /dev/null "http://127.0.0.1:$port/healthz"
search=$(curl -s --max-time 20 -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$port/api/search" \
  -d '{"Q":"sym:Frobnicate","Opts":{"NumContextLines":1}}')
check "it serves a symbol search over the index" grep -q '"Sym":"Frobnicate"' <<<"$search"

out=$(MCP_STDIO_COMMAND="[\"$IMG\",\"run\",\"connector\",\"arm64\",\"--\",\"zoekt-connector\",\"--stdio\",\"--zoekt-url\",\"http://127.0.0.1:$port\",\"--mirror-prefix\",\"mirrors/\"]" \
  node "$ZK_ROOT/tests/integration/node/mcp-call.mjs" stdio "" search_code '{"query":"arm64-marker-3d9e"}' 2>&1)
check "the arm64 connector answers an MCP search over stdio" grep -q 'return "arm64-marker-3d9e"' <<<"$out"
check "with the repository named without the mirror prefix" grep -q 'example.org/arm/demo' <<<"$out"

cat >"$T/corpus.yaml" <<'YAML'
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: cs}
spec:
  repositories: [{url: "https://git.example.org/acme/api.git"}]
YAML
rendered=$(run operator zoekt-operator render -f /work/corpus.yaml 2>&1)
check "the arm64 operator renders a corpus" grep -q 'kind: Deployment' <<<"$rendered"
nginx=$("$IMG" run gateway arm64 -- nginx -v 2>&1)
check "the arm64 gateway's nginx starts" grep -q 'nginx version' <<<"$nginx"

finish
