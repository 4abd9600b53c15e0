// A session is ended in the record on every way out that leaves time to
// write a row, before mcpreel waits on a grandchild holding the server's
// pipes: the host closing stdin, SIGTERM, SIGINT, SIGHUP, and the official
// SDK's close() (stdin end, SIGTERM after 2 s, SIGKILL after 2 s more) of
// a server wrapper that ignores SIGTERM and leaves a grandchild behind, as
// `npx -y ...` does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPREEL, sql, withCleanup } from './lib/util.mjs';
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

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
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
