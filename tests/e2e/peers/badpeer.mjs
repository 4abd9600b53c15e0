// A stdio "server" that misbehaves on purpose, for the fault tests.  Every
// mode first says `badpeer MODE pid N` on stderr.  Usage:
//   node badpeer.mjs echo          write back every byte read (like cat)
//   node badpeer.mjs early         write a notification and a line of text
//                                  at once, before reading anything; then
//                                  echo
//   node badpeer.mjs close-stdout  answer the first line, then close stdout
//                                  and keep running: every later line read
//                                  is reported on stderr as `badpeer: read
//                                  N bytes`; exit 0 at the end of stdin
//   node badpeer.mjs deaf          never read stdin; `badpeer: tick N` on
//                                  stderr every 100 ms, forever
//   node badpeer.mjs argv ARGS...  write ARGS as a JSON array on stdout,
//                                  then exit 0 at the end of stdin
import { closeSync } from 'node:fs';

const [mode, ...rest] = process.argv.slice(2);
process.stderr.write(`badpeer ${mode} pid ${process.pid}\n`);

function echo() {
  process.stdin.on('data', (c) => process.stdout.write(c));
  process.stdin.on('end', () => process.exit(0));
}

switch (mode) {
  case 'echo':
    echo();
    break;
  case 'early':
    process.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"early"}}\nnot json, early\n');
    echo();
    break;
  case 'close-stdout': {
    let buf = Buffer.alloc(0);
    let closed = false;
    process.stdin.on('data', (c) => {
      if (closed) {
        process.stderr.write(`badpeer: read ${c.length} bytes\n`);
        return;
      }
      buf = Buffer.concat([buf, c]);
      const nl = buf.indexOf(10);
      if (nl < 0) return;
      const req = JSON.parse(buf.subarray(0, nl).toString());
      closed = true;
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: req.id, result: {} })}\n`, () => {
        closeSync(1);
        process.stderr.write('badpeer: stdout closed\n');
      });
    });
    process.stdin.on('end', () => process.exit(0));
    break;
  }
  case 'deaf': {
    let n = 0;
    setInterval(() => process.stderr.write(`badpeer: tick ${++n}\n`), 100);
    break;
  }
  case 'argv':
    process.stdout.write(`${JSON.stringify(rest)}\n`);
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
    break;
  default:
    process.stderr.write(`badpeer: unknown mode ${mode}\n`);
    process.exit(2);
}
