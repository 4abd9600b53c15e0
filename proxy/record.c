/*
 * Recording over stdio.  The host runs us in place of the server; we spawn
 * the server and join the two with a relay of two symmetric halves:
 *
 *   host --stdin-->  half[c2s] --tap--> server stdin
 *   host <-stdout--  half[s2c] <-tap--  server stdout
 *                    server stderr --> our stderr + tap (events)
 *
 * How a half forwards and records its bytes, and when it stops reading its
 * source, is in half.c.
 */

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "record_int.h"

/*
 * After the server exits, how long its stdout and stderr may stay open
 * (a grandchild can hold them), then how long the host gets to read what
 * we still hold for it.
 */
#define RECORD_EXIT_GRACE_MS	2000
#define RECORD_FLUSH_GRACE_MS	10000

static const char *relay_state_names[RELAY_MAX] = {
	"running", "draining", "flushing", "done"
};

static void
relay_set_state(struct relay *r, enum relay_state state)
{
	if (state >= RELAY_MAX || state <= r->state)
		fatalx("relay: bad state change %d -> %d", r->state, state);
	log_debug("relay: %s -> %s", relay_state_names[r->state],
	    relay_state_names[state]);
	r->state = state;
}

/* Remember the first reason the session is ending. */
void
relay_reason(struct relay *r, const char *why)
{
	if (r->reason == NULL)
		r->reason = xstrdup(why);
}

/*
 * Write the session's end now, with the reason so far (else why) and the
 * server's exit status once it is reaped, before anything that may wait
 * long (a grandchild holding the server's pipes, a host that does not
 * read): a host that kills us 2 s after SIGTERM must still find the
 * session ended.  Called on each way out; the end written last (at exit,
 * after the drain) wins.
 */
void
relay_end_now(struct relay *r, const char *why)
{
	int	status = -1, sig = 0;

	if (r->child != NULL && child_get_state(r->child) == CHILD_EXITED) {
		status = child_exit_code(r->child);
		sig = child_exit_signal(r->child);
	}
	tap_session_end(r->tap, r->session, status, sig, r->reason != NULL ?
	    r->reason : why);
}

/* The writer caught up: read again. */
static void
relay_resume_cb(void *arg)
{
	struct relay	*r = arg;
	int		 d;

	for (d = 0; d < DIR_MAX; d++)
		half_pause(&r->half[d], PAUSE_STORE, 0);
}

/* Whether lines are committed before they are forwarded (--durable). */
static int	 relay_durable;

void
record_set_durable(int on)
{
	relay_durable = on;
}

/* The fault rules the relay applies (--fault), or NULL. */
static const struct record_faults	*relay_faults;

void
record_set_faults(const struct record_faults *rf)
{
	relay_faults = rf != NULL && rf->set != NULL ? rf : NULL;
}

/*
 * Record one line of the server's stderr, redacted (by tap_event).  A
 * private key printed over several lines is one block the credential
 * shapes cannot see whole in any one line: the lines between its BEGIN
 * and its END are recorded as [REDACTED] (RECORD_PEM_LINES_MAX at most).
 */
static void
relay_stderr_record(struct relay *r, const char *line, size_t len)
{
	const char	*b;

	if (r->err_pem > 0) {
		if (memmem(line, len, "-----END", 8) != NULL)
			r->err_pem = 0;
		else {
			r->err_pem--;
			tap_event(r->tap, r->session, "stderr", REDACTED,
			    sizeof REDACTED - 1);
			return;
		}
	} else if ((b = memmem(line, len, "-----BEGIN ", 11)) != NULL &&
	    memmem(b, len - (size_t)(b - line), "PRIVATE KEY-----", 16) !=
	    NULL && memmem(b, len - (size_t)(b - line), "-----END", 8) == NULL)
		r->err_pem = RECORD_PEM_LINES_MAX;
	tap_event(r->tap, r->session, "stderr", line, len);
}

/* One line of the server's stderr: pass it on, and record it. */
static void
relay_stderr_line(struct relay *r, struct evbuffer *src, size_t len, int nl)
{
	char	*line = xmalloc(len + 1);
	ssize_t	 n;
	size_t	 off = 0;

	evbuffer_remove(src, line, len);
	if (nl)
		evbuffer_drain(src, 1);
	line[len] = '\n';
	/*
	 * Our stderr is left blocking: a host that never reads it would
	 * block the server's own writes the same way without us.
	 */
	while (off < len + (nl ? 1 : 0)) {
		n = write(STDERR_FILENO, line + off, len + (nl ? 1 : 0) - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	relay_stderr_record(r, line, len);
	free(line);
}

static void
relay_stderr_read_cb(struct bufferevent *bev, void *arg)
{
	struct relay	*r = arg;
	struct evbuffer	*src = bufferevent_get_input(bev);
	size_t		 len;

	while (frame_next(&r->err_fr, src, &len))
		relay_stderr_line(r, src, len, 1);
}

static void
relay_stderr_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct relay	*r = arg;
	struct evbuffer	*src = bufferevent_get_input(bev);

	if (evbuffer_get_length(src) > 0)
		relay_stderr_line(r, src, evbuffer_get_length(src), 0);
	r->err_eof = 1;
	bufferevent_disable(bev, EV_READ);
	relay_check_done(r);
}

/*
 * Give the host RECORD_FLUSH_GRACE_MS to read what we hold for it, after
 * the last line a fault delays for it is due: the host is still there.
 */
static void
relay_flush_grace(struct relay *r)
{
	int64_t		ms = RECORD_FLUSH_GRACE_MS +
			    inject_hold_ms(&r->half[DIR_S2C]);
	struct timeval	tv = { (time_t)(ms / 1000), (ms % 1000) * 1000 };

	evtimer_add(r->grace, &tv);
}

/* Finish once the server is gone and what it said has been passed on. */
void
relay_check_done(struct relay *r)
{
	struct half	*s2c = &r->half[DIR_S2C];
	int		 flushed;

	if (r->state == RELAY_RUNNING || r->state == RELAY_DONE)
		return;
	if (r->state == RELAY_DRAINING) {
		if (!s2c->eof || !r->err_eof)
			return;
		relay_set_state(r, RELAY_FLUSHING);
		evtimer_del(r->grace);
		relay_flush_grace(r);
	}
	flushed = s2c->out_closed || (half_backlog(s2c) == 0 &&
	    inject_pending(s2c) == 0);
	if (!flushed)
		return;
	relay_set_state(r, RELAY_DONE);
	event_base_loopbreak(r->base);
}

/* Wake the ending's timer in ms milliseconds. */
static void
relay_grace_in(struct relay *r, int64_t ms)
{
	struct timeval	tv = { (time_t)(ms / 1000), (ms % 1000) * 1000 };

	evtimer_add(r->grace, &tv);
}

/* Milliseconds until the last line a delay holds, in either direction. */
static int64_t
relay_fault_hold_ms(struct relay *r)
{
	int64_t	a = inject_hold_ms(&r->half[DIR_S2C]);
	int64_t	b = inject_hold_ms(&r->half[DIR_C2S]);

	return a > b ? a : b;
}

/*
 * The server exited while reading its stdout was paused and the host (or
 * the writer) did not catch up: what is left in the pipe is not read,
 * hence neither delivered nor recorded.  Say so, in the log and the record.
 */
static void
relay_gave_up_paused(struct relay *r)
{
	char	*note;

	xasprintf(&note, "the server exited while reading its stdout was "
	    "paused (the %s did not catch up) for %d ms: what is left in it "
	    "was not read, delivered or recorded",
	    (r->half[DIR_S2C].pause & PAUSE_STORE) ? "record writer" : "host",
	    RECORD_FLUSH_GRACE_MS);
	log_warnx("%s", note);
	tap_event(r->tap, r->session, "note", note, strlen(note));
	free(note);
}

/* A stage of the ending took too long: move on without it. */
static void
relay_grace_cb(evutil_socket_t fd, short events, void *arg)
{
	struct relay	*r = arg;
	struct half	*s2c = &r->half[DIR_S2C];
	int64_t		 hold;

	if (r->state == RELAY_DRAINING) {
		/*
		 * Reading its stdout is paused by a delay of ours (its queue
		 * is full): what is left in the pipe is read once the delay
		 * is due.  Wait for that, then the grace again.
		 */
		hold = relay_fault_hold_ms(r);
		if (!s2c->eof && (s2c->pause & (PAUSE_PEER | PAUSE_STORE)) ==
		    0 && (s2c->pause & PAUSE_FAULT) && hold > 0) {
			relay_grace_in(r, hold + RECORD_EXIT_GRACE_MS);
			return;
		}
		/*
		 * Paused because the host or the writer is behind: what is
		 * left in the pipe is not lost, only not read yet.  Wait on,
		 * up to the flush grace in all.
		 */
		if (s2c->pause != 0 && !s2c->eof && r->grace_waited <
		    RECORD_FLUSH_GRACE_MS) {
			r->grace_waited += RECORD_EXIT_GRACE_MS;
			relay_grace_in(r, RECORD_EXIT_GRACE_MS);
			return;
		}
		if (s2c->pause != 0 && !s2c->eof)
			relay_gave_up_paused(r);
		else
			log_warnx("the server exited but its stdout or stderr "
			    "is still open after %d ms (a child of it?): not "
			    "waiting", RECORD_EXIT_GRACE_MS);
		if (!s2c->eof)
			half_source_ended(s2c, "gave up after the server "
			    "exited");
		if (!r->err_eof) {
			r->err_eof = 1;
			bufferevent_disable(r->err_in, EV_READ);
		}
		relay_check_done(r);
	} else if (r->state == RELAY_FLUSHING) {
		/* A delay still holds lines for the host: wait for them. */
		if (inject_hold_ms(s2c) > 0) {
			relay_flush_grace(r);
			return;
		}
		log_warnx("the host did not read the last %zu bytes within "
		    "%d ms: giving up", half_backlog(s2c),
		    RECORD_FLUSH_GRACE_MS);
		half_close_out(s2c);
	}
}

/*
 * The server's stdout ended a while ago and it has not exited: it closed
 * its stdout and lives on.  The host saw the end of our stdout, as it
 * would have seen the server's; its stdin is still forwarded.
 */
static void
relay_stdout_check_cb(evutil_socket_t fd, short events, void *arg)
{
	struct relay	*r = arg;
	char		*note;

	/* Stopping (its stdin closed) or gone: its stdout had to end. */
	if (r->state != RELAY_RUNNING ||
	    child_get_state(r->child) != CHILD_RUNNING)
		return;
	xasprintf(&note, "the server (pid %ld) closed its stdout but is still "
	    "running: nothing more from it can reach the host, whose stdout "
	    "was closed too; its stdin and stderr are still relayed",
	    (long)child_pid(r->child));
	log_warnx("%s", note);
	tap_event(r->tap, r->session, "note", note, strlen(note));
	free(note);
}

static void
relay_child_exit_cb(struct child *c, void *arg)
{
	struct relay	*r = arg;
	struct timeval	 tv = { RECORD_EXIT_GRACE_MS / 1000,
			    (RECORD_EXIT_GRACE_MS % 1000) * 1000 };
	char		*text = child_exit_text(c);

	/* Nobody asked it to stop: say so whatever the log level. */
	if (!r->half[DIR_C2S].out_closed && !r->signalled)
		log_warnx("%s while the host was still connected", text);
	else
		log_info("%s", text);
	tap_event(r->tap, r->session, "exit", text, strlen(text));
	relay_reason(r, text);
	relay_end_now(r, text);
	free(text);
	relay_set_state(r, RELAY_DRAINING);
	evtimer_add(r->grace, &tv);
	relay_check_done(r);
}

static void
relay_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct relay	*r = arg;
	char		*note;

	/* With --faults, SIGHUP re-reads the rules instead. */
	if (sig == SIGHUP && inject_reload(r))
		return;
	xasprintf(&note, "mcpreel got %s: passed on to the server",
	    strsignal((int)sig));
	log_info("%s", note);
	tap_event(r->tap, r->session, "note", note, strlen(note));
	r->signalled = 1;
	child_signal(r->child, (int)sig);
	/*
	 * SIGINT and SIGTERM ask to stop, and the host may kill us soon
	 * after: the end is written now (and again when the server has
	 * really exited).  SIGHUP mostly asks a server to reload, and it
	 * carries on: the session is not over.
	 */
	if (sig != SIGHUP)
		relay_end_now(r, note);
	free(note);
}

/*
 * Block (how = SIG_BLOCK) or unblock (SIG_UNBLOCK) in the calling thread
 * the signals that ask a recording to stop: a thread started while they
 * are blocked keeps them blocked, and they go to the event loop's thread.
 */
void
record_stop_mask(int how)
{
	sigset_t	set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(how, &set, NULL);
}

/*
 * Run argv as the server and relay stdio between it and the host until the
 * server has exited and its last words reached the host.  Returns -1 only
 * when the server could not be started (res says why and the exit code).
 */
int
record_stdio(struct writer *w, struct wsession *s, char *const argv[],
    struct record_result *res)
{
	struct relay	 r;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	int		 fl_in, fl_out, code, i, rc = 0;
	char		*cause = NULL;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	memset(&r, 0, sizeof r);

	evthread_use_pthreads();
	r.base = endpoint_stdio_base_new();
	r.session = s;
	r.tap = tap_new(r.base, w, relay_resume_cb, &r);

	r.child = child_spawn(r.base, argv, relay_child_exit_cb, &r, &code,
	    &cause);
	if (r.child == NULL) {
		log_warnx("%s", cause);
		tap_event(r.tap, r.session, "note", cause, strlen(cause));
		res->exit_code = code;
		res->reason = cause;
		rc = -1;
		goto out;
	}

	fl_in = fcntl(STDIN_FILENO, F_GETFL);
	fl_out = fcntl(STDOUT_FILENO, F_GETFL);

	{
		char	*spawned = NULL, *tmp, **shown;

		/* The command line may hold a key: stored redacted. */
		shown = tap_redact_argv(argv);
		for (i = 0; shown[i] != NULL; i++) {
			xasprintf(&tmp, "%s%s%s", spawned ? spawned : "",
			    spawned ? " " : "", shown[i]);
			free(spawned);
			spawned = tmp;
		}
		redact_argv_free(shown);
		xasprintf(&tmp, "pid %ld: %s", (long)child_pid(r.child),
		    spawned);
		tap_event(r.tap, r.session, "spawn", tmp, strlen(tmp));
		free(tmp);
		free(spawned);
	}

	r.rbuf = xmalloc(RECORD_READ_MAX);
	if (relay_faults != NULL)
		r.inj = inject_new(&r, relay_faults);
	half_init(&r, DIR_C2S, STDIN_FILENO, 0, child_stdin_fd(r.child),
	    relay_durable);
	half_init(&r, DIR_S2C, child_stdout_fd(r.child), 1, STDOUT_FILENO,
	    relay_durable);
	frame_init(&r.err_fr);
	r.err_in = bufferevent_socket_new(r.base, child_stderr_fd(r.child),
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(r.err_in, relay_stderr_read_cb, NULL,
	    relay_stderr_event_cb, &r);
	bufferevent_enable(r.err_in, EV_READ);
	r.grace = evtimer_new(r.base, relay_grace_cb, &r);
	r.stdout_check = evtimer_new(r.base, relay_stdout_check_cb, &r);
	for (i = 0; i < 3; i++) {
		r.sigs[i] = evsignal_new(r.base, sigs[i], relay_signal_cb, &r);
		evsignal_add(r.sigs[i], NULL);
	}

	/* The server may already have exited before the loop ran. */
	if (child_get_state(r.child) == CHILD_EXITED &&
	    r.state == RELAY_RUNNING)
		relay_child_exit_cb(r.child, &r);

	record_loop_run(r.base, &r.moved);

	res->exit_code = child_exit_code(r.child);
	res->exit_status = child_exit_code(r.child);
	res->exit_signal = child_exit_signal(r.child);
	res->reason = xstrdup(r.reason != NULL ? r.reason :
	    "server exited");

	/*
	 * Freed, the events put back what the signals did before (death):
	 * blocked first, and the caller decides (record_stop_mask()).
	 */
	record_stop_mask(SIG_BLOCK);
	for (i = 0; i < 3; i++)
		event_free(r.sigs[i]);
	event_free(r.grace);
	event_free(r.stdout_check);
	bufferevent_free(r.err_in);
	inject_free(r.inj);
	for (i = 0; i < DIR_MAX; i++)
		half_free(&r.half[i]);
	free(r.rbuf);
	child_free(r.child);
	if (fl_in != -1)
		fcntl(STDIN_FILENO, F_SETFL, fl_in);
	if (fl_out != -1)
		fcntl(STDOUT_FILENO, F_SETFL, fl_out);
out:
	free(r.reason);
	tap_free(r.tap);
	event_base_free(r.base);
	return rc;
}
