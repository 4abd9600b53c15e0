// Streaming through `mcpreel record --listen`, with our slow SSE server
// (peers/slow_sse_server.mjs) as the upstream: events are passed on as they
// come, not when the response ends; a client that goes away is noticed
// upstream at once; an https upstream works with --cacert, and without it
// mcpreel refuses the self-signed certificate clearly.
//
// The peer is first checked on its own (those tests always run); the tests
// through mcpreel are skipped while `mcpreel record --help` does not
// mention --listen.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import {
  haveOpenssl,
  makeSelfSignedCert,
  mcpreelHttpSupport,
  readEventStream,
  request,
  startMcpreelHttp,
  startSlowSseServer,
} from './lib/servers.mjs';
import { messagesOf, sessionsOf } from './lib/dbcheck.mjs';
import { withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;
const needsOpenssl = haveOpenssl() ? false : 'no openssl command to make a certificate with';

const DELAY_MS = 1500;
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcpreel-e2e-stream', version: '1.0.0' } },
};
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };


const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn() every 25 ms until it returns something truthy or timeoutMs passes. */
async function waitFor(fn, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** POST initialize to url (origin + /mcp), read the SSE answer; check the two events and their timing. */
async function slowPost(url, slow, { ca } = {}) {
  const t0 = Date.now();
  const r = await readEventStream(url, { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(INIT), ca, timeoutMs: DELAY_MS + 10000 });
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'] ?? '', /^text\/event-stream/);
  assert.match(r.headers['mcp-session-id'] ?? '', /^slow-session-\d+$/, 'Mcp-Session-Id passed on');
  const data = r.events.map((e) => JSON.parse(e.data));
  assert.equal(data.length, 2, 'two events');
  assert.equal(data[0].method, 'notifications/message');
  assert.equal(data[1].id, 1);
  assert.equal(data[1].result.serverInfo.name, 'slow_sse_server');
  const st = await slow.stats();
  const post = st.posts[st.posts.length - 1];
  assert.ok(post.secondSentAt, 'the upstream sent its second event');
  return { r, post, ms: Date.now() - t0 };
}

// --- the peer on its own ------------------------------------------------------

test('slow_sse_server: the first event arrives before the second is sent', { timeout: 30000 }, async () => {
  await withCleanup(async ({ defer }) => {
    const slow = await startSlowSseServer({ delayMs: DELAY_MS });
    defer(slow.stop);
    const { r, post } = await slowPost(`${slow.origin}/mcp`, slow);
    assert.ok(r.events[0].atMs < post.secondSentAt, 'first event before the second was sent');
    assert.ok(post.secondSentAt - post.firstSentAt >= DELAY_MS - 5, 'the delay is kept');
    assert.equal(post.clientClosedAt, null);
  });
});

test('slow_sse_server: a client leaving /events is seen at once', { timeout: 30000 }, async () => {
  await withCleanup(async ({ defer }) => {
    const slow = await startSlowSseServer({});
    defer(slow.stop);
    const r = await readEventStream(`${slow.origin}/events`, { onEvent: (_, all) => (all.length === 3 ? 'stop' : undefined) });
    assert.equal(r.events.length, 3);
    const ev = await waitFor(async () => (await slow.stats()).events.find((e) => e.disconnectedAt), 3000, 'disconnect seen');
    assert.ok(ev.disconnectedAt - r.abortedAtMs < 500, `seen after ${ev.disconnectedAt - r.abortedAtMs} ms`);
  });
});

test('slow_sse_server: https with a self-signed certificate for 127.0.0.1', { skip: needsOpenssl, timeout: 30000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const tls = makeSelfSignedCert(dir);
    const slow = await startSlowSseServer({ delayMs: 100, tls });
    defer(slow.stop);
    assert.match(slow.origin, /^https:\/\/127\.0\.0\.1:\d+$/);
    await slowPost(`${slow.origin}/mcp`, slow, { ca: tls.certPem });
    await assert.rejects(request(`${slow.origin}/stats`), /self[- ]signed|certificate/i, 'untrusted without the CA');
  });
});

// --- through mcpreel --------------------------------------------------------

test('streaming: the first SSE event reaches the client before the upstream sends the second', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const slow = await startSlowSseServer({ delayMs: DELAY_MS });
    defer(slow.stop);
    const db = join(dir, 'rec.db');
    const proxy = await startMcpreelHttp({ db, upstream: slow.origin, name: 'stream' });
    defer(() => proxy.stop());

    const { r, post } = await slowPost(`${proxy.url}/mcp`, slow);
    const [first, second] = r.events;
    assert.ok(first.atMs < post.secondSentAt,
      `the first event arrived ${(first.atMs - post.firstSentAt).toFixed(1)} ms after the upstream sent it, ` +
      `${(post.secondSentAt - first.atMs).toFixed(1)} ms before the second was sent`);
    assert.ok(first.atMs - post.firstSentAt < DELAY_MS / 2, 'and without waiting for more');
    assert.ok(second.atMs >= post.secondSentAt, 'the second after it was sent');

    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    assert.equal(sessions[0].transport, 'http');
    const rows = messagesOf(db, sessions[0].id).filter((m) => m.kind !== 'invalid');
    assert.deepEqual(rows.map((m) => [m.direction, m.kind, m.method]), [
      ['c2s', 'request', 'initialize'],
      ['s2c', 'notification', 'notifications/message'],
      ['s2c', 'response', 'initialize'],
    ]);
    const s2c = rows.filter((m) => m.direction === 's2c');
    assert.ok(s2c[1].seq > s2c[0].seq, 'in the order they came');
    assert.deepEqual(JSON.parse(rows[0].raw), INIT, 'the request body as sent');
  });
});

test('cancellation: a client leaving an event stream is passed upstream within 1 s', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const slow = await startSlowSseServer({ intervalMs: 200 });
    defer(slow.stop);
    const proxy = await startMcpreelHttp({ db: join(dir, 'rec.db'), upstream: slow.origin, name: 'cancel' });
    defer(() => proxy.stop());

    const r = await readEventStream(`${proxy.url}/events`, { onEvent: (_, all) => (all.length === 3 ? 'stop' : undefined) });
    assert.equal(r.status, 200);
    assert.equal(r.events.length, 3, 'three events through mcpreel');
    assert.deepEqual(r.events.map((e) => JSON.parse(e.data).params.data), ['tick 1', 'tick 2', 'tick 3']);
    const ev = await waitFor(async () => (await slow.stats()).events.find((e) => e.disconnectedAt), 3000,
      'the upstream sees the client leave');
    const lag = ev.disconnectedAt - r.abortedAtMs;
    assert.ok(lag < 1000, `the upstream saw the disconnect ${lag.toFixed(1)} ms after the client left`);

    // mcpreel is still serving.
    const again = await readEventStream(`${proxy.url}/events`, { onEvent: () => 'stop' });
    assert.equal(again.events.length, 1);
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  });
});

test('https upstream with a self-signed certificate: works with --cacert, 502 and a clear message without', { skip: needsHttp || needsOpenssl, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const tls = makeSelfSignedCert(dir);
    const slow = await startSlowSseServer({ delayMs: 200, tls });
    defer(slow.stop);

    // Trusted: the exchange goes through, events and all.
    const trusted = await startMcpreelHttp({ db: join(dir, 'ok.db'), upstream: slow.origin, name: 'tls', args: ['--cacert', tls.cert] });
    defer(() => trusted.stop());
    await slowPost(`${trusted.url}/mcp`, slow);
    const s1 = await trusted.stop();
    assert.equal(s1.code, 0, s1.stderr);
    const sessions = sessionsOf(join(dir, 'ok.db'));
    assert.equal(sessions.length, 1);
    assert.ok(messagesOf(join(dir, 'ok.db'), sessions[0].id).some((m) => m.direction === 's2c' && m.kind === 'response'),
      'the response is recorded');

    // Not trusted: 502, and stderr says why.
    const before = (await slow.stats()).posts.length;
    const untrusted = await startMcpreelHttp({ db: join(dir, 'bad.db'), upstream: slow.origin, name: 'tls-bad' });
    defer(() => untrusted.stop());
    const r = await request(`${untrusted.url}/mcp`, { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(INIT) });
    assert.equal(r.status, 502, `status ${r.status}: ${r.body}`);
    const s2 = await untrusted.stop();
    assert.equal(s2.code, 0, s2.stderr);
    assert.match(s2.stderr, /certificate/i, `stderr mentions the certificate:\n${s2.stderr}`);
    assert.match(s2.stderr, /verif|self[- ]signed|untrusted|trust/i, `stderr says verification failed:\n${s2.stderr}`);
    assert.equal((await slow.stats()).posts.length, before, 'no request reached the upstream');
  });
});
