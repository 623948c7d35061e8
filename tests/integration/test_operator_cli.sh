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
for kind in PersistentVolumeClaim ConfigMap ServiceAccount Role RoleBinding Service Deployment PodDisruptionBudget CronJob; do
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
# Ten objects: the nine above and the refresh Deployment (spec.poll's default is on).
check "render output parses as Kubernetes objects" bash -c \
  "[ \"\$(kubectl kustomize '$TMP/k' 2>/dev/null | grep -c '^kind:')\" -eq 10 ]"
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
check "the ClusterRole never deletes, escalates, binds or impersonates" bash -c \
  "! grep -E '^\s*verbs:' '$ZK_ROOT/manifests/clusterrole.yaml' | grep -qE 'delete|escalate|bind|impersonate'"
check "the chart's crds/ is an exact copy of crds/" diff -r "$ZK_ROOT/crds" "$ZK_ROOT/charts/zoekt-operator/crds" -x kustomization.yaml
check "helm lint passes" bash -c "helm lint '$ZK_ROOT/charts/zoekt-operator' >/dev/null"
check "helm template renders the Deployment and RBAC" bash -c \
  "helm template zo '$ZK_ROOT/charts/zoekt-operator' --namespace zo >'$TMP/helm.yaml' && grep -q 'kind: Deployment' '$TMP/helm.yaml' && grep -q 'kind: ClusterRole$' '$TMP/helm.yaml'"
check "the chart's ClusterRole rules equal manifests/clusterrole.yaml's" bash -c \
  "diff <(sed -n '/^rules:/,\$p' '$ZK_ROOT/manifests/clusterrole.yaml' | grep -v '^\s*#') <(awk '/^kind: ClusterRole$/{f=1} f&&/^rules:/{p=1} p&&/^---/{exit} p' '$TMP/helm.yaml' | grep -v '^\s*#')"
finish
