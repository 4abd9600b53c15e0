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

// --- A message over --max-record-size keeps its identity -----------------

const rowsOf = (db) => sql(db, `SELECT m.seq, m.direction, m.kind, m.method, m.rpc_id, m.truncated,
  (SELECT q.seq FROM messages q WHERE q.id = m.reply_to) AS reply_seq FROM messages m ORDER BY m.seq`);

test('stdio, over --max-record-size: requests with "id" last and "method" last, and their answers, keep kind, method, id and pairing', { timeout: 120000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'id.db');
    const pad = 'y'.repeat(200 * 1024);
    // cat echoes each request as the server's; the host answers each, so
    // every message (request and answer) is over the 64K cap.
    const lines = [
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"message":"${pad}"}},"id":1}`,
      `{"jsonrpc":"2.0","id":"two","params":{"m":"${pad}","q":"\\"}{["},"method":"tools/call"}`,
      `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"${pad}"}]},"id":1}`,
      `{"jsonrpc":"2.0","error":{"code":-1,"message":"no","data":"${pad}"},"id":"two"}`,
    ];
    // The host answers once the server's copies of its two requests came
    // back, as a host does: written at once, an answer could reach
    // mcpreel before the request it answers came out of cat, and an
    // answer recorded before its request is not paired with it.
    const r = await runMcpreel(['record', '--db', db, '--max-record-size', '64K', '--', 'cat'], {
      keepStdinOpen: true,
      onSpawn: (child) => {
        child.stdin.write(`${lines[0]}\n${lines[1]}\n`);
        let seen = 0;
        let answered = false;
        child.stdout.on('data', (c) => {
          for (const b of c) if (b === 0x0a) seen++;
          if (!answered && seen >= 2) {
            answered = true;
            child.stdin.end(`${lines[2]}\n${lines[3]}\n`);
          }
        });
      },
    });
    assert.equal(r.code, 0, r.stderr.toString());
    const rows = rowsOf(db);
    const view = rows.map((m) => [m.direction, m.kind, m.method, m.rpc_id, m.truncated, m.reply_seq]);
    // The order each direction recorded them in is not fixed across the
    // two pipes; what is: each of the eight, classified and paired.
    const bySeq = new Map(rows.map((m) => [m.seq, m]));
    for (const m of rows) {
      assert.equal(m.truncated, 1);
      assert.notEqual(m.kind, 'invalid', JSON.stringify(view));
      assert.equal(m.method, 'tools/call', JSON.stringify(view));
      if (m.kind === 'response' || m.kind === 'error') {
        assert.notEqual(m.reply_seq, null, `answer ${m.seq} paired: ${JSON.stringify(view)}`);
        const q = bySeq.get(m.reply_seq);
        assert.equal(q.rpc_id, m.rpc_id);
        assert.notEqual(q.direction, m.direction);
      }
    }
    assert.deepEqual(rows.map((m) => `${m.direction} ${m.kind} ${m.rpc_id}`).sort(), [
      'c2s error "two"', 'c2s request "two"', 'c2s request 1', 'c2s response 1',
      's2c error "two"', 's2c request "two"', 's2c request 1', 's2c response 1'].sort());
    const stats = JSON.parse((await runMcpreel(['stats', '--db', db, '--json', '1'])).stdout.toString());
    // The host's two requests were echoed back unanswered by the server
    // (cat): the server's copies are the answered ones.
    const s2c = stats.methods.find((m) => m.direction === 's2c' && m.method === 'tools/call');
    assert.equal(s2c.requests, 2);
    assert.equal(s2c.answered, 2);
  });
});

test('the SDK client calls server-everything\'s echo with 300 KB under a 64K cap: rows keep identity, pair, no hung request', { timeout: 120000 }, async (t) => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { CLIENT_INFO, serverEverythingEntry, bigEchoMessage } = await import('./lib/session.mjs');
  const { MCPREEL } = await import('./lib/util.mjs');
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'sdk.db');
    const transport = new StdioClientTransport({
      command: MCPREEL,
      args: ['record', '--db', db, '--max-record-size', '64K', '--', process.execPath, serverEverythingEntry(), 'stdio'],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      stderr: 'pipe',
    });
    const client = new Client(CLIENT_INFO);
    await client.connect(transport);
    const message = bigEchoMessage(300 * 1024);
    const res = await client.callTool({ name: 'echo', arguments: { message } });
    assert.ok(JSON.stringify(res).includes(message.slice(-100)), 'the answer came whole');
    await client.close();
    await new Promise((r) => setTimeout(r, 500));
    const rows = rowsOf(db).filter((m) => m.truncated === 1);
    t.diagnostic(JSON.stringify(rows));
    assert.equal(rows.length, 2, 'the call and its answer were cut');
    const [q, a] = rows;
    assert.deepEqual([q.direction, q.kind, q.method], ['c2s', 'request', 'tools/call']);
    assert.deepEqual([a.direction, a.kind, a.method, a.rpc_id, a.reply_seq], ['s2c', 'response', 'tools/call', q.rpc_id, q.seq]);
    const stats = JSON.parse((await runMcpreel(['stats', '--db', db, '--json', '1'])).stdout.toString());
    assert.deepEqual(stats.hung ?? [], [], 'no hung request');
    const text = (await runMcpreel(['stats', '--db', db, '1'])).stdout.toString();
    assert.match(text, /no hung requests: every request was answered/);

    // replay counts the cut request and says why it is not sent.
    const rp = await runMcpreel(['replay', '--db', db, '1', '--report', 'json', '--', process.execPath, serverEverythingEntry(), 'stdio']);
    const rep = JSON.parse(rp.stdout.toString());
    t.diagnostic(`replay: ${JSON.stringify({ requests: rep.requests, same: rep.same, truncated: rep.truncated })}`);
    assert.equal(rep.requests, 2, 'initialize and the cut tools/call');
    assert.equal(rep.truncated, 1);
    assert.equal(rp.code, 0, rp.stderr.toString());
    const rt = await runMcpreel(['replay', '--db', db, '1', '--', process.execPath, serverEverythingEntry(), 'stdio']);
    assert.match(rt.stdout.toString(), /2 requests, 1 same, 0 different, 0 missing, 1 not replayed \(recorded cut at --max-record-size\)/);

    // mock explains it cannot play it (not "never answered").
    const mockClient = new Client(CLIENT_INFO);
    await mockClient.connect(new StdioClientTransport({ command: MCPREEL, args: ['mock', '--db', db, '1'], stderr: 'pipe' }));
    const err = await mockClient.callTool({ name: 'echo', arguments: { message } }).then(() => null, (e) => e);
    await mockClient.close();
    assert.ok(err, 'the mock refuses the call');
    assert.match(String(err.message), /cut at --max-record-size, so it cannot be matched or played/);
    assert.doesNotMatch(String(err.message), /never answered/);
  });
});

test('HTTP, over --max-record-size: a request body with "id" last keeps kind, method and id', { timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    defer(() => stopChild(peer.child, peer.exited));
    const db = join(dir, 'hid.db');
    const mp = await startMcpreelHttp({ db, upstream: peer.match[1], args: ['--max-record-size', '64K'] });
    defer(() => mp.stop());
    const body = bigRequest('"req-77"', 300 * 1024);
    const r = await request(`${mp.url}/mcp/mirror`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    assert.equal(r.status, 200);
    assert.equal((await mp.stop()).code, 0);
    const m = sql(db, "SELECT kind, method, rpc_id, truncated, wire_size FROM messages WHERE direction = 'c2s'")[0];
    assert.deepEqual(m, { kind: 'request', method: 'tools/call', rpc_id: '"req-77"', truncated: 1, wire_size: body.length });
  });
});
