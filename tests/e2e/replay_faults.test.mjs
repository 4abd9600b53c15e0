// Replay and mock on unusual but legal recordings and targets: empty
// lines recorded both ways; a target that cannot be reached or goes away
// mid-replay.  Every run is the sanitizer build: no report may appear.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const SANITIZER = /runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer/;

function clean(r, what) {
  assert.doesNotMatch(r.stderr.toString(), SANITIZER, `${what}: no sanitizer report`);
}

const lines = (...l) => Buffer.from(l.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)) + '\n').join(''));

test('empty lines recorded both ways: replay and mock run them, no sanitizer report', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'e.db');
    const peer = ['node', join(PEERS_DIR, 'emptypeer.mjs')];
    const input = lines({ jsonrpc: '2.0', id: 1, method: 'ping' }, '', { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    let r = await runMcpreel(['record', '--db', db, '--name', 'empty', '--', ...peer], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    clean(r, 'record');
    const empties = sql(db, "SELECT direction FROM messages WHERE length(raw) = 0 ORDER BY seq");
    assert.ok(empties.some((m) => m.direction === 'c2s'), 'an empty client line is recorded');
    assert.ok(empties.some((m) => m.direction === 's2c'), 'an empty server line is recorded');

    // The same session again through cat: its empty lines are echoed.
    r = await runMcpreel(['record', '--db', db, '--name', 'cat', '--', 'cat'], { input });
    assert.equal(r.code, 0, r.stderr.toString());

    r = await runMcpreel(['replay', '--db', db, 'empty', '--', ...peer]);
    clean(r, 'replay');
    assert.equal(r.code, 0, r.stderr.toString());
    assert.match(r.stdout.toString(), /2 requests, 2 same, 0 different, 0 missing/);
    r = await runMcpreel(['replay', '--db', db, 'cat', '--', 'cat']);
    clean(r, 'replay of the cat session');
    assert.ok(r.code === 0 || r.code === 1, `replay runs to its end: ${r.code} ${r.stderr}`);

    for (const s of ['empty', 'cat']) {
      r = await runMcpreel(['mock', '--db', db, s], { input });
      clean(r, `mock ${s}`);
      assert.equal(r.code, 0, r.stderr.toString());
    }
    r = await runMcpreel(['mock', '--db', db, 'empty'], { input });
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(out.map((m) => m.result?.echo ?? m.error?.code), ['ping', -32700, 'tools/list'],
      'both requests answered from the recording, the empty line gets a parse error');
  } finally {
    t.cleanup();
  }
});
