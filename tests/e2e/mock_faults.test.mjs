// `mcpreel mock` over stdio when its stdin or stdout is not a pipe: a
// regular file, /dev/null, closed, a pipe whose reader has gone, a full
// disk.  Answers are written where stdout points and counted only when
// written; a stdout that fails is an error (exit 1) that says so.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, tempDir } from './lib/util.mjs';

const SANITIZER = /runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer/;
const ENV = { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' };
const REQUESTS = [
  { jsonrpc: '2.0', id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'no/such' },
];
const INPUT = REQUESTS.map((m) => JSON.stringify(m) + '\n').join('');

async function recorded(dir) {
  const db = join(dir, 'm.db');
  const r = await runMcpreel(['record', '--db', db, '--name', 's', '--', 'node', join(PEERS_DIR, 'emptypeer.mjs')],
    { input: Buffer.from(INPUT.split('\n').slice(0, 2).join('\n') + '\n') });
  assert.equal(r.code, 0, r.stderr.toString());
  return db;
}

/* Run mock with the given stdio (fds or 'pipe'); resolve {code, stderr, ms}. */
function runMock(args, stdio, { onSpawn, timeoutMs = 30000, command = MCPREEL } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(command, args, { stdio: [...stdio, 'pipe'], env: ENV });
    const err = [];
    child.stderr.on('data', (c) => err.push(c));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`mock hung: ${Buffer.concat(err)}`)); }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString();
      assert.doesNotMatch(stderr, SANITIZER, 'no sanitizer report');
      resolve({ code, stderr, ms: Date.now() - t0 });
    });
    onSpawn?.(child);
  });
}

const counted = (stderr) => {
  const m = stderr.match(/mock: answered (\d+) requests from session \d+, (\d+) unmatched/);
  assert.ok(m, `the summary line: ${stderr}`);
  return { answered: Number(m[1]), missed: Number(m[2]) };
};

test('mock over stdio: stdin and stdout regular files, /dev/null, closed', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = await recorded(t.dir);
    const args = ['-v', 'mock', '--db', db, 's'];
    const inFile = join(t.dir, 'in.jsonl');
    writeFileSync(inFile, INPUT);
    const open = (p, flags) => openSync(p, flags);

    // stdin a file, stdout a file: read to its end, answered, exit 0.
    let fin = open(inFile, 'r');
    const outFile = join(t.dir, 'out.jsonl');
    let fout = open(outFile, 'w');
    let r = await runMock(args, [fin, fout]);
    closeSync(fin); closeSync(fout);
    assert.equal(r.code, 0, r.stderr);
    // (A miss is answered at once, a match after its recorded gap.)
    const out = readFileSync(outFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).sort((a, b) => a.id - b.id);
    assert.deepEqual(out.map((m) => m.id), [1, 2, 3], 'every answer is in the file');
    assert.equal(out[0].result.echo, 'ping');
    assert.equal(out[2].error.code, -32601, 'the miss is explained');
    assert.deepEqual(counted(r.stderr), { answered: 2, missed: 1 });

    // stdin /dev/null: the client said nothing and is gone: exit at once.
    fin = open('/dev/null', 'r');
    fout = open(outFile, 'w');
    r = await runMock(args, [fin, fout]);
    closeSync(fin); closeSync(fout);
    console.log(`stdin /dev/null: exit ${r.code} after ${r.ms} ms`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(outFile, 'utf8'), '', 'nothing written');
    assert.deepEqual(counted(r.stderr), { answered: 0, missed: 0 });

    // stdout /dev/null: written (and discarded), so counted.
    fin = open(inFile, 'r');
    fout = open('/dev/null', 'w');
    r = await runMock(args, [fin, fout]);
    closeSync(fin); closeSync(fout);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(counted(r.stderr), { answered: 2, missed: 1 });

    // stdin a file, stdout a pipe (what a script does): answered, exit 0.
    fin = open(inFile, 'r');
    const chunks = [];
    r = await runMock(args, [fin, 'pipe'], { onSpawn: (c) => c.stdout.on('data', (d) => chunks.push(d)) });
    closeSync(fin);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Buffer.concat(chunks).toString().trim().split('\n').length, 3);

    // stdout or stdin closed: refused at start with why, exit 2 (and no
    // answer lands in the database that would otherwise take fd 1).
    for (const [redir, what] of [['>&-', /stdout is closed, so no answer could reach the client/], ['<&-', /stdin is closed, so no request could come/]]) {
      fin = open(inFile, 'r');
      r = await runMock(['-c', `exec "$0" "$@" ${redir}`, MCPREEL, ...args], [fin, 'pipe'], { command: 'sh' });
      closeSync(fin);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, what);
    }
  } finally {
    t.cleanup();
  }
});

test('mock over stdio: a stdout that fails (the reader gone, a full disk) is an error, and unwritten answers are not counted', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = await recorded(t.dir);
    const args = ['-v', 'mock', '--db', db, 's'];

    // The client closes its end of our stdout, then sends its requests.
    let r = await runMock(args, ['pipe', 'pipe'], {
      onSpawn: (c) => {
        c.stdout.destroy();
        setTimeout(() => c.stdin.end(INPUT), 300);
      },
    });
    console.log(`reader gone: exit ${r.code} after ${r.ms} ms`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /mcpreel mock: cannot write to stdout: Broken pipe \(the client closed its end of the pipe\): \d answers? could not be written/);
    const c = counted(r.stderr);
    assert.equal(c.answered + c.missed, 0, `nothing counted as answered: ${r.stderr}`);

    // It reads the first answers, then goes; mock is told by the next write.
    let got = '';
    r = await runMock(args, ['pipe', 'pipe'], {
      onSpawn: (ch) => {
        ch.stdin.write(JSON.stringify(REQUESTS[0]) + '\n');
        ch.stdout.on('data', (d) => {
          got += d;
          if (!got.includes('\n')) return;
          ch.stdout.destroy();
          setTimeout(() => ch.stdin.end(REQUESTS.slice(1).map((m) => JSON.stringify(m) + '\n').join('')), 300);
        });
      },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(got.split('\n')[0]).id, 1);
    assert.deepEqual(counted(r.stderr), { answered: 1, missed: 0 }, 'only the answer written counts');
    assert.match(r.stderr, /[12] answers? could not be written/);

    // stdout on a full disk.
    if (existsSync('/dev/full')) {
      const fin = openSync(join(t.dir, 'in'), 'w+');
      writeFileSync(fin, INPUT);
      closeSync(fin);
      const f = openSync(join(t.dir, 'in'), 'r');
      const full = openSync('/dev/full', 'w');
      r = await runMock(args, [f, full]);
      closeSync(f); closeSync(full);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /cannot write to stdout: No space left on device: \d answers? could not be written/);
      assert.deepEqual(counted(r.stderr), { answered: 0, missed: 0 });
    }
  } finally {
    t.cleanup();
  }
});

test('mock over stdio, stdin a file: plays that outlast the end of the file are answered in full; no client answer is awaited', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'sdk.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
    const lines = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 'file', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 }, _meta: { progressToken: 'tok' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-sampling-request', arguments: { prompt: 'Say hello to mcpreel', maxTokens: 32 } } },
    ];
    const inFile = join(t.dir, 'in.jsonl');
    writeFileSync(inFile, lines.map((l) => JSON.stringify(l) + '\n').join(''));
    const outFile = join(t.dir, 'out.jsonl');
    // scale:8 makes the long-running operation's play last ~8 s, longer
    // than mock waits for plays once a client has gone (5 s).
    const fin = openSync(inFile, 'r');
    const fout = openSync(outFile, 'w');
    const r = await runMock(['-v', 'mock', '--db', db, 'sdk', '--latency', 'scale:8'], [fin, fout], { timeoutMs: 120000 });
    closeSync(fin); closeSync(fout);
    console.log(`stdin a file, --latency scale:8: exit ${r.code} after ${r.ms} ms`);
    assert.equal(r.code, 0, r.stderr);
    const out = readFileSync(outFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const answers = new Map(out.filter((m) => 'id' in m && !('method' in m)).map((m) => [m.id, m]));
    assert.ok(answers.get(0)?.result?.serverInfo, 'initialize answered');
    assert.match(answers.get(1)?.result?.content?.[0]?.text ?? '', /Long running operation completed/, 'the long-running operation answered');
    assert.ok(answers.get(2)?.result, 'the sampling tool answered');
    const progress = out.filter((m) => m.method === 'notifications/progress');
    assert.equal(progress.length, 4);
    assert.ok(progress.every((m) => m.params.progressToken === 'tok'));
    assert.ok(out.some((m) => m.method === 'sampling/createMessage'), 'the server request is played');
    assert.deepEqual(counted(r.stderr), { answered: 3, missed: 0 });
  } finally {
    t.cleanup();
  }
});

test('mock --on-miss forward to a fallback that cannot be reached: the miss gets an error at once, naming why', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = await recorded(t.dir);
    const port = await new Promise((res) => {
      const srv = net.createServer();
      srv.listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => res(p)); });
    });
    const t0 = Date.now();
    const r = await runMcpreel(['mock', '--db', db, 's', '--latency', 'none', '--on-miss', 'forward', '--fallback', `http://127.0.0.1:${port}/mcp`],
      { input: Buffer.from(INPUT) });
    const ms = Date.now() - t0;
    console.log(`fallback refused: exit ${r.code} after ${ms} ms`);
    assert.doesNotMatch(r.stderr.toString(), SANITIZER);
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    const miss = out.find((m) => m.id === 3);
    assert.match(miss?.error?.message ?? '', /the fallback server is gone: cannot reach http:\/\/127\.0\.0\.1:\d+: Connection refused/);
    assert.ok(ms < 25000, `answered in ${ms} ms, not after the fallback's 30 s timeout`);
    assert.equal(out.find((m) => m.id === 1)?.result?.echo, 'ping', 'matches still come from the recording');
  } finally {
    t.cleanup();
  }
});

/** Poll a process's peak RSS (VmHWM) in bytes until stop(). */
function watchPeak(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch { /* gone */ }
  }, 10);
  return () => { clearInterval(timer); return peak; };
}

const MB = 1024 * 1024;

test('mock over stdio, a client that sends requests and does not read the answers: memory stays bounded, nothing is lost', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'big.db');
    const peer = join(t.dir, 'bigpeer.cjs');
    const SIZE = 256 * 1024;
    writeFileSync(peer, `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { text: 'x'.repeat(${SIZE}) } }) + '\\n');
});`);
    const call = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'big', arguments: {} } }) + '\n';
    let r = await runMcpreel(['record', '--db', db, '--name', 'big', '--', process.execPath, peer], { input: Buffer.from(call(1)) });
    assert.equal(r.code, 0, r.stderr.toString());

    const N = 2000;	// 500 MiB of answers
    const runs = [[MCPREEL, 'ASan', 128 * MB]];
    if (process.env.MCPREEL_VALGRIND) runs.push([process.env.MCPREEL_VALGRIND, 'plain', 64 * MB]);
    for (const [bin, name, bound] of runs) for (const latency of ['none', 'capped']) {
      const res = await new Promise((resolve, reject) => {
        // A small ASan quarantine, so RSS shows what is live.
        const child = spawn(bin, ['mock', '--db', db, 'big', '--latency', latency], {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:quarantine_size_mb=16' },
        });
        const stopPeak = watchPeak(child.pid);
        const err = [];
        let answers = 0;
        let tail = '';
        child.stderr.on('data', (c) => err.push(c));
        child.stdout.pause();
        child.stdin.on('error', () => {});
        const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`mock did not finish: ${Buffer.concat(err)}`)); }, 240000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr: Buffer.concat(err).toString(), rss: stopPeak(), answers });
        });
        let all = '';
        for (let i = 0; i < N; i++) all += call(i + 10);
        child.stdin.write(all);
        // Read nothing for 3 s, then everything.
        setTimeout(() => {
          child.stdout.on('data', (c) => {
            const s = tail + c.toString('latin1');
            const parts = s.split('\n');
            tail = parts.pop();
            answers += parts.length;
          });
          child.stdout.resume();
          child.stdin.end();
        }, 3000);
      });
      console.log(`${name}, --latency ${latency}: ${N} answers of ${SIZE / 1024} KiB to a client that read none for 3 s: peak RSS ${(res.rss / MB).toFixed(1)} MiB (bound ${bound / MB} MiB), ${res.answers} answers read`);
      assert.doesNotMatch(res.stderr, SANITIZER);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.answers, N, 'every answer arrives');
      assert.ok(res.rss <= bound, `peak RSS ${(res.rss / MB).toFixed(1)} MiB is over ${bound / MB} MiB`);
    }
  } finally {
    t.cleanup();
  }
});

test('mock over stdio, a client that never reads what is left at the end: mock stops within its bound (and on SIGTERM), saying what was not written', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'big.db');
    const peer = join(t.dir, 'bigpeer.cjs');
    writeFileSync(peer, `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { text: 'x'.repeat(256 * 1024) } }) + '\\n');
});`);
    const call = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'big', arguments: {} } }) + '\n';
    let r = await runMcpreel(['record', '--db', db, '--name', 'big', '--', process.execPath, peer], { input: Buffer.from(call(1)) });
    assert.equal(r.code, 0, r.stderr.toString());
    const inFile = join(t.dir, 'in.jsonl');
    writeFileSync(inFile, call(1) + call(2));
    for (const signal of [null, 'SIGTERM']) {
      const fin = openSync(inFile, 'r');
      // stdout a pipe nobody reads: 512 KiB of answers cannot all go.
      const res = await runMock(['mock', '--db', db, 'big', '--latency', 'none'], [fin, 'pipe'], {
        timeoutMs: 60000,
        onSpawn: (child) => {
          child.stdout.pause();
          if (signal) setTimeout(() => child.kill(signal), 1500);
        },
      });
      closeSync(fin);
      console.log(`stdout never read, ${signal ?? 'no signal'}: exit ${res.code} after ${res.ms} ms`);
      assert.equal(res.code, 1, res.stderr);
      assert.match(res.stderr, signal ? /a signal stopped the wait/ : /did not read what was left for it within \d+ ms/);
      assert.match(res.stderr, /[12] answers? could not be written/);
    }
  } finally {
    t.cleanup();
  }
});
