#!/usr/bin/env bash
# A real Gitea on this machine, the code host the repository-discovery tests and benchmarks list
# organisations from and take webhooks from (Forgejo serves the same API). It is Gitea itself, built
# from its Go module at the version scripts/versions.sh pins (scripts/upstream.sh bin gitea), so the
# listing's pages, headers and webhook deliveries are upstream's, not a stand-in's. It serves HTTPS on
# the machine's own address (scripts/node-ip.sh), so that pods of the local cluster reach it as they
# would an organisation's Gitea, with a certificate from a CA of its own, and keeps its data in SQLite.
# Gitea refuses to run as root, so it runs as nobody.
#
#   scripts/gitea.sh start DIR            start it (DIR is its folder; a second start keeps the data);
#                                         prints, for `eval`, GITEA_URL (https://ADDR:PORT), GITEA_API
#                                         (GITEA_URL/api/v1), GITEA_CA (the CA's PEM file), GITEA_TOKEN
#                                         (an access token of the administrator, every scope), GITEA_USER
#                                         and GITEA_PASSWORD (the administrator)
#   scripts/gitea.sh stop DIR             stop it (the folder stays)
#   scripts/gitea.sh org DIR ORG          create the organisation ORG (public)
#   scripts/gitea.sh repo DIR ORG NAME [--private] [--archived] [--init]
#                                         create ORG/NAME, empty or (--init) with a first commit on main
#   scripts/gitea.sh fork DIR ORG NAME FORK_ORG
#                                         fork ORG/NAME into the organisation FORK_ORG (same name)
#   scripts/gitea.sh rename DIR ORG NAME NEWNAME
#   scripts/gitea.sh delete DIR ORG NAME
#   scripts/gitea.sh populate DIR ORG N   create N empty repositories ORG/r0001 to ORG/rNNNN, several at
#                                         a time; one that already exists counts as made
#   scripts/gitea.sh hook DIR ORG URL SECRET
#                                         add an organisation webhook to URL (type gitea, JSON, the push
#                                         and repository events, signed with SECRET); prints its id
#
# The commands after start talk to Gitea's REST API with the token, and read the variables from
# DIR/env, which start writes (root's alone: it holds the token and the password).
#
# What it changes is inside DIR and the one process it starts. In DIR: the CA and the server
# certificate with their keys, app.ini, the secrets Gitea signs with (secrets), env and auth.header
# (the token, for the commands above), port, trust/, gitea.out (what Gitea prints) and data/, owned by
# nobody (the database, the repositories, Gitea's log in data/log/). Gitea runs in a session of its
# own with its PID in DIR/gitea.pid; stop ends that whole process group, the git processes Gitea left
# running included, so nothing of it keeps running. DIR and the folders above it must be searchable by
# nobody (not under /root, nor inside a folder of mode 0700).
#
# Gitea trusts the system's CAs and every PEM file in DIR/trust/ (its own CA is put there, for its git
# hooks' calls back to it over HTTPS): a webhook receiver's CA put there before start is trusted for
# deliveries, which verify the receiver's certificate. Deliveries may go to loopback, private addresses,
# this machine's address and the local cluster's Service and pod addresses, and nowhere else.
set -euo pipefail

usage() { sed -n '10,27p' "$0" >&2; exit 2; }
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || usage
root=$(cd "$(dirname "$0")/.." && pwd)
# Gitea's user and group: nobody and nogroup on Debian.
uid=65534
# The local cluster's Service (198.18.0.0/16, scripts/cluster.sh) and pod (198.19.0.0/22,
# scripts/node.sh) addresses, which Gitea's builtin "private" leaves out (RFC 2544 reserves them).
cluster_cidr=198.18.0.0/15

# as_gitea CMD...: runs CMD as nobody with a clean environment, the one Gitea and its CLI run in.
as_gitea() {
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$dir/data/home" USER=nobody \
    LANG=C.UTF-8 GITEA_WORK_DIR="$dir/data" SSL_CERT_DIR="$dir/trust" \
    setpriv --reuid=$uid --regid=$uid --clear-groups "$@"
}

. "$(dirname "$0")/local-server.sh"

# name_ok WORD: an organisation or repository name Gitea takes, safe to put into JSON and URLs as is.
name_ok() {
  [[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]] || { echo "gitea.sh: not a valid name: $1" >&2; exit 2; }
}

# json_str TEXT: TEXT as a JSON string.
json_str() {
  local s=$1
  [[ $s != *[[:cntrl:]]* ]] || { echo "gitea.sh: control characters in $s" >&2; exit 2; }
  s=${s//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

load_env() {
  [ -f "$dir/env" ] || { echo "gitea.sh: $dir/env is missing: start Gitea first" >&2; exit 1; }
  . "$dir/env"
}

# api METHOD PATH [JSON]: one API call; prints the answer's body, and fails with it on an error status.
api() {
  local out code
  out=$(mktemp)
  code=$(curl -sS --cacert "$GITEA_CA" -H "@$dir/auth.header" -H 'Content-Type: application/json' \
    -X "$1" ${3:+--data "$3"} -o "$out" -w '%{http_code}' "$GITEA_API$2") || { rm -f "$out"; exit 1; }
  if [ "${code:0:1}" != 2 ]; then
    echo "gitea.sh: $1 $2: HTTP $code $(head -c 500 "$out")" >&2
    rm -f "$out"
    exit 1
  fi
  cat "$out"
  rm -f "$out"
}

case $cmd in
start)
  gitea_dir=$("$root/scripts/upstream.sh" bin gitea)
  ip=$("$root/scripts/node-ip.sh")
  mkdir -p "$dir/trust"
  dir=$(cd "$dir" && pwd)
  chmod 755 "$dir"
  server_cert "$dir" "$ip" "zoekt-operator test Gitea CA"
  cp "$dir/ca.crt" "$dir/trust/gitea-ca.pem"
  if [ ! -d "$dir/data" ]; then
    mkdir -p "$dir/data/home"
    chown -R $uid:$uid "$dir/data"
  fi
  as_gitea test -x "$gitea_dir/gitea" -a -r "$dir/ca.crt" -a -w "$dir/data" || {
    echo "gitea.sh: nobody cannot reach $gitea_dir/gitea or $dir: the folders above them must be searchable by all" >&2
    exit 1
  }
  # Secrets Gitea would otherwise generate and write into app.ini, made once so that a second start
  # keeps what the first one signed and encrypted.
  if [ ! -f "$dir/secrets" ]; then
    {
      echo "secret_key=$(as_gitea "$gitea_dir/gitea" generate secret SECRET_KEY)"
      echo "internal_token=$(as_gitea "$gitea_dir/gitea" generate secret INTERNAL_TOKEN)"
      echo "jwt_secret=$(as_gitea "$gitea_dir/gitea" generate secret JWT_SECRET)"
    } >"$dir/secrets.new"
    chmod 600 "$dir/secrets.new"
    mv "$dir/secrets.new" "$dir/secrets"
  fi
  . "$dir/secrets"
  port=$(cat "$dir/port" 2>/dev/null || "$root/scripts/free-port.sh")
  echo "$port" >"$dir/port"
  stop_group "$dir/gitea.pid" 15
  # app.ini, server.key and the secrets are readable by Gitea's group and by root only.
  cat >"$dir/app.ini" <<INI
APP_NAME = zoekt-operator test Gitea
RUN_USER = nobody
RUN_MODE = prod
WORK_PATH = $dir/data

[server]
PROTOCOL = https
HTTP_ADDR = $ip
HTTP_PORT = $port
DOMAIN = $ip
ROOT_URL = https://$ip:$port/
CERT_FILE = $dir/server.crt
KEY_FILE = $dir/server.key
STATIC_ROOT_PATH = $gitea_dir
APP_DATA_PATH = $dir/data
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = $dir/data/gitea.db
SQLITE_JOURNAL_MODE = WAL
SQLITE_TIMEOUT = 20000

[repository]
ROOT = $dir/data/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = $secret_key
INTERNAL_TOKEN = $internal_token
ALLOWED_HOST_LIST = loopback,private,$ip/32,$cluster_cidr

[oauth2]
JWT_SECRET = $jwt_secret

[service]
DISABLE_REGISTRATION = true

[webhook]
SKIP_TLS_VERIFY = false
DELIVER_TIMEOUT = 3

[indexer]
ISSUE_INDEXER_TYPE = db

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = file
LEVEL = info
ROOT_PATH = $dir/data/log
INI
  chgrp $uid "$dir/app.ini" "$dir/server.key"
  chmod 640 "$dir/app.ini" "$dir/server.key"
  url=https://$ip:$port
  : >>"$dir/gitea.out"
  setsid env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$dir/data/home" \
    USER=nobody LANG=C.UTF-8 GITEA_WORK_DIR="$dir/data" SSL_CERT_DIR="$dir/trust" \
    setpriv --reuid=$uid --regid=$uid --clear-groups "$gitea_dir/gitea" web --config "$dir/app.ini" \
    </dev/null >>"$dir/gitea.out" 2>&1 &
  echo $! >"$dir/gitea.pid"
  up=
  for _ in $(seq 300); do
    curl -sf -o /dev/null --max-time 1 --cacert "$dir/ca.crt" "$url/api/v1/version" && { up=1; break; }
    kill -0 "$(cat "$dir/gitea.pid")" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$up" ]; then
    echo "gitea.sh: Gitea did not answer on $url; the end of $dir/gitea.out and its log:" >&2
    tail -n 5 "$dir/gitea.out" "$dir/data/log/gitea.log" >&2 2>/dev/null || true
    stop_group "$dir/gitea.pid" 15
    exit 1
  fi
  # The administrator and its token, made once: their secrets stay in DIR/env for the next start.
  if [ ! -f "$dir/env" ]; then
    password=$(openssl rand -hex 12)
    cli=("$gitea_dir/gitea" --config "$dir/app.ini" admin user)
    as_gitea "${cli[@]}" create --username admin --password "$password" --email admin@example.invalid \
      --admin --must-change-password=false >/dev/null
    token=$(as_gitea "${cli[@]}" generate-access-token --username admin --token-name tests --scopes all --raw)
    {
      printf 'GITEA_URL=%q\n' "$url"
      printf 'GITEA_API=%q\n' "$url/api/v1"
      printf 'GITEA_CA=%q\n' "$dir/ca.crt"
      printf 'GITEA_TOKEN=%q\n' "$token"
      printf 'GITEA_USER=admin\n'
      printf 'GITEA_PASSWORD=%q\n' "$password"
    } >"$dir/env.new"
    # The API calls below read the token from this file, which keeps it out of the process list.
    printf 'Authorization: token %s\n' "$token" >"$dir/auth.header"
    chmod 600 "$dir/env.new" "$dir/auth.header"
    mv "$dir/env.new" "$dir/env"
  else
    # Only the address can have changed: the node's address or the port file.
    sed -i -e "s|^GITEA_URL=.*|GITEA_URL=$url|" -e "s|^GITEA_API=.*|GITEA_API=$url/api/v1|" "$dir/env"
  fi
  . "$dir/env"
  echo "GITEA_URL=$GITEA_URL GITEA_API=$GITEA_API GITEA_CA=$(printf %q "$GITEA_CA")" \
    "GITEA_TOKEN=$GITEA_TOKEN GITEA_USER=$GITEA_USER GITEA_PASSWORD=$GITEA_PASSWORD"
  ;;
stop)
  stop_group "$dir/gitea.pid" 15
  ;;
org)
  org=${3:?usage: gitea.sh org DIR ORG}
  name_ok "$org"
  load_env
  api POST /orgs "{\"username\":\"$org\",\"visibility\":\"public\"}" >/dev/null
  ;;
repo)
  org=${3:?usage: gitea.sh repo DIR ORG NAME [--private] [--archived] [--init]}
  name=${4:?usage: gitea.sh repo DIR ORG NAME [--private] [--archived] [--init]}
  name_ok "$org"; name_ok "$name"
  shift 4
  private=false archived="" init=false
  for a in "$@"; do
    case $a in
    --private) private=true ;;
    --archived) archived=1 ;;
    --init) init=true ;;
    *) echo "gitea.sh: unknown option $a" >&2; exit 2 ;;
    esac
  done
  load_env
  # With auto_init Gitea commits a README on the default branch; without, the repository is empty.
  api POST "/orgs/$org/repos" "{\"name\":\"$name\",\"private\":$private,\"auto_init\":$init,\"default_branch\":\"main\"}" >/dev/null
  # A repository is created unarchived; archiving is an edit of it.
  [ -z "$archived" ] || api PATCH "/repos/$org/$name" '{"archived":true}' >/dev/null
  ;;
fork)
  usage_fork="usage: gitea.sh fork DIR ORG NAME FORK_ORG"
  org=${3:?$usage_fork} name=${4:?$usage_fork} fork_org=${5:?$usage_fork}
  name_ok "$org"; name_ok "$name"; name_ok "$fork_org"
  load_env
  api POST "/repos/$org/$name/forks" "{\"organization\":\"$fork_org\"}" >/dev/null
  ;;
rename)
  usage_rename="usage: gitea.sh rename DIR ORG NAME NEWNAME"
  org=${3:?$usage_rename} name=${4:?$usage_rename} new=${5:?$usage_rename}
  name_ok "$org"; name_ok "$name"; name_ok "$new"
  load_env
  api PATCH "/repos/$org/$name" "{\"name\":\"$new\"}" >/dev/null
  ;;
delete)
  org=${3:?usage: gitea.sh delete DIR ORG NAME} name=${4:?usage: gitea.sh delete DIR ORG NAME}
  name_ok "$org"; name_ok "$name"
  load_env
  api DELETE "/repos/$org/$name" >/dev/null
  ;;
populate)
  org=${3:?usage: gitea.sh populate DIR ORG N} n=${4:?usage: gitea.sh populate DIR ORG N}
  name_ok "$org"
  [[ $n =~ ^[0-9]+$ ]] || { echo "gitea.sh: N must be a number, not $n" >&2; exit 2; }
  load_env
  width=4
  [ ${#n} -le 4 ] || width=${#n}
  out=$(mktemp)
  # Batches of 25 over one connection each, 8 batches at once: Gitea creates an empty repository in
  # about 50 ms, much of it waiting on SQLite, so requests in parallel keep both cores busy.
  for ((i = 1; i <= n; i++)); do printf "r%0${width}d\n" "$i"; done |
    xargs -r -n 25 -P 8 bash "$0" _batch "$dir" "$org" >"$out" || true
  # 201: made; 409: it was there already. Any other is tried once more, alone, which says why if it
  # fails again.
  again=$(awk '$1 != 201 && $1 != 409 { print $2 }' "$out")
  rm -f "$out"
  for name in $again; do
    api POST "/orgs/$org/repos" "{\"name\":\"$name\",\"default_branch\":\"main\"}" >/dev/null
  done
  ;;
_batch) # _batch DIR ORG NAME...: populate's worker; prints "STATUS NAME" for each repository
  org=$3
  shift 3
  load_env
  args=()
  for name in "$@"; do
    [ ${#args[@]} -eq 0 ] || args+=(--next)
    args+=(-sS --cacert "$GITEA_CA" -H "@$dir/auth.header" -H 'Content-Type: application/json' -o /dev/null
      -w '%{http_code}\n' --data "{\"name\":\"$name\",\"default_branch\":\"main\"}" "$GITEA_API/orgs/$org/repos")
  done
  paste -d ' ' <(curl "${args[@]}" || true) <(printf '%s\n' "$@")
  ;;
hook)
  usage_hook="usage: gitea.sh hook DIR ORG URL SECRET"
  org=${3:?$usage_hook} hook_url=${4:?$usage_hook} secret=${5:?$usage_hook}
  name_ok "$org"
  load_env
  body="{\"type\":\"gitea\",\"active\":true,\"events\":[\"push\",\"repository\"],\"config\":{\"url\":$(json_str "$hook_url"),\"content_type\":\"json\",\"secret\":$(json_str "$secret")}}"
  api POST "/orgs/$org/hooks" "$body" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p'
  ;;
*) usage ;;
esac
