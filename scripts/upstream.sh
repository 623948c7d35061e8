#!/usr/bin/env bash
# Builds the upstream programs the cluster and the images need from their Go modules, at the versions
# pinned in scripts/versions.sh, with the ordinary go command (it fetches modules from the proxy the
# machine's Go is set up with):
#
#   scripts/upstream.sh build [PART...]   build what is missing (default: every part); quiet when cached
#   scripts/upstream.sh bin PART          print the folder holding PART's executables, building it first
#   scripts/upstream.sh zoekt ARCH        print the folder holding zoekt-webserver and zoekt-git-index
#                                         for linux/ARCH (amd64 or arm64), unpacking or building them
#                                         first; exits 3 with the reason and what to provide when they
#                                         cannot be had
#
# PART is one of: kube (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy,
# kubectl at KUBE_VERSION), etcd, containerd (containerd, its runc shim and ctr), runc, cni (bridge,
# loopback, host-local, portmap), helm, actionlint (the GitHub Actions workflow checker), prometheus
# (prometheus and promtool), kube-router (its NetworkPolicy controller enforces policies on the test node),
# prometheus-operator (the operator, and the CRDs of the objects the chart ships for it), gitea (the code
# host scripts/gitea.sh runs, with the options/ and templates/ folders it reads at run time).
#
# Everything lands in $ZK_CACHE/upstream/PART-VERSION-RECIPE/, written beside and renamed into place, so
# a warm machine builds nothing and a running cluster keeps its executables. The module and build
# caches live there too ($ZK_CACHE/go), so a second version of a part reuses most of the first one's
# compilation. Where the machine's Go is older than a module needs, the go command fetches the newer
# toolchain from the module proxy itself (GOTOOLCHAIN=auto).
#
# Zoekt comes from one of two places, in this order:
#   1. prebuilt archives zoekt-COMMIT-linux-ARCH.tar.xz (zoekt-webserver and zoekt-git-index at the top),
#      in the folder ZK_ZOEKT_DIR names, else in $zoekt_default_dir when that exists: for air-gapped
#      machines and module proxies that refuse github.com/sourcegraph/zoekt (this project's machines'
#      proxy answers 403 for every version). COMMIT must be the pinned commit (its 12 digits or all 40)
#      and the binaries must carry it (go build -ldflags "-X github.com/sourcegraph/zoekt/index.Version=
#      COMMIT", as the module build below and images/Dockerfile.zoekt stamp it); an archive of another
#      commit is refused with both commits named.
#   2. its Go module at the pinned commit, built once into the cache.
# Without either, `zoekt` exits 3 and says what to provide; the suites that need Zoekt then report
# themselves skipped with that reason (docs/testing.md).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
# Where an air-gapped machine keeps the Zoekt archives when ZK_ZOEKT_DIR is not set.
zoekt_default_dir=/opt/zoekt-operator/zoekt
. "$root/scripts/versions.sh"
# Bump a part's recipe when its build below changes what it builds, so that the old output is rebuilt.
declare -A recipe=([kube]=r1 [etcd]=r1 [containerd]=r1 [runc]=r1 [cni]=r1 [helm]=r2 [zoekt]=r1 [actionlint]=r1
  [prometheus]=r1 [kube-router]=r1 [prometheus-operator]=r2 [gitea]=r1)

export GOMODCACHE=$cache/go/mod GOCACHE=$cache/go/build GOTOOLCHAIN=auto GOFLAGS=-mod=mod
export PATH=$cache/go/bin:$PATH:/usr/local/go/bin
unset GOPATH GOBIN

log() { echo "upstream: $*" >&2; }

need_go() {
  command -v go >/dev/null 2>&1 && return 0
  log "no go command: install Go 1.24 or later (scripts/deps.sh does)"
  exit 1
}

# wrapper DIR MODULE VERSION GOMOD REPLACE_VERSION: a module in DIR that requires MODULE@VERSION and
# replaces every module that MODULE's own go.mod (the file GOMOD) points at a folder of its repository
# with that module's published REPLACE_VERSION. The go command ignores a dependency's replace
# directives, which is why `go install MODULE/cmd/X@VERSION` is refused for such modules.
wrapper() {
  local dir=$1 mod=$2 ver=$3 gomod=$4 rver=$5 goline godebug
  mkdir -p "$dir"
  goline=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod" | head -n1)
  godebug=$(grep -E '^godebug ' "$gomod" || true)
  {
    echo "module zoekt-operator.invalid/build"
    echo "go $goline"
    [ -n "$godebug" ] && echo "$godebug"
    echo "require $mod $ver"
    # Deliberately broken paths (etcd's ./FORBIDDEN_DEPENDENCY) only guard against bad imports.
    awk -v rv="$rver" '{ sub(/^replace[ \t]+/, "") }
      $2 == "=>" && $3 ~ /^\.\.?\// && $3 !~ /FORBIDDEN/ { print "replace " $1 " => " $1 " " rv }' "$gomod" | sort -u
  } >"$dir/go.mod"
}

# finish OUT: puts the freshly built OUT.new in OUT's place.
finish() {
  local out=$1
  rm -rf "$out"
  mv "$out.new" "$out"
}

build_kube() {
  local v=$1 out=$2 w minor date ld pkgs
  minor=${v#*.}; minor=${minor%%.*}
  w=$(mktemp -d)
  go mod download -json "k8s.io/kubernetes@v$v" >"$w/info.json"
  local gomod
  gomod=$(sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p' "$w/info.json")
  # The staging modules (./staging/src/k8s.io/M) are published as v0.MINOR.PATCH.
  wrapper "$w/mod" k8s.io/kubernetes "v$v" "$gomod" "v0.${v#*.}"
  # The module proxy records a version's time but not its commit, so gitCommit says so; buildDate is
  # the release's time, which keeps the build reproducible.
  date=$(go list -m -json "k8s.io/kubernetes@v$v" | sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' | head -n1)
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitCommit=unknown"
    ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=$date"
  done
  mkdir -p "$out.new"
  pkgs=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubectl)
  (
    cd "$w/mod"
    for b in "${pkgs[@]}"; do
      CGO_ENABLED=0 go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$out.new/$b" "k8s.io/kubernetes/cmd/$b"
    done
    # The kubelet is upstream's one cgo binary.
    CGO_ENABLED=1 go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$out.new/kubelet" k8s.io/kubernetes/cmd/kubelet
  ) || { rm -rf "$w"; return 1; }
  rm -rf "$w"
}

build_etcd() {
  local v=$1 out=$2 w gomod
  w=$(mktemp -d)
  gomod=$(go mod download -json "go.etcd.io/etcd/server/v3@v$v" | sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p')
  # server/go.mod points its sibling modules (api, client/pkg, client/v3, pkg) at ../ folders.
  wrapper "$w/mod" go.etcd.io/etcd/server/v3 "v$v" "$gomod" "v$v"
  mkdir -p "$out.new"
  (cd "$w/mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.new/etcd" go.etcd.io/etcd/server/v3) ||
    { rm -rf "$w"; return 1; }
  rm -rf "$w"
}

# goinstall OUT CGO TAGS LDFLAGS PKG@VERSION...: `go install` into OUT.new.
goinstall() {
  local out=$1 cgo=$2 tags=$3 ld=$4; shift 4
  mkdir -p "$out.new"
  GOBIN=$out.new CGO_ENABLED=$cgo go install -trimpath ${tags:+-tags "$tags"} -ldflags "$ld" "$@"
}

build_containerd() {
  local v=$1 out=$2 m=github.com/containerd/containerd/v2
  goinstall "$out" 0 no_btrfs "-s -w -X $m/version.Version=v$v" \
    "$m/cmd/containerd@v$v" "$m/cmd/containerd-shim-runc-v2@v$v" "$m/cmd/ctr@v$v"
}

build_runc() {
  local v=$1 out=$2
  goinstall "$out" 1 seccomp "-s -w -X main.version=$v" \
    "github.com/opencontainers/runc@v$v"
}

build_cni() {
  local v=$1 out=$2 m=github.com/containernetworking/plugins
  goinstall "$out" 0 "" "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=v$v" \
    "$m/plugins/main/bridge@v$v" "$m/plugins/main/loopback@v$v" "$m/plugins/ipam/host-local@v$v" \
    "$m/plugins/meta/portmap@v$v"
}

build_helm() {
  local v=$1 out=$2 m=helm.sh/helm/v3 gomod minor ld p
  # Upstream stamps the Kubernetes version of the client-go it builds with as the default that
  # `helm template` and `helm lint` assume; unstamped it is 1.20, which a chart's kubeVersion refuses.
  gomod=$(go mod download -json "$m@v$v" | sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p')
  minor=$(awk '$1 == "k8s.io/client-go" { split($2, a, "."); print a[2] }' "$gomod")
  ld="-s -w -X $m/internal/version.version=v$v"
  for p in pkg/lint/rules pkg/chartutil; do ld="$ld -X $m/$p.k8sVersionMajor=1 -X $m/$p.k8sVersionMinor=$minor"; done
  goinstall "$out" 0 "" "$ld" "$m/cmd/helm@v$v"
}

build_actionlint() {
  local v=$1 out=$2 m=github.com/rhysd/actionlint
  goinstall "$out" 0 "" "-s -w -X $m.version=v$v" "$m/cmd/actionlint@v$v"
}

# Without the builtinassets tag the web UI is not compiled in (it would need npm); the HTTP API, the
# scraper and the rule engine, which the tests use, are all there.
build_prometheus() {
  local v=$1 out=$2 m=github.com/prometheus/prometheus
  goinstall "$out" 0 "" "-s -w -X github.com/prometheus/common/version.Version=$v" \
    "$m/cmd/prometheus@v$v" "$m/cmd/promtool@v$v"
}

build_kube-router() {
  local v=$1 out=$2 m=github.com/cloudnativelabs/kube-router/v2
  goinstall "$out" 0 "" "-s -w -X $m/pkg/version.Version=v$v" "$m/cmd/kube-router@v$v"
}

# Its go.mod points its API and client modules at folders of its repository, so it is built through a
# wrapper module; the CRDs come from the same module's example/ folder.
build_prometheus-operator() {
  local v=$1 out=$2 w gomod dir m=github.com/prometheus-operator/prometheus-operator k
  w=$(mktemp -d)
  go mod download -json "$m@v$v" >"$w/info.json"
  gomod=$(sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p' "$w/info.json")
  dir=$(sed -n 's/.*"Dir": *"\([^"]*\)".*/\1/p' "$w/info.json")
  wrapper "$w/mod" "$m" "v$v" "$gomod" "v$v"
  mkdir -p "$out.new/crds"
  (cd "$w/mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/prometheus/common/version.Version=$v" \
    -o "$out.new/prometheus-operator" "$m/cmd/operator") || { rm -rf "$w"; return 1; }
  # The operator lists Probes and ScrapeConfigs too, and waits for their CRDs.
  for k in servicemonitors podmonitors prometheusrules prometheuses probes scrapeconfigs; do
    cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml" "$out.new/crds/"
  done
  rm -rf "$w"
}

# Gitea's go.mod replaces a few of its dependencies with other versions, which the go command honours
# only in the main module, so `go install` refuses it; and it names itself gitea.dev, so a wrapper
# module that requires code.gitea.io/gitea is refused too. It is built as the main module instead, in
# a writable copy of its tree (the module cache is read-only), with CGO off as upstream builds it: its
# SQLite driver is the pure-Go one unless the sqlite_mattn tag asks for the cgo one. Without the
# bindata tag (which needs its web assets built with npm), Gitea reads options/ (locales, licences,
# .gitignore and README templates) and templates/ from STATIC_ROOT_PATH at run time, so both are
# copied beside the binary. The API and webhooks need only options/; templates/ lets its web pages
# render (unstyled) for a look by hand, where each would otherwise be an error 500.
build_gitea() {
  local v=$1 out=$2 w dir m=code.gitea.io/gitea
  w=$(mktemp -d)
  # go mod download -json reports a failure (a proxy that refuses the module) in its JSON, not on stderr.
  go mod download -json "$m@v$v" >"$w/info.json" ||
    { sed -n 's/^[[:space:]]*"Error": *"\(.*\)",*$/\1/p' "$w/info.json" >&2; rm -rf "$w"; return 1; }
  dir=$(sed -n 's/.*"Dir": *"\([^"]*\)".*/\1/p' "$w/info.json")
  cp -R "$dir" "$w/src" && chmod -R u+w "$w/src" || { rm -rf "$w"; return 1; }
  mkdir -p "$out.new"
  (cd "$w/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.Version=$v" -o "$out.new/gitea" .) ||
    { rm -rf "$w"; return 1; }
  cp -R "$w/src/options" "$w/src/templates" "$out.new/"
  rm -rf "$w"
}

build_zoekt() { # build_zoekt COMMIT OUT ARCH
  local c=$1 out=$2 arch=$3 m=github.com/sourcegraph/zoekt
  mkdir -p "$out.new"
  # Cross-compiled binaries land in GOBIN/linux_ARCH for a foreign architecture: build with -o instead.
  local w
  w=$(mktemp -d)
  (cd "$w" && go mod init zoekt-operator.invalid/zoekt >/dev/null 2>&1 && go get "$m@$c" >/dev/null &&
   for b in zoekt-webserver zoekt-git-index; do
     CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
       -ldflags "-s -w -X $m/index.Version=$c" -o "$out.new/$b" "$m/cmd/$b" || exit 1
   done) || { rm -rf "$w"; return 1; }
  rm -rf "$w"
}

version_of() {
  case $1 in
  kube) kube_version ;;
  etcd) echo "$etcd_version" ;;
  containerd) echo "$containerd_version" ;;
  runc) echo "$runc_version" ;;
  cni) echo "$cni_plugins_version" ;;
  helm) echo "$helm_version" ;;
  actionlint) echo "$actionlint_version" ;;
  prometheus) echo "$prometheus_version" ;;
  kube-router) echo "$kube_router_version" ;;
  prometheus-operator) echo "$prometheus_operator_version" ;;
  gitea) echo "$gitea_version" ;;
  *) log "unknown part $1"; exit 2 ;;
  esac
}

# ensure PART [ARCH]: builds PART unless its folder exists; prints the folder.
ensure() {
  local part=$1 v out
  if [ "$part" = zoekt ]; then
    v=$zoekt_commit
    out=$cache/upstream/zoekt-$v-${recipe[zoekt]}/linux-$2
  else
    v=$(version_of "$part")
    out=$cache/upstream/$part-$v-${recipe[$part]}
  fi
  if [ ! -d "$out" ]; then
    need_go
    mkdir -p "$(dirname "$out")"
    rm -rf "$out.new"
    log "building $part $v${2:+ for $2} from its Go module (cold: minutes; cached in $out)"
    local t0=$SECONDS
    if [ "$part" = zoekt ]; then build_zoekt "$v" "$out" "$2"; else "build_$part" "$v" "$out"; fi ||
      { rm -rf "$out.new"; log "building $part $v failed"; exit 1; }
    finish "$out"
    log "built $part $v in $((SECONDS - t0)) s"
  fi
  echo "$out"
}

# zoekt_from_archive ARCH: prints the folder holding the binaries unpacked from the archive for the
# pinned commit and ARCH, or prints "refused" after saying why when the folder holds only archives of
# another commit, or binaries that do not carry the pin; returns 1 either way, and when there is no
# archive at all. Unpacked once per archive content, into the cache.
zoekt_from_archive() {
  local arch=$1 src=${ZK_ZOEKT_DIR:-$zoekt_default_dir} archive="" other="" f c sum dir
  [ -d "$src" ] || { [ -z "${ZK_ZOEKT_DIR:-}" ] || log "ZK_ZOEKT_DIR=$src is not a folder"; return 1; }
  for f in "$src"/zoekt-*-linux-"$arch".tar.xz; do
    [ -f "$f" ] || continue
    c=${f##*/zoekt-}
    c=${c%-linux-"$arch".tar.xz}
    case $c in
    "$zoekt_commit" | "$zoekt_commit"????????????????????????????) archive=$f ;;
    *) other=$c ;;
    esac
  done
  if [ -z "$archive" ]; then
    [ -n "$other" ] || return 1
    log "$src holds Zoekt $other for $arch, but scripts/versions.sh pins $zoekt_commit: put" \
      "zoekt-$zoekt_commit-linux-$arch.tar.xz there (built from github.com/sourcegraph/zoekt at $zoekt_commit)"
    echo refused
    return 1
  fi
  sum=$(sha256sum "$archive" | cut -c1-16)
  dir=$cache/upstream/zoekt-archive/zoekt-$zoekt_commit-linux-$arch-$sum
  if [ -x "$dir/zoekt-webserver" ] && [ -x "$dir/zoekt-git-index" ]; then
    echo "$dir"
    return 0
  fi
  # What an earlier archive of this commit and architecture unpacked is stale now.
  rm -rf "$cache/upstream/zoekt-archive/zoekt-$zoekt_commit-linux-$arch-"*
  mkdir -p "$dir.new"
  if ! tar -C "$dir.new" -xJf "$archive" zoekt-webserver zoekt-git-index 2>"$dir.err"; then
    log "$archive does not hold zoekt-webserver and zoekt-git-index at its top: $(tail -n 1 "$dir.err")"
    rm -rf "$dir.new" "$dir.err"
    echo refused
    return 1
  fi
  rm -f "$dir.err"
  # The binaries must be the pinned commit's, whatever the archive is called.
  for f in zoekt-webserver zoekt-git-index; do
    grep -aqF "$zoekt_commit" "$dir.new/$f" && continue
    log "$archive: its $f does not carry the pinned commit $zoekt_commit (build it from that commit with" \
      "-ldflags \"-X github.com/sourcegraph/zoekt/index.Version=$zoekt_commit\")"
    rm -rf "$dir.new"
    echo refused
    return 1
  done
  chmod 755 "$dir.new" "$dir.new"/zoekt-webserver "$dir.new"/zoekt-git-index
  mv "$dir.new" "$dir"
  log "Zoekt $zoekt_commit for $arch unpacked from $archive"
  echo "$dir"
}

case ${1:-} in
build)
  shift
  [ $# -gt 0 ] || set -- etcd containerd runc cni helm kube
  for p in "$@"; do ensure "$p" >/dev/null; done ;;
bin) ensure "${2:?part}" ;;
zoekt)
  arch=${2:?architecture}
  case $arch in amd64 | arm64) ;; *) log "Zoekt is built for amd64 and arm64, not $arch"; exit 2 ;; esac
  if dir=$(zoekt_from_archive "$arch"); then echo "$dir"; exit 0; fi
  [ "$dir" = refused ] && exit 3
  log_file=$cache/upstream/zoekt-build-$arch.log
  mkdir -p "$cache/upstream"
  if ( ensure zoekt "$arch" ) 2>"$log_file"; then exit 0; fi
  log "Zoekt $zoekt_commit for $arch: no archive in ${ZK_ZOEKT_DIR:-$zoekt_default_dir}, and its Go module could not be built:"
  grep -v '^go: downloading' "$log_file" | tail -3 >&2
  log "to go on, either put zoekt-$zoekt_commit-linux-$arch.tar.xz (zoekt-webserver and zoekt-git-index built" \
    "from github.com/sourcegraph/zoekt at $zoekt_commit) into $zoekt_default_dir or a folder named by ZK_ZOEKT_DIR," \
    "or point GOPROXY at a module proxy that serves github.com/sourcegraph/zoekt (docs/zoekt.md)"
  exit 3 ;;
*) sed -n '2,21p' "$0" >&2; exit 2 ;;
esac
