// The JSON Schema validator of `mcpreel check` (check/jsonschema.c) against
// an independent one: ajv 8 (the validator the MCP SDK itself uses), its
// draft-07 class and its 2020-12 class.  Over a corpus of schemas we wrote
// (every supported keyword, both drafts), the real inputSchema and
// outputSchema of server-everything's tools (from tools/list, through the
// SDK client), a pool of awkward values, values made from each schema and
// mutations of them (a member dropped, a value of another type, a member
// added, an item repeated), the two must agree on valid or invalid for
// every case, except the disagreements listed below, each with its reason.
//
// ajv and ajv-formats are the SDK's own dependencies (pinned in
// package-lock.json), so the test needs nothing the suite does not have.
//
// The C side runs through jschema_check (tests/unit/jschema_check.c, built
// next to the mcpreel binary under test), once over all the cases.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { serverEverythingCommand } from './lib/session.mjs';
import { MCPREEL, tempDir } from './lib/util.mjs';

const CHECKER = join(dirname(MCPREEL), 'jschema_check');
// The plain build's, for its memory figure (MCPREEL_VALGRIND's directory).
const PLAIN_CHECKER = process.env.MCPREEL_VALGRIND ?
  join(dirname(process.env.MCPREEL_VALGRIND), 'jschema_check') : null;

const D7 = 'http://json-schema.org/draft-07/schema#';
const D2020 = 'https://json-schema.org/draft/2020-12/schema';

// Values every schema meets, chosen for the edges: integers as reals,
// code points beyond the BMP, deep and empty containers, repeated items.
const POOL = [
  null, true, false, 0, 1, -1, 1.0, 1.5, -0.5, 3, 10, 100, 2.5e10, 1e300,
  '', 'a', 'ab', 'abc', 'ABC', 'é', 'éé', '😀', 'a😀b', '3', '1.5', ' ',
  'a b', 'x-y', 'hello world', 'New York', '2024-02-29', 'foo@example.com',
  '\n', 'abc\n',
  [], [1], [1, 2], [1, 1], [1, 1.0], ['a', 'b'], ['a', 1], [[1]], [null],
  [{ a: 1 }, { a: 1 }], [1, 2, 3, 4, 5],
  {}, { a: 1 }, { a: 'x' }, { a: 1, b: 2 }, { b: 2 }, { 'x-a': 'v' },
  { a: { b: { c: 1 } } }, { city: 'Paris', count: 3 }, { count: '3' },
  { next: { next: { v: 1 } } }, { k: 'a', x: 1 }, { k: 'b', y: 2 },
];

// The corpus: [schema, extra values to try with it].
const SCHEMAS = [
  { type: 'string' }, { type: 'integer' }, { type: 'number' },
  { type: 'boolean' }, { type: 'null' }, { type: 'array' }, { type: 'object' },
  { type: ['string', 'null'] }, { type: ['integer', 'boolean'] },
  { enum: ['a', 'b', 1, null] }, { enum: [{ a: 1 }, [1, 2]] },
  { const: 'a' }, { const: 1 }, { const: { a: 1 } }, { const: [1, 1.0] },
  { required: ['a'] }, { required: ['a', 'b'], type: 'object' },
  { properties: { a: { type: 'integer' }, b: { type: 'string' } } },
  { properties: { a: true }, additionalProperties: false },
  { additionalProperties: { type: 'integer' } },
  { patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false },
  { patternProperties: { '^[a-c]$': { type: 'number' } } },
  { propertyNames: { maxLength: 1 } },
  { propertyNames: { pattern: '^[a-z]+$' } },
  { minProperties: 1 }, { maxProperties: 1 }, { minProperties: 2, maxProperties: 2 },
  { $schema: D2020, dependentRequired: { a: ['b'] } },
  { $schema: D2020, dependentSchemas: { a: { required: ['c'] } } },
  { $schema: D7, dependencies: { a: ['b'], b: { properties: { a: { type: 'string' } } } } },
  { $schema: D7, dependentRequired: { a: ['b'] } },
  { items: { type: 'integer' } }, { items: false }, { items: true },
  { $schema: D7, items: [{ type: 'integer' }, { type: 'integer' }] },
  { $schema: D7, items: [{ type: 'integer' }], additionalItems: false },
  { $schema: D7, items: [{ type: 'integer' }], additionalItems: { type: 'string' } },
  { $schema: D2020, prefixItems: [{ type: 'integer' }], items: false },
  { $schema: D2020, prefixItems: [{ type: 'integer' }, { type: 'string' }], items: { type: 'null' } },
  { $schema: D7, prefixItems: [{ type: 'string' }] },
  { contains: { type: 'string' } }, { contains: { const: 1 } },
  { $schema: D2020, contains: { const: 1 }, minContains: 2 },
  { $schema: D2020, contains: { const: 1 }, maxContains: 1 },
  { $schema: D2020, contains: { type: 'number' }, minContains: 0 },
  { minItems: 1 }, { maxItems: 2 }, { uniqueItems: true }, { uniqueItems: false },
  { minLength: 2 }, { maxLength: 1 }, { minLength: 1, maxLength: 2 },
  { pattern: '^a' }, { pattern: 'b' }, { pattern: '^[a-z]+$' }, { pattern: '^\\d+$' },
  { pattern: '^\\w+$' }, { pattern: '\\s' }, { pattern: '^.$' }, { pattern: '^..$' },
  { pattern: '^(a|ab)+$' }, { pattern: '^[^a]*$' }, { pattern: 'c$' },
  { pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, { pattern: '^[\\w.+-]+@[\\w-]+\\.[\\w.]+$' },
  { pattern: '\\bworld\\b' }, { pattern: '^[A-Z][a-z]+(?: [A-Z][a-z]+)*$' },
  { pattern: '^\\p{L}+$' }, { pattern: '^(?!x)' },
  { minimum: 1 }, { maximum: 1 }, { exclusiveMinimum: 1 }, { exclusiveMaximum: 1 },
  { minimum: 0, maximum: 10 }, { multipleOf: 2 }, { multipleOf: 0.5 },
  { multipleOf: 0.1 }, { multipleOf: 3, type: 'integer' },
  { multipleOf: 0.01 }, { multipleOf: 0.05 }, { multipleOf: 0.001 },
  { allOf: [{ type: 'number' }, { minimum: 2 }] },
  { anyOf: [{ type: 'string' }, { type: 'null' }] },
  { oneOf: [{ type: 'number' }, { type: 'integer' }] },
  { oneOf: [{ type: 'string' }, { type: 'integer' }] },
  { not: { type: 'null' } }, { not: {} },
  { if: { properties: { k: { const: 'a' } } }, then: { required: ['x'] }, else: { required: ['y'] } },
  { if: { type: 'string' }, then: { minLength: 2 } },
  { then: false }, { else: false },
  { $ref: '#/definitions/s', definitions: { s: { type: 'string' } } },
  { $schema: D2020, $ref: '#/$defs/s', $defs: { s: { type: 'string' } }, minLength: 2 },
  { properties: { next: { $ref: '#' }, v: { type: 'integer' } }, type: 'object' },
  { $defs: { a: { $ref: '#/$defs/b' }, b: { type: 'array', items: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' },
  { properties: { a: { $ref: '#/properties/b' }, b: { type: 'integer' } } },
  true, false, {},
  { type: 'string', nullable: true }, { 'x-custom': 1, title: 'x', description: 'y' },
  { type: 'object', properties: { city: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1 } }, required: ['city'], additionalProperties: false },
  { $schema: D7, type: 'object', properties: { tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, uniqueItems: true } } },
  { $schema: D2020, type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 } } },
  { anyOf: [{ required: ['a'] }, { required: ['b'] }], not: { required: ['a', 'b'] } },
  // JS numbers are doubles: ajv cannot tell these apart (listed below).
  { maximum: 9007199254740992 },
  // Schemas both must refuse.
  { type: 5 }, { type: [] }, { type: 'str' }, { enum: 3 }, { required: 'a' }, { required: [1] },
  { minLength: -1 }, { maxItems: 1.5 }, { minimum: '1' }, { multipleOf: 0 }, { anyOf: [] },
  { allOf: {} }, { pattern: 1 }, { properties: { a: 3 } }, { items: { items: 'x' } },
  { $ref: '#/definitions/none' }, { uniqueItems: 1 }, { $schema: D7, dependencies: { a: [1] } },
];

// The regex matcher against JS's RegExp with the u flag (what ajv uses):
// each pattern over each subject.
const PATTERNS = [
  'a', '^a', 'a$', '^$', '^.*$', '^.+$', '^[a-z]*$', '^[^a-z]*$', '^\\d{2,4}$',
  '^\\w+\\s\\w+$', '\\S', '^\\D+$', '^\\W', '[\\s\\S]{3}', '^(a|b)*c',
  '(ab|a)(bc|c)', '^(?:x|y)?z+$', 'a{2}', 'a{2,}', '^a{0,2}$', '^a*?$', 'b+?',
  '^[\\u00e0-\\u00ff]+$', '\\u{1F600}', '^.{1}$', '^.{2}$', '\\bb', 'b\\B',
  '^[-a]+$', '^[a-]+$', '^[\\-.]+$', '^\\.+$', '^\\$', '\\n', '^\\t?$',
  '^(?<n>[0-9]+)-\\k<n>$', '^[A-Z]{2}-\\d{3}$', '^(\\d+\\.){3}\\d+$',
  '^https?://[^\\s/$.?#].[^\\s]*$', '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
];
const SUBJECTS = [
  '', 'a', 'aa', 'aaa', 'aaaa', 'b', 'ab', 'abc', 'ba', 'c', 'abbc', 'xz', 'zz',
  'xyz', '12', '123', '12345', 'ab cd', 'ab  cd', 'a\n', '\n', '\t', 'é', 'éà',
  '😀', 'a😀', '😀😀', '-', 'a-', '...', '$', 'AB-123', '1.2.3.4', '1.2.3',
  'https://example.com/x', 'http://', 'a@b.co', 'a@b', '12-12', '12-13', 'A',
  ' ', '\u00a0', '\u2028',
];

// Values one schema is about (beyond the pool).  BIG stands for the
// integer 2^53 + 1, which a JS number cannot hold: written as that integer
// for check, given to ajv as the nearest double.
const BIG = '__int 9007199254740993__';
const EXTRA = new Map([
  [JSON.stringify({ maximum: 9007199254740992 }), [BIG]],
  // Prices and amounts: a quotient's rounding grows with it, and a
  // multiple must not be called wrong (999999.99 / 0.01).
  [JSON.stringify({ multipleOf: 0.01 }), [19.99, 1234567.89, 999999.99, 10000000.01, 45035996.27, 703687441.77, 0.07, 999999.995, 19.991, 0.015]],
  [JSON.stringify({ multipleOf: 0.1 }), [199.9, 12345678.9, 9999999.9, 100000000.1, 450359962.7, 7036874417.7, 0.3, 12345678.95]],
  [JSON.stringify({ multipleOf: 0.05 }), [99.95, 6172839.45, 4999999.95, 50000000.05, 225179981.35, 3518437208.85, 4999999.97]],
  [JSON.stringify({ multipleOf: 0.001 }), [1.999, 123456.789, 99999.999, 1000000.001, 4503599.627, 70368744.177, 99999.9995]],
]);

// A value the schema should accept, as a tool's caller would make it.
function example(s, depth = 0) {
  if (s === true || s === false || s === undefined || depth > 6 || typeof s !== 'object') return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.$ref === '#' || depth > 4) return null;
  const t = Array.isArray(s.type) ? s.type[0] : s.type;
  if (t === 'object' || s.properties || s.required) {
    const o = {};
    for (const [k, v] of Object.entries(s.properties ?? {})) o[k] = example(v, depth + 1);
    for (const k of s.required ?? []) if (!(k in o)) o[k] = 'x';
    return o;
  }
  if (t === 'array' || s.items || s.prefixItems) {
    const pre = s.prefixItems ?? (Array.isArray(s.items) ? s.items : []);
    const a = pre.map((p) => example(p, depth + 1));
    while (a.length < (s.minItems ?? 0)) a.push(example(s.items, depth + 1));
    return a;
  }
  if (t === 'string') return 'x'.repeat(Math.max(1, s.minLength ?? 1));
  if (t === 'integer' || t === 'number') return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
  if (t === 'boolean') return false;
  return null;
}

// Small changes to a value: what a broken peer sends.
function mutations(v, depth = 0) {
  const out = [];
  const repl = [null, 0, 1.5, 'x', '', [], {}, true, -1];
  if (Array.isArray(v)) {
    if (v.length) out.push(v.slice(1), [...v, v[0]]);
    out.push([...v, 'extra']);
    v.forEach((e, i) => {
      for (const m of depth < 2 ? mutations(e, depth + 1) : repl) {
        const c = v.slice();
        c[i] = m;
        out.push(c);
      }
    });
  } else if (v !== null && typeof v === 'object') {
    out.push({ ...v, zz_extra: 1 });
    for (const k of Object.keys(v)) {
      const { [k]: _drop, ...rest } = v;
      out.push(rest);
      for (const m of depth < 2 ? mutations(v[k], depth + 1) : repl) out.push({ ...v, [k]: m });
    }
  } else {
    for (const r of repl) if (r !== v) out.push(r);
    if (typeof v === 'string') out.push(v + v, v.toUpperCase(), v.slice(1));
    if (typeof v === 'number') out.push(v + 1, v - 1, v * 10, v + 0.5, String(v));
  }
  return out;
}

// Ajv as the SDK would run it, with formats as annotations (the default
// of check, and of JSON Schema 2020-12).
function ajvFor(draft2020) {
  const opts = { strict: false, validateFormats: false, allErrors: true };
  return draft2020 ? new Ajv2020(opts) : new Ajv(opts);
}

// The dialect check reads a schema as (no $schema: 2020-12).
function is2020(s) {
  return !(s && typeof s === 'object' && typeof s.$schema === 'string' && /draft-0[467]/.test(s.$schema));
}

// Whether a quotient is within check's multipleOf tolerance of a whole
// number (check/jsvalid.c: JSVALID_MULTIPLE_EPS, JSVALID_MULTIPLE_ULPS).
function nearWhole(q) {
  return Math.abs(q - Math.round(q)) <= Math.max(1e-9, Math.abs(q) * 4 * Number.EPSILON) * 1.01;
}

// Disagreements JSON Schema settles for check, with the reason: each is
// a predicate over a case and the two results.
const KNOWN = [
  {
    why: 'JS numbers are doubles: ajv sees 9007199254740993 as 9007199254740992; check compares the integers exactly',
    when: (c) => JSON.stringify(c.schema).includes('9007199254740992'),
  },
  {
    why: 'a pattern check cannot match exactly (a lookahead, \\p{...}) is left out with a note, never a false error',
    when: (c, r) => r.notes.length > 0 && r.valid,
  },
  {
    why: 'multipleOf with a fraction: 0.3 / 0.1 is 2.9999999999999996 in binary; check allows the rounding (1e-9, or 4 units in the last place of a larger quotient), ajv none; never the other way',
    when: (c, r) => r.valid && typeof c.schema === 'object' && c.schema !== null && typeof c.schema.multipleOf === 'number' &&
      !Number.isInteger(c.schema.multipleOf) && typeof c.instance === 'number' && nearWhole(c.instance / c.schema.multipleOf),
  },
  {
    why: 'multipleOf on a number past 2^53 (1e300): ajv tests parseInt(1e300 / 2), which reads "5e+299" as 5; a double that large has no fraction, and check counts it a multiple',
    when: (c) => typeof c.schema === 'object' && c.schema !== null && 'multipleOf' in c.schema && typeof c.instance === 'number' && Math.abs(c.instance) > 2 ** 53,
  },
  {
    why: '"nullable" is OpenAPI\'s, not JSON Schema\'s: ajv lets it admit null, check ignores it as an unknown keyword',
    when: (c) => typeof c.schema === 'object' && c.schema !== null && c.schema.nullable === true && c.instance === null,
  },
];

async function everythingSchemas() {
  const { command, args } = serverEverythingCommand();
  const client = new Client({ name: 'mcpreel-e2e-jsonschema', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    const out = [];
    for (const t of tools) {
      out.push({ name: `${t.name} inputSchema`, schema: t.inputSchema });
      if (t.outputSchema) out.push({ name: `${t.name} outputSchema`, schema: t.outputSchema });
    }
    return out;
  } finally {
    await client.close();
  }
}

test('JSON Schema: check agrees with ajv (draft-07 and 2020-12) on every case but the listed ones', { timeout: 300000 }, async () => {
  assert.ok(existsSync(CHECKER), `${CHECKER} is missing: build the jschema_check target`);
  const tools = await everythingSchemas();
  assert.ok(tools.length >= 10, `server-everything lists ${tools.length} tool schemas`);

  const named = [
    ...SCHEMAS.map((schema, i) => ({ name: `corpus ${i}`, schema })),
    ...tools,
  ];
  const cases = [];
  for (const pattern of PATTERNS) {
    for (const v of SUBJECTS) cases.push({ name: `pattern ${pattern}`, schema: { pattern }, instance: v });
  }
  for (const { name, schema } of named) {
    const ex = example(schema);
    const values = [...POOL, ex, ...mutations(ex), ...(EXTRA.get(JSON.stringify(schema)) ?? [])];
    const seen = new Set();
    for (const v of values) {
      const key = JSON.stringify(v);
      if (key === undefined || seen.has(key)) continue;
      seen.add(key);
      cases.push({ name, schema, instance: v });
    }
  }
  assert.ok(cases.length >= 5000, `${cases.length} cases`);

  const t = tempDir();
  let out;
  try {
    const file = join(t.dir, 'cases.jsonl');
    writeFileSync(file, cases.map((c) => JSON.stringify({ schema: c.schema, instance: c.instance })
      .replace(`"${BIG}"`, '9007199254740993')).join('\n') + '\n');
    const r = spawnSync(CHECKER, [file], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(r.status, 0, `jschema_check: ${r.stderr}`);
    out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  } finally {
    t.cleanup();
  }
  assert.equal(out.length, cases.length);

  const validators = new Map();
  const known = new Map(KNOWN.map((k) => [k.why, 0]));
  const refused = [];
  const bothRefused = new Set();
  const disagree = [];
  let agreed = 0, valid = 0;
  cases.forEach((c, i) => {
    const r = out[i];
    const key = JSON.stringify(c.schema);
    if (!validators.has(key)) {
      try {
        validators.set(key, ajvFor(is2020(c.schema)).compile(c.schema));
      } catch (e) {
        validators.set(key, e);
      }
    }
    const v = validators.get(key);
    if (v instanceof Error || r.unusable) {
      // Both must refuse a schema, or neither.
      if (v instanceof Error && r.unusable) bothRefused.add(key);
      else refused.push(`${c.name}: ajv ${v instanceof Error ? v.message : 'compiles'}, check ${r.unusable ?? 'compiles'}`);
      return;
    }
    const ajvValid = v(c.instance === BIG ? 9007199254740993 : c.instance);
    if (ajvValid === r.valid) {
      agreed++;
      valid += ajvValid;
      return;
    }
    const k = KNOWN.find((x) => x.when(c, r));
    if (k) {
      known.set(k.why, known.get(k.why) + 1);
      return;
    }
    disagree.push(`${c.name} ${key} on ${JSON.stringify(c.instance)}: ajv ${ajvValid}, check ${r.valid} ${JSON.stringify(r.errors)}`);
  });
  console.log(`jsonschema differential: ${cases.length} cases over ${named.length + PATTERNS.length} schemas ` +
    `(${tools.length} from server-everything): ${agreed} agree (${valid} valid, ${agreed - valid} invalid), ` +
    `${disagree.length} disagree, ${refused.length} refused by one side only, ${bothRefused.size} schemas refused by both`);
  for (const [why, n] of known) console.log(`  known disagreement x${n}: ${why}`);
  assert.deepEqual(refused, [], 'a schema one side refuses and the other uses');
  assert.equal(bothRefused.size, 18, 'the bad schemas are refused by both');
  assert.deepEqual(disagree.slice(0, 20), [], `${disagree.length} unlisted disagreements`);
  // The listed ones occur: each stays true of the code.
  for (const [why, n] of known) assert.ok(n > 0, `listed but never seen: ${why}`);
});

// Peak RSS of jschema_check over the hostile cases: mostly the values'
// JSON (a 1 MiB string, 100 001 items) as jansson holds them; under ASan
// its shadow memory and quarantine add the rest.  Measured 9.8 MiB plain
// and 167 MiB under ASan.
const HOSTILE_RSS_PLAIN_MIB = 64;
const HOSTILE_RSS_ASAN_MIB = 384;
// The hostile schemas: mostly their JSON (20 000 patterns, 20 000
// members), the nodes, and the matchers within the schema's budget
// (JSCHEMA_MAX_RE_SIZE, some 20 MiB).  Measured 46 MiB plain.
const HOSTILE_SCHEMAS_RSS_PLAIN_MIB = 128;

// depth objects nested through members named key (within "properties"
// for a schema), leaf innermost.
function deepKeys(depth, key, leaf, schema) {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = schema ? { properties: { [key]: v } } : { [key]: v };
  return v;
}

// One hostile case's line from jschema_check against what it wants.
function checkHostile(h, r, name) {
  if (h.valid) {
    assert.deepEqual(r.errors, [], `${name}`);
    assert.deepEqual(r.notes, [], `${name}`);
    return;
  }
  if (h.want === null) {
    assert.equal(r.valid, true, `${name}`);
    assert.match(r.notes[0], h.note, `${name}`);
    return;
  }
  assert.equal(r.valid, false, `${name}`);
  const errs = r.errors;
  if (h.errors) {
    assert.equal(errs.length, h.errors, `${name}: ${errs.length} errors said`);
    assert.match(errs[100].text, /^and \d+ more errors/, `${name}`);
    assert.match(errs[101].text, /too costly/, `${name}`);
    assert.ok(r.count > 100000, `${name}: count ${r.count}`);
  } else
    assert.equal(errs.length, 1, `${name}: ${JSON.stringify(errs).slice(0, 300)}`);
  assert.match(errs[0].text, h.want, `${name}`);
  if (h.spathMax) {
    assert.ok(errs[0].schema.length <= h.spathMax, `${name}: a schema path of ${errs[0].schema.length} bytes`);
    assert.ok(errs[0].path.length <= h.spathMax, `${name}: a value path of ${errs[0].path.length} bytes`);
  }
}

// Run a jschema_check over the hostile cases: its lines and peak RSS.
function runHostile(checker, file) {
  const r = spawnSync(checker, ['-m', file], { encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(r.status, 0, `${checker}: ${r.stderr}`);
  const kib = Number(/peak_rss_kib (\d+)/.exec(r.stderr)?.[1]);
  assert.ok(kib > 0, `no peak RSS in ${r.stderr}`);
  return { out: r.stdout.trim().split('\n').map((l) => JSON.parse(l)), mib: kib / 1024 };
}

test('JSON Schema: hostile schemas and values stop at the bounds, with one error saying why, in bounded memory', { timeout: 300000 }, () => {
  assert.ok(existsSync(CHECKER), `${CHECKER} is missing: build the jschema_check target`);
  const defs = {};
  for (let i = 0; i < 40; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  defs.d40 = { type: 'string' };
  let deep = 0;
  for (let i = 0; i < 2000; i++) deep = [deep];
  const hostile = [
    // 2^40 paths through anyOf by $ref: the step budget.
    { schema: { $ref: '#/$defs/d0', $defs: defs }, instance: 1, want: /too costly/ },
    // A $ref loop that never goes into the value: the depth bound.
    { schema: { anyOf: [{ $ref: '#' }] }, instance: 1, want: /nests deeper than 512/ },
    // A value nested deeper than the bound.
    { schema: { items: { $ref: '#' } }, instance: deep, want: /nests deeper than 512/ },
    // A pattern with many ways to match, over 1 MiB: the step budget.
    { schema: { pattern: '(a|aa|aaa|aaaa)*(a{40}b|c)$' }, instance: 'a'.repeat(1 << 20), want: /too costly/ },
    // A plain pattern over 1 MiB of base64 is not too costly.
    { schema: { pattern: '^[A-Za-z0-9+/]*={0,2}$' }, instance: 'QUJD'.repeat(1 << 18), want: null, valid: true },
    // uniqueItems over 100 001 items, the last a repeat: hashed, so found.
    { schema: { uniqueItems: true }, instance: [...Array(100000).keys(), 99999], want: /items 99999 and 100000 are equal/ },
    // A count expanded past the matcher's size: left out with a note.
    { schema: { pattern: '((a{30}){30}){30}' }, instance: 'b', want: null, note: /too large once its counts are expanded/ },
  ];
  // Hostile schemas (from an untrusted server), run apart from the
  // values above so that each run's peak RSS is its own.
  const schemas = [
    // Patterns too long to compile by recursion: left out with a note.
    { schema: { pattern: 'a'.repeat(200000) }, instance: 'b', want: null, note: /too large/ },
    { schema: { pattern: 'a|'.repeat(100000) + 'b' }, instance: 'c', want: null, note: /too large/ },
    // Counted repeats of nothing: nothing, compiled at once.
    { schema: { pattern: '^(?:(?:(?:(?:){1000}){1000}){1000}){1000}x$' }, instance: 'x', want: null, valid: true },
    // 20 000 patterns of 4 000 instructions each: the schema's budget.
    { schema: { properties: Object.fromEntries([...Array(20000).keys()].map((i) => [`p${i}`, { pattern: '(?:a{1000}){4}' }])) }, instance: {}, want: null, note: /matcher space/ },
    // 20 000 patterns over 20 000 short names: each match is a step.
    { schema: { patternProperties: Object.fromEntries([...Array(20000).keys()].map((i) => [`^q${i}$`, true])) },
      instance: Object.fromEntries([...Array(20000).keys()].map((i) => [`k${i}`, 0])), want: /too costly/ },
    // 3 000 lookups of 3 000 properties: each name looked up is a step.
    { schema: { $defs: { p: { properties: Object.fromEntries([...Array(3000).keys()].map((i) => [`p${i}`, true])) } },
      allOf: [...Array(3000).keys()].map(() => ({ $ref: '#/$defs/p' })) }, instance: {}, want: /too costly/ },
    // 500 nested properties keyed by 4 000 '~': each node's path is cut.
    { schema: deepKeys(500, '~'.repeat(4000), { type: 'string' }, true), instance: deepKeys(500, '~'.repeat(4000), {}, false), want: /expected a string/, spathMax: 600 },
    // 2 000 items each missing 2 000 required names: 100 errors said, the
    // rest counted, stopped by the step budget.
    { schema: { items: { required: [...Array(2000).keys()].map((i) => `r${i}`) } }, instance: Array(2000).fill({}), want: /missing required/, errors: 102 },
  ];
  const t = tempDir();
  try {
    for (const [what, list, plainMax] of [['values', hostile, HOSTILE_RSS_PLAIN_MIB], ['schemas', schemas, HOSTILE_SCHEMAS_RSS_PLAIN_MIB]]) {
      const file = join(t.dir, `hostile-${what}.jsonl`);
      writeFileSync(file, list.map((h) => JSON.stringify({ schema: h.schema, instance: h.instance })).join('\n') + '\n');
      const { out, mib } = runHostile(CHECKER, file);
      list.forEach((h, i) => checkHostile(h, out[i], `${what} case ${i}`));
      console.log(`jsonschema hostile ${what}: peak RSS ${mib.toFixed(1)} MiB (ASan build)`);
      assert.ok(mib < HOSTILE_RSS_ASAN_MIB, `${what}: peak RSS ${mib.toFixed(1)} MiB over ${HOSTILE_RSS_ASAN_MIB} MiB (ASan)`);
      if (PLAIN_CHECKER !== null) {
        assert.ok(existsSync(PLAIN_CHECKER), `${PLAIN_CHECKER} is missing: build the jschema_check target`);
        const plain = runHostile(PLAIN_CHECKER, file);
        assert.deepEqual(plain.out.map((o) => o.errors), out.map((o) => o.errors), 'the same errors plain and under ASan');
        console.log(`jsonschema hostile ${what}: peak RSS ${plain.mib.toFixed(1)} MiB (plain build)`);
        assert.ok(plain.mib < plainMax, `${what}: peak RSS ${plain.mib.toFixed(1)} MiB over ${plainMax} MiB (plain)`);
      }
    }
  } finally {
    t.cleanup();
  }
});

// Formats as assertions (jschema_check -f) against ajv-formats ("full"
// mode), on values at the edges of each format.
const FORMATS = {
  'date-time': ['2024-02-29T10:00:00Z', '2025-02-29T10:00:00Z', '2024-01-01t10:00:00z', '2024-01-01 10:00:00Z',
    '2024-01-01T10:00:00+01:00', '2024-01-01T10:00:00+0100', '2024-01-01T10:00:00', '2024-01-01T24:00:00Z',
    '2024-01-01T23:59:60Z', '2024-01-01T10:00:00.123456Z', '2024-13-01T10:00:00Z', '2024-1-01T10:00:00Z', 'x', '',
    '2024-01-01T10:00Z', '2024-01-01T10:00:00.Z', '2024-12-31T23:59:60-23:59', '2024-06-30T22:59:60-01:00',
    '2024-06-30T23:59:60+01:00', '1998-12-31T15:59:60.123-08:00', '1998-12-31T22:59:60Z'],
  date: ['2024-02-29', '2023-02-29', '2024-04-31', '2024-4-1', '20240101', '2024-00-10', '2024-12-31', '0000-01-01', 'x'],
  time: ['10:00:00Z', '10:00:00', '10:00:00+01:00', '23:59:60Z', '24:00:00Z', '10:00:00.5z', '10:00Z', '1:00:00Z',
    '10:60:00Z', '23:59:60+01:00', '00:59:60+01:00'],
  email: ['a@b.co', 'a.b@example.com', 'a..b@example.com', '.a@b.co', 'a@b', 'a@-b.com', 'a@b-.com', 'a b@c.com',
    'a@b..com', '@b.com', 'a@', 'a+tag@example.org', "o'hara@x.ie", 'a@xn--e1afmkfd.xn--p1ai'],
  uri: ['https://example.com', 'http://a/b?c#d', 'urn:isbn:0451450523', 'mailto:a@b.co', '/relative', 'x',
    'http://exa mple.com', 'http://a/%zz', 'http://a/%20', 'a:b', '1a:b', 'http://[::1]:80/', 'file:///tmp/x'],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000',
    '123e4567e89b12d3a456426614174000', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
    '123e4567-e89b-12d3-a456-42661417400g', '00000000-0000-0000-0000-000000000000'],
  ipv4: ['192.168.0.1', '256.0.0.1', '1.2.3', '01.2.3.4', '1.2.3.4.5', '0.0.0.0', ' 1.2.3.4', '1.2.3.04'],
  ipv6: ['::1', '::', '1::2::3', '2001:db8::1', '::ffff:1.2.3.4', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', 'g::1', '12345::1'],
};

// Where check reads the RFC more strictly or more loosely than ajv-formats.
const FORMAT_KNOWN = [
  { format: 'date-time', value: '2024-01-01T10:00:00+0100', why: 'RFC 3339\'s time-numoffset is "+" time-hour ":" time-minute: no colon, no date-time' },
  { format: 'email', value: 'a@b', why: 'RFC 5321 allows a domain of one label; ajv-formats wants a dot, check never gives a false error' },
];

test('JSON Schema: formats as assertions agree with ajv-formats but for the listed readings of the RFCs', { timeout: 120000 }, () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const cases = [];
  for (const [format, values] of Object.entries(FORMATS)) for (const v of values) cases.push({ schema: { format }, instance: v });
  const t = tempDir();
  let out;
  try {
    const file = join(t.dir, 'formats.jsonl');
    writeFileSync(file, cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
    const r = spawnSync(CHECKER, ['-f', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, `jschema_check: ${r.stderr}`);
    out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  } finally {
    t.cleanup();
  }
  const disagree = [];
  let known = 0;
  cases.forEach((c, i) => {
    if (ajv.compile(c.schema)(c.instance) === out[i].valid) return;
    if (FORMAT_KNOWN.some((k) => k.format === c.schema.format && k.value === c.instance)) {
      known++;
      return;
    }
    disagree.push(`${c.schema.format} ${JSON.stringify(c.instance)}: check ${out[i].valid}`);
  });
  console.log(`jsonschema formats: ${cases.length} cases, ${cases.length - known - disagree.length} agree, ${known} listed`);
  assert.deepEqual(disagree, []);
  assert.equal(known, FORMAT_KNOWN.length, 'each listed disagreement occurs');
});

// Random schemas from a seeded generator (every supported keyword, nested
// three deep, $ref "#" loops included), each over random values: the
// combinations no hand-written corpus thinks of.  A case where ajv itself
// throws (its stack overflows on a $ref loop that never goes into the
// value; check stops at its depth bound) has no answer to compare.
function randomCases(seed0, nschemas, perSchema) {
  let seed = seed0;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (n) => Math.floor(rnd() * n);
  const NAMES = ['a', 'b', 'c', 'x-1'];
  const PATS = ['^a', 'b$', '^[a-c]+$', '\\d', '^.{2}$', '(ab)+', '^x-'];
  const KEYS = ['type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'patternProperties',
    'propertyNames', 'minProperties', 'maxProperties', 'items', 'prefixItems', 'contains', 'minContains',
    'maxContains', 'minItems', 'maxItems', 'uniqueItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum',
    'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'allOf', 'anyOf', 'oneOf', 'not', 'if',
    'dependentRequired', 'dependentSchemas', 'dependencies', 'additionalItems', '$ref'];
  function schema(d, d2020) {
    if (d > 3 || rnd() < 0.1) return pick([true, false, {}]);
    const s = {};
    const sub = () => schema(d + 1, d2020);
    for (let n = 1 + int(3); n > 0; n--) {
      const k = pick(KEYS);
      switch (k) {
        case 'type': s.type = rnd() < 0.3 ? [pick(['string', 'null']), pick(['integer', 'object', 'array'])] : pick(['string', 'integer', 'number', 'object', 'array', 'boolean', 'null']); break;
        case 'enum': s.enum = [pick([1, 'a', null]), pick([[1], { a: 1 }, 2.5, true])]; break;
        case 'const': s.const = pick([1, 'a', null, [1, 'a'], { a: 1 }]); break;
        case 'properties': s.properties = { [pick(NAMES)]: sub(), [pick(NAMES)]: sub() }; break;
        case 'required': s.required = [pick(NAMES)]; break;
        case 'patternProperties': s.patternProperties = { [pick(PATS)]: sub() }; break;
        case 'items': s.items = !d2020 && rnd() < 0.4 ? [sub(), sub()] : sub(); break;
        case 'prefixItems': if (d2020) s.prefixItems = [sub()]; break;
        case 'additionalProperties': case 'propertyNames': case 'additionalItems': case 'contains': case 'not': s[k] = sub(); break;
        case 'uniqueItems': s.uniqueItems = rnd() < 0.7; break;
        case 'pattern': s.pattern = pick(PATS); break;
        case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'exclusiveMaximum': s[k] = pick([0, 1, 2.5, -1]); break;
        case 'multipleOf': s.multipleOf = pick([1, 2, 3]); break;
        case 'allOf': case 'anyOf': case 'oneOf': s[k] = [sub(), sub()]; break;
        case 'if': s.if = sub(); s.then = sub(); if (rnd() < 0.5) s.else = sub(); break;
        case 'dependentRequired': s.dependentRequired = { [pick(NAMES)]: [pick(NAMES)] }; break;
        case 'dependentSchemas': s.dependentSchemas = { [pick(NAMES)]: sub() }; break;
        case 'dependencies': s.dependencies = { [pick(NAMES)]: rnd() < 0.5 ? [pick(NAMES)] : sub() }; break;
        case '$ref': if (d > 0) s.$ref = '#'; break;
        default: s[k] = int(3); break;	// the counts
      }
    }
    return s;
  }
  function value(d) {
    const r = rnd();
    if (d > 2 || r < 0.45) return pick([null, true, false, 0, 1, 2, 3, -1, 1.5, 2.5, 6, '', 'a', 'ab', 'abc', 'x-1', 'é', 'aa', '12', 'ba']);
    if (r < 0.7) { const a = []; for (let i = int(4); i > 0; i--) a.push(value(d + 1)); return a; }
    const o = {};
    for (let i = int(4); i > 0; i--) o[pick(NAMES)] = value(d + 1);
    return o;
  }
  const cases = [];
  for (let i = 0; i < nschemas; i++) {
    const d2020 = rnd() < 0.5;
    const s = schema(0, d2020);
    if (typeof s === 'object') s.$schema = d2020 ? D2020 : D7;
    for (let j = 0; j < perSchema; j++) cases.push({ schema: s, instance: value(0), d2020 });
  }
  return cases;
}

test('JSON Schema: random schemas (seeded) over random values agree with ajv', { timeout: 300000 }, () => {
  const cases = [...randomCases(1, 1500, 8), ...randomCases(2, 1500, 8)];
  const t = tempDir();
  let out;
  try {
    const file = join(t.dir, 'random.jsonl');
    writeFileSync(file, cases.map((c) => JSON.stringify({ schema: c.schema, instance: c.instance })).join('\n') + '\n');
    const r = spawnSync(CHECKER, [file], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(r.status, 0, `jschema_check: ${r.stderr}`);
    out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  } finally {
    t.cleanup();
  }
  const ajv = { 7: ajvFor(false), 2020: ajvFor(true) };
  const compiled = new Map();
  const disagree = [];
  let agreed = 0, ajvThrew = 0;
  cases.forEach((c, i) => {
    if (!compiled.has(c.schema)) compiled.set(c.schema, ajv[c.d2020 ? 2020 : 7].compile(c.schema));
    assert.equal(out[i].unusable, undefined, `check refuses ${JSON.stringify(c.schema)}`);
    let a;
    try {
      a = compiled.get(c.schema)(c.instance);
    } catch {
      ajvThrew++;
      return;
    }
    if (a === out[i].valid) agreed++;
    else disagree.push(`${JSON.stringify(c.schema)} on ${JSON.stringify(c.instance)}: ajv ${a}, check ${out[i].valid} ${JSON.stringify(out[i].errors)}`);
  });
  console.log(`jsonschema random: ${cases.length} cases, ${agreed} agree, ${disagree.length} disagree, ${ajvThrew} where ajv throws (its stack, on a $ref loop)`);
  assert.deepEqual(disagree.slice(0, 10), [], `${disagree.length} disagreements`);
  assert.ok(agreed > 20000);
});
