# Sourced by the scripts that run servers of their own on this machine for tests and the demo, each in
# a session of its own (setsid) with the leader's PID in a file, over HTTPS with a certificate from a CA
# of its own: scripts/git-server.sh (nginx, fcgiwrap) and scripts/gitea.sh (Gitea).

# stop_group FILE [SECONDS]: ends the process group whose leader FILE names, everything the leader forked
# included, and removes FILE. What is still there after SECONDS (default 2) of SIGTERM gets SIGKILL:
# fcgiwrap ignores SIGTERM, and Gitea takes a few seconds to finish the requests in flight.
stop_group() {
  local pid tries=$(( ${2:-2} * 10 ))
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  rm -f "$1"
  kill -- "-$pid" 2>/dev/null || return 0
  for _ in $(seq "$tries"); do kill -0 -- "-$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  return 0
}

# server_cert DIR IP NAME: a CA of the server's own (DIR/ca.crt, its key DIR/ca.key, made once, named
# NAME) and a server certificate for the address IP (DIR/server.crt and server.key), made again when the
# one there names another address. Both last 30 days: the folders are a test's or a demo's. The keys are
# root's alone.
server_cert() {
  local dir=$1 ip=$2
  if [ ! -f "$dir/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 30 \
      -subj "/CN=$3" 2>/dev/null
  fi
  if ! openssl x509 -in "$dir/server.crt" -noout -checkip "$ip" 2>/dev/null | grep -q 'does match'; then
    openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/server.key" -out "$dir/server.csr" \
      -subj "/CN=$ip" 2>/dev/null
    printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$ip" >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -days 30 -out "$dir/server.crt" -extfile "$dir/server.ext" 2>/dev/null
  fi
  chmod 600 "$dir/ca.key" "$dir/server.key"
}
