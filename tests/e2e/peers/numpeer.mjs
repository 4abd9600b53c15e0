// A stdio MCP server that answers each request with its params' n:
// {"result":{"n":N}}.  With --off K, a request whose id is a multiple of K
// gets N + 1 instead, so a replay against it differs there and only
// there.  A request whose params have notes: M gets M progress
// notifications before its answer.  Usage: node numpeer.mjs [--off K]
import { createInterface } from 'node:readline';

const at = process.argv.indexOf('--off');
const off = at > 0 ? Number(process.argv[at + 1]) : 0;
const out = [];
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  let m = null;
  try { m = JSON.parse(line); } catch { return; }
  if (m === null || typeof m !== 'object' || m.id === undefined || m.method === undefined) return;
  const n = m.params?.n ?? 0;
  for (let i = 0; i < (m.params?.notes ?? 0); i++)
    out.push(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: n, progress: i } }) + '\n');
  out.push(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { n: off > 0 && m.id % off === 0 ? n + 1 : n } }) + '\n');
  if (out.length >= 64) process.stdout.write(out.splice(0).join(''));
}).on('close', () => {
  process.stdout.write(out.splice(0).join(''), () => process.exit(0));
});
setInterval(() => { if (out.length) process.stdout.write(out.splice(0).join('')); }, 5);
