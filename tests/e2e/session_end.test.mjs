// A session is ended in the record on every way out that leaves time to
// write a row, before mcpreel waits on a grandchild holding the server's
// pipes: the host closing stdin, SIGTERM, SIGINT, and the official
// SDK's close() (stdin end, SIGTERM after 2 s, SIGKILL after 2 s more) of
// a server wrapper that ignores SIGTERM and leaves a grandchild behind, as
// `npx -y ...` does.  SIGHUP (a reload, mostly) ends nothing, and a session
// ended early whose recorder still runs is not pruned under it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';
import { CLIENT_INFO, serverEverythingEntry } from './lib/session.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(cond, ms, step = 20) {
  const t0 = performance.now();
  const holds = () => { try { return cond(); } catch { return false; } };
  while (performance.now() - t0 < ms) {
    if (holds()) return true;
    await sleep(step);
  }
  return holds();
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}

const session = (db) => sql(db, 'SELECT ended_ns, started_ns, end_reason, exit_status, exit_signal FROM sessions')[0];

test('the SDK closes an npx-like wrapper that ignores SIGTERM and leaves a grandchild: the session is ended', { timeout: 60000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'sdk.db');
    const pidFile = join(dir, 'grandchild.pid');
    // The wrapper (the direct child) ignores SIGTERM and waits for its
    // children; its grandchild holds stdout and stderr for a minute.
    const wrapper = `trap '' TERM; (trap '' TERM; echo $$ > ${pidFile}; exec sleep 60) & `
      + `"${process.execPath}" "${serverEverythingEntry()}" stdio; wait`;
    const transport = new StdioClientTransport({
      command: MCPREEL,
      args: ['record', '--db', db, '--', 'sh', '-c', wrapper],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c) => { stderr += c; });
    const client = new Client(CLIENT_INFO);
    await client.connect(transport);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((x) => x.name === 'echo'));
    const mcpreelPid = transport.pid;
    const t0 = performance.now();
    await client.close();
    t.diagnostic(`close() took ${Math.round(performance.now() - t0)} ms`);
    assert.ok(await until(() => !alive(mcpreelPid), 10000), 'mcpreel is gone after close()');
    const gpid = Number((await import('node:fs')).readFileSync(pidFile, 'utf8'));
    defer(async () => { try { process.kill(gpid, 'SIGKILL'); } catch { /* gone */ } });

    const s = session(db);
    t.diagnostic(`session: ${JSON.stringify(s)}; stderr: ${stderr.split('\n').slice(-4).join(' | ')}`);
    assert.notEqual(s.ended_ns, null, 'the session has an end');
    assert.ok(s.ended_ns >= s.started_ns);
    assert.ok(s.end_reason, 'and a reason');
    const list = sql(db, 'SELECT count(*) AS n FROM messages')[0].n;
    assert.ok(list >= 4, `the exchange is recorded (${list} messages)`);
  });
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  test(`${sig} to mcpreel, then SIGKILL 1 s later: the session is ended with the signal as its reason`, { timeout: 30000 }, async () => {
    await withCleanup(async ({ dir }) => {
      const db = join(dir, `${sig}.db`);
      // The server ignores every one of these and holds on.
      const child = spawn(MCPREEL, ['record', '--db', db, '--', 'sh', '-c', "trap '' TERM INT HUP; exec sleep 60"], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const exited = new Promise((resolve) => child.on('close', resolve));
      child.stdout.resume();
      child.stderr.resume();
      assert.ok(await until(() => session(db) !== undefined, 10000), 'the session row is there');
      await sleep(200);
      assert.equal(session(db).ended_ns, null, 'open while it runs');
      child.kill(sig);
      await sleep(1000);
      child.kill('SIGKILL');
      await exited;
      const s = session(db);
      assert.notEqual(s.ended_ns, null, 'ended');
      assert.match(s.end_reason, /mcpreel got .*: passed on to the server/);
    });
  });
}

test('the host closes stdin and the server holds on: ended (with the reason) before the stop sequence runs out', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'eof.db');
    const child = spawn(MCPREEL, ['record', '--db', db, '--', 'sh', '-c', "trap '' TERM; sleep 60 < /dev/null; :"], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    child.stdout.resume();
    child.stderr.resume();
    assert.ok(await until(() => session(db) !== undefined, 10000));
    child.stdin.end();
    // The stop sequence takes 4 s (2 s, SIGTERM ignored, 2 s, SIGKILL);
    // the end is in the record long before.
    assert.ok(await until(() => session(db).ended_ns !== null, 1500), 'ended within 1.5 s of the host closing');
    assert.equal(session(db).end_reason, 'host closed the connection');
    await exited;
    const s = session(db);
    assert.equal(s.exit_signal, 9, 'the exit status is added once the server is reaped');
  });
});

test('show --follow of a stdio session ended early still prints what the server says after, then exits', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'follow.db');
    const late = '{"jsonrpc":"2.0","method":"notifications/late"}';
    const child = spawn(MCPREEL, ['record', '--db', db, '--', 'sh', '-c', `cat > /dev/null; sleep 1; echo '${late}'`], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    child.stdout.resume();
    child.stderr.resume();
    assert.ok(await until(() => session(db) !== undefined, 10000));
    const follow = spawn(MCPREEL, ['show', '--db', db, '--follow', '--json', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    follow.stdout.on('data', (c) => { out += c; });
    follow.stderr.resume();
    const followed = new Promise((resolve) => follow.on('close', resolve));
    await sleep(300);
    child.stdin.end();
    assert.ok(await until(() => session(db).ended_ns !== null, 1500), 'ended at once');
    await exited;
    const code = await Promise.race([followed, sleep(10000).then(() => 'still running')]);
    if (code === 'still running') follow.kill('SIGKILL');
    assert.equal(code, 0, 'show --follow exits once the recorder has');
    assert.match(out, /notifications\/late/, 'the line the server wrote after the end was written');
  });
});

// An echo server over stdio that survives SIGHUP and, with 'TERM', SIGTERM
// too (a reload, a graceful stop it does not take), and writes its pid.
const survivor = (pidFile, sigs) => [process.execPath, '-e',
  `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));` +
  `for (const s of ${JSON.stringify(sigs)}) process.on(s, () => {});` +
  'process.stdin.pipe(process.stdout);'];

const ping = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`;
const count = (db) => sql(db, 'SELECT count(*) AS n FROM messages')[0].n;

test('SIGHUP to mcpreel, the server reloads and carries on: not ended, not pruned, every later message recorded', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'hup.db');
    const pidFile = join(dir, 'server.pid');
    const child = spawn(MCPREEL, ['record', '--db', db, '--', ...survivor(pidFile, ['SIGHUP'])], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    defer(async () => { child.kill('SIGKILL'); });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.resume();
    assert.ok(await until(() => session(db) !== undefined && alive(Number(readFileSync(pidFile, 'utf8'))), 10000), 'running');
    child.stdin.write(ping(1));
    assert.ok(await until(() => count(db) === 2, 10000), 'the first exchange is recorded');
    child.kill('SIGHUP');
    await sleep(1000);
    assert.equal(session(db).ended_ns, null, 'not ended by SIGHUP');
    const list = await runMcpreel(['sessions', '--db', db, '--json']);
    assert.equal(JSON.parse(list.stdout.toString().trim()).state, 'open');
    // The server answers on; prune without --force keeps the session.
    child.stdin.write(ping(2));
    assert.ok(await until(() => out.includes('"id":2'), 10000), 'the server still answers');
    const pr = await runMcpreel(['prune', '--db', db, '--keep', '0']);
    assert.equal(pr.code, 0, pr.stderr.toString());
    assert.match(pr.stdout.toString(), /^keeping session 1: it is being recorded/m);
    child.stdin.write(ping(3));
    child.stdin.end();
    await exited;
    const s = session(db);
    assert.notEqual(s.ended_ns, null, 'ended when the host closed');
    assert.equal(s.end_reason, 'host closed the connection');
    assert.equal(count(db), 6, 'every message is recorded');
  });
});

test('SIGTERM the server does not take: ended early, yet not pruned while the recorder runs (however long ago that end was), and ended again when it really ends', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'term.db');
    const pidFile = join(dir, 'server.pid');
    const child = spawn(MCPREEL, ['record', '--db', db, '--', ...survivor(pidFile, ['SIGTERM'])], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    defer(async () => { child.kill('SIGKILL'); });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.resume();
    assert.ok(await until(() => session(db) !== undefined && alive(Number(readFileSync(pidFile, 'utf8'))), 10000), 'running');
    child.kill('SIGTERM');
    assert.ok(await until(() => session(db).ended_ns !== null, 5000), 'ended at once on SIGTERM');
    // As if that end had been written an hour ago.
    const hour = 3600n * 1000000000n;
    const r = spawnSync('sqlite3', [db, `UPDATE sessions SET ended_ns = ended_ns - ${hour}`]);
    assert.equal(r.status, 0, r.stderr?.toString());
    const early = BigInt(sql(db, 'SELECT CAST(ended_ns AS TEXT) AS e FROM sessions')[0].e);
    child.stdin.write(ping(1));
    assert.ok(await until(() => out.includes('"id":1'), 10000), 'the server still answers');
    const pr = await runMcpreel(['prune', '--db', db, '--keep', '0']);
    assert.equal(pr.code, 0, pr.stderr.toString());
    assert.match(pr.stdout.toString(), /^keeping session 1: it is being recorded/m);
    const rm = await runMcpreel(['rm', '--db', db, '1']);
    assert.equal(rm.code, 1, 'rm refuses it');
    child.stdin.write(ping(2));
    child.stdin.end();
    await exited;
    const s = sql(db, 'SELECT CAST(ended_ns AS TEXT) AS e, end_reason FROM sessions')[0];
    assert.ok(BigInt(s.e) > early + hour / 2n, 'the end written when it really ended replaces the early one');
    assert.equal(count(db), 4, 'every message is recorded');
  });
});
