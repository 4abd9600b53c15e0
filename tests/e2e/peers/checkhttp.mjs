// A small Streamable HTTP MCP server (any legacy revision from 2025-03-26:
// it answers the one asked) that breaks one HTTP rule on purpose, for
// `mcpreel check`.  Listens on 127.0.0.1 (port from the kernel) and prints
//     checkhttp: listening on http://127.0.0.1:PORT/mcp
// Usage: node checkhttp.mjs MODE
// Modes:
//   ok          every answer right: JSON, 202 for notifications, GET 405
//   notify-200  a notification accepted with 200, not 202      http.status
//   get-json    GET answered 200 application/json (empty)     http.get
//   sessions    a new session id for each initialize (sess-N), DELETE
//               answered 200; tools/list answered {} (no "tools")
//                                                             shape.required
import http from 'node:http';

const mode = process.argv[2] ?? 'ok';
const SESSION = 'sess-1';
let sessions = 0;
const TOOLS = [{ name: 'echo', inputSchema: { type: 'object' } }];

function answer(m) {
  if (m.method === 'initialize')
    return { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'checkhttp', version: '1.0.0' } };
  if (m.method === 'tools/list') return mode === 'sessions' ? {} : { tools: TOOLS };
  if (m.method === 'tools/call') return { content: [{ type: 'text', text: 'ok' }] };
  return {};
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET') {
      if (mode === 'get-json') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '0' });
        res.end();
      } else {
        res.writeHead(405, { Allow: 'POST, DELETE' });
        res.end();
      }
      return;
    }
    if (req.method === 'DELETE') {
      res.writeHead(200);
      res.end();
      return;
    }
    let m;
    try { m = JSON.parse(Buffer.concat(chunks).toString()); } catch { res.writeHead(400); res.end(); return; }
    let sid = SESSION;
    if (mode === 'sessions')
      sid = m.method === 'initialize' ? `sess-${++sessions}` : (req.headers['mcp-session-id'] ?? 'none');
    const headers = { 'Mcp-Session-Id': sid };
    if (m.id === undefined || m.method === undefined) {
      if (mode === 'notify-200') {
        res.writeHead(200, { ...headers, 'Content-Length': '0' });
        res.end();
      } else {
        res.writeHead(202, headers);
        res.end();
      }
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: answer(m) }));
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`checkhttp: listening on http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.on('SIGTERM', () => process.exit(0));
