// Stdio peers that misbehave (peers/badpeer.mjs, cat): a server killed by
// SIGKILL, one that closes its stdout and lives on, one that talks before
// it is asked, one that never reads its stdin while the host writes a lot,
// and a host that goes away in the middle of a line.  mcpreel says what
// happened (stderr, events, sessions.end_reason), records what it saw,
// keeps its memory bounded and ends when it should.  Every wait is bounded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const BADPEER = join(PEERS_DIR, 'badpeer.mjs');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Start `mcpreel record --db DB -- node badpeer.mjs MODE` with the host's
 * stdin kept open.  Returns {child, done, out(), err(), waitErr(re, ms),
 * waitOut(re, ms)}: done is runMcpreel's promise; out/err what came so far.
 */
async function startBadpeer(db, mode, { timeoutMs = 30000 } = {}) {
  let child;
  const done = runMcpreel(['record', '--db', db, '--', process.execPath, BADPEER, mode],
    { keepStdinOpen: true, timeoutMs, onSpawn: (c) => { child = c; } });
  const seen = { out: [], err: [] };
  child.stdout.on('data', (c) => seen.out.push(c));
  child.stderr.on('data', (c) => seen.err.push(c));
  const text = (k) => Buffer.concat(seen[k]).toString('utf8');
  const waitFor = async (k, re, ms) => {
    const end = Date.now() + ms;
    for (;;) {
      const m = text(k).match(re);
      if (m) return m;
      if (Date.now() > end) throw new Error(`no ${re} on ${k} within ${ms} ms; stderr: ${text('err')}`);
      await sleep(20);
    }
  };
  const pid = Number((await waitFor('err', /badpeer \S+ pid (\d+)/, 10000))[1]);
  return {
    child,
    pid,
    done,
    out: () => text('out'),
    err: () => text('err'),
    waitErr: (re, ms = 10000) => waitFor('err', re, ms),
    waitOut: (re, ms = 10000) => waitFor('out', re, ms),
  };
}

const session = (db) => sql(db, 'SELECT exit_status, exit_signal, end_reason, ended_ns FROM sessions')[0];
const events = (db) => sql(db, 'SELECT kind, CAST(text AS TEXT) AS text FROM events ORDER BY id');
const messages = (db) => sql(db, 'SELECT seq, direction, kind, hex(raw) AS hex FROM messages ORDER BY seq');

test('a server killed by SIGKILL mid-session: mcpreel exits 137, warns, and records how it ended', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'k.db');
    const p = await startBadpeer(db, 'echo');
    const req = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    p.child.stdin.write(req);
    await p.waitOut(/"method":"ping"/);
    process.kill(p.pid, 'SIGKILL');
    const r = await p.done;
    p.child.stdin.destroy();
    assert.equal(r.code, 137, `128 + SIGKILL; stderr: ${r.stderr}`);
    assert.match(r.stderr.toString(), /server killed by signal 9 \(Killed\) while the host was still connected/);
    assert.equal(r.stdout.toString(), req, 'what the server said before it died reached the host');
    const s = session(db);
    assert.equal(s.exit_status, 137);
    assert.equal(s.exit_signal, 9);
    assert.match(s.end_reason, /killed by signal 9/);
    assert.ok(s.ended_ns > 0);
    assert.ok(events(db).some((e) => e.kind === 'exit' && /killed by signal 9/.test(e.text)), 'an exit event');
    assert.deepEqual(messages(db).map((m) => m.direction), ['c2s', 's2c'], 'both lines recorded');
  } finally {
    t.cleanup();
  }
});

test('a server that closes its stdout and keeps running: the host sees the end, stdin still flows, it is noted', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'c.db');
    const p = await startBadpeer(db, 'close-stdout');
    const stdoutEnded = new Promise((res) => p.child.stdout.on('end', res));
    p.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await p.waitOut(/"id":1,"result"/);
    await Promise.race([stdoutEnded, sleep(5000).then(() => { throw new Error('the host never saw our stdout end'); })]);
    await p.waitErr(/the server \(pid \d+\) closed its stdout but is still running/, 5000);
    // mcpreel still relays the host's lines to the server.
    const later = '{"jsonrpc":"2.0","method":"notifications/later"}\n';
    p.child.stdin.write(later);
    await p.waitErr(new RegExp(`badpeer: read ${later.length} bytes`));
    p.child.stdin.end();
    const r = await p.done;
    assert.equal(r.code, 0, `the server exits 0 when its stdin ends; stderr: ${r.stderr}`);
    const s = session(db);
    assert.equal(s.exit_status, 0);
    assert.match(s.end_reason, /host closed/);
    assert.ok(events(db).some((e) => e.kind === 'note' && /closed its stdout but is still running/.test(e.text)), 'noted in the record');
    const m = messages(db);
    assert.deepEqual(m.map((x) => x.direction), ['c2s', 's2c', 'c2s']);
    assert.equal(Buffer.from(m[2].hex, 'hex').toString(), later.trimEnd(), 'the later line is recorded');
  } finally {
    t.cleanup();
  }
});

test('a server that writes before any request: the host gets it at once, recorded first', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'e.db');
    const p = await startBadpeer(db, 'early');
    await p.waitOut(/not json, early\n/);
    const req = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    p.child.stdin.end(req);
    const r = await p.done;
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"early"}}\nnot json, early\n${req}`);
    assert.deepEqual(messages(db).map((x) => [x.seq, x.direction, x.kind]), [
      [1, 's2c', 'notification'], [2, 's2c', 'invalid'], [3, 'c2s', 'request'], [4, 's2c', 'request'],
    ]);
  } finally {
    t.cleanup();
  }
});

test('a server that never reads its stdin while the host writes 64 MiB: backpressure, bounded memory, a prompt end on SIGTERM', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'd.db');
    const p = await startBadpeer(db, 'deaf', { timeoutMs: 50000 });
    const line = Buffer.from(`{"jsonrpc":"2.0","method":"notifications/pad","params":{"p":"${'x'.repeat(65536)}"}}\n`);
    const TOTAL = 64 * 1024 * 1024;
    let attempted = 0;
    let accepted = 0;
    let lastProgress = Date.now();
    const pump = () => {
      while (attempted < TOTAL) {
        attempted += line.length;
        const ok = p.child.stdin.write(line, (e) => {
          if (!e) {
            accepted += line.length;
            lastProgress = Date.now();
          }
        });
        if (!ok) {
          p.child.stdin.once('drain', pump);
          return;
        }
      }
    };
    p.child.stdin.on('error', () => {});
    pump();
    // Wait until mcpreel has stopped taking bytes for 1.5 s (or took all).
    const end = Date.now() + 30000;
    while (Date.now() - lastProgress < 1500 && accepted < TOTAL && Date.now() < end) await sleep(100);
    const status = readFileSync(`/proc/${p.child.pid}/status`, 'utf8');
    const rssMiB = Number(status.match(/VmHWM:\s+(\d+) kB/)[1]) / 1024;
    assert.ok(accepted < 16 * 1024 * 1024,
      `mcpreel stopped reading: it took ${(accepted / 1048576).toFixed(1)} MiB of ${TOTAL / 1048576} MiB (peak RSS ${rssMiB.toFixed(0)} MiB)`);
    assert.ok(accepted > 1024 * 1024, 'but it took something first');
    assert.ok(rssMiB < 200, `peak RSS ${rssMiB.toFixed(0)} MiB`);
    // Not stuck: the server's stderr still comes through while paused.
    const ticks = () => Number([...p.err().matchAll(/badpeer: tick (\d+)/g)].at(-1)?.[1] ?? 0);
    const before = ticks();
    await sleep(600);
    assert.ok(ticks() > before, 'the server\'s stderr is still relayed while the host is held back');

    // The host gives up the way the SDKs do: closes stdin, then SIGTERM.
    const t0 = Date.now();
    p.child.stdin.destroy();
    p.child.kill('SIGTERM');
    const r = await p.done;
    assert.ok(Date.now() - t0 < 10000, `mcpreel ended ${Date.now() - t0} ms after SIGTERM`);
    assert.equal(r.code, 143, `the server's status (killed by SIGTERM); stderr: ${r.stderr.toString().slice(-2000)}`);
    const s = session(db);
    assert.equal(s.exit_signal, 15);
    const ev = events(db);
    assert.ok(ev.some((e) => e.kind === 'note' && /got (SIGTERM|Terminated)/.test(e.text)), 'the signal is noted');
    assert.ok(ev.some((e) => e.kind === 'exit' && /killed by signal 15/.test(e.text)), 'the exit is recorded');
    // What was read is recorded, line for line (the rest never left the host).
    // The pipe may have taken the start of a line before the host closed:
    // that partial line is the last one recorded (as invalid), a prefix.
    const full = line.length - 1;
    const rows = sql(db, `SELECT count(*) AS n, count(DISTINCT hex(raw)) AS distinct_raw FROM messages WHERE direction = 'c2s' AND size = ${full}`)[0];
    assert.ok(rows.n > 0 && rows.n * line.length <= accepted, `${rows.n} lines recorded of ${accepted / line.length} taken`);
    assert.equal(rows.distinct_raw, 1);
    const rest = sql(db, `SELECT seq, kind, size, hex(raw) AS hex, (SELECT max(seq) FROM messages WHERE direction = 'c2s') AS last FROM messages WHERE direction = 'c2s' AND size <> ${full}`);
    assert.ok(rest.length <= 1, `${rest.length} c2s rows are not whole lines`);
    if (rest.length === 1) {
      assert.equal(rest[0].seq, rest[0].last, 'only the last line can be partial');
      assert.equal(rest[0].kind, 'invalid');
      assert.equal(rest[0].hex, line.subarray(0, rest[0].size).toString('hex').toUpperCase(), 'it is the start of a line');
    }
  } finally {
    t.cleanup();
  }
});

test('a host that goes away in the middle of a line: the partial line is forwarded, recorded and noted', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'h.db');
    const whole = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
    const part = '{"jsonrpc":"2.0","id":2,"method":"tools/ca';
    const r = await runMcpreel(['record', '--db', db, '--', 'cat'], { input: Buffer.from(whole + part) });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), whole + part, 'the server got the partial line, and echoed it back');
    const m = messages(db);
    for (const dir of ['c2s', 's2c']) {
      const mine = m.filter((x) => x.direction === dir);
      assert.deepEqual(mine.map((x) => x.kind), ['notification', 'invalid'], dir);
      assert.equal(Buffer.from(mine[1].hex, 'hex').toString(), part, `${dir}: the partial line, exact`);
    }
    const notes = events(db).filter((e) => e.kind === 'note').map((e) => e.text);
    assert.ok(notes.some((n) => new RegExp(`the host \\(stdin\\) ended with ${part.length} bytes after the last newline`).test(n)), notes.join('\n'));
    assert.match(session(db).end_reason, /host closed/);
  } finally {
    t.cleanup();
  }
});

test('no shell ever runs the server: metacharacters in argv arrive literally and run nothing', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 's.db');
    const marker = join(t.dir, 'pwned');
    const args = [`$(touch ${marker})`, `; touch ${marker}`, `\`touch ${marker}\``, `| touch ${marker}`, `&& touch ${marker}`, '*', '$HOME', "'quoted'", '>out'];
    const r = await runMcpreel(['record', '--db', db, '--', process.execPath, BADPEER, 'argv', ...args]);
    assert.equal(r.code, 0, r.stderr.toString());
    assert.deepEqual(JSON.parse(r.stdout.toString()), args, 'the server got its argv byte for byte');
    assert.ok(!existsSync(marker), 'nothing ran the metacharacters');
    assert.ok(!existsSync(join(process.cwd(), 'out')) && !existsSync(join(t.dir, 'out')), 'no redirection happened');
    assert.deepEqual(JSON.parse(sql(db, 'SELECT target FROM sessions')[0].target), [process.execPath, BADPEER, 'argv', ...args],
      'sessions.target is the argv as given');

    // A command name that a shell would split: not found, and nothing ran.
    const name = `true; touch ${marker}`;
    const r2 = await runMcpreel(['record', '--db', db, '--', name]);
    assert.equal(r2.code, 127, r2.stderr.toString());
    assert.match(r2.stderr.toString(), /cannot run 'true; touch .*': command not found/);
    assert.ok(!existsSync(marker), 'nothing ran the command name\'s metacharacters');
  } finally {
    t.cleanup();
  }
});

test('an executable file that is no program (no #! line) is not run through a shell: exit 126, whether named by path or found on PATH', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'x.db');
    const marker = join(t.dir, 'ran');
    const file = join(t.dir, 'noshebang');
    writeFileSync(file, `touch ${marker}\n`);
    chmodSync(file, 0o755);
    for (const [cmd, env] of [[file, undefined], ['noshebang', { ...process.env, PATH: `${t.dir}:${process.env.PATH}` }]]) {
      const r = await runMcpreel(['record', '--db', db, '--', cmd], { env });
      assert.equal(r.code, 126, `${cmd}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /cannot run '(.*\/)?noshebang': Exec format error/);
      assert.ok(!existsSync(marker), `${cmd}: the file was not run by a shell`);
    }
    // A program on PATH still runs.
    const r = await runMcpreel(['record', '--db', db, '--', 'true']);
    assert.equal(r.code, 0, r.stderr.toString());
  } finally {
    t.cleanup();
  }
});
