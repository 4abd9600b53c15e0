/* The questions the CLI asks of a database. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* Prepare sql on st; on failure cause says which database and why. */
int
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

/* A statement failed: say why in cause, finalize it, return -1. */
int
query_failed(struct store *st, sqlite3_stmt *stmt, char **cause)
{
	xasprintf(cause, "database %s: %s", st->path, sqlite3_errmsg(st->db));
	sqlite3_finalize(stmt);
	return -1;
}

/*
 * The words that name the newest session of a kind.  'last' is the last
 * recording: replay's and mock's own sessions would otherwise take its
 * place the moment one of them runs against it.
 */
static const struct {
	const char	*word;
	const char	*sql;
	const char	*what;
} query_last[] = {
	{ "last", "SELECT id FROM sessions WHERE origin = '" ORIGIN_RECORD
	    "' OR origin = '" ORIGIN_IMPORT "' ORDER BY id DESC LIMIT 1",
	    "recorded sessions" },
	{ "last-replay", "SELECT id FROM sessions WHERE origin = '"
	    ORIGIN_REPLAY "' ORDER BY id DESC LIMIT 1", "replay sessions" },
	{ "last-mock", "SELECT id FROM sessions WHERE origin = '"
	    ORIGIN_MOCK "' ORDER BY id DESC LIMIT 1",
	    "mock fallback sessions" },
};

/*
 * Resolve what a user typed for a session: "last" (or "last-replay",
 * "last-mock"), a numeric id, or a name (the newest session of that
 * name).
 */
int
query_find_session(struct store *st, const char *spec, int64_t *id,
    char **cause)
{
	sqlite3_stmt	*stmt;
	char		*end;
	long long	 n;
	int		 rc;
	size_t		 i, last = sizeof query_last / sizeof query_last[0];

	for (i = 0; i < sizeof query_last / sizeof query_last[0]; i++) {
		if (strcmp(spec, query_last[i].word) == 0) {
			last = i;
			break;
		}
	}
	if (last < sizeof query_last / sizeof query_last[0]) {
		if (query_prepare(st, query_last[last].sql, &stmt, cause) != 0)
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
	if (last < sizeof query_last / sizeof query_last[0])
		xasprintf(cause, "%s holds no %s yet (see 'mcpreel "
		    "sessions')", st->path, query_last[last].what);
	else
		xasprintf(cause, "no session with id or name '%s' in %s (see "
		    "'mcpreel sessions')", spec, st->path);
	return -1;
}

/* A text column, or NULL. */
const char *
query_column_text(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

/*
 * A blob column's bytes: never NULL, so a zero-length message (an empty
 * line recorded as it came) is "" and not a null pointer that memcpy and
 * the scanners would be handed (SQLite returns NULL for an empty blob).
 */
const void *
query_column_blob(sqlite3_stmt *stmt, int i)
{
	const void	*p = sqlite3_column_blob(stmt, i);

	return p != NULL ? p : "";
}

/* A stored direction ('c2s' or 's2c') as enum dir. */
enum dir
query_column_dir(sqlite3_stmt *stmt, int i)
{
	const char	*d = query_column_text(stmt, i);

	return (d != NULL && strcmp(d, "s2c") == 0) ? DIR_S2C : DIR_C2S;
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
	    "(SELECT total(size) FROM messages m WHERE m.session_id = s.id), "
	    /* An imported session's pid is of another time or machine. */
	    "CASE WHEN s.imported_from IS NULL THEN s.recorder_pid "
	    "ELSE -1 END, s.origin, s.otlp_dropped "
	    "FROM sessions s WHERE ?1 = 0 OR s.id = ?1 ORDER BY s.id",
	    &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, only);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(stmt, 0);
		r.name = query_column_text(stmt, 1);
		r.transport = query_column_text(stmt, 2);
		r.target = query_column_text(stmt, 3);
		r.started_ns = sqlite3_column_int64(stmt, 4);
		r.ended_ns = sqlite3_column_int64(stmt, 5);
		r.has_exit = sqlite3_column_type(stmt, 6) != SQLITE_NULL;
		r.exit_status = sqlite3_column_int(stmt, 6);
		r.exit_signal = sqlite3_column_int(stmt, 7);
		r.end_reason = query_column_text(stmt, 8);
		r.messages_lost = sqlite3_column_int64(stmt, 9);
		r.messages = sqlite3_column_int64(stmt, 10);
		r.bytes = (int64_t)sqlite3_column_double(stmt, 11);
		r.recorder_pid = sqlite3_column_int64(stmt, 12);
		r.origin = query_column_text(stmt, 13);
		r.has_otlp_dropped = sqlite3_column_type(stmt, 14) !=
		    SQLITE_NULL;
		r.otlp_dropped = sqlite3_column_int64(stmt, 14);
		if (cb(&r, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}

/* Fill r from a row of the message statement in query_timeline. */
void
query_message_row(sqlite3_stmt *stmt, struct timeline_row *r)
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
	r->m.latency_ns = (sqlite3_column_type(stmt, 7) == SQLITE_NULL) ? -1 :
	    sqlite3_column_int64(stmt, 7);
	r->m.reply_seq = sqlite3_column_int64(stmt, 8);
	r->m.raw = query_column_blob(stmt, 9);
	r->m.len = (size_t)sqlite3_column_bytes(stmt, 9);
	r->m.truncated = sqlite3_column_int(stmt, 10);
	r->m.fault = sqlite3_column_int64(stmt, 11);
	r->m.fault_role = faults_role(query_column_text(stmt, 12));
}

/* Fill r from a row of the event statement in query_timeline. */
static void
query_event_row(sqlite3_stmt *stmt, struct timeline_row *r)
{
	memset(r, 0, sizeof *r);
	r->is_event = 1;
	faults_event_row(stmt, &r->e, &r->f);
}

/*
 * A timeline row from a statement whose columns are: what it is (0 a
 * message, 1 an event, -1 a fault), seq (an event's or fault's id),
 * direction, ts_ns, mono_ns, kind, method, rpc_id, latency, raw (an
 * event's text); then the message's fault and fault_role; then, from
 * column 12, a fault's FAULTS_FIELDS (faults_fill).
 */
static void
query_timeline_row(sqlite3_stmt *stmt, struct timeline_row *r)
{
	int		 kind, what;

	memset(r, 0, sizeof *r);
	what = sqlite3_column_int(stmt, 0);
	r->is_event = (what != 0);
	if (r->is_event) {
		r->e.ts_ns = sqlite3_column_int64(stmt, 3);
		r->e.mono_ns = sqlite3_column_int64(stmt, 4);
		r->e.kind = query_column_text(stmt, 5);
		r->e.text = query_column_blob(stmt, 9);
		r->e.len = (size_t)sqlite3_column_bytes(stmt, 9);
		if (what == -1) {
			faults_fill(stmt, 12, &r->f);
			r->f.ts_ns = r->e.ts_ns;
			r->f.mono_ns = r->e.mono_ns;
			r->e.fault = &r->f;
		}
		return;
	}
	r->m.seq = sqlite3_column_int64(stmt, 1);
	r->m.dir = query_column_dir(stmt, 2);
	r->m.ts_ns = sqlite3_column_int64(stmt, 3);
	r->m.mono_ns = sqlite3_column_int64(stmt, 4);
	kind = kind_from_name(query_column_text(stmt, 5));
	r->m.kind = (kind < 0) ? KIND_INVALID : kind;
	r->m.method = query_column_text(stmt, 6);
	r->m.rpc_id = query_column_text(stmt, 7);
	r->m.latency_ns = (sqlite3_column_type(stmt, 8) == SQLITE_NULL) ? -1 :
	    sqlite3_column_int64(stmt, 8);
	r->m.raw = query_column_blob(stmt, 9);
	r->m.len = (size_t)sqlite3_column_bytes(stmt, 9);
	r->m.fault = sqlite3_column_int64(stmt, 10);
	r->m.fault_role = faults_role(query_column_text(stmt, 11));
}

/*
 * Call cb for each message of a session, and with QUERY_EVENTS in flags
 * each event and fault, in the order they happened (by monotonic time; a
 * fault before a message of the same time, which it concerns, a message
 * before an event of the same time, messages of one time by seq).  A
 * response carries its latency and its request's seq.  QUERY_UNFAULTED
 * leaves out a fault's original and injected messages.
 *
 * The rows are never sorted with their bytes: SQLite would hold the whole
 * session in its sorter (in memory, as big as the session).  Only the
 * messages' ids are sorted by time; each message is then read by id, and
 * merged with the events, which their index gives in order.
 */
int
query_timeline(struct store *st, int64_t session, int flags,
    timeline_cb cb, void *arg, char **cause)
{
	sqlite3_stmt		*order = NULL, *one = NULL, *ev = NULL;
	struct timeline_row	 r;
	int64_t			 mt, et;
	int			 mrc, erc = SQLITE_DONE, rc, stop = 0;

	if (query_prepare(st, QUERY_ORDER_SQL, &order, cause) != 0 ||
	    query_prepare(st, QUERY_ONE_SQL, &one, cause) != 0 ||
	    ((flags & QUERY_EVENTS) && query_prepare(st, FAULTS_EVENTS_SQL,
	    &ev, cause) != 0))
		goto fail;
	sqlite3_bind_int64(order, 1, session);
	sqlite3_bind_int(order, 2, (flags & QUERY_UNFAULTED) != 0);
	mrc = sqlite3_step(order);
	if (ev != NULL) {
		sqlite3_bind_int64(ev, 1, session);
		erc = sqlite3_step(ev);
	}
	while (!stop && (mrc == SQLITE_ROW || erc == SQLITE_ROW)) {
		mt = (mrc == SQLITE_ROW) ? sqlite3_column_int64(order, 1) : 0;
		et = (erc == SQLITE_ROW) ? sqlite3_column_int64(ev, 1) : 0;
		if (mrc == SQLITE_ROW && (erc != SQLITE_ROW || mt < et ||
		    (mt == et && sqlite3_column_int(ev, 5) != 1))) {
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

/* Every criterion open: the whole timeline. */
void
query_filter_init(struct query_filter *f)
{
	memset(f, 0, sizeof *f);
	f->events = 1;
	f->faults = 1;
	f->seq_min = INT64_MIN;
	f->seq_max = INT64_MAX;
	f->rel_min = INT64_MIN;
	f->rel_max = INT64_MAX;
	f->wall_min = INT64_MIN;
	f->wall_max = INT64_MAX;
}

/* Nothing read yet. */
void
query_cursor_init(struct query_cursor *c)
{
	memset(c, 0, sizeof *c);
	c->msg_id = -1;
}

/*
 * Whether message m is an error: an error response, or a result that
 * says "isError": true (a tool call that failed).  The JSON is only
 * parsed when "isError" is in its bytes; json_valid first, as json_type
 * fails the whole statement on text it cannot parse (too deep, or a
 * prefix cut at the record cap), and in a CASE: the planner may reorder
 * the terms of an AND.
 */
#define QUERY_IS_ERROR(m)						\
	"(" m ".kind = 'error' OR (" m ".kind = 'response' AND "	\
	"CASE WHEN instr(" m ".raw, CAST('\"isError\"' AS BLOB)) > 0 "	\
	"AND json_valid(CAST(" m ".raw AS TEXT)) THEN "			\
	"json_type(CAST(" m ".raw AS TEXT), '$.result.isError') = 'true' "	\
	"ELSE 0 END))"

/*
 * The filtered timeline.  Its first read finds a session's rows through
 * the session index; later reads (following a live session) take the rows
 * added since by id, a range of the tables' rowids: the "+" keeps SQLite
 * from scanning the whole session again for each read.
 */
#define QUERY_FILTERED(plus)						\
	"SELECT 0, m.seq, m.direction, m.ts_ns, m.mono_ns, m.kind, "	\
	"m.method, m.rpc_id, m.mono_ns - q.mono_ns, m.raw, m.fault, "	\
	"m.fault_role, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL "	\
	"FROM messages m LEFT JOIN messages q ON q.id = m.reply_to "	\
	"WHERE " plus "m.session_id = ?1 AND m.id > ?2 AND m.id <= ?3 "	\
	"AND m.seq >= ?4 AND m.seq <= ?5 "				\
	"AND m.mono_ns >= ?6 AND m.mono_ns <= ?7 "			\
	"AND m.ts_ns >= ?8 AND m.ts_ns <= ?9 "				\
	"AND (?10 IS NULL OR m.method GLOB ?10) "			\
	"AND (?11 IS NULL OR m.direction = ?11) "			\
	"AND (?12 IS NULL OR m.kind = ?12) "				\
	"AND (?13 IS NULL OR instr(m.raw, ?13) > 0) "			\
	"AND (NOT ?14 OR " QUERY_IS_ERROR("m") ") "			\
	"UNION ALL "							\
	"SELECT 1, e.id, NULL, e.ts_ns, e.mono_ns, e.kind, NULL, "	\
	"NULL, NULL, e.text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "	\
	"NULL, NULL, NULL "						\
	"FROM events e "						\
	"WHERE ?15 AND " plus "e.session_id = ?1 "			\
	"AND e.id > ?16 AND e.id <= ?17 "				\
	"AND e.mono_ns >= ?6 AND e.mono_ns <= ?7 "			\
	"AND e.mono_ns >= ?18 AND e.mono_ns <= ?19 "			\
	"AND e.ts_ns >= ?8 AND e.ts_ns <= ?9 "				\
	"AND (?13 IS NULL OR instr(e.text, ?13) > 0) "			\
	"UNION ALL "							\
	"SELECT -1, id, direction, ts_ns, mono_ns, 'fault', method, "	\
	"rpc_id, NULL, " FAULTS_TEXT ", NULL, NULL, " FAULTS_FIELDS	\
	" FROM faults "							\
	"WHERE ?20 AND " plus "session_id = ?1 "			\
	"AND id > ?21 AND id <= ?22 "					\
	"AND mono_ns >= ?6 AND mono_ns <= ?7 "				\
	"AND mono_ns >= ?18 AND mono_ns <= ?19 "			\
	"AND ts_ns >= ?8 AND ts_ns <= ?9 "				\
	"AND (?10 IS NULL OR method GLOB ?10) "				\
	"AND (?11 IS NULL OR direction = ?11) "				\
	"AND (?13 IS NULL OR instr(" FAULTS_TEXT ", ?13) > 0) "		\
	"ORDER BY 5, 1, 2"

/* Run a query of one row and one integer column: 1 and *v, 0 if none. */
static int
query_int(struct store *st, const char *sql, int64_t a, int64_t b,
    int64_t *v, char **cause)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (query_prepare(st, sql, &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, a);
	sqlite3_bind_int64(stmt, 2, b);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	if (rc == SQLITE_DONE || sqlite3_column_type(stmt, 0) == SQLITE_NULL) {
		sqlite3_finalize(stmt);
		return 0;
	}
	*v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return 1;
}

/*
 * Read the session's state in this snapshot: its end, its recorder and
 * the newest row ids of the tables into *hw_msg and *hw_ev.
 */
static int
query_snapshot(struct store *st, int64_t session, struct query_cursor *c,
    int64_t *hw_msg, int64_t *hw_ev, int64_t *hw_fault, char **cause)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (query_prepare(st, "SELECT s.ended_ns IS NOT NULL, "
	    "CASE WHEN s.imported_from IS NULL THEN s.recorder_pid "
	    "ELSE -1 END, "
	    "(SELECT max(id) FROM messages), "
	    "(SELECT max(id) FROM events), s.transport = 'stdio', "
	    "s.started_ns, (SELECT max(id) FROM faults) "
	    "FROM sessions s WHERE s.id = ?1",
	    &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(stmt);
		xasprintf(cause, "session %lld is not in %s (was it deleted?)",
		    (long long)session, st->path);
		return -1;
	}
	if (rc != SQLITE_ROW)
		return query_failed(st, stmt, cause);
	c->ended = sqlite3_column_int(stmt, 0);
	c->recorder_pid = sqlite3_column_int64(stmt, 1);
	*hw_msg = sqlite3_column_int64(stmt, 2);
	*hw_ev = sqlite3_column_int64(stmt, 3);
	c->stdio = sqlite3_column_int(stmt, 4);
	c->started_ns = sqlite3_column_int64(stmt, 5);
	*hw_fault = sqlite3_column_int64(stmt, 6);
	sqlite3_finalize(stmt);
	if (c->started)
		return 0;
	rc = query_int(st, "SELECT min(t) FROM (SELECT min(mono_ns) AS t FROM "
	    "messages WHERE session_id = ?1 UNION ALL SELECT min(mono_ns) FROM "
	    "events WHERE session_id = ?1)", session, 0, &c->start_mono,
	    cause);
	if (rc < 0)
		return -1;
	c->started = rc;
	return 0;
}

/*
 * The monotonic bounds events get from seq bounds: from the time of
 * message seq_min (none yet: no events) to that of seq_max (none: open).
 */
static int
query_seq_bounds(struct store *st, int64_t session,
    const struct query_filter *f, int64_t *lo, int64_t *hi, char **cause)
{
	static const char	*sql = "SELECT mono_ns FROM messages WHERE "
				    "session_id = ?1 AND seq = ?2";
	int			 rc;

	*lo = INT64_MIN;
	*hi = INT64_MAX;
	if (f->seq_min > 1) {
		if ((rc = query_int(st, sql, session, f->seq_min, lo,
		    cause)) < 0)
			return -1;
		if (rc == 0)
			*lo = INT64_MAX;
	}
	if (f->seq_max != INT64_MAX && query_int(st, sql, session,
	    f->seq_max, hi, cause) < 0)
		return -1;
	return 0;
}

/* A relative bound as a monotonic one, open staying open. */
static int64_t
query_rel_bound(const struct query_cursor *c, int64_t rel)
{
	if (rel == INT64_MIN || rel == INT64_MAX)
		return rel;
	/* A session that starts near the end of the range: held there. */
	return clock_add(c->start_mono, rel);
}

/* Bind text, or NULL for a criterion not given. */
static void
query_bind_opt(sqlite3_stmt *stmt, int i, const char *text)
{
	if (text != NULL)
		sqlite3_bind_text(stmt, i, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(stmt, i);
}

/*
 * Call cb for each row of session's timeline that passes filter f and
 * that cursor c has not seen, in the order they happened, and move c past
 * them.  All of it is read from one snapshot, so c->ended means every
 * row of the session has now been seen.  Call again to get what was
 * recorded since (to follow a session being recorded).
 */
int
query_timeline_next(struct store *st, int64_t session,
    const struct query_filter *f, struct query_cursor *c, timeline_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*stmt = NULL;
	struct timeline_row	 r;
	int64_t			 hw_msg, hw_ev, hw_fault, ev_lo, ev_hi;
	int			 rc, first = (c->msg_id < 0);

	if (store_exec(st, "BEGIN", cause) != 0)
		return -1;
	if (query_snapshot(st, session, c, &hw_msg, &hw_ev, &hw_fault,
	    cause) != 0 ||
	    query_seq_bounds(st, session, f, &ev_lo, &ev_hi, cause) != 0 ||
	    query_prepare(st, first ? QUERY_FILTERED("") :
	    QUERY_FILTERED("+"), &stmt, cause) != 0)
		goto fail;
	sqlite3_bind_int64(stmt, 1, session);
	sqlite3_bind_int64(stmt, 2, c->msg_id);
	sqlite3_bind_int64(stmt, 3, hw_msg);
	sqlite3_bind_int64(stmt, 4, f->seq_min);
	sqlite3_bind_int64(stmt, 5, f->seq_max);
	sqlite3_bind_int64(stmt, 6, query_rel_bound(c, f->rel_min));
	sqlite3_bind_int64(stmt, 7, query_rel_bound(c, f->rel_max));
	sqlite3_bind_int64(stmt, 8, f->wall_min);
	sqlite3_bind_int64(stmt, 9, f->wall_max);
	query_bind_opt(stmt, 10, f->method);
	query_bind_opt(stmt, 11, f->dir);
	query_bind_opt(stmt, 12, f->kind);
	if (f->grep != NULL)
		sqlite3_bind_blob(stmt, 13, f->grep, (int)strlen(f->grep),
		    SQLITE_STATIC);
	else
		sqlite3_bind_null(stmt, 13);
	sqlite3_bind_int(stmt, 14, f->errors);
	sqlite3_bind_int(stmt, 15, f->events);
	sqlite3_bind_int64(stmt, 16, first ? -1 : c->event_id);
	sqlite3_bind_int64(stmt, 17, hw_ev);
	sqlite3_bind_int64(stmt, 18, ev_lo);
	sqlite3_bind_int64(stmt, 19, ev_hi);
	sqlite3_bind_int(stmt, 20, f->faults);
	sqlite3_bind_int64(stmt, 21, first ? -1 : c->fault_id);
	sqlite3_bind_int64(stmt, 22, hw_fault);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		query_timeline_row(stmt, &r);
		if (cb(&r, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		query_failed(st, stmt, cause);
		stmt = NULL;
		goto fail;
	}
	sqlite3_finalize(stmt);
	c->msg_id = hw_msg;
	c->event_id = hw_ev;
	c->fault_id = hw_fault;
	return store_exec(st, "COMMIT", cause);
fail:
	sqlite3_finalize(stmt);
	store_exec(st, "ROLLBACK", NULL);
	return -1;
}

/*
 * Per direction and method: requests, answered, errors, and latency
 * percentiles by nearest rank (the value at rank ceil(n * p / 100) of the
 * n answered, lowest first), numbered by a window over each method.  A
 * request whose request or answer is a fault's original or injected
 * message (f) is counted as faulted only: an injected error is not the
 * server's, and an answer that never came is not a latency.  A faulted
 * call counts once per fault (fk): a mutated request's original and its
 * forwarded copy are one call.
 */
#define QUERY_METHOD_STATS(where)					\
	"WITH x AS (SELECT q.direction AS d, q.method AS m, "		\
	"r.id IS NOT NULL AS answered, r.mono_ns - q.mono_ns AS lat, "	\
	"coalesce(" QUERY_IS_ERROR("r") ", 0) AS err, "			\
	"(" FAULTS_TOUCHED("q.") " OR " FAULTS_TOUCHED("r.") ") AS f, "	\
	"q.session_id || ' ' || coalesce(q.fault, r.fault) AS fk "	\
	"FROM messages q LEFT JOIN messages r ON r.reply_to = q.id "	\
	"WHERE q.kind = 'request' AND " where "), "			\
	"y AS (SELECT d, m, answered, lat, err, f, fk, row_number() OVER "	\
	"(PARTITION BY d, m, f ORDER BY lat IS NULL, lat) AS rn, "	\
	"count(lat) OVER (PARTITION BY d, m, f) AS n FROM x) "		\
	"SELECT d, m, sum(NOT f), sum(answered AND NOT f), "		\
	"sum(err AND NOT f), "						\
	"max(CASE WHEN NOT f AND rn = (n * 50 + 99) / 100 THEN lat END), " \
	"max(CASE WHEN NOT f AND rn = (n * 95 + 99) / 100 THEN lat END), " \
	"max(CASE WHEN NOT f AND rn = (n * 99 + 99) / 100 THEN lat END), " \
	"max(CASE WHEN NOT f THEN lat END), "				\
	"count(DISTINCT CASE WHEN f THEN fk END) "			\
	"FROM y GROUP BY d, m ORDER BY d, m"

/* An integer column, or -1 for NULL. */
static int64_t
query_int_or(sqlite3_stmt *stmt, int i)
{
	if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
		return -1;
	return sqlite3_column_int64(stmt, i);
}

/*
 * Call cb for each method requested in session (every session if 0), by
 * direction then method, with its counts and latencies.
 */
int
query_method_stats(struct store *st, int64_t session, method_stats_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*stmt;
	struct method_stats	 ms;
	int			 rc;

	/* The session index when there is one session to read. */
	if (query_prepare(st, session != 0 ?
	    QUERY_METHOD_STATS("q.session_id = ?1") :
	    QUERY_METHOD_STATS("?1 = 0"), &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&ms, 0, sizeof ms);
		ms.dir = query_column_dir(stmt, 0);
		ms.method = query_column_text(stmt, 1);
		ms.requests = sqlite3_column_int64(stmt, 2);
		ms.answered = sqlite3_column_int64(stmt, 3);
		ms.errors = sqlite3_column_int64(stmt, 4);
		ms.p50_ns = query_int_or(stmt, 5);
		ms.p95_ns = query_int_or(stmt, 6);
		ms.p99_ns = query_int_or(stmt, 7);
		ms.max_ns = query_int_or(stmt, 8);
		ms.faulted = sqlite3_column_int64(stmt, 9);
		if (cb(&ms, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}

#define QUERY_HUNG(where)						\
	"SELECT q.session_id, q.seq, q.direction, q.method, q.rpc_id, "	\
	"q.ts_ns, s.ended_ns FROM messages q "				\
	"JOIN sessions s ON s.id = q.session_id "			\
	"WHERE q.kind = 'request' AND " where " AND NOT EXISTS "	\
	"(SELECT 1 FROM messages r WHERE r.reply_to = q.id) "		\
	"AND NOT (q.fault_role IS 'original' AND EXISTS (SELECT 1 "	\
	"FROM faults f WHERE f.session_id = q.session_id AND "		\
	"f.n = q.fault AND f.action = 'mutate')) "			\
	"ORDER BY q.session_id, q.seq"

/*
 * Call cb for each request of session (every session if 0) that has no
 * response, in the order recorded.  A mutated request's original is not
 * one: its forwarded copy stands for the call (and is listed itself when
 * unanswered).
 */
int
query_hung(struct store *st, int64_t session, hung_cb cb, void *arg,
    char **cause)
{
	sqlite3_stmt	*stmt;
	struct hung_row	 h;
	int		 rc;

	if (query_prepare(st, session != 0 ? QUERY_HUNG("q.session_id = ?1") :
	    QUERY_HUNG("?1 = 0"), &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&h, 0, sizeof h);
		h.session_id = sqlite3_column_int64(stmt, 0);
		h.seq = sqlite3_column_int64(stmt, 1);
		h.dir = query_column_dir(stmt, 2);
		h.method = query_column_text(stmt, 3);
		h.rpc_id = query_column_text(stmt, 4);
		h.ts_ns = sqlite3_column_int64(stmt, 5);
		h.ended_ns = sqlite3_column_int64(stmt, 6);
		if (cb(&h, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}
