// What `mcpreel check` finds, in the other views: show's mark column,
// show --findings and show --json's "findings"; stats' counts; and
// record --check printing errors as they happen (over stdio and --listen).
// Sessions with findings come from peers/checkpeer.mjs (one broken rule
// per mode) driven by the SDK client; clean ones from the SDK client and
// server-everything.  (The HTML report's findings: report.test.mjs.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { driveCheckpeer } from './lib/checkpeer.mjs';
import { runSession, runSessionWith, serverEverythingCommand, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { MCPREEL, runMcpreel, tempDir } from './lib/util.mjs';

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

test('record --check: a message too big to check live is forwarded and recorded whole, and said at the end', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    // 5 MiB, over the 4 MiB the live checker takes; cat sends it back.
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(5 * 1024 * 1024) } } }) + '\n';
    const r = await runMcpreel(['record', '--db', db, '--name', 'big', '--check', '--', 'cat'], { input: Buffer.from(big), timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), big, 'forwarded unchanged');
    assert.match(r.stderr.toString(), /^mcpreel: check: 2 messages were not checked as they came \(the checker fell behind, or one was over 4 MiB or cut by --max-record-size\); they are recorded: 'mcpreel check' reads the whole session$/m);
    const s = await run(['stats', '--db', db, '--json', 'big']);
    assert.equal(JSON.parse(s.stdout).sessions[0].messages, 2, 'both recorded');
  } finally {
    t.cleanup();
  }
});

/*
 * Peak RSS of `mcpreel record --check -- cat` fed 40 requests of 3 MiB
 * each, faster than the checker parses them (the queue fills).
 */
async function floodPeak(bin, db) {
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
  const text = 'x'.repeat(3 * 1024 * 1024);
  let sent = 0;
  for (let i = 1; i <= 40; i++) {
    const line = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text } } }) + '\n';
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
    const r = await floodPeak(plain || MCPREEL, join(t.dir, 'rec.db'));
    console.log(`record --check, 40 x 3 MiB each way: peak RSS ${(r.peak / MB).toFixed(1)} MiB (${plain ? 'plain' : 'ASan'} build)`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.out, r.sent, 'every byte forwarded');
    assert.match(r.stderr, /^mcpreel: check: \d+ messages were not checked as they came/m);
    // Without --check this is ~30 MiB on the plain build; the checker adds
    // its queue (16 MiB) and one message being parsed: 100 MiB is far
    // below the 240 MiB that went through.  ASan roughly triples it.
    assert.ok(r.peak < (plain ? 100 : 600) * MB, `peak RSS ${(r.peak / MB).toFixed(1)} MiB`);
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
        assert.match(lines[0], /^mcpreel: check: seq \d+ c2s tools\/call: warning tool\.unknown: tool "no-such-tool"/);
        assert.match(lines[1], /^mcpreel: check: seq \d+ s2c tools\/call: warning tool\.unknown-as-result: tool "no-such-tool"/);
        for (const l of lines.slice(2))
          assert.match(l, /^mcpreel: check: seq \d+ c2s tools\/call: warning tool\.arguments: .*"get-sum"/);
      }
    }
  } finally {
    await se.stop();
    t.cleanup();
  }
});
