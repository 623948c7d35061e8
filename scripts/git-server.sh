#!/usr/bin/env bash
# A git server on this machine over HTTPS, as an organisation's GitHub Enterprise or GitLab would be
# seen from the cluster: `git http-backend` (through fcgiwrap) behind nginx, on the machine's own
# address (scripts/node-ip.sh) so that pods reach it, with a certificate from a CA of its own.
# Repositories under DIR/repos/private/ need HTTP basic credentials; the others are public.
#
#   scripts/git-server.sh start DIR     start it (DIR is its folder); prints the variables
#                                       GIT_URL (https://ADDR:PORT), GIT_CA (the CA's PEM file),
#                                       GIT_USER and GIT_PASSWORD, for `eval`
#   scripts/git-server.sh stop DIR      stop it (the folder stays)
#   scripts/git-server.sh repo DIR NAME make an empty bare repository DIR/repos/NAME.git (served as
#                                       GIT_URL/NAME.git; a NAME under private/ needs credentials)
set -euo pipefail

cmd=${1:?usage: git-server.sh start|stop|repo DIR}
dir=${2:?usage: git-server.sh start|stop|repo DIR}
root=$(cd "$(dirname "$0")/.." && pwd)

. "$(dirname "$0")/local-server.sh"

case $cmd in
start)
  ip=$("$root/scripts/node-ip.sh")
  mkdir -p "$dir/repos/private" "$dir/tmp"
  dir=$(cd "$dir" && pwd)
  # nginx's master runs as root and reads the certificate and its key before it starts the workers,
  # which run as www-data (the `user` line below) and need only the password file and fcgiwrap's
  # socket: those two are the group www-data's, the keys and the password root's alone.
  chmod 755 "$dir"
  server_cert "$dir" "$ip" "zoekt-operator test git CA"
  if [ ! -f "$dir/password" ]; then
    password=$(openssl rand -hex 12)
    echo "$password" >"$dir/password"
    printf 'git:%s\n' "$(openssl passwd -apr1 "$password")" >"$dir/htpasswd"
  fi
  chmod 600 "$dir/password"
  chgrp www-data "$dir/htpasswd"
  chmod 640 "$dir/htpasswd"
  port=$(cat "$dir/port" 2>/dev/null || "$root/scripts/free-port.sh")
  echo "$port" >"$dir/port"
  stop_group "$dir/fcgiwrap.pid"
  rm -f "$dir/fcgiwrap.sock"
  setsid fcgiwrap -c 4 -s "unix:$dir/fcgiwrap.sock" </dev/null >>"$dir/fcgiwrap.log" 2>&1 &
  echo $! >"$dir/fcgiwrap.pid"
  for _ in $(seq 50); do [ -S "$dir/fcgiwrap.sock" ] && break; sleep 0.1; done
  chgrp www-data "$dir/fcgiwrap.sock"
  chmod 660 "$dir/fcgiwrap.sock"
  backend() { # the FastCGI block shared by the public and the private location
    cat <<CONF
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
      fastcgi_param GIT_PROJECT_ROOT $dir/repos;
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param GIT_CONFIG_COUNT 1;
      fastcgi_param GIT_CONFIG_KEY_0 safe.directory;
      fastcgi_param GIT_CONFIG_VALUE_0 *;
      fastcgi_param PATH_INFO \$uri;
      fastcgi_param REMOTE_USER \$remote_user;
      fastcgi_pass unix:$dir/fcgiwrap.sock;
CONF
  }
  cat >"$dir/nginx.conf" <<CONF
daemon off;
user www-data www-data;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 128; }
http {
  access_log $dir/access.log;
  client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
  server {
    listen $ip:$port ssl;
    ssl_certificate $dir/server.crt;
    ssl_certificate_key $dir/server.key;
    location ~ ^/private/ {
      auth_basic "git";
      auth_basic_user_file $dir/htpasswd;
$(backend)
    }
    location / {
$(backend)
    }
  }
}
CONF
  stop_group "$dir/nginx.pid"
  setsid /usr/sbin/nginx -c "$dir/nginx.conf" -p "$dir" </dev/null >>"$dir/error.log" 2>&1 &
  for _ in $(seq 50); do
    curl -s -o /dev/null --max-time 1 --cacert "$dir/ca.crt" "https://$ip:$port/" && break
    sleep 0.1
  done
  echo "GIT_URL=https://$ip:$port GIT_CA=$dir/ca.crt GIT_USER=git GIT_PASSWORD=$(cat "$dir/password")"
  ;;
stop)
  stop_group "$dir/nginx.pid"
  stop_group "$dir/fcgiwrap.pid"
  ;;
repo)
  name=${3:?usage: git-server.sh repo DIR NAME}
  # HEAD names main, the branch the tests push, as a hosted repository's default branch would.
  git init -q --bare --initial-branch=main "$dir/repos/$name.git"
  # Served over http-backend: let it answer the dumb-protocol probes and receive pushes from tests.
  git --git-dir="$dir/repos/$name.git" config http.receivepack true
  ;;
*) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
