// `mcpreel record --cassette FILE [--no-db]`: the session recorded is
// written to FILE as `mcpreel export` would write it, when the session ends
// whatever ended it (the host closing, the server exiting, a signal, the
// end of an HTTP run); with --no-db no database is made or touched.  A
// cassette that cannot be written is an error and leaves no half file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, request, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { sessionsOf } from './lib/dbcheck.mjs';
import { MCPREEL, runMcpreel, sql, tempDir, withCleanup } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

/** `mcpreel export [--db DB] SESSION` to stdout, as bytes. */
async function exported(args) {
  const r = await runMcpreel(['export', ...args]);
  assert.equal(r.code, 0, `mcpreel export ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The cassette's lines, parsed. */
function cassetteLines(file) {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

/** The files in dir and below (relative paths), for "nothing was made here". */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true });
}

/** An environment where every default database location is inside home. */
function isolatedEnv(home) {
  mkdirSync(join(home, 'tmp'), { recursive: true });
  return {
    HOME: join(home, 'home'),
    XDG_DATA_HOME: join(home, 'xdg'),
    MCPREEL_DB: join(home, 'db', 'mcpreel.db'),
    TMPDIR: join(home, 'tmp'),
  };
}

/**
 * Whether `mcpreel mock FILE` reads a cassette in this build (the reading
 * side): mock with stdin closed at once exits 0 when it could load FILE.
 */
async function mockReadsCassettes(file, env) {
  const r = await runMcpreel(['mock', file], { input: Buffer.alloc(0), env });
  return r.code === 0;
}

test('record --cassette over stdio: FILE is the export of the session, byte for byte', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const file = join(t.dir, 'fixtures', 'everything.jsonl');
    mkdirSync(join(t.dir, 'fixtures'));
    const { command, args } = serverEverythingCommand();
    const started = Date.now();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--cassette', file, '--', command, ...args],
      { stderr: 'pipe' });
    console.log(`# the session through record --cassette: ${Date.now() - started} ms`);

    assert.ok(existsSync(file), 'the cassette is written when the host closes');
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the cassette is private (0600)');
    const bytes = readFileSync(file);
    assert.deepEqual(bytes, await exported(['--db', db, 'sdk']), 'FILE is what export writes, byte for byte');
    const lines = cassetteLines(file);
    assert.equal(lines[0].format, 'mcpreel-jsonl');
    assert.equal(lines[0].end_reason, 'host closed the connection', 'the whole session: its end is in it');
    const messages = lines.filter((l) => l.type === 'message');
    const [{ n }] = sql(db, `SELECT count(*) AS n FROM messages WHERE session_id = (SELECT id FROM sessions WHERE name = 'sdk')`);
    assert.equal(messages.length, n, 'every message of the session is in the cassette');
    assert.ok(messages.length > 30, `a real session (${messages.length} messages)`);
    assert.deepEqual(filesUnder(join(t.dir, 'fixtures')), ['everything.jsonl'], 'no temporary file is left beside it');
  } finally {
    t.cleanup();
  }
});

test('record --cassette --no-db: no database anywhere, a 0600 cassette that mocks the same transcript', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const env = { ...process.env, ...isolatedEnv(t.dir) };
    const file = join(t.dir, 'out', 'login.jsonl');
    mkdirSync(join(t.dir, 'out'));
    const { command, args } = serverEverythingCommand();
    const recorded = await runSession(MCPREEL, ['record', '--no-db', '--cassette', file, '--', command, ...args],
      { stderr: 'pipe', env });

    assert.ok(existsSync(file), 'the cassette is there');
    assert.equal(statSync(file).mode & 0o777, 0o600, 'mode 0600');
    for (const d of ['home', 'xdg', 'db']) assert.equal(existsSync(join(t.dir, d)), false, `nothing made in $${d}`);
    assert.deepEqual(filesUnder(join(t.dir, 'tmp')), [], 'the temporary store is gone from $TMPDIR');
    const lines = cassetteLines(file);
    assert.equal(lines[0].format, 'mcpreel-jsonl');
    assert.ok(lines.filter((l) => l.type === 'message').length > 30, 'the session is in it');

    // Read back: export of the cassette gives its bytes again.
    assert.deepEqual(await exported([file]), readFileSync(file), 'export FILE round-trips');

    let mocked;
    if (await mockReadsCassettes(file, env)) {
      mocked = await runSession(MCPREEL, ['mock', file], { stderr: 'pipe', env });
      assert.deepEqual(filesUnder(join(t.dir, 'tmp')), [], 'mock leaves nothing in $TMPDIR');
    } else {
      // The reading side is not in this build: through import instead.
      console.log('# mock does not read a cassette in this build: import FILE --db X, then mock --db X');
      const x = join(t.dir, 'x.db');
      const imp = await runMcpreel(['import', '--db', x, file], { env });
      assert.equal(imp.code, 0, imp.stderr.toString());
      mocked = await runSession(MCPREEL, ['mock', '--db', x, 'last'], { stderr: 'pipe', env });
    }
    assert.deepEqual(mocked, recorded, 'the mock of the cassette gives the recorded transcript');
    for (const d of ['home', 'xdg', 'db']) assert.equal(existsSync(join(t.dir, d)), false, `still nothing in $${d}`);
  } finally {
    t.cleanup();
  }
});

test('record --cassette --no-db needs --cassette; --no-db and --db clash; an unusable FILE stops it at once', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const env = isolatedEnv(t.dir);
    let r = await runMcpreel(['record', '--no-db', '--', 'cat'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /--no-db needs --cassette/);
    r = await runMcpreel(['record', '--no-db', '--db', join(t.dir, 'x.db'), '--cassette', join(t.dir, 'c.jsonl'), '--', 'cat'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /either --db PATH or --no-db/);
    // A missing directory, and a directory: said before the server starts.
    const marker = join(t.dir, 'ran');
    for (const bad of [join(t.dir, 'no-such-dir', 'c.jsonl'), t.dir]) {
      r = await runMcpreel(['record', '--cassette', bad, '--', 'sh', '-c', `touch ${marker}`], { env, input: Buffer.alloc(0) });
      assert.equal(r.code, 2, `--cassette ${bad}: exit 2`);
      assert.match(r.stderr.toString(), new RegExp(`--cassette ${bad.replace(/[/.]/g, '\\$&')}: (cannot create a file there|not a regular file)`));
      assert.equal(existsSync(marker), false, 'nothing was run');
    }
    for (const d of ['home', 'xdg', 'db']) assert.equal(existsSync(join(t.dir, d)), false, `no database made ($${d})`);
  } finally {
    t.cleanup();
  }
});

/**
 * `mcpreel record ARGS -- cat` with stdin kept open: sends a ping, waits
 * for its echo, then `stop(child)`; resolves {code, signal, stderr}.
 */
async function recordCat(args, stop, env) {
  const child = spawn(MCPREEL, ['record', ...args, '--', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const exited = new Promise((res) => child.on('close', (code, signal) => res({ code, signal })));
  const echoed = new Promise((res) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) res(out);
    });
  });
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
  await echoed;
  await stop(child);
  const r = await exited;
  clearTimeout(timer);
  return { ...r, stderr };
}

test('record --cassette over stdio: SIGTERM, SIGINT and SIGHUP to mcpreel still write the cassette', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
      const db = join(t.dir, `${sig}.db`);
      const file = join(t.dir, `${sig}.jsonl`);
      const r = await recordCat(['--db', db, '--cassette', file], async (child) => child.kill(sig));
      assert.equal(r.signal, null, `${sig}: mcpreel exits by itself`);
      assert.notEqual(r.code, 0, `${sig}: exits with the server's status (killed by ${sig})`);
      assert.ok(existsSync(file), `${sig}: the cassette is written`);
      assert.deepEqual(readFileSync(file), await exported(['--db', db, 'last']), `${sig}: the export, byte for byte`);
      const lines = cassetteLines(file);
      assert.equal(lines.filter((l) => l.type === 'message').length, 2, `${sig}: the ping and its echo`);
      assert.ok(lines.some((l) => l.type === 'event' && l.kind === 'note' && /^mcpreel got .*: passed on to the server$/.test(l.text)),
        `${sig}: the signal is noted`);
      assert.match(lines[0].end_reason, /signal|mcpreel got/, `${sig}: the end says why: ${lines[0].end_reason}`);
    }
  } finally {
    t.cleanup();
  }
});

test('record --cassette: a FILE that cannot be written at the end is an error; the recording is kept and named', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const env = isolatedEnv(t.dir);
    for (const noDb of [false, true]) {
      const dir = join(t.dir, noDb ? 'gone-nodb' : 'gone');
      mkdirSync(dir);
      const file = join(dir, 'c.jsonl');
      const db = join(t.dir, 'kept.db');
      const args = noDb ? ['--no-db', '--cassette', file] : ['--db', db, '--cassette', file];
      // The directory goes away while recording: the end cannot write.
      const r = await recordCat(args, async (child) => {
        rmSync(dir, { recursive: true });
        child.stdin.end();
      }, env);
      const what = noDb ? '--no-db' : '--db';
      assert.equal(r.code, 1, `${what}: exit 1 (cat exited 0); stderr:\n${r.stderr}`);
      assert.match(r.stderr, /the cassette .*c\.jsonl \(session 1\) was not written: cannot create a file beside/);
      const kept = r.stderr.match(/the recording is kept in (\S+) /);
      assert.ok(kept, `${what}: says where the recording is`);
      if (noDb) {
        assert.ok(kept[1].startsWith(join(t.dir, 'tmp')), 'the temporary store is kept, in $TMPDIR');
      } else {
        assert.equal(kept[1], db);
      }
      const back = cassetteLines(await writeExport(kept[1], join(t.dir, `back-${noDb}.jsonl`)));
      assert.equal(back.filter((l) => l.type === 'message').length, 2, `${what}: the session is whole there`);
      assert.equal(existsSync(dir), false);
    }
    for (const d of ['home', 'xdg', 'db']) assert.equal(existsSync(join(t.dir, d)), false, `no default database ($${d})`);
  } finally {
    t.cleanup();
  }
});

/** Export the last session of db to file; returns file. */
async function writeExport(db, file) {
  const r = await runMcpreel(['export', '--db', db, 'last', '-o', file]);
  assert.equal(r.code, 0, r.stderr.toString());
  return file;
}

test('record --cassette: SIGKILL leaves an existing FILE as it was', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const file = join(t.dir, 'c.jsonl');
    writeFileSync(file, 'the old cassette\n');
    const r = await recordCat(['--db', join(t.dir, 'x.db'), '--cassette', file], async (child) => child.kill('SIGKILL'));
    assert.equal(r.signal, 'SIGKILL');
    assert.equal(readFileSync(file, 'utf8'), 'the old cassette\n', 'untouched');
    assert.deepEqual(filesUnder(t.dir).filter((f) => f.startsWith('c.jsonl')), ['c.jsonl'], 'no temporary file beside it');
  } finally {
    t.cleanup();
  }
});

// mcpreel record --listen 127.0.0.1:0 --upstream ORIGIN --cassette FILE,
// two SDK client sessions through it, then SIGTERM.
test('record --cassette over Streamable HTTP: one MCP session is FILE, the next FILE-2; each the export of its session', { skip: needsHttp, timeout: 180000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const db = join(dir, 'rec.db');
    const file = join(dir, 'http.jsonl');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, args: ['--cassette', file] });
    defer(() => proxy.stop());
    const direct = await runSessionWith(streamableHttpTransport(se.url), {});
    const first = await runSessionWith(streamableHttpTransport(`${proxy.url}/mcp`), {});
    assert.deepEqual(first, direct, 'the client sees the same results through mcpreel');
    assert.equal(existsSync(file), false, 'written when the recording stops, not before');
    const second = await runSessionWith(streamableHttpTransport(`${proxy.url}/mcp`), {});
    assert.deepEqual(second, direct);

    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, `exit 0 on SIGTERM; stderr:\n${stopped.stderr}`);
    assert.equal(stopped.killed, false);
    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 2, 'two MCP sessions');
    const file2 = join(dir, 'http-2.jsonl');
    assert.deepEqual(readFileSync(file), await exported(['--db', db, String(sessions[0].id)]), 'FILE: the first session');
    assert.deepEqual(readFileSync(file2), await exported(['--db', db, String(sessions[1].id)]), 'FILE-2: the second');
    for (const f of [file, file2]) {
      assert.equal(statSync(f).mode & 0o777, 0o600);
      const lines = cassetteLines(f);
      assert.equal(lines[0].transport, 'http');
      assert.equal(lines[0].end_reason, 'the client ended the session (DELETE)');
      assert.ok(lines.some((l) => l.type === 'message' && l.method === 'initialize'), `${f}: its initialize`);
    }
    assert.match(stopped.stderr, /cassette .*http\.jsonl: session 1/);
    assert.match(stopped.stderr, /cassette .*http-2\.jsonl: session 2/);
  });
});

test('record --cassette over legacy HTTP+SSE: FILE is the export of the session', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('sse');
    defer(se.stop);
    const db = join(dir, 'rec.db');
    const file = join(dir, 'sse.jsonl');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, args: ['--cassette', file] });
    defer(() => proxy.stop());
    const direct = await runSessionWith(sseTransport(se.url), {});
    const proxied = await runSessionWith(sseTransport(`${proxy.url}/sse`), {});
    assert.deepEqual(proxied, direct, 'the client sees the same results through mcpreel');
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    assert.deepEqual(readFileSync(file), await exported(['--db', db, String(sessions[0].id)]), 'FILE: the export of the session');
    const lines = cassetteLines(file);
    assert.equal(lines[0].transport, 'sse');
    assert.ok(lines.filter((l) => l.type === 'message').length > 30, 'the whole session');
    assert.equal(existsSync(join(dir, 'sse-2.jsonl')), false, 'one session, one file');
  });
});

test('record --cassette --no-db over HTTP: SIGINT and SIGHUP end the run and write the cassette; no session, no file', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const env = isolatedEnv(dir);
    const init = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    for (const sig of ['SIGINT', 'SIGHUP']) {
      const file = join(dir, `${sig}.jsonl`);
      const proxy = await startMcpreelHttp({ upstream: se.origin, args: ['--no-db', '--cassette', file], env });
      defer(() => proxy.stop());
      const r = await request(`${proxy.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: init,
      });
      assert.equal(r.status, 200, r.body.toString());
      const stopped = await proxy.stop({ signal: sig });
      assert.equal(stopped.code, 0, `${sig}: exit 0; stderr:\n${stopped.stderr}`);
      assert.equal(stopped.killed, false, `${sig}: mcpreel stops by itself`);
      const lines = cassetteLines(file);
      const msgs = lines.filter((l) => l.type === 'message');
      assert.deepEqual(msgs.map((m) => [m.direction, m.method]), [['c2s', 'initialize'], ['s2c', 'initialize']], `${sig}: the exchange`);
      assert.match(lines[0].end_reason, /recording stopped/);
      assert.equal(lines.some((l) => l.type === 'http_exchange'), true, `${sig}: the HTTP exchange is in it`);
    }
    for (const d of ['home', 'xdg', 'db']) assert.equal(existsSync(join(dir, d)), false, `no database ($${d})`);
    assert.deepEqual(filesUnder(join(dir, 'tmp')), [], 'the temporary stores are gone');

    // A run with no MCP traffic has nothing to write: said, exit 1.
    const file = join(dir, 'none.jsonl');
    const proxy = await startMcpreelHttp({ upstream: se.origin, args: ['--no-db', '--cassette', file], env });
    defer(() => proxy.stop());
    const stopped = await proxy.stop();
    assert.equal(stopped.code, 1, stopped.stderr);
    assert.match(stopped.stderr, /no MCP message was recorded: the cassette .*none\.jsonl was not written/);
    assert.equal(existsSync(file), false);
  });
});

test('record --cassette -, and a FILE that is the database, are refused before anything runs', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const marker = join(t.dir, 'ran');
    const cmd = ['--', 'sh', '-c', `touch ${marker}`];
    let r = await runMcpreel(['record', '--no-db', '--cassette', '-', ...cmd], { input: Buffer.alloc(0) });
    assert.equal(r.code, 2, r.stderr.toString());
    assert.match(r.stderr.toString(), /--cassette -: a cassette is written to a file, not to standard output .*\.\/-/);
    assert.equal(existsSync(marker), false, 'nothing was run');

    const db = join(t.dir, 'x.db');
    const first = await runMcpreel(['record', '--db', db, '--', 'cat'], { input: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n') });
    assert.equal(first.code, 0, first.stderr.toString());
    const link = join(t.dir, 'link.jsonl');
    symlinkSync(db, link);
    for (const c of [db, link, `${db}-wal`]) {
      r = await runMcpreel(['record', '--db', db, '--cassette', c, ...cmd], { input: Buffer.alloc(0) });
      assert.equal(r.code, 2, `--cassette ${c}: exit 2; ${r.stderr}`);
      assert.match(r.stderr.toString(), /--cassette .* is the database .*x\.db(-wal)?: give another file/);
      assert.equal(existsSync(marker), false, 'nothing was run');
    }
    // A fresh database named twice: refused before it is made.
    const fresh = join(t.dir, 'fresh.db');
    r = await runMcpreel(['record', '--db', fresh, '--cassette', fresh, ...cmd], { input: Buffer.alloc(0) });
    assert.equal(r.code, 2);
    assert.equal(existsSync(fresh), false, 'no database made');
    assert.equal(sql(db, 'SELECT count(*) AS n FROM sessions')[0].n, 1, 'the database is still a database, its session there');
  } finally {
    t.cleanup();
  }
});

test('record --cassette over stdio: a session with no message leaves FILE as it was, and exits non-zero', { timeout: 30000 }, async () => {
  const t = tempDir();
  try {
    const file = join(t.dir, 'c.jsonl');
    writeFileSync(file, 'the good cassette\n');
    const db = join(t.dir, 'x.db');
    // The host sends nothing (cat exits 0), and a server that fails at once.
    for (const [cmd, code] of [[['cat'], 1], [['sh', '-c', 'exit 3'], 3]]) {
      const r = await runMcpreel(['record', '--db', db, '--cassette', file, '--', ...cmd], { input: Buffer.alloc(0) });
      assert.equal(r.code, code, `${cmd.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.toString(), /no MCP message was recorded: the cassette .*c\.jsonl was not written \(a file there is left as it was\)/);
      assert.equal(readFileSync(file, 'utf8'), 'the good cassette\n', `${cmd.join(' ')}: FILE untouched`);
    }
  } finally {
    t.cleanup();
  }
});

test('record --cassette: a FIFO at FILE by the end is refused, not opened (no hang); the recording is kept', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const file = join(t.dir, 'c.jsonl');
    const db = join(t.dir, 'x.db');
    const t0 = Date.now();
    const r = await recordCat(['--db', db, '--cassette', file], async (child) => {
      execFileSync('mkfifo', [file]);
      child.stdin.end();
    });
    assert.ok(Date.now() - t0 < 15000, 'no hang on the FIFO');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the cassette .*c\.jsonl was not written: it is not a regular file/);
    assert.match(r.stderr, /the recording is kept in /);
    assert.equal(statSync(file).isFIFO(), true, 'the FIFO is left as it was');
  } finally {
    t.cleanup();
  }
});

test('record --cassette: messages that could not be recorded: the cassette is written, says so, exit 1', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'x.db');
    const file = join(t.dir, 'c.jsonl');
    const ping = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`;
    let lock;
    const r = await recordCat(['--db', db, '--cassette', file], async (child) => {
      // The first exchange recorded, then the database locked past the 5 s bound.
      for (let i = 0; i < 100 && sql(db, 'SELECT count(*) AS n FROM messages')[0].n < 2; i++) await sleep(50);
      lock = await holdLock(db);
      for (let id = 2; id <= 8; id++) {
        child.stdin.write(ping(id));
        await sleep(1000);
      }
      await lock.release();
      child.stdin.end();
    });
    assert.equal(r.code, 1, `exit 1 although cat exited 0; stderr:\n${r.stderr}`);
    const m = /the cassette .*c\.jsonl is incomplete: (\d+) messages were forwarded but could not be recorded/.exec(r.stderr);
    assert.ok(m, r.stderr);
    const lines = cassetteLines(file);
    assert.equal(lines[0].messages_lost, Number(m[1]), 'the header says how many');
    assert.ok(lines[0].messages_lost > 0);
    assert.equal(lines.filter((l) => l.type === 'message').length + lines[0].messages_lost, 16, 'recorded + lost = all');
  } finally {
    t.cleanup();
  }
});

/** Hold the database's write lock from another process until release(). */
async function holdLock(db) {
  const sh = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
  sh.stdin.write('BEGIN IMMEDIATE;\nSELECT \'held\';\n');
  await new Promise((resolve, reject) => {
    sh.stdout.once('data', resolve);
    sh.once('error', reject);
  });
  return {
    release: async () => {
      sh.stdin.end('COMMIT;\n');
      await new Promise((resolve) => sh.on('close', resolve));
    },
  };
}

function sleep(ms) {
  return new Promise((res) => setTimeout(res, ms));
}

/** Send sig to child now and every 5 ms until it exits (at most ms). */
async function signalUntilExit(child, sig, ms) {
  const t0 = Date.now();
  while (child.exitCode === null && child.signalCode === null && Date.now() - t0 < ms) {
    child.kill(sig);
    await sleep(5);
  }
}

test('record --cassette --no-db: signals again and again while it stops do not kill it; the cassette is written', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const env = isolatedEnv(t.dir);
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
      const file = join(t.dir, `${sig}.jsonl`);
      const r = await recordCat(['--no-db', '--cassette', file], async (child) => {
        if (sig === 'SIGHUP') child.stdin.end();	/* SIGHUP is passed on: the host ends it */
        await signalUntilExit(child, sig, 5000);
      }, env);
      assert.equal(r.signal, null, `${sig}: mcpreel exits by itself; stderr:\n${r.stderr}`);
      assert.equal(cassetteLines(file).filter((l) => l.type === 'message').length, 2, `${sig}: the ping and its echo`);
      assert.deepEqual(filesUnder(join(t.dir, 'tmp')), [], `${sig}: the temporary store is gone`);
    }
  } finally {
    t.cleanup();
  }
});

test('record --cassette over HTTP: signals again and again while it stops do not kill it', { skip: needsHttp, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const init = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    for (let i = 0; i < 3; i++) {
      const file = join(dir, `${i}.jsonl`);
      const proxy = await startMcpreelHttp({ upstream: se.origin, db: join(dir, 'x.db'), args: ['--cassette', file] });
      defer(() => proxy.stop());
      const r = await request(`${proxy.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: init,
      });
      assert.equal(r.status, 200);
      await signalUntilExit(proxy.child, 'SIGTERM', 5000);
      const stopped = await proxy.stop();
      assert.equal(stopped.signal, null, `round ${i}: not killed by a later SIGTERM; stderr:\n${stopped.stderr}`);
      assert.equal(stopped.code, 0);
      assert.equal(cassetteLines(file).filter((l) => l.type === 'message').length, 2);
    }
  });
});

test('record --listen started with SIGHUP ignored (nohup) keeps ignoring it; SIGTERM still stops it', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'x.db');
    const p = await spawnUntilLine('sh', ['-c', 'trap "" HUP; exec "$0" "$@"', MCPREEL, 'record', '--db', db,
      '--listen', '127.0.0.1:0', '--upstream', 'http://127.0.0.1:9/'], {
      pattern: /^mcpreel: listening on /,
      name: 'mcpreel record under trap "" HUP',
    });
    p.child.kill('SIGHUP');
    await sleep(1000);
    assert.equal(p.child.exitCode, null, `still running after SIGHUP; stderr:\n${p.stderr()}`);
    assert.equal(p.child.signalCode, null);
    const stopped = await stopChild(p.child, p.exited);
    assert.equal(stopped.code, 0, p.stderr());
    assert.equal(stopped.killed, false);
    assert.match(p.stderr(), /recording stopped \(Terminated\)/);
    assert.doesNotMatch(p.stderr(), /Hangup/);
  });
});

test('record --cassette over HTTP: a FIFO at FILE-2 is refused (no hang), FILE is written; a file replaced is named', { skip: needsHttp, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const file = join(dir, 'r.jsonl');
    writeFileSync(file, 'an older run\n');
    const proxy = await startMcpreelHttp({ upstream: se.origin, db: join(dir, 'x.db'), args: ['--cassette', file] });
    defer(() => proxy.stop());
    const init = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    for (let i = 0; i < 2; i++) {
      const r = await request(`${proxy.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: init,
      });
      assert.equal(r.status, 200);
    }
    execFileSync('mkfifo', [join(dir, 'r-2.jsonl')]);
    const t0 = Date.now();
    const stopped = await proxy.stop();
    assert.ok(Date.now() - t0 < 8000, 'no hang on the FIFO');
    assert.equal(stopped.killed, false);
    assert.equal(stopped.code, 1, stopped.stderr);
    assert.match(stopped.stderr, /cassette .*r\.jsonl: replacing the file there/);
    assert.match(stopped.stderr, /the cassette .*r-2\.jsonl was not written: it is not a regular file/);
    assert.equal(cassetteLines(file).filter((l) => l.type === 'message').length, 2, 'FILE, the first session, is written');
    assert.equal(statSync(join(dir, 'r-2.jsonl')).isFIFO(), true);
  });
});
