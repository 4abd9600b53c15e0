// The files mcpreel creates and the processes it leaves behind, tried as a
// hostile neighbour and a careless user would: a symlink planted at the
// reserve's predictable name, a database created readable by everyone, a
// recorder killed with SIGKILL (what `sessions` says of it, and the server
// that ignores SIGTERM it leaves).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';

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

// Running: it exists and is not a zombie (a killed process stays one
// until whoever inherited it reaps it).
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Start a command with stdin open; returns {child, exited, stderr()}. */
function start(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
  const err = [];
  child.stderr.on('data', (c) => err.push(c));
  child.stdout.on('data', () => {});
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => Buffer.concat(err).toString() };
}

// A server that ignores SIGTERM (inherited through exec) and writes its pid.
const stubborn = (pidFile) => ['sh', '-c', `trap '' TERM; echo $$ > ${pidFile}; exec sleep 600`];

test('a symlink planted at the reserve name is not followed: its target survives', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'r.db');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    // The shell plants the link at <db>-reserve.<its pid>, then becomes
    // mcpreel (exec keeps the pid), as a neighbour guessing the pid would.
    const run = start('sh', ['-c', `ln -s ${victim} ${db}-reserve.$$ && exec ${MCPREEL} record --db ${db} -- cat`]);
    run.child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    const { code } = await run.exited;
    assert.equal(code, 0, run.stderr());
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the symlink target is untouched');
    assert.equal(statSync(victim).size, 9);
    assert.equal(sql(db, 'SELECT count(*) AS n FROM messages')[0].n, 2, 'recorded all the same');
  });
});

test('a dangling symlink at a new database path is refused, not written through', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'd.db');
    const target = join(dir, 'elsewhere.db');
    symlinkSync(target, db);
    const r = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr.toString(), /cannot create database .*symlink or a file appeared/);
    assert.ok(!existsSync(target), 'nothing was created through the link');
  });
});

test('a database readable by others is made 0600 (db, -wal, -shm) with a warning', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'open.db');
    writeFileSync(db, '');
    chmodSync(db, 0o666);
    const run = start(MCPREEL, ['record', '--db', db, '--', 'cat']);
    defer(async () => { run.child.kill('SIGKILL'); });
    run.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.ok(await until(() => existsSync(`${db}-wal`) && existsSync(`${db}-shm`), 10000), 'WAL files exist');
    const modes = [db, `${db}-wal`, `${db}-shm`].map((f) => (statSync(f).mode & 0o777).toString(8));
    run.child.stdin.end();
    const { code } = await run.exited;
    assert.equal(code, 0);
    assert.deepEqual(modes, ['600', '600', '600']);
    assert.match(run.stderr(), /open\.db was readable by other users \(mode 0666\): set to 0600$/m);
    // Fixed once: the next run says nothing.
    const again = await runMcpreel(['sessions', '--db', db]);
    assert.doesNotMatch(again.stderr.toString(), /readable by other users/);
    // A WAL left readable (an older mcpreel, a copy) is fixed too, by
    // the next command that writes.
    writeFileSync(`${db}-wal`, '');
    chmodSync(`${db}-wal`, 0o644);
    const third = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.match(third.stderr.toString(), /open\.db-wal was readable by other users \(mode 0644\): set to 0600$/m);
  });
});

test('read-only commands change no mode: a database shared with a group stays so, one every user can read is warned about', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'shared.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(rec.code, 0, rec.stderr.toString());
    chmodSync(db, 0o640);
    for (const args of [['sessions'], ['show', '1'], ['stats'], ['export', '1']]) {
      const r = await runMcpreel([...args, '--db', db]);
      assert.equal(r.code, 0, `${args[0]}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr.toString(), /readable/, args[0]);
      assert.equal((statSync(db).mode & 0o777).toString(8), '640', `${args[0]} left the mode alone`);
    }
    chmodSync(db, 0o644);
    const r = await runMcpreel(['sessions', '--db', db]);
    assert.match(r.stderr.toString(), /shared\.db is readable by every user \(mode 0644\): run chmod 600 on it$/m);
    assert.equal((statSync(db).mode & 0o777).toString(8), '644', 'warned, not changed');
    // A command that records into it makes it private.
    const w = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.match(w.stderr.toString(), /shared\.db was readable by other users \(mode 0644\): set to 0600$/m);
    assert.equal((statSync(db).mode & 0o777).toString(8), '600');
  });
});

test('a symlink planted at <db>-wal: its target keeps its mode', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'w.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(rec.code, 0, rec.stderr.toString());
    assert.ok(!existsSync(`${db}-wal`), 'no WAL left after a clean close');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, '');
    chmodSync(victim, 0o644);
    symlinkSync(victim, `${db}-wal`);
    await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal((statSync(victim).mode & 0o777).toString(8), '644', 'the target of the link was not chmod-ed');
  });
});

test('a live process that only has the recorder\'s pid (it started after the session) is not its recorder', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'reuse.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(rec.code, 0, rec.stderr.toString());
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    defer(async () => { other.kill('SIGKILL'); });
    await sleep(100);
    assert.ok(alive(other.pid));
    const now = BigInt(Date.now()) * 1000000n;
    const hourAgo = now - 3600n * 1000000000n;
    // Sessions an hour old whose recorder pid is now that of the sleep:
    // one never ended (its recorder was killed), one ended early (stdio);
    // and one that started after the sleep: the sleep could be its recorder.
    sql(db, `INSERT INTO sessions (name, transport, target, started_ns, ended_ns, recorder_pid) VALUES
      ('killed', 'stdio', '["cat"]', ${hourAgo}, NULL, ${other.pid}),
      ('ended', 'stdio', '["cat"]', ${hourAgo}, ${hourAgo + 1000000000n}, ${other.pid}),
      ('fresh', 'stdio', '["cat"]', ${now + 1000000000n}, NULL, ${other.pid})`);
    const states = Object.fromEntries((await runMcpreel(['sessions', '--db', db, '--json'])).stdout.toString()
      .trim().split('\n').map((l) => JSON.parse(l)).map((j) => [j.name ?? j.id, j.state]));
    assert.equal(states.killed, 'recorder gone');
    assert.equal(states.fresh, 'open');
    for (const name of ['ended', 'killed']) {
      const t0 = performance.now();
      const f = await runMcpreel(['show', '--db', db, '--follow', name], { timeoutMs: 15000 }).catch((e) => ({ code: String(e) }));
      assert.equal(f.code, 0, `show --follow ${name} exits (${Math.round(performance.now() - t0)} ms)`);
    }
    const pr = await runMcpreel(['prune', '--db', db, '--keep', '0']);
    assert.equal(pr.code, 0, pr.stderr.toString());
    assert.match(pr.stdout.toString(), /^keeping session 4: it is being recorded/m);
    assert.deepEqual(sql(db, 'SELECT name FROM sessions').map((r) => r.name), ['fresh'], 'the others were deleted');
  });
});

test('a readable database owned by another user: a warning that says what to do, its mode left alone', { timeout: 30000, skip: process.getuid() !== 0 && 'needs root to chown' }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'theirs.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(rec.code, 0);
    chmodSync(db, 0o644);
    chownSync(db, 65534, 65534);
    const r = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stderr.toString(), /theirs\.db is readable by other users \(mode 0644\) and not ours to change: ask its owner to run chmod 600 on it$/m);
    assert.equal((statSync(db).mode & 0o777).toString(8), '644');
    const v = await runMcpreel(['sessions', '--db', db]);
    assert.equal(v.code, 0, v.stderr.toString());
    assert.match(v.stderr.toString(), /theirs\.db is readable by every user \(mode 0644\): ask its owner to run chmod 600 on it$/m);
  });
});

test('kill -9 of the recorder: sessions, stats and show say "recorder gone"', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'k.db');
    const run = start(MCPREEL, ['record', '--db', db, '--', 'cat']);
    run.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.ok(await until(() => sql(db, 'SELECT count(*) AS n FROM messages')[0].n === 2, 10000));
    const live = JSON.parse((await runMcpreel(['sessions', '--db', db, '--json'])).stdout.toString());
    run.child.kill('SIGKILL');
    await run.exited;
    assert.equal(live.state, 'open', 'open while the recorder ran');
    const text = (await runMcpreel(['sessions', '--db', db])).stdout.toString();
    assert.match(text, /recorder gone/, text);
    const js = JSON.parse((await runMcpreel(['sessions', '--db', db, '--json'])).stdout.toString());
    assert.equal(js.state, 'recorder gone');
    assert.equal(js.ended_ns, null);
    const show = (await runMcpreel(['show', '--db', db, '1'])).stdout.toString();
    assert.match(show, /not ended: recorder gone/, show);
    const stats = JSON.parse((await runMcpreel(['stats', '--db', db, '--json'])).stdout.toString());
    assert.equal(stats.sessions[0].state, 'recorder gone');
  });
});

test('kill -9 of the recorder takes a server that ignores SIGTERM with it', { timeout: 30000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'p.db');
    const pidFile = join(dir, 'server.pid');
    const run = start(MCPREEL, ['record', '--db', db, '--', ...stubborn(pidFile)]);
    assert.ok(await until(() => readFileSync(pidFile, 'utf8').trim() !== '', 10000), 'server started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(alive(pid));
    const t0 = performance.now();
    run.child.kill('SIGKILL');
    await run.exited;
    const gone = await until(() => !alive(pid), 5000);
    if (!gone) process.kill(pid, 'SIGKILL');
    t.diagnostic(`server gone ${Math.round(performance.now() - t0)} ms after the kill`);
    assert.ok(gone, `server ${pid} outlived mcpreel`);
  });
});

test('kill -9 of replay takes its stdio target with it', { timeout: 30000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'rp.db');
    const rec = await runMcpreel(['record', '--db', db, '--', 'cat'], { input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' });
    assert.equal(rec.code, 0);
    const pidFile = join(dir, 'target.pid');
    const run = start(MCPREEL, ['replay', '--db', db, '1', '--', ...stubborn(pidFile)]);
    assert.ok(await until(() => readFileSync(pidFile, 'utf8').trim() !== '', 10000), 'target started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    run.child.kill('SIGKILL');
    await run.exited;
    const gone = await until(() => !alive(pid), 5000);
    if (!gone) process.kill(pid, 'SIGKILL');
    assert.ok(gone, `target ${pid} outlived mcpreel replay`);
  });
});
