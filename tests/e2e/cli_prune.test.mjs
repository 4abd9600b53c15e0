// `mcpreel prune` and `mcpreel rm` on real recordings (stdio sessions with
// `cat`, a Streamable HTTP session of the SDK client with server-everything
// for http_exchanges rows): exactly the sessions they should delete go, with
// all their rows, every other row stays, and the file shrinks after VACUUM.
// A session still being recorded is kept unless --force.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';

import { runSessionWith, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { runMcpreel, sql, withCleanup } from './lib/util.mjs';

const DAY_NS = 86400n * 1000000000n;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A session through `cat` with one line of about size bytes (each way). */
async function recordCat(db, name, size) {
  const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { pad: 'x'.repeat(size) } });
  const r = await runMcpreel(['record', '--db', db, '--name', name, '--', 'cat'], { input: Buffer.from(line + '\n') });
  assert.equal(r.code, 0, r.stderr.toString());
}

/** Rows per session in every table: {name: {messages, events, http}} and the ids by name. */
function census(db) {
  const out = {};
  for (const s of sql(db, `SELECT id, name,
      (SELECT count(*) FROM messages WHERE session_id = s.id) AS messages,
      (SELECT count(*) FROM events WHERE session_id = s.id) AS events,
      (SELECT count(*) FROM http_exchanges WHERE session_id = s.id) AS http
    FROM sessions s`)) out[s.name] = { id: s.id, messages: s.messages, events: s.events, http: s.http };
  return out;
}

/** Rows in the tables that belong to no session (should be none). */
function orphans(db) {
  return sql(db, `SELECT (SELECT count(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions))
      + (SELECT count(*) FROM events WHERE session_id NOT IN (SELECT id FROM sessions))
      + (SELECT count(*) FROM http_exchanges WHERE session_id NOT IN (SELECT id FROM sessions)) AS n`)[0].n;
}

function without(c, names) {
  return Object.fromEntries(Object.entries(c).filter(([n]) => !names.includes(n)));
}

/** The database's size on disk: the file and its WAL. */
function diskSize(db) {
  let n = statSync(db).size;
  try { n += statSync(`${db}-wal`).size; } catch { /* none */ }
  return n;
}

/** Move sessions' start back by days (sqlite3 does, as time would). */
function age(db, names, days) {
  const list = names.map((n) => `'${n}'`).join(',');
  const r = spawnSync('sqlite3', [db, `UPDATE sessions SET started_ns = started_ns - ${BigInt(days) * DAY_NS} WHERE name IN (${list})`]);
  assert.equal(r.status, 0, r.stderr?.toString());
}

async function mcpreelOk(args) {
  const r = await runMcpreel(args);
  assert.equal(r.code, 0, `mcpreel ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

const http = mcpreelHttpSupport();

test('prune --older-than / --keep and rm delete exactly their sessions; VACUUM shrinks the file', { timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'p.db');
    await recordCat(db, 'old1', 1500000);
    await recordCat(db, 'old2', 1500000);
    const names = ['old1', 'old2'];
    if (http.ok) {
      // The real peers over Streamable HTTP: a session with http_exchanges.
      const se = await startServerEverything('streamableHttp');
      defer(se.stop);
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'http' });
      defer(() => proxy.stop());
      await runSessionWith(streamableHttpTransport(`${proxy.url}${new URL(se.url).pathname}`), {});
      assert.equal((await proxy.stop()).code, 0);
      names.push('http');
    }
    await recordCat(db, 'mid', 1500000);
    await recordCat(db, 'new', 10);
    age(db, names, 10);
    const before = census(db);
    if (http.ok) assert.ok(before.http.http > 0 && before.http.messages > 0, 'the HTTP session has exchanges');
    assert.ok(before.old1.messages === 2 && before.old1.events > 0);

    // --dry-run: says, deletes nothing.
    const size0 = diskSize(db);
    const dry = await mcpreelOk(['prune', '--db', db, '--older-than', '5', '--dry-run']);
    for (const n of names) assert.match(dry, new RegExp(`^would delete session ${before[n].id} "${n}" \\(started `, 'm'));
    assert.match(dry, new RegExp(`^would delete ${names.length} sessions: `, 'm'));
    assert.doesNotMatch(dry, /"(mid|new)"/);
    assert.deepEqual(census(db), before);
    assert.equal(diskSize(db), size0);

    // --older-than 5: the sessions moved 10 days back, all their rows.
    const out = await mcpreelOk(['prune', '--db', db, '--older-than', '5']);
    assert.deepEqual([...out.matchAll(/^deleting session \d+ "(\w+)"/gm)].map((m) => m[1]), names);
    assert.deepEqual(census(db), without(before, names));
    assert.equal(orphans(db), 0);
    assert.match(out, /^vacuumed .*: \S+ \S+ -> \S+ \S+/m);
    const size1 = diskSize(db);
    assert.ok(size1 < size0 - 4 * 1500000, `the file shrank by what was deleted: ${size0} -> ${size1}`);
    assert.equal(sql(db, 'PRAGMA freelist_count')[0].freelist_count, 0);
    assert.equal(sql(db, 'PRAGMA integrity_check')[0].integrity_check, 'ok');

    // --keep 1: all but the newest.
    const keep = await mcpreelOk(['prune', '--db', db, '--keep', '1']);
    assert.match(keep, /^deleting session \d+ "mid"/m);
    assert.deepEqual(census(db), without(before, [...names, 'mid']));
    assert.ok(diskSize(db) < size1 - 2 * 1500000, 'and shrank again');
    // Both: older than a day and not the newest -- none now.
    assert.match(await mcpreelOk(['prune', '--db', db, '--older-than', '1', '--keep', '0']), /^no sessions to delete$/m);

    // rm by name, id and 'last'; an unknown one deletes nothing.
    await recordCat(db, 'x', 10);
    await recordCat(db, 'y', 10);
    await recordCat(db, 'z', 10);
    const c = census(db);
    const bad = await runMcpreel(['rm', '--db', db, 'x', 'nope']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr.toString(), /no session with id or name 'nope'.*\n.*nothing was deleted/);
    assert.deepEqual(census(db), c);
    const rm = await mcpreelOk(['rm', '--db', db, 'x', String(c.y.id), 'last']);
    assert.match(rm, /^deleted 3 sessions: 6 messages, /m);
    assert.deepEqual(census(db), without(c, ['x', 'y', 'z']));
    assert.equal(orphans(db), 0);

    for (const [args, re] of [
      [['prune'], /say what to delete: --older-than DAYS, --keep N, or both/],
      [['prune', '--older-than', 'ten'], /--older-than 'ten': give a number of days/],
      [['prune', '--keep', '-1'], /--keep '-1': give how many/],
      [['rm'], /give the SESSIONs to delete/],
    ]) {
      const r = await runMcpreel([...args, '--db', db]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr.toString(), re);
    }
  });
});

/** Wait until the database has a session named name, at most ms. */
async function waitSession(db, name, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = spawnSync('sqlite3', [db, `SELECT id FROM sessions WHERE name = '${name}'`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() !== '') return Number(r.stdout.trim());
    if (Date.now() > deadline) throw new Error(`no session ${name} within ${ms} ms`);
    await sleep(20);
  }
}

test('a session being recorded is kept (and nothing is vacuumed) unless --force', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'live.db');
    await recordCat(db, 'done1', 1500000);
    await recordCat(db, 'done2', 1500000);
    let child;
    const rec = runMcpreel(['record', '--db', db, '--name', 'live', '--', 'cat'], {
      keepStdinOpen: true, onSpawn: (c) => { child = c; },
    });
    try {
      const id = await waitSession(db, 'live', 10000);
      child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');

      const out = await mcpreelOk(['prune', '--db', db, '--keep', '0']);
      assert.match(out, new RegExp(`^keeping session ${id}: it is being recorded \\(pid ${child.pid}; --force`, 'm'));
      assert.match(out, /^deleted 2 sessions: 4 messages/m);
      assert.match(out, new RegExp(`^not vacuuming: session ${id} is being recorded`, 'm'));
      assert.deepEqual(Object.keys(census(db)), ['live']);

      const refused = await runMcpreel(['rm', '--db', db, 'live']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr.toString(), new RegExp(`session ${id} is being recorded \\(pid ${child.pid}\\): nothing was deleted \\(--force`));
      assert.deepEqual(Object.keys(census(db)), ['live']);

      const forced = await mcpreelOk(['rm', '--db', db, '--force', '--no-vacuum', 'live']);
      assert.match(forced, new RegExp(`^deleting session ${id} "live" .* -- being recorded$`, 'm'));
      assert.deepEqual(census(db), {});
    } finally {
      child?.stdin.end();
      await rec;
    }
    // Once it has ended, --vacuum alone reclaims the space.
    const v = await mcpreelOk(['prune', '--db', db, '--vacuum']);
    assert.match(v, /^vacuumed /m);
    assert.ok(diskSize(db) < 1500000, `the file is small again: ${diskSize(db)}`);
  });
});
