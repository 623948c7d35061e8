#!/usr/bin/env bash
# spec.timeZone is honoured by the real CronJob controller, not only rendered: a corpus scheduled for
# the coming minute of a zone fourteen hours ahead of UTC (Pacific/Kiritimati) gets a Job from its
# CronJob at that minute, which in UTC would be fourteen hours away; the same schedule without a time
# zone (the controller manager's zone, UTC here) gets none in that time. The operator runs under the
# shipped RBAC; the Jobs' pods select arm64, which the amd64 node does not offer, so they stay Pending.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/operator/common.sh"

wait_api || { fail "API server not ready"; finish; exit 1; }
install_crd || { fail "CRD install"; finish; exit 1; }
NS=$(new_namespace optz)
on_exit "drop_namespace $NS"
KC=$(operator_identity "$NS") || { fail "operator identity"; finish; exit 1; }
op_start a "$KC" "$NS" --index-status-url-template "http://127.0.0.1:1/{namespace}/{name}"

corpus() { # corpus NAME SCHEDULE [TIMEZONE]
  cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: codesearch.dev/v1alpha1
kind: CodeSearchCorpus
metadata: {name: $1, namespace: $NS}
spec:
  repositories: [{url: "https://github.com/example/alpha.git"}]
  schedule: "$2"
${3:+  timeZone: $3}
YAML
}
# The CronJobs are made first with a schedule of the far future, then moved to the coming minute of
# Kiritimati once they exist: the wait is then at most a minute, and no minute is missed because a
# CronJob was made after it began (the controller does not start Jobs for minutes before it exists).
corpus kiritimati "0 0 1 1 *" Pacific/Kiritimati
corpus utc "0 0 1 1 *"
check "the CronJob carries the corpus's time zone" eventually 30 bash -c \
  "[ \"\$(kubectl -n $NS get cronjob kiritimati-indexer -o jsonpath='{.spec.timeZone}')\" = Pacific/Kiritimati ]"
check "the CronJob without one has none" eventually 30 bash -c \
  "kubectl -n $NS get cronjob utc-indexer >/dev/null 2>&1 && [ -z \"\$(kubectl -n $NS get cronjob utc-indexer -o jsonpath='{.spec.timeZone}')\" ]"
schedule_is() { # schedule_is CRONJOB SCHEDULE
  [ "$(kubectl -n "$NS" get cronjob "$1" -o jsonpath='{.spec.schedule}' 2>/dev/null)" = "$2" ]
}
# The next minute boundary at least 15 s away, so that both CronJobs carry it before it begins; picked
# again should the update have taken longer than that.
for attempt in 1 2 3; do
  when=$(( ($(date +%s) + 15 + 59) / 60 * 60 ))
  schedule="$(TZ=Pacific/Kiritimati date -d "@$when" '+%-M %-H') * * *"
  corpus kiritimati "$schedule" Pacific/Kiritimati
  corpus utc "$schedule"
  eventually 30 schedule_is kiritimati-indexer "$schedule" && eventually 30 schedule_is utc-indexer "$schedule" &&
    [ "$(date +%s)" -lt $((when - 2)) ] && break
done
check "both CronJobs carry the coming minute of Kiritimati before it begins (attempt $attempt)" \
  [ "$(date +%s)" -lt $((when - 2)) ]
jobs_of() { # jobs_of CRONJOB: how many Jobs CRONJOB has started
  kubectl -n "$NS" get jobs -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}{"\n"}{end}' |
    grep -cx "$1"
}
started() { [ "$(jobs_of "$1")" -ge 1 ]; }
# The minute comes within 75 s; the controller acts within about 10 s of it.
check "the CronJob controller starts a Job at that minute of Pacific/Kiritimati" eventually 120 started kiritimati-indexer
check "the same schedule in UTC starts none" test "$(jobs_of utc-indexer)" = 0
check "operator a stops cleanly" op_stop a
finish
