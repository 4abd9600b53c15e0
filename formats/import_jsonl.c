/*
 * What 'mcpreel export --format jsonl' writes, for mcpreel import: a first
 * line for the session, "http_exchange" lines, and "message", "event"
 * and "fault" lines.  A message's "message" is taken as the line has it, byte for
 * byte; "raw" and "raw_base64" are decoded.  The file's kind, method, id
 * and reply_to are not read: the writer works them out as it does when
 * recording.
 */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats_int.h"

static int
jsonl_x_cmp(const void *a, const void *b)
{
	const struct import_x	*x = a, *y = b;

	return (x->file_id > y->file_id) - (x->file_id < y->file_id);
}

/* The exchange the file numbered id, or NULL. */
static struct import_x *
jsonl_x_find(struct import *imp, int64_t id)
{
	struct import_x	 key;

	if (imp->nxs == 0)
		return NULL;
	if (!imp->xs_sorted) {
		qsort(imp->xs, imp->nxs, sizeof *imp->xs, jsonl_x_cmp);
		imp->xs_sorted = 1;
	}
	key.file_id = id;
	return bsearch(&key, imp->xs, imp->nxs, sizeof *imp->xs,
	    jsonl_x_cmp);
}

/* The first line of an export: the session. */
static int
jsonl_header(struct import *imp)
{
	struct wsession_meta	 meta;
	char			*format = NULL, *name = NULL, *transport = NULL;
	char			*target = NULL, *version = NULL, *serr = NULL;
	int64_t			 v = 0, status = -1, sig = 0, pid = 0;
	int64_t			 otlp_dropped = -1;
	int			 rc = -1;

	memset(&meta, 0, sizeof meta);
	if (imp->records != 0 || imp->header_seen)
		return import_bad(imp, "a session line after the first: a file "
		    "holds one session");
	imp->header_seen = 1;
	if (import_str(imp, F_FORMAT, &format) != 0)
		goto out;
	if (format == NULL || strcmp(format, JSONL_FORMAT) != 0) {
		import_bad(imp, "\"format\" is not \"%s\"", JSONL_FORMAT);
		goto out;
	}
	if (import_int(imp, F_VERSION, 1, &v) != 0)
		goto out;
	if (v < 1 || v > JSONL_VERSION) {
		import_bad(imp, "format version %lld: this mcpreel reads "
		    "versions 1 to %d (written by a newer mcpreel?)",
		    (long long)v, JSONL_VERSION);
		goto out;
	}
	imp->ended_ns = WRITER_NO_TIME;
	if (import_str(imp, F_NAME, &name) != 0 ||
	    import_str(imp, F_TRANSPORT, &transport) != 0 ||
	    import_str(imp, F_TARGET, &target) != 0 ||
	    import_int(imp, F_STARTED_NS, 1, &meta.started_ns) != 0 ||
	    import_int(imp, F_ENDED_NS, 0, &imp->ended_ns) != 0 ||
	    import_int(imp, F_EXIT_STATUS, 0, &status) != 0 ||
	    import_int(imp, F_EXIT_SIGNAL, 0, &sig) != 0 ||
	    import_str(imp, F_END_REASON, &imp->end_reason) != 0 ||
	    import_int(imp, F_MESSAGES_LOST, 0, &meta.lost) != 0 ||
	    import_str(imp, F_STORE_ERROR, &serr) != 0 ||
	    import_int(imp, F_RECORDER_PID, 0, &pid) != 0 ||
	    import_str(imp, F_MCPREEL_VERSION, &version) != 0 ||
	    import_int(imp, F_OTLP_DROPPED, 0, &otlp_dropped) != 0)
		goto out;
	/* A cassette read for a command is the session it was. */
	if (imp->o.keep && (import_int(imp, F_SESSION, 0, &meta.id) != 0 ||
	    import_str(imp, F_IMPORTED_FROM, &imp->from) != 0))
		goto out;
	if (meta.id < 0) {
		import_bad(imp, "\"session\" is not a session id");
		goto out;
	}
	if (transport == NULL || (strcmp(transport, "stdio") != 0 &&
	    strcmp(transport, "http") != 0 && strcmp(transport, "sse") != 0)) {
		import_bad(imp, "\"transport\" is not \"stdio\", \"http\" or "
		    "\"sse\"");
		goto out;
	}
	if (status < -1 || status > INT_MAX || sig < 0 || sig > INT_MAX) {
		import_bad(imp, "\"exit_status\" or \"exit_signal\" is out of "
		    "range");
		goto out;
	}
	imp->ended = 1;
	imp->exit_status = (int)status;
	imp->exit_signal = (int)sig;
	meta.recorder_pid = pid;
	meta.version = version;
	meta.store_error = serr;
	rc = import_begin(imp, name, transport, target != NULL ? target :
	    "(imported)", &meta);
	/* Exported to a collector when recorded: what it did not get. */
	if (rc == 0 && otlp_dropped >= 0 && imp->s != NULL)
		writer_session_otlp_dropped(imp->w, imp->s, otlp_dropped);
out:
	free(format);
	free(name);
	free(transport);
	free(target);
	free(version);
	free(serr);
	return rc;
}

/*
 * A header or trailer list as the file writes it: a JSON array (taken as
 * its text), or a string; *out stays NULL when it is absent.
 */
static int
jsonl_headers(struct import *imp, enum field f, char **out)
{
	if (import_present(imp, f) && imp->line[imp->f[f].off] == '[') {
		*out = xstrndup(imp->line + imp->f[f].off, imp->f[f].len);
		return 0;
	}
	return import_str(imp, f, out);
}

/* A headerless export: a session with what its first line tells. */
static int
jsonl_default_session(struct import *imp, const char *transport,
    int64_t started_ns)
{
	struct wsession_meta	 meta;

	memset(&meta, 0, sizeof meta);
	meta.started_ns = started_ns;
	imp->ended_ns = WRITER_NO_TIME;
	imp->exit_status = -1;
	return import_begin(imp, NULL, transport, "(imported)", &meta);
}

/* An http_exchange line: its row, its response and trailers if any. */
static int
jsonl_exchange(struct import *imp)
{
	struct wexchange_info	 info;
	struct import_x		*x;
	char			*method = NULL, *path = NULL, *outcome = NULL;
	char			*reqh = NULL, *resph = NULL;
	char			*reqt = NULL, *respt = NULL;
	int64_t			 id, conn = 0, status = -1, rmono, ended;
	int64_t			 fault = 0;
	int			 rc = -1;

	memset(&info, 0, sizeof info);
	ended = WRITER_NO_TIME;
	if (import_int(imp, F_EXCHANGE, 1, &id) != 0 ||
	    import_int(imp, F_CONNECTION, 0, &conn) != 0 ||
	    import_str(imp, F_METHOD, &method) != 0 ||
	    import_str(imp, F_PATH, &path) != 0 ||
	    import_int(imp, F_STARTED_NS, 1, &info.ts_ns) != 0 ||
	    import_int(imp, F_MONO_NS, 1, &info.mono_ns) != 0 ||
	    import_int(imp, F_STATUS, 0, &status) != 0 ||
	    import_int(imp, F_ENDED_NS, 0, &ended) != 0 ||
	    import_str(imp, F_OUTCOME, &outcome) != 0 ||
	    import_int(imp, F_FAULT, 0, &fault) != 0)
		goto out;
	if (fault < 0) {
		import_bad(imp, "\"fault\" is not a fault's number (from 1)");
		goto out;
	}
	rmono = info.mono_ns;
	if (import_int(imp, F_RESPONSE_MONO_NS, 0, &rmono) != 0)
		goto out;
	if (method == NULL || path == NULL) {
		import_bad(imp, "an http_exchange needs \"method\" and "
		    "\"path\"");
		goto out;
	}
	if (jsonl_headers(imp, F_REQUEST_HEADERS, &reqh) != 0 ||
	    jsonl_headers(imp, F_RESPONSE_HEADERS, &resph) != 0 ||
	    jsonl_headers(imp, F_REQUEST_TRAILERS, &reqt) != 0 ||
	    jsonl_headers(imp, F_RESPONSE_TRAILERS, &respt) != 0)
		goto out;
	if (!imp->begun && jsonl_default_session(imp, "http",
	    info.ts_ns) != 0)
		goto out;
	if (jsonl_x_find(imp, id) != NULL) {
		import_bad(imp, "a second http_exchange %lld", (long long)id);
		goto out;
	}
	/*
	 * Files number their exchanges in order: the list stays sorted
	 * (no sort per lookup) unless one comes out of order.
	 */
	if (imp->nxs == 0)
		imp->xs_sorted = 1;
	else if (imp->xs[imp->nxs - 1].file_id > id)
		imp->xs_sorted = 0;
	if (imp->nxs == imp->axs) {
		imp->axs = imp->axs * 2 + 64;
		imp->xs = xreallocarray(imp->xs, imp->axs, sizeof *imp->xs);
	}
	x = &imp->xs[imp->nxs++];
	memset(x, 0, sizeof *x);
	x->file_id = id;
	x->ended_ns = ended;
	x->outcome = outcome;
	outcome = NULL;
	if (import_present(imp, F_BODY) || import_present(imp, F_BODY_B64)) {
		if ((x->body = import_bytes(imp, F_BODY, F_BODY_B64,
		    DIR_S2C)) == NULL)
			goto out;
	}
	info.conn = (uint64_t)conn;
	info.method = method;
	info.path = path;
	info.headers = reqh != NULL ? reqh : "[]";
	if (imp->o.sink != NULL) {
		/* Nothing of it is stored: only the fault it names counts. */
		if (fault != 0)
			import_fault_ref(imp, fault);
		rc = 0;
		goto out;
	}
	x->wx = writer_exchange_begin(imp->w, imp->s, &info);
	if (status >= 0) {
		info.headers = resph;
		info.mono_ns = rmono;
		writer_exchange_response(imp->w, x->wx, (int)status, &info);
	}
	if (reqt != NULL || respt != NULL)
		writer_exchange_trailers(imp->w, x->wx, reqt, respt);
	if (fault != 0)
		writer_exchange_fault(imp->w, x->wx, fault);
	rc = 0;
out:
	free(method);
	free(path);
	free(outcome);
	free(reqh);
	free(resph);
	free(reqt);
	free(respt);
	return rc;
}

/*
 * A message's "fault" and "fault_role" into *fault and *role: both or
 * neither, a number from 1 and a role's name.
 */
static int
jsonl_fault_of(struct import *imp, int64_t *fault, int *role)
{
	char	*name = NULL;

	*fault = 0;
	*role = FAULT_ROLE_NONE;
	if (import_int(imp, F_FAULT, 0, fault) != 0 ||
	    import_str(imp, F_FAULT_ROLE, &name) != 0)
		return -1;
	if (name != NULL)
		*role = faults_role(name);
	free(name);
	if ((name != NULL && *role == FAULT_ROLE_NONE) || *fault < 0 ||
	    (*fault == 0) != (*role == FAULT_ROLE_NONE))
		return import_bad(imp, "\"fault\" and \"fault_role\" go "
		    "together: a fault's number (from 1) and \"original\", "
		    "\"injected\" or \"delayed\"");
	return 0;
}

static int
jsonl_message(struct import *imp)
{
	struct import_x	*x = NULL;
	struct msg	*m;
	char		*dir = NULL, *sse = NULL, *sha = NULL;
	int64_t		 ts, mono, exch = 0, wire = -1, trunc = 0, red = 0;
	int64_t		 fault;
	int		 role;
	json_t		*j;
	enum dir	 d;

	if (import_str(imp, F_DIRECTION, &dir) != 0)
		return -1;
	if (dir == NULL || (strcmp(dir, "c2s") != 0 &&
	    strcmp(dir, "s2c") != 0)) {
		free(dir);
		return import_bad(imp, "\"direction\" is not \"c2s\" or "
		    "\"s2c\"");
	}
	d = (strcmp(dir, "c2s") == 0) ? DIR_C2S : DIR_S2C;
	free(dir);
	if (import_int(imp, F_TS_NS, 1, &ts) != 0 ||
	    import_int(imp, F_MONO_NS, 1, &mono) != 0 ||
	    import_int(imp, F_EXCHANGE, 0, &exch) != 0 ||
	    import_int(imp, F_WIRE_SIZE, 0, &wire) != 0 ||
	    jsonl_fault_of(imp, &fault, &role) != 0)
		return -1;
	/* truncated and redacted: true, or 1 as the column has it. */
	if ((j = import_json(imp, F_TRUNCATED)) != NULL) {
		trunc = json_is_true(j) || (json_is_integer(j) &&
		    json_integer_value(j) != 0);
		json_decref(j);
	}
	if ((j = import_json(imp, F_REDACTED)) != NULL) {
		red = json_is_true(j) || (json_is_integer(j) &&
		    json_integer_value(j) != 0);
		json_decref(j);
	}
	if (imp->cause != NULL)
		return -1;
	if (exch != 0 && (x = jsonl_x_find(imp, exch)) == NULL)
		return import_bad(imp, "exchange %lld has no http_exchange "
		    "line before it", (long long)exch);
	if (import_str(imp, F_SSE_EVENT_ID, &sse) != 0 ||
	    import_str(imp, F_SHA256, &sha) != 0)
		goto bad;
	/* "message": the JSON as the line has it, byte for byte. */
	if (imp->f[F_MESSAGE].set)
		m = import_msg_member(imp, F_MESSAGE, d);
	else if ((m = import_bytes(imp, F_RAW, F_RAW_B64, d)) == NULL)
		goto bad;
	if (!imp->begun && jsonl_default_session(imp, "stdio", ts) != 0) {
		msg_free(m);
		goto bad;
	}
	m->ts_ns = ts;
	m->mono_ns = mono;
	m->sse_id = sse;
	/*
	 * Cut here, the size and hash are of the file's bytes, unless the
	 * file's were cut already: then its own are of the original.
	 */
	if (!(m->flags & MSG_TRUNCATED) || trunc) {
		free(m->sha256);
		m->sha256 = sha;
		m->wire_size = wire;
	} else
		free(sha);
	m->flags |= (trunc ? MSG_TRUNCATED : 0) | (red ? MSG_REDACTED : 0);
	m->fault = fault;
	m->fault_role = role;
	import_message(imp, m, x != NULL ? x->wx : NULL);
	return 0;
bad:
	free(sse);
	free(sha);
	return -1;
}

static int
jsonl_event(struct import *imp)
{
	struct msg	*m;
	char		*kind = NULL;
	int64_t		 ts, mono;

	if (import_str(imp, F_KIND, &kind) != 0)
		return -1;
	if (kind == NULL || (strcmp(kind, "stderr") != 0 &&
	    strcmp(kind, "spawn") != 0 && strcmp(kind, "exit") != 0 &&
	    strcmp(kind, "note") != 0)) {
		free(kind);
		return import_bad(imp, "an event's \"kind\" is not stderr, "
		    "spawn, exit or note");
	}
	if (import_int(imp, F_TS_NS, 1, &ts) != 0 ||
	    import_int(imp, F_MONO_NS, 1, &mono) != 0 ||
	    (m = import_bytes(imp, F_TEXT, F_TEXT_B64, DIR_S2C)) == NULL) {
		free(kind);
		return -1;
	}
	if (!imp->begun && jsonl_default_session(imp, "stdio", ts) != 0) {
		msg_free(m);
		free(kind);
		return -1;
	}
	m->ts_ns = ts;
	m->mono_ns = mono;
	if (imp->o.sink != NULL)
		msg_free(m);
	else
		writer_event_msg(imp->w, imp->s, kind, m);
	imp->events++;
	free(kind);
	return 0;
}

/*
 * A fault's text member k into *out, or its bytes from b64 (what export
 * writes beside it when they are not UTF-8), which then win.
 */
static int
jsonl_fault_text(struct import *imp, enum field k, enum field b64,
    char **out)
{
	char	*enc;
	void	*bytes;
	size_t	 len;

	if (import_str(imp, k, out) != 0)
		return -1;
	if (!import_present(imp, b64))
		return 0;
	if (import_str(imp, b64, &enc) != 0)
		return -1;
	bytes = (enc != NULL) ? b64_decode(enc, strlen(enc), &len) : NULL;
	free(enc);
	if (bytes == NULL || memchr(bytes, '\0', len) != NULL) {
		free(bytes);
		return import_bad(imp, "a fault's \"..._base64\" is not base64 "
		    "of text without NUL");
	}
	free(*out);
	*out = bytes;
	return 0;
}

/*
 * A fault line: a faults row.  The id is kept as the line writes it (its
 * JSON text, as messages.rpc_id has it).
 */
static int
jsonl_fault(struct import *imp)
{
	struct wfault	 f;
	char		*rule = NULL, *action = NULL, *dir = NULL;
	char		*method = NULL, *detail = NULL, *id = NULL;
	int64_t		 n, ts, mono, ri;
	int		 rc = -1;

	memset(&f, 0, sizeof f);
	if (import_int(imp, F_N, 1, &n) != 0 ||
	    import_int(imp, F_TS_NS, 1, &ts) != 0 ||
	    import_int(imp, F_MONO_NS, 1, &mono) != 0 ||
	    import_int(imp, F_RULE_INDEX, 1, &ri) != 0 ||
	    jsonl_fault_text(imp, F_RULE, F_RULE_B64, &rule) != 0 ||
	    jsonl_fault_text(imp, F_ACTION, F_ACTION_B64, &action) != 0 ||
	    import_str(imp, F_DIRECTION, &dir) != 0 ||
	    jsonl_fault_text(imp, F_METHOD, F_METHOD_B64, &method) != 0 ||
	    jsonl_fault_text(imp, F_DETAIL, F_DETAIL_B64, &detail) != 0)
		goto out;
	if (n < 1 || ri < 1 || ri > INT_MAX) {
		import_bad(imp, "a fault's \"n\" and \"rule_index\" count "
		    "from 1");
		goto out;
	}
	if (rule == NULL || action == NULL || *action == '\0') {
		import_bad(imp, "a fault needs its \"rule\" and \"action\"");
		goto out;
	}
	if (dir != NULL && strcmp(dir, "c2s") != 0 &&
	    strcmp(dir, "s2c") != 0) {
		import_bad(imp, "a fault's \"direction\" is not \"c2s\", "
		    "\"s2c\" or null");
		goto out;
	}
	if (import_present(imp, F_ID) && !(imp->f[F_ID].len == 4 &&
	    memcmp(imp->line + imp->f[F_ID].off, "null", 4) == 0))
		id = xstrndup(imp->line + imp->f[F_ID].off, imp->f[F_ID].len);
	if (!imp->begun && jsonl_default_session(imp, "stdio", ts) != 0)
		goto out;
	f.n = n;
	f.ts_ns = ts;
	f.mono_ns = mono;
	f.rule_index = (int)ri;
	f.rule = rule;
	f.action = action;
	f.has_dir = dir != NULL;
	f.dir = (dir != NULL && strcmp(dir, "s2c") == 0) ? DIR_S2C : DIR_C2S;
	f.method = method;
	f.rpc_id = id;
	f.detail = detail;
	/* kept to check for numbers given twice: with no store, and for a
	   cassette, refused with the same words either way */
	if (imp->o.sink != NULL || imp->o.scratch) {
		if ((imp->nfault_ns & (imp->nfault_ns - 1)) == 0)
			imp->fault_ns = xreallocarray(imp->fault_ns,
			    imp->nfault_ns == 0 ? 1 : imp->nfault_ns * 2,
			    sizeof *imp->fault_ns);
		imp->fault_ns[imp->nfault_ns++] = n;
	}
	if (imp->o.sink == NULL)
		writer_fault(imp->w, imp->s, &f);
	imp->faults++;
	rc = 0;
out:
	free(rule);
	free(action);
	free(dir);
	free(method);
	free(detail);
	free(id);
	return rc;
}

/* One line of an export. */
int
import_jsonl_line(struct import *imp)
{
	char	*type = NULL;
	int	 rc;

	if (imp->f[F_FORMAT].set)
		return jsonl_header(imp);
	if (import_str(imp, F_TYPE, &type) != 0)
		return -1;
	imp->records++;
	if (type != NULL && strcmp(type, "message") == 0)
		rc = jsonl_message(imp);
	else if (type != NULL && strcmp(type, "event") == 0)
		rc = jsonl_event(imp);
	else if (type != NULL && strcmp(type, "http_exchange") == 0)
		rc = jsonl_exchange(imp);
	else if (type != NULL && strcmp(type, "fault") == 0)
		rc = jsonl_fault(imp);
	else
		rc = import_bad(imp, "\"type\" is not \"message\", \"event\", "
		    "\"http_exchange\" or \"fault\" (is this an mcpreel "
		    "export?)");
	free(type);
	return rc;
}
