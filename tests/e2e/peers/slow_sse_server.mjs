// A small HTTP server of ours for testing streaming through mcpreel: it
// answers slowly, event by event, and notes when its clients go away.
//
// Usage: node slow_sse_server.mjs [--delay MS] [--interval MS]
//                                 [--stats FILE] [--tls KEY CERT]
//
// Listens on 127.0.0.1, on a port the kernel chooses, and once ready prints
//     slow_sse_server: listening on http://127.0.0.1:PORT
// (https:// with --tls, which serves HTTPS with the PEM key and certificate
// given) on stdout.  Runs until SIGTERM/SIGINT.
//
//   POST /mcp      a JSON-RPC message.  A request is answered with
//                  200 text/event-stream: one event holding a JSON-RPC
//                  notification (notifications/message), then --delay MS
//                  (default 1500) later a second event holding the JSON-RPC
//                  response, then the end of the body.  initialize gets an
//                  InitializeResult and an Mcp-Session-Id header.  A
//                  notification or response is answered 202, no body.
//   DELETE /mcp    200 (ends a session: nothing to do).
//   GET /mcp       405 (no standalone stream).
//   GET /events    200 text/event-stream: an event holding a JSON-RPC
//                  notification every --interval MS (default 200) until the
//                  client disconnects (or 60 s have passed).
//   GET /stats     the stats below, as JSON.
//
// Stats (also written to --stats FILE after every change): for each
// request but /stats, {n, method, path, headers, at}; for each POST /mcp
// stream, {n, rpcId, rpcMethod, startedAt, firstSentAt, secondSentAt,
// endedAt, clientClosedAt}; for each GET /events stream, {n, startedAt,
// sent, lastSentAt, disconnectedAt}.  Times are wall-clock milliseconds
// (performance.timeOrigin + performance.now(), sub-millisecond), the same
// clock as the tests' nowMs().  A *ClosedAt / disconnectedAt is when the
// connection closed before the server had ended the response.

import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

function usage(msg) {
  process.stderr.write(`slow_sse_server: ${msg}\nusage: node slow_sse_server.mjs [--delay MS] [--interval MS] [--stats FILE] [--tls KEY CERT]\n`);
  process.exit(2);
}

const opt = { delay: 1500, interval: 200, stats: null, tls: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--delay' || a === '--interval') {
    const v = Number(argv[++i]);
    if (!Number.isFinite(v) || v < 0) usage(`${a} needs a number of milliseconds`);
    opt[a.slice(2)] = v;
  } else if (a === '--stats') {
    opt.stats = argv[++i] ?? usage('--stats needs a file');
  } else if (a === '--tls') {
    const key = argv[++i];
    const cert = argv[++i];
    if (!key || !cert) usage('--tls needs KEY and CERT');
    opt.tls = { key: readFileSync(key), cert: readFileSync(cert) };
  } else {
    usage(`unknown argument ${a}`);
  }
}

const MAX_STREAM_MS = 60000;
const now = () => Number((performance.timeOrigin + performance.now()).toFixed(3));

const stats = { requests: [], posts: [], events: [] };
function saveStats() {
  if (opt.stats) writeFileSync(opt.stats, JSON.stringify(stats, null, 1));
}

function sse(res, data, id) {
  res.write(`event: message\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

let sessions = 0;

async function handlePost(req, res) {
  const body = await readBody(req);
  let msg;
  try {
    msg = JSON.parse(body.toString('utf8'));
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    return;
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg) || !('method' in msg) || !('id' in msg)) {
    res.writeHead(202);
    res.end();
    return;
  }
  const rec = {
    n: stats.posts.length + 1,
    rpcId: msg.id,
    rpcMethod: msg.method,
    startedAt: now(),
    firstSentAt: null,
    secondSentAt: null,
    endedAt: null,
    clientClosedAt: null,
  };
  stats.posts.push(rec);
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  let result = {};
  if (msg.method === 'initialize') {
    headers['mcp-session-id'] = `slow-session-${++sessions}`;
    result = {
      protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
      capabilities: { logging: {} },
      serverInfo: { name: 'slow_sse_server', version: '1.0.0' },
    };
  }
  res.writeHead(200, headers);
  let timer;
  res.on('close', () => {
    clearTimeout(timer);
    if (!res.writableFinished && rec.clientClosedAt === null) {
      rec.clientClosedAt = now();
      saveStats();
    }
  });
  sse(res, {
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', logger: 'slow_sse_server', data: `first event; the response follows in ${opt.delay} ms` },
  }, `${rec.n}-1`);
  rec.firstSentAt = now();
  saveStats();
  timer = setTimeout(() => {
    rec.secondSentAt = now();
    sse(res, { jsonrpc: '2.0', id: msg.id, result }, `${rec.n}-2`);
    res.end(() => {
      rec.endedAt = now();
      saveStats();
    });
  }, opt.delay);
}

function handleEvents(req, res) {
  const rec = { n: stats.events.length + 1, startedAt: now(), sent: 0, lastSentAt: null, disconnectedAt: null };
  stats.events.push(rec);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const tick = () => {
    rec.sent += 1;
    sse(res, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'slow_sse_server', data: `tick ${rec.sent}` } }, `e${rec.n}-${rec.sent}`);
    rec.lastSentAt = now();
    saveStats();
  };
  tick();
  const iv = setInterval(tick, opt.interval);
  const cap = setTimeout(() => {
    clearInterval(iv);
    res.end();
  }, MAX_STREAM_MS);
  res.on('close', () => {
    clearInterval(iv);
    clearTimeout(cap);
    if (!res.writableFinished && rec.disconnectedAt === null) {
      rec.disconnectedAt = now();
      saveStats();
    }
  });
}

async function handler(req, res) {
  const path = new URL(req.url, 'http://x').pathname;
  if (path !== '/stats') {
    stats.requests.push({ n: stats.requests.length + 1, method: req.method, path: req.url, headers: req.headers, at: now() });
    saveStats();
  }
  try {
    if (req.method === 'POST' && path === '/mcp') return await handlePost(req, res);
    if (req.method === 'DELETE' && path === '/mcp') {
      res.writeHead(200);
      return res.end();
    }
    if (req.method === 'GET' && path === '/mcp') {
      res.writeHead(405, { allow: 'POST, DELETE' });
      return res.end();
    }
    if (req.method === 'GET' && path === '/events') return handleEvents(req, res);
    if (req.method === 'GET' && path === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(stats));
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  } catch (e) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(e));
  }
}

const server = opt.tls ? https.createServer(opt.tls, handler) : http.createServer(handler);
server.listen(0, '127.0.0.1', () => {
  saveStats();
  const { port } = server.address();
  process.stdout.write(`slow_sse_server: listening on ${opt.tls ? 'https' : 'http'}://127.0.0.1:${port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.closeAllConnections?.();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
