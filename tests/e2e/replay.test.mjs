// `mcpreel replay`: the SDK client's session against server-everything,
// recorded over stdio, replayed against the same server over stdio and
// over Streamable HTTP (no differences), and against a server whose one
// tool answers differently (exactly that request reported).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSession, serverEverythingCommand } from './lib/session.mjs';
import { startServerEverything } from './lib/servers.mjs';
import { E2E_DIR, MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

// What legitimately varies between runs of server-everything, as a user
// would write it down (the demo uses the same file): dynamic resources
// carry the time of day, in text and base64-encoded in blobs.
const RULES_FILE = join(E2E_DIR, '..', '..', 'examples', 'everything-rules.json');

async function recordSession(dir) {
  const db = join(dir, 'r.db');
  const { command, args } = serverEverythingCommand();
  await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
  return { db, rules: RULES_FILE, command, args };
}

test('replay against the same server, over stdio and over Streamable HTTP: no differences', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const { db, rules, command, args } = await recordSession(t.dir);
    const requests = sql(db, `SELECT count(*) AS n FROM exchanges e JOIN sessions s ON s.id = e.session_id
      WHERE s.name = 'sdk' AND e.direction = 'c2s' AND e.response_seq IS NOT NULL`)[0].n;

    const json = join(t.dir, 'stdio.json');
    let r = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', rules, '--report', 'json', '-o', json, '--', command, ...args],
      { timeoutMs: 120000 });
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(r.code, 0, `exit status; report: ${JSON.stringify(rep.differences).slice(0, 2000)} notes: ${rep.notes}`);
    assert.equal(rep.requests, requests, 'every answered request was compared');
    assert.equal(rep.same, requests);
    assert.equal(rep.different, 0);
    assert.equal(rep.missing, 0);
    assert.deepEqual(rep.differences, []);
    for (const x of rep.results) {
      assert.equal(typeof x.recorded_ms, 'number', `seq ${x.seq}: recorded latency`);
      assert.equal(typeof x.replayed_ms, 'number', `seq ${x.seq}: replayed latency`);
    }
    assert.ok(rep.server_requests.answered >= 3, 'sampling, roots and elicitation answered from the recording');
    assert.deepEqual(rep.server_requests.unmatched, []);
    assert.ok(rep.replay_session > 0, 'the replay is recorded');
    const rs = sql(db, `SELECT name, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n FROM sessions s WHERE id = ${rep.replay_session}`)[0];
    assert.equal(rs.name, 'replay of 1');
    assert.ok(rs.n > requests * 2 - 1, 'the replay session holds the traffic');

    const se = await startServerEverything('streamableHttp');
    try {
      const hjson = join(t.dir, 'http.json');
      r = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', rules, '--report', 'json', '-o', hjson, '--no-record',
        '--upstream', se.url], { timeoutMs: 120000 });
      const hrep = JSON.parse(readFileSync(hjson, 'utf8'));
      assert.equal(r.code, 0, `exit status; report: ${JSON.stringify(hrep.differences).slice(0, 2000)} notes: ${hrep.notes}`);
      assert.equal(hrep.same, requests);
      assert.equal(hrep.different + hrep.missing, 0);
      assert.equal(hrep.replay_session, null, '--no-record');
    } finally {
      await se.stop();
    }
  } finally {
    t.cleanup();
  }
});

test('replay against a server whose one tool answers differently: exactly that request, exit 1', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const { db, rules, command, args } = await recordSession(t.dir);
    const mutated = [process.execPath, join(PEERS_DIR, 'mutate.mjs'), 'The sum of 2 and 3 is 5.', 'The sum of 2 and 3 is 6.', '--', command, ...args];
    const json = join(t.dir, 'm.json');
    const r = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', rules, '--report', 'json', '-o', json, '--no-record', '--', ...mutated],
      { timeoutMs: 120000 });
    assert.equal(r.code, 1, r.stderr.toString());
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(rep.different, 1);
    assert.equal(rep.missing, 0);
    assert.equal(rep.differences.length, 1);
    const d = rep.differences[0];
    assert.equal(d.method, 'tools/call');
    assert.equal(d.path, '$.result.content[0].text');
    assert.equal(d.recorded, 'The sum of 2 and 3 is 5.');
    assert.equal(d.replayed, 'The sum of 2 and 3 is 6.');
    // The text report on stdout names it too.
    assert.match(r.stdout.toString(), /1 different/);
    assert.match(r.stdout.toString(), /\$\.result\.content\[0\]\.text: "The sum of 2 and 3 is 5\." -> "The sum of 2 and 3 is 6\."/);

    const xml = join(t.dir, 'j.xml');
    const j = await runMcpreel(['replay', '--db', db, 'sdk', '--rules', rules, '--report', 'junit', '-o', xml, '--no-record', '--', ...mutated],
      { timeoutMs: 120000 });
    assert.equal(j.code, 1);
    const x = readFileSync(xml, 'utf8');
    assert.equal((x.match(/<failure /g) ?? []).length, 1, 'exactly one failure in the JUnit report');
    assert.equal((x.match(/<testcase /g) ?? []).length, rep.requests, 'one testcase per request');
    assert.match(x, /failures="1"/);
  } finally {
    t.cleanup();
  }
});

test('replay: bad session or target gives a clear message and exit 2', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'x.db');
    await runMcpreel(['record', '--db', db, '--name', 'tiny', '--', 'cat'], { input: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}\n') });
    let r = await runMcpreel(['replay', '--db', db, 'nope', '--', 'cat']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /no session with id or name 'nope'/);
    r = await runMcpreel(['replay', '--db', db, 'tiny', '--', 'mcpreel-no-such-server-xyz']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /mcpreel-no-such-server-xyz.*not found/);
    r = await runMcpreel(['replay', '--db', db, 'tiny']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /give the server to replay against/);
    r = await runMcpreel(['replay', '--db', db, 'tiny', '--ignore', '$.a[', '--', 'cat']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /JSONPath/);
  } finally {
    t.cleanup();
  }
});

test('a server request the recording has no answer to: a JSON-RPC error to the server, reported, exit 1', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'a.db');
    const asker = join(PEERS_DIR, 'asker.mjs');
    const input = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n';
    const rec = await runMcpreel(['record', '--db', db, '--name', 'plain', '--', process.execPath, asker], { input: Buffer.from(input) });
    assert.equal(rec.code, 0);
    const json = join(t.dir, 'u.json');
    const r = await runMcpreel(['replay', '--db', db, 'plain', '--report', 'json', '-o', json, '--', process.execPath, asker, '--ask', 'roots/list']);
    assert.equal(r.code, 1, r.stderr.toString());
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    assert.deepEqual(rep.server_requests.unmatched, [{ method: 'roots/list', params: null }]);
    // The server got an error as its answer, and says so in its result.
    assert.equal(rep.different, 1);
    assert.equal(rep.differences[0].path, '$.result.asked');
    assert.equal(rep.differences[0].replayed.code, -32601);
    assert.match(r.stdout.toString(), /1 with no recorded answer/);
  } finally {
    t.cleanup();
  }
});

test('replay of a session longer than the window replay holds: every request compared, the counts whole, the report bounded', { timeout: 600000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'w.db');
    const peer = join(PEERS_DIR, 'numpeer.mjs');
    // 9 000 requests and their answers: 18 000 messages, more than the
    // 16 384 a replay reads ahead, so the window moves.
    const N = 9000;
    let input = '';
    for (let i = 1; i <= N; i++)
      input += JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { n: i } }) + '\n';
    const rec = await runMcpreel(['record', '--db', db, '--name', 'long', '--', process.execPath, peer], { input: Buffer.from(input) });
    assert.equal(rec.code, 0, rec.stderr.toString());
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages WHERE direction = 's2c'")[0].n, N);

    const json = join(t.dir, 'long.json');
    const r = await runMcpreel(['replay', '--db', db, 'long', '--no-record', '--report', 'json', '-o', json, '--', process.execPath, peer, '--off', '7']);
    assert.equal(r.code, 1, r.stderr.toString());
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    const differ = Math.floor(N / 7);
    assert.equal(rep.requests, N);
    assert.equal(rep.different, differ);
    assert.equal(rep.same, N - differ);
    assert.equal(rep.missing, 0);
    // The first 1 000 results, then 1 000 more that differ; the rest
    // counted only, and said.
    assert.equal(rep.results.length, 2000);
    assert.equal(rep.results_not_shown, N - 2000);
    assert.equal(rep.results_not_shown_not_same, differ - rep.results.filter((x) => x.status === 'different').length);
    for (let i = 0; i < rep.results.length; i++) {
      const x = rep.results[i];
      assert.equal(x.status, x.id % 7 === 0 ? 'different' : 'same', `result ${i}: id ${x.id}`);
      if (i > 0) assert.ok(x.seq > rep.results[i - 1].seq, 'in the recording\'s order');
    }
    assert.ok(rep.results.slice(1000).every((x) => x.status === 'different'));
    assert.equal(rep.differences.length, rep.results.filter((x) => x.status === 'different').length);
    assert.match(r.stdout.toString(), /9000 requests, 7715 same, 1285 different, 0 missing/);
    assert.match(r.stdout.toString(), /7000 more results not shown, 143 of them not the same/);
  } finally {
    t.cleanup();
  }
});

test('replay of a session with more server notifications between two requests than the window holds, and an answer further than the window from its request: every request sent and compared', { timeout: 600000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'g.db');
    const peer = join(PEERS_DIR, 'numpeer.mjs');
    // Request 2's answer comes after 20 000 notifications (further than
    // the 16 384 messages replay reads ahead); request 3 comes after it.
    const reqs = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { n: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { n: 2, notes: 20000 } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { n: 3 } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { n: 4, notes: 20000 } },
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { n: 5 } },
    ];
    // Each request is sent once the previous one's answer is out, so
    // 20 000 notifications lie between two of the client's sends; stdin
    // closes after the last answer.
    let tail = '';
    let sent = 1;
    const rec = await runMcpreel(['record', '--db', db, '--name', 'gap', '--', process.execPath, peer], {
      input: Buffer.from(JSON.stringify(reqs[0]) + '\n'),
      keepStdinOpen: true,
      timeoutMs: 120000,
      onSpawn: (child) => child.stdout.on('data', (c) => {
        tail = (tail + c.toString()).slice(-200);
        if (!tail.includes(`"id":${sent},"result"`))
          return;
        if (sent === reqs.length)
          child.stdin.end();
        else
          child.stdin.write(JSON.stringify(reqs[sent++]) + '\n');
      }),
    });
    assert.equal(rec.code, 0, rec.stderr.toString());
    assert.equal(sql(db, "SELECT count(*) AS n FROM messages")[0].n, 40010);

    const json = join(t.dir, 'gap.json');
    // Request 4 differs (id a multiple of 4): the answer further than
    // the window is compared, not taken as none.
    const r = await runMcpreel(['replay', '--db', db, 'gap', '--no-record', '--report', 'json', '-o', json, '--', process.execPath, peer, '--off', '4']);
    assert.equal(r.code, 1, r.stderr.toString());
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(rep.requests, 5, JSON.stringify(rep.results));
    assert.equal(rep.same, 4);
    assert.equal(rep.different, 1);
    assert.equal(rep.missing, 0);
    assert.deepEqual(rep.results.map((x) => x.id), [1, 2, 3, 4, 5]);
    assert.deepEqual(rep.results.map((x) => x.status), ['same', 'same', 'same', 'different', 'same']);
    assert.deepEqual(rep.notifications['notifications/progress'], { recorded: 40000, replayed: 40000 });
  } finally {
    t.cleanup();
  }
});
