/*
 * store: the only module that includes sqlite3.h.  It opens and migrates
 * the database, runs the writer thread that records messages, and answers
 * the queries the CLI asks.
 */
#ifndef MCPREEL_STORE_H
#define MCPREEL_STORE_H

#include <stdint.h>

#include "core.h"

#define STORE_SCHEMA_VERSION 7

/* What made a session (sessions.origin). */
#define ORIGIN_RECORD	"record"	/* mcpreel record */
#define ORIGIN_IMPORT	"import"	/* mcpreel import */
#define ORIGIN_REPLAY	"replay"	/* replay's recording of its run */
#define ORIGIN_MOCK	"mock"		/* mock's forwarded fallback traffic */

/* How long any SQLite call waits on another process's lock, ms. */
#define STORE_BUSY_TIMEOUT_MS 5000

struct store;
struct writer;
struct wsession;
struct wexchange;

/* What is known of an HTTP exchange when it begins or its response comes. */
struct wexchange_info {
	uint64_t	 conn;		/* client connection number */
	char		*method;
	char		*path;
	char		*headers;	/* JSON array of [name, value] */
	int64_t		 ts_ns;
	int64_t		 mono_ns;
};

/*
 * What a session recorded elsewhere says of itself beyond its name,
 * transport and target (writer_session_import).  Strings are copied.
 */
struct wsession_meta {
	int64_t		 id;		/* the session's id; 0: the next free */
	int64_t		 started_ns;
	int64_t		 recorder_pid;	/* 0: unknown */
	const char	*version;	/* the mcpreel that recorded it, or NULL */
	const char	*imported_from;	/* the file and its format */
	const char	*store_error;	/* or NULL */
	int64_t		 lost;		/* messages it had lost */
};

/* An imported session's end_reason until its import finished. */
#define WRITER_IMPORTING	"import not finished"
/* No time, for writer_*_end_at(): the column stays NULL. */
#define WRITER_NO_TIME		INT64_MIN

/* store.c */
#define STORE_CREATE	0x1	/* create the file (mode 0600) and its dirs */
#define STORE_PRIVATE	0x2	/* a writer: files others can use set 0600 */
/*
 * A scratch store of one process (a cassette read into a temporary file,
 * removed when done): its journal in memory, no syncs, no WAL.  Nothing
 * in it needs to survive a crash, and it loads faster so.
 */
#define STORE_SCRATCH	0x4
struct store	*store_open(const char *, int, char **);
size_t		 store_max_message(struct store *);
void		 store_close(struct store *);
const char	*store_path(const struct store *);
int		 store_exec(struct store *, const char *, char **);
/* The connection itself: for bench/sqlite_floor.c, nothing else. */
struct sqlite3	*store_sqlite(struct store *);
/* The room store_reserve() keeps for the last words on a full disk. */
#define STORE_RESERVE	(512 * 1024)
/*
 * Room in a message's row for its columns other than raw (method, id,
 * digest, ...), kept below SQLite's length limit, which bounds a row too.
 */
#define STORE_ROW_MARGIN	(64 * 1024)
void		 store_reserve(struct store *);
void		 store_release(struct store *);

/* writer.c */
/*
 * How the writer inserts a message (store/rows.c binds its columns in this
 * order, raw last), how many queued items make a batch (one transaction)
 * at once, and the WAL it lets grow in a burst before a checkpoint: here
 * so that bench/sqlite_floor.c inserts the same rows the same way, with
 * nothing else around them.
 */
#define WRITER_INSERT_MESSAGE	"INSERT INTO messages (session_id, seq, "	\
	"direction, ts_ns, mono_ns, kind, method, rpc_id, reply_to, size, "	\
	"raw, http_exchange_id, sse_event_id, wire_size, sha256, truncated, "	\
	"redacted, fault, fault_role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "	\
	"?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define WRITER_BATCH		1024
/*
 * SQLite's automatic checkpoint (every 1000 WAL pages, in the committing
 * thread) is off.  Once the WAL holds WRITER_CKPT_QUIET bytes after a
 * commit, a thread of its own with its own connection (ckpt.c) copies it
 * into the database while the writer goes on committing: in the writer's
 * thread a checkpoint's copy and syncs held every commit up (ASan: 4 MiB
 * ~50 ms, 40 MiB ~280 ms, more on a slow disk), reading paused after
 * WRITER_MAX_LAG_MS meanwhile, and a kill lost what waited.  Should that
 * thread never catch up, the writer copies the rest itself at
 * WRITER_CKPT_BUSY, which bounds the WAL: its syncs stall commits, so it
 * first pauses the producer and commits what was forwarded (writer.c).
 * Where the thread cannot start, the writer checkpoints when it has had
 * nothing to do for a tick and the WAL holds WRITER_CKPT_QUIET, between
 * two batches of a burst from WRITER_CKPT_EMPTY, and at WRITER_CKPT_BUSY.
 */
#define WRITER_CKPT_QUIET	(4 * 1024 * 1024)
#define WRITER_CKPT_EMPTY	(16 * 1024 * 1024)
#define WRITER_CKPT_BUSY	(64 * 1024 * 1024)
struct writer	*writer_start(struct store *, char **);
void		 writer_set_drain_cb(struct writer *, void (*)(void *), void *);
void		 writer_sync(struct writer *);
/* How many bytes the producer may read now, at most the second argument:
   what the writer keeps up with (writer.c). */
size_t		 writer_read_max(struct writer *, size_t);
struct wsession	*writer_session_begin(struct writer *, const char *,
		     const char *, const char *);
struct wsession	*writer_session_as(struct writer *, const char *,
		     const char *, const char *, const char *);
struct wsession	*writer_session_begin_at(struct writer *, const char *,
		     const char *, const char *, int64_t);
struct wsession	*writer_session_import(struct writer *, const char *,
		     const char *, const char *,
		     const struct wsession_meta *);
int		 writer_message(struct writer *, struct wsession *,
		     struct wexchange *, struct msg *);
int		 writer_message_scanned(struct writer *, struct wsession *,
		     struct wexchange *, struct msg *, const struct scan *);
void		 writer_scan(const struct msg *, struct scan *);
struct wexchange *writer_exchange_begin(struct writer *, struct wsession *,
		     const struct wexchange_info *);
void		 writer_exchange_response(struct writer *, struct wexchange *,
		     int, const struct wexchange_info *);
void		 writer_exchange_trailers(struct writer *, struct wexchange *,
		     const char *, const char *);
void		 writer_exchange_end(struct writer *, struct wexchange *,
		     const char *, const void *, size_t);
void		 writer_exchange_end_at(struct writer *, struct wexchange *,
		     int64_t, const char *, const void *, size_t);
void		 writer_event(struct writer *, struct wsession *,
		     const char *, const void *, size_t);
void		 writer_event_msg(struct writer *, struct wsession *,
		     const char *, struct msg *);
void		 writer_session_end(struct writer *, struct wsession *, int,
		     int, const char *);
void		 writer_session_end_at(struct writer *, struct wsession *,
		     int64_t, int, int, const char *);
/*
 * The spans of session s that OpenTelemetry export did not deliver
 * (sessions.otlp_dropped); queued like its end, after it.
 */
void		 writer_session_otlp_dropped(struct writer *, struct wsession *,
		     int64_t);
/* The transport session s turned out to use (record --connect's auto). */
void		 writer_session_transport(struct writer *, struct wsession *,
		     const char *);
/* The client (address, port) that began session s over HTTP. */
void		 writer_session_client(struct writer *, struct wsession *,
		     const char *, int);
/* What the producer hangs on a session (record --otlp: its exporter
   session); the writer never reads it.  The loop thread only. */
void		 writer_session_set_tag(struct wsession *, void *);
void		*writer_session_tag(const struct wsession *);
/* A fault mcpreel injected (a faults row), for writer_fault(); strings
   are copied. */
struct wfault {
	int64_t		 n;		/* from 1 in its session */
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	int		 rule_index;	/* from 1 */
	const char	*rule;		/* the rule as text */
	const char	*action;	/* fault_action_name() */
	int		 has_dir;
	enum dir	 dir;		/* of the message it selected */
	const char	*method;	/* or NULL */
	const char	*rpc_id;	/* or NULL */
	const char	*detail;	/* or NULL */
};
/* Queue a faults row; before the messages that carry its n. */
void		 writer_fault(struct writer *, struct wsession *,
		     const struct wfault *);
/* The session's next fault number (1, 2, ...); the loop thread only. */
int64_t		 writer_session_next_fault(struct wsession *);
/* An HTTP exchange's response was made by fault n (http_exchanges.fault). */
void		 writer_exchange_fault(struct writer *, struct wexchange *,
		     int64_t);
int64_t		 writer_session_id(const struct wsession *);
int64_t		 writer_session_id_now(const struct wsession *);
uint64_t	 writer_session_lost(const struct wsession *);
uint64_t	 writer_session_faults_lost(const struct wsession *);
void		 writer_stop(struct writer *);
void		 writer_session_free(struct wsession *);
/*
 * Row ids the writer thread gathers as it frees released sessions
 * (writer_session_release); read them once the writer has stopped.
 */
struct writer_ids {
	int64_t		*ids;
	size_t		 n;
	size_t		 cap;
};
void		 writer_session_release(struct writer *, struct wsession *,
		     struct writer_ids *);

/* query.c */
struct session_row {
	int64_t		 id;
	const char	*name;		/* may be NULL */
	const char	*transport;
	const char	*target;
	int64_t		 started_ns;
	int64_t		 ended_ns;	/* 0 when not ended */
	int		 has_exit;
	int		 exit_status;
	int		 exit_signal;	/* 0 when none */
	const char	*end_reason;	/* may be NULL */
	int64_t		 messages;
	int64_t		 bytes;
	int64_t		 messages_lost;
	int64_t		 recorder_pid;	/* 0 when not known, -1 when the
					   session was imported (no recorder
					   of this machine) */
	const char	*origin;	/* ORIGIN_*: what made it */
	int		 has_otlp_dropped; /* exported with --otlp: */
	int64_t		 otlp_dropped;	/*   spans not delivered */
};

/* A faults row: a fault --fault injected. */
struct fault_row {
	int64_t		 n;		/* from 1 in its session */
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	int		 rule_index;	/* from 1 */
	const char	*rule;		/* the rule as text */
	const char	*action;
	int		 has_dir;
	enum dir	 dir;		/* of the message it selected */
	const char	*method;	/* may be NULL */
	const char	*rpc_id;	/* may be NULL */
	const char	*detail;	/* may be NULL */
};

struct message_row {
	int64_t		 seq;
	enum dir	 dir;
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	enum msg_kind	 kind;
	const char	*method;	/* may be NULL */
	const char	*rpc_id;	/* may be NULL */
	int64_t		 latency_ns;	/* responses: -1 when unpaired */
	int64_t		 reply_seq;	/* responses: their request's seq, 0
					   when unpaired */
	const void	*raw;
	size_t		 len;
	int		 truncated;	/* raw is a prefix (the record cap) */
	int64_t		 fault;		/* the fault (faults.n) it belongs to,
					   or 0 */
	int		 fault_role;	/* FAULT_ROLE_* */
};

/*
 * An event; a faults row is one too, of kind "fault", its text a sentence
 * ("fault #2, rule 1 `...`: what was done").
 */
struct event_row {
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	const char	*kind;
	const void	*text;
	size_t		 len;
	const struct fault_row *fault;	/* kind "fault": its row, else NULL */
};

/* A timeline entry: a message or an event, in the order they happened. */
struct timeline_row {
	int			 is_event;
	struct message_row	 m;
	struct event_row	 e;
	struct fault_row	 f;	/* e.fault points here */
};

/* What query_timeline() and query_export() read. */
#define QUERY_EVENTS	0x1	/* events and faults rows too (timeline) */
#define QUERY_UNFAULTED	0x2	/* leave out, as if absent, the messages of
				   a fault that did not pass between
				   mcpreel and the server: a c2s 'original'
				   (the server did not get it as sent), a
				   s2c 'injected' (the server never sent
				   it); a c2s 'injected' copy (a mutated
				   request as forwarded) stays, the server
				   answered it: what check, replay and
				   mock read by default */

typedef int (*session_cb)(const struct session_row *, void *);
typedef int (*timeline_cb)(const struct timeline_row *, void *);

/*
 * Which rows a filtered timeline holds (query_timeline_next): all of the
 * criteria at once.  query_filter_init() leaves every one open.  Times
 * and seqs bound both ends inclusively.
 */
struct query_filter {
	const char	*method;	/* a GLOB pattern on method, or NULL */
	const char	*dir;		/* "c2s", "s2c", or NULL */
	const char	*kind;		/* a kind name, or NULL */
	const char	*grep;		/* text raw (an event's text) holds */
	int		 errors;	/* only errors: kind 'error', or a
					   result with "isError": true */
	int		 events;	/* events too (within the times, the
					   seqs' times and grep) */
	int		 faults;	/* faults rows too, as events of kind
					   "fault" (within the times, the seqs'
					   times, grep, method and dir) */
	int64_t		 seq_min, seq_max;
	int64_t		 rel_min, rel_max;	/* ns since the first row */
	int64_t		 wall_min, wall_max;	/* ts_ns */
};

/* Where reading a timeline has got to; query_cursor_init() to begin. */
struct query_cursor {
	int64_t		 msg_id;	/* newest messages.id seen; -1: none */
	int64_t		 event_id;	/* newest events.id seen */
	int64_t		 fault_id;	/* newest faults.id seen */
	int		 started;	/* start_mono is known */
	int64_t		 start_mono;	/* the session's first row (message or
					   event): the timeline's time 0 */
	int		 ended;		/* the session had ended (ended_ns) */
	int		 stdio;		/* recorded over stdio */
	int64_t		 recorder_pid;	/* 0 when not recorded; -1 imported */
	int64_t		 started_ns;	/* the session's start (wall clock) */
};

int		 query_find_session(struct store *, const char *, int64_t *,
		     char **);
int		 query_sessions(struct store *, int64_t, session_cb, void *,
		     char **);
int		 query_timeline(struct store *, int64_t, int, timeline_cb,
		     void *, char **);
void		 query_filter_init(struct query_filter *);
void		 query_cursor_init(struct query_cursor *);
int		 query_timeline_next(struct store *, int64_t,
		     const struct query_filter *, struct query_cursor *,
		     timeline_cb, void *, char **);

/* query_stream.c: a session's messages one at a time, in order. */
struct query_stream;
struct query_stream *query_stream_open(struct store *, int64_t, int,
		     char **);
int		 query_stream_next(struct query_stream *,
		     const struct timeline_row **, char **);
void		 query_stream_close(struct query_stream *);

/* The requests of one method in one direction: counts and latencies. */
struct method_stats {
	enum dir	 dir;
	const char	*method;
	int64_t		 requests;
	int64_t		 answered;	/* with a response or an error */
	int64_t		 errors;	/* error responses, "isError": true */
	int64_t		 faulted;	/* requests left out of the counts
					   and latencies: the request or its
					   answer was a fault's original or
					   injected message */
	int64_t		 p50_ns;	/* nearest-rank percentiles of the */
	int64_t		 p95_ns;	/* answered requests' latencies; -1 */
	int64_t		 p99_ns;	/* when none was answered */
	int64_t		 max_ns;
};

/* A request no response answers. */
struct hung_row {
	int64_t		 session_id;
	int64_t		 seq;
	enum dir	 dir;
	const char	*method;
	const char	*rpc_id;
	int64_t		 ts_ns;
	int64_t		 ended_ns;	/* its session's end; 0 if not ended */
};

typedef int (*method_stats_cb)(const struct method_stats *, void *);
typedef int (*hung_cb)(const struct hung_row *, void *);

int		 query_method_stats(struct store *, int64_t, method_stats_cb,
		     void *, char **);
int		 query_hung(struct store *, int64_t, hung_cb, void *, char **);

/* faults.c */
typedef int (*fault_action_cb)(const char *, int64_t, void *);
int		 faults_left_out(struct store *, int64_t, int64_t *, char **);
int		 faults_count(struct store *, int64_t, int64_t *, char **);
int		 faults_dangling(struct store *, int64_t, int64_t *, char **);
int		 faults_any(struct store *, int64_t, int *, char **);
int		 faults_by_action(struct store *, int64_t, fault_action_cb,
		     void *, char **);
int		 faults_role(const char *);

/* maint.c */
int		 maint_delete_sessions(struct store *, const int64_t *, size_t,
		     char **);
int		 maint_space(struct store *, int64_t *, int64_t *, char **);
int		 maint_vacuum(struct store *, char **);

/* Every column of a session's row, for export. */
struct session_info {
	int64_t		 id;
	const char	*name;		/* may be NULL */
	const char	*transport;
	const char	*target;
	int64_t		 started_ns;
	int		 has_ended;
	int64_t		 ended_ns;
	int		 has_exit;
	int		 exit_status;
	int		 exit_signal;	/* 0 when none */
	const char	*end_reason;	/* may be NULL */
	int64_t		 messages_lost;
	const char	*store_error;	/* may be NULL */
	const char	*imported_from;	/* may be NULL */
	int64_t		 recorder_pid;	/* 0 when unknown */
	const char	*mcpreel_version; /* may be NULL */
	int		 has_otlp_dropped; /* exported with --otlp: */
	int64_t		 otlp_dropped;	/*   spans not delivered */
	const char	*client_address; /* HTTP: the client, or NULL */
	int		 client_port;	/*   and its port (0: unknown) */
};

/* An http_exchanges row. */
struct exchange_row {
	int64_t		 id;
	int64_t		 connection;
	const char	*method;
	const char	*path;
	const char	*request_headers;	/* JSON array of [name, value] */
	int64_t		 started_ns;
	int64_t		 mono_ns;
	int		 has_status;
	int		 status;
	const char	*response_headers;	/* may be NULL */
	int		 has_response_mono;
	int64_t		 response_mono_ns;
	int		 has_ended;
	int64_t		 ended_ns;
	const char	*outcome;		/* may be NULL */
	int		 has_body;
	const void	*body;
	size_t		 body_len;
	const char	*request_trailers;	/* may be NULL */
	const char	*response_trailers;	/* may be NULL */
	int64_t		 fault;		/* the fault that made its response,
					   or 0 */
};

/* A message with every column, or an event, for export. */
struct export_row {
	int			 is_event;
	struct message_row	 m;
	int64_t			 reply_to_seq;	/* 0: not paired */
	int64_t			 exchange;	/* http_exchanges.id, or 0 */
	const char		*sse_id;	/* may be NULL */
	int64_t			 wire_size;	/* -1 when NULL */
	const char		*sha256;	/* may be NULL */
	int			 truncated;
	int			 redacted;
	struct event_row	 e;
	struct fault_row	 f;	/* e.fault points here */
};

typedef int (*session_info_cb)(const struct session_info *, void *);
typedef int (*exchange_cb)(const struct exchange_row *, void *);
typedef int (*export_cb)(const struct export_row *, void *);

int		 query_session_info(struct store *, int64_t, session_info_cb,
		     void *, char **);
int		 query_exchanges(struct store *, int64_t, exchange_cb, void *,
		     char **);
int		 query_export(struct store *, int64_t, int, export_cb, void *,
		     char **);
int		 query_events(struct store *, int64_t, export_cb, void *,
		     char **);
struct export_cursor;
struct export_cursor *query_exchange_msgs_open(struct store *, int64_t,
		     char **);
int		 query_exchange_msgs_next(struct export_cursor *,
		     struct export_row *, char **);
void		 query_exchange_msgs_close(struct export_cursor *);
int		 query_exchange_ids(struct store *, int64_t,
		     int (*)(int64_t, void *), void *, char **);
struct exchange_lookup;
struct exchange_lookup *query_exchange_open(struct store *, char **);
int		 query_exchange_get(struct exchange_lookup *, int64_t,
		     exchange_cb, void *, char **);
void		 query_exchange_close(struct exchange_lookup *);
int		 query_session_counts(struct store *, int64_t, int64_t *,
		     int64_t *, int64_t *, char **);
int		 query_drop_session(struct store *, int64_t, char **);

#endif
