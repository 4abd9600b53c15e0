// Times at and past the ends of what int64_t nanoseconds hold (1677-09-21
// to 2262-04-11): given as --since/--until, imported from a trace, or
// forged into a database.  A time given that cannot be held is a clear
// error; one stored at the ends of the range is shown without arithmetic
// wrapping around (the sanitizer build aborts on a signed overflow).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

import { E2E_DIR, runMcpreel, sql, withCleanup } from './lib/util.mjs';

const MAX = '9223372036854775807';
const MIN = '-9223372036854775808';

/** No sanitizer report, and the command worked. */
function clean(r, what) {
  const err = r.stderr.toString();
  assert.doesNotMatch(err, /runtime error|AddressSanitizer|UndefinedBehavior/, `${what}: ${err}`);
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${err}`);
}

// cat echoes the host's ping as the server's (seq 2), which the host's
// response (seq 3) answers.
async function recordPing(db) {
  const r = await runMcpreel(['record', '--db', db, '--', 'cat'], {
    input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{}}\n',
  });
  assert.equal(r.code, 0, r.stderr.toString());
}

test('show --since/--until a time past 2262 or before 1678: a clear error', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 't.db');
    await recordPing(db);
    for (const [opt, when] of [['--since', '2300-01-01T00:00:00Z'], ['--until', '2300-01-01'],
      ['--since', '1000-01-01T00:00:00Z'], ['--until', '9999-12-31T23:59:59.999Z'],
      ['--since', '2262-04-11T23:47:16.854775808Z']]) {
      const r = await runMcpreel(['show', '--db', db, opt, when, '1']);
      assert.equal(r.code, 2, `${opt} ${when}: ${r.stderr}`);
      assert.equal(r.stdout.length, 0, 'nothing shown');
      assert.match(r.stderr.toString(), new RegExp(`${opt} '${when}': time out of range \\(1678-2262\\)`));
    }
    // The last nanosecond that int64_t holds is a time like any other.
    const r = await runMcpreel(['show', '--db', db, '--until', '2262-04-11T23:47:16.854775807Z', '1']);
    clean(r, 'until the last ns');
    assert.match(r.stdout.toString(), /ping/);
    const none = await runMcpreel(['show', '--db', db, '--since', '2262-04-11T23:47:16Z', '--json', '1']);
    clean(none, 'since the end of the range');
    assert.equal(none.stdout.length, 0, 'nothing recorded after 2262');
  });
});

test('import of an mcp-tape trace dated 9999 or 1000: refused with the line, nothing stored', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const good = readFileSync(join(E2E_DIR, 'fixtures/mcp-tape/trace.jsonl'), 'utf8').split('\n');
    for (const [year, lineNo] of [['9999-12-31T23:59:59.999Z', 3], ['1000-01-01T00:00:00.000Z', 1]]) {
      const lines = [...good];
      lines[lineNo - 1] = lines[lineNo - 1].replace(/"(startedAt|t)":"[^"]+"/, `"$1":"${year}"`);
      const file = join(dir, `far-${year.slice(0, 4)}.jsonl`);
      writeFileSync(file, lines.join('\n'));
      const db = join(dir, `i${year.slice(0, 4)}.db`);
      const r = await runMcpreel(['import', '--db', db, file]);
      assert.notEqual(r.code, 0, r.stderr.toString());
      assert.match(r.stderr.toString(), new RegExp(`line ${lineNo}: "(startedAt|t)" is a time out of range \\(1678-2262\\): '${year}'`));
      assert.doesNotMatch(r.stderr.toString(), /runtime error/);
      let n = 0;
      try { n = sql(db, 'SELECT count(*) AS n FROM sessions')[0].n; } catch { n = 0; }
      assert.equal(n, 0, 'no half-imported session');
    }
  });
});

test('sessions, show, stats, report, export of rows at the ends of the ns range', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'x.db');
    await recordPing(db);
    // Forged: the requests at the earliest ns, the response at the latest,
    // the session from the earliest to the latest.
    execFileSync('sqlite3', [db, `UPDATE messages SET mono_ns = ${MIN}, ts_ns = ${MIN} WHERE seq <= 2;
      UPDATE messages SET mono_ns = ${MAX}, ts_ns = ${MAX} WHERE seq > 2;
      UPDATE sessions SET started_ns = ${MIN}, ended_ns = ${MAX};`]);
    for (const args of [['sessions'], ['sessions', '--json'], ['show', '1'], ['show', '--json', '1'],
      ['show', '--since', '1s', '1'], ['show', '--until', '2s', '1'], ['stats', '1'], ['stats', '--json', '1'],
      ['export', '1'], ['report', '--output', join(dir, 'r.html'), '1']]) {
      const r = await runMcpreel([args[0], '--db', db, ...args.slice(1)]);
      clean(r, args.join(' '));
    }
    const js = JSON.parse((await runMcpreel(['stats', '--db', db, '--json', '1'])).stdout.toString());
    const ping = js.methods.find((m) => m.method === 'ping' && m.answered === 1);
    assert.ok(ping, JSON.stringify(js.methods));
    assert.ok(ping.max_ns >= 9.2e18, 'a latency past the range is held at its end');
    const show = (await runMcpreel(['show', '--db', db, '1'])).stdout.toString();
    assert.match(show, /ran 153722867m\d\ds/, 'the longest duration there is');
  });
});

test('export har of an HTTP exchange with mono_ns and times at the ends of the range', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'h.db');
    await recordPing(db);
    execFileSync('sqlite3', [db, `INSERT INTO sessions (id, transport, target, started_ns, ended_ns)
        VALUES (2, 'http', 'http://127.0.0.1:1/mcp', ${MIN}, ${MAX});
      INSERT INTO http_exchanges (id, session_id, connection, method, path, request_headers, started_ns,
        mono_ns, status, response_headers, response_mono_ns, ended_ns, outcome)
        VALUES (1, 2, 1, 'POST', '/mcp', '[]', ${MIN}, ${MIN}, 200, '[]', ${MAX}, ${MAX}, 'complete'),
               (2, 2, 1, 'POST', '/mcp', '[]', ${MAX}, ${MAX}, 200, '[]', ${MIN}, ${MIN}, 'complete'),
               (3, 2, 1, 'POST', '/mcp', '[]', -1, 5, 200, '[]', 4, 0, 'complete');`]);
    const r = await runMcpreel(['export', '--db', db, '--format', 'har', '2']);
    clean(r, 'export har');
    const entries = JSON.parse(r.stdout.toString()).log.entries;
    assert.equal(entries.length, 3);
    for (const e of entries) {
      assert.ok(e.time >= 0 && Number.isFinite(e.time), `time ${e.time}`);
      assert.ok(e.timings.wait >= 0, `wait ${e.timings.wait}`);
      assert.match(e.startedDateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.deepEqual(entries.map((e) => e.startedDateTime).sort(), ['1677-09-21T00:12:43.145Z',
      '1969-12-31T23:59:59.999Z', '2262-04-11T23:47:16.854Z'], 'the earliest, 1 ns before 1970, the latest');
  });
});
