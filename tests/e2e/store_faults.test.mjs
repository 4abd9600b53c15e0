// What happens to the record when things go wrong around the database
// (issue 7): mcpreel killed with SIGKILL (with and without --durable), a
// full disk, a file system made read-only mid-run, a database another
// process holds locked, and readers and a second recorder on the same file.
// The server is `cat`: every line the host sends comes back, so the host
// knows when a line has been forwarded both ways.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// make soak: traffic runs ten times longer before each kill.
const SOAK = process.env.MCPREEL_SOAK === '1' ? 10 : 1;

function line(id, pad = 0) {
  return `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"pad":"${'x'.repeat(pad)}"}}\n`;
}

/**
 * Start `mcpreel record ... -- cat` with stdin open.  Lines that come back
 * are parsed for their id; echoed.get(id) is when (performance.now()) it
 * arrived.  Returns helpers to write, end and wait for the exit.
 */
function startRecord(args, env = {}) {
  const child = spawn(MCPREEL, ['record', ...args, '--', 'cat'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env },
  });
  const echoed = new Map();
  const err = [];
  let rest = '';
  let bytesBack = 0;
  let lastBack = 0;
  child.stdout.on('data', (c) => {
    const now = performance.now();
    lastBack = now;
    bytesBack += c.length;
    const text = rest + c.toString('latin1');
    const parts = text.split('\n');
    rest = parts.pop();
    for (const p of parts) {
      const m = /"id":(\d+)/.exec(p);
      if (m) echoed.set(Number(m[1]), now);
    }
  });
  child.stderr.on('data', (c) => err.push(c));
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    echoed,
    stderr: () => Buffer.concat(err).toString(),
    bytesBack: () => bytesBack,
    // When (performance.now()) the last bytes came back.
    lastBack: () => lastBack,
    // Resolves when the pipe takes more, or when mcpreel is gone.
    write: (s) => (child.stdin.write(s) ? Promise.resolve()
      : Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited])),
    end: () => child.stdin.end(),
    exited,
  };
}

/**
 * Wait until cond() holds, up to ms; returns whether it did.  A cond that
 * throws (the database has no tables yet) has not held.
 */
async function until(cond, ms, step = 20) {
  const t0 = performance.now();
  const holds = async () => {
    try { return await cond(); } catch { return false; }
  };
  while (performance.now() - t0 < ms) {
    if (await holds()) return true;
    await sleep(step);
  }
  return holds();
}

/** The reserve files next to a database (store_reserve). */
function reserves(db) {
  return readdirSync(dirname(db)).filter((f) => f.startsWith(`${basename(db)}-reserve.`));
}

/** ids recorded in each direction. */
function recordedIds(db) {
  const rows = sql(db, 'SELECT direction, rpc_id FROM messages WHERE rpc_id IS NOT NULL');
  const ids = { c2s: new Set(), s2c: new Set() };
  for (const r of rows) ids[r.direction].add(Number(r.rpc_id));
  return ids;
}

/**
 * Send lines (steady: one a millisecond; flood: as fast as the pipes take
 * them) for 1.5 s, or until killWhen(rec, db) resolves, SIGKILL mcpreel,
 * and check the database: intact, and holding both directions of every
 * line that came back more than 100 ms before the kill.  Returns the
 * figures.
 */
async function killDuring(dir, mode, extra = [], env = {}, killWhen = null) {
  const db = join(dir, `kill-${mode}.db`);
  const rec = startRecord(['--db', db, ...extra], env);
  let id = 0;
  let stop = false;
  const writer = (async () => {
    while (!stop) {
      if (mode === 'flood') {
        let chunk = '';
        for (let i = 0; i < 200; i++) chunk += line(++id, 150);
        await rec.write(chunk);
      } else {
        await rec.write(line(++id, 150));
        await sleep(1);
      }
    }
  })();
  await until(() => rec.echoed.size > 0, 10000);
  const why = killWhen ? await killWhen(rec, db) : await sleep(1500 * SOAK);
  const tKill = performance.now();
  rec.child.kill('SIGKILL');
  stop = true;
  const { signal } = await rec.exited;
  await writer.catch(() => {});
  assert.equal(signal, 'SIGKILL');

  assert.deepEqual(sql(db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
  const ids = recordedIds(db);
  let window = 0;
  let missingOld = [];
  for (const [n, t] of rec.echoed) {
    const age = tKill - t;
    const kept = ids.c2s.has(n) && ids.s2c.has(n);
    if (!kept) {
      window = Math.max(window, age);
      if (age > 100) missingOld.push([n, Math.round(age)]);
    }
  }
  return { echoed: rec.echoed.size, recorded: ids.s2c.size, window, missingOld, db, pid: rec.child.pid, why };
}

test('kill -9 while a steady stream flows: every line forwarded 100 ms before is recorded', { timeout: 60000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const r = await killDuring(dir, 'steady');
    t.diagnostic(`steady: ${r.echoed} lines came back, ${r.recorded} recorded, newest unrecorded line came back ${r.window.toFixed(1)} ms before the kill`);
    assert.ok(r.echoed > 300, `only ${r.echoed} lines went through`);
    assert.deepEqual(r.missingOld, [], 'lines forwarded more than 100 ms before the kill are missing');
    // The killed recorder's room for a full disk is left behind; the next
    // recorder on the file removes it, and its own at exit.
    const stale = `${r.db}-reserve.${r.pid}`;
    assert.ok(existsSync(stale), `${stale} is there after the kill`);
    const next = await runMcpreel(['record', '--db', r.db, '--', 'true']);
    assert.equal(next.code, 0);
    assert.deepEqual(reserves(r.db), [], 'no reserve is left');
  });
});

test('kill -9 during a flood: every line forwarded 100 ms before is recorded', { timeout: 60000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const r = await killDuring(dir, 'flood');
    t.diagnostic(`flood: ${r.echoed} lines came back, ${r.recorded} recorded, newest unrecorded line came back ${r.window.toFixed(1)} ms before the kill`);
    assert.ok(r.echoed > 5000, `only ${r.echoed} lines went through`);
    assert.deepEqual(r.missingOld.slice(0, 5), [], 'lines forwarded more than 100 ms before the kill are missing');
  });
});

/**
 * Build peers/slow_sync.c into dir: a library that, preloaded, makes every
 * sync of the process wait 150 ms.  { so } or { why } it cannot be built.
 */
function buildSlowSync(dir) {
  const so = join(dir, 'slow_sync.so');
  const src = join(dirname(new URL(import.meta.url).pathname), 'peers', 'slow_sync.c');
  try {
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', so, src, '-ldl'], { stdio: 'pipe' });
    return { so };
  } catch (e) {
    return { why: String(e.stderr || e.message).trim() };
  }
}

const MiB = 1024 * 1024;
// A stall counts once this many lines came back: the first commits on a
// new WAL sync it, and a kill there would test little.
const STALL_AFTER = 6000;

/**
 * When to kill a flood on the slow disk (a killWhen for killDuring): at
 * the first stall of the traffic (nothing came back for 200 ms: the writer
 * held up, reading paused), which is where a kill loses most, once
 * STALL_AFTER lines came back and the WAL file holds from bytes; else once it holds upto; else after ms.
 * Resolves to which.
 */
function stallOrWal(from, upto, ms) {
  return async (rec, db) => {
    const t0 = performance.now();
    const walBytes = () => {
      try { return statSync(`${db}-wal`).size; } catch { return 0; }
    };
    for (;;) {
      await sleep(10);
      const now = performance.now();
      const wal = walBytes();
      if (rec.echoed.size > STALL_AFTER && now - rec.lastBack() > 200 && wal >= from) return `a stall at a ${(wal / MiB).toFixed(0)} MiB WAL`;
      if (wal >= upto) return `a ${(wal / MiB).toFixed(0)} MiB WAL`;
      if (now - t0 > ms) return `${ms} ms`;
    }
  };
}

/**
 * A flood on a disk whose syncs take 150 ms (peers/slow_sync.c), killed
 * when killWhen says: every line forwarded 100 ms before is recorded.
 */
async function slowDiskKill(t, killWhen) {
  await withCleanup(async ({ dir }) => {
    const slow = buildSlowSync(dir);
    if (!slow.so) {
      t.skip(`cannot build the slow-sync library (${slow.why})`);
      return;
    }
    const mark = join(dir, 'slow-sync-used');
    // The ASan runtime would refuse to come second in the library list.
    const r = await killDuring(dir, 'flood', [], {
      LD_PRELOAD: slow.so,
      SLOW_SYNC_MARK: mark,
      ASAN_OPTIONS: 'detect_leaks=1:verify_asan_link_order=0',
    }, killWhen);
    t.diagnostic(`slow syncs: killed at ${r.why}: ${r.echoed} lines came back, ${r.recorded} recorded, newest unrecorded line came back ${r.window.toFixed(1)} ms before the kill`);
    assert.ok(existsSync(mark), 'the slow-sync library slowed no sync (not preloaded?)');
    assert.ok(r.echoed > 5000, `only ${r.echoed} lines went through`);
    assert.deepEqual(r.missingOld.slice(0, 5), [], 'lines forwarded more than 100 ms before the kill are missing');
  });
}

// Up to 40 MiB of WAL: past the 16 MiB at which a writer that checkpoints
// in its own thread stalled (main before store/ckpt.c failed 2 of 3 runs).
test('kill -9 during a flood on a disk whose syncs take 150 ms: every line forwarded 100 ms before is recorded', { timeout: 60000 }, async (t) => {
  await slowDiskKill(t, stallOrWal(0, 40 * MiB, 10000));
});

// At 64 MiB of WAL (WRITER_CKPT_BUSY) the writer copies the rest itself,
// commits stall for ~600 ms, and only a producer paused beforehand loses
// nothing (without writer_hold_end: 1 of 3 runs lost lines).
test('kill -9 in the writer\'s own checkpoint at 64 MiB of WAL on that disk: every line forwarded 100 ms before is recorded', { timeout: 60000 }, async (t) => {
  await slowDiskKill(t, stallOrWal(60 * MiB, 90 * MiB, 30000));
});

test('kill -9 with --durable: every line forwarded is recorded', { timeout: 60000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const r = await killDuring(dir, 'steady', ['--durable']);
    t.diagnostic(`durable: ${r.echoed} lines came back, ${r.recorded} recorded`);
    assert.ok(r.echoed > 100, `only ${r.echoed} lines went through`);
    // window is the age of the newest line that came back unrecorded.
    assert.equal(r.window, 0, 'a line came back to the host before it was committed');
    assert.ok(r.recorded >= r.echoed);
  });
});

/** Mount a tmpfs of size at path; false (and why) when not allowed here. */
function mountTmpfs(path, size) {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', path], { stdio: 'pipe' });
    return { ok: true };
  } catch (e) {
    return { ok: false, why: String(e.stderr || e.message).trim() };
  }
}

function umount(path) {
  try { execFileSync('umount', ['-l', path], { stdio: 'pipe' }); } catch { /* already */ }
}

test('a full disk: forwarding goes on, the warning and the session row say what was not recorded', { timeout: 120000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const mnt = join(dir, 'small');
    const m = mountTmpfs(mnt, '8m');
    if (!m.ok) {
      t.skip(`cannot mount a tmpfs here (${m.why})`);
      return;
    }
    defer(async () => umount(mnt));
    const db = join(mnt, 'full.db');
    const rec = startRecord(['--db', db]);
    const n = 6000;
    let sent = 0;
    for (let i = 1; i <= n; i++) {
      const s = line(i, 900);
      sent += s.length;
      await rec.write(s);
    }
    rec.end();
    const { code } = await rec.exited;
    const stderr = rec.stderr();
    assert.equal(code, 0, stderr);
    assert.equal(rec.bytesBack(), sent, 'every byte came back through mcpreel');
    assert.equal(rec.echoed.size, n);
    assert.match(stderr, /recording stopped: cannot write .* full/);
    assert.match(stderr, /forwarding goes on/);
    const lostMsg = /(\d+) messages were forwarded but could not be recorded/.exec(stderr);
    assert.ok(lostMsg, stderr);

    assert.deepEqual(sql(db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    const [s] = sql(db, 'SELECT messages_lost, store_error, ended_ns FROM sessions');
    const [{ c }] = sql(db, 'SELECT count(*) AS c FROM messages');
    t.diagnostic(`full disk: ${c} of ${2 * n} messages recorded, ${s.messages_lost} counted lost; store_error: ${s.store_error}`);
    assert.ok(c > 0 && c < 2 * n);
    assert.equal(s.messages_lost, Number(lostMsg[1]));
    assert.equal(c + s.messages_lost, 2 * n, 'recorded + counted lost = all');
    assert.match(s.store_error, /full/);
    assert.notEqual(s.ended_ns, null);
  });
});

/**
 * An ext4 file system in a file, mounted with errors=remount-ro, whose
 * error can be triggered: the kernel then makes it read-only under the
 * open files (a remount would refuse while they are open for writing).
 */
function mountExt4(dir, mnt) {
  const img = join(dir, 'fs.img');
  mkdirSync(mnt, { recursive: true });
  try {
    execFileSync('truncate', ['-s', '64M', img]);
    execFileSync('mkfs.ext4', ['-q', img], { stdio: 'pipe' });
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', img, mnt], { stdio: 'pipe' });
  } catch (e) {
    return { ok: false, why: String(e.stderr || e.message).trim() };
  }
  const dev = execFileSync('findmnt', ['-n', '-o', 'SOURCE', mnt]).toString().trim();
  const trigger = `/sys/fs/ext4/${dev.replace('/dev/', '')}/trigger_fs_error`;
  return { ok: true, makeReadOnly: () => writeFileSync(trigger, 'mcpreel e2e: read-only mid-run') };
}

test('the file system turned read-only mid-run: forwarding goes on and the loss is counted', { timeout: 120000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const mnt = join(dir, 'ro');
    const m = mountExt4(dir, mnt);
    if (!m.ok) {
      t.skip(`cannot mount an ext4 image here (${m.why})`);
      return;
    }
    defer(async () => umount(mnt));
    const db = join(mnt, 'ro.db');
    const rec = startRecord(['--db', db]);
    for (let i = 1; i <= 100; i++) await rec.write(line(i));
    assert.ok(await until(() => sql(db, 'SELECT count(*) AS c FROM messages')[0].c === 200, 10000));
    m.makeReadOnly();
    for (let i = 101; i <= 300; i++) await rec.write(line(i));
    rec.end();
    const { code } = await rec.exited;
    const stderr = rec.stderr();
    assert.equal(code, 0, stderr);
    assert.equal(rec.echoed.size, 300, 'every line came back');
    assert.match(stderr, /recording stopped: cannot write .*(read-only|I\/O)/);
    assert.match(stderr, /400 messages were forwarded but could not be recorded/);
    const [{ c }] = sql(db, 'SELECT count(*) AS c FROM messages');
    assert.equal(c, 200, 'what came before is kept');
    assert.deepEqual(sql(db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
  });
});

/** Hold the database's write lock from another process until release(). */
async function holdLock(db) {
  const sh = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
  sh.stdin.write('BEGIN IMMEDIATE;\nSELECT \'held\';\n');
  await new Promise((resolve, reject) => {
    sh.stdout.once('data', resolve);
    sh.once('error', reject);
  });
  return {
    release: async () => {
      sh.stdin.end('COMMIT;\n');
      await new Promise((resolve) => sh.on('close', resolve));
    },
  };
}

test('a database locked by another process at start: waits 5 s, then says so', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'locked.db');
    const marker = join(dir, 'started');
    const first = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(first.code, 0);
    const lock = await holdLock(db);
    const t0 = performance.now();
    const r = await runMcpreel(['record', '--db', db, '--', 'sh', '-c', `touch ${marker}; cat`], { input: Buffer.from(line(1)) });
    const took = performance.now() - t0;
    await lock.release();
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /locked by another process \(waited 5 s\)/);
    assert.ok(took > 4000 && took < 20000, `waited ${took} ms`);
    assert.equal(execFileSync('sh', ['-c', `test -e ${marker} && echo yes || echo no`]).toString().trim(), 'no',
      'the server was not started');
  });
});

test('locked mid-run for longer than the bound: forwarding goes on, the rest is recorded after', { timeout: 60000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'midlock.db');
    const rec = startRecord(['--db', db]);
    let id = 0;
    for (; id < 50; ) await rec.write(line(++id));
    assert.ok(await until(() => sql(db, 'SELECT count(*) AS c FROM messages')[0].c === 100, 10000));
    const lock = await holdLock(db);
    // 7 s of traffic under the lock, each line answered promptly.
    const slowest = { ms: 0 };
    for (let i = 0; i < 70; i++) {
      const n = ++id;
      const t0 = performance.now();
      await rec.write(line(n));
      await until(() => rec.echoed.has(n), 3000, 2);
      slowest.ms = Math.max(slowest.ms, performance.now() - t0);
      assert.ok(rec.echoed.has(n), `line ${n} did not come back while the database was locked`);
      await sleep(100);
    }
    await lock.release();
    for (let i = 0; i < 50; i++) await rec.write(line(++id));
    rec.end();
    const { code } = await rec.exited;
    const stderr = rec.stderr();
    assert.equal(code, 0, stderr);
    assert.equal(rec.echoed.size, id);
    assert.match(stderr, /locked by another process: waited 5 s/);
    const [s] = sql(db, 'SELECT messages_lost, store_error FROM sessions');
    const [{ c }] = sql(db, 'SELECT count(*) AS c FROM messages');
    t.diagnostic(`locked 7 s: slowest round trip ${slowest.ms.toFixed(1)} ms; ${c} recorded, ${s.messages_lost} counted lost of ${2 * id}`);
    assert.ok(s.messages_lost > 0);
    assert.equal(c + s.messages_lost, 2 * id);
    assert.equal(s.store_error, null, 'a lock is no reason to stop recording');
    const ids = recordedIds(db);
    assert.ok(ids.c2s.has(id) && ids.s2c.has(id), 'recording resumed after the lock');
  });
});

test('show and sessions read a database being written; two recorders on one file keep all their messages', { timeout: 120000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'shared.db');
    const a = startRecord(['--db', db, '--name', 'a']);
    for (let i = 1; i <= 10; i++) await a.write(line(i));
    const seen = await until(async () => {
      const r = await runMcpreel(['show', '--db', db, '--json', 'a']);
      return r.code === 0 && r.stdout.toString().trim().split('\n').length === 20;
    }, 5000, 100);
    assert.ok(seen, 'show saw the 20 messages of a session still being recorded');
    const list = await runMcpreel(['sessions', '--db', db, '--json']);
    assert.equal(list.code, 0);
    assert.equal(JSON.parse(list.stdout.toString().trim().split('\n')[0]).name, 'a');

    const b = startRecord(['--db', db, '--name', 'b']);
    // Each recorder keeps its own reserve; neither takes the other's.
    assert.ok(await until(() => reserves(db).length === 2, 5000), `reserves: ${reserves(db)}`);
    const n = 20000;
    const pump = async (rec, from) => {
      let chunk = '';
      for (let i = from; i < from + n; i++) {
        chunk += line(i, 100);
        if (chunk.length > 65536) { await rec.write(chunk); chunk = ''; }
      }
      await rec.write(chunk);
      rec.end();
    };
    await Promise.all([pump(a, 1000), pump(b, 1000)]);
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    assert.equal(ea.code, 0, a.stderr());
    assert.equal(eb.code, 0, b.stderr());
    const rows = sql(db, `SELECT s.name, s.messages_lost, count(m.id) AS c FROM sessions s
      LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id ORDER BY s.name`);
    assert.deepEqual(reserves(db), []);
    assert.deepEqual(rows, [
      { name: 'a', messages_lost: 0, c: 2 * (n + 10) },
      { name: 'b', messages_lost: 0, c: 2 * n },
    ]);
  });
});
