// What agents missed (issue 30), against the real zoekt-webserver through the official SDK client over
// stdio: pages that never repeat a file and together give every match, code that happens to be a valid
// regular expression found as the text it is, and a repository indexed on two branches read on either.
// tests/integration/test_real_zoekt.sh runs it beside tools.test.mjs; without Zoekt it counts one skip.
import { after, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CONNECTOR, ROOT, startRealZoekt, stop, tempDir, textOf } from '../../mcp/harness.mjs';

const require = createRequire(join(ROOT, 'tests/mcp/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

// Twelve files that mention the needle, so that pages of five make three, and a file that does not.
const WIDE = Object.fromEntries(Array.from({ length: 12 }, (_, i) =>
  [`pkg/f${String(i).padStart(2, '0')}.go`, `package pkg\n\n// PagedNeedle ${i}\nfunc F${i}() {}\n`]));
WIDE['pkg/other.go'] = 'package pkg\n';
// Calls as agents write them: each is a valid regular expression that matches nothing, and text that
// is in the code.
const CODE = [
  'package main', '', 'import ("os"; "time")', '', 'func main() {',
  '\ttime.Sleep(5 * time.Second)', '\tpath := os.Getenv("KUBECONFIG")', '\t_ = path', '}', '',
].join('\n');
// Twelve repositories (twelve shards) with the same file: their files score the same, and Zoekt sends
// files of equal score in the order its shards finish, which changes from one request to the next.
const TIED = Object.fromEntries(Array.from({ length: 12 }, (_, i) =>
  [`mirrors/tie/t${String(i).padStart(2, '0')}`, { 'tie.go': 'package tie\n\n// TiedNeedle\n' }]));
const REPOS = {
  ...TIED,
  'mirrors/acme/wide': WIDE,
  'mirrors/acme/code': { 'main.go': CODE },
  'mirrors/acme/branched': { 'VERSION': 'version on main\n', 'only-main.txt': 'BranchToken main\n' },
  'mirrors/acme/linked': { 'dir/a b.go': 'package a\n\n// LinkedNeedle\n' },
};
// acme/linked's mirror says where it lives, as zoekt-mirror-github writes it: Zoekt records the code
// host's templates, and the connector gives each file's address.
const GIT_CONFIG = { 'mirrors/acme/linked': { 'zoekt.web-url': 'https://github.com/acme/linked', 'zoekt.web-url-type': 'github' } };
// acme/branched is indexed on main and dev; VERSION differs between them, and each has a file the other
// has not.
const BRANCHES = { 'mirrors/acme/branched': { dev: { 'VERSION': 'version on dev\n', 'only-dev.txt': 'BranchToken dev\n',
  'only-main.txt': null } } };

const tmp = tempDir();
const zoekt = await startRealZoekt(tmp.dir, REPOS, { branches: BRANCHES, gitConfig: GIT_CONFIG });
let client;

after(async () => {
  await client?.close();
  if (zoekt?.child) await stop(zoekt.child);
  tmp.cleanup();
});

if (zoekt.skip) {
  test('real Zoekt', { skip: zoekt.skip }, () => {});
} else {
  client = new Client({ name: 'paging-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: CONNECTOR,
    args: ['--stdio', '--zoekt-url', zoekt.url, '--mirror-prefix', 'mirrors/'], stderr: 'ignore' }));
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    return res;
  };
  const paths = res => res.structuredContent.files.map(f => `${f.repository}/${f.path}`);

  test('search_code pages: no file twice, every file once, and the last page has no cursor', async () => {
    const seen = [];
    let res = await call('search_code', { query: 'PagedNeedle', max_files: 5 });
    for (let page = 1; ; page++) {
      assert.equal(res.isError, false, textOf(res));
      seen.push(...paths(res));
      const cursor = res.structuredContent.nextCursor;
      if (page < 3) {
        assert.equal(paths(res).length, 5, textOf(res));
        assert.match(textOf(res), new RegExp(`Next page: the same arguments with "cursor":"${cursor}"`));
      } else {
        assert.equal(paths(res).length, 2, textOf(res));
        assert.equal(cursor, undefined, textOf(res));
        assert.match(textOf(res), /^Query: .*\nFiles 11 to 12 of 12 \(12 matches\)/);
        break;
      }
      res = await call('search_code', { query: 'PagedNeedle', max_files: 5, cursor });
    }
    assert.equal(new Set(seen).size, 12, seen.join(' '));
    assert.deepEqual([...seen].sort(), Object.keys(WIDE).filter(p => p !== 'pkg/other.go').map(p => `acme/wide/${p}`));
  });

  test('pages of files that score the same, in twelve shards: no file twice, every file once, every time', async () => {
    for (let round = 0; round < 5; round++) {
      const seen = [];
      let res = await call('search_code', { query: 'TiedNeedle', max_files: 5 });
      for (;;) {
        assert.equal(res.isError, false, textOf(res));
        seen.push(...paths(res));
        if (!res.structuredContent.nextCursor) break;
        res = await call('search_code', { query: 'TiedNeedle', max_files: 5, cursor: res.structuredContent.nextCursor });
      }
      assert.deepEqual([...seen].sort(), Object.keys(TIED).map(n => `${n.replace('mirrors/', '')}/tie.go`), `round ${round}`);
    }
  });

  test('a cursor given with another query is refused, saying why', async () => {
    const first = await call('search_code', { query: 'PagedNeedle', max_files: 5 });
    const res = await call('search_code', { query: 'PagedNeedle', repo: 'code', max_files: 5,
      cursor: first.structuredContent.nextCursor });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /argument "cursor" belongs to another query/);
  });

  for (const query of ['time.Sleep(5 * time.Second)', 'os.Getenv("KUBECONFIG")']) {
    test(`code that is a valid regex but matches nothing is searched as text: ${query}`, async () => {
      const res = await call('search_code', { query });
      assert.equal(res.isError, false, textOf(res));
      assert.deepEqual(paths(res), ['acme/code/main.go'], textOf(res));
      assert.match(textOf(res), /Note: As a regular expression the pattern matched nothing; read as literal text, it matched what is shown\./);
      // Read as a regex it found nothing; the literal query is the one that ran, and it is echoed.
      assert.ok(res.structuredContent.query.includes('\\('), res.structuredContent.query);
    });
  }

  test('a literal reading that finds nothing either says so', async () => {
    const res = await call('search_code', { query: 'time.Sleep(6 * time.Second)' });
    assert.equal(res.isError, false, textOf(res));
    assert.equal(res.structuredContent.files.length, 0);
    assert.match(textOf(res), /read as literal text, it matched nothing either\./);
  });

  test('a regex that matches is not read again as text', async () => {
    const res = await call('search_code', { query: 'time\\.Sleep\\([0-9]+ \\* time\\.Second\\)' });
    assert.deepEqual(paths(res), ['acme/code/main.go']);
    assert.equal(res.structuredContent.note, undefined, textOf(res));
  });

  test('ref: search_code on one branch of a repository indexed on two', async () => {
    let res = await call('search_code', { query: 'BranchToken', repo: 'branched' });
    assert.deepEqual(paths(res).sort(), ['acme/branched/only-dev.txt', 'acme/branched/only-main.txt'], textOf(res));
    res = await call('search_code', { query: 'BranchToken', repo: 'branched', ref: 'dev' });
    assert.deepEqual(paths(res), ['acme/branched/only-dev.txt'], textOf(res));
    assert.match(res.structuredContent.query, / branch:dev/);
    res = await call('search_code', { query: 'BranchToken', repo: 'branched', ref: 'main' });
    assert.deepEqual(paths(res), ['acme/branched/only-main.txt'], textOf(res));
  });

  test('read_file: a file that differs between branches is read on either, and the answer names the other', async () => {
    let res = await call('read_file', { repo: 'branched', path: 'VERSION' });
    assert.equal(res.isError, false, textOf(res));
    assert.match(textOf(res), /1: version on main\n/);
    assert.match(textOf(res), /Other versions of this file, on branches: dev \(pass ref to read one\)\./);
    res = await call('read_file', { repo: 'branched', path: 'VERSION', ref: 'dev' });
    assert.equal(res.isError, false, textOf(res));
    assert.match(textOf(res), /1: version on dev\n/);
    assert.ok(!textOf(res).includes('Other versions'), textOf(res));
  });

  test('the code host address of each file where Zoekt has its templates, and none elsewhere', async () => {
    const commit = execFileSync('git', ['-C', join(tmp.dir, 'repos', 'mirrors/acme/linked'), 'rev-parse', 'HEAD'],
      { encoding: 'utf8' }).trim();
    const url = `https://github.com/acme/linked/blob/${commit}/dir/a%20b.go`;
    let res = await call('search_code', { query: 'LinkedNeedle' });
    assert.deepEqual(res.structuredContent.files.map(f => f.url), [`${url}#L3`], textOf(res));
    res = await call('read_file', { repo: 'linked', path: 'dir/a b.go' });
    assert.equal(res.structuredContent.url, url);
    assert.match(textOf(res), new RegExp(`^acme/linked/dir/a b\\.go @[0-9a-f]+ \\(branch HEAD\\), on the code host ${url.replace(/[.?]/g, '\\$&')}, lines 1-3 of 3\n`));
    res = await call('search_code', { query: 'BranchToken', repo: 'branched' });
    assert.ok(res.structuredContent.files.every(f => f.url === undefined), textOf(res));
  });

  test('list_repositories pages by name', async () => {
    const seen = [];
    let res = await call('list_repositories', { limit: 2 });
    for (;;) {
      assert.equal(res.isError, false, textOf(res));
      seen.push(...res.structuredContent.repositories.map(r => r.name));
      const cursor = res.structuredContent.nextCursor;
      if (!cursor) break;
      assert.match(textOf(res), /Next page: the same arguments with "cursor":/);
      res = await call('list_repositories', { limit: 2, cursor });
    }
    assert.deepEqual(seen, Object.keys(REPOS).map(n => n.replace('mirrors/', '')).sort());
  });
}
