/*
 * The mock server: plays the server of a recorded session.  Each live
 * request is answered with the recorded answer to the matching recorded
 * request (match.c), under the live id; what the server did while that
 * request was in flight is played first (progress with the live progress
 * token, log messages, its own requests to the client, whose answers are
 * awaited), and what it sent unasked after the answer follows it.
 * Nothing here ever contacts a real server, unless misses are to be
 * forwarded (--on-miss forward): then a miss goes to the fallback server
 * as it came, its answer comes back under the same id, and the exchange is
 * recorded as a session of its own.  The client's lifecycle messages
 * (initialize, notifications/initialized) are passed to the fallback too,
 * so it is ready when the first miss comes.  With --record-mode the
 * client's side of the fallback's traffic is recorded too (mock_cassette),
 * for the cassette.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "formats.h"
#include "replay.h"
#include "store.h"

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

static void	play_step(struct play *);
static void	mock_maybe_exit(struct mock *);

/* --otlp: a message between the client and the mock, as a span's part. */
static void
mock_otlp(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	struct msg	*m;

	if (mk->opt->otlp == NULL || bytes == NULL || len == 0)
		return;
	m = msg_new(d, bytes, len);
	otlp_message(mk->opt->otlp, mk->opt->otlp_sess, m);
	msg_free(m);
}

/*
 * A message for the client, through the fault edge when there are rules
 * (fb: the message as the fallback sent it, which the edge records once
 * its rules have decided; NULL: the mock's own).
 */
static void
mock_out(struct mock *mk, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len, const char *fb, size_t fblen)
{
	mock_otlp(mk, DIR_S2C, bytes, len);
	if (mk->mf != NULL)
		mockfault_out(mk->mf, how, er, bytes, len, fb, fblen);
	else if (how == MOCKFAULT_SEND)
		endpoint_send(mk->ep, bytes, len);
	else if (how == MOCKFAULT_REQ_SEND)
		ereq_send(mk->ep, er, bytes, len);
	else
		ereq_end(mk->ep, er, bytes, len);
}

/* Count the answers the endpoint has written since we last looked. */
static void
mock_settle(struct mock *mk)
{
	uint64_t	queued, written;

	endpoint_progress(mk->ep, &queued, &written);
	while (mk->pend0 < mk->npend && mk->pend[mk->pend0].mark <= written) {
		(*mk->pend[mk->pend0].counter)++;
		mk->pend0++;
	}
	if (mk->pend0 == mk->npend)
		mk->pend0 = mk->npend = 0;
}

/*
 * An answer was just handed to the endpoint: count it in *counter once it
 * is written (at once if it is, or the endpoint does not count).  Only
 * answers not yet written are held, so this grows no faster than what
 * the endpoint holds for a client that does not read.
 */
static void
mock_count(struct mock *mk, uint64_t *counter)
{
	uint64_t	queued, written;

	mock_settle(mk);
	endpoint_progress(mk->ep, &queued, &written);
	if (written >= queued) {
		(*counter)++;
		return;
	}
	if (mk->pend0 > 0 && mk->pend0 >= mk->npend / 2) {
		memmove(mk->pend, mk->pend + mk->pend0, (mk->npend -
		    mk->pend0) * sizeof *mk->pend);
		mk->npend -= mk->pend0;
		mk->pend0 = 0;
	}
	mk->pend = xreallocarray(mk->pend, mk->npend + 1, sizeof *mk->pend);
	mk->pend[mk->npend].mark = queued;
	mk->pend[mk->npend++].counter = counter;
}

/* Recorded message i, as JSON to send (caller frees), read from disk. */
static json_t *
mock_copy(struct mock *mk, size_t i)
{
	json_t	*shared = mfind_message(mk->md, i), *v;

	v = json_deep_copy(shared);
	json_decref(shared);
	return v;
}

static char *
mock_dump(const json_t *v)
{
	char	*s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_ENCODE_ANY);

	return s != NULL ? s : xstrdup("null");
}

static void
play_free(struct play *pl)
{
	struct mock	*mk = pl->mk;

	TAILQ_REMOVE(&mk->plays, pl, entry);
	/* Played: read from disk again if asked for again. */
	mfind_entry_free(pl->e);
	json_decref(pl->live_id);
	json_decref(pl->live_token);
	json_decref(pl->rec_token);
	free(pl->waiting);
	event_free(pl->timer);
	free(pl);
	if (!TAILQ_EMPTY(&mk->misses))
		event_active(mk->kick_ev, EV_TIMEOUT, 0);
	mock_maybe_exit(mk);
}

/* The progress token a request carries, or NULL. */
static json_t *
progress_token(const json_t *msg)
{
	return json_object_get(json_object_get(json_object_get(msg,
	    "params"), "_meta"), "progressToken");
}

/*
 * Send one recorded server message for a play: a notification with the
 * live progress token, or a request under an id of ours (then wait).
 */
static void
play_send_item(struct play *pl, const struct mitem *it, int after)
{
	struct mock	*mk = pl->mk;
	json_t		*msg = mock_copy(mk, it->msg), *params, *tok;
	char		*s, *id;

	if (msg == NULL)
		return;
	params = json_object_get(msg, "params");
	tok = json_object_get(params, "progressToken");
	if (tok != NULL && pl->rec_token != NULL && pl->live_token != NULL &&
	    json_equal(tok, pl->rec_token))
		json_object_set(params, "progressToken", pl->live_token);
	if (json_object_get(msg, "id") != NULL &&
	    json_object_get(msg, "method") != NULL) {
		xasprintf(&id, "mcpreel-mock-%llu",
		    (unsigned long long)++mk->next_id);
		json_object_set_new(msg, "id", json_string(id));
		xasprintf(&pl->waiting, "\"%s\"", id);
		free(id);
	}
	pl->after_note = json_object_get(msg, "id") == NULL;
	s = mock_dump(msg);
	mock_out(mk, after ? MOCKFAULT_SEND : MOCKFAULT_REQ_SEND, pl->er, s,
	    strlen(s), NULL, 0);
	free(s);
	json_decref(msg);
}

static void
play_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct play	*pl = arg;

	if (pl->waiting != NULL) {
		log_warnx("mock: the client did not answer a server request "
		    "within %d ms; going on", MOCK_ANSWER_TIMEOUT_MS);
		free(pl->waiting);
		pl->waiting = NULL;
		pl->step++;
	}
	play_step(pl);
}

/*
 * Before the message recorded offset_ns after the request: wait for the
 * recorded gap since the previous one, scaled and capped (--latency).
 * Returns 1 when waiting (the timer goes on with the play), 0 to send now.
 */
static int
play_wait(struct play *pl, int64_t offset_ns)
{
	const struct mock_options *opt = pl->mk->opt;
	int64_t		 due, now;
	double		 gap, wait;
	struct timeval	 tv;

	/* In double: recorded times may be anything (an imported trace). */
	now = clock_mono_ns();
	gap = (double)offset_ns - (double)pl->last_off_ns;
	wait = gap > 0 ? gap * opt->latency_scale : 0;
	if (wait > (double)opt->latency_cap_ns)
		wait = (double)opt->latency_cap_ns;
	if (opt->latency_scale > 0 && pl->after_note &&
	    wait < (double)MOCK_GAP_MIN_NS)
		wait = (double)MOCK_GAP_MIN_NS;
	/*
	 * The client has closed stdin (not a file's end): it may be gone
	 * any moment, so what was begun is sent now, whole, not cut off
	 * by the end of the exit wait.
	 */
	if (pl->mk->stdin_closed && !pl->mk->input_file)
		wait = 0;
	if (wait > MOCK_WAIT_MAX_NS)
		wait = MOCK_WAIT_MAX_NS;
	due = pl->last_ns + (int64_t)wait;
	if (now >= due) {
		pl->last_ns = now;
		pl->last_off_ns = offset_ns;
		return 0;
	}
	tv.tv_sec = (due - now) / 1000000000;
	tv.tv_usec = ((due - now) % 1000000000) / 1000;
	evtimer_add(pl->timer, &tv);
	return 1;
}

/*
 * Once stdin has closed no client answer can come: a server request just
 * played is not waited for.
 */
static void
play_no_answer(struct play *pl)
{
	if (pl->waiting == NULL || !pl->mk->stdin_closed)
		return;
	log_debug("mock: stdin has closed: not waiting for the answer to "
	    "%s", pl->waiting);
	free(pl->waiting);
	pl->waiting = NULL;
}

/*
 * Whether the channel the play's next message takes (er; NULL: the event
 * stream) is full: then the play waits for the endpoint to drain, as the
 * recorded server would have blocked on its socket.
 */
static int
play_blocked(struct play *pl, struct ereq *er)
{
	if (!endpoint_full(pl->mk->ep, er))
		return 0;
	pl->blocked = 1;
	return 1;
}

/*
 * Whether another play's answer, not yet sent, came before this one's in
 * the recording (or, for the same recorded answer, its request came
 * first): then this answer waits (held), so answers never go out in an
 * order the recording did not have.  What precedes the answer in its
 * exchange is still played, at its pace.  Over stdio only: over HTTP each
 * answer has a response of its own, and one client's slow exchange must
 * not hold another's.
 */
static int
play_answer_held(struct play *pl)
{
	struct play	*o;

	if (pl->mk->opt->listen != NULL)
		return 0;

	TAILQ_FOREACH(o, &pl->mk->plays, entry) {
		if (o == pl)
			continue;
		if (o->step > o->e->nbefore)
			continue;	/* answered */
		if (o->e->resp < pl->e->resp)
			return pl->held = 1;
		if (o->e->resp == pl->e->resp && o->start_seq < pl->start_seq)
			return pl->held = 1;
	}
	return 0;
}

/* Whether a play begun before the seq'th is still to answer. */
static int
mock_miss_waits(struct mock *mk, uint64_t seq)
{
	struct play	*o;

	TAILQ_FOREACH(o, &mk->plays, entry) {
		if (o->start_seq < seq && o->step <= o->e->nbefore)
			return 1;
	}
	return 0;
}

/* Send the held miss errors whose earlier plays have all answered. */
static void
mock_misses_flush(struct mock *mk)
{
	struct missed	*ms;

	while ((ms = TAILQ_FIRST(&mk->misses)) != NULL &&
	    !mock_miss_waits(mk, ms->seq)) {
		TAILQ_REMOVE(&mk->misses, ms, entry);
		mock_out(mk, MOCKFAULT_REQ_END, ms->er, ms->text,
		    strlen(ms->text), NULL, 0);
		mock_count(mk, &mk->stats->missed);
		free(ms->text);
		free(ms);
	}
}

/* An answer went: the held ones it was holding go on. */
static void
mock_kick_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl;

	for (;;) {
		mock_misses_flush(mk);
		TAILQ_FOREACH(pl, &mk->plays, entry) {
			if (pl->held && !play_answer_held(pl))
				break;
		}
		if (pl == NULL)
			return;
		pl->held = 0;
		play_step(pl);
	}
}

/*
 * Whether MOCK_HELD_MAX waits for the client: then the play waits (its
 * timer looks again), as a server blocks on a full pipe.
 */
static int
play_full(struct play *pl)
{
	struct timeval	tv = { 0, MOCK_FULL_RETRY_MS * 1000 };
	uint64_t	queued, written;

	endpoint_progress(pl->mk->ep, &queued, &written);
	if (queued - written < MOCK_HELD_MAX)
		return 0;
	evtimer_add(pl->timer, &tv);
	return 1;
}

/*
 * Play on until the end, a wait, a full output, or a server request
 * awaiting its answer.
 */
static void
play_step(struct play *pl)
{
	const struct mdent	*e = pl->e;
	struct mock		*mk = pl->mk;
	struct timeval		 tv = { MOCK_ANSWER_TIMEOUT_MS / 1000,
				    (MOCK_ANSWER_TIMEOUT_MS % 1000) * 1000 };
	json_t			*resp;
	char			*s;
	size_t			 i;

	if (pl->waiting != NULL)
		return;
	while (pl->step < e->nbefore) {
		if (play_blocked(pl, pl->er) || play_full(pl) ||
		    play_wait(pl, e->before[pl->step].offset_ns))
			return;
		play_send_item(pl, &e->before[pl->step], 0);
		play_no_answer(pl);
		if (pl->waiting != NULL) {
			evtimer_add(pl->timer, &tv);
			return;
		}
		pl->step++;
	}
	if (pl->step == e->nbefore) {
		if (play_answer_held(pl) || play_blocked(pl, pl->er) ||
		    play_full(pl) || play_wait(pl, e->latency_ns))
			return;
		/* Read when sent: a play waiting holds no answer. */
		resp = mock_copy(mk, e->resp);
		json_object_set(resp, "id", pl->live_id);
		s = mock_dump(resp);
		mock_out(mk, MOCKFAULT_REQ_END, pl->er, s, strlen(s), NULL, 0);
		pl->er = NULL;
		free(s);
		json_decref(resp);
		mock_count(mk, &mk->stats->answered);
		pl->after_note = 0;
		pl->step++;
		event_active(mk->kick_ev, EV_TIMEOUT, 0);
	}
	while ((i = pl->step - e->nbefore - 1) < e->nafter) {
		if (play_blocked(pl, NULL) || play_full(pl) ||
		    play_wait(pl, e->after[i].offset_ns))
			return;
		play_send_item(pl, &e->after[i], 1);
		play_no_answer(pl);
		if (pl->waiting != NULL) {
			evtimer_add(pl->timer, &tv);
			return;
		}
		pl->step++;
	}
	play_free(pl);
}

/*
 * Record what went to or came from the fallback; a faulted client message
 * (delayed, mutated, corrupted) in its fault's role.
 */
static void
fallback_record(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	struct msg	*m;
	int64_t		 n;
	int		 role;

	if (mk->opt->w == NULL)
		return;
	m = msg_new(d, bytes, len);
	if (d == DIR_C2S && mockfault_taken(mk->mf, &n, &role)) {
		m->fault = n;
		m->fault_role = role;
	}
	writer_message(mk->opt->w, mk->opt->ws, NULL, m);
}

/*
 * Whether a message that is not a forwarded request or its answer belongs
 * to the forwarded exchanges in flight: what a server says while working
 * on a request (progress, log messages, its own requests to the client),
 * the client's answers to those, and its cancellations.  Not the rest
 * (the list_changed a server says as it handles the handshake mock passed
 * it, which may come late enough to overlap the first miss).
 */
static int
mock_cassette_in_flight(enum dir d, const char *bytes, size_t len)
{
	struct scan	 sc;
	char		*method;
	int		 yes;

	scan_message(bytes, len, &sc);
	if (sc.kind == KIND_REQUEST)
		return d == DIR_S2C;
	if (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR)
		return d == DIR_C2S;
	if (sc.kind != KIND_NOTIFICATION ||
	    (method = scan_method_dup(bytes, &sc)) == NULL)
		return 0;
	yes = d == DIR_S2C ? strcmp(method, "notifications/progress") == 0 ||
	    strcmp(method, "notifications/message") == 0 :
	    strcmp(method, "notifications/cancelled") == 0;
	free(method);
	return yes;
}

/*
 * Write a message into the cassette being recorded.  An exchange is
 * written when it ends, after what ended before it: a message earlier
 * than the last one written takes its times, so the cassette's order by
 * time is its order by seq (the order its pairing is read in).
 */
static void
mock_cassette_put(struct mock *mk, struct msg *m)
{
	if (m->mono_ns < mk->cw_mono)
		m->mono_ns = mk->cw_mono;
	if (m->ts_ns < mk->cw_ts)
		m->ts_ns = mk->cw_ts;
	mk->cw_mono = m->mono_ns;
	mk->cw_ts = m->ts_ns;
	writer_message(mk->opt->cw, mk->opt->cws, NULL, m);
}

/* Drop the held messages (no forwarded exchange is left to take them). */
static void
mock_held_clear(struct mock *mk)
{
	size_t	i;

	for (i = 0; i < mk->nheld; i++)
		msg_free(mk->held[i].m);
	mk->nheld = 0;
	mk->heldbytes = 0;
}

/*
 * A message as the client sent or got it, for the cassette being
 * recorded, that is not a forwarded request or its answer (any): written
 * at once when no forwarded exchange is in flight and all of the
 * fallback's traffic is recorded; held for the exchanges in flight when
 * it belongs to them (or all is recorded); else not recorded.
 */
static void
mock_cassette(struct mock *mk, enum dir d, const char *bytes, size_t len)
{
	if (mk->opt->cw == NULL)
		return;
	if (json_object_size(mk->fb_waiting) == 0) {
		if (mk->opt->cw_all)
			mock_cassette_put(mk, msg_new(d, bytes, len));
		return;
	}
	if (!mk->opt->cw_all && !mock_cassette_in_flight(d, bytes, len))
		return;
	if (mk->heldbytes + len > MOCK_CASSETTE_HELD_MAX) {
		if (mk->stats->cw_lost++ == 0)
			log_warnx("mock: more than %zu MiB said while requests "
			    "were forwarded; the cassette will not be written",
			    MOCK_CASSETTE_HELD_MAX >> 20);
		return;
	}
	if (mk->nheld == mk->aheld) {
		mk->aheld = mk->aheld == 0 ? 16 : mk->aheld * 2;
		mk->held = xreallocarray(mk->held, mk->aheld,
		    sizeof *mk->held);
	}
	mk->held[mk->nheld].m = msg_new(d, bytes, len);
	mk->held[mk->nheld++].mark = ++mk->hmark;
	mk->heldbytes += len;
}

/*
 * A forwarded exchange has ended (entry, out of fb_waiting): answered
 * (answer, as the client got it), its request, the held messages that
 * came after it and its answer go into the cassette together, so a
 * request is paired with its own answer whatever the client's ids; not
 * answered (NULL), nothing of it does.
 */
static void
mock_cassette_end(struct mock *mk, json_t *entry, const char *answer)
{
	struct msg	*req;
	uint64_t	 mark;
	size_t		 i, k = 0;

	req = (struct msg *)(intptr_t)json_integer_value(json_object_get(entry,
	    "req"));
	json_object_del(entry, "req");
	if (req == NULL)
		return;
	if (answer == NULL) {
		msg_free(req);
		if (json_object_size(mk->fb_waiting) == 0)
			mock_held_clear(mk);
		return;
	}
	mark = (uint64_t)json_integer_value(json_object_get(entry, "mark"));
	mock_cassette_put(mk, req);
	for (i = 0; i < mk->nheld; i++) {
		if (mk->held[i].mark > mark) {
			mk->heldbytes -= mk->held[i].m->len;
			mock_cassette_put(mk, mk->held[i].m);
		} else
			mk->held[k++] = mk->held[i];
	}
	mk->nheld = k;
	mock_cassette_put(mk, msg_new(DIR_S2C, answer, strlen(answer)));
	if (json_object_size(mk->fb_waiting) == 0)
		mock_held_clear(mk);
}

/* Pass a client message on to the fallback server. */
static void
fallback_send(struct mock *mk, const char *bytes, size_t len)
{
	fallback_record(mk, DIR_C2S, bytes, len);
	xport_send(mk->fb, bytes, len, NULL);
}

/*
 * A message from the fallback: the answer to a forwarded request goes back
 * on that request's channel; anything else goes to the client unasked.
 */
/* End a request that was forwarded: the answer under the client's id. */
static void
fallback_answer(struct mock *mk, json_t *entry, json_t *answer,
    const char *fb, size_t fblen)
{
	struct ereq	*er = (struct ereq *)(intptr_t)json_integer_value(
			    json_object_get(entry, "er"));
	char		*s;

	json_object_set(answer, "id", json_object_get(entry, "id"));
	s = mock_dump(answer);
	/* The fallback's answer; not the mock's error when it gave none. */
	mock_cassette_end(mk, entry, fb != NULL ? s : NULL);
	mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), fb, fblen);
	free(s);
}

/*
 * A message from the fallback: the answer to a forwarded request goes back
 * on that request's channel, under the client's own id; anything else goes
 * to the client unasked.
 */
static void
fallback_message_cb(const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;
	struct scan	 sc;
	json_t		*entry, *answer;
	char		*idtext;
	const char	*note;

	/* With rules, the fault edge records what it passes on. */
	if (mk->mf == NULL)
		fallback_record(mk, DIR_S2C, bytes, len);
	scan_message(bytes, len, &sc);
	if ((sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) &&
	    (idtext = scan_id_dup(bytes, &sc)) != NULL) {
		entry = json_incref(json_object_get(mk->fb_waiting, idtext));
		/* Out of the map first: ending it may take the next request. */
		json_object_del(mk->fb_waiting, idtext);
		if (entry != NULL && (answer = json_loadb(bytes, len, 0,
		    NULL)) != NULL) {
			fallback_answer(mk, entry, answer, bytes, len);
			json_decref(answer);
			mock_maybe_exit(mk);
		} else if (mk->mf != NULL)
			fallback_record(mk, DIR_S2C, bytes, len);
		if (entry == NULL)
			log_debug("mock: the fallback answered %s, which "
			    "nobody waits for", idtext);
		json_decref(entry);
		free(idtext);
		return;
	}
	if (endpoint_full(mk->ep, NULL) == 2 && mk->opt->w != NULL) {
		/* Recorded as sent, so say it did not reach the client. */
		note = "mcpreel mock: the client had not opened its event "
		    "stream and enough waited for it: this message was not "
		    "delivered";
		writer_event(mk->opt->w, mk->opt->ws, "note", note,
		    strlen(note));
	}
	mock_cassette(mk, DIR_S2C, bytes, len);
	mock_out(mk, MOCKFAULT_SEND, NULL, bytes, len, bytes, len);
	/*
	 * A client that does not keep up with its event stream: the fallback
	 * waits (its socket or pipe fills, as it would writing to the client
	 * itself) until the stream drains or closes.
	 */
	if (endpoint_full(mk->ep, NULL) == 1)
		xport_pause(mk->fb, 1);
}

/* Forwarded requests the fallback did not answer in time get an error. */
static void
fallback_sweep_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct timeval	 tv = { 1, 0 };
	const char	*k;
	json_t		*entry, *err;
	void		*tmp;
	char		*why;
	int64_t		 now = clock_mono_ns();

	json_object_foreach_safe(mk->fb_waiting, tmp, k, entry) {
		/* Once the fallback is gone, nothing it had will come. */
		if (mk->fb_why == NULL && json_integer_value(json_object_get(
		    entry, "deadline")) > now)
			continue;
		json_incref(entry);
		json_object_del(mk->fb_waiting, k);
		if (mk->fb_why != NULL)
			xasprintf(&why, "mcpreel mock: the fallback server is "
			    "gone: %s", mk->fb_why);
		else
			xasprintf(&why, "mcpreel mock: the fallback server "
			    "did not answer within %d s (the longest mock "
			    "waits for a forwarded request)",
			    MOCK_FALLBACK_TIMEOUT_MS / 1000);
		err = json_pack("{s:s, s:{s:i, s:s}}", "jsonrpc", "2.0",
		    "error", "code", -32603, "message", why);
		free(why);
		fallback_answer(mk, entry, err, NULL, 0);
		mk->stats->fb_failed++;
		json_decref(err);
		json_decref(entry);
	}
	if (json_object_size(mk->fb_waiting) > 0)
		evtimer_add(mk->fb_sweep, &tv);
	mock_maybe_exit(mk);
}

static void
fallback_event_cb(const char *kind, const char *text, size_t len, void *arg)
{
	struct mock	*mk = arg;

	if (mk->opt->w != NULL)
		writer_event(mk->opt->w, mk->opt->ws, kind, text, len);
	log_debug("mock fallback %s: %.*s", kind, (int)len, text);
}

static void
fallback_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	if (!mk->fb_finishing) {
		log_warnx("mock: the fallback server is gone: %s", why);
		mk->stats->fb_lost = 1;
	}
	free(mk->fb_why);
	mk->fb_why = xstrdup(why);
	if (mk->fb_finishing)
		event_base_loopbreak(mk->base);
	else if (json_object_size(mk->fb_waiting) > 0)
		event_active(mk->fb_sweep, EV_TIMEOUT, 0);
}

/*
 * Forward a missed request under an id of ours (clients may reuse ids, and
 * over HTTP there are many clients); 0 when it went, -1 when it cannot.
 */
static int
fallback_forward(struct mock *mk, struct ereq *er, const json_t *msg,
    const char *bytes, size_t len)
{
	struct timeval	 tv = { 1, 0 };
	json_t		*copy, *entry;
	char		*id, *idtext, *s;

	if (mk->fb == NULL || mk->fb_why != NULL)
		return -1;
	xasprintf(&id, "mcpreel-fb-%llu", (unsigned long long)++mk->next_id);
	xasprintf(&idtext, "\"%s\"", id);
	entry = json_pack("{s:I, s:O, s:I}", "er", (json_int_t)(intptr_t)er,
	    "id", json_object_get(msg, "id"), "deadline", (json_int_t)
	    (clock_mono_ns() + (int64_t)MOCK_FALLBACK_TIMEOUT_MS * 1000000));
	if (mk->opt->cw != NULL) {
		json_object_set_new(entry, "req", json_integer((json_int_t)
		    (intptr_t)msg_new(DIR_C2S, bytes, len)));
		json_object_set_new(entry, "mark", json_integer((json_int_t)
		    mk->hmark));
	}
	json_object_set_new(mk->fb_waiting, idtext, entry);
	copy = json_deep_copy(msg);
	json_object_set_new(copy, "id", json_string(id));
	s = mock_dump(copy);
	fallback_send(mk, s, strlen(s));
	free(s);
	json_decref(copy);
	free(idtext);
	free(id);
	if (!evtimer_pending(mk->fb_sweep, NULL))
		evtimer_add(mk->fb_sweep, &tv);
	mk->stats->forwarded++;
	return 0;
}

/* A live request: play its match, or explain the miss. */
static void
mock_request(struct mock *mk, struct ereq *er, json_t *msg, const char *bytes,
    size_t len)
{
	struct mdent		*e;
	const char		*pv;
	struct play		*pl;
	struct missed		*ms;
	json_t			*err, *out;
	char			*s, sid[33];
	size_t			 i;

	e = mfind_find(mk->md, msg);
	if (mk->fb != NULL && e != NULL &&
	    strcmp(e->method, "initialize") == 0)
		fallback_send(mk, bytes, len);	/* it must be ready too */
	if (e == NULL && fallback_forward(mk, er, msg, bytes, len) == 0)
		return;
	if (e == NULL) {
		err = mfind_miss(mk->md, msg);
		out = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
		    json_object_get(msg, "id"), "error", err);
		s = mock_dump(out);
		if (mk->opt->listen == NULL && (!TAILQ_EMPTY(&mk->misses) ||
		    mock_miss_waits(mk, mk->nplays))) {
			ms = xcalloc(1, sizeof *ms);
			ms->er = er;
			ms->text = s;
			ms->seq = mk->nplays;
			TAILQ_INSERT_TAIL(&mk->misses, ms, entry);
		} else {
			mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), NULL,
			    0);
			free(s);
			mock_count(mk, &mk->stats->missed);
		}
		json_decref(out);
		log_info("mock: no recorded answer to a %s request",
		    json_string_value(json_object_get(msg, "method")) ?
		    json_string_value(json_object_get(msg, "method")) : "?");
		return;
	}
	if (redacted_in(e->answer)) {
		s = redacted_where(e->answer, 8);
		log_info("mock: the recorded answer (seq %lld) holds values "
		    "redacted when recorded: the client gets \"" REDACTED
		    "\" at %s", (long long)e->resp_seq, s);
		free(s);
	}
	/* A 2025-style initialize opens a session over HTTP. */
	if (strcmp(e->method, "initialize") == 0 &&
	    (pv = json_string_value(json_object_get(json_object_get(
	    e->answer, "result"), "protocolVersion"))) !=
	    NULL && strcmp(pv, MOCK_SESSIONLESS_FROM) < 0) {
		for (i = 0; i < 32; i++)
			sid[i] = "0123456789abcdef"[arc4random_uniform(16)];
		sid[32] = '\0';
		endpoint_set_session(mk->ep, sid);
	}
	pl = xcalloc(1, sizeof *pl);
	pl->mk = mk;
	pl->er = er;
	pl->e = e;
	pl->live_id = json_incref(json_object_get(msg, "id"));
	pl->live_token = json_incref(progress_token(msg));
	pl->rec_token = json_incref(progress_token(e->request));
	/*
	 * Until it is sent a play holds no parsed message: a client that
	 * reads nothing while it sends on costs the plays, not their answers.
	 */
	json_decref(e->request);
	json_decref(e->answer);
	e->request = e->answer = NULL;
	pl->start_ns = pl->last_ns = clock_mono_ns();
	pl->start_seq = mk->nplays++;
	pl->timer = evtimer_new(mk->base, play_timer_cb, pl);
	TAILQ_INSERT_TAIL(&mk->plays, pl, entry);
	play_step(pl);
}

/*
 * The client answered one of our server requests: go on with its play.
 * Returns 0 if it was ours.
 */
static int
mock_answer(struct mock *mk, const char *idtext)
{
	struct play	*pl;

	TAILQ_FOREACH(pl, &mk->plays, entry) {
		if (pl->waiting != NULL && strcmp(pl->waiting, idtext) == 0) {
			free(pl->waiting);
			pl->waiting = NULL;
			evtimer_del(pl->timer);
			pl->step++;
			play_step(pl);
			return 0;
		}
	}
	return -1;
}

/* A client message, past the fault edge if any: handle it. */
static void
mock_deliver(struct ereq *er, const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;
	struct scan	 sc;
	json_t		*msg, *out;
	char		*idtext, *s;

	scan_message(bytes, len, &sc);
	msg = (sc.kind == KIND_INVALID) ? NULL : json_loadb(bytes, len,
	    JSON_DECODE_ANY, NULL);
	switch (msg != NULL ? sc.kind : KIND_INVALID) {
	case KIND_REQUEST:
		mock_request(mk, er, msg, bytes, len);
		break;
	case KIND_RESPONSE:
	case KIND_ERROR:
		/* Ours, or the fallback's (it asked through us). */
		if ((idtext = scan_id_dup(bytes, &sc)) != NULL &&
		    mock_answer(mk, idtext) != 0) {
			if (mk->fb != NULL) {
				mock_cassette(mk, DIR_C2S, bytes, len);
				fallback_send(mk, bytes, len);
			}
			else
				log_debug("mock: an answer (id %s) to nothing "
				    "we asked", idtext);
		}
		free(idtext);
		break;
	case KIND_NOTIFICATION:
		if (mk->fb != NULL) {
			mock_cassette(mk, DIR_C2S, bytes, len);
			fallback_send(mk, bytes, len);
		}
		break;
	default:
		/* As a JSON-RPC server would: a parse error, no id. */
		out = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
		    "id", "error", "code", sc.kind == KIND_BATCH ? -32600 :
		    -32700, "message", sc.kind == KIND_BATCH ? "mcpreel mock: "
		    "batches are not played" : "mcpreel mock: not a JSON-RPC "
		    "message");
		s = mock_dump(out);
		mock_out(mk, MOCKFAULT_REQ_END, er, s, strlen(s), NULL, 0);
		er = NULL;
		free(s);
		json_decref(out);
		break;
	}
	if (er != NULL && sc.kind != KIND_REQUEST)
		ereq_end(mk->ep, er, NULL, 0);
	json_decref(msg);
}

static void
mock_message_cb(struct ereq *er, const char *bytes, size_t len, void *arg)
{
	struct mock	*mk = arg;

	mock_otlp(mk, DIR_C2S, bytes, len);
	if (mk->mf != NULL)
		mockfault_in(mk->mf, er, bytes, len);
	else
		mock_deliver(er, bytes, len, mk);
}

/* A fault closed stdio as a dying server's: stop. */
static void
mock_fault_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	log_debug("mock: %s; stopping", why);
	event_base_loopbreak(mk->base);
}

static void
mock_fault_idle_cb(void *arg)
{
	mock_maybe_exit(arg);
}

/*
 * Once the client has gone (stdin closed), stop when nothing is still
 * being played or waiting on the fallback; MOCK_EXIT_WAIT_MS at most
 * without the client reading anything.
 */
static void
mock_maybe_exit(struct mock *mk)
{
	struct timeval	tv = { MOCK_EXIT_WAIT_MS / 1000,
			    (MOCK_EXIT_WAIT_MS % 1000) * 1000 };
	uint64_t	queued;

	if (!mk->stdin_closed)
		return;
	if (TAILQ_EMPTY(&mk->plays) && json_object_size(mk->fb_waiting) == 0 &&
	    !mockfault_busy(mk->mf))
		event_base_loopbreak(mk->base);
	else if (!mk->input_file && !evtimer_pending(mk->exit_ev, NULL)) {
		endpoint_progress(mk->ep, &queued, &mk->exit_written);
		evtimer_add(mk->exit_ev, &tv);
	}
}

static void
mock_exit_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct timeval	 tv = { MOCK_EXIT_WAIT_MS / 1000,
			    (MOCK_EXIT_WAIT_MS % 1000) * 1000 };
	uint64_t	 queued, written;

	/* A client still reading what is played gets another while. */
	if (!mk->fb_finishing) {
		endpoint_progress(mk->ep, &queued, &written);
		if (written > mk->exit_written) {
			mk->exit_written = written;
			evtimer_add(mk->exit_ev, &tv);
			return;
		}
	}
	if (mk->fb_finishing)
		log_warnx("mock: the fallback server did not stop within %d "
		    "ms", MOCK_FALLBACK_FINISH_MS);
	else
		log_warnx("mock: the client has gone; not waiting longer for "
		    "what is still being answered");
	event_base_loopbreak(mk->base);
}

static void
mock_closed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl, *next;

	mk->stdin_closed = 1;
	log_debug("mock: %s", why);
	/* Plays waiting for a client answer go on without it. */
	for (pl = TAILQ_FIRST(&mk->plays); pl != NULL; pl = next) {
		next = TAILQ_NEXT(pl, entry);
		if (pl->waiting == NULL)
			continue;
		free(pl->waiting);
		pl->waiting = NULL;
		evtimer_del(pl->timer);
		pl->step++;
		play_step(pl);
	}
	mock_maybe_exit(mk);
}

/* Our output failed: the client cannot get answers any more; stop. */
/* The client's output drained: the plays that waited for it go on. */
static void
mock_drained_cb(void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl, *next;

	if (mk->fb != NULL && mk->fb->paused && endpoint_full(mk->ep, NULL) !=
	    1)
		xport_pause(mk->fb, 0);
	for (pl = TAILQ_FIRST(&mk->plays); pl != NULL; pl = next) {
		next = TAILQ_NEXT(pl, entry);
		if (!pl->blocked)
			continue;
		pl->blocked = 0;
		play_step(pl);
	}
}

static void
mock_failed_cb(const char *why, void *arg)
{
	struct mock	*mk = arg;

	if (mk->stats->out_error == NULL)
		mk->stats->out_error = xstrdup(why);
	log_warnx("mock: %s; stopping", why);
	event_base_loopbreak(mk->base);
}

static void
mock_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct mock	*mk = arg;

	log_info("mock: stopping (%s)", strsignal((int)sig));
	event_base_loopbreak(mk->base);
}

/* The default options: stdio, the recorded gaps capped at MOCK_GAP_CAP_MS. */
void
mock_options_init(struct mock_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->latency_scale = 1.0;
	opt->latency_cap_ns = (int64_t)MOCK_GAP_CAP_MS * 1000000;
}

/*
 * --latency: "capped" (the default), "none", "recorded" (the recorded
 * gaps, uncapped) or "scale:X" (the recorded gaps times X, capped at
 * MOCK_SCALED_CAP_MS).
 * Returns -1 for anything else.
 */
int
mock_parse_latency(struct mock_options *opt, const char *s)
{
	char	*end;
	double	 x;

	if (strcmp(s, "capped") == 0) {
		opt->latency_scale = 1.0;
		opt->latency_cap_ns = (int64_t)MOCK_GAP_CAP_MS * 1000000;
	} else if (strcmp(s, "none") == 0) {
		opt->latency_scale = 0;
		opt->latency_cap_ns = 0;
	} else if (strcmp(s, "recorded") == 0) {
		opt->latency_scale = 1.0;
		opt->latency_cap_ns = INT64_MAX;
	} else if (strncmp(s, "scale:", 6) == 0) {
		errno = 0;
		x = strtod(s + 6, &end);
		if (errno != 0 || end == s + 6 || *end != '\0' || !(x >= 0) ||
		    x > MOCK_SCALE_MAX)
			return -1;
		opt->latency_scale = x;
		opt->latency_cap_ns = (int64_t)MOCK_SCALED_CAP_MS * 1000000;
	} else
		return -1;
	return 0;
}

/*
 * Serve the recording md over stdio (listen NULL) or Streamable HTTP
 * on listen, until stdin closes or a signal.  Returns -1 (cause) when it
 * cannot start.
 */
int
mock_run(struct mdisk *md, const struct mock_options *opt,
    struct mock_stats *stats, char **cause)
{
	struct mock		 mk;
	struct endpoint_cbs	 cbs = { mock_message_cb, mock_closed_cb,
				    mock_failed_cb, mock_drained_cb };
	struct xport_cbs	 fcbs = { fallback_message_cb, fallback_event_cb,
				    fallback_closed_cb, NULL };
	struct mockfault_cbs	 mfcbs = { mock_deliver, mock_fault_closed_cb,
				    mock_fault_idle_cb };
	struct event		*sigs[2];
	struct play		*pl;
	char			*origin = NULL, *s;
	struct mitem		*prelude;
	size_t			 i, nprelude;

	memset(&mk, 0, sizeof mk);
	memset(stats, 0, sizeof *stats);
	mk.md = md;
	mk.opt = opt;
	mk.stats = stats;
	TAILQ_INIT(&mk.plays);
	TAILQ_INIT(&mk.misses);
	evthread_use_pthreads();
	if (opt->listen == NULL)
		mk.base = endpoint_stdio_base_new();
	else if ((mk.base = event_base_new()) == NULL)
		fatalx("cannot create an event loop");
	mk.fb_waiting = json_object();
	mk.exit_ev = evtimer_new(mk.base, mock_exit_cb, &mk);
	mk.kick_ev = evtimer_new(mk.base, mock_kick_cb, &mk);
	mk.fb_sweep = evtimer_new(mk.base, fallback_sweep_cb, &mk);
	if (opt->fallback != NULL && (mk.fb = opt->fallback(mk.base, &fcbs,
	    &mk, opt->fallback_arg, cause)) == NULL) {
		json_decref(mk.fb_waiting);
		event_free(mk.exit_ev);
		event_free(mk.kick_ev);
		event_free(mk.fb_sweep);
		event_base_free(mk.base);
		return -1;
	}
	if (opt->listen != NULL) {
		mk.ep = endpoint_http(mk.base, opt->listen, &opt->lim, &cbs,
		    &mk, &origin, cause);
		if (mk.ep == NULL) {
			xport_free(mk.fb);
			json_decref(mk.fb_waiting);
			event_free(mk.exit_ev);
			event_free(mk.kick_ev);
			event_free(mk.fb_sweep);
			event_base_free(mk.base);
			return -1;
		}
		mk.mf = mockfault_new(mk.base, mk.ep, opt, &mfcbs, &mk);
		/* Said at any log level, alone on its line: scripts wait. */
		log_warnx("listening on %s", origin);
		free(origin);
	} else {
		mk.ep = endpoint_stdio(mk.base, &cbs, &mk);
		mk.mf = mockfault_new(mk.base, mk.ep, opt, &mfcbs, &mk);
		mk.input_file = endpoint_stdio_input_is_file();
		/* What the server said before any request, it says first. */
		nprelude = mfind_prelude(md, &prelude);
		for (i = 0; i < nprelude; i++) {
			json_t	*msg = mock_copy(&mk, prelude[i].msg);

			if (msg == NULL)
				continue;
			s = mock_dump(msg);
			mock_out(&mk, MOCKFAULT_SEND, NULL, s, strlen(s), NULL,
			    0);
			free(s);
			json_decref(msg);
		}
		free(prelude);
	}
	sigs[0] = evsignal_new(mk.base, SIGINT, mock_signal_cb, &mk);
	sigs[1] = evsignal_new(mk.base, SIGTERM, mock_signal_cb, &mk);
	evsignal_add(sigs[0], NULL);
	evsignal_add(sigs[1], NULL);

	event_base_dispatch(mk.base);

	/* What faults hold goes first: it may be on a play's channel. */
	mockfault_finish(mk.mf);
	/* Plays still waiting (on latency or an answer) end unanswered. */
	while ((pl = TAILQ_FIRST(&mk.plays)) != NULL) {
		if (pl->step <= pl->e->nbefore)
			stats->dropped++;
		if (pl->er != NULL)
			ereq_end(mk.ep, pl->er, NULL, 0);
		play_free(pl);
	}
	/* With no play left before them, the held miss errors go. */
	mock_misses_flush(&mk);
	endpoint_flush(mk.ep);
	mock_settle(&mk);
	stats->unwritten = mk.npend - mk.pend0;
	free(mk.pend);
	if (mk.fb != NULL) {
		/* Requests still with the fallback end unanswered. */
		const char	*k;
		json_t		*v;

		struct timeval	 tv = { MOCK_FALLBACK_FINISH_MS / 1000,
				    (MOCK_FALLBACK_FINISH_MS % 1000) * 1000 };

		stats->dropped += json_object_size(mk.fb_waiting);
		stats->fb_failed += json_object_size(mk.fb_waiting);
		json_object_foreach(mk.fb_waiting, k, v) {
			ereq_end(mk.ep, (struct ereq *)(intptr_t)
			    json_integer_value(json_object_get(v, "er")), NULL,
			    0);
			msg_free((struct msg *)(intptr_t)json_integer_value(
			    json_object_get(v, "req")));
		}
		json_object_clear(mk.fb_waiting);
		mock_held_clear(&mk);
		/* Let it stop the way clients stop servers, briefly. */
		if (mk.fb_why == NULL) {
			mk.fb_finishing = 1;
			xport_finish(mk.fb);
			evtimer_del(mk.exit_ev);
			evtimer_add(mk.exit_ev, &tv);
			event_base_dispatch(mk.base);
		}
		xport_free(mk.fb);
	}
	json_decref(mk.fb_waiting);
	mock_held_clear(&mk);
	free(mk.held);
	free(mk.fb_why);
	event_free(mk.exit_ev);
	event_free(mk.kick_ev);
	event_free(mk.fb_sweep);
	/*
	 * A cassette is written, and the OpenTelemetry exporter finishes,
	 * when mock_run returns: from here a stop signal waits (blocked to
	 * the end), rather than ending the process with the recording
	 * unwritten or half of it beside the file, or the session's row
	 * without its end and dropped-span count.
	 */
	if (opt->cw != NULL || opt->otlp != NULL) {
		sigset_t	stop;

		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGHUP);
		sigprocmask(SIG_BLOCK, &stop, NULL);
	}
	event_free(sigs[0]);
	event_free(sigs[1]);
	mockfault_free(mk.mf);
	endpoint_free(mk.ep);
	event_base_free(mk.base);
	return 0;
}
