// mock --cassette FILE --record-mode none|once|new_episodes|all, with
// server-everything (counted by peers/countpeer.mjs) as the server and the
// SDK client: the files each mode writes, and the requests that reached
// the server.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { startServerEverything } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, tempDir } from './lib/util.mjs';

// A small deterministic client session: the handshake, tools/list, two
// calls; `more` adds a call with progress (the "client change").
async function clientRun(args, { more = false } = {}) {
  const transport = new StdioClientTransport({
    command: MCPREEL, args, stderr: 'pipe',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  let stderr = '';
  transport.stderr?.on('data', (c) => { stderr += c; });
  const client = new Client({ name: 'modes-client', version: '1.0.0' }, { capabilities: {} });
  const out = {};
  try {
    await client.connect(transport);
    const pid = transport.pid;
    // server-everything says tools/list_changed as it handles
    // notifications/initialized: let it come before the next request, so
    // the recorded order does not depend on a race.
    await sleep(300);
    out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
    out.echo = await client.callTool({ name: 'echo', arguments: { message: 'hello cassette' } });
    out.sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    if (more) {
      out.progress = 0;
      out.lro = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
        undefined, { onprogress: () => { out.progress += 1; } });
    }
    await client.close();
    // The cassette is written when mock ends: wait for it to have.
    for (let i = 0; i < 200; i++) {
      try { process.kill(pid, 0); } catch { break; }
      await sleep(50);
    }
  } catch (e) {
    e.message += `\nmcpreel stderr: ${stderr}`;
    throw e;
  }
  out.stderr = stderr;
  assert.doesNotMatch(stderr, /Sanitizer|runtime error/, 'mcpreel mock ran clean');
  return out;
}

function serverLog(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function requestsAt(log) {
  return log.filter((r) => r.method !== undefined && r.id !== undefined).map((r) => (r.name ? `${r.method} ${r.name}` : r.method));
}

function lines(buf) {
  return buf.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

const RESULT_KEYS = ['tools', 'echo', 'sum', 'progress', 'lro'];
function results(r) {
  return Object.fromEntries(RESULT_KEYS.filter((k) => k in r).map((k) => [k, r[k]]));
}

test('record modes: once, none, all, new_episodes write what they say and reach the server as they say', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const cas = join(t.dir, 'fixture.jsonl');
    const log = join(t.dir, 'server.log');
    const server = ['--', process.execPath, join(PEERS_DIR, 'countpeer.mjs'), log];
    const mode = (m) => ['mock', '--cassette', cas, '--record-mode', m, '--latency', 'none'];
    const full = ['initialize', 'tools/list', 'tools/call echo', 'tools/call get-sum'];

    // once, no file: everything goes to the server and is recorded.
    const live = await clientRun([...mode('once'), ...server]);
    assert.deepEqual(requestsAt(serverLog(log)), full, 'once without the file: every request reached the server');
    assert.ok(existsSync(cas), 'the cassette was written');
    const first = readFileSync(cas);
    assert.equal(statSync(cas).mode & 0o777, 0o600, 'private');
    const recs = lines(first);
    assert.equal(recs[0].format, 'mcpreel-jsonl');
    const msgs = recs.filter((r) => r.type === 'message');
    assert.deepEqual(msgs.map((m) => m.seq), msgs.map((_, i) => i + 1), 'seq from 1');
    for (const m of msgs) {
      assert.doesNotMatch(JSON.stringify(m.message ?? m.raw), /mcpreel-fb-/, 'the client\'s ids, not the fallback\'s');
    }
    const c2s = msgs.filter((m) => m.direction === 'c2s' && m.message.id !== undefined);
    assert.deepEqual(c2s.map((m) => m.message.method), ['initialize', 'tools/list', 'tools/call', 'tools/call']);
    const answers = msgs.filter((m) => m.direction === 's2c' && m.message.id !== undefined && m.message.method === undefined);
    assert.deepEqual(answers.map((m) => m.message.id), c2s.map((m) => m.message.id), 'each answer under the client\'s id');
    assert.ok(!recs.some((r) => r.type === 'event'), 'no fallback stderr events');

    // It imports cleanly.
    const imp = await runMcpreel(['import', '--db', join(t.dir, 'i.db'), cas]);
    assert.equal(imp.code, 0, imp.stderr.toString());

    // once, with the file: none; nothing reaches the server, nothing written.
    const before = serverLog(log).length;
    const mtime = statSync(cas).mtimeMs;
    await sleep(20);
    const again = await clientRun([...mode('once'), ...server]);
    assert.deepEqual(results(again), results(live), 'once with the file: answered from it');
    assert.equal(serverLog(log).length, before, 'once with the file: no message reached the server');
    assert.ok(readFileSync(cas).equals(first), 'file untouched');
    assert.equal(statSync(cas).mtimeMs, mtime, 'not even rewritten');

    // none, the server given: it is not started.
    const none = await clientRun([...mode('none'), ...server]);
    assert.deepEqual(results(none), results(live));
    assert.equal(serverLog(log).length, before, 'none: no message reached the server');
    assert.equal(statSync(cas).mtimeMs, mtime);

    // all: everything forwarded again; an unchanged session, the same bytes.
    const all = await clientRun([...mode('all'), ...server]);
    assert.deepEqual(results(all), results(live));
    assert.deepEqual(requestsAt(serverLog(log).slice(before)), full, 'all: every request reached the server');
    assert.equal(readFileSync(cas).toString(), first.toString(), 'all, unchanged: the same bytes');

    // new_episodes after a client change: the one new exchange appended.
    const mark = serverLog(log).length;
    const grown = await clientRun([...mode('new_episodes'), ...server], { more: true });
    // Live, the SDK may lose the last progress callback (it and the
    // answer can come in one read); the cassette has both (below).
    assert.ok(grown.progress >= 1, 'the live progress reached the client');
    assert.deepEqual(requestsAt(serverLog(log).slice(mark)), ['initialize', 'tools/call trigger-long-running-operation'],
      'new_episodes: the server saw the handshake and the one new call');
    const appended = readFileSync(cas);
    assert.ok(appended.subarray(0, first.length).equals(first), 'the old bytes untouched');
    const added = lines(appended.subarray(first.length));
    assert.deepEqual(added.map((r) => r.type), ['message', 'message', 'message', 'message'], `request, 2 progress, answer: ${JSON.stringify(added)}`);
    assert.deepEqual(added.map((r) => r.direction), ['c2s', 's2c', 's2c', 's2c']);
    assert.equal(added[0].message.params.name, 'trigger-long-running-operation');
    assert.deepEqual(added.slice(1, 3).map((r) => r.message.method), ['notifications/progress', 'notifications/progress']);
    assert.equal(added[3].message.id, added[0].message.id, 'the answer under the client\'s id');
    assert.deepEqual(added.map((r) => r.seq), [1, 2, 3, 4].map((i) => msgs.length + i), 'seq numbered on');
    assert.equal(added[3].reply_to, added[0].seq, 'reply_to consistent');

    // Read back, it exports to the same bytes (seq, reply_to as import
    // works them out), and mocks the grown session with no server.
    const exp = await runMcpreel(['export', cas]);
    assert.equal(exp.code, 0, exp.stderr.toString());
    assert.equal(exp.stdout.toString(), appended.toString(), 'export of the grown cassette: its bytes');
    const mark2 = serverLog(log).length;
    // (The recorded pacing: all at once, the SDK loses progress callbacks.)
    const replayed = await clientRun(['mock', '--cassette', cas, '--record-mode', 'none'], { more: true });
    assert.equal(replayed.progress, 2, 'the recorded progress played');
    assert.deepEqual({ ...results(replayed), progress: 0 }, { ...results(grown), progress: 0 },
      'the grown cassette answers the changed client');
    assert.equal(serverLog(log).length, mark2);

    // new_episodes again: nothing missed, nothing written.
    const mtime2 = statSync(cas).mtimeMs;
    await clientRun([...mode('new_episodes'), ...server], { more: true });
    assert.deepEqual(requestsAt(serverLog(log).slice(mark2)), ['initialize'], 'only the handshake mock passes on');
    assert.ok(readFileSync(cas).equals(appended), 'nothing appended');
    assert.equal(statSync(cas).mtimeMs, mtime2, 'not rewritten');
  } finally {
    t.cleanup();
  }
});

test('record modes: the options that do not go together are refused, saying why', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const cas = join(t.dir, 'c.jsonl');
    const cases = [
      [['mock', '--record-mode', 'all', '--', 'true'], /--record-mode goes with --cassette FILE/],
      [['mock', '--cassette', cas, '--record-mode', 'all'], /records from a live server: give it with --fallback URL or -- CMD/],
      [['mock', '--cassette', cas, '--record-mode', 'new_episodes'], /records from a live server/],
      [['mock', '--cassette', cas, '--record-mode', 'once'], /records from a live server/],
      [['mock', '--cassette', cas, '--record-mode', 'none'], /is not there: record it with --record-mode once/],
      [['mock', '--cassette', cas, '--record-mode', 'all', '--on-miss', 'forward', '--', 'true'], /leave out --on-miss/],
      [['mock', '--cassette', cas, '--record-mode', 'sometimes'], /takes none, once, new_episodes or all/],
      [['mock', '--cassette', cas, '--db', join(t.dir, 'x.db'), '--', 'true'], /leave out --db/],
      [['mock', '--cassette', cas, '--record-mode', 'all', '--fault', 'method=tools/call drop', '--', 'true'], /--fault would put the injected faults in the cassette/],
    ];
    for (const [args, re] of cases) {
      const r = await runMcpreel(args, { input: Buffer.alloc(0) });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.toString(), re, args.join(' '));
      assert.ok(!existsSync(cas), 'no cassette written');
    }
  } finally {
    t.cleanup();
  }
});

test('record modes: --cassette - is refused, nothing goes to stdout and no file named - is made', { timeout: 60000 }, () => {
  const t = tempDir();
  try {
    for (const m of ['all', 'new_episodes', 'once']) {
      const r = spawnSync(MCPREEL, ['mock', '--cassette', '-', '--record-mode', m, '--', 'cat'], {
        cwd: t.dir, input: Buffer.alloc(0), timeout: 30000,
        env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      });
      assert.equal(r.status, 2, `${m}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /--cassette -: a cassette is written to a file, not to standard output/, m);
      assert.equal(r.stdout.length, 0, `${m}: stdout is the MCP channel: ${r.stdout}`);
      assert.ok(!existsSync(join(t.dir, '-')), `${m}: no file named -`);
    }
  } finally {
    t.cleanup();
  }
});

test('record modes: all re-records a changed answer as that one line; a server that fails leaves the cassette as it was', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const cas = join(t.dir, 'fixture.jsonl');
    const log = join(t.dir, 'server.log');
    const server = ['--', process.execPath, join(PEERS_DIR, 'countpeer.mjs'), log];
    const mode = (m) => ['mock', '--cassette', cas, '--record-mode', m, '--latency', 'none'];
    await clientRun([...mode('all'), ...server]);
    const first = readFileSync(cas).toString();

    // The same server, one answer changed (server v2).
    const changed = ['--', process.execPath, join(PEERS_DIR, 'mutate.mjs'), 'is 5.', 'is 6.', '--',
      process.execPath, join(PEERS_DIR, 'countpeer.mjs'), log];
    const v2 = await clientRun([...mode('all'), ...changed]);
    assert.equal(v2.sum.content[0].text, 'The sum of 2 and 3 is 6.');
    const a = first.split('\n');
    const b = readFileSync(cas).toString().split('\n');
    assert.equal(b.length, a.length, 'as many lines');
    const differ = a.map((l, i) => i).filter((i) => a[i] !== b[i]);
    // The header (its target is another command now) and the answer.
    assert.deepEqual(differ.length, 2, `two lines differ: ${differ.map((i) => b[i]).join('\n')}`);
    assert.equal(differ[0], 0);
    const [oldHead, newHead] = [JSON.parse(a[0]), JSON.parse(b[0])];
    assert.match(newHead.target, /mutate\.mjs/);
    const vol = { started_ns: 0, ended_ns: 0, recorder_pid: 0 };
    assert.deepEqual({ ...newHead, target: oldHead.target, ...vol }, { ...oldHead, ...vol },
      'the header differs in its target alone');
    const line = JSON.parse(b[differ[1]]);
    assert.equal(line.message.result.content[0].text, 'The sum of 2 and 3 is 6.');
    // Its times moved onto the old file's clock: its request's (an old
    // line) is a moment before it, not a run before.
    const req = JSON.parse(b.find((l) => l.includes(`"seq":${line.reply_to},`)));
    const gap = line.mono_ns - req.mono_ns;
    assert.ok(gap >= 0 && gap < 5e9, `the recorded gap kept: ${gap} ns`);
    assert.ok(line.ts_ns - req.ts_ns >= 0 && line.ts_ns - req.ts_ns < 5e9);

    // A server that dies at once: all does not wipe the cassette.
    const now = readFileSync(cas);
    const dead = await runMcpreel([...mode('all'), '--', process.execPath, '-e', 'process.exit(3)'],
      { input: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n') });
    assert.equal(dead.code, 1, dead.stderr.toString());
    assert.match(dead.stderr.toString(), /left as it was/);
    assert.doesNotMatch(dead.stderr.toString(), /Sanitizer|runtime error/);
    assert.ok(readFileSync(cas).equals(now), 'the cassette as it was');
  } finally {
    t.cleanup();
  }
});

test('record modes with a Streamable HTTP server (--fallback URL): once records through it, then answers with it gone', { timeout: 120000 }, async () => {
  const t = tempDir();
  const srv = await startServerEverything('streamableHttp');
  try {
    const cas = join(t.dir, 'http.jsonl');
    const args = ['mock', '--cassette', cas, '--record-mode', 'once', '--latency', 'none', '--fallback', srv.url];
    const live = await clientRun(args, { more: true });
    assert.equal(live.sum.content[0].text, 'The sum of 2 and 3 is 5.');
    const recs = lines(readFileSync(cas));
    assert.equal(recs[0].transport, 'stdio', 'the client\'s transport');
    const c2s = recs.filter((r) => r.direction === 'c2s' && r.message.id !== undefined);
    assert.deepEqual(c2s.map((m) => m.message.method), ['initialize', 'tools/list', 'tools/call', 'tools/call', 'tools/call']);
    assert.equal(recs.filter((r) => r.message?.method === 'notifications/progress').length, 2, 'the progress recorded');
    await srv.stop();
    const offline = await clientRun(['mock', '--cassette', cas, '--record-mode', 'once', '--fallback', srv.url], { more: true });
    // (Live, the SDK may lose the last progress callback: it and the
    // answer can come in one read; the cassette has both.)
    assert.equal(offline.progress, 2);
    delete offline.progress;
    delete live.progress;
    assert.deepEqual(results(offline), results(live), 'the server gone: answered from the cassette');
  } finally {
    await srv.stop().catch(() => {});
    t.cleanup();
  }
});

// A raw JSON-RPC client of mcpreel over stdio: send lines when it likes,
// wait for answers, close when it likes.  (Those still running when a
// test fails are killed: kids.)
const kids = new Set();
const killKids = () => { for (const k of kids) k.kill('SIGKILL'); };
function rawClient(args) {
  const child = spawn(MCPREEL, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
  kids.add(child);
  child.on('close', () => kids.delete(child));
  const got = [];
  let buf = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      got.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  child.stderr.on('data', (c) => { stderr += c; });
  child.stdin.on('error', () => {});
  const done = new Promise((res) => child.on('close', (code, signal) => res({ code, signal, stderr })));
  return {
    child, got, done,
    get stderr() { return stderr; },
    send: (m) => child.stdin.write(JSON.stringify(m) + '\n'),
    async answer(id, ms = 20000) {
      for (let t = 0; t < ms; t += 20) {
        const a = got.find((m) => m.id === id && m.method === undefined);
        if (a) return a;
        await sleep(20);
      }
      throw new Error(`no answer to ${id}; stderr: ${stderr}`);
    },
    end: () => child.stdin.end(),
  };
}

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const INITED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const SLOW = ['--', process.execPath, join(PEERS_DIR, 'slowpeer.mjs')];

async function handshake(c) {
  c.send(INIT);
  await c.answer(0);
  c.send(INITED);
}

test('record modes: an exchange goes in once answered: a forward that fails is left out (exit 1); the same id twice in flight pairs right; appended times follow the file', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const cas = join(t.dir, 'c.jsonl');
    const mode = (m) => ['mock', '--cassette', cas, '--record-mode', m, '--latency', 'none', ...SLOW];
    // all: the client reuses id 5 while the first is in flight; the
    // second is answered first.
    let c = rawClient(mode('all'));
    await handshake(c);
    c.send(call(5, 'slow', { secs: 1, tag: 'first' }));
    await sleep(100);
    c.send(call(5, 'slow', { secs: 0.1, tag: 'second' }));
    for (let i = 0; i < 300 && c.got.filter((m) => m.id === 5).length < 2; i++) await sleep(20);
    c.end();
    let r = await c.done;
    assert.equal(r.code, 0, r.stderr);
    let recs = lines(readFileSync(cas));
    for (const tag of ['first', 'second']) {
      const req = recs.find((x) => x.message?.params?.arguments?.tag === tag);
      const ans = recs.find((x) => x.message?.result?.content?.[0]?.text === tag);
      assert.equal(ans.reply_to, req.seq, `the answer "${tag}" paired with its own request`);
    }
    // And mock plays it so: each request gets its own answer.
    c = rawClient(['mock', '--cassette', cas, '--record-mode', 'none', '--latency', 'none']);
    await handshake(c);
    c.send(call(7, 'slow', { secs: 1, tag: 'first' }));
    assert.equal((await c.answer(7)).result.content[0].text, 'first');
    c.send(call(8, 'slow', { secs: 0.1, tag: 'second' }));
    assert.equal((await c.answer(8)).result.content[0].text, 'second');
    c.end();
    assert.equal((await c.done).code, 0);

    // new_episodes a while later: one new call answered, one never; the
    // client closes with it in flight.
    const before = readFileSync(cas);
    await sleep(2500);
    c = rawClient(mode('new_episodes'));
    await handshake(c);
    c.send(call(9, 'never', {}));
    c.send(call(10, 'slow', { secs: 0.1, tag: 'new' }));
    await c.answer(10);
    c.end();
    r = await c.done;
    assert.equal(r.code, 1, 'a forward that failed: exit 1');
    assert.match(r.stderr, /1 forwarded request got no answer from the server \(left out of the cassette\)/);
    const after = readFileSync(cas);
    assert.ok(after.subarray(0, before.length).equals(before), 'the old bytes kept');
    const added = lines(after.subarray(before.length));
    assert.deepEqual(added.map((x) => x.message.params?.name ?? x.message.result?.content?.[0]?.text), ['slow', 'new'],
      'the answered exchange alone appended');
    assert.equal(added[0].seq, recs.at(-1).seq + 1);
    assert.equal(added[1].reply_to, added[0].seq);
    // Its times follow the old file's last line, not the 2.5 s between.
    const gap = added[0].mono_ns - recs.at(-1).mono_ns;
    assert.ok(gap >= 0 && gap <= 1e9, `appended mono_ns follows the file: ${gap} ns`);
    const wgap = added[0].ts_ns - recs.at(-1).ts_ns;
    assert.ok(wgap >= 0 && wgap <= 1e9, `appended ts_ns follows the file: ${wgap} ns`);
    // Again: the failed call is missed again, and nothing piles up.
    c = rawClient(mode('new_episodes'));
    await handshake(c);
    c.send(call(9, 'never', {}));
    await sleep(300);
    c.end();
    r = await c.done;
    assert.equal(r.code, 1);
    assert.ok(readFileSync(cas).equals(after), 'nothing appended by a run whose forward failed');
    const imp = await runMcpreel(['import', cas, '--db', join(t.dir, 'i.db')]);
    assert.equal(imp.code, 0, imp.stderr.toString());
  } finally {
    killKids();
    t.cleanup();
  }
});

test('record modes: FILE checked before serving: a directory not there, a file that is not a cassette; its mode kept, a symlink followed', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const log = join(t.dir, 'server.log');
    const counted = ['--', process.execPath, join(PEERS_DIR, 'countpeer.mjs'), log];
    const nodir = join(t.dir, 'nodir', 'c.jsonl');
    let r = await runMcpreel(['mock', '--cassette', nodir, '--record-mode', 'once', ...counted], { input: Buffer.alloc(0) });
    assert.equal(r.code, 2, r.stderr.toString());
    assert.match(r.stderr.toString(), /cannot create a file beside .*nodir/);
    assert.ok(!existsSync(log), 'the server was not started');

    const py = join(t.dir, 't.py');
    writeFileSync(py, 'print(1)\n');
    r = await runMcpreel(['mock', '--cassette', py, '--record-mode', 'all', ...counted], { input: Buffer.alloc(0) });
    assert.equal(r.code, 2, r.stderr.toString());
    assert.match(r.stderr.toString(), /is there and is not a cassette \(its first line is not a mcpreel-jsonl header\): not replacing it \(rm /);
    assert.equal(readFileSync(py, 'utf8'), 'print(1)\n');
    assert.ok(!existsSync(log), 'the server was not started');

    // A new file: 0600; a fixture there at 0644 stays 0644, through a
    // symlink that stays a symlink.
    const cas = join(t.dir, 'real.jsonl');
    const input = Buffer.from(JSON.stringify(INIT) + '\n');
    r = await runMcpreel(['mock', '--cassette', cas, '--record-mode', 'all', ...SLOW], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(statSync(cas).mode & 0o777, 0o600);
    chmodSync(cas, 0o644);
    const link = join(t.dir, 'link.jsonl');
    symlinkSync(cas, link);
    const old = readFileSync(cas);
    r = await runMcpreel(['mock', '--cassette', link, '--record-mode', 'all', '--', process.execPath,
      join(PEERS_DIR, 'mutate.mjs'), 'slowpeer', 'slowpeer2', '--', ...SLOW.slice(1)], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link kept');
    assert.ok(!readFileSync(cas).equals(old), 'its target rewritten');
    assert.match(readFileSync(cas, 'utf8'), /slowpeer2/);
    assert.equal(statSync(cas).mode & 0o777, 0o644, 'its mode kept');
    assert.deepEqual(readdirSync(t.dir).filter((f) => /\.jsonl\./.test(f)), [], 'no temporary file left');
  } finally {
    t.cleanup();
  }
});

test('record modes: a stop signal while the cassette is written waits for it', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const cas = join(t.dir, 'big.jsonl');
    // A large old cassette makes the rewrite take a while.
    const head = { format: 'mcpreel-jsonl', version: 1, session: 1, name: 'big.jsonl', started_ns: 1, ended_ns: 2 };
    const body = [];
    for (let i = 1; i <= 150000; i++) {
      body.push(JSON.stringify({ type: 'message', seq: i, direction: 'c2s', ts_ns: i, mono_ns: i, kind: 'notification', method: 'notifications/x', reply_to: null, message: { jsonrpc: '2.0', method: 'notifications/x', params: { i } } }));
    }
    writeFileSync(cas, JSON.stringify(head) + '\n' + body.join('\n') + '\n');
    const c = rawClient(['mock', '--cassette', cas, '--record-mode', 'all', '--latency', 'none', ...SLOW]);
    await handshake(c);
    c.end();
    // mock logs its summary when it stops serving, then writes the file.
    for (let i = 0; i < 1000 && !/mock: answered/.test(c.stderr); i++) await sleep(10);
    assert.match(c.stderr, /mock: answered/);
    c.child.kill('SIGTERM');
    await sleep(50);
    c.child.kill('SIGINT');
    const r = await c.done;
    assert.equal(r.signal, null, `not killed by the signal: ${r.stderr}`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /messages recorded \(rewritten\)/);
    assert.equal(lines(readFileSync(cas)).length, 4, 'the new recording written whole');
    assert.deepEqual(readdirSync(t.dir).filter((f) => f !== 'big.jsonl'), [], 'no temporary file left');
  } finally {
    killKids();
    t.cleanup();
  }
});
