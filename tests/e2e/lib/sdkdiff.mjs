// The official TypeScript SDK's own schemas (its types.js, zod) as an
// independent judge of MCP messages, for the differential test of the
// protocol module (protocol_sdk_diff.test.mjs): which schema a request,
// notification or result of a given method must satisfy, and mutations
// of real messages (a member removed, a type changed, an enum value
// changed) to judge.
import * as T from '@modelcontextprotocol/sdk/types.js';

/** The SDK schema for a request or notification of method. */
export const CALL_SCHEMAS = {
  'initialize': T.InitializeRequestSchema,
  'notifications/initialized': T.InitializedNotificationSchema,
  'ping': T.PingRequestSchema,
  'notifications/cancelled': T.CancelledNotificationSchema,
  'notifications/progress': T.ProgressNotificationSchema,
  'resources/list': T.ListResourcesRequestSchema,
  'resources/templates/list': T.ListResourceTemplatesRequestSchema,
  'resources/read': T.ReadResourceRequestSchema,
  'resources/subscribe': T.SubscribeRequestSchema,
  'resources/unsubscribe': T.UnsubscribeRequestSchema,
  'notifications/resources/list_changed': T.ResourceListChangedNotificationSchema,
  'notifications/resources/updated': T.ResourceUpdatedNotificationSchema,
  'prompts/list': T.ListPromptsRequestSchema,
  'prompts/get': T.GetPromptRequestSchema,
  'notifications/prompts/list_changed': T.PromptListChangedNotificationSchema,
  'tools/list': T.ListToolsRequestSchema,
  'tools/call': T.CallToolRequestSchema,
  'notifications/tools/list_changed': T.ToolListChangedNotificationSchema,
  'logging/setLevel': T.SetLevelRequestSchema,
  'notifications/message': T.LoggingMessageNotificationSchema,
  'completion/complete': T.CompleteRequestSchema,
  'sampling/createMessage': T.CreateMessageRequestSchema,
  'roots/list': T.ListRootsRequestSchema,
  'notifications/roots/list_changed': T.RootsListChangedNotificationSchema,
  'elicitation/create': T.ElicitRequestSchema,
};

/** The SDK schemas a result of method may satisfy (any of them). */
export const RESULT_SCHEMAS = {
  'initialize': [T.InitializeResultSchema],
  'ping': [T.EmptyResultSchema],
  'resources/list': [T.ListResourcesResultSchema],
  'resources/templates/list': [T.ListResourceTemplatesResultSchema],
  'resources/read': [T.ReadResourceResultSchema],
  'resources/subscribe': [T.EmptyResultSchema],
  'resources/unsubscribe': [T.EmptyResultSchema],
  'prompts/list': [T.ListPromptsResultSchema],
  'prompts/get': [T.GetPromptResultSchema],
  'tools/list': [T.ListToolsResultSchema],
  'tools/call': [T.CallToolResultSchema, T.CreateTaskResultSchema],
  'logging/setLevel': [T.EmptyResultSchema],
  'completion/complete': [T.CompleteResultSchema],
  'sampling/createMessage': [T.CreateMessageResultSchema, T.CreateMessageResultWithToolsSchema, T.CreateTaskResultSchema],
  'roots/list': [T.ListRootsResultSchema],
  'elicitation/create': [T.ElicitResultSchema, T.CreateTaskResultSchema],
};

/** The SDK's envelope schema for msg: a request, a notification, a result or an error response. */
function envelopeSchema(msg) {
  /* By what the method is, not by whether the message has an id: a
     tools/call without one is no notification. */
  if ('method' in msg) return String(msg.method).startsWith('notifications/') ? T.JSONRPCNotificationSchema : T.JSONRPCRequestSchema;
  return 'error' in msg ? T.JSONRPCErrorResponseSchema : T.JSONRPCResultResponseSchema;
}

/**
 * Whether the SDK takes msg (a request, notification or result of method):
 * its JSON-RPC envelope and the schema of its method; undefined when it
 * has no schema for it.
 */
export function sdkAccepts(msg, method) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return undefined;
  let body;
  if ('method' in msg) {
    const s = CALL_SCHEMAS[msg.method];
    if (!s) return undefined;
    body = s.safeParse(msg).success;
  } else if ('error' in msg) {
    body = true;
  } else {
    const list = RESULT_SCHEMAS[method];
    if (!list || !('result' in msg)) return undefined;
    body = list.some((s) => s.safeParse(msg.result).success);
  }
  return body && envelopeSchema(msg).safeParse(msg).success;
}

/*
 * Mutations of msg's JSON-RPC envelope: its id of another type or a
 * fraction, or gone; "jsonrpc" another version or gone; an unknown
 * member beside them.
 */
export function* envelopeMutations(msg) {
  const changes = [
    ['jsonrpc', '1.0'], ['jsonrpc', undefined], ['jsonrpc', 2],
    ...('id' in msg ? [['id', 1.5], ['id', null], ['id', { n: 1 }], ['id', [1]], ['id', true], ['id', undefined], ['id', 'x']] : [['id', 99]]),
    ['zz-unknown-member', 1],
  ];
  for (const [key, value] of changes) {
    const copy = structuredClone(msg);
    if (value === undefined) delete copy[key];
    else copy[key] = value;
    yield { kind: 'envelope', at: `${key}=${JSON.stringify(value) ?? 'removed'}`, msg: copy };
  }
}

/*
 * The revisions before 2025-11-25 the SDK also claims, and the results
 * that read the same there as in 2025-11-25 (the closure of the result
 * type in each schema.ts, compared by scripts/schema_same.mjs): only these
 * are judged under those revisions.  Every request and notification type
 * differs (the base RequestParams and NotificationParams gained members),
 * and so do error responses (id optional in 2025-11-25).
 */
export const SAME_AS_LATEST = {
  '2025-06-18': ['ping', 'resources/read', 'resources/subscribe', 'resources/unsubscribe', 'logging/setLevel', 'completion/complete', 'roots/list'],
  '2025-03-26': ['ping', 'resources/subscribe', 'resources/unsubscribe', 'logging/setLevel', 'completion/complete'],
  '2024-11-05': ['ping', 'resources/subscribe', 'resources/unsubscribe', 'logging/setLevel', 'completion/complete'],
};

/** A small seeded generator (mulberry32): the same corpus every run. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/*
 * Values of the protocol's enums and discriminating consts, in families:
 * an "enum" mutation swaps one for another of its family (a text content
 * block that says it is an image), which the schemas must tell apart.
 */
const ENUM_FAMILIES = [
  ['text', 'image', 'audio', 'resource', 'resource_link', 'tool_use', 'tool_result'],
  ['user', 'assistant'],
  ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'],
  ['accept', 'decline', 'cancel'],
  ['form', 'url'],
  ['ref/prompt', 'ref/resource'],
  ['object', 'string', 'number', 'integer', 'boolean', 'array'],
  ['working', 'input_required', 'completed', 'failed', 'cancelled'],
];

/** Every value under obj (objects' members, the first PLACES_ITEMS items of arrays), as key paths, depth first. */
/* Items of an array mutated: the rest are mostly alike (a list's tools, a
   result's content blocks). */
const PLACES_ITEMS = 5;

function places(obj, out = [], keys = []) {
  if (keys.length > 8 || obj === null || typeof obj !== 'object') return out;
  for (const k of Array.isArray(obj) ? [...obj.keys()].slice(0, PLACES_ITEMS) : Object.keys(obj)) {
    out.push([...keys, k]);
    places(obj[k], out, [...keys, k]);
  }
  return out;
}

/** A key path written as a JSONPath tail: ".tools[0].name". */
function pathText(keys) {
  return keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
}

/** The JSON type of v, as the retype mutations name it. */
function typeOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** A value of type t other than v, chosen by rnd. */
function valueOf(t, rnd) {
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  switch (t) {
    case 'string': return pick(['x', '', 'zz-not-a-known-value', '1']);
    case 'number': return pick([0, 1, 12345, -7]);
    case 'boolean': return pick([true, false]);
    case 'object': return pick([{}, { zz: 1 }]);
    case 'array': return pick([[], ['x'], [{}]]);
    default: return null;
  }
}

/*
 * What each kind of mutation does to a value; undefined: not for this
 * value.  "to-T" puts a value of JSON type T where one of another type was
 * (string, number, boolean, object, array, null: every retyping).
 */
const CHANGES = {
  remove: () => undefined,
  ...Object.fromEntries(['string', 'number', 'boolean', 'object', 'array', 'null'].map((t) =>
    [`to-${t}`, (v, rnd) => (typeOf(v) === t ? undefined : valueOf(t, rnd))])),
  restring: (v) => (typeof v === 'string' ? 'zz-not-a-known-value' : undefined),
  enum: (v, rnd) => {
    const family = ENUM_FAMILIES.find((f) => f.includes(v));
    if (!family) return undefined;
    const others = family.filter((x) => x !== v);
    return others[Math.floor(rnd() * others.length)];
  },
  fraction: (v) => (Number.isInteger(v) ? v + 0.5 : undefined),
  negative: (v) => (Number.isInteger(v) && v >= 0 ? -1 - v : undefined),
  /* Objects are open in every revision: an unknown member changes nothing. */
  extra: (v) => (typeOf(v) === 'object' ? { ...v, 'zz-unknown-member': 1 } : undefined),
};

/**
 * Mutations of msg inside its params or result, each kind of CHANGES at
 * each place (a member removed, a value of each other JSON type, a string
 * or enum value changed, an integer made 1.5 or negative, an unknown
 * member added); the values chosen seeded by seed, so the corpus is the
 * same every run.
 */
export function* mutations(msg, seed = 1) {
  const rnd = seeded(seed);
  const body = 'params' in msg ? 'params' : 'result' in msg ? 'result' : null;
  if (!body) return;
  for (const keys of places(msg[body])) {
    for (const [kind, change] of Object.entries(CHANGES)) {
      const copy = structuredClone(msg);
      const parent = keys.slice(0, -1).reduce((o, k) => o[k], copy[body]);
      const key = keys[keys.length - 1];
      if (kind === 'remove') {
        if (Array.isArray(parent)) continue;
        delete parent[key];
      } else {
        const w = change(parent[key], rnd);
        if (w === undefined) continue;
        parent[key] = w;
      }
      yield { kind, at: `${body}${pathText(keys)}`, msg: copy };
    }
  }
}
