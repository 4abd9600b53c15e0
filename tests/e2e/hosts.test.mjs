// mcpreel hosts, wrap and unwrap on each host's configuration files.
//
// Each host's fixture files (fixtures/hosts/<host>/home/... and
// .../project/..., written from the hosts' documentation with comments and
// odd formatting where the format allows) are copied into a temporary HOME
// and project directory, with @NODE@, @EVERYTHING@ and @PROJECT@ filled in
// so that the "everything" entry starts server-everything over stdio.  Then:
// `hosts --json`; `wrap --dry-run` (a diff that patch(1) applies to give
// what wrap writes, the file untouched); `wrap` (backup 0600 in a 0700
// state dir, the entry as the design says, the rest as it was); wrap again
// (no byte changes); `unwrap` (byte-exact); an edit elsewhere then unwrap
// (only our entries put back: the original with the same edit); an
// unparsable file (untouched, exit 1, line and column said); and the
// wrapped entry run exactly as the host would run it (command and args
// from the rewritten file, env merged over ours, cwd) with the SDK's stdio
// client against server-everything: the same transcript as the unwrapped
// entry, and the session recorded in the --db that wrap was given.
//
// The rewritten files are read with parsers of our own choosing, not
// mcpreel's: JSON.parse (after taking out comments and trailing commas for
// the JSONC hosts) and Python's tomllib for Codex.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

import {
  assertEveryMessageOnce, comparableTranscript, filesUnder, stdioTransportWithExit,
} from './lib/bridge.mjs';
import { checkRecordedMessages, findSecret, sessionsOf } from './lib/dbcheck.mjs';
import { startServerEverything } from './lib/servers.mjs';
import {
  runSession, runSessionWith, serverEverythingEntry, streamableHttpTransport,
} from './lib/session.mjs';
import { E2E_DIR, MCPREEL, sql, tempDir } from './lib/util.mjs';

const FIXTURES = join(E2E_DIR, 'fixtures', 'hosts');
const SELF = realpathSync(MCPREEL);

// What each host's fixtures hold, and what wrap must do with them.
//   files: [where ('home' | 'project'), path under it, format]
//   spawn: the file (index in files) and the path to the "everything"
//          entry's container in it
//   stdio: the stdio servers of all its files (wrapped by default)
//   bridged: remote entries wrap turns into record --connect
//   left: remote entries it leaves (with a note)
//   edit: an edit elsewhere in files[0] (from -> to), made after wrap
const HOSTS = [
  {
    id: 'claude-desktop',
    files: [['home', '.config/Claude/claude_desktop_config.json', 'json']],
    spawn: { file: 0, container: ['mcpServers'] },
    stdio: ['everything', 'notes', 'remote-bridge'],
    bridged: [],
    left: [],
    edit: ['"Ctrl+Space"', '"Alt+Space"'],
  },
  {
    id: 'claude-code',
    files: [['home', '.claude.json', 'json'], ['project', '.mcp.json', 'json']],
    spawn: { file: 0, container: ['mcpServers'] },
    stdio: ['everything', 'memory', 'tickets'],
    bridged: [{ name: 'docs', url: 'https://docs.example.com/mcp', header: 'X-Team: blue' },
      { name: 'search', url: 'https://search.example.com/sse' }],
    left: [],
    edit: ['"numStartups": 42', '"numStartups": 43'],
  },
  {
    id: 'cursor',
    files: [['home', '.cursor/mcp.json', 'jsonc'], ['project', '.cursor/mcp.json', 'jsonc']],
    spawn: { file: 0, container: ['mcpServers'] },
    stdio: ['everything', 'pg', 'local-tool'],
    bridged: [{ name: 'search', url: 'https://search.example.com/mcp', header: 'X-Client: cursor' }],
    left: [],
    edit: ['"-e", "PGURL"', '"-e", "PGURL", "-e", "PGUSER"'],
  },
  {
    id: 'vscode',
    files: [['project', '.vscode/mcp.json', 'jsonc'], ['home', '.config/Code/User/mcp.json', 'jsonc']],
    spawn: { file: 0, container: ['servers'] },
    stdio: ['everything', 'jira', 'fetch'],
    bridged: [{ name: 'github', url: 'https://api.githubcopilot.com/mcp/', header: 'X-MCP-Toolsets: repos' }],
    left: [],
    edit: ['/* the demo server */', '/* the demo server, edited */'],
  },
  {
    id: 'windsurf',
    files: [['home', '.codeium/windsurf/mcp_config.json', 'jsonc']],
    spawn: { file: 0, container: ['mcpServers'] },
    stdio: ['everything', 'git'],
    bridged: [{ name: 'zap', url: 'https://zap.example.com/mcp', header: 'X-Zap: 1' }],
    left: [],
    edit: ['"disabled": true', '"disabled": false'],
  },
  {
    id: 'gemini',
    files: [['home', '.gemini/settings.json', 'jsonc'], ['project', '.gemini/settings.json', 'jsonc']],
    spawn: { file: 0, container: ['mcpServers'] },
    stdio: ['everything', 'fsTools'],
    bridged: [{ name: 'remoteDocs', url: 'https://docs.example.com/mcp', header: 'X-Docs: yes', transport: 'http' },
      { name: 'legacySse', url: 'https://sse.example.com/sse', header: 'Authorization: Bearer $SSE_TOKEN', transport: 'sse' }],
    left: [],
    edit: ['"theme": "GitHub"', '"theme": "Default Light"'],
  },
  {
    id: 'codex',
    files: [['home', '.codex/config.toml', 'toml'], ['project', '.codex/config.toml', 'toml']],
    spawn: { file: 0, container: ['mcp_servers'] },
    stdio: ['everything', 'issues'],
    bridged: [],
    left: ['hosted'],
    edit: ['model = "gpt-5-codex"', 'model = "gpt-5"'],
  },
];

/** JSON with comments and trailing commas (JSONC) made plain JSON. */
function jsoncToJson(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 1;
    } else out += c;
  }
  // A comma followed (past blanks) by a closing bracket goes.
  return out.replace(/,(\s*[}\]])/g, '$1');
}

/** A config file's document, read as the host would read it. */
function parseConfig(path, format) {
  if (format === 'toml') {
    const out = execFileSync('python3', ['-c',
      'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))', path], { encoding: 'utf8' });
    return JSON.parse(out);
  }
  const text = readFileSync(path, 'utf8');
  return JSON.parse(format === 'jsonc' ? jsoncToJson(text) : text);
}

/** The value at a path of keys. */
function at(doc, keys) {
  return keys.reduce((o, k) => (o == null ? o : o[k]), doc);
}

/** Every server entry of a document: [{container, name, entry}]. */
function entriesOf(doc, id) {
  const found = [];
  const take = (container, obj) => {
    for (const [name, entry] of Object.entries(obj ?? {})) found.push({ container, name, entry });
  };
  const key = id === 'vscode' ? 'servers' : id === 'codex' ? 'mcp_servers' : 'mcpServers';
  take([key], doc[key]);
  if (id === 'claude-code') {
    for (const [p, v] of Object.entries(doc.projects ?? {})) take(['projects', p, 'mcpServers'], v.mcpServers);
  }
  return found;
}

/** A fresh HOME, project dir, state dir and db with the host's fixtures. */
function setup(host) {
  const t = tempDir('mcpreel-hosts-');
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  const fill = (text) => text.replaceAll('@NODE@', process.execPath)
    .replaceAll('@EVERYTHING@', serverEverythingEntry()).replaceAll('@PROJECT@', project);
  const paths = host.files.map(([where, rel]) => {
    const dst = join(where === 'home' ? home : project, rel);
    mkdirSync(dirname(dst), { recursive: true });
    writeFileSync(dst, fill(readFileSync(join(FIXTURES, host.id, where, rel), 'utf8')));
    return dst;
  });
  const env = { HOME: home, XDG_STATE_HOME: join(t.dir, 'state') };
  return { ...t, home, project, paths, env, db: join(t.dir, 'rec.db'), state: join(t.dir, 'state', 'mcpreel', 'hosts') };
}

/** Run mcpreel with the test's HOME; returns {code, stdout, stderr}. */
function mcpreel(s, args, extraEnv = {}, timeout = 60000) {
  const env = { ...process.env, ...s.env, ...extraEnv };
  for (const k of ['XDG_CONFIG_HOME', 'CODEX_HOME', 'MCPREEL_DB', 'XDG_DATA_HOME']) if (!(k in extraEnv)) delete env[k];
  const r = spawnSync(MCPREEL, args, { cwd: s.project, env, encoding: 'utf8', timeout });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const bytes = (paths) => paths.map((p) => readFileSync(p));

/** The args wrap gives a stdio entry. */
function wrappedArgs(name, db, command, args) {
  return ['record', ...(db ? ['--db', db] : []), '--name', name, '--', command, ...args];
}

for (const host of HOSTS) {
  test(`${host.id}: hosts --json lists its files and servers`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const r = mcpreel(s, ['hosts', '--json', '--project', s.project]);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout);
      const h = doc.hosts.find((x) => x.id === host.id);
      assert.ok(h && h.doc.startsWith('https://'), 'the host, with its documentation');
      const there = h.files.filter((f) => f.exists);
      assert.deepEqual(there.map((f) => f.path).sort(), [...s.paths].sort());
      const names = there.flatMap((f) => f.servers.map((e) => e.name)).sort();
      assert.deepEqual(names, [...host.stdio, ...host.bridged.map((b) => b.name), ...host.left].sort());
      for (const f of there) {
        assert.equal(f.error, null);
        for (const e of f.servers) {
          assert.equal(e.kind, host.stdio.includes(e.name) ? 'stdio' : 'remote', e.name);
          assert.equal(e.wrapped, false);
        }
      }
      // Every other host: no file here.
      for (const o of doc.hosts.filter((x) => x.id !== host.id)) {
        assert.deepEqual(o.files.filter((f) => f.exists), [], o.id);
      }
      const text = mcpreel(s, ['hosts', '--project', s.project]);
      assert.equal(text.code, 0);
      for (const n of host.stdio) assert.match(text.stdout, new RegExp(`^ +${n.replace('.', '\\.')} +stdio +not wrapped`, 'm'));
      // -v: the files that are not there too.
      const v = mcpreel(s, ['hosts', '-v', '--project', s.project]);
      assert.equal(v.code, 0);
      if (host.id !== 'windsurf') assert.match(v.stdout, /^ {2}user +~\/\.codeium\/windsurf\/mcp_config\.json \(not there\)$/m);
      assert.doesNotMatch(text.stdout, /\(not there\)/);
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: wrap --dry-run prints a diff patch(1) applies, writes nothing`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const before = bytes(s.paths);
      const r = mcpreel(s, ['wrap', '--dry-run', '--host', host.id, '--project', s.project, '--db', s.db]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(bytes(s.paths), before, 'nothing written');
      assert.ok(!existsSync(s.state), 'no state either');
      assert.match(r.stdout, /^--- .*\n\+\+\+ .* \(wrapped\)\n@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m);
      assert.match(r.stderr, /would wrap everything/);

      // Each file's part of the diff, applied to a copy, gives what wrap
      // writes.
      const parts = r.stdout.split(/^(?=--- )/m).filter(Boolean);
      assert.equal(parts.length, s.paths.length, 'a diff per file');
      const copies = s.paths.map((p, i) => {
        const c = join(s.dir, `copy${i}`);
        cpSync(p, c);
        const shown = p.replace(s.home, '~');
        const part = parts.find((x) => x.startsWith(`--- ${shown}\n`));
        assert.ok(part, `a diff of ${shown}`);
        writeFileSync(`${c}.diff`, part);
        execFileSync('patch', ['--quiet', '--binary', c, `${c}.diff`]);
        return c;
      });
      const w = mcpreel(s, ['wrap', '--host', host.id, '--project', s.project, '--db', s.db]);
      assert.equal(w.code, 0, w.stderr);
      s.paths.forEach((p, i) => assert.deepEqual(readFileSync(copies[i]), readFileSync(p), `${p}: patched = wrapped`));
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: wrap, wrap again, unwrap: entries as designed, byte-exact round trip`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const before = bytes(s.paths);
      const docsBefore = s.paths.map((p, i) => parseConfig(p, host.files[i][2]));
      const r = mcpreel(s, ['wrap', '--host', host.id, '--project', s.project, '--db', s.db]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^${host.id} .*: wrapped .*everything`, 'm'));
      assert.match(r.stdout, /^ {2}backup: /m);

      // State: 0700 directory, a backup 0600 holding the bytes before.
      assert.equal(statSync(s.state).mode & 0o777, 0o700);
      const backups = readdirSync(s.state).filter((f) => f.endsWith('.backup'));
      assert.equal(backups.length, s.paths.length, 'a backup per file');
      for (const b of backups) {
        assert.equal(statSync(join(s.state, b)).mode & 0o777, 0o600);
        assert.ok(before.some((x) => x.equals(readFileSync(join(s.state, b)))), 'the bytes before');
        assert.equal(statSync(join(s.state, b.replace(/\.backup$/, '.json'))).mode & 0o777, 0o600);
      }

      // Byte for byte, the file is the one before with each changed
      // entry's text (as the ledger has it) replaced, and nothing else.
      const ledgers = readdirSync(s.state).filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(s.state, f), 'utf8')));
      s.paths.forEach((p, i) => {
        const l = ledgers.find((x) => x.config === realpathSync(p));
        assert.ok(l, `a ledger for ${p}`);
        let expect = before[i].toString('utf8');
        for (const c of l.changes) {
          assert.equal(expect.split(c.before).length, 2, `${c.name}: its text is in the file once`);
          expect = expect.replace(c.before, () => c.after);
        }
        assert.equal(readFileSync(p, 'utf8'), expect, `${p}: only the entries changed`);
      });

      // Each entry: stdio ones run through mcpreel record, the rest of
      // the entry (env, cwd, type, ...) as it was; bridged ones become
      // record --connect; the left ones and everything else are as they
      // were.
      const docsAfter = s.paths.map((p, i) => parseConfig(p, host.files[i][2]));
      docsAfter.forEach((doc, i) => {
        const olds = entriesOf(docsBefore[i], host.id);
        for (const { container, name, entry } of entriesOf(doc, host.id)) {
          const old = olds.find((o) => o.name === name && o.container.join('/') === container.join('/')).entry;
          if (host.stdio.includes(name)) {
            assert.equal(entry.command, SELF, `${name}: command`);
            assert.deepEqual(entry.args, wrappedArgs(name, s.db, old.command, old.args ?? []), `${name}: args`);
            const { command: _c, args: _a, ...rest } = entry;
            const { command: _oc, args: _oa, ...oldRest } = old;
            assert.deepEqual(rest, oldRest, `${name}: the rest of the entry`);
          } else if (host.bridged.some((b) => b.name === name)) {
            const b = host.bridged.find((x) => x.name === name);
            assert.equal(entry.command, SELF, `${name}: bridged`);
            assert.deepEqual(entry.args.slice(0, 5), ['record', '--db', s.db, '--name', name]);
            assert.ok(entry.args.includes('--connect') && entry.args[entry.args.indexOf('--connect') + 1] === b.url, `${name}: --connect URL`);
            // Header values never on the command line (ps shows argv to
            // every user): in the entry's env, one "Name: value" a line.
            assert.ok(!entry.args.includes('--header'), `${name}: no --header in args`);
            if (b.header) assert.equal(entry.env?.MCPREEL_HEADERS, b.header, `${name}: env MCPREEL_HEADERS`);
            else assert.ok(!('MCPREEL_HEADERS' in (entry.env ?? {})), `${name}: no MCPREEL_HEADERS`);
            if (b.transport) {
              const t = entry.args.indexOf('--transport');
              assert.ok(t > 0 && entry.args[t + 1] === b.transport, `${name}: --transport ${b.transport}`);
            }
            for (const k of ['url', 'serverUrl', 'httpUrl', 'headers']) assert.ok(!(k in entry), `${name}: no ${k}`);
            if ('type' in old) assert.equal(entry.type, 'stdio');
          } else {
            assert.deepEqual(entry, old, `${name}: left as it was`);
          }
        }
        // Outside the server entries, the document is the same.
        const strip = (d) => {
          const c = structuredClone(d);
          for (const { container } of entriesOf(c, host.id)) delete at(c, container.slice(0, -1))[container.at(-1)];
          return c;
        };
        assert.deepEqual(strip(doc), strip(docsBefore[i]));
      });
      const j = JSON.parse(mcpreel(s, ['hosts', '--json', '--project', s.project]).stdout);
      for (const f of j.hosts.find((x) => x.id === host.id).files.filter((x) => x.exists)) {
        assert.ok(f.backup && existsSync(f.backup), `${f.path}: hosts --json says where its backup is`);
      }
      const ev = j.hosts.find((x) => x.id === host.id).files.flatMap((f) => f.servers).find((e) => e.name === 'everything');
      assert.equal(ev.wrapped, true);
      for (const name of host.left) {
        const e = j.hosts.find((x) => x.id === host.id).files.flatMap((f) => f.servers).find((x) => x.name === name);
        assert.equal(e.wrapped, false);
        assert.ok(e.note, `${name}: the reason it is left`);
      }

      // Wrapping twice changes no byte.
      const once = bytes(s.paths);
      const again = mcpreel(s, ['wrap', '--host', host.id, '--project', s.project, '--db', s.db]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(bytes(s.paths), once, 'wrap twice: the same bytes');
      assert.match(again.stdout, /nothing to wrap/);

      // Unwrap: byte for byte, and the state gone.
      const u = mcpreel(s, ['unwrap', '--host', host.id, '--project', s.project]);
      assert.equal(u.code, 0, u.stderr);
      assert.deepEqual(bytes(s.paths), before, 'unwrap: the bytes before wrap');
      assert.deepEqual(readdirSync(s.state), [], 'the state removed');
      const u2 = mcpreel(s, ['unwrap', '--host', host.id, '--project', s.project]);
      assert.equal(u2.code, 0);
      assert.match(u2.stdout, /nothing to unwrap/);
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: an edit elsewhere after wrap, then unwrap: only our entries put back`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const before = bytes(s.paths);
      assert.equal(mcpreel(s, ['wrap', '--host', host.id, '--project', s.project]).code, 0);
      const [from, to] = host.edit;
      const wrapped = readFileSync(s.paths[0], 'utf8');
      assert.ok(wrapped.includes(from), `the edit's text is in ${s.paths[0]}`);
      writeFileSync(s.paths[0], wrapped.replace(from, to));
      const u = mcpreel(s, ['unwrap', '--host', host.id, '--project', s.project]);
      assert.equal(u.code, 0, u.stderr);
      assert.equal(readFileSync(s.paths[0], 'utf8'), before[0].toString('utf8').replace(from, to), 'the original with the edit');
      for (let i = 1; i < s.paths.length; i++) assert.deepEqual(readFileSync(s.paths[i]), before[i]);
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: unwrap with the state lost rebuilds each entry from what it holds`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const before = bytes(s.paths);
      assert.equal(mcpreel(s, ['wrap', '--host', host.id, '--project', s.project, '--db', s.db]).code, 0);
      rmSync(s.state, { recursive: true });
      const u = mcpreel(s, ['unwrap', '--host', host.id, '--project', s.project]);
      assert.equal(u.code, 0, u.stderr);
      s.paths.forEach((p, i) => {
        // The same document; byte for byte where nothing was bridged (a
        // bridged entry's headers are written anew).
        const now = readFileSync(p);
        const orig = join(s.dir, `orig${i}`);
        writeFileSync(orig, before[i]);
        assert.deepEqual(parseConfig(p, host.files[i][2]), parseConfig(orig, host.files[i][2]), `${p}: the same document`);
        if (host.bridged.length === 0) assert.deepEqual(now, before[i], `${p}: byte for byte`);
      });
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: a file that does not parse is left untouched, exit 1`, { timeout: 60000 }, () => {
    const s = setup(host);
    try {
      const text = readFileSync(s.paths[0], 'utf8');
      // Cut inside the servers: a JSON object or TOML array left open.
      const cut = text.slice(0, text.indexOf(serverEverythingEntry()) + 3);
      writeFileSync(s.paths[0], cut);
      const others = bytes(s.paths.slice(1));
      const r = mcpreel(s, ['wrap', '--host', host.id, '--project', s.project]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(readFileSync(s.paths[0], 'utf8'), cut, 'untouched');
      assert.match(r.stderr, /line \d+ column \d+: .*; nothing was changed/);
      assert.ok(r.stderr.includes(s.paths[0].replace(s.home, '~')), 'the file is named');
      // The host's other files are still wrapped.
      if (s.paths.length > 1) assert.notDeepEqual(bytes(s.paths.slice(1)), others);
      const h = mcpreel(s, ['hosts', '--project', s.project]);
      assert.equal(h.code, 1);
      assert.match(h.stdout, /cannot be read: .*line \d+ column \d+/);
    } finally {
      s.cleanup();
    }
  });

  test(`${host.id}: the wrapped entry, run as the host runs it, gives the unwrapped transcript and is recorded`, { timeout: 180000 }, async () => {
    const s = setup(host);
    try {
      const [, , format] = host.files[host.spawn.file];
      const path = s.paths[host.spawn.file];
      const orig = at(parseConfig(path, format), host.spawn.container).everything;
      assert.equal(mcpreel(s, ['wrap', '--host', host.id, '--project', s.project, '--db', s.db, 'everything']).code, 0);
      const entry = at(parseConfig(path, format), host.spawn.container).everything;
      assert.equal(entry.command, SELF);
      // As the host does: the entry's env over the host's own, its cwd.
      const run = (e) => runSession(e.command, e.args ?? [], {
        env: { ...process.env, ...(e.env ?? {}) }, cwd: e.cwd, stderr: 'pipe',
      });
      const direct = await run(orig);
      const wrapped = await run(entry);
      assert.deepEqual(wrapped, direct, 'the same transcript through the wrapped entry');
      const rows = sql(s.db, "SELECT name, target, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n FROM sessions s");
      assert.equal(rows.length, 1);
      assert.equal(rows[0].name, 'everything');
      assert.deepEqual(JSON.parse(rows[0].target), [orig.command, ...orig.args]);
      assert.ok(rows[0].n > 20, `the session's messages recorded (${rows[0].n})`);
    } finally {
      s.cleanup();
    }
  });
}

test('wrap: a SERVER in no file is exit 2 and nothing is written; --config picks one file', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const before = bytes(s.paths);
    const r = mcpreel(s, ['wrap', '--project', s.project, 'everything', 'no-such-server']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no server named 'no-such-server'.*its servers: .*everything/);
    assert.deepEqual(bytes(s.paths), before);
    assert.ok(!existsSync(s.state));

    const c = mcpreel(s, ['wrap', '--config', s.paths[1]]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^claude-code .*\.mcp\.json: wrapped tickets/m);
    assert.deepEqual(readFileSync(s.paths[0]), before[0], 'the other file untouched');
    assert.notDeepEqual(readFileSync(s.paths[1]), before[1]);

    const u = mcpreel(s, ['unwrap', '--config', s.paths[1]]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(readFileSync(s.paths[1]), before[1]);

    const bad = mcpreel(s, ['wrap', '--host', 'nope']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--host nope: no such host; give one of claude-desktop/);
    const odd = mcpreel(s, ['wrap', '--config', join(s.dir, 'x.conf')]);
    assert.equal(odd.code, 2);
    // A file of another name: its host's layout given, or refused.
    const conf = join(s.dir, 'servers.conf');
    cpSync(s.paths[1], conf);
    const which = mcpreel(s, ['wrap', '--config', conf]);
    assert.equal(which.code, 2);
    assert.match(which.stderr, /cannot tell which host's file it is .*--host ID/);
    assert.equal(mcpreel(s, ['wrap', '--format', 'json']).code, 2, '--format without --config');
    const lay = mcpreel(s, ['wrap', '--config', conf, '--layout', 'claude-code', '--format', 'jsonc']);
    assert.equal(lay.code, 0, lay.stderr);
    assert.match(lay.stdout, /wrapped tickets, search/);
    assert.equal(parseConfig(conf, 'json').mcpServers.tickets.command, SELF);
  } finally {
    s.cleanup();
  }
});

test('wrap: a symlinked config file is written through the link, its mode kept', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'cursor');
  const s = setup(host);
  try {
    const real = join(s.dir, 'dotfiles-mcp.json');
    cpSync(s.paths[0], real);
    chmodSync(real, 0o640);
    execFileSync('ln', ['-sf', real, s.paths[0]]);
    const before = readFileSync(real);
    const r = mcpreel(s, ['wrap', '--host', 'cursor', '--project', s.project]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(statSync(s.paths[0], { throwIfNoEntry: true }) && readFileSync(s.paths[0]).equals(readFileSync(real)));
    assert.ok(execFileSync('readlink', [s.paths[0]], { encoding: 'utf8' }).trim() === real, 'still a link');
    assert.equal(statSync(real).mode & 0o777, 0o640, 'the mode kept');
    assert.notDeepEqual(readFileSync(real), before);
    assert.equal(mcpreel(s, ['unwrap', '--host', 'cursor', '--project', s.project]).code, 0);
    assert.deepEqual(readFileSync(real), before);
  } finally {
    s.cleanup();
  }
});

test('wrap after the file was put back by hand: unwrap gives the new text, not the first wrap\'s', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'cursor');
  const s = setup(host);
  try {
    const first = readFileSync(s.paths[0], 'utf8');
    assert.equal(mcpreel(s, ['wrap', '--host', 'cursor', '--project', s.project]).code, 0);
    // The user restores the file from elsewhere, one server changed.
    const mine = first.replace('"pg-mcp:3"', '"pg-mcp:4"');
    assert.notEqual(mine, first);
    writeFileSync(s.paths[0], mine);
    const w = mcpreel(s, ['wrap', '--host', 'cursor', '--project', s.project]);
    assert.equal(w.code, 0, w.stderr);
    assert.match(w.stdout, /wrapped everything, pg, search/);
    const u = mcpreel(s, ['unwrap', '--host', 'cursor', '--project', s.project]);
    assert.equal(u.code, 0, u.stderr);
    assert.equal(readFileSync(s.paths[0], 'utf8'), mine, 'the text the second wrap found');
    assert.deepEqual(readdirSync(s.state), [], 'nothing left wrapped: the state removed');
  } finally {
    s.cleanup();
  }
});

test('wrap --no-bridge leaves remote entries and says so; --mcpreel is the command written', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const before = parseConfig(s.paths[0], 'json');
    const r = mcpreel(s, ['wrap', '--no-bridge', '--mcpreel', '/opt/mcpreel/bin/mcpreel', '--config', s.paths[0]]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /wrapped everything, memory \(project \/home\/me\/src\/app\); left docs \(remote; --no-bridge\)/);
    const after = parseConfig(s.paths[0], 'json');
    assert.deepEqual(after.mcpServers.docs, before.mcpServers.docs);
    assert.equal(after.mcpServers.everything.command, '/opt/mcpreel/bin/mcpreel');
    assert.deepEqual(after.mcpServers.everything.args.slice(0, 4), ['record', '--name', 'everything', '--']);
  } finally {
    s.cleanup();
  }
});

test('wrap of a .mcp.json with 50 000 entries: every entry wrapped, the ledger has each, unwrap byte for byte', { timeout: 300000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const n = 50000;
    const servers = {};
    for (let i = 0; i < n; i++) servers[`s${i}`] = { command: 'node', args: [`x${i}.js`] };
    const file = join(s.project, '.mcp.json');
    writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
    const before = readFileSync(file);
    const r = mcpreel(s, ['wrap', '--config', file], {}, 280000);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(Object.keys(doc.mcpServers).length, n);
    assert.deepEqual(doc.mcpServers.s49999.args, ['record', '--name', 's49999', '--', 'node', 'x49999.js']);
    const ledger = readdirSync(s.state).find((x) => x.endsWith('.json'));
    assert.equal(JSON.parse(readFileSync(join(s.state, ledger), 'utf8')).changes.length, n);
    const u = mcpreel(s, ['unwrap', '--config', file], {}, 280000);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(readFileSync(file), before);
    assert.deepEqual(readdirSync(s.state), []);
  } finally {
    s.cleanup();
  }
});

test('wrap with the ledger but its backup gone: unwrap puts entries back one by one, not from the new backup', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const file = join(s.project, '.mcp.json');
    const orig = JSON.stringify({ mcpServers: { a: { command: 'node', args: ['a.js'] }, b: { command: 'node', args: ['b.js'] } } }, null, 2);
    writeFileSync(file, orig);
    assert.equal(mcpreel(s, ['wrap', '--config', file, 'a']).code, 0);
    for (const x of readdirSync(s.state)) if (x.endsWith('.backup')) rmSync(join(s.state, x));
    assert.equal(mcpreel(s, ['wrap', '--config', file, 'b']).code, 0);
    const u = mcpreel(s, ['unwrap', '--config', file]);
    assert.equal(u.code, 0, u.stderr);
    assert.doesNotMatch(u.stdout, /whole file/);
    assert.equal(readFileSync(file, 'utf8'), orig);
    assert.deepEqual(readdirSync(s.state), []);
  } finally {
    s.cleanup();
  }
});

test('unwrap of an entry it cannot tell the command of: not claimed, exit 1, file not rewritten', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const file = join(s.project, '.mcp.json');
    writeFileSync(file, '{"mcpServers": {"a": {"command": "mcpreel", "args": ["record", "--name", "a"]}}}');
    const st0 = statSync(file);
    const u = mcpreel(s, ['unwrap', '--config', file]);
    assert.equal(u.code, 1);
    assert.doesNotMatch(u.stdout, /unwrapped a/);
    assert.match(u.stderr, /a: cannot tell the command/);
    assert.equal(statSync(file).ino, st0.ino, 'not rewritten');
  } finally {
    s.cleanup();
  }
});

test('a FIFO as a config file is refused, not waited on', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const file = join(s.project, '.mcp.json');
    rmSync(file, { force: true });
    execFileSync('mkfifo', [file]);
    for (const cmd of [['hosts', '--project', s.project], ['wrap', '--config', file], ['unwrap', '--config', file]]) {
      const r = mcpreel(s, cmd, {}, 10000);
      assert.notEqual(r.code, null, `${cmd[0]}: did not hang`);
      if (cmd[0] !== 'hosts') assert.equal(r.code, 1);
    }
  } finally {
    s.cleanup();
  }
});

test('a backup left without its ledger is removed by unwrap once nothing is wrapped', { timeout: 60000 }, () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const file = join(s.project, '.mcp.json');
    const before = readFileSync(file);
    assert.equal(mcpreel(s, ['wrap', '--config', file]).code, 0);
    for (const x of readdirSync(s.state)) if (x.endsWith('.json')) rmSync(join(s.state, x));
    const u = mcpreel(s, ['unwrap', '--config', file]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(readFileSync(file), before);
    assert.deepEqual(readdirSync(s.state), [], 'the stray backup removed');
  } finally {
    s.cleanup();
  }
});

test('wrap killed at any point never leaves a wrapped file without its ledger', { timeout: 300000 }, async () => {
  const host = HOSTS.find((h) => h.id === 'claude-code');
  const s = setup(host);
  try {
    const servers = {};
    for (let i = 0; i < 20000; i++) servers[`s${i}`] = { command: 'node', args: [`x${i}.js`] };
    const file = join(s.project, '.mcp.json');
    const orig = JSON.stringify({ mcpServers: servers }, null, 2);
    const env = { ...process.env, ...s.env };
    let sawWrapped = false;
    for (const ms of [200, 500, 1000, 1500, 2000, 3000, 4000, 6000]) {
      writeFileSync(file, orig);
      rmSync(s.state, { recursive: true, force: true });
      const child = spawn(MCPREEL, ['wrap', '--config', file], { env, stdio: 'ignore' });
      const done = new Promise((resolve) => child.on('exit', resolve));
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      await done;
      clearTimeout(timer);
      if (readFileSync(file, 'utf8') !== orig) {
        sawWrapped = true;
        const names = existsSync(s.state) ? readdirSync(s.state) : [];
        assert.ok(names.some((x) => x.endsWith('.json')), `killed after ${ms} ms: the file is wrapped, so its ledger is there`);
        assert.ok(names.some((x) => x.endsWith('.backup')), `killed after ${ms} ms: and its backup`);
      }
    }
    assert.ok(sawWrapped, 'at least one run got as far as writing');
  } finally {
    s.cleanup();
  }
});

// A bridged remote entry run as the host runs it.  The entry is a remote
// one with a bearer token placeholder in its headers; the host expands the
// placeholder (Claude Code: ${VAR} in command, args and env values; VS
// Code: ${env:VAR}) from its own environment when it starts the command.
// The token must then reach the server with every request, through
// MCPREEL_HEADERS in mcpreel's environment, never through its argv, and be
// written to no file.

/** Claude Code's expansion of ${VAR} and ${VAR:-default} in one string. */
function expandClaudeCode(text, env) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (m, name, dflt) => {
    if (env[name] !== undefined) return env[name];
    if (dflt !== undefined) return dflt;
    throw new Error(`${m}: not set`);
  });
}

/** VS Code's expansion of ${env:VAR}, ${userHome} and ${workspaceFolder} in one string. */
function expandVscode(text, env, workspace) {
  return text.replace(/\$\{([^}]*)\}/g, (m, what) => {
    if (what.startsWith('env:')) return env[what.slice(4)] ?? '';
    if (what === 'userHome') return env.HOME;
    if (what === 'workspaceFolder') return workspace;
    throw new Error(`${m}: not expanded by this test`);
  });
}

// Loaded into server-everything: each HTTP request's Authorization header
// (or its absence) as a line on stderr, which the test reads from memory.
const LOG_AUTH = `import http from 'node:http';
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (ev, req, ...rest) {
  if (ev === 'request') process.stderr.write('mcpreel-e2e-auth: ' + req.method + ' ' + JSON.stringify(req.headers.authorization ?? null) + '\\n');
  return emit.call(this, ev, req, ...rest);
};`;

const BRIDGED_SPAWN = [
  {
    id: 'claude-code',
    rel: '.mcp.json',
    format: 'json',
    container: ['mcpServers'],
    text: (url) => `{
  "mcpServers": {
    "remote": {"type": "http", "url": ${JSON.stringify(url)}, "headers": {"Authorization": "Bearer \${TOKEN}"}}
  }
}
`,
    expand: (s, env) => expandClaudeCode(s, env),
  },
  {
    id: 'vscode',
    rel: '.vscode/mcp.json',
    format: 'jsonc',
    container: ['servers'],
    text: (url) => `// The team's remote server.
{
  "servers": {
    /* over Streamable HTTP, with a token from the environment */
    "remote": {
      "type": "http",
      "url": ${JSON.stringify(url)},
      "headers": {"Authorization": "Bearer \${env:TOKEN}"}, // not in git
    },
  },
}
`,
    expand: (s, env, project) => expandVscode(s, env, project),
  },
];

for (const host of BRIDGED_SPAWN) {
  test(`${host.id}: a bridged remote entry, run as the host runs it, gives the direct transcript, is recorded, and its token is in no file nor argv`, { timeout: 240000 }, async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const se = await startServerEverything('streamableHttp', {
      env: { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(LOG_AUTH)}` },
    });
    const s = setup({ files: [] });
    try {
      const path = join(s.project, host.rel);
      mkdirSync(dirname(path), { recursive: true });
      const original = Buffer.from(host.text(se.url));
      writeFileSync(path, original);

      const w = mcpreel(s, ['wrap', '--db', s.db, '--config', path, '--host', host.id]);
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stdout, /wrapped remote/);
      const entry = at(parseConfig(path, host.format), host.container).remote;
      assert.equal(entry.command, SELF);
      assert.equal(entry.type, 'stdio');
      assert.ok(!('url' in entry) && !('headers' in entry), 'url and headers gone');

      // The host: its own environment holds TOKEN; it expands the entry's
      // command, args and env values, and starts the command with the
      // entry's env over its own, in the project directory.
      const hostEnv = { ...process.env, ...s.env, TOKEN: token };
      const x = (v) => host.expand(v, hostEnv, s.project);
      const command = x(entry.command);
      const args = (entry.args ?? []).map(x);
      const env = { ...hostEnv, ...Object.fromEntries(Object.entries(entry.env ?? {}).map(([k, v]) => [k, x(v)])) };
      assert.equal(env.MCPREEL_HEADERS, `Authorization: Bearer ${token}`, 'the header, expanded by the host, in the env');
      assert.ok(!args.some((a) => a.includes(token)), `the token is not in the args: ${JSON.stringify(args)}`);

      const direct = await runSessionWith(streamableHttpTransport(se.url, { headers: { Authorization: `Bearer ${token}` } }));
      const want = comparableTranscript(direct);
      const directRequests = (se.stderr().match(/^mcpreel-e2e-auth: /gm) ?? []).length;

      const diag = {};
      let cmdline = null;
      let walHits = null;
      let walSeen = false;
      const bridged = await runSessionWith(stdioTransportWithExit(command, args, { env, cwd: s.project }), {
        diagnostics: diag,
        requestTimeoutMs: 15000,
        onStep: ({ step }) => {
          // While mcpreel runs: its argv as the kernel shows it to every
          // user, and every file under the test dir (the db's -wal is
          // there now).
          if (step === 'initialize') cmdline = readFileSync(`/proc/${diag.pid}/cmdline`);
          if (step === 'ping (final)') {
            const files = filesUnder(s.dir);
            walSeen = files.some((f) => f.path === `${s.db}-wal` && f.bytes.length > 0);
            walHits = files.filter((f) => f.bytes.includes(Buffer.from(token))).map((f) => f.path);
          }
        },
      });
      await diag.exited;
      assert.deepEqual(comparableTranscript(bridged), want, 'the stdio host sees what an HTTP client sees directly');
      assert.deepEqual(diag.exit, { code: 0, signal: null }, `exit 0; stderr:\n${diag.stderr}`);
      assert.doesNotMatch(diag.stderr, /AddressSanitizer|LeakSanitizer|runtime error:/);
      assert.ok(!diag.stderr.includes(token), 'the token is not on stderr');

      assert.ok(cmdline, 'mcpreel\'s argv read while it ran');
      assert.deepEqual(cmdline.toString().split('\0').slice(0, -1), [command, ...args], 'the argv is the entry\'s');
      assert.ok(!cmdline.includes(Buffer.from(token)), 'the token is not in /proc/PID/cmdline');

      // Every request mcpreel made carried the header.
      const auth = se.stderr().split('\n').filter((l) => l.startsWith('mcpreel-e2e-auth: ')).slice(directRequests);
      assert.ok(auth.length >= 3, `mcpreel's requests seen by the server: ${auth.length}`);
      for (const l of auth) assert.ok(l.endsWith(JSON.stringify(`Bearer ${token}`)), `with the token: ${l.replace(token, '<TOKEN>')}`);

      const sessions = sessionsOf(s.db);
      assert.equal(sessions.length, 1);
      assert.equal(sessions[0].name, 'remote');
      assert.equal(sessions[0].transport, 'http');
      assert.ok(String(sessions[0].target).includes(se.url), `the target is the URL: ${sessions[0].target}`);
      const rows = checkRecordedMessages(s.db, sessions[0].id, diag);
      assertEveryMessageOnce(rows, diag);

      assert.ok(walSeen, 'the db\'s -wal was there to look in while mcpreel ran');
      assert.deepEqual(walHits, [], 'the token in no file while mcpreel ran');
      console.log(`# ${host.id}: ${rows.length} messages recorded, ${auth.length} requests with the token, target ${sessions[0].target}`);
      assert.ok(existsSync(s.state) && readdirSync(s.state).length >= 2, 'the state dir has the backup and ledger');
      const withToken = filesUnder(s.dir).filter((f) => f.bytes.includes(Buffer.from(token))).map((f) => f.path);
      assert.deepEqual(withToken, [], 'the token is in no file under the test dir (config, db, state)');
      assert.deepEqual(findSecret(s.db, token), [], 'nor anywhere in the database');

      const u = mcpreel(s, ['unwrap', '--config', path, '--host', host.id]);
      assert.equal(u.code, 0, u.stderr);
      assert.deepEqual(readFileSync(path), original, 'unwrap: byte for byte');
    } finally {
      s.cleanup();
      await se.stop();
    }
  });
}
