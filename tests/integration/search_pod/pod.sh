# Shell helpers for running the search pod that `zoekt-operator render` prints on this machine, shared by
# tests/integration/test_search_pod.sh (does the pod work) and tests/bench/search_pod.sh (how fast is
# it). Source it with W set to the work directory (pod.mjs's WORKDIR, where plan.json is written) and an
# associative array PID declared; run_container records each container's process id there.

# yaml2json FILE: the YAML documents of FILE as one JSON array (empty documents dropped).
yaml2json() { python3 -c 'import json,sys,yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)' "$1"; }

# q FILE EXPR: evaluates a JavaScript expression over the JSON in FILE (bound to `d`) and prints it.
q() { node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const v = eval(process.argv[2]); process.stdout.write(typeof v === "string" ? v : JSON.stringify(v))' "$1" "$2"; }

# pod_secrets CHILDREN.json SHAPES.yaml: prints the Secrets the rendered Deployment mounts as pod.mjs
# takes them ({"<name>": {"<key>": "<value>"}}), with the keys SHAPES.yaml gives each (or one key
# "token" when it names none or is missing) and random values: what `kubectl apply -f secrets.yaml`
# with real values would hold.
pod_secrets() {
  local shapes='[]'
  [ -f "$2" ] && shapes=$(yaml2json "$2")
  node -e '
    const crypto = require("crypto");
    const children = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const shapes = JSON.parse(process.argv[2]);
    const dep = children.find(o => o.kind === "Deployment");
    const out = {};
    for (const v of dep.spec.template.spec.volumes ?? []) {
      if (!v.secret) continue;
      const shape = shapes.find(s => s.kind === "Secret" && s.metadata.name === v.secret.secretName);
      const keys = shape ? Object.keys({ ...(shape.data ?? {}), ...(shape.stringData ?? {}) }) : ["token"];
      out[v.secret.secretName] = Object.fromEntries(keys.map(k => [k, crypto.randomBytes(24).toString("hex")]));
    }
    process.stdout.write(JSON.stringify(out));' "$1" "$shapes"
}

# run_container NAME PROGRAM [ARGS...]: starts PROGRAM with ARGS as the container's user (runAsUser,
# runAsGroup, fsGroup as a supplementary group), without privileges, with its rendered env; logs to
# $W/log/NAME.log (owned by that user, so `access_log /dev/stdout` can reopen it).
run_container() {
  local name=$1; shift
  local uid gid fsg envs=() groups=(--clear-groups) log=$W/log/$name.log
  uid=$(q "$W/plan.json" "String(d.containers.find(c => c.name === '$name').uid ?? 0)")
  gid=$(q "$W/plan.json" "String(d.containers.find(c => c.name === '$name').gid ?? 0)")
  fsg=$(q "$W/plan.json" 'String(d.fsGroup ?? "")')
  readarray -d '' envs < <(q "$W/plan.json" "d.containers.find(c => c.name === '$name').env.map(e => e + '\\0').join('')")
  [ -n "$fsg" ] && groups=(--groups="$fsg")
  mkdir -p "$W/log"
  : >"$log"
  if [ "$(id -u)" != 0 ]; then
    # Without root the user cannot change; the containers run as the caller's user.
    env "${envs[@]}" "$@" >"$log" 2>&1 &
    PID[$name]=$!
    return
  fi
  chown "$uid:$gid" "$log"
  setpriv --reuid="$uid" --regid="$gid" "${groups[@]}" --no-new-privs \
    --inh-caps=-all --bounding-set=-all -- env "${envs[@]}" "$@" >"$log" 2>&1 &
  PID[$name]=$!
}

# argv_of NAME: the container's mapped command, NUL-separated, argv[0] dropped.
argv_of() { q "$W/plan.json" "d.containers.find(c => c.name === '$1').argv.slice(1).map(a => a + '\\0').join('')"; }
