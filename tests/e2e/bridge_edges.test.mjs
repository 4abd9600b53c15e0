// The bridge's edges: `record --connect URL` (the host on stdio, the server
// over HTTP) and `record --listen ADDR -- CMD` (HTTP clients, a stdio
// server).  Options that make no sense together, a closed port as the SDK
// client sees it, --header reaching the server and nowhere in the record,
// the host closing stdin, CMD exiting, the Origin check.  The acceptance
// runs (whole SDK sessions against server-everything) are in bridge.test.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { request, spawnUntilLine, stopChild } from './lib/servers.mjs';
import { MCPREEL, runMcpreel, sql, tempDir } from './lib/util.mjs';

const INIT = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'edges', version: '1' } },
});

/** A port nothing listens on: one the kernel gave us, closed again. */
async function closedPort() {
  const srv = net.createServer();
  await new Promise((res) => srv.listen(0, '127.0.0.1', res));
  const { port } = srv.address();
  await new Promise((res) => srv.close(res));
  return port;
}

/**
 * A small Streamable HTTP server of ours: answers each JSON-RPC request
 * with {result: {method, authorization}} (JSON, with a session id), 202
 * to the rest, 200 to DELETE; or `status` to every POST.  Keeps every
 * request's method, headers and body.
 */
async function startTinyServer({ status } = {}) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method === 'DELETE') return res.writeHead(200).end();
      if (req.method === 'GET') return res.writeHead(405).end();
      if (status) return res.writeHead(status, { 'Content-Type': 'text/plain' }).end(`status ${status} from tiny\n`);
      const msg = JSON.parse(body);
      if (msg.id === undefined || msg.method === undefined) return res.writeHead(202).end();
      const result = msg.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'tiny', version: '1' } }
        : { method: msg.method, authorization: req.headers.authorization ?? null };
      res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'tiny-session-1' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise((res) => srv.listen(0, '127.0.0.1', res));
  const url = `http://127.0.0.1:${srv.address().port}/mcp`;
  return { url, seen, close: () => new Promise((res) => { srv.closeAllConnections?.(); srv.close(res); }) };
}

/**
 * Run `mcpreel args` as a host would: each line of `lines` is written once
 * the answers to the lines before it came (a request's answer; nothing
 * for a notification), then stdin is closed.  Resolves {code, stdout (the
 * answers, parsed), stderr}.
 */
function converse(args, lines, { timeoutMs = 30000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(MCPREEL, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env } });
    const answers = [];
    let out = '';
    let err = '';
    let i = 0;
    const next = () => {
      while (i < lines.length) {
        const line = lines[i++];
        child.stdin.write(line + '\n');
        if (JSON.parse(line).id !== undefined) return;
      }
      child.stdin.end();
    };
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`timed out; stderr: ${err}`)); }, timeoutMs);
    child.stdout.on('data', (c) => {
      out += c;
      let nl;
      while ((nl = out.indexOf('\n')) >= 0) {
        answers.push(JSON.parse(out.slice(0, nl)));
        out = out.slice(nl + 1);
        next();
      }
    });
    child.stderr.on('data', (c) => { err += c; });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout: answers, stderr: err }); });
    next();
  });
}

/** Every file under dir (db, -wal, -shm, cassettes) as one Buffer. */
function allBytes(dir) {
  return Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))));
}

test('record: combinations that make no sense exit 2 with a sentence saying what to give', { timeout: 30000 }, async () => {
  const cases = [
    [['--connect', 'http://127.0.0.1:1/mcp', '--', 'cat'], /either --connect URL or -- CMD/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--upstream', 'http://127.0.0.1:2'], /one of --upstream URL and --connect URL/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--listen', '127.0.0.1:0'], /--connect URL talks to the host over stdio/],
    [['--listen', '127.0.0.1:0'], /--listen needs --upstream URL .* or -- CMD/],
    [['--header', 'Authorization: Bearer x', '--', 'cat'], /--header and --transport are for --connect URL/],
    [['--transport', 'sse', '--', 'cat'], /--header and --transport are for --connect URL/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--transport', 'carrier-pigeon'], /--transport takes auto, http or sse/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--header', 'no colon here'], /--header takes 'Name: value'/],
    [['--insecure', '--', 'cat'], /--cacert and --insecure are for --upstream URL or --connect URL/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--rewrite-host'], /are for --upstream URL/],
    [['--max-sessions', '5', '--', 'cat'], /--max-sessions are for --upstream URL/],
    [['--listen', '127.0.0.1:0', '--fault', 'error', '--', 'cat'], /--fault and --faults are not available/],
    [['--connect', 'http://127.0.0.1:1/mcp', '--durable'], /--durable is not available/],
    [['--connect', 'ftp://127.0.0.1/x'], /mcpreel record: /],
    [['--listen', '0.0.0.0:0', '--', 'cat'], /not a loopback address/],
  ];
  const t = tempDir();
  try {
    for (const [args, re] of cases) {
      const r = await runMcpreel(['record', '--db', join(t.dir, 'x.db'), ...args], { input: '' });
      assert.equal(r.code, 2, `${args.join(' ')}: exit status 2; stderr: ${r.stderr}`);
      assert.match(r.stderr.toString(), re, args.join(' '));
    }
  } finally {
    t.cleanup();
  }
});

test('--connect to a closed port: the SDK client gets an error naming the URL at once; exit 1; the error is a note, not a server message', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'c.db');
  const url = `http://127.0.0.1:${await closedPort()}/mcp`;
  // Through sh, which writes mcpreel's exit status where the test reads it.
  const statusFile = join(t.dir, 'status');
  const transport = new StdioClientTransport({
    command: 'sh',
    args: ['-c', `"$0" "$@"; echo $? > ${statusFile}`, MCPREEL, 'record', '--db', db, '--name', 'closed', '--connect', url],
    stderr: 'pipe',
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  let stderr = '';
  transport.stderr.on('data', (c) => { stderr += c; });
  const client = new Client({ name: 'edges', version: '1' });
  const t0 = Date.now();
  try {
    await assert.rejects(client.connect(transport), (e) => {
      assert.match(String(e.message), new RegExp(`the server at ${url.replace(/[.]/g, '\\.')}`));
      assert.match(String(e.message), /Connection refused|cannot reach/);
      return true;
    });
    assert.ok(Date.now() - t0 < 10000, 'nothing hangs');
    await client.close().catch(() => {});
    let status;
    for (let i = 0; i < 100 && status === undefined; i++) {
      try {
        status = Number(readFileSync(statusFile, 'utf8').trim());
      } catch {
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    assert.equal(status, 1, `exit 1 when the server could never be reached; stderr: ${stderr}`);
    assert.match(stderr, /the server at http:\/\/127\.0\.0\.1:\d+\/mcp: /, 'the first failure is said on stderr');
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/);
    const [s] = sql(db, 'SELECT transport, target FROM sessions');
    assert.deepEqual(s, { transport: 'http', target: url });
    const msgs = sql(db, 'SELECT direction, raw FROM messages ORDER BY seq');
    assert.deepEqual(msgs.map((m) => m.direction), ['c2s'], 'only the client request is a message');
    const notes = sql(db, "SELECT text FROM events WHERE kind = 'note'").map((e) => e.text);
    assert.ok(notes.some((n) => /^bridge: stdio host/.test(n)), notes.join('\n'));
    assert.ok(notes.some((n) => /mcpreel answered request 0 itself \(not the server\): .*-32000/.test(n)), notes.join('\n'));
  } finally {
    await client.close().catch(() => {});
    t.cleanup();
  }
});

test('--connect --header: the header reaches the server with every request, the secret is in no file; the host closing stdin ends the session with DELETE, exit 0', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'h.db');
  const tiny = await startTinyServer();
  const SECRET = 'Zq9-bridge-secret-77f1c0de';
  try {
    const lines = [
      INIT,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
    ];
    const r = await converse(['record', '--db', db, '--connect', `${tiny.url}?api_key=${SECRET}`,
      '--header', `Authorization: Bearer ${SECRET}`, '--header', 'X-Plain: visible'], lines);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error:/);
    const out = r.stdout;
    assert.deepEqual(out.map((m) => m.id), [1, 2, 3], 'each request answered once, in order');
    assert.equal(out[1].result.authorization, `Bearer ${SECRET}`, 'the server got the header');
    const posts = tiny.seen.filter((q) => q.method === 'POST');
    assert.equal(posts.length, 4);
    assert.equal(posts[2].headers['mcp-method'], undefined, 'a 2025 request carries no Mcp-Method');
    assert.equal(posts[3].headers['mcp-method'], 'tools/call', 'a 2026-07-28 request carries its headers');
    assert.equal(posts[3].headers['mcp-name'], 'echo');
    assert.equal(posts[3].headers['mcp-protocol-version'], '2026-07-28');
    for (const p of posts) {
      assert.equal(p.headers.authorization, `Bearer ${SECRET}`);
      assert.equal(p.headers['x-plain'], 'visible');
    }
    assert.equal(posts[2].headers['mcp-session-id'], 'tiny-session-1', 'the session id goes on');
    assert.equal(posts[2].headers['mcp-protocol-version'], '2025-06-18', 'the version initialize answered');
    const del = tiny.seen.filter((q) => q.method === 'DELETE');
    assert.equal(del.length, 1, 'the host closing stdin ends the session: one DELETE');
    const [s] = sql(db, 'SELECT transport, target, end_reason FROM sessions');
    assert.equal(s.transport, 'http');
    assert.doesNotMatch(s.target, new RegExp(SECRET), 'the target is redacted');
    assert.match(s.target, /api_key=/);
    const dirs = sql(db, 'SELECT direction, count(*) AS n FROM messages GROUP BY direction ORDER BY direction');
    assert.deepEqual(dirs, [{ direction: 'c2s', n: 4 }, { direction: 's2c', n: 3 }], 'every message once');
    assert.ok(!allBytes(t.dir).includes(SECRET), 'the secret is in no file under the test directory');
    assert.ok(!r.stderr.includes(SECRET), 'nor on stderr');
  } finally {
    await tiny.close();
    t.cleanup();
  }
});

test('--connect: headers from MCPREEL_HEADERS (one a line, CRLF or LF) reach the server with every request and are in no file; a bad line exits 2 before a session', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'e.db');
  const tiny = await startTinyServer();
  const SECRET = 'Env-bridge-secret-5d2a91';
  try {
    const lines = [
      INIT,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    ];
    const r = await converse(['record', '--db', db, '--connect', tiny.url, '--header', 'X-Plain: visible'], lines,
      { env: { MCPREEL_HEADERS: `Authorization: Bearer ${SECRET}\r\n\nX-Second: two\n` } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error:/);
    assert.deepEqual(r.stdout.map((m) => m.id), [1, 2]);
    const posts = tiny.seen.filter((q) => q.method === 'POST');
    assert.equal(posts.length, 3);
    for (const p of posts) {
      assert.equal(p.headers.authorization, `Bearer ${SECRET}`);
      assert.equal(p.headers['x-second'], 'two');
      assert.equal(p.headers['x-plain'], 'visible', '--header as well');
    }
    assert.ok(!allBytes(t.dir).includes(SECRET), 'the secret is in no file under the test directory');
    assert.ok(!r.stderr.includes(SECRET), 'nor on stderr');
    const db2 = join(t.dir, 'bad.db');
    const bad = await runMcpreel(['record', '--db', db2, '--connect', tiny.url], { input: INIT + "\n", timeoutMs: 20000, env: { MCPREEL_HEADERS: `Authorization Bearer ${SECRET}` } });
    assert.equal(bad.code, 2, bad.stderr.toString());
    assert.match(bad.stderr.toString(), /MCPREEL_HEADERS/);
    assert.ok(!bad.stderr.toString().includes(SECRET), 'the value is not said');
    assert.ok(!existsSync(db2), 'no database made');
  } finally {
    await tiny.close();
    t.cleanup();
  }
});

test('--connect: a server answering 401 gets the request an error from mcpreel naming the status, recorded as a note', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'u.db');
  const tiny = await startTinyServer({ status: 401 });
  try {
    const r = await runMcpreel(['record', '--db', db, '--connect', tiny.url], { input: INIT + '\n', timeoutMs: 20000 });
    const out = r.stdout.toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(out.length, 1, `one answer; stderr: ${r.stderr}`);
    assert.equal(out[0].id, 1);
    assert.equal(out[0].error.code, -32000);
    assert.match(out[0].error.message, /^mcpreel: the server at http:\/\/127\.0\.0\.1:\d+.*401/);
    assert.deepEqual(sql(db, 'SELECT direction FROM messages').map((m) => m.direction), ['c2s']);
    assert.ok(sql(db, "SELECT text FROM events WHERE kind = 'note'").some((e) => /answered request 1 itself/.test(e.text)));
  } finally {
    await tiny.close();
    t.cleanup();
  }
});

/**
 * Start `record --listen ADDR ...opts -- ...cmd` (ADDR 127.0.0.1:0 unless
 * given); resolves {url, port, child, exited, stderr()}.
 */
async function startListen(db, cmd, { opts = [], listen = '127.0.0.1:0' } = {}) {
  const p = await spawnUntilLine(MCPREEL, ['record', '--db', db, '--name', 'served', '--listen', listen, ...opts, '--', ...cmd], {
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    pattern: /^mcpreel: listening on (http:\/\/[0-9.]+:(\d+))$/,
  });
  return { url: p.match[1].replace('0.0.0.0', '127.0.0.1'), port: Number(p.match[2]), child: p.child, exited: p.exited, stderr: p.stderr };
}

/**
 * Send `head` (a request head, and a body if any) on a new connection to
 * 127.0.0.1:port; resolves the first line of the answer, or null when
 * none came within ms.
 */
function rawStatus(port, head, ms = 3000) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(head));
    let got = '';
    const done = (v) => { clearTimeout(timer); sock.destroy(); resolve(v); };
    const timer = setTimeout(() => done(null), ms);
    sock.on('data', (c) => {
      got += c;
      if (got.includes('\r\n')) done(got.slice(0, got.indexOf('\r\n')));
    });
    sock.on('error', () => done(null));
    sock.on('close', () => done(got ? got.split('\r\n')[0] : null));
  });
}

// A stdio server that answers initialize, then exits with status 3 at the
// next request without answering it.
const EXITER = `
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'exiter', version: '1' } } }) + '\\n');
  } else if (m.id !== undefined) {
    process.stderr.write('exiter: leaving\\n');
    process.exit(3);
  }
});`;

test('--listen -- CMD: CMD exiting gets the request in flight an error, and mcpreel exits with its status', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'l.db');
  const mp = await startListen(db, [process.execPath, '-e', EXITER]);
  try {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const r1 = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: INIT });
    assert.equal(r1.status, 200);
    assert.equal(JSON.parse(r1.body.toString()).result.serverInfo.name, 'exiter');
    assert.equal(r1.headers['mcp-session-id'], undefined, 'no session id is minted');
    const r2 = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","id":"two","method":"tools/list"}' });
    assert.equal(r2.status, 200);
    const e = JSON.parse(r2.body.toString());
    assert.equal(e.id, 'two');
    assert.equal(e.error.code, -32000);
    assert.match(e.error.message, /exited with status 3/);
    // Sent while the last answers go out: an error, not a 202 with nothing.
    const r3 = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","id":3,"method":"ping"}', timeoutMs: 5000 });
    assert.equal(r3.status, 200, 'a request while mcpreel finishes is answered');
    const e3 = JSON.parse(r3.body.toString());
    assert.equal(e3.id, 3);
    assert.match(e3.error.message, /exited with status 3/);
    const { code } = await mp.exited;
    assert.equal(code, 3, `mcpreel exits with CMD's status; stderr: ${mp.stderr()}`);
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    assert.match(mp.stderr(), /exiter: leaving/, "CMD's stderr is passed on");
    const [s] = sql(db, 'SELECT transport, target, exit_status FROM sessions');
    assert.equal(s.transport, 'stdio');
    assert.deepEqual(JSON.parse(s.target), [process.execPath, '-e', EXITER]);
    assert.equal(s.exit_status, 3);
    const kinds = sql(db, 'SELECT kind FROM events ORDER BY id').map((r) => r.kind);
    assert.ok(kinds.includes('stderr') && kinds.includes('exit'), kinds.join(' '));
    assert.deepEqual(sql(db, 'SELECT direction FROM messages ORDER BY seq').map((m) => m.direction), ['c2s', 's2c', 'c2s', 'c2s']);
    const notes = sql(db, "SELECT text FROM events WHERE kind = 'note'").map((n) => n.text);
    assert.ok(notes.some((n) => n.startsWith('mcpreel answered request 3 itself')), notes.join('\n'));
  } finally {
    await stopChild(mp.child, mp.exited).catch(() => {});
    t.cleanup();
  }
});

test('--listen -- CMD on loopback: a request from a page of another machine (Origin) gets 403; a local page and no Origin pass; SIGTERM stops CMD', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'o.db');
  // cat answers each request with itself: enough to see it passed.
  const mp = await startListen(db, ['cat']);
  try {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const body = '{"jsonrpc":"2.0","id":5,"result":{}}';
    const evil = await request(`${mp.url}/mcp`, { method: 'POST', headers: { ...h, Origin: 'http://evil.example' }, body });
    assert.equal(evil.status, 403);
    assert.match(evil.body.toString(), /Origin not allowed/);
    const rebound = await request(`${mp.url}/mcp`, { method: 'POST', headers: { ...h, Origin: 'http://127.0.0.1.evil.example:8080' }, body });
    assert.equal(rebound.status, 403);
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:9', 'http://[::1]:80', undefined]) {
      const r = await request(`${mp.url}/mcp`, { method: 'POST', headers: origin ? { ...h, Origin: origin } : h, body });
      assert.equal(r.status, 202, `Origin ${origin}`);
    }
  } finally {
    mp.child.kill('SIGTERM');
    const { code } = await mp.exited;
    assert.equal(code, 0, `cat exits 0 when its stdin closes; stderr: ${mp.stderr()}`);
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    const n = sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 'c2s'")[0].n;
    assert.equal(n, 4, 'the four answers that passed are recorded, the refused ones are not');
    t.cleanup();
  }
});

test('--listen -- CMD: a command that does not read its stdin holds the clients back (16 MiB waiting, not all they send)', { timeout: 90000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'f.db');
  // Reads nothing, answers nothing: its stdin pipe fills.
  const mp = await startListen(db, [process.execPath, '-e', 'setTimeout(() => {}, 120000)'], { opts: ['--head-timeout', '2'] });
  try {
    const h = { 'Content-Type': 'application/json' };
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(1024 * 1024) } });
    let accepted = 0;
    for (let i = 0; i < 40; i++) {
      const r = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: big, timeoutMs: 3000 }).catch(() => null);
      if (!r) break;
      assert.equal(r.status, 202);
      accepted++;
    }
    assert.ok(accepted >= 16, `the first 16 MiB are taken (${accepted})`);
    assert.ok(accepted < 30, `then the clients wait: ${accepted} of 40 taken`);
    // Held back by us, a complete head is not timed out (--head-timeout 2).
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const st = await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${ping.length}\r\n\r\n${ping}`, 3500);
    assert.equal(st, null, `no answer while the clients are held back (got ${st})`);
  } finally {
    mp.child.kill('SIGTERM');
    const { code } = await mp.exited;
    assert.equal(code, 143, `the command did not stop on its stdin closing: SIGTERM (128+15); stderr: ${mp.stderr()}`);
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    t.cleanup();
  }
});

test('--listen -- CMD: a second request with the id of one still waiting gets an error from mcpreel, not the server', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'd.db');
  // Reads its requests and never answers.
  const mp = await startListen(db, [process.execPath, '-e', 'process.stdin.resume(); setTimeout(() => {}, 120000)']);
  try {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const body = '{"jsonrpc":"2.0","id":"same","method":"tools/list"}';
    const first = request(`${mp.url}/mcp`, { method: 'POST', headers: h, body, timeoutMs: 20000 });
    await new Promise((res) => setTimeout(res, 300));
    const second = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body, timeoutMs: 5000 });
    assert.equal(second.status, 200);
    const e = JSON.parse(second.body.toString());
    assert.equal(e.id, 'same');
    assert.equal(e.error.code, -32000);
    assert.match(e.error.message, /a request with id "same" is waiting for the server's answer already/);
    mp.child.kill('SIGTERM');
    // The first is still owed an answer: mcpreel gives it one as it stops.
    const r1 = await first;
    assert.match(JSON.parse(r1.body.toString()).error.message, /mcpreel/);
    await mp.exited;
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 'c2s'")[0].n, 2, 'both are what the client sent');
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 's2c'")[0].n, 0, "mcpreel's answers are no server's");
    const notes = sql(db, "SELECT text FROM events WHERE kind = 'note'").map((n) => n.text);
    assert.equal(notes.filter((n) => n.startsWith('mcpreel answered request')).length, 2, notes.join('\n'));
  } finally {
    mp.child.kill('SIGKILL');
    await mp.exited;
    t.cleanup();
  }
});

test('--connect --no-db --cassette FILE --check: the session as a cassette (transport http, the note, every message once) and no database', { timeout: 60000 }, async () => {
  const t = tempDir();
  const tiny = await startTinyServer();
  const cassette = join(t.dir, 'remote.jsonl');
  try {
    const lines = [INIT, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })];
    const r = await converse(['record', '--no-db', '--cassette', cassette, '--check', '--name', 'remote', '--connect', tiny.url], lines);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error:/);
    const rows = readFileSync(cassette, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(rows[0].transport, 'http');
    assert.equal(rows[0].name, 'remote');
    assert.equal(rows[0].target, tiny.url);
    assert.ok(rows.some((x) => x.type === 'event' && /^bridge: stdio host/.test(x.text)));
    assert.deepEqual(rows.filter((x) => x.type === 'message').map((x) => x.direction ?? x.dir), ['c2s', 's2c', 'c2s', 'c2s', 's2c']);
    assert.deepEqual(readdirSync(t.dir), ['remote.jsonl'], 'nothing but the cassette');
  } finally {
    await tiny.close();
    t.cleanup();
  }
});

test('--listen -- CMD: SIGHUP ends the recording as SIGTERM does; the session is ended in the record', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 's.db');
  const mp = await startListen(db, ['cat']);
  try {
    mp.child.kill('SIGHUP');
    const { code, signal } = await mp.exited;
    assert.equal(signal, null, 'mcpreel is not killed by it');
    assert.equal(code, 0, mp.stderr());
    const [s] = sql(db, 'SELECT exit_status, end_reason, ended_ns FROM sessions');
    assert.equal(s.exit_status, 0);
    assert.match(s.end_reason, /Hangup/);
    assert.ok(s.ended_ns > 0);
  } finally {
    t.cleanup();
  }
});

test('--listen -- CMD on loopback: a Host not naming this machine gets 403, GET included, before any body is read; a body over the cap gets 413 by default', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'h.db');
  const mp = await startListen(db, ['cat']);
  try {
    // A same-origin GET from a rebound page: no Origin, its own name in Host.
    assert.match(await rawStatus(mp.port, `GET /mcp HTTP/1.1\r\nHost: evil.example:${mp.port}\r\nAccept: text/event-stream\r\n\r\n`), /^HTTP\/1\.1 403/);
    const body = '{"jsonrpc":"2.0","id":5,"result":{}}';
    for (const host of [`evil.example:${mp.port}`, '127.0.0.1.nip.io', 'localhost.evil.example', '127.0.0.1@evil.example']) {
      assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`), /^HTTP\/1\.1 403/, host);
    }
    for (const host of [`localhost:${mp.port}`, 'LOCALHOST', `127.0.0.1:${mp.port}`, '127.9.9.9', `[::1]:${mp.port}`, 'a.localhost:1']) {
      assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`), /^HTTP\/1\.1 202/, host);
    }
    // Refused at the head: a 3 GiB body is never waited for.
    assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 3221225472\r\n\r\n{"jsonrpc"`), /^HTTP\/1\.1 403/);
    // No --max-record-size: the default cap (128 MiB) holds.
    assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 3221225472\r\n\r\n{"jsonrpc"`), /^HTTP\/1\.1 413/);
  } finally {
    mp.child.kill('SIGTERM');
    const { code } = await mp.exited;
    assert.equal(code, 0, mp.stderr());
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 'c2s'")[0].n, 6, 'the six that passed');
    t.cleanup();
  }
});

test('--listen 0.0.0.0 --allow-remote -- CMD: a connection on a loopback address is still checked (Origin, Host); --max-record-size caps a body', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'w.db');
  const mp = await startListen(db, ['cat'], { listen: '0.0.0.0:0', opts: ['--allow-remote', '--max-record-size', '1K'] });
  try {
    const body = '{"jsonrpc":"2.0","id":5,"result":{}}';
    assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: evil.example:${mp.port}\r\nOrigin: http://evil.example:${mp.port}\r\nContent-Length: ${body.length}\r\n\r\n${body}`), /^HTTP\/1\.1 403/);
    assert.match(await rawStatus(mp.port, `GET /mcp HTTP/1.1\r\nHost: evil.example\r\nAccept: text/event-stream\r\n\r\n`), /^HTTP\/1\.1 403/);
    assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${mp.port}\r\nContent-Length: ${body.length}\r\n\r\n${body}`), /^HTTP\/1\.1 202/);
    assert.match(await rawStatus(mp.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000\r\n\r\n`), /^HTTP\/1\.1 413/);
  } finally {
    mp.child.kill('SIGTERM');
    await mp.exited;
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    t.cleanup();
  }
});

// Reads requests and answers none; exits when its stdin ends.
const NEVER = "process.stdin.on('data', () => {}); process.stdin.on('end', () => process.exit(0));";

test('--listen -- CMD: a cancelled request waits no more (its POST ends, its id is free); SIGTERM with one pending gives no "did not finish" warning', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'c.db');
  const mp = await startListen(db, [process.execPath, '-e', NEVER]);
  try {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const first = request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}', timeoutMs: 20000 });
    await new Promise((res) => setTimeout(res, 200));
    const c = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timeout"}}' });
    assert.equal(c.status, 202);
    const t0 = Date.now();
    const r1 = await first;
    assert.ok(Date.now() - t0 < 3000, 'the cancelled POST ends at once');
    assert.equal(r1.status, 202);
    // id 7 is free again: not "waiting already".
    const again = request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","id":7,"method":"ping"}', timeoutMs: 20000 });
    await new Promise((res) => setTimeout(res, 300));
    mp.child.kill('SIGTERM');
    const ra = await again;
    assert.match(JSON.parse(ra.body.toString()).error.message, /mcpreel/);
    const { code } = await mp.exited;
    assert.equal(code, 0, mp.stderr());
    assert.doesNotMatch(mp.stderr(), /did not finish/);
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
  } finally {
    mp.child.kill('SIGKILL');
    await mp.exited;
    t.cleanup();
  }
});

// Answers every request after parsing and writing it again (as many
// servers do): "a\u0062" comes back as "ab".
const REENCODER = `
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n');
});`;

test('--listen -- CMD: an answer whose id the server wrote another way ("a\\u0062" as "ab", 1e0 as 1, \\/ as /) reaches the POST that asked', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'e.db');
  const mp = await startListen(db, [process.execPath, '-e', REENCODER]);
  try {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    for (const [id, back] of [['"a\\u0062"', 'ab'], ['1e0', 1], ['2.0', 2], ['3', 3], ['"x\\/y"', 'x/y']]) {
      const r = await request(`${mp.url}/mcp`, { method: 'POST', headers: h, body: `{"jsonrpc":"2.0","id":${id},"method":"ping"}`, timeoutMs: 4000 });
      assert.equal(r.status, 200, id);
      assert.equal(JSON.parse(r.body.toString()).id, back);
    }
  } finally {
    mp.child.kill('SIGTERM');
    await mp.exited;
    assert.doesNotMatch(mp.stderr(), /Sanitizer|runtime error:/);
    t.cleanup();
  }
});

test('--listen -- CMD: a command exiting 130 by itself is no signal in the record', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'x.db');
  const mp = await startListen(db, [process.execPath, '-e', 'setTimeout(() => process.exit(130), 300)']);
  try {
    const { code } = await mp.exited;
    assert.equal(code, 130);
    const [s] = sql(db, 'SELECT exit_status, exit_signal FROM sessions');
    assert.equal(s.exit_status, 130);
    assert.equal(s.exit_signal, null);
  } finally {
    t.cleanup();
  }
});

test('--connect: a --header the transport refuses stops mcpreel before a session begins', { timeout: 30000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'b.db');
  try {
    for (const hdr of ['Host: other.example', 'Mcp-Session-Id: x', 'X-Bad: a\x01b']) {
      const r = await runMcpreel(['record', '--db', db, '--connect', 'http://127.0.0.1:1/mcp', '--header', hdr], { input: '' });
      assert.equal(r.code, 2, `${hdr}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /--header/);
    }
    const n = (() => { try { return sql(db, 'SELECT count(*) AS n FROM sessions')[0].n; } catch { return 0; } })();
    assert.equal(n, 0, 'no empty session');
  } finally {
    t.cleanup();
  }
});

test('--connect (auto): a host writing three lines at once, before the first answer, gets both answers; nothing lost or crashed', { timeout: 60000 }, async () => {
  const t = tempDir();
  const db = join(t.dir, 'p.db');
  const tiny = await startTinyServer();
  try {
    const lines = [INIT, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })];
    // All three in one write: the 2nd and 3rd wait while auto probes with the 1st.
    const r = await runMcpreel(['record', '--db', db, '--connect', tiny.url], { input: lines.join('\n') + '\n', timeoutMs: 20000 });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.doesNotMatch(r.stderr.toString(), /Sanitizer|runtime error:/);
    const out = r.stdout.toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(out.map((m) => m.id), [1, 2], r.stderr.toString());
    assert.equal(out[1].result.method, 'tools/list');
    assert.deepEqual(tiny.seen.filter((x) => x.method === 'POST').map((x) => JSON.parse(x.body).method), ['initialize', 'notifications/initialized', 'tools/list'], 'each line POSTed once, in order');
    assert.deepEqual(sql(db, 'SELECT direction FROM messages ORDER BY seq').map((m) => m.direction), ['c2s', 'c2s', 'c2s', 's2c', 's2c']);
  } finally {
    await tiny.close();
    t.cleanup();
  }
});
