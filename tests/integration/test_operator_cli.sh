#!/usr/bin/env bash
# The operator's command line and deployment artefacts, no cluster needed: --help lists every flag the
# parser accepts, --version, `render` prints every child of a valid corpus and names the fields of an
# invalid one; manifests/ builds with kustomize; the Helm chart lints and renders, and its crds/ is an
# exact copy of crds/.
source "$(dirname "$0")/lib.sh"
OP=$ZK_BIN/zoekt-operator
TMP=$(mktemp -d); on_exit "rm -rf '$TMP'"

"$OP" --help >"$TMP/help" 2>&1
check "--help exits 0" [ $? -eq 0 ]
# help_misses PROGRAM HELP-FILE: the flags in the program's flag table (lib/flag) that its --help omits.
help_misses() {
  local f missing=""
  for f in $(grep -oE '\{\.name = "[a-z-]+"' "$ZK_ROOT/$1/main.c" | cut -d'"' -f2); do
    grep -q -- "--$f" "$2" || missing="$missing $f"
  done
  echo "$missing"
}
check "the operator's flag table is where help_misses looks" grep -q '{.name = "workers"' "$ZK_ROOT/controller/main.c"
missing=$(help_misses controller "$TMP/help")
check "--help lists every flag the parser accepts${missing:+ (missing:$missing)}" [ -z "$missing" ]
"$ZK_BIN/zoekt-connector" --help >"$TMP/conn-help" 2>&1
missing=$(help_misses connector "$TMP/conn-help")
check "the connector's --help lists every flag its parser accepts${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "--version prints the version" bash -c "'$OP' --version | grep -qE '^zoekt-operator [0-9]+\.[0-9]+\.[0-9]+'"
for form in "--lease-duration 5x" "--lease-duration=5x"; do
  # shellcheck disable=SC2086 # the form is split into words on purpose
  "$OP" $form >/dev/null 2>"$TMP/flag.err"
  check "$form names the flag in its error" grep -qx "zoekt-operator: invalid --lease-duration 5x: expected a positive number of seconds (see --help)" "$TMP/flag.err"
done
check "an unknown flag exits 2" bash -c "'$OP' --no-such-flag >/dev/null 2>&1; [ \$? -eq 2 ]"
# Both programs word a refusal the same way, from their flag tables.
"$ZK_BIN/zoekt-connector" --max-files 0 >/dev/null 2>"$TMP/conn.err"
check "the connector refuses a bad value with exit 2" [ $? -eq 2 ]
check "the connector's refusal names the flag, the value and what it takes" \
  grep -qx "zoekt-connector: invalid --max-files 0: expected a whole number from 1 to 200 (see --help)" "$TMP/conn.err"
"$OP" --no-such-flag >/dev/null 2>"$TMP/unknown.err"
check "an unknown flag is named" grep -qx "zoekt-operator: unknown flag --no-such-flag (see --help)" "$TMP/unknown.err"

cat >"$TMP/corpus.yaml" <<'YAML'
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata:
  name: org
  namespace: codesearch
spec:
  repositories:
    - url: https://github.com/example/alpha.git
    - url: https://github.com/example/beta.git
      branches: [main]
  schedule: "30 2 * * *"
  suspend: false
  storage:
    size: 50Gi
  webserver:
    replicas: 3
    architecture: amd64
  connector:
    maxFiles: 12
YAML
"$OP" render -f "$TMP/corpus.yaml" >"$TMP/out.yaml" 2>"$TMP/err"
check "render exits 0 for a valid corpus" [ $? -eq 0 ]
for kind in PersistentVolumeClaim ConfigMap ServiceAccount Role RoleBinding NetworkPolicy Service Deployment PodDisruptionBudget CronJob; do
  check "render prints the $kind" grep -q "^kind: $kind" "$TMP/out.yaml"
done
check "render uses batch/v1 CronJobs" grep -q "^apiVersion: batch/v1$" "$TMP/out.yaml"
check "render uses policy/v1 PodDisruptionBudgets" grep -q "^apiVersion: policy/v1$" "$TMP/out.yaml"
check "render no longer takes --kube-version (usage, exit 2)" bash -c \
  "'$OP' render -f '$TMP/corpus.yaml' --kube-version 1.20 >/dev/null 2>&1; [ \$? -eq 2 ]"
check "render carries the spec's schedule" grep -q "30 2 \* \* \*" "$TMP/out.yaml"
check "render reads YAML integers as numbers (replicas: 3)" grep -qE "^  replicas: 3$" "$TMP/out.yaml"
check "render reads strings as strings (architecture: amd64)" grep -q "kubernetes.io/arch: amd64" "$TMP/out.yaml"
check "every example in examples/ that is a corpus renders" bash -c \
  "for f in '$ZK_ROOT'/examples/corpus-*.yaml; do '$OP' render -f \"\$f\" >/dev/null || exit 1; done"
# kustomize parses the objects without a server: a malformed stream or object fails here.
mkdir -p "$TMP/k" && cp "$TMP/out.yaml" "$TMP/k/out.yaml" && printf 'resources: [out.yaml]\n' >"$TMP/k/kustomization.yaml"
# Twelve objects: the ten kinds above, the second NetworkPolicy (the indexer pods') and the refresh
# Deployment (spec.poll's default is on).
check "render output parses as Kubernetes objects" bash -c \
  "[ \"\$(kubectl kustomize '$TMP/k' 2>/dev/null | grep -c '^kind:')\" -eq 12 ]"
check "render prints the refresh Deployment" grep -qx "  name: org-refresh" "$TMP/out.yaml"

cat >"$TMP/bad.yaml" <<'YAML'
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: bad}
spec:
  repositories:
    - url: https://github.com/example/alpha.git
    - url: https://github.com/example/alpha.git
  schedule: "every night"
YAML
"$OP" render -f "$TMP/bad.yaml" >"$TMP/bad.out" 2>"$TMP/bad.err"
check "render exits 1 for an invalid spec" [ $? -eq 1 ]
check "render names the bad schedule field" grep -q "spec.schedule" "$TMP/bad.err"
check "render names the duplicate repository" grep -q "spec.repositories\[1\]" "$TMP/bad.err"
check "render prints nothing on stdout for an invalid spec" [ ! -s "$TMP/bad.out" ]
printf 'spec: [unclosed\n' >"$TMP/broken.yaml"
check "render reports malformed YAML with exit 1" bash -c "'$OP' render -f '$TMP/broken.yaml' >/dev/null 2>&1; [ \$? -eq 1 ]"

# ---- deployment artefacts ----
check "manifests/ builds with kustomize" bash -c "kubectl kustomize '$ZK_ROOT/manifests' >'$TMP/kustomized.yaml'"
check "kustomize output holds the CRD, RBAC and a 2-replica Deployment" bash -c \
  "grep -q 'kind: CustomResourceDefinition' '$TMP/kustomized.yaml' && grep -q 'kind: ClusterRole$' '$TMP/kustomized.yaml' && grep -q 'replicas: 2' '$TMP/kustomized.yaml'"
check "the ClusterRole has no wildcard" bash -c "! grep -q '\*' '$ZK_ROOT/manifests/clusterrole.yaml'"
check "the ClusterRole never escalates, binds or impersonates" bash -c \
  "! grep -E '^\s*verbs:' '$ZK_ROOT/manifests/clusterrole.yaml' | grep -qE 'escalate|bind|impersonate'"
# What it deletes (an apply cannot remove an object): the NetworkPolicies it made once a corpus turns
# them off, an old shard layout's objects, and the Job that indexed a layout; everything else it made
# goes with its corpus, by the garbage collector.
deletes() { python3 - "$1" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    for r in (d or {}).get("rules", []) if (d or {}).get("kind") == "ClusterRole" else []:
        if "delete" in r.get("verbs", []) or "deletecollection" in r.get("verbs", []):
            print(",".join(r.get("resources", [])))
PY
}
check "the ClusterRole deletes Services, Deployments and PodDisruptionBudgets (an old shard layout), NetworkPolicies, Jobs (a layout's index), and nothing else" \
  test "$(deletes "$ZK_ROOT/manifests/clusterrole.yaml" | tr '\n' ' ')" = "services deployments poddisruptionbudgets jobs networkpolicies "
check "the chart's crds/ is an exact copy of crds/" diff -r "$ZK_ROOT/crds" "$ZK_ROOT/charts/zoekt-operator/crds" -x kustomization.yaml
check "helm lint passes" bash -c "helm lint '$ZK_ROOT/charts/zoekt-operator' >/dev/null"
check "helm template renders the Deployment and RBAC" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --namespace zo >'$TMP/helm.yaml' && grep -q 'kind: Deployment' '$TMP/helm.yaml' && grep -q 'kind: ClusterRole$' '$TMP/helm.yaml'"
check "the chart's ClusterRole rules equal manifests/clusterrole.yaml's" bash -c \
  "diff <(sed -n '/^rules:/,\$p' '$ZK_ROOT/manifests/clusterrole.yaml' | grep -v '^\s*#') <(awk '/^kind: ClusterRole$/{f=1} f&&/^rules:/{p=1} p&&/^---/{exit} p' '$TMP/helm.yaml' | grep -v '^\s*#')"

# values.schema.json refuses, naming the value, what would otherwise render and then fail: a
# replica count or port that is not a number, a log level the operator exits 2 on, a duration it
# cannot parse, a digest that is not one, a key nobody reads (a typo).
refused() { # refused SET PATH: helm template --set SET fails and names PATH
  local err
  err=$(helm template zo "$ZK_ROOT/charts/zoekt-operator" --set "$1" 2>&1 >/dev/null) && return 1
  grep -qF -- "$2" <<<"$err" || { echo "# $1: $err" | head -3; return 1; }
}
check "the chart refuses replicaCount=two" refused replicaCount=two /replicaCount
check "the chart refuses metrics.port=abc" refused metrics.port=abc /metrics/port
check "the chart refuses logLevel=verbose, naming the levels" refused logLevel=verbose "'debug', 'info', 'warn', 'error'"
check "the chart refuses workers=0" refused workers=0 /workers
check "the chart refuses resyncPeriod=5x" refused resyncPeriod=5x /resyncPeriod
check "the chart refuses a digest that is not sha256" refused image.digest=latest /image/digest
check "the chart refuses an unknown key (replicas for replicaCount)" refused replicas=3 replicas
check "the chart refuses a renew deadline not shorter than the lease" \
  refused leaderElection.renewDeadline=20 "renewDeadline must be shorter"
# The levels the schema allows are the operator's own.
for level in debug info warn error; do
  check "the operator accepts --log-level $level" bash -c "'$OP' --log-level $level --version >/dev/null"
done
check "the chart accepts its defaults and durations such as 1h30m" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --set resyncPeriod=1h30m --set indexStatus.period=300 >/dev/null"
helm template zo "$ZK_ROOT/charts/zoekt-operator" --set fullnameOverride=cs >"$TMP/helm-names.yaml" 2>&1
check "fullnameOverride names every object" bash -c \
  "[ \"\$(grep -A3 '^metadata:' '$TMP/helm-names.yaml' | grep -c '^  name: cs')\" -eq \"\$(grep -c '^kind:' '$TMP/helm-names.yaml')\" ]"
check "the chart has a PodDisruptionBudget of maxUnavailable 1 for two replicas" bash -c \
  "grep -A12 '^kind: PodDisruptionBudget' '$TMP/helm.yaml' | grep -q 'maxUnavailable: 1'"
check "and none for one replica, which it would keep from every drain" bash -c \
  "! helm template zo '$ZK_ROOT/charts/zoekt-operator' --set replicaCount=1 | grep -q '^kind: PodDisruptionBudget'"
check "the chart spreads its replicas over nodes" bash -c \
  "grep -A6 'topologySpreadConstraints:' '$TMP/helm.yaml' | grep -q 'topologyKey: kubernetes.io/hostname'"
check "priorityClassName and podLabels reach the operator's pods" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --set priorityClassName=ops-critical --set podLabels.team=search |
   grep -A40 '^kind: Deployment' | grep -q 'priorityClassName: ops-critical' &&
   helm template zo '$ZK_ROOT/charts/zoekt-operator' --set podLabels.team=search | grep -q 'team: search'"

check "corpusPods values become the operator's --corpus-* flags" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --set 'corpusPods.imagePullSecrets[0].name=regcred' \
     --set corpusPods.priorityClassName=search-high --set corpusPods.labels.team=search >'$TMP/pods.yaml' &&
   grep -q -- '--corpus-image-pull-secrets=regcred$' '$TMP/pods.yaml' &&
   grep -q -- '--corpus-priority-class=search-high$' '$TMP/pods.yaml' &&
   grep -q -- '--corpus-pod-labels=team=search$' '$TMP/pods.yaml'"
check "the chart refuses a corpus pod label under app.kubernetes.io/" bash -c \
  "! helm template zo '$ZK_ROOT/charts/zoekt-operator' --set-string 'corpusPods.labels.app\\.kubernetes\\.io/part-of=x' >/dev/null 2>&1"
check "the operator refuses the same label itself, naming it" bash -c \
  "'$OP' --corpus-pod-labels app.kubernetes.io/part-of=x 2>&1 | grep -q 'app.kubernetes.io/part-of=x'; [ \${PIPESTATUS[0]} -eq 2 ]"

# kustomize: an image override in an overlay reaches the images the operator gives corpus pods.
# (kustomize takes a relative path only.)
mkdir -p "$TMP/ko" && cat >"$TMP/ko/kustomization.yaml" <<YAML
resources: [$(realpath --relative-to="$TMP/ko" "$ZK_ROOT/manifests")]
images:
  - {name: ghcr.io/zoekt-operator/zoekt-gateway, newName: mirror.invalid/gw, newTag: "7"}
  - {name: ghcr.io/zoekt-operator/zoekt, newName: mirror.invalid/zoekt}
YAML
kubectl kustomize "$TMP/ko" >"$TMP/ko.yaml" 2>&1
check "an overlay's images: entry changes the corpus gateway image" \
  bash -c "grep -A1 'name: CORPUS_GATEWAY_IMAGE' '$TMP/ko.yaml' | grep -q 'value: mirror.invalid/gw:7'"
check "and the corpus zoekt image, keeping its tag" \
  bash -c "grep -A1 'name: CORPUS_ZOEKT_IMAGE' '$TMP/ko.yaml' | grep -q 'value: mirror.invalid/zoekt:0'"
check "the operator's flags take them from the environment" \
  grep -qF -- '--gateway-image=$(CORPUS_GATEWAY_IMAGE)' "$TMP/ko.yaml"
check "manifests/ has a PodDisruptionBudget for the operator" bash -c \
  "grep -A12 '^kind: PodDisruptionBudget' '$TMP/kustomized.yaml' | grep -q 'maxUnavailable: 1'"
finish
