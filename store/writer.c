/*
 * The writer thread: it owns the SQLite connection once started and turns
 * queued messages into rows, one transaction a batch.  The forwarding loop
 * only appends to the queue; it never waits for the disk.
 *
 * Waking a thread for every message costs more than recording it, so the
 * writer sleeps on a short timer while messages trickle in and is signalled
 * only when a batch is full, when it went idle on an empty queue, or when
 * it must stop.  The queue is bounded in bytes and messages: past the high
 * mark writer_message() tells the caller to stop reading, and the drain
 * callback says when the queue is back under the low mark.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/* A batch is written when this many items wait, or after WRITER_TICK_MS. */
#define WRITER_BATCH		1024
#define WRITER_TICK_MS		5
/* Empty ticks before the writer sleeps until signalled (~100 ms). */
#define WRITER_IDLE_TICKS	20
/*
 * SQLite's automatic checkpoint (every 1000 WAL pages, in the committing
 * thread) is off: the writer checkpoints when it has nothing to do and
 * the WAL holds WRITER_CKPT_QUIET bytes, or in the middle of a burst once
 * it holds WRITER_CKPT_BUSY.  A burst of 600 000 small messages records
 * faster (175k -> ~205k messages/s in the benchmark).
 */
#define WRITER_CKPT_QUIET	(4 * 1024 * 1024)
#define WRITER_CKPT_BUSY	(64 * 1024 * 1024)
/*
 * A message from this size is inserted as a zeroblob and its bytes written
 * into the row in pieces: bound whole, SQLite would build the whole row in
 * memory first, a second copy of the message (64 MiB: 212 -> ~150 MB peak).
 */
#define WRITER_BLOB_PIECES	(1024 * 1024)
/* Past either high mark the producer is asked to pause reading. */
#define WRITER_HIGH_BYTES	(32u * 1024 * 1024)
#define WRITER_HIGH_ITEMS	65536
/* Reading resumes under half of both. */
#define WRITER_LOW_BYTES	(WRITER_HIGH_BYTES / 2)
#define WRITER_LOW_ITEMS	(WRITER_HIGH_ITEMS / 2)
/*
 * And past this age of the oldest item not yet committed: so that a kill
 * of mcpreel loses at most the last ~WRITER_MAX_LAG_MS (plus one commit)
 * of traffic, however fast it comes (docs/reliability.md).  Reading
 * resumes once the queue's oldest item is under half of it.
 */
#define WRITER_MAX_LAG_MS	10
#define WRITER_MAX_LAG_NS	((int64_t)WRITER_MAX_LAG_MS * 1000000)

enum item_type {
	ITEM_SESSION_BEGIN,
	ITEM_MESSAGE,
	ITEM_EVENT,
	ITEM_SESSION_END,
	ITEM_EXCHANGE_BEGIN,
	ITEM_EXCHANGE_RESPONSE,
	ITEM_EXCHANGE_END
};

struct item {
	enum item_type	 type;
	struct wsession	*session;
	struct wexchange *x;		/* ITEM_MESSAGE, ITEM_EXCHANGE_* */
	struct msg	*msg;		/* ITEM_MESSAGE; ITEM_EVENT text;
					   ITEM_EXCHANGE_END body */
	char		*kind;		/* ITEM_EVENT */
	int		 exit_status;	/* ITEM_SESSION_END; -1 for none;
					   ITEM_EXCHANGE_RESPONSE status */
	int		 exit_signal;
	char		*reason;	/* ITEM_SESSION_END, EXCHANGE_END */
	struct wexchange_info info;	/* ITEM_EXCHANGE_BEGIN, RESPONSE; its
					   ts_ns: when a session or exchange
					   ended (ITEM_*_END) */
	size_t		 bytes;		/* what it counts against the queue */
	int64_t		 queued_ns;	/* monotonic, when it was queued */
	struct item	*next;
};

/*
 * An HTTP exchange being recorded: the producer gets it from
 * writer_exchange_begin() and hands it back with writer_exchange_end(),
 * after which the writer frees it.
 */
struct wexchange {
	int64_t		 id;		/* its row, once written */
};

/*
 * A recording session.  The producer creates it with writer_session_begin()
 * and frees it with writer_session_free() after writer_stop(); in between
 * only the writer thread touches its fields.
 */
struct wsession {
	int64_t		 id;
	char		*name;
	char		*transport;
	char		*target;
	int64_t		 started_ns;
	int64_t		 seq;
	uint64_t	 lost;
	uint64_t	 uncommitted;	/* rows of the open transaction */
	struct idmap	*pending;	/* requests awaiting a response */
	struct wsession	*all_next;	/* w->all: every session begun */
	struct wsession	*touched_next;	/* w->touched, while uncommitted */
	struct wsession_meta *imp;	/* a session recorded elsewhere */
};

struct writer {
	struct store	*st;
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;

	/* Under lock. */
	struct item	*head;
	struct item	*tail;
	size_t		 items;
	size_t		 bytes;
	int		 idle;		/* the writer waits without a timer */
	int		 paused;	/* the producer was told to pause */
	int		 stopping;
	uint64_t	 enqueued;	/* items ever queued */
	int64_t		 batch_ns;	/* queued_ns of the oldest item being
					   written, 0 between batches */
	int		 locked_out;	/* waiting on another process's lock:
					   no pause for WRITER_MAX_LAG_MS */
	uint64_t	 committed;	/* of those, written (or given up) */
	int		 syncing;	/* a producer waits in writer_sync */
	pthread_cond_t	 synced;

	void		(*drain_cb)(void *);
	void		*drain_arg;

	/* Writer thread only. */
	sqlite3_stmt	*ins_session;
	sqlite3_stmt	*ins_message;
	sqlite3_stmt	*ins_event;
	sqlite3_stmt	*end_session;
	sqlite3_stmt	*upd_broken;
	sqlite3_stmt	*ins_exchange;
	sqlite3_stmt	*upd_exchange_resp;
	sqlite3_stmt	*upd_exchange_end;
	int		 failing;	/* the last write failed */
	int64_t		 busy_since;	/* when the lock wait began */
	int		 last_rc;	/* its SQLite result code */
	char		 last_err[256];	/* and its message */
	char		*broken;	/* why recording stopped for good */
	struct wsession	*all;		/* sessions begun, newest first */
	struct wsession	*touched;	/* with rows in the open transaction */
	int		 wal_pages;	/* in the WAL after the last commit */
	int		 ckpt_quiet;	/* WRITER_CKPT_* in pages */
	int		 ckpt_busy;
};

static void	*writer_main(void *);

/* After each commit: how big the WAL is (writer thread). */
static int
writer_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct writer	*w = arg;

	w->wal_pages = pages;
	return SQLITE_OK;
}

/* The database's page size in bytes (4096 if it cannot be read). */
static int
writer_page_size(struct store *st)
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
static void
writer_checkpoint(struct writer *w)
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

static void
writer_finalize(struct writer *w)
{
	sqlite3_finalize(w->ins_session);
	sqlite3_finalize(w->ins_message);
	sqlite3_finalize(w->ins_event);
	sqlite3_finalize(w->end_session);
	sqlite3_finalize(w->upd_broken);
	sqlite3_finalize(w->ins_exchange);
	sqlite3_finalize(w->upd_exchange_resp);
	sqlite3_finalize(w->upd_exchange_end);
}

static int
writer_prepare(struct writer *w, sqlite3_stmt **stmt, const char *sql,
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
 * SQLite's busy handler on the writer's connection: another process holds
 * the lock.  Wait for it up to STORE_BUSY_TIMEOUT_MS as busy_timeout would,
 * and meanwhile let the queue grow past WRITER_MAX_LAG_MS: forwarding goes
 * on while we wait, up to the queue's byte and item bounds.
 */
static int
writer_busy_cb(void *arg, int count)
{
	struct writer	*w = arg;
	int64_t		 now = clock_mono_ns();

	if (count == 0) {
		w->busy_since = now;
		pthread_mutex_lock(&w->lock);
		w->locked_out = 1;
		pthread_mutex_unlock(&w->lock);
	}
	if (now - w->busy_since >= (int64_t)STORE_BUSY_TIMEOUT_MS * 1000000)
		return 0;
	usleep(count < 20 ? 1000 : 10000);
	return 1;
}

/* The lock wait (if any) is over. */
static void
writer_unblocked(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->locked_out = 0;
	pthread_mutex_unlock(&w->lock);
}

/*
 * Take the write lock once before recording starts: a database another
 * process holds locked is waited for (STORE_BUSY_TIMEOUT_MS), then
 * reported, before a server is started whose traffic could not be kept.
 */
static int
writer_lock_check(struct store *st, char **cause)
{
	int	rc;

	rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return store_exec(st, "COMMIT", cause);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		xasprintf(cause, "database %s is locked by another process "
		    "(waited %d s); try again when it is done, or record into "
		    "another file with --db", st->path,
		    STORE_BUSY_TIMEOUT_MS / 1000);
	else
		xasprintf(cause, "cannot write to database %s: %s", st->path,
		    sqlite3_errmsg(st->db));
	return -1;
}

/*
 * Start the writer thread; from here on it owns st, and writer_stop()
 * closes it.
 */
struct writer *
writer_start(struct store *st, char **cause)
{
	struct writer	*w = xcalloc(1, sizeof *w);
	int		 page;

	w->st = st;
	sqlite3_wal_autocheckpoint(st->db, 0);
	/*
	 * Every reference the writer stores is to a row it wrote itself
	 * (its session, the request a response answers, the exchange a
	 * message came in): checking each one costs ~8% of the rows per
	 * second.  Other connections (deleting sessions) keep the checks.
	 */
	if (store_exec(st, "PRAGMA foreign_keys = OFF", cause) != 0)
		goto fail;
	if (writer_lock_check(st, cause) != 0)
		goto fail;
	page = writer_page_size(st);
	w->ckpt_quiet = WRITER_CKPT_QUIET / page;
	w->ckpt_busy = WRITER_CKPT_BUSY / page;
	sqlite3_wal_hook(st->db, writer_wal_hook, w);
	if (writer_prepare(w, &w->ins_session, "INSERT INTO sessions (name, "
	    "transport, target, started_ns, recorder_pid, mcpreel_version, "
	    "imported_from, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    writer_prepare(w, &w->ins_message, "INSERT INTO messages "
	    "(session_id, seq, direction, ts_ns, mono_ns, kind, method, "
	    "rpc_id, reply_to, size, raw, http_exchange_id, sse_event_id, "
	    "wire_size, sha256, truncated, redacted) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    writer_prepare(w, &w->ins_event, "INSERT INTO events (session_id,"
	    " ts_ns, mono_ns, kind, text) VALUES (?, ?, ?, ?, ?)",
	    cause) != 0 ||
	    writer_prepare(w, &w->end_session, "UPDATE sessions SET ended_ns "
	    "= ?, exit_status = ?, exit_signal = ?, end_reason = ?, "
	    "messages_lost = ?, store_error = coalesce(?, store_error) "
	    "WHERE id = ?", cause) != 0 ||
	    writer_prepare(w, &w->upd_broken, "UPDATE sessions SET "
	    "messages_lost = ?, store_error = ? WHERE id = ?", cause) != 0 ||
	    writer_prepare(w, &w->ins_exchange, "INSERT INTO http_exchanges "
	    "(session_id, connection, method, path, request_headers, "
	    "started_ns, mono_ns) VALUES (?, ?, ?, ?, ?, ?, ?)", cause) != 0 ||
	    writer_prepare(w, &w->upd_exchange_resp, "UPDATE http_exchanges "
	    "SET status = ?, response_headers = ?, response_mono_ns = ? "
	    "WHERE id = ?", cause) != 0 ||
	    writer_prepare(w, &w->upd_exchange_end, "UPDATE http_exchanges "
	    "SET ended_ns = ?, outcome = ?, body = ? WHERE id = ?",
	    cause) != 0)
		goto fail;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->synced, NULL);
	sqlite3_busy_handler(st->db, writer_busy_cb, w);
	store_reserve(st);
	if ((errno = pthread_create(&w->thread, NULL, writer_main, w)) != 0) {
		xasprintf(cause, "cannot start the writer thread: %s",
		    strerror(errno));
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		pthread_cond_destroy(&w->synced);
		goto fail;
	}
	return w;
fail:
	writer_finalize(w);
	store_release(st);
	free(w);
	return NULL;
}

/*
 * Set what the writer thread calls when the queue drained after the
 * producer was told to pause.  The callback runs on the writer thread with
 * the queue locked: it must only hand the news on (event_active), never
 * queue anything itself.
 */
void
writer_set_drain_cb(struct writer *w, void (*cb)(void *), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->drain_cb = cb;
	w->drain_arg = arg;
	pthread_mutex_unlock(&w->lock);
}

/* Queue an item; returns 1 when the producer should pause reading. */
static int
writer_enqueue(struct writer *w, struct item *it, size_t bytes)
{
	int	wake, pause;
	int64_t	oldest;

	it->next = NULL;
	it->bytes = bytes;
	it->queued_ns = clock_mono_ns();
	pthread_mutex_lock(&w->lock);
	oldest = (w->batch_ns != 0) ? w->batch_ns : (w->head != NULL ?
	    w->head->queued_ns : it->queued_ns);
	if (w->tail != NULL)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	w->items++;
	w->bytes += bytes;
	w->enqueued++;
	wake = w->idle || w->items == WRITER_BATCH ||
	    it->type != ITEM_MESSAGE;
	/*
	 * What was queued before this item decides: one huge message does
	 * not stop forwarding while it is written (the answer to it can go
	 * through meanwhile), and the queue stays under the high mark plus
	 * the newest message.
	 */
	pause = w->items >= WRITER_HIGH_ITEMS ||
	    w->bytes - bytes >= WRITER_HIGH_BYTES ||
	    (it->queued_ns - oldest > WRITER_MAX_LAG_NS && !w->locked_out);
	if (pause)
		w->paused = 1;
	if (wake) {
		w->idle = 0;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return pause;
}

/*
 * Wait until everything queued so far is committed (or given up: recording
 * stopped).  For --durable, where a message is forwarded only once it is
 * on disk.
 */
void
writer_sync(struct writer *w)
{
	uint64_t	target;

	pthread_mutex_lock(&w->lock);
	target = w->enqueued;
	w->syncing = 1;
	w->idle = 0;
	pthread_cond_signal(&w->cond);
	while (w->committed < target)
		pthread_cond_wait(&w->synced, &w->lock);
	w->syncing = 0;
	pthread_mutex_unlock(&w->lock);
}

static char *
xstrdup_or_null(const char *s)
{
	return (s != NULL) ? xstrdup(s) : NULL;
}

/* Begin a recording session; its row is written in queue order. */
struct wsession *
writer_session_begin(struct writer *w, const char *name,
    const char *transport, const char *target)
{
	return writer_session_import(w, name, transport, target, NULL);
}

/*
 * Begin a session recorded elsewhere (mcpreel import) when meta is not
 * NULL: its row takes the start, recorder and origin from meta, and says
 * WRITER_IMPORTING as its end until writer_session_end_at() writes its
 * end.  A row left so is an import that did not finish.
 */
struct wsession *
writer_session_import(struct writer *w, const char *name,
    const char *transport, const char *target,
    const struct wsession_meta *meta)
{
	struct wsession	*s = xcalloc(1, sizeof *s);
	struct item	*it = xcalloc(1, sizeof *it);

	s->name = xstrdup_or_null(name);
	s->transport = xstrdup(transport);
	s->target = xstrdup(target);
	s->started_ns = clock_wall_ns();
	s->pending = idmap_new();
	if (meta != NULL) {
		s->imp = xmalloc(sizeof *s->imp);
		*s->imp = *meta;
		s->imp->version = xstrdup_or_null(meta->version);
		s->imp->imported_from = xstrdup_or_null(meta->imported_from);
		s->imp->store_error = xstrdup_or_null(meta->store_error);
		s->started_ns = meta->started_ns;
	}
	it->type = ITEM_SESSION_BEGIN;
	it->session = s;
	writer_enqueue(w, it, 0);
	return s;
}

/*
 * Record a message (the writer takes it), part of HTTP exchange x when not
 * NULL.  Returns 1 when the queue is over its high mark: the caller should
 * stop reading until the drain callback.
 */
int
writer_message(struct writer *w, struct wsession *s, struct wexchange *x,
    struct msg *m)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_MESSAGE;
	it->session = s;
	it->x = x;
	it->msg = m;
	return writer_enqueue(w, it, m->len + sizeof *it + sizeof *m);
}

/* Begin recording an HTTP exchange of session s (its request side). */
struct wexchange *
writer_exchange_begin(struct writer *w, struct wsession *s,
    const struct wexchange_info *info)
{
	struct item	*it = xcalloc(1, sizeof *it);
	struct wexchange *x = xcalloc(1, sizeof *x);

	it->type = ITEM_EXCHANGE_BEGIN;
	it->session = s;
	it->x = x;
	it->info = *info;
	it->info.method = xstrdup_or_null(info->method);
	it->info.path = xstrdup_or_null(info->path);
	it->info.headers = xstrdup_or_null(info->headers);
	writer_enqueue(w, it, sizeof *it);
	return x;
}

/* The response head of an exchange arrived: status and headers. */
void
writer_exchange_response(struct writer *w, struct wexchange *x, int status,
    const struct wexchange_info *info)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_RESPONSE;
	it->x = x;
	it->exit_status = status;
	it->info = *info;
	it->info.method = it->info.path = NULL;
	it->info.headers = xstrdup_or_null(info->headers);
	writer_enqueue(w, it, sizeof *it);
}

/*
 * An exchange ended; outcome says how, body is a response body kept for
 * people (an error page), or NULL.  x is the writer's from here on.
 */
void
writer_exchange_end(struct writer *w, struct wexchange *x,
    const char *outcome, const void *body, size_t len)
{
	writer_exchange_end_at(w, x, clock_wall_ns(), outcome, body, len);
}

/*
 * writer_exchange_end() at a given time (ns since the epoch), or with no
 * end time when ended_ns is WRITER_NO_TIME: for an imported exchange.
 */
void
writer_exchange_end_at(struct writer *w, struct wexchange *x,
    int64_t ended_ns, const char *outcome, const void *body, size_t len)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_END;
	it->x = x;
	it->info.ts_ns = ended_ns;
	it->reason = xstrdup_or_null(outcome);
	if (body != NULL)
		it->msg = msg_new(DIR_S2C, body, len);
	writer_enqueue(w, it, sizeof *it + len);
}

/* Record an event of kind ("stderr", "exit", ...) with text. */
void
writer_event(struct writer *w, struct wsession *s, const char *kind,
    const void *text, size_t len)
{
	writer_event_msg(w, s, kind, msg_new(DIR_S2C, text, len));
}

/*
 * Record an event whose text and times are those of m (the writer takes
 * it): for an event that happened elsewhere (an import).
 */
void
writer_event_msg(struct writer *w, struct wsession *s, const char *kind,
    struct msg *m)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EVENT;
	it->session = s;
	it->kind = xstrdup(kind);
	it->msg = m;
	writer_enqueue(w, it, m->len + sizeof *it);
}

/* End a session now: exit_status -1 when there is none to record. */
void
writer_session_end(struct writer *w, struct wsession *s, int exit_status,
    int exit_signal, const char *reason)
{
	writer_session_end_at(w, s, clock_wall_ns(), exit_status, exit_signal,
	    reason);
}

/*
 * End a session at ended_ns (ns since the epoch), or with no end time
 * when it is WRITER_NO_TIME: for an imported session.
 */
void
writer_session_end_at(struct writer *w, struct wsession *s,
    int64_t ended_ns, int exit_status, int exit_signal, const char *reason)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_SESSION_END;
	it->session = s;
	it->info.ts_ns = ended_ns;
	it->exit_status = exit_status;
	it->exit_signal = exit_signal;
	it->reason = (reason != NULL) ? xstrdup(reason) : NULL;
	writer_enqueue(w, it, 0);
}

/* The session's row id; valid after writer_stop(). */
int64_t
writer_session_id(const struct wsession *s)
{
	return s->id;
}

/* Messages forwarded but not recorded; valid after writer_stop(). */
uint64_t
writer_session_lost(const struct wsession *s)
{
	return s->lost;
}

static void
item_free(struct item *it)
{
	msg_free(it->msg);
	free(it->kind);
	free(it->reason);
	free(it->info.method);
	free(it->info.path);
	free(it->info.headers);
	free(it);
}

/*
 * Note a failed write.  Trouble with the file itself (a full disk, a file
 * made read-only, an I/O error) stops recording for the rest of the run:
 * writer_batch() rolls back and writer_broken() says so.  Anything else
 * (another process holding the lock too long, a row SQLite refuses) costs
 * what failed, warned once per run of failures.
 */
static void
writer_failed(struct writer *w, const char *what)
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

/* Keep what a failed call said, for writer_failed(). */
static void
writer_error(struct writer *w, int rc)
{
	w->last_rc = rc;
	snprintf(w->last_err, sizeof w->last_err, "%s",
	    sqlite3_errmsg(w->st->db));
}

static int
writer_step(struct writer *w, sqlite3_stmt *stmt)
{
	int	rc = sqlite3_step(stmt);

	if (rc != SQLITE_DONE)
		writer_error(w, rc);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return (rc == SQLITE_DONE) ? 0 : -1;
}

static int
writer_exec(struct writer *w, const char *sql)
{
	int	rc = sqlite3_exec(w->st->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		writer_error(w, rc);
	return (rc == SQLITE_OK) ? 0 : -1;
}

/* The open transaction committed: its rows are kept. */
static void
writer_committed(struct writer *w)
{
	struct wsession	*s;

	for (s = w->touched; s != NULL; s = s->touched_next)
		s->uncommitted = 0;
	w->touched = NULL;
}

/* The open transaction is lost: count its messages as not recorded. */
static void
writer_rollback(struct writer *w)
{
	struct wsession	*s;

	if (!sqlite3_get_autocommit(w->st->db))
		sqlite3_exec(w->st->db, "ROLLBACK", NULL, NULL, NULL);
	for (s = w->touched; s != NULL; s = s->touched_next) {
		s->lost += s->uncommitted;
		s->uncommitted = 0;
	}
	w->touched = NULL;
}

/*
 * Recording just stopped for good: say so once, and try to note it in
 * every session's row (on a full disk this small update usually fits in
 * the room the rolled-back transaction took).
 */
static void
writer_broken(struct writer *w)
{
	struct wsession	*s;
	sqlite3_stmt	*st = w->upd_broken;

	log_warnx("recording stopped: %s; forwarding goes on, and the "
	    "messages not recorded are counted", w->broken);
	if ((w->last_rc & 0xff) == SQLITE_FULL)
		store_release(w->st);
	for (s = w->all; s != NULL; s = s->all_next) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)s->lost);
		sqlite3_bind_text(st, 2, w->broken, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, s->id);
		sqlite3_step(st);
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
}

static void
writer_do_begin(struct writer *w, struct wsession *s)
{
	sqlite3_stmt	*st = w->ins_session;

	if (s->name != NULL)
		sqlite3_bind_text(st, 1, s->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, s->transport, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->target, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, s->started_ns);
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
	}
	if (writer_step(w, st) != 0) {
		writer_failed(w, "a session");
		return;
	}
	s->id = sqlite3_last_insert_rowid(w->st->db);
	s->all_next = w->all;
	w->all = s;
}

/*
 * Build the pending-request key: the request's direction, then its id
 * text.  A response travelling the other way looks up the same key.
 */
static size_t
writer_key(char *key, size_t keysz, enum dir d, const char *id, size_t len)
{
	if (len + 1 > keysz)
		return 0;
	key[0] = (char)('0' + d);
	memcpy(key + 1, id, len);
	return len + 1;
}

/* Write a huge message's bytes into the row just inserted for it. */
static int
writer_blob_write(struct writer *w, const struct msg *m)
{
	sqlite3_blob	*b = NULL;
	size_t		 off, n;
	char		*sql;
	int		 rc;

	rc = sqlite3_blob_open(w->st->db, "main", "messages", "raw",
	    sqlite3_last_insert_rowid(w->st->db), 1, &b);
	for (off = 0; rc == SQLITE_OK && off < m->len; off += n) {
		n = m->len - off;
		if (n > WRITER_BLOB_PIECES)
			n = WRITER_BLOB_PIECES;
		rc = sqlite3_blob_write(b, m->raw + off, (int)n, (int)off);
	}
	if (sqlite3_blob_close(b) != SQLITE_OK && rc == SQLITE_OK)
		rc = SQLITE_ERROR;
	if (rc == SQLITE_OK)
		return 0;
	writer_error(w, rc);
	/* No row of zeros stands for the message: it is counted lost. */
	xasprintf(&sql, "DELETE FROM messages WHERE id = %lld",
	    (long long)sqlite3_last_insert_rowid(w->st->db));
	sqlite3_exec(w->st->db, sql, NULL, NULL, NULL);
	free(sql);
	return -1;
}

static void
writer_do_message(struct writer *w, struct wsession *s, struct wexchange *x,
    struct msg *m)
{
	sqlite3_stmt	*st = w->ins_message;
	struct scan	 sc;
	const char	*mtext = NULL;
	char		*mown = NULL, key[256], mbuf[128];
	int64_t		 reply_to = 0;
	size_t		 klen = 0;
	int		 mlen = -1;

	s->seq++;
	scan_message(m->raw, m->len, &sc);
	if (sc.has_id)
		klen = writer_key(key, sizeof key, sc.kind == KIND_REQUEST ?
		    m->dir : !m->dir, m->raw + sc.id_off, sc.id_len);
	if (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) {
		if (klen != 0 &&
		    idmap_take(s->pending, key, klen, &reply_to, &mown) != 0)
			reply_to = 0;
		mtext = mown;
	} else if (sc.has_method && sc.method_escaped)
		mtext = mown = scan_method_dup(m->raw, &sc);
	else if (sc.has_method) {
		/* The common case: the method as written, no copy. */
		mtext = m->raw + sc.method_off;
		mlen = (int)sc.method_len;
	}

	if (s->id == 0) {
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
		sqlite3_bind_text(st, 8, m->raw + sc.id_off, (int)sc.id_len,
		    SQLITE_STATIC);
	if (reply_to != 0)
		sqlite3_bind_int64(st, 9, reply_to);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)m->len);
	if (m->len >= WRITER_BLOB_PIECES)
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
	if (writer_step(w, st) != 0 || (m->len >= WRITER_BLOB_PIECES &&
	    writer_blob_write(w, m) != 0)) {
		s->lost++;
		writer_failed(w, "a message");
	} else {
		w->failing = 0;
		if (s->uncommitted++ == 0) {
			s->touched_next = w->touched;
			w->touched = s;
		}
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
		}
	}
	free(mown);
}

static void
writer_do_event(struct writer *w, struct wsession *s, const char *kind,
    struct msg *m)
{
	sqlite3_stmt	*st = w->ins_event;

	if (s->id == 0)
		return;
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, m->ts_ns);
	sqlite3_bind_int64(st, 3, m->mono_ns);
	sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
	sqlite3_bind_blob64(st, 5, m->raw, m->len, SQLITE_STATIC);
	if (writer_step(w, st) != 0)
		writer_failed(w, "an event");
}

static void
writer_do_end(struct writer *w, struct item *it)
{
	sqlite3_stmt	*st = w->end_session;
	struct wsession	*s = it->session;

	if (s->id == 0)
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
	if (writer_step(w, st) != 0)
		writer_failed(w, "the end of a session");
}

static void
writer_do_exchange(struct writer *w, struct item *it)
{
	struct wexchange	*x = it->x;
	sqlite3_stmt		*st;

	switch (it->type) {
	case ITEM_EXCHANGE_BEGIN:
		if (it->session->id == 0)
			return;
		st = w->ins_exchange;
		sqlite3_bind_int64(st, 1, it->session->id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)it->info.conn);
		sqlite3_bind_text(st, 3, it->info.method, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, it->info.path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, it->info.headers, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, it->info.ts_ns);
		sqlite3_bind_int64(st, 7, it->info.mono_ns);
		if (writer_step(w, st) != 0)
			writer_failed(w, "an HTTP exchange");
		else
			x->id = sqlite3_last_insert_rowid(w->st->db);
		break;
	case ITEM_EXCHANGE_RESPONSE:
		if (x->id == 0)
			return;
		st = w->upd_exchange_resp;
		sqlite3_bind_int(st, 1, it->exit_status);
		sqlite3_bind_text(st, 2, it->info.headers, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, it->info.mono_ns);
		sqlite3_bind_int64(st, 4, x->id);
		if (writer_step(w, st) != 0)
			writer_failed(w, "an HTTP response");
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
			if (writer_step(w, st) != 0)
				writer_failed(w, "the end of an HTTP "
				    "exchange");
		}
		free(x);
		break;
	default:
		break;
	}
}

/*
 * An item that cannot go into a transaction (recording stopped, or the
 * database stayed locked): a message is counted as not recorded, and a
 * session's first and last rows are still tried on their own.
 */
static void
writer_skip(struct writer *w, struct item *it)
{
	switch (it->type) {
	case ITEM_MESSAGE:
		it->session->seq++;
		it->session->lost++;
		break;
	case ITEM_SESSION_BEGIN:
		if (w->broken == NULL)
			writer_do_begin(w, it->session);
		break;
	case ITEM_SESSION_END:
		writer_do_end(w, it);
		break;
	case ITEM_EXCHANGE_END:
		free(it->x);
		break;
	default:
		break;
	}
}

/* Write one batch in one transaction, freeing its items. */
static void
writer_batch(struct writer *w, struct item *it)
{
	struct item	*next;
	int		 in_txn = 0, was_broken = (w->broken != NULL);

	/* IMMEDIATE: a lock held elsewhere is waited for here, once. */
	if (!was_broken) {
		if (writer_exec(w, "BEGIN IMMEDIATE") == 0)
			in_txn = 1;
		else
			writer_failed(w, "a batch");
		writer_unblocked(w);
	}
	for (; it != NULL; it = next) {
		next = it->next;
		if (!in_txn) {
			writer_skip(w, it);
			item_free(it);
			continue;
		}
		switch (it->type) {
		case ITEM_SESSION_BEGIN:
			writer_do_begin(w, it->session);
			break;
		case ITEM_MESSAGE:
			writer_do_message(w, it->session, it->x, it->msg);
			break;
		case ITEM_EXCHANGE_BEGIN:
		case ITEM_EXCHANGE_RESPONSE:
		case ITEM_EXCHANGE_END:
			writer_do_exchange(w, it);
			break;
		case ITEM_EVENT:
			writer_do_event(w, it->session, it->kind, it->msg);
			break;
		case ITEM_SESSION_END:
			writer_do_end(w, it);
			break;
		}
		item_free(it);
		if (w->broken != NULL) {
			writer_rollback(w);
			in_txn = 0;
		}
	}
	if (in_txn) {
		if (writer_exec(w, "COMMIT") == 0)
			writer_committed(w);
		else {
			writer_failed(w, "a batch");
			writer_rollback(w);
		}
	}
	if (!was_broken && w->broken != NULL)
		writer_broken(w);
}

static void
writer_deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void *
writer_main(void *arg)
{
	struct writer	*w = arg;
	struct item	*batch, *it;
	struct timespec	 ts;
	size_t		 bytes, items;
	int		 stop, drained, quiet;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		/*
		 * Between messages, keep ticking for a while: going idle
		 * would make the producer signal (a thread wake-up) for
		 * every message of request/response ping-pong.
		 */
		for (quiet = 0; w->items == 0 && !w->stopping; quiet++) {
			if (w->wal_pages >= w->ckpt_quiet) {
				pthread_mutex_unlock(&w->lock);
				writer_checkpoint(w);
				pthread_mutex_lock(&w->lock);
				continue;
			}
			if (quiet < WRITER_IDLE_TICKS) {
				writer_deadline(&ts, WRITER_TICK_MS);
				pthread_cond_timedwait(&w->cond, &w->lock,
				    &ts);
				continue;
			}
			w->idle = 1;
			pthread_cond_wait(&w->cond, &w->lock);
		}
		if (w->items < WRITER_BATCH && !w->stopping && !w->syncing) {
			writer_deadline(&ts, WRITER_TICK_MS);
			pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		}
		w->idle = 0;
		batch = w->head;
		items = w->items;
		w->head = w->tail = NULL;
		w->batch_ns = (batch != NULL) ? batch->queued_ns : 0;
		stop = w->stopping && batch == NULL;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			break;

		bytes = 0;
		for (it = batch; it != NULL; it = it->next)
			bytes += it->bytes;
		writer_batch(w, batch);
		if (w->wal_pages >= w->ckpt_busy)
			writer_checkpoint(w);

		pthread_mutex_lock(&w->lock);
		w->items -= items;
		w->bytes -= bytes;
		w->committed += items;
		w->batch_ns = 0;
		if (w->syncing)
			pthread_cond_broadcast(&w->synced);
		drained = w->paused && w->items < WRITER_LOW_ITEMS &&
		    w->bytes < WRITER_LOW_BYTES && (w->head == NULL ||
		    clock_mono_ns() - w->head->queued_ns <
		    WRITER_MAX_LAG_NS / 2);
		if (drained) {
			w->paused = 0;
			/* Under the lock, so a cleared callback stays so. */
			if (w->drain_cb != NULL)
				w->drain_cb(w->drain_arg);
		}
	}
	return NULL;
}

/* Write everything queued, stop the thread, close the store. */
void
writer_stop(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);

	writer_finalize(w);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_cond_destroy(&w->synced);
	store_release(w->st);
	store_close(w->st);
	free(w->broken);
	free(w);
}

/* Free a session once the writer that recorded it has stopped. */
void
writer_session_free(struct wsession *s)
{
	if (s == NULL)
		return;
	idmap_free(s->pending);
	if (s->imp != NULL) {
		free((char *)s->imp->version);
		free((char *)s->imp->imported_from);
		free((char *)s->imp->store_error);
		free(s->imp);
	}
	free(s->name);
	free(s->transport);
	free(s->target);
	free(s);
}
