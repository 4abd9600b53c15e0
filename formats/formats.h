/*
 * formats: interchange.  A recorded session written out or read in as a
 * file of another shape (JSONL cassettes, HAR, mcp-tape), and MCP traffic
 * as OpenTelemetry traces (OTLP) sent to a collector or written to a file.
 * The commands call these and parse arguments; nothing here parses a
 * command line or knows cli/.
 */
#ifndef MCPREEL_FORMATS_H
#define MCPREEL_FORMATS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core.h"

/*
 * The files formats write and read: a session written out (JSONL, HAR)
 * and read back in (JSONL, mcp-tape).
 */
struct store;

/* formats.c: a session written out as a file, whole or not at all. */
enum formats_kind {
	FORMATS_JSONL,		/* jsonl_export.c: the cassette */
	FORMATS_HAR,		/* har.c: an HTTP Archive */
	FORMATS_MAX
};
int		 formats_export(struct store *, int64_t, enum formats_kind,
		     const char *, char **);
/*
 * A file being written: stdout (a NULL or "-" path); what is not a
 * regular file (a device such as /dev/null, a pipe), written as it is;
 * else a private temporary file beside it (beside what a symbolic link
 * points to, so the link stays), synced and renamed over it once
 * complete.  formats_open()'s int, keep_mode: a file there keeps its
 * mode (else the new one is private, 0600).
 */
struct formats_file {
	FILE		*f;
	const char	*path;
	char		*tmp;		/* the temporary file, or NULL */
	char		*real;		/* path with links resolved, or NULL */
};
FILE		*formats_open(struct formats_file *, const char *, int,
		     char **);
int		 formats_close(struct formats_file *, int, char **);
int		 formats_write_file(const char *, const char *const *,
		     const size_t *, char **);

/* fjson.c: bytes and text as JSON members, losing nothing. */
json_t		*fjson_str(const char *);
void		 fjson_bytes(json_t *, const char *, const char *,
		     const void *, size_t);
void		 fjson_text(json_t *, const char *, const char *,
		     const char *);
struct fault_row;
void		 fjson_fault_rule(json_t *, const struct fault_row *);

/* jsonl_export.c: a session as JSON lines (what import reads back). */
#define JSONL_FORMAT	"mcpreel-jsonl"	/* the header line's "format" */
/*
 * Its "version": 2 when the session holds injected faults ("fault"
 * lines, messages' "fault" and "fault_role", exchanges' "fault"), which
 * an mcpreel that reads only 1 refuses rather than lose; else 1.  Import
 * reads both.
 */
#define JSONL_VERSION		2
#define JSONL_VERSION_PLAIN	1
int		 jsonl_export(struct store *, int64_t, FILE *, int *,
		     char **);

/* har.c: an HTTP session as an HTTP Archive (HAR 1.2). */
int		 har_write(struct store *, int64_t, FILE *, char **);

/* import.c: a session read in from a file, JSON lines or mcp-tape. */
enum import_format {
	IMPORT_AUTO,		/* told from the first line */
	IMPORT_JSONL,		/* what jsonl_export() writes */
	IMPORT_TAPE,		/* an mcp-tape trace */
	IMPORT_FORMAT_MAX
};
struct import_opts {
	const char	*path;		/* as given; "-" is stdin */
	FILE		*file;		/* read from (the caller's) */
	enum import_format format;
	const char	*name;		/* the session's name, or NULL: the
					   file's */
	size_t		 max_record;	/* --max-record-size, 0: none */
	int		 keep;		/* a cassette: keep the file's
					   session id, no imported_from */
	int		 scratch;	/* into a scratch store
					   (STORE_SCRATCH) */
	/* import_sink(): each message (sink takes it) and its seq;
	   required there (else -1 with cause), unused by import_file(). */
	void		(*sink)(struct msg *, int64_t, void *);
	void		*sink_arg;
};
struct import_result {
	int64_t		 id;		/* import_file(): the session's id;
					   import_sink(): the file's
					   "session", 0 for none */
	char		*name;		/* import_sink(): the session's name,
					   or NULL; r's, freed by
					   import_result_clear() (set it
					   NULL to take it over) */
	int64_t		 messages;	/* handed to the writer or sink */
	int64_t		 events;
	int64_t		 faults;
	size_t		 exchanges;	/* HTTP exchanges */
	int		 store_failed;	/* the database, not the file, failed */
	char		*cause;		/* the first error; r's, as name */
};
int		 import_file(const struct import_opts *, const char *,
		     struct import_result *);
int		 import_sink(const struct import_opts *,
		     struct import_result *);
void		 import_result_clear(struct import_result *);

/* obuf.c: a growable byte buffer the encoders write into. */
struct obuf {
	uint8_t		*p;
	size_t		 len;
	size_t		 cap;
};
void		 obuf_init(struct obuf *);
void		 obuf_free(struct obuf *);
void		 obuf_reset(struct obuf *);
void		 obuf_add(struct obuf *, const void *, size_t);
void		 obuf_byte(struct obuf *, uint8_t);
void		 obuf_str(struct obuf *, const char *);

/*
 * OTLP: MCP traffic as spans following OpenTelemetry's semantic
 * conventions for MCP (mcp.method.name, gen_ai.tool.name, ...).  Three
 * steps, each its own file:
 *
 *   a message ──otlp_fact_new()──> facts      (exporter thread; for a
 *                                             large message the loop's)
 *   facts ──otlp_builder──> spans             (exporter thread; pure)
 *   spans ──otlp_pb_traces()/otlp_json_traces()──> bytes   (pure)
 *
 * and otlp_export.c, which runs the second and third on a thread of its
 * own behind a bounded queue and sends the bytes to a collector.
 */

/* Which peer mcpreel reports for (--otlp-side). */
enum otlp_side {
	OTLP_SIDE_SERVER,	/* the default: mcpreel stands where the server
				   is; a client's request is a SERVER span, a
				   server's request (sampling, elicitation,
				   roots) a CLIENT span */
	OTLP_SIDE_CLIENT,	/* the mirror: for mcpreel in front of a remote
				   server */
	OTLP_SIDE_MAX
};

/* OTLP's enums, as integers (OTLP/JSON writes them as numbers too). */
#define OTLP_KIND_INTERNAL	1
#define OTLP_KIND_SERVER	2
#define OTLP_KIND_CLIENT	3
#define OTLP_STATUS_UNSET	0
#define OTLP_STATUS_OK		1
#define OTLP_STATUS_ERROR	2
/* trace.proto's SpanFlags: bits of Span.flags beside the trace flags. */
#define OTLP_SPAN_FLAGS_HAS_IS_REMOTE	0x100u
#define OTLP_SPAN_FLAGS_IS_REMOTE	0x200u

/*
 * A payload attribute (--otlp-payloads: gen_ai.tool.call.arguments and
 * .result, gen_ai.prompt.variable.*) larger than this is left out, with
 * the span attribute mcpreel.payload_omitted saying which: collectors
 * refuse requests of a few MiB, and one answer must not cost a batch.
 */
#define OTLP_PAYLOAD_MAX	((size_t)64 * 1024)
/* A string attribute (a tool name, a URI, an id) longer is cut here. */
#define OTLP_STRING_MAX		((size_t)1024)
/* An id whose text is longer is paired by its SHA-256 (otlp_fact.id_key). */
#define OTLP_ID_KEY_MAX		((size_t)4096)

/* otlp_fact.c: what a span needs of one message. */
struct otlp_fact {
	enum dir	 dir;
	enum msg_kind	 kind;		/* KIND_REQUEST, _NOTIFICATION,
					   _RESPONSE, _ERROR */
	int64_t		 ts_ns;		/* the message's wall time */
	char		*method;	/* request, notification */
	size_t		 method_len;	/* strings may hold a NUL (a \u0000):
					   method, name, uri and message have
					   their lengths */
	char		*id;		/* the id's JSON text as written (so
					   "7" and 7 stay apart), or NULL for
					   none or null */
	char		*id_key;	/* what pairs the id: its whole JSON
					   text up to OTLP_ID_KEY_MAX bytes,
					   past it "#sha256:" and the hex
					   SHA-256 of the whole text */
	char		*jsonrpc;	/* "jsonrpc" when not "2.0", else NULL */
	char		*name;		/* params.name: tools/call,
					   prompts/get */
	size_t		 name_len;
	char		*uri;		/* params.uri: resources/read,
					   subscribe, unsubscribe,
					   notifications/resources/updated */
	size_t		 uri_len;
	char		*traceparent;	/* params._meta.traceparent */
	char		*tracestate;	/* params._meta.tracestate */
	char		*protocol_version; /* initialize: params.protocolVersion
					   asked, result.protocolVersion
					   answered */
	char		*meta_version;	/* params._meta["io.modelcontextprotocol/
					   protocolVersion"] (2026-07-28 and
					   later: each request names its
					   version) */
	char		*cancel_id;	/* notifications/cancelled: the
					   params.requestId's key (as id_key) */
	int		 tool_error;	/* a result with "isError": true */
	int		 has_code;	/* an error response: */
	int64_t		 code;		/*   error.code */
	char		*code_text;	/*   an integer error.code past
					   int64: its text (has_code 0) */
	char		*message;	/*   error.message, cut to
					   OTLP_STRING_MAX */
	size_t		 message_len;
	char		*payload;	/* with payloads: the JSON text of a
					   tools/call's params.arguments, a
					   prompts/get's params.arguments, or
					   the result of an answer; NULL when
					   none or over OTLP_PAYLOAD_MAX */
	int		 payload_omitted; /* there was one, over the limit */
	size_t		 size;		/* bytes this fact holds, for the
					   exporter's bound */
	struct otlp_fact *next;		/* a batch's elements; the queue */
	void		*sess;		/* the exporter's, untouched here */
};
/*
 * The facts of message m (a list: a JSON-RPC batch gives one per
 * element), taken with scan_members() and no parse of the whole message;
 * NULL when m is not JSON-RPC a span can come of (not JSON, a bare
 * value).  A message cut at the record cap (MSG_TRUNCATED) is read from
 * its ident.  payloads: keep the payload texts.  Pure.
 */
struct otlp_fact *otlp_fact_new(const struct msg *, int);
void		 otlp_fact_free(struct otlp_fact *);	/* the whole list */

/* otlp_span.c: facts in, spans out. */

/* What a session's spans all say (copied by otlp_builder_new). */
struct otlp_sess_info {
	const char	*transport;	/* "stdio", "http" or "sse" */
	int64_t		 started_ns;	/* the session's started_ns */
	const char	*target;	/* the session's target as stored */
	const char	*client_address; /* HTTP: the client's address, */
	int		 client_port;	/*   and port (0: unknown) */
	const char	*server_address; /* HTTP: the upstream's host, */
	int		 server_port;	/*   and port */
};

/*
 * A payload attribute (--otlp-payloads) of a span, kept as text while
 * the span waits for its answer and made a value only when the span is
 * encoded (otlp_payload_value): a parsed JSON tree costs tens of times
 * its text.
 */
struct otlp_payload {
	char		*key;		/* gen_ai.tool.call.arguments, ... */
	char		*text;		/* JSON text (json), or a string's
					   value (valid UTF-8; may hold NUL) */
	size_t		 len;		/* of text */
	int		 json;		/* 1: a structured value when it
					   parses (see otlp_payload_value) */
	struct otlp_payload *next;
};
/*
 * A structured payload of more values than this is sent as its JSON text
 * (a string value), as one nested deeper than OTLP_VALUE_DEPTH is.
 */
#define OTLP_VALUE_NODES	4096
/*
 * Payload text a builder holds across its requests waiting for answers;
 * a request's payload past it is left out (mcpreel.payload_omitted).
 */
#define OTLP_PAYLOAD_PENDING_MAX ((size_t)4 * 1024 * 1024)
/*
 * The attribute value of payload p, for the encoders (a new reference):
 * a string for a string payload; for a JSON one its structured value,
 * or its text as a string when it does not parse (a lone surrogate, an
 * integer past int64) or holds more than OTLP_VALUE_NODES values.
 */
json_t		*otlp_payload_value(const struct otlp_payload *);

struct otlp_span {
	uint8_t		 trace_id[16];
	uint8_t		 span_id[8];
	uint8_t		 parent_id[8];
	int		 has_parent;	/* from params._meta.traceparent */
	uint32_t	 flags;		/* Span.flags: the traceparent's trace
					   flags (low 8 bits), and
					   OTLP_SPAN_FLAGS_HAS_IS_REMOTE, with
					   _IS_REMOTE when the parent is */
	char		*trace_state;	/* params._meta.tracestate, or NULL */
	char		*name;		/* "tools/call echo", "initialize" */
	size_t		 name_len;	/* name and status_message may hold a
					   NUL: their lengths (0: up to it) */
	int		 kind;		/* OTLP_KIND_* */
	int64_t		 start_ns;	/* wall time, ns since the epoch */
	int64_t		 end_ns;
	int		 status;	/* OTLP_STATUS_* */
	char		*status_message; /* JSONRPCError.message, or NULL */
	size_t		 status_message_len;
	json_t		*attrs;		/* an object: each member an attribute;
					   strings, integers, reals, booleans;
					   an object or array is a structured
					   value (kvlist, array) */
	struct otlp_payload *payloads;	/* payload attributes, as text */
	struct otlp_span *next;
};

/*
 * The spans of one session, built from its facts in the order they
 * passed.  A request is a span from the request to its answer (paired by
 * direction and id, at most OTLP_PENDING_MAX waiting; the oldest beyond
 * that ends as error.type "unanswered"); a notification is a span of no
 * length; a notifications/cancelled ends the span of the request it
 * names (error.type "cancelled").  Without a traceparent in
 * params._meta, a span's trace is the session's: one trace id for the
 * whole session, from its started_ns, transport and target, so the
 * spans of a session are one trace live and from `export` alike.
 * mcp.session.id is likewise derived from the session (an MCP session id
 * is a credential and never leaves mcpreel).  Span ids are random.
 */
#define OTLP_PENDING_MAX	4096
struct otlp_builder;
struct otlp_builder *otlp_builder_new(const struct otlp_sess_info *,
		     enum otlp_side, int);
/*
 * Take fact f (a list; the builder frees it); spans completed are
 * appended to the list *out.  The list's end is looked for once per
 * call: a caller keeping a long list passes its last next pointer.
 */
void		 otlp_builder_fact(struct otlp_builder *, struct otlp_fact *,
		     struct otlp_span **);
/* The session is over at end_ns: every request still waiting ends
   (error.type "unanswered") and is appended. */
void		 otlp_builder_end(struct otlp_builder *, int64_t,
		     struct otlp_span **);
/* Forget the request of a direction and id (its answer was dropped):
   1 if one waited (its span is freed, never sent), else 0. */
int		 otlp_builder_forget(struct otlp_builder *, enum dir,
		     const char *);
void		 otlp_builder_free(struct otlp_builder *);
void		 otlp_span_free(struct otlp_span *);	/* the whole list */
/* The session's mcp.session.id and trace id (hex, 32 digits each). */
void		 otlp_session_key(const struct otlp_sess_info *, char [33]);
/* The session's trace id (the spans without a traceparent). */
void		 otlp_session_trace_id(const struct otlp_sess_info *,
		     uint8_t [16]);
/*
 * A W3C traceparent's trace and parent span ids: 0, or -1 if invalid.
 * Version 00 is exactly 55 characters; a later version (not ff) is read
 * by its first 55 when the 56th is absent or '-', as W3C says.
 */
int		 otlp_traceparent_parse(const char *, uint8_t [16],
		     uint8_t [8]);

/* otlp_pb.c, otlp_json.c: spans to an ExportTraceServiceRequest. */

/*
 * A structured attribute value nested deeper than this is written as its
 * JSON text (a string value): backends refuse or flatten deep values.
 */
#define OTLP_VALUE_DEPTH	32

/* The resource and scope every request carries. */
struct otlp_resource {
	const char	*service_name;	/* service.name */
	json_t		*attrs;		/* more resource attributes (an
					   object; OTEL_RESOURCE_ATTRIBUTES),
					   or NULL */
};
/* Protobuf (application/x-protobuf), appended to out. */
void		 otlp_pb_traces(const struct otlp_resource *,
		     const struct otlp_span *, struct obuf *);
/* OTLP/JSON (application/json), one line without its newline. */
void		 otlp_json_traces(const struct otlp_resource *,
		     const struct otlp_span *, struct obuf *);

/* otlp_export.c: a bounded queue, a thread, and a collector. */
enum otlp_protocol {
	OTLP_HTTP_PROTOBUF,	/* http/protobuf, the default */
	OTLP_HTTP_JSON,		/* http/json */
	OTLP_PROTOCOL_MAX
};
struct otlp_config {
	char		*endpoint;	/* the traces URL (…/v1/traces) */
	char		**headers;	/* "Name: value" each (credentials:
					   never logged, never stored) */
	size_t		 nheaders;
	enum otlp_protocol protocol;
	int		 timeout_ms;	/* one export, retries included */
	char		*service_name;
	json_t		*resource_attrs; /* or NULL */
	enum otlp_side	 side;
	int		 payloads;	/* --otlp-payloads */
	int		 block;		/* export --otlp: wait for room
					   rather than drop */
	const char	*cacert;	/* https: a CA file, or NULL */
	int		 insecure;	/* https: no verification */
};
/*
 * Fill c from url (--otlp URL, or NULL) and the environment as the
 * OpenTelemetry SDKs read it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used
 * as is), OTEL_EXPORTER_OTLP_ENDPOINT (+ "/v1/traces"),
 * OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, _PROTOCOL, _TIMEOUT,
 * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES.  A URL given wins over the
 * environment.  -1 with *cause when nothing names a collector or a value
 * is bad (grpc: not supported, said so).
 */
int		 otlp_config_env(struct otlp_config *, const char *, char **);
/* Add "Name: value" (--otlp-header); the value is never quoted back. */
int		 otlp_config_header(struct otlp_config *, const char *,
		     char **);
void		 otlp_config_clear(struct otlp_config *);

/* otlp_config.c: a collector's URL, split. */
struct otlp_url {
	int		 tls;		/* https */
	char		*host;		/* without brackets */
	char		*port;
	char		*hostport;	/* as written: the Host header */
	char		*path;		/* path and query as written, or "" */
};
int		 otlp_url_parse(const char *, struct otlp_url *, char **);
void		 otlp_url_clear(struct otlp_url *);

/*
 * otlp_http.c: a blocking HTTP/1.1 client for the exporter's thread: one
 * keep-alive connection (TCP or TLS) to the collector, every wait a poll
 * bounded by a deadline.
 */
struct otlp_http;
struct otlp_http *otlp_http_new(const struct otlp_config *, char **);
/*
 * POST body to the endpoint, done by deadline (clock_mono_ns): 0 with
 * the status and Retry-After in seconds (-1: none) when an answer came,
 * -1 with *cause when none did (connect, TLS, timeout, a bad answer),
 * -2 with *cause when trying again cannot mend it (the certificate).
 */
int		 otlp_http_post(struct otlp_http *, const void *, size_t,
		     int64_t, int *, int *, char **);
/* Spans the last 2xx answer said it rejected (its partial_success,
   read when the body is short): they count as dropped. */
int64_t		 otlp_http_rejected(const struct otlp_http *);
void		 otlp_http_free(struct otlp_http *);
/*
 * A second deadline (clock_mono_ns) another thread may bring forward
 * (otlp_stop's): every wait also ends by it, seen within
 * OTLP_HTTP_SLICE_MS.  NULL: none.
 */
#define OTLP_HTTP_SLICE_MS	50
void		 otlp_http_limit(struct otlp_http *, const _Atomic int64_t *);

struct otlp;
struct otlp_sess;
struct otlp	*otlp_start(const struct otlp_config *, char **);
/* The calls below are for one thread (the event loop's). */
/* A session lives until otlp_free; once its end is processed only a
   small struct (for otlp_session_dropped) stays of it. */
struct otlp_sess *otlp_session(struct otlp *, const struct otlp_sess_info *);
/*
 * Message m of session s passed.  Never blocks (unless block): when the
 * queue is full (OTLP_QUEUE_MAX facts or OTLP_QUEUE_BYTES) the message's
 * span is dropped and counted against s.
 */
#define OTLP_QUEUE_MAX		32768
#define OTLP_QUEUE_BYTES	((size_t)16 * 1024 * 1024)
/*
 * A message up to this size is queued as a copy of its bytes (counted in
 * OTLP_QUEUE_BYTES) and made into facts on the exporter's thread; a
 * larger one is made into facts at once (no large copy: its facts are
 * smaller than its bytes, so a slow collector's queue holds more).
 */
#define OTLP_COPY_MAX		((size_t)4 * 1024)
void		 otlp_message(struct otlp *, struct otlp_sess *,
		     const struct msg *);
void		 otlp_session_end(struct otlp *, struct otlp_sess *, int64_t);
/*
 * Send what is queued, waiting at most deadline_ms; what is left is
 * dropped and counted.  After it, the counts are final.
 */
void		 otlp_stop(struct otlp *, int);
/* Spans of s dropped (queue full, collector failing), after otlp_stop. */
uint64_t	 otlp_session_dropped(const struct otlp_sess *);
/* Totals, after otlp_stop: spans sent and dropped. */
void		 otlp_totals(const struct otlp *, uint64_t *, uint64_t *);
void		 otlp_free(struct otlp *);	/* and its sessions */

/* otlp_file.c: a recorded session as spans (export --format otlp). */
struct store;
int		 otlp_file_session(struct store *, int64_t,
		     const struct otlp_config *, FILE *, uint64_t *,
		     uint64_t *, char **);

#endif
