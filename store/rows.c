/*
 * The rows the writer thread writes: its prepared statements, one function
 * per kind of queued item, the transaction's bookkeeping (what a rollback
 * loses), what a failed write means (store/writer.c keeps the queue and
 * the thread), and the checkpoints.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/*
 * A message from this size is inserted as a zeroblob and its bytes written
 * into the row in pieces: bound whole, SQLite would build the whole row in
 * memory first, a second copy of the message (64 MiB: 212 -> ~150 MB peak).
 */
#define ROWS_BLOB_PIECES	(1024 * 1024)

/* After each commit: how big the WAL is (writer thread). */
static int
rows_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct writer	*w = arg;

	w->wal_pages = pages;
	return SQLITE_OK;
}

/* The database's page size in bytes (4096 if it cannot be read). */
static int
rows_page_size(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 page = 4096;

	if (sqlite3_prepare_v2(st->db, "PRAGMA page_size", -1, &stmt,
	    NULL) != SQLITE_OK)
		return page;
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_int(stmt, 0) >
	    0)
		page = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return page;
}

/* Copy the WAL into the database; readers may keep part of it. */
void
rows_checkpoint(struct writer *w)
{
	int	rc;

	/* Recording stopped: the room left is for the session's last row. */
	if (w->broken != NULL) {
		w->wal_pages = 0;
		return;
	}
	rc = sqlite3_wal_checkpoint_v2(w->st->db, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		log_debug("checkpoint of %s: %s", w->st->path,
		    sqlite3_errmsg(w->st->db));
	w->wal_pages = 0;
}

void
rows_finalize(struct writer *w)
{
	sqlite3_finalize(w->ins_session);
	sqlite3_finalize(w->ins_message);
	sqlite3_finalize(w->ins_event);
	sqlite3_finalize(w->end_session);
	sqlite3_finalize(w->upd_broken);
	sqlite3_finalize(w->upd_session_start);
	sqlite3_finalize(w->ins_exchange);
	sqlite3_finalize(w->upd_exchange_resp);
	sqlite3_finalize(w->upd_exchange_end);
	sqlite3_finalize(w->upd_exchange_trailers);
	sqlite3_finalize(w->ins_fault);
	sqlite3_finalize(w->upd_exchange_fault);
	sqlite3_finalize(w->upd_otlp);
	sqlite3_finalize(w->upd_client);
	sqlite3_finalize(w->upd_transport);
}

static int
rows_prepare(struct writer *w, sqlite3_stmt **stmt, const char *sql,
    char **cause)
{
	if (sqlite3_prepare_v3(w->st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    stmt, NULL) != SQLITE_OK) {
		xasprintf(cause, "database %s: %s", w->st->path,
		    sqlite3_errmsg(w->st->db));
		return -1;
	}
	return 0;
}

/*
 * Prepare the writer's statements and watch its WAL; on failure, cause
 * says why (rows_finalize() cleans up either way).
 */
int
rows_init(struct writer *w, char **cause)
{
	int	page;

	page = rows_page_size(w->st);
	w->ckpt_quiet = WRITER_CKPT_QUIET / page;
	w->ckpt_empty = WRITER_CKPT_EMPTY / page;
	w->ckpt_busy = WRITER_CKPT_BUSY / page;
	sqlite3_wal_hook(w->st->db, rows_wal_hook, w);
	if (rows_prepare(w, &w->ins_session, "INSERT INTO sessions (name, "
	    "transport, target, started_ns, recorder_pid, mcpreel_version, "
	    "imported_from, end_reason, origin, id) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    rows_prepare(w, &w->ins_message, WRITER_INSERT_MESSAGE, cause) != 0 ||
	    rows_prepare(w, &w->ins_event, "INSERT INTO events (session_id,"
	    " ts_ns, mono_ns, kind, text) VALUES (?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    rows_prepare(w, &w->end_session, "UPDATE sessions SET ended_ns "
	    "= ?, exit_status = coalesce(?, exit_status), "
	    "exit_signal = coalesce(?, exit_signal), end_reason = ?, "
	    "messages_lost = ?, store_error = coalesce(?, store_error) "
	    "WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_session_start, "UPDATE sessions SET "
	    "started_ns = ? WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_broken, "UPDATE sessions SET "
	    "messages_lost = ?, store_error = ? WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->ins_exchange, "INSERT INTO http_exchanges "
	    "(session_id, connection, method, path, request_headers, "
	    "started_ns, mono_ns) VALUES (?, ?, ?, ?, ?, ?, ?)", cause) != 0 ||
	    rows_prepare(w, &w->upd_exchange_resp, "UPDATE http_exchanges "
	    "SET status = ?, response_headers = ?, response_mono_ns = ? "
	    "WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_exchange_end, "UPDATE http_exchanges "
	    "SET ended_ns = ?, outcome = ?, body = ? WHERE id = ?",
	    cause) != 0 ||
	    rows_prepare(w, &w->upd_exchange_trailers, "UPDATE http_exchanges "
	    "SET request_trailers = ?, response_trailers = ? WHERE id = ?",
	    cause) != 0 ||
	    rows_prepare(w, &w->ins_fault, "INSERT INTO faults (session_id, "
	    "n, ts_ns, mono_ns, rule_index, rule, action, direction, method, "
	    "rpc_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    rows_prepare(w, &w->upd_exchange_fault, "UPDATE http_exchanges "
	    "SET fault = ? WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_otlp, "UPDATE sessions SET "
	    "otlp_dropped = ? WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_client, "UPDATE sessions SET "
	    "client_address = ?, client_port = ? WHERE id = ?", cause) != 0 ||
	    rows_prepare(w, &w->upd_transport, "UPDATE sessions SET "
	    "transport = ? WHERE id = ?", cause) != 0)
		return -1;
	return 0;
}

/*
 * Note a failed write.  Trouble with the file itself (a full disk, a file
 * made read-only, an I/O error) stops recording for the rest of the run:
 * writer_batch() rolls back and rows_broken() says so.  Anything else
 * (another process holding the lock too long, a row SQLite refuses) costs
 * what failed, warned once per run of failures.
 */
void
rows_failed(struct writer *w, const char *what)
{
	switch (w->last_rc & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
	case SQLITE_READONLY:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		if (w->broken == NULL)
			xasprintf(&w->broken, "cannot write %s to %s: %s",
			    what, w->st->path, w->last_err);
		return;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		if (!w->failing)
			log_warnx("database %s is locked by another process: "
			    "waited %d s to write %s; what waits is counted "
			    "as not recorded until the lock is released, "
			    "forwarding goes on", w->st->path,
			    STORE_BUSY_TIMEOUT_MS / 1000, what);
		break;
	default:
		if (!w->failing)
			log_warnx("cannot write %s to %s: %s; forwarding goes "
			    "on", what, w->st->path, w->last_err);
		break;
	}
	w->failing = 1;
}

/* Keep what a failed call said, for rows_failed(). */
static void
rows_error(struct writer *w, int rc)
{
	w->last_rc = rc;
	snprintf(w->last_err, sizeof w->last_err, "%s",
	    sqlite3_errmsg(w->st->db));
}

static int
rows_step(struct writer *w, sqlite3_stmt *stmt)
{
	int	rc = sqlite3_step(stmt);

	if (rc != SQLITE_DONE)
		rows_error(w, rc);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return (rc == SQLITE_DONE) ? 0 : -1;
}

int
rows_exec(struct writer *w, const char *sql)
{
	int	rc = sqlite3_exec(w->st->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		rows_error(w, rc);
	return (rc == SQLITE_OK) ? 0 : -1;
}

/* Put s on the list of sessions with rows in the open transaction. */
static void
rows_touch(struct writer *w, struct wsession *s)
{
	if (s->uncommitted == 0 && s->faults_uncommitted == 0) {
		s->touched_next = w->touched;
		w->touched = s;
	}
}

/* The open transaction committed: its rows are kept. */
void
rows_committed(struct writer *w)
{
	struct wsession	*s;

	for (s = w->touched; s != NULL; s = s->touched_next)
		s->uncommitted = s->faults_uncommitted = 0;
	w->touched = NULL;
}

/*
 * The open transaction is lost: count its messages and faults as not
 * recorded.
 */
void
rows_rollback(struct writer *w)
{
	struct wsession	*s;

	if (!sqlite3_get_autocommit(w->st->db))
		sqlite3_exec(w->st->db, "ROLLBACK", NULL, NULL, NULL);
	for (s = w->touched; s != NULL; s = s->touched_next) {
		s->lost += s->uncommitted;
		s->faults_lost += s->faults_uncommitted;
		s->uncommitted = s->faults_uncommitted = 0;
	}
	w->touched = NULL;
}

/*
 * Recording just stopped for good: say so once, and try to note it in
 * every session's row (on a full disk this small update usually fits in
 * the room the rolled-back transaction took).
 */
void
rows_broken(struct writer *w)
{
	struct wsession	*s;
	sqlite3_stmt	*st = w->upd_broken;

	log_warnx("recording stopped: %s; forwarding goes on, and the "
	    "messages not recorded are counted", w->broken);
	/* What room is left is for these rows, not for a checkpoint. */
	if (w->ckpt != NULL)
		ckpt_off(w->ckpt);
	if ((w->last_rc & 0xff) == SQLITE_FULL)
		store_release(w->st);
	for (s = w->all; s != NULL; s = s->all_next) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)s->lost +
		    (s->imp != NULL ? s->imp->lost : 0));
		sqlite3_bind_text(st, 2, w->broken, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, s->id);
		sqlite3_step(st);
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

void
rows_begin(struct writer *w, struct wsession *s)
{
	sqlite3_stmt	*st = w->ins_session;

	if (s->name != NULL)
		sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, s->transport, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->target, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, s->started_ns);
	sqlite3_bind_text(st, 9, s->origin, -1, SQLITE_STATIC);
	if (s->imp == NULL) {
		sqlite3_bind_int64(st, 5, (sqlite3_int64)getpid());
		sqlite3_bind_text(st, 6, MCPREEL_VERSION, -1, SQLITE_STATIC);
	} else {
		if (s->imp->recorder_pid != 0)
			sqlite3_bind_int64(st, 5, s->imp->recorder_pid);
		if (s->imp->version != NULL)
			sqlite3_bind_text(st, 6, s->imp->version, -1,
			    SQLITE_STATIC);
		if (s->imp->imported_from != NULL)
			sqlite3_bind_text(st, 7, s->imp->imported_from, -1,
			    SQLITE_STATIC);
		sqlite3_bind_text(st, 8, WRITER_IMPORTING, -1, SQLITE_STATIC);
		/* Unbound (NULL) gives the next free id. */
		if (s->imp->id != 0)
			sqlite3_bind_int64(st, 10, s->imp->id);
	}
	if (rows_step(w, st) != 0) {
		rows_failed(w, "a session");
		return;
	}
	/* Read by other threads (writer_session_id_now). */
	__atomic_store_n(&s->id, sqlite3_last_insert_rowid(w->st->db),
	    __ATOMIC_RELEASE);
	s->all_next = w->all;
	if (w->all != NULL)
		w->all->all_prevp = &s->all_next;
	s->all_prevp = &w->all;
	w->all = s;
}

/*
 * The producer is done with a session (ITEM_SESSION_FREE, after every
 * earlier item of it and after its batch committed or rolled back): its
 * row id goes where it asked, and it is freed.  A transaction's end
 * empties w->touched, but a session still on it is taken off first, so
 * that the counts of the next commit or rollback never reach it.
 */
void
rows_release(struct writer *w, struct item *it)
{
	struct wsession	*s = it->session, **sp;
	struct writer_ids *ids = it->ids;

	for (sp = &w->touched; *sp != NULL; sp = &(*sp)->touched_next) {
		if (*sp == s) {
			*sp = s->touched_next;
			break;
		}
	}
	if (s->all_prevp != NULL) {
		*s->all_prevp = s->all_next;
		if (s->all_next != NULL)
			s->all_next->all_prevp = s->all_prevp;
	}
	if (ids != NULL && s->id > 0) {
		if (ids->n == ids->cap) {
			ids->cap = ids->cap == 0 ? 64 : ids->cap * 2;
			ids->ids = xreallocarray(ids->ids, ids->cap,
			    sizeof *ids->ids);
		}
		ids->ids[ids->n++] = s->id;
	}
	writer_session_free(s);
	it->session = NULL;
}

/*
 * Whether s has its row, trying again to write it if a lock or a failure
 * kept it from being written when the session began (in a transaction,
 * or at the session's end): a lock held for a while must not cost the
 * rest of a session.
 */
static int
rows_ready(struct writer *w, struct wsession *s, int at_end)
{
	if (s->id == 0 && w->broken == NULL &&
	    (at_end || !sqlite3_get_autocommit(w->st->db)))
		rows_begin(w, s);
	return s->id != 0;
}

/*
 * Move a session's start back to ts_ns if something of it (an exchange, a
 * message) began earlier.  Over HTTP a session is made by whichever
 * exchange first learns it, and an earlier one still under way may join
 * it after; a session never starts after its own traffic.  A session
 * recorded elsewhere keeps the start it came with.
 */
static void
rows_session_earlier(struct writer *w, struct wsession *s, int64_t ts_ns)
{
	sqlite3_stmt	*st = w->upd_session_start;

	if (s->imp != NULL || s->id == 0 || ts_ns <= 0 ||
	    ts_ns >= s->started_ns)
		return;
	s->started_ns = ts_ns;
	sqlite3_bind_int64(st, 1, ts_ns);
	sqlite3_bind_int64(st, 2, s->id);
	if (rows_step(w, st) != 0)
		rows_failed(w, "a session's start");
}

/*
 * Build the pending-request key: the request's direction, then its id
 * text.  A response travelling the other way looks up the same key.
 */
static size_t
rows_key(char *key, size_t keysz, enum dir d, const char *id, size_t len)
{
	if (len + 1 > keysz)
		return 0;
	key[0] = (char)('0' + d);
	memcpy(key + 1, id, len);
	return len + 1;
}

/* Write a huge message's bytes into the row just inserted for it. */
static int
rows_blob_write(struct writer *w, const struct msg *m)
{
	sqlite3_blob	*b = NULL;
	size_t		 off, n;
	char		*sql;
	int		 rc;

	rc = sqlite3_blob_open(w->st->db, "main", "messages", "raw",
	    sqlite3_last_insert_rowid(w->st->db), 1, &b);
	for (off = 0; rc == SQLITE_OK && off < m->len; off += n) {
		n = m->len - off;
		if (n > ROWS_BLOB_PIECES)
			n = ROWS_BLOB_PIECES;
		rc = sqlite3_blob_write(b, m->raw + off, (int)n, (int)off);
	}
	if (sqlite3_blob_close(b) != SQLITE_OK && rc == SQLITE_OK)
		rc = SQLITE_ERROR;
	if (rc == SQLITE_OK)
		return 0;
	rows_error(w, rc);
	/* No row of zeros stands for the message: it is counted lost. */
	xasprintf(&sql, "DELETE FROM messages WHERE id = %lld",
	    (long long)sqlite3_last_insert_rowid(w->st->db));
	sqlite3_exec(w->st->db, sql, NULL, NULL, NULL);
	free(sql);
	return -1;
}

/*
 * Past WRITER_PENDING_MAX unanswered requests (or WRITER_PENDING_BYTES of
 * them), forget the oldest half, and again until under both; said once
 * per session.
 */
static void
rows_forget(struct wsession *s)
{
	size_t	n;

	if (s->forgotten == 0)
		log_warnx("session %lld: more than %d requests (or %d MiB of "
		    "them) are unanswered; the oldest are forgotten, and an "
		    "answer that still comes for one is recorded without its "
		    "request", (long long)s->id, WRITER_PENDING_MAX,
		    WRITER_PENDING_BYTES / (1024 * 1024));
	do {
		n = idmap_count(s->pending);
		s->forgotten += idmap_keep_newest(s->pending,
		    n > WRITER_PENDING_MAX ? WRITER_PENDING_MAX / 2 : n / 2);
	} while (idmap_bytes(s->pending) > WRITER_PENDING_BYTES);
}

/*
 * Write a message's row, classified by pre (writer_scan() on the
 * producer's thread) or, when NULL, here; pair a response with its
 * request.
 */
void
rows_message(struct writer *w, struct wsession *s, struct wexchange *x,
    struct msg *m, const struct scan *pre)
{
	sqlite3_stmt	*st = w->ins_message;
	struct scan	 sc;
	const char	*mtext = NULL, *src = m->raw;
	char		*mown = NULL, key[256], mbuf[128];
	int64_t		 reply_to = 0;
	size_t		 klen = 0;
	int		 mlen = -1;

	s->seq++;
	if (pre != NULL)
		sc = *pre;
	else
		writer_scan(m, &sc);
	if (m->ident != NULL)
		src = m->ident;
	if (sc.has_id)
		klen = rows_key(key, sizeof key, sc.kind == KIND_REQUEST ?
		    m->dir : !m->dir, src + sc.id_off, sc.id_len);
	if (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) {
		if (klen != 0 &&
		    idmap_take(s->pending, key, klen, &reply_to, &mown) != 0)
			reply_to = 0;
		mtext = mown;
	} else if (sc.has_method && sc.method_escaped)
		mtext = mown = scan_method_dup(src, &sc);
	else if (sc.has_method) {
		/* The common case: the method as written, no copy. */
		mtext = src + sc.method_off;
		mlen = (int)sc.method_len;
	}

	if (!rows_ready(w, s, 0)) {
		s->lost++;
		free(mown);
		return;
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, s->seq);
	sqlite3_bind_text(st, 3, dir_name(m->dir), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, m->ts_ns);
	sqlite3_bind_int64(st, 5, m->mono_ns);
	sqlite3_bind_text(st, 6, kind_name(sc.kind), -1, SQLITE_STATIC);
	if (mtext != NULL)
		sqlite3_bind_text(st, 7, mtext, mlen, SQLITE_STATIC);
	if (sc.has_id)
		sqlite3_bind_text(st, 8, src + sc.id_off, (int)sc.id_len,
		    SQLITE_STATIC);
	if (reply_to != 0)
		sqlite3_bind_int64(st, 9, reply_to);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)m->len);
	if (m->len >= ROWS_BLOB_PIECES)
		sqlite3_bind_zeroblob64(st, 11, m->len);
	else
		sqlite3_bind_blob64(st, 11, m->raw, m->len, SQLITE_STATIC);
	if (x != NULL && x->id != 0)
		sqlite3_bind_int64(st, 12, x->id);
	if (m->sse_id != NULL)
		sqlite3_bind_text(st, 13, m->sse_id, -1, SQLITE_STATIC);
	if (m->wire_size >= 0)
		sqlite3_bind_int64(st, 14, m->wire_size);
	if (m->sha256 != NULL)
		sqlite3_bind_text(st, 15, m->sha256, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 16, (m->flags & MSG_TRUNCATED) != 0);
	sqlite3_bind_int(st, 17, (m->flags & MSG_REDACTED) != 0);
	if (m->fault > 0)
		sqlite3_bind_int64(st, 18, m->fault);
	if (fault_role_name(m->fault_role) != NULL)
		sqlite3_bind_text(st, 19, fault_role_name(m->fault_role), -1,
		    SQLITE_STATIC);
	if (rows_step(w, st) != 0 || (m->len >= ROWS_BLOB_PIECES &&
	    rows_blob_write(w, m) != 0)) {
		s->lost++;
		rows_failed(w, "a message");
	} else {
		w->failing = 0;
		rows_session_earlier(w, s, m->ts_ns);
		rows_touch(w, s);
		s->uncommitted++;
		if (sc.kind == KIND_REQUEST && klen != 0) {
			/* idmap copies the method: give it a terminated one. */
			if (mown == NULL && mtext != NULL) {
				if ((size_t)mlen < sizeof mbuf) {
					memcpy(mbuf, mtext, (size_t)mlen);
					mbuf[mlen] = '\0';
					mtext = mbuf;
				} else
					mtext = mown = xstrndup(mtext,
					    (size_t)mlen);
			}
			idmap_put(s->pending, key, klen,
			    sqlite3_last_insert_rowid(w->st->db), mtext);
			if (idmap_count(s->pending) > WRITER_PENDING_MAX ||
			    idmap_bytes(s->pending) > WRITER_PENDING_BYTES)
				rows_forget(s);
		}
	}
	free(mown);
}

void
rows_event(struct writer *w, struct wsession *s, const char *kind,
    struct msg *m)
{
	sqlite3_stmt	*st = w->ins_event;

	if (!rows_ready(w, s, 0))
		return;
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, m->ts_ns);
	sqlite3_bind_int64(st, 3, m->mono_ns);
	sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
	sqlite3_bind_blob64(st, 5, m->raw, m->len, SQLITE_STATIC);
	if (rows_step(w, st) != 0)
		rows_failed(w, "an event");
}

void
rows_end(struct writer *w, struct item *it)
{
	sqlite3_stmt	*st = w->end_session;
	struct wsession	*s = it->session;

	if (s->faults_lost != 0)
		log_warnx("session %lld: %llu injected fault%s could not be "
		    "recorded: the messages that name %s have no fault row",
		    (long long)s->id, (unsigned long long)s->faults_lost,
		    s->faults_lost == 1 ? "" : "s",
		    s->faults_lost == 1 ? "it" : "them");
	if (!rows_ready(w, s, 1))
		return;
	if (it->info.ts_ns != WRITER_NO_TIME)
		sqlite3_bind_int64(st, 1, it->info.ts_ns);
	if (it->exit_status >= 0)
		sqlite3_bind_int(st, 2, it->exit_status);
	if (it->exit_signal > 0)
		sqlite3_bind_int(st, 3, it->exit_signal);
	if (it->reason != NULL)
		sqlite3_bind_text(st, 4, it->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)s->lost +
	    (s->imp != NULL ? s->imp->lost : 0));
	if (w->broken != NULL)
		sqlite3_bind_text(st, 6, w->broken, -1, SQLITE_STATIC);
	else if (s->imp != NULL && s->imp->store_error != NULL)
		sqlite3_bind_text(st, 6, s->imp->store_error, -1,
		    SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, s->id);
	if (rows_step(w, st) != 0)
		rows_failed(w, "the end of a session");
	if (s->forgotten > 0)
		log_info("session %lld: %llu unanswered requests were forgotten "
		    "(their answers, if any came, are recorded unpaired)",
		    (long long)s->id, (unsigned long long)s->forgotten);
}

/*
 * A session's count of spans OpenTelemetry export did not deliver
 * (ITEM_SESSION_OTLP), its client (ITEM_SESSION_CLIENT), or its
 * transport (ITEM_SESSION_TRANSPORT).
 */
void
rows_otlp(struct writer *w, struct item *it)
{
	struct wsession	*s = it->session;
	sqlite3_stmt	*st;

	if (!rows_ready(w, s, 1))
		return;
	if (it->type == ITEM_SESSION_CLIENT) {
		st = w->upd_client;
		sqlite3_bind_text(st, 1, it->reason, -1, SQLITE_STATIC);
		if (it->count > 0)
			sqlite3_bind_int64(st, 2, it->count);
		sqlite3_bind_int64(st, 3, s->id);
	} else if (it->type == ITEM_SESSION_TRANSPORT) {
		st = w->upd_transport;
		sqlite3_bind_text(st, 1, it->reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, s->id);
	} else {
		st = w->upd_otlp;
		sqlite3_bind_int64(st, 1, it->count);
		sqlite3_bind_int64(st, 2, s->id);
	}
	if (rows_step(w, st) != 0)
		rows_failed(w, "a session's OpenTelemetry columns");
}

void
rows_exchange(struct writer *w, struct item *it)
{
	struct wexchange	*x = it->x;
	sqlite3_stmt		*st;

	switch (it->type) {
	case ITEM_EXCHANGE_BEGIN:
		if (!rows_ready(w, it->session, 0))
			return;
		st = w->ins_exchange;
		sqlite3_bind_int64(st, 1, it->session->id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)it->info.conn);
		sqlite3_bind_text(st, 3, it->info.method, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, it->info.path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, it->info.headers, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, it->info.ts_ns);
		sqlite3_bind_int64(st, 7, it->info.mono_ns);
		if (rows_step(w, st) != 0)
			rows_failed(w, "an HTTP exchange");
		else {
			x->id = sqlite3_last_insert_rowid(w->st->db);
			rows_session_earlier(w, it->session, it->info.ts_ns);
		}
		break;
	case ITEM_EXCHANGE_RESPONSE:
		if (x->id == 0)
			return;
		st = w->upd_exchange_resp;
		sqlite3_bind_int(st, 1, it->exit_status);
		sqlite3_bind_text(st, 2, it->info.headers, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, it->info.mono_ns);
		sqlite3_bind_int64(st, 4, x->id);
		if (rows_step(w, st) != 0)
			rows_failed(w, "an HTTP response");
		break;
	case ITEM_EXCHANGE_TRAILERS:
		if (x->id == 0)
			return;
		st = w->upd_exchange_trailers;
		sqlite3_bind_text(st, 1, it->info.path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, it->info.headers, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, x->id);
		if (rows_step(w, st) != 0)
			rows_failed(w, "HTTP trailer fields");
		break;
	case ITEM_EXCHANGE_FAULT:
		if (x->id == 0)
			return;
		st = w->upd_exchange_fault;
		sqlite3_bind_int64(st, 1, it->fault->n);
		sqlite3_bind_int64(st, 2, x->id);
		if (rows_step(w, st) != 0)
			rows_failed(w, "an HTTP exchange's fault");
		break;
	case ITEM_EXCHANGE_END:
		if (x->id != 0) {
			st = w->upd_exchange_end;
			if (it->info.ts_ns != WRITER_NO_TIME)
				sqlite3_bind_int64(st, 1, it->info.ts_ns);
			if (it->reason != NULL)
				sqlite3_bind_text(st, 2, it->reason, -1,
				    SQLITE_STATIC);
			if (it->msg != NULL)
				sqlite3_bind_blob64(st, 3, it->msg->raw,
				    it->msg->len, SQLITE_STATIC);
			sqlite3_bind_int64(st, 4, x->id);
			if (rows_step(w, st) != 0)
				rows_failed(w, "the end of an HTTP "
				    "exchange");
		}
		free(x);
		break;
	default:
		break;
	}
}

/* Write a faults row: what a --fault rule did, to which message. */
void
rows_fault(struct writer *w, struct wsession *s, const struct wfault *f)
{
	sqlite3_stmt	*st = w->ins_fault;

	if (!rows_ready(w, s, 0)) {
		s->faults_lost++;
		return;
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, f->n);
	sqlite3_bind_int64(st, 3, f->ts_ns);
	sqlite3_bind_int64(st, 4, f->mono_ns);
	sqlite3_bind_int(st, 5, f->rule_index);
	sqlite3_bind_text(st, 6, f->rule != NULL ? f->rule : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 7, f->action != NULL ? f->action : "", -1,
	    SQLITE_STATIC);
	if (f->has_dir)
		sqlite3_bind_text(st, 8, dir_name(f->dir), -1, SQLITE_STATIC);
	if (f->method != NULL)
		sqlite3_bind_text(st, 9, f->method, -1, SQLITE_STATIC);
	if (f->rpc_id != NULL)
		sqlite3_bind_text(st, 10, f->rpc_id, -1, SQLITE_STATIC);
	if (f->detail != NULL)
		sqlite3_bind_text(st, 11, f->detail, -1, SQLITE_STATIC);
	if (rows_step(w, st) != 0) {
		s->faults_lost++;
		rows_failed(w, "a fault");
	} else {
		w->failing = 0;
		rows_touch(w, s);
		s->faults_uncommitted++;
	}
}
