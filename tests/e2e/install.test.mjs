// make install into a DESTDIR, and what it installs: the binary runs, the
// man page renders and holds every command's --help, the bash and zsh
// completions complete the commands and exactly the long options each
// command's --help lists (each of them one the binary takes); make
// uninstall removes it all.  And make demo's quiet build: a line for the
// dependencies and one for the build before the demo's own output, and on
// a failure the log's end and its path.
//
// make install reuses the build directory of the binary under test
// (MCPREEL's, e.g. build-asan), so it builds nothing that make test has
// not built already.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { E2E_DIR, MCPREEL, tempDir } from './lib/util.mjs';

const TOP = resolve(E2E_DIR, '..', '..');
const BUILD = dirname(MCPREEL);
// Generous: a loaded machine, and make install may have to bring the
// build directory up to date.
const MAKE_TIMEOUT_MS = 600000;
const RUN_TIMEOUT_MS = 60000;

/** Run a command; its result with stdout and stderr as text. */
function run(cmd, args, opts = {}) {
  const env = { ...process.env, ...opts.env };
  // A make test above us must not hand its jobserver to this make.
  for (const k of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL']) delete env[k];
  const r = spawnSync(cmd, args, {
    encoding: 'utf8', timeout: opts.timeout ?? RUN_TIMEOUT_MS, maxBuffer: 64 << 20, cwd: opts.cwd ?? TOP, env,
  });
  if (r.error) throw r.error;
  return r;
}

function ok(r, what) {
  assert.equal(r.status, 0, `${what} exited ${r.status} (signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function have(cmd) {
  return run('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** The commands 'mcpreel --help' lists. */
function commandsOf(bin) {
  const help = ok(run(bin, ['--help']), 'mcpreel --help');
  const list = help.split('\ncommands:\n')[1].split('\n\n')[0];
  return list.split('\n').map((l) => l.trim().split(/\s+/)[0]);
}

/**
 * The long options of a command, worked out apart from the generators:
 * every --word its --help mentions that the binary takes as an option of
 * that command (mcpreel says "unknown option" of any other).
 */
function optionsOf(bin, cmd, cwd) {
  const help = ok(run(bin, [cmd, '--help']), `mcpreel ${cmd} --help`);
  const words = new Set([...help.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]));
  for (const w of ['--help', '--verbose', '--quiet', '--log-file']) words.add(w);
  return [...words].filter((w) => !/unknown option|unrecognized option/.test(accepted(bin, cmd, w, cwd))).sort();
}

/**
 * What getopt says of option opt of cmd, given an argument, then --help,
 * in directory cwd (--log-file=x creates x).
 */
function accepted(bin, cmd, opt, cwd) {
  return run(bin, [cmd, `${opt}=x`, '--help'], { cwd }).stderr;
}

function mode(path) {
  return (statSync(path).mode & 0o7777).toString(8);
}

test('make install puts the binary, man page and completions under DESTDIR; make uninstall removes them', { timeout: 2 * MAKE_TIMEOUT_MS }, (t) => {
  const { dir, cleanup } = tempDir('mcpreel-install-');
  t.after(cleanup);
  const dest = join(dir, 'dest');
  ok(run('make', ['install', `BUILD=${BUILD}`, `DESTDIR=${dest}`, 'PREFIX=/usr'], { timeout: MAKE_TIMEOUT_MS }), 'make install');

  const usr = join(dest, 'usr');
  const files = {
    bin: join(usr, 'bin', 'mcpreel'),
    man: join(usr, 'share', 'man', 'man1', 'mcpreel.1'),
    bash: join(usr, 'share', 'bash-completion', 'completions', 'mcpreel'),
    zsh: join(usr, 'share', 'zsh', 'site-functions', '_mcpreel'),
  };
  assert.equal(mode(files.bin), '755', 'the binary is 0755');
  for (const k of ['man', 'bash', 'zsh']) assert.equal(mode(files[k]), '644', `${files[k]} is 0644`);

  // The installed binary runs.
  const bin = files.bin;
  assert.match(ok(run(bin, ['--help']), 'mcpreel --help'), /^usage: mcpreel /);
  assert.match(ok(run(bin, ['record', '--help']), 'mcpreel record --help'), /--max-record-size SIZE/);
  assert.match(ok(run(bin, ['--version']), 'mcpreel --version'), /^mcpreel \d+\.\d+/);

  const commands = commandsOf(bin);
  assert.ok(commands.length >= 10 && commands.includes('record') && commands.includes('replay'), `commands: ${commands}`);
  const scratch = join(dir, 'scratch');
  mkdirSync(scratch);
  const options = Object.fromEntries(commands.map((c) => [c, optionsOf(bin, c, scratch)]));
  assert.ok(options.record.includes('--max-record-size') && options.record.includes('--upstream'));
  console.log(`# ${commands.length} commands, ${Object.values(options).flat().length} long options`);

  // The man page: renders without a warning, and holds each command's
  // --help line for line (the page is generated from them).
  const troff = run('groff', ['-man', '-Tutf8', '-ww', '-z', files.man]);
  assert.equal(troff.status, 0, troff.stderr);
  assert.equal(troff.stderr, '', 'groff has no warning for the man page');
  const page = ok(run('man', ['-l', files.man], { env: { MANWIDTH: '100', MAN_KEEP_FORMATTING: '' } }), 'man -l');
  const pageLines = new Set(page.split('\n').map((l) => l.trim()));
  assert.match(page, /^SYNOPSIS$/m);
  assert.match(page, /^EXIT STATUS$/m);
  assert.match(page, /^ENVIRONMENT$/m);
  for (const c of commands) {
    assert.ok(pageLines.has(`mcpreel ${c}`), `the man page has a section for ${c}`);
    const help = ok(run(bin, [c, '--help']), `mcpreel ${c} --help`);
    for (const l of help.split('\n').map((x) => x.trim()).filter(Boolean)) {
      assert.ok(pageLines.has(l), `the man page has ${c}'s help line ${JSON.stringify(l)}`);
    }
  }
  assert.ok(pageLines.has('--max-record-size SIZE'), 'options render with ASCII hyphens');

  // bash: the function the completion registers, called as bash would.
  const bash = (words) => {
    const script = `source ${JSON.stringify(files.bash)}
      complete -p mcpreel
      COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}
      _mcpreel
      printf '%s\\n' "\${COMPREPLY[@]}"`;
    const out = ok(run('bash', ['--norc', '--noprofile', '-c', script]), `bash completion of ${words.join(' ')}`).split('\n');
    assert.match(out[0], /^complete -o default -F _mcpreel mcpreel$/);
    return out.slice(1).filter(Boolean).sort();
  };
  assert.deepEqual(bash(['mcpreel', 'rec']), ['record']);
  assert.deepEqual(bash(['mcpreel', 're']), ['record', 'replay', 'report']);
  assert.deepEqual(bash(['mcpreel', '']), [...commands].sort());
  assert.deepEqual(bash(['mcpreel', 'record', '--max-r']), ['--max-record-size']);
  assert.deepEqual(bash(['mcpreel', '-v', '--log-file', 'x.log', 'record', '--db', 'r.db', '--max']), ['--max-connections', '--max-record-size', '--max-sessions']);
  assert.deepEqual(bash(['mcpreel', '--vers']), ['--version']);
  // bash splits --log-file=x.log at the '=' (COMP_WORDBREAKS).
  assert.deepEqual(bash(['mcpreel', '--log-file', '=', 'x.log', 'sess']), ['sessions']);
  assert.ok(bash(['mcpreel', 'record', '--name', 'n', '--', 'bas']).includes('bash'), 'after -- the server command');
  assert.deepEqual(bash(['mcpreel', 'record', '--', 'node', '--max']), [], 'the server\'s own options are not ours');
  for (const c of commands) assert.deepEqual(bash(['mcpreel', c, '--']), options[c], `bash: ${c}'s long options`);

  // zsh: syntax, then the function with the completion system's builtins
  // stood in for (they only run inside a completion), to see what it
  // offers.
  assert.ok(have('zsh'), 'zsh is installed (scripts/deps.sh test installs it)');
  const zp = run('zsh', ['-n', files.zsh]);
  assert.equal(zp.status, 0, `zsh -n: ${zp.stderr}`);
  const zshText = readFileSync(files.zsh, 'utf8');
  assert.match(zshText, /^#compdef mcpreel\n/);
  const zsh = (words) => {
    const script = `compdef() { : }
      compadd() { print -rl -- compadd "$@" }
      _describe() { print -rl -- _describe "\${(@P)4}" }
      _files() { print -r -- _files }
      _normal() { print -rl -- _normal $CURRENT "\${words[@]}" }
      source ${JSON.stringify(files.zsh)}
      words=(${words.map((w) => JSON.stringify(w)).join(' ')}); CURRENT=${words.length}
      _mcpreel`;
    return ok(run('zsh', ['-f', '-c', script]), `zsh completion of ${words.join(' ')}`).split('\n').filter(Boolean);
  };
  const described = zsh(['mcpreel', 'rec']);
  assert.equal(described[0], '_describe');
  assert.deepEqual(described.slice(1).map((d) => d.split(':')[0]), commands);
  assert.ok(described.includes('record:run an MCP server and record its traffic'), described.join('\n'));
  assert.deepEqual(zsh(['mcpreel', '--v']).slice(2).sort(), ['--help', '--log-file', '--quiet', '--verbose', '--version']);
  assert.deepEqual(zsh(['mcpreel', 'record', '--name', 'n', '--', 'bas']), ['_normal', '1', 'bas']);
  assert.deepEqual(zsh(['mcpreel', 'show', 'x']), ['_files']);
  for (const c of commands) {
    const out = zsh(['mcpreel', '--log-file', 'x.log', c, '--']);
    assert.deepEqual(out.slice(0, 2), ['compadd', '--']);
    assert.deepEqual(out.slice(2).sort(), options[c], `zsh: ${c}'s long options`);
  }

  ok(run('make', ['uninstall', `DESTDIR=${dest}`, 'PREFIX=/usr']), 'make uninstall');
  for (const f of Object.values(files)) assert.ok(!existsSync(f), `${f} is removed`);
});

test('make demo: one line for the dependencies and one for the build, then the demo, which says where mcpreel is', { timeout: MAKE_TIMEOUT_MS }, (t) => {
  const { dir, cleanup } = tempDir('mcpreel-demo-');
  t.after(cleanup);
  const r = run('make', ['demo', `BUILD=${BUILD}`], { timeout: MAKE_TIMEOUT_MS, env: { MCPREEL_DEMO_DIR: dir } });
  const out = ok(r, 'make demo');
  const lines = out.split('\n');
  const demo = lines.findIndex((l) => l.startsWith('== recording'));
  assert.ok(demo >= 0, out);
  assert.deepEqual(lines.slice(0, demo), [
    'checking dependencies (scripts/deps.sh demo)... ok',
    `building mcpreel in ${BUILD}/... done: ${BUILD}/mcpreel (log: ${BUILD}/build.log)`,
  ]);
  assert.match(readFileSync(join(BUILD, 'build.log'), 'utf8'), /Built target mcpreel/);
  assert.match(out, new RegExp(`mcpreel itself is ${MCPREEL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.`));
  assert.match(out, /sudo make install/);
  assert.match(out, /the client got the same results from the mock as from the real server/);
  assert.ok(existsSync(join(dir, 'demo.db')), 'the recording is in MCPREEL_DEMO_DIR');
  console.log(`# make demo: ${lines.length} lines, ${demo} before the demo`);
});

test('the quiet build, failing: the log\'s last lines and its path on stderr, exit 1', { timeout: MAKE_TIMEOUT_MS }, (t) => {
  const { dir, cleanup } = tempDir('mcpreel-build-');
  t.after(cleanup);
  const b = join(dir, 'b');

  // CMake cannot configure with a compiler that is not there.
  let r = run(join(TOP, 'scripts', 'build.sh'), [b], { env: { CC: '/nonexistent/cc' }, timeout: MAKE_TIMEOUT_MS });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, `building mcpreel in ${b}/... failed\n`);
  assert.match(r.stderr, new RegExp(`^mcpreel: configuring the build \\(cmake\\) failed; the last 30 lines of ${b}/build\\.log:\n`));
  assert.match(r.stderr, /\/nonexistent\/cc/);
  assert.match(r.stderr, new RegExp(`\\(the whole log: ${b}/build\\.log\\)\n$`));
  const shown = r.stderr.split('\n').length - 3;
  assert.ok(shown <= 30, `at most 30 lines of the log (${shown})`);

  // A dependency step that fails shows its own complaint.
  r = run(join(TOP, 'scripts', 'build.sh'), [b, 'nonsense'], { timeout: MAKE_TIMEOUT_MS });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, 'checking dependencies (scripts/deps.sh nonsense)... failed\n');
  assert.match(r.stderr, /usage: scripts\/deps\.sh build\|test\|demo\|fuzz\|bench/);
});
