#!/usr/bin/env bash
# The CodeSearchCorpus CRD on the real control plane: it installs, `kubectl explain` teaches the API,
# defaults are applied, the schema and its CEL rules reject invalid objects (with the rules' messages,
# on client- and server-side apply, within the cost budget at 2000 repositories), the printer columns
# and the status subresource work (including `kubectl wait --for=condition=Fresh`), and the examples
# are valid.
set -u
source "$(dirname "$0")/lib.sh"

CRD=$ZK_ROOT/crds/codesearch.dev_codesearchcorpora.yaml

# kubectl, retried while the shared API server is briefly away (another test may be restarting it);
# client-side validation is off so that the server's schema is what accepts or rejects.
kubectl() {
  local out rc
  for _ in $(seq 1 60); do
    out=$(command kubectl "$@" 2>&1)
    rc=$?
    grep -qE 'connection refused|failed to download openapi|connection reset|EOF$' <<<"$out" || break
    sleep 0.5
  done
  [ -n "$out" ] && printf '%s\n' "$out"
  return $rc
}
export -f kubectl
eventually 30 kubectl get --raw /readyz >/dev/null 2>&1
check "the CRD applies" kubectl apply -f "$CRD"
check "the CRD is established" kubectl wait --for=condition=Established crd/codesearchcorpora.codesearch.dev --timeout=30s
explained() { kubectl explain csc.spec.repositories 2>/dev/null | grep -q "Where to clone from"; }
# The OpenAPI document is republished a few seconds after a CRD changes.
check "kubectl explain csc.spec.repositories describes the fields" eventually 60 explained
check "kubectl explain reaches nested fields" bash -c "kubectl explain csc.spec.storage.onDelete | grep -q 'Retain keeps'"
check "the short name and category resolve" bash -c "kubectl api-resources --api-group=codesearch.dev -o wide | grep -E 'csc .*codesearch'"

ns=$(new_namespace crd)
on_exit "kubectl delete namespace $ns --wait=false"
tmp=$(mktemp -d)
on_exit "rm -rf '$tmp'"

corpus() { # corpus NAME SPEC-JSON: a corpus manifest
  printf '{"apiVersion":"codesearch.dev/v1alpha1","kind":"CodeSearchCorpus","metadata":{"name":"%s","namespace":"%s"},"spec":%s}' "$1" "$ns" "$2"
}
accepted() { corpus "$1" "$2" >"$tmp/$1.json" && kubectl apply --validate=false -f "$tmp/$1.json" >/dev/null 2>&1; }
# rejected NAME SPEC-JSON FIELD: the API server refuses the object and names FIELD, list indices and all.
rejected() {
  local out
  corpus "$1" "$2" >"$tmp/$1.json"
  out=$(kubectl create --validate=false --dry-run=server -f "$tmp/$1.json" 2>&1) && return 1
  grep -qF "$3" <<<"$out" || { echo "# expected $3 in: $out"; return 1; }
}

check "a minimal corpus is accepted" accepted min '{"repositories":[{"url":"https://github.com/o/r"}]}'
got() { kubectl get csc min -n "$ns" -o jsonpath="$1"; }
check "schedule defaults to nightly" test "$(got '{.spec.schedule}')" = "0 3 * * *"
check "storage defaults to efs-sc, 100Gi, Retain" test "$(got '{.spec.storage.storageClassName}/{.spec.storage.size}/{.spec.storage.onDelete}')" = "efs-sc/100Gi/Retain"
check "architecture defaults to arm64" test "$(got '{.spec.webserver.architecture}')" = arm64
check "freshness.maxAge defaults to 36h" test "$(got '{.spec.freshness.maxAge}')" = 36h
check "poll.interval defaults to 5m" test "$(got '{.spec.poll.interval}')" = 5m
check "connector limits default" test "$(got '{.spec.connector.maxFiles}/{.spec.connector.contextLines}/{.spec.connector.searchTimeoutSeconds}/{.spec.connector.listTimeoutSeconds}')" = "30/2/30/10"
check "gateway port defaults to 8080" test "$(got '{.spec.gateway.port}')" = 8080

R='"repositories":[{"url":"https://github.com/o/r"}]'
check "no repositories: rejected" rejected r1 '{}' 'spec.repositories'
check "an empty repository list: rejected" rejected r2 '{"repositories":[]}' 'spec.repositories'
check "an http URL: rejected" rejected r3 '{"repositories":[{"url":"http://github.com/o/r"}]}' 'spec.repositories[0].url'
check "a URL with a space: rejected" rejected r4 '{"repositories":[{"url":"https://h/a b"}]}' 'spec.repositories[0].url'
check "a bad branch: rejected" rejected r5 '{"repositories":[{"url":"https://h/a","branches":["a b"]}]}' 'spec.repositories[0].branches[0]'
check "a bad schedule: rejected" rejected r6 "{$R,\"schedule\":\"every night\"}" 'spec.schedule'
check "an unknown onDelete policy: rejected" rejected r7 "{$R,\"storage\":{\"onDelete\":\"Keep\"}}" 'spec.storage.onDelete'
check "an unknown architecture: rejected" rejected r8 "{$R,\"webserver\":{\"architecture\":\"s390x\"}}" 'spec.webserver.architecture'
check "a privileged port: rejected" rejected r9 "{$R,\"gateway\":{\"port\":80}}" 'spec.gateway.port'
check "maxFiles above 200: rejected" rejected r10 "{$R,\"connector\":{\"maxFiles\":500}}" 'spec.connector.maxFiles'
check "a malformed maxAge: rejected" rejected r11 "{$R,\"freshness\":{\"maxAge\":\"36 hours\"}}" 'spec.freshness.maxAge'
check "an extra flag without a dash: rejected" rejected r12 "{$R,\"indexer\":{\"extraFlags\":[\"rm\"]}}" 'spec.indexer.extraFlags[0]'
check "a Secret reference without a name: rejected" rejected r13 "{$R,\"gitCredentialsSecretRef\":{}}" 'spec.gitCredentialsSecretRef.name'
check "a bad size: rejected" rejected r14 "{$R,\"storage\":{\"size\":\"lots\"}}" 'spec.storage.size'
check "an unknown codeHost: rejected" rejected r16 '{"repositories":[{"url":"https://h/a","codeHost":"forgejo"}]}' 'spec.repositories[0].codeHost'
check "an http webURL: rejected" rejected r17 '{"repositories":[{"url":"https://h/a","codeHost":"gitea","webURL":"http://h/a"}]}' 'spec.repositories[0].webURL'
check "a webURL with a fragment: rejected" rejected r18 '{"repositories":[{"url":"https://h/a","codeHost":"gitea","webURL":"https://h/a#x"}]}' 'spec.repositories[0].webURL'
check "a codeHost with an https webURL: accepted" accepted codehost '{"repositories":[{"url":"git@h:o/a.git","codeHost":"gitea","webURL":"https://h/o/a"}]}'
check "sources without repositories: accepted" accepted src1 '{"sources":[{"host":"github","org":"acme","include":["acme/*"]}],"discovery":{"interval":"10m","grace":"0"}}'
check "neither repositories nor sources: rejected" rejected r19 '{"sources":[]}' 'give spec.repositories, spec.sources or both'
check "an unknown code host in sources: rejected" rejected r20 '{"sources":[{"host":"bitbucket","org":"a"}]}' 'spec.sources[0].host'
check "an http source url: rejected" rejected r21 '{"sources":[{"host":"gitea","url":"http://g.example.com","org":"a"}]}' 'spec.sources[0].url'
check "a malformed discovery interval: rejected" rejected r22 "{$R,\"discovery\":{\"interval\":\"ten minutes\"}}" 'spec.discovery.interval'
many=$(python3 -c 'import json; print(json.dumps({"repositories":[{"url":"https://h/r%d" % i} for i in range(2001)]}))')
check "2001 repositories: rejected" rejected r15 "$many" 'spec.repositories'
many=$(python3 -c 'import json; print(json.dumps({"repositories":[{"url":"https://h/r%d" % i} for i in range(2000)]}))')
check "2000 repositories: accepted" accepted big "$many"

# CEL rules (x-kubernetes-validations): each bad corpus is refused by `kubectl apply`, client-side and
# server-side, with the rule's message at the field's path; a corpus at the rule's edge is admitted.
apply_out() { # apply_out MODE FILE: kubectl apply (MODE csa or ssa), output on stdout
  if [ "$1" = ssa ]; then kubectl apply --server-side --validate=false -f "$2" 2>&1; else kubectl apply --validate=false -f "$2" 2>&1; fi
}
# refused NAME SPEC-JSON FIELD MESSAGE: both applies fail, naming FIELD and quoting MESSAGE.
refused() {
  local mode out rc=0
  corpus "$1" "$2" >"$tmp/$1.json"
  for mode in csa ssa; do
    if out=$(apply_out $mode "$tmp/$1.json"); then
      echo "# $mode apply of $1 was accepted: $out"; kubectl delete csc "$1" -n "$ns" --ignore-not-found >/dev/null; rc=1; continue
    fi
    grep -qF "$3" <<<"$out" || { echo "# $mode: expected field $3 in: $out"; rc=1; }
    grep -qF "$4" <<<"$out" || { echo "# $mode: expected message \"$4\" in: $out"; rc=1; }
  done
  return $rc
}
# admitted NAME SPEC-JSON: created by a client-side apply (NAME) and by a server-side apply (NAME-ssa).
admitted() {
  local out
  corpus "$1" "$2" >"$tmp/$1.json" && corpus "$1-ssa" "$2" >"$tmp/$1-ssa.json" || return 1
  out=$(apply_out csa "$tmp/$1.json") || { echo "# csa: $out"; return 1; }
  out=$(apply_out ssa "$tmp/$1-ssa.json") || { echo "# ssa: $out"; return 1; }
}
M_URL='each url in spec.repositories must be unique: remove the duplicate repository, or list all its branches on one entry'
M_NAME='each name given in spec.repositories must be unique: give every repository its own name, or leave name out to derive it from the url'
M_PASSWORD='an ssh:// url must not carry a password (user:password@host): put the private key in the Secret that gitCredentialsSecretRef names'
M_SEGMENT="a repository name cannot have '.' or '..' as a path segment (it becomes a directory on the volume): use a name such as github.com/org/repo"
M_BRANCH="a branch name must not end in '/', '.' or '.lock', or be '@': give the branch as git shows it, without refs/heads/"
M_KEY="gitCABundleRef.key cannot be '.' or '..': name the key of the ConfigMap or Secret that holds the PEM bundle, or leave key out for ca.crt"
M_FLAG='indexer.extraFlags cannot set -index or -branches (the indexer sets them): remove the flag, and list branches in spec.repositories[].branches'
M_ARCH='webserver.nodeSelector cannot set kubernetes.io/arch: remove the key and set spec.webserver.architecture (arm64 or amd64) instead'
M_PORT='gateway.port cannot be 6070 or 8081 (zoekt-webserver and the connector listen there inside the pod): choose another port, such as the default 8080'
M_MAXAGE='freshness.maxAge must be at least 1m: give a duration such as 36h, 90m or 2d'
M_POLL='poll.interval must be "0" (no polling) or a duration from 30s to 1d such as 5m'

check "CEL: a Gitea source without its url is refused" refused c20 '{"sources":[{"host":"gitea","org":"a"}]}' \
  'spec.sources[0]' 'a Gitea or Forgejo source needs its url'
check "CEL: a source naming an org and a user is refused" refused c21 '{"sources":[{"host":"github","org":"a","user":"b"}]}' \
  'spec.sources[0]' 'give exactly one of org, group (GitLab) and user'
check "CEL: a GitLab source naming an org is refused" refused c22 '{"sources":[{"host":"gitlab","org":"a"}]}' \
  'spec.sources[0]' 'a GitLab source names a group'
check "CEL: a repeated url is refused" refused c1 \
  '{"repositories":[{"url":"https://github.com/o/r"},{"url":"https://github.com/o/s"},{"url":"https://github.com/o/r","name":"o/r-again"}]}' \
  'spec.repositories' "$M_URL"
names_url() { apply_out csa "$tmp/c1.json" | grep -qF 'insert failed: key https://github.com/o/r already exists'; }
check "CEL: the refusal names the repeated url" names_url
check "CEL: urls that differ (even only by .git, one derived name) are admitted" admitted e1 \
  '{"repositories":[{"url":"https://github.com/o/r"},{"url":"https://github.com/o/r.git"},{"url":"git@github.com:o/r","name":"t0"}]}'
check "CEL: a repeated explicit name is refused" refused c2 \
  '{"repositories":[{"url":"https://h/a","name":"mirror/x"},{"url":"https://h/b"},{"url":"https://h/c","name":"mirror/x"}]}' \
  'spec.repositories' "$M_NAME"
check "CEL: an explicit name equal to another's derived name is admitted (the controller checks it)" admitted e2 \
  '{"repositories":[{"url":"https://h/a","name":"h/b"},{"url":"https://h/b"},{"url":"https://h/c","name":"H/b"}]}'
# Updates: the uniqueness rules let an unchanged list through (for objects stored before the rules),
# so a changed one must still be checked.
add_repo() { # add_repo CORPUS REPO-JSON: patch a repository onto the corpus, output on stdout
  kubectl patch csc "$1" -n "$ns" --type=json -p "[{\"op\":\"add\",\"path\":\"/spec/repositories/-\",\"value\":$2}]" 2>&1
}
update_refused() { local out; out=$(add_repo e1 "$1") && return 1; grep -qF "$2" <<<"$out" || { echo "# expected \"$2\" in: $out"; return 1; }; }
check "CEL: an update that repeats a url is refused" update_refused '{"url":"https://github.com/o/r","name":"again"}' "$M_URL"
check "CEL: an update that repeats a name is refused" update_refused '{"url":"https://h/new","name":"t0"}' "$M_NAME"
check "CEL: an update that keeps urls and names distinct is admitted" add_repo e1 '{"url":"https://github.com/o/t","name":"t"}'
check "CEL: a password in an ssh url is refused" refused c3 \
  '{"repositories":[{"url":"ssh://git@h:22/o/r"},{"url":"ssh://git:hunter2@h/o/s"}]}' 'spec.repositories[1].url' "$M_PASSWORD"
check "CEL: ssh urls with a user and a port are admitted" admitted e3 \
  '{"repositories":[{"url":"ssh://git@h:2222/o/r"},{"url":"ssh://h:22/o/s"},{"url":"git@h:o/t"}]}'
check "CEL: a '..' segment in a name is refused" refused c4 \
  '{"repositories":[{"url":"https://h/a","name":"h/../etc"}]}' 'spec.repositories[0].name' "$M_SEGMENT"
check "CEL: names with dots inside segments are admitted" admitted e4 \
  '{"repositories":[{"url":"https://h/a","name":"..h/a..b/.c"}]}'
check "CEL: a branch ending in / is refused" refused c5 \
  '{"repositories":[{"url":"https://h/a","branches":["main","release/"]}]}' 'spec.repositories[0].branches[1]' "$M_BRANCH"
check "CEL: a branch ending in .lock is refused" refused c6 \
  '{"repositories":[{"url":"https://h/a","branches":["main.lock"]}]}' 'spec.repositories[0].branches[0]' "$M_BRANCH"
check "CEL: branches with slashes, dots and .lock inside are admitted" admitted e5 \
  '{"repositories":[{"url":"https://h/a","branches":["release/2.x","v1.0","main.locked","@x"]}]}'
check "CEL: gitCABundleRef.key '..' is refused" refused c7 \
  "{$R,\"gitCABundleRef\":{\"kind\":\"Secret\",\"name\":\"ca\",\"key\":\"..\"}}" 'spec.gitCABundleRef.key' "$M_KEY"
check "CEL: a dotted gitCABundleRef.key is admitted" admitted e6 \
  "{$R,\"gitCABundleRef\":{\"name\":\"ca\",\"key\":\"..ca.pem\"}}"
# The controller defaults key to ca.crt for either kind, so no rule asks a Secret for one.
check "CEL: a gitCABundleRef of kind Secret without a key is admitted" admitted e6s \
  "{$R,\"gitCABundleRef\":{\"kind\":\"Secret\",\"name\":\"ca\"}}"
check "CEL: extraFlags -branches is refused" refused c8 \
  "{$R,\"indexer\":{\"extraFlags\":[\"-submodules=false\",\"--branches=main\"]}}" 'spec.indexer.extraFlags[1]' "$M_FLAG"
check "CEL: extraFlags -index is refused" refused c9 \
  "{$R,\"indexer\":{\"extraFlags\":[\"-index=/tmp\"]}}" 'spec.indexer.extraFlags[0]' "$M_FLAG"
check "CEL: other extraFlags are admitted" admitted e7 \
  "{$R,\"indexer\":{\"extraFlags\":[\"-submodules=false\",\"-file_limit=2097152\",\"-incremental=false\"]}}"
check "CEL: nodeSelector kubernetes.io/arch is refused" refused c10 \
  "{$R,\"webserver\":{\"nodeSelector\":{\"pool\":\"search\",\"kubernetes.io/arch\":\"amd64\"}}}" 'spec.webserver.nodeSelector' "$M_ARCH"
check "CEL: other node labels are admitted" admitted e8 \
  "{$R,\"webserver\":{\"architecture\":\"amd64\",\"nodeSelector\":{\"pool\":\"search\",\"kubernetes.io/os\":\"linux\"}}}"
check "CEL: gateway.port 8081 is refused" refused c11 "{$R,\"gateway\":{\"port\":8081}}" 'spec.gateway.port' "$M_PORT"
check "CEL: gateway.port 6070 is refused" refused c12 "{$R,\"gateway\":{\"port\":6070}}" 'spec.gateway.port' "$M_PORT"
check "CEL: gateway.port 8082 is admitted" admitted e9 "{$R,\"gateway\":{\"port\":8082}}"
check "CEL: freshness.maxAge 59s is refused" refused c13 "{$R,\"freshness\":{\"maxAge\":\"59s\"}}" 'spec.freshness.maxAge' "$M_MAXAGE"
check "CEL: freshness.maxAge 0h is refused" refused c14 "{$R,\"freshness\":{\"maxAge\":\"0h\"}}" 'spec.freshness.maxAge' "$M_MAXAGE"
check "CEL: freshness.maxAge 1m is admitted" admitted e10 "{$R,\"freshness\":{\"maxAge\":\"1m\"}}"
check "CEL: freshness.maxAge 60s is admitted" admitted e11 "{$R,\"freshness\":{\"maxAge\":\"60s\"}}"
check "CEL: freshness.maxAge 0h30s30s (60 seconds in all) is admitted" admitted e12 "{$R,\"freshness\":{\"maxAge\":\"0h30s30s\"}}"
check "CEL: poll.interval 10s is refused" refused c15 "{$R,\"poll\":{\"interval\":\"10s\"}}" 'spec.poll.interval' "$M_POLL"
check "CEL: poll.interval 0s is refused" refused c16 "{$R,\"poll\":{\"interval\":\"0s\"}}" 'spec.poll.interval' "$M_POLL"
check "CEL: poll.interval 0 (no polling) is admitted" admitted e13 "{$R,\"poll\":{\"interval\":\"0\"}}"
check "CEL: poll.interval 30s is admitted" admitted e14 "{$R,\"poll\":{\"interval\":\"30s\"}}"
# The largest list the schema allows, with every per-repository rule in play, stays within the
# API server's runtime CEL budget on create, on a status write and on an update.
many=$(python3 -c 'import json; print(json.dumps({"repositories":[{"url":"ssh://git@git.example.com:22/org/r%d.git" % i,"name":"r/%d" % i,"branches":["main","release/1.%d" % i]} for i in range(2000)]}))')
check "CEL: 2000 named repositories with branches are admitted" admitted big2 "$many"
check "CEL: a status write to that corpus is admitted" kubectl patch csc big2 -n "$ns" --subresource=status --type=merge -p '{"status":{"repositoryCount":2000}}'
check "CEL: a spec update of that corpus is admitted" kubectl patch csc big2 -n "$ns" --type=merge -p '{"spec":{"suspend":true}}'

# Status subresource and printer columns.
status='{"status":{"observedGeneration":1,"repositoryCount":121,"servingShards":3,"lastIndexTime":"2026-11-29T03:41:10Z","oldestIndexTime":"2026-11-29T03:12:55Z","endpoint":"http://min-search.'$ns'.svc:8080","conditions":[{"type":"Ready","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-29T03:41:10Z","reason":"Available","message":"ok"},{"type":"Fresh","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-29T03:41:10Z","reason":"WithinMaxAge","message":"ok"}]}}'
check "status is written through /status" \
  kubectl patch csc min -n "$ns" --subresource=status --type=merge -p "$status"
check "a write to the main resource ignores status" \
  bash -c "kubectl patch csc min -n $ns --type=merge -p '{\"status\":{\"repositoryCount\":1}}' >/dev/null && test \"\$(kubectl get csc min -n $ns -o jsonpath='{.status.repositoryCount}')\" = 121"
check "kubectl get csc shows the columns" \
  bash -c "kubectl get csc min -n $ns | head -1 | grep -qE '^NAME +REPOS +READY +FRESH +LAST INDEXED +AGE\$'"
check "kubectl get csc shows the figures" bash -c "kubectl get csc min -n $ns --no-headers | grep -qE '^min +121 +True +True '"
check "kubectl get csc -o wide adds the serving layout's shards, the reason and the endpoint" \
  bash -c "kubectl get csc min -n $ns -o wide | head -1 | grep -qE '^NAME +REPOS +SHARDS +READY +FRESH +LAST INDEXED +AGE +REASON +ENDPOINT\$' &&
    kubectl get csc min -n $ns -o wide --no-headers | grep -qE '^min +121 +3 +True +True '"
check "kubectl wait --for=condition=Fresh works" kubectl wait --for=condition=Fresh "csc/min" -n "$ns" --timeout=5s
check "a bad condition reason is rejected" bash -c "! kubectl patch csc min -n $ns --subresource=status --type=merge -p '{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Maybe\",\"lastTransitionTime\":\"2026-11-29T03:41:10Z\",\"reason\":\"not camel case\",\"message\":\"\"}]}}' 2>/dev/null"

# The examples are valid against the schema.
for f in "$ZK_ROOT"/examples/corpus-*.yaml; do
  sed "s/namespace: codesearch/namespace: $ns/" "$f" >"$tmp/example.yaml"
  check "example $(basename "$f") is valid" kubectl create --validate=false --dry-run=server -f "$tmp/example.yaml"
done

finish
