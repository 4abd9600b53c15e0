// A stdio MCP server that is another one with one change: every line it
// writes has FROM replaced by TO.  For testing that replay reports exactly
// what changed.  Usage: node mutate.mjs FROM TO -- CMD [ARGS...]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
if (sep !== 2) {
  process.stderr.write('usage: node mutate.mjs FROM TO -- CMD [ARGS...]\n');
  process.exit(2);
}
const [from, to] = argv;
const child = spawn(argv[3], argv.slice(4), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
  process.stdout.write(line.split(from).join(to) + '\n');
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
