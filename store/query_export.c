/*
 * The questions export, import and check ask of a database: a session's
 * every column, its HTTP exchanges, its messages and events in the order
 * an import gives them back.
 */

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* Call cb with every column of one session's row (for export). */
int
query_session_info(struct store *st, int64_t id, session_info_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*stmt;
	struct session_info	 r;
	int			 rc;

	if (query_prepare(st, "SELECT id, name, transport, target, "
	    "started_ns, ended_ns, exit_status, exit_signal, end_reason, "
	    "messages_lost, store_error, imported_from, recorder_pid, "
	    "mcpreel_version, otlp_dropped, client_address, client_port "
	    "FROM sessions WHERE id = ?1", &stmt,
	    cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(stmt, 0);
		r.name = query_column_text(stmt, 1);
		r.transport = query_column_text(stmt, 2);
		r.target = query_column_text(stmt, 3);
		r.started_ns = sqlite3_column_int64(stmt, 4);
		r.has_ended = sqlite3_column_type(stmt, 5) != SQLITE_NULL;
		r.ended_ns = sqlite3_column_int64(stmt, 5);
		r.has_exit = sqlite3_column_type(stmt, 6) != SQLITE_NULL;
		r.exit_status = sqlite3_column_int(stmt, 6);
		r.exit_signal = sqlite3_column_int(stmt, 7);
		r.end_reason = query_column_text(stmt, 8);
		r.messages_lost = sqlite3_column_int64(stmt, 9);
		r.store_error = query_column_text(stmt, 10);
		r.imported_from = query_column_text(stmt, 11);
		r.recorder_pid = sqlite3_column_int64(stmt, 12);
		r.mcpreel_version = query_column_text(stmt, 13);
		r.has_otlp_dropped = sqlite3_column_type(stmt, 14) !=
		    SQLITE_NULL;
		r.otlp_dropped = sqlite3_column_int64(stmt, 14);
		r.client_address = query_column_text(stmt, 15);
		r.client_port = sqlite3_column_int(stmt, 16);
		rc = cb(&r, arg);
		sqlite3_finalize(stmt);
		return rc == 0 ? 0 : -1;
	}
	if (rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	xasprintf(cause, "no session %lld in %s", (long long)id, st->path);
	return -1;
}

/* Call cb for each HTTP exchange of a session, in the order they began. */
int
query_exchanges(struct store *st, int64_t session, exchange_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*stmt;
	struct exchange_row	 r;
	int			 rc;

	if (query_prepare(st, "SELECT id, connection, method, path, "
	    "request_headers, started_ns, mono_ns, status, response_headers, "
	    "response_mono_ns, ended_ns, outcome, body, request_trailers, "
	    "response_trailers, fault FROM http_exchanges "
	    "WHERE session_id = ?1 ORDER BY mono_ns, id", &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(stmt, 0);
		r.connection = sqlite3_column_int64(stmt, 1);
		r.method = query_column_text(stmt, 2);
		r.path = query_column_text(stmt, 3);
		r.request_headers = query_column_text(stmt, 4);
		r.started_ns = sqlite3_column_int64(stmt, 5);
		r.mono_ns = sqlite3_column_int64(stmt, 6);
		r.has_status = sqlite3_column_type(stmt, 7) != SQLITE_NULL;
		r.status = sqlite3_column_int(stmt, 7);
		r.response_headers = query_column_text(stmt, 8);
		r.has_response_mono = sqlite3_column_type(stmt, 9) !=
		    SQLITE_NULL;
		r.response_mono_ns = sqlite3_column_int64(stmt, 9);
		r.has_ended = sqlite3_column_type(stmt, 10) != SQLITE_NULL;
		r.ended_ns = sqlite3_column_int64(stmt, 10);
		r.outcome = query_column_text(stmt, 11);
		r.has_body = sqlite3_column_type(stmt, 12) != SQLITE_NULL;
		r.body = query_column_blob(stmt, 12);
		r.body_len = (size_t)sqlite3_column_bytes(stmt, 12);
		r.request_trailers = query_column_text(stmt, 13);
		r.response_trailers = query_column_text(stmt, 14);
		r.fault = sqlite3_column_int64(stmt, 15);
		if (cb(&r, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}

/* The ids of session's HTTP exchanges, in id order, to cb. */
int
query_exchange_ids(struct store *st, int64_t session,
    int (*cb)(int64_t, void *), void *arg, char **cause)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (query_prepare(st, "SELECT id FROM http_exchanges "
	    "WHERE session_id = ?1 ORDER BY id", &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (cb(sqlite3_column_int64(stmt, 0), arg) != 0)
			break;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}

/*
 * Looking HTTP exchanges up one by one, by id, with one statement: what
 * the check rules read of each (method, path, heads, status), so that a
 * session's exchanges need not all be held at once.
 */
struct exchange_lookup {
	struct store	*st;
	sqlite3_stmt	*stmt;
};

struct exchange_lookup *
query_exchange_open(struct store *st, char **cause)
{
	struct exchange_lookup	*l = xcalloc(1, sizeof *l);

	l->st = st;
	if (query_prepare(st, "SELECT id, method, path, request_headers, "
	    "status, response_headers FROM http_exchanges WHERE id = ?1",
	    &l->stmt, cause) != 0) {
		free(l);
		return NULL;
	}
	return l;
}

/*
 * Exchange id to cb (its method, path, heads and status only); 0 without
 * a call when there is none, -1 (and *cause) when it cannot be read.
 */
int
query_exchange_get(struct exchange_lookup *l, int64_t id, exchange_cb cb,
    void *arg, char **cause)
{
	struct exchange_row	 r;
	int			 rc;

	sqlite3_reset(l->stmt);
	sqlite3_bind_int64(l->stmt, 1, id);
	if ((rc = sqlite3_step(l->stmt)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(l->stmt, 0);
		r.method = query_column_text(l->stmt, 1);
		r.path = query_column_text(l->stmt, 2);
		r.request_headers = query_column_text(l->stmt, 3);
		r.has_status = sqlite3_column_type(l->stmt, 4) != SQLITE_NULL;
		r.status = sqlite3_column_int(l->stmt, 4);
		r.response_headers = query_column_text(l->stmt, 5);
		(void)cb(&r, arg);
		sqlite3_reset(l->stmt);
		return 0;
	}
	if (rc != SQLITE_DONE) {
		xasprintf(cause, "database %s: %s", l->st->path,
		    sqlite3_errmsg(l->st->db));
		sqlite3_reset(l->stmt);
		return -1;
	}
	sqlite3_reset(l->stmt);
	return 0;
}

void
query_exchange_close(struct exchange_lookup *l)
{
	if (l == NULL)
		return;
	sqlite3_finalize(l->stmt);
	free(l);
}

/* Fill r from the current row of the export's message statement. */
static void
query_export_message(sqlite3_stmt *stmt, struct export_row *r)
{
	int		 kind;

	memset(r, 0, sizeof *r);
	r->m.seq = sqlite3_column_int64(stmt, 0);
	r->m.dir = query_column_dir(stmt, 1);
	r->m.ts_ns = sqlite3_column_int64(stmt, 2);
	r->m.mono_ns = sqlite3_column_int64(stmt, 3);
	kind = kind_from_name(query_column_text(stmt, 4));
	r->m.kind = (kind < 0) ? KIND_INVALID : kind;
	r->m.method = query_column_text(stmt, 5);
	r->m.rpc_id = query_column_text(stmt, 6);
	r->m.latency_ns = -1;
	r->reply_to_seq = sqlite3_column_int64(stmt, 7);
	r->exchange = sqlite3_column_int64(stmt, 8);
	r->sse_id = query_column_text(stmt, 9);
	r->wire_size = (sqlite3_column_type(stmt, 10) == SQLITE_NULL) ? -1 :
	    sqlite3_column_int64(stmt, 10);
	r->sha256 = query_column_text(stmt, 11);
	r->truncated = sqlite3_column_int(stmt, 12);
	r->redacted = sqlite3_column_int(stmt, 13);
	r->m.fault = sqlite3_column_int64(stmt, 15);
	r->m.fault_role = faults_role(query_column_text(stmt, 16));
	r->m.raw = query_column_blob(stmt, 14);
	r->m.len = (size_t)sqlite3_column_bytes(stmt, 14);
}

/* Fill r from the current row of the export's events and faults. */
static void
query_export_event(sqlite3_stmt *stmt, struct export_row *r)
{
	memset(r, 0, sizeof *r);
	r->is_event = 1;
	faults_event_row(stmt, &r->e, &r->f);
}

/* The columns query_export_message() reads, in its order. */
#define QUERY_EXPORT_COLUMNS						\
	"SELECT m.seq, m.direction, m.ts_ns, m.mono_ns, m.kind, m.method, "	\
	"m.rpc_id, q.seq, m.http_exchange_id, m.sse_event_id, m.wire_size, "\
	"m.sha256, m.truncated, m.redacted, m.raw, m.fault, m.fault_role "

/* Call cb for every event and fault of a session, in the order recorded. */
int
query_events(struct store *st, int64_t session, export_cb cb, void *arg,
    char **cause)
{
	sqlite3_stmt		*es;
	struct export_row	 r;
	int			 rc;

	if (query_prepare(st, FAULTS_EVENTS_SQL, &es, cause) != 0)
		return -1;
	sqlite3_bind_int64(es, 1, session);
	while ((rc = sqlite3_step(es)) == SQLITE_ROW) {
		query_export_event(es, &r);
		if (cb(&r, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, es, cause);
	sqlite3_finalize(es);
	return 0;
}

/*
 * The messages of a session's HTTP exchanges, one at a time, grouped by
 * exchange in the order query_exchanges() gives the exchanges (the time
 * each began), each exchange's in the order recorded: a reader can walk
 * both side by side and hold one exchange's messages at a time.  SQLite
 * sorts them (its sorter spills to temporary files past its cache, so
 * memory stays bounded whatever the session's size).
 */
struct export_cursor {
	struct store	*st;
	sqlite3_stmt	*stmt;
};

struct export_cursor *
query_exchange_msgs_open(struct store *st, int64_t session, char **cause)
{
	struct export_cursor	*c = xcalloc(1, sizeof *c);

	c->st = st;
	if (query_prepare(st, QUERY_EXPORT_COLUMNS
	    "FROM messages m JOIN http_exchanges x ON "
	    "x.id = m.http_exchange_id AND x.session_id = ?1 "
	    "LEFT JOIN messages q ON q.id = m.reply_to "
	    "WHERE m.session_id = ?1 ORDER BY x.mono_ns, x.id, m.seq",
	    &c->stmt, cause) != 0) {
		free(c);
		return NULL;
	}
	sqlite3_bind_int64(c->stmt, 1, session);
	return c;
}

/*
 * The next message into r (valid until the next call): 1, or 0 at the
 * end, or -1 with *cause.
 */
int
query_exchange_msgs_next(struct export_cursor *c, struct export_row *r,
    char **cause)
{
	int	rc = sqlite3_step(c->stmt);

	if (rc == SQLITE_ROW) {
		query_export_message(c->stmt, r);
		return 1;
	}
	if (rc == SQLITE_DONE)
		return 0;
	xasprintf(cause, "database %s: %s", c->st->path,
	    sqlite3_errmsg(c->st->db));
	return -1;
}

void
query_exchange_msgs_close(struct export_cursor *c)
{
	if (c == NULL)
		return;
	sqlite3_finalize(c->stmt);
	free(c);
}

/*
 * Call cb for every message of a session with all its columns, in the
 * order recorded (seq: the order an import must give them to the writer
 * for the same pairing), and every event and fault (an event of kind
 * "fault"), each before the first message that came after it.  With
 * QUERY_UNFAULTED in flags, a fault's original and injected messages are
 * left out.
 */
int
query_export(struct store *st, int64_t session, int flags, export_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*ms = NULL, *es = NULL;
	struct export_row	 r;
	int			 mrc, erc, stop = 0;

	if (query_prepare(st, QUERY_EXPORT_COLUMNS
	    "FROM messages m LEFT JOIN messages q ON q.id = m.reply_to "
	    "WHERE m.session_id = ?1 AND (?2 = 0 OR " FAULTS_KEPT("m.") ") "
	    "ORDER BY m.seq", &ms, cause) != 0 ||
	    query_prepare(st, FAULTS_EVENTS_SQL, &es, cause) != 0) {
		sqlite3_finalize(ms);
		return -1;
	}
	sqlite3_bind_int64(ms, 1, session);
	sqlite3_bind_int(ms, 2, (flags & QUERY_UNFAULTED) != 0);
	sqlite3_bind_int64(es, 1, session);
	mrc = sqlite3_step(ms);
	erc = sqlite3_step(es);
	while (!stop && (mrc == SQLITE_ROW || erc == SQLITE_ROW)) {
		if (erc == SQLITE_ROW && (mrc != SQLITE_ROW ||
		    sqlite3_column_int64(es, 1) <=
		    sqlite3_column_int64(ms, 3))) {
			query_export_event(es, &r);
			stop = cb(&r, arg) != 0;
			erc = sqlite3_step(es);
		} else {
			query_export_message(ms, &r);
			stop = cb(&r, arg) != 0;
			mrc = sqlite3_step(ms);
		}
	}
	if (!stop && ((mrc != SQLITE_ROW && mrc != SQLITE_DONE) ||
	    (erc != SQLITE_ROW && erc != SQLITE_DONE))) {
		sqlite3_finalize(es);
		return query_failed(st, ms, cause);
	}
	sqlite3_finalize(ms);
	sqlite3_finalize(es);
	if (stop) {
		xasprintf(cause, "stopped");
		return -1;
	}
	return 0;
}

/* How many messages, events and HTTP exchanges a session has. */
int
query_session_counts(struct store *st, int64_t session, int64_t *messages,
    int64_t *events, int64_t *exchanges, char **cause)
{
	sqlite3_stmt	*stmt;

	if (query_prepare(st, "SELECT "
	    "(SELECT count(*) FROM messages WHERE session_id = ?1), "
	    "(SELECT count(*) FROM events WHERE session_id = ?1), "
	    "(SELECT count(*) FROM http_exchanges WHERE session_id = ?1)",
	    &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return query_failed(st, stmt, cause);
	*messages = sqlite3_column_int64(stmt, 0);
	*events = sqlite3_column_int64(stmt, 1);
	*exchanges = sqlite3_column_int64(stmt, 2);
	sqlite3_finalize(stmt);
	return 0;
}

/* Delete a session and everything recorded in it (an import undone). */
int
query_drop_session(struct store *st, int64_t session, char **cause)
{
	sqlite3_stmt	*stmt;

	if (query_prepare(st, "DELETE FROM sessions WHERE id = ?1", &stmt,
	    cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	if (sqlite3_step(stmt) != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}
