// Checks on what `mcpreel record` stored, read with the sqlite3 shell (as
// lib/util.mjs's sql() does), for the HTTP tests.
//
// What the HTTP tests assume about the database, beyond schema.sql's
// stdio tables (the HTTP recorder is being written; these are the points
// where the tests and it must agree):
//   * one sessions row per MCP session, transport 'http' (Streamable HTTP)
//     or 'sse' (legacy HTTP+SSE), name = --name, target mentioning the
//     upstream URL, ended_ns set once the session has ended or mcpreel has
//     exited;
//   * one messages row per JSON-RPC message, raw = the message's exact
//     bytes (a POST body, or the data of one SSE event), with direction,
//     kind, method, rpc_id and reply_to as over stdio;
//   * the DELETE that ends a Streamable HTTP session is recorded: a row of
//     the session in http_exchanges (schema version 2: one row per HTTP
//     request) with method DELETE, an events row of the session whose text
//     mentions DELETE, or the session's end_reason mentioning DELETE.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

import { expectedKind, sql } from './util.mjs';

/** sessions rows (all columns), oldest first; optionally only one transport. */
export function sessionsOf(db, transport) {
  const where = transport ? `WHERE transport = '${transport.replace(/'/g, "''")}'` : '';
  return sql(db, `SELECT * FROM sessions ${where} ORDER BY id`);
}

/** messages rows of a session, in seq order, raw as text. */
export function messagesOf(db, sessionId) {
  return sql(db, `SELECT id, seq, direction, kind, method, rpc_id, reply_to, size,
      CAST(raw AS TEXT) AS raw, hex(raw) AS hex FROM messages WHERE session_id = ${Number(sessionId)} ORDER BY seq`);
}

/** events rows of a session, text as text. */
export function eventsOf(db, sessionId) {
  return sql(db, `SELECT id, kind, CAST(text AS TEXT) AS text FROM events WHERE session_id = ${Number(sessionId)} ORDER BY mono_ns, id`);
}

// JSON text with object keys sorted, so that equal messages compare equal
// whatever their key order (the SDK's schema parsing reorders keys).
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
const sortedCanon = (list) => list.map((m) => canon(JSON.parse(JSON.stringify(m)))).sort();

/**
 * The recorded messages of a session are exactly the messages the client
 * sent (c2s) and received (s2c), as multisets: over HTTP the client's
 * concurrent requests and the server's several streams have no one order.
 * Also checks, as the stdio test does, kind/method/id/size/reply_to against
 * an independent parse, and that every request is answered.
 * rows with kind 'invalid' are refused unless allowInvalid(row) says yes.
 */
export function checkRecordedMessages(db, sessionId, diag, { allowInvalid = () => false } = {}) {
  const rows = messagesOf(db, sessionId);
  const invalid = rows.filter((r) => r.kind === 'invalid');
  for (const r of invalid) {
    assert.ok(allowInvalid(r), `seq ${r.seq} (${r.direction}) recorded as invalid: ${JSON.stringify(r.raw?.slice(0, 200))}`);
  }
  const valid = rows.filter((r) => r.kind !== 'invalid');
  const c2s = valid.filter((r) => r.direction === 'c2s').map((r) => JSON.parse(r.raw));
  const s2c = valid.filter((r) => r.direction === 's2c').map((r) => JSON.parse(r.raw));
  assert.deepEqual(sortedCanon(c2s), sortedCanon(diag.messagesSent), 'client -> server: every message the client sent, and no other');
  assert.deepEqual(sortedCanon(s2c), sortedCanon(diag.messagesReceived), 'server -> client: every message the client received, and no other');

  const requests = new Map();
  for (const r of valid) {
    const bytes = Buffer.from(r.hex, 'hex');
    assert.equal(r.kind, expectedKind(bytes), `seq ${r.seq}: kind`);
    assert.equal(r.size, bytes.length, `seq ${r.seq}: size`);
    const m = JSON.parse(r.raw);
    if ('id' in m) assert.deepEqual(JSON.parse(r.rpc_id), m.id, `seq ${r.seq}: id`);
    else assert.equal(r.rpc_id, null, `seq ${r.seq}: no id`);
    if (r.kind === 'request') {
      assert.equal(r.method, m.method);
      requests.set(`${r.direction}:${r.rpc_id}`, r);
    } else if (r.kind === 'notification') {
      assert.equal(r.method, m.method);
    } else {
      const q = requests.get(`${r.direction === 'c2s' ? 's2c' : 'c2s'}:${r.rpc_id}`);
      assert.ok(q, `seq ${r.seq}: ${r.kind} to a recorded request (id ${r.rpc_id})`);
      assert.ok(q.seq < r.seq, `seq ${r.seq}: after its request (seq ${q.seq})`);
      assert.equal(r.reply_to, q.id, `seq ${r.seq}: reply_to`);
      assert.equal(r.method, q.method, `seq ${r.seq}: its request's method`);
    }
  }
  const unanswered = sql(db, `SELECT direction, method, rpc_id FROM exchanges
    WHERE session_id = ${Number(sessionId)} AND response_seq IS NULL`);
  assert.deepEqual(unanswered, [], 'every request has its answer');
  return rows;
}

/** Whether a table exists. */
export function hasTable(db, name) {
  return sql(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${name.replace(/'/g, "''")}'`).length > 0;
}

/**
 * Whether the session's DELETE is recorded (see the header): {recorded,
 * exchanges (http_exchanges rows with method DELETE), events, endReason}.
 */
export function deleteRecorded(db, sessionId) {
  const exchanges = hasTable(db, 'http_exchanges')
    ? sql(db, `SELECT * FROM http_exchanges WHERE session_id = ${Number(sessionId)} AND method = 'DELETE'`)
    : [];
  const events = eventsOf(db, sessionId).filter((e) => /\bDELETE\b/.test(e.text ?? ''));
  const s = sql(db, `SELECT end_reason FROM sessions WHERE id = ${Number(sessionId)}`)[0];
  const endReason = s?.end_reason ?? null;
  return { recorded: exchanges.length > 0 || events.length > 0 || /\bDELETE\b/.test(endReason ?? ''), exchanges, events, endReason };
}

/**
 * Every place a secret string appears in the database files: per table and
 * column (any type, compared as bytes), in `sqlite3 .dump` (as text, and as
 * the hex of a blob literal), and in the raw bytes of DB, DB-wal, DB-shm
 * and DB-journal (which also catches deleted rows and free pages).
 * Returns a list of strings describing each hit; [] when clean.
 */
export function findSecret(db, secret) {
  assert.match(secret, /^[A-Za-z0-9._~+/=-]+$/, 'the secret is quoted into SQL, keep it plain');
  const hits = [];
  const tables = sql(db, `SELECT name FROM sqlite_master WHERE type = 'table'`).map((r) => r.name);
  for (const t of tables) {
    const cols = sql(db, `SELECT name FROM pragma_table_info('${t.replace(/'/g, "''")}')`).map((r) => r.name);
    for (const c of cols) {
      const q = `SELECT count(*) AS n FROM "${t}" WHERE instr(CAST("${c}" AS BLOB), CAST('${secret}' AS BLOB)) > 0`;
      const n = sql(db, q)[0].n;
      if (n > 0) hits.push(`${t}.${c}: ${n} row(s)`);
    }
  }
  const dump = execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 });
  if (dump.includes(secret)) hits.push('.dump (as text)');
  const hex = Buffer.from(secret).toString('hex');
  if (dump.toLowerCase().includes(hex)) hits.push('.dump (as blob hex)');
  for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]) {
    if (existsSync(f) && readFileSync(f).includes(Buffer.from(secret))) hits.push(`bytes of ${f}`);
  }
  return hits;
}
