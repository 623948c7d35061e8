#!/usr/bin/env bash
# The operator installed with kustomize as a platform engineer customises it, on the local node: the
# namespace overlay of examples/kustomize/namespace (its namespace changed to one of this run's), plus
# an `images:` entry for the gateway. The operator must hold its Lease and reconcile corpora from the
# namespace it was moved to (a binding still naming zoekt-operator would leave it refused everything),
# and a corpus that names no image must get the overridden gateway image in its pods.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

# The webserver's image is not needed: only the gateway container (nginx) is looked at, so this
# suite runs where Zoekt is not built.
node_preflight operator connector gateway
OVERRIDE=localhost/zoekt-gateway-kustomize:override
OPNS=$(new_namespace operator) || bail "a namespace for the operator"
NS=$(new_namespace kustomize) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit "$KC delete namespace $OPNS --wait=false; $KC delete clusterrole,clusterrolebinding zoekt-operator --ignore-not-found"
on_exit "node_ctr images rm '$OVERRIDE'"
# What a killed run may have left, and the cluster-wide RBAC the overlay reuses. The overlay's
# Namespace object is the one new_namespace made: applying it only adds labels.
operator_uninstall

# The gateway image under a name only this overlay uses, so that a pod running it can only have got
# it from the override.
node_ctr images tag --force "$("$ZK_ROOT/scripts/images.sh" ref gateway)" "$OVERRIDE" >/dev/null ||
  bail "the gateway image tagged $OVERRIDE in the node's containerd"

overlay=$NODE_TMP/overlay
mkdir -p "$overlay"
sed -e "s#namespace: code-search#namespace: $OPNS#" \
  -e "s#\.\./\.\./\.\./manifests#$(realpath --relative-to="$overlay" "$ZK_ROOT/manifests")#" \
  "$ZK_ROOT/examples/kustomize/namespace/kustomization.yaml" >"$overlay/kustomization.yaml"
cat >>"$overlay/kustomization.yaml" <<YAML
images:
  - name: ghcr.io/zoekt-operator/zoekt-gateway
    newName: ${OVERRIDE%:*}
    newTag: ${OVERRIDE##*:}
YAML
kubectl kustomize "$overlay" >"$NODE_TMP/overlay.yaml" 2>&1 || bail "the overlay builds: $(tail -3 "$NODE_TMP/overlay.yaml")"
subjects=$(awk '/^subjects:/{s=1} s && /namespace:/{print $2; s=0}' "$NODE_TMP/overlay.yaml" | sort -u)
check "both bindings name the ServiceAccount in $OPNS (got: $subjects)" test "$subjects" = "$OPNS"
check "nothing is left in namespace zoekt-operator" bash -c "! grep -q 'zoekt-operator$' <(grep -E '^  namespace:' '$NODE_TMP/overlay.yaml')"

kubectl apply -f "$NODE_TMP/overlay.yaml" >"$NODE_TMP/apply.log" 2>&1 ||
  bail "kubectl apply of the overlay: $(tail -3 "$NODE_TMP/apply.log")"
check "the operator runs in $OPNS and one replica holds the Lease there" eventually 180 operator_ready "$OPNS" ||
  $KC -n "$OPNS" get pods,events 2>&1 | sed 's/^/# /' | tail -20

cat <<YAML | $KC apply -f - >/dev/null || bail "the corpus is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: tools, namespace: $NS}
spec:
  repositories:
    - {url: https://git.invalid/alpha.git, name: local/alpha}
  webserver: {architecture: amd64, resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
YAML
observed() { [ "$(csc "$NS" tools .status.observedGeneration)" = 1 ]; }
check "the moved operator reconciles the corpus (status.observedGeneration 1)" eventually 90 observed ||
  $KC -n "$OPNS" logs deploy/zoekt-operator --tail=20 2>&1 | sed 's/^/# operator: /'
gateway_image() {
  $KC -n "$NS" get pods -l app.kubernetes.io/instance=tools,app.kubernetes.io/component=search \
    -o jsonpath='{.items[0].spec.containers[?(@.name=="nginx")].image}' 2>/dev/null
}
image_overridden() { [ "$(gateway_image)" = "$OVERRIDE" ]; }
check "the corpus's pod gets the overridden gateway image" eventually 60 image_overridden ||
  echo "# gateway image: $(gateway_image)"
gateway_running() {
  [ -n "$($KC -n "$NS" get pods -l app.kubernetes.io/instance=tools,app.kubernetes.io/component=search \
    -o jsonpath='{.items[0].status.containerStatuses[?(@.name=="nginx")].state.running.startedAt}' 2>/dev/null)" ]
}
check "and runs it" eventually 120 gateway_running || node_diagnostics "$NS"

finish
