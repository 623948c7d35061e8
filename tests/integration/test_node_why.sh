#!/usr/bin/env bash
# Why a corpus's search pods do not run, said by its Ready condition, on the local node with the real
# scheduler and kubelet: the default arm64 architecture on a cluster without arm64 nodes, a volume
# claim of a storage class nobody created (then created, without a provisioner: the claim is then on
# its way, VolumeNotBound, which a new corpus passes through and is no Warning), and a gateway
# image that cannot be pulled. Each gets its own reason, a message that names the cause and the spec
# field to change, and a Warning Event, where before all three read "0 of 1 search pods are
# available". The operator is the sanitized build, under the identity the shipped RBAC grants (which
# must now let it look up a storage class).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"
source "$(dirname "$0")/operator/common.sh"

# The webserver's image is set to the gateway's below, so Zoekt is not needed.
node_preflight connector gateway
GATEWAY=$("$ZK_ROOT/scripts/images.sh" ref gateway)
NS=$(new_namespace why) || bail "a namespace for the corpora"
CLASS=zk-test-class-$RANDOM$RANDOM
on_exit "drop_namespace $NS"
on_exit "kubectl delete storageclass $CLASS --ignore-not-found"
install_crd || bail "the CRD is served"
KCFG=$(operator_identity "$NS") || bail "the operator's identity"
op_start why "$KCFG" "$NS" || bail "the operator starts"

corpus() { # corpus NAME SPEC_LINES...: a corpus of one repository nobody will index
  local name=$1; shift
  { printf 'apiVersion: codesearch.dev/v1alpha1\nkind: CodeSearchCorpus\nmetadata: {name: %s, namespace: %s}\n' "$name" "$NS"
    printf 'spec:\n  repositories:\n    - {url: https://git.invalid/alpha.git, name: local/alpha}\n'
    printf '  %s\n' "$@"; } | kubectl apply -f - >/dev/null
}
small='resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 256Mi}}'
message() { kubectl -n "$NS" get csc "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}'; }

# ---- no node of the architecture --------------------------------------------------------------------
corpus arch "webserver: {image: $GATEWAY, $small}"
check "the default arm64 on an amd64 node: Ready=False, reason Unschedulable" \
  eventually 90 cond_is "$NS" arch Ready False/Unschedulable || op_log why
check "the message names the architecture and the field that sets it ($(message arch | head -c 160))" \
  status_says "$NS" arch "kubernetes.io/arch=arm64 from spec.webserver.architecture"
check "with the scheduler's words" status_says "$NS" arch "didn't match Pod's node affinity/selector"
check "and a Warning Event says so" eventually 30 warned "$NS" arch "kubernetes.io/arch=arm64" ||
  kubectl -n "$NS" get events --field-selector involvedObject.name=arch -o custom-columns=TYPE:.type,REASON:.reason,MSG:.message | sed 's/^/# /'


# ---- a storage class that does not exist ------------------------------------------------------------
corpus volume "webserver: {architecture: amd64, image: $GATEWAY, $small}" "storage: {storageClassName: $CLASS}"
check "a claim of a missing storage class: Ready=False, reason StorageClassNotFound" \
  eventually 90 cond_is "$NS" volume Ready False/StorageClassNotFound || op_log why
check "the message names the claim, the class and the field ($(message volume | head -c 160))" \
  status_says "$NS" volume "the volume claim volume-index is Pending: storage class \"$CLASS\" does not exist"
# Once the class exists (here with a provisioner nobody runs, so the claim still waits), the operator
# notices without any event on the corpus's objects: it looks again for a missing class every 30 s.
kubectl apply -f - >/dev/null <<YAML || bail "the storage class is created"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $CLASS}
provisioner: zoekt-operator.dev/test-nobody
reclaimPolicy: Delete
volumeBindingMode: Immediate
YAML
check "a Warning Event names the missing class" eventually 30 warned "$NS" volume "\"$CLASS\" does not exist"
check "once the class exists: reason VolumeNotBound, the class has not provided a volume" \
  eventually 90 status_says "$NS" volume "storage class \"$CLASS\" has not provided a volume"
check "a claim on its way is not a Warning" cond_is "$NS" volume Ready False/VolumeNotBound

# ---- an image that cannot be pulled -----------------------------------------------------------------
# localhost names no registry here (nothing listens on its port 443), so the pull fails at once and
# nothing leaves the machine.
MISSING=localhost/zoekt-operator-test/missing-gateway:none
corpus image "webserver: {architecture: amd64, image: $GATEWAY, $small}" "gateway: {image: $MISSING}"
check "a gateway image that cannot be pulled: Ready=False, reason ImagePullFailed" \
  eventually 120 cond_is "$NS" image Ready False/ImagePullFailed || op_log why
check "the message names the container, the image and the field ($(message image | head -c 200))" \
  status_says "$NS" image "container nginx cannot get its image \"$MISSING\" (spec.gateway.image)"
first=$(message image)
sleep 25 # the kubelet's back-off alternates ErrImagePull and ImagePullBackOff meanwhile
check "the message stays the same across the kubelet's pull retries" test "$(message image)" = "$first"
check "a Warning Event names the image" eventually 30 warned "$NS" image "$MISSING"

check "the operator stops cleanly, with no sanitizer report" op_stop why
finish
