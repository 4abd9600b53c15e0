/*
 * A recorded exchange played for a live request: what the server sent
 * while the request was in flight (its progress under the live token,
 * its own requests, whose answers are awaited), then the answer under the
 * live id, then what it sent unasked after it, paced as recorded, each
 * message read from the recording on disk when it is sent.
 */

#include <sys/queue.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "formats.h"
#include "replay.h"
#include "store.h"
#include "mock_int.h"

/* A play done: out of the mock's list, and freed. */
void
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
json_t *
play_progress_token(const json_t *msg)
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

void
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
int
play_miss_waits(struct mock *mk, uint64_t seq)
{
	struct play	*o;

	TAILQ_FOREACH(o, &mk->plays, entry) {
		if (o->start_seq < seq && o->step <= o->e->nbefore)
			return 1;
	}
	return 0;
}

/* Send the held miss errors whose earlier plays have all answered. */
void
play_misses_flush(struct mock *mk)
{
	struct missed	*ms;

	while ((ms = TAILQ_FIRST(&mk->misses)) != NULL &&
	    !play_miss_waits(mk, ms->seq)) {
		TAILQ_REMOVE(&mk->misses, ms, entry);
		mock_out(mk, MOCKFAULT_REQ_END, ms->er, ms->text,
		    strlen(ms->text), NULL, 0);
		mock_count(mk, &mk->stats->missed);
		free(ms->text);
		free(ms);
	}
}

/* An answer went: the held ones it was holding go on. */
void
play_kick_cb(evutil_socket_t fd, short events, void *arg)
{
	struct mock	*mk = arg;
	struct play	*pl;

	for (;;) {
		play_misses_flush(mk);
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
void
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

