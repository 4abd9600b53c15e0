// Fault injection over Streamable HTTP: the official TypeScript SDK client
// (StreamableHTTPClientTransport) talks to server-everything through
// `mcpreel record --listen 127.0.0.1:0 --upstream URL --fault RULE`, and
// each test asserts what the client saw (a rejection with the injected
// code, a result with isError, a timeout, a parse error, a reset, an HTTP
// status) and what the recording says (a faults row, the messages with
// their roles, the exchange a status came from).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import { mcpreelHttpSupport, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { hasTable } from './lib/dbcheck.mjs';
import { spawnSync } from 'node:child_process';
import { MCPREEL, PEERS_DIR, sql, withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;
const ECHO = { name: 'echo', arguments: { message: 'hello' } };

/**
 * Start server-everything over Streamable HTTP and mcpreel in front of it
 * with these rules (and --seed); connect an SDK client.  Resolves
 * {client, transport, errors, proxy, db, se}; all stopped by cleanup.
 */
async function faulted({ dir, defer }, rules, { seed = 1, name = 'fault-http', se, path = '/mcp' } = {}) {
  if (!se) {
    se = await startServerEverything('streamableHttp');
    defer(se.stop);
  }
  const db = join(dir, `${name}.db`);
  const args = ['--seed', String(seed)];
  for (const r of rules) args.push('--fault', r);
  const proxy = await startMcpreelHttp({ db, upstream: se.origin, name, args });
  defer(() => proxy.stop());
  const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}${path}`), {
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30000, reconnectionDelayGrowFactor: 1.5 },
  });
  const errors = [];
  const client = new Client({ name: 'fault-http-e2e', version: '1.0.0' });
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  defer(() => client.close());
  return { client, transport, errors, proxy, db, se };
}

/** Stop mcpreel (SIGTERM) and give its exit and stderr. */
async function stopped(proxy) {
  const s = await proxy.stop();
  assert.equal(s.code, 0, `mcpreel exits 0 on SIGTERM; stderr:\n${s.stderr}`);
  assert.doesNotMatch(s.stderr, /AddressSanitizer|runtime error|LeakSanitizer/, 'no sanitizer report');
  return s;
}

/** The faults rows of a database, and its messages that belong to one. */
function faultRows(db) {
  if (!hasTable(db, 'faults')) return { faults: [], msgs: [] };
  return {
    faults: sql(db, 'SELECT n, rule_index, rule, action, direction, method, rpc_id, detail FROM faults ORDER BY session_id, n'),
    msgs: sql(db, `SELECT direction, kind, method, fault, fault_role, CAST(raw AS TEXT) AS raw
      FROM messages WHERE fault IS NOT NULL ORDER BY id`),
  };
}

/** Resolves or rejects p, with the time it took. */
async function settle(p) {
  const t0 = Date.now();
  try {
    return { ok: true, value: await p, ms: Date.now() - t0 };
  } catch (error) {
    return { ok: false, error, ms: Date.now() - t0 };
  }
}

test('error: the client rejects with the injected code and message; the server never saw it', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['tool=echo error code=-32042 message=injected-nope']);
    const r = await settle(client.callTool(ECHO));
    assert.equal(r.ok, false, 'the call rejects');
    assert.equal(r.error.code, -32042, `the code: ${r.error}`);
    assert.match(r.error.message, /injected-nope/);
    // Other tools still reach the server.
    const ok = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    assert.match(JSON.stringify(ok.content), /5/);
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.equal(faults.length, 1, JSON.stringify(faults));
    assert.equal(faults[0].action, 'error');
    assert.equal(faults[0].direction, 'c2s');
    assert.equal(faults[0].method, 'tools/call');
    const roles = msgs.map((m) => `${m.direction}:${m.fault_role}`);
    assert.deepEqual(roles, ['c2s:original', 's2c:injected'], JSON.stringify(msgs));
    assert.match(msgs[1].raw, /-32042/);
  });
});

test('tool-error: the client gets a result with isError', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['tool=echo tool-error']);
    const res = await client.callTool(ECHO);
    assert.equal(res.isError, true, JSON.stringify(res));
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['tool-error']);
    assert.deepEqual(msgs.map((m) => m.fault_role), ['original', 'injected']);
  });
});

test('delay past the client timeout: the client times out and cancels; a delay both ways is answered late; all recorded', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['tool=echo delay ms=1500']);
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 300 }));
    assert.equal(r.ok, false);
    assert.equal(r.error.code, -32001, `a request timeout: ${r.error}`);
    // The delayed request still reaches the server, late: its answer is
    // recorded (delayed too) though the client had given up.
    await new Promise((res) => setTimeout(res, 3500));
    // The rule delays both the request and its answer: 1.5 s each way.
    const later = await settle(client.callTool(ECHO, undefined, { timeout: 8000 }));
    assert.equal(later.ok, true, `answered after both delays: ${later.error}`);
    assert.match(JSON.stringify(later.value.content), /hello/);
    assert.ok(later.ms >= 2900, `both delays ran (${later.ms} ms)`);
    await stopped(proxy);
    const answers = sql(db, `SELECT fault_role FROM messages WHERE direction = 's2c' AND CAST(raw AS TEXT) LIKE '%Echo: hello%' ORDER BY id`);
    assert.deepEqual(answers.map((a) => a.fault_role), ['delayed', 'delayed'], 'the server answered both calls; each answer delayed');
    const cancelled = sql(db, `SELECT CAST(raw AS TEXT) AS raw FROM messages WHERE direction = 'c2s' AND method = 'notifications/cancelled'`);
    assert.ok(cancelled.length >= 1, 'notifications/cancelled recorded');
    const { faults, msgs } = faultRows(db);
    assert.ok(faults.length >= 1 && faults[0].action === 'delay', JSON.stringify(faults));
    assert.equal(msgs[0].fault_role, 'delayed');
    assert.equal(msgs[0].method, 'tools/call');
  });
});

test('drop: a notification is accepted and not forwarded; a response is never delivered (timeout)', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['method=notifications/initialized drop', 'dir=s2c tool=echo drop']);
    // The initialized notification was dropped with a 202: connect went on.
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 800 }));
    assert.equal(r.ok, false);
    assert.equal(r.error.code, -32001, `timed out: ${r.error}`);
    assert.ok(r.ms >= 700, `waited for the timeout (${r.ms} ms)`);
    const ok = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } });
    assert.match(JSON.stringify(ok.content), /2/);
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => `${f.action}:${f.direction}:${f.method}`),
      ['drop:c2s:notifications/initialized', 'drop:s2c:tools/call'], JSON.stringify(faults));
    assert.deepEqual(msgs.map((m) => `${m.direction}:${m.kind}:${m.fault_role}`),
      ['c2s:notification:original', 's2c:response:original'], JSON.stringify(msgs));
  });
});

test('corrupt: the SDK transport reports a parse error; what was sent is recorded', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db, errors } = await faulted(ctx, ['dir=s2c tool=echo corrupt']);
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 1000 }));
    assert.equal(r.ok, false, 'no answer the client can read');
    assert.ok(errors.length >= 1, 'onerror was called');
    assert.match(String(errors[0]), /JSON|Unexpected|parse|Syntax/i, String(errors[0]));
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['corrupt']);
    assert.deepEqual(msgs.map((m) => m.fault_role), ['original', 'injected']);
    assert.throws(() => JSON.parse(msgs[1].raw), 'the injected bytes are not JSON');
  });
});

test('close mode=reset: the client sees the connection fail at once', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['tool=echo close mode=reset']);
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 10000 }));
    assert.equal(r.ok, false);
    assert.notEqual(r.error.code, -32001, `not a timeout: ${r.error}`);
    assert.ok(r.ms < 5000, `failed at once (${r.ms} ms)`);
    assert.match(String(r.error?.cause?.code ?? r.error), /ECONNRESET|fetch failed|socket|terminated/i, String(r.error));
    await stopped(proxy);
    const { faults } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['close']);
    const ex = sql(db, 'SELECT fault FROM http_exchanges WHERE fault IS NOT NULL');
    assert.equal(ex.length, 1, 'the exchange names the fault');
  });
});

test('close mode=end-stream: the SSE stream ends before the answer; the call times out', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['dir=s2c tool=echo close mode=end-stream']);
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 800 }));
    assert.equal(r.ok, false);
    assert.equal(r.error.code, -32001, String(r.error));
    await stopped(proxy);
    const { faults } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['close']);
  });
});

test('http-status 404 on the session: the SDK reports it (no re-initialize)', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db, transport } = await faulted(ctx, ['tool=echo http-status status=404']);
    const sid = transport.sessionId;
    const r = await settle(client.callTool(ECHO));
    assert.equal(r.ok, false);
    assert.equal(r.error.code, 404, String(r.error));
    assert.match(r.error.message, /session not found/);
    assert.equal(transport.sessionId, sid, 'the client keeps its session id');
    await stopped(proxy);
    const inits = sql(db, `SELECT COUNT(*) AS n FROM messages WHERE method = 'initialize' AND direction = 'c2s'`);
    assert.equal(inits[0].n, 1, 'the SDK did not initialize again');
    const ex = sql(db, 'SELECT status, fault FROM http_exchanges WHERE fault IS NOT NULL');
    assert.deepEqual(ex.map((e) => e.status), [404]);
    const { msgs } = faultRows(db);
    assert.deepEqual(msgs.map((m) => m.fault_role), ['original']);
  });
});

const WWW = 'Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource", scope="mcp"';

test('http-status 401 with WWW-Authenticate and 429 with Retry-After', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db, transport } = await faulted(ctx, [
      `tool=echo nth=1 http-status status=401 www-authenticate='${WWW}'`,
      'tool=echo http-status status=429 retry-after=7',
    ]);
    const r1 = await settle(client.callTool(ECHO));
    assert.equal(r1.ok, false);
    assert.equal(r1.error.code, 401, String(r1.error));
    // What the SDK read it from: the status and the header, seen raw.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: ECHO });
    const raw = await fetch(`${proxy.url}/mcp`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId, 'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18' },
    });
    assert.equal(raw.status, 429);
    assert.equal(raw.headers.get('retry-after'), '7');
    await raw.text();
    const r2 = await settle(client.callTool(ECHO));
    assert.equal(r2.error?.code, 429, String(r2.error));
    await stopped(proxy);
    const ex = sql(db, `SELECT status, response_headers FROM http_exchanges WHERE fault IS NOT NULL ORDER BY id`);
    assert.deepEqual(ex.map((e) => e.status), [401, 429, 429]);
    assert.deepEqual(JSON.parse(ex[0].response_headers).find(([k]) => k === 'WWW-Authenticate'), ['WWW-Authenticate', WWW]);
    assert.deepEqual(JSON.parse(ex[1].response_headers).find(([k]) => k === 'Retry-After'), ['Retry-After', '7']);
  });
});

test('a probability rule with a seed faults the same calls in two runs, about its share', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const se = await startServerEverything('streamableHttp');
    ctx.defer(se.stop);
    const N = 1000;
    const run = async (name) => {
      const { client, proxy, db } = await faulted(ctx, ['tool=echo p=0.25 error code=-32099'], { seed: 4242, name, se });
      const failed = [];
      for (let i = 0; i < N; i++) {
        const r = await settle(client.callTool({ name: 'echo', arguments: { message: `m${i}` } }));
        if (!r.ok) {
          assert.equal(r.error.code, -32099);
          failed.push(i);
        }
      }
      await stopped(proxy);
      return { failed, db };
    };
    const a = await run('seed-a');
    const b = await run('seed-b');
    assert.deepEqual(b.failed, a.failed, 'the same calls failed in both runs');
    const share = a.failed.length / N;
    console.log(`# p=0.25 over ${N} calls: ${a.failed.length} faulted (${(share * 100).toFixed(1)}%)`);
    assert.ok(share > 0.2 && share < 0.3, `about a quarter: ${share}`);
    const { faults } = faultRows(a.db);
    assert.equal(faults.length, a.failed.length, 'one faults row per faulted call');
  });
});

/** The SDK's stateless server answering each POST with a JSON body. */
async function jsonServer({ defer }) {
  const p = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'sdk_stateless.mjs'), '--json'], {
    stream: 'stdout', pattern: /^sdk_stateless: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'sdk_stateless --json',
  });
  defer(() => stopChild(p.child, p.exited));
  return { origin: p.match[1] };
}

test('JSON response bodies: mutate and corrupt keep Content-Length right; delay and drop', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const se = await jsonServer(ctx);
    const { client, proxy, db, errors } = await faulted(ctx, [
      'dir=s2c method=tools/list mutate set=$.result.tools[0].name value=\'"renamed"\'',
      'dir=s2c tool=echo nth=1 corrupt',
      'dir=s2c tool=echo nth=1 delay ms=700',
      'dir=s2c tool=echo nth=1 drop',
    ], { se });
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t) => t.name), ['renamed'], 'the client sees the mutated list');
    // corrupt: the SDK cannot parse the body: the call fails at once.
    const c = await settle(client.callTool(ECHO, undefined, { timeout: 5000 }));
    assert.equal(c.ok, false);
    assert.ok(c.ms < 4000, `not a timeout (${c.ms} ms)`);
    assert.match(String(c.error), /JSON|Unexpected|Syntax/i, String(c.error));
    assert.ok(errors.length >= 1, 'onerror was called');
    // delay: the answer comes, late.
    const d = await settle(client.callTool(ECHO, undefined, { timeout: 5000 }));
    assert.equal(d.ok, true, String(d.error));
    assert.ok(d.ms >= 650, `delayed (${d.ms} ms)`);
    // drop: the POST is left waiting; the client times out.
    const x = await settle(client.callTool(ECHO, undefined, { timeout: 600 }));
    assert.equal(x.error?.code, -32001, String(x.error));
    const ok = await client.callTool(ECHO);
    assert.match(JSON.stringify(ok.content), /Echo: hello/);
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['mutate', 'corrupt', 'delay', 'drop'], JSON.stringify(faults));
    assert.deepEqual(msgs.map((m) => `${m.fault}:${m.fault_role}`),
      ['1:original', '1:injected', '2:original', '2:injected', '3:delayed', '4:original'], JSON.stringify(msgs));
    assert.match(msgs[1].raw, /"renamed"/);
  });
});

test('mutate of an SSE event: the client gets the changed message; SSE framing stays valid', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['dir=s2c tool=echo mutate set=$.result.content[0].text value=\'"line one\\nline two"\'']);
    const res = await client.callTool(ECHO);
    assert.equal(res.content[0].text, 'line one\nline two', JSON.stringify(res));
    const again = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 2 } });
    assert.match(JSON.stringify(again.content), /4/);
    await stopped(proxy);
    const { msgs } = faultRows(db);
    assert.deepEqual(msgs.map((m) => m.fault_role), ['original', 'injected']);
  });
});

test('delay of an SSE event and a c2s corrupt: the server gets invalid JSON and answers with an error', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, ['dir=s2c tool=echo delay ms=600', 'dir=c2s tool=get-sum corrupt']);
    const d = await settle(client.callTool(ECHO, undefined, { timeout: 5000 }));
    assert.equal(d.ok, true, String(d.error));
    assert.ok(d.ms >= 550, `delayed (${d.ms} ms)`);
    const c = await settle(client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }, undefined, { timeout: 1500 }));
    assert.equal(c.ok, false, 'no answer to a request the server could not read');
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => `${f.action}:${f.direction}`), ['delay:s2c', 'corrupt:c2s']);
    assert.deepEqual(msgs.map((m) => `${m.direction}:${m.fault_role}`), ['s2c:delayed', 'c2s:original', 'c2s:injected']);
  });
});

test('legacy HTTP+SSE: an injected error and a tool-error come on the event stream; the POST gets 202', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('sse');
    defer(se.stop);
    const db = join(dir, 'legacy.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'legacy', args: ['--fault', 'tool=echo nth=1 error code=-32042', '--fault', 'tool=echo nth=1 tool-error'] });
    defer(() => proxy.stop());
    const client = new Client({ name: 'fault-http-legacy', version: '1.0.0' });
    await client.connect(new SSEClientTransport(new URL(`${proxy.url}/sse`)));
    defer(() => client.close());
    const r = await settle(client.callTool(ECHO, undefined, { timeout: 5000 }));
    assert.equal(r.error?.code, -32042, String(r.error));
    const t = await client.callTool(ECHO, undefined, { timeout: 5000 });
    assert.equal(t.isError, true, JSON.stringify(t));
    const ok = await client.callTool(ECHO, undefined, { timeout: 5000 });
    assert.match(JSON.stringify(ok.content), /hello/);
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['error', 'tool-error']);
    assert.deepEqual(msgs.map((m) => `${m.direction}:${m.fault_role}`), ['c2s:original', 's2c:injected', 'c2s:original', 's2c:injected']);
    const st = sql(db, `SELECT status FROM http_exchanges WHERE method = 'POST' AND request_headers IS NOT NULL ORDER BY id`);
    assert.ok(st.every((e) => e.status === 202), `every POST got 202: ${JSON.stringify(st)}`);
  });
});

test('timeout and a c2s mutate: the answer is swallowed; a changed request body reaches the server with its new length', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { client, proxy, db } = await faulted(ctx, [
      'tool=echo nth=1 timeout ms=200',
      `dir=c2s tool=echo mutate set=$.params.arguments.message value='"a longer message than before"'`,
    ]);
    const t = await settle(client.callTool(ECHO, undefined, { timeout: 1000 }));
    assert.equal(t.error?.code, -32001, String(t.error));
    const m = await client.callTool(ECHO);
    assert.equal(m.content[0].text, 'Echo: a longer message than before', JSON.stringify(m));
    await stopped(proxy);
    const { faults, msgs } = faultRows(db);
    assert.deepEqual(faults.map((f) => f.action), ['timeout', 'mutate']);
    assert.deepEqual(msgs.map((x) => `${x.fault}:${x.direction}:${x.kind}:${x.fault_role}`),
      // The timed-out request went on as it was: its fault, no role.
      ['1:c2s:request:null', '1:s2c:response:original', '2:c2s:request:original', '2:c2s:request:injected'], JSON.stringify(msgs));
  });
});

test('--faults FILE over HTTP: SIGHUP reads it again and the rules change mid-session', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const { writeFileSync } = await import('node:fs');
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const file = join(dir, 'faults.json');
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'echo', action: 'http-status', status: 503 }] }));
    const db = join(dir, 'hup.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'hup', args: ['--faults', file, '--seed', '3'] });
    defer(() => proxy.stop());
    const client = new Client({ name: 'fault-http-hup', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
    defer(() => client.close());
    const before = await settle(client.callTool(ECHO));
    assert.equal(before.error?.code, 503, String(before.error));
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'echo', action: 'tool-error' }] }));
    proxy.child.kill('SIGHUP');
    let after;
    for (let i = 0; i < 50; i++) {
      await new Promise((res) => setTimeout(res, 100));
      after = await client.callTool(ECHO).catch((e) => e);
      if (after.isError === true) break;
    }
    assert.equal(after.isError, true, `the new rule applies: ${JSON.stringify(after)}`);
    const s = await stopped(proxy);
    assert.match(s.stderr, /fault rules reloaded: 1/);
    const { faults } = faultRows(db);
    assert.equal(faults[0].action, 'http-status');
    assert.equal(faults[faults.length - 1].action, 'tool-error');
  });
});

// ---------------------------------------------------------------------------
// Edges, against raw upstreams (peers/fault_edges.mjs) and a raw client.

/** mcpreel in front of a raw edge upstream with these rules. */
async function edged({ dir, defer }, mode, upOpts, rules, name, extra = []) {
  const { startEdgeUpstream } = await import('./peers/fault_edges.mjs');
  const up = await startEdgeUpstream(mode, upOpts);
  defer(() => up.close());
  const args = [...extra];
  for (const r of rules) args.push('--fault', r);
  const db = join(dir, `${name}.db`);
  const proxy = await startMcpreelHttp({ db, upstream: up.origin, name, args });
  defer(() => proxy.stop());
  return { up, proxy, db };
}

/**
 * POST body to url (on agent's connection): {status, body, ms}, or
 * {error, ms} when the connection fails or nothing comes in timeoutMs.
 * onData(bytesSoFar) is told as the response comes.
 */
async function rawPost(url, body, { agent, timeoutMs = 10000, headers = {}, onData } = {}) {
  const http = await import('node:http');
  const t0 = Date.now();
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      const parts = [];
      let n = 0;
      res.on('data', (c) => { parts.push(c); n += c.length; onData?.(n, Date.now() - t0); });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString(), ms: Date.now() - t0 }));
      res.on('error', (error) => resolve({ error, status: res.statusCode, ms: Date.now() - t0 }));
    });
    req.setTimeout(timeoutMs, () => { req.destroy(new Error('timeout')); });
    req.on('error', (error) => resolve({ error, ms: Date.now() - t0 }));
    if (typeof body === 'function') body(req);
    else req.end(body);
  });
}

const rpc = (id, method) => JSON.stringify({ jsonrpc: '2.0', id, method, params: {} });

test('a delayed request on a kept-alive connection the upstream closed while it waited goes on a new one', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'idle-close', { idleMs: 300 }, ['dir=c2s method=tools/call delay ms=900'], 'idle');
    const http = await import('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    ctx.defer(async () => agent.destroy());
    const a = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/list'), { agent });
    assert.equal(a.status, 200, JSON.stringify(a));
    const b = await rawPost(`${proxy.url}/mcp`, rpc(2, 'tools/call'), { agent });
    assert.equal(b.status, 200, `the delayed call is answered: ${JSON.stringify(b)}`);
    assert.match(b.body, /"id":2/);
    assert.ok(b.ms >= 850, `it was delayed (${b.ms} ms)`);
    assert.deepEqual(up.requests.map((r) => JSON.parse(r.body).method), ['tools/list', 'tools/call'], 'the upstream got both, once each');
    await stopped(proxy);
  });
});

test('a response ended by the upstream closing, with a s2c delay or drop: delivered late, or the client left waiting', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'close-body', {}, ['dir=s2c method=tools/call delay ms=400', 'dir=s2c method=ping drop'], 'closebody');
    const a = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'));
    assert.equal(a.status, 200, JSON.stringify(a));
    assert.match(a.body, /"closed":true/);
    assert.ok(a.ms >= 380, `delayed (${a.ms} ms)`);
    const b = await rawPost(`${proxy.url}/mcp`, rpc(2, 'ping'), { timeoutMs: 1200 });
    assert.equal(b.error?.message, 'timeout', `left waiting, not closed: ${JSON.stringify(b)} ${b.error}`);
    assert.ok(b.ms >= 1100);
    assert.equal(up.requests.length, 2);
    await stopped(proxy);
  });
});

test('a request body over 16 MiB streams upstream as it comes (no fault decided)', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'sink', {}, ['method=nope drop'], 'bigreq');
    const MiB = 1 << 20;
    const total = 40 * MiB;
    let atLast = -1;
    const r = await rawPost(`${proxy.url}/mcp`, async (req) => {
      const piece = Buffer.alloc(MiB, 'a');
      for (let i = 0; i < 40; i++) {
        if (i === 36) {
          // A pause: what came so far should be upstream by its end.
          await new Promise((res) => setTimeout(res, 1500));
          atLast = up.progress.length ? up.progress[up.progress.length - 1][1] : 0;
        }
        if (!req.write(piece)) await new Promise((res) => req.once('drain', res));
      }
      req.end();
    }, { headers: { 'Content-Length': String(total) }, timeoutMs: 30000 });
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.deepEqual(up.requests.map((q) => q.body), [`${total} bytes`]);
    assert.ok(atLast >= 24 * MiB, `the upstream had ${atLast} bytes of 36 MiB sent before a pause`);
    await stopped(proxy);
  });
});

test('a JSON response over 16 MiB streams to the client as it comes (no fault decided)', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'json-big', { size: 20 << 20, cut: (16 << 20) + 1, pauseMs: 1500 }, ['method=nope drop'], 'bigjson');
    let early = 0;
    const r = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'), { timeoutMs: 30000, onData: (n) => { if (up.resumed === 0) early = n; } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.body.length, 20 << 20);
    assert.ok(early >= 16 << 20, `what came went on: ${early} bytes before the upstream paused`);
    await stopped(proxy);
  });
});

test('an SSE event over 16 MiB streams to the client as it comes (no fault decided)', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'sse-big', { size: 24 << 20, ms: 500, pauseMs: 1500 }, ['method=nope drop'], 'bigsse');
    let early = 0;
    const r = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'), { timeoutMs: 30000, onData: (n) => { if (up.resumed === 0) early = n; } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.ok(r.body.length >= 24 << 20, `all of it (${r.body.length})`);
    assert.match(r.body.slice(-20), /"}}\n\n$/);
    assert.ok(early >= 17 << 20, `past the hold bound it streamed: ${early} bytes before the upstream's last bytes`);
    await stopped(proxy);
  });
});

test('answers a fault made: the exchange says its number; a header value a rule gives cannot carry CR or LF', { skip: needsHttp, timeout: 60000 }, async () => {
  // A rule whose header value would split the response head is refused
  // before anything listens.
  const bad = spawnSync(MCPREEL, ['record', '--db', '/nonexistent/never.db', '--listen', '127.0.0.1:0',
    '--upstream', 'http://127.0.0.1:9', '--fault',
    'method=ping http-status status=401 www-authenticate="Bearer x\r\nX-Injected: 1\r\n\r\nHTTP/1.1 200 OK"'],
  { encoding: 'utf8', timeout: 20000 });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /www-authenticate= is a header value: it cannot hold a line break/);
  await withCleanup(async (ctx) => {
    const { up, proxy, db } = await edged(ctx, 'idle-close', {}, [
      'method=tools/call error code=-32042',
      'method=ping http-status status=401 www-authenticate="Bearer realm=\\"mcp\\""',
    ], 'reply');
    const a = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'));
    assert.equal(a.status, 200);
    assert.match(a.body, /-32042/);
    const b = await rawPost(`${proxy.url}/mcp`, rpc(2, 'ping'));
    assert.equal(b.status, 401, JSON.stringify(b));
    assert.equal(b.headers['www-authenticate'], 'Bearer realm="mcp"');
    assert.equal(up.requests.length, 0);
    await stopped(proxy);
    const ex = sql(db, 'SELECT outcome, fault FROM http_exchanges ORDER BY id');
    assert.deepEqual(ex.map((e) => [e.outcome, e.fault]), [['200 from a fault (#1)', null], ['401 from a fault (#2)', 2]], JSON.stringify(ex));
  });
});

test('a held request with Expect: 100-continue gets 100 from mcpreel; a held JSON answer cut short reaches the client as without rules', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'idle-close', { idleMs: 5000 }, ['method=nope drop'], 'expect');
    const net = await import('node:net');
    const body = rpc(1, 'tools/list');
    const sock = net.connect(proxy.port, '127.0.0.1');
    ctx.defer(async () => sock.destroy());
    let got = '';
    sock.on('data', (c) => { got += c.toString(); });
    const t0 = Date.now();
    sock.write(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    while (!got.includes('\r\n\r\n') && Date.now() - t0 < 3000) await new Promise((res) => setTimeout(res, 20));
    assert.match(got, /^HTTP\/1\.1 100 Continue\r\n\r\n$/, `100 at once (${Date.now() - t0} ms)`);
    assert.ok(Date.now() - t0 < 1000);
    sock.write(body);
    while (!/"id":1/.test(got) && Date.now() - t0 < 5000) await new Promise((res) => setTimeout(res, 20));
    assert.match(got, /HTTP\/1\.1 200 OK[^]*"id":1/);
    assert.equal(up.requests.length, 1);
    assert.doesNotMatch(up.requests[0].head, /expect:/i, 'Expect is not forwarded: the upstream owes no 100');
    await stopped(proxy);
  });
  await withCleanup(async (ctx) => {
    const { proxy } = await edged(ctx, 'short-body', {}, ['method=nope drop'], 'short');
    const r = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'), { timeoutMs: 5000 });
    assert.equal(r.status, 200, `the head and what came, then the close: ${r.error}`);
    assert.ok(r.error, 'the body is cut short');
    await stopped(proxy);
  });
});

test('an upstream that resets a held JSON answer mid-body: the head and what came, as with no rule', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'short-reset', {}, ['method=nope drop'], 'shortrst');
    let got = 0;
    const r = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'), { timeoutMs: 5000, onData: (n) => { got = n; } });
    assert.equal(r.status, 200, `not a 502: ${JSON.stringify(r)} ${r.error}`);
    assert.ok(r.error, 'the body is cut short');
    assert.equal(got, '{"jsonrpc":"2.0","id":1,"result":{}}'.length, 'what came reached the client');
    assert.equal(up.requests.length, 1);
    await stopped(proxy);
  });
});

test('dropped requests left waiting no longer count as held: 256 MiB of them do not turn off decisions', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { up, proxy } = await edged(ctx, 'sink', {}, ['method=tools/call drop', 'method=ping error code=-32001 message=decided'], 'heldmax', ['-v']);
    const http = await import('node:http');
    const agent = new http.Agent({ keepAlive: false, maxSockets: 64 });
    ctx.defer(async () => agent.destroy());
    // Sixteen bodies of exactly 16 MiB (the most one may hold) and one
    // small one, all dropped: 256 MiB + 1 KiB, were they still counted.
    const MiB = 1 << 20;
    const big = (size) => {
      const prefix = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"';
      return Buffer.from(prefix + 'x'.repeat(size - prefix.length - 3) + '"}}');
    };
    const body16 = big(16 * MiB);
    const hung = [];
    for (let i = 0; i < 16; i++) hung.push(rawPost(`${proxy.url}/mcp`, body16, { agent, timeoutMs: 100000 }));
    hung.push(rawPost(`${proxy.url}/mcp`, big(1024), { agent, timeoutMs: 100000 }));
    const t0 = Date.now();
    const drops = () => (proxy.stderr().match(/fault #\d+ \(rule 1\)/g) ?? []).length;
    while (drops() < 17 && Date.now() - t0 < 60000) await new Promise((res) => setTimeout(res, 100));
    assert.equal(drops(), 17, `all 17 dropped: ${proxy.stderr().slice(-2000)}`);
    // A ping whose body comes in two reads is held across them: decided.
    const ping = Buffer.from(rpc(2, 'ping'));
    const r = await rawPost(`${proxy.url}/mcp`, async (req) => {
      req.write(ping.subarray(0, 10));
      await new Promise((res) => setTimeout(res, 300));
      req.end(ping.subarray(10));
    }, { agent, timeoutMs: 10000, headers: { 'Content-Length': String(ping.length) } });
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.match(r.body, /"code":-32001/, `the ping rule applied, not passed on undecided: ${r.body}`);
    assert.equal(up.requests.length, 0, 'nothing reached the upstream');
    agent.destroy();
    await Promise.all(hung);
    await stopped(proxy);
  });
});

test('a timeout whose answer the upstream cuts short (closed or reset): nothing of it reaches the client, which is left waiting', { skip: needsHttp, timeout: 60000 }, async () => {
  for (const mode of ['short-body', 'short-reset']) {
    await withCleanup(async (ctx) => {
      const { up, proxy, db } = await edged(ctx, mode, {}, ['method=tools/call timeout ms=3000'], `to-${mode}`);
      let got = 0;
      const r = await rawPost(`${proxy.url}/mcp`, rpc(1, 'tools/call'), { timeoutMs: 1500, onData: (n) => { got = n; } });
      assert.equal(r.error?.message, 'timeout', `${mode}: left waiting, not answered or closed: ${JSON.stringify(r)} ${r.error}`);
      assert.equal(r.status, undefined, `${mode}: no head`);
      assert.equal(got, 0);
      assert.ok(r.ms >= 1400);
      assert.equal(up.requests.length, 1);
      // Another request on a new connection is answered as usual.
      const b = await rawPost(`${proxy.url}/mcp`, rpc(2, 'ping'), { timeoutMs: 5000 });
      assert.equal(b.status, 200, `${mode}: ${JSON.stringify(b)} ${b.error}`);
      await stopped(proxy);
    });
  }
});
