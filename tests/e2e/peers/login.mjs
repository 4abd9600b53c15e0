// A small stdio MCP server for the redaction tests: a "login" tool that
// hands out a fresh access token every time, and says whether the
// password it got was the placeholder a redacted recording replays.
//   initialize                -> a 2025-06-18 answer with a tools capability
//   tools/call login {user, password}
//                             -> {access_token: random, user,
//                                 note: "key <token> end", or "rejected"
//                                 when the password is "[REDACTED]"}
//   anything else with an id  -> an empty result
// It exits when stdin ends.
// Usage: node login.mjs
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m === null || typeof m !== 'object' || !('id' in m) || typeof m.method !== 'string') return;
  let result = {};
  if (m.method === 'initialize') {
    result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'login', version: '1' } };
  } else if (m.method === 'tools/call' && m.params?.name === 'login') {
    const token = `sk-${randomBytes(16).toString('hex')}`;
    const args = m.params.arguments ?? {};
    result = {
      structuredContent: {
        access_token: token,
        user: args.user,
        note: args.password === '[REDACTED]' ? 'rejected' : `key ${token} end`,
      },
      content: [{ type: 'text', text: 'logged in' }],
    };
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\n');
});
rl.on('close', () => process.exit(0));
