// Byte-exactness of `mcpreel record` over stdio, with peers of ours: every
// line is forwarded unchanged both ways, whatever it holds, and recorded
// with the exact bytes and the right kind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import { MCPREEL, PEERS_DIR, expectedKind, runMcpreel, splitLines, sql, tempDir } from './lib/util.mjs';

const deep = (n) => '['.repeat(n) + ']'.repeat(n);

// Lines that a host or server might send, valid or not.  Each is one line on
// the wire; the expected kind is also checked against an independent
// classification with JSON.parse (expectedKind).
const LINES = [
  ['request', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}')],
  ['notification', Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}')],
  ['response', Buffer.from('{"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}}')],
  ['error', Buffer.from('{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}')],
  ['batch', Buffer.from('[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]')],
  ['invalid', Buffer.from('this is not json')],
  ['notification', Buffer.from('{"jsonrpc":"2.0","method":"cr/line"}\r')],
  ['invalid', Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['invalid', Buffer.from('{"jsonrpc":"2.0","method":"nul\u0000byte"}')],
  ['invalid', Buffer.alloc(0)],
  ['invalid', Buffer.from('     ')],
  ['request', Buffer.from('{"jsonrpc":"2.0","id":3,"method":"deep","params":{"a":' + deep(100000) + '}}')],
  ['invalid', Buffer.from('['.repeat(100000))],
  ['request', Buffer.from('{"jsonrpc":"2.0","id":4,"method":"t\\u00e9st","params":{"n":1e400,"big":123456789012345678901234567890}}')],
  ['request', Buffer.from(`{"jsonrpc":"2.0","id":8,"method":"bignum","params":{"n":${'9'.repeat(300)},"neg":-${'1'.repeat(300)}.5e-400}}`)],
  ['invalid', Buffer.from('1e400')],
  ['batch', Buffer.from('[]')],
  ['invalid', Buffer.from([0x00])],
  ['invalid', Buffer.from('\r')],
  ['request', Buffer.from('{"method":"dup","method":"tools/list","id":5,"jsonrpc":"2.0"}')],
  ['request', Buffer.from('{"jsonrpc":"2.0","id":6,"method":"utf8","params":{"s":"h\u00e9llo \u{1F600} \u4e16\u754c"}}')],
];

function payload(lines, lastWithoutNewline) {
  const parts = [];
  lines.forEach(([, bytes], i) => {
    parts.push(bytes);
    if (!(lastWithoutNewline && i === lines.length - 1)) parts.push(Buffer.from('\n'));
  });
  return Buffer.concat(parts);
}

test('expected kinds agree with an independent JSON parser', () => {
  for (const [kind, bytes] of LINES) {
    assert.equal(expectedKind(bytes), kind, `line ${JSON.stringify(bytes.toString('latin1').slice(0, 60))}`);
  }
});

// The host's side is a socketpair when Node spawns mcpreel, and real pipes
// in a shell pipeline, where mcpreel forwards with tee(2) instead of read
// and write: both must be byte-exact.
async function runPiped(args, input, dir) {
  const inFile = join(dir, 'host-in.bin');
  const outFile = join(dir, 'host-out.bin');
  const errFile = join(dir, 'host-err.txt');
  writeFileSync(inFile, input);
  let code = 0;
  try {
    execFileSync('/bin/bash', ['-c', 'set -o pipefail; cat "$IN" | "$@" 2>"$ERR" | cat >"$OUT"',
      'bash', MCPREEL, ...args], {
      env: { ...process.env, IN: inFile, OUT: outFile, ERR: errFile, ASAN_OPTIONS: 'detect_leaks=1' },
      timeout: 30000,
    });
  } catch (e) {
    code = e.status ?? -1;
  }
  return { code, stdout: readFileSync(outFile), stderr: readFileSync(errFile, 'utf8') };
}

for (const via of ['a socketpair', 'pipes']) test(`every byte passes through unchanged both ways and is recorded exactly (host on ${via})`, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const log = join(t.dir, 'received.bin');
    const sendFile = join(t.dir, 'send.bin');
    // The server's direction gets the lines in reverse order, and a last
    // line without a newline.
    const s2cLines = [...LINES].reverse();
    const s2c = payload(s2cLines, true);
    writeFileSync(sendFile, s2c);
    const c2s = payload(LINES, false);

    const args = ['record', '--db', db, '--name', 'bytes', '--', process.execPath,
      join(PEERS_DIR, 'logpeer.mjs'), log, sendFile];
    const r = via === 'pipes' ? await runPiped(['record', '-vv', ...args.slice(1)], c2s, t.dir)
      : await runMcpreel(args, { input: c2s });
    assert.equal(r.code, 0, `exit code; stderr: ${r.stderr}`);
    if (via === 'pipes') {
      assert.match(r.stderr, /the host \(stdin\) -> the server \(stdin\): pipes both sides: forwarded with tee/);
      assert.match(r.stderr, /the server \(stdout\) -> the host \(stdout\): pipes both sides: forwarded with tee/);
    }

    // The wire: what the server received, and what the host got.
    assert.ok(readFileSync(log).equals(c2s), 'server received exactly the host bytes');
    assert.ok(r.stdout.equals(s2c), 'host received exactly the server bytes (and nothing of ours)');

    // The record.
    const rows = sql(db, `SELECT seq, direction, kind, method, rpc_id, size, hex(raw) AS hex
      FROM messages WHERE session_id = (SELECT id FROM sessions WHERE name = 'bytes') ORDER BY seq`);
    for (const [dir, lines] of [['c2s', LINES], ['s2c', s2cLines]]) {
      const mine = rows.filter((x) => x.direction === dir);
      assert.equal(mine.length, lines.length, `${dir}: one row per line`);
      mine.forEach((row, i) => {
        const [kind, bytes] = lines[i];
        const raw = Buffer.from(row.hex, 'hex');
        assert.ok(raw.equals(bytes), `${dir} row ${i}: raw equals the line's bytes`);
        assert.equal(row.size, bytes.length);
        assert.equal(row.kind, kind, `${dir} row ${i}: kind`);
        if (kind !== 'invalid') JSON.parse(raw.toString('utf8')); // throws if not JSON
      });
    }
    const seqs = rows.map((x) => x.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'seq counts 1..N');

    const byId = (dir, id) => rows.find((x) => x.direction === dir && x.rpc_id === id);
    assert.equal(byId('c2s', '1').method, 'initialize');
    assert.equal(byId('c2s', '4').method, 't\u00e9st', 'escaped method decoded');
    assert.equal(byId('c2s', '5').method, 'tools/list', 'duplicate key: the last wins');
    assert.equal(byId('c2s', '"s-1"').kind, 'response', 'string ids keep their quotes');

    const notes = sql(db, `SELECT kind, CAST(text AS TEXT) AS text FROM events WHERE kind = 'note'`);
    assert.ok(notes.some((n) => /no newline|after the last newline/.test(n.text)), 'the unterminated last line is noted');
    const session = sql(db, `SELECT exit_status, ended_ns, transport FROM sessions WHERE name = 'bytes'`)[0];
    assert.equal(session.exit_status, 0);
    assert.equal(session.transport, 'stdio');
    assert.ok(session.ended_ns > 0);
    assert.equal(statSync(db).mode & 0o777, 0o600, 'database readable only by its owner');
  } finally {
    t.cleanup();
  }
});

test('a server that exits with status 3 mid-session: mcpreel exits 3 and records it', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const req = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    // The host keeps stdin open: mcpreel must notice the exit by itself.
    let child;
    const done = runMcpreel(['record', '--db', db, '--', process.execPath, join(PEERS_DIR, 'exitpeer.mjs'), '3'],
      { input: Buffer.from(req), keepStdinOpen: true, timeoutMs: 15000, onSpawn: (c) => { child = c; } });
    const r = await done;
    child.stdin.destroy();
    assert.equal(r.code, 3, `stderr: ${r.stderr}`);
    assert.equal(r.stdout.toString(), '{"jsonrpc":"2.0","id":1,"result":{}}\n');
    const s = sql(db, 'SELECT exit_status, exit_signal, end_reason FROM sessions')[0];
    assert.equal(s.exit_status, 3);
    assert.equal(s.exit_signal, null);
    assert.match(s.end_reason, /status 3/);
    const ev = sql(db, `SELECT kind, CAST(text AS TEXT) AS text FROM events ORDER BY id`);
    assert.ok(ev.some((e) => e.kind === 'exit' && /status 3/.test(e.text)), 'exit event');
    assert.ok(ev.some((e) => e.kind === 'stderr' && /exitpeer: answering ping/.test(e.text)), 'stderr recorded');
    assert.match(r.stderr.toString(), /exitpeer: answering ping/, 'stderr passed on');
    const m = sql(db, 'SELECT direction, kind, method FROM messages ORDER BY seq');
    assert.deepEqual(m, [
      { direction: 'c2s', kind: 'request', method: 'ping' },
      { direction: 's2c', kind: 'response', method: 'ping' },
    ]);
  } finally {
    t.cleanup();
  }
});

test('a missing server command: a clear error and exit 127', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const r = await runMcpreel(['record', '--db', db, '--', 'mcpreel-no-such-server-xyz', '--flag']);
    assert.equal(r.code, 127);
    assert.match(r.stderr.toString(), /mcpreel-no-such-server-xyz.*not found/);
    assert.equal(r.stdout.length, 0);
    const s = sql(db, 'SELECT end_reason, exit_status FROM sessions')[0];
    assert.match(s.end_reason, /not found/, 'the failed start is recorded');
    assert.equal(s.exit_status, null);
  } finally {
    t.cleanup();
  }
});

test('SIGTERM to mcpreel is passed on to the server, and its status comes back', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const flag = join(t.dir, 'flag');
    let child;
    const done = runMcpreel(['record', '--db', db, '--', process.execPath, join(PEERS_DIR, 'sigpeer.mjs'), flag],
      { keepStdinOpen: true, timeoutMs: 15000, onSpawn: (c) => { child = c; } });
    // Wait for the server to be ready (its stderr comes through ours).
    await new Promise((res) => {
      const check = (c) => { if (c.toString().includes('sigpeer ready')) { child.stderr.off('data', check); res(); } };
      child.stderr.on('data', check);
    });
    child.kill('SIGTERM');
    const r = await done;
    assert.equal(readFileSync(flag, 'utf8'), 'SIGTERM', 'the server got SIGTERM');
    assert.equal(r.code, 7, 'mcpreel exits with the server status');
    const ev = sql(db, `SELECT kind, CAST(text AS TEXT) AS text FROM events WHERE kind = 'note'`);
    assert.ok(ev.some((e) => /SIGTERM|Terminated/.test(e.text)), 'the signal is noted in the record');
  } finally {
    t.cleanup();
  }
});

test('the host closing stdin stops the server and mcpreel exits with its status', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const r = await runMcpreel(['record', '--db', db, '--', 'cat'], { input: Buffer.from('{"jsonrpc":"2.0","method":"a"}\n') });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.toString(), '{"jsonrpc":"2.0","method":"a"}\n');
    const s = sql(db, 'SELECT exit_status, end_reason FROM sessions')[0];
    assert.equal(s.exit_status, 0);
    assert.match(s.end_reason, /host closed/);
  } finally {
    t.cleanup();
  }
});

test('help and usage errors', async () => {
  for (const args of [['--help'], ['record', '--help'], ['sessions', '--help'], ['show', '--help']]) {
    const r = await runMcpreel(args);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.stdout.toString(), /usage: mcpreel/);
  }
  const none = await runMcpreel(['record']);
  assert.equal(none.code, 2);
  assert.match(none.stderr.toString(), /no server command/);
  const bogus = await runMcpreel(['frobnicate']);
  assert.equal(bogus.code, 2);
  assert.match(bogus.stderr.toString(), /unknown command 'frobnicate'/);
  const t = tempDir();
  try {
    const missing = await runMcpreel(['show', '--db', join(t.dir, 'nope.db'), 'last']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr.toString(), /no database at/);
    assert.ok(!existsSync(join(t.dir, 'nope.db')), 'show does not create a database');
  } finally {
    t.cleanup();
  }
});

test('a server that writes a lot and exits while the host is slow to read: every byte still arrives', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'slow.db');
    // 4.3 MB in one line, then exit: more than our 4 MiB output mark, so
    // reading the server's stdout is paused when it exits.  The host (a
    // shell pipeline) reads nothing for 4 s and keeps stdin open for 6.
    const server = join(t.dir, 'big.mjs');
    writeFileSync(server, "process.stdout.write('x'.repeat(4300000) + '\\n', () => process.exit(0));\n");
    const out = execFileSync('sh', ['-c', `(sleep 6 | "$0" record --db "$1" -- "$2" "$3") | (sleep 4; wc -c)`,
      MCPREEL, db, process.execPath, server], { encoding: 'utf8', timeout: 30000 });
    assert.equal(Number(out.trim()), 4300001, 'the host got every byte');
    assert.equal(sql(db, 'SELECT size FROM messages')[0].size, 4300000, 'and it is recorded whole');
  } finally {
    t.cleanup();
  }
});
