// `mcpreel diff A B`: two recordings of the SDK client's session with
// server-everything compared with no server.  One of them through a
// wrapper that changes one tool's description and one tool's answer:
// exactly those two differences.  Two recordings of the same session:
// none (with the rules file the README shows).  The JUnit report and the
// exit statuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, tempDir } from './lib/util.mjs';

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
