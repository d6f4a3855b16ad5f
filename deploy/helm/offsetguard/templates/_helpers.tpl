{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "offsetguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: the release name, or release-chart when they differ. */}}
{{- define "offsetguard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "offsetguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "offsetguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "offsetguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "offsetguard.labels" -}}
helm.sh/chart: {{ include "offsetguard.chart" . }}
{{ include "offsetguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: offsetguard
{{- end }}

{{- define "offsetguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "offsetguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "offsetguard.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
"true" with two replicas or more: they share a PostgreSQL store (store.url or store.urlSecret) and one of
them, the lease holder, is active (docs/ha.md); "" with one.
*/}}
{{- define "offsetguard.replicated" -}}
{{- if gt (int .Values.replicaCount) 1 }}true{{ end }}
{{- end }}

{{/*
"true" when /var/lib/offsetguard (the SQLite store, the snapshots) is the PersistentVolumeClaim: always with
one replica and persistence on; with several, only a ReadWriteMany claim (pods on different nodes cannot
share a ReadWriteOnce volume), otherwise each pod has its own emptyDir. "" otherwise.
*/}}
{{- define "offsetguard.usesClaim" -}}
{{- if .Values.persistence.enabled }}
{{- if or (not (include "offsetguard.replicated" .)) (has "ReadWriteMany" .Values.persistence.accessModes) }}true{{ end }}
{{- end }}
{{- end }}

{{/* Directory a cluster's TLS Secret is mounted at. */}}
{{- define "offsetguard.tlsDir" -}}
{{- printf "/etc/offsetguard-tls/%s" . }}
{{- end }}

{{/*
offsetguard.yaml as rendered into the ConfigMap: clusters and API tokens with their secret references
turned into {fromEnv: VAR} placeholders (filled in by the init container) and .Values.metrics, merged
over .Values.config.
*/}}
{{- define "offsetguard.config" -}}
{{- $clusters := list }}
{{- range $i, $c := .Values.clusters }}
{{- $out := omit $c "sasl" "tls" }}
{{- if $c.sasl }}
{{- $sasl := omit $c.sasl "existingSecret" "passwordKey" }}
{{- if $c.sasl.existingSecret }}
{{- $_ := set $sasl "password" (dict "fromEnv" (printf "OG_SECRET_SASL_PASSWORD_%d" $i)) }}
{{- end }}
{{- $_ := set $out "sasl" $sasl }}
{{- end }}
{{- if $c.tls }}
{{- $tls := omit $c.tls "existingSecret" "caKey" "certKey" "keyKey" }}
{{- $dir := include "offsetguard.tlsDir" $c.name }}
{{- if $c.tls.caKey }}{{ $_ := set $tls "cafile" (printf "%s/%s" $dir $c.tls.caKey) }}{{ end }}
{{- if $c.tls.certKey }}{{ $_ := set $tls "certfile" (printf "%s/%s" $dir $c.tls.certKey) }}{{ end }}
{{- if $c.tls.keyKey }}{{ $_ := set $tls "keyfile" (printf "%s/%s" $dir $c.tls.keyKey) }}{{ end }}
{{- $_ := set $out "tls" $tls }}
{{- end }}
{{- $clusters = append $clusters $out }}
{{- end }}
{{- $tokens := list }}
{{- range $i, $t := .Values.api.tokens }}
{{- $token := omit $t "existingSecret" "key" }}
{{- if $t.existingSecret }}
{{- $_ := set $token "token" (dict "fromEnv" (printf "OG_SECRET_API_TOKEN_%d" $i)) }}
{{- end }}
{{- $tokens = append $tokens $token }}
{{- end }}
{{- $api := omit .Values.api "tokens" }}
{{- $_ := set $api "tokens" $tokens }}
{{- $config := deepCopy (default dict .Values.config) }}
{{- if hasKey $config "metrics" }}
{{- fail "metrics: set metrics.families, metrics.granularity and metrics.renderWorker at the top level of the values, not under config.metrics" }}
{{- end }}
{{- $_ := set $config "metrics" (dict "families" .Values.metrics.families "granularity" .Values.metrics.granularity "render_worker" .Values.metrics.renderWorker) }}
{{- $configStore := default dict $config.store }}
{{- if hasKey $configStore "url" }}
{{- fail "store: set store.url or store.urlSecret at the top level of the values, not config.store.url" }}
{{- end }}
{{- if and (hasKey $configStore "password") (kindIs "string" (get $configStore "password")) }}
{{- fail "config.store.password: no password in values: set store.passwordSecret (or store.urlSecret)" }}
{{- end }}
{{- /* store.url: a {fromEnv} placeholder when the URL is in a Secret, else the plain one, else SQLite */}}
{{- $url := .Values.store.url }}
{{- if dig "urlSecret" "name" "" .Values.store }}
{{- $url = dict "fromEnv" "OG_SECRET_STORE_URL" }}
{{- end }}
{{- if $url }}
{{- $postgres := dict "url" $url }}
{{- if dig "passwordSecret" "name" "" .Values.store }}
{{- $_ := set $postgres "password" (dict "fromEnv" "OG_SECRET_STORE_PASSWORD") }}
{{- end }}
{{- $_ := set $config "store" (merge $postgres (default dict $config.store)) }}
{{- else if include "offsetguard.replicated" . }}
{{- fail (printf "replicaCount %d needs a store shared by the replicas: set store.url or store.urlSecret (PostgreSQL; docs/ha.md)" (int .Values.replicaCount)) }}
{{- end }}
{{- if include "offsetguard.replicated" . }}
{{- $ha := default dict $config.ha }}
{{- if and (hasKey $ha "enabled") (not $ha.enabled) }}
{{- fail (printf "config.ha.enabled: false with replicaCount %d: every replica would act alone (docs/ha.md)" (int .Values.replicaCount)) }}
{{- end }}
{{- $_ := set $config "ha" (merge (dict "enabled" true) $ha) }}
{{- end }}
{{- $_ := set $config "clusters" $clusters }}
{{- $_ := set $config "api" $api }}
{{- toYaml $config }}
{{- end }}

{{/* secretKeyRef variables of the init container that renders the config. */}}
{{- define "offsetguard.secretEnv" -}}
{{- range $i, $c := .Values.clusters }}
{{- if and $c.sasl $c.sasl.existingSecret }}
- name: {{ printf "OG_SECRET_SASL_PASSWORD_%d" $i }}
  valueFrom:
    secretKeyRef:
      name: {{ $c.sasl.existingSecret }}
      key: {{ default "password" $c.sasl.passwordKey }}
{{- end }}
{{- end }}
{{- range $i, $t := .Values.api.tokens }}
{{- if $t.existingSecret }}
- name: {{ printf "OG_SECRET_API_TOKEN_%d" $i }}
  valueFrom:
    secretKeyRef:
      name: {{ $t.existingSecret }}
      key: {{ default $t.name $t.key }}
{{- end }}
{{- end }}
{{- with dig "urlSecret" "name" "" .Values.store }}
- name: OG_SECRET_STORE_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ dig "urlSecret" "key" "url" $.Values.store | default "url" }}
{{- end }}
{{- with dig "passwordSecret" "name" "" .Values.store }}
- name: OG_SECRET_STORE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ dig "passwordSecret" "key" "password" $.Values.store | default "password" }}
{{- end }}
{{- end }}
