// An HTTP upstream of ours for the edge cases real MCP servers do not show
// on demand.  Listens on 127.0.0.1 (port chosen by the kernel) and prints
//     http_peer: listening on http://127.0.0.1:PORT
// on stdout.  Paths (under any prefix):
//   .../mirror...        200 application/json: {verb, url, rawHeaders,
//                        body} of the request as it arrived here
//   .../status/NNN       status NNN, text body "status NNN from http_peer",
//                        WWW-Authenticate on 401
//   /.well-known/...     200 application/json metadata naming the path
//   .../batch            POST a JSON-RPC batch: 200 application/json, an
//                        array of responses {id, result: {echo: method}}
//   .../legacy/sse       GET: legacy HTTP+SSE stream whose endpoint event
//                        names this server by ABSOLUTE URL
//                        (http://127.0.0.1:PORT<prefix>/legacy/message?sessionId=abc123);
//                        responses to POSTs there arrive as message events
//   .../legacy/message   POST ?sessionId=abc123: 202, and the JSON-RPC
//                        response {id, result: {echo: method}} on the stream
//                        (method endpoint-again: an endpoint event first;
//                        method refuse: 400, and no response at all)
//   .../slow             200 application/json after 300 ms
//   .../priming          POST a JSON-RPC request: 200 text/event-stream,
//                        chunked: priming events (an id and empty data,
//                        one with retry, one with "data: " and CRLF), then
//                        the answer {id, result: {primed: true}} as event
//                        p-3 (with ?big=N, and a string of N bytes in
//                        it); the stream ends ?hold=MS after it (0)
//   .../sse-raw          200 text/event-stream, chunked, written in pieces
//                        10 ms apart: comments, retry, ids, multi-line
//                        data, CRLF and CR line ends (SSE_RAW below)
import http from 'node:http';

import { SSE_RAW } from './sse_raw.mjs';

let origin;
const streams = new Map();

function send(res, status, type, body, extra = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const u = new URL(req.url, origin);
    const p = u.pathname;
    if (p.includes('/mirror')) {
      return send(res, 200, 'application/json', JSON.stringify({ verb: req.method, url: req.url, rawHeaders: req.rawHeaders, body }));
    }
    const st = p.match(/\/status\/(\d{3})$/);
    if (st) {
      const code = Number(st[1]);
      const extra = code === 401 ? { 'WWW-Authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"' } : {};
      return send(res, code, 'text/plain', `status ${code} from http_peer`, extra);
    }
    if (p.startsWith('/.well-known/')) {
      return send(res, 200, 'application/json', JSON.stringify({ resource: origin, path: p }));
    }
    if (p.endsWith('/batch')) {
      const reqs = JSON.parse(body);
      return send(res, 200, 'application/json', JSON.stringify(reqs.filter((r) => 'id' in r).map((r) => ({ jsonrpc: '2.0', id: r.id, result: { echo: r.method } }))));
    }
    if (p.endsWith('/legacy/sse') && req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      const prefix = p.slice(0, -'/legacy/sse'.length);
      res.write(`event: endpoint\ndata: ${origin}${prefix}/legacy/message?sessionId=abc123\n\n`);
      streams.set('abc123', res);
      req.socket.on('close', () => streams.delete('abc123'));
      return undefined;
    }
    if (p.endsWith('/legacy/message') && req.method === 'POST') {
      const stream = streams.get(u.searchParams.get('sessionId'));
      if (!stream) return send(res, 404, 'text/plain', 'no such session');
      const m = JSON.parse(body);
      if (m.method === 'refuse') return send(res, 400, 'text/plain', 'refused');
      send(res, 202, 'text/plain', 'Accepted');
      // A server that names its endpoint again, mid-stream.
      if (m.method === 'endpoint-again') stream.write(`event: endpoint\ndata: ${origin}/legacy/message?sessionId=abc123\n\n`);
      if ('id' in m) stream.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } })}\n\n`);
      return undefined;
    }
    if (p.endsWith('/sse-raw')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      let i = 0;
      const next = () => {
        if (i === SSE_RAW.length) return res.end();
        res.write(SSE_RAW[i++]);
        return setTimeout(next, 10);
      };
      next();
      return undefined;
    }
    if (p.endsWith('/priming') && req.method === 'POST') {
      const m = JSON.parse(body);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write('id: p-1\nretry: 2000\ndata:\n\n');
      res.write('id: p-2\r\ndata: \r\n\r\n');
      setTimeout(() => {
        const big = Number(u.searchParams.get('big') ?? 0);
        const result = big > 0 ? { primed: true, pad: 'x'.repeat(big) } : { primed: true };
        res.write(`event: message\nid: p-3\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n\n`);
        setTimeout(() => res.end(), Number(u.searchParams.get('hold') ?? 0));
      }, 20);
      return undefined;
    }
    if (p.includes('/slow')) {
      setTimeout(() => send(res, 200, 'application/json', JSON.stringify({ jsonrpc: '2.0', id: 1, result: { slow: true } })), 300);
      return undefined;
    }
    return send(res, 404, 'text/plain', 'not found');
  });
});

server.listen(0, '127.0.0.1', () => {
  origin = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`http_peer: listening on ${origin}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
