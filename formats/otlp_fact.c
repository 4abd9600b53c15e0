/*
 * otlp_fact.c: what a span needs of one message, taken on the event
 * loop's thread.  The message is walked with core's scanner (the members
 * of the message, of its params, result or error, of params._meta) and
 * never parsed whole: a fact is a few short strings, and a payload is its
 * JSON text copied as it is, for the exporter's thread to parse.
 * Everything kept is bounded: strings at OTLP_STRING_MAX, payloads at
 * OTLP_PAYLOAD_MAX (left out above it, and said so).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

/* Where the members of one JSON-RPC object we look at are (0: absent). */
struct fact_scan {
	const char	*buf;
	const struct scan_member *jsonrpc, *params, *result, *error, *method,
			*id;
	struct scan_member m_jsonrpc, m_params, m_result, m_error, m_method,
			m_id;
};

/* Where a value was found, for the second-level walks. */
struct fact_val {
	const char	*buf;
	const char	*names[8];	/* the keys wanted, NULL-ended */
	struct scan_member found[8];
	int		 has[8];
};

/* Record the top-level members a fact needs. */
static int
otlp_fact_top_cb(const struct scan_member *mb, void *arg)
{
	struct fact_scan	*fs = arg;

	if (scan_key_is(fs->buf, mb, "jsonrpc")) {
		fs->m_jsonrpc = *mb;
		fs->jsonrpc = &fs->m_jsonrpc;
	} else if (scan_key_is(fs->buf, mb, "params")) {
		fs->m_params = *mb;
		fs->params = &fs->m_params;
	} else if (scan_key_is(fs->buf, mb, "result")) {
		fs->m_result = *mb;
		fs->result = &fs->m_result;
	} else if (scan_key_is(fs->buf, mb, "error")) {
		fs->m_error = *mb;
		fs->error = &fs->m_error;
	} else if (scan_key_is(fs->buf, mb, "method")) {
		fs->m_method = *mb;
		fs->method = &fs->m_method;
	} else if (scan_key_is(fs->buf, mb, "id")) {
		fs->m_id = *mb;
		fs->id = &fs->m_id;
	}
	return 0;
}

/* Record the members named in fv->names (the last of a duplicate wins). */
static int
otlp_fact_val_cb(const struct scan_member *mb, void *arg)
{
	struct fact_val	*fv = arg;
	size_t		 i;

	for (i = 0; fv->names[i] != NULL; i++) {
		if (scan_key_is(fv->buf, mb, fv->names[i])) {
			fv->found[i] = *mb;
			fv->has[i] = 1;
			break;
		}
	}
	return 0;
}

/*
 * Walk the object whose JSON text is at buf+off (len bytes) for the keys
 * in names; the offsets found are relative to buf.  0, or -1 when the
 * value is not an object.
 */
static int
otlp_fact_walk(const char *buf, size_t off, size_t len,
    const char *const *names, struct fact_val *fv)
{
	size_t	 i;

	memset(fv, 0, sizeof *fv);
	fv->buf = buf + off;
	for (i = 0; names[i] != NULL && i < 7; i++)
		fv->names[i] = names[i];
	if (scan_members(buf + off, len, otlp_fact_val_cb, fv) != 0)
		return -1;
	for (i = 0; fv->names[i] != NULL; i++)
		fv->found[i].val_off += off;
	fv->buf = buf;
	return 0;
}

/*
 * The value of the JSON string text at p (len bytes, quotes included),
 * decoded and cut to OTLP_STRING_MAX at a character boundary; NULL when
 * it is no string.
 */
static char *
otlp_fact_string(const char *p, size_t len, size_t *lenp)
{
	char	*out;
	size_t	 n = 0;

	if (len < 2 || p[0] != '"' || p[len - 1] != '"')
		return NULL;
	out = xmalloc(len - 1);
	if (scan_string_decode(p + 1, len - 2, out, &n) != 0) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	/* A \u0000 is kept: the length says where the string ends. */
	if (n > OTLP_STRING_MAX) {
		n = scan_utf8_trim(out, OTLP_STRING_MAX);
		out[n] = '\0';
	}
	if (lenp != NULL)
		*lenp = n;
	else if (strlen(out) != n) {
		/* no room for a length: what has a NUL is no value */
		free(out);
		return NULL;
	}
	return out;
}

/* The JSON text at p (len bytes), cut to OTLP_STRING_MAX at a boundary. */
static char *
otlp_fact_text(const char *p, size_t len)
{
	if (len > OTLP_STRING_MAX)
		len = scan_utf8_trim(p, OTLP_STRING_MAX);
	return xstrndup(p, len);
}

/*
 * The key that pairs an id (or a cancelled requestId) whose JSON text is
 * at p (len bytes): the text itself up to OTLP_ID_KEY_MAX, past it
 * "#sha256:" and the SHA-256 of all of it (no JSON text begins with #).
 */
static char *
otlp_fact_id_key(const char *p, size_t len)
{
	struct digest	*d;
	char		*hex, *out;

	if (len <= OTLP_ID_KEY_MAX)
		return xstrndup(p, len);
	d = digest_new();
	digest_update(d, p, len);
	hex = digest_hex_free(d);
	xasprintf(&out, "#sha256:%s", hex);
	free(hex);
	return out;
}

/*
 * The string member's value at mb, or NULL; its length to *lenp (NULL:
 * a value with a NUL in it is none, as for a version or traceparent).
 */
static char *
otlp_fact_member_string(const char *buf, const struct scan_member *mb,
    size_t *lenp)
{
	return otlp_fact_string(buf + mb->val_off, mb->val_len, lenp);
}

/* Whether string s of n bytes (it may hold NUL) is lit. */
static int
otlp_fact_is(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* Keep the JSON text at mb as f's payload, or note that it is too big. */
static void
otlp_fact_payload(struct otlp_fact *f, const char *buf,
    const struct scan_member *mb)
{
	if (mb->val_len > OTLP_PAYLOAD_MAX) {
		f->payload_omitted = 1;
		return;
	}
	free(f->payload);
	f->payload = xstrndup(buf + mb->val_off, mb->val_len);
}

/* Whether method m is one whose params.uri is mcp.resource.uri. */
static int
otlp_fact_has_uri(const char *m, size_t n)
{
	return otlp_fact_is(m, n, "resources/read") ||
	    otlp_fact_is(m, n, "resources/subscribe") ||
	    otlp_fact_is(m, n, "resources/unsubscribe") ||
	    otlp_fact_is(m, n, "notifications/resources/updated");
}

/* Fill f from the params of a request or notification. */
static void
otlp_fact_params(struct otlp_fact *f, const char *buf,
    const struct scan_member *pm, int payloads)
{
	static const char *const names[] = { "name", "uri", "_meta",
	    "protocolVersion", "requestId", "arguments", NULL };
	static const char *const meta_names[] = { "traceparent",
	    "tracestate", "io.modelcontextprotocol/protocolVersion", NULL };
	struct fact_val	 fv, mv;
	const char	*m = f->method;
	size_t		 mn = f->method_len;
	int		 named;

	if (otlp_fact_walk(buf, pm->val_off, pm->val_len, names, &fv) != 0)
		return;
	named = otlp_fact_is(m, mn, "tools/call") ||
	    otlp_fact_is(m, mn, "prompts/get");
	if (named && fv.has[0])
		f->name = otlp_fact_member_string(buf, &fv.found[0],
		    &f->name_len);
	if (otlp_fact_has_uri(m, mn) && fv.has[1])
		f->uri = otlp_fact_member_string(buf, &fv.found[1],
		    &f->uri_len);
	if (fv.has[2] && otlp_fact_walk(buf, fv.found[2].val_off,
	    fv.found[2].val_len, meta_names, &mv) == 0) {
		if (mv.has[0])
			f->traceparent = otlp_fact_member_string(buf,
			    &mv.found[0], NULL);
		if (mv.has[1])
			f->tracestate = otlp_fact_member_string(buf,
			    &mv.found[1], NULL);
		if (mv.has[2])
			f->meta_version = otlp_fact_member_string(buf,
			    &mv.found[2], NULL);
	}
	if (otlp_fact_is(m, mn, "initialize") && fv.has[3])
		f->protocol_version = otlp_fact_member_string(buf,
		    &fv.found[3], NULL);
	if (otlp_fact_is(m, mn, "notifications/cancelled") && fv.has[4])
		f->cancel_id = otlp_fact_id_key(buf + fv.found[4].val_off,
		    fv.found[4].val_len);
	if (payloads && named && fv.has[5])
		otlp_fact_payload(f, buf, &fv.found[5]);
}

/*
 * Fill f from the result of an answer.  Only a tools/call answer's
 * result is a payload, and the fact cannot know what it answers: a
 * result is kept only when it has "content" or "structuredContent" (a
 * CallToolResult has one of them), so tools/list, resources/read and
 * the like are not copied on the loop's thread nor counted in the queue.
 */
static void
otlp_fact_result(struct otlp_fact *f, const char *buf,
    const struct scan_member *rm, int payloads)
{
	static const char *const names[] = { "isError", "protocolVersion",
	    "content", "structuredContent", NULL };
	struct fact_val	 fv;

	if (otlp_fact_walk(buf, rm->val_off, rm->val_len, names, &fv) != 0)
		return;
	if (payloads && (fv.has[2] || fv.has[3]))
		otlp_fact_payload(f, buf, rm);
	if (fv.has[0] && fv.found[0].val_len == 4 &&
	    memcmp(buf + fv.found[0].val_off, "true", 4) == 0)
		f->tool_error = 1;
	if (fv.has[1])
		f->protocol_version = otlp_fact_member_string(buf,
		    &fv.found[1], NULL);
}

/*
 * Whether the JSON text at p (len bytes) is an integer within int64: 1
 * and its value in *v; -1 when it is an integer out of that range; 0
 * when it is no integer.
 */
static int
otlp_fact_integer(const char *p, size_t len, int64_t *v)
{
	char	 tmp[32], *end;
	long long ll;
	size_t	 i;

	for (i = (len > 0 && p[0] == '-') ? 1 : 0; i < len; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	if (len == 0 || (len == 1 && p[0] == '-'))
		return 0;
	if (len >= sizeof tmp)
		return -1;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	errno = 0;
	ll = strtoll(tmp, &end, 10);
	if (*end != '\0')
		return 0;
	if (errno == ERANGE)
		return -1;
	*v = (int64_t)ll;
	return 1;
}

/* Fill f from the error of an error answer. */
static void
otlp_fact_error(struct otlp_fact *f, const char *buf,
    const struct scan_member *em)
{
	static const char *const names[] = { "code", "message", NULL };
	struct fact_val	 fv;
	int		 r;

	if (otlp_fact_walk(buf, em->val_off, em->val_len, names, &fv) != 0)
		return;
	if (fv.has[0]) {
		r = otlp_fact_integer(buf + fv.found[0].val_off,
		    fv.found[0].val_len, &f->code);
		f->has_code = r == 1;
		if (r == -1)
			f->code_text = otlp_fact_text(buf + fv.found[0].val_off,
			    fv.found[0].val_len);
	}
	if (fv.has[1])
		f->message = otlp_fact_member_string(buf, &fv.found[1],
		    &f->message_len);
}

/* Add up the bytes f holds. */
static size_t
otlp_fact_size(const struct otlp_fact *f)
{
	const char	*s[] = { f->method, f->id, f->id_key, f->jsonrpc, f->name, f->uri,
	    f->traceparent, f->tracestate, f->protocol_version, f->meta_version,
	    f->cancel_id,
	    f->message, f->payload, f->code_text };
	size_t		 i, n = sizeof *f;

	for (i = 0; i < sizeof s / sizeof s[0]; i++)
		if (s[i] != NULL)
			n += strlen(s[i]) + 1;
	/* past a NUL in them */
	n += f->method_len + f->name_len + f->uri_len + f->message_len;
	return n;
}

/*
 * The fact of one JSON-RPC object (len bytes at buf), or NULL when it is
 * none a span comes of.  One walk of its members finds what scan_message()
 * would (its kind by the same rules: a method that is no string makes it
 * no message) and what the fact needs, so the message is read once at
 * the top.  trunc: buf is a truncated message's ident, which has no
 * params, result or error worth reading.
 */
static struct otlp_fact *
otlp_fact_one(const struct msg *m, const char *buf, size_t len, int trunc,
    int payloads)
{
	struct otlp_fact	*f;
	struct fact_scan	 fs;
	enum msg_kind		 kind;
	char			*v, *method = NULL;
	size_t			 method_len = 0;

	memset(&fs, 0, sizeof fs);
	fs.buf = buf;
	if (scan_members(buf, len, otlp_fact_top_cb, &fs) != 0)
		return NULL;
	if (fs.method != NULL) {
		method = otlp_fact_member_string(buf, fs.method,
		    &method_len);
		if (method == NULL)
			return NULL;
		kind = fs.id != NULL ? KIND_REQUEST : KIND_NOTIFICATION;
	} else if (fs.result != NULL && fs.error == NULL)
		kind = KIND_RESPONSE;
	else if (fs.error != NULL && fs.result == NULL)
		kind = KIND_ERROR;
	else
		return NULL;
	f = xcalloc(1, sizeof *f);
	f->dir = m->dir;
	f->kind = kind;
	f->ts_ns = m->ts_ns;
	f->method = method;
	f->method_len = method_len;
	if (fs.id != NULL && !(fs.id->val_len == 4 &&
	    memcmp(buf + fs.id->val_off, "null", 4) == 0)) {
		f->id = otlp_fact_text(buf + fs.id->val_off, fs.id->val_len);
		f->id_key = otlp_fact_id_key(buf + fs.id->val_off,
		    fs.id->val_len);
	}
	if (trunc)
		goto done;
	if (fs.jsonrpc != NULL) {
		v = otlp_fact_member_string(buf, fs.jsonrpc, NULL);
		if (v == NULL)
			f->jsonrpc = otlp_fact_text(buf + fs.jsonrpc->val_off,
			    fs.jsonrpc->val_len);
		else if (strcmp(v, "2.0") != 0)
			f->jsonrpc = v;
		else
			free(v);
	}
	if (f->method != NULL && fs.params != NULL)
		otlp_fact_params(f, buf, fs.params, payloads);
	if (kind == KIND_RESPONSE)
		otlp_fact_result(f, buf, fs.result, payloads);
	if (kind == KIND_ERROR)
		otlp_fact_error(f, buf, fs.error);
done:
	f->size = otlp_fact_size(f);
	return f;
}

/* One batch element: appended to the list being made. */
struct fact_batch {
	const struct msg	*m;
	int			 payloads;
	struct otlp_fact	*head, **tail;
};

static int
otlp_fact_element_cb(const char *p, size_t len, void *arg)
{
	struct fact_batch	*fb = arg;
	struct otlp_fact	*f;

	if ((f = otlp_fact_one(fb->m, p, len, 0, fb->payloads)) != NULL) {
		*fb->tail = f;
		fb->tail = &f->next;
	}
	return 0;
}

/* The facts of message m (one per batch element); see formats.h. */
struct otlp_fact *
otlp_fact_new(const struct msg *m, int payloads)
{
	struct fact_batch	 fb;
	size_t			 i;

	if (m->flags & MSG_TRUNCATED) {
		if (m->ident == NULL)
			return NULL;
		return otlp_fact_one(m, m->ident, m->ident_len, 1, 0);
	}
	for (i = 0; i < m->len && (m->raw[i] == ' ' || m->raw[i] == '\t' ||
	    m->raw[i] == '\r' || m->raw[i] == '\n'); i++)
		;
	if (i == m->len)
		return NULL;
	if (m->raw[i] == '{')
		return otlp_fact_one(m, m->raw, m->len, 0, payloads);
	if (m->raw[i] != '[')
		return NULL;
	fb.m = m;
	fb.payloads = payloads;
	fb.head = NULL;
	fb.tail = &fb.head;
	if (scan_elements(m->raw, m->len, otlp_fact_element_cb, &fb) != 0) {
		otlp_fact_free(fb.head);
		return NULL;
	}
	return fb.head;
}

/* Free a list of facts. */
void
otlp_fact_free(struct otlp_fact *f)
{
	struct otlp_fact	*next;

	for (; f != NULL; f = next) {
		next = f->next;
		free(f->method);
		free(f->id);
		free(f->id_key);
		free(f->jsonrpc);
		free(f->name);
		free(f->uri);
		free(f->traceparent);
		free(f->tracestate);
		free(f->protocol_version);
		free(f->meta_version);
		free(f->cancel_id);
		free(f->message);
		free(f->code_text);
		free(f->payload);
		free(f);
	}
}
