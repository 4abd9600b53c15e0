/*
 * One half of the stdio relay (record.c): one direction, the host to the
 * server or the server to the host, served by one read callback and one
 * write callback; the direction is data.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "record_int.h"

/* Bytes waiting for a slow destination before its source stops being read. */
#define RECORD_MAX_OUTPUT	(4u * 1024 * 1024)

static void	half_write_failed(struct half *, int);
static void	half_send_held(struct half *);
static void	half_read_cb(evutil_socket_t, short, void *);

/* Pause or resume reading the source, for one enum pause_why reason. */
void
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

/*
 * The line just completed was past the record cap: it is recorded as its
 * first bytes with its full size and SHA-256, and a warning says so.
 */
static void
half_truncated(struct half *h, const struct msg *m)
{
	char	*note;

	/* Cut by the database's limit: say so, not a cap nobody chose. */
	if (line_cap_is_store())
		xasprintf(&note, "a message from %s is longer than SQLite can "
		    "store (%lld bytes): forwarded whole, recorded as its "
		    "first %zu bytes with its size and SHA-256", h->src_name,
		    (long long)m->wire_size, m->len);
	else
		xasprintf(&note, "a message of %lld bytes from %s is over the "
		    "record size cap (--max-record-size %zu): forwarded whole, "
		    "recorded as its first %zu bytes with its size and SHA-256",
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

/*
 * One whole line of this direction as a message for the record, under the
 * same record size cap as the lines gathered in pieces (a note when cut).
 */
struct msg *
half_line_msg(struct half *h, const char *p, size_t len)
{
	struct line	 l;
	struct msg	*m;

	line_init(&l, h->dir);
	line_add(&l, p, len, 1);
	m = line_finish(&l);
	if (m->flags & MSG_TRUNCATED)
		half_truncated(h, m);
	return m;
}

/* Bytes in the backlog: what the destination has not taken yet. */
size_t
half_backlog(const struct half *h)
{
	return evbuffer_get_length(h->backlog);
}

/*
 * Send n bytes to the destination: written at once when nothing waits
 * before them, the rest kept in the backlog until it is writable.
 */
void
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
void
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
void
half_close_out(struct half *h)
{
	struct relay	*r = h->r;
	int		 fd;

	if (h->out_closed)
		return;
	h->out_closed = 1;
	event_del(h->wr_ev);
	evbuffer_drain(h->backlog, half_backlog(h));
	half_pause(&r->half[!h->dir], PAUSE_ANSWER, 0);
	if (h->dir == DIR_C2S) {
		close(h->out_fd);
		relay_end_now(r, "the server's stdin was closed");
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

/*
 * Say that the source ended with n bytes after its last newline, and
 * whether they were forwarded (not after a close fault).
 */
void
half_partial(struct half *h, size_t n, int forwarded)
{
	char	*note;

	xasprintf(&note, "%s ended with %zu bytes after the last newline; "
	    "%s", h->src_name, n, forwarded ? "forwarded as they are" :
	    "not delivered (the server's side was closed by a fault)");
	log_info("%s", note);
	tap_event(h->r->tap, h->r->session, "note", note, strlen(note));
	free(note);
}

/* The source ended: record what is left of a line, then close its peer. */
void
half_source_ended(struct half *h, const char *why)
{
	if (h->eof)
		return;
	/* A line streaming through (fault rules) is recorded first. */
	if (h->line.wire > 0 || h->line.cur != NULL) {
		half_partial(h, (size_t)h->line.wire, 1);
		half_complete(h);
	}
	inject_source_ended(h);
	if (h->held != NULL && evbuffer_get_length(h->held) > 0) {
		tap_sync(h->r->tap);
		half_send_held(h);
	}
	log_debug("%s: %s", h->src_name, why);
	h->eof = 1;
	event_del(h->rd_ev);
	if (h->out_closed || (half_backlog(h) == 0 && inject_pending(h) == 0))
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
half_tee(struct half *h, int fd, char *buf, size_t max)
{
	ssize_t	n, got, k;

	if (!h->tee || h->out_closed || half_backlog(h) > 0)
		return 0;
	n = tee(fd, h->out_fd, max, SPLICE_F_NONBLOCK);
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
half_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct half	*h = arg;
	char		*buf = h->r->rbuf;
	size_t		 max = tap_read_max(h->r->tap, RECORD_READ_MAX);
	ssize_t		 n;

	h->r->moved++;
	if ((n = half_tee(h, fd, buf, max)) > 0) {
		half_record(h, buf, (size_t)n);
		return;
	}
	n = read(fd, buf, max);
	if (n == -1 && (errno == EINTR || errno == EAGAIN ||
	    errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		half_read_ended(h, n);
		return;
	}
	if (h->held != NULL)
		half_durable(h, buf, (size_t)n);
	else {
		/* Forward first: the record can wait, the peer should not. */
		half_send(h, buf, (size_t)n);
		half_record(h, buf, (size_t)n);
	}
	half_watermark(h);
}

/* Stop reading the source while the destination's backlog is too long. */
void
half_watermark(struct half *h)
{
	if (!h->out_closed && half_backlog(h) >= RECORD_MAX_OUTPUT) {
		log_debug("%s is slow: pausing %s", h->dst_name, h->src_name);
		half_pause(h, PAUSE_PEER, 1);
	}
}

/*
 * An answer injected in place of the other side (fault rules) went from
 * h's source back to it, through the other half: while that half's
 * backlog is too long, stop reading h's source, as if its own
 * destination were slow.
 */
void
half_answered(struct half *h)
{
	struct half	*o = &h->r->half[!h->dir];

	if (!o->out_closed && half_backlog(o) >= RECORD_MAX_OUTPUT) {
		log_debug("%s is slow with injected answers: pausing %s",
		    o->dst_name, h->src_name);
		half_pause(h, PAUSE_ANSWER, 1);
	}
}

/* A read of the source gave end of file (0) or an error (-1). */
void
half_read_ended(struct half *h, ssize_t n)
{
	if (n == -1)
		log_warn("reading %s failed", h->src_name);
	else if (h->dir == DIR_C2S)
		relay_reason(h->r, "host closed the connection");
	else if (h->r->state == RELAY_RUNNING) {
		struct timeval	tv = { 0, RECORD_STDOUT_CHECK_MS * 1000 };

		evtimer_add(h->r->stdout_check, &tv);
	}
	half_source_ended(h, n == 0 ? "end of file" : "read error");
}

/* The destination is writable: write the backlog. */
static void
half_write_cb(evutil_socket_t fd, short events, void *arg)
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
	if (half_backlog(h) <= RECORD_MAX_OUTPUT / 2) {
		if (h->pause & PAUSE_PEER)
			half_pause(h, PAUSE_PEER, 0);
		if (h->r->half[!h->dir].pause & PAUSE_ANSWER)
			half_pause(&h->r->half[!h->dir], PAUSE_ANSWER, 0);
	}
	if (half_backlog(h) > 0)
		return;
	event_del(h->wr_ev);
	if (h->eof && inject_pending(h) == 0)
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

void
half_init(struct relay *r, enum dir d, int in_fd, int close_in, int out_fd,
    int durable)
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
	/* With fault rules each line is held for a decision: no tee. */
	h->tee = record_loop_is_pipe(in_fd) &&
	    record_loop_is_pipe(out_fd) && !durable && r->inj == NULL;
	if (durable && (h->held = evbuffer_new()) == NULL)
		fatalx("cannot set up the relay for %s", h->src_name);
	log_debug("%s -> %s: %s", h->src_name, h->dst_name, h->tee ?
	    "pipes both sides: forwarded with tee(2)" : "read and write");
	evutil_make_socket_nonblocking(in_fd);
	evutil_make_socket_nonblocking(out_fd);
	h->rd_ev = event_new(r->base, in_fd, EV_READ | EV_PERSIST,
	    r->inj != NULL ? inject_read_cb : half_read_cb, h);
	h->wr_ev = event_new(r->base, out_fd, EV_WRITE | EV_PERSIST,
	    half_write_cb, h);
	h->backlog = evbuffer_new();
	if (h->rd_ev == NULL || h->wr_ev == NULL || h->backlog == NULL)
		fatalx("cannot set up the relay for %s", h->src_name);
	event_add(h->rd_ev, NULL);
}

/* Undo half_init: the events, the backlog and the fds that are ours. */
void
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
