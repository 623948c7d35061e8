#!/usr/bin/env bash
# Builds the organisation-scale benchmark corpus: real Go code from Debian's archive, one git repository
# per module, indexed with the real zoekt-git-index (tests/support/zoekt.sh).
#
#   tests/bench/corpus.sh DIR          prints DIR/index once it holds the index (built only when missing)
#   tests/bench/corpus.sh DIR ctags    prints DIR/index-ctags: the same repositories indexed with
#                                      universal-ctags (symbols), plus a few non-Go Debian sources
#
# The sources of the golang-*-dev packages below and of every golang-*-dev package they depend on are
# downloaded with apt-get and unpacked into DIR (nothing is installed on the machine). Every module
# under usr/share/gocode/src (the shallowest folder holding go.mod or Go files, at least host/org/repo
# deep for hosts such as github.com) becomes a git repository named mirrors/<host>/<path>, as the
# operator's mirrors are named. About 200 repositories and 17,000 Go files.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: corpus.sh DIR}
index=$dir/index

if [ "${2:-}" = ctags ]; then
  exec "$root/tests/bench/corpus-ctags.sh" "$dir"
fi
# An index is reused only when the pinned Zoekt built it: .complete holds that commit.
zoekt_commit=$(. "$root/scripts/versions.sh"; echo "$zoekt_commit")
if [ "$(cat "$index/.complete" 2>/dev/null)" = "$zoekt_commit" ]; then
  echo "$index"
  exit 0
fi

packages=(
  golang-github-prometheus-client-golang-dev golang-github-spf13-cobra-dev golang-github-spf13-viper-dev
  golang-google-grpc-dev golang-github-gorilla-mux-dev golang-github-sirupsen-logrus-dev
  golang-github-stretchr-testify-dev golang-github-hashicorp-go-multierror-dev golang-github-urfave-cli-dev
  golang-github-go-git-go-git-dev golang-github-google-go-github-dev golang-github-gin-gonic-gin-dev
  golang-github-minio-minio-go-v7-dev golang-github-aws-aws-sdk-go-dev golang-github-gogo-protobuf-dev
  golang-github-miekg-dns-dev golang-github-lib-pq-dev golang-github-mattn-go-sqlite3-dev
  golang-github-jackc-pgx-v4-dev golang-github-labstack-echo-dev golang-github-nats-io-nats.go-dev
  golang-github-cilium-ebpf-dev golang-github-hashicorp-terraform-json-dev
  golang-github-hashicorp-go-retryablehttp-dev golang-github-hashicorp-hcl-v2-dev golang-github-golang-jwt-jwt-dev
  golang-github-google-uuid-dev golang-github-klauspost-compress-dev golang-github-json-iterator-go-dev
  golang-github-pelletier-go-toml-dev golang-gopkg-yaml.v3-dev golang-github-rs-zerolog-dev golang-go.uber-zap-dev
  golang-github-go-sql-driver-mysql-dev golang-github-olekukonko-tablewriter-dev
)

bin=$("$root/tests/support/zoekt.sh" bin)
rm -rf "$dir/debs" "$dir/src" "$dir/names" "$index"
mkdir -p "$dir/debs" "$dir/src" "$index"

# The packages and the golang-*-dev packages they need, downloaded (not installed) and unpacked.
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] || apt-get update -qq
mapfile -t all < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${packages[@]}" | grep -E '^golang-[^ ]*-dev$' | sort -u)
(cd "$dir/debs" && apt-get download -qq "${all[@]}" 2>/dev/null)
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/src"; done
src=$dir/src/usr/share/gocode/src

# zoekt-git-index names a repository after its path below -repo_cache: names/mirrors is the source
# folder, so the module at src/<path> becomes mirrors/<path>.
mkdir -p "$dir/names"
ln -sfn "$src" "$dir/names/mirrors"

# Module roots, then one repository and one index shard per module, two at a time.
python3 - "$src" >"$dir/modules" <<'PY'
import os, sys
top = sys.argv[1]
deep = {"github.com", "golang.org", "gitlab.com", "bitbucket.org", "code.google.com"}
def walk(rel, depth):
    path = os.path.join(top, rel)
    entries = os.listdir(path)
    if depth >= (3 if rel.split("/")[0] in deep else 2) and \
            ("go.mod" in entries or any(e.endswith(".go") for e in entries)):
        print(rel)
        return
    for e in sorted(entries):
        sub = os.path.join(rel, e)
        if os.path.isdir(os.path.join(top, sub)) and not os.path.islink(os.path.join(top, sub)):
            walk(sub, depth + 1)
for host in sorted(os.listdir(top)):
    walk(host, 1)
PY
export dir index root
xargs -P 2 -I{} bash -c '
  "$root/tests/support/zoekt.sh" repo "$dir/names" "mirrors/{}" &&
  "$root/tests/support/zoekt.sh" index "$index" "$dir/names" "mirrors/{}" -disable_ctags >/dev/null 2>&1' <"$dir/modules"
echo "$zoekt_commit" >"$index/.complete"
echo "$index"
