// How --otlp is wired into record, mock and export, seen from outside:
// the options refused before anything starts (and what the refusal does
// not quote), the session row's otlp_dropped, stderr saying a failing
// collector once, forwarding unchanged by a collector that is down (the
// SDK client's transcript with server-everything is the same), and
// `export --format otlp` giving the live trace.  The collector here is a
// small sink that takes OTLP/JSON (--otlp-protocol http/json) and counts
// spans with JSON.parse; the spans' contents are otlp.test.mjs's, which
// decodes them with the protobuf library.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';

/** A port nothing listens on (bound, then closed). */
async function closedPort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** An OTLP/HTTP sink answering 200 to each POST; bodies kept parsed. */
async function startSink() {
  const got = [];
  const s = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      got.push({ path: req.url, type: req.headers['content-type'], headers: req.headers,
        json: req.headers['content-type'] === 'application/json' ? JSON.parse(body) : null });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${s.address().port}`,
    got,
    spans: () => got.flatMap((g) => g.json.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((x) => x.spans))),
    stop: () => new Promise((r) => s.close(r)),
  };
}

/** Spans a session makes: one per request and notification, both ways. */
const spanCount = (db, id) => sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = ${id}
  AND kind IN ('request', 'notification')`)[0].n;

const collectorLines = (stderr) => String(stderr).split('\n').filter((l) => /OpenTelemetry/.test(l));

test('--otlp options: refused before anything starts, a URL\'s password never quoted', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'x.db');
  const cases = [
    [['record', '--db', db, '--otlp', 'http://127.0.0.1:4318', '--otlp-side', 'middle', '--', 'true'], /--otlp-side takes server or client/],
    [['record', '--db', db, '--otlp', 'http://me:hunter2pass@127.0.0.1:4318', '--', 'true'], /user:password@ in the URL is not taken/],
    [['record', '--db', db, '--otlp', 'http://127.0.0.1:4318', '--otlp-protocol', 'grpc', '--', 'true'], /grpc is not supported/],
    [['record', '--db', db, '--otlp', 'ftp://127.0.0.1:4318', '--', 'true'], /http:\/\/ or https:\/\//],
    [['record', '--db', db, '--otlp-payloads', '--', 'true'], /--otlp-payloads goes with --otlp URL/],
    [['record', '--db', db, '--otlp', 'http://127.0.0.1:4318', '--otlp-header', 'no colon here', '--', 'true'], /--otlp-header takes 'Name: value'/],
    [['record', '--db', db, '--otlp', 'env', '--', 'true'], /no OpenTelemetry collector named/],
    [['record', '--db', db, '--otlp', 'http://127.0.0.1:4318', '--listen', '127.0.0.1:0', '--upstream', 'http://me:hunter2pass@127.0.0.1:1/',
      '--otlp-side', 'nope'], /--otlp-side takes/],
    [['mock', '--db', db, 'last', '--otlp', 'http://127.0.0.1:4318', '--otlp-side', 'middle'], /--otlp-side takes server or client/],
    [['export', '--db', db, 'last', '--otlp', 'http://127.0.0.1:4318'], /--otlp goes with --format otlp/],
    [['export', '--db', db, 'last', '--format', 'otlp', '--otlp-header', 'A: b'], /--otlp-header is for a collector/],
    [['export', '--db', db, 'last', '--format', 'otlp', '--otlp', 'http://127.0.0.1:4318', '-o', join(dir, 'f')], /either --otlp URL or -o FILE/],
  ];
  for (const [args, why] of cases) {
    const r = await runMcpreel(args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit 2; stderr: ${r.stderr}`);
    assert.match(String(r.stderr), why, args.join(' '));
    assert.doesNotMatch(String(r.stderr), /hunter2pass/, 'the password is not quoted');
  }
  // Environment too: grpc named by its variable.
  const r = await runMcpreel(['record', '--db', db, '--otlp', 'env', '--', 'true'],
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } });
  assert.equal(r.code, 2);
  assert.match(String(r.stderr), /OTEL_EXPORTER_OTLP_PROTOCOL=grpc: grpc is not supported/);
  assert.ok(!existsSync(db), 'nothing was recorded: no database was made');

  // The help of each command names the options.
  for (const cmd of ['record', 'mock', 'export']) {
    const h = await runMcpreel([cmd, '--help']);
    for (const o of ['--otlp URL|env', '--otlp-payloads', '--otlp-side', '--otlp-protocol', '--otlp-header'])
      assert.ok(String(h.stdout).includes(o), `${cmd} --help: ${o}`);
  }
}));

test('record --otlp to a closed port: the same transcript, every span counted dropped, stderr says it once', { timeout: 180000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'rec.db');
  const { command, args } = serverEverythingCommand();
  const port = await closedPort();

  const direct = await runSession(command, args, { stderr: 'pipe' });
  const diag = {};
  const t0 = Date.now();
  const proxied = await runSession(MCPREEL, ['record', '--db', db, '--name', 'down', '--otlp', `http://127.0.0.1:${port}`,
    '--', command, ...args], { stderr: 'pipe', diagnostics: diag });
  const ms = Date.now() - t0;
  assert.deepEqual(proxied, direct, 'the client sees the same results with the collector down');

  const [s] = sql(db, "SELECT id, otlp_dropped, messages_lost, ended_ns FROM sessions WHERE name = 'down'");
  assert.equal(s.messages_lost, 0, 'every message recorded');
  assert.ok(s.ended_ns > 0);
  const n = spanCount(db, s.id);
  assert.ok(n > 10, `a real session (${n} spans)`);
  assert.equal(s.otlp_dropped, n, 'every span counted as dropped in the row');
  const listed = String((await runMcpreel(['sessions', '--db', db, '--json'])).stdout).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(listed.find((x) => x.name === 'down').otlp_dropped, n, 'sessions --json says it');
  assert.match(String((await runMcpreel(['show', '--db', db, 'down'])).stdout),
    new RegExp(`warning: ${n} spans were not delivered to the OpenTelemetry collector`), 'show says it');
  const recorded = sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = ${s.id}`)[0].n;
  assert.equal(recorded, diag.messagesSent.length + diag.messagesReceived.length, 'recording unaffected');

  const lines = collectorLines(diag.stderr);
  const first = lines.filter((l) => /collector at http:\/\/127\.0\.0\.1:\d+\/v1\/traces: .*spans are dropped while it fails/.test(l));
  assert.equal(first.length, 1, `the failure is said once:\n${diag.stderr}`);
  assert.ok(lines.length <= 2, `no line per message (the failure, and one summary at the end):\n${lines.join('\n')}`);
  // The end waits at most 5 s for the collector.
  assert.ok(ms < 45000, `the run took ${ms} ms`);
}));

test('record --otlp to a collector: otlp_dropped 0, one trace; export --format otlp gives the same spans', { timeout: 180000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'rec.db');
  const sink = await startSink();
  defer(sink.stop);
  const { command, args } = serverEverythingCommand();
  const diag = {};
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'up', '--otlp', sink.origin, '--otlp-protocol', 'http/json',
    '--otlp-header', 'X-Team: e2e', '--', command, ...args], { stderr: 'pipe', diagnostics: diag });
  const [s] = sql(db, "SELECT id, otlp_dropped FROM sessions WHERE name = 'up'");
  assert.equal(s.otlp_dropped, 0, 'nothing dropped');
  assert.deepEqual(collectorLines(diag.stderr), [], 'nothing said of the collector');
  const live = sink.spans();
  assert.equal(live.length, spanCount(db, s.id), 'one span per request and notification');
  for (const g of sink.got) {
    assert.equal(g.path, '/v1/traces');
    assert.equal(g.headers['x-team'], 'e2e', '--otlp-header sent');
  }
  const traces = new Set(live.filter((x) => !x.parentSpanId).map((x) => x.traceId));
  assert.equal(traces.size, 1, 'spans without a traceparent: one trace for the session');

  // The file: OTLP/JSON lines, the same spans, the same trace id.
  const file = join(dir, 'spans.jsonl');
  const w = await runMcpreel(['export', '--db', db, '--format', 'otlp', 'up', '-o', file]);
  assert.equal(w.code, 0, String(w.stderr));
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const exported = lines.flatMap((r) => r.resourceSpans.flatMap((x) => x.scopeSpans.flatMap((y) => y.spans)));
  const shape = (x) => JSON.stringify([x.name, x.kind, x.traceId, x.parentSpanId ?? '', x.status?.code ?? 0,
    [...x.attributes].sort((a, b) => a.key.localeCompare(b.key))]);
  assert.deepEqual(exported.map(shape).sort(), live.map(shape).sort(), 'the same spans as live (span ids aside)');

  // To a collector, and to one that is down: exit 1.
  const before = sink.got.length;
  const sent = await runMcpreel(['export', '--db', db, '--format', 'otlp', 'up', '--otlp', sink.origin, '--otlp-protocol', 'http/json']);
  assert.equal(sent.code, 0, String(sent.stderr));
  assert.equal(sink.spans().length - live.length, exported.length, 'export --otlp sends them all');
  assert.ok(sink.got.length > before);
  const down = await runMcpreel(['export', '--db', db, '--format', 'otlp', 'up', '--otlp', `http://127.0.0.1:${await closedPort()}`],
    { timeoutMs: 60000, env: { OTEL_EXPORTER_OTLP_TIMEOUT: '1000' } });
  assert.equal(down.code, 1, `a collector that took nothing: exit 1; ${down.stderr}`);
  assert.match(String(down.stderr), /the collector did not take \d+ of \d+ spans/);

  // The cassette says it, and an import keeps it.
  const cas = join(dir, 'up.jsonl');
  assert.equal((await runMcpreel(['export', '--db', db, 'up', '-o', cas])).code, 0);
  assert.equal(JSON.parse(readFileSync(cas, 'utf8').split('\n')[0]).otlp_dropped, 0);
  const db2 = join(dir, 'imp.db');
  assert.equal((await runMcpreel(['import', '--db', db2, cas])).code, 0);
  assert.deepEqual(sql(db2, 'SELECT otlp_dropped FROM sessions'), [{ otlp_dropped: 0 }]);
  // A session recorded without --otlp has NULL, and its cassette no member.
  const plain = join(dir, 'plain.db');
  await runSession(MCPREEL, ['record', '--db', plain, '--', command, ...args], { stderr: 'pipe' });
  assert.deepEqual(sql(plain, 'SELECT otlp_dropped FROM sessions'), [{ otlp_dropped: null }]);
  const ph = JSON.parse(String((await runMcpreel(['export', '--db', plain, 'last'])).stdout).split('\n')[0]);
  assert.ok(!('otlp_dropped' in ph), 'no otlp_dropped in the header of a session not exported');
}));

test('mock --otlp: the mock reports its client\'s session as its server', { timeout: 180000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'rec.db');
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'src', '--', command, ...args], { stderr: 'pipe' });
  const sink = await startSink();
  defer(sink.stop);
  const diag = {};
  await runSession(MCPREEL, ['mock', '--db', db, 'src', '--otlp', sink.origin, '--otlp-protocol', 'http/json'],
    { stderr: 'pipe', diagnostics: diag });
  const spans = sink.spans();
  const requests = diag.messagesSent.filter((m) => m.method !== undefined).length;
  assert.ok(spans.length >= requests, `a span per request and notification the client sent (${spans.length} >= ${requests})`);
  const init = spans.find((x) => x.name === 'initialize');
  assert.ok(init, 'initialize');
  assert.equal(init.kind, 2, 'the client\'s request: a SERVER span');
  assert.ok(spans.some((x) => x.name.startsWith('tools/call ')), 'tools/call TOOL');
  const attr = (x, k) => x.attributes.find((a) => a.key === k)?.value;
  assert.deepEqual(attr(init, 'network.transport'), { stringValue: 'pipe' });
}));
