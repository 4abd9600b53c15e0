// Real sessions checked by the protocol module: the TypeScript SDK client
// against server-everything over stdio, Streamable HTTP and legacy
// HTTP+SSE, and our 2026-07-28 client against peers/peer2026.mjs, each
// recorded through mcpreel, exported, and every message checked with
// bench/proto_check (proto_check_message under the negotiated revision,
// each response against the method it answers).  Real peers must check
// clean; a finding is either a deviation of the peer, named here with its
// spec line, or a mistake in protocol/mcp.def.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { sessionsOf } from './lib/dbcheck.mjs';
import { run2026 } from './lib/client2026.mjs';
import { MCPREEL, PEERS_DIR, withCleanup } from './lib/util.mjs';

const PROTO_CHECK = join(dirname(MCPREEL), 'bench', 'proto_check');
const needsTool = existsSync(PROTO_CHECK) ? false : `${PROTO_CHECK} is not built (MCPREEL_BENCH=OFF)`;
const support = mcpreelHttpSupport();

/** Export every session of db and check it; returns the findings, one line each. */
function checkAll(db, dir) {
  const findings = [];
  let messages = 0;
  for (const s of sessionsOf(db)) {
    const file = join(dir, `s${s.id}.jsonl`);
    execFileSync(MCPREEL, ['export', '--db', db, '--format', 'jsonl', '-o', file, String(s.id)]);
    const r = spawnSync(PROTO_CHECK, [file], { encoding: 'utf8' });
    assert.ok(r.status === 0 || r.status === 1, `proto_check ran on session ${s.id}: ${r.stderr}`);
    const lines = r.stdout.trim().split('\n');
    console.log(`# session ${s.id} (${s.transport}): ${lines[0]}; ${lines[lines.length - 1]}`);
    messages += Number(lines[0].split(' ')[0]);
    findings.push(...lines.filter((l) => l.startsWith('seq ')));
  }
  for (const f of findings) console.log(`# ${f}`);
  return { findings, messages };
}

test('SDK client and server-everything over stdio check clean', { skip: needsTool, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'rec.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'sdk', '--', command, ...args], { stderr: 'pipe' });
    const { findings, messages } = checkAll(db, dir);
    assert.ok(messages > 50, `the session was recorded (${messages} messages)`);
    assert.deepEqual(findings, []);
  });
});

for (const mode of ['streamableHttp', 'sse']) {
  test(`SDK client and server-everything over ${mode} check clean`, { skip: needsTool || (support.ok ? false : support.reason), timeout: 120000 }, async () => {
    await withCleanup(async ({ dir, defer }) => {
      const se = await startServerEverything(mode);
      defer(se.stop);
      const db = join(dir, 'rec.db');
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: `sdk-${mode}` });
      defer(() => proxy.stop());
      const url = `${proxy.url}${new URL(se.url).pathname}`;
      await runSessionWith(mode === 'sse' ? sseTransport(url) : streamableHttpTransport(url), {});
      await proxy.stop();
      const { findings, messages } = checkAll(db, dir);
      assert.ok(messages > 50, `the session was recorded (${messages} messages)`);
      assert.deepEqual(findings, []);
    });
  });
}

test('2026-07-28 client and peer2026 over stdio check clean', { skip: needsTool, timeout: 120000 }, async () => {
  await withCleanup(async ({ dir }) => {
    const db = join(dir, 'rec.db');
    await run2026(MCPREEL, ['record', '--db', db, '--name', 's2026', '--', process.execPath, join(PEERS_DIR, 'peer2026.mjs')]);
    const { findings, messages } = checkAll(db, dir);
    assert.ok(messages > 10, `the session was recorded (${messages} messages)`);
    assert.deepEqual(findings, []);
  });
});
