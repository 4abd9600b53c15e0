/*
 * mcpreel export: write one recorded session out, as JSON lines that
 * 'mcpreel import' reads back byte for byte, or as an HTTP Archive.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "store.h"

/* A JSON text put into a line as written, after the members jansson made. */
struct verbatim {
	const char	*key;
	const void	*text;
	size_t		 len;
};

struct export {
	FILE		*out;
	int		 write_failed;
	int		 version;	/* JSONL_VERSION or _PLAIN */
	int64_t		*xids;		/* the session's exchanges' row ids */
	size_t		 nx;
	size_t		 xcap;
};

void
cmd_export_usage(FILE *f)
{
	fprintf(f,
	    "usage: mcpreel export [--db PATH] [--format jsonl|har|otlp] "
	    "[-o FILE] SESSION\n"
	    "       mcpreel export [--db PATH] --format otlp --otlp URL|env\n"
	    "                      [OTLP OPTIONS] SESSION\n"
	    "\n"
	    "Write one recorded session out.  SESSION is its id, its name (the\n"
	    "newest session of that name) or 'last'.\n" CLI_SESSION_WORDS
	    CLI_SESSION_CASSETTE
	    "\n"
	    "  --format jsonl  (the default) one JSON object a line: first the\n"
	    "                  session (\"format\": \"" JSONL_FORMAT "\", name,\n"
	    "                  transport, target, times, how it ended), then each\n"
	    "                  HTTP request of an HTTP session (\"type\":\n"
	    "                  \"http_exchange\"), then every message (\"type\":\n"
	    "                  \"message\") in the order recorded, with the\n"
	    "                  server's stderr lines and other events (\"type\":\n"
	    "                  \"event\") and the faults --fault injected\n"
	    "                  (\"type\": \"fault\") among them by time.  A message is\n"
	    "                  \"message\" (its JSON exactly as recorded), \"raw\"\n"
	    "                  (other text) or \"raw_base64\" (bytes that are not\n"
	    "                  UTF-8): 'mcpreel import' gives back the same bytes.\n"
	    "  --format har    HTTP Archive 1.2 of an HTTP session, for HAR\n"
	    "                  viewers: one entry per HTTP request, its headers,\n"
	    "                  the JSON-RPC body posted, the response with its\n"
	    "                  JSON or its SSE events, and timings.\n"
	    "  --format otlp   the session's requests and notifications as\n"
	    "                  OpenTelemetry spans, the same as record --otlp\n"
	    "                  sends live (the same trace id): OTLP/JSON, one\n"
	    "                  ExportTraceServiceRequest of at most 512 spans a\n"
	    "                  line (the Collector's file exporter format), or\n"
	    "                  with --otlp to a collector, waiting for it rather\n"
	    "                  than dropping (exit 1 if it did not take them\n"
	    "                  all).  --otlp-side and --otlp-payloads as for\n"
	    "                  record; every message recorded is read\n"
	    "  -o, --output F  write to F (created private, mode 0600; replaced\n"
	    "                  only once the export is complete), not stdout.\n"
	    "\n"
	    "OTLP options (--format otlp):\n"
	    OTLP_OPTS_HELP);
}

/*
 * Whether text can go into a line as it is: JSON the scanner takes as a
 * JSON-RPC message or a batch (an array), with no line break that would
 * split the line and no white space at either end that reading the
 * member back would not keep.
 */
static int
export_verbatim_ok(const void *text, size_t len)
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
export_nothing_cb(const struct scan_member *mb, void *arg)
{
	return 0;
}

/*
 * Whether a short text (an id, a header list) is one JSON value that can
 * go into a line as it is: the scanner reads it as a member's value.
 */
static int
export_value_ok(const char *text)
{
	char	*obj;
	size_t	 len = strlen(text);
	int	 ok;

	if (len == 0 || strpbrk(text, "\n\r") != NULL || text[0] == ' ' ||
	    text[0] == '\t' || text[len - 1] == ' ' || text[len - 1] == '\t')
		return 0;
	xasprintf(&obj, "{\"v\":%s}", text);
	ok = scan_members(obj, strlen(obj), export_nothing_cb, NULL) == 0;
	free(obj);
	return ok;
}

/* A string, or null; text that is not UTF-8 has those bytes as '?'. */
json_t *
export_json_str(const char *s)
{
	json_t		*v;
	char		*copy;
	size_t		 i, n, len;

	if (s == NULL)
		return json_null();
	if ((v = json_string(s)) != NULL)
		return v;
	len = strlen(s);
	copy = xstrdup(s);
	for (i = 0; i < len; i += n) {
		if ((n = scan_utf8_len((unsigned char *)copy + i,
		    (unsigned char *)copy + len)) == 0) {
			copy[i] = '?';
			n = 1;
		}
	}
	v = json_string(copy);
	free(copy);
	return v != NULL ? v : json_string("?");
}

static json_t *
export_int_or_null(int has, int64_t v)
{
	return has ? json_integer(v) : json_null();
}

/* Write bytes, remembering a failure for the end. */
static void
export_write(struct export *ex, const void *p, size_t len)
{
	if (len != 0 && fwrite(p, 1, len, ex->out) != len)
		ex->write_failed = 1;
}

/*
 * Write obj as one line, with the verbatim members after its own.  Takes
 * obj.
 */
static void
export_line(struct export *ex, json_t *obj, const struct verbatim *v,
    size_t nv)
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
	export_write(ex, s, len - 1);
	for (i = 0; i < nv; i++) {
		export_write(ex, ",\"", 2);
		export_write(ex, v[i].key, strlen(v[i].key));
		export_write(ex, "\":", 2);
		export_write(ex, v[i].text, v[i].len);
	}
	export_write(ex, "}\n", 2);
	free(s);
}

/* The first line: the session itself. */
static int
export_header_cb(const struct session_info *si, void *arg)
{
	struct export	*ex = arg;
	json_t		*o = json_object();

	json_object_set_new(o, "format", json_string(JSONL_FORMAT));
	json_object_set_new(o, "version", json_integer(ex->version));
	json_object_set_new(o, "session", json_integer(si->id));
	json_object_set_new(o, "name", export_json_str(si->name));
	json_object_set_new(o, "transport", export_json_str(si->transport));
	json_object_set_new(o, "target", export_json_str(si->target));
	json_object_set_new(o, "started_ns", json_integer(si->started_ns));
	json_object_set_new(o, "ended_ns", export_int_or_null(si->has_ended,
	    si->ended_ns));
	json_object_set_new(o, "exit_status", export_int_or_null(si->has_exit,
	    si->exit_status));
	json_object_set_new(o, "exit_signal", export_int_or_null(
	    si->exit_signal != 0, si->exit_signal));
	json_object_set_new(o, "end_reason", export_json_str(si->end_reason));
	json_object_set_new(o, "messages_lost",
	    json_integer(si->messages_lost));
	/* Only for a session exported with --otlp: older files unchanged. */
	if (si->has_otlp_dropped)
		json_object_set_new(o, "otlp_dropped",
		    json_integer(si->otlp_dropped));
	if (si->client_address != NULL) {
		json_object_set_new(o, "client_address",
		    json_string(si->client_address));
		json_object_set_new(o, "client_port", export_int_or_null(
		    si->client_port > 0, si->client_port));
	}
	json_object_set_new(o, "store_error", export_json_str(si->store_error));
	json_object_set_new(o, "imported_from",
	    export_json_str(si->imported_from));
	json_object_set_new(o, "recorder_pid", export_int_or_null(
	    si->recorder_pid != 0, si->recorder_pid));
	json_object_set_new(o, "mcpreel_version",
	    export_json_str(si->mcpreel_version));
	json_object_set_new(o, "exported_by",
	    json_string("mcpreel " MCPREEL_VERSION));
	export_line(ex, o, NULL, 0);
	return 0;
}

/*
 * A header list (a JSON array of [name, value]) as written when it can
 * go into the line so, else as a string member of o.
 */
static void
export_headers(json_t *o, const char *key, const char *text,
    struct verbatim *v, size_t *nv)
{
	if (text == NULL) {
		json_object_set_new(o, key, json_null());
		return;
	}
	if (text[0] == '[' && export_value_ok(text)) {
		v[*nv].key = key;
		v[*nv].text = text;
		v[*nv].len = strlen(text);
		(*nv)++;
		return;
	}
	json_object_set_new(o, key, export_json_str(text));
}

static int
export_xid_cmp(const void *a, const void *b)
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
export_xnum(const struct export *ex, int64_t rowid)
{
	const int64_t	*p;

	p = bsearch(&rowid, ex->xids, ex->nx, sizeof *ex->xids,
	    export_xid_cmp);
	return p != NULL ? (int64_t)(p - ex->xids) + 1 : 0;
}

/* One HTTP request with its response, as recorded. */
static int
export_exchange_cb(const struct exchange_row *x, void *arg)
{
	struct export	*ex = arg;
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
	json_object_set_new(o, "method", export_json_str(x->method));
	json_object_set_new(o, "path", export_json_str(x->path));
	json_object_set_new(o, "started_ns", json_integer(x->started_ns));
	json_object_set_new(o, "mono_ns", json_integer(x->mono_ns));
	json_object_set_new(o, "status", export_int_or_null(x->has_status,
	    x->status));
	json_object_set_new(o, "response_mono_ns", export_int_or_null(
	    x->has_response_mono, x->response_mono_ns));
	json_object_set_new(o, "ended_ns", export_int_or_null(x->has_ended,
	    x->ended_ns));
	json_object_set_new(o, "outcome", export_json_str(x->outcome));
	if (x->has_body)
		fmt_json_bytes(o, "body", "body_base64", x->body, x->body_len);
	export_headers(o, "request_headers", x->request_headers, v, &nv);
	export_headers(o, "response_headers", x->response_headers, v, &nv);
	/* Trailers only where a chunked body had some. */
	if (x->request_trailers != NULL)
		export_headers(o, "request_trailers", x->request_trailers, v,
		    &nv);
	if (x->response_trailers != NULL)
		export_headers(o, "response_trailers", x->response_trailers,
		    v, &nv);
	if (x->fault != 0)
		json_object_set_new(o, "fault", json_integer(x->fault));
	export_line(ex, o, v, nv);
	return 0;
}

/*
 * An id as written when it is one JSON value (the scanner found it in a
 * message, so it nearly always is), else as a string; null for none.
 */
static void
export_id(json_t *o, const char *id, struct verbatim *v, size_t *nv)
{
	if (id == NULL)
		json_object_set_new(o, "id", json_null());
	else if (export_value_ok(id)) {
		v[*nv].key = "id";
		v[*nv].text = id;
		v[*nv].len = strlen(id);
		(*nv)++;
	} else
		json_object_set_new(o, "id", export_json_str(id));
}

/* A fault mcpreel injected: a faults row, as a "fault" line. */
static void
export_fault(struct export *ex, const struct export_row *r)
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
	fmt_json_text(o, "rule", "rule_base64", f->rule);
	fmt_json_text(o, "action", "action_base64", f->action);
	json_object_set_new(o, "direction", f->has_dir ?
	    json_string(dir_name(f->dir)) : json_null());
	fmt_json_text(o, "method", "method_base64", f->method);
	fmt_json_text(o, "detail", "detail_base64", f->detail);
	export_id(o, f->rpc_id, v, &nv);
	export_line(ex, o, v, nv);
}

static void
export_message(struct export *ex, const struct export_row *r)
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
	json_object_set_new(o, "method", export_json_str(m->method));
	json_object_set_new(o, "reply_to", export_int_or_null(
	    r->reply_to_seq != 0, r->reply_to_seq));
	json_object_set_new(o, "size", json_integer((json_int_t)m->len));
	if (r->exchange != 0 && export_xnum(ex, r->exchange) != 0)
		json_object_set_new(o, "exchange",
		    json_integer(export_xnum(ex, r->exchange)));
	if (r->sse_id != NULL)
		json_object_set_new(o, "sse_event_id", export_json_str(r->sse_id));
	if (r->wire_size >= 0)
		json_object_set_new(o, "wire_size",
		    json_integer(r->wire_size));
	if (r->sha256 != NULL)
		json_object_set_new(o, "sha256", export_json_str(r->sha256));
	if (r->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (r->redacted)
		json_object_set_new(o, "redacted", json_true());
	if (fault_role_name(m->fault_role) != NULL) {
		json_object_set_new(o, "fault", json_integer(m->fault));
		json_object_set_new(o, "fault_role",
		    json_string(fault_role_name(m->fault_role)));
	}
	export_id(o, m->rpc_id, v, &nv);
	if (export_verbatim_ok(m->raw, m->len)) {
		v[nv].key = "message";
		v[nv].text = m->raw;
		v[nv].len = m->len;
		nv++;
	} else
		fmt_json_bytes(o, "raw", "raw_base64", m->raw, m->len);
	export_line(ex, o, v, nv);
}

/* A message or an event, in the order an import must see them. */
static int
export_row_cb(const struct export_row *r, void *arg)
{
	struct export	*ex = arg;
	json_t		*o;

	if (!r->is_event) {
		export_message(ex, r);
		return ex->write_failed;
	}
	if (r->e.fault != NULL) {
		export_fault(ex, r);
		return ex->write_failed;
	}
	o = json_object();
	json_object_set_new(o, "type", json_string("event"));
	json_object_set_new(o, "kind", export_json_str(r->e.kind));
	json_object_set_new(o, "ts_ns", json_integer(r->e.ts_ns));
	json_object_set_new(o, "mono_ns", json_integer(r->e.mono_ns));
	fmt_json_bytes(o, "text", "text_base64", r->e.text, r->e.len);
	export_line(ex, o, NULL, 0);
	return ex->write_failed;
}

/*
 * The session as JSON lines, read in one transaction: a session still
 * being recorded is exported as it was at one moment (no message whose
 * exchange came after the exchanges were read).
 */
static int
export_jsonl(struct store *st, int64_t id, struct export *ex, char **cause)
{
	int	rc = -1, faults;

	if (store_exec(st, "BEGIN", cause) != 0)
		return -1;
	if (faults_any(st, id, &faults, cause) != 0)
		goto out;
	ex->version = faults ? JSONL_VERSION : JSONL_VERSION_PLAIN;
	if (query_session_info(st, id, export_header_cb, ex, cause) != 0 ||
	    query_exchanges(st, id, export_exchange_cb, ex, cause) != 0)
		goto out;
	if (query_export(st, id, 0, export_row_cb, ex, cause) != 0) {
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

/* Keep the session's transport for the HAR check. */
static int
export_transport_cb(const struct session_info *si, void *arg)
{
	char	**transport = arg;

	*transport = xstrdup(si->transport);
	return 0;
}

static int
export_har(struct store *st, int64_t id, struct export *ex, char **cause)
{
	char	*transport = NULL;
	int	 rc;

	if (query_session_info(st, id, export_transport_cb, &transport,
	    cause) != 0)
		return -1;
	if (strcmp(transport, "stdio") == 0) {
		xasprintf(cause, "session %lld was recorded over stdio: a HAR "
		    "holds HTTP requests, and it has none.  Export it with "
		    "--format jsonl", (long long)id);
		free(transport);
		return -1;
	}
	free(transport);
	rc = har_write(st, id, ex->out, cause);
	if (ferror(ex->out))
		ex->write_failed = 1;
	return rc;
}

/*
 * Where the export goes: stdout; what is not a regular file (a device such
 * as /dev/null, a pipe), written as it is; else a private temporary file
 * beside the file (beside what a symbolic link points to, so the link
 * stays) that replaces it once complete (*tmp gets its name, *real the
 * file's).
 */
static FILE *
export_open(const char *path, char **tmp, char **real, char **cause)
{
	struct stat	 sb;
	FILE		*f;
	int		 fd;

	*tmp = *real = NULL;
	if (path == NULL || strcmp(path, "-") == 0)
		return stdout;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode)) {
			xasprintf(cause, "%s is a directory: give a file name",
			    path);
			return NULL;
		}
		if ((f = fopen(path, "we")) == NULL)
			xasprintf(cause, "cannot write to %s: %s", path,
			    strerror(errno));
		return f;
	}
	if ((*real = realpath(path, NULL)) != NULL)
		path = *real;
	xasprintf(tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(*tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot create a file beside %s: %s (is its "
		    "directory there and writable?)", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	if ((f = fdopen(fd, "w")) == NULL)
		fatal("fdopen");
	return f;
}

/*
 * Finish the output: flushed and closed, renamed into place; when failed
 * (or it cannot be), the temporary file is removed and *cause says why
 * (cause may be NULL when the caller has its reason already).
 */
static int
export_close(FILE *f, const char *path, char *tmp, char *real, int failed,
    char **cause)
{
	int	 rc = 0, out = (f == stdout);

	if (real != NULL)
		path = real;
	if (fflush(f) != 0 || ferror(f))
		failed = 1;
	/* A file that replaces another is on disk before it does. */
	if (!failed && tmp != NULL && fsync(fileno(f)) != 0)
		failed = 1;
	if (!out && fclose(f) != 0)
		failed = 1;
	if (failed) {
		if (cause != NULL)
			xasprintf(cause, "cannot write %s: %s", !out ?
			    path : "to stdout", errno != 0 ? strerror(errno) :
			    "write error");
		rc = -1;
	} else if (tmp != NULL && rename(tmp, path) != 0) {
		xasprintf(cause, "cannot rename %s to %s: %s", tmp, path,
		    strerror(errno));
		rc = -1;
	}
	if (rc != 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(real);
	return rc;
}

/*
 * Write session id of st as JSON lines to path, whole or not at all: a
 * private file beside it replaces it once complete (a cassette).
 */
int
export_jsonl_file(struct store *st, int64_t id, const char *path,
    char **cause)
{
	struct export	 ex;
	char		*tmp, *real;

	memset(&ex, 0, sizeof ex);
	if ((ex.out = export_open(path, &tmp, &real, cause)) == NULL)
		return -1;
	errno = 0;
	if (export_jsonl(st, id, &ex, cause) != 0) {
		export_close(ex.out, path, tmp, real, 1, NULL);
		return -1;
	}
	return export_close(ex.out, path, tmp, real, ex.write_failed, cause);
}

/*
 * export --format otlp: the session's spans to output, or with --otlp to
 * a collector; the exit code.
 */
static int
export_otlp(struct store *st, int64_t id, const struct otlp_opts *oo,
    const char *output)
{
	struct otlp_config	 c;
	FILE			*out = NULL;
	char			*cause = NULL, *tmp = NULL, *real = NULL;
	uint64_t		 spans, dropped;
	int			 rc;

	rc = oo->url != NULL ? otlp_opts_config(oo, &c, &cause) :
	    otlp_opts_file_config(oo, &c, &cause);
	if (rc == 0 && oo->url == NULL && (out = export_open(output, &tmp,
	    &real, &cause)) == NULL)
		rc = -1;
	errno = 0;
	if (rc == 0 && (rc = otlp_file_session(st, id, &c, out, &spans,
	    &dropped, &cause)) != 0 && out != NULL)
		export_close(out, output, tmp, real, 1, NULL);
	else if (rc == 0 && out != NULL)
		rc = export_close(out, output, tmp, real, 0, &cause);
	otlp_config_clear(&c);
	if (rc != 0) {
		fprintf(stderr, "mcpreel export: %s\n", cause);
		free(cause);
		return EXIT_USAGE;
	}
	if (oo->url != NULL && dropped > 0) {
		fprintf(stderr, "mcpreel export: the collector did not take "
		    "%llu of %llu spans\n", (unsigned long long)dropped,
		    (unsigned long long)(spans + dropped));
		return EXIT_FAIL;
	}
	log_info("export: %llu spans", (unsigned long long)spans);
	return EXIT_OK;
}

int
cmd_export(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		OTLP_OPTS_LONGOPTS,
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct export			 ex;
	struct session_arg		 sa;
	struct store			*st = NULL;
	const char			*db = NULL, *format = "jsonl";
	const char			*output = NULL;
	char				*cause = NULL, *tmp, *real;
	int64_t				 id;
	int				 ch, rc;
	struct otlp_opts		 oo;

	memset(&ex, 0, sizeof ex);
	memset(&sa, 0, sizeof sa);
	memset(&oo, 0, sizeof oo);
	while ((ch = getopt_long(argc, argv, "ho:vq", longopts, NULL)) !=
	    -1) {
		if (cli_common_option(ch, optarg))
			continue;
		if ((rc = otlp_opts_option(&oo, ch, optarg, &cause)) <= 0) {
			if (rc == 0)
				continue;
			fprintf(stderr, "mcpreel export: %s\n", cause);
			free(cause);
			otlp_opts_clear(&oo);
			return EXIT_USAGE;
		}
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			cmd_export_usage(stdout);
			otlp_opts_clear(&oo);
			return EXIT_OK;
		default:
			opterr_report("export", argc, argv, "ho:vq",
			    longopts);
			otlp_opts_clear(&oo);
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "jsonl") != 0 && strcmp(format, "har") != 0 &&
	    strcmp(format, "otlp") != 0) {
		fprintf(stderr, "mcpreel export: unknown format '%s': give "
		    "--format jsonl, har or otlp\n", format);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (strcmp(format, "otlp") != 0 && (oo.url != NULL ||
	    oo.extra != NULL)) {
		fprintf(stderr, "mcpreel export: %s goes with --format otlp\n",
		    oo.url != NULL ? "--otlp" : oo.extra);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (strcmp(format, "otlp") == 0 && otlp_opts_check(&oo, 1,
	    &cause) != 0) {
		fprintf(stderr, "mcpreel export: %s\n", cause);
		free(cause);
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (oo.url != NULL && output != NULL) {
		fprintf(stderr, "mcpreel export: give either --otlp URL or "
		    "-o FILE, not both\n");
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mcpreel export: give one SESSION (an id, a "
		    "name or 'last'; see 'mcpreel sessions')\n");
		otlp_opts_clear(&oo);
		return EXIT_USAGE;
	}
	if (session_arg_open(db, argv[optind], 0, &sa, &cause) != 0)
		goto fail;
	st = sa.st;
	id = sa.id;
	if (strcmp(format, "otlp") == 0) {
		rc = export_otlp(st, id, &oo, output);
		otlp_opts_clear(&oo);
		session_arg_close(&sa);
		return rc;
	}
	if ((ex.out = export_open(output, &tmp, &real, &cause)) == NULL)
		goto fail;

	errno = 0;
	if (strcmp(format, "har") == 0)
		rc = export_har(st, id, &ex, &cause);
	else
		rc = export_jsonl(st, id, &ex, &cause);
	if (rc != 0) {
		export_close(ex.out, output, tmp, real, 1, NULL);
		goto fail;
	}
	if (export_close(ex.out, output, tmp, real, ex.write_failed,
	    &cause) != 0)
		goto fail;
	session_arg_close(&sa);
	return EXIT_OK;
fail:
	fprintf(stderr, "mcpreel export: %s\n", cause);
	free(cause);
	otlp_opts_clear(&oo);
	session_arg_close(&sa);
	return EXIT_USAGE;
}
