// An agent's view of the search pod: the official MCP TypeScript SDK client (from tests/mcp/node_modules)
// over the Streamable HTTP transport, sending the bearer token on every request as a deployed agent
// would, through nginx.
//
// Usage: node mcp-client.mjs URL TOKEN QUERY
// Prints one JSON object: {protocolVersion, server, tools: [names], search: {isError, text, repositories}}
// where repositories are the distinct repositories of the files search_code returned (from its
// structuredContent when the server sends it, otherwise from the text's file headings). Exits 1 with
// the error on stderr when the session cannot be set up or a call fails at the protocol level.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.env.ZK_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '../../..');
// The SDK is installed for the tests/mcp suites; resolve it from there rather than installing it twice.
const require = createRequire(join(root, 'tests/mcp/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const [url, token, query] = process.argv.slice(2);
if (query === undefined) {
  process.stderr.write('usage: node mcp-client.mjs URL TOKEN QUERY\n');
  process.exit(2);
}

// An empty TOKEN sends no Authorization header (an open gateway).
const transport = new StreamableHTTPClientTransport(new URL(url),
  token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
const client = new Client({ name: 'search-pod-test', version: '1.0.0' });
try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map(t => t.name).sort();
  // Zoekt's syntax: the replay server in the pod answers the recorded request for the bare query.
  const res = await client.callTool({ name: 'search_code', arguments: { query, syntax: 'zoekt' } });
  const text = (res.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
  let repositories;
  if (res.structuredContent && Array.isArray(res.structuredContent.files)) {
    repositories = res.structuredContent.files.map(f => f.repository);
  } else {
    repositories = [...text.matchAll(/^([^\s/]+)\/\S+ @[0-9a-f]+$/gm)].map(m => m[1]);
  }
  process.stdout.write(JSON.stringify({
    protocolVersion: transport.protocolVersion ?? null,
    server: client.getServerVersion() ?? null,
    tools,
    search: { isError: !!res.isError, text, repositories: [...new Set(repositories)].sort() },
  }) + '\n');
  // End the session as a well-behaved agent does (DELETE /mcp through nginx).
  await transport.terminateSession();
  await client.close();
} catch (e) {
  process.stderr.write(`mcp-client: ${e.stack ?? e}\n`);
  await client.close().catch(() => {});
  process.exit(1);
}
