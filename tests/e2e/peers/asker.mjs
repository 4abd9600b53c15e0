// A stdio MCP server of ours that answers every request with
// {"answered": METHOD}; with --ask METHOD it first sends the client a
// request of that method (id "s1") and puts the client's answer in its
// result.  For testing how replay handles server requests the recording
// has no answer to.  Usage: node asker.mjs [--ask METHOD]
import { createInterface } from 'node:readline';

const ask = process.argv[2] === '--ask' ? process.argv[3] : null;
let pending = null;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if ('method' in m && 'id' in m) {
    if (ask && !pending) {
      pending = m;
      send({ jsonrpc: '2.0', id: 's1', method: ask });
      return;
    }
    send({ jsonrpc: '2.0', id: m.id, result: { answered: m.method } });
  } else if (m.id === 's1' && pending) {
    send({ jsonrpc: '2.0', id: pending.id, result: { answered: pending.method, asked: m.result ?? m.error } });
  }
});
