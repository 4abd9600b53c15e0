/*
 * The tap: the single place forwarded traffic is recorded.  The message is
 * already stamped (msg_alloc) and copied; the tap queues it to the writer
 * thread and turns the writer's "queue full" into a pause of reading, and
 * the writer's "drained" (which arrives on the writer thread) into a resume
 * on the event loop.
 *
 * It also redacts what is stored (record's --redact-* options): the copy,
 * never the bytes forwarded, which went out before the tap sees them.  On
 * this thread rather than the writer's: the writer is the one that limits
 * recording throughput (its SQLite inserts), the loop has time to spare.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "proxy.h"
#include "formats.h"

struct tap {
	struct writer	*w;
	struct event	*resume_ev;
	tap_resume_cb	 resume_cb;
	void		*resume_arg;
	int		 paused;
};

/* What every tap redacts; NULL: nothing (set once, before recording). */
static const struct redact	*tap_rules;

/* record --check: where every tap hands messages to be checked, or NULL. */
static struct livecheck		*tap_check;

/*
 * record --otlp: the exporter every tap hands messages to, or NULL, and
 * every session given one (for their counts at the end).  A session's
 * otlp_sess hangs on its wsession (writer_session_tag) until it ends.
 */
static struct otlp		*tap_otlp;
static struct wsession		**tap_otlp_ws;
static struct otlp_sess		**tap_otlp_os;
static size_t			 tap_otlp_n, tap_otlp_cap;

static int	tap_queue(struct tap *, struct wsession *, struct wexchange *,
		    struct msg *, const struct check_http *, int);

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
	return tap_queue(t, s, x, m, NULL, 1);
}

/*
 * tap_message() of a message that came in an HTTP exchange, h what
 * record --check may know of it (its heads as stored), or NULL.
 */
int
tap_message_http(struct tap *t, struct wsession *s, struct wexchange *x,
    struct msg *m, const struct check_http *h)
{
	return tap_queue(t, s, x, m, h, 0);
}

/*
 * Redact m, hand it to record --check and --otlp, and queue it; with
 * classify, scan it here for the writer.  Over stdio the writer thread is
 * what limits recording, and the forwarding thread has time to spare (the
 * profile: ~19 000 instructions a message on the writer, ~3 000 here): the
 * scan moves here, where the bytes were just written and are still in
 * this CPU's cache.  Over HTTP the event loop is the busier thread, and
 * the writer scans.
 */
static int
tap_queue(struct tap *t, struct wsession *s, struct wexchange *x,
    struct msg *m, const struct check_http *h, int classify)
{
	struct scan	sc;

	if (tap_rules != NULL)
		m = redact_msg(tap_rules, m);
	if (tap_check != NULL)
		livecheck_message(tap_check, s, m, h);
	/* Before the writer takes m: its facts are copied now. */
	if (tap_otlp != NULL && writer_session_tag(s) != NULL)
		otlp_message(tap_otlp, writer_session_tag(s), m);
	if (classify)
		writer_scan(m, &sc);
	if (writer_message_scanned(t->w, s, x, m, classify ? &sc : NULL)) {
		if (!t->paused)
			log_debug("recording is behind: reading pauses");
		t->paused = 1;
	}
	return t->paused;
}

/*
 * Record something that happened around the messages (stderr, exit), its
 * text redacted (a server may log a key it uses).
 */
void
tap_event(struct tap *t, struct wsession *s, const char *kind,
    const void *text, size_t len)
{
	char	*red;
	size_t	 rlen;

	if (tap_rules != NULL && redact_text(tap_rules, text, len, &red,
	    &rlen) != 0) {
		writer_event(t->w, s, kind, red, rlen);
		free(red);
		return;
	}
	writer_event(t->w, s, kind, text, len);
}

/* Record a fault injected (a faults row): before the messages naming it. */
void
tap_fault(struct tap *t, struct wsession *s, const struct wfault *f)
{
	writer_fault(t->w, s, f);
}

/*
 * End an HTTP exchange's record, with a body kept for people, redacted:
 * as a form when form is set (its Content-Type says so), else as text.
 */
void
tap_exchange_end(struct tap *t, struct wexchange *x, const char *outcome,
    const void *body, size_t len, int form)
{
	char	*red, *red2;
	size_t	 rlen, rlen2;

	if (tap_rules != NULL && len > 0 && form && redact_form(tap_rules,
	    body, len, &red, &rlen) != 0) {
		if (redact_text(tap_rules, red, rlen, &red2, &rlen2) != 0) {
			free(red);
			red = red2;
			rlen = rlen2;
		}
		writer_exchange_end(t->w, x, outcome, red, rlen);
		free(red);
		return;
	}
	if (tap_rules != NULL && len > 0 && redact_text(tap_rules, body, len,
	    &red, &rlen) != 0) {
		writer_exchange_end(t->w, x, outcome, red, rlen);
		free(red);
		return;
	}
	writer_exchange_end(t->w, x, outcome, body, len);
}

/*
 * Redact what every tap records from now on with r (kept by the caller
 * until the taps are gone), or nothing when r is NULL.
 */
/*
 * End session s in the record now (again, if it was ended before: the
 * latest end wins, an exit status once known is kept).  Queued as a
 * session item, which wakes the writer at once and commits on its own.
 */
void
tap_session_end(struct tap *t, struct wsession *s, int exit_status,
    int exit_signal, const char *reason)
{
	writer_session_end(t->w, s, exit_status, exit_signal, reason);
	/*
	 * Not the end for record --check: over stdio the server may still
	 * speak; its caller says when the session is over (tap_check_end).
	 */
}

/* Session s turned out to use transport (set in its row). */
void
tap_session_transport(struct tap *t, struct wsession *s, const char *transport)
{
	writer_session_transport(t->w, s, transport);
}

/*
 * Check what every tap records from now on with lc (record --check; kept
 * by the caller until the taps are gone), or nothing when lc is NULL.
 */
void
tap_set_check(struct livecheck *lc)
{
	tap_check = lc;
}

/* Whether record --check is on (what to hand tap_message_http). */
int
tap_checking(void)
{
	return tap_check != NULL;
}

/* Session s has ended, for record --check. */
void
tap_check_end(const struct wsession *s)
{
	if (tap_check != NULL)
		livecheck_end(tap_check, s);
}

/*
 * Export what every tap records from now on through o (record --otlp;
 * kept by the caller until tap_otlp_finish), or nothing when o is NULL.
 */
void
tap_set_otlp(struct otlp *o)
{
	tap_otlp = o;
	if (o == NULL) {
		free(tap_otlp_ws);
		free(tap_otlp_os);
		tap_otlp_ws = NULL;
		tap_otlp_os = NULL;
		tap_otlp_n = tap_otlp_cap = 0;
	}
}

/* Whether record --otlp is on (what to gather for tap_otlp_begin). */
int
tap_exporting(void)
{
	return tap_otlp != NULL;
}

/*
 * Session s has begun (info: what its spans all say, the same start,
 * transport and target as its row): its messages are exported from now.
 */
void
tap_otlp_begin(struct wsession *s, const struct otlp_sess_info *info)
{
	struct otlp_sess	*os;

	if (tap_otlp == NULL || writer_session_tag(s) != NULL)
		return;
	os = otlp_session(tap_otlp, info);
	if (os == NULL)
		return;
	if (tap_otlp_n == tap_otlp_cap) {
		tap_otlp_cap = tap_otlp_cap == 0 ? 16 : tap_otlp_cap * 2;
		tap_otlp_ws = xreallocarray(tap_otlp_ws, tap_otlp_cap,
		    sizeof *tap_otlp_ws);
		tap_otlp_os = xreallocarray(tap_otlp_os, tap_otlp_cap,
		    sizeof *tap_otlp_os);
	}
	tap_otlp_ws[tap_otlp_n] = s;
	tap_otlp_os[tap_otlp_n++] = os;
	writer_session_set_tag(s, os);
}

/* Session s has ended: its unanswered requests end as spans now. */
void
tap_otlp_end(struct wsession *s)
{
	struct otlp_sess	*os;

	if (tap_otlp == NULL || (os = writer_session_tag(s)) == NULL)
		return;
	otlp_session_end(tap_otlp, os, clock_wall_ns());
	writer_session_set_tag(s, NULL);
}

/*
 * The end of a run with --otlp, before writer_stop(w): send what is
 * queued (at most deadline_ms), then each session's count of spans not
 * delivered into its row (sessions.otlp_dropped).  The exporter is the
 * caller's to free after writer_stop; the tap exports no more.
 */
void
tap_otlp_finish(struct writer *w, int deadline_ms)
{
	struct otlp	*o = tap_otlp;
	size_t		 i;

	if (o == NULL)
		return;
	for (i = 0; i < tap_otlp_n; i++)
		tap_otlp_end(tap_otlp_ws[i]);
	tap_otlp = NULL;
	otlp_stop(o, deadline_ms);
	for (i = 0; i < tap_otlp_n; i++)
		writer_session_otlp_dropped(w, tap_otlp_ws[i],
		    (int64_t)otlp_session_dropped(tap_otlp_os[i]));
	tap_set_otlp(NULL);
}

void
tap_set_redact(const struct redact *r)
{
	tap_rules = redact_is_empty(r) ? NULL : r;
	log_set_redact(tap_rules);
}

/*
 * Whether a header of this name has its value redacted: named like a
 * secret (redact_name_secret: by shape, or --redact-key).
 */
int
tap_redacts_key(const char *name)
{
	return tap_rules != NULL && redact_name_secret(tap_rules, name,
	    strlen(name));
}

/* A URL or request target to store or log, redacted (a new string). */
char *
tap_redact_url(const char *url)
{
	return redact_url(tap_rules, url);
}

/* A piece of text to store, redacted as text (s taken; s or a new one). */
char *
tap_redact_text(char *s)
{
	char	*red;
	size_t	 rlen;

	if (tap_rules == NULL || redact_text(tap_rules, s, strlen(s), &red,
	    &rlen) == 0)
		return s;
	free(s);
	return red;
}

/* A command line to store or log (redact_argv; free with redact_argv_free). */
char **
tap_redact_argv(char *const *argv)
{
	return redact_argv(tap_rules, argv);
}

/*
 * A form-encoded body's message (m taken): m, or a new message with the
 * values of its secret fields redacted.  The tap's payload rules run on
 * it after, as on every message.
 */
struct msg *
tap_redact_form(struct msg *m)
{
	char		*out;
	size_t		 outlen;

	if (tap_rules == NULL || redact_form(tap_rules, m->raw, m->len, &out,
	    &outlen) == 0)
		return m;
	return redact_msg_replace(m, out, outlen);
}

/*
 * A string to store (s, allocated, taken) with its secrets redacted: s
 * itself, or a new one.
 */
char *
tap_redact_string(char *s)
{
	char	*red;
	size_t	 rlen;

	if (tap_rules == NULL || redact_buf(tap_rules, s, strlen(s), &red,
	    &rlen) == 0)
		return s;
	free(s);
	return red;
}

/* Wait until everything recorded so far is committed (--durable). */
void
tap_sync(struct tap *t)
{
	writer_sync(t->w);
}

size_t
tap_read_max(struct tap *t, size_t most)
{
	return writer_read_max(t->w, most);
}

int
tap_paused(const struct tap *t)
{
	return t->paused;
}
