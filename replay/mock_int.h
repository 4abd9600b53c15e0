/*
 * What the mock's files share: mock.c (the live side: requests matched,
 * the endpoint, the fault edge, the run), play.c (a recorded exchange
 * played: the server's messages around its answer, paced) and
 * fallback.c (misses forwarded to a fallback server, and the cassette
 * recorded of them).
 */
#ifndef MCPREEL_MOCK_INT_H
#define MCPREEL_MOCK_INT_H

#include <sys/queue.h>

#include <event2/event.h>

#include "replay.h"

/* How long a played server request waits for the client's answer. */
#define MOCK_ANSWER_TIMEOUT_MS	30000
/* How long a request forwarded to the fallback may take. */
#define MOCK_FALLBACK_TIMEOUT_MS 30000
/*
 * The messages held for the cassette while forwarded exchanges are in
 * flight (written when an exchange is answered): past this many bytes, the
 * rest are dropped and the recording is marked incomplete.
 */
#define MOCK_CASSETTE_HELD_MAX	((size_t)256 << 20)
/* After the client has gone, how long to finish what is in flight. */
#define MOCK_EXIT_WAIT_MS	5000
/* How long the fallback server gets to finish at the end. */
#define MOCK_FALLBACK_FINISH_MS	3000
/*
 * The default longest gap between two messages of one exchange.  A client
 * sees the order and the separation the server gave them (the official
 * TypeScript SDK dispatches notifications a tick later than the answer
 * that arrived with them, so a burst loses progress callbacks), while a
 * recording with long pauses (a slow tool, a person answering an
 * elicitation) does not make a test wait for them: 1 s is longer than the
 * pauses that matter to a client's event loop, short enough for a suite.
 */
#define MOCK_GAP_CAP_MS		1000
/*
 * With --latency scale:X, the longest gap: a scaled imported trace with
 * an hour's pause must not make a test wait half of it (recorded alone
 * keeps every gap whole, for who wants exactly that).
 */
#define MOCK_SCALED_CAP_MS	10000
/*
 * Unless --latency none, what follows a notification of an exchange (a
 * progress, a log message) is at least this far after it, so each goes
 * in a write of its own and a client gets a turn of its event loop
 * between them: a real server's last progress and its answer are often a
 * fraction of a millisecond apart (server-everything: 0.3 ms), which
 * reproduced, or scaled down, a busy client can read in one chunk and
 * lose a callback.  Other gaps (a request and its answer) are kept as
 * recorded, so ordinary exchanges are not slowed.
 */
#define MOCK_GAP_MIN_NS		(5 * 1000000LL)
/* No one wait longer than a day, whatever was recorded. */
#define MOCK_WAIT_MAX_NS	(86400.0 * 1e9)
/* --latency scale:X at most this (and X >= 0). */
#define MOCK_SCALE_MAX		1000.0
/*
 * Over stdio, while this much waits for the client to read it, plays send
 * nothing more, and look again every MOCK_FULL_RETRY_MS: answers are made
 * after their request is read (the recorded gaps), so the endpoint's
 * pause on reading (at the same size) alone does not bound what a client
 * that does not read makes mock hold.  20 ms: a client that reads again
 * waits no longer than a frame for the rest.
 */
#define MOCK_HELD_MAX		(16 * 1024 * 1024)
#define MOCK_FULL_RETRY_MS	20
/* Protocol versions from this one on have no sessions. */
#define MOCK_SESSIONLESS_FROM	"2026-07-28"

struct mock;

/* One recorded exchange being played for one live request. */
struct play {
	struct mock		*mk;
	struct ereq		*er;
	struct mdent		*e;		/* owned */
	json_t			*live_id;
	json_t			*live_token;	/* its progress token */
	json_t			*rec_token;	/* the recorded one */
	size_t			 step;		/* in before, then the answer,
						   then after */
	char			*waiting;	/* id text of our request */
	int64_t			 start_ns;
	uint64_t		 start_seq;	/* the order plays began */
	int64_t			 last_ns;	/* the previous message went */
	int64_t			 last_off_ns;	/* its recorded offset */
	int			 after_note;	/* it was a notification */
	int			 held;		/* its answer waits for one
						   recorded before it */
	struct event		*timer;
	int			 blocked;	/* the client's output is full */
	TAILQ_ENTRY(play)	 entry;
};

/* An answer given to the endpoint, not yet written: counted once it is. */
struct pending {
	uint64_t		 mark;		/* bytes queued just after it */
	uint64_t		*counter;	/* in mock_stats */
};

/*
 * The error a miss gets, held (over stdio) until the plays begun before
 * it have answered: answers go out in the order of their requests.
 */
struct missed {
	struct ereq		*er;
	char			*text;
	uint64_t		 seq;		/* plays begun before it */
	TAILQ_ENTRY(missed)	 entry;
};

struct mock {
	struct event_base	*base;
	struct mdisk		*md;
	struct endpoint		*ep;
	const struct mock_options *opt;
	uint64_t		 next_id;	/* our server requests' ids */
	uint64_t		 nplays;	/* plays begun */
	TAILQ_HEAD(, play)	 plays;
	TAILQ_HEAD(, missed)	 misses;	/* held miss errors */
	struct mock_stats	*stats;
	int			 stdin_closed;
	int			 input_file;	/* stdin is a file: its end is
					   not the client gone */
	struct xport		*fb;		/* the fallback, if any */
	int			 fb_finishing;
	struct event		*exit_ev;	/* bounds the wait at the end */
	uint64_t		 exit_written;	/* written when it was set */
	struct event		*kick_ev;	/* held answers may go */
	struct event		*fb_sweep;	/* times out forwarded requests */
	json_t			*fb_waiting;	/* our id text -> {er, id,
						   deadline} */
	char			*fb_why;	/* why it is gone, if it is */
	struct pending		*pend;		/* answers not yet written, */
	size_t			 npend, pend0;	/* pend[pend0..npend) */
	struct mockfault	*mf;		/* --fault's edge, or NULL */
	struct held		*held;		/* for the cassette, in order */
	size_t			 nheld, aheld;
	size_t			 heldbytes;
	uint64_t		 hmark;		/* the last held's mark */
	int64_t			 cw_ts, cw_mono; /* the last written's times */
};

/* A message of the forwarded exchanges in flight, held for the cassette. */
struct held {
	struct msg	*m;
	uint64_t	 mark;
};

/* mock.c */
void		 mock_out(struct mock *, enum mockfault_how, struct ereq *,
		     const char *, size_t, const char *, size_t);
void		 mock_count(struct mock *, uint64_t *);
json_t		*mock_copy(struct mock *, size_t);
char		*mock_dump(const json_t *);
void		 mock_maybe_exit(struct mock *);

/* play.c */
void		 play_free(struct play *);
json_t		*play_progress_token(const json_t *);
void		 play_timer_cb(evutil_socket_t, short, void *);
int		 play_miss_waits(struct mock *, uint64_t);
void		 play_misses_flush(struct mock *);
void		 play_kick_cb(evutil_socket_t, short, void *);
void		 play_step(struct play *);

/* fallback.c */
void		 fallback_held_clear(struct mock *);
void		 fallback_cassette(struct mock *, enum dir, const char *, size_t);
void		 fallback_send(struct mock *, const char *, size_t);
void		 fallback_message_cb(const char *, size_t, void *);
void		 fallback_sweep_cb(evutil_socket_t, short, void *);
void		 fallback_event_cb(const char *, const char *, size_t, void *);
void		 fallback_closed_cb(const char *, void *);
int		 fallback_forward(struct mock *, struct ereq *, const json_t *,
		     const char *, size_t);

#endif
