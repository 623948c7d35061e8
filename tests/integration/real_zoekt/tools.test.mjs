// The connector against the real zoekt-webserver: git repositories made here are indexed with the real
// zoekt-git-index (tests/support/zoekt.sh), and every tool is called through the official SDK client,
// over stdio and over Streamable HTTP. tests/integration/test_real_zoekt.sh runs it (and reports a skip
// when there is no Zoekt here); run alone, it counts one skip itself. The
// recordings in tests/fixtures/zoekt stay for shapes a live server cannot be made to produce.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { CONNECTOR, ROOT, startHttpConnector, startRealZoekt, stop, tempDir, textOf } from '../../mcp/harness.mjs';

// The SDK is installed for the tests/mcp suites; resolve it from there rather than installing it twice.
const require = createRequire(join(ROOT, 'tests/mcp/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const PAY_LINES = Array.from({ length: 300 }, (_, i) => `line ${i + 1} of pay.go`).join('\n') + '\nNeedle payments\n';
// Code as agents search it (issue 19): a definition with an unbalanced-looking prefix, sleeps that a
// regex with spaces and escapes must find exactly as git grep -E does, and a file that has every word of
// "type SharedInformer interface" but not the phrase.
const FACTORY = [
  'package informers', '', 'type SharedInformer interface {', '\tRun(stop <-chan struct{})', '}', '',
  'func NewSharedInformerFactory(client Interface, resync time.Duration) SharedInformerFactory {',
  '\ttime.Sleep(5 * time.Second)', '\treturn nil', '}', '',
].join('\n');
const WAIT = [
  'package informers', '', 'func wait() {', '\ttime.Sleep(10 * time.Second)', '\ttime.Sleep(d)',
  '\ttime.Sleep(1*time.Second)', '\ttime.Sleep(250 * time.Millisecond)', '\ttime.sleep(3 * time.Second)', '}',
  '// A SharedInformer is an interface; see the type in factory.go.', '// NewSharedInformerFactory(',
  '',
].join('\n');
// Patterns an agent writes whose reading a translation can get wrong (make bench's pattern section found
// each on the organisation corpus): blanks at a pattern's ends (" nil)" is not "nil)"), and smart case
// where Zoekt's own case:auto reads \w and (?i) as upper case.
const AGENT = [
  'package informers', '', 'func check() error {', '\tif err := run(nil); err != nil {', '\t\treturn wrapError(err)',
  '\t}', '\tdefer close(nil)', '\tdeferred := newerror()', '\t// FIXME: retry', '\t// fixme(alice): and here',
  '\treturn wrap(NewError(deferred), nil)', '}', '',
].join('\n');
// find_references: a definition and uses of ChargeCard, two on one line, and near misses (ChargeCards,
// chargecard) that a word-bounded, case-sensitive search must leave out.
const CHARGE = 'package pay\n\nfunc ChargeCard(c Card) error {\n\treturn nil\n}\n\nfunc retry() { ChargeCard(c); ChargeCard(c) }\n';
const CLIENT = 'package bulk\n\n// ChargeCard charges.\nfunc run() { pay.ChargeCard(c) }\nvar ChargeCards = 1\nvar chargecard = 2\n';
// find_dependents: manifests that require github.com/acme/payments (a require block, a one-line require of
// its /v2, an npm key), and near misses it must leave out: a longer module name, go.sum, and the
// module's own go.mod, whose module line names it without a version.
const BULKHEAD_GO_MOD = [
  'module github.com/acme/bulkhead', '', 'go 1.22', '', 'require (', '\tgithub.com/acme/payments v1.2.0',
  '\tgithub.com/acme/paymentsx v0.1.0 // indirect', ')', '',
].join('\n');
const REPOS = {
  'mirrors/github.com/acme/bulk': { 'bulk.go': 'package bulk\n\n// Needle in bulk\nfunc Bulk() {}\n',
    'informers/factory.go': FACTORY, 'informers/wait.go': WAIT, 'informers/agent.go': AGENT, 'client.go': CLIENT },
  'mirrors/github.com/acme/bulkhead': { 'head.go': 'package bulkhead\n\n// Needle in bulkhead\n',
    'go.mod': BULKHEAD_GO_MOD, 'go.sum': 'github.com/acme/payments v1.2.0 h1:c2FtcGxl\n' },
  'mirrors/github.com/acme/payments': { 'src/pay.go': PAY_LINES, 'README.md': '# payments\n',
    'src/charge.go': CHARGE, 'go.mod': 'module github.com/acme/payments\n\ngo 1.22\n', 'deploy/app.yaml': 'kind: Deployment\n', 'deploy/db.yaml': 'kind: StatefulSet\n',
    'deploy/base/kustomization.yaml': 'resources: []\n', 'deploy/notes.md': 'deploy notes\n', 'ci.yaml': 'on: push\n' },
  'mirrors/github.com/other/payments-legacy': { 'old.go': 'package old\n\n// Needle in the old payments\n',
    'go.mod': 'module github.com/other/payments-legacy\n\nrequire github.com/acme/payments/v2 v2.0.1\n',
    'web/package.json': '{\n  "dependencies": {\n    "github.com/acme/payments": "^3.1.0"\n  }\n}\n' },
};
// find_symbol: two repositories indexed as a corpus is (indexer.sh with universal-ctags), Go and C,
// with a definition of the same name in both and kinds to filter on.
const GEO_GO = [
  'package geo', '', 'type Point struct {', '\tX, Y int', '}', '', 'type Shape interface {', '\tArea() int', '}', '',
  'func NewPoint(x, y int) Point { return Point{x, y} }', '',
  'func (p Point) Area() int { return 0 }', '', 'const MaxPoints = 64', '',
].join('\n');
const GEO_C = [
  '#define MAX_POINTS 64', '', 'struct point { int x, y; };', '',
  'static int point_area(const struct point *p) { return 0; }', '',
  'int NewPoint(int x, int y) { return x + y; }', '',
].join('\n');
REPOS['mirrors/github.com/acme/geo'] = { 'geo/point.go': GEO_GO, 'c/point.c': GEO_C, 'README.md': 'NewPoint docs\n' };
REPOS['mirrors/github.com/acme/shapes'] = { 'shapes.go': 'package shapes\n\nfunc NewPointSet() {}\n' };
const CTAGS = ['mirrors/github.com/acme/geo', 'mirrors/github.com/acme/shapes'];
const PREFIX = ['--mirror-prefix', 'mirrors/github.com/'];

let tmp, zoekt;
const indexerLog = [];
const setup = (async () => {
  tmp = tempDir();
  zoekt = await startRealZoekt(tmp.dir, REPOS, { ctags: CTAGS, indexerLog });
  return zoekt;
})();
const skip = (await setup).skip;

// One skipped test says why (tests/run.sh counts it): Zoekt is the one input a machine may lack, under
// CI too (need_zoekt in tests/integration/lib.sh).
if (skip) test('real Zoekt', { skip }, () => {});

after(async () => {
  if (zoekt?.child) await stop(zoekt.child);
  tmp?.cleanup();
});

const call = (client, name, args) => client.callTool({ name, arguments: args });
// The commit a test repository's HEAD is at (as zoekt-git-index indexed it).
const commitOf = name => execFileSync('git', ['-C', join(tmp.dir, 'repos', name), 'rev-parse', 'HEAD'],
  { encoding: 'utf8' }).trim();
const repositories = res => res.structuredContent.files.map(f => f.repository).sort();

// The behaviour every transport must show; client() returns the connected SDK client.
function toolChecks(client) {
  test('tools/list offers the eight tools', async () => {
    const { tools } = await client().listTools();
    assert.deepEqual(tools.map(t => t.name).sort(), ['corpus_status', 'find_dependents', 'find_references', 'find_symbol', 'list_files', 'list_repositories', 'read_file', 'search_code']);
  });

  test('find_symbol: an exact name finds its definitions in Go and C, each with kind and scope', async () => {
    const res = await call(client(), 'find_symbol', { name: 'NewPoint' });
    assert.equal(res.isError, false, textOf(res));
    const defs = res.structuredContent.files.flatMap(f => f.definitions.map(d => `${f.repository}/${f.path}:${d.line} ${d.kind} ${d.symbol}`));
    assert.deepEqual(defs.sort(), ['acme/geo/c/point.c:7 function NewPoint', 'acme/geo/geo/point.go:11 func NewPoint']);
    assert.match(textOf(res), /\n11 func NewPoint \(in package geo\): func NewPoint\(x, y int\) Point/);
    assert.match(textOf(res), /\n7 function NewPoint: int NewPoint\(int x, int y\)/);
    // The README mentions it, but a mention is no definition.
    assert.ok(!textOf(res).includes('README.md'));
  });

  test('find_symbol: a glob, a regex and a kind filter', async () => {
    let res = await call(client(), 'find_symbol', { name: 'NewPoint*' });
    assert.deepEqual(res.structuredContent.files.flatMap(f => f.definitions.map(d => d.symbol)).sort(), ['NewPoint', 'NewPoint', 'NewPointSet']);
    res = await call(client(), 'find_symbol', { name: '^[Pp]oint', regex: true, repo: 'geo' });
    assert.deepEqual(res.structuredContent.files.flatMap(f => f.definitions.map(d => d.symbol)).sort(), ['Point', 'point', 'point_area']);
    res = await call(client(), 'find_symbol', { name: '*', kind: 'type', repo: 'geo' });
    assert.deepEqual(res.structuredContent.files.flatMap(f => f.definitions.map(d => `${d.kind} ${d.symbol}`)).sort(),
      ['interface Shape', 'struct Point', 'struct point']);
    res = await call(client(), 'find_symbol', { name: '*', kind: 'method', repo: 'geo' });
    assert.deepEqual(res.structuredContent.files.flatMap(f => f.definitions.map(d => `${d.symbol} in ${d.parentKind} ${d.parent}`)),
      ['Area in struct geo.Point']);
    res = await call(client(), 'find_symbol', { name: '*', kind: 'macro', file: '*.c' });
    assert.deepEqual(res.structuredContent.files.flatMap(f => f.definitions.map(d => d.symbol)), ['MAX_POINTS']);
  });

  test('find_symbol: repositories indexed without ctags are named, with how to search their text', async () => {
    let res = await call(client(), 'find_symbol', { name: 'Bulk' });
    assert.equal(res.structuredContent.files.length, 0);
    assert.match(res.structuredContent.note, /^4 of the 6 repositories searched have no symbol data \(indexed without ctags\), so definitions there are not found here: acme\/bulk, acme\/bulkhead, acme\/payments, other\/payments-legacy\. Search their text with find_references \{"symbol":"Bulk"\} or search_code\.$/);
    res = await call(client(), 'find_symbol', { name: 'Bulk', repo: 'bulk' });
    assert.match(textOf(res), /Note: the repository searched is indexed; the query matched nothing in it. The repository searched has no symbol data \(indexed without ctags\), so definitions there are not found here: acme\/bulk\./);
    res = await call(client(), 'find_symbol', { name: 'NewPoint', repo: 'geo' });
    assert.equal(res.structuredContent.note, undefined);
  });

  test('find_symbol: within its budget, every file counted', async () => {
    const res = await call(client(), 'find_symbol', { name: '*', max_files: 1 });
    assert.equal(res.structuredContent.shownFiles, 1);
    assert.equal(res.structuredContent.complete, false);
    assert.deepEqual(res.structuredContent.truncation, ['max_files']);
    assert.match(textOf(res), /\(2 more files not shown: raise max_files/);
    assert.ok(Buffer.byteLength(textOf(res)) <= 16384);
  });

  test('find_symbol: a name that is not an identifier or glob is refused, saying how', async () => {
    const res = await call(client(), 'find_symbol', { name: 'func NewPoint(' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /must be an identifier or a glob over one .* pass regex: true/);
  });

  test('find_dependents: the manifests that require a module, one line each with the version', async () => {
    const res = await call(client(), 'find_dependents', { package: 'github.com/acme/payments' });
    assert.equal(res.isError, false, textOf(res));
    const deps = res.structuredContent.dependents.map(d => `${d.repository}/${d.path}:${d.line} ${d.text.trim()}`);
    assert.deepEqual(deps, [
      'acme/bulkhead/go.mod:6 github.com/acme/payments v1.2.0',
      'other/payments-legacy/go.mod:3 require github.com/acme/payments/v2 v2.0.1',
      'other/payments-legacy/web/package.json:3 "github.com/acme/payments": "^3.1.0"',
    ]);
    assert.match(textOf(res), /\ngithub\.com\/acme\/payments is required by 3 manifests in 2 repositories \(3 shown, by repository\)\.\n/);
    assert.match(textOf(res), /\nacme\/bulkhead {2}go\.mod:6 {2}github\.com\/acme\/payments v1\.2\.0\n/);
  });

  test('find_dependents: none, and a repository that selects nothing, are told apart', async () => {
    let res = await call(client(), 'find_dependents', { package: 'github.com/acme/nothing' });
    assert.equal(res.isError, false, textOf(res));
    assert.match(textOf(res), /is required by 0 manifests\. Searched go\.mod, package\.json, requirements\*\.txt, pyproject\.toml and Cargo\.toml/);
    res = await call(client(), 'find_dependents', { package: 'github.com/acme/payments', repo: 'bulkk' });
    assert.match(textOf(res), /Note: "bulkk" matches no indexed repository; closest: acme\/bulk/);
  });

  test('a plain name selects the whole name or trailing segments: bulk is not bulkhead', async () => {
    const res = await call(client(), 'search_code', { query: 'Needle', repo: 'bulk' });
    assert.equal(res.isError, false, textOf(res));
    assert.deepEqual(repositories(res), ['acme/bulk']);
    assert.match(textOf(res), /More of a file: read_file/);
  });

  for (const repo of ['payments', 'acme/payments', 'mirrors/github.com/acme/payments',
    'https://github.com/acme/payments.git', 'git@github.com:acme/payments.git']) {
    test(`repo ${repo} selects acme/payments`, async () => {
      const res = await call(client(), 'search_code', { query: 'Needle', repo });
      assert.deepEqual(repositories(res), ['acme/payments'], textOf(res));
    });
  }

  test('a glob is anchored at a segment: payments* selects both payments repositories', async () => {
    const res = await call(client(), 'search_code', { query: 'Needle', repo: 'payments*' });
    assert.deepEqual(repositories(res), ['acme/payments', 'other/payments-legacy'], textOf(res));
  });

  test('a name that selects nothing gets the closest indexed names', async () => {
    const res = await call(client(), 'search_code', { query: 'Needle', repo: 'bulkk' });
    assert.equal(res.structuredContent.files.length, 0);
    assert.match(textOf(res), /"bulkk" matches no indexed repository; closest: acme\/bulk/);
    assert.doesNotMatch(textOf(res), /not indexed/);
  });

  test('a known repository without a match says so', async () => {
    const res = await call(client(), 'search_code', { query: 'nothing-like-this', repo: 'bulk' });
    assert.match(textOf(res), /the repository searched is indexed; the query matched nothing in it/);
  });

  test('list_repositories filters by the same rules, then by substring, then suggests', async () => {
    let res = await call(client(), 'list_repositories', { filter: 'bulk' });
    assert.match(textOf(res), new RegExp(`^1 of 6 repositories match "bulk"\\.\\nacme/bulk {2}HEAD@${commitOf('mirrors/github.com/acme/bulk').slice(0, 12)} {2}indexed \\S+ \\(\\d+[smhd] ago\\)\\n`));
    res = await call(client(), 'list_repositories', { filter: 'https://github.com/acme/bulk.git' });
    assert.deepEqual(res.structuredContent.repositories.map(r => r.name), ['acme/bulk']);
    res = await call(client(), 'list_repositories', { filter: 'ulkhe' });
    assert.deepEqual(res.structuredContent.repositories.map(r => r.name), ['acme/bulkhead']);
    res = await call(client(), 'list_repositories', { filter: 'paymnts' });
    assert.match(textOf(res), /0 of 6 repositories match "paymnts"; closest: acme\/payments/);
  });

  test('read_file shows numbered lines with branch and commit, then how to read on', async () => {
    let res = await call(client(), 'read_file', { repo: 'payments', path: 'src/pay.go' });
    assert.equal(res.isError, false, textOf(res));
    let text = textOf(res);
    assert.match(text, /^acme\/payments\/src\/pay\.go @[0-9a-f]{8} \(branch HEAD\), lines 1-200 of 301\n1: line 1 of pay\.go\n/);
    assert.match(text, /\n200: line 200 of pay\.go\n\(lines 201-301 not shown: call read_file with start_line 201\)\n$/);
    res = await call(client(), 'read_file', { repo: 'https://github.com/acme/payments.git', path: '/src/pay.go',
      start_line: 299, end_line: 400 });
    text = textOf(res);
    assert.match(text, /lines 299-301 of 301\n299: line 299 of pay\.go\n300: line 300 of pay\.go\n301: Needle payments\n$/);
    assert.equal(res.structuredContent.totalLines, 301);
  });

  // Issue 19: the query is one pattern as ripgrep reads it.
  const lines = res => res.structuredContent.files.flatMap(f => f.matches.map(m => `${f.repository}/${f.path}:${m.line}`)).sort();

  test('an unbalanced pattern is searched as a literal and the note says so', async () => {
    const res = await call(client(), 'search_code', { query: 'func NewSharedInformerFactory(' });
    assert.equal(res.isError, false, textOf(res));
    assert.deepEqual(lines(res), ['acme/bulk/informers/factory.go:7'], textOf(res));
    assert.match(textOf(res), /Note: The pattern is not a valid regular expression, so it was searched as literal text/);
  });

  // The lines git grep finds with flags over every repository, as search_code names them.
  const gitGrep = (pattern, flags) => Object.keys(REPOS).flatMap(name =>
    gitIn(name, ['grep', '-n', ...flags, '-e', pattern]).split('\n').filter(Boolean)
      .map(l => `${repoName(name)}/${l.split(':').slice(0, 2).join(':')}`)).sort();

  // A few of make bench's agent-written patterns (tests/bench/patterns.py), each with the git grep reading
  // ripgrep would give it (-i: no upper-case letter of its own), and how many lines that finds here.
  for (const [pattern, flags, count] of [
    ['time\\.Sleep\\([0-9]+ \\* time\\.Second\\)', ['-E'], 2],
    [' nil)', ['-F'], 1],
    ['^\\tdefer ', ['-P', '-i'], 1],
    ['\\w+error\\(', ['-E', '-i'], 3],
    ['(?i)fixme', ['-P', '-i'], 2],
  ]) {
    test(`the pattern ${pattern} finds exactly the lines git grep ${flags.join(' ')} finds`, async () => {
      const res = await call(client(), 'search_code', { query: pattern, max_files: 200 });
      assert.equal(res.isError, false, textOf(res));
      const want = gitGrep(pattern, flags);
      assert.equal(want.length, count);
      assert.deepEqual(lines(res), want, textOf(res));
    });
  }

  test('a phrase is one pattern: type SharedInformer interface finds the definition only', async () => {
    const res = await call(client(), 'search_code', { query: 'type SharedInformer interface' });
    assert.deepEqual(lines(res), ['acme/bulk/informers/factory.go:3'], textOf(res));
  });

  test('literal: true searches the text as written; syntax zoekt keeps Zoekt\'s language', async () => {
    let res = await call(client(), 'search_code', { query: 'time.Sleep(d)', literal: true });
    assert.deepEqual(lines(res), ['acme/bulk/informers/wait.go:5'], textOf(res));
    res = await call(client(), 'search_code', { query: 'SharedInformer interface', syntax: 'zoekt', repo: 'bulk' });
    assert.deepEqual(res.structuredContent.files.map(f => f.path).sort(), ['informers/factory.go', 'informers/wait.go']);
  });

  test('sym: with no match says where symbols exist, and sym: finds them in a ctags index', async () => {
    let res = await call(client(), 'search_code', { query: 'sym:SharedInformer', syntax: 'zoekt' });
    assert.equal(res.structuredContent.files.length, 0);
    assert.match(textOf(res), /Note: sym: matches symbol definitions only in repositories indexed with ctags/);
    res = await call(client(), 'search_code', { query: 'sym:NewPointSet', syntax: 'zoekt' });
    assert.deepEqual(res.structuredContent.files.map(f => f.path), ['shapes.go']);
  });

  test('a NUL or invalid UTF-8 in an argument is a tool error naming it', async () => {
    let res = await call(client(), 'read_file', { repo: 'bulk', path: 'informers/factory.go\u0000.txt' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /argument "path" contains a NUL character \(\\u0000\) at byte 20/);
    res = await call(client(), 'search_code', { query: 'Needle\u0000' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /argument "query" contains a NUL character/);
  });

  test('read_file caps one call at 500 lines', async () => {
    const res = await call(client(), 'read_file', { repo: 'payments', path: 'src/pay.go', start_line: 1, end_line: 301 });
    assert.match(textOf(res), /lines 1-301 of 301\n/);
    const big = await call(client(), 'read_file', { repo: 'payments', path: 'src/pay.go', start_line: 2, end_line: 900 });
    assert.equal(big.structuredContent.endLine, 301);
  });

  test('read_file names what is wrong: an unknown repository, file or line', async () => {
    let res = await call(client(), 'read_file', { repo: 'paymnts', path: 'src/pay.go' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /"paymnts" matches no indexed repository; closest: acme\/payments/);
    res = await call(client(), 'read_file', { repo: 'payments', path: 'pay.go' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /no file "pay\.go" in the repository "payments" selects/);
    res = await call(client(), 'read_file', { repo: 'payments', path: 'src/pay.go', start_line: 400 });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /has 301 lines; start_line 400 is past its end/);
  });

  // The new tools of issue 19, checked against git over the same repositories.
  const gitIn = (name, args) => {
    try {
      return execFileSync('git', ['-C', join(tmp.dir, 'repos', name), ...args], { encoding: 'utf8' });
    } catch (e) {
      if (e.status !== 1) throw e; // 1: nothing matched
      return '';
    }
  };
  const repoName = name => name.replace(/^mirrors\/github\.com\//, '');

  test('list_files with a glob lists exactly what git ls-files lists, sorted by path', async () => {
    const res = await call(client(), 'list_files', { repo: 'payments', file: 'deploy/*.yaml' });
    assert.equal(res.isError, false, textOf(res));
    const want = gitIn('mirrors/github.com/acme/payments', ['ls-files', ':(glob)deploy/*.yaml']).split('\n').filter(Boolean);
    assert.deepEqual(want, ['deploy/app.yaml', 'deploy/db.yaml']);
    assert.deepEqual(res.structuredContent.files.map(f => f.path), want);
    assert.match(textOf(res), /\n2 files\.\n\nacme\/payments @[0-9a-f]{8}\ndeploy\/\n  app\.yaml\n  db\.yaml\n$/);
    assert.equal(res.structuredContent.complete, true);
  });

  test('list_files of a folder, a glob anywhere below it, the cut at max_files and the pages after it', async () => {
    let res = await call(client(), 'list_files', { repo: 'https://github.com/acme/payments.git', path: 'deploy/', file: '*.yaml' });
    const want = gitIn('mirrors/github.com/acme/payments', ['ls-files', ':(glob)deploy/**/*.yaml']).split('\n').filter(Boolean);
    assert.deepEqual(res.structuredContent.files.map(f => f.path), want, textOf(res));
    res = await call(client(), 'list_files', { repo: 'payments', max_files: 2 });
    const all = gitIn('mirrors/github.com/acme/payments', ['ls-files']).split('\n').filter(Boolean).sort();
    assert.equal(res.structuredContent.totalFiles, all.length, textOf(res));
    assert.deepEqual(res.structuredContent.files.map(f => f.path), all.slice(0, 2));
    assert.match(textOf(res), new RegExp(`\\n${all.length} files, showing the first 2 by path\\.\\n`));
    assert.deepEqual(res.structuredContent.truncation, ['max_files']);
    // Page by page with the cursor the header offers: every file once, in order.
    const paged = [];
    for (let page = 0; page <= all.length; page++) {
      paged.push(...res.structuredContent.files.map(f => f.path));
      const cursor = res.structuredContent.nextCursor;
      if (!cursor) break;
      assert.ok(textOf(res).includes(`Next page: the same arguments with "cursor":"${cursor}"`), textOf(res));
      res = await call(client(), 'list_files', { repo: 'payments', max_files: 2, cursor });
      assert.equal(res.isError, false, textOf(res));
    }
    assert.deepEqual(paged, all);
  });

  test('list_files of an unknown repository names the closest', async () => {
    const res = await call(client(), 'list_files', { repo: 'paymnts' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /"paymnts" matches no indexed repository; closest: acme\/payments/);
  });

  test('find_references counts per repository what git grep -w -c counts, and marks the definition', async () => {
    const res = await call(client(), 'find_references', { symbol: 'ChargeCard' });
    assert.equal(res.isError, false, textOf(res));
    const want = [];
    for (const name of Object.keys(REPOS)) {
      const counts = gitIn(name, ['grep', '-w', '-c', 'ChargeCard']).split('\n').filter(Boolean);
      const lines = counts.reduce((n, l) => n + Number(l.split(':').pop()), 0);
      if (counts.length) want.push({ repository: repoName(name), files: counts.length, matchingLines: lines });
    }
    want.sort((a, b) => a.repository.localeCompare(b.repository));
    assert.deepEqual(want.map(w => w.matchingLines), [2, 2]);
    assert.deepEqual(res.structuredContent.repositories, want, textOf(res));
    const text = textOf(res);
    assert.match(text, /\n {2}acme\/bulk: 2 lines in 1 file\n {2}acme\/payments: 2 lines in 1 file\n/);
    assert.match(text, /\nacme\/payments\/src\/charge\.go @[0-9a-f]{8}\nD 3: func ChargeCard\(c Card\) error \{\n> 7: func retry\(\)/);
    assert.match(text, /\n> 3: \/\/ ChargeCard charges\.\n> 4: func run\(\) \{ pay\.ChargeCard\(c\) \}\n/);
    assert.doesNotMatch(text, /ChargeCards|chargecard/);
    // Neither repository was indexed with ctags: D is the keywords' guess, and the header says so.
    assert.match(text, /case-sensitive; D: keyword guesses at definitions\)\.\n/);
    assert.deepEqual([...new Set(res.structuredContent.files.map(f => f.definitionSource))], ['keywords']);
  });

  test('find_references marks what ctags found where the repository has symbols', async () => {
    const res = await call(client(), 'find_references', { symbol: 'NewPoint' });
    assert.equal(res.isError, false, textOf(res));
    const text = textOf(res);
    // acme/geo is indexed with ctags: D is where find_symbol finds NewPoint, the C function by its return
    // type (which the keywords miss) included; the README's mention is a use.
    assert.match(text, /case-sensitive; D: ctags definitions\)\.\n/);
    assert.match(text, /\nacme\/geo\/README\.md @[0-9a-f]{8}\n> 1: NewPoint docs\n/);
    assert.match(text, /\nacme\/geo\/c\/point\.c @[0-9a-f]{8}\nD 7: int NewPoint\(int x, int y\)/);
    assert.match(text, /\nacme\/geo\/geo\/point\.go @[0-9a-f]{8}\nD 11: func NewPoint\(x, y int\) Point/);
    assert.deepEqual(res.structuredContent.files.map(f => f.definitionSource), ['ctags', 'ctags', 'ctags']);
  });

  test('find_references pages through every file once; a cursor with other arguments is refused', async () => {
    const seen = [];
    let cursor, first, pages = 0;
    do {
      const res = await call(client(), 'find_references', { symbol: 'NewPoint', max_files: 1, ...(cursor ? { cursor } : {}) });
      assert.equal(res.isError, false, textOf(res));
      first ??= res;
      seen.push(...res.structuredContent.files.map(f => `${f.repository}/${f.path}`));
      cursor = res.structuredContent.nextCursor;
      if (cursor) assert.ok(textOf(res).endsWith(`\nNext page: the same arguments with "cursor":"${cursor}"\n`), textOf(res));
      pages++;
    } while (cursor && pages < 10);
    assert.deepEqual(seen, ['acme/geo/README.md', 'acme/geo/c/point.c', 'acme/geo/geo/point.go']);
    const res = await call(client(), 'find_references', { symbol: 'NewPoint', repo: 'geo', cursor: first.structuredContent.nextCursor });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /argument "cursor" belongs to another query/);
  });

  test('find_references refuses what is not an identifier, and narrows by repo and file', async () => {
    let res = await call(client(), 'find_references', { symbol: 'ChargeCard(' });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /argument "symbol" must be an identifier/);
    res = await call(client(), 'find_references', { symbol: 'ChargeCard', repo: 'payments', file: 'src/*.go' });
    assert.deepEqual(res.structuredContent.repositories.map(r => r.repository), ['acme/payments'], textOf(res));
    res = await call(client(), 'find_references', { symbol: 'ChargeCard', repo: 'paymnts' });
    assert.equal(res.structuredContent.totalFiles, 0);
    assert.match(textOf(res), /\nNote: "paymnts" matches no indexed repository; closest: acme\/payments/);
  });

  test('corpus_status reports what the webserver serves', async () => {
    const res = await call(client(), 'corpus_status', {});
    assert.match(textOf(res), /Search webserver http:\/\/127\.0\.0\.1:\d+: 6 repositories, 6 shards, newest index /);
    assert.equal(res.structuredContent.index.repositories, 6);
    // The five indexed longest ago, oldest first, each with the commit it was indexed at and its age.
    const m = textOf(res).match(/\nOldest indexes \(5 of 6\): (.*)\n/);
    assert.ok(m, textOf(res));
    const oldest = m[1].split(', ').map(e => e.match(/^(\S+) @([0-9a-f]{12}) \d+[smhd] ago$/));
    assert.equal(oldest.length, 5, m[1]);
    for (const e of oldest) assert.equal(e[2], commitOf(`mirrors/github.com/${e[1]}`).slice(0, 12), m[1]);
  });

  test('search_code names the indexed commit and age of each repository in its answer', async () => {
    const res = await call(client(), 'search_code', { query: 'Needle', repo: ['bulk', 'payments'] });
    const bulk = commitOf('mirrors/github.com/acme/bulk').slice(0, 12);
    const pay = commitOf('mirrors/github.com/acme/payments').slice(0, 12);
    const line = textOf(res).split('\n').find(l => l.startsWith('Indexed: '));
    assert.ok(line, textOf(res));
    assert.match(line, /^Indexed: (acme\/bulk|acme\/payments) @[0-9a-f]{12} \d+[smhd] ago, (acme\/bulk|acme\/payments) @[0-9a-f]{12} \d+[smhd] ago$/);
    assert.ok(line.includes(`acme/bulk @${bulk} `) && line.includes(`acme/payments @${pay} `), line);
    // Within its budget still, at the smallest one.
    const small = await call(client(), 'search_code', { query: 'Needle', max_bytes: 2048 });
    assert.ok(Buffer.byteLength(textOf(small)) <= 2048);
    assert.match(textOf(small), /\nIndexed: /);
  });

  test('corpus_status with repo shows the repositories it selects, or the closest names', async () => {
    let res = await call(client(), 'corpus_status', { repo: 'https://github.com/acme/bulk.git' });
    assert.match(textOf(res), /\n1 of 6 repositories match "github\.com\/acme\/bulk"\.\nacme\/bulk {2}HEAD@[0-9a-f]{12} {2}indexed \S+ \(\d+[smhd] ago\)\n/);
    res = await call(client(), 'corpus_status', { repo: 'bulkk' });
    assert.match(textOf(res), /0 of 6 repositories match "bulkk"; closest: acme\/bulk/);
  });
}

if (!skip) describe('over stdio', () => {
  let client;

  before(async () => {
    const transport = new StdioClientTransport({ command: CONNECTOR, args: ['--stdio', '--zoekt-url', zoekt.url, ...PREFIX],
      env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string')), stderr: 'pipe' });
    client = new Client({ name: 'zk-real-stdio', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => { await client?.close(); });

  toolChecks(() => client);

  test('stdio is not rate-limited: 40 searches at once all answer', async () => {
    const all = await Promise.all(Array.from({ length: 40 }, () => call(client, 'search_code', { query: 'Needle' })));
    for (const res of all) assert.equal(res.isError, false, textOf(res));
  });
});

// A loopback proxy in front of the webserver that counts the requests it passes on, by path.
async function countingProxy(target) {
  const counts = {};
  const server = createServer((req, res) => {
    counts[req.url] = (counts[req.url] ?? 0) + 1;
    const up = request(new URL(req.url, target), { method: req.method, headers: req.headers }, r => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  await new Promise(res => server.listen(0, '127.0.0.1', res));
  return { url: `http://127.0.0.1:${server.address().port}`, counts,
    close: () => new Promise(res => { server.closeAllConnections(); server.close(res); }) };
}

// The Indexed: line's commits come from the search answer and its ages from a list the connector
// keeps for a minute: consecutive searches ask Zoekt's /api/list once, not once each.
if (!skip) test('consecutive search_code calls send one /api/list between them, and each names commit and age', async () => {
  const proxy = await countingProxy(zoekt.url);
  const client = new Client({ name: 'zk-real-listcache', version: '1.0.0' });
  try {
    await client.connect(new StdioClientTransport({ command: CONNECTOR, args: ['--stdio', '--zoekt-url', proxy.url, ...PREFIX],
      env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string')), stderr: 'pipe' }));
    const bulk = commitOf('mirrors/github.com/acme/bulk').slice(0, 12);
    const queries = ['Needle', 'Bulk', 'ChargeCard', 'SharedInformer', 'Needle'];
    for (const query of queries) {
      const res = await call(client, 'search_code', { query, repo: 'acme/bulk' });
      assert.equal(res.isError, false, textOf(res));
      assert.match(textOf(res), new RegExp(`\\nIndexed: acme/bulk @${bulk} \\d+[smhd] ago\\n`), textOf(res));
    }
    assert.equal(proxy.counts['/api/search'], queries.length, JSON.stringify(proxy.counts));
    assert.equal(proxy.counts['/api/list'], 1, JSON.stringify(proxy.counts));
  } finally {
    await client.close();
    await proxy.close();
  }
});

if (!skip) describe('over Streamable HTTP', () => {
  let conn, client;

  before(async () => {
    conn = await startHttpConnector(['--zoekt-url', zoekt.url, ...PREFIX, '--rate-limit', '100/1']);
    client = new Client({ name: 'zk-real-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${conn.url}/mcp`)));
  });
  after(async () => {
    await client?.close();
    if (conn) await stop(conn.child);
  });

  toolChecks(() => client);

  // /index-status against the real webserver: the plain body the operator reads, the per-repository
  // judgement against the maxAge it passes, and the list of every repository with its commits.
  test('/index-status judges each repository against maxAge and lists them, oldest first', async () => {
    const get = async q => {
      const res = await fetch(`${conn.url}/index-status${q}`);
      return { status: res.status, body: res.status === 200 ? await res.json() : await res.text() };
    };
    let r = await get('');
    assert.equal(r.status, 200);
    assert.equal(r.body.repositories, 6);
    assert.equal(r.body.stale, undefined);
    assert.equal(r.body.repositoryList, undefined);

    r = await get('?repositories=all');
    const list = r.body.repositoryList;
    assert.equal(r.body.listed, 6);
    assert.equal(list.length, 6);
    const times = list.map(e => Date.parse(e.indexTime));
    for (let i = 1; i < list.length; i++) {
      assert.ok(Math.floor(times[i - 1] / 1000) <= Math.floor(times[i] / 1000), 'oldest first');
      if (Math.floor(times[i - 1] / 1000) === Math.floor(times[i] / 1000)) assert.ok(list[i - 1].name < list[i].name, 'ties by name');
    }
    for (const e of list) {
      assert.equal(e.branches.length, 1, JSON.stringify(e));
      assert.equal(e.branches[0].commit, commitOf(`mirrors/github.com/${e.name}`), e.name);
    }
    assert.deepEqual(list.map(e => e.name).sort(), ['acme/bulk', 'acme/bulkhead', 'acme/geo', 'acme/payments', 'acme/shapes', 'other/payments-legacy']);

    // Younger than an hour: none is stale.
    r = await get('?maxAge=1h');
    assert.equal(r.body.stale, 0);
    assert.deepEqual(r.body.staleRepositories, []);
    // Older than a second (waiting, if need be, until the newest index is): all of them, oldest first.
    const wait = Math.max(...times) + 2500 - Date.now();
    if (wait > 0) await new Promise(res => setTimeout(res, wait));
    r = await get('?maxAge=1s');
    assert.equal(r.body.stale, 6);
    assert.deepEqual(r.body.staleRepositories, list.map(e => e.name));
    // A maxAge between the oldest and the newest age (when the indexing took long enough to leave a
    // gap of seconds): the oldest is stale, the newest is not, and the stale ones are the oldest first.
    const now = Date.now(), cut = Math.floor((now - Math.min(...times)) / 1000) - 1;
    if (cut > Math.ceil((now - Math.max(...times)) / 1000) + 1) {
      r = await get(`?maxAge=${cut}s`);
      assert.ok(r.body.stale >= 1 && r.body.stale < 6, JSON.stringify(r.body));
      assert.deepEqual(r.body.staleRepositories, list.slice(0, r.body.stale).map(e => e.name));
    }

    r = await get('?maxAge=soon');
    assert.equal(r.status, 400);
    assert.match(r.body, /maxAge must be a duration/);
    assert.equal((await get('?repositories=some')).status, 400);
  });

  test('an HTTP session keeps its rate limit, set by --rate-limit', async () => {
    const limited = await startHttpConnector(['--zoekt-url', zoekt.url, '--rate-limit', '3/0.01']);
    const c = new Client({ name: 'zk-real-http-limited', version: '1.0.0' });
    try {
      await c.connect(new StreamableHTTPClientTransport(new URL(`${limited.url}/mcp`)));
      for (let i = 0; i < 3; i++) assert.equal((await call(c, 'search_code', { query: 'Needle' })).isError, false);
      const res = await call(c, 'search_code', { query: 'Needle' });
      assert.equal(res.isError, true);
      assert.match(textOf(res), /Rate limit reached: a session may make 3 tool calls in a burst/);
    } finally {
      await c.close();
      await stop(limited.child);
    }
  });
});

if (!skip) test('the indexer script indexed the ctags repositories with symbols, through the host ctags', () => {
  const lines = indexerLog.map(l => JSON.parse(l));
  assert.deepEqual(lines.filter(l => l.repository).map(l => [l.repository, l.status, l.symbols]).sort(),
    [['mirrors/github.com/acme/geo', 'indexed', true], ['mirrors/github.com/acme/shapes', 'indexed', true]]);
  assert.equal(lines.at(-1).summary.withoutSymbols, undefined);
});

// Issue 27: files with many matches, and a minified file. A second webserver, so that the counts the
// checks above assert stay as they are. acme/heavy: 20 files of 100 matching lines each, whose match
// budget (were search_code to send one) the first files would spend before max_files files; the
// answer must still hold max_files files, each with its true count. acme/minified: one line of about
// 298 KB with the only match at byte 281,423, between two-byte characters.
const HEAVY_LINES = Array.from({ length: 100 }, (_, i) => `\t// starve ${i}`).join('\n') + '\n';
const FAR = 281423;
// n bytes of 'x="é";' over and over (7 bytes each); both lengths used end on a whole character.
const filler = n => Buffer.from('x="\u00e9";'.repeat(Math.ceil(n / 7))).subarray(0, n);
const MINIFIED = Buffer.concat([filler(FAR), Buffer.from('needleFarAway'), filler(16000), Buffer.from('\n')]);
const LARGE = {
  'mirrors/github.com/acme/heavy': Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`h${String(i).padStart(2, '0')}.go`, `package heavy\n${HEAVY_LINES}`])),
  'mirrors/github.com/acme/minified': { 'dist/app.min.js': MINIFIED },
};

if (!skip) describe('search_code over files with many matches and a minified line (a second webserver)', () => {
  let tmp2, zoekt2, proxy, client;

  before(async () => {
    tmp2 = tempDir();
    zoekt2 = await startRealZoekt(tmp2.dir, LARGE);
    proxy = await countingProxy(zoekt2.url);
    client = new Client({ name: 'zk-real-large', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: CONNECTOR, args: ['--stdio', '--zoekt-url', proxy.url, ...PREFIX],
      env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string')), stderr: 'pipe' }));
  });
  after(async () => {
    await client?.close();
    await proxy?.close();
    if (zoekt2?.child) await stop(zoekt2.child);
    tmp2?.cleanup();
  });

  test('max_files files are shown when that many match, each with its own count, in one request', async () => {
    const before = proxy.counts['/api/search'] ?? 0;
    const res = await call(client, 'search_code', { query: 'starve', max_files: 15 });
    assert.equal(res.isError, false, textOf(res));
    const sc = res.structuredContent;
    assert.equal(sc.totalFiles, 20);
    assert.equal(sc.shownFiles, 15, textOf(res));
    assert.equal(sc.files.length, 15);
    for (const f of sc.files) assert.equal(f.matchingLines, 100, `${f.path}: ${f.matchingLines}`);
    assert.deepEqual(sc.truncation.filter(r => r !== 'per_file_cap' && r !== 'output_budget'), ['max_files']);
    assert.match(textOf(res), /^Showing 15 of 20 files \(2000 matches\)\. Incomplete: more files matched than max_files=15;/m);
    assert.equal(proxy.counts['/api/search'] - before, 1, JSON.stringify(proxy.counts));
  });

  test('a match far into a minified line is shown: a window around it, cut on both sides, UTF-8 intact', async () => {
    const res = await call(client, 'search_code', { query: 'needleFarAway' });
    assert.equal(res.isError, false, textOf(res));
    const line = textOf(res).split('\n').find(l => l.startsWith('> 1: '));
    assert.ok(line, textOf(res));
    const shown = line.slice(5);
    assert.ok(shown.includes('needleFarAway'), shown);
    assert.ok(shown.startsWith('\u2026') && shown.endsWith('\u2026'), shown);
    assert.ok(Buffer.byteLength(shown) <= 300 + 6, `${Buffer.byteLength(shown)} bytes`);
    assert.ok(!shown.includes('\ufffd'), shown);
    const match = res.structuredContent.files[0].matches[0];
    assert.equal(match.line, 1);
    assert.equal(match.text, shown);
  });
});
