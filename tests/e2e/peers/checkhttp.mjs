// A small Streamable HTTP MCP server (JSON responses, no SSE; any legacy
// revision from 2025-03-26: it answers the one asked) that breaks one HTTP
// rule of the transport on purpose, for `mcpreel check` over
// `record --listen`.  Used in-process:
//   const s = await startCheckHttp(MODE); ... s.url ... await s.close();
// or as a process, `node checkhttp.mjs MODE`, which prints
//   checkhttp: listening on http://127.0.0.1:PORT/mcp
// Modes:
//   ok            every exchange right: JSON, 202 for notifications and
//                 responses, GET 405 (the baseline: no finding)
//   notify-200    notifications/initialized answered 200, not 202
//                                                     http.status
//   content-type  tools/list answered as text/plain   http.content-type
//   request-202   tools/call taken with 202, no body, never answered
//                                                     http.status
//   get-json      GET answered 200 application/json (empty)
//                                                     http.get
//   expire        right, but the session expires after tools/list: every
//                 later request with its id is answered 404 (the client
//                 is told what to break)
//   sessions      a new session id for each initialize (sess-N), the
//                 others answered under the id they carry; tools/list
//                 answered {} (no "tools")               shape.required
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const SESSION = 'check-http-session-1';

export function startCheckHttp(mode) {
  let expired = false;
  let sessions = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        if (mode === 'get-json') res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '0' }).end();
        else res.writeHead(405, { Allow: 'POST, DELETE' }).end();
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
        return;
      }
      let m;
      try { m = JSON.parse(Buffer.concat(chunks).toString()); } catch {
        res.writeHead(400).end();
        return;
      }
      if (mode === 'expire' && expired && req.headers['mcp-session-id'] === SESSION) {
        res.writeHead(404, { 'Content-Length': '0' }).end();
        return;
      }
      if (m.method === 'tools/list' && mode === 'expire') expired = true;
      let sid = SESSION;
      if (mode === 'sessions')
        sid = m.method === 'initialize' ? `sess-${++sessions}` : (req.headers['mcp-session-id'] ?? 'none');
      if (m.id === undefined || m.method === undefined) {
        // A notification or a response: accepted, no body.
        res.writeHead(mode === 'notify-200' ? 200 : 202, { 'Mcp-Session-Id': sid, 'Content-Length': '0' }).end();
        return;
      }
      if (mode === 'request-202' && m.method === 'tools/call') {
        res.writeHead(202, { 'Mcp-Session-Id': sid, 'Content-Length': '0' }).end();
        return;
      }
      let result;
      let type = 'application/json';
      if (m.method === 'initialize') {
        result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
          serverInfo: { name: 'checkhttp', version: '1.0.0' } };
      } else if (m.method === 'tools/list') {
        result = mode === 'sessions' ? {}
          : { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] };
        if (mode === 'content-type') type = 'text/plain';
      } else if (m.method === 'tools/call') {
        result = { content: [{ type: 'text', text: String(m.params?.arguments?.text ?? '') }] };
      } else if (m.method === 'ping') {
        result = {};
      }
      const body = result !== undefined ? { jsonrpc: '2.0', id: m.id, result }
        : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no method ${m.method}` } };
      res.writeHead(200, { 'Content-Type': type, 'Mcp-Session-Id': sid }).end(JSON.stringify(body));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        origin: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const s = await startCheckHttp(process.argv[2] ?? 'ok');
  console.log(`checkhttp: listening on ${s.url}`);
}
