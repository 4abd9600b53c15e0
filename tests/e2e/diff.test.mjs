// `mcpreel diff A B`: two recordings of the SDK client's session with
// server-everything compared with no server.  One of them through a
// wrapper that changes one tool's description and one tool's answer:
// exactly those two differences.  Two recordings of the same session:
// none (with the rules file the README shows).  The JUnit report and the
// exit statuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

// The rules file the README shows for server-everything.
const RULES_FILE = join(E2E_DIR, '..', '..', 'examples', 'everything-rules.json');
// What the wrapper changes.
const DESCRIBED = 'echo';
const NEW_DESCRIPTION = 'Echoes back the input, loudly';
const ANSWERED = 'get-tiny-image';
const NEW_TEXT = 'no image today';

async function record(db, name, wrap = []) {
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', name, '--', ...wrap, command, ...args], { stderr: 'pipe' });
}

/**
 * Whether text is well-formed XML of the kind JUnit reports are: a
 * declaration, then elements with quoted attributes, text with only the
 * five predefined entities, every tag closed in order.  xmllint, when
 * the machine has it, must agree.
 */
function wellFormed(text, file) {
  const lint = spawnSync('xmllint', ['--noout', file]);
  if (!lint.error) assert.equal(lint.status, 0, `xmllint: ${lint.stderr}`);
  let rest = text.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, '');
  if (rest === text) return false;
  const stack = [];
  const entity = /^&(lt|gt|amp|quot|apos);/;
  while (rest.length > 0) {
    if (rest[0] === '<') {
      const m = /^<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/.exec(rest);
      if (!m) return false;
      for (const a of m[3].matchAll(/="([^"]*)"/g)) {
        if (/&(?!(lt|gt|amp|quot|apos);)/.test(a[1])) return false;
      }
      if (m[1] === '/') {
        if (stack.pop() !== m[2]) return false;
      } else if (m[4] !== '/') stack.push(m[2]);
      rest = rest.slice(m[0].length);
    } else if (rest[0] === '&') {
      const m = entity.exec(rest);
      if (!m) return false;
      rest = rest.slice(m[0].length);
    } else {
      if (stack.length === 0 && rest[0].trim() !== '') return false;
      rest = rest.slice(1);
    }
  }
  return stack.length === 0;
}

function retool() {
  return [process.execPath, join(PEERS_DIR, 'retool.mjs'), DESCRIBED, NEW_DESCRIPTION, ANSWERED, NEW_TEXT, '--'];
}

test('diff: a wrapper that changes one description and one answer gives exactly those two differences', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'd.db');
    await record(db, 'v1');
    await record(db, 'v2', retool());

    const r = await runMcpreel(['diff', '--db', db, 'v1', 'v2', '--rules', RULES_FILE, '--json'], { timeoutMs: 60000 });
    const out = r.stdout.toString();
    assert.equal(r.code, 1, `exit status: ${r.stderr}`);
    const rep = JSON.parse(out);
    assert.deepEqual(rep.only_in_a, []);
    assert.deepEqual(rep.only_in_b, []);
    assert.equal(rep.requests_a, rep.requests_b);
    assert.equal(rep.different, 1, JSON.stringify(rep.differences).slice(0, 2000));
    assert.equal(rep.missing, 0);
    assert.equal(rep.differences.length, 1);
    const d = rep.differences[0];
    assert.equal(d.method, 'tools/call');
    assert.equal(d.b, NEW_TEXT);
    assert.match(d.path, /^\$\.result\.content/);
    assert.deepEqual(rep.definitions.tools.added, []);
    assert.deepEqual(rep.definitions.tools.removed, []);
    assert.equal(rep.definitions.tools.changed.length, 1);
    const c = rep.definitions.tools.changed[0];
    assert.equal(c.name, DESCRIBED);
    assert.deepEqual(c.fields, ['description']);
    assert.deepEqual(c.differences.map((x) => [x.path, x.b]), [['$.description', NEW_DESCRIPTION]]);
    for (const k of ['prompts', 'resources', 'resourceTemplates']) {
      assert.equal(rep.definitions[k].compared, true, k);
      assert.deepEqual([rep.definitions[k].added, rep.definitions[k].removed, rep.definitions[k].changed], [[], [], []], k);
    }
    assert.equal(rep.exit_status, 1);

    // The text report says the same to a person.
    const tx = await runMcpreel(['diff', '--db', db, 'v1', 'v2', '--rules', RULES_FILE], { timeoutMs: 60000 });
    assert.equal(tx.code, 1);
    const text = tx.stdout.toString();
    assert.match(text, /1 different, 0 missing in B/);
    assert.match(text, /tools: 0 added, 0 removed, 1 changed/);
    assert.match(text, new RegExp(`tool ${DESCRIBED} changed: description`));
    assert.match(text, new RegExp(`\\$\\.description: .* -> "${NEW_DESCRIPTION}"`));

    // JUnit: valid XML with exactly the two failures.
    const xml = join(t.dir, 'd.xml');
    const j = await runMcpreel(['diff', '--db', db, 'v1', 'v2', '--rules', RULES_FILE, '--junit', xml], { timeoutMs: 60000 });
    assert.equal(j.code, 1);
    const x = readFileSync(xml, 'utf8');
    assert.ok(wellFormed(x, xml), 'the JUnit report is well-formed XML');
    assert.equal((x.match(/<failure /g) ?? []).length, 2, 'exactly two failures');
    assert.match(x, /failures="2"/);
    assert.match(x, new RegExp(`name="tool ${DESCRIBED}"><failure message="changed: description">`));
    assert.match(j.stdout.toString(), /1 different/, 'the text report on stdout too');
  } finally {
    t.cleanup();
  }
});

test('diff: two cassettes exported from the recordings give the same report as the sessions', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'c.db');
    await record(db, 'v1');
    await record(db, 'v2', retool());
    const va = join(t.dir, 'v1.jsonl');
    const vb = join(t.dir, 'v2.jsonl');
    for (const [name, file] of [['v1', va], ['v2', vb]]) {
      const e = await runMcpreel(['export', '--db', db, name, '-o', file]);
      assert.equal(e.code, 0, e.stderr.toString());
    }
    const fromDb = await runMcpreel(['diff', '--db', db, 'v1', 'v2', '--rules', RULES_FILE, '--json'], { timeoutMs: 60000 });
    assert.equal(fromDb.code, 1, fromDb.stderr.toString());
    // No database at all for the cassettes: --db names one that is not there.
    const none = join(t.dir, 'none.db');
    const fromFiles = await runMcpreel(['diff', '--db', none, va, vb, '--rules', RULES_FILE, '--json'], { timeoutMs: 60000 });
    assert.equal(fromFiles.code, 1, fromFiles.stderr.toString());
    assert.deepEqual(JSON.parse(fromFiles.stdout.toString()), JSON.parse(fromDb.stdout.toString()));
    assert.equal(JSON.parse(fromFiles.stdout.toString()).definitions.tools.changed.length, 1);
    assert.ok(!existsSync(none), 'reading cassettes creates no database');
    // One side a session, the other a cassette: the same again.
    const mixed = await runMcpreel(['diff', '--db', db, 'v1', vb, '--rules', RULES_FILE, '--json'], { timeoutMs: 60000 });
    assert.equal(mixed.code, 1, mixed.stderr.toString());
    assert.deepEqual(JSON.parse(mixed.stdout.toString()), JSON.parse(fromDb.stdout.toString()));
    // The text report of the cassettes: the same lines.
    const ta = await runMcpreel(['diff', '--db', db, 'v1', 'v2', '--rules', RULES_FILE]);
    const tb = await runMcpreel(['diff', va, vb, '--rules', RULES_FILE]);
    assert.equal(tb.stdout.toString(), ta.stdout.toString());
  } finally {
    t.cleanup();
  }
});

test('diff: two recordings of the same session give none with the README rules file, and the time of day without it', { timeout: 240000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 's.db');
    await record(db, 'one');
    await record(db, 'two');

    const r = await runMcpreel(['diff', '--db', db, 'one', 'two', '--rules', RULES_FILE, '--report', 'json'], { timeoutMs: 60000 });
    assert.equal(r.code, 0, `exit status: ${r.stdout.toString().slice(0, 3000)} ${r.stderr}`);
    const rep = JSON.parse(r.stdout.toString());
    assert.ok(rep.requests_a > 20, 'the whole session');
    assert.equal(rep.requests_a, rep.requests_b);
    assert.equal(rep.exchanges + rep.list_answers, rep.requests_a, 'every request paired');
    assert.equal(rep.same, rep.exchanges);
    assert.deepEqual(rep.differences, []);
    assert.deepEqual([rep.only_in_a, rep.only_in_b], [[], []]);
    for (const k of ['tools', 'prompts', 'resources', 'resourceTemplates']) {
      assert.equal(rep.definitions[k].compared, true, k);
      assert.deepEqual([rep.definitions[k].added, rep.definitions[k].removed, rep.definitions[k].changed], [[], [], []], k);
    }
    assert.deepEqual(rep.unused_rules, [], 'the README rules all did something');
    assert.equal(rep.exit_status, 0);

    // The JUnit report: valid, no failure.
    const xml = join(t.dir, 's.xml');
    const j = await runMcpreel(['diff', '--db', db, 'one', 'two', '--rules', RULES_FILE, '--report', 'junit', '-o', xml], { timeoutMs: 60000 });
    assert.equal(j.code, 0);
    const x = readFileSync(xml, 'utf8');
    assert.ok(wellFormed(x, xml));
    assert.match(x, /failures="0"/);
    assert.doesNotMatch(x, /<failure/);
    assert.equal((x.match(/<testcase /g) ?? []).length, rep.exchanges, 'a testcase per exchange');

    // Without the rules the times of day differ: the rules are what hide them.
    const bare = await runMcpreel(['diff', '--db', db, 'one', 'two', '--json'], { timeoutMs: 60000 });
    const brep = JSON.parse(bare.stdout.toString());
    if (brep.differences.length > 0) {
      assert.equal(bare.code, 1);
      for (const d of brep.differences) assert.match(JSON.stringify([d.a, d.b]), /[0-9]:[0-9]{2}:[0-9]{2}|^\["[A-Za-z0-9+/=]+","[A-Za-z0-9+/=]+"\]$/, d.path);
    } else {
      assert.equal(bare.code, 0, 'both recorded within the same second');
    }
  } finally {
    t.cleanup();
  }
});

test('diff: requests only in A and only in B, repeats paired in order; exit statuses and mistakes', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'a.db');
    const asker = join(PEERS_DIR, 'asker.mjs');
    const call = (id, name) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const rec = async (name, calls) => {
      const input = calls.map((c, i) => call(i + 1, c)).join('\n') + '\n';
      const r = await runMcpreel(['record', '--db', db, '--name', name, '--', process.execPath, asker], { input: Buffer.from(input) });
      assert.equal(r.code, 0, r.stderr.toString());
    };
    await rec('a', ['x', 'y', 'x']);
    await rec('b', ['x', 'z', 'x', 'x']);

    let r = await runMcpreel(['diff', '--db', db, 'a', 'b', '--json']);
    assert.equal(r.code, 1, r.stderr.toString());
    const rep = JSON.parse(r.stdout.toString());
    // Seqs as recorded: the asker answers as they come, so they interleave.
    const seqs = (name) => sql(db, `SELECT m.seq, json_extract(CAST(m.raw AS TEXT), '$.params.name') AS tool FROM messages m
      JOIN sessions s ON s.id = m.session_id WHERE s.name = '${name}' AND m.direction = 'c2s' ORDER BY m.seq`);
    const sa = seqs('a');
    const sb = seqs('b');
    assert.deepEqual(sa.map((x) => x.tool), ['x', 'y', 'x']);
    assert.deepEqual(rep.only_in_a.map((o) => [o.seq, o.method, o.params]), [[sa[1].seq, 'tools/call', '{"name":"y","arguments":{}}']]);
    assert.deepEqual(rep.only_in_b.map((o) => [o.seq, o.params]),
      [[sb[1].seq, '{"name":"z","arguments":{}}'], [sb[3].seq, '{"name":"x","arguments":{}}']], 'z, and the third x');
    assert.deepEqual(rep.results.map((x) => [x.seq_a, x.seq_b, x.status]),
      [[sa[0].seq, sb[0].seq, 'same'], [sa[2].seq, sb[2].seq, 'same']], 'x with x, in order');
    assert.deepEqual(rep.definitions.tools, { compared: false, listed_in_a: false, listed_in_b: false, added: [], removed: [], changed: [] });
    r = await runMcpreel(['diff', '--db', db, 'a', 'b']);
    assert.match(r.stdout.toString(), new RegExp(`only in A: seq ${sa[1].seq} tools/call \\{"name":"y"`));
    assert.match(r.stdout.toString(), new RegExp(`only in B: seq ${sb[3].seq} tools/call \\{"name":"x"`));

    // The same session twice, and an --ignore-tool that hides nothing
    // paired: still the requests only on one side.
    r = await runMcpreel(['diff', '--db', db, 'a', 'a']);
    assert.equal(r.code, 0, r.stdout.toString());
    assert.match(r.stdout.toString(), /3 exchanges compared, 3 same/);
    r = await runMcpreel(['diff', '--db', db, 'b', 'b', '--ignore-tool', 'z', '--json']);
    assert.equal(r.code, 0);
    assert.equal(JSON.parse(r.stdout.toString()).ignored, 1);

    // Could not run: exit 2, one clear line.
    r = await runMcpreel(['diff', '--db', db, 'a', 'nope']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /mcpreel diff: .*no session with id or name 'nope'/);
    r = await runMcpreel(['diff', '--db', db, 'a']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /give two sessions, A and B/);
    r = await runMcpreel(['diff', '--db', db, 'a', 'b', '--jsn']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /'--json'/, 'the nearest spelling');
    r = await runMcpreel(['diff', '--db', db, 'a', 'b', '--report', 'xml']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /--report takes text, json or junit/);
    r = await runMcpreel(['diff', '--db', db, 'a', 'b', '--rules', join(t.dir, 'missing.json')]);
    assert.equal(r.code, 2);
    r = await runMcpreel(['diff', '--db', join(t.dir, 'none.db'), 'a', 'b']);
    assert.equal(r.code, 2);
    r = await runMcpreel(['diff', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout.toString(), /usage: mcpreel diff/);
    assert.match(r.stdout.toString(), /examples:\n  mcpreel diff /);
    assert.match(r.stdout.toString(), /or cassettes: files that 'mcpreel export' wrote/);
    assert.match(r.stdout.toString(), /not stdout \(with\n +json or junit, the text report still goes/);
  } finally {
    t.cleanup();
  }
});
