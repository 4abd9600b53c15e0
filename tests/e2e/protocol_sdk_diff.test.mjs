// The protocol module against an independent judge: the official
// TypeScript SDK's own message schemas (its types.js, zod).  Real sessions
// of the SDK client and server-everything (the scripted session of
// demo-client.mjs, over stdio and Streamable HTTP, revision 2025-11-25,
// the SDK's) and of the conformance suite's client are recorded through
// mcpreel and exported; every distinct message and seeded mutations of
// each (a member removed, a value of each other JSON type, a string or an
// enum value changed, an integer made 1.5 or negative, an unknown member
// added; the envelope's id and jsonrpc changed) are judged by both: the
// SDK by its envelope schema and the schema of the message's method (a
// result by the method it answers), we by tests/unit/proto_verdict
// (proto_check_message; any finding counts as "invalid").  They must
// agree, but for the disagreements the specification settles in our
// favour, each listed below with its line.  The results that read the
// same in 2025-06-18, 2025-03-26 and 2024-11-05 (SAME_AS_LATEST) are
// judged under those revisions too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { runSession, runSessionWith, serverEverythingCommand, streamableHttpTransport } from './lib/session.mjs';
import { mcpreelHttpSupport, startMcpreelHttp, startServerEverything } from './lib/servers.mjs';
import { sessionsOf } from './lib/dbcheck.mjs';
import { conformanceAvailable, runConformanceDetailed } from './lib/conformance.mjs';
import { SAME_AS_LATEST, envelopeMutations, mutations, sdkAccepts } from './lib/sdkdiff.mjs';
import { MCPREEL, withCleanup } from './lib/util.mjs';

const PROTO_VERDICT = join(dirname(MCPREEL), 'tests', 'unit', 'proto_verdict');
const needsTool = existsSync(PROTO_VERDICT) ? false : `${PROTO_VERDICT} is not built (MCPREEL_TESTS=OFF)`;
/* Messages bigger than this are left out: the 2 MiB echo adds nothing. */
const MAX_SIZE = 100000;
/* The revision the SDK's schemas follow. */
const LATEST = '2025-11-25';
/* The corpus the brief of this test asks for at the least. */
const MIN_CORPUS = 5000;

/*
 * Where the SDK accepts what the specification (schema/2025-11-25/schema.ts)
 * does not: each a test of our verdict, "RULES\tPATH: TEXT" (a single rule,
 * so a message with a second fault is never settled by the first).
 */
const SETTLED = [
  {
    why: 'schema.ts CallToolResult: "content: ContentBlock[]" is required; the SDK defaults it to []',
    match: (d) => d.sdk && /^shape\.required\t\$\.result: "content" is required in CallToolResult/.test(d.ours),
  },
  {
    why: 'schema.ts gives uri members "@format uri" (Resource, ResourceContents, ReadResourceRequestParams, ResourceRequestParams); the SDK takes any string',
    match: (d) => d.sdk && /^shape\.format\t\S*uri: .* is not an absolute URI/.test(d.ours),
  },
  {
    why: 'members typed object (capabilities, tool schema properties) are "type": "object" in schema.json, which an array is not; the SDK takes arrays there',
    match: (d) => d.sdk && d.kind === 'to-array' && /^shape\.type\t\S+: expected an object, got an array/.test(d.ours),
  },
  {
    why: 'schema.ts ElicitResult: "content?: { [key: string]: ... }" is optional, not nullable; the SDK takes null',
    match: (d) => d.sdk && d.kind === 'to-null' && /^shape\.type\t\$\.result\.content: expected an object, got null/.test(d.ours),
  },
  {
    why: 'schema.ts Tool.inputSchema / outputSchema: "$schema?: string"; the SDK takes any value there',
    match: (d) => d.sdk && /^shape\.type\t\S*\.\$schema: expected a string/.test(d.ours),
  },
  {
    why: 'schema.json (2025-11-25) gives the multi-select enum schemas\' minItems / maxItems "type": "integer" (schema.ts "minItems?: number", not marked @TJS-type number); the SDK takes any number',
    /* A titled multi-select whose minItems is wrong is also said not to
       be an untitled one (shape.required of its items): the same fault. */
    match: (d) => d.sdk && d.kind === 'fraction' && /^shape\.integer(,shape\.required)?\t\S*\.(minItems|maxItems): expected an integer/.test(d.ours),
  },
  {
    why: 'schema.ts JSONRPCRequest, JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse are open interfaces (schema.json sets no "additionalProperties": false); the SDK\'s JSON-RPC schemas are strict and refuse an unknown member beside "jsonrpc" and "id"',
    match: (d) => !d.sdk && d.kind === 'envelope' && d.at.startsWith('zz-unknown-member=') && d.ours === '',
  },
];

/** The corpus: every message of the exported files and its mutations, with the method a response answers. */
function corpusOf(files) {
  const corpus = [];
  const seen = new Set();
  let seed = 1;
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
      const l = JSON.parse(line);
      if (l.type !== 'message' || typeof l.message !== 'object' || l.message === null || l.size > MAX_SIZE) continue;
      const method = 'method' in l.message ? null : l.method ?? null;
      /* The same message in another session (the id aside) adds nothing. */
      const { id, ...rest } = l.message;
      const key = JSON.stringify([method, rest]);
      if (seen.has(key)) continue;
      seen.add(key);
      corpus.push({ msg: l.message, method, kind: 'original', at: '' });
      for (const m of mutations(l.message, seed++)) corpus.push({ ...m, method });
      /* The envelope does not depend on the body: once per method and kind. */
      const envelope = `${method ?? l.message.method} ${'method' in l.message ? 'call' : 'error' in l.message ? 'error' : 'result'}`;
      if (!seen.has(envelope)) {
        seen.add(envelope);
        for (const m of envelopeMutations(l.message)) corpus.push({ ...m, method });
      }
    }
  }
  return corpus;
}

/** Our verdict on each of items ({version, msg, method}): '' when valid, else "RULES\tPATH: TEXT". */
function ourVerdicts(items) {
  const input = items.map((c) => JSON.stringify({ version: c.version, message: c.msg, request_method: c.method })).join('\n') + '\n';
  const r = spawnSync(PROTO_VERDICT, [], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `proto_verdict ran: ${r.stderr}`);
  const lines = r.stdout.split('\n').slice(0, -1);
  assert.equal(lines.length, items.length, 'one verdict a message');
  return lines.map((l) => (l === 'valid' ? '' : l.replace(/^(invalid|warning) /, '')));
}

/** Judge the corpus both ways under 2025-11-25 and where they read the same under older revisions; print the counts. */
function differential(corpus) {
  const items = corpus.map((c) => ({ ...c, version: LATEST }));
  for (const [version, methods] of Object.entries(SAME_AS_LATEST)) {
    for (const c of corpus) if (c.method && methods.includes(c.method) && 'result' in c.msg) items.push({ ...c, version });
  }
  const ours = ourVerdicts(items);
  const byVersion = {};
  const settled = new Map();
  const open = [];
  items.forEach((c, i) => {
    const sdk = sdkAccepts(c.msg, c.method);
    if (sdk === undefined) return;
    const n = (byVersion[c.version] ??= { judged: 0, agree: 0 });
    n.judged++;
    if (sdk === (ours[i] === '')) { n.agree++; return; }
    const d = { sdk, ours: ours[i], method: c.method ?? c.msg.method, kind: c.kind, at: c.at, msg: c.msg, version: c.version };
    const s = SETTLED.find((x) => x.match(d));
    if (s) (settled.get(s.why) ?? settled.set(s.why, {}).get(s.why))[c.version] = (settled.get(s.why)[c.version] ?? 0) + 1;
    else open.push(d);
  });
  const kinds = {};
  for (const c of corpus) kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
  console.log(`# corpus: ${corpus.length} messages (${Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(', ')})`);
  for (const [v, n] of Object.entries(byVersion)) console.log(`# ${v}: ${n.judged} judged by both, ${n.agree} agree`);
  for (const [why, n] of settled) console.log(`# settled by the specification (${Object.entries(n).map(([v, k]) => `${k} under ${v}`).join(', ')}): ${why}`);
  for (const d of open.slice(0, 20)) {
    console.log(`# DISAGREE ${d.version} (${d.sdk ? 'SDK accepts, we flag' : 'SDK rejects, we accept'}): ${d.method} ${d.kind} ${d.at}: ${d.ours || JSON.stringify(d.msg).slice(0, 300)}`);
  }
  return { judged: byVersion[LATEST]?.judged ?? 0, open };
}

test('the protocol module agrees with the SDK\'s schemas on real and mutated messages', { skip: needsTool, timeout: 240000 }, async () => {
  await withCleanup(async ({ dir, defer }) => {
    const conformance = conformanceAvailable();
    const db = join(dir, 'rec.db');
    const { command, args } = serverEverythingCommand();
    await runSession(MCPREEL, ['record', '--db', db, '--name', 'stdio', '--', command, ...args], { stderr: 'pipe' });
    /* HTTP+SSE is left out: its session is the same messages again, which
       are judged once (protocol_clean.test.mjs checks it). */
    for (const mode of mcpreelHttpSupport().ok ? ['streamableHttp'] : []) {
      const se = await startServerEverything(mode);
      defer(se.stop);
      const proxy = await startMcpreelHttp({ db, upstream: se.origin, name: mode });
      defer(() => proxy.stop());
      const url = `${proxy.url}${new URL(se.url).pathname}`;
      await runSessionWith(streamableHttpTransport(url), {});
      /* The conformance suite's client: other messages than the SDK's. */
      if (mode === 'streamableHttp' && conformance.ok) await runConformanceDetailed(url);
      await proxy.stop();
    }
    const files = sessionsOf(db).map((s) => {
      const file = join(dir, `s${s.id}.jsonl`);
      execFileSync(MCPREEL, ['export', '--db', db, '--format', 'jsonl', '-o', file, String(s.id)]);
      return file;
    });
    const { judged, open } = differential(corpusOf(files));
    /* Without the conformance suite the SDK's sessions alone give fewer
       distinct messages. */
    if (!conformance.ok) console.log(`# the conformance suite is not installed (${conformance.reason}): a smaller corpus`);
    assert.ok(judged >= (conformance.ok ? MIN_CORPUS : 1000), `enough messages judged (${judged})`);
    assert.equal(open.length, 0, `${open.length} disagreements the specification does not settle (listed above)`);
  });
});
