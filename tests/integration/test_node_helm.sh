#!/usr/bin/env bash
# The operator installed with the Helm chart (charts/zoekt-operator) from its image, watching one
# namespace, on the local node: it takes the Lease under the chart's ServiceAccount, and a corpus of a
# public repository behind the git server's private CA fails on the certificate until the CA is given
# (as a Secret key this time), then is indexed by a real Job and searched by an agent through the
# Service's open gateway. `helm upgrade` with a changed value rolls the operator without disturbing the
# corpus; `helm uninstall` then removes the operator and keeps the CRD and the corpus.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/node/common.sh"
source "$(dirname "$0")/monitoring/prometheus.sh"

node_preflight
git_server_start
NS=$(new_namespace helm) || bail "a namespace for the corpus"
on_exit "$KC delete namespace $NS --wait=false"
on_exit "helm uninstall zoekt-operator -n zoekt-operator >/dev/null 2>&1; operator_uninstall"
git_commit alpha main cmd/main.go 'package main' '' 'func main() {' '	println("helm-marker-6a0f")' '}'

operator_uninstall # what a killed run may have left
# The corpus pods' settings: a label and a pull Secret (which need not exist for an image the node
# already holds).
helm install zoekt-operator "$ZK_ROOT/charts/zoekt-operator" -n zoekt-operator --create-namespace \
  --set watchNamespace="$NS" --set corpusPods.labels.team=search \
  --set 'corpusPods.imagePullSecrets[0].name=regcred' >"$NODE_TMP/helm.log" 2>&1 ||
  bail "helm install: $(tail -3 "$NODE_TMP/helm.log")"
check "the chart's operator runs and one replica holds the Lease" eventually 180 operator_ready
sa=$($KC -n zoekt-operator get pods -l app.kubernetes.io/name=zoekt-operator -o jsonpath='{.items[0].spec.serviceAccountName}')
check "its pods run under the chart's ServiceAccount ($sa)" test "$sa" = zoekt-operator

corpus() { # corpus EXTRA_SPEC_LINES: applies corpus "tools" with one public repository
  node_corpus tools "  - {url: $GIT_URL/alpha.git, name: local/alpha}" "" "$1"
}

# Without the CA bundle the private CA is not trusted: the repository fails at once, with git's reason.
corpus "" || bail "the corpus is accepted"
job=$(reindex "$NS" tools) || { node_diagnostics "$NS"; bail "a reindex Job without the CA runs to its end"; }
$KC -n "$NS" logs "job/$job" >"$NODE_TMP/no-ca.log" 2>&1
check "without gitCABundleRef the repository fails on the certificate" \
  bash -c "grep -F '\"repository\":\"local/alpha\"' '$NODE_TMP/no-ca.log' | grep -q 'certificate'"
named_failed() { [ "$(csc "$NS" tools '.status.indexer.failedRepositories[*]')" = local/alpha ]; }
check "and status.indexer.failedRepositories names it" eventually 60 named_failed
# A real Prometheus finds the operator's pods as a ServiceMonitor would, through the endpoints of the
# chart's metrics Service (the API server's, with the admin kubeconfig), scrapes each, and with the
# shipped rules fires ZoektCorpusRepositoriesFailing for this corpus: the gauge comes from the leader,
# out of the failure a real indexer Job reported.
prom_start "  - job_name: zoekt-operator
    kubernetes_sd_configs: [{role: endpoints, kubeconfig_file: $KUBECONFIG, namespaces: {names: [zoekt-operator]}}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_service_name], regex: zoekt-operator-metrics, action: keep}
      - {source_labels: [__meta_kubernetes_endpoint_port_name], regex: metrics, action: keep}"
two_up() { prom_up && [ "$(curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/targets" | grep -o '"health":"up"' | wc -l)" = 2 ]; }
check "Prometheus scrapes both operator pods through the metrics Service's endpoints" eventually 60 two_up || prom_log
check "ZoektCorpusRepositoriesFailing fires for the corpus with the failing repository" \
  eventually 60 prom_firing ZoektCorpusRepositoriesFailing "$NS" tools || prom_log

$KC -n "$NS" create secret generic git-ca --from-file=bundle.pem="$GIT_CA" >/dev/null
corpus "  gitCABundleRef: {kind: Secret, name: git-ca, key: bundle.pem}" || bail "the corpus with its CA is accepted"

job=$(reindex "$NS" tools) || { node_diagnostics "$NS"; bail "a reindex Job runs to its end"; }
ok "a reindex Job ran to its end ($job)"
check "it succeeded" test "$($KC -n "$NS" get job "$job" -o jsonpath='{.status.succeeded}')" = 1
count_is() { [ "$(csc "$NS" tools .status.repositoryCount)" = "$1" ]; }
check "status.repositoryCount is 1" eventually 180 count_is 1 || node_diagnostics "$NS"
check "Ready=True" eventually 60 condition_is "$NS" tools Ready True
check "Fresh=True" eventually 30 condition_is "$NS" tools Fresh True
MCP=$(service_url "$NS" tools-search 8080 /mcp) || bail "the corpus's Service has an address"
pod_field() { $KC -n "$NS" get pods -l app.kubernetes.io/instance=tools,app.kubernetes.io/component=search \
  -o jsonpath="{.items[0]$1}"; }
check "the search pod has the chart's corpusPods label" test "$(pod_field .metadata.labels.team)" = search
check "and its pull Secret" test "$(pod_field '.spec.imagePullSecrets[*].name')" = regcred
check "an agent finds the line through the open gateway" search_finds "$MCP" "" helm-marker-6a0f cmd/main.go

# An upgrade with a changed value rolls the operator's pods and leaves the corpus serving.
helm upgrade zoekt-operator "$ZK_ROOT/charts/zoekt-operator" -n zoekt-operator --reuse-values \
  --set logLevel=debug >"$NODE_TMP/helm.log" 2>&1 || bail "helm upgrade: $(tail -3 "$NODE_TMP/helm.log")"
all_debug() { # every operator pod runs with the new value, and one holds the Lease
  local args
  args=$($KC -n zoekt-operator get pods -l app.kubernetes.io/name=zoekt-operator \
    -o jsonpath='{range .items[*]}{.spec.containers[0].args}{"\n"}{end}' 2>/dev/null)
  [ -n "$args" ] && ! grep -v -q -- '--log-level=debug' <<<"$args" && operator_ready
}
check "helm upgrade --set logLevel=debug rolls the operator onto the new value" eventually 180 all_debug
check "the operator's PodDisruptionBudget allows one disruption" eventually 30 bash -c \
  "[ \"\$($KC -n zoekt-operator get pdb zoekt-operator -o jsonpath='{.status.disruptionsAllowed}')\" = 1 ]"
check "the corpus stays Ready through the upgrade" condition_is "$NS" tools Ready True

helm uninstall zoekt-operator -n zoekt-operator >"$NODE_TMP/helm.log" 2>&1
gone() { [ -z "$($KC -n zoekt-operator get pods -l app.kubernetes.io/name=zoekt-operator -o name 2>/dev/null)" ]; }
check "helm uninstall removes the operator" eventually 90 gone
check "the corpus keeps serving without the operator" search_finds "$MCP" "" helm-marker-6a0f cmd/main.go
check "helm uninstall keeps the CRD" $KC get crd codesearchcorpora.codesearch.dev
check "and the corpus, with its status" test "$(csc "$NS" tools .status.repositoryCount)" = 1

finish
