/*
 * Import: record a session from a file, through the writer the recorder
 * uses, so messages are classified and paired the same way.  Reads what
 * jsonl_export.c writes (import_jsonl.c) and mcp-tape traces
 * (import_tape.c).  The file is read line by line; at the first bad line
 * the session is deleted again, and one is only left half written if
 * mcpreel is killed, and then its end_reason says "import not finished".
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats_int.h"

static const char *field_names[F_MAX] = {
	"format", "version", "type", "name", "transport", "target",
	"started_ns", "ended_ns", "exit_status", "exit_signal", "end_reason",
	"messages_lost", "store_error", "recorder_pid", "mcpreel_version",
	"exchange", "connection", "method", "path", "request_headers",
	"mono_ns", "status", "response_headers", "response_mono_ns",
	"outcome", "body", "body_base64", "direction", "ts_ns",
	"sse_event_id", "wire_size", "sha256", "truncated", "redacted",
	"message", "raw", "raw_base64", "kind", "text", "text_base64",
	"request_trailers", "response_trailers", "n", "rule_index", "rule",
	"action", "detail", "id", "fault", "fault_role", "rule_base64",
	"action_base64", "method_base64", "detail_base64", "session",
	"imported_from", "otlp_dropped",
	"t", "dir", "v", "startedAt", "label", "command", "exitCode"
};

static const char *format_names[IMPORT_FORMAT_MAX] = {
	"auto", "jsonl", "mcp-tape"
};

static int	import_fault_dups(struct import *);

/* Note the first error, with the file and line it is about; returns -1. */
int
import_bad(struct import *imp, const char *fmt, ...)
{
	va_list	 ap;
	char	*what;

	if (imp->cause != NULL)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	if (imp->lineno != 0)
		xasprintf(&imp->cause, "%s line %zu: %s", imp->o.path,
		    imp->lineno, what);
	else
		xasprintf(&imp->cause, "%s: %s", imp->o.path, what);
	free(what);
	return -1;
}

/*
 * A member of a long line that was cut (import_long.c) where no message
 * is: F_MAX when there is none.
 */
static enum field
import_cut_member(const struct import *imp)
{
	int	k;

	for (k = 0; imp->long_line != NULL && k < F_MAX; k++) {
		if (k == F_MESSAGE || k == F_RAW || k == F_RAW_B64 ||
		    k == F_BODY || k == F_BODY_B64 || k == F_TEXT ||
		    k == F_TEXT_B64)
			continue;
		if (imp->f[k].set && import_long_cut(imp->long_line,
		    imp->f[k].off))
			return k;
	}
	return F_MAX;
}

static int
import_member_cb(const struct scan_member *mb, void *arg)
{
	static size_t	 lens[F_MAX];
	struct import	*imp = arg;
	const char	*key = imp->line + mb->key_off;
	int		 k;

	if (lens[0] == 0) {
		for (k = 0; k < F_MAX; k++)
			lens[k] = strlen(field_names[k]);
	}
	for (k = 0; k < F_MAX; k++) {
		/* A plain key by its length and bytes: no strlen each time. */
		if (!mb->key_escaped ? (mb->key_len == lens[k] &&
		    memcmp(key, field_names[k], lens[k]) == 0) :
		    scan_key_is(imp->line, mb, field_names[k])) {
			/* Duplicate keys: the last wins, as in jansson. */
			imp->f[k].off = mb->val_off;
			imp->f[k].len = mb->val_len;
			imp->f[k].set = 1;
			break;
		}
	}
	return 0;
}

/*
 * Whether the line has the member, other than null (a member cut by
 * import_long.c, "null" in the line handed on, counts: it was there).
 */
int
import_present(const struct import *imp, enum field k)
{
	if (imp->f[k].set && import_long_cut(imp->long_line, imp->f[k].off))
		return 1;
	return imp->f[k].set && !(imp->f[k].len == 4 &&
	    memcmp(imp->line + imp->f[k].off, "null", 4) == 0);
}

/* A member's value parsed by jansson (the caller decrefs), or NULL. */
json_t *
import_json(struct import *imp, enum field k)
{
	json_t	*v;

	if (!import_present(imp, k))
		return NULL;
	v = json_loadb(imp->line + imp->f[k].off, imp->f[k].len,
	    JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (v == NULL)
		import_bad(imp, "\"%s\" is not a value jansson reads (a number "
		    "beyond 64 bits?)", field_names[k]);
	return v;
}

/*
 * The members of every line (seq, times, direction) the quick way: an
 * integer of at most 18 digits, or a string of printable ASCII with no
 * escape, is what jansson would read, without building a value for it
 * (a fifth of an import's time).  Anything else goes through jansson.
 */
static int
import_plain_int(const char *p, size_t len, int64_t *v)
{
	size_t	i = (len > 0 && p[0] == '-');
	int64_t	n = 0;

	if (len <= i || len - i > 18 || (p[i] == '0' && len - i > 1))
		return 0;
	for (; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		n = n * 10 + (p[i] - '0');
	}
	*v = p[0] == '-' ? -n : n;
	return 1;
}

static int
import_plain_str(const char *p, size_t len, char **out)
{
	size_t	i;

	if (len < 2 || p[0] != '"' || p[len - 1] != '"')
		return 0;
	for (i = 1; i < len - 1; i++) {
		if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '\\' ||
		    p[i] == '"')
			return 0;
	}
	*out = xstrndup(p + 1, len - 2);
	return 1;
}

/* An integer member into *v; required: its absence is an error. */
int
import_int(struct import *imp, enum field k, int required, int64_t *v)
{
	json_t	*j;

	if (!import_present(imp, k)) {
		if (required)
			return import_bad(imp, "no \"%s\"", field_names[k]);
		return 0;
	}
	if (import_plain_int(imp->line + imp->f[k].off, imp->f[k].len, v))
		return 0;
	if ((j = import_json(imp, k)) == NULL)
		return -1;
	if (!json_is_integer(j)) {
		json_decref(j);
		return import_bad(imp, "\"%s\" is not an integer",
		    field_names[k]);
	}
	*v = json_integer_value(j);
	json_decref(j);
	return 0;
}

/* A string member, decoded, into *out (NULL when absent or null). */
int
import_str(struct import *imp, enum field k, char **out)
{
	json_t	*j;

	*out = NULL;
	if (!import_present(imp, k))
		return 0;
	if (import_plain_str(imp->line + imp->f[k].off, imp->f[k].len, out))
		return 0;
	if ((j = import_json(imp, k)) == NULL)
		return -1;
	if (!json_is_string(j) || memchr(json_string_value(j), '\0',
	    json_string_length(j)) != NULL) {
		json_decref(j);
		return import_bad(imp, "\"%s\" is not a string (without NUL)",
		    field_names[k]);
	}
	*out = xstrdup(json_string_value(j));
	json_decref(j);
	return 0;
}

/*
 * A message of the len bytes at bytes, kept whole up to --max-record-size;
 * past it, as record keeps one: its first bytes, its size and SHA-256,
 * truncated, with a warning.
 */
struct msg *
import_msg(struct import *imp, enum dir d, const char *bytes, size_t len)
{
	struct msg	*m;
	struct digest	*dg;

	if (imp->o.max_record == 0 || len <= imp->o.max_record)
		return msg_new(d, bytes, len);
	m = msg_new(d, bytes, imp->o.max_record);
	dg = digest_new();
	digest_update(dg, bytes, len);
	m->sha256 = digest_hex_free(dg);
	m->wire_size = (int64_t)len;
	m->flags |= MSG_TRUNCATED;
	log_warnx("%s line %zu: a message of %zu bytes, over "
	    "--max-record-size: stored as its first %zu bytes, its size and "
	    "SHA-256", imp->o.path, imp->lineno, len, imp->o.max_record);
	return m;
}

/*
 * The message member k as the line has it, byte for byte: from
 * import_long.c when the line was over the cap and k was cut there.
 */
struct msg *
import_msg_member(struct import *imp, enum field k, enum dir d)
{
	struct msg	*m;

	if (imp->long_line != NULL && (m = import_long_msg(imp->long_line,
	    imp->f[k].off, d)) != NULL)
		return m;
	return import_msg(imp, d, imp->line + imp->f[k].off, imp->f[k].len);
}

/*
 * Bytes from a text member (a string) or a base64 member, into a new
 * message of direction d; NULL with an error when neither is readable.
 */
struct msg *
import_bytes(struct import *imp, enum field text, enum field b64,
    enum dir d)
{
	struct msg	*m;
	json_t		*j;
	void		*bytes;
	size_t		 len;

	if ((imp->f[text].set && import_long_cut(imp->long_line,
	    imp->f[text].off)) || (imp->f[b64].set &&
	    import_long_cut(imp->long_line, imp->f[b64].off))) {
		if (text == F_BODY) {
			/* Its line was too long to hold the body's prefix. */
			import_bad(imp, "\"%s\" is over --max-record-size by "
			    "more than %d bytes: it cannot be stored as its "
			    "first bytes; give a larger --max-record-size",
			    imp->f[text].set ? field_names[text] :
			    field_names[b64], IMPORT_LONG_SLACK);
			return NULL;
		}
		import_bad(imp, "\"%s\" is over --max-record-size: a message "
		    "that long is imported only as JSON (\"message\"), or "
		    "give a larger --max-record-size", imp->f[text].set ?
		    field_names[text] : field_names[b64]);
		return NULL;
	}
	if ((j = import_json(imp, import_present(imp, text) ? text : b64)) ==
	    NULL) {
		import_bad(imp, "no \"%s\" or \"%s\"", field_names[text],
		    field_names[b64]);
		return NULL;
	}
	if (!json_is_string(j)) {
		import_bad(imp, "\"%s\" is not a string", import_present(imp,
		    text) ? field_names[text] : field_names[b64]);
		json_decref(j);
		return NULL;
	}
	if (import_present(imp, text)) {
		m = import_msg(imp, d, json_string_value(j),
		    json_string_length(j));
		json_decref(j);
		return m;
	}
	bytes = b64_decode(json_string_value(j), json_string_length(j), &len);
	json_decref(j);
	if (bytes == NULL) {
		import_bad(imp, "\"%s\" is not base64", field_names[b64]);
		return NULL;
	}
	m = import_msg(imp, d, bytes, len);
	free(bytes);
	return m;
}

/* Called by the writer thread when its queue is low again. */
static void
import_drain_cb(void *arg)
{
	struct import	*imp = arg;

	pthread_mutex_lock(&imp->lock);
	imp->drained = 1;
	pthread_cond_signal(&imp->cond);
	pthread_mutex_unlock(&imp->lock);
}

/* The file as sessions.imported_from names it: its full path and format. */
static char *
import_from(const char *path, enum import_format fmt)
{
	char	*real, *from;

	if (strcmp(path, "-") == 0)
		xasprintf(&from, "stdin (%s)", format_names[fmt]);
	else if ((real = realpath(path, NULL)) != NULL) {
		xasprintf(&from, "%s (%s)", real, format_names[fmt]);
		free(real);
	} else
		xasprintf(&from, "%s (%s)", path, format_names[fmt]);
	return from;
}

/* Begin the session (once): the writer records it from here on. */
int
import_begin(struct import *imp, const char *name, const char *transport,
    const char *target, const struct wsession_meta *meta)
{
	struct wsession_meta	 m = *meta;

	imp->begun = 1;
	if (imp->o.sink != NULL) {
		imp->sess_id = meta->id;
		name = imp->o.name != NULL ? imp->o.name : name;
		imp->sess_name = name != NULL ? xstrdup(name) : NULL;
		return 0;
	}
	if (imp->from == NULL && !imp->o.keep)
		imp->from = import_from(imp->o.path, imp->o.format);
	m.imported_from = imp->from;
	imp->s = writer_session_import(imp->w, imp->o.name != NULL ?
	    imp->o.name : name, transport, target, &m);
	return 0;
}

/*
 * Hand a message to the writer (it takes m), waiting while its queue is
 * over the high mark: the file is read no faster than it is written.
 */
void
import_message(struct import *imp, struct msg *m, struct wexchange *x)
{
	if (imp->o.sink != NULL) {
		imp->messages++;
		if (m->fault > 0)
			import_fault_ref(imp, m->fault);
		imp->o.sink(m, imp->messages, imp->o.sink_arg);
		return;
	}
	pthread_mutex_lock(&imp->lock);
	imp->drained = 0;
	pthread_mutex_unlock(&imp->lock);
	imp->messages++;
	if (writer_message(imp->w, imp->s, x, m) == 0)
		return;
	pthread_mutex_lock(&imp->lock);
	while (!imp->drained)
		pthread_cond_wait(&imp->cond, &imp->lock);
	pthread_mutex_unlock(&imp->lock);
}


/* The format of a file from its first line, or IMPORT_AUTO if unknown. */
static enum import_format
import_detect(struct import *imp)
{
	char			*type = NULL;
	enum import_format	 fmt = IMPORT_AUTO;

	if (imp->f[F_FORMAT].set || imp->f[F_DIRECTION].set)
		return IMPORT_JSONL;
	if (imp->f[F_DIR].set && imp->f[F_T].set)
		return IMPORT_TAPE;
	if (import_str(imp, F_TYPE, &type) != 0) {
		free(imp->cause);
		imp->cause = NULL;
		return IMPORT_AUTO;
	}
	if (type != NULL && (strcmp(type, "meta") == 0 ||
	    strcmp(type, "end") == 0))
		fmt = IMPORT_TAPE;
	else if (type != NULL && (strcmp(type, "message") == 0 ||
	    strcmp(type, "event") == 0 || strcmp(type, "http_exchange") == 0 ||
	    strcmp(type, "fault") == 0))
		fmt = IMPORT_JSONL;
	free(type);
	return fmt;
}

/* Read every line of f into the session. */
static int
import_read(struct import *imp, FILE *f)
{
	struct lreader	 lr;
	const char	*line;
	size_t		 len;
	enum field	 k;
	int		 rc = 0;

	memset(&lr, 0, sizeof lr);
	lr.f = f;
	while (rc == 0 && (line = lreader_next(imp, &lr, &len)) != NULL) {
		imp->lineno++;
		imp->line = line;
		imp->len = len;
		memset(imp->f, 0, sizeof imp->f);
		/* Blank lines (and a CR before the newline) are nothing. */
		if (len == 0 || (len == 1 && line[0] == '\r'))
			continue;
		if (scan_members(line, len, import_member_cb, imp) != 0) {
			/* The last line, with no newline: a file cut short. */
			if (lr.cut)
				rc = import_bad(imp, "the file ends in the "
				    "middle of line %zu: it was cut short "
				    "(copy or export it again)", imp->lineno);
			else
				rc = import_bad(imp, "not a JSON object");
			break;
		}
		if ((k = import_cut_member(imp)) != F_MAX) {
			rc = import_bad(imp, "\"%s\" is over --max-record-size: "
			    "only a message may be", field_names[k]);
			break;
		}
		if (imp->o.format == IMPORT_AUTO &&
		    (imp->o.format = import_detect(imp)) == IMPORT_AUTO) {
			rc = import_bad(imp, "cannot tell the file's format "
			    "from this line: give --format jsonl or --format "
			    "mcp-tape");
			break;
		}
		rc = (imp->o.format == IMPORT_TAPE) ? import_tape_line(imp) :
		    import_jsonl_line(imp);
	}
	lreader_free(imp, &lr);
	if (imp->cause != NULL)
		return -1;
	imp->lineno = 0;
	if (!imp->begun)
		return import_bad(imp, "no session in the file (is it empty?)");
	return 0;
}

/*
 * Write the exchanges' ends (the writer frees them then: this is done
 * for a bad file too) and, when ok, the session's.
 */
static void
import_finish(struct import *imp, int ok)
{
	struct import_x	*x;
	size_t		 i;

	for (i = 0; i < imp->nxs; i++) {
		x = &imp->xs[i];
		if (x->wx == NULL)
			continue;
		writer_exchange_end_at(imp->w, x->wx, x->ended_ns, x->outcome,
		    x->body != NULL ? x->body->raw : NULL, x->body != NULL ?
		    x->body->len : 0);
		x->wx = NULL;
	}
	if (imp->s == NULL || !ok)
		return;
	if (imp->ended)
		writer_session_end_at(imp->w, imp->s, imp->ended_ns,
		    imp->exit_status, imp->exit_signal, imp->end_reason);
	else
		writer_session_end_at(imp->w, imp->s, WRITER_NO_TIME, -1, 0,
		    NULL);
}

/*
 * After the writer stopped: check the store holds everything handed to
 * it, and delete the session when not or when the file was bad.
 */
static int
import_verify(struct import *imp, const char *db, int failed, int64_t *id)
{
	struct store	*st;
	char		*cause = NULL;
	int64_t		 nm = 0, ne = 0, nx = 0, nf = 0, nd = 0;
	int		 rc = -1, whole;

	*id = (imp->s != NULL) ? writer_session_id(imp->s) : 0;
	if (*id == 0) {
		if (!failed)
			import_bad(imp, "the session could not be written to "
			    "%s", db);
		return -1;
	}
	if ((st = store_open(db, imp->o.scratch ? STORE_SCRATCH : 0,
	    &cause)) == NULL) {
		import_bad(imp, "cannot check what was imported: %s", cause);
		goto out;
	}
	if (!failed && (query_session_counts(st, *id, &nm, &ne, &nx,
	    &cause) != 0 || faults_count(st, *id, &nf, &cause) != 0 ||
	    faults_dangling(st, *id, &nd, &cause) != 0))
		import_bad(imp, "cannot check what was imported: %s", cause);
	else if (!failed) {
		whole = nm == imp->messages && ne == imp->events &&
		    nx == (int64_t)imp->nxs && nf == imp->faults &&
		    writer_session_lost(imp->s) == 0;
		if (whole && nd == 0) {
			store_close(st);
			return 0;
		}
		if (whole)
			import_bad(imp, "%lld %s a \"fault\" that has no fault "
			    "line", (long long)nd, nd == 1 ?
			    "message or HTTP exchange names" :
			    "messages or HTTP exchanges name");
		else
			import_bad(imp, "only %lld of %lld messages, %lld of "
			    "%lld events, %lld of %zu HTTP exchanges and %lld "
			    "of %lld faults could be written to %s (see the "
			    "warning above)", (long long)nm,
			    (long long)imp->messages, (long long)ne,
			    (long long)imp->events, (long long)nx, imp->nxs,
			    (long long)nf, (long long)imp->faults, db);
	}
	free(cause);
	cause = NULL;
	if (query_drop_session(st, *id, &cause) == 0)
		rc = 0;
out:
	if (st != NULL)
		store_close(st);
	if (rc != 0) {
		log_warnx("the partly imported session %lld is left in %s, "
		    "marked '%s': %s", (long long)*id, db, WRITER_IMPORTING,
		    cause != NULL ? cause : "cannot delete it");
	}
	free(cause);
	return -1;
}

/*
 * Import imp->o.file (imp->o.path names it) into the database at db, created
 * if need be: 0 with the session's id in *id, or -1 with imp->cause (and
 * imp->store_failed when the database, not the file, was the trouble).
 * Nothing of a refused file stays in the database.
 */
static int
import_run_file(struct import *imp, const char *db, int64_t *id)
{
	struct store	*st;
	char		*cause = NULL;
	int		 rc;

	*id = 0;
	if ((st = store_open(db, STORE_CREATE | STORE_PRIVATE |
	    (imp->o.scratch ? STORE_SCRATCH : 0), &cause)) == NULL ||
	    (imp->w = writer_start(st, &cause)) == NULL) {
		imp->cause = cause;
		imp->store_failed = 1;
		return -1;
	}
	pthread_mutex_init(&imp->lock, NULL);
	pthread_cond_init(&imp->cond, NULL);
	imp->inited = 1;
	writer_set_drain_cb(imp->w, import_drain_cb, imp);
	rc = import_read(imp, imp->o.file);
	/* a cassette's faults are checked as with no store (import_sink) */
	if (rc == 0 && imp->o.scratch)
		rc = import_fault_dups(imp);
	import_finish(imp, rc == 0);
	writer_set_drain_cb(imp->w, NULL, NULL);
	writer_stop(imp->w);
	imp->w = NULL;
	return import_verify(imp, db, rc != 0, id);
}

/* Note a fault a message or an HTTP exchange names (sink mode). */
void
import_fault_ref(struct import *imp, int64_t n)
{
	if ((imp->nfault_refs & (imp->nfault_refs - 1)) == 0)
		imp->fault_refs = xreallocarray(imp->fault_refs,
		    imp->nfault_refs == 0 ? 1 : imp->nfault_refs * 2,
		    sizeof *imp->fault_refs);
	imp->fault_refs[imp->nfault_refs++] = n;
}

static int
import_n_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Refuse fault lines that share a number (the store keeps one fault of
 * each number), from the numbers kept while reading: 0, or -1 with
 * imp->cause.  Sorts imp->fault_ns.
 */
static int
import_fault_dups(struct import *imp)
{
	size_t	i;
	int64_t	nd = 0;

	if (imp->nfault_ns > 1)
		qsort(imp->fault_ns, imp->nfault_ns, sizeof *imp->fault_ns,
		    import_n_cmp);
	for (i = 1; i < imp->nfault_ns; i++) {
		if (imp->fault_ns[i] == imp->fault_ns[i - 1])
			nd++;
	}
	if (nd == 0)
		return 0;
	imp->lineno = 0;
	return import_bad(imp, "only %lld of %lld faults could be kept: "
	    "%lld %s a number (\"n\") a fault line before had",
	    (long long)(imp->faults - nd), (long long)imp->faults,
	    (long long)nd, nd == 1 ? "has" : "have");
}

/*
 * Read imp->o.file with no store: each message goes to imp->o.sink, as the
 * writer would number it.  The same lines are refused with the same
 * errors as import_file() gives, and a fault named that has no fault
 * line too: 0, or -1 with imp->cause.
 */
static int
import_run_sink(struct import *imp)
{
	size_t	i;
	int64_t	nd = 0;

	if (import_read(imp, imp->o.file) != 0 || import_fault_dups(imp) != 0)
		return -1;
	for (i = 0; i < imp->nfault_refs; i++) {
		if (imp->nfault_ns == 0 || bsearch(&imp->fault_refs[i],
		    imp->fault_ns, imp->nfault_ns, sizeof *imp->fault_ns,
		    import_n_cmp) == NULL)
			nd++;
	}
	if (nd == 0)
		return 0;
	return import_bad(imp, "%lld %s a \"fault\" that has no fault line",
	    (long long)nd, nd == 1 ? "message or HTTP exchange names" :
	    "messages or HTTP exchanges name");
}

/* Free what an import keeps (not the struct, nor its file). */
static void
import_clear(struct import *imp)
{
	size_t	i;

	for (i = 0; i < imp->nxs; i++) {
		free(imp->xs[i].outcome);
		msg_free(imp->xs[i].body);
	}
	free(imp->xs);
	free(imp->fault_ns);
	free(imp->fault_refs);
	free(imp->sess_name);
	writer_session_free(imp->s);
	free(imp->end_reason);
	free(imp->from);
	free(imp->cause);
	if (imp->inited) {
		pthread_mutex_destroy(&imp->lock);
		pthread_cond_destroy(&imp->cond);
	}
	memset(imp, 0, sizeof *imp);
}

/* An import set up from what the caller asked for. */
static void
import_init(struct import *imp, const struct import_opts *o)
{
	memset(imp, 0, sizeof *imp);
	imp->o = *o;
}

/* Hand what the import found to r, free the import, and return rc. */
static int
import_done(struct import *imp, struct import_result *r, int rc)
{
	r->messages = imp->messages;
	r->events = imp->events;
	r->faults = imp->faults;
	r->exchanges = imp->nxs;
	r->store_failed = imp->store_failed;
	r->cause = imp->cause;
	imp->cause = NULL;
	if (imp->o.sink != NULL) {
		r->id = imp->sess_id;
		r->name = imp->sess_name;
		imp->sess_name = NULL;
	}
	import_clear(imp);
	return rc;
}

/*
 * Import o->file (o->path names it) into the database at db, created if
 * need be: 0 with the session's id in r->id, or -1 with r->cause (and
 * r->store_failed when the database, not the file, was the trouble).
 * Nothing of a refused file stays in the database.
 */
int
import_file(const struct import_opts *o, const char *db,
    struct import_result *r)
{
	struct import	 imp;
	int64_t		 id;
	int		 rc;

	memset(r, 0, sizeof *r);
	import_init(&imp, o);
	imp.o.sink = NULL;
	rc = import_run_file(&imp, db, &id);
	r->id = id;
	return import_done(&imp, r, rc);
}

/*
 * Read o->file with no store: each message goes to o->sink (required:
 * -1 with r->cause without one), as the writer would number it.  The same lines are refused with the same
 * errors as import_file() gives: 0 with the file's session id (0: none)
 * and name in r, or -1 with r->cause.
 */
int
import_sink(const struct import_opts *o, struct import_result *r)
{
	struct import	 imp;

	memset(r, 0, sizeof *r);
	if (o->sink == NULL) {
		xasprintf(&r->cause, "%s: no sink to read into",
		    o->path != NULL ? o->path : "(import)");
		return -1;
	}
	import_init(&imp, o);
	return import_done(&imp, r, import_run_sink(&imp));
}

/* Free what r holds. */
void
import_result_clear(struct import_result *r)
{
	free(r->name);
	free(r->cause);
	memset(r, 0, sizeof *r);
}
