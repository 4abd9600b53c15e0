/*
 * The faults --fault injected: queued for the writer (writer_fault and
 * its kin), and the questions asked of them: the faults rows as events of
 * a timeline, how many there were of each action, and how many messages
 * check, replay and mock leave out for being a fault's.
 */

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* A copy of s, or NULL for NULL. */
static char *
faults_dup(const char *s)
{
	return (s != NULL) ? xstrdup(s) : NULL;
}

/*
 * Record a fault mcpreel injected (a faults row) in session s; queue it
 * before the messages that carry its n, so that a reader finds the fault
 * of each faulted message.  Its strings are copied.
 */
void
writer_fault(struct writer *w, struct wsession *s, const struct wfault *f)
{
	struct item	*it = xcalloc(1, sizeof *it);
	struct wfault	*c = xmalloc(sizeof *c);
	size_t		 bytes = sizeof *it + sizeof *c;

	*c = *f;
	c->rule = xstrdup(f->rule != NULL ? f->rule : "");
	c->action = xstrdup(f->action != NULL ? f->action : "");
	c->method = faults_dup(f->method);
	c->rpc_id = faults_dup(f->rpc_id);
	c->detail = faults_dup(f->detail);
	bytes += strlen(c->rule) + strlen(c->action) +
	    (c->method != NULL ? strlen(c->method) : 0) +
	    (c->rpc_id != NULL ? strlen(c->rpc_id) : 0) +
	    (c->detail != NULL ? strlen(c->detail) : 0);
	it->type = ITEM_FAULT;
	it->session = s;
	it->fault = c;
	writer_enqueue(w, it, bytes);
}

/*
 * The next fault number of session s: 1, 2, ...  Only the thread that
 * records s (the event loop) calls it; the writer never reads it.
 */
int64_t
writer_session_next_fault(struct wsession *s)
{
	return ++s->faults;
}

/*
 * The response of HTTP exchange x was made by fault n (an injected
 * status, a reset, an ended stream): http_exchanges.fault.  Before
 * writer_exchange_end(), which hands x to the writer.
 */
void
writer_exchange_fault(struct writer *w, struct wexchange *x, int64_t n)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_FAULT;
	it->x = x;
	it->fault = xcalloc(1, sizeof *it->fault);
	it->fault->n = n;
	writer_enqueue(w, it, sizeof *it + sizeof *it->fault);
}

/* Free a queued fault (writer_fault's copy and its strings), or NULL. */
void
faults_free(struct wfault *f)
{
	if (f == NULL)
		return;
	free((char *)f->rule);
	free((char *)f->action);
	free((char *)f->method);
	free((char *)f->rpc_id);
	free((char *)f->detail);
	free(f);
}

/* A stored fault_role as FAULT_ROLE_* (FAULT_ROLE_NONE for NULL). */
int
faults_role(const char *name)
{
	if (name == NULL)
		return FAULT_ROLE_NONE;
	if (strcmp(name, "original") == 0)
		return FAULT_ROLE_ORIGINAL;
	if (strcmp(name, "injected") == 0)
		return FAULT_ROLE_INJECTED;
	if (strcmp(name, "delayed") == 0)
		return FAULT_ROLE_DELAYED;
	return FAULT_ROLE_NONE;
}

/*
 * Fill f from a statement's columns from col on: n, rule_index, rule,
 * action, direction, method, rpc_id, detail (times are the caller's).
 */
void
faults_fill(sqlite3_stmt *stmt, int col, struct fault_row *f)
{
	f->n = sqlite3_column_int64(stmt, col);
	f->rule_index = sqlite3_column_int(stmt, col + 1);
	f->rule = query_column_text(stmt, col + 2);
	f->action = query_column_text(stmt, col + 3);
	f->has_dir = sqlite3_column_type(stmt, col + 4) != SQLITE_NULL;
	f->dir = query_column_dir(stmt, col + 4);
	f->method = query_column_text(stmt, col + 5);
	f->rpc_id = query_column_text(stmt, col + 6);
	f->detail = query_column_text(stmt, col + 7);
	if (f->rule == NULL)
		f->rule = "";
	if (f->action == NULL)
		f->action = "";
}

/* Fill e (and f, for a fault) from a row of FAULTS_EVENTS_SQL. */
void
faults_event_row(sqlite3_stmt *stmt, struct event_row *e,
    struct fault_row *f)
{
	memset(e, 0, sizeof *e);
	e->ts_ns = sqlite3_column_int64(stmt, 0);
	e->mono_ns = sqlite3_column_int64(stmt, 1);
	e->kind = query_column_text(stmt, 2);
	e->text = query_column_blob(stmt, 3);
	e->len = (size_t)sqlite3_column_bytes(stmt, 3);
	if (sqlite3_column_int(stmt, 5) != 1)
		return;
	memset(f, 0, sizeof *f);
	faults_fill(stmt, 6, f);
	f->ts_ns = e->ts_ns;
	f->mono_ns = e->mono_ns;
	e->fault = f;
}

/* Run a count of session (every session if 0) into *n. */
static int
faults_int(struct store *st, const char *sql, int64_t session, int64_t *n,
    char **cause)
{
	sqlite3_stmt	*stmt;

	*n = 0;
	if (query_prepare(st, sql, &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return query_failed(st, stmt, cause);
	*n = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return 0;
}

/*
 * How many messages of session (every session if 0) QUERY_UNFAULTED
 * leaves out.  Counted through the session index; a file without faults
 * has none to count, and the fault_role test costs a row read only for
 * the session's own rows.
 */
int
faults_left_out(struct store *st, int64_t session, int64_t *n, char **cause)
{
	return faults_int(st, session != 0 ?
	    "SELECT count(*) FROM messages WHERE session_id = ?1 AND NOT "
	    FAULTS_KEPT("") :
	    "SELECT count(*) FROM messages WHERE ?1 = 0 AND NOT "
	    FAULTS_KEPT(""), session, n, cause);
}

/* How many faults rows session has (every session if 0). */
int
faults_count(struct store *st, int64_t session, int64_t *n, char **cause)
{
	return faults_int(st, "SELECT count(*) FROM faults WHERE ?1 = 0 OR "
	    "session_id = ?1", session, n, cause);
}

/*
 * How many messages and HTTP exchanges of session name a fault (n) that
 * the session has no faults row of: what a damaged import would leave.
 */
int
faults_dangling(struct store *st, int64_t session, int64_t *n, char **cause)
{
	return faults_int(st, "SELECT (SELECT count(*) FROM messages m "
	    "WHERE m.session_id = ?1 AND m.fault IS NOT NULL AND NOT EXISTS "
	    "(SELECT 1 FROM faults f WHERE f.session_id = ?1 AND "
	    "f.n = m.fault)) + (SELECT count(*) FROM http_exchanges x "
	    "WHERE x.session_id = ?1 AND x.fault IS NOT NULL AND NOT EXISTS "
	    "(SELECT 1 FROM faults f WHERE f.session_id = ?1 AND "
	    "f.n = x.fault))", session, n, cause);
}

/*
 * Whether session has anything of a fault: a faults row, a message with
 * a fault_role, an HTTP response a fault made (export writes a newer
 * format then).
 */
int
faults_any(struct store *st, int64_t session, int *any, char **cause)
{
	int64_t	n;

	if (faults_int(st, "SELECT EXISTS (SELECT 1 FROM faults WHERE "
	    "session_id = ?1) OR EXISTS (SELECT 1 FROM http_exchanges WHERE "
	    "session_id = ?1 AND fault IS NOT NULL) OR EXISTS (SELECT 1 FROM "
	    "messages WHERE session_id = ?1 AND fault_role IS NOT NULL)",
	    session, &n, cause) != 0)
		return -1;
	*any = (n != 0);
	return 0;
}

/*
 * Call cb with each action of the faults of session (every session if 0)
 * and how many there were, the most frequent first.
 */
int
faults_by_action(struct store *st, int64_t session, fault_action_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (query_prepare(st, "SELECT action, count(*) FROM faults WHERE "
	    "?1 = 0 OR session_id = ?1 GROUP BY action ORDER BY 2 DESC, 1",
	    &stmt, cause) != 0)
		return -1;
	sqlite3_bind_int64(stmt, 1, session);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (cb(query_column_text(stmt, 0) != NULL ?
		    query_column_text(stmt, 0) : "", sqlite3_column_int64(stmt,
		    1), arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return query_failed(st, stmt, cause);
	sqlite3_finalize(stmt);
	return 0;
}
