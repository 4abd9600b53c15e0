// A scripted 2026-07-28 client (no initialize, no sessions; per-request
// _meta), for recording sessions with peers/peer2026.mjs over stdio.  It
// exercises what replay must handle for that version: server/discover, a
// tool whose argument travels as a header over HTTP, a multi round-trip
// request (input_required + requestState, retried with inputResponses),
// and a subscriptions/listen stream.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'client2026', version: '1.0.0' },
};

/**
 * Run the script against `command args` over stdio.  Resolves with the
 * results of each step (the final confirm text among them).
 */
export async function run2026(command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map();
  const notes = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    if ('id' in m && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
    } else if ('method' in m) notes.push(m.method);
  });
  let next = 1;
  const call = (method, params = {}) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }) + '\n');
  });

  const out = {};
  out.discover = (await call('server/discover')).result.supportedVersions;
  out.tools = (await call('tools/list')).result.tools.map((t) => t.name);
  out.echo = (await call('tools/call', { name: 'echo', arguments: { text: 'hello' } })).result.content[0].text;
  out.add = (await call('tools/call', { name: 'add', arguments: { a: 2, b: 3 } })).result.structuredContent;
  const first = (await call('tools/call', { name: 'confirm', arguments: { item: 'deploy' } })).result;
  out.confirmFirst = first.resultType;
  const retry = await call('tools/call', {
    name: 'confirm', arguments: { item: 'deploy' },
    inputResponses: { confirm: { action: 'accept', content: { confirmed: true } } },
    requestState: first.requestState,
  });
  out.confirm = retry.result?.content?.[0]?.text ?? retry.error;
  out.read = (await call('resources/read', { uri: 'test://peer2026/status' })).result.contents[0].text;
  out.listen = (await call('subscriptions/listen', {
    notifications: { toolsListChanged: true, resourceSubscriptions: ['test://peer2026/status'] },
  })).result.resultType;
  child.stdin.end();
  await new Promise((res) => child.on('close', res));
  out.notifications = notes;
  return out;
}
