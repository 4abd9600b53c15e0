// `mcpreel mock`: the SDK client's session recorded against
// server-everything, then served with no server running, over stdio and
// over Streamable HTTP; ids of any type; misses explained.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, streamableHttpTransport } from './lib/session.mjs';
import { request, spawnUntilLine, stopChild } from './lib/servers.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

async function recordReference(dir) {
  const db = join(dir, 'm.db');
  const { command, args } = serverEverythingCommand();
  const ref = await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
  return { db, ref };
}

test('mock serves the recorded session: the SDK client gets the real server\'s results, over stdio and HTTP', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const { db, ref } = await recordReference(t.dir);
    // No server runs from here on: mcpreel mock is the server.
    const diag = {};
    const mocked = await runSession(MCPREEL, ['mock', '--db', db, 'sdk'], { stderr: 'pipe', diagnostics: diag });
    assert.deepEqual(mocked, ref, 'over stdio: identical results');
    const progress = diag.messagesReceived.filter((m) => m.method === 'notifications/progress');
    assert.equal(progress.length, 4, 'progress notifications are played');
    const tokens = new Set(progress.map((m) => m.params.progressToken));
    const sent = diag.messagesSent.find((m) => m.params?.name === 'trigger-long-running-operation');
    assert.deepEqual([...tokens], [sent.params._meta.progressToken], 'with the live progress token');
    assert.ok(diag.messagesReceived.some((m) => m.method === 'sampling/createMessage'), 'the sampling request is played');

    // With the recorded pacing, the same results (only later).
    const paced = await runSession(MCPREEL, ['mock', '--db', db, 'sdk', '--latency', 'recorded'], { stderr: 'pipe' });
    assert.deepEqual(paced, ref, '--latency recorded: identical results');

    const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db, 'sdk', '--listen', '127.0.0.1:0'], {
      pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --listen',
    });
    try {
      const http = await runSessionWith(streamableHttpTransport(`${p.match[1]}/mcp`), {});
      const del = http.steps.at(-1);
      assert.equal(del.step, 'DELETE session');
      assert.equal(del.result.terminated, true, 'DELETE is answered');
      http.steps.pop();
      assert.deepEqual(http, ref, 'over Streamable HTTP: identical results');
    } finally {
      await stopChild(p.child, p.exited);
    }
  } finally {
    t.cleanup();
  }
});

test('mock: a request with a string id gets its own id back; misses are explained', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const { db } = await recordReference(t.dir);
    const lines = [
      { jsonrpc: '2.0', id: 'str-1', method: 'tools/call', params: { name: 'get-sum', arguments: { a: 2, b: 3 } } },
      { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'no-such-tool-here', arguments: {} } },
      { jsonrpc: '2.0', id: [1], method: 'tools/call', params: { name: 'get-sum', arguments: { a: 2, b: 3 } } },
      { jsonrpc: '2.0', id: null, method: 'frobnicate/everything' },
      { jsonrpc: '2.0', method: 'notifications/whatever' },
    ];
    // --latency none: the answers in the order asked (by default a match
    // comes after its recorded latency, a miss at once).
    const r = await runMcpreel(['mock', '--db', db, 'sdk', '--latency', 'none'], { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')) });
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(out.length, 4, 'one answer per request, none for the notification');
    assert.equal(out[0].id, 'str-1');
    assert.deepEqual(out[0].result.content, [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);

    assert.equal(out[1].id, 99);
    assert.equal(out[1].error.code, -32602);
    assert.match(out[1].error.message, /tools\/call/);
    assert.equal(out[1].error.data.method, 'tools/call');
    assert.equal(out[1].error.data.nearest.params.name !== undefined, true, 'the nearest recorded call is named');
    assert.ok(out[1].error.data.differences.some((d) => d.path === '$.params.name' && d.live === 'no-such-tool-here'));

    assert.deepEqual(out[2].id, [1], 'any id type comes back as it was');
    assert.equal(out[2].result.content[0].text, 'The sum of 2 and 3 is 5.', 'a repeat gets the last recording again');

    assert.equal(out[3].id, null);
    assert.equal(out[3].error.code, -32601);
    assert.ok(out[3].error.data.recorded_methods.includes('tools/call'));
  } finally {
    t.cleanup();
  }
});

test('mock --on-miss forward: a miss is answered by the live fallback and recorded; matches still come from the recording', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const { db } = await recordReference(t.dir);
    const { command, args } = serverEverythingCommand();
    const lines = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'never recorded' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-sum', arguments: { a: 2, b: 3 } } },
    ];
    const r = await runMcpreel(['mock', '--db', db, 'sdk', '--on-miss', 'forward', '--', command, ...args],
      { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((m) => 'id' in m && !('method' in m));
    const byId = new Map(out.map((m) => [m.id, m]));
    assert.equal(byId.get(1).result.content[0].text, 'Echo: never recorded', 'the miss got the live server\'s answer');
    assert.equal(byId.get(2).result.content[0].text, 'The sum of 2 and 3 is 5.', 'a match still comes from the recording');
    const s = sql(db, `SELECT id, name, transport FROM sessions WHERE name LIKE 'mock fallback of %'`);
    assert.equal(s.length, 1, 'the forwarded exchange is recorded as a session');
    const m = sql(db, `SELECT direction, kind, method FROM messages WHERE session_id = ${s[0].id} AND method = 'tools/call' ORDER BY seq`);
    assert.deepEqual(m, [{ direction: 'c2s', kind: 'request', method: 'tools/call' }, { direction: 's2c', kind: 'response', method: 'tools/call' }]);
    const bad = await runMcpreel(['mock', '--db', db, 'sdk', '--on-miss', 'forward']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr.toString(), /--on-miss forward goes with one fallback server/);
  } finally {
    t.cleanup();
  }
});

test('mock --on-miss forward over HTTP: two clients reusing an id each get their own answer', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const { db } = await recordReference(t.dir);
    const { command, args } = serverEverythingCommand();
    const p = await spawnUntilLine(MCPREEL, ['mock', '--db', db, 'sdk', '--listen', '127.0.0.1:0', '--on-miss', 'forward', '--', command, ...args], {
      pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'mcpreel mock --on-miss forward',
    });
    try {
      const url = `${p.match[1]}/mcp`;
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const post = (m) => request(url, { method: 'POST', headers, body: JSON.stringify(m) });
      const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      assert.equal(init.status, 200);
      assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      const echo = (text) => post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: text } } });
      const [a, b] = await Promise.all([echo('from A'), echo('from B')]);
      const body = (r) => JSON.parse(r.body.toString().replace(/^event: message\ndata: /, ''));
      assert.equal(body(a).id, 5);
      assert.equal(body(a).result.content[0].text, 'Echo: from A');
      assert.equal(body(b).id, 5);
      assert.equal(body(b).result.content[0].text, 'Echo: from B');
    } finally {
      await stopChild(p.child, p.exited);
    }
  } finally {
    t.cleanup();
  }
});

test('mock --listen refuses a non-loopback address unless --allow-remote', { timeout: 30000 }, async () => {
  const r = await runMcpreel(['mock', '--db', '/nonexistent/x.db', 'last', '--listen', '0.0.0.0:0']);
  assert.equal(r.code, 2);
  assert.match(r.stderr.toString(), /mcpreel mock: not listening on 0\.0\.0\.0:0: it is not a loopback address.*--allow-remote/);
  // With it, the address is accepted and the next problem (no database) is what is said.
  const ok = await runMcpreel(['mock', '--db', '/nonexistent/x.db', 'last', '--listen', '0.0.0.0:0', '--allow-remote']);
  assert.equal(ok.code, 2);
  assert.doesNotMatch(ok.stderr.toString(), /loopback/);
  assert.match(ok.stderr.toString(), /no database at \/nonexistent\/x\.db/);
});

test('mock: listener limits without --listen are refused; --max-record-size bounds the fallback too', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    for (const opt of [['--max-connections', '3'], ['--head-timeout', '5'], ['--idle-timeout=5']]) {
      const r = await runMcpreel(['mock', '--db', join(t.dir, 'none.db'), 'last', ...opt]);
      assert.equal(r.code, 2, `${opt}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /mcpreel mock: --[a-z-]+ limits a --listen server; over stdio there is no connection to limit: add --listen ADDR/);
    }
    const db = join(t.dir, 'm.db');
    const imp = await runMcpreel(['import', '--db', db, '--name', 's', join(E2E_DIR, 'fixtures', 'mcp-tape', 'trace.jsonl')]);
    assert.equal(imp.code, 0, imp.stderr.toString());
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'h', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'no-such-tool-recorded', arguments: {} } },
    ].map((l) => JSON.stringify(l)).join('\n') + '\n';
    const r = await runMcpreel(['mock', '--db', db, 's', '--max-record-size', '64K', '--on-miss', 'forward', '--',
      process.execPath, join(PEERS_DIR, 'flood.mjs'), '3', '100000'], { input: lines, timeoutMs: 30000 });
    assert.match(r.stderr.toString(), /a line on the server's stdout over 65536 bytes \(--max-record-size\): dropped/);
  } finally {
    t.cleanup();
  }
});
