#!/usr/bin/env bash
# The CodeSearchCorpus CRD on the real control plane: it installs, `kubectl explain` teaches the API,
# defaults are applied, the schema rejects invalid objects, the printer columns and the status
# subresource work (including `kubectl wait --for=condition=Fresh`), and the examples are valid.
set -u
source "$(dirname "$0")/lib.sh"

CRD=$ZK_ROOT/crds/codesearch.dev_codesearchcorpora.yaml

# kubectl, retried while the shared API server is briefly away (another test may be restarting it);
# client-side validation is off so that the server's schema is what accepts or rejects.
kubectl() {
  local out rc
  for _ in $(seq 1 60); do
    out=$(command kubectl "$@" 2>&1)
    rc=$?
    grep -qE 'connection refused|failed to download openapi|connection reset|EOF$' <<<"$out" || break
    sleep 0.5
  done
  [ -n "$out" ] && printf '%s\n' "$out"
  return $rc
}
export -f kubectl
eventually 30 kubectl get --raw /readyz >/dev/null 2>&1
check "the CRD applies" kubectl apply -f "$CRD"
check "the CRD is established" kubectl wait --for=condition=Established crd/codesearchcorpora.codesearch.dev --timeout=30s
explained() { kubectl explain csc.spec.repositories 2>/dev/null | grep -q "Where to clone from"; }
# The OpenAPI document is republished a few seconds after a CRD changes.
check "kubectl explain csc.spec.repositories describes the fields" eventually 60 explained
check "kubectl explain reaches nested fields" bash -c "kubectl explain csc.spec.storage.onDelete | grep -q 'Retain keeps'"
check "the short name and category resolve" bash -c "kubectl api-resources --api-group=codesearch.dev -o wide | grep -E 'csc .*codesearch'"

ns=$(new_namespace crd)
on_exit "kubectl delete namespace $ns --wait=false"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

corpus() { # corpus NAME SPEC-JSON: a corpus manifest
  printf '{"apiVersion":"codesearch.dev/v1alpha1","kind":"CodeSearchCorpus","metadata":{"name":"%s","namespace":"%s"},"spec":%s}' "$1" "$ns" "$2"
}
accepted() { corpus "$1" "$2" >"$tmp/$1.json" && kubectl apply --validate=false -f "$tmp/$1.json" >/dev/null 2>&1; }
# rejected NAME SPEC-JSON FIELD: the API server refuses the object and names FIELD. List indices in
# FIELD ("[0]") are optional: Kubernetes 1.20 leaves them out of schema errors, later versions print them.
rejected() {
  local out
  corpus "$1" "$2" >"$tmp/$1.json"
  out=$(kubectl create --validate=false --dry-run=server -f "$tmp/$1.json" 2>&1) && return 1
  local re
  re=$(printf '%s' "$3" | sed -e 's/\./\\./g' -e 's/\[\([0-9]*\)\]/(\\[\1\\])?/g')
  grep -qE "$re" <<<"$out" || { echo "# expected $3 in: $out"; return 1; }
}

check "a minimal corpus is accepted" accepted min '{"repositories":[{"url":"https://github.com/o/r"}]}'
got() { kubectl get csc min -n "$ns" -o jsonpath="$1"; }
check "schedule defaults to nightly" test "$(got '{.spec.schedule}')" = "0 3 * * *"
check "storage defaults to efs-sc, 100Gi, Retain" test "$(got '{.spec.storage.storageClassName}/{.spec.storage.size}/{.spec.storage.onDelete}')" = "efs-sc/100Gi/Retain"
check "architecture defaults to arm64" test "$(got '{.spec.webserver.architecture}')" = arm64
check "freshness.maxAge defaults to 36h" test "$(got '{.spec.freshness.maxAge}')" = 36h
check "connector limits default" test "$(got '{.spec.connector.maxFiles}/{.spec.connector.contextLines}/{.spec.connector.searchTimeoutSeconds}/{.spec.connector.listTimeoutSeconds}')" = "30/2/30/10"
check "gateway port defaults to 8080" test "$(got '{.spec.gateway.port}')" = 8080

R='"repositories":[{"url":"https://github.com/o/r"}]'
check "no repositories: rejected" rejected r1 '{}' 'spec.repositories'
check "an empty repository list: rejected" rejected r2 '{"repositories":[]}' 'spec.repositories'
check "an http URL: rejected" rejected r3 '{"repositories":[{"url":"http://github.com/o/r"}]}' 'spec.repositories[0].url'
check "a URL with a space: rejected" rejected r4 '{"repositories":[{"url":"https://h/a b"}]}' 'spec.repositories[0].url'
check "a bad branch: rejected" rejected r5 '{"repositories":[{"url":"https://h/a","branches":["a b"]}]}' 'spec.repositories[0].branches[0]'
check "a bad schedule: rejected" rejected r6 "{$R,\"schedule\":\"every night\"}" 'spec.schedule'
check "an unknown onDelete policy: rejected" rejected r7 "{$R,\"storage\":{\"onDelete\":\"Keep\"}}" 'spec.storage.onDelete'
check "an unknown architecture: rejected" rejected r8 "{$R,\"webserver\":{\"architecture\":\"s390x\"}}" 'spec.webserver.architecture'
check "a privileged port: rejected" rejected r9 "{$R,\"gateway\":{\"port\":80}}" 'spec.gateway.port'
check "maxFiles above 200: rejected" rejected r10 "{$R,\"connector\":{\"maxFiles\":500}}" 'spec.connector.maxFiles'
check "a malformed maxAge: rejected" rejected r11 "{$R,\"freshness\":{\"maxAge\":\"36 hours\"}}" 'spec.freshness.maxAge'
check "an extra flag without a dash: rejected" rejected r12 "{$R,\"indexer\":{\"extraFlags\":[\"rm\"]}}" 'spec.indexer.extraFlags[0]'
check "a Secret reference without a name: rejected" rejected r13 "{$R,\"gitCredentialsSecretRef\":{}}" 'spec.gitCredentialsSecretRef.name'
check "a bad size: rejected" rejected r14 "{$R,\"storage\":{\"size\":\"lots\"}}" 'spec.storage.size'
many=$(python3 -c 'import json; print(json.dumps({"repositories":[{"url":"https://h/r%d" % i} for i in range(2001)]}))')
check "2001 repositories: rejected" rejected r15 "$many" 'spec.repositories'
many=$(python3 -c 'import json; print(json.dumps({"repositories":[{"url":"https://h/r%d" % i} for i in range(2000)]}))')
check "2000 repositories: accepted" accepted big "$many"

# Status subresource and printer columns.
status='{"status":{"observedGeneration":1,"repositoryCount":121,"lastIndexTime":"2026-11-29T03:41:10Z","oldestIndexTime":"2026-11-29T03:12:55Z","endpoint":"http://min-search.'$ns'.svc:8080","conditions":[{"type":"Ready","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-29T03:41:10Z","reason":"Available","message":"ok"},{"type":"Fresh","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-29T03:41:10Z","reason":"WithinMaxAge","message":"ok"}]}}'
check "status is written through /status" \
  kubectl patch csc min -n "$ns" --subresource=status --type=merge -p "$status"
check "a write to the main resource ignores status" \
  bash -c "kubectl patch csc min -n $ns --type=merge -p '{\"status\":{\"repositoryCount\":1}}' >/dev/null && test \"\$(kubectl get csc min -n $ns -o jsonpath='{.status.repositoryCount}')\" = 121"
check "kubectl get csc shows the columns" \
  bash -c "kubectl get csc min -n $ns | head -1 | grep -qE '^NAME +REPOS +READY +FRESH +LAST INDEXED +AGE\$'"
check "kubectl get csc shows the figures" bash -c "kubectl get csc min -n $ns --no-headers | grep -qE '^min +121 +True +True '"
check "kubectl wait --for=condition=Fresh works" kubectl wait --for=condition=Fresh "csc/min" -n "$ns" --timeout=5s
check "a bad condition reason is rejected" bash -c "! kubectl patch csc min -n $ns --subresource=status --type=merge -p '{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Maybe\",\"lastTransitionTime\":\"2026-11-29T03:41:10Z\",\"reason\":\"not camel case\",\"message\":\"\"}]}}' 2>/dev/null"

# The examples are valid against the schema.
for f in "$ZK_ROOT"/examples/corpus-*.yaml; do
  sed "s/namespace: codesearch/namespace: $ns/" "$f" >"$tmp/example.yaml"
  check "example $(basename "$f") is valid" kubectl create --validate=false --dry-run=server -f "$tmp/example.yaml"
done

finish
