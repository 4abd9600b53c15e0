// A stdio MCP server for record-mode tests: tools/call "slow" answers
// after arguments.secs with arguments.tag as its text; "never" is never
// answered.  Each request is handled on its own, so answers can come in
// another order than their requests.  Usage: node slowpeer.mjs
let buf = '';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line.trim() === '') continue;
    const m = JSON.parse(line);
    if (m.id === undefined || m.method === undefined) continue;
    if (m.method === 'initialize') {
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'slowpeer', version: '1' } } });
    } else if (m.method === 'tools/list') {
      send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'slow', inputSchema: { type: 'object' } }, { name: 'never', inputSchema: { type: 'object' } }] } });
    } else if (m.method === 'tools/call' && m.params.name === 'slow') {
      const { secs = 0, tag = '' } = m.params.arguments ?? {};
      setTimeout(() => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: String(tag) }] } }), secs * 1000);
    } else if (m.method === 'tools/call' && m.params.name === 'never') {
      // no answer
    } else {
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
