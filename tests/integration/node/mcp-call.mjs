// One tool call as an agent makes it: the official MCP TypeScript SDK client (from tests/mcp/node_modules)
// over Streamable HTTP, with the bearer token on every request, through the corpus's Service.
//
// Usage: node mcp-call.mjs URL TOKEN TOOL [ARGUMENTS_JSON]
// With URL "stdio" the connector is a child process over stdio instead: the command and its arguments
// are the JSON array in $MCP_STDIO_COMMAND (TOKEN is then unused).
// Prints the tool's text to stdout and exits 0, or 3 when the tool answered with isError (the text is
// still printed). Exits 1 with the error on stderr when the session cannot be set up (a 401 among them).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.env.ZK_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(join(root, 'tests/mcp/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const [url, token, tool, args] = process.argv.slice(2);
if (tool === undefined) {
  process.stderr.write('usage: node mcp-call.mjs URL TOKEN TOOL [ARGUMENTS_JSON]\n');
  process.exit(2);
}
let transport;
if (url === 'stdio') {
  const [command, ...args] = JSON.parse(process.env.MCP_STDIO_COMMAND);
  transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
} else {
  transport = new StreamableHTTPClientTransport(new URL(url),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
}
const client = new Client({ name: 'node-e2e-test', version: '1.0.0' });
try {
  await client.connect(transport);
  const res = await client.callTool({ name: tool, arguments: args ? JSON.parse(args) : {} });
  process.stdout.write((res.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n') + '\n');
  if (transport.terminateSession) await transport.terminateSession().catch(() => {});
  await client.close();
  process.exit(res.isError ? 3 : 0);
} catch (e) {
  // The SDK's transport error carries the HTTP status apart from its message, which quotes the body.
  const status = typeof e.code === 'number' && e.code >= 100 ? ` (HTTP ${e.code})` : '';
  process.stderr.write(`mcp-call: ${e.message ?? e}${status}\n`);
  await client.close().catch(() => {});
  process.exit(1);
}
