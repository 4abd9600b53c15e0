// `mcpreel show` with filters, --raw/--pretty, and --follow on a session
// another process is recording.  What each filter should select is worked
// out here from the rows as the sqlite3 shell reads them, not through
// mcpreel's own queries.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

import { MCPREEL, runMcpreel, sql, tempDir } from './lib/util.mjs';

// Host lines in two halves, 400 ms apart, so that times split them.  `cat`
// as the server echoes each line back.
const FIRST = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"boom"}}',
];
const SECOND = [
  '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"x"}}',
  '{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}',
  '{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"not found"}}',
  '{"jsonrpc":"2.0","id":9,"result":{"content":[],"isError":false,"note":"isError"}}',
  '[{"jsonrpc":"2.0","id":5,"method":"ping"}]',
  'not json, needle here',
];
const GAP_MS = 400;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Record FIRST, a pause, then SECOND through `mcpreel record -- cat`. */
async function recordStaged(db, name) {
  const r = await runMcpreel(['record', '--db', db, '--name', name, '--', 'cat'], {
    keepStdinOpen: true,
    onSpawn: async (child) => {
      // The gap starts once the first half is back: a slow start (a loaded
      // machine, the ASan build) must not let both halves arrive together.
      let echoed = 0;
      const back = new Promise((resolve) => {
        child.stdout.on('data', (c) => {
          echoed += c.toString().split('\n').length - 1;
          if (echoed >= FIRST.length) resolve();
        });
      });
      child.stdin.write(FIRST.join('\n') + '\n');
      await back;
      await sleep(GAP_MS);
      child.stdin.write(SECOND.join('\n') + '\n');
      await sleep(100);
      child.stdin.end();
    },
  });
  assert.equal(r.code, 0, r.stderr.toString());
}

/** The session's rows as sqlite3 reads them, in seq order. */
function rowsOf(db, name) {
  return sql(db, `SELECT m.seq, m.direction, m.kind, m.method, m.ts_ns, m.mono_ns,
      CAST(m.raw AS TEXT) AS raw, hex(m.raw) AS hex FROM messages m
    WHERE session_id = (SELECT max(id) FROM sessions WHERE name = '${name}') ORDER BY seq`);
}

/** show --json with args: the seqs it printed. */
async function seqs(db, args) {
  const r = await runMcpreel(['show', '--db', db, '--json', ...args]);
  assert.equal(r.code, 0, r.stderr.toString());
  const out = r.stdout.toString().trim();
  return out === '' ? [] : out.split('\n').map((l) => JSON.parse(l)).filter((o) => !o.event).map((o) => o.seq);
}

/** The seq numbers of the timeline's message lines (text output). */
function timelineSeqs(text) {
  return text.split('\n').map((l) => l.match(/^\s*(\d+)\s+[+-]\d+\.\d{6}  (->|<-) /)).filter(Boolean).map((m) => Number(m[1]));
}

const isError = (r) => r.kind === 'error' || (r.kind === 'response' && JSON.parse(r.raw).result?.isError === true);

test('show filters select what sqlite3 says they should, in --json and the timeline', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'f.db');
    await recordStaged(db, 'staged');
    const rows = rowsOf(db, 'staged');
    assert.equal(rows.length, (FIRST.length + SECOND.length) * 2, 'every line each way');
    const all = rows.map((r) => r.seq);
    const sel = (pred) => rows.filter(pred).map((r) => r.seq);
    // The session's time 0: its first row, message or event.
    const start = sql(db, `SELECT min(t) AS t FROM (SELECT mono_ns AS t FROM messages WHERE session_id = 1
      UNION ALL SELECT mono_ns FROM events WHERE session_id = 1)`)[0].t;
    const firstOfSecond = rows.find((r) => r.raw === SECOND[0] && r.direction === 'c2s');
    const rel = (firstOfSecond.mono_ns - start - 100e6) / 1e9; // between the halves
    const iso = new Date(Math.floor(firstOfSecond.ts_ns / 1e6) - 100).toISOString(); // ...Z, ms

    const cases = [
      [['--method', 'tools/*'], sel((r) => r.method?.startsWith('tools/'))],
      [['--method', '[!t]*s*'], sel((r) => r.method !== null && /^[^t].*s/.test(r.method))],
      [['--method', 'tools/cal?'], sel((r) => r.method === 'tools/call')],
      [['--dir', 's2c'], sel((r) => r.direction === 's2c')],
      [['--kind', 'notification'], sel((r) => r.kind === 'notification')],
      [['--kind', 'batch'], sel((r) => r.kind === 'batch')],
      [['--kind', 'invalid'], sel((r) => r.kind === 'invalid')],
      [['--kind', 'error'], sel((r) => r.kind === 'error')],
      [['--errors'], sel(isError)],
      [['--grep', 'needle'], sel((r) => r.raw.includes('needle'))],
      [['--grep', '"isError":true'], sel((r) => r.raw.includes('"isError":true'))],
      [['--since', `${rel}s`], sel((r) => r.mono_ns >= start + rel * 1e9)],
      [['--until', `${rel * 1000}ms`], sel((r) => r.mono_ns <= start + rel * 1e9)],
      [['--since', iso], sel((r) => r.ts_ns >= Date.parse(iso) * 1e6)],
      [['--until', iso], sel((r) => r.ts_ns <= Date.parse(iso) * 1e6)],
      [['--since', '#5', '--until', '#9'], sel((r) => r.seq >= 5 && r.seq <= 9)],
      [['--dir', 'c2s', '--kind', 'response', '--since', '#3'], sel((r) => r.direction === 'c2s' && r.kind === 'response' && r.seq >= 3)],
      [['--errors', '--dir', 's2c'], sel((r) => isError(r) && r.direction === 's2c')],
      [['--method', 'nothing/*'], []],
    ];
    for (const [args, want] of cases) {
      assert.ok(want.length < all.length, `${args.join(' ')} selects less than everything`);
      assert.deepEqual(await seqs(db, [...args, 'staged']), want, `--json ${args.join(' ')}`);
      const tl = await runMcpreel(['show', '--db', db, ...args, 'staged']);
      assert.equal(tl.code, 0, tl.stderr.toString());
      assert.deepEqual(timelineSeqs(tl.stdout.toString()), want, `timeline ${args.join(' ')}`);
    }
    assert.ok(sel(isError).length === 4, 'two error responses and two isError results (each echoed)');
    assert.ok(rel > 0.1, 'the halves are apart');

    // The timeline keeps its times whatever is filtered: the same line.
    const full = (await runMcpreel(['show', '--db', db, 'staged'])).stdout.toString();
    const some = (await runMcpreel(['show', '--db', db, '--dir', 's2c', 'staged'])).stdout.toString();
    const line = some.split('\n').find((l) => /^\s+\d+\s+\+/.test(l));
    assert.ok(line);
    assert.ok(full.includes(line), 'a filtered line is the same as in the whole timeline');
    // Events: kept within times, left out by message filters.
    assert.match(full, /!\s+spawn/);
    assert.doesNotMatch(some, /!\s+(spawn|exit)/);
    const late = (await runMcpreel(['show', '--db', db, '--since', `${rel}s`, 'staged'])).stdout.toString();
    assert.doesNotMatch(late, /!\s+spawn/);
    assert.match(late, /!\s+exit/);
    const ev = await runMcpreel(['show', '--db', db, '--json', '--events', '--until', '#1', 'staged']);
    assert.deepEqual(ev.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).map((o) => o.event ?? o.seq), ['spawn', 1]);

    // Bad values say what to give.
    for (const [args, re] of [
      [['--since', '12'], /--since '12': give seconds .* '#12'/],
      [['--until', '#x'], /--until '#x'/],
      [['--dir', 'up'], /--dir 'up': give c2s .* or s2c/],
      [['--kind', 'reply'], /--kind 'reply': give request, response/],
      [['--json', '--raw'], /--json and --raw\/--pretty are different formats/],
    ]) {
      const r = await runMcpreel(['show', '--db', db, ...args, 'staged']);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr.toString(), re);
    }
  } finally {
    t.cleanup();
  }
});

test('show --raw prints the stored bytes a line each, --pretty indents JSON', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'r.db');
    await recordStaged(db, 'raw');
    const rows = rowsOf(db, 'raw');
    const raw = await runMcpreel(['show', '--db', db, '--raw', 'raw']);
    assert.equal(raw.code, 0);
    assert.deepEqual(raw.stdout, Buffer.concat(rows.map((r) => Buffer.concat([Buffer.from(r.hex, 'hex'), Buffer.from('\n')]))));
    const s2c = await runMcpreel(['show', '--db', db, '--raw', '--dir', 's2c', '--kind', 'error', 'raw']);
    assert.equal(s2c.stdout.toString(), rows.filter((r) => r.direction === 's2c' && r.kind === 'error').map((r) => r.raw + '\n').join(''));

    const pretty = await runMcpreel(['show', '--db', db, '--pretty', '--since', '#1', '--until', '#1', 'raw']);
    assert.equal(pretty.stdout.toString(), JSON.stringify(JSON.parse(rows[0].raw), null, 2) + '\n');
    const notJson = await runMcpreel(['show', '--db', db, '--raw', '--pretty', '--kind', 'invalid', '--dir', 'c2s', 'raw']);
    assert.equal(notJson.stdout.toString(), 'not json, needle here\n', 'bytes that are not JSON stay as they are');
  } finally {
    t.cleanup();
  }
});

/** Lines of a child's stdout, each with the time it came. */
function lineReader(child) {
  const lines = [];
  let wake = null;
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push({ at: Date.now(), text: l });
    wake?.();
  });
  return {
    lines,
    /** Wait until pred holds of the lines, at most ms. */
    async until(pred, ms, what) {
      const deadline = Date.now() + ms;
      while (!pred(lines)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${what}: not within ${ms} ms; got ${JSON.stringify(lines.map((l) => l.text))}`);
        await new Promise((r) => {
          wake = r;
          setTimeout(r, Math.min(left, 50));
        });
      }
    },
  };
}

/** Start `mcpreel show ARGS`; resolves {child, reader, exited}. */
function startShow(args) {
  const child = spawn(MCPREEL, ['show', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => { stderr += c; });
  const exited = new Promise((r) => child.on('close', (code, signal) => r({ code, signal, stderr })));
  return { child, reader: lineReader(child), exited };
}

/** Wait until the database has a session named name, at most ms. */
async function waitSession(db, name, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    // (Quietly: until the recorder has created it, there is no table.)
    const r = spawnSync('sqlite3', [db, `SELECT id FROM sessions WHERE name = '${name}'`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() !== '') return;
    if (Date.now() > deadline) throw new Error(`no session ${name} within ${ms} ms`);
    await sleep(20);
  }
}

const withTimeout = (p, ms, what) => Promise.race([p, sleep(ms).then(() => { throw new Error(`${what}: not within ${ms} ms`); })]);

test('show --follow prints what another process records within 1 s, and exits when it ends', { timeout: 60000 }, async () => {
  const t = tempDir();
  let rec;
  const shows = [];
  try {
    const db = join(t.dir, 'live.db');
    let recChild;
    rec = runMcpreel(['record', '--db', db, '--name', 'live', '--', 'cat'], {
      keepStdinOpen: true, onSpawn: (c) => { recChild = c; },
    });
    await waitSession(db, 'live', 10000);
    recChild.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');

    const json = startShow(['--db', db, '--follow', '--json', 'last']);
    const text = startShow(['--db', db, '--follow', 'live']);
    const s2c = startShow(['--db', db, '--follow', '--json', '--dir', 's2c', '--method', 'ping', 'live']);
    shows.push(json, text, s2c);
    // What was there before: both directions of the first line.
    await json.reader.until((l) => l.length === 2, 5000, 'the messages recorded before --follow started');
    await text.reader.until((l) => l.some((x) => /^\s+2\s+\+\d/.test(x.text)), 5000, 'the timeline so far');
    assert.match(text.reader.lines[0].text, /^session 1 "live"\s+stdio .*\(not ended\)/);

    for (let i = 2; i <= 4; i++) {
      const sent = Date.now();
      recChild.stdin.write(`{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`);
      await json.reader.until((l) => l.length === 2 * i, 1000, `message ${i} seen by --follow`);
      const got = json.reader.lines.slice(-2).map((l) => JSON.parse(l.text));
      assert.deepEqual(got.map((o) => [o.seq, o.direction, o.method, o.id]),
        [[2 * i - 1, 'c2s', 'ping', i], [2 * i, 's2c', 'ping', i]]);
      assert.ok(json.reader.lines.at(-1).at - sent < 1000);
      await text.reader.until((l) => l.some((x) => new RegExp(`^\\s+${2 * i}\\s+\\+\\d+\\.\\d+  <- request\\s+ping\\s+${i}\\s`).test(x.text)), 1000, `timeline line ${2 * i}`);
    }
    await s2c.reader.until((l) => l.length === 3, 1000, 'the filtered follow');
    assert.deepEqual(s2c.reader.lines.map((l) => JSON.parse(l.text).seq), [4, 6, 8]);

    // Closing the host's side ends the session: every follower exits 0
    // after printing the rest (cat's exit among the events).
    recChild.stdin.end();
    const r = await withTimeout(rec, 10000, 'record to exit');
    assert.equal(r.code, 0, r.stderr.toString());
    for (const s of shows) {
      const e = await withTimeout(s.exited, 3000, '--follow to exit after the session ended');
      assert.equal(e.code, 0, e.stderr);
    }
    assert.match(text.reader.lines.at(-1).text, /!\s+exit\s+server exited with status 0/);
    assert.equal(json.reader.lines.length, 8, 'no message twice');
  } finally {
    for (const s of shows) s.child.kill('SIGKILL');
    await rec?.catch(() => {});
    t.cleanup();
  }
});

test('show --follow stops on SIGINT and when its reader goes away', { timeout: 60000 }, async () => {
  const t = tempDir();
  let rec;
  let recChild;
  try {
    const db = join(t.dir, 'stop.db');
    rec = runMcpreel(['record', '--db', db, '--name', 'open', '--', 'cat'], {
      keepStdinOpen: true, onSpawn: (c) => { recChild = c; },
    });
    await waitSession(db, 'open', 10000);
    recChild.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');

    const a = startShow(['--db', db, '--follow', '--json', 'open']);
    await a.reader.until((l) => l.length === 2, 5000, 'the first messages');
    a.child.kill('SIGINT');
    const ea = await withTimeout(a.exited, 2000, '--follow to stop on SIGINT');
    assert.equal(ea.code, 0, ea.stderr);

    // A reader that closes its end: --follow notices while idle.
    const b = startShow(['--db', db, '--follow', '--json', 'open']);
    await b.reader.until((l) => l.length === 2, 5000, 'the first messages');
    b.child.stdout.destroy();
    const eb = await withTimeout(b.exited, 2000, '--follow to stop when stdout has no reader');
    assert.equal(eb.code, 0, eb.stderr);

    // A recorder killed before it could end the session: nothing more
    // will come, and --follow says so instead of waiting for ever.
    const c = startShow(['--db', db, '--follow', '--json', 'open']);
    await c.reader.until((l) => l.length === 2, 5000, 'the first messages');
    recChild.kill('SIGKILL');
    const ec = await withTimeout(c.exited, 3000, '--follow to stop when the recorder is gone');
    assert.equal(ec.code, 0, ec.stderr);
    assert.match(ec.stderr, /the recorder of session 1 \(pid \d+\) has exited without ending it/);
    assert.equal(sql(db, 'SELECT ended_ns FROM sessions')[0].ended_ns, null);
  } finally {
    recChild?.stdin.end();
    await rec?.catch(() => {});
    t.cleanup();
  }
});
