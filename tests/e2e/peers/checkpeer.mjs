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
//   elicitation      elicitation/create to a client that did not declare
//                    elicitation                         caps.client
//   roots            roots/list to a client that did not declare roots
//                                                        caps.client
//   subscribe        declares resources without subscribe; the client
//                    (told by the test) subscribes       caps.server
//   updated          declares resources without subscribe, sends
//                    notifications/resources/updated     caps.server
//   logging          declares no logging; the client (told by the test)
//                    sets a level                        caps.server
//   progress-down    progress 2 then 1                   progress.not-increasing
//   progress-late    progress after the response         progress.after-response
//   version          initialize answered "2099-01-01"    lifecycle.version-unknown
//   shape            a tools/list result without tools   shape.required
//   error-code       an error whose code is a string     jsonrpc.error-code
//   not-json         a line that is not JSON                json.parse
//   dup-member       a ping with "id" twice                 json.duplicate-member
//   batch            two progress notifications as a batch under
//                    2025-11-25                          jsonrpc.batch
//   result-error     a tools/call answer with result and error
//                                                        jsonrpc.result-xor-error
//   error-message    an error whose message is a number  jsonrpc.error-message
//   version-differs  initialize answered "2025-06-18"   lifecycle.version-differs
//   early-request    roots/list before notifications/initialized
//                                                        lifecycle.before-initialized
//   progress-stray   progress for a token never given    progress.unknown-token
//   cancel-unknown   cancels a request never sent        cancel.unknown
//   cursor-repeat    nextCursor "c1" answered to cursor "c1"
//                                                        pagination.cursor-repeat
//   shape-type       tools/list's tools is a string      shape.type
//   shape-enum       content annotations audience "robot" shape.enum
//   unlisted         lists no echo, answers its call with a JSON-RPC error
//                                                        tool.unknown
//   unknown-as-result lists no echo, answers its call with isError
//                                                        tool.unknown-as-result
//   arguments        echo's inputSchema wants a number   tool.arguments
//   args-rpc-error   likewise, answered with a JSON-RPC error
//                                                        tool.invalid-arguments-answer
//   bad-schema       echo's inputSchema has minLength -1 tool.schema-invalid
//   schema-note      echo's inputSchema uses unevaluatedProperties
//                                                        tool.schema-note
//   bad-structured   structuredContent against outputSchema
//                                                        tool.structured-content
//   no-structured    an outputSchema, no structuredContent
//                                                        tool.structured-content-missing
//   wrong-side       sends the client tools/list, which only clients send
//                                                        jsonrpc.wrong-side
//   deaf             answers initialize, then nothing (a flood of
//                    requests never answered)
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'ok';
const send = (m) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
const ECHO_IN = { type: 'object', properties: { text: { type: 'string' } } };
const OUT = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
const TOOLS = {
  unlisted: [{ name: 'other', inputSchema: ECHO_IN }],
  'unknown-as-result': [{ name: 'other', inputSchema: ECHO_IN }],
  arguments: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'number' } } } }],
  'args-rpc-error': [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'number' } } } }],
  'bad-schema': [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: -1 } } } }],
  'schema-note': [{ name: 'echo', inputSchema: { ...ECHO_IN, unevaluatedProperties: false } }],
  'bad-structured': [{ name: 'echo', inputSchema: ECHO_IN, outputSchema: OUT }],
  'no-structured': [{ name: 'echo', inputSchema: ECHO_IN, outputSchema: OUT }],
}[mode] ?? [{ name: 'echo', inputSchema: ECHO_IN }];

createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.method === 'initialize') {
    const result = { id: m.id, result: {
      protocolVersion: mode === 'version' ? '2099-01-01' : mode === 'version-differs' ? '2025-06-18' : m.params.protocolVersion,
      capabilities: mode === 'subscribe' || mode === 'updated' ? { tools: {}, resources: {} } : { tools: {} },
      serverInfo: { name: 'checkpeer', version: '1.0.0' } } };
    // early-request: roots/list in the same write as the answer, so that
    // it is on the wire before the client can send initialized (two
    // writes may reach the recorder in two reads, the client's
    // notification between them).
    if (mode === 'early-request') {
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...result })}\n${JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: 'roots/list' })}\n`);
    } else {
      send(result);
    }
    return;
  }
  if (mode === 'deaf') return;
  if (m.method === 'notifications/initialized') {
    if (mode === 'list-changed') send({ method: 'notifications/tools/list_changed' });
    if (mode === 'sampling') send({ id: 'srv-1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } });
    if (mode === 'elicitation') {
      send({ id: 'srv-1', method: 'elicitation/create', params: { mode: 'form', message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } });
    }
    if (mode === 'roots') send({ id: 'srv-1', method: 'roots/list' });
    if (mode === 'wrong-side') send({ id: 'srv-1', method: 'tools/list' });
    if (mode === 'updated') send({ method: 'notifications/resources/updated', params: { uri: 'file:///a.txt' } });
    if (mode === 'not-json') process.stdout.write('this is not JSON\n');
    if (mode === 'dup-member') process.stdout.write('{"jsonrpc":"2.0","id":"p1","id":"p1","method":"ping"}\n');
    if (mode === 'progress-stray') send({ method: 'notifications/progress', params: { progressToken: 'zzz', progress: 1 } });
    if (mode === 'cancel-unknown') send({ method: 'notifications/cancelled', params: { requestId: 777 } });
    return;
  }
  if (m.method === 'tools/list') {
    if (mode === 'shape') { send({ id: m.id, result: {} }); return; }
    if (mode === 'shape-type') { send({ id: m.id, result: { tools: 'echo' } }); return; }
    if (mode === 'cursor-repeat') { send({ id: m.id, result: { tools: TOOLS, nextCursor: 'c1' } }); return; }
    send({ id: m.id, result: { tools: TOOLS } });
    if (mode === 'answer-twice') send({ id: m.id, result: { tools: TOOLS } });
    if (mode === 'unknown-id') send({ id: 9999, result: {} });
    return;
  }
  if (m.method === 'tools/call') {
    const token = m.params?._meta?.progressToken;
    if (token !== undefined && mode === 'batch') {
      process.stdout.write(`${JSON.stringify([1, 2].map((progress) => ({ jsonrpc: '2.0', method: 'notifications/progress',
        params: { progressToken: token, progress } })))}\n`);
    }
    if (token !== undefined && mode === 'progress-down') {
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 2 } });
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    }
    if (mode === 'error-code') {
      send({ id: m.id, error: { code: 'oops', message: 'broken' } });
      return;
    }
    if (mode === 'error-message') { send({ id: m.id, error: { code: -32000, message: 42 } }); return; }
    if (mode === 'unlisted' || mode === 'args-rpc-error') {
      send({ id: m.id, error: { code: -32602, message: mode === 'unlisted' ? 'Unknown tool: echo' : 'Invalid arguments' } });
      return;
    }
    const text = [{ type: 'text', text: String(m.params?.arguments?.text ?? '') }];
    if (mode === 'result-error') { send({ id: m.id, result: { content: text }, error: { code: -32000, message: 'both' } }); return; }
    if (mode === 'unknown-as-result') { send({ id: m.id, result: { content: text, isError: true } }); return; }
    if (mode === 'bad-structured') { send({ id: m.id, result: { content: text, structuredContent: { n: 'one' } } }); return; }
    if (mode === 'shape-enum') {
      send({ id: m.id, result: { content: [{ ...text[0], annotations: { audience: ['robot'] } }] } });
      return;
    }
    send({ id: m.id, result: { content: [{ type: 'text', text: String(m.params?.arguments?.text ?? '') }] } });
    if (token !== undefined && mode === 'progress-late')
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 3 } });
    return;
  }
  if (m.method === 'resources/subscribe' || m.method === 'logging/setLevel') {
    send({ id: m.id, result: {} });
    return;
  }
  if (m.id !== undefined && m.method !== undefined)
    send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
});
process.stdin.on('end', () => process.exit(0));
