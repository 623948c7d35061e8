#!/usr/bin/env bash
# The search pod as rendered, run for real on loopback: `zoekt-operator render` a corpus with a gateway
# token Secret, then start the Deployment's containers with exactly their rendered commands (binaries
# substituted, mounted paths mapped to prepared directories, as the containers' non-root user) and talk
# to nginx as an agent would. zoekt-webserver cannot be built here: tests/tools/zoekt-replay answers in
# its place, on the address the rendered zoekt-webserver listens on.
#
# The pod's ports are fixed by the rendered objects, so the test re-runs itself in private network, PID
# and mount namespaces (unshare) where they cannot clash with anything on the host and where no process
# can outlive the test. Without unshare it uses the host's loopback, when those ports are free.
#
# By default it runs twice: examples/corpus-org.yaml (a gateway token Secret: every route but /healthz,
# /readyz and /index-status needs a token) and examples/corpus-minimal.yaml (no Secret: an open gateway).
# Environment: SEARCH_POD_CORPUS (run for this corpus only), SEARCH_POD_SECRETS (the Secrets' shapes,
# default examples/secrets.yaml; keys are kept, values replaced by random tokens), SEARCH_POD_KEEP=1
# keeps the work directory (logs, plan, prepared volumes). See docs/search-pod.md.
if [ -z "${SEARCH_POD_NS:-}" ] && [ -z "${SEARCH_POD_CORPUS:-}" ]; then
  examples=${ZK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/examples
  status=0
  for c in corpus-org corpus-minimal; do
    SEARCH_POD_CORPUS=$examples/$c.yaml bash "$0" "$@" || status=1
  done
  exit $status
fi
if [ -z "${SEARCH_POD_NS:-}" ]; then
  if unshare --net --pid --fork --mount-proc true 2>/dev/null; then
    SEARCH_POD_NS=private exec unshare --net --pid --fork --kill-child --mount-proc bash "$0" "$@"
  fi
  export SEARCH_POD_NS=host
fi

source "$(dirname "$0")/lib.sh"
HERE=$ZK_ROOT/tests/integration/search_pod
source "$HERE/pod.sh"
OP=$ZK_BIN/zoekt-operator
CONNECTOR=$ZK_BIN/zoekt-connector
REPLAY=$ZK_ROOT/build/san/tests/tools/zoekt-replay
FIXTURES=$ZK_ROOT/tests/fixtures/zoekt
NGINX=${NGINX:-/usr/sbin/nginx}
CORPUS=$SEARCH_POD_CORPUS
SECRET_SHAPES=${SEARCH_POD_SECRETS:-$ZK_ROOT/examples/secrets.yaml}
SANITIZER_REPORT='ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|SUMMARY: (Address|Leak|Undefined)Sanitizer'

W=$(mktemp -d)
chmod 755 "$W"   # the containers' non-root users must reach the volumes below it
mkdir -p "$W/log" "$W/run"
chmod 1777 "$W/run"   # for the stand-in's port file
declare -A PID=()
# TERM first: on the host's namespaces (no unshare), a SIGKILLed nginx master would leave its workers
# holding the pod's ports for the next run.
stop_all() {
  local n
  for n in "${!PID[@]}"; do kill -TERM "${PID[$n]}" 2>/dev/null; done
  sleep 0.5
  for n in "${!PID[@]}"; do kill -KILL "${PID[$n]}" 2>/dev/null; done
}
on_exit stop_all
if [ -n "${SEARCH_POD_KEEP:-}" ]; then echo "# keeping $W"; else on_exit "rm -rf '$W'"; fi

echo "# namespaces: $SEARCH_POD_NS; corpus: $CORPUS"
for f in "$OP" "$CONNECTOR" "$REPLAY" "$NGINX"; do
  [ -x "$f" ] || bail "$f is built (make build/san/bin/zoekt-operator build/san/bin/zoekt-connector build/san/tests/tools/zoekt-replay)"
done
# The containers run as their rendered non-root users, who may not be able to reach the clone (it may
# sit under a private home directory such as /root): give them copies, as an image would.
mkdir -p "$W/img"
install -m 0755 "$CONNECTOR" "$W/img/zoekt-connector" && CONNECTOR=$W/img/zoekt-connector
install -m 0755 "$REPLAY" "$W/img/zoekt-replay" && REPLAY=$W/img/zoekt-replay
cp -r "$FIXTURES" "$W/img/fixtures" && chmod -R a+rX "$W/img" && FIXTURES=$W/img/fixtures
python3 -c 'import yaml' 2>/dev/null || bail "python3 with PyYAML is installed (apt-get install python3-yaml): it reads the rendered YAML"
if [ "$SEARCH_POD_NS" = private ]; then
  ip link set lo up || bail "the private network namespace's loopback comes up"
fi

# ---- 1. render, and read what the pod needs --------------------------------------------------------
"$OP" render -f "$CORPUS" >"$W/children.yaml" 2>"$W/render.err" ||
  bail "zoekt-operator render -f $(basename "$CORPUS") exits 0: $(head -c 400 "$W/render.err" | tr '\n' ' ')"
ok "zoekt-operator render -f $(basename "$CORPUS") exits 0"
yaml2json "$W/children.yaml" >"$W/children.json" || bail "the rendered output is YAML that PyYAML reads"
yaml2json "$CORPUS" >"$W/corpus.json"
[ "$(q "$W/children.json" '["Deployment","Service","ConfigMap"].every(k => d.some(o => o.kind === k))')" = true ] ||
  bail "render prints a Deployment, a Service and a ConfigMap"
ok "render prints a Deployment, a Service and a ConfigMap"
gw_secret=$(q "$W/corpus.json" 'd[0].spec.gateway?.tokenSecretRef?.name ?? ""')
echo "# gateway: ${gw_secret:-open (no spec.gateway.tokenSecretRef)}"
if [ -n "$gw_secret" ]; then
  check "the Deployment mounts the gateway Secret $gw_secret" \
    [ "$(q "$W/children.json" "d.find(o => o.kind === 'Deployment').spec.template.spec.volumes.some(v => v.secret?.secretName === '$gw_secret')")" = true ]
fi

# The Secrets the pod mounts, with the keys examples/secrets.yaml gives them and random values.
pod_secrets "$W/children.json" "$SECRET_SHAPES" >"$W/secrets.json"
TOKEN="" TOKEN2=""
if [ -n "$gw_secret" ]; then
  TOKEN=$(q "$W/secrets.json" "Object.values(d['$gw_secret'])[0]")
  TOKEN2=$(q "$W/secrets.json" "Object.values(d['$gw_secret']).slice(-1)[0]")
fi

# ---- 2. prepare the volumes and the commands --------------------------------------------------------
node "$HERE/pod.mjs" "$W/children.json" "$W/secrets.json" "$W" >"$W/plan.json" 2>"$W/plan.err" ||
  bail "pod.mjs prepares the pod: $(cat "$W/plan.err")"
nprob=$(q "$W/plan.json" 'd.problems.length')
check "the pod spec has no problem visible before running it$( [ "$nprob" != 0 ] && q "$W/plan.json" '": " + d.problems.join("; ")')" [ "$nprob" = 0 ]
for c in zoekt-webserver nginx connector; do
  [ "$(q "$W/plan.json" "d.containers.some(c => c.name === '$c')")" = true ] || bail "the Deployment has a container named $c"
done
# A container's rendered listen address: the value after FLAG in its command.
arg_after() { q "$W/plan.json" "(a => a[a.indexOf('$2') + 1] ?? '')(d.containers.find(c => c.name === '$1').renderedArgv)"; }
ZOEKT_ADDR=$(arg_after zoekt-webserver -listen)
CONN_ADDR=$(arg_after connector --listen)
HTTP_PORT=$(q "$W/plan.json" "d.containers.find(c => c.name === 'nginx').ports.http ?? ''")
check "zoekt-webserver listens on the pod's loopback only ($ZOEKT_ADDR)" [ "${ZOEKT_ADDR%:*}" = 127.0.0.1 ]
check "the connector listens on the pod's loopback only ($CONN_ADDR)" [ "${CONN_ADDR%:*}" = 127.0.0.1 ]
check "nginx declares the port named http ($HTTP_PORT)" [ -n "$HTTP_PORT" ]
ZOEKT_PORT=${ZOEKT_ADDR##*:}
CONN_PORT=${CONN_ADDR##*:}
# nginx.conf's upstreams must be where the other containers listen.
conf=$(q "$W/plan.json" "(a => a[a.indexOf('-c') + 1])(d.containers.find(c => c.name === 'nginx').argv)")
check "nginx.conf's zoekt upstream is zoekt-webserver's -listen" grep -qE "server +$ZOEKT_ADDR;" "$conf"
check "nginx.conf's connector upstream is the connector's --listen" grep -qE "server +$CONN_ADDR;" "$conf"
check "nginx.conf listens on the declared containerPort" grep -qE "listen +([^;]*:)?${HTTP_PORT}[ ;]" "$conf"
check "nginx and the connector are the containers that declare ports" \
  [ "$(q "$W/plan.json" 'd.containers.filter(c => Object.keys(c.ports).length).map(c => c.name).join(",")')" = nginx,connector ]
# The connector's /metrics, for Prometheus: its loopback port again, on the pod's address (the kubelet
# puts it in for $(POD_IP); pod.mjs stands 127.0.0.2 in for it), in a port named for a PodMonitor.
POD_IP=$(q "$W/plan.json" 'd.podIP')
METRICS_PORT=$(q "$W/plan.json" "String(d.containers.find(c => c.name === 'connector').ports.metrics ?? '')")
check "the connector declares the port named metrics, its --listen port ($METRICS_PORT)" [ "$METRICS_PORT" = "$CONN_PORT" ]
check "the connector serves /metrics alone on the pod's address (--metrics-listen $(arg_after connector --metrics-listen))" \
  [ "$(arg_after connector --metrics-listen)" = "\$(POD_IP):$METRICS_PORT" ]
check "the Service does not expose the metrics port" \
  [ "$(q "$W/children.json" "d.find(o => o.kind === 'Service').spec.ports.length")" = 1 ]
check "the Service sends its traffic to nginx's port" [ "$(q "$W/children.json" "(p => p === 'http' || p === $HTTP_PORT)(d.find(o => o.kind === 'Service').spec.ports[0].targetPort)")" = true ]

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$ZOEKT_PORT" "$CONN_PORT" "$HTTP_PORT"; do
  port_free "$p" || bail "port $p is free on the loopback ($SEARCH_POD_NS namespaces); the pod's ports are fixed by its rendered config"
done

# ---- 3. start the containers ------------------------------------------------------------------------
# zoekt-webserver: the replay server on the rendered -listen port.
run_container zoekt-webserver "$REPLAY" --fixtures "$FIXTURES" --port "$ZOEKT_PORT" --port-file "$W/run/zoekt.port"
readarray -d '' cargs < <(argv_of connector)
run_container connector "$CONNECTOR" "${cargs[@]}"
readarray -d '' nargs < <(argv_of nginx)
run_container nginx "$NGINX" "${nargs[@]}"
echo "# connector: ${cargs[*]}"
echo "# nginx: ${nargs[*]}"

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
up() { [ "$(code "$1")" != 000 ]; }
check "zoekt stand-in answers on $ZOEKT_ADDR" eventually 10 up "http://$ZOEKT_ADDR/api/list"
check "connector answers on $CONN_ADDR" eventually 10 up "http://$CONN_ADDR/healthz"
check "connector answers /metrics on $POD_IP:$METRICS_PORT" eventually 10 up "http://$POD_IP:$METRICS_PORT/metrics"
check "nginx answers on :$HTTP_PORT as uid $(q "$W/plan.json" "String(d.containers.find(c => c.name === 'nginx').uid)")" \
  eventually 10 up "http://127.0.0.1:$HTTP_PORT/healthz"
for n in zoekt-webserver connector nginx; do
  kill -0 "${PID[$n]}" 2>/dev/null || bail "$n is running: $(tail -n 20 "$W/log/$n.log")"
done

# ---- 4. the gateway, as clients see it ---------------------------------------------------------------
G=http://127.0.0.1:$HTTP_PORT
AUTH=()
[ -n "$TOKEN" ] && AUTH=(-H "Authorization: Bearer $TOKEN")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
mcp_post() { code -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data "$INIT" "$@" "$G/mcp"; }

check "GET /healthz is 200" [ "$(code "$G/healthz")" = 200 ]
s=$(curl -s -w '\n%{http_code}' --max-time 10 "$G/index-status")
check "GET /index-status without a token is 200 (got ${s##*$'\n'})" [ "${s##*$'\n'}" = 200 ]
repos=$(printf '%s' "${s%$'\n'*}" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{try{process.stdout.write(String(JSON.parse(t).repositories))}catch{process.stdout.write("not JSON: "+t.slice(0,200))}})')
check "/index-status reports repositories=3 (got $repos)" [ "$repos" = 3 ]
check "POST /index-status is refused (403)" [ "$(code -X POST "$G/index-status")" = 403 ]
check "/auth is internal to nginx (404 from outside)" [ "$(code "${AUTH[@]}" "$G/auth")" = 404 ]

# Names of repositories, branches and commits: only with a token where tokens are configured
# (docs/security.md, "What stays open"); counts and times stay open for probes.
names() { # names [CURL ARGS...] QUERY: the status and whether the body names the repository alpha
  local q=${*: -1} out
  out=$(curl -s -w '\n%{http_code}' --max-time 10 "${@:1:$#-1}" "$G/index-status$q")
  printf '%s %s' "${out##*$'\n'}" "$(printf '%s' "${out%$'\n'*}" | grep -c '"alpha"')"
}
if [ -n "$gw_secret" ]; then
  check "/index-status?repositories=all without a token is 401, naming nothing (got $(names '?repositories=all'))" \
    [ "$(names '?repositories=all')" = "401 0" ]
  check "/index-status?repositories=all with the token lists alpha (got $(names "${AUTH[@]}" '?repositories=all'))" \
    [ "$(names "${AUTH[@]}" '?repositories=all')" = "200 1" ]
  check "/index-status?maxAge=1s without a token counts the stale repositories and names none (got $(names '?maxAge=1s'))" \
    [ "$(names '?maxAge=1s')" = "200 0" ]
  check "/index-status?maxAge=1s with the token names them (got $(names "${AUTH[@]}" '?maxAge=1s'))" \
    [ "$(names "${AUTH[@]}" '?maxAge=1s')" = "200 1" ]
else
  check "/index-status?repositories=all on an open gateway lists alpha (got $(names '?repositories=all'))" \
    [ "$(names '?repositories=all')" = "200 1" ]
fi

if [ -n "$gw_secret" ]; then
  check "POST /mcp without a token is 401" [ "$(mcp_post)" = 401 ]
  check "POST /mcp with a wrong token is 401" [ "$(mcp_post -H "Authorization: Bearer wrong-$TOKEN")" = 401 ]
  check "POST /mcp with the token is 200" [ "$(mcp_post "${AUTH[@]}")" = 200 ]
  check "POST /mcp with the Secret's other key's token is 200" [ "$(mcp_post -H "Authorization: Bearer $TOKEN2")" = 200 ]
  check "a 401 from /mcp carries WWW-Authenticate: Bearer (MCP clients need the challenge)" \
    bash -c "curl -s -D - -o /dev/null --max-time 10 -X POST -H 'Content-Type: application/json' --data '{}' '$G/mcp' | grep -qi '^WWW-Authenticate: *Bearer'"
else
  check "POST /mcp without a token is 200 (open gateway)" [ "$(mcp_post)" = 200 ]
  check "the connector warns that it accepts every request" grep -q 'accept every request' "$W/log/connector.log"
fi

node "$HERE/mcp-client.mjs" "$G/mcp" "$TOKEN" needle >"$W/mcp.json" 2>"$W/mcp.err"
check "the MCP SDK client initializes, lists tools and calls search_code through nginx$( [ -s "$W/mcp.err" ] && echo ": $(head -c 400 "$W/mcp.err" | tr '\n' ' ')")" [ -s "$W/mcp.json" ]
if [ -s "$W/mcp.json" ]; then
  echo "# mcp: $(q "$W/mcp.json" 'JSON.stringify({protocolVersion: d.protocolVersion, server: d.server, tools: d.tools, repositories: d.search.repositories})')"
  check "tools/list has the 8 tools" [ "$(q "$W/mcp.json" "d.tools.join(',')")" = corpus_status,find_dependents,find_references,find_symbol,list_files,list_repositories,read_file,search_code ]
  check "tools/list has search_code and list_repositories" [ "$(q "$W/mcp.json" 'd.tools.includes("search_code") && d.tools.includes("list_repositories")')" = true ]
  check "search_code needle is not an error" [ "$(q "$W/mcp.json" 'd.search.isError')" = false ]
  check "search_code needle finds matches in alpha, beta and gamma" \
    [ "$(q "$W/mcp.json" 'd.search.repositories.join(",")')" = alpha,beta,gamma ]
  check "search_code shows the query that ran" [ "$(q "$W/mcp.json" 'd.search.text.split("\n")[0]')" = "Query: needle" ]
fi

# The connector's metrics: served on the pod's address alone, where a call made through nginx is
# counted, and never through the gateway (a /metrics there is Zoekt's path, behind the bearer check).
M=http://$POD_IP:$METRICS_PORT
mcp_call() { # mcp_call BODY [SESSION]: POSTs BODY to /mcp through nginx; prints the headers and the body
  curl -s -D - --max-time 30 -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    ${2:+-H "Mcp-Session-Id: $2"} "${AUTH[@]}" --data "$1" "$G/mcp"
}
sid=$(mcp_call "$INIT" | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *//p')
mcp_call '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_code","arguments":{"query":"needle"}}}' \
  "$sid" >/dev/null
metrics=$(curl -s --max-time 10 "$M/metrics")
check "the connector's /metrics counts a search_code call made through nginx" \
  grep -qE '^zoekt_connector_tool_calls_total\{tool="search_code"\} [1-9]' <<<"$metrics"
check "the metrics port serves nothing else: POST /mcp is 404 there" \
  [ "$(code -X POST -H 'Content-Type: application/json' --data "$INIT" "${AUTH[@]}" "$M/mcp")" = 404 ]
check "the metrics port serves nothing else: /index-status is 404 there" [ "$(code "$M/index-status")" = 404 ]
for who in "without a token" "${TOKEN:+with the token}"; do
  [ -n "$who" ] || continue
  args=(); [ "$who" != "without a token" ] && args=("${AUTH[@]}")
  check "GET /metrics through nginx $who does not reach the connector's metrics" \
    bash -c "! curl -s --max-time 10 ${args[*]:+$(printf '%q ' "${args[@]}")} '$G/metrics' | grep -q zoekt_connector_"
done

body=$(curl -s --max-time 10 "${AUTH[@]}" -H 'Content-Type: application/json' --data '{"Q":"needle"}' "$G/api/search")
check "/api/search${TOKEN:+ with the token} returns Zoekt's JSON with files" \
  [ "$(printf '%s' "$body" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{let n=-1;try{const r=JSON.parse(t).Result;n=(r.Files??r.FileMatches??[]).length}catch{}process.stdout.write(String(n))})')" -gt 0 ]
check "/api/list${TOKEN:+ with the token} is 200" [ "$(code "${AUTH[@]}" --data '{}' "$G/api/list")" = 200 ]
if [ -n "$gw_secret" ]; then
  check "/api/search without a token is 401" [ "$(code -H 'Content-Type: application/json' --data '{"Q":"needle"}' "$G/api/search")" = 401 ]
  check "/ (Zoekt's web UI) without a token is 401" [ "$(code "$G/")" = 401 ]

  # A rotated Secret, as the kubelet updates a mounted one: new values in a new timestamped directory, then
  # `..data` swapped in one rename. The connector must take the new token and drop the old one, unrestarted.
  tokvol=$(q "$W/children.json" "d.find(o => o.kind === 'Deployment').spec.template.spec.volumes.find(v => v.secret?.secretName === '$gw_secret').name")
  tokmode=$(q "$W/children.json" "String((d.find(o => o.kind === 'Deployment').spec.template.spec.volumes.find(v => v.secret?.secretName === '$gw_secret').secret.defaultMode ?? 420).toString(8))")
  fsg=$(q "$W/plan.json" 'String(d.fsGroup ?? "")')
  NEW_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  vd=$W/vol/$tokvol
  old=$(readlink "$vd/..data")
  new=..$(date -u +%Y_%m_%d_%H_%M_%S.%N)
  mkdir "$vd/$new"
  for k in $(q "$W/secrets.json" "Object.keys(d['$gw_secret']).join(' ')"); do
    printf '%s' "$NEW_TOKEN" >"$vd/$new/$k"; chmod "$tokmode" "$vd/$new/$k"
  done
  [ -n "$fsg" ] && chgrp -R "$fsg" "$vd/$new"
  ln -s "$new" "$vd/..data_tmp" && mv -T "$vd/..data_tmp" "$vd/..data" && rm -rf "${vd:?}/$old"
  accepted() { [ "$(mcp_post -H "Authorization: Bearer $1")" = 200 ]; }
  check "after the Secret is rotated, the new token is accepted within 12 s" eventually 12 accepted "$NEW_TOKEN"
  check "after the Secret is rotated, the old token is refused (401)" [ "$(mcp_post "${AUTH[@]}")" = 401 ]
fi

# ---- 5. the probes the Deployment declares -----------------------------------------------------------
# kubelet: an httpGet probe passes on 200..399; an exec probe when the command exits 0 (it runs in the
# container, so here as the container's user).
nprobes=0
while IFS=$'\t' read -r cname kind type target; do
  nprobes=$((nprobes + 1))
  case $type in
  httpGet)
    c=$(code "http://127.0.0.1:$target")
    check "$cname $kind probe GET :$target answers 2xx/3xx (got $c)" test "$c" -ge 200 -a "$c" -lt 400 ;;
  exec)
    uid=$(q "$W/plan.json" "String(d.containers.find(c => c.name === '$cname').uid ?? 0)")
    gid=$(q "$W/plan.json" "String(d.containers.find(c => c.name === '$cname').gid ?? 0)")
    readarray -d '' pcmd < <(q "$W/plan.json" "d.containers.find(c => c.name === '$cname').probes['$kind'].exec.map(a => a + '\\0').join('')")
    # A probe that runs the connector's own program runs the build under test.
    [ "$cname" = connector ] && [ "${pcmd[0]}" = zoekt-connector ] && pcmd[0]=$CONNECTOR
    check "$cname $kind probe exec '${pcmd[*]}' exits 0" \
      timeout 10 setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "${pcmd[@]}" ;;
  tcpSocket)
    check "$cname $kind probe tcp :$target connects" bash -c "exec 3<>/dev/tcp/127.0.0.1/$target" ;;
  esac
done < <(q "$W/plan.json" 'd.containers.flatMap(c => Object.entries(c.probes).map(([k, p]) => [c.name, k,
  Object.keys(p)[0], p.httpGet ? p.httpGet.port + p.httpGet.path : p.tcpSocket ? String(p.tcpSocket.port) : ""].join("\t"))).join("\n") + "\n"')
check "the Deployment declares probes ($nprobes)" [ "$nprobes" -gt 0 ]
# What the readiness probe means: nginx's /readyz is zoekt-webserver's own /readyz (200 once the shards
# at its start are loaded, not /healthz, which answers as soon as one is), passed through.
direct=$(curl -s -w ' %{http_code}' --max-time 10 "http://$ZOEKT_ADDR/readyz")
via=$(curl -s -w ' %{http_code}' --max-time 10 "$G/readyz")
health=$(curl -s -w ' %{http_code}' --max-time 10 "http://$ZOEKT_ADDR/healthz")
check "/readyz through nginx is zoekt-webserver's /readyz (status and body), not its /healthz" \
  test "$direct" = "$via" -a "$via" != "$health"

# ---- 6. stop as the kubelet does, and look for leftovers ---------------------------------------------
for n in "${!PID[@]}"; do kill -TERM "${PID[$n]}" 2>/dev/null; done
declare -A RC=()
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1")" = Z ]; }
for n in "${!PID[@]}"; do
  # A grace period of 10 s, as a short terminationGracePeriodSeconds; then SIGKILL, counted as failed.
  eventually 10 gone "${PID[$n]}" || kill -KILL "${PID[$n]}" 2>/dev/null
  wait "${PID[$n]}"; RC[$n]=$?
done
check "the connector exits 0 on SIGTERM (got ${RC[connector]})" [ "${RC[connector]}" = 0 ]
check "nginx exits 0 on SIGTERM (got ${RC[nginx]})" [ "${RC[nginx]}" = 0 ]
check "the zoekt stand-in exits 0 on SIGTERM (got ${RC[zoekt-webserver]})" [ "${RC[zoekt-webserver]}" = 0 ]
check "no sanitizer report in the connector's log" bash -c "! grep -qE '$SANITIZER_REPORT' '$W/log/connector.log'"
check "no sanitizer report in the zoekt stand-in's log" bash -c "! grep -qE '$SANITIZER_REPORT' '$W/log/zoekt-webserver.log'"
check "nginx logged no [emerg], [alert] or [crit]" bash -c "! grep -qE '\[(emerg|alert|crit)\]' '$W/log/nginx.log'"
for n in "${!PID[@]}"; do
  if [ "${RC[$n]}" != 0 ] || grep -qE "$SANITIZER_REPORT|\[(emerg|alert|crit)\]" "$W/log/$n.log"; then
    echo "# ---- $n log (last 30 lines)"; tail -n 30 "$W/log/$n.log" | sed 's/^/#   /'
  fi
done
if [ "$SEARCH_POD_NS" = private ]; then
  # In the private PID namespace this shell is PID 1: every other process but ps itself is a leftover.
  left=$(ps -e -o pid=,comm= | awk -v me="$$" '$1 != 1 && $1 != me && $2 != "ps" && $2 != "awk" && $2 != "bash"')
else
  left=$(for n in "${!PID[@]}"; do kill -0 "${PID[$n]}" 2>/dev/null && echo "$n"; done)
fi
check "no process of the pod is left${left:+: $(tr "\n" " " <<<"$left")}" [ -z "$left" ]
PID=()

finish
