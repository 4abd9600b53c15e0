// The client transports record --connect builds on (transport/xport_sse.c,
// xport_remote.c, xport_http.c), driven through xport_check
// (tests/unit/xport_check.c, built next to the mcpreel binary under test):
// the legacy HTTP+SSE client and the automatic choice against
// server-everything in its sse and streamableHttp modes, the headers of
// xport_set_headers on every request, and what a caller is told when a
// message is lost (cbs.failed) against small hostile servers of ours.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';

import { startHostile } from './peers/hostile_http.mjs';
import { startServerEverything } from './lib/servers.mjs';
import { MCPREEL } from './lib/util.mjs';

const CHECK = join(dirname(MCPREEL), 'xport_check');
const TIMEOUT = 60000;

const INIT = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'xport-check', version: '1' } },
};
const SCRIPT = [
  INIT,
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi there' } } },
  { jsonrpc: '2.0', id: 4, method: 'ping' },
];

/**
 * Run xport_check KIND URL with the messages on stdin; resolves {code,
 * lines (parsed), stderr}.  Killed (and rejected) past TIMEOUT; rejected
 * on a sanitizer report (the ASan build's leaks and errors).
 */
function runCheck(kind, url, messages, headers = []) {
  return new Promise((resolve, reject) => {
    const args = [kind, url];
    for (const h of headers) args.push('-H', h);
    const child = spawn(CHECK, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`xport_check timed out: ${err}`)); },
      TIMEOUT - 5000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (/Sanitizer/.test(err)) { reject(new Error(`xport_check: a sanitizer report:\n${err}`)); return; }
      const lines = out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
      resolve({ code, lines, stderr: err });
    });
    child.stdin.end(messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('\n') + '\n');
  });
}

/** The answers among the lines, by id. */
function answers(lines) {
  const byId = new Map();
  for (const l of lines) {
    if (l.message === undefined) continue;
    const m = JSON.parse(l.message);
    if (m.id !== undefined && m.method === undefined) byId.set(m.id, m);
  }
  return byId;
}

/** Check that the session script was answered whole, in order, and ended. */
function assertWholeSession(r, label) {
  assert.equal(r.code, 0, `${label}: ${r.stderr}`);
  const a = answers(r.lines);
  assert.deepEqual([...a.keys()], [1, 2, 3, 4], `${label}: ${JSON.stringify(r.lines).slice(0, 2000)}`);
  assert.equal(a.get(1).result.protocolVersion, '2024-11-05', label);
  assert.ok(a.get(2).result.tools.some((t) => t.name === 'echo'), label);
  assert.equal(a.get(3).result.content[0].text, 'Echo: hi there', label);
  assert.deepEqual(a.get(4).result, {}, label);
  assert.deepEqual(r.lines.filter((l) => l.failed !== undefined), [], label);
  assert.deepEqual(r.lines.at(-1), { closed: 'finished' }, label);
}

/**
 * A legacy HTTP+SSE server of ours: GET /sse streams `endpoint` (the
 * result of endpoint(port)), then what stream(res, post) does; POSTs go
 * to post(req, body, res).  Every request's method, URL and headers are
 * kept in `seen`.
 */
async function startLegacyPeer({ endpoint, onPost, onStream }) {
  const seen = [];
  const streams = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method === 'GET' && req.url === '/sse') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        res.write(`event: endpoint\ndata: ${endpoint(server.address().port)}\n\n`);
        streams.add(res);
        res.on('close', () => streams.delete(res));
        if (onStream) onStream(res);
        return;
      }
      if (req.method === 'POST') {
        onPost({ req, body, res, streams });
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/sse`,
    seen,
    stop: () => new Promise((r) => { for (const s of streams) s.destroy(); server.closeAllConnections(); server.close(r); }),
  };
}

/** Answer a POSTed request on every open stream as a message event. */
function answerOnStream(streams, msg) {
  for (const s of streams) s.write(`event: message\ndata: ${JSON.stringify(msg)}\n\n`);
}

test('xport_check is built', () => {
  assert.ok(existsSync(CHECK), `${CHECK} is missing: build the xport_check target`);
});

test('legacy SSE and auto against server-everything sse; auto and http against streamableHttp',
  { timeout: TIMEOUT * 2 }, async () => {
    const sse = await startServerEverything('sse');
    try {
      const r = await runCheck('sse', sse.url, SCRIPT);
      assertWholeSession(r, 'sse');
      assert.deepEqual(r.lines.filter((l) => l.note !== undefined), [], 'sse: no notes');
      const a = await runCheck('auto', sse.url, SCRIPT);
      assertWholeSession(a, 'auto on sse');
      const notes = a.lines.filter((l) => l.note !== undefined).map((l) => l.note);
      assert.equal(notes.length, 1, JSON.stringify(notes));
      assert.match(notes[0], /answered the first POST with HTTP 404: trying the legacy HTTP\+SSE transport/);
      // The first message went twice on the wire, once to the caller.
      assert.equal(a.lines.filter((l) => l.message?.includes('"id":1') && l.message.includes('protocolVersion')).length, 1);
      const h = await runCheck('http', sse.url, SCRIPT);
      assert.ok(h.lines.some((l) => l.failed !== undefined && JSON.parse(l.body).id === 1),
        `http on an sse server: the first request fails: ${JSON.stringify(h.lines)}`);
    } finally {
      await sse.stop();
    }
    const sh = await startServerEverything('streamableHttp');
    try {
      for (const kind of ['auto', 'http']) {
        const r = await runCheck(kind, sh.url, SCRIPT);
        assertWholeSession(r, `${kind} on streamableHttp`);
        assert.ok(!r.lines.some((l) => /legacy/.test(l.note ?? '')), `${kind}: no switch`);
      }
      const s = await runCheck('sse', sh.url, SCRIPT);
      const closed = s.lines.at(-1).closed;
      assert.match(closed, /answered GET with HTTP \d+.*not a legacy HTTP\+SSE endpoint/, closed);
      assert.ok(s.lines.some((l) => l.failed !== undefined && JSON.parse(l.body).id === 1), 'the queued initialize failed');
    } finally {
      await sh.stop();
    }
  });

test('headers reach the GET and every POST; the endpoint resolves against the stream URL',
  { timeout: TIMEOUT }, async () => {
    const peer = await startLegacyPeer({
      endpoint: () => '../x/./msg?s=1',
      onPost: ({ body, res, streams }) => {
        res.writeHead(202).end('Accepted');
        const m = JSON.parse(body);
        if (m.id !== undefined) answerOnStream(streams, { jsonrpc: '2.0', id: m.id, result: {} });
      },
    });
    try {
      const r = await runCheck('sse', peer.url, [INIT, { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'ping' }], ['Authorization: Bearer SECRET-1', 'X-Extra:  v2 ']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...answers(r.lines).keys()], [1, 2]);
      const posts = peer.seen.filter((s) => s.method === 'POST');
      assert.equal(posts.length, 3);
      for (const s of peer.seen) {
        assert.equal(s.headers.authorization, 'Bearer SECRET-1', `${s.method} ${s.url}`);
        assert.equal(s.headers['x-extra'], 'v2', `${s.method} ${s.url}`);
      }
      assert.ok(posts.every((p) => p.url === '/x/msg?s=1'), JSON.stringify(posts.map((p) => p.url)));
      assert.equal(peer.seen[0].headers.accept, 'text/event-stream');
    } finally {
      await peer.stop();
    }
    const bad = await runCheck('sse', 'http://127.0.0.1:9/sse', [INIT], ['Host: evil']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /header Host cannot be given/);
    const crlf = await runCheck('sse', 'http://127.0.0.1:9/sse', [INIT], ['X-A: a\r\nX-B: b']);
    assert.equal(crlf.code, 1);
  });

test('a lost message is told once through failed: another origin, POST 500, the stream cut, a closed port',
  { timeout: TIMEOUT * 2 }, async () => {
    // An endpoint on another origin: refused, nothing POSTed anywhere.
    const origin = await startLegacyPeer({
      endpoint: (port) => `http://localhost:${port}/msg`,
      onPost: ({ res }) => res.writeHead(202).end(),
    });
    try {
      const r = await runCheck('sse', origin.url, [INIT]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.lines.at(-1).closed, /another origin \(http:\/\/localhost:\d+, not http:\/\/127\.0\.0\.1:\d+\)/);
      const failed = r.lines.filter((l) => l.failed !== undefined);
      assert.equal(failed.length, 1);
      assert.equal(JSON.parse(failed[0].body).id, 1);
      assert.equal(origin.seen.filter((s) => s.method === 'POST').length, 0);
    } finally {
      await origin.stop();
    }

    // A POST answered 500: that message fails, the transport goes on.
    const p500 = await startLegacyPeer({
      endpoint: () => '/msg',
      onPost: ({ body, res, streams }) => {
        const m = JSON.parse(body);
        if (m.method === 'tools/list') { res.writeHead(500).end('oops'); return; }
        res.writeHead(202).end();
        if (m.id !== undefined) answerOnStream(streams, { jsonrpc: '2.0', id: m.id, result: {} });
      },
    });
    try {
      const r = await runCheck('sse', p500.url, [INIT, { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'ping' }]);
      const failed = r.lines.filter((l) => l.failed !== undefined);
      assert.equal(failed.length, 1, JSON.stringify(r.lines));
      assert.equal(JSON.parse(failed[0].body).id, 2);
      assert.match(failed[0].failed, /answered HTTP 500/);
      assert.deepEqual([...answers(r.lines).keys()], [1, 3]);
      assert.deepEqual(r.lines.at(-1), { closed: 'finished' });
    } finally {
      await p500.stop();
    }

    // The stream cut while a request waits for its answer: it fails, then
    // the transport closes; the answered one does not fail.
    const cut = await startLegacyPeer({
      endpoint: () => '/msg',
      onPost: ({ body, res, streams }) => {
        res.writeHead(202).end();
        const m = JSON.parse(body);
        if (m.id === 1) answerOnStream(streams, { jsonrpc: '2.0', id: 1, result: {} });
        else setTimeout(() => { for (const s of streams) s.destroy(); }, 200);
      },
    });
    try {
      const r = await runCheck('sse', cut.url, [INIT, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow' } }]);
      const failed = r.lines.filter((l) => l.failed !== undefined);
      assert.equal(failed.length, 1, JSON.stringify(r.lines));
      assert.equal(JSON.parse(failed[0].body).id, 2);
      const closed = r.lines.at(-1).closed;
      assert.ok(closed !== undefined && closed !== 'finished', JSON.stringify(r.lines));
      assert.equal(failed[0].failed, closed);
    } finally {
      await cut.stop();
    }

    // Nothing listening: each kind fails the first request and closes.
    for (const kind of ['auto', 'http', 'sse']) {
      const r = await runCheck(kind, 'http://127.0.0.1:9/mcp', [INIT]);
      assert.equal(r.code, 0, r.stderr);
      const failed = r.lines.filter((l) => l.failed !== undefined);
      assert.equal(failed.length, 1, `${kind}: ${JSON.stringify(r.lines)}`);
      assert.match(failed[0].failed, /cannot reach http:\/\/127\.0\.0\.1:9/);
      assert.match(r.lines.at(-1).closed, /cannot reach/);
    }
  });

test('Streamable HTTP: a 401 with an OAuth body fails the request and is no message', { timeout: TIMEOUT }, async () => {
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method, headers: req.headers });
      res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
      res.end('{"error":"invalid_token","error_description":"expired"}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${server.address().port}/mcp`;
    for (const kind of ['auto', 'http']) {
      const r = await runCheck(kind, url, [INIT], ['Authorization: Bearer OLD']);
      const failed = r.lines.filter((l) => l.failed !== undefined);
      assert.equal(failed.length, 1, `${kind}: ${JSON.stringify(r.lines)}`);
      assert.match(failed[0].failed, /answered HTTP 401 Unauthorized/);
      assert.equal(r.lines.filter((l) => l.message !== undefined).length, 0, `${kind}: no message`);
    }
    assert.ok(seen.every((s) => s.headers.authorization === 'Bearer OLD'));
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('auto: a first POST answered 400 by a server that is no legacy one either says both', { timeout: TIMEOUT }, async () => {
  const seen = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.method);
      if (req.method === 'POST') {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unsupported protocol version"}}');
      } else {
        res.writeHead(405, { Allow: 'POST' }).end();
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${server.address().port}/mcp`;
    const r = await runCheck('auto', url, [INIT]);
    assert.equal(r.code, 0, r.stderr);
    const failed = r.lines.filter((l) => l.failed !== undefined);
    assert.equal(failed.length, 1, JSON.stringify(r.lines));
    assert.equal(JSON.parse(failed[0].body).id, 1);
    assert.match(failed[0].failed, /answered the first POST with HTTP 400, and as a legacy HTTP\+SSE server: .*answered GET with HTTP 405/);
    assert.equal(r.lines.at(-1).closed, failed[0].failed);
    assert.deepEqual(seen, ['POST', 'GET']);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('Streamable HTTP: an answer that is not the request\'s fails it (id null on 404, another id, a head that does not parse, 202, 302)',
  { timeout: TIMEOUT * 2 }, async () => {
    const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const failedIds = (r) => r.lines.filter((l) => l.failed !== undefined).map((l) => JSON.parse(l.body).id);
    const answered = (r) => r.lines.filter((l) => l.answers !== undefined).map((l) => l.answers);

    // An expired session: the 404's id:null error answers nothing, is no
    // message, and the request fails at once with the status.
    let peer = await startHostile('idnull404');
    try {
      const r = await runCheck('http', peer.url, [INIT, PING]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(answered(r), ['1'], JSON.stringify(r.lines));
      assert.deepEqual(failedIds(r), [2], JSON.stringify(r.lines));
      assert.match(r.lines.find((l) => l.failed !== undefined).failed, /answered HTTP 404 Not Found/);
      assert.ok(!r.lines.some((l) => l.message !== undefined && JSON.parse(l.message).id === null),
        `an id:null error passed on: ${JSON.stringify(r.lines)}`);
      assert.deepEqual(r.lines.at(-1), { closed: 'finished' });
    } finally {
      await peer.stop();
    }

    // An SSE answer with another id: passed on, but the request fails.
    peer = await startHostile('wrongid');
    try {
      const r = await runCheck('http', peer.url, [INIT]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(answered(r), [], JSON.stringify(r.lines));
      assert.deepEqual(failedIds(r), [1], JSON.stringify(r.lines));
      assert.match(r.lines.find((l) => l.failed !== undefined).failed, /without an answer/);
    } finally {
      await peer.stop();
    }

    // A head that does not parse, the connection left open: the request
    // fails and the transport closes, in auto mode too (no endless probe).
    peer = await startHostile('badhead');
    try {
      for (const kind of ['http', 'auto']) {
        const r = await runCheck(kind, peer.url, [INIT, PING]);
        assert.equal(r.code, 0, `${kind}: ${r.stderr}`);
        assert.deepEqual(failedIds(r), [1], `${kind}: ${JSON.stringify(r.lines)}`);
        assert.match(r.lines.find((l) => l.failed !== undefined).failed, /does not parse/);
        assert.match(r.lines.at(-1).closed, /does not parse/, kind);
      }
    } finally {
      await peer.stop();
    }

    // A request answered 202 with no stream to answer it on fails.
    peer = await startHostile('req202');
    try {
      const r = await runCheck('http', peer.url, [INIT]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(failedIds(r), [1], JSON.stringify(r.lines));
      assert.match(r.lines.find((l) => l.failed !== undefined).failed, /202 and has no stream open/);
    } finally {
      await peer.stop();
    }

    // A redirect fails the request, and a note says so as for 4xx/5xx.
    peer = await startHostile('redirect');
    try {
      const r = await runCheck('http', peer.url, [INIT]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(failedIds(r), [1], JSON.stringify(r.lines));
      assert.match(r.lines.find((l) => l.failed !== undefined).failed, /answered HTTP 302 Found/);
      assert.ok(r.lines.some((l) => /POST answered 302/.test(l.note ?? '')), JSON.stringify(r.lines));
    } finally {
      await peer.stop();
    }
  });

test('legacy SSE: an endpoint event that does not end is given up at once, not after 30 s', { timeout: TIMEOUT }, async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method !== 'GET') { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write('event: endpoint\ndata: /');
    const chunk = 'a'.repeat(1024);
    let n = 0;
    const t = setInterval(() => { if (n++ < 256 && !res.destroyed) res.write(chunk); else clearInterval(t); }, 2);
    res.on('close', () => clearInterval(t));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const started = Date.now();
    const r = await runCheck('sse', `http://127.0.0.1:${server.address().port}/sse`, [INIT]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Date.now() - started < 15000, 'waited for the endpoint timeout');
    const failed = r.lines.filter((l) => l.failed !== undefined);
    assert.equal(failed.length, 1, JSON.stringify(r.lines));
    assert.match(failed[0].failed, /before its endpoint event was whole/);
    assert.equal(r.lines.at(-1).closed, failed[0].failed);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('legacy SSE: a request cancelled is no longer followed, so the stream breaking fails only what still waits',
  { timeout: TIMEOUT }, async () => {
    const peer = await startLegacyPeer({
      endpoint: () => '/msg',
      onPost: ({ body, res, streams }) => {
        res.writeHead(202).end();
        const m = JSON.parse(body);
        if (m.id === 1) answerOnStream(streams, { jsonrpc: '2.0', id: 1, result: {} });
        // id 2 is never answered (cancelled); the ping's POST cuts the stream.
        if (m.method === 'ping') setTimeout(() => { for (const s of streams) s.destroy(); }, 100);
      },
    });
    try {
      const slow = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow' } };
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'user' } };
      const r = await runCheck('sse', peer.url, [INIT, `-${JSON.stringify(slow)}`, cancel, { jsonrpc: '2.0', id: 3, method: 'ping' }]);
      assert.equal(r.code, 0, r.stderr);
      const failed = r.lines.filter((l) => l.failed !== undefined).map((l) => JSON.parse(l.body).id);
      assert.deepEqual(failed, [3], JSON.stringify(r.lines));
      assert.ok(r.lines.at(-1).closed !== 'finished', JSON.stringify(r.lines));
    } finally {
      await peer.stop();
    }
  });
