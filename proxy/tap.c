/*
 * The tap: the single place forwarded traffic is recorded.  The message is
 * already stamped (msg_alloc) and copied; the tap queues it to the writer
 * thread and turns the writer's "queue full" into a pause of reading, and
 * the writer's "drained" (which arrives on the writer thread) into a resume
 * on the event loop.
 */

#include <stdlib.h>

#include <event2/event.h>

#include "proxy.h"

struct tap {
	struct writer	*w;
	struct event	*resume_ev;
	tap_resume_cb	 resume_cb;
	void		*resume_arg;
	int		 paused;
};

static void
tap_resume_ev_cb(evutil_socket_t fd, short events, void *arg)
{
	struct tap	*t = arg;

	t->paused = 0;
	log_debug("recording caught up: reading resumes");
	if (t->resume_cb != NULL)
		t->resume_cb(t->resume_arg);
}

/* Runs on the writer thread: hand the news to the loop. */
static void
tap_drain_cb(void *arg)
{
	struct tap	*t = arg;

	event_active(t->resume_ev, EV_READ, 0);
}

/*
 * A tap recording through writer w.  resume_cb runs on base's loop when
 * reading may go on after tap_message() returned 1.  The event base must
 * have been made thread-aware (evthread_use_pthreads).
 */
struct tap *
tap_new(struct event_base *base, struct writer *w, tap_resume_cb resume_cb,
    void *arg)
{
	struct tap	*t = xcalloc(1, sizeof *t);

	t->w = w;
	t->resume_cb = resume_cb;
	t->resume_arg = arg;
	t->resume_ev = event_new(base, -1, 0, tap_resume_ev_cb, t);
	writer_set_drain_cb(w, tap_drain_cb, t);
	return t;
}

void
tap_free(struct tap *t)
{
	if (t == NULL)
		return;
	writer_set_drain_cb(t->w, NULL, NULL);
	event_free(t->resume_ev);
	free(t);
}

/*
 * Record a forwarded message of session s (the tap takes it), part of
 * HTTP exchange x if not NULL.  Returns 1 when reading should pause until
 * the resume callback.
 */
int
tap_message(struct tap *t, struct wsession *s, struct wexchange *x,
    struct msg *m)
{
	if (writer_message(t->w, s, x, m)) {
		if (!t->paused)
			log_debug("recording is behind: reading pauses");
		t->paused = 1;
	}
	return t->paused;
}

/* Record something that happened around the messages (stderr, exit). */
void
tap_event(struct tap *t, struct wsession *s, const char *kind,
    const void *text, size_t len)
{
	writer_event(t->w, s, kind, text, len);
}

/* Wait until everything recorded so far is committed (--durable). */
void
tap_sync(struct tap *t)
{
	writer_sync(t->w);
}

int
tap_paused(const struct tap *t)
{
	return t->paused;
}
