// The OTLP side of the end-to-end tests: the independent test receiver
// (otlp/receiver.py, Google's protobuf library over message definitions
// written from the OTLP specification), and what the spans of a recorded
// session must be, worked out from the recorded messages with JSON.parse
// and the MCP semantic conventions (a table below), not from mcpreel's
// code.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { spawnUntilLine, stopChild } from './servers.mjs';
import { E2E_DIR, MCPREEL, sql } from './util.mjs';

export const RECEIVER = join(E2E_DIR, 'otlp', 'receiver.py');
// Debian's Python has python3-protobuf; a pyenv one first on PATH may not.
export const PYTHON = '/usr/bin/python3';

export const KIND = { SERVER: 2, CLIENT: 3 };
export const STATUS = { UNSET: 0, OK: 1, ERROR: 2 };

/** Whether the receiver can run here: {ok, reason}. */
export function receiverSupport() {
  const py = spawnSync(PYTHON, ['-c', 'import google.protobuf'], { encoding: 'utf8' });
  if (py.status !== 0) return { ok: false, reason: `${PYTHON} has no protobuf module (scripts/deps.sh test installs python3-protobuf)` };
  const pc = spawnSync('protoc', ['--version'], { encoding: 'utf8' });
  if (pc.status !== 0) return { ok: false, reason: 'no protoc (scripts/deps.sh test installs protobuf-compiler)' };
  return { ok: true, reason: '' };
}

/** Whether the binary under test has --otlp: {ok, reason}. */
export function mcpreelOtlpSupport() {
  if (!existsSync(MCPREEL)) return { ok: false, reason: `no mcpreel binary at ${MCPREEL}` };
  const r = spawnSync(MCPREEL, ['record', '--help'], { encoding: 'utf8', timeout: 5000 });
  if (/--otlp\b/.test(`${r.stdout}${r.stderr}`)) return { ok: true, reason: '' };
  return { ok: false, reason: `${MCPREEL} has no --otlp (\`mcpreel record --help\` does not mention it)` };
}

/** JSON lines of a file, parsed; [] for a missing file. */
function jsonLines(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

/**
 * Start the receiver writing to dir/NAME.jsonl, answering per phases
 * (e.g. ['status', '500', 'x2', 'ok']; see receiver.py).  Resolves
 * {port, origin, url (the traces URL), requests(), spans(), waitSpans(n),
 * stop()}: requests() are the decoded lines, spans() the spans of the
 * requests answered 200 (what a collector kept).
 */
export async function startReceiver(dir, phases = [], name = 'otlp') {
  const out = join(dir, `${name}.jsonl`);
  const p = await spawnUntilLine(PYTHON, [RECEIVER, 'serve', out, ...phases], {
    stream: 'stdout', pattern: /^(\d+)$/, timeoutMs: 15000, name: 'otlp receiver',
  });
  const port = Number(p.match[1]);
  const origin = `http://127.0.0.1:${port}`;
  const requests = () => jsonLines(out);
  const spans = () => requests().filter((r) => r.answer === 200).flatMap((r) => r.spans);
  return {
    port,
    origin,
    url: `${origin}/v1/traces`,
    out,
    requests,
    spans,
    stderr: p.stderr,
    /** Wait until at least n spans were accepted (or timeoutMs passed); returns them. */
    async waitSpans(n, timeoutMs = 10000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const s = spans();
        if (s.length >= n || Date.now() > until) return s;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => stopChild(p.child, p.exited),
  };
}

/** Decode an OTLP/JSON lines file strictly with the receiver: {code, lines, stderr}. */
export function decodeFile(file) {
  const r = spawnSync(PYTHON, [RECEIVER, 'decode', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const lines = r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  return { code: r.status, lines, stderr: r.stderr };
}

/** A closed TCP port on 127.0.0.1 (bound, then released). */
export async function closedPort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------
// What the spans of a session must be.

/** First 16 bytes of SHA-256 over text, as hex. */
function sha16(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
}

/** The session's trace id and mcp.session.id as mcpreel derives them. */
export function sessionIds(row) {
  const tail = `${row.started_ns}\n${row.transport}\n${row.target}`;
  return { traceId: sha16(`mcpreel trace\n${tail}`), sessionKey: sha16(`mcpreel session\n${tail}`) };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A W3C traceparent's ids, or null when it is not a valid one. */
export function parseTraceparent(tp) {
  const m = typeof tp === 'string' ? tp.match(TRACEPARENT) : null;
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return null;
  return { traceId: m[1], parentId: m[2] };
}

// Error codes that, answered by the side a SERVER span reports for, are
// the caller's fault and not errors (the conventions' mcp.server status
// attributes: parse error, invalid request, method not found, invalid
// params, resource not found).
export const NOT_SERVER_ERRORS = new Set([-32700, -32600, -32601, -32602, -32002]);

// Methods whose params.uri is mcp.resource.uri.
const URI_METHODS = new Set(['resources/read', 'resources/subscribe', 'resources/unsubscribe',
  'notifications/resources/updated']);

const VERSION_WITHOUT_SESSIONS = '2026-07-28';
const VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/**
 * The spans a session's recorded messages must give, one per request and
 * notification, in wire order.  rows: messages rows (seq, direction, kind,
 * ts_ns, raw); side 'server' or 'client'.  Each expected span: {key,
 * name, kind, start, end, traceId, parentId, traceState, status: {code,
 * message}, fact} where fact is what the attribute table reads.
 */
export function expectedSpans(rows, { session, side = 'server', sessionTrace = sessionIds(session).traceId }) {
  const seen = new Map(); // notifications of a direction and method so far
  const spans = [];
  const pending = new Map(); // `${dir}:${idJSON}` -> span
  let askedVersion = null;
  let version = null;
  // Once a version of 2026-07-28 or later is seen (or one that is not a
  // date), the session has no MCP session: no span of it after that has
  // mcp.session.id, not even a notification without _meta.
  let sessionless = false;
  const seeVersion = (v) => {
    if (typeof v !== 'string') return;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || v >= VERSION_WITHOUT_SESSIONS) sessionless = true;
  };
  for (const row of rows) {
    const m = JSON.parse(row.raw);
    const ts = String(row.ts_ns);
    if (row.kind === 'request' || row.kind === 'notification') {
      const params = m.params && typeof m.params === 'object' ? m.params : {};
      const meta = params._meta && typeof params._meta === 'object' ? params._meta : {};
      if (m.method === 'initialize' && row.direction === 'c2s') {
        askedVersion = params.protocolVersion ?? null;
        seeVersion(askedVersion);
      }
      // A request's own version (params._meta) is the session's from then
      // on: a later message without one takes it.
      const metaVersion = typeof meta[VERSION_META] === 'string' ? meta[VERSION_META] : null;
      if (metaVersion !== null) {
        version = metaVersion;
        seeVersion(metaVersion);
      }
      const fromClient = row.direction === 'c2s';
      const kind = (side === 'server') === fromClient ? KIND.SERVER : KIND.CLIENT;
      let target = null;
      if (m.method === 'tools/call' || m.method === 'prompts/get') target = typeof params.name === 'string' ? params.name : null;
      const tp = parseTraceparent(meta.traceparent);
      const span = {
        seq: row.seq,
        key: row.kind === 'request' ? `${row.direction}:${JSON.stringify(m.id)}` : `${row.direction}:${m.method}@${ts}`,
        nth: row.kind === 'request' ? null : bump(seen, `${row.direction}:${m.method}`),
        name: target ? `${m.method} ${target}` : m.method,
        kind,
        start: ts,
        end: row.kind === 'notification' ? ts : null,
        traceId: tp ? tp.traceId : sessionTrace,
        parentId: tp ? tp.parentId : '',
        traceState: tp && typeof meta.tracestate === 'string' ? meta.tracestate : '',
        status: { code: STATUS.UNSET, message: '' },
        fact: {
          method: m.method,
          request: row.kind === 'request',
          id: row.kind === 'request' && m.id !== null ? (typeof m.id === 'string' ? m.id : JSON.stringify(m.id)) : null,
          jsonrpc: m.jsonrpc,
          toolName: m.method === 'tools/call' ? params.name : undefined,
          promptName: m.method === 'prompts/get' ? params.name : undefined,
          uri: URI_METHODS.has(m.method) ? params.uri : undefined,
          arguments: m.method === 'tools/call' ? params.arguments : undefined,
          promptArgs: m.method === 'prompts/get' && params.arguments && typeof params.arguments === 'object' ? params.arguments : {},
          result: undefined,
          // 2026-07-28 and later have no initialize: each request names
          // its version in _meta.
          version: metaVersion ?? version ?? askedVersion,
          sessionless,
          code: null,
          errorType: null,
          kind,
        },
      };
      spans.push(span);
      if (row.kind === 'request') pending.set(span.key, span);
      // A notifications/cancelled from a request's sender ends its span.
      if (m.method === 'notifications/cancelled' && params.requestId !== undefined) {
        const k = `${row.direction}:${JSON.stringify(params.requestId)}`;
        const q = pending.get(k);
        if (q) {
          pending.delete(k);
          q.end = ts;
          q.status = { code: STATUS.ERROR, message: '' };
          q.fact.errorType = 'cancelled';
        }
      }
    } else if (row.kind === 'response' || row.kind === 'error') {
      const k = `${row.direction === 'c2s' ? 's2c' : 'c2s'}:${JSON.stringify(m.id)}`;
      const q = pending.get(k);
      if (!q) continue;
      pending.delete(k);
      q.end = ts;
      if (q.fact.method === 'initialize' && m.result && typeof m.result.protocolVersion === 'string') {
        version = m.result.protocolVersion;
        seeVersion(version);
        q.fact.version = version;
      }
      if (row.kind === 'error') {
        const code = m.error.code;
        q.fact.code = String(code);
        const isError = q.kind === KIND.CLIENT || !NOT_SERVER_ERRORS.has(code);
        if (isError) {
          q.fact.errorType = String(code);
          q.status = { code: STATUS.ERROR, message: String(m.error.message ?? '').slice(0, 1024) };
        }
      } else if (q.fact.method === 'tools/call') {
        q.fact.result = m.result;
        if (m.result && m.result.isError === true) {
          q.fact.errorType = 'tool_error';
          q.status = { code: STATUS.ERROR, message: '' };
        }
      }
    }
  }
  for (const q of pending.values()) {
    q.fact.errorType = 'unanswered';
    q.status = { code: STATUS.ERROR, message: '' };
  }
  return spans;
}

/**
 * The conventions' attribute table for MCP spans: for each attribute, its
 * requirement level, its OTLP value type, when it must be present (given
 * the span's fact and the session: {transport, side, ...}), and the value
 * it must have (undefined: only its type is checked).  Absent whenever
 * `when` says no.
 */
export const ATTRIBUTES = [
  // Required.
  { key: 'mcp.method.name', level: 'required', type: 'string', when: () => true, value: (f) => f.method },
  // Conditionally required.
  { key: 'jsonrpc.request.id', level: 'conditionally_required', type: 'string', when: (f) => f.request && f.id !== null, value: (f) => f.id },
  { key: 'gen_ai.tool.name', level: 'conditionally_required', type: 'string', when: (f) => typeof f.toolName === 'string', value: (f) => f.toolName },
  { key: 'gen_ai.prompt.name', level: 'conditionally_required', type: 'string', when: (f) => typeof f.promptName === 'string', value: (f) => f.promptName },
  { key: 'mcp.resource.uri', level: 'conditionally_required', type: 'string', when: (f) => typeof f.uri === 'string', value: (f) => f.uri },
  { key: 'rpc.response.status_code', level: 'conditionally_required', type: 'string', when: (f) => f.code !== null, value: (f) => f.code },
  { key: 'error.type', level: 'conditionally_required', type: 'string', when: (f) => f.errorType !== null, value: (f) => f.errorType },
  // Recommended.
  { key: 'gen_ai.operation.name', level: 'recommended', type: 'string', when: (f) => f.method === 'tools/call', value: () => 'execute_tool' },
  { key: 'mcp.protocol.version', level: 'recommended', type: 'string', when: (f) => f.version !== null, value: (f) => f.version },
  // "MUST NOT be set for a 2026-07-28-and-later session" (the registry).
  {
    key: 'mcp.session.id', level: 'recommended', type: 'string',
    when: (f) => !f.sessionless && (f.version === null || f.version < VERSION_WITHOUT_SESSIONS),
    value: (f, s) => s.sessionKey,
  },
  { key: 'jsonrpc.protocol.version', level: 'recommended', type: 'string', when: (f) => f.jsonrpc !== '2.0', value: (f) => String(f.jsonrpc) },
  { key: 'network.transport', level: 'recommended', type: 'string', when: () => true, value: (f, s) => (s.transport === 'stdio' ? 'pipe' : 'tcp') },
  { key: 'network.protocol.name', level: 'recommended', type: 'string', when: (f, s) => s.transport !== 'stdio', value: () => 'http' },
  { key: 'network.protocol.version', level: 'recommended', type: 'string', when: (f, s) => s.transport !== 'stdio', value: () => '1.1' },
  // The peer: on the server side a SERVER span names its client (HTTP,
  // where the recorder knows the address); on the client side a CLIENT
  // span names its server (the HTTP upstream).  s.peer says which.
  { key: 'client.address', level: 'recommended', type: 'string', when: (f, s) => s.peer(f, 'client.address') === true, value: (f, s) => s.clientAddress, optional: (f, s) => s.peer(f, 'client.address') === 'maybe' },
  { key: 'client.port', level: 'recommended', type: 'int', when: (f, s) => s.peer(f, 'client.port') === true, value: () => undefined, optional: (f, s) => s.peer(f, 'client.port') === 'maybe' },
  { key: 'server.address', level: 'recommended', type: 'string', when: (f, s) => s.peer(f, 'server.address') === true, value: (f, s) => s.serverAddress, optional: (f, s) => s.peer(f, 'server.address') === 'maybe' },
  { key: 'server.port', level: 'recommended', type: 'int', when: (f, s) => s.peer(f, 'server.port') === true, value: (f, s) => s.serverPort, optional: (f, s) => s.peer(f, 'server.port') === 'maybe' },
  // Opt-in (--otlp-payloads): never without it.
  // Structured: the JSON as recorded (so redacted as recorded).  A
  // tool's error result (isError) may be there or not.
  { key: 'gen_ai.tool.call.arguments', level: 'opt_in', type: 'kvlist', when: (f, s) => s.payloads && f.method === 'tools/call' && f.arguments !== undefined, value: (f) => f.arguments },
  {
    key: 'gen_ai.tool.call.result', level: 'opt_in', type: 'kvlist',
    when: (f, s) => s.payloads && f.method === 'tools/call' && f.result !== undefined && f.errorType === null,
    optional: (f, s) => s.payloads && f.errorType === 'tool_error',
    value: (f) => f.result,
  },
];

/**
 * The default peer rule: over HTTP, client.address and client.port only
 * on SERVER spans of the server side, server.address and server.port
 * only on CLIENT spans of the client side (the upstream is the server
 * then); nowhere else.  Over stdio, never.
 */
export function peerRule({ transport, side }) {
  return (f, key) => {
    if (transport === 'stdio') return false;
    const serverSpan = f.kind === KIND.SERVER;
    if (key.startsWith('client.')) return serverSpan && side === 'server';
    return !serverSpan && side === 'client';
  };
}

/** A received structured value ({type, value}) as the JSON it came from. */
export function anyToJson(a) {
  switch (a.type) {
  case 'array': return a.value.map(anyToJson);
  case 'kvlist': return Object.fromEntries(a.value.map(([k, v]) => [k, anyToJson(v)]));
  case 'empty': return null;
  default: return a.value;
  }
}

/** JSON text with object keys sorted. */
export function canonJson(v) {
  if (Array.isArray(v)) return `[${v.map(canonJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonJson(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** A received attribute's plain value ({type, value} from the receiver). */
function plain(a) {
  return a.type === 'int' || a.type === 'string' || a.type === 'bool' || a.type === 'double' ? a.value : a;
}

/**
 * Problems of one received span's attributes against the table (an array
 * of sentences; empty when all is well).
 */
export function attributeProblems(span, fact, s) {
  const problems = [];
  const known = new Set();
  for (const row of ATTRIBUTES) {
    known.add(row.key);
    const a = span.attributes[row.key];
    const must = row.when(fact, s);
    const may = row.optional ? row.optional(fact, s) : false;
    if (!must && !may) {
      if (a) problems.push(`${row.key} (${row.level}) must be absent, is ${JSON.stringify(a)}`);
      continue;
    }
    if (!a) {
      if (must) problems.push(`${row.key} (${row.level}) missing`);
      continue;
    }
    if (a.type !== row.type && !(row.type === 'kvlist' && ['kvlist', 'string', 'array'].includes(a.type))) {
      problems.push(`${row.key}: type ${a.type}, not ${row.type}`);
      continue;
    }
    const want = row.value(fact, s);
    if (row.type === 'kvlist') {
      if (want !== undefined && canonJson(anyToJson(a)) !== canonJson(want)) {
        problems.push(`${row.key} = ${canonJson(anyToJson(a)).slice(0, 300)}, not ${canonJson(want).slice(0, 300)}`);
      }
    } else if (want !== undefined && plain(a) !== want) {
      problems.push(`${row.key} = ${JSON.stringify(plain(a))}, not ${JSON.stringify(want)}`);
    }
    if (row.type === 'int' && row.key.endsWith('.port') && !(a.value > 0 && a.value < 65536)) problems.push(`${row.key} = ${a.value}: not a port`);
  }
  // gen_ai.prompt.variable.<name> (opt-in): each argument of a
  // prompts/get, as a string.
  const vars = s.payloads && fact.method === 'prompts/get' ? fact.promptArgs : {};
  for (const [name, v] of Object.entries(vars)) {
    const a = span.attributes[`gen_ai.prompt.variable.${name}`];
    const want = typeof v === 'string' ? v : JSON.stringify(v);
    if (!a) problems.push(`gen_ai.prompt.variable.${name} (opt_in) missing`);
    else if (a.type !== 'string' || a.value !== want) problems.push(`gen_ai.prompt.variable.${name} = ${JSON.stringify(a)}, not ${JSON.stringify(want)}`);
  }
  for (const k of Object.keys(span.attributes)) {
    if (known.has(k)) continue;
    if (k.startsWith('gen_ai.prompt.variable.') && Object.hasOwn(vars, k.slice('gen_ai.prompt.variable.'.length))) continue;
    problems.push(`attribute ${k} is in no row of the table`);
  }
  return problems;
}

/** The session row and its messages, from the database. */
export function recordedSession(db, where) {
  const session = sql(db, `SELECT * FROM sessions WHERE ${where} ORDER BY id DESC LIMIT 1`)[0];
  if (!session) throw new Error(`no session ${where} in ${db}`);
  const rows = sql(db, `SELECT seq, direction, kind, method, rpc_id, CAST(ts_ns AS TEXT) AS ts_ns, CAST(raw AS TEXT) AS raw
      FROM messages WHERE session_id = ${Number(session.id)} ORDER BY seq`);
  // started_ns as text: a JSON number would lose its last digits.
  session.started_ns = sql(db, `SELECT CAST(started_ns AS TEXT) AS s FROM sessions WHERE id = ${Number(session.id)}`)[0].s;
  return { session, rows };
}

/**
 * Match received spans to expected ones (requests by direction and id,
 * notifications by method and time), and list every difference.
 * Returns {problems, pairs}.
 */
export function compareSpans(received, expected, s) {
  const problems = [];
  const pairs = [];
  const byKey = new Map();
  const nth = new Map();
  if (s.loose) {
    // Times are not the recording's: notifications pair by their order.
    expected = expected.map((e) => (e.nth === null ? e : { ...e, key: e.key.replace(/@\d+$/, `#${e.nth}`) }));
    received = [...received].sort((a, b) => (BigInt(a.start) < BigInt(b.start) ? -1 : BigInt(a.start) > BigInt(b.start) ? 1 : 0));
  }
  for (const sp of received) {
    const a = sp.attributes;
    const method = a['mcp.method.name']?.value ?? sp.name.split(' ')[0];
    const fromClient = (s.side === 'server') === (sp.kind === KIND.SERVER);
    const dir = fromClient ? 'c2s' : 's2c';
    // A request's span by its direction and id (when the id names a
    // request of that method), else a notification's by method and time.
    let key = s.loose ? `${dir}:${method}#${bump(nth, `${dir}:${method}`)}` : `${dir}:${method}@${sp.start}`;
    if (a['jsonrpc.request.id']) {
      const k = `${dir}:${findIdJson(expected, dir, a['jsonrpc.request.id'].value)}`;
      if (expected.some((e) => e.key === k && e.fact.method === method)) key = k;
    }
    if (byKey.has(key)) problems.push(`two spans for ${key}: ${sp.name}`);
    byKey.set(key, sp);
  }
  for (const e of expected) {
    const sp = byKey.get(e.key);
    if (!sp) {
      problems.push(`no span for seq ${e.seq} ${e.name} (${e.key})`);
      continue;
    }
    byKey.delete(e.key);
    pairs.push([e, sp]);
    const where = `seq ${e.seq} ${e.name}`;
    if (sp.name !== e.name) problems.push(`${where}: name ${JSON.stringify(sp.name)}`);
    if (sp.kind !== e.kind) problems.push(`${where}: kind ${sp.kind}, not ${e.kind}`);
    if (sp.traceId !== e.traceId) problems.push(`${where}: trace id ${sp.traceId}, not ${e.traceId}`);
    if (sp.parentSpanId !== e.parentId) problems.push(`${where}: parent ${JSON.stringify(sp.parentSpanId)}, not ${JSON.stringify(e.parentId)}`);
    if (sp.traceState !== e.traceState) problems.push(`${where}: trace state ${JSON.stringify(sp.traceState)}, not ${JSON.stringify(e.traceState)}`);
    if (!s.loose && sp.start !== e.start) problems.push(`${where}: start ${sp.start}, not the request's time ${e.start}`);
    if (!s.loose && e.end !== null && sp.end !== e.end) problems.push(`${where}: end ${sp.end}, not ${e.end}`);
    if (sp.status.code !== e.status.code || sp.status.message !== e.status.message) {
      problems.push(`${where}: status ${JSON.stringify(sp.status)}, not ${JSON.stringify(e.status)}`);
    }
    for (const p of attributeProblems(sp, e.fact, s)) problems.push(`${where}: ${p}`);
  }
  for (const [k, sp] of byKey) problems.push(`a span no message explains: ${sp.name} (${k})`);
  return { problems, pairs };
}

/** Count key in map m; the count before. */
function bump(m, key) {
  const n = m.get(key) ?? 0;
  m.set(key, n + 1);
  return n;
}

/** The JSON text of the expected id whose string form is idText (for matching). */
function findIdJson(expected, dir, idText) {
  for (const e of expected) {
    if (e.fact.request && e.key.startsWith(`${dir}:`) && e.fact.id === idText) return e.key.slice(dir.length + 1);
  }
  return JSON.stringify(idText);
}

/** A span without its own id, for comparing live and exported spans. */
export function spanShape(sp) {
  const attrs = { ...sp.attributes };
  return {
    name: sp.name, kind: sp.kind, traceId: sp.traceId, parentSpanId: sp.parentSpanId, traceState: sp.traceState,
    start: sp.start, end: sp.end, status: sp.status, attributes: attrs, resource: sp.resource, scope: sp.scope,
  };
}
