// The official MCP conformance suite (server scenarios) against
// server-everything's Streamable HTTP endpoint, directly and through
// `mcpreel record --listen`: a transparent recorder changes no scenario's
// outcome, nor any check's.
//
// The same suite against `mcpreel record --listen -- server-everything
// stdio` (the bridge: HTTP clients, a stdio server) gives EXPECTED_DIRECT
// but for the scenarios in BRIDGE_DIFFERENCES, each with its reason.
//
// Needs the suite and its Node 22 (`npm ci --prefix tests/e2e/conformance`,
// see lib/conformance.mjs); skipped without them.  The test through
// mcpreel is also skipped while `mcpreel record --help` does not mention
// --listen, the bridge's while it does not mention --connect.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { conformanceAvailable, runConformanceDetailed } from './lib/conformance.mjs';
import { mcpreelHttpSupport, request, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { messagesOf, sessionsOf } from './lib/dbcheck.mjs';
import { bridgeSupport, startMcpreelListen } from './lib/bridge.mjs';
import { serverEverythingCommand } from './lib/session.mjs';
import { withCleanup } from './lib/util.mjs';

const conf = conformanceAvailable();
const needsConformance = conf.ok ? false : conf.reason;
const support = mcpreelHttpSupport();
const needsHttp = support.ok ? false : support.reason;
const bridge = bridgeSupport();
const needsBridge = bridge.ok ? false : bridge.reason;

// What conformance 0.1.16 ("active" suite) says of server-everything
// 2026.8.31, directly.  Most failures are scenarios that call the suite's
// own test tools, prompts and resources (test_simple_text, test://...),
// which server-everything does not have; dns-rebinding-protection fails
// because server-everything accepts any Host/Origin.
const EXPECTED_DIRECT = {
  'completion-complete': 'failed',
  'dns-rebinding-protection': 'failed',
  'elicitation-sep1034-defaults': 'failed',
  'elicitation-sep1330-enums': 'failed',
  'logging-set-level': 'passed',
  ping: 'passed',
  'prompts-get-embedded-resource': 'failed',
  'prompts-get-simple': 'failed',
  'prompts-get-with-args': 'failed',
  'prompts-get-with-image': 'failed',
  'prompts-list': 'passed',
  'resources-list': 'passed',
  'resources-read-binary': 'failed',
  'resources-read-text': 'failed',
  'resources-subscribe': 'passed',
  'resources-templates-read': 'failed',
  'resources-unsubscribe': 'passed',
  'server-initialize': 'passed',
  'server-sse-multiple-streams': 'passed',
  'tools-call-audio': 'failed',
  'tools-call-elicitation': 'failed',
  'tools-call-embedded-resource': 'failed',
  'tools-call-error': 'passed',
  'tools-call-image': 'failed',
  'tools-call-mixed-content': 'failed',
  'tools-call-sampling': 'failed',
  'tools-call-simple-text': 'passed',
  'tools-call-with-logging': 'failed',
  'tools-call-with-progress': 'failed',
  'tools-list': 'passed',
};


test('conformance suite against server-everything directly: the known per-scenario results', { skip: needsConformance, timeout: 180000 }, async (t) => {
  await withCleanup(async ({ defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const r = await runConformanceDetailed(se.url);
    t.diagnostic(`conformance: ${Object.keys(r.scenarios).length} scenarios in ${r.ms} ms (Node ${conf.nodeVersion}), exit ${r.exitCode}`);
    assert.deepEqual(r.scenarios, EXPECTED_DIRECT);
    assert.equal(r.exitCode, 1, 'exit 1: some checks failed');
    for (const [name, s] of Object.entries(r.summary)) {
      assert.equal(s.failed > 0, r.scenarios[name] === 'failed', `${name}: the printed summary and checks.json agree`);
    }
  });
});

test('conformance suite: identical results directly and through mcpreel', { skip: needsConformance || needsHttp, timeout: 240000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const direct = await runConformanceDetailed(se.url);

    const db = join(dir, 'rec.db');
    const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: 'conformance' });
    defer(() => proxy.stop());
    const proxied = await runConformanceDetailed(`${proxy.url}/mcp`);
    t.diagnostic(`direct ${direct.ms} ms, through mcpreel ${proxied.ms} ms`);

    assert.deepEqual(proxied.scenarios, direct.scenarios, 'per scenario');
    assert.deepEqual(proxied.checks, direct.checks, 'per check');
    assert.equal(proxied.exitCode, direct.exitCode);

    const stopped = await proxy.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    const sessions = sessionsOf(db, 'http');
    assert.ok(sessions.length >= Object.keys(direct.scenarios).length / 2,
      `the suite's sessions are recorded (${sessions.length} http sessions)`);
  });
});

// Through `record --listen 127.0.0.1:0 -- server-everything stdio`, the
// scenarios whose result is not EXPECTED_DIRECT's: {result, reason}.
// Neither is a difference of server-everything's two modes: both come
// from the HTTP side mcpreel serves, and the last test shows each directly.
const BRIDGE_DIFFERENCES = {
  'dns-rebinding-protection': {
    result: 'passed',
    reason: "mcpreel's endpoint answers 403 to an Origin naming another machine when it listens on loopback "
      + "(the check the spec asks of servers); server-everything's own HTTP mode accepts any Host and Origin",
  },
  'server-sse-multiple-streams': {
    result: 'warning',
    reason: 'the bridge issues no Mcp-Session-Id (one stdio process is one MCP session), and the scenario warns '
      + '"Server did not provide session ID" and stops before opening its streams; '
      + "server-everything's own HTTP mode gives one session id per initialize",
  },
};

test('conformance suite against record --listen -- server-everything stdio: EXPECTED_DIRECT but for the differences listed', { skip: needsConformance || needsBridge, timeout: 240000 }, async (t) => {
  await withCleanup(async ({ dir, defer }) => {
    const { command, args } = serverEverythingCommand();
    const db = join(dir, 'bridge.db');
    const b = await startMcpreelListen({ db, name: 'conformance-bridge', cmd: [command, ...args] });
    defer(() => b.stop());
    const r = await runConformanceDetailed(`${b.url}/mcp`);
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const direct = await runConformanceDetailed(se.url);
    const names = [...new Set([...Object.keys(EXPECTED_DIRECT), ...Object.keys(r.scenarios)])].sort();
    t.diagnostic(`conformance through the bridge: ${Object.keys(r.scenarios).length} scenarios in ${r.ms} ms, exit ${r.exitCode}`);
    for (const name of names) {
      const why = BRIDGE_DIFFERENCES[name];
      const failedChecks = Object.entries(r.checks[name] ?? {}).filter(([, st]) => st === 'FAILURE' || st === 'WARNING')
        .map(([id, st]) => `${id}=${st}${r.errors[name]?.[id] ? ` (${r.errors[name][id].slice(0, 160)})` : ''}`);
      t.diagnostic(`${name}: direct ${EXPECTED_DIRECT[name]}, bridge ${r.scenarios[name]}${why ? ` [listed: ${why.reason}]` : ''}${
        r.scenarios[name] !== 'passed' ? `; ${failedChecks.join('; ')}` : ''}`);
    }
    const expected = { ...EXPECTED_DIRECT };
    for (const [name, d] of Object.entries(BRIDGE_DIFFERENCES)) {
      assert.notEqual(d.result, EXPECTED_DIRECT[name], `${name}: a listed difference differs`);
      expected[name] = d.result;
    }
    assert.deepEqual(r.scenarios, expected, 'per scenario: EXPECTED_DIRECT but for BRIDGE_DIFFERENCES');
    // And check by check, against a direct run now, but for those listed.
    const unlisted = (checks) => Object.fromEntries(Object.entries(checks).filter(([name]) => !(name in BRIDGE_DIFFERENCES)));
    assert.deepEqual(unlisted(r.checks), unlisted(direct.checks), 'per check, in the scenarios not listed');

    const stopped = await b.stop();
    assert.equal(stopped.killed, false, `the bridge stops on SIGTERM by itself; stderr:\n${stopped.stderr.slice(-3000)}`);
    // One stdio server for all the suite's sessions: one recorded session
    // holding every scenario's initialize.
    const sessions = sessionsOf(db);
    assert.equal(sessions.length, 1, 'one session: one server process');
    assert.equal(sessions[0].transport, 'stdio');
    const inits = messagesOf(db, sessions[0].id).filter((m) => m.direction === 'c2s' && m.method === 'initialize' && m.kind === 'request');
    assert.ok(inits.length >= Object.keys(r.scenarios).length - 2, `the suite's initialize requests are recorded (${inits.length})`);
  });
});

test('the two differences through the bridge, shown directly: the Origin check and no session id', { skip: needsBridge, timeout: 60000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const { command, args } = serverEverythingCommand();
    const b = await startMcpreelListen({ db: join(dir, 'shown.db'), name: 'shown', cmd: [command, ...args] });
    defer(() => b.stop());
    const se = await startServerEverything('streamableHttp');
    defer(se.stop);
    const init = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'shown', version: '1' } } });
    const post = (url, headers, id) => request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: init(id),
    });
    const evil = { host: 'evil.example.com', origin: 'http://evil.example.com' };

    // dns-rebinding-protection: the same request, 403 from the bridge, 200 from server-everything.
    const viaBridge = await post(`${b.url}/mcp`, evil, 1);
    const viaSe = await post(se.url, evil, 1);
    assert.equal(viaBridge.status, 403, 'the bridge refuses an Origin naming another machine');
    assert.equal(viaSe.status, 200, "server-everything's HTTP mode accepts it");

    // server-sse-multiple-streams: server-everything names a session, the bridge does not.
    const okBridge = await post(`${b.url}/mcp`, {}, 2);
    const okSe = await post(se.url, {}, 2);
    assert.equal(okBridge.status, 200);
    assert.equal(okSe.status, 200);
    assert.equal(okBridge.headers['mcp-session-id'], undefined, 'the bridge issues no Mcp-Session-Id');
    assert.match(okSe.headers['mcp-session-id'] ?? '', /^[0-9a-f-]{36}$/, 'server-everything issues one');
  });
});
