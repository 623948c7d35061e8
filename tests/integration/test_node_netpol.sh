#!/usr/bin/env bash
# A corpus's NetworkPolicies, enforced on the local node by a real implementation (kube-router's
# firewall, built from its Go module; scripts/cluster.sh netpol-up): by default a pod of the corpus's
# namespace is served by the gateway and a pod of another namespace is refused; spec.networkPolicy.from
# turns that round; an indexer pod reaches DNS and its git server's port and nothing else (not the
# search pods, not the API server on the same machine); spec.networkPolicy.enabled false makes the
# operator delete both policies, and everything is reachable again. The connector's metrics port is
# open to every namespace by default. The operator is the sanitized
# build, under the identity the shipped RBAC grants.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"
source "$(dirname "$0")/operator/common.sh"

# The webserver's image is the gateway's too, so Zoekt is not needed: the gateway answers /healthz
# itself, which is all a client here asks of it.
node_preflight connector gateway
GATEWAY=$("$ZK_ROOT/scripts/images.sh" ref gateway)
CLIENT_IMAGE=$("$ZK_ROOT/scripts/images.sh" ref connector)
NS=$(new_namespace netpol) || bail "a namespace for the corpus"
OTHER=$(new_namespace netpol-other) || bail "a second namespace"
on_exit "drop_namespace $NS $OTHER"
on_exit "$ZK_ROOT/scripts/cluster.sh netpol-down"
"$ZK_ROOT/scripts/cluster.sh" netpol-up >"$NODE_TMP/netpol.log" 2>&1 ||
  bail "kube-router enforces NetworkPolicies on the node: $(tail -3 "$NODE_TMP/netpol.log")"
git_server_start
install_crd || bail "the CRD is served"
KCFG=$(operator_identity "$NS") || bail "the operator's identity"
op_start netpol "$KCFG" "$NS" || bail "the operator starts"

# client NS NAME [LABELS]: a pod that only waits, for kubectl exec to connect from; restricted-safe.
client() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, labels: {${3:-role: client}}}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: c
    image: $CLIENT_IMAGE
    imagePullPolicy: Never
    command: [sleep, "3600"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 64Mi}}
YAML
}
# served NS POD IP PORT: from the pod, GET /healthz on IP:PORT answers 200 within 5 s.
served() {
  kubectl -n "$1" exec "$2" -- timeout 5 bash -c \
    "exec 3<>/dev/tcp/$3/$4 && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 && head -n 1 <&3" 2>/dev/null | grep -q ' 200 '
}
refused() { ! served "$@"; }
# connects NS POD IP PORT: from the pod, a TCP connection to IP:PORT opens within 3 s.
connects() { kubectl -n "$1" exec "$2" -- timeout 3 bash -c "exec 3<>/dev/tcp/$3/$4" >/dev/null 2>&1; }
no_connect() { ! connects "$@"; }
deleted_event() {
  kubectl -n "$NS" get events --field-selector involvedObject.name=np,reason=Deleted -o jsonpath='{.items[*].message}' |
    grep -q "NetworkPolicy np-search: spec.networkPolicy.enabled is false"
}
policies() { kubectl -n "$NS" get networkpolicy -o name 2>/dev/null | sort | tr '\n' ' '; }
# policies_are [NAME...]: the namespace's NetworkPolicies are exactly these.
policies_are() {
  local want="" n
  for n in "$@"; do want+="networkpolicy.networking.k8s.io/$n "; done
  [ "$(policies)" = "$want" ]
}

GIT_HOST=${GIT_URL#https://}
GIT_IP=${GIT_HOST%:*}
GIT_PORT=${GIT_HOST##*:}
API_HOST=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
API_HOST=${API_HOST#https://}
# The corpus is suspended: no indexer runs, and nothing but this test's pods makes traffic.
kubectl apply -f - >/dev/null <<YAML || bail "the corpus is created"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: np, namespace: $NS}
spec:
  suspend: true
  repositories:
    - {url: $GIT_URL/acme/alpha.git, name: acme/alpha}
  webserver: {architecture: amd64, image: $GATEWAY, resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 256Mi}}}
  gateway: {image: $GATEWAY}
YAML
check "the operator creates both NetworkPolicies" eventually 60 policies_are np-indexer np-search || op_log netpol
search_ip() {
  kubectl -n "$NS" get pods -l app.kubernetes.io/instance=np,app.kubernetes.io/component=search \
    -o jsonpath='{.items[0].status.podIP}' 2>/dev/null
}
has_ip() { [ -n "$(search_ip)" ]; }
check "the search pod has an address" eventually 120 has_ip
IP=$(search_ip)
client "$NS" inside
client "$OTHER" outside
client "$NS" indexer "app.kubernetes.io/name: zoekt, app.kubernetes.io/instance: np, app.kubernetes.io/component: indexer"
for p in "$NS/inside" "$OTHER/outside" "$NS/indexer"; do
  kubectl -n "${p%/*}" wait --for=condition=Ready "pod/${p#*/}" --timeout=120s >/dev/null ||
    bail "the client pod $p runs"
done

# ---- the default: the corpus's own namespace ------------------------------------------------------
check "a pod of the corpus's namespace is served by the gateway" eventually 90 served "$NS" inside "$IP" 8080
check "a pod of another namespace is refused" eventually 30 refused "$OTHER" outside "$IP" 8080
check "while the connector's metrics port takes it (Prometheus may run anywhere)" \
  eventually 30 connects "$OTHER" outside "$IP" 8081

# ---- the indexer's egress: DNS and the git server's port only -------------------------------------
check "an indexer pod resolves names (DNS)" \
  eventually 30 kubectl -n "$NS" exec indexer -- getent hosts "np-search.$NS.svc.cluster.local"
check "an indexer pod reaches the git server's port ($GIT_IP:$GIT_PORT)" eventually 30 connects "$NS" indexer "$GIT_IP" "$GIT_PORT"
check "an indexer pod does not reach the API server on the same machine ($API_HOST)" \
  eventually 30 no_connect "$NS" indexer "${API_HOST%:*}" "${API_HOST##*:}"
check "an indexer pod does not reach the search pods" no_connect "$NS" indexer "$IP" 8080

# ---- spec.networkPolicy.from ------------------------------------------------------------------------
kubectl -n "$NS" patch csc np --type=merge -p "{\"spec\":{\"networkPolicy\":{\"from\":[{\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"$OTHER\"}}}]}}}" >/dev/null
check "with from naming the other namespace, its pod is served" eventually 60 served "$OTHER" outside "$IP" 8080
check "and the corpus's own namespace is refused (from replaces the default)" eventually 30 refused "$NS" inside "$IP" 8080

# ---- no churn -----------------------------------------------------------------------------------------
rv=$(kubectl -n "$NS" get networkpolicy np-search np-indexer -o jsonpath='{.items[*].metadata.resourceVersion}')
sleep 20
check "settled NetworkPolicies are not written again" \
  test "$(kubectl -n "$NS" get networkpolicy np-search np-indexer -o jsonpath='{.items[*].metadata.resourceVersion}')" = "$rv"

# ---- turned off ---------------------------------------------------------------------------------------
kubectl -n "$NS" patch csc np --type=merge -p '{"spec":{"networkPolicy":{"enabled":false}}}' >/dev/null
check "enabled false: the operator deletes both NetworkPolicies" eventually 60 policies_are || op_log netpol
check "an Event says why" eventually 30 deleted_event
check "every pod is served again" eventually 60 served "$NS" inside "$IP" 8080
check "from the other namespace too" eventually 30 served "$OTHER" outside "$IP" 8080
check "the indexer pod reaches the API server again" eventually 30 connects "$NS" indexer "${API_HOST%:*}" "${API_HOST##*:}"
kubectl -n "$NS" patch csc np --type=merge -p '{"spec":{"networkPolicy":{"enabled":true}}}' >/dev/null
check "turned on again, both come back" eventually 60 policies_are np-indexer np-search

check "the operator stops cleanly, with no sanitizer report" op_stop netpol
finish
