// Preloaded (`node --import <this file> ...`) into server-everything's HTTP
// modes by lib/servers.mjs.  server-everything calls `app.listen(PORT)`
// with no host, which binds every interface, and with PORT=0 it reports
// port 0 rather than the one it got.  This module makes a listen() given
// only a port (and maybe a callback) bind 127.0.0.1 instead, and once the
// first server is listening writes
//
//     mcpreel-e2e: listening on 127.0.0.1:PORT
//
// to stderr, so the tests can use a free port without a race and never
// expose the server beyond loopback.  Nothing else is changed.

import net from 'node:net';

const HOST = '127.0.0.1';
const originalListen = net.Server.prototype.listen;
let announced = false;

function isPort(v) {
  return (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^\d+$/.test(v));
}

net.Server.prototype.listen = function listen(...args) {
  if (isPort(args[0]) && (args.length === 1 || typeof args[1] === 'function')) {
    args = [Number(args[0]), HOST, ...args.slice(1)];
  }
  this.once('listening', () => {
    if (announced) return;
    announced = true;
    const a = this.address();
    if (a && typeof a === 'object') process.stderr.write(`mcpreel-e2e: listening on ${a.address}:${a.port}\n`);
  });
  return originalListen.apply(this, args);
};
