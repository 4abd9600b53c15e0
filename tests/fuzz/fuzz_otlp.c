/*
 * OTLP export (formats/otlp_*.c) over any traffic: the input is a
 * session, one message a line, each line's first byte saying how it
 * passed (bit 0: server to client; bit 1: cut at the record cap, so read
 * from its ident; bit 2: payloads kept).  The first byte of the input
 * picks the side.  The messages' facts go through one builder, the spans
 * through both encoders: nothing may crash or leak, every span must end
 * no earlier than it starts, the OTLP/JSON must be JSON, the protobuf
 * must walk as well-formed fields, and both must be the same bytes when
 * written twice.  Every protobuf string field must be valid UTF-8:
 * strict decoders (the Go collector, upb) refuse the whole request.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The OTLP messages the protobuf walk knows, by what a field holds. */
enum fuzz_pb_msg {
	PBM_REQ, PBM_RS, PBM_RES, PBM_SS, PBM_SCOPE, PBM_SPAN, PBM_STATUS,
	PBM_KV, PBM_ANY, PBM_LIST, PBM_KVLIST,
	PBM_STRING,		/* a string field: valid UTF-8 */
	PBM_OTHER		/* bytes, or a field not looked into */
};

/* What field f of message m is (trace.proto, common.proto). */
static enum fuzz_pb_msg
fuzz_otlp_pb_field(enum fuzz_pb_msg m, uint64_t f)
{
	switch (m) {
	case PBM_REQ:
		return f == 1 ? PBM_RS : PBM_OTHER;
	case PBM_RS:
		return f == 1 ? PBM_RES : f == 2 ? PBM_SS : PBM_OTHER;
	case PBM_RES:
		return f == 1 ? PBM_KV : PBM_OTHER;
	case PBM_SS:
		return f == 1 ? PBM_SCOPE : f == 2 ? PBM_SPAN : PBM_OTHER;
	case PBM_SCOPE:
		return f == 1 || f == 2 ? PBM_STRING : PBM_OTHER;
	case PBM_SPAN:
		return f == 3 || f == 5 ? PBM_STRING : f == 9 ? PBM_KV :
		    f == 15 ? PBM_STATUS : PBM_OTHER;
	case PBM_STATUS:
		return f == 2 ? PBM_STRING : PBM_OTHER;
	case PBM_KV:
		return f == 1 ? PBM_STRING : f == 2 ? PBM_ANY : PBM_OTHER;
	case PBM_ANY:
		return f == 1 ? PBM_STRING : f == 5 ? PBM_LIST :
		    f == 6 ? PBM_KVLIST : PBM_OTHER;
	case PBM_LIST:
		return f == 1 ? PBM_ANY : PBM_OTHER;
	case PBM_KVLIST:
		return f == 1 ? PBM_KV : PBM_OTHER;
	default:
		return PBM_OTHER;
	}
}

/* Whether the len bytes at p are valid UTF-8 (strict decoders refuse). */
static int
fuzz_otlp_utf8_ok(const uint8_t *p, const uint8_t *end)
{
	size_t	 n;

	while (p < end) {
		if ((n = scan_utf8_len(p, end)) == 0)
			return 0;
		p += n;
	}
	return 1;
}

/*
 * Whether p..end is well-formed message m: a run of well-formed fields,
 * each string field (KeyValue.key, AnyValue.string_value, Span.name and
 * trace_state, Status.message, the scope's) valid UTF-8, and each nested
 * message the same.
 */
static int
fuzz_otlp_pb_ok(const uint8_t *p, const uint8_t *end, enum fuzz_pb_msg m)
{
	uint64_t		 tag, v;
	int			 shift;
	enum fuzz_pb_msg	 sub;

	while (p < end) {
		for (tag = 0, shift = 0; ; shift += 7) {
			if (p >= end || shift > 63)
				return 0;
			tag |= (uint64_t)(*p & 0x7f) << shift;
			if ((*p++ & 0x80) == 0)
				break;
		}
		sub = fuzz_otlp_pb_field(m, tag >> 3);
		switch (tag & 7) {
		case 0:
			while (p < end && (*p & 0x80))
				p++;
			if (p++ >= end)
				return 0;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		case 2:
			for (v = 0, shift = 0; ; shift += 7) {
				if (p >= end || shift > 63)
					return 0;
				v |= (uint64_t)(*p & 0x7f) << shift;
				if ((*p++ & 0x80) == 0)
					break;
			}
			if (v > (uint64_t)(end - p))
				return 0;
			if (sub == PBM_STRING && !fuzz_otlp_utf8_ok(p, p + v))
				return 0;
			if (sub != PBM_STRING && sub != PBM_OTHER &&
			    !fuzz_otlp_pb_ok(p, p + v, sub))
				return 0;
			p += v;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* A single message's fact has the kind scan_message() gives it. */
static void
fuzz_otlp_agree(const uint8_t *buf, size_t len, const struct otlp_fact *f)
{
	struct scan	 s;

	scan_message(buf, len, &s);
	if (s.kind == KIND_BATCH)
		return;
	if (s.kind == KIND_INVALID) {
		if (f != NULL)
			fuzz_fail(buf, len, "otlp: a fact of no message");
		return;
	}
	if (f == NULL || f->next != NULL || f->kind != s.kind)
		fuzz_fail(buf, len, "otlp: fact kind %d, scanner's %d",
		    f != NULL ? (int)f->kind : -1, (int)s.kind);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otlp_sess_info	 si = { .transport = "http", .started_ns = 7,
	    .target = "http://h/mcp", .client_address = "127.0.0.1",
	    .client_port = 1, .server_address = "h", .server_port = 80 };
	struct otlp_resource	 r = { "fuzz", NULL };
	struct otlp_builder	*b;
	struct otlp_span	*spans = NULL, *s;
	struct otlp_fact	*f;
	struct ident		 id;
	struct msg		*m;
	struct obuf		 o1, o2;
	const uint8_t		*p, *end, *nl;
	json_t			*j;
	int64_t			 ts = 0;
	size_t			 len;

	if (size < 1)
		return 0;
	b = otlp_builder_new(&si, data[0] & 1 ? OTLP_SIDE_CLIENT :
	    OTLP_SIDE_SERVER, data[0] & 2 ? 1 : 0);
	p = data + 1;
	end = data + size;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = (size_t)((nl != NULL ? nl : end) - p);
		if (len >= 1) {
			m = msg_new(p[0] & 1 ? DIR_S2C : DIR_C2S, p + 1,
			    len - 1);
			/* a clock that sometimes goes back */
			ts += (p[0] & 0x80) ? -3 : 10;
			m->ts_ns = ts;
			if (p[0] & 2) {
				ident_init(&id);
				ident_feed(&id, p + 1, len - 1);
				m->ident = ident_finish(&id, &m->ident_len);
				m->flags = MSG_TRUNCATED;
				m->len = (len - 1) / 2;
			}
			f = otlp_fact_new(m, p[0] & 4 ? 1 : 0);
			if (!(p[0] & 2))
				fuzz_otlp_agree(p + 1, len - 1, f);
			msg_free(m);
			otlp_builder_fact(b, f, &spans);
		}
		p += len + 1;
	}
	otlp_builder_end(b, ts + 1, &spans);
	for (s = spans; s != NULL; s = s->next)
		if (s->end_ns < s->start_ns)
			fuzz_fail(data, size, "otlp: a span ends before it "
			    "starts");

	obuf_init(&o1);
	obuf_init(&o2);
	otlp_pb_traces(&r, spans, &o1);
	otlp_pb_traces(&r, spans, &o2);
	if (o1.len != o2.len || memcmp(o1.p, o2.p, o1.len) != 0)
		fuzz_fail(data, size, "otlp: protobuf differs between runs");
	if (!fuzz_otlp_pb_ok(o1.p, o1.p + o1.len, PBM_REQ))
		fuzz_fail(data, size, "otlp: protobuf is not well formed, "
		    "or a string in it is not UTF-8");
	obuf_reset(&o1);
	obuf_reset(&o2);
	otlp_json_traces(&r, spans, &o1);
	otlp_json_traces(&r, spans, &o2);
	if (o1.len != o2.len || memcmp(o1.p, o2.p, o1.len) != 0)
		fuzz_fail(data, size, "otlp: OTLP/JSON differs between runs");
	if ((j = json_loadb((const char *)o1.p, o1.len, JSON_ALLOW_NUL,
	    NULL)) == NULL)
		fuzz_fail(data, size, "otlp: OTLP/JSON is not JSON");
	json_decref(j);
	obuf_free(&o1);
	obuf_free(&o2);
	otlp_span_free(spans);
	otlp_builder_free(b);
	return 0;
}
