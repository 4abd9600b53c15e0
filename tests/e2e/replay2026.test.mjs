// Replay of a 2026-07-28 session (no initialize, no sessions), recorded
// from our peer over stdio: the multi round-trip request is retried with
// the live requestState (a recorded one is refused by the peer), the
// listen stream's notifications are counted, and over HTTP the headers
// 2026-07-28 requires (Mcp-Method, Mcp-Name, Mcp-Param-*) are rebuilt.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { run2026 } from './lib/client2026.mjs';
import { spawnUntilLine, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const PEER = join(PEERS_DIR, 'peer2026.mjs');

async function record(dir) {
  const db = join(dir, 'r.db');
  const out = await run2026(MCPREEL, ['record', '--db', db, '--name', 's2026', '--', process.execPath, PEER]);
  assert.equal(out.confirm, 'confirmed: deploy', 'the recorded client completed the round trip');
  assert.equal(out.listen, 'complete');
  return db;
}

async function replay(db, dir, target, extra = []) {
  const json = join(dir, `rep-${Math.random().toString(36).slice(2)}.json`);
  const r = await runMcpreel(['replay', '--db', db, 's2026', '--report', 'json', '-o', json, '--no-record', ...extra, ...target],
    { timeoutMs: 60000 });
  return { code: r.code, stderr: r.stderr.toString(), rep: JSON.parse(readFileSync(json, 'utf8')) };
}

test('2026-07-28: replay over stdio and over HTTP, the round trip with the live requestState', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = await record(t.dir);
    const n = sql(db, `SELECT count(*) AS n FROM exchanges WHERE direction = 'c2s' AND response_seq IS NOT NULL`)[0].n;
    assert.equal(n, 8);

    const s = await replay(db, t.dir, ['--', process.execPath, PEER]);
    assert.equal(s.code, 0, `${s.stderr} ${JSON.stringify(s.rep.differences)}`);
    assert.equal(s.rep.same, 8);
    assert.deepEqual(s.rep.differences, []);
    assert.deepEqual(s.rep.notifications['notifications/resources/updated'], { recorded: 2, replayed: 2 });
    assert.deepEqual(s.rep.notifications['notifications/subscriptions/acknowledged'], { recorded: 1, replayed: 1 });

    const peer = await spawnUntilLine(process.execPath, [PEER, '--http'], {
      stream: 'stdout', pattern: /^peer2026: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'peer2026 --http',
    });
    try {
      const h = await replay(db, t.dir, ['--upstream', `${peer.match[1]}/mcp`, '--notifications', 'strict']);
      assert.equal(h.code, 0, `${h.stderr} ${JSON.stringify(h.rep.differences)} ${JSON.stringify(h.rep.notes)}`);
      assert.equal(h.rep.same, 8);
      assert.equal(h.rep.notifications_compared, true);
    } finally {
      await stopChild(peer.child, peer.exited);
    }
  } finally {
    t.cleanup();
  }
});

test('2026-07-28: a server that answers one tool differently: exactly that request', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = await record(t.dir);
    const v = await replay(db, t.dir, ['--', process.execPath, PEER, '--variant', '1']);
    assert.equal(v.code, 1);
    assert.equal(v.rep.different, 1);
    assert.deepEqual(v.rep.differences.map((d) => [d.method, d.path, d.recorded, d.replayed]),
      [['tools/call', '$.result.content[0].text', 'echo: hello', 'ECHO: hello']]);
  } finally {
    t.cleanup();
  }
});
