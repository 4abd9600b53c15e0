// `mcpreel record --listen` and what HTTP/1.1 leaves to an intermediary
// (RFC 9112): request targets of every form under the upstream's path
// prefix and query (3.2, and dot segments per RFC 3986 5.2.4), ambiguous
// body framing in responses and requests (6.1, 6.3), and trailer fields
// after a chunked body (7.1.2).  The upstream (peers/raw_upstream.mjs)
// records exactly what reached it; raw clients send what no HTTP library
// would.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';

import { mcpreelHttpSupport, startMcpreelHttp } from './lib/servers.mjs';
import { dechunk, parseResponse, rawClient, startRawUpstream } from './peers/raw_upstream.mjs';
import { runMcpreel, sql, tempDir } from './lib/util.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;
const RESULT = '{"jsonrpc":"2.0","id":1,"result":{}}';
const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const TRAILERS = 'X-Checksum: sha256=abc\r\nServer-Timing: db;dur=53\r\nX-Api-Key: trailer-secret-0123456789\r\n';

// Fields no trailer may carry (RFC 9110 6.5.1) between two that may.
const FORBIDDEN_TRAILERS = 'X-Before: 1\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\nHost: evil.example\r\nConnection: close\r\nKeep-Alive: timeout=1\r\nTE: trailers\r\nTrailer: X-After\r\nUpgrade: h2c\r\nX-After:  2 \r\n';
const ALLOWED_TRAILERS = 'X-Before: 1\r\nX-After:  2 \r\n';

/** The upstream's answers, by the last segment of the path. */
function answer(req) {
  const last = req.target.replace(/\?.*$/, '').split('/').pop();
  const json = 'Content-Type: application/json\r\n';
  switch (last) {
    case 'te-cl': // RFC 9112 6.3: Transfer-Encoding wins; Content-Length must go
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(RESULT)}0\r\n\r\n`;
    case 'cl-te':
      return `HTTP/1.1 200 OK\r\n${json}Transfer-Encoding: chunked\r\nContent-Length: 999\r\n\r\n${chunk(RESULT)}0\r\n\r\n`;
    case 'cl-list': // equal values: one Content-Length passed on
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: ${RESULT.length}, ${RESULT.length}\r\n\r\n${RESULT}`;
    case 'cl-twice':
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: ${RESULT.length}\r\nContent-Length: ${RESULT.length}\r\n\r\n${RESULT}`;
    case 'cl-conflict':
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: ${RESULT.length}\r\nContent-Length: ${RESULT.length + 1}\r\n\r\n${RESULT}`;
    case 'gzip-cl': // not chunked last: read until close, Content-Length goes
      return `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nNOT-REALLY-GZIP-BUT-UNTIL-CLOSE`;
    case 'trailers':
      return `HTTP/1.1 200 OK\r\n${json}Trailer: X-Checksum, Server-Timing, X-Api-Key\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(RESULT)}0\r\n${TRAILERS}\r\n`;
    case 'cl-wrap': // 2^64: wraps to 0 where it is multiplied before it is checked
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: 18446744073709551616\r\n\r\n${RESULT}`;
    case 'cl-wrap5': // 2^64 + 5: wraps to 5
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: 18446744073709551621\r\n\r\n${RESULT}`;
    case 'chunk-wrap': // a chunk size of 2^64 + 5 in hex
      return `HTTP/1.1 200 OK\r\n${json}Transfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n`;
    case 'trailers-forbidden':
      return `HTTP/1.1 200 OK\r\n${json}Transfer-Encoding: chunked\r\n\r\n${chunk(RESULT)}0\r\n${FORBIDDEN_TRAILERS}\r\n`;
    case 'slow':
      return new Promise((r) => setTimeout(() => r(`HTTP/1.1 200 OK\r\n${json}Content-Length: ${RESULT.length}\r\n\r\n${RESULT}`), 2000));
    case 'sse-endpoint': { // a legacy stream naming its endpoint by the query's path
      const data = new URL(req.target, 'http://x').searchParams.get('ep');
      return `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(`event: endpoint\ndata: ${data}\n\n`)}0\r\n\r\n`;
    }
    default:
      return `HTTP/1.1 200 OK\r\n${json}Content-Length: ${RESULT.length}\r\n\r\n${RESULT}`;
  }
}

async function withProxy(upstreamPath, fn) {
  const t = tempDir();
  const up = await startRawUpstream(answer);
  const db = join(t.dir, 'f.db');
  const mp = await startMcpreelHttp({ db, upstream: `${up.origin}${upstreamPath}`, name: 'framing' });
  try {
    await fn({ db, mp, up });
    const stopped = await mp.stop();
    assert.equal(stopped.code, 0, `mcpreel exits 0 on SIGTERM (ASan finds no leak); stderr:\n${stopped.stderr}`);
    return stopped;
  } finally {
    await mp.stop().catch(() => {});
    await up.close();
    t.cleanup();
  }
}

const get = (method, target, extra = '') => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;

// Each row: the client's request line, the status it gets, the target the
// upstream gets (null: nothing reaches it).  The upstream is
// http://.../base?k=v: a path prefix and a query sent with every request.
const TARGETS = [
  ['GET', '/mcp', 200, '/base/mcp?k=v'],
  ['GET', '/mcp?a=1', 200, '/base/mcp?k=v&a=1'],
  ['GET', '/', 200, '/base/?k=v'],
  ['GET', 'http://other.example/mcp?a=1', 200, '/base/mcp?k=v&a=1'],
  ['GET', 'HTTP://other.example/mcp', 200, '/base/mcp?k=v'],
  ['GET', 'HtTpS://x/a/./b', 200, '/base/a/b?k=v'],
  ['GET', 'HTTP://x/../', 400, null],
  ['GET', 'http://x/a/../../etc', 400, null],
  ['GET', 'ftp://x/mcp', 400, null],
  ['GET', 'http://user:pw@x/mcp', 400, null],
  ['GET', 'http:///mcp', 400, null],
  ['GET', 'mcp', 400, null],
  ['GET', '../mcp', 400, null],
  ['GET', 'x:/mcp', 400, null],
  ['CONNECT', '127.0.0.1:22', 501, null],
  ['CONNECT', '/mcp', 501, null],
  ['OPTIONS', '*', 200, '/base?k=v'],
  ['OPTIONS', 'http://x', 200, '/base?k=v'],
  ['GET', '*', 400, null],
  ['GET', '/..', 400, null],
  ['GET', '/../admin', 400, null],
  ['GET', '/a/../../admin', 400, null],
  ['GET', '/a/../b', 200, '/base/b?k=v'],
  ['GET', '/a/./b/.', 200, '/base/a/b/?k=v'],
  ['GET', '/%2e%2e/admin', 400, null],
  ['GET', '/%2E%2E/admin', 400, null],
  ['GET', '/.%2E/admin', 400, null],
  ['GET', '/%2e./admin', 400, null],
  ['GET', '/a/%2e%2e/b', 200, '/base/b?k=v'],
  ['GET', '/a/..;/..;/admin', 400, null],
  ['GET', '/a%2f..%2f..%2fadmin', 400, null],
  ['GET', '/a%5C..%5C..%5Cadmin', 400, null],
  ['GET', '/a\\..\\..\\admin', 400, null],
  ['GET', '/mcp#frag', 400, null],
  ['GET', '/mcp?next=/../../admin', 200, '/base/mcp?k=v&next=/../../admin'],
  // What an upstream that decodes before it removes dot segments may read
  // as '.', '/' or the end of the path.
  ['GET', '/..%00/x', 400, null],
  ['GET', '/a%00', 400, null],
  ['GET', '/a/..%3b/..%3b/x', 400, null],
  ['GET', '/a/..%3Bx/x', 400, null],
  ['GET', '/a/..;x/b', 400, null],
  ['GET', '/%u002e%u002e/', 400, null],
  ['GET', '/%c0%ae%c0%ae/', 400, null],
  ['GET', '/%e0%80%ae%e0%80%ae/', 400, null],
  ['GET', '/a;v=1/b', 200, '/base/a;v=1/b?k=v'],
  ['GET', '/caf%c3%a9', 200, '/base/caf%c3%a9?k=v'],
  // An absolute-form's host becomes Host: host[:port] only.
  ['GET', 'http://h,evil/x', 400, null],
  ['GET', 'http://h%2cevil/x', 400, null],
  ['GET', 'http://h:8o/x', 400, null],
  ['GET', 'http://[::1]:8080/mcp', 200, '/base/mcp?k=v'],
];

test('request targets of every form stay under the upstream prefix, with its query, or are refused', { skip: needsHttp, timeout: 120000 }, async () => {
  await withProxy('/base?k=v', async ({ db, mp, up }) => {
    const rows = [];
    for (const [method, target, wantStatus, wantUp] of TARGETS) {
      const before = up.requests.length;
      const r = parseResponse(await rawClient(mp.url, [get(method, target)]));
      const got = up.requests.slice(before).map((q) => `${q.method} ${q.target}`);
      rows.push(`${method} ${target} -> client ${r.status}, upstream ${got.join(', ') || '(nothing)'}`);
      assert.equal(r.status, wantStatus, `${method} ${target}: status; body ${r.rest}`);
      assert.deepEqual(got, wantUp === null ? [] : [`${method} ${wantUp}`], `${method} ${target}: what the upstream got`);
      if (wantStatus >= 400) assert.match(r.rest, /^mcpreel: .{10,}/, `${method} ${target}: a reason`);
    }
    console.log(rows.map((r) => `# ${r}`).join('\n'));
    // An absolute-form target's host is the Host the upstream gets (RFC
    // 9112 3.2.2); an origin-form request keeps the client's.
    const hostOf = (q) => q.head.match(/\r\nhost: ([^\r]*)/gi).map((l) => l.slice(8));
    assert.deepEqual(hostOf(up.requests.find((q) => q.target === '/base/mcp?k=v&a=1' && /other/i.test(q.head))), ['other.example']);
    assert.deepEqual(hostOf(up.requests[0]), ['127.0.0.1']);
    for (const q of up.requests) {
      assert.ok(q.target === '/base?k=v' || q.target.startsWith('/base/'), `never outside the prefix: ${q.target}`);
      assert.ok(q.target.includes('?k=v'), `the upstream's query always: ${q.target}`);
    }
    await mp.stop();
    // Every request is recorded under the target the client sent.
    const x = sql(db, 'SELECT method, path, outcome FROM http_exchanges ORDER BY id');
    assert.equal(x.length, TARGETS.length, JSON.stringify(x));
    assert.match(x.find((e) => e.method === 'CONNECT').outcome, /^501 from mcpreel: CONNECT is not relayed/);
    assert.match(x.find((e) => e.path === '/../admin').outcome, /^400 from mcpreel: .*climbs above the root/);
  });
});

test('legacy endpoint events: a path with dot segments is taken as the client resolves it', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('/base', async ({ mp }) => {
    const cases = [
      // [endpoint the upstream names, what the client must get]
      ['/base/messages?sessionId=1', '/messages?sessionId=1'],
      ['/base/x/../messages?sessionId=2', '/messages?sessionId=2'],
      ['/base/%2e/messages?sessionId=3', '/messages?sessionId=3'],
      ['/base/../messages?sessionId=4', '/base/../messages?sessionId=4'],
      ['/other/../base/messages?sessionId=5', '/messages?sessionId=5'],
      ['/../../messages?sessionId=6', '/../../messages?sessionId=6'],
    ];
    for (const [ep, want] of cases) {
      const raw = await rawClient(mp.url, [get('GET', `/sse-endpoint?ep=${encodeURIComponent(ep)}`, 'Accept: text/event-stream\r\n')]);
      const r = parseResponse(raw);
      assert.equal(r.status, 200, raw);
      const d = dechunk(Buffer.from(r.rest, 'latin1'));
      assert.ok(d.done, `a whole chunked stream: ${r.rest}`);
      assert.equal(d.body.toString(), `event: endpoint\ndata: ${want}\n\n`, `endpoint ${ep}`);
    }
  });
});

test('legacy endpoint events under an upstream with a query: the query is not given twice', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('/base?k=v', async ({ mp, up }) => {
    const raw = await rawClient(mp.url, [get('GET', `/sse-endpoint?ep=${encodeURIComponent('/base/messages?k=v&sessionId=7')}`, 'Accept: text/event-stream\r\n')]);
    const d = dechunk(Buffer.from(parseResponse(raw).rest, 'latin1'));
    assert.equal(d.body.toString(), 'event: endpoint\ndata: /messages?sessionId=7\n\n');
    const before = up.requests.length;
    const r = parseResponse(await rawClient(mp.url, [get('POST', '/messages?sessionId=7', 'Content-Length: 0\r\n')]));
    assert.equal(r.status, 200);
    assert.deepEqual(up.requests.slice(before).map((q) => q.target), ['/base/messages?k=v&sessionId=7'], 'the upstream gets the endpoint it named');
  });
});

test('responses with ambiguous framing: Content-Length removed beside Transfer-Encoding, repeated ones made one, conflicting ones 502', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('', async ({ db, mp }) => {
    const fetchRaw = async (path) => parseResponse(await rawClient(mp.url, [get('GET', path)]));
    const cl = (r) => r.fields.filter(([n]) => n === 'content-length').map(([, v]) => v);
    const te = (r) => r.fields.filter(([n]) => n === 'transfer-encoding').map(([, v]) => v);

    for (const path of ['/te-cl', '/cl-te']) {
      const r = await fetchRaw(path);
      assert.equal(r.status, 200);
      assert.deepEqual(cl(r), [], `${path}: Content-Length removed (RFC 9112 6.3)`);
      assert.deepEqual(te(r), ['chunked'], `${path}: chunked`);
      const d = dechunk(Buffer.from(r.rest, 'latin1'));
      assert.ok(d.done, `${path}: the chunked body ends`);
      assert.equal(d.body.toString(), RESULT, `${path}: the body is whole`);
    }
    for (const path of ['/cl-list', '/cl-twice']) {
      const r = await fetchRaw(path);
      assert.equal(r.status, 200);
      assert.deepEqual(cl(r), [String(RESULT.length)], `${path}: one Content-Length`);
      assert.equal(r.rest, RESULT);
    }
    const conflict = await fetchRaw('/cl-conflict');
    assert.equal(conflict.status, 502, 'conflicting Content-Length values: 502');
    assert.match(conflict.rest, /differing Content-Length values/);

    // A length past 2^62 (2^64 wraps to 0 and 2^64 + 5 to 5 if it is
    // multiplied before it is checked): 502, nothing of it passed on.
    for (const path of ['/cl-wrap', '/cl-wrap5']) {
      const r = await fetchRaw(path);
      assert.equal(r.status, 502, `${path}: 502`);
      assert.match(r.rest, /Content-Length is larger than 2\^62 bytes/, path);
      assert.ok(!r.rest.includes('"result"'), `${path}: no body passed on`);
    }
    // A chunk size past it: the head has gone, so the body is cut short.
    const cw = await fetchRaw('/chunk-wrap');
    assert.equal(cw.status, 200);
    const cwd = dechunk(Buffer.from(cw.rest, 'latin1'));
    assert.ok(!cwd.done && !cw.rest.includes('hello'), `chunk size 2^64 + 5: the body is not passed on as 5 bytes: ${cw.rest}`);

    const gz = await fetchRaw('/gzip-cl');
    assert.equal(gz.status, 200);
    assert.deepEqual(cl(gz), [], 'not chunked last: Content-Length removed');
    assert.deepEqual(te(gz), ['gzip']);
    assert.equal(gz.rest, 'NOT-REALLY-GZIP-BUT-UNTIL-CLOSE', 'the body runs until the upstream closes');

    await mp.stop();
    const notes = sql(db, "SELECT text FROM events WHERE kind = 'note'").map((e) => e.text);
    assert.ok(notes.some((n) => /both Transfer-Encoding and Content-Length: passed on with Transfer-Encoding only/.test(n)), notes.join('\n'));
    assert.ok(notes.some((n) => /Content-Length repeated: passed on with one Content-Length/.test(n)), notes.join('\n'));
  });
});

// Requests whose framing two servers could read two ways (how request
// smuggling starts): answered 400 and the connection closed, nothing sent
// upstream, including what was pipelined behind them.
const BAD_REQUESTS = [
  ['both Transfer-Encoding and Content-Length', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /both Transfer-Encoding and Content-Length/],
  ['Content-Length then Transfer-Encoding', 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n', /both Transfer-Encoding and Content-Length/],
  ['Transfer-Encoding not chunked last', 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n', /does not end in chunked/],
  ['Transfer-Encoding identity', 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}', /both Transfer-Encoding and Content-Length/],
  ['chunked twice', 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /chunked more than once/],
  ['Transfer-Encoding in HTTP/1.0', 'POST /mcp HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /HTTP\/1\.0 request has a Transfer-Encoding/],
  ['equal Content-Length list', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}', /more than one Content-Length/],
  ['Content-Length twice', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}', /more than one Content-Length/],
  ['conflicting Content-Length', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 30\r\n\r\n{}', /more than one Content-Length/],
  ['two Host fields', 'GET /mcp HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n', /more than one Host/],
  ['Content-Length not a number', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}', /not a number/],
  // Lengths that wrap a 64-bit number where it is multiplied before it
  // is checked: 2^64 to 0 (the body read as the next request), 2^64 + 5
  // to 5.
  ['Content-Length 2^64', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n', /larger than 2\^62/],
  ['Content-Length 2^64 + 5', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551621\r\n\r\n{"a":', /larger than 2\^62/],
  ['chunk size 2^64 + 5', 'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n', /chunk size is larger than 2\^62/],
  // An empty list element: one value to us, none to an upstream that
  // then reads the body as the next request.
  ['Content-Length with a trailing comma', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2,\r\n\r\n{}', /not a number \(a request's must be digits alone\)/],
  ['Content-Length with a leading comma', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: , 2\r\n\r\n{}', /not a number/],
];

test('requests with ambiguous framing: 400, the connection closed, nothing reaches the upstream', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('', async ({ mp, up }) => {
    for (const [what, bytes, re] of BAD_REQUESTS) {
      const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
      const raw = await rawClient(mp.url, [bytes + smuggled]);
      const r = parseResponse(raw);
      assert.equal(r.status, 400, `${what}: ${raw}`);
      assert.ok(r.fields.some(([n, v]) => n === 'connection' && v === 'close'), `${what}: Connection: close`);
      assert.match(r.rest, re, what);
      assert.equal(raw.split('HTTP/1.1 ').length - 1, 1, `${what}: one response, the connection closed after it`);
    }
    assert.deepEqual(up.requests.map((q) => q.target), [], 'nothing reached the upstream');
    // A well-framed request still goes through.
    const ok = parseResponse(await rawClient(mp.url, [get('GET', '/ok')]));
    assert.equal(ok.status, 200);
  });
});

test('trailer fields after a chunked body reach the peer unchanged and are recorded (redacted like headers)', { skip: needsHttp, timeout: 60000 }, async () => {
  const secret = 'request-trailer-secret-0123456789';
  await withProxy('', async ({ db, mp, up }) => {
    // Response trailers, to the client.
    const r = parseResponse(await rawClient(mp.url, [get('GET', '/trailers')]));
    assert.equal(r.status, 200);
    const d = dechunk(Buffer.from(r.rest, 'latin1'));
    assert.ok(d.done);
    assert.equal(d.body.toString(), RESULT);
    assert.equal(d.trailers, TRAILERS, 'the response trailers reach the client as the upstream sent them');

    // Request trailers, to the upstream.
    const ping = '{"jsonrpc":"2.0","id":7,"method":"ping"}';
    const reqTrailers = `X-Request-Sum: 42\r\nX-Api-Key: ${secret}\r\n`;
    const post = `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Request-Sum\r\nConnection: close\r\n\r\n${chunk(ping.slice(0, 10))}${chunk(ping.slice(10))}0\r\n${reqTrailers}\r\n`;
    const p = parseResponse(await rawClient(mp.url, [post]));
    assert.equal(p.status, 200);
    const q = up.requests.find((x) => x.method === 'POST');
    assert.equal(q.body, ping, 'the request body reached the upstream whole');
    assert.equal(q.trailers, reqTrailers, 'the request trailers reached the upstream as sent');

    await mp.stop();
    const x = sql(db, 'SELECT method, path, request_trailers, response_trailers FROM http_exchanges ORDER BY id');
    assert.deepEqual(JSON.parse(x[0].response_trailers), [['X-Checksum', 'sha256=abc'], ['Server-Timing', 'db;dur=53'], ['X-Api-Key', '[REDACTED]']]);
    assert.equal(x[0].request_trailers, null);
    assert.deepEqual(JSON.parse(x[1].request_trailers), [['X-Request-Sum', '42'], ['X-Api-Key', '[REDACTED]']], 'request trailers recorded');
    assert.equal(x[1].response_trailers, null);
    const dump = sql(db, "SELECT coalesce(request_trailers, '') || coalesce(response_trailers, '') AS t FROM http_exchanges").map((e) => e.t).join('');
    assert.ok(!dump.includes('trailer-secret-0123456789'), 'no trailer secret in the record');

    // export and import carry them.
    const file = join(dirname(db), 'x.jsonl');
    const ex = await runMcpreel(['export', '--db', db, '-o', file, 'last']);
    assert.equal(ex.code, 0, String(ex.stderr));
    const db2 = join(dirname(db), 'imported.db');
    const im = await runMcpreel(['import', '--db', db2, file]);
    assert.equal(im.code, 0, String(im.stderr));
    const y = sql(db2, 'SELECT request_trailers, response_trailers FROM http_exchanges ORDER BY id');
    assert.deepEqual(y, x.map((r) => ({ request_trailers: r.request_trailers, response_trailers: r.response_trailers })), 'trailers survive export and import');
  });
});

test('replay --upstream with a query sends it with every request', { skip: needsHttp, timeout: 60000 }, async () => {
  let db;
  const t = tempDir();
  const up = await startRawUpstream(answer);
  try {
    db = join(t.dir, 'r.db');
    const mp = await startMcpreelHttp({ db, upstream: up.origin, name: 'to-replay' });
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const r = parseResponse(await rawClient(mp.url, [`POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${ping.length}\r\nConnection: close\r\n\r\n${ping}`]));
    assert.equal(r.status, 200);
    assert.equal((await mp.stop()).code, 0);
    const before = up.requests.length;
    const rep = await runMcpreel(['replay', '--db', db, 'to-replay', '--upstream', `${up.origin}/base?k=v&token=t0`, '--timeout', '5', '--no-record']);
    const got = up.requests.slice(before).map((q) => `${q.method} ${q.target}`);
    assert.ok(got.length >= 1, `the replay reached the upstream; stderr ${rep.stderr}`);
    for (const g of got) assert.match(g, /^(POST|GET|DELETE) \/base\?k=v&token=t0$/, 'the query goes with every request');
    assert.equal(rep.code, 0, `the recorded answer comes back: ${rep.stdout}${rep.stderr}`);
  } finally {
    await up.close();
    t.cleanup();
  }
});

test('trailer fields no trailer may carry (framing, routing, hop-by-hop) are not passed on, and are noted', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('', async ({ db, mp, up }) => {
    const r = parseResponse(await rawClient(mp.url, [get('GET', '/trailers-forbidden')]));
    assert.equal(r.status, 200);
    const d = dechunk(Buffer.from(r.rest, 'latin1'));
    assert.ok(d.done);
    assert.equal(d.body.toString(), RESULT);
    assert.equal(d.trailers, ALLOWED_TRAILERS, 'the client gets the allowed response trailers, byte for byte');

    const ping = '{"jsonrpc":"2.0","id":7,"method":"ping"}';
    const post = `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk(ping)}0\r\n${FORBIDDEN_TRAILERS}\r\n`;
    const p = parseResponse(await rawClient(mp.url, [post]));
    assert.equal(p.status, 200);
    const q = up.requests.find((x) => x.method === 'POST');
    assert.equal(q.body, ping);
    assert.equal(q.trailers, ALLOWED_TRAILERS, 'the upstream gets the allowed request trailers, byte for byte');

    await mp.stop();
    const notes = sql(db, "SELECT text FROM events WHERE kind = 'note'").map((e) => e.text);
    const dropped = 'Content-Length, Transfer-Encoding, Host, Connection, Keep-Alive, TE, Trailer, Upgrade';
    assert.ok(notes.some((n) => n.includes(`response trailer fields not passed on`) && n.includes(dropped)), notes.join('\n'));
    assert.ok(notes.some((n) => n.includes(`request trailer fields not passed on`) && n.includes(dropped)), notes.join('\n'));
    // The record keeps what the peer sent.
    const x = sql(db, 'SELECT request_trailers, response_trailers FROM http_exchanges ORDER BY id');
    assert.equal(JSON.parse(x[0].response_trailers).length, 10, 'all ten response trailers recorded');
    assert.equal(JSON.parse(x[1].request_trailers).length, 10, 'all ten request trailers recorded');
  });
});

test('an --upstream path with an encoded \'/\' is the operator\'s to give: taken, and its endpoint events rewritten', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('/v1/org%2Fname/mcp', async ({ mp, up }) => {
    const r = parseResponse(await rawClient(mp.url, [get('GET', '/x?a=1')]));
    assert.equal(r.status, 200);
    assert.equal(up.requests.at(-1).target, '/v1/org%2Fname/mcp/x?a=1');
    // The endpoint event names the upstream's own path: rewritten to ours.
    const ep = '/v1/org%2Fname/mcp/messages?sessionId=1';
    const raw = await rawClient(mp.url, [get('GET', `/sse-endpoint?ep=${encodeURIComponent(ep)}`, 'Accept: text/event-stream\r\n')]);
    const d = dechunk(Buffer.from(parseResponse(raw).rest, 'latin1'));
    assert.equal(d.body.toString(), 'event: endpoint\ndata: /messages?sessionId=1\n\n', 'the client is sent to mcpreel, not around it');
    // A client's own encoded '/' is still refused.
    const bad = parseResponse(await rawClient(mp.url, [get('GET', '/a%2f..%2fx')]));
    assert.equal(bad.status, 400);
  });
});

test('an --upstream URL with an empty query adds no \'?\' or \'&\'', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('/mcp?', async ({ mp, up }) => {
    for (const [target, want] of [['/x', '/mcp/x'], ['/x?a=1', '/mcp/x?a=1'], ['/x?', '/mcp/x?']]) {
      const r = parseResponse(await rawClient(mp.url, [get('GET', target)]));
      assert.equal(r.status, 200);
      assert.equal(up.requests.at(-1).target, want, `${target}: the client's own query, as sent`);
    }
  });
});

test('a session made by a later exchange starts no later than an earlier one that joins it', { skip: needsHttp, timeout: 60000 }, async () => {
  await withProxy('', async ({ db, mp }) => {
    const body = (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
    const post = (path, id) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body(id).length}\r\nConnection: close\r\n\r\n${body(id)}`;
    // The upstream has no sessions; /slow answers after 2 s, /fast at once.
    const slow = rawClient(mp.url, [post('/slow', 1)]);
    await new Promise((r) => setTimeout(r, 500));
    const fast = parseResponse(await rawClient(mp.url, [post('/fast', 2)]));
    assert.equal(fast.status, 200);
    assert.equal(parseResponse(await slow).status, 200);
    await mp.stop();
    const s = sql(db, 'SELECT id, started_ns FROM sessions');
    assert.equal(s.length, 1, JSON.stringify(s));
    const x = sql(db, 'SELECT path, started_ns FROM http_exchanges ORDER BY started_ns');
    assert.deepEqual(x.map((e) => e.path), ['/slow', '/fast']);
    // In SQL: nanosecond times are past a double's exact integers.
    const d = sql(db, `SELECT (SELECT min(started_ns) FROM http_exchanges) - s.started_ns AS x_ns,
      (SELECT min(ts_ns) FROM messages) - s.started_ns AS m_ns FROM sessions s`)[0];
    console.log(`# first exchange ${d.x_ns} ns and first message ${d.m_ns} ns after the session's start`);
    assert.ok(d.x_ns >= 0, 'the session starts no later than its first exchange');
    assert.ok(d.m_ns >= 0, 'nor than its first message');
  });
});
