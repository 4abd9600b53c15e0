// An HTTP upstream on a raw TCP server, in the test's own process, that
// records exactly what reached it: each request's method, target, head,
// decoded body and trailer field lines.  No HTTP library would send the
// framing it answers with (Content-Length beside Transfer-Encoding, a
// repeated Content-Length, trailers), so it writes its bytes itself.
//
//   const up = await startRawUpstream(answer);   // answer(req) -> bytes
//   up.origin, up.requests (what came), await up.close()
//
// answer(req) gets {method, target, head, body, trailers} and returns (or
// resolves, for a slow upstream) the whole response as a string; the
// connection is closed after it (FIN),
// so close-delimited bodies end.  One request per connection is read.
import net from 'node:net';

/** Decode a chunked body at buf; returns {body, trailers, done}. */
function dechunk(buf) {
  const parts = [];
  let off = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', off);
    if (eol < 0) return { done: false };
    const size = parseInt(buf.subarray(off, eol).toString('latin1'), 16);
    off = eol + 2;
    if (size === 0) {
      const end = buf.indexOf('\r\n\r\n', off - 2);
      if (end < 0) return { done: false };
      const trailers = buf.subarray(off, end + 2).toString('latin1');
      return { done: true, body: Buffer.concat(parts), trailers: trailers === '\r\n' ? '' : trailers };
    }
    if (buf.length < off + size + 2) return { done: false };
    parts.push(buf.subarray(off, off + size));
    off += size + 2;
  }
}

export function startRawUpstream(answer) {
  const requests = [];
  const sockets = new Set();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let done = false;
    sock.on('data', (c) => {
      if (done) return;
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const rest = buf.subarray(end + 4);
      const [method, target] = head.split('\r\n')[0].split(' ');
      let body = Buffer.alloc(0);
      let trailers = '';
      if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
        const d = dechunk(rest);
        if (!d.done) return;
        ({ body, trailers } = d);
      } else {
        const len = head.match(/\r\ncontent-length:\s*(\d+)/i);
        const need = len ? Number(len[1]) : 0;
        if (rest.length < need) return;
        body = rest.subarray(0, need);
      }
      done = true;
      const req = { method, target, head, body: body.toString('utf8'), trailers };
      requests.push(req);
      // An answer may be a promise: a slow upstream.
      Promise.resolve(answer(req)).then((bytes) => { if (!sock.destroyed) sock.end(bytes); });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        origin: `http://127.0.0.1:${server.address().port}`,
        requests,
        close: () => new Promise((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        }),
      });
    });
  });
}

/**
 * A raw client: connect to url's port, write each of parts (a string, or a
 * number of ms to wait), then read until the other end closes.  Resolves
 * the bytes that came back as a latin1 string.
 */
export function rawClient(url, parts, { timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
    const got = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${Buffer.concat(got).toString('latin1')}`));
    }, timeoutMs);
    sock.on('data', (c) => got.push(c));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got).toString('latin1'));
    });
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'number') await new Promise((r) => setTimeout(r, p));
        else if (!sock.destroyed) sock.write(p);
      }
    });
  });
}

/** Split a raw response into {status, head (lower-cased names, all values), rest}. */
export function parseResponse(text) {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, fields: [], rest: text };
  const lines = text.slice(0, end).split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const fields = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
  });
  return { status, fields, rest: text.slice(end + 4) };
}

export { dechunk };
