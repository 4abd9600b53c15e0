/*
 * message.c: one JSON-RPC message checked under a revision: the envelope
 * (jsonrpc.* rules), whether the revision has its method, and the shape
 * of its params or result (shape.* rules, walked by shape.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shape_int.h"

/*
 * Findings reported for one message at most (a batch counts as one):
 * a tools/list of 100 000 broken tools gets this many and a count of the
 * rest, so the report stays readable and its size bounded.
 */
#define MESSAGE_FINDINGS_MAX	100

/* Where each revision states the JSON-RPC rules. */
static const char *const message_rpc_spec[PROTO_V_MAX] = {
	[PROTO_V_UNKNOWN] = "JSON-RPC 2.0 specification",
	[PROTO_V_2024_11_05] = "2024-11-05 basic/messages",
	[PROTO_V_2025_03_26] = "2025-03-26 basic/index",
	[PROTO_V_2025_06_18] = "2025-06-18 basic/index",
	[PROTO_V_2025_11_25] = "2025-11-25 basic/index",
	[PROTO_V_2026_07_28] = "2026-07-28 basic/index",
};

/* The one revision that allows JSON-RPC batches. */
#define MESSAGE_BATCH_VERSIONS	PROTO_VBIT(PROTO_V_2025_03_26)

struct msgcheck {
	enum proto_version	 v;
	proto_finding_cb	*cb;
	void			*arg;
	size_t			 budget;	/* findings still to report */
	size_t			 count;		/* findings reported */
	const char		*rpc_spec;
};

static json_t		*message_empty;
static pthread_once_t	 message_once = PTHREAD_ONCE_INIT;

/* What every check needs, once: the empty object, the shapes. */
static void
message_init(void)
{
	message_empty = json_object();
	(void)defs_get();
}

/* Count each finding, then pass it on. */
static void
message_count_cb(const struct proto_finding *f, void *arg)
{
	struct msgcheck	*c = arg;

	c->count++;
	c->cb(f, c->arg);
}

/* Report an envelope or method finding (budget permitting). */
static void PRINTFLIKE(6, 7)
message_report(struct msgcheck *c, const char *rule, int severity,
    const char *path, const char *spec, const char *fmt, ...)
{
	char	text[400];
	va_list	ap;

	if (c->budget == 0)
		return;
	c->budget--;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	proto_report(message_count_cb, c, rule, severity, path, spec, "%s",
	    text);
}

/* Join a prefix ("$" or "$[3]") and a member; plain copies (hot path). */
static const char *
message_path(char *buf, size_t size, const char *prefix, const char *member)
{
	size_t	plen = strlen(prefix), mlen = member != NULL ?
		    strlen(member) : 0;

	if (plen + mlen + 2 > size)
		plen = mlen = 0;
	memcpy(buf, prefix, plen);
	if (member != NULL) {
		buf[plen++] = '.';
		memcpy(buf + plen, member, mlen);
		plen += mlen;
	}
	buf[plen] = '\0';
	return (buf);
}

/*
 * A request id: a string or an integer, never null (jsonrpc.id).
 * unread is set for an error response saying the request could not be
 * read (parse error, invalid request), where JSON-RPC wants null.
 */
static void
message_id(struct msgcheck *c, const json_t *id, const char *prefix,
    int unread)
{
	char	path[64];
	double	d;

	message_path(path, sizeof path, prefix, "id");
	if (json_is_string(id) || json_is_integer(id))
		return;
	if (json_is_null(id) && unread) {
		message_report(c, "jsonrpc.null-id", PROTO_WARNING, path,
		    c->rpc_spec, "the id is null: JSON-RPC 2.0 wants null when "
		    "the request's id could not be read, but the MCP schema "
		    "gives an error response a RequestId (a string or an "
		    "integer) or, from 2025-11-25, no id at all");
		return;
	}
	if (json_is_null(id)) {
		message_report(c, "jsonrpc.id", PROTO_ERROR, path, c->rpc_spec,
		    "the id is null; MCP ids are strings or integers, never "
		    "null");
		return;
	}
	if (json_is_real(id)) {
		d = json_real_value(id);
		if (d == floor(d) && isfinite(d))
			return;
		message_report(c, "jsonrpc.id", PROTO_ERROR, path, c->rpc_spec,
		    "the id %g has a fractional part; ids are strings or "
		    "integers", d);
		return;
	}
	message_report(c, "jsonrpc.id", PROTO_ERROR, path, c->rpc_spec,
	    "the id is %s; ids are strings or integers",
	    json_is_object(id) ? "an object" : json_is_array(id) ?
	    "an array" : "a boolean");
}

/* The revisions that have a method, for a sentence ("2025-06-18 on"). */
static void
message_method_versions(const char *name, char *buf, size_t size)
{
	const struct proto_method	*m;
	size_t				 o = 0;
	int				 v, n;

	buf[0] = '\0';
	for (v = 1; v < PROTO_V_MAX; v++) {
		m = proto_method(name, (enum proto_version)v);
		if (m == NULL || m->kind == PROTO_INPUT)
			continue;
		n = snprintf(buf + o, size - o, "%s%s", o == 0 ? "" : ", ",
		    proto_version_name((enum proto_version)v));
		if (n < 0 || (size_t)n >= size - o)
			break;
		o += (size_t)n;
	}
}

/* A request or notification: its method, then its params. */
static void
message_call(struct msgcheck *c, const json_t *msg, const char *prefix)
{
	const struct shapes		*sh = defs_get();
	const struct proto_method	*m, *table;
	const json_t			*params, *id;
	const char			*name, *spec;
	char				 path[64], where[128];
	size_t				 n, name_len;
	int				 has_id;

	name = json_string_value(json_object_get(msg, "method"));
	name_len = json_string_length(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	has_id = id != NULL;
	if (has_id)
		message_id(c, id, prefix, 0);
	if (json_object_get(msg, "result") != NULL ||
	    json_object_get(msg, "error") != NULL)
		message_report(c, "jsonrpc.members", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL),
		    c->rpc_spec, "a %s carries \"%s\" as well; a message is "
		    "a request, a notification or a response, never two",
		    has_id ? "request" : "notification",
		    json_object_get(msg, "result") != NULL ? "result" :
		    "error");
	if (c->v == PROTO_V_UNKNOWN)
		return;
	m = proto_method_n(name, name_len, c->v);
	if (m == NULL || m->kind == PROTO_INPUT) {
		message_method_versions(name, where, sizeof where);
		message_report(c, "shape.unknown-method", PROTO_WARNING,
		    message_path(path, sizeof path, prefix, "method"),
		    message_rpc_spec[c->v], m != NULL ? "%s %s has no "
		    "%s message: a server asks for it inside an "
		    "input_required result" : where[0] != '\0' ? "%s %s has "
		    "no method \"%s\" (it is in %s)" : "%s %s has no method "
		    "\"%s\"%s", "revision", proto_version_name(c->v), name,
		    where);
		return;
	}
	spec = proto_method_spec(m, c->v);
	if (m->kind == PROTO_NOTIFICATION && has_id)
		message_report(c, "jsonrpc.kind", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, "id"), spec,
		    "%s is a notification, but this message has an id (a "
		    "notification has none and gets no answer)", name);
	else if (m->kind == PROTO_REQUEST && !has_id)
		message_report(c, "jsonrpc.kind", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL), spec,
		    "%s is a request, but this message has no id (as a "
		    "notification it can get no answer)", name);
	table = proto_methods(&n);
	params = json_object_get(msg, "params");
	message_path(path, sizeof path, prefix, "params");
	if (params == NULL) {
		if (!shape_fits(c->v, sh->params[m - table], message_empty))
			message_report(c, "shape.required", PROTO_ERROR,
			    message_path(path, sizeof path, prefix, NULL),
			    spec, "\"params\" is required: %s has required "
			    "parameters in %s", name,
			    proto_version_name(c->v));
		return;
	}
	shape_check(c->v, sh->params[m - table], params, path, spec,
	    message_count_cb, c, &c->budget);
}

/* The data of an error whose code the revision gives a data shape. */
static void
message_error_data(struct msgcheck *c, const json_t *error, long long code,
    const char *prefix)
{
	const struct shapes	*sh = defs_get();
	const struct serror	*e;
	const struct sdef	*d;
	const json_t		*data;
	const char		*spec;
	char			 path[64];

	if ((e = defs_error(sh, code, c->v)) == NULL)
		return;
	spec = c->rpc_spec;
	if (e->data->kind == ST_REF && e->data->ref[c->v] != -1) {
		d = &sh->defs[e->data->ref[c->v]];
		spec = d->spec[c->v];
	}
	data = json_object_get(error, "data");
	if (data == NULL) {
		message_report(c, "shape.required", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, "error"), spec,
		    "\"data\" is required in an error of code %lld (%s)", code,
		    proto_version_name(c->v));
		return;
	}
	shape_check(c->v, e->data, data, message_path(path, sizeof path,
	    prefix, "error.data"), spec, message_count_cb, c, &c->budget);
}

/*
 * An error code: an integer, or a number written with a point but no
 * fractional part (-32600.0 is the number -32600), in the range of a
 * long long.  Returns whether it is one, with its value in *out.
 */
static int
message_code(const json_t *code, long long *out)
{
	double	d;

	if (json_is_integer(code)) {
		*out = json_integer_value(code);
		return (1);
	}
	if (!json_is_real(code))
		return (0);
	d = json_real_value(code);
	/* 2^63 is exact as a double; [-2^63, 2^63) fits a long long. */
	if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 ||
	    d >= 9223372036854775808.0)
		return (0);
	*out = (long long)d;
	return (1);
}

/* Whether an error says the request could not be read at all (JSON-RPC
   parse error -32700, invalid request -32600), so its id is unknown. */
static int
message_unread(const json_t *error)
{
	long long	code;

	if (error == NULL || !message_code(json_object_get(error, "code"),
	    &code))
		return (0);
	return (code == -32700 || code == -32600);
}

/* A response: result xor error, the error's members, the result's shape. */
static void
message_response(struct msgcheck *c, const json_t *msg, const char *prefix,
    const char *request_method)
{
	const struct shapes		*sh = defs_get();
	const struct proto_method	*m, *table;
	const json_t			*id, *result, *error, *code, *text;
	char				 path[64];
	size_t				 n;
	long long			 icode;

	id = json_object_get(msg, "id");
	result = json_object_get(msg, "result");
	error = json_object_get(msg, "error");
	if (result != NULL && error != NULL) {
		message_report(c, "jsonrpc.result-xor-error", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL),
		    c->rpc_spec, "a response has both \"result\" and "
		    "\"error\"; it must have exactly one");
		return;
	}
	if (result == NULL && error == NULL) {
		message_report(c, "jsonrpc.result-xor-error", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL),
		    c->rpc_spec, "%s", id != NULL ? "a message with an id but "
		    "no \"method\", \"result\" or \"error\" is neither a "
		    "request nor a response" : "a message with no \"method\", "
		    "\"id\", \"result\" or \"error\" is no JSON-RPC message");
		return;
	}
	if (id != NULL)
		message_id(c, id, prefix, message_unread(error));
	else if (result != NULL || c->v < PROTO_V_2025_11_25)
		message_report(c, "jsonrpc.id", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL),
		    c->rpc_spec, "a%s response has no id%s",
		    result != NULL ? "" : "n error", result != NULL ? "" :
		    " (an error may leave it out only from 2025-11-25)");
	if (error != NULL) {
		message_path(path, sizeof path, prefix, "error");
		if (!json_is_object(error)) {
			message_report(c, "jsonrpc.error", PROTO_ERROR, path,
			    c->rpc_spec, "\"error\" must be an object with "
			    "\"code\" and \"message\"");
			return;
		}
		code = json_object_get(error, "code");
		text = json_object_get(error, "message");
		if (code == NULL || !message_code(code, &icode))
			message_report(c, "jsonrpc.error-code", PROTO_ERROR,
			    message_path(path, sizeof path, prefix,
			    "error.code"), c->rpc_spec, "%s", code == NULL ?
			    "the error has no \"code\"; it needs an integer "
			    "code" : "the error code must be an integer");
		if (text == NULL || !json_is_string(text))
			message_report(c, "jsonrpc.error-message", PROTO_ERROR,
			    message_path(path, sizeof path, prefix,
			    "error.message"), c->rpc_spec, "%s", text == NULL ?
			    "the error has no \"message\"; it needs a string" :
			    "the error message must be a string");
		if (c->v != PROTO_V_UNKNOWN && message_code(code, &icode))
			message_error_data(c, error, icode, prefix);
		return;
	}
	message_path(path, sizeof path, prefix, "result");
	if (!json_is_object(result)) {
		message_report(c, "shape.type", PROTO_ERROR, path,
		    c->rpc_spec, "a result must be an object, not %s",
		    json_is_array(result) ? "an array" : "a plain value");
		return;
	}
	if (c->v == PROTO_V_UNKNOWN || request_method == NULL)
		return;
	m = proto_method(request_method, c->v);
	if (m == NULL || m->result == NULL)
		return;
	table = proto_methods(&n);
	shape_check(c->v, sh->result[m - table], result, path,
	    proto_method_spec(m, c->v), message_count_cb, c, &c->budget);
}

/* One message (top level or in a batch). */
static void
message_one(struct msgcheck *c, const json_t *msg, const char *prefix,
    const char *request_method)
{
	const json_t	*jsonrpc, *method;
	char		 path[64];

	if (!json_is_object(msg)) {
		message_report(c, "jsonrpc.invalid", PROTO_ERROR, prefix,
		    c->rpc_spec, "a JSON-RPC message is an object, not %s",
		    json_is_array(msg) ? "an array" : "a plain value");
		return;
	}
	jsonrpc = json_object_get(msg, "jsonrpc");
	if (jsonrpc == NULL)
		message_report(c, "jsonrpc.version", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, NULL),
		    c->rpc_spec, "\"jsonrpc\": \"2.0\" is missing");
	else if (!json_is_string(jsonrpc) ||
	    json_string_length(jsonrpc) != 3 ||
	    memcmp(json_string_value(jsonrpc), "2.0", 3) != 0)
		message_report(c, "jsonrpc.version", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, "jsonrpc"),
		    c->rpc_spec, "\"jsonrpc\" must be the string \"2.0\"");
	method = json_object_get(msg, "method");
	if (method != NULL && !json_is_string(method)) {
		message_report(c, "jsonrpc.method", PROTO_ERROR,
		    message_path(path, sizeof path, prefix, "method"),
		    c->rpc_spec, "\"method\" must be a string");
		return;
	}
	if (method != NULL)
		message_call(c, msg, prefix);
	else
		message_response(c, msg, prefix, request_method);
}

/*
 * Check one message (a parsed JSON value) under a revision, reporting
 * findings to cb.  request_method: for a response, the method of the
 * request it answers (its result is checked against that method's
 * result), else NULL.  With PROTO_V_UNKNOWN only the JSON-RPC envelope is
 * checked.  Returns the number of findings reported: the first
 * MESSAGE_FINDINGS_MAX; the walk stops there.
 */
size_t
proto_check_message(enum proto_version v, const json_t *msg,
    const char *request_method, proto_finding_cb *cb, void *arg)
{
	struct msgcheck	c;
	char		prefix[32];
	size_t		i, n;

	pthread_once(&message_once, message_init);
	if ((int)v < PROTO_V_UNKNOWN || v >= PROTO_V_MAX)
		v = PROTO_V_UNKNOWN;
	memset(&c, 0, sizeof c);
	c.v = v;
	c.cb = cb;
	c.arg = arg;
	c.budget = MESSAGE_FINDINGS_MAX;
	c.rpc_spec = message_rpc_spec[v];
	if (!json_is_array(msg)) {
		message_one(&c, msg, "$", request_method);
		return (c.count);
	}
	n = json_array_size(msg);
	if (v != PROTO_V_UNKNOWN && (MESSAGE_BATCH_VERSIONS &
	    PROTO_VBIT(v)) == 0)
		message_report(&c, "jsonrpc.batch", PROTO_ERROR, "$",
		    c.rpc_spec, "a batch (a JSON array of messages); %s "
		    "does not allow batches (only 2025-03-26 does)",
		    proto_version_name(v));
	else if (n == 0)
		message_report(&c, "jsonrpc.batch", PROTO_ERROR, "$",
		    c.rpc_spec, "an empty batch; a batch holds at least one "
		    "message");
	for (i = 0; i < n && c.budget > 0; i++) {
		snprintf(prefix, sizeof prefix, "$[%zu]", i);
		message_one(&c, json_array_get(msg, i), prefix, NULL);
	}
	return (c.count);
}
