#!/usr/bin/env node
// Demo / e2e client: runs the scripted MCP session of lib/session.mjs against
// an MCP server started over stdio, prints a short summary of each step to
// stderr and the full (deterministic) JSON transcript to stdout or --out FILE.
//
//   node demo-client.mjs [--quiet] [--out FILE] [--timeout MS] -- CMD [ARGS...]
//   node demo-client.mjs --everything [--quiet] [--out FILE]
//
// --everything runs against the pinned @modelcontextprotocol/server-everything
// (equivalent to `-- node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio`).
//
// Exit status: 0 on success, 1 on failure (message on stderr), 2 on bad usage.

import { writeFileSync } from 'node:fs';
import { runSession, serverEverythingCommand } from './lib/session.mjs';

const USAGE = `usage: node demo-client.mjs [--quiet] [--out FILE] [--timeout MS] -- CMD [ARGS...]
       node demo-client.mjs [--quiet] [--out FILE] [--timeout MS] --everything

Runs a fixed, scripted MCP client session against CMD (an MCP server speaking
stdio, or the mcpreel proxy wrapping one). A summary of each step goes to
stderr; the full JSON transcript goes to stdout, or to FILE with --out.

  --quiet        no per-step summary; the server's stderr is captured and
                 shown only if the session fails
  --out FILE     write the JSON transcript to FILE instead of stdout
  --timeout MS   whole-session deadline in milliseconds (default 55000)
  --everything   use the pinned server-everything as CMD
  -h, --help     show this help`;

function usageError(msg) {
  process.stderr.write(`demo-client: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { quiet: false, out: null, timeout: 55000, everything: false, command: null, args: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      o.command = argv[i + 1] ?? null;
      o.args = argv.slice(i + 2);
      break;
    } else if (a === '--quiet' || a === '-q') {
      o.quiet = true;
    } else if (a === '--out' || a === '-o') {
      if (i + 1 >= argv.length) usageError(`${a} needs a file name`);
      o.out = argv[++i];
    } else if (a === '--timeout') {
      const n = Number(argv[++i]);
      if (!Number.isFinite(n) || n <= 0) usageError('--timeout needs a positive number of milliseconds');
      o.timeout = n;
    } else if (a === '--everything') {
      o.everything = true;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else {
      usageError(`unknown argument: ${a}`);
    }
  }
  if (o.everything) {
    if (o.command) usageError('give either --everything or -- CMD, not both');
    const se = serverEverythingCommand();
    o.command = se.command;
    o.args = se.args;
  }
  if (!o.command) usageError('no server command given (use -- CMD [ARGS...])');
  return o;
}

function clip(s, n = 70) {
  const one = String(s).replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function firstText(result) {
  const b = result?.content?.find?.((c) => c.type === 'text');
  return b ? b.text : undefined;
}

/** One-line description of a transcript step. */
function describe(rec) {
  if (rec.error) return `error ${rec.error.code}: ${clip(rec.error.message)}`;
  const r = rec.result ?? {};
  switch (true) {
    case rec.step === 'initialize':
      return `${r.serverInfo?.name} ${r.serverInfo?.version}, protocol ${r.protocolVersion}, capabilities: ${Object.keys(r.capabilities ?? {}).join(', ')}`;
    case rec.step === 'tools/list':
      return `${rec.toolNames.length} tools: ${clip(rec.toolNames.join(', '), 90)}`;
    case rec.step === 'tools/call trigger-long-running-operation':
      return `${rec.progress.length} progress notifications (${rec.progress.map((p) => `${p.progress}/${p.total}`).join(' ')}); ${clip(firstText(r))}`;
    case rec.step === 'tools/call trigger-sampling-request':
      return `${rec.samplingRequestsReceived.length} sampling/createMessage answered; ${clip(firstText(r))}`;
    case rec.step === 'tools/call trigger-elicitation-request':
      return `${rec.elicitationRequestsReceived.length} elicitation/create accepted; ${clip(firstText(r))}`;
    case rec.step === 'tools/call echo (2 MiB)':
      return `${r.text.length} chars back, sha256 ${r.text.sha256.slice(0, 16)}…, matches input: ${r.isExpected}`;
    case rec.step.startsWith('tools/call'):
      return `${r.isError ? 'isError; ' : ''}${clip(firstText(r) ?? JSON.stringify(r))}`;
    case rec.step === 'resources/list':
      return `${r.resources.length} resources`;
    case rec.step === 'resources/templates/list':
      return `${r.resourceTemplates.length} templates: ${r.resourceTemplates.map((t) => t.uriTemplate).join(', ')}`;
    case rec.step.startsWith('resources/read'): {
      const c = r.contents?.[0] ?? {};
      const body = typeof c.text === 'string' ? c.text : c.blobDecoded ?? (c.text ? `${c.text.length} chars` : '');
      return `${r.contents?.length ?? 0} content(s), ${c.mimeType}: ${clip(body)}`;
    }
    case rec.step === 'prompts/list':
      return `${r.prompts.length} prompts: ${r.prompts.map((p) => p.name).join(', ')}`;
    case rec.step.startsWith('prompts/get'):
      return `${r.messages.length} message(s): ${clip(r.messages[0]?.content?.text ?? '')}`;
    case rec.step === 'completion/complete':
      return `values: ${r.completion?.values?.join(', ')}`;
    default:
      return clip(JSON.stringify(r));
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const diagnostics = {};
  const started = Date.now();
  if (!o.quiet) process.stderr.write(`demo-client: running ${[o.command, ...o.args].join(' ')}\n`);

  let transcript;
  try {
    transcript = await runSession(o.command, o.args, {
      stderr: o.quiet ? 'pipe' : 'inherit',
      sessionTimeoutMs: o.timeout,
      diagnostics,
      onStep: o.quiet
        ? undefined
        : ({ index, step, ms, record }) => {
            process.stderr.write(`[${String(index).padStart(2)}] ${step} (${ms} ms): ${describe(record)}\n`);
          },
    });
  } catch (err) {
    process.stderr.write(
      `demo-client: FAILED after ${Date.now() - started} ms: ${err?.message ?? err}\n`,
    );
    if (diagnostics.stderr) process.stderr.write(`--- server stderr ---\n${diagnostics.stderr}\n---------------------\n`);
    process.exitCode = 1;
    return;
  }

  const json = `${JSON.stringify(transcript, null, 2)}\n`;
  try {
    if (o.out) writeFileSync(o.out, json);
    else process.stdout.write(json);
  } catch (err) {
    process.stderr.write(`demo-client: cannot write transcript: ${err.message}\n`);
    process.exitCode = 1;
    return;
  }

  if (!o.quiet) {
    const n = transcript.notifications;
    process.stderr.write(
      `demo-client: notifications seen: ${n.methods.join(', ') || 'none'}; ` +
        `${n.logMessages.length} distinct log message(s)\n` +
        `demo-client: OK, ${transcript.steps.length} steps in ${diagnostics.totalMs} ms` +
        `${o.out ? `, transcript written to ${o.out}` : ''}\n`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`demo-client: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
});
