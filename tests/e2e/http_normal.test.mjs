// Normal traffic is not reported as trouble; trouble still is.
//
// `mcpreel record --listen` prints, at the default log level, its start
// lines (where it listens, what it forwards to) and its stop lines, and
// nothing else for a session of real peers that goes as it should: the
// SDK client over Streamable HTTP (with its GET stream open, then
// client.close()) and over legacy HTTP+SSE against server-everything.
// The client ending a stream that owes it nothing is an ordinary end
// ("the client ended the stream"), and a priming SSE event (an id and
// empty data) is passed through byte for byte and not noted.  A client
// that really leaves mid-response (its answer still owed: a POST's
// stream, a legacy event stream, a JSON body not yet sent) is still
// warned about, noted and stored as cancelled.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { mcpreelHttpSupport, readEventStream, request, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { PEERS_DIR, sql, withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

const ENDED = 'the client ended the stream';
const CANCELLED = 'cancelled: the client closed the connection';
const LEFT_LINE = /^mcpreel: connection \d+: (POST|GET) \S+: the client closed the connection before the response ended: the upstream request was closed too \(cancelled\)$/;

// The lines a run prints whatever its traffic: where it listens and what
// it forwards to, then why it stopped and where it recorded.
const FRAME = [
  /^mcpreel: listening on http:\/\/127\.0\.0\.1:\d+$/,
  /^mcpreel: forwarding to http:\/\/127\.0\.0\.1:\d+$/,
  /^mcpreel: recording stopped \(Terminated\)$/,
  /^mcpreel: recorded to \S+$/,
];

/** mcpreel's stderr lines that are not the run's start and stop lines. */
function trafficLines(stderr) {
  return stderr.split('\n').filter((l) => l !== '' && !FRAME.some((re) => re.test(l)));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(50);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

const exchangesOf = (db) => sql(db, 'SELECT id, method, path, status, outcome FROM http_exchanges ORDER BY id');
const notesOf = (db) => sql(db, "SELECT CAST(text AS TEXT) AS text FROM events WHERE kind = 'note' ORDER BY id").map((e) => e.text);
const messagesIn = (db) => sql(db, 'SELECT direction, kind, method, sse_event_id FROM messages ORDER BY seq');

/**
 * The SDK client's session: initialize, tools/list, a tools/call, a
 * notification, the server's roots/list answered (it comes on the
 * standalone stream: GET over Streamable HTTP, the event stream over
 * legacy SSE, so that stream is open), then client.close().
 */
async function sdkSession(transport, { standalone = true } = {}) {
  const client = new Client({ name: 'e2e-normal', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  let asked;
  const rootsAsked = new Promise((r) => {
    asked = r;
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked();
    return { roots: [{ uri: 'file:///tmp/e2e-normal', name: 'e2e' }] };
  });
  await client.connect(transport);
  const tools = await client.listTools();
  assert.ok(tools.tools.some((t) => t.name === 'echo'), 'tools/list names echo');
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'normal traffic' } });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: normal traffic' }]);
  await client.sendRootsListChanged();
  if (standalone) await within(rootsAsked, 15000, 'the server asks for the roots on its standalone stream');
  // The answer to roots/list goes out before close() ends the streams.
  await sleep(300);
  await client.close();
}

/** What the session must have recorded: every message of it. */
function assertSessionRecorded(db, { standalone = true } = {}) {
  const rows = messagesIn(db);
  const has = (dir, kind, method) => rows.some((r) => r.direction === dir && r.kind === kind && r.method === method);
  for (const method of ['initialize', 'tools/list', 'tools/call']) {
    assert.ok(has('c2s', 'request', method), `the ${method} request is recorded`);
    assert.ok(has('s2c', 'response', method), `its answer is recorded`);
  }
  for (const method of ['notifications/initialized', 'notifications/roots/list_changed']) {
    assert.ok(has('c2s', 'notification', method), `the ${method} notification is recorded`);
  }
  if (!standalone) return rows;
  assert.ok(has('s2c', 'request', 'roots/list'), 'the server request on the standalone stream is recorded');
  assert.ok(has('c2s', 'response', 'roots/list'), "the client's answer to it is recorded");
  return rows;
}

test('an SDK client session over Streamable HTTP, its GET stream open, then close(): nothing on stderr, nothing cancelled, nothing noted', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const db = join(dir, 'normal.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'normal-http' });
    defer(() => proxy.stop());
    await sdkSession(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
    // mcpreel sees the GET stream end.
    await waitFor(() => exchangesOf(db).some((x) => x.method === 'GET' && x.outcome !== null), 10000, 'the GET exchange ends');
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    console.log(`# stderr:\n${stopped.stderr.replace(/^/gm, '#   ')}`);
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');

    const xs = exchangesOf(db);
    console.log(`# exchanges: ${xs.map((x) => `${x.method} ${x.status} ${x.outcome}`).join('; ')}`);
    assert.deepEqual(xs.filter((x) => /^cancelled/.test(x.outcome ?? '')), [], 'no exchange is stored as cancelled');
    const gets = xs.filter((x) => x.method === 'GET');
    assert.equal(gets.length, 1, 'the SDK opened one GET stream');
    assert.equal(gets[0].status, 200);
    assert.equal(gets[0].outcome, ENDED, 'the GET stream the client ended is an ordinary end');
    assert.ok(xs.filter((x) => x.method === 'POST').every((x) => x.outcome === 'complete'), 'every POST is complete');
    assert.deepEqual(notesOf(db), [], 'no note: priming events and a closed stream are not trouble');
    assertSessionRecorded(db);
  });
});

test('an SDK client session over Streamable HTTP with no GET stream (a stateless SDK server answers GET 405): nothing on stderr, nothing cancelled, nothing noted', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'sdk_stateless.mjs')], {
      stream: 'stdout', pattern: /^sdk_stateless: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'sdk_stateless',
    });
    defer(() => stopChild(peer.child, peer.exited));
    const db = join(dir, 'stateless.db');
    const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'normal-stateless' });
    defer(() => proxy.stop());
    await sdkSession(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)), { standalone: false });
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.deepEqual(trafficLines(stopped.stderr), [], `nothing but the start and stop lines on stderr:\n${stopped.stderr}`);
    const xs = exchangesOf(db);
    console.log(`# exchanges: ${xs.map((x) => `${x.method} ${x.status} ${x.outcome}`).join('; ')}`);
    assert.ok(xs.some((x) => x.method === 'GET' && x.status === 405), 'the SDK client tried a GET stream and was refused');
    assert.deepEqual(xs.filter((x) => x.outcome !== 'complete'), [], 'every exchange is complete');
    assert.deepEqual(notesOf(db), [], 'no note');
    assertSessionRecorded(db, { standalone: false });
  });
});

test('an SDK client session over legacy HTTP+SSE, then close(): nothing on stderr, nothing cancelled, only the endpoint noted', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('sse');
    defer(se.stop);
    const db = join(dir, 'normal-sse.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'normal-sse' });
    defer(() => proxy.stop());
    await sdkSession(new SSEClientTransport(new URL(`${proxy.url}/sse`)));
    await waitFor(() => exchangesOf(db).some((x) => x.method === 'GET' && x.outcome !== null), 10000, 'the event stream ends');
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    console.log(`# stderr:\n${stopped.stderr.replace(/^/gm, '#   ')}`);
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');

    const xs = exchangesOf(db);
    assert.deepEqual(xs.filter((x) => /^cancelled/.test(x.outcome ?? '')), [], 'no exchange is stored as cancelled');
    const gets = xs.filter((x) => x.method === 'GET');
    assert.equal(gets.length, 1);
    assert.equal(gets[0].outcome, ENDED, 'the event stream the client ended is an ordinary end');
    // The endpoint event is kept for people (show), said with -v only.
    assert.deepEqual(notesOf(db), ['GET /sse: legacy SSE endpoint event: /message?sessionId=[REDACTED]']);
    const [s] = sql(db, 'SELECT end_reason FROM sessions');
    assert.equal(s.end_reason, 'the client closed the SSE stream');
    assertSessionRecorded(db);
  });
});

test('recording stopped while the SDK client holds its streams open: no warning, nothing cancelled, the sessions end as the run did', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    for (const mode of ['streamableHttp', 'sse']) {
      const se = await startServerEverything(mode);
      defer(se.stop);
      const db = join(dir, `stop-${mode}.db`);
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: `stop-${mode}` });
      defer(() => proxy.stop());
      const client = new Client({ name: 'e2e-stop', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
      let asked;
      const rootsAsked = new Promise((r) => {
        asked = r;
      });
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked();
        return { roots: [] };
      });
      client.onerror = () => {};
      const path = new URL(se.url).pathname;
      await client.connect(mode === 'sse' ? new SSEClientTransport(new URL(`${proxy.url}${path}`)) : new StreamableHTTPClientTransport(new URL(`${proxy.url}${path}`)));
      await client.listTools();
      await within(rootsAsked, 15000, `${mode}: the standalone stream is open`);
      await sleep(300);
      const stopped = await proxy.stop();
      await client.close().catch(() => {});
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.deepEqual(trafficLines(stopped.stderr), [], `${mode}: nothing but the start and stop lines on stderr`);
      const xs = exchangesOf(db);
      assert.deepEqual(xs.filter((x) => /^cancelled/.test(x.outcome ?? '')), [], `${mode}: nothing cancelled`);
      const get = xs.find((x) => x.method === 'GET');
      assert.match(get.outcome, /^recording stopped \(Terminated\)$/, `${mode}: the stream ended as the run did`);
      const sessions = sql(db, 'SELECT end_reason FROM sessions');
      assert.equal(sessions.length, 1);
      assert.match(sessions[0].end_reason, /^recording stopped \(Terminated\)$/, `${mode}: the session ended as the run did`);
      assert.deepEqual(notesOf(db).filter((t) => !/legacy SSE endpoint event/.test(t)), [], `${mode}: no note`);
    }
  });
});

/** Headers for a JSON-RPC POST of Streamable HTTP. */
function postHeaders(sid) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (sid) {
    h['mcp-session-id'] = sid;
    h['mcp-protocol-version'] = '2025-11-25';
  }
  return h;
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'leaver', version: '1' } } };
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const LONG_CALL = {
  jsonrpc: '2.0', id: 2, method: 'tools/call',
  params: { name: 'trigger-long-running-operation', arguments: { duration: 60, steps: 60 }, _meta: { progressToken: 'leave-me' } },
};

/** What a client that left mid-response leaves in the record: a warning, a note, a cancelled exchange. */
function assertLeft(db, stderr, method, path) {
  const lines = trafficLines(stderr);
  console.log(`# stderr past start and stop: ${JSON.stringify(lines)}`);
  assert.ok(lines.some((l) => LEFT_LINE.test(l) && l.includes(`${method} ${path}:`)), `the warning about ${method} ${path} is on stderr:\n${stderr}`);
  const x = exchangesOf(db).filter((e) => e.method === method && e.path === path && e.outcome === CANCELLED);
  assert.equal(x.length, 1, `the ${method} ${path} exchange is stored as cancelled: ${JSON.stringify(exchangesOf(db))}`);
  const notes = notesOf(db).filter((t) => t.startsWith(`${method} ${path}: the client closed the connection before the response ended`));
  assert.equal(notes.length, 1, `the note row: ${JSON.stringify(notesOf(db))}`);
  assert.deepEqual(notesOf(db).filter((t) => /SSE event with no data|priming SSE event/.test(t)), [], 'no note about priming events');
}

test('a client that leaves a POST stream still owing its answer (a slow tools/call of server-everything) is warned about, noted and cancelled', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const db = join(dir, 'left.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'left-post' });
    defer(() => proxy.stop());
    const init = await request(`${proxy.url}/mcp`, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT) });
    assert.equal(init.status, 200);
    const sid = init.headers['mcp-session-id'];
    assert.ok(sid, 'server-everything names the session');
    assert.equal((await request(`${proxy.url}/mcp`, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify(INITIALIZED) })).status, 202);
    // The call's stream: a priming event, then a progress notification a
    // second; the client leaves at the first progress, its answer owed.
    const r = await readEventStream(`${proxy.url}/mcp`, {
      method: 'POST', headers: postHeaders(sid), body: JSON.stringify(LONG_CALL), timeoutMs: 30000,
      onEvent: (ev) => (/notifications\/progress/.test(ev.data ?? '') ? 'stop' : undefined),
    });
    assert.ok(r.abortedAtMs, 'the client left');
    assert.ok(r.events.some((e) => e.id && e.data === ''), `a priming event came first: ${JSON.stringify(r.events)}`);
    await waitFor(() => exchangesOf(db).some((x) => x.outcome === CANCELLED), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assertLeft(db, stopped.stderr, 'POST', '/mcp');
  });
});

test('a client that leaves a legacy event stream while its session awaits an answer is warned about, noted and cancelled', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('sse');
    defer(se.stop);
    const db = join(dir, 'left-sse.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'left-sse' });
    defer(() => proxy.stop());
    let endpoint;
    let stopAtProgress = false;
    const seen = [];
    const stream = readEventStream(`${proxy.url}/sse`, {
      headers: { accept: 'text/event-stream' }, timeoutMs: 60000,
      onEvent: (ev) => {
        if (ev.event === 'endpoint') endpoint = ev.data;
        else seen.push(ev.data);
        return stopAtProgress && /notifications\/progress/.test(ev.data ?? '') ? 'stop' : undefined;
      },
    });
    await waitFor(() => endpoint, 10000, 'the endpoint event');
    const post = (m) => request(`${proxy.url}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
    assert.equal((await post(INIT)).status, 202);
    await waitFor(() => seen.some((d) => /"id":1,/.test(d ?? '') || /"id":1}/.test(d ?? '')), 10000, 'the initialize answer on the stream');
    assert.equal((await post(INITIALIZED)).status, 202);
    stopAtProgress = true;
    assert.equal((await post(LONG_CALL)).status, 202);
    const r = await stream;
    assert.ok(r.abortedAtMs, 'the client left at the first progress notification');
    await waitFor(() => exchangesOf(db).some((x) => x.outcome === CANCELLED), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assertLeft(db, stopped.stderr, 'GET', '/sse');
  });
});

/** Our http_peer and mcpreel in front of it. */
async function withPeer({ dir, defer }, name) {
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
    stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
  });
  defer(() => stopChild(peer.child, peer.exited));
  const upstream = peer.match[1];
  const db = join(dir, `${name}.db`);
  const proxy = await startMcpreelHttp({ db, upstream, name });
  defer(() => proxy.stop());
  return { db, proxy, upstream };
}

test('a client that leaves before a JSON answer is sent is warned about, noted and cancelled', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withPeer(ctx, 'left-json');
    // http_peer answers /slow after 300 ms: the client leaves at 50.
    await new Promise((resolve) => {
      const req = http.request(`${proxy.url}/slow`, { method: 'POST', headers: postHeaders(), agent: false });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow' } }));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
    await waitFor(() => exchangesOf(db).some((x) => x.outcome === CANCELLED), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assertLeft(db, stopped.stderr, 'POST', '/slow');
  });
});

const PRIMING_CALL = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'primed' } });

test('priming SSE events (an id and empty data, with retry, with CRLF) reach the client byte for byte and are not warned about or noted', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy, upstream } = await withPeer(ctx, 'priming');
    const direct = await request(`${upstream}/priming`, { method: 'POST', headers: postHeaders(), body: PRIMING_CALL });
    const through = await request(`${proxy.url}/priming`, { method: 'POST', headers: postHeaders(), body: PRIMING_CALL });
    assert.equal(through.status, 200);
    assert.equal(through.headers['content-type'], 'text/event-stream');
    assert.ok(direct.body.toString('latin1').startsWith('id: p-1\nretry: 2000\ndata:\n\nid: p-2\r\ndata: \r\n\r\n'), 'the peer primes its stream');
    assert.ok(through.body.equals(direct.body), `the same bytes through mcpreel:\n${JSON.stringify(through.body.toString('latin1'))}`);
    const stopped = await proxy.stop();
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');
    assert.deepEqual(notesOf(db), [], 'no note');
    assert.deepEqual(exchangesOf(db).map((x) => x.outcome), ['complete']);
    const rows = messagesIn(db);
    assert.deepEqual(rows.map((r) => [r.direction, r.kind, r.sse_event_id]), [['c2s', 'request', null], ['s2c', 'response', 'p-3']],
      'the request and its answer are the messages; the priming events are none');

    // With -v they are said, as what they are.
    const verbose = await startMcpreelHttp({ db: join(ctx.dir, 'verbose.db'), upstream, name: 'priming-v', args: ['-v'] });
    ctx.defer(() => verbose.stop());
    const again = await request(`${verbose.url}/priming`, { method: 'POST', headers: postHeaders(), body: PRIMING_CALL });
    assert.ok(again.body.equals(direct.body));
    const vstopped = await verbose.stop();
    assert.match(vstopped.stderr, /^mcpreel: connection 1: a priming SSE event \(no data\), id p-1, with a retry time$/m);
    assert.match(vstopped.stderr, /^mcpreel: connection 1: a priming SSE event \(no data\), id p-2$/m);
  });
});

test('a client that leaves a POST stream once its answer came is an ordinary end, not a cancellation', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy, upstream } = await withPeer(ctx, 'answered');
    // The peer keeps the stream open 10 s after the answer: the client
    // does not wait for its end.
    const r = await readEventStream(`${proxy.url}/priming?hold=10000`, {
      method: 'POST', headers: postHeaders(), body: PRIMING_CALL, timeoutMs: 15000,
      onEvent: (ev) => (/"primed":true/.test(ev.data ?? '') ? 'stop' : undefined),
    });
    assert.ok(r.abortedAtMs, 'the client left after the answer');
    await waitFor(() => exchangesOf(db).some((x) => x.outcome !== null), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');
    assert.deepEqual(exchangesOf(db).map((x) => x.outcome), [ENDED]);
    assert.deepEqual(notesOf(db), [], 'no note');

    // With -v the end is said, as what it is.
    const verbose = await startMcpreelHttp({ db: join(ctx.dir, 'verbose.db'), upstream, name: 'answered-v', args: ['-v'] });
    ctx.defer(() => verbose.stop());
    await readEventStream(`${verbose.url}/priming?hold=10000`, {
      method: 'POST', headers: postHeaders(), body: PRIMING_CALL, timeoutMs: 15000,
      onEvent: (ev) => (/"primed":true/.test(ev.data ?? '') ? 'stop' : undefined),
    });
    await waitFor(() => /the client ended the stream/.test(verbose.stderr()), 10000, 'mcpreel -v says the client ended the stream');
    await verbose.stop();
  });
});

test('a client that leaves a POST stream whose answer mcpreel read but the client never took is warned about, noted and cancelled', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withPeer(ctx, 'undelivered');
    // An answer of 3.5 MiB to a client that reads nothing: mcpreel reads
    // and records it whole (under the 4 MiB it holds for a client), but
    // the client's socket takes only part of it.
    const { port } = new URL(proxy.url);
    const sock = net.connect(Number(port), '127.0.0.1');
    sock.pause();
    sock.on('error', () => {});
    await new Promise((r) => sock.once('connect', r));
    sock.write(`POST /priming?big=${3.5 * 1024 * 1024}&hold=10000 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`
      + `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(PRIMING_CALL)}\r\n\r\n${PRIMING_CALL}`);
    await waitFor(() => sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 's2c' AND kind = 'response'")[0].n === 1, 20000,
      'mcpreel has read and recorded the answer');
    sock.destroy();
    await waitFor(() => exchangesOf(db).some((x) => x.outcome !== null), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assertLeft(db, stopped.stderr, 'POST', '/priming?big=3670016&hold=10000');
  });
});

test('a legacy event stream: answered requests and a refused POST leave nothing owed, so the client ending it is an ordinary end', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withPeer(ctx, 'legacy-owed');
    let endpoint;
    const answers = [];
    let stop = false;
    const stream = readEventStream(`${proxy.url}/legacy/sse`, {
      timeoutMs: 15000,
      onEvent: (ev) => {
        if (ev.event === 'endpoint') endpoint = ev.data;
        else answers.push(ev.data);
        return stop ? 'stop' : undefined;
      },
    });
    await waitFor(() => endpoint, 10000, 'the endpoint event');
    const post = (m) => request(new URL(endpoint, proxy.url).href, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
    assert.equal((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 202);
    await waitFor(() => answers.length === 1, 10000, 'the answer on the stream');
    // Refused with 400: its answer will never come on the stream.
    assert.equal((await post({ jsonrpc: '2.0', id: 2, method: 'refuse' })).status, 400);
    // The client ends the stream at the next answer, once it has it.
    stop = true;
    assert.equal((await post({ jsonrpc: '2.0', id: 3, method: 'ping' })).status, 202);
    const r = await stream;
    assert.ok(r.abortedAtMs, 'the client ended the stream');
    await waitFor(() => exchangesOf(db).some((x) => x.method === 'GET' && x.outcome !== null), 10000, 'mcpreel sees it');
    const stopped = await proxy.stop();
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');
    assert.equal(exchangesOf(db).find((x) => x.method === 'GET').outcome, ENDED);
    assert.deepEqual(notesOf(db).filter((t) => /closed the connection/.test(t)), [], 'no note of a client leaving');
  });
});

/** Our owed_peer and mcpreel in front of it. */
async function withOwedPeer({ dir, defer }, name, args = []) {
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'owed_peer.mjs')], {
    stream: 'stdout', pattern: /^owed_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'owed_peer',
  });
  defer(() => stopChild(peer.child, peer.exited));
  const db = join(dir, `${name}.db`);
  const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name, args });
  defer(() => proxy.stop());
  return { db, proxy };
}

const rpc = (id, method = 'tools/call') => ({ jsonrpc: '2.0', id, method, params: {} });
const note = (method = 'notifications/progress') => ({ jsonrpc: '2.0', method, params: {} });
const ok = (id) => ({ jsonrpc: '2.0', id, result: {} });
const fail = (id) => ({ jsonrpc: '2.0', id, error: { code: -32600, message: 'no' } });
const texts = (...ms) => ms.flat().map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
const range = (n) => Array.from({ length: n }, (_, i) => i);

// A POST's stream owes the answers to the requests in its body, by id.
// Each row: the body, what its stream carries, whether the client leaving
// after all of it is an ordinary end.
const POST_OWED = [
  { name: 'an answer with another id', body: rpc(1), send: texts(ok(999)), ended: false },
  { name: 'an answer with the id as a string ("1" for 1)', body: rpc(1), send: texts(ok('1')), ended: false },
  { name: 'an error with id null', body: rpc(1), send: texts(fail(null)), ended: false },
  { name: 'an answer with no id', body: rpc(1), send: texts({ jsonrpc: '2.0', result: {} }), ended: false },
  { name: 'progress only', body: rpc(1), send: texts(note()), ended: false },
  { name: 'the answer, by its id as written', body: rpc(1), send: texts(note(), ok(1), note()), ended: true },
  { name: 'an error answer', body: rpc('a-1'), send: texts(fail('a-1')), ended: true },
  { name: 'the answer inside a batch', body: rpc(7), send: [JSON.stringify([ok(7)])], ended: true },
  { name: 'a batch, one of its two requests answered', body: [rpc(1), rpc(2), note()], send: texts(ok(1), ok(3)), ended: false },
  { name: 'a batch, both answered out of order', body: [rpc(1), note(), rpc(2)], send: texts(ok(2), ok(1)), ended: true },
  { name: 'a batch of notifications (owes nothing)', body: [note('notifications/initialized'), note('notifications/cancelled')], send: texts(note()), ended: true },
  { name: "a batch of the client's answers (owes nothing)", body: [ok(5), fail(6)], send: texts(note()), ended: true },
  { name: 'a request with id null, answered with id null', body: rpc(null), send: texts(ok(null)), ended: false },
  // An id longer than HOWED_ID_MAX (256 bytes as JSON text) is not kept.
  { name: 'an id of 254 characters (256 bytes), answered', body: rpc('i'.repeat(254)), send: texts(ok('i'.repeat(254))), ended: true },
  { name: 'an id of 255 characters, answered', body: rpc('i'.repeat(255)), send: texts(ok('i'.repeat(255))), ended: false },
  // HOWED_IDS_MAX (64) ids are kept; past them, owed until the stream ends.
  { name: 'a batch of 64 requests, all answered', body: range(64).map((i) => rpc(i)), send: texts(range(64).map((i) => ok(i))), ended: true },
  { name: 'a batch of 65 requests, all answered', body: range(65).map((i) => rpc(i)), send: texts(range(65).map((i) => ok(i))), ended: false },
];

test('a POST stream owes the answers to its own requests by id: another id, an id null, a batch half answered is a cancellation; the answers by id, or a batch that asked for none, an ordinary end', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    for (const mode of ['', '--durable']) {
      await postOwed(ctx, mode);
    }
  });
});

/** The rows of POST_OWED through one mcpreel (mode: '' or '--durable'). */
async function postOwed(ctx, mode) {
  {
    const { db, proxy } = await withOwedPeer(ctx, `post-owed${mode}`, mode ? [mode] : []);
    for (const [i, row] of POST_OWED.entries()) {
      const r = await readEventStream(`${proxy.url}/stream?case=${i}&send=${encodeURIComponent(JSON.stringify(row.send))}`, {
        method: 'POST', headers: postHeaders(), body: JSON.stringify(row.body), timeoutMs: 15000,
        onEvent: (ev, evs) => (evs.length === row.send.length + 1 ? 'stop' : undefined),
      });
      assert.ok(r.abortedAtMs, `${row.name}: the client left`);
      await waitFor(() => exchangesOf(db).some((x) => x.path.startsWith(`/stream?case=${i}&`) && x.outcome !== null), 10000, `${row.name}: mcpreel sees the client leave`);
    }
    const stopped = await proxy.stop();
    const xs = exchangesOf(db);
    for (const [i, row] of POST_OWED.entries()) {
      const x = xs.find((e) => e.path.startsWith(`/stream?case=${i}&`));
      assert.equal(x.outcome, row.ended ? ENDED : CANCELLED, `${mode} ${row.name}: ${JSON.stringify(x)}`);
    }
    // One warning a cancelled stream, nothing else (a line naming a long
    // target is cut at the log's line length, so only its start is matched).
    const lines = trafficLines(stopped.stderr);
    assert.ok(lines.every((l) => /^mcpreel: connection \d+: POST \/stream\?case=\d+&/.test(l)), `${mode}: only warnings:\n${stopped.stderr}`);
    assert.equal(lines.length, POST_OWED.filter((r) => !r.ended).length, `${mode}: one warning a cancelled stream:\n${stopped.stderr}`);
  }
}

test('a resumed stream (GET with Last-Event-ID) owes an answer: left before one came it is a cancellation, after it an ordinary end', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withOwedPeer(ctx, 'resumed');
    const rows = [
      { name: 'nothing yet', send: [], ended: false },
      { name: 'progress only', send: texts(note()), ended: false },
      { name: 'an error with id null', send: texts(fail(null)), ended: false },
      { name: 'an answer', send: texts(note(), ok(4)), ended: true },
    ];
    for (const [i, row] of rows.entries()) {
      const r = await readEventStream(`${proxy.url}/resume?case=${i}&send=${encodeURIComponent(JSON.stringify(row.send))}`, {
        headers: { accept: 'text/event-stream', 'last-event-id': 'ev-7' }, timeoutMs: 15000,
        onEvent: (ev, evs) => (evs.length === row.send.length + 1 ? 'stop' : undefined),
      });
      assert.ok(r.abortedAtMs, `${row.name}: the client left`);
      await waitFor(() => exchangesOf(db).some((x) => x.path.startsWith(`/resume?case=${i}&`) && x.outcome !== null), 10000, `${row.name}: mcpreel sees the client leave`);
    }
    // Not resumed: the standalone stream owes nothing.
    await readEventStream(`${proxy.url}/resume?case=fresh`, { headers: { accept: 'text/event-stream' }, timeoutMs: 15000, onEvent: () => 'stop' });
    await waitFor(() => exchangesOf(db).some((x) => x.path === '/resume?case=fresh' && x.outcome !== null), 10000, 'mcpreel sees the client leave');
    await proxy.stop();
    const xs = exchangesOf(db);
    for (const [i, row] of rows.entries()) {
      assert.equal(xs.find((e) => e.path.startsWith(`/resume?case=${i}&`)).outcome, row.ended ? ENDED : CANCELLED, row.name);
    }
    assert.equal(xs.find((e) => e.path === '/resume?case=fresh').outcome, ENDED);
  });
});

/**
 * A legacy session on owed_peer: the event stream (its endpoint read), a
 * way to POST to the endpoint, and a way for the client to end the stream
 * once it has had so many answers.
 */
async function legacySession(proxy, query) {
  let endpoint;
  const answers = [];
  let stopAt = Infinity;
  const stream = readEventStream(`${proxy.url}/sse?${query}`, {
    timeoutMs: 30000,
    onEvent: (ev) => {
      if (ev.event === 'endpoint') endpoint = ev.data;
      else answers.push(ev.data);
      return answers.length >= stopAt ? 'stop' : undefined;
    },
  });
  await waitFor(() => endpoint, 10000, 'the endpoint event');
  const post = (m) => request(new URL(endpoint, proxy.url).href, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
  return {
    endpoint: () => endpoint, answers, post, stream,
    // The client ends the stream once it has n answers.
    stopAfter: (n) => { stopAt = n; },
  };
}

test('a legacy session named by session_id, by another parameter or by its path: a request never answered makes the client leaving its event stream a cancellation; answered, an ordinary end', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withOwedPeer(ctx, 'legacy-named');
    const rows = [
      { name: 'session_id', query: 'param=session_id&id=py1' },
      { name: 'another parameter', query: 'param=sid&id=o1' },
      { name: 'the path', query: 'style=path&id=p1' },
      { name: 'sessionId', query: 'param=sessionId&id=ts1' },
    ];
    for (const row of rows) {
      for (const answered of [false, true]) {
        const q = `${row.query}${answered ? 'a' : 'u'}`;
        const s = await legacySession(proxy, q);
        assert.equal((await s.post(rpc(1, 'tools/list'))).status, 202);
        await waitFor(() => s.answers.length === 1, 10000, `${row.name}: the answer on the stream`);
        // The client ends the stream at the next answer: the second
        // request's, or (that one never answered) a third's.
        s.stopAfter(2);
        assert.equal((await s.post(rpc(2, answered ? 'tools/list' : 'silent'))).status, 202);
        if (!answered) assert.equal((await s.post(note('notifications/ping-me'))).status, 202);
        if (!answered) assert.equal((await s.post(rpc(3, 'ping'))).status, 202);
        assert.ok((await s.stream).abortedAtMs, `${row.name}: the client ended the stream`);
        await waitFor(() => exchangesOf(db).some((x) => x.method === 'GET' && x.path === `/sse?${q}` && x.outcome !== null), 10000, `${row.name}: mcpreel sees it`);
        const x = exchangesOf(db).find((e) => e.method === 'GET' && e.path === `/sse?${q}`);
        assert.equal(x.outcome, answered ? ENDED : CANCELLED, `${row.name}, ${answered ? 'answered' : 'not answered'}: ${JSON.stringify(x)}`);
      }
    }
    await proxy.stop();
    // Each session's POSTs are recorded in the session of its event stream.
    const posts = sql(db, "SELECT g.path, (SELECT count(*) FROM http_exchanges p WHERE p.method = 'POST' AND p.session_id = g.session_id) AS n FROM http_exchanges g WHERE g.method = 'GET' ORDER BY g.id");
    assert.deepEqual(posts.map((r) => r.n), rows.flatMap(() => [4, 2]), `the POSTs of each event stream in its session: ${JSON.stringify(posts)}`);
  });
});

test('a legacy session: an answer seen before its POST is cut, a batch of notifications, an answer in the POST body: only what is really owed keeps the event stream owing', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    for (const mode of ['', '--durable']) {
      await legacySettle(ctx, mode);
    }
  });
});

/** The settling cases of a legacy session through one mcpreel (mode: '' or '--durable'). */
async function legacySettle(ctx, mode) {
  {
    const { db, proxy } = await withOwedPeer(ctx, `legacy-settle${mode}`, mode ? [mode] : []);
    const getOutcome = async (q) => {
      await waitFor(() => exchangesOf(db).some((x) => x.method === 'GET' && x.path === `/sse?${q}` && x.outcome !== null), 10000, `${q}: mcpreel sees the client leave`);
      return exchangesOf(db).find((x) => x.method === 'GET' && x.path === `/sse?${q}`).outcome;
    };

    // A: answered on the stream, then its POST cut before its 202; B never
    // answered.  B is still owed.
    {
      const q = 'param=sessionId&id=cut1';
      const s = await legacySession(proxy, q);
      const a = http.request(new URL(s.endpoint(), proxy.url), { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
      a.on('error', () => {});
      a.end(JSON.stringify(rpc(10, 'first')));
      await waitFor(() => s.answers.length === 1, 10000, 'the answer to A on the stream');
      assert.equal((await s.post(rpc(11, 'silent'))).status, 202);
      a.destroy();
      await waitFor(() => exchangesOf(db).some((x) => x.method === 'POST' && x.outcome === CANCELLED), 10000, "A's POST cut");
      s.stopAfter(2);
      assert.equal((await s.post(rpc(12, 'ping'))).status, 202);
      await s.stream;
      assert.equal(await getOutcome(q), CANCELLED, `${mode}: B still owed`);
    }
    // A batch of notifications owes nothing; an answer inline settles.
    {
      const q = 'param=session_id&id=batch1';
      const s = await legacySession(proxy, q);
      assert.equal((await s.post([note('notifications/initialized'), note('notifications/cancelled')])).status, 202);
      const inline = await s.post(rpc(20, 'inline'));
      assert.equal(inline.status, 200);
      assert.match(inline.body.toString(), /"id":20/);
      s.stopAfter(1);
      assert.equal((await s.post(rpc(21, 'ping'))).status, 202);
      await s.stream;
      assert.equal(await getOutcome(q), ENDED, `${mode}: nothing owed`);
    }
    // A refused batch: its requests are owed no more.
    {
      const q = 'param=session_id&id=batch2';
      const s = await legacySession(proxy, q);
      assert.equal((await s.post([rpc(30, 'refuse'), rpc(31, 'x')])).status, 400);
      s.stopAfter(1);
      assert.equal((await s.post(rpc(32, 'ping'))).status, 202);
      await s.stream;
      assert.equal(await getOutcome(q), ENDED, `${mode}: nothing owed`);
    }
    // A batch of requests, one of them not answered.
    {
      const q = 'param=session_id&id=batch3';
      const s = await legacySession(proxy, q);
      assert.equal((await s.post([rpc(40, 'x'), rpc(41, 'y')])).status, 202);
      await waitFor(() => s.answers.length === 2, 10000, 'both answers');
      assert.equal((await s.post(rpc(42, 'silent'))).status, 202);
      s.stopAfter(3);
      assert.equal((await s.post(rpc(43, 'ping'))).status, 202);
      await s.stream;
      assert.equal(await getOutcome(q), CANCELLED, `${mode}: 42 owed`);
    }
    await proxy.stop();
  }
}

test('a client that leaves a POST stream once its answer came, while a 3.5 MiB progress notification after it is still in mcpreel\'s output, is an ordinary end', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, proxy } = await withOwedPeer(ctx, 'after-answer');
    // The answer, then a progress notification too big for the client's
    // socket to take while it reads nothing.
    const { port } = new URL(proxy.url);
    const sock = net.connect(Number(port), '127.0.0.1');
    sock.on('error', () => {});
    await new Promise((r) => sock.once('connect', r));
    const body = JSON.stringify(rpc(1));
    const target = `/stream?send=${encodeURIComponent(JSON.stringify(texts(ok(1))))}&pad=${3.5 * 1024 * 1024}`;
    let got = '';
    const answered = new Promise((r) => sock.on('data', (d) => {
      got += d;
      if (got.includes('"id":1,"result"')) {
        sock.pause();
        r();
      }
    }));
    sock.write(`POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`
      + `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await within(answered, 15000, 'the answer reaches the client');
    await waitFor(() => sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 's2c' AND method = 'notifications/progress'")[0].n === 1, 20000,
      'mcpreel has read and recorded the progress notification');
    sock.destroy();
    await waitFor(() => exchangesOf(db).some((x) => x.outcome !== null), 10000, 'mcpreel sees the client leave');
    const stopped = await proxy.stop();
    assert.deepEqual(trafficLines(stopped.stderr), [], 'nothing but the start and stop lines on stderr');
    assert.deepEqual(exchangesOf(db).map((x) => x.outcome), [ENDED]);
    assert.deepEqual(notesOf(db), [], 'no note');
  });
});
