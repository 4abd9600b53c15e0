// mcpreel under valgrind's memcheck: a build without sanitizers
// ($MCPREEL_VALGRIND; `make test` builds build-valgrind for it) records a
// stdio session with cat, one whose server exits under the host, and an
// HTTP session (JSON, a batch, SSE, the legacy transport);
// valgrind must find no memory error and no leak.
//
// Skipped, saying why, without $MCPREEL_VALGRIND or valgrind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { readEventStream, request, spawnUntilLine, stopChild } from './lib/servers.mjs';
import { PEERS_DIR, sql, tempDir } from './lib/util.mjs';

const BIN = process.env.MCPREEL_VALGRIND ? resolve(process.env.MCPREEL_VALGRIND) : null;
// What valgrind exits with when it found an error (a leak counts).
const VG_ERROR = 97;
const VG = ['--leak-check=full', '--errors-for-leak-kinds=definite,indirect,possible', `--error-exitcode=${VG_ERROR}`,
  '--track-fds=no', '--trace-children=no'];

function skipReason() {
  if (!BIN) return 'set MCPREEL_VALGRIND to an mcpreel built without sanitizers (make test builds build-valgrind/mcpreel)';
  if (!existsSync(BIN)) return `no mcpreel at MCPREEL_VALGRIND=${BIN}`;
  if (spawnSync('valgrind', ['--version']).status !== 0) return 'valgrind is not installed (scripts/deps.sh test)';
  return false;
}
const skip = skipReason();

/** Run valgrind mcpreel ARGS with input on stdin; resolves {code, stdout, stderr}. */
function runValgrind(args, { input = '', keepStdinOpen = false, timeoutMs = 120000 } = {}) {
  return new Promise((res, rej) => {
    const child = spawn('valgrind', [...VG, BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.stdin.on('error', () => {});
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`valgrind mcpreel ${args.join(' ')}: not done in ${timeoutMs} ms; stderr: ${Buffer.concat(err)}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    child.stdin.write(input);
    if (!keepStdinOpen) child.stdin.end();
  });
}

/** valgrind's report says no error and nothing lost. */
function assertClean(stderr) {
  assert.match(stderr, /ERROR SUMMARY: 0 errors from 0 contexts/, stderr.slice(-6000));
  assert.match(stderr, /All heap blocks were freed|definitely lost: 0 bytes in 0 blocks/, stderr.slice(-6000));
  assert.doesNotMatch(stderr, /(definitely|indirectly|possibly) lost: [1-9]/, stderr.slice(-6000));
}

test('valgrind: a stdio session with cat (garbage, a partial last line)', { skip, timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'v.db');
    const input = '{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n\u0000\xff\n[1,2]\n{"partial';
    const r = await runValgrind(['record', '--db', db, '--', 'cat'], { input });
    assert.equal(r.code, 0, `cat's status, not valgrind's ${VG_ERROR}; stderr: ${r.stderr.slice(-6000)}`);
    assert.equal(r.stdout, input);
    assertClean(r.stderr);
    assert.equal(sql(db, 'SELECT count(*) AS n FROM messages')[0].n, 10);
  } finally {
    t.cleanup();
  }
});

test('valgrind: a stdio session with fault rules (delay, error, drop, mutate, corrupt)', { skip, timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'v.db');
    const input = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n' +
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"e"}}\n' +
      '{"jsonrpc":"2.0","method":"notifications/x"}\n' +
      '{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":1}}\n' +
      '{"jsonrpc":"2.0","id":4,"method":"c"}\nnot json\n{"partial';
    const r = await runValgrind(['record', '--db', db, '--seed', '1',
      '--fault', 'method=ping dir=c2s delay ms=50', '--fault', 'tool=e error',
      '--fault', 'method=notifications/x drop', '--fault', 'method=m dir=c2s mutate set=$.params.a value=2',
      '--fault', 'method=c dir=s2c corrupt mode=truncate', '--', 'cat'], { input });
    assert.equal(r.code, 0, `cat's status, not valgrind's ${VG_ERROR}; stderr: ${r.stderr.slice(-6000)}`);
    assertClean(r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(JSON.parse(lines[0]).error.code, -32603, 'the injected error first: the delay holds the rest');
    assert.deepEqual(lines.slice(1), ['{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":2}}',
      '{"jsonrpc":"2.0","id":4,"method":"c"}'.slice(0, 18), 'not json', '{"partial']);
    assert.deepEqual(sql(db, 'SELECT action FROM faults ORDER BY n').map((f) => f.action),
      ['delay', 'error', 'drop', 'mutate', 'corrupt']);
  } finally {
    t.cleanup();
  }
});

test('valgrind: mock --fault over stdio and over HTTP (error, delay, drop, stray, mutate, status, reset, a held POST)', { skip, timeout: 300000 }, async () => {
  const t = tempDir();
  let mp;
  try {
    const db = join(t.dir, 'v.db');
    const reqs = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'e' } },
      { jsonrpc: '2.0', id: 4, method: 'prompts/list' },
      { jsonrpc: '2.0', id: 5, method: 'resources/list' },
    ];
    const input = reqs.map((m) => JSON.stringify(m) + '\n').join('');
    const rec = spawnSync(BIN, ['record', '--db', db, '--name', 's', '--', process.execPath, join(PEERS_DIR, 'emptypeer.mjs')], { input });
    assert.equal(rec.status, 0, String(rec.stderr));
    const rules = ['--fault', 'tool=e error', '--fault', 'dir=s2c method=ping delay ms=200', '--fault', 'method=tools/list drop',
      '--fault', 'dir=s2c method=prompts/list corrupt mode=stray', '--fault', 'dir=s2c method=resources/list mutate set=$.result.echo value=1'];
    const r = await runValgrind(['mock', '--db', db, 's', '--latency', 'none', ...rules], { input });
    assert.equal(r.code, 0, r.stderr.slice(-6000));
    assertClean(r.stderr);
    const out = r.stdout.trim().split('\n');
    assert.equal(out.length, 5, r.stdout);
    assert.equal(r.stderr.match(/mock: fault #/g).length, 5);

    mp = await spawnUntilLine('valgrind', [...VG, BIN, 'mock', '--db', db, 's', '--listen', '127.0.0.1:0',
      '--fault', 'method=ping http-status status=503 retry-after=1', '--fault', 'method=tools/list close',
      '--fault', 'method=prompts/list drop', '--fault', 'dir=s2c method=resources/list delay ms=100'], {
      pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, timeoutMs: 60000, name: 'valgrind mcpreel mock --listen --fault',
    });
    const post = (m, timeoutMs = 30000) => request(`${mp.match[1]}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream' }, body: JSON.stringify(m), timeoutMs });
    const busy = await post(reqs[0]);
    assert.equal(busy.status, 503);
    assert.equal(busy.headers['retry-after'], '1');
    await assert.rejects(post(reqs[1]), /ECONNRESET|socket hang up/);
    await assert.rejects(post(reqs[3], 1500), /no complete answer/, 'a dropped request: its POST is never answered');
    assert.equal((await post(reqs[4])).status, 200);
    const stopped = await stopChild(mp.child, mp.exited, { graceMs: 60000 });
    assert.equal(stopped.code, 0, mp.stderr().slice(-6000));
    assertClean(mp.stderr());
  } finally {
    if (mp) await stopChild(mp.child, mp.exited, { graceMs: 60000 });
    t.cleanup();
  }
});

test('valgrind: a stdio session whose server exits under the host', { skip, timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'v.db');
    const r = await runValgrind(['record', '--db', db, '--', process.execPath, join(PEERS_DIR, 'exitpeer.mjs'), '3'],
      { input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', keepStdinOpen: true });
    assert.equal(r.code, 3, r.stderr.slice(-6000));
    assertClean(r.stderr);
  } finally {
    t.cleanup();
  }
});

for (const extra of [[], ['--durable']]) {
test(`valgrind: an HTTP session (JSON, a batch, SSE, legacy SSE) ended by SIGTERM${extra.length ? ' (--durable)' : ''}`, { skip, timeout: 180000 }, async () => {
  const t = tempDir();
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
    stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
  });
  let mp;
  try {
    const db = join(t.dir, 'v.db');
    mp = await spawnUntilLine('valgrind', [...VG, BIN, 'record', '--db', db, '--listen', '127.0.0.1:0', '--upstream', peer.match[1], ...extra], {
      pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, timeoutMs: 60000, name: 'valgrind mcpreel record --listen',
    });
    const url = mp.match[1];
    const post = { method: 'POST', headers: { 'Content-Type': 'application/json' }, timeoutMs: 30000 };
    assert.equal((await request(`${url}/mirror`, { ...post, body: '{"jsonrpc":"2.0","id":1,"method":"a"}' })).status, 200);
    assert.equal((await request(`${url}/batch`, { ...post, body: '[{"jsonrpc":"2.0","id":2,"method":"b"}]' })).status, 200);
    assert.equal((await request(`${url}/sse-raw`, { timeoutMs: 30000 })).status, 200);
    const legacy = await readEventStream(`${url}/legacy/sse`, {
      timeoutMs: 30000,
      onEvent: (ev) => {
        if (ev.event !== 'endpoint') return 'stop';
        request(ev.data, { ...post, body: '{"jsonrpc":"2.0","id":3,"method":"c"}' }).catch(() => {});
        return undefined;
      },
    });
    assert.equal(legacy.events.length, 2);
    const stopped = await stopChild(mp.child, mp.exited, { graceMs: 60000 });
    assert.equal(stopped.code, 0, mp.stderr().slice(-6000));
    assertClean(mp.stderr());
    assert.ok(sql(db, 'SELECT count(*) AS n FROM http_exchanges')[0].n >= 5);
  } finally {
    if (mp) await stopChild(mp.child, mp.exited, { graceMs: 60000 });
    await stopChild(peer.child, peer.exited);
    t.cleanup();
  }
});
}
