// A small stdio MCP server (any legacy revision: it answers the one the
// client asks for) that breaks one rule of the
// protocol on purpose, for `mcpreel check`: each mode is one fault that a
// real server could make and the SDK client cannot.  Usage:
//   node checkpeer.mjs MODE
// Modes:
//   ok               every message right (the baseline: no finding)
//   answer-twice     answers tools/list twice          jsonrpc.answered-twice
//   unknown-id       answers an id never sent            jsonrpc.unknown-id
//   list-changed     tools/list_changed, no listChanged  caps.server
//   sampling         sampling/createMessage to a client that did not
//                    declare sampling                    caps.client
//   progress-down    progress 2 then 1                   progress.not-increasing
//   progress-late    progress after the response         progress.after-response
//   version          initialize answered "2099-01-01"    lifecycle.version-unknown
//   shape            a tools/list result without tools   shape.required
//   error-code       an error whose code is a string     jsonrpc.error-code
//   deaf             answers initialize, then nothing (a flood of
//                    requests never answered)
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'ok';
const send = (m) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
const TOOLS = [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];

createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.method === 'initialize') {
    send({ id: m.id, result: {
      protocolVersion: mode === 'version' ? '2099-01-01' : m.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'checkpeer', version: '1.0.0' } } });
    return;
  }
  if (mode === 'deaf') return;
  if (m.method === 'notifications/initialized') {
    if (mode === 'list-changed') send({ method: 'notifications/tools/list_changed' });
    if (mode === 'sampling') send({ id: 'srv-1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } });
    return;
  }
  if (m.method === 'tools/list') {
    if (mode === 'shape') { send({ id: m.id, result: {} }); return; }
    send({ id: m.id, result: { tools: TOOLS } });
    if (mode === 'answer-twice') send({ id: m.id, result: { tools: TOOLS } });
    if (mode === 'unknown-id') send({ id: 9999, result: {} });
    return;
  }
  if (m.method === 'tools/call') {
    const token = m.params?._meta?.progressToken;
    if (token !== undefined && mode === 'progress-down') {
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 2 } });
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    }
    if (mode === 'error-code') {
      send({ id: m.id, error: { code: 'oops', message: 'broken' } });
      return;
    }
    send({ id: m.id, result: { content: [{ type: 'text', text: String(m.params?.arguments?.text ?? '') }] } });
    if (token !== undefined && mode === 'progress-late')
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 3 } });
    return;
  }
  if (m.id !== undefined && m.method !== undefined)
    send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
});
process.stdin.on('end', () => process.exit(0));
