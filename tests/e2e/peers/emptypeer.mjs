// A small stdio "server" that says empty lines: each empty line it reads
// it echoes, and before each answer it writes one empty line of its own.
// Every request gets {"result":{"echo": method}}.  It exits when stdin
// ends.  Usage: node emptypeer.mjs
import { createInterface } from 'node:readline';

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (line === '') {
    process.stdout.write('\n');
    return;
  }
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m === null || typeof m !== 'object' || !('id' in m) || typeof m.method !== 'string') return;
  process.stdout.write('\n' + JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { echo: m.method } }) + '\n');
});
rl.on('close', () => process.exit(0));
