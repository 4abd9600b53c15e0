// Fault injection over stdio: `mcpreel record --fault RULE -- server`
// between the official TypeScript SDK client and server-everything.  Each
// test asserts on what the client sees and on what the database holds
// (faults rows; messages with fault and fault_role).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CLIENT_INFO, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Connect the SDK client to server-everything through `mcpreel record`
 * with the given fault options.  Returns {client, transport, stderr(),
 * errors, closed}: errors collects the client's onerror, closed resolves
 * when its transport closes.
 */
async function connect(db, name, faultArgs) {
  const { command, args } = serverEverythingCommand();
  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['record', '--db', db, '--name', name, '-v', ...faultArgs, '--', command, ...args],
    stderr: 'pipe',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  const err = [];
  transport.stderr?.on('data', (c) => err.push(c));
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const errors = [];
  let onClosed;
  const closed = new Promise((r) => { onClosed = r; });
  client.onerror = (e) => errors.push(e);
  client.onclose = () => onClosed();
  await client.connect(transport);
  return { client, transport, errors, closed, stderr: () => Buffer.concat(err).toString() };
}

/** The session's messages as rows, in order. */
function messages(db, name) {
  return sql(db, `SELECT seq, direction, kind, method, fault, fault_role, CAST(raw AS TEXT) AS raw
    FROM messages WHERE session_id = (SELECT id FROM sessions WHERE name = '${name}') ORDER BY seq`);
}

/** The session's faults rows, in order. */
function faults(db, name) {
  return sql(db, `SELECT n, rule_index, rule, action, direction, method, rpc_id, detail
    FROM faults WHERE session_id = (SELECT id FROM sessions WHERE name = '${name}') ORDER BY n`);
}

const echo = (client, message, opts) =>
  client.callTool({ name: 'echo', arguments: { message } }, undefined, opts);

test('delay past the client timeout: RequestTimeout, and the cancel is recorded behind it', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'delay', ['--fault', 'tool=echo delay ms=1500']);
    const t0 = Date.now();
    await assert.rejects(echo(c.client, 'slow', { timeout: 300 }), (e) => e.code === -32001,
      'the client reports a request timeout');
    assert.ok(Date.now() - t0 < 1400, 'the client gave up before the delay ended');
    await sleep(2000);
    // Other calls go on: the delay was of that message only.
    const ok = await c.client.listTools();
    assert.ok(ok.tools.length > 0);
    await c.client.close();
    const rows = messages(db, 'delay');
    const call = rows.find((r) => r.method === 'tools/call' && r.direction === 'c2s');
    assert.equal(call.fault_role, 'delayed');
    assert.equal(call.fault, 1);
    const cancel = rows.find((r) => r.method === 'notifications/cancelled');
    assert.ok(cancel, 'the client\'s notifications/cancelled is recorded');
    assert.ok(cancel.seq > call.seq, 'and it went out behind the delayed request');
    const f = faults(db, 'delay');
    assert.equal(f.length, 1);
    assert.equal(f[0].action, 'delay');
    assert.equal(f[0].direction, 'c2s');
    assert.equal(f[0].method, 'tools/call');
    assert.match(c.stderr(), /fault #1 \(rule 1\)/, 'a log line at -v');
    assert.match(c.stderr(), /seed \d+/, 'the seed is printed');
  }));

test('error: the promise rejects with that code and message; the server never sees it', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'error', ['--fault', 'tool=echo error code=-32050 message="tool is down"']);
    await assert.rejects(echo(c.client, 'x'), (e) => e.code === -32050 && /tool is down/.test(e.message));
    const sum = await c.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    assert.match(sum.content[0].text, /3/, 'another tool is untouched');
    await c.client.close();
    const rows = messages(db, 'error');
    const orig = rows.filter((r) => r.fault === 1);
    assert.deepEqual(orig.map((r) => [r.direction, r.kind, r.fault_role]),
      [['c2s', 'request', 'original'], ['s2c', 'error', 'injected']]);
    assert.equal(JSON.parse(orig[1].raw).error.code, -32050);
    assert.equal(JSON.parse(orig[1].raw).id, JSON.parse(orig[0].raw).id);
    assert.equal(faults(db, 'error')[0].action, 'error');
    // No answer from the server to that request: it never got it.
    const id = JSON.parse(orig[0].raw).id;
    assert.equal(rows.filter((r) => r.direction === 's2c' && r.fault === null &&
      JSON.parse(r.raw).id === id && r.kind !== 'request').length, 0);
  }));

test('tool-error: the client gets a result with isError true', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'toolerr', ['--fault', 'tool=echo tool-error text=boom']);
    const res = await echo(c.client, 'x');
    assert.equal(res.isError, true);
    assert.equal(res.content[0].text, 'boom');
    await c.client.close();
    const rows = messages(db, 'toolerr').filter((r) => r.fault === 1);
    assert.deepEqual(rows.map((r) => r.fault_role), ['original', 'injected']);
  }));

test('drop of a notification (progress #2) and of a response (the client times out)', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'drop', ['--fault', 'method=notifications/progress nth=2 drop',
      '--fault', 'dir=s2c tool=echo drop']);
    const seen = [];
    const res = await c.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.8, steps: 4 } },
      undefined, { onprogress: (p) => seen.push(p.progress) });
    assert.match(res.content[0].text, /completed/);
    assert.ok(seen.includes(1), 'progress 1 arrived');
    assert.ok(!seen.includes(2), 'progress 2 was dropped');
    await assert.rejects(echo(c.client, 'lost', { timeout: 700 }), (e) => e.code === -32001);
    await sleep(200);
    await c.client.close();
    const rows = messages(db, 'drop');
    const dropped = rows.filter((r) => r.fault_role === 'original');
    assert.equal(dropped.length, 2);
    assert.equal(JSON.parse(dropped[0].raw).params.progress, 2);
    assert.equal(dropped[1].direction, 's2c');
    assert.equal(dropped[1].kind, 'response');
    assert.ok(rows.some((r) => r.method === 'notifications/cancelled'), 'the cancel is recorded');
    assert.deepEqual(faults(db, 'drop').map((f) => [f.rule_index, f.action]), [[1, 'drop'], [2, 'drop']]);
  }));

test('timeout: the server gets the request, its answer is held past the deadline and dropped', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'timeout', ['--fault', 'tool=echo timeout ms=300']);
    await assert.rejects(echo(c.client, 'late', { timeout: 1000 }), (e) => e.code === -32001);
    assert.equal((await echo(c.client, 'again', { timeout: 1000 }).catch((e) => e)).code, -32001,
      'every echo answer is held');
    const sum = await c.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    assert.match(sum.content[0].text, /3/);
    await c.client.close();
    const rows = messages(db, 'timeout').filter((r) => r.fault === 1);
    assert.deepEqual(rows.map((r) => [r.direction, r.kind, r.fault_role]),
      [['c2s', 'request', null], ['s2c', 'response', 'original']]);
    assert.equal(JSON.parse(rows[1].raw).result.content[0].text, 'Echo: late', 'the server did answer');
    assert.deepEqual(faults(db, 'timeout').map((f) => f.action), ['timeout', 'timeout']);
  }));

test('corrupt: the SDK transport reports a parse error; original and sent both recorded', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'corrupt', ['--fault', 'dir=s2c tool=echo corrupt']);
    await assert.rejects(echo(c.client, 'x', { timeout: 700 }), (e) => e.code === -32001);
    assert.ok(c.errors.some((e) => e instanceof SyntaxError || /JSON/i.test(String(e?.message))),
      `a parse error was reported: ${c.errors.map(String).join('; ')}`);
    await c.client.close();
    const rows = messages(db, 'corrupt').filter((r) => r.fault === 1);
    assert.deepEqual(rows.map((r) => [r.direction, r.fault_role]), [['s2c', 'original'], ['s2c', 'injected']]);
    assert.equal(JSON.parse(rows[0].raw).result.content[0].text, 'Echo: x');
    assert.throws(() => JSON.parse(rows[1].raw), 'what was sent is not JSON');

    // mode=stray: a line of garbage before the answer, which still comes.
    const s = await connect(db, 'stray', ['--fault', 'dir=s2c tool=echo corrupt mode=stray']);
    const res = await echo(s.client, 'y');
    assert.equal(res.content[0].text, 'Echo: y');
    assert.ok(s.errors.length > 0, 'the stray line was reported');
    await s.client.close();
    const st = messages(db, 'stray').filter((r) => r.fault === 1);
    assert.deepEqual(st.map((r) => [r.direction, r.kind, r.fault_role]),
      [['s2c', 'invalid', 'injected'], ['s2c', 'response', null]]);
  }));

test('close after the 3rd call: the transport closes, the session says a fault did it', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    for (const [name, mode] of [['close-pipes', 'pipes'], ['close-kill', 'kill']]) {
      const c = await connect(db, name, ['--fault', `dir=c2s method=tools/call nth=3 close mode=${mode}`]);
      await echo(c.client, '1');
      await echo(c.client, '2');
      const third = echo(c.client, '3', { timeout: 10000 }).then(() => 'answered', (e) => e);
      await Promise.race([c.closed, sleep(10000).then(() => { throw new Error(`${mode}: no onclose`); })]);
      const r = await third;
      assert.notEqual(r, 'answered');
      const s = sql(db, `SELECT end_reason, exit_signal FROM sessions WHERE name = '${name}'`)[0];
      assert.match(s.end_reason, /fault #1 \(rule 1\)/, `${mode}: ${s.end_reason}`);
      if (mode === 'kill') assert.equal(s.exit_signal, 9);
      const f = faults(db, name);
      assert.equal(f[0].action, 'close');
      await c.client.close().catch(() => {});
    }
  }));

test('mutate tools/list: the client sees the changed description', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const c = await connect(db, 'mutate', ['--fault',
      `method=tools/list dir=s2c mutate set=$.result.tools[0].description value='"changed by mcpreel"'`]);
    const { tools } = await c.client.listTools();
    assert.equal(tools[0].description, 'changed by mcpreel');
    await c.client.close();
    const rows = messages(db, 'mutate').filter((r) => r.fault === 1);
    assert.deepEqual(rows.map((r) => r.fault_role), ['original', 'injected']);
    assert.notEqual(JSON.parse(rows[0].raw).result.tools[0].description, 'changed by mcpreel');
  }));

test('p=0.3 --seed 7 over 1000 echo calls: the same calls faulted twice, about 300', { timeout: 300000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const runs = [];
    for (const name of ['p1', 'p2']) {
      const c = await connect(db, name, ['--fault', 'tool=echo p=0.3 error', '--seed', '7']);
      const hit = [];
      for (let i = 0; i < 1000; i++) {
        try {
          await echo(c.client, `m${i}`);
        } catch (e) {
          assert.equal(e.code, -32603);
          hit.push(i);
        }
      }
      await c.client.close();
      runs.push(hit);
      assert.equal(faults(db, name).length, hit.length, 'one faults row per faulted call');
      const note = sql(db, `SELECT CAST(text AS TEXT) AS t FROM events WHERE kind = 'note'
        AND session_id = (SELECT id FROM sessions WHERE name = '${name}')`).map((r) => r.t);
      assert.ok(note.includes('fault rules: 1; seed 7'), `the seed is recorded: ${note}`);
    }
    assert.deepEqual(runs[0], runs[1], 'the same seed faults the same calls');
    assert.ok(Math.abs(runs[0].length - 300) <= 60, `about 30%: ${runs[0].length}`);
  }));

test('--faults FILE and SIGHUP: the rules change mid-session; a bad file keeps them', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ rules: [{ action: 'tool-error', tool: 'nothing-has-this-name' }] }));
    const c = await connect(db, 'hup', ['--faults', file]);
    assert.notEqual((await echo(c.client, 'a')).isError, true);
    writeFileSync(file, JSON.stringify({ rules: [{ action: 'tool-error', tool: 'echo', text: 'reloaded' }] }));
    process.kill(c.transport.pid, 'SIGHUP');
    let res;
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      res = await echo(c.client, 'b');
      if (res.isError) break;
    }
    assert.equal(res.isError, true, 'the new rule applies');
    assert.equal(res.content[0].text, 'reloaded');
    writeFileSync(file, '{"rules": [{"action": "no-such-action"}]}');
    process.kill(c.transport.pid, 'SIGHUP');
    await sleep(500);
    res = await echo(c.client, 'c');
    assert.equal(res.content[0].text, 'reloaded', 'a bad file keeps the old rules');
    assert.match(c.stderr(), /not reloaded/);
    await c.client.close();
    // The server never got SIGHUP (node would have died of it).
    const s = sql(db, `SELECT exit_signal FROM sessions WHERE name = 'hup'`)[0];
    assert.notEqual(s.exit_signal, 1);
  }));

test('a bad rule: exit 2 with the parser\'s message, nothing spawned', { timeout: 30000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const marker = join(dir, 'spawned');
    for (const [rule, why] of [['tool=echo explode', /unknown action or selector `explode`/],
      ['http-status status=404', /http-status works over HTTP only/],
      ['close mode=reset', /mode=reset works over HTTP only/],
      ['dir=s2c error', /error cannot select dir=s2c/],
      ['tool=echo delay ms=-5', /ms/]]) {
      const r = await runMcpreel(['record', '--db', db, '--fault', rule, '--', 'sh', '-c', `touch ${marker}`]);
      assert.equal(r.code, 2, `${rule}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /^mcpreel record: fault rule (1 )?`[^`]+`: .+/m, `${rule}: ${r.stderr}`);
      assert.match(r.stderr.toString(), why, `${rule}: ${r.stderr}`);
      assert.ok(!existsSync(marker), 'the server was not spawned');
    }
    assert.ok(!existsSync(db), 'nothing was recorded');
  }));
