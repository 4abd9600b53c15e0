/* Internals shared by the files of store/; nothing outside includes it. */
#ifndef MCPREEL_STORE_INT_H
#define MCPREEL_STORE_INT_H

#include <pthread.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

struct store {
	sqlite3	*db;
	char	*path;
	int	 reserved;	/* store_reserve() made this process's */
};

/* writer.c: the queue's items, the sessions and the writer itself. */
enum item_type {
	ITEM_SESSION_BEGIN,
	ITEM_MESSAGE,
	ITEM_EVENT,
	ITEM_SESSION_END,
	ITEM_EXCHANGE_BEGIN,
	ITEM_EXCHANGE_RESPONSE,
	ITEM_EXCHANGE_TRAILERS,
	ITEM_EXCHANGE_END,
	ITEM_FAULT,
	ITEM_EXCHANGE_FAULT,
	ITEM_SESSION_OTLP,
	ITEM_SESSION_CLIENT,
	ITEM_SESSION_TRANSPORT,
	ITEM_SESSION_FREE,
	ITEM_TYPE_MAX
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
					   ended (ITEM_*_END); TRAILERS: the
					   request's in path, the response's
					   in headers */
	struct wfault	*fault;		/* ITEM_FAULT: a copy, its strings
					   owned; ITEM_EXCHANGE_FAULT: only
					   its n */
	struct writer_ids *ids;		/* ITEM_SESSION_FREE: where its row
					   id goes, or NULL */
	int64_t		 count;		/* ITEM_SESSION_OTLP: spans dropped;
					   ITEM_SESSION_CLIENT: the port (its
					   address in reason) */
	size_t		 bytes;		/* what it counts against the queue */
	int64_t		 queued_ns;	/* monotonic, when it was queued */
	struct scan	 sc;		/* ITEM_MESSAGE: its class, when */
	int		 scanned;	/* the producer scanned it */
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
 * and frees it with writer_session_free() after writer_stop(), or hands
 * it back earlier with writer_session_release() (the writer thread frees
 * it then); in between only the writer thread touches its fields.
 */
/*
 * The most requests a session remembers as awaiting a response (how a
 * response finds its request's row and method).  A peer that never
 * answers would otherwise grow the map without end; past the bound the
 * oldest half is forgotten, and their late answers are recorded unpaired
 * (reply_to and method NULL), which a real session, with a few hundred
 * requests in flight at most, never meets.
 */
#define WRITER_PENDING_MAX	65536
/*
 * And at most this many bytes of their ids and methods: a method has no
 * length of its own, so a count alone would not bound them.
 */
#define WRITER_PENDING_BYTES	(16 * 1024 * 1024)

struct wsession {
	int64_t		 id;
	char		*name;
	char		*transport;
	char		*target;
	int64_t		 started_ns;
	int64_t		 seq;
	uint64_t	 lost;
	uint64_t	 uncommitted;	/* rows of the open transaction */
	uint64_t	 faults_lost;	/* faults rows not written */
	uint64_t	 faults_uncommitted; /* in the open transaction */
	struct idmap	*pending;	/* requests awaiting a response, at
					   most WRITER_PENDING_MAX */
	uint64_t	 forgotten;	/* of them, dropped as the oldest */
	struct wsession	*all_next;	/* w->all: every session begun */
	struct wsession	**all_prevp;	/* what points at it there, or NULL
					   while its row is not written */
	struct wsession	*touched_next;	/* w->touched, while uncommitted */
	struct wsession_meta *imp;	/* a session recorded elsewhere */
	const char	*origin;	/* ORIGIN_*: what made it (static) */
	void		*tag;		/* writer_session_set_tag(): the
					   producer's, never the writer's */
	int64_t		 faults;	/* fault numbers handed out by
					   writer_session_next_fault(): the
					   producer's, not the writer's */
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
	int64_t		 hold_since;	/* the WAL reached WRITER_CKPT_BUSY:
					   the producer pauses until the
					   writer copied it (writer_hold_end) */
	uint64_t	 committed;	/* of those, written (or given up) */
	int64_t		 item_ns;	/* the writer's pace in recent batches
					   (writer_pace), 0 before the first: */
	int64_t		 kib_ns;	/* per item and per KiB queued */
	int		 syncing;	/* a producer waits in writer_sync */
	struct item	*spare;		/* message items to reuse */
	size_t		 nspare;
	pthread_cond_t	 synced;

	void		(*drain_cb)(void *);
	void		*drain_arg;

	/* Writer thread only. */
	sqlite3_stmt	*ins_session;
	sqlite3_stmt	*ins_message;
	sqlite3_stmt	*ins_event;
	sqlite3_stmt	*end_session;
	sqlite3_stmt	*upd_broken;
	sqlite3_stmt	*upd_session_start;
	sqlite3_stmt	*ins_exchange;
	sqlite3_stmt	*upd_exchange_resp;
	sqlite3_stmt	*upd_exchange_end;
	sqlite3_stmt	*upd_exchange_trailers;
	sqlite3_stmt	*ins_fault;
	sqlite3_stmt	*upd_exchange_fault;
	sqlite3_stmt	*upd_otlp;
	sqlite3_stmt	*upd_client;
	sqlite3_stmt	*upd_transport;
	int		 failing;	/* the last write failed */
	int64_t		 busy_since;	/* when the lock wait began */
	int		 waited;	/* the batch waited for that lock */
	int64_t		 pace_ns;	/* recent batches' time, items and */
	int64_t		 pace_items;	/* bytes (writer_pace) */
	int64_t		 pace_bytes;
	int		 last_rc;	/* its SQLite result code */
	char		 last_err[256];	/* and its message */
	char		*broken;	/* why recording stopped for good */
	struct wsession	*all;		/* sessions begun and not released,
					   newest first */
	struct wsession	*touched;	/* with rows in the open transaction */
	int		 wal_pages;	/* in the WAL after the last commit */
	int		 ckpt_quiet;	/* WRITER_CKPT_* in pages */
	int		 ckpt_empty;
	int		 ckpt_busy;
	struct ckpt	*ckpt;		/* the checkpoint thread, once asked */
	int		 ckpt_inline;	/* it could not start: checkpoint here */
	int		 ckpt_tries;	/* times it could not start */
	int64_t		 cpu_ns;	/* the thread's CPU time when it ended */
};

/* writer.c: the queue */
int		 writer_enqueue(struct writer *, struct item *, size_t);
char		*writer_strdup(const char *);
void		 writer_unblocked(struct writer *);

/* batch.c (writer thread only, but batch_lock_check before it starts) */
int		 batch_lock_check(struct store *, char **);
struct item	*batch_write(struct writer *, struct item *, int64_t *);

/*
 * ckpt.c: the checkpoint thread, its own connection to the database
 * (started and asked by the writer thread).
 */
struct ckpt	*ckpt_start(const char *, char **);
void		 ckpt_ask(struct ckpt *);
void		 ckpt_off(struct ckpt *);
void		 ckpt_stop(struct ckpt *);

/* rows.c (writer thread only) */
int		 rows_init(struct writer *, char **);
void		 rows_finalize(struct writer *);
void		 rows_checkpoint(struct writer *);
int		 rows_exec(struct writer *, const char *);
void		 rows_failed(struct writer *, const char *);
void		 rows_committed(struct writer *);
void		 rows_rollback(struct writer *);
void		 rows_broken(struct writer *);
void		 rows_begin(struct writer *, struct wsession *);
void		 rows_release(struct writer *, struct item *);

void		 rows_message(struct writer *, struct wsession *,
		     struct wexchange *, struct msg *, const struct scan *);
void		 rows_event(struct writer *, struct wsession *, const char *,
		     struct msg *);
void		 rows_end(struct writer *, struct item *);
void		 rows_otlp(struct writer *, struct item *);
void		 rows_exchange(struct writer *, struct item *);
void		 rows_fault(struct writer *, struct wsession *,
		     const struct wfault *);

/*
 * faults.c: what the queries of faults share.  FAULTS_TEXT is a faults
 * row as one sentence, an event's text; FAULTS_KEPT(m) holds for a
 * message QUERY_UNFAULTED keeps: what travelled between mcpreel and the
 * server (untouched, delayed, a c2s injected copy the server got, a s2c
 * original the server sent), never what did not (a c2s original the
 * server never got as is, a s2c injected message it never sent).
 * FAULTS_TOUCHED(m) holds for a fault's original or injected message.
 */
#define FAULTS_TEXT							\
	"printf('fault #%d, rule %d `%s`: %s', n, rule_index, rule, "	\
	"coalesce(detail, action || coalesce(' ' || method, '') || "	\
	"coalesce(' ' || rpc_id, '')))"
#define FAULTS_KEPT(m)							\
	"(" m "fault_role IS NULL OR " m "fault_role = 'delayed' OR "	\
	"(" m "fault_role = 'injected' AND " m "direction = 'c2s') OR "	\
	"(" m "fault_role = 'original' AND " m "direction = 's2c'))"
#define FAULTS_TOUCHED(m)						\
	"(coalesce(" m "fault_role, '') IN ('original', 'injected'))"
/*
 * A session's (?1) events and faults rows in time order, a fault before
 * an event of its time (the ids of two tables do not compare): ts_ns,
 * mono_ns, kind, text, id, then FAULTS_COLUMNS from column 5 (NULL for an
 * event).
 */
#define FAULTS_FIELDS	"n, rule_index, rule, action, direction, method, "	\
	"rpc_id, detail"
#define FAULTS_COLUMNS	"1, " FAULTS_FIELDS
#define FAULTS_EVENTS_SQL						\
	"SELECT ts_ns, mono_ns, kind, text, id, 0, NULL, NULL, NULL, "	\
	"NULL, NULL, NULL, NULL, NULL FROM events WHERE session_id = ?1 "	\
	"UNION ALL SELECT ts_ns, mono_ns, 'fault', " FAULTS_TEXT ", id, "	\
	FAULTS_COLUMNS " FROM faults WHERE session_id = ?1 ORDER BY 2, 6 DESC, 5"
void		 faults_free(struct wfault *);
void		 faults_event_row(sqlite3_stmt *, struct event_row *,
		     struct fault_row *);
void		 faults_fill(sqlite3_stmt *, int, struct fault_row *);

/* query.c: what the files of queries share. */
int		 query_prepare(struct store *, const char *, sqlite3_stmt **,
		     char **);
int		 query_failed(struct store *, sqlite3_stmt *, char **);
const char	*query_column_text(sqlite3_stmt *, int);
void		 query_message_row(sqlite3_stmt *, struct timeline_row *);
/*
 * A session's message ids in the order they happened (?1 the session, ?2
 * nonzero to leave out faults' messages as QUERY_UNFAULTED does), and one
 * message by id (?1) with its request's seq and latency: query_timeline()
 * and query_stream read a session by these two.
 */
#define QUERY_ORDER_SQL							\
	"SELECT id, mono_ns FROM messages "				\
	"WHERE session_id = ?1 AND (?2 = 0 OR " FAULTS_KEPT("") ") "	\
	"ORDER BY mono_ns, seq"
#define QUERY_ONE_SQL							\
	"SELECT m.seq, m.direction, m.ts_ns, m.mono_ns, "		\
	"m.kind, m.method, m.rpc_id, m.mono_ns - q.mono_ns, q.seq, m.raw, " \
	"m.truncated, m.fault, m.fault_role FROM messages m "		\
	"LEFT JOIN messages q ON q.id = m.reply_to WHERE m.id = ?1"
const void	*query_column_blob(sqlite3_stmt *, int);
enum dir	 query_column_dir(sqlite3_stmt *, int);

#endif
