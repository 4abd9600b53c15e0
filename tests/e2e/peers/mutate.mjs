// A stdio MCP server that is another one with changes: every line it
// writes has each FROM replaced by its TO.  For testing that replay reports
// exactly what changed.  Usage: node mutate.mjs FROM TO [FROM TO...] -- CMD [ARGS...]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
if (sep < 2 || sep % 2 !== 0) {
  process.stderr.write('usage: node mutate.mjs FROM TO [FROM TO...] -- CMD [ARGS...]\n');
  process.exit(2);
}
const pairs = [];
for (let i = 0; i < sep; i += 2) pairs.push([argv[i], argv[i + 1]]);
const child = spawn(argv[sep + 1], argv.slice(sep + 2), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
  for (const [from, to] of pairs) line = line.split(from).join(to);
  process.stdout.write(line + '\n');
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
