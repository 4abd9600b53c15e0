// A server that, at its first line of input, writes COUNT lines of SIZE
// bytes (JSON-RPC notifications) to stdout as fast as the pipe takes them,
// then exits when its stdin ends.  Usage: node flood.mjs COUNT SIZE
const count = Number(process.argv[2]);
const size = Number(process.argv[3]);
const head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"n":';
let started = false;

function line(i) {
  const start = head + i + ',"d":"';
  return start + 'z'.repeat(size - start.length - 3) + '"}}\n';
}

async function flood() {
  for (let i = 0; i < count;) {
    let chunk = '';
    for (let k = 0; k < 64 && i < count; k++, i++) chunk += line(i);
    if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
  }
}

process.stdin.on('data', () => {
  if (!started) {
    started = true;
    flood();
  }
});
process.stdin.on('end', () => process.exit(0));
