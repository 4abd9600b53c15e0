/*
 * Fault injection over stdio (record --fault): the relay's line-at-a-time
 * path.  Without a rule the halves (half.c) forward bytes as they come,
 * complete line or not; with rules each line is held until its newline,
 * decided (fault_decide), then forwarded, changed, answered in the
 * server's place, dropped or held back, and recorded as what it is:
 * first a faults row, then the messages carrying its number.
 *
 * Each direction keeps a queue of lines waiting to go out: a delayed line
 * holds back the lines behind it in the same direction, so order is kept.
 * The queue is bounded like a backlog: past INJECT_QUEUE_MAX bytes the
 * sources stop being read.
 *
 * The record keeps each direction's messages in the order their sender
 * sent them: a line is recorded when it goes out, and one that never goes
 * out (role original: dropped, answered in the server's place, replaced)
 * in its turn, behind what its direction still holds (an item that is
 * recorded and not sent).  A line still held when the session ends, or
 * whose destination has closed, was not delivered: it is recorded as
 * original, whatever it was queued as, and a note says how many.
 *
 * The requests it remembers (methods of answers, timeouts) are kept by
 * inject_req.c.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fault.h"
#include "record_int.h"

/*
 * A line longer than this is not held for a decision: it is forwarded as
 * it comes, as without rules, and no fault applies to it.  Holding more
 * would cost memory in proportion to what a peer sends.
 */
#define INJECT_LINE_MAX		((size_t)64 * 1024 * 1024)
/* Bytes queued in one direction before its source stops being read. */
#define INJECT_QUEUE_MAX	((size_t)4 * 1024 * 1024)
/* A line waiting to go out. */
struct inject_item {
	TAILQ_ENTRY(inject_item) entry;
	int64_t			 due;		/* monotonic ns: not before */
	char			*bytes;		/* with its newline if nl */
	size_t			 len;		/* without it */
	int			 nl;
	int64_t			 fault;		/* for the record */
	int			 role;
	int			 send;		/* 0: recorded only (never
						   delivered, role original) */
	struct msg		*msg;		/* recorded only: made already
						   (bytes is NULL) */
};
TAILQ_HEAD(inject_queue, inject_item);

/* One direction's state. */
struct inject_dir {
	struct inject		*ij;
	enum dir		 dir;
	struct evbuffer		*in;		/* a line being gathered */
	int			 streaming;	/* past INJECT_LINE_MAX: the
						   rest of it goes as it comes */
	struct inject_queue	 queue;
	size_t			 queued;	/* bytes in it */
	struct event		*timer;		/* the head is due */
	size_t			 undelivered;	/* its destination closed */
	struct line		 late;		/* after a close fault, a line
						   past INJECT_LINE_MAX: kept
						   for the record, within its
						   cap, never sent */
	int			 late_on;
};

struct inject {
	struct relay		*r;
	struct fault_set	*set;
	record_reload_cb	 reload;
	void			*reload_arg;
	struct inject_dir	 d[DIR_MAX];
	struct inject_reqs	*rq;		/* requests remembered */
	int64_t			 closed;	/* the close fault that ended the
						   server's side, or 0 */
	int			 full;		/* a queue passed its maximum,
						   and they are not both under
						   half yet */
};

static void	inject_flush(struct inject_dir *);
static void	inject_partial(struct half *);
static void	inject_queue(struct inject *, enum dir, const char *, size_t,
		    int, int64_t, int64_t, int, int);

/*
 * Pause or resume reading each source for what fault injection holds.
 * Past INJECT_QUEUE_MAX in either queue both sources stop (an injected
 * answer fills the other direction's queue) until both are under half.
 * A line over INJECT_LINE_MAX stops its own source until its queue is
 * empty and it can stream through.  A source whose line is streaming is
 * never stopped here: ending that line is the only way its queue drains;
 * it is paced by its destination as without rules.
 */
static void
inject_pauses(struct inject *ij)
{
	struct inject_dir	*id;
	size_t			 q0 = ij->d[0].queued, q1 = ij->d[1].queued;
	int			 d, on;

	if (q0 > INJECT_QUEUE_MAX || q1 > INJECT_QUEUE_MAX)
		ij->full = 1;
	else if (q0 <= INJECT_QUEUE_MAX / 2 && q1 <= INJECT_QUEUE_MAX / 2)
		ij->full = 0;
	for (d = 0; d < DIR_MAX; d++) {
		id = &ij->d[d];
		on = !id->streaming && (ij->full ||
		    (evbuffer_get_length(id->in) > INJECT_LINE_MAX &&
		    !TAILQ_EMPTY(&id->queue)));
		half_pause(&ij->r->half[d], PAUSE_FAULT, on);
	}
}

/* Record a message made already (the tap takes it). */
static void
inject_record_msg(struct inject *ij, struct msg *m)
{
	struct relay	*r = ij->r;
	int		 i;

	if (tap_message(r->tap, r->session, NULL, m)) {
		for (i = 0; i < DIR_MAX; i++)
			half_pause(&r->half[i], PAUSE_STORE, 1);
	}
}

/* Record len bytes of direction d as fault n's role (0, 0: plain). */
static void
inject_record(struct inject *ij, enum dir d, const char *p, size_t len,
    int64_t n, int role)
{
	struct msg	*m;

	m = half_line_msg(&ij->r->half[d], p, len);
	m->fault = n;
	m->fault_role = role;
	inject_record_msg(ij, m);
}

/*
 * The role a line of direction d is recorded with when it was not
 * delivered: original (the receiver did not get it), unless mcpreel made it
 * for the host (injected, which readers leave out as the host's view).  One
 * made for the server is original too: readers would take an injected c2s
 * message as one the server got.
 */
static int
inject_undelivered_role(enum dir d, int role)
{
	return role == FAULT_ROLE_INJECTED && d == DIR_S2C ? role :
	    FAULT_ROLE_ORIGINAL;
}

/*
 * Send a line now: record it, then forward it (--durable: committed).  A
 * record-only item, or a line for a destination that has closed, is only
 * recorded (as not delivered).
 */
static void
inject_send(struct inject_dir *id, struct inject_item *it)
{
	struct half	*h = &id->ij->r->half[id->dir];

	if (it->msg != NULL) {
		inject_record_msg(id->ij, it->msg);
		it->msg = NULL;
		return;
	}
	if (!it->send || h->out_closed) {
		if (it->send)
			id->undelivered++;
		inject_record(id->ij, id->dir, it->bytes, it->len, it->fault,
		    inject_undelivered_role(id->dir, it->role));
		return;
	}
	inject_record(id->ij, id->dir, it->bytes, it->len, it->fault,
	    it->role);
	if (h->held != NULL)
		tap_sync(id->ij->r->tap);
	half_send(h, it->bytes, it->len + (it->nl ? 1 : 0));
}

/*
 * A line for direction d to go out at due (0: now), after what is queued
 * before it, recorded then as fault n's role.
 */
static void
inject_out(struct inject *ij, enum dir d, const char *p, size_t len, int nl,
    int64_t due, int64_t n, int role)
{
	inject_queue(ij, d, p, len, nl, due, n, role, 1);
}

/*
 * A line of direction d that never goes out (fault n's original): recorded
 * now when nothing of its direction is held, else in its turn.
 */
static void
inject_original(struct inject *ij, enum dir d, const char *p, size_t len,
    int64_t n)
{
	if (TAILQ_EMPTY(&ij->d[d].queue))
		inject_record(ij, d, p, len, n, FAULT_ROLE_ORIGINAL);
	else
		inject_queue(ij, d, p, len, 1, 0, n, FAULT_ROLE_ORIGINAL, 0);
}

/* Queue a line for direction d (send 0: to be recorded only). */
static void
inject_queue(struct inject *ij, enum dir d, const char *p, size_t len, int nl,
    int64_t due, int64_t n, int role, int send)
{
	struct inject_dir	*id = &ij->d[d];
	struct inject_item	*it;

	it = xcalloc(1, sizeof *it);
	it->bytes = xmalloc(len + 1);
	memcpy(it->bytes, p, len);
	it->bytes[len] = '\n';
	it->len = len;
	it->nl = nl;
	it->due = due;
	it->fault = n;
	it->role = role;
	it->send = send;
	TAILQ_INSERT_TAIL(&id->queue, it, entry);
	id->queued += len + 1;
	inject_flush(id);
	inject_pauses(ij);
}

/*
 * A line of direction d gathered after a close fault (m, the tap's): fault
 * n's original, recorded now when nothing of its direction is held, else
 * in its turn.
 */
static void
inject_closed_msg(struct inject *ij, enum dir d, struct msg *m)
{
	struct inject_dir	*id = &ij->d[d];
	struct inject_item	*it;

	m->fault = ij->closed;
	m->fault_role = FAULT_ROLE_ORIGINAL;
	if (TAILQ_EMPTY(&id->queue)) {
		inject_record_msg(ij, m);
		return;
	}
	it = xcalloc(1, sizeof *it);
	it->msg = m;
	TAILQ_INSERT_TAIL(&id->queue, it, entry);
	id->queued += 1;
	inject_flush(id);
}

/*
 * The end of a line of direction d after a close fault (p, k: its last
 * bytes): it reaches nobody, and is recorded under the close in its turn.
 */
static void
inject_after_close(struct inject_dir *id, const char *p, size_t k)
{
	struct inject	*ij = id->ij;
	char		*line;
	size_t		 have;

	if (id->late_on) {
		line_add(&id->late, p, k, 0);
		id->late_on = 0;
		inject_closed_msg(ij, id->dir, line_finish(&id->late));
		return;
	}
	have = evbuffer_get_length(id->in);
	line = xmalloc(have + k + 1);
	evbuffer_remove(id->in, line, have);
	memcpy(line + have, p, k);
	inject_original(ij, id->dir, line, have + k, ij->closed);
	free(line);
}

/* Send what is due at the head of a direction's queue; wait for the rest. */
static void
inject_flush(struct inject_dir *id)
{
	struct inject_item	*it;
	struct relay		*r = id->ij->r;
	struct half		*h = &r->half[id->dir];
	int64_t			 now = clock_mono_ns(), wait;
	struct timeval		 tv;

	/* A line streaming through must end before anything else goes. */
	if (id->streaming)
		return;
	while ((it = TAILQ_FIRST(&id->queue)) != NULL) {
		if (it->due > now) {
			wait = (it->due - now + 999) / 1000;
			tv.tv_sec = wait / 1000000;
			tv.tv_usec = wait % 1000000;
			evtimer_add(id->timer, &tv);
			break;
		}
		TAILQ_REMOVE(&id->queue, it, entry);
		id->queued -= it->len + 1;
		inject_send(id, it);
		free(it->bytes);
		free(it);
	}
	inject_pauses(id->ij);
	if (TAILQ_EMPTY(&id->queue) && h->eof && !h->out_closed &&
	    half_backlog(h) == 0)
		half_close_out(h);
	else if (TAILQ_EMPTY(&id->queue))
		relay_check_done(id->ij->r);
}

/* The head of a queue is due. */
static void
inject_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	inject_flush(arg);
}

/*
 * Milliseconds until the last line a direction holds is due (0: none is
 * held for later).
 */
int64_t
inject_hold_ms(const struct half *h)
{
	const struct inject_item	*it;
	int64_t				 last = 0, now = clock_mono_ns();

	if (h->r->inj == NULL)
		return 0;
	TAILQ_FOREACH(it, &h->r->inj->d[h->dir].queue, entry) {
		if (it->due > last)
			last = it->due;
	}
	return last > now ? (last - now + 999999) / 1000000 : 0;
}

/* Bytes a direction holds back (queued or being gathered): 0 when none. */
size_t
inject_pending(const struct half *h)
{
	const struct inject_dir	*id;

	if (h->r->inj == NULL)
		return 0;
	id = &h->r->inj->d[h->dir];
	return id->queued;
}

/* close: the server's pipes closed as if it died, or SIGKILL. */
static void
inject_close(struct inject *ij, const struct fault_hit *hit, int64_t n)
{
	struct relay	*r = ij->r;
	struct half	*s2c = &r->half[DIR_S2C];
	char		*why;

	/* From now on nothing more is decided or delivered (inject_read). */
	ij->closed = n;
	xasprintf(&why, "fault #%lld (rule %d) %s", (long long)n, hit->rule,
	    hit->close == FAULT_CLOSE_KILL ? "killed the server (SIGKILL)" :
	    "closed the server's stdin and stdout");
	relay_reason(r, why);
	tap_event(r->tap, r->session, "note", why, strlen(why));
	free(why);
	r->signalled = 1;
	if (hit->close == FAULT_CLOSE_KILL) {
		child_signal(r->child, SIGKILL);
		return;
	}
	/* What the server says from now on reaches nobody. */
	if (!s2c->eof) {
		half_source_ended(s2c, "closed by a fault");
		if (s2c->in_fd != -1) {
			close(s2c->in_fd);
			s2c->in_fd = -1;
		}
	}
	half_close_out(&r->half[DIR_C2S]);
}

/* Apply a decision to one line of direction d. */
static void
inject_apply(struct inject *ij, enum dir d, const char *p, size_t len,
    const struct scan *sc, struct fault_hit *hit)
{
	struct wfault		 f;
	char			*id, *method;
	int64_t			 n, now;

	memset(&f, 0, sizeof f);
	n = writer_session_next_fault(ij->r->session);
	/* The faults row names them only up to FAULT_KEEP_MAX bytes. */
	id = inject_id_dup(p, sc);
	method = inject_method_dup(p, sc);
	if (method == NULL && id != NULL && d == DIR_S2C &&
	    inject_reqs_method_of(ij->rq, id) != NULL)
		method = xstrdup(inject_reqs_method_of(ij->rq, id));
	f.n = n;
	f.ts_ns = clock_wall_ns();
	f.mono_ns = now = clock_mono_ns();
	f.rule_index = hit->rule;
	f.rule = hit->rule_text;
	f.action = fault_action_name(hit->action);
	f.has_dir = 1;
	f.dir = d;
	f.method = method;
	f.rpc_id = id;
	f.detail = hit->detail;
	tap_fault(ij->r->tap, ij->r->session, &f);
	log_debug("fault #%lld (rule %d): %s", (long long)n, hit->rule,
	    hit->detail != NULL ? hit->detail : fault_action_name(hit->action));

	switch (hit->action) {
	case FAULT_DELAY:
		inject_out(ij, d, p, len, 1, now + hit->delay_ms * 1000000,
		    n, FAULT_ROLE_DELAYED);
		break;
	case FAULT_ERROR:
	case FAULT_TOOL_ERROR:
		inject_original(ij, d, p, len, n);
		if (hit->bytes != NULL) {
			inject_out(ij, d == DIR_C2S ? DIR_S2C : DIR_C2S,
			    hit->bytes, hit->len, 1, 0, n,
			    FAULT_ROLE_INJECTED);
			half_answered(&ij->r->half[d]);
		}
		break;
	case FAULT_DROP:
		inject_original(ij, d, p, len, n);
		break;
	case FAULT_TIMEOUT:
		/* An answer whose request's fault is forgotten: dropped. */
		if (d == DIR_S2C) {
			inject_original(ij, d, p, len, n);
			break;
		}
		if (id != NULL)
			inject_reqs_timeout(ij->rq, id, n,
			    now + hit->delay_ms * 1000000);
		inject_out(ij, d, p, len, 1, 0, n, FAULT_ROLE_NONE);
		break;
	case FAULT_CORRUPT:
		if (hit->corrupt == FAULT_CORRUPT_STRAY) {
			if (hit->bytes != NULL)
				inject_out(ij, d, hit->bytes, hit->len, 1, 0,
				    n, FAULT_ROLE_INJECTED);
			inject_out(ij, d, p, len, 1, 0, n, FAULT_ROLE_NONE);
			break;
		}
		inject_original(ij, d, p, len, n);
		if (hit->bytes != NULL)
			inject_out(ij, d, hit->bytes, hit->len, 1, 0, n,
			    FAULT_ROLE_INJECTED);
		break;
	case FAULT_MUTATE:
		inject_original(ij, d, p, len, n);
		if (hit->bytes != NULL)
			inject_out(ij, d, hit->bytes, hit->len, 1, 0, n,
			    FAULT_ROLE_INJECTED);
		break;
	case FAULT_CLOSE:
		inject_original(ij, d, p, len, n);
		inject_close(ij, hit, n);
		break;
	default:
		/* http-status and the like were refused at start-up. */
		inject_out(ij, d, p, len, 1, 0, 0, FAULT_ROLE_NONE);
		break;
	}
	free(id);
	free(method);
}

/* One complete line of direction d (no newline): decide, then act. */
static void
inject_line(struct inject *ij, enum dir d, const char *p, size_t len)
{
	struct fault_hit	 hit;
	struct scan		 sc;
	char			*id;
	int			 answer, handled = 0;
	int64_t			 n;

	scan_message(p, len, &sc);
	answer = d == DIR_S2C && (sc.kind == KIND_RESPONSE ||
	    sc.kind == KIND_ERROR);
	if (d == DIR_C2S && sc.kind == KIND_REQUEST)
		inject_reqs_remember(ij->rq, p, &sc);
	/*
	 * The answer to a request under a timeout rule belongs to the
	 * request's fault while that is remembered, whatever the rules say
	 * of it now (they may have been reloaded since the request): it is
	 * swallowed, and not decided (no rule counts it, no draw is made).
	 */
	if (answer && inject_reqs_timeouts(ij->rq) &&
	    (id = inject_id_dup(p, &sc)) != NULL) {
		handled = inject_reqs_timed_out(ij->rq, id, &n);
		free(id);
		if (handled)
			inject_original(ij, DIR_S2C, p, len, n);
	}
	if (handled)
		return;
	memset(&hit, 0, sizeof hit);
	if (fault_decide(ij->set, d, p, len, 0, &hit) == 1)
		inject_apply(ij, d, p, len, &sc, &hit);
	else
		inject_out(ij, d, p, len, 1, 0, 0, FAULT_ROLE_NONE);
	fault_hit_clear(&hit);
}

/*
 * The source of h gave n bytes: gather them into lines, each decided and
 * sent when its newline comes.  A line past INJECT_LINE_MAX streams
 * through undecided (once the lines before it are out).
 */
static void
inject_read(struct half *h, const char *p, size_t n)
{
	struct inject		*ij = h->r->inj;
	struct inject_dir	*id = &ij->d[h->dir];
	const char		*nl;
	char			*line;
	size_t			 k, have;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl != NULL ? (size_t)(nl - p) : n;
		if (id->streaming) {
			/* After a close fault it reaches nobody. */
			if (ij->closed == 0)
				half_send(h, p, k + (nl != NULL ? 1 : 0));
			half_record(h, p, k + (nl != NULL ? 1 : 0));
			if (nl != NULL) {
				id->streaming = 0;
				inject_flush(id);
			}
		} else if (nl != NULL && ij->closed != 0) {
			/*
			 * After a close fault what either side says reaches
			 * nobody: recorded, not delivered, under the close.
			 */
			inject_after_close(id, p, k);
		} else if (id->late_on)
			line_add(&id->late, p, k, 0);
		else if (nl != NULL) {
			have = evbuffer_get_length(id->in);
			if (have == 0)
				inject_line(ij, h->dir, p, k);
			else {
				/*
				 * Taken out first: a close the line causes
				 * sends what the gatherer holds.
				 */
				line = xmalloc(have + k);
				evbuffer_remove(id->in, line, have);
				memcpy(line + have, p, k);
				inject_line(ij, h->dir, line, have + k);
				free(line);
			}
		} else {
			evbuffer_add(id->in, p, k);
			have = evbuffer_get_length(id->in);
			if (have > INJECT_LINE_MAX && ij->closed != 0) {
				/*
				 * After a close fault nothing streams: it is
				 * kept for the record, within its cap.
				 */
				line_init(&id->late, h->dir);
				line_add(&id->late, (const char *)
				    evbuffer_pullup(id->in, -1), have, 0);
				evbuffer_drain(id->in, have);
				id->late_on = 1;
			} else if (have > INJECT_LINE_MAX &&
			    TAILQ_EMPTY(&id->queue)) {
				log_info("a line from %s is over %zu bytes: "
				    "forwarded as it comes, no fault applies",
				    h->src_name, INJECT_LINE_MAX);
				id->streaming = 1;
				half_send(h, (const char *)
				    evbuffer_pullup(id->in, -1), have);
				half_record(h, (const char *)
				    evbuffer_pullup(id->in, -1), have);
				evbuffer_drain(id->in, have);
			}
			inject_pauses(ij);
		}
		if (nl == NULL) {
			/* A close fault ended the source in this read. */
			if (h->eof)
				inject_partial(h);
			break;
		}
		p += k + 1;
		n -= k + 1;
	}
}

/* The source of a half is readable, with fault rules: line at a time. */
void
inject_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct half	*h = arg;
	char		*buf = h->r->rbuf;
	ssize_t		 n;

	h->r->moved++;
	n = read(fd, buf, RECORD_READ_MAX);
	if (n == -1 && (errno == EINTR || errno == EAGAIN ||
	    errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		half_read_ended(h, n);
		return;
	}
	inject_read(h, buf, (size_t)n);
	half_watermark(h);
}

/*
 * The source of h ended: what is left of a line goes out as it is, after
 * what is queued, with the note the plain path gives.  A line that was
 * streaming through has ended: what waited behind it goes now.
 */
void
inject_source_ended(struct half *h)
{
	struct inject_dir	*id;

	if (h->r->inj == NULL)
		return;
	id = &h->r->inj->d[h->dir];
	if (id->streaming) {
		id->streaming = 0;
		inject_flush(id);
	}
	inject_partial(h);
}

/*
 * What is left of a line when the source of h ended goes out as it is
 * after what is queued (recorded only, after a close fault).
 */
static void
inject_partial(struct half *h)
{
	struct inject_dir	*id = &h->r->inj->d[h->dir];
	size_t			 have;

	if (id->late_on) {
		half_partial(h, (size_t)id->late.wire, 0);
		inject_after_close(id, "", 0);
		return;
	}
	if ((have = evbuffer_get_length(id->in)) == 0)
		return;
	half_partial(h, have, h->r->inj->closed == 0);
	if (h->r->inj->closed != 0) {
		/* After a close fault: not delivered, in its turn. */
		inject_after_close(id, "", 0);
		return;
	}
	inject_out(h->r->inj, h->dir, (const char *)evbuffer_pullup(id->in,
	    -1), have, 0, 0, 0, FAULT_ROLE_NONE);
	evbuffer_drain(id->in, have);
}

/*
 * SIGHUP with --faults: the rules again.  A bad file keeps the rules in
 * force, and says why.  0 when there is nothing to reload (no file: the
 * signal goes to the server), 1 when handled.
 */
int
inject_reload(struct relay *r)
{
	struct inject	*ij = r->inj;
	char		*cause = NULL, *note;

	if (ij == NULL || ij->reload == NULL)
		return 0;
	if (ij->reload(ij->set, ij->reload_arg, &cause) != 0) {
		xasprintf(&note, "SIGHUP: the fault rules were not reloaded, "
		    "the old ones stay: %s", cause);
		log_warnx("%s", note);
	} else
		xasprintf(&note, "SIGHUP: fault rules reloaded: %zu",
		    fault_set_count(ij->set));
	/* fault_opts_reload logged the count already. */
	tap_event(r->tap, r->session, "note", note, strlen(note));
	free(note);
	free(cause);
	return 1;
}

/* The fault path of relay r, from rf (the set stays the caller's). */
struct inject *
inject_new(struct relay *r, const struct record_faults *rf)
{
	struct inject	*ij = xcalloc(1, sizeof *ij);
	int		 d;

	ij->r = r;
	ij->set = rf->set;
	ij->reload = rf->reload;
	ij->reload_arg = rf->arg;
	ij->rq = inject_reqs_new();
	for (d = 0; d < DIR_MAX; d++) {
		ij->d[d].ij = ij;
		ij->d[d].dir = d;
		TAILQ_INIT(&ij->d[d].queue);
		ij->d[d].in = evbuffer_new();
		ij->d[d].timer = evtimer_new(r->base, inject_timer_cb,
		    &ij->d[d]);
		if (ij->d[d].in == NULL || ij->d[d].timer == NULL)
			fatalx("cannot set up fault injection");
	}
	if (rf->note != NULL)
		tap_event(r->tap, r->session, "note", rf->note,
		    strlen(rf->note));
	return ij;
}

/*
 * Free the fault path.  What is still queued (the session ended while a
 * delay held it) was never sent: it is recorded all the same, as not
 * delivered (role original), with a note saying how many, so that the
 * record loses nothing that was read and claims nothing that was not.
 */
void
inject_free(struct inject *ij)
{
	struct inject_item	*it;
	size_t			 left;
	int			 d;
	char			*note;

	if (ij == NULL)
		return;
	for (d = 0; d < DIR_MAX; d++) {
		left = ij->d[d].undelivered;
		while ((it = TAILQ_FIRST(&ij->d[d].queue)) != NULL) {
			TAILQ_REMOVE(&ij->d[d].queue, it, entry);
			if (it->msg != NULL)
				inject_record_msg(ij, it->msg);
			else
				inject_record(ij, d, it->bytes, it->len,
				    it->fault, inject_undelivered_role(d,
				    it->role));
			if (it->send)
				left++;
			free(it->bytes);
			free(it);
		}
		if (left > 0) {
			xasprintf(&note, "messages for %s held back by faults "
			    "and never delivered: %zu, recorded as such (role "
			    "original)", ij->r->half[d].dst_name, left);
			log_warnx("%s", note);
			tap_event(ij->r->tap, ij->r->session, "note", note,
			    strlen(note));
			free(note);
		}
		line_clear(&ij->d[d].late);
		evbuffer_free(ij->d[d].in);
		event_free(ij->d[d].timer);
	}
	inject_reqs_free(ij->rq);
	free(ij);
}
