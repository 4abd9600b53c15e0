// sdk_ping.mjs: the real-server latency pair.  An MCP SDK client sends
// `ping` over Streamable HTTP to server-everything, directly and through
// `mcpreel record --listen`, round after round in the same run, and prints
// the medians of the time to the response head (fetch resolving) and to
// the whole answer (ping resolving).  Needs tests/e2e's node_modules:
//
//   node bench/sdk_ping.mjs MCPREEL [PINGS] [ROUNDS]
//
// (from the repository root, after `cd tests/e2e && npm ci`).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const e2e = join(dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'e2e');
const require = createRequire(join(e2e, 'package.json'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StreamableHTTPClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js'));

const [mcpreel, pingsArg, roundsArg] = process.argv.slice(2);
const PINGS = Number(pingsArg ?? 350);
const ROUNDS = Number(roundsArg ?? 3);

// Start a child and resolve with the port it names on a line of its output.
function startUntil(cmd, args, re, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    const on = (d) => {
      seen += d;
      const m = seen.match(re);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (c) => reject(new Error(`${cmd} exited ${c}: ${seen}`)));
  });
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

// PINGS pings from a fresh SDK client to url: median ms to head and to answer.
async function pings(url) {
  const heads = [];
  const timedFetch = async (u, init) => {
    const t0 = performance.now();
    const r = await fetch(u, init);
    if (init?.method === 'POST' && String(init.body).includes('"ping"')) heads.push(performance.now() - t0);
    return r;
  };
  const client = new Client({ name: 'sdk-ping', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: timedFetch }));
  for (let i = 0; i < 20; i++) await client.ping();
  heads.length = 0;
  const whole = [];
  for (let i = 0; i < PINGS; i++) {
    const t0 = performance.now();
    await client.ping();
    whole.push(performance.now() - t0);
  }
  await client.close();
  return { head: median(heads), whole: median(whole) };
}

const se = await startUntil(process.execPath, ['--import', join(e2e, 'lib', 'listen_loopback.mjs'),
  require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'],
  /listening on 127\.0\.0\.1:(\d+)/, { PORT: '0' });
const dir = mkdtempSync(join(tmpdir(), 'sdk-ping-'));
const mr = await startUntil(mcpreel, ['record', '--db', join(dir, 'ping.db'), '--listen', '127.0.0.1:0',
  '--upstream', `http://127.0.0.1:${se.port}`], /listening on http:\/\/127\.0\.0\.1:(\d+)/, {});
const rows = [];
for (let r = 0; r < ROUNDS; r++) {
  const d = await pings(`http://127.0.0.1:${se.port}/mcp`);
  const m = await pings(`http://127.0.0.1:${mr.port}/mcp`);
  rows.push({ d, m });
  console.log(`round ${r + 1}: head direct ${d.head.toFixed(3)} ms, through ${m.head.toFixed(3)} ms (+${(m.head - d.head).toFixed(3)}); ` +
    `answer direct ${d.whole.toFixed(3)} ms, through ${m.whole.toFixed(3)} ms (+${(m.whole - d.whole).toFixed(3)})`);
}
const mh = median(rows.map((x) => x.m.head - x.d.head));
const mw = median(rows.map((x) => x.m.whole - x.d.whole));
console.log(`sdk_ping: pings=${PINGS} rounds=${ROUNDS} head_added_ms=${mh.toFixed(3)} answer_added_ms=${mw.toFixed(3)} ` +
  `head_direct_ms=${median(rows.map((x) => x.d.head)).toFixed(3)} head_through_ms=${median(rows.map((x) => x.m.head)).toFixed(3)}`);
mr.child.kill('SIGTERM');
se.child.kill('SIGTERM');
await new Promise((r) => setTimeout(r, 300));
rmSync(dir, { recursive: true, force: true });
