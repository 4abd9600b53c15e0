// What `mcpreel check` finds, in the other views: show's mark column,
// show --findings and show --json's "findings"; stats' counts; and
// record --check printing errors as they happen (over stdio and --listen).
// Sessions with findings come from peers/checkpeer.mjs (one broken rule
// per mode) driven by the SDK client; clean ones from the SDK client and
// server-everything.  (The HTML report's findings: report.test.mjs.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { driveCheckpeer } from './lib/checkpeer.mjs';
import { runSession, runSessionWith, serverEverythingCommand, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, request, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, tempDir } from './lib/util.mjs';

async function run(args) {
  const r = await runMcpreel(args, { timeoutMs: 60000 });
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** check --json's findings of a session: the oracle for the views. */
async function findingsOf(db, name) {
  const r = await run(['check', '--db', db, '--json', name]);
  assert.notEqual(r.code, 2, r.stderr);
  return JSON.parse(r.stdout).findings;
}

/*
 * The timeline's message lines as {seq, mark}: the mark is the character
 * between the latency column and the preview (a space when none).
 */
const LINE = /^ *(\d+) +[+-]\d+\.\d{6}  (?:->|<-) .{12} .{30} .{6} .{8} (.) /;
function marksOf(text) {
  const out = new Map();
  for (const l of text.split('\n')) {
    const m = LINE.exec(l);
    if (m) out.set(Number(m[1]), m[2]);
  }
  return out;
}

// mode, the rule it breaks, that rule's severity and mark.
const CASES = [
  ['answer-twice', 'jsonrpc.answered-twice', 'error', 'E'],
  ['progress-late', 'progress.after-response', 'warning', 'W'],
];

test('show marks the messages with findings, --findings lists them with their lines, --json carries them; stats counts them', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    await driveCheckpeer(db, 'ok');
    for (const [mode] of CASES) await driveCheckpeer(db, mode);

    // A clean session: no mark anywhere, --findings shows none.
    const ok = await run(['show', '--db', db, 'ok']);
    assert.equal(ok.code, 0, ok.stderr);
    const okMarks = marksOf(ok.stdout);
    assert.ok(okMarks.size >= 6, `the timeline's lines are read (${okMarks.size})\n${ok.stdout}`);
    assert.deepEqual([...new Set(okMarks.values())], [' '], 'no marks in a clean session');
    const okF = await run(['show', '--db', db, '--findings', 'ok']);
    assert.equal(marksOf(okF.stdout).size, 0, 'no message listed');
    assert.match(okF.stdout, /^findings: 0 errors, 0 warnings, 0 notes$/m);
    const okStats = await run(['stats', '--db', db, 'ok']);
    assert.match(okStats.stdout, /^findings: 0 errors, 0 warnings, 0 notes$/m);

    for (const [mode, rule, sev, mark] of CASES) {
      const found = await findingsOf(db, mode);
      assert.deepEqual(found.map((f) => f.rule), [rule], `${mode}: ${JSON.stringify(found)}`);
      const seq = found[0].seq;

      const text = await run(['show', '--db', db, mode]);
      assert.equal(text.code, 0, text.stderr);
      const marks = marksOf(text.stdout);
      assert.equal(marks.get(seq), mark, `${mode}: seq ${seq} marked ${mark}\n${text.stdout}`);
      for (const [s, m] of marks) if (s !== seq) assert.equal(m, ' ', `${mode}: seq ${s} unmarked`);

      const only = await run(['show', '--db', db, '--findings', mode]);
      assert.equal(only.code, 0, only.stderr);
      assert.deepEqual([...marksOf(only.stdout).keys()], [seq], `${mode}: only the message with findings\n${only.stdout}`);
      const lines = only.stdout.split('\n');
      const at = lines.findIndex((l) => LINE.test(l));
      assert.equal(lines[at + 1], `  ${sev.padEnd(7)} ${rule.padEnd(28)} ${found[0].message} \u2014 ${found[0].path}  [${found[0].spec}]`,
        `${mode}: its finding follows it, as check prints it`);
      assert.match(only.stdout, new RegExp(`^findings: ${sev === 'error' ? 1 : 0} errors?, ${sev === 'warning' ? 1 : 0} warnings?, 0 notes$`, 'm'));

      const json = await run(['show', '--db', db, '--json', mode]);
      const objs = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
      const withF = objs.filter((o) => o.findings !== undefined);
      assert.deepEqual(withF.map((o) => o.seq), [seq], `${mode}: findings on that message only`);
      assert.equal(withF[0].findings[0].rule, rule);
      assert.equal(withF[0].findings[0].severity, sev);
      assert.equal(withF[0].findings[0].message, found[0].message);

      const stats = await run(['stats', '--db', db, mode]);
      assert.equal(stats.code, 0, stats.stderr);
      assert.match(stats.stdout, new RegExp(`^findings: ${sev === 'error' ? 1 : 0} errors?, ${sev === 'warning' ? 1 : 0} warnings?, 0 notes \\('mcpreel check' lists them\\)$`, 'm'));
      const sj = JSON.parse((await run(['stats', '--db', db, '--json', mode])).stdout);
      assert.deepEqual(sj.findings, { error: sev === 'error' ? 1 : 0, warning: sev === 'warning' ? 1 : 0, note: 0 });
    }

    // stats --all counts every session's.
    const all = JSON.parse((await run(['stats', '--db', db, '--json', '--all'])).stdout);
    assert.deepEqual(all.findings, { error: 1, warning: 1, note: 0 });

    // --findings is for a recorded session, in the timeline or --json.
    const bad = await run(['show', '--db', db, '--findings', '--follow', 'ok']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--findings .*not with --follow/);
  } finally {
    t.cleanup();
  }
});

/** The "check:" lines of mcpreel's stderr. */
function checkLines(stderr) {
  return stderr.split('\n').filter((l) => l.startsWith('mcpreel: check:'));
}

test('record --check prints each error as it happens, warnings only with -v, and nothing for a clean session', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    for (const mode of ['answer-twice', 'unknown-id']) {
      const stderr = await driveCheckpeer(db, mode, ['--check']);
      const found = await findingsOf(db, mode);
      assert.equal(found.length, 1);
      const f = found[0];
      assert.deepEqual(checkLines(stderr), [`mcpreel: check: seq ${f.seq} ${f.direction}${f.method ? ' ' + f.method : ''}: error ${f.rule}: ${f.message}`],
        `${mode}: one line, the finding check gives afterwards\n${stderr}`);
    }
    // A warning: not without -v, and then as its line.
    const quiet = await driveCheckpeer(db, 'progress-late', ['--check']);
    assert.deepEqual(checkLines(quiet), [], quiet);
    const loud = await driveCheckpeer(db, 'progress-late', ['--check', '-v']);
    assert.equal(checkLines(loud).filter((l) => / warning progress\.after-response: /.test(l)).length, 1, loud);
    assert.equal(checkLines(loud).filter((l) => / error /.test(l)).length, 0, loud);
    // Recording is the same with --check: as many messages.
    const ok = await driveCheckpeer(db, 'ok', ['--check']);
    assert.deepEqual(checkLines(ok), [], ok);

    // A real session (the SDK client, server-everything): no error; with
    // -v its one warning (it calls a tool tools/list did not name).
    const { command, args } = serverEverythingCommand();
    const diag = {};
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--check', '--', command, ...args], { stderr: 'pipe', diagnostics: diag });
    assert.deepEqual(checkLines(diag.stderr), [], diag.stderr.slice(-4000));
    const diagV = {};
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk-v', '--check', '-v', '--', command, ...args], { stderr: 'pipe', diagnostics: diagV });
    const v = checkLines(diagV.stderr).filter((l) => / (error|warning) /.test(l));
    // Its four warnings: the call of a tool tools/list did not name, the
    // isError answer to it (unknown tools are protocol errors), and the
    // two ways get-sum's arguments {a: "two"} miss its inputSchema.
    assert.equal(v.length, 4, v.join('\n'));
    assert.match(v[0], /^mcpreel: check: seq \d+ c2s tools\/call: warning tool\.unknown: tool "no-such-tool" is not in the last tools\/list$/);
    assert.match(v[1], /^mcpreel: check: seq \d+ s2c tools\/call: warning tool\.unknown-as-result: tool "no-such-tool" is unknown/);
    for (const l of v.slice(2))
      assert.match(l, /^mcpreel: check: seq \d+ c2s tools\/call: warning tool\.arguments: the arguments are not as tool "get-sum"'s inputSchema requires: /);
  } finally {
    t.cleanup();
  }
});

/*
 * A stdio server for what a real one would not do: it answers initialize,
 * and the request with id 1 twice.  Node, so that a line of megabytes is
 * read whole.
 */
const TWICE = `let buf = '';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
process.stdin.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.method === 'initialize')
      out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'twice', version: '1.0.0' } } });
    else if (m.id === 1)
      for (let k = 0; k < 2; k++) out({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } });
  }
});
process.stdin.on('end', () => process.exit(0));`;

test('record --check: a message too big to parse live is checked by its identity, and the session after it still is', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    // No notifications/initialized: it would come before the answer to
    // initialize (the input is written at once).
    const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } } }) + '\n';
    const bigs = [
      // 5 MiB: over the 4 MiB the live checker copies.
      ['long', { name: 'echo', arguments: { text: 'x'.repeat(5 * 1024 * 1024) } }],
      // 200 000 values in 300 KiB: over the values the live checker parses.
      ['values', { name: 'echo', arguments: { list: new Array(100000).fill({}) } }],
    ];
    for (const [name, params] of bigs) {
      const input = init + JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) + '\n';
      // stdin stays open until the three answers are out: a loaded
      // machine must not make the server miss its exit grace.
      const r = await runMcpreel(['record', '--db', db, '--name', name, '--check', '--', process.execPath, '-e', TWICE], {
        input: Buffer.from(input), timeoutMs: 60000, keepStdinOpen: true,
        onSpawn: (child) => {
          let lines = 0;
          child.stdout.on('data', (c) => {
            for (const b of c) if (b === 0x0a && ++lines === 3) child.stdin.end();
          });
        },
      });
      const stderr = r.stderr.toString();
      assert.equal(r.code, 0, stderr);
      // The big request was tracked by its id: the first answer pairs
      // with it, the second is the one error, as check finds it.
      const found = (await findingsOf(db, name)).filter((f) => f.severity === 'error');
      assert.equal(found.length, 1, JSON.stringify(found));
      const f = found[0];
      assert.equal(f.rule, 'jsonrpc.answered-twice');
      assert.deepEqual(checkLines(stderr), [`mcpreel: check: seq ${f.seq} ${f.direction}${f.method ? ' ' + f.method : ''}: error ${f.rule}: ${f.message}`], `${name}\n${stderr}`);
      const s = await run(['stats', '--db', db, '--json', name]);
      assert.equal(JSON.parse(s.stdout).sessions[0].messages, 5, 'all recorded');
    }
  } finally {
    t.cleanup();
  }
});

/*
 * Peak RSS of `mcpreel record --check -- cat` fed n tools/call requests
 * with these arguments, written as fast as it reads them; what came back
 * on stdout and what went in, for the "every byte forwarded" check.
 */
async function recordCheckPeak(bin, db, n, args) {
  const child = spawn(bin, ['record', '--db', db, '--check', '--', 'cat'], {
    stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
  });
  let peak = 0, out = 0, stderr = '';
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch { /* gone */ }
  }, 10);
  child.stdin.on('error', () => {});
  child.stdout.on('data', (c) => { out += c.length; });
  child.stderr.on('data', (c) => { stderr += c; });
  let sent = 0;
  for (let i = 1; i <= n; i++) {
    const line = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: args } }) + '\n';
    sent += line.length;
    if (!child.stdin.write(line)) await new Promise((r) => child.stdin.once('drain', r));
  }
  child.stdin.end();
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(timer);
  return { code, peak, out, sent, stderr };
}

test('record --check under a flood of large messages: forwarding whole, the checker\'s queue bounded, what it skipped said', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const plain = process.env.MCPREEL_VALGRIND;
    const MB = 1024 * 1024;
    // 40 requests of 3 MiB, faster than the checker may parse them.
    const r = await recordCheckPeak(plain || MCPREEL, join(t.dir, 'rec.db'), 40, { text: 'x'.repeat(3 * MB) });
    const behind = /^mcpreel: check: \d+ messages were not checked as they came/m.test(r.stderr);
    console.log(`record --check, 40 x 3 MiB each way: peak RSS ${(r.peak / MB).toFixed(1)} MiB (${plain ? 'plain' : 'ASan'} build); the checker ${behind ? 'fell behind (the line said so)' : 'kept up'}`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.out, r.sent, 'every byte forwarded');
    // Whether the checker falls behind depends on the machine; when it
    // does, the session it gave up on is named at that moment.
    if (behind) assert.match(r.stderr, /^mcpreel: check: .*not checked as it comes from seq \d+ on/m);
    // Without --check this is ~30 MiB on the plain build; the checker adds
    // its queue (16 MiB) and one message being parsed: 100 MiB is far
    // below the 240 MiB that went through.  ASan roughly triples it.
    assert.ok(r.peak < (plain ? 100 : 600) * MB, `peak RSS ${(r.peak / MB).toFixed(1)} MiB`);
  } finally {
    t.cleanup();
  }
});

test('record --check: messages of many small values cost the checker a bounded parse, not 80 times their size', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const plain = process.env.MCPREEL_VALGRIND;
    const MB = 1024 * 1024;
    // 20 requests of 250 000 values (375 KiB of empty objects, a parsed
    // value ~80 bytes): what the live checker parses is bounded by values.
    const r = await recordCheckPeak(plain || MCPREEL, join(t.dir, 'rec.db'), 20, { list: new Array(125000).fill({}) });
    console.log(`record --check, 20 x 250 000 values each way: peak RSS ${(r.peak / MB).toFixed(1)} MiB (${plain ? 'plain' : 'ASan'} build)`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.out, r.sent, 'every byte forwarded');
    // ~15 MiB without --check on the plain build; parsing each whole
    // (as before the live values bound) took ~52 MiB.  ASan doubles it.
    assert.ok(r.peak < (plain ? 35 : 150) * MB, `peak RSS ${(r.peak / MB).toFixed(1)} MiB`);
  } finally {
    t.cleanup();
  }
});

test('record --listen --check: a real Streamable HTTP session prints no error, and with -v its warnings', { timeout: 180000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  const se = await startServerEverything('streamableHttp');
  try {
    const db = join(t.dir, 'rec.db');
    for (const verbose of [false, true]) {
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'http', args: verbose ? ['--check', '-v'] : ['--check'] });
      const url = `${proxy.url}${new URL(se.url).pathname}`;
      let stopped;
      try {
        await runSessionWith(streamableHttpTransport(url), {});
      } finally {
        stopped = await proxy.stop();
      }
      const lines = checkLines(stopped.stderr).filter((l) => / (error|warning) /.test(l));
      if (!verbose) {
        assert.deepEqual(lines, [], stopped.stderr.slice(-4000));
      } else {
        assert.equal(lines.length, 4, lines.join('\n'));
        assert.match(lines[0], /^mcpreel: check: session \d+ seq \d+ c2s tools\/call: warning tool\.unknown: tool "no-such-tool"/);
        assert.match(lines[1], /^mcpreel: check: session \d+ seq \d+ s2c tools\/call: warning tool\.unknown-as-result: tool "no-such-tool"/);
        for (const l of lines.slice(2))
          assert.match(l, /^mcpreel: check: session \d+ seq \d+ c2s tools\/call: warning tool\.arguments: .*"get-sum"/);
      }
    }
  } finally {
    await se.stop();
    t.cleanup();
  }
});

/*
 * Our Streamable HTTP server in mode 'sessions' (a new id per initialize,
 * tools/list answered without "tools") behind record --listen --check.
 */
async function withSessionsProxy(db, fn) {
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'checkhttp.mjs'), 'sessions'], {
    stream: 'stdout', pattern: /^checkhttp: listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp$/, name: 'checkhttp sessions',
  });
  let stopped;
  try {
    const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'many', args: ['--check'] });
    try {
      await fn(`${proxy.url}/mcp`);
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      stopped = await proxy.stop();
    }
  } finally {
    await stopChild(peer.child, peer.exited);
  }
  return stopped;
}

/** An SDK client session through url, initialized (never DELETEd). */
async function sdkSession(url) {
  const client = new Client({ name: 'check-views-e2e', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => {};
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

test('record --listen --check: a session ended and then named again is not re-checked from seq 1', { timeout: 180000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const stopped = await withSessionsProxy(db, async (url) => {
      // Session A, ended by a DELETE; then B; then one more POST in A.
      const a = await sdkSession(url);
      const aid = a.transport.sessionId;
      await a.transport.terminateSession();
      await a.client.close();
      const b = await sdkSession(url);
      const r = await request(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': aid, 'MCP-Protocol-Version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
      });
      assert.equal(r.status, 200);
      await b.client.close();
    });
    const lines = checkLines(stopped.stderr);
    // Nothing of A's late ping is judged as a first message of a session.
    assert.deepEqual(lines.filter((l) => / seq 1 | lifecycle\.before-initialize/.test(l)), [], stopped.stderr.slice(-4000));
    assert.deepEqual(lines.filter((l) => / error /.test(l)), [], stopped.stderr.slice(-4000));
    // Not checked live (the ping and its answer), but said: check reads them.
    assert.deepEqual(lines.filter((l) => /after their session's end/.test(l)),
      ["mcpreel: check: 2 messages came after their session's end, not checked as they came; they are recorded: 'mcpreel check' reads them"], stopped.stderr.slice(-4000));
  } finally {
    t.cleanup();
  }
});

test('record --listen --check: past 256 sessions never ended, the least active one goes unchecked (said), and new ones are still checked, each line naming its session', { timeout: 600000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  const N = 260;
  try {
    const db = join(t.dir, 'rec.db');
    const stopped = await withSessionsProxy(db, async (url) => {
      const all = [];
      for (let i = 0; i < N; i++) all.push(await sdkSession(url));
      // The last one lists tools: its answer lacks "tools".
      await all[N - 1].client.listTools().catch(() => {});
      for (const s of all) await s.client.close().catch(() => {});
    });
    const lines = checkLines(stopped.stderr);
    const evicted = lines.filter((l) => /not checked as it comes from seq \d+ on: 256 sessions are checked at once/.test(l));
    assert.equal(evicted.length, N - 256, lines.join('\n'));
    // The least active is the first session: its 3 messages (initialize,
    // its answer, initialized) were checked, the next would not be.
    assert.match(evicted[0], /^mcpreel: check: session 1 not checked as it comes from seq 4 on/);
    for (const l of evicted) assert.match(l, /^mcpreel: check: session \d+ not checked/);
    // The error of the last session, live, as check finds it afterwards.
    const found = (await findingsOf(db, 'last')).filter((f) => f.severity === 'error');
    assert.equal(found.length, 1, JSON.stringify(found));
    const f = found[0];
    const want = `mcpreel: check: session ${f.session} seq ${f.seq} ${f.direction} ${f.method}: error ${f.rule}: ${f.message}`;
    assert.deepEqual(lines.filter((l) => / error /.test(l)), [want], stopped.stderr.slice(-4000));
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

test('record --listen --check: a writer held back (the database locked by another process) still names the session of each line', { timeout: 240000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const stopped = await withSessionsProxy(db, async (url) => {
      // While the lock is held no session has its row: a whole session,
      // and its error, go by before the writer can give it its number.
      const lock = await holdLock(db);
      try {
        const s = await sdkSession(url);
        await s.client.listTools().catch(() => {});
        await s.client.close().catch(() => {});
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        await lock.release();
      }
    });
    const found = (await findingsOf(db, 'last')).filter((f) => f.severity === 'error');
    assert.equal(found.length, 1, JSON.stringify(found));
    const f = found[0];
    const want = `mcpreel: check: session ${f.session} seq ${f.seq} ${f.direction} ${f.method}: error ${f.rule}: ${f.message}`;
    assert.deepEqual(checkLines(stopped.stderr).filter((l) => / error /.test(l)), [want], stopped.stderr.slice(-4000));
  } finally {
    t.cleanup();
  }
});

test('record --check: a message cut by --max-record-size before its method or id is checked as check does, and the session goes on being checked', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const y = 'y'.repeat(20000);
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: y },		// cut before its method ends
      { jsonrpc: '2.0', id: y, method: 'ping' },	// cut before its id ends
      { jsonrpc: '1.0', id: 9, method: 'ping' },	// the error after them
    ].map((m) => JSON.stringify(m) + '\n').join('');
    const r = await runMcpreel(['record', '--db', db, '--name', 'cut', '--check', '--max-record-size', '1K', '--', 'sh', '-c', 'cat >/dev/null'], { input: Buffer.from(input), timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const stderr = r.stderr.toString();
    const found = (await findingsOf(db, 'cut')).filter((f) => f.severity === 'error');
    assert.ok(found.some((f) => f.rule === 'jsonrpc.version'), JSON.stringify(found));
    const want = found.map((f) => `mcpreel: check: seq ${f.seq} ${f.direction}${f.method ? ' ' + f.method : ''}: error ${f.rule}: ${f.message}`);
    assert.deepEqual(checkLines(stderr).filter((l) => / error /.test(l)), want, stderr);
    assert.deepEqual(checkLines(stderr).filter((l) => /not checked/.test(l)), [], stderr);
  } finally {
    t.cleanup();
  }
});

test('show --json and show --findings --json end with the findings about the session as a whole and the counts', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    // 102 pings never answered: past the 100 listed one by one, one
    // finding about the session (seq 0) says the rest.
    let input = '';
    for (let i = 1; i <= 102; i++) input += JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping' }) + '\n';
    const r = await runMcpreel(['record', '--db', db, '--name', 'mute', '--', 'sh', '-c', 'cat >/dev/null'], { input: Buffer.from(input), timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const c = JSON.parse((await run(['check', '--db', db, '--json', 'mute'])).stdout);
    const whole = c.findings.filter((f) => f.seq === null);
    assert.ok(whole.length >= 1, JSON.stringify(c.findings.slice(-3)));
    for (const args of [['--json'], ['--findings', '--json']]) {
      const s = await run(['show', '--db', db, ...args, 'mute']);
      assert.equal(s.code, 0, s.stderr);
      const objs = s.stdout.trim().split('\n').map((l) => JSON.parse(l));
      const last = objs[objs.length - 1];
      assert.equal(last.seq, undefined, `${args}: the last line is the session's`);
      assert.deepEqual(objs.slice(0, -1).filter((o) => o.seq === undefined), [], `${args}: only the last`);
      assert.equal(last.session, c.sessions[0].id);
      assert.deepEqual(last.findings, whole, `${args}: the seq 0 findings, as check gives them`);
      assert.deepEqual(last.counts, c.counts);
      assert.equal(last.unlisted, c.unlisted);
    }
    // It is no message: a filter keeps it out (here none matches at all).
    for (const filter of [['--method', 'tools/call'], ['--dir', 's2c'], ['--since', '2262-04-11T00:00:00Z'], ['--kind', 'response'], ['--grep', 'nowhere']]) {
      const s = await run(['show', '--db', db, '--json', ...filter, 'mute']);
      assert.equal(s.code, 0, s.stderr);
      assert.equal(s.stdout, '', `${filter}: nothing matches, nothing printed`);
    }
    // Some messages match: they are printed, the session's line is not.
    const some = await run(['show', '--db', db, '--json', '--since', '#100', 'mute']);
    const objs = some.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(objs.map((o) => o.seq), [100, 101, 102]);
  } finally {
    t.cleanup();
  }
});

/* Peak RSS (VmHWM) of one mcpreel run, sampled every 10 ms. */
async function runPeak(bin, args) {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
  let peak = 0, stdout = 0, stderr = '';
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) * 1024);
    } catch { /* gone */ }
  }, 10);
  child.stdout.on('data', (c) => { stdout += c.length; });
  child.stderr.on('data', (c) => { stderr += c; });
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(timer);
  return { code, peak, stdout, stderr };
}

test('check, show and report of an HTTP session of 100 000 exchanges hold a few exchanges\' headers at a time, not all', { timeout: 600000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'checkhttp.mjs'), 'ok'], {
      stream: 'stdout', pattern: /^checkhttp: listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp$/, name: 'checkhttp ok',
    });
    try {
      const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'long' });
      try {
        const s = await sdkSession(`${proxy.url}/mcp`);
        await s.client.listTools();
        await s.client.close();
        await new Promise((r) => setTimeout(r, 300));
      } finally {
        await proxy.stop();
      }
    } finally {
      await stopChild(peer.child, peer.exited);
    }
    const before = JSON.parse((await run(['check', '--db', db, '--json', 'long'])).stdout);
    // 100 000 more exchanges (GETs refused with 405, no message), each
    // with ~2 KiB of request headers: a long-polled session.
    const ins = spawnSync('sqlite3', [db, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
      INSERT INTO http_exchanges (session_id, connection, method, path, request_headers, started_ns, mono_ns, status, response_headers, ended_ns, outcome)
      SELECT (SELECT id FROM sessions WHERE name = 'long'), 1, 'GET', '/mcp', '[["Accept","text/event-stream"],["X-Pad","' || hex(randomblob(1000)) || '"]]', 1, 1, 405, '[["Allow","POST, DELETE"]]', 1, 'ok' FROM n`], { encoding: 'utf8' });
    assert.equal(ins.status, 0, ins.stderr);
    const plain = process.env.MCPREEL_VALGRIND;
    const MB = 1024 * 1024;
    for (const args of [['check', '--json'], ['show'], ['report', '-o', join(t.dir, 'r.html')]]) {
      const r = await runPeak(plain || MCPREEL, [args[0], '--db', db, ...args.slice(1), 'long']);
      console.log(`${args[0]} of 100 000 exchanges of ~2 KiB headers: peak RSS ${(r.peak / MB).toFixed(1)} MiB (${plain ? 'plain' : 'ASan'} build)`);
      assert.ok(r.code === 0 || (args[0] === 'check' && r.code === 1), `${args}: ${r.stderr}`);
      // Held all at once they took ~225 MiB (check) to ~420 MiB (show);
      // 8 bytes each and 16 at a time is a few MiB over the run's own.
      // Under ASan its quarantine keeps up to 256 MiB of what was freed.
      assert.ok(r.peak < (plain ? 60 : 600) * MB, `${args}: peak RSS ${(r.peak / MB).toFixed(1)} MiB`);
    }
    // What check finds is what it found before the refused GETs were
    // added, and as it finds without them (GET 405 is allowed).
    const after = JSON.parse((await run(['check', '--db', db, '--json', 'long'])).stdout);
    assert.deepEqual(after.findings, before.findings);
  } finally {
    t.cleanup();
  }
});

test('record --listen --check: the HTTP rules of a request\'s heads run live, as check finds them', { timeout: 180000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'checkhttp.mjs'), 'ok'], {
      stream: 'stdout', pattern: /^checkhttp: listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp$/, name: 'checkhttp ok',
    });
    let stopped;
    try {
      const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name: 'heads', args: ['--check'] });
      try {
        const s = await sdkSession(`${proxy.url}/mcp`);
        // A POST in the session that accepts only JSON, without the
        // negotiated MCP-Protocol-Version: what the SDK would not send.
        const r = await request(`${proxy.url}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Mcp-Session-Id': s.transport.sessionId },
          body: JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'ping' }),
        });
        assert.equal(r.status, 200);
        await s.client.close();
        await new Promise((res) => setTimeout(res, 300));
      } finally {
        stopped = await proxy.stop();
      }
    } finally {
      await stopChild(peer.child, peer.exited);
    }
    const found = (await findingsOf(db, 'heads')).filter((f) => f.severity === 'error');
    assert.ok(found.some((f) => f.rule === 'http.accept'), JSON.stringify(found));
    const want = found.map((f) => `mcpreel: check: session ${f.session} seq ${f.seq} ${f.direction}${f.method ? ' ' + f.method : ''}: error ${f.rule}: ${f.message}`);
    assert.deepEqual(checkLines(stopped.stderr).filter((l) => / error /.test(l)), want, stopped.stderr.slice(-4000));
  } finally {
    t.cleanup();
  }
});
