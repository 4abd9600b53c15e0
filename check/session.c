/*
 * session.c: a session checked message by message.  Each message is
 * parsed once (jload.c, else jansson), checked on its own by protocol/ under the revision in
 * force, then handed to the rule families (rpc.c, lifecycle.c, caps.c,
 * http.c, semantics.c) in the order that keeps their state right: a
 * request is registered after its rules ran, a response's request is
 * retired after its rules ran.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"

/* Where check/'s own notes about a recording point to. */
#define SESSION_SPEC_JSON	"RFC 8259 (JSON)"

/* A new checker that reports to cb. */
struct check *
check_new(check_finding_cb *cb, void *arg)
{
	struct check	*c;
	int		 d;

	c = xcalloc(1, sizeof *c);
	c->cb = cb;
	c->arg = arg;
	c->life = LIFE_NONE;
	c->v = PROTO_V_UNKNOWN;
	c->asked = PROTO_V_UNKNOWN;
	for (d = 0; d < DIR_MAX; d++)
		rpc_init(&c->side[d]);
	c->toolc = tools_new();
	c->cursors = json_object();
	c->input_wait = json_object();
	recent_init(&c->exchanges, CHECK_ANSWERED_MAX);
	return (c);
}

/* Free a checker and all it holds. */
void
check_free(struct check *c)
{
	int	d;

	if (c == NULL)
		return;
	for (d = 0; d < DIR_MAX; d++)
		rpc_free(&c->side[d]);
	tools_free(c->toolc);
	json_decref(c->cursors);
	json_decref(c->input_wait);
	recent_free(&c->exchanges);
	free(c->init_id);
	free(c->session_id);
	free(c->expired_id);
	free(c);
}

/* The revision the session negotiated (or the last one seen). */
enum proto_version
check_version(const struct check *c)
{
	return (c->v);
}

/* How many findings of a severity were reported. */
size_t
check_count(const struct check *c, int severity)
{
	if (severity < 0 || severity >= PROTO_SEVERITY_MAX)
		return (0);
	return (c->counts[severity]);
}

/* "2025-06-18 basic/lifecycle", or the page alone when no revision. */
const char *
check_spec(enum proto_version v, const char *page, char *buf, size_t size)
{
	if (v == PROTO_V_UNKNOWN)
		v = proto_version_latest();
	snprintf(buf, size, "%s %s", proto_version_name(v), page);
	return (buf);
}

/* A JSON value as compact text (an id, a token), or NULL. */
char *
check_id_text(const json_t *id)
{
	char		 buf[24], *p = buf + sizeof buf;
	json_int_t	 v;
	uint64_t	 u;

	if (id == NULL)
		return (NULL);
	if (!json_is_integer(id))
		return (json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT));
	/* The usual id, written without a format string (a hot path). */
	v = json_integer_value(id);
	u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	*--p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	return (xstrdup(p));
}

/* params._meta[key] of a message, or NULL. */
const json_t *
check_meta(const json_t *msg, const char *key)
{
	return (json_object_get(json_object_get(json_object_get(msg,
	    "params"), "_meta"), key));
}

/* The JSON path of a member of the current message. */
const char *
check_path(struct check *c, const char *member, char *buf, size_t size)
{
	const char	*prefix = c->cur != NULL ? c->cur->prefix : "$";

	snprintf(buf, size, "%s%s%s", prefix, member != NULL ? "." : "",
	    member != NULL ? member : "");
	return (buf);
}

/*
 * A copy of s fit for any output (text, JSON, XML, a terminal): valid
 * UTF-8, each byte not in a well-formed sequence written \xNN, each
 * control character (C0, DEL, C1) \u00XX and each non-character (U+FFFE,
 * U+FDD0 ...) \uXXXX.  Findings quote what peers sent (methods, ids,
 * names), which may hold anything.  NULL stays NULL; caller frees.
 */
char *
check_clean(const char *s)
{
	const unsigned char	*p, *end;
	unsigned int		 cp;
	size_t			 n, i;
	char			*out, *o;

	if (s == NULL)
		return (NULL);
	p = (const unsigned char *)s;
	end = p + strlen(s);
	/* At most six output bytes per input byte (\u00XX for one). */
	out = o = xmalloc((size_t)(end - p) * 6 + 1);
	while (p < end) {
		if ((n = scan_utf8_len(p, end)) == 0) {
			o += snprintf(o, 5, "\\x%02x", *p++);
			continue;
		}
		cp = n == 1 ? p[0] : p[0] & (0xff >> (n + 1));
		for (i = 1; i < n; i++)
			cp = (cp << 6) | (p[i] & 0x3f);
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
		    (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
			o += snprintf(o, 9, "\\u%04X", cp);
		else {
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	*o = '\0';
	return (out);
}

/* Pass a finding on, counted, as about (seq, dir, method, id), each
   string of it cleaned (check_clean). */
static void
session_emit(struct check *c, int64_t seq, enum dir dir, const char *method,
    const char *id, enum proto_version v, const struct proto_finding *f)
{
	struct check_finding	cf;
	struct proto_finding	cl;
	char			*cm, *ci;

	if (f->severity >= 0 && f->severity < PROTO_SEVERITY_MAX)
		c->counts[f->severity]++;
	cl = *f;
	cl.path = check_clean(f->path);
	cl.text = check_clean(f->text);
	cm = check_clean(method);
	ci = check_clean(id);
	cf.seq = seq;
	cf.dir = dir;
	cf.method = cm;
	cf.id = ci;
	cf.version = v;
	cf.f = &cl;
	c->cb(&cf, c->arg);
	free(cl.path);
	free(cl.text);
	free(cm);
	free(ci);
}

/* A proto_finding_cb reporting about the current message. */
static void
session_cur_cb(const struct proto_finding *f, void *arg)
{
	struct check	*c = arg;
	struct cmsg	*m = c->cur;

	session_emit(c, m->in->seq, m->in->dir, m->method, m->id, m->v, f);
}

/* Report a finding about the current message. */
void
check_report(struct check *c, const char *rule, int severity,
    const char *path, const char *spec, const char *fmt, ...)
{
	char	*text;
	va_list	 ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		fatalx("out of memory formatting a finding");
	va_end(ap);
	proto_report(session_cur_cb, c, rule, severity, path, spec, "%s",
	    text);
	free(text);
}

struct session_at {
	struct check		*c;
	int64_t			 seq;
	enum dir		 dir;
	const char		*method;
	const char		*id;
};

static void
session_at_cb(const struct proto_finding *f, void *arg)
{
	struct session_at	*a = arg;

	session_emit(a->c, a->seq, a->dir, a->method, a->id, a->c->v, f);
}

/* Report a finding about an earlier message (seq, dir, method, id). */
void
check_report_at(struct check *c, int64_t seq, enum dir dir,
    const char *method, const char *id, const char *rule, int severity,
    const char *path, const char *spec, const char *fmt, ...)
{
	struct session_at	 a = { c, seq, dir, method, id };
	char			*text;
	va_list			 ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		fatalx("out of memory formatting a finding");
	va_end(ap);
	proto_report(session_at_cb, &a, rule, severity, path, spec, "%s",
	    text);
	free(text);
}

/*
 * A table is full: say so once per session, as a note on the message
 * that found it full, with what is no longer checked.
 */
void
check_limit(struct check *c, enum check_limit which, size_t max)
{
	static const struct {
		const char	*rule;
		const char	*what;
	} limits[CHECK_LIMIT_MAX] = {
		[CHECK_LIMIT_CURSORS] = { "check.cursors-limit", "a listing "
		    "used more cursors than kept; later ones are not kept, so "
		    "a repeat of one of them is not reported" },
		[CHECK_LIMIT_CURSOR_METHODS] = { "check.cursors-limit",
		    "more methods were paginated than tracked; the cursors "
		    "of others are not tracked" },
		[CHECK_LIMIT_INPUT_WAIT] = { "check.input-wait-limit", "more "
		    "input_required results await their retry than kept; "
		    "later ones are not kept, so their retries are not checked" },
	};

	if (c->limits_noted & (1U << which))
		return;
	c->limits_noted |= 1U << which;
	check_report(c, limits[which].rule, PROTO_NOTE, "$", "mcpreel check",
	    "%s (at most %zu are kept)", limits[which].what, max);
}

/* The revision a request names in params._meta (2026-07-28 on). */
static enum proto_version
session_meta_version(const json_t *j)
{
	const json_t	*pv;

	pv = check_meta(j, "io.modelcontextprotocol/protocolVersion");
	if (!json_is_string(pv))
		return (PROTO_V_UNKNOWN);
	return (proto_version_parse(json_string_value(pv)));
}

/*
 * Work out what one message (a top-level one or a batch member) is, its
 * id, its method (a response's from its request) and the revision it is
 * read under.
 */
static void
session_classify(struct check *c, struct cmsg *m)
{
	const json_t	*method, *id;
	struct pend	*p;
	enum proto_version v;

	method = json_object_get(m->j, "method");
	id = json_object_get(m->j, "id");
	/* Kept as rpc_key: findings quote it, bounded however long the
	   id (the maps key it again, which leaves a key as it is). */
	m->id = rpc_key_free(check_id_text(id));
	m->v = c->v;
	if (json_is_string(method)) {
		m->method = json_string_value(method);
		m->is_request = id != NULL;
		m->is_notification = id == NULL;
		if (m->is_request && strcmp(m->method, "initialize") == 0 &&
		    (v = proto_version_parse(json_string_value(json_object_get(
		    json_object_get(m->j, "params"), "protocolVersion")))) !=
		    PROTO_V_UNKNOWN)
			m->v = v;
		else if ((v = session_meta_version(m->j)) != PROTO_V_UNKNOWN)
			m->v = v;
		return;
	}
	if (method != NULL || !json_is_object(m->j))
		return;
	if (json_object_get(m->j, "result") == NULL &&
	    json_object_get(m->j, "error") == NULL)
		return;
	m->is_response = 1;
	if (m->id != NULL && (p = rpc_find(&c->side[!m->in->dir], m->id)) !=
	    NULL) {
		m->method = p->method;
		m->v = p->v;
	}
}

/*
 * Whether the HTTP layer refused the POST a client message came in (a
 * status not 2xx: 401 before the OAuth retry, 400, 404): the server may
 * never have read it, so it neither moves the lifecycle nor is its
 * answer due, and the client may send it again.
 */
static int
session_refused(const struct check_msg *in)
{
	const struct check_http	*h = in->http;

	return (h != NULL && in->dir == DIR_C2S && h->method != NULL &&
	    strcmp(h->method, "POST") == 0 && h->status != 0 &&
	    (h->status < 200 || h->status > 299));
}

/*
 * Whether a client message came in a POST whose status is not known when
 * it is checked: record --check gets a POST's body before its response
 * head (and a stored exchange may have none).  Refused or not is then
 * unknown, and a client that resends the request (the SDK does after a
 * 401 and its OAuth) is not judged as reusing its id.
 */
int
check_status_unknown(const struct check_msg *in)
{
	const struct check_http	*h = in->http;

	return (h != NULL && in->dir == DIR_C2S && h->method != NULL &&
	    strcmp(h->method, "POST") == 0 && h->status == 0);
}

/*
 * Track a request, marked when its POST was refused, or taken with 202
 * and no answer (http.status says so; its answer is then not due either,
 * or the one fault would be reported twice), or when its status is not
 * yet known.
 */
static struct pend *
session_request(struct check *c, const struct check_msg *in, const char *id,
    const char *method, enum proto_version v, const json_t *j)
{
	struct pend	*p;

	p = rpc_request(c, in->dir, id, in->seq, method, v, j);
	if (p != NULL) {
		p->refused = session_refused(in) || (in->http != NULL &&
		    in->dir == DIR_C2S && in->http->method != NULL &&
		    strcmp(in->http->method, "POST") == 0 &&
		    !in->http->legacy_sse && in->http->status == 202);
		p->unknown = check_status_unknown(in);
	}
	return (p);
}

/*
 * A new HTTP session after a 404 (the client must start one with
 * initialize): forget the lifecycle, the requests of both sides and what
 * the old session listed.  Ids may be used again from here.
 */
void
check_restart(struct check *c)
{
	int	d;

	log_debug("check: a new session after a 404");
	for (d = 0; d < DIR_MAX; d++) {
		rpc_free(&c->side[d]);
		rpc_init(&c->side[d]);
	}
	c->life = LIFE_NONE;
	c->asked = PROTO_V_UNKNOWN;
	free(c->init_id);
	c->init_id = NULL;
	c->init_unknown = 0;
	c->before_init_noted = 0;
	c->limits_noted = 0;	/* once a session each: this is a new one */
	c->lost = 0;
	tools_reset(c);
	json_object_clear(c->cursors);
	json_object_clear(c->input_wait);
	free(c->session_id);
	c->session_id = NULL;
}

/*
 * Whether a response breaks its envelope so that its receiver cannot take
 * it as the answer (result and error both or neither, an error without an
 * integer code or a string message); protocol/ has reported why.
 */
static int
session_unreadable(const json_t *j)
{
	const json_t	*err = json_object_get(j, "error");

	if ((json_object_get(j, "result") != NULL) == (err != NULL))
		return (1);
	return (err != NULL && (!json_is_integer(json_object_get(err,
	    "code")) || !json_is_string(json_object_get(err, "message"))));
}

/* Run the rule families over one classified message. */
static void
session_rules(struct check *c, struct cmsg *m)
{
	struct pend	*p;

	if (m->is_request || m->is_notification) {
		if (!session_refused(m->in))
			life_message(c, m);
		caps_message(c, m);
		sem_message(c, m);
		if (m->is_request && m->id != NULL &&
		    (p = session_request(c, m->in, m->id, m->method, m->v,
		    m->j)) != NULL)
			p->tool_flags = m->tool_flags;
		return;
	}
	if (!m->is_response || m->id == NULL)
		return;
	if ((p = rpc_response(c, m->in->dir, m->id)) == NULL)
		return;
	m->req = p;
	life_answered(c, m);
	sem_answered(c, m);
	m->req = NULL;
	rpc_done(c, !m->in->dir, p);
	if (session_unreadable(m->j))
		recent_add(&c->side[!m->in->dir].unread, m->id);
}

/* How many values raw holds at least (structural bytes), up to max. */
size_t
check_values(const void *buf, size_t len, size_t max)
{
	const unsigned char	*raw = buf;
	size_t			 i, n = 0;

	for (i = 0; i < len && n <= max; i++)
		if (raw[i] == '{' || raw[i] == '[' || raw[i] == ',' ||
		    raw[i] == ':')
			n++;
	return (n);
}

/*
 * A message cut at the record cap, or too big to parse (big): only its
 * identity can be checked.
 */
static void
session_truncated(struct check *c, const struct check_msg *in, int big)
{
	struct cmsg	 m;
	struct pend	*p;

	memset(&m, 0, sizeof m);
	m.in = in;
	m.prefix = "$";
	m.method = in->method;
	m.id = in->rpc_id != NULL ? rpc_key(in->rpc_id) : NULL;
	m.v = c->v;
	c->cur = &m;
	if (big)
		check_report(c, "check.too-big", PROTO_NOTE, "$", "mcpreel "
		    "check", "the message holds more than %d values, too many "
		    "to parse for a check; only its method and id were checked",
		    CHECK_PARSE_VALUES_MAX);
	else
		check_report(c, "check.truncated", PROTO_NOTE, "$",
		    "mcpreel record --max-record-size", "the message was cut "
		    "at the record size cap; only its method and id were "
		    "checked");
	/* Without the kind, a method says request (as the scanner reads). */
	if (in->kind == KIND_RESPONSE || in->kind == KIND_ERROR ||
	    (in->kind == KIND_INVALID && in->method == NULL)) {
		if (m.id != NULL &&
		    (p = rpc_response(c, in->dir, m.id)) != NULL)
			rpc_done(c, !in->dir, p);
	} else if (in->kind != KIND_NOTIFICATION && in->method != NULL &&
	    m.id != NULL)
		session_request(c, in, m.id, in->method, c->v, NULL);
	c->cur = NULL;
	free(m.id);
}

/* Parse a message; report why not when it is not JSON. */
static json_t *
session_parse(struct check *c, const struct check_msg *in)
{
	struct cmsg	 m;
	json_error_t	 err;
	json_t		*j;

	if ((j = jload(in->raw, in->len)) != NULL)
		return (j);	/* the plain case, read fast */
	j = json_loadb(in->raw, in->len, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (j != NULL)
		return (j);
	memset(&m, 0, sizeof m);
	m.in = in;
	m.prefix = "$";
	m.v = c->v;
	c->cur = &m;
	j = json_loadb(in->raw, in->len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    NULL);
	if (j != NULL)
		check_report(c, "json.duplicate-member", PROTO_ERROR, "$",
		    SESSION_SPEC_JSON, "%s; readers disagree on which value "
		    "counts", err.text);
	else
		check_report(c, "json.parse", PROTO_ERROR, "$",
		    SESSION_SPEC_JSON, "not JSON: %s (at byte %d); a message "
		    "is one JSON-RPC object", err.text, err.position);
	c->cur = NULL;
	return (j);
}

/* Check one recorded message. */
void
check_message(struct check *c, const struct check_msg *in)
{
	struct cmsg	 m, *ms;
	json_t		*j;
	size_t		 i, n;
	char		 prefix[32];

	if (in->dir != DIR_C2S && in->dir != DIR_S2C)
		return;
	if (in->truncated) {
		session_truncated(c, in, 0);
		return;
	}
	/* A value takes a byte at least: a short message needs no count. */
	if (in->len > CHECK_PARSE_VALUES_MAX && check_values(in->raw,
	    in->len, CHECK_PARSE_VALUES_MAX) > CHECK_PARSE_VALUES_MAX) {
		session_truncated(c, in, 1);
		return;
	}
	if ((j = session_parse(c, in)) == NULL)
		return;
	memset(&m, 0, sizeof m);
	m.in = in;
	m.j = j;
	m.prefix = "$";
	if (!json_is_array(j)) {
		session_classify(c, &m);
		c->cur = &m;
		proto_check_message(m.v, j, m.is_response ? m.method : NULL,
		    session_cur_cb, c);
		http_message(c, &m);
		session_rules(c, &m);
		c->cur = NULL;
		free(m.id);
		json_decref(j);
		return;
	}
	/* A batch: checked whole by protocol/, then member by member. */
	m.v = c->v;
	c->cur = &m;
	proto_check_message(m.v, j, NULL, session_cur_cb, c);
	http_message(c, &m);
	c->cur = NULL;
	n = json_array_size(j);
	ms = xcalloc(1, sizeof *ms);
	for (i = 0; i < n; i++) {
		memset(ms, 0, sizeof *ms);
		snprintf(prefix, sizeof prefix, "$[%zu]", i);
		ms->in = in;
		ms->j = json_array_get(j, i);
		ms->prefix = prefix;
		if (!json_is_object(ms->j))
			continue;
		session_classify(c, ms);
		c->cur = ms;
		session_rules(c, ms);
		c->cur = NULL;
		free(ms->id);
	}
	free(ms);
	json_decref(j);
}

/* The session is over: report what was left unanswered. */
void
check_end(struct check *c, enum check_end how)
{
	rpc_end(c, how);
}
