#!/usr/bin/env bash
# A real local Kubernetes cluster: a control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler) and one node (containerd, runc, the CNI plugins, kubelet, kube-proxy, cluster DNS, an
# efs-sc provisioner; scripts/node.sh), every upstream program built from its Go module at the version
# scripts/versions.sh pins (scripts/kube-tools.sh; KUBE_VERSION picks another pinned minor).
#
#   scripts/cluster.sh up                 start (idempotent: does nothing when it already answers)
#   scripts/cluster.sh down               stop every process it started, by PID, and remove what the
#                                         node added to the machine (interfaces, iptables, mounts)
#   scripts/cluster.sh status             exit 0 when it runs
#   scripts/cluster.sh load [IMAGE...]    import the project's images (scripts/images.sh names) into
#                                         the node's containerd, building what is missing
#   scripts/cluster.sh netpol-up|netpol-down  start or stop NetworkPolicy enforcement on the node
#                                         (kube-router's firewall; scripts/node.sh)
#   scripts/cluster.sh restart-apiserver  stop and start only the API server (watch resilience tests)
#   scripts/cluster.sh restart-node       stop the node as `down` does and start it again, keeping the
#                                         control plane (tests/integration/test_host_safety.sh)
#   scripts/cluster.sh user NAME [GROUP]  write .cluster/users/NAME.kubeconfig, a client-certificate
#                                         identity with no rights until a test binds some
#
# Ports: ZK_ETCD_PORT (32379, and the next one for peers), ZK_API_PORT (6443), ZK_KCM_PORT (10257);
# ZK_CLUSTER_DIR moves the state, so a second control plane can run beside the first. ZK_NODE=0 starts
# the control plane alone (no node: pods stay Pending). A machine has at most one node; a second
# plane that asks for one fails at once, naming the plane that has it. The API server listens on one
# address only (kube-apiserver takes a single --bind-address): loopback in a plane without a node; with
# a node, the machine's own address (scripts/node-ip.sh; ZK_NODE_IP overrides it), the one it
# advertises and pods reach through the `kubernetes` Service. Every kubeconfig names that address.
# State lives in .cluster/ (ignored by git): certificates, etcd data, logs, PIDs, the node's folders
# and the admin kubeconfig .cluster/kubeconfig. Binaries come from scripts/kube-tools.sh's cache,
# images from scripts/images.sh's.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state=${ZK_CLUSTER_DIR:-$root/.cluster}
bin=${ZK_CACHE:-/var/cache/zoekt-operator}/bin
etcd_port=${ZK_ETCD_PORT:-32379}
etcd_peer_port=$((etcd_port + 1))
api_port=${ZK_API_PORT:-6443}
kcm_port=${ZK_KCM_PORT:-10257}
pki=$state/pki
cache=${ZK_CACHE:-/var/cache/zoekt-operator}
# Wide enough for the 1,000-corpus benchmark (one Service each); the first address is `kubernetes`.
# The Service and pod ranges (scripts/node.sh) lie in 198.18.0.0/15, which RFC 2544 reserves for
# benchmark networks: no real network a machine sits on uses it, unlike 10.0.0.0/8.
service_cidr=198.18.0.0/16
service_ip=198.18.0.1
with_node=${ZK_NODE:-1}
# Where the API server listens, and so where every client is sent. Empty when a node is wanted and the
# machine has no address for it (`up` then stops and says so).
api_host=127.0.0.1
[ "$with_node" = 1 ] && api_host=$("$root/scripts/node-ip.sh" 2>/dev/null || true)
server=https://$api_host:$api_port

log() { echo "cluster: $*" >&2; }

alive() { [ -f "$state/$1.pid" ] && kill -0 "$(cat "$state/$1.pid")" 2>/dev/null; }

kubectl_quiet() { "$bin/kubectl" --kubeconfig "$state/kubeconfig" "$@" >/dev/null 2>&1; }

api_ready() {
  curl -fsS --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "$server/readyz" >/dev/null 2>&1
}

wait_for() { # wait_for SECONDS DESCRIPTION CMD...
  local secs=$1 what=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$end" ]; then log "timed out waiting for $what"; return 1; fi
    sleep 0.2
  done
}

sign() { # sign NAME SUBJECT [EXTFILE]: a key and a certificate signed by the cluster CA
  local name=$1 subj=$2 ext=${3:-}
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -out "$pki/$name.crt" ${ext:+-extfile "$ext"} 2>/dev/null
  rm -f "$pki/$name.csr"
}

write_kubeconfig() { # write_kubeconfig FILE USER CERT KEY
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $server
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $3
    client-key: $4
contexts:
- name: $2@local
  context: {cluster: local, user: $2}
current-context: $2@local
KC
}

# serving_cert NAME SUBJECT SANS: a server certificate for the names SANS, made again whenever they
# change (a new address). Returns 0 when it made one, so that its server can be restarted.
serving_cert() {
  local name=$1 subj=$2 sans=$3
  [ -f "$pki/$name.crt" ] && [ "$(cat "$pki/$name.sans" 2>/dev/null)" = "$sans" ] && return 1
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$sans" >"$pki/$name.ext"
  sign "$name" "$subj" "$pki/$name.ext"
  echo "$sans" >"$pki/$name.sans"
}

make_pki() {
  local sans="IP:127.0.0.1,DNS:localhost,IP:$service_ip,DNS:kubernetes,DNS:kubernetes.default"
  sans="$sans,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  [ "$with_node" = 1 ] && sans="$sans,IP:$api_host"
  mkdir -p "$pki"
  # The private keys are for root's processes alone.
  chmod 700 "$pki"
  if [ ! -f "$pki/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 \
      -subj "/CN=zoekt-operator-test-ca" 2>/dev/null
  fi
  if serving_cert serving "/CN=kube-apiserver" "$sans"; then stop apiserver; fi
  [ "$with_node" = 1 ] && node_pki
  if [ ! -f "$pki/admin.crt" ]; then
    sign admin "/O=system:masters/CN=admin"
    openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  fi
  # Written on every start: the address it names is the machine's, which may have changed.
  write_kubeconfig "$state/kubeconfig" admin "$pki/admin.crt" "$pki/admin.key"
}

start() { # start NAME CMD...: runs CMD detached, logging to NAME.log, recording NAME.pid
  local name=$1; shift
  # 9>&-: the servers must not inherit the lock (see below), or they would hold it for their lifetime.
  setsid "$@" >"$state/$name.log" 2>&1 < /dev/null 9>&- &
  echo $! >"$state/$name.pid"
}

start_etcd() {
  alive etcd && return 0
  start etcd "$bin/etcd" --name zk --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "zk=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync
  wait_for 30 etcd curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$etcd_port/health" 2>/dev/null
}

start_apiserver() {
  alive apiserver && return 0
  # Without a node the plane is reached on loopback only, which the API server may not publish as the
  # `kubernetes` Service's endpoint (refused since 1.3x): nothing in such a plane needs that endpoint.
  local extra=(--endpoint-reconciler-type=none)
  # With a node it talks to the kubelet (logs, exec, port-forward) as kube-apiserver-kubelet-client,
  # and checks the kubelet's serving certificate against the cluster CA (scripts/node.sh).
  [ "$with_node" = 1 ] &&
    extra=(--kubelet-client-certificate="$pki/kubelet-client.crt" --kubelet-client-key="$pki/kubelet-client.key"
           --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP)
  start apiserver "$bin/kube-apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
    --service-cluster-ip-range="$service_cidr" --secure-port="$api_port" --bind-address="$api_host" \
    --advertise-address="$api_host" --cert-dir="$pki" "${extra[@]}" \
    --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key" --client-ca-file="$pki/ca.crt" \
    --authorization-mode=Node,RBAC --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --allow-privileged=true
  wait_for 90 kube-apiserver api_ready
}

start_controller_manager() {
  alive controller-manager && return 0
  start controller-manager "$bin/kube-controller-manager" --kubeconfig="$state/kubeconfig" --leader-elect=false \
    --controllers=garbagecollector,cronjob,job,deployment,replicaset,disruption,namespace,serviceaccount-token,serviceaccount,root-ca-cert-publisher,resourcequota,$node_controllers \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --bind-address=127.0.0.1 --secure-port="$kcm_port"
}

# Two checkouts on one machine would fight over the plane's ports: the second fails at once and names
# the folder of the first, whose plane must stop (or whose ports must move: ZK_API_PORT, ZK_ETCD_PORT,
# ZK_KCM_PORT).
plane_claim() {
  local port f other
  for port in "$api_port" "$etcd_port" "$kcm_port"; do
    f=/run/zoekt-operator-port-$port.owner
    other=$(cat "$f" 2>/dev/null || true)
    if [ -n "$other" ] && [ "$other" != "$state" ] &&
       { [ -f "$other/apiserver.pid" ] && kill -0 "$(cat "$other/apiserver.pid")" 2>/dev/null ||
         [ -f "$other/etcd.pid" ] && kill -0 "$(cat "$other/etcd.pid")" 2>/dev/null; }; then
      log "port $port belongs to the plane in $other; stop it there (scripts/cluster.sh down) or set ZK_API_PORT, ZK_ETCD_PORT and ZK_KCM_PORT"
      exit 1
    fi
    echo "$state" >"$f"
  done
}

# The controllers a node needs: its lifecycle (taints, pod eviction), volumes, Service endpoints.
node_controllers=nodelifecycle,podgc,persistentvolume-binder,pv-protection,pvc-protection,endpoint,endpointslice,endpointslicemirroring

stop() { # stop NAME: SIGTERM, then SIGKILL after 10 s, to the process and everything it started
  local name=$1 pid
  [ -f "$state/$name.pid" ] || return 0
  pid=$(cat "$state/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    # start() made it the leader of a process group of its own (setsid).
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$state/$name.pid"
}

# Undoes what scripts/images.sh changed in binfmt_misc to run arm64 builds (its record: the boot id,
# then one word a line), newest first, and nothing it found as it was.
binfmt_restore() {
  local f=/run/zoekt-operator-binfmt.changed change
  [ -f "$f" ] || return 0
  if [ "$(head -n 1 "$f")" != "$(cat /proc/sys/kernel/random/boot_id)" ]; then rm -f "$f"; return 0; fi
  for change in $(tail -n +2 "$f" | tac); do
    case $change in
    enabled) echo 0 >/proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null || true ;;
    registered) update-binfmts --disable qemu-aarch64 >/dev/null 2>&1 || true ;;
    mounted) umount /proc/sys/fs/binfmt_misc 2>/dev/null || log "binfmt_misc stays mounted: it is in use" ;;
    esac
  done
  rm -f "$f"
}

. "$root/scripts/node.sh"

# One invocation at a time: two concurrent `up`s would both start an API server, the loser's PID
# would overwrite the winner's, and `down` would then leave the winner running.
mkdir -p "$state"
exec 9>"$state/.lock"
flock 9

case ${1:-} in
up)
  # A server binary rebuilt or re-linked since its process started (scripts/kube-tools.sh re-points
  # the links for another version) means the running process is the old build: restart it so the new
  # one is actually in use.
  # find -newer reads the link's own time (a re-pointed link), -nt its target's (a rebuilt binary).
  newer() { [ -f "$state/$2.pid" ] && { [ -n "$(find "$bin/$1" -maxdepth 0 -newer "$state/$2.pid")" ] ||
                                        [ "$bin/$1" -nt "$state/$2.pid" ]; }; }
  newer etcd etcd && { stop controller-manager; stop apiserver; stop etcd; }
  newer kube-apiserver apiserver && stop apiserver
  newer kube-controller-manager controller-manager && stop controller-manager
  # The objects an API server stored are not for an older one to read: a plane that changes
  # Kubernetes version (KUBE_VERSION) starts from an empty store. It is a test plane.
  kube_now=$("$bin/kubectl" version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n1)
  if [ -f "$state/kube-version" ] && [ "$(cat "$state/kube-version")" != "$kube_now" ]; then
    log "Kubernetes changes from $(cat "$state/kube-version") to $kube_now: stopping the plane and emptying its store"
    node_down; stop controller-manager; stop apiserver; stop etcd
    rm -rf "$state/etcd"
  fi
  # Every component was given the machine's address (kubeconfigs, the kubelet's and dnsmasq's
  # listening address, the certificates): when it changes, they all start again.
  if [ -f "$state/api-host" ] && [ "$(cat "$state/api-host")" != "$api_host" ] && alive apiserver; then
    log "the plane's address changes from $(cat "$state/api-host") to $api_host: restarting it"
    node_down; stop controller-manager; stop apiserver
  fi
  if alive apiserver && alive etcd && alive controller-manager && api_ready &&
     { [ "$with_node" != 1 ] || { alive kubelet && node_ready; }; }; then exit 0; fi
  for b in etcd kube-apiserver kube-controller-manager kubectl; do
    [ -x "$bin/$b" ] || { log "missing $bin/$b: run scripts/deps.sh (make deps)"; exit 1; }
  done
  [ -n "$api_host" ] || { log "no address for the node (set ZK_NODE_IP, or ZK_NODE=0 for no node)"; exit 1; }
  plane_claim
  mkdir -p "$state"
  echo "$kube_now" >"$state/kube-version"
  echo "$api_host" >"$state/api-host"
  make_pki
  start_etcd
  start_apiserver
  start_controller_manager
  # The API server creates the default namespace a few seconds after it first answers.
  wait_for 60 "the default namespace" kubectl_quiet get namespace default
  if [ "$with_node" = 1 ]; then
    node_up
    log "ready at $server (KUBECONFIG=$state/kubeconfig), node $node_name at $(node_ip)"
  else
    log "ready at $server (KUBECONFIG=$state/kubeconfig), no node"
  fi
  ;;
down)
  node_down
  stop controller-manager; stop apiserver; stop etcd
  binfmt_restore
  for port in "$api_port" "$etcd_port" "$kcm_port"; do
    if [ "$(cat "/run/zoekt-operator-port-$port.owner" 2>/dev/null)" = "$state" ]; then
      rm -f "/run/zoekt-operator-port-$port.owner"
    fi
  done
  log "stopped"
  ;;
netpol-up)
  alive kubelet || { log "the node is not running (scripts/cluster.sh up)"; exit 1; }
  node_netpol_up
  ;;
netpol-down)
  node_netpol_down
  ;;
load)
  # Images are built (or taken from the cache) for this machine's architecture and imported.
  shift
  alive containerd || { log "the node is not running (scripts/cluster.sh up)"; exit 1; }
  [ $# -gt 0 ] || set -- operator connector gateway zoekt
  node_import "$@"
  ;;
status) # exit 0 when the plane (and the node, unless ZK_NODE=0) runs
  alive apiserver && api_ready && { [ "$with_node" != 1 ] || alive kubelet; }
  ;;
restart-apiserver)
  stop apiserver
  start_apiserver
  ;;
restart-node)
  alive apiserver && api_ready || { log "the control plane is not running (scripts/cluster.sh up)"; exit 1; }
  node_down
  node_up
  ;;
user)
  name=${2:?usage: cluster.sh user NAME [GROUP]}
  group=${3:-}
  mkdir -p "$state/users"
  sign "user-$name" "${group:+/O=$group}/CN=$name"
  write_kubeconfig "$state/users/$name.kubeconfig" "$name" "$pki/user-$name.crt" "$pki/user-$name.key"
  echo "$state/users/$name.kubeconfig"
  ;;
*)
  sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
