// A corpus served by three search shards (issue 32) against real zoekt-webservers: the repositories
// made here are split by shard_of (tests/tools/shard-of, lib/shard.h) into three index folders, each
// served by its own zoekt-webserver, and also indexed together into a fourth. The connector with
// --shard-urls over the three must answer every query with the files and repositories the connector
// with --zoekt-url over the one finds; with one shard's webserver killed, it still answers, with a note
// naming that shard and its repositories, and /index-status reports the shard's error; a search
// restricted to repositories of the shards that answer asks only those, and its answer is whole; a
// shard that never answers gives the same partial answer once the search's deadline has passed.
// tests/integration/test_sharded_zoekt.sh runs it (and reports a skip when there is no Zoekt here).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { ROOT, runConnector, startHttpConnector, startRealZoekt, stop, tempDir } from '../../mcp/harness.mjs';

const SHARD_OF = join(ROOT, 'build/san/tests/tools/shard-of');
const N = 3;
const PREFIX = 'mirrors/github.com/';
// Nine services with a shared word, a shared helper name and a file or two of their own, so that a
// search's files come from every shard.
const REPOS = {};
for (let i = 0; i < 9; i++) {
  const files = {
    'main.go': `package svc${i}\n\n// Needle in service ${i}\nfunc Handle${i}() { Join("a", "b") }\n`,
    'README.md': `# svc-${i}\n\nNeedle docs for service ${i}.\n`,
  };
  if (i % 2 === 0) files['util/strings.go'] = `package util\n\nfunc Join(a, b string) string { return a + b }\n`;
  if (i % 3 === 0) files['deploy/app.yaml'] = `kind: Deployment\nname: svc-${i}\n`;
  REPOS[`${PREFIX}acme/svc-${i}`] = files;
}

let tmp;
const servers = [];
let all, shards, shardOf;
const setup = (async () => {
  tmp = tempDir();
  const names = Object.keys(REPOS);
  shardOf = new Map(execFileSync(SHARD_OF, [String(N), ...names], { encoding: 'utf8' }).trim().split('\n')
    .map(line => line.split(' ')).map(([k, name]) => [name, Number(k)]));
  all = await startRealZoekt(join(tmp.dir, 'all'), REPOS);
  if (all.skip) return all.skip;
  servers.push(all.child);
  shards = [];
  for (let k = 0; k < N; k++) {
    const part = Object.fromEntries(Object.entries(REPOS).filter(([name]) => shardOf.get(name) === k));
    assert.ok(Object.keys(part).length > 0, `shard ${k} serves some of the test repositories`);
    shards.push(await startRealZoekt(join(tmp.dir, `shard-${k}`), part));
    servers.push(shards[k].child);
  }
  return undefined;
})();
const skip = await setup;
if (skip) test('sharded real Zoekt', { skip }, () => {});

after(async () => {
  for (const child of servers) await stop(child);
  tmp?.cleanup();
});

const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'shards', version: '0' } } });

// Runs the tool calls (an array of [name, args]) through one stdio session of a connector with args;
// resolves to their results, in order.
async function callAll(args, calls) {
  const lines = [init, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ...calls.map(([name, a], i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call',
      params: { name, arguments: a } }))];
  const { code, stdout, stderr } = await runConnector(['--stdio', '--mirror-prefix', PREFIX, ...args],
    lines.join('\n') + '\n');
  assert.equal(code, 0, stderr);
  const byId = new Map(stdout.trim().split('\n').map(l => JSON.parse(l)).map(m => [m.id, m]));
  return calls.map((_, i) => {
    const m = byId.get(i + 1);
    assert.ok(m?.result, `call ${i + 1} answered: ${JSON.stringify(m)}`);
    return m.result;
  });
}

const shardArgs = () => ['--zoekt-url', shards[0].url, '--shard-urls', shards.map(s => s.url).join(',')];
const textOf = res => res.content.map(c => c.text).join('');
const filesOf = res => (res.structuredContent?.files ?? []).map(f => `${f.repository}/${f.path}`).sort();
const reposOf = res => (res.structuredContent?.repositories ?? []).map(r => r.name).sort();

const QUERIES = [
  ['search_code', { query: 'Needle' }],
  ['search_code', { query: 'Needle', max_files: 50 }],
  ['search_code', { query: 'func \\w+\\(', file: '*.go' }],
  ['search_code', { query: 'Join(' }],
  ['search_code', { query: 'kind: Deployment', repo: 'acme/svc-3' }],
  // Asked of one shard alone, which refuses the pattern: read literally, as one webserver's refusal is.
  ['search_code', { query: 'Join(', repo: 'acme/svc-4' }],
  ['search_code', { file: '**/app.yaml' }],
  ['list_files', { repo: 'acme/svc-0' }],
  ['list_files', { repo: 'acme/svc-7' }],
  ['list_repositories', {}],
  ['list_repositories', { filter: 'svc-1' }],
];

test('the three shards answer every query with what one webserver over all of them finds', { skip }, async () => {
  const [one, sharded] = await Promise.all([callAll(['--zoekt-url', all.url], QUERIES), callAll(shardArgs(), QUERIES)]);
  QUERIES.forEach(([name, args], i) => {
    const what = `${name} ${JSON.stringify(args)}`;
    assert.equal(sharded[i].isError, one[i].isError, `${what}: ${textOf(sharded[i])}`);
    assert.equal(one[i].isError, false, `${what}: ${textOf(one[i])}`);
    if (name === 'list_repositories') {
      assert.deepEqual(reposOf(sharded[i]), reposOf(one[i]), what);
      assert.ok(reposOf(one[i]).length > 0, what);
    } else {
      assert.deepEqual(filesOf(sharded[i]), filesOf(one[i]), what);
      assert.ok(filesOf(one[i]).length > 0, what);
      assert.equal(sharded[i].structuredContent.totalFiles, one[i].structuredContent.totalFiles, what);
    }
    assert.ok(!textOf(sharded[i]).includes('Partial answer'), what);
    // How the pattern was read (a refused one is searched as literal text), said alike.
    const readingOf = res => textOf(res).split('\n').filter(line => /regular expression/.test(line));
    assert.deepEqual(readingOf(sharded[i]), readingOf(one[i]), `${what}: how the pattern was read`);
  });
  assert.match(textOf(sharded[QUERIES.findIndex(([, args]) => args.query === 'Join(' && args.repo)]),
    /not a valid regular expression/);
  // Every repository, from whichever shard serves it.
  const listAll = QUERIES.findIndex(([name, args]) => name === 'list_repositories' && !args.filter);
  assert.equal(reposOf(sharded[listAll]).length, Object.keys(REPOS).length);
});

test('max_files holds over all shards: the global first files, counted over all of them', { skip }, async () => {
  const q = [['search_code', { query: 'Needle', max_files: 4 }]];
  const [[one], [sharded]] = await Promise.all([callAll(['--zoekt-url', all.url], q), callAll(shardArgs(), q)]);
  assert.equal(filesOf(sharded).length, 4);
  assert.equal(sharded.structuredContent.totalFiles, one.structuredContent.totalFiles);
  assert.equal(sharded.structuredContent.totalFiles, 18);
});

test('with one shard down, answers are partial, never errors, and /index-status names its error', { skip }, async () => {
  const down = 1;
  const downRepos = Object.keys(REPOS).filter(name => shardOf.get(name) === down).map(n => n.slice(PREFIX.length));
  // The HTTP connector lists every shard once while all answer: its catalogue then names the shard's
  // repositories when it is gone.
  const http = await startHttpConnector(['--mirror-prefix', PREFIX, ...shardArgs()]);
  try {
    let status = await (await fetch(`${http.url}/index-status`)).json();
    assert.equal(status.repositories, Object.keys(REPOS).length);
    assert.deepEqual(status.searchShards.map(s => [s.shard, s.repositories]),
      [0, 1, 2].map(k => [k, Object.keys(REPOS).filter(name => shardOf.get(name) === k).length]));
    assert.ok(status.searchShards.every(s => s.indexBytes > 0 && s.newestIndexTime && s.oldestIndexTime));

    await stop(shards[down].child);
    // The list /index-status reads is at most ZLC_FRESH_MS (2 s) old.
    for (const end = Date.now() + 10000; !status.searchShards[down].error && Date.now() < end;) {
      await new Promise(resolve => setTimeout(resolve, 250));
      status = await (await fetch(`${http.url}/index-status`)).json();
    }
    assert.equal(status.repositories, Object.keys(REPOS).length - downRepos.length);
    assert.match(status.searchShards[down].error, /not reachable/);
    assert.equal(status.searchShards[0].repositories > 0, true);

    const res = await mcpCall(http.url, 'search_code', { query: 'Needle' });
    assert.equal(res.isError, false, textOf(res));
    const text = textOf(res);
    assert.match(text, new RegExp(`^Partial answer: shard ${down} of ${N} did not answer \\(`));
    assert.ok(downRepos.some(name => text.includes(name)), text);
    assert.ok(filesOf(res).every(f => !downRepos.some(name => f.startsWith(`${name}/`))));
    assert.ok(filesOf(res).length > 0);
    assert.match(res.structuredContent.partialAnswer, /^Partial answer/);

    // A search restricted to repositories of shards that answer asks only those: a whole answer.
    const upRepo = Object.keys(REPOS).find(name => shardOf.get(name) !== down).slice(PREFIX.length);
    const routed = await mcpCall(http.url, 'search_code', { query: 'Needle', repo: upRepo });
    assert.equal(routed.isError, false, textOf(routed));
    assert.ok(!textOf(routed).includes('Partial answer'), textOf(routed));
    assert.deepEqual(filesOf(routed), [`${upRepo}/README.md`, `${upRepo}/main.go`]);
    // One restricted to a repository of the missing shard: a partial answer of no files that names the
    // shard and the repository, not a tool error nor "no such repository".
    const gone = await mcpCall(http.url, 'search_code', { query: 'Needle', repo: downRepos[0] });
    assert.equal(gone.isError, false, textOf(gone));
    assert.match(textOf(gone), new RegExp(`^Partial answer: shard ${down} of ${N} did not answer \\(`));
    assert.ok(textOf(gone).includes(downRepos[0]), textOf(gone));
    assert.ok(!textOf(gone).includes('matches no indexed repository'), textOf(gone));
    assert.deepEqual(filesOf(gone), []);

    const repos = await mcpCall(http.url, 'list_repositories', {});
    assert.equal(repos.isError, false, textOf(repos));
    assert.match(textOf(repos), /^Partial answer: shard 1 of 3/);
  } finally {
    await stop(http.child);
  }
  // Over stdio, with no list taken while every shard answered, the note says its repositories are unknown.
  const [res] = await callAll(shardArgs(), [['search_code', { query: 'Needle' }]]);
  assert.equal(res.isError, false, textOf(res));
  assert.match(textOf(res), /shard 1 of 3 did not answer .*which repositories it serves is unknown/s);
});

test('a shard slow past the deadline gives a partial answer naming it', { skip }, async () => {
  // Shard 1 accepts the connection and the request, and never answers.
  const held = [];
  const slow = createServer((req, res) => { held.push(res); });
  await new Promise(resolve => slow.listen(0, '127.0.0.1', resolve));
  const urls = shards.map(sh => sh.url);
  urls[1] = `http://127.0.0.1:${slow.address().port}`;
  try {
    const [res] = await callAll(['--zoekt-url', urls[0], '--shard-urls', urls.join(','), '--search-timeout', '2s',
      '--list-timeout', '2s'], [['search_code', { query: 'Needle', max_files: 50 }]]);
    assert.equal(res.isError, false, textOf(res));
    assert.match(textOf(res), /^Partial answer: shard 1 of 3 did not answer \(/);
    const up = Object.keys(REPOS).filter(name => shardOf.get(name) !== 1).map(n => n.slice(PREFIX.length));
    assert.deepEqual([...new Set(filesOf(res).map(f => f.split('/').slice(0, 2).join('/')))].sort(), up.sort());
  } finally {
    for (const res of held) res.destroy();
    slow.close();
  }
});

// One tools/call over Streamable HTTP: initialize, then the call in the session it opened.
async function mcpCall(url, name, args) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: init });
  assert.equal(res.status, 200);
  const session = res.headers.get('mcp-session-id');
  await res.text();
  const h = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch(`${url}/mcp`, { method: 'POST', headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  const call = await fetch(`${url}/mcp`, { method: 'POST', headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }) });
  const body = await call.text();
  const json = body.startsWith('{') ? JSON.parse(body)
    : JSON.parse(body.split('\n').find(l => l.startsWith('data: ')).slice(6));
  return json.result;
}
