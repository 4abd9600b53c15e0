// What a hostile peer can take from mcpreel: every case here is a peer
// that would take memory or CPU without bound, and the limit that holds
// it.  CPU is mcpreel's utime+stime from /proc/PID/stat over a few
// seconds; memory is its peak RSS (VmHWM), printed, bounded tightly on the
// build without sanitizers ($MCPREEL_VALGRIND) and loosely on the ASan
// build (its shadow memory and quarantine are not ours).  See
// docs/reliability.md for the limits.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import net from 'node:net';
import { join } from 'node:path';

import { spawnUntilLine, stopChild } from './lib/servers.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const PLAIN = process.env.MCPREEL_VALGRIND;
const MB = 1024 * 1024;
const TAPE = join(E2E_DIR, 'fixtures', 'mcp-tape', 'trace.jsonl');
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host', version: '1.0' } },
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The binaries a memory test runs: ASan (loose bound) and plain (tight). */
function builds(plainBound, asanBound) {
  const b = [{ name: 'asan', bin: MCPREEL, bound: asanBound }];
  if (PLAIN) b.push({ name: 'plain', bin: PLAIN, bound: plainBound });
  return b;
}

/** CPU time (utime + stime) of pid, in clock ticks. */
function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** Poll a process's peak RSS (VmHWM) in bytes until stop(). */
function watchPeak(pid) {
  let peak = 0;
  const read = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch { /* gone */ }
  };
  const timer = setInterval(read, 20);
  return { stop: () => { clearInterval(timer); read(); return peak; } };
}

/** Spawn mcpreel with args under `ulimit -n nofile` (exec: same pid). */
async function startLimited(bin, args, nofile) {
  const quoted = [bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const p = await spawnUntilLine('sh', ['-c', `ulimit -n ${nofile} && exec ${quoted}`], {
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    pattern: /^mcpreel: listening on http:\/\/127\.0\.0\.1:(\d+)$/,
    name: `mcpreel ${args.join(' ')}`,
  });
  return {
    port: Number(p.match[1]),
    pid: p.child.pid,
    stderr: p.stderr,
    stop: async () => {
      const r = await stopChild(p.child, p.exited, { graceMs: 10000 });
      assert.doesNotMatch(p.stderr(), /Sanitizer|runtime error/, 'no sanitizer report');
      return r;
    },
  };
}

/** The upstream that breaks HTTP on purpose (peers/http_faults.mjs). */
async function startFaults() {
  const p = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_faults.mjs')], {
    stream: 'stdout', pattern: /^http_faults: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_faults',
  });
  return { origin: p.match[1], stop: () => stopChild(p.child, p.exited) };
}

/** A session for mock to serve: the mcp-tape fixture, imported. */
async function mockDb(dir) {
  const db = join(dir, 'm.db');
  const r = await runMcpreel(['import', '--db', db, '--name', 's', TAPE]);
  assert.equal(r.code, 0, r.stderr.toString());
  return db;
}

/** Open n idle connections (they send nothing); resolves once all connected or refused. */
async function idleClients(port, n) {
  const socks = [];
  await Promise.all(Array.from({ length: n }, () => new Promise((res) => {
    const s = net.connect(port, '127.0.0.1', res);
    s.on('error', res);
    socks.push(s);
  })));
  return { close: () => socks.forEach((s) => s.destroy()) };
}

/** POST body to port (raw HTTP/1.1); resolves the status line, or rejects after timeoutMs. */
function post(port, path, body, { timeoutMs = 20000 } = {}) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    let got = '';
    const timer = setTimeout(() => { s.destroy(); reject(new Error(`no answer within ${timeoutMs} ms`)); }, timeoutMs);
    s.on('data', (d) => {
      got += d.toString('latin1');
      const nl = got.indexOf('\r\n');
      if (nl >= 0) { clearTimeout(timer); s.destroy(); resolve(got.slice(0, nl)); }
    });
    s.on('error', (e) => { clearTimeout(timer); reject(e); });
  });
}

// ---------------------------------------------------------------------------
// 1. File descriptors: the listener at the fd limit, and --max-connections.

/**
 * Start the listener (record in front of http_faults, or mock) under a low
 * fd limit; hold `clients` idle connections for a few seconds; return the
 * CPU it used meanwhile and its stderr; then close them and check that a
 * new client is served.
 */
async function holdListener(kind, { nofile, extra, clients, dir, faults }) {
  const args = kind === 'record'
    ? ['record', '--db', join(dir, `r${nofile}.db`), '--listen', '127.0.0.1:0', '--upstream', `${faults.origin}/x`, ...extra]
    : ['mock', '--db', await mockDb(dir), 's', '--listen', '127.0.0.1:0', ...extra];
  const m = await startLimited(MCPREEL, args, nofile);
  try {
    const idle = await idleClients(m.port, clients);
    await sleep(500);
    const t0 = cpuTicks(m.pid);
    await sleep(3000);
    const used = cpuTicks(m.pid) - t0;
    // While every place is taken, a new client waits (not served).
    let late = null;
    const waiting = post(m.port, kind === 'record' ? '/x/ok' : '/mcp', INITIALIZE).then((l) => { late = l; });
    await sleep(1500);
    const servedWhileFull = late;
    idle.close();
    await waiting;
    const status = await post(m.port, kind === 'record' ? '/x/ok' : '/mcp', INITIALIZE);
    return { used, stderr: m.stderr(), servedWhileFull, late, status };
  } finally {
    await m.stop();
  }
}

for (const kind of ['record', 'mock']) {
  test(`${kind} --listen at the fd limit: stops accepting, warns once, resumes when clients close`, { timeout: 90000 }, async () => {
    const t = tempDir();
    const faults = kind === 'record' ? await startFaults() : null;
    try {
      // 64 descriptors, 100 clients, and a cap above both: accept() fails.
      const r = await holdListener(kind, { nofile: 64, extra: ['--max-connections', '1000'], clients: 100, dir: t.dir, faults });
      const warnings = r.stderr.split('\n').filter((l) => /cannot accept a connection/.test(l));
      const noise = r.stderr.split('\n').filter((l) => /accept/i.test(l)).length;
      console.log(`${kind} at 64 fds with 100 idle clients: ${r.used} CPU ticks in 3 s, ${noise} lines about accept`);
      assert.ok(r.used < 50, `no busy loop: ${r.used} ticks of CPU in 3 s`);
      assert.equal(warnings.length, 1, `one warning:\n${r.stderr.slice(0, 2000)}`);
      assert.match(warnings[0], /with \d+ open: Too many open files/);
      assert.ok(noise < 5, `not a line per accept() retry: ${noise}`);
      assert.equal(r.servedWhileFull, null, 'no new client is served while no fd is free');
      assert.match(r.late, /^HTTP\/1\.1 200 /, 'the waiting client is served once others close');
      assert.match(r.status, /^HTTP\/1\.1 200 /, 'and so is a new one');
    } finally {
      await faults?.stop();
      t.cleanup();
    }
  });

  test(`${kind} --listen --max-connections: at the cap new clients wait, said once, served when one closes`, { timeout: 90000 }, async () => {
    const t = tempDir();
    const faults = kind === 'record' ? await startFaults() : null;
    try {
      const r = await holdListener(kind, { nofile: 1024, extra: ['--max-connections', '4'], clients: 10, dir: t.dir, faults });
      const said = r.stderr.split('\n').filter((l) => /connections open \(--max-connections\)/.test(l));
      console.log(`${kind} --max-connections 4 with 10 idle clients: ${r.used} CPU ticks in 3 s`);
      assert.ok(r.used < 50, `no busy loop: ${r.used} ticks`);
      assert.equal(said.length, 1, r.stderr.slice(0, 2000));
      assert.match(said[0], /^mcpreel: 4 connections open/);
      assert.equal(r.servedWhileFull, null, 'a fifth client waits');
      assert.match(r.late, /^HTTP\/1\.1 200 /);
      assert.match(r.status, /^HTTP\/1\.1 200 /);
    } finally {
      await faults?.stop();
      t.cleanup();
    }
  });
}

// ---------------------------------------------------------------------------
// 2. An upstream sending interim heads for ever to a client that never reads.

for (const b of builds(32 * MB, 256 * MB)) {
  test(`record --listen: endless 1xx heads to a client that does not read stay bounded (${b.name})`, { timeout: 60000 }, async () => {
    const t = tempDir();
    const faults = await startFaults();
    const m = await startLimited(b.bin, ['record', '--db', join(t.dir, 'r.db'), '--listen', '127.0.0.1:0',
      '--upstream', faults.origin], 1024);
    const peak = watchPeak(m.pid);
    let s;
    try {
      // Send one request, then never read: only the kernel's buffers and
      // mcpreel's output watermark stand between the upstream and memory.
      s = net.connect(m.port, '127.0.0.1', () => {
        s.write(`POST /interim-forever HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${INITIALIZE.length}\r\n\r\n${INITIALIZE}`);
        s.pause();
      });
      s.on('error', () => {});
      await sleep(10000);
      const rss = peak.stop();
      console.log(`${b.name}: peak RSS ${(rss / MB).toFixed(1)} MiB after 10 s of interim heads (bound ${b.bound / MB} MiB)`);
      assert.ok(rss > 0);
      assert.ok(rss < b.bound, `peak RSS ${rss} over ${b.bound}`);
    } finally {
      peak.stop();
      s?.destroy();
      await m.stop();
      await faults.stop();
      t.cleanup();
    }
  });
}

// ---------------------------------------------------------------------------
// 3. mock --listen: the body cap and the head and idle timeouts of record's.

/** Start mock --listen on the tape's session with extra args. */
async function startMock(bin, dir, extra) {
  return startLimited(bin, ['mock', '--db', await mockDb(dir), 's', '--listen', '127.0.0.1:0', ...extra], 1024);
}

/**
 * Stream a chunked POST of up to `total` bytes to port, 1 MiB a chunk, as
 * fast as it is taken; stop when an answer or an error comes.  Resolves
 * {status, sent, error}.
 */
function streamChunked(port, total) {
  return new Promise((resolve) => {
    const piece = Buffer.concat([Buffer.from(`100000\r\n`), Buffer.alloc(MB, 0x20), Buffer.from('\r\n')]);
    let sent = 0;
    let got = '';
    let done = false;
    const s = net.connect(port, '127.0.0.1');
    const finish = (r) => { if (!done) { done = true; s.destroy(); resolve({ sent, ...r }); } };
    const go = () => {
      while (!done && sent < total) {
        sent += MB;
        if (!s.write(piece)) { s.once('drain', go); return; }
      }
    };
    s.on('connect', () => {
      s.write('POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      const first = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"';
      s.write(`${first.length.toString(16)}\r\n${first}\r\n`);
      go();
    });
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) finish({ status: got.slice(0, got.indexOf('\r\n')), body: got });
    });
    s.on('error', (e) => finish({ error: e.code }));
    s.on('close', () => finish({ error: 'closed' }));
  });
}

for (const b of builds(48 * MB, 384 * MB)) {
  test(`mock --listen refuses a 2 GiB chunked POST over --max-record-size with 413, memory bounded (${b.name})`, { timeout: 120000 }, async () => {
    const t = tempDir();
    const m = await startMock(b.bin, t.dir, ['--max-record-size', '8M']);
    const peak = watchPeak(m.pid);
    try {
      const r = await streamChunked(m.port, 2048 * MB);
      const rss = peak.stop();
      console.log(`${b.name}: ${r.status ?? r.error} after ${r.sent / MB} MiB sent; peak RSS ${(rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.ok(r.sent < 512 * MB, `refused early, not after ${r.sent} bytes`);
      // The 413 goes out before the close; a reset may still beat it.
      if (r.status !== undefined) assert.match(r.status, /^HTTP\/1\.1 413 /);
      await sleep(200);
      assert.match(m.stderr(), /request body is over 8388608 bytes \(--max-record-size\).*413/);
      assert.ok(rss < b.bound, `peak RSS ${rss} over ${b.bound}`);
      // Mock goes on serving.
      assert.match(await post(m.port, '/mcp', INITIALIZE), /^HTTP\/1\.1 200 /);
    } finally {
      peak.stop();
      await m.stop();
      t.cleanup();
    }
  });
}

test('mock --listen: a Content-Length over --max-record-size is refused at once', { timeout: 60000 }, async () => {
  const t = tempDir();
  const m = await startMock(MCPREEL, t.dir, ['--max-record-size', '1K']);
  try {
    const s = net.connect(m.port, '127.0.0.1');
    s.write('POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n');
    let got = '';
    await new Promise((res) => { s.on('data', (d) => { got += d; }); s.on('close', res); s.on('error', res); });
    assert.match(got, /^HTTP\/1\.1 413 Content Too Large\r\n/);
    assert.match(got, /Connection: close/);
    assert.match(got, /over 1024 bytes \(--max-record-size\) by its Content-Length/);
  } finally {
    await m.stop();
    t.cleanup();
  }
});

test('mock --listen: a 413 with the body already sent reaches the client (lingering close, not a reset)', { timeout: 60000 }, async () => {
  const t = tempDir();
  const m = await startMock(MCPREEL, t.dir, ['--max-record-size', '1K']);
  try {
    for (let i = 0; i < 5; i++) {
      const s = net.connect(m.port, '127.0.0.1');
      const body = Buffer.alloc(256 * 1024, 0x20);
      s.write(Buffer.concat([Buffer.from(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
      let got = '';
      let error = null;
      await new Promise((res) => { s.on('data', (d) => { got += d; }); s.on('close', res); s.on('error', (e) => { error = e.code; }); });
      assert.equal(error, null, `round ${i}: ${error} instead of the answer (got ${JSON.stringify(got.slice(0, 40))})`);
      assert.match(got, /^HTTP\/1\.1 413 Content Too Large\r\n/);
    }
  } finally {
    await m.stop();
    t.cleanup();
  }
});

test('mock --listen: a half-sent head gets 408 at --head-timeout; an idle keep-alive connection is closed at --idle-timeout', { timeout: 60000 }, async () => {
  const t = tempDir();
  const m = await startMock(MCPREEL, t.dir, ['--head-timeout', '2', '--idle-timeout', '3']);
  try {
    // Half a head, then nothing.
    const half = net.connect(m.port, '127.0.0.1');
    half.write('POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Le');
    let got = '';
    const t0 = Date.now();
    await new Promise((res) => { half.on('data', (d) => { got += d; }); half.on('close', res); half.on('error', res); });
    assert.match(got, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(got, /no complete request head within 2 s \(--head-timeout\)/);
    assert.ok(Date.now() - t0 >= 1500, 'not before the limit');

    // A whole request answered, then the connection kept alive and idle.
    const idle = net.connect(m.port, '127.0.0.1');
    let answer = '';
    let closedAt = 0;
    const closed = new Promise((res) => { idle.on('close', () => { closedAt = Date.now(); res(); }); idle.on('error', () => {}); });
    idle.on('data', (d) => { answer += d; });
    const t1 = Date.now();
    idle.write(`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INITIALIZE.length}\r\n\r\n${INITIALIZE}`);
    await closed;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(closedAt - t1 >= 2500, 'closed by the idle limit, not at once');

    // A body that stops half-way: 408 at the idle limit.
    const body = net.connect(m.port, '127.0.0.1');
    body.write('POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"jsonrpc":');
    let got2 = '';
    await new Promise((res) => { body.on('data', (d) => { got2 += d; }); body.on('close', res); body.on('error', res); });
    assert.match(got2, /^HTTP\/1\.1 408 /);
    assert.match(got2, /the request body stopped: nothing for 3 s/);
  } finally {
    await m.stop();
    t.cleanup();
  }
});

for (const b of builds(40 * MB, 384 * MB)) {
  test(`mock --listen: a client that sends requests without end and never reads holds bounded memory (${b.name})`, { timeout: 60000 }, async () => {
    const t = tempDir();
    const m = await startMock(b.bin, t.dir, []);
    const peak = watchPeak(m.pid);
    const s = net.connect(m.port, '127.0.0.1');
    s.on('error', () => {});
    try {
      const req = `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${INITIALIZE.length}\r\n\r\n${INITIALIZE}`.repeat(64);
      let sent = 0;
      s.on('connect', () => {
        s.pause();
        const go = () => { while (!s.destroyed) { sent += 64; if (!s.write(req)) { s.once('drain', go); return; } } };
        go();
      });
      await sleep(8000);
      const rss = peak.stop();
      console.log(`${b.name}: ${sent} requests written, none read: peak RSS ${(rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.ok(sent > 1000, 'the client got requests in');
      assert.ok(rss < b.bound, `peak RSS ${rss} over ${b.bound}`);
    } finally {
      peak.stop();
      s.destroy();
      await m.stop();
      t.cleanup();
    }
  });
}

/**
 * A session whose tools/call answer is followed by `n` notifications/message
 * of `size` bytes each (server-sent, unasked), imported as `burst`.
 */
async function burstDb(dir, n, size) {
  const tape = join(dir, 'burst.jsonl');
  const at = (ms) => new Date(Date.UTC(2026, 4, 12, 23, 0, 0, ms)).toISOString();
  const lines = [
    { v: 1, type: 'meta', startedAt: at(0), label: 'b', command: ['x'], mcpTapVersion: '0.4.0' },
    { t: at(1), dir: 'in', raw: JSON.parse(INITIALIZE) },
    { t: at(2), dir: 'out', raw: { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 's', version: '1' } } } },
    { t: at(3), dir: 'in', raw: { jsonrpc: '2.0', method: 'notifications/initialized' } },
    { t: at(4), dir: 'in', raw: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'burst', arguments: {} } } },
    { t: at(5), dir: 'out', raw: { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ok' }] } } },
  ];
  for (let i = 0; i < n; i++)
    lines.push({ t: at(6 + i), dir: 'out', raw: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${i}:${'x'.repeat(size)}` } } });
  lines.push({ t: at(100), type: 'end', exitCode: 0 });
  writeFileSync(tape, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const db = join(dir, 'b.db');
  const r = await runMcpreel(['import', '--db', db, '--name', 'burst', tape]);
  assert.equal(r.code, 0, r.stderr.toString());
  return db;
}

test('mock --listen: a burst of ten 1 MiB notifications after an answer all reach a reading SDK client (output waits, nothing dropped)', { timeout: 120000 }, async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const t = tempDir();
  const db = await burstDb(t.dir, 10, MB);
  const m = await startLimited(MCPREEL, ['mock', '--db', db, 'burst', '--listen', '127.0.0.1:0', '--latency', 'none'], 1024);
  const client = new Client({ name: 'host', version: '1.0' });
  try {
    const got = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { got.push(Number(String(n.params.data).split(':')[0])); });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${m.port}/mcp`)));
    await sleep(1000); // the client opens its event stream
    const r = await client.callTool({ name: 'burst', arguments: {} });
    assert.equal(r.content[0].text, 'ok');
    for (let i = 0; i < 600 && got.length < 10; i++) await sleep(100);
    console.log(`notifications received: ${got.length} of 10`);
    assert.deepEqual(got, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.doesNotMatch(m.stderr(), /dropping|does not read/);
  } finally {
    await client.close().catch(() => {});
    await m.stop();
    t.cleanup();
  }
});

for (const b of builds(48 * MB, 384 * MB)) {
  test(`mock --listen --on-miss forward: a fallback that streams without end to an event stream never read waits; the stream closes at --idle-timeout (${b.name})`, { timeout: 120000 }, async () => {
    const t = tempDir();
    const db = await mockDb(t.dir);
    const m = await startLimited(b.bin, ['mock', '--db', db, 's', '--listen', '127.0.0.1:0', '--idle-timeout', '6',
      '--on-miss', 'forward', '--', process.execPath, join(PEERS_DIR, 'flood.mjs'), '1000000', String(64 * 1024)], 1024);
    const peak = watchPeak(m.pid);
    const s = net.connect(m.port, '127.0.0.1');
    s.on('error', () => {});
    try {
      assert.match(await post(m.port, '/mcp', INITIALIZE), /^HTTP\/1\.1 200 /);
      s.write('GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
      s.pause();
      for (let i = 0; i < 300 && !/read none of the \d+ bytes/.test(m.stderr()); i++) await sleep(100);
      const rss = peak.stop();
      console.log(`${b.name}: the event stream never read: peak RSS ${(rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.match(m.stderr(), /a client read none of the \d+ bytes waiting for it in 6 s \(--idle-timeout\): closing its connection/);
      assert.ok(rss < b.bound, `peak RSS ${rss} over ${b.bound}`);
      // Mock goes on serving.
      assert.match(await post(m.port, '/mcp', INITIALIZE), /^HTTP\/1\.1 200 /);
    } finally {
      peak.stop();
      s.destroy();
      await m.stop();
      t.cleanup();
    }
  });
}

// ---------------------------------------------------------------------------
// 4. replay against an HTTP server whose answer never ends.

/** A session to replay: initialize, then one tools/call, imported. */
async function replayDb(dir) {
  const tape = join(dir, 'replay.jsonl');
  const lines = [
    { v: 1, type: 'meta', startedAt: '2026-05-12T23:00:00.000Z', label: 'r', command: ['x'], mcpTapVersion: '0.4.0' },
    { t: '2026-05-12T23:00:00.100Z', dir: 'in', raw: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big', arguments: {} } } },
    { t: '2026-05-12T23:00:00.200Z', dir: 'out', raw: { jsonrpc: '2.0', id: 1, result: { content: [] } } },
    { t: '2026-05-12T23:00:00.300Z', type: 'end', exitCode: 0 },
  ];
  writeFileSync(tape, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const db = join(dir, 'r.db');
  const r = await runMcpreel(['import', '--db', db, '--name', 'r', tape]);
  assert.equal(r.code, 0, r.stderr.toString());
  return db;
}

/** Run `bin args`, polling its peak RSS; resolves {code, stdout, stderr, rss}. */
function runWatched(bin, args, { timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
    const peak = watchPeak(child.pid);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${args.join(' ')}: still running after ${timeoutMs} ms`)); }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString();
      if (/Sanitizer|runtime error/.test(stderr)) reject(new Error(`a sanitizer report:\n${stderr.slice(0, 4000)}`));
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr, rss: peak.stop() });
    });
  });
}

for (const path of ['json-forever', 'length-forever', 'sse-event-forever']) {
  for (const b of builds(96 * MB, 512 * MB)) {
    test(`replay --upstream: an endless answer (${path}) is given up at --max-record-size, memory bounded (${b.name})`, { timeout: 180000 }, async () => {
      const t = tempDir();
      const faults = await startFaults();
      try {
        const db = await replayDb(t.dir);
        const r = await runWatched(b.bin, ['replay', '--db', db, 'r', '--no-record', '--timeout', '5',
          '--max-record-size', '16M', '--upstream', `${faults.origin}/${path}`]);
        console.log(`${b.name} ${path}: exit ${r.code}, peak RSS ${(r.rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
        assert.equal(r.code, 1, `a failed replay:\n${r.stdout}\n${r.stderr}`);
        assert.match(r.stdout, /the response to POST is over 16777216 bytes( in one SSE event)? \(--max-record-size\): given up/);
        assert.ok(r.rss < b.bound, `peak RSS ${r.rss} over ${b.bound}`);
      } finally {
        await faults.stop();
        t.cleanup();
      }
    });
  }
}

for (const b of builds(96 * MB, 512 * MB)) {
  test(`replay -- CMD: a stdio server writing one endless line is cut at --max-record-size, memory bounded (${b.name})`, { timeout: 180000 }, async () => {
    const t = tempDir();
    try {
      const db = await replayDb(t.dir);
      const r = await runWatched(b.bin, ['replay', '--db', db, 'r', '--no-record', '--timeout', '5',
        '--max-record-size', '16M', '--', 'sh', '-c', "yes x | tr -d '\\n'"]);
      console.log(`${b.name} stdio endless line: exit ${r.code}, peak RSS ${(r.rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.equal(r.code, 1, `a failed replay:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /a line on the server's stdout over 16777216 bytes \(--max-record-size\): dropped/);
      assert.ok(r.rss < b.bound, `peak RSS ${r.rss} over ${b.bound}`);
    } finally {
      t.cleanup();
    }
  });
}

// ---------------------------------------------------------------------------
// 5. import of one huge line: the record size cap.

for (const b of builds(96 * MB, 400 * MB)) {
  test(`import of a 300 MiB message line (mcp-tape) under an 8 MiB cap stores a prefix, its size and SHA-256, in bounded memory (${b.name})`, { timeout: 300000 }, async () => {
    const t = tempDir();
    try {
      const file = join(t.dir, 'big.jsonl');
      const pad = 'x'.repeat(300 * MB);
      const msg = `{"jsonrpc":"2.0","id":1,"result":{"pad":"${pad}"}}`;
      const lines = [
        { v: 1, type: 'meta', startedAt: '2026-05-12T23:00:00.000Z', label: 'big', command: ['x'], mcpTapVersion: '0.4.0' },
        { t: '2026-05-12T23:00:00.100Z', dir: 'in', raw: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big' } } },
      ].map((l) => JSON.stringify(l)).join('\n');
      const fd = openSync(file, 'w');
      writeSync(fd, `${lines}\n{"t":"2026-05-12T23:00:00.200Z","dir":"out","raw":`);
      writeSync(fd, msg);
      writeSync(fd, '}\n{"t":"2026-05-12T23:00:00.300Z","type":"end","exitCode":0}\n');
      closeSync(fd);
      const sha = createHash('sha256').update(msg).digest('hex');
      const db = join(t.dir, 'i.db');
      const r = await runWatched(b.bin, ['import', '--db', db, '--max-record-size', '8M', file]);
      console.log(`${b.name}: import of a ${(msg.length / MB).toFixed(0)} MiB line: exit ${r.code}, peak RSS ${(r.rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /a message of \d+ bytes, over --max-record-size: stored as its first 8388608 bytes/);
      const rows = sql(db, "select length(raw) len, wire_size, truncated, sha256, substr(raw, 1, 40) head from messages where direction = 's2c'");
      assert.equal(rows.length, 1);
      assert.equal(rows[0].len, 8 * MB);
      assert.equal(rows[0].wire_size, Buffer.byteLength(msg));
      assert.equal(rows[0].truncated, 1);
      assert.equal(rows[0].sha256, sha);
      assert.equal(rows[0].head, msg.slice(0, 40));
      assert.ok(r.rss < b.bound, `peak RSS ${r.rss} over ${b.bound}`);
    } finally {
      t.cleanup();
    }
  });
}

for (const b of builds(48 * MB, 384 * MB)) {
  test(`import: a tape line over --max-record-size whose other members are 200 MiB of spaces is refused in bounded memory (${b.name})`, { timeout: 300000 }, async () => {
    const t = tempDir();
    try {
      const file = join(t.dir, 'spaces.jsonl');
      const fd = openSync(file, 'w');
      writeSync(fd, `${JSON.stringify({ v: 1, type: 'meta', startedAt: '2026-05-12T23:00:00.000Z', label: 'sp', command: ['x'], mcpTapVersion: '0.4.0' })}\n`);
      writeSync(fd, '{"t":"2026-05-12T23:00:00.100Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"ping"}');
      const spaces = Buffer.alloc(8 * MB, 0x20);
      for (let i = 0; i < 25; i++) writeSync(fd, spaces);
      writeSync(fd, '}\n');
      closeSync(fd);
      const r = await runWatched(b.bin, ['import', '--db', join(t.dir, 'i.db'), '--max-record-size', '1K', file]);
      console.log(`${b.name}: import of a line with 200 MiB of spaces: exit ${r.code}, peak RSS ${(r.rss / MB).toFixed(1)} MiB (bound ${b.bound / MB} MiB)`);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /line 2: a line over --max-record-size whose other members are over 1048576 bytes/);
      assert.ok(r.rss < b.bound, `peak RSS ${r.rss} over ${b.bound}`);
    } finally {
      t.cleanup();
    }
  });
}

/** The first line of an export (the session), for a hand-made JSONL. */
const JSONL_HEAD = JSON.stringify({ format: 'mcpreel-jsonl', version: 1, session: 1, name: 'big', transport: 'stdio', target: 'x', started_ns: 1778626800000000000 });
const jsonlMessage = (seq, direction, member) => `{"type":"message","seq":${seq},"direction":"${direction}","ts_ns":${1778626800100000000 + seq},"mono_ns":${1778626800100000000 + seq},${member}}`;

test('import: an http_exchange "body" over --max-record-size is never lost in silence: a prefix with a warning, or past the slack an error', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const head = JSONL_HEAD.replace('"transport":"stdio"', '"transport":"http"');
    const exchange = (body) => JSON.stringify({ type: 'http_exchange', exchange: 1, connection: 1, method: 'POST', path: '/mcp', started_ns: 1778626800100000000, mono_ns: 1778626800100000000, status: 200, body });
    const run = async (size) => {
      const file = join(t.dir, `b${size}.jsonl`);
      writeFileSync(file, `${head}\n${exchange('y'.repeat(size))}\n`);
      const db = join(t.dir, `b${size}.db`);
      const r = await runWatched(MCPREEL, ['import', '--db', db, '--max-record-size', '1K', file]);
      return { ...r, db };
    };
    const small = await run(600 * 1024);
    assert.equal(small.code, 0, small.stderr);
    assert.match(small.stderr, /over --max-record-size/);
    assert.equal(sql(small.db, 'select length(body) n from http_exchanges')[0].n, 1024);
    const big = await run(3 * MB);
    console.log(`600 KiB body: exit ${small.code}; 3 MiB body: exit ${big.code}: ${big.stderr.trim()}`);
    assert.notEqual(big.code, 0, 'not imported without its body');
    assert.match(big.stderr, /line 2: "body" is over --max-record-size by more than 1048576 bytes: it cannot be stored as its first bytes; give a larger --max-record-size/);
  } finally {
    t.cleanup();
  }
});

for (const { name, bin, bound } of builds(96 * MB, 400 * MB)) {
  test(`import of a 300 MiB "message" line (JSONL) under an 8 MiB cap: bounded memory, the row as record makes it (${name})`, { timeout: 300000 }, async () => {
    const t = tempDir();
    try {
      const file = join(t.dir, 'big.jsonl');
      const msg = `{"jsonrpc":"2.0","id":1,"result":{"pad":"${'y'.repeat(300 * MB)}"}}`;
      const fd = openSync(file, 'w');
      writeSync(fd, `${JSONL_HEAD}\n${jsonlMessage(1, 'c2s', '"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}')}\n`);
      // The message member in the middle, members after it: all are kept.
      writeSync(fd, '{"type":"message","seq":2,"direction":"s2c","message":');
      writeSync(fd, msg);
      writeSync(fd, `,"ts_ns":1778626800200000000,"mono_ns":1778626800200000000,"sse_event_id":"e1"}\n`);
      closeSync(fd);
      const sha = createHash('sha256').update(msg).digest('hex');
      const db = join(t.dir, 'i.db');
      const r = await runWatched(bin, ['import', '--db', db, '--max-record-size', '8M', file]);
      console.log(`${name}: JSONL import of a ${(msg.length / MB).toFixed(0)} MiB "message": exit ${r.code}, peak RSS ${(r.rss / MB).toFixed(1)} MiB (bound ${bound / MB} MiB)`);
      assert.equal(r.code, 0, r.stderr);
      const rows = sql(db, "select length(raw) len, wire_size, truncated, sha256, sse_event_id, ts_ns from messages where direction = 's2c'");
      assert.equal(rows.length, 1);
      assert.deepEqual([rows[0].len, rows[0].wire_size, rows[0].truncated, rows[0].sha256, rows[0].sse_event_id],
        [8 * MB, Buffer.byteLength(msg), 1, sha, 'e1']);
      assert.ok(r.rss < bound, `peak RSS ${r.rss} over ${bound}`);

      // The same message as a JSON string ("raw") cannot be cut in bounded
      // memory: refused with a reason, nothing kept.
      const raw = join(t.dir, 'raw.jsonl');
      const fd2 = openSync(raw, 'w');
      writeSync(fd2, `${JSONL_HEAD}\n${jsonlMessage(1, 's2c', `"raw":"${'z'.repeat(20 * MB)}"`)}\n`);
      closeSync(fd2);
      const r2 = await runWatched(bin, ['import', '--db', join(t.dir, 'j.db'), '--max-record-size', '8M', raw]);
      assert.equal(r2.code, 1, r2.stderr);
      assert.match(r2.stderr, /line 2: "raw" is over --max-record-size: a message that long is imported only as JSON/);
    } finally {
      t.cleanup();
    }
  });
}
