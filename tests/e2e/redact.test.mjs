// Payload redaction at record time: secrets in messages reach the peers
// byte for byte and never the database (the file, its WAL, its free
// pages), which holds "[REDACTED]" with redacted = 1 and wire_size.  Over
// stdio (cat echoing lines, and the SDK client with server-everything) and
// Streamable HTTP; --no-default-redaction, --redact-key, --redact-regex;
// replay and mock of a redacted recording; import left alone.  Every
// secret is made fresh per run, so finding it anywhere is a leak.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { findSecret } from './lib/dbcheck.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const b64url = (n) => randomBytes(n).toString('base64url').replace(/[-_]/g, 'x');
const alnum = (n) => randomBytes(n * 2).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, n);

/** Fresh secrets of every shape the tests send. */
function secrets() {
  return {
    pw1: `pw${hex(12)}`,
    pw2: `pw${hex(12)}`,
    sk: `sk-proj-${hex(20)}`,
    ghp: `ghp_${alnum(36)}`,
    jwt: `eyJ${b64url(20)}.eyJ${b64url(30)}.${b64url(32)}`,
    bearer: `tok${hex(16)}`,
    argv: `sk-${hex(24)}`,
  };
}

/** The rows of the only session in db, in seq order. */
function rowsOf(db) {
  return sql(db, `SELECT seq, direction, kind, size, wire_size, sha256, redacted,
      CAST(raw AS TEXT) AS raw FROM messages ORDER BY seq`);
}

/** Every secret is nowhere in the database files (after the recorder exited). */
function assertNowhere(db, values) {
  for (const v of values) assert.deepEqual(findSecret(db, v), [], `${v} is nowhere in the database files`);
}

// The lines the host sends to cat, which echoes them back; and what the
// stored copy of each must be, spliced byte for byte.
function catLines(s) {
  const lines = [
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"bob","password":"${s.pw1}"}}}`,
    // An escaped key, a key in another spelling with a number, a token in text.
    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"note":"use ${s.sk} now","pass\\u0077ord":"${s.pw2}","nested":[{"API-Key":987654321987}]}}}`,
    `a log line, not JSON, with ${s.ghp} in it`,
    `{"jsonrpc":"2.0","id":3,"result":{"access_token":"${s.jwt}","token_type":"Bearer","headers":"Authorization: Bearer ${s.bearer}"}}`,
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc","progress":1}}',
    '{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"login","inputSchema":{"type":"object","properties":{"password":{"type":"string"}}}}]}}',
  ];
  const stored = [
    lines[0].replace(`"${s.pw1}"`, '"[REDACTED]"'),
    lines[1].replace(s.sk, '[REDACTED]').replace(`"${s.pw2}"`, '"[REDACTED]"').replace('987654321987', '"[REDACTED]"'),
    lines[2].replace(s.ghp, '[REDACTED]'),
    lines[3].replace(`"${s.jwt}"`, '"[REDACTED]"').replace(s.bearer, '[REDACTED]'),
    lines[4],
    lines[5],
  ];
  return { lines, stored, input: Buffer.from(lines.map((l) => `${l}\n`).join('')) };
}

// A server that logs its key on stderr and gets it in its argv, then cats.
const CAT_SERVER = ['sh', '-c', 'echo "using key $1" >&2; exec cat', 'sh'];

test('stdio: the host and the server get the exact bytes; the database holds [REDACTED], redacted = 1 and wire_size, and no secret', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const s = secrets();
    const { lines, stored, input } = catLines(s);
    const db = join(t.dir, 'r.db');
    const r = await runMcpreel(['record', '--db', db, '--', ...CAT_SERVER, s.argv], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    // cat got what the host sent (else its echo would differ), the host
    // got what cat sent: the wire is untouched both ways.
    assert.deepEqual(r.stdout, input, 'the host receives the exact bytes');
    assert.match(r.stderr.toString(), new RegExp(`using key ${s.argv}`), 'the server\'s stderr passes through as it was');

    const rows = rowsOf(db);
    assert.equal(rows.length, 2 * lines.length);
    for (const [i, row] of rows.entries()) {
      const k = i % lines.length;
      const sent = Buffer.byteLength(lines[k]);
      assert.equal(row.raw, stored[k], `seq ${row.seq}: the stored copy`);
      assert.equal(row.size, Buffer.byteLength(stored[k]), `seq ${row.seq}: size is the stored length`);
      if (stored[k] !== lines[k]) {
        assert.equal(row.redacted, 1, `seq ${row.seq}: redacted`);
        assert.equal(row.wire_size, sent, `seq ${row.seq}: wire_size is the length forwarded`);
        assert.equal(row.sha256, null, `seq ${row.seq}: no hash of the secret`);
      } else {
        assert.equal(row.redacted, 0, `seq ${row.seq}: untouched`);
        assert.equal(row.wire_size, null);
      }
    }
    // The kinds come from the stored copy, which is still the same JSON.
    assert.deepEqual(rows.slice(0, 6).map((row) => row.kind), ['request', 'request', 'invalid', 'response', 'notification', 'response']);

    const target = sql(db, 'SELECT target FROM sessions')[0].target;
    assert.deepEqual(JSON.parse(target), [...CAT_SERVER, '[REDACTED]'], 'the argv is stored redacted');
    const events = sql(db, 'SELECT kind, CAST(text AS TEXT) AS text FROM events ORDER BY id');
    assert.ok(events.some((e) => e.kind === 'stderr' && e.text === 'using key [REDACTED]'), JSON.stringify(events));
    assertNowhere(db, [s.pw1, s.pw2, s.sk, s.ghp, s.jwt, s.bearer, s.argv]);
    assert.ok(!readFileSync(db).includes('987654321987'), 'the number under API-Key is not in the file');
  } finally {
    t.cleanup();
  }
});

test('stdio: --no-default-redaction keeps everything; --redact-key and --redact-regex add rules', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const s = secrets();
    const { input } = catLines(s);
    const db = join(t.dir, 'plain.db');
    let r = await runMcpreel(['record', '--db', db, '--no-default-redaction', '--', ...CAT_SERVER, s.argv], { input });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.deepEqual(r.stdout, input);
    assert.deepEqual(sql(db, 'SELECT count(*) AS n FROM messages WHERE redacted = 1 OR wire_size IS NOT NULL'), [{ n: 0 }]);
    const raws = rowsOf(db).map((row) => row.raw).join('\n');
    assert.equal(raws, `${input.toString().trimEnd()}\n${input.toString().trimEnd()}`, 'stored exactly as sent');
    for (const v of [s.pw1, s.sk, s.jwt, s.argv]) assert.notDeepEqual(findSecret(db, v), [], `${v} is kept`);

    // Own rules only: a member name in any spelling, a regex in strings
    // (keys too), and nothing built in.
    const ssn = `${100 + randomBytes(1)[0]}-45-6789`;
    const line = `{"jsonrpc":"2.0","id":1,"method":"x","params":{"SSN":"${ssn}","card-9876":"card-1234 and password=${s.pw1}","password":"${s.pw2}"}}`;
    const db2 = join(t.dir, 'own.db');
    r = await runMcpreel(['record', '--db', db2, '--no-default-redaction', '--redact-key', 'ssn',
      '--redact-regex', 'card-[0-9]{4}', '--', 'cat'], { input: Buffer.from(`${line}\n`) });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), `${line}\n`);
    const row = rowsOf(db2)[0];
    assert.equal(row.raw, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"SSN":"[REDACTED]","[REDACTED]":"[REDACTED] and password=${s.pw1}","password":"${s.pw2}"}}`);
    assert.equal(row.redacted, 1);
    assert.deepEqual(findSecret(db2, ssn), []);

    // A rule that cannot be used says so before anything starts.
    r = await runMcpreel(['record', '--db', join(t.dir, 'bad.db'), '--redact-regex', 'a(b', '--', 'cat'], { input: Buffer.alloc(0) });
    assert.equal(r.code, 2);
    assert.match(r.stderr.toString(), /--redact-regex 'a\(b': .*POSIX extended regular expression/);
  } finally {
    t.cleanup();
  }
});

test('stdio, SDK client and server-everything: the client gets the secret back, the record has none', { timeout: 120000 }, async () => {
  const t = tempDir();
  const client = new Client({ name: 'mcpreel-e2e-redact', version: '1.0.0' });
  try {
    const s = secrets();
    const db = join(t.dir, 'sdk.db');
    const { command, args } = serverEverythingCommand();
    const transport = new StdioClientTransport({ command: MCPREEL, args: ['record', '--db', db, '--', command, ...args], stderr: 'pipe' });
    await client.connect(transport);
    const res = await client.callTool({ name: 'echo', arguments: { message: `key ${s.sk} and ${s.jwt}` } });
    assert.equal(res.content[0].text, `Echo: key ${s.sk} and ${s.jwt}`, 'the secret went to the server and came back');
    await client.close();
    // The recorder has exited once its stdin closed; give it its moment.
    for (let i = 0; i < 100 && sql(db, 'SELECT count(*) AS n FROM sessions WHERE ended_ns IS NULL')[0].n > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const echo = sql(db, `SELECT direction, redacted, wire_size, size, CAST(raw AS TEXT) AS raw FROM messages
      WHERE method = 'tools/call' ORDER BY seq`);
    assert.equal(echo.length, 2);
    for (const row of echo) {
      assert.equal(row.redacted, 1, row.raw);
      assert.ok(row.raw.includes('key [REDACTED] and [REDACTED]'), row.raw);
      assert.equal(row.wire_size - row.size, s.sk.length + s.jwt.length - 2 * '[REDACTED]'.length);
    }
    assertNowhere(db, [s.sk, s.jwt]);
  } finally {
    await client.close().catch(() => {});
    t.cleanup();
  }
});

test('Streamable HTTP: bodies and headers are redacted in the record, forwarded whole', { skip: mcpreelHttpSupport().ok ? false : mcpreelHttpSupport().reason, timeout: 120000 }, async () => {
  const t = tempDir();
  const up = await startServerEverything('streamableHttp');
  let mp;
  const client = new Client({ name: 'mcpreel-e2e-redact', version: '1.0.0' });
  try {
    const s = secrets();
    const apikey = `key${hex(16)}`;
    const db = join(t.dir, 'http.db');
    mp = await startMcpreelHttp({ db, upstream: up.origin });
    const transport = new StreamableHTTPClientTransport(new URL(`${mp.url}/mcp`), {
      requestInit: { headers: { 'X-Api-Key': apikey, 'X-Trace': `Bearer ${s.bearer}` } },
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30000, reconnectionDelayGrowFactor: 1.5 },
    });
    await client.connect(transport);
    const res = await client.callTool({ name: 'echo', arguments: { message: `key ${s.sk}`, password: s.pw1 } });
    assert.equal(res.content[0].text, `Echo: key ${s.sk}`);
    await transport.terminateSession().catch(() => {});
    await client.close();
    const stopped = await mp.stop();
    mp = null;
    assert.equal(stopped.code, 0, stopped.stderr);

    const rows = sql(db, `SELECT direction, redacted, CAST(raw AS TEXT) AS raw FROM messages WHERE method = 'tools/call'`);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((row) => row.redacted === 1 && row.raw.includes('key [REDACTED]')), JSON.stringify(rows));
    const req = JSON.parse(rows.find((row) => row.direction === 'c2s').raw);
    assert.equal(req.params.arguments.password, '[REDACTED]');
    const heads = sql(db, 'SELECT request_headers FROM http_exchanges').map((x) => JSON.parse(x.request_headers));
    const head = (h, name) => h.find(([n]) => n.toLowerCase() === name)?.[1];
    assert.ok(heads.length > 0 && heads.every((h) => head(h, 'x-api-key') === '[REDACTED]'), 'a header named like a secret');
    assert.ok(heads.every((h) => head(h, 'x-trace') === 'Bearer [REDACTED]'), 'a token in a header value');
    assertNowhere(db, [s.sk, s.pw1, s.bearer, apikey]);
  } finally {
    await client.close().catch(() => {});
    if (mp) await mp.stop();
    await up.stop();
    t.cleanup();
  }
});

test('a message over --max-record-size: its start is stored redacted, with its full size and SHA-256', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const s = secrets();
    const line = `{"jsonrpc":"2.0","id":1,"method":"x","params":{"password":"${s.pw1}","note":"${s.sk}","pad":"${'x'.repeat(8192)}"}}`;
    const db = join(t.dir, 'cap.db');
    const r = await runMcpreel(['record', '--db', db, '--max-record-size', '1K', '--', 'cat'], { input: Buffer.from(`${line}\n`) });
    assert.equal(r.code, 0, r.stderr.toString());
    assert.equal(r.stdout.toString(), `${line}\n`, 'forwarded whole');
    const rows = sql(db, 'SELECT size, wire_size, sha256, truncated, redacted, CAST(raw AS TEXT) AS raw FROM messages');
    assert.equal(rows.length, 2);
    const digest = createHash('sha256').update(line).digest('hex');
    for (const row of rows) {
      assert.equal(row.truncated, 1);
      assert.equal(row.redacted, 1);
      assert.equal(row.wire_size, Buffer.byteLength(line));
      assert.equal(row.sha256, digest, 'the hash of the whole message, which the row does not hold');
      assert.ok(row.raw.startsWith('{"jsonrpc":"2.0","id":1,"method":"x","params":{"password":"[REDACTED]","note":"[REDACTED]","pad":"xxx'), row.raw.slice(0, 120));
      assert.equal(row.size, 1024 - s.pw1.length - s.sk.length + 2 * '[REDACTED]'.length);
    }
    assertNowhere(db, [s.pw1, s.sk]);
  } finally {
    t.cleanup();
  }
});

// A session with the login peer: a password that was redacted, an answer
// whose token and note were.
async function recordLogin(dir, password) {
  const db = join(dir, 'login.db');
  const input = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'login', arguments: { user: 'bob', password } } },
  ].map((m) => `${JSON.stringify(m)}\n`).join('');
  const r = await runMcpreel(['record', '--db', db, '--name', 'login', '--', process.execPath, join(PEERS_DIR, 'login.mjs')], { input: Buffer.from(input) });
  assert.equal(r.code, 0, r.stderr.toString());
  const ans = JSON.parse(r.stdout.toString().trim().split('\n')[1]);
  assert.match(ans.result.structuredContent.access_token, /^sk-[0-9a-f]{32}$/, 'the host got the real token');
  return { db, token: ans.result.structuredContent.access_token };
}

test('replay of a redacted session: the placeholder is sent with a warning and where; redacted answers are not compared, a difference there is marked', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const s = secrets();
    const { db, token } = await recordLogin(t.dir, s.pw1);
    assertNowhere(db, [s.pw1, token]);
    const json = join(t.dir, 'report.json');
    const r = await runMcpreel(['replay', '--db', db, 'login', '--report', 'json', '-o', json, '--no-record', '--',
      process.execPath, join(PEERS_DIR, 'login.mjs')]);
    assert.equal(r.code, 1, `one difference: ${r.stderr}`);
    assert.match(r.stderr.toString(), /seq 3 tools\/call was sent with "\[REDACTED\]" at \$\.params\.arguments\.password: the real value was redacted when recorded/);
    assert.equal(r.stderr.toString().split('\n').filter((l) => l.includes('"[REDACTED]" at $.params.arguments.password')).length, 1,
      `the warning once on stderr:\n${r.stderr}`);
    const rep = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(rep.different, 1);
    // The token fits its redaction (any value): not compared, noted.
    const call = rep.results.find((x) => x.method === 'tools/call');
    assert.deepEqual(call.not_compared_redacted, ['$.result.structuredContent.access_token']);
    assert.ok(rep.notes.some((n) => /seq 3 tools\/call: not compared at \$\.result\.structuredContent\.access_token/.test(n)), JSON.stringify(rep.notes));
    assert.ok(rep.notes.some((n) => /seq 3 tools\/call was sent with "\[REDACTED\]" at \$\.params\.arguments\.password/.test(n)));
    // The server saw the placeholder and said so: a difference at a redacted place.
    assert.deepEqual(rep.differences.map((d) => [d.path, d.recorded, d.replayed, d.redacted]),
      [['$.result.structuredContent.note', 'key [REDACTED] end', 'rejected', true]]);

    const text = await runMcpreel(['replay', '--db', db, 'login', '--no-record', '--', process.execPath, join(PEERS_DIR, 'login.mjs')]);
    assert.match(text.stdout.toString(), /\$\.result\.structuredContent\.note: "key \[REDACTED\] end" -> "rejected"  \(redacted when recorded\)/);
  } finally {
    t.cleanup();
  }
});

test('mock of a redacted session: redacted request values match as wildcards, and it says so', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const { db } = await recordLogin(t.dir, `pw${hex(8)}`);
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'login', arguments: { password: 'another one', user: 'bob' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'login', arguments: { user: 'eve', password: 'x' } } },
    ];
    const r = await runMcpreel(['mock', '--db', db, 'login'], { input: Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join('')) });
    assert.equal(r.code, 0, r.stderr.toString());
    const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(out.length, 3);
    assert.equal(out[1].id, 2);
    assert.equal(out[1].result.structuredContent.access_token, '[REDACTED]', 'the recorded answer, as recorded');
    assert.equal(out[1].result.structuredContent.user, 'bob');
    const err = r.stderr.toString();
    assert.match(err, /a tools\/call request matches the one recorded at seq 3 only with the values redacted when recorded taken as any value \(at \$\.params\.arguments\.password\)/);
    assert.match(err, /the recorded answer \(seq 5\) holds values redacted when recorded: the client gets "\[REDACTED\]" at \$\.result\.structuredContent\.access_token, \$\.result\.structuredContent\.note/);
    // Another user is another request: no wildcard there.
    assert.equal(out[2].id, 3);
    assert.equal(out[2].error.code, -32602);
  } finally {
    t.cleanup();
  }
});

test('import stores what the file holds: a session exported unredacted comes back unredacted', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const s = secrets();
    const db = join(t.dir, 'a.db');
    const line = `{"jsonrpc":"2.0","id":1,"method":"x","params":{"password":"${s.pw1}","k":"${s.sk}"}}`;
    let r = await runMcpreel(['record', '--db', db, '--name', 'keep', '--no-default-redaction', '--', 'cat'], { input: Buffer.from(`${line}\n`) });
    assert.equal(r.code, 0, r.stderr.toString());
    r = await runMcpreel(['export', '--db', db, 'keep']);
    assert.equal(r.code, 0, r.stderr.toString());
    const file = join(t.dir, 'keep.jsonl');
    writeFileSync(file, r.stdout);
    const db2 = join(t.dir, 'b.db');
    r = await runMcpreel(['import', '--db', db2, file]);
    assert.equal(r.code, 0, r.stderr.toString());
    const rows = rowsOf(db2);
    assert.deepEqual(rows.map((row) => [row.raw, row.redacted]), [[line, 0], [line, 0]]);
  } finally {
    t.cleanup();
  }
});
