/*
 * Recording over stdio.  The host runs us in place of the server; we spawn
 * the server and join the two with a relay of two symmetric halves:
 *
 *   host --stdin-->  half[c2s] --tap--> server stdin
 *   host <-stdout--  half[s2c] <-tap--  server stdout
 *                    server stderr --> our stderr + tap (events)
 *
 * Each half reads its source into one reused buffer and writes what it
 * read to the destination at once, from the read callback: bytes unchanged,
 * complete line or not, with no buffering and no write event in the usual
 * case.  Only what the destination does not take goes into a backlog,
 * written when it is writable again.  Then the bytes are copied for the
 * record and each line handed to the tap when its newline comes.  When a
 * backlog passes RECORD_MAX_OUTPUT we stop reading its source until it
 * drains (the le-proxy watermark idea), and when the writer's queue is full
 * we stop reading both sources: memory stays bounded whatever the peers do,
 * apart from the one message in flight.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "proxy.h"

/* Bytes waiting for a slow destination before its source stops being read. */
#define RECORD_MAX_OUTPUT	(4u * 1024 * 1024)
/* Largest single read from a source: a pipe's worth (see child.c). */
#define RECORD_READ_MAX		(1024 * 1024)
/*
 * After the server exits, how long its stdout and stderr may stay open
 * (a grandchild can hold them), then how long the host gets to read what
 * we still hold for it.
 */
#define RECORD_EXIT_GRACE_MS	2000
#define RECORD_FLUSH_GRACE_MS	10000
/*
 * When the server's stdout ends, how long to wait for it to exit before
 * saying it closed its stdout and lives on: an exiting server's stdout
 * often ends just before we learn that it exited.
 */
#define RECORD_STDOUT_CHECK_MS	500

enum pause_why {
	PAUSE_PEER = 0x1,	/* the destination is backed up */
	PAUSE_STORE = 0x2	/* the writer's queue is full */
};

enum relay_state {
	RELAY_RUNNING,		/* both peers up */
	RELAY_DRAINING,		/* the server exited: reading what is left */
	RELAY_FLUSHING,		/* giving the host what we still hold */
	RELAY_DONE,
	RELAY_MAX
};

static const char *relay_state_names[RELAY_MAX] = {
	"running", "draining", "flushing", "done"
};

struct relay;

/* One direction of the relay. */
struct half {
	struct relay		*r;
	enum dir		 dir;
	const char		*src_name;	/* for logs: where bytes come from */
	const char		*dst_name;
	int			 in_fd;		/* the source; -1 once closed */
	int			 out_fd;	/* the destination */
	int			 close_in;	/* in_fd is ours to close */
	int			 tee;		/* both ends are pipes: forward
						   with tee(2), no copy */
	struct event		*rd_ev;		/* in_fd readable (persistent) */
	struct event		*wr_ev;		/* out_fd writable: only while
						   the backlog holds bytes */
	struct evbuffer		*backlog;	/* read, not yet written */
	struct evbuffer		*held;		/* --durable: read, waiting
						   for its line's commit */
	struct line		 line;		/* being gathered for the record:
						   its bytes are forwarded already */
	int			 pause;		/* enum pause_why bits */
	int			 eof;		/* the source ended */
	int			 out_closed;	/* destination closed or dead */
};

struct relay {
	struct event_base	*base;
	struct wsession		*session;
	struct child		*child;
	struct tap		*tap;
	struct half		 half[DIR_MAX];
	char			*rbuf;		/* RECORD_READ_MAX, both halves */
	struct bufferevent	*err_in;	/* the server's stderr */
	struct framer		 err_fr;
	int			 err_eof;
	struct event		*sigs[3];
	struct event		*grace;
	struct event		*stdout_check;	/* RECORD_STDOUT_CHECK_MS */
	enum relay_state	 state;
	int			 grace_waited;	/* ms, while reading paused */
	int			 host_gone;
	int			 signalled;	/* we passed a signal on */
	char			*reason;	/* why the session ended */
	unsigned long		 moved;		/* reads that brought bytes */
};

static void	relay_read_cb(evutil_socket_t, short, void *);
static void	relay_write_cb(evutil_socket_t, short, void *);
static void	half_write_failed(struct half *, int);
static void	relay_check_done(struct relay *);
static void	half_send_held(struct half *);

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
static void
relay_reason(struct relay *r, const char *why)
{
	if (r->reason == NULL)
		r->reason = xstrdup(why);
}

static void
half_pause(struct half *h, int why, int on)
{
	int	before = h->pause;

	if (on)
		h->pause |= why;
	else
		h->pause &= ~why;
	if (h->rd_ev == NULL || h->eof)
		return;
	if (before == 0 && h->pause != 0)
		event_del(h->rd_ev);
	else if (before != 0 && h->pause == 0)
		event_add(h->rd_ev, NULL);
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

/*
 * The line just completed was past the record cap: it is recorded as its
 * first bytes with its full size and SHA-256, and a warning says so.
 */
static void
half_truncated(struct half *h, const struct msg *m)
{
	char	*note;

	xasprintf(&note, "a message of %lld bytes from %s is over the record "
	    "size cap (--max-record-size %zu): forwarded whole, recorded as "
	    "its first %zu bytes with its size and SHA-256",
	    (long long)m->wire_size, h->src_name, line_cap(), m->len);
	log_warnx("%s", note);
	tap_event(h->r->tap, h->r->session, "note", note, strlen(note));
	free(note);
}

/* The line is complete (it was forwarded as it came): record it. */
static void
half_complete(struct half *h)
{
	struct msg	*m;
	int		 d;

	m = line_finish(&h->line);
	if (m->flags & MSG_TRUNCATED)
		half_truncated(h, m);
	if (tap_message(h->r->tap, h->r->session, NULL, m)) {
		for (d = 0; d < DIR_MAX; d++)
			half_pause(&h->r->half[d], PAUSE_STORE, 1);
	}
}

/* Bytes in the backlog: what the destination has not taken yet. */
static size_t
half_backlog(const struct half *h)
{
	return evbuffer_get_length(h->backlog);
}

/*
 * Send n bytes to the destination: written at once when nothing waits
 * before them, the rest kept in the backlog until it is writable.
 */
static void
half_send(struct half *h, const char *p, size_t n)
{
	ssize_t	w;

	if (h->out_closed)
		return;
	while (n > 0 && half_backlog(h) == 0) {
		w = write(h->out_fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w == -1) {
			half_write_failed(h, errno);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
	if (n == 0)
		return;
	if (evbuffer_add(h->backlog, p, n) != 0)
		fatalx("cannot hold %zu bytes for %s", n, h->dst_name);
	event_add(h->wr_ev, NULL);
}

/*
 * Record n bytes just forwarded: gather them onto the current line, and
 * hand each line to the tap when its newline comes.  The newline search
 * only ever looks at bytes that have just arrived, so a huge line costs
 * linear time.
 */
static void
half_record(struct half *h, const char *p, size_t n)
{
	const char	*nl;
	size_t		 k;

	while (n > 0) {
		if ((nl = memchr(p, '\n', n)) == NULL) {
			line_add(&h->line, p, n, 0);
			return;
		}
		k = (size_t)(nl - p);
		line_add(&h->line, p, k, 1);
		half_complete(h);
		p += k + 1;
		n -= k + 1;
	}
}

/*
 * Close the destination once everything for it is written, so the peer
 * sees the end of file it would see without us: the server's stdin closes
 * (how it learns to stop), or the host's view of our stdout does.
 */
static void
half_close_out(struct half *h)
{
	struct relay	*r = h->r;
	int		 fd;

	if (h->out_closed)
		return;
	h->out_closed = 1;
	event_del(h->wr_ev);
	evbuffer_drain(h->backlog, half_backlog(h));
	if (h->dir == DIR_C2S) {
		close(h->out_fd);
		if (r->child != NULL)
			child_stop(r->child);
	} else {
		/* Keep fd 1 taken, so nothing else lands on it. */
		if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) != -1) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
	}
	h->out_fd = -1;
	relay_check_done(r);
}

/* The source ended: record what is left of a line, then close its peer. */
static void
half_source_ended(struct half *h, const char *why)
{
	char	*note;

	if (h->eof)
		return;
	if (h->line.wire > 0 || h->line.cur != NULL) {
		xasprintf(&note, "%s ended with %llu bytes after the last "
		    "newline; forwarded as they are", h->src_name,
		    (unsigned long long)h->line.wire);
		log_info("%s", note);
		tap_event(h->r->tap, h->r->session, "note", note, strlen(note));
		free(note);
		half_complete(h);
	}
	if (h->held != NULL && evbuffer_get_length(h->held) > 0) {
		tap_sync(h->r->tap);
		half_send_held(h);
	}
	log_debug("%s: %s", h->src_name, why);
	h->eof = 1;
	event_del(h->rd_ev);
	if (h->out_closed || half_backlog(h) == 0)
		half_close_out(h);
	relay_check_done(h->r);
}

/*
 * Forward what the source pipe holds to the destination pipe with tee(2)
 * (the kernel shares the pages: no copy through us), then read the same
 * bytes for the record.  Returns how many, or 0 when the plain way must
 * do: nothing to take, the destination full or closed, or no tee here.
 */
static ssize_t
half_tee(struct half *h, int fd, char *buf)
{
	ssize_t	n, got, k;

	if (!h->tee || h->out_closed || half_backlog(h) > 0)
		return 0;
	n = tee(fd, h->out_fd, RECORD_READ_MAX, SPLICE_F_NONBLOCK);
	if (n == -1 && errno == EINVAL)
		h->tee = 0;
	if (n <= 0)
		return 0;
	/* The bytes just forwarded are at the front of the pipe. */
	for (got = 0; got < n; got += k) {
		k = read(fd, buf + got, (size_t)(n - got));
		if (k == -1 && errno == EINTR) {
			k = 0;
			continue;
		}
		if (k <= 0)
			fatal("reading %s after tee", h->src_name);
	}
	return n;
}

/* Whether lines are committed before they are forwarded (--durable). */
static int	 relay_durable;

void
record_set_durable(int on)
{
	relay_durable = on;
}

/* --durable: send what is held (its lines are committed). */
static void
half_send_held(struct half *h)
{
	size_t	len = evbuffer_get_length(h->held);

	if (len == 0)
		return;
	half_send(h, (const char *)evbuffer_pullup(h->held, -1), len);
	evbuffer_drain(h->held, len);
}

/*
 * --durable: record first, and forward the lines that just completed only
 * once they are committed; the start of a line waits in held for its
 * newline (or for the source to end).  One commit serves all the lines of
 * a read.
 */
static void
half_durable(struct half *h, const char *buf, size_t n)
{
	const char	*nl = memrchr(buf, '\n', n);
	size_t		 k;

	half_record(h, buf, n);
	if (nl == NULL) {
		evbuffer_add(h->held, buf, n);
		/* Past the record cap a line streams through regardless. */
		if (h->line.digest != NULL)
			half_send_held(h);
		return;
	}
	k = (size_t)(nl - buf) + 1;
	evbuffer_add(h->held, buf, k);
	tap_sync(h->r->tap);
	half_send_held(h);
	evbuffer_add(h->held, nl + 1, n - k);
}

/* The source is readable: forward what it has, then record it. */
static void
relay_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct half	*h = arg;
	char		*buf = h->r->rbuf;
	ssize_t		 n;

	h->r->moved++;
	if ((n = half_tee(h, fd, buf)) > 0) {
		half_record(h, buf, (size_t)n);
		return;
	}
	n = read(fd, buf, RECORD_READ_MAX);
	if (n == -1 && (errno == EINTR || errno == EAGAIN ||
	    errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		if (n == -1)
			log_warn("reading %s failed", h->src_name);
		else if (h->dir == DIR_C2S)
			relay_reason(h->r, "host closed the connection");
		else if (h->r->state == RELAY_RUNNING) {
			struct timeval	tv = { 0, RECORD_STDOUT_CHECK_MS * 1000 };

			evtimer_add(h->r->stdout_check, &tv);
		}
		half_source_ended(h, n == 0 ? "end of file" : "read error");
		return;
	}
	if (h->held != NULL)
		half_durable(h, buf, (size_t)n);
	else {
		/* Forward first: the record can wait, the peer should not. */
		half_send(h, buf, (size_t)n);
		half_record(h, buf, (size_t)n);
	}
	if (!h->out_closed && half_backlog(h) >= RECORD_MAX_OUTPUT) {
		log_debug("%s is slow: pausing %s", h->dst_name, h->src_name);
		half_pause(h, PAUSE_PEER, 1);
	}
}

/* The destination is writable: write the backlog. */
static void
relay_write_cb(evutil_socket_t fd, short events, void *arg)
{
	struct half	*h = arg;
	int		 n;

	if (h->out_closed)
		return;
	n = evbuffer_write(h->backlog, fd);
	if (n == -1 && errno != EINTR && errno != EAGAIN &&
	    errno != EWOULDBLOCK) {
		half_write_failed(h, errno);
		return;
	}
	if ((h->pause & PAUSE_PEER) && half_backlog(h) <= RECORD_MAX_OUTPUT / 2)
		half_pause(h, PAUSE_PEER, 0);
	if (half_backlog(h) > 0)
		return;
	event_del(h->wr_ev);
	if (h->eof)
		half_close_out(h);
	else
		relay_check_done(h->r);
}

/*
 * Writing a destination failed: the server stopped reading its stdin, or
 * the host stopped reading our stdout.  What it sends on is still read and
 * recorded, so nothing the other side says is lost from the record.
 */
static void
half_write_failed(struct half *h, int error)
{
	struct relay	*r = h->r;
	char		*note;

	xasprintf(&note, "cannot write to %s (%s): %zu bytes not delivered",
	    h->dst_name, strerror(error), half_backlog(h));
	log_warnx("%s", note);
	tap_event(r->tap, r->session, "note", note, strlen(note));
	free(note);
	if (h->pause & PAUSE_PEER)
		half_pause(h, PAUSE_PEER, 0);
	half_close_out(h);
	if (h->dir == DIR_S2C && !r->host_gone) {
		r->host_gone = 1;
		relay_reason(r, "host stopped reading");
		/* As if the host had closed: the server is stopped. */
		half_close_out(&r->half[DIR_C2S]);
	}
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
	tap_event(r->tap, r->session, "stderr", line, len);
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

/* Finish once the server is gone and what it said has been passed on. */
static void
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
		{
			struct timeval tv = { RECORD_FLUSH_GRACE_MS / 1000,
			    (RECORD_FLUSH_GRACE_MS % 1000) * 1000 };

			evtimer_add(r->grace, &tv);
		}
	}
	flushed = s2c->out_closed || half_backlog(s2c) == 0;
	if (!flushed)
		return;
	relay_set_state(r, RELAY_DONE);
	event_base_loopbreak(r->base);
}

/* A stage of the ending took too long: move on without it. */
static void
relay_grace_cb(evutil_socket_t fd, short events, void *arg)
{
	struct relay	*r = arg;
	struct half	*s2c = &r->half[DIR_S2C];

	if (r->state == RELAY_DRAINING) {
		/*
		 * Reading its stdout is paused (the host or the writer is
		 * behind): what is left in the pipe is not lost, only not
		 * read yet.  Wait on, up to the flush grace in all.
		 */
		if (s2c->pause != 0 && !s2c->eof && r->grace_waited <
		    RECORD_FLUSH_GRACE_MS) {
			struct timeval	tv = { RECORD_EXIT_GRACE_MS / 1000,
			    (RECORD_EXIT_GRACE_MS % 1000) * 1000 };

			r->grace_waited += RECORD_EXIT_GRACE_MS;
			evtimer_add(r->grace, &tv);
			return;
		}
		log_warnx("the server exited but its stdout or stderr is "
		    "still open after %d ms (a child of it?): not waiting",
		    RECORD_EXIT_GRACE_MS);
		if (!s2c->eof)
			half_source_ended(s2c, "gave up after the server "
			    "exited");
		if (!r->err_eof) {
			r->err_eof = 1;
			bufferevent_disable(r->err_in, EV_READ);
		}
		relay_check_done(r);
	} else if (r->state == RELAY_FLUSHING) {
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

	xasprintf(&note, "mcpreel got %s: passed on to the server",
	    strsignal((int)sig));
	log_info("%s", note);
	tap_event(r->tap, r->session, "note", note, strlen(note));
	free(note);
	r->signalled = 1;
	child_signal(r->child, (int)sig);
}

static void
half_init(struct relay *r, enum dir d, int in_fd, int close_in, int out_fd)
{
	struct half	*h = &r->half[d];

	h->r = r;
	h->dir = d;
	line_init(&h->line, d);
	h->src_name = (d == DIR_C2S) ? "the host (stdin)" :
	    "the server (stdout)";
	h->dst_name = (d == DIR_C2S) ? "the server (stdin)" :
	    "the host (stdout)";
	h->in_fd = in_fd;
	h->close_in = close_in;
	h->out_fd = out_fd;
	h->tee = record_loop_is_pipe(in_fd) &&
	    record_loop_is_pipe(out_fd) && !relay_durable;
	if (relay_durable && (h->held = evbuffer_new()) == NULL)
		fatalx("cannot set up the relay for %s", h->src_name);
	log_debug("%s -> %s: %s", h->src_name, h->dst_name, h->tee ?
	    "pipes both sides: forwarded with tee(2)" : "read and write");
	evutil_make_socket_nonblocking(in_fd);
	evutil_make_socket_nonblocking(out_fd);
	h->rd_ev = event_new(r->base, in_fd, EV_READ | EV_PERSIST,
	    relay_read_cb, h);
	h->wr_ev = event_new(r->base, out_fd, EV_WRITE | EV_PERSIST,
	    relay_write_cb, h);
	h->backlog = evbuffer_new();
	if (h->rd_ev == NULL || h->wr_ev == NULL || h->backlog == NULL)
		fatalx("cannot set up the relay for %s", h->src_name);
	event_add(h->rd_ev, NULL);
}

/* Undo half_init: the events, the backlog and the fds that are ours. */
static void
half_free(struct half *h)
{
	line_clear(&h->line);
	if (h->rd_ev != NULL)
		event_free(h->rd_ev);
	if (h->wr_ev != NULL)
		event_free(h->wr_ev);
	if (h->backlog != NULL)
		evbuffer_free(h->backlog);
	if (h->held != NULL)
		evbuffer_free(h->held);
	if (h->close_in && h->in_fd != -1)
		close(h->in_fd);
	if (h->dir == DIR_C2S && !h->out_closed && h->out_fd != -1)
		close(h->out_fd);
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
	r.base = record_loop_base_new();
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
		char	*spawned = NULL, *tmp;

		for (i = 0; argv[i] != NULL; i++) {
			xasprintf(&tmp, "%s%s%s", spawned ? spawned : "",
			    spawned ? " " : "", argv[i]);
			free(spawned);
			spawned = tmp;
		}
		xasprintf(&tmp, "pid %ld: %s", (long)child_pid(r.child),
		    spawned);
		tap_event(r.tap, r.session, "spawn", tmp, strlen(tmp));
		free(tmp);
		free(spawned);
	}

	r.rbuf = xmalloc(RECORD_READ_MAX);
	half_init(&r, DIR_C2S, STDIN_FILENO, 0, child_stdin_fd(r.child));
	half_init(&r, DIR_S2C, child_stdout_fd(r.child), 1, STDOUT_FILENO);
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

	for (i = 0; i < 3; i++)
		event_free(r.sigs[i]);
	event_free(r.grace);
	event_free(r.stdout_check);
	bufferevent_free(r.err_in);
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
