// The real peers: the TypeScript SDK client driving server-everything over
// stdio, directly and through `mcpreel record`.  The client must get the
// same results either way, and the record must hold every message.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, expectedKind, sql, tempDir } from './lib/util.mjs';

test('SDK client + server-everything: same results through mcpreel, every message recorded', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const { command, args } = serverEverythingCommand();

    const direct = await runSession(command, args, { stderr: 'pipe' });
    const diag = {};
    const proxied = await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args],
      { stderr: 'pipe', diagnostics: diag });
    assert.deepEqual(proxied, direct, 'the client sees the same results through mcpreel');

    const rows = sql(db, `SELECT m.id, seq, direction, kind, method, rpc_id, size, reply_to,
        CAST(raw AS TEXT) AS raw FROM messages m
      WHERE session_id = (SELECT id FROM sessions WHERE name = 'sdk') ORDER BY seq`);

    // Every message the client sent or received is in the record, in order.
    const c2s = rows.filter((r) => r.direction === 'c2s').map((r) => JSON.parse(r.raw));
    const s2c = rows.filter((r) => r.direction === 's2c').map((r) => JSON.parse(r.raw));
    assert.deepEqual(c2s, diag.messagesSent, 'host -> server: every message, in order');
    assert.deepEqual(s2c, diag.messagesReceived, 'server -> host: every message, in order');

    // Kind, method and id agree with an independent parse of the bytes.
    const requests = new Map();
    for (const r of rows) {
      assert.equal(r.kind, expectedKind(Buffer.from(r.raw)), `seq ${r.seq}: kind`);
      assert.notEqual(r.kind, 'invalid');
      const m = JSON.parse(r.raw);
      assert.equal(r.size, Buffer.byteLength(r.raw));
      if ('id' in m) assert.deepEqual(JSON.parse(r.rpc_id), m.id, `seq ${r.seq}: id`);
      else assert.equal(r.rpc_id, null);
      if (r.kind === 'request') {
        assert.equal(r.method, m.method);
        requests.set(`${r.direction}:${r.rpc_id}`, r);
      } else if (r.kind === 'notification') {
        assert.equal(r.method, m.method);
      } else {
        // A response carries its request's method and row.
        const q = requests.get(`${r.direction === 'c2s' ? 's2c' : 'c2s'}:${r.rpc_id}`);
        assert.ok(q, `seq ${r.seq}: response to a recorded request`);
        assert.equal(r.reply_to, q.id);
        assert.equal(r.method, q.method);
      }
    }

    const has = (dir, kind, method) => rows.some((r) => r.direction === dir && r.kind === kind && r.method === method);
    for (const method of ['initialize', 'tools/list', 'tools/call', 'resources/list', 'resources/read',
      'resources/templates/list', 'prompts/list', 'prompts/get', 'logging/setLevel', 'ping']) {
      assert.ok(has('c2s', 'request', method), `host request ${method}`);
      assert.ok(has('s2c', 'response', method) || has('s2c', 'error', method), `server answer to ${method}`);
    }
    for (const method of ['sampling/createMessage', 'roots/list', 'elicitation/create']) {
      assert.ok(has('s2c', 'request', method), `server request ${method}`);
      assert.ok(has('c2s', 'response', method), `host answer to ${method}`);
    }
    assert.ok(has('s2c', 'notification', 'notifications/progress'), 'progress notifications');
    assert.ok(has('c2s', 'notification', 'notifications/initialized'));
    assert.ok(rows.some((r) => r.method === 'tools/call' && r.direction === 'c2s' && r.size > 2 * 1024 * 1024),
      'the 2 MB echo request is recorded whole');
    assert.ok(rows.some((r) => r.method === 'tools/call' && r.direction === 's2c' && r.size > 2 * 1024 * 1024),
      'the 2 MB echo response is recorded whole');

    // Every host request got its answer: the exchanges view pairs them.
    const unanswered = sql(db, `SELECT method, rpc_id FROM exchanges
      WHERE session_id = (SELECT id FROM sessions WHERE name = 'sdk') AND response_seq IS NULL`);
    assert.deepEqual(unanswered, []);
    const lat = sql(db, `SELECT min(latency_ns) AS lo FROM exchanges`)[0];
    assert.ok(lat.lo > 0, 'latencies are positive');

    const s = sql(db, `SELECT exit_status, ended_ns, started_ns, target FROM sessions WHERE name = 'sdk'`)[0];
    assert.equal(s.exit_status, 0);
    assert.ok(s.ended_ns > s.started_ns);
    assert.deepEqual(JSON.parse(s.target), [command, ...args]);
    const stderr = sql(db, `SELECT count(*) AS n FROM events WHERE kind = 'stderr' AND CAST(text AS TEXT) LIKE '%STDIO%'`)[0];
    assert.ok(stderr.n >= 1, "the server's stderr is recorded");
  } finally {
    t.cleanup();
  }
});
