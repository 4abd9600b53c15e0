// The protocol module against an independent judge: the official
// TypeScript SDK's own message schemas (its types.js, zod).  A real
// session of the SDK client and server-everything (stdio and Streamable
// HTTP and HTTP+SSE, revision 2025-11-25, the SDK's) is recorded through mcpreel, and
// every message and many mutations of each (a member removed, a value of
// another type, null, a string changed) are judged by both: the SDK by the
// schema of the message's method (a result by the method it answers), we
// by bench/proto_check (any finding but an unknown method counts as
// "invalid").  They must agree, but for the disagreements the
// specification settles in our favour, each listed below with its line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, sseTransport, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { sessionsOf } from './lib/dbcheck.mjs';
import { mutations, sdkAccepts } from './lib/sdkdiff.mjs';
import { MCPREEL, withCleanup } from './lib/util.mjs';

const PROTO_CHECK = join(dirname(MCPREEL), 'bench', 'proto_check');
const needsTool = existsSync(PROTO_CHECK) ? false : `${PROTO_CHECK} is not built (MCPREEL_BENCH=OFF)`;
/* Messages bigger than this are left out: the 2 MiB echo adds nothing. */
const MAX_SIZE = 100000;

/*
 * Where the SDK accepts what the specification (schema/2025-11-25/schema.ts)
 * does not: each a test of a finding of ours.
 */
const SETTLED = [
  {
    why: 'schema.ts CallToolResult: "content: ContentBlock[]" is required; the SDK defaults it to []',
    match: (d) => d.sdk && /^shape\.required \$\.result: "content" is required in CallToolResult/.test(d.ours),
  },
  {
    why: 'schema.ts gives uri members "@format uri" (Resource, ResourceContents, ReadResourceRequestParams, ResourceRequestParams); the SDK takes any string',
    match: (d) => d.sdk && /^shape\.format \S*uri: .* is not an absolute URI/.test(d.ours),
  },
  {
    why: 'members typed object (capabilities, tool schema properties) are "type": "object" in schema.json, which an array is not; the SDK takes arrays there',
    match: (d) => d.sdk && d.kind === 'array' && /^shape\.type \S+: expected an object, got an array/.test(d.ours),
  },
  {
    why: 'schema.ts ElicitResult: "content?: { [key: string]: ... }" is optional, not nullable; the SDK takes null',
    match: (d) => d.sdk && d.kind === 'null' && /^shape\.type \$\.result\.content: expected an object, got null/.test(d.ours),
  },
  {
    why: 'schema.ts Tool.inputSchema / outputSchema: "$schema?: string"; the SDK takes any value there',
    match: (d) => d.sdk && /^shape\.type \S*\.\$schema: expected a string/.test(d.ours),
  },
];

/** Judge every message of the exported files and their mutations, both ways. */
function differential(files, dir) {
  const corpus = [];
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
      const l = JSON.parse(line);
      if (l.type !== 'message' || typeof l.message !== 'object' || l.message === null || l.size > MAX_SIZE) continue;
      corpus.push({ msg: l.message, method: l.method, kind: 'original', at: '' });
      for (const m of mutations(l.message)) corpus.push({ ...m, method: l.method });
    }
  }
  const rows = [JSON.stringify({ format: 'mcpreel-jsonl' }),
    JSON.stringify({ type: 'message', seq: 0, direction: 's2c', method: 'initialize',
      message: { jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } } } })];
  corpus.forEach((c, i) => rows.push(JSON.stringify({ type: 'message', seq: i + 1, direction: 'c2s',
    method: 'method' in c.msg ? c.msg.method : c.method, message: c.msg })));
  const all = join(dir, 'corpus.jsonl');
  writeFileSync(all, rows.join('\n') + '\n');
  const r = spawnSync(PROTO_CHECK, [all], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.ok(r.status === 0 || r.status === 1, `proto_check ran: ${r.stderr}`);
  const ours = new Map();
  for (const line of r.stdout.split('\n')) {
    const m = /^seq (\d+) \S+ \S+: (?:error|warning) (\S+) at (\S+): (.*)$/.exec(line);
    if (m && m[2] !== 'shape.unknown-method' && !ours.has(Number(m[1]) - 1)) ours.set(Number(m[1]) - 1, `${m[2]} ${m[3]}: ${m[4]}`);
  }
  let judged = 0;
  let agree = 0;
  const settled = new Map();
  const open = [];
  corpus.forEach((c, i) => {
    const sdk = sdkAccepts(c.msg, c.method);
    if (sdk === undefined) return;
    judged++;
    if (sdk === !ours.has(i)) { agree++; return; }
    const d = { sdk, ours: ours.get(i) ?? '', method: c.method, kind: c.kind, at: c.at, msg: c.msg };
    const s = SETTLED.find((x) => x.match(d));
    if (s) settled.set(s.why, (settled.get(s.why) ?? 0) + 1);
    else open.push(d);
  });
  console.log(`# ${corpus.length} messages (${files.length} sessions and mutations), ${judged} judged by the SDK, ${agree} agree`);
  for (const [why, n] of settled) console.log(`# settled by the specification, ${n}x: ${why}`);
  for (const d of open.slice(0, 20)) {
    console.log(`# DISAGREE (${d.sdk ? 'SDK accepts, we flag' : 'SDK rejects, we accept'}): ${d.method} ${d.kind} ${d.at}: ${d.ours || JSON.stringify(d.msg).slice(0, 300)}`);
  }
  return { judged, agree, open };
}

test('the protocol module agrees with the SDK\'s schemas on real and mutated messages', { skip: needsTool, timeout: 240000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const db = join(dir, 'rec.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'stdio', '--', command, ...args], { stderr: 'pipe' });
    for (const mode of mcpreelHttpSupport().ok ? ['streamableHttp', 'sse'] : []) {
      const se = await startServerEverything(mode);
      defer(se.stop);
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: mode });
      defer(() => proxy.stop());
      const url = `${proxy.url}${new URL(se.url).pathname}`;
      await runSessionWith(mode === 'sse' ? sseTransport(url) : streamableHttpTransport(url), {});
      await proxy.stop();
    }
    const files = sessionsOf(db).map((s) => {
      const file = join(dir, `s${s.id}.jsonl`);
      execFileSync(MCPREEL, ['export', '--db', db, '--format', 'jsonl', '-o', file, String(s.id)]);
      return file;
    });
    const { judged, open } = differential(files, dir);
    assert.ok(judged >= (files.length > 1 ? 5000 : 1000), `enough messages judged (${judged})`);
    assert.equal(open.length, 0, `${open.length} disagreements the specification does not settle (listed above)`);
  });
});
