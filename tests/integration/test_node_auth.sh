#!/usr/bin/env bash
# Who may talk to the local node's servers, as on a real cluster: the API server and the kubelet
# listen on the node's address only (the API server on loopback too when there is no node), the
# kubelet refuses anonymous requests (401) and authorizes every other one with the API server
# (SubjectAccessReview), so an identity of the cluster CA or a ServiceAccount token without rights on
# nodes gets 403, while the API server's own identity (bound to system:kubelet-api-admin) is let in,
# and `kubectl logs`, `exec` and `port-forward`, which go through it, work. A pod reaches the API
# server through the `kubernetes` Service. See docs/security.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

node_preflight connector
PKI=${ZK_CLUSTER_DIR:-$ZK_ROOT/.cluster}/pki
IP=$("$ZK_ROOT/scripts/node-ip.sh")

# ---- what listens where -------------------------------------------------------------------------------
listeners() { ss -Hltn "sport = :$1" | awk '{ print $4 }' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
check "the API server listens on the node's address only ($(listeners 6443))" test "$(listeners 6443)" = "$IP:6443"
check "the kubelet listens on the node's address only ($(listeners 10250))" test "$(listeners 10250)" = "$IP:10250"
check "the kubelet's health port is on loopback only ($(listeners 10248))" test "$(listeners 10248)" = "127.0.0.1:10248"
check "the kubelet's read-only port is closed" test -z "$(listeners 10255)"

# ---- the kubelet's API ---------------------------------------------------------------------------------
NS=$(new_namespace node-auth) || bail "a namespace"
on_exit "$KC delete namespace $NS --wait=false"
# status PEM-OPTIONS...: the HTTP status of GET /pods on the kubelet, its certificate checked against
# the cluster CA (so the kubelet is shown to serve one the cluster signed, for its address).
status() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$PKI/ca.crt" "$@" "https://$IP:10250/pods"; }
check "an anonymous request to the kubelet is refused (401)" test "$(status)" = 401
"$ZK_ROOT/scripts/cluster.sh" user kubelet-stranger >/dev/null || bail "a client certificate identity"
check "a cluster identity without rights on nodes is refused (403)" \
  test "$(status --cert "$PKI/user-kubelet-stranger.crt" --key "$PKI/user-kubelet-stranger.key")" = 403
token=$($KC -n "$NS" create token default 2>/dev/null)
check "a ServiceAccount token is authenticated by the API server, and refused for want of rights (403)" \
  test "$(status -H "Authorization: Bearer $token")" = 403
check "a wrong token is refused (401)" test "$(status -H "Authorization: Bearer not-a-token")" = 401
check "the API server's own identity is let in (200)" \
  test "$(status --cert "$PKI/kubelet-client.crt" --key "$PKI/kubelet-client.key")" = 200

# ---- kubectl logs, exec and port-forward go through the kubelet ---------------------------------------
$KC -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: connector
    image: $("$ZK_ROOT/scripts/images.sh" ref connector)
    imagePullPolicy: Never
    command: [sh, -c, 'echo node-auth-marker-5e1f; exec zoekt-connector --listen 0.0.0.0:8081 --zoekt-url http://127.0.0.1:6070']
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
YAML
$KC -n "$NS" wait --for=condition=Ready pod/talker --timeout=120s >/dev/null || { node_diagnostics "$NS"; bail "the pod runs"; }
# The pod is Ready as soon as its container starts, and containerd copies its output into the log file
# asynchronously: the line may reach the log a moment later (seen once in a full run under load).
check "kubectl logs shows what the pod wrote" eventually 10 bash -c "$KC -n $NS logs talker | grep -q node-auth-marker-5e1f"
check "kubectl exec runs a command in the pod" test "$($KC -n "$NS" exec talker -- echo exec-ok 2>/dev/null)" = exec-ok
check "the pod reaches the API server through the kubernetes Service" \
  $KC -n "$NS" exec talker -- timeout 10 bash -c 'exec 3<>/dev/tcp/198.18.0.1/443'
port=$("$ZK_ROOT/scripts/free-port.sh")
$KC -n "$NS" port-forward pod/talker "$port:8081" >"$NODE_TMP/port-forward.log" 2>&1 &
pf=$!
on_exit "kill $pf"
check "kubectl port-forward reaches the pod's port" \
  eventually 30 bash -c "curl -fsS --max-time 2 http://127.0.0.1:$port/healthz 2>/dev/null | grep -q ok"
finish
