// An HTTP upstream of ours whose streams carry exactly what a test asks
// for, to check which answers a stream owes its client: answers with the
// wrong id, an id null, batches, resumed streams, and legacy HTTP+SSE
// sessions named by any query parameter or by the path.  Real servers
// answer with the right ids; this one need not.  Listens on 127.0.0.1
// (port chosen by the kernel) and prints
//     owed_peer: listening on http://127.0.0.1:PORT
// on stdout.  Paths:
//   /stream?send=J       POST: 200 text/event-stream, a priming event (id
//                        s-0, no data), then one message event per
//                        element of the JSON array J (each a message's
//                        JSON text), held open until the client leaves;
//                        with &pad=N, then a progress notification with a
//                        string of N bytes in it
//   /resume?send=J       GET: the same, for a resumed stream
//   /sse?param=P&id=S    GET: legacy HTTP+SSE stream whose endpoint event
//                        is /msgs?P=S (with &style=path: /msgs/S)
//   /msgs...             POST to an endpoint above: 202, and an answer on
//                        the stream to each request in the body (one, or
//                        a batch), except for methods
//                          silent   202 and no answer ever
//                          refuse   400 and no answer
//                          first    the answer on the stream at once,
//                                   202 only 3 s later
//                          inline   200 application/json with the
//                                   answer, nothing on the stream
import http from 'node:http';

const streams = new Map();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sseHead(res) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
}

function sendEach(res, list) {
  res.write('id: s-0\ndata:\n\n');
  list.forEach((text, i) => res.write(`event: message\nid: s-${i + 1}\ndata: ${text}\n\n`));
}

const answer = (m) => JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } });

/** The legacy session a POST target names, by query parameter or path. */
function sessionOf(u) {
  const m = u.pathname.match(/^\/msgs\/([^/]+)$/);
  if (m) return m[1];
  for (const [, v] of u.searchParams) if (streams.has(v)) return v;
  return null;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const u = new URL(req.url, 'http://x');
    if ((u.pathname === '/stream' && req.method === 'POST') || (u.pathname === '/resume' && req.method === 'GET')) {
      sseHead(res);
      sendEach(res, JSON.parse(u.searchParams.get('send') ?? '[]'));
      const pad = Number(u.searchParams.get('pad') ?? 0);
      if (pad > 0) {
        setTimeout(() => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1, message: 'x'.repeat(pad) } })}\n\n`), 100);
      }
      return;
    }
    if (u.pathname === '/sse' && req.method === 'GET') {
      const id = u.searchParams.get('id');
      sseHead(res);
      const url = u.searchParams.get('style') === 'path' ? `/msgs/${id}` : `/msgs?${u.searchParams.get('param')}=${id}`;
      res.write(`event: endpoint\ndata: ${url}\n\n`);
      streams.set(id, res);
      req.socket.on('close', () => streams.delete(id));
      return;
    }
    if (u.pathname.startsWith('/msgs') && req.method === 'POST') {
      const stream = streams.get(sessionOf(u));
      if (!stream) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('no such session');
        return;
      }
      const parsed = JSON.parse(body);
      const msgs = Array.isArray(parsed) ? parsed : [parsed];
      const method = msgs[0]?.method;
      if (method === 'refuse') {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end('refused');
        return;
      }
      if (method === 'inline') {
        const text = answer(msgs[0]);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      if (method === 'first') {
        stream.write(`event: message\ndata: ${answer(msgs[0])}\n\n`);
        await sleep(3000);
      }
      res.writeHead(202, { 'Content-Type': 'text/plain' });
      res.end('Accepted');
      if (method === 'silent' || method === 'first') return;
      for (const m of msgs) if ('id' in m && 'method' in m) stream.write(`event: message\ndata: ${answer(m)}\n\n`);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`owed_peer: listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
