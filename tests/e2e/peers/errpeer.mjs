// A small stdio "server" for the report tests: it answers every request
// line it reads, and says some things no real server should.
//   tools/call "fail"   -> a tool result with isError: true
//   any method "nope"   -> a JSON-RPC error (method not found)
//   anything else       -> an empty result
// Before its first answer it writes a line that is not JSON, one that is
// not UTF-8, and a line to stderr.  It exits when stdin ends.
// Usage: node errpeer.mjs
import { createInterface } from 'node:readline';

let first = true;
const out = (s) => process.stdout.write(s);

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (first) {
    first = false;
    process.stderr.write('errpeer: starting up\n');
    out('errpeer says hello, not in JSON </script><script>document.title="pwned"</script>\n');
    process.stdout.write(Buffer.from([0x62, 0x69, 0x6e, 0x20, 0xff, 0xfe, 0x0a]));
  }
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m === null || typeof m !== 'object' || !('id' in m) || typeof m.method !== 'string') return;
  let reply;
  if (m.method === 'nope') {
    reply = { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: nope' } };
  } else if (m.method === 'tools/call' && m.params?.name === 'fail') {
    reply = { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'the tool failed' }], isError: true } };
  } else {
    reply = { jsonrpc: '2.0', id: m.id, result: {} };
  }
  out(JSON.stringify(reply) + '\n');
});
rl.on('close', () => process.exit(0));
