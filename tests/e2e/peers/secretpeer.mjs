// A stdio MCP server of ours for the secrets test: it writes what it was
// given (argv, the environment variables named in $SECRETPEER_ENV, and
// every tools/call's arguments, as received) to $SECRETPEER_OUT as JSON
// lines, so the test can check the wire carried every byte; it prints the
// lines of $SECRETPEER_STDERR (a JSON array of strings) to stderr at
// start; and its tool "echo" answers with the arguments it got, as
// structuredContent (JSON members stay members), so the answer carries
// them back.  Usage: node secretpeer.mjs [ARGS...]
import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const out = process.env.SECRETPEER_OUT;
const note = (o) => appendFileSync(out, `${JSON.stringify(o)}\n`);

const env = {};
for (const name of (process.env.SECRETPEER_ENV ?? '').split(',').filter(Boolean)) env[name] = process.env[name];
note({ argv: process.argv.slice(2), env });
for (const line of JSON.parse(readFileSync(process.env.SECRETPEER_STDERR, 'utf8'))) process.stderr.write(`${line}\n`);

const send = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || m.method === undefined) return;
  switch (m.method) {
    case 'initialize':
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'secretpeer', version: '1.0.0' } } });
      break;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } });
      break;
    case 'tools/call':
      note({ arguments: m.params.arguments });
      send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'echoed' }], structuredContent: m.params.arguments } });
      break;
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  }
});
rl.on('close', () => process.exit(0));
