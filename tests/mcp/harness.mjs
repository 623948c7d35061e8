// Shared by the tests/mcp/*.test.mjs suites: starts the Zoekt replay server and the connector as child
// processes and guarantees they are stopped, whatever way a test ends.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';

export const ROOT = process.env.ZK_ROOT ?? '/work/main';
export const BIN = process.env.ZK_BIN ?? join(ROOT, 'build/san/bin');
export const CONNECTOR = join(BIN, 'zoekt-connector');
export const REPLAY = join(ROOT, 'build/san/tests/tools/zoekt-replay');
export const FIXTURES = join(ROOT, 'tests/fixtures/zoekt');

const children = new Set();

function killAll() {
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch { /* already gone */ }
  }
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { killAll(); process.exit(1); });

export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'zk-mcp-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function track(child) {
  children.add(child);
  child.exited = new Promise(resolve => child.once('exit', (code, signal) => {
    children.delete(child);
    resolve({ code, signal });
  }));
  return child;
}

// Stops a child with SIGTERM, then SIGKILL after a grace period; resolves to its exit status.
export async function stop(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const status = await child.exited;
  clearTimeout(timer);
  return status;
}

async function waitFor(check, what, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

// Starts the replay server on a free port; resolves to { url, child }.
export async function startReplay(dir) {
  const portFile = join(dir, 'replay.port');
  const child = track(spawn(REPLAY, ['--fixtures', FIXTURES, '--port', '0', '--port-file', portFile],
    { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr.on('data', d => { stderr += d; });
  const port = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`zoekt-replay exited: ${stderr}`);
    try { return readFileSync(portFile, 'utf8').trim() || null; } catch { return null; }
  }, 'the replay server port');
  return { url: `http://127.0.0.1:${port}`, child };
}

// Collects a child's stderr, which carries the connector's JSON log lines.
function collectLog(child) {
  child.log = '';
  child.stderr.on('data', d => { child.log += d; });
}

export function logRecords(child) {
  return child.log.split('\n').filter(l => l.startsWith('{')).map(l => {
    try { return JSON.parse(l); } catch { return {}; }
  });
}

export async function waitForLog(child, msg, timeoutMs = 10000) {
  return waitFor(() => logRecords(child).find(r => r.msg === msg), `log "${msg}"`, timeoutMs);
}

// Starts the connector over HTTP on a free port; resolves to { url, child }.
export async function startHttpConnector(args) {
  const child = track(spawn(CONNECTOR, ['--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] }));
  collectLog(child);
  const rec = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`zoekt-connector exited: ${child.log}`);
    return logRecords(child).find(r => r.msg === 'Serving MCP over Streamable HTTP');
  }, 'the connector to listen');
  return { url: `http://127.0.0.1:${rec.port}`, child };
}

// Runs the connector with args to completion; resolves to { code, stdout, stderr }.
export function runConnector(args, input = '') {
  return new Promise(resolve => {
    const child = track(spawn(CONNECTOR, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '', stderr = '';
    child.stdout.on('data', d => { stdout += d; });
    child.stderr.on('data', d => { stderr += d; });
    child.stdin.end(input);
    child.exited.then(({ code }) => resolve({ code, stdout, stderr }));
  });
}

export function writeTokenFile(dir, tokens) {
  const path = join(dir, 'tokens');
  writeFileSync(path, `# accepted tokens\n${tokens.join('\n')}\n`);
  return path;
}

// The text of a tools/call result's first content block.
export function textOf(result) {
  return (result.content ?? []).filter(b => b.type === 'text').map(b => b.text).join('\n');
}

// The glob must reach Zoekt as an anchored file: regex, and whatever comes back must be YAML. The
// replay server answers only recorded queries: when a fixture records this exact query, results are
// required too; without one the answer is Zoekt's "no results" and only the query can be checked.
export function assertYamlOnly(res) {
  const q = res.structuredContent.query;
  assert.match(q, /file:\S*\\\.yaml\$/);
  assert.doesNotMatch(q, /\*\.yaml/);
  for (const f of res.structuredContent.files) assert.match(f.path, /\.yaml$/);
  if (recordedQueries().has(q)) assert.ok(res.structuredContent.files.length >= 1, `a fixture answers ${q}`);
}

function recordedQueries() {
  const qs = new Set();
  for (const name of readdirSync(FIXTURES).filter(n => n.endsWith('.request.json'))) {
    try { qs.add(JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')).Q); } catch { /* not a search */ }
  }
  return qs;
}

// Real Zoekt (tests/support/zoekt.sh): makes a git repository for each entry of repos ({name: {path:
// text}}) at repos/<name>, indexes them with zoekt-git-index (which names each after its path below
// repos/) and starts zoekt-webserver on a free loopback port. Resolves to { url, child }, or to
// { skip: reason } when this machine has no Zoekt (tests/support/zoekt.sh bin says why). The repositories named in opts.ctags are
// indexed as a corpus is, by controller/assets/indexer.sh with the host's universal-ctags (symbols);
// opts.indexerLog gets that run's output lines. So are those named in opts.branches ({name: {branch:
// {path: text}}}), each with more branches made from main (the files given replace or add to main's),
// indexed on main and those branches (a null text deletes the file there). opts.gitConfig ({name:
// {key: value}}) is set in a repository's git config before it is indexed (zoekt.web-url, for one).
// The others are indexed with -disable_ctags.
export async function startRealZoekt(dir, repos, opts = {}) {
  const helper = join(ROOT, 'tests/support/zoekt.sh');
  const found = spawnSync(helper, ['bin'], { encoding: 'utf8' });
  if (found.status === 3) return { skip: found.stderr.trim() };
  if (found.status !== 0) throw new Error(`zoekt.sh bin failed: ${found.stderr}`);
  const bin = found.stdout.trim();
  const index = join(dir, 'index');
  mkdirSync(index, { recursive: true });
  const withCtags = opts.ctags ?? [];
  const listed = [];
  const root = join(dir, 'repos');
  for (const [name, files] of Object.entries(repos)) {
    const repo = join(root, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), text);
    }
    execFileSync(helper, ['repo', root, name]);
    for (const [key, value] of Object.entries(opts.gitConfig?.[name] ?? {}))
      execFileSync('git', ['-C', repo, 'config', key, value]);
    const branches = opts.branches?.[name] ?? {};
    for (const [branch, changed] of Object.entries(branches)) {
      const git = args => execFileSync('git', ['-C', repo, '-c', 'user.name=zoekt-operator-tests',
        '-c', 'user.email=tests@zoekt-operator.invalid', ...args]);
      git(['checkout', '-q', '-b', branch, 'main']);
      for (const [path, text] of Object.entries(changed)) {
        if (text === null) {
          rmSync(join(repo, path));
          continue;
        }
        mkdirSync(dirname(join(repo, path)), { recursive: true });
        writeFileSync(join(repo, path), text);
      }
      git(['add', '-A']);
      git(['commit', '-q', '-m', `branch ${branch}`]);
      git(['checkout', '-q', 'main']);
    }
    if (withCtags.includes(name) || Object.keys(branches).length)
      listed.push(`${name} file://${repo} ${['main', ...Object.keys(branches)].join(',')}`);
  }
  // The indexer first: it removes the shards of repositories it does not list.
  if (listed.length) {
    writeFileSync(join(dir, 'repositories.txt'), listed.join('\n') + '\n');
    const out = execFileSync('sh', [join(ROOT, 'controller/assets/indexer.sh')], { encoding: 'utf8', env: {
      ...process.env, REPOS_FILE: join(dir, 'repositories.txt'), DATA_DIR: join(dir, 'data'), INDEX_DIR: index,
      WORK_DIR: join(dir, 'indexer-work'), CREDENTIALS_DIR: join(dir, 'no-credentials'),
      TERMINATION_LOG: join(dir, 'termination-log'), ZOEKT_GIT_INDEX: join(bin, 'zoekt-git-index') } });
    if (opts.indexerLog) opts.indexerLog.push(...out.trim().split('\n'));
  }
  for (const name of Object.keys(repos)) {
    if (withCtags.includes(name) || opts.branches?.[name]) continue;
    execFileSync(helper, ['index', index, root, name, '-disable_ctags'], { stdio: 'ignore' });
  }
  const port = execFileSync(join(ROOT, 'scripts/free-port.sh'), { encoding: 'utf8' }).trim();
  const child = track(spawn(join(bin, 'zoekt-webserver'), ['-index', index, '-listen', `127.0.0.1:${port}`, '-rpc'],
    { stdio: ['ignore', 'ignore', 'pipe'] }));
  collectLog(child);
  const url = `http://127.0.0.1:${port}`;
  const want = Object.keys(repos).length;
  const end = Date.now() + 20000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`zoekt-webserver exited: ${child.log}`);
    try {
      const res = await fetch(`${url}/api/list`, { method: 'POST', body: '{"Q":""}' });
      if (res.ok && ((await res.json()).List?.Repos ?? []).length === want) return { url, child };
    } catch { /* not listening yet */ }
    if (Date.now() > end) throw new Error(`zoekt-webserver did not serve ${want} repositories: ${child.log}`);
    await sleep(50);
  }
}
