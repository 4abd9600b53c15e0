// An HTTP upstream that breaks HTTP on purpose, on a raw TCP server (no
// HTTP library would send these).  Listens on 127.0.0.1 (port chosen by
// the kernel) and prints `http_faults: listening on http://127.0.0.1:PORT`
// on stdout; then `http_faults: closed PATH` whenever a client connection
// that asked for PATH closes.  Reads one request per connection (head and
// Content-Length body), then by the path's last segment:
//   /ok           200 application/json, a JSON-RPC result (keep-alive)
//   /reset        reset the connection (RST), no response
//   /reset-mid    a chunked 200 head and one chunk, then a reset
//   /bad-status   "HTTP/1.1 2OO OK": a malformed status line
//   /bad-chunk    a chunked 200 head, then a chunk size that is not hex
//   /cut-chunk    a chunked 200 head, half a chunk, then close (FIN)
//   /silent       never answers
//   /sse-quiet    an SSE head and one event at once, the second 2500 ms
//                 later, then keeps the stream open
//   /sse-forever  an SSE head, then an event every 100 ms until the
//                 client goes
// and these, as fast as the connection takes them, until the client goes:
//   /interim-forever  interim heads: 100 Continue, 103 Early Hints (with
//                 Link headers), for ever, never a final response
//   /json-forever a chunked 200 application/json body that never ends
//                 (one JSON-RPC result whose string never closes)
//   /length-forever  the same with a Content-Length of 1 TiB
//   /sse-event-forever  an SSE head, then one event whose data line never
//                 ends
import net from 'node:net';

const RESULT = '{"jsonrpc":"2.0","id":1,"result":{}}';
const SSE_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const event = (n) => chunk(`id: ${n}\ndata: {"jsonrpc":"2.0","method":"notifications/tick","params":{"n":${n}}}\n\n`);

// Write what next() gives for as long as the socket takes it, waiting for
// 'drain' when it does not, until the client goes.
function pump(sock, first, next) {
  sock.write(first);
  const go = () => {
    while (!sock.destroyed) {
      if (!sock.write(next())) {
        sock.once('drain', go);
        return;
      }
    }
  };
  go();
}

const INTERIM = 'HTTP/1.1 100 Continue\r\n\r\n' +
  'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n' +
  'Link: </script.js>; rel=preload; as=script\r\n\r\n';
const PAD = 'x'.repeat(64 * 1024);

function respond(sock, path) {
  const timers = [];
  sock.on('close', () => timers.forEach((t) => clearTimeout(t)));
  switch (path.replace(/\?.*$/, '').split('/').pop()) {
    case 'ok':
      sock.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${RESULT.length}\r\n\r\n${RESULT}`);
      break;
    case 'reset':
      sock.resetAndDestroy();
      break;
    case 'reset-mid':
      sock.write(CHUNKED_HEAD + chunk('{"jsonrpc":"2.0",'));
      timers.push(setTimeout(() => sock.resetAndDestroy(), 200));
      break;
    case 'bad-status':
      sock.end('HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n');
      break;
    case 'bad-chunk':
      sock.write(`${CHUNKED_HEAD}zz\r\nhello\r\n`);
      break;
    case 'cut-chunk':
      sock.end(`${CHUNKED_HEAD}40\r\n{"jsonrpc":"2.0",`);
      break;
    case 'silent':
      break;
    case 'sse-quiet':
      sock.write(SSE_HEAD + event(1));
      timers.push(setTimeout(() => sock.write(event(2)), 2500));
      break;
    case 'sse-forever': {
      let n = 0;
      sock.write(SSE_HEAD);
      const tick = () => {
        sock.write(event(++n));
        timers.push(setTimeout(tick, 100));
      };
      tick();
      break;
    }
    case 'interim-forever':
      pump(sock, INTERIM, () => INTERIM.repeat(64));
      break;
    case 'json-forever':
      pump(sock, CHUNKED_HEAD + chunk('{"jsonrpc":"2.0","id":1,"result":{"pad":"'), () => chunk(PAD));
      break;
    case 'length-forever':
      pump(sock, `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${2 ** 40}\r\n\r\n` +
        '{"jsonrpc":"2.0","id":1,"result":{"pad":"', () => PAD);
      break;
    case 'sse-event-forever':
      pump(sock, SSE_HEAD + chunk('data: {"jsonrpc":"2.0","id":1,"result":{"pad":"'), () => chunk(PAD));
      break;
    default:
      sock.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  }
}

const server = net.createServer((sock) => {
  let buf = Buffer.alloc(0);
  let path = null;
  let need = -1;
  sock.on('error', () => {});
  sock.on('close', () => process.stdout.write(`http_faults: closed ${path ?? '(no request)'}\n`));
  sock.on('data', (c) => {
    if (need === 0) return;
    buf = Buffer.concat([buf, c]);
    if (path === null) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      path = head.split(' ')[1];
      const len = head.match(/\r\ncontent-length:\s*(\d+)/i);
      need = len ? Number(len[1]) : 0;
      buf = buf.subarray(end + 4);
    }
    if (buf.length >= need) {
      need = 0;
      respond(sock, path);
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http_faults: listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
