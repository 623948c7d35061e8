#!/usr/bin/env bash
# Push to searchable on the local node (issue 20), through the corpus's Service as an agent searches:
# FRESHNESS_BENCH_PUSHES commits (default 20) pushed to the machine's HTTPS git server, each timed from
# `git push` returning until search_code through the Service finds the commit's new token. Once with a
# signed webhook delivered through the Service's /hooks/push right after each push (polling off, so the
# webhook alone makes the figure), and once by polling alone (FRESHNESS_BENCH_INTERVAL, default 30s,
# the smallest interval the CRD accepts; no webhook). Each push follows the previous one's answer, which
# comes right after a poll: by polling every push lands at the worst moment of the cycle, just after a
# look, so that figure is the interval plus the index run, the bound a user can count on.
#
# Needs the node (scripts/cluster.sh up) and the images (scripts/images.sh build); `make
# bench-freshness` brings up both. Prints two Markdown table rows (p50, p95, max in seconds) and the
# raw figures as "# ..." lines; exits non-zero when a push was not searchable within the goal plus a
# margin (interval + 120 s), which is a failure to report rather than a figure.
set -euo pipefail
export ZK_ROOT=${ZK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$ZK_ROOT/tests/integration/lib.sh"
source "$ZK_ROOT/tests/integration/node/common.sh"

pushes=${FRESHNESS_BENCH_PUSHES:-20}
interval=${FRESHNESS_BENCH_INTERVAL:-30s}
case $interval in
  *s) interval_s=${interval%s} ;;
  *m) interval_s=$((${interval%m} * 60)) ;;
  *) echo "freshness.sh: FRESHNESS_BENCH_INTERVAL takes seconds or minutes (30s, 5m)" >&2; exit 2 ;;
esac

node_preflight
git_server_start
NS=$(new_namespace fresh-bench) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall

git_commit alpha main src/a.go 'package a' '// alpha-bench-start'
git_commit beta main src/b.go 'package b' '// beta-bench-start'
operator_install >/dev/null
refresh_secrets || bail "the corpus's Secrets"
corpus() { # corpus EXTRA_SPEC_LINES
  node_corpus org "  - {url: $GIT_URL/alpha.git, name: local/alpha}
  - {url: $GIT_URL/beta.git, name: local/beta}" search-tokens "  gitCredentialsSecretRef: {name: git-credentials}
  gitCABundleRef: {name: git-ca}
$1"
}
# The refresh pod runs the spec it was rendered from once its rollout is done and it is ready.
refresh_rolled_out() {
  $KC -n "$NS" rollout status deployment/org-refresh --timeout=5s >/dev/null 2>&1 &&
    [ "$($KC -n "$NS" get deployment org-refresh -o jsonpath='{.status.readyReplicas}')" = 1 ]
}

corpus "  poll: {interval: \"0\"}
  webhook: {secretRef: {name: hooks}}" || bail "the corpus is accepted"
reindex "$NS" org >/dev/null || { node_diagnostics "$NS"; bail "the first reindex Job runs to its end"; }
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
HOOK=$(service_url "$NS" org-search 8080 /hooks/push) || bail "the corpus's Service has an address"
eventually 180 search_finds "$MCP" "$TOKEN" alpha-bench-start local/alpha || bail "the first commit is searchable"
eventually 180 refresh_rolled_out || bail "the refresh pod runs"


# measure MODE LIMIT: pushes a unique token to alpha and beta in turn, delivering a webhook when MODE
# is webhook, and appends each push's seconds to searchable to $NODE_TMP/MODE.
measure() {
  local mode=$1 limit=$2 i repo token t0 t1 code
  : >"$NODE_TMP/$mode"
  for i in $(seq 1 "$pushes"); do
    repo=alpha; [ $((i % 2)) = 0 ] && repo=beta
    token="$repo-$mode-$i-$(openssl rand -hex 4)"
    git_commit "$repo" main "src/$mode-$i.go" "package $repo" "// $token"
    t0=$(date +%s.%N)
    if [ "$mode" = webhook ]; then
      code=$(push_hook "$HOOK" "$repo")
      [ "$code" = 202 ] || bail "the webhook delivery for push $i is accepted (HTTP $code)"
    fi
    eventually "$limit" search_finds "$MCP" "$TOKEN" "$token" "local/$repo" ||
      bail "push $i ($mode) is searchable within $limit s"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.1f\n", $2 - $1}' >>"$NODE_TMP/$mode"
  done
}

# row LABEL MODE GOAL_SECONDS: a Markdown row of p50 / p95 / max (nearest rank) and whether p95 meets
# the goal.
row() {
  sort -n "$NODE_TMP/$2" | awk -v label="$1" -v goal="$3" '
    { v[NR] = $1 }
    END {
      p50 = v[int((NR * 50 + 99) / 100)]; p95 = v[int((NR * 95 + 99) / 100)]
      printf "| %s, %d pushes | %.1f / %.1f / %.1f s | %d s: %s |\n", label, NR, p50, p95, v[NR], goal,
        (p95 <= goal ? "met" : "not met")
    }'
  echo "# $2: $(tr '\n' ' ' <"$NODE_TMP/$2")"
}

measure webhook 180
corpus "  poll: {interval: $interval}" || bail "the corpus with polling is accepted"
eventually 180 refresh_rolled_out || bail "the refresh pod restarts with polling"
measure poll $((interval_s + 120))

echo "| how | push to searchable p50 / p95 / max | goal (p95) |"
echo "|---|---|---|"
row "webhook through the Service (polling off)" webhook 60
row "polling every $interval (no webhook)" poll $((interval_s + 60))
