// Raw-TCP HTTP upstreams for the edges of fault injection over HTTP, in the
// test's own process: each answers in a way no HTTP library lets a test
// choose (an idle keep-alive connection closed, a body ended by the close,
// one large SSE event written slowly) and notes what reached it.
//
//   const up = await startEdgeUpstream(mode, opts);
//   up.origin, up.requests ([{method, target, body, at}]), up.progress,
//   await up.close()
//
// Modes:
//   'idle-close'  each POST answered {"jsonrpc":"2.0","id":ID,"result":{}}
//                 with Content-Length on a kept-alive connection, closed
//                 by the upstream after opts.idleMs with no request.
//   'close-body'  each POST answered 200, application/json, no length:
//                 the body ends with the connection (FIN).
//   'sink'        reads a body of Content-Length, noting in up.progress
//                 [ms since its head, bytes so far] as it comes; answers 200
//                 {"ok":true} once it is all in.
//   'sse-big'     answers a POST with an SSE stream (chunked): one event
//                 whose data is opts.size bytes of JSON, written in 64 KiB
//                 pieces over opts.ms, then (up.resumed 0 until then)
//                 waits opts.pauseMs before the event's end; the stream ends.
//   'json-big'    a JSON answer of opts.size bytes with Content-Length: its
//                 first opts.cut bytes (all but 1 MiB) at once, then (up.resumed 0 until then)
//                 the rest after opts.pauseMs.
//   'short-body'  a JSON answer whose Content-Length says 100 bytes more
//                 than come before the upstream closes.
//   'short-reset' the same answer, then the connection reset (TCP RST, not
//                 a FIN) once what came has been written.
import net from 'node:net';

/** The id of a JSON-RPC request body, as JSON text ("null" if none). */
function idOf(body) {
  try {
    return JSON.stringify(JSON.parse(body).id ?? null);
  } catch {
    return 'null';
  }
}

export function startEdgeUpstream(mode, opts = {}) {
  const requests = [];
  const progress = [];
  const sockets = new Set();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    let idle = null;
    let head = null;
    let need = 0;
    let t0 = 0;
    const arm = () => {
      clearTimeout(idle);
      if (mode === 'idle-close') idle = setTimeout(() => sock.end(), opts.idleMs ?? 300);
    };
    arm();
    sock.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        if (head === null) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          head = buf.subarray(0, end).toString('latin1');
          buf = buf.subarray(end + 4);
          const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
          need = m ? Number(m[1]) : 0;
          t0 = Date.now();
        }
        if (mode === 'sink') progress.push([Date.now() - t0, Math.min(buf.length, need)]);
        if (buf.length < need) return;
        const body = buf.subarray(0, need);
        buf = buf.subarray(need);
        const [method, target] = head.split('\r\n')[0].split(' ');
        requests.push({ method, target, head, body: mode === 'sink' ? `${body.length} bytes` : body.toString(), at: Date.now() });
        head = null;
        answer(sock, body.toString(mode === 'sink' ? 'latin1' : 'utf8').slice(0, 1000));
        arm();
      }
    });
  });

  function answer(sock, body) {
    const id = idOf(body);
    if (mode === 'idle-close' || mode === 'sink') {
      const out = mode === 'sink' ? '{"ok":true}' : `{"jsonrpc":"2.0","id":${id},"result":{}}`;
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(out)}\r\n\r\n${out}`);
    } else if (mode === 'close-body') {
      sock.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"jsonrpc":"2.0","id":${id},"result":{"closed":true}}`);
    } else if (mode === 'short-body') {
      const out = `{"jsonrpc":"2.0","id":${id},"result":{}}`;
      sock.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(out) + 100}\r\n\r\n${out}`);
    } else if (mode === 'short-reset') {
      const out = `{"jsonrpc":"2.0","id":${id},"result":{}}`;
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(out) + 100}\r\n\r\n${out}`,
        () => setTimeout(() => sock.resetAndDestroy(), 100));
    } else if (mode === 'json-big') {
      const size = opts.size ?? 1 << 20;
      const prefix = `{"jsonrpc":"2.0","id":${id},"result":{"pad":"`;
      const full = prefix + 'x'.repeat(size - prefix.length - 3) + '"}}';
      const cut = opts.cut ?? size - (1 << 20);
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      sock.write(full.slice(0, cut));
      setTimeout(() => {
        ctl.resumed = Date.now();
        sock.write(full.slice(cut));
      }, opts.pauseMs ?? 0);
    } else if (mode === 'sse-big') {
      const size = opts.size ?? 1 << 20;
      const ms = opts.ms ?? 1000;
      const prefix = `data: {"jsonrpc":"2.0","id":${id},"result":{"pad":"`;
      const suffix = '"}}\n\n';
      const pad = size - prefix.length - suffix.length + 6;
      const piece = 64 * 1024;
      const pieces = Math.ceil(pad / piece);
      const chunk = (s) => sock.write(`${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`);
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
      chunk(prefix);
      let i = 0;
      const timer = setInterval(() => {
        if (i < pieces) {
          chunk('x'.repeat(Math.min(piece, pad - i * piece)));
          i++;
          return;
        }
        clearInterval(timer);
        setTimeout(() => {
          ctl.resumed = Date.now();
          chunk(suffix);
          sock.end('0\r\n\r\n');
        }, opts.pauseMs ?? 0);
      }, Math.max(1, Math.floor(ms / pieces)));
      sock.on('close', () => clearInterval(timer));
    }
  }

  const ctl = { resumed: 0 };
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        get resumed() { return ctl.resumed; },
        origin: `http://127.0.0.1:${server.address().port}`,
        requests,
        progress,
        close: () => new Promise((res) => {
          for (const s of sockets) s.destroy();
          server.close(() => res());
        }),
      });
    });
  });
}
