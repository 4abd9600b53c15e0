// A stdio MCP server that is another one with two changes, made on the
// JSON-RPC messages it writes: one tool's description in every tools/list
// answer, and the first text of every answer to a tools/call of one tool.  For
// testing that `mcpreel diff` reports exactly those two.
// Usage: node retool.mjs DESCRIBE_TOOL NEW_DESCRIPTION ANSWER_TOOL NEW_TEXT -- CMD [ARGS...]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
if (argv.length < 6 || argv[4] !== '--') {
  process.stderr.write('usage: node retool.mjs DESCRIBE_TOOL NEW_DESCRIPTION ANSWER_TOOL NEW_TEXT -- CMD [ARGS...]\n');
  process.exit(2);
}
const [describeTool, description, answerTool, text] = argv;
const child = spawn(argv[5], argv.slice(6), { stdio: ['pipe', 'pipe', 'inherit'] });

// The ids of the client's tools/list and tools/call (of answerTool)
// requests, as JSON text: their answers are the ones changed.
const lists = new Set();
const calls = new Set();
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  try {
    const m = JSON.parse(line);
    if (m && m.id !== undefined && m.method === 'tools/list') lists.add(JSON.stringify(m.id));
    if (m && m.id !== undefined && m.method === 'tools/call' && m.params?.name === answerTool) calls.add(JSON.stringify(m.id));
  } catch { /* not JSON: passed on as it is */ }
  child.stdin.write(line + '\n');
}).on('close', () => child.stdin.end());

createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { process.stdout.write(line + '\n'); return; }
  const id = m && m.id !== undefined && m.method === undefined ? JSON.stringify(m.id) : null;
  if (id !== null && lists.has(id) && Array.isArray(m.result?.tools)) {
    lists.delete(id);
    for (const t of m.result.tools) if (t.name === describeTool) t.description = description;
    line = JSON.stringify(m);
  } else if (id !== null && calls.has(id) && Array.isArray(m.result?.content)) {
    calls.delete(id);
    const first = m.result.content.find((c) => c.type === 'text');
    if (first) first.text = text;
    line = JSON.stringify(m);
  }
  process.stdout.write(line + '\n');
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
