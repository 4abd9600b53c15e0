// Replay and mock on unusual but legal recordings and targets: empty
// lines recorded both ways; a target that cannot be reached or goes away
// mid-replay.  Every run is the sanitizer build: no report may appear.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { spawnUntilLine, startServerEverything, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const SANITIZER = /runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer/;

function clean(r, what) {
  assert.doesNotMatch(r.stderr.toString(), SANITIZER, `${what}: no sanitizer report`);
}

const lines = (...l) => Buffer.from(l.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)) + '\n').join(''));

test('empty lines recorded both ways: replay and mock run them, no sanitizer report', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'e.db');
    const peer = ['node', join(PEERS_DIR, 'emptypeer.mjs')];
    const input = lines({ jsonrpc: '2.0', id: 1, method: 'ping' }, '', { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    let r = await runMcpreel(['record', '--db', db, '--name', 'empty', '--', ...peer], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    clean(r, 'record');
    const empties = sql(db, "SELECT direction FROM messages WHERE length(raw) = 0 ORDER BY seq");
    assert.ok(empties.some((m) => m.direction === 'c2s'), 'an empty client line is recorded');
    assert.ok(empties.some((m) => m.direction === 's2c'), 'an empty server line is recorded');

    // The same session again through cat: its empty lines are echoed.
    r = await runMcpreel(['record', '--db', db, '--name', 'cat', '--', 'cat'], { input });
    assert.equal(r.code, 0, r.stderr.toString());

    r = await runMcpreel(['replay', '--db', db, 'empty', '--', ...peer]);
    clean(r, 'replay');
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /2 requests, 2 same, 0 different, 0 missing/);
    r = await runMcpreel(['replay', '--db', db, 'cat', '--', 'cat']);
    clean(r, 'replay of the cat session');
    assert.ok(r.code === 0 || r.code === 1, `replay runs to its end: ${r.code} ${r.stderr}`);

    for (const s of ['empty', 'cat']) {
      r = await runMcpreel(['mock', '--db', db, s], { input });
      clean(r, `mock ${s}`);
      assert.equal(r.code, 0, r.stderr.toString());
    }
    r = await runMcpreel(['mock', '--db', db, 'empty'], { input });
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    // (In any order: a parse error goes at once, an answer after its gap.)
    assert.deepEqual(out.map((m) => String(m.result?.echo ?? m.error?.code)).sort(), ['-32700', 'ping', 'tools/list'],
      'both requests answered from the recording, the empty line gets a parse error');
  } finally {
    t.cleanup();
  }
});

// A target that cannot be reached, or that goes away mid-replay: replay
// stops at once with exit 2 and says why, never waiting out --timeout
// (60 s here) for requests a server that is not there cannot answer.
const LONG_TIMEOUT_S = 60;
const PROMPT_MS = 15000;	// generous: a loaded machine, the ASan build

async function timedReplay(args) {
  const t0 = Date.now();
  const r = await runMcpreel(['replay', ...args, '--timeout', String(LONG_TIMEOUT_S)], { timeoutMs: (LONG_TIMEOUT_S + 30) * 1000 });
  return { ...r, ms: Date.now() - t0 };
}

test('replay --upstream to a refused port, or a TLS handshake that fails: exit 2 at once, with why', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'u.db');
    const input = lines({ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    let r = await runMcpreel(['record', '--db', db, '--name', 's', '--', 'node', join(PEERS_DIR, 'emptypeer.mjs')], { input });
    assert.equal(r.code, 0, r.stderr.toString());

    // A port nobody listens on: bind one, close it, use it.
    const port = await new Promise((res) => {
      const srv = net.createServer();
      srv.listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => res(p)); });
    });
    r = await timedReplay(['--db', db, 's', '--upstream', `http://127.0.0.1:${port}/mcp`]);
    console.log(`refused: exit ${r.code} after ${r.ms} ms`);
    clean(r, 'refused');
    assert.equal(r.code, 2, r.stderr.toString());
    assert.ok(r.ms < PROMPT_MS, `finished in ${r.ms} ms, not after --timeout`);
    assert.match(r.stderr.toString(), /mcpreel replay: the replay stopped early: cannot reach http:\/\/127\.0\.0\.1:\d+: Connection refused/);
    assert.match(r.stdout.toString(), /the replay stopped early/);

    // https:// to a plain HTTP server: the handshake fails.
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on http:\/\/(127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    try {
      r = await timedReplay(['--db', db, 's', '--insecure', '--upstream', `https://${peer.match[1]}/mcp`, '--report', 'json']);
      console.log(`TLS handshake failure: exit ${r.code} after ${r.ms} ms`);
      clean(r, 'TLS');
      assert.equal(r.code, 2, r.stderr.toString());
      assert.ok(r.ms < PROMPT_MS, `finished in ${r.ms} ms, not after --timeout`);
      const rep = JSON.parse(r.stdout.toString());
      assert.match(rep.stopped_early, /TLS with https:\/\/127\.0\.0\.1:\d+ failed|closed the connection/);
      assert.equal(rep.exit_status, 2);
    } finally {
      await stopChild(peer.child, peer.exited);
    }
  } finally {
    t.cleanup();
  }
});

test('replay against a server killed mid-replay, over HTTP and over stdio: exit 2 at once, with why', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'k.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });

    // Over HTTP: server-everything is killed while the replay runs (its
    // long-running operation takes a second of the recorded session, and
    // --pace recorded keeps the recorded gaps, so the replay is still
    // going when the kill comes).
    const srv = await startServerEverything('streamableHttp');
    let killedAt;
    const run = timedReplay(['--db', db, 'sdk', '--pace', 'recorded', '--upstream', srv.url]);
    setTimeout(() => { killedAt = Date.now(); srv.child.kill('SIGKILL'); }, 700);
    let r = await run;
    console.log(`HTTP server killed: exit ${r.code} ${Date.now() - killedAt} ms after the kill`);
    clean(r, 'killed over HTTP');
    assert.equal(r.code, 2, r.stderr.toString());
    assert.ok(r.ms < PROMPT_MS, `finished in ${r.ms} ms, not after --timeout`);
    assert.match(r.stderr.toString(), /the replay stopped early: (cannot reach|the connection to|http:\/\/127\.0\.0\.1:\d+ closed the connection)/);
    await srv.stop();

    // Over stdio: a server that exits after its first answers.
    const dying = `let n=0;require('readline').createInterface({input:process.stdin}).on('line',(l)=>{const m=JSON.parse(l);if(m.id===undefined)return;if(++n>2)process.exit(3);process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result:{}})+'\\n')})`;
    const dyingJs = join(t.dir, 'dying.cjs');
    writeFileSync(dyingJs, dying);
    r = await timedReplay(['--db', db, 'sdk', '--', process.execPath, dyingJs]);
    console.log(`stdio server exited: exit ${r.code} after ${r.ms} ms`);
    clean(r, 'stdio');
    assert.equal(r.code, 2, r.stderr.toString());
    assert.ok(r.ms < PROMPT_MS, `finished in ${r.ms} ms, not after --timeout`);
    assert.match(r.stderr.toString(), /the replay stopped early: server exited with status 3/);
  } finally {
    t.cleanup();
  }
});

test('replay report: a long answer that differs at character 500 shows where, not two equal cut strings', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'r.db');
    // A server whose one answer is a 1000-character text; its 500th
    // character comes from argv.
    const peer = join(t.dir, 'longpeer.cjs');
    writeFileSync(peer, `const c = process.argv[2];
require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  const text = 'a'.repeat(499) + c + 'b'.repeat(500);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }] } }) + '\\n');
});`);
    const input = lines({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'long', arguments: {} } });
    let r = await runMcpreel(['record', '--db', db, '--name', 'long', '--', process.execPath, peer, 'X'], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    r = await runMcpreel(['replay', '--db', db, 'long', '--no-record', '--', process.execPath, peer, 'Y']);
    clean(r, 'replay');
    const out = r.stdout.toString();
    console.log(out.split('\n').filter((l) => /differ|recorded:|replayed:/.test(l)).join('\n'));
    assert.equal(r.code, 1, out);
    assert.match(out, /\$\.result\.content\[0\]\.text: strings differ at character 500 \(of 1000 and 1000\)/);
    assert.match(out, /\n {4}recorded: \.\.\.a{30}\[X\]b{30}\.\.\.\n/);
    assert.match(out, /\n {4}replayed: \.\.\.a{30}\[Y\]b{30}\.\.\.\n/);
  } finally {
    t.cleanup();
  }
});

test('replay against a server that exits when nothing answered is left: not "stopped early" (a trailing notification, a request unanswered when recorded too)', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'x.db');
    const peer = join(t.dir, 'exitpeer.cjs');
    // stay: answers all; exit-after: exits after answering tools/list;
    // noanswer: exits on tools/list without answering it.
    writeFileSync(peer, `const mode = process.argv[2];
require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  if (mode === 'noanswer' && m.method === 'tools/list') process.exit(0);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } }) + '\\n', () => {
    if (mode === 'exit-after' && m.method === 'tools/list') process.exit(0);
  });
});`);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const note = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
    // (a) A notification 1.5 s after the last answer, then the end.
    let r = await runMcpreel(['record', '--db', db, '--name', 'trail', '--', process.execPath, peer, 'stay'], {
      input: lines(ping, list), keepStdinOpen: true,
      onSpawn: (child) => setTimeout(() => { child.stdin.write(lines(note)); setTimeout(() => child.stdin.end(), 300); }, 1500),
    });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages WHERE method = 'notifications/roots/list_changed'")[0].n, 1);
    r = await runMcpreel(['replay', '--db', db, 'trail', '--pace', 'recorded', '--', process.execPath, peer, 'exit-after']);
    clean(r, 'replay trail');
    console.log(`trailing notification, server gone after its last answer: exit ${r.code}`);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout.toString(), /2 requests, 2 same/);
    // (b) The last request unanswered when recorded: the server exited.
    r = await runMcpreel(['record', '--db', db, '--name', 'gone', '--', process.execPath, peer, 'noanswer'], { input: lines(ping, list) });
    r = await runMcpreel(['replay', '--db', db, 'gone', '--', process.execPath, peer, 'noanswer']);
    clean(r, 'replay gone');
    console.log(`last request unanswered, recorded and replayed: exit ${r.code}`);
    assert.notEqual(r.code, 2, `${r.stdout}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr.toString() + r.stdout.toString(), /stopped early/);
  } finally {
    t.cleanup();
  }
});

test('replay --upstream: a GET stream the server closes before any head is noted, the replay goes on', { timeout: 120000 }, async () => {
  const http = await import('node:http');
  const t = tempDir();
  let server;
  try {
    const db = join(t.dir, 'g.db');
    const peer = join(t.dir, 'echopeer.cjs');
    writeFileSync(peer, `require('readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } }) + '\\n');
});`);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'g', version: '1' } } };
    const initd = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    let r = await runMcpreel(['record', '--db', db, '--name', 'g', '--', process.execPath, peer], { input: lines(init, initd, ping) });
    assert.equal(r.code, 0, r.stderr.toString());
    let gets = 0;
    server = http.createServer((req, res) => {
      if (req.method === 'GET') { gets++; req.socket.destroy(); return; }
      const body = [];
      req.on('data', (c) => body.push(c));
      req.on('end', () => {
        if (req.method !== 'POST') { res.writeHead(200); res.end(); return; }
        const m = JSON.parse(Buffer.concat(body).toString());
        if (m.id === undefined) { res.writeHead(202, { 'Mcp-Session-Id': 'abc' }); res.end(); return; }
        res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'abc' });
        // Slow enough that the GET has been refused before the last answer.
        setTimeout(() => res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } })), 300);
      });
    });
    await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${server.address().port}/mcp`;
    r = await runMcpreel(['replay', '--db', db, 'g', '--upstream', url]);
    clean(r, 'replay with the GET refused');
    console.log(`GET closed before its head (${gets} GET): exit ${r.code}`);
    assert.ok(gets >= 1, 'the GET stream was tried');
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout.toString(), /2 requests, 2 same/);
  } finally {
    server?.close();
    t.cleanup();
  }
});
