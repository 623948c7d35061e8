#!/usr/bin/env bash
# `make release` (scripts/release.sh), no cluster needed: what it writes, and that two runs of the same
# commit write the same bytes. Each image is an index over amd64 and arm64; the chart's version,
# appVersion and every image reference it renders (the operator's, and the corpus images passed as the
# operator's flags) are the release's, pinned by digest to those indexes; so are the rendered manifests;
# every image has an SPDX 2.3 SBOM per architecture; SHA256SUMS holds.
#
# What "the same" covers here: both runs assemble the release from the same per-architecture archives
# of scripts/images.sh's cache, so this compares every file the release step writes (the indexes, the
# archives, the chart, the manifests, the SBOMs, the sums). That building an image again gives the same
# archive is scripts/images.sh's own property (`scripts/images.sh verify NAME ARCH` rebuilds one
# without any cached layer and compares digests; docs/deploy.md).
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d); on_exit "rm -rf '$TMP'"
export PATH=${ZK_CACHE:-/var/cache/zoekt-operator}/bin:$PATH

need_zoekt amd64 arm64 # a release holds both architectures
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ZK_ROOT/Makefile")
REG=registry.example.com/zk
A=$ZK_ROOT/build/release-repro/a/$VERSION
B=$ZK_ROOT/build/release-repro/b/$VERSION

release() { # release NAME: one run into build/release-repro/NAME; its seconds in $TMP/NAME.secs
  local t0=$SECONDS
  REGISTRY=$REG DIST=build/release-repro/$1 "$ZK_ROOT/scripts/release.sh" >"$TMP/$1.log" 2>&1 ||
    { cat "$TMP/$1.log"; return 1; }
  echo $((SECONDS - t0)) >"$TMP/$1.secs"
}
release a || { fail "scripts/release.sh runs"; finish; exit 1; }
ok "scripts/release.sh runs ($(cat "$TMP/a.secs") s)"
check "a different VERSION from the Makefile's is refused" \
  bash -c "! '$ZK_ROOT/scripts/release.sh' 9.9.9 2>'$TMP/v.err' && grep -q Makefile '$TMP/v.err'"

check "SHA256SUMS holds" bash -c "cd '$A' && sha256sum --quiet -c SHA256SUMS"

# index_ok NAME: the archive's image is an index over linux/amd64 and linux/arm64, named REG/NAME:VERSION,
# and images.txt pins REG/NAME:VERSION to that index's digest.
index_ok() {
  local t=$TMP/idx-$1 top d
  mkdir -p "$t" && tar -xf "$A/images/$1.oci.tar" -C "$t" index.json oci-layout || return 1
  top=$(jq -r '.manifests[0] | select(.mediaType == "application/vnd.oci.image.index.v1+json") |
               .annotations["io.containerd.image.name"] + " " + .digest' "$t/index.json")
  [ "$top" = "$REG/$1:$VERSION ${top##* }" ] || return 1
  d=${top##* }
  grep -qx "$REG/$1:$VERSION@$d" "$A/images.txt" || return 1
  tar -xf "$A/images/$1.oci.tar" -C "$t" "blobs/sha256/${d#sha256:}" &&
    [ "sha256:$(sha256sum <"$t/blobs/sha256/${d#sha256:}" | cut -d' ' -f1)" = "$d" ] &&
    [ "$(jq -r '[.manifests[].platform | .os + "/" + .architecture] | join(" ")' "$t/blobs/sha256/${d#sha256:}")" = \
      "linux/amd64 linux/arm64" ]
}
for n in zoekt-operator zoekt-connector zoekt-gateway zoekt; do
  check "$n is an index over linux/amd64 and linux/arm64, pinned in images.txt" index_ok "$n"
done

# refs FILE: every reference to one of the project's images in FILE, sorted, without repeats.
refs() { grep -oE "[a-z0-9./-]+/zoekt[a-z-]*:[0-9][^\" ]*" "$1" | sort -u; }
CHART=$A/zoekt-operator-$VERSION.tgz
check "the chart is version $VERSION, appVersion $VERSION" bash -c \
  "tar -xzOf '$CHART' zoekt-operator/Chart.yaml | grep -qx 'version: $VERSION' &&
   tar -xzOf '$CHART' zoekt-operator/Chart.yaml | grep -qx 'appVersion: $VERSION'"
helm template zoekt-operator "$CHART" >"$TMP/chart.yaml" 2>"$TMP/chart.err" || cat "$TMP/chart.err"
check "the chart renders the four released references and no other" \
  test "$(refs "$TMP/chart.yaml")" = "$(sort "$A/images.txt")"
check "the chart passes helm lint" bash -c "helm lint '$CHART' >'$TMP/lint.out' 2>&1 || { cat '$TMP/lint.out'; exit 1; }"
check "the rendered manifests hold the same four references and no other" \
  test "$(refs "$A/zoekt-operator-$VERSION.yaml")" = "$(sort "$A/images.txt")"
check "the rendered manifests include the CRD" grep -q '^kind: CustomResourceDefinition' "$A/zoekt-operator-$VERSION.yaml"

# sbom_ok FILE MIN ID: SPDX 2.3 JSON describing one image, with at least MIN packages, one of whose
# SPDXID starts with ID.
sbom_ok() {
  jq -e --argjson min "$2" --arg needle "$3" '.spdxVersion == "SPDX-2.3" and
    ([.relationships[] | select(.relationshipType == "DESCRIBES")] | length) == 1 and
    (.packages | length) >= $min and any(.packages[]; .SPDXID | startswith($needle))' "$1" >/dev/null
}
for a in amd64 arm64; do
  check "the operator's $a SBOM lists its Debian packages and the operator" \
    sbom_ok "$A/sbom/zoekt-operator-$a.spdx.json" 20 SPDXRef-zoekt-operator-zoekt-operator
  check "the Zoekt image's $a SBOM lists git" sbom_ok "$A/sbom/zoekt-$a.spdx.json" 50 "SPDXRef-deb-git-$a"
  check "and the Go toolchain of Zoekt's programs" sbom_ok "$A/sbom/zoekt-$a.spdx.json" 50 SPDXRef-go-stdlib
done
check "eight SBOMs" test "$(ls "$A"/sbom/*.spdx.json | wc -l)" = 8

release b || { fail "scripts/release.sh runs a second time"; finish; exit 1; }
ok "a second run ($(cat "$TMP/b.secs") s)"
check "the two runs write the same files, byte for byte (SHA256SUMS equal)" cmp "$A/SHA256SUMS" "$B/SHA256SUMS"
check "and the same image digests" cmp "$A/images.txt" "$B/images.txt"
sed 's/^/# /' "$A/images.txt"
rm -rf "$ZK_ROOT/build/release-repro"
finish
