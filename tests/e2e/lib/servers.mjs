// HTTP peers for the end-to-end tests: server-everything in its HTTP modes,
// `mcpreel record --listen` in front of an upstream, our slow SSE server,
// a self-signed certificate for it, and small HTTP client helpers.
//
// Everything listens on 127.0.0.1 only and on a port the kernel chose.
// Every start function waits until the process says it is listening (and
// kills it and rejects if it does not within timeoutMs, or exits first);
// every stop() ends the process it started, by its pid, and waits for it.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';

import { serverEverythingEntry } from './session.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR } from './util.mjs';

const LOOPBACK_PRELOAD = join(E2E_DIR, 'lib', 'listen_loopback.mjs');
const OUTPUT_MAX = 1024 * 1024;

// ---------------------------------------------------------------------------
// Processes.

/**
 * Spawn `command args` and wait until a line of its stdout or stderr (per
 * `stream`) matches `pattern`.  Both streams are always drained (a full pipe
 * would block the child) and kept, up to 1 MiB each, for error messages.
 * Resolves {child, match, stdout(), stderr(), exited} where `exited` is a
 * promise of {code, signal}.
 */
export function spawnUntilLine(command, args, { env, stream = 'stderr', pattern, timeoutMs = 15000, name } = {}) {
  const label = name ?? [command, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    const out = { stdout: '', stderr: '' };
    const pending = { stdout: '', stderr: '' };
    let settled = false;
    const exited = new Promise((res) => child.on('close', (code, signal) => res({ code, signal })));

    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      reject(new Error(`${label}: ${why}\n--- stdout:\n${out.stdout.slice(-4000)}\n--- stderr:\n${out.stderr.slice(-4000)}`));
    };
    const timer = setTimeout(() => fail(`no line matching ${pattern} within ${timeoutMs} ms`), timeoutMs);

    for (const s of ['stdout', 'stderr']) {
      child[s].setEncoding('utf8');
      child[s].on('data', (chunk) => {
        if (out[s].length < OUTPUT_MAX) out[s] += chunk.slice(0, OUTPUT_MAX - out[s].length);
        if (settled || s !== stream) return;
        pending[s] += chunk;
        let nl;
        while ((nl = pending[s].indexOf('\n')) >= 0) {
          const line = pending[s].slice(0, nl).replace(/\r$/, '');
          pending[s] = pending[s].slice(nl + 1);
          const m = line.match(pattern);
          if (m) {
            settled = true;
            clearTimeout(timer);
            resolve({ child, match: m, stdout: () => out.stdout, stderr: () => out.stderr, exited });
            return;
          }
        }
      });
    }
    child.on('error', (e) => fail(`spawn failed: ${e.message}`));
    exited.then(({ code, signal }) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
  });
}

/**
 * Send `signal` to the child (if still running) and wait for it to exit;
 * SIGKILL after graceMs.  Resolves {code, signal, killed}.
 */
export async function stopChild(child, exited, { signal = 'SIGTERM', graceMs = 5000 } = {}) {
  if (child.exitCode !== null || child.signalCode !== null) return { ...(await exited), killed: false };
  child.kill(signal);
  let timer;
  const timeout = new Promise((res) => {
    timer = setTimeout(() => res('timeout'), graceMs);
  });
  const first = await Promise.race([exited, timeout]);
  clearTimeout(timer);
  if (first !== 'timeout') return { ...first, killed: false };
  child.kill('SIGKILL');
  return { ...(await exited), killed: true };
}

// ---------------------------------------------------------------------------
// server-everything over HTTP.

/**
 * Start server-everything in `mode` ('streamableHttp' or 'sse'):
 *
 *     PORT=0 node --import lib/listen_loopback.mjs dist/index.js MODE
 *
 * Its CLI takes the mode as the only argument and the port from $PORT
 * (default 3001); it binds every interface and logs the port it was given.
 * The preload makes it bind 127.0.0.1 and say which port it got.
 *
 * Resolves {mode, port, origin, url, child, stdout(), stderr(), stop()}:
 * url is the MCP endpoint, origin/mcp (streamableHttp: POST/GET/DELETE) or
 * origin/sse (sse: GET event stream; POSTs go to /message?sessionId=...).
 * stop() sends SIGTERM and resolves {code, signal, killed}.
 */
export async function startServerEverything(mode, { timeoutMs = 15000, env } = {}) {
  if (mode !== 'streamableHttp' && mode !== 'sse') throw new Error(`unknown server-everything mode ${mode}`);
  const p = await spawnUntilLine(process.execPath, ['--import', LOOPBACK_PRELOAD, serverEverythingEntry(), mode], {
    env: { ...process.env, ...env, PORT: '0' },
    pattern: /^mcpreel-e2e: listening on 127\.0\.0\.1:(\d+)$/,
    timeoutMs,
    name: `server-everything ${mode}`,
  });
  const port = Number(p.match[1]);
  const origin = `http://127.0.0.1:${port}`;
  return {
    mode,
    port,
    origin,
    url: `${origin}${mode === 'sse' ? '/sse' : '/mcp'}`,
    child: p.child,
    stdout: p.stdout,
    stderr: p.stderr,
    stop: () => stopChild(p.child, p.exited),
  };
}

// ---------------------------------------------------------------------------
// mcpreel record --listen.

/**
 * Whether the mcpreel binary under test has HTTP recording: `mcpreel record
 * --help` mentions --listen.  Returns {ok, reason}.
 */
export function mcpreelHttpSupport() {
  if (!existsSync(MCPREEL)) return { ok: false, reason: `no mcpreel binary at ${MCPREEL} (build it, or set $MCPREEL)` };
  const r = spawnSync(MCPREEL, ['record', '--help'], { encoding: 'utf8', timeout: 5000 });
  const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (/--listen\b/.test(text)) return { ok: true, reason: '' };
  return { ok: false, reason: `${MCPREEL} has no HTTP recording yet (\`mcpreel record --help\` does not mention --listen)` };
}

/**
 * Start `mcpreel record [--db DB] [--name NAME] --listen 127.0.0.1:0
 * --upstream UPSTREAM [ARGS...]` and wait for its one line
 * `mcpreel: listening on http://127.0.0.1:PORT` on stderr.
 *
 * Resolves {url, port, child, stderr(), stop()}: url is
 * http://127.0.0.1:PORT (no path; every path is forwarded to the same path
 * under upstream).  stop() sends SIGTERM, waits (SIGKILL after graceMs) and
 * resolves {code, signal, killed, stderr}.
 */
export async function startMcpreelHttp({ db, upstream, name, args = [], env, timeoutMs = 15000, graceMs = 10000 } = {}) {
  const argv = ['record'];
  if (db) argv.push('--db', db);
  if (name) argv.push('--name', name);
  argv.push('--listen', '127.0.0.1:0', '--upstream', upstream, ...args);
  const p = await spawnUntilLine(MCPREEL, argv, {
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env },
    pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:(\d+))$/,
    timeoutMs,
    name: `mcpreel ${argv.join(' ')}`,
  });
  return {
    url: p.match[1],
    port: Number(p.match[2]),
    argv,
    child: p.child,
    stderr: p.stderr,
    stop: async ({ signal = 'SIGTERM' } = {}) => ({ ...(await stopChild(p.child, p.exited, { signal, graceMs })), stderr: p.stderr() }),
  };
}

// ---------------------------------------------------------------------------
// peers/slow_sse_server.mjs

/**
 * Start our slow SSE server (see peers/slow_sse_server.mjs).
 * @param {object} [o]
 * @param {number} [o.delayMs=1500] POST /mcp: time between the two events
 * @param {number} [o.intervalMs=200] GET /events: time between events
 * @param {string} [o.statsFile] also write the stats there
 * @param {{key: string, cert: string}} [o.tls] serve HTTPS with these PEM files
 * Resolves {origin, port, tls, child, stats(), stop()}; stats() reads GET
 * /stats directly (not through any proxy).
 */
export async function startSlowSseServer({ delayMs = 1500, intervalMs = 200, statsFile, tls, timeoutMs = 10000 } = {}) {
  const args = [join(PEERS_DIR, 'slow_sse_server.mjs'), '--delay', String(delayMs), '--interval', String(intervalMs)];
  if (statsFile) args.push('--stats', statsFile);
  if (tls) args.push('--tls', tls.key, tls.cert);
  const p = await spawnUntilLine(process.execPath, args, {
    stream: 'stdout',
    pattern: /^slow_sse_server: listening on (https?:\/\/127\.0\.0\.1:(\d+))$/,
    timeoutMs,
    name: 'slow_sse_server',
  });
  const origin = p.match[1];
  return {
    origin,
    port: Number(p.match[2]),
    tls,
    child: p.child,
    stderr: p.stderr,
    stats: async () => JSON.parse((await request(`${origin}/stats`, { ca: tls?.certPem })).body.toString('utf8')),
    stop: () => stopChild(p.child, p.exited),
  };
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost (CN=127.0.0.1,
 * subjectAltName IP:127.0.0.1, DNS:localhost), made with the openssl CLI
 * into dir.  Returns {key, cert, certPem}: the two file paths and the
 * certificate's text (to pass as `ca`).
 */
export function makeSelfSignedCert(dir) {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2',
    '-keyout', key, '-out', cert, '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  return { key, cert, certPem: readFileSync(cert, 'utf8') };
}

/** Whether the openssl CLI is there. */
export function haveOpenssl() {
  return spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
}

// ---------------------------------------------------------------------------
// HTTP client helpers (node:http / node:https, so a CA can be given and
// timing of the response body is visible chunk by chunk).

/**
 * One request.  Resolves {status, headers, body (Buffer)} once the body has
 * ended.  Rejects on a network error or after timeoutMs.
 */
export function request(url, { method = 'GET', headers = {}, body, ca, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method, headers, ca, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`${method} ${url}: no complete answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}

/** Wall-clock milliseconds with sub-millisecond precision; the same clock in every process here. */
export function nowMs() {
  return performance.timeOrigin + performance.now();
}

/**
 * Read a text/event-stream response as it arrives.  Resolves {status,
 * headers, events: [{atMs, event, id, data}]} where atMs (nowMs()) is when
 * the blank line ending each event arrived.  `onEvent(ev, events)` may return
 * 'stop' to abort the request there (the socket is destroyed: the client
 * disconnects); then `abortedAtMs` is set.
 */
export function readEventStream(url, { method = 'GET', headers = {}, body, ca, timeoutMs = 15000, onEvent } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const events = [];
    let result;
    const req = mod.request(u, { method, headers, ca, agent: false }, (res) => {
      result = { status: res.statusCode, headers: res.headers, events, abortedAtMs: null };
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buf += chunk;
        let end;
        while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + buf.slice(end).match(/^\r?\n\r?\n/)[0].length);
          const ev = { atMs: nowMs(), event: null, id: null, data: null };
          const data = [];
          for (const line of block.split(/\r?\n/)) {
            const m = line.match(/^([^:]*)(?::\s?(.*))?$/);
            if (!m || m[1] === '') continue;
            if (m[1] === 'data') data.push(m[2] ?? '');
            else if (m[1] === 'event') ev.event = m[2] ?? '';
            else if (m[1] === 'id') ev.id = m[2] ?? '';
          }
          if (data.length) ev.data = data.join('\n');
          events.push(ev);
          if (onEvent?.(ev, events) === 'stop') {
            result.abortedAtMs = nowMs();
            clearTimeout(timer);
            req.destroy();
            resolve(result);
            return;
          }
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve(result);
      });
      res.on('error', () => {});
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${url}: event stream not finished within ${timeoutMs} ms (${events.length} event(s))`));
    }, timeoutMs);
    req.on('error', (e) => {
      if (result?.abortedAtMs) return;
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}
