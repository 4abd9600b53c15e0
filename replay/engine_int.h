/*
 * Inside replay's engine: its state (engine.c) and the window of the
 * recording it holds (ewindow.c).  Only those two include this.
 */

#ifndef ENGINE_INT_H
#define ENGINE_INT_H

#include <event2/event.h>

#include <jansson.h>

#include "replay.h"

/*
 * Most places a note on a redacted message names: the rest are counted.
 * A note is one line for people.
 */
#define ENGINE_REDACTED_PATHS	8

enum rq_state {
	RQ_UNSENT,
	RQ_SENT,
	RQ_ANSWERED,
	RQ_TIMEDOUT
};

/* A request replay sent: made when sent, freed when its message goes. */
struct rreq {
	struct engine	*e;
	size_t		 msg;		/* absolute index in the plan */
	enum rq_state	 state;
	int64_t		 sent_ns;
	int64_t		 answered_ns;
	struct rresult	 res;		/* compared when the answer came */
	int		 compared;
	json_t		*live;		/* the live answer, kept until its
					   recorded one is read (further than
					   the window read so far), or NULL */
	struct event	*timer;		/* while sent: made at the send */
};

struct engine {
	struct event_base	*base;
	struct plan		*plan;
	struct xport		*xp;
	const struct replay_options *opt;
	struct replay_report	*rep;
	size_t			 seen;		/* messages looked at so far */
	size_t			 srv_kept;	/* answers in srv_answers */
	size_t			 far_lost;	/* pinned requests let go of
						   before their answers */
	struct idmap		*live_ids;	/* id text -> plan index */
	size_t			 next;		/* the next send */
	int64_t			 last_send_ns;
	struct event		*step_ev;
	struct event		*end_ev;
	json_t			*srv_answers;	/* key -> [recorded answer] */
	json_t			*srv_used;	/* key -> times used */
	json_t			*remap;		/* recorded -> live value */
	json_t			*notif_live;
	json_t			*notif_rec;	/* method -> count recorded */
	struct proto_headers	*ph;	/* 2026-07-28 headers learnt */
	int			 finishing;
	int			 closed;
	char			*closed_why;
};

/* engine.c */
void		 engine_note(struct engine *, const char *, ...)
		     PRINTFLIKE(2, 3);
void		 engine_compare(struct engine *, struct rreq *,
		     const json_t *);

/* ewindow.c */
int		 ewindow_read_all(const struct engine *);
void		 ewindow_fill(struct engine *);
void		 ewindow_release(struct engine *, int);
void		 ewindow_results(struct engine *);
void		 ewindow_rreq_free(struct rreq *);
void		 ewindow_unpin_all(struct engine *);
int		 ewindow_loses_answers(const struct engine *);

#endif
