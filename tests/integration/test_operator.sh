#!/usr/bin/env bash
# The operator against the real control plane, running under exactly the RBAC shipped in manifests/:
# CRD install and `kubectl explain`; a corpus gets every child with the fields issue 3 lists; drift is
# repaired; a spec edit rolls the Deployment; nothing the operator sends draws a warning from the API
# server or fails to apply; a resync in steady state writes nothing; invalid specs are
# rejected by the schema or reported in status with an Event; a missing Secret blocks the children that
# would mount it; deleting a corpus cascades, keeping the PVC under Retain and not under Delete.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

wait_api || { fail "API server not ready"; finish; exit 1; }
check "CRD installs and is established" install_crd
check "kubectl explain teaches the spec" bash -c \
  "kubectl explain codesearchcorpora.spec.repositories 2>/dev/null | grep -qi 'url'"
check "kubectl explain describes freshness" bash -c \
  "kubectl explain codesearchcorpora.spec.freshness.maxAge >/dev/null 2>&1"

NS=$(new_namespace op)
on_exit "drop_namespace $NS"
KC=$(operator_identity "$NS") || { fail "operator identity"; finish; exit 1; }
op_start a "$KC" "$NS" --resync-period 2s --index-status-url-template "http://127.0.0.1:1/{namespace}/{name}"
check "operator serves /readyz once synced" eventually 30 curl -fsS "http://127.0.0.1:${OP_PORT[a]}/readyz" -o /dev/null

corpus() { # corpus NAME POLICY [EXTRA_REPO] [EXTRA_SPEC_LINE]
  cat <<YAML
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: $1, namespace: $NS}
spec:
  repositories:
    - url: https://github.com/example/alpha.git
    - url: https://github.com/example/beta.git
      branches: [main, release]
${3:+    - url: $3}
  storage: {size: 10Gi, onDelete: $2}
${4:+  $4}
YAML
}
corpus org Retain | kubectl apply -f - >/dev/null

# ---- every child, with the fields issue 3 lists ----
check "Deployment org-search appears" eventually 30 exists "$NS" deployment org-search
for kind_name in persistentvolumeclaim/org-index configmap/org-indexer cronjob/org-indexer service/org-search \
  poddisruptionbudget/org-search networkpolicy.networking.k8s.io/org-search networkpolicy.networking.k8s.io/org-indexer \
  serviceaccount/org-search role.rbac.authorization.k8s.io/org-search rolebinding.rbac.authorization.k8s.io/org-search; do
  check "child $kind_name exists" eventually 10 exists "$NS" "${kind_name%%/*}" "${kind_name#*/}"
done
j() { kubectl -n "$NS" get "$1" "$2" -o jsonpath="$3" 2>/dev/null; }
check "children carry app.kubernetes.io labels" bash -c \
  "[ \"\$(kubectl -n $NS get deploy,cm,cronjob,svc,sa,pvc -l app.kubernetes.io/managed-by=zoekt-operator,app.kubernetes.io/instance=org,app.kubernetes.io/name=zoekt -o name | wc -l)\" -ge 6 ]"
check "Deployment is controlled by the corpus" \
  [ "$(j deploy org-search '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller}')" = "CodeSearchCorpus/true" ]
check "PVC under Retain has no ownerReference" [ -z "$(j pvc org-index '{.metadata.ownerReferences}')" ]
check "PVC is ReadWriteMany on efs-sc with the requested size" \
  [ "$(j pvc org-index '{.spec.accessModes[0]}/{.spec.storageClassName}/{.spec.resources.requests.storage}')" = "ReadWriteMany/efs-sc/10Gi" ]
check "ConfigMap lists the repositories" bash -c "kubectl -n $NS get cm org-indexer -o yaml | grep -q example/beta"
check "PodDisruptionBudget lets one search pod go at a time, selecting the Deployment's pods" \
  [ "$(j pdb org-search '{.spec.maxUnavailable}/{.spec.selector.matchLabels.app\.kubernetes\.io/component}')" = "1/search" ]
check "CronJob forbids concurrent runs" [ "$(j cronjob org-indexer '{.spec.concurrencyPolicy}')" = "Forbid" ]
# The corpus names no schedule: the default (SPEC_DEFAULT_SCHEDULE, and the CRD's default) applies.
check "CronJob has the default nightly schedule" [ "$(j cronjob org-indexer '{.spec.schedule}')" = "0 3 * * *" ]
check "Deployment runs three containers" \
  [ "$(j deploy org-search '{range .spec.template.spec.containers[*]}{.name}{" "}{end}' | wc -w)" = 3 ]
check "Deployment selects arm64 nodes" \
  [ "$(j deploy org-search '{.spec.template.spec.nodeSelector.kubernetes\.io/arch}')" = "arm64" ]
check "pods run as non-root with RuntimeDefault seccomp" \
  [ "$(j deploy org-search '{.spec.template.spec.securityContext.runAsNonRoot}/{.spec.template.spec.securityContext.seccompProfile.type}')" = "true/RuntimeDefault" ]
check "every container has a read-only root filesystem and drops ALL capabilities" bash -c \
  "[ \"\$(kubectl -n $NS get deploy org-search -o jsonpath='{range .spec.template.spec.containers[*]}{.securityContext.readOnlyRootFilesystem}{.securityContext.capabilities.drop[0]} {end}')\" = 'trueALL trueALL trueALL ' ]"
check "nginx, the only listener, has readiness and liveness probes" bash -c \
  "kubectl -n $NS get deploy org-search -o jsonpath='{range .spec.template.spec.containers[?(@.name==\"nginx\")]}{.readinessProbe.httpGet.path}{\" \"}{.livenessProbe}{end}' | grep -q '^/.* {'"
check "zoekt-webserver has a liveness probe" bash -c \
  "kubectl -n $NS get deploy org-search -o jsonpath='{.spec.template.spec.containers[?(@.name==\"zoekt-webserver\")].livenessProbe}' | grep -q ."
# Two container ports: nginx's, the one the Service targets, and the connector's metrics (Prometheus
# scrapes each pod for it; it is behind no Service).
ports() { kubectl -n "$NS" get deploy org-search -o jsonpath='{range .spec.template.spec.containers[*]}{.name}{range .ports[*]}:{.name}:{.containerPort}{end} {end}'; }
check "the container ports are nginx's and the connector's metrics ($(ports))" \
  test "$(ports)" = "zoekt-webserver nginx:http:8080 connector:metrics:8081 "
check "the Service targets nginx's port alone" \
  test "$(kubectl -n "$NS" get service org-search -o jsonpath='{.spec.ports[*].targetPort}')" = http
HASH1=$(j deploy org-search '{.spec.template.metadata.annotations.codesearch\.dev/config-hash}')
check "pod template carries a config hash" [ -n "$HASH1" ]
check "status has observedGeneration" eventually 15 bash -c \
  "[ \"\$(kubectl -n $NS get csc org -o jsonpath='{.status.observedGeneration}')\" = \"\$(kubectl -n $NS get csc org -o jsonpath='{.metadata.generation}')\" ]"
check "status publishes the in-cluster endpoint" \
  [ "$(kubectl -n "$NS" get csc org -o jsonpath='{.status.endpoint}')" = "http://org-search.$NS.svc:8080" ]
check "an Applied Event is recorded" eventually 10 bash -c \
  "kubectl -n $NS get events --field-selector involvedObject.name=org,reason=Applied -o name | grep -q ."
# Its first status says the search pods are not available yet, or their claim not bound: that is the
# way of a new corpus, not a warning, and the status says it already. With the local node running,
# the corpus's arm64 pods are Unschedulable there, which is a warning (test_node_why.sh), so only
# those reasons are set aside.
check "a new corpus on its way gets no Warning Event" \
  [ -z "$(kubectl -n "$NS" get events --field-selector involvedObject.name=org,type=Warning \
          -o jsonpath='{.items[*].reason}' | tr ' ' '\n' | grep -vx -e Unschedulable -e ImagePullFailed)" ]

# ---- drift ----
CM_UID=$(j cm org-indexer '{.metadata.uid}')
kubectl -n "$NS" delete configmap org-indexer >/dev/null
check "a deleted ConfigMap is recreated" eventually 20 bash -c \
  "u=\$(kubectl -n $NS get cm org-indexer -o jsonpath='{.metadata.uid}' 2>/dev/null); [ -n \"\$u\" ] && [ \"\$u\" != $CM_UID ]"
CM_UID=$(j cm org-indexer '{.metadata.uid}')
kubectl -n "$NS" delete configmap org-indexer >/dev/null
check "a second deletion is repaired too" eventually 20 bash -c \
  "u=\$(kubectl -n $NS get cm org-indexer -o jsonpath='{.metadata.uid}' 2>/dev/null); [ -n \"\$u\" ] && [ \"\$u\" != $CM_UID ]"
check "the repeated repair is aggregated into one Event with count 2" eventually 10 bash -c \
  "kubectl -n $NS get events --field-selector involvedObject.name=org,reason=Applied -o jsonpath='{range .items[*]}{.count} {.message}{\"\\n\"}{end}' | grep -q '^2 Applied children: created ConfigMap org-indexer\$'"
kubectl -n "$NS" scale deployment org-search --replicas=5 >/dev/null
check "edited replicas are restored" eventually 20 bash -c \
  "[ \"\$(kubectl -n $NS get deploy org-search -o jsonpath='{.spec.replicas}')\" = 1 ]"

# ---- a repository edit reaches the indexer's list and leaves the search pods alone ----
corpus org Retain https://github.com/example/gamma.git | kubectl apply -f - >/dev/null
check "the ConfigMap lists the new repository" eventually 10 bash -c \
  "kubectl -n $NS get cm org-indexer -o yaml | grep -q example/gamma"
check "the corpus edit is reconciled (observedGeneration caught up)" eventually 20 bash -c \
  "[ \"\$(kubectl -n $NS get csc org -o jsonpath='{.status.observedGeneration}')\" = \"\$(kubectl -n $NS get csc org -o jsonpath='{.metadata.generation}')\" ]"
check "a repository edit keeps the pod template's config hash (no rollout)" \
  [ "$(j deploy org-search '{.spec.template.metadata.annotations.codesearch\.dev/config-hash}')" = "$HASH1" ]

# ---- an edit to what the pods mount rolls the Deployment ----
corpus org Retain https://github.com/example/gamma.git "gateway: {port: 9090}" | kubectl apply -f - >/dev/null
check "a gateway edit changes the pod template's config hash" eventually 20 bash -c \
  "h=\$(kubectl -n $NS get deploy org-search -o jsonpath='{.spec.template.metadata.annotations.codesearch\.dev/config-hash}'); [ -n \"\$h\" ] && [ \"\$h\" != $HASH1 ]"

# ---- steady state: resyncs every 2 s issue no write and change no resourceVersion ----
snapshot() {
  kubectl -n "$NS" get csc,deploy,cm,cronjob,svc,sa,pvc,role,rolebinding \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}' | sort
}
sleep 3 # let the events of the edit above settle
BEFORE=$(snapshot)
A0=$(op_api_count a apply); S0=$(op_api_count a status); R0=$(op_metric a 'zoekt_operator_reconcile_total{result="success"}')
sleep 7
AFTER=$(snapshot)
A1=$(op_api_count a apply); S1=$(op_api_count a status); R1=$(op_metric a 'zoekt_operator_reconcile_total{result="success"}')
check "steady state: resyncs ran (reconciles $R0 -> $R1)" [ "${R1%.*}" -ge $(( ${R0%.*} + 3 )) ]
check "steady state: no apply request ($A0 -> $A1)" [ "$A0" = "$A1" ]
check "steady state: no status write ($S0 -> $S1)" [ "$S0" = "$S1" ]
check "steady state: no resourceVersion changed" [ "$BEFORE" = "$AFTER" ]
[ "$BEFORE" = "$AFTER" ] || diff <(echo "$BEFORE") <(echo "$AFTER") | sed 's/^/#   /'

# ---- nothing the operator sent drew a warning from the API server or failed to apply ----
# By now operator a has applied every child of org, the richest corpus here (three repositories, one
# with branches, a gateway port, Retain storage), three times over (creation, a repository edit, a
# gateway edit), repaired drift and written status, Events and its Lease. A dropped or deprecated field
# in any of it would have drawn a Warning header, which lib/kube logs; applies are strict, so an
# unknown field would have failed one instead.
# clean_api_use ID: no warning from the API server in the operator's log (the first are shown when
# there are), some apply requests made, and every one of them answered with success.
clean_api_use() {
  local warned applied failed
  warned=$(grep -c 'The API server sent a warning' "$OP_TMP/$1.log")
  applied=$(op_api_count "$1" apply)
  failed=$(curl -fsS "http://127.0.0.1:${OP_PORT[$1]}/metrics" 2>/dev/null |
    awk 'index($0, "zoekt_operator_api_requests_total{verb=\"apply\",") == 1 && index($0, "code=\"200\"") == 0 { s += $2 }
         END { print s + 0 }')
  [ "$warned" = 0 ] && [ "$applied" -gt 0 ] && [ "$failed" = 0 ] && return 0
  echo "# $warned warning(s) from the API server; $failed of $applied apply request(s) failed"
  grep 'The API server sent a warning' "$OP_TMP/$1.log" | head -5 | sed 's/^/#   /'
  return 1
}
check "the API server warned about nothing operator a sent, and no apply failed" clean_api_use a

# ---- steady state after a restart: caches filled from a List (not from watch events) ----
check "operator a stops cleanly" op_stop a
BEFORE=$(snapshot)
op_start b "$KC" "$NS" --resync-period 2s --index-status-url-template "http://127.0.0.1:1/{namespace}/{name}"
check "a restarted operator reconciles every corpus again" eventually 30 bash -c \
  "[ \"\$(curl -fsS http://127.0.0.1:${OP_PORT[b]}/metrics | awk '/^zoekt_operator_reconcile_total.result=.success/{print \$2}')\" -ge 3 ]"
sleep 3
AFTER=$(snapshot)
check "after a restart: no apply request" [ "$(op_api_count b apply)" = 0 ]
check "after a restart: no status write" [ "$(op_api_count b status)" = 0 ]
check "after a restart: no resourceVersion changed" [ "$BEFORE" = "$AFTER" ]
[ "$BEFORE" = "$AFTER" ] || diff <(echo "$BEFORE") <(echo "$AFTER") | sed 's/^/#   /'

# ---- invalid specs ----
bad_schema=$(cat <<YAML
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: noschema, namespace: $NS}
spec:
  storage: {onDelete: Sometimes}
YAML
)
check "the schema rejects a corpus without repositories and a bad enum" bash -c \
  "! echo '$bad_schema' | kubectl apply -f - >/dev/null 2>&1"
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: dup, namespace: $NS}
spec:
  repositories:
    - url: https://github.com/example/alpha.git
    - url: https://gitlab.example.com/example/alpha.git
      name: github.com/example/alpha
YAML
check "duplicate repository names are reported in status" eventually 20 status_says "$NS" dup spec.repositories
check "the invalid spec is reported with a Warning Event naming the field" eventually 10 warned "$NS" dup spec.repositories
check "an invalid corpus gets no children" bash -c "! kubectl -n $NS get deploy dup-search >/dev/null 2>&1"
check "other corpora keep reconciling (org still ready to serve its children)" exists "$NS" deployment org-search
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: private, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/secret.git"}]
  gitCredentialsSecretRef: {name: missing-creds}
YAML
check "a missing Secret is reported in status" eventually 20 status_says "$NS" private missing-creds
check "a missing Secret is reported with a Warning Event" eventually 10 warned "$NS" private missing-creds
check "nothing that would mount the missing Secret is applied" bash -c \
  "! kubectl -n $NS get cronjob private-indexer >/dev/null 2>&1 && ! kubectl -n $NS get deploy private-search >/dev/null 2>&1"
# The webhook's Secret too: the search pods mount it, and without it they would wait in
# ContainerCreating while the status said nothing.
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: hooked, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/hooked.git"}]
  webhook: {secretRef: {name: missing-hook-secret}}
YAML
check "a missing webhook Secret is reported in status" eventually 20 status_says "$NS" hooked missing-hook-secret
check "and nothing that would mount it is applied" bash -c "! kubectl -n $NS get deploy hooked-search >/dev/null 2>&1"

# ---- a long name and many repositories (the reference organization mirrors more than 120) ----
LONG=$(printf 'a%.0s' $(seq 1 100))-corpus
{
  printf 'apiVersion: codesearch.dev/v1alpha1\nkind: CodeSearchCorpus\nmetadata: {name: %s, namespace: %s}\nspec:\n  repositories:\n' "$LONG" "$NS"
  for i in $(seq 1 150); do printf '    - url: https://git.example.com/org/repo-%03d.git\n' "$i"; done
} | kubectl apply -f - >/dev/null
check "a 107-character corpus with 150 repositories gets a Deployment with a name within 63 characters" eventually 30 bash -c \
  "kubectl -n $NS get deploy -o name | grep -E '^deployment.apps/a{40,}' | awk -F/ '{ exit !(length(\$2) <= 63) }'"
check "its ConfigMap lists all 150 repositories" eventually 10 bash -c \
  "[ \"\$(kubectl -n $NS get cm -o yaml | grep -c 'git.example.com/org/repo-')\" -ge 150 ]"
kubectl -n "$NS" delete csc "$LONG" --wait=false >/dev/null

# ---- cascade deletion and the PVC policy ----
corpus gone Delete | kubectl apply -f - >/dev/null
check "corpus with onDelete=Delete gets its children" eventually 30 exists "$NS" deployment gone-search
check "its PVC is owned by the corpus" eventually 10 bash -c \
  "[ \"\$(kubectl -n $NS get pvc gone-index -o jsonpath='{.metadata.ownerReferences[0].kind}')\" = CodeSearchCorpus ]"
kubectl -n "$NS" delete csc org gone --wait=false >/dev/null
check "deleting a corpus removes its Deployment (garbage collector)" eventually 60 bash -c \
  "! kubectl -n $NS get deploy org-search >/dev/null 2>&1 && ! kubectl -n $NS get deploy gone-search >/dev/null 2>&1"
check "deleting a corpus removes its ConfigMap, CronJob and Service" eventually 30 bash -c \
  "! kubectl -n $NS get cm org-indexer >/dev/null 2>&1 && ! kubectl -n $NS get cronjob org-indexer >/dev/null 2>&1 && ! kubectl -n $NS get svc org-search >/dev/null 2>&1"
# No pvc-protection controller runs here, so a deleted claim may stay Terminating: deletion requested is enough.
check "onDelete=Delete: the PVC is deleted" eventually 30 bash -c \
  "! kubectl -n $NS get pvc gone-index >/dev/null 2>&1 || [ -n \"\$(kubectl -n $NS get pvc gone-index -o jsonpath='{.metadata.deletionTimestamp}')\" ]"
check "onDelete=Retain: the PVC and its index are kept" bash -c \
  "kubectl -n $NS get pvc org-index >/dev/null && [ -z \"\$(kubectl -n $NS get pvc org-index -o jsonpath='{.metadata.deletionTimestamp}')\" ]"

check "operator stops cleanly on SIGTERM with no sanitizer report" op_stop b
[ "$_t_fail" -eq 0 ] || { op_log a 20; op_log b 40; }
finish
