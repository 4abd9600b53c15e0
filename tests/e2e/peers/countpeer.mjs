// A stdio MCP server that is server-everything, counted: it starts
// server-everything, passes bytes both ways unchanged, and appends one JSON
// line for each message the client sends it to LOG ({method, name, id} of
// a request or notification, {answer: id} of a response), so a test can
// say what reached the server.  Usage: node countpeer.mjs LOG
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { serverEverythingCommand } from '../lib/session.mjs';

const log = process.argv[2];
if (!log) {
  process.stderr.write('usage: node countpeer.mjs LOG\n');
  process.exit(2);
}
const { command, args } = serverEverythingCommand();
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  let m = null;
  try { m = JSON.parse(line); } catch { /* passed on as it came */ }
  if (m !== null && typeof m === 'object') {
    const rec = m.method !== undefined
      ? { method: m.method, name: m.params?.name, id: m.id }
      : { answer: m.id };
    appendFileSync(log, JSON.stringify(rec) + '\n');
  }
  child.stdin.write(line + '\n');
}).on('close', () => child.stdin.end());
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => child.kill(sig));
