// HTTP recording edge cases, against an upstream of ours (peers/http_peer.mjs):
// headers and status codes pass through untouched, credentials are redacted
// in the record only, a path prefix, batches, the legacy endpoint rewrite,
// an unreachable upstream, bad arguments, and many clients at once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { mcpreelHttpSupport, readEventStream, request, spawnUntilLine, startMcpreelHttp, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, sql, tempDir } from './lib/util.mjs';
import { SSE_RAW } from './peers/sse_raw.mjs';

const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;

async function withPeerAndProxy(fn, { prefix = '', args = [] } = {}) {
  const t = tempDir();
  const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'http_peer.mjs')], {
    stream: 'stdout', pattern: /^http_peer: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: 'http_peer',
  });
  const upstream = peer.match[1];
  const db = join(t.dir, 'h.db');
  const mp = await startMcpreelHttp({ db, upstream: upstream + prefix, name: 'edges', args });
  try {
    await fn({ db, mp, upstream, stopProxy: () => mp.stop() });
  } finally {
    await mp.stop().catch(() => {});
    await stopChild(peer.child, peer.exited);
    t.cleanup();
  }
}

const pairs = (raw) => {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i], raw[i + 1]]);
  return out;
};

test('headers pass through untouched (Host and Origin too), credentials redacted only in the record, under a path prefix', { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, upstream, stopProxy }) => {
    const sent = {
      'Content-Type': 'application/json',
      Authorization: 'Bearer tok-123-secret',
      'Mcp-Session-Id': 'sess-secret-9',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'echo',
      'Mcp-Param-Region': 'param-secret-eu',
      'Last-Event-ID': 'ev-41',
      'X-Api-Key': 'apikey-secret-7',
      'X-Plain': 'visible value',
      Cookie: 'sid=cookie-secret',
      Origin: 'http://localhost:6274',
    };
    const body = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}';
    const r = await request(`${mp.url}/mirror/x?q=1`, { method: 'POST', headers: sent, body });
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.body.toString());
    assert.equal(seen.url, '/base/mirror/x?q=1', 'the path lands under the upstream prefix');
    assert.equal(seen.body, body, 'the body arrives unchanged');
    const got = new Map(pairs(seen.rawHeaders).map(([k, v]) => [k.toLowerCase(), v]));
    for (const [k, v] of Object.entries(sent)) assert.equal(got.get(k.toLowerCase()), v, `${k} reaches the upstream unchanged`);
    assert.equal(got.get('host'), new URL(mp.url).host, 'Host is what the client sent (naming mcpreel)');
    assert.notEqual(got.get('host'), new URL(upstream).host);

    await stopProxy();
    const x = sql(db, `SELECT method, path, request_headers, status, response_headers, outcome FROM http_exchanges`)[0];
    assert.equal(x.method, 'POST');
    assert.equal(x.path, '/mirror/x?q=1');
    assert.equal(x.status, 200);
    assert.equal(x.outcome, 'complete');
    const stored = new Map(JSON.parse(x.request_headers).map(([k, v]) => [k.toLowerCase(), v]));
    for (const k of ['authorization', 'mcp-session-id', 'mcp-param-region', 'x-api-key', 'cookie']) {
      assert.equal(stored.get(k), '[REDACTED]', `${k} is redacted in the record`);
    }
    for (const k of ['mcp-method', 'mcp-name', 'mcp-protocol-version', 'last-event-id', 'x-plain']) {
      assert.equal(stored.get(k), sent[Object.keys(sent).find((s) => s.toLowerCase() === k)], `${k} is kept`);
    }
    const dump = sql(db, `SELECT group_concat(request_headers) || group_concat(path) AS t FROM http_exchanges`)[0].t;
    for (const secret of ['tok-123-secret', 'sess-secret-9', 'param-secret-eu', 'apikey-secret-7', 'cookie-secret']) {
      assert.ok(!dump.includes(secret), `${secret} is not stored`);
    }
    const m = sql(db, `SELECT direction, kind, method, rpc_id FROM messages ORDER BY seq`);
    assert.deepEqual(m.map((r) => [r.direction, r.kind]), [['c2s', 'request'], ['s2c', 'invalid']],
      'the request is a message; the mirror reply is JSON but no JSON-RPC');
  }, { prefix: '/base', args: ['--redact-header', 'X-Api-Key'] });
});

test('--rewrite-host makes Host name the upstream; Origin still passes unchanged', { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ mp, upstream }) => {
    const r = await request(`${mp.url}/mirror`, { headers: { Host: 'client.example:1234', Origin: 'http://client.example:1234' } });
    const got = new Map(pairs(JSON.parse(r.body).rawHeaders).map(([k, v]) => [k.toLowerCase(), v]));
    assert.equal(got.get('host'), new URL(upstream).host);
    assert.equal(got.get('origin'), 'http://client.example:1234');
  }, { args: ['--rewrite-host'] });
});

// --durable holds each event until it is committed, then lets the bytes
// up to its end go: the same bytes must arrive, cut where they may be.
for (const args of [[], ['--durable']]) {
test(`an SSE body arrives byte for byte (comments, retry, CR and CRLF line ends); each event with data is one message${args.length ? ' (--durable)' : ''}`, { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, stopProxy }) => {
    const r = await request(`${mp.url}/sse-raw`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['transfer-encoding'], 'chunked', 'chunked stays chunked');
    assert.equal(r.body.toString('utf8'), SSE_RAW.join(''), 'the body is unchanged');
    await stopProxy();
    const m = sql(db, `SELECT kind, sse_event_id, CAST(raw AS TEXT) AS raw FROM messages ORDER BY seq`);
    assert.deepEqual(m, [
      { kind: 'notification', sse_event_id: '1', raw: '{"jsonrpc":"2.0","method":"a"}' },
      { kind: 'notification', sse_event_id: null, raw: '{"jsonrpc":"2.0",\n"method":"b"}' },
      { kind: 'response', sse_event_id: '3', raw: '{"jsonrpc":"2.0","id":9,"result":{}}' },
    ]);
  }, { args });
});
}

test('status codes, error bodies, WWW-Authenticate and /.well-known pass through', { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, stopProxy }) => {
    for (const code of [400, 401, 403, 404, 405]) {
      const r = await request(`${mp.url}/status/${code}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(r.status, code);
      assert.equal(r.body.toString(), `status ${code} from http_peer`);
      if (code === 401) assert.match(r.headers['www-authenticate'], /^Bearer resource_metadata=/);
    }
    const wk = await request(`${mp.url}/.well-known/oauth-protected-resource`);
    assert.equal(wk.status, 200);
    assert.equal(JSON.parse(wk.body).path, '/.well-known/oauth-protected-resource');
    await stopProxy();
    const rows = sql(db, `SELECT path, status, CAST(body AS TEXT) AS body, response_headers FROM http_exchanges ORDER BY id`);
    assert.deepEqual(rows.map((r) => r.status), [400, 401, 403, 404, 405, 200]);
    assert.equal(rows[1].body, 'status 401 from http_peer', 'an error page is kept for people');
    assert.ok(JSON.parse(rows[1].response_headers).some(([k]) => k === 'WWW-Authenticate'));
  });
});

test('a JSON-RPC batch is recorded as one batch each way', { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, stopProxy }) => {
    const batch = [{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'n' }, { jsonrpc: '2.0', id: 2, method: 'b' }];
    const r = await request(`${mp.url}/batch`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(batch) });
    assert.deepEqual(JSON.parse(r.body), [{ jsonrpc: '2.0', id: 1, result: { echo: 'a' } }, { jsonrpc: '2.0', id: 2, result: { echo: 'b' } }]);
    await stopProxy();
    const m = sql(db, `SELECT direction, kind, CAST(raw AS TEXT) AS raw FROM messages ORDER BY seq`);
    assert.deepEqual(m.map((x) => [x.direction, x.kind]), [['c2s', 'batch'], ['s2c', 'batch']]);
    assert.equal(m[0].raw, JSON.stringify(batch));
  });
});

for (const args of [[], ['--durable']]) {
test(`legacy HTTP+SSE: an endpoint naming the upstream by absolute URL is rewritten to name mcpreel${args.length ? ' (--durable)' : ''}`, { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, stopProxy }) => {
    let endpoint;
    const stream = readEventStream(`${mp.url}/legacy/sse`, {
      onEvent: (ev) => {
        if (ev.event === 'endpoint') {
          endpoint = ev.data;
          request(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":5,"method":"ping"}' });
          return undefined;
        }
        return 'stop';
      },
    });
    const res = await stream;
    assert.equal(endpoint, `${mp.url}/legacy/message?sessionId=abc123`, 'the endpoint names mcpreel, same path and session');
    assert.deepEqual(JSON.parse(res.events.at(-1).data), { jsonrpc: '2.0', id: 5, result: { echo: 'ping' } });
    await stopProxy();
    const s = sql(db, `SELECT id, transport, end_reason FROM sessions`);
    assert.equal(s.length, 1);
    assert.equal(s[0].transport, 'sse');
    assert.equal(s[0].end_reason, 'the client closed the SSE stream');
    const m = sql(db, `SELECT direction, kind, method FROM messages ORDER BY seq`);
    assert.deepEqual(m, [{ direction: 'c2s', kind: 'request', method: 'ping' }, { direction: 's2c', kind: 'response', method: 'ping' }]);
    const notes = sql(db, `SELECT CAST(text AS TEXT) AS t FROM events`).map((e) => e.t);
    assert.ok(notes.some((n) => /rewrote the message URL to http:\/\/127\.0\.0\.1:\d+\/legacy\/message\?sessionId=\[REDACTED\]/.test(n)), notes.join('\n'));
  }, { args });
});
}

for (const args of [[], ['--durable']]) {
// Once the start of the stream has gone, a later endpoint event can only
// pass as it came (and is noted); --durable still holds it, so rewrites it.
test(`legacy HTTP+SSE: a second endpoint event mid-stream is ${args.length ? 'rewritten too (--durable)' : 'passed on as it came'}`, { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, upstream, stopProxy }) => {
    const posted = [];
    const res = await readEventStream(`${mp.url}/legacy/sse`, {
      onEvent: (ev, events) => {
        if (ev.event === 'endpoint' && events.length === 1) {
          posted.push(request(ev.data, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":6,"method":"endpoint-again"}' }));
          return undefined;
        }
        return events.length === 3 ? 'stop' : undefined;
      },
    });
    await Promise.all(posted);
    assert.deepEqual(res.events.map((e) => e.event), ['endpoint', 'endpoint', 'message']);
    assert.equal(res.events[1].data, `${args.length ? mp.url : upstream}/legacy/message?sessionId=abc123`);
    assert.deepEqual(JSON.parse(res.events[2].data), { jsonrpc: '2.0', id: 6, result: { echo: 'endpoint-again' } });
    const stopped = await stopProxy();
    assert.equal(stopped.code, 0, stopped.stderr);
    const m = sql(db, `SELECT direction, method FROM messages ORDER BY seq`);
    assert.deepEqual(m, [{ direction: 'c2s', method: 'endpoint-again' }, { direction: 's2c', method: 'endpoint-again' }]);
    const notes = sql(db, `SELECT CAST(text AS TEXT) AS t FROM events`).map((e) => e.t);
    assert.equal(notes.filter((n) => (args.length ? /rewrote the message URL/ : /no longer held back for it, so it was passed on unchanged/).test(n)).length, args.length ? 2 : 1, notes.join('\n'));
  }, { args });
});
}

test('many clients at once, while another holds an event stream open', { skip: needsHttp, timeout: 60000 }, async () => {
  await withPeerAndProxy(async ({ db, mp, stopProxy }) => {
    let held = 0;
    const stream = readEventStream(`${mp.url}/legacy/sse`, { onEvent: () => { held++; return undefined; }, timeoutMs: 30000 }).catch(() => {});
    const bodies = Array.from({ length: 24 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"m${i}"}`);
    const results = await Promise.all(bodies.map((b, i) => request(`${mp.url}/${i % 2 ? 'slow' : 'mirror'}/${i}`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: b,
    })));
    results.forEach((r, i) => {
      assert.equal(r.status, 200);
      if (i % 2 === 0) assert.equal(JSON.parse(r.body).body, bodies[i], `client ${i} got its own answer`);
    });
    assert.equal(held, 1, 'the open stream got its endpoint event');
    await stopProxy();
    await stream;
    const n = sql(db, `SELECT count(*) AS n FROM http_exchanges WHERE method = 'POST' AND status = 200 AND outcome = 'complete'`)[0].n;
    assert.equal(n, 24);
    const conns = sql(db, `SELECT count(DISTINCT connection) AS n FROM http_exchanges`)[0].n;
    assert.equal(conns, 25, 'one connection per client');
  });
});

test('an unreachable upstream: 502 with a reason, and the record says so', { skip: needsHttp, timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'u.db');
    // Port 9 (discard) on loopback: nothing listens there.
    const mp = await startMcpreelHttp({ db, upstream: 'http://127.0.0.1:9' });
    const r = await request(`${mp.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(r.status, 502);
    assert.equal(r.headers['content-type'], 'application/json', 'a JSON-RPC request gets a JSON-RPC error');
    assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'mcpreel: cannot reach http://127.0.0.1:9: Connection refused' } });
    const stopped = await mp.stop();
    assert.equal(stopped.code, 0);
    assert.match(stopped.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/);
    const x = sql(db, `SELECT status, outcome FROM http_exchanges`)[0];
    assert.equal(x.status, null, 'no response came from the upstream');
    assert.match(x.outcome, /^502 from mcpreel: cannot reach/);
    const m = sql(db, `SELECT direction, kind FROM messages`);
    assert.deepEqual(m, [{ direction: 'c2s', kind: 'request' }], 'the request the client sent is recorded');
  } finally {
    t.cleanup();
  }
});

test('bad --listen or --upstream: a clear message and exit 2; a non-loopback address needs --allow-remote', { skip: needsHttp, timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'b.db');
    const cases = [
      [['--listen', 'nonsense:xx', '--upstream', 'http://127.0.0.1:1'], /bad listen address 'nonsense:xx'/],
      [['--listen', '127.0.0.1:0', '--upstream', 'ftp://x'], /bad upstream URL 'ftp:\/\/x': it must start with http:\/\/ or https:\/\//],
      [['--listen', '127.0.0.1:0', '--upstream', 'http://:80'], /bad upstream URL/],
      [['--upstream', 'http://127.0.0.1:1', '--', 'cat'], /either --upstream URL or -- CMD, not both/],
      [['--listen', '127.0.0.1:0'], /--listen needs --upstream URL .* or -- CMD/],
      [['--allow-remote', '--', 'cat'], /--allow-remote, --max-connections, --head-timeout and --idle-timeout are for --listen/],
      [['--listen', '0.0.0.0:0', '--upstream', 'http://127.0.0.1:1'], /not listening on 0\.0\.0\.0:0: it is not a loopback address.*give --allow-remote/],
      [['--listen', '[::]:0', '--upstream', 'http://127.0.0.1:1'], /not a loopback address/],
      [['--listen', '127.0.0.1:0', '--upstream', 'http://127.0.0.1:1', '--upstream-timeout', 'soon'], /--upstream-timeout takes whole seconds/],
    ];
    for (const [args, re] of cases) {
      const r = await runMcpreel(['record', '--db', db, ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr.toString(), re);
    }
    const wide = await spawnUntilLine(MCPREEL, ['record', '--db', db, '--listen', '0.0.0.0:0', '--upstream', 'http://127.0.0.1:1', '--allow-remote'], {
      pattern: /note: 0\.0\.0\.0:0 is not a loopback address/, name: 'mcpreel 0.0.0.0',
    }).catch((e) => e);
    assert.ok(!(wide instanceof Error), String(wide));
    await stopChild(wide.child, wide.exited);
  } finally {
    t.cleanup();
  }
});
