// What a new user sees from the command line: a mistyped option or
// command gets one line (what was wrong, the nearest right spelling) and
// where help is, never the whole --help.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { runMcpreel } from './lib/util.mjs';

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
