#!/usr/bin/env bash
# Makes a release in dist/VERSION/ (`make release`), everything ready to push, nothing pushed:
#
#   images/NAME.oci.tar        for each of zoekt-operator, zoekt-connector, zoekt-gateway and zoekt:
#                              an OCI archive whose image is an index (manifest list) over the amd64
#                              and arm64 images scripts/images.sh builds; its name in the archive is
#                              REGISTRY/NAME:VERSION
#   zoekt-operator-VERSION.tgz the Helm chart (helm package), version and appVersion VERSION, every
#                              image reference (the operator's, and the corpus images it passes the
#                              operator) REGISTRY/NAME:VERSION@sha256:INDEX
#   zoekt-operator-VERSION.yaml manifests/ rendered (kubectl kustomize) with the same references
#   sbom/NAME-ARCH.spdx.json   an SPDX 2.3 document per image and architecture (scripts/oci.py sbom)
#   images.txt                 the four references, pinned by digest
#   SHA256SUMS                 sha256sum of every file above
#
#   scripts/release.sh [VERSION]   VERSION must be the Makefile's (what the programs report); default it
#
# REGISTRY (default ghcr.io/zoekt-operator) is where the images will live; DIST (default dist) the
# output folder. The same commit gives the same bytes: the images are reproducible (scripts/images.sh),
# and everything written here takes its times from SOURCE_DATE_EPOCH, by default the commit time of
# HEAD. The per-architecture images come from scripts/images.sh's cache, built first where missing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
made=$(sed -n 's/^VERSION *:= *//p' "$root/Makefile")
version=${1:-$made}
registry=${REGISTRY:-ghcr.io/zoekt-operator}
registry=${registry%/}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct)}
out=$root/${DIST:-dist}/$version
arches=(amd64 arm64)
names=(operator connector gateway zoekt)

log() { echo "release: $*" >&2; }

if [ "$version" != "$made" ]; then
  log "VERSION=$version is not the Makefile's ($made), which the programs in the images report: set it there first"
  exit 2
fi
case $version in
[0-9]*.[0-9]*.[0-9]*) ;;
*) log "VERSION=$version is not a semantic version x.y.z"; exit 2 ;;
esac

# repo NAME: the image's repository name (scripts/images.sh ref names it).
repo() { local r; r=$("$root/scripts/images.sh" ref "$1"); r=${r%:*}; echo "${r##*/}"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out/images" "$out/sbom"

# ---- images: one index per image over both architectures, and an SBOM per architecture ----------
# Each SBOM's package list is cached (oci.py: it unpacks every layer), keyed by the archive's content.
export OCI_SBOM_CACHE=$cache/sbom
declare -A ref
for n in "${names[@]}"; do
  r=$(repo "$n")
  archives=()
  for a in "${arches[@]}"; do archives+=("$("$root/scripts/images.sh" archive "$n" "$a")"); done
  digest=$(python3 "$root/scripts/oci.py" index "$out/images/$r.oci.tar" "$registry/$r:$version" \
           "$SOURCE_DATE_EPOCH" "${archives[@]}")
  ref[$n]=$registry/$r:$version@$digest
  log "${ref[$n]}"
  for i in "${!arches[@]}"; do
    python3 "$root/scripts/oci.py" sbom "${archives[$i]}" "$r" "$version" \
      "pkg:oci/$r@${digest/:/%3A}?repository_url=$registry/$r&tag=$version&arch=${arches[$i]}" \
      "$SOURCE_DATE_EPOCH" >"$out/sbom/$r-${arches[$i]}.spdx.json"
  done
done
for n in "${names[@]}"; do echo "${ref[$n]}"; done >"$out/images.txt"

# pinned FILE: fails, naming them, when FILE refers to one of the project's images by tag alone.
pinned() {
  if grep -nE "(ghcr\.io/zoekt-operator|$registry)/zoekt[a-z-]*:$version([^@]|$)" "$1" >&2; then
    log "$1: the references above are not pinned to a digest"; return 1
  fi
}

# ---- the Helm chart ------------------------------------------------------------------------------
helm=$("$root/scripts/upstream.sh" bin helm)/helm
kubectl=$("$root/scripts/upstream.sh" bin kube)/kubectl
chart=$work/chart/zoekt-operator
mkdir -p "$work/chart"
cp -r "$root/charts/zoekt-operator" "$chart"
# values.yaml names each image as repository/tag/digest: the released repository, tag and digest.
awk -v reg="$registry" -v ver="$version" -v refs="$(for n in "${names[@]}"; do echo "$(repo "$n")=${ref[$n]##*@}"; done)" '
  BEGIN { n = split(refs, kv, "\n"); for (i = 1; i <= n; i++) { split(kv[i], p, "="); dig[p[1]] = p[2] } }
  match($0, /repository: ghcr\.io\/zoekt-operator\/[a-z-]+$/) {
    cur = substr($0, RSTART + length("repository: ghcr.io/zoekt-operator/"))
    sub(/ghcr\.io\/zoekt-operator\/[a-z-]+$/, reg "/" cur)
  }
  cur != "" && /^ *tag: ""$/    { sub(/""/, "\"" ver "\"") }
  cur != "" && /^ *digest: ""$/ { sub(/""/, "\"" dig[cur] "\""); cur = "" }
  { print }' "$root/charts/zoekt-operator/values.yaml" >"$chart/values.yaml"
"$helm" package "$chart" --version "$version" --app-version "$version" -d "$work" >/dev/null
# helm stamps the archive's members with the time of packaging: the same files again, with
# SOURCE_DATE_EPOCH as their time, sorted, root-owned, gzip without a name or time.
tgz=zoekt-operator-$version.tgz
mkdir "$work/unpacked"
tar -xzmf "$work/$tgz" -C "$work/unpacked" # -m: the times are replaced anyway
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=gnu \
  --mode=u+rwX,go+rX,go-w -C "$work/unpacked" -cf - zoekt-operator | gzip -9n >"$out/$tgz"
"$helm" template zoekt-operator "$out/$tgz" >"$work/chart.yaml"
pinned "$work/chart.yaml"

# ---- manifests/, rendered ----------------------------------------------------------------------
# Every reference to one of the project's images at the Makefile's tag (the operator's container and
# the operator's flags) becomes the released one.
manifest=$out/zoekt-operator-$version.yaml
"$kubectl" kustomize "$root/manifests" >"$manifest"
for n in "${names[@]}"; do
  sed -i -E "s#ghcr\.io/zoekt-operator/$(repo "$n"):$made([^@0-9A-Za-z.-]|$)#${ref[$n]}\1#g" "$manifest"
done
pinned "$manifest"

(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
log "done: $out ($(du -sh "$out" | cut -f1))"
