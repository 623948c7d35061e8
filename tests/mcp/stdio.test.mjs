// The connector over stdio, driven by the official MCP TypeScript SDK client against the Zoekt replay
// server, plus raw line-protocol checks (exit on EOF, parse errors, version negotiation, flags).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  assertYamlOnly, CONNECTOR, logRecords, runConnector, startReplay, stop, tempDir, textOf, waitForLog,
} from './harness.mjs';

let tmp, replay;

before(async () => {
  tmp = tempDir();
  replay = await startReplay(tmp.dir);
});

after(async () => {
  if (replay) await stop(replay.child);
  tmp?.cleanup();
});

describe('SDK client over stdio', () => {
  let client, transport, log = '';
  const child = { get log() { return log; } };

  before(async () => {
    transport = new StdioClientTransport({
      command: CONNECTOR,
      args: ['--stdio', '--zoekt-url', replay.url, '--search-timeout', '60s', '--corpus', 'code/org'],
      env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string')),
      stderr: 'pipe',
    });
    transport.stderr.on('data', d => { log += d; });
    client = new Client({ name: 'zk-stdio-test', version: '1.0.0' });
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
    // Closing stdin ends the connector; a sanitizer report on the way out would show here.
    assert.doesNotMatch(log, /Sanitizer|runtime error/);
  });

  test('initialize reports the server and its instructions', () => {
    assert.equal(client.getServerVersion().name, 'zoekt-connector');
    assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });
    const instructions = client.getInstructions();
    assert.match(instructions, /code\/org/);
    assert.match(instructions, /search_code/);
  });

  test('tools/list shows the eight tools with object schemas', async () => {
    const { tools } = await client.listTools();
    const names = tools.map(t => t.name).sort();
    assert.deepEqual(names, ['corpus_status', 'find_dependents', 'find_references', 'find_symbol', 'list_files', 'list_repositories', 'read_file', 'search_code']);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', `${t.name} inputSchema`);
      assert.ok(t.description && t.description.length > 20, `${t.name} has a description`);
    }
    const search = tools.find(t => t.name === 'search_code');
    assert.ok(search.inputSchema.properties.query, 'search_code takes a query');
  });

  test('search_code returns grouped text with line numbers and structuredContent', async () => {
    const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } });
    assert.notEqual(res.isError, true, textOf(res));
    const text = textOf(res);
    assert.match(text, /needle/);
    assert.match(text, /^\s*\d+[:\s-]/m, 'some line starts with a line number');
    const files = res.structuredContent.files;
    assert.ok(files.length >= 2, 'several files match');
    for (const f of files) {
      assert.ok(f.repository && f.path, 'each file names its repository and path');
      assert.ok(text.includes(f.path), `the text shows ${f.path}`);
      for (const m of f.matches) assert.ok(Number.isInteger(m.line) && m.line > 0);
    }
    assert.ok(files.some(f => f.matches.some(m => /needle/.test(m.text))));
  });

  test('a file glob filter keeps only matching files', async () => {
    const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle', file: '*.yaml' } });
    assert.notEqual(res.isError, true, textOf(res));
    assertYamlOnly(res);
  });

  test('a bad regex is a tool error carrying Zoekt\'s message', async () => {
    const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'foo(' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /missing closing \)/);
  });

  test('list_repositories lists alpha, beta and gamma', async () => {
    const res = await client.callTool({ name: 'list_repositories', arguments: {} });
    assert.notEqual(res.isError, true, textOf(res));
    const text = textOf(res);
    for (const name of ['alpha', 'beta', 'gamma']) assert.match(text, new RegExp(`\\b${name}\\b`));
  });

  test('an unknown tool is a JSON-RPC error', async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /no_such_tool/);
  });

  test('a hanging search is cancelled through AbortSignal and the connector stays usable', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const pending = client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle zk:hang' } }, undefined,
      { signal: ac.signal, timeout: 120000 });
    setTimeout(() => ac.abort('test cancels'), 500);
    await assert.rejects(pending);
    // The connector notices the cancellation and aborts the Zoekt request long before the 60 s
    // search deadline.
    await waitForLog(child, 'Tool call cancelled by the client', 5000);
    const ended = await waitForLog(child, 'Tool call ended after cancellation; no reply sent', 5000);
    assert.ok(Number(ended.ms) < 10000, `the search stopped after ${ended.ms} ms`);
    assert.ok(Date.now() - started < 10000);
    const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } });
    assert.notEqual(res.isError, true);
    assert.ok(res.structuredContent.files.length >= 1);
    assert.equal(logRecords(child).filter(r => r.level === 'error').length, 0, 'no error was logged');
  });
});

describe('raw stdio protocol', () => {
  const init = v => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });

  test('version negotiation, parse errors, ids and exit 0 on end of input', async () => {
    const lines = [
      init('2025-06-18'),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      '{"jsonrpc": broken',
      '',
      JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }),
      JSON.stringify({ jsonrpc: '2.0', id: 9007199254740991, method: 'nope/nope' }),
      JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'ping' }]),
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } } }),
    ];
    const { code, stdout } = await runConnector(['--stdio', '--zoekt-url', replay.url], lines.join('\n') + '\n');
    assert.equal(code, 0);
    const out = stdout.trim().split('\n').map(l => JSON.parse(l));
    const byId = new Map(out.map(m => [m.id, m]));
    assert.equal(byId.get(1).result.protocolVersion, '2025-06-18');
    assert.deepEqual(byId.get('p').result, {});
    assert.equal(byId.get(9007199254740991).error.code, -32601);
    assert.ok(stdout.includes('"id":9007199254740991'), 'a large id comes back unchanged');
    // The unparseable line and the batch (refused under 2025-06-18) get errors with a null id.
    assert.deepEqual(out.filter(m => m.id === null).map(m => m.error.code).sort((a, b) => a - b), [-32700, -32600]);
    assert.ok(Array.isArray(byId.get(4).result.content), 'the tool call in flight at EOF was still answered');
    assert.equal(out.length, 6, 'nothing answers the notification or the blank line');
  });

  test('an unknown version gets the latest, and batches work under 2025-03-26', async () => {
    let r = await runConnector(['--stdio', '--zoekt-url', replay.url], init('1999-01-01') + '\n');
    assert.equal(r.code, 0);
    assert.equal(JSON.parse(r.stdout).result.protocolVersion, '2025-11-25');
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ]);
    r = await runConnector(['--stdio', '--zoekt-url', replay.url], `${init('2025-03-26')}\n${batch}\n`);
    const [, reply] = r.stdout.trim().split('\n').map(l => JSON.parse(l));
    assert.ok(Array.isArray(reply));
    assert.deepEqual(reply.map(m => m.id).sort(), [2, 3]);
  });

  test('a line over 1 MiB is refused and the session goes on', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(1100000) } });
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    const r = await runConnector(['--stdio', '--zoekt-url', replay.url], `${init('2025-06-18')}\n${big}\n${ping}\n`);
    assert.equal(r.code, 0);
    const out = r.stdout.trim().split('\n').map(l => JSON.parse(l));
    assert.equal(out.length, 3);
    assert.equal(out[1].id, null);
    assert.equal(out[1].error.code, -32600);
    assert.match(out[1].error.message, /1048576/);
    assert.deepEqual(out[2], { jsonrpc: '2.0', id: 3, result: {} });
  });

  test('flags: --help lists every flag, bad flags exit 2', async () => {
    const help = await runConnector(['--help']);
    assert.equal(help.code, 0);
    for (const flag of ['--zoekt-url', '--stdio', '--listen', '--token-file', '--token-dir', '--zoekt-token-file',
      '--mirror-prefix', '--max-files', '--context-lines', '--search-timeout', '--list-timeout', '--output-budget',
      '--kubeconfig', '--corpus', '--allowed-origin', '--log-level', '--help', '--version']) {
      assert.ok(help.stdout.includes(flag), `--help mentions ${flag}`);
    }
    assert.match((await runConnector(['--version'])).stdout, /^zoekt-connector \d/);
    for (const bad of [['--bogus'], ['--max-files', '0'], ['--search-timeout', 'soon'], ['--corpus', 'noslash'],
      ['--stdio', '--listen', '127.0.0.1:0'], ['--zoekt-url', 'ftp://x'], ['--log-level', 'loud'], ['extra']]) {
      const r = await runConnector(bad);
      assert.equal(r.code, 2, `${bad.join(' ')} exits 2`);
      assert.ok(r.stderr.length > 0, `${bad.join(' ')} explains itself`);
    }
    const ok = await runConnector(['--stdio', '--search-timeout', '30s', '--list-timeout', '1500ms',
      '--zoekt-url', replay.url], '');
    assert.equal(ok.code, 0);
  });
});
