// A server that answers its first request, then exits with STATUS while the
// host is still connected.  Usage: node exitpeer.mjs STATUS
const status = Number(process.argv[2] ?? 3);
let buf = '';
process.stdin.on('data', (chunk) => {
  buf += chunk;
  const nl = buf.indexOf('\n');
  if (nl < 0) return;
  const req = JSON.parse(buf.slice(0, nl));
  process.stderr.write(`exitpeer: answering ${req.method} then exiting ${status}\n`);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: req.id, result: {} }) + '\n', () => process.exit(status));
});
