#!/usr/bin/env node
// Which MCP messages read the same in an older revision as in 2025-11-25,
// the revision the SDK's schemas follow: for each method, the closure of
// its request (or notification) type and of its result type in schema.ts
// (every declaration reached by name, comments and spacing dropped) is
// compared between the two revisions.  The differential test against the
// SDK (tests/e2e/protocol_sdk_diff.test.mjs) judges a message under an
// older revision only where this says it reads the same
// (SAME_AS_LATEST in tests/e2e/lib/sdkdiff.mjs).
//
//   node scripts/schema_same.mjs SPEC_REPO
//
// SPEC_REPO: a git clone of modelcontextprotocol/modelcontextprotocol.
import { execFileSync } from 'node:child_process';

const LATEST = '2025-11-25';
const OLDER = ['2025-06-18', '2025-03-26', '2024-11-05'];

if (process.argv.length !== 3) {
  process.stderr.write('usage: node scripts/schema_same.mjs SPEC_REPO (a clone of modelcontextprotocol/modelcontextprotocol)\n');
  process.exit(2);
}

/** The exported declarations of a revision's schema.ts, by name, as normalised text. */
function declarations(version) {
  const text = execFileSync('git', ['-C', process.argv[2], 'show', `HEAD:schema/${version}/schema.ts`], { encoding: 'utf8' })
    .replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const starts = [...text.matchAll(/export\s+(?:interface|type|const)\s+(\w+)/g)].map((m) => [m.index, m[1]]);
  return new Map(starts.map(([at, name], k) => [name,
    text.slice(at, k + 1 < starts.length ? starts[k + 1][0] : text.length).replace(/\s+/g, ' ').trim()]));
}

/** The text of name and every declaration it reaches, sorted by name. */
function closure(decls, name) {
  const seen = new Set();
  const walk = (n) => {
    if (seen.has(n) || !decls.has(n)) return;
    seen.add(n);
    for (const id of decls.get(n).match(/\b[A-Z]\w*\b/g) ?? []) walk(id);
  };
  walk(name);
  return [...seen].sort().map((n) => decls.get(n)).join('\n');
}

/** Method name -> [call type, result type or null]. */
function methods(decls) {
  const out = {};
  for (const [name, text] of decls) {
    const m = /^export interface \w+(?:Request|Notification) .*?method: "([^"]+)"/.exec(text);
    if (!m) continue;
    const result = name.endsWith('Request') ? name.replace(/Request$/, 'Result') : null;
    out[m[1]] = [name, result && decls.has(result) ? result : result && 'EmptyResult'];
  }
  return out;
}

const latest = declarations(LATEST);
const latestMethods = methods(latest);
for (const v of OLDER) {
  const older = declarations(v);
  const same = [];
  for (const [method, [call, result]] of Object.entries(methods(older))) {
    const l = latestMethods[method];
    if (!l) continue;
    if (closure(latest, l[0]) === closure(older, call)) same.push(`${method} (${call})`);
    if (result && closure(latest, l[1]) === closure(older, result)) same.push(`${method} -> result (${result})`);
  }
  console.log(`${v}: ${same.length ? same.join(', ') : 'nothing'}`);
}
