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
import { createServer as createTcpServer } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { request, spawnUntilLine, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
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

test('record --listen --otlp to a closed port: each HTTP session counts its spans and keeps its client', { timeout: 180000 }, () => withCleanup(async ({ dir, defer }) => {
  for (const mode of ['streamableHttp', 'sse']) {
    const se = await startServerEverything(mode);
    defer(se.stop);
    const make = (url) => (mode === 'sse' ? sseTransport(url) : streamableHttpTransport(url));
    const path = new URL(se.url).pathname;
    const direct = await runSessionWith(make(se.url), {});
    const db = join(dir, `${mode}.db`);
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: mode,
      args: ['--otlp', `http://127.0.0.1:${await closedPort()}`] });
    defer(() => proxy.stop());
    const proxied = await runSessionWith(make(`${proxy.url}${path}`), {});
    assert.deepEqual(proxied, direct, `${mode}: the same results with the collector down`);
    const t0 = Date.now();
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, `${mode}: exits 0 on SIGTERM; ${stopped.stderr}`);
    assert.ok(Date.now() - t0 < 9000, `${mode}: stopped within the exporter's 5 s and the writer`);
    const rows = sql(db, 'SELECT id, transport, otlp_dropped, client_address, client_port FROM sessions');
    let spans = 0;
    for (const r of rows) {
      const n = spanCount(db, r.id);
      spans += n;
      assert.equal(r.otlp_dropped, n, `${mode} session ${r.id}: every span counted dropped`);
      assert.equal(r.transport, mode === 'sse' ? 'sse' : 'http');
      if (n > 0) {
        assert.equal(r.client_address, '127.0.0.1', `${mode} session ${r.id}: its client`);
        assert.ok(r.client_port > 0 && r.client_port < 65536);
      }
    }
    assert.ok(spans > 10, `${mode}: a real session (${spans} spans)`);
    // The cassette leaves the client out (the database keeps it); an
    // import of it has none.
    const withClient = rows.find((r) => r.client_address !== null);
    const cas = join(dir, `${mode}.jsonl`);
    assert.equal((await runMcpreel(['export', '--db', db, String(withClient.id), '-o', cas])).code, 0);
    const head = JSON.parse(readFileSync(cas, 'utf8').split('\n')[0]);
    assert.ok(!('client_address' in head) && !('client_port' in head), `${mode}: no client in the cassette header`);
    assert.equal(head.otlp_dropped, withClient.otlp_dropped, `${mode}: otlp_dropped is`);
    assert.ok(!readFileSync(cas, 'utf8').includes(`"client_port"`));
    const imp = join(dir, `${mode}-imp.db`);
    assert.equal((await runMcpreel(['import', '--db', imp, cas])).code, 0);
    assert.deepEqual(sql(imp, 'SELECT otlp_dropped, client_address, client_port FROM sessions'),
      [{ otlp_dropped: withClient.otlp_dropped, client_address: null, client_port: null }]);
    const said = collectorLines(stopped.stderr).filter((l) => /spans are dropped while it fails/.test(l));
    assert.equal(said.length, 1, `${mode}: said once:\n${stopped.stderr}`);
  }
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

/** A collector that takes connections and never answers. */
async function startHangingCollector() {
  const socks = [];
  const s = createTcpServer((c) => {
    socks.push(c);
    c.on('data', () => {});
    c.on('error', () => {});
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${s.address().port}`,
    stop: () => new Promise((r) => { for (const c of socks) c.destroy(); s.close(r); }),
  };
}

test('mock --listen --otlp: a second SIGTERM while the exporter finishes is held; the fallback row is written', { timeout: 180000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'rec.db');
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'src', '--', command, ...args], { stderr: 'pipe' });
  const col = await startHangingCollector();
  defer(col.stop);
  const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db, 'src', '--listen', '127.0.0.1:0', '--on-miss', 'forward',
    '--otlp', col.origin, '--', command, ...args], {
    pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --otlp',
  });
  defer(async () => { if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL'); });
  const url = `${p.match[1]}/mcp`;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const post = (m) => request(url, { method: 'POST', headers, body: JSON.stringify(m) });
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal(init.status, 200);
  for (const id of [1, 2, 3]) {
    const r = await post({ jsonrpc: '2.0', id, method: 'tools/list' });
    assert.equal(r.status, 200, 'answered from the recording');
  }
  const echo = await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: 'not in the recording' } } });
  assert.equal(echo.status, 200, 'forwarded');
  p.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  p.child.kill('SIGTERM');
  const t0 = Date.now();
  const { code, signal } = await p.exited;
  assert.equal(signal, null, `the second SIGTERM did not end it; stderr:\n${p.stderr()}`);
  assert.equal(code, 0, p.stderr());
  assert.ok(Date.now() - t0 < 15000, 'the exporter\'s 5 s, then done');
  assert.match(p.stderr(), /OpenTelemetry/, 'the summary was said');
  const [row] = sql(db, "SELECT id, ended_ns, end_reason, otlp_dropped FROM sessions WHERE name LIKE 'mock fallback of %'");
  assert.ok(row.ended_ns > 0, 'the fallback row ended');
  // Its otlp_dropped counts the whole mock run (the --help says so): the
  // initialize the recording answered as well as the one forwarded request.
  const own = spanCount(db, row.id);
  assert.ok(row.otlp_dropped >= own + 3, `otlp_dropped: the whole run's spans (${row.otlp_dropped}), not only the row's ${own}`);
  assert.match(String((await runMcpreel(['mock', '--help'])).stdout), /fallback's row gets\s+as otlp_dropped the spans of the whole mock run/);
}));

test('mock --listen --otlp: every client\'s spans go into one session and trace, as --help says', { timeout: 180000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'rec.db');
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'src', '--', command, ...args], { stderr: 'pipe' });
  const sink = await startSink();
  defer(sink.stop);
  const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db, 'src', '--listen', '127.0.0.1:0', '--otlp', sink.origin,
    '--otlp-protocol', 'http/json'], { pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --otlp' });
  defer(async () => { if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL'); });
  const url = `${p.match[1]}/mcp`;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const sids = [];
  for (const name of ['a', 'b']) {
    const r = await request(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } } }) });
    assert.equal(r.status, 200);
    sids.push(r.headers['mcp-session-id']);
  }
  assert.ok(sids[0] && sids[1] && sids[0] !== sids[1], 'two HTTP sessions');
  p.child.kill('SIGTERM');
  assert.equal((await p.exited).code, 0, p.stderr());
  const inits = sink.spans().filter((x) => x.name === 'initialize');
  assert.equal(inits.length, 2, 'a span for each client\'s initialize');
  const sid = (x) => x.attributes.find((a) => a.key === 'mcp.session.id')?.value.stringValue;
  assert.equal(inits[0].traceId, inits[1].traceId, 'one trace');
  assert.equal(sid(inits[0]), sid(inits[1]), 'one mcp.session.id');
  assert.match(String((await runMcpreel(['mock', '--help'])).stdout), /With --listen, every client's spans go into\s+that one session and trace/);
}));
