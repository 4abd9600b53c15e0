// Helpers shared by the end-to-end tests: where the mcpreel binary is,
// temporary databases, running mcpreel with bytes in and out, and reading
// the database with the sqlite3 command-line shell (not through mcpreel, so
// the tests check what is stored independently of our own queries).

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const E2E_DIR = dirname(HERE);
export const PEERS_DIR = join(E2E_DIR, 'peers');

/** The binary under test: $MCPREEL, else build/mcpreel. */
export const MCPREEL = process.env.MCPREEL
  ? resolve(process.env.MCPREEL)
  : resolve(E2E_DIR, '..', '..', 'build', 'mcpreel');

/** A fresh directory; removed by the returned cleanup function. */
export function tempDir(prefix = 'mcpreel-e2e-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Start things, run fn({dir, defer}), then stop everything deferred, last
 * first, whatever happened, and remove the temporary directory.
 */
export async function withCleanup(fn) {
  const stops = [];
  const t = tempDir();
  try {
    return await fn({ dir: t.dir, defer: (stop) => stops.push(stop) });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    t.cleanup();
  }
}

/** Rows of a query as objects (sqlite3 -json). */
export function sql(db, query) {
  const out = execFileSync('sqlite3', ['-json', db, query], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return out.trim() === '' ? [] : JSON.parse(out);
}

/**
 * Run mcpreel with args, write input (a Buffer) to its stdin and close it
 * (unless keepStdinOpen), and collect stdout and stderr as Buffers.
 * Resolves with {code, signal, stdout, stderr, child}; rejects after
 * timeoutMs, killing it.
 */
export function runMcpreel(args, { input, timeoutMs = 30000, env, keepStdinOpen = false, onSpawn } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(MCPREEL, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', ...env },
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.stdin.on('error', () => {});
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcpreel ${args.join(' ')} did not finish in ${timeoutMs} ms; stderr: ${Buffer.concat(err)}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), child });
    });
    onSpawn?.(child);
    if (input !== undefined) child.stdin.write(input);
    if (!keepStdinOpen) child.stdin.end();
  });
}

/** Split bytes on '\n' into lines (Buffers) the way mcpreel frames them. */
export function splitLines(buf) {
  const lines = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0x0a) {
      lines.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < buf.length) lines.push(buf.subarray(start));
  return lines;
}

/**
 * The kind mcpreel should give these bytes, decided with JSON.parse (an
 * independent parser): the same rules as the scanner in core/scan.c.
 */
export function expectedKind(bytes) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'invalid';
  }
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return 'invalid';
  }
  if (Array.isArray(v)) return 'batch';
  if (v === null || typeof v !== 'object') return 'invalid';
  if ('method' in v) {
    if (typeof v.method !== 'string') return 'invalid';
    return 'id' in v ? 'request' : 'notification';
  }
  if ('result' in v && !('error' in v)) return 'response';
  if ('error' in v && !('result' in v)) return 'error';
  return 'invalid';
}
