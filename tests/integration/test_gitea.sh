#!/usr/bin/env bash
# The Gitea the repository-discovery tests and benchmarks run (scripts/gitea.sh), on this machine with
# no cluster: Gitea built from its Go module at the pinned version starts as nobody over HTTPS with a
# CA of its own; an organisation with a public, a private and an archived repository and a fork in a
# second organisation are listed through the API with upstream's pagination headers (X-Total-Count,
# Link), the private one only with the token; a rename and a delete change the listing; a repository
# is cloned and pushed to over HTTPS with the CA and the token; an organisation webhook delivers signed
# repository and push events to an HTTPS receiver on loopback whose CA it was given in DIR/trust/; and
# stop leaves no process behind.
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d)
# Gitea runs as nobody, who must reach its folder below.
chmod 711 "$TMP"
G=$TMP/gitea
GS=$ZK_ROOT/scripts/gitea.sh
on_exit "'$GS' stop '$G'; rm -rf '$TMP'"

if ! gitea_dir=$("$ZK_ROOT/scripts/upstream.sh" bin gitea 2>"$TMP/build.log"); then
  # The go command's last word says why (a proxy that refuses the module, a compile error).
  why=$(grep -v -e '^go: downloading' -e '^upstream: ' "$TMP/build.log" | tail -n 1)
  skip_suite "Gitea cannot be built from its Go module: ${why:-$(tail -n 1 "$TMP/build.log")}"
fi
. "$ZK_ROOT/scripts/versions.sh"
check "gitea is the pinned $gitea_version" bash -c "'$gitea_dir/gitea' --version | grep -q 'version $gitea_version '"

# The webhook receiver below serves HTTPS with a certificate from a CA of its own, which Gitea trusts
# because it is in DIR/trust/ when Gitea starts.
mkdir -p "$G/trust" "$TMP/receiver"
(
  cd "$TMP/receiver"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "/CN=test receiver CA" &&
    openssl req -new -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -out server.crt -extfile server.ext
) >/dev/null 2>&1 || bail "openssl could not make the receiver's certificate"
cp "$TMP/receiver/ca.crt" "$G/trust/receiver.pem"

t0=$(date +%s%N)
vars=$("$GS" start "$G" 2>"$TMP/start.err") || bail "gitea.sh start: $(tail -n 3 "$TMP/start.err" | tr '\n' ' ')"
echo "# started in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
eval "$vars"
for v in GITEA_URL GITEA_API GITEA_CA GITEA_TOKEN GITEA_USER GITEA_PASSWORD; do
  [ -n "${!v:-}" ] || bail "gitea.sh start printed no $v: $vars"
done
check "it serves HTTPS on this machine's address" \
  bash -c "[ '$GITEA_URL' = \"https://\$('$ZK_ROOT/scripts/node-ip.sh'):\$(cat '$G/port')\" ]"
check "its API answers the pinned version, with its own CA" \
  bash -c "curl -sf --cacert '$GITEA_CA' '$GITEA_API/version' | grep -q '\"version\":\"$gitea_version\"'"
check "its certificate is not trusted without that CA" \
  bash -c "! curl -s -o /dev/null --cacert /etc/ssl/certs/ca-certificates.crt '$GITEA_API/version'"
pid=$(cat "$G/gitea.pid")
check "it runs as nobody, leading a process group of its own" \
  bash -c "[ \"\$(ps -o user=,pgid= -p $pid | awk '{print \$1, \$2}')\" = 'nobody $pid' ]"

# api METHOD PATH: the body of an API answer as the administrator, headers in $TMP/headers.
api() { curl -sS --cacert "$GITEA_CA" -H "Authorization: token $GITEA_TOKEN" -D "$TMP/headers" -X "$1" "$GITEA_API$2"; }
header() { tr -d '\r' <"$TMP/headers" | awk -v h="$1" 'tolower($1) == tolower(h) ":" { sub(/^[^:]*: */, ""); print }'; }
# names PATH: the full names of the repositories a listing page holds, sorted, one line.
names() { api GET "$1" | python3 -c 'import json, sys; print(" ".join(sorted(r["full_name"] for r in json.load(sys.stdin))))'; }
# field REPO EXPR: a Python expression over the repository REPO's API object r.
field() { api GET "/repos/$1" | python3 -c "import json, sys; r = json.load(sys.stdin); print($2)"; }

"$GS" org "$G" acme && "$GS" org "$G" forks || bail "gitea.sh org failed"
"$GS" repo "$G" acme alpha --init && "$GS" repo "$G" acme beta --private && "$GS" repo "$G" acme gamma --archived ||
  bail "gitea.sh repo failed"
"$GS" fork "$G" acme alpha forks || bail "gitea.sh fork failed"
check "alpha has a first commit on main" [ "$(field acme/alpha 'r["empty"], r["default_branch"]')" = "False main" ]
check "beta is private and empty" [ "$(field acme/beta 'r["private"], r["empty"]')" = "True True" ]
check "gamma is archived" [ "$(field acme/gamma 'r["archived"]')" = True ]
check "forks/alpha is a fork of acme/alpha" [ "$(field forks/alpha 'r["fork"], r["parent"]["full_name"]')" = "True acme/alpha" ]

page1=$(names "/orgs/acme/repos?limit=2&page=1")
check "the listing counts all three (X-Total-Count)" [ "$(header X-Total-Count)" = 3 ]
link=$(header Link)
check "its Link header names the next and the last page" \
  bash -c "grep -q 'limit=2&page=2>; rel=\"next\"' <<<'$link' && grep -q 'limit=2&page=2>; rel=\"last\"' <<<'$link'"
page2=$(names "/orgs/acme/repos?limit=2&page=2")
check "the second page has no next" bash -c "! grep -q 'rel=\"next\"' <<<'$(header Link)'"
check "the two pages hold alpha, beta and gamma" \
  [ "$(echo $page1 $page2 | tr ' ' '\n' | sort | tr '\n' ' ')" = "acme/alpha acme/beta acme/gamma " ]
check "no ETag (a Gitea listing is fetched whole each time)" [ -z "$(header ETag)" ]
anon=$(curl -sS --cacert "$GITEA_CA" -D "$TMP/headers" "$GITEA_API/orgs/acme/repos?limit=50" |
  python3 -c 'import json, sys; print(" ".join(sorted(r["full_name"] for r in json.load(sys.stdin))))')
check "without the token the private one is not listed" \
  [ "$anon $(header X-Total-Count)" = "acme/alpha acme/gamma 2" ]
check "the fork is listed in its own organisation" [ "$(names "/orgs/forks/repos?limit=50")" = forks/alpha ]

"$GS" rename "$G" acme gamma delta || bail "gitea.sh rename failed"
check "a rename shows in the listing" [ "$(names "/orgs/acme/repos?limit=50")" = "acme/alpha acme/beta acme/delta" ]
"$GS" delete "$G" acme beta || bail "gitea.sh delete failed"
check "a delete shows in the listing" \
  [ "$(names "/orgs/acme/repos?limit=50") $(header X-Total-Count)" = "acme/alpha acme/delta 2" ]

# A receiver of webhook deliveries over HTTPS on loopback: each request's headers and body into a file
# pair.
mkdir "$TMP/hooks"
cat >"$TMP/receiver.py" <<'PY'
import http.server, os, ssl, sys
out = sys.argv[2]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()
        name = "%s/%04d" % (out, len(os.listdir(out)))
        with open(name + ".body", "wb") as f:
            f.write(body)
        with open(name + ".tmp", "w") as f:
            f.write(str(self.headers))
        os.rename(name + ".tmp", name + ".headers")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(sys.argv[3] + "/server.crt", sys.argv[3] + "/server.key")
server.socket = tls.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
rport=$("$ZK_ROOT/scripts/free-port.sh")
python3 "$TMP/receiver.py" "$rport" "$TMP/hooks" "$TMP/receiver" 2>"$TMP/receiver.err" &
on_exit "kill $!"
hook_id=$("$GS" hook "$G" acme "https://127.0.0.1:$rport/deliveries" 'a secret "quoted"') || bail "gitea.sh hook failed"
check "gitea.sh hook prints the hook's id" grep -Eqx "[0-9]+" <<<"$hook_id"
check "the organisation's hook is gitea, JSON, push and repository" bash -c \
  "curl -sf --cacert '$GITEA_CA' -H 'Authorization: token $GITEA_TOKEN' '$GITEA_API/orgs/acme/hooks/$hook_id' |
   python3 -c 'import json, sys; h = json.load(sys.stdin); sys.exit(not (h[\"type\"] == \"gitea\" and h[\"active\"] and
     h[\"config\"][\"content_type\"] == \"json\" and sorted(h[\"events\"]) == [\"push\", \"repository\"]))'"

# delivery EVENT: the file name (without extension) of the first delivery of EVENT.
delivery() { grep -l -i "^X-Gitea-Event: $1\$" "$TMP"/hooks/*.headers 2>/dev/null | head -n 1 | sed 's/\.headers$//'; }
# signed FILE: the delivery's X-Gitea-Signature is the HMAC-SHA256 of its body under the secret.
signed() {
  local want got
  want=$(openssl dgst -sha256 -hmac 'a secret "quoted"' -r "$1.body" | cut -d' ' -f1)
  got=$(tr -d '\r' <"$1.headers" | awk -F': ' 'tolower($1) == "x-gitea-signature" { print $2 }')
  [ -n "$got" ] && [ "$got" = "$want" ]
}
"$GS" repo "$G" acme epsilon || bail "gitea.sh repo failed"
eventually 20 bash -c "grep -qil '^X-Gitea-Event: repository' '$TMP'/hooks/*.headers" 2>/dev/null
d=$(delivery repository)
if [ -z "$d" ]; then
  fail "creating a repository delivers a repository event"
else
  check "creating a repository delivers a repository event, signed with the hook's secret" signed "$d"
  check "it names the new repository" bash -c \
    "python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); sys.exit(not (b[\"action\"] == \"created\" and
       b[\"repository\"][\"full_name\"] == \"acme/epsilon\"))' '$d.body'"
fi

# git over HTTPS with the CA and the token. GIT_SSL_CAINFO, not http.sslCAInfo: the environment of
# some machines sets GIT_SSL_CAINFO, which takes precedence over the configuration.
remote="https://$GITEA_USER:$GITEA_TOKEN@${GITEA_URL#https://}/acme/alpha.git"
check "alpha clones over HTTPS with the CA and the token" \
  env GIT_SSL_CAINFO="$GITEA_CA" git clone -q "$remote" "$TMP/alpha"
check "the clone has the first commit's README on main" \
  bash -c "[ -f '$TMP/alpha/README.md' ] && [ \"\$(git -C '$TMP/alpha' branch --show-current)\" = main ]"
check "a push to it is taken (Gitea's hooks call back to it over HTTPS)" bash -c \
  "cd '$TMP/alpha' && echo one >one.txt && git add one.txt &&
   git -c user.name=test -c user.email=test@example.invalid commit -qm one &&
   GIT_SSL_CAINFO='$GITEA_CA' git push -q origin main 2>'$TMP/push.err' || { cat '$TMP/push.err'; exit 1; }"
eventually 20 bash -c "grep -qil '^X-Gitea-Event: push' '$TMP'/hooks/*.headers" 2>/dev/null
d=$(delivery push)
if [ -n "$d" ]; then check "the push delivers a signed push event" signed "$d"; else fail "the push delivers a push event"; fi
check "git without the CA is refused" \
  bash -c "! GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt git ls-remote '$remote' >/dev/null 2>&1"

"$GS" stop "$G"
check "stop ends Gitea and its process group" bash -c "! ps -eo pgid= | grep -qx ' *$pid'"
check "no process of it is left" bash -c "! ps -eo args= | grep -v grep | grep -qF '$G/'"
check "its port is closed" bash -c "! curl -s -o /dev/null --max-time 2 --cacert '$GITEA_CA' '$GITEA_API/version'"
check "the folder stays" [ -f "$G/data/gitea.db" ]
finish
