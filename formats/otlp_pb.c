/*
 * otlp_pb.c: spans as an OTLP ExportTraceServiceRequest in protobuf
 * (application/x-protobuf), written by hand: varints, length-delimited
 * fields and fixed64s are all it takes.  The field numbers are those of
 * opentelemetry-proto (collector/trace/v1/trace_service.proto,
 * trace/v1/trace.proto, common/v1/common.proto,
 * resource/v1/resource.proto).  A nested message is encoded into the
 * scratch buffer of its depth and then copied into its parent with its
 * length in front, so each byte is copied once per level it is nested
 * in, and the depth is bounded.  Deterministic: the same spans give the
 * same bytes.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

/* Protobuf wire types. */
#define PB_VARINT	0
#define PB_FIXED64	1
#define PB_LEN		2
#define PB_FIXED32	5

/* ExportTraceServiceRequest */
#define PB_REQ_RESOURCE_SPANS	1
/* ResourceSpans */
#define PB_RS_RESOURCE		1
#define PB_RS_SCOPE_SPANS	2
/* ScopeSpans */
#define PB_SS_SCOPE		1
#define PB_SS_SPANS		2
/* Span */
#define PB_SPAN_TRACE_ID	1
#define PB_SPAN_SPAN_ID		2
#define PB_SPAN_TRACE_STATE	3
#define PB_SPAN_PARENT_SPAN_ID	4
#define PB_SPAN_NAME		5
#define PB_SPAN_KIND		6
#define PB_SPAN_START		7
#define PB_SPAN_END		8
#define PB_SPAN_ATTRIBUTES	9
#define PB_SPAN_STATUS		15
#define PB_SPAN_FLAGS		16	/* fixed32 */
/* Status */
#define PB_STATUS_MESSAGE	2
#define PB_STATUS_CODE		3
/* KeyValue */
#define PB_KV_KEY		1
#define PB_KV_VALUE		2
/* AnyValue */
#define PB_ANY_STRING		1
#define PB_ANY_BOOL		2
#define PB_ANY_INT		3
#define PB_ANY_DOUBLE		4
#define PB_ANY_ARRAY		5
#define PB_ANY_KVLIST		6
/* ArrayValue, KeyValueList */
#define PB_LIST_VALUES		1
/* Resource */
#define PB_RESOURCE_ATTRIBUTES	1
/* InstrumentationScope */
#define PB_SCOPE_NAME		1
#define PB_SCOPE_VERSION	2

/*
 * Scratch levels: resource spans, scope spans, span, then a key value,
 * its AnyValue and that value's list per level of a structured value.
 */
#define PB_LEVELS		(8 + 3 * (OTLP_VALUE_DEPTH + 1))

struct pbw {
	struct obuf	 lv[PB_LEVELS];
};

static void
otlp_pb_varint(struct obuf *o, uint64_t v)
{
	uint8_t	 b[10];
	size_t	 n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			b[n] |= 0x80;
		n++;
	} while (v != 0);
	obuf_add(o, b, n);
}

static void
otlp_pb_tag(struct obuf *o, unsigned int field, unsigned int wire)
{
	otlp_pb_varint(o, (uint64_t)field << 3 | wire);
}

/* A length-delimited field: bytes, a string, or an encoded message. */
static void
otlp_pb_bytes(struct obuf *o, unsigned int field, const void *p, size_t n)
{
	otlp_pb_tag(o, field, PB_LEN);
	otlp_pb_varint(o, n);
	obuf_add(o, p, n);
}

static void
otlp_pb_string(struct obuf *o, unsigned int field, const char *s)
{
	otlp_pb_bytes(o, field, s, strlen(s));
}

static void
otlp_pb_fixed64(struct obuf *o, unsigned int field, uint64_t v)
{
	uint8_t	 b[8];
	size_t	 i;

	otlp_pb_tag(o, field, PB_FIXED64);
	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	obuf_add(o, b, 8);
}

static void
otlp_pb_fixed32(struct obuf *o, unsigned int field, uint32_t v)
{
	uint8_t	 b[4];
	size_t	 i;

	otlp_pb_tag(o, field, PB_FIXED32);
	for (i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	obuf_add(o, b, 4);
}

/* The scratch buffer of level l, emptied. */
static struct obuf *
otlp_pb_level(struct pbw *w, size_t l)
{
	if (l >= PB_LEVELS)
		fatalx("otlp_pb: nesting beyond %d levels", PB_LEVELS);
	obuf_reset(&w->lv[l]);
	return &w->lv[l];
}

static void otlp_pb_keyvalue(struct pbw *, size_t, struct obuf *,
    unsigned int, const char *, json_t *, size_t);

/* AnyValue of v into o; depth: how deep v is in its attribute. */
static void
otlp_pb_anyvalue(struct pbw *w, size_t l, struct obuf *o, json_t *v,
    size_t depth)
{
	struct obuf	*sub;
	json_t		*e;
	const char	*k;
	char		*text;
	double		 d;
	uint64_t	 bits;
	size_t		 i;

	if ((json_is_object(v) || json_is_array(v)) &&
	    depth >= OTLP_VALUE_DEPTH) {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (text != NULL)
			otlp_pb_string(o, PB_ANY_STRING, text);
		free(text);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		otlp_pb_bytes(o, PB_ANY_STRING, json_string_value(v),
		    json_string_length(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		otlp_pb_tag(o, PB_ANY_BOOL, PB_VARINT);
		otlp_pb_varint(o, json_is_true(v) ? 1 : 0);
		break;
	case JSON_INTEGER:
		otlp_pb_tag(o, PB_ANY_INT, PB_VARINT);
		otlp_pb_varint(o, (uint64_t)json_integer_value(v));
		break;
	case JSON_REAL:
		d = json_real_value(v);
		memcpy(&bits, &d, sizeof bits);
		otlp_pb_fixed64(o, PB_ANY_DOUBLE, bits);
		break;
	case JSON_ARRAY:
		sub = otlp_pb_level(w, l);
		json_array_foreach(v, i, e) {
			struct obuf	*av = otlp_pb_level(w, l + 1);

			otlp_pb_anyvalue(w, l + 2, av, e, depth + 1);
			otlp_pb_bytes(sub, PB_LIST_VALUES, av->p, av->len);
		}
		otlp_pb_bytes(o, PB_ANY_ARRAY, sub->p, sub->len);
		break;
	case JSON_OBJECT:
		sub = otlp_pb_level(w, l);
		json_object_foreach(v, k, e)
			otlp_pb_keyvalue(w, l + 1, sub, PB_LIST_VALUES, k, e,
			    depth + 1);
		otlp_pb_bytes(o, PB_ANY_KVLIST, sub->p, sub->len);
		break;
	default:
		break;		/* null: an empty AnyValue */
	}
}

/* A KeyValue as field number field of its parent (attributes, values). */
static void
otlp_pb_keyvalue(struct pbw *w, size_t l, struct obuf *o, unsigned int field,
    const char *key, json_t *v, size_t depth)
{
	struct obuf	*kv = otlp_pb_level(w, l);
	struct obuf	*av = otlp_pb_level(w, l + 1);

	otlp_pb_anyvalue(w, l + 2, av, v, depth);
	otlp_pb_string(kv, PB_KV_KEY, key);
	otlp_pb_bytes(kv, PB_KV_VALUE, av->p, av->len);
	otlp_pb_bytes(o, field, kv->p, kv->len);
}

/* One Span into o (as field spans of ScopeSpans). */
static void
otlp_pb_span(struct pbw *w, size_t l, struct obuf *o,
    const struct otlp_span *s)
{
	struct obuf	*sp = otlp_pb_level(w, l), *st;
	const struct otlp_payload *pl;
	const char	*k;
	json_t		*v;

	otlp_pb_bytes(sp, PB_SPAN_TRACE_ID, s->trace_id, sizeof s->trace_id);
	otlp_pb_bytes(sp, PB_SPAN_SPAN_ID, s->span_id, sizeof s->span_id);
	if (s->trace_state != NULL)
		otlp_pb_string(sp, PB_SPAN_TRACE_STATE, s->trace_state);
	if (s->has_parent)
		otlp_pb_bytes(sp, PB_SPAN_PARENT_SPAN_ID, s->parent_id,
		    sizeof s->parent_id);
	if (s->name != NULL)
		otlp_pb_bytes(sp, PB_SPAN_NAME, s->name, s->name_len != 0 ?
		    s->name_len : strlen(s->name));
	else
		otlp_pb_string(sp, PB_SPAN_NAME, "");
	otlp_pb_tag(sp, PB_SPAN_KIND, PB_VARINT);
	otlp_pb_varint(sp, (uint64_t)s->kind);
	otlp_pb_fixed64(sp, PB_SPAN_START, (uint64_t)s->start_ns);
	otlp_pb_fixed64(sp, PB_SPAN_END, (uint64_t)s->end_ns);
	if (s->attrs != NULL) {
		json_object_foreach(s->attrs, k, v)
			otlp_pb_keyvalue(w, l + 1, sp, PB_SPAN_ATTRIBUTES, k,
			    v, 0);
	}
	/* payloads: each made a value only now, and let go at once */
	for (pl = s->payloads; pl != NULL; pl = pl->next) {
		v = otlp_payload_value(pl);
		otlp_pb_keyvalue(w, l + 1, sp, PB_SPAN_ATTRIBUTES, pl->key, v,
		    0);
		json_decref(v);
	}
	if (s->status != OTLP_STATUS_UNSET || s->status_message != NULL) {
		st = otlp_pb_level(w, l + 1);
		if (s->status_message != NULL)
			otlp_pb_bytes(st, PB_STATUS_MESSAGE, s->status_message,
			    s->status_message_len != 0 ?
			    s->status_message_len : strlen(s->status_message));
		if (s->status != OTLP_STATUS_UNSET) {
			otlp_pb_tag(st, PB_STATUS_CODE, PB_VARINT);
			otlp_pb_varint(st, (uint64_t)s->status);
		}
		otlp_pb_bytes(sp, PB_SPAN_STATUS, st->p, st->len);
	}
	if (s->flags != 0)
		otlp_pb_fixed32(sp, PB_SPAN_FLAGS, s->flags);
	otlp_pb_bytes(o, PB_SS_SPANS, sp->p, sp->len);
}

/* The Resource message into o (as field resource of ResourceSpans). */
static void
otlp_pb_resource(struct pbw *w, size_t l, struct obuf *o,
    const struct otlp_resource *r)
{
	struct obuf	*res = otlp_pb_level(w, l);
	json_t		*v;
	const char	*k;

	v = json_string(r->service_name != NULL ? r->service_name :
	    "mcpreel");
	if (v == NULL)
		v = json_string("mcpreel");
	otlp_pb_keyvalue(w, l + 1, res, PB_RESOURCE_ATTRIBUTES,
	    "service.name", v, 0);
	json_decref(v);
	if (r->attrs != NULL) {
		json_object_foreach(r->attrs, k, v) {
			if (strcmp(k, "service.name") == 0 ||
			    strcmp(k, "telemetry.sdk.name") == 0 ||
			    strcmp(k, "telemetry.sdk.version") == 0)
				continue;
			otlp_pb_keyvalue(w, l + 1, res,
			    PB_RESOURCE_ATTRIBUTES, k, v, 0);
		}
	}
	v = json_string("mcpreel");
	otlp_pb_keyvalue(w, l + 1, res, PB_RESOURCE_ATTRIBUTES,
	    "telemetry.sdk.name", v, 0);
	json_decref(v);
	v = json_string(MCPREEL_VERSION);
	otlp_pb_keyvalue(w, l + 1, res, PB_RESOURCE_ATTRIBUTES,
	    "telemetry.sdk.version", v, 0);
	json_decref(v);
	otlp_pb_bytes(o, PB_RS_RESOURCE, res->p, res->len);
}

/* The spans as one ExportTraceServiceRequest, appended to out. */
void
otlp_pb_traces(const struct otlp_resource *r, const struct otlp_span *s,
    struct obuf *out)
{
	struct pbw	*w = xcalloc(1, sizeof *w);
	struct obuf	*rs, *ss, *scope;
	size_t		 i;

	rs = otlp_pb_level(w, 0);
	otlp_pb_resource(w, 2, rs, r);
	ss = otlp_pb_level(w, 1);
	scope = otlp_pb_level(w, 2);
	otlp_pb_string(scope, PB_SCOPE_NAME, "mcpreel");
	otlp_pb_string(scope, PB_SCOPE_VERSION, MCPREEL_VERSION);
	otlp_pb_bytes(ss, PB_SS_SCOPE, scope->p, scope->len);
	for (; s != NULL; s = s->next)
		otlp_pb_span(w, 2, ss, s);
	otlp_pb_bytes(rs, PB_RS_SCOPE_SPANS, ss->p, ss->len);
	otlp_pb_bytes(out, PB_REQ_RESOURCE_SPANS, rs->p, rs->len);
	for (i = 0; i < PB_LEVELS; i++)
		obuf_free(&w->lv[i]);
	free(w);
}
