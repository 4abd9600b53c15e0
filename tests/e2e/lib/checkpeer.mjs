// Drive peers/checkpeer.mjs (a server breaking one rule per mode) through
// `mcpreel record` with the SDK client, as check.test.mjs does: list the
// tools, call echo with a progress callback (so the request carries a
// progressToken), wait for late notifications, close.

import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { MCPREEL, PEERS_DIR } from './util.mjs';

/**
 * Record one checkpeer session named mode in db; recordArgs go before the
 * `--`.  Resolves with mcpreel's stderr.
 */
export async function driveCheckpeer(db, mode, recordArgs = []) {
  const transport = new StdioClientTransport({
    command: MCPREEL,
    args: ['record', '--db', db, '--name', mode, ...recordArgs, '--', process.execPath, join(PEERS_DIR, 'checkpeer.mjs'), mode],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (s) => { stderr += s; });
  const ended = new Promise((resolve) => transport.stderr.on('end', resolve));
  const client = new Client({ name: 'checkpeer-e2e', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => {};
  try {
    await client.connect(transport);
    await client.listTools().catch(() => {});
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, { onprogress: () => {} }).catch(() => {});
    // Give a late notification time to arrive before the end.
    await new Promise((r) => setTimeout(r, 300));
  } catch {
    // version: the SDK refuses the answer and gives up, as it should.
  } finally {
    await client.close().catch(() => {});
  }
  // All of mcpreel's stderr: its last lines come as it exits.
  await Promise.race([ended, new Promise((r) => setTimeout(r, 20000))]);
  return stderr;
}
