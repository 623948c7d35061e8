#!/usr/bin/env bash
# What the local node's stop removes from the machine is its own and nothing else's. Someone else's
# iptables chain (one named like kube-proxy's, KUBE-), a network namespace named and addressed as the
# node's pods' are, and the rules that jump to them, survive the node stopping and starting
# (scripts/cluster.sh restart-node, the `down` and `up` of the node), while the network namespace of
# one of the node's own pods, killed with it, goes. The test git server's keys are root's alone. The
# suite leaves the plane up, as the suites after it need it. See docs/security.md.
source "$(dirname "$0")/lib.sh"

"$ZK_ROOT/scripts/cluster.sh" status >/dev/null 2>&1 ||
  skip_suite "the local node is not running (scripts/cluster.sh up without ZK_NODE=0)"
T=$(mktemp -d /tmp/zk-host-test.XXXXXX)
chmod 755 "$T" # nginx's workers (www-data) reach the git server's files through it
# The git server's PID files live in T: it is stopped before T goes.
on_exit "'$ZK_ROOT/scripts/git-server.sh' stop '$T/git'; rm -rf '$T'"

# ---- the git server's secrets -------------------------------------------------------------------------
vars=$("$ZK_ROOT/scripts/git-server.sh" start "$T/git") && eval "$vars"
mode() { stat -c '%a %U:%G' "$T/git/$1"; }
quiet() { "$@" >/dev/null 2>&1; }
check "the git server's TLS key is root's alone ($(mode server.key))" test "$(mode server.key)" = "600 root:root"
check "its CA key is root's alone ($(mode ca.key))" test "$(mode ca.key)" = "600 root:root"
check "the password file is root's alone ($(mode password))" test "$(mode password)" = "600 root:root"
check "htpasswd is readable by nginx's workers only ($(mode htpasswd))" test "$(mode htpasswd)" = "640 root:www-data"
check "fcgiwrap's socket is open to nginx's workers only ($(mode fcgiwrap.sock))" \
  test "$(mode fcgiwrap.sock)" = "660 root:www-data"
"$ZK_ROOT/scripts/git-server.sh" repo "$T/git" private/r
git init -q -b main "$T/src"
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m init
git -C "$T/src" push -q "$T/git/repos/private/r.git" main
clone() { GIT_SSL_CAINFO=$GIT_CA GIT_TERMINAL_PROMPT=0 git clone -q "$1" "$T/clone-$2" 2>/dev/null; }
check "a private repository is still served with the credentials" \
  clone "https://$GIT_USER:$GIT_PASSWORD@${GIT_URL#https://}/private/r.git" with
if clone "$GIT_URL/private/r.git" without; then fail "and refused without them"; else ok "and refused without them"; fi

# ---- someone else's iptables chains and network namespace ---------------------------------------------
foreign_ns=cni-foreign-test
# Removed however the suite ends (before a node restart that failed, too).
on_exit "iptables -D FORWARD -j FOREIGN-TEST; iptables -F FOREIGN-TEST; iptables -X FOREIGN-TEST"
on_exit "iptables -t nat -D PREROUTING -j KUBE-FOREIGN-TEST; iptables -t nat -F KUBE-FOREIGN-TEST; iptables -t nat -X KUBE-FOREIGN-TEST"
on_exit "ip netns delete $foreign_ns"
iptables -N FOREIGN-TEST && iptables -A FOREIGN-TEST -j RETURN && iptables -A FORWARD -j FOREIGN-TEST ||
  { fail "a foreign chain can be planted"; finish; exit 1; }
iptables -t nat -N KUBE-FOREIGN-TEST && iptables -t nat -A KUBE-FOREIGN-TEST -j RETURN &&
  iptables -t nat -A PREROUTING -j KUBE-FOREIGN-TEST || { fail "a foreign KUBE- chain can be planted"; finish; exit 1; }
# An address inside the node's pod range (198.19.0.0/22), as a pod's would be, on a veth of its own
# (both ends inside): only a veth whose other end is a port of the node's bridge makes a namespace the
# node's. It is made as containerd makes a pod's (a namespace bound onto a file in /run/netns), since
# `ip netns add` would also make /run/netns a mount point of its own, which would outlive the suite.
mkdir -p /run/netns && touch "/run/netns/$foreign_ns" && unshare --net="/run/netns/$foreign_ns" true &&
  ip -n "$foreign_ns" link add fg0 type veth peer name fg1 &&
  ip -n "$foreign_ns" addr add 198.19.0.250/32 dev fg0 && ip -n "$foreign_ns" link set fg0 up ||
  { fail "a foreign network namespace can be planted"; finish; exit 1; }

# ---- one of the node's own pods, so that its bridge and a pod namespace exist --------------------------
NS=$(new_namespace host-safety) || { fail "a namespace"; finish; exit 1; }
on_exit "kubectl delete namespace $NS --wait=false"
before=$(ip netns list | awk '{ print $1 }' | sort)
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: idle}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 65535, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: pause
    image: $("$ZK_ROOT/scripts/images.sh" ref pause)
    imagePullPolicy: Never
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
YAML
check "the node runs a pod" quiet kubectl -n "$NS" wait --for=condition=Ready pod/idle --timeout=120s
own_ns=$(comm -13 <(echo "$before") <(ip netns list | awk '{ print $1 }' | sort) | grep '^cni-' | head -n 1)
check "the pod has a network namespace of its own ($own_ns)" test -n "$own_ns"

# ---- the node stops and starts ------------------------------------------------------------------------
"$ZK_ROOT/scripts/cluster.sh" restart-node >"$T/restart.log" 2>&1
check "the node stops and starts again" quiet "$ZK_ROOT/scripts/cluster.sh" status
check "the foreign filter chain survives" quiet iptables -S FOREIGN-TEST
check "the rule that jumps to it survives" quiet iptables -C FORWARD -j FOREIGN-TEST
check "the foreign KUBE- chain in nat survives" quiet iptables -t nat -S KUBE-FOREIGN-TEST
check "the rule that jumps to it survives" quiet iptables -t nat -C PREROUTING -j KUBE-FOREIGN-TEST
check "the foreign network namespace survives, address and all" \
  bash -c "ip -n $foreign_ns -o addr show dev fg0 | grep -q 'inet 198.19.0.250/32'"
check "the killed pod's own network namespace is gone" bash -c "! ip netns list | grep -qw '$own_ns'"
check "the node's guard chain is back" quiet iptables -S ZK-NODE-GUARD
check "the node takes pods again" quiet kubectl -n "$NS" wait --for=condition=Ready pod/idle --timeout=120s ||
  tail -20 "$T/restart.log"
finish
