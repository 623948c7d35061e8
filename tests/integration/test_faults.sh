#!/usr/bin/env bash
# Faults on the running data plane (issue 17; docs/reliability.md has one row per fault): the operator
# installed from manifests/ on the local node, a corpus of two repositories on the HTTPS git server
# (one large enough that zoekt-git-index runs for seconds), the real indexer and Zoekt image. In order:
#  a. a child the API server refuses (a ResourceQuota on Services) and pods refused later (a quota on
#     pods, which the Deployment reports only through ReplicaFailure) show in the corpus's Ready;
#  b. zoekt-webserver SIGKILLed (as the OOM killer ends it): the container restarts, and meanwhile
#     search_code answers with a short tool error;
#  c. the indexer pod SIGKILLed while zoekt-git-index runs, twice (the Job's one retry too): the old
#     index keeps serving, no partial shard is served, the status names the failed run, the next run
#     succeeds;
#  d. the git server down, then one repository's server answering HTTP 500, another's sending its answer
#     a byte a second (slower than spec.indexer.fetchStallSeconds allows) and a third's refusing the
#     credentials (401): failedRepositories names the repositories that failed, with their reasons in
#     the Job's log, the shards are kept and served, Ready stays True and Fresh is not flipped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight
git_server_start
NS=$(new_namespace faults) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit operator_uninstall

# ---- repositories ---------------------------------------------------------------------------------------
git_commit alpha main src/alpha.go 'package alpha' 'const marker = "alpha-marker-40c1"'
git_commit delta main src/delta.go 'package delta' 'const marker = "delta-marker-5e2a"'
git_commit big main README.md 'big-marker-old-3d1f'
# About 18 MB of Go-like text in 1500 files: zoekt-git-index takes seconds over it, long enough to be
# caught in the act (c).
python3 "$ZK_ROOT/tests/support/go-text-tree.py" "$NODE_TMP/work/big"
git -C "$NODE_TMP/work/big" add -A &&
  git -C "$NODE_TMP/work/big" -c user.name=dev -c user.email=dev@example.invalid commit -q -m bulk &&
  git -C "$NODE_TMP/work/big" push -q "$NODE_TMP/git/repos/big.git" main || bail "the large repository is pushed"

operator_install
operator_pod() { $KC -n zoekt-operator get pods -o jsonpath='{range .items[*]}{.metadata.name}:{.status.containerStatuses[0].restartCount}{" "}{end}'; }

TOKEN=$(openssl rand -hex 16)
$KC -n "$NS" create configmap git-ca --from-file=ca.crt="$GIT_CA" >/dev/null
$KC -n "$NS" create secret generic search-tokens --from-literal=agent="$TOKEN" >/dev/null
exists() { $KC -n "$NS" get "$@" >/dev/null 2>&1; }
ready_field() { csc "$NS" org ".status.conditions[?(@.type==\"Ready\")].$1"; }
# quota_counted NAME: the quota controller has counted the namespace's use; before that the quota's
# admission refuses everything as "status unknown", which is not the refusal under test.
quota_counted() { [ -n "$($KC -n "$NS" get quota "$1" -o jsonpath='{.status.used}' 2>/dev/null)" ]; }
reason_is() { [ "$(ready_field reason)" = "$1" ]; }
# ready_trace PERIOD: prints "<time> <status>/<reason>" of Ready every PERIOD seconds, one read each.
ready_trace() {
  while :; do
    echo "$(date +%s) $($KC -n "$NS" get csc org -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}' 2>/dev/null)"
    sleep "$1"
  done
}

# ---- a. a refused child shows in status --------------------------------------------------------------------
$KC -n "$NS" create quota no-services --hard=services=0 >/dev/null || bail "the Service quota is created"
eventually 30 quota_counted no-services || bail "the quota controller counts the Service quota"
node_corpus org "  - {url: $GIT_URL/big.git, name: local/big}
  - {url: $GIT_URL/alpha.git, name: local/alpha}
  - {url: $GIT_URL/delta.git, name: local/delta}" search-tokens "  gitCABundleRef: {name: git-ca}" ||
  bail "the corpus is accepted"
check "a Service refused by a ResourceQuota: Ready=False, reason ApplyFailed" eventually 60 reason_is ApplyFailed
msg=$(ready_field message)
echo "# Ready's message: $msg"
check "the message names the refused Service" grep -q 'Service org-search' <<<"$msg"
check "and gives the API server's answer (exceeded quota: no-services)" grep -q 'exceeded quota: no-services' <<<"$msg"
check "observedGeneration is the corpus's generation" \
  test "$(csc "$NS" org .status.observedGeneration)" = "$(csc "$NS" org .metadata.generation)"
check "the Ready condition carries the same observedGeneration" \
  test "$(ready_field observedGeneration)" = "$(csc "$NS" org .metadata.generation)"
check "the children that did apply exist (ConfigMap, CronJob, Deployment, claim)" bash -c \
  "$KC -n $NS get configmap/org-indexer cronjob/org-indexer deployment/org-search pvc/org-index >/dev/null"
check "and the Service does not" bash -c "! $KC -n $NS get service org-search >/dev/null 2>&1"
check "a Warning Event ApplyFailed is recorded on the corpus" eventually 20 bash -c \
  "$KC -n $NS get events --field-selector involvedObject.name=org,reason=ApplyFailed,type=Warning -o name | grep -q ."
op_before=$(operator_pod)
$KC -n "$NS" delete quota no-services >/dev/null
check "without the quota the Service is created" eventually 120 exists service org-search
check "and Ready no longer says ApplyFailed" eventually 30 bash -c "[ \"\$($KC -n $NS get csc org -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" != ApplyFailed ]"
check "without an operator restart ($op_before)" test "$(operator_pod)" = "$op_before"

job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "the first reindex Job runs to its end"; }
check "the first reindex succeeds ($job)" test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
check "Ready=True once the index is served" eventually 180 condition_is "$NS" org Ready True || node_diagnostics "$NS"
MCP=$(service_url "$NS" org-search 8080 /mcp) || bail "the corpus's Service has an address"
check "search_code finds the large repository's content" eventually 30 search_finds "$MCP" "$TOKEN" big-marker-old-3d1f local/big
check "and the small ones' (alpha)" search_finds "$MCP" "$TOKEN" alpha-marker-40c1 local/alpha
check "(delta)" search_finds "$MCP" "$TOKEN" delta-marker-5e2a local/delta

# search_pod: the running search pod that is not being deleted.
search_pod() {
  $KC -n "$NS" get pods -l app.kubernetes.io/component=search \
    -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null |
    awk '$2 == "Running" && NF == 2 { print $1; exit }'
}
# Pods refused later: the quota admits no new pod, and the search pod is deleted. The ReplicaSet's
# creations are refused; the Deployment reports that only in its ReplicaFailure condition.
$KC -n "$NS" create quota no-pods --hard=pods=0 >/dev/null || bail "the pod quota is created"
eventually 30 quota_counted no-pods || bail "the quota controller counts the pod quota"
$KC -n "$NS" delete pod "$(search_pod)" --wait=false >/dev/null
replica_failure() {
  [ "$($KC -n "$NS" get deployment org-search -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].reason}')" = FailedCreate ]
}
check "the Deployment reports ReplicaFailure, reason FailedCreate" eventually 60 replica_failure
check "the corpus says Ready=False, reason PodsRefused" eventually 60 reason_is PodsRefused
msg=$(ready_field message)
echo "# Ready's message: $msg"
check "with the ReplicaSet's answer (exceeded quota: no-pods)" grep -q 'exceeded quota: no-pods' <<<"$msg"
$KC -n "$NS" delete quota no-pods >/dev/null
check "without the quota the pod is created and Ready recovers" eventually 180 condition_is "$NS" org Ready True

# ---- b. zoekt-webserver killed ---------------------------------------------------------------------------
pod=$(search_pod)
DIRECT="http://$($KC -n "$NS" get pod "$pod" -o jsonpath='{.status.podIP}'):8080/mcp"
ws_restarts() { $KC -n "$NS" get pod "$pod" -o jsonpath='{.status.containerStatuses[?(@.name=="zoekt-webserver")].restartCount}'; }
ws_running() { [ -n "$($KC -n "$NS" get pod "$pod" -o jsonpath='{.status.containerStatuses[?(@.name=="zoekt-webserver")].state.running}')" ]; }
restarted() { [ "$(ws_restarts)" -gt "$1" ] 2>/dev/null && ws_running; }
ready_trace 0.5 >"$NODE_TMP/ready-trace" &
tracer=$!
on_exit "kill $tracer"
r0=$(ws_restarts)
check "zoekt-webserver is SIGKILLed" container_kill "$NS" "$pod" zoekt-webserver
check "the kubelet restarts it" eventually 60 restarted "$r0"
# Killed again at once, it waits out the kubelet's back-off (10 s): the window an agent sees.
check "SIGKILLed again, it is held in back-off" container_kill "$NS" "$pod" zoekt-webserver
mcp "$DIRECT" "$TOKEN" search_code '{"query":"alpha-marker-40c1"}' >"$NODE_TMP/down" 2>&1
rc=$?
sed 's/^/# search_code meanwhile: /' "$NODE_TMP/down" | head -5
check "meanwhile search_code answers with a tool error (isError), not a transport failure" test "$rc" = 3
check "that says the search backend is not reachable" grep -qi 'not reachable' "$NODE_TMP/down"
check "and to retry" grep -qi 'retry' "$NODE_TMP/down"
check "short (under 400 bytes) and no HTML page" bash -c "[ \$(wc -c <'$NODE_TMP/down') -lt 400 ] && ! grep -qi '<html' '$NODE_TMP/down'"
# The pod is not Ready while a container is down, so the Service has no endpoint for it: a client of
# the Service cannot reach any connector (with one replica), and its MCP client fails to connect.
mcp "$MCP" "$TOKEN" search_code '{"query":"alpha-marker-40c1"}' 2>&1 | head -3 | sed 's/^/# through the Service meanwhile: /'
check "the webserver comes back and search_code finds again through the Service" eventually 120 \
  search_finds "$MCP" "$TOKEN" alpha-marker-40c1 local/alpha
check "Ready is True again" eventually 60 condition_is "$NS" org Ready True
# The trace samples every half second: let it record what the check above just saw before it stops.
traced_true() { tail -n 1 "$NODE_TMP/ready-trace" | grep -q ' True/'; }
eventually 10 traced_true
kill "$tracer" 2>/dev/null
seen=$(awk '{print $2}' "$NODE_TMP/ready-trace" | uniq | tr '\n' ' ')
echo "# Ready during the outage, in order: $seen"
check "meanwhile Ready went False (DeploymentUnavailable) and back to True" \
  grep -Eq 'True/Available .*False/DeploymentUnavailable .*True/Available' <<<"$seen"

# ---- c. the indexer pod SIGKILLed mid-index ----------------------------------------------------------------
volume=$($KC get pv "$($KC -n "$NS" get pvc org-index -o jsonpath='{.spec.volumeName}')" -o jsonpath='{.spec.hostPath.path}')
shards() { (cd "$volume/index" && stat -c '%i %n' -- *.zoekt) 2>/dev/null; }
# Only whole shards at the top of the index folder, the only place zoekt-webserver loads from.
only_whole_shards() { ! find "$volume/index" -maxdepth 1 -type f ! -name '*.zoekt' ! -name '*.zoekt.meta' | grep -q .; }
git_commit big main README.md 'big-marker-new-8e27'
served_before=$(shards)
job=$(reindex_start "$NS" org) || bail "a reindex Job starts"
# no_match QUERY: search_code answers, and finds nothing.
no_match() { mcp "$MCP" "$TOKEN" search_code "{\"query\":\"$1\"}" | grep -qi 'no match'; }
# indexing_big: zoekt-git-index runs over the large repository's mirror in one of the Job's pods;
# prints that pod's name.
indexing_big() {
  local p
  pgrep -f 'zoekt-git-index .*/data/repos/local/big\.git' >/dev/null || return 1
  p=$($KC -n "$NS" get pods -l job-name="$job" -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\n"}{end}' | head -n1)
  [ -n "$p" ] && echo "$p" >"$NODE_TMP/indexing-pod"
}
for attempt in first retry; do
  if eventually 120 indexing_big; then
    p=$(cat "$NODE_TMP/indexing-pod")
    check "the $attempt indexer pod is SIGKILLed while zoekt-git-index runs ($p)" container_kill "$NS" "$p" indexer
    eventually 30 bash -c "[ \"\$($KC -n $NS get pod $p -o jsonpath='{.status.phase}')\" = Failed ]"
    check "the old index is still served" search_finds "$MCP" "$TOKEN" big-marker-old-3d1f local/big
    check "and not the content the killed run was indexing" no_match big-marker-new-8e27
    check "no partial shard in the served index folder" only_whole_shards
    check "the served shards are the very files served before (same inodes)" test "$(shards)" = "$served_before"
  else
    fail "the $attempt indexer pod was caught running zoekt-git-index"
  fi
done
ls -a "$volume/index" | sed 's/^/# index after the kills: /'
check "the Job fails after its retry" eventually 60 bash -c \
  "$KC -n $NS get job $job -o jsonpath='{.status.conditions[?(@.type==\"Failed\")].status}' | grep -q True"
check "status.indexer.lastFailedTime names the failed run" eventually 60 bash -c \
  "[ -n \"\$($KC -n $NS get csc org -o jsonpath='{.status.indexer.lastFailedTime}')\" ]"
check "Ready stays True" condition_is "$NS" org Ready True
job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "the reindex after the kills runs to its end"; }
check "the next run succeeds ($job)" test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
check "and serves the new content" eventually 90 search_finds "$MCP" "$TOKEN" big-marker-new-8e27 local/big
check "the killed runs' leftovers are gone" bash -c "! ls -a '$volume/index' | grep -q '^\.tmp\.'"
check "lastSuccessfulTime is after lastFailedTime" eventually 60 bash -c \
  "[ \"\$($KC -n $NS get csc org -o jsonpath='{.status.indexer.lastSuccessfulTime}')\" \\> \"\$($KC -n $NS get csc org -o jsonpath='{.status.indexer.lastFailedTime}')\" ]"

# ---- d. the git server down ----------------------------------------------------------------------------------
served_before=$(shards)
"$ZK_ROOT/scripts/git-server.sh" stop "$NODE_TMP/git"
ready_trace 1 >"$NODE_TMP/ready-trace" &
tracer=$!
on_exit "kill $tracer"
job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "the reindex with the git server down runs to its end"; }
kill "$tracer" 2>/dev/null
check "the run fails ($job)" bash -c \
  "$KC -n $NS get job $job -o jsonpath='{.status.conditions[?(@.type==\"Failed\")].status}' | grep -q True"
failed_all() { [ "$(csc "$NS" org '.status.indexer.failedRepositories[*]' | tr ' ' '\n' | sort | tr '\n' ' ')" = "local/alpha local/big local/delta " ]; }
check "status.indexer.failedRepositories names every repository" eventually 60 failed_all
$KC -n "$NS" logs "job/$job" >"$NODE_TMP/down.log" 2>&1
for r in local/big local/alpha local/delta; do
  check "the Job's log gives $r's reason (git cannot connect)" bash -c \
    "grep -F '\"repository\":\"$r\"' '$NODE_TMP/down.log' | grep '\"status\":\"failed\"' | grep -qi 'connect'"
done
check "the shards are kept (same files)" test "$(shards)" = "$served_before"
check "and still served" search_finds "$MCP" "$TOKEN" big-marker-new-8e27 local/big
# A line " /" is a read that failed, not a condition.
check "Ready stayed True throughout" bash -c "! grep -v -e ' True/' -e ' /\$' '$NODE_TMP/ready-trace' | grep -q ."
check "Fresh is still True (only age makes it False)" condition_is "$NS" org Fresh True
check "Indexed says the run failed for some (PartiallyIndexed)" bash -c \
  "[ \"\$($KC -n $NS get csc org -o jsonpath='{.status.conditions[?(@.type==\"Indexed\")].reason}')\" = PartiallyIndexed ]"

# The git server back, and alpha moved to a server that answers every request with HTTP 500 (over
# HTTPS with the same certificate, so only the answer differs); delta moved to the same server under
# /slow/, which sends a git answer a byte a second (under the 1 KB/s the stall limit asks for, the
# corpus's fetchStallSeconds 5); gamma, a new repository, is on it under /denied/, which refuses every
# request with 401 whatever credentials come with it.
"$ZK_ROOT/scripts/git-server.sh" start "$NODE_TMP/git" >/dev/null || bail "the git server starts again"
ip=$("$ZK_ROOT/scripts/node-ip.sh")
port500=$("$ZK_ROOT/scripts/free-port.sh")
python3 - "$ip" "$port500" "$NODE_TMP/git/server.crt" "$NODE_TMP/git/server.key" <<'PY' &
import http.server, ssl, sys, time
class Answer500(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/slow/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
            self.end_headers()
            try:
                for byte in b"001e# service=git-upload-pack\n0000" * 100:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass  # git gave up: what is under test
            return
        denied = self.path.startswith("/denied/")
        self.send_response(401 if denied else 500)
        if denied:
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_POST = do_GET
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Answer500)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(sys.argv[3], sys.argv[4])
server.socket = tls.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
on_exit "kill $!"
served_before=$(shards)
$KC -n "$NS" create secret generic git-credentials --from-literal=username=agent \
  --from-literal=password=not-the-password >/dev/null
node_corpus org "  - {url: $GIT_URL/big.git, name: local/big}
  - {url: https://$ip:$port500/alpha.git, name: local/alpha}
  - {url: https://$ip:$port500/slow/delta.git, name: local/delta}
  - {url: https://$ip:$port500/denied/gamma.git, name: local/gamma}" search-tokens "  gitCABundleRef: {name: git-ca}
  gitCredentialsSecretRef: {name: git-credentials}" "fetchStallSeconds: 5" ||
  bail "the corpus with alpha, delta and gamma on the failing server is accepted"
job=$(reindex "$NS" org) || { node_diagnostics "$NS"; bail "the reindex with alpha answering 500 runs to its end"; }
check "with alpha's server answering 500 the run still succeeds for big ($job)" \
  test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
check "status.indexer.failedRepositories names alpha, delta and gamma only" eventually 60 \
  bash -c "[ \"\$($KC -n $NS get csc org -o jsonpath='{.status.indexer.failedRepositories[*]}' | tr ' ' '\\n' | sort | tr '\\n' ' ')\" = 'local/alpha local/delta local/gamma ' ]"
$KC -n "$NS" logs "job/$job" >"$NODE_TMP/500.log" 2>&1
grep -F '"repository":"local/alpha"' "$NODE_TMP/500.log" | sed 's/^/# /'
check "the Job's log gives alpha's reason (HTTP 500)" bash -c \
  "grep -F '\"repository\":\"local/alpha\"' '$NODE_TMP/500.log' | grep '\"status\":\"failed\"' | grep -q '500'"
grep -F '"repository":"local/gamma"' "$NODE_TMP/500.log" | sed 's/^/# /'
check "the Job's log gives gamma's reason (the credentials refused)" bash -c \
  "grep -F '\"repository\":\"local/gamma\"' '$NODE_TMP/500.log' | grep '\"status\":\"failed\"' | grep -qi 'Authentication failed'"
grep -F '"repository":"local/delta"' "$NODE_TMP/500.log" | sed 's/^/# /'
check "the Job's log gives delta's reason (the transfer too slow)" bash -c \
  "grep -F '\"repository\":\"local/delta\"' '$NODE_TMP/500.log' | grep '\"status\":\"failed\"' | grep -qi 'too slow'"
delta_seconds=$(grep -F '"repository":"local/delta"' "$NODE_TMP/500.log" | sed -n 's/.*"seconds":\([0-9]*\).*/\1/p')
check "delta was given up after its 5 s stall, not the default minute (${delta_seconds:-?} s)" \
  test "${delta_seconds:-99}" -lt 30
for r in alpha delta; do
  before=$(grep "local%2F$r" <<<"$served_before")
  check "$r's shards are kept (the same files)" \
    bash -c "[ -n '$before' ] && [ \"\$(cd '$volume/index' && stat -c '%i %n' -- local%2F$r*.zoekt)\" = '$before' ]"
done
check "and still served (alpha)" search_finds "$MCP" "$TOKEN" alpha-marker-40c1 local/alpha
check "(delta)" search_finds "$MCP" "$TOKEN" delta-marker-5e2a local/delta
check "Ready is True" condition_is "$NS" org Ready True
check "Fresh is True" condition_is "$NS" org Fresh True

[ "$_t_fail" -eq 0 ] || node_diagnostics "$NS"
finish
