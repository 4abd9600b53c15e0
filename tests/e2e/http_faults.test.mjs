// `mcpreel record --listen` against upstreams and clients that break the
// rules (peers/http_faults.mjs, raw sockets): resets, a malformed status
// line, chunked-encoding errors, an upstream that never answers, SSE
// streams that go quiet or never end, and clients that trickle or stall.
// The client gets a clear 502/504/408 (a JSON-RPC error for a JSON-RPC
// request), the exchange's outcome is recorded, and mcpreel keeps serving.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';

import { mcpreelHttpSupport, readEventStream, request, spawnUntilLine, startMcpreelHttp, stopChild } from './lib/servers.mjs';
import { PEERS_DIR, sql, tempDir } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PING = '{"jsonrpc":"2.0","id":41,"method":"ping"}';
const JSON_POST = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: PING };

async function withFaults(fn, args = []) {
  const t = tempDir();
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_faults.mjs')], {
    stream: 'stdout', pattern: /^http_faults: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_faults',
  });
  const upstream = peer.match[1];
  const db = join(t.dir, 'f.db');
  const mp = await startMcpreelHttp({ db, upstream, name: 'faults', args });
  try {
    await fn({ db, mp, upstream, peerOut: peer.stdout, stopProxy: () => mp.stop() });
    const stopped = await mp.stop();
    assert.equal(stopped.code, 0, `mcpreel exits 0 on SIGTERM (ASan finds no leak); stderr:\n${stopped.stderr}`);
  } finally {
    await mp.stop().catch(() => {});
    await stopChild(peer.child, peer.exited);
    t.cleanup();
  }
}

/** Poll fn() every 25 ms until it is truthy, at most ms. */
async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(25);
  }
}

/**
 * A raw client: connect to url's port, write each of parts (a string, or
 * a number of ms to wait), then read until mcpreel closes.  Resolves
 * {data, ms} (what came back, and when it closed after connecting).
 */
function rawClient(url, parts, { timeoutMs = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = net.connect(Number(new URL(url).port), '127.0.0.1');
    const got = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`mcpreel did not close the connection within ${timeoutMs} ms; got ${Buffer.concat(got)}`));
    }, timeoutMs);
    sock.on('data', (c) => got.push(c));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(got).toString('latin1'), ms: Date.now() - t0 });
    });
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'number') await sleep(p);
        else if (!sock.destroyed) sock.write(p);
      }
    });
  });
}

const exchanges = (db) => sql(db, 'SELECT path, status, outcome FROM http_exchanges ORDER BY id');

function assertRpcError(r, status, re) {
  assert.equal(r.status, status, `status; body ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/json');
  const e = JSON.parse(r.body);
  assert.equal(e.jsonrpc, '2.0');
  assert.equal(e.id, 41, 'the error answers the request by its id');
  assert.equal(e.error.code, -32000);
  assert.match(e.error.message, re);
}

test('an upstream that resets, sends a bad status line or breaks chunked encoding: 502 or a cut connection, recorded; mcpreel serves on', { skip: needsHttp, timeout: 60000 }, async () => {
  await withFaults(async ({ db, mp, stopProxy }) => {
    const reset = await request(`${mp.url}/reset`, JSON_POST);
    assertRpcError(reset, 502, /^mcpreel: the connection to http:\/\/127\.0\.0\.1:\d+ broke: Connection reset by peer$/);

    const bad = await request(`${mp.url}/bad-status`, JSON_POST);
    assertRpcError(bad, 502, /^mcpreel: malformed HTTP status line "HTTP\/1\.1 2OO OK"$/);

    // After response bytes went out, all mcpreel can do is cut the
    // client's connection: the client must see an incomplete response.
    for (const path of ['/reset-mid', '/bad-chunk', '/cut-chunk']) {
      await assert.rejects(request(`${mp.url}${path}`, JSON_POST), /aborted|ECONNRESET|socket hang up|Parse Error|closed/i, path);
    }
    const ok = await request(`${mp.url}/ok`, JSON_POST);
    assert.equal(ok.status, 200, 'mcpreel still serves');

    await stopProxy();
    const x = exchanges(db);
    assert.deepEqual(x.map((r) => r.path), ['/reset', '/bad-status', '/reset-mid', '/bad-chunk', '/cut-chunk', '/ok']);
    assert.match(x[0].outcome, /^502 from mcpreel: /);
    assert.equal(x[0].status, null);
    assert.match(x[1].outcome, /^502 from mcpreel: .*status/i);
    assert.equal(x[2].status, 200);
    assert.match(x[2].outcome, /^upstream failed: the connection to .* broke: Connection reset by peer$/);
    assert.equal(x[3].outcome, 'bad response body: malformed HTTP chunk-size line "zz"');
    assert.match(x[4].outcome, /^bad response body: HTTP body truncated/);
    assert.equal(x[5].outcome, 'complete');
    // Every request reached the record, whatever became of its answer.
    const n = sql(db, `SELECT count(*) AS n FROM messages WHERE direction = 'c2s' AND kind = 'request'`)[0].n;
    assert.equal(n, 6);
  });
});

test('an upstream that never answers: 504 after --upstream-timeout, recorded; others are served meanwhile', { skip: needsHttp, timeout: 60000 }, async () => {
  await withFaults(async ({ db, mp, peerOut, stopProxy }) => {
    const t0 = Date.now();
    const silent = request(`${mp.url}/silent`, JSON_POST);
    const ok = await request(`${mp.url}/ok`, JSON_POST);
    assert.equal(ok.status, 200, 'another client is served while one waits');
    const r = await silent;
    const ms = Date.now() - t0;
    assertRpcError(r, 504, /^mcpreel: no response from http:\/\/127\.0\.0\.1:\d+ within 1 s \(--upstream-timeout\)$/);
    assert.ok(ms >= 900 && ms < 5000, `answered after ${ms} ms`);
    await waitFor(() => /closed \/silent/.test(peerOut()), 3000, 'the upstream connection is closed');
    await stopProxy();
    const x = exchanges(db).find((e) => e.path === '/silent');
    assert.equal(x.status, null);
    assert.match(x.outcome, /^504 from mcpreel: no response from .* within 1 s/);
  }, ['--upstream-timeout', '1']);
});

test('an SSE stream quiet for longer than every time limit stays open', { skip: needsHttp, timeout: 60000 }, async () => {
  await withFaults(async ({ mp }) => {
    const r = await readEventStream(`${mp.url}/sse-quiet`, { timeoutMs: 10000, onEvent: (_, all) => (all.length === 2 ? 'stop' : undefined) });
    assert.equal(r.status, 200);
    assert.deepEqual(r.events.map((e) => e.id), ['1', '2']);
    assert.ok(r.events[1].atMs - r.events[0].atMs > 2000, 'the second event came after the quiet');
  }, ['--upstream-timeout', '1', '--idle-timeout', '1', '--head-timeout', '1']);
});

test('a never-ending SSE stream: the client ending it closes it upstream, is recorded as an ordinary end, and others are served', { skip: needsHttp, timeout: 60000 }, async () => {
  await withFaults(async ({ db, mp, peerOut, stopProxy }) => {
    const served = [];
    const stream = readEventStream(`${mp.url}/sse-forever`, {
      timeoutMs: 15000,
      onEvent: (_, all) => {
        if (all.length === 3) served.push(request(`${mp.url}/ok`, JSON_POST).then((x) => x.status));
        return all.length === 10 ? 'stop' : undefined;
      },
    });
    const r = await stream;
    assert.equal(r.events.length, 10);
    served[0] = await served[0];
    await waitFor(() => /closed \/sse-forever/.test(peerOut()), 3000, 'the upstream sees the client leave');
    assert.deepEqual(served, [200], 'a request while the stream ran');
    assert.equal((await request(`${mp.url}/ok`, JSON_POST)).status, 200, 'and one after');
    await stopProxy();
    const x = exchanges(db).find((e) => e.path === '/sse-forever');
    assert.equal(x.status, 200);
    // A stream opened with GET owes the client no answer: ending it is
    // how clients end streams (http_normal.test.mjs has the cancelled cases).
    assert.equal(x.outcome, 'the client ended the stream');
    assert.deepEqual(sql(db, `SELECT CAST(text AS TEXT) AS t FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%sse-forever%'`), []);
    const events = sql(db, `SELECT count(*) AS n FROM messages WHERE direction = 's2c' AND method = 'notifications/tick'`)[0].n;
    assert.ok(events >= 10, `${events} events recorded`);
  });
});

test('clients that trickle a head, stall a body or sit idle: 408 or a close, each within its limit', { skip: needsHttp, timeout: 60000 }, async () => {
  await withFaults(async ({ db, mp, peerOut, stopProxy }) => {
    const host = `Host: ${new URL(mp.url).host}\r\n`;
    // A slow loris: a byte of head every 300 ms still meets the limit
    // from its first byte.
    const loris = ['POST /ok HTTP/1.1\r\n', ...Array.from({ length: 20 }, () => [300, 'X']).flat()];
    const head = await rawClient(mp.url, loris);
    assert.match(head.data, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*\r\n\r\nmcpreel: no complete request head within 1 s\n$/);
    assert.ok(head.ms >= 900 && head.ms < 3000, `closed after ${head.ms} ms`);

    // A body that stops: 408, recorded, and the upstream's request closed.
    const body = await rawClient(mp.url, [`POST /ok HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`]);
    assert.match(body.data, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*mcpreel: the request body stopped: nothing for 1 s\n$/);
    assert.ok(body.ms < 3000, `closed after ${body.ms} ms`);
    await waitFor(() => /closed \/ok/.test(peerOut()), 3000, 'the upstream connection is closed');

    // Idle: nothing at all, and nothing after a complete exchange.
    const idle = await rawClient(mp.url, []);
    assert.equal(idle.data, '', 'an idle connection is closed without a word');
    assert.ok(idle.ms >= 900 && idle.ms < 3000, `closed after ${idle.ms} ms`);
    const after = await rawClient(mp.url, [`GET /ok HTTP/1.1\r\n${host}\r\n`]);
    assert.match(after.data, /^HTTP\/1\.1 200 OK\r\n/, 'the answer came first');
    assert.ok(after.ms < 3000, `closed after ${after.ms} ms`);

    await stopProxy();
    const x = exchanges(db);
    assert.ok(x.some((e) => e.status === null && /^408 from mcpreel: the request body stopped/.test(e.outcome)), JSON.stringify(x));
  }, ['--head-timeout', '1', '--idle-timeout', '1']);
});

test('a client and an upstream that each send without end and never read: the connection is closed at --idle-timeout, not held', { skip: needsHttp, timeout: 90000 }, async () => {
  const t = tempDir();
  // An upstream that answers at once with an endless chunked body and never reads the request.
  const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')]);
  const upSocks = [];
  const up = net.createServer((s) => {
    upSocks.push(s);
    s.pause();
    s.on('error', () => {});
    s.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
    const go = () => { while (!s.destroyed) { if (!s.write(chunk)) { s.once('drain', go); return; } } };
    go();
  });
  await new Promise((r) => up.listen(0, '127.0.0.1', r));
  const mp = await startMcpreelHttp({ db: join(t.dir, 'd.db'), upstream: `http://127.0.0.1:${up.address().port}`, name: 'dead', args: ['--idle-timeout', '2'] });
  try {
    const s = net.connect(mp.port, '127.0.0.1');
    s.pause();
    const t0 = Date.now();
    const closed = new Promise((res) => { s.on('close', res); s.on('error', () => {}); });
    const body = Buffer.alloc(MiB(1), 0x20);
    s.on('connect', () => {
      s.write(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * MiB(1)}\r\n\r\n`);
      const go = () => { while (!s.destroyed) { if (!s.write(body)) { s.once('drain', go); return; } } };
      go();
    });
    const r = await Promise.race([closed.then(() => 'closed'), sleep(45000).then(() => 'held')]);
    console.log(`both sides full: ${r} after ${Date.now() - t0} ms`);
    s.destroy();
    assert.equal(r, 'closed', 'the connection is not held forever');
  } finally {
    const stopped = await mp.stop();
    assert.doesNotMatch(stopped.stderr, /Sanitizer|runtime error/);
    upSocks.forEach((x) => x.destroy());
    up.close();
    t.cleanup();
  }
});

function MiB(n) { return n * 1024 * 1024; }
