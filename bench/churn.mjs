// churn: N short MCP sessions over Streamable HTTP one after another
// (initialize, ping, DELETE: a gateway's many short sessions) on one
// keep-alive connection, for bench/scen_retire.sh.  Every answer is
// checked (status, session id); one key=value line on stdout.
//   node bench/churn.mjs URL N
import http from 'node:http';
const [url, nArg] = process.argv.slice(2);
const n = Number(nArg);
const u = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function req(method, body, sid) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (sid) headers['mcp-session-id'] = sid;
    if (body) headers['content-length'] = Buffer.byteLength(body);
    const r = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, sid: res.headers['mcp-session-id'], text: Buffer.concat(chunks).toString() }));
    });
    r.on('error', reject);
    if (body) r.write(body);
    r.end();
  });
}
const t0 = process.hrtime.bigint();
let bad = 0;
for (let i = 0; i < n; i++) {
  const init = await req('POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'churn', version: '1' } } }));
  if (init.status !== 200 || !init.sid) { bad++; continue; }
  const p = await req('POST', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }), init.sid);
  const d = await req('DELETE', null, init.sid);
  if (p.status !== 200 || d.status !== 200) bad++;
}
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`sessions=${n} bad=${bad} seconds=${s.toFixed(1)} per_s=${(n / s).toFixed(0)}`);
process.exit(bad === 0 ? 0 : 1);
