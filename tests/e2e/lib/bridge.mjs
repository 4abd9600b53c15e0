// Helpers for the tests of mcpreel's bridges (bridge.test.mjs,
// http_conformance.test.mjs):
//
//   mcpreel record --connect URL [--header H] [--transport auto|http|sse]
//       the host speaks stdio to mcpreel, mcpreel speaks Streamable HTTP
//       (or legacy HTTP+SSE) to the server at URL;
//   mcpreel record --listen ADDR -- CMD
//       HTTP clients speak Streamable HTTP to mcpreel at ADDR, mcpreel
//       speaks stdio to CMD.
//
// Both are skipped while `mcpreel record --help` does not mention
// --connect (the two land together).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { spawnUntilLine, stopChild } from './servers.mjs';
import { stdioTransport } from './session.mjs';
import { MCPREEL } from './util.mjs';

/** Whether the binary under test has the bridges: {ok, reason}. */
export function bridgeSupport() {
  if (!existsSync(MCPREEL)) return { ok: false, reason: `no mcpreel binary at ${MCPREEL} (build it, or set $MCPREEL)` };
  const r = spawnSync(MCPREEL, ['record', '--help'], { encoding: 'utf8', timeout: 5000 });
  const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (/--connect\b/.test(text)) return { ok: true, reason: '' };
  return { ok: false, reason: `${MCPREEL} has no bridge yet (\`mcpreel record --help\` does not mention --connect)` };
}

/** The environment mcpreel runs in here: leak checks on under ASan. */
export function mcpreelEnv(env = {}) {
  return { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env };
}

/**
 * stdioTransport() (lib/session.mjs) that also puts the child's exit in
 * diag.exit ({code, signal}) and its stderr in diag.stderr.
 */
export function stdioTransportWithExit(command, args, o = {}) {
  const inner = stdioTransport(command, args, { stderr: 'pipe', ...o, env: mcpreelEnv(o.env) });
  return (diag) => {
    const made = inner(diag);
    const t = made.transport;
    const start = t.start.bind(t);
    diag.exit = null;
    diag.stderr ??= '';
    diag.exited = new Promise((resolve) => {
      t.start = async () => {
        await start();
        const p = t._process;
        if (!p) return resolve(null);
        p.once('exit', (code, signal) => {
          diag.exit = { code, signal };
          resolve(diag.exit);
        });
      };
    });
    return made;
  };
}

/**
 * Start `mcpreel record [--db DB] [--name NAME] [ARGS...] --listen
 * 127.0.0.1:0 -- CMD...` and wait for its line `mcpreel: listening on
 * http://127.0.0.1:PORT` on stderr.  Resolves {url, port, child, stderr(),
 * exited, stop()}; stop() sends SIGTERM (SIGKILL after graceMs) and
 * resolves {code, signal, killed, stderr}.
 */
export async function startMcpreelListen({ db, name, args = [], cmd, env, timeoutMs = 20000, graceMs = 10000 }) {
  const argv = ['record'];
  if (db) argv.push('--db', db);
  if (name) argv.push('--name', name);
  argv.push(...args, '--listen', '127.0.0.1:0', '--', ...cmd);
  const p = await spawnUntilLine(MCPREEL, argv, {
    env: mcpreelEnv(env),
    pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:(\d+))\/?$/,
    timeoutMs,
    name: `mcpreel ${argv.join(' ')}`,
  });
  return {
    url: p.match[1],
    port: Number(p.match[2]),
    argv,
    child: p.child,
    stderr: p.stderr,
    exited: p.exited,
    stop: async ({ signal = 'SIGTERM' } = {}) => ({ ...(await stopChild(p.child, p.exited, { signal, graceMs })), stderr: p.stderr() }),
  };
}

/** The step that only Streamable HTTP has (lib/session.mjs): the DELETE. */
export const DELETE_STEP = 'DELETE session';

const SESSION_ID_RE = /from session [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A transcript made comparable across the host's transport: a stdio host
 * through a bridge does not know the HTTP session id (so server-everything's
 * "... from session ID" logs keep the real id, which is replaced here as
 * lib/session.mjs replaces it for an HTTP client), and only a Streamable
 * HTTP client has the DELETE step (removed; the caller checks it).
 */
export function comparableTranscript(t) {
  const c = JSON.parse(JSON.stringify(t));
  c.steps = c.steps.filter((s) => s.step !== DELETE_STEP);
  const seen = new Map();
  for (const l of c.notifications.logMessages) {
    const e = typeof l.data === 'string' ? { ...l, data: l.data.replace(SESSION_ID_RE, 'from session <SESSION-ID>') } : l;
    seen.set(JSON.stringify(e), e);
  }
  c.notifications.logMessages = [...seen.values()].sort((a, b) => {
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return c;
}

/**
 * "Every message once", by id and method, on top of the multiset check of
 * dbcheck.checkRecordedMessages: each request the client sent is one c2s
 * request row and its answer one s2c row; each request the server sent
 * (as the client got it) one s2c row and the client's answer one c2s row;
 * each notification as many rows as the client sent or got; and the
 * number of valid rows is the number of messages on the client's wire.
 */
export function assertEveryMessageOnce(rows, diag) {
  const valid = rows.filter((r) => r.kind !== 'invalid');
  const key = (v) => JSON.stringify(v);
  const count = (dir, pred) => valid.filter((r) => r.direction === dir && pred(r)).length;
  const isAnswer = (r) => r.kind === 'response' || r.kind === 'error';
  for (const [mine, theirs, msgs] of [['c2s', 's2c', diag.messagesSent], ['s2c', 'c2s', diag.messagesReceived]]) {
    for (const m of msgs) {
      if (!m || typeof m !== 'object' || !('method' in m)) continue;
      if ('id' in m) {
        const id = key(m.id);
        assert.equal(count(mine, (r) => r.kind === 'request' && r.method === m.method && key(JSON.parse(r.rpc_id)) === id), 1,
          `${mine} request ${m.method} id ${id}: recorded once`);
        assert.equal(count(theirs, (r) => isAnswer(r) && key(JSON.parse(r.rpc_id)) === id && r.method === m.method), 1,
          `${theirs} answer to ${m.method} id ${id}: recorded once`);
      }
    }
    const notes = new Map();
    for (const m of msgs) if (m && typeof m === 'object' && 'method' in m && !('id' in m)) notes.set(m.method, (notes.get(m.method) ?? 0) + 1);
    for (const [method, n] of notes) {
      assert.equal(count(mine, (r) => r.kind === 'notification' && r.method === method), n, `${mine} ${method}: ${n} recorded, as on the wire`);
    }
  }
  assert.equal(valid.filter((r) => r.direction === 'c2s').length, diag.messagesSent.length, 'c2s rows = messages the client sent');
  assert.equal(valid.filter((r) => r.direction === 's2c').length, diag.messagesReceived.length, 's2c rows = messages the client got');
}

/** Every regular file under dir (recursively), with its bytes. */
export function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push({ path: p, bytes: readFileSync(p) });
  }
  return out;
}
