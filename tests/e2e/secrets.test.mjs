// Secrets never reach what mcpreel keeps or prints, while the wire carries
// every byte.  A table of secret shapes (JSON members, form fields, query
// parameters, header names, command-line flags, environment assignments,
// stderr log forms, Basic, Bearer, JWT, PEM, URL userinfo), each with a
// fresh random marker, is sent over stdio (the SDK client, and our peer
// that is started with secrets in its argv and environment, logs them on
// stderr and echoes them) and over HTTP (our upstream: OAuth form and JSON
// bodies, query strings, headers, redirects, an error page; and the SDK
// client with server-everything over Streamable HTTP with an Authorization
// header).  Then no marker may be in any database file (the raw bytes of
// the database, its -wal and -shm, while the recorder runs and after it
// exited, and the SQL dump), in `export` (JSONL, HAR), `report`, `show`,
// `stats`, or mcpreel's own log lines; and every marker must have reached
// its peer unchanged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { request, spawnUntilLine, startServerEverything, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const alnum = (n) => randomBytes(n * 2).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, n);
const b64url = (n) => randomBytes(n).toString('base64url').replace(/[-_]/g, 'x');
const basicOf = (user, pw) => Buffer.from(`${user}:${pw}`).toString('base64');

// How long to let the writer commit what it was given (it commits within
// ~100 ms when traffic stops); generous for a loaded machine.
const SETTLE_MS = 1500;

/**
 * The table: every shape, each with its own marker.  `marker` is what must
 * never be stored or logged (for Basic, the base64 too); `where` says how
 * it travels.  Filled in by the parts below as they build their traffic.
 */
function newTable() {
  const rows = [];
  const add = (shape, where, ...markers) => {
    rows.push({ shape, where, markers });
    return markers[0];
  };
  const mk = () => `m${hex(12)}`;
  // Every place a marker was found: all are gathered, then reported at once.
  const leaks = [];
  return { rows, add, mk, leaks };
}

const ASAN_ENV = { ASAN_OPTIONS: 'detect_leaks=1' };

// Arguments and stderr lines with names that only look like a secret's
// (counts, pagination cursors, words holding "key" or "auth", a key
// file's path, prose after "Basic"): they must be stored unchanged.
const ARGV_KEPT = ['--max-output-tokens', '4096', '--keyfile', '/etc/k.pem', '--session-name', 'foo'];
const STDERR_KEPT = [
  'usage max_output_tokens: 4096 total_tokens=5000 tokens: 1234 token_count: 7',
  'x-ratelimit-remaining-tokens: 99',
  'sort_key=name monkey=1 hotkey=F5 primaryKey: id keyboard: us',
  'nextPageToken: c2 page_token=c3 tokenizer: bpe',
  'authorName: Ann author_id=7 Authority: example',
  'Access-Control-Allow-Credentials: true',
  'X-Session-Name: s1',
  'see Basic Overview and Basic Operations',
  '{"session":{"id":1},"x":2}',
];

// ---------------------------------------------------------------------------
// Where secrets could end up.

/** Every marker that appears in buf (a Buffer or string), with a label. */
function findMarkers(table, label, buf) {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf);
  const hits = [];
  for (const r of table.rows) {
    for (const m of r.markers) {
      if (b.includes(m) || b.includes(Buffer.from(m).toString('hex')) || b.includes(Buffer.from(m).toString('hex').toUpperCase()))
        hits.push({ shape: r.shape, text: `${r.shape} (${r.where}): ${m} in ${label}` });
    }
  }
  return hits;
}

/** Note where markers were found in buf. */
function noLeak(table, label, buf) {
  table.leaks.push(...findMarkers(table, label, buf));
}

/** The raw bytes of DB, DB-wal and DB-shm (those that exist), and its SQL dump. */
function dbFiles(db) {
  const out = [];
  for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]) if (existsSync(f)) out.push([f, readFileSync(f)]);
  out.push([`${db} .dump`, execFileSync('sqlite3', [db, '.dump'], { maxBuffer: 512 * 1024 * 1024 })]);
  return out;
}

function assertNoneInDb(table, db, when) {
  for (const [label, buf] of dbFiles(db)) noLeak(table, `${label} (${when})`, buf);
}

/** Every session's export (JSONL, HAR for HTTP), report, show and stats: no marker. */
async function assertNoneInViews(table, db, dir) {
  const listed = await runMcpreel(['sessions', '--db', db, '--json'], { env: ASAN_ENV });
  const sessions = listed.stdout.toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.ok(sessions.length > 0, `${db} has sessions`);
  const views = ['sessions --json'];
  noLeak(table, 'sessions --json', listed.stdout);
  const plain = await runMcpreel(['sessions', '--db', db], { env: ASAN_ENV });
  noLeak(table, 'sessions', plain.stdout);
  views.push('sessions');
  for (const s of sessions) {
    const id = String(s.id);
    const runs = [
      ['export jsonl', ['export', '--db', db, id]],
      ['report', ['report', '--db', db, '-o', join(dir, `report-${id}.html`), id]],
      ['show', ['show', '--db', db, id]],
      ['show --json --events', ['show', '--db', db, '--json', '--events', id]],
      ['show --raw', ['show', '--db', db, '--raw', id]],
      ['stats', ['stats', '--db', db, id]],
    ];
    if (s.transport !== 'stdio') runs.push(['export har', ['export', '--db', db, '--format', 'har', id]]);
    for (const [what, args] of runs) {
      const r = await runMcpreel(args, { env: ASAN_ENV });
      assert.equal(r.code, 0, `mcpreel ${args.join(' ')}: ${r.stderr}`);
      let out = Buffer.concat([r.stdout, r.stderr]);
      if (what === 'report') out = Buffer.concat([out, readFileSync(join(dir, `report-${id}.html`))]);
      views.push(`${what} ${id}`);
      noLeak(table, `${what} of session ${id}`, out);
    }
  }
  return views.length;
}

// ---------------------------------------------------------------------------
// stdio: the SDK client, mcpreel, our peer.

async function stdioPart(table, dir) {
  const { add, mk } = table;
  const db = join(dir, 'stdio.db');
  const log = join(dir, 'stdio.log');
  const out = join(dir, 'peer.out');
  const stderrFile = join(dir, 'peer.stderr.json');

  // Its command line and environment.
  const envApi = add('env API_KEY=X', 'argv (env)', mk());
  const envGh = add('env GITHUB_TOKEN=X', 'argv (env)', mk());
  const pw = add('--password X', 'argv', mk());
  const apiEq = add('--api-key=X', 'argv', mk());
  const tok = add('--token X', 'argv', mk());
  const single = add('-client-secret X', 'argv', mk());
  const assign = add('DB_PASSWORD=X argument', 'argv', mk());
  const urlPw = add('URL user:password@ in argv', 'argv', mk());
  const urlQ = add('URL ?access_token= in argv', 'argv', mk());
  const hdr = add('--header "Authorization: Bearer X"', 'argv', mk());
  const ghp = add('a GitHub token as an argument', 'argv', `ghp_${alnum(36)}`);
  const basicArgPw = mk();
  const basicArg = add('--header "Authorization: Basic X"', 'argv', basicOf('svc', basicArgPw), basicArgPw);
  const argv = [
    'env', `API_KEY=${envApi}`, `GITHUB_TOKEN=${envGh}`,
    process.execPath, join(PEERS_DIR, 'secretpeer.mjs'),
    '--password', pw, `--api-key=${apiEq}`, '--token', tok, '-client-secret', single,
    `DB_PASSWORD=${assign}`, '--db-url', `postgres://app:${urlPw}@db.example:5432/app`,
    '--endpoint', `https://api.example/v1?access_token=${urlQ}&x=1`,
    '--header', `Authorization: Bearer ${hdr}`, ghp, '--header', `Authorization: Basic ${basicArg}`,
    '--header', `Cookie: theme=dark; connect.sid=s%3A${add('--header "Cookie: a=1; connect.sid=X"', 'argv', mk())}; PHPSESSID=${add('--header "Cookie: ...; PHPSESSID=X" (a later cookie)', 'argv', mk())}`,
    `--repo=https://${add('--repo=https://TOKEN@host (userinfo without a password)', 'argv', mk())}@github.com/o/r`,
    '--dsn', `user:${add('--dsn user:X@tcp(db:3306)/app (no scheme)', 'argv', mk())}@tcp(db:3306)/app`,
    '--app-url', `https://h.example/app;jsessionid=${add('path parameter ;jsessionid=X in argv', 'argv', mk())}?x=1`,
    ...ARGV_KEPT,
    '-p', '8080', '--verbose',
  ];

  // What it prints on stderr at start (each line is also forwarded: wire).
  const eqPw = add('stderr password=X', 'stderr', mk());
  const colonTok = add('stderr token: X', 'stderr', mk());
  const quoted = add('stderr api_key="X"', 'stderr', mk());
  const jsonSecret = add('stderr {"secret": "X"}', 'stderr', mk());
  const basicPw = mk();
  const basic = add('stderr Authorization: Basic', 'stderr', basicOf('alice', basicPw), basicPw);
  const bearer = add('stderr Bearer X', 'stderr', mk());
  const jwtSig = mk();
  const jwt = `eyJ${b64url(18)}.eyJ${b64url(24)}.${jwtSig}`;
  add('stderr JWT', 'stderr', jwtSig);
  const pem = add('stderr PEM block over lines', 'stderr', `MIIE${alnum(40)}`);
  const pgPw = add('stderr URL userinfo', 'stderr', mk());
  const logfmt = add('stderr logfmt client_secret=X', 'stderr', mk());
  const xauth = add('stderr X-Auth-Token: X', 'stderr', mk());
  const flagLine = add('stderr "--password X"', 'stderr', mk());
  const stderrLines = [
    `starting: password=${eqPw}`,
    `token: ${colonTok}`,
    `config api_key="${quoted}" loaded`,
    `{"level":"debug","cfg":{"secret": "${jsonSecret}"}}`,
    `upstream header Authorization: Basic ${basic}`,
    `calling the API with Bearer ${bearer}`,
    `session jwt ${jwt}`,
    '-----BEGIN PRIVATE KEY-----',
    pem,
    `${alnum(20)}==`,
    '-----END PRIVATE KEY-----',
    `db at postgres://app:${pgPw}@db.example/app`,
    `level=info client_secret=${logfmt} ok=1`,
    `X-Auth-Token: ${xauth}`,
    `exec: server --password ${flagLine} --port 1`,
    `Cookie: theme=dark; connect.sid=s%3A${add('stderr Cookie: a=1; connect.sid=X', 'stderr', mk())}; PHPSESSID=${add('stderr Cookie: ...; PHPSESSID=X (a later cookie)', 'stderr', mk())}`,
    `Authorization: Digest username="u", response="${add('stderr Authorization: Digest response="X"', 'stderr', mk())}", nonce="n1"`,
    `cloning https://${add('stderr https://TOKEN@github.com (userinfo without a password)', 'stderr', mk())}@github.com/o/r into w`,
    `connecting //user:${add('stderr //user:X@host (no scheme)', 'stderr', mk())}@db.example/path`,
    `GET /app;jsessionid=${add('stderr path parameter ;jsessionid=X', 'stderr', mk())}?x=1 200`,
    `{"note":"token: ${add('stderr JSON text "token: X\\"def"', 'stderr', mk())}\\"def"}`,
    ...STDERR_KEPT,
  ];
  writeFileSync(stderrFile, JSON.stringify(stderrLines));

  // JSON members (and credential shapes in strings) through the SDK client.
  const args = {
    user: 'bob',
    password: add('JSON member password', 'message', mk()),
    api_key: add('JSON member api_key', 'message', mk()),
    client_secret: add('JSON member client_secret', 'message', mk()),
    access_token: add('JSON member access_token', 'message', mk()),
    refresh_token: add('JSON member refresh_token', 'message', mk()),
    'X-Api-Key': add('JSON member X-Api-Key', 'message', mk()),
    nested: { deeper: [{ private_key: add('JSON member private_key, nested', 'message', mk()) }] },
    code_verifier: add('JSON member code_verifier (OAuth)', 'message', mk()),
    note: `header was Bearer ${add('Bearer in a JSON string', 'message', mk())}`,
  };
  const msgBasicPw = mk();
  const msgBasic = add('Basic in a JSON string', 'message', basicOf('carol', msgBasicPw), msgBasicPw);
  args.auth_line = `Authorization: Basic ${msgBasic}`;
  args.prose = 'see Basic Overview and Basic Operations';
  args.repo = `cloning https://${add('userinfo without a password in a JSON string', 'message', mk())}@github.com/o/r`;
  args.dsn = `https://svc:${add('URL userinfo in a JSON string', 'message', mk())}@h.example/`;

  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['-v', '-v', '--log-file', log, 'record', '--db', db, '--name', 'secrets-stdio', '--', ...argv],
    env: { ...process.env, ...ASAN_ENV, SECRETPEER_OUT: out, SECRETPEER_STDERR: stderrFile, SECRETPEER_ENV: 'API_KEY,GITHUB_TOKEN' },
    stderr: 'pipe',
  });
  const errChunks = [];
  transport.stderr.on('data', (c) => errChunks.push(c));
  const client = new Client({ name: 'secrets-e2e', version: '1.0.0' });
  await client.connect(transport);
  const res = await client.callTool({ name: 'echo', arguments: args });
  assert.deepEqual(res.structuredContent, args, 'the client got every argument back unchanged (s2c wire)');

  await new Promise((r) => setTimeout(r, SETTLE_MS));
  assertNoneInDb(table, db, 'while the stdio recorder runs');
  await client.close();
  // The recorder exits once the host closed (close() waits for it).
  await new Promise((r) => setTimeout(r, SETTLE_MS));

  // The wire: the peer got its argv, its environment and the arguments.
  const got = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(got[0].argv, argv.slice(5), 'the server got its argv byte for byte');
  assert.deepEqual(got[0].env, { API_KEY: envApi, GITHUB_TOKEN: envGh }, 'the server got its environment');
  assert.deepEqual(got[1].arguments, args, 'the server got every argument unchanged (c2s wire)');
  // The server's stderr is forwarded unchanged to ours.
  const errText = Buffer.concat(errChunks).toString();
  for (const l of stderrLines) assert.ok(errText.includes(`${l}\n`), `stderr line forwarded unchanged: ${l}`);

  assertNoneInDb(table, db, 'after the stdio recorder exited');
  const target = JSON.parse(sql(db, 'SELECT target FROM sessions')[0].target);
  assert.deepEqual(target.slice(0, 3), ['env', 'API_KEY=[REDACTED]', 'GITHUB_TOKEN=[REDACTED]'], 'assignments keep their names');
  assert.deepEqual(target.slice(-3), ['-p', '8080', '--verbose'], 'other arguments are kept');
  assert.deepEqual(target.slice(-3 - ARGV_KEPT.length, -3), ARGV_KEPT, 'counts, key files and names that only look like secrets are kept');
  // Lines whose names only look like a secret's are stored as they were.
  const stored = sql(db, 'SELECT CAST(text AS TEXT) AS raw FROM events').map((m) => m.raw).join('\n');
  for (const l of STDERR_KEPT) assert.ok(stored.includes(l), `stderr line kept whole: ${l}`);
  const storedMsgs = sql(db, 'SELECT CAST(raw AS TEXT) AS raw FROM messages').map((m) => m.raw).join('\n');
  assert.ok(storedMsgs.includes(args.prose), 'prose after "Basic" is kept in messages');
  // mcpreel's own lines: its log file, and any "mcpreel:" line on stderr.
  assert.ok(existsSync(log), 'the log file was written');
  const own = readFileSync(log, 'utf8');
  assert.match(own, /mcpreel: /, 'the log file has mcpreel lines (-vv)');
  const ownOnStderr = errText.split('\n').filter((l) => l.startsWith('mcpreel:')).join('\n');
  noLeak(table, 'mcpreel log file', own);
  noLeak(table, 'mcpreel lines on stderr', ownOnStderr);
  return db;
}

// ---------------------------------------------------------------------------
// HTTP: our upstream (OAuth, query strings, headers), mcpreel in front.

function startUpstream(table) {
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method, url: req.url, rawHeaders: req.rawHeaders, body: body.toString() });
      const json = (status, o, headers = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify(o));
      };
      const path = req.url.split('?')[0];
      if (path === '/oauth/token') json(200, server.tokenResponse);
      else if (path === '/oauth/token-form') {
        res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' });
        res.end(server.formResponse);
      } else if (path === '/register') json(201, server.dcrResponse);
      else if (path === '/authorize') {
        res.writeHead(302, { Location: server.redirect, 'Set-Cookie': server.setCookie });
        res.end();
      } else if (path === '/fail') {
        res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="mcp", error="invalid_token"' });
        res.end(server.errorBody);
      } else json(200, { ok: true });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen, port: server.address().port })));
}

async function startRecorder(db, upstream, extra = []) {
  const argv = ['-v', '-v', 'record', '--db', db, '--listen', '127.0.0.1:0', '--upstream', upstream, ...extra];
  const p = await spawnUntilLine(MCPREEL, argv, {
    env: { ...process.env, ...ASAN_ENV },
    pattern: /^mcpreel: listening on (http:\/\/127\.0\.0\.1:(\d+))$/,
    name: 'mcpreel record (HTTP)',
  });
  return { url: p.match[1], stderr: p.stderr, stop: () => stopChild(p.child, p.exited, { graceMs: 10000 }) };
}

async function httpPart(table, dir) {
  const { add, mk } = table;
  const db = join(dir, 'http.db');
  const up = await startUpstream(table);
  const s = up.server;

  // What the upstream answers with.
  s.tokenResponse = {
    access_token: add('OAuth JSON answer access_token', 'http body', mk()),
    refresh_token: add('OAuth JSON answer refresh_token', 'http body', mk()),
    id_token: `eyJ${b64url(16)}.eyJ${b64url(20)}.${add('OAuth JSON answer id_token (JWT)', 'http body', mk())}`,
    token_type: 'Bearer',
    expires_in: 3600,
  };
  const formAccess = add('form-encoded answer access_token', 'http body', mk());
  s.formResponse = `access_token=${formAccess}&scope=repo&token_type=bearer`;
  s.dcrResponse = {
    client_id: 'c1',
    client_secret: add('registration answer client_secret', 'http body', mk()),
    registration_access_token: add('registration answer registration_access_token', 'http body', mk()),
  };
  const redirectCode = add('Location: ...?code=X', 'http header', mk());
  s.redirect = `http://127.0.0.1:1/callback?code=${redirectCode}&state=st1`;
  s.setCookie = `session=${add('Set-Cookie', 'http header', mk())}; HttpOnly`;
  s.errorBody = `invalid request: password=${add('error page text password=X', 'http body', mk())}`;

  const mc = await startRecorder(db, `http://127.0.0.1:${up.port}`);
  const sent = [];
  const send = async (path, opts) => {
    sent.push({ path, opts });
    return request(`${mc.url}${path}`, opts);
  };
  try {
    // OAuth token requests, form-encoded, in several spellings of the type.
    const form = {
      grant_type: 'authorization_code',
      code: add('form field code', 'http form', mk()),
      code_verifier: add('form field code_verifier', 'http form', mk()),
      refresh_token: add('form field refresh_token', 'http form', mk()),
      client_secret: add('form field client_secret', 'http form', mk()),
      password: add('form field password', 'http form', mk()),
      client_assertion: add('form field client_assertion', 'http form', mk()),
      device_code: add('form field device_code', 'http form', mk()),
      subject_token: add('form field subject_token', 'http form', mk()),
      client_id: 'public-id',
    };
    const formBody = new URLSearchParams(form).toString();
    let r = await send('/oauth/token', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: formBody });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), s.tokenResponse, 'the token answer reached the client unchanged');
    const form2 = `assertion=${add('form field assertion, type in upper case with charset', 'http form', mk())}&api%5Fkey=${add('form field with an encoded name', 'http form', mk())}`;
    r = await send('/oauth/token', { method: 'POST', headers: { 'Content-Type': 'Application/X-WWW-Form-URLEncoded; Charset=UTF-8' }, body: form2 });
    assert.equal(r.status, 200);
    r = await send('/oauth/token-form', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    assert.equal(r.body.toString(), s.formResponse, 'the form answer reached the client unchanged');
    r = await send('/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1:1/callback'] }) });
    assert.deepEqual(JSON.parse(r.body), s.dcrResponse);
    r = await send('/authorize?response_type=code&client_id=c1', { method: 'GET' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, s.redirect, 'Location reached the client unchanged');
    assert.equal(r.headers['set-cookie'][0], s.setCookie, 'Set-Cookie reached the client unchanged');

    // Query strings.
    const q = {
      api_key: add('query api_key', 'http query', mk()),
      access_token: add('query access_token', 'http query', mk()),
      sig: add('query sig (a SAS signature)', 'http query', mk()),
      sessionId: add('query sessionId', 'http query', mk()),
    };
    const encName = add('query with an encoded name (api%5Fkey)', 'http query', mk());
    r = await send(`/mcp?page=2&api_key=${q.api_key}&access_token=${q.access_token}&sig=${q.sig}&sessionId=${q.sessionId}&api%5Fkey=${encName}`, { method: 'GET' });
    assert.equal(r.status, 200);

    // Headers by the shape of their names.
    const basicPw = mk();
    const headers = {
      'X-Auth-Token': add('header X-Auth-Token', 'http header', mk()),
      'Private-Token': add('header Private-Token', 'http header', mk()),
      'X-Goog-Api-Key': add('header X-Goog-Api-Key', 'http header', mk()),
      'X-Client-Secret': add('header X-Client-Secret', 'http header', mk()),
      'X-Amz-Security-Token': add('header X-Amz-Security-Token', 'http header', mk()),
      Cookie: `sid=${add('header Cookie', 'http header', mk())}`,
      Authorization: `Basic ${add('header Authorization: Basic', 'http header', basicOf('u', basicPw), basicPw)}`,
      'Proxy-Authorization': `Bearer ${add('header Proxy-Authorization', 'http header', mk())}`,
      'X-Note': `forwarded Bearer ${add('Bearer in an unlisted header', 'http header', mk())}`,
      'Content-Type': 'application/json',
    };
    r = await send('/mcp', { method: 'POST', headers, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(r.status, 200);
    r = await send('/fail', { method: 'GET' });
    assert.equal(r.status, 401);
    assert.equal(r.body.toString(), s.errorBody);

    await new Promise((res) => setTimeout(res, SETTLE_MS));
    assertNoneInDb(table, db, 'while the HTTP recorder runs');
  } finally {
    const st = await mc.stop();
    assert.equal(st.code, 0, `mcpreel record (HTTP) exited 0; stderr: ${mc.stderr()}`);
    up.server.close();
  }

  // The wire: the upstream got every request byte for byte.
  assert.equal(up.seen.length, sent.length, 'every request reached the upstream');
  for (let i = 0; i < sent.length; i++) {
    const got = up.seen[i];
    assert.equal(got.url, sent[i].path, 'the target reached the upstream unchanged');
    assert.equal(got.body, sent[i].opts.body ?? '', 'the body reached the upstream unchanged');
    for (const [k, v] of Object.entries(sent[i].opts.headers ?? {})) {
      const at = got.rawHeaders.findIndex((h, j) => j % 2 === 0 && h.toLowerCase() === k.toLowerCase());
      assert.ok(at >= 0 && got.rawHeaders[at + 1] === v, `header ${k} reached the upstream unchanged`);
    }
  }
  assertNoneInDb(table, db, 'after the HTTP recorder exited');
  noLeak(table, "mcpreel's stderr (HTTP, -vv)", mc.stderr());

  // Only the values went: names, other fields, other headers stay.
  const ex = sql(db, 'SELECT method, path, request_headers, response_headers, CAST(body AS TEXT) AS body FROM http_exchanges ORDER BY id');
  const R = '[REDACTED]';
  assert.ok(ex.some((e) => e.path === `/mcp?page=2&api_key=${R}&access_token=${R}&sig=${R}&sessionId=${R}&api%5Fkey=${R}`), `the query's names and other values are kept: ${ex.map((e) => e.path).join(' ')}`);
  const post = ex.find((e) => e.method === 'POST' && e.path === '/mcp');
  const h = Object.fromEntries(JSON.parse(post.request_headers));
  assert.equal(h['Content-Type'], 'application/json', 'Content-Type is kept');
  assert.equal(h['X-Auth-Token'], R);
  assert.equal(h['X-Note'], `forwarded Bearer ${R}`, 'an unlisted header keeps all but the credential');
  const redirect = ex.find((e) => e.path.startsWith('/authorize'));
  const rh = Object.fromEntries(JSON.parse(redirect.response_headers));
  assert.equal(rh.Location, `http://127.0.0.1:1/callback?code=${R}&state=st1`, 'Location keeps its URL');
  const fail = ex.find((e) => e.path === '/fail');
  assert.equal(fail.body, `invalid request: password=${R}`, 'the error page is kept, the secret not');
  assert.equal(Object.fromEntries(JSON.parse(fail.response_headers))['WWW-Authenticate'], 'Bearer realm="mcp", error="invalid_token"', 'WWW-Authenticate is kept');
  const form = sql(db, "SELECT CAST(raw AS TEXT) AS raw FROM messages WHERE CAST(raw AS TEXT) LIKE 'grant_type=authorization_code%'")[0].raw;
  assert.equal(form, `grant_type=authorization_code&code=${R}&code_verifier=${R}&refresh_token=${R}&client_secret=${R}&password=${R}&client_assertion=${R}&device_code=${R}&subject_token=${R}&client_id=public-id`, 'the form keeps its names and other fields');
  return db;
}

// The SDK client with server-everything over Streamable HTTP, an
// Authorization header on every request.
async function sdkHttpPart(table, dir) {
  const { add, mk } = table;
  const db = join(dir, 'sdk-http.db');
  const ev = await startServerEverything('streamableHttp');
  const mc = await startRecorder(db, ev.origin);
  try {
    const token = add('SDK Streamable HTTP Authorization: Bearer', 'http header (SDK)', mk());
    const apiKey = add('SDK Streamable HTTP X-Api-Key', 'http header (SDK)', mk());
    const transport = new StreamableHTTPClientTransport(new URL(`${mc.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}`, 'X-Api-Key': apiKey } },
    });
    const client = new Client({ name: 'secrets-e2e-http', version: '1.0.0' });
    await client.connect(transport);
    const pw = mk();
    const basic = add('SDK echo of a Basic credential', 'message (SDK)', basicOf('dave', pw), pw);
    const sk = add('SDK echo of an sk- key', 'message (SDK)', `sk-${hex(16)}`);
    const message = `Authorization: Basic ${basic} and ${sk}`;
    const res = await client.callTool({ name: 'echo', arguments: { message } });
    assert.ok(res.content[0].text.includes(message), 'the echo came back with every byte');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    assertNoneInDb(table, db, 'while the SDK HTTP recorder runs');
    await client.close();
  } finally {
    const st = await mc.stop();
    assert.equal(st.code, 0, `mcpreel record exited 0; stderr: ${mc.stderr()}`);
    await ev.stop();
  }
  assertNoneInDb(table, db, 'after the SDK HTTP recorder exited');
  noLeak(table, "mcpreel's stderr (SDK HTTP)", mc.stderr());
  return db;
}

// --upstream URLs with secrets: refused or used, never printed or stored.
async function upstreamUrlPart(table, dir) {
  const { add, mk } = table;
  const up = await startUpstream(table);
  const out = [];
  try {
    const pw = add('--upstream with user:password@', 'argv (--upstream)', mk());
    const key = add('--upstream with ?api_key=', 'argv (--upstream)', mk());
    for (const [i, url] of [`http://user:${pw}@127.0.0.1:${up.port}/`, `http://127.0.0.1:${up.port}/mcp?api_key=${key}`].entries()) {
      const db = join(dir, `upstream-${i}.db`);
      let stderr;
      try {
        const mc = await startRecorder(db, url);
        await request(`${mc.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
        await mc.stop();
        stderr = mc.stderr();
      } catch (e) {
        // Refused at start: the reason it gives must not print it either.
        stderr = e.message;
      }
      noLeak(table, `mcpreel's stderr with --upstream ${i}`, stderr);
      if (existsSync(db)) {
        assertNoneInDb(table, db, `with a secret in --upstream ${i}`);
        out.push(db);
      }
    }
  } finally {
    up.server.close();
  }
  return out;
}

test('secrets: a table of shapes over stdio and HTTP reaches the peers byte for byte and no database file, export, report, show, stats or log line', { timeout: 300000 }, async () => {
  const t = tempDir('mcpreel-secrets-');
  const { dir } = t;
  const table = newTable();
  const dbs = [];
  dbs.push(await stdioPart(table, dir));
  dbs.push(await httpPart(table, dir));
  dbs.push(await sdkHttpPart(table, dir));
  dbs.push(...(await upstreamUrlPart(table, dir)));
  let views = 0;
  for (const db of dbs) views += await assertNoneInViews(table, db, dir);
  const markers = table.rows.reduce((n, r) => n + r.markers.length, 0);
  const leaked = new Set(table.leaks.map((l) => l.shape));
  console.log(`secrets: ${table.rows.length} shapes (${markers} markers) checked in ${dbs.length} databases (raw db, -wal, -shm, dump; while recording and after) and ${views} exports/reports/views, and in mcpreel's own log lines; ${leaked.size} shapes leaked`);
  assert.ok(table.rows.length >= 30, 'at least 30 shapes');
  assert.deepEqual([...leaked], [], `no shape leaks; where they did:\n${table.leaks.map((l) => l.text).join('\n')}`);
  t.cleanup();
});
