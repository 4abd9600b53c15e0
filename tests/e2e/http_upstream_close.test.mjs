// An upstream that closes kept-alive connections on its own: a request that
// meets the close on a reused upstream connection, before any of its answer
// came back, goes once more on a fresh connection; the client sees no 502
// and the record holds each request and each answer once.  A fresh
// connection that fails still gives the 502 (no second try).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';

import { mcpreelHttpSupport, startMcpreelHttp } from './lib/servers.mjs';
import { sql, tempDir } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

// A JSON-RPC upstream over raw sockets.  mode says what it does with a
// connection:
//   'after-answer': closes it right after each answer (keep-alive kept in
//                   the head: it says nothing of closing, as a server whose
//                   keep-alive timeout is about zero);
//   'second-fin':   answers the first request, closes on the second without
//                   answering (a close that crossed that request);
//   'second-rst':   the same with a reset (ECONNRESET);
//   'never':        closes every request unanswered.
// stats: connections accepted, requests read, answers sent.
function startUpstream(mode) {
  const stats = { conns: 0, requests: 0, answers: 0 };
  const server = net.createServer((sock) => {
    stats.conns++;
    let buf = Buffer.alloc(0);
    let served = 0;
    let ended = false;
    sock.on('error', () => {});
    sock.on('data', (d) => {
      if (ended) return; // what crossed our close is never answered
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const m = /content-length:\s*(\d+)/i.exec(head);
        const len = m ? Number(m[1]) : 0;
        if (buf.length < end + 4 + len) return;
        const body = buf.subarray(end + 4, end + 4 + len).toString();
        buf = buf.subarray(end + 4 + len);
        stats.requests++;
        if (mode === 'never' || (served > 0 && mode === 'second-fin')) {
          sock.end();
          sock.destroy();
          return;
        }
        if (served > 0 && mode === 'second-rst') {
          sock.resetAndDestroy();
          return;
        }
        const id = JSON.parse(body).id;
        const answer = JSON.stringify({ jsonrpc: '2.0', id, result: { n: id } });
        sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(answer)}\r\n\r\n${answer}`);
        stats.answers++;
        served++;
        if (mode === 'after-answer') {
          ended = true;
          sock.end();
          return;
        }
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}/mcp`,
      stats,
      close: () => new Promise((r) => server.close(() => r())),
    }));
  });
}

// A client on one kept-alive connection to port: sends the POSTs one after
// the other, each as soon as the last answer is in (which is what meets an
// upstream's close); returns each answer's status and body.
function postSequence(port, ids) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const results = [];
    let buf = Buffer.alloc(0);
    let i = 0;
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`timed out after ${results.length} answers`)); }, 60000);
    const send = () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ids[i], method: 'ping' });
      sock.write(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    sock.on('connect', send);
    sock.on('error', (e) => { clearTimeout(timer); reject(e); });
    sock.on('close', () => {
      clearTimeout(timer);
      if (results.length < ids.length) reject(new Error(`closed after ${results.length} answers`));
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number((/content-length:\s*(\d+)/i.exec(head) || [0, 0])[1]);
        if (buf.length < end + 4 + len) return;
        results.push({ status: Number(head.split(' ')[1]), body: buf.subarray(end + 4, end + 4 + len).toString() });
        buf = buf.subarray(end + 4 + len);
        if (++i === ids.length) {
          clearTimeout(timer);
          sock.end();
          resolve(results);
          return;
        }
        if (/connection:\s*close/i.test(head)) {
          sock.destroy();
          return;
        }
        send();
      }
    });
  });
}

async function withUpstream(mode, fn) {
  const t = tempDir();
  const up = await startUpstream(mode);
  const db = join(t.dir, 'close.db');
  const mp = await startMcpreelHttp({ db, upstream: up.url, name: `close-${mode}` });
  try {
    await fn({ db, mp, up });
  } finally {
    await mp.stop().catch(() => {});
    await up.close();
    t.cleanup();
  }
}

// The record holds each request and each answer once, in order.
function assertRecordedOnce(db, n) {
  const rows = sql(db, "SELECT direction, kind, rpc_id FROM messages ORDER BY seq");
  assert.equal(rows.length, 2 * n, 'every request and answer recorded, none twice');
  for (let k = 0; k < n; k++) {
    assert.deepEqual([rows[2 * k].direction, rows[2 * k].kind, rows[2 * k].rpc_id], ['c2s', 'request', String(k + 1)]);
    assert.deepEqual([rows[2 * k + 1].direction, rows[2 * k + 1].kind, rows[2 * k + 1].rpc_id], ['s2c', 'response', String(k + 1)]);
  }
  const x = sql(db, "SELECT count(*) AS n, sum(outcome = 'complete') AS ok FROM http_exchanges")[0];
  assert.equal(x.n, n, 'one exchange a request');
  assert.equal(x.ok, n, 'each complete');
}

const ids = (n) => Array.from({ length: n }, (_, k) => k + 1);

for (const mode of ['second-fin', 'second-rst']) {
  test(`a request that meets the upstream's close (${mode === 'second-fin' ? 'EOF' : 'reset'}) on a reused connection goes again on a new one: no 502, recorded once`, { skip: needsHttp, timeout: 90000 }, async () => {
    await withUpstream(mode, async ({ db, mp, up }) => {
      const n = 20;
      const res = await postSequence(mp.port, ids(n));
      assert.deepEqual(res.map((r) => r.status), Array(n).fill(200), 'no 502');
      res.forEach((r, k) => assert.equal(JSON.parse(r.body).id, k + 1, 'each answer is its request\'s'));
      // Every request after the first met a close once and went again.
      assert.equal(up.stats.answers, n);
      assert.equal(up.stats.requests, 2 * n - 1, 'each retried once, no more');
      assert.equal(up.stats.conns, n);
      const { code, stderr } = await mp.stop();
      assert.equal(code, 0, stderr);
      assert.match(stderr, /kept-alive connection .* the request goes again on a new connection/);
      assertRecordedOnce(db, n);
    });
  });
}

test('an upstream that closes after each answer: many requests one after the other on one client connection, no 502', { skip: needsHttp, timeout: 120000 }, async () => {
  await withUpstream('after-answer', async ({ db, mp, up }) => {
    const n = 300;
    const res = await postSequence(mp.port, ids(n));
    assert.deepEqual(res.filter((r) => r.status !== 200).map((r) => r.status), [], 'no 502');
    assert.equal(up.stats.answers, n);
    assert.ok(up.stats.requests <= 2 * n, 'a request goes at most twice');
    const { code, stderr } = await mp.stop();
    assert.equal(code, 0, stderr);
    assertRecordedOnce(db, n);
  });
});

test('a fresh upstream connection that closes unanswered is not tried again: 502, recorded once', { skip: needsHttp, timeout: 60000 }, async () => {
  await withUpstream('never', async ({ db, mp, up }) => {
    const res = await postSequence(mp.port, [1]);
    assert.equal(res[0].status, 502);
    assert.equal(up.stats.requests, 1, 'sent once: a fresh connection is not retried');
    const { code, stderr } = await mp.stop();
    assert.equal(code, 0, stderr);
    const rows = sql(db, "SELECT direction, kind FROM messages WHERE direction = 'c2s'");
    assert.equal(rows.length, 1, 'the request recorded once');
  });
});
