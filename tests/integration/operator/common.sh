# Shared by tests/integration/test_operator*.sh: runs the sanitized operator against the local control
# plane under the identity the shipped RBAC grants (so every scenario also proves the ClusterRole and
# Role in manifests/ are sufficient), and checks on exit that it stopped cleanly with no sanitizer
# report. Source after tests/integration/lib.sh.

OP_CRD=$ZK_ROOT/crds/codesearch.dev_codesearchcorpora.yaml
OP_TMP=$(mktemp -d /tmp/zk-operator-test.XXXXXX)
on_exit "rm -rf '$OP_TMP'"
declare -A OP_PID OP_PORT

# wait_api: the shared API server may be restarting for someone else's test.
wait_api() { eventually 60 kubectl get --raw /readyz >/dev/null 2>&1; }

# install_crd: applies the CRD (idempotent) and waits until it is served.
install_crd() {
  kubectl apply -f "$OP_CRD" >/dev/null &&
    kubectl wait --for condition=established --timeout=60s crd/codesearchcorpora.codesearch.dev >/dev/null
}

# operator_identity NS: a client-certificate user bound to exactly manifests/clusterrole.yaml and, in NS,
# to manifests/role.yaml (the Lease lives in NS in these tests). Prints the kubeconfig path.
operator_identity() {
  local ns=$1 kc
  kc=$("$ZK_ROOT/scripts/cluster.sh" user zoekt-operator 2>/dev/null | tail -n 1) || return 1
  kubectl apply -f "$ZK_ROOT/manifests/clusterrole.yaml" >/dev/null || return 1
  kubectl create clusterrolebinding zoekt-operator-test-user --clusterrole=zoekt-operator --user=zoekt-operator \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null || return 1
  kubectl -n "$ns" apply -f "$ZK_ROOT/manifests/role.yaml" >/dev/null || return 1
  kubectl -n "$ns" create rolebinding zoekt-operator-leader-election --role=zoekt-operator-leader-election \
    --user=zoekt-operator >/dev/null || return 1
  echo "$kc"
}

# free_port: a loopback TCP port for a test server (see scripts/free-port.sh).
free_port() { "$ZK_ROOT/scripts/free-port.sh"; }

# index_server_start PORT FILE: serves FILE as /index-status on 127.0.0.1:PORT with nginx (a stand-in
# for the connector behind the corpus's nginx); the file is read per request, so a test can change
# what the controller sees. Sets INDEX_PID.
index_server_start() {
  local port=$1 file=$2 dir=$OP_TMP/nginx-$1
  mkdir -p "$dir"
  # nginx workers drop to an unprivileged user when started as root: let it read the file.
  chmod 755 "$OP_TMP" "$dir"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $dir; proxy_temp_path $dir; fastcgi_temp_path $dir; uwsgi_temp_path $dir; scgi_temp_path $dir;
  server {
    listen 127.0.0.1:$port;
    location = /index-status { default_type application/json; alias $file; }
  }
}
CONF
  /usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" 2>>"$dir/error.log" &
  INDEX_PID=$!
  on_exit "kill $INDEX_PID"
  eventually 10 curl -fsS "http://127.0.0.1:$port/index-status" -o /dev/null
}

# index_server_stop: stops the server started last.
index_server_stop() { kill "$INDEX_PID" 2>/dev/null; wait "$INDEX_PID" 2>/dev/null; }

# op_start ID KUBECONFIG NS [FLAGS...]: starts an operator in the background.
op_start() {
  local id=$1 kc=$2 ns=$3; shift 3
  local port; port=$(free_port)
  OP_PORT[$id]=$port
  "$ZK_BIN/zoekt-operator" --kubeconfig "$kc" --namespace "$ns" --lease-namespace "$ns" \
    --lease-name "zoekt-operator-$ns" --metrics-addr "127.0.0.1:$port" --log-level debug "$@" \
    >"$OP_TMP/$id.log" 2>&1 &
  OP_PID[$id]=$!
  on_exit "kill -9 ${OP_PID[$id]}"
  eventually 30 curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1
}

# op_stop ID: SIGTERM, wait for a clean exit (status 0) and no sanitizer report in its log.
op_stop() {
  local id=$1 pid=${OP_PID[$1]} rc
  kill -TERM "$pid" 2>/dev/null || return 1
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then echo "# operator $id did not stop within 30 s"; kill -9 "$pid"; return 1; fi
  wait "$pid"; rc=$?
  if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$OP_TMP/$id.log"; then
    echo "# sanitizer report from operator $id:"; grep -A20 -E 'Sanitizer|runtime error:' "$OP_TMP/$id.log" | head -40 | sed 's/^/#   /'
    return 1
  fi
  [ "$rc" -eq 0 ] || { echo "# operator $id exited with $rc"; tail -5 "$OP_TMP/$id.log" | sed 's/^/#   /'; }
  [ "$rc" -eq 0 ]
}

# op_log ID: prints the operator's log (for diagnostics on failure).
op_log() { sed 's/^/#   /' "$OP_TMP/$1.log" | tail -n "${2:-30}"; }

# op_metric ID NAME_WITH_LABELS: prints the value of one sample (0 when absent).
op_metric() {
  curl -fsS "http://127.0.0.1:${OP_PORT[$1]}/metrics" 2>/dev/null |
    awk -v m="$2" 'index($0, m " ") == 1 { print $2; found=1 } END { if (!found) print 0 }'
}

# op_api_count ID VERB: API requests of that verb the operator made, over all status codes.
op_api_count() {
  curl -fsS "http://127.0.0.1:${OP_PORT[$1]}/metrics" 2>/dev/null |
    awk -v v="verb=\"$2\"" 'index($0, "zoekt_operator_api_requests_total{" v) == 1 { s += $2 } END { print s + 0 }'
}

# cond NS CORPUS TYPE: prints "status/reason" of one condition.
cond() {
  kubectl -n "$1" get csc "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].status}/{.status.conditions[?(@.type==\"$3\")].reason}" 2>/dev/null
}
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }

# exists NS KIND NAME
exists() { kubectl -n "$1" get "$2" "$3" >/dev/null 2>&1; }

# status_says NS CORPUS TEXT: one of the corpus's condition messages contains TEXT.
status_says() {
  kubectl -n "$1" get csc "$2" -o jsonpath='{.status.conditions[*].message}' 2>/dev/null | grep -qF -- "$3"
}

# warned NS NAME TEXT: a Warning Event about the object NAME says TEXT.
warned() {
  kubectl -n "$1" get events --field-selector "involvedObject.name=$2,type=Warning" \
    -o jsonpath='{.items[*].message}' 2>/dev/null | grep -qF -- "$3"
}

# drop_namespace NS...: deletes test namespaces. The local control plane runs no pvc-protection
# controller, so the kubernetes.io/pvc-protection finalizer on claims is removed first; otherwise the
# namespaces would stay Terminating forever.
drop_namespace() {
  local ns pvc
  for ns in "$@"; do
    for pvc in $(kubectl -n "$ns" get pvc -o name 2>/dev/null); do
      kubectl -n "$ns" patch "$pvc" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    done
    kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1
  done
}
