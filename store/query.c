/* The questions the CLI asks of a database. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

static int
query_prepare(struct store *st, const char *sql, sqlite3_stmt **stmt,
    char **cause)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL) != SQLITE_OK) {
		xasprintf(cause, "database %s: %s", st->path,
		    sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}

static int
query_failed(struct store *st, sqlite3_stmt *stmt, char **cause)
{
	xasprintf(cause, "database %s: %s", st->path, sqlite3_errmsg(st->db));
	sqlite3_finalize(stmt);
	return -1;
}

/*
 * Resolve what a user typed for a session: "last", a numeric id, or a
 * name (the newest session of that name).
 */
int
query_find_session(struct store *st, const char *spec, int64_t *id,
    char **cause)
{
	sqlite3_stmt	*stmt;
	char		*end;
	long long	 n;
	int		 rc;

	if (strcmp(spec, "last") == 0) {
		if (query_prepare(st, "SELECT id FROM sessions ORDER BY id "
		    "DESC LIMIT 1", &stmt, cause) != 0)
			return -1;
	} else {
		errno = 0;
		n = strtoll(spec, &end, 10);
		if (*spec != '\0' && *end == '\0' && errno == 0 && n > 0) {
			if (query_prepare(st, "SELECT id FROM sessions WHERE "
			    "id = ?1 OR name = ?2 ORDER BY id = ?1 DESC, id "
			    "DESC LIMIT 1", &stmt, cause) != 0)
				return -1;
			sqlite3_bind_int64(stmt, 1, n);
		} else {
			if (query_prepare(st, "SELECT id FROM sessions WHERE "
			    "name = ?2 ORDER BY id DESC LIMIT 1", &stmt,
			    cause) != 0)
				return -1;
		}
		sqlite3_bind_text(stmt, 2, spec, -1, SQLITE_STATIC);
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(stmt, 0);
		sqlite3_finalize(stmt);
		return 0;
	}
	if (rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	if (strcmp(spec, "last") == 0)
		xasprintf(cause, "%s holds no sessions yet", st->path);
	else
		xasprintf(cause, "no session with id or name '%s' in %s (see "
		    "'mcpreel sessions')", spec, st->path);
	return -1;
}

static const char *
column_text(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

/* Call cb for each session (only the one with id only, if not 0). */
int
query_sessions(struct store *st, int64_t only, session_cb cb, void *arg,
    char **cause)
{
	sqlite3_stmt		*stmt;
	struct session_row	 r;
	int			 rc;

	if (query_prepare(st, "SELECT s.id, s.name, s.transport, s.target, "
	    "s.started_ns, s.ended_ns, s.exit_status, s.exit_signal, "
	    "s.end_reason, s.messages_lost, "
	    "(SELECT count(*) FROM messages m WHERE m.session_id = s.id), "
	    "(SELECT total(size) FROM messages m WHERE m.session_id = s.id) "
	    "FROM sessions s WHERE ?1 = 0 OR s.id = ?1 ORDER BY s.id",
	    &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, only);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(stmt, 0);
		r.name = column_text(stmt, 1);
		r.transport = column_text(stmt, 2);
		r.target = column_text(stmt, 3);
		r.started_ns = sqlite3_column_int64(stmt, 4);
		r.ended_ns = sqlite3_column_int64(stmt, 5);
		r.has_exit = sqlite3_column_type(stmt, 6) != SQLITE_NULL;
		r.exit_status = sqlite3_column_int(stmt, 6);
		r.exit_signal = sqlite3_column_int(stmt, 7);
		r.end_reason = column_text(stmt, 8);
		r.messages_lost = sqlite3_column_int64(stmt, 9);
		r.messages = sqlite3_column_int64(stmt, 10);
		r.bytes = (int64_t)sqlite3_column_double(stmt, 11);
		if (cb(&r, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}

/* Fill r from a row of the message statement in query_timeline. */
static void
query_message_row(sqlite3_stmt *stmt, struct timeline_row *r)
{
	const char	*k;
	int		 kind;

	memset(r, 0, sizeof *r);
	r->m.seq = sqlite3_column_int64(stmt, 0);
	k = column_text(stmt, 1);
	r->m.dir = (k != NULL && strcmp(k, "s2c") == 0) ? DIR_S2C : DIR_C2S;
	r->m.ts_ns = sqlite3_column_int64(stmt, 2);
	r->m.mono_ns = sqlite3_column_int64(stmt, 3);
	kind = kind_from_name(column_text(stmt, 4));
	r->m.kind = (kind < 0) ? KIND_INVALID : kind;
	r->m.method = column_text(stmt, 5);
	r->m.rpc_id = column_text(stmt, 6);
	r->m.latency_ns = (sqlite3_column_type(stmt, 7) == SQLITE_NULL) ? -1 :
	    sqlite3_column_int64(stmt, 7);
	r->m.reply_seq = sqlite3_column_int64(stmt, 8);
	r->m.raw = sqlite3_column_blob(stmt, 9);
	r->m.len = (size_t)sqlite3_column_bytes(stmt, 9);
}

/* Fill r from a row of the event statement in query_timeline. */
static void
query_event_row(sqlite3_stmt *stmt, struct timeline_row *r)
{
	memset(r, 0, sizeof *r);
	r->is_event = 1;
	r->e.ts_ns = sqlite3_column_int64(stmt, 0);
	r->e.mono_ns = sqlite3_column_int64(stmt, 1);
	r->e.kind = column_text(stmt, 2);
	r->e.text = sqlite3_column_blob(stmt, 3);
	r->e.len = (size_t)sqlite3_column_bytes(stmt, 3);
}

/*
 * Call cb for each message of a session, and each event when with_events
 * is set, in the order they happened (by monotonic time; a message before
 * an event of the same time, messages of one time by seq).  A response
 * carries its latency and its request's seq.
 *
 * The rows are never sorted with their bytes: SQLite would hold the whole
 * session in its sorter (in memory, as big as the session).  Only the
 * messages' ids are sorted by time; each message is then read by id, and
 * merged with the events, which their index gives in order.
 */
int
query_timeline(struct store *st, int64_t session, int with_events,
    timeline_cb cb, void *arg, char **cause)
{
	sqlite3_stmt		*order = NULL, *one = NULL, *ev = NULL;
	struct timeline_row	 r;
	int			 mrc, erc = SQLITE_DONE, rc, stop = 0;

	if (query_prepare(st, "SELECT id, mono_ns FROM messages "
	    "WHERE session_id = ?1 ORDER BY mono_ns, seq", &order,
	    cause) != 0 ||
	    query_prepare(st, "SELECT m.seq, m.direction, m.ts_ns, m.mono_ns, "
	    "m.kind, m.method, m.rpc_id, m.mono_ns - q.mono_ns, q.seq, m.raw "
	    "FROM messages m LEFT JOIN messages q ON q.id = m.reply_to "
	    "WHERE m.id = ?1", &one, cause) != 0 ||
	    (with_events && query_prepare(st, "SELECT ts_ns, mono_ns, kind, "
	    "text FROM events WHERE session_id = ?1 ORDER BY mono_ns, id",
	    &ev, cause) != 0))
		goto fail;
	sqlite3_bind_int64(order, 1, session);
	mrc = sqlite3_step(order);
	if (ev != NULL) {
		sqlite3_bind_int64(ev, 1, session);
		erc = sqlite3_step(ev);
	}
	while (!stop && (mrc == SQLITE_ROW || erc == SQLITE_ROW)) {
		if (mrc == SQLITE_ROW && (erc != SQLITE_ROW ||
		    sqlite3_column_int64(order, 1) <=
		    sqlite3_column_int64(ev, 1))) {
			sqlite3_bind_int64(one, 1,
			    sqlite3_column_int64(order, 0));
			if ((rc = sqlite3_step(one)) == SQLITE_DONE) {
				xasprintf(cause, "database %s: a message went "
				    "away while being read", st->path);
				goto fail;
			}
			if (rc != SQLITE_ROW)
				goto failed;
			query_message_row(one, &r);
			stop = cb(&r, arg) != 0;
			sqlite3_reset(one);
			mrc = sqlite3_step(order);
		} else {
			query_event_row(ev, &r);
			stop = cb(&r, arg) != 0;
			erc = sqlite3_step(ev);
		}
	}
	if (!stop && ((mrc != SQLITE_ROW && mrc != SQLITE_DONE) ||
	    (erc != SQLITE_ROW && erc != SQLITE_DONE)))
		goto failed;
	sqlite3_finalize(order);
	sqlite3_finalize(one);
	sqlite3_finalize(ev);
	return 0;

failed:
	xasprintf(cause, "database %s: %s", st->path, sqlite3_errmsg(st->db));
fail:
	sqlite3_finalize(order);
	sqlite3_finalize(one);
	sqlite3_finalize(ev);
	return -1;
}
