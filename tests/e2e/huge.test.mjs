// Big traffic (issue 7): a 100 MB message both ways, a message over the
// record size cap, and 240 MB pushed at a host that reads slowly.  Memory
// is mcpreel's peak RSS (VmHWM), read from /proc while it runs, of the
// build without sanitizers ($MCPREEL_VALGRIND, which make test builds):
// AddressSanitizer's shadow and quarantine would say nothing about ours.
// MCPREEL_SOAK=1 (make soak) makes each of them ten times longer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { request, spawnUntilLine, startMcpreelHttp, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, sql, withCleanup } from './lib/util.mjs';

const PLAIN = process.env.MCPREEL_VALGRIND;
const SOAK = process.env.MCPREEL_SOAK === '1' ? 10 : 1;
const MB = 1024 * 1024;

/** Poll a process's peak RSS (VmHWM) in bytes until stop(). */
function watchPeak(pid) {
  let peak = 0;
  const read = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch { /* gone */ }
  };
  const timer = setInterval(read, 10);
  return { stop: () => { clearInterval(timer); return peak; }, read };
}

/**
 * Run `mcpreel record args -- server...`; feed(stdin) writes the host's
 * side, onOut(chunk) takes what comes back.  Resolves with code, stderr and
 * mcpreel's peak RSS.
 */
function run(bin, args, server, feed, onOut) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['record', ...args, '--', ...server], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    });
    const peak = watchPeak(child.pid);
    const err = [];
    child.stderr.on('data', (c) => err.push(c));
    child.stdout.on('data', (c) => onOut(c, child));
    child.stdin.on('error', () => {});
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcpreel did not finish: ${Buffer.concat(err)}`));
    }, 600000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: Buffer.concat(err).toString(), rss: peak.stop() });
    });
    feed(child.stdin).catch(reject);
  });
}

function write(stream, buf) {
  return new Promise((resolve) => (stream.write(buf) ? resolve() : stream.once('drain', resolve)));
}

/** A JSON-RPC request of exactly size bytes (without its newline). */
function bigRequest(size) {
  const head = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"big","params":{"d":"');
  const tail = Buffer.from('"}}');
  const buf = Buffer.alloc(size, 'x');
  head.copy(buf, 0);
  tail.copy(buf, size - tail.length);
  return buf;
}

/** The bytes of a stored message, read back with the sqlite3 shell. */
function storedRaw(db, dir, seq) {
  const out = join(dir, `raw-${seq}`);
  sql(db, `SELECT writefile('${out}', raw) FROM messages WHERE seq = ${seq}`);
  return readFileSync(out);
}

test('a 100 MB message passes intact both ways, is recorded whole, in under 3x its size of memory', { timeout: 600000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'huge.db');
    const size = 100 * 1000 * 1000;
    const msg = bigRequest(size);
    const back = [];
    const r = await run(PLAIN ?? MCPREEL, ['--db', db], ['cat'], async (stdin) => {
      await write(stdin, msg);
      await write(stdin, Buffer.from('\n'));
      stdin.end();
    }, (c) => back.push(c));
    assert.equal(r.code, 0, r.stderr);
    const got = Buffer.concat(back);
    assert.equal(got.length, size + 1);
    assert.ok(got.subarray(0, size).equals(msg), 'the bytes that came back are the bytes sent');
    const rows = sql(db, 'SELECT seq, direction, kind, size, wire_size, truncated FROM messages ORDER BY seq');
    assert.deepEqual(rows, [
      { seq: 1, direction: 'c2s', kind: 'request', size, wire_size: null, truncated: 0 },
      { seq: 2, direction: 's2c', kind: 'request', size, wire_size: null, truncated: 0 },
    ]);
    assert.ok(storedRaw(db, dir, 1).equals(msg), 'recorded whole, host to server');
    assert.ok(storedRaw(db, dir, 2).equals(msg), 'recorded whole, server to host');
    t.diagnostic(`100 MB round trip: mcpreel peak RSS ${(r.rss / MB).toFixed(1)} MiB = ${(r.rss / size).toFixed(2)}x the message${PLAIN ? '' : ' (ASan build: not asserted)'}`);
    if (PLAIN) assert.ok(r.rss <= 3 * size, `peak RSS ${r.rss} is over 3x ${size}`);
  });
});

test('a message over --max-record-size streams through whole; recorded as a prefix with its size and SHA-256', { timeout: 600000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'cap.db');
    const cap = 8 * MB;
    const piece = 4 * MB;
    const pieces = 75 * SOAK; // 300 MB (3 GB soaking)
    const head = Buffer.from('{"jsonrpc":"2.0","method":"notifications/huge","params":{"d":"');
    const tail = Buffer.from('"}}');
    const total = head.length + pieces * piece + tail.length;
    const sent = createHash('sha256');
    const backHash = createHash('sha256');
    let backLen = 0;
    const prefix = [];
    const r = await run(PLAIN ?? MCPREEL, ['--db', db, '--max-record-size', '8M'], ['cat'], async (stdin) => {
      const body = Buffer.alloc(piece, 'y');
      sent.update(head);
      prefix.push(head);
      await write(stdin, head);
      for (let i = 0; i < pieces; i++) {
        body[0] = 0x61 + (i % 26); // not all the same bytes
        sent.update(body);
        if (i < 2) prefix.push(Buffer.from(body));
        await write(stdin, Buffer.from(body));
      }
      sent.update(tail);
      await write(stdin, Buffer.concat([tail, Buffer.from('\n')]));
      stdin.end();
    }, (c) => {
      backLen += c.length;
      backHash.update(c);
    });
    const sentNl = sent.copy().update('\n').digest('hex');
    const digest = sent.digest('hex');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(backLen, total + 1, 'every byte came back');
    assert.equal(backHash.digest('hex'), sentNl, 'the bytes that came back are the bytes sent');
    const rows = sql(db, 'SELECT seq, direction, size, wire_size, sha256, truncated FROM messages ORDER BY seq');
    assert.deepEqual(rows, [
      { seq: 1, direction: 'c2s', size: cap, wire_size: total, sha256: digest, truncated: 1 },
      { seq: 2, direction: 's2c', size: cap, wire_size: total, sha256: digest, truncated: 1 },
    ]);
    assert.ok(storedRaw(db, dir, 1).equals(Buffer.concat(prefix).subarray(0, cap)), 'the prefix is the first bytes');
    assert.match(r.stderr, /over the record size cap \(--max-record-size 8388608\): forwarded whole, recorded as its first 8388608 bytes/);
    const notes = sql(db, "SELECT count(*) AS c FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%record size cap%'");
    assert.deepEqual(notes, [{ c: 2 }]);
    t.diagnostic(`${(total / MB).toFixed(0)} MiB over an 8 MiB cap: mcpreel peak RSS ${(r.rss / MB).toFixed(1)} MiB${PLAIN ? '' : ' (ASan build: not asserted)'}`);
    if (PLAIN) assert.ok(r.rss <= 64 * MB, `peak RSS ${r.rss} is over 64 MiB`);
  });
});

test('240 MB pushed at a host that takes 20 us a line: bounded memory, every message recorded', { timeout: 600000 }, async (t) => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'slow.db');
    const lineSize = 1000;
    const lines = 240000 * SOAK;
    let got = 0;
    let rest = 0;
    const r = await run(PLAIN ?? MCPREEL, ['--db', db], ['node', join(PEERS_DIR, 'flood.mjs'), String(lines), String(lineSize)], async (stdin) => {
      await write(stdin, Buffer.from('{"jsonrpc":"2.0","id":1,"method":"go"}\n'));
      // stdin stays open until the flood is read: the server must not be
      // stopped early by an end of file.
      await new Promise((resolve) => {
        const check = setInterval(() => {
          if (got >= lines) { clearInterval(check); resolve(); }
        }, 50);
      });
      stdin.end();
    }, (c, child) => {
      // 20 us of work for each line in the chunk, holding the loop as a
      // slow reader would.
      let n = 0;
      for (const b of c) if (b === 0x0a) n++;
      got += n;
      rest += c.length;
      const until = process.hrtime.bigint() + BigInt(n * 20000);
      while (process.hrtime.bigint() < until) { /* reading slowly */ }
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(got, lines);
    assert.equal(rest, lines * (lineSize + 1));
    const [{ c }] = sql(db, "SELECT count(*) AS c FROM messages WHERE direction = 's2c'");
    assert.equal(c, lines, 'every line the server sent is recorded');
    const [s] = sql(db, 'SELECT messages_lost FROM sessions');
    assert.equal(s.messages_lost, 0);
    t.diagnostic(`${(lines * lineSize / MB).toFixed(0)} MiB to a reader at 20 us a line: mcpreel peak RSS ${(r.rss / MB).toFixed(1)} MiB${PLAIN ? '' : ' (ASan build: not asserted)'}`);
    if (PLAIN) assert.ok(r.rss <= 64 * MB, `peak RSS ${r.rss} is over 64 MiB`);
  });
});

// With --durable too: a body past the cap is not held for its commit but
// streams on, as a line does over stdio.
for (const extra of [[], ['--durable']]) {
test(`over HTTP${extra.length ? ' with --durable' : ''}, bodies over --max-record-size are forwarded whole and recorded as a prefix with size and SHA-256`, { timeout: 120000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    defer(() => stopChild(peer.child, peer.exited));
    const db = join(dir, 'hcap.db');
    const mp = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'hcap', args: ['--max-record-size', '1M', ...extra] });
    defer(() => mp.stop());
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'big', arguments: { d: 'q'.repeat(5 * MB) } } }));
    const r = await request(`${mp.url}/mcp/mirror`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, timeoutMs: 60000 });
    assert.equal(r.status, 200);
    const mirrored = JSON.parse(r.body.toString());
    assert.equal(mirrored.body, body.toString(), 'the upstream got the whole body');
    const stopped = await mp.stop();
    assert.match(stopped.stderr, /a message of \d+ bytes \(a request body\) is over the record size cap \(--max-record-size 1048576\)/);
    const sha = (b) => createHash('sha256').update(b).digest('hex');
    const rows = sql(db, 'SELECT direction, size, wire_size, sha256, truncated, substr(CAST(raw AS TEXT), 1, 40) AS head FROM messages ORDER BY seq');
    assert.deepEqual(rows, [
      { direction: 'c2s', size: MB, wire_size: body.length, sha256: sha(body), truncated: 1, head: body.subarray(0, 40).toString() },
      { direction: 's2c', size: MB, wire_size: r.body.length, sha256: sha(r.body), truncated: 1, head: r.body.subarray(0, 40).toString() },
    ]);
    const notes = sql(db, "SELECT count(*) AS c FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%record size cap%'");
    assert.deepEqual(notes, [{ c: 2 }]);
    t.diagnostic(`HTTP${extra.length ? ' --durable' : ''}: a ${(body.length / MB).toFixed(1)} MiB request and a ${(r.body.length / MB).toFixed(1)} MiB response recorded as 1 MiB prefixes with size and digest`);
  });
});
}
