#!/usr/bin/env bash
# corpus_status against the real API server, as the connector runs in the cluster: under an identity
# bound to exactly the Role the operator renders for the search pod (it may read its own corpus and
# nothing else). The connector (sanitized build) runs over stdio against the Zoekt replay server and
# must report the corpus's conditions and figures from its status, the webserver's own view, and a clear
# error for a corpus the Role does not cover.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

REPLAY=$ZK_ROOT/build/san/tests/tools/zoekt-replay
T=$(mktemp -d)
on_exit "rm -rf $T"
NS=$(new_namespace csc-status) || { fail "namespace created"; finish; exit 1; }
on_exit "kubectl delete namespace $NS --wait=false"

kubectl apply -f "$ZK_ROOT/crds/codesearch.dev_codesearchcorpora.yaml" >/dev/null
check "the CRD is established" kubectl wait --for condition=established --timeout=60s crd/codesearchcorpora.codesearch.dev

cat >"$T/corpus.yaml" <<YAML
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: $NS}
spec:
  repositories:
  - url: https://github.com/example/alpha.git
YAML
kubectl apply -f "$T/corpus.yaml" >/dev/null
sed 's/name: org,/name: other,/' "$T/corpus.yaml" | kubectl apply -f - >/dev/null

# The status the operator would have written (no operator runs in this test: its output is the input).
status='{"status":{"observedGeneration":1,"repositoryCount":3,"lastIndexTime":"2026-11-29T03:41:10Z",
  "oldestIndexTime":"2026-11-29T03:12:55Z","endpoint":"http://org-search.'$NS'.svc:8080",
  "conditions":[{"type":"Ready","status":"True","reason":"Available","message":"1 of 1 search pods are available",
   "lastTransitionTime":"2026-11-29T03:00:00Z","observedGeneration":1},
  {"type":"Fresh","status":"False","reason":"Stale","message":"oldest index is 41h old; maxAge is 36h",
   "lastTransitionTime":"2026-11-29T03:00:00Z","observedGeneration":1}]}}'
check "the corpus status is set through /status" \
  kubectl -n "$NS" patch csc org --subresource=status --type=merge -p "$status"

# The search pod's Role, exactly as rendered, bound to a fresh client-certificate identity.
"$ZK_BIN/zoekt-operator" render -f "$T/corpus.yaml" >"$T/children.yaml"
python3 - "$T/children.yaml" "$NS" >"$T/rbac.json" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
role = next(d for d in docs if d["kind"] == "Role")
role["metadata"].pop("ownerReferences", None)  # the corpus uid in the render is not this cluster's
binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": "csc-status-reader", "namespace": sys.argv[2]},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]},
           "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "csc-status-reader"}]}
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [role, binding]}))
PY
check "the rendered Role and a binding to the test identity apply" kubectl apply -f "$T/rbac.json"
USER_KC=$("$ZK_ROOT/scripts/cluster.sh" user csc-status-reader)
check "the identity cannot list corpora (the Role is narrow)" \
  bash -c "! kubectl --kubeconfig '$USER_KC' -n '$NS' get csc >/dev/null 2>&1"

"$REPLAY" --fixtures "$ZK_ROOT/tests/fixtures/zoekt" --port 0 --port-file "$T/port" 2>"$T/replay.log" &
on_exit "kill $!"
eventually 10 test -s "$T/port"
ZOEKT=http://127.0.0.1:$(cat "$T/port")

# call_status CORPUS: one corpus_status call over stdio; prints the tool result as JSON.
call_status() {
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"corpus_status","arguments":{}}}' |
    timeout -k 5 60 "$ZK_BIN/zoekt-connector" --stdio --zoekt-url "$ZOEKT" --kubeconfig "$USER_KC" --corpus "$NS/$1" 2>>"$T/connector.log" |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("id") == 2: print(json.dumps(m["result"]))'
}
field() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

R=$(call_status org)
TEXT=$(printf '%s' "$R" | field 'r["content"][0]["text"]')
echo "$TEXT" | sed 's/^/# /'
check "corpus_status succeeds" [ "$(printf '%s' "$R" | field 'r.get("isError", False)')" = False ]
check "it shows Fresh=False with the reason and message" grep -q 'Fresh=False (Stale): oldest index is 41h old; maxAge is 36h' <<<"$TEXT"
check "it shows Ready=True" grep -q 'Ready=True (Available)' <<<"$TEXT"
check "it shows the corpus figures" grep -q 'repositories 3, last index 2026-11-29T03:41:10Z, oldest index 2026-11-29T03:12:55Z' <<<"$TEXT"
check "it shows what the webserver serves" grep -q 'Search webserver .*: 3 repositories' <<<"$TEXT"
check "structuredContent carries the corpus status" \
  [ "$(printf '%s' "$R" | field 'r["structuredContent"]["corpus"]["status"]["repositoryCount"]')" = 3 ]

R=$(call_status other)
TEXT=$(printf '%s' "$R" | field 'r["content"][0]["text"]')
echo "$TEXT" | sed 's/^/# /'
check "another corpus is refused by the API server (Forbidden), and said so" \
  grep -q "Corpus $NS/other: could not be read: .*Forbidden" <<<"$TEXT"
check "the webserver's view is still reported" grep -q 'Search webserver .*: 3 repositories' <<<"$TEXT"
# End of input right behind a tools/call is how one-shot clients use stdio: the reply must come and the
# process must end cleanly. The tool runs on a worker thread; were it detached, it could still be
# tearing down OpenSSL's per-thread state as the process exits, and LeakSanitizer reported that as a
# leak in about one session in six (and can hang there). Many sessions in a row make that visible.
# (grep, not python, reads the replies here: python's start-up would be most of the loop's time.)
requests=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"corpus_status","arguments":{}}}')
answered=0 clean=0
for _ in $(seq 40); do
  out=$(timeout -k 5 60 "$ZK_BIN/zoekt-connector" --stdio --zoekt-url "$ZOEKT" --kubeconfig "$USER_KC" \
          --corpus "$NS/org" <<<"$requests" 2>>"$T/connector.log") && clean=$((clean + 1))
  grep '"id":2' <<<"$out" | grep -v '"isError":true' | grep -q 'repositories 3, last index' && answered=$((answered + 1))
done
check "40 one-shot sessions in a row are all answered" [ "$answered" -eq 40 ]
check "and every connector process exited 0" [ "$clean" -eq 40 ]
check "no sanitizer report from the connector" bash -c "! grep -q 'Sanitizer\|runtime error' '$T/connector.log'"
finish
