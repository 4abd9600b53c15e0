// mcpreel check on recordings: real sessions (the SDK client against
// server-everything over stdio, Streamable HTTP and HTTP+SSE) check clean
// but for the faults named here; a server of ours breaking one rule gives
// exactly that finding; the four output forms carry the same findings;
// exit codes 0, 1 and 2.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { startCheckHttp } from './peers/checkhttp.mjs';

import { run2026 } from './lib/client2026.mjs';
import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, spawnUntilLine, startMcpreelHttp, startServerEverything, stopChild } from './lib/servers.mjs';
import { MCPREEL, PEERS_DIR, runMcpreel, tempDir } from './lib/util.mjs';

/** runMcpreel with stdout and stderr as text. */
async function run(args) {
  const r = await runMcpreel(args);
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** `mcpreel check ARGS --json`: the exit code and the parsed report. */
async function checkJson(db, args = ['last']) {
  const r = await run(['check', '--db', db, '--json', ...args]);
  return { code: r.code, report: r.code === 2 ? null : JSON.parse(r.stdout), stderr: r.stderr };
}

/*
 * What the session script of lib/session.mjs does that the specification
 * does not want: it calls a tool named "no-such-tool" to see the error, and
 * the tools/list it just had does not name it (2025-11-25 server/tools:
 * "Clients ... call tools listed by tools/list": tool.unknown on the
 * call), and the SDK's McpServer answers that call with a result with
 * isError ("Tool no-such-tool not found": it throws the JSON-RPC error
 * and then catches it into a tool result), where 2025-11-25
 * server/tools "Error Handling" says "Protocol Errors: Standard JSON-RPC
 * errors for issues like: - Unknown tools" (tool.unknown-as-result on
 * the answer; tool.unknown is the client's fault, this one the
 * server's, so both).  Then it calls get-sum with {a: "two"} to see the
 * error: the arguments do not satisfy get-sum's inputSchema (a number "a" and "b"
 * required: tool.arguments twice, $.params.arguments and
 * $.params.arguments.a); the server answers with isError, as 2025-11-25
 * wants for input validation errors.  Nothing else is a finding: every
 * other call's arguments fit the tool's inputSchema, every
 * structuredContent its outputSchema.
 */
function assertOnlyNoSuchTool(report, label) {
  const got = report.findings.map((f) => `${f.rule} ${f.direction} ${f.method}`);
  assert.deepEqual(got, ['tool.unknown c2s tools/call', 'tool.unknown-as-result s2c tools/call',
    'tool.arguments c2s tools/call', 'tool.arguments c2s tools/call'],
  `${label}: ${JSON.stringify(report.findings, null, 1)}`);
  for (const f of report.findings) {
    assert.match(f.message, f.rule === 'tool.arguments' ? /get-sum/ : /no-such-tool/);
    assert.equal(f.severity, 'warning');
    assert.equal(f.spec, '2025-11-25 server/tools');
  }
  assert.equal(report.findings[1].id, report.findings[0].id, 'the answer to that call');
  assert.deepEqual(report.findings.slice(2).map((f) => f.path).sort(), ['$.params.arguments', '$.params.arguments.a']);
}

test('a real stdio session (SDK client, server-everything) checks clean but for its deliberate calls (an unlisted tool, bad arguments); the four forms agree', { timeout: 180000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });

    const { code, report } = await checkJson(db, ['sdk']);
    assert.equal(code, 0, 'a warning is no error: exit 0');
    assert.equal(report.sessions[0].version, '2025-11-25');
    assert.ok(report.sessions[0].messages > 50);
    assertOnlyNoSuchTool(report, 'stdio');
    const f = report.findings[0];

    const text = await run(['check', '--db', db, 'sdk']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`^seq ${f.seq} c2s tools/call id ${f.id}$`, 'm'));
    assert.match(text.stdout, /^ {2}warning +tool\.unknown +tool "no-such-tool" is not in the last tools\/list \u2014 \$\.params\.name {2}\[2025-11-25 server\/tools\]$/m);
    assert.match(text.stdout, /^0 errors, 4 warnings, 0 notes in 1 session \(\d+ messages checked\)$/m);

    const sarifFile = join(t.dir, 'out.sarif');
    const sarif = await run(['check', '--db', db, '--sarif', '-o', sarifFile, 'sdk']);
    assert.equal(sarif.code, 0);
    assert.equal(sarif.stdout, '', '-o writes the file, not stdout');
    const s = JSON.parse(readFileSync(sarifFile, 'utf8'));
    assert.equal(s.version, '2.1.0');
    assert.deepEqual(s.runs[0].tool.driver.rules.map((r) => r.id).sort(), ['tool.arguments', 'tool.unknown', 'tool.unknown-as-result']);
    assert.equal(s.runs[0].results.length, 4);
    assert.deepEqual(s.runs[0].results.map((x) => x.message.text), report.findings.map((x) => x.message));
    const res = s.runs[0].results[0];
    assert.equal(res.ruleId, 'tool.unknown');
    assert.equal(res.level, 'warning');
    assert.equal(res.message.text, f.message);
    assert.equal(res.locations[0].logicalLocations[0].fullyQualifiedName, `session ${f.session}/seq ${f.seq} c2s tools/call id ${f.id}`);

    const junit = await run(['check', '--db', db, '--junit', 'sdk']);
    assert.equal(junit.code, 0);
    assert.match(junit.stdout, /^<\?xml version="1.0"/);
    const cases = [...junit.stdout.matchAll(/<testcase [^>]*name="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(cases, [...new Set(report.findings.map((x) => `seq ${x.seq} ${x.direction} ${x.method} id ${x.id}`))]);
    assert.doesNotMatch(junit.stdout, /<failure/, 'a warning does not fail the case');
    assert.match(junit.stdout, /tool\.unknown: tool &quot;no-such-tool&quot;/);
  } finally {
    t.cleanup();
  }
});

for (const mode of ['streamableHttp', 'sse']) {
  test(`a real ${mode} session through record --listen checks clean but for its deliberate calls (an unlisted tool, bad arguments)`, { timeout: 180000 }, async (ctx) => {
    const support = mcpreelHttpSupport();
    if (!support.ok) { ctx.skip(support.reason); return; }
    const t = tempDir();
    const se = await startServerEverything(mode);
    try {
      const db = join(t.dir, 'rec.db');
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: mode });
      const url = `${proxy.url}${new URL(se.url).pathname}`;
      try {
        await runSessionWith(mode === 'sse' ? sseTransport(url) : streamableHttpTransport(url), {});
      } finally {
        await proxy.stop();
      }
      const { code, report } = await checkJson(db, [mode]);
      assert.equal(code, 0);
      assertOnlyNoSuchTool(report, mode);
    } finally {
      await se.stop();
      t.cleanup();
    }
  });
}

test('a real 2026-07-28 session (peer2026 over stdio: discover, tools, an input_required round trip, a subscription) checks clean', { timeout: 120000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const out = await run2026(MCPREEL, ['record', '--db', db, '--name', 's2026', '--', process.execPath, join(PEERS_DIR, 'peer2026.mjs')]);
    assert.equal(out.confirm, 'confirmed: deploy', 'the input_required round trip completed');
    const { code, report } = await checkJson(db, ['s2026']);
    assert.equal(code, 0);
    assert.equal(report.sessions[0].version, '2026-07-28');
    assert.deepEqual(report.findings, []);
  } finally {
    t.cleanup();
  }
});

/*
 * A flood of requests nobody answers (checkpeer deaf answers initialize
 * only).  check tracks 10 000 (one note says so), lists 100 unanswered and
 * counts the rest; its peak RSS (plain build, VmHWM read while it runs)
 * stays under 64 MiB, a bound that does not grow with the session.
 */
test('check: a session of 200 000 unanswered requests, in bounded memory', { timeout: 300000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const N = 200000;
    const head = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
      + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
    let input = head;
    for (let i = 1; i <= N; i++) input += `{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`;
    const rec = await runMcpreel(['record', '--db', db, '--name', 'flood', '--', process.execPath, join(PEERS_DIR, 'checkpeer.mjs'), 'deaf'],
      { input, timeoutMs: 240000 });
    assert.equal(rec.code, 0, rec.stderr.toString());

    const bin = process.env.MCPREEL_VALGRIND ?? MCPREEL;
    const child = spawn(bin, ['check', '--db', db, '--json', 'flood'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let peak = 0;
    const timer = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) * 1024);
      } catch { /* gone */ }
    }, 5);
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    const code = await new Promise((r) => child.on('close', r));
    clearInterval(timer);
    console.log(`# check of ${N + 3} messages: peak RSS ${(peak / 1048576).toFixed(1)} MiB (${bin === MCPREEL ? 'ASan' : 'plain'} build)`);
    const report = JSON.parse(Buffer.concat(out).toString());
    const rules = report.findings.map((f) => f.rule);
    assert.equal(rules.filter((r) => r === 'check.pending-limit').length, 1, 'one note');
    assert.equal(rules.filter((r) => r === 'jsonrpc.unanswered').length, 101, '100 listed, the rest in one');
    // The pings were sent all at once, so some went before initialize was
    // answered or initialized sent: lifecycle warnings, nothing else.
    assert.deepEqual([...new Set(rules)].sort().filter((r) => r !== 'lifecycle.before-initialized' && r !== 'lifecycle.initialized-early'),
      ['check.pending-limit', 'jsonrpc.unanswered']);
    assert.equal(report.sessions[0].messages, N + 3);
    assert.ok(peak > 0, 'the peak RSS was read');
    assert.ok(peak <= (bin === MCPREEL ? 384 : 64) * 1048576, `peak RSS ${peak}`);
    assert.ok(code === 0 || code === 1);
  } finally {
    t.cleanup();
  }
});

/*
 * Our server breaking one rule per mode (peers/checkpeer.mjs), driven by the
 * SDK client: list the tools (following a nextCursor once), call echo with
 * a progress callback (so the request carries a progressToken).  Each must
 * give exactly its rule.  Per mode: the rules, the exit code, and the spec
 * line it breaks (2025-11-25 unless named; JSON-RPC is the JSON-RPC 2.0
 * specification, which basic/ of every revision requires).
 */
const FAULTS = [
  ['ok', [], 0, 'nothing'],
  // JSON and JSON-RPC
  ['not-json', ['json.parse'], 1, 'basic: "messages MUST be UTF-8 encoded" JSON-RPC; transports stdio: "Messages are delimited by newlines"'],
  ['dup-member', ['json.duplicate-member'], 1, 'RFC 8259 4: "The names within an object SHOULD be unique"'],
  ['batch', ['jsonrpc.batch'], 1, 'changelog 2025-06-18: "Remove support for JSON-RPC batching"'],
  ['answer-twice', ['jsonrpc.answered-twice'], 1, 'basic "Responses": a response to each request (one, by its ID)'],
  ['unknown-id', ['jsonrpc.unknown-id'], 1, 'basic "Responses": "Result responses MUST include the same ID as the request they correspond to"'],
  // The SDK does not take these answers as responses, so it cancels the
  // request when it closes: a cancel after an answer it could not read is
  // its right, not a second finding.
  ['error-code', ['jsonrpc.error-code'], 1, 'basic "Error Responses": "Error codes MUST be integers"'],
  ['error-message', ['jsonrpc.error-message'], 1, 'JSON-RPC 5.1: "message: A String providing a short description"'],
  ['wrong-side', ['jsonrpc.wrong-side'], 1, 'server/tools "Protocol Messages": "To discover available tools, clients send a tools/list request" (a client\'s request, not a server\'s)'],
  ['result-error', ['jsonrpc.result-xor-error'], 1, 'JSON-RPC 5: "Either the result member or error member MUST be included, but both members MUST NOT be included"'],
  // Lifecycle
  ['version', ['lifecycle.version-unknown'], 1, 'lifecycle "Version Negotiation": the server "MUST respond with another protocol version it supports"'],
  ['version-differs', ['lifecycle.version-differs'], 0, 'lifecycle: "If the server supports the requested protocol version, it MUST respond with the same version"'],
  ['early-request', ['lifecycle.before-initialized'], 0, 'lifecycle: "The server SHOULD NOT send requests other than pings and logging before receiving the initialized notification"'],
  // Capabilities
  ['list-changed', ['caps.server'], 1, 'server/tools "List Changed Notification": "Servers that declared the listChanged capability SHOULD send"'],
  ['sampling', ['caps.client'], 1, 'client/sampling "Capabilities": "Clients that support sampling MUST declare the sampling capability"'],
  ['elicitation', ['caps.client'], 1, 'client/elicitation "Capabilities": "Clients that support elicitation MUST declare the elicitation capability during initialization"'],
  ['roots', ['caps.client'], 1, 'client/roots "Capabilities": "Clients that support roots MUST declare the roots capability during initialization"'],
  ['subscribe', ['caps.server'], 1, 'server/resources "Capabilities": "subscribe: whether the client can subscribe to be notified of changes to individual resources"'],
  ['updated', ['caps.server'], 1, 'server/resources "Subscriptions": "Clients can subscribe to specific resources and receive notifications when they change" (only with subscribe declared)'],
  ['logging', ['caps.server'], 1, 'server/utilities/logging "Capabilities": "Servers that emit log message notifications MUST declare the logging capability"'],
  // Shapes
  ['shape', ['shape.required'], 1, 'schema ListToolsResult: "tools: Tool[]" (required)'],
  ['shape-type', ['shape.type'], 1, 'schema ListToolsResult: "tools" is an array'],
  ['shape-enum', ['shape.enum'], 1, 'schema Annotations: "audience?: Role[]", Role = "user" | "assistant"'],
  // Semantics
  ['progress-down', ['progress.not-increasing'], 1, 'utilities/progress: "The progress value MUST increase with each notification"'],
  ['progress-late', ['progress.after-response'], 0, 'utilities/progress: "Progress notifications MUST stop after completion"'],
  ['progress-stray', ['progress.unknown-token'], 0, 'utilities/progress: "Progress notifications MUST only reference tokens that were provided in an active request"'],
  ['cancel-unknown', ['cancel.unknown'], 0, 'utilities/cancellation: "Cancellation notifications MUST only reference requests that were previously issued in the same direction"'],
  ['cursor-repeat', ['pagination.cursor-repeat'], 0, 'utilities/pagination: a cursor "represents a position in the result set"; one that comes back loops'],
  ['unlisted', ['tool.unknown'], 0, 'server/tools "Listing Tools": clients call the tools that tools/list names'],
  // These two rules are about the answer to a call that was itself a
  // fault (an unlisted tool, bad arguments: the client's finding, on the
  // request); the answer's finding is the server's, on the response.  Two
  // faults of two sides, so two findings.
  ['unknown-as-result', ['tool.unknown', 'tool.unknown-as-result'], 0, 'server/tools "Error Handling": "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools"'],
  // Tool schemas
  ['arguments', ['tool.arguments'], 0, 'server/tools "Tool": "inputSchema: JSON Schema defining expected parameters"'],
  ['args-rpc-error', ['tool.arguments', 'tool.invalid-arguments-answer'], 0, 'server/tools "Error Handling": "Tool Execution Errors ... Input validation errors"'],
  ['bad-schema', ['tool.schema-invalid'], 1, 'server/tools "Tool": inputSchema "MUST be a valid JSON Schema object"'],
  ['schema-note', ['tool.schema-note'], 0, 'none: what mcpreel cannot check (unevaluatedProperties) is a note'],
  ['bad-structured', ['tool.structured-content'], 1, 'server/tools "Output Schema": "Servers MUST provide structured results that conform to this schema"'],
  ['no-structured', ['tool.structured-content-missing'], 1, 'server/tools "Output Schema": "Servers MUST provide structured results that conform to this schema"'],
];

async function drive(db, mode) {
  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['record', '--db', db, '--name', mode, '--', process.execPath, join(PEERS_DIR, 'checkpeer.mjs'), mode],
    stderr: 'pipe',
  });
  // early-request: the client declares roots, so only the timing is wrong.
  const client = new Client({ name: 'check-e2e', version: '1.0.0' }, { capabilities: mode === 'early-request' ? { roots: {} } : {} });
  client.onerror = () => {};
  try {
    await client.connect(transport);
    const listed = await client.listTools().catch(() => ({}));
    // cursor-repeat: follow the cursor once (it comes back again).
    if (listed.nextCursor) await client.listTools({ cursor: listed.nextCursor }).catch(() => {});
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, { onprogress: () => {} }).catch(() => {});
    // The SDK client does not hold itself to the server's capabilities.
    if (mode === 'subscribe') await client.subscribeResource({ uri: 'file:///a.txt' }).catch(() => {});
    if (mode === 'logging') await client.setLoggingLevel('info').catch(() => {});
    // Give a late notification time to arrive before the end.
    await new Promise((r) => setTimeout(r, 300));
  } catch {
    // version: the SDK refuses the answer and gives up, as it should.
  } finally {
    await client.close().catch(() => {});
  }
}

test('a server breaking one rule gives exactly that finding, no other', { timeout: 900000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    for (const [mode, rules, exit, line] of FAULTS) {
      await drive(db, mode);
      const { code, report } = await checkJson(db, [mode]);
      const got = [...new Set(report.findings.map((f) => f.rule))].sort();
      assert.deepEqual(got, rules, `${mode} (breaks ${line}): ${JSON.stringify(report.findings, null, 1)}`);
      assert.equal(code, exit, `${mode}: exit ${exit}`);
    }
    // --all checks every session: the findings of all of them together.
    const all = await checkJson(db, ['--all']);
    assert.equal(all.code, 1);
    assert.equal(all.report.sessions.length, FAULTS.length);
  } finally {
    t.cleanup();
  }
});

/*
 * Our Streamable HTTP server breaking one HTTP rule per mode
 * (peers/checkhttp.mjs), recorded through record --listen and driven by
 * the SDK client (list the tools, call echo).  The spec lines are of
 * 2025-11-25 basic/transports.
 */
const HTTP_FAULTS = [
  ['ok', [], 0, 'nothing'],
  ['notify-200', ['http.status'], 1, '"If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body"'],
  // The SDK client waits for the answer, gives up and cancels the call:
  // a request taken with 202 owes no answer, so no jsonrpc.unanswered.
  ['request-202', ['http.status'], 1, '"If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object"'],
  ['content-type', ['http.content-type'], 1, '"If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream ... or Content-Type: application/json"'],
  ['get-json', ['http.get'], 1, '"The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed"'],
];

test('a Streamable HTTP server breaking one HTTP rule gives exactly that finding, no other', { timeout: 300000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    for (const [mode, rules, exit, line] of HTTP_FAULTS) {
      const peer = await startCheckHttp(mode);
      const proxy = await startMcpreelHttp({ db, upstream: peer.origin, name: `http-${mode}` });
      const client = new Client({ name: 'check-e2e', version: '1.0.0' }, { capabilities: {} });
      client.onerror = () => {};
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
        await client.listTools(undefined, { timeout: 10000 }).catch(() => {});
        await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, { timeout: 10000 }).catch(() => {});
        // The SDK opens its GET stream on its own after initialized.
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await client.close().catch(() => {});
        await proxy.stop();
        await peer.close();
      }
      const { code, report } = await checkJson(db, [`http-${mode}`]);
      const got = [...new Set(report.findings.map((f) => f.rule))].sort();
      assert.deepEqual(got, rules, `${mode} (breaks ${line}): ${JSON.stringify(report.findings, null, 1)}`);
      assert.equal(code, exit, `${mode}: exit ${exit}`);
    }
  } finally {
    t.cleanup();
  }
});

/*
 * A small fetch-based client (the SDK client always gets these headers
 * right) breaking one client HTTP rule per mode against checkhttp's ok
 * server through record --listen: initialize, notifications/initialized,
 * tools/list.  Spec lines of 2025-11-25 basic/transports.  (A request
 * without Mcp-Session-Id is recorded by record --listen as the start of
 * another session, so http.session-id has its own test below, on an
 * edited export.)
 */
const CLIENT_FAULTS = [
  ['ok', [], 0, 'nothing'],
  ['no-version', ['http.protocol-version'], 1, '"the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests"'],
  ['accept-json', ['http.accept'], 1, '"The client MUST include an Accept header, listing both application/json and text/event-stream"'],
  // The server expires the session after tools/list (404 to the next
  // request, tools/call); the client sends a ping with the old id.
  ['expired', ['http.expired-session'], 1, '"When a client receives HTTP 404 in response to a request containing an Mcp-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached"', 'expire'],
];

async function rawClient(url, mode) {
  const post = async (body, extra = {}) => {
    const headers = {
      'Content-Type': 'application/json',
      Accept: mode === 'accept-json' ? 'application/json' : 'application/json, text/event-stream',
      ...extra,
    };
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await r.text();
    return { sid: r.headers.get('mcp-session-id'), text };
  };
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {},
    clientInfo: { name: 'raw', version: '1' } } });
  const later = {};
  later['Mcp-Session-Id'] = init.sid;
  if (mode !== 'no-version') later['MCP-Protocol-Version'] = '2025-11-25';
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, later);
  await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, later);
  if (mode === 'expired') {
    await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, later);
    await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, later);
  }
}

test('a client breaking one HTTP rule gives exactly that finding, no other', { timeout: 300000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    for (const [mode, rules, exit, line, peerMode = 'ok'] of CLIENT_FAULTS) {
      const peer = await startCheckHttp(peerMode);
      const proxy = await startMcpreelHttp({ db, upstream: peer.origin, name: `client-${mode}` });
      try {
        await rawClient(`${proxy.url}/mcp`, mode);
      } finally {
        await proxy.stop();
        await peer.close();
      }
      const { code, report } = await checkJson(db, [`client-${mode}`]);
      const got = [...new Set(report.findings.map((f) => f.rule))].sort();
      assert.deepEqual(got, rules, `${mode} (breaks ${line}): ${JSON.stringify(report.findings, null, 1)}`);
      assert.equal(code, exit, `${mode}: exit ${exit}`);
    }
  } finally {
    t.cleanup();
  }
});

/*
 * http.session-id: record --listen files a request by its Mcp-Session-Id,
 * so one without it (or with another) is recorded as the start of another
 * session, never next to the initialize that gave the id.  A recorder
 * that keeps one connection's exchanges together would show it; so the
 * fetch client's ok session is exported, the tools/list exchange's header
 * dropped or changed, and the file imported.  2025-11-25
 * basic/transports: "the client MUST include it in the Mcp-Session-Id
 * header on all of its subsequent HTTP requests".
 */
test('a request after initialize without the server\'s Mcp-Session-Id (an edited export, imported) gives exactly http.session-id', { timeout: 120000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    const peer = await startCheckHttp('ok');
    const proxy = await startMcpreelHttp({ db, upstream: peer.origin, name: 'sid' });
    try {
      await rawClient(`${proxy.url}/mcp`, 'ok');
    } finally {
      await proxy.stop();
      await peer.close();
    }
    const exp = await run(['export', '--db', db, '--format', 'jsonl', 'sid']);
    assert.equal(exp.code, 0, exp.stderr);
    const lines = exp.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    // The exchange of tools/list: the last POST (initialize, initialized, tools/list).
    const last = lines.filter((l) => l.type === 'http_exchange').at(-1);
    assert.ok(last.request_headers.some(([k]) => k.toLowerCase() === 'mcp-session-id'), 'recorded with the header');
    for (const [mode, edit] of [
      ['none', (h) => h.filter(([k]) => k.toLowerCase() !== 'mcp-session-id')],
      ['other', (h) => h.map(([k, v]) => (k.toLowerCase() === 'mcp-session-id' ? [k, 'another-session'] : [k, v]))],
    ]) {
      const file = join(t.dir, `${mode}.jsonl`);
      writeFileSync(file, `${lines.map((l) => JSON.stringify(l === last ? { ...l, request_headers: edit(l.request_headers) } : l)).join('\n')}\n`);
      const imp = await run(['import', '--db', db, '--name', `sid-${mode}`, file]);
      assert.equal(imp.code, 0, imp.stderr);
      const { code, report } = await checkJson(db, [`sid-${mode}`]);
      assert.deepEqual(report.findings.map((f) => `${f.rule} ${f.method}`), ['http.session-id tools/list'], `${mode}: ${JSON.stringify(report.findings, null, 1)}`);
      assert.equal(code, 1);
    }
    const { report } = await checkJson(db, ['sid']);
    assert.deepEqual(report.findings, [], 'the session as recorded is clean');
  } finally {
    t.cleanup();
  }
});

/*
 * 2026-07-28 over HTTP: a small fetch-based client (the SDK client does
 * not speak 2026-07-28) against our 2026 server (peers/peer2026.mjs
 * --http) through record --listen: server/discover, tools/list, tools/call
 * echo and add, each with its _meta and headers, one header wrong per
 * mode.  peer2026 refuses such a request with 400, which is right; the
 * finding is the client's.  Spec lines of 2026-07-28
 * basic/transports/streamable-http.
 */
const MODERN_FAULTS = [
  ['ok', [], 0, 'nothing'],
  ['no-method', ['http.mcp-method'], 1, '"Mcp-Method: the JSON-RPC method", required on every request'],
  ['wrong-method', ['http.mcp-method'], 1, 'Mcp-Method equals the body\'s method'],
  ['no-name', ['http.mcp-name'], 1, '"Mcp-Name: params.name (tools/call, prompts/get) or params.uri (resources/read)", required on those three'],
  ['wrong-name', ['http.mcp-name'], 1, 'Mcp-Name equals params.name'],
  ['wrong-version', ['http.protocol-version'], 1, '"MCP-Protocol-Version" equals _meta\'s protocolVersion on every request'],
  ['no-param', ['http.mcp-param'], 1, '"Mcp-Param-{X}: value of the tool argument whose inputSchema property has x-mcp-header X", on tools/call when the argument is present'],
];

const V2026 = '2026-07-28';
async function modernClient(url, mode) {
  let id = 0;
  const post = async (method, params, extra = {}) => {
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': mode === 'wrong-version' && method === 'tools/list' ? '2025-11-25' : V2026,
      'Mcp-Method': mode === 'wrong-method' && method === 'tools/list' ? 'tools/call' : method,
      ...extra,
    };
    if (mode === 'no-method' && method === 'tools/list') delete headers['Mcp-Method'];
    const body = { jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: {
      'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': {} } } };
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    return r.text();
  };
  await post('server/discover', {});
  await post('tools/list', {});
  const echoName = mode === 'no-name' ? {} : { 'Mcp-Name': mode === 'wrong-name' ? 'add' : 'echo' };
  await post('tools/call', { name: 'echo', arguments: { text: 'hi' } }, echoName);
  await post('tools/call', { name: 'add', arguments: { a: 2, b: 3 } },
    mode === 'no-param' ? { 'Mcp-Name': 'add' } : { 'Mcp-Name': 'add', 'Mcp-Param-A': '2' });
}

test('2026-07-28 over HTTP: a client breaking one header rule gives exactly that finding, no other', { timeout: 300000 }, async (ctx) => {
  const support = mcpreelHttpSupport();
  if (!support.ok) { ctx.skip(support.reason); return; }
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    for (const [mode, rules, exit, line] of MODERN_FAULTS) {
      const peer = await spawnUntilLine(process.execPath, [join(PEERS_DIR, 'peer2026.mjs'), '--http'], {
        stream: 'stdout', pattern: /^peer2026: listening on (http:\/\/127\.0\.0\.1:\d+)$/, name: `peer2026 ${mode}`,
      });
      try {
        const proxy = await startMcpreelHttp({ db, upstream: peer.match[1], name: `modern-${mode}` });
        try {
          await modernClient(`${proxy.url}/mcp`, mode);
        } finally {
          await proxy.stop();
        }
      } finally {
        await stopChild(peer.child, peer.exited);
      }
      const { code, report } = await checkJson(db, [`modern-${mode}`]);
      const got = [...new Set(report.findings.map((f) => f.rule))].sort();
      assert.deepEqual(got, rules, `${mode} (breaks ${line}): ${JSON.stringify(report.findings, null, 1)}`);
      assert.equal(code, exit, `${mode}: exit ${exit}`);
    }
  } finally {
    t.cleanup();
  }
});

test('check: bad usage and an unreadable session exit 2 with a reason', { timeout: 60000 }, async () => {
  const t = tempDir();
  try {
    const db = join(t.dir, 'rec.db');
    let r = await run(['check', '--db', db, '--jsonn']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--json/, 'the nearest option is named');
    r = await run(['check', '--db', db, '--json', '--sarif']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /one of --json, --sarif and --junit/);
    r = await run(['check', '--db', db, 'a', 'b']);
    assert.equal(r.code, 2);
    r = await run(['check', '--db', join(t.dir, 'none', 'x.db'), 'last']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^mcpreel check: /);
    r = await run(['check', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /usage: mcpreel check/);
  } finally {
    t.cleanup();
  }
});

/*
 * Findings quote what peers sent: a method of 200 "é" (cut in the
 * location's 256 bytes), one holding ESC and U+FFFE, an Mcp-Name that
 * decodes to bytes that are not UTF-8.  Every output stays valid: JSON
 * and SARIF parse and keep each message and location, JUnit is strict
 * XML 1.0 characters in UTF-8, text has no raw control byte.
 */
test('check: hostile methods and header values give valid JSON, SARIF, JUnit and text', async () => {
  const t = tempDir();
  try {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    let seq = 0;
    const msg = (message, exchange) => JSON.stringify({
      type: 'message', seq: ++seq, direction: 'c2s', ts_ns: seq * 10, mono_ns: seq * 10,
      ...(exchange ? { exchange } : {}), message,
    });
    const lines = [
      JSON.stringify({ format: 'mcpreel-jsonl', version: 1, session: 1, name: null, transport: 'http',
        target: 'x', started_ns: 1, ended_ns: 100, exit_status: 0, exit_signal: null, end_reason: 'done',
        messages_lost: 0, store_error: null, imported_from: null, recorder_pid: 1, mcpreel_version: '0.1.0' }),
      JSON.stringify({ type: 'http_exchange', exchange: 1, connection: 1, method: 'POST', path: '/mcp',
        started_ns: 5, mono_ns: 5, status: 200, response_mono_ns: 6,
        request_headers: [['Accept', 'application/json, text/event-stream'],
          ['MCP-Protocol-Version', '2026-07-28'], ['Mcp-Method', 'tools/call'],
          ['Mcp-Name', '=?base64?//79G1s=?=']],
        response_headers: [['Content-Type', 'application/json']] }),
      msg({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta: meta } }, 1),
      msg({ jsonrpc: '2.0', id: 2, method: 'é'.repeat(200), params: { _meta: meta } }),
      msg({ jsonrpc: '2.0', id: 3, method: 'a\u001b[31mb\ufffe\uffff', params: { _meta: meta } }),
    ];
    const jsonl = join(t.dir, 'h.jsonl');
    writeFileSync(jsonl, lines.join('\n') + '\n');
    const db = join(t.dir, 'h.db');
    const imp = await run(['import', '--db', db, jsonl]);
    assert.equal(imp.code, 0, imp.stderr);
    const out = async (fmt) => {
      const r = await runMcpreel(['check', '--db', db, ...fmt, 'last']);
      assert.notEqual(r.code, 2, r.stderr.toString());
      // Throws on any byte sequence that is not UTF-8.
      return new TextDecoder('utf-8', { fatal: true }).decode(r.stdout);
    };
    const bad = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/u;
    const json = JSON.parse(await out(['--json']));
    const texts = JSON.stringify(json);
    assert.ok(texts.includes('mcp-name'), 'the Mcp-Name finding is there');
    assert.ok(texts.includes('\\u001B') && texts.includes('\\uFFFE'), 'ESC and U+FFFE are escaped');
    const sarifText = await out(['--sarif']);
    const sarif = JSON.parse(sarifText);
    const results = sarif.runs[0].results;
    assert.ok(results.length >= 3, `${results.length} results`);
    for (const r of results) {
      assert.equal(typeof r.message.text, 'string');
      assert.ok(!bad.test(r.message.text), r.message.text);
      assert.equal(typeof r.locations[0].logicalLocations[0].name, 'string', JSON.stringify(r));
      assert.ok(!bad.test(r.locations[0].logicalLocations[0].name));
    }
    const junit = await out(['--junit']);
    assert.ok(!bad.test(junit), 'JUnit holds only XML 1.0 characters');
    assert.match(junit, /^<\?xml[^]*<\/testsuites>\s*$/);
    const text = await out([]);
    assert.ok(!text.includes('\u001b'), 'no raw ESC on a terminal');
    assert.ok(!bad.test(text));
  } finally {
    t.cleanup();
  }
});

/*
 * The cap on listed findings is per session: with --all, a session of
 * 20 005 messages that are not JSON lists its first 20 000 and counts
 * the rest, and the session after it still lists its own finding.
 */
test('check --all: a flooded session does not hide the next session\'s findings', async () => {
  const t = tempDir();
  try {
    const head = (session) => JSON.stringify({ format: 'mcpreel-jsonl', version: 1, session, name: null,
      transport: 'stdio', target: 'x', started_ns: 1, ended_ns: 100, exit_status: 0, exit_signal: null,
      end_reason: 'done', messages_lost: 0, store_error: null, imported_from: null, recorder_pid: 1,
      mcpreel_version: '0.1.0' });
    const raw = (seq, r) => JSON.stringify({ type: 'message', seq, direction: 'c2s', ts_ns: seq, mono_ns: seq, raw: r });
    const flood = [head(1)];
    for (let i = 1; i <= 20005; i++) flood.push(raw(i, 'x'));
    const a = join(t.dir, 'a.jsonl');
    const b = join(t.dir, 'b.jsonl');
    writeFileSync(a, flood.join('\n') + '\n');
    writeFileSync(b, [head(1), raw(1, 'y')].join('\n') + '\n');
    const db = join(t.dir, 'f.db');
    for (const f of [a, b]) {
      const imp = await run(['import', '--db', db, f]);
      assert.equal(imp.code, 0, imp.stderr);
    }
    const { code, report } = await checkJson(db, ['--all']);
    assert.equal(code, 1);
    assert.equal(report.sessions.length, 2);
    assert.equal(report.sessions[0].findings, 20000);
    assert.equal(report.sessions[0].unlisted, 5);
    assert.equal(report.sessions[1].findings, 1, 'the second session still lists its finding');
    assert.equal(report.sessions[1].unlisted, 0);
    assert.equal(report.counts.error, 20006);
    const text = await run(['check', '--db', db, '--all']);
    assert.match(text.stdout, /\(5 more findings of this session were counted, not listed\)/);
  } finally {
    t.cleanup();
  }
});
