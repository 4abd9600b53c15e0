// `mcpreel replay` rules with a scope, the JSON-in-text rule for normalize,
// rules that matched nothing, and --before for stateful servers: the SDK
// client's session against server-everything (its answers changed by our
// mutate peer where a difference is needed), and an SDK session against
// server-memory, which keeps its knowledge graph in a file.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const RULES_FILE = join(E2E_DIR, '..', '..', 'examples', 'everything-rules.json');
const MEMORY_FIXTURE = join(E2E_DIR, 'fixtures', 'memory.jsonl');
const MEMORY_SERVER = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');

// Two tools answer differently: get-sum and echo.
const SUM = ['The sum of 2 and 3 is 5.', 'The sum of 2 and 3 is 6.'];
const ECHO = ['Echo: hello', 'Echo: HELLO'];
// get-structured-content's weather, in its JSON text and structuredContent.
const RAIN = ['Light rain / drizzle', 'Heavy rain / drizzle'];

let t;
let db;
let server;

before(async () => {
  t = tempDir();
  db = join(t.dir, 'r.db');
  server = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', server.command, ...server.args], { stderr: 'pipe' });
});

after(() => t?.cleanup());

function mutated(...pairs) {
  return [process.execPath, join(PEERS_DIR, 'mutate.mjs'), ...pairs.flat(), '--', server.command, ...server.args];
}

async function replayJson(name, args, target) {
  const json = join(t.dir, `report-${name}.json`);
  const r = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', RULES_FILE, ...args, '--report', 'json', '-o', json,
    '--no-record', '--', ...target], { timeoutMs: 150000 });
  const rep = JSON.parse(readFileSync(json, 'utf8'));
  return { r, rep, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const toolOf = (rep, seq) => sql(db, `SELECT json_extract(CAST(m.raw AS TEXT), '$.params.name') AS n FROM messages m
  JOIN sessions s ON s.id = m.session_id WHERE s.name = 'sdk' AND m.seq = ${seq}`)[0]?.n;

test('a scoped ignore hides one tool\'s difference and not another tool\'s', { timeout: 300000 }, async () => {
  const target = mutated(SUM, ECHO);

  // No rule: both tools differ.
  let { r, rep } = await replayJson('none', [], target);
  assert.equal(r.code, 1, r.stderr.toString());
  const differing = new Set(rep.differences.map((d) => toolOf(rep, d.seq)));
  assert.deepEqual([...differing].sort(), ['echo', 'get-sum'], JSON.stringify(rep.differences));

  // --ignore PATH --for tool=get-sum: only echo's answer still differs.
  ({ r, rep } = await replayJson('for', ['--ignore', '$.result.content[0].text', '--for', 'tool=get-sum'], target));
  assert.equal(r.code, 1);
  assert.deepEqual(rep.differences.map((d) => [toolOf(rep, d.seq), d.path]), [['echo', '$.result.content[0].text']]);
  assert.equal(rep.differences[0].replayed, 'Echo: HELLO');
  assert.deepEqual(rep.unused_rules, [], 'the scoped rule was used');

  // The same in a rules file, with method and tool.
  const rules = join(t.dir, 'scoped.json');
  writeFileSync(rules, JSON.stringify({ ignore: [{ path: '$.result.content[0].text', method: 'tools/call', tool: 'echo' }] }));
  ({ r, rep } = await replayJson('file', ['--rules', rules], target));
  assert.equal(r.code, 1);
  assert.deepEqual(rep.differences.map((d) => toolOf(rep, d.seq)), ['get-sum']);

  // --ignore-tool echo: echo's answer is not compared at all, get-sum's is.
  ({ r, rep } = await replayJson('tool', ['--ignore-tool', 'echo'], target));
  assert.equal(r.code, 1);
  const ignored = rep.results.filter((x) => x.status === 'ignored');
  assert.ok(ignored.length >= 1 && ignored.length === rep.ignored);
  assert.deepEqual(ignored.map((x) => toolOf(rep, x.seq)), ignored.map(() => 'echo'), 'only echo\'s answers');
  assert.deepEqual(rep.differences.map((d) => toolOf(rep, d.seq)), ['get-sum']);

  // Both scoped away: all the same, exit 0.
  ({ r, rep } = await replayJson('both', ['--ignore', '$.result.content[0].text', '--for', 'tool=get-sum',
    '--ignore-tool', 'ech?'], target));
  assert.equal(r.code, 0, JSON.stringify(rep.differences));

  // A bad scope is refused before anything runs.
  const bad = await runMcpreel(['replay', '--db', db, 'sdk', '--ignore', '$.x', '--for', 'tools=a', '--', 'false']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr.toString(), /--for tools=a: unknown scope 'tools' \(expected method, tool, prompt, resource\)/);
  const lone = await runMcpreel(['replay', '--db', db, 'sdk', '--for', 'tool=a', '--', 'false']);
  assert.equal(lone.code, 2);
  assert.match(lone.stderr.toString(), /--for narrows the --ignore just before it/);
});

test('normalize runs on the values inside JSON text, not on the JSON text; a rule that matched nothing is reported', { timeout: 300000 }, async () => {
  const target = mutated(RAIN);
  const rules = join(t.dir, 'norm.json');
  writeFileSync(rules, JSON.stringify({
    normalize: [
      // The documented form: the decoded value, in the text's JSON and in structuredContent.
      { regex: '^(Light|Heavy) rain', replace: '<RAIN>', tool: 'get-structured-content' },
    ],
  }));
  let { r, rep, stdout } = await replayJson('norm', ['--rules', rules], target);
  assert.equal(r.code, 0, JSON.stringify(rep.differences));
  assert.deepEqual(rep.unused_rules, []);

  // A regex written for the JSON text matches nothing: the difference stays, the rule is reported.
  const raw = join(t.dir, 'raw.json');
  writeFileSync(raw, JSON.stringify({ normalize: [{ regex: '"conditions":"[A-Za-z]+ rain', replace: '<RAIN>' }] }));
  ({ r, rep } = await replayJson('raw', ['--rules', raw], target));
  assert.equal(r.code, 1);
  assert.deepEqual(rep.differences.map((d) => d.path).sort(),
    ['$.result.content[0].text{json}.conditions', '$.result.structuredContent.conditions']);
  assert.equal(rep.unused_rules.length, 1);
  assert.equal(rep.unused_rules[0].kind, 'normalize');
  assert.equal(rep.unused_rules[0].value, '"conditions":"[A-Za-z]+ rain');

  // Unused rules in text and JSON; the exit status is the differences' alone (none here: 0).
  const unused = join(t.dir, 'unused-rules.json');
  writeFileSync(unused, JSON.stringify({
    ignore: [{ path: '$.result.nothing', tool: 'echo' }],
    ignore_prompts: ['no-such-prompt'],
    normalize: [{ regex: '^(Light|Heavy) rain', replace: '<RAIN>' }],
  }));
  const r2 = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', RULES_FILE, '--rules', unused, '--no-record',
    '--', ...target], { timeoutMs: 150000 });
  const text = r2.stdout.toString();
  assert.equal(r2.code, 0, text);
  assert.match(text, /^rule .*unused-rules\.json "ignore"\[0\] \$\.result\.nothing for tool=echo matched nothing$/m);
  assert.match(text, /^rule .*unused-rules\.json "ignore_prompts"\[0\] no-such-prompt matched nothing$/m);
  assert.doesNotMatch(text, /rain.* matched nothing/, 'the used regex is not reported');
  ({ r, rep, stdout } = await replayJson('unused', ['--rules', unused], target));
  assert.equal(r.code, 0, r.stderr.toString());
  assert.deepEqual(rep.unused_rules.map((u) => u.kind).sort(), ['ignore', 'skip']);
  assert.deepEqual(rep.unused_rules.find((u) => u.kind === 'ignore').scope, { tool: 'echo' });
  assert.equal(stdout.includes('matched nothing'), true, 'the summary on stdout says so too');

  // JUnit: a property per unused rule.
  const xml = join(t.dir, 'u.xml');
  const r3 = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', RULES_FILE, '--rules', unused, '--report', 'junit',
    '-o', xml, '--no-record', '--', ...target], { timeoutMs: 150000 });
  assert.equal(r3.code, 0, r3.stderr.toString());
  assert.match(readFileSync(xml, 'utf8'), /<property name="unused_rule" value="[^"]*no-such-prompt"\/>/);
});

test('mock: an ignore scoped to one tool leaves that tool\'s arguments out of matching, not another tool\'s', { timeout: 120000 }, async () => {
  const stderr = [];
  const connect = async (extra) => {
    const client = new Client({ name: 'mcpreel-e2e-mock', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: MCPREEL,
      args: ['mock', '--db', db, 'sdk', '--ignore', '$.params.arguments', ...extra],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c) => stderr.push(c));
    await client.connect(transport);
    return client;
  };
  let client = await connect(['--for', 'tool=echo']);
  try {
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'not what was recorded' } });
    assert.equal(echo.content[0].text, 'Echo: hello', 'echo matched with other arguments');
    await assert.rejects(client.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } }),
      /no recorded tools\/call request matches these params/, 'get-sum\'s arguments still count');
  } finally {
    await client.close();
  }
  // Unscoped, the same ignore lets get-sum match too: the scope is what made the difference.
  client = await connect([]);
  try {
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } });
    assert.equal(sum.content[0].text, 'The sum of 2 and 3 is 5.');
  } finally {
    await client.close();
  }
  await new Promise((res) => setTimeout(res, 1000));
  assert.doesNotMatch(Buffer.concat(stderr).toString(), /Sanitizer/, 'no sanitizer report from mock');
});

// An SDK client session against server-memory through mcpreel record.
async function recordMemory(memDb, memFile) {
  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['record', '--db', memDb, '--name', 'memory', '--', process.execPath, MEMORY_SERVER],
    env: { ...process.env, MEMORY_FILE_PATH: memFile },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcpreel-e2e-memory', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'read_graph', arguments: {} });
  await client.callTool({ name: 'create_entities', arguments: { entities: [
    { name: 'Grace', entityType: 'person', observations: ['wrote a compiler'] }] } });
  await client.callTool({ name: 'create_relations', arguments: { relations: [
    { from: 'Grace', to: 'Ada', relationType: 'admires' }] } });
  await client.callTool({ name: 'add_observations', arguments: { observations: [
    { entityName: 'Ada', contents: ['met Babbage'] }] } });
  await client.callTool({ name: 'read_graph', arguments: {} });
  await client.close();
}

test('--before resets a stateful server: server-memory differs without it, is all the same with it', { timeout: 300000 }, async () => {
  const memDb = join(t.dir, 'mem.db');
  const memFile = join(t.dir, 'memory.jsonl');
  copyFileSync(MEMORY_FIXTURE, memFile);
  await recordMemory(memDb, memFile);
  const env = { MEMORY_FILE_PATH: memFile };
  const args = ['replay', '--db', memDb, 'memory', '--no-record', '--report', 'json'];
  const target = ['--', process.execPath, MEMORY_SERVER];

  let r = await runMcpreel([...args, ...target], { env, timeoutMs: 120000 });
  let rep = JSON.parse(r.stdout.toString());
  console.log(`server-memory replayed without --before: ${rep.different} of ${rep.requests} different`);
  assert.equal(r.code, 1, 'the graph the session left behind changes the answers');
  assert.ok(rep.different >= 3, `different: ${rep.different}`);

  r = await runMcpreel([...args, '--before', `cp ${MEMORY_FIXTURE} ${memFile}`, '--before', 'echo reset done',
    ...target], { env, timeoutMs: 120000 });
  rep = JSON.parse(r.stdout.toString());
  assert.equal(r.code, 0, `${JSON.stringify(rep.differences)} ${r.stderr}`);
  assert.equal(rep.different, 0);
  assert.equal(rep.same, rep.requests);
  assert.match(r.stderr.toString(), /reset done/, '--before\'s output goes to stderr, not to the report');
});

test('--before failing: exit 2 naming the command and its status, nothing replayed', { timeout: 120000 }, async () => {
  const sessions = () => sql(db, 'SELECT count(*) AS n FROM sessions')[0].n;
  const n = sessions();
  const marker = join(t.dir, 'server-started');
  let r = await runMcpreel(['replay', '--db', db, 'sdk', '--before', 'echo restoring; exit 3', '--before', `touch ${marker}`,
    '--', 'sh', '-c', `touch ${marker}; exec cat`]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout.toString(), '', 'no report');
  assert.match(r.stderr.toString(), /restoring/);
  assert.match(r.stderr.toString(), /--before 'echo restoring; exit 3' exited with status 3, so the replay was not started/);
  assert.throws(() => readFileSync(marker), 'neither the next --before nor the server ran');
  assert.equal(sessions(), n, 'no replay session recorded');

  r = await runMcpreel(['replay', '--db', db, 'sdk', '--before', 'kill -TERM $$', '--', 'false']);
  assert.equal(r.code, 2);
  assert.match(r.stderr.toString(), /--before 'kill -TERM \$\$' was killed by signal 15/);
});

// mcpreel started by a parent that ignores SIGCHLD: bash's trap '' CHLD
// survives the exec, as it would from any such parent.
function runIgnoringSigchld(args, timeoutMs = 150000) {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', 'trap "" CHLD; exec "$@"', 'bash', MCPREEL, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`mcpreel ${args.join(' ')} hung; stderr: ${Buffer.concat(err)}`)); }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
}

test('started with SIGCHLD ignored: --before and the server are still waited for', { timeout: 300000 }, async () => {
  const json = join(t.dir, 'report-sigchld.json');
  let r = await runIgnoringSigchld(['replay', '--db', db, 'sdk', '--rules', RULES_FILE, '--before', 'true',
    '--report', 'json', '-o', json, '--no-record', '--', server.command, ...server.args]);
  assert.doesNotMatch(r.stderr, /cannot wait/);
  assert.notEqual(r.code, 2, r.stderr);
  assert.ok(JSON.parse(readFileSync(json, 'utf8')).requests > 0, 'the replay ran');
  r = await runIgnoringSigchld(['replay', '--db', db, 'sdk', '--before', 'exit 4', '--', 'false']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--before 'exit 4' exited with status 4/);
  // A server that exits at once is reaped and its status reported.
  for (let i = 0; i < 3; i++) {
    r = await runIgnoringSigchld(['record', '--db', join(t.dir, 'sigchld.db'), '--', 'sh', '-c', 'exit 3'], 60000);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /server exited with status 3/);
  }
});

test('--before: a secret in the command is redacted in every message', { timeout: 120000 }, async () => {
  const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const r = await runMcpreel(['replay', '--db', db, 'sdk', '--before', `API_TOKEN=${token} false`, '--', 'false']);
  assert.equal(r.code, 2);
  assert.match(r.stderr.toString(), /--before 'API_TOKEN=\[REDACTED\] false' exited with status 1/);
  assert.ok(!r.stderr.toString().includes(token), r.stderr.toString());
});

test('--log-file and the rules file are not inherited by --before or the server', { timeout: 300000 }, async () => {
  const log = join(t.dir, 'inherit.log');
  const fds = join(t.dir, 'before-fds');
  const serverFds = join(t.dir, 'server-fds');
  const r = await runMcpreel(['--log-file', log, 'replay', '--db', db, 'sdk', '--rules', RULES_FILE, '--no-record',
    '-o', join(t.dir, 'inherit-report.txt'), '--before', `ls -l /proc/$$/fd > ${fds}`,
    '--', 'sh', '-c', `ls -l /proc/$$/fd > ${serverFds}; exit 0`], { timeoutMs: 120000 });
  assert.notEqual(r.code, null);
  for (const f of [fds, serverFds]) {
    const listing = readFileSync(f, 'utf8');
    assert.ok(!listing.includes(log), `${f} holds the log file:\n${listing}`);
    assert.ok(!listing.includes('inherit-report.txt'), `${f} holds the report:\n${listing}`);
    assert.ok(!listing.includes(RULES_FILE), listing);
  }
});

test('--before: SIGTERM to mcpreel stops the command and what it started, then mcpreel', { timeout: 120000 }, async () => {
  const pidFile = join(t.dir, 'before-sleep.pid');
  let poll;
  const r = await runMcpreel(['replay', '--db', db, 'sdk', '--before', `sleep 300 & echo $! > ${pidFile}; wait`, '--', 'false'], {
    timeoutMs: 60000,
    onSpawn: (child) => {
      poll = setInterval(() => {
        if (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '') {
          clearInterval(poll);
          child.kill('SIGTERM');
        }
      }, 100);
    },
  });
  clearInterval(poll);
  assert.equal(r.signal, 'SIGTERM', `mcpreel ended by the signal it got (code ${r.code}): ${r.stderr}`);
  const pid = readFileSync(pidFile, 'utf8').trim();
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    gone = !existsSync(`/proc/${pid}`) || /^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    if (!gone) await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(gone, `the --before command's sleep (pid ${pid}) still runs`);
});
