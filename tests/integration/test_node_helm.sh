#!/usr/bin/env bash
# The operator installed with the Helm chart (charts/zoekt-operator) from its image, watching one
# namespace, on the local node: it takes the Lease under the chart's ServiceAccount, and a corpus of a
# public repository behind the git server's private CA fails on the certificate until the CA is given
# (as a Secret key this time), then is indexed by a real Job and searched by an agent through the
# Service's open gateway. The chart's ServiceMonitor, PodMonitor and PrometheusRule go through the
# Prometheus Operator (built from its Go module) into a configuration that a real Prometheus runs: it
# scrapes the operator and the corpus's connector and fires ZoektCorpusRepositoriesFailing for the
# failing repository. `helm upgrade` with a changed value rolls the operator without disturbing the
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
# The Prometheus Operator, built from its Go module, as a process on this machine watching the release's
# namespace: its CRDs first (removed at the end unless they were there before), so that the chart can
# ship its ServiceMonitor, PodMonitor and PrometheusRule.
PO_DIR=$("$ZK_ROOT/scripts/upstream.sh" bin prometheus-operator 2>"$NODE_TMP/po-build.log") ||
  bail "the Prometheus Operator builds from its Go module: $(tail -1 "$NODE_TMP/po-build.log")"
for f in "$PO_DIR"/crds/*.yaml; do
  crd=$(sed -n 's/^  name: //p' "$f" | head -n 1)
  $KC get crd "$crd" >/dev/null 2>&1 || on_exit "$KC delete crd $crd --wait=false"
done
# (kubectl wait fails at once on a CRD whose status has no conditions yet, so ask until it has.)
established() {
  local c
  for c in servicemonitors podmonitors prometheusrules prometheuses probes scrapeconfigs; do
    [ "$($KC get crd "$c.monitoring.coreos.com" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] ||
      return 1
  done
}
$KC apply --server-side -f "$PO_DIR/crds/" >/dev/null && eventually 60 established ||
  bail "the Prometheus Operator's CRDs are served"
$KC create namespace zoekt-operator >/dev/null 2>&1 || true
KUBECONFIG=$KUBECONFIG "$PO_DIR/prometheus-operator" --namespaces=zoekt-operator \
  --web.listen-address="127.0.0.1:$("$ZK_ROOT/scripts/free-port.sh")" >"$NODE_TMP/prometheus-operator.log" 2>&1 &
on_exit "kill $!"
# The corpus pods' settings: a label and a pull Secret (which need not exist for an image the node
# already holds). The monitoring objects for the Prometheus Operator.
helm install zoekt-operator "$ZK_ROOT/charts/zoekt-operator" -n zoekt-operator --create-namespace \
  --set watchNamespace="$NS" --set corpusPods.labels.team=search \
  --set 'corpusPods.imagePullSecrets[0].name=regcred' --set monitoring.serviceMonitor.enabled=true \
  --set monitoring.podMonitor.enabled=true --set monitoring.prometheusRule.enabled=true \
  >"$NODE_TMP/helm.log" 2>&1 || bail "helm install: $(tail -3 "$NODE_TMP/helm.log")"
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
# A Prometheus object (no replicas: the image would come from a registry) makes the Prometheus
# Operator write the configuration it generates from the chart's ServiceMonitor and PodMonitor, and
# the rule files from its PrometheusRule. A real Prometheus runs exactly those here, with only what a
# process outside the cluster needs changed: the API server's address and credentials for service
# discovery (the admin kubeconfig), the rule files' folder, every `for` cut to 0s, and the pod's name
# and shard number, which its config-reloader would put in place of $(POD_NAME) and $(SHARD).
$KC apply -f - >/dev/null <<YAML || bail "the Prometheus object is created"
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: zk, namespace: zoekt-operator}
spec: {replicas: 0, serviceMonitorSelector: {}, podMonitorSelector: {}, ruleSelector: {}}
YAML
generated() {
  $KC -n zoekt-operator get secret prometheus-zk -o jsonpath='{.data.prometheus\.yaml\.gz}' 2>/dev/null |
    base64 -d 2>/dev/null | gunzip >"$NODE_TMP/generated.yaml" 2>/dev/null &&
    grep -q 'job_name: podMonitor/zoekt-operator/zoekt-operator-search/0' "$NODE_TMP/generated.yaml" &&
    grep -q 'job_name: serviceMonitor/zoekt-operator/zoekt-operator/0' "$NODE_TMP/generated.yaml"
}
check "the Prometheus Operator turns the chart's ServiceMonitor and PodMonitor into scrape jobs" \
  eventually 90 generated || sed 's/^/# /' "$NODE_TMP/prometheus-operator.log" | tail -5
mkdir -p "$NODE_TMP/rules"
rule_files() {
  $KC -n zoekt-operator get configmap prometheus-zk-rulefiles-0 -o json 2>/dev/null | python3 -c '
import json, os, sys
data = json.load(sys.stdin).get("data", {})
for name, text in data.items():
    open(os.path.join(sys.argv[1], name), "w").write(text)
sys.exit(not data)' "$NODE_TMP/rules"
}
check "and the chart's PrometheusRule into a rule file" eventually 60 rule_files
alerts_of() { sed -n 's/^ *- alert: //p' "$@" | sort | tr '\n' ' '; }
check "which holds every alert of files/prometheus-rules.yaml" \
  test "$(alerts_of "$NODE_TMP"/rules/*)" = "$(alerts_of "$PROM_RULES")"
for f in "$NODE_TMP"/rules/*; do prom_cut_for <"$f" >"$f.cut" && mv "$f.cut" "$f"; done
python3 - "$NODE_TMP/generated.yaml" "$KUBECONFIG" "$NODE_TMP/rules" >"$NODE_TMP/prometheus.yml" <<'PY'
import sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
cfg["global"]["scrape_interval"] = cfg["global"]["evaluation_interval"] = "1s"
cfg["rule_files"] = [sys.argv[3] + "/*"]
for job in cfg["scrape_configs"]:
    job["scrape_interval"] = "1s"
    for sd in job.get("kubernetes_sd_configs", []):
        sd["kubeconfig_file"] = sys.argv[2]
print(yaml.safe_dump(cfg).replace("$(SHARD)", "0").replace("$(POD_NAME)", "prometheus-zk-0"))
PY
prom_run "$NODE_TMP/prometheus.yml"
check "Prometheus runs the generated configuration: both operator pods through the metrics Service" \
  eventually 60 prom_up serviceMonitor/zoekt-operator/zoekt-operator/0 2 || prom_log
check "and the corpus's connector through the PodMonitor" \
  eventually 60 prom_up podMonitor/zoekt-operator/zoekt-operator-search/0 1 || prom_log
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
