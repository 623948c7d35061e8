# The local cluster's node, sourced by scripts/cluster.sh (which defines state, bin, pki, cache, log,
# start, stop, alive, wait_for, sign and write_kubeconfig): containerd 2, runc and the CNI bridge
# plugins, kubelet, kube-proxy and kube-scheduler, all built from their Go modules (scripts/upstream.sh),
# dnsmasq from Debian for cluster DNS, and scripts/node-agent.sh for DNS records and efs-sc volumes.
# docs/cluster.md records why each setting below is what it is.
#
# A node takes machine-wide things (the kubelet's port, iptables, a bridge, /proc/sys settings), so
# one machine has one: node_claim refuses a second plane at once and names the first.
#
# Everything it adds is removed by node_down: processes by PID (and the pods' shims), the pods'
# network namespaces, the bridge, the iptables chains of kube-proxy, the kubelet and this script (by
# name), mounts under the node's folders, and the two sysctls it changed (restored to what they were).

node_name=zk-node
pod_cidr=198.19.0.0/22
bridge=zk0
node_dir=$state/node
ctr_sock=$node_dir/containerd.sock
owner_file=/run/zoekt-operator-node.owner

node_ip() { "$root/scripts/node-ip.sh"; }

# ctr warns on every call that cgroup v1 is deprecated; the warning is about the machine, not the call.
ctr_() { "$bin/ctr" --address "$ctr_sock" --namespace k8s.io "$@" 2> >(grep -v "DEPRECATION: The support for cgroup v1" >&2); }
ctr_ready() { ctr_ version >/dev/null 2>&1; }

node_claim() {
  if [ -f "$owner_file" ]; then
    local other
    other=$(cat "$owner_file")
    if [ "$other" != "$state" ] && [ -f "$other/kubelet.pid" ] && kill -0 "$(cat "$other/kubelet.pid")" 2>/dev/null; then
      log "this machine's node belongs to the plane in $other; stop it there first (scripts/cluster.sh down)"
      exit 1
    fi
    # A node whose processes were killed without `down` (a machine handed on, a killed session)
    # leaves its pods' network namespaces on the bridge, which would answer for addresses the new
    # node hands out again.
    if [ "$other" != "$state" ] && [ -d "$other/node" ]; then
      log "removing what the stopped node of $other left behind"
      node_scrub "$other/node"
    fi
  fi
  echo "$state" >"$owner_file"
}

node_pki() {
  mkdir -p "$node_dir"
  [ -f "$pki/node.crt" ] || sign node "/O=system:nodes/CN=system:node:$node_name"
  write_kubeconfig "$node_dir/kubelet.kubeconfig" "system:node:$node_name" "$pki/node.crt" "$pki/node.key"
  # The API server's identity towards the kubelet (kubectl logs, exec and port-forward go through it):
  # a plain user whose rights there come from the ClusterRoleBinding to system:kubelet-api-admin that
  # node_up applies, as kubeadm sets it up. Earlier versions of this script made it a member of
  # system:masters, which passes every authorization check; such a certificate is made again.
  if [ ! -f "$pki/kubelet-client.crt" ] ||
     openssl x509 -in "$pki/kubelet-client.crt" -noout -subject | grep -q system:masters; then
    sign kubelet-client "/CN=kube-apiserver-kubelet-client"
    stop apiserver
  fi
  # The kubelet's serving certificate, signed by the cluster CA for the node's address, which the API
  # server verifies (--kubelet-certificate-authority) instead of trusting a self-signed one.
  if serving_cert kubelet-serving "/CN=system:node:$node_name" "IP:$(node_ip),DNS:$node_name"; then
    stop kubelet
  fi
}

node_sysctls() { # remember the two settings (and the module) changed here so that node_down can put them back
  [ -f "$node_dir/sysctl.saved" ] || {
    echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)" >"$node_dir/sysctl.saved"
    if [ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && modprobe br_netfilter 2>/dev/null; then
      echo "module=br_netfilter" >>"$node_dir/sysctl.saved"
    fi
    echo "bridge=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" >>"$node_dir/sysctl.saved"
  }
  # Pod to ClusterIP to a pod on the same bridge is routed on the host; kube-proxy's rules must see
  # bridged traffic.
  echo 1 >/proc/sys/net/ipv4/ip_forward
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
}

# Traffic stays on this machine: nothing from a pod leaves except to another pod or to this host,
# and a packet to a Service address that kube-proxy did not translate (no endpoints yet) is refused
# here instead of following the default route off the machine. Same for pod addresses before the
# bridge exists.
node_guard() {
  iptables -N ZK-NODE-GUARD 2>/dev/null || iptables -F ZK-NODE-GUARD
  iptables -A ZK-NODE-GUARD -s "$pod_cidr" -d "$pod_cidr" -j RETURN
  iptables -A ZK-NODE-GUARD -s "$pod_cidr" -j REJECT
  iptables -A ZK-NODE-GUARD -d "$service_cidr" -j REJECT
  # A translated packet keeps the interface of its first route in OUTPUT, so only untranslated ones
  # can be judged by interface.
  iptables -A ZK-NODE-GUARD -d "$pod_cidr" ! -o "$bridge" -m conntrack ! --ctstate DNAT -j REJECT
  for chain in OUTPUT FORWARD; do
    iptables -C "$chain" -j ZK-NODE-GUARD 2>/dev/null || iptables -I "$chain" 1 -j ZK-NODE-GUARD
  done
}

node_config() {
  local ip=$1
  mkdir -p "$node_dir/cni" "$node_dir/dns" "$node_dir/volumes"
  # containerd 2's configuration format. Its content store is its own folder: containerd 1.x's
  # metadata of earlier versions of this script is not carried over.
  cat >"$node_dir/containerd.toml" <<TOML
version = 3
root = "$cache/containerd2"
state = "$node_dir/containerd"
[grpc]
  address = "$ctr_sock"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  # Imported beforehand (node_import): there is no registry to pull it from.
  sandbox = "$("$root/scripts/images.sh" ref pause)"
[plugins.'io.containerd.cri.v1.runtime']
  # root here may lack CAP_SYS_RESOURCE, so no sandbox may lower its oom_score_adj.
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = "$bin/runc"
      SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$bin/cni"]
    conf_dir = "$node_dir/cni"
TOML
  cat >"$node_dir/cni/10-zk.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "zk", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$node_dir/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
CNI
  # Pods with dnsPolicy Default get this file: cluster DNS only, no resolver off the machine.
  echo "nameserver $ip" >"$node_dir/resolv.conf"
  # Kubernetes 1.35 and later refuse cgroup v1 unless told otherwise; this machine kind runs hybrid
  # cgroup v1 (cgroup2 only at /sys/fs/cgroup/unified), where a kubelet must be allowed to start.
  local cgroup_v1=false
  [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || cgroup_v1=true
  cat >"$node_dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$ctr_sock
failCgroupV1: $( [ $cgroup_v1 = true ] && echo false || echo true )
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
# As a real cluster's kubelet: a client certificate of the cluster CA or a token the API server
# vouches for (TokenReview), and every request authorized by the API server (SubjectAccessReview).
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
clusterDNS: [$ip]
clusterDomain: cluster.local
resolvConf: $node_dir/resolv.conf
failSwapOn: false
serializeImagePulls: false
# Imported images cannot be pulled again: never collect them, and never evict for a full disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
YAML
  cat >"$node_dir/proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $state/kubeconfig}
hostnameOverride: $node_name
mode: iptables
clusterCIDR: $pod_cidr
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
# Zero leaves the kernel's conntrack settings alone (this machine's are not ours to change).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
}

node_import() { # node_import NAME...: this machine's images of NAME into containerd, unless there
  local name file ref_ key
  for name in "$@"; do
    file=$("$root/scripts/images.sh" archive "$name" "$(dpkg --print-architecture)")
    ref_=$("$root/scripts/images.sh" ref "$name")
    key=$(basename "$file" .tar)
    # The archive's cache key, kept as a label, tells an image imported earlier from the same inputs.
    ctr_ images ls "name==$ref_" 2>/dev/null | grep -qF "zoekt.key=$key" && continue
    log "importing $ref_ into the node"
    ctr_ images import "$file" >/dev/null
    ctr_ images label "$ref_" "zoekt.key=$key" >/dev/null
  done
}

node_up() {
  local ip
  ip=$(node_ip)
  [ -n "$ip" ] || { log "no address for the node (set ZK_NODE_IP)"; exit 1; }
  for b in kubelet kube-proxy kube-scheduler; do
    [ -x "$bin/$b" ] || { log "missing $bin/$b: run scripts/deps.sh (make deps)"; exit 1; }
  done
  node_claim
  # Whatever an earlier node left on this machine (killed rather than stopped, or run from another
  # root such as a chroot) goes first: its bridge would keep its pods' addresses answering.
  alive containerd || node_scrub "$node_dir"
  mkdir -p "$node_dir"
  node_config "$ip"
  node_sysctls
  node_guard
  if ! alive containerd; then
    # Its shims (containerd-shim-runc-v2) are found on PATH.
    start containerd env PATH="$bin:$PATH" "$bin/containerd" --config "$node_dir/containerd.toml"
    wait_for 30 containerd ctr_ready
  fi
  node_import pause
  if ! alive scheduler; then
    start scheduler "$bin/kube-scheduler" --kubeconfig="$state/kubeconfig" --leader-elect=false \
      --bind-address=127.0.0.1 --secure-port=0
  fi
  if ! alive kubelet; then
    start kubelet "$bin/kubelet" --config="$node_dir/kubelet.yaml" --kubeconfig="$node_dir/kubelet.kubeconfig" \
      --hostname-override="$node_name" --node-ip="$ip" --root-dir="$node_dir/kubelet"
  fi
  if ! alive proxy; then
    start proxy "$bin/kube-proxy" --config="$node_dir/proxy.yaml"
  fi
  if ! alive dnsmasq; then
    touch "$node_dir/dns/hosts"
    # It stays root: the hosts file lives in the checkout, which may sit in a folder only root can
    # enter (/root), and dnsmasq re-reads it on every change.
    # Supervised: node-agent.sh starts it again whenever it ends, and logs how it ended.
    start dnsmasq "$root/scripts/node-agent.sh" dnsmasq "$state" dnsmasq --keep-in-foreground --user=root --log-facility=- --no-resolv --no-hosts \
      --addn-hosts="$node_dir/dns/hosts" --listen-address="$ip" --bind-interfaces --domain-needed \
      --local=/cluster.local/
  fi
  for role in dns volumes; do
    alive "agent-$role" || start "agent-$role" env PATH="$bin:$PATH" KUBECONFIG="$state/kubeconfig" \
      "$root/scripts/node-agent.sh" "$role" "$state"
  done
  kubectl_quiet apply -f - <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: efs-sc}
provisioner: zoekt-operator.dev/host-folder
reclaimPolicy: Retain
volumeBindingMode: Immediate
---
# What the API server may ask of the kubelet (logs, exec, port-forward, stats), and nothing else.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: zk:kube-apiserver-kubelet-client}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:kubelet-api-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}
YAML
  wait_for 120 "node $node_name to be Ready" node_ready
  # The not-ready taint goes when the node lifecycle controller sees it Ready; be sure it did.
  wait_for 60 "the node's not-ready taint to go" node_untainted
}

node_ready() {
  [ "$("$bin/kubectl" --kubeconfig "$state/kubeconfig" get node "$node_name" \
      -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

node_untainted() {
  ! "$bin/kubectl" --kubeconfig "$state/kubeconfig" get node "$node_name" -o jsonpath='{.spec.taints[*].key}' 2>/dev/null |
    grep -q not-ready
}

node_down() {
  # Pods first, while containerd still runs: stopping a sandbox is what runs the CNI plugin's DEL
  # (the pod's veth, its address, its network namespace).
  if alive containerd; then
    local ids
    ids=$(ctr_ tasks ls -q 2>/dev/null || true)
    for id in $ids; do ctr_ tasks kill -s KILL "$id" >/dev/null 2>&1 || true; done
  fi
  stop agent-dns; stop agent-volumes; stop dnsmasq; stop scheduler; stop kubelet
  if alive containerd; then
    local ids
    sleep 1
    ids=$(ctr_ tasks ls -q 2>/dev/null || true)
    for id in $ids; do ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true; done
    ids=$(ctr_ containers ls -q 2>/dev/null || true)
    for id in $ids; do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  stop proxy
  stop netpol
  node_scrub "$node_dir"
  [ "$(cat "$owner_file" 2>/dev/null)" = "$state" ] && rm -f "$owner_file"
  return 0
}

# node_scrub DIR: removes what the node whose folder is DIR put on the machine, once its processes
# are gone: the pods' shims and network namespaces, the bridge, the iptables chains, the mounts under
# DIR, and the sysctls it changed (put back as they were).
node_scrub() {
  local dir=$1 ns v
  # Shims outlive containerd by design; these are the node's when they name its socket.
  pkill -KILL -f "containerd-shim-runc-v2 .*-address $dir/containerd.sock" 2>/dev/null || true
  node_unguard
  if ip link show "$bridge" >/dev/null 2>&1; then
    node_netns_scrub
    ip link delete "$bridge"
  fi
  # Mounts under the node's folders (the kubelet's volumes, containerd's sandboxes), deepest first.
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  if [ -f "$dir/sysctl.saved" ]; then
    v=$(sed -n 's/^ip_forward=//p' "$dir/sysctl.saved")
    [ -n "$v" ] && echo "$v" >/proc/sys/net/ipv4/ip_forward
    v=$(sed -n 's/^bridge=//p' "$dir/sysctl.saved")
    [ -n "$v" ] && [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] && echo "$v" >/proc/sys/net/bridge/bridge-nf-call-iptables
    # A module loaded here goes again (modprobe -r refuses while something uses it).
    grep -qx module=br_netfilter "$dir/sysctl.saved" && { modprobe -r br_netfilter 2>/dev/null || true; }
    rm -f "$dir/sysctl.saved"
  fi
  rm -rf "$dir/cni-ipam"
  return 0
}

# Network namespaces the CNI plugin made for sandboxes that were killed rather than stopped: those
# named cni-* whose veth's other end is a port of the node's bridge (`eth0@ifN`: N is that end's index
# here). Any other namespace, whatever its name or addresses, belongs to someone else and stays.
node_netns_scrub() {
  local ports ns peer
  ports=" $(ip -o link show master "$bridge" | awk -F': ' '{ printf "%s ", $1 }')"
  for ns in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
    for peer in $(ip -n "$ns" -o link show type veth 2>/dev/null | sed -n 's/^[0-9]*: [^@]*@if\([0-9]*\):.*/\1/p'); do
      case $ports in *" $peer "*) ip netns delete "$ns" 2>/dev/null || true; break ;; esac
    done
  done
}

# Removes the node's iptables chains by name, with the rules that jump to them: this script's
# (ZK-NODE-*), the kubelet's (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) and those of
# kube-proxy in iptables mode (its fixed chains, and one KUBE-SVC-, KUBE-SEP-, KUBE-EXT-, KUBE-FW- or
# KUBE-SVL- chain per Service or endpoint, named by a 16-character hash). Any other chain, KUBE- or
# not, belongs to someone else and stays. `kube-proxy --cleanup` is not used: it also flushes every
# IPVS service on the machine, destroys ipsets and deletes nftables tables, whoever made them.
node_chains='^(ZK-NODE-[A-Z-]+|KUBE-FIREWALL|KUBE-KUBELET-CANARY|KUBE-IPTABLES-HINT'
node_chains+='|KUBE-(SERVICES|EXTERNAL-SERVICES|NODEPORTS|POSTROUTING|MARK-MASQ|FORWARD|PROXY-FIREWALL|PROXY-CANARY)'
# mawk, Debian's awk, has no {16}: the hash's sixteen characters are spelled out.
node_chains+="|KUBE-(SVC|SEP|EXT|FW|SVL)-$(printf '[A-Z0-9]%.0s' {1..16}))\$"
node_unguard() { node_unchain "$node_chains"; node_netpol_scrub; }

# node_unchain RE: removes the chains whose whole name matches RE, with the rules that jump to them.
# The kubelet and kube-proxy make theirs for IPv6 too, where the machine has it.
node_unchain() {
  local re=$1 ipt t chain chains
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle; do
      { "$ipt" -t "$t" -S 2>/dev/null | awk -v re="$re" '$1 == "-A" && $(NF - 1) == "-j" && $NF ~ re' || true; } |
        while read -r _ c rest; do eval "$ipt -t $t -D $c $rest" 2>/dev/null || true; done
      chains=$("$ipt" -t "$t" -S 2>/dev/null | awk -v re="$re" '$1 == "-N" && $2 ~ re { print $2 }')
      # All are emptied before any goes: a chain cannot be deleted while another still jumps to it.
      for chain in $chains; do "$ipt" -t "$t" -F "$chain" 2>/dev/null || true; done
      for chain in $chains; do "$ipt" -t "$t" -X "$chain" 2>/dev/null || true; done
    done
  done
}

# kube-router's NetworkPolicy controller enforces NetworkPolicies on the node while a suite asks for it
# (`scripts/cluster.sh netpol-up`, test_node_netpol.sh): a host process beside kube-proxy, with the
# router and the service proxy off. Its iptables chains and ipsets, named below, go when it stops and
# with the node; `kube-router --cleanup-config` is not used, since it also clears the machine's IPVS
# services, whoever made them.
h16=$(printf '[A-Z0-9]%.0s' {1..16})
netpol_chains="^(KUBE-ROUTER-(INPUT|FORWARD|OUTPUT)|KUBE-NWPLCY-(DEFAULT|$h16)|KUBE-POD-FW-$h16)\$"
netpol_sets="^(KUBE-(SRC|DST)-$h16|inet6?:KUBE-(SRC|DST)-$h16|kube-router-[a-z-]+)\$"
node_netpol_up() {
  local dir port
  alive netpol && return 0
  dir=$("$root/scripts/upstream.sh" bin kube-router) || { log "kube-router cannot be built"; return 1; }
  port=$("$root/scripts/free-port.sh")
  start netpol "$dir/kube-router" --run-firewall=true --run-router=false --run-service-proxy=false \
    --kubeconfig="$state/kubeconfig" --hostname-override="$node_name" \
    --service-cluster-ip-range="$service_cidr" --health-port="$port" --metrics-port=0
  wait_for 60 "kube-router's first sync of the NetworkPolicies" curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"
}
node_netpol_down() { stop netpol; node_netpol_scrub; }
node_netpol_scrub() {
  local set
  node_unchain "$netpol_chains"
  command -v ipset >/dev/null || return 0
  for set in $(ipset list -n 2>/dev/null | grep -E "$netpol_sets"); do ipset destroy "$set" 2>/dev/null || true; done
}
