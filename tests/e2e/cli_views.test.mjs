// `mcpreel sessions` and `mcpreel show`, on sessions recorded here, and the
// default database location.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { runMcpreel, tempDir } from './lib/util.mjs';

// `cat` as the server echoes every host line back, so each line is seen
// twice: once each way.
const INPUT = Buffer.concat([
  Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'),
  Buffer.from('not json\n'),
  Buffer.from([0xff, 0x0a]),
  Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'),
]);

async function record(db, name) {
  const r = await runMcpreel(['record', '--db', db, '--name', name, '--', 'cat'], { input: INPUT });
  assert.equal(r.code, 0, r.stderr.toString());
}

test('sessions and show, as text and JSON', async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'v.db');
    await record(db, 'first');
    await record(db, 'second');

    const list = await runMcpreel(['sessions', '--db', db, '--json']);
    assert.equal(list.code, 0);
    const sessions = list.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(sessions.map((s) => [s.id, s.name, s.transport, s.messages, s.exit_status]),
      [[1, 'first', 'stdio', 8, 0], [2, 'second', 'stdio', 8, 0]]);
    assert.deepEqual(sessions[0].target, ['cat']);
    assert.equal(sessions[0].bytes, INPUT.length * 2 - 8);

    const text = await runMcpreel(['sessions', '--db', db]);
    assert.match(text.stdout.toString(), /^\s+ID\s+NAME/);
    assert.match(text.stdout.toString(), /\n\s+2\s+second\s+stdio .* exit 0\s+cat\n/);

    const js = await runMcpreel(['show', '--db', db, '--json', 'first']);
    assert.equal(js.code, 0);
    const rows = js.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(rows.length, 8);
    assert.deepEqual(rows.map((r) => [r.seq, r.direction, r.kind]).slice(0, 4),
      [[1, 'c2s', 'request'], [2, 'c2s', 'invalid'], [3, 'c2s', 'invalid'], [4, 'c2s', 'response']]);
    assert.deepEqual(rows[0].message, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(rows[0].id, 1);
    assert.equal(rows[1].raw, 'not json');
    assert.deepEqual(Buffer.from(rows[2].raw_base64, 'base64'), Buffer.from([0xff]));
    // The host's lines all arrive before cat echoes them, so the echoed
    // response (s2c, id 1) answers the host's request (c2s, id 1): paired,
    // with its method and a latency; the host's own response came before
    // any server request with that id and stays unpaired.
    const echoedResp = rows.find((r) => r.direction === 's2c' && r.kind === 'response');
    const hostResp = rows.find((r) => r.direction === 'c2s' && r.kind === 'response');
    assert.equal(echoedResp.method, 'tools/list', 'the response takes its request method');
    assert.ok(echoedResp.latency_ns > 0, 'a paired response has a latency');
    assert.equal(hostResp.method, null);
    assert.equal(hostResp.latency_ns, null);
    const withEvents = await runMcpreel(['show', '--db', db, '--json', '--events', 'first']);
    const events = withEvents.stdout.toString().trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.event);
    assert.deepEqual(events.map((e) => e.event), ['spawn', 'exit']);

    const tl = await runMcpreel(['show', '--db', db, 'last']);
    const out = tl.stdout.toString();
    assert.match(out, /^session 2 "second"\s+stdio/);
    assert.match(out, /-> request\s+tools\/list\s+1\s/);
    assert.match(out, /<- invalid\s+.*\\xff/);
    assert.match(out, /!\s+exit\s+server exited with status 0/);

    const byId = await runMcpreel(['show', '--db', db, '1']);
    assert.match(byId.stdout.toString(), /^session 1 "first"/);

    const unknown = await runMcpreel(['show', '--db', db, 'nope']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr.toString(), /no session with id or name 'nope'/);
  } finally {
    t.cleanup();
  }
});

test('the default database: $MCPREEL_DB, else $XDG_DATA_HOME/mcpreel/mcpreel.db, else ~/.local/share', async () => {
  const t = tempDir();
  try {
    const viaEnv = join(t.dir, 'env.db');
    let r = await runMcpreel(['record', '--', 'true'], { env: { MCPREEL_DB: viaEnv } });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.ok(existsSync(viaEnv));

    const xdg = join(t.dir, 'xdg');
    r = await runMcpreel(['record', '--', 'true'], { env: { MCPREEL_DB: '', XDG_DATA_HOME: xdg } });
    assert.equal(r.code, 0, r.stderr.toString());
    const xdgDb = join(xdg, 'mcpreel', 'mcpreel.db');
    assert.ok(existsSync(xdgDb));
    assert.equal(statSync(join(xdg, 'mcpreel')).mode & 0o777, 0o700, 'its directory is private');
    assert.equal(statSync(xdgDb).mode & 0o777, 0o600);

    const home = join(t.dir, 'home');
    r = await runMcpreel(['record', '--', 'true'], { env: { MCPREEL_DB: '', XDG_DATA_HOME: '', HOME: home } });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.ok(existsSync(join(home, '.local', 'share', 'mcpreel', 'mcpreel.db')));
    r = await runMcpreel(['sessions'], { env: { MCPREEL_DB: '', XDG_DATA_HOME: '', HOME: home } });
    assert.match(r.stdout.toString(), /\n\s+1\s+-\s+stdio .* exit 0\s+true\n/);
  } finally {
    t.cleanup();
  }
});
