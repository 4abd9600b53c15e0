/*
 * Inside mock --fault: the edge's state (mockfault.c) and what it holds
 * (mfhold.c).  Only those two include this.
 */

#ifndef MOCKFAULT_INT_H
#define MOCKFAULT_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

/*
 * Messages held at once (delayed, a request held by timeout or drop).
 * Past these a delay goes at once (what waits on its channel with it)
 * and a held request is ended, with one warning: a rule that holds every
 * message of a busy client must not grow without bound.  A held request
 * keeps its id only up to 256 bytes (mfnote_id), so its item stays small.
 */
#define MOCKFAULT_HELD_MAX	4096
#define MOCKFAULT_HELD_BYTES	(64 * 1024 * 1024)
/* An id longer than this is cut in the log line. */
#define MOCKFAULT_LOG_FIELD	128

enum mf_what {
	MF_DELIVER,		/* a client message, late (delay) */
	MF_OUT,			/* a mock message, late or queued */
	MF_EXPIRE,		/* a request held by timeout: cut at due */
	MF_HOLD,		/* a dropped request's POST, never answered */
};

/* A message (or a request's channel) the edge holds. */
struct mfitem {
	enum mf_what		 what;
	enum mockfault_how	 how;		/* MF_OUT */
	int			 decide;	/* MF_OUT: rules not asked */
	char			*fb;		/* MF_OUT: the fallback's bytes */
	size_t			 fblen;
	int			 flushed;	/* MF_OUT: let go at the bound,
						   a delay no longer holds it */
	struct ereq		*er;
	char			*bytes;
	size_t			 len;
	int64_t			 due_ns;
	int64_t			 fault;		/* the fault that holds it */
	json_t			*id;		/* its request's id, or NULL */
	TAILQ_ENTRY(mfitem)	 entry;
};

struct mockfault {
	struct event_base	*base;
	struct endpoint		*ep;
	struct fault_set	*set;
	int			 http;
	struct mockfault_cbs	 cbs;
	void			*arg;
	int			(*reload)(struct fault_set *, void *, char **);
	void			*reload_arg;
	struct event		*timer;
	struct event		*hup;
	TAILQ_HEAD(, mfitem)	 items;
	size_t			 nitems;
	size_t			 held_bytes;	/* their bytes */
	int			 closed;	/* a fault closed stdio */
	int			 running;	/* in mockfault_run */
	int			 full_warned;
	int			 finished;	/* mockfault_finish: hold nothing */
	int64_t			 deliver_n;	/* a faulted client message goes:
						   its fault and role, until */
	int			 deliver_role;	/* the fallback takes it */
	struct mfnote		*note;		/* what is said and recorded */
};

void		 mockfault_run(struct mockfault *);
void		 mfhold_free(struct mfitem *);
struct mfitem	*mfhold_add(struct mockfault *, enum mf_what, struct ereq *,
		     const char *, size_t, int64_t, int64_t);
void		 mfhold_remove(struct mockfault *, struct mfitem *);
void		 mfhold_fb(struct mockfault *, struct mfitem *, const char *,
		     size_t);
int		 mfhold_full(struct mockfault *);
void		 mfhold_request(struct mockfault *, struct ereq *,
		     enum mf_what, int64_t, int64_t, json_t *);
void		 mfhold_late_answer(struct mockfault *,
		     const struct fault_hit *, enum mockfault_how,
		     struct ereq *, const char *, size_t, const char *,
		     size_t);
int		 mfhold_busy(const struct mockfault *);
void		 mfhold_cancelled(struct mockfault *, const char *, size_t);

#endif
