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
