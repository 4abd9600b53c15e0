// Every command the README shows is run by a test.  This file reads
// README.md and every docs/ page, takes each fenced block of commands
// (```sh: a command a line, `\` or an open quote continuing one;
// ```console: the lines after "$ ", the lines below each its output), and
// either
//   - runs it, block after block in document order (the README, then the
//     pages, whose examples use the README's sessions), in one sandbox: a
//     temporary directory as the working directory and HOME, the binary
//     under test as build/mcpreel and on PATH, tests/e2e and examples/
//     from this checkout, and an offline npx that starts the pinned
//     server-everything; each command must exit 0 (pipelines too), and a
//     console block's output must match what the page shows (durations
//     and digits masked, blanks collapsed, "…" for lines or line ends the
//     page leaves out); or
//   - for a block the page marks
//       <!-- test: mirrored in FILE "TEST NAME" and FILE ... -->
//     (commands that need root, a long build, a listening server, or that
//     another test runs already), checks that each FILE exists, holds a
//     test of that name, and mentions the command's program or subcommand
//     and each of its options and plain words: the test that does what
//     the page says.
// A fence of another kind (JSON, YAML, output) that holds an `mcpreel
// COMMAND` line fails the test unless it is marked: a command nothing runs.
// And the README's reference table: a row for each command, each option
// in it one that command's --help gives.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { E2E_DIR, MCPREEL, tempDir } from './lib/util.mjs';

const TOP = resolve(E2E_DIR, '..', '..');
const README = join(TOP, 'README.md');
// The pages whose commands are run too, after the README's: these first
// (their examples use the README's sessions), then any other docs/ page.
const FIRST = ['README.md', 'docs/recording.md', 'docs/looking.md', 'docs/redaction.md', 'docs/replay-mock.md'];
const PAGES = [...FIRST, ...readdirSync(join(TOP, 'docs')).filter((f) => f.endsWith('.md')).sort()
  .map((f) => `docs/${f}`).filter((f) => !FIRST.includes(f))];
// mcpreel's commands, for telling a command in a JSON or YAML fence.
const SUBCOMMANDS = ['record', 'sessions', 'show', 'stats', 'prune', 'rm', 'report', 'replay', 'mock', 'diff', 'check', 'export', 'import',
  'hosts', 'wrap', 'unwrap'];
// One block runs at most this long: the longest records and replays the
// demo client's whole session (about 20 s under ASan on a loaded machine).
const BLOCK_TIMEOUT_MS = 180000;
const TEST_TIMEOUT_MS = 600000;
// What marks a fenced block's commands as done elsewhere.
const MIRROR_RE = /^<!-- test: mirrored in (.*) -->$/;
// Separates the commands' outputs in one shell's stdout.
const SEP = '\x1e';

/**
 * The fenced blocks of a markdown text: { lang, lines, line (1-based, of
 * the opening fence), mirror (the marker's text or null) }.
 */
function blocksOf(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!m) continue;
    const indent = m[1].length;
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j])) j++;
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const mm = k >= 0 ? MIRROR_RE.exec(lines[k].trim()) : null;
    blocks.push({
      lang: m[2], line: i + 1, mirror: mm ? mm[1] : null,
      lines: lines.slice(i + 1, j).map((l) => l.slice(indent)),
    });
    i = j;
  }
  return blocks;
}

/** Whether shell text leaves a quote open (comments aside). */
function openQuote(text) {
  let q = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q === "'") { if (c === "'") q = null; } else if (c === '\\') i++;
    else if (q === '"') { if (c === '"') q = null; } else if (c === "'" || c === '"') q = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      // A comment runs to the line's end; its quotes are words.
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl;
    }
  }
  return q !== null;
}

/** A command without its trailing `# comment`. */
function withoutComment(cmd) {
  for (let i = 0; i < cmd.length; i++) {
    if (cmd[i] === '#' && (i === 0 || /\s/.test(cmd[i - 1])) && !openQuote(cmd.slice(0, i))) return cmd.slice(0, i).trim();
  }
  return cmd;
}

/**
 * A sh block's commands: comment and blank lines left out, a line ending
 * in `\` or inside quotes joined to the next.
 */
function shCommands(lines) {
  const cmds = [];
  let cur = '';
  for (const l of lines) {
    if (!cur && (l.trim() === '' || l.trim().startsWith('#'))) continue;
    if (l.endsWith('\\')) { cur += `${l.slice(0, -1)} `; continue; }
    if (openQuote(cur + l)) { cur += `${l}\n`; continue; }
    cmds.push(cur + l);
    cur = '';
  }
  assert.equal(cur, '', `a command left open at the block's end: ${cur}`);
  return cmds.map((c) => ({ cmd: c.trim(), expect: null }));
}

/** A console block's commands ("$ ...") with the output shown below each. */
function consoleCommands(lines) {
  const cmds = [];
  for (const l of lines) {
    if (l.startsWith('$ ')) cmds.push({ cmd: l.slice(2).trim(), expect: [] });
    else if (cmds.length) cmds[cmds.length - 1].expect.push(l);
    else assert.fail(`a console block's output before its first "$ " command: ${l}`);
  }
  return cmds;
}

/** The commands of a block, or [] for a block that is not one of commands. */
function commandsOf(b) {
  if (b.lang === 'sh') return shCommands(b.lines);
  if (b.lang === 'console') return consoleCommands(b.lines);
  // Another fence: a line that runs mcpreel is a command all the same.
  const re = new RegExp(`(^|[\\s:$])mcpreel\\s+(${SUBCOMMANDS.join('|')})\\b`);
  return b.lines.filter((l) => re.test(l)).map((l) => ({ cmd: l.trim(), expect: null }));
}

/** A line as compared: durations and digits masked, runs of blanks as one. */
function mask(line) {
  return line.replace(/\b[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h)\b/g, 'T').replace(/[0-9]+/g, '0').replace(/\s+/g, ' ').trim();
}

/**
 * Whether the lines printed match the lines shown: "…" alone stands for
 * any lines (none too), a line ending in "…" for any line that begins so.
 */
function matches(shown, got) {
  const s = shown.map(mask);
  const g = got.map(mask);
  const memo = new Map();
  const at = (i, j) => {
    const key = i * (g.length + 1) + j;
    if (memo.has(key)) return memo.get(key);
    let r;
    if (i === s.length) r = j === g.length;
    else if (s[i] === '…') r = at(i + 1, j) || (j < g.length && at(i, j + 1));
    else if (j === g.length) r = false;
    else if (s[i].endsWith('…')) r = g[j].startsWith(s[i].slice(0, -1).trimEnd()) && at(i + 1, j + 1);
    else r = s[i] === g[j] && at(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return at(0, 0);
}

/**
 * What a mirroring test must mention of a command: for mcpreel, its
 * subcommand and options; for another program, its name, its options and
 * its NAME= arguments.  `sudo` and shell plumbing aside.
 */
function wordsOf(cmd) {
  const words = [];
  // A quoted word is a value: it need not appear.
  for (const part of withoutComment(cmd).replace(/'[^']*'|"[^"]*"/g, "''").split(/&&|\|/)) {
    const w = part.trim().split(/\s+/).filter((x) => x !== 'sudo');
    const m = w.indexOf('mcpreel');
    if (m >= 0) {
      const sub = w.slice(m + 1);
      const end = sub.indexOf('--');
      const own = end >= 0 ? sub.slice(0, end) : sub;
      words.push(own[0], ...own.filter((x) => x.startsWith('-')));
    } else if (w.length) {
      // Options, NAME= of assignments, and words such as make's targets;
      // not paths or values (a '/', a '$', a quote).
      words.push(w[0].split('/').pop(), ...w.slice(1).map((x) => (/^[A-Z_]+=/.test(x) ? x.replace(/=.*$/, '=') : x))
        .filter((x) => x !== '#' && !/^#/.test(x)).filter((x) => x.startsWith('-') || !/[/$'"]/.test(x)));
    }
  }
  return [...new Set(words.filter(Boolean))];
}

/** The files and test names of a mirror marker. */
function mirrorsOf(text) {
  const out = [];
  let rest = text;
  while (rest.trim()) {
    const m = /^\s*(\S+)(?:\s+"([^"]*)")?\s*(?:and(?=\s)|$)/.exec(rest);
    assert.ok(m, `a mirror is FILE or FILE "TEST NAME", joined by "and": ${rest}`);
    out.push({ file: m[1], name: m[2] ?? null });
    rest = rest.slice(m[0].length);
  }
  return out;
}

/** The sandbox the run blocks share; returns its directory and env. */
function sandbox(dir) {
  mkdirSync(join(dir, 'build'));
  symlinkSync(MCPREEL, join(dir, 'build', 'mcpreel'));
  mkdirSync(join(dir, 'tests'));
  symlinkSync(E2E_DIR, join(dir, 'tests', 'e2e'));
  symlinkSync(join(TOP, 'examples'), join(dir, 'examples'));
  // npx without the network: the pinned server-everything, or a clear no.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const server = join(E2E_DIR, 'node_modules', '.bin', 'mcp-server-everything');
  writeFileSync(join(bin, 'npx'), `#!/bin/sh
[ "$1" = -y ] && shift
case "$1" in
@modelcontextprotocol/server-everything) shift; exec "${server}" "$@";;
esac
echo "readme.test npx: no offline copy of $1" >&2
exit 127
`);
  chmodSync(join(bin, 'npx'), 0o755);
  const env = { ...process.env, HOME: dir, PATH: `${bin}:${join(dir, 'build')}:${process.env.PATH}` };
  // The hosts' files and wrap's state are found under HOME alone too.
  for (const k of ['MCPREEL_DB', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'CODEX_HOME', 'MAKEFLAGS', 'MFLAGS',
    'MAKELEVEL']) delete env[k];
  return env;
}

/** Run one block's commands in one shell (so that export carries on). */
function runBlock(b, cmds, dir, env) {
  const errs = join(dir, '.stderr');
  mkdirSync(errs, { recursive: true });
  const tag = `${b.page.replace(/\W/g, '_')}.${b.line}`;
  const script = 'set -o pipefail\n' + cmds.map((c, i) => `printf '${SEP}%d\\n' ${i}\n{ ${c.cmd}\n} 2>'${errs}/${tag}.${i}'\nprintf '${SEP}rc %d\\n' $?\n`).join('');
  const r = spawnSync('bash', ['-c', script], {
    cwd: dir, env, encoding: 'utf8', timeout: BLOCK_TIMEOUT_MS, maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) throw r.error;
  const parts = r.stdout.split(`${SEP}`).slice(1);
  cmds.forEach((c, i) => {
    const what = `${b.page}:${b.line} "${c.cmd}"`;
    const out = parts[2 * i];
    const rc = parts[2 * i + 1];
    assert.ok(out !== undefined && rc !== undefined, `${what} did not run to its end (block status ${r.status}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
    const err = readFileSync(join(errs, `${tag}.${i}`), 'utf8');
    assert.equal(rc.trim(), 'rc 0', `${what} exited ${rc.trim()}:\n${out}\n${err}`);
    const got = out.slice(out.indexOf('\n') + 1).replace(/\n+$/, '');
    if (c.expect) {
      const shown = c.expect.join('\n').replace(/\n+$/, '');
      assert.ok(matches(shown ? shown.split('\n') : [], got ? got.split('\n') : []),
        `${what}: its output does not match the README's\n--- README\n${shown}\n--- printed\n${got}\n--- stderr\n${err}`);
    }
  });
}

test('README and its docs pages: every command shown is run here or by the test named beside it', { timeout: TEST_TIMEOUT_MS }, (t) => {
  const run = [];
  let mirrored = 0;
  for (const page of PAGES) {
    for (const b of blocksOf(readFileSync(join(TOP, page), 'utf8'))) {
      b.page = page;
      const at = `${page}:${b.line}`;
      const cmds = commandsOf(b);
      if (!cmds.length) continue;
      if (b.mirror) {
        const texts = mirrorsOf(b.mirror).map(({ file, name }) => {
          const path = join(TOP, file);
          assert.ok(existsSync(path), `${at}: the mirror ${file} does not exist`);
          const src = readFileSync(path, 'utf8');
          if (name) {
            const plain = src.replace(/\\'/g, "'").replace(/\\"/g, '"');
            assert.ok(["'", '"', '`'].some((q) => plain.includes(`test(${q}${name}${q}`)),
              `${at}: ${file} has no test "${name}"`);
          }
          return src;
        });
        for (const c of cmds) {
          for (const w of wordsOf(c.cmd)) {
            assert.ok(texts.some((x) => x.includes(w)),
              `${at} "${c.cmd}": "${w}" appears in none of its mirrors (${b.mirror})`);
          }
          mirrored++;
        }
        continue;
      }
      assert.ok(b.lang === 'sh' || b.lang === 'console',
        `${at}: a \`\`\`${b.lang || '(plain)'} block holds commands nothing runs:\n${cmds.map((c) => c.cmd).join('\n')}\n` +
        'show them in a ```sh or ```console block, or mark the block as mirrored in a test');
      run.push([b, cmds]);
    }
  }
  assert.ok(run.filter(([b]) => b.page === 'README.md').length >= 3, 'the README shows commands to run');

  const { dir, cleanup } = tempDir('mcpreel-readme-');
  t.after(cleanup);
  const env = sandbox(dir);
  let n = 0;
  for (const [b, cmds] of run) {
    const t0 = Date.now();
    runBlock(b, cmds, dir, env);
    n += cmds.length;
    console.log(`${b.page}:${b.line}: ${cmds.length} command(s) in ${Date.now() - t0} ms`);
  }
  console.log(`${PAGES.join(', ')}: ${n} commands run, ${mirrored} mirrored`);
});

test('README: its first 40 lines take a new user to a recorded session', () => {
  const head = readFileSync(README, 'utf8').split('\n').slice(0, 40).join('\n');
  assert.match(head, /^make demo /m, 'the set-up commands at the top');
  assert.match(head, /^make test /m);
  assert.match(head, /build\/mcpreel/, 'where the binary is');
  assert.match(head, /^\$ .*mcpreel record /m, 'a recording');
  assert.match(head, /^\$ mcpreel (sessions|show)/m, 'and a look at it');
});

test("README: each option its reference table gives a command is in that command's --help", () => {
  const rows = readFileSync(README, 'utf8').split('\n').filter((l) => /^\| `[a-z]+[ `]/.test(l));
  assert.ok(rows.length >= 10, `the reference table lists the commands (${rows.length} rows)`);
  const global = spawnSync(MCPREEL, ['--help'], { encoding: 'utf8' }).stdout;
  const commands = global.split('\ncommands:\n')[1].split('\n\n')[0].split('\n').map((l) => l.trim().split(/\s+/)[0]);
  const listed = new Set();
  for (const row of rows) {
    const cmd = /^\| `([a-z]+)/.exec(row)[1];
    listed.add(cmd);
    const r = spawnSync(MCPREEL, [cmd, '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `mcpreel ${cmd} --help: ${r.stderr}`);
    for (const [opt] of row.matchAll(/--[a-z][a-z0-9-]*/g)) {
      assert.ok(r.stdout.includes(opt) || global.includes(opt), `README's ${cmd} row names ${opt}, which 'mcpreel ${cmd} --help' does not`);
    }
  }
  assert.deepEqual([...listed].sort(), [...commands].sort(), 'a row for each command, and no other');
  assert.deepEqual([...SUBCOMMANDS].sort(), [...commands].sort(), "this test's list of commands is mcpreel's");
});

test("README: the schema version it gives is schema.sql's", () => {
  const readme = readFileSync(README, 'utf8');
  const schema = readFileSync(join(TOP, 'schema.sql'), 'utf8');
  const said = /schema's version \((\d+)\)/.exec(readme);
  const is = /PRAGMA user_version = (\d+)/.exec(schema);
  assert.ok(said && is, 'both name a version');
  assert.equal(said[1], is[1]);
});

test('README check: the matcher and the extraction fail on what they should', () => {
  // A command no test runs, in a JSON or YAML fence, is found.
  const bs = blocksOf('x\n```yaml\n- run: mcpreel replay --db g.db s -- ./server\n```\n');
  assert.equal(commandsOf(bs[0]).length, 1);
  assert.equal(commandsOf(blocksOf('```\nscenario | through mcpreel | mcpreel peak RSS\n```\n')[0]).length, 0);
  assert.equal(bs[0].mirror, null);
  // A marker is the line just before the fence.
  const mk = blocksOf('<!-- test: mirrored in a.mjs "t" -->\n\n```sh\nmake x\n```\n');
  assert.equal(mk[0].mirror, 'a.mjs "t"');
  assert.deepEqual(mirrorsOf('a.mjs "t" and .ci/run'), [{ file: 'a.mjs', name: 't' }, { file: '.ci/run', name: null }]);
  assert.deepEqual(wordsOf('sudo make install PREFIX=$HOME/.local  # for all'), ['make', 'install', 'PREFIX=']);
  assert.deepEqual(wordsOf('cmp a.json b.json && echo "the same, with no server"'), ['cmp', 'a.json', 'b.json', 'echo']);
  assert.deepEqual(shCommands(['sqlite3 db \\', '  "SELECT a', '   FROM b"', 'make x']).map((c) => c.cmd), ['sqlite3 db    "SELECT a\n   FROM b"', 'make x']);
  assert.deepEqual(wordsOf('node x.mjs --quiet -- mcpreel mock s --listen 1:2 -- cmd --flag'), ['mock', '--listen']);
  // Output: digits and blank runs do not count, text does; "…" is a gap.
  assert.ok(matches(['  1  first   12.5s'], ['    7  first 1.25s']));
  assert.ok(matches(['x 56.0ms y'], ['x 929us y']));
  assert.ok(!matches(['  1  first   12.5s'], ['    7  second 1.25s']));
  assert.ok(matches(['a', '…', 'z'], ['a', 'b', 'c', 'z']));
  assert.ok(matches(['a', '…'], ['a']));
  assert.ok(!matches(['a', 'z'], ['a', 'b', 'z']));
  assert.ok(matches(['{"method":"init…'], ['{"method":"initialize"}']));
  assert.ok(!matches(['{"method":"ping…'], ['{"method":"initialize"}']));
});
