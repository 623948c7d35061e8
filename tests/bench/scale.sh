#!/usr/bin/env bash
# The operator at scale (issue 10): memory, creation time against the kubectl floor, API requests and
# CPU of a no-op resync, for N corpora. Writes the "Operator at scale" section of docs/benchmarks.md.
#
#   tests/bench/scale.sh N[:RUNS]...   e.g. `1 100` (make bench), `1 100 1000:1` (make bench-scale)
#
# Runs the release operator (bin/zoekt-operator) against the control plane of $KUBECONFIG, or starts one
# without a node (scripts/cluster.sh, honouring ZK_CLUSTER_DIR and the ZK_*_PORT variables) and stops it
# afterwards. Each N runs RUNS times (default BENCH_SCALE_RUNS, else 3); every figure is the median of
# its runs. Each run:
#   1. the floor: N minimal corpora and their rendered children (`zoekt-operator render`, without the
#      placeholder ownerReferences, which the garbage collector would chase), in one `kubectl apply
#      --server-side`, into a fresh namespace; then the wait until the controller manager is done
#      with them (as in 4), so that its work is not charged to the operator;
#   2. a fresh operator; once its caches are synced, its idle resident memory;
#   3. `kubectl apply` of the same N corpora into another fresh namespace, and the time until every
#      corpus has status.observedGeneration (written after its children are applied); its ratio to the
#      floor of the same run;
#   4. once the controller manager is done with the new objects (two seconds without a counted
#      request), the resident memory in steady state; then three resync periods of no-op reconciles
#      (the periodic resync and the /index-status retries, until 3N more reconciles finished and the
#      queue is empty): the operator's CPU time per period, and the requests the API server counted
#      itself (apiserver_request_total) on corpora and on the children's kinds and Secrets, plus the
#      operator's own count of its Event writes, beside every write the operator counted itself
#      (its api_requests_total, all verbs but reads). Left out, because the controller manager makes them
#      too: watches and lists (its CronJob controller lists every Job and CronJob each 10 s; the
#      operator lists only when a watch starts), reads other than of Secrets (its garbage collector
#      reads the children of deleted corpora for minutes; the operator reads only the Secrets and
#      ConfigMaps a corpus references, none here), the children's status, and Events (on this
#      node-less plane the PVC controller reports the missing storage class again and again);
#   5. the namespaces are deleted and the operator stopped.
# With BENCH_SCALE_FAILING=N (make bench-scale: 500), afterwards once: N corpora that keep failing (a
# ResourceQuota refuses their Deployments) beside a healthy corpus in another namespace, created,
# changed and deleted; then the failing namespace deleted while the healthy round runs again (issue 33:
# failing corpora must not starve healthy ones). Reported: the healthy corpus's latencies, and the
# failing corpora's refused writes and failed reconciles over each phase.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ $# -gt 0 ] || { echo "usage: tests/bench/scale.sh N[:RUNS]..." >&2; exit 2; }
op=${BENCH_OPERATOR:-bin/zoekt-operator}
[ -x "$op" ] || { echo "scale.sh: $op is missing; run 'make all'" >&2; exit 1; }

started_plane=
if [ -z "${KUBECONFIG:-}" ] || ! kubectl get --raw /readyz >/dev/null 2>&1; then
  export ZK_NODE=0
  scripts/cluster.sh up >&2
  export KUBECONFIG=${ZK_CLUSTER_DIR:-$root/.cluster}/kubeconfig
  started_plane=1
fi
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  [ -z "$started_plane" ] || scripts/cluster.sh down >&2
}
trap cleanup EXIT
kubectl apply --server-side -f crds/codesearch.dev_codesearchcorpora.yaml >/dev/null
kubectl wait --for condition=established --timeout=60s crd/codesearchcorpora.codesearch.dev >/dev/null

python3 - "$op" "$tmp" "${BENCH_SCALE_RUNS:-3}" "${BENCH_SCALE_FAILING:-0}" "$@" >"$tmp/section" <<'PY'
import os, re, signal, socket, statistics, subprocess, sys, time

op, tmp, default_runs, fair_n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
plan = [(int(a.split(":")[0]), int(a.split(":")[1]) if ":" in a else default_runs) for a in sys.argv[5:]]
# What the operator reads or writes, where the controller manager does not too (see the top); the
# operator's Events come from its own metrics instead.
CHILDREN = {"persistentvolumeclaims", "configmaps", "serviceaccounts", "roles", "rolebindings", "services",
            "deployments", "poddisruptionbudgets", "cronjobs", "jobs", "secrets"}
TICK = os.sysconf("SC_CLK_TCK")

def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=True).stdout

def corpus(ns, i):
    return (f"apiVersion: codesearch.dev/v1alpha1\nkind: CodeSearchCorpus\nmetadata:\n  name: c{i}\n"
            f"  namespace: {ns}\nspec:\n  repositories:\n  - url: https://git.example.com/r{i}.git\n")

def strip_owner_refs(yaml_text):
    # The rendered ownerReferences name a placeholder uid; drop the block (indented under metadata).
    return re.sub(r"\n  ownerReferences:\n(    .*\n|  - .*\n)+", "\n", yaml_text)

def apiserver_requests(by=None):
    # The total, and when by is a dict, the counts by verb, resource, subresource and code added to it.
    total = 0
    for line in kubectl("get", "--raw", "/metrics").splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        if labels.get("verb") in ("WATCH", "LIST") or \
                (labels.get("verb") == "GET" and labels.get("resource") != "secrets"):
            continue
        if labels.get("resource") == "codesearchcorpora" or \
                (labels.get("resource") in CHILDREN and not labels.get("subresource")):
            count = int(float(line.rsplit(" ", 1)[1]))
            total += count
            if by is not None:
                what = " ".join(labels.get(k, "") for k in ("verb", "resource", "subresource", "code"))
                by[what] = by.get(what, 0) + count
    return total

def rss_kb(pid):
    # Resident in all, and the part that is the operator's own (anonymous: heap, stacks) rather than
    # pages of the shared libraries it maps.
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    return tuple(int(re.search(rf"{k}:\s+(\d+)", text).group(1)) for k in ("VmRSS", "RssAnon"))

def rss_by_mapping(pid):
    # Resident kB by what is mapped: "anonymous" (heap, arenas, thread stacks: the operator's own), or the
    # file's name (the executable, each shared library; their pages count in full here even when another
    # process maps the same file, as they do in a container of one process).
    by, name = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                name = head[5].rsplit("/", 1)[-1] if len(head) > 5 and head[5].startswith("/") else "anonymous"
            elif head[0] == "Rss:":
                by[name] = by.get(name, 0) + int(head[1])
    return by

def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK

def op_metrics(port):
    out = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True).stdout
    get = lambda name: float(re.search(rf"^{re.escape(name)} (\S+)$", out, re.M).group(1))
    events = sum(float(v) for v in re.findall(r'^zoekt_operator_api_requests_total\{verb="event",[^}]*\} (\S+)$', out, re.M))
    return get('zoekt_operator_reconcile_total{result="success"}') + get('zoekt_operator_reconcile_total{result="error"}'), \
        get("zoekt_operator_workqueue_depth"), events

RESYNCS = 3

def op_writes(port):
    # The writes the operator counted itself: applies, status updates, Events, deletions, whatever the
    # answer.
    return sum(v for k, v in op_requests(port).items()
               if k.startswith("api_requests_total{") and not re.search(r'verb="(get|list|watch)"', k))

def op_requests(port):
    # The operator's own count of its API requests, by verb and code, and its reconciles and retries.
    out = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True).stdout
    return {m.group(1): int(float(m.group(2))) for m in
            re.finditer(r'^zoekt_operator_(api_requests_total\{[^}]*\}|reconcile_total\{[^}]*\}|workqueue_retries_total) (\S+)$',
                        out, re.M)}

def wait(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.1)
    raise SystemExit(f"scale.sh: timed out waiting for {what}")

def settle():
    # Until the controller manager has done what the new objects gave it to do (ReplicaSets, Pods): two
    # seconds without a request counted, at most two minutes.
    last, end = apiserver_requests(), time.monotonic() + 120
    while time.monotonic() < end:
        time.sleep(2)
        now = apiserver_requests()
        if now == last:
            return
        last = now

def pods_made(ns, n):
    # Every Deployment of ns has the pods it asks for (created; on a plane without a node they stay
    # Pending).
    out = kubectl("get", "deployments", "-n", ns, "-o",
                  "jsonpath={range .items[*]}{.spec.replicas}={.status.replicas}{\"\\n\"}{end}")
    return sum(1 for l in out.splitlines() if l.split("=")[0] == l.split("=")[1]) >= n

def observed(ns, n):
    out = kubectl("get", "codesearchcorpora", "-n", ns, "-o",
                  "jsonpath={range .items[*]}{.metadata.generation}={.status.observedGeneration}{\"\\n\"}{end}")
    return sum(1 for l in out.splitlines() if "=" in l and l.split("=")[0] == l.split("=")[1]) >= n

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def one_run(n, run):
    res = {}
    ns_floor, ns_op = f"scale-floor-{n}-{run}-{os.getpid()}", f"scale-op-{n}-{run}-{os.getpid()}"
    for ns in (ns_floor, ns_op):
        kubectl("create", "namespace", ns)
    docs = []
    for i in range(n):
        c = corpus(ns_floor, i)
        docs.append(c)
        docs.append(strip_owner_refs(subprocess.run([op, "render", "-f", "-"], input=c, capture_output=True, text=True,
                                                    check=True).stdout))
    floor_yaml = "\n---\n".join(docs)
    t = time.monotonic()
    kubectl("apply", "--server-side", "--field-manager", "bench-floor", "-f", "-", stdin=floor_yaml)
    res["floor"] = time.monotonic() - t
    # The controller manager goes on making the floor's ReplicaSets and Pods after kubectl returns; at
    # 1,000 corpora that is minutes of API work that would otherwise be charged to the operator's run.
    wait(lambda: pods_made(ns_floor, n), 1800, "the controller manager to make the floor's pods")
    settle()

    port = free_port()
    log = open(f"{tmp}/operator-{n}-{run}.log", "w")
    proc = subprocess.Popen([op, "--leader-elect=false", "--metrics-addr", f"127.0.0.1:{port}",
                             "--namespace", ns_op, "--resync-period", "10s", "--log-level", "warn",
                             "--index-status-url-template", "http://127.0.0.1:9/{namespace}/{name}"],
                            stdout=log, stderr=log)
    try:
        wait(lambda: subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/readyz"],
                                    capture_output=True).returncode == 0, 60, "the operator to be ready")
        time.sleep(2)
        res["idle_kb"], res["idle_anon_kb"] = rss_kb(proc.pid)
        t, cpu = time.monotonic(), cpu_s(proc.pid)
        kubectl("apply", "-f", "-", stdin="\n---\n".join(corpus(ns_op, i) for i in range(n)))
        wait(lambda: observed(ns_op, n), 1800, f"{n} corpora to have a status")
        res["create"] = time.monotonic() - t
        res["create_cpu"] = cpu_s(proc.pid) - cpu
        res["create_operator_requests"] = op_requests(port)
        settle()
        res["steady_kb"], res["steady_anon_kb"] = rss_kb(proc.pid)
        res["steady_by"] = rss_by_mapping(proc.pid)
        done, _, events = op_metrics(port)
        before, after = {}, {}
        own = op_writes(port)
        req, cpu = apiserver_requests(before), cpu_s(proc.pid)
        # Three resync periods: every corpus reconciled three more times.
        wait(lambda: (lambda d: d[0] >= done + RESYNCS * n and d[1] == 0)(op_metrics(port)), 1800, "three resyncs")
        res["resync_cpu"] = (cpu_s(proc.pid) - cpu) / RESYNCS
        res["resync_requests"] = apiserver_requests(after) - req + op_metrics(port)[2] - events
        res["resync_operator_writes"] = op_writes(port) - own
        # Which requests a resync made, for the reader of the log when the count is not zero.
        res["resync_breakdown"] = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
        res["resync_kb"], res["resync_anon_kb"] = rss_kb(proc.pid)
        print(f"scale.sh: N={n} run {run}: { {k: v for k, v in res.items() if k != 'steady_by'} }", file=sys.stderr,
              flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
        kubectl("delete", "namespace", ns_floor, ns_op, "--wait=true", "--timeout=1800s")
    return res

def healthy_round(port, ns, tag):
    # A healthy corpus in ns, created, changed and deleted: the seconds until the operator has applied
    # its children (status.observedGeneration reaches its generation), until it has taken the change,
    # and, after the deletion, until its Deployment is gone (the garbage collector's part).
    name, res = f"healthy-{tag}", {}

    def observed_gen(gen):
        out = subprocess.run(["kubectl", "get", "codesearchcorpus", name, "-n", ns, "-o",
                              "jsonpath={.status.observedGeneration}"], capture_output=True, text=True).stdout
        return out.strip() == str(gen)

    t = time.monotonic()
    kubectl("apply", "-f", "-", stdin=corpus(ns, 0).replace("name: c0", f"name: {name}"))
    wait(lambda: observed_gen(1), 600, "the healthy corpus's status")
    res["create"] = time.monotonic() - t
    t = time.monotonic()
    kubectl("patch", "codesearchcorpus", name, "-n", ns, "--type=merge", "-p",
            '{"spec":{"repositories":[{"url":"https://git.example.com/changed.git"}]}}')
    wait(lambda: observed_gen(2), 600, "the healthy corpus's change")
    res["change"] = time.monotonic() - t
    t = time.monotonic()
    kubectl("delete", "codesearchcorpus", name, "-n", ns, "--wait=false")
    wait(lambda: subprocess.run(["kubectl", "get", "deployment", f"{name}-search", "-n", ns],
                                capture_output=True).returncode != 0, 600, "the healthy corpus's children to go")
    res["delete"] = time.monotonic() - t
    return res

def refusals(port):
    # The operator's refused writes (4xx answers) and failed reconciles so far.
    r = op_requests(port)
    refused = sum(v for k, v in r.items() if k.startswith("api_requests_total{") and re.search(r'code="4', k))
    return refused, r.get('reconcile_total{result="error"}', 0)

def fairness(n):
    # n corpora that keep failing (their namespace's ResourceQuota allows no Deployment) beside a healthy
    # corpus in another namespace; then the failing namespace deleted while the healthy corpus goes
    # through the same round again.
    ns_bad, ns_good = f"scale-failing-{os.getpid()}", f"scale-healthy-{os.getpid()}"
    for ns in (ns_bad, ns_good):
        kubectl("create", "namespace", ns)
    kubectl("apply", "-f", "-", stdin=f"apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: no-deployments\n"
                                      f"  namespace: {ns_bad}\nspec:\n  hard:\n    count/deployments.apps: \"0\"\n")
    port = free_port()
    log = open(f"{tmp}/operator-fairness.log", "w")
    proc = subprocess.Popen([op, "--leader-elect=false", "--metrics-addr", f"127.0.0.1:{port}",
                             "--resync-period", "10m", "--log-level", "warn",
                             "--index-status-url-template", "http://127.0.0.1:9/{namespace}/{name}"],
                            stdout=log, stderr=log)
    res = {"n": n}
    try:
        wait(lambda: subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/readyz"],
                                    capture_output=True).returncode == 0, 60, "the operator to be ready")
        kubectl("apply", "-f", "-", stdin="\n---\n".join(corpus(ns_bad, i) for i in range(n)))
        wait(lambda: observed(ns_bad, n), 1800, f"{n} failing corpora to have a status")
        r0, e0, t0 = *refusals(port), time.monotonic()
        res["failing"] = healthy_round(port, ns_good, "a")
        r1, e1, t1 = *refusals(port), time.monotonic()
        res["failing_refused"], res["failing_errors"], res["failing_s"] = r1 - r0, e1 - e0, t1 - t0
        kubectl("delete", "namespace", ns_bad, "--wait=false")
        res["terminating"] = healthy_round(port, ns_good, "b")
        wait(lambda: subprocess.run(["kubectl", "get", "namespace", ns_bad], capture_output=True).returncode != 0,
             1800, "the failing namespace to go")
        r2, e2, t2 = *refusals(port), time.monotonic()
        res["terminating_refused"], res["terminating_errors"], res["terminating_s"] = r2 - r1, e2 - e1, t2 - t1
        print(f"scale.sh: fairness: {res}", file=sys.stderr, flush=True)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
        kubectl("delete", "namespace", ns_bad, ns_good, "--ignore-not-found", "--wait=true", "--timeout=1800s")
    return res

med = lambda rs, k: statistics.median(r[k] for r in rs)
mb = lambda kb: f"{kb / 1024:.1f} MB"
print("| Corpora | Runs | Floor (kubectl apply --server-side) | Operator: all with status | Ratio | RSS idle (own) | RSS steady (own) | Three no-op resyncs: writes at the API server / by the operator | No-op resync: CPU |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
last = None
for n, runs in plan:
    rs = [one_run(n, r) for r in range(runs)]
    last = (n, rs[-1]["steady_by"])
    ratio = statistics.median(r["create"] / r["floor"] for r in rs)
    steady = max((med(rs, "steady_kb"), med(rs, "steady_anon_kb")), (med(rs, "resync_kb"), med(rs, "resync_anon_kb")))
    print(f"| {n} | {runs} | {med(rs, 'floor'):.2f} s | {med(rs, 'create'):.2f} s | {ratio:.2f}x | "
          f"{mb(med(rs, 'idle_kb'))} ({mb(med(rs, 'idle_anon_kb'))}) | {mb(steady[0])} ({mb(steady[1])}) | "
          f"{med(rs, 'resync_requests'):.0f} / {med(rs, 'resync_operator_writes'):.0f} | {med(rs, 'resync_cpu'):.2f} s |",
          flush=True)
n, by = last
top = sorted(by.items(), key=lambda kv: -kv[1])
shown = [kv for kv in top if kv[1] >= 256][:8]
rest = sum(kb for _, kb in top) - sum(kb for _, kb in shown)
print(f"\nResident in steady state with {n} corpora (last run, /proc/PID/smaps; a library counts its code and its "
      f"relocated data): " +
      ", ".join(f"{name} {mb(kb)}" for name, kb in shown) + f", the rest {mb(rest)}.")
if fair_n > 0:
    f = fairness(fair_n)
    print(f"\nFailing corpora beside a healthy one (one run): {fair_n} corpora in a namespace whose ResourceQuota "
          "allows no Deployment, so that every reconcile of theirs fails; a healthy corpus in another namespace is "
          "created (until its status has observedGeneration 1), changed (until 2) and deleted (until the garbage "
          "collector has removed its Deployment); then the failing namespace is deleted and the healthy round runs "
          "again while it terminates. Refused writes are the operator's requests answered 4xx.\n")
    print("| while | healthy: created | changed | deleted | refused writes of the failing corpora | failed reconciles | over |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, what in (("failing", f"{fair_n} corpora fail"), ("terminating", "their namespace is deleted")):
        h = f[k]
        print(f"| {what} | {h['create']:.1f} s | {h['change']:.1f} s | {h['delete']:.1f} s | {f[k + '_refused']} | "
              f"{f[k + '_errors']} | {f[k + '_s']:.0f} s |", flush=True)
PY

out=docs/benchmarks.md
# The sections before this one (tests/bench/run.sh) and after it (the other benches) stay as they are.
[ -f "$out" ] || : >"$out"
{
  awk '/^## Operator at scale/ { exit } { print }' "$out"
  echo "## Operator at scale"
  echo
  echo "Generated by tests/bench/scale.sh ($*) on $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPU(s), load average"
  echo "$(cut -d" " -f1-3 /proc/loadavg) at the end; the local control plane without a node, release operator"
  echo "(--workers 2). Each figure is the median of the runs shown; the ratio is the median of each run's"
  echo "operator time over the floor measured in the same run. What each column measures is described at the"
  echo "top of tests/bench/scale.sh. RSS is the whole resident size; \"own\" is its anonymous part (heap,"
  echo "stacks), the rest being pages of the shared libraries; the line under the table breaks the steady"
  echo "state of the largest run down by mapping, and docs/controller.md (\"Memory\") has the profile behind it."
  echo "The no-op resyncs count what the API server's own metrics (apiserver_request_total) saw on corpora,"
  echo "the children's kinds and Secrets, from any client, plus the operator's Event writes, over three"
  echo "resync periods, beside the writes the operator counted itself; the CPU column is per period."
  echo
  echo "Goals (issues 10 and 33): at most 10 MB resident with 1,000 corpora, at most 4 MB idle; creation"
  echo "within 1.5x the floor; zero writes and at most 1 s of CPU for a no-op resync of 1,000 corpora;"
  echo "failing corpora do not hold up a healthy one."
  echo
  cat "$tmp/section"
  echo
  # What followed the section before, from its next heading on.
  awk '/^## Operator at scale/ { mine = 1; next } mine && /^## / { after = 1 } after' "$out"
} >"$tmp/out"
mv "$tmp/out" "$out"
echo "scale.sh: wrote the operator-scale section of $out" >&2
