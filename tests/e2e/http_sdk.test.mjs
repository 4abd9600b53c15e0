// The real peers over HTTP: the TypeScript SDK client driving
// server-everything over Streamable HTTP and over legacy HTTP+SSE, directly
// and through `mcpreel record --listen ... --upstream ...`.  The client must
// get the same results either way, the record must hold every message, and
// a bearer token the client sends must never reach the database.
//
// The tests that need mcpreel's HTTP recording are skipped while
// `mcpreel record --help` does not mention --listen.  What they assume of
// the database is listed in lib/dbcheck.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { runSessionWith, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, request, startMcpreelHttp, startServerEverything, startSlowSseServer } from './lib/servers.mjs';
import { checkRecordedMessages, deleteRecorded, eventsOf, findSecret, sessionsOf } from './lib/dbcheck.mjs';
import { sql, withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();

/** An s2c row of an SSE event with empty data (see below). */
const needsHttp = support.ok ? false : support.reason;


// Without mcpreel: the transcript is deterministic over each HTTP transport
// (what the proxied tests compare relies on it), and the DELETE succeeds.
test('server-everything over Streamable HTTP and legacy SSE: the scripted session is deterministic', { timeout: 120000 }, async () => {
  await withCleanup(async ({ defer }) => {
    for (const mode of ['streamableHttp', 'sse']) {
      const se = await startServerEverything(mode);
      defer(se.stop);
      const factory = () => (mode === 'sse' ? sseTransport(se.url) : streamableHttpTransport(se.url));
      const d1 = {};
      const d2 = {};
      const first = await runSessionWith(factory(), { diagnostics: d1 });
      const second = await runSessionWith(factory(), { diagnostics: d2 });
      assert.deepEqual(second, first, `${mode}: two direct runs give the same transcript`);
      assert.notEqual(d1.sessionId, d2.sessionId, `${mode}: each run is its own session`);
      assert.match(d1.sessionId ?? '', /^[0-9a-f-]{36}$/, `${mode}: the session id is known`);
      const last = first.steps[first.steps.length - 1];
      if (mode === 'streamableHttp') {
        assert.deepEqual(last, { step: 'DELETE session', result: { hadSessionId: true, terminated: true, sessionIdCleared: true } });
      } else {
        assert.equal(last.step, 'ping (final)');
      }
      const subscribeLog = first.notifications.logMessages.find((l) => String(l.data).startsWith('Received Subscribe'));
      assert.match(subscribeLog?.data ?? '', /from session <SESSION-ID>$/, `${mode}: the session id is normalised in logs`);
    }
  });
});

/** The SDK session directly and through mcpreel, over one of the HTTP transports; checks and returns what it saw. */
async function directVsProxied({ dir, defer }, mode, { headers } = {}) {
  const transport = mode === 'sse' ? 'sse' : 'http';
  const se = await startServerEverything(mode);
  defer(se.stop);
  const make = (url) => (mode === 'sse' ? sseTransport(url, { headers }) : streamableHttpTransport(url, { headers }));
  const path = new URL(se.url).pathname;

  const direct = await runSessionWith(make(se.url), {});

  const db = join(dir, 'rec.db');
  const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: `sdk-${transport}` });
  defer(() => proxy.stop());
  const diag = {};
  const proxied = await runSessionWith(make(`${proxy.url}${path}`), { diagnostics: diag });
  assert.deepEqual(proxied, direct, `${mode}: the client sees the same results through mcpreel`);

  const stopped = await proxy.stop();
  assert.equal(stopped.code, 0, `mcpreel exits 0 on SIGTERM; stderr:\n${stopped.stderr}`);
  assert.equal(stopped.killed, false, 'mcpreel exits on SIGTERM by itself');
  // A normal session is not trouble: only the run's start and stop lines.
  const frame = [/^mcpreel: listening on /, /^mcpreel: forwarding to /, /^mcpreel: recording stopped \(Terminated\)$/, /^mcpreel: recorded to /];
  assert.deepEqual(stopped.stderr.split('\n').filter((l) => l !== '' && !frame.some((re) => re.test(l))), [],
    `${mode}: nothing but the start and stop lines on stderr`);
  return { db, diag, direct, proxied, se, proxy, stopped, transport };
}

/**
 * A session starts with its first message, not when the server named it
 * (the initialize request came before its response gave the session id):
 * its start is at or before its first message and its first exchange.
 */
function assertStartsWithFirstMessage(db, s) {
  // Differences in SQL: nanosecond times are beyond a double's exact range.
  const [d] = sql(db, `SELECT (SELECT MIN(ts_ns) FROM messages WHERE session_id = ${s.id}) - started_ns AS msg,
      (SELECT MIN(started_ns) FROM http_exchanges WHERE session_id = ${s.id}) - started_ns AS exch,
      (SELECT MIN(ts_ns) FROM messages WHERE session_id = ${s.id} AND method = 'initialize' AND kind = 'request') - started_ns AS init,
      ended_ns - started_ns AS ran
    FROM sessions WHERE id = ${s.id}`);
  console.log(`# session ${s.id}: first exchange ${(d.exch / 1e6).toFixed(3)} ms after its start, first message ${(d.msg / 1e6).toFixed(3)} ms, initialize ${(d.init / 1e6).toFixed(3)} ms; ran ${(d.ran / 1e6).toFixed(1)} ms`);
  assert.ok(d.msg >= 0, `the session starts at or before its first message (${d.msg} ns)`);
  assert.ok(d.exch >= 0, `the session starts at or before its first exchange (${d.exch} ns)`);
  assert.ok(d.init !== null && d.init >= 0, `the initialize request is in the session, after its start (${d.init} ns)`);
}

test('Streamable HTTP through mcpreel: same results, every message recorded, DELETE recorded', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, diag, se } = await directVsProxied(ctx, 'streamableHttp');
    assert.deepEqual(diag.terminate?.result, { hadSessionId: true, terminated: true, sessionIdCleared: true }, 'DELETE went through');

    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 1, `one recording session for the one MCP session: ${JSON.stringify(sessions)}`);
    const s = sessions[0];
    assert.equal(s.transport, 'http');
    assert.equal(s.name, 'sdk-http');
    assert.ok(String(s.target).includes(se.origin), `target names the upstream: ${s.target}`);
    assert.ok(s.ended_ns > s.started_ns, 'the session has ended');
    assertStartsWithFirstMessage(db, s);

    // server-everything keeps an event store, so the SDK server opens each
    // SSE stream with a priming event `id: ID` + `data: ` (empty data: no
    // message).  It is passed through, never stored as a message, and not
    // noted: it is how the transport is meant to work.
    const rows = checkRecordedMessages(db, s.id, diag);
    assert.deepEqual(eventsOf(db, s.id).filter((e) => e.kind === 'note'), [], 'nothing noted: priming events are normal');
    const has = (dir, kind, method) => rows.some((r) => r.direction === dir && r.kind === kind && r.method === method);
    for (const method of ['initialize', 'tools/list', 'tools/call', 'resources/read', 'prompts/get', 'ping']) {
      assert.ok(has('c2s', 'request', method), `client request ${method}`);
    }
    for (const method of ['sampling/createMessage', 'roots/list', 'elicitation/create']) {
      assert.ok(has('s2c', 'request', method), `server request ${method} (on an SSE stream)`);
      assert.ok(has('c2s', 'response', method), `client answer to ${method} (a POST)`);
    }
    assert.ok(has('s2c', 'notification', 'notifications/progress'), 'progress notifications (SSE events of a POST)');
    assert.ok(rows.some((r) => r.direction === 'c2s' && r.size > 2 * 1024 * 1024), 'the 2 MiB request is recorded whole');
    assert.ok(rows.some((r) => r.direction === 's2c' && r.size > 2 * 1024 * 1024), 'the 2 MiB response is recorded whole');

    const del = deleteRecorded(db, s.id);
    assert.equal(del.exchanges.length, 1, 'the DELETE exchange is recorded');
    assert.equal(del.exchanges[0].status, 200, 'the DELETE exchange: 200 from server-everything');
    assert.equal(del.exchanges[0].outcome, 'complete');
    assert.equal(del.endReason, 'the client ended the session (DELETE)');
  });
});

test('legacy HTTP+SSE through mcpreel: same results, every message recorded', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { db, diag, se } = await directVsProxied(ctx, 'sse');
    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 1, `one recording session for the one MCP session: ${JSON.stringify(sessions)}`);
    const s = sessions[0];
    assert.equal(s.transport, 'sse');
    assert.equal(s.name, 'sdk-sse');
    assert.ok(String(s.target).includes(se.origin), `target names the upstream: ${s.target}`);
    assert.ok(s.ended_ns > s.started_ns, 'the session has ended');
    assertStartsWithFirstMessage(db, s);
    // The `endpoint` event (data: /message?sessionId=...) is not JSON-RPC:
    // it is noted (session id redacted), not stored as a message.
    const rows = checkRecordedMessages(db, s.id, diag);
    assert.ok(eventsOf(db, s.id).some((e) => /endpoint event: \/message\?sessionId=\[REDACTED\]/.test(e.text ?? '')),
      'the endpoint event is noted with its session id redacted');
    assert.equal(s.end_reason, 'the client closed the SSE stream', 'a legacy session ends with its event stream');
    const has = (dir, kind, method) => rows.some((r) => r.direction === dir && r.kind === kind && r.method === method);
    for (const method of ['sampling/createMessage', 'roots/list', 'elicitation/create']) {
      assert.ok(has('s2c', 'request', method), `server request ${method}`);
      assert.ok(has('c2s', 'response', method), `client answer to ${method}`);
    }
    assert.ok(has('s2c', 'notification', 'notifications/tools/list_changed'), 'notifications outside any request (the event stream)');
  });
});

test('a bearer token the client sends is forwarded but never recorded', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const token = `mcpreel-e2e-secret-${randomBytes(24).toString('hex')}`;
    const headers = { Authorization: `Bearer ${token}` };

    // A whole SDK session over Streamable HTTP, every request with the token.
    const { db, stopped } = await directVsProxied(ctx, 'streamableHttp', { headers });
    assert.deepEqual(findSecret(db, token), [], 'the token is nowhere in the database files');
    assert.ok(!stopped.stderr.includes(token), "the token is not in mcpreel's stderr");

    // Our peer shows what reached the upstream: the header, unchanged.
    const slow = await startSlowSseServer({ delayMs: 50 });
    ctx.defer(slow.stop);
    const db2 = join(ctx.dir, 'rec2.db');
    const proxy = await startMcpreelHttp({ db: db2, upstream: slow.origin, name: 'token' });
    ctx.defer(() => proxy.stop());
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const r = await request(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    });
    assert.equal(r.status, 200);
    const st = await slow.stats();
    const seen = st.requests.filter((q) => q.path === '/mcp');
    assert.equal(seen.length, 1, 'the POST reached the upstream once');
    assert.equal(seen[0].headers.authorization, `Bearer ${token}`, 'Authorization is forwarded unchanged');
    const stopped2 = await proxy.stop();
    assert.equal(stopped2.code, 0, stopped2.stderr);
    assert.deepEqual(findSecret(db2, token), [], 'the token is nowhere in the second database');
    assert.ok(!stopped2.stderr.includes(token), "the token is not in mcpreel's stderr");
  });
});
