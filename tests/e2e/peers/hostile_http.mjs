// A Streamable HTTP server of ours that misbehaves in one way per mode, on
// a raw socket (so it can send what node:http will not), for
// xport_sse.test.mjs.  Each request is answered by its mode:
//   idnull404  initialize: 200 JSON with a session; GET: 405; any other
//              POST: 404 with {"id": null} (an expired session, as the
//              TypeScript SDK answers it)
//   wrongid    a request: 200 SSE whose one message answers id 999
//   badhead    a request: "HTTP/1.1 2x0 OK" with a body, the connection
//              left open
//   req202     every POST: 202, no session
//   redirect   every POST: 302 to another path
// Resolves { url, posts (bodies, parsed), stop }.

import net from 'node:net';

function head(status, reason, headers, body) {
  let s = `HTTP/1.1 ${status} ${reason}\r\n`;
  for (const [k, v] of Object.entries(headers)) s += `${k}: ${v}\r\n`;
  return `${s}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function answer(mode, method, msg) {
  const id = msg?.id;
  const result = JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: '2025-03-26', capabilities: {}, serverInfo: { name: 'hostile', version: '1' } } });
  if (method === 'GET') return { text: head(405, 'Method Not Allowed', { Allow: 'POST' }, ''), close: true };
  if (method === 'DELETE') return { text: head(200, 'OK', {}, ''), close: true };
  if (id === undefined) return { text: head(202, 'Accepted', {}, ''), close: true };
  switch (mode) {
  case 'idnull404':
    if (msg.method === 'initialize') {
      return { text: head(200, 'OK', { 'Content-Type': 'application/json', 'Mcp-Session-Id': 's1' }, result), close: true };
    }
    return {
      text: head(404, 'Not Found', { 'Content-Type': 'application/json' },
        '{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}'),
      close: true,
    };
  case 'wrongid': {
    const ev = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 999, result: {} })}\n\n`;
    return { text: head(200, 'OK', { 'Content-Type': 'text/event-stream' }, ev), close: true };
  }
  case 'badhead':
    return { text: 'HTTP/1.1 2x0 OK\r\nContent-Length: 5\r\n\r\nhello', close: false };
  case 'req202':
    return { text: head(202, 'Accepted', {}, ''), close: true };
  case 'redirect':
    return { text: head(302, 'Found', { Location: '/elsewhere' }, ''), close: true };
  default:
    throw new Error(`unknown mode ${mode}`);
  }
}

export async function startHostile(mode) {
  const posts = [];
  const socks = new Set();
  const server = net.createServer((sock) => {
    socks.add(sock);
    sock.on('close', () => socks.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buf.subarray(0, end).toString().split('\r\n');
      const method = lines[0].split(' ')[0];
      const cl = lines.find((l) => /^content-length:/i.test(l));
      const len = cl ? Number(cl.split(':')[1]) : 0;
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len).toString();
      const msg = method === 'POST' ? JSON.parse(body) : undefined;
      if (msg) posts.push(msg);
      buf = Buffer.alloc(0);
      const a = answer(mode, method, msg);
      sock.write(a.text);
      if (a.close) sock.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    posts,
    stop: () => new Promise((r) => { for (const s of socks) s.destroy(); server.close(r); }),
  };
}
