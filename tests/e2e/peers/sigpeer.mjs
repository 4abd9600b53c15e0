// A server that says when it is ready (on stderr), and on SIGTERM or SIGINT
// writes the signal's name to FLAG and exits with 7.
// Usage: node sigpeer.mjs FLAG
import { writeFileSync } from 'node:fs';

const flag = process.argv[2];
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    writeFileSync(flag, sig);
    process.exit(7);
  });
}
process.stdin.resume();
process.stderr.write('sigpeer ready\n');
