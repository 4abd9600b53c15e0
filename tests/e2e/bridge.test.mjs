// Recording across transports, with the real peers: the TypeScript SDK
// client and server-everything.
//
//   * `record --connect URL`: the client over stdio (it spawns mcpreel, as
//     a host that only starts commands would), server-everything over
//     Streamable HTTP and over legacy HTTP+SSE (found by --transport auto,
//     and named by --transport http / sse);
//   * `record --listen 127.0.0.1:0 -- server-everything stdio`: the client
//     over Streamable HTTP, server-everything over stdio.
//
// Each time the client's transcript (lib/session.mjs's scripted session)
// must be the one it gets directly from the same server mode, and the
// recording must hold every message the client sent and got, once.
// --header must reach the server and its value be in no file written.
// A server that cannot be reached must not hang the host.
//
// Skipped while `mcpreel record --help` does not mention --connect.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';

import {
  assertEveryMessageOnce, bridgeSupport, comparableTranscript, DELETE_STEP, filesUnder, startMcpreelListen,
  stdioTransportWithExit,
} from './lib/bridge.mjs';
import { checkRecordedMessages, eventsOf, findSecret, messagesOf, sessionsOf } from './lib/dbcheck.mjs';
import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { spawnUntilLine, startServerEverything, startSlowSseServer } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, withCleanup } from './lib/util.mjs';

const support = bridgeSupport();
const needsBridge = support.ok ? false : support.reason;

/** The one recorded session of db, with its rows checked against what the client saw. */
function checkOneSession(db, diag) {
  const sessions = sessionsOf(db);
  assert.equal(sessions.length, 1, `one session: ${JSON.stringify(sessions.map((s) => [s.id, s.transport, s.target]))}`);
  const s = sessions[0];
  const rows = checkRecordedMessages(db, s.id, diag);
  assertEveryMessageOnce(rows, diag);
  return { s, rows, events: eventsOf(db, s.id) };
}

/** stderr lines that are not mcpreel's usual start and stop lines. */
function unusualStderr(text) {
  const usual = [/^mcpreel: listening on /, /^mcpreel: recording stopped/, /^mcpreel: recorded to /, /^mcpreel: recorded session \d+ in /, /^mcpreel: connect(ed|ing) to /,
    /^Starting default \(STDIO\) server/];
  return text.split('\n').filter((l) => l.trim() !== '' && !usual.some((re) => re.test(l)));
}

/** No sanitizer (ASan, LSan, UBSan) report in mcpreel's stderr. */
function assertNoSanitizerReport(text, label) {
  assert.doesNotMatch(text, /AddressSanitizer|LeakSanitizer|runtime error:/, `${label}: a sanitizer report:\n${text.slice(-4000)}`);
}

// ---------------------------------------------------------------------------
// record --connect: stdio host, HTTP server.

/**
 * The scripted session directly over `mode` and through `record --connect`
 * once per --transport value in `transports` (null: the option left out).
 */
async function connectVsDirect({ dir, defer }, mode, transports) {
  const se = await startServerEverything(mode);
  defer(se.stop);
  const directDiag = {};
  const direct = await runSessionWith(mode === 'sse' ? sseTransport(se.url) : streamableHttpTransport(se.url), { diagnostics: directDiag });
  const want = comparableTranscript(direct);
  if (mode === 'streamableHttp') {
    // server-everything sends notifications/tools/list_changed while it
    // handles notifications/initialized, outside any request: onto the GET
    // stream if one is open, else into its event store for a resumption
    // that never comes.  The SDK client opens its GET stream only once
    // that notification's POST got its 202, so directly it never gets it
    // (see lib/session.mjs).  mcpreel opens its GET stream at the same
    // point, so through the bridge the host does not get it either.
    assert.deepEqual(want.notifications.methods, [], 'directly over Streamable HTTP: no list_changed');
  }

  for (const transport of transports) {
    const label = `${mode}, --transport ${transport ?? '(default)'}`;
    const db = join(dir, `connect-${mode}-${transport ?? 'default'}.db`);
    const args = ['record', '--db', db, '--name', `connect-${mode}`, '--connect', se.url];
    if (transport) args.push('--transport', transport);
    const diag = {};
    const bridged = await runSessionWith(stdioTransportWithExit(MCPREEL, args), { diagnostics: diag, requestTimeoutMs: 15000 });
    await diag.exited;

    assert.ok(!bridged.steps.some((s) => s.step === DELETE_STEP), 'a stdio host has no DELETE step');
    assert.deepEqual(comparableTranscript(bridged), want, `${label}: the stdio client sees what an HTTP client sees directly`);
    assert.ok(diag.closeMs < 2000, `${label}: mcpreel exits once the host closes stdin (${diag.closeMs} ms, no SIGTERM needed)`);
    assert.deepEqual(diag.exit, { code: 0, signal: null }, `${label}: exit 0; stderr:\n${diag.stderr}`);
    assert.deepEqual(unusualStderr(diag.stderr), [], `${label}: nothing unusual on stderr`);
    assertNoSanitizerReport(diag.stderr, label);

    const { s, rows, events } = checkOneSession(db, diag);
    assert.equal(s.name, `connect-${mode}`);
    // docs/bridge.md: transport `http`, `sse` for a legacy server, whether
    // named by --transport sse or found by auto's fallback (the row is
    // set once it is known; a note says when auto fell back).
    assert.equal(s.transport, mode === 'sse' ? 'sse' : 'http', `${label}: the session's transport`);
    assert.ok(String(s.target).includes(se.url), `${label}: the target is the URL: ${s.target}`);
    assert.ok(s.ended_ns > s.started_ns, `${label}: the session has ended`);
    const notes = events.filter((e) => e.kind === 'note').map((e) => e.text);
    assert.ok(notes.some((t) => /^bridge: stdio host, .*server/.test(t) && t.includes(se.url)),
      `${label}: a note says it is a bridge: ${JSON.stringify(notes)}`);

    const switched = notes.filter((t) => /answered the first POST with HTTP 404: trying the legacy/.test(t));
    assert.equal(switched.length, mode === 'sse' && transport !== 'sse' ? 1 : 0,
      `${label}: a note says when auto fell back to legacy SSE: ${JSON.stringify(notes)}`);
    const has = (dir2, kind, method) => rows.some((r) => r.direction === dir2 && r.kind === kind && r.method === method);
    for (const method of ['sampling/createMessage', 'roots/list', 'elicitation/create']) {
      assert.ok(has('s2c', 'request', method), `${label}: server request ${method}`);
      assert.ok(has('c2s', 'response', method), `${label}: the host's answer to ${method}`);
    }
    assert.ok(has('s2c', 'notification', 'notifications/progress'), `${label}: progress notifications`);
    assert.ok(rows.some((r) => r.direction === 'c2s' && r.size > 2 * 1024 * 1024), `${label}: the 2 MiB request whole`);
    assert.ok(rows.some((r) => r.direction === 's2c' && r.size > 2 * 1024 * 1024), `${label}: the 2 MiB answer whole`);
    console.log(`# ${label}: ${rows.length} messages recorded, session ${diag.totalMs} ms (direct ${directDiag.totalMs} ms)`);
  }
}

test('record --connect to Streamable HTTP: same transcript as directly, every message once', { skip: needsBridge, timeout: 240000 }, async () => {
  await withCleanup((ctx) => connectVsDirect(ctx, 'streamableHttp', [null, 'http']));
});

test('record --connect to legacy HTTP+SSE: --transport auto finds it; same transcript, every message once', { skip: needsBridge, timeout: 240000 }, async () => {
  await withCleanup((ctx) => connectVsDirect(ctx, 'sse', [null, 'auto', 'sse']));
});

// ---------------------------------------------------------------------------
// record --listen -- CMD: HTTP clients, stdio server.

test('record --listen -- server-everything stdio: same transcript as stdio directly, every message once', { skip: needsBridge, timeout: 240000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const { command, args } = serverEverythingCommand();
    const direct = await runSession(command, args, { stderr: 'pipe' });

    const db = join(dir, 'listen.db');
    const bridge = await startMcpreelListen({ db, name: 'listen', cmd: [command, ...args] });
    defer(() => bridge.stop());
    const diag = {};
    const proxied = await runSessionWith(streamableHttpTransport(`${bridge.url}/mcp`), { diagnostics: diag });

    // The endpoint mints no session id, so the DELETE has nothing to end.
    const del = proxied.steps.find((s) => s.step === DELETE_STEP);
    assert.deepEqual(del, { step: DELETE_STEP, result: { hadSessionId: false, terminated: true, sessionIdCleared: true } });
    assert.equal(diag.sessionId, null, 'no Mcp-Session-Id');
    assert.deepEqual(comparableTranscript(proxied), direct, 'the HTTP client sees what a stdio client sees directly');

    // The client's view of what the server sent before an answer: progress
    // (the callback fired, the notifications came in order, then the
    // result), sampling and elicitation (the handlers ran, the tool's
    // answer carries their reply), a log during resources/subscribe.
    const step = (name) => proxied.steps.find((s) => s.step === name);
    assert.ok(diag.onprogressCalls >= 1, `onprogress fired (${diag.onprogressCalls} times)`);
    const lro = step('tools/call trigger-long-running-operation');
    assert.deepEqual(lro.progress.map((p) => p.progress), [1, 2, 3, 4], 'four progress notifications, in order');
    assert.match(JSON.stringify(lro.result), /Long running operation completed/);
    const sampling = step('tools/call trigger-sampling-request');
    assert.equal(sampling.samplingRequestsReceived.length, 1, 'the sampling handler ran once');
    assert.match(JSON.stringify(sampling.result), /stub reply #1 to: .*Say hello to mcpreel/, 'the tool result carries our sampling answer');
    const elicit = step('tools/call trigger-elicitation-request');
    assert.equal(elicit.elicitationRequestsReceived.length, 1, 'the elicitation handler ran once');
    assert.match(JSON.stringify(elicit.result), /Ada Lovelace/, 'the tool result carries our elicitation answer');
    assert.ok(diag.logMessages.some((l) => String(l.data).startsWith('Received Subscribe Resource request')),
      'the log sent while handling resources/subscribe reached the client');
    assert.deepEqual(step('resources/subscribe').result, {}, 'and then the answer');

    const stopped = await bridge.stop();
    assert.equal(stopped.killed, false, `mcpreel stops on SIGTERM by itself; stderr:\n${stopped.stderr}`);
    assertNoSanitizerReport(stopped.stderr, '--listen');
    console.log(`# --listen: stopped with code ${stopped.code}, signal ${stopped.signal}; session ${diag.totalMs} ms`);

    const { s, rows, events } = checkOneSession(db, diag);
    assert.equal(s.transport, 'stdio', "the session's transport is the server's");
    assert.deepEqual(JSON.parse(s.target), [command, ...args], 'the target is the argv');
    const notes = events.filter((e) => e.kind === 'note').map((e) => e.text);
    assert.ok(notes.some((t) => /^bridge: Streamable HTTP clients at .*127\.0\.0\.1:\d+.*, stdio server/.test(t)),
      `a note says it is a bridge: ${JSON.stringify(notes)}`);
    const has = (d, kind, method) => rows.some((r) => r.direction === d && r.kind === kind && r.method === method);
    for (const method of ['sampling/createMessage', 'roots/list', 'elicitation/create']) {
      assert.ok(has('s2c', 'request', method), `server request ${method}`);
      assert.ok(has('c2s', 'response', method), `the client's answer to ${method} (a POST)`);
    }
    assert.ok(has('s2c', 'notification', 'notifications/progress'));
    assert.ok(rows.some((r) => r.direction === 'c2s' && r.size > 2 * 1024 * 1024), 'the 2 MiB request whole');
    assert.ok(rows.some((r) => r.direction === 's2c' && r.size > 2 * 1024 * 1024), 'the 2 MiB answer whole');
  });
});

// ---------------------------------------------------------------------------
// --header.

test('record --connect --header: the header reaches the server on every request, its value is in no file', { skip: needsBridge, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const secret = `mcpreel-e2e-secret-${randomBytes(24).toString('hex')}`;
    const peer = await startSlowSseServer({ delayMs: 20 });
    defer(peer.stop);
    const url = `${peer.origin}/mcp`;
    const db = join(dir, 'hdr.db');
    const cassette = join(dir, 'hdr.jsonl');
    const args = ['record', '--db', db, '--cassette', cassette, '--name', 'hdr', '--connect', url,
      '--header', `Authorization: Bearer ${secret}`, '--header', 'X-Mcpreel-Test: plain'];
    const diag = {};
    const made = stdioTransportWithExit(MCPREEL, args)(diag);
    const client = new Client({ name: 'hdr', version: '1' }, { capabilities: {} });
    await client.connect(made.transport, { timeout: 15000 });
    assert.deepEqual(await client.ping({ timeout: 15000 }), {});
    await client.close();
    await diag.exited;
    assert.deepEqual(diag.exit, { code: 0, signal: null }, `exit 0; stderr:\n${diag.stderr}`);
    assertNoSanitizerReport(diag.stderr, '--header');

    const st = await peer.stats();
    const mcp = st.requests.filter((q) => q.path === '/mcp');
    const posts = mcp.filter((q) => q.method === 'POST');
    assert.ok(posts.length >= 3, `initialize, initialized and ping were POSTed: ${mcp.map((q) => q.method)}`);
    assert.ok(mcp.some((q) => q.method === 'DELETE'), `the session was ended with DELETE: ${mcp.map((q) => q.method)}`);
    for (const q of mcp) {
      assert.equal(q.headers.authorization, `Bearer ${secret}`, `${q.method} ${q.path}: Authorization as given`);
      assert.equal(q.headers['x-mcpreel-test'], 'plain', `${q.method} ${q.path}: the second header too`);
    }

    assert.deepEqual(findSecret(db, secret), [], 'the secret is nowhere in the database');
    const files = filesUnder(dir);
    assert.ok(files.some((f) => f.path === cassette), `the cassette was written: ${files.map((f) => f.path)}`);
    assert.deepEqual(files.filter((f) => f.bytes.includes(Buffer.from(secret))).map((f) => f.path), [],
      'the secret is in no file under the test directory (db, -wal, -shm, cassette)');
    assert.ok(!diag.stderr.includes(secret), "the secret is not on mcpreel's stderr");
    const [s] = sessionsOf(db);
    assert.ok(String(s.target).includes(url), `the target is the URL: ${s.target}`);
  });
});

// ---------------------------------------------------------------------------
// Failures: the host must not hang.

/** A port nothing listens on (one the kernel gave us, then closed). */
async function closedPort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Connect the SDK client through `record --connect url`, then close: {error, diag, ms, db}. */
async function connectFails(dir, url, name) {
  const db = join(dir, `${name}.db`);
  const diag = {};
  const made = stdioTransportWithExit(MCPREEL, ['record', '--db', db, '--name', name, '--connect', url])(diag);
  const client = new Client({ name, version: '1' }, { capabilities: {} });
  const t0 = Date.now();
  let error = null;
  try {
    await client.connect(made.transport, { timeout: 15000 });
  } catch (e) {
    error = e;
  }
  const ms = Date.now() - t0;
  const tc = Date.now();
  await client.close();
  await diag.exited;
  const closeMs = Date.now() - tc;
  assert.ok(closeMs < 2000, `mcpreel exits once the host closes stdin (${closeMs} ms, no SIGTERM needed)`);
  assertNoSanitizerReport(diag.stderr, name);
  return { error, diag, ms, db };
}

test('record --connect to a closed port: the request fails naming the URL, nothing hangs, exit 1', { skip: needsBridge, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const { error, diag, ms, db } = await connectFails(dir, url, 'refused');
    assert.ok(error, 'initialize fails');
    assert.equal(error.code, -32000, `a JSON-RPC error from mcpreel: ${error.message}`);
    assert.ok(error.message.includes(url), `the error names the URL: ${error.message}`);
    assert.ok(ms < 10000, `answered in ${ms} ms, not at the client's timeout`);
    assert.deepEqual(diag.exit, { code: 1, signal: null }, `exit 1 when the remote could never be reached; stderr:\n${diag.stderr}`);
    assert.ok(diag.stderr.includes(url), `stderr names the URL: ${diag.stderr}`);
    const [s] = sessionsOf(db);
    const msgs = messagesOf(db, s.id);
    assert.deepEqual(msgs.filter((r) => r.direction === 's2c'), [], 'mcpreel\'s own error is not recorded as from the server');
    assert.ok(eventsOf(db, s.id).some((e) => e.kind === 'note' && (e.text ?? '').includes(url)), 'it is noted');
  });
});

test('record --connect to a server answering 401: the request fails saying so, nothing hangs', { skip: needsBridge, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    defer(async () => {
      peer.child.kill('SIGTERM');
      await peer.exited;
    });
    const url = `${peer.match[1]}/mcp/status/401`;
    const { error, diag, ms, db } = await connectFails(dir, url, 'unauthorized');
    assert.ok(error, 'initialize fails');
    assert.equal(error.code, -32000, `a JSON-RPC error from mcpreel: ${error.message}`);
    assert.match(error.message, /401/, `the error gives the status: ${error.message}`);
    assert.ok(ms < 10000, `answered in ${ms} ms`);
    assert.equal(diag.exit?.signal, null, `mcpreel exited by itself; stderr:\n${diag.stderr}`);
    assert.ok([0, 1].includes(diag.exit?.code), `exit 0 or 1: ${diag.exit?.code}`);
    assert.match(diag.stderr, /401/, 'stderr says what the server answered');
    const [s] = sessionsOf(db);
    assert.deepEqual(messagesOf(db, s.id).filter((r) => r.direction === 's2c'), [],
      "mcpreel's own error is not recorded as from the server");
  });
});
