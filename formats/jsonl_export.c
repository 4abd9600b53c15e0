/*
 * A recorded session as JSON lines (the cassette): a header line with
 * the session, its HTTP exchanges, then its messages, events and faults
 * in the order recorded, each message's bytes as they were, so that
 * import.c gives back the same session byte for byte.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats.h"
#include "store.h"

/* A JSON text put into a line as written, after the members jansson made. */
struct verbatim {
	const char	*key;
	const void	*text;
	size_t		 len;
};

struct jsonl_out {
	FILE		*out;
	int		 write_failed;
	int		 version;	/* JSONL_VERSION or _PLAIN */
	int64_t		*xids;		/* the session's exchanges' row ids */
	size_t		 nx;
	size_t		 xcap;
};

/*
 * Whether text can go into a line as it is: JSON the scanner takes as a
 * JSON-RPC message or a batch (an array), with no line break that would
 * split the line and no white space at either end that reading the
 * member back would not keep.
 */
static int
jsonl_export_verbatim_ok(const void *text, size_t len)
{
	const unsigned char	*p = text;
	struct scan		 sc;

	if (len == 0 || p[0] == ' ' || p[0] == '\t' || p[len - 1] == ' ' ||
	    p[len - 1] == '\t' || memchr(p, '\n', len) != NULL ||
	    memchr(p, '\r', len) != NULL)
		return 0;
	scan_message(text, len, &sc);
	return sc.kind != KIND_INVALID;
}

static int
jsonl_export_nothing_cb(const struct scan_member *mb, void *arg)
{
	return 0;
}

/*
 * Whether a short text (an id, a header list) is one JSON value that can
 * go into a line as it is: the scanner reads it as a member's value.
 */
static int
jsonl_export_value_ok(const char *text)
{
	char	*obj;
	size_t	 len = strlen(text);
	int	 ok;

	if (len == 0 || strpbrk(text, "\n\r") != NULL || text[0] == ' ' ||
	    text[0] == '\t' || text[len - 1] == ' ' || text[len - 1] == '\t')
		return 0;
	xasprintf(&obj, "{\"v\":%s}", text);
	ok = scan_members(obj, strlen(obj), jsonl_export_nothing_cb, NULL) == 0;
	free(obj);
	return ok;
}

static json_t *
jsonl_export_int_or_null(int has, int64_t v)
{
	return has ? json_integer(v) : json_null();
}

/* Write bytes, remembering a failure for the end. */
static void
jsonl_export_write(struct jsonl_out *ex, const void *p, size_t len)
{
	if (len != 0 && fwrite(p, 1, len, ex->out) != len)
		ex->write_failed = 1;
}

/*
 * Write obj as one line, with the verbatim members after its own.  Takes
 * obj.
 */
static void
jsonl_export_line(struct jsonl_out *ex, json_t *obj,
    const struct verbatim *v, size_t nv)
{
	char	*s;
	size_t	 len, i;

	s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (s == NULL) {
		ex->write_failed = 1;
		return;
	}
	len = strlen(s);
	/* Every object here has members: s ends "...}". */
	jsonl_export_write(ex, s, len - 1);
	for (i = 0; i < nv; i++) {
		jsonl_export_write(ex, ",\"", 2);
		jsonl_export_write(ex, v[i].key, strlen(v[i].key));
		jsonl_export_write(ex, "\":", 2);
		jsonl_export_write(ex, v[i].text, v[i].len);
	}
	jsonl_export_write(ex, "}\n", 2);
	free(s);
}

/* The first line: the session itself. */
static int
jsonl_export_header_cb(const struct session_info *si, void *arg)
{
	struct jsonl_out	*ex = arg;
	json_t		*o = json_object();

	json_object_set_new(o, "format", json_string(JSONL_FORMAT));
	json_object_set_new(o, "version", json_integer(ex->version));
	json_object_set_new(o, "session", json_integer(si->id));
	json_object_set_new(o, "name", fjson_str(si->name));
	json_object_set_new(o, "transport", fjson_str(si->transport));
	json_object_set_new(o, "target", fjson_str(si->target));
	json_object_set_new(o, "started_ns", json_integer(si->started_ns));
	json_object_set_new(o, "ended_ns",
	    jsonl_export_int_or_null(si->has_ended, si->ended_ns));
	json_object_set_new(o, "exit_status",
	    jsonl_export_int_or_null(si->has_exit, si->exit_status));
	json_object_set_new(o, "exit_signal", jsonl_export_int_or_null(
	    si->exit_signal != 0, si->exit_signal));
	json_object_set_new(o, "end_reason", fjson_str(si->end_reason));
	json_object_set_new(o, "messages_lost",
	    json_integer(si->messages_lost));
	/* Only for a session exported with --otlp: older files unchanged. */
	if (si->has_otlp_dropped)
		json_object_set_new(o, "otlp_dropped",
		    json_integer(si->otlp_dropped));
	/*
	 * Not the client's address and port (kept in the database for
	 * export --format otlp): a cassette is shared, and an ephemeral
	 * port would change with every recording of the same traffic.
	 */
	json_object_set_new(o, "store_error", fjson_str(si->store_error));
	json_object_set_new(o, "imported_from",
	    fjson_str(si->imported_from));
	json_object_set_new(o, "recorder_pid", jsonl_export_int_or_null(
	    si->recorder_pid != 0, si->recorder_pid));
	json_object_set_new(o, "mcpreel_version",
	    fjson_str(si->mcpreel_version));
	json_object_set_new(o, "exported_by",
	    json_string("mcpreel " MCPREEL_VERSION));
	jsonl_export_line(ex, o, NULL, 0);
	return 0;
}

/*
 * A header list (a JSON array of [name, value]) as written when it can
 * go into the line so, else as a string member of o.
 */
static void
jsonl_export_headers(json_t *o, const char *key, const char *text,
    struct verbatim *v, size_t *nv)
{
	if (text == NULL) {
		json_object_set_new(o, key, json_null());
		return;
	}
	if (text[0] == '[' && jsonl_export_value_ok(text)) {
		v[*nv].key = key;
		v[*nv].text = text;
		v[*nv].len = strlen(text);
		(*nv)++;
		return;
	}
	json_object_set_new(o, key, fjson_str(text));
}

static int
jsonl_export_xid_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * An exchange's number in the file: its place in the session (1, 2, ...),
 * not its row id, which depends on what else the database holds; so a
 * session gives the same lines from any database, a cassette's own too.
 */
static int64_t
jsonl_export_xnum(const struct jsonl_out *ex, int64_t rowid)
{
	const int64_t	*p;

	p = bsearch(&rowid, ex->xids, ex->nx, sizeof *ex->xids,
	    jsonl_export_xid_cmp);
	return p != NULL ? (int64_t)(p - ex->xids) + 1 : 0;
}

/* One HTTP request with its response, as recorded. */
static int
jsonl_export_exchange_cb(const struct exchange_row *x, void *arg)
{
	struct jsonl_out	*ex = arg;
	struct verbatim	 v[4];
	size_t		 nv = 0;
	json_t		*o = json_object();

	/* Rows come in id order: the list stays sorted. */
	if (ex->nx == ex->xcap) {
		ex->xcap = ex->xcap * 2 + 64;
		ex->xids = xreallocarray(ex->xids, ex->xcap,
		    sizeof *ex->xids);
	}
	ex->xids[ex->nx++] = x->id;
	json_object_set_new(o, "type", json_string("http_exchange"));
	json_object_set_new(o, "exchange", json_integer((json_int_t)ex->nx));
	json_object_set_new(o, "connection", json_integer(x->connection));
	json_object_set_new(o, "method", fjson_str(x->method));
	json_object_set_new(o, "path", fjson_str(x->path));
	json_object_set_new(o, "started_ns", json_integer(x->started_ns));
	json_object_set_new(o, "mono_ns", json_integer(x->mono_ns));
	json_object_set_new(o, "status", jsonl_export_int_or_null(x->has_status,
	    x->status));
	json_object_set_new(o, "response_mono_ns", jsonl_export_int_or_null(
	    x->has_response_mono, x->response_mono_ns));
	json_object_set_new(o, "ended_ns",
	    jsonl_export_int_or_null(x->has_ended, x->ended_ns));
	json_object_set_new(o, "outcome", fjson_str(x->outcome));
	if (x->has_body)
		fjson_bytes(o, "body", "body_base64", x->body, x->body_len);
	jsonl_export_headers(o, "request_headers", x->request_headers, v,
	    &nv);
	jsonl_export_headers(o, "response_headers", x->response_headers, v,
	    &nv);
	/* Trailers only where a chunked body had some. */
	if (x->request_trailers != NULL)
		jsonl_export_headers(o, "request_trailers",
		    x->request_trailers, v, &nv);
	if (x->response_trailers != NULL)
		jsonl_export_headers(o, "response_trailers",
		    x->response_trailers, v, &nv);
	if (x->fault != 0)
		json_object_set_new(o, "fault", json_integer(x->fault));
	jsonl_export_line(ex, o, v, nv);
	return 0;
}

/*
 * An id as written when it is one JSON value (the scanner found it in a
 * message, so it nearly always is), else as a string; null for none.
 */
static void
jsonl_export_id(json_t *o, const char *id, struct verbatim *v, size_t *nv)
{
	if (id == NULL)
		json_object_set_new(o, "id", json_null());
	else if (jsonl_export_value_ok(id)) {
		v[*nv].key = "id";
		v[*nv].text = id;
		v[*nv].len = strlen(id);
		(*nv)++;
	} else
		json_object_set_new(o, "id", fjson_str(id));
}

/* A fault mcpreel injected: a faults row, as a "fault" line. */
static void
jsonl_export_fault(struct jsonl_out *ex, const struct export_row *r)
{
	const struct fault_row	*f = r->e.fault;
	struct verbatim		 v[1];
	size_t			 nv = 0;
	json_t			*o = json_object();

	json_object_set_new(o, "type", json_string("fault"));
	json_object_set_new(o, "n", json_integer(f->n));
	json_object_set_new(o, "ts_ns", json_integer(f->ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(f->mono_ns));
	json_object_set_new(o, "rule_index", json_integer(f->rule_index));
	fjson_fault_rule(o, f);
	fjson_text(o, "detail", "detail_base64", f->detail);
	jsonl_export_id(o, f->rpc_id, v, &nv);
	jsonl_export_line(ex, o, v, nv);
}

static void
jsonl_export_message(struct jsonl_out *ex, const struct export_row *r)
{
	const struct message_row	*m = &r->m;
	struct verbatim			 v[2];
	size_t				 nv = 0;
	json_t				*o = json_object();

	json_object_set_new(o, "type", json_string("message"));
	json_object_set_new(o, "seq", json_integer(m->seq));
	json_object_set_new(o, "direction", json_string(dir_name(m->dir)));
	json_object_set_new(o, "ts_ns", json_integer(m->ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(m->mono_ns));
	json_object_set_new(o, "kind", json_string(kind_name(m->kind)));
	json_object_set_new(o, "method", fjson_str(m->method));
	json_object_set_new(o, "reply_to", jsonl_export_int_or_null(
	    r->reply_to_seq != 0, r->reply_to_seq));
	json_object_set_new(o, "size", json_integer((json_int_t)m->len));
	if (r->exchange != 0 && jsonl_export_xnum(ex, r->exchange) != 0)
		json_object_set_new(o, "exchange",
		    json_integer(jsonl_export_xnum(ex, r->exchange)));
	if (r->sse_id != NULL)
		json_object_set_new(o, "sse_event_id", fjson_str(r->sse_id));
	if (r->wire_size >= 0)
		json_object_set_new(o, "wire_size",
		    json_integer(r->wire_size));
	if (r->sha256 != NULL)
		json_object_set_new(o, "sha256", fjson_str(r->sha256));
	if (r->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (r->redacted)
		json_object_set_new(o, "redacted", json_true());
	if (fault_role_name(m->fault_role) != NULL) {
		json_object_set_new(o, "fault", json_integer(m->fault));
		json_object_set_new(o, "fault_role",
		    json_string(fault_role_name(m->fault_role)));
	}
	jsonl_export_id(o, m->rpc_id, v, &nv);
	if (jsonl_export_verbatim_ok(m->raw, m->len)) {
		v[nv].key = "message";
		v[nv].text = m->raw;
		v[nv].len = m->len;
		nv++;
	} else
		fjson_bytes(o, "raw", "raw_base64", m->raw, m->len);
	jsonl_export_line(ex, o, v, nv);
}

/* A message or an event, in the order an import must see them. */
static int
jsonl_export_row_cb(const struct export_row *r, void *arg)
{
	struct jsonl_out	*ex = arg;
	json_t		*o;

	if (!r->is_event) {
		jsonl_export_message(ex, r);
		return ex->write_failed;
	}
	if (r->e.fault != NULL) {
		jsonl_export_fault(ex, r);
		return ex->write_failed;
	}
	o = json_object();
	json_object_set_new(o, "type", json_string("event"));
	json_object_set_new(o, "kind", fjson_str(r->e.kind));
	json_object_set_new(o, "ts_ns", json_integer(r->e.ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(r->e.mono_ns));
	fjson_bytes(o, "text", "text_base64", r->e.text, r->e.len);
	jsonl_export_line(ex, o, NULL, 0);
	return ex->write_failed;
}

/*
 * The session as JSON lines, read in one transaction: a session still
 * being recorded is exported as it was at one moment (no message whose
 * exchange came after the exchanges were read).
 */
static int
jsonl_export_run(struct store *st, int64_t id, struct jsonl_out *ex,
    char **cause)
{
	int	rc = -1, faults;

	if (store_exec(st, "BEGIN", cause) != 0)
		return -1;
	if (faults_any(st, id, &faults, cause) != 0)
		goto out;
	ex->version = faults ? JSONL_VERSION : JSONL_VERSION_PLAIN;
	if (query_session_info(st, id, jsonl_export_header_cb, ex,
	    cause) != 0 || query_exchanges(st, id, jsonl_export_exchange_cb,
	    ex, cause) != 0)
		goto out;
	if (query_export(st, id, 0, jsonl_export_row_cb, ex, cause) != 0) {
		if (!ex->write_failed)
			goto out;
		free(*cause);
		*cause = NULL;
	}
	rc = 0;
out:
	store_exec(st, "COMMIT", NULL);
	free(ex->xids);
	ex->xids = NULL;
	ex->nx = ex->xcap = 0;
	return rc;
}

/*
 * Write session id of st to out as JSON lines: -1 with *cause when the
 * store could not be read; *failed is set when a write failed (the
 * caller's error then, with errno).
 */
int
jsonl_export(struct store *st, int64_t id, FILE *out, int *failed,
    char **cause)
{
	struct jsonl_out	 ex;
	int			 rc;

	memset(&ex, 0, sizeof ex);
	ex.out = out;
	rc = jsonl_export_run(st, id, &ex, cause);
	if (ex.write_failed)
		*failed = 1;
	return rc;
}
