// The connector over Streamable HTTP: the official SDK client end to end against the Zoekt replay
// server, and the transport's HTTP rules checked with plain fetch (status codes, headers, sessions,
// Origin, bearer tokens, /auth, /index-status).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { assertYamlOnly, startHttpConnector, startReplay, stop, tempDir, textOf, waitForLog, writeTokenFile } from './harness.mjs';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

let tmp, replay;

before(async () => {
  tmp = tempDir();
  replay = await startReplay(tmp.dir);
});

after(async () => {
  if (replay) await stop(replay.child);
  tmp?.cleanup();
});

function post(url, body, headers = {}) {
  return fetch(`${url}/mcp`, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
}

// Initializes a raw session; resolves to its id.
async function rawSession(url, headers = {}) {
  const res = await post(url, INIT, headers);
  assert.equal(res.status, 200);
  const sid = res.headers.get('mcp-session-id');
  assert.match(sid, /^[0-9a-f]{32}$/);
  const body = await res.json();
  assert.equal(body.result.protocolVersion, '2025-06-18');
  return sid;
}

describe('without tokens', () => {
  let conn;

  before(async () => {
    conn = await startHttpConnector(['--zoekt-url', replay.url, '--search-timeout', '60s']);
  });
  after(async () => {
    const status = await stop(conn.child);
    assert.equal(status.code, 0, 'SIGTERM ends the server with status 0');
  });

  test('SDK client: initialize, tools, search, cancellation, session end', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${conn.url}/mcp`));
    const client = new Client({ name: 'zk-http-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      assert.equal(transport.protocolVersion, '2025-11-25');
      assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
      assert.equal(client.getServerVersion().name, 'zoekt-connector');

      const { tools } = await client.listTools();
      assert.deepEqual(tools.map(t => t.name).sort(), ['corpus_status', 'find_dependents', 'find_references', 'find_symbol', 'list_files', 'list_repositories', 'read_file', 'search_code']);

      const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } });
      assert.notEqual(res.isError, true, textOf(res));
      assert.ok(res.structuredContent.files.length >= 2);
      assert.match(textOf(res), /needle/);

      const yaml = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle', file: '*.yaml' } });
      assert.notEqual(yaml.isError, true, textOf(yaml));
      assertYamlOnly(yaml);

      const bad = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'foo(' } });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /missing closing \)/);

      const repos = await client.callTool({ name: 'list_repositories', arguments: {} });
      for (const name of ['alpha', 'beta', 'gamma']) assert.match(textOf(repos), new RegExp(`\\b${name}\\b`));

      // Cancellation: the SDK sends notifications/cancelled on a second POST; the connector aborts
      // the Zoekt request and answers the first POST with 202 and no body.
      const ac = new AbortController();
      const pending = client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle zk:hang' } }, undefined,
        { signal: ac.signal, timeout: 120000 });
      setTimeout(() => ac.abort('test cancels'), 500);
      await assert.rejects(pending);
      const ended = await waitForLog(conn.child, 'Tool call ended after cancellation; no reply sent', 5000);
      assert.ok(Number(ended.ms) < 10000);
      const again = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } });
      assert.ok(again.structuredContent.files.length >= 1, 'the session stays usable');

      const sid = transport.sessionId;
      await transport.terminateSession();
      const gone = await post(conn.url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { 'Mcp-Session-Id': sid });
      assert.equal(gone.status, 404, 'a deleted session is unknown');
    } finally {
      await client.close();
    }
  });

  test('a client that hangs up mid-search cancels the search', async () => {
    const sid = await rawSession(conn.url);
    const ac = new AbortController();
    const call = { jsonrpc: '2.0', id: 'gone', method: 'tools/call',
      params: { name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle zk:hang' } } };
    const pending = fetch(`${conn.url}/mcp`, { method: 'POST', headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sid },
      body: JSON.stringify(call), signal: ac.signal });
    setTimeout(() => ac.abort(), 500);
    await assert.rejects(pending);
    await waitForLog(conn.child, 'Client disconnected; cancelling its tool call', 5000);
    // The id is free again once the cancelled call has ended, and the session goes on.
    let res;
    for (let i = 0; i < 50; i++) {
      res = await (await post(conn.url, { ...call, params: { name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } } },
        { 'Mcp-Session-Id': sid })).json();
      if (!res.error) break;
      await new Promise(r => setTimeout(r, 100));
    }
    assert.ok(res.result.structuredContent.files.length >= 1);
  });

  test('GET /mcp is 405', async () => {
    const res = await fetch(`${conn.url}/mcp`, { headers: { Accept: 'text/event-stream' } });
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow'), /POST/);
  });

  test('session rules: 400 without a session, 404 for an unknown one, 202 for notifications', async () => {
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    assert.equal((await post(conn.url, ping)).status, 400);
    assert.equal((await post(conn.url, ping, { 'Mcp-Session-Id': 'f'.repeat(32) })).status, 404);
    const sid = await rawSession(conn.url);
    const note = await post(conn.url, { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' });
    assert.equal(note.status, 202);
    assert.equal(await note.text(), '');
    const pong = await post(conn.url, ping, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' });
    assert.equal(pong.status, 200);
    assert.match(pong.headers.get('content-type'), /^application\/json/);
    assert.deepEqual(await pong.json(), { jsonrpc: '2.0', id: 2, result: {} });
    const del = await fetch(`${conn.url}/mcp`, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
    assert.equal(del.status, 204);
    assert.equal((await post(conn.url, ping, { 'Mcp-Session-Id': sid })).status, 404);
  });

  test('header checks: protocol version 400, foreign Origin 403, loopback Origin allowed, bad body', async () => {
    const sid = await rawSession(conn.url);
    const ping = { jsonrpc: '2.0', id: 3, method: 'ping' };
    assert.equal((await post(conn.url, ping, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2023-01-01' })).status, 400);
    const foreign = await post(conn.url, ping, { 'Mcp-Session-Id': sid, Origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal((await post(conn.url, INIT, { Origin: 'https://evil.example' })).status, 403);
    assert.equal((await post(conn.url, ping, { 'Mcp-Session-Id': sid, Origin: 'http://localhost:5173' })).status, 200);
    const notJson = await fetch(`${conn.url}/mcp`, { method: 'POST', headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sid },
      body: '{"jsonrpc":' });
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json()).error.code, -32700);
    const form = await fetch(`${conn.url}/mcp`, { method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Mcp-Session-Id': sid }, body: 'a=b' });
    assert.equal(form.status, 415);
  });

  test('/index-status, /healthz and /auth without tokens', async () => {
    const res = await fetch(`${conn.url}/index-status`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.repositories, 3);
    assert.ok(typeof body.newestIndexTime === 'string' && typeof body.oldestIndexTime === 'string');
    assert.equal((await fetch(`${conn.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${conn.url}/auth`)).status, 200, 'no tokens configured: everything passes');
  });
});

describe('with tokens', () => {
  let conn;

  before(async () => {
    const file = writeTokenFile(tmp.dir, ['token-one', 'token-two']);
    conn = await startHttpConnector(['--zoekt-url', replay.url, '--token-file', file,
      '--allowed-origin', 'https://agents.example']);
  });
  after(async () => {
    assert.equal((await stop(conn.child)).code, 0);
  });

  test('/mcp needs a bearer token: 401 with WWW-Authenticate', async () => {
    const none = await post(conn.url, INIT);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate'), /^Bearer /);
    const wrong = await post(conn.url, INIT, { Authorization: 'Bearer token-three' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate'), /invalid_token/);
    await rawSession(conn.url, { Authorization: 'Bearer token-two' });
  });

  test('--allowed-origin replaces the loopback default', async () => {
    const auth = { Authorization: 'Bearer token-one' };
    assert.equal((await post(conn.url, INIT, { ...auth, Origin: 'https://agents.example' })).status, 200);
    assert.equal((await post(conn.url, INIT, { ...auth, Origin: 'http://localhost:3000' })).status, 403);
  });

  test('SDK client with a bearer token', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${conn.url}/mcp`),
      { requestInit: { headers: { Authorization: 'Bearer token-one' } } });
    const client = new Client({ name: 'zk-http-token-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'search_code', arguments: { syntax: 'zoekt', query: 'needle' } });
      assert.ok(res.structuredContent.files.length >= 1);
    } finally {
      await client.close();
    }
  });

  test('/auth answers 200 for an accepted token and 401 otherwise; /index-status needs none', async () => {
    assert.equal((await fetch(`${conn.url}/auth`, { headers: { Authorization: 'Bearer token-one' } })).status, 200);
    const denied = await fetch(`${conn.url}/auth`, { headers: { Authorization: 'Bearer nope' } });
    assert.equal(denied.status, 401);
    assert.ok(denied.headers.get('www-authenticate'));
    assert.equal((await fetch(`${conn.url}/auth`)).status, 401);
    assert.equal((await fetch(`${conn.url}/index-status`)).status, 200);
  });
});

describe('Zoekt unreachable', () => {
  test('/index-status answers 503 with a JSON error', async () => {
    // Port 1 on loopback refuses connections.
    const conn = await startHttpConnector(['--zoekt-url', 'http://127.0.0.1:1', '--list-timeout', '5s']);
    try {
      const res = await fetch(`${conn.url}/index-status`);
      assert.equal(res.status, 503);
      const body = await res.json();
      assert.match(body.error, /127\.0\.0\.1:1/);
      assert.equal(body.retryable, true);
    } finally {
      await stop(conn.child);
    }
  });

  test('a missing token file stops the server at start', async () => {
    await assert.rejects(startHttpConnector(['--token-file', `${tmp.dir}/absent`]), /exited/);
  });
});
