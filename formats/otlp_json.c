/*
 * otlp_json.c: spans as an OTLP ExportTraceServiceRequest in OTLP/JSON
 * (application/json, and the Collector's file exporter's lines), as the
 * OTLP specification maps protobuf to JSON: lowerCamelCase field names,
 * trace and span ids in hex (not base64), enums as integers, 64-bit
 * integers as decimal strings.  Built with jansson, so the text is valid
 * UTF-8 JSON; deterministic: the same spans give the same line.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

static json_t	*otlp_json_kvlist(json_t *, size_t);

/* Lower-case hex of n bytes at p, as a JSON string. */
static json_t *
otlp_json_hex(const uint8_t *p, size_t n)
{
	static const char	 digits[] = "0123456789abcdef";
	char			 out[2 * 16 + 1];
	size_t			 i;

	for (i = 0; i < n && i < 16; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * i] = '\0';
	return json_string(out);
}

/* An int64 as OTLP/JSON writes it: a decimal string. */
static json_t *
otlp_json_int64(int64_t v)
{
	char	 buf[32];

	snprintf(buf, sizeof buf, "%lld", (long long)v);
	return json_string(buf);
}

/* The AnyValue of v, depth levels down its attribute. */
static json_t *
otlp_json_anyvalue(json_t *v, size_t depth)
{
	json_t		*o = json_object(), *list, *e;
	char		*text;
	size_t		 i;

	if ((json_is_object(v) || json_is_array(v)) &&
	    depth >= OTLP_VALUE_DEPTH) {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (text != NULL)
			json_object_set_new(o, "stringValue",
			    json_string(text));
		free(text);
		return o;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		json_object_set_new(o, "stringValue",
		    json_stringn(json_string_value(v), json_string_length(v)));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		json_object_set_new(o, "boolValue",
		    json_boolean(json_is_true(v)));
		break;
	case JSON_INTEGER:
		json_object_set_new(o, "intValue",
		    otlp_json_int64(json_integer_value(v)));
		break;
	case JSON_REAL:
		json_object_set_new(o, "doubleValue",
		    json_real(json_real_value(v)));
		break;
	case JSON_ARRAY:
		list = json_array();
		json_array_foreach(v, i, e)
			json_array_append_new(list,
			    otlp_json_anyvalue(e, depth + 1));
		json_object_set_new(o, "arrayValue", json_pack("{s:o}",
		    "values", list));
		break;
	case JSON_OBJECT:
		json_object_set_new(o, "kvlistValue", json_pack("{s:o}",
		    "values", otlp_json_kvlist(v, depth + 1)));
		break;
	default:
		break;		/* null: an empty AnyValue */
	}
	return o;
}

/* One KeyValue. */
static json_t *
otlp_json_keyvalue(const char *k, json_t *v, size_t depth)
{
	return json_pack("{s:s,s:o}", "key", k, "value",
	    otlp_json_anyvalue(v, depth));
}

/* The members of object obj as a list of KeyValues. */
static json_t *
otlp_json_kvlist(json_t *obj, size_t depth)
{
	json_t		*list = json_array(), *v;
	const char	*k;

	json_object_foreach(obj, k, v)
		json_array_append_new(list, otlp_json_keyvalue(k, v, depth));
	return list;
}

/*
 * A string of n bytes (0: up to its NUL) that may hold a NUL (written
 * \u0000); never NULL.
 */
static json_t *
otlp_json_str(const char *p, size_t n)
{
	json_t	*j = json_stringn(p, n != 0 ? n : strlen(p));

	return j != NULL ? j : json_string("");
}

/* One Span. */
static json_t *
otlp_json_span(const struct otlp_span *s)
{
	json_t	*o = json_object(), *st, *attrs, *v;
	const struct otlp_payload *pl;

	json_object_set_new(o, "traceId", otlp_json_hex(s->trace_id,
	    sizeof s->trace_id));
	json_object_set_new(o, "spanId", otlp_json_hex(s->span_id,
	    sizeof s->span_id));
	if (s->trace_state != NULL)
		json_object_set_new(o, "traceState",
		    json_string(s->trace_state));
	if (s->has_parent)
		json_object_set_new(o, "parentSpanId",
		    otlp_json_hex(s->parent_id, sizeof s->parent_id));
	json_object_set_new(o, "name", s->name != NULL ?
	    otlp_json_str(s->name, s->name_len) : json_string(""));
	if (s->flags != 0)	/* fixed32: a number in OTLP/JSON */
		json_object_set_new(o, "flags", json_integer(s->flags));
	json_object_set_new(o, "kind", json_integer(s->kind));
	json_object_set_new(o, "startTimeUnixNano",
	    otlp_json_int64(s->start_ns));
	json_object_set_new(o, "endTimeUnixNano", otlp_json_int64(s->end_ns));
	attrs = s->attrs != NULL ? otlp_json_kvlist(s->attrs, 0) :
	    json_array();
	/* payloads: each made a value only now */
	for (pl = s->payloads; pl != NULL; pl = pl->next) {
		v = otlp_payload_value(pl);
		json_array_append_new(attrs, otlp_json_keyvalue(pl->key, v,
		    0));
		json_decref(v);
	}
	json_object_set_new(o, "attributes", attrs);
	if (s->status != OTLP_STATUS_UNSET || s->status_message != NULL) {
		st = json_object();
		if (s->status_message != NULL)
			json_object_set_new(st, "message",
			    otlp_json_str(s->status_message,
			    s->status_message_len));
		if (s->status != OTLP_STATUS_UNSET)
			json_object_set_new(st, "code",
			    json_integer(s->status));
		json_object_set_new(o, "status", st);
	}
	return o;
}

/* The resource's attributes: service.name, the others, the SDK's. */
static json_t *
otlp_json_resource(const struct otlp_resource *r)
{
	json_t		*list = json_array(), *v;
	const char	*k;

	v = json_string(r->service_name != NULL ? r->service_name :
	    "mcpreel");
	if (v == NULL)
		v = json_string("mcpreel");
	json_array_append_new(list, otlp_json_keyvalue("service.name", v, 0));
	json_decref(v);
	if (r->attrs != NULL) {
		json_object_foreach(r->attrs, k, v) {
			if (strcmp(k, "service.name") == 0 ||
			    strcmp(k, "telemetry.sdk.name") == 0 ||
			    strcmp(k, "telemetry.sdk.version") == 0)
				continue;
			json_array_append_new(list,
			    otlp_json_keyvalue(k, v, 0));
		}
	}
	v = json_string("mcpreel");
	json_array_append_new(list, otlp_json_keyvalue("telemetry.sdk.name",
	    v, 0));
	json_decref(v);
	v = json_string(MCPREEL_VERSION);
	json_array_append_new(list,
	    otlp_json_keyvalue("telemetry.sdk.version", v, 0));
	json_decref(v);
	return json_pack("{s:o}", "attributes", list);
}

/* The spans as one OTLP/JSON line (no newline), appended to out. */
void
otlp_json_traces(const struct otlp_resource *r, const struct otlp_span *s,
    struct obuf *out)
{
	json_t	*spans = json_array(), *req;
	char	*text;

	for (; s != NULL; s = s->next)
		json_array_append_new(spans, otlp_json_span(s));
	req = json_pack("{s:[{s:o,s:[{s:{s:s,s:s},s:o}]}]}",
	    "resourceSpans",
	    "resource", otlp_json_resource(r),
	    "scopeSpans",
	    "scope", "name", "mcpreel", "version", MCPREEL_VERSION,
	    "spans", spans);
	if (req == NULL)
		fatalx("otlp_json: cannot build the request");
	text = json_dumps(req, JSON_COMPACT);
	if (text == NULL)
		fatalx("otlp_json: cannot write the request");
	obuf_str(out, text);
	free(text);
	json_decref(req);
}
