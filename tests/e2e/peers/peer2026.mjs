// peer2026: a small MCP server of ours speaking ONLY protocol version
// 2026-07-28 (stateless MCP: no initialize, no sessions), for the replay and
// mock tests.  Node 20, node:* modules only.  See docs/mcp-versions.md for the
// protocol itself.
//
// Usage:
//   node peer2026.mjs [--http] [--variant N] [--listen-end result|cancelled|open]
//
// Transports
//   (default)  stdio: one JSON-RPC message per line on stdin/stdout; nothing
//              else is ever written to stdout.  Exits when stdin ends.
//   --http     Streamable HTTP on 127.0.0.1, port chosen by the kernel; once
//              ready prints one line on stdout:
//                  peer2026: listening on http://127.0.0.1:PORT
//              Every path is the MCP endpoint (conventionally /mcp).  Runs
//              until SIGINT/SIGTERM.
//
// Every request must carry params._meta with
//   "io.modelcontextprotocol/protocolVersion": "2026-07-28"
//   "io.modelcontextprotocol/clientCapabilities": {...}
// ("io.modelcontextprotocol/clientInfo" is optional).  Every result carries
// resultType and _meta["io.modelcontextprotocol/serverInfo"] =
// {"name":"peer2026","version":"1.0.0"}.  Nothing in any answer depends on
// the time, the process or earlier requests, EXCEPT the requestState of the
// confirm tool (random, see below).
//
// Methods
//   server/discover     supportedVersions ["2026-07-28"], capabilities
//                       {tools:{listChanged:true}, resources:{subscribe:true,
//                       listChanged:true}}, instructions, ttlMs, cacheScope.
//   tools/list          echo, add, confirm (in that order); ttlMs 60000,
//                       cacheScope "public".  A cursor is refused (-32602).
//   tools/call echo     {text}  -> content [{type:"text", text:"echo: <text>"}]
//   tools/call add      {a, b} integers -> structuredContent {sum} and the same
//                       JSON as text.  Parameter "a" is annotated
//                       "x-mcp-header": "A", so over HTTP the request MUST
//                       carry "Mcp-Param-A: <a>" (400/-32020 otherwise).
//   tools/call confirm  {item}  multi round-trip (MRTR).  Needs the client
//                       capability elicitation (form); without it: 400/-32021.
//                       1st call (no requestState): result
//                         {resultType:"input_required",
//                          inputRequests:{confirm:{method:"elicitation/create",
//                            params:{mode:"form", message, requestedSchema:
//                              {type:"object", properties:{confirmed:
//                               {type:"boolean"}}, required:["confirmed"]}}}},
//                          requestState:"<opaque, random every time>"}
//                       Retry (new id, same name/arguments, plus
//                       params.inputResponses.confirm = ElicitResult and
//                       params.requestState echoed exactly): final result,
//                       text "confirmed: <item>" (accept, confirmed true),
//                       "not confirmed: <item>" (accept, false),
//                       "declined: <item>", "cancelled: <item>"; structured
//                       {item, action, confirmed}.
//                       requestState is HMAC-signed with a key made at start-up
//                       and bound to tools/call+confirm+item with a 5 min
//                       expiry: a state from another process (a recording),
//                       tampered, expired or minted for another item ->
//                       JSON-RPC error -32602 "Invalid requestState: ...".
//                       inputResponses without requestState -> -32602.
//                       A valid requestState without inputResponses.confirm ->
//                       a fresh input_required result (asks again).
//   resources/list      one resource, test://peer2026/status (ttlMs 60000).
//   resources/templates/list  empty.
//   resources/read      test://peer2026/status -> text "status: ok";
//                       anything else -> -32602 (resource not found).
//   subscriptions/listen  params.notifications filter (required).  Honors
//                       toolsListChanged, resourcesListChanged and
//                       resourceSubscriptions (any URIs); drops
//                       promptsListChanged (no prompts).  Sends, 10 ms apart,
//                       all tagged _meta["io.modelcontextprotocol/subscriptionId"]
//                       = the listen request's id:
//                         notifications/subscriptions/acknowledged {notifications: honored}
//                         notifications/resources/updated {uri}  per subscribed URI
//                         notifications/tools/list_changed       if honored
//                         notifications/resources/list_changed   if honored
//                         notifications/resources/updated {uri}  per URI, again
//                       then ends per --listen-end:
//                         result (default): the listen response
//                           {resultType:"complete", _meta:{subscriptionId, serverInfo}}
//                           (graceful closure), then the HTTP stream closes;
//                         cancelled: stdio: notifications/cancelled
//                           {requestId: <listen id>}; HTTP: the stream just closes;
//                         open: stays open until the client cancels (HTTP:
//                           closes the stream, ":" keep-alive every 15 s;
//                           stdio: notifications/cancelled {requestId}).
//                       A client's notifications/cancelled (stdio) or closed
//                       stream (HTTP) ends it silently.  On SIGINT/SIGTERM
//                       (HTTP) open listens get the graceful result first.
//   initialize          refused: -32022 naming the supported versions (HTTP:
//                       usually 400/-32020 first, a legacy client sends no
//                       Mcp-Method header).
//   anything else       -32601 (HTTP 404).  ping, logging/setLevel,
//                       resources/subscribe no longer exist in 2026-07-28.
//   notifications       notifications/cancelled {requestId} cancels an open
//                       listen (stdio); others are ignored.  HTTP: 202.
//   A request with params._meta.progressToken on tools/call first gets one
//   notifications/progress {progressToken, progress:1, total:1} (over HTTP
//   that makes the answer an SSE stream).
//
// HTTP specifics: POST only (GET/DELETE/... -> 405, Allow: POST); an Origin
// header that is not http(s)://127.0.0.1|localhost[:port] -> 403.  Requests
// must carry MCP-Protocol-Version (equal to the body's), Mcp-Method (equal to
// method) and, for tools/call, resources/read and prompts/get, Mcp-Name
// (params.name or params.uri; "=?base64?...?=" accepted) -> else 400 with
// -32020.  Missing _meta fields -> 400/-32602, unsupported version ->
// 400/-32022, missing client capability -> 400/-32021, unknown method ->
// 404/-32601; other JSON-RPC errors (unknown tool, bad requestState, unknown
// resource) come with 200.  A single answer is application/json; an answer
// preceded by notifications (listen, progress) is text/event-stream with one
// "data:" line per message, no event ids.  No Mcp-Session-Id is ever sent;
// one received, and Last-Event-ID, are ignored.  A batch (JSON array) or a
// JSON-RPC response in a POST -> 400/-32600.  A closed SSE stream cancels its
// request.
//
// --variant N   0 (default): as above.  1: exactly one change: the echo
//               tool answers "ECHO: <text>" instead of "echo: <text>".
import crypto from 'node:crypto';
import http from 'node:http';
import process from 'node:process';
import readline from 'node:readline';

const VERSION = '2026-07-28';
const SERVER_INFO = { name: 'peer2026', version: '1.0.0' };
const K_PV = 'io.modelcontextprotocol/protocolVersion';
const K_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const K_LOG = 'io.modelcontextprotocol/logLevel';
const K_SI = 'io.modelcontextprotocol/serverInfo';
const K_SUB = 'io.modelcontextprotocol/subscriptionId';
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const STATUS_URI = 'test://peer2026/status';
const STATE_TTL_MS = 5 * 60 * 1000;
const STATE_KEY = crypto.randomBytes(32);	// per process: old states fail

/* ---- command line ---- */

const opts = { http: false, variant: 0, listenEnd: 'result' };
{
	const av = process.argv.slice(2);
	for (let i = 0; i < av.length; i++) {
		const a = av[i];
		const val = () => {
			if (a.includes('='))
				return a.slice(a.indexOf('=') + 1);
			if (i + 1 >= av.length)
				usage(`${a} needs a value`);
			return av[++i];
		};
		if (a === '--http')
			opts.http = true;
		else if (a === '--variant' || a.startsWith('--variant='))
			opts.variant = Number(val());
		else if (a === '--listen-end' || a.startsWith('--listen-end='))
			opts.listenEnd = val();
		else
			usage(`unknown argument ${a}`);
	}
	if (![0, 1].includes(opts.variant))
		usage('--variant takes 0 or 1');
	if (!['result', 'cancelled', 'open'].includes(opts.listenEnd))
		usage('--listen-end takes result, cancelled or open');
}

function usage(why) {
	process.stderr.write(`peer2026: ${why}\nusage: peer2026.mjs [--http] [--variant 0|1] [--listen-end result|cancelled|open]\n`);
	process.exit(2);
}

/* ---- JSON-RPC helpers ---- */

class RpcError extends Error {
	constructor(code, message, data, status = 200) {
		super(message);
		this.code = code;
		this.data = data;
		this.status = status;	// HTTP status when answered alone
	}
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const result = (id, body) => ({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...body, _meta: { ...(body._meta || {}), [K_SI]: SERVER_INFO } } });
function errorMsg(id, e) {
	const m = { jsonrpc: '2.0' };
	if (id !== undefined && id !== null)
		m.id = id;
	m.error = { code: e.code, message: e.message };
	if (e.data !== undefined)
		m.error.data = e.data;
	return m;
}
const notif = (method, params) => (params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
const unsupported = (requested) => new RpcError(-32022, 'Unsupported protocol version', { supported: [VERSION], requested: String(requested) }, 400);

/* ---- the tools ---- */

const TOOLS = [
	{
		name: 'echo',
		description: 'Echoes the text back, prefixed with "echo: ".',
		inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
	},
	{
		name: 'add',
		description: 'Adds two integers; the sum comes back as structured content.',
		inputSchema: {
			type: 'object',
			properties: {
				a: { type: 'integer', 'x-mcp-header': 'A' },
				b: { type: 'integer' },
			},
			required: ['a', 'b'],
			additionalProperties: false,
		},
		outputSchema: { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] },
	},
	{
		name: 'confirm',
		description: 'Asks the user to confirm an item (multi round-trip elicitation), then reports the answer.',
		inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'], additionalProperties: false },
	},
];

// the x-mcp-header annotations of a tool: [{path: [...keys], header, type}]
function paramHeaders(tool) {
	const out = [];
	const walk = (schema, path) => {
		if (!isObj(schema) || !isObj(schema.properties))
			return;
		for (const [k, sub] of Object.entries(schema.properties)) {
			if (!isObj(sub))
				continue;
			if (typeof sub['x-mcp-header'] === 'string')
				out.push({ path: [...path, k], header: sub['x-mcp-header'], type: sub.type });
			walk(sub, [...path, k]);
		}
	};
	walk(tool.inputSchema, []);
	return out;
}

const toolError = (text) => ({ content: [{ type: 'text', text }], isError: true });

function callEcho(args) {
	if (typeof args.text !== 'string')
		return toolError('echo: "text" must be a string');
	const prefix = opts.variant === 1 ? 'ECHO: ' : 'echo: ';
	return { content: [{ type: 'text', text: prefix + args.text }], isError: false };
}

function callAdd(args) {
	if (!Number.isSafeInteger(args.a) || !Number.isSafeInteger(args.b))
		return toolError('add: "a" and "b" must be integers');
	const sc = { sum: args.a + args.b };
	return { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc, isError: false };
}

/* requestState: base64url(JSON payload) "." base64url(HMAC-SHA256) */
const digest = (s) => crypto.createHash('sha256').update(s).digest('base64url').slice(0, 16);

function mintState(item) {
	const payload = { m: 'tools/call', t: 'confirm', d: digest(item), x: Date.now() + STATE_TTL_MS, r: crypto.randomBytes(12).toString('base64url') };
	const p = Buffer.from(JSON.stringify(payload)).toString('base64url');
	return `${p}.${crypto.createHmac('sha256', STATE_KEY).update(p).digest('base64url')}`;
}

function stateProblem(state, item) {
	if (typeof state !== 'string')
		return 'not a string';
	const dot = state.indexOf('.');
	if (dot < 0)
		return 'malformed';
	const p = state.slice(0, dot);
	const mac = Buffer.from(state.slice(dot + 1), 'base64url');
	const want = crypto.createHmac('sha256', STATE_KEY).update(p).digest();
	if (mac.length !== want.length || !crypto.timingSafeEqual(mac, want))
		return 'not issued by this server (tampered, or from an earlier run)';
	let payload;
	try {
		payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
	} catch {
		return 'malformed';
	}
	if (payload.m !== 'tools/call' || payload.t !== 'confirm' || payload.d !== digest(item))
		return 'issued for a different request';
	if (!(Date.now() < payload.x))
		return 'expired';
	return null;
}

function askConfirm(item) {
	return {
		resultType: 'input_required',
		inputRequests: {
			confirm: {
				method: 'elicitation/create',
				params: {
					mode: 'form',
					message: `Please confirm: ${item}`,
					requestedSchema: {
						type: 'object',
						properties: { confirmed: { type: 'boolean', title: 'Confirm', description: `Go ahead with ${item}?` } },
						required: ['confirmed'],
					},
				},
			},
		},
		requestState: mintState(item),
	};
}

function callConfirm(params, caps) {
	const el = caps.elicitation;
	const form = isObj(el) && (el.form !== undefined || el.url === undefined);
	if (!form)
		throw new RpcError(-32021, 'This tool needs the elicitation capability (form mode)', { requiredCapabilities: { elicitation: { form: {} } } }, 400);
	const args = isObj(params.arguments) ? params.arguments : {};
	if (typeof args.item !== 'string')
		return toolError('confirm: "item" must be a string');
	const item = args.item;
	const hasState = params.requestState !== undefined;
	const hasResp = params.inputResponses !== undefined;
	if (!hasState && !hasResp)
		return askConfirm(item);
	if (!hasState)
		throw new RpcError(-32602, 'Invalid params: inputResponses without the requestState this server issued');
	const why = stateProblem(params.requestState, item);
	if (why)
		throw new RpcError(-32602, `Invalid requestState: ${why}`);
	const ans = isObj(params.inputResponses) ? params.inputResponses.confirm : undefined;
	if (ans === undefined)
		return askConfirm(item);	// the answer we need is missing: ask again
	if (!isObj(ans) || !['accept', 'decline', 'cancel'].includes(ans.action))
		throw new RpcError(-32602, 'Invalid params: inputResponses.confirm must be an ElicitResult');
	let text;
	let confirmed = null;
	if (ans.action === 'accept') {
		confirmed = isObj(ans.content) && ans.content.confirmed === true;
		text = `${confirmed ? 'confirmed' : 'not confirmed'}: ${item}`;
	} else {
		text = `${ans.action === 'decline' ? 'declined' : 'cancelled'}: ${item}`;
	}
	return { content: [{ type: 'text', text }], structuredContent: { item, action: ans.action, confirmed }, isError: false };
}

/* ---- request processing (both transports) ---- */

// Checks the per-request _meta; returns it.
function checkMeta(params) {
	const meta = isObj(params) ? params._meta : undefined;
	if (!isObj(meta) || typeof meta[K_PV] !== 'string')
		throw new RpcError(-32602, `Invalid params: _meta["${K_PV}"] is required`, undefined, 400);
	if (!isObj(meta[K_CAPS]))
		throw new RpcError(-32602, `Invalid params: _meta["${K_CAPS}"] is required`, undefined, 400);
	return meta;
}

function checkVersion(meta) {
	if (meta[K_PV] !== VERSION)
		throw unsupported(meta[K_PV]);
	if (meta[K_LOG] !== undefined && !LOG_LEVELS.includes(meta[K_LOG]))
		throw new RpcError(-32602, `Invalid params: unknown log level ${JSON.stringify(meta[K_LOG])}`, undefined, 400);
}

/*
 * A sink takes the messages answering one request: notify() for
 * notifications scoped to it, respond() for the final response (which ends
 * it), end() to end it without a response, and onCancel(fn) for when the
 * client gives up on it.
 */
const listens = new Map();	// stdio: JSON id text -> cancel function
const openListens = new Set();	// HTTP: functions ending a listen gracefully

function handleRequest(msg, sink) {
	const { id, method } = msg;
	const params = isObj(msg.params) ? msg.params : {};
	try {
		if (method === 'initialize')
			throw unsupported(typeof params.protocolVersion === 'string' ? params.protocolVersion : 'none');
		const meta = checkMeta(msg.params);
		checkVersion(meta);
		const caps = meta[K_CAPS];
		switch (method) {
		case 'server/discover':
			return sink.respond(result(id, {
				supportedVersions: [VERSION],
				capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } },
				instructions: 'Test peer for mcpreel: echo, add and confirm tools; one status resource.',
				ttlMs: 60000,
				cacheScope: 'public',
			}));
		case 'tools/list':
			if (params.cursor !== undefined)
				throw new RpcError(-32602, 'Invalid params: unknown cursor');
			return sink.respond(result(id, { tools: TOOLS, ttlMs: 60000, cacheScope: 'public' }));
		case 'tools/call': {
			const args = isObj(params.arguments) ? params.arguments : {};
			let r;
			if (params.name === 'echo')
				r = callEcho(args);
			else if (params.name === 'add')
				r = callAdd(args);
			else if (params.name === 'confirm')
				r = callConfirm(params, caps);
			else
				throw new RpcError(-32602, `Unknown tool: ${params.name}`);
			if (meta.progressToken !== undefined)
				sink.notify(notif('notifications/progress', { progressToken: meta.progressToken, progress: 1, total: 1, message: `${params.name} done` }));
			return sink.respond(result(id, r));
		}
		case 'resources/list':
			if (params.cursor !== undefined)
				throw new RpcError(-32602, 'Invalid params: unknown cursor');
			return sink.respond(result(id, { resources: [{ uri: STATUS_URI, name: 'status', mimeType: 'text/plain' }], ttlMs: 60000, cacheScope: 'public' }));
		case 'resources/templates/list':
			return sink.respond(result(id, { resourceTemplates: [], ttlMs: 60000, cacheScope: 'public' }));
		case 'resources/read':
			if (params.uri !== STATUS_URI)
				throw new RpcError(-32602, 'Resource not found', { uri: params.uri });
			return sink.respond(result(id, { contents: [{ uri: STATUS_URI, mimeType: 'text/plain', text: 'status: ok' }], ttlMs: 0, cacheScope: 'public' }));
		case 'subscriptions/listen':
			return listen(id, params, sink);
		default:
			throw new RpcError(-32601, `Method not found: ${method}`, undefined, 404);
		}
	} catch (e) {
		if (!(e instanceof RpcError))
			throw e;
		sink.respond(errorMsg(id, e), e.status);
	}
}

function listen(id, params, sink) {
	const f = params.notifications;
	if (!isObj(f))
		throw new RpcError(-32602, 'Invalid params: the notifications filter is required');
	const honored = {};
	if (f.toolsListChanged === true)
		honored.toolsListChanged = true;
	if (f.resourcesListChanged === true)
		honored.resourcesListChanged = true;
	const uris = Array.isArray(f.resourceSubscriptions) ? f.resourceSubscriptions.filter((u) => typeof u === 'string') : [];
	if (uris.length)
		honored.resourceSubscriptions = uris;
	const tag = { [K_SUB]: id };
	const plan = [notif('notifications/subscriptions/acknowledged', { _meta: tag, notifications: honored })];
	for (const uri of uris)
		plan.push(notif('notifications/resources/updated', { _meta: tag, uri }));
	if (honored.toolsListChanged)
		plan.push(notif('notifications/tools/list_changed', { _meta: tag }));
	if (honored.resourcesListChanged)
		plan.push(notif('notifications/resources/list_changed', { _meta: tag }));
	for (const uri of uris)
		plan.push(notif('notifications/resources/updated', { _meta: tag, uri }));

	let timer = null;
	let done = false;
	const stop = () => {
		done = true;
		clearTimeout(timer);
		clearInterval(timer);
	};
	sink.onCancel(stop);
	const graceful = () => {	// server shutdown: end it with the result
		stop();
		sink.respond(result(id, { _meta: tag }));
	};
	if (!sink.stdio) {
		openListens.add(graceful);
		sink.onCancel(() => { stop(); openListens.delete(graceful); });
	}
	const step = (i) => {
		if (done)
			return;
		if (i < plan.length) {
			sink.notify(plan[i]);
			timer = setTimeout(step, 10, i + 1);
			return;
		}
		if (opts.listenEnd === 'result') {
			openListens.delete(graceful);
			graceful();
		} else if (opts.listenEnd === 'cancelled') {
			openListens.delete(graceful);
			stop();
			if (sink.stdio)
				sink.notify(notif('notifications/cancelled', { requestId: id, reason: 'subscription ended by the server' }));
			sink.end();
		} else if (!sink.stdio) {
			timer = setInterval(() => sink.comment(), 15000);
		}
	};
	step(0);
}

/* ---- stdio ---- */

function runStdio() {
	const out = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
	const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
	rl.on('line', (line) => {
		if (line.trim() === '')
			return;
		let msg;
		try {
			msg = JSON.parse(line);
		} catch {
			return out(errorMsg(undefined, new RpcError(-32700, 'Parse error')));
		}
		if (!isObj(msg) || msg.jsonrpc !== '2.0')
			return out(errorMsg(isObj(msg) ? msg.id : undefined, new RpcError(-32600, 'Invalid Request')));
		if (typeof msg.method !== 'string') {
			process.stderr.write('peer2026: ignoring a JSON-RPC response from the client (servers send no requests in 2026-07-28)\n');
			return;
		}
		if (!('id' in msg)) {
			if (msg.method === 'notifications/cancelled' && isObj(msg.params)) {
				const key = JSON.stringify(msg.params.requestId);
				const cancel = listens.get(key);
				if (cancel)
					cancel();
			}
			return;
		}
		if (msg.id === null || (typeof msg.id !== 'string' && typeof msg.id !== 'number'))
			return out(errorMsg(undefined, new RpcError(-32600, 'Invalid Request: id must be a string or a number')));
		const key = JSON.stringify(msg.id);
		let cancelFn = null;
		let finished = false;
		const finish = () => {
			finished = true;
			if (listens.get(key) === cancelFn)
				listens.delete(key);
		};
		handleRequest(msg, {
			stdio: true,
			notify: (m) => { if (!finished) out(m); },
			respond: (m) => { if (!finished) { out(m); finish(); } },
			end: finish,
			comment: () => {},
			onCancel: (fn) => {
				cancelFn = () => { fn(); finish(); };
				listens.set(key, cancelFn);
			},
		});
	});
	rl.on('close', () => {
		for (const cancel of [...listens.values()])
			cancel();
	});
}

/* ---- Streamable HTTP ---- */

function decodeHeader(v) {
	const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(v);
	return m ? Buffer.from(m[1], 'base64').toString('utf8') : v;
}

function headerMatches(h, value, type) {
	if (type === 'integer' || type === 'number')
		return h.trim() !== '' && Number(h) === value;
	if (type === 'boolean')
		return h === String(value);
	return h === String(value);
}

// Header checks of a request; throws RpcError -32020 (400).
function checkHeaders(req, msg) {
	const bad = (why) => new RpcError(-32020, `Header mismatch: ${why}`, undefined, 400);
	const pvh = req.headers['mcp-protocol-version'];
	if (pvh === undefined)
		throw bad(`MCP-Protocol-Version header is required (this server speaks ${VERSION} only)`);
	const mh = req.headers['mcp-method'];
	if (mh === undefined)
		throw bad('Mcp-Method header is required');
	if (mh !== msg.method)
		throw bad(`Mcp-Method header value '${mh}' does not match body value '${msg.method}'`);
	const params = isObj(msg.params) ? msg.params : {};
	if (['tools/call', 'resources/read', 'prompts/get'].includes(msg.method)) {
		const want = msg.method === 'resources/read' ? params.uri : params.name;
		const nh = req.headers['mcp-name'];
		if (nh === undefined)
			throw bad('Mcp-Name header is required');
		if (decodeHeader(nh) !== want)
			throw bad(`Mcp-Name header value '${nh}' does not match body value '${want}'`);
	}
	if (msg.method === 'tools/call') {
		const tool = TOOLS.find((t) => t.name === params.name);
		const args = isObj(params.arguments) ? params.arguments : {};
		for (const ph of tool ? paramHeaders(tool) : []) {
			let v = args;
			for (const k of ph.path)
				v = isObj(v) ? v[k] : undefined;
			const name = `mcp-param-${ph.header.toLowerCase()}`;
			const h = req.headers[name];
			if (v === undefined || v === null) {
				if (h !== undefined)
					throw bad(`Mcp-Param-${ph.header} header given but the argument is absent`);
				continue;
			}
			if (h === undefined)
				throw bad(`Mcp-Param-${ph.header} header is required`);
			if (!headerMatches(decodeHeader(h), v, ph.type))
				throw bad(`Mcp-Param-${ph.header} header value '${h}' does not match body value '${v}'`);
		}
	}
	return pvh;
}

function okOrigin(origin) {
	try {
		const u = new URL(origin);
		return (u.protocol === 'http:' || u.protocol === 'https:') && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
	} catch {
		return false;
	}
}

function sendJson(res, status, m) {
	const body = JSON.stringify(m);
	res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
	res.end(body);
}

function httpSink(res) {
	let sse = false;
	let finished = false;
	let cancel = null;
	const openSse = () => {
		if (sse)
			return;
		sse = true;
		res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
	};
	res.on('close', () => {
		if (!finished) {
			finished = true;
			if (cancel)
				cancel();	// the client closed the stream: that cancels
		}
	});
	return {
		stdio: false,
		notify(m) {
			if (finished)
				return;
			openSse();
			res.write(`data: ${JSON.stringify(m)}\n\n`);
		},
		respond(m, status = 200) {
			if (finished)
				return;
			finished = true;
			if (sse)
				res.end(`data: ${JSON.stringify(m)}\n\n`);
			else
				sendJson(res, status, m);
		},
		end() {
			if (finished)
				return;
			finished = true;
			if (!sse)
				openSse();
			res.end();
		},
		comment() {
			if (!finished && sse)
				res.write(':\n\n');
		},
		onCancel(fn) {
			cancel = fn;
		},
	};
}

function handleHttp(req, res) {
	if (req.method !== 'POST') {
		res.writeHead(405, { Allow: 'POST', 'Content-Length': 0 });
		return res.end();
	}
	if (req.headers.origin !== undefined && !okOrigin(req.headers.origin))
		return sendJson(res, 403, errorMsg(undefined, new RpcError(-32600, `Forbidden origin ${req.headers.origin}`)));
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		let msg;
		try {
			msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
		} catch {
			return sendJson(res, 400, errorMsg(undefined, new RpcError(-32700, 'Parse error')));
		}
		if (Array.isArray(msg))
			return sendJson(res, 400, errorMsg(undefined, new RpcError(-32600, 'Invalid Request: batches are not supported')));
		if (!isObj(msg) || msg.jsonrpc !== '2.0')
			return sendJson(res, 400, errorMsg(undefined, new RpcError(-32600, 'Invalid Request')));
		if (typeof msg.method !== 'string')
			return sendJson(res, 400, errorMsg(undefined, new RpcError(-32600, 'Invalid Request: clients send no JSON-RPC responses in 2026-07-28')));
		if (!('id' in msg)) {
			res.writeHead(202, { 'Content-Length': 0 });
			return res.end();
		}
		if (msg.id === null || (typeof msg.id !== 'string' && typeof msg.id !== 'number'))
			return sendJson(res, 400, errorMsg(undefined, new RpcError(-32600, 'Invalid Request: id must be a string or a number')));
		try {
			const pvh = checkHeaders(req, msg);
			if (msg.method !== 'initialize') {
				const meta = checkMeta(msg.params);
				if (meta[K_PV] !== pvh)
					throw new RpcError(-32020, `Header mismatch: MCP-Protocol-Version header value '${pvh}' does not match body value '${meta[K_PV]}'`, undefined, 400);
			}
		} catch (e) {
			if (!(e instanceof RpcError))
				throw e;
			return sendJson(res, e.status, errorMsg(msg.id, e));
		}
		handleRequest(msg, httpSink(res));
	});
}

function runHttp() {
	const server = http.createServer(handleHttp);
	server.listen(0, '127.0.0.1', () => {
		process.stdout.write(`peer2026: listening on http://127.0.0.1:${server.address().port}\n`);
	});
	const bye = () => {
		for (const end of [...openListens])
			end();
		server.closeIdleConnections?.();
		server.close(() => process.exit(0));
		setTimeout(() => process.exit(0), 200).unref();
	};
	process.on('SIGINT', bye);
	process.on('SIGTERM', bye);
}

if (opts.http)
	runHttp();
else
	runStdio();
