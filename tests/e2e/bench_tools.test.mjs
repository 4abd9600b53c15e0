// The bench's MCP load client (bench/mcp_load, built beside the binary
// under test) against small servers of our own: it keeps the session id
// the server gave to initialize on every request of every connection, it
// takes URLs and session ids as long as it accepts, and a server that
// closes or never answers ends it with a clear error, never a hang.  And
// tcp_relay, the scenario's bare hop: http_load through it to http_echo
// gets every answer, and a bad port names its option.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';

import { MCPREEL } from './lib/util.mjs';

const BENCH = join(dirname(MCPREEL), 'bench');
const MCP_LOAD = join(BENCH, 'mcp_load');
const skip = existsSync(MCP_LOAD) ? false : `no ${MCP_LOAD} (a build with MCPREEL_BENCH=ON)`;
const RUN_TIMEOUT_MS = 120000;

/** Run bench tool name with args to its end: its status, signal, stdout and stderr. */
function tool(name, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(join(BENCH, name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), RUN_TIMEOUT_MS);
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('error', reject);
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, out, err });
    });
  });
}

/** Run mcp_load with args. */
function mcpLoad(args) {
  return tool('mcp_load', args);
}

/**
 * An MCP server over HTTP that gives session id sid to initialize and
 * answers 400 to any later request without exactly that id.  Every answer
 * to a request carries an Mcp-Session-Id header: sid, or with changeId
 * another one each time (the client must keep the first).  Its URL and
 * the requests it refused in the result.
 */
async function sessionServer(t, { sid, changeId = false } = {}) {
  const state = { refused: [], answered: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const msg = JSON.parse(body);
      const json = (status, headers, value) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      if (msg.method === 'initialize') {
        json(200, { 'mcp-session-id': sid }, {
          jsonrpc: '2.0', id: msg.id,
          result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 't', version: '1' } },
        });
        return;
      }
      if (req.headers['mcp-session-id'] !== sid) {
        state.refused.push(req.headers);
        json(400, {}, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } });
        return;
      }
      if (!('id' in msg)) {
        res.writeHead(202, { 'content-length': '0' });
        res.end();
        return;
      }
      state.answered++;
      json(200, { 'mcp-session-id': changeId ? `another-${state.answered}` : sid }, { jsonrpc: '2.0', id: msg.id, result: {} });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return { url: `http://127.0.0.1:${server.address().port}`, state };
}

test('mcp_load sends the session id initialize gave, whatever later answers say', { skip }, async (t) => {
  const { url, state } = await sessionServer(t, { sid: 'the-first-id', changeId: true });
  const r = await mcpLoad(['--method', 'ping', '--count', '20', '--warmup', '5', `${url}/mcp`]);
  assert.equal(r.status, 0, r.err);
  assert.deepEqual(state.refused, []);
  assert.match(r.out, /sent=25 received=25 /);
});

test('mcp_load: connections sharing the session, each request with its id', { skip }, async (t) => {
  // Every answer rewrote the shared session id while other connections
  // copied it into their requests: some went without it (a 400).
  const { url, state } = await sessionServer(t, { sid: 'f2c1e0a4-6d0b-4a53-9a43-0d7a2b6f1c35' });
  const r = await mcpLoad(['--scenario', 'throughput', '--count', '20000', '--conns', '16', `${url}/mcp`]);
  assert.equal(r.status, 0, r.err);
  assert.deepEqual(state.refused, []);
  assert.match(r.out, /sent=20000 received=20000 /);
});

test('mcp_load: a long path and a long session id fit in the request head', { skip }, async (t) => {
  const { url, state } = await sessionServer(t, { sid: 's'.repeat(250) });
  const r = await mcpLoad(['--method', 'ping', '--count', '3', '--warmup', '0', `${url}/${'p'.repeat(1000)}`]);
  assert.equal(r.status, 0, r.err);
  assert.deepEqual(state.refused, []);
});

test('mcp_load: a server that closes or never answers ends it with an error', { skip }, async (t) => {
  // Closes each connection after the handshake's two answers.
  let n = 0;
  const closer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (++n > 2) {
        req.socket.destroy();
        return;
      }
      const init = n === 1;
      res.writeHead(init ? 200 : 202, { 'content-type': 'application/json', 'mcp-session-id': 'x' });
      res.end(init ? '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}' : '');
    });
  });
  await new Promise((resolve) => closer.listen(0, '127.0.0.1', resolve));
  t.after(() => { closer.closeAllConnections(); closer.close(); });
  let r = await mcpLoad(['--method', 'ping', '--count', '3', `http://127.0.0.1:${closer.address().port}/mcp`]);
  assert.equal(r.status, 1, r.out);
  assert.match(r.err, /closed the connection after 0 of 1 answers/);

  // Takes the request and never answers: the watchdog ends it.
  const mute = http.createServer(() => {});
  await new Promise((resolve) => mute.listen(0, '127.0.0.1', resolve));
  t.after(() => { mute.closeAllConnections(); mute.close(); });
  r = await mcpLoad(['--timeout', '2', '--method', 'ping', '--count', '3', `http://127.0.0.1:${mute.address().port}/mcp`]);
  assert.equal(r.status, 1, r.out);
  assert.match(r.err, /timed out after 2 s/);
});

/** Start a bench server that prints its address; its port, killed after t. */
function server(t, name, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(join(BENCH, name), args, { stdio: ['ignore', 'pipe', 'inherit'] });
    t.after(() => p.kill('SIGTERM'));
    let out = '';
    p.on('error', reject);
    p.on('exit', (status) => reject(new Error(`${name} exited ${status} before listening`)));
    p.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
  });
}

test('tcp_relay: http_load through it gets every answer, each counted once', { skip }, async (t) => {
  const echo = await server(t, 'http_echo', []);
  const relay = await server(t, 'tcp_relay', ['--upstream', String(echo)]);
  let r = await tool('http_load', ['--scenario', 'throughput', '--count', '3000', '--conns', '16',
    `http://127.0.0.1:${relay}/mcp`]);
  assert.equal(r.status, 0, r.err);
  assert.match(r.out, /sent=3000 received=3000 .* cpu_s=\d+\.\d+ status=0/);
  // An answer bigger than a socket's buffers, both ways through the relay.
  r = await tool('http_load', ['--scenario', 'latency', '--count', '4', '--warmup', '1', '--size', '4M',
    `http://127.0.0.1:${relay}/mcp`]);
  assert.equal(r.status, 0, r.err);
  assert.match(r.out, /sent=5 received=5 /);
});

test('tcp_relay: a bad port names the option it came from', { skip }, async () => {
  let r = await tool('tcp_relay', ['--upstream', '70000']);
  assert.equal(r.status, 1, r.out);
  assert.match(r.err, /--upstream 70000 is not a port/);
  r = await tool('tcp_relay', ['--upstream', '1', '--port', '65536']);
  assert.equal(r.status, 1, r.out);
  assert.match(r.err, /--port 65536 is not a port/);
});
