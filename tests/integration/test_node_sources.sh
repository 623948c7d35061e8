#!/usr/bin/env bash
# Discovery from a real code host on the local node (issue 31): a Gitea built from its Go module
# (scripts/gitea.sh) serves an organisation over HTTPS on this machine's address, and a corpus names it
# in spec.sources with a token Secret and filters. The operator, in its pod, lists the organisation
# through Gitea's API: the repositories the filters keep (not the archived one, the fork or the
# excluded one) reach the indexer's list and status.sources; a private repository is seen with the
# token. A repository created in Gitea appears at the next discovery (asked for by the annotation, and
# with Zoekt by Gitea's own repository webhook through the connector), a deleted one leaves after the
# grace period, and while Gitea is down the list stays as it was, SourcesReady says why and Ready stays
# True. With Zoekt, the discovered repositories are searchable, and a push reaches search through
# Gitea's push webhook.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

# The Zoekt image runs the search pods: without it discovery is still tested, search and webhooks not.
zoekt_why=
if zoekt_err=$("$ZK_ROOT/scripts/upstream.sh" zoekt amd64 2>&1 >/dev/null); then
  node_preflight
else
  zoekt_why="no Zoekt for amd64: $(printf '%s\n' "$zoekt_err" | tail -n 1 | sed 's/^upstream: //')"
  node_preflight operator connector gateway
fi

# Gitea's folder is not under NODE_TMP: node_cleanup, which runs first, would remove its PID file before
# Gitea is stopped, and leave it running. Gitea runs as nobody, so the folder must be searchable.
GITEA_DIR=$(mktemp -d /tmp/zk-gitea-test.XXXXXX)
chmod 755 "$GITEA_DIR"
on_exit "\"$ZK_ROOT/scripts/gitea.sh\" stop \"$GITEA_DIR\"; rm -rf \"$GITEA_DIR\""
vars=$("$ZK_ROOT/scripts/gitea.sh" start "$GITEA_DIR" 2>"$NODE_TMP/gitea.log") ||
  bail "Gitea starts: $(tail -3 "$NODE_TMP/gitea.log")"
eval "$vars"
gitea() { "$ZK_ROOT/scripts/gitea.sh" "$1" "$GITEA_DIR" "${@:2}" >>"$NODE_TMP/gitea.log" 2>&1; }

# The organisation: two repositories to index (one private), one archived, one excluded by a glob, and
# a fork of another organisation's repository.
gitea org acme && gitea org upstream &&
  gitea repo acme alpha --init && gitea repo acme beta --init --private && gitea repo acme old --init --archived &&
  gitea repo acme skip-me --init && gitea repo upstream lib --init && gitea fork upstream lib acme ||
  bail "the organisation is set up in Gitea: $(tail -3 "$NODE_TMP/gitea.log")"

NS=$(new_namespace sources) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall
operator_install

TOKEN=$(openssl rand -hex 16)
HOOK_SECRET=$(openssl rand -hex 16)
$KC -n "$NS" create secret generic gitea-token --from-literal=token="$GITEA_TOKEN" >/dev/null &&
  $KC -n "$NS" create secret generic git-credentials --from-literal=username="$GITEA_USER" \
    --from-literal=password="$GITEA_PASSWORD" >/dev/null &&
  $KC -n "$NS" create configmap git-ca --from-file=ca.crt="$GITEA_CA" >/dev/null &&
  $KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null &&
  $KC -n "$NS" create secret generic hooks --from-literal=secret="$HOOK_SECRET" >/dev/null ||
  bail "the corpus's Secrets"

# corpus INTERVAL: the corpus, listing acme every INTERVAL; a repository gone from Gitea leaves at the
# first listing that misses it (grace 0), so that the test need not wait a day.
corpus() {
  cat <<YAML | $KC apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: org, namespace: $NS}
spec:
  sources:
  - host: gitea
    url: $GITEA_URL
    org: acme
    tokenSecretRef: {name: gitea-token}
    exclude: ["acme/skip-*"]
  discovery: {interval: $1, grace: "0"}
  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}
  webhook: {secretRef: {name: hooks}}
  poll: {interval: "0"}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  gateway: {image: $("$ZK_ROOT/scripts/images.sh" ref gateway), tokenSecretRef: {name: search-tokens}}
YAML
}
corpus 1h || bail "a corpus with spec.sources is accepted"

# listed: the indexer's repository list, one name per line, sorted.
listed() { $KC -n "$NS" get configmap org-indexer -o jsonpath='{.data.repositories\.txt}' 2>/dev/null | awk '!/^#/ && NF {print $1}' | sort; }
lists() { [ "$(listed | tr '\n' ' ')" = "$1" ]; }
# check_lists DESC SECONDS WANT: the list becomes WANT within SECONDS; a failure shows what it was.
check_lists() { check "$1" eventually "$2" lists "$3" || echo "# listed: $(listed | tr '\n' ' ')"; }
sources_ready() { condition_is "$NS" org SourcesReady "$1"; }
discover_now() { $KC -n "$NS" annotate csc org --overwrite "codesearch.dev/discover-requested-at=$(date -u +%FT%T.%NZ)" >/dev/null; }
host=${GITEA_URL#https://}
host=${host%%:*}

check "SourcesReady turns True after the first listing" eventually 90 sources_ready True
check_lists "the filters keep alpha and the private beta (not the archived, the excluded or the fork)" 30 \
  "$host/acme/alpha $host/acme/beta "
check "status.sources counts them" test "$(csc "$NS" org '.status.sources[0].repositories')" = 2
check "status.sources names the organisation" test "$(csc "$NS" org '.status.sources[0].org')" = acme
check "the list carries Gitea's web address for file links" \
  bash -c "$KC -n $NS get configmap org-indexer -o jsonpath='{.data.repositories\\.txt}' | grep -q ' gitea $GITEA_URL/acme/alpha\$'"

# A repository created in Gitea: the next discovery, asked for now, adds it.
gitea repo acme gamma --init || bail "gamma is created in Gitea"
discover_now
check_lists "a repository created in Gitea joins the list at the next discovery" 60 \
  "$host/acme/alpha $host/acme/beta $host/acme/gamma "

# Gitea down: the list stays, SourcesReady says which source fails, Ready is unchanged.
ready_before=$(csc "$NS" org '.status.conditions[?(@.type=="Ready")].status')
"$ZK_ROOT/scripts/gitea.sh" stop "$GITEA_DIR" >>"$NODE_TMP/gitea.log" 2>&1
discover_now
check "with Gitea down SourcesReady turns False" eventually 60 sources_ready False
check "its message names the source" bash -c "$KC -n $NS get csc org -o jsonpath='{.status.conditions[?(@.type==\"SourcesReady\")].message}' | grep -q 'gitea acme'"
check_lists "the list is kept while the host is down" 0 "$host/acme/alpha $host/acme/beta $host/acme/gamma "
check "Ready is what it was" test "$(csc "$NS" org '.status.conditions[?(@.type=="Ready")].status')" = "$ready_before"
vars=$("$ZK_ROOT/scripts/gitea.sh" start "$GITEA_DIR" 2>>"$NODE_TMP/gitea.log") || bail "Gitea starts again"
eval "$vars"

# A repository deleted in Gitea leaves (grace 0) once the host answers again.
gitea delete acme gamma || bail "gamma is deleted in Gitea"
discover_now
check "SourcesReady is True again once Gitea answers" eventually 60 sources_ready True
check_lists "a repository deleted in Gitea leaves the list" 30 "$host/acme/alpha $host/acme/beta "

# The operator restarts: the discovered list is read back from the ConfigMap and nothing changes.
rv=$($KC -n "$NS" get configmap org-indexer -o jsonpath='{.metadata.resourceVersion}')
$KC -n zoekt-operator rollout restart deployment/zoekt-operator >/dev/null
check "the operator comes back" eventually 180 operator_ready
sleep 10
check "a restarted operator rewrites nothing it discovered" \
  test "$($KC -n "$NS" get configmap org-indexer -o jsonpath='{.metadata.resourceVersion}')" = "$rv"

if [ -n "$zoekt_why" ]; then
  skip "search and Gitea's webhooks: $zoekt_why"
  finish
  exit $?
fi

# With Zoekt: the discovered repositories are searched, Gitea's webhooks reach the connector.
gitea_push() { # REPO FILE LINE: commits FILE in a clone of acme/REPO and pushes it to Gitea.
  local work=$NODE_TMP/work-$1
  rm -rf "$work"
  GIT_SSL_CAINFO="$GITEA_CA" git clone -q "https://$GITEA_USER:$GITEA_PASSWORD@${GITEA_URL#https://}/acme/$1.git" "$work" &&
    mkdir -p "$(dirname "$work/$2")" && printf '%s\n' "$3" >"$work/$2" && git -C "$work" add "$2" &&
    git -C "$work" -c user.name=dev -c user.email=dev@example.invalid commit -q -m "$2" &&
    GIT_SSL_CAINFO="$GITEA_CA" git -C "$work" push -q origin HEAD
}
gitea_push alpha src/alpha.go '// alpha-discovered-marker-5d1e' || bail "a commit is pushed to alpha"
job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "a reindex Job runs to its end"; }
ok "the reindex Job of the discovered repositories ran to its end ($job)"
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
HOOK=$(service_url "$NS" org-search 8080 /hooks/push) || bail "the corpus's Service has an address"
check "a discovered repository is searchable" eventually 180 search_finds "$MCP" "$TOKEN" alpha-discovered-marker-5d1e "acme/alpha"

# Gitea's organisation webhook, pointed at the Service: pushes and repository events.
gitea hook acme "$HOOK" "$HOOK_SECRET" || bail "the organisation webhook is set in Gitea"
gitea_push beta src/beta.go '// beta-pushed-marker-77c2' || bail "a commit is pushed to beta"
check "a push reaches search through Gitea's webhook" eventually 180 search_finds "$MCP" "$TOKEN" beta-pushed-marker-77c2 "acme/beta"
gitea repo acme delta --init || bail "delta is created in Gitea"
check_lists "a repository created in Gitea joins the list through its repository webhook" 60 \
  "$host/acme/alpha $host/acme/beta $host/acme/delta "
finish
