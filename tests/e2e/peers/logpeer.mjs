// A peer of ours for byte-exactness tests: run as the "server" behind
// mcpreel.  It writes every byte it receives on stdin to LOG, and on start
// writes the bytes of SEND (a file) to stdout, then keeps running until
// stdin ends.  Usage: node logpeer.mjs LOG SEND
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

const [log, send] = process.argv.slice(2);
writeFileSync(log, Buffer.alloc(0));
process.stdin.on('data', (chunk) => appendFileSync(log, chunk));
process.stdin.on('end', () => process.exit(0));
process.stdout.write(readFileSync(send));
