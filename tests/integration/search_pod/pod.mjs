// Turns the children `zoekt-operator render` prints into a pod this machine can run, the way a kubelet
// would prepare it, so that tests/integration/test_search_pod.sh can start the search Deployment's
// containers with exactly their rendered arguments.
//
// Usage: node pod.mjs CHILDREN.json SECRETS.json WORKDIR
//   CHILDREN.json  the rendered objects as one JSON array (YAML converted without changes)
//   SECRETS.json   {"<secret name>": {"<key>": "<value>"}}: the Secrets the pod mounts, as the cluster
//                  would hold them
//   WORKDIR        an empty directory; receives vol/<volume>/ (the materialised volumes) and
//                  ctr/<container>/ (per-container copies of configuration files, paths mapped)
// Prints the plan as JSON on stdout:
//   {deployment, uid, gid, fsGroup, podIP, problems: [..],
//    containers: [{name, argv, renderedArgv, env: ["NAME=value"], uid, gid, ports: {name: port},
//                  probes: {liveness, readiness, startup}, mounts}]}
// argv is the rendered command + args with every path under a volume mount replaced by the directory
// that stands for that mount (argv[0] is left for the caller to substitute). problems lists what would
// break in the cluster and can be seen without running anything (a file the container must write that
// is not on a writable mount, while the root file system is read-only; a volume that cannot be
// prepared); the test fails on each one.
//
// The downward API gives what a kubelet would: status.podIP is 127.0.0.2 (POD_IP below), a loopback
// address other than the pod's own 127.0.0.1, so that what listens on the pod's address and what listens
// on its loopback stay apart as they do in a cluster; metadata.name, metadata.namespace and
// spec.serviceAccountName their rendered values. As the kubelet does, $(NAME) in the command and args
// is replaced by the container's variable NAME when it has one ($$ stands for $).
//
// Volumes are prepared like the kubelet does: configMap and secret volumes in the atomic-writer layout
// (a timestamped directory, a `..data` link to it and one link per key), files with the volume's
// defaultMode and, under a pod fsGroup, owned by group fsGroup; emptyDir as a group-writable directory;
// a persistentVolumeClaim as an empty directory (nothing in the test reads the index).
import { chownSync, chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const [childrenPath, secretsPath, work] = process.argv.slice(2);
if (!work) {
  process.stderr.write('usage: node pod.mjs CHILDREN.json SECRETS.json WORKDIR\n');
  process.exit(2);
}
const children = JSON.parse(readFileSync(childrenPath, 'utf8'));
const secrets = JSON.parse(readFileSync(secretsPath, 'utf8'));
const problems = [];

const deployment = children.find(o => o.kind === 'Deployment');
if (!deployment) {
  process.stderr.write('pod.mjs: the rendered objects hold no Deployment\n');
  process.exit(1);
}
const podSpec = deployment.spec.template.spec;
const podSec = podSpec.securityContext ?? {};
const fsGroup = podSec.fsGroup ?? null;

// Files and directories belong to root, and to the fsGroup when the pod declares one, as in a cluster.
// Without root they stay the test user's, who also runs the containers then.
function own(path) {
  if (fsGroup !== null && process.getuid() === 0) chownSync(path, 0, fsGroup);
}

// The atomic-writer layout of a configMap or secret volume: the files live in a timestamped directory,
// `..data` points at it and each key is a link through `..data`, so an update swaps one link.
function writeProjected(dir, files, mode) {
  const stamp = '..' + new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').replace('Z', '');
  mkdirSync(join(dir, stamp), { recursive: true });
  chmodSync(dir, 0o755);
  chmodSync(join(dir, stamp), 0o755);
  own(dir);
  own(join(dir, stamp));
  for (const [path, content] of files) {
    const file = join(dir, stamp, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    chmodSync(file, mode);
    own(file);
    const top = path.split('/')[0];
    try { symlinkSync(join('..data', top), join(dir, top)); } catch (e) { if (e.code !== 'EEXIST') throw e; }
  }
  symlinkSync(stamp, join(dir, '..data'));
}

// The files a configMap or secret volume shows: every key, or only the listed items at their paths.
function projectedFiles(data, items, what) {
  if (!items) return Object.entries(data);
  return items.map(it => {
    if (!(it.key in data)) {
      problems.push(`${what} has no key ${it.key} that the volume lists`);
      return [it.path, ''];
    }
    return [it.path, data[it.key]];
  });
}

const volumes = {};
for (const v of podSpec.volumes ?? []) {
  const dir = join(work, 'vol', v.name);
  mkdirSync(dir, { recursive: true });
  if (v.configMap) {
    const cm = children.find(o => o.kind === 'ConfigMap' && o.metadata.name === v.configMap.name);
    if (!cm) {
      problems.push(`volume ${v.name}: ConfigMap ${v.configMap.name} is not among the rendered objects`);
      continue;
    }
    writeProjected(dir, projectedFiles(cm.data ?? {}, v.configMap.items, `ConfigMap ${cm.metadata.name}`),
      v.configMap.defaultMode ?? 0o644);
    volumes[v.name] = { dir, writable: false };
  } else if (v.secret) {
    const data = secrets[v.secret.secretName];
    if (!data) {
      problems.push(`volume ${v.name}: no content given for Secret ${v.secret.secretName}`);
      continue;
    }
    writeProjected(dir, projectedFiles(data, v.secret.items, `Secret ${v.secret.secretName}`),
      v.secret.defaultMode ?? 0o644);
    volumes[v.name] = { dir, writable: false };
  } else if (v.emptyDir || v.persistentVolumeClaim) {
    chmodSync(dir, fsGroup !== null ? 0o2777 : 0o777);
    own(dir);
    volumes[v.name] = { dir, writable: true };
  } else {
    problems.push(`volume ${v.name}: a kind this test cannot prepare (${Object.keys(v).join(', ')})`);
  }
}

// The longest mount path that contains path, or null.
function mountOf(mounts, path) {
  let best = null;
  for (const m of mounts)
    if ((path === m.mountPath || path.startsWith(m.mountPath.replace(/\/$/, '') + '/')) &&
        (!best || m.mountPath.length > best.mountPath.length))
      best = m;
  return best;
}

function mapPath(mounts, path) {
  const m = mountOf(mounts, path);
  return m ? m.hostPath + path.slice(m.mountPath.replace(/\/$/, '').length) : path;
}

// Where nginx reads or writes files: these directives' first argument is a path (or stderr / syslog:).
const NGINX_FILE_DIRECTIVES = {
  pid: 'write', error_log: 'write', access_log: 'write', client_body_temp_path: 'write',
  proxy_temp_path: 'write', fastcgi_temp_path: 'write', uwsgi_temp_path: 'write', scgi_temp_path: 'write',
  include: 'read', root: 'read', alias: 'read', ssl_certificate: 'read', ssl_certificate_key: 'read',
};

// A copy of an nginx configuration with every file path mapped to this container's mounts. Checks on the
// way that each file nginx writes is on a writable mount (the root file system is read-only) or a device.
function mapNginxConf(ctrName, mounts, text, readOnlyRoot) {
  return text.split('\n').map(line => {
    const m = /^(\s*)([a-z_]+)(\s+)([^\s;]+)(.*)$/.exec(line);
    if (!m || !(m[2] in NGINX_FILE_DIRECTIVES)) return line;
    const [, indent, directive, space, value, rest] = m;
    if (!value.startsWith('/')) {
      if (!['stderr', 'off'].includes(value) && !value.startsWith('syslog:') && !value.startsWith('memory:'))
        problems.push(`${ctrName}: ${directive} ${value} is relative to nginx's compiled-in prefix`);
      return line;
    }
    if (value.startsWith('/dev/')) return line;
    const mount = mountOf(mounts, value);
    if (NGINX_FILE_DIRECTIVES[directive] === 'write' && readOnlyRoot && (!mount || mount.readOnly))
      problems.push(`${ctrName}: ${directive} ${value} is not on a writable volume, and the root file system is read-only`);
    if (NGINX_FILE_DIRECTIVES[directive] === 'read' && !mount)
      problems.push(`${ctrName}: ${directive} ${value} is not on a volume; the image would have to provide it`);
    return indent + directive + space + mapPath(mounts, value) + rest;
  }).join('\n');
}

const POD_IP = '127.0.0.2';
const FIELD_REFS = {
  'status.podIP': POD_IP,
  'metadata.name': `${deployment.metadata.name}-test`,
  'metadata.namespace': deployment.metadata.namespace ?? 'default',
  'spec.serviceAccountName': podSpec.serviceAccountName ?? 'default',
};

// A kubelet's expansion of $(NAME) in a command or argument: vars holds the container's variables.
function expand(arg, vars) {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name) =>
    m === '$$' ? '$' : Object.hasOwn(vars, name) ? vars[name] : m);
}

const containers = [];
for (const c of podSpec.containers) {
  const sec = { ...podSec, ...(c.securityContext ?? {}) };
  const mounts = [];
  for (const vm of c.volumeMounts ?? []) {
    const vol = volumes[vm.name];
    if (!vol) {
      problems.push(`${c.name}: volumeMount ${vm.name} names no prepared volume`);
      continue;
    }
    let hostPath = vol.dir;
    if (vm.subPath) {
      // The kubelet creates a missing subPath directory inside the volume.
      hostPath = join(vol.dir, vm.subPath);
      mkdirSync(hostPath, { recursive: true });
      chmodSync(hostPath, fsGroup !== null ? 0o2777 : 0o777);
      own(hostPath);
    }
    mounts.push({ mountPath: vm.mountPath, hostPath, readOnly: !!vm.readOnly || !vol.writable });
  }
  // Literal values and the downward API's fields: values from Secrets or ConfigMaps need a cluster.
  const env = [];
  const vars = {};
  for (const e of c.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (e.valueFrom && !(field in FIELD_REFS)) {
      problems.push(`${c.name}: env ${e.name} comes from a valueFrom this test cannot provide`);
      continue;
    }
    vars[e.name] = e.valueFrom ? FIELD_REFS[field] : expand(e.value ?? '', vars);
    env.push(`${e.name}=${vars[e.name]}`);
  }
  if ((c.envFrom ?? []).length) problems.push(`${c.name}: envFrom, which this test cannot provide`);
  const argv = [...(c.command ?? []), ...(c.args ?? [])];
  if (argv.length === 0) problems.push(`${c.name}: no command (the image's entrypoint would run)`);
  const ctrDir = join(work, 'ctr', c.name);
  const mapped = argv.map(a => expand(a, vars)).map((a, i) => {
    if (i === 0) return a;
    const eq = /^(--?[A-Za-z0-9-]+=)(\/.*)$/.exec(a);
    const [prefix, path] = eq ? [eq[1], eq[2]] : ['', a];
    if (!path.startsWith('/')) return a;
    const host = mapPath(mounts, path);
    // An nginx configuration from a volume: its own paths must be mapped too, in a per-container copy.
    if (host !== path && /nginx/.test(basename(argv[0])) && argv[i - 1] === '-c') {
      mkdirSync(ctrDir, { recursive: true });
      const copy = join(ctrDir, basename(path));
      writeFileSync(copy, mapNginxConf(c.name, mounts, readFileSync(host, 'utf8'), !!sec.readOnlyRootFilesystem));
      chmodSync(copy, 0o644);
      return prefix + copy;
    }
    return prefix + host;
  });
  const ports = {};
  for (const p of c.ports ?? []) ports[p.name ?? String(p.containerPort)] = p.containerPort;
  const probes = {};
  for (const kind of ['liveness', 'readiness', 'startup']) {
    const p = c[`${kind}Probe`];
    if (!p) continue;
    if (p.httpGet) {
      const port = typeof p.httpGet.port === 'string' ? ports[p.httpGet.port] : p.httpGet.port;
      if (port === undefined) problems.push(`${c.name}: ${kind} probe names port ${p.httpGet.port}, which the container does not declare`);
      probes[kind] = { httpGet: { path: p.httpGet.path ?? '/', port, scheme: p.httpGet.scheme ?? 'HTTP' } };
    } else if (p.exec) {
      probes[kind] = { exec: p.exec.command };
    } else if (p.tcpSocket) {
      probes[kind] = { tcpSocket: { port: typeof p.tcpSocket.port === 'string' ? ports[p.tcpSocket.port] : p.tcpSocket.port } };
    } else {
      problems.push(`${c.name}: ${kind} probe of a kind this test cannot run`);
    }
  }
  containers.push({
    name: c.name, argv: mapped, renderedArgv: argv, ports, probes, mounts, env,
    uid: sec.runAsUser ?? null, gid: sec.runAsGroup ?? null,
  });
}

process.stdout.write(JSON.stringify({
  deployment: deployment.metadata.name, fsGroup, podIP: POD_IP, problems, containers,
}, null, 1) + '\n');
