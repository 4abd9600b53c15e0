// How the readers treat a session with injected faults (schema 6): the
// sessions are built by `mcpreel import` of hand-written JSON lines, as a
// recording with --fault would leave them (fault lines, and messages with
// "fault" and "fault_role"), so the readers are tested without the proxy.
// show marks them, stats counts them apart, check and mock leave a fault's
// original and injected messages out unless --include-faults (mock is
// driven by the official SDK client), replay too, export gives back the
// same bytes, HAR is what the client saw, and a version 5 database (made
// with sqlite3 from the schema before faults) migrates keeping its rows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPREEL, runMcpreel, sql, withCleanup } from './lib/util.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const SCHEMA_V5 = join(HERE, 'fixtures', 'schema-v5.sql');

const T0 = 1700000000000000000n;
const at = (ms) => String(T0 + BigInt(ms) * 1000000n);
const mono = (ms) => String(BigInt(ms) * 1000000n);

// JSON lines with the big integers (ns) written as numbers.
const line = (o) => JSON.stringify(o).replace(/"@(\d+)"/g, '$1');
const ns = (s) => `@${s}`;

function msg(dir, ms, message, extra = {}) {
  return line({ type: 'message', direction: dir, ts_ns: ns(at(ms)), mono_ns: ns(mono(ms)), ...extra, message });
}

function fault(n, ms, ruleIndex, rule, action, dir, method, id, detail) {
  return line({
    type: 'fault', n, ts_ns: ns(at(ms)), mono_ns: ns(mono(ms)), rule_index: ruleIndex, rule, action,
    direction: dir, method, id, detail,
  });
}

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
const INIT_R = { jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } };
const INITED = { jsonrpc: '2.0', method: 'notifications/initialized' };
const SEARCH = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: { q: 'x' } } };
const SEARCH_ERR = { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'injected by the rule' } };
const ECHO = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { m: 'hi' } } };
const ECHO_R = { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'hi' }] } };
const ERROR_DETAIL = 'answered tools/call 2 with an error; the server never saw it';

// A stdio session: an error injected in place of tools/call 2 (the
// request 'original', the error 'injected'), tools/call 3's answer
// delayed, a stderr line.
const STDIO = [
  line({ format: 'mcpreel-jsonl', version: 2, name: 'faulty', transport: 'stdio', target: '["srv"]', started_ns: ns(at(0)), ended_ns: ns(at(5000)), exit_status: 0, end_reason: 'server exited' }),
  msg('c2s', 100, INIT),
  msg('s2c', 200, INIT_R),
  msg('c2s', 300, INITED),
  fault(1, 1000, 1, 'tool=search error code=-32001', 'error', 'c2s', 'tools/call', 2, ERROR_DETAIL),
  msg('c2s', 1000, SEARCH, { fault: 1, fault_role: 'original' }),
  msg('s2c', 1001, SEARCH_ERR, { fault: 1, fault_role: 'injected' }),
  msg('c2s', 1900, ECHO),
  fault(2, 2000, 2, 'method=tools/call delay=300ms', 'delay', 's2c', 'tools/call', 3, 'held the answer 300 ms'),
  msg('s2c', 2300, ECHO_R, { fault: 2, fault_role: 'delayed' }),
  line({ type: 'event', kind: 'stderr', ts_ns: ns(at(2400)), mono_ns: ns(mono(2400)), text: 'hello from stderr' }),
].join('\n') + '\n';

const H = [['content-type', 'application/json']];
function exchange(id, ms, status, extra = {}) {
  return line({
    type: 'http_exchange', exchange: id, connection: 1, method: 'POST', path: '/mcp', request_headers: H,
    started_ns: ns(at(ms)), mono_ns: ns(mono(ms)), status, response_headers: H, response_mono_ns: ns(mono(ms + 1)),
    ended_ns: ns(at(ms + 2)), outcome: 'complete', ...extra,
  });
}

// The same over Streamable HTTP, with a 503 a fault made in place of
// tools/call 3's answer (the exchange's fault; the request never reached
// the server: 'original').
const HTTP = [
  line({ format: 'mcpreel-jsonl', version: 2, name: 'faulty-http', transport: 'http', target: 'http://127.0.0.1:9/mcp', started_ns: ns(at(0)) }),
  exchange(1, 100, 200),
  exchange(2, 1000, 200),
  exchange(3, 1900, 503, { fault: 2 }),
  msg('c2s', 100, INIT, { exchange: 1 }),
  msg('s2c', 101, INIT_R, { exchange: 1 }),
  fault(1, 1000, 1, 'tool=search error code=-32001', 'error', 'c2s', 'tools/call', 2, ERROR_DETAIL),
  msg('c2s', 1000, SEARCH, { exchange: 2, fault: 1, fault_role: 'original' }),
  msg('s2c', 1001, SEARCH_ERR, { exchange: 2, fault: 1, fault_role: 'injected' }),
  fault(2, 1900, 2, 'method=tools/call http-status=503', 'http-status', 'c2s', 'tools/call', 3, 'answered with 503'),
  msg('c2s', 1900, ECHO, { exchange: 3, fault: 2, fault_role: 'original' }),
].join('\n') + '\n';

async function mc(args, o) {
  const r = await runMcpreel(args, o);
  return { ...r, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** Import text as a session of db: its id. */
async function importText(dir, db, name, text, faults = 2) {
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, text);
  const r = await mc(['import', '--db', db, file]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, new RegExp(`, ${faults} faults\n`), 'import counts the faults');
  return Number(r.out.trim());
}

const LEFT_OUT = /left out 2 messages of injected faults .*--include-faults keeps them/;

test('import of faults: the rows and columns as the contract has them', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  assert.deepEqual(sql(db, `SELECT n, rule_index, rule, action, direction, method, rpc_id, detail
      FROM faults WHERE session_id = ${id} ORDER BY n`), [
    { n: 1, rule_index: 1, rule: 'tool=search error code=-32001', action: 'error', direction: 'c2s', method: 'tools/call', rpc_id: '2', detail: ERROR_DETAIL },
    { n: 2, rule_index: 2, rule: 'method=tools/call delay=300ms', action: 'delay', direction: 's2c', method: 'tools/call', rpc_id: '3', detail: 'held the answer 300 ms' },
  ]);
  assert.deepEqual(sql(db, `SELECT seq, fault, fault_role FROM messages WHERE session_id = ${id} AND fault IS NOT NULL ORDER BY seq`), [
    { seq: 4, fault: 1, fault_role: 'original' },
    { seq: 5, fault: 1, fault_role: 'injected' },
    { seq: 7, fault: 2, fault_role: 'delayed' },
  ]);
  assert.equal(sql(db, 'PRAGMA user_version')[0].user_version, 7);

  // Bad fault lines are refused with their line number, and nothing stays.
  for (const [bad, why] of [
    [msg('c2s', 5, INIT, { fault: 1 }), /"fault" and "fault_role" go together/],
    [msg('c2s', 5, INIT, { fault: 1, fault_role: 'other' }), /"fault" and "fault_role" go together/],
    [fault(0, 5, 1, 'r', 'drop', 'c2s', null, null, null), /count from 1/],
    [fault(1, 5, 1, 'r', 'drop', 'up', null, null, null), /"direction" is not/],
    [line({ type: 'fault', n: 1, ts_ns: 1, mono_ns: 1, rule_index: 1, rule: 'r' }), /needs its "rule" and "action"/],
  ]) {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, STDIO.split('\n').slice(0, 2).join('\n') + '\n' + bad + '\n');
    const r = await mc(['import', '--db', db, file]);
    assert.equal(r.code, 1, `refused: ${bad}`);
    assert.match(r.err, /line 3/);
    assert.match(r.err, why);
  }
  assert.equal(sql(db, 'SELECT count(*) AS n FROM sessions')[0].n, 1, 'the refused imports left nothing');
  // Two faults of one number cannot both be kept: the import is undone.
  const dup = STDIO.replace(/"type":"fault","n":2/, '"type":"fault","n":1');
  const file = join(dir, 'dup.jsonl');
  writeFileSync(file, dup);
  const r = await mc(['import', '--db', db, file]);
  assert.equal(r.code, 1);
  assert.match(r.err, /1 of 2 faults could be written/);
  assert.equal(sql(db, 'SELECT count(*) AS n FROM sessions')[0].n, 1);
  // A message naming a fault with no fault line is refused, undone.
  const dangling = STDIO.replace(/"fault":2,"fault_role":"delayed"/, '"fault":7,"fault_role":"delayed"');
  assert.notEqual(dangling, STDIO);
  writeFileSync(file, dangling);
  const d = await mc(['import', '--db', db, file]);
  assert.equal(d.code, 1);
  assert.match(d.err, /1 message or HTTP exchange names a "fault" that has no fault line/);
  assert.equal(sql(db, 'SELECT count(*) AS n FROM sessions')[0].n, 1);
}));

test('show: faults as events, messages tagged; --json carries them', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  const t = await mc(['show', '--db', db, String(id)]);
  assert.equal(t.code, 0, t.err);
  const lines = t.out.split('\n');
  const f1 = lines.findIndex((l) => /!\s+fault\s+fault #1, rule 1 `tool=search error code=-32001`: answered tools\/call 2 with an error; the server never saw it$/.test(l));
  assert.ok(f1 > 0, `a fault line:\n${t.out}`);
  assert.match(lines[f1 + 1], /^\s+4 .*tools\/call\s+2 .*\[fault #1 original\] \{"jsonrpc"/, 'the fault comes before its messages');
  assert.match(lines[f1 + 2], /^\s+5 .*error\s+tools\/call\s+2 .*\[fault #1 injected\] /);
  assert.match(t.out, /\n\s+7 .*\[fault #2 delayed\] /);
  assert.match(t.out, /!\s+fault\s+fault #2, rule 2 `method=tools\/call delay=300ms`: held the answer 300 ms/);
  assert.doesNotMatch(lines.find((l) => /^\s+6 /.test(l)), /\[fault/, 'untouched traffic has no tag');

  const j = await mc(['show', '--db', db, '--json', String(id)]);
  assert.equal(j.code, 0, j.err);
  const rows = j.out.trim().split('\n').map((l) => JSON.parse(l));
  const bySeq = new Map(rows.filter((r) => r.seq !== undefined).map((r) => [r.seq, r]));
  assert.equal(bySeq.get(4).fault, 1);
  assert.equal(bySeq.get(4).fault_role, 'original');
  assert.equal(bySeq.get(5).fault_role, 'injected');
  assert.equal(bySeq.get(7).fault_role, 'delayed');
  assert.ok(!('fault' in bySeq.get(6)) && !('fault_role' in bySeq.get(6)));
  const events = rows.filter((r) => r.event !== undefined);
  assert.deepEqual(events.map((e) => e.event), ['fault', 'fault'], 'fault events without --events; no stderr line');
  assert.deepEqual(events[0].fault, {
    n: 1, rule_index: 1, rule: 'tool=search error code=-32001', action: 'error', direction: 'c2s',
    method: 'tools/call', id: 2, detail: ERROR_DETAIL,
  });
  assert.ok(rows.indexOf(events[0]) < rows.indexOf(bySeq.get(4)), 'in time order, before the messages it concerns');

  // --method and --dir keep the faults of the messages they select.
  const m = await mc(['show', '--db', db, '--json', '--dir', 's2c', '--method', 'tools/*', String(id)]);
  const mrows = m.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(mrows.map((r) => r.seq ?? `fault ${r.fault.n}`), [5, 'fault 2', 7]);
  // --kind leaves them out, as it does events.
  const k = await mc(['show', '--db', db, '--json', '--kind', 'error', String(id)]);
  assert.deepEqual(k.out.trim().split('\n').map((l) => JSON.parse(l).seq), [5]);
}));

test('stats: faulted requests counted apart, faults by action', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  const t = await mc(['stats', '--db', db, String(id)]);
  assert.equal(t.code, 0, t.err);
  assert.match(t.out, /MAX {2}FAULTED\n/);
  assert.match(t.out, /->  tools\/call\s+1\s+1\s+0\s+400\.0ms\s+400\.0ms\s+400\.0ms\s+400\.0ms\s+1\n/,
    'the injected error is not the server\'s: not an error, not a request of the table');
  assert.match(t.out, /\nfaults injected: 2 \(delay 1, error 1\)\n/);
  const j = JSON.parse((await mc(['stats', '--db', db, '--json', String(id)])).out);
  const call = j.methods.find((m) => m.method === 'tools/call');
  assert.deepEqual([call.requests, call.answered, call.errors, call.faulted], [1, 1, 0, 1]);
  assert.deepEqual(j.faults, { injected: 2, by_action: { delay: 1, error: 1 } });

  // A session without faults: no column, no line; --json says none.
  const plain = await importText(dir, db, 'p', STDIO.split('\n').filter((l) => !/"fault/.test(l)).join('\n') + '\n', 0);
  const p = await mc(['stats', '--db', db, String(plain)]);
  assert.doesNotMatch(p.out, /FAULTED|faults injected/);
  assert.deepEqual(JSON.parse((await mc(['stats', '--db', db, '--json', String(plain)])).out).faults,
    { injected: 0, by_action: {} });
}));

test('check leaves a fault\'s original and injected messages out, says so once; --include-faults keeps them', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  const a = await mc(['check', '--db', db, '--json', String(id)]);
  assert.equal(a.code, 0, a.err);
  assert.equal(JSON.parse(a.out).sessions[0].messages, 5, 'two of seven left out (the delayed one stays)');
  assert.equal(a.err.match(/left out/g).length, 1);
  assert.match(a.err, LEFT_OUT);
  const b = await mc(['check', '--db', db, '--json', '--include-faults', String(id)]);
  assert.equal(b.code, 0, b.err);
  assert.equal(JSON.parse(b.out).sessions[0].messages, 7);
  assert.doesNotMatch(b.err, /left out/);
  // --all: one line for them all.
  const all = await mc(['check', '--db', db, '--all']);
  assert.match(all.err, LEFT_OUT);
  // The delayed answer is kept: tools/call 3 is answered, no finding.
  assert.doesNotMatch(a.out, /never answered/);
}));

// tools/call 2 mutated on its way to the server (the client's request
// 'original', the forwarded copy 'injected', the server's answer to the
// latter), then tools/call 3's answer mutated on its way to the client.
const MUTATED = [
  line({ format: 'mcpreel-jsonl', version: 2, name: 'mutated', transport: 'stdio', target: '["srv"]', started_ns: ns(at(0)), ended_ns: ns(at(5000)), exit_status: 0, end_reason: 'server exited' }),
  msg('c2s', 100, INIT),
  msg('s2c', 200, INIT_R),
  msg('c2s', 300, INITED),
  fault(1, 1000, 1, 'tool=search mutate', 'mutate', 'c2s', 'tools/call', 2, 'mutated'),
  msg('c2s', 1000, SEARCH, { fault: 1, fault_role: 'original' }),
  msg('c2s', 1000, { ...SEARCH, params: { name: 'search', arguments: { q: 'y' } } }, { fault: 1, fault_role: 'injected' }),
  msg('s2c', 1100, { jsonrpc: '2.0', id: 2, result: { content: [] } }),
  msg('c2s', 1900, ECHO),
  fault(2, 2000, 1, 'tool=echo mutate', 'mutate', 's2c', 'tools/call', 3, 'mutated'),
  msg('s2c', 2000, ECHO_R, { fault: 2, fault_role: 'original' }),
  msg('s2c', 2000, { ...ECHO_R, result: { content: [] } }, { fault: 2, fault_role: 'injected' }),
].join('\n') + '\n';

test('a mutated request: check sees what the server got and answered, stats counts the call once and not as hung', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'm.db');
  const id = await importText(dir, db, 'm', MUTATED);
  const a = await mc(['check', '--db', db, '--json', String(id)]);
  assert.equal(a.code, 0, `no jsonrpc.unknown-id: ${a.out}`);
  const j = JSON.parse(a.out).sessions[0];
  assert.equal(j.messages, 7, 'the client\'s original request and the answer the client got are left out');
  assert.doesNotMatch(a.out, /unknown-id|duplicate-id/);
  assert.match(a.err, /left out 2 messages of injected faults/);
  const st = await mc(['stats', '--db', db, '--json', String(id)]);
  assert.equal(st.code, 0, st.err);
  const s = JSON.parse(st.out);
  const call = s.methods.find((m) => m.method === 'tools/call');
  assert.equal(call.faulted, 2, 'two faulted calls, each once');
  const t = await mc(['stats', '--db', db, String(id)]);
  assert.match(t.out, /no hung requests/);
}));

test('fault text that is not UTF-8: show --json keeps every key (and its bytes in base64), export and import give the bytes back', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'u.db');
  const id = await importText(dir, db, 'u', STDIO);
  execFileSync('sqlite3', [db, `UPDATE faults SET rule = CAST(X'746f6f6c3dff' AS TEXT), method = CAST(X'1b5b33316dff' AS TEXT) WHERE n = 1`]);
  const sh = await mc(['show', '--db', db, '--json', String(id)]);
  assert.equal(sh.code, 0, sh.err);
  const f = sh.out.trim().split('\n').map((l) => JSON.parse(l)).find((o) => o.fault && o.fault.n === 1).fault;
  assert.equal(f.rule, 'tool=?');
  assert.equal(Buffer.from(f.rule_base64, 'base64').toString('hex'), '746f6f6c3dff');
  assert.equal(f.method, '\x1b[31m?');
  assert.equal(Buffer.from(f.method_base64, 'base64').toString('hex'), '1b5b33316dff');
  const ex = await mc(['export', '--db', db, String(id)]);
  assert.equal(ex.code, 0, ex.err);
  const file = join(dir, 'u.jsonl');
  writeFileSync(file, ex.out);
  const db2 = join(dir, 'u2.db');
  const r = await mc(['import', '--db', db2, file]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(sql(db2, 'SELECT hex(rule) AS r, hex(method) AS m FROM faults WHERE n = 1'), [{ r: '746F6F6C3DFF', m: '1B5B33316DFF' }]);
}));

test('mock answers from a session with faults: a faulted request matches nothing unless --include-faults (SDK client)', { timeout: 90000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  async function connect(extra) {
    const transport = new StdioClientTransport({ command: MCPREEL, args: ['mock', '--db', db, '--latency', 'none', ...extra, String(id)], stderr: 'pipe' });
    let err = '';
    transport.stderr.on('data', (c) => { err += c; });
    const client = new Client({ name: 'fault-store', version: '1' });
    defer(() => client.close());
    await client.connect(transport);
    return { client, stderr: () => err };
  }
  const plain = await connect([]);
  assert.deepEqual(await plain.client.callTool({ name: 'echo', arguments: { m: 'hi' } }), ECHO_R.result,
    'the delayed answer is served');
  await assert.rejects(plain.client.callTool({ name: 'search', arguments: { q: 'x' } }),
    (e) => e.code === -32602 && /no recorded tools\/call request matches/.test(e.message),
    'the request a fault answered is not in the recording mock serves');
  await plain.client.close();
  assert.match(plain.stderr(), LEFT_OUT);

  const incl = await connect(['--include-faults']);
  await assert.rejects(incl.client.callTool({ name: 'search', arguments: { q: 'x' } }),
    (e) => e.code === -32001 && /injected by the rule/.test(e.message),
    'with --include-faults the injected error is served as recorded');
  await incl.client.close();
  assert.doesNotMatch(incl.stderr(), /left out/);
}));

test('replay leaves them out too: against a mock of the same session it is the same; --include-faults sends tools/call 2', { timeout: 90000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  const server = [MCPREEL, 'mock', '--db', db, '--latency', 'none', String(id)];
  const a = await mc(['replay', '--db', db, '--no-record', '--report', 'json', String(id), '--', ...server], { timeoutMs: 60000 });
  assert.equal(a.code, 0, `${a.out}\n${a.err}`);
  assert.match(a.err, /replay: left out 2 messages/);
  const b = await mc(['replay', '--db', db, '--no-record', '--include-faults', String(id), '--', ...server], { timeoutMs: 60000 });
  assert.equal(b.code, 1, 'tools/call 2 is sent now, and the mock (leaving it out) does not answer it as recorded');
  assert.match(b.out, /tools\/call/);
}));

test('export: a session with faults round-trips byte for byte; version 2 only with faults; HAR is what the client saw', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'f.db');
  const db2 = join(dir, 'g.db');
  for (const [name, text] of [['s', STDIO], ['h', HTTP]]) {
    const id = await importText(dir, db, name, text);
    const e1 = await mc(['export', '--db', db, String(id)]);
    assert.equal(e1.code, 0, e1.err);
    const l1 = e1.out.trim().split('\n');
    assert.equal(JSON.parse(l1[0]).version, 2);
    assert.equal(l1.filter((l) => JSON.parse(l).type === 'fault').length, 2);
    const file = join(dir, `${name}-export.jsonl`);
    writeFileSync(file, e1.out);
    const id2 = await importText(dir, db2, `${name}-again`, e1.out);
    const e2 = await mc(['export', '--db', db2, String(id2)]);
    const l2 = e2.out.trim().split('\n');
    assert.deepEqual(l2.slice(1), l1.slice(1), `${name}: every line but the session's, byte for byte`);
    const strip = (l) => { const o = JSON.parse(l); delete o.session; delete o.imported_from; return o; };
    assert.deepEqual(strip(l2[0]), strip(l1[0]));
    const cols = (d, i) => sql(d, `SELECT seq, fault, fault_role, hex(raw) AS raw FROM messages WHERE session_id = ${i} ORDER BY seq`);
    assert.deepEqual(cols(db2, id2), cols(db, id));
    const frows = (d, i) => sql(d, `SELECT n, ts_ns, mono_ns, rule_index, rule, action, direction, method, rpc_id, detail FROM faults WHERE session_id = ${i} ORDER BY n`);
    assert.deepEqual(frows(db2, id2), frows(db, id));
    const xf = (d, i) => sql(d, `SELECT status, fault FROM http_exchanges WHERE session_id = ${i} ORDER BY id`);
    assert.deepEqual(xf(db2, id2), xf(db, id));
  }
  // Without faults: version 1, which an older mcpreel reads.
  const plain = await importText(dir, db, 'p', STDIO.replace('"version":2', '"version":1').split('\n').filter((l) => !/"fault/.test(l)).join('\n') + '\n', 0);
  const ep = await mc(['export', '--db', db, String(plain)]);
  assert.equal(JSON.parse(ep.out.split('\n')[0]).version, 1);
  assert.doesNotMatch(ep.out, /"fault/);

  const hid = sql(db, "SELECT id FROM sessions WHERE name = 'faulty-http' ORDER BY id LIMIT 1")[0].id;
  const har = await mc(['export', '--db', db, '--format', 'har', String(hid)]);
  assert.equal(har.code, 0, har.err);
  const log = JSON.parse(har.out).log;
  assert.deepEqual(log._faults.map((f) => [f.n, f.action, f.id]), [[1, 'error', 2], [2, 'http-status', 3]]);
  const [, e2, e3] = log.entries;
  assert.deepEqual(JSON.parse(e2.request.postData.text), SEARCH, 'the client posted its request');
  assert.deepEqual(JSON.parse(e2.response.content.text), SEARCH_ERR, 'and got the injected error');
  assert.deepEqual(e2._faults, [{ fault: 1, role: 'original', direction: 'c2s' }, { fault: 1, role: 'injected', direction: 's2c' }]);
  assert.equal(e3._fault, 2, 'the 503 a fault made');
  assert.equal(e3.response.status, 503);
  assert.ok(!('_fault' in e2) && !('_faults' in log.entries[0]));
}));

test('a version 5 database (the schema before faults) migrates to 6 and keeps its rows', { timeout: 60000 }, () => withCleanup(async ({ dir }) => {
  const db = join(dir, 'v5.db');
  execFileSync('sqlite3', [db], { input: readFileSync(SCHEMA_V5, 'utf8') + `
    PRAGMA user_version = 5;
    INSERT INTO sessions (id, transport, target, started_ns, ended_ns, end_reason)
      VALUES (1, 'stdio', '["srv"]', 1700000000000000000, 1700000001000000000, 'done');
    INSERT INTO messages (id, session_id, seq, direction, ts_ns, mono_ns, kind, method, rpc_id, reply_to, size, raw)
      VALUES (1, 1, 1, 'c2s', 1700000000100000000, 100, 'request', 'ping', '1', NULL, 40,
        CAST('{"jsonrpc":"2.0","id":1,"method":"ping"}' AS BLOB));
    INSERT INTO messages (id, session_id, seq, direction, ts_ns, mono_ns, kind, method, rpc_id, reply_to, size, wire_size, sha256, truncated, raw)
      VALUES (2, 1, 2, 's2c', 1700000000200000000, 200, 'response', 'ping', '1', 1, 36, 900, 'ab', 1,
        CAST('{"jsonrpc":"2.0","id":1,"result":{}}' AS BLOB));
    INSERT INTO events (session_id, ts_ns, mono_ns, kind, text) VALUES (1, 1700000000150000000, 150, 'stderr', 'hi');` });
  assert.equal(sql(db, 'PRAGMA user_version')[0].user_version, 5);
  const before = sql(db, 'SELECT id, seq, direction, kind, method, rpc_id, reply_to, size, wire_size, sha256, truncated, redacted, hex(raw) AS raw FROM messages ORDER BY id');

  const s = await mc(['show', '--db', db, '1']);
  assert.equal(s.code, 0, s.err);
  assert.match(s.out, /\n\s+2 .*<- response\s+ping\s+1 .*"result":\{\}\}\n/);
  assert.equal(sql(db, 'PRAGMA user_version')[0].user_version, 7);
  assert.deepEqual(sql(db, 'SELECT id, seq, direction, kind, method, rpc_id, reply_to, size, wire_size, sha256, truncated, redacted, hex(raw) AS raw FROM messages ORDER BY id'), before);
  assert.equal(sql(db, "SELECT name FROM pragma_table_info('messages') ORDER BY cid DESC LIMIT 1")[0].name, 'raw', 'raw stays the last column');
  assert.deepEqual(sql(db, "SELECT count(*) AS n FROM pragma_table_info('messages') WHERE name IN ('fault', 'fault_role')"), [{ n: 2 }]);
  assert.deepEqual(sql(db, 'SELECT latency_ns FROM exchanges'), [{ latency_ns: 100 }]);
  assert.deepEqual(sql(db, 'PRAGMA foreign_key_check'), []);
  assert.deepEqual(sql(db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
  // And it takes a session with faults.
  const id = await importText(dir, db, 's', STDIO);
  assert.equal(sql(db, `SELECT count(*) AS n FROM faults WHERE session_id = ${id}`)[0].n, 2);
  assert.equal((await mc(['rm', '--db', db, '--force', String(id)])).code, 0);
  assert.equal(sql(db, 'SELECT count(*) AS n FROM faults')[0].n, 0, 'rm takes a session\'s faults with it');
}));

test('a cassette with faults is planned as the session it imports as: the same answers, the same "left out" note, the same refusal', { timeout: 120000 }, () => withCleanup(async ({ dir, defer }) => {
  const db = join(dir, 'f.db');
  const id = await importText(dir, db, 's', STDIO);
  const file = join(dir, 's.jsonl');
  // What the client gets, and the note, from `mock` of SESSION.
  async function served(session, extra) {
    const transport = new StdioClientTransport({ command: MCPREEL, args: ['mock', '--latency', 'none', ...extra, session], stderr: 'pipe' });
    let err = '';
    transport.stderr.on('data', (c) => { err += c; });
    const client = new Client({ name: 'fault-cassette', version: '1' });
    defer(() => client.close());
    await client.connect(transport);
    const got = [];
    for (const [name, args] of [['echo', { m: 'hi' }], ['search', { q: 'x' }], ['echo', { m: 'hi' }]]) {
      try {
        got.push({ ok: await client.callTool({ name, arguments: args }) });
      } catch (e) {
        got.push({ code: e.code, message: e.message });
      }
    }
    await client.close();
    return { got, note: (err.match(/^.*left out.*$/m) || [''])[0] };
  }
  for (const extra of [[], ['--include-faults']]) {
    const fromDb = await served(String(id), ['--db', db, ...extra]);
    const fromFile = await served(file, extra);
    assert.deepEqual(fromFile, fromDb, `mock ${extra.join(' ')}`);
    if (extra.length === 0) {
      assert.match(fromFile.note, /mock: left out 2 messages of injected faults/);
      assert.equal(fromFile.got[1].code, -32602, 'the faulted request matches nothing');
      assert.deepEqual(fromFile.got[0].ok, ECHO_R.result, 'the delayed answer is served');
    } else {
      assert.equal(fromFile.note, '');
      assert.equal(fromFile.got[1].code, -32001, 'the injected error, kept');
    }
  }

  // replay of the cassette reports what replay of the session reports.
  const server = [MCPREEL, 'mock', '--db', db, '--latency', 'none', String(id)];
  for (const extra of [[], ['--include-faults']]) {
    const a = await mc(['replay', '--db', db, '--no-record', '--report', 'json', ...extra, String(id), '--', ...server], { timeoutMs: 60000 });
    const b = await mc(['replay', '--no-record', '--report', 'json', ...extra, file, '--', ...server], { timeoutMs: 60000 });
    assert.equal(b.code, a.code, `${b.out}\n${b.err}`);
    // Times differ from run to run: the rest is the same.
    const strip = (s) => JSON.parse(s, (k, v) => (/_ms$/.test(k) ? undefined : v));
    assert.deepEqual(strip(b.out), strip(a.out), `replay ${extra.join(' ')}`);
    assert.equal((b.err.match(/left out \d+ messages/) || [''])[0], (a.err.match(/left out \d+ messages/) || [''])[0]);
  }

  // Lines out of time order are planned in the store's order (by time).
  const lines = STDIO.trim().split('\n');
  const shuffled = [lines[0], lines[1], lines[2], lines[3], lines[7], lines[4], lines[5], lines[6], ...lines.slice(8)].join('\n') + '\n';
  const id2 = await importText(dir, db, 'shuffled', shuffled);
  writeFileSync(join(dir, 'shuffled.jsonl'), shuffled);
  const sdb = await served(String(id2), ['--db', db]);
  const sfile = await served(join(dir, 'shuffled.jsonl'), []);
  assert.deepEqual(sfile, sdb, 'a file out of time order');

  // Two faults of one number: refused, as import refuses it.
  const dup = join(dir, 'dup.jsonl');
  writeFileSync(dup, STDIO.replace(/"type":"fault","n":2/, '"type":"fault","n":1'));
  const di = await mc(['import', '--db', join(dir, 'x.db'), dup]);
  assert.match(di.err, /1 of 2 faults could be/);
  for (const cmd of [['mock', dup], ['replay', '--no-record', dup, '--', 'true']]) {
    const r = await mc(cmd);
    assert.notEqual(r.code, 0, r.err);
    assert.match(r.err, /dup\.jsonl: only 1 of 2 faults could be kept: 1 has a number \("n"\) a fault line before had/);
  }

  // A message naming a fault no line has: refused as import refuses it.
  const dangling = STDIO.replace(/.*"type":"fault","n":1,.*\n/, '');
  const bad = join(dir, 'dangling.jsonl');
  writeFileSync(bad, dangling);
  const imp = await mc(['import', '--db', join(dir, 'x.db'), bad]);
  assert.equal(imp.code, 1);
  assert.match(imp.err, /2 messages or HTTP exchanges name a "fault" that has no fault line/);
  for (const cmd of [['mock', bad], ['replay', '--no-record', bad, '--', 'true']]) {
    const r = await mc(cmd);
    assert.notEqual(r.code, 0, r.err);
    assert.match(r.err, /dangling\.jsonl: 2 messages or HTTP exchanges name a "fault" that has no fault line/);
  }
}));
