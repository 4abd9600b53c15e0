/*
 * otlp_span.c: a session's facts in, spans out, as OpenTelemetry's
 * semantic conventions for MCP say: one span per request (from the
 * request to its answer) and one per notification (of no length), named
 * "{mcp.method.name} {target}", of kind SERVER or CLIENT by who sent it
 * and which side mcpreel reports for, with the conventions' attributes
 * and their rules for what is an error on which side.  Pure apart from
 * the random span ids; runs on the exporter's thread (and in export).
 */

#include <sys/random.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"

/*
 * Buckets of the pending table: it starts small (a builder per session,
 * most with a few requests in flight) and doubles while it holds more
 * requests than buckets, up to a power of two above OTLP_PENDING_MAX.
 */
#define OTLP_PENDING_BUCKETS_MIN	16
#define OTLP_PENDING_BUCKETS_MAX	8192

/* A request waiting for its answer. */
struct otlp_pend {
	enum dir	 dir;		/* the request's */
	char		*id;		/* its id's JSON text ("null": null) */
	uint32_t	 hash;
	int		 tools_call;	/* tools/call: isError and result */
	int		 initialize;	/* initialize: the version answered */
	size_t		 payload_bytes;	/* payload text its span holds */
	char		*omitted;	/* mcpreel.payload_omitted so far */
	struct otlp_span *span;
	struct otlp_pend *hnext;	/* the bucket's chain */
	struct otlp_pend *prev, *next;	/* oldest first */
};

struct otlp_builder {
	char		*transport;
	char		*client_address;
	int		 client_port;
	char		*server_address;
	int		 server_port;
	enum otlp_side	 side;
	int		 payloads;
	uint8_t		 trace_id[16];
	char		 session_id[33];
	char		*protocol_version;	/* the session's so far */
	size_t		 payload_bytes;		/* payload text of the spans
						   waiting (at most
						   OTLP_PAYLOAD_PENDING_MAX) */
	int		 sessionless;		/* a version of 2026-07-28 or
						   later seen: no MCP session,
						   no mcp.session.id */
	struct otlp_pend **buckets;
	size_t		 nbuckets;		/* a power of two */
	struct otlp_pend *oldest, *newest;
	size_t		 npending;
	uint8_t		 rnd[256];		/* random bytes for span ids */
	size_t		 rnd_off;
	uint64_t	 prng;			/* without getrandom */
	int		 no_getrandom;
	struct otlp_span **tail;		/* the caller's list's end,
						   during one call */
};

/* The JSON-RPC codes that are the caller's fault: no error on a SERVER. */
static const int64_t otlp_span_caller_codes[] = {
	-32700,		/* parse error */
	-32600,		/* invalid request */
	-32601,		/* method not found */
	-32602,		/* invalid params */
	-32002,		/* resource not found */
};

/* Said once per process when there is no getrandom. */
static int otlp_span_warned;

/* SHA-256 over label + the session's started_ns, transport and target. */
static void
otlp_span_key(const struct otlp_sess_info *si, const char *label,
    uint8_t out[16])
{
	struct digest	*d = digest_new();
	char		 ts[32], *hex;
	size_t		 i;

	snprintf(ts, sizeof ts, "%lld", (long long)si->started_ns);
	digest_update(d, label, strlen(label));
	digest_update(d, ts, strlen(ts));
	digest_update(d, "\n", 1);
	if (si->transport != NULL)
		digest_update(d, si->transport, strlen(si->transport));
	digest_update(d, "\n", 1);
	if (si->target != NULL)
		digest_update(d, si->target, strlen(si->target));
	hex = digest_hex_free(d);
	for (i = 0; i < 16; i++)
		out[i] = (uint8_t)(scan_hex_value(hex[2 * i]) << 4 |
		    scan_hex_value(hex[2 * i + 1]));
	free(hex);
}

/* Lower-case hex of n bytes at p into out (room for 2n + 1). */
static void
otlp_span_hex(const uint8_t *p, size_t n, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
}

/* The session's mcp.session.id: a pseudonym, never the MCP session id. */
void
otlp_session_key(const struct otlp_sess_info *si, char out[33])
{
	uint8_t	 k[16];

	otlp_span_key(si, "mcpreel session\n", k);
	otlp_span_hex(k, sizeof k, out);
}

/* The session's trace id, for spans without a traceparent. */
void
otlp_session_trace_id(const struct otlp_sess_info *si, uint8_t out[16])
{
	otlp_span_key(si, "mcpreel trace\n", out);
}

/* Refill the random bytes; without getrandom a seeded generator. */
static void
otlp_span_refill(struct otlp_builder *b)
{
	size_t		 off = 0, i;
	ssize_t		 n = 0;
	struct timespec	 rt, mono;
	uint64_t	 z;

	while (!b->no_getrandom && off < sizeof b->rnd) {
		n = getrandom(b->rnd + off, sizeof b->rnd - off,
		    GRND_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off < sizeof b->rnd) {
		if (!b->no_getrandom) {
			if (!__atomic_exchange_n(&otlp_span_warned, 1,
			    __ATOMIC_RELAXED))
				log_warnx("no random source (getrandom: %s): "
				    "span ids are taken from the clocks and "
				    "the pid", n < 0 ? strerror(errno) :
				    "short read");
			b->no_getrandom = 1;
			clock_gettime(CLOCK_REALTIME, &rt);
			clock_gettime(CLOCK_MONOTONIC, &mono);
			b->prng = ((uint64_t)rt.tv_sec << 32) ^
			    (uint64_t)rt.tv_nsec ^ ((uint64_t)getpid() << 16) ^
			    (uint64_t)(uintptr_t)b ^
			    ((uint64_t)mono.tv_nsec << 20);
		}
		/* splitmix64 */
		for (i = 0; i < sizeof b->rnd; i += 8) {
			z = (b->prng += 0x9e3779b97f4a7c15ULL);
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
			memcpy(b->rnd + i, &z, 8);
		}
	}
	b->rnd_off = 0;
}

/* A random span id, never all zero. */
static void
otlp_span_new_id(struct otlp_builder *b, uint8_t id[8])
{
	static const uint8_t	 zero[8];

	do {
		if (b->rnd_off + 8 > sizeof b->rnd)
			otlp_span_refill(b);
		memcpy(id, b->rnd + b->rnd_off, 8);
		b->rnd_off += 8;
	} while (memcmp(id, zero, 8) == 0);
}

/* A new builder for the session si; see formats.h. */
struct otlp_builder *
otlp_builder_new(const struct otlp_sess_info *si, enum otlp_side side,
    int payloads)
{
	struct otlp_builder	*b = xcalloc(1, sizeof *b);

	b->transport = xstrdup(si->transport != NULL ? si->transport :
	    "stdio");
	if (si->client_address != NULL)
		b->client_address = xstrdup(si->client_address);
	b->client_port = si->client_port;
	if (si->server_address != NULL)
		b->server_address = xstrdup(si->server_address);
	b->server_port = si->server_port;
	b->side = side;
	b->payloads = payloads;
	otlp_session_trace_id(si, b->trace_id);
	otlp_session_key(si, b->session_id);
	b->rnd_off = sizeof b->rnd;
	b->nbuckets = OTLP_PENDING_BUCKETS_MIN;
	b->buckets = xcalloc(b->nbuckets, sizeof *b->buckets);
	return b;
}

/* FNV-1a over the direction and the id text. */
static uint32_t
otlp_span_hash(enum dir d, const char *id)
{
	uint32_t	 h = 2166136261u ^ (uint32_t)d;

	for (; *id != '\0'; id++) {
		h ^= (unsigned char)*id;
		h *= 16777619u;
	}
	return h;
}

/* The request of direction d and id text id waiting, unlinked; or NULL. */
static struct otlp_pend *
otlp_span_take(struct otlp_builder *b, enum dir d, const char *id)
{
	uint32_t		 h = otlp_span_hash(d, id);
	struct otlp_pend	**pp, *p;

	for (pp = &b->buckets[h & (b->nbuckets - 1)]; (p = *pp) != NULL;
	    pp = &p->hnext) {
		if (p->hash == h && p->dir == d && strcmp(p->id, id) == 0)
			break;
	}
	if (p == NULL)
		return NULL;
	*pp = p->hnext;
	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		b->oldest = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	else
		b->newest = p->prev;
	b->npending--;
	return p;
}

/*
 * Append span s to the caller's list, whose end was found once when the
 * call began (so a call adding many spans is linear).
 */
static void
otlp_span_append(struct otlp_builder *b, struct otlp_span *s)
{
	s->next = NULL;
	*b->tail = s;
	b->tail = &s->next;
}

/* Find the end of the caller's list for this call's appends. */
static void
otlp_span_begin(struct otlp_builder *b, struct otlp_span **out)
{
	while (*out != NULL)
		out = &(*out)->next;
	b->tail = out;
}

/* A string attribute of n bytes (it may hold NUL): valid UTF-8 always. */
static void
otlp_span_attrn(json_t *attrs, const char *key, const char *v, size_t n)
{
	json_t	*j;
	char	*esc;

	if ((j = json_stringn(v, n)) == NULL) {
		esc = scan_utf8_escape(v);	/* up to a NUL: it is not */
		j = json_string(esc);
		free(esc);
	}
	if (j != NULL)
		json_object_set_new(attrs, key, j);
}

/* Whether fact f's method (it may hold a NUL) is m. */
static int
otlp_span_method_is(const struct otlp_fact *f, const char *m)
{
	return f->method_len == strlen(m) &&
	    memcmp(f->method, m, f->method_len) == 0;
}

/* A string attribute: valid UTF-8 always (other bytes escaped). */
static void
otlp_span_attr(json_t *attrs, const char *key, const char *v)
{
	json_t	*j;
	char	*esc;

	if ((j = json_string(v)) == NULL) {
		esc = scan_utf8_escape(v);
		j = json_string(esc);
		free(esc);
	}
	if (j != NULL)
		json_object_set_new(attrs, key, j);
}

/*
 * The id's attribute value: a string id's value, a number's text (the id
 * text was cut at OTLP_STRING_MAX, so a string may have lost its quote).
 */
static void
otlp_span_id_attr(json_t *attrs, const char *id)
{
	size_t	 n = strlen(id), o = 0, body, back;
	char	*v;

	if (n >= 2 && id[0] == '"') {
		/* the body: without its closing quote, or cut (then perhaps
		   inside an escape: drop up to 6 bytes until it decodes) */
		body = id[n - 1] == '"' ? n - 2 : n - 1;
		v = xmalloc(n);
		for (back = 0; back <= 6 && back <= body; back++) {
			o = 0;
			if (scan_string_decode(id + 1, body - back, v, &o) == 0)
				break;
			o = 0;
		}
		v[o] = '\0';
		otlp_span_attr(attrs, "jsonrpc.request.id", v);
		free(v);
	} else
		otlp_span_attr(attrs, "jsonrpc.request.id", id);
}

/* Parse a W3C traceparent; 0 and the ids when valid, else -1. */
int
otlp_traceparent_parse(const char *tp, uint8_t trace[16], uint8_t span[8])
{
	static const uint8_t	 zero[16];
	size_t			 i;
	int			 hi, lo;

	/* 00-<32 hex>-<16 hex>-<2 hex>; lower case, as W3C requires.  A
	   later version may go on after a '-'; ff is invalid. */
	if (tp == NULL || strnlen(tp, 56) < 55 || tp[2] != '-' ||
	    tp[35] != '-' || tp[52] != '-')
		return -1;
	if (strncmp(tp, "ff", 2) == 0)
		return -1;
	if (strncmp(tp, "00", 2) == 0 ? tp[55] != '\0' :
	    (tp[55] != '\0' && tp[55] != '-'))
		return -1;
	for (i = 0; i < 55; i++) {
		if (i == 2 || i == 35 || i == 52)
			continue;
		if (!((tp[i] >= '0' && tp[i] <= '9') ||
		    (tp[i] >= 'a' && tp[i] <= 'f')))
			return -1;
	}
	for (i = 0; i < 16; i++) {
		hi = scan_hex_value(tp[3 + 2 * i]);
		lo = scan_hex_value(tp[4 + 2 * i]);
		trace[i] = (uint8_t)(hi << 4 | lo);
	}
	for (i = 0; i < 8; i++) {
		hi = scan_hex_value(tp[36 + 2 * i]);
		lo = scan_hex_value(tp[37 + 2 * i]);
		span[i] = (uint8_t)(hi << 4 | lo);
	}
	if (memcmp(trace, zero, 16) == 0 || memcmp(span, zero, 8) == 0)
		return -1;
	return 0;
}

/* The kind of a span for a message sent in direction d. */
static int
otlp_span_kind(const struct otlp_builder *b, enum dir d)
{
	int	 from_client = (d == DIR_C2S);

	if (b->side == OTLP_SIDE_SERVER)
		return from_client ? OTLP_KIND_SERVER : OTLP_KIND_CLIENT;
	return from_client ? OTLP_KIND_CLIENT : OTLP_KIND_SERVER;
}

/* Add what to the comma-separated list of payloads left out. */
static void
otlp_span_omitted(char **list, const char *what)
{
	char	*s;

	if (*list == NULL) {
		*list = xstrdup(what);
		return;
	}
	xasprintf(&s, "%s,%s", *list, what);
	free(*list);
	*list = s;
}

/*
 * Whether the JSON text at p (len bytes) holds at most max values
 * (counted as its openings and commas outside strings, plus one).
 */
static int
otlp_span_nodes_within(const char *p, size_t len, size_t max)
{
	size_t	 i, n = 1;
	int	 in_str = 0;

	for (i = 0; i < len; i++) {
		if (in_str) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				in_str = 0;
			continue;
		}
		if (p[i] == '"')
			in_str = 1;
		else if (p[i] == '[' || p[i] == '{' || p[i] == ',') {
			if (++n > max)
				return 0;
		}
	}
	return 1;
}

/* A string value of n bytes at p: valid UTF-8 always (escaped if not). */
static json_t *
otlp_span_string_value(const char *p, size_t n)
{
	json_t	*j;
	char	*t, *esc;

	if ((j = json_stringn(p, n)) != NULL)
		return j;
	t = xstrndup(p, n);
	esc = scan_utf8_escape(t);
	j = json_string(esc);
	free(esc);
	free(t);
	return j != NULL ? j : json_string("");
}

/* A payload's attribute value, made when it is encoded; see formats.h. */
json_t *
otlp_payload_value(const struct otlp_payload *p)
{
	json_t	*j;

	if (p->json && otlp_span_nodes_within(p->text, p->len,
	    OTLP_VALUE_NODES) &&
	    (j = json_loadb(p->text, p->len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, NULL)) != NULL)
		return j;
	return otlp_span_string_value(p->text, p->len);
}

/* Add a payload attribute to span s (key and text copied). */
static void
otlp_span_payload_add(struct otlp_span *s, const char *key,
    const char *text, size_t len, int json)
{
	struct otlp_payload	*p = xcalloc(1, sizeof *p), **pp;

	p->key = xstrdup(key);
	p->text = xmalloc(len + 1);
	memcpy(p->text, text, len);
	p->text[len] = '\0';
	p->len = len;
	p->json = json;
	for (pp = &s->payloads; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = p;
}

/* The prompt variables being made from params.arguments. */
struct otlp_vars {
	const char		*buf;
	struct otlp_span	*s;
};

/* One member of prompts/get's params.arguments: a prompt variable. */
static int
otlp_span_var_cb(const struct scan_member *mb, void *arg)
{
	struct otlp_vars	*ov = arg;
	const char		*v = ov->buf + mb->val_off;
	char			*k, *key, *t;
	size_t			 n = 0, kn = 0;

	k = xmalloc(mb->key_len + 1);
	if (scan_string_decode(ov->buf + mb->key_off, mb->key_len, k,
	    &kn) != 0)
		kn = 0;
	k[kn] = '\0';
	xasprintf(&key, "gen_ai.prompt.variable.%s", k);
	if (mb->val_len >= 2 && v[0] == '"') {
		/* a string's value; a lone surrogate becomes U+FFFD */
		t = xmalloc(mb->val_len);
		if (scan_string_decode(v + 1, mb->val_len - 2, t, &n) != 0)
			n = 0;
		otlp_span_payload_add(ov->s, key, t, n, 0);
		free(t);
	} else
		otlp_span_payload_add(ov->s, key, v, mb->val_len, 0);
	free(key);
	free(k);
	return 0;
}

/*
 * prompts/get: each member of params.arguments a prompt variable (a
 * string: a string's value, else the value's JSON text), each on its own.
 */
static void
otlp_span_prompt_vars(struct otlp_span *s, const char *text, size_t len)
{
	struct otlp_vars	 ov = { text, s };

	(void)scan_members(text, len, otlp_span_var_cb, &ov);
}

/*
 * Whether protocol version v is 2026-07-28 or later, where MCP has no
 * sessions; a version not shaped as a date ("DRAFT-...") counts as new.
 */
static int
otlp_span_version_sessionless(const char *v)
{
	size_t	 i;

	for (i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (v[i] != '-')
				return 1;
		} else if (v[i] < '0' || v[i] > '9')
			return 1;
	}
	if (v[10] != '\0')
		return 1;
	return strcmp(v, "2026-07-28") >= 0;
}

/* The session's version is v now (seen in a message of it). */
static void
otlp_span_set_version(struct otlp_builder *b, const char *v)
{
	if (b->protocol_version != v) {
		free(b->protocol_version);
		b->protocol_version = xstrdup(v);
	}
	if (otlp_span_version_sessionless(v))
		b->sessionless = 1;
}

/* The attributes every span of the session has. */
static void
otlp_span_common(const struct otlp_builder *b, struct otlp_span *s,
    const struct otlp_fact *f)
{
	int	 http = strcmp(b->transport, "stdio") != 0;

	if (!b->sessionless)
		otlp_span_attr(s->attrs, "mcp.session.id", b->session_id);
	if (f->jsonrpc != NULL)
		otlp_span_attr(s->attrs, "jsonrpc.protocol.version",
		    f->jsonrpc);
	otlp_span_attr(s->attrs, "network.transport", http ? "tcp" : "pipe");
	if (http) {
		otlp_span_attr(s->attrs, "network.protocol.name", "http");
		otlp_span_attr(s->attrs, "network.protocol.version", "1.1");
	}
	/* The peer mcpreel stands for is the side's: the client's address
	   on the server side's SERVER spans, the upstream's on the client
	   side's CLIENT spans. */
	if (b->side == OTLP_SIDE_SERVER && s->kind == OTLP_KIND_SERVER &&
	    b->client_address != NULL) {
		otlp_span_attr(s->attrs, "client.address", b->client_address);
		if (b->client_port > 0)
			json_object_set_new(s->attrs, "client.port",
			    json_integer(b->client_port));
	}
	if (b->side == OTLP_SIDE_CLIENT && s->kind == OTLP_KIND_CLIENT &&
	    b->server_address != NULL) {
		otlp_span_attr(s->attrs, "server.address", b->server_address);
		if (b->server_port > 0)
			json_object_set_new(s->attrs, "server.port",
			    json_integer(b->server_port));
	}
}

/*
 * Set the span's error: error.type, status ERROR and its description
 * (msg, of msg_len bytes: it may hold a NUL).
 */
static void
otlp_span_error(struct otlp_span *s, const char *type, const char *msg,
    size_t msg_len)
{
	otlp_span_attr(s->attrs, "error.type", type);
	s->status = OTLP_STATUS_ERROR;
	free(s->status_message);
	s->status_message = NULL;
	s->status_message_len = 0;
	if (msg != NULL) {
		s->status_message = xmalloc(msg_len + 1);
		memcpy(s->status_message, msg, msg_len);
		s->status_message[msg_len] = '\0';
		s->status_message_len = msg_len;
	}
}

/*
 * The span a request or notification f starts.  charged: a request's,
 * the payload text its span holds while it waits (counted against the
 * builder's OTLP_PAYLOAD_PENDING_MAX); NULL for a notification.
 */
static struct otlp_span *
otlp_span_start(struct otlp_builder *b, const struct otlp_fact *f,
    char **omitted, size_t *charged)
{
	struct otlp_span	*s = xcalloc(1, sizeof *s);
	const char		*m = f->method, *target = NULL;
	size_t			 target_len = 0;
	int			 tools_call = otlp_span_method_is(f, "tools/call");
	int			 prompts_get = otlp_span_method_is(f,
				     "prompts/get");
	int			 over = 0;
	size_t			 plen;

	s->attrs = json_object();
	s->kind = otlp_span_kind(b, f->dir);
	s->start_ns = s->end_ns = f->ts_ns;
	if (otlp_traceparent_parse(f->traceparent, s->trace_id,
	    s->parent_id) == 0) {
		s->has_parent = 1;
		/* the trace flags; the parent is remote: in another process */
		s->flags = (uint32_t)(scan_hex_value(f->traceparent[53]) << 4 |
		    scan_hex_value(f->traceparent[54])) |
		    OTLP_SPAN_FLAGS_HAS_IS_REMOTE | OTLP_SPAN_FLAGS_IS_REMOTE;
		if (f->tracestate != NULL && f->tracestate[0] != '\0')
			s->trace_state = xstrdup(f->tracestate);
	} else {
		memcpy(s->trace_id, b->trace_id, sizeof s->trace_id);
		s->flags = OTLP_SPAN_FLAGS_HAS_IS_REMOTE;
	}
	otlp_span_new_id(b, s->span_id);

	otlp_span_attrn(s->attrs, "mcp.method.name", m, f->method_len);
	if (f->kind == KIND_REQUEST && f->id != NULL)
		otlp_span_id_attr(s->attrs, f->id);
	if (tools_call && f->name != NULL) {
		otlp_span_attrn(s->attrs, "gen_ai.tool.name", f->name,
		    f->name_len);
		target = f->name;
		target_len = f->name_len;
	}
	if (tools_call)
		otlp_span_attr(s->attrs, "gen_ai.operation.name",
		    "execute_tool");
	if (prompts_get && f->name != NULL) {
		otlp_span_attrn(s->attrs, "gen_ai.prompt.name", f->name,
		    f->name_len);
		target = f->name;
		target_len = f->name_len;
	}
	if (f->uri != NULL)
		otlp_span_attrn(s->attrs, "mcp.resource.uri", f->uri,
		    f->uri_len);
	if (otlp_span_method_is(f, "initialize") && f->kind == KIND_REQUEST &&
	    f->protocol_version != NULL)
		otlp_span_set_version(b, f->protocol_version);
	/* A request's own version (params._meta) is its span's and the
	   session's from then on. */
	if (f->meta_version != NULL)
		otlp_span_set_version(b, f->meta_version);
	if (b->protocol_version != NULL)
		otlp_span_attr(s->attrs, "mcp.protocol.version",
		    b->protocol_version);
	otlp_span_common(b, s, f);
	plen = f->payload != NULL ? strlen(f->payload) : 0;
	if (b->payloads && f->payload != NULL && charged != NULL &&
	    b->payload_bytes + plen > OTLP_PAYLOAD_PENDING_MAX)
		over = 1;	/* too much waits already: left out */
	else if (b->payloads && f->payload != NULL && (tools_call ||
	    prompts_get)) {
		if (tools_call)
			otlp_span_payload_add(s, "gen_ai.tool.call.arguments",
			    f->payload, plen, 1);
		else
			otlp_span_prompt_vars(s, f->payload, plen);
		if (charged != NULL) {
			*charged = plen;
			b->payload_bytes += plen;
		}
	}
	if (b->payloads && (f->payload_omitted || over) && (tools_call ||
	    prompts_get))
		otlp_span_omitted(omitted, tools_call ?
		    "gen_ai.tool.call.arguments" : "gen_ai.prompt.variable");
	/* "{method} {target}", each of its length (a NUL is kept) */
	s->name_len = f->method_len + (target != NULL ? 1 + target_len : 0);
	s->name = xmalloc(s->name_len + 1);
	memcpy(s->name, m, f->method_len);
	if (target != NULL) {
		s->name[f->method_len] = ' ';
		memcpy(s->name + f->method_len + 1, target, target_len);
	}
	s->name[s->name_len] = '\0';
	return s;
}

/* End pending p at ts (not before it started), its span to the list. */
static void
otlp_span_finish(struct otlp_builder *b, struct otlp_pend *p, int64_t ts)
{
	struct otlp_span	*s = p->span;

	s->end_ns = ts < s->start_ns ? s->start_ns : ts;
	b->payload_bytes -= p->payload_bytes;
	if (p->omitted != NULL)
		otlp_span_attr(s->attrs, "mcpreel.payload_omitted",
		    p->omitted);
	otlp_span_append(b, s);
	free(p->omitted);
	free(p->id);
	free(p);
}

/* Whether code is an error on a span of kind. */
static int
otlp_span_code_is_error(int kind, int64_t code)
{
	size_t	 i;

	if (kind != OTLP_KIND_SERVER)
		return 1;
	for (i = 0; i < sizeof otlp_span_caller_codes /
	    sizeof otlp_span_caller_codes[0]; i++)
		if (code == otlp_span_caller_codes[i])
			return 0;
	return 1;
}

/* The oldest request waiting ends as unanswered at ts. */
static void
otlp_span_unanswered(struct otlp_builder *b, struct otlp_pend *p,
    int64_t ts)
{
	otlp_span_error(p->span, "unanswered", NULL, 0);
	otlp_span_finish(b, p, ts);
}

/* Double the pending table, rehashing what waits. */
static void
otlp_span_grow(struct otlp_builder *b)
{
	struct otlp_pend	*p;
	size_t			 n = b->nbuckets * 2;

	free(b->buckets);
	b->buckets = xcalloc(n, sizeof *b->buckets);
	b->nbuckets = n;
	for (p = b->oldest; p != NULL; p = p->next) {
		p->hnext = b->buckets[p->hash & (n - 1)];
		b->buckets[p->hash & (n - 1)] = p;
	}
}

/* A request: its span waits for the answer. */
static void
otlp_span_request(struct otlp_builder *b, const struct otlp_fact *f)
{
	struct otlp_pend	*p, *old;
	const char		*id = f->id_key != NULL ? f->id_key : "null";

	/* An id reused while its first request waits ends the first. */
	if ((old = otlp_span_take(b, f->dir, id)) != NULL)
		otlp_span_unanswered(b, old, f->ts_ns);
	p = xcalloc(1, sizeof *p);
	p->dir = f->dir;
	p->id = xstrdup(id);
	p->hash = otlp_span_hash(f->dir, id);
	p->tools_call = otlp_span_method_is(f, "tools/call");
	p->initialize = otlp_span_method_is(f, "initialize");
	p->span = otlp_span_start(b, f, &p->omitted, &p->payload_bytes);
	if (b->npending >= b->nbuckets &&
	    b->nbuckets < OTLP_PENDING_BUCKETS_MAX)
		otlp_span_grow(b);
	p->hnext = b->buckets[p->hash & (b->nbuckets - 1)];
	b->buckets[p->hash & (b->nbuckets - 1)] = p;
	p->prev = b->newest;
	if (b->newest != NULL)
		b->newest->next = p;
	else
		b->oldest = p;
	b->newest = p;
	b->npending++;
	while (b->npending > OTLP_PENDING_MAX) {
		old = otlp_span_take(b, b->oldest->dir, b->oldest->id);
		otlp_span_unanswered(b, old, f->ts_ns);
	}
}

/* A notification: a span of no length; cancelled ends the one it names. */
static void
otlp_span_notification(struct otlp_builder *b, const struct otlp_fact *f)
{
	struct otlp_pend	*p;
	struct otlp_span	*s;
	char			*omitted = NULL;

	if (otlp_span_method_is(f, "notifications/cancelled") &&
	    f->cancel_id != NULL &&
	    (p = otlp_span_take(b, f->dir, f->cancel_id)) != NULL) {
		otlp_span_error(p->span, "cancelled", NULL, 0);
		otlp_span_finish(b, p, f->ts_ns);
	}
	s = otlp_span_start(b, f, &omitted, NULL);
	if (omitted != NULL)
		otlp_span_attr(s->attrs, "mcpreel.payload_omitted", omitted);
	free(omitted);
	otlp_span_append(b, s);
}

/* An answer: it ends the span of the request it answers. */
static void
otlp_span_answer(struct otlp_builder *b, const struct otlp_fact *f)
{
	struct otlp_pend	*p;
	struct otlp_span	*s;
	char			 code[32];
	enum dir		 rd = f->dir == DIR_C2S ? DIR_S2C : DIR_C2S;

	p = otlp_span_take(b, rd, f->id_key != NULL ? f->id_key : "null");
	if (p == NULL)
		return;		/* no span: an answer to nothing we saw */
	s = p->span;
	if (f->kind == KIND_ERROR) {
		if (f->has_code) {
			snprintf(code, sizeof code, "%lld",
			    (long long)f->code);
			otlp_span_attr(s->attrs, "rpc.response.status_code",
			    code);
		}
		/* a code past int64: its text, and no type of its own */
		if (!f->has_code && f->code_text != NULL)
			otlp_span_attr(s->attrs, "rpc.response.status_code",
			    f->code_text);
		if (!f->has_code)
			otlp_span_error(s, "_OTHER", f->message,
			    f->message_len);
		else if (otlp_span_code_is_error(s->kind, f->code))
			otlp_span_error(s, code, f->message,
			    f->message_len);
	} else {
		if (p->tools_call && f->tool_error)
			otlp_span_error(s, "tool_error", NULL, 0);
		else if (p->tools_call && b->payloads && f->payload != NULL)
			otlp_span_payload_add(s, "gen_ai.tool.call.result",
			    f->payload, strlen(f->payload), 1);
		if (p->tools_call && b->payloads && f->payload_omitted &&
		    !f->tool_error)
			otlp_span_omitted(&p->omitted,
			    "gen_ai.tool.call.result");
		if (p->initialize && f->protocol_version != NULL) {
			otlp_span_set_version(b, f->protocol_version);
			otlp_span_attr(s->attrs, "mcp.protocol.version",
			    b->protocol_version);
		}
	}
	otlp_span_finish(b, p, f->ts_ns);
}

/* Take fact f (a list: each of it); completed spans to *out. */
void
otlp_builder_fact(struct otlp_builder *b, struct otlp_fact *f,
    struct otlp_span **out)
{
	struct otlp_fact	*next;

	otlp_span_begin(b, out);
	for (; f != NULL; f = next) {
		next = f->next;
		f->next = NULL;
		switch (f->kind) {
		case KIND_REQUEST:
			if (f->method != NULL)
				otlp_span_request(b, f);
			break;
		case KIND_NOTIFICATION:
			if (f->method != NULL)
				otlp_span_notification(b, f);
			break;
		case KIND_RESPONSE:
		case KIND_ERROR:
			otlp_span_answer(b, f);
			break;
		default:
			break;
		}
		otlp_fact_free(f);
	}
}

/* The session ended at end_ns: what still waits ends unanswered. */
void
otlp_builder_end(struct otlp_builder *b, int64_t end_ns,
    struct otlp_span **out)
{
	struct otlp_pend	*p;

	otlp_span_begin(b, out);
	while (b->oldest != NULL) {
		p = otlp_span_take(b, b->oldest->dir, b->oldest->id);
		otlp_span_unanswered(b, p, end_ns);
	}
}

void
otlp_builder_free(struct otlp_builder *b)
{
	struct otlp_pend	*p, *next;

	if (b == NULL)
		return;
	for (p = b->oldest; p != NULL; p = next) {
		next = p->next;
		otlp_span_free(p->span);
		free(p->omitted);
		free(p->id);
		free(p);
	}
	free(b->transport);
	free(b->client_address);
	free(b->server_address);
	free(b->protocol_version);
	free(b->buckets);
	free(b);
}

/* Free a list of spans. */
void
otlp_span_free(struct otlp_span *s)
{
	struct otlp_span	*next;
	struct otlp_payload	*pl;

	for (; s != NULL; s = next) {
		next = s->next;
		free(s->trace_state);
		free(s->name);
		free(s->status_message);
		json_decref(s->attrs);
		while ((pl = s->payloads) != NULL) {
			s->payloads = pl->next;
			free(pl->key);
			free(pl->text);
			free(pl);
		}
		free(s);
	}
}
