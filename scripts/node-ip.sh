#!/usr/bin/env bash
# Prints this machine's own address, the one on the interface of its default route (ZK_NODE_IP
# overrides it): the local node's InternalIP, where the API server is advertised and where the test
# git server listens, so that pods reach both without leaving the machine.
set -euo pipefail
[ -n "${ZK_NODE_IP:-}" ] && { echo "$ZK_NODE_IP"; exit 0; }
dev=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit }}')
ip -4 -o addr show dev "${dev:-eth0}" scope global | awk '{ sub("/.*", "", $4); print $4; exit }'
