#!/usr/bin/env bash
# The local node's two small controllers, each a loop that follows the API with a watch and re-syncs
# on every change (a burst of changes is coalesced into one sync). scripts/cluster.sh starts one
# process per role and stops it by PID.
#
#   node-agent.sh dns STATE        cluster DNS: writes every Service's names
#                                  (<svc>.<ns>.svc[.cluster.local]) with its ClusterIP to
#                                  STATE/node/dns/hosts and signals dnsmasq
#                                  (STATE/node/dns/dnsmasq.pid) to re-read it. dnsmasq has no upstream, so no name leaves the machine.
#   node-agent.sh dnsmasq STATE CMD...
#                                  runs dnsmasq (CMD) and starts it again whenever it ends, writing
#                                  its PID to STATE/node/dns/dnsmasq.pid and, to its log, how it ended
#                                  (exit status or signal). dnsmasq once died silently on a CI rehearsal
#                                  and nothing noticed; now every pod's name resolution comes back
#                                  within a second.
#   node-agent.sh volumes STATE    the efs-sc provisioner: for every Pending claim of class efs-sc,
#                                  a hostPath PersistentVolume (ReadWriteMany, Retain) bound to it,
#                                  backed by a folder STATE/node/volumes/pvc-<uid> that any uid may
#                                  write, as an EFS access point shared by the indexer and the search
#                                  pods would be.
#
# kubectl and KUBECONFIG come from the environment scripts/cluster.sh gives it; cluster.sh stops the
# agent's whole process group (the watch included).
set -uo pipefail

role=${1:?usage: node-agent.sh dns|dnsmasq|volumes STATE}
state=${2:?usage: node-agent.sh dns|dnsmasq|volumes STATE}
shift 2

sync_dns() {
  local hosts=$state/node/dns/hosts new
  new=$(kubectl get services -A -o jsonpath='{range .items[*]}{.spec.clusterIP} {.metadata.name}.{.metadata.namespace}.svc.cluster.local {.metadata.name}.{.metadata.namespace}.svc{"\n"}{end}' 2>/dev/null) || return 0
  new=$(printf '%s\n' "$new" | grep -E '^[0-9]' | LC_ALL=C sort)
  [ "$new" = "$(cat "$hosts" 2>/dev/null)" ] && return 0
  printf '%s\n' "$new" >"$hosts.tmp" && mv "$hosts.tmp" "$hosts"
  [ -f "$state/node/dns/dnsmasq.pid" ] && kill -HUP "$(cat "$state/node/dns/dnsmasq.pid")" 2>/dev/null
  return 0
}

# supervise_dnsmasq CMD...: runs CMD, and again each time it ends. A second between starts, so a
# dnsmasq that cannot start at all (its address taken) logs once a second rather than spinning.
# cluster.sh stops this loop's process group, dnsmasq with it.
supervise_dnsmasq() {
  local pid rc
  while :; do
    "$@" &
    pid=$!
    echo "$pid" >"$state/node/dns/dnsmasq.pid"
    wait "$pid"
    rc=$?
    if [ "$rc" -gt 128 ]; then
      echo "node-agent: dnsmasq (pid $pid) was killed by signal $((rc - 128)); starting it again" >&2
    else
      echo "node-agent: dnsmasq (pid $pid) exited with status $rc; starting it again" >&2
    fi
    sleep 1
  done
}

sync_volumes() {
  local ns name uid class size modes dir
  kubectl get pvc -A -o jsonpath='{range .items[?(@.status.phase=="Pending")]}{.metadata.namespace} {.metadata.name} {.metadata.uid} {.spec.storageClassName} {.spec.resources.requests.storage} {.spec.accessModes}{"\n"}{end}' 2>/dev/null |
  while read -r ns name uid class size modes; do
    [ "$class" = efs-sc ] || continue
    dir=$state/node/volumes/pvc-$uid
    mkdir -p "$dir" && chmod 0777 "$dir"
    cat <<PV | kubectl create -f - >/dev/null 2>&1
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pvc-$uid
  annotations: {pv.kubernetes.io/provisioned-by: zoekt-operator.dev/host-folder}
spec:
  capacity: {storage: "$size"}
  accessModes: $modes
  persistentVolumeReclaimPolicy: Retain
  storageClassName: efs-sc
  claimRef: {namespace: "$ns", name: "$name", uid: "$uid"}
  hostPath: {path: "$dir", type: Directory}
PV
  done
  return 0
}

case $role in
dns)     kind=services; sync=sync_dns; mkdir -p "$state/node/dns" ;;
dnsmasq) mkdir -p "$state/node/dns"; supervise_dnsmasq "$@" ;;
volumes) kind=persistentvolumeclaims; sync=sync_volumes; mkdir -p "$state/node/volumes" ;;
*) echo "node-agent: unknown role $role" >&2; exit 2 ;;
esac

while :; do
  $sync
  # A watch ends when the API server restarts (some tests restart it) or after its timeout; then
  # sync again and watch anew.
  kubectl get "$kind" -A --watch-only -o name --request-timeout=0 2>/dev/null |
    while read -r _; do
      while read -r -t 0.3 _; do :; done
      $sync
    done
  sleep 1
done
