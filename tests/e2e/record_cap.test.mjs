// Messages longer than the record keeps: above SQLite's length limit (with
// --max-record-size 0, "no cap"), and above --max-record-size.  They go
// through whole; the record keeps their first bytes, size and SHA-256, says
// why, and (below) keeps their identity: kind, method, id and pairing.
//
// SQLite's limit is 1 GB; MCPREEL_TEST_SQLITE_LENGTH lowers it to 1 MiB
// here so that a 3 MiB message is above it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

import { PEERS_DIR, runMcpreel, sql, withCleanup } from './lib/util.mjs';
import { request, spawnUntilLine, startMcpreelHttp, stopChild } from './lib/servers.mjs';

const MiB = 1024 * 1024;
const LIMIT = String(MiB);
const sha = (b) => createHash('sha256').update(b).digest('hex');

function bigRequest(id, len, { idLast = true } = {}) {
  const pad = 'x'.repeat(len);
  return idLast
    ? `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"message":"${pad}"}},"id":${id}}`
    : `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"${pad}"}}}`;
}

test('stdio, --max-record-size 0, a 3 MiB message above SQLite\'s 1 MiB limit: recorded as a prefix, with size, hash and why', { timeout: 120000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 's.db');
    const line = bigRequest(1, 3 * MiB);
    const r = await runMcpreel(['record', '--db', db, '--max-record-size', '0', '--', 'cat'], {
      input: `${line}\n`, env: { MCPREEL_TEST_SQLITE_LENGTH: LIMIT },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), `${line}\n`, 'forwarded whole');
    const err = r.stderr.toString();
    assert.doesNotMatch(err, /NOT NULL|could not be recorded/);
    assert.match(err, new RegExp(`a message from the host \\(stdin\\) is longer than SQLite can store \\(${line.length} bytes\\): forwarded whole, recorded as its first \\d+ bytes`));
    assert.doesNotMatch(err, /--max-record-size \d/, 'no cap the user did not give');
    const rows = sql(db, 'SELECT direction, size, wire_size, sha256, truncated FROM messages ORDER BY seq');
    assert.equal(rows.length, 2, 'both directions recorded');
    for (const m of rows) {
      assert.equal(m.truncated, 1);
      assert.equal(m.wire_size, line.length);
      assert.equal(m.sha256, sha(line));
      assert.ok(m.size > 0 && m.size < MiB, `kept ${m.size} bytes, under the limit`);
    }
    const notes = sql(db, "SELECT CAST(text AS TEXT) AS text FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%SQLite%'");
    assert.equal(notes.length, 2, 'a note in the record for each');
    assert.equal(sql(db, 'SELECT messages_lost FROM sessions')[0].messages_lost, 0);
    t.diagnostic(notes[0].text);
  });
});

test('HTTP, --max-record-size 0, a 3 MiB request body above SQLite\'s 1 MiB limit: recorded as a prefix, with why', { timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    defer(() => stopChild(peer.child, peer.exited));
    const db = join(dir, 'h.db');
    const mp = await startMcpreelHttp({ db, upstream: peer.match[1], args: ['--max-record-size', '0'], env: { MCPREEL_TEST_SQLITE_LENGTH: LIMIT } });
    defer(() => mp.stop());
    const body = bigRequest(7, 3 * MiB);
    const r = await request(`${mp.url}/mcp/mirror`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body.toString()).body, body, 'the upstream got every byte');
    const st = await mp.stop();
    assert.equal(st.code, 0);
    assert.match(st.stderr, /a message \(a request body\) is longer than SQLite can store \(\d+ bytes\): forwarded whole, recorded as its first \d+ bytes/);
    assert.equal(sql(db, "SELECT count(*) AS n FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%longer than SQLite can store%'")[0].n, 2, 'a note for the request and one for the mirrored response');
    const m = sql(db, "SELECT size, wire_size, sha256, truncated FROM messages WHERE direction = 'c2s'")[0];
    assert.equal(m.truncated, 1);
    assert.equal(m.wire_size, body.length);
    assert.equal(m.sha256, sha(body));
    assert.ok(m.size < MiB);
  });
});
