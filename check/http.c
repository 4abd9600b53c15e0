/*
 * http.c: the Streamable HTTP rules on the exchange each message came in:
 * MCP-Protocol-Version against the revision in force, Mcp-Session-Id on
 * every request once the server gave one (and never again after a 404),
 * 2026-07-28's Mcp-Method, Mcp-Name and Mcp-Param-* (from the tool's
 * x-mcp-header marks) against the body, the status of a
 * POST (202 for notifications and responses), Content-Type and Accept.
 * Each exchange is checked once, on its first message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check_int.h"

#define HTTP_PAGE	"basic/transports"


/* The value of a header in a JSON array of [name, value], or NULL. */
static const char *
http_header(const json_t *heads, const char *name)
{
	const json_t	*h;
	size_t		 i;

	json_array_foreach(heads, i, h) {
		if (json_is_string(json_array_get(h, 0)) &&
		    strcasecmp(json_string_value(json_array_get(h, 0)), name) ==
		    0 && json_is_string(json_array_get(h, 1)))
			return (json_string_value(json_array_get(h, 1)));
	}
	return (NULL);
}

/* Whether a comma-separated header value lists a media type. */
static int
http_lists(const char *value, const char *type)
{
	const char	*p;
	size_t		 n = strlen(type);

	for (p = value; p != NULL && *p != '\0'; ) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (strncasecmp(p, type, n) == 0 && (p[n] == '\0' ||
		    p[n] == ',' || p[n] == ';' || p[n] == ' '))
			return (1);
		if (strncasecmp(p, "*/*", 3) == 0)
			return (1);
		p = strchr(p, ',');
	}
	return (0);
}

/* Mcp-Name as sent: plain, or "=?base64?...?=" decoded. */
static char *
http_name_value(const char *v)
{
	size_t	 n = strlen(v), out;
	char	*d, *s;

	if (n < 12 || strncmp(v, "=?base64?", 9) != 0 ||
	    strcmp(v + n - 2, "?=") != 0)
		return (xstrdup(v));
	if ((d = b64_decode(v + 9, n - 11, &out)) == NULL)
		return (xstrdup(v));
	s = xmalloc(out + 1);
	memcpy(s, d, out);
	s[out] = '\0';
	free(d);
	return (s);
}

/* Whether every message of the body is a notification or a response. */
static int
http_no_request(const json_t *j)
{
	const json_t	*e;
	size_t		 i;

	if (!json_is_array(j))
		return (json_object_get(j, "method") == NULL ||
		    json_object_get(j, "id") == NULL);
	json_array_foreach(j, i, e) {
		if (json_object_get(e, "method") != NULL &&
		    json_object_get(e, "id") != NULL)
			return (0);
	}
	return (1);
}

struct http_param {
	struct check	*c;
	const json_t	*req;		/* the request's headers */
	const char	*spec;
	size_t		 seen;		/* properties looked at */
};

/* One x-mcp-header mark: its header against the argument v (or NULL). */
static void
http_param_one(struct http_param *a, const char *mark, const json_t *v,
    const char *path)
{
	char		*name, num[32], *got = NULL;
	const char	*hv, *want;

	xasprintf(&name, "Mcp-Param-%s", mark);
	hv = http_header(a->req, name);
	if (v == NULL || json_is_null(v)) {
		if (hv != NULL)
			check_report(a->c, "http.mcp-param", PROTO_ERROR, path,
			    a->spec, "a %s header, but the argument it "
			    "carries is absent; it is sent only with the "
			    "argument", name);
		goto out;
	}
	if (hv == NULL) {
		check_report(a->c, "http.mcp-param", PROTO_ERROR, path, a->spec,
		    "no %s header; 2026-07-28 requires it on tools/call when "
		    "the argument the tool marks with x-mcp-header \"%s\" is "
		    "present", name, mark);
		goto out;
	}
	if (strcmp(hv, REDACTED) == 0)
		goto out;	/* recorded redacted: only its presence */
	if (json_is_string(v))
		want = json_string_value(v);
	else if (json_is_integer(v)) {
		snprintf(num, sizeof num, "%lld",
		    (long long)json_integer_value(v));
		want = num;
	} else if (json_is_boolean(v))
		want = json_is_true(v) ? "true" : "false";
	else
		goto out;	/* a type the mark may not sit on */
	got = http_name_value(hv);
	if (strcmp(got, want) != 0)
		check_report(a->c, "http.mcp-param", PROTO_ERROR, path, a->spec,
		    "the %s header says \"%s\" but the argument is \"%s\"",
		    name, got, want);
out:
	free(got);
	free(name);
}

/* The x-mcp-header marks under schema's properties, against args. */
static void
http_param_walk(struct http_param *a, const json_t *schema,
    const json_t *args, char *path, size_t pathsz, int depth)
{
	const json_t	*props, *p, *mark;
	const char	*k;
	size_t		 len = strlen(path);

	props = json_object_get(schema, "properties");
	if (!json_is_object(props) || depth >= HTTP_PARAM_DEPTH_MAX)
		return;
	json_object_foreach((json_t *)props, k, p) {
		if (a->seen++ >= HTTP_PARAM_PROPS_MAX)
			return;
		snprintf(path + len, pathsz - len, ".%s", k);
		mark = json_object_get(p, "x-mcp-header");
		if (json_is_string(mark))
			http_param_one(a, json_string_value(mark),
			    json_object_get(args, k), path);
		else
			http_param_walk(a, p, json_object_get(args, k), path,
			    pathsz, depth + 1);
		path[len] = '\0';
	}
}

/* 2026-07-28: Mcp-Param-* of a tools/call against its tool's marks. */
static void
http_params(struct check *c, struct cmsg *m, const json_t *req,
    const json_t *name, const char *spec)
{
	struct http_param	 a = { c, req, spec, 0 };
	const json_t		*marks, *args;
	char			 path[256];

	if ((marks = tools_marks(c, name)) == NULL)
		return;		/* no marks, tool.unknown, or no listing */
	args = json_object_get(json_object_get(m->j, "params"), "arguments");
	check_path(c, "params.arguments", path, sizeof path);
	http_param_walk(&a, marks, args, path, sizeof path, 0);
}

/* 2026-07-28: Mcp-Method and Mcp-Name against the body. */
static void
http_modern(struct check *c, struct cmsg *m, const json_t *req,
    const char *spec)
{
	const char	*hv;
	const json_t	*name;
	char		*got, path[64];

	hv = http_header(req, "Mcp-Method");
	if (hv == NULL)
		check_report(c, "http.mcp-method", PROTO_ERROR,
		    check_path(c, "method", path, sizeof path), spec,
		    "no Mcp-Method header; 2026-07-28 requires it on every "
		    "request, equal to the body's method (%s)", m->method);
	else if (strcmp(hv, m->method) != 0)
		check_report(c, "http.mcp-method", PROTO_ERROR,
		    check_path(c, "method", path, sizeof path), spec,
		    "the Mcp-Method header says \"%s\" but the body's method "
		    "is \"%s\"; they must be equal", hv, m->method);
	if (strcmp(m->method, "tools/call") == 0 ||
	    strcmp(m->method, "prompts/get") == 0)
		name = json_object_get(json_object_get(m->j, "params"),
		    "name");
	else if (strcmp(m->method, "resources/read") == 0)
		name = json_object_get(json_object_get(m->j, "params"), "uri");
	else
		return;
	if (!json_is_string(name))
		return;		/* a shape finding already */
	check_path(c, strcmp(m->method, "resources/read") == 0 ?
	    "params.uri" : "params.name", path, sizeof path);
	if ((hv = http_header(req, "Mcp-Name")) == NULL) {
		check_report(c, "http.mcp-name", PROTO_ERROR, path, spec,
		    "no Mcp-Name header; 2026-07-28 requires it on %s, equal "
		    "to %s", m->method, path + 2);
		return;
	}
	got = http_name_value(hv);
	if (strcmp(got, json_string_value(name)) != 0)
		check_report(c, "http.mcp-name", PROTO_ERROR, path, spec,
		    "the Mcp-Name header says \"%s\" but %s is \"%s\"", got,
		    path + 2, json_string_value(name));
	free(got);
	if (strcmp(m->method, "tools/call") == 0)
		http_params(c, m, req, name, spec);
}

/* A client POST: the request's headers and the response's status. */
static void
http_post(struct check *c, struct cmsg *m, const json_t *req,
    const json_t *resp, const char *spec)
{
	const struct check_http	*h = m->in->http;
	enum proto_version	 v = m->v;
	const char		*hv, *sid;
	char			 path[8] = "$";
	int			 init, legacy_sse;

	init = m->method != NULL && strcmp(m->method, "initialize") == 0;
	legacy_sse = v == PROTO_V_2024_11_05 || h->legacy_sse;
	if (!legacy_sse && v != PROTO_V_UNKNOWN && ((hv = http_header(req,
	    "Accept")) == NULL || !http_lists(hv, "application/json") ||
	    !http_lists(hv, "text/event-stream")))
		check_report(c, "http.accept", PROTO_ERROR, path, spec,
		    "%s; a client's POST must accept both application/json "
		    "and text/event-stream", hv == NULL ? "no Accept header" :
		    "the Accept header does not list both media types");
	hv = http_header(req, "MCP-Protocol-Version");
	if (v == PROTO_V_2026_07_28 && m->is_request) {
		if (hv == NULL || strcmp(hv, proto_version_name(v)) != 0)
			check_report(c, "http.protocol-version", PROTO_ERROR,
			    path, spec, "%s%s%s; in 2026-07-28 it must equal "
			    "params._meta's protocolVersion (%s)", hv == NULL ?
			    "no MCP-Protocol-Version header" :
			    "the MCP-Protocol-Version header is \"", hv == NULL
			    ? "" : hv, hv == NULL ? "" : "\"",
			    proto_version_name(v));
		http_modern(c, m, req, spec);
	} else if (!init && (c->life == LIFE_INITIALIZED ||
	    c->life == LIFE_OPERATING) && v >= PROTO_V_2025_06_18) {
		if (hv == NULL)
			check_report(c, "http.protocol-version", PROTO_ERROR,
			    path, spec, "no MCP-Protocol-Version header; from "
			    "2025-06-18 every request after initialize "
			    "carries the negotiated version (%s)",
			    proto_version_name(v));
		else if (strcmp(hv, proto_version_name(c->v)) != 0)
			/* The header MUST be sent; its value SHOULD be the
			   negotiated one (transports page, 2025-06-18 on). */
			check_report(c, "http.protocol-version",
			    PROTO_WARNING, path, spec, "the "
			    "MCP-Protocol-Version header is \"%s\" but the "
			    "session negotiated %s; it should be the "
			    "negotiated one", hv, proto_version_name(c->v));
	}
	sid = http_header(req, "Mcp-Session-Id");
	if (init && sid == NULL && c->lost)
		check_restart(c);
	if (c->expired_id != NULL && sid != NULL &&
	    strcmp(sid, c->expired_id) == 0)
		check_report(c, "http.expired-session", PROTO_ERROR, path, spec,
		    "the client sent session id \"%s\" again after the server "
		    "answered 404 for it; it must start a new session with "
		    "initialize, without the header", sid);
	else if (c->session_id != NULL && !init && v != PROTO_V_2026_07_28) {
		if (sid == NULL)
			check_report(c, "http.session-id", PROTO_ERROR, path,
			    spec, "no Mcp-Session-Id header; the server gave "
			    "one at seq %lld, and every later request must "
			    "carry it", (long long)c->session_id_seq);
		else if (strcmp(sid, c->session_id) != 0)
			check_report(c, "http.session-id", PROTO_ERROR, path,
			    spec, "Mcp-Session-Id \"%s\" is not the one the "
			    "server gave (\"%s\")", sid, c->session_id);
	}
	if (h->status == 404 && sid != NULL) {
		free(c->expired_id);
		c->expired_id = xstrdup(sid);
		c->lost = 1;
	}
	if (h->status < 200 || h->status > 299 || legacy_sse)
		return;
	if (http_no_request(m->j)) {
		if (h->status != 202)
			check_report(c, "http.status", PROTO_ERROR, path, spec,
			    "the server accepted a POST of %s with status %d; "
			    "it must answer 202 Accepted with no body",
			    json_is_array(m->j) ? "notifications and "
			    "responses" : m->is_response ? "a response" :
			    "a notification", h->status);
		return;
	}
	if (h->status == 202) {
		check_report(c, "http.status", PROTO_ERROR, path, spec,
		    "the server answered a POST holding a request with 202; "
		    "a request gets 200 with the response, as JSON or an SSE "
		    "stream");
		return;
	}
	hv = http_header(resp, "Content-Type");
	if (hv == NULL || (!http_lists(hv, "application/json") &&
	    !http_lists(hv, "text/event-stream")))
		check_report(c, "http.content-type", PROTO_ERROR, path, spec,
		    "the response to a request has %s%s%s; it must be "
		    "application/json or text/event-stream", hv == NULL ?
		    "no Content-Type" : "Content-Type \"", hv == NULL ? "" :
		    hv, hv == NULL ? "" : "\"");
}

/*
 * A GET: a server answers it with an SSE stream or 405 (other 4xx say
 * what was wrong with the request, which is allowed); 2026-07-28 has no
 * GET stream.  msg is the first message on it, or NULL.
 */
static void
http_get(struct check *c, const struct check_http *h, const json_t *resp,
    const char *spec)
{
	const char	*ct;
	char		 path[8] = "$";

	if (h->status < 200 || h->status > 299)
		return;
	if (c->v == PROTO_V_2026_07_28) {
		check_report(c, "http.get", PROTO_ERROR, path, spec, "a GET "
		    "answered %d; 2026-07-28 has no GET stream (a server "
		    "answers GET with 405)", h->status);
		return;
	}
	ct = http_header(resp, "Content-Type");
	if (ct == NULL || !http_lists(ct, "text/event-stream"))
		check_report(c, "http.get", PROTO_ERROR, path, spec, "a GET "
		    "answered %d with %s%s%s; the server must answer GET with "
		    "text/event-stream or 405 Method Not Allowed", h->status,
		    ct == NULL ? "no Content-Type" : "Content-Type \"",
		    ct == NULL ? "" : ct, ct == NULL ? "" : "\"");
}

/* The HTTP side of one message (its exchange checked once). */
void
http_message(struct check *c, struct cmsg *m)
{
	const struct check_http	*h = m->in->http;
	json_t			*req, *resp;
	const char		*sid;
	char			 key[32], spec[64];

	if (h == NULL || h->exchange == 0 || h->method == NULL ||
	    h->legacy_sse)
		return;
	/* The initialize response names the session. */
	if (m->is_response && m->method != NULL &&
	    strcmp(m->method, "initialize") == 0 &&
	    json_is_object(json_object_get(m->j, "result")) &&
	    h->response_headers != NULL) {
		resp = json_loads(h->response_headers, 0, NULL);
		if ((sid = http_header(resp, "Mcp-Session-Id")) != NULL) {
			free(c->session_id);
			c->session_id = xstrdup(sid);
			c->session_id_seq = m->in->seq;
		}
		json_decref(resp);
	}
	snprintf(key, sizeof key, "%lld", (long long)h->exchange);
	if (recent_has(&c->exchanges, key))
		return;
	recent_add(&c->exchanges, key);
	req = h->request_headers != NULL ? json_loads(h->request_headers, 0,
	    NULL) : NULL;
	resp = h->response_headers != NULL ? json_loads(h->response_headers,
	    0, NULL) : NULL;
	check_spec(m->v, HTTP_PAGE, spec, sizeof spec);
	if (strcmp(h->method, "POST") == 0 && m->in->dir == DIR_C2S)
		http_post(c, m, req, resp, spec);
	else if (strcmp(h->method, "GET") == 0 && c->v != PROTO_V_2024_11_05 &&
	    c->v != PROTO_V_UNKNOWN) {
		http_get(c, h, resp, spec);
		sid = http_header(req, "Accept");
		if (c->v != PROTO_V_2026_07_28 && (sid == NULL ||
		    !http_lists(sid, "text/event-stream")))
			check_report(c, "http.accept", PROTO_ERROR, "$", spec,
			    "the GET that opened this stream does not accept "
			    "text/event-stream");
	}
	json_decref(req);
	json_decref(resp);
}

/*
 * An exchange that carried no message (a GET refused or answered with
 * nothing, a DELETE): what its status says.  Findings are about seq 0,
 * the session.
 */
void
check_exchange(struct check *c, const struct check_http *h)
{
	struct check_msg	 in;
	struct cmsg		 m;
	json_t			*resp;
	char			 key[32], spec[64];

	if (h == NULL || h->method == NULL || h->legacy_sse ||
	    strcmp(h->method, "GET") != 0 || c->v == PROTO_V_UNKNOWN ||
	    c->v == PROTO_V_2024_11_05)
		return;
	snprintf(key, sizeof key, "%lld", (long long)h->exchange);
	if (recent_has(&c->exchanges, key))
		return;
	recent_add(&c->exchanges, key);
	memset(&in, 0, sizeof in);
	in.dir = DIR_S2C;
	in.http = h;
	memset(&m, 0, sizeof m);
	m.in = &in;
	m.prefix = "$";
	m.v = c->v;
	m.method = "GET";
	c->cur = &m;
	resp = h->response_headers != NULL ? json_loads(h->response_headers,
	    0, NULL) : NULL;
	http_get(c, h, resp, check_spec(c->v, HTTP_PAGE, spec, sizeof spec));
	json_decref(resp);
	c->cur = NULL;
}
