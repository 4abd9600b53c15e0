// Cassettes: a session as a file.  The SDK client's session recorded
// against server-everything, exported, committed to a git repository,
// then served by `mcpreel mock FILE` with no database and no server (the
// same transcript), exported again (the same bytes: a clean git diff);
// show, stats, report, check and replay take the file too; bad files
// (a bad line, a newer format version, a line cut short) are refused
// with the line, and leave nothing behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { E2E_DIR, MCPREEL, runMcpreel, sql, tempDir } from './lib/util.mjs';

const RULES = join(E2E_DIR, '..', '..', 'examples', 'everything-rules.json');

/** An environment where no database can be found: HOME, XDG and MCPREEL_DB in empty, temporary files in tmp. */
function isolated(empty, tmp) {
  return {
    ...process.env, HOME: empty, XDG_DATA_HOME: join(empty, 'xdg'), MCPREEL_DB: join(empty, 'mcpreel.db'), TMPDIR: tmp,
  };
}

function git(repo, ...args) {
  return execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' });
}

/** Record the SDK client's session; export it into a fresh git repository, committed. */
async function recordCassette(dir) {
  const db = join(dir, 'rec.db');
  const { command, args } = serverEverythingCommand();
  const ref = await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'fixtures'), { recursive: true });
  const file = join(repo, 'fixtures', 'sdk.jsonl');
  const r = await runMcpreel(['export', '--db', db, 'sdk', '-o', file]);
  assert.equal(r.code, 0, r.stderr.toString());
  git(repo, 'init', '-q');
  git(repo, 'add', 'fixtures/sdk.jsonl');
  git(repo, 'commit', '-q', '-m', 'the SDK session as a cassette');
  return { db, ref, repo, file };
}

test('a cassette in git: mocked with no database and no server gives the same transcript; exported again, the same bytes', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const { db, ref, repo, file } = await recordCassette(t.dir);
    const empty = join(t.dir, 'empty');
    const tmp = join(t.dir, 'tmp');
    mkdirSync(empty);
    mkdirSync(tmp);
    const env = isolated(empty, tmp);

    // No server runs: the file alone.
    const diag = {};
    const mocked = await runSession(MCPREEL, ['mock', file], { stderr: 'pipe', env, diagnostics: diag });
    assert.deepEqual(mocked, ref, 'the same transcript as the recorded run');
    assert.ok(diag.messagesReceived.some((m) => m.method === 'notifications/progress'), 'progress is played');
    assert.deepEqual(readdirSync(empty), [], 'no database was created');
    assert.deepEqual(readdirSync(tmp), [], 'the temporary store is gone');

    // Exported again (over itself): the same bytes, a clean git diff.
    let r = await runMcpreel(['export', file, '-o', file], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    git(repo, 'diff', '--exit-code');
    const once = readFileSync(file);
    r = await runMcpreel(['export', '--db', db, 'sdk'], { env });
    assert.ok(Buffer.compare(r.stdout, once) === 0, 'the database session exports to the same bytes');
    assert.deepEqual(readdirSync(empty), []);
    assert.deepEqual(readdirSync(tmp), []);

    // The readers: show, stats, report, check.
    r = await runMcpreel(['show', file], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /session \d+ "sdk"/);
    assert.match(r.stdout.toString(), /-> request\s+initialize/);
    const lines = once.toString().trim().split('\n');
    r = await runMcpreel(['show', '--json', file], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    const shown = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((o) => 'seq' in o);
    assert.equal(shown.length, lines.filter((l) => JSON.parse(l).type === 'message').length, 'every message shown');
    r = await runMcpreel(['show', '--follow', file], { env, timeoutMs: 20000 });
    assert.equal(r.code, 0, 'a cassette is whole: --follow shows it and ends');
    assert.match(r.stdout.toString(), /initialize/);

    r = await runMcpreel(['stats', '--json', file], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /"tools\/call"/);
    r = await runMcpreel(['stats', file], { env });
    assert.match(r.stdout.toString(), /sdk\s+stdio/);

    const html = join(t.dir, 'report.html');
    r = await runMcpreel(['report', file, '-o', html], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(readFileSync(html, 'utf8'), /tools\/call/);

    r = await runMcpreel(['check', '--json', file], { env });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /"sdk"/);
    assert.deepEqual(readdirSync(empty), [], 'no reader created a database');
    assert.deepEqual(readdirSync(tmp), [], 'no reader left a temporary store');

    // replay: recorded only with --db.
    const { command, args } = serverEverythingCommand();
    r = await runMcpreel(['replay', file, '--rules', RULES, '--', command, ...args], { env, timeoutMs: 120000 });
    assert.equal(r.code, 0, r.stderr.toString() + r.stdout.toString());
    assert.match(r.stdout.toString(), /replay of session \d+ "sdk".*0 different, 0 missing/);
    assert.doesNotMatch(r.stdout.toString(), /the replay is recorded/);
    assert.deepEqual(readdirSync(empty), [], 'without --db a cassette\'s replay is not recorded');
    const out = join(t.dir, 'replays.db');
    r = await runMcpreel(['replay', '--db', out, file, '--rules', RULES, '--', command, ...args], { env, timeoutMs: 120000 });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /the replay is recorded as session \d+/);
    const s = sql(out, 'SELECT name, origin FROM sessions');
    assert.equal(s.length, 1, 'with --db, only the replay is in that database');
    assert.match(s[0].name, /^replay of \d+$/);
    assert.deepEqual(readdirSync(tmp), []);

    // mock --on-miss forward: the miss is answered live; recorded only with --db.
    const raw = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'never recorded' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-sum', arguments: { a: 2, b: 3 } } },
    ];
    const input = Buffer.from(raw.map((l) => JSON.stringify(l) + '\n').join(''));
    const answers = (r) => new Map(r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l))
      .filter((m) => 'id' in m && !('method' in m)).map((m) => [m.id, m]));
    for (const withDb of [false, true]) {
      const fdb = join(t.dir, 'fallback.db');
      r = await runMcpreel(['mock', ...(withDb ? ['--db', fdb] : []), file, '--on-miss', 'forward', '--', command, ...args],
        { env, input, timeoutMs: 60000 });
      assert.equal(r.code, 0, r.stderr.toString());
      const byId = answers(r);
      assert.equal(byId.get(1).result.content[0].text, 'Echo: never recorded', 'the miss got the live server\'s answer');
      assert.equal(byId.get(2).result.content[0].text, 'The sum of 2 and 3 is 5.', 'a match still comes from the cassette');
      assert.deepEqual(readdirSync(empty), [], 'the default database is never made');
      assert.deepEqual(readdirSync(tmp), []);
      if (withDb) {
        const f = sql(fdb, `SELECT id, name FROM sessions`);
        assert.equal(f.length, 1, 'with --db, the forwarded exchanges are recorded there');
        assert.match(f[0].name, /^mock fallback of \d+$/);
        const m = sql(fdb, `SELECT direction, method FROM messages WHERE session_id = ${f[0].id} AND method = 'tools/call' ORDER BY seq`);
        assert.deepEqual(m, [{ direction: 'c2s', method: 'tools/call' }, { direction: 's2c', method: 'tools/call' }]);
      } else {
        assert.ok(!readdirSync(t.dir).includes('fallback.db'), 'without --db nothing is recorded');
      }
    }
  } finally {
    t.cleanup();
  }
});

test('bad cassettes: a bad line, a newer version, a line cut short: the line is named, nothing is done, nothing left behind', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const { file } = await recordCassette(t.dir);
    const text = readFileSync(file, 'utf8');
    const lines = text.trimEnd().split('\n');
    const empty = join(t.dir, 'empty');
    const tmp = join(t.dir, 'tmp');
    mkdirSync(empty);
    mkdirSync(tmp);
    const env = isolated(empty, tmp);

    const header = JSON.parse(lines[0]);
    const cases = [
      {
        what: 'a bad line',
        bytes: [...lines.slice(0, 5), '{"type":"message","seq":5,', ...lines.slice(6)].join('\n') + '\n',
        error: /bad\.jsonl line 6: not a JSON object/,
      },
      {
        what: 'a newer format version',
        bytes: [JSON.stringify({ ...header, version: 99 }), ...lines.slice(1)].join('\n') + '\n',
        error: /bad\.jsonl line 1: format version 99: this mcpreel reads versions 1 to \d/,
      },
      {
        what: 'a line cut short',
        bytes: text.slice(0, text.length - Math.floor(lines.at(-1).length / 2) - 1),
        error: new RegExp(`bad\\.jsonl line ${lines.length}: the file ends in the middle of line ${lines.length}`),
      },
    ];
    const bad = join(t.dir, 'bad.jsonl');
    for (const c of cases) {
      writeFileSync(bad, c.bytes);
      for (const args of [['mock', bad], ['show', bad], ['stats', bad], ['check', bad], ['export', bad], ['report', bad, '-o', join(t.dir, 'r.html')],
        ['replay', bad, '--', 'false']]) {
        const r = await runMcpreel(args, { env, input: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n') });
        const err = r.stderr.toString();
        assert.equal(r.code, 2, `${c.what}, ${args[0]}: exit status 2 (${err})`);
        assert.match(err, c.error, `${c.what}, ${args[0]}: the error names the line`);
        assert.equal(err.trim().split('\n').length, 1, `${c.what}, ${args[0]}: one error: ${err}`);
        assert.equal(r.stdout.length, 0, `${c.what}, ${args[0]}: nothing half-read`);
        assert.deepEqual(readdirSync(tmp), [], `${c.what}, ${args[0]}: no temporary file left`);
        assert.deepEqual(readdirSync(empty), [], `${c.what}, ${args[0]}: no database made`);
      }
    }

    // A missing file is said to be missing, not looked for in a database.
    const r = await runMcpreel(['mock', join(t.dir, 'nope.jsonl')], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /cannot open the cassette .*nope\.jsonl: No such file/);
    assert.deepEqual(readdirSync(empty), []);
  } finally {
    t.cleanup();
  }
});

test('a cassette whose lines are not in time order: mocked, the same transcript (read again in the store\'s order)', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const { ref, file } = await recordCassette(t.dir);
    const empty = join(t.dir, 'empty');
    const tmp = join(t.dir, 'tmp');
    mkdirSync(empty);
    mkdirSync(tmp);
    const env = isolated(empty, tmp);
    // The header stays first; the messages come last first.
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const head = lines.filter((l) => !('seq' in JSON.parse(l)));
    const msgs = lines.filter((l) => 'seq' in JSON.parse(l)).reverse();
    assert.ok(msgs.length > 4, 'a session of several messages');
    const shuffled = join(t.dir, 'reversed.jsonl');
    writeFileSync(shuffled, [...head, ...msgs].join('\n') + '\n');

    const mocked = await runSession(MCPREEL, ['mock', shuffled], { stderr: 'pipe', env });
    assert.deepEqual(mocked, ref, 'the same transcript as the recorded run');
    assert.deepEqual(readdirSync(tmp), [], 'no scratch store left behind');
  } finally {
    t.cleanup();
  }
});
