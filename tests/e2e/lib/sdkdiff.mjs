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

/** Mutations of msg inside its params or result: a member removed, a type changed, null, an array, a string changed. */
export function* mutations(msg) {
  const body = 'params' in msg ? 'params' : 'result' in msg ? 'result' : null;
  if (!body) return;
  const n = places(msg[body]).length;
  for (let i = 0; i < n; i++) {
    for (const kind of ['remove', 'retype', 'null', 'array', 'restring']) {
      const copy = structuredClone(msg);
      const [parent, key] = places(copy[body])[i];
      const v = parent[key];
      if (kind === 'remove') {
        if (Array.isArray(parent)) continue;
        delete parent[key];
      } else if (kind === 'null') {
        if (v === null) continue;
        parent[key] = null;
      } else if (kind === 'array') {
        if (Array.isArray(v)) continue;
        parent[key] = [];
      } else if (kind === 'retype') {
        parent[key] = typeof v === 'string' ? 12345 : typeof v === 'number' ? 'x' : v === null ? 'x' : typeof v === 'boolean' ? 'x' : Array.isArray(v) ? 'x' : 7;
      } else {
        if (typeof v !== 'string') continue;
        parent[key] = 'zz-not-a-known-value';
      }
      yield { kind, at: `${body}.${key}`, msg: copy };
    }
  }
}
