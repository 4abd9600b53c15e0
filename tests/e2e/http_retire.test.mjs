// Many short MCP sessions through one HTTP recording: an ended session
// (DELETE) stops counting toward --max-sessions, so a long run keeps
// telling its sessions apart; live ones past the bound share the run's
// default session, and a line on stderr says so once.
//
// server-everything over Streamable HTTP issues an Mcp-Session-Id with
// each initialize and accepts DELETE.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { sql, withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** POST one JSON-RPC message; resolves {status, sid, text} once the body is read. */
async function post(url, msg, sid) {
  const headers = { ...HEADERS };
  if (sid) {
    headers['mcp-session-id'] = sid;
    headers['mcp-protocol-version'] = '2025-06-18';
  }
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(msg) });
  return { status: r.status, sid: r.headers.get('mcp-session-id'), text: await r.text() };
}

/** Begin an MCP session named tag (initialize, initialized, a ping); its id. */
async function open(url, tag) {
  const init = await post(url, {
    jsonrpc: '2.0', id: `init-${tag}`, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `retire-${tag}`, version: '1' } },
  });
  assert.equal(init.status, 200, `${tag}: initialize answered: ${init.text}`);
  assert.ok(init.sid, `${tag}: the server gave a session id`);
  const note = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid);
  assert.equal(note.status, 202, `${tag}: initialized accepted`);
  const ping = await post(url, { jsonrpc: '2.0', id: `ping-${tag}`, method: 'ping' }, init.sid);
  assert.equal(ping.status, 200, `${tag}: ping answered`);
  assert.match(ping.text, new RegExp(`"id":"ping-${tag}"`), `${tag}: the ping's answer`);
  return init.sid;
}

/** End an MCP session with DELETE. */
async function close(url, sid, tag) {
  const r = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });
  await r.text();
  assert.equal(r.status, 200, `${tag}: DELETE answered`);
}

/** The recording sessions holding a message whose rpc_id names tag's initialize or ping. */
function sessionsOfTag(db, tag) {
  return sql(db, `SELECT DISTINCT session_id AS id FROM messages
      WHERE rpc_id LIKE '%-${tag}"' ORDER BY session_id`).map((r) => r.id);
}

/** server-everything over Streamable HTTP and mcpreel recording it with args; {proxy, url, db}. */
async function startPair({ dir, defer }, args, { db = join(dir, 'rec.db'), mode = 'streamableHttp' } = {}) {
  const se = await startServerEverything(mode);
  defer(se.stop);
  const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'retire', args });
  defer(() => proxy.stop());
  return { proxy, url: `${proxy.url}${new URL(se.url).pathname}`, db };
}

test('record --max-sessions: ended sessions are retired, each short session is its own; past the bound live ones share the default session', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url, db } = await startPair(ctx, ['--max-sessions', '4']);

    // Three times the bound, one after another: each ends before the next.
    for (let i = 1; i <= 12; i++) {
      const sid = await open(url, `c${i}`);
      await close(url, sid, `c${i}`);
    }
    assert.doesNotMatch(proxy.stderr(), /sessions held at once/, 'the ended sessions never filled the bound');

    // Five at once: the fifth finds four live ones held, and no room.
    const live = [];
    for (let i = 1; i <= 5; i++) live.push(await open(url, `l${i}`));
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    const warned = stderr.match(/more than 4 MCP sessions held at once[^\n]*/g) ?? [];
    assert.equal(warned.length, 1, `said once: ${stderr}`);
    assert.match(warned[0], /default session/);

    const owner = new Map();
    for (const tag of [...Array.from({ length: 12 }, (_, i) => `c${i + 1}`), 'l1', 'l2', 'l3', 'l4']) {
      const ids = sessionsOfTag(db, tag);
      assert.equal(ids.length, 1, `${tag}: its messages are in one session: ${JSON.stringify(ids)}`);
      assert.ok(!owner.has(ids[0]), `${tag}: its session ${ids[0]} is its own, not ${owner.get(ids[0])}'s`);
      owner.set(ids[0], tag);
      const rows = sql(db, `SELECT direction, kind, method FROM messages WHERE session_id = ${ids[0]} ORDER BY seq`);
      for (const [dir, kind, method] of [['c2s', 'request', 'initialize'], ['c2s', 'notification', 'notifications/initialized'],
        ['c2s', 'request', 'ping'], ['s2c', 'response', 'ping']]) {
        assert.ok(rows.some((r) => r.direction === dir && r.kind === kind && r.method === method),
          `${tag}: ${dir} ${kind} ${method} recorded: ${JSON.stringify(rows)}`);
      }
      if (tag.startsWith('c')) {
        const ex = sql(db, `SELECT method, status FROM http_exchanges WHERE session_id = ${ids[0]} AND method = 'DELETE'`);
        assert.deepEqual(ex, [{ method: 'DELETE', status: 200 }], `${tag}: its DELETE is in its session`);
        const [s] = sql(db, `SELECT end_reason FROM sessions WHERE id = ${ids[0]}`);
        assert.equal(s.end_reason, 'the client ended the session (DELETE)');
      }
    }
    // The fifth live one went to the run's default session, with none of the others' traffic.
    const dflt = sessionsOfTag(db, 'l5');
    assert.equal(dflt.length, 1, `l5: in one session: ${JSON.stringify(dflt)}`);
    assert.ok(!owner.has(dflt[0]), `l5 is not in another session's record (${owner.get(dflt[0])})`);
    const others = sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = ${dflt[0]}
        AND rpc_id IS NOT NULL AND rpc_id NOT LIKE '%-l5"'`);
    assert.equal(others[0].n, 0, 'the default session holds no other session\'s requests');
    const total = sql(db, 'SELECT count(*) AS n FROM sessions');
    assert.equal(total[0].n, 17, '16 sessions of their own and the default one');
    assert.equal(live.length, 5);
  });
});

test('record --cassette with --max-sessions: a retired session gets its cassette too', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { dir } = ctx;
    const cassette = join(dir, 'run.jsonl');
    const { proxy, url } = await startPair(ctx, ['--max-sessions', '2', '--no-db', '--cassette', cassette], { db: null });
    for (let i = 1; i <= 5; i++) await close(url, await open(url, `k${i}`), `k${i}`);
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    const files = readdirSync(dir).filter((f) => /^run(-\d+)?\.jsonl$/.test(f)).sort();
    assert.deepEqual(files, ['run-2.jsonl', 'run-3.jsonl', 'run-4.jsonl', 'run-5.jsonl', 'run.jsonl'], `one cassette a session: ${stderr}`);
    const tags = files.map((f) => readFileSync(join(dir, f), 'utf8').match(/ping-(k\d)/)?.[1]).sort();
    assert.deepEqual(tags, ['k1', 'k2', 'k3', 'k4', 'k5'], 'each cassette holds one session');
  });
});

test('an ended session keeps what crosses its DELETE for 10 s; 14 s on, its id begins a new session', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url, db } = await startPair(ctx, []);
    const sid = await open(url, 'g');
    await close(url, sid, 'g');
    // The server no longer knows the id (404): mcpreel records it all the same.
    await post(url, { jsonrpc: '2.0', id: 'late-in-grace', method: 'ping' }, sid);
    await new Promise((r) => setTimeout(r, 14000));
    await post(url, { jsonrpc: '2.0', id: 'late-after-grace', method: 'ping' }, sid);
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    const [own] = sessionsOfTag(db, 'g');
    const of = (id) => sql(db, `SELECT session_id AS id FROM messages WHERE rpc_id = '"${id}"'`).map((r) => r.id);
    assert.deepEqual(of('late-in-grace'), [own], 'a request right after the DELETE is in the ended session');
    const after = of('late-after-grace');
    assert.equal(after.length, 1);
    assert.notEqual(after[0], own, 'after the grace the id begins a new session');
  });
});

test('traffic for an ended session begins its grace anew: an id still in use is not let go under it', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url, db } = await startPair(ctx, []);
    const sid = await open(url, 'r');
    await close(url, sid, 'r');
    // Each 6 s apart, so the last is 12 s after the DELETE, past one
    // grace from the end but within one from the request before it.
    await new Promise((r) => setTimeout(r, 6000));
    await post(url, { jsonrpc: '2.0', id: 'again-6', method: 'ping' }, sid);
    await new Promise((r) => setTimeout(r, 6000));
    await post(url, { jsonrpc: '2.0', id: 'again-12', method: 'ping' }, sid);
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    const [own] = sessionsOfTag(db, 'r');
    const of = (id) => sql(db, `SELECT session_id AS id FROM messages WHERE rpc_id = '"${id}"'`).map((r) => r.id);
    assert.deepEqual(of('again-6'), [own], 'a request 6 s after the DELETE is in the ended session');
    assert.deepEqual(of('again-12'), [own], 'and one 6 s after that, 12 s after the DELETE, too');
  });
});

test('record --check follows every session to the end of the run: ended sessions are not let go, the bound counts them', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url, db } = await startPair(ctx, ['--check', '--max-sessions', '2']);
    for (let i = 1; i <= 4; i++) await close(url, await open(url, `v${i}`), `v${i}`);
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    assert.match(stderr, /more than 2 MCP sessions held at once/);
    const [a] = sessionsOfTag(db, 'v1');
    const [b] = sessionsOfTag(db, 'v2');
    assert.notEqual(a, b, 'the first two are sessions of their own');
    assert.deepEqual(sessionsOfTag(db, 'v3'), sessionsOfTag(db, 'v4'), 'the later ones share the default session');
  });
});

test('legacy HTTP+SSE: a session whose event stream ended is let go as well', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url, db } = await startPair(ctx, ['--max-sessions', '2'], { mode: 'sse' });
    for (let i = 1; i <= 5; i++) {
      const client = new Client({ name: `retire-sse${i}`, version: '1' });
      await client.connect(new SSEClientTransport(new URL(url)));
      await client.ping();
      await client.close();
      // Its event stream has ended in mcpreel before the next begins.
      await new Promise((r) => setTimeout(r, 200));
    }
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    assert.doesNotMatch(stderr, /sessions held at once/, 'the ended ones never filled the bound');
    const rows = sql(db, `SELECT session_id AS id, CAST(raw AS TEXT) AS raw FROM messages
        WHERE method = 'initialize' AND direction = 'c2s'`);
    const owner = new Map(rows.map((r) => [JSON.parse(r.raw).params.clientInfo.name, r.id]));
    assert.equal(owner.size, 5, `five initializes: ${JSON.stringify(rows)}`);
    assert.equal(new Set(owner.values()).size, 5, `each in a session of its own: ${JSON.stringify([...owner])}`);
    const legacy = sql(db, "SELECT count(*) AS n FROM sessions WHERE transport = 'sse'");
    assert.equal(legacy[0].n, 5, 'five legacy sessions');
  });
});

test('at the bound, crossing it again soon after is not said again: one line, not one a session', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async (ctx) => {
    const { proxy, url } = await startPair(ctx, ['--max-sessions', '1']);
    const a = await open(url, 'w1');
    await open(url, 'w2'); // no room: the default session, said
    await close(url, a, 'w1');
    const b = await open(url, 'w3'); // w1 is retired for it
    await open(url, 'w4'); // no room again
    await close(url, b, 'w3');
    await open(url, 'w5'); // w3 retired for it
    await open(url, 'w6'); // and again
    const { code, stderr } = await proxy.stop();
    assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
    const warned = stderr.match(/more than 1 MCP sessions held at once/g) ?? [];
    assert.equal(warned.length, 1, `said once, not at each crossing: ${stderr}`);
  });
});

for (const durable of [false, true]) {
  test(`a session that found no room stays in the default session when room is made later${durable ? ' (--durable)' : ''}`, { skip: needsHttp, timeout: 120000 }, async () => {
    await withCleanup(async (ctx) => {
      const { proxy, url, db } = await startPair(ctx, ['--max-sessions', '1', ...(durable ? ['--durable'] : [])]);
      const a = await open(url, 'x1');
      const b = await open(url, 'x2'); // no room: the default session
      await close(url, a, 'x1'); // room could be made for x2 now
      const again = await post(url, { jsonrpc: '2.0', id: 'again-x2', method: 'ping' }, b);
      assert.equal(again.status, 200, `x2: ping answered: ${again.text}`);
      await close(url, b, 'x2');
      const c = await open(url, 'x3'); // a new session is still its own
      await close(url, c, 'x3');
      const { code, stderr } = await proxy.stop();
      assert.equal(code, 0, `mcpreel exits 0: ${stderr}`);
      const x2 = sessionsOfTag(db, 'x2');
      assert.equal(x2.length, 1, `x2 is not split between sessions: ${JSON.stringify(x2)}`);
      const rows = sql(db, `SELECT rpc_id FROM messages WHERE session_id = ${x2[0]} AND direction = 'c2s' AND rpc_id IS NOT NULL`).map((r) => r.rpc_id);
      assert.deepEqual(rows.sort(), ['"again-x2"', '"init-x2"', '"ping-x2"'], `x2's requests together: ${JSON.stringify(rows)}`);
      const [x1] = sessionsOfTag(db, 'x1');
      const [x3] = sessionsOfTag(db, 'x3');
      assert.ok(x1 !== x3 && x1 !== x2[0] && x3 !== x2[0], `x1, x3 their own: ${x1} ${x3} ${x2[0]}`);
    });
  });
}
