// `mcpreel mock --fault`: a session of server-everything recorded once,
// then served by mock with fault rules, to the official TypeScript SDK
// client; the assertions are on what the client sees (a rejected promise,
// isError, a timeout, a transport error, a close, an HTTP status), and on
// the one line mock says per fault.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { request, spawnUntilLine, stopChild } from './lib/servers.mjs';
import { MCPREEL, runMcpreel, sql, tempDir } from './lib/util.mjs';

const SANITIZER = /runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer/;
const SUM = { name: 'get-sum', arguments: { a: 2, b: 3 } };
const ECHO = { name: 'echo', arguments: { message: 'hello' } };
const SUM_TEXT = 'The sum of 2 and 3 is 5.';
const REQUEST_TIMEOUT = -32001;	// the SDK's ErrorCode.RequestTimeout
const CONNECTION_CLOSED = -32000;

let t;
let db;

before(async () => {
  t = tempDir();
  db = join(t.dir, 'm.db');
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
});

after(() => t?.cleanup());

/* Until pred(text) holds for the text got so far, ms at most. */
async function until(get, pred, ms, what) {
  const end = Date.now() + ms;
  while (!pred(get())) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms; got:\n${get()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/* An SDK client connected to a transport; what it sees is in seen. */
async function clientOn(transport) {
  const client = new Client({ name: 'fault-e2e', version: '1.0.0' }, { capabilities: { roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  const seen = { errors: [], closed: false, sent: [] };
  client.onerror = (e) => seen.errors.push(e);
  client.onclose = () => { seen.closed = true; };
  const send = transport.send.bind(transport);
  transport.send = (m, o) => { seen.sent.push(m); return send(m, o); };
  await client.connect(transport);
  return { client, seen };
}

/* mock over stdio with args, the SDK client on it; stderr collected. */
async function mockStdio(args) {
  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['mock', '--db', db, 'sdk', ...args],
    stderr: 'pipe',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (c) => { stderr += c; });
  const { client, seen } = await clientOn(transport);
  return { client, seen, transport, stderr: () => stderr };
}

/* mock --listen with args, the SDK client on it over Streamable HTTP. */
async function mockHttp(args) {
  const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db, 'sdk', '--listen', '127.0.0.1:0', ...args], {
    pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --listen --fault',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${p.match[1]}/mcp`), {
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30000, reconnectionDelayGrowFactor: 1.5 },
  });
  const { client, seen } = await clientOn(transport);
  return { client, seen, p, stop: () => stopChild(p.child, p.exited) };
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('the promise was not rejected');
}

test('mock --fault error: the promise rejects with the code and message; other calls are played', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'tool=get-sum error code=-32050 message="injected boom"']);
  try {
    const e = await rejection(m.client.callTool(SUM));
    assert.equal(e.code, -32050);
    assert.match(e.message, /injected boom/);
    const echo = await m.client.callTool(ECHO);
    assert.equal(echo.content[0].text, 'Echo: hello', 'a call no rule selects gets its recorded answer');
    assert.match(m.stderr(), /mcpreel: mock: fault #1, rule 1 `[^`]*get-sum[^`]*`: c2s tools\/call id \d+: /, 'the fault in one line');
    assert.equal(m.stderr().match(/fault #/g).length, 1, 'one fault, one line');
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault tool-error: the client gets a result with isError', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'tool=echo tool-error text="the tool broke"']);
  try {
    const r = await m.client.callTool(ECHO);
    assert.equal(r.isError, true);
    assert.equal(r.content[0].text, 'the tool broke');
    const sum = await m.client.callTool(SUM);
    assert.equal(sum.content[0].text, SUM_TEXT);
    assert.notEqual(sum.isError, true);
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault delay past the client\'s timeout: the client times out, and its cancellation reaches the mock', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'tool=get-sum delay ms=3000']);
  try {
    const t0 = Date.now();
    const e = await rejection(m.client.callTool(SUM, undefined, { timeout: 600 }));
    assert.equal(e.code, REQUEST_TIMEOUT, String(e));
    assert.ok(Date.now() - t0 < 2500, 'the client gave up at its own timeout');
    const cancel = m.seen.sent.find((x) => x.method === 'notifications/cancelled');
    assert.ok(cancel, 'the SDK sent notifications/cancelled');
    await until(m.stderr, (s) => /the client cancelled request \S+ \(fault #1\): still held, it is not played/.test(s), 5000, 'the cancellation logged');
    // A delay shorter than the timeout: the answer, late.
    const t1 = Date.now();
    const echo = await m.client.callTool(ECHO);
    assert.equal(echo.content[0].text, 'Echo: hello');
    assert.ok(Date.now() - t1 < 2500);
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault dir=s2c drop of a response: the call times out, the next one is answered', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'dir=s2c tool=echo drop']);
  try {
    const e = await rejection(m.client.callTool(ECHO, undefined, { timeout: 1500 }));
    assert.equal(e.code, REQUEST_TIMEOUT, String(e));
    const sum = await m.client.callTool(SUM);
    assert.equal(sum.content[0].text, SUM_TEXT);
    assert.match(m.stderr(), /fault #1, rule 1 `[^`]*`: s2c tools\/call id \d+: /);
    await until(m.stderr, (s) => /the client cancelled request \S+ \(fault #1\)/.test(s), 5000, 'the cancellation logged');
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault corrupt: the SDK\'s transport reports a parse error', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'dir=s2c method=ping corrupt']);
  try {
    const e = await rejection(m.client.ping({ timeout: 1000 }));
    assert.equal(e.code, REQUEST_TIMEOUT, 'the answer never came whole');
    assert.ok(m.seen.errors.length >= 1, 'onerror was called');
    assert.ok(m.seen.errors.some((x) => x instanceof SyntaxError || /JSON/.test(String(x))), m.seen.errors.map(String).join('\n'));
    const sum = await m.client.callTool(SUM);
    assert.equal(sum.content[0].text, SUM_TEXT, 'the transport goes on');
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault close after the 2nd call: the client sees the transport close', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--fault', 'dir=c2s method=tools/call nth=2 close']);
  const closed = new Promise((r) => { m.client.onclose = () => { m.seen.closed = true; r(); }; });
  const first = await m.client.callTool(SUM);
  assert.equal(first.content[0].text, SUM_TEXT);
  const e = await rejection(m.client.callTool(ECHO));
  assert.equal(e.code, CONNECTION_CLOSED, String(e));
  await closed;
  assert.equal(m.seen.closed, true, 'onclose');
  await until(m.stderr, (s) => /fault #1, rule 1 `[^`]*`: c2s tools\/call id \d+: /.test(s), 5000, 'the fault logged');
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --fault http-status 404 with --listen: the SDK rejects the call with the status and keeps its session', { timeout: 60000 }, async () => {
  const m = await mockHttp(['--fault', 'tool=get-sum http-status status=404']);
  try {
    const e = await rejection(m.client.callTool(SUM));
    assert.equal(e.code, 404, String(e));
    assert.match(e.message, /Streamable HTTP error: Error POSTing to endpoint/);
    // The SDK 1.32.2 does not re-initialize on a 404: the next call goes
    // in the same session, and no second initialize is sent.
    const echo = await m.client.callTool(ECHO);
    assert.equal(echo.content[0].text, 'Echo: hello');
    assert.equal(m.seen.sent.filter((x) => x.method === 'initialize').length, 1);
    await m.client.close();
  } finally {
    await m.stop();
  }
  assert.match(m.p.stderr(), /fault #1, rule 1 `[^`]*`: c2s tools\/call id \d+: /);
  assert.doesNotMatch(m.p.stderr(), SANITIZER);
});

test('mock --fault http-status 429 and 401: Retry-After and WWW-Authenticate reach the client', { timeout: 60000 }, async () => {
  const m = await mockHttp(['--fault', 'tool=get-sum http-status status=429 retry-after=7',
    '--fault', 'tool=echo http-status status=401 www-authenticate="Bearer realm=\\"mock\\""']);
  try {
    const e = await rejection(m.client.callTool(SUM));
    assert.equal(e.code, 429, String(e));
    const u = await rejection(m.client.callTool(ECHO));
    assert.equal(u.code, 401, String(u));
    // The headers as sent, seen raw.
    const post = (body) => request(`${m.p.match[1]}/mcp`, { method: 'POST', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } });
    const busy = await post({ jsonrpc: '2.0', id: 70, method: 'tools/call', params: SUM });
    assert.equal(busy.status, 429);
    assert.equal(busy.headers['retry-after'], '7');
    const auth = await post({ jsonrpc: '2.0', id: 71, method: 'tools/call', params: ECHO });
    assert.equal(auth.headers['www-authenticate'], 'Bearer realm="mock"');
    await m.client.close();
  } finally {
    await m.stop();
  }
  assert.doesNotMatch(m.p.stderr(), SANITIZER);
  // A value's line break could add a header: such a rule is refused.
  const r = await runMcpreel(['mock', '--db', db, 'sdk', '--listen', '127.0.0.1:0',
    '--fault', 'method=ping http-status status=401 www-authenticate="x\r\nX-Evil: 1"'], { input: Buffer.alloc(0) });
  assert.equal(r.code, 2, r.stderr.toString());
  assert.match(r.stderr.toString(), /www-authenticate= is a header value: it cannot hold a line break/);
});

test('mock --fault dir=s2c delay: the answer comes late, and what follows it on stdout waits behind it', { timeout: 60000 }, async () => {
  const m = await mockStdio(['--latency', 'none', '--fault', 'dir=s2c tool=echo delay ms=1200']);
  try {
    const t0 = Date.now();
    const order = [];
    const [echo, sum] = await Promise.all([
      m.client.callTool(ECHO).then((r) => { order.push('echo'); return r; }),
      m.client.callTool(SUM).then((r) => { order.push('get-sum'); return r; }),
    ]);
    const ms = Date.now() - t0;
    assert.deepEqual(order, ['echo', 'get-sum'], 'the answer after the delayed one waited for it');
    assert.equal(echo.content[0].text, 'Echo: hello');
    assert.equal(sum.content[0].text, SUM_TEXT);
    assert.ok(ms >= 1100, `late: ${ms} ms`);
    assert.match(m.stderr(), /fault #1, rule 1 `[^`]*`: s2c tools\/call id \d+: /);
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --listen --fault timeout and close: the POST ends with no answer, or its connection is reset; the mock lives on', { timeout: 60000 }, async () => {
  const m = await mockHttp(['--fault', 'tool=get-sum timeout ms=300', '--fault', 'tool=echo close']);
  try {
    const t0 = Date.now();
    const e = await rejection(m.client.callTool(SUM, undefined, { timeout: 2500 }));
    assert.equal(e.code, REQUEST_TIMEOUT, String(e));
    assert.ok(Date.now() - t0 >= 2000, 'the client waited for its own timeout');
    const r = await rejection(m.client.callTool(ECHO, undefined, { timeout: 5000 }));
    assert.match(String(r), /fetch failed|ECONNRESET|socket/i, 'a reset connection: ' + String(r));
    const pong = await m.client.ping();
    assert.deepEqual(pong, {}, 'the mock still serves');
    await m.client.close();
  } finally {
    await m.stop();
  }
  const err = m.p.stderr();
  assert.match(err, /fault #1, rule 1 `[^`]*`: c2s tools\/call id \d+: /);
  assert.match(err, /fault #2, rule 2 `[^`]*`: c2s tools\/call id \d+: /);
  assert.doesNotMatch(err, SANITIZER);
});

test('mock --fault delaying every answer of a flood: what is held stays bounded, nothing is lost or reordered', { timeout: 90000 }, async () => {
  const lines = [{ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } }];
  for (let i = 1; i <= 6000; i++) lines.push({ jsonrpc: '2.0', id: i, method: 'ping' });
  let out = '';
  let child;
  const run = runMcpreel(['mock', '--db', db, 'sdk', '--latency', 'none', '--fault', 'dir=s2c method=ping delay ms=600000'], {
    input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 60000, keepStdinOpen: true,
    onSpawn: (c) => { child = c; c.stdout.on('data', (d) => { out += d; }); },
  });
  // At the bound what was held goes at once, while the client still talks.
  await until(() => String(out.split('\n').length), (n) => Number(n) > 4000, 30000, 'answers let go at the bound');
  child.stdin.end();
  const r = await run;
  const err = r.stderr.toString();
  assert.equal(r.code, 0, err.slice(-2000));
  assert.doesNotMatch(err, SANITIZER);
  assert.equal(err.match(/are held by faults: what a rule would hold now goes on at once/g).length, 1, 'said once');
  const ids = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((m) => 'id' in m).map((m) => m.id);
  assert.deepEqual(ids, lines.map((l) => l.id), 'every answer, in order');
});

test('mock --fault dir=s2c p=30% delay: answers delayed at random keep their order on stdout', { timeout: 60000 }, async () => {
  const lines = [{ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'o', version: '1' } } }];
  for (let i = 1; i <= 300; i++) lines.push({ jsonrpc: '2.0', id: i, method: 'ping' });
  const r = await runMcpreel(['mock', '--db', db, 'sdk', '--latency', 'none', '--seed', '3', '--fault', 'dir=s2c method=ping p=30% delay ms=20 jitter=15'],
    { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 60000 });
  const err = r.stderr.toString();
  assert.equal(r.code, 0, err.slice(-2000));
  assert.doesNotMatch(err, SANITIZER);
  const n = err.match(/mock: fault #/g).length;
  assert.ok(n > 50 && n < 150, `about 90 of 300 delayed: ${n}`);
  const ids = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((m) => 'id' in m).map((m) => m.id);
  assert.deepEqual(ids, lines.map((l) => l.id), 'every answer, in order');
});

test('mock refuses http-status without --listen, clearly', { timeout: 30000 }, async () => {
  const r = await runMcpreel(['mock', '--db', db, 'sdk', '--fault', 'http-status status=503'], { input: Buffer.alloc(0) });
  assert.equal(r.code, 2, r.stderr.toString());
  assert.match(r.stderr.toString(), /^mcpreel mock: .*http-status.*add --listen ADDR/m);
});

test('mock refuses --seed without rules, as record does', { timeout: 30000 }, async () => {
  const r = await runMcpreel(['mock', '--db', db, 'sdk', '--seed', '5'], { input: Buffer.alloc(0) });
  assert.equal(r.code, 2, r.stderr.toString());
  assert.match(r.stderr.toString(), /^mcpreel mock: --seed is for --fault or --faults rules, and none was given$/m);
});

test('mock --fault p= with --seed: the same faults in two runs', { timeout: 120000 }, async () => {
  const runOnce = async () => {
    const m = await mockStdio(['--latency', 'none', '--seed', '1234', '--fault', 'tool=get-sum p=0.4 error code=-32050']);
    const faulted = [];
    try {
      for (let i = 0; i < 30; i++) {
        try {
          await m.client.callTool(SUM);
        } catch (e) {
          assert.equal(e.code, -32050);
          faulted.push(i);
        }
      }
    } finally {
      await m.client.close();
    }
    return faulted;
  };
  const a = await runOnce();
  const b = await runOnce();
  assert.deepEqual(a, b, 'the same calls faulted');
  assert.ok(a.length > 0 && a.length < 30, `some, not all: ${a.length} of 30`);
});

test('mock --fault p=10% over 1000 calls: about a tenth faulted, the same ones for the same seed, others for another', { timeout: 120000 }, async () => {
  const lines = [{ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'p', version: '1' } } }];
  for (let i = 1; i <= 1000; i++) lines.push({ jsonrpc: '2.0', id: i, method: 'tools/call', params: SUM });
  const input = Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join(''));
  const faulted = async (seed) => {
    const r = await runMcpreel(['mock', '--db', db, 'sdk', '--latency', 'none', '--seed', seed, '--fault', 'tool=get-sum p=10% error code=-32050'],
      { input, timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString().slice(-2000));
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((m) => typeof m.id === 'number' && m.id > 0);
    assert.equal(out.length, 1000, 'every call answered');
    return out.filter((m) => m.error?.code === -32050).map((m) => m.id).sort((a, b) => a - b);
  };
  const a = await faulted('7');
  const b = await faulted('7');
  const c = await faulted('8');
  assert.deepEqual(a, b, 'the same seed: the same calls');
  assert.notDeepEqual(a, c, 'another seed: other calls');
  for (const f of [a, c]) assert.ok(f.length >= 60 && f.length <= 140, `about 100 of 1000: ${f.length}`);
});

test('mock --faults FILE is read again on SIGHUP', { timeout: 60000 }, async () => {
  const file = join(t.dir, 'faults.json');
  writeFileSync(file, JSON.stringify({ rules: [{ action: 'error', tool: 'get-sum', code: -32051 }] }));
  const m = await mockStdio(['--faults', file]);
  try {
    assert.equal((await rejection(m.client.callTool(SUM))).code, -32051);
    writeFileSync(file, JSON.stringify({ rules: [{ action: 'tool-error', tool: 'get-sum' }] }));
    process.kill(m.transport.pid, 'SIGHUP');
    await until(m.stderr, (s) => /SIGHUP: 1 fault rule read again/.test(s), 5000, 'the reload said');
    assert.equal((await m.client.callTool(SUM)).isError, true, 'the new rule applies');
    writeFileSync(file, '{ not json');
    process.kill(m.transport.pid, 'SIGHUP');
    await until(m.stderr, (s) => /SIGHUP: .*the rules stay as they were/.test(s), 5000, 'a bad file said');
    assert.equal((await m.client.callTool(SUM)).isError, true, 'the rules stay');
  } finally {
    await m.client.close();
  }
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

test('mock --on-miss forward records each fault: a faults row and the messages with their roles', { timeout: 90000 }, async () => {
  const { command, args } = serverEverythingCommand();
  const m = await mockStdio(['--on-miss', 'forward',
    '--fault', 'tool=echo error code=-32052',
    '--fault', 'dir=s2c tool=get-sum mutate set=$.result.content[0].text value=\'"changed"\'',
    '--fault', 'dir=c2s method=ping delay ms=200',
    '--fault', 'method=prompts/list timeout ms=300',
    '--', command, ...args]);
  try {
    const e = await rejection(m.client.callTool({ name: 'echo', arguments: { message: 'never recorded' } }));
    assert.equal(e.code, -32052);
    assert.equal((await m.client.callTool(SUM)).content[0].text, 'changed', 'the mutated answer');
    assert.deepEqual(await m.client.ping(), {});
    const late = await rejection(m.client.listPrompts({}, { timeout: 1500 }));
    assert.equal(late.code, REQUEST_TIMEOUT, 'the answer under timeout never came');
    await until(m.stderr, (x) => /the client cancelled request \S+ \(fault #4\)/.test(x), 5000, 'the cancellation logged');
  } finally {
    await m.client.close();
  }
  const s = sql(db, `SELECT id FROM sessions WHERE name LIKE 'mock fallback of %' ORDER BY id DESC LIMIT 1`);
  assert.equal(s.length, 1);
  const f = sql(db, `SELECT n, rule_index, action, direction, method FROM faults WHERE session_id = ${s[0].id} ORDER BY n`);
  assert.deepEqual(f, [
    { n: 1, rule_index: 1, action: 'error', direction: 'c2s', method: 'tools/call' },
    { n: 2, rule_index: 2, action: 'mutate', direction: 's2c', method: 'tools/call' },
    { n: 3, rule_index: 3, action: 'delay', direction: 'c2s', method: 'ping' },
    { n: 4, rule_index: 4, action: 'timeout', direction: 'c2s', method: 'prompts/list' },
  ]);
  const msgs = sql(db, `SELECT direction, fault, fault_role FROM messages WHERE session_id = ${s[0].id} AND fault IS NOT NULL ORDER BY seq`);
  assert.deepEqual(msgs, [
    { direction: 'c2s', fault: 1, fault_role: 'original' },
    { direction: 's2c', fault: 1, fault_role: 'injected' },
    { direction: 's2c', fault: 2, fault_role: 'original' },
    { direction: 's2c', fault: 2, fault_role: 'injected' },
    { direction: 'c2s', fault: 3, fault_role: 'delayed' },
    { direction: 's2c', fault: 4, fault_role: 'original' },
  ]);
  assert.equal(sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = ${s[0].id} AND method = 'ping'`)[0].n, 1,
    'the delayed ping recorded once');
  assert.doesNotMatch(m.stderr(), SANITIZER);
});

/*
 * A stdio server that logs (notifications/message) and reports progress
 * before it answers tools/call: what the recorded call plays before its
 * answer, on the POST's own SSE stream.
 */
const STUB = `import sys, json, time
for line in sys.stdin:
    m = json.loads(line)
    if 'id' not in m or 'method' not in m: continue
    r = {}
    if m['method'] == 'initialize':
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "stub", "version": "1"}}
    elif m['method'] == 'tools/call':
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}), flush=True)
        tok = m.get('params', {}).get('_meta', {}).get('progressToken')
        if tok is not None:
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": tok, "progress": 1}}), flush=True)
        time.sleep(0.05)
        r = {"content": [{"type": "text", "text": "done"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": m['id'], "result": r}), flush=True)
`;
const STUB_INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
const STUB_CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'work', arguments: {}, _meta: { progressToken: 7 } } };

/* The stub's script and a session recorded from it (name stub) in db. */
async function stubSession(dir, db2, extra = []) {
  const py = join(dir, 'stub.py');
  writeFileSync(py, STUB);
  const lines = [STUB_INIT, { jsonrpc: '2.0', method: 'notifications/initialized' }, STUB_CALL, ...extra];
  const r = await runMcpreel(['record', '--db', db2, '--name', 'stub', '--', 'python3', py],
    { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')) });
  assert.equal(r.code, 0, r.stderr.toString());
  return py;
}

/* POST one JSON-RPC message to url; the answer, or the error it met. */
async function post(url, msg, session) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) headers['mcp-session-id'] = session;
  try {
    return await request(url, { method: 'POST', headers, body: JSON.stringify(msg), timeoutMs: 10000 });
  } catch (e) {
    return { error: e };
  }
}

for (const mode of ['reset', 'end-stream']) {
  test(`mock --listen --fault dir=s2c close mode=${mode} of a notification before an answer: the POST is cut, the mock lives on`, { timeout: 60000 }, async () => {
    const db2 = join(t.dir, `stub-${mode}.db`);
    await stubSession(t.dir, db2);
    const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db2, 'stub', '--listen', '127.0.0.1:0', '--latency', 'none',
      '--fault', `dir=s2c method=notifications/message close mode=${mode}`], {
      pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --listen close',
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    });
    try {
      const url = `${p.match[1]}/mcp`;
      const init = await post(url, STUB_INIT);
      assert.equal(init.status, 200, String(init.error));
      const session = init.headers['mcp-session-id'];
      const cut = await post(url, STUB_CALL, session);
      if (mode === 'reset') {
        assert.ok(cut.error, `the connection is reset, got status ${cut.status}`);
      } else {
        assert.equal(cut.status, 200, String(cut.error));
        const body = cut.body.toString();
        assert.doesNotMatch(body, /"result"|notifications\/message/, 'no answer and no log on the cut stream: ' + body);
      }
      await new Promise((r) => setTimeout(r, 300));
      const again = await post(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, session);
      assert.equal(again.status, 200, 'the mock still serves: ' + String(again.error) + p.stderr());
      assert.equal(p.child.exitCode, null, 'the mock is still running');
    } finally {
      await stopChild(p.child, p.exited);
    }
    const err = p.stderr();
    assert.match(err, /fault #1, rule 1 `[^`]*`: s2c notifications\/message/);
    assert.doesNotMatch(err, SANITIZER);
  });
}

/*
 * mock --on-miss forward with the stub as fallback: lines sent on stdin,
 * stdin closed once the answers to ids came; the fallback session's
 * messages and faults.
 */
async function forwardRun(name, rules, lines, ids) {
  const db2 = join(t.dir, `fwd-${name}.db`);
  const py = await stubSession(t.dir, db2);
  let out = '';
  let child;
  const run = runMcpreel(['mock', '--db', db2, 'stub', '--latency', 'none', '--on-miss', 'forward',
    ...rules.flatMap((r) => ['--fault', r]), '--', 'python3', py], {
    input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 30000, keepStdinOpen: true,
    onSpawn: (c) => { child = c; c.stdout.on('data', (d) => { out += d; }); },
  });
  const answered = () => out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((m) => 'id' in m).map((m) => m.id);
  await until(() => JSON.stringify(answered()), () => ids.every((i) => answered().includes(i)), 10000, 'the answers');
  child.stdin.end();
  const r = await run;
  assert.equal(r.code, 0, r.stderr.toString());
  assert.doesNotMatch(r.stderr.toString(), SANITIZER);
  const s = sql(db2, `SELECT id FROM sessions WHERE name LIKE 'mock fallback of %' ORDER BY id DESC LIMIT 1`)[0].id;
  const msgs = sql(db2, `SELECT direction, fault, fault_role AS role, method, rpc_id AS id FROM messages WHERE session_id = ${s} AND (method IN ('tools/list', 'prompts/list') OR fault IS NOT NULL) ORDER BY seq`);
  return { msgs, faults: sql(db2, `SELECT n, action, direction FROM faults WHERE session_id = ${s} ORDER BY n`), out: answered() };
}

/* What check and mock keep of a session: all but a c2s original and a s2c injected message. */
function kept(msgs) {
  return msgs.filter((m) => !(m.direction === 'c2s' && m.role === 'original') && !(m.direction === 's2c' && m.role === 'injected'));
}

const FWD_LINES = [STUB_INIT, { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { jsonrpc: '2.0', id: 6, method: 'prompts/list' }];

test('mock --on-miss forward --fault delay both ways: the copies forwarded and answered are recorded once each, in the fallback\'s ids', { timeout: 60000 }, async () => {
  const r = await forwardRun('delay', ['dir=c2s method=tools/list delay ms=100', 'dir=s2c method=prompts/list delay ms=100'], FWD_LINES, [5, 6]);
  assert.deepEqual(r.faults, [{ n: 1, action: 'delay', direction: 'c2s' }, { n: 2, action: 'delay', direction: 's2c' }]);
  const k = kept(r.msgs);
  assert.equal(k.length, 4, JSON.stringify(r.msgs));
  for (const method of ['tools/list', 'prompts/list']) {
    const req = k.filter((m) => m.method === method && m.direction === 'c2s');
    const ans = k.filter((m) => m.method === method && m.direction === 's2c');
    assert.equal(req.length, 1, `${method} request once: ${JSON.stringify(r.msgs)}`);
    assert.equal(ans.length, 1, `${method} answer once: ${JSON.stringify(r.msgs)}`);
    assert.match(req[0].id, /^"mcpreel-fb-\d+"$/, 'the id the fallback got');
    assert.equal(ans[0].id, req[0].id, `${method}: the answer pairs with the request recorded`);
  }
  assert.deepEqual(k.find((m) => m.method === 'tools/list' && m.direction === 'c2s').role, 'delayed');
  assert.deepEqual(k.find((m) => m.method === 'prompts/list' && m.direction === 's2c').role, 'delayed');
});

test('mock --on-miss forward --fault mutate both ways: the original and the copy sent each once, with their roles, in one id space', { timeout: 60000 }, async () => {
  const r = await forwardRun('mutate', ['dir=c2s method=tools/list mutate set=$.x value=1', 'dir=s2c method=prompts/list mutate set=$.result.x value=1'], FWD_LINES, [5, 6]);
  assert.deepEqual(r.faults, [{ n: 1, action: 'mutate', direction: 'c2s' }, { n: 2, action: 'mutate', direction: 's2c' }]);
  const tl = r.msgs.filter((m) => m.method === 'tools/list');
  assert.deepEqual(tl.map((m) => [m.direction, m.fault, m.role]), [['c2s', 1, 'original'], ['c2s', 1, 'injected'], ['s2c', null, null]]);
  assert.equal(tl[2].id, tl[1].id, 'the answer pairs with the copy forwarded');
  const pl = r.msgs.filter((m) => m.direction === 's2c' && m.fault === 2);
  assert.deepEqual(pl.map((m) => m.role), ['original', 'injected'], JSON.stringify(r.msgs));
  assert.ok(pl.every((m) => /^"mcpreel-fb-\d+"$/.test(m.id)), 'the fallback\'s id: ' + JSON.stringify(pl));
  assert.equal(r.msgs.filter((m) => m.method === 'prompts/list' && m.direction === 's2c' && m.fault === null).length, 0, 'the original is not also recorded untouched');
  const k = kept(r.msgs);
  for (const m of k.filter((x) => x.direction === 's2c')) {
    assert.ok(k.some((q) => q.direction === 'c2s' && q.id === m.id), `answer ${m.id} pairs with a kept request: ${JSON.stringify(k)}`);
  }
});

test('mock --fault at stop: a message queued behind a delayed one still meets the rules', { timeout: 60000 }, async () => {
  const lines = [{ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stop', version: '1' } } },
    { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'ping' }];
  const r = await runMcpreel(['mock', '--db', db, 'sdk', '--latency', 'none', '--fault', 'dir=s2c method=tools/list delay ms=600000',
    '--fault', 'dir=s2c method=ping mutate set=$.result.x value=1'],
  { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 30000 });
  const err = r.stderr.toString();
  assert.equal(r.code, 0, err);
  assert.doesNotMatch(err, SANITIZER);
  const msgs = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((m) => 'id' in m);
  assert.deepEqual(msgs.map((m) => m.id), [0, 1, 2], 'every answer, in order');
  assert.deepEqual(msgs[2].result, { x: 1 }, 'the ping answer was mutated at stop');
  assert.match(err, /fault #2, rule 2 `[^`]*`: s2c /);
});

test('mock --listen --fault close of a client notification: its POST was answered, nothing else is cut, and the log says so', { timeout: 60000 }, async () => {
  const m = await mockHttp(['--fault', 'dir=c2s method=notifications/initialized close mode=reset']);
  try {
    await until(m.p.stderr, (x) => /fault #1: the message's POST was answered already: nothing is cut/.test(x), 5000, 'the log');
    assert.deepEqual(await m.client.ping(), {}, 'the mock still serves');
    await m.client.close();
  } finally {
    await m.stop();
  }
  assert.doesNotMatch(m.p.stderr(), SANITIZER);
});
