// Fault injection over stdio: `mcpreel record --fault RULE -- server`
// between the official TypeScript SDK client and server-everything.  Each
// test asserts on what the client sees and on what the database holds
// (faults rows; messages with fault and fault_role).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
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

// --- bounds and order with raw peers (sh, cat) rather than the SDK ---

/** VmRSS of a process in MiB. */
function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) / 1024;
}

/** Write buf to a child's stdin, waiting for it to drain. */
const writeAll = (child, buf) => new Promise((r) => (child.stdin.write(buf) ? r() : child.stdin.once('drain', r)));

test('huge ids and methods are not remembered: memory stays flat; the faults row leaves them out', { timeout: 120000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    let rss = 0;
    const big = 'm'.repeat(8 << 20);
    const r = await runMcpreel(['record', '--db', db, '--name', 'bigid', '--max-record-size', '1K',
      '--fault', 'method=zzz drop', '--fault', 'dir=s2c drop', '--', 'sh', '-c', 'cat >/dev/null'], {
      keepStdinOpen: true,
      timeoutMs: 100000,
      env: { ASAN_OPTIONS: 'detect_leaks=0:quarantine_size_mb=1' },
      onSpawn: async (child) => {
        for (let i = 0; i < 12; i++) {
          await writeAll(child, `{"jsonrpc":"2.0","id":"${big}","method":"${big}${i}"}\n`);
        }
        await writeAll(child, `{"jsonrpc":"2.0","id":"${big}","method":"zzz"}\n`);
        await sleep(1500);
        rss = rssMiB(child.pid);
        child.stdin.end();
      },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    // 12 x 16 MiB remembered would be over 190 MiB.
    assert.ok(rss < 150, `RSS after 200 MiB of ids and methods: ${rss} MiB`);
    const f = faults(db, 'bigid');
    assert.equal(f.length, 1);
    assert.equal(f[0].rpc_id, null, 'an id over 256 bytes is not in the faults row');
  }));

test('with rules, --max-record-size applies as without: a 10 KiB line is stored as 1 KiB with its size and SHA-256', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const line = `{"jsonrpc":"2.0","method":"n","params":{"x":"${'x'.repeat(10000)}"}}`;
    for (const [name, extra] of [['cap-plain', []], ['cap-fault', ['--fault', 'method=zzz drop']]]) {
      const r = await runMcpreel(['record', '--db', db, '--name', name, '--max-record-size', '1K', ...extra,
        '--', 'cat'], { input: `${line}\n` });
      assert.equal(r.code, 0, r.stderr.toString());
      assert.equal(r.stdout.toString(), `${line}\n`, `${name}: forwarded whole`);
      assert.match(r.stderr.toString(), /over the record size cap \(--max-record-size 1024\)/, name);
      const rows = sql(db, `SELECT size, wire_size, sha256, truncated FROM messages
        WHERE session_id = (SELECT id FROM sessions WHERE name = '${name}') ORDER BY seq`);
      assert.equal(rows.length, 2, name);
      for (const m of rows) {
        assert.equal(m.size, 1024, name);
        assert.equal(m.wire_size, line.length, name);
        assert.match(m.sha256, /^[0-9a-f]{64}$/, name);
      }
    }
  }));

test('injected answers to a host that does not read: its requests stop being read (bounded), as a slow host pauses the plain relay', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const msg = 'e'.repeat(4000);
    let accepted = 0;
    let rss = 0;
    const r = await runMcpreel(['record', '--db', db, '--name', 'slowhost', '--fault', `error message="${msg}"`,
      '--', 'sleep', '30'], {
      keepStdinOpen: true,
      timeoutMs: 50000,
      env: { ASAN_OPTIONS: 'detect_leaks=0:quarantine_size_mb=1' },
      onSpawn: async (child) => {
        // stdout is never read: node stops taking it after 64 KiB.
        child.stdout.pause();
        const req = (i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}\n`;
        const t0 = Date.now();
        let i = 0;
        while (Date.now() - t0 < 6000) {
          let chunk = '';
          for (let k = 0; k < 200; k++) chunk += req(i++);
          const ok = child.stdin.write(chunk);
          if (!ok) {
            const drained = await Promise.race([new Promise((res) => child.stdin.once('drain', () => res(true))),
              sleep(6000 - (Date.now() - t0)).then(() => false)]);
            if (!drained) break;
          } else await sleep(0);
          accepted = i;
        }
        rss = rssMiB(child.pid);
        child.kill('SIGKILL');
      },
    });
    assert.equal(r.signal, 'SIGKILL');
    // 4 MiB of 4 KiB answers is ~1000 requests; the pipe and buffers add ~3000.
    assert.ok(accepted < 8000, `requests taken while the host read nothing: ${accepted}, RSS ${rss} MiB`);
  }));

test('with rules, a partial last line gets the same note as without', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    for (const [name, extra] of [['part-plain', []], ['part-fault', ['--fault', 'method=q drop']]]) {
      const r = await runMcpreel(['record', '--db', db, '--name', name, ...extra, '--', 'cat'],
        { input: '{"jsonrpc":"2.0","method":"a"}\n{"partial' });
      assert.equal(r.code, 0, r.stderr.toString());
      assert.equal(r.stdout.toString(), '{"jsonrpc":"2.0","method":"a"}\n{"partial');
      const notes = sql(db, `SELECT CAST(text AS TEXT) AS t FROM events WHERE kind = 'note'
        AND session_id = (SELECT id FROM sessions WHERE name = '${name}')`).map((x) => x.t)
        .filter((t) => /ended with 9 bytes after the last newline/.test(t));
      assert.equal(notes.length, 2, `${name}: host and server each: ${notes}`);
    }
  }));

test('a delay past the server\'s exit: the host still gets the held lines, in order, recorded as delivered', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const a = '{"jsonrpc":"2.0","method":"a"}';
    const b = '{"jsonrpc":"2.0","method":"b"}';
    const t0 = Date.now();
    const r = await runMcpreel(['record', '--db', db, '--name', 'late', '--fault', 'dir=s2c method=a delay ms=11000',
      '--', 'sh', '-c', `printf '%s\\n%s\\n' '${a}' '${b}'`], { keepStdinOpen: true, timeoutMs: 40000 });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), `${a}\n${b}\n`, 'both reached the host');
    assert.ok(Date.now() - t0 >= 10500, 'after the delay');
    const rows = messages(db, 'late');
    assert.deepEqual(rows.map((x) => [x.method, x.fault, x.fault_role]), [['a', 1, 'delayed'], ['b', null, null]]);
  }));

test('the record keeps the sender\'s order: a delayed request, then one answered with an error', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const r = await runMcpreel(['record', '--db', db, '--name', 'order', '--fault', 'method=a delay ms=1000',
      '--fault', 'method=b error', '--', 'cat'], {
      keepStdinOpen: true,
      onSpawn: async (child) => {
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n');
        await sleep(2000);
        child.stdin.end();
      },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    const rows = messages(db, 'order').filter((x) => x.direction === 'c2s');
    assert.deepEqual(rows.map((x) => [x.method, x.fault, x.fault_role]), [['a', 1, 'delayed'], ['b', 2, 'original']]);
    // The host got the error first: b was answered at once.
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(out.map((m) => m.id), [2, 1]);
    assert.equal(out[0].error.code, -32603);
  }));

test('lines a delay still holds for a server that exited are recorded as not delivered (original)', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const r = await runMcpreel(['record', '--db', db, '--name', 'lost', '--fault', 'method=a delay ms=5000',
      '--', 'sh', '-c', 'sleep 1'], {
      keepStdinOpen: true,
      onSpawn: (child) => child.stdin.write('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n'),
    });
    const rows = messages(db, 'lost');
    assert.deepEqual(rows.map((x) => [x.method, x.fault, x.fault_role]), [['a', 1, 'original'], ['b', null, 'original']]);
    assert.match(r.stderr.toString(), /held back by faults and never delivered: 2/);
  }));

test('corrupt: a selector holding the text "mode=stray" does not make the mode stray', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const line = '{"jsonrpc":"2.0","method":"mode=stray"}';
    const r = await runMcpreel(['record', '--db', db, '--name', 'notstray', '--fault', 'dir=s2c method=mode=stray corrupt',
      '--', 'cat'], { input: `${line}\n` });
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n');
    assert.equal(out.length, 1, `one line back: ${out}`);
    assert.ok(!out.includes(line), 'the original did not go through');
    const rows = messages(db, 'notstray').filter((x) => x.direction === 's2c');
    assert.deepEqual(rows.map((x) => x.fault_role), ['original', 'injected']);
  }));

test('--faults naming a FIFO with no writer: refused at once, not a hang', { timeout: 30000 }, () =>
  withCleanup(async ({ dir }) => {
    const fifo = join(dir, 'rules.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await runMcpreel(['record', '--db', join(dir, 'f.db'), '--faults', fifo, '--', 'true'], { timeoutMs: 8000 });
    assert.equal(r.code, 2, r.stderr.toString());
    assert.match(r.stderr.toString(), /not a regular file/);
  }));

test('a timed-out request\'s answer stays swallowed after a reload whose rules select it otherwise', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ rules: [{ action: 'timeout', method: 'x', ms: 100000 }] }));
    // Answers each request 3 s after it came.
    const server = `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
      const m = JSON.parse(l); setTimeout(() => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n'), 3000); });`;
    const r = await runMcpreel(['record', '--db', db, '--name', 'tohup', '--faults', file, '--', process.execPath, '-e', server], {
      keepStdinOpen: true,
      onSpawn: async (child) => {
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"x"}\n');
        // Late enough for the handler to be set up, under ASan too.
        await sleep(1500);
        writeFileSync(file, JSON.stringify({ rules: [{ action: 'delay', dir: 's2c', ms: 10 }] }));
        child.kill('SIGHUP');
        await sleep(3000);
        child.stdin.end();
      },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), '', 'the host never got the answer');
    assert.equal((r.stderr.toString().match(/fault rules reloaded/g) || []).length, 1, 'logged once');
    const rows = messages(db, 'tohup');
    assert.deepEqual(rows.map((x) => [x.direction, x.fault, x.fault_role]), [['c2s', 1, null], ['s2c', 1, 'original']]);
  }));

test('close on a server line: what it printed after, in the same read, reaches nobody and is recorded as such', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const a = '{"jsonrpc":"2.0","method":"a"}';
    const b = '{"jsonrpc":"2.0","method":"b"}';
    for (const mode of ['pipes', 'kill']) {
      const name = `close-rest-${mode}`;
      const r = await runMcpreel(['record', '--db', db, '--name', name, '--fault', `dir=s2c method=a close mode=${mode}`,
        '--', 'sh', '-c', `printf '%s\\n%s\\n{"partial' '${a}' '${b}'; sleep 5`], { keepStdinOpen: true, timeoutMs: 20000 });
      assert.equal(r.stdout.toString(), '', `${mode}: nothing reached the host`);
      const rows = messages(db, name);
      assert.deepEqual(rows.map((x) => [x.method, x.fault, x.fault_role]),
        [['a', 1, 'original'], ['b', 1, 'original'], [null, 1, 'original']], mode);
    }
  }));

test('a server that exits while a delay has its stdout paused: its last lines are still read, delivered and recorded', { timeout: 90000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    // Past the 4 MiB a direction may hold, then a tail that fits in the
    // pipe, written while reading is paused, then exit.
    const server = `import sys, time
w = sys.stdout.write
w('{"jsonrpc":"2.0","method":"first"}\\n')
pad = 'x' * 1000
for i in range(4000):
    w('{"jsonrpc":"2.0","method":"n","params":{"i":%d,"p":"%s"}}\\n' % (i, pad))
sys.stdout.flush()
time.sleep(1)
for i in range(20):
    w('{"jsonrpc":"2.0","method":"tail","params":{"i":%d}}\\n' % i)
sys.stdout.flush()
`;
    const r = await runMcpreel(['record', '--db', db, '--name', 'pausedexit', '--fault', 'dir=s2c method=first delay ms=13000',
      '--', 'python3', '-c', server], { keepStdinOpen: true, timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n');
    assert.equal(out.length, 4021, `lines the host got; stderr: ${r.stderr}`);
    assert.equal(out.filter((l) => l.includes('"tail"')).length, 20);
    assert.doesNotMatch(r.stderr.toString(), /a child of it|gave up/);
    const n = sql(db, `SELECT COUNT(*) AS n FROM messages WHERE session_id = (SELECT id FROM sessions WHERE name = 'pausedexit')`)[0].n;
    assert.equal(n, 4021);
  }));

test('after a close fault, what the server printed after the closing line is recorded behind it, in the sender\'s order', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const [a, c, b] = ['a', 'c', 'b'].map((m) => `{"jsonrpc":"2.0","method":"${m}"}`);
    const r = await runMcpreel(['record', '--db', db, '--name', 'closeorder', '--fault', 'dir=s2c method=a delay ms=2000',
      '--fault', 'dir=s2c method=c close', '--', 'sh', '-c', `printf '%s\\n%s\\n%s\\n{"partial' '${a}' '${c}' '${b}'; sleep 5`],
    { keepStdinOpen: true, timeoutMs: 30000 });
    assert.equal(r.stdout.toString(), `${a}\n`, 'the delayed line still reached the host');
    const rows = messages(db, 'closeorder');
    assert.deepEqual(rows.map((x) => [x.method, x.fault, x.fault_role]),
      [['a', 1, 'delayed'], ['c', 2, 'original'], ['b', 2, 'original'], [null, 2, 'original']]);
  }));

test('after a close fault, a host line over 64 MiB does not stream: recorded under the close, not delivered', { timeout: 90000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const r = await runMcpreel(['record', '--db', db, '--name', 'closebig', '--fault', 'dir=c2s method=x close',
      '--', 'sh', '-c', 'sleep 6'], {
      keepStdinOpen: true,
      timeoutMs: 60000,
      onSpawn: async (child) => {
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"x"}\n');
        await sleep(300);
        const chunk = Buffer.alloc(1 << 20, 'y');
        for (let i = 0; i < 70; i++) {
          if (!child.stdin.write(chunk)) await new Promise((res) => child.stdin.once('drain', res));
        }
        child.stdin.end('\n');
      },
    });
    assert.doesNotMatch(r.stderr.toString(), /forwarded as it comes/);
    const rows = sql(db, `SELECT direction, fault, fault_role, size FROM messages
      WHERE session_id = (SELECT id FROM sessions WHERE name = 'closebig') ORDER BY seq`);
    assert.deepEqual(rows.map((x) => [x.direction, x.fault, x.fault_role]), [['c2s', 1, 'original'], ['c2s', 1, 'original']]);
    assert.equal(rows[1].size, 70 << 20);
  }));

test('bytes injected for the server and never delivered are recorded as original, not injected', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    // The host's n is held 5 s; m's corrupt bytes queue behind it, and the
    // server exits first.
    const r = await runMcpreel(['record', '--db', db, '--name', 'undeliv', '--fault', 'dir=c2s method=n delay ms=5000',
      '--fault', 'dir=c2s method=m corrupt', '--', 'sh', '-c', 'sleep 1'], {
      keepStdinOpen: true,
      onSpawn: (child) => child.stdin.write('{"jsonrpc":"2.0","method":"n"}\n{"jsonrpc":"2.0","method":"m"}\n'),
    });
    const rows = messages(db, 'undeliv').filter((x) => x.direction === 'c2s');
    assert.deepEqual(rows.map((x) => [x.fault, x.fault_role]), [[1, 'original'], [2, 'original'], [2, 'original']]);
    assert.deepEqual(rows.slice(0, 2).map((x) => x.method), ['n', 'm']);
    assert.match(r.stderr.toString(), /held back by faults and never delivered: 2/);
  }));

test('a swallowed timed-out answer is not counted by nth= of a rule reloaded since', { timeout: 60000 }, () =>
  withCleanup(async ({ dir }) => {
    const db = join(dir, 'f.db');
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ rules: [{ action: 'timeout', method: 'x', ms: 100000 }] }));
    // Answers each request 2 s after it came.
    const server = `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
      const m = JSON.parse(l); setTimeout(() => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n'), 2000); });`;
    const r = await runMcpreel(['record', '--db', db, '--name', 'tonth', '--faults', file, '--', process.execPath, '-e', server], {
      keepStdinOpen: true,
      onSpawn: async (child) => {
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"x"}\n');
        await sleep(1000);
        writeFileSync(file, JSON.stringify({ rules: [{ action: 'drop', dir: 's2c', nth: 2 }] }));
        child.kill('SIGHUP');
        await sleep(2000);
        child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"y"}\n');
        await sleep(500);
        child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"z"}\n');
        await sleep(3000);
        child.stdin.end();
      },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    const ids = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l).id);
    assert.deepEqual(ids, [2], 'x swallowed, y delivered (the 1st s2c the rule counts), z dropped (the 2nd)');
  }));
