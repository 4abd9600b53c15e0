/*
 * Retiring ended HTTP recording sessions.  A session that ended (a
 * DELETE, a new initialize given its id, the end of its legacy stream)
 * is kept while an exchange refers to it and for HSESSION_GRACE_MS
 * after; then it leaves the proxy's lists and its recording session
 * goes back to the writer, so that the bound on sessions (--max-sessions)
 * counts the ones held, not every one a long run made.  Its messages are
 * all recorded by then; a request that carries its id later begins a new
 * session, as an unknown id does.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "http_int.h"

static void	hretire_tick_cb(evutil_socket_t, short, void *);

/* Set up retiring for a run (its bound and timer); p->base is made. */
void
hretire_init(struct hproxy *p)
{
	TAILQ_INIT(&p->ended);
	TAILQ_INIT(&p->refused);
	p->max_sessions = p->opt->max_sessions > 0 ? p->opt->max_sessions :
	    HTTP_SESSIONS_MAX;
	p->retire_ev = evtimer_new(p->base, hretire_tick_cb, p);
	if (p->opt->keep_ids)
		p->retired = xcalloc(1, sizeof *p->retired);
}

/* Forget the oldest id that had no room (hretire_refuse). */
static void
hretire_forget(struct hproxy *p)
{
	struct hsession	*hs = TAILQ_FIRST(&p->refused);

	TAILQ_REMOVE(&p->refused, hs, eentry);
	hsession_unkey(p, hs);
	p->nrefused--;
	free(hs->key);
	free(hs);
}

/*
 * Stop retiring (the loop is over): the ids that had no room are
 * forgotten; the sessions left are freed with the run.
 */
void
hretire_free(struct hproxy *p)
{
	if (p->retire_ev != NULL)
		event_free(p->retire_ev);
	p->retire_ev = NULL;
	while (!TAILQ_EMPTY(&p->refused))
		hretire_forget(p);
}

/*
 * Session id key (legacy or not) found no room: its traffic is recorded
 * in the run's default session, and so is the rest of it, rather than
 * beginning a session of its own half-way once an ended one is retired.
 * Its id is kept in the id table, marked, without a recording session;
 * at most p->max_sessions of them (a client cycling ids at the bound),
 * the oldest forgotten first.
 */
void
hretire_refuse(struct hproxy *p, const char *key, int legacy)
{
	struct hsession	*hs;

	for (hs = *hsession_bucket(p, key); hs != NULL; hs = hs->hnext) {
		if (hs->legacy == legacy && strcmp(hs->key, key) == 0)
			return;
	}
	if (p->nrefused >= p->max_sessions)
		hretire_forget(p);
	hs = xcalloc(1, sizeof *hs);
	hs->refused = 1;
	hs->legacy = legacy;
	hsession_key(p, hs, key);
	TAILQ_INSERT_TAIL(&p->refused, hs, eentry);
	p->nrefused++;
}

/* Look at the ended sessions again in HSESSION_RETIRE_TICK_MS. */
static void
hretire_arm(struct hproxy *p)
{
	struct timeval	tv = { HSESSION_RETIRE_TICK_MS / 1000,
	    (HSESSION_RETIRE_TICK_MS % 1000) * 1000 };

	if (p->retire_ev != NULL && !evtimer_pending(p->retire_ev, NULL))
		evtimer_add(p->retire_ev, &tv);
}

/*
 * Session hs has just ended: it waits to be retired, unless it is one a
 * run keeps (the default, the spare, one made past the bound), or
 * record --check or --otlp runs: they know sessions by their recording
 * session until the run ends (livecheck.c's index, tap.c's exports).
 */
void
hretire_ended(struct hproxy *p, struct hsession *hs)
{
	hs->ended_ns = clock_mono_ns();
	if (!hs->counted || hs->waiting || hs == p->dflt || hs == p->spare ||
	    p->retire_ev == NULL || tap_checking() || tap_exporting())
		return;
	hs->waiting = 1;
	TAILQ_INSERT_TAIL(&p->ended, hs, eentry);
	hretire_arm(p);
}

/*
 * Traffic came for ended session hs (a request crossing its DELETE, or
 * an id the server gave out again): its grace begins anew, so that a
 * session still in use is not retired under it.  Returns hs.
 */
struct hsession *
hretire_touch(struct hproxy *p, struct hsession *hs)
{
	hs->ended_ns = clock_mono_ns();
	if (hs->waiting) {
		TAILQ_REMOVE(&p->ended, hs, eentry);
		TAILQ_INSERT_TAIL(&p->ended, hs, eentry);
	}
	return hs;
}

/*
 * Retire hs (ended, waiting, no exchange refers to it): out of the lists
 * and the id table, its recording session handed back to the writer
 * (which frees it after its queued rows), and freed.
 */
static void
hretire_one(struct hproxy *p, struct hsession *hs)
{
	TAILQ_REMOVE(&p->ended, hs, eentry);
	*hs->prevp = hs->next;
	if (hs->next != NULL)
		hs->next->prevp = hs->prevp;
	hsession_unkey(p, hs);
	p->nsessions--;
	p->nlegacy -= hs->legacy;
	/* Under the bound again: the next crossing is said again. */
	p->full = 0;
	writer_session_release(p->w, hs->ws, p->retired);
	hs->ws = NULL;
	log_debug("an ended %s session was retired (%d held)", hs->legacy ?
	    "legacy HTTP+SSE" : "Streamable HTTP", p->nsessions);
	hsession_free(hs);
}

/*
 * Retire the ended sessions whose grace has passed and that no exchange
 * refers to, oldest end first; while any waits, again in a tick.
 */
static void
hretire_tick_cb(evutil_socket_t fd, short events, void *arg)
{
	struct hproxy	*p = arg;
	struct hsession	*hs, *next;
	int64_t		 now = clock_mono_ns();

	(void)fd;
	(void)events;
	for (hs = TAILQ_FIRST(&p->ended); hs != NULL; hs = next) {
		next = TAILQ_NEXT(hs, eentry);
		if (now - hs->ended_ns < (int64_t)HSESSION_GRACE_MS * 1000000)
			break;
		if (hs->refs == 0)
			hretire_one(p, hs);
	}
	if (!TAILQ_EMPTY(&p->ended))
		hretire_arm(p);
}

/*
 * At the bound: make room by retiring the ended session that ended
 * first and that no exchange refers to, its grace cut short (churn of
 * thousands of sessions a second must not hold more than the bound).
 * Whether one was.
 */
int
hretire_room(struct hproxy *p)
{
	struct hsession	*hs;

	TAILQ_FOREACH(hs, &p->ended, eentry) {
		if (hs->refs == 0) {
			hretire_one(p, hs);
			return 1;
		}
	}
	return 0;
}
