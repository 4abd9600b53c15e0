/*
 * store: the only module that includes sqlite3.h.  It opens and migrates
 * the database, runs the writer thread that records messages, and answers
 * the queries the CLI asks.
 */
#ifndef MCPREEL_STORE_H
#define MCPREEL_STORE_H

#include <stdint.h>

#include "core.h"

#define STORE_SCHEMA_VERSION 3

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

/* store.c */
#define STORE_CREATE	0x1	/* create the file (mode 0600) and its dirs */
struct store	*store_open(const char *, int, char **);
void		 store_close(struct store *);
const char	*store_path(const struct store *);
int		 store_exec(struct store *, const char *, char **);

/* writer.c */
struct writer	*writer_start(struct store *, char **);
void		 writer_set_drain_cb(struct writer *, void (*)(void *), void *);
struct wsession	*writer_session_begin(struct writer *, const char *,
		     const char *, const char *);
int		 writer_message(struct writer *, struct wsession *,
		     struct wexchange *, struct msg *);
struct wexchange *writer_exchange_begin(struct writer *, struct wsession *,
		     const struct wexchange_info *);
void		 writer_exchange_response(struct writer *, struct wexchange *,
		     int, const struct wexchange_info *);
void		 writer_exchange_end(struct writer *, struct wexchange *,
		     const char *, const void *, size_t);
void		 writer_event(struct writer *, struct wsession *,
		     const char *, const void *, size_t);
void		 writer_session_end(struct writer *, struct wsession *, int,
		     int, const char *);
int64_t		 writer_session_id(const struct wsession *);
uint64_t	 writer_session_lost(const struct wsession *);
void		 writer_stop(struct writer *);
void		 writer_session_free(struct wsession *);

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
};

struct event_row {
	int64_t		 ts_ns;
	int64_t		 mono_ns;
	const char	*kind;
	const void	*text;
	size_t		 len;
};

/* A timeline entry: a message or an event, in the order they happened. */
struct timeline_row {
	int			 is_event;
	struct message_row	 m;
	struct event_row	 e;
};

typedef int (*session_cb)(const struct session_row *, void *);
typedef int (*timeline_cb)(const struct timeline_row *, void *);

int		 query_find_session(struct store *, const char *, int64_t *,
		     char **);
int		 query_sessions(struct store *, int64_t, session_cb, void *,
		     char **);
int		 query_timeline(struct store *, int64_t, int, timeline_cb,
		     void *, char **);

#endif
