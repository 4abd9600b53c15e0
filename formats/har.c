/*
 * An HTTP session as an HTTP Archive (HAR 1.2): one entry for each
 * http_exchanges row, with the JSON-RPC messages that travelled in it as
 * the posted data and the response content.  Where --fault injected a
 * fault, the entry is what the client saw (the messages mcpreel made, not
 * those it kept from the client), "_faults" lists the messages of faults
 * it holds, "_fault" names the fault that made its response, and the
 * log's "_faults" holds the faults rows.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "formats.h"
#include "store.h"
#include "transport.h"

/* What mcpreel speaks to clients and upstreams. */
#define HAR_HTTP_VERSION	"HTTP/1.1"

/* One message of an exchange, copied out of its row. */
struct har_msg {
	enum dir	 dir;
	char		*raw;
	size_t		 len;
	char		*sse_id;
	int64_t		 fault;		/* its fault, or 0 */
	int		 role;		/* FAULT_ROLE_* */
};

/* An exchange with its messages, until the entry is built. */
struct har_x {
	json_t		*entry;		/* built from the row, less bodies */
	int64_t		 id;
	int		 sse;		/* the response is text/event-stream */
	char		*body;		/* the row's body (an error page) */
	size_t		 body_len;
	int		 has_body;
	struct har_msg	*msgs;
	size_t		 nmsgs;
};

/*
 * The document being written: one exchange's entry at a time, as its
 * messages come off a cursor sorted the way the exchanges are, then the
 * faults rows (the log's "_faults") one at a time.
 */
struct har {
	const char		*target;	/* the session's upstream URL */
	FILE			*out;
	struct export_cursor	*cur;
	struct export_row	 row;		/* the cursor's current row */
	int			 have_row;	/* row not yet taken */
	int			 cur_done;
	size_t			 nxs;		/* entries written */
	int64_t			 tied;		/* messages in an entry */
	size_t			 nfaults;	/* faults rows written */
	int			 failed;	/* a value could not be dumped */
	char			*cause;		/* why the walk stopped */
};

/* Wall-clock ns as ISO 8601 in UTC with milliseconds. */
static void
har_time(int64_t ns, char *buf, size_t len)
{
	/* Floor division: a time before 1970 keeps its milliseconds >= 0. */
	int64_t		ms = ns / 1000000 - (ns % 1000000 < 0);
	time_t		t = (time_t)(ms / 1000 - (ms % 1000 < 0));
	struct tm	tm;
	char		sec[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(sec, sizeof sec, "1970-01-01T00:00:00");
	snprintf(buf, len, "%s.%03dZ", sec, (int)(ms - (int64_t)t * 1000));
}

/* Milliseconds from microseconds (whole ones: sums stay exact). */
static json_t *
har_ms(int64_t us)
{
	return json_real((double)us / 1000.0);
}

/* The usual reason phrase of a status (mcpreel does not store the one sent). */
static const char *
har_status_text(int status)
{
	const char	*text = http_reason(status);

	return (text != NULL) ? text : "";
}

/* Text that may not be UTF-8 as a string: such bytes become U+FFFD. */
static json_t *
har_text(const void *raw, size_t len, int *lossy)
{
	const unsigned char	*p = raw;
	json_t			*v;
	char			*out;
	size_t			 i, n, o = 0;

	*lossy = 0;
	if ((v = json_stringn(raw != NULL ? raw : "", len)) != NULL)
		return v;
	*lossy = 1;
	out = xmalloc(len * 3 + 1);
	for (i = 0; i < len; i += n) {
		if (p[i] != 0 && (n = scan_utf8_len(p + i, p + len)) != 0) {
			memcpy(out + o, p + i, n);
			o += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	v = json_stringn(out, o);
	free(out);
	return v;
}

/*
 * A header list as stored (a JSON array of [name, value]) as HAR header
 * objects; *ctype and *location get those headers' values (or stay NULL).
 */
static json_t *
har_headers(const char *text, const char **ctype, const char **location,
    json_t **keep)
{
	json_t		*a, *pair, *out = json_array(), *h;
	const char	*name, *value;
	size_t		 i;

	*keep = NULL;
	if (text == NULL || (a = json_loads(text, 0, NULL)) == NULL)
		return out;
	json_array_foreach(a, i, pair) {
		name = json_string_value(json_array_get(pair, 0));
		value = json_string_value(json_array_get(pair, 1));
		if (name == NULL || value == NULL)
			continue;
		h = json_object();
		json_object_set_new(h, "name", json_string(name));
		json_object_set_new(h, "value", json_string(value));
		json_array_append_new(out, h);
		if (ctype != NULL && *ctype == NULL &&
		    strcasecmp(name, "Content-Type") == 0)
			*ctype = value;
		if (location != NULL && *location == NULL &&
		    strcasecmp(name, "Location") == 0)
			*location = value;
	}
	*keep = a;	/* the values above point into it */
	return out;
}

/* The value of the Host header in a stored header list, or NULL. */
static char *
har_host(const char *text)
{
	json_t		*a, *pair;
	const char	*name, *value;
	char		*host = NULL;
	size_t		 i;

	if (text == NULL || (a = json_loads(text, 0, NULL)) == NULL)
		return NULL;
	json_array_foreach(a, i, pair) {
		name = json_string_value(json_array_get(pair, 0));
		value = json_string_value(json_array_get(pair, 1));
		if (name != NULL && value != NULL &&
		    strcasecmp(name, "Host") == 0) {
			host = xstrdup(value);
			break;
		}
	}
	json_decref(a);
	return host;
}

/*
 * The request's absolute URL: the path under the Host the client named,
 * else under the upstream's scheme and authority.
 */
static char *
har_url(const struct har *h, const struct exchange_row *x)
{
	const char	*target = h->target, *p;
	char		*host, *url;

	if (strncmp(x->path, "http://", 7) == 0 ||
	    strncmp(x->path, "https://", 8) == 0)
		return xstrdup(x->path);
	if ((host = har_host(x->request_headers)) != NULL) {
		xasprintf(&url, "http://%s%s", host, x->path);
		free(host);
		return url;
	}
	if ((p = strstr(target, "://")) != NULL &&
	    (p = strchr(p + 3, '/')) != NULL)
		xasprintf(&url, "%.*s%s", (int)(p - target), target, x->path);
	else
		xasprintf(&url, "%s%s", target, x->path);
	return url;
}

/* A query string part, percent-decoded when that gives UTF-8. */
static json_t *
har_query_part(const char *s, size_t len)
{
	char	*out = xmalloc(len + 1);
	size_t	 i, o = 0;
	json_t	*v;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len &&
		    (hi = scan_hex_value((unsigned char)s[i + 1])) >= 0 &&
		    (lo = scan_hex_value((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[o++] = s[i];
	}
	if ((v = json_stringn(out, o)) == NULL)
		v = json_stringn(s, len);
	free(out);
	return v != NULL ? v : json_string("");
}

/* The query parameters of a request-target. */
static json_t *
har_query(const char *path)
{
	json_t		*out = json_array(), *q;
	const char	*p, *amp, *eq;

	if ((p = strchr(path, '?')) == NULL)
		return out;
	for (p++; *p != '\0'; p = (*amp == '&') ? amp + 1 : amp) {
		if ((amp = strchr(p, '&')) == NULL)
			amp = p + strlen(p);
		if (amp == p)
			continue;
		eq = memchr(p, '=', (size_t)(amp - p));
		q = json_object();
		json_object_set_new(q, "name", har_query_part(p, (size_t)((eq !=
		    NULL ? eq : amp) - p)));
		json_object_set_new(q, "value", eq != NULL ?
		    har_query_part(eq + 1, (size_t)(amp - eq - 1)) :
		    json_string(""));
		json_array_append_new(out, q);
	}
	return out;
}

/* The entry of one exchange into hx, without its bodies (they come later). */
static void
har_entry(struct har *h, const struct exchange_row *x, struct har_x *hx)
{
	json_t		*e, *req, *resp, *t, *keep_req, *keep_resp;
	const char	*ctype = NULL, *location = NULL, *rctype = NULL;
	char		 when[40], *url;
	int64_t		 total, wait;

	memset(hx, 0, sizeof *hx);
	hx->id = x->id;

	/* In microseconds; time is the sum of wait and receive (send: 0). */
	total = x->has_ended ? clock_sub(x->ended_ns, x->started_ns) / 1000 :
	    0;
	wait = x->has_response_mono ? clock_sub(x->response_mono_ns,
	    x->mono_ns) / 1000 : total;
	if (wait < 0)
		wait = 0;
	if (total < wait)
		total = wait;

	req = json_object();
	json_object_set_new(req, "method", json_string(x->method));
	url = har_url(h, x);
	json_object_set_new(req, "url", fjson_str(url));
	free(url);
	json_object_set_new(req, "httpVersion", json_string(HAR_HTTP_VERSION));
	json_object_set_new(req, "cookies", json_array());
	json_object_set_new(req, "headers", har_headers(x->request_headers,
	    &rctype, NULL, &keep_req));
	json_object_set_new(req, "queryString", har_query(x->path));
	json_object_set_new(req, "headersSize", json_integer(-1));
	json_object_set_new(req, "bodySize", json_integer(-1));
	if (rctype != NULL)
		json_object_set_new(req, "_mimeType", json_string(rctype));
	json_decref(keep_req);

	resp = json_object();
	json_object_set_new(resp, "status", json_integer(x->has_status ?
	    x->status : 0));
	json_object_set_new(resp, "statusText", json_string(x->has_status ?
	    har_status_text(x->status) : ""));
	json_object_set_new(resp, "httpVersion", json_string(x->has_status ?
	    HAR_HTTP_VERSION : ""));
	json_object_set_new(resp, "cookies", json_array());
	json_object_set_new(resp, "headers", har_headers(x->response_headers,
	    &ctype, &location, &keep_resp));
	t = json_object();
	json_object_set_new(t, "size", json_integer(0));
	json_object_set_new(t, "mimeType", json_string(ctype != NULL ?
	    ctype : "x-unknown"));
	json_object_set_new(resp, "content", t);
	json_object_set_new(resp, "redirectURL", json_string(location !=
	    NULL ? location : ""));
	json_object_set_new(resp, "headersSize", json_integer(-1));
	json_object_set_new(resp, "bodySize", json_integer(-1));
	hx->sse = ctype != NULL && strstr(ctype, "text/event-stream") != NULL;
	json_decref(keep_resp);
	if (!x->has_status)
		json_object_set_new(resp, "comment", json_string("no response "
		    "came"));

	e = json_object();
	har_time(x->started_ns, when, sizeof when);
	json_object_set_new(e, "startedDateTime", json_string(when));
	json_object_set_new(e, "time", har_ms(total));
	json_object_set_new(e, "request", req);
	json_object_set_new(e, "response", resp);
	json_object_set_new(e, "cache", json_object());
	t = json_object();
	json_object_set_new(t, "send", json_integer(0));
	json_object_set_new(t, "wait", har_ms(wait));
	json_object_set_new(t, "receive", har_ms(total - wait));
	json_object_set_new(e, "timings", t);
	json_object_set_new(e, "connection", json_sprintf("%lld",
	    (long long)x->connection));
	if (x->outcome != NULL)
		json_object_set_new(e, "_outcome", json_string(x->outcome));
	if (x->fault != 0)
		json_object_set_new(e, "_fault", json_integer(x->fault));
	hx->entry = e;
	if (x->has_body) {
		hx->has_body = 1;
		hx->body = xmalloc(x->body_len + 1);
		if (x->body_len > 0)
			memcpy(hx->body, x->body, x->body_len);
		hx->body_len = x->body_len;
	}
}

/* A faults row for the log's "_faults". */
static json_t *
har_fault(const struct fault_row *f)
{
	json_t	*o = json_object(), *id;

	json_object_set_new(o, "n", json_integer(f->n));
	json_object_set_new(o, "ts_ns", json_integer(f->ts_ns));
	json_object_set_new(o, "rule_index", json_integer(f->rule_index));
	fjson_fault_rule(o, f);
	id = f->rpc_id != NULL ? json_loads(f->rpc_id, JSON_DECODE_ANY,
	    NULL) : NULL;
	json_object_set_new(o, "id", id != NULL ? id :
	    fjson_str(f->rpc_id));
	fjson_text(o, "detail", "detail_base64", f->detail);
	return o;
}

/*
 * Whether a message went to its receiver: not one mcpreel kept from it
 * (the client got what mcpreel made instead), and not the request
 * mcpreel made of the client's (the client posted its own).
 */
static int
har_seen(const struct har_msg *m)
{
	if (m->dir == DIR_S2C)
		return m->role != FAULT_ROLE_ORIGINAL;
	return m->role != FAULT_ROLE_INJECTED;
}

/* Whether a session has a faults row: *arg set at the first, which stops. */
static int
har_any_fault_cb(const struct export_row *r, void *arg)
{
	int	*any = arg;

	if (!r->is_event || r->e.fault == NULL)
		return 0;
	*any = 1;
	return 1;
}

/*
 * Copy the messages of exchange hx off the cursor into it: those at its
 * head that are tied to it (the cursor gives them grouped, in the
 * exchanges' order).  -1 with h->cause when the cursor cannot be read.
 */
static int
har_take(struct har *h, struct har_x *hx)
{
	const struct export_row	*r = &h->row;
	struct har_msg		*m;
	int			 rc;

	for (;;) {
		if (!h->have_row) {
			if (h->cur_done)
				return 0;
			if ((rc = query_exchange_msgs_next(h->cur, &h->row,
			    &h->cause)) < 0)
				return -1;
			if (rc == 0) {
				h->cur_done = 1;
				return 0;
			}
			h->have_row = 1;
		}
		if (r->exchange != hx->id)
			return 0;
		hx->msgs = xreallocarray(hx->msgs, hx->nmsgs + 1,
		    sizeof *hx->msgs);
		m = &hx->msgs[hx->nmsgs++];
		m->dir = r->m.dir;
		m->len = r->m.len;
		m->raw = xmalloc(m->len + 1);
		if (m->len > 0)
			memcpy(m->raw, r->m.raw, m->len);
		m->sse_id = (r->sse_id != NULL) ? xstrdup(r->sse_id) : NULL;
		m->fault = r->m.fault;
		m->role = r->m.fault_role;
		h->have_row = 0;
		h->tied++;
	}
}

/*
 * Write s (a value dumped with JSON_INDENT(2)) as it would be dumped at
 * depth levels: each of its lines after the first indented by that much.
 */
static void
har_put(FILE *out, const char *s, int depth)
{
	const char	*nl;

	while ((nl = strchr(s, '\n')) != NULL) {
		fwrite(s, 1, (size_t)(nl + 1 - s), out);
		fprintf(out, "%*s", depth * 2, "");
		s = nl + 1;
	}
	fputs(s, out);
}

/* How har_write() dumps its JSON, entry by entry and the rest around. */
#define HAR_DUMP_FLAGS \
	(JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* An entry's depth in the document: root, log, entries (and _faults). */
#define HAR_ENTRY_DEPTH	3

/*
 * Write v as element n of one of the log's arrays, as json_dumps() would
 * lay it out inside the whole document (the "[" before the first).
 */
static void
har_element(struct har *h, json_t *v, size_t n)
{
	char	*s = json_dumps(v, HAR_DUMP_FLAGS);

	if (s == NULL)
		h->failed = 1;
	fprintf(h->out, n == 0 ? "[\n%*s" : ",\n%*s", HAR_ENTRY_DEPTH * 2, "");
	har_put(h->out, s != NULL ? s : "null", HAR_ENTRY_DEPTH);
	free(s);
}

/* Close an array har_element() wrote n elements of. */
static void
har_element_end(struct har *h, size_t n)
{
	if (n == 0)
		fputs("[]", h->out);
	else
		fprintf(h->out, "\n%*s]", (HAR_ENTRY_DEPTH - 1) * 2, "");
}

/* Write each faults row as an element of the log's "_faults". */
static int
har_fault_cb(const struct export_row *r, void *arg)
{
	struct har	*h = arg;
	json_t		*o;

	if (!r->is_event || r->e.fault == NULL)
		return 0;
	o = har_fault(r->e.fault);
	har_element(h, o, h->nfaults++);
	json_decref(o);
	return 0;
}

static void	har_bodies(struct har_x *);

/* Build, fill and write one exchange's entry, then let it go. */
static int
har_exchange_cb(const struct exchange_row *x, void *arg)
{
	struct har	*h = arg;
	struct har_x	 hx;
	size_t		 j;
	int		 rc = 0;

	har_entry(h, x, &hx);
	if (har_take(h, &hx) != 0)
		rc = -1;
	else {
		har_bodies(&hx);
		har_element(h, hx.entry, h->nxs++);
	}
	json_decref(hx.entry);
	for (j = 0; j < hx.nmsgs; j++) {
		free(hx.msgs[j].raw);
		free(hx.msgs[j].sse_id);
	}
	free(hx.msgs);
	free(hx.body);
	return rc;
}

/* Append to a growing buffer. */
static void
har_append(char **buf, size_t *len, const void *p, size_t n)
{
	*buf = xreallocarray(*buf, *len + n + 1, 1);
	memcpy(*buf + *len, p, n);
	*len += n;
}

/*
 * The response body: the SSE events rebuilt from their data and ids, or
 * the JSON body, or the error page the row kept.  NULL when none.
 */
static char *
har_response_body(const struct har_x *hx, size_t *len, int *rebuilt)
{
	const struct har_msg	*m;
	const char		*p, *nl, *end;
	char			*buf = NULL;
	size_t			 i, n = 0;

	*rebuilt = 0;
	for (i = 0; i < hx->nmsgs; i++) {
		m = &hx->msgs[i];
		if (m->dir != DIR_S2C || !har_seen(m))
			continue;
		if (!hx->sse) {
			if (n > 0)
				har_append(&buf, &n, "\n", 1);
			har_append(&buf, &n, m->raw, m->len);
			continue;
		}
		*rebuilt = 1;
		if (m->sse_id != NULL) {
			har_append(&buf, &n, "id: ", 4);
			har_append(&buf, &n, m->sse_id, strlen(m->sse_id));
			har_append(&buf, &n, "\n", 1);
		}
		end = m->raw + m->len;
		for (p = m->raw; ; p = nl + 1) {
			if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
				nl = end;
			har_append(&buf, &n, "data: ", 6);
			har_append(&buf, &n, p, (size_t)(nl - p));
			har_append(&buf, &n, "\n", 1);
			if (nl == end)
				break;
		}
		har_append(&buf, &n, "\n", 1);
	}
	if (buf == NULL && hx->has_body) {
		buf = xmalloc(hx->body_len + 1);
		memcpy(buf, hx->body, hx->body_len);
		n = hx->body_len;
	}
	*len = n;
	return buf;
}

/* Put the messages into the entry: posted data, response content. */
static void
har_bodies(struct har_x *hx)
{
	json_t		*req = json_object_get(hx->entry, "request");
	json_t		*resp = json_object_get(hx->entry, "response");
	json_t		*content = json_object_get(resp, "content"), *pd;
	json_t		*mime, *text, *fl = NULL, *o;
	char		*body, *b64;
	size_t		 i, len, blen;
	int		 lossy, rebuilt;

	for (i = 0; i < hx->nmsgs; i++) {
		if (fault_role_name(hx->msgs[i].role) == NULL)
			continue;
		if (fl == NULL)
			fl = json_array();
		o = json_object();
		json_object_set_new(o, "fault", json_integer(hx->msgs[i].fault));
		json_object_set_new(o, "role",
		    json_string(fault_role_name(hx->msgs[i].role)));
		json_object_set_new(o, "direction",
		    json_string(dir_name(hx->msgs[i].dir)));
		json_array_append_new(fl, o);
	}
	if (fl != NULL)
		json_object_set_new(hx->entry, "_faults", fl);
	for (i = 0; i < hx->nmsgs; i++) {
		if (hx->msgs[i].dir != DIR_C2S || !har_seen(&hx->msgs[i]))
			continue;
		pd = json_object();
		mime = json_object_get(req, "_mimeType");
		json_object_set_new(pd, "mimeType", json_string(mime != NULL ?
		    json_string_value(mime) : "application/json"));
		json_object_set_new(pd, "text", har_text(hx->msgs[i].raw,
		    hx->msgs[i].len, &lossy));
		if (lossy)
			json_object_set_new(pd, "comment", json_string("not "
			    "UTF-8: those bytes are shown as U+FFFD"));
		json_object_set_new(req, "postData", pd);
		json_object_set_new(req, "bodySize",
		    json_integer((json_int_t)hx->msgs[i].len));
		break;
	}
	if (i == hx->nmsgs && (strcmp(json_string_value(json_object_get(req,
	    "method")), "GET") == 0 || strcmp(json_string_value(
	    json_object_get(req, "method")), "DELETE") == 0))
		json_object_set_new(req, "bodySize", json_integer(0));
	json_object_del(req, "_mimeType");

	if ((body = har_response_body(hx, &len, &rebuilt)) == NULL)
		return;
	json_object_set_new(content, "size", json_integer((json_int_t)len));
	if ((text = json_stringn(body, len)) != NULL)
		json_object_set_new(content, "text", text);
	else {
		b64 = b64_encode(body, len, &blen);
		json_object_set_new(content, "text", json_stringn(b64, blen));
		json_object_set_new(content, "encoding", json_string("base64"));
		free(b64);
	}
	if (rebuilt)
		json_object_set_new(content, "comment", json_string("the SSE "
		    "events rebuilt from their recorded data and ids (comments, "
		    "event names and retry fields are not recorded)"));
	else
		json_object_set_new(resp, "bodySize",
		    json_integer((json_int_t)len));
	free(body);
}

static int
har_info_cb(const struct session_info *si, void *arg)
{
	char	**target = arg;

	*target = xstrdup(si->target);
	return 0;
}

/*
 * The document around its arrays, dumped with a marker in place of the
 * entries and one in place of "_faults" (when any): the text before,
 * between and after them in parts[0..2] (each to free; parts[2] "" when
 * there are no faults rows).
 */
static int
har_frame(int64_t id, size_t nxs, int64_t loose, int any_faults,
    char *parts[3])
{
	json_t		*root, *log, *creator;
	char		*s, *at, *at2 = NULL;
	const char	*mark = "\"\\u0001\"", *mark2 = "\"\\u0002\"";

	creator = json_object();
	json_object_set_new(creator, "name", json_string("mcpreel"));
	json_object_set_new(creator, "version", json_string(MCPREEL_VERSION));
	log = json_object();
	json_object_set_new(log, "version", json_string("1.2"));
	json_object_set_new(log, "creator", creator);
	json_object_set_new(log, "entries", json_string("\001"));
	json_object_set_new(log, "comment", json_sprintf("mcpreel session "
	    "%lld: %zu HTTP requests%s", (long long)id, nxs, loose != 0 ?
	    "; messages tied to no HTTP request are left out" : ""));
	if (any_faults)
		json_object_set_new(log, "_faults", json_string("\002"));
	root = json_object();
	json_object_set_new(root, "log", log);
	s = json_dumps(root, HAR_DUMP_FLAGS);
	json_decref(root);
	if (s == NULL || (at = strstr(s, mark)) == NULL || (any_faults &&
	    (at2 = strstr(at + strlen(mark), mark2)) == NULL)) {
		free(s);
		return -1;
	}
	*at = '\0';
	parts[0] = s;
	if (at2 != NULL) {
		*at2 = '\0';
		parts[2] = xstrdup(at2 + strlen(mark2));
	} else
		parts[2] = xstrdup("");
	parts[1] = xstrdup(at + strlen(mark));
	return 0;
}

/* Free what har_frame() made. */
static void
har_frame_free(char *parts[3])
{
	size_t	i;

	for (i = 0; i < 3; i++) {
		free(parts[i]);
		parts[i] = NULL;
	}
}

/*
 * Write session id of st as a HAR 1.2 document to out, one entry and one
 * faults row at a time: memory holds one exchange and its messages, not
 * the session.
 */
int
har_write(struct store *st, int64_t id, FILE *out, char **cause)
{
	struct har	 h;
	char		*target = NULL, *parts[3] = { NULL, NULL, NULL };
	int64_t		 messages, events, exchanges;
	int		 rc = -1, any_faults = 0;

	memset(&h, 0, sizeof h);
	h.out = out;
	/* One snapshot of a session that may still be recorded. */
	if (store_exec(st, "BEGIN", cause) != 0)
		return -1;
	if (query_session_info(st, id, har_info_cb, &target, cause) != 0 ||
	    query_session_counts(st, id, &messages, &events, &exchanges,
	    cause) != 0 ||
	    query_events(st, id, har_any_fault_cb, &any_faults, cause) != 0 ||
	    (h.cur = query_exchange_msgs_open(st, id, cause)) == NULL)
		goto out;
	h.target = target;
	if (har_frame(id, 0, 0, any_faults, parts) != 0) {
		xasprintf(cause, "cannot write the HAR");
		goto out;
	}
	fputs(parts[0], out);
	if (query_exchanges(st, id, har_exchange_cb, &h, cause) != 0)
		goto out;
	if (h.cause != NULL) {
		*cause = h.cause;
		h.cause = NULL;
		goto out;
	}
	har_element_end(&h, h.nxs);
	/* The comment counts the entries: the frame again, now they are. */
	har_frame_free(parts);
	if (har_frame(id, h.nxs, messages - h.tied, any_faults, parts) != 0) {
		xasprintf(cause, "cannot write the HAR");
		goto out;
	}
	fputs(parts[1], out);
	if (any_faults) {
		if (query_events(st, id, har_fault_cb, &h, cause) != 0)
			goto out;
		har_element_end(&h, h.nfaults);
		fputs(parts[2], out);
	}
	if (fputc('\n', out) == EOF || ferror(out) || h.failed)
		xasprintf(cause, "cannot write the HAR");
	else
		rc = 0;
out:
	query_exchange_msgs_close(h.cur);
	store_exec(st, "COMMIT", NULL);
	free(h.cause);
	har_frame_free(parts);
	free(target);
	return rc;
}
