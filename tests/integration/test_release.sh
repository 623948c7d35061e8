#!/usr/bin/env bash
# A release installed as a user installs it, on the local node without any registry: `make release`'s
# OCI archives imported into the node's containerd, then `helm install` of the packaged chart (the .tgz,
# not charts/) with its default values. The operator runs from its released image, pinned by digest;
# a corpus that names no image gets the released zoekt, connector and gateway images, by digest, from
# the operator's flags; it is indexed and reaches Ready, and an agent finds a line through it.
#
# The release is made with a registry of its own (REGISTRY=localhost/zoekt-release-test), so what it
# imports cannot be mistaken for the per-architecture images the other suites load. The kubelet finds
# REPO:VERSION@sha256:INDEX locally because the import keeps the index as the image's target and adds
# the digest reference REPO@sha256:INDEX, the name the kubelet's lookup resolves (a reference with
# both a tag and a digest is looked up by its digest).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"

"$ZK_ROOT/scripts/cluster.sh" status >/dev/null 2>&1 ||
  skip_suite "the local node is not running (scripts/cluster.sh up without ZK_NODE=0)"
need_zoekt amd64 arm64 # a release holds both architectures

REG=localhost/zoekt-release-test
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ZK_ROOT/Makefile")
DIST=$ZK_ROOT/build/release-test/$VERSION

REGISTRY=$REG DIST=build/release-test "$ZK_ROOT/scripts/release.sh" >"$NODE_TMP/release.log" 2>&1 ||
  bail "scripts/release.sh with REGISTRY=$REG: $(tail -3 "$NODE_TMP/release.log")"
ok "the release is made ($(grep -c . "$DIST/images.txt") images)"
check "SHA256SUMS holds" bash -c "cd '$DIST' && sha256sum --quiet -c SHA256SUMS"

declare -A ref
for r in $(cat "$DIST/images.txt"); do
  repo=${r%:*@*}
  ref[${repo##*/}]=$r
  on_exit "node_ctr images rm '${r%@*}' '$repo@${r#*@}'"
  node_ctr images import --local --digests --base-name "$repo" "$DIST/images/${repo##*/}.oci.tar" \
    >"$NODE_TMP/import.log" 2>&1 || bail "ctr images import ${repo##*/}: $(tail -2 "$NODE_TMP/import.log")"
done
# index_named NAME: containerd holds REPO@sha256:INDEX, and its target is the index itself.
index_named() {
  local r=${ref[$1]}
  [ "$(node_ctr images ls | awk -v n="${r%:*@*}@${r#*@}" '$1 == n { print $2, $3 }')" = \
    "application/vnd.oci.image.index.v1+json ${r#*@}" ]
}
for n in zoekt-operator zoekt-connector zoekt-gateway zoekt; do
  check "containerd has $n by its index digest" index_named "$n"
done

git_server_start
NS=$(new_namespace release) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit "helm uninstall zoekt-operator -n zoekt-operator >/dev/null 2>&1; operator_uninstall"
git_commit alpha main cmd/main.go 'package main' '' 'func main() {' '	println("release-marker-3c1d")' '}'

operator_uninstall # what a killed run may have left
helm install zoekt-operator "$DIST/zoekt-operator-$VERSION.tgz" -n zoekt-operator --create-namespace \
  >"$NODE_TMP/helm.log" 2>&1 || bail "helm install of the packaged chart: $(tail -3 "$NODE_TMP/helm.log")"
check "the released operator runs and one replica holds the Lease" eventually 180 operator_ready ||
  $KC -n zoekt-operator get pods,events 2>&1 | sed 's/^/# /' | tail -20
image=$($KC -n zoekt-operator get pods -l app.kubernetes.io/name=zoekt-operator -o jsonpath='{.items[0].spec.containers[0].image}')
check "its pods run the released image by digest ($image)" test "$image" = "${ref[zoekt-operator]}"

$KC -n "$NS" create secret generic git-ca --from-file=bundle.pem="$GIT_CA" >/dev/null
cat <<YAML | $KC apply -f - >/dev/null || bail "a corpus without images is accepted"
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: tools, namespace: $NS}
spec:
  repositories:
  - {url: $GIT_URL/alpha.git, name: local/alpha}
  gitCABundleRef: {kind: Secret, name: git-ca, key: bundle.pem}
  indexer: {resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
  webserver: {architecture: amd64, resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1Gi}}}
YAML

job=$(reindex "$NS" tools) || { node_diagnostics "$NS"; bail "a reindex Job runs to its end"; }
check "the indexer Job succeeded ($job)" test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
check "Ready=True" eventually 180 condition_is "$NS" tools Ready True || node_diagnostics "$NS"
images_of() { # images_of KIND: the images of the corpus's KIND's containers, one per line, sorted
  $KC -n "$NS" get "$1" -l app.kubernetes.io/instance=tools -o json |
    jq -r '.. | objects | .containers? // empty | .[].image' | sort -u
}
check "the CronJob runs the released zoekt image by digest" \
  test "$(images_of cronjob)" = "${ref[zoekt]}"
check "the search Deployment runs the released zoekt, connector and gateway by digest" \
  test "$(images_of deployment)" = "$(printf '%s\n' "${ref[zoekt]}" "${ref[zoekt-connector]}" "${ref[zoekt-gateway]}" | sort -u)"
MCP=$(service_url "$NS" tools-search 8080 /mcp) || bail "the corpus's Service has an address"
check "an agent finds the line" search_finds "$MCP" "" release-marker-3c1d cmd/main.go

finish
