// `mcpreel export` and `mcpreel import`, on sessions recorded here by the
// real binary: JSON lines that import gives back byte for byte (stdio with
// JSON, text that is not JSON, bytes that are not UTF-8; HTTP with its
// exchanges), HAR 1.2 of HTTP sessions checked against the spec's required
// fields, mcp-tape traces, and bad files refused with their line number
// and nothing left behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runSessionWith, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, request, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { PEERS_DIR, runMcpreel, sql, tempDir, withCleanup } from './lib/util.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const TAPE = join(HERE, 'fixtures', 'mcp-tape', 'trace.jsonl');

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

// What `cat` as the server echoes back: every kind of line the recorder
// meets, each seen once each way.
const BIG = `{"jsonrpc":"2.0","id":4,"method":"big/echo","params":{"s":"${'x'.repeat(2 * 1024 * 1024)}"}}`;
const LINES = [
  Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),
  Buffer.from('not json'),
  Buffer.from([0xff]),
  Buffer.from(' {"jsonrpc":"2.0","method":"notifications/x"}  '),
  Buffer.from('{"jsonrpc":"2.0","id":"a\\"b","method":"m\\u0065thod/esc","params":{"t":"tab\\there é"}}'),
  Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'),
  Buffer.from('{"jsonrpc":"2.0","id":2,"method":"huge/number","params":{"n":123456789012345678901234567890}}'),
  Buffer.from('[{"jsonrpc":"2.0","id":3,"method":"a"},{"jsonrpc":"2.0","method":"b"}]'),
  Buffer.from('{ "jsonrpc" : "2.0", "id" : 5, "result" : { "spaced" : true } }'),
  Buffer.from([0x61, 0x00, 0x62]),
  Buffer.from(BIG),
  Buffer.from(''),
  Buffer.from('{"jsonrpc":"2.0","method":"crlf"}\r'),
];
const INPUT = Buffer.concat([...LINES.flatMap((l) => [l, Buffer.from('\n')]), Buffer.from('no newline at the end')]);

const rowsOf = (buf) => buf.toString('utf8').trim().split('\n').map((l) => JSON.parse(l));

/** Everything a session holds, in a form that does not depend on row ids. */
function snapshot(db, id) {
  const session = sql(db, `SELECT name, transport, target, CAST(started_ns AS TEXT) AS started_ns,
      CAST(ended_ns AS TEXT) AS ended_ns, exit_status, exit_signal, end_reason, messages_lost,
      store_error, recorder_pid, mcpreel_version FROM sessions WHERE id = ${id}`)[0];
  const exchanges = sql(db, `SELECT id, connection, method, path, request_headers,
      CAST(started_ns AS TEXT) AS started_ns, CAST(mono_ns AS TEXT) AS mono_ns, status,
      response_headers, CAST(response_mono_ns AS TEXT) AS response_mono_ns,
      CAST(ended_ns AS TEXT) AS ended_ns, outcome, hex(body) AS body, body IS NULL AS no_body
      FROM http_exchanges WHERE session_id = ${id} ORDER BY mono_ns, id`);
  const ordinal = new Map(exchanges.map((x, i) => [x.id, i]));
  const messages = sql(db, `SELECT m.seq, m.direction, CAST(m.ts_ns AS TEXT) AS ts_ns,
      CAST(m.mono_ns AS TEXT) AS mono_ns, m.kind, m.method, m.rpc_id, q.seq AS reply_to, m.size,
      hex(m.raw) AS raw, m.http_exchange_id AS x, m.sse_event_id, m.wire_size, m.sha256,
      m.truncated, m.redacted FROM messages m LEFT JOIN messages q ON q.id = m.reply_to
      WHERE m.session_id = ${id} ORDER BY m.seq`);
  const events = sql(db, `SELECT CAST(ts_ns AS TEXT) AS ts_ns, CAST(mono_ns AS TEXT) AS mono_ns,
      kind, hex(text) AS text FROM events WHERE session_id = ${id} ORDER BY mono_ns, id`);
  return {
    session,
    exchanges: exchanges.map(({ id: _id, ...x }) => x),
    messages: messages.map(({ x, ...m }) => ({ ...m, x: x === null ? null : ordinal.get(x) })),
    events,
  };
}

/** Export session id of db as JSON lines into dir; import them into db2: the new id. */
async function roundTrip(db, id, db2, file) {
  const ex = await runMcpreel(['export', '--db', db, '-o', file, String(id)]);
  assert.equal(ex.code, 0, ex.stderr.toString());
  assert.equal(ex.stdout.length, 0, 'with -o nothing goes to stdout');
  const im = await runMcpreel(['import', '--db', db2, file]);
  assert.equal(im.code, 0, im.stderr.toString());
  const newId = Number(im.stdout.toString().trim());
  assert.ok(newId > 0, `import prints the new session id: ${im.stdout}`);
  assert.deepEqual(snapshot(db2, newId), snapshot(db, id), `session ${id}: the import holds what was recorded, byte for byte`);
  const from = sql(db2, `SELECT imported_from FROM sessions WHERE id = ${newId}`)[0].imported_from;
  assert.equal(from, `${resolve(file)} (jsonl)`);
  // Exported again, the import gives the same lines but for where it came from.
  const again = await runMcpreel(['export', '--db', db2, String(newId)]);
  assert.equal(again.code, 0, again.stderr.toString());
  const first = readFileSync(file).toString('utf8').split('\n');
  const second = again.stdout.toString('utf8').split('\n');
  assert.equal(second.length, first.length);
  assert.deepEqual(second.slice(1), first.slice(1), 'every line after the header is the same byte for byte');
  const h1 = JSON.parse(first[0]);
  const h2 = JSON.parse(second[0]);
  assert.equal(h2.imported_from, from);
  assert.deepEqual({ ...h2, session: 0, imported_from: null }, { ...h1, session: 0, imported_from: null });
  return newId;
}

const SPEC = {
  log: ['version', 'creator', 'browser', 'pages', 'entries', 'comment'],
  creator: ['name', 'version', 'comment'],
  entry: ['pageref', 'startedDateTime', 'time', 'request', 'response', 'cache', 'timings', 'serverIPAddress', 'connection', 'comment'],
  request: ['method', 'url', 'httpVersion', 'cookies', 'headers', 'queryString', 'postData', 'headersSize', 'bodySize', 'comment'],
  response: ['status', 'statusText', 'httpVersion', 'cookies', 'headers', 'content', 'redirectURL', 'headersSize', 'bodySize', 'comment'],
  content: ['size', 'compression', 'mimeType', 'text', 'encoding', 'comment'],
  postData: ['mimeType', 'params', 'text', 'comment'],
  timings: ['blocked', 'dns', 'connect', 'send', 'wait', 'receive', 'ssl', 'comment'],
  cache: ['beforeRequest', 'afterRequest', 'comment'],
  pair: ['name', 'value', 'comment'],
};

/** Assert o has exactly the spec's fields of its type (custom ones start with _) and the required ones typed. */
function fields(o, type, required, where) {
  assert.ok(o && typeof o === 'object' && !Array.isArray(o), `${where}: an object`);
  for (const k of Object.keys(o)) assert.ok(SPEC[type].includes(k) || k.startsWith('_'), `${where}: "${k}" is no HAR 1.2 field of ${type} (custom fields start with _)`);
  for (const [k, t] of Object.entries(required)) {
    assert.ok(k in o, `${where}: no "${k}"`);
    if (t === 'array') assert.ok(Array.isArray(o[k]), `${where}.${k}: an array`);
    else assert.equal(typeof o[k], t, `${where}.${k}: a ${t}`);
  }
  if ('comment' in o) assert.equal(typeof o.comment, 'string', `${where}.comment`);
}

/** A structural check of a HAR 1.2 document, field by field as the spec lists them. */
function checkHar(har) {
  assert.ok(har && typeof har === 'object' && !Array.isArray(har), 'the document is an object');
  assert.deepEqual(Object.keys(har).filter((k) => !k.startsWith('_')), ['log'], 'its one field is "log"');
  const { log } = har;
  fields(log, 'log', { version: 'string', creator: 'object', entries: 'array' }, 'log');
  assert.equal(log.version, '1.2');
  fields(log.creator, 'creator', { name: 'string', version: 'string' }, 'log.creator');
  let last = -Infinity;
  log.entries.forEach((e, i) => {
    const w = `entries[${i}]`;
    fields(e, 'entry', { startedDateTime: 'string', time: 'number', request: 'object', response: 'object', cache: 'object', timings: 'object' }, w);
    assert.match(e.startedDateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, `${w}.startedDateTime: ISO 8601`);
    const t0 = Date.parse(e.startedDateTime);
    assert.ok(Number.isFinite(t0), `${w}.startedDateTime parses`);
    assert.ok(t0 >= last, `${w}: entries sorted by startedDateTime`);
    last = t0;
    for (const k of ['pageref', 'serverIPAddress', 'connection']) if (k in e) assert.equal(typeof e[k], 'string', `${w}.${k}`);
    const q = e.request;
    fields(q, 'request', { method: 'string', url: 'string', httpVersion: 'string', cookies: 'array', headers: 'array', queryString: 'array', headersSize: 'number', bodySize: 'number' }, `${w}.request`);
    assert.doesNotThrow(() => new URL(q.url), `${w}.request.url is absolute: ${q.url}`);
    for (const list of ['cookies', 'headers', 'queryString']) {
      q[list].forEach((p, j) => fields(p, 'pair', { name: 'string', value: 'string' }, `${w}.request.${list}[${j}]`));
    }
    if ('postData' in q) {
      fields(q.postData, 'postData', { mimeType: 'string' }, `${w}.request.postData`);
      assert.ok(('text' in q.postData) !== ('params' in q.postData), `${w}.request.postData: text or params, not both`);
      if ('text' in q.postData) assert.equal(typeof q.postData.text, 'string');
    }
    const r = e.response;
    fields(r, 'response', { status: 'number', statusText: 'string', httpVersion: 'string', cookies: 'array', headers: 'array', content: 'object', redirectURL: 'string', headersSize: 'number', bodySize: 'number' }, `${w}.response`);
    r.headers.forEach((p, j) => fields(p, 'pair', { name: 'string', value: 'string' }, `${w}.response.headers[${j}]`));
    fields(r.content, 'content', { size: 'number', mimeType: 'string' }, `${w}.response.content`);
    for (const k of ['text', 'encoding']) if (k in r.content) assert.equal(typeof r.content[k], 'string', `${w}.response.content.${k}`);
    fields(e.cache, 'cache', {}, `${w}.cache`);
    const tm = e.timings;
    fields(tm, 'timings', { send: 'number', wait: 'number', receive: 'number' }, `${w}.timings`);
    for (const k of ['send', 'wait', 'receive']) assert.ok(tm[k] >= 0, `${w}.timings.${k} is not negative`);
    for (const k of ['blocked', 'dns', 'connect', 'ssl']) if (k in tm) assert.ok(typeof tm[k] === 'number' && tm[k] >= -1, `${w}.timings.${k}`);
    const sum = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive'].reduce((s, k) => s + (k in tm && tm[k] !== -1 ? tm[k] : 0), 0);
    assert.ok(Math.abs(e.time - sum) < 1e-9, `${w}.time ${e.time} is the sum of its timings ${sum}`);
  });
}

test('stdio: export as JSON lines, import gives back every byte; HAR is refused', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'a.db');
    const rec = await runMcpreel(['record', '--db', db, '--name', 'lines', '--', 'sh', '-c', 'echo starting >&2; exec cat'], { input: INPUT });
    assert.equal(rec.code, 0, rec.stderr.toString());
    assert.deepEqual(rec.stdout, INPUT, 'cat echoed everything');
    const id = sql(db, 'SELECT id FROM sessions')[0].id;

    const out = await runMcpreel(['export', '--db', db, 'lines']);
    assert.equal(out.code, 0, out.stderr.toString());
    const rows = rowsOf(out.stdout);
    const header = rows[0];
    assert.equal(header.format, 'mcpreel-jsonl');
    assert.equal(header.version, 1);
    assert.equal(header.name, 'lines');
    assert.equal(header.transport, 'stdio');
    assert.deepEqual(JSON.parse(header.target), ['sh', '-c', 'echo starting >&2; exec cat']);
    assert.equal(header.exit_status, 0);
    const msgs = rows.filter((r) => r.type === 'message');
    const c2s = msgs.filter((r) => r.direction === 'c2s');
    assert.equal(c2s.length, LINES.length + 1);
    assert.deepEqual(c2s[0].message, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(c2s[0].kind, 'request');
    assert.equal(c2s[1].raw, 'not json');
    assert.equal(c2s[2].raw_base64, '/w==');
    assert.equal(c2s[3].raw, LINES[3].toString(), 'JSON with white space around it is kept as text');
    assert.equal(c2s[4].method, 'method/esc');
    assert.equal(c2s[4].id, 'a"b');
    assert.equal(c2s[8].kind, 'response');
    assert.equal(c2s[9].raw, 'a\u0000b');
    assert.equal(c2s[10].size, Buffer.byteLength(BIG));
    assert.equal(c2s[11].raw, '', 'an empty line is a message of no bytes');
    assert.equal(c2s[12].raw, '{"jsonrpc":"2.0","method":"crlf"}\r', 'a CR stays in the bytes');
    // The JSON is in the line as recorded, even where JSON.parse would round it.
    assert.ok(out.stdout.includes(`"message":${LINES[6]}`), 'the message is written as recorded');
    assert.ok(out.stdout.includes(`"message":${LINES[8]}`), 'white space inside a message is kept');
    const s2cResp = msgs.find((r) => r.direction === 's2c' && r.kind === 'response' && r.id === 1);
    assert.equal(s2cResp.method, 'tools/list');
    assert.equal(s2cResp.reply_to, 1, 'a response names the seq of its request');
    const events = rows.filter((r) => r.type === 'event');
    assert.ok(events.some((e) => e.kind === 'stderr' && e.text === 'starting'), 'the stderr line is an event');
    assert.ok(events.some((e) => e.kind === 'exit'));

    const db2 = join(t.dir, 'b.db');
    await roundTrip(db, id, db2, join(t.dir, 'lines.jsonl'));
    assert.equal(statSync(join(t.dir, 'lines.jsonl')).mode & 0o777, 0o600, '-o creates a private file');

    const har = await runMcpreel(['export', '--db', db, '--format', 'har', 'lines']);
    assert.equal(har.code, 2);
    assert.equal(har.stdout.length, 0);
    assert.match(har.stderr.toString(), /session \d+ was recorded over stdio: a HAR holds HTTP requests.*--format jsonl/);
  } finally {
    t.cleanup();
  }
});

test('HTTP: exchanges and messages round-trip; the HAR is HAR 1.2 with bodies, SSE events and timings', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
      stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
    });
    defer(() => stopChild(peer.child, peer.exited));
    const db = join(dir, 'h.db');
    const mp = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'web' });
    defer(() => mp.stop());
    const json = { 'Content-Type': 'application/json' };
    const batch = '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"}]';
    let r = await request(`${mp.url}/mcp/batch`, { method: 'POST', headers: json, body: batch });
    assert.equal(r.status, 200);
    const batchAnswer = r.body.toString();
    r = await request(`${mp.url}/mcp/sse-raw`);
    assert.equal(r.status, 200);
    const call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}';
    r = await request(`${mp.url}/mcp/mirror?q=1&x=a%20b`, { method: 'POST', headers: { ...json, Authorization: 'Bearer secret-tok' }, body: call });
    assert.equal(r.status, 200);
    r = await request(`${mp.url}/mcp/status/404`);
    assert.equal(r.status, 404);
    assert.equal((await mp.stop()).code, 0);

    const sessions = sql(db, 'SELECT id, transport FROM sessions ORDER BY id');
    assert.ok(sessions.length >= 1);
    const db2 = join(dir, 'h2.db');
    let entries = [];
    for (const s of sessions) {
      const id2 = await roundTrip(db, s.id, db2, join(dir, `s${s.id}.jsonl`));
      const har = await runMcpreel(['export', '--db', db, '--format', 'har', String(s.id)]);
      assert.equal(har.code, 0, har.stderr.toString());
      const doc = JSON.parse(har.stdout.toString());
      checkHar(doc);
      const n = sql(db, `SELECT count(*) AS n FROM http_exchanges WHERE session_id = ${s.id}`)[0].n;
      assert.equal(doc.log.entries.length, n, 'one entry per HTTP request');
      // The imported session gives the same HAR.
      const har2 = await runMcpreel(['export', '--db', db2, '--format', 'har', String(id2)]);
      assert.deepEqual(JSON.parse(har2.stdout.toString()).log.entries, doc.log.entries);
      entries = entries.concat(doc.log.entries);
    }

    const byPath = (p) => entries.find((e) => new URL(e.request.url).pathname === p);
    const eb = byPath('/mcp/batch');
    assert.equal(eb.request.method, 'POST');
    assert.equal(eb.request.url, `${mp.url}/mcp/batch`);
    assert.deepEqual(eb.request.postData, { mimeType: 'application/json', text: batch });
    assert.equal(eb.request.bodySize, batch.length);
    assert.equal(eb.response.status, 200);
    assert.equal(eb.response.statusText, 'OK');
    assert.equal(eb.response.content.text, batchAnswer);
    assert.equal(eb.response.content.size, Buffer.byteLength(batchAnswer));
    assert.equal(eb.response.content.mimeType, 'application/json');
    assert.ok(eb.timings.wait > 0, 'the wait for the response is measured');

    const es = byPath('/mcp/sse-raw');
    assert.equal(es.request.bodySize, 0);
    assert.equal(es.request.postData, undefined);
    assert.equal(es.response.content.mimeType, 'text/event-stream');
    const text = es.response.content.text;
    assert.ok(text.includes('id: 1\ndata: {"jsonrpc":"2.0","method":"a"}\n\n'), text);
    assert.ok(text.includes('data: {"jsonrpc":"2.0",\ndata: "method":"b"}\n\n'), 'multi-line data stays multi-line');
    assert.ok(text.includes('id: 3\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n'));
    assert.equal(es.response.content.size, Buffer.byteLength(text));

    const em = byPath('/mcp/mirror');
    assert.deepEqual(em.request.queryString, [{ name: 'q', value: '1' }, { name: 'x', value: 'a b' }]);
    assert.equal(em.request.postData.text, call);
    const auth = em.request.headers.find((h) => h.name.toLowerCase() === 'authorization');
    assert.equal(auth.value, '[REDACTED]', 'the HAR has what the record has: credentials redacted');

    const e404 = byPath('/mcp/status/404');
    assert.equal(e404.response.status, 404);
    assert.equal(e404.response.statusText, 'Not Found');
    assert.equal(e404.response.content.text, 'status 404 from http_peer');
    assert.equal(e404.response.content.mimeType, 'text/plain');
    assert.equal(e404._outcome, 'complete');
  });
});

test('HTTP: a real SDK session over Streamable HTTP round-trips and gives a valid HAR', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const db = join(dir, 'sdk.db');
    const mp = await startMcpreelHttp({ db, upstream: se.origin, name: 'sdk' });
    defer(() => mp.stop());
    await runSessionWith(streamableHttpTransport(`${mp.url}${new URL(se.url).pathname}`), {});
    assert.equal((await mp.stop()).code, 0);

    const sessions = sql(db, 'SELECT id FROM sessions ORDER BY id');
    const db2 = join(dir, 'sdk2.db');
    let posts = 0;
    for (const s of sessions) {
      await roundTrip(db, s.id, db2, join(dir, `s${s.id}.jsonl`));
      const har = await runMcpreel(['export', '--db', db, '--format', 'har', String(s.id)]);
      assert.equal(har.code, 0, har.stderr.toString());
      const doc = JSON.parse(har.stdout.toString());
      checkHar(doc);
      for (const e of doc.log.entries) {
        if (e.request.method !== 'POST') continue;
        posts++;
        assert.doesNotThrow(() => JSON.parse(e.request.postData.text), 'a POST carries its JSON-RPC body');
      }
    }
    assert.ok(posts >= 5, `the session's POSTs are in the HARs (${posts})`);
    const methods = sql(db2, "SELECT DISTINCT method FROM messages WHERE kind = 'request'").map((r) => r.method);
    assert.ok(methods.includes('initialize') && methods.includes('tools/call'), `imported requests: ${methods}`);
  });
});

test('mcp-tape: a trace imports with its times, directions and label; classified and paired as recorded', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 't.db');
    let r = await runMcpreel(['import', '--db', db, TAPE]);
    assert.equal(r.code, 0, r.stderr.toString());
    const id = Number(r.stdout.toString().trim());
    const s = sql(db, `SELECT name, transport, target, CAST(started_ns AS TEXT) AS started, CAST(ended_ns AS TEXT) AS ended,
        exit_status, end_reason, imported_from, recorder_pid FROM sessions WHERE id = ${id}`)[0];
    const ns = (iso) => (BigInt(Date.parse(iso)) * 1000000n).toString();
    assert.equal(s.name, 'fs');
    assert.equal(s.transport, 'stdio');
    assert.deepEqual(JSON.parse(s.target), ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me']);
    assert.equal(s.started, ns('2026-05-12T23:00:00.000Z'));
    assert.equal(s.ended, ns('2026-05-12T23:00:30.000Z'));
    assert.equal(s.exit_status, 0);
    assert.match(s.end_reason, /status 0/);
    assert.equal(s.imported_from, `${TAPE} (mcp-tape)`);
    assert.equal(s.recorder_pid, null);

    const lines = readFileSync(TAPE, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => 'dir' in l);
    const rows = sql(db, `SELECT m.seq, m.direction, CAST(m.ts_ns AS TEXT) AS ts, CAST(m.mono_ns AS TEXT) AS mono, m.kind,
        m.method, m.rpc_id, q.seq AS reply_to, CAST(m.raw AS TEXT) AS raw FROM messages m
        LEFT JOIN messages q ON q.id = m.reply_to WHERE m.session_id = ${id} ORDER BY m.seq`);
    assert.equal(rows.length, lines.length);
    rows.forEach((row, i) => {
      assert.equal(row.direction, lines[i].dir === 'in' ? 'c2s' : 's2c', `seq ${row.seq}: in is host to server`);
      assert.equal(row.ts, ns(lines[i].t));
      assert.equal(row.mono, row.ts, 'no monotonic clock in a trace: the wall clock stands in');
      assert.equal(row.raw, JSON.stringify(lines[i].raw), `seq ${row.seq}: the bytes are raw's JSON text`);
    });
    assert.deepEqual(rows.map((x) => [x.kind, x.method, x.rpc_id, x.reply_to]), [
      ['request', 'initialize', '1', null],
      ['response', 'initialize', '1', 1],
      ['notification', 'notifications/initialized', null, null],
      ['request', 'tools/call', '2', null],
      ['notification', 'notifications/message', null, null],
      ['error', 'tools/call', '2', 4],
      ['request', 'roots/list', '"s1"', null],
      ['response', 'roots/list', '"s1"', 7],
    ]);

    // --format given, --name over the label; a trace without meta or end.
    const bare = join(t.dir, 'bare.jsonl');
    writeFileSync(bare, `${readFileSync(TAPE, 'utf8').trim().split('\n').slice(1, 3).join('\n')}\n`);
    r = await runMcpreel(['import', '--db', db, '--format', 'mcp-tape', '--name', 'mine', bare]);
    assert.equal(r.code, 0, r.stderr.toString());
    const b = sql(db, `SELECT name, CAST(started_ns AS TEXT) AS started, ended_ns, end_reason,
        (SELECT count(*) FROM messages WHERE session_id = s.id) AS n FROM sessions s WHERE id = ${Number(r.stdout)}`)[0];
    assert.deepEqual(b, { name: 'mine', started: ns('2026-05-12T23:00:00.123Z'), ended_ns: null, end_reason: null, n: 2 });
  } finally {
    t.cleanup();
  }
});

test('import: columns export carries (wire_size, sha256, truncated, redacted) and a file without its header', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'c.db');
    const file = join(t.dir, 'c.jsonl');
    writeFileSync(file, [
      '{"type":"message","direction":"c2s","ts_ns":1000000000000000001,"mono_ns":5,"message":{"jsonrpc":"2.0","id":1,"method":"m"},"wire_size":999999,"sha256":"ab12cd","truncated":true,"redacted":true}',
      '{"type":"event","kind":"note","ts_ns":1000000000000000002,"mono_ns":6,"text_base64":"/wA="}',
      '',
      '{"type":"message","direction":"s2c","ts_ns":1000000000000000003,"mono_ns":7,"raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":{}}"}',
    ].join('\r\n'));
    let r = await runMcpreel(['import', '--db', db, file]);
    assert.equal(r.code, 0, r.stderr.toString());
    const id = Number(r.stdout);
    const m = sql(db, `SELECT kind, method, CAST(ts_ns AS TEXT) AS ts, wire_size, sha256, truncated, redacted, CAST(raw AS TEXT) AS raw
        FROM messages WHERE session_id = ${id} ORDER BY seq`);
    assert.deepEqual(m, [
      { kind: 'request', method: 'm', ts: '1000000000000000001', wire_size: 999999, sha256: 'ab12cd', truncated: 1, redacted: 1, raw: '{"jsonrpc":"2.0","id":1,"method":"m"}' },
      { kind: 'response', method: 'm', ts: '1000000000000000003', wire_size: null, sha256: null, truncated: 0, redacted: 0, raw: '{"jsonrpc":"2.0","id":1,"result":{}}' },
    ]);
    assert.deepEqual(sql(db, `SELECT kind, hex(text) AS t FROM events WHERE session_id = ${id}`), [{ kind: 'note', t: 'FF00' }]);
    const s = sql(db, `SELECT transport, target, CAST(started_ns AS TEXT) AS started, ended_ns FROM sessions WHERE id = ${id}`)[0];
    assert.deepEqual(s, { transport: 'stdio', target: '(imported)', started: '1000000000000000001', ended_ns: null });

    r = await runMcpreel(['export', '--db', db, String(id)]);
    const rows = rowsOf(r.stdout);
    assert.equal(rows[1].wire_size, 999999);
    assert.equal(rows[1].sha256, 'ab12cd');
    assert.equal(rows[1].truncated, true);
    assert.equal(rows[1].redacted, true);
    assert.equal(rows[2].text_base64, '/wA=');
    assert.equal(rows[3].truncated, undefined, 'flags only when set');
  } finally {
    t.cleanup();
  }
});

// Each bad file: its lines, the line the error names, and what it says.
const BAD = [
  { name: 'not JSON', lines: ['{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw":"a"}', 'oops'], line: 2, msg: /not a JSON object/ },
  { name: 'unknown direction', lines: ['{"type":"message","direction":"up","ts_ns":1,"mono_ns":1,"raw":"a"}'], line: 1, msg: /"direction" is not "c2s" or "s2c"/ },
  { name: 'no time', lines: ['{"type":"message","direction":"c2s","mono_ns":1,"raw":"a"}'], line: 1, msg: /no "ts_ns"/ },
  { name: 'no bytes', lines: ['{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1}'], line: 1, msg: /no "raw" or "raw_base64"/ },
  { name: 'bad base64', lines: ['{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw":"a"}', '{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw_base64":"!!"}'], line: 2, msg: /"raw_base64" is not base64/ },
  { name: 'unknown exchange', lines: ['{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw":"a","exchange":4}'], line: 1, msg: /exchange 4 has no http_exchange line/ },
  { name: 'header not first', lines: ['{"type":"event","kind":"note","ts_ns":1,"mono_ns":1,"text":"x"}', '{"format":"mcpreel-jsonl","version":1,"transport":"stdio","target":"[]","started_ns":1}'], line: 2, msg: /a session line after the first/ },
  { name: 'newer format', lines: ['{"format":"mcpreel-jsonl","version":3,"transport":"stdio","target":"[]","started_ns":1}'], line: 1, msg: /format version 3: this mcpreel reads versions 1 to 2/ },
  { name: 'unknown type', lines: ['{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw":"a"}', '{"type":"mystery"}'], line: 2, msg: /"type" is not/ },
  { name: 'unknown format', lines: ['{"hello":1}'], line: 1, msg: /cannot tell the file's format.*--format/ },
  { name: 'mcp-tape bad dir', lines: ['{"t":"2026-05-12T23:00:00.123Z","dir":"in","raw":{}}', '{"t":"2026-05-12T23:00:00.123Z","dir":"sideways","raw":{}}'], line: 2, msg: /"dir" is not "in" or "out"/ },
  { name: 'mcp-tape bad time', lines: ['{"t":"yesterday","dir":"in","raw":{}}'], line: 1, msg: /"t" is not an ISO 8601 time/ },
  { name: 'mcp-tape after end', lines: ['{"t":"2026-05-12T23:00:00.123Z","type":"end","exitCode":0}', '{"t":"2026-05-12T23:00:01.000Z","dir":"in","raw":{}}'], line: 2, msg: /after the "end" line/ },
];

test('import: a bad line stops it, named by its line number, and nothing of the file stays', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'bad.db');
    // One good session first: a failed import must leave it alone.
    const good = join(t.dir, 'good.jsonl');
    writeFileSync(good, '{"type":"message","direction":"c2s","ts_ns":1,"mono_ns":1,"raw":"keep me"}\n');
    assert.equal((await runMcpreel(['import', '--db', db, good])).code, 0);
    const before = sql(db, 'SELECT (SELECT count(*) FROM sessions) AS s, (SELECT count(*) FROM messages) AS m, (SELECT count(*) FROM events) AS e');
    for (const c of BAD) {
      const file = join(t.dir, 'bad.jsonl');
      writeFileSync(file, `${c.lines.join('\n')}\n`);
      const r = await runMcpreel(['import', '--db', db, file]);
      assert.equal(r.code, 1, `${c.name}: exit 1`);
      assert.equal(r.stdout.length, 0, `${c.name}: no session id printed`);
      const err = r.stderr.toString();
      assert.match(err, new RegExp(`^mcpreel import: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line ${c.line}: `, 'm'), `${c.name}: names the line: ${err}`);
      assert.match(err, c.msg, `${c.name}: ${err}`);
      assert.deepEqual(sql(db, 'SELECT (SELECT count(*) FROM sessions) AS s, (SELECT count(*) FROM messages) AS m, (SELECT count(*) FROM events) AS e'), before, `${c.name}: nothing was left`);
    }
    const empty = join(t.dir, 'empty.jsonl');
    writeFileSync(empty, '\n');
    const r = await runMcpreel(['import', '--db', db, empty]);
    assert.equal(r.code, 1);
    assert.match(r.stderr.toString(), /no session in the file/);
    const missing = await runMcpreel(['import', '--db', db, join(t.dir, 'nope.jsonl')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr.toString(), /cannot open .*nope\.jsonl/);
    const fmt = await runMcpreel(['import', '--db', db, '--format', 'xml', good]);
    assert.equal(fmt.code, 2);
    assert.match(fmt.stderr.toString(), /unknown format 'xml'/);
    const nodir = await runMcpreel(['export', '--db', db, '-o', join(t.dir, 'no', 'such', 'x.jsonl'), 'last']);
    assert.equal(nodir.code, 2);
    assert.match(nodir.stderr.toString(), /cannot create a file beside .*x\.jsonl/);
  } finally {
    t.cleanup();
  }
});

test('an imported session that never ended is not taken for one being recorded here', { timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'pid.db');
    const rec = await runMcpreel(['record', '--db', db, '--name', 'src', '--', 'cat'],
      { input: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n') });
    assert.equal(rec.code, 0, rec.stderr.toString());
    const ex = await runMcpreel(['export', '--db', db, 'src', '--format', 'jsonl']);
    assert.equal(ex.code, 0, ex.stderr.toString());
    // As if exported while running, by a process whose pid is alive here.
    const lines = ex.stdout.toString().trim().split('\n');
    const head = JSON.parse(lines[0]);
    head.recorder_pid = process.pid;
    head.ended_ns = null;
    lines[0] = JSON.stringify(head);
    const file = join(dir, 'live.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const im = await runMcpreel(['import', '--db', db, '--name', 'imported', file]);
    assert.equal(im.code, 0, im.stderr.toString());
    const follow = await runMcpreel(['show', '--db', db, '--follow', '--json', 'imported'], { timeoutMs: 10000 });
    assert.equal(follow.code, 0);
    assert.match(follow.stderr.toString(), /was imported and not ended: nothing more will come/);
    const rm = await runMcpreel(['rm', '--db', db, 'imported']);
    assert.equal(rm.code, 0, rm.stderr.toString());
    assert.deepEqual(sql(db, "SELECT count(*) AS c FROM sessions WHERE name = 'imported'"), [{ c: 0 }]);
  });
});

test('a closed stdout is an error the command sees: export exits 2 saying so, record notes it on the session', { timeout: 60000 }, async () => {
  const { spawnSync } = await import('node:child_process');
  const { MCPREEL } = await import('./lib/util.mjs');
  const t = tempDir();
  try {
    const db = join(t.dir, 'c.db');
    const env = { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', M: MCPREEL, DB: db };
    // record with its stdout (the host's end) closed.
    const rec = spawnSync('/bin/sh', ['-c', `printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' | exec "$M" record --db "$DB" -- cat >&-`], { env });
    const recErr = rec.stderr.toString();
    console.log(`record >&-: exit ${rec.status}; ${recErr.split('\n')[0]}`);
    assert.doesNotMatch(recErr, /AddressSanitizer|runtime error/);
    assert.match(recErr, /cannot write to the host \(stdout\) \(Bad file descriptor\)/);
    const notes = sql(db, "SELECT count(*) AS n FROM events WHERE kind = 'note' AND CAST(text AS TEXT) LIKE '%cannot write to the host%'");
    assert.equal(notes[0].n, 1, 'the note is on the session');
    // export with its stdout closed.
    const exp = spawnSync('/bin/sh', ['-c', 'exec "$M" export --db "$DB" 1 >&-'], { env });
    console.log(`export >&-: exit ${exp.status}; ${exp.stderr.toString().trim()}`);
    assert.equal(exp.status, 2);
    assert.match(exp.stderr.toString(), /cannot write to stdout/);
  } finally {
    t.cleanup();
  }
});
