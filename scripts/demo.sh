#!/usr/bin/env bash
# `make demo`: the operator on the local control plane, end to end, in about a minute.
#
# Installs the CRD and an example CodeSearchCorpus in namespace zoekt-demo, runs bin/zoekt-operator
# against it (out of cluster, with the admin kubeconfig), shows `kubectl get csc` and the children it
# created, repairs a deleted child, then stops the operator with SIGTERM. No kubelet runs here, so the
# pods stay Pending; a stand-in for the search pods' /index-status (nginx serving a JSON file) lets the
# status show repository counts and freshness as it would in a real cluster. The namespace is left for
# exploring; `kubectl delete namespace zoekt-demo` removes it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=${ZK_CACHE:-/var/cache/zoekt-operator}/bin:$PATH
export KUBECONFIG=${KUBECONFIG:-$root/.cluster/kubeconfig}
ns=zoekt-demo
op=$root/bin/zoekt-operator
work=$(mktemp -d /tmp/zoekt-demo.XXXXXX)
chmod 755 "$work"
op_pid= idx_pid=
cleanup() {
  [ -n "$op_pid" ] && kill "$op_pid" 2>/dev/null || true
  [ -n "$idx_pid" ] && kill "$idx_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
wait_for() { # wait_for SECONDS CMD...
  local end=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.5; done
}

[ -x "$op" ] || { echo "demo: $op is missing; run make" >&2; exit 1; }

step "Install the CodeSearchCorpus CRD"
kubectl apply -f "$root/crds/codesearch.dev_codesearchcorpora.yaml"
kubectl wait --for condition=established --timeout=60s crd/codesearchcorpora.codesearch.dev
# Established comes before the API server publishes the new schema; explain needs the schema.
wait_for 60 kubectl explain codesearchcorpora.spec.freshness ||
  { echo "demo: the API server did not publish the CodeSearchCorpus schema within 60 s" >&2; exit 1; }
kubectl explain codesearchcorpora.spec.freshness | sed -n '1,12p'

step "Create namespace $ns and an example corpus"
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f -
cat <<'YAML' | tee "$work/corpus.yaml"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata:
  name: example-org
  namespace: zoekt-demo
spec:
  repositories:
    - url: https://github.com/sourcegraph/zoekt.git
    - url: https://github.com/curl/curl.git
      branches: [master]
    - url: https://github.com/redis/redis.git
  schedule: "0 3 * * *"
  freshness:
    maxAge: 36h
  storage:
    size: 20Gi
    onDelete: Retain
YAML
kubectl apply -f "$work/corpus.yaml"

step "Preview what the operator will create (zoekt-operator render, no cluster needed)"
"$op" render -f "$work/corpus.yaml" |
  awk '/^kind:/ {k = $2} /^metadata:/ {m = 1; next} m && /^  name:/ {printf "  %-24s %s\n", k, $2; m = 0}'

# The stand-in for the search pods' /index-status: three repositories indexed an hour ago.
idx_port=$("$root/scripts/free-port.sh")
now=$(date +%s)
printf '{"repositories":3,"shards":4,"newestIndexTime":"%s","oldestIndexTime":"%s","zoektVersion":"demo"}\n' \
  "$(date -u -d "@$((now - 3000))" +%Y-%m-%dT%H:%M:%SZ)" "$(date -u -d "@$((now - 3600))" +%Y-%m-%dT%H:%M:%SZ)" \
  >"$work/index-status.json"
cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx.log;
events { worker_connections 16; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$idx_port; location = /index-status { default_type application/json; alias $work/index-status.json; } }
}
CONF
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work" &
idx_pid=$!

step "Run the operator (out of cluster; JSON logs in $work/operator.log)"
metrics_port=$("$root/scripts/free-port.sh")
"$op" --kubeconfig "$KUBECONFIG" --namespace "$ns" --leader-elect=false --metrics-addr "127.0.0.1:$metrics_port" \
  --index-status-url-template "http://127.0.0.1:$idx_port" >"$work/operator.log" 2>&1 &
op_pid=$!
echo "zoekt-operator running as pid $op_pid; metrics on http://127.0.0.1:$metrics_port/metrics"
wait_for 60 kubectl -n "$ns" get deployment example-org-search
wait_for 30 sh -c "kubectl -n $ns get csc example-org -o jsonpath='{.status.repositoryCount}' | grep -q 3"

step "kubectl get csc"
kubectl -n "$ns" get csc
step "The children (owned by the corpus; pods stay Pending: no kubelet runs here)"
kubectl -n "$ns" get pvc,configmap,cronjob,deployment,poddisruptionbudget,service,serviceaccount,role,rolebinding -l app.kubernetes.io/instance=example-org
step "The status"
kubectl -n "$ns" get csc example-org -o jsonpath='{.status}' | sed 's/,"/,\n  "/g'; echo

step "Drift: delete the ConfigMap; the operator puts it back"
kubectl -n "$ns" delete configmap example-org-indexer
wait_for 20 kubectl -n "$ns" get configmap example-org-indexer && kubectl -n "$ns" get configmap example-org-indexer

step "Events"
kubectl -n "$ns" get events --field-selector involvedObject.kind=CodeSearchCorpus \
  -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message | cut -c1-150

step "A few operator metrics"
curl -fsS "http://127.0.0.1:$metrics_port/metrics" | grep -E '^zoekt_operator_(reconcile_total|api_requests_total\{verb="apply"|workqueue_depth|leader)' || true

step "Stop the operator (SIGTERM drains and exits 0)"
kill -TERM "$op_pid"
rc=0; wait "$op_pid" || rc=$?
op_pid=
echo "zoekt-operator exited with status $rc"
tail -n 3 "$work/operator.log"
echo
echo "The corpus and its children stay in namespace $ns; remove them with: kubectl delete namespace $ns"
echo "(this local plane runs no pvc-protection controller: first drop the claim's finalizer with"
echo " kubectl -n $ns patch pvc example-org-index --type=merge -p '{\"metadata\":{\"finalizers\":null}}')"
exit "$rc"
