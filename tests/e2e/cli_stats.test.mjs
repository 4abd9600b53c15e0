// `mcpreel stats` on real recordings: the SDK client with server-everything
// over stdio, and `cat` echoing lines (answers of our own, errors among
// them, and requests nothing answers).  Every figure is worked out again
// here from the `exchanges` view as the sqlite3 shell reads it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, runMcpreel, sql, tempDir } from './lib/util.mjs';

// The host's lines all arrive before `cat` echoes them (as in
// cli_views.test.mjs): the echoed answers (s2c) answer the host's requests
// (c2s tools/call: one isError, one error, one with the words only in a
// string); resources/read, and the echoed requests, go unanswered.
const CAT_INPUT = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}',
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"c"}}',
  '{"jsonrpc":"2.0","id":4,"method":"resources/read"}',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}',
  '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}',
  '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\\"isError\\":true"}]}}',
].join('\n') + '\n';

/** Nearest rank: the value at rank ceil(n * p / 100), lowest first. */
function pct(sorted, p) {
  return sorted.length === 0 ? null : sorted[Math.ceil((sorted.length * p) / 100) - 1];
}

/** What stats should say of the sessions in where (an SQL condition on e.session_id). */
function expected(db, where) {
  const rows = sql(db, `SELECT e.session_id, e.direction, e.method, e.rpc_id, e.request_seq, e.response_seq,
      e.outcome, e.latency_ns, CAST(e.response AS TEXT) AS response, s.ended_ns - e.request_ts_ns AS age
    FROM exchanges e JOIN sessions s ON s.id = e.session_id WHERE ${where}`);
  const by = new Map();
  for (const r of rows) {
    const k = `${r.direction} ${r.method}`;
    if (!by.has(k)) by.set(k, { direction: r.direction, method: r.method, lat: [], requests: 0, errors: 0 });
    const m = by.get(k);
    m.requests++;
    if (r.response_seq !== null) m.lat.push(r.latency_ns);
    if (r.outcome === 'error' || (r.outcome === 'response' && JSON.parse(r.response).result?.isError === true)) m.errors++;
  }
  const methods = [...by.values()].sort((a, b) => (a.direction + a.method < b.direction + b.method ? -1 : 1)).map((m) => {
    const s = m.lat.sort((a, b) => a - b);
    return {
      direction: m.direction, method: m.method, requests: m.requests, answered: s.length, errors: m.errors,
      p50_ns: pct(s, 50), p95_ns: pct(s, 95), p99_ns: pct(s, 99), max_ns: s.length ? s.at(-1) : null,
      // No fault injected here (fault_store.test.mjs counts them).
      faulted: 0,
    };
  });
  const hung = rows.filter((r) => r.response_seq === null).sort((a, b) => a.session_id - b.session_id || a.request_seq - b.request_seq)
    .map((r) => ({ session: r.session_id, seq: r.request_seq, direction: r.direction, method: r.method, id: JSON.parse(r.rpc_id), age_ns: r.age }));
  const sessions = sql(db, `SELECT s.id, s.ended_ns - s.started_ns AS duration_ns,
      (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS messages,
      (SELECT coalesce(sum(size), 0) FROM messages m WHERE m.session_id = s.id) AS bytes
    FROM sessions s WHERE ${where.replace(/e\.session_id/g, 's.id')} ORDER BY s.id`);
  return { methods, hung, sessions };
}

async function statsJson(db, args) {
  const r = await runMcpreel(['stats', '--db', db, '--json', ...args]);
  assert.equal(r.code, 0, r.stderr.toString());
  const lines = r.stdout.toString().trim().split('\n');
  assert.equal(lines.length, 1, 'one JSON object');
  return JSON.parse(lines[0]);
}

function compare(got, want, what) {
  assert.deepEqual(got.methods, want.methods, `${what}: methods`);
  assert.deepEqual(got.hung.map(({ ts_ns, session_ended, ...h }) => h), want.hung, `${what}: hung requests`);
  assert.ok(got.hung.every((h) => h.session_ended === true));
  assert.equal(got.hung_count, want.hung.length, `${what}: hung_count`);
  assert.deepEqual(got.sessions.map((s) => ({ id: s.id, duration_ns: s.duration_ns, messages: s.messages, bytes: s.bytes })),
    want.sessions, `${what}: sessions`);
}

test('stats: per-method counts, errors and latency percentiles, sessions and hung requests agree with sqlite3', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'stats.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
    const cat = await runMcpreel(['record', '--db', db, '--name', 'cat', '--', 'cat'], { input: Buffer.from(CAT_INPUT) });
    assert.equal(cat.code, 0, cat.stderr.toString());

    // The SDK session: many methods both ways, all answered.
    const sdk = await statsJson(db, ['sdk']);
    const wantSdk = expected(db, 'e.session_id = 1');
    compare(sdk, wantSdk, 'sdk');
    assert.ok(sdk.methods.length >= 10, 'many methods');
    const call = sdk.methods.find((m) => m.direction === 'c2s' && m.method === 'tools/call');
    assert.ok(call.requests >= 5 && call.answered === call.requests && call.p50_ns > 0 && call.max_ns >= call.p99_ns);
    assert.ok(sdk.methods.some((m) => m.direction === 's2c' && m.method === 'sampling/createMessage'));

    // The cat session (the default, 'last'): errors and hung requests.
    const last = await statsJson(db, []);
    compare(last, expected(db, 'e.session_id = 2'), 'cat');
    const catCall = last.methods.find((m) => m.direction === 'c2s' && m.method === 'tools/call');
    assert.deepEqual([catCall.requests, catCall.answered, catCall.errors], [3, 3, 2], 'isError true and an error response; not the words in a string');
    assert.ok(last.hung.length >= 4, "the host's requests, echoed back as the server's, are not answered");

    // Everything at once.
    compare(await statsJson(db, ['--all']), expected(db, '1'), 'all');

    // The text table says the same.
    const text = await runMcpreel(['stats', '--db', db, 'cat']);
    const out = text.stdout.toString();
    assert.match(out, /^\s+ID\s+NAME\s+TRANS\s+STARTED\s+DURATION\s+MSGS\s+BYTES\n\s+2\s+cat\s+stdio /);
    assert.match(out, /\n->\s+tools\/call\s+3\s+3\s+2\s+\S+\s+\S+\s+\S+\s+\S+\n/);
    assert.match(out, /\nhung requests \(no response\):\n\s*SESSION\s+SEQ\s+DIR\s+METHOD\s+ID\s+AGE\n\s+2\s+4\s+->\s+resources\/read\s+4\s+\S+ \(until the session ended\)\n/);
    const sdkText = (await runMcpreel(['stats', '--db', db, 'sdk'])).stdout.toString();
    assert.match(sdkText, /no hung requests: every request was answered/);

    // Many hung requests: the text lists 20 and counts the rest.
    const many = Array.from({ length: 30 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"slow"}`).join('\n') + '\n';
    const r = await runMcpreel(['record', '--db', db, '--name', 'many', '--', 'cat'], { input: Buffer.from(many) });
    assert.equal(r.code, 0);
    const want = expected(db, "e.session_id = (SELECT id FROM sessions WHERE name = 'many')");
    assert.equal(want.hung.length, 60, 'each request and its echo');
    const manyJson = await statsJson(db, ['many']);
    compare(manyJson, want, 'many');
    const manyText = (await runMcpreel(['stats', '--db', db, 'many'])).stdout.toString();
    assert.equal(manyText.split('\n').filter((l) => /^\s+3\s+\d+\s+(->|<-)\s+slow\s/.test(l)).length, 20);
    assert.match(manyText, /\n\.\.\. and 40 more \(--json lists 1000\)\n/);

    for (const [a, re] of [[['--all', 'sdk'], /give one SESSION, or --all/], [['nope'], /no session with id or name 'nope'/]]) {
      const r = await runMcpreel(['stats', '--db', db, ...a]);
      assert.equal(r.code, 2);
      assert.match(r.stderr.toString(), re);
    }
  } finally {
    t.cleanup();
  }
});
