{{/* The chart's name, or nameOverride. */}}
{{- define "zoekt-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The name of every object: fullnameOverride, else the release's name with the chart's appended
unless it already holds it. */}}
{{- define "zoekt-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "zoekt-operator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "zoekt-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "zoekt-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "zoekt-operator.labels" -}}
{{ include "zoekt-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "zoekt-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "zoekt-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* An image reference from {repository, tag, digest} (values.yaml), given as (list IMAGE $). */}}
{{- define "zoekt-operator.image" -}}
{{- $img := index . 0 -}}
{{- $root := index . 1 -}}
{{- printf "%s:%s" $img.repository ($img.tag | default $root.Chart.AppVersion) -}}
{{- with $img.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/* The namespaces the operator watches, comma-separated: watchNamespace and watchNamespaces; empty
for all of them. */}}
{{- define "zoekt-operator.watchNamespaces" -}}
{{- $all := .Values.watchNamespaces | default list -}}
{{- with .Values.watchNamespace }}{{ $all = prepend $all . }}{{ end -}}
{{- $all | uniq | join "," -}}
{{- end -}}

{{/* The operator's RBAC rules, for the ClusterRole or (given "namespaced") each namespace's Role,
which cannot grant the one cluster-scoped read, StorageClasses. */}}
{{- define "zoekt-operator.rules" -}}
  # Corpora: watched; the spec is never written, status only through /status (PUT). get and patch
  # are not used by the controller itself, but RBAC lets it create the connector's Role (get, list,
  # watch on its own corpus, and patch with webhooks, to request a discovery) only when it holds
  # those permissions: without them that would be an escalation.
  - apiGroups: ["codesearch.dev"]
    resources: ["codesearchcorpora"]
    verbs: ["get", "list", "watch", "patch"]
  - apiGroups: ["codesearch.dev"]
    resources: ["codesearchcorpora/status"]
    verbs: ["update"]
  # Children: watched, and written with server-side apply (patch; create when the object is new).
  - apiGroups: [""]
    resources: ["configmaps", "persistentvolumeclaims", "serviceaccounts"]
    verbs: ["list", "watch", "create", "patch"]
  # Services, Deployments and PodDisruptionBudgets are deleted when a shard layout stops serving.
  - apiGroups: [""]
    resources: ["services"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  - apiGroups: ["policy"]
    resources: ["poddisruptionbudgets"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  - apiGroups: ["batch"]
    resources: ["cronjobs"]
    verbs: ["list", "watch", "create", "patch"]
  # Jobs: watched for index freshness; created for the reindex annotation and to index a new shard
  # layout; that last kind deleted once its layout took over or was given up.
  - apiGroups: ["batch"]
    resources: ["jobs"]
    verbs: ["list", "watch", "create", "delete"]
  # The corpora's Pods: the indexer's termination messages name the repositories that failed to
  # index; a search pod that cannot be scheduled or pull its image says why none runs.
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "watch"]
{{- if ne . "namespaced" }}
  # The storage class of a volume claim that stays Pending: whether it exists at all.
  - apiGroups: ["storage.k8s.io"]
    resources: ["storageclasses"]
    verbs: ["get"]
{{- end }}
  # The connector's Role and RoleBinding (read its own corpus).
  - apiGroups: ["rbac.authorization.k8s.io"]
    resources: ["roles", "rolebindings"]
    verbs: ["list", "watch", "create", "patch"]
  # The corpora's NetworkPolicies; delete for a corpus that turns them off (spec.networkPolicy.enabled).
  - apiGroups: ["networking.k8s.io"]
    resources: ["networkpolicies"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  # Referenced Secrets and the git CA bundle's ConfigMap: their existence is checked, and the operator
  # reads the gateway's token (to read /index-status), a source's access token and the CA bundle (to
  # list a code host's repositories, spec.sources); it copies none of them anywhere.
  - apiGroups: [""]
    resources: ["secrets", "configmaps"]
    verbs: ["get"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
{{- end -}}
