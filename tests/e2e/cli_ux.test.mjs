// What a new user sees from the command line: a mistyped option or
// command gets one line (what was wrong, the nearest right spelling) and
// where help is, never the whole --help.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { E2E_DIR, MCPREEL, runMcpreel, tempDir } from './lib/util.mjs';

// What legitimately varies between runs of server-everything.
const RULES_FILE = join(E2E_DIR, '..', '..', 'examples', 'everything-rules.json');

// [argv, the first line of stderr, exactly]
const TYPOS = [
  [['record', '--lisen', '0', '--', 'cat'],
    "mcpreel record: unknown option '--lisen'; did you mean '--listen'?"],
  [['record', '--upstrem', 'http://127.0.0.1:1/'],
    "mcpreel record: unknown option '--upstrem'; did you mean '--upstream'?"],
  [['record', '--redact-kye', 'x', '--', 'cat'],
    "mcpreel record: unknown option '--redact-kye'; did you mean '--redact-key'?"],
  [['record', '-listen', '0'],
    "mcpreel record: unknown option '-l' in '-listen'; did you mean '--listen'?"],
  [['record', '--db'], "mcpreel record: option '--db' needs a value"],
  [['record', '--durable=yes', '--', 'cat'], "mcpreel record: option '--durable' takes no value"],
  [['record', '--re', 'x', '--', 'cat'],
    "mcpreel record: option '--re' is ambiguous; it could be '--rewrite-host', " +
    "'--redact-header', '--redact-key' or '--redact-regex'"],
  [['show', '--jsn', 'last'], "mcpreel show: unknown option '--jsn'; did you mean '--json'?"],
  [['sessions', '--xyzzy'], "mcpreel sessions: unknown option '--xyzzy'"],
  [['sessions', '-x'], "mcpreel sessions: unknown option '-x'"],
  [['export', '-o'], "mcpreel export: option '-o' needs a value"],
  [['export', '-O', 'f', 'last'], "mcpreel export: unknown option '-O'; did you mean '-o'?"],
  [['replay', '--upstrem', 'http://x/', 'last'],
    "mcpreel replay: unknown option '--upstrem'; did you mean '--upstream'?"],
  [['mock', '--mach', 'strict', 'last'], "mcpreel mock: unknown option '--mach'; did you mean '--match'?"],
  [['rm', '--dbb', 'x', '1'], "mcpreel rm: unknown option '--dbb'; did you mean '--db'?"],
  [['stats', '--verbsoe'], "mcpreel stats: unknown option '--verbsoe'; did you mean '--verbose'?"],
  [['--verbsoe', 'sessions'], "mcpreel: unknown option '--verbsoe'; did you mean '--verbose'?"],
  [['recrod', '--', 'cat'], "mcpreel: unknown command 'recrod'; did you mean 'record'?"],
  [['sesions'], "mcpreel: unknown command 'sesions'; did you mean 'sessions'?"],
  [['frobnicate'], "mcpreel: unknown command 'frobnicate'"],
  [['help', 'recrod'], "mcpreel: unknown command 'recrod'; did you mean 'record'?"],
  [['record', '-é'], "mcpreel record: unknown option '-é'"],
  [['sessions', '--verbose=2', '-v'], "mcpreel sessions: option '--verbose' takes no value"],
  [['sessions', '-xv'], "mcpreel sessions: unknown option '-x' in '-xv'"],
  [['x'.repeat(300)], `mcpreel: unknown command '${'x'.repeat(80)}'`],
];

test('a mistyped option or command: one line, the nearest spelling, where help is', async () => {
  for (const [args, want] of TYPOS) {
    const r = await runMcpreel(args, { input: '' });
    const lines = r.stderr.toString().split('\n').filter((l) => l !== '');
    const what = `mcpreel ${args.join(' ')}:\n${r.stderr}`;
    assert.equal(r.code, 2, what);
    assert.equal(lines[0], want, what);
    const cmd = want.match(/^(mcpreel(?: [a-z]+)?):/)[1];
    assert.equal(lines[1], `Try '${cmd} --help'.`, what);
    assert.ok(lines.length < 5, what);
    assert.equal(r.stdout.length, 0, what);
  }
});

// A secret in the server's command line, which a stored target must not
// keep: `env` passes it to the server as a variable.
const SECRET = 'sk-cliux0123456789abcdefghij';

function header(r) {
  return r.stdout.toString().split('\n')[0];
}

test("'last' stays on the last recording; replay's and mock's sessions are last-replay and last-mock, with their real target", { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'l.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
    const server = ['env', `CLIUX_KEY=${SECRET}`, command, ...args];

    // Twice: the second replay of 'last' must still be of the recording.
    for (let i = 0; i < 2; i++) {
      const r = await runMcpreel(['replay', '--db', db, 'last', '--rules', RULES_FILE, '--report', 'json', '-o', join(t.dir, 'rep.json'),
        '--', ...server], { timeoutMs: 120000 });
      assert.ok(r.code === 0 || r.code === 1, r.stderr.toString());
    }
    const lines = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'never recorded' } } },
    ];
    const m = await runMcpreel(['mock', '--db', db, 'last', '--on-miss', 'forward', '--', ...server],
      { input: Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join('')), timeoutMs: 60000 });
    assert.equal(m.code, 0, m.stderr.toString());

    const list = await runMcpreel(['sessions', '--db', db, '--json']);
    const s = list.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(s.map((x) => [x.id, x.name, x.origin]), [
      [1, 'sdk', 'record'], [2, 'replay of 1', 'replay'], [3, 'replay of 1', 'replay'], [4, 'mock fallback of 1', 'mock']]);
    for (const x of s.slice(1)) {
      assert.equal(x.target[0], 'env', `session ${x.id}: the real command, not ${JSON.stringify(x.target)}`);
      assert.deepEqual(x.target.slice(2), [command, ...args]);
      assert.ok(!JSON.stringify(x.target).includes(SECRET), `session ${x.id}: the secret is redacted`);
      assert.match(x.target[1], /^CLIUX_KEY=\[REDACTED\]$/);
    }

    const want = { last: 'session 1 "sdk"', 'last-replay': 'session 3 "replay of 1"', 'last-mock': 'session 4 "mock fallback of 1"' };
    for (const [spec, start] of Object.entries(want)) {
      const r = await runMcpreel(['show', '--db', db, spec]);
      assert.equal(r.code, 0, r.stderr.toString());
      assert.ok(header(r).startsWith(start), `show ${spec}: ${header(r)}`);
    }
    // The text list shows the real target too.
    const text = (await runMcpreel(['sessions', '--db', db])).stdout.toString();
    assert.ok(!text.includes('(replay)'), text);
    assert.ok(!text.includes(SECRET), text);
  } finally {
    t.cleanup();
  }
});

// Run argv under a pseudo-terminal (script(1), util-linux), typing input
// there; returns what the terminal showed (stdout and stderr both).
function onTerminal(argv, input) {
  const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const p = spawn('script', ['-qfec', quoted, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    p.stdout.on('data', (d) => out.push(d));
    p.stderr.on('data', (d) => out.push(d));
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`${quoted}: no exit in 60 s`)); }, 60000);
    p.on('error', reject);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, text: Buffer.concat(out).toString() }); });
    p.stdin.end(input);
  });
}

const NOTICE = /waiting for an MCP host on stdin: 'mcpreel (record|mock)' is meant to be started by a host \(put it in the host's MCP server config; see 'mcpreel --help'\)/;

test('record and mock on a terminal say they wait for an MCP host; on a pipe they say nothing', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 't.db');
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    // A line, then end of input (^D) as a person at the terminal types it.
    let r = await onTerminal([MCPREEL, 'record', '--db', db, '--name', 'tty', '--', 'cat'], `${ping}\n\x04`);
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, NOTICE, r.text);
    assert.equal(r.text.match(new RegExp(NOTICE.source, 'g')).length, 1, 'said once');
    assert.match(r.text, /recorded session 1/, 'then went on');

    r = await onTerminal([MCPREEL, 'mock', '--db', db, 'last'], '\x04');
    assert.match(r.text, NOTICE, r.text);
    assert.match(r.text, /'mcpreel mock'/);

    const piped = await runMcpreel(['record', '--db', db, '--', 'cat'], { input: `${ping}\n` });
    assert.equal(piped.code, 0);
    assert.doesNotMatch(piped.stderr.toString(), /waiting for an MCP host/);
    const mock = await runMcpreel(['mock', '--db', db, 'tty'], { input: `${ping}\n` });
    assert.doesNotMatch(mock.stderr.toString(), /waiting for an MCP host/);
  } finally {
    t.cleanup();
  }
});

test('sessions: the columns align whatever the names and numbers', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 's.db');
    const names = ['a', 'a name longer than sixteen', 'ünïcödé naming', 'x'.repeat(60), 'two\nlines'];
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    for (const name of names) {
      const r = await runMcpreel(['record', '--db', db, '--name', name, '--', 'cat'], { input: ping.repeat(3) });
      assert.equal(r.code, 0, r.stderr.toString());
    }
    // A newline in the server's argv must not break its row either.
    const nl = await runMcpreel(['record', '--db', db, '--name', 'nl', '--', 'sh', '-c', 'cat\n# a second line'], { input: ping.repeat(3) });
    assert.equal(nl.code, 0, nl.stderr.toString());
    const r = await runMcpreel(['sessions', '--db', db]);
    assert.equal(r.code, 0, r.stderr.toString());
    const lines = r.stdout.toString().split('\n').filter((l) => l !== '');
    assert.equal(lines.length, names.length + 2, r.stdout.toString());
    assert.ok(lines[lines.length - 1].endsWith('sh -c cat?# a second line'), lines[lines.length - 1]);
    lines.pop();
    // Columns by characters, not bytes: where each heading starts, each
    // row has its value (left-aligned) or ends it (right-aligned).
    const chars = lines.map((l) => [...l]);
    const at = (word) => chars[0].join('').indexOf(word);
    for (const row of chars.slice(1)) {
      const s = row.join('');
      assert.equal(row.slice(at('TRANS'), at('TRANS') + 5).join(''), 'stdio', `TRANS column:\n${r.stdout}`);
      assert.equal(row.slice(at('STATUS'), at('STATUS') + 6).join(''), 'exit 0', `STATUS column:\n${r.stdout}`);
      assert.equal(row[at('MSGS') + 3], '6', `MSGS column:\n${s}`);
      assert.equal(row.slice(at('SERVER')).join(''), 'cat', `SERVER column:\n${s}`);
    }
    const text = r.stdout.toString();
    assert.ok(text.includes('a name longer than sixteen '), 'a longer name whole');
    assert.ok(text.includes(`${'x'.repeat(37)}... `), 'a very long name cut with ...');
    assert.ok(text.includes('two?lines'), 'a newline in a name is not printed');
  } finally {
    t.cleanup();
  }
});

// A one-request server in sh: reads the request, answers id 1 with when.
function shServer(when) {
  return ['sh', '-c', `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"a":{"when":${when}}}}'; read l; exit 0`];
}

test("replay --ignore takes the path forms its help lists: ..key and .a without the $", { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'j.db');
    const req = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clock"}}\n';
    const r = await runMcpreel(['record', '--db', db, '--', ...shServer(1)], { input: req });
    assert.equal(r.code, 0, r.stderr.toString());
    const replay = (ignore) => runMcpreel(['replay', '--db', db, '--no-record', ...ignore.flatMap((p) => ['--ignore', p]),
      'last', '--', ...shServer(2)], { timeoutMs: 60000 });

    let x = await replay([]);
    assert.equal(x.code, 1, `the answers differ:\n${x.stdout}${x.stderr}`);
    assert.match(x.stdout.toString(), /\$\.result\.a\.when: 1 -> 2/);
    for (const ignore of ['..when', '$..when', '.result.a.when', '..a', '..*']) {
      x = await replay([ignore]);
      assert.equal(x.code, 0, `--ignore ${ignore}:\n${x.stdout}${x.stderr}`);
      assert.match(x.stdout.toString(), /1 same, 0 different/, `--ignore ${ignore}`);
    }
    x = await replay(['when']);
    assert.equal(x.code, 2);
    assert.match(x.stderr.toString(), /bad JSONPath 'when': must start with \$ \(or with \. or \[ for a step from it\)/);
  } finally {
    t.cleanup();
  }
});

test('-V is the version; help help and help -v are the help', async () => {
  const v = await runMcpreel(['-V'], { input: '' });
  assert.equal(v.code, 0, v.stderr.toString());
  assert.match(v.stdout.toString(), /^mcpreel \d+\.\d+/);
  for (const args of [['help', 'help'], ['help', '-v'], ['help']]) {
    const r = await runMcpreel(args, { input: '' });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout.toString(), /^usage: mcpreel /, args.join(' '));
  }
});

test('every --help: on stdout, exit 0, within 80 columns, in plain words', async () => {
  const cmds = [[], ['record'], ['sessions'], ['show'], ['stats'], ['check'], ['prune'], ['rm'], ['report'], ['replay'],
    ['mock'], ['diff'], ['export'], ['import']];
  for (const cmd of cmds) {
    const r = await runMcpreel([...cmd, '--help']);
    const what = `mcpreel ${cmd.join(' ')} --help`;
    assert.equal(r.code, 0, what);
    assert.equal(r.stderr.length, 0, what);
    const text = r.stdout.toString();
    for (const line of text.split('\n')) {
      // Examples are command lines to copy whole.
      if (/^ {2}(mcpreel |")/.test(line)) continue;
      assert.ok([...line].length <= 80, `${what}: a line of ${[...line].length}: ${line}`);
    }
    assert.doesNotMatch(text, /Values record redacted|whose values record|Nothing ever contacts|the default now/, what);
    if (['show', 'stats', 'check', 'rm', 'report', 'replay', 'mock', 'diff', 'export'].includes(cmd[0])) {
      assert.match(text.replace(/\n/g, ' '), /'last' is the newest session recorded \(or imported\); 'last-replay' and 'last-mock'/, what);
    }
  }
});

test("an imported session is a recording: 'last' moves to it, and a replay of it does not move 'last'", { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'i.db');
    const req = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clock"}}\n';
    let r = await runMcpreel(['record', '--db', db, '--name', 'here', '--', ...shServer(1)], { input: req });
    assert.equal(r.code, 0, r.stderr.toString());
    const file = join(t.dir, 'e.jsonl');
    r = await runMcpreel(['export', '--db', db, 'last', '-o', file]);
    assert.equal(r.code, 0, r.stderr.toString());
    r = await runMcpreel(['import', '--db', db, '--name', 'brought', file]);
    assert.equal(r.code, 0, r.stderr.toString());
    r = await runMcpreel(['replay', '--db', db, 'last', '--', ...shServer(1)], { timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr.toString());
    const s = (await runMcpreel(['sessions', '--db', db, '--json'])).stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(s.map((x) => [x.id, x.name, x.origin]), [[1, 'here', 'record'], [2, 'brought', 'import'], [3, 'replay of 2', 'replay']]);
    for (const [spec, start] of [['last', 'session 2 "brought"'], ['last-replay', 'session 3 "replay of 2"']]) {
      r = await runMcpreel(['show', '--db', db, spec]);
      assert.ok(header(r).startsWith(start), `show ${spec}: ${header(r)}`);
    }
    r = await runMcpreel(['show', '--db', db, 'last-mock']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /holds no mock fallback sessions yet \(see 'mcpreel sessions'\)/);
  } finally {
    t.cleanup();
  }
});
