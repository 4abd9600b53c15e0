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

/** Whether the SDK takes msg (a request, notification or result of method); undefined when it has no schema for it. */
export function sdkAccepts(msg, method) {
  if ('method' in msg) {
    const s = CALL_SCHEMAS[msg.method];
    return s ? s.safeParse(msg).success : undefined;
  }
  if ('error' in msg) return T.JSONRPCErrorResponseSchema.safeParse(msg).success;
  const list = RESULT_SCHEMAS[method];
  if (!list || !('result' in msg)) return undefined;
  return list.some((s) => s.safeParse(msg.result).success);
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

/** Every value under obj (objects' members, the first items of arrays), as [parent, key] pairs, depth first. */
function places(obj, out = [], depth = 0) {
  if (depth > 8 || obj === null || typeof obj !== 'object') return out;
  const keys = Array.isArray(obj) ? [...obj.keys()].slice(0, 3) : Object.keys(obj);
  for (const k of keys) {
    out.push([obj, k]);
    places(obj[k], out, depth + 1);
  }
  return out;
}

/** What each kind of mutation does to a value; undefined: not for this value. */
const CHANGES = {
  remove: () => undefined,
  retype: (v, rnd) => {
    const others = ['a string', 12345, { zz: 1 }, ['x'], true].filter((x) => typeof x !== typeof v || Array.isArray(x) !== Array.isArray(v));
    return others[Math.floor(rnd() * others.length)];
  },
  null: (v) => (v === null ? undefined : null),
  array: (v) => (Array.isArray(v) ? undefined : []),
  object: (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? undefined : {}),
  restring: (v) => (typeof v === 'string' ? 'zz-not-a-known-value' : undefined),
  enum: (v, rnd) => {
    const family = ENUM_FAMILIES.find((f) => f.includes(v));
    if (!family) return undefined;
    const others = family.filter((x) => x !== v);
    return others[Math.floor(rnd() * others.length)];
  },
  fraction: (v) => (Number.isInteger(v) ? v + 0.5 : undefined),
  negative: (v) => (Number.isInteger(v) && v >= 0 ? -1 - v : undefined),
};

/**
 * Mutations of msg inside its params or result, each kind of CHANGES at
 * each place (a member removed, a value of another type, null, an empty
 * array or object, a string or enum value changed, an integer made 1.5 or
 * negative); the choices seeded by seed, so the corpus is the same every
 * run.
 */
export function* mutations(msg, seed = 1) {
  const rnd = seeded(seed);
  const body = 'params' in msg ? 'params' : 'result' in msg ? 'result' : null;
  if (!body) return;
  const n = places(msg[body]).length;
  for (let i = 0; i < n; i++) {
    for (const [kind, change] of Object.entries(CHANGES)) {
      const copy = structuredClone(msg);
      const [parent, key] = places(copy[body])[i];
      if (kind === 'remove') {
        if (Array.isArray(parent)) continue;
        delete parent[key];
      } else {
        const w = change(parent[key], rnd);
        if (w === undefined) continue;
        parent[key] = w;
      }
      yield { kind, at: `${body}.${key}`, msg: copy };
    }
  }
}
