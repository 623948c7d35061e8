#!/usr/bin/env bash
# Everything the operator creates, running for real on the local node: the operator installed with
# manifests/ (kustomize) from its image, in a pod under its own ServiceAccount and RBAC with leader
# election; a corpus of repositories served over HTTPS by a git server behind a private CA (one
# repository private, one with two branches, one URL that fails); a reindex Job running the real
# indexer script and zoekt-git-index onto the shared efs-sc volume; the search pod (zoekt-webserver,
# nginx, connector) serving that index; and an agent's MCP calls through the corpus's Service.
# Then the corpus changes (a repository added, one removed, a commit pushed), the search pod is
# deleted, and the corpus is deleted. See docs/testing.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight
git_server_start
NS=$(new_namespace e2e) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall

# ---- repositories, as the organisation's git server holds them ---------------------------------------
git_commit alpha main src/payments.go 'package payments' '' '// ChargeCard bills a card once.' \
  'func ChargeCard(amount int) error {' '	const marker = "alpha-marker-7f3a"' '	return nil' '}'
git_commit beta main README.md 'beta on main' 'beta-main-marker-2b61'
git_commit beta release README.md 'beta on release' 'beta-release-marker-c4e9'
git_commit private/secret main notes.txt 'the private repository' 'secret-marker-91c2'

# ---- the operator, installed as a platform engineer would ---------------------------------------------
operator_install
holder=$($KC -n zoekt-operator get lease zoekt-operator-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
check "the Lease holder is one of the operator's pods ($holder)" \
  bash -c "$KC -n zoekt-operator get pods -o name | grep -q '${holder%%_*}'"

# ---- a corpus -----------------------------------------------------------------------------------------
TOKEN=$(openssl rand -hex 16)
$KC -n "$NS" create secret generic git-credentials --from-literal=username="$GIT_USER" \
  --from-literal=password="$GIT_PASSWORD" >/dev/null
$KC -n "$NS" create configmap git-ca --from-file=ca.crt="$GIT_CA" >/dev/null
$KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
corpus() { # corpus REPOSITORY_LINES: applies corpus "org" with these repositories
  node_corpus org "$1" search-tokens "  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}"
}
alpha="  - {url: $GIT_URL/alpha.git, name: local/alpha}"
beta="  - {url: $GIT_URL/beta.git, name: local/beta, branches: [main, release]}"
secret="  - {url: $GIT_URL/private/secret.git, name: local/secret}"
missing="  - {url: $GIT_URL/missing.git, name: local/missing}"
gamma="  - {url: $GIT_URL/gamma.git, name: local/gamma}"
corpus "$alpha
$beta
$secret
$missing" || bail "the corpus is accepted"

pvc_bound() { [ "$($KC -n "$NS" get pvc org-index -o jsonpath='{.status.phase}' 2>/dev/null)" = Bound ]; }
check "the operator creates the children and the efs-sc claim binds" eventually 120 pvc_bound
exists() { $KC -n "$NS" get "$@" >/dev/null 2>&1; }
check "the search Deployment exists" eventually 60 exists deployment org-search
check "the indexer CronJob exists" eventually 60 exists cronjob org-indexer

job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "a reindex Job runs to its end"; }
ok "a reindex Job ran to its end ($job)"
check "the Job succeeded" test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
$KC -n "$NS" logs "job/$job" >"$NODE_TMP/indexer.log" 2>&1
line_for() { grep -F "\"repository\":\"$1\"" "$NODE_TMP/indexer.log"; }
check "alpha was indexed" bash -c "grep -F '\"repository\":\"local/alpha\"' '$NODE_TMP/indexer.log' | grep -q '\"status\":\"indexed\"'"
check "the private repository was indexed with the credentials" \
  bash -c "grep -F '\"repository\":\"local/secret\"' '$NODE_TMP/indexer.log' | grep -q '\"status\":\"indexed\"'"
check "the missing repository failed with git's own reason" \
  bash -c "grep -F '\"repository\":\"local/missing\"' '$NODE_TMP/indexer.log' | grep '\"status\":\"failed\"' | grep -qi 'not found\|404'"
failed_repos() { [ "$(csc "$NS" org '.status.indexer.failedRepositories[*]')" = local/missing ]; }
check "status.indexer.failedRepositories names the missing repository only" eventually 60 failed_repos

count_is() { [ "$(csc "$NS" org .status.repositoryCount)" = "$1" ]; }
check "status.repositoryCount is 3, read from the search pod's /index-status" eventually 180 count_is 3 ||
  node_diagnostics "$NS"
check "Indexed=True" eventually 30 condition_is "$NS" org Indexed True
check "Fresh=True" eventually 30 condition_is "$NS" org Fresh True
check "Ready=True" eventually 60 condition_is "$NS" org Ready True
check "status.lastIndexTime is set" test -n "$(csc "$NS" org .status.lastIndexTime)"
check "status.oldestIndexTime is set" test -n "$(csc "$NS" org .status.oldestIndexTime)"
check "status.endpoint names the Service" test "$(csc "$NS" org .status.endpoint)" = "http://org-search.$NS.svc:8080"

# ---- an agent, through the Service ---------------------------------------------------------------------
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
check "search_code finds a known line of a known file" search_finds "$MCP" "$TOKEN" alpha-marker-7f3a \
  'const marker = "alpha-marker-7f3a"'
check "the match is named by repository and file" grep -q 'local/alpha' "$NODE_TMP/last-search"
check "the match has its file name" grep -q 'src/payments.go' "$NODE_TMP/last-search"
check "the match has its context line before it" grep -q 'func ChargeCard' "$NODE_TMP/last-search"
check "the match has its context line after it" grep -q 'return nil' "$NODE_TMP/last-search"
check "the private repository is searchable" search_finds "$MCP" "$TOKEN" secret-marker-91c2 local/secret
check "both branches of beta are searchable (release)" search_finds "$MCP" "$TOKEN" beta-release-marker-c4e9 local/beta
check "both branches of beta are searchable (main)" search_finds "$MCP" "$TOKEN" beta-main-marker-2b61 local/beta
check "list_repositories names the three indexed repositories" \
  bash -c "out=\$(node '$NODE_HERE/mcp-call.mjs' '$MCP' '$TOKEN' list_repositories) && for r in local/alpha local/beta local/secret; do grep -q \"\$r\" <<<\"\$out\" || exit 1; done"
mcp "$MCP" "" search_code '{"query":"alpha-marker-7f3a"}' >"$NODE_TMP/no-token" 2>&1
check "without a token the MCP client is refused with 401" grep -q '(HTTP 401)' "$NODE_TMP/no-token"
check "and told that a bearer token is required" grep -q 'bearer token is required' "$NODE_TMP/no-token"
check "without a token /mcp answers 401" \
  test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -H 'Content-Type: application/json' "$MCP" -d '{}')" = 401

# ---- the corpus changes --------------------------------------------------------------------------------
git_commit gamma main lib/gamma.py 'GAMMA = "gamma-marker-55d0"'
git_commit alpha main src/refund.go 'package payments' 'const refund = "alpha-second-marker-e813"'
corpus "$alpha
$beta
$secret
$missing
$gamma" || bail "the changed corpus is accepted"
reindex "$NS" org >/dev/null || { node_diagnostics "$NS"; bail "the second reindex Job runs to its end"; }
ok "a second reindex Job ran to its end"
check "an added repository is counted (4)" eventually 120 count_is 4
check "the added repository is searchable" search_finds "$MCP" "$TOKEN" gamma-marker-55d0 local/gamma
check "a pushed commit is searchable" search_finds "$MCP" "$TOKEN" alpha-second-marker-e813 src/refund.go

volume=$($KC get pv "$($KC -n "$NS" get pvc org-index -o jsonpath='{.spec.volumeName}')" -o jsonpath='{.spec.hostPath.path}')
check "beta's shards are on the shared volume" bash -c "ls '$volume/index' | grep -q '^local%2Fbeta'"
corpus "$alpha
$secret
$missing
$gamma" || bail "the corpus without beta is accepted"
reindex "$NS" org >/dev/null || { node_diagnostics "$NS"; bail "the third reindex Job runs to its end"; }
ok "a third reindex Job ran to its end"
check "a removed repository's shard is gone from the volume" bash -c "! ls '$volume/index' | grep -q '^local%2Fbeta'"
check "the count drops to 3" eventually 120 count_is 3
nomatch() { ! search_finds "$MCP" "$TOKEN" beta-main-marker-2b61 local/beta && grep -qi 'no match' "$NODE_TMP/last-search"; }
check "the removed repository is no longer searchable" eventually 30 nomatch

# ---- two replicas: a session's requests reach the pod that holds it -----------------------------------
# An MCP session lives in one connector. Each request below opens a new connection, as a client's pool
# or an Ingress may; the Service keeps this client on one pod (sessionAffinity ClientIP), so none of
# them is answered 404 by the other replica.
$KC -n "$NS" patch csc org --type=merge -p '{"spec":{"webserver":{"replicas":2}}}' >/dev/null
replicas_ready() { [ "$($KC -n "$NS" get deploy org-search -o jsonpath='{.status.readyReplicas}' 2>/dev/null)" = "$1" ]; }
check "two search replicas become Ready" eventually 180 replicas_ready 2
endpoints() { # the Service's ready endpoints, by the EndpointSlices kube-proxy reads
  $KC -n "$NS" get endpointslices -l kubernetes.io/service-name=org-search \
    -o jsonpath='{range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\n"}{end}' 2>/dev/null | grep -c .
}
two_endpoints() { [ "$(endpoints)" = 2 ]; }
check "and both are the Service's endpoints" eventually 60 two_endpoints
sleep 3 # kube-proxy's rules follow the EndpointSlice within a second or so
mcp_post() { # mcp_post BODY [SESSION]: POSTs BODY to the Service's /mcp on a new connection; prints headers
  curl -s -D - -o /dev/null --max-time 10 -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $TOKEN" \
    ${2:+-H "Mcp-Session-Id: $2"} --data "$1" "$MCP"
}
sid=$(mcp_post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}' |
  tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *//p')
mcp_post '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$sid" >/dev/null
codes=$(for i in $(seq 1 12); do
  mcp_post "{\"jsonrpc\":\"2.0\",\"id\":$((i + 1)),\"method\":\"tools/list\"}" "$sid" | head -n 1 | awk '{ printf "%s ", $2 }'
done)
check "twelve requests of one session, each on a new connection, all answered 200 ($codes)" \
  test "$(tr ' ' '\n' <<<"$codes" | grep -c '^200$')" = 12
$KC -n "$NS" patch csc org --type=merge -p '{"spec":{"webserver":{"replicas":1}}}' >/dev/null
check "back to one replica" eventually 120 bash -c "[ \"\$($KC -n $NS get pods -l app.kubernetes.io/component=search -o name | wc -l)\" = 1 ]"

# ---- the search pod is replaced; then the corpus goes -------------------------------------------------
pod=$($KC -n "$NS" get pods -l app.kubernetes.io/component=search -o jsonpath='{.items[0].metadata.name}')
$KC -n "$NS" delete pod "$pod" --wait=false >/dev/null
new_pod_ready() {
  local p
  p=$($KC -n "$NS" get pods -l app.kubernetes.io/component=search \
        -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
      awk -v old="$pod" '$1 != old && $2 == "True" { print $1 }')
  [ -n "$p" ]
}
check "a deleted search pod comes back Ready" eventually 120 new_pod_ready
check "and serves the same index from the volume" eventually 60 search_finds "$MCP" "$TOKEN" alpha-marker-7f3a local/alpha

$KC -n "$NS" delete csc org --wait=true --timeout=60s >/dev/null
children_gone() {
  ! exists deployment org-search && ! exists cronjob org-indexer && ! exists service org-search &&
    ! exists configmap org-indexer
}
check "deleting the corpus removes its children" eventually 120 children_gone
check "the retained volume stays" exists pvc org-index

finish
