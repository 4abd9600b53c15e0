// A stateless Streamable HTTP server made with the SDK (no session id, a
// new server and transport for each POST), so that a client has no GET
// stream: GET and DELETE are answered 405, as the SDK's stateless example
// does.  One tool, echo.  Listens on 127.0.0.1 (port chosen by the
// kernel) and prints
//     sdk_stateless: listening on http://127.0.0.1:PORT
// on stdout.  The MCP endpoint is any path.  With --json it answers each
// POST with one JSON body (enableJsonResponse) instead of an SSE stream.
import http from 'node:http';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

function makeServer() {
  const s = new Server({ name: 'sdk_stateless', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'echo', description: 'Echoes back the input', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } }],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: 'text', text: `Echo: ${req.params.arguments?.message}` }] }));
  return s;
}

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end('not JSON');
    return;
  }
  const s = makeServer();
  const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: process.argv.includes('--json') });
  res.on('close', () => {
    t.close();
    s.close();
  });
  await s.connect(t);
  await t.handleRequest(req, res, body);
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`sdk_stateless: listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
