// OpenTelemetry export, checked by an independent decoder: the TypeScript
// SDK client drives server-everything through `mcpreel record --otlp URL`
// (over stdio and over Streamable HTTP) and otlp/receiver.py, a collector
// made of Google's protobuf library and the OTLP message definitions,
// receives the spans.  What each span must be is worked out from the
// recorded messages (JSON.parse) and the MCP semantic conventions
// (lib/otlp.mjs's attribute table); then `export --format otlp` of the
// same session must give the same spans; then a collector that is down,
// slow, failing or throttling must change nothing for the client or the
// recording, and be counted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { EmptyResultSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  KIND, anyToJson, closedPort, compareSpans, decodeFile, expectedSpans, mcpreelOtlpSupport, peerRule,
  receiverSupport, recordedSession, sessionIds, spanShape, startReceiver,
} from './lib/otlp.mjs';
import { run2026 } from './lib/client2026.mjs';
import { CLIENT_INFO, ROOTS, serverEverythingCommand, stdioTransport, streamableHttpTransport } from './lib/session.mjs';
import { startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, withCleanup } from './lib/util.mjs';

const rx = receiverSupport();
const ot = mcpreelOtlpSupport();
const skip = !rx.ok ? rx.reason : !ot.ok ? ot.reason : false;

// The traceparents the client puts in params._meta: two valid ones (one
// with a tracestate) and one with an all-zero trace id, which is invalid
// and must be ignored (the span stays in the session's trace).
const TP = {
  echo: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'e2e=1,vendor=mcpreel' },
  prompt: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  invalid: { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' },
};

const TIME_RE = /\d{1,2}:\d{2}:\d{2}(?:\s?[AaPp]\.?\s?[Mm]\.?)?/g;

/**
 * One SDK session: initialize, tools/list, tools/call echo (traceparent
 * and tracestate), tools/call of a tool that does not exist and of one
 * with bad arguments (both answered with isError results by this SDK),
 * prompts/get (traceparent), a prompt whose handler throws (-32603), one
 * that does not exist (-32602), resources/read, a method nobody has
 * (-32601), ping (an invalid traceparent), close.  The client offers
 * roots, so server-everything asks for them (server-to-client requests).
 * Resolves {transcript, sent, received}: the results (deterministic), and
 * the messages the client sent and received, as the client saw them.
 */
async function scriptedSession(factory, { secret } = {}) {
  const diag = { stderr: '' };
  const made = factory(diag);
  const sent = [];
  const received = [];
  const inner = made.transport;
  // A tap: every message both ways, as the client sent and got it.
  const transport = {
    set onmessage(f) { inner.onmessage = (m, extra) => { received.push(m); f(m, extra); }; },
    set onclose(f) { inner.onclose = f; },
    set onerror(f) { inner.onerror = f; },
    get sessionId() { return inner.sessionId; },
    setProtocolVersion: (v) => inner.setProtocolVersion?.(v),
    start: () => inner.start(),
    send: (m, o) => { sent.push(m); return inner.send(m, o); },
    close: () => inner.close(),
  };
  const client = new Client(CLIENT_INFO, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: ROOTS }));
  const steps = [];
  const step = async (name, fn) => {
    try {
      steps.push({ step: name, result: JSON.parse(JSON.stringify(await fn()).replace(TIME_RE, '<TIME>')) });
    } catch (e) {
      if (typeof e?.code !== 'number') throw e;
      steps.push({ step: name, error: { code: e.code, message: String(e.message) } });
    }
  };
  await client.connect(transport);
  steps.push({ step: 'initialize', result: { version: client.getServerVersion()?.name } });
  await step('tools/list', async () => (await client.listTools()).tools.map((t) => t.name).sort());
  const echoArgs = secret ? { message: 'otlp', password: secret } : { message: 'otlp' };
  await step('tools/call echo', () => client.callTool({ name: 'echo', arguments: echoArgs, _meta: TP.echo }));
  await step('tools/call no-such-tool', () => client.callTool({ name: 'no-such-tool', arguments: {} }));
  await step('tools/call get-sum bad', () => client.callTool({ name: 'get-sum', arguments: { a: 'x', b: 1 } }));
  await step('prompts/get args-prompt', () => client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Île-de-France' }, _meta: TP.prompt }));
  await step('prompts/get resource-prompt bad', () => client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'nope', resourceId: '1' } }));
  await step('prompts/get no-such-prompt', () => client.getPrompt({ name: 'no-such-prompt' }));
  await step('resources/read', () => client.readResource({ uri: 'demo://resource/dynamic/text/1' }));
  await step('no such method', () => client.request({ method: 'mcpreel/no-such-method', params: {} }, EmptyResultSchema));
  await step('ping', () => client.request({ method: 'ping', params: { _meta: TP.invalid } }, EmptyResultSchema));
  // server-everything asks for the roots 350 ms after initialization:
  // let that request be answered before the end.
  await new Promise((r) => setTimeout(r, 800));
  await client.close();
  return { transcript: steps, sent, received, diag };
}

/** The SDK script over stdio through `mcpreel ARGS -- server-everything`. */
function viaStdio(args, env = {}) {
  const { command, args: seArgs } = serverEverythingCommand();
  return stdioTransport(MCPREEL, [...args, '--', command, ...seArgs],
    { stderr: 'pipe', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env } });
}

/** Check a session's received spans against its recording; returns {expected, received, session, rows, problems}. */
function checkSpans(db, name, received, { side = 'server', payloads = false, serverPort, label }) {
  const { session, rows } = recordedSession(db, `name = '${name}'`);
  const expected = expectedSpans(rows, { session, side });
  const s = {
    side,
    payloads,
    transport: session.transport,
    sessionKey: sessionIds(session).sessionKey,
    clientAddress: '127.0.0.1',
    serverAddress: '127.0.0.1',
    serverPort,
    peer: peerRule({ transport: session.transport, side }),
  };
  const requests = rows.filter((r) => r.kind === 'request').length;
  const notifications = rows.filter((r) => r.kind === 'notification').length;
  assert.equal(expected.length, requests + notifications);
  assert.equal(received.length, requests + notifications,
    `${label}: span count = ${requests} requests + ${notifications} notifications on the wire; got ${received.map((x) => x.name).join(', ')}`);
  const { problems } = compareSpans(received, expected, s);
  assert.deepEqual(problems, [], `${label}: spans against the recording and the conventions`);
  return { expected, received, session, rows };
}

/** What the script must have exercised, so that a checked span set means something. */
function assertCoverage(expected, label) {
  const has = (pred, what) => assert.ok(expected.some(pred), `${label}: the session has ${what}`);
  has((e) => e.name === 'tools/call echo' && e.parentId === '00f067aa0ba902b7', 'the echo call with its traceparent');
  has((e) => e.name === 'tools/call no-such-tool' && e.fact.errorType === 'tool_error', 'a tool error (no such tool)');
  has((e) => e.name === 'prompts/get args-prompt' && e.parentId === 'b7ad6b7169203331', 'the prompt with its traceparent');
  has((e) => e.name === 'prompts/get resource-prompt' && e.fact.errorType === '-32603', 'a server error (-32603)');
  has((e) => e.name === 'prompts/get no-such-prompt' && e.fact.code === '-32602', 'an invalid-params answer');
  has((e) => e.fact.code === '-32601', 'a method-not-found answer');
  has((e) => e.name === 'resources/read' && e.fact.uri === 'demo://resource/dynamic/text/1', 'resources/read');
  has((e) => e.name === 'ping' && e.parentId === '', 'ping with an invalid traceparent');
  has((e) => e.name === 'notifications/initialized', 'a client notification');
  has((e) => e.name === 'roots/list', 'a server-to-client request');
}

/** The session's messages, compared with what the client sent and received (multisets: HTTP has no one order). */
function assertAllRecorded(rows, run, label) {
  const canon = (list) => list.map((m) => JSON.stringify(m, Object.keys(flatKeys(m)).sort())).sort();
  assert.deepEqual(canon(rows.filter((r) => r.direction === 'c2s').map((r) => JSON.parse(r.raw))), canon(run.sent),
    `${label}: every client message is recorded`);
  assert.deepEqual(canon(rows.filter((r) => r.direction === 's2c').map((r) => JSON.parse(r.raw))), canon(run.received),
    `${label}: every server message is recorded`);
}

/** Every key of a JSON value, for a replacer that sorts them. */
function flatKeys(v, out = {}) {
  if (Array.isArray(v)) v.forEach((x) => flatKeys(x, out));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) { out[k] = 1; flatKeys(v[k], out); }
  return out;
}

/** stderr lines about the collector. */
const collectorLines = (stderr) => stderr.split('\n').filter((l) => /OpenTelemetry|collector|otlp/i.test(l));

/** The session row's otlp_dropped. */
const dropped = (db, name) => sql(db, `SELECT otlp_dropped FROM sessions WHERE name = '${name}'`)[0]?.otlp_dropped;

// The baseline transcript, without --otlp (the script is deterministic).
let baseline = null;
async function baselineTranscript(dir) {
  if (!baseline) baseline = (await scriptedSession(viaStdio(['record', '--db', join(dir, 'base.db')]))).transcript;
  return baseline;
}

test('stdio: live spans, decoded by protobuf, match the recording and the conventions', { skip, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const rcv = await startReceiver(dir);
    defer(rcv.stop);
    const db = join(dir, 'rec.db');
    const env = {
      OTEL_SERVICE_NAME: 'e2e-agents',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=e2e,host.name=box-7',
    };
    const run = await scriptedSession(viaStdio(['record', '--db', db, '--name', 'live-stdio', '--otlp', rcv.origin,
      '--otlp-header', 'X-E2E-Token: not-a-secret-but-kept-out'], env));
    assert.deepEqual(run.transcript, await baselineTranscript(dir), 'the client sees what it sees without --otlp');

    const { rows } = recordedSession(db, `name = 'live-stdio'`);
    const want = rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length;
    const got = await rcv.waitSpans(want);
    const reqs = rcv.requests();
    assert.deepEqual(reqs.flatMap((r) => r.problems), [], 'the receiver found nothing wrong in the encoding');
    assert.deepEqual(reqs.filter((r) => r.error), [], 'every request decoded');
    for (const r of reqs) {
      assert.equal(r.contentType, 'application/x-protobuf', 'protobuf by default');
      assert.equal(r.path, '/v1/traces', '--otlp ORIGIN posts to ORIGIN/v1/traces');
      assert.equal(r.headers['x-e2e-token'], 'not-a-secret-but-kept-out', '--otlp-header is sent');
    }
    const { expected } = checkSpans(db, 'live-stdio', got, { label: 'stdio' });
    assertCoverage(expected, 'stdio');
    assertAllRecorded(rows, run, 'stdio');

    for (const sp of got) {
      assert.equal(sp.resource['service.name']?.value, 'e2e-agents', 'OTEL_SERVICE_NAME is service.name');
      assert.equal(sp.resource['deployment.environment']?.value, 'e2e', 'OTEL_RESOURCE_ATTRIBUTES members are resource attributes');
      assert.equal(sp.resource['host.name']?.value, 'box-7');
      assert.equal(sp.resource['telemetry.sdk.name']?.value, 'mcpreel');
      assert.equal(sp.resource['telemetry.sdk.version']?.type, 'string');
      assert.equal(sp.scope.name, 'mcpreel');
      assert.ok(sp.scope.version, 'the scope has a version');
    }
    // Side server: what the client sent is a SERVER span, the server's own requests CLIENT spans.
    assert.equal(got.find((s) => s.name === 'tools/call echo').kind, KIND.SERVER);
    assert.equal(got.find((s) => s.name === 'roots/list').kind, KIND.CLIENT);

    assert.equal(dropped(db, 'live-stdio'), 0, 'otlp_dropped is 0 with a healthy collector');
    assert.deepEqual(collectorLines(run.diag.stderr), [], 'nothing on stderr about the collector when all went well');
    assert.ok(!run.diag.stderr.includes('not-a-secret-but-kept-out'), 'a header value never reaches stderr');

    // export --format otlp of the session: the same spans, ids aside
    // (export reads no OTEL_* here: the resource is the default one).
    const { sent, filed } = await exportBoth({ dir, defer }, db, 'live-stdio');
    const noResource = (list) => list.map((x) => ({ ...x, resource: null }));
    assert.deepEqual(shapes(noResource(sent)), shapes(noResource(got)), 'export --otlp: the same spans as live');
    assert.deepEqual(shapes(noResource(filed)), shapes(noResource(got)), 'export -o: the same spans as live');
  });
});

/** server-everything over Streamable HTTP through record --listen --otlp; returns what the checks need. */
async function liveHttp({ dir, defer }, name, otlpArgs, { side = 'server' } = {}) {
  const se = await startServerEverything('streamableHttp');
  defer(se.stop);
  const rcv = await startReceiver(dir, [], name);
  defer(rcv.stop);
  const db = join(dir, `${name}.db`);
  const { args, env } = otlpArgs(rcv);
  const proxy = await startMcpreelHttp({ db, upstream: se.origin, name, args, env });
  defer(() => proxy.stop());
  const run = await scriptedSession(streamableHttpTransport(`${proxy.url}/mcp`));
  const stopped = await proxy.stop();
  assert.equal(stopped.code, 0, `mcpreel exits 0; stderr:\n${stopped.stderr}`);
  const { rows } = recordedSession(db, `name = '${name}'`);
  const want = rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length;
  const got = await rcv.waitSpans(want);
  const reqs = rcv.requests();
  assert.deepEqual(reqs.flatMap((r) => r.problems), [], `${name}: the receiver found nothing wrong in the encoding`);
  assert.deepEqual(reqs.filter((r) => r.error), [], `${name}: every request decoded`);
  const checked = checkSpans(db, name, got, { side, serverPort: se.port, label: name });
  assertCoverage(checked.expected, name);
  assertAllRecorded(rows, run, name);
  assert.equal(dropped(db, name), 0, `${name}: otlp_dropped is 0`);
  assert.deepEqual(collectorLines(stopped.stderr), [], `${name}: nothing on stderr about the collector`);
  return { db, rcv, got, reqs, run, se, ...checked };
}

test('Streamable HTTP: live spans as OTLP/JSON, side server, the collector from the environment', { skip, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    // record --listen ... --upstream ... --otlp env --otlp-protocol http/json
    const r = await liveHttp(ctx, 'live-http', (rcv) => ({
      args: ['--otlp', 'env', '--otlp-protocol', 'http/json'],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: rcv.origin, OTEL_EXPORTER_OTLP_HEADERS: 'x-team=agents,x-e2e-key=k%3Dv' },
    }));
    for (const q of r.reqs) {
      assert.equal(q.contentType, 'application/json', '--otlp-protocol http/json');
      assert.equal(q.path, '/v1/traces', 'OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces');
      assert.equal(q.headers['x-team'], 'agents', 'OTEL_EXPORTER_OTLP_HEADERS are sent');
      assert.equal(q.headers['x-e2e-key'], 'k=v', 'percent-decoded, as the SDKs read them');
    }
    const echo = r.got.find((s) => s.name === 'tools/call echo');
    assert.equal(echo.kind, KIND.SERVER);
    assert.equal(echo.attributes['network.transport'].value, 'tcp');
    assert.equal(echo.attributes['client.address'].value, '127.0.0.1');
    assert.equal(echo.attributes['client.port'].type, 'int');
  });
});

test('Streamable HTTP: side client mirrors the kinds and names the upstream', { skip, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const r = await liveHttp(ctx, 'live-http-client', (rcv) => ({ args: ['--otlp', rcv.origin, '--otlp-side', 'client'] }), { side: 'client' });
    const echo = r.got.find((s) => s.name === 'tools/call echo');
    assert.equal(echo.kind, KIND.CLIENT, 'side client: a client request is a CLIENT span');
    assert.equal(echo.attributes['server.port'].value, r.se.port, 'server.port is the upstream port');
    // A -32602 is an error for the client side (every code is).
    const bad = r.got.find((s) => s.name === 'prompts/get no-such-prompt');
    assert.equal(bad.status.code, 2);
    assert.equal(bad.attributes['error.type'].value, '-32602');
    const roots = r.got.find((s) => s.name === 'roots/list');
    assert.equal(roots.kind, KIND.SERVER, 'side client: the server\'s request is a SERVER span');
  });
});

/** Spans as sorted JSON texts without their own ids, less the attributes named. */
function shapes(spans, without = []) {
  return spans.map(spanShape).map((x) => {
    for (const k of without) delete x.attributes[k];
    return JSON.stringify(x, Object.keys(flatKeys(x)).sort());
  }).sort();
}

/**
 * `export --format otlp SESSION` of db, to a fresh receiver (--otlp) and
 * to a file (-o, decoded strictly): the spans of each, checked as far as
 * the encoding goes.  Returns {sent, filed}.
 */
async function exportBoth({ dir, defer }, db, name) {
  const rcv = await startReceiver(dir, [], `export-${name}`);
  defer(rcv.stop);
  const r = await runMcpreel(['export', '--db', db, '--format', 'otlp', name, '--otlp', rcv.origin], { timeoutMs: 60000 });
  assert.equal(r.code, 0, `export --otlp exits 0; stderr:\n${r.stderr}`);
  const sent = rcv.spans();
  assert.deepEqual(rcv.requests().flatMap((q) => q.problems), [], 'export --otlp: nothing wrong in the encoding');
  assert.deepEqual(rcv.requests().filter((q) => q.answer !== 200), [], 'export --otlp: every request accepted');
  const file = join(dir, `${name}.otlp.jsonl`);
  const w = await runMcpreel(['export', '--db', db, '--format', 'otlp', name, '-o', file], { timeoutMs: 60000 });
  assert.equal(w.code, 0, `export -o exits 0; stderr:\n${w.stderr}`);
  const dec = decodeFile(file);
  assert.equal(dec.code, 0, `every line decodes strictly: ${dec.stderr}\n${JSON.stringify(dec.lines.filter((l) => l.error))}`);
  assert.deepEqual(dec.lines.flatMap((l) => l.problems), [], 'the file: nothing wrong in the OTLP/JSON');
  assert.ok(readFileSync(file, 'utf8').endsWith('\n'), 'the file ends with a newline');
  assert.ok(dec.lines.every((l) => l.spans.length <= 512), 'at most 512 spans a line');
  return { sent, filed: dec.lines.flatMap((l) => l.spans) };
}

test('export --format otlp over HTTP: the same spans as live, to a collector and to a file', { skip, timeout: 180000 }, async () => {
  await withCleanup(async (ctx) => {
    const live = await liveHttp(ctx, 'exp-http', (rcv) => ({ args: ['--otlp', rcv.origin] }));
    const { sent, filed } = await exportBoth(ctx, live.db, 'exp-http');
    // The recording keeps no client address: compared without it first,
    // so that everything else is known to agree whatever comes last.
    const client = ['client.address', 'client.port'];
    assert.deepEqual(shapes(sent, client), shapes(live.got, client), 'export --otlp: the same spans as live (span ids and the client aside)');
    assert.deepEqual(shapes(filed, client), shapes(live.got, client), 'export -o: the same spans as live (span ids and the client aside)');
    const ids = new Set([...live.got, ...sent, ...filed].map((x) => x.spanId));
    assert.equal(ids.size, live.got.length * 3, 'span ids are new each time, and unique');
    assert.deepEqual(shapes(sent), shapes(live.got), 'export --otlp: the same spans as live, client.address and client.port too');
  });
});

// A collector in trouble: the client sees the same, every message is
// recorded, the drop is counted in the session row and said once on
// stderr.  Short timeouts keep the run under the SDK's 2 s close grace.
const TROUBLE = [
  { name: 'down', phases: null, env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1500' }, says: /refused|connect/i },
  { name: 'slow', phases: ['slow', '5'], env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }, says: /time/i },
  {
    name: '500', phases: ['status', '500'], env: {}, says: /\b500\b/,
    // Not retried: each batch is posted once.
    check: (reqs) => assert.equal(new Set(reqs.flatMap((r) => r.spans.map((x) => x.spanId))).size,
      reqs.reduce((n, r) => n + r.spans.length, 0), 'a 500 is not retried'),
  },
  {
    name: '429', phases: ['status', '429'], env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1500' }, says: /\b429\b/,
    // Retried after Retry-After: 1.
    check: (reqs) => {
      assert.ok(reqs.length >= 2, `retried (${reqs.length} requests)`);
      assert.deepEqual(reqs[1].spans.map((x) => x.spanId), reqs[0].spans.map((x) => x.spanId), 'the same batch again');
      const gap = reqs[1].time - reqs[0].time;
      assert.ok(gap >= 0.9 && gap <= 1.6, `after Retry-After: 1 (${gap.toFixed(2)} s)`);
    },
  },
];

for (const t of TROUBLE) {
  test(`collector ${t.name}: forwarding and recording unaffected, drops counted and said once`, { skip, timeout: 120000 }, async () => {
    await withCleanup(async ({ dir, defer }) => {
      let url;
      let rcv = null;
      if (t.phases) {
        rcv = await startReceiver(dir, t.phases);
        defer(rcv.stop);
        url = rcv.origin;
      } else {
        url = `http://127.0.0.1:${await closedPort()}`;
      }
      const db = join(dir, 'rec.db');
      const name = `trouble-${t.name}`;
      const started = Date.now();
      const run = await scriptedSession(viaStdio(['record', '--db', db, '--name', name, '--otlp', url], t.env));
      const ms = Date.now() - started;
      assert.deepEqual(run.transcript, await baselineTranscript(dir), 'the client sees what it sees without --otlp');
      const { rows } = recordedSession(db, `name = '${name}'`);
      assertAllRecorded(rows, run, name);
      const n = dropped(db, name);
      assert.ok(n > 0, `otlp_dropped > 0 (is ${n}); stderr:\n${run.diag.stderr}`);
      const spans = rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length;
      assert.ok(n <= spans, `otlp_dropped ${n} <= ${spans} spans`);
      const failures = run.diag.stderr.split('\n').filter((l) => /spans are dropped while it fails/.test(l));
      assert.equal(failures.length, 1, `the failure is said exactly once; stderr:\n${run.diag.stderr}`);
      assert.match(failures[0], t.says, 'it says what failed');
      assert.ok(failures[0].includes(url.replace(/\/$/, '')), 'it names the collector');
      assert.ok(ms < 30000, `the session took ${ms} ms`);
      if (rcv) assert.deepEqual(rcv.requests().flatMap((r) => r.problems), [], 'what did arrive decodes cleanly');
      t.check?.(rcv?.requests());
    });
  });
}

test('collector answers 502 twice, then 200: retried with backoff, nothing dropped', { skip, timeout: 120000 }, async () => {
  // Over HTTP, where the test decides when mcpreel stops: after the
  // spans came (the SDK's stdio close would cut the backoff short).
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const rcv = await startReceiver(dir, ['status', '502', 'x2', 'ok']); // no Retry-After
    defer(rcv.stop);
    const db = join(dir, 'rec.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'retry', args: ['--otlp', rcv.origin] });
    defer(() => proxy.stop());
    await scriptedSession(streamableHttpTransport(`${proxy.url}/mcp`));
    const { rows } = recordedSession(db, `name = 'retry'`);
    const want = rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length;
    const got = await rcv.waitSpans(want, 20000);
    const stopped = await proxy.stop();
    const reqs = rcv.requests();
    assert.ok(reqs.length >= 3, 'two refused, then accepted');
    assert.deepEqual(reqs.slice(0, 3).map((r) => r.answer), [502, 502, 200]);
    assert.deepEqual(reqs[1].spans.map((x) => x.spanId), reqs[0].spans.map((x) => x.spanId), 'a retry sends the same batch');
    assert.deepEqual(reqs[2].spans.map((x) => x.spanId), reqs[0].spans.map((x) => x.spanId), 'and again');
    const gaps = [reqs[1].time - reqs[0].time, reqs[2].time - reqs[1].time];
    assert.ok(gaps[0] >= 0.75 && gaps[0] <= 1.6, `the first retry 1 s later, ±20% (${gaps[0].toFixed(2)} s)`);
    assert.ok(gaps[1] >= 1.55 && gaps[1] <= 3, `the second 2 s after it, ±20% (${gaps[1].toFixed(2)} s)`);
    checkSpans(db, 'retry', got, { serverPort: se.port, label: 'retry' });
    assert.equal(dropped(db, 'retry'), 0, `nothing dropped; stderr:\n${stopped.stderr}`);
  });
});

// A stdio host closes stdin, waits 2 s, then sends SIGTERM (the SDKs do;
// 2 s more and SIGKILL).  A collector failing just then must not cost the
// session's count: mcpreel must be done, or end on SIGTERM with the
// count written.
test('collector failing as the host closes: the drops are still counted in the session row', { skip, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const rcv = await startReceiver(dir, ['status', '503']);
    defer(rcv.stop);
    const db = join(dir, 'rec.db');
    const run = await scriptedSession(viaStdio(['record', '--db', db, '--name', 'closing', '--otlp', rcv.origin]));
    const { rows } = recordedSession(db, `name = 'closing'`);
    assertAllRecorded(rows, run, 'closing');
    const n = dropped(db, 'closing');
    assert.ok(n > 0, `otlp_dropped is set (is ${n}); stderr:\n${run.diag.stderr}`);
    assert.match(run.diag.stderr, /mcpreel: recorded session \d+ in /, 'mcpreel said where the session is');
  });
});

test('--otlp-payloads: arguments, results and prompt variables, structured and redacted as recorded', { skip, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const rcv = await startReceiver(dir);
    defer(rcv.stop);
    const db = join(dir, 'rec.db');
    const secret = 'hunter2-otlp-e2e';
    await scriptedSession(viaStdio(['record', '--db', db, '--name', 'payloads', '--otlp', rcv.origin, '--otlp-payloads']), { secret });
    const { rows } = recordedSession(db, `name = 'payloads'`);
    const got = await rcv.waitSpans(rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length);
    assert.deepEqual(rcv.requests().flatMap((r) => r.problems), []);
    checkSpans(db, 'payloads', got, { payloads: true, label: 'payloads' });
    const echo = got.find((x) => x.name === 'tools/call echo');
    assert.equal(echo.attributes['gen_ai.tool.call.arguments'].type, 'kvlist', 'arguments are structured');
    assert.deepEqual(anyToJson(echo.attributes['gen_ai.tool.call.arguments']), { message: 'otlp', password: '[REDACTED]' },
      'a password argument is redacted, as it is in the recording');
    assert.deepEqual(anyToJson(echo.attributes['gen_ai.tool.call.result']), { content: [{ type: 'text', text: 'Echo: otlp' }] });
    const prompt = got.find((x) => x.name === 'prompts/get args-prompt');
    assert.equal(prompt.attributes['gen_ai.prompt.variable.city']?.value, 'Paris');
    assert.equal(prompt.attributes['gen_ai.prompt.variable.state']?.value, 'Île-de-France', 'UTF-8 intact');
    assert.ok(!readFileSync(rcv.out, 'utf8').includes(secret), 'the secret never reaches the collector');
  });
});

test('mock --otlp: the mocked server\'s spans, from what mock served', { skip, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'rec.db');
    const recorded = await scriptedSession(viaStdio(['record', '--db', db, '--name', 'src']));
    const rcv = await startReceiver(dir);
    defer(rcv.stop);
    const mocked = await scriptedSession(stdioTransport(MCPREEL, ['mock', '--db', db, 'src', '--otlp', rcv.origin],
      { stderr: 'pipe', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } }));
    assert.deepEqual(mocked.transcript, recorded.transcript, 'the client sees what the real server said');
    // mock serving no fallback records nothing of its run: its spans are
    // checked against the recording it served (the same messages, as
    // the transcripts show), with its own times, trace and session.
    const sent = [...mocked.sent, ...mocked.received].filter((m) => 'method' in m).length;
    const spans = await rcv.waitSpans(sent);
    assert.equal(spans.length, sent, `a span per request and notification the client sent or got (${sent})`);
    assert.deepEqual(rcv.requests().flatMap((r) => r.problems), []);
    const keys = new Set(spans.map((x) => x.attributes['mcp.session.id']?.value));
    assert.equal(keys.size, 1, 'one mcp.session.id');
    const [sessionKey] = keys;
    assert.match(sessionKey, /^[0-9a-f]{32}$/);
    const traces = new Set(spans.filter((x) => x.parentSpanId === '').map((x) => x.traceId));
    assert.equal(traces.size, 1, 'one trace for the spans without a traceparent');
    const { session, rows } = recordedSession(db, `name = 'src'`);
    // mock asks the client with ids of its own ("mcpreel-mock-1"): the
    // recorded server requests take the ids the client got, in order.
    const asked = mocked.received.filter((m) => 'method' in m && 'id' in m);
    const ids = new Map();
    for (const r of rows.filter((x) => x.direction === 's2c' && x.kind === 'request')) {
      const m = JSON.parse(r.raw);
      const i = asked.findIndex((a) => a.method === m.method);
      if (i >= 0) ids.set(JSON.stringify(m.id), asked.splice(i, 1)[0].id);
    }
    const served = rows.map((r) => {
      const m = JSON.parse(r.raw);
      const mine = (r.direction === 's2c' && r.kind === 'request') || (r.direction === 'c2s' && (r.kind === 'response' || r.kind === 'error'));
      if (mine && ids.has(JSON.stringify(m.id))) m.id = ids.get(JSON.stringify(m.id));
      return { ...r, raw: JSON.stringify(m) };
    });
    const expected = expectedSpans(served, { session, sessionTrace: [...traces][0] });
    const { problems } = compareSpans(spans, expected, {
      side: 'server', payloads: false, transport: 'stdio', sessionKey, loose: true,
      peer: peerRule({ transport: 'stdio', side: 'server' }),
    });
    assert.deepEqual(problems, [], 'mock: the spans of what it served');
  });
});

test('a 2026-07-28 session (no initialize, no sessions): the version from _meta, no mcp.session.id', { skip, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const rcv = await startReceiver(dir);
    defer(rcv.stop);
    const db = join(dir, 'rec.db');
    await run2026(MCPREEL, ['record', '--db', db, '--name', 'v2026', '--otlp', rcv.origin, '--', process.execPath, join(PEERS_DIR, 'peer2026.mjs')]);
    const { rows } = recordedSession(db, `name = 'v2026'`);
    const got = await rcv.waitSpans(rows.filter((r) => r.kind === 'request' || r.kind === 'notification').length);
    assert.deepEqual(rcv.requests().flatMap((r) => r.problems), []);
    const { expected } = checkSpans(db, 'v2026', got, { label: '2026-07-28' });
    assert.ok(expected.some((e) => e.name === 'server/discover'), 'the session has server/discover');
  });
});

test('the span checks fail on what they should', { skip: rx.ok ? false : rx.reason, timeout: 60000 }, () => {
  // A session of four messages, recorded by hand, and spans right for it.
  const session = { started_ns: '1700000000000000000', transport: 'http', target: 'http://127.0.0.1:9/mcp' };
  const { traceId, sessionKey } = sessionIds(session);
  const row = (seq, direction, kind, msg) => ({ seq, direction, kind, ts_ns: String(1700000000000000000n + BigInt(seq) * 1000n), raw: JSON.stringify(msg) });
  const rows = [
    row(1, 'c2s', 'request', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: TP.echo } }),
    row(2, 's2c', 'error', { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'boom' } }),
    row(3, 'c2s', 'notification', { jsonrpc: '2.0', method: 'notifications/initialized' }),
    row(4, 's2c', 'request', { jsonrpc: '2.0', id: 'r1', method: 'roots/list' }),
  ];
  const expected = expectedSpans(rows, { session });
  const s = { side: 'server', payloads: false, transport: 'http', sessionKey, clientAddress: '127.0.0.1', serverAddress: '127.0.0.1', serverPort: 9, peer: peerRule({ transport: 'http', side: 'server' }) };
  const str = (value) => ({ type: 'string', value });
  const common = { 'mcp.session.id': str(sessionKey), 'network.transport': str('tcp'), 'network.protocol.name': str('http'), 'network.protocol.version': str('1.1') };
  const good = [
    { name: 'tools/call echo', kind: KIND.SERVER, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentSpanId: '00f067aa0ba902b7', traceState: TP.echo.tracestate,
      start: rows[0].ts_ns, end: rows[1].ts_ns, status: { code: 2, message: 'boom' },
      attributes: { ...common, 'mcp.method.name': str('tools/call'), 'jsonrpc.request.id': str('1'), 'gen_ai.tool.name': str('echo'),
        'gen_ai.operation.name': str('execute_tool'), 'rpc.response.status_code': str('-32000'), 'error.type': str('-32000'),
        'client.address': str('127.0.0.1'), 'client.port': { type: 'int', value: 50000 } } },
    { name: 'notifications/initialized', kind: KIND.SERVER, traceId, parentSpanId: '', traceState: '', start: rows[2].ts_ns, end: rows[2].ts_ns,
      status: { code: 0, message: '' }, attributes: { ...common, 'mcp.method.name': str('notifications/initialized'), 'client.address': str('127.0.0.1'), 'client.port': { type: 'int', value: 50000 } } },
    { name: 'roots/list', kind: KIND.CLIENT, traceId, parentSpanId: '', traceState: '', start: rows[3].ts_ns, end: rows[3].ts_ns,
      status: { code: 2, message: '' }, attributes: { ...common, 'mcp.method.name': str('roots/list'), 'jsonrpc.request.id': str('r1'), 'error.type': str('unanswered') } },
  ];
  assert.deepEqual(compareSpans(good, expected, s).problems, [], 'right spans pass');
  const broken = [
    ['a wrong kind', (x) => { x[0].kind = KIND.CLIENT; }, /kind 3, not 2|no span for seq 1 tools\/call echo/],
    ['a lost parent', (x) => { x[0].parentSpanId = ''; }, /parent ""/],
    ['a port as a string', (x) => { x[0].attributes['client.port'] = str('50000'); }, /client.port: type string, not int/],
    ['a missing required attribute', (x) => { delete x[1].attributes['mcp.method.name']; }, /mcp.method.name \(required\) missing/],
    ['an error not marked', (x) => { delete x[0].attributes['error.type']; x[0].status = { code: 0, message: '' }; }, /error.type \(conditionally_required\) missing/],
    ['an id on a notification', (x) => { x[1].attributes['jsonrpc.request.id'] = str('1'); }, /jsonrpc.request.id .* must be absent/],
    ['an attribute from nowhere', (x) => { x[2].attributes['mcp.extra'] = str('x'); }, /mcp.extra is in no row/],
    ['a span too many', (x) => { x.push({ ...x[1], start: '1' }); }, /a span no message explains/],
    ['a span missing', (x) => { x.pop(); }, /no span for seq 4 roots\/list/],
    ['the session trace elsewhere', (x) => { x[1].traceId = '0'.repeat(31) + '1'; }, /trace id/],
    ['an unanswered request not an error', (x) => { x[2].status = { code: 0, message: '' }; }, /status/],
    ['a payload without --otlp-payloads', (x) => { x[0].attributes['gen_ai.tool.call.arguments'] = { type: 'kvlist', value: [] }; }, /gen_ai.tool.call.arguments .* must be absent/],
  ];
  for (const [what, spoil, re] of broken) {
    const spans = JSON.parse(JSON.stringify(good));
    spoil(spans);
    const { problems } = compareSpans(spans, expected, s);
    assert.ok(problems.some((p) => re.test(p)), `${what}: found (${JSON.stringify(problems)})`);
  }
});
