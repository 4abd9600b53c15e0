// Scripted MCP client session used by the mcpreel end-to-end tests.
//
// runSession(command, args, opts) launches `command args` as an MCP server
// over stdio (directly, or wrapped by the mcpreel proxy in record or replay
// mode), drives one fixed, scripted session against it with the official
// TypeScript SDK client, and returns a plain JSON-serialisable transcript.
//
// runSessionWith(transportFactory, opts) runs the same script over a
// transport the caller chooses:
//
//   stdioTransport(command, args, {env, cwd, stderr})  what runSession uses
//   streamableHttpTransport(url, {headers, reconnect}) Streamable HTTP: POST
//       (answers as JSON or an SSE stream), GET SSE stream, DELETE at the end
//   sseTransport(url, {headers})                       legacy HTTP+SSE: GET
//       /sse event stream + POST /message?sessionId=...
//
// `headers` (e.g. {Authorization: 'Bearer ...'}) go on every HTTP request
// the SDK makes, the SSE GETs included.  Over Streamable HTTP the session is
// ended with DELETE (transport.terminateSession()) after the last step, and
// its outcome is the last step of the transcript, 'DELETE session'.  Legacy
// SSE has no way to end a session but to drop the event stream, and stdio
// ends by closing stdin; neither has that step.
//
// What differs between transports (server-everything 2026.8.31 and SDK
// 1.32.2, found by running the script over each, twice; a transcript is only
// ever compared with one of the same transport):
//
//   * The two resource-subscription log messages ("Received Subscribe
//     Resource request for URI: X " / "Received Unsubscribe Resource
//     request: X ") end with "from session <id>" over HTTP and SSE, where
//     the transport has a session id; over stdio they end with a space.  The
//     session id is random per session, so in log message data it is
//     replaced with "<SESSION-ID>" (the real one goes to diagnostics).
//   * Over Streamable HTTP, notifications.methods is empty where stdio and
//     SSE have notifications/tools/list_changed: server-everything sends
//     those while handling `notifications/initialized`, outside any request,
//     so they are for the standalone GET stream, which the client only opens
//     once that POST has been answered 202; the server keeps them in its
//     event store for a resumption that never comes.  (Deterministic: the
//     202 is written before the notification is handled.)
//   * Over Streamable HTTP the last step is 'DELETE session'.
//   * Nothing else: over each transport two runs give the same transcript.
//   * Over Streamable HTTP the roots/list of the 350 ms timer and the "Roots
//     updated" log after it travel on the GET stream.  Should it not be open
//     yet, they would be kept in the event store, and the get-roots-list
//     tool would ask for the roots itself: the transcript would not change
//     (only the tool result and distinct log messages are in it).
//
// The transcript is meant to be compared with deep equality between runs
// (direct vs. recorded vs. replayed), so it must be deterministic for a given
// server. What is normalised, and why:
//
//   * Dynamic template resources of server-everything
//     (demo://resource/dynamic/text/{id}, .../blob/{id}) embed
//     `new Date().toLocaleTimeString()` in their text ("... created at
//     4:19:05 PM"). The time is replaced with "<TIME>". For the blob variant
//     the base64 payload is decoded, normalised the same way, and stored as
//     decoded text (the raw base64 differs with the time).
//   * Big payloads (the 2 MiB echo, the server instructions, static documents,
//     images) are stored as {length, sha256} instead of the text itself, so
//     the transcript stays small; they are deterministic anyway.
//   * Server -> client roots/list requests: server-everything sends one on
//     its own ~350 ms after `notifications/initialized` AND one from the
//     get-roots-list tool if that timer has not fired yet, so the number of
//     roots/list requests is 1 or 2 depending on timing. Only the tool result
//     goes into the transcript; the raw count goes into opts.diagnostics.
//   * notifications/message (log) notifications: the content is deterministic
//     but the moment it arrives relative to other steps is not (the "Roots
//     updated" log is sent from that 350 ms timer, and a duplicate can appear
//     if two roots/list requests happened). The transcript keeps only the
//     sorted set of distinct {level, logger, data} log messages received
//     before close; the arrival order/count goes into opts.diagnostics.
//   * Other notifications (e.g. notifications/tools/list_changed, sent while
//     the server registers capability-dependent tools after initialisation)
//     are summarised as the sorted set of distinct methods seen; exact counts
//     go into opts.diagnostics.
//   * Progress notifications are recorded per call as {progress, total,
//     message?} in arrival order; the progress token (a client request id) is
//     not recorded. They are taken from the raw message stream (TapTransport),
//     NOT from the SDK's onprogress callback: the SDK dispatches notifications
//     on a later microtask but handles responses synchronously, so when the
//     last progress notification and the tool result arrive in the same stdout
//     chunk the response removes the progress handler first and onprogress
//     never sees the last notification. Whether that happens depends on pipe
//     chunking (i.e. timing), so onprogress would give 3 or 4 of 4. The
//     onprogress count only goes into opts.diagnostics.
//   * JSON-RPC error results are recorded as {code, message}; the SDK's Error
//     object (with stack) is not.
//   * Timings, pids, stderr output, HTTP session ids and anything else
//     run-specific never go into the transcript; they go into
//     opts.diagnostics (if given).
//
// Finally the transcript is round-tripped through JSON, so `undefined`
// members vanish exactly as they would on disk.

import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const E2E_DIR = dirname(HERE);

/** Absolute path of server-everything's entry point inside tests/e2e/node_modules. */
export function serverEverythingEntry() {
  return join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
}

/** How to start server-everything as a stdio MCP server. */
export function serverEverythingCommand() {
  return { command: process.execPath, args: [serverEverythingEntry(), 'stdio'] };
}

// ---------------------------------------------------------------------------
// Fixed inputs of the scripted session.

export const CLIENT_INFO = { name: 'mcpreel-e2e-client', version: '1.0.0' };

export const ROOTS = [{ uri: 'file:///tmp/mcpreel-e2e', name: 'mcpreel-e2e' }];

export const BIG_ECHO_LENGTH = 2 * 1024 * 1024;

/** Deterministic 2 MiB ASCII string: a numbered, repeating pattern. */
export function bigEchoMessage(length = BIG_ECHO_LENGTH) {
  const parts = [];
  let total = 0;
  for (let i = 0; total < length; i++) {
    const chunk = `mcpreel-${String(i).padStart(7, '0')}-abcdefghijklmnopqrstuvwxyz;`;
    parts.push(chunk);
    total += chunk.length;
  }
  return parts.join('').slice(0, length);
}

/** Content the elicitation handler accepts with; valid for server-everything's requested schema. */
export const ELICITATION_CONTENT = {
  name: 'Ada Lovelace',
  check: true,
  firstLine: 'It was a dark and stormy night.',
  email: 'ada@example.com',
  homepage: 'https://example.com/ada',
  birthdate: '1815-12-10',
  integer: 42,
  number: 3.14,
  untitledSingleSelectEnum: 'Monica',
  untitledMultipleSelectEnum: ['Guitar', 'Piano'],
  titledSingleSelectEnum: 'hero-2',
  titledMultipleSelectEnum: ['fish-1'],
  legacyTitledEnum: 'pet-3',
};

export const SAMPLING_MODEL = 'mcpreel-e2e-stub-model';

// ---------------------------------------------------------------------------
// Helpers.

function sha256(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function digest(text) {
  return { length: text.length, sha256: sha256(text) };
}

function toJson(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

// toLocaleTimeString() output such as "4:19:05 PM", "16:19:05", "4:19:05 a.m."
const TIME_RE = /\d{1,2}:\d{2}:\d{2}(?:\s?[AaPp]\.?\s?[Mm]\.?)?/g;

function normaliseTimes(text) {
  return text.replace(TIME_RE, '<TIME>');
}

/** Normalise one resource-contents entry (from resources/read or an embedded resource). */
function normaliseContents(c) {
  const out = { uri: c.uri, mimeType: c.mimeType };
  const dynamic = typeof c.uri === 'string' && c.uri.startsWith('demo://resource/dynamic/');
  if (typeof c.text === 'string') {
    if (dynamic) out.text = normaliseTimes(c.text);
    else out.text = digest(c.text);
  }
  if (typeof c.blob === 'string') {
    if (dynamic) out.blobDecoded = normaliseTimes(Buffer.from(c.blob, 'base64').toString('utf8'));
    else out.blob = digest(c.blob);
  }
  return out;
}

/** Normalise a content block of a tool result or prompt message. */
function normaliseContentBlock(b) {
  if (!b || typeof b !== 'object') return b;
  if (b.type === 'image' || b.type === 'audio') {
    return { ...b, data: digest(b.data ?? '') };
  }
  if (b.type === 'resource' && b.resource) {
    return { ...b, resource: normaliseContents(b.resource) };
  }
  return b;
}

function normaliseToolResult(r) {
  const out = { ...r };
  if (Array.isArray(r.content)) out.content = r.content.map(normaliseContentBlock);
  return out;
}

function errorRecord(err) {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'number') {
    return { error: { code: err.code, message: String(err.message) } };
  }
  throw err;
}

/**
 * Transport wrapper that sees every JSON-RPC message in both directions.
 * Used to learn the negotiated protocol version and to count notifications
 * and server->client requests without depending on SDK internals.  What the
 * HTTP transports offer besides (session id, protocol version header,
 * DELETE) is passed through.
 */
class TapTransport {
  constructor(inner, tap) {
    this._inner = inner;
    this._tap = tap;
    inner.onmessage = (msg, extra) => {
      this._tap.incoming(msg);
      this.onmessage?.(msg, extra);
    };
    inner.onclose = () => {
      this._tap.closed?.();
      this.onclose?.();
    };
    inner.onerror = (e) => this.onerror?.(e);
  }
  get sessionId() {
    return this._inner.sessionId;
  }
  get pid() {
    return this._inner.pid;
  }
  setProtocolVersion(version) {
    this._inner.setProtocolVersion?.(version);
  }
  start() {
    return this._inner.start();
  }
  send(msg, options) {
    this._tap.outgoing(msg);
    return this._inner.send(msg, options);
  }
  close() {
    return this._inner.close();
  }
}

// ---------------------------------------------------------------------------
// Transport factories.  Each returns a function (diag) => {kind, transport,
// sessionId()} that runSessionWith calls once; it may fill in diag.

/**
 * Stdio: launch `command args` as the server.
 * @param {object} [o]
 * @param {'pipe'|'inherit'|'ignore'} [o.stderr='inherit'] with 'pipe' the
 *        child's stderr is collected into diag.stderr
 * @param {Record<string,string>} [o.env] default: this process's environment
 * @param {string} [o.cwd]
 */
export function stdioTransport(command, args, o = {}) {
  return (diag) => {
    const stderrMode = o.stderr ?? 'inherit';
    diag.command = command;
    diag.args = [...args];
    const transport = new StdioClientTransport({
      command,
      args,
      env: o.env ?? { ...process.env },
      cwd: o.cwd,
      stderr: stderrMode,
    });
    if (stderrMode === 'pipe' && transport.stderr) {
      const MAX = 256 * 1024;
      transport.stderr.setEncoding('utf8');
      transport.stderr.on('data', (chunk) => {
        if (diag.stderr.length < MAX) diag.stderr += chunk.slice(0, MAX - diag.stderr.length);
      });
    }
    return { kind: 'stdio', transport, sessionId: () => undefined };
  };
}

/**
 * Streamable HTTP to `url` (e.g. http://127.0.0.1:PORT/mcp).
 *
 * The SDK's reconnection of the GET stream is off unless o.reconnect: when
 * that stream ends (the server closes it on DELETE, and now and then
 * server-everything's ends mid-session) the SDK opens a new GET with
 * Last-Event-ID, at a moment that depends on timing, racing the DELETE and
 * close(), and server-everything's naive event store then replays every
 * event stored after that id, of every stream: responses already delivered
 * (the client logs "unknown message ID"), server requests again, and
 * stored priming events as `data: {}`.  None of that changes the
 * transcript, but it changes the traffic (what a recorder sees) from run
 * to run.  Nothing of the script travels on the GET stream after the first
 * second, so without reconnection nothing is lost.
 *
 * @param {object} [o]
 * @param {Record<string,string>} [o.headers] added to every request
 * @param {boolean} [o.reconnect=false] keep the SDK's default reconnection
 */
export function streamableHttpTransport(url, o = {}) {
  return (diag) => {
    diag.url = String(url);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: o.headers ? { headers: { ...o.headers } } : undefined,
      reconnectionOptions: o.reconnect
        ? undefined
        : { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30000, reconnectionDelayGrowFactor: 1.5 },
    });
    return { kind: 'http', transport, sessionId: () => transport.sessionId };
  };
}

/**
 * Legacy HTTP+SSE to `url` (the event stream, e.g. http://127.0.0.1:PORT/sse).
 * @param {object} [o]
 * @param {Record<string,string>} [o.headers] added to every request (the
 *        event stream GET and each POST)
 */
export function sseTransport(url, o = {}) {
  return (diag) => {
    diag.url = String(url);
    const transport = new SSEClientTransport(new URL(url), {
      requestInit: o.headers ? { headers: { ...o.headers } } : undefined,
    });
    // The session id is in the endpoint the server announced
    // (/message?sessionId=...), which the SDK keeps in a private member.
    const sessionId = () => {
      try {
        return transport._endpoint?.searchParams.get('sessionId') ?? undefined;
      } catch {
        return undefined;
      }
    };
    return { kind: 'sse', transport, sessionId };
  };
}

// ---------------------------------------------------------------------------

/**
 * Run the scripted session over stdio.
 *
 * @param {string} command  executable to launch (server, or proxy wrapping it)
 * @param {string[]} args   its arguments
 * @param {object} [opts]
 * @param {'pipe'|'inherit'|'ignore'} [opts.stderr='inherit'] child's stderr;
 *        with 'pipe' it is collected into opts.diagnostics.stderr
 * @param {Record<string,string>} [opts.env] child environment (default: the
 *        full environment of this process, so a proxy gets its settings)
 * @param {string} [opts.cwd] child working directory
 * @param {number} [opts.requestTimeoutMs=30000] per-request timeout
 * @param {number} [opts.sessionTimeoutMs=55000] whole-session deadline; on
 *        expiry the child is killed and the promise rejects
 * @param {(step: object) => void} [opts.onStep] called after each step with
 *        {index, step, ms, record} (for progress output; not compared)
 * @param {object} [opts.diagnostics] if given, filled with run-specific,
 *        non-deterministic information (timings, counts, stderr, pid)
 * @returns {Promise<object>} deterministic transcript
 */
export async function runSession(command, args, opts = {}) {
  return runSessionWith(stdioTransport(command, args, { env: opts.env, cwd: opts.cwd, stderr: opts.stderr }), opts);
}

/**
 * Run the scripted session over the transport that `factory` makes (one of
 * stdioTransport(), streamableHttpTransport(), sseTransport()).
 *
 * opts as for runSession, less env/cwd/stderr (those belong to
 * stdioTransport).  opts.diagnostics also gets: transport ('stdio', 'http'
 * or 'sse'), url (HTTP), sessionId (HTTP: the Mcp-Session-Id; SSE: the
 * sessionId of the message endpoint), terminate (HTTP: how the DELETE went,
 * with its time).
 */
export async function runSessionWith(factory, opts = {}) {
  const requestTimeoutMs = opts.requestTimeoutMs ?? 30000;
  const sessionTimeoutMs = opts.sessionTimeoutMs ?? 55000;
  const diag = opts.diagnostics ?? {};
  const t0 = Date.now();

  Object.assign(diag, {
    command: null,
    args: [],
    transport: null,
    url: null,
    sessionId: null,
    pid: null,
    stepTimings: [],
    notificationCounts: {},
    serverRequestCounts: {},
    logMessages: [],
    rootsListRequests: 0,
    clientErrors: [],
    messagesSent: [],
    messagesReceived: [],
    stderr: '',
    totalMs: null,
  });

  const notificationMethods = new Set();
  const distinctLogs = new Map();

  const tap = {
    initializeId: undefined,
    protocolVersion: undefined,
    lastProgressToken: undefined,
    progressByToken: new Map(),
    closed() {
      diag.transportClosedAtMs = Date.now() - t0;
    },
    outgoing(msg) {
      diag.messagesSent.push(msg);
      if (!msg || typeof msg !== 'object') return;
      if (msg.method === 'initialize' && 'id' in msg) this.initializeId = msg.id;
      const token = msg.params?._meta?.progressToken;
      if ('id' in msg && token !== undefined) {
        this.lastProgressToken = token;
        this.progressByToken.set(token, []);
      }
    },
    incoming(msg) {
      diag.messagesReceived.push(msg);
      if (!msg || typeof msg !== 'object') return;
      if ('method' in msg && !('id' in msg)) {
        diag.notificationCounts[msg.method] = (diag.notificationCounts[msg.method] ?? 0) + 1;
        if (msg.method === 'notifications/progress') {
          const { progressToken, progress, total, message } = msg.params ?? {};
          this.progressByToken.get(progressToken)?.push({ progress, total, message });
        }
        if (msg.method !== 'notifications/message' && msg.method !== 'notifications/progress') {
          notificationMethods.add(msg.method);
        }
      } else if ('method' in msg && 'id' in msg) {
        diag.serverRequestCounts[msg.method] = (diag.serverRequestCounts[msg.method] ?? 0) + 1;
      } else if ('id' in msg && msg.id === this.initializeId && msg.result) {
        this.protocolVersion = msg.result.protocolVersion;
      }
    },
  };

  const made = factory(diag);
  const inner = made.transport;
  diag.transport = made.kind;
  const transport = new TapTransport(inner, tap);

  // The transport's session id (HTTP, SSE), replaced in log messages.
  const normaliseSessionId = (value) => {
    const sid = made.sessionId();
    if (!sid) return value;
    if (typeof value === 'string') return value.split(sid).join('<SESSION-ID>');
    if (value && typeof value === 'object') return JSON.parse(JSON.stringify(value).split(sid).join('<SESSION-ID>'));
    return value;
  };

  const client = new Client(CLIENT_INFO, {
    capabilities: {
      sampling: {},
      roots: { listChanged: true },
      elicitation: { form: {} },
    },
  });

  // --- server -> client request handlers (deterministic answers) ----------
  const samplingRequests = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const p = request.params;
    samplingRequests.push(toJson({
      messages: p.messages,
      systemPrompt: p.systemPrompt,
      maxTokens: p.maxTokens,
      temperature: p.temperature,
    }));
    const first = p.messages?.[0]?.content;
    const promptText = first && first.type === 'text' ? first.text : '';
    return {
      model: SAMPLING_MODEL,
      role: 'assistant',
      stopReason: 'endTurn',
      content: { type: 'text', text: `stub reply #${samplingRequests.length} to: ${promptText}` },
    };
  });

  client.setRequestHandler(ListRootsRequestSchema, async () => {
    diag.rootsListRequests += 1;
    return { roots: ROOTS };
  });

  const elicitationRequests = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const p = request.params;
    const schema = p.requestedSchema ?? {};
    elicitationRequests.push({
      mode: p.mode ?? 'form',
      message: p.message,
      requestedProperties: Object.keys(schema.properties ?? {}).sort(),
      required: schema.required ?? [],
      requestedSchemaSha256: sha256(JSON.stringify(schema)),
    });
    return { action: 'accept', content: ELICITATION_CONTENT };
  });

  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const { level, logger, data } = n.params;
    diag.logMessages.push({ atMs: Date.now() - t0, ...toJson({ level, logger, data }) });
    const entry = toJson({ level, logger, data: normaliseSessionId(data) });
    const key = JSON.stringify(entry);
    if (!distinctLogs.has(key)) distinctLogs.set(key, entry);
  });
  // Errors the SDK reports out of band (e.g. a progress notification for a
  // request that has already completed) are kept for diagnostics only.
  client.onerror = (e) => {
    diag.clientErrors.push(String(e?.message ?? e));
  };
  // Other notifications (list_changed etc.) are counted by the tap; this
  // fallback only stops the SDK from treating them as unexpected.
  client.fallbackNotificationHandler = async () => {};

  // --- session deadline -----------------------------------------------------
  let deadlineTimer;
  const deadline = new Promise((_, reject) => {
    deadlineTimer = setTimeout(() => {
      reject(new Error(`session did not finish within ${sessionTimeoutMs} ms`));
    }, sessionTimeoutMs);
  });

  const steps = [];
  let stepT = Date.now();
  const record = (step, data) => {
    const ms = Date.now() - stepT;
    const entry = toJson({ step, ...data });
    steps.push(entry);
    diag.stepTimings.push({ step, ms });
    opts.onStep?.({ index: steps.length - 1, step, ms, record: entry });
    stepT = Date.now();
  };
  const ro = { timeout: requestTimeoutMs };

  const script = async () => {
    // 1. initialize
    await client.connect(transport, ro);
    diag.pid = transport.pid ?? null;
    diag.sessionId = made.sessionId() ?? null;
    const serverInfo = client.getServerVersion();
    const instructions = client.getInstructions();
    record('initialize', {
      result: {
        protocolVersion: tap.protocolVersion,
        serverInfo,
        capabilities: client.getServerCapabilities(),
        instructions: typeof instructions === 'string' ? digest(instructions) : null,
      },
    });

    // 2. ping
    record('ping', { result: await client.ping(ro) });

    // 3. tools/list
    const tools = await client.listTools({}, ro);
    record('tools/list', {
      toolNames: tools.tools.map((t) => t.name),
      result: tools,
    });

    // 4. simple tools
    const echoArgs = { message: 'hello' };
    record('tools/call echo', {
      params: { name: 'echo', arguments: echoArgs },
      result: normaliseToolResult(await client.callTool({ name: 'echo', arguments: echoArgs }, undefined, ro)),
    });

    const sumArgs = { a: 2, b: 3 };
    record('tools/call get-sum', {
      params: { name: 'get-sum', arguments: sumArgs },
      result: normaliseToolResult(await client.callTool({ name: 'get-sum', arguments: sumArgs }, undefined, ro)),
    });

    const scArgs = { location: 'Chicago' };
    record('tools/call get-structured-content', {
      params: { name: 'get-structured-content', arguments: scArgs },
      result: normaliseToolResult(
        await client.callTool({ name: 'get-structured-content', arguments: scArgs }, undefined, ro),
      ),
    });

    record('tools/call get-tiny-image', {
      params: { name: 'get-tiny-image', arguments: {} },
      result: normaliseToolResult(await client.callTool({ name: 'get-tiny-image', arguments: {} }, undefined, ro)),
    });

    // 5. progress notifications
    const lroArgs = { duration: 1, steps: 4 };
    // onprogress makes the SDK attach a progressToken; the notifications
    // themselves are collected by the tap (see the header comment).
    diag.onprogressCalls = 0;
    const lro = await client.callTool({ name: 'trigger-long-running-operation', arguments: lroArgs }, undefined, {
      ...ro,
      onprogress: () => {
        diag.onprogressCalls += 1;
      },
    });
    record('tools/call trigger-long-running-operation', {
      params: { name: 'trigger-long-running-operation', arguments: lroArgs },
      progress: tap.progressByToken.get(tap.lastProgressToken) ?? [],
      result: normaliseToolResult(lro),
    });

    // 6. server -> client sampling/createMessage
    const samplingArgs = { prompt: 'Say hello to mcpreel', maxTokens: 32 };
    const before = samplingRequests.length;
    const sampling = await client.callTool(
      { name: 'trigger-sampling-request', arguments: samplingArgs },
      undefined,
      ro,
    );
    record('tools/call trigger-sampling-request', {
      params: { name: 'trigger-sampling-request', arguments: samplingArgs },
      samplingRequestsReceived: samplingRequests.slice(before),
      result: normaliseToolResult(sampling),
    });

    // 7. server -> client roots/list
    record('tools/call get-roots-list', {
      params: { name: 'get-roots-list', arguments: {} },
      result: normaliseToolResult(await client.callTool({ name: 'get-roots-list', arguments: {} }, undefined, ro)),
    });

    // 8. server -> client elicitation/create
    const beforeE = elicitationRequests.length;
    const elicit = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }, undefined, ro);
    record('tools/call trigger-elicitation-request', {
      params: { name: 'trigger-elicitation-request', arguments: {} },
      elicitationRequestsReceived: elicitationRequests.slice(beforeE),
      result: normaliseToolResult(elicit),
    });

    // 9. error paths: unknown tool, invalid arguments
    let unknownTool;
    try {
      unknownTool = { result: normaliseToolResult(await client.callTool({ name: 'no-such-tool', arguments: {} }, undefined, ro)) };
    } catch (e) {
      unknownTool = errorRecord(e);
    }
    record('tools/call no-such-tool', { params: { name: 'no-such-tool', arguments: {} }, ...unknownTool });

    let badArgs;
    try {
      badArgs = { result: normaliseToolResult(await client.callTool({ name: 'get-sum', arguments: { a: 'two' } }, undefined, ro)) };
    } catch (e) {
      badArgs = errorRecord(e);
    }
    record('tools/call get-sum (invalid arguments)', { params: { name: 'get-sum', arguments: { a: 'two' } }, ...badArgs });

    // 10. resources
    const resources = await client.listResources({}, ro);
    record('resources/list', { result: resources });

    record('resources/templates/list', { result: await client.listResourceTemplates({}, ro) });

    for (const uri of [
      'demo://resource/static/document/instructions.md',
      'demo://resource/dynamic/text/1',
      'demo://resource/dynamic/blob/2',
    ]) {
      const r = await client.readResource({ uri }, ro);
      record(`resources/read ${uri}`, { result: { contents: r.contents.map(normaliseContents) } });
    }

    let unknownRes;
    try {
      const r = await client.readResource({ uri: 'demo://resource/does-not-exist' }, ro);
      unknownRes = { result: { contents: r.contents.map(normaliseContents) } };
    } catch (e) {
      unknownRes = errorRecord(e);
    }
    record('resources/read demo://resource/does-not-exist', unknownRes);

    const subUri = 'demo://resource/static/document/features.md';
    record('resources/subscribe', { params: { uri: subUri }, result: await client.subscribeResource({ uri: subUri }, ro) });
    record('resources/unsubscribe', {
      params: { uri: subUri },
      result: await client.unsubscribeResource({ uri: subUri }, ro),
    });

    // 11. prompts
    record('prompts/list', { result: await client.listPrompts({}, ro) });
    record('prompts/get simple-prompt', { result: await client.getPrompt({ name: 'simple-prompt' }, ro) });
    const promptArgs = { city: 'Lisbon', state: 'Estremadura' };
    record('prompts/get args-prompt', {
      params: { name: 'args-prompt', arguments: promptArgs },
      result: await client.getPrompt({ name: 'args-prompt', arguments: promptArgs }, ro),
    });
    const resPromptArgs = { resourceType: 'Text', resourceId: '3' };
    const resPrompt = await client.getPrompt({ name: 'resource-prompt', arguments: resPromptArgs }, ro);
    record('prompts/get resource-prompt', {
      params: { name: 'resource-prompt', arguments: resPromptArgs },
      result: { ...resPrompt, messages: resPrompt.messages.map((m) => ({ ...m, content: normaliseContentBlock(m.content) })) },
    });

    // 12. completion/complete
    const completeParams = {
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Engineering' } },
    };
    record('completion/complete', { params: completeParams, result: await client.complete(completeParams, ro) });

    // 13. logging/setLevel
    record('logging/setLevel', { params: { level: 'debug' }, result: await client.setLoggingLevel('debug', ro) });

    // 14. 2 MiB echo
    const big = bigEchoMessage();
    const bigRes = await client.callTool({ name: 'echo', arguments: { message: big } }, undefined, ro);
    const bigText = bigRes.content?.[0]?.text ?? '';
    record('tools/call echo (2 MiB)', {
      params: { name: 'echo', arguments: { message: digest(big) } },
      result: {
        contentBlocks: bigRes.content?.length ?? 0,
        type: bigRes.content?.[0]?.type,
        text: digest(bigText),
        isExpected: bigText === `Echo: ${big}`,
      },
    });

    // 15. a final ping so that anything the server sent before it is in.
    record('ping (final)', { result: await client.ping(ro) });

    // 16. Streamable HTTP: end the session with DELETE.  The SDK treats 2xx
    // and 405 (server does not allow it) as success and forgets the session
    // id; anything else throws StreamableHTTPError with the status as code.
    if (made.kind === 'http') {
      const hadSessionId = typeof inner.sessionId === 'string' && inner.sessionId.length > 0;
      const td = Date.now();
      let outcome;
      try {
        await inner.terminateSession();
        outcome = { result: { hadSessionId, terminated: true, sessionIdCleared: inner.sessionId === undefined } };
      } catch (e) {
        outcome = { error: { status: typeof e?.code === 'number' ? e.code : null, message: String(e?.message ?? e) } };
      }
      diag.terminate = { ms: Date.now() - td, ...outcome };
      record('DELETE session', outcome);
    }
  };

  try {
    await Promise.race([script(), deadline]);
  } catch (err) {
    clearTimeout(deadlineTimer);
    await client.close().catch(() => {});
    diag.totalMs = Date.now() - t0;
    const last = steps.length ? `after step "${steps[steps.length - 1].step}"` : 'before the first step completed';
    const extra = diag.clientErrors.length ? ` [client errors: ${diag.clientErrors.join(' | ')}]` : '';
    const closed = diag.transportClosedAtMs !== undefined ? ` [server connection closed at ${diag.transportClosedAtMs} ms]` : '';
    throw new Error(`MCP session failed ${last} (${steps.length} step(s) completed): ${err?.message ?? err}${closed}${extra}`, {
      cause: err,
    });
  }
  clearTimeout(deadlineTimer);

  // 17. close.  stdio: ends the child's stdin, waits for it to exit (the SDK
  // escalates to SIGTERM / SIGKILL after 2 s each if it does not).  HTTP and
  // SSE: aborts the open streams (for legacy SSE, dropping the event stream
  // is what ends the session on the server).
  const tc = Date.now();
  await client.close();
  diag.closeMs = Date.now() - tc;
  diag.totalMs = Date.now() - t0;

  return toJson({
    transcriptVersion: 1,
    client: CLIENT_INFO,
    steps,
    notifications: {
      methods: [...notificationMethods].sort(),
      logMessages: [...distinctLogs.values()].sort((a, b) =>
        JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0,
      ),
    },
  });
}
