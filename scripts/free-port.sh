#!/usr/bin/env bash
# Prints a loopback TCP port for a test server to listen on: below the kernel's ephemeral range, so
# that no outgoing connection (the API server's to etcd, kubectl's, curl's) can be holding it as its
# local port by the time the server binds, and with no socket of any state on it now.
set -euo pipefail
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || ephemeral_low=32768
low=20000
[ "$ephemeral_low" -gt $((low + 1000)) ] || low=10000
while :; do
  p=$(( low + RANDOM % (ephemeral_low - low) ))
  ss -tanH "( sport = :$p )" 2>/dev/null | grep -q . || { echo "$p"; exit 0; }
done
