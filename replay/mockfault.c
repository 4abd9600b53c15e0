/*
 * The fault edge of the mock (mock --fault).  What the client sends passes
 * here before mock.c handles it (c2s), and what the mock sends passes here
 * before it reaches the endpoint (s2c).  A rule that applies (fault/)
 * delays the message, answers a request in the server's place, drops,
 * corrupts or mutates a message, or cuts the transport.  Each fault is
 * logged in one line and, when the mock records (--on-miss forward),
 * written as a faults row with the messages it touched (mfnote.c).
 *
 * What the mock sends keeps its order on each channel (stdout; over HTTP
 * one POST's answer, or the GET stream): a message delayed holds back
 * those after it on its channel, as a slow server's pipe would.  Client
 * messages are independent: a delayed request does not hold the next one.
 */

#include <sys/queue.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fault.h"
#include "replay.h"
#include "mockfault_int.h"

static void	mf_out(struct mockfault *, enum mockfault_how, struct ereq *,
		    const char *, size_t, int, const char *, size_t);

/* Whether a corrupt hit is mode=stray (its bytes go before the message). */
static int
mf_stray(const struct fault_hit *hit)
{
	return hit->action == FAULT_CORRUPT && hit->corrupt ==
	    FAULT_CORRUPT_STRAY;
}

/* Hand a message to the endpoint as mock.c would have. */
static void
mf_emit(struct mockfault *mf, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len)
{
	if (mf->closed) {
		if (how == MOCKFAULT_REQ_END && er != NULL)
			ereq_end(mf->ep, er, NULL, 0);
		return;
	}
	switch (how) {
	case MOCKFAULT_SEND:
		endpoint_send(mf->ep, bytes, len);
		break;
	case MOCKFAULT_REQ_SEND:
		ereq_send(mf->ep, er, bytes, len);
		break;
	case MOCKFAULT_REQ_END:
		ereq_end(mf->ep, er, bytes, len);
		break;
	}
}

/*
 * A close rule: over stdio the mock's output ends and the mock stops, as
 * a server that exits or is killed; over HTTP er's connection (er NULL:
 * the GET stream's) is reset, or its SSE stream ended.  end: er is given
 * up here (ended once cut); else its owner still sends on it and ends it.
 */
static void
mf_close(struct mockfault *mf, struct ereq *er, enum fault_close how,
    int end)
{
	if (!mf->http) {
		ereq_cut(mf->ep, er, how == FAULT_CLOSE_KILL ? EREQ_CUT_KILL :
		    EREQ_CUT_CLOSE, 0, NULL, NULL);
		if (end && er != NULL)
			ereq_end(mf->ep, er, NULL, 0);
		mf->closed = 1;
		if (mf->cbs.closed != NULL)
			mf->cbs.closed(how == FAULT_CLOSE_KILL ? "a fault "
			    "killed the server's side of stdio" : "a fault "
			    "closed the server's side of stdio", mf->arg);
		return;
	}
	ereq_cut(mf->ep, er, how == FAULT_CLOSE_END_STREAM ?
	    EREQ_CUT_END_STREAM : EREQ_CUT_RESET, 0, NULL, NULL);
	if (end && er != NULL)
		ereq_end(mf->ep, er, NULL, 0);
}

/* Whether an earlier mock message on er's channel is still held. */
static int
mf_ahead(const struct mockfault *mf, const struct mfitem *stop,
    const struct ereq *er)
{
	const struct mfitem	*it;

	TAILQ_FOREACH(it, &mf->items, entry) {
		if (it == stop)
			break;
		if (it->what == MF_OUT && it->er == er)
			return 1;
	}
	return 0;
}

/*
 * The s2c rules decide for one mock message, now at its channel's head.
 * held: the queued item it is, if it is one: a delay then keeps it in its
 * place (returns 1), so what waits behind it stays behind it.  fb: the
 * message as the fallback sent it (NULL: the mock's own), recorded once
 * the rules have decided, in its role.
 */
static int
mf_out_now(struct mockfault *mf, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len, const char *fb, size_t fblen,
    struct mfitem *held)
{
	struct fault_hit	 hit;
	struct mfitem		*it;
	json_t			*id;
	int64_t			 n;

	memset(&hit, 0, sizeof hit);
	if (fault_decide(mf->set, DIR_S2C, bytes, len, mf->http, &hit) != 1) {
		mfnote_record(mf->note, DIR_S2C, fb, fblen, 0,
		    FAULT_ROLE_NONE);
		mf_emit(mf, how, er, bytes, len);
		return 0;
	}
	if (hit.action == FAULT_TIMEOUT) {
		mfhold_late_answer(mf, &hit, how, er, bytes, len, fb, fblen);
		fault_hit_clear(&hit);
		return 0;
	}
	n = mfnote_fault(mf->note, &hit, DIR_S2C, bytes, len);
	if (hit.action == FAULT_DELAY && held != NULL && !held->flushed) {
		held->decide = 0;
		held->fault = n;
		held->due_ns = clock_mono_ns() + hit.delay_ms * 1000000;
		fault_hit_clear(&hit);
		return 1;
	}
	if (hit.action == FAULT_DELAY && held == NULL && !mfhold_full(mf)) {
		it = mfhold_add(mf, MF_OUT, er, bytes, len, clock_mono_ns() +
		    hit.delay_ms * 1000000, n);
		it->how = how;
		mfhold_fb(mf, it, fb, fblen);
		fault_hit_clear(&hit);
		if (!mf->running)
			mockfault_run(mf);
		return 0;
	}
	/* A stray line goes before the message, which goes on as it is. */
	if (hit.action == FAULT_CORRUPT && hit.bytes != NULL && mf_stray(&hit))
		mfnote_record(mf->note, DIR_S2C, fb, fblen, 0,
		    FAULT_ROLE_NONE);
	else if (hit.action == FAULT_DELAY)
		mfnote_record_fb(mf->note, bytes, len, fb, fblen, n,
		    FAULT_ROLE_DELAYED);
	else if (hit.action == FAULT_DROP || hit.action == FAULT_CORRUPT ||
	    hit.action == FAULT_MUTATE || hit.action == FAULT_CLOSE)
		mfnote_record_fb(mf->note, bytes, len, fb, fblen, n,
		    FAULT_ROLE_ORIGINAL);
	else
		mfnote_record(mf->note, DIR_S2C, fb, fblen, 0,
		    FAULT_ROLE_NONE);
	switch (hit.action) {
	case FAULT_DELAY:
		mf_emit(mf, how, er, bytes, len);
		break;
	case FAULT_DROP:
		id = mfnote_id(bytes, len);
		mfnote_faulted(mf->note, id, n, 0);
		if (how == MOCKFAULT_REQ_END)
			mfhold_request(mf, er, MF_HOLD, INT64_MAX, n, id);
		json_decref(id);
		break;
	case FAULT_CORRUPT:
	case FAULT_MUTATE:
		mfnote_record_injected(mf->note, hit.bytes, hit.len, fb, fblen,
		    n);
		if (hit.action == FAULT_CORRUPT && hit.bytes != NULL &&
		    mf_stray(&hit)) {
			/* The stray line first, then the message unchanged. */
			mf_emit(mf, how == MOCKFAULT_SEND ? MOCKFAULT_SEND :
			    MOCKFAULT_REQ_SEND, er, hit.bytes, hit.len);
			mf_emit(mf, how, er, bytes, len);
		} else if (hit.bytes != NULL)
			mf_emit(mf, how, er, hit.bytes, hit.len);
		else
			mf_emit(mf, how, er, bytes, len);
		break;
	case FAULT_CLOSE:
		mf_close(mf, er, hit.close, how == MOCKFAULT_REQ_END);
		break;
	default:
		/* Not an action for what the mock sends: it goes as it is. */
		mf_emit(mf, how, er, bytes, len);
		break;
	}
	fault_hit_clear(&hit);
	return 0;
}

/*
 * A mock message: behind what is held on its channel, or now (asking the
 * rules when decide).
 */
static void
mf_out(struct mockfault *mf, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len, int decide, const char *fb, size_t fblen)
{
	struct mfitem	*it;

	if (mf_ahead(mf, NULL, er) && mfhold_full(mf) && !mf->running) {
		/* Too much held: what waits on this channel goes now. */
		TAILQ_FOREACH(it, &mf->items, entry) {
			if (it->what == MF_OUT && it->er == er) {
				it->due_ns = 0;
				it->flushed = 1;
			}
		}
		mockfault_run(mf);
	}
	if (mf_ahead(mf, NULL, er)) {
		it = mfhold_add(mf, MF_OUT, er, bytes, len, 0, 0);
		it->how = how;
		it->decide = decide;
		mfhold_fb(mf, it, fb, fblen);
		if (!mf->running)
			mockfault_run(mf);
		return;
	}
	if (decide)
		mf_out_now(mf, how, er, bytes, len, fb, fblen, NULL);
	else
		mf_emit(mf, how, er, bytes, len);
}

/*
 * A client message goes on to mock.c.  Fault n's message in role (n 0:
 * untouched) is recorded as the fallback gets it (mockfault_taken), or as
 * it is if mock.c does not forward it.
 */
static void
mf_deliver(struct mockfault *mf, struct ereq *er, const char *bytes,
    size_t len, int64_t n, int role)
{
	int64_t	was_n = mf->deliver_n;
	int	was_role = mf->deliver_role;

	mf->deliver_n = n;
	mf->deliver_role = role;
	mf->cbs.deliver(er, bytes, len, mf->arg);
	if (n != 0 && mf->deliver_n != 0)
		mfnote_record(mf->note, DIR_C2S, bytes, len, n, role);
	mf->deliver_n = was_n;
	mf->deliver_role = was_role;
}

/* One held item's time has come. */
static void
mf_release(struct mockfault *mf, struct mfitem *it)
{
	switch (it->what) {
	case MF_DELIVER:
		mf_deliver(mf, it->er, it->bytes, it->len, it->fault,
		    FAULT_ROLE_DELAYED);
		break;
	case MF_OUT:
		/* Delayed (decided), or queued behind one (mockfault_run decides). */
		if (it->fault != 0)
			mfnote_record_fb(mf->note, it->bytes, it->len, it->fb,
			    it->fblen, it->fault, FAULT_ROLE_DELAYED);
		else
			mfnote_record(mf->note, DIR_S2C, it->fb, it->fblen, 0,
			    FAULT_ROLE_NONE);
		mf_emit(mf, it->how, it->er, it->bytes, it->len);
		break;
	case MF_EXPIRE:
		/* The answer never came in time: the POST ends without it. */
		if (!mf->closed)
			ereq_cut(mf->ep, it->er, EREQ_CUT_END_STREAM, 0, NULL,
			    NULL);
		ereq_end(mf->ep, it->er, NULL, 0);
		break;
	case MF_HOLD:
		break;
	}
}

/* Whether channel er is among the n blocked. */
static int
mf_blocked(const struct ereq **blocked, size_t n, const struct ereq *er)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (blocked[i] == er)
			return 1;
	}
	return 0;
}

/* Release what is due and at its channel's head; set the timer again. */
void
mockfault_run(struct mockfault *mf)
{
	struct mfitem		 *it, *prev = NULL;
	const struct ereq	**blocked = NULL;
	size_t			  nblocked = 0;
	struct timeval		  tv;
	int			  stuck;
	int64_t			  now, next;

	if (mf->finished)
		return;

	/*
	 * One walk: a mock message that stays blocks its channel for the
	 * rest of the walk (blocked[]).  Releasing may only add items at the
	 * tail, which the walk then reaches, so it goes on from the item
	 * before the one released.
	 */
	mf->running = 1;
	now = clock_mono_ns();
	next = INT64_MAX;
	for (it = TAILQ_FIRST(&mf->items); it != NULL; it = prev != NULL ?
	    TAILQ_NEXT(prev, entry) : TAILQ_FIRST(&mf->items)) {
		if (it->what == MF_HOLD) {
			prev = it;
			continue;
		}
		stuck = it->what == MF_OUT && mf_blocked(blocked, nblocked,
		    it->er);
		if (!stuck && it->due_ns <= now && !(it->what == MF_OUT &&
		    it->decide && mf_out_now(mf, it->how, it->er, it->bytes,
		    it->len, it->fb, it->fblen, it))) {
			/* Released (a queued one: the rules have acted). */
			mfhold_remove(mf, it);
			if (!(it->what == MF_OUT && it->decide))
				mf_release(mf, it);
			mfhold_free(it);
			continue;
		}
		/* It stays; the first on its channel says when to look. */
		if (!stuck && it->due_ns < next)
			next = it->due_ns;
		if (it->what == MF_OUT && !stuck) {
			blocked = xreallocarray(blocked, nblocked + 1,
			    sizeof *blocked);
			blocked[nblocked++] = it->er;
		}
		prev = it;
	}
	free(blocked);
	mf->running = 0;
	if (next != INT64_MAX) {
		tv.tv_sec = (next - now) / 1000000000;
		tv.tv_usec = ((next - now) % 1000000000) / 1000 + 1;
		evtimer_add(mf->timer, &tv);
	} else if (!mfhold_busy(mf) && mf->cbs.idle != NULL)
		mf->cbs.idle(mf->arg);
}

/* A held message's time has come. */
static void
mf_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	mockfault_run(arg);
}

/* SIGHUP: the rules again (--fault and --faults re-read). */
static void
mf_hup_cb(evutil_socket_t sig, short events, void *arg)
{
	struct mockfault	*mf = arg;
	char			*cause = NULL;

	if (mf->reload(mf->set, mf->reload_arg, &cause) != 0) {
		log_warnx("mock: SIGHUP: %s; the rules stay as they were",
		    cause);
		free(cause);
		return;
	}
	log_warnx("mock: SIGHUP: %zu fault rule%s read again",
	    fault_set_count(mf->set), fault_set_count(mf->set) == 1 ? "" :
	    "s");
}

/*
 * The fault edge for opt's rules (NULL when there are none) in front of
 * ep; cbs.deliver gets the client's messages once the rules have passed
 * them.
 */
struct mockfault *
mockfault_new(struct event_base *base, struct endpoint *ep,
    const struct mock_options *opt, const struct mockfault_cbs *cbs,
    void *arg)
{
	struct mockfault	*mf;

	if (opt->faults == NULL)
		return NULL;
	mf = xcalloc(1, sizeof *mf);
	mf->base = base;
	mf->ep = ep;
	mf->set = opt->faults;
	mf->http = opt->listen != NULL;
	mf->cbs = *cbs;
	mf->arg = arg;
	mf->reload = opt->faults_reload;
	mf->reload_arg = opt->faults_arg;
	mf->note = mfnote_new(opt->w, opt->ws);
	TAILQ_INIT(&mf->items);
	if ((mf->timer = evtimer_new(base, mf_timer_cb, mf)) == NULL)
		fatalx("cannot set up a timer");
	if (mf->reload != NULL) {
		mf->hup = evsignal_new(base, SIGHUP, mf_hup_cb, mf);
		if (mf->hup == NULL || evsignal_add(mf->hup, NULL) != 0)
			fatalx("cannot catch SIGHUP");
	}
	return mf;
}

/* A client message: the c2s rules decide what becomes of it. */
void
mockfault_in(struct mockfault *mf, struct ereq *er, const char *bytes,
    size_t len)
{
	struct fault_hit	 hit;
	struct mfitem		*it;
	json_t			*id;
	char			*both;
	int64_t			 n;
	int			 stray;

	if (mf->closed) {
		if (er != NULL)
			ereq_end(mf->ep, er, NULL, 0);
		return;
	}
	if (mfnote_is_cancel(bytes, len))
		mfhold_cancelled(mf, bytes, len);
	mfnote_request(mf->note, bytes, len);
	memset(&hit, 0, sizeof hit);
	if (fault_decide(mf->set, DIR_C2S, bytes, len, mf->http, &hit) != 1) {
		mf_deliver(mf, er, bytes, len, 0, 0);
		return;
	}
	n = mfnote_fault(mf->note, &hit, DIR_C2S, bytes, len);
	id = mfnote_id(bytes, len);
	/*
	 * Over stdio a stray line goes before the message, which goes on as
	 * it is (recorded as any, if it reaches the fallback); over HTTP the
	 * two make one body.
	 */
	stray = hit.action == FAULT_CORRUPT && hit.bytes != NULL &&
	    mf_stray(&hit);
	if (hit.action != FAULT_DELAY && hit.action != FAULT_TIMEOUT &&
	    !(stray && !mf->http))
		mfnote_record(mf->note, DIR_C2S, bytes, len, n,
		    FAULT_ROLE_ORIGINAL);
	switch (hit.action) {
	case FAULT_DELAY:
		mfnote_faulted(mf->note, id, n, 0);
		if (mfhold_full(mf)) {
			mf_deliver(mf, er, bytes, len, n, FAULT_ROLE_DELAYED);
			break;
		}
		it = mfhold_add(mf, MF_DELIVER, er, bytes, len,
		    clock_mono_ns() + hit.delay_ms * 1000000, n);
		it->id = json_incref(id);
		if (!mf->running)
			mockfault_run(mf);
		break;
	case FAULT_ERROR:
	case FAULT_TOOL_ERROR:
		mfnote_record(mf->note, DIR_S2C, hit.bytes, hit.len, n,
		    FAULT_ROLE_INJECTED);
		mf_out(mf, MOCKFAULT_REQ_END, er, hit.bytes, hit.len, 0, NULL,
		    0);
		break;
	case FAULT_DROP:
		mfnote_faulted(mf->note, id, n, 0);
		mfhold_request(mf, er, MF_HOLD, INT64_MAX, n, id);
		break;
	case FAULT_TIMEOUT:
		/* It is played; its answer meets the rule (mfhold_late_answer). */
		mfnote_faulted(mf->note, id, n, clock_mono_ns() +
		    hit.delay_ms * 1000000);
		mf_deliver(mf, er, bytes, len, 0, 0);
		break;
	case FAULT_CORRUPT:
	case FAULT_MUTATE:
		/* The copy sent instead: recorded as the fallback gets it. */
		if (hit.bytes == NULL)
			mf_deliver(mf, er, bytes, len, n, FAULT_ROLE_INJECTED);
		else if (stray) {
			if (mf->http) {
				/* One POST body: the stray line, then it. */
				both = xmalloc(hit.len + 1 + len);
				memcpy(both, hit.bytes, hit.len);
				both[hit.len] = '\n';
				memcpy(both + hit.len + 1, bytes, len);
				mf_deliver(mf, er, both, hit.len + 1 + len, n,
				    FAULT_ROLE_INJECTED);
				free(both);
			} else {
				mf_deliver(mf, NULL, hit.bytes, hit.len, n,
				    FAULT_ROLE_INJECTED);
				mf_deliver(mf, er, bytes, len, 0, 0);
			}
		} else
			mf_deliver(mf, er, hit.bytes, hit.len, n,
			    FAULT_ROLE_INJECTED);
		break;
	case FAULT_CLOSE:
		if (mf->http && er == NULL) {
			/* Its POST was answered (202): not the GET stream's. */
			log_warnx("mock: fault #%lld: the message's POST was "
			    "answered already: nothing is cut", (long long)n);
			break;
		}
		mf_close(mf, er, hit.close, 1);
		break;
	case FAULT_HTTP_STATUS:
		if (er != NULL) {
			ereq_cut(mf->ep, er, EREQ_CUT_STATUS, hit.status,
			    hit.retry_after, hit.www_authenticate);
			ereq_end(mf->ep, er, NULL, 0);
		}
		break;
	default:
		mf_deliver(mf, er, bytes, len, 0, 0);
		break;
	}
	json_decref(id);
	fault_hit_clear(&hit);
}

/*
 * A mock message for the client (how: which endpoint call it is for):
 * the s2c rules decide what becomes of it.  fb: the message as the
 * fallback sent it (NULL: the mock's own), recorded once the rules have
 * decided, in its role.  Bytes NULL (a request's channel ended with no
 * answer) goes as it is, in its turn.
 */
void
mockfault_out(struct mockfault *mf, enum mockfault_how how, struct ereq *er,
    const char *bytes, size_t len, const char *fb, size_t fblen)
{
	if (bytes == NULL) {
		if (mf_ahead(mf, NULL, er))
			mf_out(mf, how, er, NULL, 0, 0, NULL, 0);
		else
			mf_emit(mf, how, er, NULL, 0);
		return;
	}
	mf_out(mf, how, er, bytes, len, 1, fb, fblen);
}

/*
 * Whether the client message being delivered to mock.c is a fault's (a
 * delayed, mutated or corrupted one) and not yet recorded: then *n and
 * *role say how the copy the fallback gets is recorded (once: it is taken).
 */
int
mockfault_taken(struct mockfault *mf, int64_t *n, int *role)
{
	if (mf == NULL || mf->deliver_n == 0)
		return 0;
	*n = mf->deliver_n;
	*role = mf->deliver_role;
	mf->deliver_n = 0;
	return 1;
}

/* Whether messages are still held for later (a delay, a timeout). */
int
mockfault_busy(const struct mockfault *mf)
{
	return mf != NULL && mfhold_busy(mf);
}

/*
 * The mock stops: what the mock sent and a fault delays goes now (what
 * waited behind it meets the rules, a delay holding it no more), the
 * client's delayed messages are never handled, and held requests end
 * unanswered.  What comes after is held no more either.
 */
void
mockfault_finish(struct mockfault *mf)
{
	struct mfitem	*it;

	if (mf == NULL)
		return;
	evtimer_del(mf->timer);
	mf->finished = 1;
	while ((it = TAILQ_FIRST(&mf->items)) != NULL) {
		mfhold_remove(mf, it);
		if (it->what == MF_OUT && it->decide)
			mf_out_now(mf, it->how, it->er, it->bytes, it->len,
			    it->fb, it->fblen, NULL);
		else if (it->what == MF_OUT && it->fault != 0)
			mfnote_record_fb(mf->note, it->bytes, it->len, it->fb,
			    it->fblen, it->fault, FAULT_ROLE_DELAYED);
		else if (it->what == MF_OUT)
			mfnote_record(mf->note, DIR_S2C, it->fb, it->fblen, 0,
			    FAULT_ROLE_NONE);
		if (it->what == MF_OUT && !it->decide)
			mf_emit(mf, it->how, it->er, it->bytes, it->len);
		else if (it->what != MF_OUT && it->er != NULL)
			ereq_end(mf->ep, it->er, NULL, 0);
		mfhold_free(it);
	}
}

/* Free the edge, ending what it still holds (mockfault_finish). */
void
mockfault_free(struct mockfault *mf)
{
	if (mf == NULL)
		return;
	mockfault_finish(mf);
	event_free(mf->timer);
	if (mf->hup != NULL)
		event_free(mf->hup);
	mfnote_free(mf->note);
	free(mf);
}
